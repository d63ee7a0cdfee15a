"""The path every flow's packets took through the HPCC ns-3 simulator, read from its own packet
trace (`mix.tr`, written when the configuration says ENABLE_TRACE 1 and `trace.txt` lists the
switches; `record_paths.sh` runs that), for the test that an imported twin routed by
`switch.routing = "ecmp_ns3"` takes the same ones.

    python3 tests/ns3_peer/paths.py MIX_TR FLOW_FILE OUT_CSV

OUT_CSV has a row per flow of FLOW_FILE: its ns-3 source and destination node, its ports, and the
switch hops of its data and of its ACKs as "node:device" (ns-3's ids: device j of switch node n
is aiccsim's port j - 1 of switch n - hosts), in the order the first packet crossed them. Every
packet of a flow must have crossed the same hops (ns-3 hashes the flow, not the packet); the
script fails otherwise. Standard library only.
"""

from __future__ import annotations

import csv
import struct
import sys
from pathlib import Path

from peer import flow_keys, read_flows

# analysis/trace-format.h: TraceFormat, 56 bytes as g++ lays it out on x86-64: time, node, intf,
# qidx, qlen, sip, dip, size, l3Prot, event, ecn, nodeType, 2 bytes of padding, then the union,
# whose data and ack members both start with sport, dport.
RECORD = struct.Struct("<QHBBIIIHBBBB2xHH20x")
ENQUEUE, SWITCH = 1, 1
UDP, ACK, NACK = 0x11, 0xFC, 0xFD


def ip_of_node(n: int) -> int:
    """third.cc's node_id_to_ip."""
    return 0x0B000001 + (n // 256) * 0x00010000 + (n % 256) * 0x00000100


def read_hops(trace: Path) -> dict[tuple[int, int, int, int, bool], list[tuple[int, int, int]]]:
    """(sip, dip, sport, dport, is_data) -> [(time, node, device)], one per switch, first packet's."""
    hops: dict[tuple[int, int, int, int, bool], dict[int, tuple[int, int]]] = {}
    with open(trace, "rb") as fh:
        # The trace starts with third.cc's SimSetting: a count, that many (node, intf, bps), the
        # window bound.
        (n,) = struct.unpack("<I", fh.read(4))
        fh.read(n * 11 + 4)
        while chunk := fh.read(RECORD.size * 65536):
            for rec in RECORD.iter_unpack(chunk):
                time, node, intf, _q, _qlen, sip, dip, _size, l3, event, _ecn, kind, sport, dport = rec
                if event != ENQUEUE or kind != SWITCH or l3 not in (UDP, ACK, NACK):
                    continue
                seen = hops.setdefault((sip, dip, sport, dport, l3 == UDP), {})
                first = seen.setdefault(node, (time, intf))
                if first[1] != intf:
                    where = f"{sip:08x}->{dip:08x} ports {sport}/{dport} left switch {node}"
                    sys.exit(f"{where} by devices {first[1]} and {intf}")
    return {k: sorted((t, n, i) for n, (t, i) in v.items()) for k, v in hops.items()}


def main(trace: Path, flow_file: Path, out: Path) -> None:
    flows = read_flows(flow_file)
    dports = [int(t) for t in flow_file.read_text().split()[1:][3::6][: len(flows)]]
    ids = {v: k for k, v in flow_keys(flows).items()}  # flow -> (src, dst, sport)
    hops = read_hops(trace)

    def show(h: list[tuple[int, int, int]]) -> str:
        return " ".join(f"{n}:{i}" for _, n, i in h)

    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["flow", "src", "dst", "sport", "dport", "data_hops", "ack_hops"])
        for f in flows:
            src, dst, sport = ids[f.id]
            dport = dports[f.id]
            data = hops.get((ip_of_node(src), ip_of_node(dst), sport, dport, True))
            ack = hops.get((ip_of_node(dst), ip_of_node(src), dport, sport, False))
            if data is None or ack is None:
                what = f"flow {f.id} ({src} -> {dst}, port {sport})"
                sys.exit(f"{what}: not in the trace; list every switch in trace.txt")
            w.writerow([f.id, src, dst, sport, dport, show(data), show(ack)])
    print(f"{len(flows)} flows' paths written to {out}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
