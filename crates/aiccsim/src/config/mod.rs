//! The scenario schema: what a scenario file may say, with every default written down.
//!
//! Parsing is strict (unknown keys are errors) and every error names the file and the key.
//! After parsing, [`validate`] checks what the types cannot (a flow to a host that does not exist,
//! thresholds in the wrong order, a disconnected topology) before anything is built.

#[macro_use]
pub(crate) mod tagged;
pub mod ns3;
pub mod units;
mod validate;

pub use units::ByteSize;
pub use validate::validate;

use crate::cc::CcConfig;
use crate::time::{Bandwidth, SimTime};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A scenario file, parsed and validated, with every default filled in.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub simulation: SimulationConfig,
    pub topology: TopologyConfig,
    #[serde(default)]
    pub switch: SwitchConfig,
    #[serde(default)]
    pub nic: NicConfig,
    #[serde(default)]
    pub cc: CcConfig,
    #[serde(default)]
    pub clocks: crate::nic::clock::ClocksConfig,
    pub workload: WorkloadConfig,
    #[serde(default)]
    pub output: OutputConfig,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationConfig {
    /// Root seed; every random stream of the run (ECN marking, spraying, workload generators)
    /// is derived from it, so the same scenario and seed give the same results.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Stop at this simulated time even if flows remain (they are reported unfinished).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_time: Option<SimTime>,
    /// End the run as stalled (with a diagnosis of the paused ports) when no flow has moved a
    /// byte for this long while flows remain: a PFC deadlock would otherwise run forever.
    /// Filled in when the scenario is loaded ([`SimulationConfig::default_stall_timeout`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_timeout: Option<SimTime>,
}

fn default_seed() -> u64 {
    1
}

impl SimulationConfig {
    /// One second, or twice the longest quiet time of a live flow (the retransmission timeout at
    /// its full backoff, 64 ms by default) if that is longer: cheap to simulate, since a stalled
    /// fabric has few events, and never mistaking a flow that waits out its timeout for a stall.
    pub fn default_stall_timeout(nic: &NicConfig) -> SimTime {
        let longest_wait = nic.rto.0.saturating_mul(2 * crate::nic::qp::MAX_RTO_BACKOFF as u64);
        SimTime(longest_wait.max(SimTime::from_ms(1000).0))
    }
}

impl Default for SimulationConfig {
    fn default() -> Self {
        SimulationConfig { seed: default_seed(), stop_time: None, stall_timeout: None }
    }
}

/// One link type: its speed and one-way propagation delay.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub bandwidth: Bandwidth,
    pub delay: SimTime,
}

/// The fabric. Hosts are numbered 0..H in the order each builder documents; each host is one
/// NIC port (a server with eight NICs is eight hosts that share a `server` number).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TopologyConfig {
    Star(StarTopology),
    Dumbbell(DumbbellTopology),
    LeafSpine(LeafSpineTopology),
    FatTree(FatTreeTopology),
    Custom(CustomTopology),
}

tagged_enum!(TopologyConfig, "kind", {
    "star" => Star(StarTopology),
    "dumbbell" => Dumbbell(DumbbellTopology),
    "leaf_spine" => LeafSpine(LeafSpineTopology),
    "fat_tree" => FatTree(FatTreeTopology),
    "custom" => Custom(CustomTopology),
});

/// `hosts` hosts on one switch.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StarTopology {
    pub hosts: u32,
    pub link: LinkConfig,
    #[serde(default = "one")]
    pub nics_per_server: u32,
}

/// `left` hosts on switch 0 and `right` hosts on switch 1; the switches share one `bottleneck`
/// link. Hosts 0..left are on the left.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DumbbellTopology {
    pub left: u32,
    pub right: u32,
    pub link: LinkConfig,
    pub bottleneck: LinkConfig,
}

/// Two tiers: every leaf connects to every spine. Hosts 0..hosts_per_leaf are on leaf 0, and so on.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpineTopology {
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    /// Host-to-leaf links.
    pub link: LinkConfig,
    /// Leaf-to-spine links; the host link when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric_link: Option<LinkConfig>,
    /// Parallel links between each leaf and each spine (ECMP spreads flows over them).
    #[serde(default = "one")]
    pub links_per_spine: u32,
    #[serde(default = "one")]
    pub nics_per_server: u32,
}

