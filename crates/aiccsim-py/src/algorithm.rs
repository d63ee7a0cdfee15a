//! `[cc] algorithm = "python"`: a congestion-control algorithm written as a Python class with
//! one method per NIC event (docs/cc/programmable.md).
//!
//! Importing the native module registers the factory with the core's hook
//! (`aiccsim::cc::external`); the class is imported and checked (python/aiccsim/_algorithm.py)
//! while the scenario is parsed, so `validate` reports a bad class at `cc.class`. Each flow
//! gets its own instance, run as a [`NicProgram`]: per event, one call of the bound method the
//! class defines (none for the events it does not handle), with the flow's context object and,
//! for an ACK, one ACK object per flow whose fields are rewritten in place. An exception ends
//! the run through [`external::fail`], with the flow, the simulated time and the traceback.
//!
//! What a handler hands back is checked where it is set (a rate that is NaN, infinite or not
//! above zero, a window that is no byte count, a timer before now): the setter raises, so the
//! error points at the line that set it. While the run lasts, a watchdog (`watchdog.rs`)
//! holds the wall-clock limit and Ctrl-C inside the handlers too.

use aiccsim::cc::external::{self, AlgorithmFailure, Built, ExternalFactory};
use aiccsim::cc::{
    Algorithm, Cc, FlowContext, FlowFacts, IntHop, MessageDone, NicEvent, NicProgram, ProbeReply, Programmed,
    MAX_TIMERS, NIC_EVENTS,
};
use aiccsim::time::SimTime;
use aiccsim::watch::RunControl;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::watchdog::{self, Called};

/// One per NIC event, in the order of [`NIC_EVENTS`] ([`NicEvent::index`]).
const HANDLERS: usize = NIC_EVENTS.len();

/// Each NIC event's handler and its arguments after `flow` with their Python types, in the order
/// of the core's list (`aiccsim::cc::events`): python/aiccsim/_algorithm.py checks classes
/// against it.
#[pyfunction]
pub fn nic_events() -> Vec<(&'static str, Vec<(&'static str, &'static str)>)> {
    NIC_EVENTS.iter().map(|e| (e.handler, e.args.to_vec())).collect()
}

pub fn register() {
    external::register("python", Arc::new(PythonFactory));
}

struct PythonFactory;

impl ExternalFactory for PythonFactory {
    fn build(&self, mut params: toml::Table, folder: &Path) -> Result<Built, (String, String)> {
        let spec = match params.remove("class") {
            Some(toml::Value::String(s)) => s,
            Some(other) => return Err(("class".into(), format!("must be a string \"module:Class\", not {other}"))),
            None => {
                return Err((
                    "class".into(),
                    "is missing: name the algorithm's class as \"module:Class\" (module.py in the scenario's folder or on sys.path)".into(),
                ))
            }
        };
        let path = match params.remove("path") {
            None => folder.to_path_buf(),
            Some(toml::Value::String(p)) => folder.join(p),
            Some(other) => return Err(("path".into(), format!("must be a folder (a string), not {other}"))),
        };
        // Absolute, and written back so: the scenario a sweep writes into its points' folders,
        // and run.json, find the module from wherever they are run.
        let path = std::path::absolute(&path).map_err(|e| ("path".to_string(), format!("{}: {e}", path.display())))?;
        let path_text =
            path.to_str().ok_or_else(|| ("path".to_string(), "must be valid UTF-8".to_string()))?.to_string();
        let algorithm = Python::attach(|py| -> Result<PythonAlgorithm, (String, String)> {
            let kwargs = PyDict::new(py);
            for (k, v) in &params {
                let v = to_python(py, v).map_err(|e| (k.clone(), e.to_string()))?;
                kwargs.set_item(k, v).map_err(|e| (k.clone(), e.to_string()))?;
            }
            let loaded = py
                .import("aiccsim._algorithm")
                .and_then(|m| m.call_method1("load", (&spec, &path_text, &kwargs)))
                .map_err(|e| spec_error(py, e))?;
            let (class, handlers): (Py<PyAny>, Vec<String>) = loaded.extract().map_err(|e| spec_error(py, e))?;
            let mut defined = [false; HANDLERS];
            for h in &handlers {
                if let Some(i) = NIC_EVENTS.iter().position(|e| e.handler == h) {
                    defined[i] = true;
                }
            }
            Ok(PythonAlgorithm { spec: Arc::from(spec.as_str()), class, kwargs: kwargs.unbind(), defined })
        })?;
        let mut written = toml::Table::new();
        written.insert("class".into(), toml::Value::String(spec));
        written.insert("path".into(), toml::Value::String(path_text));
        written.extend(params);
        Ok((written, Arc::new(algorithm)))
    }

