//! One function per topology kind, each wiring nodes with `Builder::connect`.

use super::{Builder, Topology};
use crate::config::{
    CustomTopology, DumbbellTopology, FatTreeTopology, LeafSpineTopology, StarTopology, TopologyConfig,
};

/// Largest fabric we build: enough for a 3-tier k=64 fat tree, small enough that the routing
/// tables (switches x hosts entries) stay in memory.
const MAX_HOSTS: u64 = 1 << 20;
/// Switches and links are bounded for the same reason: each costs memory before any check on
/// the routes could run (a k = 128 fat tree has 20 480 switches and 1.6 million links).
const MAX_SWITCHES: u64 = 1 << 20;
const MAX_LINKS: u64 = 1 << 23;

pub(super) fn build(cfg: &TopologyConfig) -> Result<Topology, (String, String)> {
    let err = |key: &str, msg: String| (format!("topology.{key}"), msg);
    let b = match cfg {
        TopologyConfig::Star(StarTopology { hosts, link, nics_per_server }) => {
            if *hosts < 2 {
                return Err(err("hosts", format!("a star needs at least 2 hosts, got {hosts}")));
            }
            check_hosts(u64::from(*hosts)).map_err(|m| err("hosts", m))?;
            check_nics(*hosts, *nics_per_server).map_err(|m| err("nics_per_server", m))?;
            let mut b = Builder::new(*hosts, 1);
            let s = b.switch_node(0);
            for h in 0..*hosts {
                b.connect(h, s, *link);
            }
            b.group_servers(*nics_per_server);
            b
        }
        TopologyConfig::Dumbbell(DumbbellTopology { left, right, link, bottleneck }) => {
            if *left < 1 || *right < 1 {
                return Err(err("left", format!("a dumbbell needs hosts on both sides, got {left} and {right}")));
            }
            // In 64 bits: two u32 counts can overflow u32 before the limit is checked.
            check_hosts(u64::from(*left) + u64::from(*right)).map_err(|m| err("left", m))?;
            let mut b = Builder::new(left + right, 2);
            let (sl, sr) = (b.switch_node(0), b.switch_node(1));
            for h in 0..*left {
                b.connect(h, sl, *link);
            }
            for h in *left..left + right {
                b.connect(h, sr, *link);
            }
            b.connect(sl, sr, *bottleneck);
            b
        }
        TopologyConfig::LeafSpine(LeafSpineTopology {
            leaves,
            spines,
            hosts_per_leaf,
            link,
            fabric_link,
            links_per_spine,
            nics_per_server,
        }) => {
            if *leaves < 1 {
                return Err(err("leaves", "need at least one leaf".into()));
            }
            if *hosts_per_leaf < 1 {
                return Err(err("hosts_per_leaf", "need at least one host per leaf".into()));
            }
            check_hosts(u64::from(*leaves) * u64::from(*hosts_per_leaf)).map_err(|m| err("hosts_per_leaf", m))?;
            let hosts = leaves * hosts_per_leaf;
            check_switches(u64::from(*leaves) + u64::from(*spines)).map_err(|m| err("spines", m))?;
            if *links_per_spine < 1 {
                return Err(err("links_per_spine", "need at least one link between a leaf and a spine".into()));
            }
            let fabric_links = u64::from(*leaves) * u64::from(*spines) * u64::from(*links_per_spine);
            let many = if *links_per_spine > 1 { "links_per_spine" } else { "spines" };
            check_links(u64::from(hosts) + fabric_links).map_err(|m| err(many, m))?;
            if hosts < 2 {
                return Err(err("hosts_per_leaf", "need at least 2 hosts in all".into()));
            }
            check_nics(*hosts_per_leaf, *nics_per_server).map_err(|m| err("nics_per_server", m))?;
            let fabric = fabric_link.unwrap_or(*link);
            let mut b = Builder::new(hosts, leaves + spines);
            for l in 0..*leaves {
                let leaf = b.switch_node(l);
                for i in 0..*hosts_per_leaf {
                    b.connect(l * hosts_per_leaf + i, leaf, *link);
                }
            }
            for l in 0..*leaves {
                for s in 0..*spines {
                    let (leaf, spine) = (b.switch_node(l), b.switch_node(leaves + s));
                    for _ in 0..*links_per_spine {
                        b.connect(leaf, spine, fabric);
                    }
                }
            }
            b.group_servers(*nics_per_server);
            b
        }
        TopologyConfig::FatTree(FatTreeTopology { k, link, fabric_link, nics_per_server }) => {
            if *k < 2 || k % 2 != 0 || *k > 128 {
                return Err(err("k", format!("k must be an even number from 2 to 128, got {k}")));
            }
            let half = k / 2;
            let hosts = k * half * half;
            check_hosts(u64::from(hosts)).map_err(|m| err("k", m))?;
            check_nics(half, *nics_per_server).map_err(|m| err("nics_per_server", m))?;
            let fabric = fabric_link.unwrap_or(*link);
            let edges = k * half;
            let aggs = k * half;
            let cores = half * half;
            let mut b = Builder::new(hosts, edges + aggs + cores);
            let edge = |pod: u32, i: u32| pod * half + i;
            let agg = |pod: u32, i: u32| edges + pod * half + i;
            let core = |i: u32| edges + aggs + i;
            for pod in 0..*k {
                for e in 0..half {
                    let en = b.switch_node(edge(pod, e));
                    for p in 0..half {
                        b.connect((pod * half + e) * half + p, en, *link);
                    }
                }
                for e in 0..half {
                    for a in 0..half {
                        let (en, an) = (b.switch_node(edge(pod, e)), b.switch_node(agg(pod, a)));
                        b.connect(en, an, fabric);
                    }
                }
                // Aggregation switch `a` of every pod connects to cores a*half .. a*half+half-1.
                for a in 0..half {
                    for c in 0..half {
                        let (an, cn) = (b.switch_node(agg(pod, a)), b.switch_node(core(a * half + c)));
                        b.connect(an, cn, fabric);
                    }
                }
            }
            b.group_servers(*nics_per_server);
            b
        }
        TopologyConfig::Custom(CustomTopology { hosts, switches, links }) => {
            if *hosts < 2 {
                return Err(err("hosts", format!("need at least 2 hosts, got {hosts}")));
            }
            check_hosts(u64::from(*hosts)).map_err(|m| err("hosts", m))?;
            check_switches(u64::from(*switches)).map_err(|m| err("switches", m))?;
            check_links(links.len() as u64).map_err(|m| err("links", m))?;
            let mut b = Builder::new(*hosts, *switches);
            for (i, l) in links.iter().enumerate() {
                let a = parse_node(&l.a, *hosts, *switches).map_err(|m| err(&format!("links[{i}].a"), m))?;
                let c = parse_node(&l.b, *hosts, *switches).map_err(|m| err(&format!("links[{i}].b"), m))?;
                if a == c {
                    return Err(err(&format!("links[{i}]"), format!("links '{}' to itself", l.a)));
                }
                b.connect(a, c, crate::config::LinkConfig { bandwidth: l.bandwidth, delay: l.delay });
            }
            b
        }
    };
    b.finish().map_err(|m| ("topology".to_string(), m))
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
/// A node by name: "h<i>" (host i) or "s<j>" (switch j, node hosts + j).
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
