//! Credit-based link-level flow control, as InfiniBand runs it (`switch.flow_control =
//! "credit"`): a sender transmits only into buffer the receiver has promised.
//!
//! Every switch ingress port has a receive buffer per priority (an InfiniBand virtual lane's),
//! `switch.credit.buffer` bytes in blocks of `switch.credit.block` (InfiniBand's 64 B). The
//! sender at the other end of the link (a NIC or a switch port) holds that buffer as credits:
//!
//! ```text
//!  sender port                       link                      receiving switch
//!  held credits ──packet (takes ⌈size/block⌉ blocks)──▶  ingress buffer of the priority
//!       ▲                                                        │ the packet starts leaving
//!       └──── update: the freed blocks, one link delay later ◀───┘ through its egress port
//! ```
//!
//! - A switch port sends the head packet of a priority only if it holds the blocks it takes;
//!   otherwise that priority waits (`credit_dequeue`) while the port's other priorities may go,
//!   and everything behind the head waits with it: head-of-line blocking, and, as the upstream
//!   then fills, congestion spreading, both from the loop alone.
//! - A NIC builds a data packet only when it is about to send it, so it holds its data priority
//!   while it has fewer credits than the largest packet it may send there (an InfiniBand HCA
//!   likewise waits on its virtual lane's credits).
//! - Credits are taken when the packet starts onto the link and freed when it starts leaving the
//!   receiving switch's buffer, the moment the buffer accounting releases its bytes
//!   (`switch.rs`). The freed blocks go back in an update that takes the link's delay: one per
//!   packet, or (`update_interval` > 0) one per interval, at its next multiple, carrying
//!   everything freed since the last; InfiniBand's flow-control packets are sent periodically.
//! - Links into a host, or into an NVSwitch, carry no credits: hosts consume what arrives at
//!   once, and an NVSwitch's buffer never fills (`switch.rs`). The control priority (ACKs, CNPs,
//!   probe replies) carries none either, as it is never paused under PFC: InfiniBand's
//!   management lane, VL15, is likewise outside flow control.
//!
//! Nothing here drops a packet or sends a PAUSE. A credit update is not a packet: it takes no
//! link time (InfiniBand's flow-control packets are 6 bytes per lane). The credit state lives
//! beside the ports, not in them, so that a PFC run's ports keep their layout; under credits a
//! port's `paused` bits say which priorities wait for credits, so the PFC-era transmit path
//! (`Port::dequeue`, the NIC's scheduler) holds them back unchanged. The functions the transmit
//! path calls are kept out of line, so that a PFC run's `kick` keeps its code (inlined there,
//! `credit_dequeue` added 7 M instructions to it on a k = 8 fat tree); the flag tests left cost
//! a PFC run 0.25% of S1's instructions and 1.0% of S3's (callgrind).

use super::pool::PacketId;
use crate::config::CreditConfig;
use crate::engine::{Event, Simulation};
use crate::metrics::PortStats;
use crate::time::SimTime;
use crate::topology::Topology;
use crate::wire::packet::{CONTROL_PRIORITY, NUM_PRIORITIES};

/// The credit loop's state: per port as a sender, the credits it holds; per port as a switch
/// ingress, the credits on their way back.
pub(crate) struct Credits {
    /// Bytes per credit block.
    block: u64,
    /// Blocks of one ingress buffer (one priority): what its sender holds when nothing is out.
    buffer: u32,
    /// Blocks of the largest packet a NIC sends at the data priority (data, or an RTT probe).
    nic_packet: u32,
    /// Updates go at multiples of this; zero: one per packet freed.
    interval: SimTime,
    /// Per port: its peer is a fabric switch, so what it sends takes credits.
    limited: Vec<bool>,
    /// Per port, as a sender: blocks held, per priority.
    held: Vec<[u32; NUM_PRIORITIES]>,
    /// Per port, as a switch ingress: blocks freed and not yet back at the sender (waiting for
    /// the next update, or on the link), and of those the ones waiting for the update.
    returning: Vec<[u32; NUM_PRIORITIES]>,
    waiting: Vec<[u32; NUM_PRIORITIES]>,
    /// Per port, as a switch ingress: an update is scheduled.
    update_due: Vec<bool>,
    /// Per port: since when some priority has waited for credits (`SimTime::MAX`: none waits).
    stalled_since: Vec<SimTime>,
}

