//! The `aiccsim` command; everything but finding itself is in the library.

use std::process::ExitCode;

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so `aiccsim validate x.toml | head` would make `println!` panic once
    // `head` exits. A command-line tool should end quietly there, as `cat` does: the default
    // action ends the process at the first write to the closed pipe.
    #[cfg(unix)]
    // SAFETY: called before any other thread exists; SIG_DFL is a valid disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Without its own path only `bench` fails, and says so.
    let relaunch = std::env::current_exe().map(|exe| vec![exe.into_os_string()]).unwrap_or_default();
    ExitCode::from(aiccsim_cli::main(std::env::args_os().collect(), relaunch))
}
