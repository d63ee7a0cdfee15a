"""`Result.write` and `python -m aiccsim run` write what the `aiccsim` binary writes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import aiccsim

from conftest import python_m_aiccsim

FILES = [
    "flows.csv",
    "ports.csv",
    "queues.csv",
    "rates.csv",
    "pauses.csv",
    "links.csv",
    "trace.csv",
    "run.json",
    "scenario.toml",
    "summary.json",
]


def assert_same_files(a: Path, b: Path) -> None:
    assert sorted(p.name for p in a.iterdir()) == sorted(FILES)
    assert sorted(p.name for p in b.iterdir()) == sorted(FILES)
    for name in FILES:
        x, y = (a / name).read_bytes(), (b / name).read_bytes()
        if name == "summary.json":
            # The wall-clock `performance` block, last in the file, is the one part that differs.
            x, y = x.split(b'"performance"')[0], y.split(b'"performance"')[0]
        assert x == y, name


def test_write_matches_the_binary(small_file: Path, aiccsim_bin: Path, tmp_path: Path) -> None:
    subprocess.run([str(aiccsim_bin), "run", str(small_file), "--out", str(tmp_path / "bin"), "-q"], check=True)
    written = aiccsim.run(small_file).write(tmp_path / "py")
    assert written == tmp_path / "py"
    assert_same_files(tmp_path / "bin", tmp_path / "py")


def test_python_m_aiccsim_run_matches_the_binary(small_file: Path, aiccsim_bin: Path, tmp_path: Path) -> None:
    subprocess.run([str(aiccsim_bin), "run", str(small_file), "--out", str(tmp_path / "bin"), "-q"], check=True)
    done = python_m_aiccsim("run", str(small_file), "--out", str(tmp_path / "py"))
    assert done.returncode == 0, done.stderr
    assert "results written to" in done.stdout
    assert_same_files(tmp_path / "bin", tmp_path / "py")


def test_write_with_a_wall_limit_cuts_what_grows_with_the_run(small_file: Path, tmp_path: Path) -> None:
    result = aiccsim.run(small_file)
    # A limit already spent: each table that grows with the run keeps its header only.
    with pytest.warns(RuntimeWarning, match="wall_limit reached while writing"):
        result.write(tmp_path / "cut", wall_limit=0)
    summary = json.loads((tmp_path / "cut" / "summary.json").read_text())
    assert summary["partial"] is True
    assert {"queues.csv", "rates.csv", "trace.csv"} <= set(summary["results_cut"])
    assert (tmp_path / "cut" / "rates.csv").read_text().count("\n") == 1
    # The tables bounded by the scenario are whole: the same as without a limit.
    result.write(tmp_path / "whole")
    for name in ("flows.csv", "ports.csv", "run.json", "scenario.toml"):
        assert (tmp_path / "cut" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
    assert "results_cut" not in json.loads((tmp_path / "whole" / "summary.json").read_text())
    with pytest.raises(ValueError, match="wall_limit"):
        result.write(tmp_path / "pq", format="parquet", wall_limit=1)
