"""Scenarios and helpers shared by the Python tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import aiccsim

REPO = Path(__file__).resolve().parents[2]

# Every table filled in: PFC pauses (PFC frames have no flow in the trace), timelines, a trace
# of switch 0 cut at max_rows.
SMALL = """
[topology]
kind = "star"
hosts = 5
link = { bandwidth = "100Gbps", delay = "1us" }
[switch]
buffer = "400KB"
[cc]
algorithm = "none"
[workload]
kind = "incast"
senders = "1..=4"
receiver = 0
size = "200KB"
[output]
sample_interval = "5us"
[output.trace]
nodes = ["s0"]
max_rows = 3000
"""

# SMALL without timelines or trace: only flows.csv, ports.csv and the JSON files.
SMALL_UNSAMPLED = SMALL.split("[output]")[0]

# Gaps in the other columns: flows still running at stop_time (no finish, FCT, slowdown) and a
# window algorithm (window_bytes).
STOPPED = """
[simulation]
stop_time = "30us"
[topology]
kind = "star"
hosts = 4
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "hpcc"
[workload]
kind = "all_reduce"
size = "1MB"
[output]
sample_interval = "5us"
[output.trace]
flows = [0]
max_rows = 500
"""

# Seconds of simulation at the least: tests stop it early.
LONG = """
[topology]
kind = "star"
hosts = 17
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "dcqcn"
[workload]
kind = "incast"
senders = "1..=16"
receiver = 0
size = "1GB"
"""

TABLES = ["flows", "ports", "queues", "rates", "pauses", "links", "trace"]


@pytest.fixture(scope="module", params=["small", "stopped"])
def small_or_stopped(request: pytest.FixtureRequest) -> aiccsim.Result:
    """SMALL and STOPPED run: between them every table, with gaps where the CSV files have them."""
    return aiccsim.run({"small": SMALL, "stopped": STOPPED}[request.param])


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL)
    return path


@pytest.fixture(scope="session")
def aiccsim_bin() -> Path:
    """The `aiccsim` binary cargo built: AICCSIM_BIN, else target/{debug,release}/aiccsim.
    `make test` sets AICCSIM_BIN, so there this never skips."""
    if "AICCSIM_BIN" in os.environ:
        path = Path(os.environ["AICCSIM_BIN"])
        assert path.is_file(), f"AICCSIM_BIN={path} does not exist"
        return path
    for profile in ["debug", "release"]:
        path = REPO / "target" / profile / "aiccsim"
        if path.is_file():
            return path
    pytest.skip("no aiccsim binary: cargo build -p aiccsim-cli, or set AICCSIM_BIN")


def python_m_aiccsim(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aiccsim", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def without_performance(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k != "performance"}


# A small experiment for `aiccsim reproduce`: the 4-to-1 incast of SMALL (PFC pauses, timelines)
# with PFC only and with DCQCN, and a claim.
# A sweep of 8 points (2 algorithms x 2 buffers x 2 seeds) of a small incast, for the local and
# Ray backends' tests.
BASE = """
[topology]
kind = "star"
hosts = 5
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "dcqcn"
[workload]
kind = "incast"
senders = "1..=4"
receiver = 0
size = "200KB"
"""

SWEEP = """
base = "base.toml"
seeds = [1, 2]
[grid]
"cc.algorithm" = ["dcqcn", "hpcc"]
"switch.buffer" = ["4MB", "32MB"]
"""


@pytest.fixture
def sweep_file(tmp_path: Path) -> Path:
    (tmp_path / "base.toml").write_text(BASE)
    path = tmp_path / "sweep.toml"
    path.write_text(SWEEP)
    return path


EXPERIMENT = """
title = "4-to-1 incast: PFC only vs DCQCN"
base = "small.toml"

[[run]]
name = "PFC only"

# A comma in a run name: table.csv quotes it, and the run's folder is its slug.
[[run]]
name = "DCQCN, defaults"
set = { cc = { algorithm = "dcqcn" } }

[plot]
kind = "fct_cdf"

[[check]]
claim = "PFC only sends PAUSE frames"
metric = "pause_frames"
runs = ["PFC only"]
rule = "at_least"
value = 1
"""


@pytest.fixture(scope="session")
def experiment_dir(aiccsim_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder of `aiccsim reproduce` for EXPERIMENT (table.csv, checks.csv,
    experiment.json, plot.svg and plot.png, one folder per run). Tests copy it before changing anything in it."""
    root = tmp_path_factory.mktemp("experiment")
    spec = root / "experiments" / "tiny"
    spec.mkdir(parents=True)
    (spec / "experiment.toml").write_text(EXPERIMENT)
    (spec / "small.toml").write_text(SMALL)
    out = root / "out"
    done = subprocess.run(
        [str(aiccsim_bin), "reproduce", "tiny", "--experiments", str(root / "experiments"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        # The plot is drawn by this Python's package.
        env={**os.environ, "AICCSIM_PYTHON": sys.executable},
    )
    assert done.returncode == 0, done.stderr
    return out
