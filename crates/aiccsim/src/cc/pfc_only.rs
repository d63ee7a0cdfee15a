//! No end-to-end congestion control: the sender always paces at line rate and only PFC
//! back-pressure (and, with PFC off, drops) holds it back. The baseline every paper compares with.
//!
//! Steady signal (fast-forward): the rate, which is the line rate and never drifts.

use super::{Algorithm, Cc, CongestionControl, FlowFacts};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// PFC-only has no parameters.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PfcOnlyConfig {}

pub struct PfcOnly {
    line_rate: f64,
}

impl Algorithm for PfcOnlyConfig {
    fn name(&self) -> &'static str {
        "none"
    }

    fn describe(&self) -> &'static str {
        "PFC only: line rate, no end-to-end reaction (alias: pfc_only)"
    }

    /// PFC-only never goes below the line.
    fn rate_floor(&self, facts: &FlowFacts) -> f64 {
        facts.line_rate.as_f64()
    }

    fn sender(&self, facts: &FlowFacts) -> Cc {
        Cc::None(PfcOnly::new(facts))
    }
}

impl PfcOnly {
    pub fn new(facts: &FlowFacts) -> Self {
        PfcOnly { line_rate: facts.line_rate.as_f64() }
    }
}

impl CongestionControl for PfcOnly {
    fn rate(&self) -> f64 {
        self.line_rate
    }

    fn steady_signal(&self) -> Option<f64> {
        Some(self.line_rate)
    }

    /// No state but the line rate: nothing to move.
    fn shift_clock(&mut self, _by: SimTime) {}
}
