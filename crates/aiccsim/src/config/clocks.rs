//! `[clocks]`: the hosts' clock errors, which one-way delay measurements carry (the engine's
//! `nic/clock.rs` draws them).

use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// How the per-sample error is distributed.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NoiseDistribution {
    /// Uniform in [-noise, noise] (PC4 §IV-E).
    #[default]
    Uniform,
    /// Normal with standard deviation `noise`.
    Gaussian,
}

/// `[clocks]`: synchronisation error of the hosts' clocks.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClocksConfig {
    /// Each host's clock is off by a fixed amount drawn uniformly from [-offset, offset].
    #[serde(default)]
    pub offset: SimTime,
    /// Error added to each one-way-delay sample (see `noise_distribution`).
    #[serde(default)]
    pub noise: SimTime,
    #[serde(default)]
    pub noise_distribution: NoiseDistribution,
}
