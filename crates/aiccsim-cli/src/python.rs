//! `aiccsim report`, `aiccsim parquet`, `aiccsim plot` and the plot of `aiccsim reproduce` are
//! written in Python (python/aiccsim/_commands.py), where matplotlib and pyarrow are. The binary
//! runs them with `python -m aiccsim`, passing the arguments on and giving back its exit code;
//! the Python side prints the output and the errors, so both ways of running the command read
//! the same.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

/// The modules the plots need: the package and matplotlib (`pip install '.[plot]'`).
pub const PLOT_MODULES: [&str; 2] = ["aiccsim.plot", "matplotlib"];

/// An interpreter that can run a command written in Python.
pub struct Python(OsString);

/// The interpreters to try, in order: `AICCSIM_PYTHON` alone when it is set; else `python3`,
/// then the `.venv/` that `make python` makes in the source tree this binary was built from (so
/// that `make demo` and `make test` need no activated venv).
fn candidates() -> Vec<OsString> {
    if let Some(python) = std::env::var_os("AICCSIM_PYTHON") {
        return vec![python];
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    let mut out = vec![OsString::from("python3")];
    if venv.is_file() {
        out.push(venv.into_os_string());
    }
    out
}

/// The first interpreter that imports `modules`, or one line saying why none does (the first
/// candidate's failure: the one the user named or expects).
pub fn find(modules: &[&str]) -> Result<Python, String> {
    let mut first_failure = None;
    for python in candidates() {
        let shown = python.to_string_lossy().into_owned();
        // A quick start that only imports: a missing package is then one clear line rather
        // than a traceback halfway through the command.
        let probe = Command::new(&python).arg("-c").arg(format!("import {}", modules.join(", "))).output();
        let why = match probe {
            Err(e) => format!("`{shown}` cannot be started: {e}"),
            Ok(out) if !out.status.success() => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("the import failed");
                format!("`{shown}` cannot import {}: {}", modules.join(", "), last.trim())
            }
            Ok(_) => return Ok(Python(python)),
        };
        first_failure.get_or_insert(why);
    }
    Err(first_failure.unwrap_or_default())
}

/// How to get a Python that runs the commands, for an error or a note: `package` is what to
/// `pip install` (`.` or `'.[plot]'`).
pub fn install_hint(package: &str) -> String {
    format!(
        "install the aiccsim package with `make python` in the aiccsim source tree (or `pip install {package}` there), and set AICCSIM_PYTHON to that Python if it is neither python3 nor the source tree's .venv/"
    )
}

impl Python {
    /// Runs `python -m aiccsim COMMAND ARGS...` and returns its exit code.
    pub fn run(&self, command: &str, args: Vec<OsString>) -> u8 {
        match Command::new(&self.0).args(["-m", "aiccsim", command]).args(args).status() {
            // A child ended by a signal (Ctrl-C) has no code: 130, as the shell would say.
            Ok(status) => status.code().map_or(130, |c| u8::try_from(c).unwrap_or(1)),
            Err(e) => {
                eprintln!("error: cannot start `{}`: {e}", self.0.to_string_lossy());
                1
            }
        }
    }
}

/// Runs `python -m aiccsim COMMAND ARGS...` and returns its exit code. If no interpreter can
/// import the `modules` the command needs, prints a one-line error that says how to install
/// the package (`pip install PACKAGE`: `.` or `'.[plot]'`) and returns 1.
pub fn run(command: &str, args: Vec<OsString>, modules: &[&str], package: &str) -> u8 {
    match find(modules) {
        Ok(python) => python.run(command, args),
        Err(why) => {
            eprintln!("error: aiccsim {command} runs in Python and {why}; {}", install_hint(package));
            1
        }
    }
}

/// `[cc] algorithm = "python"`: an algorithm written in Python (docs/cc/programmable.md). The
/// Python package registers it when it is imported; this binary alone cannot run it.
pub const ALGORITHM: &str = "python";

/// Set in the environment of the command a binary hands over, so that a Python package that
/// cannot run such algorithms (an older install) fails instead of handing it back.
const HANDED_OVER: &str = "AICCSIM_HANDED_OVER";

