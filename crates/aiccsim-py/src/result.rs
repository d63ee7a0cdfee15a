//! The results of one run, kept in Rust until Python asks for a part of them.

use crate::columns::ColumnParts;
use crate::tables;
use aiccsim::Results;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::PathBuf;

#[pyclass(frozen, module = "aiccsim._native")]
pub struct NativeResult {
    pub results: Results,
}

#[pymethods]
impl NativeResult {
    /// The text of `summary.json`, byte for byte as `aiccsim run` writes it.
    fn summary_json(&self) -> String {
        self.results.summary_json()
    }

    /// The text of `run.json`: version, seed and the scenario with every default filled in.
    fn run_json(&self) -> String {
        self.results.run_json()
    }

    /// The columns of one table, or None if the run did not record it.
    fn table<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Option<Vec<ColumnParts<'py>>>> {
        let names = tables::names();
        if !names.contains(&name) {
            return Err(PyValueError::new_err(format!("no table {name:?}: one of {}", names.join(", "))));
        }
        let columns = tables::table(&self.results, name);
        Ok(columns.map(|cols| cols.into_iter().map(|c| c.into_python(py)).collect()))
    }

    /// Writes the result files into `dir`, as `aiccsim run --out DIR` does.
    fn write(&self, py: Python<'_>, dir: PathBuf) -> PyResult<()> {
        py.detach(|| self.results.write_dir(&dir))?;
        Ok(())
    }
}