/// A k-ary three-tier fat tree (k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores,
/// k^3/4 hosts). Hosts are numbered by pod, then edge switch, then port.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeTopology {
    pub k: u32,
    pub link: LinkConfig,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric_link: Option<LinkConfig>,
    #[serde(default = "one")]
    pub nics_per_server: u32,
}

/// Any graph: nodes are named "h<i>" (hosts, each with exactly one link) and "s<j>" (switches).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CustomTopology {
    pub hosts: u32,
    pub switches: u32,
    pub links: Vec<CustomLink>,
}

fn one() -> u32 {
    1
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CustomLink {
    pub a: String,
    pub b: String,
    pub bandwidth: Bandwidth,
    pub delay: SimTime,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Shared packet buffer of each switch.
    #[serde(default = "default_buffer")]
    pub buffer: ByteSize,
    #[serde(default)]
    pub pfc: PfcConfig,
    #[serde(default)]
    pub ecn: EcnConfig,
    #[serde(default)]
    pub routing: Routing,
}

fn default_buffer() -> ByteSize {
    ByteSize(32_000_000)
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer: default_buffer(),
            pfc: PfcConfig::default(),
            ecn: EcnConfig::default(),
            routing: Routing::default(),
        }
    }
}

/// Priority flow control, per ingress port and priority.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PfcConfig {
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Static XOFF threshold: bytes buffered from one ingress port (one priority) above which the
    /// switch pauses the upstream sender. When absent the threshold is dynamic (`dynamic_alpha`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xoff: Option<ByteSize>,
    /// Dynamic threshold: XOFF = alpha x (buffer - reserved headroom - bytes in use), the
    /// Broadcom-style shared-buffer rule the HPCC ns-3 switch uses (alpha = 1/8 there).
    #[serde(default = "default_alpha")]
    pub dynamic_alpha: f64,
    /// RESUME is sent once the ingress counter falls this far below XOFF (hysteresis).
    #[serde(default = "default_xon_delta")]
    pub xon_delta: ByteSize,
    /// Buffer reserved per port for what still arrives after a PAUSE: the dynamic XOFF threshold
    /// is alpha x (buffer - headroom of all the switch's ports - bytes in use), so pauses start
    /// early enough to leave the headroom free. (No effect with a static `xoff`.) When absent:
    /// two bandwidth-delay products of the link, three maximum-size packets and a PAUSE frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headroom: Option<ByteSize>,
}

fn yes() -> bool {
    true
}
fn default_alpha() -> f64 {
    0.125
}
fn default_xon_delta() -> ByteSize {
    ByteSize(3_000)
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig {
            enabled: true,
            xoff: None,
            dynamic_alpha: default_alpha(),
            xon_delta: default_xon_delta(),
            headroom: None,
        }
    }
}

/// RED-style ECN marking on each egress queue.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EcnConfig {
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Below Kmin no packet is marked; the defaults are the HPCC ns-3 study's DCQCN profile at 100 Gbps.
    #[serde(default = "default_kmin")]
    pub kmin: ByteSize,
    /// Above Kmax every packet is marked; between, with probability rising linearly to Pmax.
    #[serde(default = "default_kmax")]
    pub kmax: ByteSize,
    #[serde(default = "default_pmax")]
    pub pmax: f64,
    /// Kmin and Kmax are given for this port speed and scaled linearly for others (the HPCC
    /// study scales them with link speed: 400 KB/1600 KB at 100 Gbps, a quarter at 25 Gbps).
    #[serde(default = "default_ref_bw")]
    pub reference_bandwidth: Bandwidth,
    /// Mark when a packet leaves the queue (HPCC ns-3, reflects the queue the packet saw) or
    /// when it enters.
    #[serde(default)]
    pub mark_at: MarkPoint,
}

fn default_kmin() -> ByteSize {
    ByteSize(400_000)
}
fn default_kmax() -> ByteSize {
    ByteSize(1_600_000)
}
fn default_pmax() -> f64 {
    0.2
}
fn default_ref_bw() -> Bandwidth {
    Bandwidth::from_gbps(100)
}

