//! The NIC's packets (`engine/nic/host.rs`): a larger MTU spends less of the wire on headers,
//! and coalesced ACKs are fewer without slowing a rate-paced sender.

use crate::common;
use crate::common::incast_on as incast;
use crate::common::{algo, completion_us, lone_analytic_us, FAST};

#[test]
fn a_larger_mtu_spends_less_on_headers() {
    let mut seen = Vec::new();
    for mtu in [1000u64, 4000] {
        let r = common::run(&incast(1, "1MB", FAST, &algo("none"), &format!("[nic]\nmtu = \"{mtu}B\"\n")));
        let fct = completion_us(&r);
        seen.push((mtu, fct, r.summary.data_packets));
        let expect = lone_analytic_us(1_000_000, mtu, 100.0, 2, 1.0);
        assert!((fct / expect - 1.0).abs() < 0.002, "MTU {mtu}: FCT {fct:.3} us vs analytic {expect:.3} us");
        assert_eq!(r.summary.data_packets, 1_000_000 / mtu);
    }
    // 48 B per 4000 B instead of per 1000 B: 1.2% of wire bytes instead of 4.6%.
    assert!(seen[1].1 < seen[0].1 - 2.0, "(MTU, FCT us, packets): {seen:?}");
}

#[test]
fn coalescing_acks_sends_fewer_of_them() {
    let mut fcts = Vec::new();
    for every in [1u64, 4, 16] {
        let r = common::run(&incast(1, "1MB", FAST, &algo("none"), &format!("[nic]\nack_every = {every}\n")));
        // One per `every` packets, and one for the packet that completes the flow.
        assert_eq!(r.summary.acks, 1000u64.div_ceil(every), "ack_every {every}");
        let reverse = r.ports.iter().find(|p| p.node == "h0").unwrap();
        assert_eq!(reverse.stats.tx_bytes, 60 * r.summary.acks, "ack_every {every}: receiver's uplink carries ACKs");
        fcts.push(completion_us(&r));
    }
    // A rate-paced sender does not wait for ACKs.
    assert!(fcts.windows(2).all(|w| w[0] == w[1]), "FCTs {fcts:?}");
}
