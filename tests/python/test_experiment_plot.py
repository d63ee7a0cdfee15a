"""The experiment's own plot (`aiccsim plot DIR`, drawn by `aiccsim reproduce` through the Python
package): every `[plot]` kind from a reproduce folder, the pc4-incast figure its title promises,
and the choice of runs when an experiment has too many for one plot of lines."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from aiccsim import _experiment, _native, plot
from aiccsim._experiment_plot import draw

from conftest import REPO, python_m_aiccsim


def test_reproduce_draws_the_plot_with_python(experiment_dir: Path) -> None:
    """`reproduce` hands the plot to this package: plot.svg (lines of the FCT CDF) and plot.png,
    and experiment.json tells what to draw."""
    svg = (experiment_dir / "plot.svg").read_text()
    assert svg.startswith("<?xml") and "<svg" in svg and "FCT CDF" in svg
    assert "PFC only" in svg and "DCQCN, defaults" in svg
    assert (experiment_dir / "plot.png").read_bytes()[:4] == b"\x89PNG"
    about = json.loads((experiment_dir / "experiment.json").read_text())
    assert about["plot"] == {"kind": "fct_cdf"}
    assert about["columns"] == ["pause_frames", "p99_fct_us", "max_fct_us"]
    assert about["claimed_runs"] == ["PFC only"]


@pytest.mark.parametrize(
    "spec",
    [
        {"kind": "queue", "switch": 0, "port": 0},
        {"kind": "throughput", "flows": [0, 1]},
        {"kind": "fct_cdf"},
        {"kind": "bars", "metric": "pause_frames"},
        {"kind": "bars", "metric": ["pause_frames", "p99_fct_us"]},
    ],
)
def test_every_kind_is_drawn(spec: dict, experiment_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "exp"
    shutil.copytree(experiment_dir, folder)
    about = json.loads((folder / "experiment.json").read_text())
    (folder / "experiment.json").write_text(json.dumps({**about, "plot": spec}))
    (folder / "plot.svg").unlink()
    svg, png = draw(folder)
    assert svg.read_text().count("<svg") == 1 and png.is_file()
    # The same results give the same bytes (no date, no random ids).
    first = svg.read_bytes()
    draw(folder)
    assert svg.read_bytes() == first


def test_an_unknown_kind_and_a_folder_of_no_experiment_are_errors(experiment_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "exp"
    shutil.copytree(experiment_dir, folder)
    (folder / "experiment.json").write_text(json.dumps({"title": "t", "plot": {"kind": "pie"}}))
    done = python_m_aiccsim("plot", str(folder))
    assert done.returncode == 2 and "plot kind 'pie' is not one of queue" in done.stderr
    done = python_m_aiccsim("plot", str(tmp_path))
    assert done.returncode == 2 and "not an experiment's folder" in done.stderr


PC4_INCAST = REPO / "experiments" / "pc4-incast" / "experiment.toml"


def pc4_incast_table() -> pd.DataFrame:
    """A table of pc4-incast's 60 runs (their names, in order), with made-up figures."""
    spec = tomllib.loads(PC4_INCAST.read_text())
    names = [r["name"] for r in spec["run"]]
    return pd.DataFrame(
        {
            "scheme": names,
            "mean_rtt_us": [10.0 + i for i in range(len(names))],
            "max_slowdown": [2.0 + i / 10 for i in range(len(names))],
        }
    )


