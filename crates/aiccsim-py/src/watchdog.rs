//! Holding the wall-clock limit and Ctrl-C inside a handler written in Python.
//!
//! The event loop checks its [`RunControl`] every 2^16 events; a handler that never returns (an
//! endless loop in `on_ack`) keeps it from ever checking. So while a run of a Python algorithm
//! lasts, a watchdog thread checks the same control every [`POLL`]. Once it says stop, no
//! handler is called any more (the event loop then reaches its own check within 2^16 events of
//! Rust alone and stops with the same reason, results partial), and a handler in progress is
//! interrupted: the watchdog takes the GIL (the interpreter hands it over between bytecodes)
//! and raises `HandlerStopped` in the engine's thread, where the handler runs. The handler
//! that was stopped is named once the run ends, on stderr or to the caller ([`take_note`]).
//!
//! A handler that catches every exception (`except BaseException: pass` in a loop) would take
//! each raise and go on: the watchdog's next one, 20 ms later, most likely lands back inside
//! the same `try`. So the exception re-arms itself: creating a `HandlerStopped` (which the
//! interpreter does as the `except` takes it) makes it pending again in the same thread, and
//! the interpreter raises it at its next check, between bytecodes. That check comes after the
//! `except` has begun: in its body, or at the jump back of the loop around the `try`, both
//! outside the `try` that caught it. So each catch moves the exception one `try` outwards, and
//! it leaves the handler after as many catches as the handler nests. (Its `__init__` is a
//! function of ours rather than Python code: Python code would see the pending exception at
//! its own first check, inside `__init__`, before any `except` had begun.)
//!
//! A handler blocked inside one long call into C (`time.sleep`, a huge `sum(range(...))`)
//! sees the exception when that call returns: the interpreter raises it between bytecodes.

use aiccsim::cc::external;
use aiccsim::watch::{Halt, RunControl};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyTuple, PyType};
use std::cell::{Cell, RefCell};
use std::os::raw::c_long;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the watchdog reads the control, and raises again in a handler that caught the
/// exception and went on.
const POLL: Duration = Duration::from_millis(20);

/// `HandlerStopped`: defined in Python (its `__init__` is [`rearm`]), created once.
static HANDLER_STOPPED: PyOnceLock<Py<PyType>> = PyOnceLock::new();

const HANDLER_STOPPED_SOURCE: &std::ffi::CStr = c"
class HandlerStopped(BaseException):
    \"\"\"Raised inside a handler of a Python algorithm when the run's wall-clock limit is reached
    or it is interrupted (Ctrl-C): the run stops, its results so far are kept. A BaseException,
    so that `except Exception` in the handler does not swallow it; caught anyway, it is raised
    again at once, until it leaves the handler.\"\"\"

    __module__ = 'aiccsim'
";

