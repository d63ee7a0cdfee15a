//! The `aiccsim` command; everything but finding itself is in the library.

use std::process::ExitCode;

fn main() -> ExitCode {
    // Without its own path only `bench` fails, and says so.
    let relaunch = std::env::current_exe().map(|exe| vec![exe.into_os_string()]).unwrap_or_default();
    ExitCode::from(aiccsim_cli::main(std::env::args_os().collect(), relaunch))
}
