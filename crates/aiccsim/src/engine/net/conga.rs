//! CONGA (Alizadeh et al., "CONGA: Distributed Congestion-Aware Load Balancing for
//! Datacenters", SIGCOMM 2014), `routing = "conga"`: the leaf a packet enters the fabric at picks
//! its uplink from what the destination leaf has told it about each path, so it sees a slow or
//! loaded link beyond its own ports, which local adaptive routing sees only once PFC backs the
//! queue up to it.
//!
//! As the paper describes it (§3):
//! - Every switch port has a discounting rate estimator (DRE): a register X that grows by each
//!   packet's bytes as it is sent and loses a share `alpha` of itself every period `T`, so that
//!   X ≈ rate x tau with tau = T / alpha; X / (line rate x tau), quantised into 3 bits (8
//!   levels, the top one taking everything from 7/8 of the line up), is the port's congestion.
//! - The source leaf tags each packet with its uplink (LBTag) and sets the packet's congestion
//!   field (CE) to its uplink's level; every switch after it raises CE to its egress port's level
//!   if that is higher; so CE arrives as the path's most congested hop.
//! - The destination leaf stores CE per source leaf and LBTag (Congestion-From-Leaf), and
//!   piggybacks one entry on each packet it sends back to that leaf (FB_LBTag, FB_Metric; any
//!   packet, ACKs included): round-robin over the entries, those changed since they were last
//!   sent first.
//! - The source leaf stores the feedback per destination leaf and uplink (Congestion-To-Leaf);
//!   an entry not refreshed for `age` is forgotten (read as 0), so that a path it stopped using
//!   is tried again. A new flowlet goes to the uplink with the least max(local DRE level, remote
//!   metric), ties drawn at random; a flowlet is a flow's packets closer together than
//!   `flowlet_gap` (0: every packet picks).
//! - Only the leaves choose; the other switches route as their tier says (ECMP, as in CONGA's
//!   fabric) and raise CE whatever their routing.
//!
//! What it leaves out: the overlay (VXLAN) header's bytes (the 16 bits travel in a field of the
//! packet's cache line, `wire/packet.rs`, and add nothing on the wire), the ASIC's fixed-point
//! register, and more than 31 uplinks (5 bits of LBTag, where CONGA's header has 4).
//! The DRE decays lazily: a register brought up to date when it is read or grows has lost the
//! same share per period as one decayed by a timer.

use crate::cc::Check;
use crate::config::{fail, CongaConfig, Routing, RoutingConfig, Scenario, Tier};
use crate::engine::net::pool::PacketId;
use crate::engine::Simulation;
use crate::time::{Bandwidth, SimTime};
use crate::topology::Topology;
use crate::wire::packet::PacketKind;

/// Uplinks a leaf may tag: LBTag has 5 bits, and 0 means "none".
pub(crate) const MAX_UPLINKS: usize = 31;
/// Congestion levels: 3 bits, as CONGA quantises.
const LEVELS: u32 = 8;

/// CONGA's overlay header, as `Packet::conga` packs it: LBTag (bits 15-11, the uplink + 1, 0 for
/// none), CE (10-8), FB_LBTag (7-3, + 1, 0 for none), FB_Metric (2-0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Header {
    pub tag: Option<u8>,
    pub ce: u8,
    pub feedback: Option<(u8, u8)>,
}

impl Header {
    pub fn pack(self) -> u16 {
        let tag = self.tag.map_or(0, |t| t as u16 + 1);
        let (fb_tag, fb_metric) = self.feedback.map_or((0, 0), |(t, m)| (t as u16 + 1, m as u16));
        tag << 11 | (self.ce as u16 & 7) << 8 | fb_tag << 3 | (fb_metric & 7)
    }

    pub fn unpack(bits: u16) -> Header {
        let tag = (bits >> 11) as u8;
        let fb_tag = (bits >> 3 & 31) as u8;
        Header {
            tag: tag.checked_sub(1),
            ce: (bits >> 8 & 7) as u8,
            feedback: fb_tag.checked_sub(1).map(|t| (t, (bits & 7) as u8)),
        }
    }
}

