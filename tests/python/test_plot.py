"""`aiccsim.plot` on real results: what each plot draws (lines, bars, spans), comparisons of
several runs, and the NoData message when a result lacks what a plot needs."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

import aiccsim
from aiccsim import plot

from conftest import LONG, SMALL, SMALL_UNSAMPLED, STOPPED

# Flows of four sizes (two of them in collectives, one of which cannot finish in 30 us), DCQCN.
MIXED = """
[topology]
kind = "star"
hosts = 4
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "dcqcn"
[workload]
kind = "flows"
flows = [
  { src = 1, dst = 0, size = "10KB" },
  { src = 2, dst = 0, size = "10KB" },
  { src = 3, dst = 0, size = "100KB" },
  { src = 1, dst = 2, size = "100KB" },
  { src = 2, dst = 3, size = "1MB", collective = { kind = "all_reduce", group_size = 2, id = 0 } },
  { src = 3, dst = 2, size = "1MB", collective = { kind = "all_reduce", group_size = 2, id = 0 } },
  { src = 0, dst = 1, size = "2MB", collective = { kind = "all_to_all", group_size = 2, id = 1 } },
  { src = 1, dst = 0, size = "2MB", collective = { kind = "all_to_all", group_size = 2, id = 1 } },
]
[output]
sample_interval = "5us"
"""


# A 16-to-1 incast, sampled: more flows than a plot's colour cycle has colours.
INCAST16 = LONG.replace('size = "1GB"', 'size = "20KB"') + '[output]\nsample_interval = "2us"\n'


@pytest.fixture(scope="module")
def incast16() -> aiccsim.Result:
    return aiccsim.run(INCAST16)


@pytest.fixture(scope="module")
def small() -> aiccsim.Result:
    return aiccsim.run(SMALL)


@pytest.fixture(scope="module")
def dcqcn() -> aiccsim.Result:
    return aiccsim.run(SMALL.replace('algorithm = "none"', 'algorithm = "dcqcn"'))


@pytest.fixture(scope="module")
def mixed() -> aiccsim.Result:
    return aiccsim.run(MIXED)


@pytest.fixture(scope="module")
def bare() -> aiccsim.Result:
    """No timelines, no trace."""
    return aiccsim.run(SMALL_UNSAMPLED)


def test_fct_cdf(small: aiccsim.Result, dcqcn: aiccsim.Result) -> None:
    ax = plot.fct_cdf(small)
    (line,) = ax.get_lines()
    x, y = line.get_data()
    fct = sorted(small.flows["fct_ns"] / 1e3)
    assert list(x) == [fct[0], *fct]
    assert list(y) == [0, 0.25, 0.5, 0.75, 1.0]
    assert ax.get_xlabel() == "flow completion time (µs)" and ax.get_legend() is not None
    both = plot.fct_cdf({"PFC only": small, "DCQCN": dcqcn})
    assert [line.get_label() for line in both.get_lines()] == ["PFC only", "DCQCN"]


def test_slowdown_by_size(mixed: aiccsim.Result, small: aiccsim.Result) -> None:
    ax = plot.slowdown_by_size(mixed)
    p50, p99 = ax.get_lines()
    assert (p50.get_label(), p99.get_label()) == ("dcqcn p50", "dcqcn p99")
    # One point per distinct size, at that size; p99 of two flows is the larger one.
    assert list(p50.get_xdata()) == [10_000, 100_000, 1_000_000, 2_000_000]
    big = mixed.flows[mixed.flows["size_bytes"] == 2_000_000]["slowdown"]
    assert p99.get_ydata()[-1] == big.max() and p50.get_ydata()[-1] == big.min()
    assert ax.get_xscale() == "log"  # sizes span 200x
    assert len(plot.slowdown_by_size(mixed, bins=2).get_lines()[0].get_xdata()) == 2
    assert len(plot.slowdown_by_size({"a": mixed, "b": small}).get_lines()) == 4


def test_slowdown_by_size_of_one_size_says_so(small: aiccsim.Result) -> None:
    """Flows of one size give one point per run: nothing by size, so NoData (the report skips it)."""
    assert small.flows["size_bytes"].nunique() == 1
    with pytest.raises(plot.NoData, match="every finished flow is 200000 bytes, so there is no size to compare"):
        plot.slowdown_by_size(small)
    with pytest.raises(plot.NoData, match="every finished flow is 200000 bytes"):
        plot.slowdown_by_size({"a": small, "b": small})


def test_queue_timeline(small: aiccsim.Result, dcqcn: aiccsim.Result) -> None:
    queued = small.queues.groupby(["switch", "port"])["bytes"].max().sort_values(ascending=False, kind="stable")
    ax = plot.queue_timeline(small)
    assert len(ax.get_lines()) == min(6, len(queued))
    busiest = ax.get_lines()[0]
    switch, port = queued.index[0]
    assert busiest.get_label() == f"s{switch}:{port} → h0"
    # In KB, from 0 at time 0, stepping through the samples.
    assert busiest.get_drawstyle() == "steps-post"
    assert busiest.get_ydata()[0] == 0 and max(busiest.get_ydata()) == queued.iloc[0] / 1e3
    assert len(plot.queue_timeline(small, ports=[(0, 0)]).get_lines()) == 1
    compared = plot.queue_timeline({"PFC only": small, "DCQCN": dcqcn})
    assert [line.get_label() for line in compared.get_lines()] == ["PFC only: s0:0 → h0", "DCQCN: s0:0 → h0"]


def test_rate_and_window_timelines(small: aiccsim.Result) -> None:
    hpcc = aiccsim.run(STOPPED)
    ax = plot.rate_timeline(small)
    assert [line.get_label() for line in ax.get_lines()] == [f"flow {f}" for f in range(4)]
    assert ax.get_ylabel() == "rate (Gbit/s)" and set(ax.get_lines()[0].get_ydata()) == {100.0}
    window = plot.rate_timeline(hpcc, window=True, top=3)
    assert len(window.get_lines()) == 3 and window.get_ylabel() == "window (KB)"
    assert len(plot.rate_timeline(hpcc, flows=[0, 4]).get_lines()) == 2
    with pytest.raises(plot.NoData, match="rate_timeline: nothing to plot: none keeps no window"):
        plot.rate_timeline(small, window=True)


def test_throughput_timeline(small: aiccsim.Result, dcqcn: aiccsim.Result) -> None:
    """Each flow's line is the mean over a sliding window of samples, which the title gives."""
    ax = plot.throughput_timeline(small, window=15)
    lines = ax.get_lines()
    assert len(lines) == 4 and "mean over 15 µs windows" in ax.get_title()
    flow0 = small.rates[small.rates["flow"] == 0]["throughput_gbps"].to_numpy()
    # 5 us samples: a window of 15 us is 3 samples.
    expected = [flow0[max(0, i - 2) : i + 1].mean() for i in range(len(flow0))]
    assert np.allclose(lines[0].get_ydata(), expected)
    raw = plot.throughput_timeline(small, window=5).get_lines()[0].get_ydata()
    assert np.allclose(raw, flow0)
    compared = plot.throughput_timeline({"a": small, "b": dcqcn}, flows=[1])
    assert [line.get_label() for line in compared.get_lines()] == ["a: flow 1", "b: flow 1"]


