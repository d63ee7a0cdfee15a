//! NVLink as a fluid (`simulation.nvlink = "fluid"`): transfers between GPUs of one server move
//! as rates, recomputed when one starts or stops sending, instead of packet by packet.
//!
//! Why: in a training job most bytes cross NVLink (a GPT-3 13B iteration on 128 GPUs sends 3.2 of
//! its 3.8 TB there), yet NVLink runs none of the congestion control under study: its transfers
//! go at the link's rate through a non-blocking NVSwitch. Simulating each of their packets is
//! most of such a run's cost and says nothing about the fabric.
//!
//! The model. A server's NVSwitch is non-blocking, so the only limits are each GPU's NVLink port
//! (out) and the switch's port into each GPU (in). The transfers sending share them max-min
//! fairly (progressive filling), as a NIC's round robin among its queue pairs shares its port and
//! a full egress queue shares its port among the senders behind it. A transfer's wire bytes are
//! its payload plus one header per packet, as on the wire. When its last byte has left, the last
//! packet crosses the rest of the path store-and-forward (`Transfer::tail`, the ideal FCT less
//! the first hop's serialisation) and is delivered; its ACK then comes back over the reverse
//! path. A transfer alone in its server finishes when it would packet by packet, to the
//! picosecond rounding of each packet's serialisation.
//!
//! What it leaves out: queues at the NVSwitch (nothing waits, nothing is paused, so no transfer
//! is held up behind another's destination as PFC's head-of-line blocking would), and ACKs
//! sharing the links with data. Ports are credited with the bytes and packets that crossed them
//! (`ports.csv`, link timelines), and the run's packet counters with the packets that would have
//! been sent; `packet_hops` counts only what was simulated.
//!
//! Connections keep their first-in-first-out order: a message posted while another holds its
//! connection joins once that one's last byte has left, as packet by packet.

use super::{Event, Simulation};
use crate::time::SimTime;

/// The fluid NVLink state: per server, the transfers sending.
pub(crate) struct NvlinkFluid {
    servers: Vec<Domain>,
    /// Scratch for the rate computation (ports and their fair shares).
    ports: Vec<PortShare>,
    /// ACK bytes on the way back per data byte: ACKs share the links with data, and in an
    /// all-to-all or a ring every GPU's port carries both (6% of it with 60-byte ACKs on
    /// 1048-byte packets).
    ack_load: f64,
    /// Transfers run as fluid (for `summary.json`).
    pub(crate) transfers: u64,
    /// Scratch for the transfers that end at one instant (`fluid_due`): kept, not allocated
    /// per event.
    handed: Vec<Transfer>,
}

#[derive(Default)]
struct Domain {
    sending: Vec<Transfer>,
    /// When the transfers' bytes were last brought up to date.
    updated: SimTime,
    /// Generation of the one pending `Event::NvlinkRates` (older ones are stale).
    generation: u32,
}

struct Transfer {
    flow: u32,
    /// The sending GPU's NVLink port, and the NVSwitch's port into the receiving GPU.
    out_port: u32,
    in_port: u32,
    /// The receiving GPU's NVLink port and the NVSwitch's port into the sending GPU: the ACKs'
    /// way back.
    ack_out: u32,
    ack_in: u32,
    /// Wire bytes in all, not yet sent, and already credited to the two ports.
    wire: u64,
    left: f64,
    credited: u64,
    /// Bytes per second, while the sending set stays as it is.
    rate: f64,
    /// When its last byte leaves at that rate.
    done_at: SimTime,
}

#[derive(Clone, Copy)]
struct PortShare {
    port: u32,
    capacity: f64,
    /// What the transfers not yet fixed load it with per byte per second of their rate.
    load: f64,
}

impl NvlinkFluid {
    /// For `servers` servers, with ACKs of `ack_bytes` every `ack_every` data packets of
    /// `packet_bytes`.
    pub(crate) fn new(servers: usize, ack_bytes: u64, ack_every: u64, packet_bytes: u64) -> NvlinkFluid {
        NvlinkFluid {
            servers: (0..servers).map(|_| Domain::default()).collect(),
            ports: Vec::new(),
            ack_load: ack_bytes as f64 / (ack_every * packet_bytes) as f64,
            transfers: 0,
            handed: Vec::new(),
        }
    }
}

