//! Checks a parsed scenario for what its types cannot express, reading the scenario alone. Each
//! failure is (dotted key, message) and the message says what to write instead.
//!
//! A workload's own settings are checked by its kind (`WorkloadKind::check`, in the kind's file
//! under `workload/`). What needs the fabric (hosts and switches that must exist, NIC speeds,
//! the headroom of each switch's ports, the number of flows a workload makes) is checked where
//! the fabric is built, in `engine/build.rs`.

use super::{LinkAction, Placement, Scenario, SwitchConfig};
use crate::cc::Check;
use crate::time::SimTime;
pub use crate::workload::jobs::moved;

/// The failure of a check.
pub fn fail(key: impl Into<String>, msg: impl Into<String>) -> Check {
    Err((key.into(), msg.into()))
}

pub fn validate(s: &Scenario) -> Check {
    s.topology.check()?;

    if s.simulation.stop_time == Some(SimTime::ZERO) {
        return fail("simulation.stop_time", "must be positive, e.g. \"10ms\"");
    }

    nic(s)?;

    if let Some(problem) = s.simulation.fast_forward.problem() {
        return fail("simulation.fast_forward", problem);
    }

    for (key, v) in [("clocks.offset", s.clocks.offset), ("clocks.noise", s.clocks.noise)] {
        if v > SimTime::from_ms(1000) {
            return fail(key, format!("{v} is more than a second; clock errors are nanoseconds to microseconds"));
        }
    }

    // The algorithm first: its telemetry header is part of every data packet.
    s.cc.as_algorithm().validate()?;
    let max_packet = s.nic.mtu.0 + s.nic.header.0 + s.cc.as_algorithm().extra_header_bytes().0;
    switch(&s.switch, max_packet)?;
    super::switch::check_trimming(s, max_packet)?;
    // (A NIC's RTT probes travel at the data priority too.)
    super::credit::check(&s.switch, max_packet.max(s.nic.cnp_size.0))?;
    if s.switch.flow_control == super::FlowControl::Credit && !s.events.is_empty() {
        return fail(
            "events",
            "link events are not modelled with switch.flow_control = \"credit\" (a failed link would keep the credits it carried): remove [[events]], or run PFC",
        );
    }

    traffic(s)?;
    events(s)?;

    // Output.
    if let Some(iv) = s.output.sample_interval {
        if iv.0 == 0 {
            return fail("output.sample_interval", "must be positive, e.g. \"10us\"");
        }
    }
    if let Some(trace) = &s.output.trace {
        if trace.max_rows == 0 {
            return fail("output.trace.max_rows", "must be at least 1 (leave out [output.trace] for no trace)");
        }
    }
    Ok(())
}

