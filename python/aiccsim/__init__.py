"""aiccsim from Python: run a scenario and get its results as pandas or polars DataFrames.

>>> import aiccsim
>>> r = aiccsim.run("benches/s2_alltoall8.toml")
>>> r.flows["slowdown"].max()

See docs/python.md.
"""

from aiccsim._native import ScenarioError, __version__
from aiccsim._ns3 import import_ns3
from aiccsim._result import ArrowTables, PolarsTables, Result
from aiccsim._run import run
from aiccsim._sweep import sweep

__all__ = ["ArrowTables", "PolarsTables", "Result", "ScenarioError", "__version__", "import_ns3", "run", "sweep"]
