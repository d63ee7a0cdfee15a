//! `kind = "chakra"`: a trace written here with the schema's own encoding runs, on an idle star,
//! in the time its critical path adds up to (compute steps plus each collective's and
//! transfer's formula time, as `workload_collectives` derives them); a malformed trace is
//! refused when the scenario is read, naming the file, the node and the fix. The trace of the
//! registry's example (examples/chakra/) is the one written here.

use crate::common;

use aiccsim::workload::chakra::schema::{CollectiveCommType as Coll, Node, NodeType};
use aiccsim::workload::chakra::write::{collective, compute, recv, send, untimed, write_trace};
use aiccsim::{ConfigError, Scenario};
use std::path::Path;

/// The example: four ranks, every node type aiccsim runs. Each rank computes 10 us, loads from
/// memory (no time), all-reduces 1 MB over every rank, computes 5 us, then all-gathers 400 KB
/// on its half (process group "1" is ranks 0 and 1, "2" ranks 2 and 3); rank 1 then sends
/// 500 KB to rank 2 (tag 7), whose receive waits (a control dependency) for its all-gather,
/// and rank 2 computes 7 us on what it received and ends with a metadata node; ranks 0 and 3
/// compute 1 us, and rank 3 stores to memory.
fn example() -> Vec<Vec<Node>> {
    (0..4u32)
        .map(|r| {
            let half = if r < 2 { "1" } else { "2" };
            let mut nodes = vec![
                compute(1, 10, &[]),
                untimed(2, NodeType::MemLoadNode, &[1]),
                collective(3, Coll::AllReduce, 1_000_000, "", &[2]),
                compute(4, 5, &[3]),
                collective(5, Coll::AllGather, 400_000, half, &[4]),
            ];
            match r {
                1 => nodes.push(send(6, 1, 2, 500_000, 7, &[5])),
                2 => {
                    let mut r = recv(6, 1, 2, 500_000, 7, &[]);
                    r.ctrl_deps = vec![5];
                    nodes.extend([r, compute(7, 7, &[6]), untimed(8, NodeType::MetadataNode, &[7])]);
                }
                _ => nodes.push(compute(6, 1, &[5])),
            }
            if r == 3 {
                nodes.push(untimed(7, NodeType::MemStoreNode, &[6]));
            }
            nodes
        })
        .collect()
}

const GROUPS: &str = "{\"1\": [0, 1], \"2\": [2, 3]}\n";

/// Writes `ranks` as `dir/t.<r>.et` with the example's process groups.
fn write(dir: &Path, ranks: &[Vec<Node>]) {
    write_trace(dir, "t", ranks).unwrap();
    std::fs::write(dir.join("groups.json"), GROUPS).unwrap();
}

/// A scenario running the trace in `dir` on a star of `hosts` hosts, PFC only.
fn text(dir: &Path, hosts: u32, extra: &str) -> String {
    let workload = format!(
        "kind = \"chakra\"\ntrace = '{}'\ncomm_groups = '{}'\n{extra}",
        dir.display(),
        dir.join("groups.json").display()
    );
    common::star(hosts, "none", &workload)
}

fn load(dir: &Path, hosts: u32) -> Result<Scenario, ConfigError> {
    Scenario::from_toml(&text(dir, hosts, ""), "chakra.toml")
}

/// The error reading `ranks` gives.
fn refused(ranks: &[Vec<Node>]) -> ConfigError {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ranks);
    load(dir.path(), 4).expect_err("refused")
}