/// A port's discounting rate estimator: its register, and the period it was last brought to.
#[derive(Clone, Copy, Debug, Default)]
struct Dre {
    bytes: f64,
    period: u64,
}

/// From-leaf entry bits: the metric in the low 3, then whether a packet ever set it and whether
/// it changed since it was last fed back.
const SEEN: u8 = 1 << 3;
const CHANGED: u8 = 1 << 4;

/// CONGA's state: every switch port's DRE, and the leaves' two tables.
pub(crate) struct Conga {
    period: SimTime,
    /// What a register keeps of itself each period (1 - alpha).
    keep: f64,
    /// The estimator's time constant, period / alpha.
    tau: SimTime,
    age: SimTime,
    pub(crate) flowlet_gap: SimTime,
    /// Per port.
    dre: Vec<Dre>,
    /// Each switch's number as a leaf (its top-of-rack number), `u32::MAX` for a switch that is
    /// not a CONGA leaf.
    leaf_of: Vec<u32>,
    leaves: usize,
    /// Table columns: the most equal-cost uplinks a leaf has towards another.
    uplinks: usize,
    /// Congestion-To-Leaf, `[(leaf x leaves + destination) x uplinks + uplink]`: the metric and
    /// when it arrived.
    to_metric: Vec<u8>,
    to_at: Vec<SimTime>,
    /// Congestion-From-Leaf, indexed as `to_*` by source leaf: metric and the `SEEN` and
    /// `CHANGED` bits.
    from: Vec<u8>,
    /// Per (leaf, source leaf), the from-leaf entry to feed back next (round-robin).
    turn: Vec<u8>,
}

/// One host of each top-of-rack switch, by its number.
fn host_of_each_tor(topo: &Topology) -> Vec<u32> {
    let mut host = vec![u32::MAX; topo.tors().len()];
    for h in (0..topo.fabric_hosts).rev() {
        host[topo.tor_number(h) as usize] = h;
    }
    host
}

/// The most equal-cost next hops a top-of-rack switch has towards another.
fn most_uplinks(topo: &Topology) -> usize {
    let host = host_of_each_tor(topo);
    let mut most = 0;
    for (i, &tor) in topo.tors().iter().enumerate() {
        for (j, &h) in host.iter().enumerate() {
            if i != j {
                most = most.max(topo.next_hops(tor, h).len());
            }
        }
    }
    most
}

/// CONGA against the fabric: a leaf tags its uplink in 5 bits.
pub(crate) fn check(s: &Scenario, topo: &Topology) -> Check {
    if s.switch.routing.of(Tier::Leaf) != Routing::Conga {
        return Ok(());
    }
    let most = most_uplinks(topo);
    if most > MAX_UPLINKS {
        let key = match s.switch.routing {
            RoutingConfig::All(_) => "switch.routing",
            RoutingConfig::Tiers(t) if t.leaf.is_some() => "switch.routing.leaf",
            RoutingConfig::Tiers(_) => "switch.routing.default",
        };
        return fail(
            key,
            format!(
                "\"conga\" tags a packet's uplink in 5 bits (CONGA's header has 4), at most {MAX_UPLINKS} uplinks, but this {} fabric's leaves have {most} equal-cost uplinks towards another leaf; use fewer spines (or parallel links), or another routing",
                s.topology.kind()
            ),
        );
    }
    Ok(())
}

impl Conga {
    /// The state for `topo`'s ports, with the top-of-rack switches `conga_leaf` marks (by
    /// switch index) as CONGA leaves.
    pub(crate) fn new(cfg: &CongaConfig, topo: &Topology, ports: usize, conga_leaf: &[bool]) -> Conga {
        let mut leaf_of = vec![u32::MAX; topo.num_switches as usize];
        for (i, &tor) in topo.tors().iter().enumerate() {
            let s = (tor - topo.num_hosts) as usize;
            if conga_leaf[s] {
                leaf_of[s] = i as u32;
            }
        }
        let leaves = topo.tors().len();
        let uplinks = most_uplinks(topo).clamp(1, MAX_UPLINKS);
        let entries = leaves * leaves * uplinks;
        Conga {
            period: cfg.dre_period,
            keep: 1.0 - cfg.dre_alpha,
            tau: SimTime::from_ps((cfg.dre_period.ps() as f64 / cfg.dre_alpha) as u64),
            age: cfg.age,
            flowlet_gap: cfg.flowlet_gap,
            dre: vec![Dre::default(); ports],
            leaf_of,
            leaves,
            uplinks,
            to_metric: vec![0; entries],
            to_at: vec![SimTime::ZERO; entries],
            from: vec![0; entries],
            turn: vec![0; leaves * leaves],
        }
    }

