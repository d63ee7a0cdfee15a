//! n-to-1 incast: with PFC nothing is lost and the receiver link never idles; without PFC and
//! with a small buffer packets drop and go-back-N recovers every byte; DCQCN shares fairly.

use crate::common;

use aiccsim::metrics::jain_index;

#[test]
fn pfc_incast_is_lossless_and_keeps_the_receiver_busy() {
    for n in [2u32, 4, 16] {
        let r = common::run(&common::incast(n, "10MB", "none", ""));
        let s = &r.summary;
        assert_eq!(s.packets_dropped, 0, "n={n}: PFC must not drop");
        assert!(s.pause_frames > 0, "n={n}: the incast must trigger PFC");
        let ideal = r.flows[0].ideal_fct.as_secs_f64();
        let last = r.flows.iter().map(|f| f.fct().unwrap().as_secs_f64()).fold(0.0, f64::max);
        let ratio = last / (n as f64 * ideal);
        assert!((ratio - 1.0).abs() <= 0.02, "n={n}: last FCT {last:e} s is {ratio:.4} x n x ideal");
        // The receiver's link carried every data byte back to back.
        let rx = r.ports.iter().find(|p| p.node == "s0" && p.peer == "h0").unwrap();
        let busy = rx.stats.tx_bytes as f64 * 8.0 / 100e9;
        assert!(busy / last > 0.98, "n={n}: receiver link busy {:.3} of the time", busy / last);
    }
}

#[test]
fn without_pfc_a_small_buffer_drops_and_go_back_n_recovers() {
    let extra = r#"
[switch]
buffer = "200KB"
pfc = { enabled = false }
[nic]
rto = "100us"
"#;
    let r = common::run(&common::incast(16, "1MB", "none", extra));
    let s = &r.summary;
    assert!(s.packets_dropped > 0, "a 200 KB buffer under a 16-to-1 incast must overflow");
    assert!(s.nacks > 0, "gaps must be NACKed");
    assert!(s.retransmitted_bytes > 0);
    assert_eq!(s.pause_frames, 0);
    // Every flow delivered all of its bytes in order (common::run checks finish and the ledger).
    assert!(s.data_bytes.dropped > 0);
}

#[test]
fn dcqcn_incast_is_lossless_bounded_and_fair() {
    let extra = r#"
[output]
sample_interval = "20us"
"#;
    // 40 MB per sender: DCQCN converges to fair shares over milliseconds (its rate-increase
    // timer is 300 us), so the steady phase must be long enough to see it.
    let r = common::run(&common::incast(16, "40MB", "dcqcn", extra));
    let s = &r.summary;
    assert_eq!(s.packets_dropped, 0);
    assert!(s.cnps > 0, "the incast must make DCQCN's receivers send CNPs");
    assert_eq!(s.pause_frames, 0, "DCQCN should keep the queue below the PFC threshold");
    assert!(s.max_switch_queue_bytes < 16_000_000, "queue {} B not bounded", s.max_switch_queue_bytes);
    let t = r.steady_throughputs().expect("timelines on");
    assert_eq!(t.len(), 16);
    let j = jain_index(&t);
    assert!(j >= 0.99, "Jain's index {j:.4} over the steady phase: {t:?}");
}
