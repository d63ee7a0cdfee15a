"""`aiccsim sweep --backend ray`: the same table and run folders as the local backend, resume,
and the errors (no ray package, no cluster, a failing point).

Ray takes seconds to start: one local Ray instance (2 CPUs) serves the module, and the sweeps
connect to it by address; one test starts its own, as a sweep without an address does."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import ray

import aiccsim
from aiccsim import _ray_backend
from aiccsim._sweep import MISSING_RAY

from conftest import BASE, REPO, without_performance

RAY_PINNED = next(
    line.split("==")[1] for line in (REPO / "requirements-dev.txt").read_text().splitlines() if line.startswith("ray==")
)


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def cli(aiccsim_bin: Path, *args: object, python: str | Path = sys.executable) -> subprocess.CompletedProcess[str]:
    """The `aiccsim` binary, with the Ray driver run by `python`."""
    env = {**os.environ, "AICCSIM_PYTHON": str(python)}
    return subprocess.run(
        [aiccsim_bin, *map(str, args)], capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL
    )


def run_files(out: Path) -> dict[str, bytes]:
    """Every file under OUT/runs, by path relative to it."""
    return {str(p.relative_to(out / "runs")): p.read_bytes() for p in sorted((out / "runs").rglob("*")) if p.is_file()}


# First, before the module's instance exists: this sweep starts a local instance of its own.
def test_ray_on_a_local_instance_gives_the_local_table(sweep_file: Path, tmp_path: Path) -> None:
    ray_df = aiccsim.sweep(sweep_file, jobs=2, out=tmp_path / "ray", backend="ray")
    local_df = aiccsim.sweep(sweep_file, jobs=2, out=tmp_path / "local")
    assert len(ray_df) == 8
    assert (ray_df["flows_finished"] == 4).all()
    assert (tmp_path / "ray" / "sweep.csv").read_bytes() == (tmp_path / "local" / "sweep.csv").read_bytes()
    pd.testing.assert_frame_equal(ray_df, local_df)


def test_ray_writes_the_run_folders_the_local_backend_writes(
    sweep_file: Path, tmp_path: Path, aiccsim_bin: Path, ray_address: str
) -> None:
    done = cli(
        aiccsim_bin, "sweep", sweep_file, "--backend", "ray", "--address", ray_address, "--out", tmp_path / "ray"
    )
    assert done.returncode == 0, done.stderr
    assert "8 points: 8 ran, 0 skipped" in done.stdout
    local = cli(aiccsim_bin, "sweep", sweep_file, "-j", "2", "--out", tmp_path / "local")
    assert local.returncode == 0, local.stderr
    assert (tmp_path / "ray" / "sweep.csv").read_bytes() == (tmp_path / "local" / "sweep.csv").read_bytes()
    ray_files, local_files = run_files(tmp_path / "ray"), run_files(tmp_path / "local")
    assert ray_files.keys() == local_files.keys()
    assert len(ray_files) == 8 * 6, "scenario.toml, four result files and done per point"
    for name, data in ray_files.items():
        if name.endswith("summary.json"):
            # The wall-clock figures of `performance` differ from run to run, whatever the backend.
            assert without_performance(json.loads(data)) == without_performance(json.loads(local_files[name])), name
        else:
            assert data == local_files[name], name


def test_a_second_ray_run_reruns_nothing_but_unfinished_points(
    sweep_file: Path, tmp_path: Path, aiccsim_bin: Path, ray_address: str
) -> None:
    out = tmp_path / "out"
    args = ("sweep", sweep_file, "--backend", "ray", "--address", ray_address, "-j", "2", "--out", out)
    assert cli(aiccsim_bin, *args).returncode == 0
    table = (out / "sweep.csv").read_bytes()
    dirs = sorted((out / "runs").iterdir())
    before = [(d / "summary.json").stat().st_mtime_ns for d in dirs]
    again = cli(aiccsim_bin, *args)
    assert again.returncode == 0, again.stderr
    assert "8 points: 0 ran, 8 skipped" in again.stdout
    (dirs[2] / "done").unlink()
    again = cli(aiccsim_bin, *args)
    assert "8 points: 1 ran, 7 skipped" in again.stdout, again.stdout + again.stderr
    after = [(d / "summary.json").stat().st_mtime_ns for d in dirs]
    assert [i for i, (b, a) in enumerate(zip(before, after, strict=True)) if b != a] == [2]
    assert (out / "sweep.csv").read_bytes() == table


def test_a_failing_point_stops_new_ones_and_is_named(tmp_path: Path, ray_address: str) -> None:
    # The command checks every point before it plans them, so a bad scenario only reaches the
    # driver when it is run by hand, as here; it stands for a point that fails on its worker.
    good = BASE
    bad = BASE.replace("receiver = 0", "receiver = 9")
    points = []
    for i, text in enumerate([good, bad, good]):
        d = tmp_path / f"p{i}"
        d.mkdir()
        (d / "scenario.toml").write_text(text)
        points.append({"dir": str(d), "label": f"point {i}"})
    plan = {"aiccsim_version": aiccsim.__version__, "address": ray_address, "jobs": 1, "points": points}
    done = subprocess.run(
        [sys.executable, "-m", "aiccsim._ray_backend"], input=json.dumps(plan), capture_output=True, text=True
    )
    assert done.returncode == 1, done.stderr
    reports = done.stdout.splitlines()
    assert reports[0] == "done 0"
    assert reports[1].startswith("error 1 point 1: <string>: workload.receiver: host 9 does not exist"), reports
    assert len(reports) == 2
    assert (tmp_path / "p0" / "done").is_file() and (tmp_path / "p0" / "flows.csv").is_file()
    assert sorted(p.name for p in (tmp_path / "p2").iterdir()) == ["scenario.toml"], "no new point started"


def test_a_worker_with_another_aiccsim_refuses_to_run() -> None:
    with pytest.raises(RuntimeError, match="install the same aiccsim on every node"):
        _ray_backend.run_point(BASE, "0.0.0")


def test_without_ray_the_error_says_what_to_install(
    sweep_file: Path, tmp_path: Path, aiccsim_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert f"pip install 'ray=={RAY_PINNED}'" in MISSING_RAY, "the pinned version"
    # A Python where `import ray` fails, as where it is not installed.
    no_ray = tmp_path / "python-without-ray"
    no_ray.write_text(
        f"#!/bin/sh\nexec {sys.executable} -c \"import runpy, sys; sys.modules['ray'] = None; "
        "runpy.run_module('aiccsim._ray_backend', run_name='__main__')\"\n"
    )
    no_ray.chmod(0o755)
    done = cli(aiccsim_bin, "sweep", sweep_file, "--backend", "ray", "--out", tmp_path / "out", python=no_ray)
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: {MISSING_RAY}"
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match="pip install 'ray=="):
        aiccsim.sweep(sweep_file, out=tmp_path / "out", backend="ray")


def test_an_address_where_no_cluster_listens_fails_at_once(sweep_file: Path, tmp_path: Path, aiccsim_bin: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free again once closed: nothing listens there
    done = cli(
        aiccsim_bin, "sweep", sweep_file, "--backend", "ray", "--address", f"127.0.0.1:{port}", "--out", tmp_path
    )
    assert done.returncode == 1
    assert f"cannot reach the Ray cluster at 127.0.0.1:{port}" in done.stderr
    assert "ray start --head" in done.stderr


FRACTION = """
class Fraction:
    def __init__(self, fraction):
        self.fraction = fraction

    def on_start(self, flow):
        flow.rate = flow.line_rate * self.fraction