impl Credits {
    /// The credit loop of `topo`'s links as `config` sets it; `nic_packet` is the largest packet
    /// a NIC sends at the data priority, in bytes.
    pub(crate) fn new(topo: &Topology, config: &CreditConfig, nic_packet: u64) -> Credits {
        let ports = topo.ports.len();
        let block = config.block.0;
        let buffer = (config.buffer.0 / block) as u32;
        let into_fabric = |p: usize| {
            let peer = topo.ports[topo.ports[p].peer as usize].node;
            !topo.is_host(peer) && !topo.is_nvswitch(peer - topo.num_hosts)
        };
        let limited: Vec<bool> = (0..ports).map(into_fabric).collect();
        let held = limited.iter().map(|&l| [if l { buffer } else { 0 }; NUM_PRIORITIES]).collect();
        Credits {
            block,
            buffer,
            nic_packet: nic_packet.div_ceil(block) as u32,
            interval: config.update_interval,
            limited,
            held,
            returning: vec![[0; NUM_PRIORITIES]; ports],
            waiting: vec![[0; NUM_PRIORITIES]; ports],
            update_due: vec![false; ports],
            stalled_since: vec![SimTime::MAX; ports],
        }
    }

    /// Blocks a packet of `size` bytes takes.
    #[inline]
    fn blocks(&self, size: u64) -> u32 {
        size.div_ceil(self.block) as u32
    }

    /// Whether port `p` holds the credits for a packet of `size` bytes at `prio`.
    #[inline]
    fn fits(&self, p: usize, prio: u8, size: u64) -> bool {
        prio == CONTROL_PRIORITY || !self.limited[p] || self.held[p][prio as usize] >= self.blocks(size)
    }

    /// When an update of what is freed at `now` leaves: now, or the next multiple of the interval.
    fn update_time(&self, now: SimTime) -> SimTime {
        SimTime(now.0.div_ceil(self.interval.0).saturating_mul(self.interval.0))
    }
}

/// Port `p`'s priority `prio` starts waiting for credits (`paused`: its waiting priorities,
/// `since`: since when it has waited, `stats`: its counters).
fn stall(paused: &mut u8, since: &mut SimTime, stats: &mut PortStats, prio: u8, now: SimTime) {
    if *paused == 0 {
        stats.credit_stalls += 1;
        *since = now;
    }
    *paused |= 1 << prio;
}

/// Port `p`'s priority `prio` has its credits.
fn unstall(paused: &mut u8, since: &mut SimTime, stats: &mut PortStats, prio: u8, now: SimTime) {
    *paused &= !(1 << prio);
    if *paused == 0 {
        stats.credit_stall_time += now - *since;
        *since = SimTime::MAX;
    }
}

/// A port's credits as [`Simulation::port`] shows them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreditView {
    /// Bytes of credit the port holds for its peer's buffer, per priority (`None` where its
    /// link carries no credits: into a host or an NVSwitch).
    pub held: Option<[u64; NUM_PRIORITIES]>,
    /// As a switch ingress: bytes freed in its buffer whose credits are not yet back at the
    /// sender, per priority.
    pub returning: [u64; NUM_PRIORITIES],
    /// Bytes of each ingress buffer (one priority), whole blocks.
    pub buffer: u64,
}

impl Simulation {
    #[inline]
    fn credits(&self) -> &Credits {
        self.net.credit.as_deref().expect("credit flow control runs with its state")
    }

    /// Whether switch port `p` may send a packet of `size` bytes at `prio` right now.
    #[inline]
    pub(crate) fn credit_fits(&self, p: u32, prio: u8, size: u64) -> bool {
        self.credits().fits(p as usize, prio, size)
    }

    /// The next packet switch port `p` may send, as `Port::dequeue` picks it, except that a
    /// priority whose head packet lacks credits waits (and the port counts a stall).
    #[inline(never)]
    pub(crate) fn credit_dequeue(&mut self, p: u32) -> Option<PacketId> {
        let now = self.now;
        let c = self.net.credit.as_deref_mut().expect("credit flow control runs with its state");
        let port = &mut self.net.ports[p as usize];
        if !c.limited[p as usize] {
            return port.dequeue(&self.net.packets);
        }
        loop {
            let eligible = port.nonempty & !port.paused;
            if eligible == 0 {
                return None;
            }
            let prio = 7 - eligible.leading_zeros() as u8;
            let head = *port.prio[prio as usize].packets.front().expect("nonempty bit set on an empty queue");
            if c.fits(p as usize, prio, self.net.packets[head].size as u64) {
                return port.dequeue(&self.net.packets);
            }
            stall(&mut port.paused, &mut c.stalled_since[p as usize], &mut port.stats, prio, now);
        }
    }

