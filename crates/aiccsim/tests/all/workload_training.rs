//! The `training` workload: compute steps and collectives wait for each other as a training
//! loop does, and `iterations.csv` splits each iteration into compute and exposed communication.

use crate::common;

use aiccsim::metrics::iterations::IterationRecord;
use aiccsim::time::SimTime;
use aiccsim::workload::training::{Layout, Op, Phase};
use aiccsim::Results;

/// `ranks` hosts on one 100 Gbps switch, DCQCN, and a training workload with these layers.
fn training(ranks: u32, iterations: u32, layers: &[&str], extra: &str) -> String {
    let layers: String = layers.iter().map(|l| format!("[[workload.layers]]\n{l}\n")).collect();
    format!(
        r#"
{extra}
[topology]
kind = "star"
hosts = {ranks}
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[workload]
kind = "training"
iterations = {iterations}
{layers}"#
    )
}

/// The same fabric running one collective on its own; its completion time.
fn alone(ranks: u32, workload: &str) -> SimTime {
    let toml = format!(
        "[topology]\nkind = \"star\"\nhosts = {ranks}\nlink = {{ bandwidth = \"100Gbps\", delay = \"1us\" }}\n[workload]\n{workload}\n"
    );
    common::run(&toml).summary.completion_time_ns.unwrap()
}

fn rows(r: &Results) -> &[IterationRecord] {
    r.iterations.as_deref().expect("a training run has iterations")
}

fn exposed(r: &Results, k: usize) -> SimTime {
    rows(r)[k].exposed_comm().expect("the iteration finished")
}

fn layout(toml: &str) -> (aiccsim::workload::Workload, Layout) {
    let s = common::scenario(toml);
    let hosts = aiccsim::topology::Topology::build(&s.topology).unwrap().num_hosts;
    let mut w = aiccsim::workload::expand(s.workload.as_ref().unwrap(), hosts, 1);
    let layout = w.training.pop().unwrap();
    (w, layout)
}

/// The span of the collective of `op` on `layer` in `iteration`: first flow start to last delivery.
fn span(r: &Results, layout: &Layout, iteration: u32, layer: u32, op: Op) -> SimTime {
    let c = layout.collectives.iter().find(|c| (c.iteration, c.layer, c.op) == (iteration, layer, op)).unwrap();
    let flows = &r.flows[c.flows.start as usize..c.flows.end as usize];
    let start = flows.iter().map(|f| f.start).min().unwrap();
    flows.iter().map(|f| f.finish.unwrap()).max().unwrap() - start
}

const US: u64 = 1_000_000;

#[test]
fn without_communication_an_iteration_is_its_compute_exactly() {
    let layers = [
        "forward = \"3us\"\nbackward = \"5us\"",
        "forward = \"7.5us\"\ninput_grad = \"2us\"\nweight_grad = \"4us\"",
        "forward = \"1us\"\nbackward = \"0us\"",
    ];
    let none = common::run(&training(4, 3, &layers, ""));
    let compute = SimTime::from_ps(22_500_000);
    assert_eq!((none.flows.len(), none.summary.flows), (0, 0));
    for (k, row) in rows(&none).iter().enumerate() {
        let k = k as u64;
        assert_eq!((row.start, row.end), (Some(SimTime(k * compute.0)), Some(SimTime((k + 1) * compute.0))));
        assert_eq!((row.compute, row.exposed_comm(), row.flows, row.bytes), (compute, Some(SimTime::ZERO), 0, 0));
    }
    let summary = none.summary.iterations.as_ref().unwrap();
    assert_eq!((summary.count, summary.finished, summary.mean_exposed_comm_ns), (3, 3, Some(SimTime::ZERO)));
    assert_eq!(none.summary.simulated_time_ns, SimTime::from_ns(3 * 22_500));

    // Collectives of zero bytes are not issued: the same iterations.
    let zero = "all_reduce = { size = \"0B\" }\nforward_all_to_all = { size = \"0B\" }\nbackward_all_to_all = { size = \"0B\" }";
    let layers: Vec<String> = layers.iter().map(|l| format!("{l}\n{zero}")).collect();
    let layers: Vec<&str> = layers.iter().map(String::as_str).collect();
    let zeros = common::run(&training(4, 3, &layers, ""));
    assert_eq!(zeros.flows.len(), 0);
    assert_eq!(rows(&zeros), rows(&none));
}

