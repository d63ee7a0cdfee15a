//! One description per result table: its columns in order, each with its type and whether it
//! can be empty, and the cells of each row. The CSV writer (`results.rs`) and the Python
//! binding's Arrow tables both read tables through here, so a column exists in both or in
//! neither, with the same values; `python/aiccsim/_schema.py` builds its pyarrow schemas from
//! [`TABLES`], and a test holds docs/results.md to the same columns.

use super::iterations::{parallel_dimension, phase_name, training_dimension, training_step};
use super::split::Dimension;
use super::Results;
use crate::time::SimTime;
use std::borrow::Cow;

/// What a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An integer.
    Int,
    /// A time, in nanoseconds with three decimals (whole picoseconds).
    Time,
    /// A ratio or a rate, with six decimals.
    Ratio,
    /// Text.
    Text,
}

impl Kind {
    /// Decimals of the column in the CSV files (0 for integers and text).
    pub fn decimals(self) -> u8 {
        match self {
            Kind::Time => 3,
            Kind::Ratio => 6,
            Kind::Int | Kind::Text => 0,
        }
    }
}

/// One column of a table.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
    /// Whether a cell can be empty (a missing value).
    pub nullable: bool,
}

/// One result table: `NAME.csv`, or `NAME.parquet`.
#[derive(Clone, Copy, Debug)]
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [Column],
    /// Whether a run recorded the table (its file is written only then).
    recorded: fn(&Results) -> bool,
    /// Calls the callback with the cells of each row, in the order of `columns`.
    rows: fn(&Results, Row<'_>),
}

