"""The scenarios of this folder and the HPCC ns-3 simulator's outputs (the peer): reading its
flow file, FCT file, the receiver-side finish times peer.patch adds, and its PFC file; the
statistics both sides share.

    python3 tests/ns3_peer/peer.py collect RUN_DIR     (rerun_peer.sh does this)

reduces each run folder RUN_DIR/<scenario>.run<k>/ to peer_results/<scenario>.run<k>.flows.csv
and one row of peer_results/summary.csv. Standard library only.
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

# Every scenario is a folder of inputs/: <topology and flows>_<cc>.
SCENARIOS = sorted(p.name for p in INPUTS.iterdir() if p.is_dir()) if INPUTS.is_dir() else []

# ns-3's first flow port per host pair (third.cc: portNumder[i][j] = 10000, then ++ per flow).
FIRST_PORT = 10000


@dataclass
class Flow:
    id: int
    src: int  # ns-3 node ids
    dst: int
    size: int
    start: str  # seconds, as written


def read_flows(path: Path) -> list[Flow]:
    """A flow file (third.cc's ReadFlowInput): a count, then src dst pg dport size start."""
    tokens = path.read_text().split()
    n = int(tokens[0])
    flows = []
    for i in range(n):
        src, dst, _pg, _dport, size, start = tokens[1 + 6 * i : 7 + 6 * i]
        flows.append(Flow(i, int(src), int(dst), int(size), start))
    return flows


def node_of_ip(hex_ip: str) -> int:
    """third.cc's ip_to_node_id: node id = bits 8-23 of the address."""
    return (int(hex_ip, 16) >> 8) & 0xFFFF


def flow_keys(flows: list[Flow]) -> dict[tuple[int, int, int], int]:
    """(src, dst, sport) of each flow, as third.cc numbers ports: per host pair, from 10000 in the
    order the flows start (the file's order)."""
    next_port: dict[tuple[int, int], int] = {}
    keys = {}
    for f in flows:
        port = next_port.get((f.src, f.dst), FIRST_PORT)
        next_port[(f.src, f.dst)] = port + 1
        keys[(f.src, f.dst, port)] = f.id
    return keys


@dataclass
class PeerFlow:
    id: int
    src: int
    dst: int
    size: int
    start_ns: int
    rx_fct_ns: int  # until the receiver has the last byte (peer.patch): aiccsim's FCT
    fct_ns: int  # ns-3's own FCT: until the sender has the last ACK (qp_finish)
    standalone_fct_ns: int  # ns-3's ideal FCT (qp_finish)


def read_run(run: Path) -> tuple[list[PeerFlow], dict[str, int]]:
    """One run folder: its flows (every one must have finished) and its PFC counts."""
    flows = read_flows(run / "flow.txt")
    keys = flow_keys(flows)
    done: dict[int, tuple[int, int, int]] = {}
    for line in (run / "fct.txt").read_text().splitlines():
        sip, dip, sport, _dport, _size, start, fct, standalone = line.split()
        done[keys[(node_of_ip(sip), node_of_ip(dip), int(sport))]] = (int(start), int(fct), int(standalone))
    rx: dict[int, int] = {}
    for line in (run / "rx_fct.txt").read_text().splitlines():
        sip, dip, sport, t = line.split()
        rx[keys[(node_of_ip(sip), node_of_ip(dip), int(sport))]] = int(t)
    missing = [f.id for f in flows if f.id not in done or f.id not in rx]
    if missing:
        raise SystemExit(f"{run}: flows {missing[:10]} did not finish in ns-3")
    out = []
    for f in flows:
        start, fct, standalone = done[f.id]
        out.append(PeerFlow(f.id, f.src, f.dst, f.size, start, rx[f.id] - start, fct, standalone))
    return out, read_pfc(run / "pfc.txt")


def read_pfc(path: Path) -> dict[str, int]:
    """third.cc's get_pfc lines: time node node_type if_index type, one per PFC frame a device
    received; type 1 is a PAUSE, 0 a RESUME (qbb-net-device.cc Receive). Only switches send them."""
    counts = {"pauses": 0, "pauses_to_hosts": 0, "pauses_to_switches": 0, "resumes": 0}
    for line in path.read_text().splitlines():
        _t, _node, node_type, _ifindex, kind = line.split()
        if kind == "1":
            counts["pauses"] += 1
            counts["pauses_to_hosts" if node_type == "0" else "pauses_to_switches"] += 1
        else:
            counts["resumes"] += 1
    return counts


def nearest_rank(xs: list[float], pct: float) -> float:
    s = sorted(xs)
    return s[max(0, math.ceil(pct / 100 * len(s)) - 1)]


def stats(xs: list[float]) -> dict[str, float]:
    return {"p50": nearest_rank(xs, 50), "p99": nearest_rank(xs, 99), "max": max(xs)}


FLOW_COLUMNS = ["flow_id", "src", "dst", "size_bytes", "start_ns", "rx_fct_ns", "fct_ns", "standalone_fct_ns"]
SUMMARY_COLUMNS = [
    "scenario",
    "run",
    "flows",
    "rx_fct_p50_us",
    "rx_fct_p99_us",
    "rx_fct_max_us",
    "fct_p50_us",
    "fct_p99_us",
    "fct_max_us",
    "pauses",
    "pauses_to_hosts",
    "pauses_to_switches",
    "resumes",
    "cpu_s",
]
RUN_DIR = re.compile(r"^(\w+)\.run(\d+)$")


def read_peer_flows(name: str, run: int) -> list[dict[str, str]]:
    with open(PEER_RESULTS / f"{name}.run{run}.flows.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def read_summary() -> list[dict[str, str]]:
    with open(PEER_RESULTS / "summary.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def collect(run_dir: Path) -> None:
    PEER_RESULTS.mkdir(exist_ok=True)
    summary = []
    for run in sorted(run_dir.iterdir()):
        m = RUN_DIR.match(run.name)
        if not m:
            continue
        name, k = m.group(1), int(m.group(2))
        flows, pfc = read_run(run)
        with open(PEER_RESULTS / f"{name}.run{k}.flows.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(FLOW_COLUMNS)
            for f in flows:
                w.writerow([f.id, f.src, f.dst, f.size, f.start_ns, f.rx_fct_ns, f.fct_ns, f.standalone_fct_ns])
        rx = stats([f.rx_fct_ns / 1000 for f in flows])
        tx = stats([f.fct_ns / 1000 for f in flows])
        # The last line third.cc prints is its CPU time (clock()) in seconds.
        cpu = (run / "stdout.txt").read_text().split()[-1]
        summary.append(
            [name, k, len(flows), *(f"{rx[s]:.3f}" for s in ("p50", "p99", "max"))]
            + [*(f"{tx[s]:.3f}" for s in ("p50", "p99", "max")), *pfc.values(), cpu]
        )
        # The run's own printout, less nothing: it names every setting ns-3 read.
        (PEER_RESULTS / f"{name}.run{k}.log").write_text((run / "stdout.txt").read_text())
    with open(PEER_RESULTS / "summary.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(SUMMARY_COLUMNS)
        w.writerows(summary)
    print(f"{len(summary)} runs collected into {PEER_RESULTS}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "collect":
        collect(Path(sys.argv[2]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
