"""`aiccsim.sweep`: the `aiccsim sweep` command, its table as a pandas DataFrame."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd


def sweep(
    path: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    out: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Runs the sweep file ``path`` as ``aiccsim sweep PATH [-j JOBS] [--out OUT]`` does and
    returns ``OUT/sweep.csv``: one row per point, in the sweep's order (docs/sweeps.md).

    ``jobs`` is the number of points run at once (default: every core); ``out`` the output
    folder (default ``out/<sweep file name>``, relative to the working directory). Points whose
    folder under ``OUT/runs/`` is already complete are not run again.

    The command runs in a child process (``python -m aiccsim``), so that Ctrl-C stops it and
    raises ``KeyboardInterrupt`` here as usual (finished points are kept) and this interpreter's
    own signal handling is left alone. Its output goes to this process's stdout; its error, if
    any, becomes the exception's message: ``ValueError`` for a bad sweep file (exit code 2),
    ``RuntimeError`` otherwise.
    """
    out_dir = Path(out) if out is not None else Path("out") / Path(path).stem
    args = [sys.executable, "-m", "aiccsim", "sweep", os.fspath(path), "--out", os.fspath(out_dir)]
    if jobs is not None:
        args += ["--jobs", str(jobs)]
    done = subprocess.run(args, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
        message = message.removeprefix("error: ") or f"aiccsim sweep exited with code {done.returncode}"
        raise (ValueError if done.returncode == 2 else RuntimeError)(message)
    # The hash column is hex that can happen to be all digits: keep it text.
    return pd.read_csv(out_dir / "sweep.csv", dtype={"hash": str})
