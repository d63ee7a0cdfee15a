"""Scenario builders: each makes one part of a scenario (a topology, the congestion control, a
workload, a section of settings) as the dict that ``aiccsim.run`` accepts, and ``|`` puts the
parts together::

    from aiccsim.scenario import cc, incast, star, switch

    s = star(hosts=17, bandwidth="100Gbps", delay="1us") | switch(buffer="32MB") | cc("dcqcn")
    s = s | incast(senders=range(1, 17), receiver=0, size="10MB")
    aiccsim.run(s)

The keyword arguments are the keys of the scenario file (docs/scenario.md), with the same values:
quantities as strings with a unit (``"32MB"``, ``"1us"``). An argument left as ``None`` leaves
its key out, so the simulator's default applies. Host sets (``senders``, ``hosts``) take
``"all"``, a range string (``"1..=16"``), a Python ``range`` or a list of host numbers.

Nothing is checked here: ``aiccsim.run`` checks the result as it checks a file, and a bad value
raises ``aiccsim.ScenarioError`` naming the key (``<dict>: workload.receiver: host 9 does not
exist ...``).

Every section and key of docs/scenario.md has its builder (tests/python/test_scenario_schema.py
holds the two together): ``[cc]`` takes each algorithm's parameters as keyword arguments, and a
key that is a table of two quantities (a ``link``) is two arguments (``bandwidth``, ``delay``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypedDict, Union

__all__ = [
    "LayerCollective",
    "RoutingTiers",
    "Scenario",
    "Straggler",
    "all_gather",
    "all_reduce",
    "all_to_all",
    "broadcast",
    "cc",
    "chakra",
    "clocks",
    "clos",
    "collective",
    "conga",
    "credit",
    "custom",
    "dlb",
    "dumbbell",
    "ecmp_ns3",
    "ecn",
    "event",
    "fat_tree",
    "flow",
    "flowlet",
    "flows",
    "incast",
    "job",
    "layer",
    "leaf_spine",
    "link",
    "nic",
    "output",
    "parallel_layer",
    "parallel_training",
    "permutation",
    "pfc",
    "rail",
    "reduce_scatter",
    "reps",
    "send_recv",
    "simulation",
    "spray_threshold",
    "star",
    "switch",
    "trace",
    "training",
    "trimming",
]

HostSet = Union[str, range, Iterable[int]]


class RoutingTiers(TypedDict, total=False):
    """``switch.routing`` per tier of switches (``{"leaf": "spray", "spine": "ecmp"}``); a tier
    not named takes ``default``, and without it ``"ecmp"``."""

    default: str
    leaf: str
    spine: str
    core: str


class _CollectiveAlgorithm(TypedDict, total=False):
    algorithm: str


class LayerCollective(_CollectiveAlgorithm):
    """A training layer's all-reduce or all-to-all, ``{"size": "1MB", "algorithm": "ring"}``;
    ``algorithm`` may be left out (``"ring"`` for an all-reduce, ``"direct"`` for an
    all-to-all)."""

    size: str


class LayerComm(TypedDict, total=False):
    """A training layer's collective on every group of one parallel dimension, as SimAI's layer
    rows give it: ``{"op": "all_gather", "size": "1MB", "group": "tp"}``. ``op`` is
    ``"all_reduce"``, ``"all_gather"``, ``"reduce_scatter"`` or ``"all_to_all"``; ``group`` is
    ``"tp"``, ``"dp"``, ``"ep"``, ``"dp_ep"`` or ``"all"`` (default ``"tp"`` after a forward or
    input-gradient compute, ``"dp"`` after a weight-gradient one)."""

    op: str
    size: str
    group: str


class Gpu(TypedDict, total=False):
    """A model's GPU (docs/models.md): its peak dense ``tflops`` for the element type and the
    ``efficiency`` the layers reach (default 0.4)."""

    tflops: float
    efficiency: float


class Model(TypedDict, total=False):
    """``parallel_training(model=...)``, the ``[workload.model]`` table of docs/models.md: a
    ``preset`` (``"gpt3-13b"``, ``"gpt3-175b"``, ``"llama3-70b"``, ``"mixtral-8x7b"``) and any
    shape over it, and the ``gpu``."""

    preset: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    ffn_hidden: int
    vocab: int
    experts: int
    top_k: int
    moe_every: int
    seq_len: int
    micro_batch: int
    bytes_per_element: int
    grad_bytes_per_element: int
    mlp: str
    tie_embeddings: bool
    recompute: str
    gpu: Gpu


class LayerTimes(TypedDict, total=False):
    """Compute times of ``parallel_training(layer_times=[...])``: the ``layers`` they replace (a
    list of layer numbers, or a range string ``"1..5"``), and any of ``forward``,
    ``input_grad`` and ``weight_grad``."""

    layers: str | list[int]
    forward: str
    input_grad: str
    weight_grad: str


class Straggler(TypedDict):
    """A straggler of ``parallel_training(stragglers=[...])``: its ``ranks`` (a list, or a range
    string ``"0..4"``) compute ``slowdown`` times as long."""

    ranks: str | list[int]
    slowdown: float


class Scenario(dict[str, Any]):
    """A scenario, or part of one: a dict shaped like the TOML file.

    ``a | b`` is ``a`` with ``b``'s keys put in, tables merged key by key (``switch(buffer=...)
    | pfc(xoff=...)`` gives one ``switch`` table with both), as a sweep's ``set`` does. A table
    whose ``kind`` or ``algorithm`` differs from the one it meets replaces it whole, so that
    ``base | cc("hpcc")`` does not keep DCQCN's parameters. The lists of ``jobs`` and ``events``
    add up: ``base | job(...) | job(...)`` has both jobs. ``a`` itself is left unchanged.

    The values are a TOML document's (tables, arrays, strings, numbers, booleans), hence
    ``Any``, as ``json.loads`` gives them.
    """

    # dict's own `|` is typed for any key and value types and returns a plain dict; a Scenario's
    # merges tables and returns a Scenario, which that signature cannot express.
    def __or__(self, other: Mapping[str, Any]) -> Scenario:  # type: ignore[override]
        if not isinstance(other, Mapping):
            return NotImplemented
        return Scenario(_merge(self, other))

    def __ror__(self, other: Mapping[str, Any]) -> Scenario:  # type: ignore[override]
        if not isinstance(other, Mapping):
            return NotImplemented
        return Scenario(_merge(other, self))

    def __ior__(self, other: Mapping[str, Any]) -> Scenario:  # type: ignore[override]
        merged = _merge(self, other)
        self.clear()
        self.update(merged)
        return self


# Arrays of tables (`[[jobs]]`, `[[events]]`): each builder call makes one entry.
_LISTS = ("jobs", "events")


def _merge(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for key, value in b.items():
        old = out.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping) and not _other_variant(old, value):
            out[key] = _merge(old, value)
        elif key in _LISTS and isinstance(old, list) and isinstance(value, list):
            out[key] = old + value
        else:
            out[key] = value
    return out


def _other_variant(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return any(k in a and k in b and a[k] != b[k] for k in ("kind", "algorithm"))


def _table(**keys: object) -> dict[str, Any]:
    """The keys given, without those left as None, lists and ranges as lists."""
    return {k: _value(v) for k, v in keys.items() if v is not None}


def _value(v: object) -> object:
    if isinstance(v, (str, bytes, Mapping)) or not isinstance(v, Iterable):
        return v
    return [_value(x) for x in v]


def _hosts(hosts: HostSet | None) -> object:
    """A host set as the file writes it. A step-1 range becomes the range string (``"1..17"``),
    so that the resolved scenario (``run.json``) is the one a file with ``"1..=16"`` gives."""
    if isinstance(hosts, range) and hosts.step == 1:
        return f"{hosts.start}..{hosts.stop}"
    return _value(hosts)


def _link(bandwidth: str | None, delay: str | None) -> dict[str, Any] | None:
    if bandwidth is None and delay is None:
        return None
    return _table(bandwidth=bandwidth, delay=delay)


# --- Topologies -------------------------------------------------------------------------------


def star(
    *,
    hosts: int,
    bandwidth: str,
    delay: str,
    nics_per_server: int | None = None,
    nvlink_bandwidth: str | None = None,
    nvlink_delay: str | None = None,
) -> Scenario:
    """``[topology] kind = "star"``: every host on switch 0, host i on its port i. Every link
    has ``bandwidth`` and ``delay``; ``nics_per_server`` groups consecutive hosts into servers,
    whose GPUs ``nvlink_bandwidth`` and ``nvlink_delay`` join by NVLink (give both or neither)."""
    return Scenario(
        topology=_table(
            kind="star",
            hosts=hosts,
            link=_link(bandwidth, delay),
            nics_per_server=nics_per_server,
            nvlink=_link(nvlink_bandwidth, nvlink_delay),
        )
    )


def dumbbell(
    *,
    left: int,
    right: int,
    bandwidth: str,
    delay: str,
    bottleneck_bandwidth: str,
    bottleneck_delay: str,
) -> Scenario:
    """``[topology] kind = "dumbbell"``: ``left`` hosts on switch 0, ``right`` on switch 1, the
    two switches joined by one link of ``bottleneck_bandwidth`` and ``bottleneck_delay``."""
    return Scenario(
        topology=_table(
            kind="dumbbell",
            left=left,
            right=right,
            link=_link(bandwidth, delay),
            bottleneck=_link(bottleneck_bandwidth, bottleneck_delay),
        )
    )


def leaf_spine(
    *,
    leaves: int,
    spines: int,
    hosts_per_leaf: int,
    bandwidth: str,
    delay: str,
    fabric_bandwidth: str | None = None,
    fabric_delay: str | None = None,
    links_per_spine: int | None = None,
    nics_per_server: int | None = None,
    nvlink_bandwidth: str | None = None,
    nvlink_delay: str | None = None,
) -> Scenario:
    """``[topology] kind = "leaf_spine"``: host links of ``bandwidth`` and ``delay``;
    ``links_per_spine`` parallel leaf-to-spine links of ``fabric_bandwidth`` and
    ``fabric_delay`` (give both, or neither for the host links' values); NVLink as in ``star``."""
    return Scenario(
        topology=_table(
            kind="leaf_spine",
            leaves=leaves,
            spines=spines,
            hosts_per_leaf=hosts_per_leaf,
            link=_link(bandwidth, delay),
            fabric_link=_link(fabric_bandwidth, fabric_delay),
            links_per_spine=links_per_spine,
            nics_per_server=nics_per_server,
            nvlink=_link(nvlink_bandwidth, nvlink_delay),
        )
    )


def fat_tree(
    *,
    k: int,
    bandwidth: str,
    delay: str,
    fabric_bandwidth: str | None = None,
    fabric_delay: str | None = None,
    nics_per_server: int | None = None,
    nvlink_bandwidth: str | None = None,
    nvlink_delay: str | None = None,
) -> Scenario:
    """``[topology] kind = "fat_tree"``: a k-ary fat tree (k^3/4 hosts); host links of
    ``bandwidth`` and ``delay``, switch-to-switch links of ``fabric_bandwidth`` and
    ``fabric_delay`` (give both, or neither for the host links' values); NVLink as in ``star``."""
    return Scenario(
        topology=_table(
            kind="fat_tree",
            k=k,
            link=_link(bandwidth, delay),
            fabric_link=_link(fabric_bandwidth, fabric_delay),
            nics_per_server=nics_per_server,
            nvlink=_link(nvlink_bandwidth, nvlink_delay),
        )
    )


def clos(
    *,
    racks: int,
    servers_per_rack: int,
    spines: int,
    bandwidth: str,
    delay: str,
    gpus_per_server: int | None = None,
    fabric_bandwidth: str | None = None,
    fabric_delay: str | None = None,
    nvlink_bandwidth: str | None = None,
    nvlink_delay: str | None = None,
    oversubscription: float | None = None,
) -> Scenario:
    """``[topology] kind = "clos"``: racks of GPU servers (8 GPUs each unless
    ``gpus_per_server``), every GPU's NIC on its rack's ToR by a link of ``bandwidth`` and
    ``delay``, every ToR on every spine with up-links sized by ``oversubscription`` (1:
    non-blocking); NVLink as in ``star``."""
    return Scenario(
        topology=_table(
            kind="clos",
            racks=racks,
            servers_per_rack=servers_per_rack,
            gpus_per_server=gpus_per_server,
            spines=spines,
            link=_link(bandwidth, delay),
            fabric_link=_link(fabric_bandwidth, fabric_delay),
            nvlink=_link(nvlink_bandwidth, nvlink_delay),
            oversubscription=oversubscription,
        )
    )


def rail(
    *,
    servers: int,
    spines: int,
    bandwidth: str,
    delay: str,
    gpus_per_server: int | None = None,
    servers_per_group: int | None = None,
    fabric_bandwidth: str | None = None,
    fabric_delay: str | None = None,
    nvlink_bandwidth: str | None = None,
    nvlink_delay: str | None = None,
    oversubscription: float | None = None,
) -> Scenario:
    """``[topology] kind = "rail"``: rail-optimised; GPU i of every server of a group on that
    group's rail switch i, rail switches joined by spines; NVLink as in ``star``."""
    return Scenario(
        topology=_table(
            kind="rail",
            servers=servers,
            gpus_per_server=gpus_per_server,
            servers_per_group=servers_per_group,
            spines=spines,
            link=_link(bandwidth, delay),
            fabric_link=_link(fabric_bandwidth, fabric_delay),
            nvlink=_link(nvlink_bandwidth, nvlink_delay),
            oversubscription=oversubscription,
        )
    )


def custom(*, hosts: int, switches: int, links: Iterable[Mapping[str, Any]]) -> Scenario:
    """``[topology] kind = "custom"``: hosts ``h0``..., switches ``s0``... and ``links``, each
    made by ``link(a, b, bandwidth=..., delay=...)``. A node numbers its ports in the order of
    its links."""
    return Scenario(topology=_table(kind="custom", hosts=hosts, switches=switches, links=links))


def link(a: str, b: str, *, bandwidth: str, delay: str) -> dict[str, Any]:
    """One link of a ``custom`` topology, between nodes ``a`` and ``b`` (``"h3"``, ``"s0"``)."""
    return _table(a=a, b=b, bandwidth=bandwidth, delay=delay)


# --- Settings ---------------------------------------------------------------------------------


def simulation(
    *,
    seed: int | None = None,
    stop_time: str | None = None,
    stall_timeout: str | None = None,
    fast_forward: bool | float | None = None,
    nvlink: Literal["packet", "fluid"] | None = None,
) -> Scenario:
    """``[simulation]``: the seed, when to stop, when to call a run stalled, whether to skip
    the steady stretches of groups of flows (``fast_forward``: ``True``, or a tolerance such as
    ``0.02``), and whether transfers inside a GPU server cross NVLink packet by packet or as
    rates (``nvlink = "fluid"``)."""
    return Scenario(
        simulation=_table(
            seed=seed, stop_time=stop_time, stall_timeout=stall_timeout, fast_forward=fast_forward, nvlink=nvlink
        )
    )


def switch(
    *,
    buffer: str | None = None,
    routing: str | RoutingTiers | None = None,
    egress_alpha: float | None = None,
    failure_detection: str | None = None,
    control_priority: Literal["high", "data"] | None = None,
    flow_control: Literal["pfc", "credit"] | None = None,
) -> Scenario:
    """``[switch]``: the shared buffer and the routing (``"ecmp"``, ``"spray"``,
    ``"round_robin"``, ``"adaptive"``, ``"adaptive_spray"``, ``"flowlet"``, ``"dlb"``,
    ``"spray_threshold"``, ``"conga"``, ``"ecmp_ns3"``) of every switch, or a
    dict of them per tier (``{"leaf": "spray", "spine": "ecmp"}``, a ``RoutingTiers``);
    ``egress_alpha``, without PFC, the fraction of the free buffer one egress queue may hold;
    ``failure_detection``, how long after a link fails or comes back (``event(...)``) the
    switches route around it or over it again; ``control_priority``, where switches queue ACKs,
    NACKs and CNPs (``"high"``, or ``"data"`` behind the data, as the HPCC ns-3 simulator does);
    ``flow_control``, the links' lossless mechanism (``"pfc"``, or InfiniBand-style ``"credit"``).
    ``pfc(...)``, ``credit(...)``, ``ecn(...)``, ``flowlet(...)``, ``dlb(...)``,
    ``spray_threshold(...)``, ``conga(...)``, ``ecmp_ns3(...)`` and ``trimming(...)`` set its
    sub-tables."""
    return Scenario(
        switch=_table(
            buffer=buffer,
            routing=routing,
            egress_alpha=egress_alpha,
            failure_detection=failure_detection,
            control_priority=control_priority,
            flow_control=flow_control,
        )
    )


def flowlet(*, gap: str | None = None, pick: str | None = None, slots: int | None = None) -> Scenario:
    """``[switch.flowlet]``: flowlet switching, for the switches whose ``routing`` is
    ``"flowlet"``: a flow keeps its next hop while its packets come closer together than
    ``gap``; a new flowlet goes where ``pick`` says (``"random"`` or ``"adaptive"``); each
    switch's flowlet table has ``slots`` entries (a power of two)."""
    return Scenario(switch={"flowlet": _table(gap=gap, pick=pick, slots=slots)})


def dlb(
    *,
    period: str | None = None,
    weight: float | None = None,
    bands: int | None = None,
    max_queue: str | None = None,
    load_weight: float | None = None,
) -> Scenario:
    """``[switch.dlb]``: dynamic load balancing, for the switches whose ``routing`` is ``"dlb"``:
    every ``period`` each port's load and queue are folded into averages (``weight`` of the
    newest sample) and their mix (``load_weight`` of the load, the queue over ``max_queue``)
    quantised into ``bands``; a packet goes at random to a next hop of the best band."""
    return Scenario(
        switch={"dlb": _table(period=period, weight=weight, bands=bands, max_queue=max_queue, load_weight=load_weight)}
    )


def spray_threshold(*, threshold: str | None = None) -> Scenario:
    """``[switch.spray_threshold]``: a flow keeps its ECMP next hop until that port's queue passes
    ``threshold``, then sprays to the least-loaded hop (``routing = "spray_threshold"``)."""
    return Scenario(switch={"spray_threshold": _table(threshold=threshold)})


def ecmp_ns3(
    *,
    host_ids: Sequence[int] | None = None,
    switch_ids: Sequence[int] | None = None,
    dport: int | None = None,
    seed_offset: int | None = None,
) -> Scenario:
    """``[switch.ecmp_ns3]``: what the HPCC ns-3 simulator's ECMP hash reads, for switches whose
    ``routing`` is ``"ecmp_ns3"``: each host's and switch's ns-3 node id (``host_ids``,
    ``switch_ids``; absent, hosts first), every flow's destination port ``dport``, and
    ``seed_offset`` added to every switch's seed (0 is ns-3's)."""
    return Scenario(
        switch={
            "ecmp_ns3": _table(
                host_ids=None if host_ids is None else list(host_ids),
                switch_ids=None if switch_ids is None else list(switch_ids),
                dport=dport,
                seed_offset=seed_offset,
            )
        }
    )


def trimming(*, enabled: bool | None = None, threshold: str | None = None, header: str | None = None) -> Scenario:
    """``[switch.trimming]``: packet trimming on a lossy fabric (``pfc(enabled=False)``, with
    ``nic(recovery="selective")``): a data packet the switch has no room for, or whose egress
    queue would pass ``threshold``, is cut to ``header`` bytes and forwarded at the top priority;
    its receiver NACKs it. On when given; ``enabled=False`` turns it off."""
    return Scenario(switch={"trimming": _table(enabled=enabled, threshold=threshold, header=header)})


def conga(
    *,
    dre_period: str | None = None,
    dre_alpha: float | None = None,
    age: str | None = None,
    flowlet_gap: str | None = None,
    flowlet_slots: int | None = None,
) -> Scenario:
    """``[switch.conga]``: CONGA, for leaves whose ``routing`` is ``"conga"``: each port's rate
    estimator loses ``dre_alpha`` of itself every ``dre_period``; remote metrics are forgotten
    after ``age``; a flow picks again after a gap of ``flowlet_gap`` (``"0s"``: every packet),
    in a table of ``flowlet_slots`` entries."""
    return Scenario(
        switch={
            "conga": _table(
                dre_period=dre_period,
                dre_alpha=dre_alpha,
                age=age,
                flowlet_gap=flowlet_gap,
                flowlet_slots=flowlet_slots,
            )
        }
    )


def pfc(
    *,
    enabled: bool | None = None,
    xoff: str | None = None,
    dynamic_alpha: float | None = None,
    xon_delta: str | None = None,
    headroom: str | None = None,
    reserve: str | None = None,
) -> Scenario:
    """``[switch.pfc]``: priority flow control: the XOFF threshold, fixed (``xoff``) or dynamic
    (``dynamic_alpha``), its hysteresis, and each ingress port's ``headroom`` and ``reserve``."""
    return Scenario(
        switch={
            "pfc": _table(
                enabled=enabled,
                xoff=xoff,
                dynamic_alpha=dynamic_alpha,
                xon_delta=xon_delta,
                headroom=headroom,
                reserve=reserve,
            )
        }
    )


def credit(
    *,
    buffer: str | None = None,
    block: str | None = None,
    update_interval: str | None = None,
) -> Scenario:
    """``[switch.credit]``: credit-based flow control's settings (with
    ``switch(flow_control="credit")``): each switch ingress port's receive ``buffer`` per
    priority, the bytes per credit ``block``, and the ``update_interval`` of the credit updates
    (``"0ns"``: one per packet)."""
    return Scenario(switch={"credit": _table(buffer=buffer, block=block, update_interval=update_interval)})


def ecn(
    *,
    enabled: bool | None = None,
    kmin: str | None = None,
    kmax: str | None = None,
    pmax: float | None = None,
    reference_bandwidth: str | None = None,
    mark_at: str | None = None,
) -> Scenario:
    """``[switch.ecn]``: ECN marking."""
    return Scenario(
        switch={
            "ecn": _table(
                enabled=enabled,
                kmin=kmin,
                kmax=kmax,
                pmax=pmax,
                reference_bandwidth=reference_bandwidth,
                mark_at=mark_at,
            )
        }
    )


def nic(
    *,
    mtu: str | None = None,
    header: str | None = None,
    ack_size: str | None = None,
    cnp_size: str | None = None,
    pause_size: str | None = None,
    ack_every: int | None = None,
    ack_request: bool | None = None,
    ack_out_of_order: Literal["at_once", "coalesced"] | None = None,
    rto: str | None = None,
    nack_interval: str | None = None,
    data_priority: int | None = None,
    connections: str | None = None,
    recovery: str | None = None,
    sack_bitmap: int | None = None,
    reorder_window: int | None = None,
    probe_loss: float | None = None,
    load_balancing: Literal["flow", "oblivious", "reps"] | None = None,
    entropies: int | None = None,
) -> Scenario:
    """``[nic]``: packet sizes and transport timers, the same for every host; ``connections``
    is ``"persistent"`` (a collective's transfers between two ranks ride one queue pair) or
    ``"per_transfer"``; ``recovery`` is ``"go_back_n"`` or ``"selective"`` (with its bitmap of
    ``sack_bitmap`` packets and its ``reorder_window``); ``probe_loss`` is the fraction of RTT
    probes that get no reply (algorithms that probe, such as Barre); ``load_balancing`` is the
    entropy each data packet carries for ECMP switches: ``"flow"`` (one path per flow),
    ``"oblivious"`` or ``"reps"`` (a new one per packet, among ``entropies``; REPS reuses those
    acknowledged without an ECN mark). ``reps(...)`` sets its sub-table. ``ack_request`` adds
    Ultra Ethernet's immediate ACKs (AR flag, ECN mark, first packet, duplicate) to
    ``ack_every``; ``ack_out_of_order`` is when a selective receiver acknowledges a packet
    after a gap: ``"at_once"``, or ``"coalesced"`` (by the same rules as an in-order one, as
    the UEC reference does)."""
    return Scenario(
        nic=_table(
            mtu=mtu,
            header=header,
            ack_size=ack_size,
            cnp_size=cnp_size,
            pause_size=pause_size,
            ack_every=ack_every,
            ack_request=ack_request,
            ack_out_of_order=ack_out_of_order,
            rto=rto,
            nack_interval=nack_interval,
            data_priority=data_priority,
            connections=connections,
            recovery=recovery,
            sack_bitmap=sack_bitmap,
            reorder_window=reorder_window,
            probe_loss=probe_loss,
            load_balancing=load_balancing,
            entropies=entropies,
        )
    )


def reps(
    *,
    buffer: int | None = None,
    reuse: int | None = None,
    freeze: bool | None = None,
    freeze_time: str | None = None,
    explore: int | None = None,
) -> Scenario:
    """``[nic.reps]``: REPS (``nic(load_balancing="reps")``): each connection recycles the
    entropies of unmarked ACKs in a ring of ``buffer`` entries, each carrying ``reuse`` packets;
    with ``freeze``, a retransmission timeout makes it send only on those for ``freeze_time``,
    then ``explore`` packets take fresh entropies."""
    return Scenario(
        nic={"reps": _table(buffer=buffer, reuse=reuse, freeze=freeze, freeze_time=freeze_time, explore=explore)}
    )


def cc(algorithm: str, **parameters: object) -> Scenario:
    """``[cc]``: the congestion-control algorithm (``"dcqcn"``, ``"hpcc"``, ``"pc4"``, ...) and
    its parameters, which differ by algorithm: ``cc("dcqcn", byte_counter="10MB")``.
    ``aiccsim algorithms`` lists them. A class written in Python:
    ``cc("python", **{"class": "module:Class"}, path="...")``."""
    return Scenario(cc=_table(algorithm=algorithm, **parameters))


def clocks(*, offset: str | None = None, noise: str | None = None, noise_distribution: str | None = None) -> Scenario:
    """``[clocks]``: the error of the hosts' clocks."""
    return Scenario(clocks=_table(offset=offset, noise=noise, noise_distribution=noise_distribution))


def output(
    *,
    sample_interval: str | None = None,
    queue_switches: Iterable[int] | None = None,
    rate_flows: Iterable[int] | None = None,
    cc_state: bool | None = None,
    warmup: str | None = None,
    warn_above: str | None = None,
) -> Scenario:
    """``[output]``: the timelines (``queues.csv``, ``rates.csv``, with ``cc_state``
    ``cc_state.csv``) and what they cover, and the warm-up before which RTT and queuing-delay
    samples are not counted."""
    return Scenario(
        output=_table(
            sample_interval=sample_interval,
            queue_switches=queue_switches,
            rate_flows=rate_flows,
            cc_state=cc_state,
            warmup=warmup,
            warn_above=warn_above,
        )
    )


def trace(
    *, flows: Iterable[int] | None = None, nodes: Iterable[str] | None = None, max_rows: int | None = None
) -> Scenario:
    """``[output.trace]``: the per-packet trace (``trace.csv``) of these flows at these nodes
    (each filter left out lets everything through)."""
    return Scenario(output={"trace": _table(flows=flows, nodes=nodes, max_rows=max_rows)})


def event(
    *,
    at: str,
    link: tuple[str, str],
    action: str,
    index: int | None = None,
    bandwidth: str | None = None,
    detection: str | None = None,
) -> Scenario:
    """``[[events]]``: one change to a link at time ``at``; the link is named by its two end
    nodes (``("s0", "s2")``), and ``index`` picks one of several parallel links (all of them when
    left out). ``action`` is ``"slow"`` (to ``bandwidth``), ``"fail"`` or ``"restore"``; the
    switches notice a failure or a restore ``detection`` later (``switch.failure_detection``
    when left out). ``base | event(...) | event(...)`` has both events, in that order."""
    return Scenario(
        events=[_table(at=at, link=link, index=index, action=action, bandwidth=bandwidth, detection=detection)]
    )


# --- Workloads --------------------------------------------------------------------------------


def flows(flows: Iterable[Mapping[str, Any]]) -> Scenario:
    """``[workload] kind = "flows"``: an explicit list, each made by ``flow(...)``; flow ids
    follow the list."""
    return Scenario(workload=_table(kind="flows", flows=flows))


def flow(
    src: int,
    dst: int,
    size: str,
    *,
    start: str | None = None,
    collective: Mapping[str, Any] | None = None,
    after: Iterable[int] | None = None,
    after_acked: Iterable[int] | None = None,
    stop: str | None = None,
    connection: int | None = None,
) -> dict[str, Any]:
    """One flow of ``flows([...])``: ``size`` bytes from host ``src`` to host ``dst``, starting at
    ``start``, once the flows of ``after`` (earlier ids) are delivered and those of
    ``after_acked`` acknowledged at their senders; flows naming the same ``connection`` between
    the same hosts ride one queue pair, one after another."""
    return _table(
        src=src,
        dst=dst,
        size=size,
        start=start,
        collective=collective,
        after=after,
        after_acked=after_acked,
        stop=stop,
        connection=connection,
    )


def incast(
    *,
    senders: HostSet,
    receiver: int,
    size: str,
    start: str | None = None,
    flows_per_sender: int | None = None,
    collective: Mapping[str, Any] | None = None,
) -> Scenario:
    """``[workload] kind = "incast"``: every sender sends ``size`` to ``receiver`` at ``start``."""
    return Scenario(
        workload=_table(
            kind="incast",
            senders=_hosts(senders),
            receiver=receiver,
            size=size,
            start=start,
            flows_per_sender=flows_per_sender,
            collective=collective,
        )
    )


def all_to_all(
    *,
    size: str,
    hosts: HostSet | None = None,
    algorithm: str | None = None,
    flows_per_pair: int | None = None,
    peers_in_flight: int | None = None,
    local_ranks: int | None = None,
    start: str | None = None,
    chunks: int | None = None,
) -> Scenario:
    """``[workload] kind = "all_to_all"``: every member sends ``size`` to every other member,
    ``"direct"`` (all at once), ``"pairwise"`` (in rounds of ``peers_in_flight`` peers) or
    ``"hierarchical"`` (inside groups of ``local_ranks``, then across between same-index ranks),
    in ``chunks`` pipelined chunks."""
    return Scenario(
        workload=_table(
            kind="all_to_all",
            hosts=_hosts(hosts),
            size=size,
            algorithm=algorithm,
            flows_per_pair=flows_per_pair,
            peers_in_flight=peers_in_flight,
            local_ranks=local_ranks,
            start=start,
            chunks=chunks,
        )
    )


def job(
    *workloads: Mapping[str, Any],
    name: str | None = None,
    hosts: HostSet | None = None,
    ranks: int | None = None,
    placement: str | None = None,
    seed: int | None = None,
    start: str | None = None,
) -> Scenario:
    """``[[jobs]]``: one job of several sharing the fabric. ``workloads`` are made by the
    workload builders (``all_reduce(size="8MB")``, ...), on the job's ranks, run one after
    another; give ``hosts``, or ``ranks`` and a ``placement`` (``"packed"``, ``"spread"``,
    ``"random"`` with ``seed``). ``base | job(...) | job(...)`` has both jobs."""
    tables = [w["workload"] for w in workloads]
    if not tables:
        raise ValueError("job(): give it at least one workload, e.g. job(all_reduce(size='8MB'), ranks=8)")
    return Scenario(
        jobs=[
            _table(
                name=name,
                hosts=_hosts(hosts),
                ranks=ranks,
                placement=placement,
                seed=seed,
                start=start,
                workload=tables[0] if len(tables) == 1 else tables,
            )
        ]
    )


def send_recv(
    *, pairs: Iterable[tuple[int, int]], size: str, start: str | None = None, chunks: int | None = None
) -> Scenario:
    """``[workload] kind = "send_recv"``: ``size`` bytes from the first host of each pair to
    the second, on the pair's connection, in ``chunks`` chunks."""
    return Scenario(
        workload=_table(kind="send_recv", pairs=[list(p) for p in pairs], size=size, start=start, chunks=chunks)
    )


def permutation(*, size: str, hosts: HostSet | None = None, start: str | None = None) -> Scenario:
    """``[workload] kind = "permutation"``: each member sends ``size`` to another, drawn from
    the seed; every member receives one flow."""
    return Scenario(workload=_table(kind="permutation", hosts=_hosts(hosts), size=size, start=start))


def all_reduce(
    *,
    size: str,
    hosts: HostSet | None = None,
    algorithm: str | None = None,
    start: str | None = None,
    local_ranks: int | None = None,
    chunks: int | None = None,
) -> Scenario:
    """``[workload] kind = "all_reduce"``: an all-reduce of ``size`` bytes per rank, ``"ring"``,
    ``"direct"``, ``"halving_doubling"`` or ``"hierarchical"`` (in groups of ``local_ranks``),
    as point-to-point flows with dependencies, in ``chunks`` pipelined chunks."""
    return Scenario(
        workload=_table(
            kind="all_reduce",
            hosts=_hosts(hosts),
            size=size,
            algorithm=algorithm,
            start=start,
            local_ranks=local_ranks,
            chunks=chunks,
        )
    )


def all_gather(
    *,
    size: str,
    hosts: HostSet | None = None,
    algorithm: str | None = None,
    start: str | None = None,
    chunks: int | None = None,
) -> Scenario:
    """``[workload] kind = "all_gather"``: every rank's block of a ``size``-byte buffer onto
    every rank, ``"ring"`` or ``"direct"``."""
    return Scenario(
        workload=_table(
            kind="all_gather", hosts=_hosts(hosts), size=size, algorithm=algorithm, start=start, chunks=chunks
        )
    )


def broadcast(
    *,
    size: str,
    hosts: HostSet | None = None,
    root: int | None = None,
    algorithm: str | None = None,
    start: str | None = None,
    chunks: int | None = None,
) -> Scenario:
    """``[workload] kind = "broadcast"``: ``size`` bytes from ``root`` (the first member by
    default) to every other member, ``"ring"``, ``"direct"`` or ``"binomial_tree"``."""
    return Scenario(
        workload=_table(
            kind="broadcast", hosts=_hosts(hosts), root=root, size=size, algorithm=algorithm, start=start, chunks=chunks
        )
    )


def reduce_scatter(
    *,
    size: str,
    hosts: HostSet | None = None,
    algorithm: str | None = None,
    start: str | None = None,
    chunks: int | None = None,
) -> Scenario:
    """``[workload] kind = "reduce_scatter"``: each rank's ``size``-byte buffer summed, block i of
    the sum onto rank i, ``"ring"`` or ``"direct"``."""
    return Scenario(
        workload=_table(
            kind="reduce_scatter", hosts=_hosts(hosts), size=size, algorithm=algorithm, start=start, chunks=chunks
        )
    )


def training(
    *,
    iterations: int,
    layers: Iterable[Mapping[str, Any]],
    hosts: HostSet | None = None,
    start: str | None = None,
    local_ranks: int | None = None,
    chunks: int | None = None,
    tp: int | None = None,
    ep: int | None = None,
) -> Scenario:
    """``[workload] kind = "training"``: ``iterations`` of a training loop on the ranks
    ``hosts``, over ``layers`` (from the input to the output), each made by ``layer(...)``: every
    layer's forward compute, then every layer's backward compute from the top, with the layers'
    collectives between them. ``local_ranks`` groups the ranks of hierarchical collectives;
    ``chunks`` pipelines every collective; ``tp`` and ``ep`` size the tensor- and
    expert-parallel groups the layers' ``LayerComm`` collectives run on."""
    return Scenario(
        workload=_table(
            kind="training",
            hosts=_hosts(hosts),
            iterations=iterations,
            start=start,
            local_ranks=local_ranks,
            chunks=chunks,
            tp=tp,
            ep=ep,
            layers=layers,
        )
    )


def chakra(
    *,
    trace: str | os.PathLike[str],
    hosts: HostSet | None = None,
    comm_groups: str | os.PathLike[str] | None = None,
    ctrl_deps: Literal["wait", "ignore"] | None = None,
) -> Scenario:
    """``[workload] kind = "chakra"``: a Chakra execution trace, ``trace`` naming the folder of
    its files (``<prefix>.<rank>.et``) or their prefix; rank r runs on the r-th host of
    ``hosts``. ``comm_groups`` is a JSON file of the process groups' ranks; ``ctrl_deps="ignore"``
    orders nodes by their ``data_deps`` alone (traces converted from PyTorch). Relative paths
    are taken from the scenario file's folder, or the working directory for a scenario given as
    text or a dict."""
    return Scenario(
        workload=_table(
            kind="chakra",
            trace=os.fspath(trace),
            hosts=_hosts(hosts),
            comm_groups=None if comm_groups is None else os.fspath(comm_groups),
            ctrl_deps=ctrl_deps,
        )
    )


def layer(
    forward: str,
    *,
    backward: str | None = None,
    input_grad: str | None = None,
    weight_grad: str | None = None,
    all_reduce: str | LayerCollective | None = None,
    forward_all_to_all: str | LayerCollective | None = None,
    backward_all_to_all: str | LayerCollective | None = None,
    forward_comm: LayerComm | None = None,
    input_grad_comm: LayerComm | None = None,
    weight_grad_comm: LayerComm | None = None,
) -> dict[str, Any]:
    """One layer of ``training(layers=[...])``: its ``forward`` compute time and its backward
    one, whole (``backward``) or split into ``input_grad`` then ``weight_grad``; the weight
    gradient's ``all_reduce``, and all-to-alls after the forward compute and after
    ``input_grad``. Each collective is a ``LayerCollective`` (``{"size": "1MB", "algorithm":
    "ring"}``), or its size alone (``"1MB"``). ``forward_comm``, ``input_grad_comm`` and
    ``weight_grad_comm`` are a ``LayerComm`` each: a collective on every group of one parallel
    dimension after that compute (SimAI's layer rows)."""
    return _table(
        forward=forward,
        backward=backward,
        input_grad=input_grad,
        weight_grad=weight_grad,
        all_reduce=_layer_collective(all_reduce),
        forward_all_to_all=_layer_collective(forward_all_to_all),
        backward_all_to_all=_layer_collective(backward_all_to_all),
        forward_comm=forward_comm,
        input_grad_comm=input_grad_comm,
        weight_grad_comm=weight_grad_comm,
    )


def parallel_training(
    *,
    iterations: int,
    layers: Iterable[Mapping[str, Any]] | None = None,
    model: Model | None = None,
    layer_times: Iterable[LayerTimes] | None = None,
    hosts: HostSet | None = None,
    start: str | None = None,
    tp: int | None = None,
    pp: int | None = None,
    dp: int | None = None,
    ep: int | None = None,
    microbatches: int | None = None,
    schedule: str | None = None,
    virtual_stages: int | None = None,
    sequence_parallel: bool | None = None,
    dp_mode: str | None = None,
    dp_bucket: str | None = None,
    tp_algorithm: str | None = None,
    dp_algorithm: str | None = None,
    ep_algorithm: str | None = None,
    activation_bytes: str | None = None,
    stragglers: Iterable[Straggler] | None = None,
    jitter: float | None = None,
) -> Scenario:
    """``[workload] kind = "parallel_training"``: ``iterations`` of a model split over ``tp``
    tensor-, ``pp`` pipeline-, ``dp`` data- and ``ep`` expert-parallel ranks (Megatron-LM's
    grouping), ``microbatches`` per iteration in a pipeline ``schedule`` (``"gpipe"``,
    ``"1f1b"``, ``"interleaved_1f1b"`` with ``virtual_stages``), over ``layers`` made by
    ``parallel_layer(...)``; ``activation_bytes`` go between stages per microbatch, gradients are
    reduced in buckets of ``dp_bucket`` (``dp_mode`` ``"all_reduce"`` or ``"zero"``);
    ``stragglers`` and ``jitter`` slow ranks' compute. Instead of ``layers``, ``model`` (a
    ``[workload.model]`` table, docs/models.md: ``{"preset": "gpt3-13b", "gpu": {"tflops":
    989}}``) gives every layer from a model's shapes; ``layer_times`` replaces chosen layers'
    compute times."""
    return Scenario(
        workload=_table(
            kind="parallel_training",
            hosts=_hosts(hosts),
            iterations=iterations,
            start=start,
            tp=tp,
            pp=pp,
            dp=dp,
            ep=ep,
            microbatches=microbatches,
            schedule=schedule,
            virtual_stages=virtual_stages,
            sequence_parallel=sequence_parallel,
            dp_mode=dp_mode,
            dp_bucket=dp_bucket,
            tp_algorithm=tp_algorithm,
            dp_algorithm=dp_algorithm,
            ep_algorithm=ep_algorithm,
            activation_bytes=activation_bytes,
            layers=layers,
            model=model,
            layer_times=layer_times,
            stragglers=stragglers,
            jitter=jitter,
        )
    )


def parallel_layer(
    forward: str,
    *,
    input_grad: str,
    weight_grad: str,
    tp_collectives: int | None = None,
    tp_bytes: str | None = None,
    ep_bytes: str | None = None,
    grad_bytes: str | None = None,
    repeat: int | None = None,
) -> dict[str, Any]:
    """One row of ``parallel_training(layers=[...])``: a layer's compute times on one rank for
    one microbatch, the buffer of each of its ``tp_collectives`` tensor-parallel collectives,
    the tokens its experts exchange (``ep_bytes``), its weight gradient (``grad_bytes``), for
    ``repeat`` identical layers."""
    return _table(
        forward=forward,
        input_grad=input_grad,
        weight_grad=weight_grad,
        tp_collectives=tp_collectives,
        tp_bytes=tp_bytes,
        ep_bytes=ep_bytes,
        grad_bytes=grad_bytes,
        repeat=repeat,
    )


def _layer_collective(c: str | LayerCollective | None) -> Mapping[str, object] | None:
    return {"size": c} if isinstance(c, str) else c


def collective(kind: str, group_size: int, *, id: int | None = None) -> dict[str, Any]:
    """A collective tag for ``flow(...)`` or ``incast(...)``: ``kind`` (``"all_reduce"``,
    ``"all_to_all"``, ...), the number of ranks, and which instance (``id``, default 0)."""
    return _table(kind=kind, group_size=group_size, id=id)