#[test]
fn the_example_runs_in_the_time_its_critical_path_adds_up_to() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &example());
    // Ranks on hosts 4, 1, 2, 3 of five: the trace's rank 0 is host 4.
    let s = Scenario::from_toml(&text(dir.path(), 5, "hosts = [4, 1, 2, 3]\n"), "chakra.toml").unwrap();
    let r = aiccsim::run(&s).unwrap();
    assert_eq!(r.summary.flows_finished, r.summary.flows);
    // Ring all-reduce on 4 ranks (24 flows), two all-gathers of 2 (2 flows each), one send.
    assert_eq!(r.flows.len(), 29);
    let names: Vec<String> = r.collectives.iter().map(|c| c.info.name()).collect();
    assert_eq!(names, ["all_reduce:0", "all_gather:1", "all_gather:2", "send_recv:3"]);
    let ranks: Vec<u32> = r.collectives.iter().map(|c| c.info.ranks).collect();
    assert_eq!(ranks, [4, 2, 2, 2]);
    let send: Vec<(u32, u32, u64)> =
        r.flows.iter().filter(|f| &*f.collective == "send_recv:3").map(|f| (f.src, f.dst, f.size_bytes)).collect();
    assert_eq!(send, [(1, 2, 500_000)]);
    assert!(r.flows.iter().all(|f| f.src != 0 && f.dst != 0), "host 0 runs no rank");
    let halves: Vec<(u32, u32)> =
        r.flows.iter().filter(|f| &*f.collective == "all_gather:1").map(|f| (f.src, f.dst)).collect();
    assert_eq!(halves, [(4, 1), (1, 4)], "process group \"1\": ranks 0 and 1");

    // The formula, as workload_collectives derives it: wire time with headers (and the ACKs of
    // data coming the other way, where a rank receives while it sends), one step latency L per
    // step (both links' delays and a packet's store-and-forward).
    let (mtu, header, ack) = (s.nic.mtu.0 as f64, s.nic.header.0 as f64, s.nic.ack_size.0 as f64);
    let line = |bytes: f64| bytes * 8.0 / 100e3;
    let wire = |payload: f64| line(payload * (mtu + header) / mtu);
    let with_acks = |payload: f64| wire(payload) + line(payload / mtu * ack);
    let l = 2.0 + line(mtu + header);
    let all_reduce = with_acks(2.0 * 3.0 / 4.0 * 1e6) + 6.0 * l;
    let all_gather = with_acks(400e3 / 2.0) + l;
    let transfer = wire(500e3) + l;
    let formula = 10.0 + all_reduce + 5.0 + all_gather + transfer + 7.0;
    let end = r.computes.iter().filter_map(|c| c.end).max().unwrap().as_us_f64();
    let off = (end - formula).abs() / formula;
    assert!(
        off <= 0.02,
        "the trace ends at {end:.2} us, its critical path adds up to {formula:.2} us ({:.1}% off)",
        off * 100.0
    );
    // The last step is rank 2's 7 us compute (host 2), after the transfer arrived.
    let last = r.computes.iter().filter(|c| c.duration.0 > 0).max_by_key(|c| c.end).unwrap();
    assert_eq!((last.host, last.duration.as_us_f64()), (2, 7.0));
    let arrived = r.flows.iter().find(|f| &*f.collective == "send_recv:3").unwrap().finish.unwrap();
    assert_eq!(last.start, Some(arrived));
}

#[test]
fn the_shipped_example_is_the_one_written_here() {
    // examples/chakra/ holds the trace of the registry's example. Regenerate it with
    // AICCSIM_WRITE_CHAKRA_EXAMPLE=1 cargo test -p aiccsim --test all workload_chakra.
    let at = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/chakra");
    if std::env::var_os("AICCSIM_WRITE_CHAKRA_EXAMPLE").is_some() {
        std::fs::create_dir_all(&at).unwrap();
        write_trace(&at, "tiny", &example()).unwrap();
        std::fs::write(at.join("comm_groups.json"), GROUPS).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    write_trace(dir.path(), "tiny", &example()).unwrap();
    for r in 0..4 {
        let name = format!("tiny.{r}.et");
        let shipped = std::fs::read(at.join(&name)).unwrap_or_else(|e| panic!("examples/chakra/{name}: {e}"));
        assert!(
            shipped == std::fs::read(dir.path().join(&name)).unwrap(),
            "examples/chakra/{name} is not the example's trace"
        );
    }
    assert_eq!(std::fs::read_to_string(at.join("comm_groups.json")).unwrap(), GROUPS);
}

#[test]
fn a_trace_with_more_ranks_than_hosts_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &example());
    // Checked against the fabric, as the run is built.
    let e = aiccsim::run(&load(dir.path(), 3).unwrap()).err().unwrap();
    assert_eq!(e.key, "workload.hosts", "{e}");
    assert!(e.message.contains("the trace has 4 ranks") && e.message.contains("at least 4 hosts"), "{e}");
}

