//! What a scenario will cost, worked out from the scenario alone, before anything is built: the
//! memory a run needs and the size of the files it writes.
//!
//! The estimate exists so that a run too big for the machine is refused at once with its figures
//! (instead of being killed by the kernel an hour in, or swapping the machine to a halt), and so
//! that timelines that would fill a disk are flagged before they are written. Nothing here
//! expands the workload or builds the topology: a scenario with 10^10 flows is estimated in
//! microseconds. Per-item sizes come from the engine's own types (`size_of`), so they follow
//! the code.

use crate::cc::{Cc, FlowFacts, Receiver};
use crate::config::{HostSet, LinkConfig, Scenario, TopologyConfig, WorkloadConfig};
use crate::engine::net::port::Port;
use crate::engine::nic::qp::Flow;
use crate::metrics::ComputeStep;
use crate::time::SimTime;
use crate::topology::PortInfo;
use crate::wire::packet::Packet;
use crate::workload::{ComputeDef, FlowDef};
use std::mem::size_of;

/// One part of an estimate: the scenario key that drives it, and its bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    pub key: &'static str,
    pub what: String,
    pub bytes: u128,
}

/// Memory of a run and size of its result files, by part.
#[derive(Clone, Debug)]
pub struct Estimate {
    pub memory: Vec<Part>,
    pub output: Vec<Part>,
    /// The shortest the run can take: the busiest host's bytes at its line rate, after the
    /// latest configured start.
    pub ideal_duration: SimTime,
}

impl Estimate {
    pub fn memory_bytes(&self) -> u128 {
        self.memory.iter().map(|p| p.bytes).sum()
    }
    pub fn output_bytes(&self) -> u128 {
        self.output.iter().map(|p| p.bytes).sum()
    }
    /// The biggest part (whose key an error names).
    pub fn largest_memory_part(&self) -> &Part {
        self.memory.iter().max_by_key(|p| p.bytes).expect("an estimate has parts")
    }
    /// "3.1 TB (flows 3.0 TB: ..., ports ...)".
    pub fn describe(parts: &[Part]) -> String {
        let total: u128 = parts.iter().map(|p| p.bytes).sum();
        let mut big: Vec<&Part> = parts.iter().filter(|p| p.bytes > 0).collect();
        big.sort_by_key(|p| std::cmp::Reverse(p.bytes));
        let list: Vec<String> = big.iter().take(3).map(|p| format!("{} {}", p.what, human(p.bytes))).collect();
        format!("{} ({})", human(total), list.join(", "))
    }
}