def test_many_flows_throughput_is_their_total_and_a_few(incast16: aiccsim.Result) -> None:
    """16 flows are no longer a band of 16 spiky lines: their total, in black, and the first 4,
    each smoothed (issue 29)."""
    ax = plot.throughput_timeline(incast16, window=6)
    assert [line.get_label() for line in ax.get_lines()] == ["total", "flow 0", "flow 1", "flow 2", "flow 3"]
    assert "total of 16 flows and the first 4, by id" in ax.get_title() and "6 µs windows" in ax.get_title()
    total = incast16.rates.groupby("time_ns")["throughput_gbps"].sum().to_numpy()
    drawn = ax.get_lines()[0].get_ydata()
    # 2 us samples: each point the mean of the last 3 totals.
    assert np.allclose(drawn, [total[max(0, i - 2) : i + 1].mean() for i in range(len(total))])
    assert np.abs(np.diff(drawn)).sum() < np.abs(np.diff(total)).sum()


def test_pause_timeline(small: aiccsim.Result) -> None:
    """A row per port and priority that paused its neighbour, a span per PAUSE (they alternate
    with RESUMEs), ending at its RESUME."""
    pauses = small.pauses
    keys = pauses[["node", "port", "peer", "priority"]].drop_duplicates().sort_values(["node", "port"])
    ax = plot.pause_timeline(small)
    rows = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(rows) == len(keys) > 0
    assert sum(len(row.get_paths()) for row in rows) == (pauses["event"] == "pause").sum()
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        f"{k.node}:{k.port} → {k.peer} p{k.priority}" for k in keys.itertuples()
    ]
    first = pauses[(pauses["node"] == keys.iloc[0]["node"]) & (pauses["port"] == keys.iloc[0]["port"])]
    start, end = rows[0].get_paths()[0].vertices[:, 0].min(), rows[0].get_paths()[0].vertices[:, 0].max()
    assert (start, end) == tuple(first["time_ns"].iloc[:2] / 1e3)