def test_the_pc4_incast_plot_shows_what_its_title_says() -> None:
    """The title promises mean RTT and FCT slowdown; the plot showed RTT alone, as 45 bars in a
    row. Now a panel per figure, the runs grouped by n, a colour per scheme (issue 29)."""
    spec = tomllib.loads(PC4_INCAST.read_text())
    assert "mean RTT and FCT slowdown" in spec["title"]
    assert spec["plot"]["metric"] == ["mean_rtt_us", "max_slowdown"]
    series = spec["plot"]["series"]
    assert series == ["PC4", "PC4 ours", "DCQCN vendor", "DCQCN HPCC-study"]
    labels = {name: label for name, _, label in _native.experiment_columns()}
    figure = plot.metric_bars(pc4_incast_table(), spec["plot"]["metric"], series=series, labels=labels)
    rtt, slowdown = figure.axes
    assert rtt.get_ylabel() == "mean RTT (µs)" and "slowdown" in slowdown.get_ylabel()
    assert [t.get_text() for t in slowdown.get_xticklabels()] == [f"n={n}" for n in range(2, 17)]
    assert rtt.get_legend_handles_labels()[1] == series
    # 15 groups of 4 bars in each panel; the bar of "DCQCN vendor n=5" is the table's.
    assert len(rtt.patches) == len(slowdown.patches) == 60
    table = pc4_incast_table()
    bars = rtt.containers[2]
    assert bars[3].get_height() == table.set_index("scheme").loc["DCQCN vendor n=5", "mean_rtt_us"]


def test_a_run_of_no_series_is_an_error() -> None:
    with pytest.raises(ValueError, match="'PC4 n=2' starts with none of the plot's series"):
        plot.metric_bars(pc4_incast_table(), "mean_rtt_us", series=["DCQCN"])


def test_runs_compared_on_one_plot() -> None:
    """60 runs make a plot of lines no one reads: with series, each series at its first, middle
    and last group (or first and last); else the runs the claims name; else the first few, and a note says which."""
    names = list(pc4_incast_table()["scheme"])
    kinds = ["PC4", "PC4 ours", "DCQCN vendor", "DCQCN HPCC-study"]
    series = {"plot": {"kind": "bars", "series": kinds}}
    shown, note = _experiment.compared(names, series, 12)
    assert shown == [f"{s} n={n}" for n in (2, 9, 16) for s in kinds]
    assert note == "12 of 60 runs: each series at n=2, n=9, n=16"
    # Ten colours (the report's limit): the first and last groups only.
    shown, note = _experiment.compared(names, series, 10)
    assert shown == [f"{s} n={n}" for n in (2, 16) for s in kinds]
    assert note == "8 of 60 runs: each series at n=2, n=16"
    claimed = {"claimed_runs": ["PC4 n=4", "PC4 n=3"]}
    assert _experiment.compared(names, claimed, 10) == (["PC4 n=3", "PC4 n=4"], "2 of 60 runs: those the claims name")
    assert _experiment.compared(names, {}, 10) == (names[:10], "the first 10 of 60 runs")
    assert _experiment.compared(names[:5], {}, 10) == (names[:5], "")


def test_reproduce_without_python_writes_the_table_and_says_so_first(
    aiccsim_bin: Path, experiment_dir: Path, tmp_path: Path
) -> None:
    """With no Python that has the package, the runs, table and checks are written, and a note
    said before the first run how to get the plot; --report is refused before any run."""
    experiments = experiment_dir.parent / "experiments"
    env = {"AICCSIM_PYTHON": str(tmp_path / "no-python"), "PATH": "/usr/bin:/bin"}
    out = tmp_path / "out"
    args = [str(aiccsim_bin), "reproduce", "tiny", "--experiments", str(experiments), "--out", str(out)]
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("note: no plot.svg this time") and "make python" in done.stderr.splitlines()[0]
    assert (out / "table.csv").is_file() and (out / "checks.csv").is_file() and not (out / "plot.svg").exists()
    # Then, with the package: `aiccsim plot` draws it.
    done = subprocess.run(
        [str(aiccsim_bin), "plot", str(out)], capture_output=True, text=True, env={"AICCSIM_PYTHON": sys.executable}
    )
    assert done.returncode == 0, done.stderr
    assert (out / "plot.svg").is_file()
    report = tmp_path / "report"
    args = [str(aiccsim_bin), "reproduce", "tiny", "--experiments", str(experiments), "--out", str(report), "--report"]
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 1 and done.stderr.startswith("error: --report needs the aiccsim Python package")
    assert not (report / "pfc_only").exists(), "no run before the error"
