"""Write the inputs of every scenario of this folder (inputs/<scenario>/): the HPCC ns-3
simulator's topology, flow and configuration files, which the peer runs and which
`aiccsim import-ns3` turns into the twin. Deterministic: Python's `random.Random(seed)` gives the
same draws on every Python 3, so running it again rewrites the same files.

    python3 tests/ns3_peer/gen_inputs.py

The scenarios (chosen before any run, README.md):
- small: tests/ns3's topology and flows (4 hosts, 2 switches, 4 flows).
- incast16: 16 hosts send 1 000 000 B each to a 17th through one switch, all at 2.0 s.
- incast16_buf2: the same with a 2 MiB switch buffer, so that PFC pauses.
- fattree: a k = 4 fat tree (16 hosts, 20 switches, every link 100 Gbps and 1 us) with the
  first 200 flows of the web-search size distribution at 50% load, generated as the HPCC
  repository's traffic_gen/traffic_gen.py does (Poisson arrivals per host, uniform destination).
Each under DCQCN and HPCC: the configuration files the HPCC repository's simulation/run.py writes
at 100 Gbps (tests/ns3/config_dcqcn.txt, config_hpcc.txt), with only the file names changed.
"""

from __future__ import annotations

import heapq
import math
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
NS3_TESTS = HERE.parent / "ns3"
INPUTS = HERE / "inputs"

CCS = ("dcqcn", "hpcc")
SCENARIOS = ("small", "incast16", "incast16_buf2", "fattree")

# traffic_gen/WebSearch_distribution.txt of the HPCC repository: flow size (B), percentile.
WEB_SEARCH = [
    (0, 0),
    (10000, 15),
    (20000, 20),
    (30000, 30),
    (50000, 40),
    (80000, 53),
    (200000, 60),
    (1000000, 70),
    (2000000, 80),
    (5000000, 90),
    (10000000, 97),
    (30000000, 100),
]
FATTREE_SEED = 29
FATTREE_LOAD = 0.5
FATTREE_FLOWS = 200
LINK = "100Gbps 1us 0"


def config(cc: str, buffer_mib: int | None = None) -> str:
    """run.py's configuration file for `cc`, reading and writing the files in the folder ns-3
    runs in. QLEN_MON_END = QLEN_MON_START makes the queue monitor (output only, 10 M events a
    simulated second) run once; BUFFER_SIZE as given."""
    out = []
    for line in (NS3_TESTS / f"config_{cc}.txt").read_text().splitlines():
        key = line.split(" ", 1)[0]
        renamed = {
            "TOPOLOGY_FILE": "topology.txt",
            "FLOW_FILE": "flow.txt",
            "TRACE_FILE": "trace.txt",
            "TRACE_OUTPUT_FILE": "mix.tr",
            "FCT_OUTPUT_FILE": "fct.txt",
            "PFC_OUTPUT_FILE": "pfc.txt",
            "QLEN_MON_FILE": "qlen.txt",
            "QLEN_MON_END": "2000000000",
        }
        if key in renamed:
            line = f"{key} {renamed[key]}"
        elif key == "BUFFER_SIZE" and buffer_mib is not None:
            line = f"{key} {buffer_mib}"
        out.append(line)
    return "\n".join(out) + "\n"


def incast_topology(senders: int) -> str:
    """Hosts 0..senders (the last receives), one switch after them."""
    hosts = senders + 1
    switch = hosts
    lines = [f"{hosts + 1} 1 {hosts}", str(switch)]
    lines += [f"{h} {switch} {LINK}" for h in range(hosts)]
    return "\n".join(lines) + "\n"


def incast_flows(senders: int, size: int) -> str:
    lines = [str(senders)] + [f"{h} {senders} 3 100 {size} 2.0" for h in range(senders)]
    return "\n".join(lines) + "\n"