/// The first of `files` (TOML) that names the Python algorithm: a key `algorithm` (`[cc]`, a
/// run's `set`) or a sweep's `"cc.algorithm"` axis set to "python" or to a list holding it.
/// Files that do not parse are left to the command, which reports them.
pub fn names_python_algorithm(files: &[std::path::PathBuf]) -> Option<std::path::PathBuf> {
    fn names(table: &toml::Table) -> bool {
        table.iter().any(|(k, v)| {
            let is_key = k == "algorithm" || k.ends_with(".algorithm");
            match v {
                toml::Value::String(s) => is_key && s == ALGORITHM,
                toml::Value::Array(items) => items.iter().any(|i| match i {
                    toml::Value::String(s) => is_key && s == ALGORITHM,
                    toml::Value::Table(t) => names(t),
                    _ => false,
                }),
                toml::Value::Table(t) => names(t),
                _ => false,
            }
        })
    }
    files
        .iter()
        .find(|f| {
            std::fs::read_to_string(f).ok().and_then(|t| t.parse::<toml::Table>().ok()).is_some_and(|t| names(&t))
        })
        .cloned()
}

/// Runs this command line (`args[0]` is the program) as `python -m aiccsim ARGS...` in the
/// interpreter named by `AICCSIM_PYTHON` (else `python3`), because `file` names an algorithm
/// written in Python; returns its exit code. On Unix the process becomes that command, so
/// signals and the exit code are its own.
pub fn hand_over(file: &std::path::Path, args: &[OsString]) -> u8 {
    let python = std::env::var_os("AICCSIM_PYTHON").unwrap_or_else(|| OsString::from("python3"));
    let shown = python.to_string_lossy().into_owned();
    let why =
        format!("{} names cc.algorithm = \"{ALGORITHM}\", which runs in the aiccsim Python package", file.display());
    if std::env::var_os(HANDED_OVER).is_some() {
        eprintln!("error: {why}, and `{shown} -m aiccsim` cannot run it: install this version of the package (`pip install .` in the aiccsim source tree, or `make python`)");
        return 1;
    }
    // Finding the package, not importing it: an import (pandas, pyarrow) would take as long as
    // the command's own start, which imports it anyway.
    let probe = Command::new(&python)
        .args(["-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('aiccsim') is None)"])
        .output();
    let failed = match probe {
        Err(e) => Some(format!("`{shown}` cannot be started: {e}")),
        Ok(out) if !out.status.success() => Some(format!("`{shown}` has no aiccsim package")),
        Ok(_) => None,
    };
    if let Some(failed) = failed {
        eprintln!(
            "error: {why}, and {failed}; install it with `pip install .` in the aiccsim source tree (or `make python`), and set AICCSIM_PYTHON to that Python if it is not python3"
        );
        return 1;
    }
    let mut command = Command::new(&python);
    command.args(["-m", "aiccsim"]).args(args.iter().skip(1)).env(HANDED_OVER, "1");
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = command.exec();
        eprintln!("error: cannot start `{shown}`: {e}");
        1
    }
    #[cfg(not(unix))]
    match command.status() {
        Ok(status) => status.code().map_or(130, |c| u8::try_from(c).unwrap_or(1)),
        Err(e) => {
            eprintln!("error: cannot start `{shown}`: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(text: &str) -> bool {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.toml");
        std::fs::write(&path, text).unwrap();
        names_python_algorithm(&[dir.path().join("missing.toml"), path.clone()]) == Some(path)
    }

    #[test]
    fn a_file_names_the_python_algorithm_in_cc_a_grid_or_a_runs_settings() {
        assert!(named("[cc]\nalgorithm = \"python\"\nclass = \"m:C\"\n"));
        assert!(named("base = \"b.toml\"\n[grid]\n\"cc.algorithm\" = [\"dcqcn\", \"python\"]\n"));
        assert!(named("[[run]]\nname = \"x\"\nset = { cc = { algorithm = \"python\" } }\n"));
        assert!(!named("[cc]\nalgorithm = \"dcqcn\"\n[workload]\nkind = \"all_reduce\"\nalgorithm = \"ring\"\n"));
        assert!(!named("[cc]\nalgorithm = \"dctcp\"\nnote = \"python\"\n"));
        assert!(!named("not toml ["));
    }
}
