//! Writes a run's results into a folder: `flows.csv`, `summary.json`, `ports.csv`, `run.json`,
//! with timelines on, `queues.csv`, `rates.csv` and `pauses.csv`, with a trace, `trace.csv`, and
//! with a `training` workload, `iterations.csv`.
//!
//! Times are written in nanoseconds with three decimals (exact picoseconds), so files are
//! byte-identical for the same scenario and seed. Each file is written to a temporary name and
//! renamed into place, so a crash never leaves a half-written file behind.

use crate::metrics::Results;
use crate::time::SimTime;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// "1234.567" for 1234567 ps.
pub fn ns(t: SimTime) -> String {
    format!("{}.{:03}", t.0 / 1000, t.0 % 1000)
}

fn atomic_write(dir: &Path, name: &str, body: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    {
        let mut w = io::BufWriter::new(fs::File::create(&tmp)?);
        body(&mut w)?;
        w.flush()?;
    }
    fs::rename(&tmp, dir.join(name))
}

fn csv_err(e: csv::Error) -> io::Error {
    io::Error::other(e)
}

impl Results {
    /// `summary.json` without the wall-clock `performance` block: identical across repeated runs.
    pub fn deterministic_summary(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(&self.summary).expect("summary serialises");
        v.as_object_mut().map(|o| o.remove("performance"));
        v
    }

    pub fn write_flows(&self, w: &mut dyn Write) -> io::Result<()> {
        let mut c = csv::Writer::from_writer(w);
        c.write_record([
            "flow_id",
            "src",
            "dst",
            "size_bytes",
            "start_ns",
            "finish_ns",
            "fct_ns",
            "ideal_fct_ns",
            "slowdown",
            "collective",
            "retransmitted_bytes",
            "timeouts",
        ])
        .map_err(csv_err)?;
        for r in &self.flows {
            c.write_record([
                r.flow_id.to_string(),
                r.src.to_string(),
                r.dst.to_string(),
                r.size_bytes.to_string(),
                ns(r.start),
                r.finish.map(ns).unwrap_or_default(),
                r.fct().map(ns).unwrap_or_default(),
                ns(r.ideal_fct),
                r.slowdown().map(|s| format!("{s:.6}")).unwrap_or_default(),
                r.collective.clone(),
                r.retransmitted_bytes.to_string(),
                r.timeouts.to_string(),
            ])
            .map_err(csv_err)?;
        }
        c.flush()
    }

    pub fn write_ports(&self, w: &mut dyn Write) -> io::Result<()> {
        let mut c = csv::Writer::from_writer(w);
        c.write_record([
            "node",
            "port",
            "peer",
            "tx_packets",
            "tx_bytes",
            "pause_sent",
            "resume_sent",
            "drops",
            "ecn_marks",
            "max_queue_bytes",
            "paused_ns",
        ])
        .map_err(csv_err)?;
        for p in &self.ports {
            let s = &p.stats;
            c.write_record([
                p.node.clone(),
                p.port.to_string(),
                p.peer.clone(),
                s.tx_packets.to_string(),
                s.tx_bytes.to_string(),
                s.pause_sent.to_string(),
                s.resume_sent.to_string(),
                s.drops.to_string(),
                s.ecn_marks.to_string(),
                p.max_queue.to_string(),
                ns(s.paused_time),
            ])
            .map_err(csv_err)?;
        }
        c.flush()
    }

    pub fn write_queues(&self, w: &mut dyn Write) -> io::Result<()> {
        let mut c = csv::Writer::from_writer(w);
        c.write_record(["time_ns", "switch", "port", "bytes"]).map_err(csv_err)?;
        for q in &self.queues {
            c.write_record([ns(q.time), q.switch.to_string(), q.port.to_string(), q.bytes.to_string()])
                .map_err(csv_err)?;
        }
        c.flush()
    }

    pub fn write_rates(&self, w: &mut dyn Write) -> io::Result<()> {
        let mut c = csv::Writer::from_writer(w);
        c.write_record(["time_ns", "flow", "rate_gbps", "window_bytes", "throughput_gbps"]).map_err(csv_err)?;
        for r in &self.rates {
            c.write_record([
                ns(r.time),
                r.flow.to_string(),
                format!("{:.6}", r.rate_bps / 1e9),
                r.window_bytes.map(|w| w.to_string()).unwrap_or_default(),
                format!("{:.6}", r.throughput_bps / 1e9),
            ])
            .map_err(csv_err)?;
        }
        c.flush()
    }

