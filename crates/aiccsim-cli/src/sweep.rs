//! `aiccsim sweep FILE`: one base scenario run over a grid of settings and seeds, each point in a
//! child process (or a Ray task: `sweep/ray.rs`), into `OUT/runs/<hash>/`, and one table
//! `OUT/sweep.csv` (see docs/sweeps.md).
//!
//! ```toml
//! base = "incast.toml"            # relative to the sweep file
//! seeds = [1, 2]                  # optional; default: the base's seed
//! [grid]                          # every combination, the first key varying slowest
//! "cc.algorithm" = ["dcqcn", "hpcc"]
//! "switch.buffer" = ["4MB", "32MB"]
//! [[point]]                       # optional: each point crossed with the grid
//! name = "deep"
//! set = { switch = { buffer = "64MB" } }
//! ```

mod plan;
mod ray;

use crate::interrupt::{flag as interrupt_flag, Stage};
use crate::CliError;
use indicatif::{ProgressBar, ProgressStyle};
use plan::{Plan, Point};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Written into a point's folder, atomically, once its results are all there: a folder without
/// it (a run cut short, a crash) is run again.
const DONE: &str = "done";

/// Where the points run: child processes on this machine, or tasks on a Ray cluster.
pub enum Backend {
    Local,
    /// `address`: a running cluster's (`host:port`, `auto`, `ray://...`); none starts a local one.
    Ray {
        address: Option<String>,
    },
}

/// What a backend did: the points it ran and those it found finished already.
struct Tally {
    ran: usize,
    skipped: usize,
}

pub fn run(
    file: &Path,
    jobs: Option<usize>,
    out: Option<PathBuf>,
    backend: Backend,
    relaunch: &[OsString],
) -> Result<(), CliError> {
    // Ctrl-C is answered from here on: planning, running and writing the table each stop
    // with exit code 130, saying what is kept.
    let interrupt = interrupt_flag();
    crate::interrupt::enter(Stage::Checking, "");
    let Plan { header, points } = plan::plan(file, &interrupt)?;
    let out = out.unwrap_or_else(|| {
        PathBuf::from("out").join(file.file_stem().map(|s| s.to_os_string()).unwrap_or_else(|| "sweep".into()))
    });
    let runs = out.join("runs");
    std::fs::create_dir_all(&runs).map_err(|e| CliError::io(&runs.display().to_string(), e))?;
    let bar = ProgressBar::new(points.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("sweep {wide_bar} {pos}/{len} ({elapsed}) {msg}").expect("valid template"),
    );
    let tally = match backend {
        Backend::Local => run_local(&points, &runs, jobs, relaunch, &bar),
        Backend::Ray { address } => ray::run(&points, &runs, jobs, address.as_deref(), relaunch, &bar),
    };
    bar.finish_and_clear();
    let Tally { ran, skipped } = tally?;
    let table = out.join("sweep.csv");
    crate::interrupt::enter(
        Stage::Writing,
        format!(
            "interrupted while writing {}: all {} points finished (kept in {}); run the sweep again to write it",
            table.display(),
            points.len(),
            runs.display()
        ),
    );
    write_table(&table, &header, &points, &runs)?;
    crate::interrupt::enter(Stage::Checking, "");
    println!("{} points: {ran} ran, {skipped} skipped", points.len());
    println!("table: {}", table.display());
    Ok(())
}

/// The bar's look once a point has run: with the time to go at the pace of the points run so
/// far (before that, or while finished points are skipped, there is no pace to go by).
fn with_eta(bar: &ProgressBar) {
    bar.set_style(
        ProgressStyle::with_template("sweep {wide_bar} {pos}/{len} ({elapsed}, ETA {eta}) {msg}")
            .expect("valid template"),
    );
}

/// The error of a sweep that Ctrl-C stopped, with the count of points whose results are kept.
fn interrupted(points: &[Point], runs: &Path) -> CliError {
    let finished = points.iter().filter(|p| runs.join(&p.hash).join(DONE).is_file()).count();
    CliError {
        message: format!(
            "interrupted: {finished} of {} points finished (kept in {}); run the sweep again to resume",
            points.len(),
            runs.display()
        ),
        code: 130,
    }
}

/// How an error names a point: its folder and seed.
fn label(p: &Point, dir: &Path) -> String {
    format!("sweep point {} (seed {}, {})", p.hash, p.seed, dir.display())
}

/// A point's folder, made ready to run: created, with the resolved scenario in it.
fn prepare(p: &Point, dir: &Path) -> Result<PathBuf, CliError> {
    std::fs::create_dir_all(dir).map_err(|e| CliError::io(&dir.display().to_string(), e))?;
    let scenario = dir.join("scenario.toml");
    std::fs::write(&scenario, p.toml()?).map_err(|e| CliError::io(&scenario.display().to_string(), e))?;
    Ok(scenario)
}

