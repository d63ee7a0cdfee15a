"""Write twins/<scenario>.toml: for each peer run, the aiccsim scenario that matches it as
closely as aiccsim's keys allow. Every value names its source in the peer (uet-htsim at
40ccb05, paths under htsim/sim/); README.md lists what still differs.

    python3 make_twins.py            (rewrites twins/ from inputs/)

Keys marked NEW belong to features not on aiccsim's main yet (NSCC, REPS, trimming); the
comparison fails, naming the key, until a binary that knows them runs it.
"""

from __future__ import annotations

from peer import ACK_BYTES, HEADER, INPUTS, LINK_GBPS, MTU_WIRE, SCENARIOS, TWINS, Matrix, Scenario, read_matrix

# The peer's derived quantities (main_uec.cpp), at 400 Gbps and a 4160-byte packet. Its
# printout (peer_results/*.log) shows the same numbers.
RTT_PS = 2 * 6 * 1_000_000 + 6 * MTU_WIRE * 8 * 1000 // LINK_GBPS + 6 * ACK_BYTES * 8 * 1000 // LINK_GBPS
BDP_PKTS = -(-(RTT_PS * LINK_GBPS // 8) // (MTU_WIRE * 1000))  # ceil(rtt x rate / mtu): 151
QUEUE_BYTES = BDP_PKTS * MTU_WIRE  # 1 x BDP per port with trimming (DEFAULT_TRIMMING_QUEUESIZE_FACTOR)
ECN_LOW = -(-BDP_PKTS * 2 // 10) * MTU_WIRE  # ceil(0.2 x bdp) packets
ECN_HIGH = -(-BDP_PKTS * 8 // 10) * MTU_WIRE  # ceil(0.8 x bdp) packets
RTO_PS = 15_000_000 + QUEUE_BYTES * 6 * 8 * 1000 // LINK_GBPS  # 15 us + queuesize x 6 x 8 / rate


def ns(ps: int) -> str:
    return f"{ps // 1000}.{ps % 1000:03d}".rstrip("0").rstrip(".") + "ns"


def fabric(matrix: Matrix) -> str:
    k = matrix.k
    return f"""[topology]
kind = "fat_tree"
# The peer's default 3-tier fat tree for "Nodes {matrix.nodes}" (fat_tree_topology.cpp set_params):
# k = {k}, host h on edge switch h / {k // 2}, as aiccsim numbers them.
k = {k}
# -linkspeed 400000 on every link; -hop_latency default 1 us per link, switch latency 0.
link = {{ bandwidth = "{LINK_GBPS}Gbps", delay = "1us" }}

[switch]
# FatTreeSwitch ECMP: hash of (flow, packet entropy, per-switch salt) over the next hops.
routing = "ecmp"
# The peer's switches have per-port output queues (CompositeQueue), {QUEUE_BYTES} B of data and
# twice that of headers each, and no shared pool: a buffer of k x 3 x {QUEUE_BYTES} B never
# binds before the per-port trimming threshold below.
buffer = "{k * 3 * QUEUE_BYTES}B"
# A lossy fabric: the peer has no PFC.
pfc = {{ enabled = false }}

[switch.ecn]
# main_uec.cpp: RED from ceil(0.2 x {BDP_PKTS}) to ceil(0.8 x {BDP_PKTS}) packets of {MTU_WIRE} B, on every
# switch port (ToR downlinks too, with sender-based CC); compositequeue.cpp decide_ECN marks with
# probability rising linearly from 0 to 1, at dequeue, from the data queue left behind.
kmin = "{ECN_LOW}B"
kmax = "{ECN_HIGH}B"
pmax = 1.0
reference_bandwidth = "{LINK_GBPS}Gbps"
mark_at = "dequeue"

[switch.trimming]  # NEW (branch trim)
# compositequeue.cpp: a data packet that would take the data queue past its size, 1 x BDP =
# {BDP_PKTS} packets of {MTU_WIRE} B (main_uec.cpp, trimming on), is trimmed to 64 B (-trimsize) and
# queued at high priority (the arrival or, by a coin flip, the last packet queued).
threshold = "{QUEUE_BYTES}B"
"""


def nic() -> str:
    return f"""
[nic]
# -mtu {MTU_WIRE} is the whole packet; UecSrc::_hdr_size = {HEADER} B, so {MTU_WIRE - HEADER} B of payload.
mtu = "{MTU_WIRE - HEADER}B"
header = "{HEADER}B"
# UecBasePacket::ACKSIZE, ACKs and NACKs alike (aiccsim's selective ACKs add 4 B).
ack_size = "{ACK_BYTES}B"
# UecSink::_bytes_unacked_threshold = 16384 B: an ACK per 4 packets of {MTU_WIRE} B.
ack_every = 4
# And at once (UecSink::processData) for a packet with the AR flag (UecSrc::sendNewPacket sets it
# when the window is full after the packet or it is the last; sendRtxPacket on every resend),
# an ECN-marked packet, a flow's first packet, a duplicate.
ack_request = true
# UecSink::processData (uec.cpp:2703-2714) acknowledges a packet after a gap by the same rules
# as one in order: it counts towards the 16384 B, and each ACK carries a 64-packet SACK bitmap;
# the packet that empties the out-of-order set after an AR is acknowledged at once too.
ack_out_of_order = "coalesced"  # NEW (branch uecmix)
# main_uec.cpp: min RTO = 15 us + queuesize x 6 x 8 / rate; the peer never backs it off.
rto = "{ns(RTO_PS)}"
# The peer's UEC transport: selective ACKs (64-bit SACK bitmap) and a NACK per trimmed packet.
recovery = "selective"
# It declares a packet lost only on a NACK or the RTO (no SLEEK by default): no reordering
# threshold, which the widest window aiccsim allows stands for.
sack_bitmap = 1024
reorder_window = 1023
# -load_balancing_algo reps (the default is "mixed"): UecMpReps, with -paths 64 entropies.
load_balancing = "reps"  # NEW (branch reps)
entropies = 64  # NEW
# buffer_reps.cpp: 8 recycled entropies (repsBufferSize), each used once (repsMaxLifetimeEntropy);
# an RTO freezes the buffer for 10 ms (exit_freeze_after), then 16 fresh entropies.
reps = {{ buffer = 8 }}  # NEW

[cc]
# UecSrc NSCC (uec.cpp initNsccParams, initNscc), the peer's default sender CC, with what it
# derives at 400 Gbps: network RTT {RTT_PS / 1e6:.5f} us (the fabric's largest unloaded RTT, every
# flow's base RTT at start), BDP {RTT_PS * LINK_GBPS // 8000} B, initial cwnd = max cwnd = 1.5 x BDP,
# target queuing delay 0.75 x network RTT (trimming on), QuickAdapt gate 2^3. aiccsim's
# default rtt_from = "network" takes the largest base RTT among the flows: every twin has flows
# between pods, whose base RTT is the fabric's largest.
algorithm = "nscc"  # NEW (branch nscc)
"""


def workload(sc: Scenario, matrix: Matrix) -> str:
    flows = matrix.flows
    size = flows[0].size
    if any(f.size != size for f in flows):
        raise ValueError(f"{sc.matrix}: flows of different sizes")
    head = f"\n[workload]\n# From inputs/{sc.matrix}; aiccsim's flow i is the matrix's i-th line.\n"
    if sc.workload == "incast":
        dst = flows[0].dst
        senders = ", ".join(str(f.src) for f in flows)
        return head + f'kind = "incast"\nsenders = [{senders}]\nreceiver = {dst}\nsize = "{size}B"\n'
    if sc.workload == "all_to_all":
        members = sorted({f.src for f in flows})
        if members != list(range(len(members))):
            raise ValueError(f"{sc.matrix}: all-to-all members are not hosts 0..n-1")
        return (
            head + "# Direct: every flow at 0, by sender then receiver, as gen_alltoall.py writes them.\n"
            f'kind = "all_to_all"\nhosts = "0..{len(members)}"\nalgorithm = "direct"\nsize = "{size}B"\n'
        )
    waits = matrix.waits_for()
    lines = [head, 'kind = "flows"\n']
    if waits:
        lines.append(
            "# The peer's `trigger` chains: a flow starts when its sender holds the ACK of the previous\n"
            "# flow's last byte, as aiccsim's `after_acked` starts it. main_uec.cpp:894-901 makes the\n"
            "# matrix's `trigger T` a target of trigger T and `send_done_trigger T` the previous flow's\n"
            "# end trigger (UecSrc::setEndTrigger); UecSrc::processAck (uec.cpp:1098) calls\n"
            "# checkFinished, which fires it once the cumulative ACK covers the flow (uec.cpp:842-860);\n"
            "# SingleShotTrigger::activate (trigger.cpp:22-31) queues the target, which the event list\n"
            "# runs at the same instant (eventlist.cpp:45-52): UecSrc::activate -> startConnection\n"
            "# (uec.cpp:2432-2434).\n"
        )
    lines.append("flows = [\n")
    for i, f in enumerate(flows):
        after = f", after_acked = [{waits[i]}]" if i in waits else ""
        lines.append(f'  {{ src = {f.src}, dst = {f.dst}, size = "{size}B"{after} }},\n')
    lines.append("]\n")
    return "".join(lines)


def main() -> None:
    TWINS.mkdir(exist_ok=True)
    for sc in SCENARIOS:
        matrix = read_matrix(INPUTS / sc.matrix)
        text = (
            f"# aiccsim twin of the peer run `{sc.name}`: {sc.what}, NSCC + REPS + trimming.\n"
            "# Written by tests/uet_htsim/make_twins.py; README.md there lists the remaining differences.\n\n"
            + fabric(matrix)
            + nic()
            + workload(sc, matrix)
        )
        (TWINS / f"{sc.name}.toml").write_text(text)


if __name__ == "__main__":
    main()
