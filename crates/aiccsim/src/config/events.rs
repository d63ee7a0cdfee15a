//! `[[events]]`: what happens to the fabric's links during the run. At a time, a link named by
//! its two end nodes is slowed down (a new bandwidth), fails (what is sent onto it, or is on it,
//! is lost), or comes back. The switches route around a failed link once they have detected it
//! (`detection`, or `switch.failure_detection`), and over a restored one the same time after it
//! came back (`engine/net/failures.rs`).

use crate::time::{Bandwidth, SimTime};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkEvent {
    /// When it happens.
    pub at: SimTime,
    /// The link's two end nodes ("s0", "h3"), in either order.
    pub link: [String; 2],
    /// Which of several parallel links between the two nodes (0 for the first connected);
    /// absent: all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    pub action: LinkAction,
    /// `slow`: the link's new bandwidth, both directions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<Bandwidth>,
    /// `fail` and `restore`: how long until the switches route around the link (or over it
    /// again); absent: `switch.failure_detection`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detection: Option<SimTime>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LinkAction {
    /// The link runs at `bandwidth` from now on (a packet being serialised finishes at the old
    /// speed); routes do not change.
    Slow,
    /// The link goes dark in both directions: packets on it and packets sent onto it are lost.
    Fail,
    /// A failed link carries packets again.
    Restore,
}

impl LinkAction {
    pub fn name(self) -> &'static str {
        match self {
            LinkAction::Slow => "slow",
            LinkAction::Fail => "fail",
            LinkAction::Restore => "restore",
        }
    }
}

impl LinkEvent {
    /// The link as the scenario names it: "s0-s2", "s0-s2 (index 1)".
    pub fn describe(&self) -> String {
        match self.index {
            Some(i) => format!("{}-{} (index {i})", self.link[0], self.link[1]),
            None => format!("{}-{}", self.link[0], self.link[1]),
        }
    }
}
