//! `[topology]`: the fabric's shape and its links.

use crate::cc::Check;
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
/// NIC port (a server with eight NICs is eight hosts that share a `server` number). With
/// `nvlink`, a server's hosts are GPUs joined by an NVSwitch as well as by the fabric
/// (`clos` and `rail` are fabrics of such GPU servers).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TopologyConfig {
    Star(StarTopology),
    Dumbbell(DumbbellTopology),
    LeafSpine(LeafSpineTopology),
    FatTree(FatTreeTopology),
    Clos(ClosTopology),
    Rail(RailTopology),
    Custom(CustomTopology),
}

tagged_enum!(TopologyConfig, "kind", {
    "star" => Star(StarTopology),
    "dumbbell" => Dumbbell(DumbbellTopology),
    "leaf_spine" => LeafSpine(LeafSpineTopology),
    "fat_tree" => FatTree(FatTreeTopology),
    "clos" => Clos(ClosTopology),
    "rail" => Rail(RailTopology),
    "custom" => Custom(CustomTopology),
});

/// `hosts` hosts on one switch.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StarTopology {
    pub hosts: u32,
    pub link: LinkConfig,
    #[serde(default = "one", alias = "gpus_per_server")]
    pub nics_per_server: u32,
    /// Each GPU's port to its server's NVSwitch; absent: servers have no scale-up network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink: Option<LinkConfig>,
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
    #[serde(default = "one", alias = "gpus_per_server")]
    pub nics_per_server: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink: Option<LinkConfig>,
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
    #[serde(default = "one", alias = "gpus_per_server")]
    pub nics_per_server: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink: Option<LinkConfig>,
}

/// A two-tier Clos of GPU servers (Khan et al., HOTI 2022, Table I): `racks` top-of-rack switches, each with
/// `servers_per_rack` servers of `gpus_per_server` GPUs, every GPU with its own NIC on its
/// rack's switch; every ToR linked to every spine. The ToR's up-links are as many `fabric_link`s
/// as make its down-link capacity over `oversubscription` (1: non-blocking), spread evenly over
/// the spines. GPU g of server v of rack r is host (r * servers_per_rack + v) * gpus_per_server
/// + g.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClosTopology {
    pub racks: u32,
    pub servers_per_rack: u32,
    #[serde(default = "eight")]
    pub gpus_per_server: u32,
    pub spines: u32,
    /// NIC-to-ToR links.
    pub link: LinkConfig,
    /// ToR-to-spine links; the NIC link when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric_link: Option<LinkConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink: Option<LinkConfig>,
    #[serde(default = "one_f64")]
    pub oversubscription: f64,
}

/// A rail-optimised fabric of GPU servers: GPU i of every server of a group hangs off that
/// group's rail switch i, and every rail switch links to every spine (up-links sized as in
/// `clos`). Traffic between GPUs of the same index stays on its rail; between different
/// indices it crosses a spine (no forwarding over NVLink to the GPU of the right rail).
/// GPU g of server v is host v * gpus_per_server + g; rail switch i of group k is switch
/// k * gpus_per_server + i, the spines follow.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RailTopology {
    pub servers: u32,
    #[serde(default = "eight")]
    pub gpus_per_server: u32,
    /// Servers whose GPUs share one set of rail switches; all of them when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers_per_group: Option<u32>,
    pub spines: u32,
    pub link: LinkConfig,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric_link: Option<LinkConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink: Option<LinkConfig>,
    #[serde(default = "one_f64")]
    pub oversubscription: f64,
}

/// Any graph: nodes are named `"h<i>"` (hosts, each with exactly one link) and `"s<j>"` (switches).
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

fn eight() -> u32 {
    8
}

