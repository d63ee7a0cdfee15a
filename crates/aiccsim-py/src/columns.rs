//! Columns in Arrow's memory layout, handed to Python as bytes: pyarrow wraps them as arrays
//! (`pa.Array.from_buffers`) without parsing text, and pandas and polars are built from those.
//! This keeps the native module free of an Arrow crate while the frames share one definition.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

enum Values {
    Int64(Vec<i64>),
    Float64(Vec<f64>),
    /// UTF-8: row i is `data[offsets[i]..offsets[i + 1]]`.
    Utf8 {
        offsets: Vec<i32>,
        data: Vec<u8>,
    },
}

pub struct Column {
    name: &'static str,
    values: Values,
    /// Arrow's validity: false where the value is missing (an empty cell of the CSV). `None`
    /// when no value can be missing in this column.
    valid: Option<Vec<bool>>,
}

/// What Python receives per column: (name, type, nullable, length, null count, buffers in
/// Arrow's order: validity or None, then offsets for strings, then the values). `nullable` says
/// whether the column can have missing values at all, whether or not this run has any.
pub type ColumnParts<'py> = (&'static str, &'static str, bool, usize, usize, Vec<Option<Bound<'py, PyBytes>>>);

impl Column {
    pub fn int(name: &'static str, values: impl Iterator<Item = i64>) -> Column {
        Column { name, values: Values::Int64(values.collect()), valid: None }
    }

    pub fn int_opt(name: &'static str, values: impl Iterator<Item = Option<i64>>) -> Column {
        let (valid, values) = split(values);
        Column { name, values: Values::Int64(values), valid: Some(valid) }
    }

    pub fn float(name: &'static str, values: impl Iterator<Item = f64>) -> Column {
        Column { name, values: Values::Float64(values.collect()), valid: None }
    }

    pub fn float_opt(name: &'static str, values: impl Iterator<Item = Option<f64>>) -> Column {
        let (valid, values) = split(values);
        Column { name, values: Values::Float64(values), valid: Some(valid) }
    }

    pub fn str<S: AsRef<str>>(name: &'static str, values: impl Iterator<Item = S>) -> Column {
        let mut c = Column::str_opt(name, values.map(Some));
        c.valid = None;
        c
    }

    pub fn str_opt<S: AsRef<str>>(name: &'static str, values: impl Iterator<Item = Option<S>>) -> Column {
        let mut offsets = vec![0i32];
        let mut data = Vec::new();
        let mut valid = Vec::new();
        for v in values {
            valid.push(v.is_some());
            if let Some(s) = v {
                data.extend_from_slice(s.as_ref().as_bytes());
            }
            offsets.push(i32::try_from(data.len()).expect("a string column under 2 GiB"));
        }
        Column { name, values: Values::Utf8 { offsets, data }, valid: Some(valid) }
    }

    fn len(&self) -> usize {
        match &self.values {
            Values::Int64(v) => v.len(),
            Values::Float64(v) => v.len(),
            Values::Utf8 { offsets, .. } => offsets.len() - 1,
        }
    }

    pub fn into_python(self, py: Python<'_>) -> ColumnParts<'_> {
        let len = self.len();
        let nulls = self.valid.as_ref().map_or(0, |v| v.iter().filter(|&&x| !x).count());
        let validity = (nulls > 0).then(|| PyBytes::new(py, &bitmap(self.valid.as_deref().unwrap_or_default())));
        let (kind, mut buffers) = match &self.values {
            Values::Int64(v) => ("int64", vec![PyBytes::new(py, &bytes_of(v, i64::to_ne_bytes))]),
            Values::Float64(v) => ("float64", vec![PyBytes::new(py, &bytes_of(v, f64::to_ne_bytes))]),
            Values::Utf8 { offsets, data } => {
                ("string", vec![PyBytes::new(py, &bytes_of(offsets, i32::to_ne_bytes)), PyBytes::new(py, data)])
            }
        };
        let mut all = vec![validity];
        all.extend(buffers.drain(..).map(Some));
        (self.name, kind, self.valid.is_some(), len, nulls, all)
    }
}

fn split<T: Default>(values: impl Iterator<Item = Option<T>>) -> (Vec<bool>, Vec<T>) {
    values.map(|v| (v.is_some(), v.unwrap_or_default())).unzip()
}

/// Arrow's buffers hold values in the machine's byte order.
fn bytes_of<T: Copy, const N: usize>(values: &[T], to_bytes: fn(T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(|&v| to_bytes(v)).collect()
}

/// One bit per row, least significant bit first, as Arrow lays out validity.
fn bitmap(valid: &[bool]) -> Vec<u8> {
    let mut bits = vec![0u8; valid.len().div_ceil(8)];
    for (i, _) in valid.iter().enumerate().filter(|(_, &v)| v) {
        bits[i / 8] |= 1 << (i % 8);
    }
    bits
}
