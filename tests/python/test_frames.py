"""The frames hold the values of the CSV files, and pandas and polars hold the same ones."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import polars as pl
import polars.testing
import pytest

import aiccsim

from conftest import SMALL, TABLES
from test_schema import POLARS, SCHEMA


@pytest.fixture(scope="module")
def run(small_or_stopped: aiccsim.Result) -> aiccsim.Result:
    return small_or_stopped


@pytest.mark.parametrize("name", TABLES)
def test_frames_equal_the_csv_files(run: aiccsim.Result, name: str, tmp_path: Path) -> None:
    run.write(tmp_path)
    csv = tmp_path / f"{name}.csv"
    columns = SCHEMA[name]
    from_csv = pd.read_csv(csv, dtype=dict(columns))
    pd.testing.assert_frame_equal(getattr(run, name), from_csv, check_exact=True)
    from_csv_pl = pl.read_csv(csv, schema={c: POLARS[t] for c, t in columns})
    polars.testing.assert_frame_equal(getattr(run.polars, name), from_csv_pl, check_exact=True)


@pytest.mark.parametrize("name", TABLES)
def test_pandas_and_polars_hold_the_same_values(run: aiccsim.Result, name: str) -> None:
    frame = getattr(run, name)
    polars.testing.assert_frame_equal(pl.from_pandas(frame), getattr(run.polars, name), check_exact=True)
    assert getattr(run.arrow, name).num_rows == len(frame)


def test_frames_are_converted_once() -> None:
    r = aiccsim.run(SMALL)
    assert r.flows is r.flows
    assert r.polars.trace is r.polars.trace
