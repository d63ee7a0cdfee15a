//! What fast-forward skipped (`summary.json`'s `fast_forward`): the tolerance it judged steadiness
//! with, and every skip: which group (its lowest flow id and its size), from when to when.

use super::json_time::ns;
use crate::time::SimTime;
use serde::Serialize;

/// One skip: group `group` (named by its lowest flow id) was frozen over `[from, to)`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Skip {
    pub group: u32,
    pub flows: u32,
    #[serde(rename = "from_ns", serialize_with = "ns")]
    pub from: SimTime,
    #[serde(rename = "to_ns", serialize_with = "ns")]
    pub to: SimTime,
}

/// What one skip credited to one flow: the bytes it was given as delivered over `[from, to)`,
/// in which none of its packets was simulated (`skips.csv`; the derived figures weigh these
/// spans at `bytes / (to - from)` where the timelines have no sample).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowSkip {
    pub flow: u32,
    pub from: SimTime,
    pub to: SimTime,
    pub bytes: u64,
}

impl FlowSkip {
    /// The rate the skip credited, bit/s (0 for an empty span).
    pub fn rate_bps(&self) -> f64 {
        let secs = (self.to - self.from).as_secs_f64();
        if secs > 0.0 {
            self.bytes as f64 * 8.0 / secs
        } else {
            0.0
        }
    }
}

/// Everything a run's fast-forward did.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FastForwardReport {
    pub tolerance: f64,
    /// Why fast-forward did not run although the scenario asked for it (`None`: it ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub off_because: Option<String>,
    /// Simulated time skipped, summed over the groups (two groups skipped together count twice).
    #[serde(rename = "skipped_ns", serialize_with = "ns")]
    pub skipped: SimTime,
    /// Bytes credited to flows for their skipped stretches (delivered without being simulated).
    pub bytes_credited: u64,
    /// Checks of steadiness made.
    pub checks: u64,
    /// Per check and group not frozen, why not: the first condition that failed at the longest
    /// windows tried (`members_changed`, `too_few_packets`, `uneven_windows`,
    /// `in_flight_grows`, `loss`, `signal_drifts`, `never_steady_algorithm`, `pfc_or_drops`,
    /// `queue_drifts`), `not_converged` (below the line rate on a path with no busy port), or
    /// `too_near_an_end` (steady, but a message ends within a window).
    pub not_steady: std::collections::BTreeMap<String, u64>,
    pub skips: Vec<Skip>,
    /// Per skip, per flow it credited: the rows of `skips.csv`, in the order of the skips.
    #[serde(skip)]
    pub flow_skips: Vec<FlowSkip>,
}
