"""The Arrow schema of every result table: what `aiccsim.load` gives a file's columns, what
Parquet files store, and what the native module's tables have. It is built from the engine's
own description of the tables (`_native.table_schemas`, from crates/aiccsim/src/metrics/tables.rs),
from which the CSV files are written too.

docs/results.md lists the same columns with their meaning (a Rust test holds it to them);
docs/python.md their types.
"""

from __future__ import annotations

import pyarrow as pa

INT, FLOAT, STR = pa.int64(), pa.float64(), pa.string()
NULLABLE = "nullable"


def _schema(*columns: tuple[str, pa.DataType] | tuple[str, pa.DataType, str]) -> pa.Schema:
    """Columns as (name, type) or (name, type, NULLABLE): only a column that can have an empty
    cell in the CSV file is nullable, so that a non-null column stays non-null in every format."""
    return pa.schema([pa.field(c[0], c[1], nullable=len(c) == 3) for c in columns])


_KINDS = {"int": INT, "float": FLOAT, "str": STR}


def _from_engine() -> tuple[dict[str, pa.Schema], dict[str, int]]:
    """The tables as the engine describes them (crates/aiccsim/src/metrics/tables.rs), which
    its CSV writer and its Arrow tables both follow; and each float column's decimals."""
    from aiccsim._native import table_schemas

    tables, places = {}, {}
    for table, columns in table_schemas():
        tables[table] = pa.schema([pa.field(c, _KINDS[kind], nullable=n) for c, kind, n, _ in columns])
        places.update({c: d for c, kind, _, d in columns if kind == "float"})
    return tables, places


# The tables of a results folder by file name stem (flows.csv, flows.parquet).
TABLES, _DECIMALS = _from_engine()
# collectives.csv is `Result.collective_stats`; `Result.collectives` is summary.json's list of
# collective spans (every tag, a flow list's too), under the name it had first.

# Not a file: one row per entry of summary.json's `collectives`.
COLLECTIVES = _schema(
    ("name", STR),
    ("ranks", INT),
    ("flows", INT),
    ("start_ns", FLOAT),
    ("finish_ns", FLOAT, NULLABLE),
    ("duration_ns", FLOAT, NULLABLE),
)


def decimals(column: str) -> int:
    """Decimals of a float column in the CSV files: times in ns have three (whole picoseconds),
    the ratios and rates six."""
    return _DECIMALS[column]
