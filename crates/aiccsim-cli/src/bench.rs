//! `aiccsim bench`: the fixed benchmark scenarios, each run in a child process so its peak
//! memory is its own. Besides the run's figures it reports how long building the run took
//! (`build_ms`: the fabric, its checks and the layout of the flows), which is what the large
//! fabrics of `benches/build/` measure.

use crate::{load, CliError};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

fn benches_dir() -> PathBuf {
    let here = PathBuf::from("benches");
    if here.is_dir() {
        return here;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches")
}

/// Peak resident memory of this process, from /proc (Linux); 0 elsewhere.
fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

pub fn run(mut scenarios: Vec<PathBuf>, repeat: u32, child: bool, relaunch: &[OsString]) -> Result<(), CliError> {
    if child {
        let path = scenarios.first().ok_or_else(|| CliError::input("--child needs a scenario"))?;
        let scenario = aiccsim::Scenario::load(path)?;
        // Timed apart from the run: on large fabrics building them was the slow part.
        #[allow(clippy::disallowed_methods)]
        let building = std::time::Instant::now();
        // The fabric the check built is the one the run uses: built once.
        let fabric = crate::admit::check(&scenario)?;
        let sim = aiccsim::Simulation::with_fabric(&scenario, fabric);
        let build_seconds = building.elapsed().as_secs_f64();
        let r = sim.run(&mut |_| {});
        let s = &r.summary;
        let out = serde_json::json!({
            "build_seconds": build_seconds,
            "wall_seconds": s.performance.wall_seconds,
            "events": s.events,
            "packet_hops": s.packet_hops,
            "simulated_ns": s.simulated_time_ns,
            "flows_finished": s.flows_finished,
            "flows": s.flows,
            "peak_rss_kb": peak_rss_kb(),
        });
        println!("{out}");
        return Ok(());
    }
    if scenarios.is_empty() {
        let dir = benches_dir();
        let rd = std::fs::read_dir(&dir).map_err(|e| CliError::io(&dir.display().to_string(), e))?;
        scenarios = rd
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        scenarios.sort();
    }
    for path in &scenarios {
        load(path)?; // report a bad scenario as such, before any output
    }
    let (exe, exe_args) =
        relaunch.split_first().ok_or_else(|| CliError::io("locating aiccsim", "cannot find the running program"))?;
    println!(
        "{:<28} {:>9} {:>11} {:>12} {:>10} {:>10} {:>9} {:>9}",
        "scenario", "wall_ms", "events", "packet_hops", "Mhops/s", "Mevents/s", "peak_MB", "build_ms"
    );
    for path in &scenarios {
        let mut best: Option<serde_json::Value> = None;
        for _ in 0..repeat.max(1) {
            let out = Command::new(exe)
                .args(exe_args)
                .args(["bench", "--child"])
                .arg(path)
                .output()
                .map_err(|e| CliError::io("running the benchmark child", e))?;
            if !out.status.success() {
                return Err(CliError::io(
                    &path.display().to_string(),
                    String::from_utf8_lossy(&out.stderr).trim().to_string(),
                ));
            }
            let v: serde_json::Value =
                serde_json::from_slice(&out.stdout).map_err(|e| CliError::io("benchmark child output", e))?;
            let faster = best.as_ref().is_none_or(|b| v["wall_seconds"].as_f64() < b["wall_seconds"].as_f64());
            if faster {
                best = Some(v);
            }
        }
        let v = best.expect("at least one run");
        let wall = v["wall_seconds"].as_f64().unwrap_or(0.0);
        let events = v["events"].as_u64().unwrap_or(0);
        let hops = v["packet_hops"].as_u64().unwrap_or(0);
        let name = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
        println!(
            "{:<28} {:>9.1} {:>11} {:>12} {:>10.2} {:>10.2} {:>9.1} {:>9.1}",
            name,
            wall * 1e3,
            events,
            hops,
            hops as f64 / wall / 1e6,
            events as f64 / wall / 1e6,
            v["peak_rss_kb"].as_u64().unwrap_or(0) as f64 / 1024.0,
            v["build_seconds"].as_f64().unwrap_or(0.0) * 1e3
        );
        if v["flows_finished"] != v["flows"] {
            println!("  warning: {} of {} flows finished", v["flows_finished"], v["flows"]);
        }
    }
    Ok(())
}
