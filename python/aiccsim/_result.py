"""`Result`: one run's summary, scenario and tables, converted on first use and kept.

A Result comes from a run (`aiccsim.run`: the native module's tables) or from a results folder
(`aiccsim.load`: CSV or Parquet files). Either way it holds the text of `summary.json` and
`run.json` and a function that gives each table as a pyarrow Table with the schema of
`_schema.py`; pandas and polars frames are converted from those, by the same code for both.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiccsim import _arrow

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    from aiccsim._native import Derived, NativeResult

FORMATS = ("csv", "parquet", "both")


# The key of summary.json's collective spans among a Result's tables (not a file; "collectives"
# is collectives.csv).
SPANS = "collective_spans"


class Result:
    """The results of one run.

    - ``summary``: ``summary.json`` as a dict (``stop_reason``, ``fct_ns``, ...).
    - ``scenario``: the scenario with every default filled in, as in ``run.json``; ``run_info``
      is the whole of ``run.json`` (``aiccsim_version``, ``seed``, ``scenario``).
    - ``flows``, ``ports``, ``queues``, ``rates``, ``pauses``, ``links``, ``trace``: pandas
      DataFrames with the columns of the CSV files of the same names. ``queues``, ``rates``,
      ``pauses`` and ``links`` are None without ``output.sample_interval``, ``trace`` without
      ``[output.trace]``: no file is written then.
    - ``cc_state``: ``cc_state.csv``, each sampled flow's algorithm state (``time_ns``, ``flow``,
      ``name``, ``value``); None unless ``output.cc_state`` is set with the timelines.
    - ``collectives``: one row per entry of ``summary["collectives"]`` (every collective tag).
    - ``collective_stats``: ``collectives.csv``, each collective a generator made with its kind,
      algorithm, size, completion time and bus bandwidth; None when the workload made none.
    - ``iterations``: ``iterations.csv``; None unless a workload is ``training`` or
      ``parallel_training``.
    - ``steps``: ``steps.csv``, every compute step of a training workload (rank, iteration,
      microbatch, layer, phase, start and end); ``training_collectives``:
      ``training_collectives.csv``, each training collective's parallel dimension. None as
      ``iterations``.
    - ``jobs``: ``jobs.csv``; None unless the scenario has ``[[jobs]]``.
    - ``polars``: the same tables as polars DataFrames (``result.polars.flows``).
    - ``arrow``: the same tables as pyarrow Tables (``result.arrow.flows``).
    - ``write(dir, format="csv")``: the files ``aiccsim run --out DIR`` writes, or Parquet files.
    - ``derived``: the figures ``aiccsim reproduce`` puts in its table beyond the summary
      (``recovery_us``, ``min_segment_jain``, ``link_utilisation_pct``, ``busbw_bound_gbps``,
      ...), computed by the same Rust code, for a run's Result and a loaded one alike.

    Each table is converted once, on first use; later reads return the same object.
    """

    def __init__(
        self,
        summary_json: str,
        run_json: str,
        tables: Callable[[str], pa.Table | None],
        write_csv: Callable[[Path], object] | None = None,
        native: NativeResult | None = None,
        scenario_text: str | None = None,
    ) -> None:
        """Not for users: `aiccsim.run` and `aiccsim.load` make Results. ``tables(name)`` gives
        a table with the schema of `_schema.TABLES[name]`, or None if the run did not record
        it; ``write_csv(dir)`` writes the CSV and JSON files (None: from the Arrow tables);
        ``native`` is the engine's own results, when the Result is of a run;
        ``scenario_text`` the scenario as the user wrote it (None for a dict), which ``write``
        puts in ``scenario.toml``."""
        self._scenario_text = scenario_text
        self._summary_json = summary_json
        self._run_json = run_json
        self._source = tables
        self._write_csv = write_csv
        self._native = native
        self._arrow: dict[str, pa.Table | None] = {}
        self.arrow = ArrowTables(self)
        self.polars = PolarsTables(self)

    @cached_property
    def summary(self) -> dict[str, Any]:
        return json.loads(self._summary_json)  # type: ignore[no-any-return]

    @cached_property
    def run_info(self) -> dict[str, Any]:
        return json.loads(self._run_json)  # type: ignore[no-any-return]

    @property
    def scenario(self) -> dict[str, Any]:
        return self.run_info["scenario"]  # type: ignore[no-any-return]

    @cached_property
    def flows(self) -> pd.DataFrame:
        return _arrow.to_pandas(self._required("flows"))

    @cached_property
    def ports(self) -> pd.DataFrame:
        return _arrow.to_pandas(self._required("ports"))

    @cached_property
    def queues(self) -> pd.DataFrame | None:
        return self._pandas("queues")

    @cached_property
    def rates(self) -> pd.DataFrame | None:
        return self._pandas("rates")

    @cached_property
    def cc_state(self) -> pd.DataFrame | None:
        return self._pandas("cc_state")

    @cached_property
    def pauses(self) -> pd.DataFrame | None:
        return self._pandas("pauses")

    @cached_property
    def links(self) -> pd.DataFrame | None:
        return self._pandas("links")

    @cached_property
    def trace(self) -> pd.DataFrame | None:
        return self._pandas("trace")

    @cached_property
    def collectives(self) -> pd.DataFrame:
        return _arrow.to_pandas(self._required(SPANS))

    @cached_property
    def collective_stats(self) -> pd.DataFrame | None:
        return self._pandas("collectives")

    @cached_property
    def iterations(self) -> pd.DataFrame | None:
        return self._pandas("iterations")

    @cached_property
    def steps(self) -> pd.DataFrame | None:
        return self._pandas("steps")

    @cached_property
    def training_collectives(self) -> pd.DataFrame | None:
        return self._pandas("training_collectives")

    @cached_property
    def jobs(self) -> pd.DataFrame | None:
        return self._pandas("jobs")

    @cached_property
    def skips(self) -> pd.DataFrame | None:
        """What fast-forward credited to each flow over each span it skipped (``skips.csv``):
        None when nothing was skipped."""
        return self._pandas("skips")

    @cached_property
    def derived(self) -> Derived:
        """The figures of ``aiccsim reproduce``'s table that the summary does not hold, in the
        table's units (us, KB, Gbit/s, %), each None where the run cannot give it: see
        docs/python.md. A loaded Result hands its tables to the same Rust code as a run's."""
        from aiccsim import _native

        if self._native is not None:
            return _native.Derived.of_run(self._native)

        def columns(t: pa.Table | None) -> dict[str, list[Any]] | None:
            return None if t is None else t.to_pydict()

        s = self.summary
        return _native.Derived.of_tables(
            self.scenario,
            s["simulated_time_ns"],
            s["completion_time_ns"],
            self._required("flows").to_pydict(),
            self._required("ports").to_pydict(),
            columns(self._table("rates")),
            columns(self._table("queues")),
            columns(self._table("collectives")),
            columns(self._table("skips")),
        )

    def write(self, dir: str | os.PathLike[str], format: str = "csv", *, wall_limit: float | None = None) -> Path:
        """Writes ``summary.json``, ``run.json`` and the tables into ``dir`` (created if needed):
        ``flows``, ``ports`` and, if recorded, ``queues``, ``rates``, ``pauses``, ``links``,
        ``trace``, ``iterations``, ``steps``, ``training_collectives``, ``jobs`` and ``skips``; and
        ``scenario.toml``, the scenario's text as written,
        when the Result knows it (not for a scenario given as a dict).

        ``format="csv"`` writes the ``.csv`` files byte for byte as ``aiccsim run`` does;
        ``"parquet"`` writes ``.parquet`` files instead, with the Arrow schemas of the tables
        (``aiccsim.load`` reads either back into the same tables); ``"both"`` writes both.
        ``wall_limit`` (seconds from the call) bounds the writing as ``--max-wall`` does: the
        tables that grow with the run's length (``queues``, ``links``, ``rates``, ``cc_state``,
        ``pauses``, ``trace``) are written last and stop at the limit, each keeping its rows so
        far; ``summary.json`` then says ``"partial": true`` and names them under
        ``results_cut``, and a ``RuntimeWarning`` says so. The other files are always whole
        (bounded by the run's flows and ports). It applies to the CSV files of a run's results
        (``format="csv"``, a Result of ``aiccsim.run``).
        Returns the folder."""
        from aiccsim import _write

        if format not in FORMATS:
            raise ValueError(f"format={format!r}: one of {', '.join(map(repr, FORMATS))}")
        path = Path(dir)
        if wall_limit is not None:
            if format != "csv" or self._native is None:
                raise ValueError("wall_limit: only for format='csv' of a Result of aiccsim.run")
            cut = self._native.write(path, float(wall_limit))
            if cut:
                warnings.warn(
                    f"wall_limit reached while writing: {', '.join(cut)} cut short"
                    " (summary.json lists them under results_cut)",
                    RuntimeWarning,
                    stacklevel=2,
                )
            _write.scenario_file(self, path)
            return path
        if format in ("csv", "both"):
            if self._write_csv is not None:
                self._write_csv(path)
            else:
                _write.csv_files(self, path)
        if format in ("parquet", "both"):
            _write.parquet_files(self, path)
        _write.scenario_file(self, path)
        return path

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<aiccsim.Result {s['algorithm']}: {s['flows_finished']}/{s['flows']} flows finished, {s['stop_reason']}>"
        )

    def _table(self, name: str) -> pa.Table | None:
        if name not in self._arrow:
            if name == SPANS:
                self._arrow[name] = _arrow.collectives(self.summary["collectives"])
            else:
                self._arrow[name] = self._source(name)
        return self._arrow[name]

    def _required(self, name: str) -> pa.Table:
        t = self._table(name)
        assert t is not None, f"every run has {name}"
        return t

    def _pandas(self, name: str) -> pd.DataFrame | None:
        t = self._table(name)
        return None if t is None else _arrow.to_pandas(t)