"""


def test_ray_workers_import_an_algorithm_written_in_python(tmp_path: Path, aiccsim_bin: Path, ray_address: str) -> None:
    """The points' scenarios name the module's folder absolutely: the workers (other processes,
    in other folders) import the class from it, and the table is the local backend's."""
    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "ray_fraction_cc.py").write_text(FRACTION)
    base = BASE.replace(
        'algorithm = "dcqcn"', 'algorithm = "python"\nclass = "ray_fraction_cc:Fraction"\nfraction = 0.5'
    )
    (spec / "base.toml").write_text(base)
    (spec / "sweep.toml").write_text('base = "base.toml"\n[grid]\n"cc.fraction" = [0.1, 1.0]\n')
    done = cli(
        aiccsim_bin,
        "sweep",
        spec / "sweep.toml",
        "--backend",
        "ray",
        "--address",
        ray_address,
        "--out",
        tmp_path / "ray",
    )
    assert done.returncode == 0, done.stderr
    local = cli(aiccsim_bin, "sweep", spec / "sweep.toml", "-j", "2", "--out", tmp_path / "local")
    assert local.returncode == 0, local.stderr
    assert (tmp_path / "ray" / "sweep.csv").read_bytes() == (tmp_path / "local" / "sweep.csv").read_bytes()
    df = pd.read_csv(tmp_path / "ray" / "sweep.csv")
    assert df["fct_max_ns"].iloc[0] > df["fct_max_ns"].iloc[1]
