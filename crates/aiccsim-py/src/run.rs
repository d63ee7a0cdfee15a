//! Running a scenario from Python: the fabric is built and the engine runs on their own thread
//! without the GIL, while the calling thread wakes every few tens of milliseconds to let Python
//! handle signals. A signal handler that raises (Ctrl-C's KeyboardInterrupt) stops the build or
//! the engine through its interrupt flag, and the exception propagates once they have stopped.

use crate::errors::{algorithm_error, scenario_error};
use crate::result::NativeResult;
use crate::scenario;
use crate::watchdog;
use aiccsim::cc::external::{self, AlgorithmFailure};
use aiccsim::cc::CcConfig;
use aiccsim::config::FastForward;
use aiccsim::watch::{BuildError, Stop, Watch};
use aiccsim::{ConfigError, Results, RunControl, Scenario, Simulation};
use pyo3::exceptions::{PyRuntimeWarning, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// How long a signal can wait for Python's attention; the engine itself checks its interrupt
/// flag every 65536 events (milliseconds).
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `source` (TOML text or a dict; `origin` names it in errors; relative paths in it are
/// taken against `folder`, else the working directory), with the scenario's seed replaced by
/// `seed` if given, stopping after `wall_limit` seconds if given.
#[pyfunction]
#[pyo3(signature = (source, origin, seed=None, wall_limit=None, folder=None, fast_forward=None))]
pub fn run(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    origin: &str,
    seed: Option<u64>,
    wall_limit: Option<f64>,
    folder: Option<std::path::PathBuf>,
    fast_forward: Option<f64>,
) -> PyResult<NativeResult> {
    let wall_limit = match wall_limit {
        None => None,
        Some(s) if s > 0.0 && s.is_finite() => Some(Duration::from_secs_f64(s)),
        Some(s) => {
            return Err(PyValueError::new_err(format!("wall_limit must be a positive number of seconds, not {s}")))
        }
    };
    let mut scenario = scenario::parse(py, source, origin, folder.as_deref())?;
    if let Some(seed) = seed {
        scenario.simulation.seed = seed;
    }
    // (0: off; the Python side turns False, True and a tolerance into a number.)
    if let Some(tolerance) = fast_forward {
        let ff = if tolerance == 0.0 { FastForward::Off } else { FastForward::On { tolerance } };
        if let Some(problem) = ff.problem() {
            return Err(PyValueError::new_err(format!("fast_forward: {problem}")));
        }
        scenario.simulation.fast_forward = ff;
    }
    let interrupt = Arc::new(AtomicBool::new(false));
    let control = RunControl { interrupt: Some(interrupt.clone()), wall_limit, since: None };
    let results = match run_polling_signals(py, &scenario, control, &interrupt)? {
        Err(failure) => return Err(algorithm_error(py, failure)),
        Ok(Ok((results, stopped_in))) => {
            if let Some(note) = stopped_in {
                // Not an error: the run stopped at its limit as asked, in user code.
                let note = std::ffi::CString::new(note).unwrap_or_default();
                PyErr::warn(py, &py.get_type::<PyRuntimeWarning>(), &note, 2)?;
            }
            results
        }
        Ok(Err(BuildError::Invalid(e))) => return Err(scenario_error(py, e)),
        // Ctrl-C raised its exception above; a wall-clock limit spent before the simulation
        // started leaves no results to return.
        Ok(Err(BuildError::Stopped(Stop { phase, .. }))) => {
            return Err(PyTimeoutError::new_err(format!(
                "wall_limit reached while {} (before the simulation started): no results",
                phase.describe()
            )))
        }
    };
    Ok(NativeResult { results })
}

/// The run's results (with the note naming a handler written in Python that the wall-clock
/// limit or Ctrl-C stopped), or why it has none: a bad scenario, a stop before the simulation,
/// or an exception in an algorithm written in Python.
type Outcome = Result<Result<(Results, Option<String>), BuildError<ConfigError>>, AlgorithmFailure>;

/// Builds and runs `scenario` under `control` on an engine thread (a million-host fabric takes
/// seconds to build, so the build is watched too), polling Python's signals meanwhile.
fn build_and_run(scenario: &Scenario, control: RunControl) -> Outcome {
    let build_and_run = |yield_gil: &mut dyn FnMut()| -> Result<(Results, Option<String>), BuildError<ConfigError>> {
        let mut unobserved = |_, _, _| {};
        let mut watch = Watch::new(control.clone(), &mut unobserved);
        let fabric = aiccsim_cli::admit::check_watched(scenario, &mut watch)?;
        let mut sim = Simulation::with_fabric_watched(scenario, fabric, &mut watch)?;
        drop(watch);
        sim.set_control(control.clone());
        Ok(watchdog::collect_notes(|| sim.run(&mut |_| yield_gil())))
    };
    if !matches!(scenario.cc, CcConfig::External(_)) {
        return Ok(build_and_run(&mut || {}));
    }
    // An algorithm in Python is called on every event it handles: the engine thread holds the
    // GIL for the run, so that each call does not take it again, and lets it go every 2^16
    // events, so that the calling thread still gets it to handle signals.
    Python::attach(|py| external::catch(|| build_and_run(&mut || py.detach(|| ()))))
}

fn run_polling_signals(
    py: Python<'_>,
    scenario: &Scenario,
    control: RunControl,
    interrupt: &AtomicBool,
) -> PyResult<Outcome> {
    std::thread::scope(|s| {
        let (tx, mut rx) = mpsc::channel();
        let engine = s.spawn(move || {
            let _ = tx.send(build_and_run(scenario, control));
        });
        let mut raised: Option<PyErr> = None;
        loop {
            // The receiver moves into the GIL-free closure and back: it may not be shared.
            let (back, got) = py.detach(move || {
                let got = rx.recv_timeout(SIGNAL_POLL);
                (rx, got)
            });
            rx = back;
            match got {
                Ok(outcome) => return raised.map_or(Ok(outcome), Err),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if raised.is_none() {
                        if let Err(e) = py.check_signals() {
                            interrupt.store(true, Ordering::Relaxed);
                            raised = Some(e);
                        }
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    // The engine panicked (a broken invariant): pass the panic on, as a
                    // PanicException in Python.
                    match engine.join() {
                        Err(panic) => std::panic::resume_unwind(panic),
                        Ok(()) => unreachable!("the engine thread sends its results before it ends"),
                    }
                }
            }
        }
    })
}
