"""`Result`: one run's summary, scenario and tables, converted on first use and kept."""

from __future__ import annotations

import json
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiccsim import _arrow

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    from aiccsim._native import NativeResult


class Result:
    """The results of one run.

    - ``summary``: ``summary.json`` as a dict (``stop_reason``, ``fct_ns``, ...).
    - ``scenario``: the scenario with every default filled in, as in ``run.json``.
    - ``flows``, ``ports``, ``queues``, ``rates``, ``pauses``, ``trace``: pandas DataFrames with
      the columns of the CSV files of the same names. ``queues``, ``rates`` and ``pauses`` are None without
      ``output.sample_interval``, ``trace`` without ``[output.trace]``: no file is written then.
    - ``iterations``: ``iterations.csv`` as a pandas DataFrame; None unless the workload is ``training``.
    - ``polars``: the same tables as polars DataFrames (``result.polars.flows``).
    - ``arrow``: the same tables as pyarrow Tables (``result.arrow.flows``).
    - ``write(dir)``: the files ``aiccsim run --out DIR`` writes.

    Each table is converted once, on first use; later reads return the same object.
    """

    def __init__(self, native: NativeResult) -> None:
        self._native = native
        self._arrow: dict[str, pa.Table | None] = {}
        self.arrow = ArrowTables(self)
        self.polars = PolarsTables(self)

    @cached_property
    def summary(self) -> dict[str, Any]:
        return json.loads(self._native.summary_json())  # type: ignore[no-any-return]

    @cached_property
    def scenario(self) -> dict[str, Any]:
        return json.loads(self._native.scenario_json())  # type: ignore[no-any-return]

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
    def pauses(self) -> pd.DataFrame | None:
        return self._pandas("pauses")

    @cached_property
    def trace(self) -> pd.DataFrame | None:
        return self._pandas("trace")

    @cached_property
    def iterations(self) -> pd.DataFrame | None:
        return self._pandas("iterations")

    def write(self, dir: str | os.PathLike[str]) -> Path:
        """Writes ``flows.csv``, ``ports.csv``, ``summary.json``, ``run.json`` and, if recorded,
        ``queues.csv``, ``rates.csv``, ``pauses.csv``, ``trace.csv`` and ``iterations.csv`` into ``dir``
        (created if needed), byte for byte as ``aiccsim run`` does. Returns the folder."""
        self._native.write(dir)
        return Path(dir)

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<aiccsim.Result {s['algorithm']}: {s['flows_finished']}/{s['flows']} flows finished, {s['stop_reason']}>"
        )

    def _table(self, name: str) -> pa.Table | None:
        if name not in self._arrow:
            columns = self._native.table(name)
            self._arrow[name] = None if columns is None else _arrow.table(columns)
        return self._arrow[name]

    def _required(self, name: str) -> pa.Table:
        t = self._table(name)
        assert t is not None, f"every run has {name}"
        return t

    def _pandas(self, name: str) -> pd.DataFrame | None:
        t = self._table(name)
        return None if t is None else _arrow.to_pandas(t)


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
    def pauses(self) -> pa.Table | None:
        return self._result._table("pauses")

    @property
    def trace(self) -> pa.Table | None:
        return self._result._table("trace")

    @property
    def iterations(self) -> pa.Table | None:
        return self._result._table("iterations")


class PolarsTables:
    """``result.polars``: the tables as polars DataFrames (needs the ``polars`` package)."""

    def __init__(self, result: Result) -> None:
        self._result = result
        self._frames: dict[str, pl.DataFrame | None] = {}

    @property
    def flows(self) -> pl.DataFrame:
        frame = self._frame("flows")
        assert frame is not None
        return frame

    @property
    def ports(self) -> pl.DataFrame:
        frame = self._frame("ports")
        assert frame is not None
        return frame

    @property
    def queues(self) -> pl.DataFrame | None:
        return self._frame("queues")

    @property
    def rates(self) -> pl.DataFrame | None:
        return self._frame("rates")

    @property
    def pauses(self) -> pl.DataFrame | None:
        return self._frame("pauses")

    @property
    def trace(self) -> pl.DataFrame | None:
        return self._frame("trace")

    @property
    def iterations(self) -> pl.DataFrame | None:
        return self._frame("iterations")

    def _frame(self, name: str) -> pl.DataFrame | None:
        if name not in self._frames:
            import polars as pl

            t = self._result._table(name)
            self._frames[name] = None if t is None else pl.from_arrow(t)  # type: ignore[assignment]
        return self._frames[name]
