//! The results of one run, kept in Rust until Python asks for a part of them.

use crate::columns::ColumnParts;
use crate::tables;
use aiccsim::Results;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::time::{Duration, Instant};

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

    /// Writes the result files into `dir`, as `aiccsim run --out DIR` does. With `wall_limit`
    /// (seconds from now), the tables that grow with the run's length stop there, as
    /// `--max-wall` cuts them; returns the files cut short.
    #[pyo3(signature = (dir, wall_limit=None))]
    fn write(&self, py: Python<'_>, dir: PathBuf, wall_limit: Option<f64>) -> PyResult<Vec<String>> {
        let limit = match wall_limit {
            Some(s) if !(s.is_finite() && s >= 0.0) => {
                return Err(PyValueError::new_err(format!("wall_limit={s}: a number of seconds, 0 or more")))
            }
            Some(s) => Some(Duration::from_secs_f64(s.min(1e9))),
            None => None,
        };
        // A deadline for the writing only; it never steers a run.
        #[allow(clippy::disallowed_methods)]
        let deadline = limit.map(|l| Instant::now() + l);
        Ok(py.detach(|| self.results.write_dir_until(&dir, deadline))?)
    }
}