/// `[nic]`: the packet format, loss recovery, and a stall timeout longer than its retries.
fn nic(s: &Scenario) -> Check {
    let nic = &s.nic;
    let longest_rto = SimTime(nic.rto.0.saturating_mul(super::MAX_RTO_BACKOFF as u64));
    if let Some(stall) = s.simulation.stall_timeout {
        // (A timeout so long that it saturates the clock leaves only "never" as a stall timeout.)
        if stall <= longest_rto && stall < SimTime::MAX {
            return fail(
                "simulation.stall_timeout",
                format!(
                    "{stall} would call a flow waiting out its retransmission timeout stalled: make it longer than nic.rto x {} = {longest_rto}",
                    super::MAX_RTO_BACKOFF
                ),
            );
        }
    }
    if nic.mtu.0 == 0 || nic.mtu.0 > 65_536 {
        return fail("nic.mtu", format!("payload per packet must be 1B..64KiB, got {}", nic.mtu));
    }
    for (key, v) in [
        ("nic.header", nic.header),
        ("nic.ack_size", nic.ack_size),
        ("nic.cnp_size", nic.cnp_size),
        ("nic.pause_size", nic.pause_size),
    ] {
        if v.0 == 0 || v.0 > 4096 {
            return fail(key, format!("must be 1B..4096B, got {v}"));
        }
    }
    if nic.ack_every == 0 {
        return fail("nic.ack_every", "must be at least 1 (ACK every packet)");
    }
    if nic.rto.0 == 0 {
        return fail("nic.rto", "the retransmission timeout must be positive, e.g. \"1ms\"");
    }
    if nic.sack_bitmap < 64 || nic.sack_bitmap > super::MAX_SACK_BITMAP || !nic.sack_bitmap.is_multiple_of(64) {
        return fail(
            "nic.sack_bitmap",
            format!("must be a multiple of 64 from 64 to {} packets, got {}", super::MAX_SACK_BITMAP, nic.sack_bitmap),
        );
    }
    if nic.reorder_window == 0 || nic.reorder_window >= nic.sack_bitmap {
        return fail(
            "nic.reorder_window",
            format!(
                "must be at least 1 and below nic.sack_bitmap ({}) packets, got {}",
                nic.sack_bitmap, nic.reorder_window
            ),
        );
    }
    if nic.ack_out_of_order == super::AckOutOfOrder::Coalesced && nic.recovery != super::Recovery::Selective {
        return fail(
            "nic.ack_out_of_order",
            "\"coalesced\" needs nic.recovery = \"selective\": a go-back-N receiver keeps no packet after a gap to acknowledge",
        );
    }
    super::nic::check_load_balancing(nic)?;
    if nic.data_priority > 6 {
        return fail(
            "nic.data_priority",
            format!("must be 0..=6 (7 is the control priority), got {}", nic.data_priority),
        );
    }
    if !(0.0..1.0).contains(&nic.probe_loss) {
        return fail(
            "nic.probe_loss",
            format!(
                "the fraction of RTT probes lost must be in [0, 1) (the Barre slides measured 0.089), got {}",
                nic.probe_loss
            ),
        );
    }

    Ok(())
}

/// `[switch]`: buffer, PFC, flowlets, the adaptive routings' settings, ECN; `max_packet` is the largest data packet.
fn switch(sw: &SwitchConfig, max_packet: u64) -> Check {
    if sw.buffer.0 < max_packet {
        return fail("switch.buffer", format!("{} is smaller than one packet ({max_packet} B)", sw.buffer));
    }
    if let Some(xoff) = sw.pfc.xoff {
        if xoff.0 > sw.buffer.0 {
            return fail("switch.pfc.xoff", format!("{xoff} is above the buffer size {}", sw.buffer));
        }
        if sw.pfc.xon_delta.0 >= xoff.0 {
            return fail("switch.pfc.xon_delta", format!("must be below xoff ({xoff}), got {}", sw.pfc.xon_delta));
        }
    }
    if sw.pfc.xon_delta >= sw.buffer {
        return fail(
            "switch.pfc.xon_delta",
            format!(
                "{} is not below the buffer ({}): RESUME would wait for XOFF - xon_delta, which is then never above zero; the default is \"3KB\"",
                sw.pfc.xon_delta, sw.buffer
            ),
        );
    }
    if !(sw.pfc.dynamic_alpha > 0.0 && sw.pfc.dynamic_alpha <= 64.0) {
        return fail("switch.pfc.dynamic_alpha", format!("must be in (0, 64], got {}", sw.pfc.dynamic_alpha));
    }
    if let Some(h) = sw.pfc.headroom {
        if h.0 >= sw.buffer.0 {
            return fail("switch.pfc.headroom", format!("{h} per port leaves no shared buffer of {}", sw.buffer));
        }
        if h.0 > 0 && h.0 < max_packet {
            return fail(
                "switch.pfc.headroom",
                format!(
                    "{h} holds no packet ({max_packet} B), so every packet that arrives after a PAUSE would be dropped; give at least one packet, or 0 for no headroom pool"
                ),
            );
        }
    }
    if sw.pfc.reserve.0 >= sw.buffer.0 {
        return fail(
            "switch.pfc.reserve",
            format!("{} per port leaves no shared buffer of {}", sw.pfc.reserve, sw.buffer),
        );
    }
    if let Some(alpha) = sw.egress_alpha {
        if !(alpha > 0.0 && alpha <= 64.0) {
            return fail("switch.egress_alpha", format!("must be in (0, 64], got {alpha}"));
        }
    }
    if let Some(f) = &sw.flowlet {
        if !f.slots.is_power_of_two() || f.slots > 1 << 24 {
            return fail(
                "switch.flowlet.slots",
                format!("must be a power of two from 1 to 16777216 (a switch's table is hashed by masking), got {}; e.g. 4096", f.slots),
            );
        }
        if f.gap == SimTime::ZERO {
            return fail(
                "switch.flowlet.gap",
                "must be positive: with no gap every packet would start a flowlet (that is routing = \"spray\"); e.g. \"5us\"",
            );
        }
    }
    super::switch::check_adaptive(sw)?;
    if sw.ecn.kmin > sw.ecn.kmax {
        return fail("switch.ecn.kmin", format!("kmin ({}) must not exceed kmax ({})", sw.ecn.kmin, sw.ecn.kmax));
    }
    if !(0.0..=1.0).contains(&sw.ecn.pmax) {
        return fail("switch.ecn.pmax", format!("a probability must be in [0, 1], got {}", sw.ecn.pmax));
    }
    Ok(())
}