    /// Port `p`'s register brought to `now`: decayed once per period boundary crossed since.
    fn dre_at(&mut self, p: u32, now: SimTime) -> &mut Dre {
        let period = now.ps() / self.period.ps();
        let dre = &mut self.dre[p as usize];
        for _ in dre.period..period {
            dre.bytes *= self.keep;
            if dre.bytes < 1.0 {
                dre.bytes = 0.0;
                break;
            }
        }
        dre.period = period;
        dre
    }

    /// The congestion level of a register holding `bytes` on a port of `bandwidth`.
    fn level(&self, bytes: f64, bandwidth: Bandwidth) -> u8 {
        let full = bandwidth.bytes_in(self.tau).max(1) as f64;
        ((bytes * LEVELS as f64 / full) as u32).min(LEVELS - 1) as u8
    }

    /// Port `p`'s congestion level at `now`.
    fn local(&mut self, p: u32, now: SimTime, bandwidth: Bandwidth) -> u8 {
        let bytes = self.dre_at(p, now).bytes;
        self.level(bytes, bandwidth)
    }

    /// Port `p` sends `size` bytes at `now`: its register grows; its level after.
    fn sent(&mut self, p: u32, size: u64, now: SimTime, bandwidth: Bandwidth) -> u8 {
        let dre = self.dre_at(p, now);
        dre.bytes += size as f64;
        let bytes = dre.bytes;
        self.level(bytes, bandwidth)
    }

    #[inline]
    fn entry(&self, leaf: u32, other: u32, uplink: usize) -> usize {
        (leaf as usize * self.leaves + other as usize) * self.uplinks + uplink
    }

    /// What leaf `leaf` knows at `now` of the path to leaf `to` through its uplink `uplink`.
    fn remote(&self, leaf: u32, to: u32, uplink: usize, now: SimTime) -> u8 {
        if uplink >= self.uplinks {
            return 0;
        }
        let e = self.entry(leaf, to, uplink);
        if now - self.to_at[e] > self.age {
            0
        } else {
            self.to_metric[e]
        }
    }

    /// Leaf `leaf` received a packet from leaf `from` that left it on uplink `tag` and met `ce`.
    fn record_from(&mut self, leaf: u32, from: u32, tag: u8, ce: u8) {
        if (tag as usize) < self.uplinks {
            let e = self.entry(leaf, from, tag as usize);
            self.from[e] = ce | SEEN | CHANGED;
        }
    }

    /// Leaf `leaf` learnt at `now` that its uplink `tag` towards leaf `to` has congestion `metric`.
    fn record_to(&mut self, leaf: u32, to: u32, tag: u8, metric: u8, now: SimTime) {
        if (tag as usize) < self.uplinks {
            let e = self.entry(leaf, to, tag as usize);
            self.to_metric[e] = metric;
            self.to_at[e] = now;
        }
    }

    /// The entry leaf `leaf` feeds back to leaf `to` on its next packet there: the next one in
    /// turn that changed since it was last sent, else the next one in turn it has (none before
    /// `to` has sent it anything).
    fn feedback(&mut self, leaf: u32, to: u32) -> Option<(u8, u8)> {
        let (n, first) = (self.uplinks, self.entry(leaf, to, 0));
        let turn = &mut self.turn[leaf as usize * self.leaves + to as usize];
        let start = *turn as usize;
        let entries = &mut self.from[first..first + n];
        let order = || (0..n).map(|j| (start + j) % n);
        let i = order().find(|&i| entries[i] & CHANGED != 0).or_else(|| order().find(|&i| entries[i] & SEEN != 0))?;
        entries[i] &= !CHANGED;
        *turn = ((i + 1) % n) as u8;
        Some((i as u8, entries[i] & 7))
    }
}

