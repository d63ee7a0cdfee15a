//! One row of the experiment table (`table.csv` of `aiccsim reproduce`): a run's figures in the
//! columns [`EXPERIMENT`] describes, from its summary and the derived figures of
//! `metrics/derived.rs`.

use super::tables::{Measure, EXPERIMENT};
use super::{Results, TimeDistribution};
use crate::time::SimTime;

/// What the experiment asks of each run besides the summary: the columns that need a choice.
#[derive(Clone, Debug, Default)]
pub struct RowOptions {
    /// `mean_queue_kb`: the (switch, port) whose queue is averaged.
    pub queue: Option<(u32, u32)>,
    /// `recovery_us`: the flow whose recovery is timed.
    pub recovery_of: Option<u32>,
    /// `min_jain`: the segments' length and the settling time at each one's start.
    pub segments: Option<(SimTime, SimTime)>,
    /// `min_link_util_pct` and `mean_link_util_pct`: the links, as (node, peer) in `ports.csv`.
    pub links: Vec<[String; 2]>,
}

/// The run's folder in an experiment's output: its name with ASCII letters (in lower case) and
/// digits kept, anything else `_`.
pub fn slug(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect()
}

/// The experiment table's row of the run called `name`, one cell per column of [`EXPERIMENT`].
pub fn row(name: &str, r: &Results, options: &RowOptions) -> Vec<String> {
    let s = &r.summary;
    let v = r.view();
    let utilisation: Vec<f64> = (options.links.iter())
        .filter_map(|[from, to]| v.link_index(from, to))
        .filter_map(|i| v.link_utilisation_pct(i))
        .collect();
    let sampled_us = |d: &TimeDistribution, t: SimTime| (d.count > 0).then(|| t.as_us_f64());
    let iterations = s.iterations.as_ref();
    let count = |n: u64| Some(n as f64);
    let figures: [Option<f64>; 34] = [
        count(s.flows as u64),
        count(s.flows_finished as u64),
        s.completion_time_ns.map(|t| t.as_us_f64()),
        s.completion_time_ns.filter(|&t| t > SimTime::ZERO).map(|t| s.bytes as f64 * 8.0 / t.as_ns_f64()),
        Some(s.fct_ns.max.as_us_f64()),
        Some(s.fct_ns.mean.as_us_f64()),
        Some(s.fct_ns.p99.as_us_f64()),
        Some(s.slowdown.max),
        Some(s.slowdown.p99),
        count(s.pause_frames),
        count(s.packets_dropped),
        count(s.trimming.as_ref().map_or(0, |t| t.packets_trimmed)),
        count(s.timeouts),
        Some(s.retransmitted_bytes as f64 / 1e6),
        count(s.ecn_marks),
        count(s.cnps),
        Some(s.max_switch_queue_bytes as f64 / 1e3),
        options.queue.and_then(|(switch, port)| v.mean_queue_kb(switch, port)),
        Some(s.telemetry.header_overhead * 100.0),
        sampled_us(&s.rtt_ns, s.rtt_ns.mean),
        sampled_us(&s.queuing_delay_ns, s.queuing_delay_ns.mean),
        sampled_us(&s.queuing_delay_ns, s.queuing_delay_ns.p99),
        options.recovery_of.and_then(|f| v.recovery_us(f)),
        v.jain_steady(),
        options.segments.and_then(|(len, settle)| v.min_segment_jain(len, settle)),
        iterations.and_then(|i| i.mean_duration_ns).map(|t| t.as_us_f64()),
        iterations.and_then(|i| i.mean_exposed_comm_ns).map(|t| t.as_us_f64()),
        v.busbw_bps().map(|b| b / 1e9),
        v.busbw_bound_bps().map(|b| b / 1e9),
        v.mean_busbw_bps().map(|b| b / 1e9),
        v.warm_busbw_bps().map(|b| b / 1e9),
        v.line_rate_pct(),
        utilisation.iter().copied().min_by(f64::total_cmp),
        (!utilisation.is_empty()).then(|| utilisation.iter().sum::<f64>() / utilisation.len() as f64),
    ];
    let mut cells = vec![name.to_string()];
    cells.extend(EXPERIMENT[1..].iter().zip(figures).map(|(m, f): (&Measure, _)| m.cell(f)));
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slug_keeps_ascii_letters_and_digits_only() {
        assert_eq!(slug("PFC only"), "pfc_only");
        assert_eq!(slug("DCQCN, T=55us"), "dcqcn__t_55us");
        assert_eq!(slug("Größe"), "gr__e");
    }

    #[test]
    fn cells_take_their_columns_decimals() {
        let column = |name: &str| super::super::tables::experiment_column(name).unwrap();
        assert_eq!(column("completion_us").cell(Some(13416.54)), "13416.5");
        assert_eq!(column("jain_steady").cell(Some(1.0)), "1.0000");
        assert_eq!(column("recovery_us").cell(Some(f64::INFINITY)), "inf");
        assert_eq!(column("pause_frames").cell(Some(4173.0)), "4173");
        assert_eq!(column("min_jain").cell(None), "");
        assert_eq!(column("mean_rtt_us").label(), "mean RTT (µs)");
    }
}