impl Default for EcnConfig {
    fn default() -> Self {
        EcnConfig {
            enabled: true,
            kmin: default_kmin(),
            kmax: default_kmax(),
            pmax: default_pmax(),
            reference_bandwidth: default_ref_bw(),
            mark_at: MarkPoint::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MarkPoint {
    #[default]
    Dequeue,
    Enqueue,
}

/// How a switch picks among equal-cost next hops.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Routing {
    /// Hash of the flow: one path per flow, no reordering.
    #[default]
    Ecmp,
    /// A random next hop per packet (packet spraying): reorders, which go-back-N pays for.
    Spray,
    /// The next hop with the fewest bytes ahead of a new packet, the one in service included
    /// (ties by flow hash).
    Adaptive,
}

/// The RoCEv2 NIC and transport.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NicConfig {
    /// Payload bytes per data packet (the HPCC ns-3 study uses 1000).
    #[serde(default = "default_mtu")]
    pub mtu: ByteSize,
    /// Header bytes on each data packet (Ethernet + IP + UDP + BTH as the HPCC study counts them).
    #[serde(default = "default_header")]
    pub header: ByteSize,
    #[serde(default = "default_ack")]
    pub ack_size: ByteSize,
    #[serde(default = "default_cnp")]
    pub cnp_size: ByteSize,
    #[serde(default = "default_pause")]
    pub pause_size: ByteSize,
    /// The receiver ACKs every this many in-order data packets (and always the last one).
    #[serde(default = "default_ack_every")]
    pub ack_every: u32,
    /// Retransmission timeout: with no ACK progress for this long the sender goes back to the
    /// first unacknowledged byte. Doubles on each consecutive timeout (up to 64x).
    #[serde(default = "default_rto")]
    pub rto: SimTime,
    /// A receiver stuck on the same missing byte repeats its NACK after this long.
    #[serde(default = "default_nack_interval")]
    pub nack_interval: SimTime,
    /// PFC priority of data packets (0..=6; 7 carries ACKs, NACKs, CNPs and is never paused).
    #[serde(default = "default_data_priority")]
    pub data_priority: u8,
}

fn default_mtu() -> ByteSize {
    ByteSize(1000)
}
fn default_header() -> ByteSize {
    ByteSize(48)
}
fn default_ack() -> ByteSize {
    ByteSize(60)
}
fn default_cnp() -> ByteSize {
    ByteSize(64)
}
fn default_pause() -> ByteSize {
    ByteSize(64)
}
fn default_ack_every() -> u32 {
    1
}
fn default_rto() -> SimTime {
    SimTime::from_ms(1)
}
fn default_nack_interval() -> SimTime {
    SimTime::from_us(100)
}
fn default_data_priority() -> u8 {
    3
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            mtu: default_mtu(),
            header: default_header(),
            ack_size: default_ack(),
            cnp_size: default_cnp(),
            pause_size: default_pause(),
            ack_every: default_ack_every(),
            rto: default_rto(),
            nack_interval: default_nack_interval(),
            data_priority: default_data_priority(),
        }
    }
}

/// A set of hosts: "all", a range "1..=16" / "0..8", or a list [1, 2, 5].
#[derive(Clone, Debug, PartialEq, Default)]
pub enum HostSet {
    #[default]
    All,
    Range {
        start: u32,
        end: u32,
    },
    List(Vec<u32>),
}

impl HostSet {
    /// The hosts in order; `hosts` is the number of hosts in the topology (for "all").
    pub fn expand(&self, hosts: u32) -> Vec<u32> {
        match self {
            HostSet::All => (0..hosts).collect(),
            HostSet::Range { start, end } => (*start..*end).collect(),
            HostSet::List(v) => v.clone(),
        }
    }

    /// How many hosts `expand` gives, without building the list.
    pub fn len(&self, hosts: u32) -> u64 {
        match self {
            HostSet::All => u64::from(hosts),
            HostSet::Range { start, end } => u64::from(end - start),
            HostSet::List(v) => v.len() as u64,
        }
    }

    /// The largest host number in the set, without building the list.
    pub fn largest(&self, hosts: u32) -> Option<u32> {
        match self {
            HostSet::All => hosts.checked_sub(1),
            HostSet::Range { end, .. } => Some(end - 1),
            HostSet::List(v) => v.iter().copied().max(),
        }
    }

