"""The peer comparison's shared half: the scenarios, the peer's fabric constants, and readers
for the peer's connection matrices and its standard output.

The peer is UEC's htsim (github.com/ultraethernet/uet-htsim, `htsim_uec`); README.md in this
folder says how it models the network and where that differs from aiccsim. `rerun_peer.sh`
calls `python3 peer.py collect RUN_DIR` to turn the peer's output into `peer_results/`;
`make_twins.py` and `compare.py` import the rest. Standard library only.
"""

from __future__ import annotations

import csv
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
INPUTS = HERE / "inputs"
PEER_RESULTS = HERE / "peer_results"
TWINS = HERE / "twins"

# The peer's command line, shared by every run (rerun_peer.sh passes exactly these).
LINK_GBPS = 400  # -linkspeed 400000 (Mbps); the peer's default is 100 Gbps (main.h HOST_NIC)
MTU_WIRE = 4160  # -mtu: the peer's MTU is the whole packet; its header is 64 B (uec.cpp _hdr_size)
HEADER = 64  # UecSrc::_hdr_size, so the payload per packet is 4096 B
ACK_BYTES = 64  # UecBasePacket::ACKSIZE: ACKs, NACKs and trimmed headers (-trimsize default)
HOP_DELAY_PS = 1_000_000  # -hop_latency default, 1 us per link; switch latency 0
FIRST_SEED = 13  # the peer's default seed; a run of N seeds takes 13 to 12 + N
DEFAULT_SEEDS = 5


def seeds(n: int = DEFAULT_SEEDS) -> range:
    return range(FIRST_SEED, FIRST_SEED + n)


@dataclass(frozen=True)
class Scenario:
    name: str
    matrix: str  # file in inputs/
    workload: str  # how the twin writes the flows: "incast", "all_to_all", "flows"
    what: str


SCENARIOS = (
    Scenario("incast8", "incast8_128n_2MB.cm", "incast", "8-to-1 incast of 2 MB, k = 8 fat tree (128 hosts)"),
    Scenario("incast32", "incast32_128n_2MB.cm", "incast", "32-to-1 incast of 2 MB, k = 8 fat tree"),
    Scenario("permutation128", "perm_128n_2MB.cm", "flows", "permutation of 2 MB among 128 hosts, k = 8 fat tree"),
    Scenario("alltoall16", "a2a_16n_2MB.cm", "all_to_all", "direct all-to-all of 2 MB, 16 hosts, k = 4 fat tree"),
    Scenario(
        "alltoall32", "a2a_32of128n_2MB.cm", "all_to_all", "direct all-to-all of 2 MB, hosts 0-31 of a k = 8 fat tree"
    ),
    Scenario(
        "alltoall16_serial",
        "a2aserial_16n_2MB.cm",
        "flows",
        "serial all-to-all of 2 MB (the peer's gen_serial_alltoall.py), 16 hosts, k = 4 fat tree",
    ),
)


def scenario(name: str) -> Scenario:
    for s in SCENARIOS:
        if s.name == name:
            return s
    raise SystemExit(f"unknown scenario {name!r}; known: {', '.join(s.name for s in SCENARIOS)}")


@dataclass
class Flow:
    id: int  # the matrix's id, which the peer prints as flowId
    src: int
    dst: int
    size: int
    start_ps: int
    # The peer's `trigger T`: this flow starts when the flow whose `send_done_trigger` is T has
    # finished (its sender holds the ACK of its last byte).
    trigger: int | None = None
    send_done_trigger: int | None = None


@dataclass
class Matrix:
    nodes: int
    flows: list[Flow]

    @property
    def k(self) -> int:
        """The fat tree's k: the peer sizes its default 3-tier fat tree to N = k^3 / 4 hosts."""
        k = round((4 * self.nodes) ** (1 / 3))
        if k**3 // 4 != self.nodes:
            raise ValueError(f"{self.nodes} hosts is no k^3/4 fat tree")
        return k

    def waits_for(self) -> dict[int, int]:
        """Flow index -> index of the flow it waits for (the peer's trigger chains)."""
        by_trigger = {f.send_done_trigger: i for i, f in enumerate(self.flows) if f.send_done_trigger}
        return {i: by_trigger[f.trigger] for i, f in enumerate(self.flows) if f.trigger is not None}


