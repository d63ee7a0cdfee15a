//! Timed changes to links (`[[events]]`): slowed, failed, restored.
//!
//! A failure has two moments. At the event's time the link goes dark in both directions: a
//! packet that is on it then, or is sent onto it later, is lost when it would have arrived. The
//! switches at its ends do not know yet and go on sending onto it (a black hole), and a pause
//! either end received before stays in force (PFC frames across the link are lost too). After
//! the detection delay the failure is detected: both ends drop what waits in their queues for the
//! link, forget the link's PFC state (link-down resets it on hardware: the pause received is
//! lifted, and nothing waits for a RESUME that could never cross), and every switch's routes are
//! computed again without the link, as if the routing protocol converged at that moment, so
//! remote switches whose shortest paths crossed it route around it too. Switches that the links
//! left down cut off from every host (an island) have what they hold dropped then, and no
//! routes until a restore joins them again. A restore is the same
//! the other way: the link carries packets at once, with both ends' PFC state reset (link-up),
//! and routes use it again after the delay. A failure and restore within one detection delay
//! are never seen by routing (detection reads the link's state when it is due).
//!
//! A slow-down only changes the link's bandwidth (both directions): the packet being serialised
//! finishes at the old speed; ECN thresholds and PFC headroom keep the values they had.

use crate::config::{LinkAction, Scenario};
use crate::engine::net::pool::PacketId;
use crate::engine::{Event, Simulation};
use crate::time::{Bandwidth, SimTime};
use crate::topology::Topology;
use crate::wire::packet::{CONTROL_PRIORITY, NUM_PRIORITIES};

/// What one `Event::Link` does to the ports of its links (both ends of each).
#[derive(Clone, Debug)]
enum Change {
    Slow(Bandwidth),
    Fail,
    Restore,
    /// Routing catches up with the links' state.
    Detect,
}

/// The run's link events and the state of every port's link.
pub struct LinkEvents {
    /// In the order they are queued: `Event::Link(i)` applies `changes[i]`.
    changes: Vec<(Change, Vec<u32>)>,
    /// Per port: its link is dark now.
    failed: Vec<bool>,
    /// Per port: routing leaves its link out.
    down: Vec<bool>,
    /// The speeds `slow` set, for `links.csv`.
    pub(crate) speed_changes: Vec<crate::metrics::SpeedChange>,
}

/// The ports (both ends) of the link event `e` names on `topo`; `Err` is (key, message).
pub fn event_ports(
    topo: &Topology,
    i: usize,
    link: &[String; 2],
    index: Option<u32>,
) -> Result<Vec<u32>, (String, String)> {
    let key = format!("events[{i}].link");
    let names = topo.names();
    let a = names.parse(&link[0]).map_err(|m| (key.clone(), m))?;
    let b = names.parse(&link[1]).map_err(|m| (key.clone(), m))?;
    let ports = topo.links_between(a, b);
    if ports.is_empty() {
        let mut neighbours: Vec<String> =
            topo.node_ports[a as usize].iter().map(|&p| topo.node_name(topo.peer_node(p))).collect();
        neighbours.dedup();
        return Err((
            key,
            format!(
                "{} and {} are not linked ({}'s links go to {}); name the two ends of one link",
                link[0],
                link[1],
                link[0],
                neighbours.join(", ")
            ),
        ));
    }
    let chosen: Vec<u32> = match index {
        None => ports,
        Some(k) if (k as usize) < ports.len() => vec![ports[k as usize]],
        Some(k) => {
            return Err((
                format!("events[{i}].index"),
                format!(
                    "{} and {} are joined by {} link(s), so index is 0 to {}, got {k}",
                    link[0],
                    link[1],
                    ports.len(),
                    ports.len() - 1
                ),
            ))
        }
    };
    Ok(chosen.iter().flat_map(|&p| [p, topo.ports[p as usize].peer]).collect())
}

