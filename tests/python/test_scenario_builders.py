"""`aiccsim.scenario`: a built scenario is the one its TOML file describes (same resolved
scenario, same flows.csv), `|` merges as documented, and Rust's errors come back as they are."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import aiccsim
from aiccsim.scenario import (
    RoutingTiers,
    Scenario,
    all_gather,
    all_reduce,
    all_to_all,
    broadcast,
    cc,
    chakra,
    clocks,
    clos,
    collective,
    conga,
    credit,
    custom,
    dlb,
    dumbbell,
    ecmp_ns3,
    ecn,
    event,
    fat_tree,
    flow,
    flowlet,
    flows,
    incast,
    job,
    layer,
    leaf_spine,
    link,
    nic,
    output,
    parallel_layer,
    parallel_training,
    permutation,
    pfc,
    rail,
    reduce_scatter,
    reps,
    send_recv,
    simulation,
    spray_threshold,
    star,
    switch,
    trace,
    training,
    trimming,
)

from conftest import REPO

LINK = {"bandwidth": "100Gbps", "delay": "1us"}


def s1() -> Scenario:
    return (
        star(hosts=17, **LINK)
        | switch(buffer="32MB")
        | cc("dcqcn", cnp_interval="4us")
        | incast(senders=range(1, 17), receiver=0, size="10MB")
    )


def s2() -> Scenario:
    return star(hosts=8, **LINK) | cc("dcqcn", cnp_interval="4us") | all_to_all(size="1MB")


def pfc_deadlock() -> Scenario:
    ring = [link(f"h{i}", f"s{i}", **LINK) for i in range(5)] + [
        link(f"s{i}", f"s{(i + 1) % 5}", **LINK) for i in range(5)
    ]
    return (
        simulation(seed=1, stall_timeout="100ms")
        | custom(hosts=5, switches=5, links=ring)
        | switch(buffer="4MB")
        | pfc(enabled=True, xoff="40KB")
        | nic(rto="1ms")
        | cc("none")
        | flows([flow(i, (i + 2) % 5, "10MB") for i in range(5)])
    )


def all_reduce_8() -> Scenario:
    return (
        simulation(seed=1)
        | star(hosts=8, bandwidth="200Gbps", delay="500ns")
        | switch(buffer="32MB")
        | pfc(enabled=True)
        | ecn(kmin="400KB", kmax="1600KB", pmax=0.2)
        | cc("none")
        | all_reduce(size="10MB", algorithm="direct")
    )


def pc4_incast() -> Scenario:
    return (
        simulation(seed=1)
        | star(hosts=11, **LINK)
        | switch(buffer="32MB")
        | pfc(enabled=True)
        | cc("pc4")
        | incast(senders=range(1, 11), receiver=0, size="10MB")
    )


# docs/scenario.md, example 2, with selective recovery.
LEAF_SPINE = """
[simulation]
seed = 3
stop_time = "5ms"
[topology]
kind = "leaf_spine"
leaves = 4
spines = 2
hosts_per_leaf = 8
link = { bandwidth = "100Gbps", delay = "1us" }
fabric_link = { bandwidth = "400Gbps", delay = "500ns" }
[switch]
buffer = "12MiB"
routing = "spray"
[switch.pfc]
xoff = "256KB"
xon_delta = "8KB"
[switch.ecn]
enabled = false
[nic]
ack_every = 4
ack_request = true
ack_out_of_order = "coalesced"
recovery = "selective"
reorder_window = 64
[cc]
algorithm = "none"
[workload]
kind = "permutation"
hosts = "all"
size = "500KB"
"""


def leaf_spine_permutation() -> Scenario:
    return (
        simulation(seed=3, stop_time="5ms")
        | leaf_spine(leaves=4, spines=2, hosts_per_leaf=8, **LINK, fabric_bandwidth="400Gbps", fabric_delay="500ns")
        | switch(buffer="12MiB", routing="spray")
        | pfc(xoff="256KB", xon_delta="8KB")
        | ecn(enabled=False)
        | nic(ack_every=4, ack_request=True, ack_out_of_order="coalesced", recovery="selective", reorder_window=64)
        | cc("none")
        | permutation(hosts="all", size="500KB")
    )


# docs/scenario.md, example 6, with a host list instead of "all".
PC4_ALL_TO_ALL = """
[topology]
kind = "star"
hosts = 8
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "pc4"
[clocks]
offset = "100ns"
noise = "50ns"
noise_distribution = "gaussian"
[workload]
kind = "all_to_all"
hosts = [0, 2, 4, 6, 7]
size = "500KB"
flows_per_pair = 2
"""


def pc4_all_to_all() -> Scenario:
    return (
        star(hosts=8, **LINK)
        | cc("pc4")
        | clocks(offset="100ns", noise="50ns", noise_distribution="gaussian")
        | all_to_all(hosts=[*range(0, 6, 2), 6, 7], size="500KB", flows_per_pair=2)
    )


FAT_TREE = """
[topology]
kind = "fat_tree"
k = 4
link = { bandwidth = "100Gbps", delay = "1us" }
fabric_link = { bandwidth = "400Gbps", delay = "1us" }
nics_per_server = 2
[cc]
algorithm = "hpcc"
eta = 0.9
[workload]
kind = "flows"
flows = [
  { src = 0, dst = 15, size = "1MB", collective = { kind = "all_reduce", group_size = 4, id = 1 } },
  { src = 5, dst = 15, size = "1MB", collective = { kind = "all_reduce", group_size = 4, id = 1 } },
  { src = 15, dst = 0, size = "64KiB", start = "20us", after = [0, 1] },
  { src = 15, dst = 5, size = "64KiB", after_acked = [2] },
]
[output]
sample_interval = "5us"
queue_switches = [0, 1, 2, 3]
rate_flows = [2]
warmup = "10us"
cc_state = true
[output.trace]
flows = [2]
nodes = ["s0"]
max_rows = 100
"""


def fat_tree_flows() -> Scenario:
    tag = collective("all_reduce", 4, id=1)
    return (
        fat_tree(k=4, **LINK, fabric_bandwidth="400Gbps", fabric_delay="1us", nics_per_server=2)
        | cc("hpcc", eta=0.9)
        | flows(
            [
                flow(0, 15, "1MB", collective=tag),
                flow(5, 15, "1MB", collective=tag),
                flow(15, 0, "64KiB", start="20us", after=range(2)),
                flow(15, 5, "64KiB", after_acked=[2]),
            ]
        )
        | output(sample_interval="5us", queue_switches=range(4), rate_flows=(2,), warmup="10us", cc_state=True)
        | trace(flows=[2], nodes=["s0"], max_rows=100)
    )


DUMBBELL = """
[topology]
kind = "dumbbell"
left = 3
right = 2
link = { bandwidth = "100Gbps", delay = "1us" }
bottleneck = { bandwidth = "50Gbps", delay = "2us" }
[cc]
algorithm = "dcqcn"
byte_counter = "10MB"
[workload]
kind = "incast"
senders = [0, 1, 2]
receiver = 4
size = "300KB"
flows_per_sender = 2
start = "1us"
"""


def dumbbell_incast() -> Scenario:
    return (
        dumbbell(left=3, right=2, **LINK, bottleneck_bandwidth="50Gbps", bottleneck_delay="2us")
        | cc("dcqcn", byte_counter="10MB")
        | incast(senders=(0, 1, 2), receiver=4, size="300KB", flows_per_sender=2, start="1us")
    )


LEAF_SPINE_PARALLEL_LINKS = LEAF_SPINE.replace("spines = 2\n", "spines = 2\nlinks_per_spine = 2\n")


def leaf_spine_parallel_links() -> Scenario:
    return leaf_spine_permutation() | leaf_spine(
        leaves=4,
        spines=2,
        hosts_per_leaf=8,
        **LINK,
        fabric_bandwidth="400Gbps",
        fabric_delay="500ns",
        links_per_spine=2,
    )


def gpu_clos() -> Scenario:
    return (
        clos(
            racks=2,
            servers_per_rack=2,
            gpus_per_server=8,
            spines=8,
            bandwidth="200Gbps",
            delay="500ns",
            nvlink_bandwidth="200GB/s",
            nvlink_delay="25ns",
        )
        | switch(buffer="32MB")
        | cc("dcqcn")
        | all_reduce(size="32MB", algorithm="hierarchical")
    )


RAIL = """
[topology]
kind = "rail"
servers = 8
gpus_per_server = 4
servers_per_group = 4
spines = 2
link = { bandwidth = "200Gbps", delay = "500ns" }
nvlink = { bandwidth = "200GB/s", delay = "25ns" }
oversubscription = 2.0
[nic]
connections = "per_transfer"
[workload]
kind = "all_to_all"
size = "64KB"
chunks = 2
"""


def rail_all_to_all() -> Scenario:
    return (
        rail(
            servers=8,
            gpus_per_server=4,
            servers_per_group=4,
            spines=2,
            bandwidth="200Gbps",
            delay="500ns",
            nvlink_bandwidth="200GB/s",
            nvlink_delay="25ns",
            oversubscription=2.0,
        )
        | nic(connections="per_transfer")
        | all_to_all(size="64KB", chunks=2)
    )


def training_example() -> Scenario:
    return star(hosts=8, **LINK) | training(
        hosts="all",
        iterations=2,
        layers=[
            layer("10us", backward="10us", forward_all_to_all="64KB"),
            layer("20us", input_grad="20us", weight_grad="20us", backward_all_to_all="64KB", all_reduce="1MB"),
            layer("20us", input_grad="20us", weight_grad="20us", all_reduce={"size": "2MB"}),
        ],
    )


def jobs_example() -> Scenario:
    hierarchical = [
        layer("50us", backward="100us", all_reduce={"size": f"{n}MB", "algorithm": "hierarchical"}) for n in (4, 8)
    ]
    return (
        clos(
            racks=2,
            servers_per_rack=2,
            gpus_per_server=4,
            spines=4,
            bandwidth="200Gbps",
            delay="500ns",
            nvlink_bandwidth="200GB/s",
            nvlink_delay="25ns",
        )
        | switch(buffer="32MB")
        | cc("dcqcn")
        | job(training(iterations=2, layers=hierarchical), name="dp", ranks=8, placement="packed")
        | job(
            all_to_all(size="256KB"),
            all_reduce(size="8MB", algorithm="ring"),
            name="moe",
            ranks=8,
            placement="spread",
            start="20us",
        )
    )


def pipeline_send_recv() -> Scenario:
    forward, backward = [(0, 1), (1, 2), (2, 3)], [(1, 0), (2, 1), (3, 2)]
    return (
        star(hosts=4, bandwidth="200Gbps", delay="500ns")
        | cc("dcqcn")
        | job(
            send_recv(pairs=forward, size="8MB", chunks=4),
            send_recv(pairs=backward, size="8MB", chunks=4),
            name="pipeline",
            hosts=[0, 1, 2, 3],
        )
    )


# Every key of a training workload and its layers, on GPU servers of 4.
TRAINING_HIERARCHICAL = """
[topology]
kind = "star"
hosts = 8
nics_per_server = 4
link = { bandwidth = "100Gbps", delay = "1us" }
nvlink = { bandwidth = "200GB/s", delay = "25ns" }
[cc]
algorithm = "none"
[workload]
kind = "training"
hosts = "0..8"
iterations = 1
start = "5us"
local_ranks = 4
chunks = 2
tp = 2
ep = 2
[[workload.layers]]
forward = "10us"
backward = "10us"
forward_all_to_all = { size = "32KB", algorithm = "hierarchical" }
[[workload.layers]]
forward = "10us"
input_grad = "5us"
weight_grad = "5us"
backward_all_to_all = { size = "16KB", algorithm = "pairwise" }
all_reduce = { size = "256KB", algorithm = "hierarchical" }
[[workload.layers]]
forward = "5us"
input_grad = "5us"
weight_grad = "5us"
forward_comm = { op = "all_gather", size = "64KB", group = "tp" }
input_grad_comm = { op = "all_to_all", size = "64KB", group = "ep" }
weight_grad_comm = { op = "reduce_scatter", size = "64KB", group = "dp_ep" }
"""


def training_hierarchical() -> Scenario:
    return (
        star(hosts=8, **LINK, nics_per_server=4, nvlink_bandwidth="200GB/s", nvlink_delay="25ns")
        | cc("none")
        | training(
            hosts=range(8),
            iterations=1,
            start="5us",
            local_ranks=4,
            chunks=2,
            tp=2,
            ep=2,
            layers=[
                layer("10us", backward="10us", forward_all_to_all={"size": "32KB", "algorithm": "hierarchical"}),
                layer(
                    "10us",
                    input_grad="5us",
                    weight_grad="5us",
                    backward_all_to_all={"algorithm": "pairwise", "size": "16KB"},
                    all_reduce={"size": "256KB", "algorithm": "hierarchical"},
                ),
                layer(
                    "5us",
                    input_grad="5us",
                    weight_grad="5us",
                    forward_comm={"op": "all_gather", "size": "64KB", "group": "tp"},
                    input_grad_comm={"op": "all_to_all", "size": "64KB", "group": "ep"},
                    weight_grad_comm={"op": "reduce_scatter", "size": "64KB", "group": "dp_ep"},
                ),
            ],
        )
    )


# Every key of a parallel training workload and its layers: 8 ranks, tp 2 x pp 2 x dp 2, ep 2.
PARALLEL_TRAINING = """
[topology]
kind = "star"
hosts = 8
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "none"
[workload]
kind = "parallel_training"
hosts = "0..8"
iterations = 1
start = "5us"
tp = 2
pp = 2
dp = 2
ep = 2
microbatches = 2
schedule = "interleaved_1f1b"
virtual_stages = 2
sequence_parallel = true
dp_mode = "zero"
dp_bucket = "64KB"
tp_algorithm = "direct"
dp_algorithm = "ring"
ep_algorithm = "pairwise"
activation_bytes = "16KB"
stragglers = [{ ranks = [3], slowdown = 1.5 }]
jitter = 0.05
[[workload.layers]]
forward = "10us"
input_grad = "10us"
weight_grad = "10us"
tp_collectives = 1
tp_bytes = "16KB"
ep_bytes = "8KB"
grad_bytes = "32KB"
repeat = 4
"""


# A parallel workload whose layers come from a model (a preset, every shape given over it),
# with some layers' times replaced.
PARALLEL_MODEL = """
[topology]
kind = "star"
hosts = 16
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "none"
[workload]
kind = "parallel_training"
iterations = 1
tp = 8
pp = 2
microbatches = 2
layer_times = [{ layers = [0, 5], forward = "100us" }, { layers = "1..3", input_grad = "50us", weight_grad = "40us" }]
[workload.model]
preset = "mixtral-8x7b"
hidden = 1024
layers = 4
heads = 16
kv_heads = 8
ffn_hidden = 2048
vocab = 32000
experts = 4
top_k = 2
moe_every = 2
seq_len = 512
micro_batch = 2
bytes_per_element = 2
grad_bytes_per_element = 4
mlp = "swiglu"
tie_embeddings = false
recompute = "selective"
gpu = { tflops = 989, efficiency = 0.4 }
"""


def parallel_training_model() -> Scenario:
    return (
        star(hosts=16, **LINK)
        | cc("none")
        | parallel_training(
            iterations=1,
            tp=8,
            pp=2,
            microbatches=2,
            model={
                "preset": "mixtral-8x7b",
                "hidden": 1024,
                "layers": 4,
                "heads": 16,
                "kv_heads": 8,
                "ffn_hidden": 2048,
                "vocab": 32000,
                "experts": 4,
                "top_k": 2,
                "moe_every": 2,
                "seq_len": 512,
                "micro_batch": 2,
                "bytes_per_element": 2,
                "grad_bytes_per_element": 4,
                "mlp": "swiglu",
                "tie_embeddings": False,
                "recompute": "selective",
                "gpu": {"tflops": 989, "efficiency": 0.4},
            },
            layer_times=[
                {"layers": [0, 5], "forward": "100us"},
                {"layers": "1..3", "input_grad": "50us", "weight_grad": "40us"},
            ],
        )
    )


def parallel_training_all_keys() -> Scenario:
    return (
        star(hosts=8, **LINK)
        | cc("none")
        | parallel_training(
            hosts=range(8),
            iterations=1,
            start="5us",
            tp=2,
            pp=2,
            dp=2,
            ep=2,
            microbatches=2,
            schedule="interleaved_1f1b",
            virtual_stages=2,
            sequence_parallel=True,
            dp_mode="zero",
            dp_bucket="64KB",
            tp_algorithm="direct",
            dp_algorithm="ring",
            ep_algorithm="pairwise",
            activation_bytes="16KB",
            stragglers=[{"ranks": [3], "slowdown": 1.5}],
            jitter=0.05,
            layers=[
                parallel_layer(
                    "10us",
                    input_grad="10us",
                    weight_grad="10us",
                    tp_collectives=1,
                    tp_bytes="16KB",
                    ep_bytes="8KB",
                    grad_bytes="32KB",
                    repeat=4,
                )
            ],
        )
    )


# A link of two parallel ones fails and comes back, another host's link slows down.
LINK_EVENTS = """
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
links_per_spine = 2
hosts_per_leaf = 2
link = { bandwidth = "100Gbps", delay = "1us" }
[switch]
routing = "round_robin"
failure_detection = "10us"
[cc]
algorithm = "none"
[workload]
kind = "permutation"
size = "200KB"
start = "1us"
[[events]]
at = "5us"
link = ["s0", "s2"]
index = 1
action = "fail"
detection = "2us"
[[events]]
at = "10us"
link = ["h3", "s1"]
action = "slow"
bandwidth = "25Gbps"
[[events]]
at = "20us"
link = ["s2", "s0"]
index = 1
action = "restore"
"""


def link_events() -> Scenario:
    return (
        leaf_spine(leaves=2, spines=2, links_per_spine=2, hosts_per_leaf=2, **LINK)
        | switch(routing="round_robin", failure_detection="10us")
        | cc("none")
        | permutation(size="200KB", start="1us")
        | event(at="5us", link=("s0", "s2"), index=1, action="fail", detection="2us")
        | event(at="10us", link=("h3", "s1"), action="slow", bandwidth="25Gbps")
        | event(at="20us", link=("s2", "s0"), index=1, action="restore")
    )


# A lossy switch (PFC off, egress queues capped, trimming), ECN tuned, every packet size and
# transport key of the NIC, Barre with lost probes; the incast tagged as one collective.
LOSSY = """
[switch]
buffer = "1MB"
egress_alpha = 0.5
control_priority = "data"
[switch.pfc]
enabled = false
[switch.trimming]
enabled = true
threshold = "200KB"
header = "80B"
[switch.ecn]
kmin = "20KB"
kmax = "200KB"
pmax = 0.5
reference_bandwidth = "25Gbps"
mark_at = "enqueue"
[topology]
kind = "star"
hosts = 5
link = { bandwidth = "100Gbps", delay = "1us" }
[nic]
mtu = "2000B"
header = "64B"
ack_size = "64B"
cnp_size = "72B"
pause_size = "68B"
nack_interval = "50us"
data_priority = 2
recovery = "selective"
sack_bitmap = 128
reorder_window = 32
probe_loss = 0.1
[cc]
algorithm = "barre"
[workload]
kind = "incast"
senders = "1..=4"
receiver = 0
size = "100KB"
collective = { kind = "other", group_size = 5 }
[output]
warn_above = "10GB"
"""


def lossy() -> Scenario:
    return (
        switch(buffer="1MB", egress_alpha=0.5, control_priority="data")
        | pfc(enabled=False)
        | trimming(enabled=True, threshold="200KB", header="80B")
        | ecn(kmin="20KB", kmax="200KB", pmax=0.5, reference_bandwidth="25Gbps", mark_at="enqueue")
        | star(hosts=5, **LINK)
        | nic(
            mtu="2000B",
            header="64B",
            ack_size="64B",
            cnp_size="72B",
            pause_size="68B",
            nack_interval="50us",
            data_priority=2,
            recovery="selective",
            sack_bitmap=128,
            reorder_window=32,
            probe_loss=0.1,
        )
        | cc("barre")
        | incast(senders="1..=4", receiver=0, size="100KB", collective=collective("other", 5))
        | output(warn_above="10GB")
    )


# Load balancing at the NIC: REPS with every setting, on a leaf-spine of ECMP switches.
REPS_LEAF_SPINE = """
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
link = { bandwidth = "100Gbps", delay = "1us" }
[nic]
recovery = "selective"
load_balancing = "reps"
entropies = 32
reps = { buffer = 4, reuse = 2, freeze = true, freeze_time = "5ms", explore = 8 }
[workload]
kind = "permutation"
size = "50KB"
"""


def reps_leaf_spine() -> Scenario:
    return (
        leaf_spine(leaves=2, spines=2, hosts_per_leaf=2, **LINK)
        | nic(recovery="selective", load_balancing="reps", entropies=32)
        | reps(buffer=4, reuse=2, freeze=True, freeze_time="5ms", explore=8)
        | permutation(size="50KB")
    )


# PFC's buffer pools set by hand, a pairwise all-to-all that starts late, flows that stop early
# or share a connection.
PFC_POOLS = """
[simulation]
seed = 7
stop_time = "1ms"
stall_timeout = "5s"
fast_forward = 0.02
nvlink = "fluid"
[topology]
kind = "star"
hosts = 4
link = { bandwidth = "100Gbps", delay = "1us" }
[switch.pfc]
dynamic_alpha = 0.25
headroom = "64KB"
reserve = "4KB"
[workload]
kind = "all_to_all"
hosts = "all"
algorithm = "pairwise"
start = "1us"
size = "50KB"
"""


def pfc_pools() -> Scenario:
    return (
        simulation(seed=7, stop_time="1ms", stall_timeout="5s", fast_forward=0.02, nvlink="fluid")
        | star(hosts=4, **LINK)
        | pfc(dynamic_alpha=0.25, headroom="64KB", reserve="4KB")
        | all_to_all(hosts="all", algorithm="pairwise", start="1us", size="50KB")
    )


CREDIT_LEAF_SPINE = """
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
link = { bandwidth = "100Gbps", delay = "1us" }
[switch]
routing = "adaptive"
flow_control = "credit"
[switch.credit]
buffer = "32KB"
block = "128B"
update_interval = "500ns"
[cc]
algorithm = "dcqcn"
[workload]
kind = "permutation"
size = "200KB"
"""


def credit_leaf_spine() -> Scenario:
    return (
        leaf_spine(leaves=2, spines=2, hosts_per_leaf=2, **LINK)
        | switch(routing="adaptive", flow_control="credit")
        | credit(buffer="32KB", block="128B", update_interval="500ns")
        | cc("dcqcn")
        | permutation(size="200KB")
    )


FLOWS_STOP_AND_CONNECTION = """
[topology]
kind = "star"
hosts = 3
link = { bandwidth = "100Gbps", delay = "1us" }
[workload]
kind = "flows"
flows = [
  { src = 1, dst = 0, size = "10MB", stop = "20us" },
  { src = 2, dst = 0, size = "100KB", connection = 0 },
  { src = 2, dst = 0, size = "100KB", connection = 0, start = "1us" },
]
"""


def flows_stop_and_connection() -> Scenario:
    return star(hosts=3, **LINK) | flows(
        [
            flow(1, 0, "10MB", stop="20us"),
            flow(2, 0, "100KB", connection=0),
            flow(2, 0, "100KB", connection=0, start="1us"),
        ]
    )


# Flowlet switching on a fat tree, routing chosen per tier; GPU servers of 2.
FLOWLET_FAT_TREE = """
[topology]
kind = "fat_tree"
k = 4
link = { bandwidth = "100Gbps", delay = "1us" }
nics_per_server = 2
nvlink = { bandwidth = "200GB/s", delay = "25ns" }
[switch]
routing = { default = "ecmp", leaf = "adaptive", spine = "flowlet", core = "spray" }
flowlet = { gap = "2us", pick = "adaptive", slots = 256 }
[cc]
algorithm = "none"
[workload]
kind = "all_reduce"
algorithm = "hierarchical"
local_ranks = 2
start = "1us"
chunks = 2
size = "64KB"
"""


def flowlet_fat_tree() -> Scenario:
    tiers: RoutingTiers = {"default": "ecmp", "leaf": "adaptive", "spine": "flowlet", "core": "spray"}
    return (
        fat_tree(k=4, **LINK, nics_per_server=2, nvlink_bandwidth="200GB/s", nvlink_delay="25ns")
        | switch(routing=tiers)
        | flowlet(gap="2us", pick="adaptive", slots=256)
        | cc("none")
        | all_reduce(algorithm="hierarchical", local_ranks=2, start="1us", chunks=2, size="64KB")
    )


# The adaptive routings switches implement, one per tier of a fat tree, each setting given.
ADAPTIVE_FAT_TREE = """
[topology]
kind = "fat_tree"
k = 4
link = { bandwidth = "100Gbps", delay = "1us" }
[switch]
routing = { leaf = "conga", spine = "dlb", core = "spray_threshold" }
dlb = { period = "2us", weight = 0.5, bands = 4, max_queue = "64KB", load_weight = 0.25 }
spray_threshold = { threshold = "16KB" }
conga = { dre_period = "2us", dre_alpha = 0.25, age = "100us", flowlet_gap = "0s", flowlet_slots = 1024 }
[cc]
algorithm = "none"
[workload]
kind = "permutation"
size = "64KB"
"""


def adaptive_fat_tree() -> Scenario:
    tiers: RoutingTiers = {"leaf": "conga", "spine": "dlb", "core": "spray_threshold"}
    return (
        fat_tree(k=4, **LINK)
        | switch(routing=tiers)
        | dlb(period="2us", weight=0.5, bands=4, max_queue="64KB", load_weight=0.25)
        | spray_threshold(threshold="16KB")
        | conga(dre_period="2us", dre_alpha=0.25, age="100us", flowlet_gap="0s", flowlet_slots=1024)
        | cc("none")
        | permutation(size="64KB")
    )


# The HPCC ns-3 simulator's ECMP with every setting given: its node ids (the switch first, as an
# ns-3 topology file may number it), another destination port, another draw of the seeds.
ECMP_NS3_STAR = """
[topology]
kind = "star"
hosts = 3
link = { bandwidth = "100Gbps", delay = "1us" }
[switch]
routing = "ecmp_ns3"
ecmp_ns3 = { host_ids = [1, 2, 3], switch_ids = [0], dport = 200, seed_offset = 1000 }
[cc]
algorithm = "none"
[workload]
kind = "incast"
senders = [1, 2]
receiver = 0
size = "64KB"
"""


def ecmp_ns3_star() -> Scenario:
    return (
        star(hosts=3, **LINK)
        | switch(routing="ecmp_ns3")
        | ecmp_ns3(host_ids=[1, 2, 3], switch_ids=[0], dport=200, seed_offset=1000)
        | cc("none")
        | incast(senders=[1, 2], receiver=0, size="64KB")
    )


# Fabric links of their own on a Clos and a leaf-spine of GPU servers; three jobs placed at
# random, by hand and packed, running the collectives with every key.
FABRIC_JOBS = """
[topology]
kind = "clos"
racks = 2
servers_per_rack = 2
gpus_per_server = 2
spines = 1
link = { bandwidth = "100Gbps", delay = "1us" }
fabric_link = { bandwidth = "200Gbps", delay = "500ns" }
nvlink = { bandwidth = "200GB/s", delay = "25ns" }
oversubscription = 2.0
[cc]
algorithm = "none"
[[jobs]]
ranks = 4
placement = "random"
seed = 3
[[jobs.workload]]
kind = "broadcast"
hosts = "0..=3"
root = 2
algorithm = "binomial_tree"
start = "1us"
chunks = 2
size = "64KB"
[[jobs.workload]]
kind = "all_gather"
hosts = "all"
algorithm = "direct"
start = "2us"
chunks = 2
size = "64KB"
[[jobs]]
hosts = [4, 5]
start = "3us"
[jobs.workload]
kind = "reduce_scatter"
hosts = "0..=1"
algorithm = "ring"
start = "1us"
chunks = 2
size = "64KB"
[[jobs]]
ranks = 2
[jobs.workload]
kind = "all_to_all"
algorithm = "hierarchical"
local_ranks = 2
flows_per_pair = 1
peers_in_flight = 1
start = "1us"
size = "16KB"
"""


def fabric_jobs() -> Scenario:
    return (
        clos(
            racks=2,
            servers_per_rack=2,
            gpus_per_server=2,
            spines=1,
            **LINK,
            fabric_bandwidth="200Gbps",
            fabric_delay="500ns",
            nvlink_bandwidth="200GB/s",
            nvlink_delay="25ns",
            oversubscription=2.0,
        )
        | cc("none")
        | job(
            broadcast(hosts=range(4), root=2, algorithm="binomial_tree", start="1us", chunks=2, size="64KB"),
            all_gather(hosts="all", algorithm="direct", start="2us", chunks=2, size="64KB"),
            ranks=4,
            placement="random",
            seed=3,
        )
        | job(
            reduce_scatter(hosts="0..=1", algorithm="ring", start="1us", chunks=2, size="64KB"),
            hosts=[4, 5],
            start="3us",
        )
        | job(
            all_to_all(
                algorithm="hierarchical", local_ranks=2, flows_per_pair=1, peers_in_flight=1, start="1us", size="16KB"
            ),
            ranks=2,
        )
    )


RAIL_FABRIC = """
[topology]
kind = "rail"
servers = 4
gpus_per_server = 2
servers_per_group = 2
spines = 2
link = { bandwidth = "100Gbps", delay = "1us" }
fabric_link = { bandwidth = "100Gbps", delay = "500ns" }
[workload]
kind = "all_reduce"
hosts = [7, 0, 3, 4]
size = "64KB"
"""


def rail_fabric() -> Scenario:
    return rail(
        servers=4,
        gpus_per_server=2,
        servers_per_group=2,
        spines=2,
        **LINK,
        fabric_bandwidth="100Gbps",
        fabric_delay="500ns",
    ) | all_reduce(hosts=(7, 0, 3, 4), size="64KB")


LEAF_SPINE_NVLINK = """
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
hosts_per_leaf = 4
nics_per_server = 2
link = { bandwidth = "100Gbps", delay = "1us" }
nvlink = { bandwidth = "200GB/s", delay = "25ns" }
[workload]
kind = "send_recv"
pairs = [[0, 1], [1, 4]]
size = "64KB"
start = "1us"
"""


def leaf_spine_nvlink() -> Scenario:
    return leaf_spine(
        leaves=2,
        spines=1,
        hosts_per_leaf=4,
        nics_per_server=2,
        **LINK,
        nvlink_bandwidth="200GB/s",
        nvlink_delay="25ns",
    ) | send_recv(pairs=[(0, 1), (1, 4)], size="64KB", start="1us")


# The Chakra trace of examples/chakra/, by absolute paths (text and dicts take relative ones
# from the working directory), on hosts 4, 1, 2, 3 of five.
CHAKRA_TRACE = REPO / "examples" / "chakra"
CHAKRA = f"""
[topology]
kind = "star"
hosts = 5
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[workload]
kind = "chakra"
trace = '{CHAKRA_TRACE / "tiny"}'
hosts = [4, 1, 2, 3]
comm_groups = '{CHAKRA_TRACE / "comm_groups.json"}'
ctrl_deps = "wait"
"""


def chakra_trace() -> Scenario:
    return star(hosts=5, **LINK) | chakra(
        trace=CHAKRA_TRACE / "tiny",
        hosts=[4, 1, 2, 3],
        comm_groups=CHAKRA_TRACE / "comm_groups.json",
        ctrl_deps="wait",
    )


EQUIVALENTS: list[tuple[str | Path, Callable[[], Scenario]]] = [
    (CHAKRA, chakra_trace),
    (REPO / "examples" / "training.toml", training_example),
    (REPO / "examples" / "jobs.toml", jobs_example),
    (REPO / "examples" / "pipeline-send-recv.toml", pipeline_send_recv),
    (TRAINING_HIERARCHICAL, training_hierarchical),
    (PARALLEL_TRAINING, parallel_training_all_keys),
    (PARALLEL_MODEL, parallel_training_model),
    (LINK_EVENTS, link_events),
    (LOSSY, lossy),
    (REPS_LEAF_SPINE, reps_leaf_spine),
    (PFC_POOLS, pfc_pools),
    (CREDIT_LEAF_SPINE, credit_leaf_spine),
    (FLOWS_STOP_AND_CONNECTION, flows_stop_and_connection),
    (FLOWLET_FAT_TREE, flowlet_fat_tree),
    (ADAPTIVE_FAT_TREE, adaptive_fat_tree),
    (ECMP_NS3_STAR, ecmp_ns3_star),
    (FABRIC_JOBS, fabric_jobs),
    (RAIL_FABRIC, rail_fabric),
    (LEAF_SPINE_NVLINK, leaf_spine_nvlink),
    (REPO / "examples" / "gpu-clos.toml", gpu_clos),
    (RAIL, rail_all_to_all),
    (REPO / "benches" / "s1_incast16_dcqcn.toml", s1),
    (REPO / "benches" / "s2_alltoall8.toml", s2),
    (REPO / "examples" / "pfc-deadlock.toml", pfc_deadlock),
    (REPO / "experiments" / "rocecc-single-switch" / "all_reduce_8.toml", all_reduce_8),
    (REPO / "experiments" / "pc4-clock-noise" / "incast.toml", pc4_incast),
    (LEAF_SPINE, leaf_spine_permutation),
    (LEAF_SPINE_PARALLEL_LINKS, leaf_spine_parallel_links),
    (PC4_ALL_TO_ALL, pc4_all_to_all),
    (FAT_TREE, fat_tree_flows),
    (DUMBBELL, dumbbell_incast),
]


@pytest.mark.parametrize(("toml", "build"), EQUIVALENTS, ids=[b.__name__ for _, b in EQUIVALENTS])
def test_a_built_scenario_runs_as_its_toml_file(
    toml: str | Path, build: Callable[[], Scenario], tmp_path: Path
) -> None:
    from_toml = aiccsim.run(toml)
    built = aiccsim.run(build())
    assert built.scenario == from_toml.scenario
    from_toml.write(tmp_path / "toml")
    built.write(tmp_path / "built")
    flows_csv = (tmp_path / "built" / "flows.csv").read_bytes()
    assert flows_csv == (tmp_path / "toml" / "flows.csv").read_bytes()
    assert flows_csv.count(b"\n") > 1, "a header and flows"


def test_or_merges_tables_and_replaces_another_kind_or_algorithm() -> None:
    s = switch(buffer="4MB") | pfc(xoff="40KB") | ecn(enabled=False) | pfc(xon_delta="8KB")
    assert s == {"switch": {"buffer": "4MB", "pfc": {"xoff": "40KB", "xon_delta": "8KB"}, "ecn": {"enabled": False}}}
    assert cc("dcqcn", g=0.5) | cc("dcqcn", byte_counter="10MB") == {
        "cc": {"algorithm": "dcqcn", "g": 0.5, "byte_counter": "10MB"}
    }
    assert cc("dcqcn", g=0.5) | cc("hpcc") == {"cc": {"algorithm": "hpcc"}}
    base = star(hosts=4, **LINK) | incast(senders=[1, 2], receiver=0, size="1MB")
    assert (base | all_reduce(size="4MB"))["workload"] == {"kind": "all_reduce", "size": "4MB"}
    # A later value wins; the left operand is left as it was; a plain dict works on either side.
    assert (base | star(hosts=8, **LINK))["topology"]["hosts"] == 8
    assert base["topology"]["hosts"] == 4
    merged = {"simulation": {"seed": 2}} | base
    assert isinstance(merged, Scenario) and merged["simulation"] == {"seed": 2} and "topology" in merged
    merged |= {"simulation": {"stop_time": "1ms"}}
    assert merged["simulation"] == {"seed": 2, "stop_time": "1ms"}
    # Arrays of tables add up, in order; a routing table per tier merges as any table.
    fail = event(at="1us", link=("s0", "h1"), action="fail")
    both = base | fail | event(at="2us", link=("s0", "h1"), action="restore")
    assert [e["action"] for e in both["events"]] == ["fail", "restore"]
    assert both["events"][0] == {"at": "1us", "link": ["s0", "h1"], "action": "fail"}
    tiers = switch(routing={"leaf": "spray"}) | switch(routing={"spine": "ecmp"}) | flowlet(gap="2us")
    assert tiers == {"switch": {"routing": {"leaf": "spray", "spine": "ecmp"}, "flowlet": {"gap": "2us"}}}


def test_host_sets_and_omitted_keys() -> None:
    assert incast(senders=range(1, 17), receiver=0, size="1MB")["workload"]["senders"] == "1..17"
    assert incast(senders=range(1, 8, 2), receiver=0, size="1MB")["workload"]["senders"] == [1, 3, 5, 7]
    assert permutation(hosts="0..4", size="1MB")["workload"]["hosts"] == "0..4"
    assert permutation(size="1MB") == {"workload": {"kind": "permutation", "size": "1MB"}}
    assert star(hosts=4, **LINK)["topology"] == {"kind": "star", "hosts": 4, "link": LINK}
    assert "fabric_link" not in fat_tree(k=4, **LINK)["topology"]
    # A layer's collective is a table, or its size alone.
    assert layer("1us", backward="2us", all_reduce="1MB") == {
        "forward": "1us",
        "backward": "2us",
        "all_reduce": {"size": "1MB"},
    }
    assert layer("1us", forward_all_to_all={"size": "1MB", "algorithm": "pairwise"})["forward_all_to_all"] == {
        "size": "1MB",
        "algorithm": "pairwise",
    }


def test_errors_come_from_the_simulator_naming_the_key() -> None:
    base = star(hosts=5, **LINK) | cc("dcqcn")
    with pytest.raises(aiccsim.ScenarioError) as e:
        aiccsim.run(base | incast(senders=range(1, 5), receiver=9, size="1MB"))
    assert (e.value.file, e.value.key) == ("<dict>", "workload.receiver")
    with pytest.raises(aiccsim.ScenarioError, match="range") as e:
        aiccsim.run(base | incast(senders=range(3, 3), receiver=0, size="1MB"))
    assert e.value.key == "workload.senders"
    with pytest.raises(aiccsim.ScenarioError, match="no unit") as e:
        aiccsim.run(base | switch(buffer=32) | incast(senders=[1], receiver=0, size="1MB"))  # type: ignore[arg-type]
    assert e.value.key == "switch.buffer"
    with pytest.raises(aiccsim.ScenarioError) as e:
        aiccsim.run(base | cc("dcqcn", gain=0.5) | incast(senders=[1], receiver=0, size="1MB"))
    assert e.value.key.startswith("cc") and "gain" in str(e.value)
    with pytest.raises(aiccsim.ScenarioError) as e:
        aiccsim.run(leaf_spine(leaves=2, spines=1, hosts_per_leaf=2, **LINK, fabric_bandwidth="400Gbps"))
    assert "fabric_link" in e.value.key and "delay" in str(e.value)


def test_collective_builders_run_their_schedules() -> None:
    """all_gather and reduce_scatter make n(n-1) flows tagged with their kind; halving-doubling
    all-reduce 2 n log2(n); broadcast n-1."""
    base = star(hosts=4, **LINK) | cc("none")
    for workload, kind, count in [
        (all_gather(size="400KB"), "all_gather", 12),
        (reduce_scatter(size="400KB", algorithm="direct"), "reduce_scatter", 12),
        (all_reduce(size="400KB", algorithm="halving_doubling"), "all_reduce", 16),
        (broadcast(size="400KB", root=2, algorithm="binomial_tree"), "broadcast", 3),
    ]:
        r = aiccsim.run(base | workload)
        assert len(r.flows) == count, kind
        assert set(r.flows["collective"]) == {f"{kind}:0"}
        assert r.summary["flows_finished"] == count
