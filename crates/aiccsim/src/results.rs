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
use std::time::Instant;

/// The tables whose size follows how long the run went on (samples, pause events, packets),
/// not the scenario's flows and ports: a writing deadline cuts these short.
pub const CUT_AT_DEADLINE: [&str; 6] = ["queues", "links", "rates", "cc_state", "pauses", "trace"];

/// Rows written between two looks at the clock while a deadline holds (a clock read costs
/// about as much as formatting one row).
const ROWS_PER_CHECK: u32 = 4096;

/// "1234.567" for 1234567 ps.
pub fn ns(t: SimTime) -> String {
    format!("{}.{:03}", t.0 / 1000, t.0 % 1000)
}

fn atomic_write(dir: &Path, name: &str, body: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let tmp = dir.join(tmp_name(name));
    {
        let mut w = io::BufWriter::new(fs::File::create(&tmp)?);
        body(&mut w)?;
        w.flush()?;
    }
    fs::rename(&tmp, dir.join(name))
}

/// Appends a cell as the CSV files write it: times in ns with three decimals, ratios with six,
/// nothing for a missing value, text quoted only where it holds a comma, a quote or a line
/// break (as the csv crate's `QuoteStyle::Necessary` does). Formatting straight into one line
/// buffer is what lets a stopped run of two million flows write its `flows.csv` within its
/// second: a `String` per cell through the csv crate took three times as long.
fn push_cell(line: &mut Vec<u8>, v: &Value<'_>) {
    let mut digits = itoa::Buffer::new();
    match v {
        Value::Int(i) => match i64::try_from(*i) {
            Ok(small) => line.extend_from_slice(digits.format(small).as_bytes()),
            Err(_) => line.extend_from_slice(digits.format(*i).as_bytes()),
        },
        Value::Time(t) => {
            line.extend_from_slice(digits.format(t.0 / 1000).as_bytes());
            let ps = t.0 % 1000;
            let digit = |d: u64| b'0' + d as u8;
            line.extend_from_slice(&[b'.', digit(ps / 100), digit(ps / 10 % 10), digit(ps % 10)]);
        }
        Value::Ratio(x) => {
            use std::io::Write as _;
            write!(line, "{x:.6}").expect("writing into a Vec cannot fail");
        }
        Value::Text(s) => push_text(line, s),
        Value::Missing => {}
    }
}

fn push_text(line: &mut Vec<u8>, s: &str) {
    if !s.bytes().any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r')) {
        line.extend_from_slice(s.as_bytes());
        return;
    }
    line.push(b'"');
    for b in s.bytes() {
        if b == b'"' {
            line.push(b'"');
        }
        line.push(b);
    }
    line.push(b'"');
}

/// Names of the files a run writes into its folder (the tables, also as `aiccsim parquet`
/// writes them, `summary.json`, `run.json`).
pub fn result_file_names() -> impl Iterator<Item = String> {
    (TABLES.iter())
        .flat_map(|t| [format!("{}.csv", t.name), format!("{}.parquet", t.name)])
        .chain(["summary.json".to_string(), "run.json".to_string()])
}

/// The temporary name a result file is written under before it is renamed into place.
fn tmp_name(name: &str) -> String {
    format!(".{name}.tmp")
}