    /// Packet `id` starts onto port `p`'s link: it takes its credits. A NIC left with too few
    /// for its largest packet holds its data priority until more come back.
    #[inline(never)]
    pub(crate) fn credit_sent(&mut self, p: u32, id: PacketId) {
        let now = self.now;
        let c = self.net.credit.as_deref_mut().expect("credit flow control runs with its state");
        let pkt = &self.net.packets[id];
        let prio = pkt.priority;
        if !c.limited[p as usize] || prio == CONTROL_PRIORITY {
            return;
        }
        let blocks = c.blocks(pkt.size as u64);
        let held = &mut c.held[p as usize][prio as usize];
        debug_assert!(*held >= blocks, "port {p} sent {blocks} blocks holding {held}");
        *held -= blocks;
        let port = &mut self.net.ports[p as usize];
        if port.is_host && *held < c.nic_packet {
            stall(&mut port.paused, &mut c.stalled_since[p as usize], &mut port.stats, prio, now);
        }
    }

    /// A packet of `size` bytes that came in through switch port `ing` at `prio` starts
    /// leaving the buffer: its blocks go back to the sender, in this update or the next.
    #[inline(never)]
    pub(crate) fn credit_freed(&mut self, ing: u32, prio: u8, size: u64) {
        let now = self.now;
        let c = self.net.credit.as_deref_mut().expect("credit flow control runs with its state");
        let blocks = c.blocks(size);
        let i = ing as usize;
        c.returning[i][prio as usize] += blocks;
        if c.interval == SimTime::ZERO {
            let arrival = now + self.net.ports[i].delay;
            self.events.push(arrival, Event::Credit(self.net.peers[i], prio, blocks));
            return;
        }
        c.waiting[i][prio as usize] += blocks;
        if !c.update_due[i] {
            c.update_due[i] = true;
            let at = c.update_time(now);
            self.events.push(at, Event::CreditUpdate(ing));
        }
    }

    /// Switch port `ing`'s periodic update leaves: every block freed since the last.
    #[cold]
    #[inline(never)]
    pub(crate) fn credit_update_due(&mut self, ing: u32) {
        let i = ing as usize;
        let arrival = self.now + self.net.ports[i].delay;
        let c = self.net.credit.as_deref_mut().expect("credit flow control runs with its state");
        c.update_due[i] = false;
        for prio in 0..NUM_PRIORITIES {
            let blocks = std::mem::take(&mut c.waiting[i][prio]);
            if blocks > 0 {
                self.events.push(arrival, Event::Credit(self.net.peers[i], prio as u8, blocks));
            }
        }
    }

    /// An update reaches sender port `p`: `blocks` more credits at `prio`, and the priority
    /// goes again if they are enough.
    #[inline(never)]
    pub(crate) fn credit_arrived(&mut self, p: u32, prio: u8, blocks: u32) {
        let now = self.now;
        let c = self.net.credit.as_deref_mut().expect("credit flow control runs with its state");
        let (i, q) = (p as usize, prio as usize);
        c.held[i][q] += blocks;
        c.returning[self.net.peers[i] as usize][q] -= blocks;
        debug_assert!(c.held[i][q] <= c.buffer, "port {p} holds more credits than its peer's buffer");
        let port = &mut self.net.ports[i];
        if port.paused & (1 << prio) == 0 {
            return;
        }
        let enough = match port.is_host {
            true => c.held[i][q] >= c.nic_packet,
            // (A waiting priority's queue keeps its head: only a send takes it.)
            false => {
                let head = *port.prio[q].packets.front().expect("a priority waits for credits with nothing queued");
                c.fits(i, prio, self.net.packets[head].size as u64)
            }
        };
        if enough {
            unstall(&mut port.paused, &mut c.stalled_since[i], &mut port.stats, prio, now);
            self.kick(p);
        }
    }

