//! RCCC: the receiver-credit congestion control of the Ultra Ethernet transport (UE 1.0
//! specification, congestion management sublayer), as the UEC's reference simulator runs it
//! (ultraethernet/uet-htsim, `htsim/sim/uec.cpp`: `UecPullPacer`, `UecSink::pull`,
//! `UecSrc::handlePull`, `UecSrc::stopSpeculating`, `UecSrc::computePullTarget`).
//!
//! The receiver paces credit: its pull pacer hands out its line rate (times `credit_rate`, 0.99
//! in the reference) round-robin among the senders that want credit, and a sender sends only
//! while it holds credit. What changes here is how the credit travels:
//!
//! - **Credit on ACKs.** The reference's receiver sends separate pull packets, 4 MTU of credit
//!   each, paced at its rate. The receiver half here has no timer and no packets of its own; it
//!   sees each data packet ([`ReceiverCc::on_data`]) and writes into the flow's next ACK. So it
//!   accrues credit in time instead: at each data packet of a flow it adds the time since that
//!   flow's previous packet times its share of the rate (the rate over the senders it is
//!   receiving from), and the ACK carries the flow's cumulative credit. Summed over the flows,
//!   the accruals telescope to rate x time: the credit the pull pacer would have sent, delivered
//!   with the flow's ACKs rather than on its own packets, so at most one packet gap later.
//! - **Active senders** are those the receiver has seen a packet of and not yet received whole
//!   ([`DataArrival::incoming_seen`]): what a receiver can count on its own. The reference's
//!   pacer round-robins among the senders whose requested credit (their pull target) it has not
//!   yet granted, which drops a sender once its last bytes are credited rather than received.
//! - **Speculation.** A sender starts with `initial_credit` bandwidth-delay products of credit
//!   (the reference's `_credit = _configured_maxwnd`), and at its first ACK with credit it stops
//!   speculating: credit it has not spent is dropped, a debt kept (`stopSpeculating`). From then
//!   on it gains what the receiver granted since that ACK's packet, up to `max_credit` products
//!   held at once (`handlePull`'s cap); the receiver likewise never accrues more than that at one
//!   packet, so a flow back from an idle stretch starts with at most `max_credit` products, as
//!   the reference's slow pulls give an idle sender.
//! - **No credit, nothing in flight.** A sender may send while it holds any credit (the
//!   reference's `credit() > 0`), so its credit ends below zero by less than a packet. With no
//!   credit and nothing in flight, the reference sends a header-only request-to-send (RTS) to
//!   ask the receiver for credit; here the window rule (a packet may leave while the bytes in
//!   flight are fewer than the window, and the window is at least one byte) lets one data packet
//!   out instead, which asks for credit the same way.
//!
//! The credit is a window for the NIC: the bytes in flight plus the credit held, so that a
//! packet may leave exactly while credit remains. The bytes in flight are those of the last ACK
//! plus the payload sent since; a NACK or timeout sets them to zero until the next ACK (the NIC
//! takes packets out of flight then, how many depends on the recovery), which can only hold a
//! packet back until that ACK, never let one through without credit.
//!
//! The ACK's two feedback words are the flow's cumulative credit in bytes (wrapping at 2^32: the
//! sender compares them as sequence numbers, as the reference's pull numbers) and the count of
//! active senders (never zero, which tells a credit ACK from an ACK without credit).
//!
//! NSCC uses the same credit when its `receiver_credit` key is set (`nscc.rs`): its window is
//! then the smaller of its own and this one.
//!
//! Steady signal (fast-forward): the credit rate, in bits/s (the receiver's rate over its active
//! senders): it alone sets how fast the sender sends; the window moves packet by packet around
//! it. The sender half holds no time; the receiver half moves the time of its flow's last packet.

