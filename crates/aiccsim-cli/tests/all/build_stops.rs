//! Ctrl-C and `--max-wall` while a run is still being built: the command ends promptly with the
//! exit code of an interrupt (130) or a spent budget (5), says that the simulation never
//! started, and leaves its output folder without results and without the in-progress marker.

use crate::common::aiccsim;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A fabric whose routes take tens of seconds to compute (4096 top-of-rack switches, each
/// searched from over half a million links) and little memory: any stop in the first seconds
/// lands in its build. One small flow, so the simulation itself would take no time.
const SLOW_TO_BUILD: &str = r#"
[topology]
kind = "leaf_spine"
leaves = 4096
spines = 128
hosts_per_leaf = 1
link = { bandwidth = "100Gbps", delay = "1us" }
[switch]
pfc = { enabled = false }
[workload]
kind = "flows"
flows = [{ src = 0, dst = 1, size = "10KB" }]
"#;

fn assert_nothing_left(out: &Path) {
    assert!(!out.join("summary.json").exists(), "a run that never started writes no summary");
    assert!(!out.join("RUN-IN-PROGRESS").exists(), "no run is writing there any more");
}

#[cfg(unix)]
#[test]
// The wall clock only paces the test: when to send the signal, how long to wait for the end.
#[allow(clippy::disallowed_methods)]
fn sigint_while_building_exits_130_without_results() {
    use std::time::Instant;
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("slow.toml");
    std::fs::write(&scenario, SLOW_TO_BUILD).unwrap();
    let out = dir.path().join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_aiccsim"))
        .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The marker goes down just before the build starts.
    let marker = out.join("RUN-IN-PROGRESS");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !marker.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    let sent = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the run did not stop within 60 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted while") && stderr.contains("before the simulation started"), "{stderr}");
    assert_nothing_left(&out);
}

#[test]
fn max_wall_holds_while_building() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("slow.toml");
    std::fs::write(&scenario, SLOW_TO_BUILD).unwrap();
    let out = dir.path().join("out");
    let o = aiccsim(&["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--max-wall", "200ms"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("wall-clock limit reached while") && stderr.contains("before the simulation started"),
        "{stderr}"
    );
    assert_nothing_left(&out);
}
