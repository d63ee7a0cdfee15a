"""`aiccsim report`, `aiccsim plot` and `aiccsim parquet`: the commands written in Python. Both `python -m
aiccsim` and the Rust binary (crates/aiccsim-cli/src/python.rs, which starts `python -m
aiccsim`) come here, so the two give the same output, errors and exit codes: 0 done, 2 bad
input (a folder that is not a results folder, a malformed file), 1 anything else."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

INSTALL = "install it with `pip install '.[plot]'` in the aiccsim source tree (`make python` for its .venv/)"


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="aiccsim", description="aiccsim's commands written in Python.")
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser(
        "report",
        help="write one self-contained HTML page of a run's results (summary, plots, scenario)",
        description="Write one self-contained HTML page (no other file, no network) per run: its summary, "
        "every plot its results have data for, and the resolved scenario. DIR is a results folder "
        "(aiccsim run --out DIR) or an experiment's folder (aiccsim reproduce ID: table.csv and a folder per "
        "run), which gets a page per run and an index page comparing the runs.",
    )
    report.add_argument("dir", type=Path, help="the results folder or experiment folder")
    report.add_argument("--out", "-o", type=Path, help="the page to write; default DIR/report.html")
    plot = commands.add_parser(
        "plot",
        help="draw an experiment's plot (plot.svg and plot.png) from the folder aiccsim reproduce wrote",
        description="Draw the plot an experiment's [plot] asks for, from the folder of aiccsim reproduce "
        "(table.csv, experiment.json and a folder per run), into DIR/plot.svg and DIR/plot.png. "
        "aiccsim reproduce runs this itself when the Python package is installed.",
    )
    plot.add_argument("dir", type=Path, help="the experiment's folder (out/ID)")
    parquet = commands.add_parser(
        "parquet",
        help="add Parquet files of the tables to results folders (flows.parquet, ...)",
        description="Read each results folder's CSV files and write the same tables as Parquet files "
        "beside them (aiccsim.load reads either). A folder of aiccsim reproduce converts every run's folder.",
    )
    parquet.add_argument("dirs", type=Path, nargs="+", metavar="DIR", help="results folders or experiment folders")
    options = parser.parse_args(args)
    try:
        if options.command == "report":
            return _report(options.dir, options.out)
        if options.command == "plot":
            return _plot(options.dir)
        return _parquet(options.dirs)
    except ImportError as e:
        package = (e.name or "a package it imports").split(".")[0]
        print(f"error: aiccsim {options.command} needs {package}: {INSTALL}", file=sys.stderr)
        return 1
    except (FileNotFoundError, NotADirectoryError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def _report(folder: Path, out: Path | None) -> int:
    from aiccsim._report import report

    pages = report(folder, out)
    for page in pages:
        print(f"wrote {page}")
    return 0


def _plot(folder: Path) -> int:
    from aiccsim import plot
    from aiccsim._experiment_plot import draw

    try:
        svg, png = draw(folder)
    except plot.NoData as e:
        # The runs lack what the plot needs (no timelines, no flow finished): the table and
        # the claims are the experiment's results all the same.
        for stale in (folder / "plot.svg", folder / "plot.png"):
            stale.unlink(missing_ok=True)
        print(f"plot:  not drawn: {e}", file=sys.stderr)
        return 0
    print(f"plot:  {svg} (and {png.name})")
    return 0


def _parquet(folders: list[Path]) -> int:
    import aiccsim
    from aiccsim._experiment import run_folders

    for folder in folders:
        for run in run_folders(folder):
            aiccsim.load(run, format="csv").write(run, format="parquet")
            print(f"wrote the Parquet files of {run}")
    return 0