    fn parse(s: &str) -> Result<HostSet, String> {
        let s = s.trim();
        if s == "all" {
            return Ok(HostSet::All);
        }
        let bad = || {
            format!("invalid host set '{s}': write \"all\", a range like \"1..=16\" or \"0..8\", or a list [1, 2, 3]")
        };
        let (a, b, inclusive) = if let Some((a, b)) = s.split_once("..=") {
            (a, b, true)
        } else if let Some((a, b)) = s.split_once("..") {
            (a, b, false)
        } else {
            return Err(bad());
        };
        let a: u32 = a.trim().parse().map_err(|_| bad())?;
        let b: u32 = b.trim().parse().map_err(|_| bad())?;
        let end = if inclusive { b.checked_add(1).ok_or_else(bad)? } else { b };
        if end <= a {
            return Err(format!("invalid host set '{s}': the range is empty"));
        }
        Ok(HostSet::Range { start: a, end })
    }
}

impl<'de> Deserialize<'de> for HostSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            S(String),
            L(Vec<u32>),
        }
        match Raw::deserialize(d).map_err(|_| {
            serde::de::Error::custom("expected \"all\", a range like \"1..=16\", or a list of host numbers")
        })? {
            Raw::S(s) => HostSet::parse(&s).map_err(serde::de::Error::custom),
            Raw::L(v) => Ok(HostSet::List(v)),
        }
    }
}

impl Serialize for HostSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            HostSet::All => s.serialize_str("all"),
            HostSet::Range { start, end } => s.serialize_str(&format!("{start}..{end}")),
            HostSet::List(v) => v.serialize(s),
        }
    }
}

/// What collective a flow belongs to; algorithms that know the traffic pattern (PC4) read it.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CollectiveKind {
    AllReduce,
    AllToAll,
    AllGather,
    ReduceScatter,
    Broadcast,
    Other,
}

impl fmt::Display for CollectiveKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            CollectiveKind::AllReduce => "all_reduce",
            CollectiveKind::AllToAll => "all_to_all",
            CollectiveKind::AllGather => "all_gather",
            CollectiveKind::ReduceScatter => "reduce_scatter",
            CollectiveKind::Broadcast => "broadcast",
            CollectiveKind::Other => "other",
        };
        f.write_str(s)
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CollectiveTag {
    pub kind: CollectiveKind,
    /// Number of ranks taking part.
    pub group_size: u32,
    /// Which collective instance (flows with the same id belong together).
    #[serde(default)]
    pub id: u32,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size: ByteSize,
    #[serde(default)]
    pub start: SimTime,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective: Option<CollectiveTag>,
    /// Flows (by position in the list, earlier ones only) that must be delivered before this one
    /// starts; it then starts at the later of `start` and their last delivery.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<u32>,
    /// The sender stops taking new data at this time: the flow ends with what it has sent by
    /// then (its size in the results), delivered in full. Absent: it sends all of `size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<SimTime>,
}

/// The traffic.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkloadConfig {
    Flows(FlowList),
    Incast(IncastWorkload),
    AllToAll(AllToAllWorkload),
    Permutation(PermutationWorkload),
    AllReduce(AllReduceWorkload),
    Training(TrainingWorkload),
}

tagged_enum!(WorkloadConfig, "kind", {
    "flows" => Flows(FlowList),
    "incast" => Incast(IncastWorkload),
    "all_to_all" => AllToAll(AllToAllWorkload),
    "permutation" => Permutation(PermutationWorkload),
    "all_reduce" => AllReduce(AllReduceWorkload),
    "training" => Training(TrainingWorkload),
});

/// An explicit list of flows.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowList {
    pub flows: Vec<FlowSpec>,
}

/// Every sender sends `flows_per_sender` flows of `size` to `receiver`, all starting at `start`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IncastWorkload {
    pub senders: HostSet,
    pub receiver: u32,
    pub size: ByteSize,
    #[serde(default)]
    pub start: SimTime,
    #[serde(default = "one")]
    pub flows_per_sender: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective: Option<CollectiveTag>,
}