/// `[[events]]`, each on its own (the links they name, and whether a failure leaves the hosts
/// connected, are checked with the fabric in `engine/build.rs`).
fn events(s: &Scenario) -> Check {
    for (i, e) in s.events.iter().enumerate() {
        let key = |k: &str| format!("events[{i}].{k}");
        if e.link[0] == e.link[1] {
            return fail(
                key("link"),
                format!("names {} twice; a link joins two different nodes, e.g. [\"s0\", \"s2\"]", e.link[0]),
            );
        }
        match (e.action, e.bandwidth) {
            (LinkAction::Slow, None) => {
                return fail(
                    key("bandwidth"),
                    "missing: action = \"slow\" needs the link's new bandwidth, e.g. bandwidth = \"25Gbps\"",
                );
            }
            (LinkAction::Fail | LinkAction::Restore, Some(_)) => {
                return fail(
                    key("bandwidth"),
                    format!("is for action = \"slow\"; a {} keeps the link's bandwidth: remove it", e.action.name()),
                );
            }
            _ => {}
        }
        if e.action == LinkAction::Slow && e.detection.is_some() {
            return fail(
                key("detection"),
                "is for action = \"fail\" and \"restore\": a slowed link keeps its routes; remove it",
            );
        }
    }
    Ok(())
}

/// `[workload]` or `[[jobs]]`: one of them, each workload's own settings, the jobs' names.
fn traffic(s: &Scenario) -> Check {
    match (&s.workload, s.jobs.is_empty()) {
        (None, true) => {
            return fail(
                "workload",
                "the scenario has no traffic: add a [workload] section (one job on every host) or [[jobs]]",
            )
        }
        (Some(_), false) => {
            return fail("jobs", "give either [workload] or [[jobs]], not both (a [workload] is one job on every host)")
        }
        (Some(w), true) => return w.as_kind().check(),
        (None, false) => {}
    }
    let mut names = std::collections::BTreeSet::new();
    for (i, job) in s.jobs.iter().enumerate() {
        if !names.insert(job.name(i)) {
            return fail(format!("jobs[{i}].name"), format!("another job is already named \"{}\"", job.name(i)));
        }
        if job.workload.0.is_empty() {
            return fail(
                format!("jobs[{i}].workload"),
                "the job runs nothing; give it a workload table or a list of them",
            );
        }
        if job.hosts.is_some() && job.placement.is_some() {
            return fail(
                format!("jobs[{i}].placement"),
                "places `ranks`; a job given `hosts` runs on those, in that order: remove one of the two",
            );
        }
        if job.seed.is_some() && job.placement != Some(Placement::Random) {
            return fail(
                format!("jobs[{i}].seed"),
                "only the random placement draws; remove seed or set placement = \"random\"",
            );
        }
        for (k, w) in job.workload.0.iter().enumerate() {
            moved(&job.workload_key(i, k), w.as_kind().check())?;
        }
    }
    Ok(())
}
