//! A trace's nodes as aiccsim runs them: what each node becomes (a compute step, its rank's part
//! in a collective, one end of a transfer), its dependencies, the checks of each file (ids,
//! dependencies that exist, no cycle), and the matching of nodes across ranks into collectives
//! and transfers.
//!
//! Matching follows the collective library's rules, which the trace does not spell out: the
//! collectives of a process group are issued in the same order on every member (NCCL), so the
//! k-th collective node of a group on each member rank is one collective, and each must agree
//! on type and size; the k-th send from rank s to rank d with tag t is received by the k-th
//! receive on d from s with tag t (MPI's and NCCL's ordering of point-to-point messages). "In
//! order" is the order of the nodes in the file.

use super::read::{ordinal, RankFile};
use super::schema::{AttributeProto, CollectiveCommType, Node, NodeType, Value};
use crate::tags::CollectiveKind;
use crate::time::SimTime;
use std::collections::BTreeMap;

/// What a node becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A compute step of this long: COMP_NODE's `duration_micros`, and no time for the node
    /// types aiccsim does not time (memory, metadata, invalid) and for a collective on a
    /// process group of one rank.
    Step(SimTime),
    /// Its rank's part in collective `c` (of [`Graph::collectives`]).
    Collective(u32),
    /// The sending or the receiving end of transfer `t` (of [`Graph::transfers`]).
    Transfer(u32),
}

/// One rank's nodes, in file order.
pub struct RankNodes {
    /// Its file, as errors name it.
    pub file: String,
    pub ids: Vec<u64>,
    pub types: Vec<NodeType>,
    pub roles: Vec<Role>,
    /// Per node: the positions of the nodes it waits for (data and control dependencies).
    pub deps: Vec<Vec<u32>>,
}

/// One collective: the nodes of its members, in the process group's rank order.
pub struct Collective {
    pub kind: CollectiveKind,
    /// Bytes, as the trace's `comm_size` gives them.
    pub size: u64,
    /// Its process group's name ("0": every rank).
    pub group: String,
    /// (rank, position of its node), in the group's order.
    pub members: Vec<(u32, u32)>,
}

/// One point-to-point transfer: (rank, position) of its send and receive nodes.
pub struct Transfer {
    pub send: (u32, u32),
    pub recv: (u32, u32),
    pub size: u64,
}

/// The whole trace, checked and matched.
pub struct Graph {
    pub ranks: Vec<RankNodes>,
    pub collectives: Vec<Collective>,
    pub transfers: Vec<Transfer>,
}

impl Graph {
    /// "FILE: node ID", to start an error about a node.
    pub fn at(&self, rank: u32, node: u32) -> String {
        let r = &self.ranks[rank as usize];
        format!("{}: node {}", r.file, r.ids[node as usize])
    }
}

/// A node as read from its attributes, before matching.
enum Parsed {
    Step(SimTime),
    Collective { kind: CollectiveKind, comm_type: CollectiveCommType, size: u64, group: String },
    Send { dst: u32, size: u64, tag: i128 },
    Recv { src: u32, size: u64, tag: i128 },
}

/// The collectives aiccsim runs, and what each is in its collective library. A barrier is an
/// all-reduce, as PyTorch's process groups run `barrier()` (ProcessGroupNCCL::barrier
/// all-reduces a one-element float tensor on each rank).
const SUPPORTED: [(CollectiveCommType, CollectiveKind); 6] = [
    (CollectiveCommType::AllReduce, CollectiveKind::AllReduce),
    (CollectiveCommType::AllGather, CollectiveKind::AllGather),
    (CollectiveCommType::ReduceScatter, CollectiveKind::ReduceScatter),
    (CollectiveCommType::AllToAll, CollectiveKind::AllToAll),
    (CollectiveCommType::Broadcast, CollectiveKind::Broadcast),
    (CollectiveCommType::Barrier, CollectiveKind::AllReduce),
];

/// A barrier's buffer when its node gives no `comm_size`: the one 4-byte float PyTorch
/// all-reduces.
const BARRIER_BYTES: u64 = 4;

