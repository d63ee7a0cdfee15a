//! Dynamic load balancing (DLB) as switch ASICs do it (`routing = "dlb"`): a port's quality is
//! not read off its queue when a packet arrives, as `"adaptive"` does, but sampled every period
//! into moving averages and quantised into a few bands; between samples the switch routes on
//! what it last sampled, and within a band it cannot tell ports apart.
//!
//! What it models, from the SAI ARS profile (`saiarsprofile.h`: an EWMA algorithm, a sampling
//! interval, a "past load" of egress bytes and a "future load" of queued bytes, each averaged
//! with an exponent, quantised into 8 bands between thresholds) and the DLB of Broadcom's ASICs
//! as Juniper documents it (each ECMP member port in a quality band 0-7 from its recent egress
//! bytes and its queue, weighed equally by default): every `period` each sampled port's
//! utilisation over the period (bytes sent over what the line could send) and its queue are
//! folded into their averages, `avg += weight x (sample - avg)`; the port's measure is
//! `load_weight x load + (1 - load_weight) x min(1, queue / max_queue)`, in [0, 1], and its band
//! is that times `bands`, rounded down (the last band takes 1). A packet goes to a next hop
//! drawn at random among those in the lowest band (`routing.rs`; per packet, the mode AI fabrics
//! use DLB in).
//!
//! What it leaves out: the ASIC's cell granularity and its per-band threshold tables (the bands
//! here are even), the "current load" shortcut, and the flowlet and fixed-assignment modes.

use crate::config::DlbConfig;
use crate::engine::net::port::Port;
use crate::engine::{Event, Simulation};
use crate::time::SimTime;
use crate::topology::Topology;

/// The sampled state of every port of the switches that route by DLB.
pub(crate) struct Dlb {
    period: SimTime,
    weight: f64,
    bands: u32,
    max_queue: f64,
    load_weight: f64,
    /// The ports sampled: those of DLB switches that lead to another switch.
    sampled: Vec<Sampled>,
    /// Each port's band as last sampled, by port id (0, the best, for ports not sampled and
    /// before the first sample).
    pub(crate) band: Vec<u8>,
}

/// One sampled port: its averages, and its transmit counter at the last sample.
struct Sampled {
    port: u32,
    load: f64,
    queue: f64,
    tx_bytes: u64,
}

impl Dlb {
    /// The state for the ports of the switches `dlb_switch` marks (by switch index).
    pub(crate) fn new(cfg: &DlbConfig, topo: &Topology, ports: &[Port], dlb_switch: &[bool]) -> Dlb {
        let sampled = (0..ports.len() as u32)
            .filter(|&p| {
                let port = &ports[p as usize];
                !port.is_host && dlb_switch[(port.node - topo.num_hosts) as usize] && !topo.is_host(topo.peer_node(p))
            })
            .map(|port| Sampled { port, load: 0.0, queue: 0.0, tx_bytes: 0 })
            .collect();
        Dlb {
            period: cfg.period,
            weight: cfg.weight,
            bands: cfg.bands,
            max_queue: cfg.max_queue.0 as f64,
            load_weight: cfg.load_weight,
            sampled,
            band: vec![0; ports.len()],
        }
    }

    pub(crate) fn period(&self) -> SimTime {
        self.period
    }

    /// The band of a measure in [0, 1] (above 1 counts as 1).
    fn band_of(&self, measure: f64) -> u8 {
        ((measure.min(1.0) * self.bands as f64) as u32).min(self.bands - 1) as u8
    }

