//! The PFC frame log (`pauses.csv`): every PAUSE and RESUME a switch sends, with the node it
//! pauses, agreeing with the per-port totals.

mod common;

use common::{incast, run};
use std::collections::BTreeMap;

#[test]
fn every_pfc_frame_is_logged_and_pauses_alternate_with_resumes() {
    let r = run(&incast(4, "2MB", "none", "[switch]\nbuffer = \"1MB\"\n[output]\nsample_interval = \"10us\""));
    assert!(r.summary.pause_frames > 0, "a PFC-only 4-to-1 incast must pause");
    assert_eq!(r.pauses.len() as u64, r.summary.pause_frames + r.summary.resume_frames);
    let log = r.summary.pause_log.as_ref().expect("timelines are on");
    assert_eq!((log.rows, log.rows_dropped), (r.pauses.len() as u64, 0));

    // Per (switch port, priority): PAUSE, RESUME, PAUSE, ... in time order, and the counts per
    // port equal ports.csv's.
    let mut last: BTreeMap<(u32, u32, u8), (bool, aiccsim::time::SimTime)> = BTreeMap::new();
    let mut counts: BTreeMap<(u32, u32), (u64, u64)> = BTreeMap::new();
    for e in &r.pauses {
        assert!(e.node >= r.topology.num_hosts, "only switches send PFC frames");
        assert!(e.peer < r.topology.num_hosts, "on a star the switch pauses hosts");
        if let Some(&(was_pause, at)) = last.get(&(e.node, e.port, e.priority)) {
            assert_ne!(
                was_pause,
                e.pause,
                "two {} in a row at port {}",
                if e.pause { "PAUSEs" } else { "RESUMEs" },
                e.port
            );
            assert!(e.time >= at);
        } else {
            assert!(e.pause, "the first frame of a port is a PAUSE");
        }
        last.insert((e.node, e.port, e.priority), (e.pause, e.time));
        let c = counts.entry((e.node, e.port)).or_default();
        if e.pause {
            c.0 += 1
        } else {
            c.1 += 1
        }
    }
    for p in r.ports.iter().filter(|p| p.stats.pause_sent + p.stats.resume_sent > 0) {
        let node = r.topology.num_hosts; // the star's only switch
        assert_eq!(p.node, r.topology.node_name(node));
        assert_eq!(counts[&(node, p.port)], (p.stats.pause_sent, p.stats.resume_sent), "port {}", p.port);
    }
    // The run drains completely, so every pause was lifted.
    assert!(last.values().all(|&(pause, _)| !pause), "a port was left paused");
}

#[test]
fn no_log_without_timelines() {
    let r = run(&incast(4, "1MB", "none", "[switch]\nbuffer = \"1MB\""));
    assert!(r.summary.pause_frames > 0);
    assert!(r.pauses.is_empty());
    assert!(r.summary.pause_log.is_none());
}