/// Creates `dir` if needed and removes from it the result files of an earlier run, and the
/// temporary files of one killed while writing them (a trace's can be a gigabyte); no other
/// file is touched. An error of kind `NotADirectory` if `dir` is a file.
pub fn clear_results(dir: &Path) -> io::Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            "a file is there, not a folder; give a folder (it is created if missing)",
        ));
    }
    fs::create_dir_all(dir)?;
    for name in result_file_names().flat_map(|n| [tmp_name(&n), n]) {
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
        self.write_table_until(table, w, None).map(drop)
    }

    /// [`Results::write_table`], stopping at the first row after `deadline` (checked every few
    /// thousand rows): the file then holds the rows written so far, each whole. Returns whether
    /// it was cut short.
    fn write_table_until(&self, table: &Table, w: &mut dyn Write, deadline: Option<Instant>) -> io::Result<bool> {
        let mut line = Vec::with_capacity(256);
        for (i, col) in table.columns.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            push_text(&mut line, col.name);
        }
        line.push(b'\n');
        w.write_all(&line)?;
        let mut result = Ok(());
        let (mut rows, mut cut) = (0u32, false);
        self.for_each_row(table, &mut |cells| {
            if result.is_err() || cut {
                return;
            }
            if rows % ROWS_PER_CHECK == 0 {
                // Only bounds how long writing takes; what a row holds never depends on it.
                #[allow(clippy::disallowed_methods)]
                let late = deadline.is_some_and(|d| Instant::now() >= d);
                if late {
                    cut = true;
                    return;
                }
            }
            rows = rows.wrapping_add(1);
            line.clear();
            for (i, cell) in cells.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                push_cell(&mut line, cell);
            }
            line.push(b'\n');
            result = w.write_all(&line);
        });
        result.map(|()| cut)
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
        self.write_dir_until(dir, None).map(drop)
    }

    /// [`Results::write_dir`] that ends by `deadline` (a command's wall-clock limit): the tables
    /// whose size follows the run's length ([`CUT_AT_DEADLINE`]: timelines, pauses, the trace)
    /// are written after the others and stop at the deadline, each keeping the rows written
    /// by then; `summary.json` names them under `results_cut`. The tables bounded by the
    /// scenario (flows, ports, collectives, iterations, jobs) and the JSON files are always
    /// written whole. Returns the files cut short.
    pub fn write_dir_until(&self, dir: &Path, deadline: Option<Instant>) -> io::Result<Vec<String>> {
        clear_results(dir)?;
        let tables: Vec<&Table> = TABLES.iter().copied().filter(|t| self.has_table(t)).collect();
        let (later, first): (Vec<&Table>, Vec<&Table>) =
            tables.into_iter().partition(|t| CUT_AT_DEADLINE.contains(&t.name));
        let mut cut = Vec::new();
        for table in first {
            atomic_write(dir, &format!("{}.csv", table.name), |w| self.write_table(table, w))?;
        }
        for table in later {
            let name = format!("{}.csv", table.name);
            let mut was_cut = false;
            atomic_write(dir, &name, |w| {
                was_cut = self.write_table_until(table, w, deadline)?;
                Ok(())
            })?;
            if was_cut {
                cut.push(name);
            }
        }
        let summary = match cut.is_empty() {
            true => self.summary_json(),
            false => self.summary_json_cut(&cut),
        };
        atomic_write(dir, "summary.json", |w| w.write_all(summary.as_bytes()))?;
        atomic_write(dir, "run.json", |w| w.write_all(self.run_json().as_bytes()))?;
        Ok(cut)
    }

    /// `summary.json` of results whose files `cut` were cut short at a deadline: marked partial,
    /// with the files named (`results_cut`).
    fn summary_json_cut(&self, cut: &[String]) -> String {
        let mut v = serde_json::to_value(&self.summary).expect("summary serialises");
        if let Some(o) = v.as_object_mut() {
            o.insert("partial".into(), serde_json::Value::Bool(true));
            o.insert("results_cut".into(), serde_json::json!(cut));
        }
        let mut text = serde_json::to_string_pretty(&v).expect("summary serialises");
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    /// The hand-written cells read back as what was written, quoted exactly where the csv
    /// crate's own writer quotes (the files were written by it before).
    #[test]
    fn cells_are_the_csv_crates() {
        let texts = ["plain", "", "a,b", "say \"hi\"", "two\nlines", "cr\r", "ünïcode", " spaced "];
        let mut cells: Vec<Value<'_>> = texts.iter().map(|t| Value::Text(Cow::Borrowed(*t))).collect();
        cells.extend([
            Value::Int(0),
            Value::Int(-42),
            Value::Int(i64::MAX.into()),
            Value::Int(i128::from(u64::MAX) * 4),
            Value::Time(SimTime(0)),
            Value::Time(SimTime(7)),
            Value::Time(SimTime(1_234_567)),
            Value::Time(SimTime(u64::MAX)),
            Value::Ratio(1.0),
            Value::Ratio(2.0 / 3.0),
            Value::Missing,
        ]);
        let mut mine = Vec::new();
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                mine.push(b',');
            }
            push_cell(&mut mine, cell);
        }
        mine.push(b'\n');
        let mut theirs = csv::Writer::from_writer(Vec::new());
        let strings: Vec<String> = (cells.iter())
            .map(|c| match c {
                Value::Int(i) => i.to_string(),
                Value::Time(t) => ns(*t),
                Value::Ratio(x) => format!("{x:.6}"),
                Value::Text(s) => s.to_string(),
                Value::Missing => String::new(),
            })
            .collect();
        theirs.write_record(&strings).unwrap();
        let theirs = theirs.into_inner().unwrap();
        assert_eq!(String::from_utf8(mine).unwrap(), String::from_utf8(theirs).unwrap());
        assert_eq!(strings[8 + 3], (i128::from(u64::MAX) * 4).to_string());
        assert_eq!(strings[8 + 7], "18446744073709551.615");
    }
}
