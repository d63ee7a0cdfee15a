//! `[switch]`: the shared buffer, PFC, ECN marking, packet trimming on a lossy fabric, how a
//! switch picks among equal-cost next hops (one way for every switch, or one per tier), the
//! settings of flowlet switching and of the adaptive routings switches implement (DLB, spraying
//! past a threshold, CONGA), and how long a switch takes to notice a failed link. Which lossless
//! mechanism the links run, PFC or credits, is `credit.rs`'s.

use super::credit::{CreditConfig, FlowControl};
use crate::time::{Bandwidth, ByteSize, SimTime};
use serde::{Deserialize, Serialize};

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
    pub routing: RoutingConfig,
    /// Drop-tail without PFC: an egress queue may hold at most this fraction of the buffer's
    /// free bytes (the dynamic threshold of egress accounting); absent, the whole buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress_alpha: Option<f64>,
    /// Flowlet switching's settings, for the switches that route by `"flowlet"`; filled in with
    /// the defaults when some tier uses it and the scenario gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flowlet: Option<FlowletConfig>,
    /// Quantised, sampled adaptive routing's settings (`routing = "dlb"`); filled in with the
    /// defaults when some tier uses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dlb: Option<DlbConfig>,
    /// Spraying past a threshold (`routing = "spray_threshold"`); filled in when some tier uses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spray_threshold: Option<SprayThresholdConfig>,
    /// CONGA's settings (`routing = "conga"`); filled in when some tier uses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conga: Option<CongaConfig>,
    /// The HPCC ns-3 simulator's ECMP (`routing = "ecmp_ns3"`): its node numbering and ports;
    /// filled in with the defaults when some tier uses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecmp_ns3: Option<EcmpNs3Config>,
    /// How long after a link fails (or comes back) the switches route around it (or over it
    /// again); `[[events]]` may give their own. Filled in with the default when the scenario
    /// fails or restores a link and gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_detection: Option<SimTime>,
    /// Where switches queue ACKs, NACKs and CNPs: `high`, the top priority, never paused (as
    /// RoCE switches are configured to), or `data`, behind the data of the flow's priority, as
    /// the HPCC ns-3 simulator's switches do (for an exact twin of its runs).
    #[serde(default, skip_serializing_if = "ControlPriority::is_high")]
    pub control_priority: ControlPriority,
    /// The links' lossless mechanism: PFC (`pfc`), or credits (`credit`, `credit.rs`).
    #[serde(default, skip_serializing_if = "FlowControl::is_pfc")]
    pub flow_control: FlowControl,
    /// The credit loop's settings; filled in with the defaults under `flow_control = "credit"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credit: Option<CreditConfig>,
    /// Packet trimming on a lossy fabric (`engine/net/trimming.rs`); absent: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trimming: Option<TrimmingConfig>,
}

impl SwitchConfig {
    /// The trimming settings, if trimming is on.
    pub fn trims(&self) -> Option<&TrimmingConfig> {
        self.trimming.as_ref().filter(|t| t.enabled)
    }
}

/// `switch.control_priority`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ControlPriority {
    #[default]
    High,
    Data,
}

