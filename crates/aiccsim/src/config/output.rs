//! `[output]`: what a run records beyond the per-flow table and the summary.

use crate::time::{ByteSize, SimTime};
use serde::{Deserialize, Serialize};

/// Opt-in timelines, sampled every `sample_interval`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutputConfig {
    /// Sampling interval of `queues.csv` and `rates.csv`; no timelines when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_interval: Option<SimTime>,
    /// Which switches' egress queues to sample (switch numbers); all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_switches: Option<Vec<u32>>,
    /// Which flows' rate, window and throughput to sample; all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_flows: Option<Vec<u32>>,
    /// With the rates, each sampled flow's congestion-control state as its algorithm reports it
    /// (`cc_state.csv`); left out of the written scenario when off, as it was before it existed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cc_state: bool,
    /// RTT and one-way queuing delay statistics count only the samples taken from this time
    /// on (the steady phase after a start-up transient); none excluded when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<SimTime>,
    /// Warn before the run when its result files are expected to exceed this size.
    #[serde(default = "default_warn_above")]
    pub warn_above: ByteSize,
    /// Per-packet trace (`trace.csv`); none when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceConfig>,
}

/// Which packets `trace.csv` follows: both filters apply; an absent filter lets everything by.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// Packets of these flows (data, ACK, NACK, CNP; PFC frames belong to no flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<Vec<u32>>,
    /// Events at these nodes ("h3", "s0").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<String>>,
    /// Rows kept at most; later ones are only counted (`trace.rows_dropped` in summary.json).
    #[serde(default = "default_trace_rows")]
    pub max_rows: u64,
}

fn default_trace_rows() -> u64 {
    1_000_000
}

fn default_warn_above() -> ByteSize {
    ByteSize(1_000_000_000)
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig {
            sample_interval: None,
            warmup: None,
            queue_switches: None,
            rate_flows: None,
            cc_state: false,
            warn_above: default_warn_above(),
            trace: None,
        }
    }
}