/// What a node's `ctrl_deps` are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CtrlDeps {
    /// Dependencies like `data_deps`: the node starts once they are done.
    #[default]
    Wait,
    /// Not dependencies: in traces converted from PyTorch they name the operator that called
    /// the node (its parent in the call tree, often not in the file), and the execution order
    /// is in `data_deps` (Chakra's converter puts it there; ASTRA-sim reads only those).
    Ignore,
}

/// Checks every file and matches the nodes across ranks. `groups` gives the ranks of each
/// process group other than "0" (every rank).
pub fn build(files: &[RankFile], groups: &BTreeMap<String, Vec<u32>>, ctrl: CtrlDeps) -> Result<Graph, String> {
    let n = files.len() as u32;
    let mut ranks = Vec::with_capacity(files.len());
    let mut parsed = Vec::with_capacity(files.len());
    for (r, f) in files.iter().enumerate() {
        let file = f.path.display().to_string();
        let (nodes, deps) = check_file(&file, &f.nodes, ctrl)?;
        let mut p = Vec::with_capacity(f.nodes.len());
        for node in &f.nodes {
            p.push(parse(&file, node, r as u32, n, groups)?);
        }
        let types = f.nodes.iter().map(|x| NodeType::try_from(x.r#type).expect("parse checked the type")).collect();
        ranks.push(RankNodes { file, ids: nodes, types, roles: Vec::new(), deps });
        parsed.push(p);
    }
    let mut graph = Graph { ranks, collectives: Vec::new(), transfers: Vec::new() };
    for (r, p) in parsed.iter().enumerate() {
        graph.ranks[r].roles = p.iter().map(|x| if let Parsed::Step(t) = x { Role::Step(*t) } else { Role::Step(SimTime::ZERO) }).collect();
    }
    match_collectives(&mut graph, &parsed, groups)?;
    match_transfers(&mut graph, &parsed)?;
    Ok(graph)
}

/// A file's node ids, unique, and each node's dependencies as positions; refuses a dependency
/// on a node the file does not have, and a cycle.
fn check_file(file: &str, nodes: &[Node], ctrl: CtrlDeps) -> Result<(Vec<u64>, Vec<Vec<u32>>), String> {
    let mut position: BTreeMap<u64, u32> = BTreeMap::new();
    for (i, node) in nodes.iter().enumerate() {
        if let Some(first) = position.insert(node.id, i as u32) {
            return Err(format!(
                "{file}: node {}: the id is given twice (the {} and the {} node of the file); every node of a file needs its own id",
                node.id,
                ordinal(first as usize + 1),
                ordinal(i + 1)
            ));
        }
    }
    let mut deps = Vec::with_capacity(nodes.len());
    for node in nodes {
        let mut d = Vec::with_capacity(node.data_deps.len() + node.ctrl_deps.len());
        let ctrl_deps = if ctrl == CtrlDeps::Wait { &node.ctrl_deps[..] } else { &[] };
        for (k, &id) in node.data_deps.iter().chain(ctrl_deps).enumerate() {
            let Some(&p) = position.get(&id) else {
                let (field, hint) = match k < node.data_deps.len() {
                    true => ("data_deps", ""),
                    false => (
                        "ctrl_deps",
                        ", or, for a trace converted from PyTorch (whose ctrl_deps name the calling operator), set workload.ctrl_deps = \"ignore\" (import-chakra's --ctrl-deps ignore)",
                    ),
                };
                return Err(format!(
                    "{file}: node {}: depends on node {id} ({field}), which the file does not have; remove the dependency or add node {id}{hint}",
                    node.id
                ));
            };
            d.push(p);
        }
        d.sort_unstable();
        d.dedup();
        deps.push(d);
    }
    let waiting = topological_leftover(nodes.len(), &deps);
    if !waiting.is_empty() {
        let cycle = find_cycle(&waiting, |u| deps[u].iter().map(|&p| p as usize).collect());
        let ids: Vec<String> = cycle.iter().chain(cycle.first()).map(|&p| format!("node {}", nodes[p].id)).collect();
        return Err(format!(
            "{file}: node {}: the dependencies form a cycle ({}: each waits for the next), so none of these nodes could ever start; remove one of these dependencies",
            nodes[cycle[0]].id,
            ids.join(" -> ")
        ));
    }
    let ids = nodes.iter().map(|x| x.id).collect();
    Ok((ids, deps))
}

/// Kahn's algorithm over `deps` (each item's predecessors): the items that never become ready,
/// marked, or an empty list if there are none.
pub(super) fn topological_leftover(items: usize, deps: &[Vec<u32>]) -> Vec<bool> {
    let mut waiting_on: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut dependents = vec![Vec::new(); items];
    for (u, d) in deps.iter().enumerate() {
        for &p in d {
            dependents[p as usize].push(u as u32);
        }
    }
    let mut ready: Vec<usize> = (0..items).filter(|&u| waiting_on[u] == 0).collect();
    let mut done = 0;
    while let Some(u) = ready.pop() {
        done += 1;
        for &d in &dependents[u] {
            waiting_on[d as usize] -= 1;
            if waiting_on[d as usize] == 0 {
                ready.push(d as usize);
            }
        }
    }
    if done == items {
        return Vec::new();
    }
    waiting_on.iter().map(|&w| w > 0).collect()
}

/// A cycle among the items `waiting` marks (each waits for another of them): items in order,
/// each waiting for the next and the last for the first. `preds(u)` lists what u waits for.
pub(super) fn find_cycle(waiting: &[bool], preds: impl Fn(usize) -> Vec<usize>) -> Vec<usize> {
    let mut seen = vec![usize::MAX; waiting.len()];
    let mut path = Vec::new();
    let mut u = waiting.iter().position(|&w| w).expect("something is waiting");
    while seen[u] == usize::MAX {
        seen[u] = path.len();
        path.push(u);
        u = preds(u).into_iter().find(|&p| waiting[p]).expect("a waiting item waits for a waiting item");
    }
    path.split_off(seen[u])
}

/// An integer attribute of a node, if it has one.
fn integer(file: &str, node: &Node, name: &str) -> Result<Option<i128>, String> {
    let Some(a) = node.attribute(name) else { return Ok(None) };
    match a.integer() {
        Some(v) => Ok(Some(v)),
        None => Err(format!(
            "{file}: node {}: attribute {name} is not an integer ({}); write it as an int64 attribute",
            node.id,
            describe(a)
        )),
    }
}

/// What an attribute holds, for an error.
fn describe(a: &AttributeProto) -> String {
    match (&a.value, a.string()) {
        (None, _) => "no value".into(),
        (_, Some(s)) => format!("the string {s:?}"),
        (Some(v), None) => format!("{:?}", v).split('(').next().unwrap_or("another type").to_string(),
    }
}

/// A required integer attribute in `0..=max`.
fn required(file: &str, node: &Node, name: &str, max: i128, what: &str) -> Result<i128, String> {
    let Some(v) = integer(file, node, name)? else {
        return Err(format!(
            "{file}: node {}: a {} needs the attribute {name} ({what}); add it",
            node.id,
            type_name(node)
        ));
    };
    if v < 0 || v > max {
        return Err(format!("{file}: node {}: {name} = {v} is out of range ({what}, 0 to {max})", node.id));
    }
    Ok(v)
}

fn type_name(node: &Node) -> &'static str {
    NodeType::try_from(node.r#type).map_or("node", NodeType::name)
}

/// What `node` of rank `rank` (of `n`) is.
fn parse(file: &str, node: &Node, rank: u32, n: u32, groups: &BTreeMap<String, Vec<u32>>) -> Result<Parsed, String> {
    let at = || format!("{file}: node {}", node.id);
    let Ok(ty) = NodeType::try_from(node.r#type) else {
        return Err(format!(
            "{}: type {} is not a node type of the Chakra schema (0 to 7, INVALID_NODE to COMM_COLL_NODE); the file was written with another schema",
            at(),
            node.r#type
        ));
    };
    let communicates = matches!(ty, NodeType::CommCollNode | NodeType::CommSendNode | NodeType::CommRecvNode);
    if communicates && on_cpu(node) {
        // PyTorch records the CPU-side call of a collective as a node of its own, beside the
        // GPU kernel that communicates; it takes its time on the CPU and sends nothing.
        return Ok(Parsed::Step(duration(&at(), node)?));
    }
    let ranks = format!("rank, 0 to {}", n - 1);
    let bytes = |name: &str| required(file, node, name, i128::from(u64::MAX), "bytes").map(|v| v as u64);
    Ok(match ty {
        NodeType::CompNode => Parsed::Step(duration(&at(), node)?),
        NodeType::InvalidNode | NodeType::MetadataNode | NodeType::MemLoadNode | NodeType::MemStoreNode => {
            Parsed::Step(SimTime::ZERO)
        }
        NodeType::CommCollNode => {
            let Some(code) = integer(file, node, "comm_type")? else {
                return Err(format!("{}: a COMM_COLL_NODE needs the attribute comm_type (ALL_REDUCE = 0, ...); add it", at()));
            };
            let comm_type = i32::try_from(code).ok().and_then(|c| CollectiveCommType::try_from(c).ok());
            let Some(comm_type) = comm_type else {
                return Err(format!(
                    "{}: comm_type = {code} is not a collective of the Chakra schema (0 to 9, ALL_REDUCE to BARRIER); fix the attribute",
                    at()
                ));
            };
            let Some(&(_, kind)) = SUPPORTED.iter().find(|(t, _)| *t == comm_type) else {
                let names: Vec<&str> = SUPPORTED.iter().map(|(t, _)| t.name()).collect();
                return Err(format!(
                    "{}: {} collectives are not supported (aiccsim runs {}); replace the node with one of these, or with a COMP_NODE of its duration",
                    at(),
                    comm_type.name(),
                    names.join(", ")
                ));
            };
            let size = match comm_type {
                CollectiveCommType::Barrier if node.attribute("comm_size").is_none() => BARRIER_BYTES,
                _ => bytes("comm_size")?,
            };
            let group = match node.attribute("pg_name").map(|a| a.string().ok_or(a)) {
                None => "0".to_string(),
                Some(Ok("")) => "0".to_string(),
                Some(Ok(name)) => name.to_string(),
                Some(Err(a)) => {
                    return Err(format!("{}: attribute pg_name is not a string ({}); write the process group's name", at(), describe(a)))
                }
            };
            if group != "0" {
                let Some(members) = groups.get(&group) else {
                    return Err(format!(
                        "{}: runs on process group {group:?}, whose ranks the trace does not give; list them in a JSON file (workload.comm_groups; import-chakra's --comm-groups), e.g. {{\"{group}\": [0, 1]}}",
                        at()
                    ));
                };
                if !members.contains(&rank) {
                    return Err(format!(
                        "{}: runs on process group {group:?} ({members:?}), which does not hold rank {rank}, the rank of this file",
                        at()
                    ));
                }
            }
            Parsed::Collective { kind, comm_type, size, group }
        }
        NodeType::CommSendNode | NodeType::CommRecvNode => {
            let send = ty == NodeType::CommSendNode;
            let (mine, peer) = if send { ("comm_src", "comm_dst") } else { ("comm_dst", "comm_src") };
            if let Some(v) = integer(file, node, mine)?.filter(|&v| v != i128::from(rank)) {
                return Err(format!(
                    "{}: a {} of rank {rank} (this file's) gives {mine} = {v}; it belongs in the trace of rank {v}, or {mine} is wrong",
                    at(),
                    ty.name()
                ));
            }
            let other = required(file, node, peer, i128::from(n - 1), &ranks)? as u32;
            if other == rank {
                return Err(format!("{}: {peer} = {other} is this file's own rank; a transfer needs two ranks", at()));
            }
            let size = bytes("comm_size")?;
            let tag = integer(file, node, "comm_tag")?.unwrap_or(0);
            match send {
                true => Parsed::Send { dst: other, size, tag },
                false => Parsed::Recv { src: other, size, tag },
            }
        }
    })
}

/// A node's `duration_micros`.
fn duration(at: &str, node: &Node) -> Result<SimTime, String> {
    match node.duration_micros.checked_mul(1_000_000) {
        Some(ps) => Ok(SimTime(ps)),
        None => Err(format!("{at}: duration_micros = {} is too long to simulate", node.duration_micros)),
    }
}

/// Whether a node says it runs on the CPU (its `is_cpu_op` attribute, a bool, or an integer).
fn on_cpu(node: &Node) -> bool {
    let Some(a) = node.attribute("is_cpu_op") else { return false };
    match &a.value {
        Some(Value::BoolVal(b)) => *b,
        _ => a.integer().is_some_and(|v| v != 0),
    }
}

/// The ranks of process group `name` ("0": all `n`), checked.
fn members(name: &str, n: u32, groups: &BTreeMap<String, Vec<u32>>) -> Result<Vec<u32>, String> {
    if name == "0" {
        return Ok((0..n).collect());
    }
    let ranks = groups[name].clone();
    let mut sorted = ranks.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != ranks.len() {
        return Err(format!("process group {name:?} ({ranks:?}) lists a rank twice"));
    }
    if let Some(&bad) = ranks.iter().find(|&&r| r >= n) {
        return Err(format!("process group {name:?} ({ranks:?}) holds rank {bad}, but the trace has ranks 0 to {}", n - 1));
    }
    Ok(ranks)
}

fn match_collectives(g: &mut Graph, parsed: &[Vec<Parsed>], groups: &BTreeMap<String, Vec<u32>>) -> Result<(), String> {
    let n = parsed.len() as u32;
    // group -> rank -> positions of its collective nodes, in file order
    let mut issued: BTreeMap<&str, BTreeMap<u32, Vec<u32>>> = BTreeMap::new();
    for (r, p) in parsed.iter().enumerate() {
        for (i, x) in p.iter().enumerate() {
            if let Parsed::Collective { group, .. } = x {
                issued.entry(group).or_default().entry(r as u32).or_default().push(i as u32);
            }
        }
    }
    for (group, by_rank) in &issued {
        let members = members(group, n, groups)?;
        let counts: Vec<usize> = members.iter().map(|m| by_rank.get(m).map_or(0, Vec::len)).collect();
        let (most, least) = (counts.iter().max().copied().unwrap_or(0), counts.iter().min().copied().unwrap_or(0));
        if most != least {
            let (a, b) = (counts.iter().position(|&c| c == most).unwrap(), counts.iter().position(|&c| c == least).unwrap());
            let (ra, rb) = (members[a], members[b]);
            let extra = by_rank[&ra][least];
            return Err(format!(
                "{}: is the {} collective of rank {ra} on process group {group:?}, but rank {rb} ({}) issues only {least} on it; every member issues the same collectives in the same order, so one trace is incomplete",
                g.at(ra, extra),
                ordinal(least + 1),
                g.ranks[rb as usize].file
            ));
        }
        let lists: Vec<&Vec<u32>> = members.iter().map(|m| &by_rank[m]).collect();
        for k in 0..most {
            let nodes: Vec<(u32, u32)> = members.iter().zip(&lists).map(|(&m, list)| (m, list[k])).collect();
            let describe = |&(r, i): &(u32, u32)| match &parsed[r as usize][i as usize] {
                Parsed::Collective { comm_type, size, .. } => (*comm_type, *size),
                _ => unreachable!("only collectives are listed"),
            };
            let first = describe(&nodes[0]);
            if let Some(other) = nodes.iter().find(|x| describe(x) != first) {
                let o = describe(other);
                return Err(format!(
                    "{}: the {} collective of process group {group:?} is {} of {} bytes on rank {}, but {} (rank {}) makes it {} of {} bytes; the members of a collective must agree on type and comm_size",
                    g.at(nodes[0].0, nodes[0].1),
                    ordinal(k + 1),
                    first.0.name(),
                    first.1,
                    nodes[0].0,
                    g.at(other.0, other.1),
                    other.0,
                    o.0.name(),
                    o.1
                ));
            }
            if members.len() == 1 {
                continue; // a group of one rank: nothing to send, the node stays a step of no time
            }
            let Parsed::Collective { kind, size, .. } = &parsed[nodes[0].0 as usize][nodes[0].1 as usize] else {
                unreachable!()
            };
            let c = g.collectives.len() as u32;
            for &(r, i) in &nodes {
                g.ranks[r as usize].roles[i as usize] = Role::Collective(c);
            }
            g.collectives.push(Collective { kind: *kind, size: *size, group: group.to_string(), members: nodes });
        }
    }
    Ok(())
}

fn match_transfers(g: &mut Graph, parsed: &[Vec<Parsed>]) -> Result<(), String> {
    // (src, dst, tag) -> positions of the sends on src / the receives on dst, in file order
    let mut sends: BTreeMap<(u32, u32, i128), Vec<u32>> = BTreeMap::new();
    let mut recvs: BTreeMap<(u32, u32, i128), Vec<u32>> = BTreeMap::new();
    for (r, p) in parsed.iter().enumerate() {
        let r = r as u32;
        for (i, x) in p.iter().enumerate() {
            match *x {
                Parsed::Send { dst, tag, .. } => sends.entry((r, dst, tag)).or_default().push(i as u32),
                Parsed::Recv { src, tag, .. } => recvs.entry((src, r, tag)).or_default().push(i as u32),
                _ => {}
            }
        }
    }
    let size = |r: u32, i: u32| match parsed[r as usize][i as usize] {
        Parsed::Send { size, .. } | Parsed::Recv { size, .. } => size,
        _ => unreachable!("only transfers are listed"),
    };
    let none = Vec::new();
    let keys: std::collections::BTreeSet<(u32, u32, i128)> = sends.keys().chain(recvs.keys()).copied().collect();
    for key @ (src, dst, tag) in keys {
        let (s, r) = (sends.get(&key).unwrap_or(&none), recvs.get(&key).unwrap_or(&none));
        if s.len() != r.len() {
            let k = s.len().min(r.len());
            let (what, rank, node, other, fix) = match s.len() > r.len() {
                true => ("sends", src, s[k], dst, "add the COMM_RECV_NODE to its trace or remove the send"),
                false => ("receives", dst, r[k], src, "add the COMM_SEND_NODE to its trace or remove the receive"),
            };
            let peer = if what == "sends" { format!("to rank {dst}") } else { format!("from rank {src}") };
            let opposite = if what == "sends" { format!("receives from rank {src}") } else { format!("sends to rank {dst}") };
            return Err(format!(
                "{}: {what} {peer} with tag {tag} (its {} such transfer), but rank {other}'s trace ({}) has only {k} matching {opposite} with that tag; {fix}",
                g.at(rank, node),
                ordinal(k + 1),
                g.ranks[other as usize].file
            ));
        }
        for (&si, &ri) in s.iter().zip(r) {
            let (ss, rs) = (size(src, si), size(dst, ri));
            if ss != rs {
                return Err(format!(
                    "{}: sends {ss} bytes to rank {dst} with tag {tag}, but the matching receive, {}, expects {rs}; the two ends of a transfer must agree on comm_size",
                    g.at(src, si),
                    g.at(dst, ri)
                ));
            }
            let t = g.transfers.len() as u32;
            g.ranks[src as usize].roles[si as usize] = Role::Transfer(t);
            g.ranks[dst as usize].roles[ri as usize] = Role::Transfer(t);
            g.transfers.push(Transfer { send: (src, si), recv: (dst, ri), size: ss });
        }
    }
    Ok(())
}
