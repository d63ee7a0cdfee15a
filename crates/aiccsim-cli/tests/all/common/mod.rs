//! Helpers shared by the command-line tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `aiccsim` binary of this build with `args`.
pub fn aiccsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aiccsim")).args(args).output().expect("runs")
}

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}
