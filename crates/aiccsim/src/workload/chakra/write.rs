//! Writing a Chakra trace: the files `read.rs` reads, in the same framing as Chakra's own tools
//! (each message after its length as a varint). The tests make their traces with this, and so
//! was `examples/chakra/`; the node makers set the attributes the way Chakra's converters do
//! (`comm_type` and `comm_size` as int64, `comm_src`, `comm_dst` and `comm_tag` as int32, as
//! ASTRA-sim reads them; `pg_name` as a string).

use super::schema::{AttributeProto, CollectiveCommType, GlobalMetadata, Node, NodeType, Value};
use prost::Message;
use std::path::Path;

/// The bytes of one rank's file: `metadata`, then `nodes`, each after its length.
pub fn encode_rank(metadata: &GlobalMetadata, nodes: &[Node]) -> Vec<u8> {
    let mut out = Vec::new();
    metadata.encode_length_delimited(&mut out).expect("a Vec grows");
    for n in nodes {
        n.encode_length_delimited(&mut out).expect("a Vec grows");
    }
    out
}

/// Writes `ranks[r]` to `dir/<prefix>.<r>.et` for every rank, with metadata naming the
/// schema version Chakra's converters write.
pub fn write_trace(dir: &Path, prefix: &str, ranks: &[Vec<Node>]) -> std::io::Result<()> {
    let metadata = GlobalMetadata {
        version: String::new(),
        attr: vec![AttributeProto::new("schema", Value::StringVal("1.0.2-chakra.0.0.4".into()))],
    };
    for (r, nodes) in ranks.iter().enumerate() {
        std::fs::write(dir.join(format!("{prefix}.{r}.et")), encode_rank(&metadata, nodes))?;
    }
    Ok(())
}

/// A node of `ty` with data dependencies `deps`.
fn node(id: u64, ty: NodeType, name: &str, deps: &[u64]) -> Node {
    Node { id, name: name.to_string(), r#type: ty as i32, data_deps: deps.to_vec(), ..Default::default() }
}

/// A COMP_NODE of `micros` microseconds.
pub fn compute(id: u64, micros: u64, deps: &[u64]) -> Node {
    Node { duration_micros: micros, ..node(id, NodeType::CompNode, "compute", deps) }
}

/// A COMM_COLL_NODE: `ty` of `size` bytes on process group `pg` ("" or "0": every rank).
pub fn collective(id: u64, ty: CollectiveCommType, size: u64, pg: &str, deps: &[u64]) -> Node {
    let mut n = node(id, NodeType::CommCollNode, ty.name(), deps);
    n.attr.push(AttributeProto::new("comm_type", Value::Int64Val(ty as i64)));
    n.attr.push(AttributeProto::new("comm_size", Value::Int64Val(size as i64)));
    if !pg.is_empty() {
        n.attr.push(AttributeProto::new("pg_name", Value::StringVal(pg.to_string())));
    }
    n
}

/// A COMM_SEND_NODE of rank `src`: `size` bytes to rank `dst`, with tag `tag`.
pub fn send(id: u64, src: u32, dst: u32, size: u64, tag: i32, deps: &[u64]) -> Node {
    let mut n = node(id, NodeType::CommSendNode, "send", deps);
    n.attr.extend(p2p(src, dst, size, tag));
    n
}

/// A COMM_RECV_NODE of rank `dst`: `size` bytes from rank `src`, with tag `tag`.
pub fn recv(id: u64, src: u32, dst: u32, size: u64, tag: i32, deps: &[u64]) -> Node {
    let mut n = node(id, NodeType::CommRecvNode, "recv", deps);
    n.attr.extend(p2p(src, dst, size, tag));
    n
}

fn p2p(src: u32, dst: u32, size: u64, tag: i32) -> [AttributeProto; 4] {
    [
        AttributeProto::new("comm_src", Value::Int32Val(src as i32)),
        AttributeProto::new("comm_dst", Value::Int32Val(dst as i32)),
        AttributeProto::new("comm_size", Value::Int64Val(size as i64)),
        AttributeProto::new("comm_tag", Value::Int32Val(tag)),
    ]
}

/// A node aiccsim runs in no time: a MEM_LOAD_NODE, MEM_STORE_NODE or METADATA_NODE.
pub fn untimed(id: u64, ty: NodeType, deps: &[u64]) -> Node {
    node(id, ty, ty.name(), deps)
}