#[test]
fn iterations_start_at_the_workload_start() {
    let toml = training(6, 2, &["forward = \"10us\"\nbackward = \"10us\""], "")
        .replace("iterations = 2", "iterations = 2\nhosts = [5, 1, 3]\nstart = \"7us\"");
    let r = common::run(&toml);
    assert_eq!(rows(&r)[0].start, Some(SimTime::from_us(7)));
    assert_eq!(rows(&r)[1].end, Some(SimTime::from_us(47)));
    let hosts: Vec<u32> = r.computes.iter().map(|c| c.host).collect();
    assert_eq!(&hosts[..6], &[5, 1, 3, 5, 1, 3]);
}

#[test]
fn a_blocking_all_to_all_adds_its_whole_duration() {
    let layers = [
        "forward = \"10us\"\nbackward = \"20us\"\nforward_all_to_all = { size = \"200KB\" }",
        "forward = \"5us\"\nbackward = \"5us\"",
    ];
    let toml = training(4, 2, &layers, "");
    let r = common::run(&toml);
    let (_, layout) = layout(&toml);
    // Every rank starts the all-to-all after the same 10 us and waits for all of it, so the
    // first iteration is its compute plus the all-to-all's span.
    let a2a = span(&r, &layout, 0, 0, Op::ForwardAllToAll);
    assert_eq!(exposed(&r, 0), a2a);
    assert_eq!(r.iterations.as_ref().unwrap()[0].compute, SimTime::from_us(40));
    // ... which is the time the same all-to-all takes on an idle fabric.
    let idle = alone(4, "kind = \"all_to_all\"\nsize = \"200KB\"");
    assert!(a2a.0.abs_diff(idle.0) * 1000 <= idle.0, "{a2a} in training, {idle} alone");
    assert!(a2a > SimTime::from_us(40), "the all-to-all is not negligible: {a2a}");
    // Ranks enter the second iteration as their own all-to-all data arrives, a little apart.
    assert!(exposed(&r, 1) <= span(&r, &layout, 1, 0, Op::ForwardAllToAll));
}

#[test]
fn a_backward_all_to_all_blocks_the_layer_below_but_overlaps_its_own_weight_gradient() {
    // Layer 1's input gradient goes out in an all-to-all while its weight gradient is computed
    // (`weight_grad`); layer 0's backward waits for it.
    let run = |weight_grad: &str| {
        let top = format!(
            "forward = \"5us\"\ninput_grad = \"5us\"\nweight_grad = \"{weight_grad}\"\nbackward_all_to_all = {{ size = \"200KB\" }}"
        );
        let toml = training(4, 1, &["forward = \"5us\"\nbackward = \"5us\"", &top], "");
        let r = common::run(&toml);
        let a2a = span(&r, &layout(&toml).1, 0, 1, Op::BackwardAllToAll);
        (exposed(&r, 0), a2a)
    };
    let (short, a2a) = run("10us");
    assert_eq!(short, a2a - SimTime::from_us(10));
    let (long, a2a) = run("200us");
    assert!(a2a < SimTime::from_us(200));
    assert_eq!(long, SimTime::ZERO);
}

#[test]
fn an_all_reduce_hidden_behind_the_backward_pass_costs_nothing() {
    // Layer 1's weight gradients (400 KB) are reduced while layer 0's 300 us backward runs.
    let layers = [
        "forward = \"10us\"\nbackward = \"300us\"",
        "forward = \"10us\"\nbackward = \"10us\"\nall_reduce = { size = \"400KB\" }",
    ];
    let toml = training(4, 3, &layers, "");
    let r = common::run(&toml);
    let (_, layout) = layout(&toml);
    for k in 0..3 {
        assert!(span(&r, &layout, k, 1, Op::AllReduce) < SimTime::from_us(300));
        assert_eq!(exposed(&r, k as usize), SimTime::ZERO, "iteration {k}");
    }
    assert_eq!(r.summary.iterations.as_ref().unwrap().mean_duration_ns, Some(SimTime::from_ns(330_000)));
}

