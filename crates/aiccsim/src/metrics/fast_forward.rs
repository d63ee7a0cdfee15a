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
}
