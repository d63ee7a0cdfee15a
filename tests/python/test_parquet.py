"""Parquet files: the tables' Arrow schemas, the same bytes for the same results, and the
`aiccsim parquet` command for folders the binary wrote."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import aiccsim
from aiccsim._schema import TABLES as SCHEMAS

from conftest import SMALL, SMALL_UNSAMPLED, STOPPED, TABLES, python_m_aiccsim


@pytest.mark.parametrize("scenario", [SMALL, STOPPED])
def test_the_same_results_give_the_same_bytes(scenario: str, tmp_path: Path) -> None:
    """Twice from one Result, and from a run of the same scenario in another process: Parquet
    files carry no time, path or random id."""
    first = aiccsim.run(scenario)
    first.write(tmp_path / "a", format="parquet")
    first.write(tmp_path / "b", format="parquet")
    child = f"import aiccsim; aiccsim.run({scenario!r}).write({str(tmp_path / 'c')!r}, format='parquet')"
    subprocess.run([sys.executable, "-c", child], check=True, timeout=120)
    for name in TABLES:
        a = (tmp_path / "a" / f"{name}.parquet").read_bytes()
        assert a == (tmp_path / "b" / f"{name}.parquet").read_bytes(), name
        assert a == (tmp_path / "c" / f"{name}.parquet").read_bytes(), name


def test_the_files_hold_the_arrow_schemas(tmp_path: Path) -> None:
    aiccsim.run(SMALL).write(tmp_path, format="parquet")
    for name in TABLES:
        schema = pq.read_schema(tmp_path / f"{name}.parquet")
        assert schema.remove_metadata() == SCHEMAS[name], name


def test_parquet_and_both(tmp_path: Path) -> None:
    r = aiccsim.run(SMALL)
    r.write(tmp_path / "csv")
    assert r.write(tmp_path / "parquet", format="parquet") == tmp_path / "parquet"
    r.write(tmp_path / "both", format="both")
    parquet = sorted(p.name for p in (tmp_path / "parquet").iterdir())
    assert parquet == sorted(["run.json", "scenario.toml", "summary.json", *(f"{t}.parquet" for t in TABLES)])
    both = sorted(p.name for p in (tmp_path / "both").iterdir())
    assert both == sorted([*parquet, *(f"{t}.csv" for t in TABLES)])
    # The CSV and JSON files of "both" are the engine's, byte for byte.
    for name in [f"{t}.csv" for t in TABLES] + ["run.json", "scenario.toml", "summary.json"]:
        assert (tmp_path / "both" / name).read_bytes() == (tmp_path / "csv" / name).read_bytes(), name
    with pytest.raises(ValueError, match="format='xlsx': one of 'csv', 'parquet', 'both'"):
        r.write(tmp_path / "x", format="xlsx")


def test_no_parquet_file_for_a_table_not_recorded(tmp_path: Path) -> None:
    aiccsim.run(SMALL_UNSAMPLED).write(tmp_path, format="parquet")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["flows.parquet", "ports.parquet", "run.json", "scenario.toml", "summary.json"]


def aiccsim_parquet(how: str, aiccsim_bin: Path, *folders: Path) -> subprocess.CompletedProcess[str]:
    if how == "python -m":
        return python_m_aiccsim("parquet", *map(str, folders))
    env = {**os.environ, "AICCSIM_PYTHON": sys.executable}
    return subprocess.run(
        [str(aiccsim_bin), "parquet", *map(str, folders)], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.mark.parametrize("how", ["binary", "python -m"])
def test_the_parquet_command(how: str, small_file: Path, aiccsim_bin: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    subprocess.run([str(aiccsim_bin), "run", str(small_file), "--out", str(out), "-q"], check=True)
    csv_files = {p.name: p.read_bytes() for p in out.iterdir()}
    done = aiccsim_parquet(how, aiccsim_bin, out)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"wrote the Parquet files of {out}\n"
    # The CSV files stay as they were; the Parquet files hold the same tables.
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.suffix != ".parquet"} == csv_files
    from_csv, from_parquet = aiccsim.load(out, format="csv"), aiccsim.load(out, format="parquet")
    for name in TABLES:
        assert getattr(from_parquet.arrow, name).equals(getattr(from_csv.arrow, name)), name


@pytest.mark.parametrize("how", ["binary", "python -m"])
def test_the_parquet_command_on_an_experiment(
    how: str, experiment_dir: Path, aiccsim_bin: Path, tmp_path: Path
) -> None:
    out = tmp_path / "exp"
    shutil.copytree(experiment_dir, out)
    done = aiccsim_parquet(how, aiccsim_bin, out)
    assert done.returncode == 0, done.stderr
    runs = ["pfc_only", "dcqcn__defaults"]
    assert done.stdout.splitlines() == [f"wrote the Parquet files of {out / run}" for run in runs]
    for run in runs:
        from_csv, from_parquet = aiccsim.load(out / run, format="csv"), aiccsim.load(out / run, format="parquet")
        assert from_parquet.arrow.rates.equals(from_csv.arrow.rates), run


@pytest.mark.parametrize("how", ["binary", "python -m"])
def test_the_parquet_command_on_a_folder_without_results(how: str, aiccsim_bin: Path, tmp_path: Path) -> None:
    done = aiccsim_parquet(how, aiccsim_bin, tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        f"error: {tmp_path}: neither a results folder (no summary.json: `aiccsim run --out DIR` writes one) "
        "nor an experiment folder (no table.csv: `aiccsim reproduce ID` writes one)\n"
    )
