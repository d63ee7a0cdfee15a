//! One function per topology kind, each wiring nodes with `Builder::connect`. The kinds' own
//! settings (counts, limits) were checked with the scenario (`config/topology.rs`); what only
//! the wired graph shows (a disconnected fabric, a host without exactly one link) is checked
//! when it is finished.

use super::{Builder, Topology};
use crate::config::{
    parse_node, CustomTopology, DumbbellTopology, FatTreeTopology, LeafSpineTopology, StarTopology, TopologyConfig,
};

pub(super) fn build(cfg: &TopologyConfig) -> Result<Topology, (String, String)> {
    let err = |key: &str, msg: String| (format!("topology.{key}"), msg);
    let b = match cfg {
        TopologyConfig::Star(StarTopology { hosts, link, nics_per_server }) => {
            let mut b = Builder::new(*hosts, 1);
            let s = b.switch_node(0);
            for h in 0..*hosts {
                b.connect(h, s, *link);
            }
            b.group_servers(*nics_per_server);
            b
        }
        TopologyConfig::Dumbbell(DumbbellTopology { left, right, link, bottleneck }) => {
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
            let hosts = leaves * hosts_per_leaf;
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
            let half = k / 2;
            let hosts = k * half * half;
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
            let mut b = Builder::new(*hosts, *switches);
            for (i, l) in links.iter().enumerate() {
                let a = parse_node(&l.a, *hosts, *switches).map_err(|m| err(&format!("links[{i}].a"), m))?;
                let c = parse_node(&l.b, *hosts, *switches).map_err(|m| err(&format!("links[{i}].b"), m))?;
                b.connect(a, c, crate::config::LinkConfig { bandwidth: l.bandwidth, delay: l.delay });
            }
            b
        }
    };
    b.finish().map_err(|m| ("topology".to_string(), m))
}
