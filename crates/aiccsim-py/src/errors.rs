//! `aiccsim.ScenarioError`: a bad scenario, with the file, key and message of the core's
//! [`ConfigError`] as attributes so that programs need not parse the text.

use aiccsim::cc::external::AlgorithmFailure;
use aiccsim::ConfigError;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
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

pyo3::create_exception!(
    aiccsim,
    AlgorithmError,
    PyRuntimeError,
    "An algorithm written in Python raised an exception during a run: `flow` and `time_ns` say \
     where in the run, the message holds the traceback, and `__cause__` is the exception itself."
);

pub fn algorithm_error(py: Python<'_>, failure: AlgorithmFailure) -> PyErr {
    let err = AlgorithmError::new_err(failure.to_string());
    let value = err.value(py);
    let cause = failure.detail.and_then(|d| d.downcast::<PyErr>().ok()).map(|e| e.into_value(py));
    let set = value
        .setattr("flow", failure.flow)
        .and_then(|()| value.setattr("time_ns", failure.at.as_ns_f64()))
        .and_then(|()| match cause {
            Some(c) => value.setattr("__cause__", c),
            None => Ok(()),
        });
    match set {
        Ok(()) => err,
        Err(failed) => failed,
    }
}