    pub fn write_pauses(&self, w: &mut dyn Write) -> io::Result<()> {
        let mut c = csv::Writer::from_writer(w);
        c.write_record(["time_ns", "node", "port", "peer", "priority", "event"]).map_err(csv_err)?;
        for e in &self.pauses {
            c.write_record([
                ns(e.time),
                self.topology.node_name(e.node),
                e.port.to_string(),
                self.topology.node_name(e.peer),
                e.priority.to_string(),
                (if e.pause { "pause" } else { "resume" }).to_string(),
            ])
            .map_err(csv_err)?;
        }
        c.flush()
    }

    pub fn write_trace(&self, w: &mut dyn Write) -> io::Result<()> {
        use crate::metrics::trace::kind_name;
        let mut c = csv::Writer::from_writer(w);
        c.write_record([
            "time_ns",
            "event",
            "node",
            "port",
            "kind",
            "flow",
            "seq",
            "size_bytes",
            "priority",
            "ecn",
            "queue_bytes",
        ])
        .map_err(csv_err)?;
        for r in self.trace.iter().flatten() {
            c.write_record([
                ns(r.time),
                r.event.as_str().to_string(),
                self.topology.node_name(r.node),
                r.port.to_string(),
                kind_name(r.kind).to_string(),
                r.flow.map(|f| f.to_string()).unwrap_or_default(),
                r.seq.to_string(),
                r.size.to_string(),
                r.priority.to_string(),
                u8::from(r.ecn).to_string(),
                r.queue_bytes.map(|q| q.to_string()).unwrap_or_default(),
            ])
            .map_err(csv_err)?;
        }
        c.flush()
    }

    /// The text of `summary.json`. The Python package writes it next to Parquet tables, so the
    /// two kinds of results folder share it byte for byte.
    pub fn summary_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.summary).expect("summary serialises");
        text.push('\n');
        text
    }

    /// The text of `run.json`: what was run (version, seed, the resolved scenario).
    pub fn run_json(&self) -> String {
        let run = serde_json::json!({
            "aiccsim_version": env!("CARGO_PKG_VERSION"),
            "seed": self.scenario.simulation.seed,
            "scenario": self.scenario,
        });
        let mut text = serde_json::to_string_pretty(&run).expect("run.json serialises");
        text.push('\n');
        text
    }

    pub fn write_iterations(&self, w: &mut dyn Write) -> io::Result<()> {
        let mut c = csv::Writer::from_writer(w);
        c.write_record([
            "iteration",
            "start_ns",
            "end_ns",
            "duration_ns",
            "compute_ns",
            "exposed_comm_ns",
            "flows",
            "bytes",
        ])
        .map_err(csv_err)?;
        for r in self.iterations.iter().flatten() {
            c.write_record([
                r.iteration.to_string(),
                r.start.map(ns).unwrap_or_default(),
                r.end.map(ns).unwrap_or_default(),
                r.duration().map(ns).unwrap_or_default(),
                ns(r.compute),
                r.exposed_comm().map(ns).unwrap_or_default(),
                r.flows.to_string(),
                r.bytes.to_string(),
            ])
            .map_err(csv_err)?;
        }
        c.flush()
    }

    /// Writes every result file into `dir` (created if needed).
    pub fn write_dir(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)?;
        atomic_write(dir, "flows.csv", |w| self.write_flows(w))?;
        atomic_write(dir, "ports.csv", |w| self.write_ports(w))?;
        atomic_write(dir, "summary.json", |w| w.write_all(self.summary_json().as_bytes()))?;
        atomic_write(dir, "run.json", |w| w.write_all(self.run_json().as_bytes()))?;
        if self.timelines {
            atomic_write(dir, "queues.csv", |w| self.write_queues(w))?;
            atomic_write(dir, "rates.csv", |w| self.write_rates(w))?;
            atomic_write(dir, "pauses.csv", |w| self.write_pauses(w))?;
        }
        if self.trace.is_some() {
            atomic_write(dir, "trace.csv", |w| self.write_trace(w))?;
        }
        if self.iterations.is_some() {
            atomic_write(dir, "iterations.csv", |w| self.write_iterations(w))?;
        }
        Ok(())
    }
}