fn one_f64() -> f64 {
    1.0
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CustomLink {
    pub a: String,
    pub b: String,
    pub bandwidth: Bandwidth,
    pub delay: SimTime,
}

/// Largest fabric we build: enough for a 3-tier k=64 fat tree, small enough that the routing
/// tables (switches x hosts entries) stay in memory.
const MAX_HOSTS: u64 = 1 << 20;
/// Switches and links are bounded for the same reason: each costs memory before any check on
/// the routes could run (a k = 128 fat tree has 20 480 switches and 1.6 million links).
const MAX_SWITCHES: u64 = 1 << 20;
const MAX_LINKS: u64 = 1 << 23;

/// A topology setting's key and what is wrong with it.
fn at(key: &str, message: String) -> (String, String) {
    (format!("topology.{key}"), message)
}

fn fail_at(key: &str, message: String) -> Check {
    Err(at(key, message))
}

impl TopologyConfig {
    /// Its `kind`, as the scenario writes it.
    pub fn kind(&self) -> &'static str {
        match self {
            TopologyConfig::Star(_) => "star",
            TopologyConfig::Dumbbell(_) => "dumbbell",
            TopologyConfig::LeafSpine(_) => "leaf_spine",
            TopologyConfig::FatTree(_) => "fat_tree",
            TopologyConfig::Clos(_) => "clos",
            TopologyConfig::Rail(_) => "rail",
            TopologyConfig::Custom(_) => "custom",
        }
    }

    /// Consecutive hosts per server (the GPUs of a GPU server).
    pub fn per_server(&self) -> u32 {
        match self {
            TopologyConfig::Star(t) => t.nics_per_server,
            TopologyConfig::LeafSpine(t) => t.nics_per_server,
            TopologyConfig::FatTree(t) => t.nics_per_server,
            TopologyConfig::Clos(t) => t.gpus_per_server,
            TopologyConfig::Rail(t) => t.gpus_per_server,
            TopologyConfig::Dumbbell(_) | TopologyConfig::Custom(_) => 1,
        }
    }

    /// The hosts a workload's ranks are (a GPU server's GPUs, not their NVLink ports), counted
    /// from the settings: the built topology's `fabric_hosts`, known before it is built, so that
    /// the limits on a workload are checked first.
    pub fn fabric_hosts(&self) -> u64 {
        match self {
            TopologyConfig::Star(t) => u64::from(t.hosts),
            TopologyConfig::Dumbbell(t) => u64::from(t.left) + u64::from(t.right),
            TopologyConfig::LeafSpine(t) => u64::from(t.leaves) * u64::from(t.hosts_per_leaf),
            TopologyConfig::FatTree(t) => u64::from(t.k) * (u64::from(t.k) / 2).pow(2),
            TopologyConfig::Clos(t) => {
                u64::from(t.racks) * u64::from(t.servers_per_rack) * u64::from(t.gpus_per_server)
            }
            TopologyConfig::Rail(t) => u64::from(t.servers) * u64::from(t.gpus_per_server),
            TopologyConfig::Custom(t) => u64::from(t.hosts),
        }
    }

    /// The kind's own settings: counts within what aiccsim builds, and, for a custom graph, links
    /// between nodes that exist. (A disconnected graph shows only once it is wired.)
    pub fn check(&self) -> Check {
        match self {
            TopologyConfig::Star(StarTopology { hosts, nics_per_server, nvlink, .. }) => {
                if *hosts < 2 {
                    return fail_at("hosts", format!("a star needs at least 2 hosts, got {hosts}"));
                }
                check_hosts(u64::from(*hosts)).map_err(|m| at("hosts", m))?;
                check_nics(*hosts, *nics_per_server).map_err(|m| at("nics_per_server", m))?;
                check_nvlink(nvlink, *nics_per_server)?;
            }
            TopologyConfig::Dumbbell(DumbbellTopology { left, right, .. }) => {
                if *left < 1 || *right < 1 {
                    return fail_at("left", format!("a dumbbell needs hosts on both sides, got {left} and {right}"));
                }
                // In 64 bits: two u32 counts can overflow u32 before the limit is checked.
                check_hosts(u64::from(*left) + u64::from(*right)).map_err(|m| at("left", m))?;
            }
            TopologyConfig::LeafSpine(LeafSpineTopology {
                leaves,
                spines,
                hosts_per_leaf,
                links_per_spine,
                nics_per_server,
                nvlink,
                ..
            }) => {
                if *leaves < 1 {
                    return fail_at("leaves", "need at least one leaf".into());
                }
                if *hosts_per_leaf < 1 {
                    return fail_at("hosts_per_leaf", "need at least one host per leaf".into());
                }
                let hosts = u64::from(*leaves) * u64::from(*hosts_per_leaf);
                check_hosts(hosts).map_err(|m| at("hosts_per_leaf", m))?;
                check_switches(u64::from(*leaves) + u64::from(*spines)).map_err(|m| at("spines", m))?;
                if *links_per_spine < 1 {
                    return fail_at("links_per_spine", "need at least one link between a leaf and a spine".into());
                }
                let fabric_links = u64::from(*leaves) * u64::from(*spines) * u64::from(*links_per_spine);
                let many = if *links_per_spine > 1 { "links_per_spine" } else { "spines" };
                check_links(hosts + fabric_links).map_err(|m| at(many, m))?;
                if hosts < 2 {
                    return fail_at("hosts_per_leaf", "need at least 2 hosts in all".into());
                }
                check_nics(*hosts_per_leaf, *nics_per_server).map_err(|m| at("nics_per_server", m))?;
                check_nvlink(nvlink, *nics_per_server)?;
            }
            TopologyConfig::FatTree(FatTreeTopology { k, nics_per_server, nvlink, .. }) => {
                if *k < 2 || k % 2 != 0 || *k > 128 {
                    return fail_at("k", format!("k must be an even number from 2 to 128, got {k}"));
                }
                let half = k / 2;
                check_hosts(u64::from(k * half * half)).map_err(|m| at("k", m))?;
                check_nics(half, *nics_per_server).map_err(|m| at("nics_per_server", m))?;
                check_nvlink(nvlink, *nics_per_server)?;
            }
            TopologyConfig::Clos(c) => {
                positive("racks", c.racks)?;
                positive("servers_per_rack", c.servers_per_rack)?;
                positive("gpus_per_server", c.gpus_per_server)?;
                let per_rack = u64::from(c.servers_per_rack) * u64::from(c.gpus_per_server);
                let hosts = u64::from(c.racks) * per_rack;
                check_hosts(hosts).map_err(|m| at("racks", m))?;
                if hosts < 2 {
                    return fail_at("gpus_per_server", "need at least 2 GPUs in all".into());
                }
                check_switches(u64::from(c.racks) + u64::from(c.spines)).map_err(|m| at("spines", m))?;
                let links_per_spine = c.links_per_spine().map_err(|(k, m)| at(k, m))?;
                let fabric_links = u64::from(c.racks) * u64::from(c.spines) * u64::from(links_per_spine);
                check_links(2 * hosts + fabric_links).map_err(|m| at("spines", m))?;
                check_nvlink(&c.nvlink, c.gpus_per_server)?;
            }
            TopologyConfig::Rail(r) => {
                positive("servers", r.servers)?;
                positive("gpus_per_server", r.gpus_per_server)?;
                let group = r.group();
                if group == 0 || !r.servers.is_multiple_of(group) {
                    return fail_at(
                        "servers_per_group",
                        format!("must be at least 1 and divide the {} servers, got {group}", r.servers),
                    );
                }
                let hosts = u64::from(r.servers) * u64::from(r.gpus_per_server);
                check_hosts(hosts).map_err(|m| at("servers", m))?;
                if hosts < 2 {
                    return fail_at("servers", "need at least 2 GPUs in all".into());
                }
                let rails = u64::from(r.servers / group) * u64::from(r.gpus_per_server);
                check_switches(rails + u64::from(r.spines)).map_err(|m| at("spines", m))?;
                let links_per_spine = r.links_per_spine().map_err(|(k, m)| at(k, m))?;
                check_links(2 * hosts + rails * u64::from(r.spines) * u64::from(links_per_spine))
                    .map_err(|m| at("spines", m))?;
                check_nvlink(&r.nvlink, r.gpus_per_server)?;
            }
            TopologyConfig::Custom(CustomTopology { hosts, switches, links }) => {
                if *hosts < 2 {
                    return fail_at("hosts", format!("need at least 2 hosts, got {hosts}"));
                }
                check_hosts(u64::from(*hosts)).map_err(|m| at("hosts", m))?;
                check_switches(u64::from(*switches)).map_err(|m| at("switches", m))?;
                check_links(links.len() as u64).map_err(|m| at("links", m))?;
                for (i, l) in links.iter().enumerate() {
                    let a = parse_node(&l.a, *hosts, *switches).map_err(|m| at(&format!("links[{i}].a"), m))?;
                    let b = parse_node(&l.b, *hosts, *switches).map_err(|m| at(&format!("links[{i}].b"), m))?;
                    if a == b {
                        return fail_at(&format!("links[{i}]"), format!("links '{}' to itself", l.a));
                    }
                }
            }
        }
        Ok(())
    }
}

