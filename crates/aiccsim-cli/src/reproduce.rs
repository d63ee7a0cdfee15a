//! `aiccsim reproduce ID`: runs the scenarios an experiment lists and writes its table and plot.
//!
//! An experiment is a folder `experiments/ID/` holding `experiment.toml`:
//! ```toml
//! title = "16-to-1 incast"
//! base = "incast.toml"    # optional: the scenario runs share
//! [[run]]
//! name = "DCQCN"
//! scenario = "dcqcn.toml" # a scenario of its own, or:
//! set = { cc = { algorithm = "dcqcn" } }   # keys replaced in `base`
//! [plot]
//! kind = "queue"          # queue of one switch port over time, one line per run
//! switch = 0
//! port = 0
//! [[check]]               # claims checked on the table: see checks.rs
//! ```

use crate::checks::{self, Check, Measured};
use crate::overrides;
use crate::plot::{self, Series};
use crate::table_print;
use crate::{build_run, check_ending, load, run_built, run_control, CliError};
use aiccsim::metrics::experiment::{self, RowOptions};
use aiccsim::metrics::tables::{experiment_column, EXPERIMENT};
use aiccsim::time::SimTime;
use aiccsim::Results;
use aiccsim::StopReason;
use serde::Deserialize;
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
            PlotSpec::Bars { metric } => wanted.push(metric),
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
        let bar = match &self.plot {
            PlotSpec::Bars { metric } => Some(("plot.metric", metric)),
            _ => None,
        };
        let named = self.columns.iter().flatten().map(|c| ("columns", c)).chain(bar);
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
    /// One horizontal bar per run of a table column.
    Bars { metric: String },
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

pub fn run(
    id: &str,
    out: Option<PathBuf>,
    experiments: Option<PathBuf>,
    max_wall: Option<std::time::Duration>,
) -> Result<(), CliError> {
    let root = experiments_dir(experiments);
    let dir = root.join(id);
    let spec_path = dir.join("experiment.toml");
    let spec = read_experiment(&root, id, &spec_path)?;
    let out = out.unwrap_or_else(|| PathBuf::from("out").join(id));
    std::fs::create_dir_all(&out).map_err(|e| CliError::io(&out.display().to_string(), e))?;
    spec.validate(&spec_path)?;
    // Load every scenario before running any, so a typo in the last one fails at once.
    let scenarios: Vec<aiccsim::Scenario> =
        spec.run.iter().map(|r| scenario_of(&dir, &spec, r)).collect::<Result<_, CliError>>()?;

    println!("{}", spec.title);
    let runs = run_all(&spec, &spec_path, scenarios, &out, max_wall)?;
    let table = write_table(&spec, &runs, &out)?;
    // What the experiment is, for the report's index page (its title, not its folder's name).
    let about = serde_json::json!({ "id": id, "title": spec.title });
    let about_path = out.join("experiment.json");
    std::fs::write(&about_path, format!("{about:#}\n"))
        .map_err(|e| CliError::io(&about_path.display().to_string(), e))?;
    let plot_path = out.join("plot.svg");
    draw_plot(&spec, &runs, &table, &plot_path).map_err(|e| CliError::io("plotting", e))?;
    println!("table: {}\nplot:  {}", out.join("table.csv").display(), plot_path.display());
    judge(&spec, &table, &out)
}

/// The experiment `id` of folder `root`, or an input error naming the experiments there.
fn read_experiment(root: &Path, id: &str, spec_path: &Path) -> Result<Experiment, CliError> {
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
    toml::from_str(&text).map_err(|e| CliError::input(format!("{}: {}", spec_path.display(), e.message())))
}

/// Runs every scenario in turn, writing each run's results into its folder of `out`.
fn run_all(
    spec: &Experiment,
    spec_path: &Path,
    scenarios: Vec<aiccsim::Scenario>,
    out: &Path,
    max_wall: Option<std::time::Duration>,
) -> Result<Vec<(String, Results)>, CliError> {
    let mut runs: Vec<(String, Results)> = Vec::new();
    for (r, scenario) in spec.run.iter().zip(scenarios) {
        // The wall-clock budget is each run's, its build included; it never steers a run.
        #[allow(clippy::disallowed_methods)]
        let control = run_control(max_wall, std::time::Instant::now());
        let sim = build_run(&scenario, &r.name, false, &control)?;
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
        let results = run_built(sim, &scenario, &r.name, false, &control, None)?;
        let run_dir = out.join(experiment::slug(&r.name));
        results.write_dir(&run_dir).map_err(|e| CliError::io(&run_dir.display().to_string(), e))?;
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
    }
    Ok(runs)
}

struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// The cells of column `name`, one per run.
    fn column(&self, name: &str) -> impl Iterator<Item = &str> + '_ {
        let col = self.header.iter().position(|h| *h == name).expect("a column of the table");
        self.rows.iter().map(move |r| r[col].as_str())
    }

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

/// Draws `plot.svg`: the plot `[plot]` asks for, one line or bar per run.
fn draw_plot(spec: &Experiment, runs: &[(String, Results)], table: &Table, path: &Path) -> Result<(), String> {
    let number = |cell: &str| cell.parse().unwrap_or(0.0);
    match &spec.plot {
        PlotSpec::Queue { switch, port } => {
            let series = (runs.iter())
                .map(|(name, r)| Series { name: name.clone(), points: r.view().queue_series(*switch, *port) })
                .collect::<Vec<_>>();
            let y = format!("queue at switch {switch} port {port} (KB)");
            plot::lines(path, &spec.title, "time (µs)", &y, &series)
        }
        PlotSpec::Throughput { flows, .. } => {
            let series: Vec<Series> =
                (runs.iter()).flat_map(|(name, r)| flows.iter().map(move |&f| throughput_series(name, r, f))).collect();
            plot::lines(path, &spec.title, "time (µs)", "throughput (Gbit/s)", &series)
        }
        PlotSpec::FctCdf {} => {
            let series: Vec<Series> = runs.iter().map(|(name, r)| fct_cdf_series(name, r)).collect();
            let y = "fraction of flows finished (0 to 1)";
            plot::lines(path, &spec.title, "flow completion time (µs)", y, &series)
        }
        PlotSpec::Bars { metric } => {
            let bars: Vec<(String, f64)> =
                runs.iter().map(|r| r.0.clone()).zip(table.column(metric).map(number)).collect();
            let label = experiment_column(metric).expect("validated").label();
            plot::bars(path, &spec.title, &label, &bars)
        }
        PlotSpec::Iterations {} => {
            let totals = table.column("mean_iteration_us").map(number);
            let exposed = table.column("mean_exposed_comm_us").map(number);
            let bars: Vec<(String, Vec<f64>)> = (runs.iter().zip(totals.zip(exposed)))
                .map(|((name, _), (t, e))| (name.clone(), vec![t - e, e]))
                .collect();
            let parts = ["compute", "exposed communication"];
            plot::stacked_bars(path, &spec.title, "mean iteration time (µs)", &parts, &bars)
        }
    }
}

/// Flow `f`'s delivered throughput, Gbit/s, averaged over ten samples: one sample holds a
/// whole number of packets, which makes a line-rate flow flicker between two values.
fn throughput_series(run: &str, r: &Results, f: u32) -> Series {
    let samples: Vec<(f64, f64)> =
        r.rates.iter().filter(|s| s.flow == f).map(|s| (s.time.as_us_f64(), s.throughput_bps / 1e9)).collect();
    let points =
        (samples.chunks(10)).map(|c| (c[c.len() - 1].0, c.iter().map(|p| p.1).sum::<f64>() / c.len() as f64)).collect();
    Series { name: format!("{run}: flow {f}"), points }
}

/// The finished flows' FCTs (us) against the fraction of flows finished by then.
fn fct_cdf_series(run: &str, r: &Results) -> Series {
    let mut f: Vec<f64> = r.flows.iter().filter_map(|f| f.fct()).map(|t| t.as_us_f64()).collect();
    f.sort_by(f64::total_cmp);
    let n = f.len() as f64;
    Series { name: run.to_string(), points: f.iter().enumerate().map(|(i, &v)| (v, (i + 1) as f64 / n)).collect() }
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
    for v in &verdicts {
        println!("  {} {}\n       {}", if v.pass { "PASS" } else { "FAIL" }, v.claim, v.detail);
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

/// The scenario of one run: its own file, or the experiment's base with the run's `set` keys.
fn scenario_of(dir: &Path, spec: &Experiment, r: &RunSpec) -> Result<aiccsim::Scenario, CliError> {
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
    let Some(set) = &r.set else { return load(&file) };
    let origin = format!("{} with run '{}' settings", file.display(), r.name);
    overrides::apply(&overrides::read_base(&file)?, set, &origin, aiccsim::config::folder_of(&file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_a_bar_plot_can_show_has_a_label_with_its_unit() {
        for m in &EXPERIMENT[1..] {
            let label = m.label();
            assert!(label.ends_with(')') && label.contains(" ("), "{}: {label}", m.name);
        }
        assert_eq!(experiment_column("mean_rtt_us").map(|m| m.label()).as_deref(), Some("mean RTT (µs)"));
    }
}
