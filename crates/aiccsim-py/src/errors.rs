//! `aiccsim.ScenarioError`: a bad scenario, with the file, key and message of the core's
//! [`ConfigError`] as attributes so that programs need not parse the text.

use aiccsim::ConfigError;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

pyo3::create_exception!(
    aiccsim,
    ScenarioError,
    PyValueError,
    "A scenario that cannot be run: `file`, `key` (dotted, empty when the whole scenario is at \
     fault) and `message` say where and what to write instead."
);

pub fn scenario_error(py: Python<'_>, e: ConfigError) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    let value = err.value(py);
    let set = value
        .setattr("file", e.file)
        .and_then(|()| value.setattr("key", e.key))
        .and_then(|()| value.setattr("message", e.message));
    match set {
        Ok(()) => err,
        Err(failed) => failed,
    }
}