#[test]
fn a_truncated_file_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &example());
    let file = dir.path().join("t.1.et");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() - 3]).unwrap();
    let e = load(dir.path(), 4).err().unwrap();
    assert_eq!(e.key, "workload.trace", "{e}");
    assert!(e.message.contains("t.1.et: truncated: node message 5"), "{e}");
    assert!(e.message.contains("copy or regenerate it"), "{e}");
}

#[test]
fn a_missing_rank_is_refused_naming_its_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &example());
    std::fs::remove_file(dir.path().join("t.2.et")).unwrap();
    let e = load(dir.path(), 4).err().unwrap();
    assert!(e.message.contains("rank 2 has no file") && e.message.contains("t.2.et is missing"), "{e}");
    assert!(e.message.contains("every rank from 0 to 3 needs its trace"), "{e}");
}

#[test]
fn a_cycle_is_refused_naming_its_nodes() {
    let mut ranks = example();
    ranks[3][0].ctrl_deps = vec![6]; // compute 1 waits for compute 6, which (through 5, 4, ...) waits for it
    let e = refused(&ranks);
    assert!(e.message.contains("t.3.et: node 1: the dependencies form a cycle"), "{e}");
    assert!(e.message.contains("node 1 -> node 6 -> node 5 -> node 4 -> node 3 -> node 2 -> node 1"), "{e}");
}

#[test]
fn an_unknown_or_unsupported_collective_is_refused() {
    let mut ranks = example();
    ranks[0][2].attr[0].value = Some(aiccsim::workload::chakra::schema::Value::Int64Val(42));
    let e = refused(&ranks);
    assert!(e.message.contains("t.0.et: node 3: comm_type = 42 is not a collective of the Chakra schema"), "{e}");
    let mut ranks = example();
    for r in &mut ranks {
        r[2] = collective(3, Coll::Reduce, 1000, "", &[2]);
    }
    let e = refused(&ranks);
    assert!(e.message.contains("t.0.et: node 3: REDUCE collectives are not supported"), "{e}");
    assert!(e.message.contains("ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, BROADCAST, BARRIER"), "{e}");
}

/// A BARRIER holds every rank until the last arrives: it runs as the all-reduce of one 4-byte
/// float that PyTorch's process groups run for `barrier()` (its `comm_size` may be left out).
#[test]
fn a_barrier_holds_every_rank_until_the_last_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let ranks: Vec<Vec<Node>> = (0..4u32)
        .map(|r| {
            let mut barrier = collective(2, Coll::Barrier, 0, "", &[1]);
            barrier.attr.retain(|a| a.name != "comm_size");
            // Rank 2 arrives 30 us late; the others after 1 us.
            vec![compute(1, if r == 2 { 30 } else { 1 }, &[]), barrier, compute(3, 2, &[2])]
        })
        .collect();
    write(dir.path(), &ranks);
    let r = aiccsim::run(&load(dir.path(), 4).unwrap()).unwrap();
    let names: Vec<String> = r.collectives.iter().map(|c| c.info.name()).collect();
    assert_eq!(names, ["all_reduce:0"]);
    // A ring all-reduce of 4 bytes on 4 ranks: 2 x 3 steps of one byte from each rank.
    assert_eq!(r.flows.len(), 24);
    assert!(
        r.flows.iter().all(|f| f.size_bytes == 1),
        "{:?}",
        r.flows.iter().map(|f| f.size_bytes).collect::<Vec<_>>()
    );
    let after: Vec<f64> =
        r.computes.iter().filter(|c| c.duration.as_us_f64() == 2.0).map(|c| c.start.unwrap().as_us_f64()).collect();
    assert_eq!(after.len(), 4);
    // Nobody leaves the barrier before the late rank reached it, and every rank leaves within
    // the six one-byte steps of a ring (a few microseconds on this star) of it.
    assert!(after.iter().all(|&t| t > 30.0 && t < 45.0), "{after:?}");
}

