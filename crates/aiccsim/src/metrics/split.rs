//! Each training iteration split by what held it up: the critical rank's compute, the pipeline
//! bubble, and the communication of each parallel dimension that its compute did not hide
//! (the columns `rank`, `bubble_ns` and `exposed_*_ns` of `iterations.csv`, and the critical
//! path of `summary.json`'s slowest iteration).
//!
//! The critical rank of iteration k is the rank whose activity ends it: the rank whose first
//! step of iteration k + 1 starts when iteration k ends, or, for the last iteration, the rank whose last step
//! ends last (the receiver of the flow delivered last when a flow ends after every step). Its
//! time in the iteration's window is compute or waiting; each wait is charged to what released
//! the step after it, found from the step's predecessors in the dependency graph: the flow
//! delivered last (its collective's dimension; a pipeline send's wait before the send started
//! is the bubble, the rest exposed pipeline communication), a step of another rank, or the
//! step's own earliest start ("other"). So the critical rank's compute, the bubble and the
//! exposed columns add up to the iteration's duration.

use super::json_time::ns;
use super::{ComputeStep, FlowRecord};
use crate::time::SimTime;
use serde::Serialize;
use std::ops::Range;

/// What a wait is charged to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dimension {
    Tp,
    Pp,
    Dp,
    Ep,
    /// Anything else: a collective of every rank, a step of another rank, a start time.
    Other,
    /// Waiting for a pipeline send that the upstream stage had not started yet.
    Bubble,
}

impl Dimension {
    pub fn name(self) -> &'static str {
        match self {
            Dimension::Tp => "tp",
            Dimension::Pp => "pp",
            Dimension::Dp => "dp",
            Dimension::Ep => "ep",
            Dimension::Other => "other",
            Dimension::Bubble => "bubble",
        }
    }

    /// Its place in [`Split::exposed`] (the bubble has its own field).
    fn exposed_index(self) -> Option<usize> {
        match self {
            Dimension::Tp => Some(0),
            Dimension::Pp => Some(1),
            Dimension::Dp => Some(2),
            Dimension::Ep => Some(3),
            Dimension::Other => Some(4),
            Dimension::Bubble => None,
        }
    }
}

/// What every compute step of the run waited for (flows and other steps), as the engine's
/// dependency graph had it: the graph's nodes number flows first (flow f is node f) and the
/// steps after them (step c is node `flows + c`).
pub struct Predecessors {
    flows: u32,
    /// Step c's predecessors are `nodes[offsets[c]..offsets[c + 1]]`.
    offsets: Vec<u32>,
    nodes: Vec<u32>,
}

impl Predecessors {
    /// Turns the graph's forward edges (per node, the nodes that wait for it) around, keeping
    /// only those into compute steps.
    pub fn invert<'a>(
        flows: u32,
        computes: usize,
        dependents: impl Iterator<Item = &'a [u32]> + Clone,
    ) -> Predecessors {
        let mut offsets = vec![0u32; computes + 1];
        for &d in dependents.clone().flatten().filter(|&&d| d >= flows) {
            offsets[(d - flows) as usize + 1] += 1;
        }
        for c in 0..computes {
            offsets[c + 1] += offsets[c];
        }
        let mut next: Vec<u32> = offsets[..computes].to_vec();
        let mut nodes = vec![0u32; offsets[computes] as usize];
        for (node, deps) in dependents.enumerate() {
            for &d in deps.iter().filter(|&&d| d >= flows) {
                let at = &mut next[(d - flows) as usize];
                nodes[*at as usize] = node as u32;
                *at += 1;
            }
        }
        Predecessors { flows, offsets, nodes }
    }

    fn of(&self, c: u32) -> &[u32] {
        &self.nodes[self.offsets[c as usize] as usize..self.offsets[c as usize + 1] as usize]
    }
}

/// One wait of the critical rank (consecutive waits of one dimension merged): from the end of
/// its compute to the start of the next, charged to `dimension`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Wait {
    #[serde(serialize_with = "ns")]
    pub from_ns: SimTime,
    #[serde(serialize_with = "ns")]
    pub to_ns: SimTime,
    /// The time waited (merged waits: their sum, without the compute between them).
    #[serde(serialize_with = "ns")]
    pub wait_ns: SimTime,
    pub dimension: &'static str,
    /// The collective (`all_reduce:12`, as `flows.csv` names it) or the step (`rank 5 layer 3
    /// forward microbatch 2`) that released the wait, or `start` (the workload's start time);
    /// of merged waits, the last one's.
    pub released_by: String,
}

/// Waits kept in a critical path: the longest, in time order.
pub const MAX_PATH: usize = 32;

/// An iteration's split.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    /// The critical rank's host.
    pub rank: u32,
    /// Its compute inside the iteration's window.
    pub compute: SimTime,
    pub bubble: SimTime,
    /// Exposed communication: tensor, pipeline, data, expert parallel, other.
    pub exposed: [SimTime; 5],
    /// Its waits in time order, at most [`MAX_PATH`].
    pub path: Vec<Wait>,
}

