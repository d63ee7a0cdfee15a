//! PC4 on persistent connections: the receiver divides its line among the connections sending to
//! it, not among the messages posted on them. Messages queued one after another on a queue pair
//! share its one window and rate and never send side by side; counted as flows, they cut the
//! share of the one message sending (Algorithm 1's line rate / n) by the depth of the queue, and
//! the slower connection then holds more queued messages: a chunked ring all-reduce ran at a
//! third of the line on four hosts and at a twentieth on a 128-host fat tree
//! (experiments/uec-vs-roce).

use crate::common;

use aiccsim::cc::{
    Cc, CcContext, CongestionControl, DataArrival, Pc4Config, Pc4Receiver, Receiver, ReceiverAction, ReceiverCc,
};
use aiccsim::config::Connections;
use aiccsim::Simulation;
use std::sync::{Arc, Mutex};

type Log<T> = Arc<Mutex<Vec<T>>>;

/// PC4's receiver half, logging the controller's count and the receiver's own count
/// (`incoming_seen`) of every data packet.
struct CountLog(Pc4Receiver, Log<(u32, u32)>);

impl ReceiverCc for CountLog {
    fn on_data(&mut self, pkt: &DataArrival) -> ReceiverAction {
        self.1.lock().unwrap().push((pkt.incoming_flows, pkt.incoming_seen));
        self.0.on_data(pkt)
    }
}

/// A sender at line rate that logs what the controller told it at its start.
struct StartLog(Log<u32>);

impl CongestionControl for StartLog {
    fn on_start(&mut self, cx: &mut CcContext) {
        self.0.lock().unwrap().push(cx.incoming_at_start());
    }
    fn rate(&self) -> f64 {
        100e9
    }
}

/// Four 100 KB messages from host 1 to host 0 posted at once on one connection (flows 0-3), and
/// one from host 2 on a queue pair of its own (flow 4).
const TWO_SENDERS: &str = r#"
[topology]
kind = "star"
hosts = 3
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "pc4"
[workload]
kind = "flows"
flows = [
  { src = 1, dst = 0, size = "100KB", connection = 0 }, { src = 1, dst = 0, size = "100KB", connection = 0 },
  { src = 1, dst = 0, size = "100KB", connection = 0 }, { src = 1, dst = 0, size = "100KB", connection = 0 },
  { src = 2, dst = 0, size = "100KB" },
]
"#;

/// Four 100 KB messages from host 1 to host 0 posted at once on one connection.
const ONE_SENDER: &str = r#"
[topology]
kind = "star"
hosts = 2
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "pc4"
[workload]
kind = "flows"
flows = [
  { src = 1, dst = 0, size = "100KB", connection = 0 }, { src = 1, dst = 0, size = "100KB", connection = 0 },
  { src = 1, dst = 0, size = "100KB", connection = 0 }, { src = 1, dst = 0, size = "100KB", connection = 0 },
]
"#;

/// The controller's counts host 0's receiver halves saw (every data packet), what the controller
/// told each queue pair at its start (sorted), and the receiver's own counts.
fn counts(toml: &str, connections: Connections, lose: Option<u64>) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let mut scenario = common::scenario(toml);
    scenario.nic.connections = connections;
    let mut sim = Simulation::new(&scenario).unwrap();
    if let Some(byte) = lose {
        sim.lose_packet(0, byte);
    }
    let (seen, told): (Log<(u32, u32)>, Log<u32>) = Default::default();
    let cfg = Pc4Config::default();
    // Flows 0-3 share flow 0's queue pair on persistent connections: setting flow 3's sets it.
    for f in 0..sim.flow_count() as u32 {
        let facts = sim.flow_facts(f);
        sim.set_flow_algorithm(
            f,
            Cc::Custom(Box::new(StartLog(told.clone()))),
            Receiver::Custom(Box::new(CountLog(Pc4Receiver::new(&cfg, &facts), seen.clone()))),
        );
    }
    let r = sim.run(&mut |_| {});
    common::assert_conserved(&r);
    let (seen, observed) = seen.lock().unwrap().iter().copied().unzip();
    let mut told = told.lock().unwrap().clone();
    told.sort_unstable();
    (seen, told, observed)
}

#[test]
fn messages_queued_on_one_connection_count_once_at_their_receiver() {
    let (seen, told, _) = counts(TWO_SENDERS, Connections::Persistent, None);
    // Two queue pairs send to host 0: never more than two flows, whatever is queued on one.
    assert_eq!(seen.iter().max(), Some(&2), "the controller's n");
    assert_eq!(seen.first(), Some(&2), "both from the start");
    assert_eq!(seen.last(), Some(&1), "the connection's last message alone at the end");
    // The two queue pairs start together: each is told of both, once (the connection's later
    // messages go on from its state and are not started again).
    assert_eq!(told, [2, 2]);

    // A queue pair per message: five flows do send side by side, and count as five.
    let (seen, told, _) = counts(TWO_SENDERS, Connections::PerTransfer, None);
    assert_eq!(seen.iter().max(), Some(&5));
    assert_eq!(told, [5, 5, 5, 5, 5]);
}

#[test]
fn the_receivers_own_count_counts_a_connection_once_too() {
    // A connection's next message reaches the receiver before its last one is whole when a
    // packet of that one is lost near its end: the next message starts sending behind it while
    // the resend is still to come. Counted by message, the overlap made three of two senders.
    // Counted by message, the overlap made two of one sender.
    let (_, _, observed) = counts(ONE_SENDER, Connections::Persistent, Some(95_000));
    assert_eq!(observed.iter().max(), Some(&1), "one queue pair sends to host 0");
    // Without the loss the messages arrive one after another whole, and nothing overlaps.
    let (_, _, observed) = counts(ONE_SENDER, Connections::Persistent, None);
    assert_eq!(observed.iter().max(), Some(&1));
    // A queue pair per message: they do send side by side, and count as such.
    let (_, _, observed) = counts(ONE_SENDER, Connections::PerTransfer, Some(95_000));
    assert_eq!(observed.iter().max(), Some(&4), "a queue pair per message: four senders");
}

/// A ring all-reduce of 1 MB on 4 hosts of one 400 Gbps switch, cut into 4 pipelined chunks on
/// persistent connections (uec-vs-roce's all-reduce, small).
fn chunked_ring(algorithm: &str) -> f64 {
    let toml = format!(
        r#"
[topology]
kind = "star"
hosts = 4
link = {{ bandwidth = "400Gbps", delay = "1us" }}
[switch]
buffer = "32MB"
[nic]
mtu = "4096B"
[cc]
algorithm = "{algorithm}"
[workload]
kind = "all_reduce"
hosts = "all"
size = "1MB"
algorithm = "ring"
chunks = 4
"#
    );
    let r = common::run(&toml);
    r.collectives[0].busbw_bps().unwrap() / 1e9
}

#[test]
fn a_chunked_ring_all_reduce_under_pc4_runs_at_the_line_rate() {
    // Each connection is the only flow into its receiver: the base rate is the line, and PC4
    // runs as fast as no congestion control at all (363.2 against 365.0 Gbit/s). Counting the
    // queued chunks as flows, it ran at 139.6.
    let (pc4, none) = (chunked_ring("pc4"), chunked_ring("none"));
    assert!(pc4 > 0.97 * none && pc4 <= none * 1.001, "PC4 {pc4:.1} Gbit/s, no congestion control {none:.1}");
}