/// A callback given each row's cells.
type Row<'f> = &'f mut dyn FnMut(&[Value<'_>]);

const fn col(name: &'static str, kind: Kind) -> Column {
    Column { name, kind, nullable: false }
}

const fn opt(name: &'static str, kind: Kind) -> Column {
    Column { name, kind, nullable: true }
}

use Kind::{Int, Ratio, Text, Time};

pub const FLOWS: Table = Table {
    name: "flows",
    columns: &[
        col("flow_id", Int),
        col("src", Int),
        col("dst", Int),
        col("size_bytes", Int),
        col("start_ns", Time),
        opt("finish_ns", Time),
        opt("fct_ns", Time),
        col("ideal_fct_ns", Time),
        opt("slowdown", Ratio),
        opt("collective", Text),
        col("retransmitted_bytes", Int),
        col("timeouts", Int),
        col("link", Text),
    ],
    recorded: always,
    rows: flow_rows,
};

pub const PORTS: Table = Table {
    name: "ports",
    columns: &[
        col("node", Text),
        col("port", Int),
        col("peer", Text),
        col("tx_packets", Int),
        col("tx_bytes", Int),
        col("pause_sent", Int),
        col("resume_sent", Int),
        col("drops", Int),
        col("trims", Int),
        col("ecn_marks", Int),
        col("max_queue_bytes", Int),
        col("paused_ns", Time),
        col("credit_stalls", Int),
        col("credit_stall_ns", Time),
    ],
    recorded: always,
    rows: port_rows,
};

pub const QUEUES: Table = Table {
    name: "queues",
    columns: &[col("time_ns", Time), col("switch", Int), col("port", Int), col("bytes", Int)],
    recorded: with_timelines,
    rows: queue_rows,
};

pub const RATES: Table = Table {
    name: "rates",
    columns: &[
        col("time_ns", Time),
        col("flow", Int),
        col("rate_gbps", Ratio),
        opt("window_bytes", Int),
        col("throughput_gbps", Ratio),
    ],
    recorded: with_timelines,
    rows: rate_rows,
};

/// The algorithm's own state (`CongestionControl::metrics`) in long form, one row per value:
/// the algorithms report different names, and a table's columns are fixed.
pub const CC_STATE: Table = Table {
    name: "cc_state",
    columns: &[col("time_ns", Time), col("flow", Int), col("name", Text), col("value", Ratio)],
    recorded: with_cc_state,
    rows: cc_state_rows,
};

pub const PAUSES: Table = Table {
    name: "pauses",
    columns: &[
        col("time_ns", Time),
        col("node", Text),
        col("port", Int),
        col("peer", Text),
        col("priority", Int),
        col("event", Text),
    ],
    recorded: with_timelines,
    rows: pause_rows,
};

pub const LINKS: Table = Table {
    name: "links",
    columns: &[
        col("time_ns", Time),
        col("node", Text),
        col("port", Int),
        col("peer", Text),
        col("bytes", Int),
        col("utilisation", Ratio),
    ],
    recorded: with_timelines,
    rows: link_rows,
};

pub const TRACE: Table = Table {
    name: "trace",
    columns: &[
        col("time_ns", Time),
        col("event", Text),
        col("node", Text),
        col("port", Int),
        col("kind", Text),
        opt("flow", Int),
        col("seq", Int),
        col("size_bytes", Int),
        col("priority", Int),
        col("ecn", Int),
        opt("queue_bytes", Int),
    ],
    recorded: with_trace,
    rows: trace_rows,
};

pub const ITERATIONS: Table = Table {
    name: "iterations",
    columns: &[
        opt("job", Text),
        col("iteration", Int),
        opt("start_ns", Time),
        opt("end_ns", Time),
        opt("duration_ns", Time),
        col("compute_ns", Time),
        opt("exposed_comm_ns", Time),
        col("flows", Int),
        col("bytes", Int),
        opt("rank", Int),
        opt("bubble_ns", Time),
        opt("exposed_tp_ns", Time),
        opt("exposed_pp_ns", Time),
        opt("exposed_dp_ns", Time),
        opt("exposed_ep_ns", Time),
        opt("exposed_other_ns", Time),
    ],
    recorded: with_iterations,
    rows: iteration_rows,
};

pub const STEPS: Table = Table {
    name: "steps",
    columns: &[
        opt("job", Text),
        col("iteration", Int),
        col("rank", Int),
        opt("microbatch", Int),
        col("layer", Int),
        col("phase", Text),
        opt("start_ns", Time),
        opt("end_ns", Time),
    ],
    recorded: with_iterations,
    rows: step_rows,
};

pub const TRAINING_COLLECTIVES: Table = Table {
    name: "training_collectives",
    columns: &[
        opt("job", Text),
        col("collective", Text),
        col("iteration", Int),
        col("dimension", Text),
        col("layer", Int),
        opt("microbatch", Int),
    ],
    recorded: with_iterations,
    rows: training_collective_rows,
};

pub const COLLECTIVES: Table = Table {
    name: "collectives",
    columns: &[
        col("collective", Text),
        opt("job", Text),
        col("kind", Text),
        col("algorithm", Text),
        col("size_bytes", Int),
        col("ranks", Int),
        col("chunks", Int),
        col("flows", Int),
        col("start_ns", Time),
        opt("finish_ns", Time),
        opt("cct_ns", Time),
        opt("algbw_gbps", Ratio),
        opt("busbw_gbps", Ratio),
    ],
    recorded: with_collectives,
    rows: collective_rows,
};

pub const JOBS: Table = Table {
    name: "jobs",
    columns: &[
        col("job", Text),
        col("placement", Text),
        col("ranks", Int),
        col("hosts", Text),
        col("start_ns", Time),
        opt("finish_ns", Time),
        opt("duration_ns", Time),
        col("flows", Int),
        col("bytes", Int),
        col("collectives", Int),
        col("iterations", Int),
        opt("mean_iteration_ns", Time),
        opt("mean_exposed_comm_ns", Time),
    ],
    recorded: with_jobs,
    rows: job_rows,
};

/// Every result table, in the order of docs/results.md.
/// What fast-forward credited to each flow in each skip: the spans no packet of the flow was
/// simulated in, and the bytes it was given as delivered there.
pub const SKIPS: Table = Table {
    name: "skips",
    columns: &[col("flow", Int), col("from_ns", Time), col("to_ns", Time), col("bytes", Int)],
    recorded: with_skips,
    rows: skip_rows,
};

pub const TABLES: [&Table; 14] = [
    &FLOWS,
    &PORTS,
    &QUEUES,
    &RATES,
    &CC_STATE,
    &PAUSES,
    &LINKS,
    &TRACE,
    &ITERATIONS,
    &STEPS,
    &TRAINING_COLLECTIVES,
    &COLLECTIVES,
    &JOBS,
    &SKIPS,
];

/// One cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    Int(i128),
    Time(SimTime),
    Ratio(f64),
    Text(Cow<'a, str>),
    /// An empty cell.
    Missing,
}

impl Value<'_> {
    fn time(t: Option<SimTime>) -> Value<'static> {
        t.map_or(Value::Missing, Value::Time)
    }

    fn int(i: Option<impl Into<i128>>) -> Value<'static> {
        i.map_or(Value::Missing, |i| Value::Int(i.into()))
    }
}