use super::{AckInfo, Algorithm, Cc, CcContext, CcEvent, Check, CongestionControl, DataArrival, FlowFacts};
use super::{Receiver, ReceiverAction, ReceiverCc};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// RCCC parameters. Defaults: the UEC reference simulator's (uet-htsim `main_uec.cpp` and
/// `uec.cpp`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RcccConfig {
    /// The receiver's credit rate as a fraction of its line rate (`main_uec.cpp` builds each
    /// `UecPullPacer` with a rate modifier of 0.99: "pull at just less than line rate").
    pub credit_rate: f64,
    /// Credit a sender starts with, in bandwidth-delay products of its line rate and base RTT
    /// (`UecSrc::startConnection`: `_credit = _configured_maxwnd`, which `initRccc` sets to 1.5
    /// BDP).
    pub initial_credit: f64,
    /// The most credit a sender holds, and a receiver grants at one packet, in bandwidth-delay
    /// products (`UecSrc::handlePull` caps the credit at `_configured_maxwnd`, 1.5 BDP).
    pub max_credit: f64,
}

impl Default for RcccConfig {
    fn default() -> Self {
        RcccConfig { credit_rate: 0.99, initial_credit: 1.5, max_credit: 1.5 }
    }
}

impl RcccConfig {
    /// The checks of the three keys, under `cc.` (NSCC with `receiver_credit` uses the defaults).
    pub(crate) fn check(&self) -> Check {
        let key = |k: &str| format!("cc.{k}");
        if !(self.credit_rate > 0.0 && self.credit_rate <= 1.0) {
            return Err((key("credit_rate"), format!("must be in (0, 1], got {}", self.credit_rate)));
        }
        if !(self.initial_credit >= 0.0 && self.initial_credit <= 100.0) {
            return Err((key("initial_credit"), format!("must be in [0, 100] BDPs, got {}", self.initial_credit)));
        }
        if !(self.max_credit > 0.0 && self.max_credit <= 100.0) {
            return Err((key("max_credit"), format!("must be in (0, 100] BDPs, got {}", self.max_credit)));
        }
        if self.initial_credit > self.max_credit {
            return Err((
                key("initial_credit"),
                format!("must be at most max_credit ({}), got {}", self.max_credit, self.initial_credit),
            ));
        }
        Ok(())
    }

    /// The flow's bandwidth-delay product (bytes): its line rate over its base RTT.
    fn bdp(facts: &FlowFacts) -> f64 {
        facts.line_rate.as_f64() * facts.base_rtt.as_secs_f64() / 8.0
    }

    /// The most credit a sender of this flow holds, bytes (at least one full packet).
    pub(crate) fn max_credit_bytes(&self, facts: &FlowFacts) -> f64 {
        (self.max_credit * Self::bdp(facts)).max(facts.packet_bytes as f64)
    }

    /// The receiver's credit rate, bits/s.
    fn rate(&self, facts: &FlowFacts) -> f64 {
        facts.receiver_line_rate.as_f64() * self.credit_rate
    }
}

impl Algorithm for RcccConfig {
    fn name(&self) -> &'static str {
        "rccc"
    }

    fn describe(&self) -> &'static str {
        "RCCC (Ultra Ethernet): the receiver grants its line rate in credit, shared among the senders it is receiving from, on ACKs; a sender sends only while it holds credit"
    }

    fn validate(&self) -> Check {
        self.check()
    }

    fn sender(&self, facts: &FlowFacts) -> Cc {
        Cc::Rccc(Rccc::new(self, facts))
    }

    fn receiver(&self, facts: &FlowFacts) -> Receiver {
        Receiver::Rccc(RcccReceiver::new(self, facts))
    }
}

