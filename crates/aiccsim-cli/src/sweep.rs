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

mod ray;

use crate::interrupt::flag as interrupt_flag;
use crate::{overrides, CliError};
use aiccsim::Scenario;
use indicatif::{ProgressBar, ProgressStyle};
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    base: PathBuf,
    seeds: Option<Vec<u64>>,
    #[serde(default)]
    grid: Grid,
    #[serde(default)]
    point: Vec<PointSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PointSpec {
    name: String,
    set: toml::Table,
}

/// The grid's axes in the order the file gives them, which is the table's column order and
/// decides which axis varies slowest. toml hands tables over sorted by key, so each axis is put
/// back in its place by where its values start in the file.
#[derive(Default)]
struct Grid(Vec<(String, Vec<toml::Value>)>);

impl<'de> Deserialize<'de> for Grid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Grid;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table of dotted scenario keys, each with a list of values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Grid, A::Error> {
                let mut axes = Vec::new();
                while let Some(key) = m.next_key::<String>()? {
                    let spanned: toml::Spanned<toml::Value> = m.next_value()?;
                    let at = spanned.span().start;
                    let value = spanned.into_inner();
                    let toml::Value::Array(values) = value else {
                        return Err(serde::de::Error::custom(format!(
                            "grid.\"{key}\": expected a list of values, like [\"dcqcn\", \"hpcc\"]"
                        )));
                    };
                    if values.is_empty() {
                        return Err(serde::de::Error::custom(format!("grid.\"{key}\": the list of values is empty")));
                    }
                    axes.push((at, key, values));
                }
                axes.sort_by_key(|a| a.0);
                Ok(Grid(axes.into_iter().map(|(_, k, v)| (k, v)).collect()))
            }
        }
        d.deserialize_map(V)
    }
}

/// One run of the sweep, resolved and checked.
struct Point {
    /// The `point` column (when the file has `[[point]]`s), then one value per grid axis.
    axes: Vec<String>,
    seed: u64,
    hash: String,
    toml: String,
}

fn cell(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every point in the sweep's order (point, then grid with its first axis slowest, then seed),
/// each checked, so that a bad value fails before anything runs.
fn points(path: &Path) -> Result<(Vec<String>, Vec<Point>), CliError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| CliError::io(&shown, e))?;
    let spec: SweepFile = toml::from_str(&text).map_err(|e| CliError::input(format!("{shown}: {}", e.message())))?;
    if spec.seeds.as_ref().is_some_and(|s| s.is_empty()) {
        return Err(CliError::input(format!("{shown}: seeds: the list is empty; leave it out to use the base's seed")));
    }
    for (i, p) in spec.point.iter().enumerate() {
        if spec.point[..i].iter().any(|q| q.name == p.name) {
            return Err(CliError::input(format!("{shown}: point: two points are named '{}'", p.name)));
        }
    }
    let base_path = path.parent().unwrap_or(Path::new(".")).join(&spec.base);
    if !base_path.is_file() {
        return Err(CliError::input(format!("{shown}: base: no scenario file {}", base_path.display())));
    }
    let base = overrides::read_base(&base_path)?;
    let mut grid_sets: Vec<(Vec<String>, toml::Table)> = vec![(Vec::new(), toml::Table::new())];
    for (key, values) in &spec.grid.0 {
        let mut next = Vec::new();
        for (cells, set) in &grid_sets {
            for v in values {
                let mut set = set.clone();
                let one =
                    overrides::dotted(key, v.clone()).map_err(|e| CliError::input(format!("{shown}: grid: {e}")))?;
                overrides::merge(&mut set, &one);
                let mut cells = cells.clone();
                cells.push(cell(v));
                next.push((cells, set));
            }
        }
        grid_sets = next;
    }
    // A point's setting that the grid also varies would be replaced in every run of the point,
    // without a word: the point would not be what its name says.
    for p in &spec.point {
        if let Some(key) = grid_sets.first().and_then(|(_, g)| shared_key(&p.set, g, "")) {
            return Err(CliError::input(format!(
                "{shown}: point '{}' sets {key}, which the grid varies too: the grid's values would replace the point's in every run; remove it from the point or from the grid",
                p.name
            )));
        }
    }
    let nothing = toml::Table::new();
    let named: Vec<(Option<&str>, &toml::Table)> = if spec.point.is_empty() {
        vec![(None, &nothing)]
    } else {
        spec.point.iter().map(|p| (Some(p.name.as_str()), &p.set)).collect()
    };

    let mut header: Vec<String> = Vec::new();
    if !spec.point.is_empty() {
        header.push("point".into());
    }
    header.extend(spec.grid.0.iter().map(|(k, _)| k.clone()));
    let mut out = Vec::new();
    for (name, point_set) in &named {
        for (cells, grid_set) in &grid_sets {
            let mut set = (*point_set).clone();
            overrides::merge(&mut set, grid_set);
            let settings: Vec<String> = name
                .map(|n| format!("point '{n}'"))
                .into_iter()
                .chain(spec.grid.0.iter().zip(cells).map(|((k, _), c)| format!("{k} = {c}")))
                .collect();
            let origin = if settings.is_empty() {
                format!("{} (base of {shown})", base_path.display())
            } else {
                format!("{shown} with {}", settings.join(", "))
            };
            let scenario: Scenario = overrides::apply(&base, &set, &origin, aiccsim::config::folder_of(&base_path))?;
            let seeds = spec.seeds.clone().unwrap_or_else(|| vec![scenario.simulation.seed]);
            for seed in seeds {
                let mut s = scenario.clone();
                s.simulation.seed = seed;
                let toml = s.to_toml();
                let hash = format!("{:016x}", aiccsim::rng::fnv1a(toml.as_bytes()));
                let axes: Vec<String> = name.map(str::to_string).into_iter().chain(cells.iter().cloned()).collect();
                if let Some(twin) = out.iter().position(|p: &Point| p.hash == hash) {
                    return Err(CliError::input(format!(
                        "{shown}: points {} and {} are the same scenario (seed {seed}); remove one",
                        twin + 1,
                        out.len() + 1
                    )));
                }
                out.push(Point { axes, seed, hash, toml });
            }
        }
    }
    Ok((header, out))
}