impl Results {
    /// The name of job `j` (empty for a `[workload]`).
    fn job_name(&self, j: u32) -> &str {
        self.job_names.get(j as usize).map_or("", String::as_str)
    }

    /// Whether the run recorded `table` (its file is written only then).
    pub fn has_table(&self, table: &Table) -> bool {
        (table.recorded)(self)
    }

    /// Calls `row` with the cells of each row of `table`, in the order of its columns.
    pub fn for_each_row(&self, table: &Table, row: Row<'_>) {
        (table.rows)(self, row)
    }
}

fn always(_: &Results) -> bool {
    true
}

fn with_collectives(r: &Results) -> bool {
    !r.collectives.is_empty()
}

fn with_jobs(r: &Results) -> bool {
    !r.jobs.is_empty()
}

fn with_timelines(r: &Results) -> bool {
    r.timelines
}

fn with_skips(r: &Results) -> bool {
    r.summary.fast_forward.as_ref().is_some_and(|ff| !ff.flow_skips.is_empty())
}

fn with_cc_state(r: &Results) -> bool {
    r.timelines && r.scenario.output.cc_state
}

fn with_trace(r: &Results) -> bool {
    r.trace.is_some()
}

fn with_iterations(r: &Results) -> bool {
    r.iterations.is_some()
}

fn flow_rows(r: &Results, row: Row<'_>) {
    use Value::{Int as I, Missing, Ratio as R, Text as S, Time as T};
    for f in &r.flows {
        row(&[
            I(f.flow_id.into()),
            I(f.src.into()),
            I(f.dst.into()),
            I(f.size_bytes.into()),
            T(f.start),
            Value::time(f.finish),
            Value::time(f.fct()),
            T(f.ideal_fct),
            f.slowdown().map_or(Missing, R),
            if f.collective.is_empty() { Missing } else { S(Cow::Borrowed(&f.collective)) },
            I(f.retransmitted_bytes.into()),
            I(f.timeouts.into()),
            S(Cow::Borrowed(if f.nvlink { "nvlink" } else { "nic" })),
        ]);
    }
}

fn port_rows(r: &Results, row: Row<'_>) {
    use Value::{Int as I, Text as S, Time as T};
    for p in &r.ports {
        let s = &p.stats;
        row(&[
            S(Cow::Borrowed(&p.node)),
            I(p.port.into()),
            S(Cow::Borrowed(&p.peer)),
            I(s.tx_packets.into()),
            I(s.tx_bytes.into()),
            I(s.pause_sent.into()),
            I(s.resume_sent.into()),
            I(s.drops.into()),
            I(p.trims.into()),
            I(s.ecn_marks.into()),
            I(p.max_queue.into()),
            T(s.paused_time),
            I(s.credit_stalls.into()),
            T(s.credit_stall_time),
        ]);
    }
}

fn queue_rows(r: &Results, row: Row<'_>) {
    use Value::{Int as I, Time as T};
    for q in &r.queues {
        row(&[T(q.time), I(q.switch.into()), I(q.port.into()), I(q.bytes.into())]);
    }
}

fn rate_rows(r: &Results, row: Row<'_>) {
    use Value::{Int as I, Ratio as R, Time as T};
    for r in &r.rates {
        row(&[T(r.time), I(r.flow.into()), R(r.rate_bps / 1e9), Value::int(r.window_bytes), R(r.throughput_bps / 1e9)]);
    }
}

fn skip_rows(r: &Results, row: Row<'_>) {
    use Value::{Int as I, Time as T};
    for s in r.summary.fast_forward.iter().flat_map(|ff| &ff.flow_skips) {
        row(&[I(s.flow.into()), T(s.from), T(s.to), I(s.bytes.into())]);
    }
}