impl ControlPriority {
    fn is_high(&self) -> bool {
        *self == ControlPriority::High
    }
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
            routing: RoutingConfig::default(),
            egress_alpha: None,
            flowlet: None,
            dlb: None,
            spray_threshold: None,
            conga: None,
            ecmp_ns3: None,
            failure_detection: None,
            control_priority: ControlPriority::High,
            flow_control: FlowControl::Pfc,
            credit: None,
            trimming: None,
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
    /// Headroom per ingress port: buffer set apart from the shared pool for what arrives
    /// through a port after it has sent PAUSE; a packet that finds it full is dropped. When
    /// absent: two bandwidth-delay products of the link, three maximum-size packets and a PAUSE
    /// frame. Zero: no headroom pool, so what arrives after PAUSE takes shared buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headroom: Option<ByteSize>,
    /// Bytes guaranteed to each ingress port and priority, taken before the shared pool (an
    /// ASIC's per-priority-group minimum); the shared pool is what the reserves and headrooms
    /// leave of the buffer.
    #[serde(default)]
    pub reserve: ByteSize,
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
            reserve: ByteSize(0),
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

impl EcnConfig {
    /// A threshold given for `reference_bandwidth` (`kmin`, `kmax`), scaled to a port of `port`
    /// speed: linearly, as the HPCC study scales them.
    pub fn scaled(&self, threshold: ByteSize, port: Bandwidth) -> u128 {
        threshold.0 as u128 * port.0 as u128 / self.reference_bandwidth.0 as u128
    }
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
    /// Per-packet spraying in turn: each set of equal-cost next hops of a switch keeps a counter,
    /// and its packets take its hops one after another (deterministic, exactly even).
    RoundRobin,
    /// The next hop with the fewest bytes ahead of a new packet, the one in service included
    /// (ties by flow hash).
    Adaptive,
    /// As `Adaptive`, with ties drawn at random: packets spread over every path while the
    /// queues are equal (an idle fabric's), and steer away from the ones that build. With exact,
    /// instant knowledge of the local queues, it is the ideal bound of per-packet adaptive
    /// routing, which `Dlb`, `SprayThreshold` and `Conga` approach as switches do.
    AdaptiveSpray,
    /// Flowlet switching: a flow keeps its next hop while its packets follow each other at this
    /// switch closer than `switch.flowlet.gap`; after a longer gap it may move
    /// (`switch.flowlet.pick`).
    Flowlet,
    /// Dynamic load balancing as switch ASICs do it (`dlb.rs`): each egress port's load and queue,
    /// sampled every `switch.dlb.period` into an EWMA and quantised into quality bands; a packet
    /// goes to a next hop drawn at random among those in the best band.
    Dlb,
    /// A flow keeps its ECMP next hop while that port's queue is at most
    /// `switch.spray_threshold.threshold`; above it, its packets go to the least-loaded hop (ties
    /// at random), as InfiniBand's adaptive routing leaves a flow's static port only once that
    /// port is congested.
    SprayThreshold,
    /// CONGA (`conga.rs`): the source leaf picks the uplink whose path, as the destination leaf
    /// reports it back, is least congested (utilisation estimated per port, quantised, carried in
    /// packets); other switches hash (ECMP) and raise the packets' congestion field.
    Conga,
    /// ECMP as the HPCC ns-3 simulator's switches do it (`topology/ecmp_ns3.rs`): its hash of
    /// the flow's addresses and ports, its per-switch seed, its order of the next hops, so that
    /// a twin of one of its runs puts each flow on ns-3's path (`[switch.ecmp_ns3]`).
    EcmpNs3,
}

impl Routing {
    pub fn name(self) -> &'static str {
        match self {
            Routing::Ecmp => "ecmp",
            Routing::Spray => "spray",
            Routing::RoundRobin => "round_robin",
            Routing::Adaptive => "adaptive",
            Routing::AdaptiveSpray => "adaptive_spray",
            Routing::Flowlet => "flowlet",
            Routing::Dlb => "dlb",
            Routing::SprayThreshold => "spray_threshold",
            Routing::Conga => "conga",
            Routing::EcmpNs3 => "ecmp_ns3",
        }
    }
}

/// A tier of switches, counted from the hosts: leaves hold hosts (a leaf-spine's leaves, a Clos'
/// ToRs, a fat tree's edge switches, rail switches, a star's or a dumbbell's switches), spines
/// are one hop above the nearest leaf (spines; a fat tree's aggregation switches), core switches
/// two or more (a fat tree's cores).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    Leaf,
    Spine,
    Core,
}

impl Tier {
    pub const ALL: [Tier; 3] = [Tier::Leaf, Tier::Spine, Tier::Core];

    pub fn name(self) -> &'static str {
        match self {
            Tier::Leaf => "leaf",
            Tier::Spine => "spine",
            Tier::Core => "core",
        }
    }
}

/// `switch.routing`: one way for every switch (`"spray"`), or one per tier
/// (`{ leaf = "spray", spine = "ecmp" }`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoutingConfig {
    All(Routing),
    Tiers(RoutingTiers),
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig::All(Routing::Ecmp)
    }
}