def fattree_topology(k: int = 4) -> str:
    """Hosts 0..k^3/4-1, then edge, aggregation and core switches. Host h on edge h // (k/2);
    edge switch e of pod p to every aggregation switch of p; aggregation switch j of a pod to
    cores j*k/2 .. j*k/2 + k/2 - 1 (aiccsim's wiring)."""
    half = k // 2
    hosts = k * k * k // 4
    edges = [hosts + i for i in range(k * half)]
    aggs = [hosts + k * half + i for i in range(k * half)]
    cores = [hosts + 2 * k * half + i for i in range(half * half)]
    links = [(h, edges[h // half]) for h in range(hosts)]
    for pod in range(k):
        for e in range(half):
            for a in range(half):
                links.append((edges[pod * half + e], aggs[pod * half + a]))
    for pod in range(k):
        for j in range(half):
            for c in range(half):
                links.append((aggs[pod * half + j], cores[j * half + c]))
    switches = edges + aggs + cores
    lines = [f"{hosts + len(switches)} {len(switches)} {len(links)}", " ".join(map(str, switches))]
    lines += [f"{a} {b} {LINK}" for a, b in links]
    return "\n".join(lines) + "\n"


def web_search_size(rng: random.Random) -> int:
    """traffic_gen.py's CustomRand.rand(): linear interpolation of the CDF."""
    y = rng.random() * 100
    for (x0, y0), (x1, y1) in zip(WEB_SEARCH, WEB_SEARCH[1:]):
        if y <= y1:
            return max(1, int(x0 + (x1 - x0) / (y1 - y0) * (y - y0)))
    return WEB_SEARCH[-1][0]


def fattree_flows(hosts: int = 16, bandwidth: float = 100e9) -> str:
    """traffic_gen.py's loop (Poisson arrivals per host from 2 s, in ns, a uniform destination
    other than the source), seeded, stopped after FATTREE_FLOWS flows."""
    rng = random.Random(FATTREE_SEED)
    sizes = WEB_SEARCH
    avg = sum((x0 + x1) / 2 * (y1 - y0) for (x0, y0), (x1, y1) in zip(sizes, sizes[1:])) / 100
    inter = 1 / (bandwidth * FATTREE_LOAD / 8 / avg) * 1e9
    base = 2_000_000_000

    def poisson() -> int:
        return int(-math.log(1 - rng.random()) * inter)

    heap = [(base + poisson(), h) for h in range(hosts)]
    heapq.heapify(heap)
    flows = []
    while len(flows) < FATTREE_FLOWS:
        t, src = heap[0]
        dst = rng.randrange(hosts - 1)
        dst += dst >= src
        flows.append(f"{src} {dst} 3 100 {web_search_size(rng)} {t * 1e-9:.9f}")
        heapq.heapreplace(heap, (t + poisson(), src))
    return "\n".join([str(len(flows)), *flows]) + "\n"


def scenario_files(name: str) -> dict[str, str]:
    if name == "small":
        return {
            "topology.txt": (NS3_TESTS / "topology.txt").read_text(),
            "flow.txt": (NS3_TESTS / "flow.txt").read_text(),
        }
    if name.startswith("incast16"):
        return {"topology.txt": incast_topology(16), "flow.txt": incast_flows(16, 1_000_000)}
    if name == "fattree":
        return {"topology.txt": fattree_topology(), "flow.txt": fattree_flows()}
    raise ValueError(name)


def main() -> None:
    for name in SCENARIOS:
        for cc in CCS:
            d = INPUTS / f"{name}_{cc}"
            d.mkdir(parents=True, exist_ok=True)
            files = scenario_files(name)
            files["config.txt"] = config(cc, 2 if name == "incast16_buf2" else None)
            files["trace.txt"] = "0\n"  # third.cc reads a trace node count even with ENABLE_TRACE 0
            for file, text in files.items():
                (d / file).write_text(text)
    print(f"wrote {len(SCENARIOS) * len(CCS)} scenarios under {INPUTS}")


if __name__ == "__main__":
    main()