fn cc_state_rows(r: &Results, row: Row<'_>) {
    use Value::{Int as I, Ratio as R, Text as S, Time as T};
    let names = &r.cc_state.names;
    for s in &r.cc_state.samples {
        row(&[T(s.time), I(s.flow.into()), S(Cow::Borrowed(&names[s.name as usize])), R(s.value)]);
    }
}

fn pause_rows(r: &Results, row: Row<'_>) {
    use Value::{Int as I, Text as S, Time as T};
    let names = &r.topology;
    for e in &r.pauses {
        row(&[
            T(e.time),
            S(Cow::Owned(names.node_name(e.node))),
            I(e.port.into()),
            S(Cow::Owned(names.node_name(e.peer))),
            I(e.priority.into()),
            S(Cow::Borrowed(if e.pause { "pause" } else { "resume" })),
        ]);
    }
}

fn link_rows(r: &Results, row: Row<'_>) {
    use Value::{Int as I, Ratio as R, Text as S, Time as T};
    let interval = r.scenario.output.sample_interval.map_or(0.0, |iv| iv.as_secs_f64());
    for l in &r.links {
        let port = &r.ports[l.port as usize];
        // The link's speed at the end of the interval: its first, or the last a link event gave
        // it before the sample.
        let changed = r.speed_changes.iter().rev().find(|c| c.port == l.port && c.time < l.time);
        let bandwidth = changed.map_or(port.bandwidth, |c| c.bandwidth);
        // The share of the interval the link spent sending: its bytes over what it could carry.
        let capacity = bandwidth.0 as f64 * interval / 8.0;
        row(&[
            T(l.time),
            S(Cow::Borrowed(&port.node)),
            I(port.port.into()),
            S(Cow::Borrowed(&port.peer)),
            I(l.bytes.into()),
            R(if capacity > 0.0 { l.bytes as f64 / capacity } else { 0.0 }),
        ]);
    }
}

fn trace_rows(r: &Results, row: Row<'_>) {
    use Value::{Int as I, Text as S, Time as T};
    let names = &r.topology;
    for r in r.trace.iter().flatten() {
        row(&[
            T(r.time),
            S(Cow::Borrowed(r.event.as_str())),
            S(Cow::Owned(names.node_name(r.node))),
            I(r.port.into()),
            S(Cow::Borrowed(super::trace::kind_name(r.kind))),
            Value::int(r.flow),
            I(r.seq.into()),
            I(r.size.into()),
            I(r.priority.into()),
            I(u8::from(r.ecn).into()),
            Value::int(r.queue_bytes),
        ]);
    }
}

fn collective_rows(r: &Results, row: Row<'_>) {
    use Value::{Int as I, Missing, Ratio as R, Text as S, Time as T};
    for c in &r.collectives {
        let gbps = |bps: Option<f64>| bps.map_or(Missing, |b| R(b / 1e9));
        row(&[
            S(Cow::Owned(c.info.name())),
            job_cell(&c.info.job),
            S(Cow::Owned(c.info.kind.to_string())),
            S(Cow::Borrowed(c.info.algorithm)),
            I(c.info.size.into()),
            I(c.info.ranks.into()),
            I(c.info.chunks.into()),
            I(c.flows as i128),
            T(c.start),
            Value::time(c.finish),
            Value::time(c.cct()),
            gbps(c.algbw_bps()),
            gbps(c.busbw_bps()),
        ]);
    }
}

fn iteration_rows(r: &Results, row: Row<'_>) {
    use Value::{Int as I, Time as T};
    for r in r.iterations.iter().flatten() {
        row(&[
            job_cell(&r.job),
            I(r.iteration.into()),
            Value::time(r.start),
            Value::time(r.end),
            Value::time(r.duration()),
            T(r.compute),
            Value::time(r.exposed_comm()),
            I(r.flows.into()),
            I(r.bytes.into()),
            Value::int(r.rank()),
            Value::time(r.bubble()),
            Value::time(r.exposed(Dimension::Tp)),
            Value::time(r.exposed(Dimension::Pp)),
            Value::time(r.exposed(Dimension::Dp)),
            Value::time(r.exposed(Dimension::Ep)),
            Value::time(r.exposed(Dimension::Other)),
        ]);
    }
}

