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

class AlgorithmError(RuntimeError):
    """An algorithm written in Python raised an exception during a run (``__cause__``)."""

    flow: int
    """The flow whose handler raised (a connection's first flow, for a shared connection)."""
    time_ns: float
    """Simulated time of the event it was handling, nanoseconds."""

class Flow:
    """A flow's context in an algorithm written in Python (docs/cc/programmable.md). Times in
    seconds, rates in bits per second, sizes in bytes."""

    @property
    def id(self) -> int: ...
    @property
    def now(self) -> float: ...
    @property
    def now_ps(self) -> int: ...
    @property
    def line_rate(self) -> float: ...
    @property
    def receiver_line_rate(self) -> float: ...
    @property
    def base_rtt(self) -> float: ...
    @property
    def one_way_baseline(self) -> float: ...
    @property
    def hops(self) -> int: ...
    @property
    def mtu(self) -> int: ...
    @property
    def packet_bytes(self) -> int: ...
    @property
    def collective(self) -> tuple[str, int] | None: ...
    @property
    def incoming_at_start(self) -> int: ...
    rate: float
    window: int | None
    def set_timer(self, slot: int, at: float) -> None: ...
    def cancel_timer(self, slot: int) -> None: ...

class Ack:
    """One ACK's feedback; the same object, rewritten, for every ACK of a flow."""

    @property
    def ack_seq(self) -> int: ...
    @property
    def newly_acked(self) -> int: ...
    @property
    def ecn_echo(self) -> bool: ...
    @property
    def rtt(self) -> float: ...
    @property
    def in_flight(self) -> int: ...
    @property
    def snd_nxt(self) -> int: ...
    @property
    def pint(self) -> int: ...
    @property
    def feedback(self) -> tuple[int, int]: ...
    @property
    def int(self) -> list[tuple[float, int, int, float]]: ...

class Probe:
    sent_at: float
    remote_arrival: float
    remote_reply: float
    rtt: float
    network_rtt: float

class Message:
    nbytes: int
    first_sent: float

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
    folder: str | None = None,
) -> NativeResult: ...
def cli_main(args: list[str], relaunch: list[str]) -> int: ...

# Each NIC event's handler and its arguments after ``flow``, each with its Python type ("int" or
# a class above), as the engine lists the events (crates/aiccsim/src/cc/events.rs; a test there
# holds this file and docs/cc/programmable.md to it): [(handler, [(argument, type)])].
def nic_events() -> list[tuple[str, list[tuple[str, str]]]]: ...

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
