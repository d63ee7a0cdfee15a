//! Reading a run part-way, after [`Simulation::run_until`] or [`Simulation::step`]: a port's
//! queues and pause state, a flow's progress and rate, copied out as they stand. Nothing here
//! changes the run, so a run looked at goes on exactly as one that was not.

use crate::cc::CongestionControl;
use crate::engine::net::credit::CreditView;
use crate::engine::Simulation;
use crate::metrics::PortStats;
use crate::wire::packet::NUM_PRIORITIES;

/// A port as it stands (`Simulation::port`).
#[derive(Clone, Copy, Debug)]
pub struct PortView {
    /// Its node and its place among the node's ports (as `ports.csv` numbers them).
    pub node: u32,
    pub local: u32,
    /// The port at the other end of its link (an id, as `Simulation::port` takes).
    pub peer: u32,
    /// Bytes waiting to be sent, over all priorities and at each.
    pub queued_bytes: u64,
    pub queued_by_priority: [u64; NUM_PRIORITIES],
    /// Bit p set: the peer has paused priority p on this port, which may not send it.
    pub paused: u8,
    /// Bit p set: this port, as a switch's ingress, has paused its peer for priority p.
    pub pausing_peer: u8,
    /// Its ECN thresholds at its speed, bytes (`u32::MAX` where the switch never marks).
    pub kmin: u64,
    pub kmax: u64,
    /// Its counters so far (as `ports.csv` will have them, the transmit counters included).
    pub stats: PortStats,
    /// Bytes buffered at its switch that came in through it, per priority (its ingress role).
    pub ingress_bytes: [u64; NUM_PRIORITIES],
    /// Its credits, under credit flow control (all empty otherwise).
    pub credits: CreditView,
}

/// A flow as it stands (`Simulation::flow`): bytes, as the sender and the receiver count them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowView {
    pub size: u64,
    /// The priority its data travels at.
    pub priority: u8,
    pub started: bool,
    /// The highest byte handed to the NIC, the first not yet acknowledged (so the bytes
    /// acknowledged), and the next the receiver expects in order (the bytes delivered).
    pub sent_bytes: u64,
    pub acked_bytes: u64,
    pub delivered_bytes: u64,
    /// The rate its algorithm lets it send at now (bits/s), and its window, if it has one.
    pub rate_bps: f64,
    pub window_bytes: Option<u64>,
    /// Every byte delivered; every byte acknowledged (the flow is done).
    pub delivered: bool,
    pub done: bool,
    pub timeouts: u32,
    pub retransmitted_bytes: u64,
}

impl Simulation {
    /// Ports in the fabric (ids `0..port_count()`).
    pub fn port_count(&self) -> usize {
        self.net.ports.len()
    }

    /// The id of port `local` of node `node` ("h0", "s1", as scenarios and `ports.csv` name
    /// them), if there is one.
    pub fn port_id(&self, node: &str, local: u32) -> Option<u32> {
        let n = self.topo.names().parse(node).ok()?;
        self.topo.node_ports[n as usize].get(local as usize).copied()
    }

    /// Port `p` as it stands.
    pub fn port(&self, p: u32) -> PortView {
        let port = &self.net.ports[p as usize];
        let mut stats = port.final_stats();
        if let Some(ff) = &self.ff {
            let (bytes, packets) = ff.port_credit(p as usize);
            stats.tx_bytes += bytes;
            stats.tx_packets += packets;
        }
        self.credit_stats(p, &mut stats);
        PortView {
            node: port.node,
            local: port.local,
            peer: port.peer,
            queued_bytes: port.queued,
            queued_by_priority: std::array::from_fn(|q| port.prio[q].bytes),
            paused: port.paused,
            pausing_peer: port.pausing_peer,
            kmin: port.kmin.into(),
            kmax: port.kmax.into(),
            stats,
            ingress_bytes: std::array::from_fn(|q| port.prio[q].ingress.bytes + port.prio[q].ingress.headroom),
            credits: self.credit_view(p),
        }
    }

    /// Flow `f` as it stands.
    pub fn flow(&self, f: u32) -> FlowView {
        let flow = &self.nic.flows[f as usize];
        let cc = &self.nic.ccs[flow.conn as usize];
        FlowView {
            size: flow.full_size(),
            priority: flow.priority,
            started: flow.started,
            // (Bytes fast-forward credited were sent, acknowledged and delivered.)
            sent_bytes: flow.high_sent + flow.skipped,
            acked_bytes: flow.snd_una + flow.skipped,
            delivered_bytes: flow.rcv_nxt + flow.skipped,
            rate_bps: cc.rate(),
            window_bytes: cc.window(),
            delivered: flow.finish.is_some(),
            done: flow.sender_done.is_some(),
            timeouts: flow.timeouts,
            retransmitted_bytes: flow.retransmitted_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Scenario;
    use crate::engine::Simulation;
    use crate::time::SimTime;

    fn lone_flow() -> Simulation {
        let toml = r#"
[topology]
kind = "star"
hosts = 2
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "none"
[workload]
kind = "flows"
flows = [{ src = 1, dst = 0, size = "100KB" }]
"#;
        Simulation::new(&Scenario::from_toml(toml, "test").unwrap()).unwrap()
    }

    #[test]
    fn a_paused_run_shows_a_lone_flow_half_way_and_reads_the_same_twice() {
        let mut sim = lone_flow();
        assert_eq!(sim.run_until(SimTime::from_us(5)), None);
        assert_eq!(sim.now(), SimTime::from_us(5));
        let f = sim.flow(0);
        assert!(f.started && !f.delivered && !f.done);
        // At line rate with 48 B of headers a packet: about 5 us of 8.4 us of sending, less
        // the first packet's two links, has reached the receiver.
        assert!(f.delivered_bytes > 30_000 && f.delivered_bytes < f.sent_bytes, "{f:?}");
        assert!(f.acked_bytes <= f.delivered_bytes && f.sent_bytes <= f.size, "{f:?}");
        assert_eq!(f.rate_bps, 100e9);
        let host = sim.port_id("h1", 0).unwrap();
        assert_eq!(sim.port(host).node, 1);
        assert_eq!(format!("{:?}", sim.port(host)), format!("{:?}", sim.port(host)), "reading changes nothing");
        assert_eq!(sim.port_id("s0", 7), None);
    }
}
