"""Plots of results with matplotlib: `aiccsim report` draws these, and so can a notebook.

Every function takes a `Result`, or a mapping label -> Result to compare runs on one plot (one
colour per run, in the mapping's order), and optionally the matplotlib Axes to draw on; it
returns the Axes. Without an Axes it draws on a new Figure (``ax.figure``) made without pyplot,
so nothing is added to pyplot's global state and any backend can show or save it
(``ax.figure.savefig("fct.png")``; a notebook shows ``ax.figure``).

When none of the results has what a plot needs (no timelines sampled, no finished flow, no
collective), the function raises `NoData`, a ValueError whose message says what is missing and
which scenario setting records it.

Legends sit right of the axes, clear of the data; a figure made here widens to hold them. A plot
that draws some of the flows only says so in its title ("first 16 of 64 flows, by id").

`metric_bars` draws an experiment's table (``table.csv`` of ``aiccsim reproduce``) instead: a
bar per run and column, grouped by the runs' names. ``aiccsim plot DIR`` (and ``reproduce``)
draw an experiment's own figure with these functions (aiccsim/_experiment_plot.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict, Union

import numpy as np
from matplotlib import color_sequences
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter

from aiccsim._experiment import series_of
from aiccsim._result import Result

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.typing import ColorType

Results = Union[Result, Mapping[str, Result]]

__all__ = [
    "NoData",
    "cct_bars",
    "fct_cdf",
    "iteration_bars",
    "metric_bars",
    "pause_timeline",
    "queue_unit",
    "queue_timeline",
    "rate_timeline",
    "slowdown_by_size",
    "throughput_timeline",
    "timeline",
]

SAMPLED = "set output.sample_interval in the scenario's [output] to sample timelines"

# A legend column holds this many names; more take another column.
LEGEND_ROWS = 20

# Switch queues in KB up to this many bytes, in MB above: one unit for every queue of a page.
MB_FROM = 2e6


class NoData(ValueError):
    """None of the results has the data a plot needs; the message says what to change."""


def fct_cdf(results: Results, ax: Axes | None = None) -> Axes:
    """The distribution of flow completion times, one line per run: 0 up to the first FCT, then
    a step up of 1/n at each of the n finished flows' FCT. Unfinished flows are left out. The
    FCT axis is logarithmic when the FCTs span more than a factor of 100."""
    runs = _runs(results)
    ax = _axes(ax)
    drawn = []
    for i, label, r in runs:
        fct = np.sort(r.flows["fct_ns"].dropna().to_numpy()) / 1e3
        if len(fct) == 0:
            continue
        x = np.concatenate([fct[:1], fct])
        y = np.arange(len(fct) + 1) / len(fct)
        ax.step(x, y, where="post", color=_run_color(i, len(runs)), label=_name(label, r))
        drawn.append(fct)
    if not drawn:
        raise NoData("fct_cdf: no flow finished, so there is no FCT to plot")
    _log_if_wide(ax, "x", np.concatenate(drawn))
    ax.set(xlabel="flow completion time (µs)", ylabel="fraction of flows (0 to 1)", ylim=(0, 1.02), title="FCT CDF")
    _legend(ax)
    return ax


def slowdown_by_size(results: Results, ax: Axes | None = None, *, bins: int = 10) -> Axes:
    """The median (solid) and 99th-percentile (dashed) slowdown of finished flows by flow size,
    two lines per run. Flows are grouped by size: each distinct size if there are at most
    ``bins`` of them, else ``bins`` groups of equal width on a log scale, each drawn at the
    median size of its flows. Percentiles are by nearest rank, as in summary.json.

    Where every finished flow has the same size there is nothing to plot by size (the FCT CDF
    and summary.json's slowdown percentiles say it all): it raises `NoData`, and the report
    leaves the plot out."""
    runs = _runs(results)
    ax = _axes(ax)
    finished = [(i, label, r, r.flows[r.flows["slowdown"].notna()]) for i, label, r in runs]
    sizes = np.concatenate([done["size_bytes"].to_numpy() for *_, done in finished])
    if len(sizes) == 0:
        raise NoData("slowdown_by_size: no flow finished, so there is no slowdown to plot")
    distinct = np.unique(sizes)
    if len(distinct) == 1:
        raise NoData(
            f"slowdown_by_size: every finished flow is {int(distinct[0])} bytes, so there is no "
            "size to compare (the FCT CDF shows their slowdowns' spread)"
        )
    edges = None if len(distinct) <= bins else np.geomspace(distinct[0], distinct[-1] + 1, bins + 1)
    for i, label, r, done in finished:
        if done.empty:
            continue
        groups = done.groupby(done["size_bytes"] if edges is None else np.digitize(done["size_bytes"], edges))
        x = groups["size_bytes"].median().to_numpy()
        for q, style in [(50, "-"), (99, "--")]:
            y = groups["slowdown"].agg(lambda s, q=q: np.percentile(s, q, method="inverted_cdf")).to_numpy()
            ax.plot(x, y, style, marker="o", color=f"C{i}", label=f"{_name(label, r)} p{q}")
    _log_if_wide(ax, "x", sizes, factor=10)
    _log_if_wide(ax, "y", np.concatenate([done["slowdown"].to_numpy() for *_, done in finished]))
    ax.xaxis.set_major_formatter(EngFormatter(unit="B"))  # 200 kB, 1 MB: sizes in the scenario's units
    ax.set(xlabel="flow size (bytes)", ylabel="slowdown (FCT / ideal FCT)", title="Slowdown by flow size")
    _legend(ax)
    return ax


def queue_timeline(
    results: Results,
    ax: Axes | None = None,
    *,
    ports: Sequence[tuple[int, int]] | None = None,
    top: int | None = None,
    unit: str | None = None,
) -> Axes:
    """The egress queue of switch ports over time (queues.csv), one line per port and run.

    ``ports``: (switch, port) pairs; by default the ``top`` ports with the largest queue over
    all runs (6 for one Result, 1 to compare runs). A sample that queues.csv leaves out is an
    empty queue: each line is drawn as steps through the samples, from 0 at time 0.
    ``unit``: "KB" or "MB"; by default `queue_unit` of the results, so that every queue plot of
    the same runs (and the report's figures of them) reads in one unit."""
    runs = _runs(results)
    ax = _axes(ax)
    queues = [(i, label, r, r.queues) for i, label, r in runs if r.queues is not None]
    if not queues:
        raise NoData(f"queue_timeline: no queue samples: {SAMPLED}")
    if all(q.empty for *_, q in queues):
        raise NoData("queue_timeline: every sampled switch queue stayed empty")
    if ports is None:
        peaks = _concat([q for *_, q in queues]).groupby(["switch", "port"])["bytes"].max()
        count = top if top is not None else (6 if len(runs) == 1 else 1)
        ports = list(peaks.sort_values(ascending=False, kind="stable").index[:count])
    unit = unit or queue_unit(results)
    scale = _QUEUE_UNITS[unit]
    for i, label, r, q in queues:
        for j, (switch, port) in enumerate(ports):
            rows = q[(q["switch"] == switch) & (q["port"] == port)]
            t = np.concatenate([[0.0], rows["time_ns"].to_numpy() / 1e3])
            size = np.concatenate([[0.0], rows["bytes"].to_numpy() / scale])
            name = _prefixed(label, _port_name(r, f"s{switch}", port))
            t, size = _broken_at_skips(t, size, r)
            ax.step(t, size, where="post", label=name, **_style(len(runs), i, j))
    _shade_skips(ax, runs)
    ax.set(xlabel="time (µs)", ylabel=f"egress queue ({unit})", title="Switch queues")
    ax.set_ylim(bottom=0)
    _legend(ax)
    return ax


_QUEUE_UNITS = {"KB": 1e3, "MB": 1e6}


def queue_unit(results: Results) -> str:
    """The unit of the switch queues of these runs: "MB" when the largest queue of any of them
    (``summary["max_switch_queue_bytes"]``) reaches `MB_FROM` bytes, else "KB"."""
    peak = max(r.summary.get("max_switch_queue_bytes", 0) for _, _, r in _runs(results))
    return "MB" if peak >= MB_FROM else "KB"


def rate_timeline(
    results: Results,
    ax: Axes | None = None,
    *,
    flows: Sequence[int] | None = None,
    window: bool = False,
    top: int = 16,
) -> Axes:
    """The rate the congestion-control algorithm sets for each flow over time (rates.csv), or
    with ``window=True`` its window, one line per flow and run. ``flows``: the flow ids; by
    default every flow sampled, or where there are more than ``top``, the ``top`` of lowest id,
    which the title says ("first 16 of 64 flows, by id")."""
    column, unit, scale = ("window_bytes", "window (KB)", 1e3) if window else ("rate_gbps", "rate (Gbit/s)", 1.0)
    title = "Window per flow" if window else "Rate per flow"
    ax = _flow_lines("rate_timeline", results, ax, column, flows, top, "default", scale, title)
    ax.set(xlabel="time (µs)", ylabel=unit)
    ax.set_ylim(bottom=0)
    return ax


def throughput_timeline(
    results: Results,
    ax: Axes | None = None,
    *,
    flows: Sequence[int] | None = None,
    top: int = 4,
    window: float | None = None,
) -> Axes:
    """The throughput each flow delivered over time (rates.csv: payload bytes received in order
    during the interval before each sample), one line per flow and run, each the mean over a
    sliding ``window`` (µs; by default a hundredth of the sampled time, at least one sample):
    a sample holds a whole number of packets, so that unsmoothed a line-rate flow flickers
    between two values and many flows make a band of spikes. The title gives the window.

    ``flows``: the flow ids; by default every flow sampled, or where there are more than 8,
    the ``top`` of lowest id and, in black, the total of all of them, which the title says
    ("total of 64 flows and the first 4, by id")."""
    runs = _runs(results)
    ax = _axes(ax)
    sampled = [(i, label, r.rates) for i, label, r in runs if r.rates is not None]
    if not sampled:
        raise NoData(f"throughput_timeline: no rate samples: {SAMPLED}")
    rates = [(i, label, q[q["throughput_gbps"].notna()]) for i, label, q in sampled]
    if all(q.empty for *_, q in rates):
        raise NoData("throughput_timeline: nothing to plot: no flow was sampled")
    every = _concat([q for *_, q in rates])
    times = np.unique(every["time_ns"].to_numpy())
    interval = float(np.min(np.diff(times))) if len(times) > 1 else 1.0
    if window is None:
        window = max(interval, (times[-1] - times[0]) / 100) / 1e3
    samples = max(1, round(window * 1e3 / interval))
    title = f"Throughput per flow (mean over {_us(samples * interval / 1e3)} windows)"
    total = False
    if flows is None:
        sampled_flows = sorted(every["flow"].unique())
        flows = sampled_flows
        if len(sampled_flows) > 8:
            flows, total = sampled_flows[:top], True
            title = (
                f"Throughput (mean over {_us(samples * interval / 1e3)} windows): "
                f"total of {len(sampled_flows)} flows and the first {len(flows)}, by id"
            )
    for i, label, q in rates:
        lines: list[tuple[str, pd.DataFrame, _LineStyle]] = []
        if total:
            summed = q.groupby("time_ns", as_index=False)["throughput_gbps"].sum()
            style: _LineStyle = {"color": "black"} if len(runs) == 1 else {"color": _run_color(i, len(runs))}
            lines.append(("total", summed, {**style, "linewidth": 2.0}))
        for j, flow in enumerate(flows):
            lines.append((f"flow {flow}", q[q["flow"] == flow], _style(len(runs), i, j + total, len(flows) + total)))
        for name, rows, line_style in lines:
            if rows.empty:
                continue
            y = rows["throughput_gbps"].rolling(samples, min_periods=1).mean().to_numpy(dtype=float)
            x, y = _broken_at_skips(rows["time_ns"].to_numpy() / 1e3, y, _run_of(runs, i))
            ax.plot(x, y, label=_prefixed(label, name), **line_style)
    _shade_skips(ax, runs)
    ax.set_title(title)
    _legend(ax)
    ax.set(xlabel="time (µs)", ylabel="throughput (Gbit/s)")
    ax.set_ylim(bottom=0)
    return ax


def metric_bars(
    table: pd.DataFrame,
    metrics: str | Sequence[str],
    *,
    series: Sequence[str] = (),
    labels: Mapping[str, str] | None = None,
    figure: Figure | None = None,
) -> Figure:
    """Columns of an experiment's table (``table.csv``: a row per run, its name in ``scheme``),
    a panel per column, a bar per run; an empty cell (not measured) has no bar.

    With ``series`` (the starts of the runs' names, e.g. ``["PC4", "DCQCN"]``), each run is the
    series its name starts with (the longest that fits) and belongs to the group the rest of
    its name gives ("PC4 n=2": series "PC4", group "n=2"): the panels then have the groups
    along x, the series side by side in each group, a colour per series. Without it, a
    horizontal bar per run. A panel whose values span more than a factor of 100 is on a log
    scale. ``labels``: column -> axis label (default: the column's name).
    Returns the figure: a new one unless ``figure`` is given."""
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise ValueError("metric_bars: name at least one column")
    missing = [m for m in [*names, "scheme"] if m not in table.columns]
    if missing:
        raise ValueError(f"metric_bars: the table has no column {', '.join(missing)}")
    label = dict(labels or {})
    runs = [str(s) for s in table["scheme"]]
    values = {m: np.asarray(_numeric(table[m]), dtype=float) for m in names}
    if series:
        placed = [series_of(run, list(series)) for run in runs]
        groups = list(dict.fromkeys(g for _, g in placed))
        kinds = [s for s in series if any(p == s for p, _ in placed)]
        fig = figure or Figure(figsize=(max(8, 1.0 + 0.22 * len(groups) * len(kinds)), 0.6 + 2.8 * len(names)))
        axes = fig.subplots(len(names), 1, sharex=True, squeeze=False)[:, 0]
        width = 0.8 / len(kinds)
        for ax, m in zip(axes, names):
            for k, kind in enumerate(kinds):
                rows = [(groups.index(g), v) for (p, g), v in zip(placed, values[m]) if p == kind and not np.isnan(v)]
                x = np.array([g for g, _ in rows]) - 0.4 + (k + 0.5) * width
                ax.bar(x, [v for _, v in rows], width, color=f"C{k % 10}", label=kind)
            ax.set_ylabel(label.get(m, m))
            ax.grid(axis="y", alpha=0.3)
            _log_if_wide(ax, "y", values[m][~np.isnan(values[m])])
        axes[-1].set_xticks(range(len(groups)), groups)
        axes[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    else:
        fig = figure or Figure(figsize=(max(8, 4.2 * len(names)), 1.2 + 0.28 * len(runs)))
        axes = fig.subplots(1, len(names), sharey=True, squeeze=False)[0]
        y = np.arange(len(runs))
        for ax, m in zip(axes, names):
            shown = ~np.isnan(values[m])
            ax.barh(y[shown], values[m][shown], color="C0")
            ax.set_xlabel(label.get(m, m))
            ax.grid(axis="x", alpha=0.3)
            _log_if_wide(ax, "x", values[m][shown])
        axes[0].set_yticks(y, runs)
        axes[0].invert_yaxis()
    fig.set_layout_engine("constrained")
    return fig


def _numeric(column: pd.Series) -> pd.Series:
    """A column of table.csv as numbers, an empty or text cell as NaN."""
    import pandas as pd

    return pd.to_numeric(column, errors="coerce")


def pause_timeline(results: Results, ax: Axes | None = None) -> Axes:
    """When PFC paused which link: one row per switch port and priority that sent PAUSE
    frames, a bar from each PAUSE to the RESUME that ends it (or the end of the run), from
    pauses.csv. Where the log was cut at its row limit (``summary["pause_log"]``), it ends at
    the last frame logged and the title says so. Results without a pauses table (none sampled,
    or files from an aiccsim without it) get the totals of ports.csv instead: PAUSE frames sent
    per switch port, as bars."""
    runs = _runs(results)
    ax = _axes(ax)
    if all(r.pauses is not None for _, _, r in runs):
        rows = [(i, label, key, spans) for i, label, r in runs for key, spans in _pause_spans(r)]
        if not rows:
            raise NoData("pause_timeline: no PAUSE frame was sent")
        for y, (i, _, _, spans) in enumerate(rows):
            ax.broken_barh([(start, end - start) for start, end in spans], (y - 0.4, 0.8), color=f"C{i}")
        names = [_prefixed(label, f"{node}:{port} → {peer} p{prio}") for _, label, (node, port, peer, prio), _ in rows]
        ax.set_yticks(range(len(rows)), names)
        ax.invert_yaxis()
        cut = [label or "the log" for _, label, r in runs if _pause_log_cut(r)]
        title = "PFC pauses (sender port → paused neighbour, priority)"
        ax.set(xlabel="time (µs)", title=title + (f"\n{', '.join(cut)}: cut at the row limit" if cut else ""))
        _figure_height(ax, len(rows))
        return ax
    bars = [
        (i, label, r, str(node), int(port), int(sent))
        for i, label, r in runs
        for node, port, sent in zip(r.ports["node"], r.ports["port"], r.ports["pause_sent"])
        if sent > 0
    ]
    if not bars:
        raise NoData("pause_timeline: no PAUSE frame was sent")
    for y, (i, *_, sent) in enumerate(bars):
        ax.barh(y, sent, color=f"C{i}")
    ax.set_yticks(
        range(len(bars)), [_prefixed(label, _port_name(r, node, port)) for _, label, r, node, port, _ in bars]
    )
    ax.invert_yaxis()
    ax.set(xlabel="PAUSE frames sent (count)", title="PFC PAUSE frames per switch port (totals of ports.csv)")
    _figure_height(ax, len(bars))
    return ax


def cct_bars(results: Results, ax: Axes | None = None) -> Axes:
    """How long each collective took (summary.json's ``collectives``: from its first flow's
    start to its last flow's finish), one bar per collective and run. A collective that did not
    finish has no bar and is marked "unfinished"."""
    runs = _runs(results)
    ax = _axes(ax)
    names = list(dict.fromkeys(n for _, _, r in runs for n in r.collectives["name"]))
    if not names:
        raise NoData("cct_bars: no collective (the workload's flows carry no collective tag)")
    height = 0.8 / len(runs)
    for i, label, r in runs:
        durations = dict(zip(r.collectives["name"], r.collectives["duration_ns"]))
        for j, name in enumerate(names):
            y = j - 0.4 + (i + 0.5) * height
            d = durations.get(name)
            if d is None or np.isnan(d):
                if name in durations:
                    ax.text(0, y, " unfinished", va="center", fontsize="small")
                continue
            ax.barh(y, d / 1e3, height, color=f"C{i}", label=_name(label, r) if j == 0 else None)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set(xlabel="collective completion time (µs)", title="Collective completion times")
    if len(runs) > 1:
        _legend(ax)
    _figure_height(ax, len(names) * len(runs))
    return ax


def iteration_bars(results: Results, ax: Axes | None = None) -> Axes:
    """Training iterations as stacked bars (iterations.csv): compute below, exposed
    communication (the time the iteration waited for communication that compute did not hide)
    on top. One Result: a bar per iteration. Several: a bar per run, the mean of its finished
    iterations, so that schemes compare as in a paper's iteration-time figure. An iteration
    that did not finish has no bar and is marked "unfinished"."""
    runs = _runs(results)
    ax = _axes(ax)
    tables = [(i, label, r.iterations) for i, label, r in runs if r.iterations is not None]
    if not tables:
        raise NoData('iteration_bars: no training iterations (the workload\'s kind is not "training")')
    bars: list[tuple[str, float, float]] = []
    unfinished: list[str] = []
    if len(runs) == 1:
        _, _, it = tables[0]
        columns = ["iteration", "duration_ns", "compute_ns", "exposed_comm_ns"]
        for iteration, duration, compute, exposed in zip(*(it[c] for c in columns)):
            name = f"iteration {iteration}"
            if np.isnan(duration):
                unfinished.append(name)
            else:
                bars.append((name, compute, exposed))
    else:
        for _, label, it in tables:
            done = it[it["duration_ns"].notna()]
            name = str(label)
            if done.empty:
                unfinished.append(name)
            else:
                mean = done[["compute_ns", "exposed_comm_ns"]].mean()
                bars.append((f"{name} (mean of {len(done)})", mean["compute_ns"], mean["exposed_comm_ns"]))
    names = [b[0] for b in bars] + unfinished
    y = np.arange(len(names))
    compute = np.array([b[1] for b in bars]) / 1e3
    exposed = np.array([b[2] for b in bars]) / 1e3
    ax.barh(y[: len(bars)], compute, color="C0", label="compute")
    ax.barh(y[: len(bars)], exposed, left=compute, color="C3", label="exposed communication")
    for k in range(len(bars), len(names)):
        ax.text(0, k, " unfinished", va="center", fontsize="small")
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set(xlabel="time (µs)", title="Training iterations: compute and exposed communication")
    _legend(ax)
    _figure_height(ax, len(names))
    return ax


# Compute steps by phase, and communication by the parallel dimension of its collective
# (training_collectives.csv): a colour each, the same on every page.
PHASE_COLORS = {"forward": "tab:blue", "input_grad": "tab:orange", "weight_grad": "tab:olive"}
DIMENSION_COLORS = {"tp": "tab:purple", "pp": "tab:red", "dp": "tab:green", "ep": "tab:brown", "other": "tab:gray"}

# Ranks a timeline shows by default.
TIMELINE_RANKS = 8


def timeline(
    result: Result,
    ax: Axes | None = None,
    *,
    iteration: int | None = None,
    ranks: Sequence[int] | None = None,
    job: str | None = None,
) -> Axes:
    """A Gantt chart of one training iteration: a row per rank, its compute steps (steps.csv)
    as bars coloured by phase, and under them the flows it sends (flows.csv) as thin bars, a
    lane per parallel dimension, coloured by the dimension of their collective
    (training_collectives.csv). The x axis spans the iteration's window of iterations.csv (its
    start to its end; an unfinished one, its steps).

    ``iteration``: default the slowest (``summary.json``'s ``iterations.slowest``), else the
    first. ``ranks``: hosts, at most `TIMELINE_RANKS` by default: the iteration's critical rank
    and the first rank of each group of ranks that compute the same layers (a pipeline stage).
    ``job``: with ``[[jobs]]``, the job (default the slowest iteration's). The critical rank's
    row is marked, and its waits of ``summary.json``'s critical path are shaded when the
    iteration is the slowest."""
    if not isinstance(result, Result):
        raise TypeError("timeline: plot one Result")
    steps, it = result.steps, result.iterations
    if steps is None or it is None or steps.empty:
        raise NoData('timeline: no compute steps (the workload\'s kind is not "training" or "parallel_training")')
    slowest = (result.summary.get("iterations") or {}).get("slowest") or {}
    if job is None:
        job = slowest.get("job")
    if iteration is None:
        iteration = int(slowest.get("iteration", it["iteration"].iloc[0]))
    in_job = steps["job"].isna() if job is None else steps["job"] == job
    rows = it[(it["job"].isna() if job is None else it["job"] == job) & (it["iteration"] == iteration)]
    own = steps[in_job & (steps["iteration"] == iteration)]
    if rows.empty or own.empty:
        raise NoData(f"timeline: no iteration {iteration}" + ("" if job is None else f" of job {job}"))
    row = rows.iloc[0]
    start = row["start_ns"] if not np.isnan(row["start_ns"]) else own["start_ns"].min()
    end = row["end_ns"] if not np.isnan(row["end_ns"]) else own["end_ns"].max()
    critical = None if row["rank"] is None or row.isna()["rank"] else int(row["rank"])
    hosts = list(ranks) if ranks is not None else _timeline_ranks(own, critical)
    labels = _stage_labels(own)
    window = steps[in_job & (steps["end_ns"] > start) & (steps["start_ns"] < end)]
    dims = _flow_dimensions(result, job)
    flows = result.flows
    flows = flows[(flows["start_ns"] < end) & (flows["finish_ns"].fillna(end) > start)]
    flows = flows.assign(dimension=flows["collective"].map(dims))
    flows = flows[flows["dimension"].notna()]
    lanes = [d for d in DIMENSION_COLORS if d in set(flows[flows["src"].isin(hosts)]["dimension"])]
    ax = _axes(ax)
    us = 1e3
    drawn: set[str] = set()
    for y, host in enumerate(hosts):
        mine = window[window["rank"] == host]
        for phase, color in PHASE_COLORS.items():
            spans = mine[mine["phase"] == phase]
            bars = [
                (max(a, start) / us, (min(b, end) - max(a, start)) / us)
                for a, b in zip(spans["start_ns"], spans["end_ns"].fillna(end))
            ]
            bars = [b for b in bars if b[1] > 0]
            if bars:
                ax.broken_barh(bars, (y - 0.4, 0.5), color=color, label=None if phase in drawn else phase)
                drawn.add(phase)
        sent = flows[flows["src"] == host]
        for lane, dimension in enumerate(lanes):
            spans = sent[sent["dimension"] == dimension]
            bars = [
                (max(a, start) / us, (min(b, end) - max(a, start)) / us)
                for a, b in zip(spans["start_ns"], spans["finish_ns"].fillna(end))
            ]
            if bars:
                height = 0.3 / len(lanes)
                label = None if dimension in drawn else f"{dimension} sends"
                ax.broken_barh(
                    bars, (y + 0.12 + lane * height, height * 0.9), color=DIMENSION_COLORS[dimension], label=label
                )
                drawn.add(dimension)
        if host == critical and iteration == slowest.get("iteration") and job == slowest.get("job"):
            waits = [(w["from_ns"] / us, (w["to_ns"] - w["from_ns"]) / us) for w in slowest.get("critical_path", [])]
            if waits:
                ax.broken_barh(waits, (y - 0.4, 0.5), facecolor="0.85", zorder=0, label="critical rank waiting")
    names = [f"rank {h}" + ("*" if h == critical else "") + labels.get(h, "") for h in hosts]
    ax.set_yticks(range(len(hosts)), names)
    ax.set_ylim(len(hosts) - 0.5, -0.5)
    ax.set_xlim(start / us, end / us)
    what = f"iteration {iteration}" + ("" if job is None else f" of {job}")
    ax.set(
        xlabel="time (µs)", title=f"Timeline of {what}" + ("" if critical is None else f" (* critical rank {critical})")
    )
    _legend(ax)
    _figure_height(ax, 2 * len(hosts))
    return ax


def _timeline_ranks(steps: pd.DataFrame, critical: int | None) -> list[int]:
    """The critical rank and the first rank of each group that computes the same layers (a
    pipeline stage), in the order of their first layer: at most `TIMELINE_RANKS`, the critical
    rank always among them."""
    layers = _layers_by_rank(steps)
    firsts: dict[tuple[int, ...], int] = {}
    for host, held in sorted(layers.items()):
        firsts.setdefault(held, host)
    others = [h for h in firsts.values() if h != critical]
    hosts = ([] if critical is None else [critical]) + others[: TIMELINE_RANKS - (critical is not None)]
    return sorted(hosts, key=lambda h: (layers.get(h, (0,))[0], h))


def _stage_labels(steps: pd.DataFrame) -> dict[int, str]:
    """The layers each rank computes, as its row's label says them (", layers 0–3", or ", layers
    0, 4" for an interleaved stage), when ranks compute different layers (pipeline stages)."""
    held = _layers_by_rank(steps)
    if len(set(held.values())) < 2:
        return {}

    def label(layers: tuple[int, ...]) -> str:
        if len(layers) == 1:
            return f", layer {layers[0]}"
        if layers[-1] - layers[0] + 1 == len(layers):
            return f", layers {layers[0]}–{layers[-1]}"
        shown = [str(x) for x in layers] if len(layers) <= 4 else [str(layers[0]), str(layers[1]), "…", str(layers[-1])]
        return ", layers " + ", ".join(shown)

    return {h: label(layers) for h, layers in held.items()}


def _layers_by_rank(steps: pd.DataFrame) -> dict[int, tuple[int, ...]]:
    """Each rank's (host's) layers, in order."""
    held: dict[int, set[int]] = {}
    for host, layer in zip(steps["rank"], steps["layer"]):
        held.setdefault(int(host), set()).add(int(layer))
    return {h: tuple(sorted(layers)) for h, layers in held.items()}


def _flow_dimensions(result: Result, job: str | None) -> dict[str, str]:
    """Each training collective's dimension, by the name its flows carry in flows.csv."""
    t = result.training_collectives
    if t is None:
        return {}
    t = t[t["job"].isna()] if job is None else t[t["job"] == job]
    return dict(zip(t["collective"], t["dimension"]))


def _flow_lines(
    function: str,
    results: Results,
    ax: Axes | None,
    column: str,
    flows: Sequence[int] | None,
    top: int,
    drawstyle: str,
    scale: float,
    title: str,
) -> Axes:
    """One line per flow and run: a column of rates.csv (divided by ``scale``) against time,
    titled ``title`` and what part of the flows it shows, if not all."""
    runs = _runs(results)
    ax = _axes(ax)
    sampled = [(i, label, r.rates) for i, label, r in runs if r.rates is not None]
    if not sampled:
        raise NoData(f"{function}: no rate samples: {SAMPLED}")
    rates = [(i, label, q[q[column].notna()]) for i, label, q in sampled]
    if all(q.empty for *_, q in rates):
        algorithms = ", ".join(sorted({r.summary["algorithm"] for _, _, r in runs}))
        why = f"{algorithms} keeps no window" if column == "window_bytes" else "no flow was sampled"
        raise NoData(f"{function}: nothing to plot: {why}")
    if flows is None:
        sampled_flows = sorted(_concat([q for *_, q in rates])["flow"].unique())
        flows = sampled_flows[:top]
        if len(flows) < len(sampled_flows):
            title += f" (first {len(flows)} of {len(sampled_flows)} flows, by id)"
    for i, label, q in rates:
        for j, flow in enumerate(flows):
            rows = q[q["flow"] == flow]
            if rows.empty:
                continue
            x, y = rows["time_ns"].to_numpy() / 1e3, rows[column].to_numpy(dtype=float) / scale
            x, y = _broken_at_skips(x, y, _run_of(runs, i))
            style = _style(len(runs), i, j, len(flows))
            ax.plot(x, y, drawstyle=drawstyle, label=_prefixed(label, f"flow {flow}"), **style)
    _shade_skips(ax, runs)
    ax.set_title(title)
    _legend(ax)
    return ax


def _skipped_spans(r: Result) -> list[tuple[float, float]]:
    """The spans fast-forward skipped in run ``r`` (µs), one per skip of a group of flows
    (summary.json's ``fast_forward.skips``), in time order."""
    skips = (r.summary.get("fast_forward") or {}).get("skips", [])
    return sorted((s["from_ns"] / 1e3, s["to_ns"] / 1e3) for s in skips)


def _shade_skips(ax: Axes, runs: list[tuple[int, str | None, Result]]) -> None:
    """Shades each span a group of flows was skipped by fast-forward (darker where groups were
    skipped together): no packet of that group was simulated there, and its lines break across
    the span instead of being drawn through it."""
    labelled = False
    for _, _, r in runs:
        for a, b in _skipped_spans(r):
            label = None if labelled else "skipped (fast-forward)"
            ax.axvspan(a, b, color="0.6", alpha=0.25, zorder=0, linewidth=0, label=label)
            labelled = True


def _run_of(runs: list[tuple[int, str | None, Result]], i: int) -> Result:
    return next(r for j, _, r in runs if j == i)


def _broken_at_skips(x: np.ndarray, y: np.ndarray, r: Result) -> tuple[np.ndarray, np.ndarray]:
    """The line (x in µs, y) with a gap (NaN) across every span fast-forward skipped that it has
    no sample in (a frozen group's port or flow), so that no line is drawn through time that was
    not simulated; a line with samples inside a span (another group's) stays whole."""
    for a, b in _skipped_spans(r):
        at = int(np.searchsorted(x, b))
        if 0 < at < len(x) and x[at - 1] <= a:
            x, y = np.insert(x, at, (a + b) / 2), np.insert(y, at, np.nan)
    return x, y


def _pause_spans(r: Result) -> list[tuple[tuple[str, int, str, int], list[tuple[float, float]]]]:
    """Per (node, port, peer, priority) that sent PAUSE frames, the paused intervals in µs: from
    a PAUSE while not paused to the next RESUME, or to the end of the run (of the log, if the
    log was cut: what came after is not known)."""
    pauses = r.pauses
    assert pauses is not None
    if _pause_log_cut(r):
        end = pauses["time_ns"].max() / 1e3
    else:
        end = r.summary["simulated_time_ns"] / 1e3
    out = []
    for (node, port, peer, priority), rows in pauses.groupby(["node", "port", "peer", "priority"], sort=True):
        # (pandas types a group's key as Hashable: these two columns are integers.)
        assert isinstance(port, (int, np.integer)) and isinstance(priority, (int, np.integer))
        spans, since = [], None
        for t, event in zip(rows["time_ns"].to_numpy() / 1e3, rows["event"]):
            if event == "pause" and since is None:
                since = t
            elif event == "resume" and since is not None:
                spans.append((since, t))
                since = None
        if since is not None:
            spans.append((since, end))
        if spans:
            out.append(((str(node), int(port), str(peer), int(priority)), spans))
    return out


def _pause_log_cut(r: Result) -> bool:
    return bool((r.summary.get("pause_log") or {}).get("rows_dropped"))


def _runs(results: Results) -> list[tuple[int, str | None, Result]]:
    """(colour index, label, Result) per run; a lone Result has no label."""
    if isinstance(results, Result):
        return [(0, None, results)]
    if isinstance(results, Mapping) and results and all(isinstance(r, Result) for r in results.values()):
        return [(i, str(label), r) for i, (label, r) in enumerate(results.items())]
    raise TypeError("plot a Result, or a non-empty mapping of labels to Results")


class _LineStyle(TypedDict, total=False):
    color: ColorType
    linestyle: str
    linewidth: float


def _style(runs: int, run: int, line: int, lines: int = 0) -> _LineStyle:
    """One run: a colour per line, from the 20 of tab20 where the 10 of the colour cycle do not
    go round (then dashed past 20). Several: a colour per run, a dash pattern per line."""
    if runs == 1:
        return {"color": _run_color(line, lines), "linestyle": ["-", "--", ":"][line // 20 % 3]}
    return {"color": _run_color(run, runs), "linestyle": ["-", "--", ":", "-."][line % 4]}


def _run_color(i: int, n: int) -> ColorType:
    """The colour of line ``i`` of ``n``: the colour cycle's 10, or where they would go round,
    the 20 of tab20 (so that 11 to 20 runs still differ)."""
    return f"C{i}" if n <= 10 else color_sequences["tab20"][i % 20]


def _us(value: float) -> str:
    """A time in µs as a short label: "20 µs", "1.5 ms"."""
    return f"{value / 1e3:g} ms" if value >= 1000 else f"{value:.3g} µs"


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    return Figure(figsize=(8, 4.5), layout="constrained").add_subplot()


def _legend(ax: Axes) -> None:
    """The legend right of the axes, where it covers no data, in columns of at most
    `LEGEND_ROWS` names. A figure made here (8 inches wide) widens to hold it, so that the
    plot keeps its width, and grows taller for a long column."""
    labels = ax.get_legend_handles_labels()[1]
    if not labels:
        return
    ncol = -(-len(labels) // LEGEND_ROWS)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0, ncol=ncol)
    fig = ax.figure
    if isinstance(fig, Figure) and len(fig.axes) == 1:
        # About 0.09 inch a character of 10-point text, and 0.6 inch of sample line and padding.
        width = ncol * (0.6 + 0.09 * max(len(label) for label in labels))
        fig.set_figwidth(max(fig.get_figwidth(), 8 + width))
        fig.set_figheight(max(fig.get_figheight(), 1.2 + 0.25 * -(-len(labels) // ncol)))


def _figure_height(ax: Axes, rows: int) -> None:
    """A figure this function made grows with its rows of bars, so that their labels fit."""
    fig = ax.figure
    if isinstance(fig, Figure) and len(fig.axes) == 1:
        fig.set_figheight(max(fig.get_figheight(), 1.2 + 0.28 * rows))


def _name(label: str | None, r: Result) -> str:
    return label if label is not None else str(r.summary["algorithm"])


def _prefixed(label: str | None, what: str) -> str:
    return what if label is None else f"{label}: {what}"


def _port_name(r: Result, node: str, port: int) -> str:
    """The port as "s0:1 → h1": node, port, and the neighbour it leads to (from ports.csv)."""
    p = r.ports
    peer = p.loc[(p["node"] == node) & (p["port"] == port), "peer"]
    return f"{node}:{port}" + (f" → {peer.iloc[0]}" if len(peer) else "")


def _log_if_wide(ax: Axes, axis: str, values: np.ndarray, factor: float = 100) -> None:
    positive = values[values > 0]
    if len(positive) and positive.max() > factor * positive.min():
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    import pandas as pd

    return pd.concat(frames, ignore_index=True)
