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
use aiccsim::metrics::{jain_index, TimeDistribution};
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
        segments: Option<aiccsim::time::SimTime>,
        #[serde(default)]
        settle: aiccsim::time::SimTime,
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

pub fn run(
    id: &str,
    out: Option<PathBuf>,
    experiments: Option<PathBuf>,
    max_wall: Option<std::time::Duration>,
) -> Result<(), CliError> {
    let root = experiments_dir(experiments);
    let dir = root.join(id);
    let spec_path = dir.join("experiment.toml");
    if !spec_path.is_file() {
        let known: Vec<String> = std::fs::read_dir(&root)
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
    let text = std::fs::read_to_string(&spec_path).map_err(|e| CliError::io(&spec_path.display().to_string(), e))?;
    let spec: Experiment =
        toml::from_str(&text).map_err(|e| CliError::input(format!("{}: {}", spec_path.display(), e.message())))?;
    let out = out.unwrap_or_else(|| PathBuf::from("out").join(id));
    std::fs::create_dir_all(&out).map_err(|e| CliError::io(&out.display().to_string(), e))?;

    let names: Vec<String> = spec.run.iter().map(|r| r.name.clone()).collect();
    for c in &spec.check {
        checks::validate(c, &names, &HEADER).map_err(|e| CliError::input(format!("{}: {e}", spec_path.display())))?;
    }
    for c in spec.columns.iter().flatten() {
        if !HEADER.contains(&c.as_str()) {
            return Err(CliError::input(format!(
                "{}: columns: no table column '{c}' (columns: {})",
                spec_path.display(),
                HEADER.join(", ")
            )));
        }
    }
    if let PlotSpec::Bars { metric } = &spec.plot {
        if !HEADER.contains(&metric.as_str()) {
            return Err(CliError::input(format!(
                "{}: plot.metric: no table column '{metric}' (columns: {})",
                spec_path.display(),
                HEADER.join(", ")
            )));
        }
    }
    // Load every scenario before running any, so a typo in the last one fails at once.
    let scenarios: Vec<aiccsim::Scenario> =
        spec.run.iter().map(|r| scenario_of(&dir, &spec, r)).collect::<Result<_, CliError>>()?;

    println!("{}", spec.title);
    let mut rows: Vec<(String, Results)> = Vec::new();
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
        let run_dir = out.join(slug(&r.name));
        results.write_dir(&run_dir).map_err(|e| CliError::io(&run_dir.display().to_string(), e))?;
        match (results.summary.stop_reason, check_ending(&results, &run_dir)) {
            // A stalled run is one of the experiment's results (its row shows it); the rest end
            // the experiment without a table.
            (StopReason::Stalled, Err(e)) => eprintln!("warning: {}: {}", r.name, e.message),
            (_, Err(e)) => return Err(e),
            (_, Ok(())) => {}
        }
        if let Some([from, to]) = spec.links.iter().find(|l| link_index(&results, l).is_none()) {
            return Err(CliError::input(format!(
                "{}: links: no link from {from} to {to} in run '{}' (name a switch and the node at the other end of one of its ports, as ports.csv does)",
                spec_path.display(),
                r.name
            )));
        }
        rows.push((r.name.clone(), results));
    }

    let table = table(&rows, &spec.plot, &spec.links);
    let table_path = out.join("table.csv");
    let shown = table_path.display().to_string();
    std::fs::write(&table_path, to_csv(&table).map_err(|e| CliError::io(&shown, e))?)
        .map_err(|e| CliError::io(&shown, e))?;
    let shown = table_print::shown_columns(&table.header, &table.rows, &spec.printed_columns());
    print!("{}", table_print::render(&table.header, &table.rows, &shown, table_print::WIDTH));
    println!("({} of the table's {} columns; all are in {})", shown.len(), HEADER.len(), table_path.display());
    // What the experiment is, for the report's index page (its title, not its folder's name).
    let about = serde_json::json!({ "id": id, "title": spec.title });
    let about_path = out.join("experiment.json");
    std::fs::write(&about_path, format!("{about:#}\n"))
        .map_err(|e| CliError::io(&about_path.display().to_string(), e))?;

    let plot_path = out.join("plot.svg");
    let (series, x, y) = match spec.plot {
        PlotSpec::Queue { switch, port } => (
            rows.iter()
                .map(|(name, r)| Series { name: name.clone(), points: queue_series(r, switch, port) })
                .collect::<Vec<_>>(),
            "time (µs)",
            format!("queue at switch {switch} port {port} (KB)"),
        ),
        PlotSpec::Throughput { ref flows, .. } => (
            rows.iter()
                .flat_map(|(name, r)| {
                    flows.iter().map(move |&f| {
                        // Averaged over ten samples: one sample holds a whole number of packets,
                        // which makes a line-rate flow flicker between two values.
                        let samples: Vec<(f64, f64)> = r
                            .rates
                            .iter()
                            .filter(|s| s.flow == f)
                            .map(|s| (s.time.as_us_f64(), s.throughput_bps / 1e9))
                            .collect();
                        let points = samples
                            .chunks(10)
                            .map(|c| (c[c.len() - 1].0, c.iter().map(|p| p.1).sum::<f64>() / c.len() as f64))
                            .collect();
                        Series { name: format!("{name}: flow {f}"), points }
                    })
                })
                .collect(),
            "time (µs)",
            "throughput (Gbit/s)".to_string(),
        ),
        PlotSpec::FctCdf {} | PlotSpec::Bars { .. } | PlotSpec::Iterations {} => (
            rows.iter()
                .map(|(name, r)| {
                    let mut f: Vec<f64> = r.flows.iter().filter_map(|f| f.fct()).map(|t| t.as_us_f64()).collect();
                    f.sort_by(f64::total_cmp);
                    let n = f.len() as f64;
                    Series {
                        name: name.clone(),
                        points: f.iter().enumerate().map(|(i, &v)| (v, (i + 1) as f64 / n)).collect(),
                    }
                })
                .collect(),
            "flow completion time (µs)",
            "fraction of flows finished (0 to 1)".to_string(),
        ),
    };
    match &spec.plot {
        PlotSpec::Bars { metric } => {
            let col = HEADER.iter().position(|h| h == metric).expect("validated above");
            let bars: Vec<(String, f64)> =
                table.rows.iter().map(|r| (r[0].clone(), r[col].parse().unwrap_or(0.0))).collect();
            plot::bars(&plot_path, &spec.title, &metric_label(metric), &bars)
        }
        PlotSpec::Iterations {} => {
            let col = |name: &str| HEADER.iter().position(|h| *h == name).expect("a column of the table");
            let (total, exposed) = (col("mean_iteration_us"), col("mean_exposed_comm_us"));
            let bars: Vec<(String, Vec<f64>)> = (table.rows.iter())
                .map(|r| {
                    let (t, e) = (r[total].parse().unwrap_or(0.0), r[exposed].parse().unwrap_or(0.0));
                    (r[0].clone(), vec![t - e, e])
                })
                .collect();
            plot::stacked_bars(
                &plot_path,
                &spec.title,
                "mean iteration time (µs)",
                &["compute", "exposed communication"],
                &bars,
            )
        }
        _ => plot::lines(&plot_path, &spec.title, x, &y, &series),
    }
    .map_err(|e| CliError::io("plotting", e))?;
    println!("table: {}\nplot:  {}", table_path.display(), plot_path.display());

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

/// The queue of one port at every sample time of the run as (us, KB): `queues.csv` leaves out
/// samples where the queue stayed empty, so those are put back as zeros.
fn queue_series(r: &Results, switch: u32, port: u32) -> Vec<(f64, f64)> {
    let Some(iv) = r.scenario.output.sample_interval else { return Vec::new() };
    let end = r.summary.simulated_time_ns.0;
    let recorded: std::collections::BTreeMap<u64, u64> =
        r.queues.iter().filter(|q| q.switch == switch && q.port == port).map(|q| (q.time.0, q.bytes)).collect();
    (0..=end / iv.0)
        .map(|i| {
            let t = i * iv.0;
            (t as f64 / 1e6, recorded.get(&t).copied().unwrap_or(0) as f64 / 1e3)
        })
        .collect()
}

/// Microseconds from the moment flow `f` is alone again (the last of the flows that finished
/// before it) until a five-sample window of its throughput first averages 95% of what it carried
/// alone before any other flow started: infinite if it never does before it ends, `None` if it
/// never was alone or never shared.
fn recovery_time(r: &Results, f: u32) -> Option<f64> {
    const WINDOW: usize = 5;
    let iv = r.scenario.output.sample_interval?;
    let flow = r.flows.get(f as usize)?;
    let own_finish = flow.finish?;
    let others = || r.flows.iter().filter(|o| o.flow_id != f);
    let first_other_start = others().map(|o| o.start).min()?;
    let alone_from = others().filter_map(|o| o.finish).filter(|&t| t < own_finish).max()?;
    let own = |from: aiccsim::time::SimTime, to: aiccsim::time::SimTime| -> Vec<(aiccsim::time::SimTime, f64)> {
        r.rates
            .iter()
            .filter(|s| s.flow == f && s.time > from && s.time <= to)
            .map(|s| (s.time, s.throughput_bps))
            .collect()
    };
    // Alone at first: skip the first fifth (start-up) of that phase.
    let before = own(flow.start, first_other_start);
    let steady = &before[before.len() / 5..];
    if steady.len() < WINDOW {
        return None;
    }
    let alone_rate = steady.iter().map(|s| s.1).sum::<f64>() / steady.len() as f64;
    let after = own(alone_from, own_finish);
    let found = after.windows(WINDOW).find(|w| w.iter().map(|s| s.1).sum::<f64>() / WINDOW as f64 >= 0.95 * alone_rate);
    Some(match found {
        // The window's first sample covers the interval before its time.
        Some(w) => (w[0].0.saturating_sub(iv).max(alone_from) - alone_from).as_us_f64(),
        None => f64::INFINITY,
    })
}

/// The lowest Jain's index over segments of length `len` (each from `settle` after its start),
/// of the mean throughput of every flow sampled throughout the window; segments with fewer than
/// two such flows are skipped.
fn min_segment_jain(r: &Results, len: aiccsim::time::SimTime, settle: aiccsim::time::SimTime) -> Option<f64> {
    use std::collections::BTreeMap;
    let iv = r.scenario.output.sample_interval?.0;
    let end = r.rates.iter().map(|s| s.time.0).max()?;
    let mut worst: Option<f64> = None;
    let mut from = 0;
    while from < end {
        let (lo, hi) = (from + settle.0, from + len.0);
        let expected = (hi - lo) / iv;
        let mut sums: BTreeMap<u32, (f64, u64)> = BTreeMap::new();
        for s in r.rates.iter().filter(|s| s.time.0 > lo && s.time.0 <= hi) {
            let e = sums.entry(s.flow).or_default();
            e.0 += s.throughput_bps;
            e.1 += 1;
        }
        // Only flows active over the whole window (not starting or ending inside it).
        let means: Vec<f64> = sums.values().filter(|(_, n)| *n + 1 >= expected).map(|(t, n)| t / *n as f64).collect();
        if means.len() >= 2 {
            let j = jain_index(&means);
            worst = Some(worst.map_or(j, |w: f64| w.min(j)));
        }
        from += len.0;
    }
    worst
}

/// The row of `ports.csv` (the index among all ports) of the port of `from` facing `to`.
fn link_index(r: &Results, [from, to]: &[String; 2]) -> Option<usize> {
    r.ports.iter().position(|p| &p.node == from && &p.peer == to)
}

/// Each link's utilisation over the whole run, in %: the bytes it sent over what it could carry
/// from the start to the completion, at its speed at the end (a link slowed by `[[events]]` at
/// the start counts at its slowed speed).
fn link_utilisations(r: &Results, links: &[[String; 2]]) -> Vec<f64> {
    let Some(end) = r.summary.completion_time_ns.filter(|&t| t > SimTime::ZERO) else { return Vec::new() };
    links
        .iter()
        .filter_map(|l| link_index(r, l))
        .map(|i| {
            let port = &r.ports[i];
            let speed =
                r.speed_changes.iter().rev().find(|c| c.port as usize == i).map_or(port.bandwidth, |c| c.bandwidth);
            port.stats.tx_bytes as f64 * 8.0 / (speed.as_f64() * end.as_secs_f64()) * 100.0
        })
        .collect()
}

/// The highest bus bandwidth the run's one collective could reach on its topology, bits/s: its
/// bus bandwidth if it took only as long as its busiest host link (a NIC, or a GPU's NVLink
/// port) needs to send or receive the wire bytes of the flows through it, every link at full
/// speed from the start. It leaves out the fabric (exact for a non-blocking one), the paths'
/// delays, the order the algorithm imposes and the ACKs, so no run exceeds it.
fn busbw_bound(r: &Results) -> Option<f64> {
    let [one] = r.collectives.as_slice() else { return None };
    let (mtu, header) = (r.scenario.nic.mtu.0, r.scenario.nic.header.0);
    let speed: std::collections::BTreeMap<&str, f64> =
        r.ports.iter().filter(|p| !p.node.starts_with('s')).map(|p| (p.node.as_str(), p.bandwidth.as_f64())).collect();
    // Seconds each host link (by name) is busy sending, and receiving.
    let mut busy: std::collections::BTreeMap<(String, bool), f64> = Default::default();
    for f in r.flows.iter().filter(|f| f.collective.as_ref() == one.info.name().as_str()) {
        let wire = (f.size_bytes + f.size_bytes.div_ceil(mtu) * header) as f64 * 8.0;
        let prefix = if f.nvlink { "nvl" } else { "h" };
        for (host, sending) in [(f.src, true), (f.dst, false)] {
            let name = format!("{prefix}{host}");
            let bw = *speed.get(name.as_str())?;
            *busy.entry((name, sending)).or_default() += wire / bw;
        }
    }
    let least_time = busy.values().copied().fold(0.0, f64::max);
    (least_time > 0.0).then(|| one.info.size as f64 * 8.0 / least_time * one.info.bus_factor())
}

/// The mean bus bandwidth of the run's collectives, bits/s.
fn mean_busbw(r: &Results) -> Option<f64> {
    let all: Vec<f64> = r.collectives.iter().filter_map(|c| c.busbw_bps()).collect();
    (!all.is_empty()).then(|| all.iter().sum::<f64>() / all.len() as f64)
}

/// What a sender's link carries of payload at full speed, bits/s: the slowest host link's speed
/// less the share of the data packets' headers (`nic.mtu` over `nic.mtu` + `nic.header`).
fn payload_line_rate(r: &Results) -> Option<f64> {
    let host_link = r.ports.iter().filter(|p| p.node.starts_with('h') || p.peer.starts_with('h'));
    let line = host_link.map(|p| p.bandwidth.as_f64()).min_by(f64::total_cmp)?;
    let (mtu, header) = (r.scenario.nic.mtu.0 as f64, r.scenario.nic.header.0 as f64);
    Some(line * mtu / (mtu + header))
}

fn slug(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect()
}

struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

/// The table's columns (the names `[[check]]` and bar plots refer to).
const HEADER: [&str; 31] = [
    "scheme",
    "flows",
    "finished",
    "completion_us",
    "goodput_gbps",
    "max_fct_us",
    "mean_fct_us",
    "p99_fct_us",
    "max_slowdown",
    "p99_slowdown",
    "pause_frames",
    "drops",
    "ecn_marks",
    "cnps",
    "max_queue_kb",
    "mean_queue_kb",
    "header_overhead_pct",
    "mean_rtt_us",
    "mean_queuing_us",
    "p99_queuing_us",
    "recovery_us",
    "jain_steady",
    "min_jain",
    "mean_iteration_us",
    "mean_exposed_comm_us",
    "busbw_gbps",
    "busbw_bound_gbps",
    "mean_busbw_gbps",
    "line_rate_pct",
    "min_link_util_pct",
    "mean_link_util_pct",
];

/// The axis label of a bar plot of a table column: what it measures, in words, and its unit.
fn metric_label(column: &str) -> String {
    let (what, unit) = match column {
        "flows" => ("flows", "count"),
        "finished" => ("flows finished", "count"),
        "completion_us" => ("completion time", "µs"),
        "goodput_gbps" => ("goodput", "Gbit/s"),
        "max_fct_us" => ("max FCT", "µs"),
        "mean_fct_us" => ("mean FCT", "µs"),
        "p99_fct_us" => ("p99 FCT", "µs"),
        "max_slowdown" => ("max slowdown", "FCT / ideal FCT"),
        "p99_slowdown" => ("p99 slowdown", "FCT / ideal FCT"),
        "pause_frames" => ("PAUSE frames", "count"),
        "drops" => ("packets dropped", "count"),
        "ecn_marks" => ("ECN marks", "count"),
        "cnps" => ("CNPs", "count"),
        "max_queue_kb" => ("max switch queue", "KB"),
        "mean_queue_kb" => ("mean switch queue", "KB"),
        "header_overhead_pct" => ("header overhead", "%"),
        "mean_rtt_us" => ("mean RTT", "µs"),
        "mean_queuing_us" => ("mean queuing delay", "µs"),
        "p99_queuing_us" => ("p99 queuing delay", "µs"),
        "recovery_us" => ("recovery time", "µs"),
        "jain_steady" => ("Jain's fairness index, steady state", "0 to 1"),
        "min_jain" => ("min Jain's fairness index", "0 to 1"),
        "mean_iteration_us" => ("mean iteration time", "µs"),
        "mean_exposed_comm_us" => ("mean exposed communication", "µs"),
        "busbw_gbps" => ("bus bandwidth", "Gbit/s"),
        "busbw_bound_gbps" => ("bus bandwidth bound of the topology", "Gbit/s"),
        "mean_busbw_gbps" => ("mean bus bandwidth of the collectives", "Gbit/s"),
        "line_rate_pct" => ("mean bus bandwidth, of the payload line rate", "%"),
        "min_link_util_pct" => ("lowest utilisation of the listed links", "%"),
        "mean_link_util_pct" => ("mean utilisation of the listed links", "%"),
        other => return other.to_string(),
    };
    format!("{what} ({unit})")
}

fn table(rows: &[(String, Results)], plot: &PlotSpec, links: &[[String; 2]]) -> Table {
    let header = HEADER.to_vec();
    let rows = rows
        .iter()
        .map(|(name, r)| {
            let s = &r.summary;
            let mean_queue = match plot {
                PlotSpec::Queue { switch, port } => {
                    let pts = queue_series(r, *switch, *port);
                    if pts.is_empty() {
                        String::new()
                    } else {
                        format!("{:.1}", pts.iter().map(|p| p.1).sum::<f64>() / pts.len() as f64)
                    }
                }
                _ => String::new(),
            };
            let recovery = match plot {
                PlotSpec::Throughput { recovery_of: Some(f), .. } => {
                    recovery_time(r, *f).map(|t| format!("{t:.2}")).unwrap_or_default()
                }
                _ => String::new(),
            };
            let utilisation = link_utilisations(r, links);
            let collectives_busbw = mean_busbw(r);
            let jain = r.steady_throughputs().map(|t| format!("{:.4}", jain_index(&t))).unwrap_or_default();
            let min_jain = match plot {
                PlotSpec::Throughput { segments: Some(len), settle, .. } => {
                    min_segment_jain(r, *len, *settle).map(|j| format!("{j:.4}")).unwrap_or_default()
                }
                _ => String::new(),
            };
            vec![
                name.clone(),
                s.flows.to_string(),
                s.flows_finished.to_string(),
                s.completion_time_ns.map(|t| format!("{:.1}", t.as_us_f64())).unwrap_or_default(),
                s.completion_time_ns
                    .filter(|&t| t > SimTime::ZERO)
                    .map(|t| format!("{:.2}", s.bytes as f64 * 8.0 / t.as_ns_f64()))
                    .unwrap_or_default(),
                format!("{:.1}", s.fct_ns.max.as_us_f64()),
                format!("{:.1}", s.fct_ns.mean.as_us_f64()),
                format!("{:.1}", s.fct_ns.p99.as_us_f64()),
                format!("{:.3}", s.slowdown.max),
                format!("{:.3}", s.slowdown.p99),
                s.pause_frames.to_string(),
                s.packets_dropped.to_string(),
                s.ecn_marks.to_string(),
                s.cnps.to_string(),
                format!("{:.1}", s.max_switch_queue_bytes as f64 / 1e3),
                mean_queue,
                format!("{:.2}", s.telemetry.header_overhead * 100.0),
                sampled_us(&s.rtt_ns, s.rtt_ns.mean),
                sampled_us(&s.queuing_delay_ns, s.queuing_delay_ns.mean),
                sampled_us(&s.queuing_delay_ns, s.queuing_delay_ns.p99),
                recovery,
                jain,
                min_jain,
                iteration_us(s.iterations.as_ref().and_then(|i| i.mean_duration_ns)),
                iteration_us(s.iterations.as_ref().and_then(|i| i.mean_exposed_comm_ns)),
                match r.collectives.as_slice() {
                    [one] => one.busbw_bps().map(|b| format!("{:.2}", b / 1e9)).unwrap_or_default(),
                    _ => String::new(),
                },
                busbw_bound(r).map(|b| format!("{:.2}", b / 1e9)).unwrap_or_default(),
                collectives_busbw.map(|b| format!("{:.2}", b / 1e9)).unwrap_or_default(),
                collectives_busbw
                    .zip(payload_line_rate(r))
                    .map(|(b, l)| format!("{:.1}", b / l * 100.0))
                    .unwrap_or_default(),
                utilisation.iter().copied().min_by(f64::total_cmp).map(|u| format!("{u:.1}")).unwrap_or_default(),
                if utilisation.is_empty() {
                    String::new()
                } else {
                    format!("{:.1}", utilisation.iter().sum::<f64>() / utilisation.len() as f64)
                },
            ]
        })
        .collect();
    Table { header, rows }
}

/// A statistic of a delay distribution in us with two decimals; empty when it has no samples
/// (a warm-up past the end of the run), rather than a misleading 0.
fn sampled_us(d: &TimeDistribution, t: SimTime) -> String {
    if d.count == 0 {
        String::new()
    } else {
        format!("{:.2}", t.as_us_f64())
    }
}

/// A training workload's mean per finished iteration, in us with one decimal; empty otherwise.
fn iteration_us(t: Option<SimTime>) -> String {
    t.map(|t| format!("{:.1}", t.as_us_f64())).unwrap_or_default()
}

/// The table as CSV; a run name with a comma or a quote in it is quoted.
fn to_csv(t: &Table) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&t.header)?;
    for r in &t.rows {
        w.write_record(r)?;
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_a_bar_plot_can_show_has_a_label_with_its_unit() {
        for column in &HEADER[1..] {
            let label = metric_label(column);
            assert!(label.ends_with(')') && label.contains(" ("), "{column}: {label}");
        }
        assert_eq!(metric_label("mean_rtt_us"), "mean RTT (µs)");
    }
}
