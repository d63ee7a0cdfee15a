//! The pipeline schedules: the order in which one stage runs the forward and backward passes of
//! its microbatches, as Megatron-LM's schedules (`megatron/core/pipeline_parallel/schedules.py`)
//! order them. Every rank of a stage runs its stage's order; `schedule.rs` turns each pass into
//! compute steps and flows.

use serde::{Deserialize, Serialize};

/// Which pipeline schedule.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PipelineSchedule {
    /// GPipe (Huang et al., 2019): every microbatch's forward, then every backward, the last
    /// microbatch's first (the order of the GPipe paper's figure 2).
    Gpipe,
    /// One forward, one backward (Narayanan et al., SC'21; Megatron-LM's default without
    /// virtual stages): stage s runs pp - s - 1 forwards to fill the pipeline, then alternates
    /// a forward and a backward, then drains the remaining backwards.
    #[default]
    #[serde(rename = "1f1b")]
    OneFOneB,
    /// Megatron-LM's interleaved 1F1B: each stage holds `virtual_stages` model chunks (chunk v of
    /// stage s holds the layers of virtual stage v x pp + s) and runs microbatches through them
    /// in groups of pp, which shrinks the bubble by the number of chunks.
    #[serde(rename = "interleaved_1f1b")]
    Interleaved1F1B,
}

impl PipelineSchedule {
    pub fn name(self) -> &'static str {
        match self {
            PipelineSchedule::Gpipe => "gpipe",
            PipelineSchedule::OneFOneB => "1f1b",
            PipelineSchedule::Interleaved1F1B => "interleaved_1f1b",
        }
    }
}

/// A forward or a backward pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pass {
    Forward,
    Backward,
}

/// One pass of one microbatch through one of a stage's model chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipeOp {
    pub microbatch: u32,
    /// The stage's model chunk (0 without virtual stages).
    pub chunk: u32,
    pub pass: Pass,
}

/// Stage `stage`'s order of passes, with `pp` stages, `m` microbatches and `v` model chunks per
/// stage (1 unless interleaved). The interleaved schedule needs `m` a multiple of `pp`.
pub fn order(schedule: PipelineSchedule, pp: u32, m: u32, v: u32, stage: u32) -> Vec<PipeOp> {
    let op = |microbatch, chunk, pass| PipeOp { microbatch, chunk, pass };
    match schedule {
        PipelineSchedule::Gpipe => {
            let forwards = (0..m).map(|i| op(i, 0, Pass::Forward));
            forwards.chain((0..m).rev().map(|i| op(i, 0, Pass::Backward))).collect()
        }
        PipelineSchedule::OneFOneB => {
            let warmup = (pp - stage - 1).min(m);
            let mut out: Vec<PipeOp> = (0..warmup).map(|i| op(i, 0, Pass::Forward)).collect();
            for i in 0..m - warmup {
                out.push(op(warmup + i, 0, Pass::Forward));
                out.push(op(i, 0, Pass::Backward));
            }
            out.extend((m - warmup..m).map(|i| op(i, 0, Pass::Backward)));
            out
        }
        PipelineSchedule::Interleaved1F1B => interleaved(pp, m, v, stage),
    }
}

/// Megatron-LM's `forward_backward_pipelining_with_interleaving`: the k-th forward of a stage
/// is microbatch (k / (pp v)) pp + k % pp in chunk (k mod pp v) / pp; the k-th backward the same
/// microbatch in the chunks counted from the last. Warm-up: 2 (pp - stage - 1) + (v - 1) pp
/// forwards (all of them when m = pp), then one forward and one backward, then the rest of the
/// backwards.
fn interleaved(pp: u32, m: u32, v: u32, stage: u32) -> Vec<PipeOp> {
    let total = m * v;
    let nth = |k: u32, pass: Pass| {
        let in_group = k % (pp * v);
        let chunk = in_group / pp;
        let microbatch = k / (pp * v) * pp + k % pp;
        let chunk = if pass == Pass::Forward { chunk } else { v - 1 - chunk };
        PipeOp { microbatch, chunk, pass }
    };
    let warmup = if m == pp { total } else { (2 * (pp - stage - 1) + (v - 1) * pp).min(total) };
    let mut out: Vec<PipeOp> = (0..warmup).map(|k| nth(k, Pass::Forward)).collect();
    for k in 0..total - warmup {
        out.push(nth(warmup + k, Pass::Forward));
        out.push(nth(k, Pass::Backward));
    }
    out.extend((total - warmup..total).map(|k| nth(k, Pass::Backward)));
    out
}