impl ClosTopology {
    /// Parallel links from each ToR to each spine; errors are (key, message).
    pub fn links_per_spine(&self) -> Result<u32, (&'static str, String)> {
        let down = u64::from(self.servers_per_rack) * u64::from(self.gpus_per_server);
        up_links(down, &self.link, self.fabric_link.as_ref(), self.oversubscription, self.spines, "ToR")
    }
}

impl RailTopology {
    /// Servers per group of rail switches.
    pub fn group(&self) -> u32 {
        self.servers_per_group.unwrap_or(self.servers)
    }

    /// Parallel links from each rail switch to each spine; errors are (key, message).
    pub fn links_per_spine(&self) -> Result<u32, (&'static str, String)> {
        let down = u64::from(self.group());
        up_links(down, &self.link, self.fabric_link.as_ref(), self.oversubscription, self.spines, "rail switch")
    }
}

/// How many of a switch's up-links go to each spine: enough `fabric` links to carry its `down`
/// host links' capacity over `oversubscription`, spread evenly over `spines`.
fn up_links(
    down: u64,
    link: &LinkConfig,
    fabric: Option<&LinkConfig>,
    oversubscription: f64,
    spines: u32,
    what: &str,
) -> Result<u32, (&'static str, String)> {
    if !(oversubscription.is_finite() && oversubscription >= 1.0) {
        return Err((
            "oversubscription",
            format!("must be at least 1 (1: non-blocking, 2: half the down-link capacity up), got {oversubscription}"),
        ));
    }
    if spines == 0 {
        return Err(("spines", "need at least one spine".into()));
    }
    let fabric = fabric.unwrap_or(link);
    let wanted = down as f64 * link.bandwidth.0 as f64 / oversubscription / fabric.bandwidth.0 as f64;
    let links = wanted.round() as u64;
    let have = format!("each {what} has {down} host links of {}", link.bandwidth);
    if links == 0 || (wanted - links as f64).abs() > 1e-6 * wanted.max(1.0) {
        return Err((
            "oversubscription",
            format!(
                "{have}: at oversubscription {oversubscription} that is {wanted:.3} up-links of {}, not a whole number; change the oversubscription or fabric_link's bandwidth",
                fabric.bandwidth
            ),
        ));
    }
    let spread = links / u64::from(spines);
    if spread * u64::from(spines) != links {
        let divisors: Vec<String> =
            (1..=links).filter(|d| links.is_multiple_of(*d)).take(12).map(|d| d.to_string()).collect();
        return Err((
            "spines",
            format!(
                "{have}: at oversubscription {oversubscription} that is {links} up-links of {}, which {spines} spines cannot share evenly; pick a number of spines that divides {links} ({})",
                fabric.bandwidth,
                divisors.join(", ")
            ),
        ));
    }
    u32::try_from(spread).map_err(|_| ("spines", format!("{spread} links between a switch and a spine is too many")))
}

