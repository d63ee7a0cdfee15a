//! A scenario from Python: TOML text, or a dict turned into TOML text, so that both go through
//! the very parser and validation a scenario file does (same defaults, same error keys).

use crate::errors::scenario_error;
use aiccsim::{ConfigError, Scenario};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// `source` is TOML text or a dict; `origin` names it in errors (the path for a file), and
/// relative paths in it are taken against `folder` (the file's).
pub fn parse(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    origin: &str,
    folder: Option<&std::path::Path>,
) -> PyResult<Scenario> {
    let text = if let Ok(text) = source.cast::<PyString>() {
        text.to_cow()?.into_owned()
    } else if let Ok(dict) = source.cast::<PyDict>() {
        let table = table_of(py, dict, "", origin)?;
        toml::to_string(&table).map_err(|e| bad(py, origin, "", &format!("cannot be written as TOML: {e}")))?
    } else {
        return Err(PyTypeError::new_err(format!(
            "a scenario is TOML text or a dict, not {}",
            source.get_type().name()?
        )));
    };
    Scenario::from_toml_in(&text, origin, folder).map_err(|e| scenario_error(py, e))
}

fn bad(py: Python<'_>, origin: &str, key: &str, message: &str) -> PyErr {
    scenario_error(py, ConfigError { file: origin.to_string(), key: key.to_string(), message: message.to_string() })
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn table_of(py: Python<'_>, dict: &Bound<'_, PyDict>, at: &str, origin: &str) -> PyResult<toml::Table> {
    let mut table = toml::Table::new();
    for (k, v) in dict.iter() {
        let Ok(k) = k.cast::<PyString>().map(|s| s.to_string()) else {
            return Err(bad(py, origin, at, &format!("keys are strings, not {}", k.repr()?)));
        };
        let key = join(at, &k);
        let value = value_of(py, &v, &key, origin)?;
        table.insert(k, value);
    }
    Ok(table)
}

fn value_of(py: Python<'_>, v: &Bound<'_, PyAny>, key: &str, origin: &str) -> PyResult<toml::Value> {
    // bool before int: Python's True is an int too.
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(toml::Value::Boolean(b.is_true()));
    }
    if v.is_instance_of::<PyInt>() {
        let i: i64 = v.extract().map_err(|_| bad(py, origin, key, "integer out of range"))?;
        return Ok(toml::Value::Integer(i));
    }
    if let Ok(f) = v.cast::<PyFloat>() {
        return Ok(toml::Value::Float(f.value()));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(toml::Value::String(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        return Ok(toml::Value::Table(table_of(py, d, key, origin)?));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, item) in v.try_iter()?.enumerate() {
            items.push(value_of(py, &item?, &format!("{key}[{i}]"), origin)?);
        }
        return Ok(toml::Value::Array(items));
    }
    let what = if v.is_none() { "None (leave the key out for its default)".to_string() } else { v.repr()?.to_string() };
    Err(bad(py, origin, key, &format!("{what} is not a TOML value: use a string, number, bool, list or dict")))
}