/// Routing per tier; a tier not named takes `default`, and without it `"ecmp"`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RoutingTiers {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Routing>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf: Option<Routing>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spine: Option<Routing>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core: Option<Routing>,
}

impl RoutingTiers {
    /// What the scenario says for `tier` itself (not its default).
    pub fn named(&self, tier: Tier) -> Option<Routing> {
        match tier {
            Tier::Leaf => self.leaf,
            Tier::Spine => self.spine,
            Tier::Core => self.core,
        }
    }
}

impl RoutingConfig {
    /// How the switches of `tier` route.
    pub fn of(&self, tier: Tier) -> Routing {
        match self {
            RoutingConfig::All(r) => *r,
            RoutingConfig::Tiers(t) => t.named(tier).or(t.default).unwrap_or_default(),
        }
    }

    /// Whether some switch may route this way.
    pub fn uses(&self, routing: Routing) -> bool {
        Tier::ALL.iter().any(|&tier| self.of(tier) == routing)
    }
}

impl<'de> Deserialize<'de> for RoutingConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct OneOrTiers;
        impl<'de> serde::de::Visitor<'de> for OneOrTiers {
            type Value = RoutingConfig;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a routing for every switch (\"ecmp\", \"spray\", \"round_robin\", \"adaptive\", \"adaptive_spray\", \"flowlet\", \"dlb\", \"spray_threshold\", \"conga\", \"ecmp_ns3\"), or a table of them per tier: { leaf = \"spray\", spine = \"ecmp\" }",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RoutingConfig, E> {
                let one = Routing::deserialize(serde::de::value::StrDeserializer::<E>::new(v))?;
                Ok(RoutingConfig::All(one))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<RoutingConfig, A::Error> {
                let tiers = RoutingTiers::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(RoutingConfig::Tiers(tiers))
            }
        }
        d.deserialize_any(OneOrTiers)
    }
}

impl Serialize for RoutingConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RoutingConfig::All(r) => r.serialize(s),
            RoutingConfig::Tiers(t) => t.serialize(s),
        }
    }
}

/// `[switch.flowlet]`: flowlet switching (`routing = "flowlet"`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FlowletConfig {
    /// A flow's packets keep their next hop while each follows the one before it at the switch
    /// by less than this; a packet after a gap this long or longer starts a new flowlet.
    #[serde(default = "default_flowlet_gap")]
    pub gap: SimTime,
    /// Where a new flowlet goes.
    #[serde(default)]
    pub pick: FlowletPick,
    /// Entries of each switch's flowlet table (a power of two): flows are hashed into it, and
    /// flows that share an entry share its flowlet.
    #[serde(default = "default_flowlet_slots")]
    pub slots: u32,
}

fn default_flowlet_gap() -> SimTime {
    SimTime::from_us(5)
}
fn default_flowlet_slots() -> u32 {
    4096
}

impl Default for FlowletConfig {
    fn default() -> Self {
        FlowletConfig { gap: default_flowlet_gap(), pick: FlowletPick::default(), slots: default_flowlet_slots() }
    }
}

/// Where a new flowlet goes.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FlowletPick {
    /// A next hop drawn at random (LetFlow).
    #[default]
    Random,
    /// The least-loaded next hop, as `routing = "adaptive"` picks it (CONGA-like, with the
    /// switch's own queues as the load).
    Adaptive,
}

/// `[switch.dlb]`: dynamic load balancing as switch ASICs do it (`routing = "dlb"`). The defaults
/// are the SAI ARS profile's (an EWMA sampled every 16 us with an exponent of 2, 8 quantisation
/// bands), load and queue weighed equally as Juniper's DLB does by default, and a queue scale
/// whose worst band starts below ECN's default Kmin.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DlbConfig {
    /// How often each port's load and queue are sampled into their averages (and its band
    /// recomputed); between samples the switch routes on what it last sampled.
    #[serde(default = "default_dlb_period")]
    pub period: SimTime,
    /// Weight of the newest sample in each average (EWMA): average += weight x (sample - average).
    #[serde(default = "default_dlb_weight")]
    pub weight: f64,
    /// Quality bands the combined load is quantised into; a packet goes to the best band.
    #[serde(default = "default_dlb_bands")]
    pub bands: u32,
    /// The queue (averaged) at which a port's queue measure is full: the bands split 0 to this
    /// evenly.
    #[serde(default = "default_dlb_max_queue")]
    pub max_queue: ByteSize,
    /// How much the port's load (the share of its line rate it sent in the last periods) counts
    /// against its queue: 0 judges by the queue alone, 1 by the load alone.
    #[serde(default = "default_dlb_load_weight")]
    pub load_weight: f64,
}