#[test]
fn an_all_reduce_longer_than_the_rest_of_the_backward_pass_is_exposed_by_the_difference() {
    let layers = [
        "forward = \"15us\"\nbackward = \"20us\"",
        "forward = \"10us\"\nbackward = \"10us\"\nall_reduce = { size = \"2MB\" }",
    ];
    let idle = alone(4, "kind = \"all_reduce\"\nsize = \"2MB\"");
    assert!(idle > SimTime::from_us(200), "{idle}");
    let near = |got: SimTime, want: u64| {
        assert!(got.0.abs_diff(want) * 200 <= want, "exposed {got}, expected {}", SimTime(want));
    };

    // One iteration: the all-reduce starts when layer 1's backward ends and overlaps layer 0's
    // 20 us backward; the rest of it is exposed.
    let toml = training(4, 1, &layers, "");
    let one = common::run(&toml);
    let (_, layout) = layout(&toml);
    assert_eq!(exposed(&one, 0), span(&one, &layout, 0, 1, Op::AllReduce) - SimTime::from_us(20));
    near(exposed(&one, 0), idle.0 - 20 * US);

    // Two: the first all-reduce also overlaps the next iteration's layer-0 forward (15 us), then
    // layer 1's forward waits for the rest of it, in the second iteration, whose own all-reduce
    // is exposed as above. Nothing holds back the first iteration's end.
    let two = common::run(&training(4, 2, &layers, ""));
    assert_eq!(exposed(&two, 0), SimTime::ZERO);
    near(exposed(&two, 1), (idle.0 - 35 * US) + (idle.0 - 20 * US));
}

/// A model with every kind of communication and dependency: both all-to-all algorithms, both
/// all-reduce algorithms, a split backward.
const MIXED: [&str; 3] = [
    "forward = \"10us\"\nbackward = \"10us\"\nforward_all_to_all = { size = \"64KB\" }\nbackward_all_to_all = { size = \"32KB\", algorithm = \"pairwise\" }",
    "forward = \"20us\"\ninput_grad = \"20us\"\nweight_grad = \"20us\"\nbackward_all_to_all = { size = \"64KB\" }\nall_reduce = { size = \"1MB\", algorithm = \"direct\" }",
    "forward = \"20us\"\ninput_grad = \"5us\"\nweight_grad = \"30us\"\nall_reduce = { size = \"300KB\" }",
];

#[test]
fn every_step_and_flow_starts_when_the_last_thing_it_waits_for_is_done() {
    let toml = training(5, 3, &MIXED, "");
    let r = common::run(&toml);
    let (work, layout) = layout(&toml);
    let done_flows = |ids: &[u32]| ids.iter().map(|&f| r.flows[f as usize].finish.unwrap()).max();
    let done_steps = |ids: &[u32]| ids.iter().map(|&c| r.computes[c as usize].end.unwrap()).max();
    for (c, def) in work.computes.iter().enumerate() {
        let ready = [Some(def.start), done_flows(&def.after), done_steps(&def.after_compute)];
        let step = &r.computes[c];
        assert_eq!(step.start, ready.into_iter().flatten().max(), "step {c}");
        assert_eq!(step.end, Some(step.start.unwrap() + def.duration), "step {c}");
    }
    for (f, def) in work.flows.iter().enumerate() {
        assert_eq!(def.after_compute.len(), 1, "flow {f} is issued by its sender's step");
        let ready = done_steps(&def.after_compute).max(done_flows(&def.after));
        assert_eq!(Some(r.flows[f].start), ready, "flow {f}");
    }
    // In particular a layer's forward compute comes after its all-reduce of the iteration
    // before has brought the rank everything.
    for c in layout.collectives.iter().filter(|c| c.op == Op::AllReduce && c.iteration < 2) {
        for (rank, &host) in layout.ranks.iter().enumerate() {
            let into = r.flows[c.flows.start as usize..c.flows.end as usize].iter().filter(|f| f.dst == host);
            let reduced = into.map(|f| f.finish.unwrap()).max().unwrap();
            let next = layout.compute_id(c.iteration + 1, c.layer, Phase::Forward, rank);
            assert!(r.computes[next as usize].start.unwrap() >= reduced);
        }
    }
    // And iterations start no earlier than the one before could have ended.
    for pair in rows(&r).windows(2) {
        assert_eq!(pair[0].end, pair[1].start);
        assert!(pair[0].duration().unwrap() >= pair[0].compute);
    }
}