/// What the split needs of a workload's layout.
pub(super) trait Shape {
    /// The ranks' hosts, in rank order.
    fn ranks(&self) -> &[u32];
    fn iterations(&self) -> u32;
    /// Rank `r`'s (by position) steps of `iteration`, in the order it runs them.
    fn rank_steps(&self, iteration: u32, r: usize) -> Vec<u32>;
    fn first_step(&self, iteration: u32, r: usize) -> u32;
    fn iteration_computes(&self, iteration: u32) -> Range<u32>;
    fn iteration_flows(&self, iteration: u32) -> Range<u32>;
    /// The dimension of flow `f`'s collective.
    fn dimension(&self, f: u32) -> Dimension;
    /// Step `c` in words: `rank 5 layer 3 forward microbatch 2` (rank: its host).
    fn describe(&self, c: u32) -> String;
}

/// Collectives' dimensions by their flows: each collective's flow range, sorted.
pub(super) struct FlowDims(Vec<(Range<u32>, Dimension)>);

impl FlowDims {
    pub(super) fn new(mut ranges: Vec<(Range<u32>, Dimension)>) -> FlowDims {
        ranges.sort_by_key(|(r, _)| r.start);
        FlowDims(ranges)
    }

    pub(super) fn of(&self, f: u32) -> Dimension {
        let i = self.0.partition_point(|(r, _)| r.start <= f);
        match i.checked_sub(1).map(|i| &self.0[i]) {
            Some((r, d)) if r.contains(&f) => *d,
            _ => Dimension::Other,
        }
    }
}

/// The split of iteration `k` over the window `[start, end]`.
pub(super) fn split(
    shape: &dyn Shape,
    k: u32,
    start: SimTime,
    end: SimTime,
    computes: &[ComputeStep],
    flows: &[FlowRecord],
    preds: &Predecessors,
) -> Option<Split> {
    let ranks = shape.ranks();
    let last = k + 1 == shape.iterations();
    let own = shape.iteration_flows(k);
    // The flow of the iteration delivered last (the first of equals).
    let last_flow =
        (own.clone()).filter_map(|f| Some((flows[f as usize].finish?, f))).max_by_key(|&(t, f)| (t, u32::MAX - f));
    let r = if !last {
        // The rank whose first step of the next iteration starts when this one ends (the first
        // of equals): a `training` iteration ends when the last rank starts the next, a
        // pipeline's when its first stage does.
        let next = |r: usize| computes[shape.first_step(k + 1, r) as usize].start;
        (0..ranks.len()).find(|&r| next(r) == Some(end))?
    } else {
        let (step_end, c) = (shape.iteration_computes(k))
            .filter_map(|c| Some((computes[c as usize].end?, c)))
            .max_by_key(|&(t, c)| (t, u32::MAX - c))?;
        let receiver = last_flow
            .filter(|&(t, _)| t > step_end)
            .and_then(|(_, f)| ranks.iter().position(|&h| h == flows[f as usize].dst));
        receiver.or_else(|| ranks.iter().position(|&h| h == computes[c as usize].host))?
    };
    // Its steps that can fall in the window: a pipeline's last stage still runs the iteration
    // before when the first starts this one; the next iteration's first step ends the window.
    let around = k.saturating_sub(1)..(k + 2).min(shape.iterations());
    let mut steps: Vec<(SimTime, SimTime, u32)> = (around.flat_map(|j| shape.rank_steps(j, r)))
        .filter_map(|c| {
            let s = &computes[c as usize];
            Some((s.start?, s.end.unwrap_or(end), c))
        })
        .collect();
    steps.sort_unstable();
    let mut walk = Walk { shape, computes, flows, preds, t: start, compute: SimTime::ZERO, waits: Vec::new() };
    for &(s, e, c) in &steps {
        if e <= walk.t && s < walk.t {
            continue;
        }
        if s > walk.t {
            walk.wait_for(c, s.min(end));
        }
        if s >= end {
            break;
        }
        let from = s.max(walk.t);
        let to = e.min(end);
        walk.compute += to - from;
        walk.t = to;
        if walk.t >= end {
            break;
        }
    }
    if walk.t < end {
        // After its last step, until the last flow is delivered.
        match last_flow {
            Some((_, f)) => walk.charge_flow(f, end),
            None => walk.charge(end, Dimension::Other, "end".to_string()),
        }
    }
    let mut bubble = SimTime::ZERO;
    let mut exposed = [SimTime::ZERO; 5];
    for (from, to, d, _) in &walk.waits {
        match d.exposed_index() {
            Some(i) => exposed[i] += *to - *from,
            None => bubble += *to - *from,
        }
    }
    Some(Split { rank: ranks[r], compute: walk.compute, bubble, exposed, path: path(walk.waits) })
}

/// The critical rank's walk through its window: the time reached, and its waits so far.
struct Walk<'a> {
    shape: &'a dyn Shape,
    computes: &'a [ComputeStep],
    flows: &'a [FlowRecord],
    preds: &'a Predecessors,
    t: SimTime,
    compute: SimTime,
    waits: Vec<(SimTime, SimTime, Dimension, String)>,
}

