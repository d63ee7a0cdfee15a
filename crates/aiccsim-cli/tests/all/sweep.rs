//! `aiccsim sweep`: the same table whatever the number of workers, resume, bad sweep files.

use crate::common;

use crate::common::aiccsim;

use std::path::{Path, PathBuf};
use std::process::Output;

const BASE: &str = r#"
[topology]
kind = "star"
hosts = 5
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "dcqcn"
[workload]
kind = "incast"
senders = "1..=4"
receiver = 0
size = "300KB"
"#;

const SWEEP: &str = r#"
base = "base.toml"
seeds = [1, 2]
[grid]
"cc.algorithm" = ["dcqcn", "hpcc"]
"switch.buffer" = ["4MB", "32MB"]
"#;

/// A folder with `base.toml` and `sweep.toml` (`sweep` as given).
fn setup(sweep: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("base.toml"), BASE).unwrap();
    let file = dir.path().join("sweep.toml");
    std::fs::write(&file, sweep).unwrap();
    (dir, file)
}

fn sweep(file: &Path, out: &Path, jobs: &str) -> Output {
    let o = aiccsim(&["sweep", file.to_str().unwrap(), "-j", jobs, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn run_dirs(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(out.join("runs")).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

#[test]
fn two_workers_give_the_same_table_and_runs_as_one() {
    let (dir, file) = setup(SWEEP);
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    sweep(&file, &one, "1");
    sweep(&file, &two, "2");
    let table = std::fs::read_to_string(one.join("sweep.csv")).unwrap();
    assert_eq!(table, std::fs::read_to_string(two.join("sweep.csv")).unwrap());
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 9, "a header and 8 points:\n{table}");
    assert!(lines[0].starts_with("cc.algorithm,switch.buffer,seed,hash,stop_reason,flows,flows_finished,"));
    // The sweep's order: first axis slowest, seed fastest.
    assert!(lines[1].starts_with("dcqcn,4MB,1,"), "{}", lines[1]);
    assert!(lines[2].starts_with("dcqcn,4MB,2,"), "{}", lines[2]);
    assert!(lines[8].starts_with("hpcc,32MB,2,"), "{}", lines[8]);
    assert!(lines[1..].iter().all(|l| l.contains(",completed,4,4,")), "{table}");
    let (a, b) = (run_dirs(&one), run_dirs(&two));
    assert_eq!(a.len(), 8);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.file_name(), y.file_name());
        let flows = std::fs::read_to_string(x.join("flows.csv")).unwrap();
        assert_eq!(flows, std::fs::read_to_string(y.join("flows.csv")).unwrap(), "{}", x.display());
        // The folder's name is the hash of the scenario it ran, and the table lists it.
        assert!(table.contains(&x.file_name().unwrap().to_string_lossy().to_string()));
    }
}

#[test]
fn a_second_run_only_runs_the_points_not_finished() {
    let (dir, file) = setup(SWEEP);
    let out = dir.path().join("out");
    sweep(&file, &out, "2");
    let table = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let dirs = run_dirs(&out);
    let mtime = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    let before: Vec<_> = dirs.iter().map(|d| mtime(&d.join("summary.json"))).collect();
    // A point whose run never finished (no marker) and one that never started.
    std::fs::remove_file(dirs[3].join("done")).unwrap();
    std::fs::remove_dir_all(&dirs[5]).unwrap();
    let o = sweep(&file, &out, "2");
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("8 points: 2 ran, 6 skipped"), "{said}");
    for (i, d) in dirs.iter().enumerate() {
        if i != 3 && i != 5 {
            assert_eq!(mtime(&d.join("summary.json")), before[i], "{} was run again", d.display());
        }
        assert!(d.join("done").is_file());
    }
    assert_eq!(std::fs::read_to_string(out.join("sweep.csv")).unwrap(), table);
}

#[test]
fn named_points_cross_the_grid_in_file_order() {
    let (dir, file) = setup(
        r#"
base = "base.toml"
[grid]
"nic.mtu" = ["1000B", "4000B"]
"cc.algorithm" = ["dcqcn", "hpcc"]
[[point]]
name = "shallow"
set = { switch = { buffer = "4MB" } }
[[point]]
name = "small, flows"
set = { workload = { size = "100KB" } }
"#,
    );
    let out = dir.path().join("out");
    sweep(&file, &out, "2");
    let table = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 9, "{table}");
    assert!(lines[0].starts_with("point,nic.mtu,cc.algorithm,seed,hash,"), "{table}");
    assert!(lines[1].starts_with("shallow,1000B,dcqcn,1,"), "{table}");
    assert!(lines[2].starts_with("shallow,1000B,hpcc,1,"), "{table}");
    assert!(lines[8].starts_with("\"small, flows\",4000B,hpcc,1,"), "{table}");
}

fn fails_naming(sweep_text: &str, needles: &[&str]) {
    fails_naming_over(BASE, sweep_text, needles);
}

