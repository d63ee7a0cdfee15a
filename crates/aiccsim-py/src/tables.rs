//! The result tables as columns: the same columns, in the same order and with the same values,
//! as the CSV files of `aiccsim run` (crates/aiccsim/src/results.rs). An empty cell there is a
//! missing value here.

use crate::columns::Column;
use aiccsim::metrics::iterations::IterationRecord;
use aiccsim::metrics::trace::kind_name;
use aiccsim::time::SimTime;
use aiccsim::Results;

/// Nanoseconds, as the CSV files write them: the double nearest to the exact three-decimal
/// value, which is what reading the file gives too.
fn ns(t: SimTime) -> f64 {
    t.0 as f64 / 1000.0
}

/// The CSV files round these ratios to six decimals; reading the text back gives the same value
/// as reading the file.
fn six_decimals(x: f64) -> f64 {
    format!("{x:.6}").parse().expect("a formatted float parses")
}

/// `None` for a table the run did not record (timelines or trace off), as no file is written.
pub fn table(r: &Results, name: &str) -> Option<Vec<Column>> {
    match name {
        "flows" => Some(flows(r)),
        "ports" => Some(ports(r)),
        "queues" => r.timelines.then(|| queues(r)),
        "rates" => r.timelines.then(|| rates(r)),
        "pauses" => r.timelines.then(|| pauses(r)),
        "trace" => r.trace.is_some().then(|| trace(r)),
        "iterations" => r.iterations.as_deref().map(iterations),
        _ => None,
    }
}

pub const NAMES: [&str; 7] = ["flows", "ports", "queues", "rates", "pauses", "trace", "iterations"];

fn flows(r: &Results) -> Vec<Column> {
    let f = &r.flows;
    vec![
        Column::int("flow_id", f.iter().map(|x| x.flow_id.into())),
        Column::int("src", f.iter().map(|x| x.src.into())),
        Column::int("dst", f.iter().map(|x| x.dst.into())),
        Column::int("size_bytes", f.iter().map(|x| x.size_bytes as i64)),
        Column::float("start_ns", f.iter().map(|x| ns(x.start))),
        Column::float_opt("finish_ns", f.iter().map(|x| x.finish.map(ns))),
        Column::float_opt("fct_ns", f.iter().map(|x| x.fct().map(ns))),
        Column::float("ideal_fct_ns", f.iter().map(|x| ns(x.ideal_fct))),
        Column::float_opt("slowdown", f.iter().map(|x| x.slowdown().map(six_decimals))),
        Column::str_opt("collective", f.iter().map(|x| Some(x.collective.as_str()).filter(|c| !c.is_empty()))),
        Column::int("retransmitted_bytes", f.iter().map(|x| x.retransmitted_bytes as i64)),
        Column::int("timeouts", f.iter().map(|x| x.timeouts.into())),
    ]
}

fn ports(r: &Results) -> Vec<Column> {
    let p = &r.ports;
    vec![
        Column::str("node", p.iter().map(|x| x.node.as_str())),
        Column::int("port", p.iter().map(|x| x.port.into())),
        Column::str("peer", p.iter().map(|x| x.peer.as_str())),
        Column::int("tx_packets", p.iter().map(|x| x.stats.tx_packets as i64)),
        Column::int("tx_bytes", p.iter().map(|x| x.stats.tx_bytes as i64)),
        Column::int("pause_sent", p.iter().map(|x| x.stats.pause_sent as i64)),
        Column::int("resume_sent", p.iter().map(|x| x.stats.resume_sent as i64)),
        Column::int("drops", p.iter().map(|x| x.stats.drops as i64)),
        Column::int("ecn_marks", p.iter().map(|x| x.stats.ecn_marks as i64)),
        Column::int("max_queue_bytes", p.iter().map(|x| x.max_queue as i64)),
        Column::float("paused_ns", p.iter().map(|x| ns(x.stats.paused_time))),
    ]
}

fn queues(r: &Results) -> Vec<Column> {
    let q = &r.queues;
    vec![
        Column::float("time_ns", q.iter().map(|x| ns(x.time))),
        Column::int("switch", q.iter().map(|x| x.switch.into())),
        Column::int("port", q.iter().map(|x| x.port.into())),
        Column::int("bytes", q.iter().map(|x| x.bytes as i64)),
    ]
}

fn rates(r: &Results) -> Vec<Column> {
    let s = &r.rates;
    vec![
        Column::float("time_ns", s.iter().map(|x| ns(x.time))),
        Column::int("flow", s.iter().map(|x| x.flow.into())),
        Column::float("rate_gbps", s.iter().map(|x| six_decimals(x.rate_bps / 1e9))),
        Column::int_opt("window_bytes", s.iter().map(|x| x.window_bytes.map(|w| w as i64))),
        Column::float("throughput_gbps", s.iter().map(|x| six_decimals(x.throughput_bps / 1e9))),
    ]
}

fn pauses(r: &Results) -> Vec<Column> {
    let p = &r.pauses;
    let topo = &r.topology;
    vec![
        Column::float("time_ns", p.iter().map(|x| ns(x.time))),
        Column::str("node", p.iter().map(|x| topo.node_name(x.node))),
        Column::int("port", p.iter().map(|x| x.port.into())),
        Column::str("peer", p.iter().map(|x| topo.node_name(x.peer))),
        Column::int("priority", p.iter().map(|x| x.priority.into())),
        Column::str("event", p.iter().map(|x| if x.pause { "pause" } else { "resume" })),
    ]
}

fn trace(r: &Results) -> Vec<Column> {
    let t = r.trace.as_deref().unwrap_or_default();
    let topo = &r.topology;
    vec![
        Column::float("time_ns", t.iter().map(|x| ns(x.time))),
        Column::str("event", t.iter().map(|x| x.event.as_str())),
        Column::str("node", t.iter().map(|x| topo.node_name(x.node))),
        Column::int("port", t.iter().map(|x| x.port.into())),
        Column::str("kind", t.iter().map(|x| kind_name(x.kind))),
        Column::int_opt("flow", t.iter().map(|x| x.flow.map(i64::from))),
        Column::int("seq", t.iter().map(|x| x.seq as i64)),
        Column::int("size_bytes", t.iter().map(|x| x.size.into())),
        Column::int("priority", t.iter().map(|x| x.priority.into())),
        Column::int("ecn", t.iter().map(|x| x.ecn.into())),
        Column::int_opt("queue_bytes", t.iter().map(|x| x.queue_bytes.map(|q| q as i64))),
    ]
}

fn iterations(i: &[IterationRecord]) -> Vec<Column> {
    vec![
        Column::int("iteration", i.iter().map(|x| x.iteration.into())),
        Column::float_opt("start_ns", i.iter().map(|x| x.start.map(ns))),
        Column::float_opt("end_ns", i.iter().map(|x| x.end.map(ns))),
        Column::float_opt("duration_ns", i.iter().map(|x| x.duration().map(ns))),
        Column::float("compute_ns", i.iter().map(|x| ns(x.compute))),
        Column::float_opt("exposed_comm_ns", i.iter().map(|x| x.exposed_comm().map(ns))),
        Column::int("flows", i.iter().map(|x| x.flows.into())),
        Column::int("bytes", i.iter().map(|x| x.bytes as i64)),
    ]
}
