//! Figures computed from a finished run's tables: the queue of one port as a timeline, a flow's
//! recovery after a competitor leaves, fairness over segments and in the steady phase, link
//! utilisation, and the collectives' bus bandwidth against what the hosts' links allow.
//!
//! They read a [`RunView`], the few tables and figures they need, which a [`Results`] lends
//! ([`Results::view`]) and which a front end can also rebuild from a results folder (the Python
//! binding does, for `aiccsim.load`), so that `aiccsim reproduce`'s table and Python give the
//! same numbers from the same code.

use super::fast_forward::FlowSkip;
use super::{jain_index, CollectiveRow, FlowRecord, PortRecord, QueueSample, RateSample, Results, SpeedChange};
use crate::time::SimTime;
use std::collections::{BTreeMap, BTreeSet};

/// What the derived figures read of a run.
#[derive(Clone, Copy)]
pub struct RunView<'a> {
    /// `output.sample_interval`: `None` without timelines.
    pub sample_interval: Option<SimTime>,
    /// `nic.mtu` and `nic.header`, bytes.
    pub mtu: u64,
    pub header: u64,
    /// `summary.simulated_time_ns` and `summary.completion_time_ns`.
    pub simulated_time: SimTime,
    pub completion_time: Option<SimTime>,
    pub flows: &'a [FlowRecord],
    pub rates: &'a [RateSample],
    pub queues: &'a [QueueSample],
    /// Every port, in the order of `ports.csv`, with its speed when the run started.
    pub ports: &'a [PortRecord],
    /// Speeds `[[events]]` changed, in time order.
    pub speed_changes: &'a [SpeedChange],
    pub collectives: &'a [CollectiveRow],
    /// What fast-forward credited to each flow over the spans it skipped (`skips.csv`): where
    /// the timelines have no sample of a flow, it delivered at these rates.
    pub skips: &'a [FlowSkip],
}

impl Results {
    /// The run as the derived figures read it.
    pub fn view(&self) -> RunView<'_> {
        RunView {
            sample_interval: self.scenario.output.sample_interval,
            mtu: self.scenario.nic.mtu.0,
            header: self.scenario.nic.header.0,
            simulated_time: self.summary.simulated_time_ns,
            completion_time: self.summary.completion_time_ns,
            flows: &self.flows,
            rates: &self.rates,
            queues: &self.queues,
            ports: &self.ports,
            speed_changes: &self.speed_changes,
            collectives: &self.collectives,
            skips: self.summary.fast_forward.as_ref().map_or(&[], |ff| &ff.flow_skips),
        }
    }

    /// Mean throughput of each sampled flow over the steady phase ([`RunView::steady_throughputs`]).
    pub fn steady_throughputs(&self) -> Option<Vec<f64>> {
        self.view().steady_throughputs()
    }
}