def test_pause_totals_without_a_pauses_table(small: aiccsim.Result, tmp_path: Path) -> None:
    small.write(tmp_path)
    (tmp_path / "pauses.csv").unlink()  # as an aiccsim before pauses.csv wrote it
    older = aiccsim.load(tmp_path)
    assert older.pauses is None
    pausing = older.ports[older.ports["pause_sent"] > 0]
    assert len(pausing) > 0
    ax = plot.pause_timeline(older)
    assert [bar.get_width() for bar in ax.patches] == list(pausing["pause_sent"])
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        f"s0:{p} → {q}" for p, q in zip(pausing["port"], pausing["peer"], strict=True)
    ]
    ring = aiccsim.run(STOPPED)  # one flow per link at a time: no PAUSE
    assert ring.summary["pause_frames"] == 0
    with pytest.raises(plot.NoData, match="no PAUSE frame was sent"):
        plot.pause_timeline(ring)


def test_pause_timeline_from_a_pauses_table(small: aiccsim.Result, tmp_path: Path) -> None:
    """A hand-made pauses.csv (the schema the engine's file will have): spans from each PAUSE to
    the RESUME that ends it; a repeated PAUSE extends the span; one left open lasts to the end."""
    small.write(tmp_path)
    (tmp_path / "pauses.csv").write_text(
        "time_ns,node,port,peer,priority,event\n"
        "1000.000,s0,1,h1,3,pause\n"
        "1500.000,s0,1,h1,3,pause\n"
        "3000.000,s0,1,h1,3,resume\n"
        "5000.000,s0,2,h2,3,pause\n"
        "8000.000,s0,1,h1,3,pause\n"
        "9000.000,s0,1,h1,3,resume\n"
    )
    loaded = aiccsim.load(tmp_path)
    ax = plot.pause_timeline(loaded)
    rows = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(rows) == 2
    spans = [[(p.vertices[:, 0].min(), p.vertices[:, 0].max()) for p in row.get_paths()] for row in rows]
    end = loaded.summary["simulated_time_ns"] / 1e3
    assert spans[0] == [(1.0, 3.0), (8.0, 9.0)]
    assert np.allclose(spans[1], [(5.0, end)])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["s0:1 → h1 p3", "s0:2 → h2 p3"]
    compared = plot.pause_timeline({"a": loaded, "b": loaded})
    assert [t.get_text() for t in compared.get_yticklabels()][2] == "b: s0:1 → h1 p3"
    # A log cut at its row limit: the open pause ends at the last frame logged.
    summary = json.loads((tmp_path / "summary.json").read_text())
    summary["pause_log"] = {"rows": 6, "rows_dropped": 10}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    cut = plot.pause_timeline(aiccsim.load(tmp_path))
    assert cut.get_title().endswith("the log: cut at the row limit")
    last = [c for c in cut.collections if isinstance(c, PolyCollection)][1].get_paths()[0].vertices[:, 0]
    assert (last.min(), last.max()) == (5.0, 9.0)


def test_cct_bars(mixed: aiccsim.Result) -> None:
    ax = plot.cct_bars(mixed)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["all_reduce:0", "all_to_all:1"]
    assert [bar.get_width() for bar in ax.patches] == list(mixed.collectives["duration_ns"] / 1e3)
    assert len(plot.cct_bars({"a": mixed, "b": mixed}).patches) == 4
    stopped = plot.cct_bars(aiccsim.run(STOPPED))
    assert len(stopped.patches) == 0 and [t.get_text() for t in stopped.texts] == [" unfinished"]


