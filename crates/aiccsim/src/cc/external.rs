//! Algorithms from outside the core: a scenario names one (`[cc] algorithm = "python"`) that a
//! front end registered at start-up, and the front end builds it from its `[cc]` keys.
//!
//! The core stays free of any language runtime: the Python binding (crates/aiccsim-py)
//! registers the `python` factory when it is imported, and a front end without that factory
//! (the standalone `aiccsim` binary) never parses such a scenario (it hands it to
//! `python -m aiccsim`). What the core offers is the hook ([`register`]), the `[cc]` variant
//! that holds the built algorithm ([`ExternalConfig`]), and a way for such an algorithm to end
//! the run with its own error ([`fail`] and [`catch`]), since the sender half's hooks return
//! nothing and the per-packet path should not pay for a check that only these algorithms need.

use super::{Algorithm, CcConfig, SimTime};
use crate::watch::{Halt, RunControl};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use std::fmt;
use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::Instant;

/// An algorithm built from its `[cc]` keys (every key but `algorithm`).
pub type Built = (toml::Table, Arc<dyn Algorithm + Send + Sync>);

/// Builds an external algorithm from a scenario.
pub trait ExternalFactory: Send + Sync {
    /// Builds it from its `[cc]` keys (every key but `algorithm`); `folder` is the scenario
    /// file's folder (the working directory for a scenario not read from a file), against which
    /// relative paths are taken. Returns the keys as the scenario should be written back
    /// (run.json, a sweep's points): relative paths made absolute, so that the written scenario
    /// runs from anywhere. An error names its key under `[cc]` (`"class"`) and the fix.
    fn build(&self, params: toml::Table, folder: &Path) -> Result<Built, (String, String)>;

    /// Called on the engine's thread as a run of this algorithm starts: user code can loop in a
    /// handler, where the event loop's own checks of `control` never come, so the front end may
    /// watch `control` itself (its wall budget counted from `started` unless `control.since`
    /// says otherwise) and stop the handler. What it returns is dropped, on the same thread,
    /// when the event loop ends.
    fn watch_run(&self, _control: &RunControl, _started: Instant) -> Option<Box<dyn RunWatch>> {
        None
    }
}

/// A front end's watch over a run of its algorithm ([`ExternalFactory::watch_run`]).
pub trait RunWatch {
    /// The stop from outside that kept a handler from running (stopped in progress, or not
    /// called once the stop was seen), if one did: the run is partial, whatever the event loop
    /// saw after.
    fn halted(&self) -> Option<Halt>;
}

type Factories = Vec<(&'static str, Arc<dyn ExternalFactory>)>;

static FACTORIES: RwLock<Factories> = RwLock::new(Vec::new());

/// Makes `algorithm = "<name>"` build its algorithm with `factory` (a later registration of the
/// same name replaces the earlier one). A built-in name cannot be taken.
pub fn register(name: &'static str, factory: Arc<dyn ExternalFactory>) {
    assert!(!super::CcConfig::all_defaults().iter().any(|c| c.name() == name), "`{name}` is a built-in algorithm");
    let mut all = FACTORIES.write().unwrap_or_else(|e| e.into_inner());
    all.retain(|(n, _)| *n != name);
    all.push((name, factory));
}

/// Whether a factory for `algorithm = "<name>"` is registered in this process.
pub fn is_registered(name: &str) -> bool {
    factory(name).is_some()
}

/// The names registered, in registration order.
pub fn names() -> Vec<&'static str> {
    FACTORIES.read().unwrap_or_else(|e| e.into_inner()).iter().map(|(n, _)| *n).collect()
}

fn factory(name: &str) -> Option<(&'static str, Arc<dyn ExternalFactory>)> {
    let all = FACTORIES.read().unwrap_or_else(|e| e.into_inner());
    all.iter().find(|(n, _)| *n == name).map(|(n, f)| (*n, f.clone()))
}

/// `[cc]` of an external algorithm: its name, its keys as written back, and the algorithm
/// its factory built from them.
#[derive(Clone)]
pub struct ExternalConfig {
    name: &'static str,
    params: toml::Table,
    algorithm: Arc<dyn Algorithm + Send + Sync>,
    factory: Arc<dyn ExternalFactory>,
}

impl ExternalConfig {
    /// Builds `algorithm = "<name>"` from the rest of its `[cc]` table, or `None` if no factory
    /// has that name.
    pub(crate) fn build(name: &str, params: toml::Table) -> Option<Result<ExternalConfig, (String, String)>> {
        let (name, factory) = factory(name)?;
        let folder = crate::parse_folder::scenario_folder();
        Some(factory.build(params, &folder).map(|(params, algorithm)| ExternalConfig {
            name,
            params,
            algorithm,
            factory,
        }))
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The `[cc]` keys but `algorithm`, as written back.
    pub fn params(&self) -> &toml::Table {
        &self.params
    }

    pub fn algorithm(&self) -> &dyn Algorithm {
        &*self.algorithm
    }
}

/// What the front end of `cc`'s algorithm watches while the run on this thread lasts (dropped
/// as it ends), if `cc` is an external algorithm ([`ExternalFactory::watch_run`]).
pub(crate) fn watch_run(cc: &CcConfig, control: &RunControl, started: Instant) -> Option<Box<dyn RunWatch>> {
    match cc {
        CcConfig::External(e) => e.factory.watch_run(control, started),
        _ => None,
    }
}

impl fmt::Debug for ExternalConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExternalConfig").field("name", &self.name).field("params", &self.params).finish()
    }
}

impl Serialize for ExternalConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.params.len() + 1))?;
        map.serialize_entry("algorithm", self.name)?;
        for (k, v) in &self.params {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// An external algorithm's own error (an exception in user code): it ends the run, and the
/// front end reports it instead of results.
pub struct AlgorithmFailure {
    /// The flow whose handler failed (the connection's first flow, for a shared connection).
    pub flow: u32,
    /// Simulated time of the event it was handling.
    pub at: SimTime,
    /// What failed, for the user: the handler, and the error with its traceback.
    pub message: String,
    /// The front end's own error object, for front ends that can hand it on (a Python
    /// exception, raised again with its traceback).
    pub detail: Option<Box<dyn std::any::Any + Send>>,
}

impl fmt::Display for AlgorithmFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "flow {} at {} ns: {}", self.flow, self.at.as_ns_f64(), self.message)
    }
}

impl fmt::Debug for AlgorithmFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Ends the run from inside a sender half, with `failure` (it unwinds to [`catch`]). The panic
/// hook is not called: no "panicked at" line reaches the user.
pub fn fail(failure: AlgorithmFailure) -> ! {
    std::panic::resume_unwind(Box::new(failure))
}

/// Runs `f` (building or running a simulation), returning the [`AlgorithmFailure`] that ended
/// it, if one did. Other panics go on unwinding.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, AlgorithmFailure> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(t) => Ok(t),
        Err(payload) => match payload.downcast::<AlgorithmFailure>() {
            Ok(failure) => Err(*failure),
            Err(other) => std::panic::resume_unwind(other),
        },
    }
}