def read_matrix(path: Path) -> Matrix:
    """The subset of the peer's connection-matrix format (connection_matrix.cpp) our inputs use."""
    nodes = 0
    flows: list[Flow] = []
    for line in path.read_text().splitlines():
        tok = line.split()
        if not tok or tok[0].startswith("#"):
            continue
        if tok[0] == "Nodes":
            nodes = int(tok[1])
        elif "->" in tok[0]:
            src, dst = (int(x) for x in tok[0].split("->"))
            fields = dict(zip(tok[1::2], tok[2::2]))
            flows.append(
                Flow(
                    id=int(fields["id"]),
                    src=src,
                    dst=dst,
                    size=int(fields["size"]),
                    # The peer reads `start` as picoseconds, then passes it to timeFromUs
                    # (main_uec.cpp, connectPort): only 0 means the same to both readings.
                    start_ps=int(float(fields.get("start", "0"))),
                    trigger=int(fields["trigger"]) if "trigger" in fields else None,
                    send_done_trigger=int(fields["send_done_trigger"]) if "send_done_trigger" in fields else None,
                )
            )
    if any(f.start_ps != 0 for f in flows):
        raise ValueError(f"{path}: a start other than 0 means different times to the peer and to us")
    return Matrix(nodes, flows)


def hops(k: int, a: int, b: int) -> int:
    """Links between hosts a and b of a k-ary fat tree (host h is on edge switch h // (k/2))."""
    half = k // 2
    if a // half == b // half:
        return 2
    if a // (half * half) == b // (half * half):
        return 4
    return 6


def ack_return_ps(k: int, src: int, dst: int) -> int:
    """Time the last ACK takes back to the sender on an idle path: per link, a 64-byte ACK's
    serialisation plus the link's delay. The peer's FCT ends when the sender has that ACK;
    aiccsim's when the receiver has the last byte. Subtracting this puts the peer's on
    aiccsim's footing (the ACK goes at once: the last packet asks for it, uec.cpp AR flag)."""
    serialise_ps = ACK_BYTES * 8 * 1000 // LINK_GBPS
    return hops(k, src, dst) * (serialise_ps + HOP_DELAY_PS)


def nearest_rank(values: list[float], p: float) -> float:
    """The p-th percentile by nearest rank, as aiccsim's summary.json computes it."""
    s = sorted(values)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


def fct_stats(fcts: list[float]) -> dict[str, float]:
    return {"p50": nearest_rank(fcts, 50), "p99": nearest_rank(fcts, 99), "max": max(fcts)}


FLOW_LINE = re.compile(r"^Flow Uec_(\d+)_(\d+) flowId (\d+) uecSrc \d+ (starting|finished) at ([0-9.e+-]+)")
TOTALS_LINE = re.compile(r"^New: (\d+) Rtx: (\d+) RTS: \d+ Bounced: \d+ ACKs: (\d+) NACKs: (\d+)")
QUEUES_LINE = re.compile(r"^SwitchQueues (\w+) trims (\d+) drops (\d+)")


@dataclass
class PeerRun:
    start_us: dict[int, float]
    finish_us: dict[int, float]
    totals: dict[str, int]
    trims_by_tier: dict[str, int]
    drops_by_tier: dict[str, int]


def read_peer_output(path: Path) -> PeerRun:
    start: dict[int, float] = {}
    finish: dict[int, float] = {}
    totals: dict[str, int] = {}
    trims: dict[str, int] = {}
    drops: dict[str, int] = {}
    for line in path.read_text().splitlines():
        if m := FLOW_LINE.match(line):
            (start if m.group(4) == "starting" else finish)[int(m.group(3))] = float(m.group(5))
        elif m := TOTALS_LINE.match(line):
            totals = dict(zip(("new_pkts", "rtx_pkts", "acks", "nacks"), (int(g) for g in m.groups())))
        elif m := QUEUES_LINE.match(line):
            trims[m.group(1)] = int(m.group(2))
            drops[m.group(1)] = int(m.group(3))
    if not totals:
        raise ValueError(f"{path}: no 'New: ...' totals line: the run did not end")
    if not trims:
        raise ValueError(f"{path}: no 'SwitchQueues' lines: was the peer built with peer.patch?")
    return PeerRun(start, finish, totals, trims, drops)


