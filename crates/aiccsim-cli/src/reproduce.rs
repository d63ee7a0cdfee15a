//! `aiccsim reproduce ID`: runs the scenarios an experiment lists and writes its table, its
//! claims' verdicts and its plot. The plot is drawn by the Python package (`python -m aiccsim
//! plot OUT`, python/aiccsim/_experiment_plot.py), from the table, the run folders and what
//! `experiment.json` says of the experiment; without that package the rest is written all the
//! same, and a note says so before the first run.
//!
//! An experiment is a folder `experiments/ID/` holding `experiment.toml`:
//! ```toml
//! title = "16-to-1 incast"
//! base = "incast.toml"    # optional: the scenario runs share
//! [[run]]
//! name = "DCQCN"
//! scenario = "dcqcn.toml" # a scenario of its own, or:
//! set = { cc = { algorithm = "dcqcn" } }   # keys replaced in `base`
//! [plot]                  # see docs/experiments.md
//! kind = "queue"          # queue of one switch port over time, one line per run
//! switch = 0
//! port = 0
//! [[check]]               # claims checked on the table: see checks.rs
//! ```

use crate::checks::{self, Check, Measured};
use crate::overrides;
use crate::python::{self, Python};
use crate::table_print;
use crate::{build_run, check_ending, load, run_built, run_control, CliError};
use aiccsim::metrics::experiment::{self, RowOptions};
use aiccsim::metrics::tables::{experiment_column, EXPERIMENT};
use aiccsim::time::SimTime;
use aiccsim::Results;
use aiccsim::StopReason;
use serde::Deserialize;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Experiment {
    title: String,
    base: Option<PathBuf>,
    run: Vec<RunSpec>,
    plot: PlotSpec,
    #[serde(default)]
    check: Vec<Check>,
    /// The table columns printed after the run (`table.csv` has them all); by default the
    /// columns the checks and the plot use.
    columns: Option<Vec<String>>,
    /// Links whose utilisation the table gives (`min_link_util_pct`, `mean_link_util_pct`), as
    /// the node sending and the node at the other end: `[["s0", "s2"], ...]`.
    #[serde(default)]
    links: Vec<[String; 2]>,
}

impl Experiment {
    /// The columns to print, besides the run's name.
    fn printed_columns(&self) -> Vec<&str> {
        if let Some(c) = &self.columns {
            return c.iter().map(String::as_str).collect();
        }
        let mut wanted: Vec<&str> = self.check.iter().map(|c| c.metric.as_str()).collect();
        match &self.plot {
            PlotSpec::Bars { metric, .. } => wanted.extend(metric.names()),
            PlotSpec::Iterations {} => wanted.extend(["mean_iteration_us", "mean_exposed_comm_us"]),
            PlotSpec::Queue { .. } => wanted.extend(["max_queue_kb", "mean_queue_kb"]),
            PlotSpec::Throughput { recovery_of, segments, .. } => {
                wanted.extend(recovery_of.map(|_| "recovery_us"));
                wanted.extend(segments.map(|_| "min_jain"));
            }
            PlotSpec::FctCdf {} => wanted.extend(["p99_fct_us", "max_fct_us"]),
        }
        if wanted.is_empty() {
            wanted.extend(table_print::DEFAULT_COLUMNS);
        }
        wanted
    }

    /// What the table's rows need besides each run's summary: the plot's port, flow and
    /// segments, and the listed links.
    fn row_options(&self) -> RowOptions {
        let mut o = RowOptions { links: self.links.clone(), ..RowOptions::default() };
        match self.plot {
            PlotSpec::Queue { switch, port } => o.queue = Some((switch, port)),
            PlotSpec::Throughput { recovery_of, segments, settle, .. } => {
                o.recovery_of = recovery_of;
                o.segments = segments.map(|len| (len, settle));
            }
            PlotSpec::FctCdf {} | PlotSpec::Bars { .. } | PlotSpec::Iterations {} => {}
        }
        o
    }