enum Outcome {
    Ran,
    Skipped,
}

/// The local backend: `jobs` threads (default: every core), each running one point at a time
/// in a child process.
fn run_local(
    points: &[Point],
    runs: &Path,
    jobs: Option<usize>,
    relaunch: &[OsString],
    bar: &ProgressBar,
) -> Result<Tally, CliError> {
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let (exe, exe_args) =
        relaunch.split_first().ok_or_else(|| CliError::io("locating aiccsim", "cannot find the running program"))?;
    let interrupt = interrupt_flag();
    // An algorithm written in Python is imported as a point's scenario is parsed, which needs
    // the GIL, and `python -m aiccsim` holds it on this thread: the points' folders are then
    // written here, before the workers start (theirs would wait for the GIL for good).
    let prepared = !aiccsim::cc::external::names().is_empty();
    if prepared {
        for p in points {
            let dir = runs.join(&p.hash);
            if !dir.join(DONE).is_file() {
                prepare(p, &dir)?;
            }
        }
    }
    // A child that reports Ctrl-C, which this process may not have seen yet.
    let child_interrupted = AtomicBool::new(false);
    let next = AtomicUsize::new(0);
    let (ran, skipped) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let failure: Mutex<Option<CliError>> = Mutex::new(None);
    let stop = || {
        interrupt.load(Ordering::SeqCst)
            || child_interrupted.load(Ordering::SeqCst)
            || failure.lock().expect("not poisoned").is_some()
    };

    std::thread::scope(|scope| {
        for _ in 0..jobs.min(points.len()) {
            scope.spawn(|| loop {
                if stop() {
                    return;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(p) = points.get(i) else { return };
                match run_point(p, &runs.join(&p.hash), prepared, exe, exe_args) {
                    Ok(Some(o)) => {
                        let counter = if matches!(o, Outcome::Ran) { &ran } else { &skipped };
                        if counter.fetch_add(1, Ordering::SeqCst) == 0 && matches!(o, Outcome::Ran) {
                            bar.reset_eta();
                            with_eta(bar);
                        }
                        let (r, s) = (ran.load(Ordering::SeqCst), skipped.load(Ordering::SeqCst));
                        bar.set_message(format!("{r} ran, {s} skipped"));
                        bar.inc(1);
                    }
                    // Interrupted: its partial results stay, without the marker.
                    Ok(None) => {
                        child_interrupted.store(true, Ordering::SeqCst);
                        return;
                    }
                    Err(e) => {
                        failure.lock().expect("not poisoned").get_or_insert(e);
                        return;
                    }
                }
            });
        }
    });

    let failure = failure.into_inner().expect("not poisoned");
    // A child that Ctrl-C ended may exit before this process's handler has run (it runs on a
    // thread of its own): its failure is the interrupt's, once the handler has had a moment.
    if failure.is_some() && !interrupt.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(300));
    }
    if interrupt.load(Ordering::SeqCst) || child_interrupted.load(Ordering::SeqCst) {
        return Err(interrupted(points, runs));
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let (ran, skipped) = (ran.into_inner(), skipped.into_inner());
    if ran + skipped < points.len() {
        return Err(interrupted(points, runs));
    }
    Ok(Tally { ran, skipped })
}

/// Runs one point in a child process unless its folder is already complete (`prepared`: its
/// scenario is written already); `None` when the run was interrupted.
fn run_point(
    p: &Point,
    dir: &Path,
    prepared: bool,
    exe: &OsString,
    exe_args: &[OsString],
) -> Result<Option<Outcome>, CliError> {
    if dir.join(DONE).is_file() {
        return Ok(Some(Outcome::Skipped));
    }
    let scenario = match prepared {
        true => dir.join("scenario.toml"),
        false => prepare(p, dir)?,
    };
    let output = Command::new(exe)
        .args(exe_args)
        .arg("run")
        .arg(&scenario)
        .arg("--out")
        .arg(dir)
        .arg("--quiet")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| CliError::io("running a sweep point", e))?;
    let interrupted = interrupt_flag().load(Ordering::SeqCst) || ended_by_ctrl_c(&output.status);
    match output.status.code() {
        // A stalled run (4) is one of the sweep's results: its row says so.
        Some(0) | Some(4) => {}
        // Ctrl-C reached the child too (one process group): it kept its partial results, or
        // died before its handler was installed.
        _ if interrupted => return Ok(None),
        _ => {
            return Err(CliError::io(
                &label(p, dir),
                String::from_utf8_lossy(&output.stderr).trim().replace('\n', "; "),
            ))
        }
    }
    mark_done(dir)?;
    Ok(Some(Outcome::Ran))
}