    fn watch_run(&self, control: &RunControl, started: Instant) -> Option<Box<dyn external::RunWatch>> {
        Some(Box::new(watchdog::start(control, started)))
    }
}

/// The key and message of `load`'s `SpecError`; any other exception at `cc.class`.
fn spec_error(py: Python<'_>, e: PyErr) -> (String, String) {
    let value = e.value(py);
    let key = value.getattr("key").and_then(|k| k.extract::<String>());
    let message = value.getattr("message").and_then(|m| m.extract::<String>());
    match (key, message) {
        (Ok(k), Ok(m)) => (k, m),
        _ => ("class".into(), format!("cannot load the class: {e}")),
    }
}

/// A `[cc]` value as the class's constructor receives it.
fn to_python<'py>(py: Python<'py>, v: &toml::Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        toml::Value::String(s) => s.into_pyobject(py)?.into_any(),
        toml::Value::Integer(i) => i.into_pyobject(py)?.into_any(),
        toml::Value::Float(f) => f.into_pyobject(py)?.into_any(),
        toml::Value::Boolean(b) => b.into_pyobject(py)?.to_owned().into_any(),
        toml::Value::Datetime(d) => d.to_string().into_pyobject(py)?.into_any(),
        toml::Value::Array(a) => {
            let items = a.iter().map(|x| to_python(py, x)).collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        toml::Value::Table(t) => {
            let d = PyDict::new(py);
            for (k, x) in t {
                d.set_item(k, to_python(py, x)?)?;
            }
            d.into_any()
        }
    })
}

struct PythonAlgorithm {
    /// "module:Class", as `cc.class` gives it.
    spec: Arc<str>,
    class: Py<PyAny>,
    kwargs: Py<PyDict>,
    defined: [bool; HANDLERS],
}

impl Algorithm for PythonAlgorithm {
    fn name(&self) -> &'static str {
        "python"
    }

    fn describe(&self) -> &'static str {
        "a Python class with one method per NIC event (cc.class = \"module:Class\"; docs/cc/programmable.md)"
    }

    fn sender(&self, facts: &FlowFacts) -> Cc {
        let program = Python::attach(|py| self.program(py, facts)).unwrap_or_else(|(e, what)| {
            external::fail(AlgorithmFailure {
                flow: facts.flow,
                at: SimTime::ZERO,
                message: failure_message(&what, &e),
                detail: Some(Box::new(e)),
            })
        });
        Cc::Custom(Box::new(Programmed::new(program, facts)))
    }
}

impl PythonAlgorithm {
    fn program(&self, py: Python<'_>, facts: &FlowFacts) -> Result<PythonProgram, (PyErr, String)> {
        let what = || format!("{}(**params)", self.spec);
        let instance = self.class.bind(py).call((), Some(self.kwargs.bind(py))).map_err(|e| (e, what()))?;
        let mut methods: [Option<Py<PyAny>>; HANDLERS] = Default::default();
        for (i, event) in NIC_EVENTS.iter().enumerate() {
            if self.defined[i] {
                // Bound once per flow: a call per event then skips the attribute lookup.
                methods[i] = Some(instance.getattr(event.handler).map_err(|e| (e, what()))?.unbind());
            }
        }
        let flow = Py::new(py, Flow::new(facts)).map_err(|e| (e, what()))?;
        let ack = Py::new(py, Ack::default()).map_err(|e| (e, what()))?;
        Ok(PythonProgram { spec: self.spec.clone(), flow_id: facts.flow, methods, flow, ack })
    }
}

/// "my_cc:MyCc.on_ack raised ZeroDivisionError: division by zero", then the traceback.
fn failure_message(what: &str, e: &PyErr) -> String {
    Python::attach(|py| {
        let summary = format!("{what} raised {}", one_line(py, e));
        let traceback = py
            .import("traceback")
            .and_then(|tb| tb.call_method1("format_exception", (e.get_type(py), e.value(py), e.traceback(py))))
            .and_then(|lines| lines.extract::<Vec<String>>())
            .map(|lines| lines.concat())
            .unwrap_or_default();
        format!("{summary}\n{}", traceback.trim_end())
    })
}

