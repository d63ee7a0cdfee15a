//! The `parallel_training` workload against the formulas of an idle fabric: the pipeline
//! schedules' bubbles, the data-parallel bucket that the backward pass cannot hide, an expert
//! all-to-all at its own time, a straggler's pace passed on to its peers, and the same flows for
//! the same seed.

use crate::common;

use aiccsim::metrics::iterations::IterationRecord;
use aiccsim::time::SimTime;
use aiccsim::workload::parallel_training::{Dim, Layout};
use aiccsim::workload::{self, Workload};
use aiccsim::Results;

/// `hosts` hosts on one 100 Gbps switch of 100 ns links, no congestion control (an idle fabric
/// moves every flow at line rate), and a parallel training workload of `body`.
fn scenario(hosts: u32, body: &str) -> String {
    format!(
        r#"
[topology]
kind = "star"
hosts = {hosts}
link = {{ bandwidth = "100Gbps", delay = "100ns" }}
[cc]
algorithm = "none"
[workload]
kind = "parallel_training"
{body}
"#
    )
}

/// The same fabric running one workload of `body` alone: its completion time.
fn alone(hosts: u32, body: &str) -> SimTime {
    let toml = format!(
        "[topology]\nkind = \"star\"\nhosts = {hosts}\nlink = {{ bandwidth = \"100Gbps\", delay = \"100ns\" }}\n[cc]\nalgorithm = \"none\"\n[workload]\n{body}\n"
    );
    common::run(&toml).summary.completion_time_ns.unwrap()
}

fn rows(r: &Results) -> &[IterationRecord] {
    r.iterations.as_deref().expect("a parallel training run has iterations")
}

fn layout(toml: &str) -> (Workload, Layout) {
    let s = common::scenario(toml);
    let hosts = aiccsim::topology::Topology::build(&s.topology).unwrap().num_hosts;
    let mut w = workload::expand(s.workload.as_ref().unwrap(), hosts, s.simulation.seed);
    let layout = w.parallel_training.pop().unwrap();
    (w, layout)
}

/// Wire bytes per payload byte where every link carries data both ways: a 1000-byte packet
/// carries 48 bytes of headers, and the receiver's 60-byte ACK of it shares the reverse link
/// with the receiver's own data.
const WIRE: f64 = (1000.0 + 48.0 + 60.0) / 1000.0;

/// Microseconds to move `bytes` of payload through a 100 Gbps link that carries data both ways.
fn at_line_rate(bytes: f64) -> f64 {
    bytes * WIRE * 8.0 / 100e3
}

/// `a` is within `pct` percent of `b`.
fn near(a: f64, b: f64, pct: f64) -> bool {
    (a - b).abs() <= b.abs() * pct / 100.0
}

fn us(t: SimTime) -> f64 {
    t.as_us_f64()
}

/// `layers` compute-only layers of 100 us forward, 100 + 100 us backward: long enough that a
/// small send's latency (under a microsecond here) stays far below the 2% the tests allow.
fn compute_layers(layers: u32) -> String {
    format!("layers = [{{ forward = \"100us\", input_grad = \"100us\", weight_grad = \"100us\", repeat = {layers} }}]")
}

