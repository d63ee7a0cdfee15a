"""`aiccsim.load`: a Result from a results folder (what `aiccsim run --out`, `aiccsim reproduce`
and `Result.write` write), with the same tables and types as the Result of `aiccsim.run`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiccsim._result import Result

if TYPE_CHECKING:
    import pyarrow as pa

LOAD_FORMATS = (None, "csv", "parquet")
# The workloads that write iterations.csv, steps.csv and training_collectives.csv.
TRAINING_KINDS = ("training", "parallel_training")
TRAINING = 'a workload of kind = "training" or "parallel_training"'


def load(dir: str | os.PathLike[str], *, format: str | None = None) -> Result:
    """The results in folder ``dir``: ``summary.json``, ``run.json`` and the tables, each from
    its ``.parquet`` file or its ``.csv`` file.

    By default each table comes from its Parquet file if there is one that is not older than
    the CSV file (``aiccsim run`` into the same folder again rewrites only the CSV files), else
    from the CSV file; ``format="csv"`` or ``"parquet"`` reads only that kind. The tables are
    read when first used.

    Which tables the run recorded follows ``run.json``'s scenario, as for ``aiccsim.run``:
    ``queues``, ``rates``, ``pauses`` and ``links`` with ``output.sample_interval`` (and
    ``cc_state`` with ``output.cc_state`` too), ``trace``
    with ``[output.trace]``, ``iterations``, ``steps`` and ``training_collectives`` with a
    ``training`` or ``parallel_training`` workload (files left from an earlier run into the
    folder are ignored). ``pauses`` and ``links`` are None too when the
    folder has no such file (aiccsim versions before them).

    Raises ``FileNotFoundError`` when the folder or a file it needs is missing (the message
    names it) and ``ValueError`` when a file does not hold what aiccsim writes.
    """
    if format not in LOAD_FORMATS:
        raise ValueError(f"format={format!r}: one of None, 'csv', 'parquet'")
    folder = Path(dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder (a results folder is what `aiccsim run --out DIR` writes)")
    summary_text = _text(folder, "summary.json")
    run_text = _text(folder, "run.json")
    scenario = _json(folder / "run.json", run_text).get("scenario", {})
    output = scenario.get("output", {})
    _json(folder / "summary.json", summary_text)

    timelines = "sample_interval" in output
    training = any(w.get("kind") in TRAINING_KINDS for w in _workloads(scenario))
    # Each table the scenario asks for, with the setting that asks (None: every run has it).
    recorded: dict[str, tuple[bool, str | None]] = {
        "flows": (True, None),
        "ports": (True, None),
        "queues": (timelines, "output.sample_interval"),
        "rates": (timelines, "output.sample_interval"),
        "cc_state": (timelines and bool(output.get("cc_state")), "output.cc_state"),
        "trace": ("trace" in output, "output.trace"),
        "iterations": (training, TRAINING),
        "jobs": (bool(scenario.get("jobs")), "[[jobs]]"),
    }
    files: dict[str, Path | None] = {}
    for name, (wanted, setting) in recorded.items():
        files[name] = _file(folder, name, format) if wanted else None
        if wanted and files[name] is None:
            why = "" if setting is None else f", though run.json's scenario records it ({setting})"
            raise FileNotFoundError(f"{folder}: {_missing(name, format)}{why}")
    # Written by aiccsim versions that have them, only with timelines.
    files["pauses"] = _file(folder, "pauses", format) if timelines else None
    files["links"] = _file(folder, "links", format) if timelines else None
    # Written by aiccsim versions that have them, with a training workload.
    files["steps"] = _file(folder, "steps", format) if training else None
    files["training_collectives"] = _file(folder, "training_collectives", format) if training else None
    # Written when a generator made a collective (aiccsim versions that have it).
    files["collectives"] = _file(folder, "collectives", format)
    # Written when fast-forward credited a flow for a span it skipped.
    files["skips"] = _file(folder, "skips", format)

    def tables(name: str) -> pa.Table | None:
        path = files.get(name)
        return None if path is None else read_table(path, name)

    written = folder / "scenario.toml"
    scenario_text = written.read_text(encoding="utf-8") if written.is_file() else None
    return Result(summary_text, run_text, tables, scenario_text=scenario_text)


def _workloads(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    """The scenario's workloads: its ``workload``, or those of its jobs (run.json writes each
    job's as a list)."""
    if "workload" in scenario:
        return [scenario["workload"]]
    return [w for job in scenario.get("jobs", []) for w in job.get("workload", [])]


def read_table(path: Path, name: str) -> pa.Table:
    """The table ``name`` from a CSV or Parquet file, with the schema of `_schema.TABLES`."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from aiccsim._schema import TABLES

    schema = TABLES[name]
    try:
        if path.suffix == ".parquet":
            t = pq.read_table(path)
        else:
            # Only an empty cell is missing: "NA" or "nan" would be a value (and an error).
            options = pacsv.ConvertOptions(column_types=schema, null_values=[""], strings_can_be_null=True)
            t = pacsv.read_csv(path, convert_options=options)
    except (pa.ArrowInvalid, OSError) as e:
        raise ValueError(f"{path}: cannot read it as aiccsim's {name} table: {e}") from None
    return _conform(t, schema, path)


def _conform(t: pa.Table, schema: pa.Schema, path: Path) -> pa.Table:
    """``t`` with exactly ``schema``: the same columns in the same order, no missing value in a
    column that never has one, and the schema's types."""
    import pyarrow as pa

    if t.column_names != schema.names:
        raise ValueError(
            f"{path}: the columns are {', '.join(t.column_names)}; aiccsim writes {', '.join(schema.names)}"
            " (is it from another aiccsim version? write it again with this one)"
        )
    for field, column in zip(schema, t.columns):
        if not field.nullable and column.null_count:
            row = column.is_null().to_pylist().index(True)
            raise ValueError(f"{path}: column {field.name} has an empty value in row {row + 1} (it never has one)")
    try:
        return t.replace_schema_metadata(None).cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise ValueError(f"{path}: the columns do not have aiccsim's types ({schema}): {e}") from None


def _file(folder: Path, name: str, format: str | None) -> Path | None:
    """The file that holds table ``name``: Parquet unless the CSV file is newer (or ``format``
    says which); None if there is none."""
    csv, parquet = folder / f"{name}.csv", folder / f"{name}.parquet"
    has_csv = format != "parquet" and csv.is_file()
    has_parquet = format != "csv" and parquet.is_file()
    if has_csv and has_parquet:
        return csv if csv.stat().st_mtime > parquet.stat().st_mtime else parquet
    return csv if has_csv else parquet if has_parquet else None


def _missing(name: str, format: str | None) -> str:
    kinds = {None: f"{name}.csv (or {name}.parquet)", "csv": f"{name}.csv", "parquet": f"{name}.parquet"}
    return f"{kinds[format]} is missing"


def _text(folder: Path, name: str) -> str:
    path = folder / name
    if not path.is_file():
        hint = (
            "it is an experiment's folder (aiccsim reproduce): load one of its runs' folders"
            if (folder / "table.csv").is_file()
            else "`aiccsim run --out DIR` and Result.write write one"
        )
        raise FileNotFoundError(f"{folder}: not a results folder: {name} is missing ({hint})")
    return path.read_text(encoding="utf-8")


def _json(path: Path, text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON: {e}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: not a JSON object")
    return value
