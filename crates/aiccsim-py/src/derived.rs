//! The derived figures of one run (`aiccsim::metrics::derived`, the figures of `aiccsim
//! reproduce`'s table) for Python: of a run's own results, or of results read back from a
//! folder, whose tables Python hands over and which are put back into the records they were
//! written from.
//!
//! Two things a run knew are in no result file, and are made again from its scenario: each
//! port's speed (the topology, built as the run built it; ports.csv lists the same ports in the
//! same order) and the speed changes of `[[events]]` (the events that slowed a link at or
//! before the run's end).

use crate::result::NativeResult;
use aiccsim::config::LinkAction;
use aiccsim::engine::net::failures::event_ports;
use aiccsim::metrics::fast_forward::FlowSkip;
use aiccsim::metrics::tables::EXPERIMENT;
use aiccsim::metrics::{
    CollectiveRow, FlowRecord, PortRecord, PortStats, QueueSample, RateSample, RunView, SpeedChange,
};
use aiccsim::tags::CollectiveKind;
use aiccsim::time::{parse_time, SimTime};
use aiccsim::topology::Topology;
use aiccsim::workload::CollectiveInfo;
use aiccsim::Scenario;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

/// The records a view borrows, rebuilt from a results folder's tables.
struct Rebuilt {
    sample_interval: Option<SimTime>,
    mtu: u64,
    header: u64,
    simulated_time: SimTime,
    completion_time: Option<SimTime>,
    flows: Vec<FlowRecord>,
    rates: Vec<RateSample>,
    queues: Vec<QueueSample>,
    ports: Vec<PortRecord>,
    speed_changes: Vec<SpeedChange>,
    collectives: Vec<CollectiveRow>,
    skips: Vec<FlowSkip>,
}

enum Source {
    Run(Py<NativeResult>),
    Rebuilt(Box<Rebuilt>),
}

/// A run's derived figures, in the units of `aiccsim reproduce`'s table (us, KB, Gbit/s, %).
#[pyclass(frozen, module = "aiccsim._native")]
pub struct Derived {
    source: Source,
}

impl Derived {
    fn with<R>(&self, f: impl FnOnce(RunView<'_>) -> R) -> R {
        match &self.source {
            Source::Run(native) => f(native.get().results.view()),
            Source::Rebuilt(r) => f(RunView {
                sample_interval: r.sample_interval,
                mtu: r.mtu,
                header: r.header,
                simulated_time: r.simulated_time,
                completion_time: r.completion_time,
                flows: &r.flows,
                rates: &r.rates,
                queues: &r.queues,
                ports: &r.ports,
                speed_changes: &r.speed_changes,
                collectives: &r.collectives,
                skips: &r.skips,
            }),
        }
    }
}

fn time_arg(what: &str, text: &str) -> PyResult<SimTime> {
    parse_time(text).map_err(|e| PyValueError::new_err(format!("{what}={text:?}: {e}")))
}

#[pymethods]
impl Derived {
    /// The figures of a run's own results.
    #[staticmethod]
    fn of_run(native: Py<NativeResult>) -> Derived {
        Derived { source: Source::Run(native) }
    }