def test_no_data_says_what_to_set(bare: aiccsim.Result, small: aiccsim.Result) -> None:
    for draw in [plot.queue_timeline, plot.rate_timeline, plot.throughput_timeline]:
        with pytest.raises(plot.NoData, match=r"no (queue|rate) samples: set output\.sample_interval"):
            draw(bare)
    with pytest.raises(plot.NoData, match="cct_bars: no collective"):
        plot.cct_bars(small)
    # (Stopped before its first timeline sample: the run warns so, rightly.)
    with pytest.warns(aiccsim.ScenarioWarning, match="output.sample_interval"):
        stopped = aiccsim.run(STOPPED.replace('stop_time = "30us"', 'stop_time = "1us"'))
    for draw in [plot.fct_cdf, plot.slowdown_by_size]:
        with pytest.raises(plot.NoData, match="no flow finished"):
            draw(stopped)
    assert issubclass(plot.NoData, ValueError)


def test_drawing_on_given_axes_and_saving(small: aiccsim.Result) -> None:
    fig = Figure()
    ax = fig.add_subplot()
    assert plot.fct_cdf(small, ax=ax) is ax and len(ax.get_lines()) == 1
    png = io.BytesIO()
    plot.queue_timeline(small).figure.savefig(png, format="png")
    assert png.getvalue().startswith(b"\x89PNG")
    with pytest.raises(TypeError, match="a Result, or a non-empty mapping"):
        plot.fct_cdf({})