impl Walk<'_> {
    /// Waits until `to` for step `c`: charged to what released it last.
    fn wait_for(&mut self, c: u32, to: SimTime) {
        let flows = self.preds.flows;
        let done = |node: u32| match node < flows {
            true => self.flows[node as usize].finish,
            false => self.computes[(node - flows) as usize].end,
        };
        // The predecessor done last; of equals, a flow (the one of highest id) before a step.
        let released = (self.preds.of(c).iter()).filter_map(|&n| Some((done(n)?, n < flows, n))).max();
        let step = &self.computes[c as usize];
        match released {
            Some((at, _, n)) if step.start.is_some_and(|s| s <= at) && n < flows => self.charge_flow(n, to),
            Some((at, _, n)) if step.start.is_some_and(|s| s <= at) => {
                let what = self.shape.describe(n - flows);
                self.charge(to, Dimension::Other, what)
            }
            _ => self.charge(to, Dimension::Other, "start".to_string()),
        }
    }

    /// Waits until `to` for flow `f`: its dimension; a pipeline send's wait before the send
    /// started is the bubble.
    fn charge_flow(&mut self, f: u32, to: SimTime) {
        let record = &self.flows[f as usize];
        let name = match record.collective.is_empty() {
            true => format!("flow {f}"),
            false => record.collective.to_string(),
        };
        let dimension = self.shape.dimension(f);
        if dimension == Dimension::Pp {
            let sent = record.start.clamp(self.t, to);
            self.charge(sent, Dimension::Bubble, name.clone());
        }
        self.charge(to, dimension, name);
    }

    fn charge(&mut self, to: SimTime, dimension: Dimension, released_by: String) {
        if to > self.t {
            self.waits.push((self.t, to, dimension, released_by));
            self.t = to;
        }
    }
}

/// The waits as a critical path: consecutive waits of one dimension merged, the
/// [`MAX_PATH`] longest kept, in time order.
fn path(waits: Vec<(SimTime, SimTime, Dimension, String)>) -> Vec<Wait> {
    let mut merged: Vec<Wait> = Vec::new();
    for (from, to, d, by) in waits {
        match merged.last_mut() {
            Some(w) if w.dimension == d.name() => {
                w.to_ns = to;
                w.wait_ns += to - from;
                w.released_by = by;
            }
            _ => {
                merged.push(Wait { from_ns: from, to_ns: to, wait_ns: to - from, dimension: d.name(), released_by: by })
            }
        }
    }
    if merged.len() > MAX_PATH {
        let mut order: Vec<usize> = (0..merged.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(merged[i].wait_ns), i));
        let mut keep = vec![false; merged.len()];
        order[..MAX_PATH].iter().for_each(|&i| keep[i] = true);
        let mut i = 0;
        merged.retain(|_| {
            i += 1;
            keep[i - 1]
        });
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predecessors_turn_the_edges_around() {
        // Two flows, three steps: step 0 waits for flow 1, step 1 for flow 0 and step 0, step 2
        // for nothing.
        let dependents: [&[u32]; 5] = [&[3], &[2], &[3], &[], &[]];
        let p = Predecessors::invert(2, 3, dependents.iter().copied());
        assert_eq!(p.of(0), &[1]);
        assert_eq!(p.of(1), &[0, 2]);
        assert!(p.of(2).is_empty());
    }

    #[test]
    fn a_long_path_keeps_its_longest_waits_in_time_order() {
        let dims = [Dimension::Tp, Dimension::Dp];
        let waits: Vec<_> = (0..40u64)
            .map(|i| (SimTime(100 * i), SimTime(100 * i + 1 + i % 7), dims[(i % 2) as usize], format!("w{i}")))
            .collect();
        let p = path(waits.clone());
        assert_eq!(p.len(), MAX_PATH);
        assert!(p.windows(2).all(|w| w[0].from_ns < w[1].from_ns), "time order");
        let shortest_kept = p.iter().map(|w| w.wait_ns).min().unwrap();
        let dropped = waits.iter().filter(|w| !p.iter().any(|k| k.from_ns == w.0));
        assert!(dropped.clone().count() == 8 && dropped.into_iter().all(|w| w.1 - w.0 <= shortest_kept));
        // Consecutive waits of one dimension merge, keeping the last one's release.
        let same = vec![
            (SimTime(0), SimTime(5), Dimension::Pp, "a".to_string()),
            (SimTime(9), SimTime(10), Dimension::Pp, "b".to_string()),
            (SimTime(12), SimTime(13), Dimension::Dp, "c".to_string()),
        ];
        let p = path(same);
        assert_eq!(p.len(), 2);
        assert_eq!(
            (p[0].from_ns, p[0].to_ns, p[0].wait_ns, p[0].released_by.as_str()),
            (SimTime(0), SimTime(10), SimTime(6), "b")
        );
    }
}
