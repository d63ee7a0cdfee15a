"""`aiccsim plot DIR`: an experiment's own figure, `plot.svg` and `plot.png`, drawn from the
folder `aiccsim reproduce` wrote (its table, its runs' folders and `experiment.json`, which holds
the experiment's `[plot]` table as written). `reproduce` starts this after its runs; the kinds
of `[plot]` are those of docs/experiments.md:

- ``queue``: the egress queue of one switch port over time, a line per run;
- ``throughput``: some flows' throughput over time, a line per run and flow;
- ``fct_cdf``: the distribution of flow completion times, a line per run;
- ``bars``: one or more of the table's columns, a bar per run (grouped by ``series``);
- ``iterations``: the mean training iteration per run, compute and exposed communication.

A plot of lines shows at most `MAX_LINES` runs (`_experiment.compared` picks them and the title
says which); every run's own plots are on its page of `aiccsim report`.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from aiccsim import _experiment, _native, plot
from aiccsim._load import load

# Runs a plot of lines shows: beyond this, colours repeat and lines hide each other.
MAX_LINES = 12

KINDS = ("queue", "throughput", "fct_cdf", "bars", "iterations")


def draw(folder: Path) -> list[Path]:
    """Draws the experiment's plot into ``folder/plot.svg`` and ``folder/plot.png``; returns
    their paths. Raises `plot.NoData` when the runs lack what the plot needs, ValueError when
    the folder is not one of ``aiccsim reproduce`` or its ``[plot]`` is not understood."""
    if not _experiment.is_experiment(folder):
        why = "no table.csv: `aiccsim reproduce ID` writes one"
        raise FileNotFoundError(f"{folder}: not an experiment's folder ({why})")
    about = _experiment.about(folder)
    spec = about.get("plot")
    if not isinstance(spec, dict):
        raise ValueError(
            f"{folder / 'experiment.json'}: no [plot] of the experiment (written by an older aiccsim: "
            "run `aiccsim reproduce` again)"
        )
    kind = spec.get("kind")
    if kind not in KINDS:
        raise ValueError(f"{folder / 'experiment.json'}: plot kind {kind!r} is not one of {', '.join(KINDS)}")
    figure = _figure(folder, about, spec)
    return _save(figure, folder)


def _figure(folder: Path, about: dict[str, Any], spec: dict[str, Any]) -> Any:
    kind = spec["kind"]
    title = str(about.get("title") or folder.resolve().name)
    if kind == "bars":
        import pandas as pd

        table = pd.read_csv(folder / "table.csv", dtype={"scheme": str}, keep_default_na=False)
        metric = spec["metric"]
        labels = {name: label for name, _, label in _native.experiment_columns()}
        figure = plot.metric_bars(table, metric, series=spec.get("series", []), labels=labels)
        figure.suptitle(_wrap(title))
        return figure
    names = [name for name, _ in _experiment.runs(folder)]
    shown, note = _experiment.compared(names, about, MAX_LINES)
    results = {name: load(path) for name, path in _experiment.runs(folder) if name in shown}
    if kind == "queue":
        switch, port = int(spec["switch"]), int(spec["port"])
        ax = plot.queue_timeline(results, ports=[(switch, port)])
        first = next(iter(results.values()))
        ax.set_title(f"Egress queue of {plot._port_name(first, f's{switch}', port)}")
    elif kind == "throughput":
        return _throughput(results, [int(f) for f in spec["flows"]], title, note)
    elif kind == "fct_cdf":
        ax = plot.fct_cdf(results)
        ax.set_title("FCT CDF")
    else:
        ax = plot.iteration_bars(results)
        ax.set_title("Mean iteration: compute and exposed communication")
    ax.figure.suptitle(_wrap(title + (f"\n({note})" if note else "")))
    return ax.figure


def _throughput(results: dict[str, Any], flows: list[int], title: str, note: str) -> Any:
    """A panel per run, one above the other on the same axes, a colour per flow: runs times
    flows lines on one axes hide each other."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 1.2 + 2.2 * len(results)), layout="constrained")
    axes = figure.subplots(len(results), 1, sharex=True, sharey=True, squeeze=False)[:, 0]
    smoothing = ""
    for k, (ax, (name, r)) in enumerate(zip(axes, results.items())):
        plot.throughput_timeline(r, ax=ax, flows=flows)
        smoothing = ax.get_title().removeprefix("Throughput per flow ")
        ax.set_title("")
        ax.set_title(name, loc="left", fontsize="medium")
        if k > 0:
            ax.get_legend().remove()
        if k < len(results) - 1:
            ax.set_xlabel("")
    figure.suptitle(_wrap(f"{title}\nthroughput per flow {smoothing}" + (f" ({note})" if note else "")))
    return figure


def _wrap(title: str) -> str:
    """A long title in lines of at most 90 characters, so that it fits above the plot."""
    return "\n".join(textwrap.fill(line, 90) for line in title.split("\n"))


def _save(figure: Any, folder: Path) -> list[Path]:
    """plot.svg and plot.png, the same bytes for the same results: no date or version in them,
    and the SVG's element ids from a fixed salt."""
    import matplotlib

    svg, png = folder / "plot.svg", folder / "plot.png"
    with matplotlib.rc_context({"svg.hashsalt": "aiccsim"}):
        figure.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    figure.savefig(png, format="png", dpi=100, metadata={"Software": None})
    return [svg, png]
