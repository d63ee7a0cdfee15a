//! The per-packet trace: filtered by flow and node, capped, and consistent with what the
//! switches did.

use crate::common;

use aiccsim::metrics::trace::TraceEvent;
use aiccsim::wire::packet::PacketKind;

fn incast_with_trace(trace: &str) -> aiccsim::Results {
    let text = format!(
        r#"
[topology]
kind = "star"
hosts = 3
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[switch]
buffer = "200KB"
pfc = {{ enabled = false }}
[workload]
kind = "incast"
senders = "1..=2"
receiver = 0
size = "200KB"
[output.trace]
{trace}
"#
    );
    common::run(&text)
}

fn count(r: &aiccsim::Results, event: TraceEvent, kind: PacketKind) -> usize {
    r.trace.as_ref().unwrap().iter().filter(|t| t.event == event && t.kind == kind).count()
}

#[test]
fn every_data_packet_into_the_switch_is_sent_on_or_dropped() {
    let r = incast_with_trace("flows = [1]\nnodes = [\"s0\"]");
    let rows = r.trace.as_ref().unwrap();
    let s0 = r.topology.num_hosts;
    assert!(rows.iter().all(|t| t.flow == Some(1) && t.node == s0), "the filters hold");
    let (arrived, sent, dropped) = (
        count(&r, TraceEvent::Arrive, PacketKind::Data),
        count(&r, TraceEvent::Send, PacketKind::Data),
        count(&r, TraceEvent::Drop, PacketKind::Data),
    );
    assert!(dropped > 0, "the 200 KB buffer overflows");
    assert_eq!(arrived, sent + dropped);
    // Flow 1 is 200 packets; what was dropped was sent again.
    assert_eq!(sent, 200 + r.flows[1].retransmitted_bytes as usize / 1000 - dropped);
    // Each ACK the receiver sent back through the switch is in the trace both ways.
    assert_eq!(count(&r, TraceEvent::Arrive, PacketKind::Ack), count(&r, TraceEvent::Send, PacketKind::Ack));
    // Times never go backwards.
    assert!(rows.windows(2).all(|w| w[0].time <= w[1].time));
    assert_eq!(r.summary.trace.as_ref().unwrap().rows, rows.len() as u64);
}

#[test]
fn a_host_filter_sees_only_that_host() {
    let r = incast_with_trace("nodes = [\"h0\"]");
    let rows = r.trace.as_ref().unwrap();
    assert!(rows.iter().all(|t| t.node == 0));
    // The receiver: data in from both senders, ACKs (and NACKs) out.
    assert!(rows.iter().any(|t| t.event == TraceEvent::Arrive && t.flow == Some(0)));
    assert!(rows.iter().any(|t| t.event == TraceEvent::Arrive && t.flow == Some(1)));
    assert!(rows.iter().filter(|t| t.event == TraceEvent::Send).all(|t| t.kind != PacketKind::Data));
}

#[test]
fn the_row_limit_keeps_the_first_rows_and_counts_the_rest() {
    let all = incast_with_trace("flows = [1]");
    let capped = incast_with_trace("flows = [1]\nmax_rows = 10");
    let (a, c) = (all.trace.as_ref().unwrap(), capped.trace.as_ref().unwrap());
    assert_eq!(c.len(), 10);
    let s = capped.summary.trace.as_ref().unwrap();
    assert_eq!(s.rows_dropped as usize, a.len() - 10);
    assert!(a.iter().zip(c).all(|(x, y)| x.time == y.time && x.seq == y.seq && x.event == y.event));
    // The trace changes nothing else.
    assert_eq!(all.deterministic_summary()["fct_ns"], capped.deterministic_summary()["fct_ns"]);
}

#[test]
fn the_trace_is_written_identically_twice() {
    let write = || {
        let r = incast_with_trace("nodes = [\"s0\"]");
        let mut v = Vec::new();
        r.write_table(&aiccsim::metrics::tables::TRACE, &mut v).unwrap();
        v
    };
    let first = write();
    assert!(first.len() > 10_000);
    assert_eq!(first, write());
}
