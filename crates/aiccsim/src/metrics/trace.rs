//! The opt-in per-packet trace (`trace.csv`): each time a chosen packet starts onto a link,
//! fully arrives at a node, is dropped, or is trimmed.
//!
//! Tracing is filtered by flow and by node, and capped at `max_rows`, so that a trace of one
//! flow through one switch stays small however long the run; rows past the cap are counted, not
//! kept. The engine asks the tracer only when tracing is on (one branch per hop otherwise).

use crate::config::TraceConfig;
use crate::time::SimTime;
use crate::topology::Topology;
use crate::wire::packet::{Packet, PacketKind};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// Starts serialising onto the port's link.
    Send,
    /// Fully received through the port.
    Arrive,
    /// Dropped at the switch (shared buffer full); the port is the egress it was routed to.
    Drop,
    /// Cut to its header at the switch instead of dropped (`[switch.trimming]`); the port is
    /// the egress it was routed to, and the row shows the trimmed packet.
    Trim,
}

impl TraceEvent {
    pub fn as_str(self) -> &'static str {
        match self {
            TraceEvent::Send => "send",
            TraceEvent::Arrive => "arrive",
            TraceEvent::Drop => "drop",
            TraceEvent::Trim => "trim",
        }
    }
}

/// One row of `trace.csv`.
#[derive(Clone, Copy, Debug)]
pub struct TraceRow {
    pub time: SimTime,
    pub event: TraceEvent,
    pub node: u32,
    pub port: u32,
    pub kind: PacketKind,
    /// `None` for PFC frames, which belong to no flow.
    pub flow: Option<u32>,
    pub seq: u64,
    pub size: u32,
    pub priority: u8,
    pub ecn: bool,
    /// Send: bytes still queued at the port after this packet left the queue. Drop, trim: bytes
    /// in the egress queue it could not join whole. Arrive: none.
    pub queue_bytes: Option<u64>,
}

pub struct Tracer {
    flows: Option<Vec<bool>>,
    nodes: Option<Vec<bool>>,
    max_rows: u64,
    pub rows: Vec<TraceRow>,
    /// Rows past `max_rows`, not kept.
    pub rows_dropped: u64,
}

impl Tracer {
    /// A tracer for a validated configuration.
    pub fn new(cfg: &TraceConfig, topo: &Topology, flows: usize) -> Tracer {
        let flows = cfg.flows.as_ref().map(|ids| {
            let mut on = vec![false; flows];
            for &f in ids {
                on[f as usize] = true;
            }
            on
        });
        let nodes = cfg.nodes.as_ref().map(|names| {
            let mut on = vec![false; (topo.num_hosts + topo.num_switches) as usize];
            for name in names {
                let n = topo.names().parse(name).expect("validated");
                on[n as usize] = true;
            }
            on
        });
        Tracer { flows, nodes, max_rows: cfg.max_rows, rows: Vec::new(), rows_dropped: 0 }
    }

    pub fn record(
        &mut self,
        time: SimTime,
        event: TraceEvent,
        node: u32,
        port: u32,
        pkt: &Packet,
        queue_bytes: Option<u64>,
    ) {
        let flow = (pkt.kind != PacketKind::Pfc).then_some(pkt.flow);
        if let Some(on) = &self.flows {
            if !flow.is_some_and(|f| on[f as usize]) {
                return;
            }
        }
        if self.nodes.as_ref().is_some_and(|on| !on[node as usize]) {
            return;
        }
        if self.rows.len() as u64 >= self.max_rows {
            self.rows_dropped += 1;
            return;
        }
        self.rows.push(TraceRow {
            time,
            event,
            node,
            port,
            kind: pkt.kind,
            flow,
            seq: pkt.seq,
            size: pkt.size,
            priority: pkt.priority,
            ecn: pkt.ecn,
            queue_bytes,
        });
    }
}

pub fn kind_name(k: PacketKind) -> &'static str {
    match k {
        PacketKind::Data => "data",
        PacketKind::Ack => "ack",
        PacketKind::Nack => "nack",
        PacketKind::Cnp => "cnp",
        PacketKind::Pfc => "pfc",
        PacketKind::Probe => "probe",
        PacketKind::ProbeReply => "probe_reply",
        PacketKind::Trimmed => "trimmed",
    }
}
