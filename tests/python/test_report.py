"""`aiccsim report`: the page of a run (summary figures, plots, scenario, nothing from outside),
the pages of an experiment, and the command from the binary and from `python -m aiccsim`."""

from __future__ import annotations

import html
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import aiccsim

from conftest import EXPERIMENT, SMALL, SMALL_UNSAMPLED, python_m_aiccsim

# What the page of SMALL (4-to-1 incast of 200KB flows, PFC only, timelines) shows, and what it
# says it lacks: slowdown by size needs flows of two sizes.
SMALL_PLOTS = [
    "FCT CDF",
    "Switch queues",
    "Throughput per flow",
    "Rate per flow",
    "PFC pauses",
]
SMALL_MISSING = [
    "Slowdown by flow size: every finished flow is 200000 bytes, so there is no size to compare "
    "(the FCT CDF shows their slowdowns' spread)",
    "Window per flow: nothing to plot: none keeps no window",
    "Collective completion times: no collective",
    "Training iterations: no training iterations",
    "Per-rank timeline of the slowest iteration: no compute steps",
]


@pytest.fixture(scope="module")
def small_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("small")
    aiccsim.run(SMALL).write(folder)
    return folder


def plots(page: str) -> list[str]:
    """The captions of the page's images."""
    return [html.unescape(alt) for alt in re.findall(r'<img class="plot" alt="([^"]*)"', page)]


def assert_self_contained(page: str) -> None:
    """No file, script, style sheet or address from outside the page."""
    assert re.findall(r'src="(?!data:image/(png|svg\+xml);base64,)', page) == []
    assert "<script" not in page and "<link" not in page and "http://" not in page and "https://" not in page


def test_the_page_of_a_run(small_dir: Path, tmp_path: Path) -> None:
    [page_path] = aiccsim.report(small_dir, tmp_path / "page.html")
    assert page_path == tmp_path / "page.html"
    page = page_path.read_text()
    r = aiccsim.load(small_dir)
    s = r.summary
    assert plots(page) == SMALL_PLOTS
    for missing in SMALL_MISSING:
        assert f"<li>{html.escape(missing)}" in page
    # The summary's key figures.
    assert f"{s['fct_ns']['p99'] / 1e3:.3f}" in page and f"{s['slowdown']['max']:.3f}" in page
    assert f"<td>PAUSE / RESUME frames</td><td>{s['pause_frames']} / {s['resume_frames']}</td>" in page
    assert "<td>Flows finished</td><td>4 of 4</td>" in page
    # The resolved scenario, as run.json holds it.
    assert html.escape((small_dir / "run.json").read_text()) in page
    assert_self_contained(page)


def test_the_page_depends_only_on_the_results(small_dir: Path, tmp_path: Path) -> None:
    """The same results give the same bytes, whether read from CSV or from Parquet files."""
    aiccsim.load(small_dir).write(tmp_path / "parquet", format="parquet")
    first = aiccsim.report(small_dir, tmp_path / "a.html")[0].read_bytes()
    assert aiccsim.report(small_dir, tmp_path / "b.html")[0].read_bytes() == first
    assert aiccsim.report(tmp_path / "parquet", tmp_path / "c.html")[0].read_bytes() == first.replace(
        small_dir.name.encode(), b"parquet"
    )


def test_a_run_without_timelines_still_has_its_summary_and_pauses(tmp_path: Path) -> None:
    aiccsim.run(SMALL_UNSAMPLED).write(tmp_path)
    page = aiccsim.report(tmp_path)[0].read_text()
    assert plots(page) == ["FCT CDF", "PFC pauses"]
    assert "Switch queues: no queue samples: set output.sample_interval" in page


def test_a_training_run_shows_its_iterations(tmp_path: Path) -> None:
    from test_iterations import TRAINING

    aiccsim.run(TRAINING).write(tmp_path)
    page = aiccsim.report(tmp_path)[0].read_text()
    assert "Training iterations" in plots(page) and "Collective completion times" in plots(page)
    assert "Per-rank timeline of the slowest iteration" in plots(page)