fn step_rows(r: &Results, row: Row<'_>) {
    use Value::{Int as I, Missing, Text as S};
    for layout in &r.layouts.training {
        let job = job_cell(r.job_name(layout.job));
        let steps = layout.first_compute..layout.iteration_computes(layout.iterations.saturating_sub(1)).end;
        for c in steps.filter(|_| layout.iterations > 0) {
            let (k, rank, layer, phase) = training_step(layout, c);
            let step = &r.computes[c as usize];
            row(&[
                job.clone(),
                I(k.into()),
                I(layout.ranks[rank].into()),
                Missing,
                I(layer.into()),
                S(Cow::Borrowed(phase_name(phase))),
                Value::time(step.start),
                Value::time(step.end),
            ]);
        }
    }
    for layout in &r.layouts.parallel_training {
        let job = job_cell(r.job_name(layout.job));
        for (i, s) in layout.steps.iter().enumerate() {
            let step = &r.computes[layout.first_compute as usize + i];
            row(&[
                job.clone(),
                I(s.iteration.into()),
                I(layout.ranks[s.rank as usize].into()),
                I(s.microbatch.into()),
                I(s.layer.into()),
                S(Cow::Borrowed(phase_name(s.phase))),
                Value::time(step.start),
                Value::time(step.end),
            ]);
        }
    }
}

fn training_collective_rows(r: &Results, row: Row<'_>) {
    use Value::{Int as I, Missing, Text as S};
    // Named as flows.csv names their flows; a collective that made no flow has no row.
    let name = |flows: &std::ops::Range<u32>| r.flows.get(flows.start as usize).filter(|_| !flows.is_empty());
    for layout in &r.layouts.training {
        let job = job_cell(r.job_name(layout.job));
        for c in &layout.collectives {
            let Some(f) = name(&c.flows) else { continue };
            let dimension = training_dimension(c.op, c.group).name();
            row(&[
                job.clone(),
                S(Cow::Borrowed(&f.collective)),
                I(c.iteration.into()),
                S(Cow::Borrowed(dimension)),
                I(c.layer.into()),
                Missing,
            ]);
        }
    }
    for layout in &r.layouts.parallel_training {
        let job = job_cell(r.job_name(layout.job));
        for c in &layout.collectives {
            let Some(f) = name(&c.flows) else { continue };
            row(&[
                job.clone(),
                S(Cow::Borrowed(&f.collective)),
                I(c.iteration.into()),
                S(Cow::Borrowed(parallel_dimension(c.dim).name())),
                I(c.layer.into()),
                Value::int(c.microbatch),
            ]);
        }
    }
}

/// A row's job: empty (no job) for a `[workload]`.
fn job_cell(name: &str) -> Value<'_> {
    match name {
        "" => Value::Missing,
        name => Value::Text(Cow::Borrowed(name)),
    }
}

fn job_rows(r: &Results, row: Row<'_>) {
    use Value::{Int as I, Text as S, Time as T};
    for j in &r.jobs {
        let it = j.iterations.as_ref();
        row(&[
            S(Cow::Borrowed(&j.name)),
            S(Cow::Borrowed(j.placement)),
            I(j.hosts.len() as i128),
            S(Cow::Owned(j.hosts_text())),
            T(j.start),
            Value::time(j.finish),
            Value::time(j.duration()),
            I(j.flows.into()),
            I(j.bytes.into()),
            I(j.collectives.into()),
            I(it.map_or(0, |i| i.count).into()),
            Value::time(it.and_then(|i| i.mean_duration_ns)),
            Value::time(it.and_then(|i| i.mean_exposed_comm_ns)),
        ]);
    }
}

// ---- The experiment table -------------------------------------------------------------------
//
// `table.csv` of `aiccsim reproduce`: one row per run of an experiment, made by
// `metrics/experiment.rs`. Its cells are figures in the units a reader wants (us, Gbit/s, %),
// each rounded to its own decimals, so its columns say that instead of a `Kind`.

/// What a cell of the experiment table holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// The run's name.
    Name,
    /// A count.
    Count,
    /// A number with this many decimals (`inf` where it has no end).
    Number(u8),
}

