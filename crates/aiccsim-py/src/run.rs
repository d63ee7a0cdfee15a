//! Running a scenario from Python: the engine runs on its own thread without the GIL, while the
//! calling thread wakes every few tens of milliseconds to let Python handle signals. A signal
//! handler that raises (Ctrl-C's KeyboardInterrupt) stops the engine through its interrupt
//! flag, and the exception propagates once the engine has stopped.

use crate::errors::scenario_error;
use crate::result::NativeResult;
use crate::scenario;
use aiccsim::{Results, RunControl, Simulation};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// How long a signal can wait for Python's attention; the engine itself checks its interrupt
/// flag every 65536 events (milliseconds).
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `source` (TOML text or a dict; `origin` names it in errors), with the scenario's seed
/// replaced by `seed` if given, stopping after `wall_limit` seconds if given.
#[pyfunction]
#[pyo3(signature = (source, origin, seed=None, wall_limit=None))]
pub fn run(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    origin: &str,
    seed: Option<u64>,
    wall_limit: Option<f64>,
) -> PyResult<NativeResult> {
    let wall_limit = match wall_limit {
        None => None,
        Some(s) if s > 0.0 && s.is_finite() => Some(Duration::from_secs_f64(s)),
        Some(s) => {
            return Err(PyValueError::new_err(format!("wall_limit must be a positive number of seconds, not {s}")))
        }
    };
    let mut scenario = scenario::parse(py, source, origin)?;
    if let Some(seed) = seed {
        scenario.simulation.seed = seed;
    }
    let built =
        py.detach(|| aiccsim_cli::admit::check(&scenario).map(|fabric| Simulation::with_fabric(&scenario, fabric)));
    let mut sim = built.map_err(|e| scenario_error(py, e))?;
    let interrupt = Arc::new(AtomicBool::new(false));
    sim.set_control(RunControl { interrupt: Some(interrupt.clone()), wall_limit, since: None });
    let results = run_polling_signals(py, sim, &interrupt)?;
    Ok(NativeResult { results })
}

fn run_polling_signals(py: Python<'_>, sim: Simulation, interrupt: &AtomicBool) -> PyResult<Results> {
    std::thread::scope(|s| {
        let (tx, mut rx) = mpsc::channel();
        let engine = s.spawn(move || {
            let _ = tx.send(sim.run(&mut |_| {}));
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
                Ok(results) => return raised.map_or(Ok(results), Err),
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
