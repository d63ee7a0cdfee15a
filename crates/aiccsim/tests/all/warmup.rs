//! `output.warmup`: the delay statistics count only samples from the warm-up on, and nothing
//! else about the run changes.

use crate::common::{incast, run};

/// A 4-to-1 incast without congestion control: the receiver's queue grows for the whole run, so
/// later packets wait longer than earlier ones.
fn growing_queue(warmup: Option<&str>) -> aiccsim::Results {
    let output = warmup.map(|w| format!("[output]\nwarmup = \"{w}\"")).unwrap_or_default();
    run(&incast(4, "1MB", "pfc_only", &output))
}

#[test]
fn the_warmup_drops_early_delay_samples_and_changes_nothing_else() {
    let all = growing_queue(None);
    let zero = growing_queue(Some("0us"));
    assert_eq!(serde_json::to_string(&all.flows).unwrap(), serde_json::to_string(&zero.flows).unwrap());
    assert_eq!(all.summary.queuing_delay_ns.count, zero.summary.queuing_delay_ns.count);
    assert_eq!(all.summary.rtt_ns.mean, zero.summary.rtt_ns.mean);

    // The run lasts about 4 MB / 100 Gb/s = 335 us; from 200 us on, the queue is deeper than
    // on average, and fewer packets are counted.
    let late = growing_queue(Some("200us"));
    let (q_all, q_late) = (&all.summary.queuing_delay_ns, &late.summary.queuing_delay_ns);
    assert!(q_late.count > 0 && q_late.count < q_all.count / 2, "{} of {}", q_late.count, q_all.count);
    assert!(q_late.mean.as_ns_f64() > 1.3 * q_all.mean.as_ns_f64(), "{:?} vs {:?}", q_late.mean, q_all.mean);
    assert!(late.summary.rtt_ns.count < all.summary.rtt_ns.count);
    assert!(late.summary.rtt_ns.mean > all.summary.rtt_ns.mean);
    // The same packets went the same way: every flow finishes at the same time.
    assert_eq!(serde_json::to_string(&all.flows).unwrap(), serde_json::to_string(&late.flows).unwrap());
    assert_eq!(all.summary.completion_time_ns, late.summary.completion_time_ns);

    // A warm-up past the end counts nothing.
    let never = growing_queue(Some("1s"));
    assert_eq!(never.summary.queuing_delay_ns.count, 0);
    assert_eq!(never.summary.rtt_ns.count, 0);
    assert_eq!(never.summary.fct_ns.count, all.summary.fct_ns.count);
}
