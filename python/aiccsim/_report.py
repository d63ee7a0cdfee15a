"""`aiccsim report DIR`: one self-contained HTML page per run (its summary, every plot of
`aiccsim.plot` that its results have data for, the scenario as written) and, for the folder of
`aiccsim reproduce`, an index page comparing the runs: the columns the experiment's claims and
plot use (the others folded away), the claims, the experiment's plot, and comparison plots of
at most `MAX_COMPARED` runs. Every queue on a page reads in one unit (`plot.queue_unit`).

A page needs no other file and no network: the plots are PNG images inside it (base64), the
style sheet is inline. The same results give the same page, byte for byte.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiccsim import _experiment, plot
from aiccsim._load import load
from aiccsim._result import Result
from aiccsim._write import atomic

# (title, how to draw it from the results and the page's unit of queues): every plot a run's
# page can have, in the page's order.
RUN_PLOTS: list[tuple[str, Callable[[Any, str], Any]]] = [
    ("FCT CDF", lambda r, unit: plot.fct_cdf(r)),
    ("Slowdown by flow size", lambda r, unit: plot.slowdown_by_size(r)),
    ("Switch queues", lambda r, unit: plot.queue_timeline(r, unit=unit)),
    ("Throughput per flow", lambda r, unit: plot.throughput_timeline(r)),
    ("Rate per flow", lambda r, unit: plot.rate_timeline(r)),
    ("Window per flow", lambda r, unit: plot.rate_timeline(r, window=True)),
    ("PFC pauses", lambda r, unit: plot.pause_timeline(r)),
    ("Collective completion times", lambda r, unit: plot.cct_bars(r)),
    ("Training iterations", lambda r, unit: plot.iteration_bars(r)),
    ("Per-rank timeline of the slowest iteration", lambda r, unit: plot.timeline(r)),
]

# The plots of an experiment's index page, each comparing the runs.
COMPARISON_PLOTS: list[tuple[str, Callable[[Any, str], Any]]] = [
    ("FCT CDF", lambda r, unit: plot.fct_cdf(r)),
    ("Slowdown by flow size", lambda r, unit: plot.slowdown_by_size(r)),
    ("Busiest switch queue", lambda r, unit: plot.queue_timeline(r, unit=unit)),
    ("PFC pauses", lambda r, unit: plot.pause_timeline(r)),
    ("Collective completion times", lambda r, unit: plot.cct_bars(r)),
    ("Training iterations", lambda r, unit: plot.iteration_bars(r)),
]

# Runs a comparison plot shows: ten colours that differ (`_experiment.compared` picks which).
MAX_COMPARED = 10

STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 62em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
div.table { overflow-x: auto; } table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1.5em 0; } figcaption { font-weight: bold; margin-bottom: 0.3em; }
img.plot { max-width: 100%; height: auto; }
pre { background: #f6f6f6; padding: 1em; overflow-x: auto; font-size: 0.85em; }
details { margin: 0.8em 0; } summary { cursor: pointer; color: #345; }
.pass { color: #060; } .fail { color: #a00; } .note { color: #555; }
"""