fn default_dlb_period() -> SimTime {
    SimTime::from_us(16)
}
fn default_dlb_weight() -> f64 {
    0.25
}
fn default_dlb_bands() -> u32 {
    8
}
fn default_dlb_max_queue() -> ByteSize {
    ByteSize(256_000)
}
fn default_dlb_load_weight() -> f64 {
    0.5
}

impl Default for DlbConfig {
    fn default() -> Self {
        DlbConfig {
            period: default_dlb_period(),
            weight: default_dlb_weight(),
            bands: default_dlb_bands(),
            max_queue: default_dlb_max_queue(),
            load_weight: default_dlb_load_weight(),
        }
    }
}

/// `[switch.spray_threshold]`: a flow keeps its ECMP next hop until that port's queue passes
/// `threshold` (`routing = "spray_threshold"`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SprayThresholdConfig {
    /// Bytes queued at the flow's ECMP egress port (all priorities) above which its packets go
    /// to the least-loaded next hop instead.
    #[serde(default = "default_spray_threshold")]
    pub threshold: ByteSize,
}

fn default_spray_threshold() -> ByteSize {
    ByteSize(32_000)
}

impl Default for SprayThresholdConfig {
    fn default() -> Self {
        SprayThresholdConfig { threshold: default_spray_threshold() }
    }
}

/// `[switch.ecmp_ns3]`: what the HPCC ns-3 simulator's ECMP hash reads that a scenario does not
/// otherwise say (`routing = "ecmp_ns3"`, `topology/ecmp_ns3.rs`). `aiccsim import-ns3` writes it.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct EcmpNs3Config {
    /// The ns-3 node id of each host (host i is node `host_ids[i]`); absent: host i is node i.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_ids: Vec<u32>,
    /// The ns-3 node id of each switch; absent: switch j is node hosts + j.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub switch_ids: Vec<u32>,
    /// Every flow's destination port (the flow file's fourth field; `traffic_gen.py` writes 100).
    #[serde(default = "default_ns3_dport")]
    pub dport: u16,
    /// Added to every switch's hash seed: 0 is ns-3's; k x 1000 is what `HPCC_ECMP_SALT=k` of
    /// `tests/ns3_peer/trace.patch` gives ns-3, to draw other equal-cost paths on both sides.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seed_offset: u32,
}

fn default_ns3_dport() -> u16 {
    100
}

impl Default for EcmpNs3Config {
    fn default() -> Self {
        EcmpNs3Config { host_ids: Vec::new(), switch_ids: Vec::new(), dport: default_ns3_dport(), seed_offset: 0 }
    }
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// `[switch.conga]`: CONGA (`routing = "conga"`, Alizadeh et al., SIGCOMM 2014).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CongaConfig {
    /// The discounting rate estimator's period: every period each port's byte register loses
    /// `dre_alpha` of itself; its time constant is `dre_period / dre_alpha`.
    #[serde(default = "default_conga_dre_period")]
    pub dre_period: SimTime,
    #[serde(default = "default_conga_dre_alpha")]
    pub dre_alpha: f64,
    /// A remote metric not refreshed for this long is forgotten (read as 0), so that a path
    /// left alone because it was congested is tried again.
    #[serde(default = "default_conga_age")]
    pub age: SimTime,
    /// A flow keeps its uplink while its packets reach the leaf closer together than this; a
    /// longer gap starts a flowlet, which picks again. 0: every packet picks.
    #[serde(default = "default_flowlet_gap")]
    pub flowlet_gap: SimTime,
    /// Entries of each leaf's flowlet table (a power of two).
    #[serde(default = "default_flowlet_slots")]
    pub flowlet_slots: u32,
}

