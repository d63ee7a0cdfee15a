"""Writing a Result's files from its Arrow tables: Parquet files for any Result, and CSV files
for a Result that `aiccsim.load` read (a run's CSV files come from the engine's own writer).

Both write what `aiccsim run` writes, byte for byte where it writes the same file: the JSON
files are the text the Result was made from, and the CSV cells are formatted as the engine
formats them. Each file is written under a temporary name and renamed into place, as the engine
does, so a crash never leaves half a file.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from aiccsim._schema import TABLES, decimals

if TYPE_CHECKING:
    import pyarrow as pa

    from aiccsim._result import Result


def csv_files(result: Result, folder: Path) -> None:
    _json_files(result, folder)
    for name, table in _tables(result):
        atomic(folder, f"{name}.csv", partial(_write_csv, table))


def parquet_files(result: Result, folder: Path) -> None:
    """Parquet files with the tables' Arrow schemas, so that loading them gives the same types.
    The same Result gives the same bytes: the file's metadata holds the schema and the writing
    library's version, no time or path."""
    import pyarrow.parquet as pq

    _json_files(result, folder)
    for name, table in _tables(result):
        # zstd: about the size of gzip at the speed of snappy; every reader of Parquet has it.
        atomic(folder, f"{name}.parquet", partial(pq.write_table, table, compression="zstd"))


def _json_files(result: Result, folder: Path) -> None:
    atomic(folder, "summary.json", lambda f: f.write(result._summary_json.encode("utf-8")))
    atomic(folder, "run.json", lambda f: f.write(result._run_json.encode("utf-8")))


def scenario_file(result: Result, folder: Path) -> None:
    """``scenario.toml``: the scenario's text as written, as `aiccsim run` keeps it, where the
    Result has it (not from a dict). A file of that name already there is left alone otherwise:
    it may be the scenario this folder's run was started from (a sweep's point)."""
    text = result._scenario_text
    if text is not None:
        atomic(folder, "scenario.toml", lambda f: f.write(text.encode("utf-8")))


def _tables(result: Result) -> Iterator[tuple[str, pa.Table]]:
    for name in TABLES:
        table = result._table(name)
        if table is not None:
            yield name, table


def _write_csv(table: pa.Table, f: io.BufferedWriter) -> None:
    f.write(_csv_text(table).encode("utf-8"))


def _csv_text(table: pa.Table) -> str:
    """The table as the engine writes it: times with three decimals, ratios with six, an empty
    cell for a missing value, a line feed after every row, quotes only where needed."""
    columns = []
    for field, column in zip(table.schema, table.columns):
        cell = _cell(field)
        columns.append(["" if v is None else cell(v) for v in column.to_pylist()])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.column_names)
    writer.writerows(zip(*columns))
    return out.getvalue()


def _cell(field: pa.Field[pa.DataType]) -> Callable[[object], str]:
    import pyarrow as pa

    if pa.types.is_floating(field.type):
        places = decimals(field.name)
        return lambda v: f"{v:.{places}f}"
    return str


def atomic(folder: Path, name: str, write: Callable[[io.BufferedWriter], object]) -> None:
    """Writes ``folder/name`` under a temporary name first, so a crash never leaves half a file."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}.tmp"
    with open(tmp, "wb") as f:
        write(f)
    tmp.replace(folder / name)
