//! `aiccsim reproduce ID`: runs the scenarios an experiment lists and writes its table and plot.
//!
//! An experiment is a folder `experiments/ID/` holding `experiment.toml`:
//! ```toml
//! title = "16-to-1 incast"
//! [[run]]
//! name = "DCQCN"
//! scenario = "dcqcn.toml"
//! [plot]
//! kind = "queue"      # queue of one switch port over time, one line per run
//! switch = 0
//! port = 0
//! ```

use crate::plot::{self, Series};
use crate::{load, run_with_progress, CliError};
use aiccsim::metrics::jain_index;
use aiccsim::Results;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Experiment {
    title: String,
    run: Vec<RunSpec>,
    plot: PlotSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunSpec {
    name: String,
    scenario: PathBuf,
}

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum PlotSpec {
    /// Egress queue of one switch port over time.
    Queue { switch: u32, port: u32 },
    /// CDF of flow completion times.
    FctCdf,
}

fn experiments_dir(given: Option<PathBuf>) -> PathBuf {
    if let Some(d) = given {
        return d;
    }
    let here = PathBuf::from("experiments");
    if here.is_dir() {
        return here;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments")
}

pub fn run(id: &str, out: Option<PathBuf>, experiments: Option<PathBuf>) -> Result<(), CliError> {
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

    println!("{}", spec.title);
    let mut rows: Vec<(String, Results)> = Vec::new();
    for r in &spec.run {
        let scenario = load(&dir.join(&r.scenario))?;
        let results = run_with_progress(&scenario, &r.name, false)?;
        let run_dir = out.join(slug(&r.name));
        results.write_dir(&run_dir).map_err(|e| CliError::io(&run_dir.display().to_string(), e))?;
        rows.push((r.name.clone(), results));
    }

    let table = table(&rows, &spec.plot);
    let table_path = out.join("table.csv");
    std::fs::write(&table_path, to_csv(&table)).map_err(|e| CliError::io(&table_path.display().to_string(), e))?;
    print_table(&table);

    let plot_path = out.join("plot.svg");
    let (series, x, y) = match spec.plot {
        PlotSpec::Queue { switch, port } => (
            rows.iter()
                .map(|(name, r)| Series { name: name.clone(), points: queue_series(r, switch, port) })
                .collect::<Vec<_>>(),
            "time (us)",
            format!("queue at switch {switch} port {port} (KB)"),
        ),
        PlotSpec::FctCdf => (
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
            "FCT (us)",
            "CDF".to_string(),
        ),
    };
    plot::lines(&plot_path, &spec.title, x, &y, &series).map_err(|e| CliError::io("plotting", e))?;
    println!("table: {}\nplot:  {}", table_path.display(), plot_path.display());
    Ok(())
}

/// The queue of one port at every sample time of the run as (us, KB): `queues.csv` leaves out
/// samples where the queue stayed empty, so those are put back as zeros.
fn queue_series(r: &Results, switch: u32, port: u32) -> Vec<(f64, f64)> {
    let Some(iv) = r.scenario.output.sample_interval else { return Vec::new() };
    let end = (r.summary.simulated_time_ns * 1e3) as u64;
    let recorded: std::collections::BTreeMap<u64, u64> =
        r.queues.iter().filter(|q| q.switch == switch && q.port == port).map(|q| (q.time.0, q.bytes)).collect();
    (0..=end / iv.0)
        .map(|i| {
            let t = i * iv.0;
            (t as f64 / 1e6, recorded.get(&t).copied().unwrap_or(0) as f64 / 1e3)
        })
        .collect()
}

fn slug(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect()
}

struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

fn table(rows: &[(String, Results)], plot: &PlotSpec) -> Table {
    let header = vec![
        "scheme",
        "flows",
        "finished",
        "max_fct_us",
        "mean_fct_us",
        "p99_fct_us",
        "max_slowdown",
        "pause_frames",
        "drops",
        "ecn_marks",
        "cnps",
        "max_queue_kb",
        "mean_queue_kb",
        "jain_steady",
    ];
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
                PlotSpec::FctCdf => String::new(),
            };
            let jain = r.steady_throughputs().map(|t| format!("{:.4}", jain_index(&t))).unwrap_or_default();
            vec![
                name.clone(),
                s.flows.to_string(),
                s.flows_finished.to_string(),
                format!("{:.1}", s.fct_ns.max / 1e3),
                format!("{:.1}", s.fct_ns.mean / 1e3),
                format!("{:.1}", s.fct_ns.p99 / 1e3),
                format!("{:.3}", s.slowdown.max),
                s.pause_frames.to_string(),
                s.packets_dropped.to_string(),
                s.ecn_marks.to_string(),
                s.cnps.to_string(),
                format!("{:.1}", s.max_switch_queue_bytes as f64 / 1e3),
                mean_queue,
                jain,
            ]
        })
        .collect();
    Table { header, rows }
}

fn to_csv(t: &Table) -> String {
    let mut s = t.header.join(",");
    s.push('\n');
    for r in &t.rows {
        s.push_str(&r.join(","));
        s.push('\n');
    }
    s
}

fn print_table(t: &Table) {
    let widths: Vec<usize> = (0..t.header.len())
        .map(|i| t.rows.iter().map(|r| r[i].len()).chain([t.header[i].len()]).max().unwrap_or(0))
        .collect();
    let line = |cells: Vec<&str>| {
        let parts: Vec<String> = cells.iter().zip(&widths).map(|(c, w)| format!("{c:>w$}")).collect();
        println!("{}", parts.join("  "));
    };
    line(t.header.clone());
    for r in &t.rows {
        line(r.iter().map(String::as_str).collect());
    }
}