/// Checks the scenario's link events against its fabric: the links exist, a link fails only
/// while up and is restored only while failed, no failure leaves a host unable to reach another.
pub fn check(s: &Scenario, topo: &Topology) -> crate::cc::Check {
    let mut down = vec![false; topo.ports.len()];
    // Restored links that routing still leaves out until their restore is detected: (until,
    // ports). A failure meanwhile must leave the hosts joined without them too.
    let mut lingering: Vec<(SimTime, Vec<u32>)> = Vec::new();
    let default_detection = s.switch.failure_detection.unwrap_or(crate::config::DEFAULT_FAILURE_DETECTION);
    let mut order: Vec<usize> = (0..s.events.len()).collect();
    order.sort_by_key(|&i| s.events[i].at);
    for i in order {
        let e = &s.events[i];
        let ports = event_ports(topo, i, &e.link, e.index)?;
        let key = |k: &str| format!("events[{i}].{k}");
        let nvlink = |p: &u32| topo.is_nvlink_port(topo.ports[*p as usize].node);
        if s.simulation.nvlink == crate::config::NvlinkModel::Fluid && ports.iter().any(nvlink) {
            return crate::config::fail(
                key("link"),
                format!(
                    "changes {}, an NVLink link, which simulation.nvlink = \"fluid\" runs as rates that no link event reaches; set simulation.nvlink = \"packet\" to change it",
                    e.describe()
                ),
            );
        }
        match e.action {
            LinkAction::Slow => {}
            LinkAction::Fail => {
                if ports.iter().any(|&p| down[p as usize]) {
                    return crate::config::fail(
                        key("action"),
                        format!("fails {} at {}, which is already failed then; restore it first", e.describe(), e.at),
                    );
                }
                if let Some(&p) = ports.iter().find(|&&p| topo.is_host(topo.ports[p as usize].node)) {
                    let host = topo.ports[p as usize].node;
                    return crate::config::fail(
                        key("link"),
                        format!(
                            "fails {}, {}'s only link, which would cut it off from every other host; fail a link between switches",
                            e.describe(),
                            topo.node_name(host)
                        ),
                    );
                }
                for &p in &ports {
                    down[p as usize] = true;
                }
                lingering.retain(|(until, _)| *until > e.at);
                let mut out = down.clone();
                for &p in lingering.iter().flat_map(|(_, ports)| ports) {
                    out[p as usize] = true;
                }
                if let Err(h) = topo.hosts_connected(&out) {
                    return crate::config::fail(
                        key("link"),
                        format!(
                            "failing {} at {} (with the links failed before it, or restored but not yet detected) leaves host {h} unable to reach host 0; fail fewer links at once, or restore one first",
                            e.describe(),
                            e.at
                        ),
                    );
                }
            }
            LinkAction::Restore => {
                if ports.iter().any(|&p| !down[p as usize]) {
                    return crate::config::fail(
                        key("action"),
                        format!(
                            "restores {} at {}, which is not failed then; a restore follows a fail of the same link",
                            e.describe(),
                            e.at
                        ),
                    );
                }
                for &p in &ports {
                    down[p as usize] = false;
                }
                lingering.push((e.at + e.detection.unwrap_or(default_detection), ports));
            }
        }
    }
    Ok(())
}

impl LinkEvents {
    /// The scenario's events on `topo` (checked), with the events to queue: (time, index).
    pub fn new(s: &Scenario, topo: &Topology) -> (LinkEvents, Vec<(SimTime, u32)>) {
        let mut changes = Vec::new();
        let mut queued = Vec::new();
        let default_detection = s.switch.failure_detection.unwrap_or(crate::config::DEFAULT_FAILURE_DETECTION);
        for (i, e) in s.events.iter().enumerate() {
            let ports = event_ports(topo, i, &e.link, e.index).expect("checked with the fabric");
            let change = match e.action {
                LinkAction::Slow => Change::Slow(e.bandwidth.expect("checked: slow has a bandwidth")),
                LinkAction::Fail => Change::Fail,
                LinkAction::Restore => Change::Restore,
            };
            queued.push((e.at, changes.len() as u32));
            changes.push((change, ports.clone()));
            if e.action != LinkAction::Slow {
                queued.push((e.at + e.detection.unwrap_or(default_detection), changes.len() as u32));
                changes.push((Change::Detect, ports));
            }
        }
        let n = topo.ports.len();
        let events = LinkEvents { changes, failed: vec![false; n], down: vec![false; n], speed_changes: Vec::new() };
        (events, queued)
    }

    /// Whether port `p`'s link is dark now.
    #[inline]
    pub fn is_failed(&self, p: u32) -> bool {
        self.failed[p as usize]
    }
}