#[test]
fn every_byte_of_every_iteration_is_delivered() {
    let r = common::run(&training(5, 3, &MIXED, "")); // (`run` checks the byte ledger)
                                                      // Per iteration: all-to-alls of n(n-1) x size, all-reduces of 2(n-1) x size.
    let per_iteration = 20 * (64_000 + 32_000 + 64_000) + 8 * (1_000_000 + 300_000);
    for row in rows(&r) {
        assert_eq!(row.bytes, per_iteration);
        assert_eq!(row.flows, 3 * 20 + 40 + 40);
    }
    assert_eq!(r.summary.bytes, 3 * per_iteration);
}

#[test]
fn same_scenario_same_iterations_file() {
    let toml = training(5, 2, &MIXED, "[simulation]\nseed = 3");
    let files: Vec<(Vec<u8>, serde_json::Value)> = (0..2)
        .map(|_| {
            let r = common::run(&toml);
            let dir = tempfile::tempdir().unwrap();
            r.write_dir(dir.path()).unwrap();
            (std::fs::read(dir.path().join("iterations.csv")).unwrap(), r.deterministic_summary())
        })
        .collect();
    assert_eq!(files[0], files[1]);
    let text = String::from_utf8(files[0].0.clone()).unwrap();
    assert!(
        text.starts_with("job,iteration,start_ns,end_ns,duration_ns,compute_ns,exposed_comm_ns,flows,bytes,rank,bubble_ns,exposed_tp_ns,exposed_pp_ns,exposed_dp_ns,exposed_ep_ns,exposed_other_ns\n,0,0.000,")
    );
    assert_eq!(text.lines().count(), 3);
}

#[test]
fn a_stopped_run_leaves_its_unfinished_iterations_without_an_end() {
    // Iterations of 40 us compute; stop in the middle of the second.
    let toml = training(4, 3, &["forward = \"20us\"\nbackward = \"20us\""], "[simulation]\nstop_time = \"60us\"");
    let r = aiccsim::run(&common::scenario(&toml)).unwrap();
    let rows = rows(&r);
    assert_eq!((rows[0].start, rows[0].end), (Some(SimTime::ZERO), Some(SimTime::from_us(40))));
    assert_eq!((rows[1].start, rows[1].end, rows[1].exposed_comm()), (Some(SimTime::from_us(40)), None, None));
    assert_eq!((rows[2].start, rows[2].end), (None, None));
    let summary = r.summary.iterations.as_ref().unwrap();
    assert_eq!((summary.count, summary.finished, summary.mean_duration_ns), (3, 1, Some(SimTime::from_ns(40_000))));
    assert!(r.summary.partial);
    let dir = tempfile::tempdir().unwrap();
    r.write_dir(dir.path()).unwrap();
    let text = std::fs::read_to_string(dir.path().join("iterations.csv")).unwrap();
    // Iteration 0 is all compute; the unfinished ones have no split.
    assert_eq!(
        text.lines().nth(1),
        Some(",0,0.000,40000.000,40000.000,40000.000,0.000,0,0,0,0.000,0.000,0.000,0.000,0.000,0.000")
    );
    assert_eq!(text.lines().nth(2), Some(",1,40000.000,,,40000.000,,0,0,,,,,,,"));
    assert_eq!(text.lines().nth(3), Some(",2,,,,40000.000,,0,0,,,,,,,"));
}

#[test]
fn other_workloads_have_no_iterations() {
    let r = common::run(&common::incast(2, "10KB", "dcqcn", ""));
    assert!(r.iterations.is_none() && r.summary.iterations.is_none() && r.computes.is_empty());
    let dir = tempfile::tempdir().unwrap();
    r.write_dir(dir.path()).unwrap();
    assert!(!dir.path().join("iterations.csv").exists());
    assert!(r.deterministic_summary().get("iterations").is_none());
}

