"""The Rust half of the package (crates/aiccsim-py); use the `aiccsim` package instead."""

import os
from typing import Any

__version__: str

class ScenarioError(ValueError):
    """A scenario that cannot be run. ``str(e)`` is the one-line message of ``aiccsim run``."""

    file: str
    """The scenario's path, or ``<string>`` / ``<dict>``."""
    key: str
    """The dotted key at fault (``workload.flows[0].dst``); empty when the whole scenario is."""
    message: str
    """What is wrong and what to write instead."""

# (name, type: "int64" | "float64" | "string", nullable, length, null count,
#  Arrow buffers: validity or None, [offsets,] values)
ColumnParts = tuple[str, str, bool, int, int, list[bytes | None]]

class NativeResult:
    def summary_json(self) -> str: ...
    def run_json(self) -> str: ...
    def table(self, name: str) -> list[ColumnParts] | None: ...
    def write(self, dir: str | os.PathLike[str]) -> None: ...

def run(
    source: str | dict[str, Any],
    origin: str,
    seed: int | None = None,
    wall_limit: float | None = None,
) -> NativeResult: ...
def cli_main(args: list[str], relaunch: list[str]) -> int: ...

# Every result table's columns as the engine writes them: (table, [(column, kind "int" |
# "float" | "str", nullable, decimals in the CSV)]).
def table_schemas() -> list[tuple[str, list[tuple[str, str, bool, int]]]]: ...
def import_ns3(
    topology: str,
    topology_origin: str,
    flows: str,
    flows_origin: str,
    base: str,
    base_origin: str,
) -> tuple[str, list[str]]: ...
