"""`aiccsim.sweep`: the `aiccsim sweep` command, its table as a pandas DataFrame."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

# The version requirements-dev.txt pins, which the tests run with.
RAY_VERSION = "2.60.0"
MISSING_RAY = f"the Ray backend needs the ray package: pip install 'ray=={RAY_VERSION}'"


def sweep(
    path: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    out: str | os.PathLike[str] | None = None,
    backend: str = "local",
    address: str | None = None,
) -> pd.DataFrame:
    """Runs the sweep file ``path`` as ``aiccsim sweep PATH [-j JOBS] [--out OUT] [--backend
    BACKEND] [--address ADDRESS]`` does and returns ``OUT/sweep.csv``: one row per point, in
    the sweep's order (docs/sweeps.md).

    ``jobs`` is the number of points run at once (default: every core, or the Ray cluster's);
    ``out`` the output folder (default ``out/<sweep file name>``, relative to the working
    directory). Points whose folder under ``OUT/runs/`` is already complete are not run again.

    ``backend`` is ``"local"`` (child processes on this machine) or ``"ray"`` (tasks on a Ray
    cluster: the one at ``address``, ``host:port`` or ``"auto"``, else a local Ray instance
    started for the sweep). The table is the same either way. Without the ``ray`` package,
    ``backend="ray"`` raises ``ImportError`` before anything runs.

    The command runs in a child process (``python -m aiccsim``), so that Ctrl-C stops it and
    raises ``KeyboardInterrupt`` here as usual (finished points are kept) and this interpreter's
    own signal handling is left alone. Its output goes to this process's stdout; its error, if
    any, becomes the exception's message: ``ValueError`` for a bad sweep file (exit code 2),
    ``RuntimeError`` otherwise.
    """
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', not {backend!r}")
    if backend == "ray" and importlib.util.find_spec("ray") is None:
        raise ImportError(MISSING_RAY)
    out_dir = Path(out) if out is not None else Path("out") / Path(path).stem
    args = [sys.executable, "-m", "aiccsim", "sweep", os.fspath(path), "--out", os.fspath(out_dir)]
    args += ["--backend", backend]
    if jobs is not None:
        args += ["--jobs", str(jobs)]
    if address is not None:
        args += ["--address", address]
    done = subprocess.run(args, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
        message = message.removeprefix("error: ") or f"aiccsim sweep exited with code {done.returncode}"
        raise (ValueError if done.returncode == 2 else RuntimeError)(message)
    # The hash column is hex that can happen to be all digits: keep it text.
    return pd.read_csv(out_dir / "sweep.csv", dtype={"hash": str})