impl Simulation {
    /// Applies link change `i` (out of line: the event loop's dispatch stays small enough to be
    /// inlined into it).
    #[cold]
    #[inline(never)]
    pub(crate) fn link_event(&mut self, i: u32) {
        let Some(links) = self.net.links.as_mut() else { return };
        let (change, ports) = links.changes[i as usize].clone();
        match change {
            Change::Slow(bw) => {
                for &p in &ports {
                    self.net.ports[p as usize].bandwidth = bw;
                    links.speed_changes.push(crate::metrics::SpeedChange { time: self.now, port: p, bandwidth: bw });
                }
            }
            Change::Fail => {
                for &p in &ports {
                    links.failed[p as usize] = true;
                }
                // What is on the link now is lost (what is sent onto it from now on too:
                // `start_tx` asks `is_failed`).
                let failed = &links.failed;
                self.events.rewrite(|e| {
                    if let Event::Arrive(p, id) = *e {
                        if failed[p as usize] {
                            *e = Event::Lost(p, id);
                        }
                    }
                });
            }
            Change::Restore => {
                for &p in &ports {
                    links.failed[p as usize] = false;
                }
                // Link-up starts both ends' PFC afresh: a pause that a RESUME lost in the dark
                // would otherwise hold for ever (a failure shorter than its detection is never
                // seen by routing, which would reset it).
                for &p in &ports {
                    self.reset_pfc(p);
                }
            }
            Change::Detect => {
                let changed: Vec<u32> =
                    ports.iter().copied().filter(|&p| links.down[p as usize] != links.failed[p as usize]).collect();
                if changed.is_empty() {
                    return;
                }
                for &p in &changed {
                    links.down[p as usize] = links.failed[p as usize];
                }
                let up: Vec<bool> = links.down.iter().map(|d| !d).collect();
                // Switches the links left cut off from the hosts (joined to no host's switch)
                // are islands: whatever is in them can never be delivered, so it is dropped now,
                // and they get no routes (and no packets) until a restore joins them again.
                // (Fabric switches only: a server's NVSwitch and its GPUs' NVLink ports are an
                // island of their own by design.)
                let joined = self.topo.joined_to_host_0(&links.down);
                let fabric = self.topo.num_hosts..self.topo.num_hosts + self.topo.fabric_switches;
                let island: Vec<bool> =
                    (0..self.topo.num_nodes()).map(|n| fabric.contains(&n) && !joined[n as usize]).collect();
                let mut dead: Vec<u32> = changed.iter().copied().filter(|&p| !up[p as usize]).collect();
                for s in fabric.clone() {
                    if island[s as usize] {
                        dead.extend(&self.topo.node_ports[s as usize]);
                    }
                }
                for &p in &dead {
                    self.reset_pfc(p);
                }
                for &p in &dead {
                    self.flush(p);
                }
                let topo = &self.topo;
                self.events.rewrite(|e| {
                    if let Event::Arrive(p, id) = *e {
                        if island[topo.peer_node(p) as usize] {
                            *e = Event::Lost(p, id);
                        }
                    }
                });
                self.topo.reroute(&up).expect("link events were checked to leave every host reachable");
                if let Some(ns3) = self.net.ecmp_ns3.as_deref_mut() {
                    ns3.reroute(&self.topo, Some(&up));
                }
                self.net.round_robin = vec![0; self.topo.route_set_count()];
            }
        }
    }

    /// Packet `id`, sent on port `p` while its link was dark (or on it when it failed), would
    /// have arrived now: it is lost.
    #[cold]
    #[inline(never)]
    pub(crate) fn lost_on_link(&mut self, p: u32, id: PacketId) {
        self.drop_packet(p, id);
    }

    /// Port `p`'s link is down for routing (detected dark, or in an island): the pause it
    /// received is lifted and the one it sent forgotten, as link-down does on hardware, so that
    /// no pause waits for a RESUME that cannot cross.
    fn reset_pfc(&mut self, p: u32) {
        let now = self.now;
        let port = &mut self.net.ports[p as usize];
        port.pausing_peer = 0;
        if port.paused != 0 {
            port.paused = 0;
            if let Some(since) = port.stats.paused_since.take() {
                port.stats.paused_time += now - since;
            }
        }
    }

