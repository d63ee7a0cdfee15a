//! `aiccsim._native`: the Rust half of the `aiccsim` Python package (python/aiccsim/).
//!
//! It runs scenarios with the GIL released, hands result tables over as Arrow buffers, and
//! offers the `aiccsim` command line. Everything a user touches is wrapped in Python; this
//! module stays small and typed by `python/aiccsim/_native.pyi`.

mod algorithm;
mod cli;
mod columns;
mod derived;
mod errors;
mod ns3;
mod result;
mod run;
mod scenario;
mod tables;
mod watchdog;

use pyo3::prelude::*;

/// Every result table's columns as the engine writes them: (table, [(column, kind, nullable,
/// decimals)]), kind "int", "float" or "str" (`aiccsim::metrics::tables`).
#[pyfunction]
fn table_schemas() -> Vec<(&'static str, Vec<tables::ColumnSchema>)> {
    tables::schemas()
}

/// Every workload kind's example, as the registry lists them: (kind, a `[workload]` table in
/// TOML). The tests hold the scenario builders to them.
#[pyfunction]
fn workload_examples() -> Vec<(&'static str, &'static str)> {
    aiccsim::config::WorkloadConfig::examples()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run::run, m)?)?;
    m.add_function(wrap_pyfunction!(cli::cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(ns3::import_ns3, m)?)?;
    m.add_function(wrap_pyfunction!(table_schemas, m)?)?;
    m.add_function(wrap_pyfunction!(workload_examples, m)?)?;
    m.add_function(wrap_pyfunction!(algorithm::nic_events, m)?)?;
    m.add_class::<result::NativeResult>()?;
    m.add_class::<derived::Derived>()?;
    m.add_function(wrap_pyfunction!(derived::experiment_columns, m)?)?;
    m.add_function(wrap_pyfunction!(derived::slug, m)?)?;
    m.add("ScenarioError", m.py().get_type::<errors::ScenarioError>())?;
    m.add("AlgorithmError", m.py().get_type::<errors::AlgorithmError>())?;
    m.add_class::<algorithm::Flow>()?;
    m.add_class::<algorithm::Ack>()?;
    m.add_class::<algorithm::Probe>()?;
    m.add_class::<algorithm::Message>()?;
    // Scenarios may name `algorithm = "python"` from here on, in this process.
    algorithm::register();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