/// Max-min fair rates (bytes per second) for `sending`, where port `p` carries
/// `capacity(p)` bytes per second and a transfer's ACKs load its way back with `ack_load` bytes
/// for each byte of its data: progressive filling, the most constrained port first (ties to
/// the lower port number, so the result does not depend on the order of the transfers).
fn share(sending: &mut [Transfer], ports: &mut Vec<PortShare>, ack_load: f64, capacity: impl Fn(u32) -> f64) {
    let uses = |t: &Transfer| [(t.out_port, 1.0), (t.in_port, 1.0), (t.ack_out, ack_load), (t.ack_in, ack_load)];
    ports.clear();
    for t in sending.iter() {
        for (p, load) in uses(t) {
            match ports.iter_mut().find(|s| s.port == p) {
                Some(s) => s.load += load,
                None => ports.push(PortShare { port: p, capacity: capacity(p), load }),
            }
        }
    }
    ports.sort_unstable_by_key(|s| s.port);
    let mut fixed = vec![false; sending.len()];
    let mut left = sending.len();
    while left > 0 {
        // The port whose capacity left, shared by the load still on it, is smallest.
        let (i, rate) = (ports.iter().enumerate())
            .filter(|(_, s)| s.load > 0.0)
            .map(|(i, s)| (i, s.capacity.max(0.0) / s.load))
            .fold((usize::MAX, f64::INFINITY), |best, (i, r)| if r < best.1 { (i, r) } else { best });
        if i == usize::MAX {
            break;
        }
        let port = ports[i].port;
        for (t, done) in sending.iter_mut().zip(fixed.iter_mut()) {
            if *done || !uses(t).iter().any(|&(p, load)| p == port && load > 0.0) {
                continue;
            }
            *done = true;
            left -= 1;
            t.rate = rate;
            for (p, load) in uses(t) {
                let s = ports.iter_mut().find(|s| s.port == p).expect("listed");
                s.capacity -= rate * load;
                s.load -= load;
            }
        }
        // Rounding may leave a crumb of load on the port just settled.
        ports[i].load = 0.0;
    }
}

/// Picoseconds to send `bytes` at `rate` bytes per second, rounded up.
fn time_for(bytes: f64, rate: f64) -> SimTime {
    SimTime((bytes / rate * 1e12).ceil().max(0.0) as u64)
}

impl Simulation {
    /// Whether flow `f` runs as fluid.
    #[inline]
    pub(crate) fn is_fluid(&self, f: u32) -> bool {
        self.fluid.is_some() && self.nic.flows[f as usize].nvlink
    }

    fn server_of_flow(&self, f: u32) -> usize {
        self.topo.server_of[self.nic.flows[f as usize].src as usize] as usize
    }

    /// Flow `f` (on NVLink, fluid) is posted: it holds its connection and starts sending, or
    /// waits behind the message that holds it.
    pub(crate) fn fluid_post(&mut self, f: u32) {
        let c = self.nic.flows[f as usize].conn as usize;
        let holder = self.nic.conns[c].holder;
        if holder != super::nic::connection::NONE && holder != f && self.nic.flows[holder as usize].has_data_to_send() {
            self.nic.conns[c].waiting.push_back(f);
            return;
        }
        let server = self.server_of_flow(f);
        self.fluid_advance(server);
        self.fluid_add(f);
        self.fluid_reshare(server);
    }

    /// Flow `f` holds its connection and sends; its server's bytes are up to date (rates are
    /// the caller's to recompute).
    fn fluid_add(&mut self, f: u32) {
        let now = self.now;
        let conn = self.nic.flows[f as usize].conn as usize;
        self.nic.conns[conn].holder = f;
        let (mtu, header) = (self.params.mtu, self.params.header);
        let flow = &mut self.nic.flows[f as usize];
        flow.first_sent = now;
        flow.last_progress = now;
        let packets = flow.size.div_ceil(mtu).max(1);
        let wire = flow.size + packets * header;
        let path = self.topo.path(flow.src, flow.dst, flow.ecmp_key);
        let back = self.topo.path(flow.dst, flow.src, flow.ecmp_key);
        let server = self.topo.server_of[flow.src as usize] as usize;
        let fluid = self.fluid.as_mut().expect("fluid NVLink");
        fluid.transfers += 1;
        fluid.servers[server].sending.push(Transfer {
            flow: f,
            out_port: path[0],
            in_port: *path.last().expect("a path"),
            ack_out: back[0],
            ack_in: *back.last().expect("a path"),
            wire,
            left: wire as f64,
            credited: 0,
            rate: 0.0,
            done_at: SimTime::MAX,
        });
    }

