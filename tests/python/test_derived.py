"""`Result.derived`: the figures of `aiccsim reproduce`'s table beyond the summary, computed by
the core (crates/aiccsim/src/metrics/derived.rs) for a run's Result and for a loaded one, equal
to what `reproduce` writes into table.csv."""

from __future__ import annotations

import csv
import math
import subprocess
from pathlib import Path

import pytest

import aiccsim
from aiccsim import _native
from aiccsim._experiment import slug

# A long flow, a short one that joins and leaves it, and the bottleneck slowed at 5 us: every
# timeline figure (recovery, segment fairness, steady fairness, the queue) and a link's
# utilisation at a speed that a file does not hold.
LONGSHORT = """
[topology]
kind = "star"
hosts = 3
link = { bandwidth = "100Gbps", delay = "1us" }
[switch]
buffer = "4MB"
pfc = { enabled = true }
ecn = { kmin = "100KB", kmax = "400KB", pmax = 0.2 }
[cc]
algorithm = "dcqcn"
[workload]
kind = "flows"
flows = [{ src = 1, dst = 0, size = "2MB" }, { src = 2, dst = 0, size = "300KB", start = "40us" }]
[[events]]
at = "5us"
link = ["s0", "h0"]
action = "slow"
bandwidth = "80Gbps"
[output]
sample_interval = "1us"
"""

# One ring all-reduce on 4 hosts: the collectives' bus bandwidth, its bound and line rate.
ALLREDUCE = """
[topology]
kind = "star"
hosts = 4
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "hpcc"
[workload]
kind = "all_reduce"
size = "1MB"
"""

EXPERIMENTS = {
    "longshort": (
        LONGSHORT,
        """
title = "long and short"
base = "base.toml"
links = [["s0", "h0"], ["s0", "h1"]]
[[run]]
name = "DCQCN"
[[run]]
name = "PFC only, no CC"
set = { cc = { algorithm = "none" } }
[plot]
kind = "throughput"
flows = [0, 1]
recovery_of = 0
segments = "20us"
settle = "5us"
""",
    ),
    "queue": (
        LONGSHORT,
        """
title = "queue"
base = "base.toml"
[[run]]
name = "DCQCN"
[plot]
kind = "queue"
switch = 0
port = 0
""",
    ),
    "allreduce": (
        ALLREDUCE,
        """
title = "ring all-reduce"
base = "base.toml"
[[run]]
name = "HPCC"
[[run]]
name = "DCQCN"
set = { cc = { algorithm = "dcqcn" } }
[plot]
kind = "bars"
metric = "busbw_gbps"
""",
    ),
}


