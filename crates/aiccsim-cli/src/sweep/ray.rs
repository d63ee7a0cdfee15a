//! `aiccsim sweep --backend ray`: the points run as tasks on a Ray cluster. Ray is a Python
//! library, so the driver is Python (`python -m aiccsim._ray_backend`, in
//! python/aiccsim/_ray_backend.py); everything else stays here, as for the local backend: the
//! points are resolved and checked, finished ones skipped, and the table written by this code.
//!
//! The driver reads the plan (JSON) on its stdin: the folders to run, each holding its
//! `scenario.toml` already. It writes each point's result files and `done` marker into the
//! folder, and reports on its stdout, one line each:
//!
//! ```text
//! done INDEX              a point of the plan is complete (its folder has `done`)
//! error CODE MESSAGE      the driver stops with this exit code and one-line error
//! ```

use super::{interrupted, label, prepare, with_eta, Point, Tally, DONE};
use crate::interrupt::flag as interrupt_flag;
use crate::CliError;
use indicatif::ProgressBar;
use serde::Serialize;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;

#[derive(Serialize)]
struct Plan<'a> {
    /// The workers must run the same simulator that resolved the scenarios.
    aiccsim_version: &'static str,
    address: Option<&'a str>,
    jobs: Option<usize>,
    points: Vec<PlanPoint>,
}

#[derive(Serialize)]
struct PlanPoint {
    dir: PathBuf,
    /// How an error names the point, as the local backend does.
    label: String,
}

pub(super) fn run(
    points: &[Point],
    runs: &Path,
    jobs: Option<usize>,
    address: Option<&str>,
    relaunch: &[OsString],
    bar: &ProgressBar,
) -> Result<Tally, CliError> {
    let mut pending = Vec::new();
    for p in points {
        let dir = runs.join(&p.hash);
        if !dir.join(DONE).is_file() {
            prepare(p, &dir)?;
            pending.push(PlanPoint { label: label(p, &dir), dir });
        }
    }
    let skipped = points.len() - pending.len();
    bar.inc(skipped as u64);
    if pending.is_empty() {
        return Ok(Tally { ran: 0, skipped });
    }
    let total = pending.len();
    let plan =
        Plan { aiccsim_version: env!("CARGO_PKG_VERSION"), address, jobs: jobs.map(|j| j.max(1)), points: pending };
    let plan = serde_json::to_vec(&plan).map_err(|e| CliError::io("writing the Ray plan", e))?;

    // Ctrl-C reaches the driver too (one process group): this process must survive it, to
    // report what was kept.
    let interrupt = interrupt_flag();
    let python = python(relaunch);
    let driver = format!("{} -m aiccsim._ray_backend", python.to_string_lossy());
    let mut child = Command::new(&python)
        .args(["-m", "aiccsim._ray_backend"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| {
            CliError::io(
                &format!("starting the Ray driver ({driver})"),
                format!("{e}; set AICCSIM_PYTHON to a Python that has the aiccsim and ray packages"),
            )
        })?;
    // The driver reads the whole plan before it writes anything, so this cannot block on a
    // full stdout pipe. A driver that died at once shows in its exit status below.
    let mut stdin = child.stdin.take().expect("piped");
    let _ = stdin.write_all(&plan);
    drop(stdin);

    let mut ran = 0;
    let mut error: Option<CliError> = None;
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let Ok(line) = line else { break };
        if line.starts_with("done ") {
            ran += 1;
            if ran == 1 {
                bar.reset_eta();
                with_eta(bar);
            }
            bar.set_message(format!("{ran} ran, {skipped} skipped"));
            bar.inc(1);
        } else if let Some(rest) = line.strip_prefix("error ") {
            let (code, message) = rest.split_once(' ').unwrap_or((rest, ""));
            error = Some(CliError { message: message.to_string(), code: code.parse().unwrap_or(1) });
        }
    }
    let status = child.wait().map_err(|e| CliError::io(&format!("waiting for the Ray driver ({driver})"), e))?;
    if interrupt.load(Ordering::SeqCst) {
        return Err(interrupted(points, runs));
    }
    if let Some(e) = error {
        return Err(e);
    }
    if !status.success() {
        return Err(CliError::io(
            &format!("the Ray driver ({driver})"),
            format!(
                "exited with code {} (its error is above); it needs the aiccsim package, the same version as this command, and ray: set AICCSIM_PYTHON to such a Python",
                status.code().map_or("none (killed by a signal)".to_string(), |c| c.to_string())
            ),
        ));
    }
    if ran < total {
        return Err(CliError::io(
            &format!("the Ray driver ({driver})"),
            format!("ended with {} of {total} points not done", total - ran),
        ));
    }
    Ok(Tally { ran, skipped })
}

/// The Python that runs the driver: this one when the command runs inside Python
/// (`python -m aiccsim`, whose `relaunch` is that interpreter with `-m aiccsim`), else
/// `$AICCSIM_PYTHON`, else `python3` from the PATH.
fn python(relaunch: &[OsString]) -> OsString {
    match relaunch {
        [python, m, module] if m == "-m" && module == "aiccsim" => python.clone(),
        _ => std::env::var_os("AICCSIM_PYTHON").unwrap_or_else(|| "python3".into()),
    }
}