def from_native(native: NativeResult, scenario_text: str | None = None) -> Result:
    """The Result of a run: its tables come from the engine's memory, its CSV files from the
    engine's own writer; ``scenario_text`` is the scenario as written, if known."""

    def tables(name: str) -> pa.Table | None:
        columns = native.table(name)
        return None if columns is None else _arrow.table(columns)

    return Result(
        native.summary_json(),
        native.run_json(),
        tables,
        write_csv=native.write,
        native=native,
        scenario_text=scenario_text,
    )


class ArrowTables:
    """``result.arrow``: the tables as pyarrow Tables, the form the other two are made from."""

    def __init__(self, result: Result) -> None:
        self._result = result

    @property
    def flows(self) -> pa.Table:
        return self._result._required("flows")

    @property
    def ports(self) -> pa.Table:
        return self._result._required("ports")

    @property
    def queues(self) -> pa.Table | None:
        return self._result._table("queues")

    @property
    def rates(self) -> pa.Table | None:
        return self._result._table("rates")

    @property
    def cc_state(self) -> pa.Table | None:
        return self._result._table("cc_state")

    @property
    def pauses(self) -> pa.Table | None:
        return self._result._table("pauses")

    @property
    def links(self) -> pa.Table | None:
        return self._result._table("links")

    @property
    def trace(self) -> pa.Table | None:
        return self._result._table("trace")

    @property
    def collectives(self) -> pa.Table:
        return self._result._required(SPANS)

    @property
    def collective_stats(self) -> pa.Table | None:
        return self._result._table("collectives")

    @property
    def iterations(self) -> pa.Table | None:
        return self._result._table("iterations")

    @property
    def steps(self) -> pa.Table | None:
        return self._result._table("steps")

    @property
    def training_collectives(self) -> pa.Table | None:
        return self._result._table("training_collectives")

    @property
    def jobs(self) -> pa.Table | None:
        return self._result._table("jobs")

    @property
    def skips(self) -> pa.Table | None:
        return self._result._table("skips")