/// As [`fails_naming`], over the base scenario `base`.
fn fails_naming_over(base: &str, sweep_text: &str, needles: &[&str]) {
    let (dir, file) = setup(sweep_text);
    std::fs::write(dir.path().join("base.toml"), base).unwrap();
    let out = dir.path().join("out");
    let o = aiccsim(&["sweep", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("sweep.toml"), "{err}");
    for n in needles {
        assert!(err.contains(n), "{n} missing from: {err}");
    }
    assert!(!out.join("runs").exists() || run_dirs(&out).is_empty(), "nothing ran");
    assert!(
        !err.contains("line 1, column") && !err.contains("TOML parse error"),
        "no place in a document nobody wrote: {err}"
    );
}

#[test]
fn bad_sweep_files_fail_before_running_anything() {
    // A bad value in the last point: nothing runs.
    fails_naming(
        "base = \"base.toml\"\n[grid]\n\"cc.algorithm\" = [\"dcqcn\", \"hpcc\", \"bogus\"]\n",
        &["cc.algorithm", "bogus"],
    );
    fails_naming("base = \"base.toml\"\n[grid]\n\"switch.bufer\" = [\"4MB\"]\n", &["switch.bufer"]);
    fails_naming("base = \"base.toml\"\n[grid]\n\"switch.buffer\" = [32]\n", &["switch.buffer"]);
    fails_naming("base = \"base.toml\"\n[grid]\n\"switch.buffer\" = \"4MB\"\n", &["grid", "switch.buffer"]);
    fails_naming("base = \"base.toml\"\nseed = [1]\n", &["seed"]);
    fails_naming("base = \"missing.toml\"\n", &["base", "missing.toml"]);
    fails_naming("base = \"base.toml\"\nseeds = [1, 1]\n", &["same scenario"]);
    fails_naming(
        "base = \"base.toml\"\n[[point]]\nname = \"a\"\nset = { nic = { mtu = \"x\" } }\n",
        &["point 'a'", "nic.mtu"],
    );
    // A point setting that the grid varies too would be silently replaced in every run.
    fails_naming(
        "base = \"base.toml\"\n[grid]\n\"switch.buffer\" = [\"4MB\", \"8MB\"]\n[[point]]\nname = \"shallow\"\nset = { switch = { buffer = \"1MB\", pfc = { enabled = false } } }\n",
        &["point 'shallow' sets switch.buffer, which the grid varies too"],
    );
}

/// Keys the base cannot take are named with what is wrong, not as a parse error of the merged
/// document (which nobody wrote).
#[test]
fn grid_keys_the_base_cannot_take_say_why() {
    let jobs = std::fs::read_to_string(common::repo().join("examples/jobs.toml")).unwrap();
    let jobs_with_events = format!("{jobs}\n[[events]]\nat = \"10us\"\nlink = [\"s0\", \"s1\"]\naction = \"fail\"\n");
    fails_naming_over(
        &jobs_with_events,
        "base = \"base.toml\"\n[grid]\n\"jobs.weight\" = [1, 2]\n",
        &["`jobs` is a list of tables in the base ([[jobs]])", "replace the whole list"],
    );
    fails_naming_over(
        &jobs_with_events,
        "base = \"base.toml\"\n[grid]\n\"events.at\" = [\"1us\"]\n",
        &["`events` is a list of tables in the base ([[events]])"],
    );
    fails_naming_over(
        &jobs,
        "base = \"base.toml\"\n[grid]\n\"workload.size\" = [\"1MB\"]\n",
        &["the base has no [workload] (it has [[jobs]]", "missing field `kind`"],
    );
    fails_naming("base = \"base.toml\"\n[grid]\n\"cc.nosuch\" = [1]\n", &["`nosuch` is not a key of `cc`"]);
    fails_naming(
        "base = \"base.toml\"\n[grid]\n\"pfc.xoff\" = [1]\n",
        &["`pfc` is not a key of a scenario's top level"],
    );
    fails_naming_over(
        &BASE.replace("[cc]\nalgorithm = \"dcqcn\"\n", ""),
        "base = \"base.toml\"\n[grid]\n\"cc.nosuch\" = [1]\n",
        &["the base has no [cc]", "missing field `algorithm`"],
    );
    fails_naming(
        "base = \"base.toml\"\n[grid]\n\"jobs.weight\" = [1]\n",
        &["the base has no [[jobs]] (it has [workload])"],
    );
    // A negative seed names its key and place.
    fails_naming("base = \"base.toml\"\nseeds = [1, -1]\n", &["seeds[1]: -1 is not a seed"]);
    fails_naming("base = \"base.toml\"\n[grid]\n\"simulation.seed\" = [-1]\n", &["simulation.seed", "-1"]);
}

#[test]
fn the_ray_backend_without_its_python_fails_naming_the_fix() {
    let (dir, file) = setup(SWEEP);
    let out = dir.path().join("out");
    let o = aiccsim(&["sweep", file.to_str().unwrap(), "--address", "auto", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--address is for --backend ray"));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_aiccsim"))
        .args(["sweep", file.to_str().unwrap(), "--backend", "ray", "--out", out.to_str().unwrap()])
        .env("AICCSIM_PYTHON", dir.path().join("no-such-python"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("starting the Ray driver") && err.contains("set AICCSIM_PYTHON"), "{err}");
    assert!(!out.join("sweep.csv").exists());
}

/// A sweep over a training workload has its iteration figures in the table, equal to each
/// run's summary; other workloads leave those cells empty.
#[test]
fn training_sweeps_have_iteration_columns() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(common::repo().join("examples/training.toml"), dir.path().join("base.toml")).unwrap();
    let file = dir.path().join("sweep.toml");
    std::fs::write(&file, "base = \"base.toml\"\n[grid]\n\"cc.algorithm\" = [\"none\", \"dcqcn\"]\n").unwrap();
    let out = dir.path().join("out");
    sweep(&file, &out, "2");
    let table = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name}"));
    let (iteration, exposed, hash) = (col("iteration_mean_ns"), col("exposed_comm_mean_ns"), col("hash"));
    for line in lines {
        let row: Vec<&str> = line.split(',').collect();
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("runs").join(row[hash]).join("summary.json")).unwrap())
                .unwrap();
        let it = &summary["iterations"];
        // The table keeps 6 significant digits of the summary's figures.
        let close = |cell: &str, exact: f64| (cell.parse::<f64>().unwrap() - exact).abs() <= exact.abs() * 1e-5;
        assert!(close(row[iteration], it["mean_duration_ns"].as_f64().unwrap()), "{line}");
        assert!(close(row[exposed], it["mean_exposed_comm_ns"].as_f64().unwrap()), "{line}");
        assert!(row[exposed].parse::<f64>().unwrap() > 0.0, "the example's last all-reduce is exposed");
    }
    // The incast sweep above has none.
    let (dir, file) = setup("base = \"base.toml\"\n");
    let out = dir.path().join("out");
    sweep(&file, &out, "1");
    let table = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let header: Vec<&str> = table.lines().next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "iteration_mean_ns").unwrap();
    assert_eq!(table.lines().nth(1).unwrap().split(',').nth(at), Some(""));
}

