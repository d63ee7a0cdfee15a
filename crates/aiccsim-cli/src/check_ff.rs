//! `aiccsim check-fast-forward`: a scenario, or every run of an experiment, simulated both ways
//! (packet by packet, and with fast-forward), and the error fast-forward made: completion time,
//! FCT mean, p50, p99 and max, iteration time, PAUSE, CNP and ECN counts, the experiment's verdicts,
//! and the speed-up. The table is printed and written to `errors.csv`.

use crate::{reproduce, run_control, CliError};
use aiccsim::config::FastForward;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The figures compared, as `summary.json` has them: a name, the path to the value, and the
/// unit it is divided by (ns to us).
const FIGURES: [(&str, &[&str], f64); 9] = [
    ("completion_us", &["completion_time_ns"], 1e3),
    ("mean_fct_us", &["fct_ns", "mean"], 1e3),
    ("p50_fct_us", &["fct_ns", "p50"], 1e3),
    ("p99_fct_us", &["fct_ns", "p99"], 1e3),
    ("max_fct_us", &["fct_ns", "max"], 1e3),
    ("mean_iteration_us", &["iterations", "mean_duration_ns"], 1e3),
    ("pause_frames", &["pause_frames"], 1.0),
    ("cnps", &["cnps"], 1.0),
    ("ecn_marks", &["ecn_marks"], 1.0),
];

/// Of an experiment's claims: how many give the same verdict both ways, of how many.
type Agreement = Option<(usize, usize)>;

/// One run compared: its name, each figure both ways, the wall time both ways and the simulated
/// time skipped.
struct Compared {
    run: String,
    full: Vec<Option<f64>>,
    fast: Vec<Option<f64>>,
    wall: (f64, f64),
    skipped_ms: f64,
}

/// The value at `path` of `summary.json`, as a number.
fn at(summary: &serde_json::Value, path: &[&str]) -> Option<f64> {
    path.iter().try_fold(summary, |v, k| v.get(k))?.as_f64()
}

impl Compared {
    /// Run `run` from the summaries of its two folders.
    fn of(run: String, full: &Path, fast: &Path) -> Result<Compared, CliError> {
        let read = |dir: &Path| -> Result<serde_json::Value, CliError> {
            let path = dir.join("summary.json");
            let text = std::fs::read_to_string(&path).map_err(|e| CliError::io(&path.display().to_string(), e))?;
            serde_json::from_str(&text).map_err(|e| CliError::io(&path.display().to_string(), e))
        };
        let (a, b) = (read(full)?, read(fast)?);
        let figures =
            |s: &serde_json::Value| FIGURES.iter().map(|(_, path, unit)| at(s, path).map(|v| v / unit)).collect();
        let wall = |s: &serde_json::Value| at(s, &["performance", "wall_seconds"]).unwrap_or(0.0);
        Ok(Compared {
            run,
            full: figures(&a),
            fast: figures(&b),
            wall: (wall(&a), wall(&b)),
            skipped_ms: at(&b, &["fast_forward", "skipped_ns"]).unwrap_or(0.0) / 1e6,
        })
    }
}

/// The relative error of `fast` against `full`, in percent (`None` where either is missing; 0
/// where both are 0).
fn error_pct(full: Option<f64>, fast: Option<f64>) -> Option<f64> {
    let (a, b) = (full?, fast?);
    Some(if a == 0.0 {
        if b == 0.0 {
            0.0
        } else {
            100.0
        }
    } else {
        (b - a) / a * 100.0
    })
}

/// Runs the check on `target`: a scenario file, or an experiment's id.
pub fn run(
    target: &Path,
    tolerance: Option<f64>,
    out: Option<PathBuf>,
    experiments: Option<PathBuf>,
    max_wall: Option<Duration>,
) -> Result<(), CliError> {
    let ff = FastForward::On { tolerance: tolerance.unwrap_or(aiccsim::config::fast_forward::DEFAULT_TOLERANCE) };
    if let Some(problem) = ff.problem() {
        return Err(CliError::input(format!("--tolerance: {problem}")));
    }
    let name = target.file_stem().unwrap_or_default().to_string_lossy().to_string();
    let out = out.unwrap_or_else(|| PathBuf::from("out").join(format!("check-ff-{name}")));
    let (rows, verdicts) = if target.is_file() {
        (vec![scenario(target, ff, &out, max_wall)?], None)
    } else {
        experiment(&target.to_string_lossy(), ff, &out, experiments, max_wall)?
    };
    let table = render(&rows);
    print!("{table}");
    let path = out.join("errors.csv");
    std::fs::write(&path, csv(&rows)).map_err(|e| CliError::io(&path.display().to_string(), e))?;
    if let Some((same, total)) = verdicts {
        println!("claims: {same} of {total} give the same verdict both ways");
    }
    println!("errors: {}", path.display());
    Ok(())
}