    /// The figures of results read back from a folder: its scenario (run.json's, a dict),
    /// summary.json's end times (ns) and its tables as columns (name -> list of values, as
    /// pyarrow's `to_pydict` gives them; `rates`, `queues`, `collectives` and `skips` None where
    /// the run has none).
    #[staticmethod]
    #[pyo3(signature = (scenario, simulated_ns, completion_ns, flows, ports, rates, queues, collectives, skips=None))]
    #[allow(clippy::too_many_arguments)]
    fn of_tables(
        py: Python<'_>,
        scenario: &Bound<'_, PyAny>,
        simulated_ns: f64,
        completion_ns: Option<f64>,
        flows: &Bound<'_, PyDict>,
        ports: &Bound<'_, PyDict>,
        rates: Option<&Bound<'_, PyDict>>,
        queues: Option<&Bound<'_, PyDict>>,
        collectives: Option<&Bound<'_, PyDict>>,
        skips: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Derived> {
        let scenario = crate::scenario::parse(py, scenario, "run.json", None)?;
        let simulated_time = ps(simulated_ns);
        let ports = rebuild_ports(&scenario, ports)?;
        let speed_changes = speed_changes(&scenario, simulated_time)?;
        let rebuilt = Rebuilt {
            sample_interval: scenario.output.sample_interval,
            mtu: scenario.nic.mtu.0,
            header: scenario.nic.header.0,
            simulated_time,
            completion_time: completion_ns.map(ps),
            flows: rebuild_flows(flows)?,
            rates: rates.map(|t| rebuild_rates(t, scenario.output.sample_interval)).transpose()?.unwrap_or_default(),
            queues: queues.map(rebuild_queues).transpose()?.unwrap_or_default(),
            ports,
            speed_changes,
            collectives: collectives.map(rebuild_collectives).transpose()?.unwrap_or_default(),
            skips: skips.map(rebuild_skips).transpose()?.unwrap_or_default(),
        };
        Ok(Derived { source: Source::Rebuilt(Box::new(rebuilt)) })
    }

    /// The queue of switch `switch`'s port `port` at every sample time, (us, KB).
    fn queue_series(&self, switch: u32, port: u32) -> Vec<(f64, f64)> {
        self.with(|v| v.queue_series(switch, port))
    }

    /// `mean_queue_kb`: the time average of that queue, KB.
    fn mean_queue_kb(&self, switch: u32, port: u32) -> Option<f64> {
        self.with(|v| v.mean_queue_kb(switch, port))
    }

    /// `jain_steady`: Jain's index of the flows' steady-phase throughputs.
    fn jain_steady(&self) -> Option<f64> {
        self.with(|v| v.jain_steady())
    }

    /// `recovery_us`: how long flow `flow` took to get its throughput back once alone again.
    fn recovery_us(&self, flow: u32) -> Option<f64> {
        self.with(|v| v.recovery_us(flow))
    }

    /// `min_jain`: the lowest Jain's index over segments of length `segment` ("500us"), each
    /// from `settle` after its start.
    #[pyo3(signature = (segment, settle = "0us"))]
    fn min_segment_jain(&self, segment: &str, settle: &str) -> PyResult<Option<f64>> {
        let (len, settle) = (time_arg("segment", segment)?, time_arg("settle", settle)?);
        Ok(self.with(|v| v.min_segment_jain(len, settle)))
    }

    /// The utilisation of the link from node `node` to node `peer` over the run, %.
    fn link_utilisation_pct(&self, node: &str, peer: &str) -> PyResult<Option<f64>> {
        self.with(|v| match v.link_index(node, peer) {
            Some(i) => Ok(v.link_utilisation_pct(i)),
            None => Err(PyKeyError::new_err(format!(
                "no link from {node} to {peer} (name a node and the node at the other end of one of its ports, as ports.csv does)"
            ))),
        })
    }

    /// `busbw_gbps`: the bus bandwidth of the run's one collective, Gbit/s.
    fn busbw_gbps(&self) -> Option<f64> {
        self.with(|v| v.busbw_bps().map(|b| b / 1e9))
    }

    /// `busbw_bound_gbps`: the bus bandwidth the hosts' links allow that collective, Gbit/s.
    fn busbw_bound_gbps(&self) -> Option<f64> {
        self.with(|v| v.busbw_bound_bps().map(|b| b / 1e9))
    }

    /// `mean_busbw_gbps`: the mean bus bandwidth of the run's collectives, Gbit/s.
    fn mean_busbw_gbps(&self) -> Option<f64> {
        self.with(|v| v.mean_busbw_bps().map(|b| b / 1e9))
    }

    /// `warm_busbw_gbps`: the bus bandwidth of the collectives a job repeats, after its first
    /// (nccl-tests' timed iterations after a warm-up), Gbit/s.
    fn warm_busbw_gbps(&self) -> Option<f64> {
        self.with(|v| v.warm_busbw_bps().map(|b| b / 1e9))
    }

    /// The payload a host link carries at full speed (the slowest one's), Gbit/s.
    fn payload_line_rate_gbps(&self) -> Option<f64> {
        self.with(|v| v.payload_line_rate_bps().map(|b| b / 1e9))
    }

    /// `line_rate_pct`: the mean bus bandwidth over the payload line rate, %.
    fn line_rate_pct(&self) -> Option<f64> {
        self.with(|v| v.line_rate_pct())
    }
}

/// The experiment table's columns: (name, decimals or None for text and counts, axis label).
#[pyfunction]
pub fn experiment_columns() -> Vec<(&'static str, Option<u8>, String)> {
    use aiccsim::metrics::tables::Figure;
    (EXPERIMENT.iter())
        .map(|m| {
            let decimals = match m.figure {
                Figure::Number(d) => Some(d),
                Figure::Count | Figure::Name => None,
            };
            (m.name, decimals, m.label())
        })
        .collect()
}

/// The folder `aiccsim reproduce` gives the run called `name`.
#[pyfunction]
pub fn slug(name: &str) -> String {
    aiccsim::metrics::experiment::slug(name)
}

/// Nanoseconds as written (three decimals) -> the picoseconds they were written from.
fn ps(ns: f64) -> SimTime {
    SimTime((ns * 1000.0).round() as u64)
}

fn column<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(
    table: &Bound<'py, PyDict>,
    name: &str,
) -> PyResult<Vec<T>> {
    let values = table.get_item(name)?.ok_or_else(|| PyKeyError::new_err(format!("no column {name}")))?;
    values.extract()
}

fn rebuild_skips(t: &Bound<'_, PyDict>) -> PyResult<Vec<FlowSkip>> {
    let (flow, bytes): (Vec<u32>, Vec<u64>) = (column(t, "flow")?, column(t, "bytes")?);
    let (from, to): (Vec<f64>, Vec<f64>) = (column(t, "from_ns")?, column(t, "to_ns")?);
    Ok((0..flow.len()).map(|i| FlowSkip { flow: flow[i], from: ps(from[i]), to: ps(to[i]), bytes: bytes[i] }).collect())
}

fn rebuild_flows(t: &Bound<'_, PyDict>) -> PyResult<Vec<FlowRecord>> {
    let ids: Vec<u32> = column(t, "flow_id")?;
    let (src, dst): (Vec<u32>, Vec<u32>) = (column(t, "src")?, column(t, "dst")?);
    let sizes: Vec<u64> = column(t, "size_bytes")?;
    let (start, finish): (Vec<f64>, Vec<Option<f64>>) = (column(t, "start_ns")?, column(t, "finish_ns")?);
    let ideal: Vec<f64> = column(t, "ideal_fct_ns")?;
    let collective: Vec<Option<String>> = column(t, "collective")?;
    let (retransmitted, timeouts): (Vec<u64>, Vec<u32>) = (column(t, "retransmitted_bytes")?, column(t, "timeouts")?);
    let link: Vec<String> = column(t, "link")?;
    Ok((0..ids.len())
        .map(|i| FlowRecord {
            flow_id: ids[i],
            src: src[i],
            dst: dst[i],
            nvlink: link[i] == "nvlink",
            size_bytes: sizes[i],
            start: ps(start[i]),
            finish: finish[i].map(ps),
            ideal_fct: ps(ideal[i]),
            collective: Arc::from(collective[i].as_deref().unwrap_or("")),
            // Not in flows.csv; summary.json's collectives have it, and no figure here reads it.
            collective_ranks: 0,
            retransmitted_bytes: retransmitted[i],
            timeouts: timeouts[i],
        })
        .collect())
}

/// The rates as recorded: throughput was a whole number of bytes over the interval, which the
/// six decimals of `throughput_gbps` give back exactly (for intervals up to milliseconds), so
/// the figures get the very doubles the run had.
fn rebuild_rates(t: &Bound<'_, PyDict>, interval: Option<SimTime>) -> PyResult<Vec<RateSample>> {
    let iv = interval.map_or(0.0, |iv| iv.as_secs_f64());
    let (time, flow): (Vec<f64>, Vec<u32>) = (column(t, "time_ns")?, column(t, "flow")?);
    let (rate, window): (Vec<f64>, Vec<Option<u64>>) = (column(t, "rate_gbps")?, column(t, "window_bytes")?);
    let throughput: Vec<f64> = column(t, "throughput_gbps")?;
    Ok((0..time.len())
        .map(|i| {
            let delivered = (throughput[i] * 1e9 * iv / 8.0).round() as u64;
            RateSample {
                time: ps(time[i]),
                flow: flow[i],
                rate_bps: rate[i] * 1e9,
                window_bytes: window[i],
                throughput_bps: delivered as f64 * 8.0 / iv,
            }
        })
        .collect())
}

fn rebuild_queues(t: &Bound<'_, PyDict>) -> PyResult<Vec<QueueSample>> {
    let (time, switch): (Vec<f64>, Vec<u32>) = (column(t, "time_ns")?, column(t, "switch")?);
    let (port, bytes): (Vec<u32>, Vec<u64>) = (column(t, "port")?, column(t, "bytes")?);
    Ok((0..time.len())
        .map(|i| QueueSample { time: ps(time[i]), switch: switch[i], port: port[i], bytes: bytes[i] })
        .collect())
}

/// ports.csv's rows with each port's speed from the scenario's topology.
fn rebuild_ports(scenario: &Scenario, t: &Bound<'_, PyDict>) -> PyResult<Vec<PortRecord>> {
    let topo = topology(scenario)?;
    let (node, port, peer): (Vec<String>, Vec<u32>, Vec<String>) =
        (column(t, "node")?, column(t, "port")?, column(t, "peer")?);
    let (tx_packets, tx_bytes): (Vec<u64>, Vec<u64>) = (column(t, "tx_packets")?, column(t, "tx_bytes")?);
    let (pause_sent, resume_sent): (Vec<u64>, Vec<u64>) = (column(t, "pause_sent")?, column(t, "resume_sent")?);
    let (drops, ecn_marks): (Vec<u64>, Vec<u64>) = (column(t, "drops")?, column(t, "ecn_marks")?);
    let trims: Vec<u64> = column(t, "trims")?;
    let (max_queue, paused): (Vec<u64>, Vec<f64>) = (column(t, "max_queue_bytes")?, column(t, "paused_ns")?);
    let (stalls, stalled): (Vec<u64>, Vec<f64>) = (column(t, "credit_stalls")?, column(t, "credit_stall_ns")?);
    if node.len() != topo.ports.len() {
        return Err(PyValueError::new_err(format!(
            "ports.csv has {} ports, the topology of run.json's scenario {}: the files are not of one run",
            node.len(),
            topo.ports.len()
        )));
    }
    (0..node.len())
        .map(|i| {
            let p = &topo.ports[i];
            if topo.node_name(p.node) != node[i] || topo.node_name(topo.peer_node(i as u32)) != peer[i] {
                return Err(PyValueError::new_err(format!(
                    "ports.csv row {} is {}:{} -> {}, not a port of run.json's topology: the files are not of one run",
                    i + 1,
                    node[i],
                    port[i],
                    peer[i]
                )));
            }
            let stats = PortStats {
                tx_packets: tx_packets[i],
                tx_bytes: tx_bytes[i],
                pause_sent: pause_sent[i],
                resume_sent: resume_sent[i],
                drops: drops[i],
                ecn_marks: ecn_marks[i],
                paused_time: ps(paused[i]),
                paused_since: None,
                credit_stalls: stalls[i],
                credit_stall_time: ps(stalled[i]),
            };
            let (node, peer) = (node[i].clone(), peer[i].clone());
            Ok(PortRecord {
                node,
                port: port[i],
                peer,
                bandwidth: p.bandwidth,
                max_queue: max_queue[i],
                trims: trims[i],
                stats,
            })
        })
        .collect()
}

fn topology(scenario: &Scenario) -> PyResult<Topology> {
    Topology::build(&scenario.topology)
        .map_err(|(key, message)| PyValueError::new_err(format!("run.json: {key}: {message}")))
}

/// The speed changes the run recorded: every `slow` event of `[[events]]` at or before its end,
/// in time order (same-time events in the scenario's order, as the run applied them).
fn speed_changes(scenario: &Scenario, end: SimTime) -> PyResult<Vec<SpeedChange>> {
    if !scenario.events.iter().any(|e| e.action == LinkAction::Slow) {
        return Ok(Vec::new());
    }
    let topo = topology(scenario)?;
    let mut changes = Vec::new();
    for (i, e) in scenario.events.iter().enumerate().filter(|(_, e)| e.action == LinkAction::Slow && e.at <= end) {
        let ports = event_ports(&topo, i, &e.link, e.index)
            .map_err(|(key, message)| PyValueError::new_err(format!("run.json: {key}: {message}")))?;
        let bandwidth = e.bandwidth.expect("a slow event has a bandwidth");
        changes.extend(ports.into_iter().map(|port| SpeedChange { time: e.at, port, bandwidth }));
    }
    changes.sort_by_key(|c| c.time);
    Ok(changes)
}

/// collectives.csv's rows, their kind and id from the `collective` name (`kind:id`).
fn rebuild_collectives(t: &Bound<'_, PyDict>) -> PyResult<Vec<CollectiveRow>> {
    let (name, job): (Vec<String>, Vec<Option<String>>) = (column(t, "collective")?, column(t, "job")?);
    let (size, ranks, chunks): (Vec<u64>, Vec<u32>, Vec<u32>) =
        (column(t, "size_bytes")?, column(t, "ranks")?, column(t, "chunks")?);
    let (flows, start, finish): (Vec<usize>, Vec<f64>, Vec<Option<f64>>) =
        (column(t, "flows")?, column(t, "start_ns")?, column(t, "finish_ns")?);
    (0..name.len())
        .map(|i| {
            let bad = || PyValueError::new_err(format!("collectives.csv: {:?} is not a collective's name", name[i]));
            let (kind, id) = name[i].split_once(':').ok_or_else(bad)?;
            let kind: CollectiveKind = toml::Value::String(kind.to_string()).try_into().map_err(|_| bad())?;
            let info = CollectiveInfo {
                id: id.parse().map_err(|_| bad())?,
                job: job[i].clone().unwrap_or_default(),
                kind,
                // No figure reads the schedule's name, which a `&'static str` cannot take
                // from a file.
                algorithm: "",
                size: size[i],
                ranks: ranks[i],
                chunks: chunks[i],
            };
            Ok(CollectiveRow { info, flows: flows[i], start: ps(start[i]), finish: finish[i].map(ps) })
        })
        .collect()
}
