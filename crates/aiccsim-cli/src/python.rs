//! `aiccsim report` and `aiccsim parquet` are written in Python (python/aiccsim/_commands.py),
//! where matplotlib and pyarrow are. The binary runs them with `python -m aiccsim`, in the
//! interpreter named by `AICCSIM_PYTHON` (else `python3`), passing the arguments on and giving
//! back its exit code; the Python side prints the output and the errors, so both ways of
//! running the command read the same.

use std::ffi::OsString;
use std::process::Command;

/// Runs `python -m aiccsim COMMAND ARGS...` and returns its exit code. If that interpreter
/// cannot be started, or cannot import the `modules` the command needs, prints a one-line error
/// that says to `pip install PACKAGE` (`.` or `'.[plot]'`) and returns 1.
pub fn run(command: &str, args: Vec<OsString>, modules: &[&str], package: &str) -> u8 {
    let python = std::env::var_os("AICCSIM_PYTHON").unwrap_or_else(|| OsString::from("python3"));
    let shown = python.to_string_lossy().into_owned();
    // A first, quick start that only imports: a missing package is then one clear line rather
    // than a traceback halfway through the command.
    let probe = Command::new(&python).arg("-c").arg(format!("import {}", modules.join(", "))).output();
    let why = match probe {
        Err(e) => Some(format!("`{shown}` cannot be started: {e}")),
        Ok(out) if !out.status.success() => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("the import failed");
            Some(format!("`{shown}` cannot import {}: {}", modules.join(", "), last.trim()))
        }
        Ok(_) => None,
    };
    if let Some(why) = why {
        eprintln!(
            "error: aiccsim {command} runs in Python and {why}; install the aiccsim package with `pip install {package}` in the aiccsim source tree (or `make python`), and set AICCSIM_PYTHON to that Python if it is not python3"
        );
        return 1;
    }
    match Command::new(&python).args(["-m", "aiccsim", command]).args(args).status() {
        // A child ended by a signal (Ctrl-C) has no code: 130, as the shell would say.
        Ok(status) => status.code().map_or(130, |c| u8::try_from(c).unwrap_or(1)),
        Err(e) => {
            eprintln!("error: cannot start `{shown}`: {e}");
            1
        }
    }
}