/// The receiver half: a flow's share of the receiver's pull pacer, accrued between its packets.
/// (24 bytes, as the other receiver halves, so that the enum of them, one per connection read at
/// every data packet, stays 32 bytes: hence the `f32`s, exact to 10^-7, and the `NEVER` time.)
pub struct RcccReceiver {
    /// Bytes of credit per picosecond at the receiver's credit rate.
    rate_per_ps: f32,
    /// The most credit granted at one packet, bytes.
    max_grant: f32,
    /// Credit granted so far, bytes.
    granted: f64,
    /// When the flow's previous packet arrived (`NEVER` before its first).
    last: SimTime,
}

/// No packet yet.
const NEVER: SimTime = SimTime::MAX;

impl RcccReceiver {
    pub fn new(cfg: &RcccConfig, facts: &FlowFacts) -> Self {
        RcccReceiver {
            rate_per_ps: (cfg.rate(facts) / 8.0 / 1e12) as f32,
            max_grant: cfg.max_credit_bytes(facts) as f32,
            granted: 0.0,
            last: NEVER,
        }
    }
}

impl ReceiverCc for RcccReceiver {
    fn on_data(&mut self, pkt: &DataArrival) -> ReceiverAction {
        let senders = pkt.incoming_seen.max(1);
        if self.last != NEVER {
            // The pacer's credits to this flow since its previous packet: its share of the rate.
            let gap = pkt.now.saturating_sub(self.last).0 as f64;
            let share = gap * f64::from(self.rate_per_ps) / f64::from(senders);
            self.granted += share.min(f64::from(self.max_grant));
        }
        self.last = pkt.now;
        // Cumulative bytes, modulo 2^32 (a sequence number the sender compares by difference).
        let granted = (self.granted as u64) as u32;
        ReceiverAction { send_cnp: false, feedback: [granted, senders] }
    }

    fn shift_clock(&mut self, by: SimTime) {
        if self.last != NEVER {
            self.last += by;
        }
    }
}

/// The sender's credit, read from ACKs and spent by packets; shared by RCCC and NSCC's
/// `receiver_credit`.
pub(crate) struct Credit {
    /// Bytes (wire) the sender may still send; below zero by less than a packet after the
    /// packet that spent the last of it, or by more when a packet left with none (the RTS's
    /// stand-in).
    credit: f64,
    max: f64,
    /// The last cumulative grant heard (`None`: still speculating).
    grant: Option<u32>,
    /// Active senders at the receiver, as the last credit ACK said (0 before one).
    senders: u32,
    /// Payload bytes in flight: the last ACK's, plus what was sent since.
    in_flight: u64,
    header: u64,
    /// The receiver's credit rate, bits/s.
    receiver_rate: f64,
}

impl Credit {
    pub(crate) fn new(cfg: &RcccConfig, facts: &FlowFacts) -> Self {
        Credit {
            credit: cfg.initial_credit * RcccConfig::bdp(facts),
            max: cfg.max_credit_bytes(facts),
            grant: None,
            senders: 0,
            in_flight: 0,
            header: facts.packet_bytes.saturating_sub(facts.mtu),
            receiver_rate: cfg.rate(facts),
        }
    }

    pub(crate) fn on_ack(&mut self, ack: &AckInfo<'_>) {
        self.in_flight = ack.in_flight;
        let [granted, senders] = ack.feedback;
        if senders == 0 {
            return; // no credit in this ACK
        }
        self.senders = senders;
        match self.grant {
            None => {
                // The first credit ACK ends the speculation: unspent credit goes, a debt stays.
                self.credit = self.credit.min(0.0);
                self.grant = Some(granted);
            }
            Some(last) => {
                // Newer grants only: ACKs overtaken on other paths carry older ones.
                let new = granted.wrapping_sub(last) as i32;
                if new > 0 {
                    self.credit = (self.credit + new as f64).min(self.max);
                    self.grant = Some(granted);
                }
            }
        }
    }

    pub(crate) fn on_send(&mut self, bytes: u64) {
        self.credit -= bytes as f64;
        self.in_flight += bytes.saturating_sub(self.header);
    }