def test_pyplot_is_left_alone() -> None:
    """The plots use no pyplot: a script's own figures and backend are not touched."""
    code = f"""
import io, sys, aiccsim
r = aiccsim.run({SMALL!r})
for f in [aiccsim.plot.fct_cdf, aiccsim.plot.queue_timeline, aiccsim.plot.pause_timeline]:
    f(r).figure.savefig(io.BytesIO(), format="png")
print("matplotlib.pyplot" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "False\n"


def test_iteration_bars(bare: aiccsim.Result) -> None:
    from test_iterations import TRAINING

    r = aiccsim.run(TRAINING)
    it = r.iterations
    ax = plot.iteration_bars(r)
    # One Result: a compute bar and an exposed-communication bar stacked on it per finished
    # iteration; the two unfinished ones are marked.
    done = it[it["duration_ns"].notna()]
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"iteration {i}" for i in range(4)]
    widths = [bar.get_width() for bar in ax.patches]
    assert widths == pytest.approx(list(done["compute_ns"] / 1e3) + list(done["exposed_comm_ns"] / 1e3))
    lefts = [bar.get_x() for bar in ax.patches[len(done) :]]
    assert lefts == pytest.approx(list(done["compute_ns"] / 1e3))
    assert [t.get_text() for t in ax.texts] == [" unfinished", " unfinished"]
    # Several runs: one bar pair per run, the mean of its finished iterations.
    both = plot.iteration_bars({"a": r, "b": r})
    assert [t.get_text() for t in both.get_yticklabels()] == ["a (mean of 2)", "b (mean of 2)"]
    assert both.patches[2].get_width() == pytest.approx(done["exposed_comm_ns"].mean() / 1e3)
    with pytest.raises(plot.NoData, match="iteration_bars: no training iterations"):
        plot.iteration_bars(bare)


# Two stages of two data-parallel ranks, 1F1B (docs/scenario.md's pipeline example).
PIPELINE = """
[topology]
kind = "star"
hosts = 4
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "none"
[workload]
kind = "parallel_training"
iterations = 2
pp = 2
microbatches = 4
activation_bytes = "100KB"
layers = [{ forward = "10us", input_grad = "10us", weight_grad = "10us", grad_bytes = "400KB", repeat = 2 }]
"""


def test_timeline(bare: aiccsim.Result) -> None:
    r = aiccsim.run(PIPELINE)
    slowest = r.summary["iterations"]["slowest"]
    row = r.iterations.iloc[slowest["iteration"]]
    ax = plot.timeline(r)
    # The critical rank and the first rank of each stage, by stage; the iteration's window.
    assert [t.get_text() for t in ax.get_yticklabels()] == ["rank 0*, layer 0", "rank 2, layer 1"]
    assert ax.get_xlim() == pytest.approx((row["start_ns"] / 1e3, row["end_ns"] / 1e3))
    labels = ax.get_legend_handles_labels()[1]
    assert labels == ["forward", "input_grad", "weight_grad", "pp sends", "dp sends", "critical rank waiting"]
    # Each rank's compute bars are its steps of the iteration, clipped to the window.
    steps = r.steps
    from matplotlib.colors import to_rgba

    phases = {to_rgba(c): p for p, c in plot.PHASE_COLORS.items()}
    drawn = [p for c in ax.collections for p in [phases.get(tuple(c.get_facecolor()[0]))] if p for _ in c.get_paths()]
    start, end = row["start_ns"], row["end_ns"]
    mine = steps[steps["rank"].isin([0, 2]) & (steps["end_ns"] > start) & (steps["start_ns"] < end)]
    assert sorted(drawn) == sorted(mine["phase"])
    # Other ranks, another iteration.
    other = plot.timeline(r, iteration=1, ranks=[1, 3])
    assert [t.get_text() for t in other.get_yticklabels()][0].startswith("rank 1")
    assert other.get_title().startswith("Timeline of iteration 1")
    with pytest.raises(plot.NoData, match="timeline: no compute steps"):
        plot.timeline(bare)
    with pytest.raises(plot.NoData, match="no iteration 7"):
        plot.timeline(r, iteration=7)


def test_every_flow_or_a_note_of_how_many(incast16: aiccsim.Result) -> None:
    """16 flows: 16 lines, in 16 colours. Fewer than sampled: the title says which and of how many.
    (The throughput shows 16 flows' total and a few of them: test_many_flows_throughput_...)"""
    for draw in [plot.rate_timeline]:
        ax = draw(incast16)
        lines = ax.get_lines()
        assert [line.get_label() for line in lines] == [f"flow {f}" for f in range(16)]
        assert len({(line.get_color(), line.get_linestyle()) for line in lines}) == 16
        assert "by id" not in ax.get_title()
        few = draw(incast16, top=5)
        assert len(few.get_lines()) == 5 and few.get_title().endswith("(first 5 of 16 flows, by id)")
        assert "by id" not in draw(incast16, flows=[3, 7]).get_title(), "the flows asked for: no note"


def _extents(ax):
    """(legend, axes, figure) boxes in pixels, as drawn."""
    FigureCanvasAgg(ax.figure).draw()
    return ax.get_legend().get_window_extent(), ax.get_window_extent(), ax.figure.bbox


def test_legends_are_outside_the_data_and_inside_the_figure(
    incast16: aiccsim.Result, small: aiccsim.Result, dcqcn: aiccsim.Result, mixed: aiccsim.Result
) -> None:
    both = {"PFC only": small, "DCQCN": dcqcn}
    drawn = [
        plot.fct_cdf(both),
        plot.slowdown_by_size({"mixed": mixed, "small": small}),
        plot.queue_timeline(small),
        plot.rate_timeline(incast16),
        plot.throughput_timeline(incast16),
        plot.throughput_timeline({"a": incast16, "b": incast16}),  # 32 names: two columns
        plot.cct_bars({"a": mixed, "b": mixed}),
    ]
    for ax in drawn:
        legend, data, figure = _extents(ax)
        assert not legend.overlaps(data), f"{ax.get_title()}: legend {legend} over the axes {data}"
        assert figure.contains(legend.x0, legend.y0) and figure.contains(legend.x1 - 1, legend.y1 - 1), ax.get_title()
        # The plot keeps most of the width that the legend did not take.
        assert data.width > 0.5 * (figure.width - legend.width), ax.get_title()


def test_every_numeric_axis_has_its_unit(
    incast16: aiccsim.Result, small: aiccsim.Result, mixed: aiccsim.Result
) -> None:
    unit = re.compile(r"\(.+\)$")
    for ax in [
        plot.fct_cdf(small),
        plot.slowdown_by_size(mixed),
        plot.queue_timeline(small),
        plot.rate_timeline(incast16),
        plot.throughput_timeline(incast16),
    ]:
        assert unit.search(ax.get_xlabel()) and unit.search(ax.get_ylabel()), (ax.get_xlabel(), ax.get_ylabel())
    for ax in [plot.pause_timeline(small), plot.cct_bars(mixed)]:  # the y axis names ports, collectives
        assert unit.search(ax.get_xlabel()), ax.get_xlabel()