/// Every host of `hosts` sends `size` to every other.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AllToAllWorkload {
    #[serde(default)]
    pub hosts: HostSet,
    pub size: ByteSize,
    #[serde(default)]
    pub algorithm: AllToAllAlgorithm,
    /// Parallel flows (tasks) per ordered pair, each of `size` (direct only).
    #[serde(default = "one")]
    pub flows_per_pair: u32,
    #[serde(default)]
    pub start: SimTime,
}

/// How an all-to-all is scheduled.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AllToAllAlgorithm {
    /// Every send posted at once (as NCCL's grouped sends): each NIC shares its rate among
    /// n - 1 queue pairs and each receiver hears from n - 1 senders.
    #[default]
    Direct,
    /// n - 1 rounds; in round k rank i sends to rank i + k, and a rank starts a round once its
    /// send and its receive of the previous round are done (pairwise exchange): every round is
    /// a permutation.
    Pairwise,
}

/// Each host of `hosts` sends one flow of `size` to a distinct other host, chosen by a seeded
/// random permutation without fixed points.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PermutationWorkload {
    #[serde(default)]
    pub hosts: HostSet,
    pub size: ByteSize,
    #[serde(default)]
    pub start: SimTime,
}

/// How an all-reduce is broken into point-to-point sends.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AllReduceAlgorithm {
    /// Reduce-scatter then all-gather around a ring: 2(n-1) steps of size/n to the next rank,
    /// each step waiting for the chunk from the previous rank.
    #[default]
    Ring,
    /// Reduce-scatter then all-gather, each rank exchanging size/n with every other rank at
    /// once; a rank's all-gather waits for its reduce-scatter chunks.
    Direct,
}

/// An all-reduce of `size` bytes per rank among `hosts`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AllReduceWorkload {
    #[serde(default)]
    pub hosts: HostSet,
    /// Bytes each rank contributes (the gradient buffer).
    pub size: ByteSize,
    #[serde(default)]
    pub algorithm: AllReduceAlgorithm,
    #[serde(default)]
    pub start: SimTime,
}

/// Training iterations of a model whose ranks are `hosts`: each iteration runs every layer's
/// forward compute (first layer first), then every layer's backward compute (last layer first),
/// with the layers' collectives in between (`workload/training.rs` gives the exact order).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingWorkload {
    #[serde(default)]
    pub hosts: HostSet,
    pub iterations: u32,
    /// When every rank starts the first iteration.
    #[serde(default)]
    pub start: SimTime,
    /// From the model's input to its output.
    pub layers: Vec<LayerConfig>,
}

/// One layer: its compute times (the same on every rank) and its communication.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayerConfig {
    pub forward: SimTime,
    /// The whole backward compute; or give it split into `input_grad` and `weight_grad`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backward: Option<SimTime>,
    /// Backward compute of the gradient handed to the layer below (first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_grad: Option<SimTime>,
    /// Backward compute of the layer's own weight gradient (after `input_grad`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_grad: Option<SimTime>,
    /// Data parallel: the weight gradient's all-reduce, issued when it is computed and
    /// overlapping the rest of the backward pass; the next iteration's forward of this layer
    /// waits for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_reduce: Option<LayerAllReduce>,
    /// Model parallel: an all-to-all of the layer's output after its forward compute, which the
    /// next compute waits for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward_all_to_all: Option<LayerAllToAll>,
    /// Model parallel: an all-to-all of the input gradient after `input_grad`, which the
    /// backward compute of the layer below waits for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backward_all_to_all: Option<LayerAllToAll>,
}

impl LayerConfig {
    /// (input-gradient, weight-gradient) compute; an unsplit `backward` is all input gradient,
    /// so that everything the backward pass issues waits for all of it. `None` when validation
    /// would reject the layer.
    pub fn backward_split(&self) -> Option<(SimTime, SimTime)> {
        match (self.backward, self.input_grad, self.weight_grad) {
            (Some(b), None, None) => Some((b, SimTime::ZERO)),
            (None, Some(i), Some(w)) => Some((i, w)),
            _ => None,
        }
    }
}

/// A layer's weight-gradient all-reduce: `size` bytes per rank; "0B" issues none.
#[derive(Clone, Copy, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayerAllReduce {
    pub size: ByteSize,
    #[serde(default)]
    pub algorithm: AllReduceAlgorithm,
}

