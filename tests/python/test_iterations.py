"""`Result.iterations`: the rows of iterations.csv, with a training workload only."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import polars as pl
import polars.testing
import pytest

import aiccsim

from conftest import SMALL
from test_schema import POLARS

# Four iterations of 30 us compute and a 1 MB all-reduce, stopped during the third: finished
# iterations, one that has started and not ended, one that has not started.
TRAINING = """
[simulation]
stop_time = "250us"
[topology]
kind = "star"
hosts = 4
link = { bandwidth = "100Gbps", delay = "1us" }
[workload]
kind = "training"
iterations = 4
[[workload.layers]]
forward = "10us"
backward = "10us"
[[workload.layers]]
forward = "5us"
backward = "5us"
all_reduce = { size = "1MB" }
"""

# (column, pandas dtype), as docs/python.md lists them.
SCHEMA = [
    ("job", "str"),
    ("iteration", "int64"),
    ("start_ns", "float64"),
    ("end_ns", "float64"),
    ("duration_ns", "float64"),
    ("compute_ns", "float64"),
    ("exposed_comm_ns", "float64"),
    ("flows", "int64"),
    ("bytes", "int64"),
    ("rank", "Int64"),
    ("bubble_ns", "float64"),
    ("exposed_tp_ns", "float64"),
    ("exposed_pp_ns", "float64"),
    ("exposed_dp_ns", "float64"),
    ("exposed_ep_ns", "float64"),
    ("exposed_other_ns", "float64"),
]
EXPOSED = ["bubble_ns", "exposed_tp_ns", "exposed_pp_ns", "exposed_dp_ns", "exposed_ep_ns", "exposed_other_ns"]


@pytest.fixture(scope="module")
def run() -> aiccsim.Result:
    return aiccsim.run(TRAINING)


def test_columns_and_dtypes(run: aiccsim.Result) -> None:
    assert [(c, str(t)) for c, t in run.iterations.dtypes.items()] == SCHEMA
    assert list(run.polars.iterations.schema.items()) == [(c, POLARS[t]) for c, t in SCHEMA]
    assert run.arrow.iterations.num_rows == 4


def test_frames_equal_the_csv_file(run: aiccsim.Result, tmp_path: Path) -> None:
    run.write(tmp_path)
    csv = tmp_path / "iterations.csv"
    pd.testing.assert_frame_equal(run.iterations, pd.read_csv(csv, dtype=dict(SCHEMA)), check_exact=True)
    from_csv = pl.read_csv(csv, schema={c: POLARS[t] for c, t in SCHEMA})
    polars.testing.assert_frame_equal(run.polars.iterations, from_csv, check_exact=True)


def test_rows_add_up_and_unfinished_ones_have_no_end(run: aiccsim.Result) -> None:
    it = run.iterations
    done = it[it["end_ns"].notna()]
    assert len(done) == run.summary["iterations"]["finished"] == 2
    assert (done["duration_ns"] - (done["end_ns"] - done["start_ns"])).abs().max() < 1e-6
    assert (done["exposed_comm_ns"] - (done["duration_ns"] - done["compute_ns"])).abs().max() < 1e-6
    assert (it["compute_ns"] == 30_000.0).all()
    # Iteration 0 ends when iteration 1 starts, which nothing holds back; iteration 1's second
    # layer waits for the first all-reduce.
    assert done["exposed_comm_ns"].tolist()[0] == 0.0 and done["exposed_comm_ns"].tolist()[1] > 0
    assert done["exposed_comm_ns"].mean() == pytest.approx(run.summary["iterations"]["mean_exposed_comm_ns"])
    # The one running at stop_time has a start and nothing after it; the last not even a start.
    assert it["start_ns"].notna().tolist() == [True, True, True, False]
    assert it["end_ns"].notna().tolist() == [True, True, False, False]
    assert it["exposed_comm_ns"].notna().tolist() == [True, True, False, False]
    # Each iteration's all-reduce: 2(n-1) steps of n chunks of size/n.
    assert (it["bytes"] == 6_000_000).all() and (it["flows"] == 24).all()


def test_the_split_charges_the_waits_to_the_all_reduce(run: aiccsim.Result) -> None:
    it = run.iterations
    done = it[it["end_ns"].notna()]
    # Every rank computes all of each iteration here: the split adds up to exposed_comm_ns,
    # all of it data parallel (the layer's all-reduce).
    assert (done[EXPOSED].sum(axis=1) - done["exposed_comm_ns"]).abs().max() < 1e-6
    assert (done["exposed_dp_ns"] == done["exposed_comm_ns"]).all()
    assert done["rank"].between(0, 3).all()
    assert it[it["end_ns"].isna()][["rank", *EXPOSED]].isna().all().all()
    slowest = run.summary["iterations"]["slowest"]
    assert slowest["iteration"] == 1 and slowest["exposed_dp_ns"] == pytest.approx(done["exposed_dp_ns"].max())
    assert [w["dimension"] for w in slowest["critical_path"]] == ["dp"]


def test_none_without_a_training_workload() -> None:
    r = aiccsim.run(SMALL)
    assert r.iterations is None and r.polars.iterations is None and r.arrow.iterations is None
    assert "iterations" not in r.summary


@pytest.mark.parametrize("format", ["csv", "parquet"])
def test_load_gives_the_iterations_back(run: aiccsim.Result, format: str, tmp_path: Path) -> None:
    run.write(tmp_path, format=format)
    loaded = aiccsim.load(tmp_path)
    pd.testing.assert_frame_equal(loaded.iterations, run.iterations, check_exact=True)
    # A loaded Result writes the engine's bytes back.
    loaded.write(tmp_path / "again")
    run.write(tmp_path / "engine")
    assert (tmp_path / "again" / "iterations.csv").read_bytes() == (tmp_path / "engine" / "iterations.csv").read_bytes()