fn handler_stopped(py: Python<'_>) -> &Bound<'_, PyType> {
    let class = HANDLER_STOPPED.get_or_init(py, || {
        let make = || -> PyResult<Py<PyType>> {
            let module = PyModule::from_code(py, HANDLER_STOPPED_SOURCE, c"aiccsim/watchdog.rs", c"aiccsim._watchdog")?;
            let class = module.getattr("HandlerStopped")?.cast_into::<PyType>()?;
            class.setattr("__init__", wrap_pyfunction!(rearm, py)?)?;
            Ok(class.unbind())
        };
        // Fixed source: it compiles, or the build of this module is broken.
        make().unwrap_or_else(|e| panic!("defining HandlerStopped: {e}"))
    });
    class.bind(py)
}

/// `HandlerStopped.__init__` (called without `self`: a built-in function is no method): while a
/// stopped handler is still in progress on this thread, the exception is made pending again.
#[pyfunction(signature = (*_args))]
fn rearm(py: Python<'_>, _args: &Bound<'_, PyTuple>) {
    let Some(shared) = RUN.with(|r| r.borrow().clone()) else { return };
    let call = shared.in_call.load(Ordering::SeqCst);
    if call != 0 && shared.interrupted.load(Ordering::SeqCst) == call {
        raise_in(py, shared.thread, handler_stopped(py).as_ptr());
    }
}

/// What the engine's thread and the watchdog share.
struct Shared {
    control: RunControl,
    started: Instant,
    /// The engine thread's id, as the interpreter knows it.
    thread: std::os::raw::c_ulong,
    /// The control said stop (a [`Halt`] + 1; 0: not yet): no handler is called any more.
    halt: AtomicU8,
    /// The number of the handler call in progress (0: none), and the one the watchdog raised in.
    in_call: AtomicU64,
    interrupted: AtomicU64,
    ended: AtomicBool,
    /// A handler was stopped or not called: the run is partial.
    missed: AtomicBool,
}

thread_local! {
    static RUN: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
    static CALLS: Cell<u64> = const { Cell::new(0) };
    /// Set by a caller that reports the note itself ([`collect_notes`]).
    static COLLECT: Cell<bool> = const { Cell::new(false) };
    static NOTE: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The stopped handler's description, until the run ends.
    static STOPPED_IN: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Watches the run that starts now on this thread; dropped (on this thread) as it ends.
pub struct Watch {
    shared: Arc<Shared>,
    watchdog: Option<JoinHandle<()>>,
}

pub fn start(control: &RunControl, started: Instant) -> Watch {
    // SAFETY: reads the calling thread's id; needs no interpreter state.
    let thread = unsafe { pyo3::ffi::PyThread_get_thread_ident() };
    let shared = Arc::new(Shared {
        control: control.clone(),
        started,
        thread,
        halt: AtomicU8::new(0),
        in_call: AtomicU64::new(0),
        interrupted: AtomicU64::new(0),
        ended: AtomicBool::new(false),
        missed: AtomicBool::new(false),
    });
    RUN.with(|r| *r.borrow_mut() = Some(shared.clone()));
    STOPPED_IN.with(|s| s.borrow_mut().take());
    let watched = shared.clone();
    let watchdog = std::thread::Builder::new().name("aiccsim-watchdog".into()).spawn(move || watch(&watched)).ok();
    Watch { shared, watchdog }
}

fn watch(shared: &Shared) {
    while shared.halt.load(Ordering::SeqCst) == 0 {
        if shared.ended.load(Ordering::SeqCst) {
            return;
        }
        if let Some(halt) = shared.control.should_stop(shared.started) {
            shared.halt.store(halt as u8 + 1, Ordering::SeqCst);
            break;
        }
        std::thread::park_timeout(POLL);
    }
    // A handler that started before the halt was seen (or caught the exception) is stopped,
    // again and again, until the run ends.
    while !shared.ended.load(Ordering::SeqCst) {
        let call = shared.in_call.load(Ordering::SeqCst);
        if call != 0 {
            Python::attach(|py| {
                // Under the GIL the engine's thread runs no bytecode: if the same call is still
                // in progress, the exception is raised in it, and in nothing else.
                if !shared.ended.load(Ordering::SeqCst) && shared.in_call.load(Ordering::SeqCst) == call {
                    shared.interrupted.store(call, Ordering::SeqCst);
                    raise_in(py, shared.thread, handler_stopped(py).as_ptr());
                }
            });
        }
        std::thread::park_timeout(POLL);
    }
}

/// Sets (or, with a null `exception`, clears) the exception pending in the interpreter's
/// thread `thread`.
fn raise_in(_py: Python<'_>, thread: std::os::raw::c_ulong, exception: *mut pyo3::ffi::PyObject) {
    // SAFETY: the GIL is held (`_py`); `exception` is a type object (kept alive by the module)
    // or null.
    unsafe {
        pyo3::ffi::PyThreadState_SetAsyncExc(thread as c_long, exception);
    }
}

impl external::RunWatch for Watch {
    fn halted(&self) -> Option<Halt> {
        if !self.shared.missed.load(Ordering::SeqCst) {
            return None;
        }
        match self.shared.halt.load(Ordering::SeqCst) {
            0 => None,
            h if h == Halt::Interrupted as u8 + 1 => Some(Halt::Interrupted),
            _ => Some(Halt::WallLimit),
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.shared.ended.store(true, Ordering::SeqCst);
        RUN.with(|r| r.borrow_mut().take());
        Python::attach(|py| {
            if let Some(watchdog) = self.watchdog.take() {
                watchdog.thread().unpark();
                // Without the GIL: the watchdog may be waiting for it.
                let _ = py.detach(|| watchdog.join());
            }
            if self.shared.interrupted.load(Ordering::SeqCst) != 0 {
                // An exception raised as the handler returned would fire in whatever Python
                // code this thread runs next.
                raise_in(py, self.shared.thread, std::ptr::null_mut());
            }
        });
        let Some(handler) = STOPPED_IN.with(|s| s.borrow_mut().take()) else { return };
        let halt = match self.shared.halt.load(Ordering::SeqCst) {
            h if h == Halt::Interrupted as u8 + 1 => "interrupted",
            _ => "wall-clock limit reached",
        };
        let note = format!(
            "{halt} inside {handler}: the handler was stopped there and none was called after it; the results are partial"
        );
        if COLLECT.with(Cell::get) {
            NOTE.with(|n| *n.borrow_mut() = Some(note));
        } else {
            eprintln!("aiccsim: {note}");
        }
    }
}

/// What became of a handler call.
pub enum Called<T> {
    /// It returned (or raised on its own).
    Done(PyResult<T>),
    /// The run is stopping: it was not called.
    Skipped,
    /// The watchdog stopped it; how long it had run.
    Stopped(Duration),
}

/// Calls a handler (holding the GIL) under the watch of the run on this thread, if any.
pub fn call<T>(handler: impl FnOnce() -> PyResult<T>) -> Called<T> {
    let Some(shared) = RUN.with(|r| r.borrow().clone()) else { return Called::Done(handler()) };
    if shared.halt.load(Ordering::SeqCst) != 0 {
        shared.missed.store(true, Ordering::SeqCst);
        return Called::Skipped;
    }
    let n = CALLS.with(|c| {
        c.set(c.get() + 1);
        c.get()
    });
    // Only for the note: how long a stopped handler had run.
    #[allow(clippy::disallowed_methods)]
    let began = Instant::now();
    shared.in_call.store(n, Ordering::SeqCst);
    let outcome = handler();
    shared.in_call.store(0, Ordering::SeqCst);
    if shared.interrupted.load(Ordering::SeqCst) == n {
        // Re-armed as the exception left the handler: not for the Python code that runs next.
        Python::attach(|py| raise_in(py, shared.thread, std::ptr::null_mut()));
    }
    if shared.interrupted.load(Ordering::SeqCst) == n && outcome.is_err() {
        shared.missed.store(true, Ordering::SeqCst);
        return Called::Stopped(began.elapsed());
    }
    Called::Done(outcome)
}

/// Names the handler the watchdog stopped ("module:Class.on_ack of flow 3 at 12.5 us ..."),
/// for the note the run's end gives.
pub fn stopped_in(handler: String) {
    STOPPED_IN.with(|s| {
        s.borrow_mut().get_or_insert(handler);
    });
}

/// Runs `f` (a run) with the note about a stopped handler kept for [`take_note`] instead of
/// printed.
pub fn collect_notes<T>(f: impl FnOnce() -> T) -> (T, Option<String>) {
    let before = COLLECT.with(|c| c.replace(true));
    NOTE.with(|n| n.borrow_mut().take());
    let t = f();
    COLLECT.with(|c| c.set(before));
    (t, NOTE.with(|n| n.borrow_mut().take()))
}
