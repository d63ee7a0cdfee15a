//! Jobs sharing a fabric: each on its own ranks, apart where the fabric keeps them apart and
//! sharing fairly where they meet; a job's sequence runs in order per rank; placement rules
//! and the job's results.

use crate::common;

use aiccsim::metrics::jain_index;
use aiccsim::time::SimTime;
use aiccsim::Results;

/// The completion time (ns) of every collective of `r`, in order.
fn ccts(r: &Results) -> Vec<f64> {
    r.collectives.iter().map(|c| c.cct().expect("finished").as_ns_f64()).collect()
}

/// A ring all-reduce of 4 MB with `cc` on `topology`, as one job per entry of `jobs` (its hosts).
fn all_reduces(topology: &str, cc: &str, jobs: &[&str]) -> Results {
    let mut toml = format!("{topology}\n[cc]\nalgorithm = \"{cc}\"\n");
    for (i, hosts) in jobs.iter().enumerate() {
        toml += &format!(
            "[[jobs]]\nname = \"j{i}\"\nhosts = {hosts}\n[jobs.workload]\nkind = \"all_reduce\"\nsize = \"4MB\"\n"
        );
    }
    common::run(&toml)
}

const STAR: &str = "[topology]\nkind = \"star\"\nhosts = 8\nlink = { bandwidth = \"100Gbps\", delay = \"1us\" }";

#[test]
fn jobs_on_disjoint_hosts_of_a_non_blocking_switch_run_as_if_alone() {
    let alone = ccts(&all_reduces(STAR, "dcqcn", &["[0, 1, 2, 3]"]))[0];
    let together = all_reduces(STAR, "dcqcn", &["[0, 1, 2, 3]", "[4, 5, 6, 7]"]);
    common::assert_conserved(&together);
    let both = ccts(&together);
    assert_eq!(both.len(), 2);
    for (job, t) in both.iter().enumerate() {
        assert!((t / alone - 1.0).abs() < 0.02, "job {job}: {t:.0} ns together, {alone:.0} ns alone");
    }
    assert_eq!(together.jobs[1].hosts_text(), "4-7");
}

#[test]
fn two_jobs_across_one_bottleneck_each_get_half() {
    // Each job's two ranks sit on either side of a dumbbell's bottleneck, so both all-reduces
    // cross it in both directions. HPCC: DCQCN shares fairly too but leaves a fifth of the
    // bottleneck idle over transfers this short (each job gets 0.39 of its rate alone).
    let dumbbell = "[topology]\nkind = \"dumbbell\"\nleft = 2\nright = 2\nlink = { bandwidth = \"100Gbps\", delay = \"1us\" }\nbottleneck = { bandwidth = \"100Gbps\", delay = \"1us\" }";
    let alone = ccts(&all_reduces(dumbbell, "hpcc", &["[0, 2]"]))[0];
    let both = all_reduces(dumbbell, "hpcc", &["[0, 2]", "[1, 3]"]);
    let times = ccts(&both);
    for t in &times {
        let share = alone / t;
        assert!((0.4..0.6).contains(&share), "a job got {share:.3} of its time alone's rate");
    }
    let rates: Vec<f64> = times.iter().map(|t| 1.0 / t).collect();
    let jain = jain_index(&rates);
    assert!(jain >= 0.95, "Jain's index {jain:.4} ({times:?})");
}

#[test]
fn a_sequence_runs_in_order_per_rank() {
    // An all-to-all, then an all-reduce, on ranks placed on hosts 4-7: each rank's first
    // all-reduce send waits for its own sends and receives of the all-to-all, not for the
    // other ranks'.
    let r = common::run(&format!(
        "{STAR}\n[[jobs]]\nhosts = \"4..8\"\nstart = \"5us\"\n[[jobs.workload]]\nkind = \"all_to_all\"\nsize = \"200KB\"\n[[jobs.workload]]\nkind = \"all_reduce\"\nsize = \"1MB\""
    ));
    common::assert_conserved(&r);
    let (a2a, ar) = (&r.collectives[0], &r.collectives[1]);
    assert_eq!((a2a.info.job.as_str(), ar.info.job.as_str()), ("job0", "job0"));
    assert_eq!(a2a.start, SimTime::from_us(5), "the job's times count from its start");
    fn of<'a>(r: &'a Results, name: &'a str) -> impl Iterator<Item = &'a aiccsim::metrics::FlowRecord> + 'a {
        r.flows.iter().filter(move |f| *f.collective == *name)
    }
    for host in 4..8 {
        let done = of(&r, &a2a.info.name()).filter(|f| f.src == host || f.dst == host).map(|f| f.finish.unwrap()).max();
        let first_send = of(&r, &ar.info.name()).filter(|f| f.src == host).map(|f| f.start).min();
        assert!(first_send >= done, "host {host}: all-reduce sends at {first_send:?}, its all-to-all done at {done:?}");
    }
    assert!(r.flows.iter().all(|f| (4..8).contains(&f.src) && (4..8).contains(&f.dst)));
    assert_eq!(r.jobs[0].collectives, 2);
    assert_eq!(r.jobs[0].finish, ar.finish);
}

