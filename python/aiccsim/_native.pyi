"""The Rust half of the package (crates/aiccsim-py); use the `aiccsim` package instead."""

import os
from typing import Any, final

__all__ = [
    "run",
    "cli_main",
    "import_ns3",
    "table_schemas",
    "workload_examples",
    "NativeResult",
    "ScenarioError",
    "AlgorithmError",
    "Flow",
    "Ack",
    "Probe",
    "Message",
    "Derived",
    "experiment_columns",
    "nic_events",
    "slug",
    "__version__",
]

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

@final
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

@final
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

@final
class Probe:
    sent_at: float
    remote_arrival: float
    remote_reply: float
    rtt: float
    network_rtt: float

@final
class Message:
    nbytes: int
    first_sent: float

# (name, type: "int64" | "float64" | "string", nullable, length, null count,
#  Arrow buffers: validity or None, [offsets,] values)
ColumnParts = tuple[str, str, bool, int, int, list[bytes | None]]

@final
class NativeResult:
    def summary_json(self) -> str: ...
    def run_json(self) -> str: ...
    def table(self, name: str) -> list[ColumnParts] | None: ...
    def write(self, dir: str | os.PathLike[str], wall_limit: float | None = None) -> list[str]: ...

@final
class Derived:
    """A run's derived figures (crates/aiccsim/src/metrics/derived.rs), in the units of
    ``aiccsim reproduce``'s table; None where the run cannot give one."""

    @staticmethod
    def of_run(native: NativeResult) -> Derived: ...
    @staticmethod
    def of_tables(
        scenario: dict[str, Any],
        simulated_ns: float,
        completion_ns: float | None,
        flows: dict[str, list[Any]],
        ports: dict[str, list[Any]],
        rates: dict[str, list[Any]] | None,
        queues: dict[str, list[Any]] | None,
        collectives: dict[str, list[Any]] | None,
        skips: dict[str, list[Any]] | None = None,
    ) -> Derived: ...
    def queue_series(self, switch: int, port: int) -> list[tuple[float, float]]: ...
    def mean_queue_kb(self, switch: int, port: int) -> float | None: ...
    def jain_steady(self) -> float | None: ...
    def recovery_us(self, flow: int) -> float | None: ...
    def min_segment_jain(self, segment: str, settle: str = "0us") -> float | None: ...
    def link_utilisation_pct(self, node: str, peer: str) -> float | None: ...
    def busbw_gbps(self) -> float | None: ...
    def busbw_bound_gbps(self) -> float | None: ...
    def mean_busbw_gbps(self) -> float | None: ...
    def warm_busbw_gbps(self) -> float | None: ...
    def payload_line_rate_gbps(self) -> float | None: ...
    def line_rate_pct(self) -> float | None: ...

# The experiment table's columns (table.csv of `aiccsim reproduce`): (name, decimals, or None
# for the run's name and counts, axis label with its unit).
def experiment_columns() -> list[tuple[str, int | None, str]]: ...
def slug(name: str) -> str: ...
def run(
    source: str | dict[str, Any],
    origin: str,
    seed: int | None = None,
    wall_limit: float | None = None,
    folder: str | None = None,
    fast_forward: float | None = None,
) -> NativeResult: ...
def cli_main(args: list[str], relaunch: list[str]) -> int: ...

# Each NIC event's handler and its arguments after ``flow``, each with its Python type ("int" or
# a class above), as the engine lists the events (crates/aiccsim/src/cc/events.rs; a test there
# holds this file and docs/cc/programmable.md to it): [(handler, [(argument, type)])].
def nic_events() -> list[tuple[str, list[tuple[str, str]]]]: ...

# Every result table's columns as the engine writes them: (table, [(column, kind "int" |
# "float" | "str", nullable, decimals in the CSV)]).
def table_schemas() -> list[tuple[str, list[tuple[str, str, bool, int]]]]: ...
def workload_examples() -> list[tuple[str, str]]: ...
def import_ns3(
    topology: str,
    topology_origin: str,
    flows: str,
    flows_origin: str,
    base: str,
    base_origin: str,
    config: str | None,
    config_origin: str,
) -> tuple[str, list[str]]: ...