/// One scenario both ways, in this process, into `out/full` and `out/fast-forward`.
fn scenario(path: &Path, ff: FastForward, out: &Path, max_wall: Option<Duration>) -> Result<Compared, CliError> {
    let mut s = crate::load(path)?;
    let label = path.file_stem().unwrap_or_default().to_string_lossy().to_string();
    for (mode, setting) in [("full", FastForward::Off), ("fast-forward", ff)] {
        s.simulation.fast_forward = setting;
        #[allow(clippy::disallowed_methods)]
        let since = std::time::Instant::now();
        let control = run_control(max_wall, since);
        let sim = crate::build_run(&s, &format!("{label} ({mode})"), true, &control)?;
        let r = crate::run_built(sim, &s, &label, true, &control, None)?;
        crate::write_results(&r, &out.join(mode), &label, max_wall.map(|limit| since + limit))?;
    }
    Compared::of(label, &out.join("full"), &out.join("fast-forward"))
}

/// Every run of experiment `id` both ways (`reproduce` twice), and its claims' verdicts both
/// ways: (verdicts that agree, claims).
fn experiment(
    id: &str,
    ff: FastForward,
    out: &Path,
    experiments: Option<PathBuf>,
    max_wall: Option<Duration>,
) -> Result<(Vec<Compared>, Agreement), CliError> {
    let mut dirs = Vec::new();
    for (mode, setting) in [("full", None), ("fast-forward", Some(ff))] {
        let dir = out.join(mode);
        // Failed claims (exit code 3) are a result here: their verdicts are compared.
        match reproduce::run(id, Some(dir.clone()), experiments.clone(), max_wall, false, setting) {
            Ok(()) => {}
            Err(e) if e.code == 3 => {}
            Err(e) => return Err(e),
        }
        dirs.push(dir);
    }
    let mut rows = Vec::new();
    for run in reproduce::run_names(id, experiments)? {
        let slug = aiccsim::metrics::experiment::slug(&run);
        rows.push(Compared::of(run, &dirs[0].join(&slug), &dirs[1].join(&slug))?);
    }
    let verdicts = |d: &Path| -> Vec<String> {
        std::fs::read_to_string(d.join("checks.csv")).unwrap_or_default().lines().skip(1).map(str::to_string).collect()
    };
    let (a, b) = (verdicts(&dirs[0]), verdicts(&dirs[1]));
    let same = a.iter().zip(&b).filter(|(x, y)| verdict_of(x) == verdict_of(y)).count();
    Ok((rows, Some((same, a.len()))))
}

/// A `checks.csv` line's claim and verdict (its detail, with the figures, left out).
fn verdict_of(line: &str) -> (String, bool) {
    let mut fields = csv::ReaderBuilder::new().has_headers(false).from_reader(line.as_bytes());
    let rec = fields.records().next().and_then(Result::ok).unwrap_or_default();
    (rec.get(0).unwrap_or("").to_string(), rec.get(1) == Some("true"))
}

fn render(rows: &[Compared]) -> String {
    let mut text = String::new();
    for r in rows {
        text.push_str(&format!(
            "{}: {:.2} s packet by packet, {:.2} s with fast-forward ({:.1}x), {:.3} ms skipped\n",
            r.run,
            r.wall.0,
            r.wall.1,
            r.wall.0 / r.wall.1.max(1e-9),
            r.skipped_ms
        ));
        for (i, (name, _, _)) in FIGURES.iter().enumerate() {
            let (a, b) = (r.full[i], r.fast[i]);
            if a.is_none() && b.is_none() {
                continue;
            }
            let show = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
            let err = error_pct(a, b).map_or("-".to_string(), |e| format!("{e:+.3}%"));
            text.push_str(&format!("  {name:<18} {:>16} {:>16} {:>10}\n", show(a), show(b), err));
        }
    }
    text
}

fn csv(rows: &[Compared]) -> String {
    let mut text = String::from("run,figure,full,fast_forward,error_pct,wall_full_s,wall_fast_forward_s,skipped_ms\n");
    for r in rows {
        for (i, (name, _, _)) in FIGURES.iter().enumerate() {
            let cell = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
            text.push_str(&format!(
                "\"{}\",{name},{},{},{},{:.3},{:.3},{:.3}\n",
                r.run.replace('"', "'"),
                cell(r.full[i]),
                cell(r.fast[i]),
                cell(error_pct(r.full[i], r.fast[i])),
                r.wall.0,
                r.wall.1,
                r.skipped_ms
            ));
        }
    }
    text
}
