//! The folder the scenario being parsed on this thread came from: serde offers no way to hand a
//! deserializer a context, yet two parts of the schema read files named relative to the scenario
//! (an external algorithm's module under `[cc]`, a Chakra trace under `[workload]`). Only
//! [`crate::Scenario::from_toml_in`] sets it; it lives at the ground so that both can read it.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

thread_local! {
    static FOLDER: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
}

/// The folder relative paths of the scenario being parsed on this thread are taken against:
/// the scenario file's, or the working directory.
pub(crate) fn scenario_folder() -> PathBuf {
    FOLDER.with(|c| c.borrow().clone()).unwrap_or_else(|| PathBuf::from("."))
}

/// Runs `f` (a parse) with relative paths taken against `folder`.
pub(crate) fn with_folder<T>(folder: Option<&Path>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<PathBuf>);
    impl Drop for Restore {
        fn drop(&mut self) {
            FOLDER.with(|c| *c.borrow_mut() = self.0.take());
        }
    }
    let before = FOLDER.with(|c| c.replace(folder.map(Path::to_path_buf)));
    let _restore = Restore(before);
    f()
}
