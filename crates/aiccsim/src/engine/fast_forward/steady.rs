//! When a group is steady, and at what rates: the test fast-forward applies to a group's recent
//! history (`history.rs`) before it skips it.
//!
//! Over four consecutive windows (of 1, 2, 4 or 8 check intervals, the shortest that passes):
//! - every flow delivers the same bytes in each window, within the tolerance (and one packet,
//!   the granularity of what can be counted), and more than nothing;
//! - every flow sends what it delivers (its bytes in flight, hence its queues, do not grow);
//! - no flow loses a packet (no NACK, timeout or retransmission);
//! - every flow's algorithm holds its steady signal (rate or window) within twice the tolerance
//!   from the first window to the last, judged on the windows' means;
//! - no port of the group sends a PAUSE or drops a packet, and its queue's mean moves by no more
//!   than two packets and five times the tolerance from the first window to the last.
//!
//! The rates credited during a skip are those of the four windows together.

use super::groups::Group;
use super::history::{History, SCALES, WINDOWS};

/// A flow's progress over the windows judged.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlowSpan {
    pub flow: u32,
    /// Bytes acknowledged over `time` (between the acknowledgements nearest the span's ends).
    pub acked: u64,
    pub time: u64,
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

/// Whether group `g`, whose members have not changed for `settled` checks, is steady; `packet`
/// is a full packet's payload (what byte counts are exact to).
pub(crate) fn judge(h: &History, g: &Group, settled: u64, tolerance: f64, packet: u64) -> Option<Steady> {
    SCALES.iter().take_while(|&&s| WINDOWS * s <= settled.min(h.checks.saturating_sub(1))).find_map(|&s| {
        let flows = g.flows.iter().map(|&f| flow_steady(h, f, s, tolerance, packet)).collect::<Option<Vec<_>>>()?;
        let ports = g.ports.iter().map(|&p| port_steady(h, p, s, tolerance, packet)).collect::<Option<Vec<_>>>()?;
        Some(Steady { checks: WINDOWS * s, flows, ports })
    })
}

/// `|a - b| <= slack`.
fn near(a: f64, b: f64, slack: f64) -> bool {
    (a - b).abs() <= slack
}

/// The mean of `value` over window `i` (0: the latest) of `s` checks.
fn window_mean(s: u64, i: u64, value: impl Fn(u64) -> f64) -> f64 {
    (i * s..(i + 1) * s).map(value).sum::<f64>() / s as f64
}

fn flow_steady(h: &History, f: u32, s: u64, tolerance: f64, packet: u64) -> Option<FlowSpan> {
    let (last, first) = (h.flow(f, 0), h.flow(f, WINDOWS * s));
    let acked = last.acked - first.acked;
    let time = last.acked_at.0.saturating_sub(first.acked_at.0);
    if acked == 0 || time == 0 || last.trouble != first.trouble {
        return None;
    }
    let mean = acked as f64 / WINDOWS as f64;
    let even = (0..WINDOWS).all(|i| {
        let d = h.flow(f, i * s).acked - h.flow(f, (i + 1) * s).acked;
        near(d as f64, mean, tolerance * mean + packet as f64)
    });
    let sent = last.sent - first.sent;
    if !even || !near(sent as f64, acked as f64, tolerance * acked as f64 + 2.0 * packet as f64) {
        return None;
    }
    let signal = |k: u64| h.flow(f, k).signal;
    if (0..=WINDOWS * s).any(|k| signal(k).is_nan()) {
        return None;
    }
    let (newest, oldest) = (window_mean(s, 0, signal), window_mean(s, WINDOWS - 1, signal));
    if !near(newest, oldest, 2.0 * tolerance * newest.abs().max(oldest.abs())) {
        return None;
    }
    Some(FlowSpan {
        flow: f,
        acked,
        time,
        acks: u64::from(last.acks.wrapping_sub(first.acks)),
        cnps: u64::from(last.cnps.wrapping_sub(first.cnps)),
        feedback_acks: u64::from(last.feedback_acks.wrapping_sub(first.feedback_acks)),
    })
}

fn port_steady(h: &History, p: u32, s: u64, tolerance: f64, packet: u64) -> Option<PortSpan> {
    let (last, first) = (h.port(p, 0), h.port(p, WINDOWS * s));
    if last.pfc != first.pfc || last.drops != first.drops {
        return None;
    }
    let queued = |k: u64| h.port(p, k).queued as f64;
    let (newest, oldest) = (window_mean(s, 0, queued), window_mean(s, WINDOWS - 1, queued));
    if !near(newest, oldest, 2.0 * packet as f64 + 5.0 * tolerance * newest.max(oldest)) {
        return None;
    }
    Some(PortSpan {
        port: p,
        tx_bytes: last.tx_bytes - first.tx_bytes,
        tx_packets: last.tx_packets - first.tx_packets,
        ecn_marks: last.ecn_marks - first.ecn_marks,
    })
}