#[test]
fn one_f_one_b_and_gpipe_leave_the_bubble_p_minus_1_over_m_plus_p_minus_1() {
    for (p, m) in [(2u32, 4u32), (4, 8), (4, 16)] {
        for schedule in ["1f1b", "gpipe"] {
            for activations in ["0B", "1KB"] {
                let body = format!(
                    "iterations = 2\npp = {p}\nmicrobatches = {m}\nschedule = \"{schedule}\"\nactivation_bytes = \"{activations}\"\n{}",
                    compute_layers(p)
                );
                let r = common::run(&scenario(p, &body));
                // One layer per stage: f + b = 300 us; the whole pipeline (m + p - 1)(f + b).
                let expected = f64::from(m + p - 1) * 300.0;
                let bubble = f64::from(p - 1) / f64::from(m + p - 1);
                for row in rows(&r) {
                    let d = us(row.duration().unwrap());
                    assert!(
                        near(d, expected, 2.0),
                        "p {p} m {m} {schedule} {activations}: {d} us, expected {expected}"
                    );
                    assert_eq!(row.compute, SimTime::from_us(300 * u64::from(m)), "the busiest rank's compute");
                    let measured = us(row.exposed_comm().unwrap()) / d;
                    assert!((measured - bubble).abs() <= 0.02 * bubble, "bubble {measured}, expected {bubble}");
                    if activations == "0B" {
                        assert_eq!(d, expected, "without flows the pipeline is exact");
                    }
                }
                let sends = if activations == "0B" { 0 } else { 2 * m * (p - 1) * 2 };
                assert_eq!(r.flows.len() as u32, sends, "one send per microbatch, boundary and pass");
            }
        }
    }
}

#[test]
fn interleaving_divides_the_bubble_by_the_virtual_stages() {
    // 4 stages of 2 chunks of one layer: a stage's f + b is 600 us, the bubble (p - 1)(f + b) / v.
    let (p, m, v) = (4u32, 8u32, 2u32);
    let body = |schedule: &str, chunks: u32| {
        format!(
            "iterations = 1\npp = {p}\nmicrobatches = {m}\nschedule = \"{schedule}\"\nvirtual_stages = {chunks}\nactivation_bytes = \"1KB\"\n{}",
            compute_layers(p * v)
        )
    };
    let interleaved = common::run(&scenario(p, &body("interleaved_1f1b", v)));
    let plain = common::run(&scenario(p, &body("1f1b", 1)));
    let (fb, m_f) = (600.0, f64::from(m));
    let bubble = |r: &Results| us(rows(r)[0].exposed_comm().unwrap());
    assert!(near(bubble(&plain), f64::from(p - 1) * fb, 2.0), "1f1b bubble {}", bubble(&plain));
    let expected = f64::from(p - 1) * fb / f64::from(v);
    assert!(
        near(bubble(&interleaved), expected, 2.0),
        "interleaved bubble {}, expected {expected}",
        bubble(&interleaved)
    );
    // As a fraction of the ideal time, (p - 1) / (v m).
    let relative = bubble(&interleaved) / (m_f * fb);
    assert!(near(relative, f64::from(p - 1) / f64::from(v * m), 2.0), "{relative}");
    // Twice as many sends: each microbatch crosses p v - 1 boundaries each way.
    assert_eq!(interleaved.flows.len() as u32, 2 * m * (p * v - 1));
}

#[test]
fn only_the_last_gradient_bucket_is_exposed() {
    // Two data-parallel ranks, 4 layers of 100 KB of gradient. The backward pass takes 80 us;
    // a bucket's all-reduce of 200 KB takes ~17 us, so every bucket but the last is hidden,
    // and the iteration ends that last all-reduce after the backward pass.
    let grads = "layers = [{ forward = \"10us\", input_grad = \"10us\", weight_grad = \"10us\", grad_bytes = \"100KB\", repeat = 4 }]";
    for (bucket, last) in [("200KB", "200KB"), ("1B", "100KB"), ("1MB", "400KB")] {
        let body = format!("iterations = 1\ndp_bucket = \"{bucket}\"\n{grads}");
        let r = common::run(&scenario(2, &body));
        let row = &rows(&r)[0];
        assert_eq!(row.compute, SimTime::from_us(120));
        let exposed = us(row.exposed_comm().unwrap());
        let idle = us(alone(2, &format!("kind = \"all_reduce\"\nsize = \"{last}\"")));
        assert!(near(exposed, idle, 2.0), "bucket {bucket}: {exposed} us exposed, the last bucket alone {idle}");
        // The all-reduce of a 2-rank ring moves the buffer once over each link, at line rate
        // (and a microsecond of latency for its two steps).
        let bytes: f64 = last.trim_end_matches("KB").parse::<f64>().unwrap() * 1000.0;
        assert!((idle - at_line_rate(bytes)).abs() < 1.0, "{idle} us for {last}");
    }
    // ZeRO moves the same bytes (a reduce-scatter and an all-gather): the same exposure.
    let body = format!("iterations = 1\ndp_bucket = \"200KB\"\ndp_mode = \"zero\"\n{grads}");
    let zero = us(rows(&common::run(&scenario(2, &body)))[0].exposed_comm().unwrap());
    let idle = us(alone(2, "kind = \"all_reduce\"\nsize = \"200KB\""));
    assert!(near(zero, idle, 3.0), "zero: {zero} us, the all-reduce alone {idle}");
}

