"""The Ray driver of ``aiccsim sweep --backend ray``, which starts it as
``python -m aiccsim._ray_backend``: one Ray task per point, its result files written into the
point's folder here, byte for byte as the local backend's ``aiccsim run`` writes them.

The command (crates/aiccsim-cli/src/sweep/ray.rs) has already resolved and checked every point,
skipped the finished ones and written each remaining folder's ``scenario.toml``; it writes the
table once this driver is done. The plan comes on stdin as JSON::

    {"aiccsim_version": "0.1.0", "address": null, "jobs": null,
     "points": [{"dir": "out/x/runs/<hash>", "label": "sweep point <hash> (seed 1, ...)"}]}

Reports go to stdout, one line each: ``done INDEX`` once a point's folder is complete, and
``error CODE MESSAGE`` before exiting with CODE. Anything else that would reach stdout (Ray's
own prints) is sent to stderr, so that it cannot be taken for a report.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import tempfile
from collections import deque
from pathlib import Path
from typing import IO, Any

from aiccsim._sweep import MISSING_RAY


class Failure(Exception):
    """The one-line error the driver ends with, and its exit code (2: bad input, 1: other)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def main() -> int:
    reports = _reports_stream()
    plan = json.load(sys.stdin)
    try:
        _run(plan, reports)
    except Failure as f:
        print(f"error {f.code} {f}", file=reports, flush=True)
        return f.code
    except KeyboardInterrupt:
        # The command got Ctrl-C too and reports the points kept.
        return 130
    return 0


def run_point(toml_text: str, aiccsim_version: str) -> dict[str, bytes]:
    """The Ray task: runs one point in the worker and returns its result files by name. Workers
    on other machines share no folder with the driver, so the files travel as bytes."""
    import aiccsim

    if aiccsim.__version__ != aiccsim_version:
        raise RuntimeError(
            f"this Ray worker has aiccsim {aiccsim.__version__}, the sweep was planned with "
            f"{aiccsim_version}: install the same aiccsim on every node"
        )
    result = aiccsim.run(toml_text)
    with tempfile.TemporaryDirectory(prefix="aiccsim-") as tmp:
        result.write(tmp)
        return {f.name: f.read_bytes() for f in sorted(Path(tmp).iterdir())}


def _run(plan: dict[str, Any], reports: IO[str]) -> None:
    try:
        import ray
    except ImportError:
        raise Failure(2, MISSING_RAY) from None
    _connect(ray, plan["address"])
    task = ray.remote(num_cpus=1)(run_point)
    points = plan["points"]
    # As the local backend's default of every core: as many as the cluster has at the start.
    # (ray leaves cluster_resources unannotated.)
    cap = plan["jobs"] or max(1, int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[no-untyped-call]
    waiting = deque(range(len(points)))
    in_flight: dict[Any, int] = {}
    failure: Failure | None = None
    try:
        while in_flight or (waiting and failure is None):
            while waiting and failure is None and len(in_flight) < cap:
                i = waiting.popleft()
                text = (Path(points[i]["dir"]) / "scenario.toml").read_text(encoding="utf-8")
                in_flight[task.remote(text, plan["aiccsim_version"])] = i
            [ready], _ = ray.wait(list(in_flight), num_returns=1)
            i = in_flight.pop(ready)
            try:
                files = ray.get(ready)
            except Exception as e:
                # As the local backend does: no new point starts, those running finish.
                failure = failure or Failure(1, f"{points[i]['label']}: {_reason(e)}")
                continue
            _write(Path(points[i]["dir"]), files)
            print(f"done {i}", file=reports, flush=True)
    except KeyboardInterrupt:
        for ref in in_flight:
            ray.cancel(ref, force=True)
        raise
    if failure is not None:
        raise failure


def _connect(ray: Any, address: str | None) -> None:
    """Starts a local Ray instance (no address: ``ray.init()``, which follows ``RAY_ADDRESS``
    when it is set) or connects to a running cluster."""
    # Ray's start-up messages stay out of the way of the progress bar; warnings still show.
    quiet: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    try:
        if address is None:
            ray.init(include_dashboard=False, **quiet)
        else:
            _check_reachable(address)
            ray.init(address=address, **quiet)
    except Failure:
        raise
    except Exception as e:
        where = "start a local Ray instance" if address is None else f"connect to the Ray cluster at {address}"
        raise Failure(1, f"cannot {where}: {_one_line(str(e))}") from None


def _check_reachable(address: str) -> None:
    """Ray keeps retrying an address where nothing answers, for minutes: a ``host:port`` is
    tried here first, with a short timeout, so that a wrong one fails at once."""
    host, sep, port = address.rpartition(":")
    if not sep or "://" in address or not port.isdigit():
        return  # "auto", ray://..., or a form Ray itself will judge
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as e:
        raise Failure(
            1,
            f"cannot reach the Ray cluster at {address}: {e.strerror or e}; start one there with "
            "`ray start --head` (its address is HOST:6379 by default), or leave --address out for a local one",
        ) from None


def _write(dir: Path, files: dict[str, bytes]) -> None:
    """A point's result files, then its ``done`` marker, atomically, as the local backend
    writes them."""
    for name, data in files.items():
        (dir / name).write_bytes(data)
    tmp = dir / "done.tmp"
    tmp.write_bytes(b"")
    os.replace(tmp, dir / "done")


def _reason(e: Exception) -> str:
    """What went wrong in a task: the worker's own exception where Ray wraps one."""
    cause = getattr(e, "cause", None)
    return _one_line(str(cause if isinstance(cause, BaseException) else e))


def _one_line(text: str) -> str:
    return "; ".join(line.strip() for line in text.strip().splitlines() if line.strip())


def _reports_stream() -> IO[str]:
    """The original stdout, for reports only; file descriptor 1 then points at stderr, so that
    prints from Ray or its C++ core cannot be mistaken for reports."""
    reports = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return reports


if __name__ == "__main__":
    sys.exit(main())