/// The first dotted key both tables set (a value in one where the other has a value or a table),
/// or `None` when they set different keys.
fn shared_key(a: &toml::Table, b: &toml::Table, prefix: &str) -> Option<String> {
    a.iter().find_map(|(k, va)| {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match (va, b.get(k)?) {
            (toml::Value::Table(ta), toml::Value::Table(tb)) => shared_key(ta, tb, &key),
            _ => Some(key),
        }
    })
}

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
    let (header, points) = points(file)?;
    let out = out.unwrap_or_else(|| {
        PathBuf::from("out").join(file.file_stem().map(|s| s.to_os_string()).unwrap_or_else(|| "sweep".into()))
    });
    let runs = out.join("runs");
    std::fs::create_dir_all(&runs).map_err(|e| CliError::io(&runs.display().to_string(), e))?;
    let bar = ProgressBar::new(points.len() as u64);
    bar.set_style(ProgressStyle::with_template("sweep {bar:24} {pos}/{len} runs {msg}").expect("valid template"));
    let tally = match backend {
        Backend::Local => run_local(&points, &runs, jobs, relaunch, &bar),
        Backend::Ray { address } => ray::run(&points, &runs, jobs, address.as_deref(), relaunch, &bar),
    };
    bar.finish_and_clear();
    let Tally { ran, skipped } = tally?;
    let table = out.join("sweep.csv");
    write_table(&table, &header, &points, &runs)?;
    println!("{} points: {ran} ran, {skipped} skipped", points.len());
    println!("table: {}", table.display());
    Ok(())
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
    std::fs::write(&scenario, &p.toml).map_err(|e| CliError::io(&scenario.display().to_string(), e))?;
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
    let next = AtomicUsize::new(0);
    let outcomes: Mutex<Vec<Option<Outcome>>> = Mutex::new(points.iter().map(|_| None).collect());
    let failure: Mutex<Option<CliError>> = Mutex::new(None);
    let stop = || interrupt.load(Ordering::SeqCst) || failure.lock().expect("not poisoned").is_some();

    std::thread::scope(|scope| {
        for _ in 0..jobs.min(points.len()) {
            scope.spawn(|| loop {
                if stop() {
                    return;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(p) = points.get(i) else { return };
                match run_point(p, &runs.join(&p.hash), exe, exe_args) {
                    Ok(Some(o)) => {
                        let mut all = outcomes.lock().expect("not poisoned");
                        all[i] = Some(o);
                        let ran = all.iter().filter(|o| matches!(o, Some(Outcome::Ran))).count();
                        let skipped = all.iter().filter(|o| matches!(o, Some(Outcome::Skipped))).count();
                        bar.set_message(format!("({ran} ran, {skipped} skipped)"));
                        bar.inc(1);
                    }
                    Ok(None) => return, // interrupted: its partial results stay, without the marker
                    Err(e) => {
                        failure.lock().expect("not poisoned").get_or_insert(e);
                        return;
                    }
                }
            });
        }
    });

    if let Some(e) = failure.into_inner().expect("not poisoned") {
        return Err(e);
    }
    let outcomes = outcomes.into_inner().expect("not poisoned");
    if outcomes.iter().any(Option::is_none) {
        return Err(interrupted(points, runs));
    }
    let ran = outcomes.iter().filter(|o| matches!(o, Some(Outcome::Ran))).count();
    Ok(Tally { ran, skipped: points.len() - ran })
}

/// Runs one point in a child process unless its folder is already complete; `None` when the
/// run was interrupted.
fn run_point(p: &Point, dir: &Path, exe: &OsString, exe_args: &[OsString]) -> Result<Option<Outcome>, CliError> {
    if dir.join(DONE).is_file() {
        return Ok(Some(Outcome::Skipped));
    }
    let scenario = prepare(p, dir)?;
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
    let interrupted = interrupt_flag().load(Ordering::SeqCst);
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
            Some(v) => v.to_string(),
        });
        let row: Vec<String> =
            p.axes.iter().cloned().chain([p.seed.to_string(), p.hash.clone()]).chain(figures).collect();
        w.write_record(&row).map_err(|e| CliError::io(&shown, e))?;
    }
    let bytes = w.into_inner().map_err(|e| CliError::io(&shown, e))?;
    let tmp = path.with_extension("csv.tmp");
    std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| CliError::io(&shown, e))
}