fn one_line(py: Python<'_>, e: &PyErr) -> String {
    let kind = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_else(|_| "an exception".into());
    let text = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
    match text.lines().next() {
        Some(first) if !first.is_empty() => format!("{kind}: {first}"),
        _ => kind,
    }
}

struct PythonProgram {
    spec: Arc<str>,
    flow_id: u32,
    methods: [Option<Py<PyAny>>; HANDLERS],
    flow: Py<Flow>,
    ack: Py<Ack>,
}

impl NicProgram for PythonProgram {
    fn on_event(&mut self, event: &NicEvent<'_>, cx: &mut FlowContext<'_>) {
        let i = event.index();
        let Some(method) = &self.methods[i] else { return };
        let outcome = Python::attach(|py| -> PyResult<()> {
            let flow = self.flow.bind(py);
            {
                let mut f = flow.borrow_mut();
                f.now = cx.now();
                f.rate = cx.rate();
                f.window = cx.window();
                f.incoming_at_start = cx.incoming_at_start();
            }
            let method = method.bind(py);
            let called = watchdog::call(|| match event {
                NicEvent::Start | NicEvent::Cnp | NicEvent::Timeout => method.call1((flow,)),
                NicEvent::Tx { bytes } => method.call1((flow, *bytes)),
                NicEvent::Ack(a) => {
                    let ack = self.ack.bind(py);
                    {
                        let mut w = ack.borrow_mut();
                        w.ack_seq = a.ack_seq;
                        w.newly_acked = a.newly_acked;
                        w.ecn_echo = a.ecn_echo;
                        w.rtt = a.rtt;
                        w.in_flight = a.in_flight;
                        w.snd_nxt = a.snd_nxt;
                        w.pint = a.pint;
                        w.feedback = a.feedback;
                        w.int.clear();
                        w.int.extend_from_slice(a.int);
                    }
                    method.call1((flow, ack))
                }
                NicEvent::Nack { seq, .. } => method.call1((flow, *seq)),
                NicEvent::RttProbe(reply) => method.call1((flow, Probe::from(*reply))),
                NicEvent::MessageDone(done) => method.call1((flow, Message::from(*done))),
                NicEvent::Timer { slot } => method.call1((flow, *slot)),
            });
            match called {
                Called::Done(result) => result?,
                // The run is stopping (wall-clock limit, Ctrl-C): what the handler set so far is
                // dropped with it.
                Called::Skipped => return Ok(()),
                Called::Stopped(ran) => {
                    watchdog::stopped_in(format!(
                        "{}.{} (flow {}, simulated time {} ns, after {:.1} s of wall-clock time in it)",
                        self.spec,
                        NIC_EVENTS[i].handler,
                        self.flow_id,
                        cx.now().as_ns_f64(),
                        ran.as_secs_f64()
                    ));
                    return Ok(());
                }
            };
            let mut f = flow.borrow_mut();
            // The setters checked the values and clamped the rate as `set_rate` does: writing
            // it back changes nothing unless the handler changed it.
            if f.rate.to_bits() != cx.rate().to_bits() {
                cx.set_rate(f.rate);
            }
            if f.window != cx.window() {
                cx.set_window(f.window);
            }
            for (slot, op) in f.timers.iter_mut().enumerate() {
                match std::mem::take(op) {
                    TimerOp::Keep => {}
                    TimerOp::Set(at) => cx.set_timer(slot, at),
                    TimerOp::Cancel => cx.cancel_timer(slot),
                }
            }
            Ok(())
        });
        if let Err(e) = outcome {
            let what = format!("{}.{}", self.spec, NIC_EVENTS[i].handler);
            external::fail(AlgorithmFailure {
                flow: self.flow_id,
                at: cx.now(),
                message: failure_message(&what, &e),
                detail: Some(Box::new(e)),
            });
        }
    }
}

#[derive(Clone, Copy, Default, Debug)]
enum TimerOp {
    #[default]
    Keep,
    Set(SimTime),
    Cancel,
}

