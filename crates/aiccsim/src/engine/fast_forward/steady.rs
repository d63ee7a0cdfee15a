//! When a group is steady, and at what rates: the test fast-forward applies to a group's recent
//! history (`history.rs`) before it skips it.
//!
//! Over four consecutive windows (of 1 to 16 check intervals, the shortest that passes):
//! - every connection has at least `1 / tolerance` packets acknowledged over the four (so that
//!   its rate is known to the tolerance); the first two windows and the last two acknowledge the
//!   same bytes within the tolerance and two packets (no trend), and no window strays from the
//!   mean by more than four times the tolerance and a packet (no wide oscillation: a flow
//!   sharing a bottleneck has some noise from window to window, which the mean of four averages);
//! - every connection sends what it gets acknowledged (its bytes in flight, hence its queues,
//!   do not grow);
//! - no connection loses a packet (no NACK, timeout or retransmission);
//! - every connection's algorithm holds its steady signal (rate or window): its mean over the
//!   first two windows and over the last two within four times the tolerance;
//! - no port of the group sends a PAUSE or drops a packet, and its queue's mean moves by no more
//!   than two packets and five times the tolerance from the first window to the last.
//!
//! The rates credited during a skip are those of the four windows together.

use super::groups::Group;
use super::history::{History, SCALES, WINDOWS};
use crate::time::SimTime;

/// A connection's progress over the windows judged.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlowSpan {
    pub conn: u32,
    /// Bytes acknowledged over `time` (between the acknowledgements nearest the span's ends).
    pub acked: u64,
    pub time: u64,
    /// How much its rate moved from the first half of the span to the second, as a fraction
    /// of the rate (each half's rate measured between acknowledgements): a skip may last only
    /// as long as this drift, extrapolated, keeps the credit within the tolerance.
    pub drift: f64,
    pub acks: u64,
    pub cnps: u64,
    pub feedback_acks: u64,
}

/// A port's progress over the windows judged.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortSpan {
    pub port: u32,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub ecn_marks: u64,
}

/// A steady group's progress over `checks` check intervals: the rates a skip credits.
#[derive(Clone, Debug)]
pub(crate) struct Steady {
    pub checks: u64,
    pub flows: Vec<FlowSpan>,
    pub ports: Vec<PortSpan>,
}

/// Why a group was not judged steady (the first condition that failed, at the longest windows
/// tried): `summary.json` counts them, so that a run that skipped nothing says why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum NotSteady {
    /// Its members changed too recently for four windows.
    Young,
    TooFewPackets,
    Uneven,
    InFlightGrows,
    Loss,
    SignalDrifts,
    /// The algorithm never declares itself steady (one written in Python).
    NoSignal,
    Pfc,
    QueueDrifts,
}

impl NotSteady {
    pub(crate) fn name(self) -> &'static str {
        match self {
            NotSteady::Young => "members_changed",
            NotSteady::TooFewPackets => "too_few_packets",
            NotSteady::Uneven => "uneven_windows",
            NotSteady::InFlightGrows => "in_flight_grows",
            NotSteady::Loss => "loss",
            NotSteady::SignalDrifts => "signal_drifts",
            NotSteady::NoSignal => "never_steady_algorithm",
            NotSteady::Pfc => "pfc_or_drops",
            NotSteady::QueueDrifts => "queue_drifts",
        }
    }
}

/// Whether group `g`, whose members have not changed for `settled` checks, is steady; `packet`
/// is a full packet's payload (what byte counts are exact to).
pub(crate) fn judge(h: &History, g: &Group, settled: u64, tolerance: f64, packet: u64) -> Result<Steady, NotSteady> {
    let mut why = NotSteady::Young;
    for &s in SCALES.iter().take_while(|&&s| WINDOWS * s <= settled.min(h.checks.saturating_sub(1))) {
        let at_scale = || -> Result<Steady, NotSteady> {
            let flows =
                g.conns.iter().map(|&f| flow_steady(h, f, s, tolerance, packet)).collect::<Result<Vec<_>, _>>()?;
            let ports =
                g.ports.iter().map(|&p| port_steady(h, p, s, tolerance, packet)).collect::<Result<Vec<_>, _>>()?;
            Ok(Steady { checks: WINDOWS * s, flows, ports })
        };
        match at_scale() {
            Ok(steady) => return Ok(steady),
            Err(e) => why = e,
        }
    }
    Err(why)
}

