"""The folder `aiccsim reproduce ID` writes: `table.csv` (one row per run, its `scheme` the run's
name), maybe `checks.csv`, the experiment's `plot.svg`, and one results folder per run, named
after the run by the core's `slug` (crates/aiccsim/src/metrics/experiment.rs)."""

from __future__ import annotations

import csv
from pathlib import Path

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
