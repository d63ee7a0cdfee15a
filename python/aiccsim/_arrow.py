"""Result tables from the native module's Arrow buffers to pyarrow, pandas and polars.

pyarrow is the one format built from the buffers; pandas and polars frames are converted from
it, so both hold the same values with one schema (docs/python.md lists it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from aiccsim._native import ColumnParts


def table(columns: list[ColumnParts]) -> pa.Table:
    import pyarrow as pa

    types: dict[str, pa.DataType] = {"int64": pa.int64(), "float64": pa.float64(), "string": pa.string()}
    fields, arrays = [], []
    for name, kind, nullable, length, nulls, buffers in columns:
        wrapped: list[pa.Buffer | None] = [None if b is None else pa.py_buffer(b) for b in buffers]
        arrays.append(pa.Array.from_buffers(types[kind], length, wrapped, null_count=nulls))
        fields.append(pa.field(name, types[kind], nullable=nullable))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def collectives(entries: list[dict[str, Any]]) -> pa.Table:
    """summary.json's ``collectives``, one row per entry; a null finish (an unfinished flow)
    stays null."""
    import pyarrow as pa

    from aiccsim._schema import COLLECTIVES

    return pa.Table.from_pylist(entries, schema=COLLECTIVES)


def to_pandas(t: pa.Table) -> pd.DataFrame:
    """Floats stay float64 (NaN where missing); integer columns that can be missing become
    pandas' nullable Int64, so that their type does not depend on whether a run has a gap."""
    import pandas as pd
    import pyarrow as pa

    df = t.to_pandas()
    for field in t.schema:
        if field.nullable and pa.types.is_integer(field.type):
            # pandas-stubs declare `__from_arrow__` (pandas' conversion of an Arrow column to
            # an extension type) on DatetimeTZDtype only; the masked dtypes have it too.
            df[field.name] = pd.Int64Dtype().__from_arrow__(t.column(field.name))  # type: ignore[attr-defined]
    return df
