//! `iterations.csv`'s split of each iteration by what held its critical rank up: the pipeline
//! bubble and the exposed communication of each parallel dimension, against the formulas of an
//! idle fabric, and the identity the columns satisfy on a mix of every dimension.

use crate::common;

use aiccsim::metrics::iterations::IterationRecord;
use aiccsim::metrics::split::Dimension;
use aiccsim::time::SimTime;
use aiccsim::Results;

const DIMENSIONS: [Dimension; 5] = [Dimension::Tp, Dimension::Pp, Dimension::Dp, Dimension::Ep, Dimension::Other];

/// `hosts` hosts on one 100 Gbps switch of 100 ns links, no congestion control, and a workload
/// of `kind` with `body`.
fn scenario(hosts: u32, kind: &str, body: &str) -> String {
    format!(
        "[topology]\nkind = \"star\"\nhosts = {hosts}\nlink = {{ bandwidth = \"100Gbps\", delay = \"100ns\" }}\n\
         [cc]\nalgorithm = \"none\"\n[workload]\nkind = \"{kind}\"\n{body}\n"
    )
}

fn rows(r: &Results) -> &[IterationRecord] {
    r.iterations.as_deref().expect("a training run has iterations")
}

fn exposed(row: &IterationRecord, d: Dimension) -> SimTime {
    row.exposed(d).expect("a finished iteration is split")
}

/// The critical rank's compute, the bubble and the exposed columns add up to the duration,
/// exactly; and the critical path's waits are the bubble and exposed time, in time order.
fn assert_identity(row: &IterationRecord) {
    let split = row.split.as_ref().expect("a finished iteration is split");
    let parts = DIMENSIONS.iter().fold(split.compute + split.bubble, |sum, &d| sum + exposed(row, d));
    assert_eq!(parts, row.duration().unwrap(), "iteration {}: {split:?}", row.iteration);
    assert!(split.compute <= row.duration().unwrap());
    assert!(split.path.windows(2).all(|w| w[0].to_ns <= w[1].from_ns), "time order");
    if split.path.len() < aiccsim::metrics::split::MAX_PATH {
        let waited = split.path.iter().fold(SimTime::ZERO, |sum, w| sum + w.wait_ns);
        assert_eq!(waited + split.compute, row.duration().unwrap(), "every wait is on the path");
    }
}

fn us(t: SimTime) -> f64 {
    t.as_us_f64()
}

#[test]
fn one_f_one_b_on_an_idle_fabric_is_all_bubble() {
    // One layer per stage, f = 100 us, b = 200 us: the bubble is (p - 1)(f + b) on every rank,
    // and the 1 KB sends between stages take under a microsecond.
    for (p, m) in [(2u32, 4u32), (4, 8), (4, 3)] {
        let body = format!(
            "iterations = 3\npp = {p}\nmicrobatches = {m}\nactivation_bytes = \"1KB\"\n\
             layers = [{{ forward = \"100us\", input_grad = \"100us\", weight_grad = \"100us\", repeat = {p} }}]"
        );
        let r = common::run(&scenario(p, "parallel_training", &body));
        let expected = f64::from(p - 1) * 300.0;
        for row in rows(&r) {
            assert_identity(row);
            let bubble = us(row.bubble().unwrap());
            assert!(
                (bubble - expected).abs() <= 0.02 * expected,
                "p {p} m {m}: bubble {bubble} us, expected {expected}"
            );
            let sends = us(exposed(row, Dimension::Pp));
            assert!(sends > 0.0 && sends < 0.01 * expected, "p {p} m {m}: {sends} us of sends exposed");
            for d in [Dimension::Tp, Dimension::Dp, Dimension::Ep, Dimension::Other] {
                assert_eq!(exposed(row, d), SimTime::ZERO, "{d:?}");
            }
            assert_eq!(row.split.as_ref().unwrap().compute, SimTime::from_us(300 * u64::from(m)));
        }
        // Between iterations the first stage ends one and starts the next: it is the critical
        // rank; the last iteration ends with the first stage's last backward too.
        assert!(rows(&r).iter().all(|row| row.rank() == Some(0)), "p {p} m {m}");
    }
}

#[test]
fn without_a_pipeline_only_the_last_gradient_bucket_is_exposed_data_parallel() {
    // Two data-parallel ranks, 4 layers of 100 KB of gradient, a bucket per 200 KB: the backward
    // pass hides every bucket but the last, which is all of the exposed communication.
    let body = "iterations = 2\ndp_bucket = \"200KB\"\n\
        layers = [{ forward = \"10us\", input_grad = \"10us\", weight_grad = \"10us\", grad_bytes = \"100KB\", repeat = 4 }]";
    let r = common::run(&scenario(2, "parallel_training", body));
    let lone = common::run(&scenario(2, "all_reduce", "size = \"200KB\"")).summary.completion_time_ns.unwrap();
    for row in rows(&r) {
        assert_identity(row);
        let dp = exposed(row, Dimension::Dp);
        assert!((us(dp) / us(lone) - 1.0).abs() < 0.02, "exposed dp {dp:?}, the last bucket alone {lone:?}");
        assert_eq!(dp, row.exposed_comm().unwrap(), "all of the exposed communication");
        assert_eq!(row.bubble(), Some(SimTime::ZERO));
        let path = &row.split.as_ref().unwrap().path;
        assert_eq!(path.len(), 1, "{path:?}");
        assert_eq!((path[0].dimension, path[0].released_by.starts_with("all_reduce:")), ("dp", true));
    }
}

