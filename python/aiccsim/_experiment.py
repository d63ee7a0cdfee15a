"""The folder `aiccsim reproduce ID` writes: `table.csv` (one row per run, its `scheme` the run's
name), maybe `checks.csv`, `experiment.json` (what the experiment is: title, plot, the columns
and runs its claims use), the experiment's `plot.svg` and `plot.png` (drawn by
`_experiment_plot.py`), and one results folder per run, named after the run by the core's `slug`
(crates/aiccsim/src/metrics/experiment.rs)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from aiccsim import _native


def is_experiment(folder: Path) -> bool:
    return (folder / "table.csv").is_file() and not (folder / "summary.json").is_file()


def slug(name: str) -> str:
    """The run's folder name: ASCII letters and digits in lower case, anything else `_`."""
    return _native.slug(name)


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    """The header and rows of a small CSV file (table.csv, checks.csv)."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise ValueError(f"{path}: the file is empty (aiccsim reproduce writes a header and a row per run)")
    return rows[0], rows[1:]


def scheme_column(header: list[str], path: Path) -> int:
    """Where table.csv has the run names."""
    if "scheme" not in header:
        raise ValueError(f"{path}: no scheme column (is it a table of aiccsim reproduce?)")
    return header.index("scheme")


def runs(folder: Path) -> list[tuple[str, Path]]:
    """(name, results folder) of every run of an experiment folder, in the table's order."""
    header, rows = read_csv(folder / "table.csv")
    column = scheme_column(header, folder / "table.csv")
    out = []
    for row in rows:
        name = row[column]
        path = folder / slug(name)
        if not (path / "summary.json").is_file():
            raise FileNotFoundError(f"{folder}: run {name!r} of table.csv has no results folder {path}")
        out.append((name, path))
    return out


def run_folders(folder: Path) -> list[Path]:
    """``folder`` if it is a results folder, or the run folders of an experiment folder."""
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder")
    if is_experiment(folder):
        return [path for _, path in runs(folder)]
    if not (folder / "summary.json").is_file():
        raise FileNotFoundError(
            f"{folder}: neither a results folder (no summary.json: `aiccsim run --out DIR` writes one) "
            "nor an experiment folder (no table.csv: `aiccsim reproduce ID` writes one)"
        )
    return [folder]


def about(folder: Path) -> dict[str, Any]:
    """``experiment.json``: the experiment's id, title, ``[plot]`` table as written, the columns
    its claims and plot use and the runs its claims name; {} for a folder without one (written
    by an aiccsim before it)."""
    path = folder / "experiment.json"
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a JSON object (aiccsim reproduce writes one)")
    return data


def compared(names: list[str], about: dict[str, Any], limit: int) -> tuple[list[str], str]:
    """The runs a plot comparing runs draws, at most ``limit`` of them, and a note saying which
    when not all: with a bar plot's ``series``, every series in the first, middle and last
    group ("n=2", "n=9", "n=16"), or in the first and last where three groups are too many;
    else the runs the claims name; else the first ``limit``."""
    if len(names) <= limit:
        return names, ""
    series = list(about.get("plot", {}).get("series", []))
    if series:
        placed = {n: series_of(n, series) for n in names}
        groups = list(dict.fromkeys(g for _, g in placed.values()))
        # Three groups if the limit allows, else the first and the last, else the last.
        for ends in ([groups[0], groups[len(groups) // 2], groups[-1]], [groups[0], groups[-1]], [groups[-1]]):
            picked = list(dict.fromkeys(ends))
            chosen = [n for n in names if placed[n][1] in picked]
            if len(chosen) <= limit:
                return chosen, f"{len(chosen)} of {len(names)} runs: each series at {', '.join(picked)}"
    claimed = set(about.get("claimed_runs", []))
    chosen = [n for n in names if n in claimed]
    if 0 < len(chosen) <= limit:
        return chosen, f"{len(chosen)} of {len(names)} runs: those the claims name"
    return names[:limit], f"the first {limit} of {len(names)} runs"


def series_of(run: str, series: list[str] | tuple[str, ...]) -> tuple[str, str]:
    """(series, group) of a run's name, as an experiment's bar plot groups it: the longest of
    ``series`` the name starts with, and the rest of the name without the separators around it
    ("PC4 n=2" -> ("PC4", "n=2"))."""
    fits = [s for s in series if run.startswith(s)]
    if not fits:
        raise ValueError(f"run {run!r} starts with none of the plot's series {list(series)}")
    kind = max(fits, key=len)
    return kind, run[len(kind) :].strip(" ,;:/-") or run