    /// Port `p`'s counters with a stall still running counted up to now.
    pub(crate) fn credit_stats(&self, p: u32, stats: &mut PortStats) {
        if let Some(c) = self.net.credit.as_deref() {
            let since = c.stalled_since[p as usize];
            if since != SimTime::MAX {
                stats.credit_stall_time += self.now - since;
            }
        }
    }

    /// Port `p`'s credits (all zero without credit flow control).
    pub(crate) fn credit_view(&self, p: u32) -> CreditView {
        let Some(c) = self.net.credit.as_deref() else { return CreditView::default() };
        let i = p as usize;
        let bytes = |blocks: &[u32; NUM_PRIORITIES]| blocks.map(|b| b as u64 * c.block);
        CreditView {
            held: c.limited[i].then(|| bytes(&c.held[i])),
            returning: bytes(&c.returning[i]),
            buffer: c.buffer as u64 * c.block,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ByteSize;

    fn credits(interval: SimTime) -> (Credits, Topology) {
        let toml = r#"
[topology]
kind = "star"
hosts = 3
link = { bandwidth = "100Gbps", delay = "1us" }
[switch]
flow_control = "credit"
[workload]
kind = "incast"
senders = "1..=2"
receiver = 0
size = "10KB"
"#;
        let s = crate::config::Scenario::from_toml(toml, "test").unwrap();
        let topo = Topology::build(&s.topology).unwrap();
        let config = CreditConfig { buffer: ByteSize(10_000), block: ByteSize(64), update_interval: interval };
        (Credits::new(&topo, &config, 1_048), topo)
    }

    #[test]
    fn links_into_the_switch_carry_credits_and_links_into_hosts_none() {
        let (c, topo) = credits(SimTime::ZERO);
        for (p, &limited) in c.limited.iter().enumerate() {
            let host_side = topo.is_host(topo.ports[p].node);
            assert_eq!(limited, host_side, "port {p}: a host's port faces the switch");
            let held = if limited { 156 } else { 0 };
            assert_eq!(c.held[p], [held; NUM_PRIORITIES], "10 000 B is 156 whole blocks of 64 B");
        }
        assert_eq!((c.blocks(1_048), c.blocks(64), c.blocks(65), c.nic_packet), (17, 1, 2, 17));
    }

    #[test]
    fn a_packet_fits_with_the_blocks_it_takes_and_control_always_does() {
        let (mut c, topo) = credits(SimTime::ZERO);
        let nic = topo.host_port(1) as usize;
        let towards_host = topo.ports[nic].peer as usize;
        c.held[nic][3] = 17;
        assert!(c.fits(nic, 3, 1_048));
        assert!(!c.fits(nic, 3, 1_089), "18 blocks");
        c.held[nic][3] = 0;
        assert!(c.fits(nic, CONTROL_PRIORITY, 60), "ACKs take no credits");
        assert!(c.fits(towards_host, 3, 1_048), "the switch's port towards a host takes none either");
    }

    #[test]
    fn batched_updates_leave_at_the_next_multiple_of_the_interval() {
        let (c, _) = credits(SimTime::from_ns(500));
        assert_eq!(c.update_time(SimTime::from_ns(1)), SimTime::from_ns(500));
        assert_eq!(c.update_time(SimTime::from_ns(500)), SimTime::from_ns(500), "on the tick: at once");
        assert_eq!(c.update_time(SimTime::from_ns(501)), SimTime::from_ns(1000));
    }

    #[test]
    fn a_stall_counts_once_while_any_priority_waits() {
        let (mut paused, mut since, mut stats) = (0u8, SimTime::MAX, PortStats::default());
        stall(&mut paused, &mut since, &mut stats, 3, SimTime::from_ns(10));
        stall(&mut paused, &mut since, &mut stats, 5, SimTime::from_ns(20));
        unstall(&mut paused, &mut since, &mut stats, 3, SimTime::from_ns(30));
        assert_eq!((stats.credit_stalls, stats.credit_stall_time, paused), (1, SimTime::ZERO, 1 << 5));
        unstall(&mut paused, &mut since, &mut stats, 5, SimTime::from_ns(50));
        assert_eq!((stats.credit_stalls, stats.credit_stall_time, since), (1, SimTime::from_ns(40), SimTime::MAX));
    }
}
