//! `python -m aiccsim ARGS`: the `aiccsim` command itself, so that a pip install needs no
//! separate binary.

use pyo3::prelude::*;
use std::ffi::OsString;
use std::io::Write;

/// Runs the command line (`args[0]` is the program name) and returns its exit code.
/// `relaunch` is how to start this program again (for `bench`'s child processes).
#[pyfunction]
pub fn cli_main(py: Python<'_>, args: Vec<OsString>, relaunch: Vec<OsString>) -> u8 {
    let code = py.detach(|| aiccsim_cli::main(args, relaunch));
    // Rust's stdout is not Python's: a line without its newline would otherwise be lost when
    // Python exits.
    let _ = std::io::stdout().flush();
    code
}