    /// Checks what can be checked before any run: the claims, the printed columns and a bar
    /// plot's column name the table's columns, the claims' runs the experiment's.
    fn validate(&self, path: &Path) -> Result<(), CliError> {
        let header = header();
        let names: Vec<String> = self.run.iter().map(|r| r.name.clone()).collect();
        for c in &self.check {
            checks::validate(c, &names, &header).map_err(|e| CliError::input(format!("{}: {e}", path.display())))?;
        }
        let bars = match &self.plot {
            PlotSpec::Bars { metric, series } => {
                self.validate_series(series, path)?;
                metric.names()
            }
            _ => Vec::new(),
        };
        let named = (self.columns.iter().flatten().map(|c| ("columns", c.as_str())))
            .chain(bars.into_iter().map(|c| ("plot.metric", c)));
        for (key, c) in named {
            if experiment_column(c).is_none() {
                return Err(CliError::input(format!(
                    "{}: {key}: no table column '{c}' (columns: {})",
                    path.display(),
                    header.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// A bar plot's `series` must place every run: its name starts with one of them.
    fn validate_series(&self, series: &[String], path: &Path) -> Result<(), CliError> {
        if series.is_empty() {
            return Ok(());
        }
        match self.run.iter().find(|r| !series.iter().any(|s| r.name.starts_with(s.as_str()))) {
            Some(r) => Err(CliError::input(format!(
                "{}: plot.series: run '{}' starts with none of {} (a run's name is its series, then its group: \"PC4 n=2\" is series \"PC4\", group \"n=2\")",
                path.display(),
                r.name,
                series.iter().map(|s| format!("\"{s}\"")).collect::<Vec<_>>().join(", ")
            ))),
            None => Ok(()),
        }
    }

    /// The runs the claims name (`runs`, `among`, `than`), each once, in the table's order:
    /// what the report's comparison plots show first when there are too many runs for one plot.
    fn claimed_runs(&self) -> Vec<&str> {
        let named = |n: &str| self.check.iter().any(|c| c.runs.iter().chain(&c.among).chain(&c.than).any(|r| r == n));
        self.run.iter().map(|r| r.name.as_str()).filter(|n| named(n)).collect()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunSpec {
    name: String,
    scenario: Option<PathBuf>,
    /// Keys replaced in the scenario (a nested table, merged key by key).
    set: Option<toml::Table>,
}

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum PlotSpec {
    /// Egress queue of one switch port over time.
    Queue { switch: u32, port: u32 },
    /// CDF of flow completion times.
    FctCdf {},
    /// One bar per run of a table column, or of each of several columns (a panel each). With
    /// `series` (the starts of the runs' names), runs are grouped by the rest of their name, a
    /// colour per series: "PC4 n=2" and "DCQCN n=2" side by side in group "n=2".
    Bars {
        metric: Metrics,
        #[serde(default)]
        series: Vec<String>,
    },
    /// One horizontal bar per run of its mean training iteration: compute, then the exposed
    /// communication stacked on it (`mean_iteration_us`, `mean_exposed_comm_us`).
    Iterations {},
    /// Throughput of some flows over time, one line per run and flow. With `recovery_of`, the
    /// table's `recovery_us` is the time that flow takes, once the others it shared the
    /// bottleneck with have finished, to carry 95% of what it carried alone before they started
    /// (its line-rate goodput), averaged over five samples so that packet granularity does not
    /// decide it.
    /// With `segments` (and `settle`), the table's `min_jain` is the lowest Jain's index of the
    /// flows' mean throughputs over each segment of that length, from `settle` after its start to
    /// its end, among the segments with two flows or more active.
    Throughput {
        flows: Vec<u32>,
        recovery_of: Option<u32>,
        segments: Option<SimTime>,
        #[serde(default)]
        settle: SimTime,
    },
}

/// A bar plot's column, or its columns.
#[derive(Deserialize)]
#[serde(untagged)]
enum Metrics {
    One(String),
    Many(Vec<String>),
}

impl Metrics {
    fn names(&self) -> Vec<&str> {
        match self {
            Metrics::One(m) => vec![m.as_str()],
            Metrics::Many(m) => m.iter().map(String::as_str).collect(),
        }
    }
}

pub(crate) fn experiments_dir(given: Option<PathBuf>) -> PathBuf {
    if let Some(d) = given {
        return d;
    }
    let here = PathBuf::from("experiments");
    if here.is_dir() {
        return here;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments")
}

/// The names of the table's columns (`metrics::tables::EXPERIMENT`).
fn header() -> Vec<&'static str> {
    EXPERIMENT.iter().map(|m| m.name).collect()
}

/// The names of experiment `id`'s runs, in order.
pub fn run_names(id: &str, experiments: Option<PathBuf>) -> Result<Vec<String>, CliError> {
    let root = experiments_dir(experiments);
    let spec_path = root.join(id).join("experiment.toml");
    let (spec, _) = read_experiment(&root, id, &spec_path)?;
    Ok(spec.run.iter().map(|r| r.name.clone()).collect())
}

/// Runs experiment `id`; with `report`, the Python package must be there for the report that
/// follows, which is checked before the runs. With `fast_forward`, every run's
/// `simulation.fast_forward` is set to it (its `scenario.toml` says so).
pub fn run(
    id: &str,
    out: Option<PathBuf>,
    experiments: Option<PathBuf>,
    max_wall: Option<std::time::Duration>,
    report: bool,
    fast_forward: Option<aiccsim::config::FastForward>,
) -> Result<(), CliError> {
    let root = experiments_dir(experiments);
    let dir = root.join(id);
    let spec_path = dir.join("experiment.toml");
    let (spec, plot_table) = read_experiment(&root, id, &spec_path)?;
    let out = out.unwrap_or_else(|| PathBuf::from("out").join(id));
    std::fs::create_dir_all(&out).map_err(|e| CliError::io(&out.display().to_string(), e))?;
    spec.validate(&spec_path)?;
    // Load every scenario before running any, so a typo in the last one fails at once.
    let mut scenarios: Vec<(aiccsim::Scenario, String)> =
        spec.run.iter().map(|r| scenario_of(&dir, &spec, r)).collect::<Result<_, CliError>>()?;
    if let Some(ff) = fast_forward {
        for (scenario, text) in scenarios.iter_mut() {
            scenario.simulation.fast_forward = ff;
            text.insert_str(0, &crate::fast_forward_note(ff));
        }
    }

    // Whether the plot can be drawn is known before the runs, not after an hour of them.
    let python = match python::find(&python::PLOT_MODULES) {
        Ok(python) => Some(python),
        Err(why) if report => {
            return Err(CliError {
                message: format!(
                    "--report needs the aiccsim Python package with matplotlib, and {why}; {} (without --report, reproduce writes the table and checks without it)",
                    python::install_hint("'.[plot]'")
                ),
                code: 1,
            })
        }
        Err(why) => {
            eprintln!(
                "note: no plot.svg this time: the plot is drawn by the aiccsim Python package, and {why}; `make python` in the aiccsim source tree sets it up (then `aiccsim plot {}` draws it); the runs, table.csv and checks.csv do not need it",
                out.display()
            );
            None
        }
    };
    println!("{}", spec.title);
    let runs = run_all(&spec, &spec_path, scenarios, &out, max_wall)?;
    let table = write_table(&spec, &runs, &out)?;
    write_about(id, &spec, plot_table, &out)?;
    println!("table: {}", out.join("table.csv").display());
    let plotted = draw_plot(python.as_ref(), &out);
    let judged = judge(&spec, &table, &out);
    judged.and(plotted)
}

/// Writes `experiment.json`: what the experiment is, for its plot and the report's index page:
/// its title, its `[plot]` table as written, the columns its claims and plot use, and the runs
/// its claims name.
fn write_about(id: &str, spec: &Experiment, plot: toml::Value, out: &Path) -> Result<(), CliError> {
    let about = serde_json::json!({
        "id": id,
        "title": spec.title,
        "plot": plot,
        "columns": spec.printed_columns(),
        "claimed_runs": spec.claimed_runs(),
    });
    let path = out.join("experiment.json");
    std::fs::write(&path, format!("{about:#}\n")).map_err(|e| CliError::io(&path.display().to_string(), e))
}

/// Hands the plot over to Python (`python -m aiccsim plot OUT`), which prints where it wrote it
/// or why it could not; without Python, says where the plot is not.
fn draw_plot(python: Option<&Python>, out: &Path) -> Result<(), CliError> {
    let Some(python) = python else {
        println!("plot:  not drawn (needs the aiccsim Python package: see the note above)");
        return Ok(());
    };
    match python.run("plot", vec![OsString::from(out)]) {
        0 => Ok(()),
        code => Err(CliError { message: "the plot was not drawn (the error above)".to_string(), code }),
    }
}

/// The experiment `id` of folder `root` and its `[plot]` table as written, or an input error
/// naming the experiments there.
fn read_experiment(root: &Path, id: &str, spec_path: &Path) -> Result<(Experiment, toml::Value), CliError> {
    if !spec_path.is_file() {
        let known: Vec<String> = std::fs::read_dir(root)
            .map(|rd| {
                let mut v: Vec<String> = rd
                    .filter_map(|e| e.ok())
                    .filter(|e| e.path().join("experiment.toml").is_file())
                    .map(|e| e.file_name().to_string_lossy().to_string())
                    .collect();
                v.sort();
                v
            })
            .unwrap_or_default();
        return Err(CliError::input(format!(
            "no experiment '{id}' in {} (known: {})",
            root.display(),
            if known.is_empty() { "none".to_string() } else { known.join(", ") }
        )));
    }
    let text = std::fs::read_to_string(spec_path).map_err(|e| CliError::io(&spec_path.display().to_string(), e))?;
    let bad = |e: toml::de::Error| CliError::input(format!("{}: {}", spec_path.display(), e.message()));
    let spec: Experiment = toml::from_str(&text).map_err(bad)?;
    let mut table: toml::Table = toml::from_str(&text).map_err(bad)?;
    Ok((spec, table.remove("plot").expect("an experiment has a [plot]")))
}

/// Runs every scenario in turn, writing each run's results into its folder of `out`.
fn run_all(
    spec: &Experiment,
    spec_path: &Path,
    scenarios: Vec<(aiccsim::Scenario, String)>,
    out: &Path,
    max_wall: Option<std::time::Duration>,
) -> Result<Vec<(String, Results)>, CliError> {
    let mut runs: Vec<(String, Results)> = Vec::new();
    let count = spec.run.len();
    // Only says how long the experiment has taken so far; it never steers a run.
    #[allow(clippy::disallowed_methods)]
    let started = std::time::Instant::now();
    for (k, (r, (scenario, text))) in spec.run.iter().zip(scenarios).enumerate() {
        // The wall-clock budget is each run's, its build included; it never steers a run.
        #[allow(clippy::disallowed_methods)]
        let since = std::time::Instant::now();
        let control = run_control(max_wall, since);
        // The bars (on a terminal) say which run of how many this is.
        let label = run_label(k, count, &r.name);
        let sim = build_run(&scenario, &label, false, &control)?;
        if let PlotSpec::Throughput { flows, recovery_of, .. } = &spec.plot {
            let count = sim.flow_count() as u32;
            if let Some(bad) = flows.iter().chain(recovery_of).find(|&&f| f >= count) {
                return Err(CliError::input(format!(
                    "{}: plot: flow {bad} does not exist in run '{}' (its flows are 0 to {})",
                    spec_path.display(),
                    r.name,
                    count.saturating_sub(1)
                )));
            }
        }
        let results = run_built(sim, &scenario, &label, false, &control, None)?;
        let run_dir = out.join(experiment::slug(&r.name));
        crate::write_results(&results, &run_dir, &label, max_wall.map(|limit| since + limit))?;
        crate::write_scenario_text(&run_dir, &text)?;
        match (results.summary.stop_reason, check_ending(&results, &run_dir)) {
            // A stalled run is one of the experiment's results (its row shows it); the rest end
            // the experiment without a table.
            (StopReason::Stalled, Err(e)) => eprintln!("warning: {}: {}", r.name, e.message),
            (_, Err(e)) => return Err(e),
            (_, Ok(())) => {}
        }
        let view = results.view();
        if let Some([from, to]) = spec.links.iter().find(|[from, to]| view.link_index(from, to).is_none()) {
            return Err(CliError::input(format!(
                "{}: links: no link from {from} to {to} in run '{}' (name a switch and the node at the other end of one of its ports, as ports.csv does)",
                spec_path.display(),
                r.name
            )));
        }
        runs.push((r.name.clone(), results));
        if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            eprintln!("{}", experiment_progress(k + 1, count, started.elapsed()));
        }
    }
    Ok(runs)
}

/// How a run's bars name it: "run 3/45 dcqcn-n8".
fn run_label(k: usize, count: usize, name: &str) -> String {
    format!("run {}/{count} {name}", k + 1)
}

/// The line after each run on a terminal: how many runs are done, the time so far, and the
/// time to go at the average pace of the runs so far (runs differ, so a guide).
fn experiment_progress(done: usize, count: usize, elapsed: std::time::Duration) -> String {
    let left = count - done;
    let so_far = crate::progress::wall_time(elapsed.as_secs_f64());
    if left == 0 {
        return format!("{done} of {count} runs done in {so_far}");
    }
    let eta = crate::progress::wall_time(elapsed.as_secs_f64() / done as f64 * left as f64);
    format!("{done} of {count} runs done in {so_far}; about {eta} to go at this pace")
}

struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// The table as CSV; a run name with a comma or a quote in it is quoted.
    fn to_csv(&self) -> Result<Vec<u8>, csv::Error> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&self.header)?;
        for r in &self.rows {
            w.write_record(r)?;
        }
        w.into_inner().map_err(|e| e.into_error().into())
    }
}

/// Writes `table.csv` and prints the columns the experiment is about.
fn write_table(spec: &Experiment, runs: &[(String, Results)], out: &Path) -> Result<Table, CliError> {
    let options = spec.row_options();
    let rows = runs.iter().map(|(name, r)| experiment::row(name, r, &options)).collect();
    let table = Table { header: header(), rows };
    let table_path = out.join("table.csv");
    let path = table_path.display().to_string();
    std::fs::write(&table_path, table.to_csv().map_err(|e| CliError::io(&path, e))?)
        .map_err(|e| CliError::io(&path, e))?;
    let shown = table_print::shown_columns(&table.header, &table.rows, &spec.printed_columns());
    print!("{}", table_print::render(&table.header, &table.rows, &shown, table_print::WIDTH));
    println!("({} of the table's {} columns; all are in {})", shown.len(), EXPERIMENT.len(), table_path.display());
    Ok(table)
}

/// Judges the claims on the table, writes `checks.csv` and prints the verdicts; exit code 3
/// when one fails.
fn judge(spec: &Experiment, table: &Table, out: &Path) -> Result<(), CliError> {
    if spec.check.is_empty() {
        return Ok(());
    }
    let measured = Measured { header: &table.header, rows: &table.rows };
    let verdicts: Vec<checks::Verdict> = spec.check.iter().map(|c| checks::evaluate(c, &measured)).collect();
    let mut csv = String::from("claim,pass,detail\n");
    println!("\nchecks:");
    // Wrapped to the terminal: a detail names every run it compares.
    let width = table_print::prose_width();
    for v in &verdicts {
        print!("{}", table_print::wrap(if v.pass { "  PASS " } else { "  FAIL " }, &v.claim, width));
        print!("{}", table_print::wrap("       ", &v.detail, width));
        csv.push_str(&format!("\"{}\",{},\"{}\"\n", v.claim.replace('"', "'"), v.pass, v.detail.replace('"', "'")));
    }
    let checks_path = out.join("checks.csv");
    std::fs::write(&checks_path, csv).map_err(|e| CliError::io(&checks_path.display().to_string(), e))?;
    let failed = verdicts.iter().filter(|v| !v.pass).count();
    if failed > 0 {
        return Err(CliError {
            message: format!("{failed} of {} checks failed (see {})", verdicts.len(), checks_path.display()),
            code: 3,
        });
    }
    println!("all {} checks pass", verdicts.len());
    Ok(())
}

/// The scenario of one run: its own file, or the experiment's base with the run's `set` keys;
/// and its text for the run's `scenario.toml`: the file as written, or the base's keys with the
/// run's merged in.
fn scenario_of(dir: &Path, spec: &Experiment, r: &RunSpec) -> Result<(aiccsim::Scenario, String), CliError> {
    let file = match (&r.scenario, &spec.base) {
        (Some(f), _) | (None, Some(f)) => dir.join(f),
        (None, None) => {
            return Err(CliError::input(format!(
                "{}: run '{}' names no scenario: give it `scenario = \"FILE\"` or the experiment a `base`",
                dir.join("experiment.toml").display(),
                r.name
            )))
        }
    };
    let Some(set) = &r.set else {
        let text = std::fs::read_to_string(&file).map_err(|e| CliError::io(&file.display().to_string(), e))?;
        return Ok((load(&file)?, text));
    };
    let origin = format!("{} with run '{}' settings", file.display(), r.name);
    let base = overrides::read_base(&file)?;
    let scenario = overrides::apply(&base, set, &origin, aiccsim::config::folder_of(&file))?;
    let mut merged = base;
    overrides::merge(&mut merged, set);
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    let text = format!(
        "# {name} with the settings of run '{}' (`set` in experiment.toml) merged in\n{}",
        r.name,
        toml::to_string(&merged).unwrap_or_default()
    );
    Ok((scenario, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_experiment_says_which_run_and_how_long_to_go() {
        assert_eq!(run_label(2, 45, "dcqcn-n8"), "run 3/45 dcqcn-n8");
        let d = std::time::Duration::from_secs(60);
        assert_eq!(experiment_progress(3, 45, d), "3 of 45 runs done in 1m 00s; about 14m 00s to go at this pace");
        assert_eq!(experiment_progress(45, 45, d), "45 of 45 runs done in 1m 00s");
    }

    #[test]
    fn every_column_a_bar_plot_can_show_has_a_label_with_its_unit() {
        for m in &EXPERIMENT[1..] {
            let label = m.label();
            assert!(label.ends_with(')') && label.contains(" ("), "{}: {label}", m.name);
        }
        assert_eq!(experiment_column("mean_rtt_us").map(|m| m.label()).as_deref(), Some("mean RTT (µs)"));
    }
}
