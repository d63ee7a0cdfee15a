"""aiccsim from Python: run a scenario and get its results as pandas or polars DataFrames.

>>> import aiccsim
>>> r = aiccsim.run("benches/s2_alltoall8.toml")
>>> r.flows["slowdown"].max()

A congestion-control algorithm can be a Python class (``[cc] algorithm = "python"``, ``class =
"module:Class"``): see docs/cc/programmable.md.

``aiccsim.scenario`` builds scenarios in Python (``star(...) | cc("dcqcn") | incast(...)``).
``aiccsim.load(DIR)`` reads a results folder back; ``aiccsim.plot`` draws results and
``aiccsim.report(DIR)`` writes an HTML page of them (both need matplotlib). See docs/python.md.
"""

from __future__ import annotations

from typing import Any

from aiccsim import scenario
from aiccsim._load import load
from aiccsim._native import Ack, AlgorithmError, Flow, ScenarioError, __version__
from aiccsim._ns3 import import_ns3
from aiccsim._result import ArrowTables, PolarsTables, Result
from aiccsim._run import ScenarioWarning, run
from aiccsim._sweep import sweep

__all__ = [
    "Ack",
    "AlgorithmError",
    "ArrowTables",
    "Flow",
    "PolarsTables",
    "Result",
    "ScenarioError",
    "ScenarioWarning",
    "__version__",
    "import_ns3",
    "load",
    "plot",
    "report",
    "run",
    "scenario",
    "sweep",
]


def __getattr__(name: str) -> Any:
    # matplotlib is imported only when a plot or a report is asked for: `import aiccsim` stays
    # quick, and works without it.
    if name == "plot":
        import aiccsim.plot

        return aiccsim.plot
    if name == "report":
        from aiccsim._report import report

        return report
    raise AttributeError(f"module 'aiccsim' has no attribute {name!r}")