    /// Brings the bytes of `server`'s transfers up to `now` at their rates: what they have sent,
    /// credited to their ports and to their flows' progress.
    fn fluid_advance(&mut self, server: usize) {
        let now = self.now;
        let fluid = self.fluid.as_mut().expect("fluid NVLink");
        let domain = &mut fluid.servers[server];
        let dt = (now - domain.updated).as_secs_f64();
        domain.updated = now;
        if dt == 0.0 {
            return;
        }
        for t in domain.sending.iter_mut() {
            t.left = (t.left - t.rate * dt).max(0.0);
            // The last byte is credited when the transfer is handed over (`fluid_due`), so
            // rounding never credits it early.
            let sent = ((t.wire as f64 - t.left) as u64).min(t.wire - 1);
            if sent > t.credited {
                let more = sent - t.credited;
                t.credited = sent;
                self.net.ports[t.out_port as usize].tx_bytes += more;
                self.net.ports[t.in_port as usize].tx_bytes += more;
                let flow = &mut self.nic.flows[t.flow as usize];
                let payload =
                    ((flow.size as f64 * sent as f64 / t.wire as f64) as u64).min(flow.size.saturating_sub(1));
                if payload > flow.rcv_nxt {
                    self.work.bytes_delivered += payload - flow.rcv_nxt;
                    (flow.snd_nxt, flow.high_sent, flow.rcv_nxt) = (payload, payload, payload);
                }
            }
        }
        self.work.progress_at = now;
    }

    /// New max-min rates for `server`'s transfers, and the event at the first one's end.
    fn fluid_reshare(&mut self, server: usize) {
        let now = self.now;
        let fluid = self.fluid.as_mut().expect("fluid NVLink");
        let domain = &mut fluid.servers[server];
        let ports = &self.net.ports;
        share(&mut domain.sending, &mut fluid.ports, fluid.ack_load, |p| ports[p as usize].bandwidth.as_f64() / 8.0);
        let mut first = SimTime::MAX;
        for t in domain.sending.iter_mut() {
            t.done_at = if t.rate > 0.0 { now + time_for(t.left, t.rate) } else { SimTime::MAX };
            first = first.min(t.done_at);
        }
        domain.generation = domain.generation.wrapping_add(1);
        if first < SimTime::MAX {
            self.events.push(first, Event::NvlinkRates(server as u32, domain.generation));
        }
    }

    /// `server`'s first transfer to end may have ended (unless the rates changed since):
    /// every transfer whose last byte has left hands over to the next message of its
    /// connection, and the rates are shared anew.
    pub(crate) fn fluid_due(&mut self, server: u32, generation: u32) {
        let server = server as usize;
        let fluid = self.fluid.as_ref().expect("fluid NVLink");
        if fluid.servers[server].generation != generation {
            return;
        }
        self.fluid_advance(server);
        let now = self.now;
        let fluid = self.fluid.as_mut().expect("fluid NVLink");
        let mut handed = std::mem::take(&mut fluid.handed);
        let sending = &mut fluid.servers[server].sending;
        let mut i = 0;
        while i < sending.len() {
            if sending[i].done_at <= now {
                handed.push(sending.remove(i));
            } else {
                i += 1;
            }
        }
        for t in handed.drain(..) {
            self.fluid_handed(t);
        }
        self.fluid.as_mut().expect("fluid NVLink").handed = handed;
        self.fluid_reshare(server);
    }

    /// Transfer `t` has sent its last byte: its last packet is on its way, and the next
    /// message of its connection, if one waits, starts sending.
    fn fluid_handed(&mut self, t: Transfer) {
        let now = self.now;
        let (mtu, header) = (self.params.mtu, self.params.header);
        let f = t.flow;
        let rest = t.wire - t.credited;
        for p in [t.out_port, t.in_port] {
            let port = &mut self.net.ports[p as usize];
            port.tx_bytes += rest;
            port.tx_packets += self.nic.flows[f as usize].size.div_ceil(mtu).max(1);
        }
        let flow = &mut self.nic.flows[f as usize];
        let packets = flow.size.div_ceil(mtu).max(1);
        (flow.snd_nxt, flow.high_sent) = (flow.size, flow.size);
        let c = &mut self.observe.counters;
        c.data_packets_sent += packets;
        c.data_payload_sent += flow.size;
        c.data_bytes_sent += t.wire;
        let path = self.topo.path(flow.src, flow.dst, flow.ecmp_key);
        let tail = tail(&self.topo, &path, flow.size, mtu, header);
        self.events.push(now + tail, Event::NvlinkDone(f, 0));
        let conn = flow.conn as usize;
        if let Some(next) = self.nic.conns[conn].waiting.pop_front() {
            self.fluid_add(next);
        }
    }