#[test]
fn a_blocking_tensor_parallel_collective_is_exposed_tensor_parallel() {
    // `training`: 4 ranks in tensor groups of 2; a forward all-gather blocks the next step,
    // and nothing overlaps it: its lone time is the tensor-parallel exposure of each iteration.
    let layer = "[[workload.layers]]\nforward = \"10us\"\nbackward = \"20us\"\n\
        forward_comm = { op = \"all_gather\", size = \"200KB\" }";
    let body = format!("iterations = 2\ntp = 2\n{layer}");
    let r = common::run(&scenario(4, "training", &body));
    let lone = common::run(&scenario(2, "all_gather", "size = \"200KB\"")).summary.completion_time_ns.unwrap();
    for row in rows(&r) {
        assert_identity(row);
        let tp = exposed(row, Dimension::Tp);
        assert!((us(tp) / us(lone) - 1.0).abs() < 0.01, "exposed tp {tp:?}, the all-gather alone {lone:?}");
        assert_eq!(row.exposed_comm(), Some(tp));
        assert_eq!(row.split.as_ref().unwrap().compute, SimTime::from_us(30));
    }
    // A layer all-reduce is data parallel, a whole-run all-to-all "other".
    let layer = "[[workload.layers]]\nforward = \"10us\"\nbackward = \"20us\"\nall_reduce = { size = \"1MB\" }\n\
        forward_all_to_all = { size = \"100KB\" }";
    let r = common::run(&scenario(4, "training", &format!("iterations = 1\n{layer}")));
    let row = &rows(&r)[0];
    assert_identity(row);
    assert!(exposed(row, Dimension::Dp) > SimTime::from_us(10) && exposed(row, Dimension::Other) > SimTime::from_us(1));
    assert_eq!(exposed(row, Dimension::Tp) + exposed(row, Dimension::Ep) + exposed(row, Dimension::Pp), SimTime::ZERO);
}

#[test]
fn the_columns_add_up_on_a_mix_of_every_dimension() {
    // 16 ranks: tp 2 x pp 2 x dp 4 with ep 2, interleaved, jitter and a straggler, a shared
    // switch with DCQCN: every dimension's communication contends.
    let body = "iterations = 3\ntp = 2\npp = 2\nep = 2\nmicrobatches = 4\nschedule = \"interleaved_1f1b\"\n\
        virtual_stages = 2\nactivation_bytes = \"30KB\"\ndp_bucket = \"50KB\"\njitter = 0.2\n\
        stragglers = [{ ranks = [5], slowdown = 1.3 }]\n\
        layers = [\n  { forward = \"6us\", input_grad = \"6us\", weight_grad = \"5us\", tp_bytes = \"20KB\", grad_bytes = \"40KB\", repeat = 2 },\n\
          { forward = \"4us\", input_grad = \"5us\", weight_grad = \"3us\", tp_bytes = \"10KB\", ep_bytes = \"60KB\", grad_bytes = \"30KB\", repeat = 2 },\n]";
    let toml = scenario(16, "parallel_training", body).replace("algorithm = \"none\"", "algorithm = \"dcqcn\"");
    let r = common::run(&toml);
    let mut seen = [false; 5];
    for row in rows(&r) {
        assert_identity(row);
        for (i, &d) in DIMENSIONS.iter().enumerate() {
            seen[i] |= exposed(row, d) > SimTime::ZERO;
        }
        assert!(r.computes.iter().any(|c| Some(c.host) == row.rank()), "the critical rank is a rank");
    }
    assert!(seen[..4].iter().all(|&s| s), "tp, pp, dp and ep each exposed somewhere: {seen:?}");
    // summary.json's slowest iteration is the longest row, with the same numbers.
    let slowest = r.summary.iterations.as_ref().unwrap().slowest.as_ref().unwrap();
    let longest = rows(&r).iter().map(|row| row.duration().unwrap()).max().unwrap();
    let row = &rows(&r)[slowest.iteration as usize];
    assert_eq!((slowest.duration_ns, Some(slowest.rank)), (longest, row.rank()));
    assert_eq!((Some(slowest.bubble_ns), slowest.exposed_ep_ns), (row.bubble(), exposed(row, Dimension::Ep)));
    assert_eq!(slowest.critical_path, row.split.as_ref().unwrap().path);
}