impl Simulation {
    /// CONGA's uplink for a packet to host `dst` at leaf switch `node` (switch index `sw`): the
    /// flowlet's, or for a new flowlet the one whose path is least congested.
    pub(super) fn conga_route(&mut self, node: u32, sw: usize, dst: u32, key: u64) -> u32 {
        let now = self.now;
        let hops = self.topo.next_hops(node, dst);
        let conga = self.net.conga.as_deref_mut().expect("a CONGA leaf has CONGA's state");
        let gap = conga.flowlet_gap;
        if gap > SimTime::ZERO {
            if let Some(port) = self.net.flowlets[sw].keeps(key, dst, now, gap, hops) {
                return port;
            }
        }
        let (leaf, to) = (conga.leaf_of[sw], self.topo.tor_number(dst));
        let (ports, rng) = (&self.net.ports, &mut self.net.spray_rng[sw]);
        let mut metric = |i: usize, p: u32| {
            let local = conga.local(p, now, ports[p as usize].bandwidth);
            local.max(conga.remote(leaf, to, i, now)) as u64
        };
        let port = super::routing::least_at_random(hops, &mut metric, rng);
        if gap > SimTime::ZERO {
            self.net.flowlets[sw].start(key, dst, now, port);
        }
        port
    }

    /// A packet leaves switch port `p` (called for every packet while some leaf routes by
    /// CONGA): the port's DRE counts it, and the packet's CONGA header is written or read as
    /// the switch's place on its path says.
    #[cold]
    #[inline(never)]
    pub(crate) fn conga_transmit(&mut self, p: u32, id: PacketId) {
        let port = &self.net.ports[p as usize];
        let pkt = &self.net.packets[id];
        if port.is_host || pkt.kind == PacketKind::Pfc {
            return;
        }
        let (node, bandwidth, to_host) = (port.node, port.bandwidth, self.net.ports[port.peer as usize].is_host);
        let (dst, size) = (pkt.dst, pkt.size as u64);
        let flow = &self.nic.flows[pkt.flow as usize];
        let src = if dst == flow.dst { flow.src } else { flow.dst };
        let now = self.now;
        let conga = self.net.conga.as_deref_mut().expect("CONGA's state");
        let level = conga.sent(p, size, now, bandwidth);
        let leaf = conga.leaf_of[(node - self.topo.num_hosts) as usize];
        let pkt = &mut self.net.packets[id];
        let mut header = Header::unpack(pkt.conga);
        let (src_leaf, dst_leaf) = (self.topo.tor_number(src), self.topo.tor_number(dst));
        if to_host {
            // The last hop: at the destination leaf, the path's congestion and the feedback.
            if leaf != u32::MAX && src_leaf != leaf {
                if let Some(tag) = header.tag {
                    conga.record_from(leaf, src_leaf, tag, header.ce);
                }
                if let Some((tag, metric)) = header.feedback {
                    conga.record_to(leaf, src_leaf, tag, metric, now);
                }
            }
            return;
        }
        if leaf != u32::MAX && src_leaf == leaf {
            // Up from the source leaf: its uplink, that uplink's congestion, and feedback for the
            // leaf the packet goes to.
            let uplink = self.topo.next_hops(node, dst).iter().position(|&h| h == p);
            header = Header {
                tag: uplink.filter(|&u| u < MAX_UPLINKS).map(|u| u as u8),
                ce: level,
                feedback: conga.feedback(leaf, dst_leaf),
            };
        } else {
            header.ce = header.ce.max(level);
        }
        pkt.conga = header.pack();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conga(leaves: usize, uplinks: usize) -> Conga {
        let entries = leaves * leaves * uplinks;
        Conga {
            period: SimTime::from_us(1),
            keep: 0.5,
            tau: SimTime::from_us(2),
            age: SimTime::from_us(100),
            flowlet_gap: SimTime::ZERO,
            dre: vec![Dre::default(); 4],
            leaf_of: vec![0, 1],
            leaves,
            uplinks,
            to_metric: vec![0; entries],
            to_at: vec![SimTime::ZERO; entries],
            from: vec![0; entries],
            turn: vec![0; leaves * leaves],
        }
    }

    #[test]
    fn the_header_packs_into_16_bits_and_back() {
        assert_eq!(Header::unpack(0), Header::default(), "a fresh packet: no tag, no feedback");
        for tag in [None, Some(0), Some(7), Some(30)] {
            for ce in 0..8 {
                for feedback in [None, Some((0, 0)), Some((30, 7)), Some((4, 3))] {
                    let h = Header { tag, ce, feedback };
                    assert_eq!(Header::unpack(h.pack()), h);
                }
            }
        }
    }

    #[test]
    fn a_register_loses_its_share_every_period_and_measures_the_rate() {
        let mut c = conga(1, 1);
        let bw = Bandwidth::from_gbps(100);
        // tau = 2 us: 25 000 bytes at 100 Gb/s is the full scale.
        assert_eq!(c.sent(0, 12_500, SimTime::from_ns(100), bw), 4, "half the scale: level 4 of 8");
        assert_eq!(c.local(0, SimTime::from_ns(999), bw), 4, "no period boundary crossed");
        assert_eq!(c.local(0, SimTime::from_us(1), bw), 2, "halved at 1 us");
        assert_eq!(c.local(0, SimTime::from_us(3), bw), 0, "and twice more by 3 us");
        // A steady rate R settles at R x tau: 100 Gb/s (12 500 bytes a period) fills the scale.
        let mut c = conga(1, 1);
        for us in 0..40 {
            c.sent(1, 12_500, SimTime::from_us(us), bw);
        }
        assert!((c.dre[1].bytes - 25_000.0).abs() < 1.0, "{}", c.dre[1].bytes);
        assert_eq!(c.local(1, SimTime::from_us(39), bw), 7, "at line rate: the top level");
        // The scale is the port's own line: the same bytes are a quarter of a line 4x faster.
        assert_eq!(c.level(25_000.0, Bandwidth::from_gbps(400)), 2);
    }

    #[test]
    fn remote_metrics_age_out() {
        let mut c = conga(2, 2);
        c.record_to(0, 1, 1, 6, SimTime::from_us(10));
        assert_eq!(c.remote(0, 1, 1, SimTime::from_us(110)), 6);
        assert_eq!(c.remote(0, 1, 1, SimTime::from_us(111)), 0, "older than 100 us: forgotten");
        assert_eq!(c.remote(0, 1, 0, SimTime::from_us(20)), 0, "never heard of");
        assert_eq!(c.remote(0, 1, 5, SimTime::from_us(20)), 0, "no such uplink");
    }

    #[test]
    fn feedback_goes_round_robin_changed_entries_first() {
        let mut c = conga(2, 4);
        assert_eq!(c.feedback(1, 0), None, "nothing received from leaf 0 yet");
        c.record_from(1, 0, 2, 5);
        c.record_from(1, 0, 0, 3);
        // From the turn (0) on, changed first: 0, then 2; then none changed: in turn, 0 and 2.
        assert_eq!(c.feedback(1, 0), Some((0, 3)));
        assert_eq!(c.feedback(1, 0), Some((2, 5)));
        assert_eq!(c.feedback(1, 0), Some((0, 3)), "none changed: the next seen in turn");
        c.record_from(1, 0, 2, 6);
        assert_eq!(c.feedback(1, 0), Some((2, 6)));
        c.record_from(1, 0, 0, 1);
        c.record_from(1, 0, 3, 7);
        assert_eq!(c.feedback(1, 0), Some((3, 7)), "changed, and next in turn after 2");
        assert_eq!(c.feedback(1, 0), Some((0, 1)));
        assert_eq!(c.feedback(0, 1), None, "each pair of leaves has its own entries");
    }
}