    /// Flow `f`'s last packet has been delivered (`stage` 0), or its ACK has come back (1).
    pub(crate) fn fluid_done(&mut self, f: u32, stage: u32) {
        let now = self.now;
        let (mtu, header) = (self.params.mtu, self.params.header);
        let flow = &mut self.nic.flows[f as usize];
        let packets = flow.size.div_ceil(mtu).max(1);
        if stage == 0 {
            self.work.bytes_delivered += flow.size - flow.rcv_nxt;
            flow.rcv_nxt = flow.size;
            flow.finish = Some(now);
            self.observe.counters.data_bytes_received += flow.size + packets * header;
            self.work.progress_at = now;
            let back = self.topo.path(flow.dst, flow.src, flow.ecmp_key);
            let ack = u64::from(self.params.ack_size);
            self.events.push(now + self.topo.path_latency(&back, ack), Event::NvlinkDone(f, 1));
            self.flow_delivered(f);
            return;
        }
        let acks = packets.div_ceil(u64::from(self.params.ack_every));
        let back = self.topo.path(flow.dst, flow.src, flow.ecmp_key);
        for p in back {
            let port = &mut self.net.ports[p as usize];
            port.tx_packets += acks;
            port.tx_bytes += acks * u64::from(self.params.ack_size);
        }
        let flow = &mut self.nic.flows[f as usize];
        flow.snd_una = flow.size;
        flow.sender_done = Some(now);
        flow.last_progress = now;
        flow.acks += acks as u32;
        self.observe.counters.acks += acks;
        self.work.flows_done += 1;
        self.work.progress_at = now;
        self.release_acked(f);
    }

    /// Every server's bytes up to `now` (before a timeline sample reads the ports).
    pub(crate) fn fluid_advance_all(&mut self) {
        let servers = self.fluid.as_ref().map_or(0, |fluid| fluid.servers.len());
        for s in 0..servers {
            self.fluid_advance(s);
        }
    }

    /// Flow `f` (fluid) stops taking new data: it ends with the packets it has begun to send,
    /// as packet by packet (`flow_stop`).
    pub(crate) fn fluid_stop(&mut self, f: u32) {
        let flow = &self.nic.flows[f as usize];
        if !flow.started || flow.high_sent >= flow.size || flow.sender_done.is_some() {
            return;
        }
        let server = self.server_of_flow(f);
        self.fluid_advance(server);
        let (mtu, header) = (self.params.mtu, self.params.header);
        let fluid = self.fluid.as_mut().expect("fluid NVLink");
        let sending = fluid.servers[server].sending.iter_mut().find(|t| t.flow == f);
        let flow = &mut self.nic.flows[f as usize];
        let size = match &sending {
            // The packets begun: whole payloads up to the byte being sent.
            Some(t) => {
                let sent = t.wire as f64 - t.left;
                let begun = ((sent / (mtu + header) as f64).floor() as u64 + 1).min(flow.size.div_ceil(mtu));
                (begun * mtu).min(flow.size)
            }
            // Waiting behind its connection's holder: nothing sent.
            None => 0,
        };
        flow.size = size;
        flow.high_sent = flow.high_sent.min(size);
        let path = self.topo.path(flow.src, flow.dst, flow.ecmp_key);
        flow.ideal_fct = crate::metrics::ideal_fct(&self.topo, &path, size.max(1), mtu, self.params.base_header);
        match sending {
            Some(t) => {
                let wire = size + size.div_ceil(mtu).max(1) * header;
                t.left = (wire as f64 - (t.wire as f64 - t.left)).max(0.0);
                t.wire = wire;
                t.credited = t.credited.min(wire - 1);
                self.fluid_reshare(server);
            }
            None => {
                let now = self.now;
                let conn = flow.conn as usize;
                (flow.finish, flow.sender_done) = (Some(now), Some(now));
                self.nic.conns[conn].waiting.retain(|&g| g != f);
                self.work.flows_done += 1;
                self.flow_delivered(f);
                self.release_acked(f);
            }
        }
    }
}

