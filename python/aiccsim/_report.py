"""`aiccsim report DIR`: one self-contained HTML page per run (its summary, every plot of
`aiccsim.plot` that its results have data for, the resolved scenario) and, for the folder of
`aiccsim reproduce`, an index page comparing the runs.

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

# (title, how to draw it): every plot a run's page can have, in the page's order.
RUN_PLOTS: list[tuple[str, Callable[[Any], Any]]] = [
    ("FCT CDF", plot.fct_cdf),
    ("Slowdown by flow size", plot.slowdown_by_size),
    ("Switch queues", plot.queue_timeline),
    ("Throughput per flow", plot.throughput_timeline),
    ("Rate per flow", plot.rate_timeline),
    ("Window per flow", lambda r: plot.rate_timeline(r, window=True)),
    ("PFC pauses", plot.pause_timeline),
    ("Collective completion times", plot.cct_bars),
    ("Training iterations", plot.iteration_bars),
]

# The plots of an experiment's index page, each with every run on it.
COMPARISON_PLOTS: list[tuple[str, Callable[[Any], Any]]] = [
    ("FCT CDF", plot.fct_cdf),
    ("Slowdown by flow size", plot.slowdown_by_size),
    ("Busiest switch queue", plot.queue_timeline),
    ("PFC pauses", plot.pause_timeline),
    ("Collective completion times", plot.cct_bars),
    ("Training iterations", plot.iteration_bars),
]

STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 62em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
div.table { overflow-x: auto; } table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1.5em 0; } figcaption { font-weight: bold; margin-bottom: 0.3em; }
img.plot { max-width: 100%; height: auto; }
pre { background: #f6f6f6; padding: 1em; overflow-x: auto; font-size: 0.85em; }
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
        run_pages = [_write(folder / slug / "report.html", _run_page(r, name)) for (name, r), slug in zip(runs, pages)]
        links = {name: os.path.relpath(p, page.parent) for (name, _), p in zip(runs, run_pages)}
        return [_write(page, _index_page(folder, dict(runs), links)), *run_pages]
    return [_write(page, _run_page(load(folder), folder.resolve().name))]


def _run_page(r: Result, name: str) -> str:
    s, info = r.summary, r.run_info
    body = [
        f"<h1>{_e(name)}</h1>",
        f"<p>{_e(s['algorithm'])}: {s['flows_finished']} of {s['flows']} flows finished, stop reason "
        f"{_e(s['stop_reason'])}. aiccsim {_e(info.get('aiccsim_version', '?'))}, "
        f"seed {_e(info.get('seed', '?'))}.</p>",
        "<h2>Summary</h2>",
        _table(["Figure (summary.json)", "Value"], _summary_rows(s)),
        "<h2>Plots</h2>",
        *_plots(RUN_PLOTS, r),
        "<h2>Scenario</h2>",
        "<p>As run, every default filled in (<code>run.json</code>).</p>",
        f"<pre>{_e(r._run_json)}</pre>",
    ]
    return _html(name, body)


def _index_page(folder: Path, runs: dict[str, Result], links: dict[str, str]) -> str:
    header, rows = _experiment.read_csv(folder / "table.csv")
    scheme = _experiment.scheme_column(header, folder / "table.csv")

    def cell(i: int, value: str) -> str:
        return f'<a href="{_e(links[value])}">{_e(value)}</a>' if i == scheme else _e(value)

    linked = [[cell(i, c) for i, c in enumerate(row)] for row in rows]
    title = _experiment_title(folder)
    body = [
        f"<h1>{_e(title)}</h1>",
        f"<p>{len(runs)} runs; each name leads to the run's own page.</p>",
        "<h2>Table</h2>",
        _table(header, linked, escaped=True),
    ]
    if (folder / "checks.csv").is_file():
        check_header, checks = _experiment.read_csv(folder / "checks.csv")
        verdict = {"true": '<span class="pass">true</span>', "false": '<span class="fail">false</span>'}
        marked = [[_e(c), verdict.get(p, _e(p)), _e(d)] for c, p, d in checks]
        body += ["<h2>Claims</h2>", _table(check_header, marked, escaped=True)]
    body.append("<h2>Plots</h2>")
    if (folder / "plot.svg").is_file():
        svg = base64.b64encode((folder / "plot.svg").read_bytes()).decode("ascii")
        body.append(_figure("The experiment's plot (plot.svg)", f"data:image/svg+xml;base64,{svg}"))
    body += _plots(COMPARISON_PLOTS, runs)
    return _html(title, body)


def _experiment_title(folder: Path) -> str:
    """The experiment's own title, as `reproduce` wrote it, else the folder's name."""
    about = folder / "experiment.json"
    if about.is_file():
        title = json.loads(about.read_text(encoding="utf-8")).get("title")
        if title:
            return str(title)
    return f"Experiment {folder.resolve().name}"


def _plots(plots: list[tuple[str, Callable[[Any], Any]]], results: Any) -> list[str]:
    """A figure per plot that has data, then a line naming each plot that has none, and why."""
    shown, missing = [], []
    for title, draw in plots:
        try:
            ax = draw(results)
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


def _summary_rows(s: dict[str, Any]) -> list[list[str]]:
    def dist(key: str, scale: float, unit: str, places: int) -> str:
        d = s.get(key) or {}
        parts = [f"{d[k] / scale:.{places}f}" if d.get(k) is not None else "-" for k in ("mean", "p50", "p99", "max")]
        return " / ".join(parts) + unit

    def us(key: str) -> str:
        v = s.get(key)
        return "- (not every flow finished)" if v is None else f"{v / 1e3:.3f} µs"

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
        ["Largest switch queue", f"{s.get('max_switch_queue_bytes', 0) / 1e3:.1f} KB"],
        ["Largest switch buffer occupancy", f"{s.get('max_switch_buffer_bytes', 0) / 1e3:.1f} KB"],
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