#[test]
fn dependencies_and_transfers_must_have_their_other_end() {
    let mut ranks = example();
    ranks[0][3].data_deps.push(99);
    let e = refused(&ranks);
    assert!(e.message.contains("t.0.et: node 4: depends on node 99 (data_deps), which the file does not have"), "{e}");

    let mut ranks = example();
    ranks[2].remove(5); // rank 2's receive
    ranks[2][5].data_deps.clear();
    let e = refused(&ranks);
    assert!(e.message.contains("t.1.et: node 6: sends to rank 2 with tag 7"), "{e}");
    assert!(e.message.contains("has only 0 matching receives from rank 1"), "{e}");

    let mut ranks = example();
    ranks[2][5] = recv(6, 1, 2, 500_000, 8, &[5]); // another tag
    let e = refused(&ranks);
    assert!(e.message.contains("tag 7") && e.message.contains("add the COMM_RECV_NODE"), "{e}");
}

#[test]
fn the_members_of_a_collective_must_agree() {
    let mut ranks = example();
    ranks[3][2] = collective(3, Coll::AllReduce, 999_999, "", &[2]);
    let e = refused(&ranks);
    assert!(
        e.message.contains("t.0.et: node 3: the 1st collective of process group \"0\" is ALL_REDUCE of 1000000 bytes"),
        "{e}"
    );
    assert!(e.message.contains("t.3.et: node 3 (rank 3) makes it ALL_REDUCE of 999999 bytes"), "{e}");

    let mut ranks = example();
    ranks[1].push(collective(9, Coll::AllGather, 10, "1", &[]));
    let e = refused(&ranks);
    assert!(e.message.contains("t.1.et: node 9: is the 2nd collective of rank 1 on process group \"1\""), "{e}");
}

#[test]
fn process_groups_need_their_ranks() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &example());
    let text = common::star(4, "none", &format!("kind = \"chakra\"\ntrace = '{}'", dir.path().display()));
    let e = Scenario::from_toml(&text, "chakra.toml").err().unwrap();
    assert!(
        e.message.contains("t.0.et: node 5: runs on process group \"1\", whose ranks the trace does not give"),
        "{e}"
    );
    assert!(e.message.contains("workload.comm_groups"), "{e}");
}

#[test]
fn collectives_issued_in_crossed_orders_are_refused_as_a_deadlock() {
    // Groups "1" and "2" both hold ranks 0 and 1; rank 0 issues 1 then 2, rank 1 2 then 1.
    let a = |id, pg, deps: &[u64]| collective(id, Coll::AllReduce, 1000, pg, deps);
    let ranks = vec![vec![a(1, "1", &[]), a(2, "2", &[1])], vec![a(1, "2", &[]), a(2, "1", &[1])]];
    let dir = tempfile::tempdir().unwrap();
    write_trace(dir.path(), "t", &ranks).unwrap();
    std::fs::write(dir.path().join("groups.json"), "{\"1\": [0, 1], \"2\": [0, 1]}").unwrap();
    let e = load(dir.path(), 2).err().unwrap();
    assert!(e.message.contains("wait for each other and never start"), "{e}");
    assert!(
        e.message.contains(
            "t.0.et: node 2 (all_reduce on process group \"2\") waits for node 1 (all_reduce on process group \"1\")"
        ),
        "{e}"
    );
    assert!(
        e.message.contains(
            "t.1.et: node 2 (all_reduce on process group \"1\") waits for node 1 (all_reduce on process group \"2\")"
        ),
        "{e}"
    );
}