#[test]
fn two_jobs_on_the_same_hosts_have_connections_of_their_own() {
    // Both jobs send 1 MB from host 1 to host 0 at once. On one connection the second transfer
    // would wait for the first; the jobs' queue pairs share the link and finish together.
    let r = common::run(&format!(
        "{STAR}\n[cc]\nalgorithm = \"none\"\n[[jobs]]\nhosts = [1, 0]\n[jobs.workload]\nkind = \"flows\"\nflows = [{{ src = 0, dst = 1, size = \"1MB\", connection = 0 }}]\n[[jobs]]\nhosts = [1, 0]\n[jobs.workload]\nkind = \"flows\"\nflows = [{{ src = 0, dst = 1, size = \"1MB\", connection = 0 }}]"
    ));
    let (a, b) = (r.flows[0].fct().unwrap().as_ns_f64(), r.flows[1].fct().unwrap().as_ns_f64());
    assert!((b / a - 1.0).abs() < 0.01, "side by side: {:.3}", b / a);
}

#[test]
fn a_packed_job_on_gpu_servers_gets_its_servers_as_groups() {
    // 16 GPUs in 4 servers of 4; job "a" takes GPUs 0-2 (named), job "b" 9 ranks packed: the
    // free GPUs 3-11, which do not form whole servers (3 is alone on server 0), so b's
    // hierarchical all-reduce needs local_ranks; job "c" 4 ranks packed: server 3, whole.
    let clos = "[topology]\nkind = \"clos\"\nracks = 2\nservers_per_rack = 2\ngpus_per_server = 4\nspines = 4\nlink = { bandwidth = \"200Gbps\", delay = \"500ns\" }\nnvlink = { bandwidth = \"200GB/s\", delay = \"25ns\" }";
    let job = |name: &str, who: &str, algorithm: &str| {
        format!("[[jobs]]\nname = \"{name}\"\n{who}\n[jobs.workload]\nkind = \"all_reduce\"\nsize = \"4MB\"\nalgorithm = \"{algorithm}\"\n")
    };
    let text = format!(
        "{clos}\n{}{}{}",
        job("a", "hosts = [0, 1, 2]", "ring"),
        job("b", "ranks = 9", "hierarchical"),
        job("c", "ranks = 4", "hierarchical")
    );
    let err = aiccsim::Scenario::from_toml(&text, "t.toml").and_then(|s| aiccsim::run(&s).map(drop)).unwrap_err();
    assert_eq!(err.key, "jobs[1].workload.local_ranks", "{err}");
    // Give b a ring; c's group is its server (4 ranks, all over NVLink: no NIC bytes at all).
    let text = text.replacen("algorithm = \"hierarchical\"", "algorithm = \"ring\"", 1);
    let r = aiccsim::run(&aiccsim::Scenario::from_toml(&text, "t.toml").unwrap()).unwrap();
    assert_eq!(r.jobs.iter().map(|j| j.hosts_text()).collect::<Vec<_>>(), ["0-2", "3-11", "12-15"]);
    let c = &r.collectives[2];
    assert_eq!(c.info.algorithm, "hierarchical");
    let c_flows = r.flows.iter().filter(|f| *f.collective == *c.info.name());
    assert!(c_flows.clone().count() > 0 && c_flows.into_iter().all(|f| f.nvlink), "job c never leaves its server");
}

#[test]
fn a_training_job_reports_its_own_iterations() {
    let r = common::run(&format!(
        "{STAR}\n[[jobs]]\nname = \"small\"\nranks = 2\n[jobs.workload]\nkind = \"all_to_all\"\nsize = \"1MB\"\n[[jobs]]\nname = \"train\"\nranks = 4\nstart = \"10us\"\n[jobs.workload]\nkind = \"training\"\niterations = 3\nlayers = [{{ forward = \"20us\", backward = \"40us\", all_reduce = {{ size = \"1MB\" }} }}]"
    ));
    let its = r.iterations.as_ref().expect("a job trains");
    assert_eq!(its.len(), 3);
    assert!(its.iter().all(|i| i.job == "train" && i.compute == SimTime::from_us(60)));
    assert_eq!(its[0].start, Some(SimTime::from_us(10)), "the job starts at 10 us");
    let train = &r.jobs[1];
    assert_eq!(train.hosts_text(), "2-5", "packed after job small's hosts 0-1");
    assert_eq!(train.iterations.as_ref().unwrap().finished, 3);
    assert!(r.jobs[0].iterations.is_none());
    assert_eq!(r.summary.jobs.len(), 2);
}