#[test]
fn the_next_iteration_waits_for_its_layers_buckets() {
    // One bucket per iteration, larger than the backward pass can hide: the second iteration's
    // first forward starts when its all-reduce is in.
    let body = "iterations = 2\ndp_bucket = \"10MB\"\nlayers = [{ forward = \"10us\", input_grad = \"10us\", weight_grad = \"10us\", grad_bytes = \"1MB\", repeat = 2 }]";
    let toml = scenario(2, body);
    let r = common::run(&toml);
    let (_, layout) = layout(&toml);
    let bucket = layout.collectives.iter().find(|c| c.dim == Dim::Dp && c.iteration == 0).unwrap();
    let done = r.flows[bucket.flows.clone().start as usize..bucket.flows.end as usize]
        .iter()
        .map(|f| f.finish.unwrap())
        .max()
        .unwrap();
    let second = rows(&r)[1].start.unwrap();
    assert!(second >= done && us(second - done) < 2.0, "iteration 1 starts at {second}, the bucket ends at {done}");
}

#[test]
fn an_expert_all_to_all_takes_its_formula_time() {
    // Four expert-parallel ranks, one mixture-of-experts layer: each pass dispatches and
    // combines, each rank sending 400 KB / 4 to each of the 3 others.
    let body = "iterations = 1\nep = 4\nlayers = [{ forward = \"10us\", input_grad = \"10us\", weight_grad = \"10us\", ep_bytes = \"400KB\" }]";
    let toml = scenario(4, body);
    let r = common::run(&toml);
    let (_, layout) = layout(&toml);
    let a2a: Vec<_> = layout.collectives.iter().filter(|c| c.dim == Dim::Ep).collect();
    assert_eq!(a2a.len(), 4, "dispatch and combine in each pass");
    let idle = us(alone(4, "kind = \"all_to_all\"\nsize = \"100KB\""));
    // (ep - 1) / ep of the tokens leave each rank at line rate.
    assert!((idle - at_line_rate(300e3)).abs() < 1.0, "{idle} us");
    let mut spans = 0.0;
    for c in &a2a {
        let flows = &r.flows[c.flows.start as usize..c.flows.end as usize];
        let span =
            flows.iter().map(|f| f.finish.unwrap()).max().unwrap() - flows.iter().map(|f| f.start).min().unwrap();
        assert!(near(us(span), idle, 2.0), "an all-to-all took {span}, alone {idle} us");
        spans += us(span);
    }
    // All four block the next step, but the weight-gradient compute (10 us) runs while the
    // backward pass's two are under way: the iteration is forward, the forward all-to-alls, the
    // input-gradient compute, the backward all-to-alls.
    let exposed = us(rows(&r)[0].exposed_comm().unwrap());
    assert!(near(exposed + 10.0, spans, 2.0), "exposed {exposed} us, all-to-alls {spans} us");
}

