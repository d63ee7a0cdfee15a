//! Where each job's ranks run: on the hosts it names, or on hosts a placement rule picks among
//! those no earlier job took. Hosts are GPUs; host h sits on server h / gpus_per_server (every
//! topology numbers a server's GPUs consecutively).

use super::JobConfig;
use crate::rng;
use rand::RngExt;
use serde::{Deserialize, Serialize};

/// How a job's ranks are placed on the fabric's hosts. Only hosts no earlier job in the list
/// placed or named are used.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// The lowest-numbered free hosts: a server's GPUs, then the next server's (the fewest
    /// servers and racks).
    #[default]
    Packed,
    /// One rank per server in turn (GPU 0 of every server with a free GPU, then GPU 1, ...):
    /// the most servers, the least NVLink.
    Spread,
    /// A seeded random choice among the free hosts, in random order.
    Random,
}

impl Placement {
    pub fn name(self) -> &'static str {
        match self {
            Placement::Packed => "packed",
            Placement::Spread => "spread",
            Placement::Random => "random",
        }
    }
}

/// The hosts of each job in rank order, the jobs placed in list order on `hosts` hosts of
/// `per_server` per server. An error names the job's key and the fix.
pub fn place(jobs: &[JobConfig], hosts: u32, per_server: u32, seed: u64) -> Result<Vec<Vec<u32>>, (String, String)> {
    let per_server = per_server.max(1);
    let mut taken = vec![false; hosts as usize];
    let mut placed = Vec::with_capacity(jobs.len());
    for (i, job) in jobs.iter().enumerate() {
        let at = |k: &str| format!("jobs[{i}].{k}");
        let ranks = match (&job.hosts, job.ranks) {
            (Some(set), None) => set.members(hosts, "host", "the topology has hosts").map_err(|m| (at("hosts"), m))?,
            (None, Some(n)) => {
                let free: Vec<u32> = (0..hosts).filter(|&h| !taken[h as usize]).collect();
                if (n as usize) > free.len() {
                    let took = hosts as usize - free.len();
                    return Err((
                        at("ranks"),
                        format!(
                            "asks for {n} ranks, but only {} of the topology's {hosts} hosts are free (earlier jobs took {took}); lower ranks, or give this job hosts of its own",
                            free.len()
                        ),
                    ));
                }
                let job_seed = job.seed.unwrap_or(seed);
                rule(
                    job.placement.unwrap_or_default(),
                    free,
                    per_server,
                    rng::stream(job_seed, "jobs.placement", i as u64),
                )
                .into_iter()
                .take(n as usize)
                .collect()
            }
            (Some(_), Some(_)) => {
                return Err((at("ranks"), "give either hosts or ranks (with a placement), not both".into()));
            }
            (None, None) => {
                return Err((
                    at("hosts"),
                    "the job has no ranks: give hosts = [...] (or a range \"0..16\"), or ranks = N with placement = \"packed\", \"spread\" or \"random\"".into(),
                ));
            }
        };
        if ranks.is_empty() {
            return Err((at("ranks"), "a job needs at least 1 rank".into()));
        }
        for &h in &ranks {
            taken[h as usize] = true;
        }
        placed.push(ranks);
    }
    Ok(placed)
}

/// The free hosts in the order `placement` takes them.
fn rule(placement: Placement, mut free: Vec<u32>, per_server: u32, mut rng: rng::SimRng) -> Vec<u32> {
    match placement {
        Placement::Packed => free,
        Placement::Spread => {
            // (place among its server's free hosts, server): every server's first free GPU,
            // then every server's second.
            let mut keyed = Vec::with_capacity(free.len());
            let mut on_server = 0;
            for (i, &h) in free.iter().enumerate() {
                let same_server = i > 0 && free[i - 1] / per_server == h / per_server;
                on_server = if same_server { on_server + 1 } else { 0 };
                keyed.push((on_server, h / per_server, h));
            }
            keyed.sort_unstable();
            keyed.into_iter().map(|(_, _, h)| h).collect()
        }
        Placement::Random => {
            // Fisher-Yates.
            for i in (1..free.len()).rev() {
                let j = rng.random_range(0..=i);
                free.swap(i, j);
            }
            free
        }
    }
}

/// The number of consecutive ranks that share a server, if the ranks form whole groups of that
/// size, each on one server and each server's ranks in one group (a hierarchical all-reduce's
/// `local_ranks`); `None` otherwise.
pub fn local_ranks(ranks: &[u32], per_server: u32) -> Option<u32> {
    let per_server = per_server.max(1);
    let server = |r: usize| ranks[r] / per_server;
    let g = (0..ranks.len()).take_while(|&r| server(r) == server(0)).count();
    if g == 0 || !ranks.len().is_multiple_of(g) {
        return None;
    }
    let mut seen = std::collections::BTreeSet::new();
    for group in 0..ranks.len() / g {
        let s = server(group * g);
        let whole = (group * g..(group + 1) * g).all(|r| server(r) == s);
        if !whole || !seen.insert(s) {
            return None;
        }
    }
    Some(g as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;
    use crate::workload::{HostSet, JobWorkloads};

    fn job(ranks: u32, placement: Placement) -> JobConfig {
        JobConfig {
            name: None,
            hosts: None,
            ranks: Some(ranks),
            placement: Some(placement),
            seed: None,
            start: SimTime::ZERO,
            workload: JobWorkloads(Vec::new()),
        }
    }

    #[test]
    fn packed_fills_servers_in_order_and_skips_taken_hosts() {
        let mut first = job(3, Placement::Packed);
        first.ranks = None;
        first.hosts = Some(HostSet::List(vec![1, 2, 3]));
        let placed = place(&[first, job(4, Placement::Packed)], 16, 4, 1).unwrap();
        assert_eq!(placed[1], vec![0, 4, 5, 6]);
    }

    #[test]
    fn spread_takes_one_gpu_per_server_in_turn() {
        let placed = place(&[job(2, Placement::Packed), job(6, Placement::Spread)], 16, 4, 1).unwrap();
        // Server 0's first free GPU is 2.
        assert_eq!(placed[1], vec![2, 4, 8, 12, 3, 5]);
    }

    #[test]
    fn random_is_seeded_and_disjoint() {
        let jobs = [job(8, Placement::Random), job(8, Placement::Random)];
        let a = place(&jobs, 16, 8, 7).unwrap();
        assert_eq!(a, place(&jobs, 16, 8, 7).unwrap(), "same seed, same placement");
        assert_ne!(a, place(&jobs, 16, 8, 8).unwrap(), "another seed, another placement");
        let mut all: Vec<u32> = a.concat();
        all.sort_unstable();
        assert_eq!(all, (0..16).collect::<Vec<_>>());
    }

    #[test]
    fn too_many_ranks_is_an_error_naming_the_job() {
        let err = place(&[job(12, Placement::Packed), job(8, Placement::Spread)], 16, 8, 1).unwrap_err();
        assert_eq!(err.0, "jobs[1].ranks");
        assert!(err.1.contains("only 4 of the topology's 16 hosts are free"), "{}", err.1);
    }

    #[test]
    fn local_ranks_are_whole_servers_only() {
        assert_eq!(local_ranks(&[8, 9, 10, 11, 0, 1, 2, 3], 8), Some(4));
        assert_eq!(local_ranks(&[0, 8, 16, 24], 8), Some(1));
        assert_eq!(local_ranks(&[0, 1, 8, 2], 8), None, "server 0's ranks are split");
        assert_eq!(local_ranks(&[0, 1, 2, 8, 9], 8), None);
    }
}