    /// One sample of every port: folds its utilisation since the last sample and its queue now
    /// into their averages, and sets its band.
    fn sample(&mut self, ports: &[Port]) {
        for i in 0..self.sampled.len() {
            let s = &mut self.sampled[i];
            let port = &ports[s.port as usize];
            // A packet counts as sent when its serialisation starts, so a period can count up to
            // one packet more than the line carried in it: capped at the line.
            let line = port.bandwidth.bytes_in(self.period).max(1) as f64;
            let load = ((port.tx_bytes - s.tx_bytes) as f64 / line).min(1.0);
            s.tx_bytes = port.tx_bytes;
            s.load += self.weight * (load - s.load);
            s.queue += self.weight * (port.queued as f64 - s.queue);
            let queue = (s.queue / self.max_queue).min(1.0);
            let measure = self.load_weight * s.load + (1.0 - self.load_weight) * queue;
            let (p, band) = (s.port as usize, self.band_of(measure));
            self.band[p] = band;
        }
    }
}

impl Simulation {
    /// The ports of DLB switches are sampled: their bands change, and the next sample is
    /// scheduled while flows remain (as the timelines' samples are).
    pub(crate) fn dlb_sample(&mut self) {
        let Some(dlb) = self.net.dlb.as_deref_mut() else { return };
        dlb.sample(&self.net.ports);
        if self.work.flows_done < self.nic.flows.len() {
            let next = self.now + dlb.period;
            self.events.push(next, Event::DlbSample);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Bandwidth, ByteSize};
    use crate::topology::PortInfo;

    fn dlb(bands: u32, load_weight: f64, weight: f64) -> Dlb {
        let cfg = DlbConfig { period: SimTime::from_us(1), weight, bands, max_queue: ByteSize(80_000), load_weight };
        Dlb {
            period: cfg.period,
            weight: cfg.weight,
            bands: cfg.bands,
            max_queue: cfg.max_queue.0 as f64,
            load_weight: cfg.load_weight,
            sampled: vec![Sampled { port: 0, load: 0.0, queue: 0.0, tx_bytes: 0 }],
            band: vec![0; 1],
        }
    }

    fn port() -> Port {
        let info = PortInfo { node: 0, peer: 1, bandwidth: Bandwidth::from_gbps(100), delay: SimTime::from_us(1) };
        Port::new(&info, 0, false, None)
    }

    #[test]
    fn bands_split_the_measure_evenly_and_the_top_one_takes_the_rest() {
        let d = dlb(8, 0.5, 1.0);
        assert_eq!(d.band_of(0.0), 0);
        assert_eq!(d.band_of(0.124), 0);
        assert_eq!(d.band_of(0.125), 1);
        assert_eq!(d.band_of(0.99), 7);
        assert_eq!(d.band_of(1.0), 7);
        assert_eq!(d.band_of(3.0), 7);
    }

    #[test]
    fn a_sample_folds_the_period_s_load_and_the_queue_into_the_averages() {
        // 100 Gb/s for 1 us: 12 500 bytes a period.
        let mut d = dlb(4, 0.5, 0.5);
        let mut ports = vec![port()];
        ports[0].tx_bytes = 12_500;
        ports[0].queued = 40_000;
        d.sample(&ports);
        // Half of a full load, half of half the queue scale: 0.5 x 0.5 + 0.5 x 0.25 = 0.375.
        assert!((d.sampled[0].load - 0.5).abs() < 1e-12 && (d.sampled[0].queue - 20_000.0).abs() < 1e-9);
        assert_eq!(d.band[0], 1, "0.375 x 4 bands");
        // An idle period and an empty queue: both averages halve.
        ports[0].queued = 0;
        d.sample(&ports);
        assert!((d.sampled[0].load - 0.25).abs() < 1e-12 && (d.sampled[0].queue - 10_000.0).abs() < 1e-9);
        assert_eq!(d.band[0], 0, "0.1875 x 4");
    }

    #[test]
    fn the_load_alone_or_the_queue_alone_decides_at_the_weights_ends() {
        let mut ports = vec![port()];
        ports[0].queued = 80_000;
        let mut by_load = dlb(2, 1.0, 1.0);
        by_load.sample(&ports);
        assert_eq!(by_load.band[0], 0, "a full queue, but nothing sent");
        let mut by_queue = dlb(2, 0.0, 1.0);
        by_queue.sample(&ports);
        assert_eq!(by_queue.band[0], 1);
    }
}