@pytest.fixture(scope="module")
def reproduced(aiccsim_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """Each experiment's (scenario file, output folder of `aiccsim reproduce`)."""
    root = tmp_path_factory.mktemp("derived")
    done = {}
    for name, (base, spec) in EXPERIMENTS.items():
        folder = root / "experiments" / name
        folder.mkdir(parents=True)
        (folder / "base.toml").write_text(base)
        (folder / "experiment.toml").write_text(spec)
        out = root / "out" / name
        ran = subprocess.run(
            [str(aiccsim_bin), "reproduce", name, "--experiments", str(root / "experiments"), "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert ran.returncode == 0, ran.stderr
        done[name] = (folder / "base.toml", out)
    return done


def table(out: Path) -> list[dict[str, str]]:
    with open(out / "table.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


DECIMALS = {name: decimals for name, decimals, _ in _native.experiment_columns()}


def cell(column: str, value: float | None) -> str:
    """``value`` as table.csv writes it in ``column``."""
    return "" if value is None else f"{value:.{DECIMALS[column]}f}"


def figures(d: _native.Derived, experiment: str) -> dict[str, float | None]:
    """The table's columns that ``d`` gives for the experiment."""
    got: dict[str, float | None] = {
        "jain_steady": d.jain_steady(),
        "busbw_gbps": d.busbw_gbps(),
        "busbw_bound_gbps": d.busbw_bound_gbps(),
        "mean_busbw_gbps": d.mean_busbw_gbps(),
        "line_rate_pct": d.line_rate_pct(),
    }
    if experiment == "longshort":
        got["recovery_us"] = d.recovery_us(0)
        got["min_jain"] = d.min_segment_jain("20us", settle="5us")
        utilisation = [d.link_utilisation_pct("s0", "h0"), d.link_utilisation_pct("s0", "h1")]
        known = [u for u in utilisation if u is not None]
        got["min_link_util_pct"] = min(known) if known else None
        got["mean_link_util_pct"] = sum(known) / len(known) if known else None
    if experiment == "queue":
        got["mean_queue_kb"] = d.mean_queue_kb(0, 0)
    return got


@pytest.mark.parametrize("experiment", list(EXPERIMENTS))
def test_a_loaded_result_gives_the_figures_reproduce_wrote(
    reproduced: dict[str, tuple[Path, Path]], experiment: str
) -> None:
    _, out = reproduced[experiment]
    rows = table(out)
    for row in rows:
        got = figures(aiccsim.load(out / slug(row["scheme"])).derived, experiment)
        assert {k: cell(k, v) for k, v in got.items()} == {k: row[k] for k in got}, row["scheme"]


def test_the_figures_are_not_all_empty(reproduced: dict[str, tuple[Path, Path]]) -> None:
    """The comparison above covers real numbers: each figure is a number in some row."""
    filled: set[str] = set()
    for experiment, (_, out) in reproduced.items():
        for row in table(out):
            got = figures(aiccsim.load(out / slug(row["scheme"])).derived, experiment)
            filled |= {k for k, v in got.items() if v is not None}
    every = {
        "jain_steady",
        "busbw_gbps",
        "busbw_bound_gbps",
        "mean_busbw_gbps",
        "line_rate_pct",
        "recovery_us",
        "min_jain",
        "min_link_util_pct",
        "mean_link_util_pct",
        "mean_queue_kb",
    }
    assert filled == every


@pytest.mark.parametrize("experiment", ["longshort", "allreduce"])
def test_a_run_and_its_files_give_the_same_doubles(
    reproduced: dict[str, tuple[Path, Path]], experiment: str, tmp_path: Path
) -> None:
    """The records rebuilt from the files are the run's own: every figure equal, not only to
    the table's decimals, from CSV files and from Parquet files alike."""
    base, _ = reproduced[experiment]
    r = aiccsim.run(base)
    r.write(tmp_path, format="both")
    ran = figures(r.derived, experiment)
    for fmt in ["csv", "parquet"]:
        loaded = figures(aiccsim.load(tmp_path, format=fmt).derived, experiment)
        assert loaded == ran, fmt
    queue = (r.derived.queue_series(0, 0), aiccsim.load(tmp_path).derived.queue_series(0, 0))
    assert queue[0] == queue[1]


def test_the_slowed_link_counts_at_its_new_speed(reproduced: dict[str, tuple[Path, Path]]) -> None:
    """h0's link was slowed to 80 Gbps before the flows' end: its utilisation is over 80 Gbps,
    which no result file holds (the loaded Result takes it from run.json's events)."""
    _, out = reproduced["longshort"]
    r = aiccsim.load(out / "dcqcn")
    end_s = r.summary["completion_time_ns"] / 1e9
    sent = r.ports.set_index(["node", "peer"]).loc[("s0", "h0"), "tx_bytes"]
    got = r.derived.link_utilisation_pct("s0", "h0")
    assert got == pytest.approx(sent * 8 / (80e9 * end_s) * 100, rel=1e-12)
    assert got > 100 * sent * 8 / (100e9 * end_s) * 1.2


def test_recovery_and_queue_need_timelines() -> None:
    r = aiccsim.run(ALLREDUCE)
    assert r.derived.recovery_us(0) is None
    assert r.derived.mean_queue_kb(0, 0) is None
    assert r.derived.min_segment_jain("10us") is None
    assert r.derived.busbw_gbps() is not None and not math.isinf(r.derived.busbw_gbps() or 0.0)


def test_a_link_that_does_not_exist_is_named() -> None:
    r = aiccsim.run(ALLREDUCE)
    with pytest.raises(KeyError, match="no link from h0 to h1"):
        r.derived.link_utilisation_pct("h0", "h1")
    with pytest.raises(ValueError, match='segment="ten"'):
        r.derived.min_segment_jain("ten")


def test_the_run_folder_is_named_as_reproduce_names_it(experiment_dir: Path) -> None:
    names = [row["scheme"] for row in table(experiment_dir)]
    assert [slug(n) for n in names] == ["pfc_only", "dcqcn__defaults"]
    assert all((experiment_dir / slug(n) / "summary.json").is_file() for n in names)