/// The pass a pass waits for from another stage: a forward waits for the same microbatch's
/// forward through the model chunk before it (the stage before, or the last stage's previous
/// chunk), a backward for the backward through the chunk after it. `None` for the first
/// virtual stage's forward and the last one's backward (the latter follows the stage's own
/// forward of the microbatch). Virtual stage v x pp + s is chunk v of stage s.
pub fn upstream(pp: u32, v: u32, stage: u32, op: PipeOp) -> Option<(u32, PipeOp)> {
    let virt = op.chunk * pp + stage;
    let other = match op.pass {
        Pass::Forward => virt.checked_sub(1)?,
        Pass::Backward => Some(virt + 1).filter(|&x| x < pp * v)?,
    };
    Some((other % pp, PipeOp { chunk: other / pp, ..op }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(ops: &[PipeOp]) -> String {
        let name = |o: &PipeOp| {
            let p = if o.pass == Pass::Forward { 'F' } else { 'B' };
            if o.chunk > 0 {
                format!("{p}{}.{}", o.microbatch, o.chunk)
            } else {
                format!("{p}{}", o.microbatch)
            }
        };
        ops.iter().map(name).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn one_f_one_b_warms_up_by_the_stages_after() {
        // Narayanan et al. SC'21, figure 4 (top): 4 stages, 8 microbatches.
        assert_eq!(
            names(&order(PipelineSchedule::OneFOneB, 4, 8, 1, 0)),
            "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7"
        );
        assert_eq!(
            names(&order(PipelineSchedule::OneFOneB, 4, 8, 1, 3)),
            "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7"
        );
        // Fewer microbatches than stages: the warm-up is every microbatch.
        assert_eq!(names(&order(PipelineSchedule::OneFOneB, 4, 2, 1, 0)), "F0 F1 B0 B1");
        assert_eq!(names(&order(PipelineSchedule::Gpipe, 2, 3, 1, 1)), "F0 F1 F2 B2 B1 B0");
    }

    #[test]
    fn interleaved_matches_megatrons_order() {
        // 2 stages, 4 microbatches, 2 chunks: stage 0 warms up with 2 + 2 = 4 forwards.
        let s0 = order(PipelineSchedule::Interleaved1F1B, 2, 4, 2, 0);
        assert_eq!(names(&s0), "F0 F1 F0.1 F1.1 F2 B0.1 F3 B1.1 F2.1 B0 F3.1 B1 B2.1 B3.1 B2 B3");
        let s1 = order(PipelineSchedule::Interleaved1F1B, 2, 4, 2, 1);
        assert_eq!(names(&s1), "F0 F1 F0.1 B0.1 F1.1 B1.1 F2 B0 F3 B1 F2.1 B2.1 F3.1 B3.1 B2 B3");
        for ops in [s0, s1] {
            assert_eq!(ops.len(), 16, "every microbatch through every chunk, both ways");
        }
    }

    #[test]
    fn upstream_wraps_from_the_last_stage_to_the_next_chunk() {
        let f = |microbatch, chunk| PipeOp { microbatch, chunk, pass: Pass::Forward };
        let b = |microbatch, chunk| PipeOp { microbatch, chunk, pass: Pass::Backward };
        assert_eq!(upstream(4, 2, 0, f(3, 0)), None);
        assert_eq!(upstream(4, 2, 2, f(3, 0)), Some((1, f(3, 0))));
        assert_eq!(upstream(4, 2, 0, f(3, 1)), Some((3, f(3, 0))));
        assert_eq!(upstream(4, 2, 3, b(1, 0)), Some((0, b(1, 1))));
        assert_eq!(upstream(4, 2, 3, b(1, 1)), None);
        assert_eq!(upstream(4, 1, 1, b(1, 0)), Some((2, b(1, 0))));
    }
}
