//! Settings that are legal but almost certainly a mistake are warned about, each with its key,
//! in `summary.json` too; an ordinary scenario gets no warning. A stalled run names the flows
//! it left and what holds each.

use crate::common;

use aiccsim::{Simulation, StopReason};

/// The keys of the warnings a scenario gets.
fn warned(toml: &str) -> Vec<String> {
    let sim = Simulation::new(&common::scenario(toml)).unwrap_or_else(|e| panic!("{e}"));
    sim.warnings().iter().map(|w| w.key.clone()).collect()
}

fn incast(cc: &str, extra: &str) -> String {
    common::incast(4, "200KB", cc, extra)
}

#[test]
fn ordinary_scenarios_get_no_warning() {
    for cc in ["dcqcn", "dctcp", "hpcc", "swift", "timely", "pc4", "pfc_only"] {
        assert_eq!(warned(&incast(cc, "")), Vec::<String>::new(), "{cc}");
    }
}

#[test]
fn an_ecn_algorithm_without_marks_is_warned_about() {
    let off = "[switch]\necn = { enabled = false }\n";
    assert_eq!(warned(&incast("dcqcn", off)), ["switch.ecn.enabled"]);
    assert_eq!(warned(&incast("dctcp", off)), ["switch.ecn.enabled"]);
    // Delay- and telemetry-driven algorithms do not need marks.
    assert!(warned(&incast("hpcc", off)).is_empty());
    // A kmin above the buffer as given: nothing is ever marked.
    let high = "[switch]\nbuffer = \"1MB\"\necn = { kmin = \"2MB\", kmax = \"3MB\" }\n";
    assert_eq!(warned(&incast("dcqcn", high)), ["switch.ecn.kmin"]);
}

#[test]
fn an_ack_interval_above_the_window_is_warned_about() {
    assert_eq!(warned(&incast("hpcc", "[nic]\nack_every = 1000\n")), ["nic.ack_every"]);
    // Rate-based DCQCN has no window to close; 4 packets per ACK fit HPCC's.
    assert!(warned(&incast("dcqcn", "[nic]\nack_every = 1000\n")).is_empty());
    assert!(warned(&incast("hpcc", "[nic]\nack_every = 4\n")).is_empty());
}

#[test]
fn a_timeout_near_the_round_trip_is_warned_about() {
    // The base RTT of this star is 4.18 us; 8 us is above the refusal, below twice the RTT.
    // (Without PFC, so that a full buffer's drain, below, does not come into it.)
    let lossy = "[switch]\npfc = { enabled = false }\n";
    assert_eq!(warned(&incast("dcqcn", &format!("{lossy}[nic]\nrto = \"8us\"\n"))), ["nic.rto"]);
    assert!(warned(&incast("dcqcn", &format!("{lossy}[nic]\nrto = \"100us\"\n"))).is_empty());
}

#[test]
fn a_timeout_shorter_than_a_full_lossless_buffer_drains_is_warned_about() {
    // The default 32 MB buffer drains through a 100 Gbps port in 2.56 ms: with PFC on, a flow
    // can wait that long with nothing lost.
    let sim = Simulation::new(&common::scenario(&incast("dcqcn", "[nic]\nrto = \"1ms\"\n"))).unwrap();
    let w: Vec<_> = sim.warnings().iter().map(|w| (w.key.as_str(), w.message.as_str())).collect();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "nic.rto");
    assert!(
        w[0].1.contains("less than the 2560us a full 32MB buffer takes to drain through a 100Gbps switch port"),
        "{}",
        w[0].1
    );
    assert!(warned(&incast("dcqcn", "[nic]\nrto = \"3ms\"\n")).is_empty(), "above the drain time");
    let lossy = "[switch]\npfc = { enabled = false }\n[nic]\nrto = \"1ms\"\n";
    assert!(warned(&incast("dcqcn", lossy)).is_empty(), "without PFC a full buffer drops instead");
}

#[test]
fn a_run_that_ends_before_its_work_is_warned_about() {
    let extra = "[simulation]\nstop_time = \"2us\"\n[output]\nsample_interval = \"5us\"\nwarmup = \"3us\"\n";
    // (`extra` lands in [workload] first: the incast's start.)
    let late = incast("dcqcn", &format!("start = \"2us\"\n{extra}"));
    assert_eq!(warned(&late), ["simulation.stop_time", "output.sample_interval", "output.warmup"]);
    let text = incast("dcqcn", extra);
    // And the warnings reach summary.json.
    let r = aiccsim::run(&common::scenario(&text)).unwrap();
    let json: serde_json::Value = serde_json::from_str(&r.summary_json()).unwrap();
    let keys: Vec<&str> = json["warnings"].as_array().unwrap().iter().map(|w| w["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["output.sample_interval", "output.warmup"]);
    assert!(json["warnings"][0]["message"].as_str().unwrap().contains("one sample"));
}

#[test]
fn a_static_xoff_below_kmin_is_warned_about() {
    // The default kmin is 400 KB at 100 Gbps: a 100 KB XOFF pauses one ingress's queue first.
    let shallow = |xoff: &str, kmin: &str| {
        format!("[switch]\npfc = {{ xoff = \"{xoff}\" }}\necn = {{ kmin = \"{kmin}\", kmax = \"1600KB\" }}\n")
    };
    let sim = Simulation::new(&common::scenario(&incast("dcqcn", &shallow("100KB", "400KB")))).unwrap();
    let w: Vec<_> = sim.warnings().iter().map(|w| (w.key.as_str(), w.message.as_str())).collect();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "switch.pfc.xoff");
    assert!(w[0].1.contains("on the 100Gbps switch ports and faster"), "{}", w[0].1);
    // Marking below the backpressure point, as RoCE fabrics are set up: no warning.
    assert!(warned(&incast("dcqcn", &shallow("100KB", "30KB"))).is_empty());
    // Kmin exactly at XOFF is reached: a queue of XOFF bytes is not above it.
    assert!(warned(&incast("dcqcn", &shallow("100KB", "100KB"))).is_empty());
    // The reserve comes before XOFF.
    let reserved = "[switch]\npfc = { xoff = \"100KB\", reserve = \"300KB\" }\n";
    assert!(warned(&incast("dcqcn", reserved)).is_empty());
    // An algorithm that ignores marks, or a dynamic XOFF, is not warned about.
    assert!(warned(&incast("hpcc", &shallow("100KB", "400KB"))).is_empty());
    assert!(warned(&incast("dcqcn", "")).is_empty());
}

/// With an ACK only every 1000 packets, Swift's window closes with the receiver holding the
/// packets it has not acknowledged: the run stalls, and the report says so about each flow
/// (it used to say only "no port is paused").
#[test]
fn a_stall_names_each_flow_and_what_holds_it() {
    let r = aiccsim::run(&common::scenario(&incast("swift", "[nic]\nack_every = 1000\n"))).unwrap();
    assert_eq!(r.summary.stop_reason, StopReason::Stalled);
    let stall = r.summary.stall.as_ref().unwrap();
    assert_eq!(stall.stuck_flows.len(), 4);
    for (i, f) in stall.stuck_flows.iter().enumerate() {
        assert_eq!((f.flow as usize, f.dst.as_str()), (i, "h0"));
        assert!(f.delivered_bytes < f.size_bytes);
        assert!(f.held_by.starts_with("window closed"), "{}", f.held_by);
        assert!(f.held_by.contains("ACKs every 1000"), "{}", f.held_by);
    }
    let line = stall.describe();
    assert!(line.contains("flow 0 (h1 -> h0") && line.contains("window closed"), "{line}");
}