#[test]
fn a_straggler_sets_the_pace_of_its_data_and_pipeline_peers() {
    // 2 stages x 2 data-parallel ranks, GPipe, one layer per stage (f 10 us, b 20 us), m = 4.
    // Rank 0 (stage 0) computes 1.5 times slower. Stage 0's backwards are then the bottleneck:
    // an iteration is m s f + f + b + m s b; every rank, its data-parallel peer (rank 1) and
    // the stage after (ranks 2, 3) included, moves at that pace.
    let (m, s) = (4.0, 1.5);
    let common = "iterations = 3\npp = 2\nmicrobatches = 4\nschedule = \"gpipe\"\ndp_bucket = \"1B\"\nlayers = [{ forward = \"10us\", input_grad = \"10us\", weight_grad = \"10us\", grad_bytes = \"2B\", repeat = 2 }]";
    let slow = format!("{common}\nstragglers = [{{ ranks = [0], slowdown = {s} }}]");
    let toml = scenario(4, &slow);
    let r = common::run(&toml);
    let expected = m * s * 10.0 + 10.0 + 20.0 + m * s * 20.0;
    for row in rows(&r) {
        let d = us(row.duration().unwrap());
        assert!(near(d, expected, 2.0), "iteration {}: {d} us, expected {expected}", row.iteration);
        assert_eq!(row.compute, SimTime::from_us((m * s * 30.0) as u64), "the straggler's compute");
    }
    // Each rank's own period: from its first step of iteration 1 to that of iteration 2.
    let (_, layout) = layout(&toml);
    for rank in 0..4 {
        let start = |k| r.computes[layout.first_step(k, rank) as usize].start.unwrap();
        let period = us(start(2) - start(1));
        assert!(near(period, expected, 2.0), "rank {rank} repeats every {period} us, expected {expected}");
    }
    // Without it: (m + 1)(f + b).
    let even = common::run(&scenario(4, common));
    assert!(near(us(rows(&even)[1].duration().unwrap()), (m + 1.0) * 30.0, 2.0));
}

#[test]
fn the_same_seed_makes_the_same_flows_and_steps() {
    let body = "iterations = 2\ntp = 2\npp = 2\nmicrobatches = 4\njitter = 0.1\nactivation_bytes = \"8KB\"\ndp_bucket = \"16KB\"\nlayers = [{ forward = \"10us\", input_grad = \"10us\", weight_grad = \"10us\", tp_bytes = \"8KB\", grad_bytes = \"10KB\", repeat = 4 }]";
    let toml = scenario(8, body);
    let (a, la) = layout(&toml);
    let (b, lb) = layout(&toml);
    assert_eq!((a.flows, a.computes), (b.flows.clone(), b.computes.clone()));
    assert_eq!(la, lb);
    // Another seed draws other compute factors, within [0.9, 1.1] of 10 us.
    let s = common::scenario(&toml);
    let other = workload::expand(s.workload.as_ref().unwrap(), 8, s.simulation.seed + 1);
    assert_eq!(other.flows, b.flows, "the flows do not draw");
    assert_ne!(other.computes, b.computes);
    let durations: Vec<f64> = other.computes.iter().map(|c| us(c.duration)).collect();
    assert!(durations.iter().all(|&d| (9.0..=11.0).contains(&d)));
    assert!(durations.windows(2).any(|w| w[0] != w[1]));
    // And two runs give the same results.
    let (x, y) = (common::run(&toml), common::run(&toml));
    assert_eq!(rows(&x), rows(&y));
}

#[test]
fn a_tensor_parallel_group_across_gpu_servers_is_warned_about() {
    let warned = |per_server: u32, tp: u32| {
        let toml = scenario(8, &format!("iterations = 1\ntp = {tp}\n{}", compute_layers(1)))
            .replace("hosts = 8\n", &format!("hosts = 8\nnics_per_server = {per_server}\n"));
        let sim = aiccsim::Simulation::new(&common::scenario(&toml)).unwrap_or_else(|e| panic!("{e}"));
        sim.warnings().iter().any(|w| w.key == "workload.tp")
    };
    assert!(warned(2, 4), "a group of 4 over servers of 2");
    assert!(!warned(4, 4) && !warned(8, 2), "groups inside a server");
    assert!(!warned(1, 4), "a fabric without GPU servers has no NVLink to prefer");
}
