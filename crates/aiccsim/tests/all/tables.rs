//! The result tables' one description (`metrics/tables.rs`) holds: every row has a cell of the
//! column's kind in every column (empty only where the column is nullable), the CSV files carry
//! exactly its columns, and docs/results.md lists the same columns in the same order.

use crate::common;

use aiccsim::metrics::tables::{Kind, Table, Value, TABLES};
use std::path::PathBuf;

fn check_rows(r: &aiccsim::Results, table: &Table) -> usize {
    let mut rows = 0;
    r.for_each_row(table, &mut |cells| {
        rows += 1;
        assert_eq!(cells.len(), table.columns.len(), "{}: a row of {} cells", table.name, cells.len());
        for (c, v) in table.columns.iter().zip(cells) {
            let ok = match (c.kind, v) {
                (_, Value::Missing) => c.nullable,
                (Kind::Int, Value::Int(_)) | (Kind::Time, Value::Time(_)) | (Kind::Ratio, Value::Ratio(_)) => true,
                (Kind::Text, Value::Text(_)) => true,
                _ => false,
            };
            assert!(ok, "{}.{}: cell {v:?} for a {:?} column (nullable {})", table.name, c.name, c.kind, c.nullable);
        }
    });
    rows
}

#[test]
fn every_row_fits_its_table_and_the_csv_files_carry_its_columns() {
    // Timelines with PFC frames, a trace and a stopped run (empty cells) in one; training
    // iterations in another; jobs in a third; an algorithm's own state in a fourth; a skip in a
    // fifth.
    let incast = aiccsim::run(&common::scenario(&common::incast(
        8,
        "300KB",
        "none",
        "[switch]\nbuffer = \"1MB\"\n[output]\nsample_interval = \"5us\"\ntrace = { max_rows = 2000 }\n[simulation]\nstop_time = \"40us\"",
    )))
    .unwrap();
    let training = aiccsim::run(&common::scenario(
        &std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/training.toml"))
            .unwrap(),
    ))
    .unwrap();
    let jobs = aiccsim::run(&common::scenario(
        &std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/jobs.toml")).unwrap(),
    ))
    .unwrap();
    let cc_state = aiccsim::run(&common::scenario(&common::incast(
        4,
        "100KB",
        "dcqcn",
        "[output]\nsample_interval = \"5us\"\ncc_state = true",
    )))
    .unwrap();
    // A lone long flow that fast-forward skips (skips).
    let skipped = aiccsim::run(&common::scenario(&format!(
        "[simulation]\nfast_forward = true\n{}",
        common::star(2, "pfc_only", "kind = \"flows\"\nflows = [{ src = 1, dst = 0, size = \"20MB\" }]")
    )))
    .unwrap();
    let runs = [&incast, &training, &jobs, &cc_state, &skipped];
    let dir = std::env::temp_dir().join(format!("aiccsim-tables-{}", std::process::id()));
    for r in runs {
        let _ = std::fs::remove_dir_all(&dir);
        r.write_dir(&dir).unwrap();
        for table in TABLES {
            let file = dir.join(format!("{}.csv", table.name));
            assert_eq!(file.exists(), r.has_table(table), "{}", file.display());
            if !r.has_table(table) {
                continue;
            }
            let rows = check_rows(r, table);
            let text = std::fs::read_to_string(&file).unwrap();
            let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
            let columns: Vec<&str> = table.columns.iter().map(|c| c.name).collect();
            assert_eq!(header, columns, "{}", file.display());
            assert_eq!(text.lines().count(), rows + 1, "{}", file.display());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    for table in TABLES {
        let recorded = runs.iter().any(|r| r.has_table(table) && check_rows(r, table) > 0);
        assert!(recorded, "no run here has rows of {}: the test covers nothing of it", table.name);
    }
}

/// The columns docs/results.md lists for `NAME.csv`: the first cells of the first table under
/// its heading.
fn documented(docs: &str, name: &str) -> Vec<String> {
    let heading = format!("`{name}.csv`");
    let start = docs
        .lines()
        .position(|l| l.starts_with('#') && l.trim_start_matches('#').trim() == heading)
        .unwrap_or_else(|| panic!("docs/results.md has no heading {heading}"));
    let section = docs.lines().skip(start + 1).take_while(|l| !l.starts_with('#'));
    let table = section.skip_while(|l| !l.starts_with('|')).take_while(|l| l.starts_with('|'));
    // A row may name several columns: "`node`, `port`".
    table
        .filter_map(|l| l.split('|').nth(1))
        .filter_map(|cell| cell.trim().strip_prefix('`')?.strip_suffix('`'))
        .flat_map(|names| names.split("`, `").map(str::to_string))
        .collect()
}

#[test]
fn docs_list_every_column_of_every_table_in_order() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/results.md");
    let docs = std::fs::read_to_string(&path).unwrap();
    for table in TABLES {
        let columns: Vec<String> = table.columns.iter().map(|c| c.name.to_string()).collect();
        let listed = documented(&docs, table.name);
        let missing: Vec<&String> = columns.iter().filter(|c| !listed.contains(c)).collect();
        let extra: Vec<&String> = listed.iter().filter(|c| !columns.contains(c)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "docs/results.md, {}.csv: missing {missing:?}, not a column {extra:?}",
            table.name
        );
        assert_eq!(listed, columns, "docs/results.md, {}.csv: columns out of order", table.name);
    }
}

/// docs/results.md's Parquet section gives each table's Arrow schema on one row:
/// "| `rates` | `time_ns` double, `flow` int64, `window_bytes` int64?, ... |".
#[test]
fn docs_give_every_table_its_parquet_schema() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/results.md");
    let docs = std::fs::read_to_string(&path).unwrap();
    for table in TABLES {
        let start = format!("| `{}` | ", table.name);
        let row = docs
            .lines()
            .find(|l| l.starts_with(&start) && (l.contains(" double") || l.contains(" int64")))
            .unwrap_or_else(|| panic!("docs/results.md has no Parquet schema row for {}", table.name));
        let expected: Vec<String> = (table.columns.iter())
            .map(|c| {
                let ty = match c.kind {
                    Kind::Int => "int64",
                    Kind::Time | Kind::Ratio => "double",
                    Kind::Text => "string",
                };
                format!("`{}` {ty}{}", c.name, if c.nullable { "?" } else { "" })
            })
            .collect();
        let listed: Vec<String> =
            row[start.len()..].trim_end_matches('|').trim().split(", ").map(str::to_string).collect();
        assert_eq!(listed, expected, "docs/results.md, the Parquet schema of {}", table.name);
    }
}

