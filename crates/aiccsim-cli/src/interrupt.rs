//! How the command answers Ctrl-C, in each stage of its work.
//!
//! While the fabric is built and the simulation runs, the work checks a flag every few
//! milliseconds ([`aiccsim::RunControl`]): Ctrl-C sets it, and the run stops cleanly, keeping
//! the results so far. Reading a scenario and writing results check nothing (a TOML parser and
//! a CSV writer have no place to ask), so there Ctrl-C ends the process at once, saying what it
//! leaves behind. Either way the exit code is 130, as shells expect of an interrupted command,
//! and a second Ctrl-C always ends it at once.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What the command is doing, as far as Ctrl-C is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Stage {
    /// Work that checks the flag: building, simulating, a sweep's parent waiting on its points.
    Checking = 0,
    /// Reading the scenario: nothing checks; Ctrl-C (and a spent `--max-wall`) end it at once.
    Reading = 1,
    /// Writing results: nothing checks; Ctrl-C ends it at once (a spent `--max-wall` does not:
    /// the results are what the time was spent on).
    Writing = 2,
}

static STAGE: AtomicU8 = AtomicU8::new(Stage::Checking as u8);

/// What an end at once prints (set with the stage).
fn note() -> &'static Mutex<String> {
    static NOTE: OnceLock<Mutex<String>> = OnceLock::new();
    NOTE.get_or_init(Mutex::default)
}

/// Enters `stage`; `note` is what an end at once in it says (empty in [`Stage::Checking`]).
pub fn enter(stage: Stage, note_text: impl Into<String>) {
    *note().lock().unwrap_or_else(|e| e.into_inner()) = note_text.into();
    STAGE.store(stage as u8, Ordering::SeqCst);
}

fn end_now(code: i32) -> ! {
    let text = note().lock().map(|n| n.clone()).unwrap_or_default();
    if !text.is_empty() {
        eprintln!("error: {text}");
    }
    std::process::exit(code);
}

/// The flag Ctrl-C sets (installing the handler the first time): the work in progress stops at
/// its next check. Outside [`Stage::Checking`], and at a second Ctrl-C, the process ends at once.
pub fn flag() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let seen = flag.clone();
        // Without a handler (another one already installed) Ctrl-C keeps its default action.
        let _ = ctrlc::set_handler(move || {
            let checking = STAGE.load(Ordering::SeqCst) == Stage::Checking as u8;
            if seen.swap(true, Ordering::SeqCst) || !checking {
                end_now(130);
            }
        });
        flag
    })
    .clone()
}

/// Ends the process with exit code 5 if it is still reading the scenario when `limit` after
/// `since` has passed (later stages check the budget themselves).
pub fn limit_reading(limit: Duration, since: Instant) {
    std::thread::spawn(move || {
        std::thread::sleep(limit.saturating_sub(since.elapsed()));
        if STAGE.load(Ordering::SeqCst) == Stage::Reading as u8 {
            eprintln!("error: wall-clock limit reached while reading the scenario; no results written");
            std::process::exit(5);
        }
    });
}
