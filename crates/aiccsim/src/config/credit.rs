//! `switch.flow_control` and `[switch.credit]`: which lossless mechanism the fabric's links run,
//! PFC (`[switch.pfc]`) or InfiniBand-style credits, and the credit loop's settings.
//!
//! The two are alternatives for the whole fabric. Under `"credit"` PFC is off: the scenario is
//! read with `switch.pfc.enabled = false` written in (so that run.json shows it), and a
//! `[switch.pfc]` that asks for anything else (`enabled = true`, a threshold, a headroom, a
//! reserve) is refused, as are the settings that only a PFC or drop-tail switch has
//! (`switch.egress_alpha`) and those that would carry a packet at one priority on the wire and
//! charge it to another in the buffer (`switch.control_priority = "data"`). `[switch.credit]`
//! under `"pfc"` is refused too: it would be silently ignored.

use super::validate::fail;
use super::{ControlPriority, PfcConfig, SwitchConfig};
use crate::cc::Check;
use crate::time::{ByteSize, SimTime};
use serde::{Deserialize, Serialize};

/// `switch.flow_control`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FlowControl {
    /// Priority flow control as `[switch.pfc]` sets it (or none, with `pfc.enabled = false`).
    #[default]
    Pfc,
    /// A credit loop on every link into a fabric switch (`[switch.credit]`, `engine/net/credit.rs`).
    Credit,
}

impl FlowControl {
    pub(super) fn is_pfc(&self) -> bool {
        *self == FlowControl::Pfc
    }
}

/// `[switch.credit]`: each switch ingress port's receive buffer per priority, advertised to the
/// upstream as credits of `block` bytes, and how often freed credits go back.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CreditConfig {
    /// Receive buffer of each switch ingress port, per priority (an InfiniBand virtual lane's
    /// buffer). The default, 2048 blocks of 64 B, is the most credit one InfiniBand virtual lane
    /// can advertise (its credit limit is counted modulo 4096 blocks).
    #[serde(default = "default_buffer")]
    pub buffer: ByteSize,
    /// Bytes per credit: a packet takes whole blocks (InfiniBand's flow-control block is 64 B).
    #[serde(default = "default_block")]
    pub block: ByteSize,
    /// Freed credits go back in one update at the next multiple of this interval (InfiniBand
    /// sends flow-control packets periodically); 0: one update per packet, as it leaves.
    #[serde(default)]
    pub update_interval: SimTime,
}

fn default_buffer() -> ByteSize {
    ByteSize(2048 * 64)
}
fn default_block() -> ByteSize {
    ByteSize(64)
}

impl Default for CreditConfig {
    fn default() -> Self {
        CreditConfig { buffer: default_buffer(), block: default_block(), update_interval: SimTime::ZERO }
    }
}

/// Fills in what `switch.flow_control` implies, before the scenario is checked: under credits,
/// `[switch.credit]`'s defaults and PFC off. `text` is the scenario as written: whether it turns
/// PFC on by name is read there (`enabled = true` is also the default, which turning it off here
/// would otherwise swallow).
pub(super) fn resolve(sw: &mut SwitchConfig, text: &str) -> Check {
    if sw.flow_control != FlowControl::Credit {
        return Ok(());
    }
    let asks_pfc = (text.parse::<toml::Table>().ok())
        .and_then(|t| t.get("switch")?.get("pfc")?.get("enabled")?.as_bool())
        .unwrap_or(false);
    if asks_pfc {
        return fail(
            "switch.pfc.enabled",
            "PFC and credits are alternatives, and switch.flow_control = \"credit\" asks for credits: remove enabled = true (PFC is then off), or set flow_control = \"pfc\"",
        );
    }
    sw.pfc.enabled = false;
    sw.credit.get_or_insert_with(CreditConfig::default);
    Ok(())
}

/// The flow-control keys against each other and the credit loop's settings (`max_packet`: the
/// largest data packet, bytes).
pub(super) fn check(sw: &SwitchConfig, max_packet: u64) -> Check {
    let Some(credit) = sw.credit.filter(|_| sw.flow_control == FlowControl::Credit) else {
        if sw.credit.is_some() {
            return fail(
                "switch.credit",
                "is for switch.flow_control = \"credit\", and this fabric runs PFC (the default): set flow_control = \"credit\", or remove [switch.credit]",
            );
        }
        return Ok(());
    };
    // PFC's own settings, each of which would be ignored.
    let pfc = PfcConfig::default();
    let given = [
        ("xoff", sw.pfc.xoff.is_some()),
        ("dynamic_alpha", sw.pfc.dynamic_alpha != pfc.dynamic_alpha),
        ("xon_delta", sw.pfc.xon_delta != pfc.xon_delta),
        ("headroom", sw.pfc.headroom.is_some()),
        ("reserve", sw.pfc.reserve != pfc.reserve),
    ];
    if let Some((key, _)) = given.iter().find(|(_, set)| *set) {
        return fail(
            format!("switch.pfc.{key}"),
            "is a PFC setting, and switch.flow_control = \"credit\" runs no PFC: remove it, or set flow_control = \"pfc\"",
        );
    }
    if sw.egress_alpha.is_some() {
        return fail(
            "switch.egress_alpha",
            "limits a drop-tail switch's egress queues, and a credit-based fabric never drops: remove it, or set switch.flow_control = \"pfc\" with pfc = { enabled = false }",
        );
    }
    if sw.control_priority == ControlPriority::Data {
        return fail(
            "switch.control_priority",
            "\"data\" moves ACKs into the data priority inside the switch, where they would take credits their sender never had: use \"high\" with switch.flow_control = \"credit\"",
        );
    }
    if credit.block.0 == 0 || credit.block.0 > 65_536 {
        return fail("switch.credit.block", format!("must be 1B..64KiB (InfiniBand's is 64B), got {}", credit.block));
    }
    if credit.buffer.0 < max_packet {
        return fail(
            "switch.credit.buffer",
            format!(
                "{} holds no full data packet ({max_packet} B), so no data packet could ever be sent into a switch; give at least one packet, e.g. the default \"128KiB\" (2048 blocks of 64 B)",
                credit.buffer
            ),
        );
    }
    let blocks = credit.buffer.0 / credit.block.0;
    if blocks < max_packet.div_ceil(credit.block.0) {
        return fail(
            "switch.credit.buffer",
            format!(
                "{} is {blocks} blocks of {}, fewer than the {} blocks one full data packet ({max_packet} B) takes; raise the buffer or use smaller blocks",
                credit.buffer,
                credit.block,
                max_packet.div_ceil(credit.block.0)
            ),
        );
    }
    if blocks > u32::MAX as u64 {
        return fail(
            "switch.credit.buffer",
            format!("{} is more than 2^32 blocks of {}; use larger blocks", credit.buffer, credit.block),
        );
    }
    Ok(())
}