/// summary.json's times are the engine's picoseconds written exactly. A flow that starts at
/// 2^53 + 1 ns (about 104 simulated days) has times no f64 holds to the picosecond; they used to be
/// written as 9.007199254740994e15.
#[test]
fn summary_json_writes_late_times_exactly() {
    let r = common::run(
        r#"
[topology]
kind = "star"
hosts = 2
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [ { src = 0, dst = 1, size = "1000B", start = "9007199254740993ns" } ]
"#,
    );
    let f = &r.flows[0];
    let json = r.summary_json();
    assert!(!json.contains("e15") && !json.contains("e+"), "{json}");
    let want = format!("\"completion_time_ns\": {},", aiccsim::metrics::json_time::ns_text(f.finish.unwrap()));
    assert!(json.contains(&want), "{want} not in {json}");
    // 2^53 + 1 ns plus the flow's 2.16768 us, to the picosecond.
    assert_eq!(want, "\"completion_time_ns\": 9007199254743160.68,");
}

/// docs/results.md's `table.csv` section lists the experiment table's columns, as
/// `metrics::tables::EXPERIMENT` describes them, in order; each has a unit in words.
#[test]
fn docs_list_the_experiment_tables_columns_in_order() {
    use aiccsim::metrics::tables::EXPERIMENT;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/results.md");
    let docs = std::fs::read_to_string(&path).unwrap();
    let columns: Vec<String> = EXPERIMENT.iter().map(|m| m.name.to_string()).collect();
    assert_eq!(documented(&docs, "table"), columns, "docs/results.md, table.csv");
    for m in &EXPERIMENT {
        assert!(!m.what.is_empty() && !m.unit.is_empty(), "{}: a label and a unit", m.name);
    }
}