/// Whether a child's end is Ctrl-C's: exit code 130, or SIGINT's default action.
fn ended_by_ctrl_c(status: &std::process::ExitStatus) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if status.signal() == Some(libc::SIGINT) {
            return true;
        }
    }
    status.code() == Some(130)
}

/// Writes the `done` marker, atomically: a folder has it only once its results are complete.
fn mark_done(dir: &Path) -> Result<(), CliError> {
    let tmp = dir.join(format!("{DONE}.tmp"));
    std::fs::write(&tmp, "")
        .and_then(|()| std::fs::rename(&tmp, dir.join(DONE)))
        .map_err(|e| CliError::io(&dir.display().to_string(), e))
}

/// The summary figures of each row, as (column, JSON pointer into summary.json). Nothing that
/// depends on the wall clock, so that the table is the same whatever the number of workers.
const FIGURES: [(&str, &str); 26] = [
    ("stop_reason", "/stop_reason"),
    ("flows", "/flows"),
    ("flows_finished", "/flows_finished"),
    ("simulated_time_ns", "/simulated_time_ns"),
    ("completion_time_ns", "/completion_time_ns"),
    ("fct_mean_ns", "/fct_ns/mean"),
    ("fct_p50_ns", "/fct_ns/p50"),
    ("fct_p99_ns", "/fct_ns/p99"),
    ("fct_max_ns", "/fct_ns/max"),
    ("slowdown_mean", "/slowdown/mean"),
    ("slowdown_p50", "/slowdown/p50"),
    ("slowdown_p99", "/slowdown/p99"),
    ("slowdown_max", "/slowdown/max"),
    ("pause_frames", "/pause_frames"),
    ("packets_dropped", "/packets_dropped"),
    ("ecn_marks", "/ecn_marks"),
    ("cnps", "/cnps"),
    ("timeouts", "/timeouts"),
    ("retransmitted_bytes", "/retransmitted_bytes"),
    ("max_switch_queue_bytes", "/max_switch_queue_bytes"),
    ("max_switch_buffer_bytes", "/max_switch_buffer_bytes"),
    ("rtt_mean_ns", "/rtt_ns/mean"),
    ("queuing_delay_p99_ns", "/queuing_delay_ns/p99"),
    ("iteration_mean_ns", "/iterations/mean_duration_ns"),
    ("exposed_comm_mean_ns", "/iterations/mean_exposed_comm_ns"),
    ("events", "/events"),
];

fn write_table(path: &Path, header: &[String], points: &[Point], runs: &Path) -> Result<(), CliError> {
    let shown = path.display().to_string();
    let mut w = csv::Writer::from_writer(Vec::new());
    let columns = header.iter().map(String::as_str).chain(["seed", "hash"]).chain(FIGURES.iter().map(|f| f.0));
    w.write_record(columns).map_err(|e| CliError::io(&shown, e))?;
    for p in points {
        let summary_path = runs.join(&p.hash).join("summary.json");
        let summary: serde_json::Value = std::fs::read(&summary_path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
            .map_err(|e| CliError::io(&summary_path.display().to_string(), e))?;
        let figures = FIGURES.iter().map(|(_, at)| match summary.pointer(at) {
            None | Some(serde_json::Value::Null) => String::new(),
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(serde_json::Value::Number(n)) if n.is_f64() => n.as_f64().map(figure).unwrap_or_default(),
            Some(v) => v.to_string(),
        });
        let row: Vec<String> =
            p.axes().iter().cloned().chain([p.seed.to_string(), p.hash.clone()]).chain(figures).collect();
        w.write_record(&row).map_err(|e| CliError::io(&shown, e))?;
    }
    let bytes = w.into_inner().map_err(|e| CliError::io(&shown, e))?;
    let tmp = path.with_extension("csv.tmp");
    std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| CliError::io(&shown, e))
}

/// A measured figure with the 6 significant digits it can support (a mean of simulated times,
/// a slowdown), not the 17 of its binary value: "1234.57", "0.00123457", "1.5".
fn figure(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return x.to_string();
    }
    // Rounded in decimal by the formatter, then written in the fewest digits that read back
    // as the rounded value.
    format!("{x:.5e}").parse::<f64>().map_or_else(|_| x.to_string(), |r| r.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_keep_six_significant_digits() {
        assert_eq!(figure(12_345.678_901_234_5), "12345.7");
        assert_eq!(figure(1.000_000_000_000_2), "1");
        assert_eq!(figure(0.001_234_567_89), "0.00123457");
        assert_eq!(figure(2_718_281_828.459), "2718280000");
        assert_eq!(figure(1.5), "1.5");
        assert_eq!(figure(0.0), "0");
    }
}
