//! `[topology]`: the fabric's shape and its links.

use crate::time::{Bandwidth, SimTime};
use serde::{Deserialize, Serialize};

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