#[test]
fn the_example_runs_quickly() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/training.toml");
    let r = common::run(&std::fs::read_to_string(path).unwrap());
    assert!(r.summary.performance.wall_seconds < 1.0);
    let rows = rows(&r);
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|i| i.exposed_comm().unwrap() > SimTime::ZERO));
}

#[test]
fn group_collectives_stay_in_their_groups_and_take_their_lone_time() {
    // 8 ranks: tensor groups of 2, expert groups of 2 data-parallel ranks (Megatron order).
    let layer = "forward = \"10us\"\ninput_grad = \"5us\"\nweight_grad = \"30us\"\n\
        forward_comm = { op = \"all_gather\", size = \"200KB\" }\n\
        input_grad_comm = { op = \"all_to_all\", size = \"400KB\", group = \"ep\" }\n\
        weight_grad_comm = { op = \"reduce_scatter\", size = \"300KB\", group = \"dp_ep\" }";
    let toml = training(8, 1, &[layer], "").replace("iterations = 1", "iterations = 1\ntp = 2\nep = 2");
    let r = common::run(&toml);
    let (_, layout) = layout(&toml);
    let (tp_index, dp_index) = (|h: u32| h % 2, |h: u32| h / 2);
    type SameGroup<'a> = &'a dyn Fn(u32, u32) -> bool;
    let same_group: [(Op, SameGroup, usize); 3] = [
        (Op::ForwardComm, &|s, d| dp_index(s) == dp_index(d), 4),
        (Op::InputGradComm, &|s, d| tp_index(s) == tp_index(d) && dp_index(s) / 2 == dp_index(d) / 2, 4),
        (Op::WeightGradComm, &|s, d| tp_index(s) == tp_index(d) && dp_index(s) % 2 == dp_index(d) % 2, 4),
    ];
    for (op, inside, groups) in same_group {
        let issued: Vec<_> = layout.collectives.iter().filter(|c| c.op == op).collect();
        assert_eq!(issued.len(), groups, "{op:?}: one collective per group");
        for c in issued {
            for f in &r.flows[c.flows.start as usize..c.flows.end as usize] {
                assert!(inside(f.src, f.dst), "{op:?}: flow {} -> {} leaves its group", f.src, f.dst);
            }
        }
    }
    // The groups of a dimension use disjoint NICs of a non-blocking switch, and the weight-gradient
    // compute outlasts the all-to-all: each collective takes what it takes alone.
    let ag = alone(2, "kind = \"all_gather\"\nsize = \"200KB\"");
    let a2a = alone(2, "kind = \"all_to_all\"\nsize = \"200KB\"");
    let rs = alone(2, "kind = \"reduce_scatter\"\nsize = \"300KB\"");
    for (op, lone) in [(Op::ForwardComm, ag), (Op::InputGradComm, a2a), (Op::WeightGradComm, rs)] {
        for c in layout.collectives.iter().filter(|c| c.op == op) {
            let flows = &r.flows[c.flows.start as usize..c.flows.end as usize];
            let start = flows.iter().map(|f| f.start).min().unwrap();
            let took = (flows.iter().map(|f| f.finish.unwrap()).max().unwrap() - start).0 as f64;
            assert!(
                (took / lone.0 as f64 - 1.0).abs() < 0.01,
                "{op:?} (id {}): {took} ps against {lone:?} alone",
                c.id
            );
        }
    }
    // The forward all-gather blocks the input-gradient compute; the all-to-all after it runs
    // under the weight-gradient compute; the reduce-scatter is the last iteration's tail.
    let row = &rows(&r)[0];
    assert_eq!(row.compute, SimTime::from_us(45));
    assert!(a2a < SimTime::from_us(30));
    let exposed = row.exposed_comm().unwrap().0 as f64;
    let blocking = (ag.0 + rs.0) as f64;
    assert!((exposed / blocking - 1.0).abs() < 0.02, "exposed {exposed} ps, expected about {blocking}");
}