#[test]
fn written_back_the_trace_is_absolute_and_reads_again() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &example());
    std::fs::write(
        dir.path().join("s.toml"),
        common::star(4, "none", "kind = \"chakra\"\ntrace = \"t\"\ncomm_groups = \"groups.json\""),
    )
    .unwrap();
    let s = Scenario::load(&dir.path().join("s.toml")).unwrap();
    let w = toml::Table::try_from(s.workload.as_ref().unwrap()).unwrap();
    assert_eq!(w["trace"].as_str().unwrap(), dir.path().join("t").to_str().unwrap());
    assert_eq!(w["hosts"].as_str(), Some("all"));
    let again = Scenario::from_toml(&s.to_toml(), "again").unwrap();
    let (a, b) = (s.workload.as_ref().unwrap().as_kind().size(4), again.workload.as_ref().unwrap().as_kind().size(4));
    assert_eq!((a.flows, a.computes), (b.flows, b.computes));
}

#[test]
fn traces_converted_from_pytorch_can_leave_their_ctrl_deps_out() {
    // Chakra's PyTorch converter writes the calling operator in ctrl_deps (here node 3, the
    // process's root, which it leaves out of the file) and the execution order in data_deps;
    // the CPU-side call of a collective is a COMM_COLL_NODE marked is_cpu_op, without comm_type.
    use aiccsim::workload::chakra::schema::{AttributeProto, Value};
    let mut cpu_call = collective(11, Coll::AllReduce, 0, "", &[]);
    cpu_call.attr = vec![AttributeProto::new("is_cpu_op", Value::BoolVal(true))];
    cpu_call.duration_micros = 3;
    let rank = || {
        let mut nodes = vec![compute(10, 2, &[]), cpu_call.clone(), collective(12, Coll::AllReduce, 64_000, "", &[11])];
        nodes[1].data_deps = vec![10];
        nodes.push(compute(13, 4, &[12]));
        for n in &mut nodes {
            n.ctrl_deps = vec![3];
        }
        nodes
    };
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &[rank(), rank()]);
    let e = load(dir.path(), 2).err().unwrap();
    assert!(e.message.contains("t.0.et: node 10: depends on node 3 (ctrl_deps)"), "{e}");
    assert!(e.message.contains("set workload.ctrl_deps = \"ignore\""), "{e}");
    let s = Scenario::from_toml(&text(dir.path(), 2, "ctrl_deps = \"ignore\"\n"), "chakra.toml").unwrap();
    let r = aiccsim::run(&s).unwrap();
    // 2 us, the CPU call's 3 us, a two-rank ring all-reduce (2 steps of 2 flows), then 4 us.
    assert_eq!(r.flows.len(), 4);
    let durations: Vec<f64> = r.computes.iter().filter(|c| c.host == 0).map(|c| c.duration.as_us_f64()).collect();
    assert_eq!(
        durations,
        [2.0, 3.0, 0.0, 4.0],
        "the CPU call is a step of its duration; the all-reduce's end a step of none"
    );
    let reduced = r.flows.iter().filter_map(|f| f.finish).max().unwrap();
    let first_sent = r.flows.iter().map(|f| f.start).min().unwrap();
    assert_eq!(first_sent.as_us_f64(), 5.0);
    let last = r.computes.iter().max_by_key(|c| c.end).unwrap();
    assert!(last.start.unwrap() >= reduced && last.duration.as_us_f64() == 4.0);
}

#[test]
fn everything_waits_only_for_what_comes_before_it_in_the_lists() {
    // The engine's order: a flow waits for earlier flows, a step for earlier steps; the trace's
    // matching across ranks is made in one topological order so that this holds.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &example());
    let s = load(dir.path(), 4).unwrap();
    let kind = s.workload.as_ref().unwrap().as_kind();
    let made = kind.expand(4, 1);
    assert_eq!((made.flows.len() as u64, made.computes.len() as u64), (kind.size(4).flows, kind.size(4).computes));
    for (i, f) in made.flows.iter().enumerate() {
        assert!(f.after.iter().all(|&a| (a as usize) < i), "flow {i} waits for a later flow");
        assert!(f.after_compute.iter().all(|&c| (c as usize) < made.computes.len()));
    }
    for (i, c) in made.computes.iter().enumerate() {
        assert!(c.after_compute.iter().all(|&a| (a as usize) < i), "step {i} waits for a later step");
        assert!(c.after.iter().all(|&f| (f as usize) < made.flows.len()));
    }
}