/// One column of the experiment table.
#[derive(Clone, Copy, Debug)]
pub struct Measure {
    pub name: &'static str,
    pub figure: Figure,
    /// What it measures, in words, and its unit: a plot's axis reads "`what` (`unit`)".
    pub what: &'static str,
    pub unit: &'static str,
}

impl Measure {
    /// The axis label of a plot of this column: what it measures and its unit.
    pub fn label(&self) -> String {
        format!("{} ({})", self.what, self.unit)
    }

    /// A cell of this column: `value` with the column's decimals (none for a count), empty
    /// for `None`.
    pub fn cell(&self, value: Option<f64>) -> String {
        let decimals = match self.figure {
            Figure::Number(d) => d as usize,
            Figure::Count | Figure::Name => 0,
        };
        value.map(|v| format!("{v:.decimals$}")).unwrap_or_default()
    }
}

const fn measure(name: &'static str, figure: Figure, what: &'static str, unit: &'static str) -> Measure {
    Measure { name, figure, what, unit }
}

use Figure::{Count, Number};

/// The experiment table's columns, in order (the names `[[check]]` claims and bar plots use).
pub const EXPERIMENT: [Measure; 35] = [
    measure("scheme", Figure::Name, "run", "text"),
    measure("flows", Count, "flows", "count"),
    measure("finished", Count, "flows finished", "count"),
    measure("completion_us", Number(1), "completion time", "µs"),
    measure("goodput_gbps", Number(2), "goodput", "Gbit/s"),
    measure("max_fct_us", Number(1), "max FCT", "µs"),
    measure("mean_fct_us", Number(1), "mean FCT", "µs"),
    measure("p99_fct_us", Number(1), "p99 FCT", "µs"),
    measure("max_slowdown", Number(3), "max slowdown", "FCT / ideal FCT"),
    measure("p99_slowdown", Number(3), "p99 slowdown", "FCT / ideal FCT"),
    measure("pause_frames", Count, "PAUSE frames", "count"),
    measure("drops", Count, "packets dropped", "count"),
    measure("trims", Count, "packets trimmed", "count"),
    measure("timeouts", Count, "retransmission timeouts", "count"),
    measure("resent_mb", Number(3), "bytes resent", "MB"),
    measure("ecn_marks", Count, "ECN marks", "count"),
    measure("cnps", Count, "CNPs", "count"),
    measure("max_queue_kb", Number(1), "max switch queue", "KB"),
    measure("mean_queue_kb", Number(1), "mean switch queue", "KB"),
    measure("header_overhead_pct", Number(2), "header overhead", "%"),
    measure("mean_rtt_us", Number(2), "mean RTT", "µs"),
    measure("mean_queuing_us", Number(2), "mean queuing delay", "µs"),
    measure("p99_queuing_us", Number(2), "p99 queuing delay", "µs"),
    measure("recovery_us", Number(2), "recovery time", "µs"),
    measure("jain_steady", Number(4), "Jain's fairness index, steady state", "0 to 1"),
    measure("min_jain", Number(4), "min Jain's fairness index", "0 to 1"),
    measure("mean_iteration_us", Number(1), "mean iteration time", "µs"),
    measure("mean_exposed_comm_us", Number(1), "mean exposed communication", "µs"),
    measure("busbw_gbps", Number(2), "bus bandwidth", "Gbit/s"),
    measure("busbw_bound_gbps", Number(2), "bus bandwidth bound of the topology", "Gbit/s"),
    measure("mean_busbw_gbps", Number(2), "mean bus bandwidth of the collectives", "Gbit/s"),
    measure("warm_busbw_gbps", Number(2), "bus bandwidth of repeated collectives after the first", "Gbit/s"),
    measure("line_rate_pct", Number(1), "mean bus bandwidth, of the payload line rate", "%"),
    measure("min_link_util_pct", Number(1), "lowest utilisation of the listed links", "%"),
    measure("mean_link_util_pct", Number(1), "mean utilisation of the listed links", "%"),
];

/// The experiment table's column called `name`.
pub fn experiment_column(name: &str) -> Option<&'static Measure> {
    EXPERIMENT.iter().find(|m| m.name == name)
}