    /// A NACK or timeout: the NIC takes packets out of flight; how many, the next ACK tells.
    pub(crate) fn on_loss(&mut self) {
        self.in_flight = 0;
    }

    /// A NACK (a trimmed or lost packet) also ends the speculation, as an ACK does: unspent
    /// credit goes, a debt stays (`UecSrc::processNack` calls `stopSpeculating`). The receiver
    /// has heard of this sender, and a trim says its speculative burst met a full queue. The
    /// first credit ACK after it only sets where the receiver's grants start.
    pub(crate) fn on_nack(&mut self) {
        self.on_loss();
        if self.grant.is_none() {
            self.credit = self.credit.min(0.0);
        }
    }

    /// The bytes in flight plus the credit: a packet may leave while credit remains.
    pub(crate) fn window(&self) -> u64 {
        let credit = if self.credit > 0.0 { self.credit.ceil() as u64 } else { 0 };
        (self.in_flight + credit).max(1)
    }

    /// What the receiver grants this sender, bits/s (its whole rate before it has said how many
    /// senders share it).
    pub(crate) fn share(&self) -> f64 {
        self.receiver_rate / self.senders.max(1) as f64
    }

    pub(crate) fn credit(&self) -> f64 {
        self.credit
    }

    pub(crate) fn senders(&self) -> u32 {
        self.senders
    }
}

/// RCCC's sender half: line rate, limited by the credit.
pub struct Rccc {
    line_rate: f64,
    credit: Credit,
}

impl Rccc {
    pub fn new(cfg: &RcccConfig, facts: &FlowFacts) -> Self {
        Rccc { line_rate: facts.line_rate.as_f64(), credit: Credit::new(cfg, facts) }
    }

    /// Credit held, bytes (below zero: spent ahead).
    pub fn credit(&self) -> f64 {
        self.credit.credit()
    }
}

impl CongestionControl for Rccc {
    fn on_ack(&mut self, ack: &AckInfo<'_>, _cx: &mut CcContext) {
        self.credit.on_ack(ack);
    }

    fn on_send(&mut self, bytes: u64, _cx: &mut CcContext) {
        self.credit.on_send(bytes);
    }

    fn on_event(&mut self, ev: CcEvent, _cx: &mut CcContext) {
        match ev {
            CcEvent::Nack { .. } => self.credit.on_nack(),
            CcEvent::Timeout => self.credit.on_loss(),
            _ => {}
        }
    }

    fn rate(&self) -> f64 {
        self.line_rate
    }

    fn window(&self) -> Option<u64> {
        Some(self.credit.window())
    }

    /// The credit held, and the senders the receiver shares its rate among.
    fn metrics(&self, report: &mut dyn FnMut(&str, f64)) {
        report("credit_bytes", self.credit.credit());
        report("senders", f64::from(self.credit.senders()));
    }

    /// The credit rate (bits/s): it alone sets the pace; the window moves packet by packet.
    fn steady_signal(&self) -> Option<f64> {
        Some(self.credit.share())
    }

    /// The sender half holds no time (credit and grants are bytes).
    fn shift_clock(&mut self, _by: SimTime) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::facts;

    fn arrival(now: SimTime, seen: u32) -> DataArrival {
        DataArrival {
            now,
            ecn_ce: false,
            bytes: 1048,
            sent_at: SimTime::ZERO,
            measured_delay: 0,
            incoming_flows: seen,
            incoming_seen: seen,
        }
    }