def delivery_fcts_us(matrix: Matrix, run: PeerRun) -> tuple[list[float], list[float]]:
    """Per flow (matrix order): the peer's FCT as printed (finish - start, sender side), and the
    same less the last ACK's way back (receiver side, as aiccsim counts)."""
    raw, delivery = [], []
    for f in matrix.flows:
        fct = run.finish_us[f.id] - run.start_us[f.id]
        raw.append(fct)
        delivery.append(fct - ack_return_ps(matrix.k, f.src, f.dst) / 1e6)
    return raw, delivery


SUMMARY_COLUMNS = (
    "scenario",
    "seed",
    "flows",
    "finished",
    "fct_p50_us",
    "fct_p99_us",
    "fct_max_us",
    "raw_fct_p50_us",
    "raw_fct_p99_us",
    "raw_fct_max_us",
    "trims",
    "drops",
    "new_pkts",
    "rtx_pkts",
    "acks",
    "nacks",
)


def collect(run_dir: Path, n_seeds: int = DEFAULT_SEEDS) -> None:
    """Turn RUN_DIR/<scenario>.seed<S>.out (S = 13 to 12 + n_seeds) into peer_results/:
    summary.csv (every seed), and for the default seed the per-flow times and the run's log
    without its per-flow lines."""
    PEER_RESULTS.mkdir(exist_ok=True)
    rows = []
    for sc in SCENARIOS:
        matrix = read_matrix(INPUTS / sc.matrix)
        for seed in seeds(n_seeds):
            out = run_dir / f"{sc.name}.seed{seed}.out"
            run = read_peer_output(out)
            missing = [f.id for f in matrix.flows if f.id not in run.finish_us]
            if missing:
                raise SystemExit(f"{out}: {len(missing)} flows never finished (first: {missing[0]}); raise -end")
            raw, delivery = delivery_fcts_us(matrix, run)
            d, r = fct_stats(delivery), fct_stats(raw)
            rows.append(
                {
                    "scenario": sc.name,
                    "seed": seed,
                    "flows": len(matrix.flows),
                    "finished": len(run.finish_us),
                    "fct_p50_us": f"{d['p50']:.4f}",
                    "fct_p99_us": f"{d['p99']:.4f}",
                    "fct_max_us": f"{d['max']:.4f}",
                    "raw_fct_p50_us": f"{r['p50']:.4f}",
                    "raw_fct_p99_us": f"{r['p99']:.4f}",
                    "raw_fct_max_us": f"{r['max']:.4f}",
                    "trims": sum(run.trims_by_tier.values()),
                    "drops": sum(run.drops_by_tier.values()),
                    **run.totals,
                }
            )
            if seed == FIRST_SEED:
                write_flows(PEER_RESULTS / f"{sc.name}.seed{seed}.flows.csv", matrix, run)
                write_log(PEER_RESULTS / f"{sc.name}.seed{seed}.log", out)
    with open(PEER_RESULTS / "summary.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=SUMMARY_COLUMNS)
        w.writeheader()
        w.writerows(rows)


def write_flows(path: Path, matrix: Matrix, run: PeerRun) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["flow", "peer_id", "src", "dst", "size_bytes", "start_us", "finish_us", "ack_return_us"])
        for i, f in enumerate(matrix.flows):
            ack = ack_return_ps(matrix.k, f.src, f.dst) / 1e6
            w.writerow([i, f.id, f.src, f.dst, f.size, run.start_us[f.id], run.finish_us[f.id], f"{ack:.5f}"])


def write_log(path: Path, out: Path) -> None:
    """The peer's log without its per-flow lines (those are in the .flows.csv): the parameters
    it derived, and its totals."""
    keep = [
        line
        for line in out.read_text().splitlines()
        if not line.startswith(("Flow Uec_", "Initialize per-instance", "Uec_", "queue_id ", "Trigger ", "Logging to"))
        and not line.strip(".").startswith("Done")
    ]
    path.write_text("\n".join(keep) + "\n")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[1] != "collect":
        raise SystemExit("usage: python3 peer.py collect RUN_DIR [SEEDS]   (seeds 13 to 12 + SEEDS, default 5)")
    collect(Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) == 4 else DEFAULT_SEEDS)
