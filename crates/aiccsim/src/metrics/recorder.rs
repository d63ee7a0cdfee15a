//! Timelines recorded as the run goes: the engine pushes each sample (queue lengths, bytes sent
//! per link, flow rates and algorithm state, PFC frames) as it takes it; the recorder keeps them,
//! and does nothing when timelines are off.

use super::{CcState, CcStateSample, LinkSample, PauseSample, QueueSample, RateSample, MAX_PAUSE_ROWS};
use crate::config::OutputConfig;
use crate::time::SimTime;

/// Records timelines during the run; does nothing when timelines are off.
pub struct Recorder {
    interval: Option<SimTime>,
    queue_switch: Vec<bool>,
    rate_flow: Vec<bool>,
    /// Whether the sampled flows' algorithm state is kept (`output.cc_state`).
    cc_state_on: bool,
    last_queue: Vec<u64>,
    /// Per port (with timelines only): its bytes sent at the last sample, and over the last
    /// interval.
    last_tx: Vec<u64>,
    last_link: Vec<u64>,
    pub queues: Vec<QueueSample>,
    pub links: Vec<LinkSample>,
    pub rates: Vec<RateSample>,
    pub cc_state: CcState,
    pub pauses: Vec<PauseSample>,
    pub pauses_dropped: u64,
}

impl Recorder {
    /// A recorder for a fabric of `switches` switches and `ports` ports carrying `flows` flows.
    pub fn new(out: &OutputConfig, switches: u32, ports: usize, flows: usize) -> Recorder {
        let mut queue_switch = vec![out.queue_switches.is_none(); switches as usize];
        for &s in out.queue_switches.iter().flatten() {
            queue_switch[s as usize] = true;
        }
        let mut rate_flow = vec![out.rate_flows.is_none(); flows];
        for &f in out.rate_flows.iter().flatten() {
            if let Some(x) = rate_flow.get_mut(f as usize) {
                *x = true;
            }
        }
        Recorder {
            interval: out.sample_interval,
            queue_switch,
            rate_flow,
            cc_state_on: out.cc_state && out.sample_interval.is_some(),
            last_queue: vec![0; ports],
            last_tx: if out.sample_interval.is_some() { vec![0; ports] } else { Vec::new() },
            last_link: if out.sample_interval.is_some() { vec![0; ports] } else { Vec::new() },
            queues: Vec::new(),
            links: Vec::new(),
            rates: Vec::new(),
            cc_state: CcState::default(),
            pauses: Vec::new(),
            pauses_dropped: 0,
        }
    }

    /// Whether PFC frames are logged (timelines are on).
    #[inline]
    pub fn logs_pauses(&self) -> bool {
        self.interval.is_some()
    }

    /// Switch port `port` sends a PFC frame: every one is logged, not sampled, because a
    /// pause can start and end between two samples.
    #[cold]
    pub fn pfc_frame(&mut self, time: SimTime, port: u32, priority: u8, pause: bool) {
        if self.pauses.len() < MAX_PAUSE_ROWS {
            self.pauses.push(PauseSample { time, port, priority, pause });
        } else {
            self.pauses_dropped += 1;
        }
    }

    /// The sampling interval, when timelines are on.
    pub fn interval(&self) -> Option<SimTime> {
        self.interval
    }

    /// Whether the queues of switch `switch` are sampled (`output.queue_switches`).
    pub fn samples_switch(&self, switch: u32) -> bool {
        self.queue_switch[switch as usize]
    }

    /// Whether flow `flow`'s rate is sampled (`output.rate_flows`).
    pub fn samples_flow(&self, flow: u32) -> bool {
        self.rate_flow[flow as usize]
    }

    /// The backlog of a sampled switch port (`port`, its global index) at a sample time. Only
    /// changes from or to a non-empty queue are kept: an idle fabric writes nothing.
    pub fn queue(&mut self, port: usize, sample: QueueSample) {
        if sample.bytes > 0 || self.last_queue[port] > 0 {
            self.queues.push(sample);
        }
        self.last_queue[port] = sample.bytes;
    }

    /// The bytes a sampled switch port (`port`, its global index) has sent in all, at a sample
    /// time: the row gets what it sent since the last sample. As for queues, only changes from or
    /// to an idle link are kept.
    pub fn link(&mut self, time: SimTime, port: usize, tx_bytes: u64) {
        let bytes = tx_bytes - self.last_tx[port];
        self.last_tx[port] = tx_bytes;
        if bytes > 0 || self.last_link[port] > 0 {
            self.links.push(LinkSample { time, bytes, port: port as u32 });
        }
        self.last_link[port] = bytes;
    }

    /// Port `port`'s bytes jumped to `tx_bytes` without being sent (fast-forward's credit): the
    /// next sample counts from there.
    pub fn rebase_link(&mut self, port: usize, tx_bytes: u64) {
        if let Some(last) = self.last_tx.get_mut(port) {
            *last = tx_bytes;
        }
    }

    /// A sampled flow's rate, window and throughput.
    pub fn rate(&mut self, sample: RateSample) {
        self.rates.push(sample);
    }

    /// Whether the sampled flows' algorithm state goes into `cc_state.csv` (`output.cc_state`).
    pub fn records_cc_state(&self) -> bool {
        self.cc_state_on
    }

    /// One value of a sampled flow's algorithm state. The names are few (each algorithm reports
    /// the same handful every sample), so a scan finds each one's number.
    pub fn cc_state(&mut self, time: SimTime, flow: u32, name: &str, value: f64) {
        let names = &mut self.cc_state.names;
        let index = names.iter().position(|n| n == name).unwrap_or_else(|| {
            names.push(name.to_string());
            names.len() - 1
        });
        self.cc_state.samples.push(CcStateSample { time, flow, name: index as u32, value });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithm_state_is_kept_only_when_asked_and_each_name_is_stored_once() {
        let on = OutputConfig { sample_interval: Some(SimTime::from_us(1)), cc_state: true, ..Default::default() };
        let mut r = Recorder::new(&on, 0, 0, 2);
        assert!(r.records_cc_state());
        for t in [1, 2] {
            r.cc_state(SimTime::from_us(t), 0, "alpha", 0.5);
            r.cc_state(SimTime::from_us(t), 1, "target_gbps", 40.0);
        }
        assert_eq!(r.cc_state.names, ["alpha", "target_gbps"]);
        let names: Vec<u32> = r.cc_state.samples.iter().map(|s| s.name).collect();
        assert_eq!(names, [0, 1, 0, 1]);
        let asked_without_timelines = OutputConfig { cc_state: true, ..Default::default() };
        assert!(!Recorder::new(&asked_without_timelines, 0, 0, 2).records_cc_state());
        let timelines_only = OutputConfig { sample_interval: Some(SimTime::from_us(1)), ..Default::default() };
        assert!(!Recorder::new(&timelines_only, 0, 0, 2).records_cc_state());
    }
}