/// The time from when a transfer's last byte leaves its sender to when it is delivered: the
/// ideal FCT of its size on `path` less its serialisation on the first hop (the ideal FCT of
/// the first hop alone, less that hop's delay).
fn tail(topo: &crate::topology::Topology, path: &[u32], size: u64, mtu: u64, header: u64) -> SimTime {
    let size = size.max(1);
    let ideal = |hops: &[u32]| crate::metrics::ideal_fct(topo, hops, size, mtu, header);
    let serialised = ideal(&path[..1]) - topo.ports[path[0] as usize].delay;
    ideal(path) - serialised
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transfer(out_port: u32, in_port: u32) -> Transfer {
        Transfer {
            flow: 0,
            out_port,
            in_port,
            // The ACKs' ports, numbered apart from the data's (GPU g: out 10 + g, in 20 + g,
            // ACKs out 30 + g, in 40 + g), so that only `acks` below couples them.
            ack_out: in_port + 10,
            ack_in: out_port + 30,
            wire: 1000,
            left: 1000.0,
            credited: 0,
            rate: 0.0,
            done_at: SimTime::MAX,
        }
    }

    fn rates(ts: &mut [Transfer], capacity: impl Fn(u32) -> f64) -> Vec<f64> {
        share(ts, &mut Vec::new(), 0.0, capacity);
        ts.iter().map(|t| t.rate).collect()
    }

    #[test]
    fn a_port_is_shared_equally_by_the_transfers_it_limits() {
        // GPU 0 sends to GPUs 1, 2, 3 (out port 10; in ports 21, 22, 23), all ports 100.
        let mut ts = [transfer(10, 21), transfer(10, 22), transfer(10, 23)];
        for r in rates(&mut ts, |_| 100.0) {
            assert!((r - 100.0 / 3.0).abs() < 1e-9, "{r}");
        }
    }

    #[test]
    fn a_transfer_limited_elsewhere_leaves_its_share_to_the_others() {
        // Two senders into GPU 9 (in port 29) and sender 0 also to GPU 8: the transfers into
        // 9 get 50 each, so sender 0's other transfer gets the 50 its port has left.
        let mut ts = [transfer(10, 29), transfer(11, 29), transfer(10, 28)];
        let r = rates(&mut ts, |_| 100.0);
        assert_eq!(r, [50.0, 50.0, 50.0]);
        // With GPU 0's port at 120 its second transfer takes 70: max-min, not equal shares.
        let r = rates(&mut ts, |p| if p == 10 { 120.0 } else { 100.0 });
        assert_eq!(r, [50.0, 50.0, 70.0]);
    }

    #[test]
    fn acks_take_their_share_of_the_ports_they_cross() {
        // A ring of three GPUs: each port carries one transfer's data and another's ACKs.
        let gpu = |g: u32| (10 + g, 20 + g);
        let mut ts: Vec<Transfer> = (0..3)
            .map(|g| {
                let ((out, _), (_, into)) = (gpu(g), gpu((g + 1) % 3));
                transfer(out, into)
            })
            .collect();
        // GPU g's ACKs for what it receives leave on its own port (10 + g) and enter the
        // sender's (20 + sender).
        for g in 0..3u32 {
            ts[g as usize].ack_out = 10 + (g + 1) % 3;
            ts[g as usize].ack_in = 20 + g;
        }
        share(&mut ts, &mut Vec::new(), 0.05, |_| 105.0);
        for t in &ts {
            assert!((t.rate - 100.0).abs() < 1e-9, "{}", t.rate);
        }
    }

    #[test]
    fn the_rates_do_not_depend_on_the_order_of_the_transfers() {
        let mut a = [transfer(10, 29), transfer(11, 29), transfer(10, 28), transfer(12, 28)];
        let mut b = [transfer(12, 28), transfer(10, 28), transfer(11, 29), transfer(10, 29)];
        let (ra, mut rb) = (rates(&mut a, |_| 100.0), rates(&mut b, |_| 100.0));
        rb.reverse();
        assert_eq!(ra, rb);
        // No port carries more than its capacity.
        for p in [10, 11, 12, 28, 29] {
            let load: f64 = a.iter().filter(|t| t.out_port == p || t.in_port == p).map(|t| t.rate).sum();
            assert!(load <= 100.0 + 1e-9, "port {p} carries {load}");
        }
    }
}