    /// Drops what waits in switch port `p`'s queues (and its PFC frames), releasing their buffer
    /// as if they had left (an upstream they paused may resume).
    fn flush(&mut self, p: u32) {
        if self.net.ports[p as usize].is_host {
            return; // (hosts are never cut off: checked)
        }
        while let Some(id) = self.net.ports[p as usize].pfc_out.pop_front() {
            self.net.ports[p as usize].pfc_frames -= 1;
            self.drop_packet(p, id);
        }
        let sw = self.switch_index(self.net.ports[p as usize].node);
        while let Some(id) = self.net.ports[p as usize].dequeue(&self.net.packets) {
            let pkt = &self.net.packets[id];
            let (prio, size, ingress) = (pkt.priority, pkt.size as u64, pkt.ingress);
            let s = &mut self.net.switches[sw];
            if prio == CONTROL_PRIORITY {
                s.pools.release_unowned(size);
            } else {
                let ing = ingress as usize;
                self.net.ports[ing].prio[prio as usize].ingress.release(size, s.reserve, &mut s.pools);
                if s.pfc && self.net.ports[ing].pausing_peer & (1 << prio) != 0 {
                    self.resume_if_below_xon(ing as u32, prio, sw, ing as u32 == p);
                }
            }
            self.drop_packet(p, id);
        }
        debug_assert!((0..NUM_PRIORITIES).all(|q| self.net.ports[p as usize].prio[q].bytes == 0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two leaves (s0, s1) with two hosts each, two spines (s2, s3), and `events`.
    fn scenario(events: &str) -> (Scenario, Topology) {
        let toml = format!(
            r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[workload]
kind = "flows"
flows = [{{ src = 0, dst = 2, size = "10KB" }}]
{events}
"#
        );
        let s = Scenario::from_toml(&toml, "test").unwrap();
        let topo = Topology::build(&s.topology).unwrap();
        (s, topo)
    }

    fn event(at: &str, a: &str, b: &str, action: &str) -> String {
        format!("[[events]]\nat = \"{at}\"\nlink = [\"{a}\", \"{b}\"]\naction = \"{action}\"\ndetection = \"10us\"\n")
    }

    fn refused(events: &[String]) -> String {
        let (s, topo) = scenario(&events.concat());
        match check(&s, &topo) {
            Err(e) => format!("{e:?}"),
            Ok(()) => panic!("accepted: {events:?}"),
        }
    }

    #[test]
    fn a_link_is_both_its_ends_and_only_a_real_link_is_one() {
        let (_, topo) = scenario("");
        let ports = event_ports(&topo, 0, &["s0".into(), "s2".into()], None).unwrap();
        assert_eq!(ports.len(), 2);
        assert_eq!(topo.ports[ports[0] as usize].peer, ports[1]);
        let nodes: Vec<u32> = ports.iter().map(|&p| topo.ports[p as usize].node).collect();
        assert_eq!(nodes, [topo.num_hosts, topo.num_hosts + 2]);
        let (key, message) = event_ports(&topo, 3, &["s0".into(), "s1".into()], None).unwrap_err();
        assert_eq!(key, "events[3].link");
        assert!(message.contains("not linked"), "{message}");
        let (key, _) = event_ports(&topo, 0, &["s0".into(), "s2".into()], Some(1)).unwrap_err();
        assert_eq!(key, "events[0].index", "one link between them: index 0 only");
    }

    #[test]
    fn a_failure_and_its_restore_are_accepted_in_either_order_of_writing() {
        let (s, topo) = scenario(&[event("50us", "s2", "s0", "restore"), event("20us", "s0", "s2", "fail")].concat());
        assert!(check(&s, &topo).is_ok());
        let (events, queued) = LinkEvents::new(&s, &topo);
        // Each change and its detection, in the order written; the links all up to begin with.
        let times: Vec<SimTime> = queued.iter().map(|&(t, _)| t).collect();
        assert_eq!(times, [50, 60, 20, 30].map(SimTime::from_us));
        assert!((0..topo.ports.len() as u32).all(|p| !events.is_failed(p)));
    }

    #[test]
    fn a_link_fails_only_while_up_and_is_restored_only_while_failed() {
        let twice = refused(&[event("10us", "s0", "s2", "fail"), event("20us", "s2", "s0", "fail")]);
        assert!(twice.contains("already failed"), "{twice}");
        let up = refused(&[event("10us", "s0", "s2", "restore")]);
        assert!(up.contains("not failed"), "{up}");
    }

    #[test]
    fn no_failure_may_cut_a_host_off() {
        let host = refused(&[event("10us", "h0", "s0", "fail")]);
        assert!(host.contains("only link"), "{host}");
        let both = refused(&[event("10us", "s0", "s2", "fail"), event("20us", "s0", "s3", "fail")]);
        assert!(both.contains("unable to reach"), "{both}");
        // A restore not yet detected does not count as a way: routing still leaves it out.
        let early = refused(&[
            event("10us", "s0", "s2", "fail"),
            event("20us", "s0", "s2", "restore"),
            event("25us", "s0", "s3", "fail"),
        ]);
        assert!(early.contains("unable to reach"), "{early}");
        let (s, topo) = scenario(
            &[
                event("10us", "s0", "s2", "fail"),
                event("20us", "s0", "s2", "restore"),
                event("31us", "s0", "s3", "fail"),
            ]
            .concat(),
        );
        assert!(check(&s, &topo).is_ok(), "detected 30 us");
    }
}
