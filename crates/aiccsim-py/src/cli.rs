//! `python -m aiccsim ARGS`: the `aiccsim` command itself, so that a pip install needs no
//! separate binary.

use pyo3::prelude::*;
use std::ffi::OsString;
use std::io::Write;

/// Runs the command line (`args[0]` is the program name) and returns its exit code.
/// `relaunch` is how to start this program again (for `bench`'s child processes).
#[pyfunction]
pub fn cli_main(args: Vec<OsString>, relaunch: Vec<OsString>) -> u8 {
    // The command keeps the GIL: an algorithm written in Python is called on every event it
    // handles, and taking the GIL again for each call nearly doubled the 16-to-1 incast's run
    // with the Python DCTCP (0.15 s against 0.085 s). No other thread of `python -m aiccsim`
    // runs Python meanwhile, and Ctrl-C reaches the command through its own handler.
    let code = aiccsim_cli::main(args, relaunch);
    // Rust's stdout is not Python's: a line without its newline would otherwise be lost when
    // Python exits.
    let _ = std::io::stdout().flush();
    code
}