class PolarsTables:
    """``result.polars``: the tables as polars DataFrames (needs the ``polars`` package)."""

    def __init__(self, result: Result) -> None:
        self._result = result
        self._frames: dict[str, pl.DataFrame | None] = {}

    @property
    def flows(self) -> pl.DataFrame:
        return self._required("flows")

    @property
    def ports(self) -> pl.DataFrame:
        return self._required("ports")

    @property
    def queues(self) -> pl.DataFrame | None:
        return self._frame("queues")

    @property
    def rates(self) -> pl.DataFrame | None:
        return self._frame("rates")

    @property
    def cc_state(self) -> pl.DataFrame | None:
        return self._frame("cc_state")

    @property
    def pauses(self) -> pl.DataFrame | None:
        return self._frame("pauses")

    @property
    def links(self) -> pl.DataFrame | None:
        return self._frame("links")

    @property
    def trace(self) -> pl.DataFrame | None:
        return self._frame("trace")

    @property
    def collectives(self) -> pl.DataFrame:
        return self._required(SPANS)

    @property
    def collective_stats(self) -> pl.DataFrame | None:
        return self._frame("collectives")

    def _required(self, name: str) -> pl.DataFrame:
        frame = self._frame(name)
        assert frame is not None
        return frame

    @property
    def iterations(self) -> pl.DataFrame | None:
        return self._frame("iterations")

    @property
    def steps(self) -> pl.DataFrame | None:
        return self._frame("steps")

    @property
    def training_collectives(self) -> pl.DataFrame | None:
        return self._frame("training_collectives")

    @cached_property
    def jobs(self) -> pl.DataFrame | None:
        return self._frame("jobs")

    @cached_property
    def skips(self) -> pl.DataFrame | None:
        return self._frame("skips")

    def _frame(self, name: str) -> pl.DataFrame | None:
        if name not in self._frames:
            import polars as pl

            t = self._result._table(name)
            self._frames[name] = None if t is None else pl.from_arrow(t)  # type: ignore[assignment]
        return self._frames[name]