impl RunView<'_> {
    /// The queue of one switch port at every sample time of the run as (us, KB): `queues.csv`
    /// leaves out samples where the queue stayed empty, so those are put back as zeros. Empty
    /// without timelines.
    pub fn queue_series(&self, switch: u32, port: u32) -> Vec<(f64, f64)> {
        let Some(iv) = self.sample_interval else { return Vec::new() };
        let end = self.simulated_time.0;
        let recorded: BTreeMap<u64, u64> =
            self.queues.iter().filter(|q| q.switch == switch && q.port == port).map(|q| (q.time.0, q.bytes)).collect();
        (0..=end / iv.0)
            .map(|i| {
                let t = i * iv.0;
                (t as f64 / 1e6, recorded.get(&t).copied().unwrap_or(0) as f64 / 1e3)
            })
            .collect()
    }

    /// The time average of one switch port's queue, KB ([`RunView::queue_series`]); `None`
    /// without timelines.
    pub fn mean_queue_kb(&self, switch: u32, port: u32) -> Option<f64> {
        let points = self.queue_series(switch, port);
        (!points.is_empty()).then(|| points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64)
    }

    /// Mean throughput of each sampled flow over the steady phase: the sample times at which
    /// every sampled flow is active, without the first fifth of them (the start-up transient).
    /// `None` without timelines or with fewer than two such samples.
    pub fn steady_throughputs(&self) -> Option<Vec<f64>> {
        let flows: BTreeSet<u32> = self.rates.iter().map(|r| r.flow).collect();
        if flows.len() < 2 {
            return None;
        }
        let mut per_time: BTreeMap<SimTime, Vec<&RateSample>> = Default::default();
        for r in self.rates {
            per_time.entry(r.time).or_default().push(r);
        }
        let full: Vec<&Vec<&RateSample>> = per_time.values().filter(|v| v.len() == flows.len()).collect();
        // The first sample of a flow covers the time before it started; skip it with the transient.
        let skip = (full.len() / 5).max(1);
        if full.len() < skip + 2 {
            return None;
        }
        let index: BTreeMap<u32, usize> = flows.iter().enumerate().map(|(i, &f)| (f, i)).collect();
        let mut sums = vec![0.0; flows.len()];
        for samples in &full[skip..] {
            for r in samples.iter() {
                sums[index[&r.flow]] += r.throughput_bps;
            }
        }
        let n = (full.len() - skip) as f64;
        Some(sums.into_iter().map(|s| s / n).collect())
    }

    /// Jain's index of the steady-phase throughputs ([`RunView::steady_throughputs`]).
    pub fn jain_steady(&self) -> Option<f64> {
        self.steady_throughputs().map(|t| jain_index(&t))
    }

    /// Microseconds from the moment flow `f` is alone again (the last of the flows that
    /// finished before it) until a five-sample window of its throughput first averages 95% of
    /// what it carried alone before any other flow started: infinite if it never does before it
    /// ends, `None` if it never was alone or never shared (or without timelines).
    pub fn recovery_us(&self, f: u32) -> Option<f64> {
        const WINDOW: usize = 5;
        let iv = self.sample_interval?;
        let flow = self.flows.get(f as usize)?;
        let own_finish = flow.finish?;
        let others = || self.flows.iter().filter(|o| o.flow_id != f);
        let first_other_start = others().map(|o| o.start).min()?;
        let alone_from = others().filter_map(|o| o.finish).filter(|&t| t < own_finish).max()?;
        let own = |from: SimTime, to: SimTime| -> Vec<(SimTime, f64)> {
            (self.rates.iter())
                .filter(|s| s.flow == f && s.time > from && s.time <= to)
                .map(|s| (s.time, s.throughput_bps))
                .collect()
        };
        // Alone at first: skip the first fifth (start-up) of that phase.
        let before = own(flow.start, first_other_start);
        let steady = &before[before.len() / 5..];
        if steady.len() < WINDOW {
            return None;
        }
        let alone_rate = steady.iter().map(|s| s.1).sum::<f64>() / steady.len() as f64;
        let after = own(alone_from, own_finish);
        let found =
            after.windows(WINDOW).find(|w| w.iter().map(|s| s.1).sum::<f64>() / WINDOW as f64 >= 0.95 * alone_rate);
        Some(match found {
            // The window's first sample covers the interval before its time.
            Some(w) => (w[0].0.saturating_sub(iv).max(alone_from) - alone_from).as_us_f64(),
            None => f64::INFINITY,
        })
    }

    /// The lowest Jain's index over segments of length `len` (each from `settle` after its
    /// start), of the mean throughput of every flow that ran throughout the window (started
    /// before it, finished after it) over its samples there; segments with fewer than two such
    /// flows are skipped. `None` without timelines or such a segment. A span fast-forward
    /// skipped for a flow counts at the rate it credited the flow with, for as long as it
    /// overlaps the window, each sample for one interval.
    pub fn min_segment_jain(&self, len: SimTime, settle: SimTime) -> Option<f64> {
        let iv = self.sample_interval?.as_secs_f64();
        let end = self.rates.iter().map(|s| s.time.0).max()?;
        // The flows the timelines sample (`output.rate_flows`): skips credit every flow.
        let sampled: BTreeSet<u32> = self.rates.iter().map(|s| s.flow).collect();
        let mut worst: Option<f64> = None;
        let mut from = 0;
        while from < end {
            let (lo, hi) = (from + settle.0, from + len.0);
            // Per flow: bits delivered, and the seconds they were delivered in.
            let mut sums: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
            for s in self.rates.iter().filter(|s| s.time.0 > lo && s.time.0 <= hi) {
                let e = sums.entry(s.flow).or_default();
                e.0 += s.throughput_bps * iv;
                e.1 += iv;
            }
            for k in self.skips.iter().filter(|k| sampled.contains(&k.flow)) {
                let (a, b) = (k.from.0.max(lo), k.to.0.min(hi));
                if a < b {
                    let secs = SimTime(b - a).as_secs_f64();
                    let e = sums.entry(k.flow).or_default();
                    e.0 += k.rate_bps() * secs;
                    e.1 += secs;
                }
            }
            // Only flows active over the whole window (not starting or ending inside it).
            let throughout = |f: u32| {
                self.flows.get(f as usize).is_some_and(|r| r.start.0 <= lo && r.finish.is_none_or(|t| t.0 > hi))
            };
            let means: Vec<f64> =
                sums.iter().filter(|(&f, _)| throughout(f)).map(|(_, (bits, secs))| bits / secs).collect();
            if means.len() >= 2 {
                let j = jain_index(&means);
                worst = Some(worst.map_or(j, |w: f64| w.min(j)));
            }
            from += len.0;
        }
        worst
    }

    /// The port of node `from` facing node `to` (its index among all ports, the row of
    /// `ports.csv`), by the names `ports.csv` gives them.
    pub fn link_index(&self, from: &str, to: &str) -> Option<usize> {
        self.ports.iter().position(|p| p.node == from && p.peer == to)
    }

    /// A link's utilisation over the whole run, in %: the bytes port `i` sent over what it could
    /// carry from the start to the completion, at its speed at the end (a link slowed by
    /// `[[events]]` at the start counts at its slowed speed). `None` if no flow finished.
    pub fn link_utilisation_pct(&self, i: usize) -> Option<f64> {
        let end = self.completion_time.filter(|&t| t > SimTime::ZERO)?;
        let port = self.ports.get(i)?;
        let speed =
            self.speed_changes.iter().rev().find(|c| c.port as usize == i).map_or(port.bandwidth, |c| c.bandwidth);
        Some(port.stats.tx_bytes as f64 * 8.0 / (speed.as_f64() * end.as_secs_f64()) * 100.0)
    }

    /// The bus bandwidth of the run's one collective, bits/s; `None` with several, or none, or
    /// one that did not finish.
    pub fn busbw_bps(&self) -> Option<f64> {
        match self.collectives {
            [one] => one.busbw_bps(),
            _ => None,
        }
    }

    /// The mean bus bandwidth of the run's collectives, bits/s.
    pub fn mean_busbw_bps(&self) -> Option<f64> {
        let all: Vec<f64> = self.collectives.iter().filter_map(|c| c.busbw_bps()).collect();
        (!all.is_empty()).then(|| all.iter().sum::<f64>() / all.len() as f64)
    }

    /// The bus bandwidth of the collectives a job repeats, after its first, bits/s: how
    /// nccl-tests times its iterations after a warm-up. Per job of two or more collectives (a
    /// sequence, `[[jobs.workload]]`), the bytes of all but the first, x the bus factor, over
    /// the time from the first's end to the last's end (the iterations pipeline: a rank starts
    /// the next as soon as its part of the one before is done); the mean over such jobs. `None`
    /// without such a job, or if one of its collectives did not finish.
    pub fn warm_busbw_bps(&self) -> Option<f64> {
        let mut jobs: BTreeMap<&str, Vec<&CollectiveRow>> = BTreeMap::new();
        for c in self.collectives {
            jobs.entry(c.info.job.as_str()).or_default().push(c);
        }
        let mut per_job = Vec::new();
        for mut cs in jobs.into_values().filter(|cs| cs.len() >= 2) {
            cs.sort_by_key(|c| c.info.id);
            let first_end = cs[0].finish?;
            let last_end = cs.iter().map(|c| c.finish).collect::<Option<Vec<_>>>()?.into_iter().max()?;
            let time = last_end.saturating_sub(first_end).as_secs_f64();
            if time <= 0.0 {
                return None;
            }
            let bits: f64 = cs[1..].iter().map(|c| c.info.size as f64 * 8.0 * c.info.bus_factor()).sum();
            per_job.push(bits / time);
        }
        (!per_job.is_empty()).then(|| per_job.iter().sum::<f64>() / per_job.len() as f64)
    }

    /// The highest bus bandwidth the run's one collective could reach on its topology, bits/s:
    /// its bus bandwidth if it took only as long as its busiest host link (a NIC, or a GPU's
    /// NVLink port) needs to send or receive the wire bytes of the flows through it, every link
    /// at full speed from the start. It leaves out the fabric (exact for a non-blocking one),
    /// the paths' delays, the order the algorithm imposes and the ACKs, so no run exceeds it.
    pub fn busbw_bound_bps(&self) -> Option<f64> {
        let [one] = self.collectives else { return None };
        let speed: BTreeMap<&str, f64> = (self.ports.iter())
            .filter(|p| !p.node.starts_with('s'))
            .map(|p| (p.node.as_str(), p.bandwidth.as_f64()))
            .collect();
        // Seconds each host link (by name) is busy sending, and receiving.
        let mut busy: BTreeMap<(String, bool), f64> = Default::default();
        for f in self.flows.iter().filter(|f| f.collective.as_ref() == one.info.name().as_str()) {
            let wire = (f.size_bytes + f.size_bytes.div_ceil(self.mtu) * self.header) as f64 * 8.0;
            let prefix = if f.nvlink { "nvl" } else { "h" };
            for (host, sending) in [(f.src, true), (f.dst, false)] {
                let name = format!("{prefix}{host}");
                let bw = *speed.get(name.as_str())?;
                *busy.entry((name, sending)).or_default() += wire / bw;
            }
        }
        let least_time = busy.values().copied().fold(0.0, f64::max);
        (least_time > 0.0).then(|| one.info.size as f64 * 8.0 / least_time * one.info.bus_factor())
    }

    /// What a sender's link carries of payload at full speed, bits/s: the slowest host link's
    /// speed less the share of the data packets' headers (`nic.mtu` over `nic.mtu` +
    /// `nic.header`).
    pub fn payload_line_rate_bps(&self) -> Option<f64> {
        let host_link = self.ports.iter().filter(|p| p.node.starts_with('h') || p.peer.starts_with('h'));
        let line = host_link.map(|p| p.bandwidth.as_f64()).min_by(f64::total_cmp)?;
        let (mtu, header) = (self.mtu as f64, self.header as f64);
        Some(line * mtu / (mtu + header))
    }

    /// The collectives' mean bus bandwidth as a share of the payload line rate, in %.
    pub fn line_rate_pct(&self) -> Option<f64> {
        self.mean_busbw_bps().zip(self.payload_line_rate_bps()).map(|(b, l)| b / l * 100.0)
    }
}
