"""`aiccsim.sweep`: the table `aiccsim sweep` writes, as a DataFrame."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest

import aiccsim

from conftest import SWEEP


def test_sweep_returns_the_table_the_command_writes(sweep_file: Path, tmp_path: Path, aiccsim_bin: Path) -> None:
    df = aiccsim.sweep(sweep_file, jobs=2, out=tmp_path / "py")
    assert len(df) == 8
    assert list(df.columns[:4]) == ["cc.algorithm", "switch.buffer", "seed", "hash"]
    assert list(df["cc.algorithm"]) == ["dcqcn"] * 4 + ["hpcc"] * 4
    assert (df["flows_finished"] == 4).all()
    cli_out = tmp_path / "cli"
    done = subprocess.run(
        [aiccsim_bin, "sweep", sweep_file, "-j", "1", "--out", cli_out], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "py" / "sweep.csv").read_bytes() == (cli_out / "sweep.csv").read_bytes()
    pd.testing.assert_frame_equal(df, pd.read_csv(cli_out / "sweep.csv", dtype={"hash": str}))


def test_a_bad_sweep_file_raises_value_error_naming_the_key(sweep_file: Path, tmp_path: Path) -> None:
    sweep_file.write_text(SWEEP.replace("switch.buffer", "switch.bufer"))
    with pytest.raises(ValueError, match="switch.bufer"):
        aiccsim.sweep(sweep_file, out=tmp_path / "out")
