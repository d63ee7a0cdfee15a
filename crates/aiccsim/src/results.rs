//! Writes a run's results into a folder: `flows.csv`, `summary.json`, `ports.csv`, `run.json`,
//! with timelines on, `queues.csv`, `rates.csv` and `pauses.csv`, with a trace, `trace.csv`, and
//! with a `training` workload, `iterations.csv`.
//!
//! The tables' columns and cells come from `metrics/tables.rs`. Times are written in nanoseconds
//! with three decimals (exact picoseconds), so files are byte-identical for the same scenario
//! and seed. Each file is written to a temporary name and
//! renamed into place, so a crash never leaves a half-written file behind.

use crate::metrics::tables::{Table, Value, TABLES};
use crate::metrics::Results;
use crate::time::SimTime;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// "1234.567" for 1234567 ps.
pub fn ns(t: SimTime) -> String {
    format!("{}.{:03}", t.0 / 1000, t.0 % 1000)
}

fn atomic_write(dir: &Path, name: &str, body: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    {
        let mut w = io::BufWriter::new(fs::File::create(&tmp)?);
        body(&mut w)?;
        w.flush()?;
    }
    fs::rename(&tmp, dir.join(name))
}

/// A cell as the CSV files write it: times in ns with three decimals, ratios with six, an empty
/// string for a missing value.
fn cell(v: &Value<'_>) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Time(t) => ns(*t),
        Value::Ratio(x) => format!("{x:.6}"),
        Value::Text(s) => s.to_string(),
        Value::Missing => String::new(),
    }
}

fn csv_err(e: csv::Error) -> io::Error {
    io::Error::other(e)
}

/// Names of the files a run writes into its folder (the tables, also as `aiccsim parquet`
/// writes them, `summary.json`, `run.json`).
pub fn result_file_names() -> impl Iterator<Item = String> {
    (TABLES.iter())
        .flat_map(|t| [format!("{}.csv", t.name), format!("{}.parquet", t.name)])
        .chain(["summary.json".to_string(), "run.json".to_string()])
}

/// Creates `dir` if needed and removes from it the result files of an earlier run; no other
/// file is touched. An error of kind `NotADirectory` if `dir` is a file.
pub fn clear_results(dir: &Path) -> io::Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            "a file is there, not a folder; give a folder (it is created if missing)",
        ));
    }
    fs::create_dir_all(dir)?;
    for name in result_file_names() {
        match fs::remove_file(dir.join(&name)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

impl Results {
    /// `summary.json` without the wall-clock `performance` block: identical across repeated runs.
    pub fn deterministic_summary(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(&self.summary).expect("summary serialises");
        v.as_object_mut().map(|o| o.remove("performance"));
        v
    }

    /// Writes `table` as CSV: the header from its description, then one line per row.
    pub fn write_table(&self, table: &Table, w: &mut dyn Write) -> io::Result<()> {
        let mut c = csv::Writer::from_writer(w);
        c.write_record(table.columns.iter().map(|col| col.name)).map_err(csv_err)?;
        let mut result = Ok(());
        let mut line: Vec<String> = Vec::with_capacity(table.columns.len());
        self.for_each_row(table, &mut |cells| {
            if result.is_err() {
                return;
            }
            line.clear();
            line.extend(cells.iter().map(cell));
            result = c.write_record(&line);
        });
        result.map_err(csv_err)?;
        c.flush()
    }

    /// The text of `summary.json`. The Python package writes it next to Parquet tables, so the
    /// two kinds of results folder share it byte for byte.
    pub fn summary_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.summary).expect("summary serialises");
        text.push('\n');
        text
    }

    /// The text of `run.json`: what was run (version, seed, the resolved scenario).
    pub fn run_json(&self) -> String {
        let run = serde_json::json!({
            "aiccsim_version": env!("CARGO_PKG_VERSION"),
            "seed": self.scenario.simulation.seed,
            "scenario": self.scenario,
        });
        let mut text = serde_json::to_string_pretty(&run).expect("run.json serialises");
        text.push('\n');
        text
    }

    /// Writes every result file into `dir` (created if needed), after removing the result files
    /// an earlier run left there, so that no table of another run stands beside these.
    pub fn write_dir(&self, dir: &Path) -> io::Result<()> {
        clear_results(dir)?;
        for table in TABLES.iter().filter(|t| self.has_table(t)) {
            atomic_write(dir, &format!("{}.csv", table.name), |w| self.write_table(table, w))?;
        }
        atomic_write(dir, "summary.json", |w| w.write_all(self.summary_json().as_bytes()))?;
        atomic_write(dir, "run.json", |w| w.write_all(self.run_json().as_bytes()))?;
        Ok(())
    }
}
