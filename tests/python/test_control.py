"""Stopping a run from outside: a wall-clock limit, Ctrl-C; and the GIL stays free meanwhile."""

from __future__ import annotations

import datetime
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import aiccsim

from conftest import LONG, SMALL


def test_wall_limit_stops_with_partial_results() -> None:
    started = time.monotonic()
    r = aiccsim.run(LONG, wall_limit=datetime.timedelta(milliseconds=300))
    assert time.monotonic() - started < 10
    assert (r.summary["stop_reason"], r.summary["partial"]) == ("wall_limit", True)
    assert r.flows["finish_ns"].isna().all()


@pytest.mark.parametrize("limit", [0, -1.0, float("nan")])
def test_wall_limit_must_be_positive(limit: float) -> None:
    with pytest.raises(ValueError, match="wall_limit"):
        aiccsim.run(SMALL, wall_limit=limit)


def test_the_gil_is_free_while_the_engine_runs() -> None:
    worker = threading.Thread(target=aiccsim.run, args=(LONG,), kwargs={"wall_limit": 1.0})
    worker.start()
    # A run that held the GIL would keep this loop from turning until it ended.
    turns = 0
    while worker.is_alive():
        turns += 1
        time.sleep(0.001)
    worker.join()
    assert turns > 100


CTRL_C = f"""
import sys, aiccsim
print("running", flush=True)
try:
    aiccsim.run({LONG!r}, wall_limit=60)
except KeyboardInterrupt:
    print("interrupted", flush=True)
print(aiccsim.run({SMALL!r}).summary["stop_reason"], flush=True)
"""


def test_ctrl_c_interrupts_the_run() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(CTRL_C)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "running\n"
    time.sleep(0.5)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    # Well before the 60 s wall limit: the signal stopped the engine.
    assert time.monotonic() - sent < 10
    assert (child.returncode, out) == (0, "interrupted\ncompleted\n"), err


# A 262 144-host star: building it (topology, routes, ports) takes about 0.2 s, long enough
# for a 10 ms budget to run out in the build.
BIG_STAR = """
[topology]
kind = "star"
hosts = 262144
link = { bandwidth = "100Gbps", delay = "1us" }
[switch]
pfc = { enabled = false }
[workload]
kind = "flows"
flows = [ { src = 1, dst = 0, size = "1000B" } ]
"""


def test_wall_limit_holds_while_the_fabric_is_built() -> None:
    # The budget used to start with the simulation: the build ran to its end whatever it was.
    with pytest.raises(TimeoutError, match=r"wall_limit reached while [a-z ]+ \(before the simulation started\)"):
        aiccsim.run(BIG_STAR, wall_limit=0.01)
