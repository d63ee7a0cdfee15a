//! The result tables as columns: the tables, columns and cells of `aiccsim::metrics::tables`,
//! which the CSV files of `aiccsim run` are written from too. An empty cell there is a missing
//! value here.

use crate::columns::Column;
use aiccsim::metrics::tables::{Kind, Table, Value, TABLES};
use aiccsim::time::SimTime;
use aiccsim::Results;

/// Nanoseconds, as the CSV files write them: the double nearest to the exact three-decimal
/// value, which is what reading the file gives too.
fn ns(t: SimTime) -> f64 {
    t.0 as f64 / 1000.0
}

/// The CSV files round these ratios to six decimals; reading the text back gives the same value
/// as reading the file.
fn six_decimals(x: f64) -> f64 {
    format!("{x:.6}").parse().expect("a formatted float parses")
}

/// One column's values as they are gathered, row by row.
enum Cells {
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
}

impl Cells {
    fn push(&mut self, v: &Value<'_>) {
        match (self, v) {
            (Cells::Int(c), Value::Int(i)) => c.push(Some(*i as i64)),
            (Cells::Float(c), Value::Time(t)) => c.push(Some(ns(*t))),
            (Cells::Float(c), Value::Ratio(x)) => c.push(Some(six_decimals(*x))),
            (Cells::Text(c), Value::Text(s)) => c.push(Some(s.to_string())),
            (Cells::Int(c), Value::Missing) => c.push(None),
            (Cells::Float(c), Value::Missing) => c.push(None),
            (Cells::Text(c), Value::Missing) => c.push(None),
            (_, v) => unreachable!("a cell {v:?} of the wrong kind for its column"),
        }
    }

    fn into_column(self, name: &'static str, nullable: bool) -> Column {
        match (self, nullable) {
            (Cells::Int(c), true) => Column::int_opt(name, c.into_iter()),
            (Cells::Int(c), false) => Column::int(name, c.into_iter().map(|x| x.expect("not nullable"))),
            (Cells::Float(c), true) => Column::float_opt(name, c.into_iter()),
            (Cells::Float(c), false) => Column::float(name, c.into_iter().map(|x| x.expect("not nullable"))),
            (Cells::Text(c), true) => Column::str_opt(name, c.into_iter()),
            (Cells::Text(c), false) => Column::str(name, c.into_iter().map(|x| x.expect("not nullable"))),
        }
    }
}

/// The table called `name`; `None` for a table the run did not record (timelines or trace off,
/// no training workload), as no file is written then.
pub fn table(r: &Results, name: &str) -> Option<Vec<Column>> {
    let table: &Table = TABLES.iter().find(|t| t.name == name)?;
    if !r.has_table(table) {
        return None;
    }
    let mut columns: Vec<Cells> = (table.columns.iter())
        .map(|c| match c.kind {
            Kind::Int => Cells::Int(Vec::new()),
            Kind::Time | Kind::Ratio => Cells::Float(Vec::new()),
            Kind::Text => Cells::Text(Vec::new()),
        })
        .collect();
    r.for_each_row(table, &mut |cells| {
        for (column, cell) in columns.iter_mut().zip(cells) {
            column.push(cell);
        }
    });
    Some(columns.into_iter().zip(table.columns).map(|(cells, c)| cells.into_column(c.name, c.nullable)).collect())
}

/// The tables' names.
pub fn names() -> Vec<&'static str> {
    TABLES.iter().map(|t| t.name).collect()
}

/// A column for Python: (name, kind "int", "float" or "str", nullable, decimals in the CSV).
pub type ColumnSchema = (&'static str, &'static str, bool, u8);

/// Every table's description for `python/aiccsim/_schema.py`: (table, its columns).
pub fn schemas() -> Vec<(&'static str, Vec<ColumnSchema>)> {
    TABLES
        .iter()
        .map(|t| {
            let columns = (t.columns.iter())
                .map(|c| {
                    let kind = match c.kind {
                        Kind::Int => "int",
                        Kind::Time | Kind::Ratio => "float",
                        Kind::Text => "str",
                    };
                    (c.name, kind, c.nullable, c.kind.decimals())
                })
                .collect();
            (t.name, columns)
        })
        .collect()
}
