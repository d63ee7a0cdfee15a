"""The Arrow schema of every result table: what `aiccsim.load` gives a file's columns, what
Parquet files store, and what the native module's tables have (a test holds the two equal).

docs/results.md lists the same columns with their meaning; docs/python.md their types.
"""

from __future__ import annotations

import pyarrow as pa

INT, FLOAT, STR = pa.int64(), pa.float64(), pa.string()
NULLABLE = "nullable"


def _schema(*columns: tuple[str, pa.DataType] | tuple[str, pa.DataType, str]) -> pa.Schema:
    """Columns as (name, type) or (name, type, NULLABLE): only a column that can have an empty
    cell in the CSV file is nullable, so that a non-null column stays non-null in every format."""
    return pa.schema([pa.field(c[0], c[1], nullable=len(c) == 3) for c in columns])


# The tables of a results folder by file name stem (flows.csv, flows.parquet).
TABLES: dict[str, pa.Schema] = {
    "flows": _schema(
        ("flow_id", INT),
        ("src", INT),
        ("dst", INT),
        ("size_bytes", INT),
        ("start_ns", FLOAT),
        ("finish_ns", FLOAT, NULLABLE),
        ("fct_ns", FLOAT, NULLABLE),
        ("ideal_fct_ns", FLOAT),
        ("slowdown", FLOAT, NULLABLE),
        ("collective", STR, NULLABLE),
        ("retransmitted_bytes", INT),
        ("timeouts", INT),
    ),
    "ports": _schema(
        ("node", STR),
        ("port", INT),
        ("peer", STR),
        ("tx_packets", INT),
        ("tx_bytes", INT),
        ("pause_sent", INT),
        ("resume_sent", INT),
        ("drops", INT),
        ("ecn_marks", INT),
        ("max_queue_bytes", INT),
        ("paused_ns", FLOAT),
    ),
    "queues": _schema(("time_ns", FLOAT), ("switch", INT), ("port", INT), ("bytes", INT)),
    "rates": _schema(
        ("time_ns", FLOAT),
        ("flow", INT),
        ("rate_gbps", FLOAT),
        ("window_bytes", INT, NULLABLE),
        ("throughput_gbps", FLOAT),
    ),
    "pauses": _schema(
        ("time_ns", FLOAT),
        ("node", STR),
        ("port", INT),
        ("peer", STR),
        ("priority", INT),
        ("event", STR),
    ),
    "trace": _schema(
        ("time_ns", FLOAT),
        ("event", STR),
        ("node", STR),
        ("port", INT),
        ("kind", STR),
        ("flow", INT, NULLABLE),
        ("seq", INT),
        ("size_bytes", INT),
        ("priority", INT),
        ("ecn", INT),
        ("queue_bytes", INT, NULLABLE),
    ),
    "iterations": _schema(
        ("iteration", INT),
        ("start_ns", FLOAT, NULLABLE),
        ("end_ns", FLOAT, NULLABLE),
        ("duration_ns", FLOAT, NULLABLE),
        ("compute_ns", FLOAT),
        ("exposed_comm_ns", FLOAT, NULLABLE),
        ("flows", INT),
        ("bytes", INT),
    ),
}

# Not a file: one row per entry of summary.json's `collectives`.
COLLECTIVES = _schema(
    ("name", STR),
    ("ranks", INT),
    ("flows", INT),
    ("start_ns", FLOAT),
    ("finish_ns", FLOAT, NULLABLE),
    ("duration_ns", FLOAT, NULLABLE),
)

# Decimals of a float column in the CSV files: times in ns have three (whole picoseconds), the
# ratios and rates six.
SIX_DECIMALS = {"slowdown", "rate_gbps", "throughput_gbps"}


def decimals(column: str) -> int:
    return 6 if column in SIX_DECIMALS else 3