def report(dir: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> list[Path]:
    """Writes the report of results folder ``dir`` to ``out`` (default ``dir/report.html``) and
    returns ``[out]``. For the folder of ``aiccsim reproduce`` (``table.csv`` and a folder per
    run), ``out`` is an index page comparing the runs and each run's folder gets its own
    ``report.html``: it returns the index first, then the runs' pages."""
    folder = Path(dir)
    page = Path(out) if out is not None else folder / "report.html"
    if folder.is_dir() and _experiment.is_experiment(folder):
        runs = [(name, load(path)) for name, path in _experiment.runs(folder)]
        pages = [_experiment.slug(name) for name, _ in runs]
        run_pages = [
            _write(folder / slug / "report.html", _run_page(r, name, folder / slug))
            for (name, r), slug in zip(runs, pages)
        ]
        links = {name: os.path.relpath(p, page.parent) for (name, _), p in zip(runs, run_pages)}
        return [_write(page, _index_page(folder, dict(runs), links)), *run_pages]
    return [_write(page, _run_page(load(folder), folder.resolve().name, folder))]


def _run_page(r: Result, name: str, folder: Path) -> str:
    s, info = r.summary, r.run_info
    unit = plot.queue_unit(r)
    body = [
        f"<h1>{_e(name)}</h1>",
        f"<p>{_e(s['algorithm'])}: {s['flows_finished']} of {s['flows']} flows finished, stop reason "
        f"{_e(s['stop_reason'])}. aiccsim {_e(info.get('aiccsim_version', '?'))}, "
        f"seed {_e(info.get('seed', '?'))}.</p>",
        "<h2>Summary</h2>",
        _table(["Figure (summary.json)", "Value"], _summary_rows(s, unit)),
        "<h2>Plots</h2>",
        *_plots(RUN_PLOTS, r, unit),
        "<h2>Scenario</h2>",
        *_scenario(r, folder),
    ]
    return _html(name, body)


def _scenario(r: Result, folder: Path) -> list[str]:
    """The scenario as the user wrote it (``scenario.toml``), the resolved one (``run.json``)
    folded under it; only the resolved one for results written without the text (a scenario
    given as a dict, an aiccsim before scenario.toml)."""
    written = folder / "scenario.toml"
    resolved = f"<pre>{_e(r._run_json)}</pre>"
    if not written.is_file():
        return ["<p>As run, every default filled in (<code>run.json</code>).</p>", resolved]
    return [
        "<p>As written (<code>scenario.toml</code>):</p>",
        f'<pre class="toml">{_e(written.read_text(encoding="utf-8"))}</pre>',
        "<details><summary>As run, every default filled in (<code>run.json</code>)</summary>",
        resolved,
        "</details>",
    ]


def _index_page(folder: Path, runs: dict[str, Result], links: dict[str, str]) -> str:
    header, rows = _experiment.read_csv(folder / "table.csv")
    scheme = _experiment.scheme_column(header, folder / "table.csv")

    def cell(i: int, value: str) -> str:
        return f'<a href="{_e(links[value])}">{_e(value)}</a>' if i == scheme else _e(value)

    linked = [[cell(i, c) for i, c in enumerate(row)] for row in rows]
    about = _experiment.about(folder)
    title = _experiment_title(folder)
    # The experiment's own columns (its claims' and plot's), each measured in some run.
    own = [header.index(c) for c in about.get("columns", []) if c in header]
    own = [scheme] + [i for i in dict.fromkeys(own) if i != scheme and any(row[i] for row in rows)]
    body = [
        f"<h1>{_e(title)}</h1>",
        f"<p>{len(runs)} runs; each name leads to the run's own page.</p>",
        "<h2>Table</h2>",
    ]
    if len(own) > 1:
        body += [
            "<p>The columns the experiment's claims and plot use:</p>",
            _table([header[i] for i in own], [[row[i] for i in own] for row in linked], escaped=True),
            f"<details><summary>All {len(header)} columns of table.csv</summary>",
            _table(header, linked, escaped=True),
            "</details>",
        ]
    else:
        body.append(_table(header, linked, escaped=True))
    if (folder / "checks.csv").is_file():
        check_header, checks = _experiment.read_csv(folder / "checks.csv")
        verdict = {"true": '<span class="pass">true</span>', "false": '<span class="fail">false</span>'}
        marked = [[_e(c), verdict.get(p, _e(p)), _e(d)] for c, p, d in checks]
        body += ["<h2>Claims</h2>", _table(check_header, marked, escaped=True)]
    body.append("<h2>Plots</h2>")
    if (folder / "plot.svg").is_file():
        svg = base64.b64encode((folder / "plot.svg").read_bytes()).decode("ascii")
        body.append(_figure("The experiment's plot (plot.svg)", f"data:image/svg+xml;base64,{svg}"))
    shown, note = _experiment.compared(list(runs), about, MAX_COMPARED)
    if note:
        body.append(f'<p class="note">The comparisons show {_e(note)}; every run\'s page has its own plots.</p>')
    unit = plot.queue_unit(runs)
    compared = {name: runs[name] for name in shown}
    body += _plots(COMPARISON_PLOTS, compared, unit)
    return _html(title, body)


def _experiment_title(folder: Path) -> str:
    """The experiment's own title, as `reproduce` wrote it, else the folder's name."""
    about = folder / "experiment.json"
    if about.is_file():
        title = json.loads(about.read_text(encoding="utf-8")).get("title")
        if title:
            return str(title)
    return f"Experiment {folder.resolve().name}"


def _plots(plots: list[tuple[str, Callable[[Any, str], Any]]], results: Any, unit: str) -> list[str]:
    """A figure per plot that has data, then a line naming each plot that has none, and why;
    ``unit``: the page's unit of switch queues."""
    shown, missing = [], []
    for title, draw in plots:
        try:
            ax = draw(results, unit)
        except plot.NoData as e:
            missing.append(f"<li>{_e(title)}: {_e(str(e).split(': ', 1)[-1])}</li>")
            continue
        png = io.BytesIO()
        # No Software tag: the page does not change with matplotlib's version string alone.
        ax.figure.savefig(png, format="png", dpi=96, metadata={"Software": None})
        shown.append(_figure(title, "data:image/png;base64," + base64.b64encode(png.getvalue()).decode("ascii")))
    if missing:
        shown.append(f'<p class="note">Not shown, for lack of data:</p><ul class="note">{"".join(missing)}</ul>')
    return shown


def _summary_rows(s: dict[str, Any], unit: str) -> list[list[str]]:
    def dist(key: str, scale: float, unit: str, places: int) -> str:
        d = s.get(key) or {}
        parts = [f"{d[k] / scale:.{places}f}" if d.get(k) is not None else "-" for k in ("mean", "p50", "p99", "max")]
        return " / ".join(parts) + unit

    def us(key: str) -> str:
        v = s.get(key)
        return "- (not every flow finished)" if v is None else f"{v / 1e3:.3f} µs"

    def queue(size: float) -> str:
        # In the unit of the page's queue plots.
        return f"{size / (1e6 if unit == 'MB' else 1e3):.{3 if unit == 'MB' else 1}f} {unit}"

    telemetry = s.get("telemetry") or {}
    overhead = telemetry.get("header_overhead")
    rows: list[list[object]] = [
        ["Algorithm", s.get("algorithm")],
        ["Flows finished", f"{s.get('flows_finished')} of {s.get('flows')}"],
        ["Stop reason", s.get("stop_reason")],
        ["Simulated time", us("simulated_time_ns")],
        ["Completion time (last flow finished)", us("completion_time_ns")],
        ["FCT mean / p50 / p99 / max", dist("fct_ns", 1e3, " µs", 3)],
        ["Slowdown mean / p50 / p99 / max", dist("slowdown", 1, "", 3)],
        ["RTT mean / p50 / p99 / max", dist("rtt_ns", 1e3, " µs", 3)],
        ["Queuing delay mean / p50 / p99 / max", dist("queuing_delay_ns", 1e3, " µs", 3)],
        ["Largest switch queue", queue(s.get("max_switch_queue_bytes", 0))],
        ["Largest switch buffer occupancy", queue(s.get("max_switch_buffer_bytes", 0))],
        ["PAUSE / RESUME frames", f"{s.get('pause_frames')} / {s.get('resume_frames')}"],
        ["Packets dropped", s.get("packets_dropped")],
        ["ECN marks", s.get("ecn_marks")],
        ["CNPs", s.get("cnps")],
        ["NACKs / timeouts", f"{s.get('nacks')} / {s.get('timeouts')}"],
        ["Retransmitted bytes", s.get("retransmitted_bytes")],
        ["Header overhead", "-" if overhead is None else f"{overhead * 100:.2f} %"],
        ["Collectives", len(s.get("collectives") or [])],
        ["Events", s.get("events")],
    ]
    return [[str(k), str(v)] for k, v in rows]


def _table(header: list[str], rows: list[list[Any]], escaped: bool = False) -> str:
    """An HTML table; cells are escaped here unless ``escaped``. Numbers align right."""

    def cell(v: Any) -> str:
        text = str(v) if escaped else _e(v)
        number = text.replace(".", "", 1).replace("-", "", 1).isdigit()
        return f'<td class="n">{text}</td>' if number else f"<td>{text}</td>"

    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(cell(v) for v in row) + "</tr>" for row in rows)
    # In a box that scrolls sideways: an experiment's table has some twenty columns.
    return f'<div class="table"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _figure(title: str, src: str) -> str:
    return f'<figure><figcaption>{_e(title)}</figcaption><img class="plot" alt="{_e(title)}" src="{src}"></figure>'


def _html(title: str, body: list[str]) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_e(title)} - aiccsim report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def _write(path: Path, text: str) -> Path:
    atomic(path.parent, path.name, lambda f: f.write(text.encode("utf-8")))
    return path


def _e(value: Any) -> str:
    return html.escape(str(value))
