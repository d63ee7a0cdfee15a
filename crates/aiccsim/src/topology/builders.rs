//! One function per topology kind, each wiring nodes with `Builder::connect`. The kinds' own
//! settings (counts, limits) were checked with the scenario (`config/topology.rs`); what only
//! the wired graph shows (a disconnected fabric, a host without exactly one link) is checked
//! when it is finished.

use super::{Builder, Servers, Topology};
use crate::config::{
    parse_node, ClosTopology, CustomTopology, DumbbellTopology, FatTreeTopology, LeafSpineTopology, LinkConfig,
    RailTopology, StarTopology, TopologyConfig,
};
use crate::watch::{BuildError, Phase, Watch};

/// Wiring is a few tens of nanoseconds a link, a fraction of a second for the most links a
/// scenario may have, so `watch` is asked before and after it and then through the routing.
pub(super) fn build(cfg: &TopologyConfig, watch: &mut Watch) -> Result<Topology, BuildError<(String, String)>> {
    watch.at(Phase::Topology, 0, 0)?;
    let err = |key: &str, msg: String| BuildError::Invalid((format!("topology.{key}"), msg));
    let b = match cfg {
        TopologyConfig::Star(StarTopology { hosts, link, nics_per_server, nvlink }) => {
            let mut b = Builder::new(*hosts, 1, Servers { per_server: *nics_per_server, nvlink: *nvlink });
            let s = b.switch_node(0);
            for h in 0..*hosts {
                b.connect(h, s, *link);
            }
            b
        }
        TopologyConfig::Dumbbell(DumbbellTopology { left, right, link, bottleneck }) => {
            let mut b = Builder::new(left + right, 2, Servers::NONE);
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
            nvlink,
        }) => {
            let servers = Servers { per_server: *nics_per_server, nvlink: *nvlink };
            let fabric = fabric_link.unwrap_or(*link);
            leaf_spine(*leaves, *spines, *hosts_per_leaf, *link, fabric, *links_per_spine, servers)
        }
        TopologyConfig::Clos(c) => {
            let links_per_spine = c.links_per_spine().map_err(|(k, m)| err(k, m))?;
            let ClosTopology { racks, servers_per_rack, gpus_per_server, spines, link, fabric_link, nvlink, .. } = c;
            let servers = Servers { per_server: *gpus_per_server, nvlink: *nvlink };
            let fabric = fabric_link.unwrap_or(*link);
            leaf_spine(*racks, *spines, servers_per_rack * gpus_per_server, *link, fabric, links_per_spine, servers)
        }
        TopologyConfig::Rail(r) => rail(r).map_err(|(k, m)| err(k, m))?,
        TopologyConfig::FatTree(FatTreeTopology { k, link, fabric_link, nics_per_server, nvlink }) => {
            let half = k / 2;
            let hosts = k * half * half;
            let fabric = fabric_link.unwrap_or(*link);
            let edges = k * half;
            let aggs = k * half;
            let cores = half * half;
            let servers = Servers { per_server: *nics_per_server, nvlink: *nvlink };
            let mut b = Builder::new(hosts, edges + aggs + cores, servers);
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
            b
        }
        TopologyConfig::Custom(CustomTopology { hosts, switches, links }) => {
            let mut b = Builder::new(*hosts, *switches, Servers::NONE);
            for (i, l) in links.iter().enumerate() {
                let a = parse_node(&l.a, *hosts, *switches).map_err(|m| err(&format!("links[{i}].a"), m))?;
                let c = parse_node(&l.b, *hosts, *switches).map_err(|m| err(&format!("links[{i}].b"), m))?;
                b.connect(a, c, crate::config::LinkConfig { bandwidth: l.bandwidth, delay: l.delay });
            }
            b
        }
    };
    watch.at(Phase::Topology, 0, 0)?;
    b.finish(watch).map_err(|e| e.map_invalid(|m| ("topology".to_string(), m)))
}

/// Two tiers: `hosts_per_leaf` hosts on each leaf, every leaf linked to every spine by
/// `links_per_spine` links. Hosts 0..hosts_per_leaf are on leaf 0, and so on; spines follow the
/// leaves.
fn leaf_spine(
    leaves: u32,
    spines: u32,
    hosts_per_leaf: u32,
    link: LinkConfig,
    fabric: LinkConfig,
    links_per_spine: u32,
    servers: Servers,
) -> Builder {
    let mut b = Builder::new(leaves * hosts_per_leaf, leaves + spines, servers);
    for l in 0..leaves {
        let leaf = b.switch_node(l);
        for i in 0..hosts_per_leaf {
            b.connect(l * hosts_per_leaf + i, leaf, link);
        }
    }
    for l in 0..leaves {
        for s in 0..spines {
            let (leaf, spine) = (b.switch_node(l), b.switch_node(leaves + s));
            for _ in 0..links_per_spine {
                b.connect(leaf, spine, fabric);
            }
        }
    }
    b
}

/// Rail-optimised: GPU i of each server of group k on rail switch k * G + i; every rail switch
/// linked to every spine.
fn rail(r: &RailTopology) -> Result<Builder, (&'static str, String)> {
    let links_per_spine = r.links_per_spine()?;
    let g = r.gpus_per_server;
    let group = r.group();
    let rails = r.servers / group * g;
    let fabric = r.fabric_link.unwrap_or(r.link);
    let mut b = Builder::new(r.servers * g, rails + r.spines, Servers { per_server: g, nvlink: r.nvlink });
    for server in 0..r.servers {
        for gpu in 0..g {
            let rail_switch = b.switch_node(server / group * g + gpu);
            b.connect(server * g + gpu, rail_switch, r.link);
        }
    }
    for rail_switch in 0..rails {
        for s in 0..r.spines {
            let (rs, spine) = (b.switch_node(rail_switch), b.switch_node(rails + s));
            for _ in 0..links_per_spine {
                b.connect(rs, spine, fabric);
            }
        }
    }
    Ok(b)
}