    fn ack(in_flight: u64, feedback: [u32; 2]) -> AckInfo<'static> {
        AckInfo {
            ack_seq: 0,
            newly_acked: 1000,
            ecn_echo: false,
            rtt: SimTime::from_us(8),
            in_flight,
            snd_nxt: 0,
            int: &[],
            pint: 0,
            feedback,
        }
    }

    /// Credit a receiver's halves granted, summed, after `n` senders' packets arrived round-robin
    /// back to back at its line rate for `packets` packets each.
    fn credit_granted(n: u32, packets: u64) -> (f64, SimTime) {
        let cfg = RcccConfig::default();
        let f = facts();
        let mut rx: Vec<RcccReceiver> = (0..n).map(|_| RcccReceiver::new(&cfg, &f)).collect();
        let gap = f.receiver_line_rate.tx_time(f.packet_bytes);
        let (mut now, mut first) = (SimTime::ZERO, vec![0u32; n as usize]);
        let mut last = vec![0u32; n as usize];
        for k in 0..packets * n as u64 {
            let i = (k % n as u64) as usize;
            let action = rx[i].on_data(&arrival(now, n));
            assert_eq!(action.feedback[1], n, "the receiver names its senders");
            if k < n as u64 {
                first[i] = action.feedback[0];
            }
            last[i] = action.feedback[0];
            now += gap;
        }
        let total: f64 = (0..n as usize).map(|i| f64::from(last[i].wrapping_sub(first[i]))).sum();
        // From the first packet of the first flow to the last packet: the time the grants cover
        // (each flow's grants run from its own first packet to its own last).
        let span = SimTime((packets - 1) * n as u64 * gap.0);
        (total, span)
    }

    #[test]
    fn credits_to_n_senders_sum_to_the_receivers_rate() {
        let cfg = RcccConfig::default();
        let line = facts().receiver_line_rate.as_f64();
        for n in [1u32, 2, 8, 32] {
            let (bytes, span) = credit_granted(n, 200);
            let rate = bytes * 8.0 / span.as_secs_f64();
            let want = line * cfg.credit_rate;
            assert!((rate / want - 1.0).abs() < 0.01, "n={n}: {rate:e} b/s granted, {want:e} expected");
        }
    }

    #[test]
    fn each_of_n_senders_gets_its_share() {
        let (cfg, f) = (RcccConfig::default(), facts());
        let mut a = RcccReceiver::new(&cfg, &f);
        a.on_data(&arrival(SimTime::ZERO, 4));
        let g = a.on_data(&arrival(SimTime::from_us(4), 4)).feedback[0];
        // 4 us at a quarter of 99 Gbps: 12.375 KB.
        let want = 4e-6 * f.receiver_line_rate.as_f64() * 0.99 / 8.0 / 4.0;
        assert!((f64::from(g) - want).abs() <= 1.0, "{g} B granted, {want} expected");
    }

    #[test]
    fn a_long_gap_grants_at_most_the_cap() {
        let (cfg, f) = (RcccConfig::default(), facts());
        let mut rx = RcccReceiver::new(&cfg, &f);
        rx.on_data(&arrival(SimTime::ZERO, 1));
        let g = rx.on_data(&arrival(SimTime::from_ms(100), 1)).feedback[0];
        assert_eq!(f64::from(g), cfg.max_credit_bytes(&f).floor(), "one packet grants at most max_credit");
        assert_eq!(std::mem::size_of::<RcccReceiver>(), 24, "as small as the other receiver halves");
    }

    #[test]
    fn a_sender_without_credit_sends_no_more_than_its_initial_credit() {
        let (cfg, f) = (RcccConfig::default(), facts());
        let mut s = Rccc::new(&cfg, &f);
        let mut cx = CcContext::new(SimTime::ZERO);
        let initial = cfg.initial_credit * f.line_rate.as_f64() * f.base_rtt.as_secs_f64() / 8.0;
        // Play the NIC: send while the window is open, no ACK ever comes back.
        let (mut sent, mut in_flight) = (0u64, 0u64);
        while in_flight < s.window().unwrap() {
            s.on_send(f.packet_bytes, &mut cx);
            sent += f.packet_bytes;
            in_flight += f.mtu;
            assert!(sent < 10_000_000, "the window never closes");
        }
        assert!(sent as f64 >= initial, "sent {sent} B, the initial credit is {initial} B");
        assert!((sent as f64) < initial + f.packet_bytes as f64, "sent {sent} B beyond the credit {initial} B");
        // The first ACK with credit ends the speculation: nothing more until the receiver grants.
        s.on_ack(&ack(in_flight - f.mtu, [0, 3]), &mut cx);
        assert!(s.credit() <= 0.0);
        assert_eq!(s.window(), Some(in_flight - f.mtu), "closed: in flight, no credit");
        // A grant of 2.5 packets, less the debt, opens it for as many packets as start with
        // credit left (any credit lets one out).
        s.on_ack(&ack(in_flight - f.mtu, [(2.5 * f.packet_bytes as f64) as u32, 3]), &mut cx);
        let held = s.credit();
        assert!(held > 1.5 * f.packet_bytes as f64, "the grant less a debt below one packet: {held}");
        let mut more = 0;
        let mut flight = in_flight - f.mtu;
        while flight < s.window().unwrap() {
            s.on_send(f.packet_bytes, &mut cx);
            flight += f.mtu;
            more += 1;
        }
        assert_eq!(more, (held / f.packet_bytes as f64).ceil() as u32);
    }

    #[test]
    fn a_nack_ends_the_speculation_as_an_ack_does() {
        let (cfg, f) = (RcccConfig::default(), facts());
        let mut s = Rccc::new(&cfg, &f);
        let mut cx = CcContext::new(SimTime::ZERO);
        for _ in 0..10 {
            s.on_send(f.packet_bytes, &mut cx);
        }
        assert!(s.credit() > 0.0, "speculative credit left");
        s.on_event(CcEvent::Nack { seq: 0, trimmed: true, last_hop: true }, &mut cx);
        assert_eq!(s.credit(), 0.0, "unspent speculative credit dropped");
        assert_eq!(s.window(), Some(1), "nothing in flight as far as it knows, no credit");
        // The first credit ACK after it sets where the grants start, and grants then add up.
        s.on_ack(&ack(0, [5_000, 2]), &mut cx);
        assert_eq!(s.credit(), 0.0);
        s.on_ack(&ack(0, [8_000, 2]), &mut cx);
        assert_eq!(s.credit(), 3_000.0);
        // Past the speculation a NACK leaves the credit held.
        s.on_event(CcEvent::Nack { seq: 0, trimmed: true, last_hop: false }, &mut cx);
        assert_eq!(s.credit(), 3_000.0);
        // A timeout does not end a speculation (the reference stops only with resends queued).
        let mut t = Rccc::new(&cfg, &f);
        t.on_event(CcEvent::Timeout, &mut cx);
        assert!(t.credit() > 0.0);
    }

    #[test]
    fn old_grants_and_acks_without_credit_change_nothing() {
        let (cfg, f) = (RcccConfig::default(), facts());
        let mut s = Rccc::new(&cfg, &f);
        let mut cx = CcContext::new(SimTime::ZERO);
        s.on_ack(&ack(0, [u32::MAX - 100, 2]), &mut cx);
        s.on_ack(&ack(0, [200, 2]), &mut cx); // wrapped past 2^32: 301 B new
        assert_eq!(s.credit(), 301.0);
        s.on_ack(&ack(0, [50, 2]), &mut cx); // older
        s.on_ack(&ack(0, [0, 0]), &mut cx); // no credit word
        assert_eq!(s.credit(), 301.0);
        assert_eq!(s.steady_signal(), Some(f.receiver_line_rate.as_f64() * 0.99 / 2.0));
    }

    #[test]
    fn with_nothing_in_flight_and_no_credit_one_packet_may_leave() {
        let (cfg, f) = (RcccConfig { initial_credit: 0.0, ..RcccConfig::default() }, facts());
        let s = Rccc::new(&cfg, &f);
        assert_eq!(s.window(), Some(1), "the request for credit: one packet");
    }
}