/// Sends Ctrl-C to the sweep's whole process group (as a terminal does: the sweep and its
/// children) `after` it starts; returns its exit code and stderr.
#[cfg(unix)]
// The wall clock only paces the test and bounds its wait.
#[allow(clippy::disallowed_methods)]
fn interrupt_sweep(file: &Path, out: &Path, after: std::time::Duration) -> (Option<i32>, String) {
    use std::os::unix::process::CommandExt;
    use std::time::{Duration, Instant};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_aiccsim"))
        .args(["sweep", file.to_str().unwrap(), "-j", "2", "--out", out.to_str().unwrap()])
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let group = format!("-{}", child.id());
    assert!(std::process::Command::new("kill").args(["-INT", "--", &group]).status().unwrap().success());
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the sweep did not stop within 30 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stderr).to_string())
}

/// Ctrl-C while the points run ends the sweep with exit code 130 and the count of points kept,
/// however the interrupt falls against the children's ends; a second sweep resumes.
#[cfg(unix)]
#[test]
fn ctrl_c_while_points_run_says_how_many_finished() {
    use std::time::Duration;
    // Four points of seconds each: still running when the signal comes.
    let (dir, file) = setup("base = \"base.toml\"\nseeds = [1, 2, 3, 4]\n");
    std::fs::write(dir.path().join("base.toml"), BASE.replace("size = \"300KB\"", "size = \"1GB\"")).unwrap();
    for (i, ms) in [700u64, 1200, 1900].into_iter().enumerate() {
        let out = dir.path().join(format!("out{i}"));
        let (code, err) = interrupt_sweep(&file, &out, Duration::from_millis(ms));
        assert_eq!(code, Some(130), "after {ms} ms: {err}");
        assert!(err.contains("interrupted: ") && err.contains(" of 4 points finished"), "after {ms} ms: {err}");
        assert!(!err.contains("sweep point "), "no point is blamed: {err}");
    }
}

/// Ctrl-C while a sweep of many points is still being planned stops it there, exit 130.
#[cfg(unix)]
#[test]
fn ctrl_c_while_planning_stops_the_planning() {
    // 200,000 combinations, each a scenario to resolve and check: seconds of planning.
    let values = |n: usize, f: &dyn Fn(usize) -> String| (1..=n).map(f).collect::<Vec<_>>().join(",");
    let (dir, file) = setup(&format!(
        "base = \"base.toml\"\n[grid]\n\"simulation.seed\" = [{}]\n\"cc.g\" = [{}]\n",
        values(2000, &|i| i.to_string()),
        values(100, &|i| format!("{}", i as f64 / 1000.0))
    ));
    let out = dir.path().join("out");
    let (code, err) = interrupt_sweep(&file, &out, std::time::Duration::from_millis(800));
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("interrupted while planning the sweep") && err.contains("of 200000 points resolved"), "{err}");
    assert!(!out.join("runs").exists(), "nothing ran");
}
