"""The tables' columns and types, as docs/python.md lists them: the CSV columns of
docs/results.md in the same order, integers as int64, times and ratios as float64, text as
strings; integer columns with empty cells (window_bytes, flow, queue_bytes) are nullable."""

from __future__ import annotations

import polars as pl
import pytest

import aiccsim

from conftest import SMALL, SMALL_UNSAMPLED, STOPPED, TABLES

# (column, pandas dtype); polars and Arrow follow: int64/Int64 -> Int64, float64 -> Float64,
# str -> String.
SCHEMA = {
    "flows": [
        ("flow_id", "int64"),
        ("src", "int64"),
        ("dst", "int64"),
        ("size_bytes", "int64"),
        ("start_ns", "float64"),
        ("finish_ns", "float64"),
        ("fct_ns", "float64"),
        ("ideal_fct_ns", "float64"),
        ("slowdown", "float64"),
        ("collective", "str"),
        ("retransmitted_bytes", "int64"),
        ("timeouts", "int64"),
        ("link", "str"),
    ],
    "ports": [
        ("node", "str"),
        ("port", "int64"),
        ("peer", "str"),
        ("tx_packets", "int64"),
        ("tx_bytes", "int64"),
        ("pause_sent", "int64"),
        ("resume_sent", "int64"),
        ("drops", "int64"),
        ("trims", "int64"),
        ("ecn_marks", "int64"),
        ("max_queue_bytes", "int64"),
        ("paused_ns", "float64"),
        ("credit_stalls", "int64"),
        ("credit_stall_ns", "float64"),
    ],
    "queues": [("time_ns", "float64"), ("switch", "int64"), ("port", "int64"), ("bytes", "int64")],
    "rates": [
        ("time_ns", "float64"),
        ("flow", "int64"),
        ("rate_gbps", "float64"),
        ("window_bytes", "Int64"),
        ("throughput_gbps", "float64"),
    ],
    "pauses": [
        ("time_ns", "float64"),
        ("node", "str"),
        ("port", "int64"),
        ("peer", "str"),
        ("priority", "int64"),
        ("event", "str"),
    ],
    "links": [
        ("time_ns", "float64"),
        ("node", "str"),
        ("port", "int64"),
        ("peer", "str"),
        ("bytes", "int64"),
        ("utilisation", "float64"),
    ],
    "trace": [
        ("time_ns", "float64"),
        ("event", "str"),
        ("node", "str"),
        ("port", "int64"),
        ("kind", "str"),
        ("flow", "Int64"),
        ("seq", "int64"),
        ("size_bytes", "int64"),
        ("priority", "int64"),
        ("ecn", "int64"),
        ("queue_bytes", "Int64"),
    ],
}

POLARS = {"int64": pl.Int64, "Int64": pl.Int64, "float64": pl.Float64, "str": pl.String}


@pytest.fixture(scope="module")
def runs() -> list[aiccsim.Result]:
    return [aiccsim.run(SMALL), aiccsim.run(STOPPED)]


@pytest.mark.parametrize("name", TABLES)
def test_pandas_columns_and_dtypes(runs: list[aiccsim.Result], name: str) -> None:
    for r in runs:
        frame = getattr(r, name)
        assert [(c, str(t)) for c, t in frame.dtypes.items()] == SCHEMA[name]


@pytest.mark.parametrize("name", TABLES)
def test_polars_columns_and_dtypes(runs: list[aiccsim.Result], name: str) -> None:
    for r in runs:
        frame = getattr(r.polars, name)
        assert list(frame.schema.items()) == [(c, POLARS[t]) for c, t in SCHEMA[name]]


def test_every_table_is_covered(runs: list[aiccsim.Result]) -> None:
    """The schema tests above saw every table, with missing values where the CSV has gaps."""
    small, stopped = runs
    assert all(getattr(r, name) is not None for r in runs for name in TABLES)
    assert small.trace["flow"].isna().any() and small.trace["queue_bytes"].isna().any()
    assert stopped.flows["finish_ns"].isna().any() and stopped.rates["window_bytes"].notna().all()
    assert small.flows["collective"].isna().all() and stopped.flows["collective"].notna().all()
    assert set(small.pauses["event"]) == {"pause", "resume"}


def test_tables_not_recorded_are_none() -> None:
    r = aiccsim.run(SMALL_UNSAMPLED)
    for name in ["queues", "rates", "pauses", "trace"]:
        assert getattr(r, name) is None
        assert getattr(r.polars, name) is None
        assert getattr(r.arrow, name) is None