/// `at` (seconds) as the exact picoseconds nearest to it, if it is a time from `now` on.
fn timer_time(slot: usize, at: f64, now: SimTime) -> PyResult<SimTime> {
    let wrong = |why: String| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "flow.set_timer({slot}, {at}): {why}; set_timer takes the simulated time to fire at, in seconds \
             (for a delay d, write flow.now + d)"
        ))
    };
    if !at.is_finite() || at < 0.0 {
        return Err(wrong("the time must be a finite number of seconds, not below 0".into()));
    }
    let ps = (at * 1e12).round();
    if ps >= u64::MAX as f64 {
        return Err(wrong("the time is beyond the simulation's clock".into()));
    }
    let at_ps = SimTime(ps as u64);
    if at_ps < now {
        return Err(wrong(format!("the time is before now ({} s)", now.as_secs_f64())));
    }
    Ok(at_ps)
}

/// The flow's context, one per flow for the whole run: what the algorithm knows of its flow and
/// path, the time, and the rate, window and timers it sets. Times are in seconds, rates in bits
/// per second, sizes in bytes.
#[pyclass(module = "aiccsim", name = "Flow")]
pub struct Flow {
    facts: FlowFacts,
    now: SimTime,
    rate: f64,
    window: Option<u64>,
    incoming_at_start: u32,
    timers: [TimerOp; MAX_TIMERS],
}

impl Flow {
    fn new(facts: &FlowFacts) -> Self {
        Flow {
            facts: *facts,
            now: SimTime::ZERO,
            rate: facts.line_rate.as_f64(),
            window: None,
            incoming_at_start: 0,
            timers: [TimerOp::Keep; MAX_TIMERS],
        }
    }
}

#[pymethods]
impl Flow {
    /// The flow's id (the first flow's, for a connection that carries several).
    #[getter]
    fn id(&self) -> u32 {
        self.facts.flow
    }
    /// Simulated time, seconds.
    #[getter]
    fn now(&self) -> f64 {
        self.now.as_secs_f64()
    }
    /// Simulated time, integer picoseconds (exact).
    #[getter]
    fn now_ps(&self) -> u64 {
        self.now.0
    }
    #[getter]
    fn line_rate(&self) -> f64 {
        self.facts.line_rate.as_f64()
    }
    #[getter]
    fn receiver_line_rate(&self) -> f64 {
        self.facts.receiver_line_rate.as_f64()
    }
    /// Round trip of a full packet and its ACK on the idle path, seconds.
    #[getter]
    fn base_rtt(&self) -> f64 {
        self.facts.base_rtt.as_secs_f64()
    }
    /// One-way time of a full packet on the idle path, seconds.
    #[getter]
    fn one_way_baseline(&self) -> f64 {
        self.facts.one_way_baseline.as_secs_f64()
    }
    #[getter]
    fn hops(&self) -> u32 {
        self.facts.hops
    }
    /// Payload bytes per full packet.
    #[getter]
    fn mtu(&self) -> u64 {
        self.facts.mtu
    }
    /// Wire bytes of a full packet.
    #[getter]
    fn packet_bytes(&self) -> u64 {
        self.facts.packet_bytes
    }
    /// (kind, group size) of the collective the flow belongs to, or None.
    #[getter]
    fn collective(&self) -> Option<(String, u32)> {
        self.facts.collective.map(|(kind, size)| (kind.to_string(), size))
    }
    /// In on_start: the flows heading to the same receiver as this one starts.
    #[getter]
    fn incoming_at_start(&self) -> u32 {
        self.incoming_at_start
    }
    /// The sending rate, bits per second (the line rate until set).
    #[getter]
    fn rate(&self) -> f64 {
        self.rate
    }
    /// Clamped to [1, line rate] as it is set; NaN, an infinity, zero or below is an error.
    #[setter]
    fn set_rate(&mut self, bits_per_second: f64) -> PyResult<()> {
        let line = self.facts.line_rate.as_f64();
        if !(bits_per_second.is_finite() && bits_per_second > 0.0) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "flow.rate = {bits_per_second}: a rate must be a finite number of bits per second above 0 \
                 (it is clamped to [1, the line rate {line}])"
            )));
        }
        self.rate = bits_per_second.clamp(1.0, line);
        Ok(())
    }
    /// Bytes allowed in flight, or None (rate only).
    #[getter]
    fn window(&self) -> Option<u64> {
        self.window
    }
    /// A whole number of bytes from 0 up, or None; anything else is an error.
    #[setter]
    fn set_window(&mut self, bytes: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.window = match bytes {
            None => None,
            Some(b) if b.is_none() => None,
            Some(b) => Some(b.extract::<u64>().map_err(|_| {
                let shown = b.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into());
                pyo3::exceptions::PyValueError::new_err(format!(
                    "flow.window = {shown}: a window is a whole number of bytes from 0 up (an int), or None for rate only"
                ))
            })?),
        };
        Ok(())
    }
    /// Fires `on_timer(flow, slot)` at simulated time `at` (seconds, from `now` on), replacing
    /// a pending timer of that slot.
    fn set_timer(&mut self, slot: usize, at: f64) -> PyResult<()> {
        let now = self.now;
        let op = self.timer(slot)?;
        *op = TimerOp::Set(timer_time(slot, at, now)?);
        Ok(())
    }
    fn cancel_timer(&mut self, slot: usize) -> PyResult<()> {
        *self.timer(slot)? = TimerOp::Cancel;
        Ok(())
    }
    fn __repr__(&self) -> String {
        format!(
            "<Flow {} at {} s: rate {} bit/s, window {:?}>",
            self.facts.flow,
            self.now.as_secs_f64(),
            self.rate,
            self.window
        )
    }
}