/// "2.6 MB", decimal units as in scenario files.
pub fn human(b: u128) -> String {
    let units = ["B", "KB", "MB", "GB", "TB", "PB", "EB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < units.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// Counts of the fabric, from its configuration.
struct FabricSize {
    /// Host nodes: a GPU server's GPUs have an NVLink port each besides their NIC.
    hosts: u64,
    /// The hosts a workload's ranks are (the GPUs, not their NVLink ports).
    workload_hosts: u64,
    switches: u64,
    links: u64,
    /// Switches that hosts hang off: the routing tables have one entry per switch and ToR.
    tors: u64,
    /// The fastest host link and the longest bandwidth-delay product of any link, in bytes.
    host_rate_bps: u64,
    max_bdp_bytes: u64,
}

fn fabric_size(t: &TopologyConfig) -> FabricSize {
    let bdp = |l: &LinkConfig| l.bandwidth.bytes_in(l.delay);
    let of = |hosts: u64, switches: u64, links: u64, tors: u64, host: &LinkConfig, fabric: &[&LinkConfig]| FabricSize {
        hosts,
        workload_hosts: hosts,
        switches,
        links,
        tors,
        host_rate_bps: host.bandwidth.0,
        max_bdp_bytes: fabric.iter().map(|l| bdp(l)).max().unwrap_or(0).max(bdp(host)),
    };
    // GPU servers add one NVLink port per GPU (a host node) and one NVSwitch per server.
    let servers = |f: FabricSize, per_server: u32, nvlink: &Option<LinkConfig>| match nvlink {
        None => f,
        Some(l) => {
            let nvswitches = f.hosts / u64::from(per_server.max(1));
            FabricSize {
                hosts: 2 * f.hosts,
                switches: f.switches + nvswitches,
                links: f.links + f.hosts,
                tors: f.tors + nvswitches,
                max_bdp_bytes: f.max_bdp_bytes.max(bdp(l)),
                ..f
            }
        }
    };
    match t {
        TopologyConfig::Star(s) => {
            servers(of(s.hosts as u64, 1, s.hosts as u64, 1, &s.link, &[]), s.nics_per_server, &s.nvlink)
        }
        TopologyConfig::Dumbbell(d) => {
            let hosts = d.left as u64 + d.right as u64;
            of(hosts, 2, hosts + 1, 2, &d.link, &[&d.bottleneck])
        }
        TopologyConfig::LeafSpine(l) => {
            let (leaves, spines) = (l.leaves as u64, l.spines as u64);
            let hosts = leaves * l.hosts_per_leaf as u64;
            let fabric = l.fabric_link.unwrap_or(l.link);
            let fabric_links = leaves * spines * l.links_per_spine as u64;
            let f = of(hosts, leaves + spines, hosts + fabric_links, leaves, &l.link, &[&fabric]);
            servers(f, l.nics_per_server, &l.nvlink)
        }
        TopologyConfig::Clos(c) => {
            let (racks, spines) = (c.racks as u64, c.spines as u64);
            let hosts = racks * c.servers_per_rack as u64 * c.gpus_per_server as u64;
            let fabric = c.fabric_link.unwrap_or(c.link);
            let per_spine = c.links_per_spine().unwrap_or(1) as u64;
            let f = of(hosts, racks + spines, hosts + racks * spines * per_spine, racks, &c.link, &[&fabric]);
            servers(f, c.gpus_per_server, &c.nvlink)
        }
        TopologyConfig::Rail(r) => {
            let hosts = r.servers as u64 * r.gpus_per_server as u64;
            let rails = (r.servers / r.group().max(1)) as u64 * r.gpus_per_server as u64;
            let fabric = r.fabric_link.unwrap_or(r.link);
            let per_spine = r.links_per_spine().unwrap_or(1) as u64;
            let spines = r.spines as u64;
            let f = of(hosts, rails + spines, hosts + rails * spines * per_spine, rails, &r.link, &[&fabric]);
            servers(f, r.gpus_per_server, &r.nvlink)
        }
        TopologyConfig::FatTree(f) => {
            let (k, half) = (f.k as u64, f.k as u64 / 2);
            let hosts = k * half * half;
            let fabric = f.fabric_link.unwrap_or(f.link);
            let size =
                of(hosts, 2 * k * half + half * half, hosts + 2 * k * half * half, k * half, &f.link, &[&fabric]);
            servers(size, f.nics_per_server, &f.nvlink)
        }
        TopologyConfig::Custom(c) => FabricSize {
            hosts: c.hosts as u64,
            workload_hosts: c.hosts as u64,
            switches: c.switches as u64,
            links: c.links.len() as u64,
            tors: c.switches as u64,
            host_rate_bps: c.links.iter().map(|l| l.bandwidth.0).max().unwrap_or(1),
            max_bdp_bytes: c.links.iter().map(|l| l.bandwidth.bytes_in(l.delay)).max().unwrap_or(0),
        },
    }
}

/// The flows the scenario's workload makes (saturating), counted without making them.
pub fn flow_count(s: &Scenario) -> u64 {
    let work = traffic_size(s, fabric_size(&s.topology).workload_hosts);
    u64::try_from(work.flows).unwrap_or(u64::MAX)
}

/// The workload's size without expanding it.
struct WorkloadSize {
    flows: u128,
    bytes: u128,
    /// Bytes the busiest host sends or receives.
    busiest_host_bytes: u128,
    latest_start: SimTime,
    /// Compute steps, and the compute time of each host in all (`training`).
    computes: u128,
    compute_time: SimTime,
    /// Training iterations: rows of iterations.csv.
    iterations: u128,
}

fn set_len(set: &HostSet, hosts: u64) -> u128 {
    set.len(u32::try_from(hosts).unwrap_or(u32::MAX)).into()
}

/// The scenario's traffic: its workload, or its jobs (a job's sequence adds up; jobs, on
/// hosts of their own, run side by side).
fn traffic_size(s: &Scenario, hosts: u64) -> WorkloadSize {
    if let Some(w) = &s.workload {
        return workload_size(w, hosts);
    }
    let mut all = nothing();
    for job in &s.jobs {
        let ranks = match (&job.hosts, job.ranks) {
            (Some(set), _) => set_len(set, hosts) as u64,
            (None, r) => u64::from(r.unwrap_or(0)),
        };
        let mut own = nothing();
        for w in &job.workload.0 {
            let one = workload_size(w, ranks);
            own.flows += one.flows;
            own.bytes += one.bytes;
            own.busiest_host_bytes += one.busiest_host_bytes;
            own.computes += one.computes;
            own.compute_time += one.compute_time;
            own.iterations += one.iterations;
            own.latest_start = own.latest_start.max(one.latest_start);
        }
        all.flows += own.flows;
        all.bytes += own.bytes;
        all.computes += own.computes;
        all.iterations += own.iterations;
        all.busiest_host_bytes = all.busiest_host_bytes.max(own.busiest_host_bytes);
        all.compute_time = all.compute_time.max(own.compute_time);
        all.latest_start = all.latest_start.max(job.start + own.latest_start);
    }
    all
}

/// One workload's size on `hosts` ranks, as its kind counts it (`WorkloadKind::size`: the same
/// flow count the engine's limit reads).
fn workload_size(w: &WorkloadConfig, hosts: u64) -> WorkloadSize {
    let size = w.as_kind().size(u32::try_from(hosts).unwrap_or(u32::MAX));
    WorkloadSize {
        flows: size.flows.into(),
        bytes: size.bytes,
        busiest_host_bytes: size.busiest_rank_bytes,
        latest_start: size.latest_start,
        computes: size.computes.into(),
        compute_time: size.compute_time,
        iterations: size.iterations.into(),
    }
}

/// No traffic: where a sum of workloads starts.
fn nothing() -> WorkloadSize {
    WorkloadSize {
        flows: 0,
        bytes: 0,
        busiest_host_bytes: 0,
        latest_start: SimTime::ZERO,
        computes: 0,
        compute_time: SimTime::ZERO,
        iterations: 0,
    }
}

/// Bytes of one row in each result file, as written (times with three decimals), measured on
/// runs of an incast, an all-to-all, a fat-tree permutation and a training loop.
const FLOW_ROW: u128 = 110;
const PORT_ROW: u128 = 90;
/// "2000.000,0,6,23980\n"
const QUEUE_ROW: u128 = 20;
/// "1234567.890,s12,3,s40,104800,0.838400\n"
const LINK_ROW: u128 = 35;
/// "2000.000,3,100.000000,157152,42.100000\n" (no window for rate-based algorithms)
const RATE_ROW: u128 = 38;
/// "2000.000,3,alpha,0.062500\n"
const CC_STATE_ROW: u128 = 33;
/// Values an algorithm reports into cc_state.csv each sample, at most.
const CC_STATE_VALUES: u128 = 3;
const TRACE_ROW: u128 = 56;
const ITERATION_ROW: u128 = 80;
/// Bytes of one entry of the event queue (time, sequence, event).
const EVENT_BYTES: u128 = 32;

/// The estimate for a parsed scenario.
pub fn estimate(s: &Scenario) -> Estimate {
    let fabric = fabric_size(&s.topology);
    let work = traffic_size(s, fabric.workload_hosts);
    let ports = 2 * fabric.links as u128;
    let packet = (s.nic.mtu.0 + s.nic.header.0).max(1) as u128;
    let ideal = work.busiest_host_bytes.saturating_mul(8_000_000_000_000) / fabric.host_rate_bps.max(1) as u128;
    // Compute and communication may overlap: the run takes at least the longer of the two.
    let ideal = SimTime(ideal.min(u64::MAX as u128 / 2) as u64).max(work.compute_time);
    let mut ideal_duration = work.latest_start + ideal;
    if let Some(stop) = s.simulation.stop_time {
        ideal_duration = ideal_duration.min(stop);
    }

    // A connection's algorithm and shared state (`engine/nic/connection.rs`) are counted per
    // flow: at most one connection per flow, as `nic.connections = "per_transfer"` and the
    // flow lists make; a collective's persistent connections take less.
    let per_flow = (size_of::<Flow>()
        + size_of::<Cc>()
        + size_of::<Receiver>()
        + size_of::<crate::engine::nic::connection::Connection>()
        + size_of::<FlowFacts>()
        + size_of::<FlowDef>()
        + 2 * size_of::<u32>() // dependencies: waiting count, start group
        + size_of::<Vec<u32>>() // dependents
        + 16) as u128 // a dependency or two of a collective
        + EVENT_BYTES;
    let per_compute = (size_of::<ComputeDef>()
        + size_of::<ComputeStep>()
        + size_of::<u32>() // dependencies: waiting count
        + size_of::<Vec<u32>>() // dependents
        + 8) as u128 // the step before it, and a flow or two
        + EVENT_BYTES;
    let per_port = (size_of::<Port>() + size_of::<PortInfo>() + 2 * size_of::<u64>()) as u128 + PORT_ROW;
    // A packet takes a 64-byte pool slot whatever its wire size: a full shared buffer per switch
    // (each packet there also named in a queue), and a bandwidth-delay product on every link
    // (each packet there with its arrival event).
    let slot = size_of::<Packet>() as u128;
    let buffered = fabric.switches as u128
        * (s.switch.buffer.0 as u128 / packet + 1)
        * (slot + size_of::<crate::engine::net::pool::PacketId>() as u128);
    let on_wires = ports * (fabric.max_bdp_bytes as u128 / packet + 1) * (slot + EVENT_BYTES);
    let routes = fabric.switches as u128 * fabric.tors as u128 * 8;
    // Flowlet tables (16 bytes an entry), as if every switch routed by flowlet.
    let flowlets = match (s.switch.routing.uses(crate::config::Routing::Flowlet), s.switch.flowlet) {
        (true, Some(f)) => fabric.switches as u128 * u128::from(f.slots) * 16,
        _ => 0,
    };
    // CONGA: a 16-byte estimator per port, and per pair of leaves and uplink 10 bytes of tables
    // (as if a leaf had an uplink to every switch that is not a leaf, up to the 31 it can tag).
    let conga = match s.switch.routing.uses(crate::config::Routing::Conga) {
        true => {
            let uplinks = (fabric.switches as u128).saturating_sub(fabric.tors as u128).clamp(1, 31);
            ports * 16 + (fabric.tors as u128).pow(2) * uplinks * 10
        }
        false => 0,
    };

    let (queue_rows, link_rows, rate_rows) = match s.output.sample_interval {
        Some(iv) if iv.0 > 0 => timeline_rows(s, &fabric, &work, ports, ideal_duration, iv),
        _ => (0, 0, 0),
    };
    let cc_state_rows = if s.output.cc_state { rate_rows * CC_STATE_VALUES } else { 0 };

    let trace_rows = s.output.trace.as_ref().map_or(0, |t| t.max_rows as u128);
    let iterations = work.iterations;
    let mut memory = vec![
        Part { key: "workload", what: format!("{} flows", work.flows), bytes: work.flows.saturating_mul(per_flow) },
        Part {
            key: "workload.iterations",
            what: format!("{} compute steps", work.computes),
            bytes: work.computes.saturating_mul(per_compute),
        },
        Part { key: "topology", what: format!("{ports} ports"), bytes: ports * per_port + routes + flowlets + conga },
        Part { key: "switch.buffer", what: "packets in buffers and on links".into(), bytes: buffered + on_wires },
        Part {
            key: "output.sample_interval",
            what: "timelines".into(),
            bytes: queue_rows * size_of::<crate::metrics::QueueSample>() as u128
                + link_rows * size_of::<crate::metrics::LinkSample>() as u128
                + rate_rows * size_of::<crate::metrics::RateSample>() as u128
                + cc_state_rows * size_of::<crate::metrics::CcStateSample>() as u128,
        },
        Part {
            key: "output.trace.max_rows",
            what: "trace".into(),
            bytes: trace_rows * size_of::<crate::metrics::trace::TraceRow>() as u128,
        },
    ];
    if s.nic.recovery == crate::config::Recovery::Selective {
        // A flow takes its bitmaps on its first packet out of order and gives them back when
        // done: at most every flow at once.
        let per_slot =
            crate::engine::nic::selective::Scoreboards::slot_bytes(s.nic.sack_bitmap, s.switch.trims().is_some())
                as u128;
        memory.push(Part {
            key: "nic.sack_bitmap",
            what: "selective recovery's bitmaps".into(),
            bytes: work.flows.saturating_mul(per_slot + size_of::<u32>() as u128),
        });
        if s.nic.ack_out_of_order == crate::config::AckOutOfOrder::Coalesced {
            // Each ACK sent while packets are held carries a copy of the receiver's bitmap until
            // it arrives: one per `ack_every` of the packets the buffers and wires can hold.
            let in_network = fabric.switches as u128 * (s.switch.buffer.0 as u128 / packet + 1)
                + ports * (fabric.max_bdp_bytes as u128 / packet + 1);
            memory.push(Part {
                key: "nic.ack_out_of_order",
                what: "the bitmaps coalesced ACKs carry".into(),
                bytes: in_network / u128::from(s.nic.ack_every.max(1)) * u128::from(s.nic.sack_bitmap / 8),
            });
        }
    }
    let per_connection = crate::engine::nic::entropy::Entropies::bytes_per_connection(&s.nic) as u128;
    if per_connection > 0 {
        // Every flow may be a connection, and take its REPS ring at once.
        memory.push(Part {
            key: "nic.load_balancing",
            what: "the senders' entropies".into(),
            bytes: work.flows.saturating_mul(per_connection),
        });
    }
    let output = vec![
        Part { key: "workload", what: "flows.csv".into(), bytes: work.flows.saturating_mul(FLOW_ROW) },
        Part { key: "topology", what: "ports.csv".into(), bytes: ports * PORT_ROW },
        Part { key: "output.queue_switches", what: "queues.csv".into(), bytes: queue_rows * QUEUE_ROW },
        Part { key: "output.queue_switches", what: "links.csv".into(), bytes: link_rows * LINK_ROW },
        Part { key: "output.rate_flows", what: "rates.csv".into(), bytes: rate_rows * RATE_ROW },
        // At most: an algorithm reports up to three values a sample (some none).
        Part { key: "output.cc_state", what: "cc_state.csv (at most)".into(), bytes: cc_state_rows * CC_STATE_ROW },
        // At most its row limit: a filter may keep far fewer.
        Part { key: "output.trace", what: "trace.csv (at most)".into(), bytes: trace_rows * TRACE_ROW },
        Part { key: "workload.iterations", what: "iterations.csv".into(), bytes: iterations * ITERATION_ROW },
    ];
    Estimate { memory, output, ideal_duration }
}

/// Rows of queues.csv, links.csv and rates.csv for timelines sampled every `iv` over a run of
/// `duration`, on a fabric of `ports` ports.
///
/// A sample writes a row for every link that carries something (links.csv: every port of a
/// busy fabric, data one way and ACKs the other), for every queue that is not empty
/// (queues.csv: mostly the ports where flows converge, one per busy receiver: an incast fills
/// one queue, not seventeen), and for every flow that is sending (rates.csv: a flow sharing its
/// link with `c` others takes `c` times its line-rate time: an incast's flows are all sampled
/// for the whole run, not for their own bytes at line rate).
fn timeline_rows(
    s: &Scenario,
    fabric: &FabricSize,
    work: &WorkloadSize,
    ports: u128,
    duration: SimTime,
    iv: SimTime,
) -> (u128, u128, u128) {
    let samples = duration.0 as u128 / iv.0 as u128 + 1;
    let switches = (fabric.switches as u128).max(1);
    let sampled_switches = s.output.queue_switches.as_ref().map_or(switches, |v| v.len() as u128);
    let switch_ports = ports - (fabric.hosts as u128).min(ports);
    let sampled_ports = switch_ports * sampled_switches / switches;
    let flows = work.flows.max(1);
    // Flows at the busiest host (its bytes over a mean flow's), over the phases a training loop
    // takes them in one after another (its compute steps per rank): how many share a link.
    let mean_flow = (work.bytes / flows).max(1);
    let phases = (work.computes / u128::from(fabric.workload_hosts.max(1))).max(1);
    let sharing = (work.busiest_host_bytes / mean_flow / phases).clamp(1, flows);
    // Hosts receiving at once, each behind one queue.
    let busy_queues = (flows / sharing).clamp(1, sampled_ports.max(1));
    let queue_rows = if sampled_ports == 0 { 0 } else { samples * busy_queues };
    let link_rows = samples * sampled_ports;
    let (sampled_flows, sampled_bytes) = match &s.output.rate_flows {
        None => (work.flows, work.bytes),
        Some(v) => (v.len() as u128, work.bytes * v.len() as u128 / flows),
    };
    let flow_time = sampled_bytes.saturating_mul(8_000_000_000_000) / fabric.host_rate_bps.max(1) as u128;
    // No flow is sampled for longer than the run.
    let rate_rows = (flow_time.saturating_mul(sharing) / iv.0 as u128).min(sampled_flows.saturating_mul(samples));
    (queue_rows, link_rows, rate_rows)
}

/// Memory the machine can give a new process now (Linux: `MemAvailable`); `None` elsewhere.
pub fn available_memory() -> Option<u128> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u128 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Topology;
    use crate::workload::expand;

    fn scenario(topology: &str, workload: &str) -> Scenario {
        let text = format!("[topology]\n{topology}\n[workload]\n{workload}\n");
        Scenario::from_toml(&text, "test").unwrap_or_else(|e| panic!("{e}"))
    }

    const LINK: &str = "link = { bandwidth = \"100Gbps\", delay = \"1us\" }";

    #[test]
    fn fabric_counts_match_the_built_topology() {
        for topology in [
            format!("kind = \"star\"\nhosts = 9\n{LINK}"),
            format!("kind = \"dumbbell\"\nleft = 3\nright = 5\n{LINK}\nbottleneck = {{ bandwidth = \"10Gbps\", delay = \"2us\" }}"),
            format!("kind = \"leaf_spine\"\nleaves = 4\nspines = 3\nhosts_per_leaf = 5\n{LINK}"),
            format!("kind = \"fat_tree\"\nk = 6\n{LINK}"),
            format!("kind = \"star\"\nhosts = 16\ngpus_per_server = 8\n{LINK}\nnvlink = {{ bandwidth = \"200GB/s\", delay = \"25ns\" }}"),
            format!("kind = \"clos\"\nracks = 4\nservers_per_rack = 2\nspines = 4\n{LINK}\nnvlink = {{ bandwidth = \"200GB/s\", delay = \"25ns\" }}"),
            format!("kind = \"rail\"\nservers = 4\ngpus_per_server = 4\nservers_per_group = 2\nspines = 2\n{LINK}\nnvlink = {{ bandwidth = \"200GB/s\", delay = \"25ns\" }}"),
        ] {
            let s = scenario(&topology, "kind = \"permutation\"\nsize = \"1KB\"");
            let built = Topology::build(&s.topology).unwrap();
            let f = fabric_size(&s.topology);
            assert_eq!(f.hosts, built.num_hosts as u64, "{topology}");
            // A workload's "all" is the GPUs, not their NVLink ports too.
            assert_eq!(f.workload_hosts, built.fabric_hosts as u64, "{topology}");
            assert_eq!(s.topology.fabric_hosts(), built.fabric_hosts as u64, "{topology}");
            assert_eq!(f.switches, built.num_switches as u64, "{topology}");
            assert_eq!(2 * f.links, built.ports.len() as u64, "{topology}");
        }
    }

    #[test]
    fn flow_counts_and_bytes_match_the_expanded_workload() {
        let topology = format!("kind = \"star\"\nhosts = 7\n{LINK}");
        for workload in [
            "kind = \"incast\"\nsenders = \"1..=5\"\nreceiver = 0\nsize = \"3KB\"\nflows_per_sender = 2",
            "kind = \"all_to_all\"\nsize = \"2KB\"\nflows_per_pair = 3",
            "kind = \"all_to_all\"\nsize = \"2KB\"\nalgorithm = \"pairwise\"",
            "kind = \"all_to_all\"\nsize = \"2KB\"\nalgorithm = \"hierarchical\"\nlocal_ranks = 1",
            "kind = \"send_recv\"\npairs = [[0, 1], [1, 2], [0, 1]]\nsize = \"3KB\"\nchunks = 2",
            "kind = \"permutation\"\nhosts = [1, 2, 4, 6]\nsize = \"5KB\"",
            "kind = \"all_reduce\"\nsize = \"700KB\"",
            "kind = \"all_reduce\"\nsize = \"700KB\"\nalgorithm = \"direct\"\nhosts = \"0..5\"",
            "kind = \"flows\"\nflows = [{ src = 1, dst = 0, size = \"1KB\" }, { src = 2, dst = 0, size = \"4KB\" }]",
            concat!(
                "kind = \"training\"\nhosts = \"1..6\"\niterations = 3\nlayers = [",
                "{ forward = \"1us\", backward = \"2us\", all_reduce = { size = \"500KB\" } },",
                "{ forward = \"1us\", input_grad = \"2us\", weight_grad = \"0us\", forward_all_to_all = { size = \"3KB\" },",
                "  backward_all_to_all = { size = \"0B\" }, all_reduce = { size = \"70KB\", algorithm = \"direct\" } }]",
            ),
        ] {
            let s = scenario(&topology, workload);
            let expanded = expand(s.workload.as_ref().unwrap(), 7, 1);
            let flows = expanded.flows;
            let w = workload_size(s.workload.as_ref().unwrap(), 7);
            assert_eq!(w.flows, flows.len() as u128, "{workload}");
            assert_eq!(w.computes, expanded.computes.len() as u128, "{workload}");
            let bytes: u64 = flows.iter().map(|f| f.size).sum();
            // All-reduce chunks are rounded per rank; the estimate is within a byte per flow.
            assert!(w.bytes.abs_diff(bytes as u128) <= w.flows, "{workload}: {} vs {bytes}", w.bytes);
        }
    }

    #[test]
    fn a_training_run_lasts_at_least_its_compute() {
        let s = scenario(
            &format!("kind = \"star\"\nhosts = 4\n{LINK}"),
            "kind = \"training\"\niterations = 10\nstart = \"5us\"\nlayers = [{ forward = \"10us\", backward = \"20us\", all_reduce = { size = \"1KB\" } }]",
        );
        assert_eq!(estimate(&s).ideal_duration, SimTime::from_us(305));
    }

    #[test]
    fn an_incast_lasts_at_least_its_bytes_at_line_rate() {
        let s = scenario(
            &format!("kind = \"star\"\nhosts = 5\n{LINK}"),
            "kind = \"incast\"\nsenders = \"1..=4\"\nreceiver = 0\nsize = \"1MB\"\nstart = \"10us\"",
        );
        // 4 MB into one 100 Gbps port: 320 us, after the 10 us start.
        assert_eq!(estimate(&s).ideal_duration, SimTime::from_us(330));
    }

    #[test]
    fn the_library_accepts_a_run_bigger_than_any_machine_and_estimates_it() {
        // Every fixed limit holds; the nanosecond timelines over two minutes need terabytes,
        // which only a front end, knowing its machine, refuses (aiccsim-cli's `admit`).
        let text = format!(
            "[topology]\nkind = \"star\"\nhosts = 17\n{LINK}\n[workload]\nkind = \"incast\"\nsenders = \"1..=16\"\nreceiver = 0\nsize = \"100GB\"\n[output]\nsample_interval = \"1ns\"\n"
        );
        let s = Scenario::from_toml(&text, "big.toml").unwrap_or_else(|e| panic!("{e}"));
        crate::engine::Fabric::build(&s).unwrap_or_else(|e| panic!("{e}"));
        assert!(estimate(&s).memory_bytes() > 1_000_000_000_000);
        assert_eq!(estimate(&s).largest_memory_part().key, "output.sample_interval");
    }

    #[test]
    fn timelines_are_estimated_from_the_sample_interval() {
        let mut s = scenario(
            &format!("kind = \"star\"\nhosts = 5\n{LINK}"),
            "kind = \"incast\"\nsenders = \"1..=4\"\nreceiver = 0\nsize = \"1MB\"",
        );
        s.output.sample_interval = Some(SimTime::from_ns(100));
        let e = estimate(&s);
        let part = |name: &str| e.output.iter().find(|p| p.what == name).unwrap().bytes;
        // 320 us / 100 ns = 3200 samples (+1): the links of the switch's 5 ports carry data or
        // ACKs, and one queue fills, the receiver's.
        assert_eq!(part("links.csv"), 3201 * 5 * LINK_ROW);
        assert_eq!(part("queues.csv"), 3201 * QUEUE_ROW);
        // Each flow shares the receiver's link with the 3 others: each is sent for 4 x its 80 us
        // at line rate, the whole run.
        assert_eq!(part("rates.csv"), 4 * 4 * 800 * RATE_ROW);
        assert_eq!(e.output.iter().find(|p| p.what.starts_with("cc_state")).unwrap().bytes, 0);
        s.output.cc_state = true;
        let e = estimate(&s);
        let part = |name: &str| e.output.iter().find(|p| p.what == name).unwrap().bytes;
        assert_eq!(part("cc_state.csv (at most)"), 3 * 4 * 4 * 800 * CC_STATE_ROW);
    }
}
