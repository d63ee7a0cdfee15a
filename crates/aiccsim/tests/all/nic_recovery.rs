//! Loss recovery's timeout (`engine/nic/recovery.rs`) on the network: a lost tail that no later
//! packet reveals is recovered one RTO after the last progress, so a shorter RTO ends sooner.

use crate::common;
use crate::common::incast_on as incast;
use crate::common::{algo, completion_us, FAST};

#[test]
fn a_shorter_rto_recovers_a_lost_tail_sooner() {
    // A drop-tail incast loses flow tails that no later packet reveals, so only the timeout
    // recovers them: the incast cannot end before one RTO has passed.
    let run = |rto: &str| {
        let extra = format!("[switch]\nbuffer = \"150KB\"\npfc = {{ enabled = false }}\n[nic]\nrto = \"{rto}\"\n");
        common::run(&incast(8, "300KB", FAST, &algo("none"), &extra))
    };
    let runs = [(20.0, run("20us")), (100.0, run("100us")), (1000.0, run("1ms"))];
    let msg: Vec<String> = runs
        .iter()
        .map(|(rto, r)| {
            format!(
                "rto {rto} us: done {:.1} us, {} timeouts, {} B resent",
                completion_us(r),
                r.summary.timeouts,
                r.summary.retransmitted_bytes
            )
        })
        .collect();
    let msg = msg.join("; ");
    for (rto, r) in &runs {
        assert!(r.summary.timeouts > 0, "{msg}");
        assert!(completion_us(r) > *rto, "{msg}");
    }
    for w in runs.windows(2) {
        assert!(completion_us(&w[1].1) > 1.5 * completion_us(&w[0].1), "{msg}");
    }
    // An RTO shorter than the queueing also fires while data is still on its way.
    assert!(runs[0].1.summary.retransmitted_bytes > runs[2].1.summary.retransmitted_bytes, "{msg}");
}
