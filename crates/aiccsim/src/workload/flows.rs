//! `kind = "flows"`: an explicit list of flows, each with its own ends, size and start, and the
//! earlier flows it waits for: until they are delivered (`after`), or until their senders hold
//! the acknowledgement of their last byte (`after_acked`).

use super::kind::{fail, Ranks, Size, WorkloadKind};
use super::{FlowDef, Workload};
use crate::cc::Check;
use crate::tags::CollectiveTag;
use crate::time::{ByteSize, SimTime};
use serde::{Deserialize, Serialize};

/// The registry's example: `docs/scenario.md` shows it, and a test runs it.
pub const EXAMPLE: &str = r#"[workload]
kind = "flows"
flows = [
  { src = 1, dst = 0, size = "2MB" },                                 # flow 0
  { src = 2, dst = 0, size = "2MB", start = "10us" },                 # flow 1
  { src = 0, dst = 3, size = "4MB", start = "5us", after = [0, 1] },  # flow 2
]
"#;

/// An explicit list of flows.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowList {
    pub flows: Vec<FlowSpec>,
}

/// One flow of the list.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size: ByteSize,
    #[serde(default)]
    pub start: SimTime,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective: Option<CollectiveTag>,
    /// Flows (by position in the list, earlier ones only) that must be delivered before this one
    /// starts; it then starts at the later of `start` and their last delivery.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<u32>,
    /// Flows (earlier ones only, none also in `after`) whose senders must have every byte
    /// acknowledged before this one starts: a host that posts its next transfer when the
    /// previous one completes at the sender, as a transport's completion reports it (UEC's
    /// htsim's `send_done_trigger`). One ACK's way back later than `after`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after_acked: Vec<u32>,
    /// The sender stops taking new data at this time: the flow ends with what it has sent by
    /// then (its size in the results), delivered in full. Absent: it sends all of `size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<SimTime>,
    /// Flows with the same `src`, `dst` and `connection` ride one queue pair, one after another
    /// (`nic.connections`). Absent: a queue pair of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<u32>,
}

impl WorkloadKind for FlowList {
    fn check(&self) -> Check {
        if self.flows.is_empty() {
            return fail("workload.flows", "the flow list is empty; add at least one { src, dst, size }");
        }
        for (i, f) in self.flows.iter().enumerate() {
            let key = |k: &str| format!("workload.flows[{i}].{k}");
            if f.src == f.dst {
                return fail(key("dst"), format!("host {} sends to itself", f.src));
            }
            if f.size.0 == 0 {
                return fail(key("size"), "a flow must carry at least 1 byte");
            }
            if let Some(c) = f.collective {
                if c.group_size < 2 {
                    return fail(key("collective.group_size"), "a collective needs at least 2 ranks");
                }
            }
            if let Some(stop) = f.stop {
                if stop <= f.start || !f.after.is_empty() || !f.after_acked.is_empty() {
                    return fail(
                        key("stop"),
                        format!(
                            "must be after the flow's start ({}) and is not allowed with `after` or `after_acked`",
                            f.start
                        ),
                    );
                }
            }
            for (name, waits) in [("after", &f.after), ("after_acked", &f.after_acked)] {
                if let Some(&bad) = waits.iter().find(|&&d| d as usize >= i) {
                    return fail(
                        key(name),
                        format!("flow {bad} is not listed before flow {i}; `{name}` names earlier flows only (which also rules out cycles)"),
                    );
                }
            }
            if let Some(&both) = f.after_acked.iter().find(|d| f.after.contains(d)) {
                return fail(
                    key("after_acked"),
                    format!("flow {both} is in `after` too; a flow is acknowledged only after it is delivered, so name it in one of them"),
                );
            }
        }
        Ok(())
    }

    fn check_ranks(&self, ranks: &Ranks) -> Check {
        for (i, f) in self.flows.iter().enumerate() {
            ranks.has(&format!("workload.flows[{i}].src"), f.src)?;
            ranks.has(&format!("workload.flows[{i}].dst"), f.dst)?;
        }
        Ok(())
    }

    fn size(&self, _ranks: u32) -> Size {
        let mut per_host: std::collections::BTreeMap<u32, u128> = Default::default();
        for f in &self.flows {
            *per_host.entry(f.src).or_default() += u128::from(f.size.0);
            *per_host.entry(f.dst).or_default() += u128::from(f.size.0);
        }
        let bytes = self.flows.iter().map(|f| u128::from(f.size.0)).sum();
        // Sent and received share the host's full-duplex link in opposite directions.
        let busiest = per_host.values().max().copied().unwrap_or(0) / 2;
        let latest = self.flows.iter().map(|f| f.start).max().unwrap_or_default();
        Size::of_flows(self.flows.len() as u64, bytes, busiest, latest)
    }

    fn expand(&self, _ranks: u32, _seed: u64) -> Workload {
        Workload::of_flows(
            (self.flows.iter())
                .map(|f| FlowDef {
                    src: f.src,
                    dst: f.dst,
                    size: f.size.0,
                    start: f.start,
                    collective: f.collective,
                    after: f.after.clone(),
                    after_acked: f.after_acked.clone(),
                    after_compute: Vec::new(),
                    stop: f.stop,
                    connection: f.connection,
                    job: 0,
                })
                .collect(),
        )
    }

    fn too_many_flows(&self) -> (&'static str, &'static str) {
        ("flows", "split the list over several scenarios")
    }
}