impl Flow {
    fn timer(&mut self, slot: usize) -> PyResult<&mut TimerOp> {
        self.timers.get_mut(slot).ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(format!("timer slot {slot}: the slots are 0 to {}", MAX_TIMERS - 1))
        })
    }
}

/// What an ACK tells the sender. The same object is passed to every `on_ack` of a flow, its
/// fields rewritten: keep the values, not the object.
#[pyclass(module = "aiccsim", name = "Ack")]
#[derive(Default)]
pub struct Ack {
    /// Cumulative bytes the receiver has in order.
    #[pyo3(get)]
    ack_seq: u64,
    /// Bytes newly acknowledged by this ACK.
    #[pyo3(get)]
    newly_acked: u64,
    /// A packet this ACK covers was marked CE.
    #[pyo3(get)]
    ecn_echo: bool,
    rtt: SimTime,
    /// Bytes in flight after this ACK.
    #[pyo3(get)]
    in_flight: u64,
    /// The next byte the sender will send.
    #[pyo3(get)]
    snd_nxt: u64,
    /// PINT feedback (0: none).
    #[pyo3(get)]
    pint: u8,
    /// The receiver half's two feedback words.
    #[pyo3(get)]
    feedback: [u32; 2],
    int: Vec<IntHop>,
}

#[pymethods]
impl Ack {
    /// RTT measured from the echoed timestamp, seconds.
    #[getter]
    fn rtt(&self) -> f64 {
        self.rtt.as_secs_f64()
    }
    /// INT records, one per switch hop: (time s, tx bytes, queue bytes, link bits/s).
    #[getter]
    fn int(&self) -> Vec<(f64, u64, u64, f64)> {
        self.int.iter().map(|h| (h.ts.as_secs_f64(), h.tx_bytes, h.qlen, h.rate.as_f64())).collect()
    }
    fn __repr__(&self) -> String {
        format!(
            "<Ack ack_seq={} newly_acked={} ecn_echo={} rtt={} in_flight={} snd_nxt={}>",
            self.ack_seq,
            self.newly_acked,
            self.ecn_echo,
            self.rtt.as_secs_f64(),
            self.in_flight,
            self.snd_nxt
        )
    }
}

/// An RTT probe's reply: times in seconds; the remote ones on the receiver's clock.
#[pyclass(module = "aiccsim", name = "Probe", frozen, get_all)]
pub struct Probe {
    sent_at: f64,
    remote_arrival: f64,
    remote_reply: f64,
    rtt: f64,
    /// The round trip less the time the probe waited at the receiver.
    network_rtt: f64,
}

impl From<ProbeReply> for Probe {
    fn from(r: ProbeReply) -> Self {
        Probe {
            sent_at: r.sent_at.as_secs_f64(),
            remote_arrival: r.remote_arrival as f64 / 1e12,
            remote_reply: r.remote_reply as f64 / 1e12,
            rtt: r.rtt.as_secs_f64(),
            network_rtt: r.network_rtt().as_secs_f64(),
        }
    }
}

/// A message of the connection whose last byte was acknowledged now.
#[pyclass(module = "aiccsim", name = "Message", frozen, get_all)]
pub struct Message {
    /// Payload bytes.
    nbytes: u64,
    /// When its first byte left the NIC, seconds.
    first_sent: f64,
}

impl From<MessageDone> for Message {
    fn from(m: MessageDone) -> Self {
        Message { nbytes: m.bytes, first_sent: m.first_sent.as_secs_f64() }
    }
}