fn default_conga_dre_period() -> SimTime {
    SimTime::from_us(1)
}
fn default_conga_dre_alpha() -> f64 {
    0.1
}
fn default_conga_age() -> SimTime {
    SimTime::from_us(200)
}

impl Default for CongaConfig {
    fn default() -> Self {
        CongaConfig {
            dre_period: default_conga_dre_period(),
            dre_alpha: default_conga_dre_alpha(),
            age: default_conga_age(),
            flowlet_gap: default_flowlet_gap(),
            flowlet_slots: default_flowlet_slots(),
        }
    }
}

/// The adaptive routings' settings, on their own (CONGA's uplink count is checked against the
/// fabric in `engine/net/conga.rs`).
pub(crate) fn check_adaptive(sw: &SwitchConfig) -> crate::cc::Check {
    use crate::config::fail;
    if let RoutingConfig::Tiers(t) = &sw.routing {
        for (tier, r) in [("spine", t.spine), ("core", t.core)] {
            if r == Some(Routing::Conga) {
                return fail(
                    format!("switch.routing.{tier}"),
                    "\"conga\" is the leaves' choice: CONGA's other switches hash each flow (ECMP) and only raise the packets' congestion field, which they do whatever their routing; name another routing here, or leave the tier out",
                );
            }
        }
    }
    if let Some(d) = &sw.dlb {
        if d.period == SimTime::ZERO {
            return fail(
                "switch.dlb.period",
                "must be positive: ports are sampled once a period; e.g. \"16us\" (SAI's default)",
            );
        }
        if !(d.weight > 0.0 && d.weight <= 1.0) {
            return fail(
                "switch.dlb.weight",
                format!(
                    "the newest sample's weight must be in (0, 1], got {}; e.g. 0.25 (SAI's default exponent of 2)",
                    d.weight
                ),
            );
        }
        if !(2..=64).contains(&d.bands) {
            return fail(
                "switch.dlb.bands",
                format!(
                    "must be from 2 to 64, got {} (one band ignores the load: that is routing = \"spray\"); e.g. 8",
                    d.bands
                ),
            );
        }
        if d.max_queue.0 == 0 {
            return fail("switch.dlb.max_queue", "must be positive: the bands split 0 to it; e.g. \"256KB\"");
        }
        if !(0.0..=1.0).contains(&d.load_weight) {
            return fail(
                "switch.dlb.load_weight",
                format!("must be in [0, 1] (0: the queue alone, 1: the load alone), got {}; e.g. 0.5", d.load_weight),
            );
        }
    }
    if let Some(t) = &sw.spray_threshold {
        if t.threshold.0 >= sw.buffer.0 {
            return fail(
                "switch.spray_threshold.threshold",
                format!(
                    "{} is not below the buffer ({}): no queue ever passes it, so every flow keeps its ECMP path (that is routing = \"ecmp\"); e.g. \"32KB\"",
                    t.threshold, sw.buffer
                ),
            );
        }
    }
    if let Some(c) = &sw.conga {
        if c.dre_period == SimTime::ZERO {
            return fail(
                "switch.conga.dre_period",
                "must be positive: the rate estimator decays once a period; e.g. \"1us\"",
            );
        }
        if !(c.dre_alpha > 0.0 && c.dre_alpha <= 1.0) {
            return fail(
                "switch.conga.dre_alpha",
                format!("the share of the register lost each period must be in (0, 1], got {}; e.g. 0.1", c.dre_alpha),
            );
        }
        if c.age == SimTime::ZERO {
            return fail(
                "switch.conga.age",
                "must be positive: a remote metric would be forgotten as soon as it arrives; e.g. \"200us\"",
            );
        }
        if !c.flowlet_slots.is_power_of_two() || c.flowlet_slots > 1 << 24 {
            return fail(
                "switch.conga.flowlet_slots",
                format!(
                    "must be a power of two from 1 to 16777216 (the table is hashed by masking), got {}; e.g. 4096",
                    c.flowlet_slots
                ),
            );
        }
    }
    Ok(())
}