def test_the_pages_of_an_experiment(experiment_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "exp"
    shutil.copytree(experiment_dir, out)
    pages = aiccsim.report(out)
    assert pages == [out / "report.html", out / "pfc_only" / "report.html", out / "dcqcn__defaults" / "report.html"]
    index = pages[0].read_text()
    # The table, each run's name leading to its page; the claims; the experiment's own plot
    # first, then the comparisons.
    assert '<td><a href="pfc_only/report.html">PFC only</a></td>' in index
    assert '<td><a href="dcqcn__defaults/report.html">DCQCN, defaults</a></td>' in index
    assert '<td>PFC only sends PAUSE frames</td><td><span class="pass">true</span></td>' in index
    assert plots(index) == [
        "The experiment's plot (plot.svg)",
        "FCT CDF",
        "Busiest switch queue",
        "PFC pauses",
    ]
    assert_self_contained(index)
    assert plots(pages[1].read_text()) == SMALL_PLOTS
    # --out elsewhere: the links still lead to the runs' pages.
    elsewhere = aiccsim.report(out, tmp_path / "pages" / "index.html")[0].read_text()
    assert '<a href="../exp/pfc_only/report.html">' in elsewhere


def report_command(how: str, aiccsim_bin: Path, *args: str, python: str = sys.executable):
    if how == "python -m":
        return python_m_aiccsim("report", *args)
    env = {**os.environ, "AICCSIM_PYTHON": python}
    return subprocess.run([str(aiccsim_bin), "report", *args], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("how", ["binary", "python -m"])
def test_the_report_command(how: str, small_dir: Path, aiccsim_bin: Path, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(small_dir, folder)
    done = report_command(how, aiccsim_bin, str(folder))
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"wrote {folder / 'report.html'}\n"
    assert plots((folder / "report.html").read_text()) == SMALL_PLOTS
    done = report_command(how, aiccsim_bin, str(folder), "--out", str(tmp_path / "elsewhere.html"))
    assert done.returncode == 0 and (tmp_path / "elsewhere.html").is_file()


@pytest.mark.parametrize("how", ["binary", "python -m"])
def test_the_report_command_on_a_folder_without_results(how: str, aiccsim_bin: Path, tmp_path: Path) -> None:
    done = report_command(how, aiccsim_bin, str(tmp_path))
    assert done.returncode == 2
    assert done.stderr == f"error: {tmp_path}: not a results folder: summary.json is missing" + (
        " (`aiccsim run --out DIR` and Result.write write one)\n"
    )


def test_the_binary_says_how_to_install_the_package(aiccsim_bin: Path, small_dir: Path, tmp_path: Path) -> None:
    """A Python without the aiccsim package: one line, with the command that installs it."""
    bare = tmp_path / "bare-python"
    bare.write_text(f'#!/bin/sh\nexec "{sys.executable}" -I -S "$@"\n')
    bare.chmod(bare.stat().st_mode | stat.S_IEXEC)
    done = report_command("binary", aiccsim_bin, str(small_dir), python=str(bare))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: aiccsim report runs in Python and ")
    assert "No module named 'aiccsim'" in done.stderr and "pip install '.[plot]'" in done.stderr
    done = report_command("binary", aiccsim_bin, str(small_dir), python=str(tmp_path / "no-such-python"))
    assert done.returncode == 1 and "cannot be started" in done.stderr


def test_python_m_says_how_to_install_matplotlib(small_dir: Path) -> None:
    # As if matplotlib were not installed: importing it fails.
    code = (
        "import sys, runpy; sys.modules['matplotlib'] = None; "
        f"sys.argv = ['aiccsim', 'report', {str(small_dir)!r}]; runpy.run_module('aiccsim', run_name='__main__')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr == (
        "error: aiccsim report needs matplotlib: install it with `pip install '.[plot]'` in the aiccsim source "
        "tree (`make python` for its .venv/)\n"
    )


@pytest.mark.parametrize("claim_holds", [True, False])
def test_reproduce_report_writes_the_pages(
    experiment_dir: Path, aiccsim_bin: Path, tmp_path: Path, claim_holds: bool
) -> None:
    """`aiccsim reproduce ID --report`: the experiment's pages come with it, also when a claim
    fails (exit code 3 is kept: the results are there to look at)."""
    spec = tmp_path / "experiments" / "tiny"
    spec.mkdir(parents=True)
    experiment = EXPERIMENT if claim_holds else EXPERIMENT.replace("value = 1", "value = 1000000")
    (spec / "experiment.toml").write_text(experiment)
    (spec / "small.toml").write_text(SMALL)
    out = tmp_path / "out"
    args = ["reproduce", "tiny", "--experiments", str(tmp_path / "experiments"), "--out", str(out), "--report"]
    env = {**os.environ, "AICCSIM_PYTHON": sys.executable}
    done = subprocess.run([str(aiccsim_bin), *args], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == (0 if claim_holds else 3), done.stderr
    for page in [out / "report.html", out / "pfc_only" / "report.html", out / "dcqcn__defaults" / "report.html"]:
        assert "FCT CDF" in plots(page.read_text()), page
    # The index is titled by the experiment's title, not its folder's name.
    title = re.search(r'^title = "(.*)"$', experiment, re.MULTILINE).group(1)
    assert f"<h1>{html.escape(title)}</h1>" in (out / "report.html").read_text()


def test_the_index_shows_the_experiments_columns_first(experiment_dir: Path, tmp_path: Path) -> None:
    """The table showed all 31 columns, the experiment's own among them; now those its claims
    and plot use, then every column folded under them (issue 29)."""
    out = tmp_path / "exp"
    shutil.copytree(experiment_dir, out)
    index = aiccsim.report(out)[0].read_text()
    first = index.index("<table>")
    own = re.findall(r"<th>([^<]*)</th>", index[first : index.index("</table>", first)])
    assert own == ["scheme", "pause_frames", "p99_fct_us", "max_fct_us"]
    columns = len((out / "table.csv").read_text().splitlines()[0].split(","))
    assert columns == 35
    folded = index[index.index(f"<details><summary>All {columns} columns of table.csv</summary>") :]
    assert len(re.findall(r"<th>", folded[: folded.index("</table>")])) == columns


def test_a_run_page_shows_the_scenario_as_written(small_dir: Path, experiment_dir: Path, tmp_path: Path) -> None:
    """The page showed run.json's JSON; now the TOML the user wrote (scenario.toml, written by
    `aiccsim run`, `reproduce` and Result.write), the resolved JSON folded under it."""
    assert (small_dir / "scenario.toml").read_text() == SMALL
    page = aiccsim.report(small_dir, tmp_path / "page.html")[0].read_text()
    assert f'<pre class="toml">{html.escape(SMALL)}</pre>' in page
    assert page.index("scenario.toml") < page.index("<details><summary>As run, every default filled in")
    # A run of an experiment: its base with the run's `set` merged in.
    run = (experiment_dir / "dcqcn__defaults" / "scenario.toml").read_text()
    assert run.startswith("# small.toml with the settings of run 'DCQCN, defaults'") and 'algorithm = "dcqcn"' in run
    # No text to show (a dict, or an older folder): the resolved scenario, as before.
    (tmp_path / "older").mkdir()
    for f in ["summary.json", "run.json", "flows.csv", "ports.csv"]:
        shutil.copy(small_dir / f, tmp_path / "older" / f)
    shutil.copytree(small_dir, tmp_path / "older", dirs_exist_ok=True, ignore=lambda d, names: ["scenario.toml"])
    older = aiccsim.report(tmp_path / "older")[0].read_text()
    assert "scenario.toml" not in older and html.escape((small_dir / "run.json").read_text()) in older


def test_one_unit_for_a_pages_queues(tmp_path: Path) -> None:
    """A queue of megabytes read "MB" in one plot and "KB" in another on the same page; now the
    page's summary and its queue plots share the unit of `plot.queue_unit` (issue 29)."""
    from test_plot import INCAST16

    big = aiccsim.run(INCAST16.replace('size = "20KB"', 'size = "400KB"'))
    assert aiccsim.plot.queue_unit(big) == "MB"
    assert aiccsim.plot.queue_timeline(big).get_ylabel() == "egress queue (MB)"
    big.write(tmp_path)
    page = aiccsim.report(tmp_path)[0].read_text()
    assert re.search(r"<td>Largest switch queue</td><td>\d+\.\d{3} MB</td>", page)
    assert " KB</td>" not in page