fn positive(key: &str, n: u32) -> Check {
    if n == 0 {
        return fail_at(key, "must be at least 1".into());
    }
    Ok(())
}

/// NVLink joins a server's GPUs: it needs servers of at least two.
fn check_nvlink(nvlink: &Option<LinkConfig>, per_server: u32) -> Check {
    if nvlink.is_some() && per_server < 2 {
        return fail_at(
            "nvlink",
            format!("joins the GPUs of a server, but servers have {per_server}; set gpus_per_server (nics_per_server) to at least 2, or remove nvlink"),
        );
    }
    Ok(())
}

fn check_hosts(hosts: u64) -> Result<(), String> {
    if hosts > MAX_HOSTS {
        return Err(format!("{hosts} hosts is more than the {MAX_HOSTS} aiccsim supports"));
    }
    Ok(())
}

fn check_switches(switches: u64) -> Result<(), String> {
    if switches > MAX_SWITCHES {
        return Err(format!("{switches} switches is more than the {MAX_SWITCHES} aiccsim supports"));
    }
    Ok(())
}

fn check_links(links: u64) -> Result<(), String> {
    if links > MAX_LINKS {
        return Err(format!("{links} links is more than the {MAX_LINKS} aiccsim supports"));
    }
    Ok(())
}

fn check_nics(per_switch: u32, nics: u32) -> Result<(), String> {
    if nics == 0 || !per_switch.is_multiple_of(nics) {
        return Err(format!("must be at least 1 and divide the {per_switch} hosts on each switch, got {nics}"));
    }
    Ok(())
}

/// "h3" -> node 3; "s1" -> node hosts + 1.
/// A node by name: `"h<i>"` (host i) or `"s<j>"` (switch j, node hosts + j).
pub fn parse_node(name: &str, hosts: u32, switches: u32) -> Result<u32, String> {
    let bad = || {
        format!(
            "'{name}' is not a node: write h<i> for a host (0 to {}) or s<j> for a switch (0 to {})",
            hosts - 1,
            switches.saturating_sub(1)
        )
    };
    let (kind, num) = name.split_at(1.min(name.len()));
    let i: u32 = num.parse().map_err(|_| bad())?;
    match kind {
        "h" if i < hosts => Ok(i),
        "s" if i < switches => Ok(hosts + i),
        _ => Err(bad()),
    }
}