/// A layer's all-to-all: `size` bytes from every rank to every other; "0B" issues none.
#[derive(Clone, Copy, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayerAllToAll {
    pub size: ByteSize,
    #[serde(default)]
    pub algorithm: AllToAllAlgorithm,
}

/// Opt-in timelines, sampled every `sample_interval`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutputConfig {
    /// Sampling interval of `queues.csv` and `rates.csv`; no timelines when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_interval: Option<SimTime>,
    /// Which switches' egress queues to sample (switch numbers); all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_switches: Option<Vec<u32>>,
    /// Which flows' rate, window and throughput to sample; all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_flows: Option<Vec<u32>>,
    /// RTT and one-way queuing delay statistics count only the samples taken from this time
    /// on (the steady phase after a start-up transient); none excluded when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<SimTime>,
    /// Warn before the run when its result files are expected to exceed this size.
    #[serde(default = "default_warn_above")]
    pub warn_above: ByteSize,
    /// Per-packet trace (`trace.csv`); none when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceConfig>,
}

/// Which packets `trace.csv` follows: both filters apply; an absent filter lets everything by.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// Packets of these flows (data, ACK, NACK, CNP; PFC frames belong to no flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<Vec<u32>>,
    /// Events at these nodes ("h3", "s0").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<String>>,
    /// Rows kept at most; later ones are only counted (`trace.rows_dropped` in summary.json).
    #[serde(default = "default_trace_rows")]
    pub max_rows: u64,
}

fn default_trace_rows() -> u64 {
    1_000_000
}

fn default_warn_above() -> ByteSize {
    ByteSize(1_000_000_000)
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig {
            sample_interval: None,
            warmup: None,
            queue_switches: None,
            rate_flows: None,
            warn_above: default_warn_above(),
            trace: None,
        }
    }
}

/// An error in a scenario: where it is and what to do about it.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    pub file: String,
    /// Dotted path of the offending key, e.g. `switch.ecn.kmin` or `workload.flows[3].dst`.
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: {}: {}", self.file, self.key, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

impl Scenario {
    /// Parses a scenario from TOML text; `origin` names it in errors (usually the file path).
    pub fn from_toml(text: &str, origin: &str) -> Result<Scenario, ConfigError> {
        let de = toml::Deserializer::parse(text).map_err(|e| ConfigError {
            file: origin.to_string(),
            key: String::new(),
            message: one_line(&e.to_string()),
        })?;
        let mut scenario: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let outer = e.path().to_string();
            let (key, message) = tagged::join_path(if outer == "." { "" } else { &outer }, &e.into_inner().to_string());
            ConfigError { file: origin.to_string(), key, message: one_line(&message) }
        })?;
        // Defaults that depend on other keys, written out so run.json shows them.
        let stall = SimulationConfig::default_stall_timeout(&scenario.nic);
        scenario.simulation.stall_timeout.get_or_insert(stall);
        validate(&scenario).map_err(|(key, message)| ConfigError { file: origin.to_string(), key, message })?;
        Ok(scenario)
    }

    /// Reads and parses a scenario file.
    pub fn load(path: &std::path::Path) -> Result<Scenario, ConfigError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: origin.clone(),
            key: String::new(),
            message: format!("cannot read the scenario file: {e}"),
        })?;
        Scenario::from_toml(&text, &origin)
    }

    /// The scenario as TOML with every default written out.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_else(|e| format!("# cannot render scenario: {e}"))
    }
}

/// toml's messages quote the offending line over several lines; keep the first line and the
/// location so every error prints as one line.
fn one_line(msg: &str) -> String {
    let lines: Vec<&str> = msg.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    match lines.as_slice() {
        [] => String::from("invalid scenario"),
        [only] => only.to_string(),
        [first, rest @ ..] => {
            // toml puts "TOML parse error at line L, column C" first and the reason last.
            let reason = rest.iter().rev().find(|l| !l.starts_with('|') && !l.chars().all(|c| c == '^' || c == ' '));
            match reason {
                Some(r) if first.starts_with("TOML parse error") => format!("{first}: {r}"),
                _ => first.to_string(),
            }
        }
    }
}