/// `|a - b| <= slack`.
fn near(a: f64, b: f64, slack: f64) -> bool {
    (a - b).abs() <= slack
}

/// The mean of `value` over window `i` (0: the latest) of `s` checks.
fn window_mean(s: u64, i: u64, value: impl Fn(u64) -> f64) -> f64 {
    (i * s..(i + 1) * s).map(value).sum::<f64>() / s as f64
}

fn flow_steady(h: &History, f: u32, s: u64, tolerance: f64, packet: u64) -> Result<FlowSpan, NotSteady> {
    let (last, first) = (h.flow(f, 0), h.flow(f, WINDOWS * s));
    if last.trouble != first.trouble {
        return Err(NotSteady::Loss);
    }
    let acked = last.acked - first.acked;
    // (No acknowledgement before the first snapshot: its time is not one to measure from.)
    let time = if first.acked_at == SimTime::MAX { 0 } else { last.acked_at.0.saturating_sub(first.acked_at.0) };
    if (acked as f64) < packet as f64 / tolerance || time == 0 {
        return Err(NotSteady::TooFewPackets);
    }
    let mean = acked as f64 / WINDOWS as f64;
    let window = |i: u64| (h.flow(f, i * s).acked - h.flow(f, (i + 1) * s).acked) as f64;
    let (newer, older) = (window(0) + window(1), window(2) + window(3));
    let trend = !near(newer, older, tolerance * (newer + older) / 2.0 + 2.0 * packet as f64);
    if trend || (0..WINDOWS).any(|i| !near(window(i), mean, 4.0 * tolerance * mean + packet as f64)) {
        return Err(NotSteady::Uneven);
    }
    let sent = last.sent - first.sent;
    if !near(sent as f64, acked as f64, tolerance * acked as f64 + 2.0 * packet as f64) {
        return Err(NotSteady::InFlightGrows);
    }
    let signal = |k: u64| h.flow(f, k).signal;
    if (0..=WINDOWS * s).any(|k| signal(k).is_nan()) {
        return Err(NotSteady::NoSignal);
    }
    let (newer, older) = (window_mean(2 * s, 0, signal), window_mean(2 * s, 1, signal));
    if !near(newer, older, 4.0 * tolerance * newer.abs().max(older.abs())) {
        return Err(NotSteady::SignalDrifts);
    }
    let mid = h.flow(f, 2 * s);
    let rate = |a: &super::history::FlowSnap, b: &super::history::FlowSnap| {
        (a.acked - b.acked) as f64 / (a.acked_at.0.saturating_sub(b.acked_at.0).max(1)) as f64
    };
    let (r_new, r_old) = (rate(last, mid), rate(mid, first));
    let drift = if first.acked_at == SimTime::MAX || mid.acked == first.acked {
        f64::INFINITY
    } else {
        (r_new - r_old).abs() / (r_new + r_old) * 2.0
    };
    Ok(FlowSpan {
        conn: f,
        acked,
        time,
        drift,
        acks: u64::from(last.acks.wrapping_sub(first.acks)),
        cnps: u64::from(last.cnps.wrapping_sub(first.cnps)),
        feedback_acks: u64::from(last.feedback_acks.wrapping_sub(first.feedback_acks)),
    })
}

fn port_steady(h: &History, p: u32, s: u64, tolerance: f64, packet: u64) -> Result<PortSpan, NotSteady> {
    let (last, first) = (h.port(p, 0), h.port(p, WINDOWS * s));
    if last.pfc != first.pfc || last.drops != first.drops {
        return Err(NotSteady::Pfc);
    }
    let queued = |k: u64| h.port(p, k).queued as f64;
    let (newest, oldest) = (window_mean(s, 0, queued), window_mean(s, WINDOWS - 1, queued));
    if !near(newest, oldest, 2.0 * packet as f64 + 5.0 * tolerance * newest.max(oldest)) {
        return Err(NotSteady::QueueDrifts);
    }
    Ok(PortSpan {
        port: p,
        tx_bytes: last.tx_bytes - first.tx_bytes,
        tx_packets: last.tx_packets - first.tx_packets,
        ecn_marks: last.ecn_marks - first.ecn_marks,
    })
}