/// `[switch.trimming]`: packet trimming (UE 1.0, "packet trimming"; the Ultra Ethernet
/// Consortium's htsim, `CompositeQueue`). A data packet the switch would drop, or whose egress
/// queue is above `threshold`, is cut to `header` bytes and forwarded at the control priority;
/// its receiver NACKs it. On a lossy fabric only (`pfc.enabled = false`), with
/// `nic.recovery = "selective"`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TrimmingConfig {
    /// On when the table is given; `false` turns it off (a sweep's, or a preset's, switch).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Bytes queued at a data packet's egress queue (its priority's) above which the packet is
    /// trimmed rather than queued whole, although the buffer has room; absent, only where it
    /// would be dropped, as the htsim reference trims where its queue is full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<ByteSize>,
    /// Bytes a trimmed packet keeps on the wire: its headers (the htsim reference's
    /// `trimsize`, 64 B, the smallest Ethernet frame).
    #[serde(default = "default_trim_header")]
    pub header: ByteSize,
}

fn default_trim_header() -> ByteSize {
    ByteSize(64)
}

impl Default for TrimmingConfig {
    fn default() -> Self {
        TrimmingConfig { enabled: true, threshold: None, header: default_trim_header() }
    }
}

/// `[switch.trimming]` against the rest of the scenario: a lossy fabric (a PFC or credit fabric
/// drops nothing to trim), selective recovery (go-back-N would discard what follows a trimmed
/// packet, so trimming saves nothing), a threshold that lets a full packet into an empty queue,
/// a header the NIC's header fits in and that is shorter than a full packet (`max_packet`: the
/// largest data packet's bytes).
pub(crate) fn check_trimming(s: &super::Scenario, max_packet: u64) -> crate::cc::Check {
    use crate::config::{fail, Recovery};
    let sw = &s.switch;
    let Some(t) = sw.trims() else { return Ok(()) };
    if sw.flow_control == FlowControl::Credit {
        return fail(
            "switch.trimming",
            "trims what a lossy switch would drop, and a credit-based fabric never drops: remove [switch.trimming], or set switch.flow_control = \"pfc\" with pfc = { enabled = false }",
        );
    }
    if sw.pfc.enabled {
        return fail(
            "switch.trimming",
            "trims what a lossy switch would drop, and with PFC on the switch pauses its upstream instead: set switch.pfc = { enabled = false } (a lossy fabric), or remove [switch.trimming]",
        );
    }
    if s.nic.recovery != Recovery::Selective {
        return fail(
            "switch.trimming",
            "needs nic.recovery = \"selective\": the receiver NACKs each trimmed packet and keeps what follows it, which go-back-N would discard and send again; set nic.recovery = \"selective\", or remove [switch.trimming]",
        );
    }
    if let Some(threshold) = t.threshold {
        if threshold.0 < max_packet {
            return fail(
                "switch.trimming.threshold",
                format!(
                    "{threshold} is below one full data packet ({max_packet} B): a full packet would be trimmed even into an empty queue, and no payload would ever get through; give at least {max_packet}B, or leave it out to trim only what would be dropped"
                ),
            );
        }
        if threshold.0 >= sw.buffer.0 {
            return fail(
                "switch.trimming.threshold",
                format!(
                    "{threshold} is not below the buffer ({}): no queue ever passes it; leave it out to trim only what would be dropped",
                    sw.buffer
                ),
            );
        }
    }
    let data_header = s.nic.header.0;
    if t.header.0 < data_header {
        return fail(
            "switch.trimming.header",
            format!(
                "{} is smaller than a data packet's header (nic.header = {}): a trimmed packet keeps its headers, or its receiver could not tell which packet to NACK; the default is \"64B\"",
                t.header, s.nic.header
            ),
        );
    }
    if t.header.0 >= max_packet {
        return fail(
            "switch.trimming.header",
            format!(
                "{} is not smaller than a full data packet ({max_packet} B): trimming would cut nothing; the default is \"64B\"",
                t.header
            ),
        );
    }
    Ok(())
}

/// Detection delay of a failed or restored link when neither the event nor
/// `switch.failure_detection` gives one.
pub const DEFAULT_FAILURE_DETECTION: SimTime = SimTime::from_us(100);
