"""`aiccsim.scenario` covers the whole scenario schema: every key of docs/scenario.md's tables is
an argument of a builder and every argument a documented key; every argument of every builder
is given in a built scenario that the simulator runs and finds the same as its TOML file
(test_scenario_builders.EQUIVALENTS); and every key the simulator writes back into a resolved
scenario (run.json, every default filled in) is one a builder can set.

A new key or section in the schema fails here until its builder has it, with a documented,
tested argument."""

from __future__ import annotations

import inspect
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator
from typing import Any, get_args, get_type_hints, is_typeddict

import aiccsim
from aiccsim import scenario
from aiccsim.scenario import (
    LayerCollective,
    LayerComm,
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
from test_scenario_builders import EQUIVALENTS

# A builder function, or a TypedDict that a builder takes as a table (`switch(routing=...)`).
Builder = Callable[..., Any] | type

# docs/scenario.md's key tables by heading, in the order the section has them: the builders
# that take each table's keys.
DOCS: dict[str, list[tuple[Builder, ...]]] = {
    "`[simulation]`": [(simulation,)],
    # A link value's two keys: every topology takes them, and `link(...)` of a custom topology.
    "`[topology]`": [(star, dumbbell, leaf_spine, fat_tree, clos, rail, link)],
    '`kind = "star"`': [(star,)],
    '`kind = "dumbbell"`': [(dumbbell,)],
    '`kind = "leaf_spine"`': [(leaf_spine,)],
    '`kind = "fat_tree"`': [(fat_tree,)],
    '`kind = "clos"`': [(clos,)],
    '`kind = "rail"`': [(rail,)],
    '`kind = "custom"`': [(custom,), (link,)],
    "`[switch]`": [(switch,)],
    "Routing per tier": [(RoutingTiers,)],
    "`[switch.flowlet]`": [(flowlet,)],
    "`[switch.dlb]`": [(dlb,)],
    "`[switch.spray_threshold]`": [(spray_threshold,)],
    "`[switch.conga]`": [(conga,)],
    "`[switch.ecmp_ns3]`": [(ecmp_ns3,)],
    "`[switch.pfc]`": [(pfc,)],
    "`[switch.credit]`": [(credit,)],
    "`[switch.ecn]`": [(ecn,)],
    "`[switch.trimming]`": [(trimming,)],
    "`[nic]`": [(nic,)],
    "Load balancing: per-flow, oblivious spraying, REPS": [(reps,)],
    "`[clocks]`": [(clocks,)],
    # The collective tag of a flow or an incast.
    "`[workload]`": [(collective,)],
    '`kind = "flows"`': [(flows,), (flow,)],
    '`kind = "incast"`': [(incast,)],
    '`kind = "all_to_all"`': [(all_to_all,)],
    '`kind = "all_reduce"`': [(all_reduce,)],
    '`kind = "all_gather"` and `kind = "reduce_scatter"`': [(all_gather, reduce_scatter)],
    '`kind = "broadcast"`': [(broadcast,)],
    '`kind = "send_recv"`': [(send_recv,)],
    '`kind = "training"`': [(training,), (layer,)],
    '`kind = "parallel_training"`': [(parallel_training,), (parallel_layer,)],
    '`kind = "permutation"`': [(permutation,)],
    '`kind = "chakra"`': [(chakra,)],
    "`[[jobs]]`": [(job,)],
    "`[output]`": [(output,)],
    "`[output.trace]`": [(trace,)],
    "`[[events]]`": [(event,)],
}
# Each `algorithm = "..."` section of [cc] lists that algorithm's parameters: `cc` takes any.
CC_ALGORITHM = re.compile(r'`algorithm = "\w+"`')
# Sections whose key tables are not scenario keys: the dotted keys that draw warnings.
NOT_KEYS = {"Warnings"}

# A key whose value is a table of a bandwidth and a delay is two arguments.
QUANTITY_PAIRS = {
    "link": ("bandwidth", "delay"),
    "fabric_link": ("fabric_bandwidth", "fabric_delay"),
    "nvlink": ("nvlink_bandwidth", "nvlink_delay"),
    "bottleneck": ("bottleneck_bandwidth", "bottleneck_delay"),
}
# Keys that name a sub-table with a builder of its own.
SUBTABLES: dict[tuple[Builder, str], Builder] = {
    (switch, "pfc"): pfc,
    (switch, "credit"): credit,
    (switch, "ecn"): ecn,
    (switch, "flowlet"): flowlet,
    (switch, "dlb"): dlb,
    (switch, "spray_threshold"): spray_threshold,
    (switch, "conga"): conga,
    (switch, "ecmp_ns3"): ecmp_ns3,
    (nic, "reps"): reps,
    (switch, "trimming"): trimming,
    (output, "trace"): trace,
}
# Arguments that are no table's key: what selects the [cc] table (the table of algorithms has
# them), and a job's workloads, `workload` in the file (one, or a list run in order).
UNDOCUMENTED = {(cc, "algorithm"), (job, "workloads")}
RENAMED = {(job, "workload"): "workloads"}
# A layer's `{ size, algorithm }` and `{ op, size, group }`, and a straggler, are described in
# their table's text, not in a table of their own.
# A model's table and its GPU are in docs/models.md.
NO_TABLE = {LayerCollective, LayerComm, scenario.Straggler, scenario.LayerTimes, scenario.Model, scenario.Gpu}


def docs_tables() -> Iterator[tuple[str, int, list[str]]]:
    """(heading, index of the table in its section, keys) of every `| Key |` table of
    docs/scenario.md; a row may name several keys (`a`, `b`)."""
    heading, index, keys = "", 0, None
    for line in (REPO / "docs" / "scenario.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            heading, index = line.lstrip("#").strip(), 0
        if keys is not None and not line.startswith("|"):
            yield heading, index - 1, keys
            keys = None
        if re.match(r"\|\s*Key\s*\|", line):
            keys, index = [], index + 1
        elif keys is not None and not line.startswith("|-"):
            keys += re.findall(r"`([^`]+)`", line.split("|")[1])
    if keys is not None:
        yield heading, index - 1, keys


def arguments(builder: Builder) -> set[str]:
    """A builder's arguments (a TypedDict's keys), without `**parameters`."""
    if is_typeddict(builder):
        return set(typing.get_type_hints(builder))
    return {p.name for p in inspect.signature(builder).parameters.values() if p.kind != p.VAR_KEYWORD}


def takes_any_key(builder: Builder) -> bool:
    if is_typeddict(builder):
        return False
    return any(p.kind == p.VAR_KEYWORD for p in inspect.signature(builder).parameters.values())


def as_arguments(builder: Builder, key: str) -> set[str]:
    """The arguments of `builder` that a documented key is: itself, or the two of a link."""
    key = RENAMED.get((builder, key), key)
    if (builder, key) in SUBTABLES:
        return set()  # the sub-table's builder takes its keys
    if key not in arguments(builder) and key in QUANTITY_PAIRS:
        return set(QUANTITY_PAIRS[key])
    return {key}


def public_builders() -> list[Builder]:
    return [getattr(scenario, n) for n in scenario.__all__ if getattr(scenario, n) is not Scenario]


def test_the_docs_tables_are_read() -> None:
    """The parser finds the tables the other tests rely on (a changed table layout fails here,
    not by finding nothing)."""
    found = {(h, i): keys for h, i, keys in docs_tables()}
    assert found[("`[simulation]`", 0)] == ["seed", "stop_time", "stall_timeout", "fast_forward", "nvlink"]
    assert found[('`kind = "custom"`', 1)] == ["a", "b", "bandwidth", "delay"]
    assert "reserve" in found[("`[switch.pfc]`", 0)]
    assert len(found) > 40


def test_every_documented_key_is_a_builder_argument_and_back() -> None:
    documented: dict[Builder, set[str]] = {}
    missing, unmapped = [], []
    for heading, index, keys in docs_tables():
        if heading in NOT_KEYS:
            continue
        if CC_ALGORITHM.fullmatch(heading):
            assert takes_any_key(cc), "cc(algorithm, **parameters) takes every algorithm's parameters"
            documented.setdefault(cc, set())
            continue
        tables = DOCS.get(heading)
        if tables is None or index >= len(tables):
            unmapped.append(f"{heading} (table {index + 1}): {keys}")
            continue
        for builder in tables[index]:
            for key in keys:
                args = as_arguments(builder, key)
                if not args <= arguments(builder):
                    missing.append(f"{heading}: `{key}` is no argument of {builder.__name__}")
                documented.setdefault(builder, set()).update(args)
    assert not unmapped, (
        "docs/scenario.md has key tables no builder is mapped to (add the builder to aiccsim/scenario.py "
        f"and map it in DOCS): {unmapped}"
    )
    assert not missing, missing
    undocumented = []
    for builder in public_builders():
        if builder in NO_TABLE:
            continue
        extra = arguments(builder) - documented.get(builder, set())
        extra -= {arg for b, arg in UNDOCUMENTED if b is builder}
        if extra or builder not in documented:
            undocumented.append(f"{builder.__name__}: {sorted(extra) or 'in no table'}")
    assert not undocumented, f"builder arguments docs/scenario.md does not have: {undocumented}"


def test_the_docs_map_has_no_stale_heading() -> None:
    headings = {h for h, _, _ in docs_tables()}
    assert set(DOCS) <= headings, set(DOCS) - headings


def _typeddict_keys(builder: Callable[..., Any]) -> dict[str, set[str]]:
    """Per argument of `builder` that takes a TypedDict (`routing`, a layer's collectives), its
    keys."""
    out = {}
    for name, hint in get_type_hints(builder).items():
        for t in get_args(hint) or (hint,):
            if is_typeddict(t):
                out[name] = set(get_type_hints(t))
    return out


def _given_arguments(build: Callable[[], Scenario]) -> set[tuple[str, str]]:
    """(builder, argument) for every argument given (not None, not empty) in a call of a public
    builder while `build` runs; a TypedDict argument's keys as `argument.key`."""
    codes = {b.__code__: b for b in public_builders() if isinstance(b, types.FunctionType)}
    given: set[tuple[str, str]] = set()

    def profile(frame: types.FrameType, what: str, _: object) -> None:
        builder = codes.get(frame.f_code) if what == "call" else None
        if builder is None:
            return
        for name, p in inspect.signature(builder).parameters.items():
            value = frame.f_locals.get(name)
            if p.kind == p.VAR_KEYWORD or value is None or value == ():
                continue
            given.add((builder.__name__, name))
            if isinstance(value, dict):
                given.update((builder.__name__, f"{name}.{k}") for k in value)

    sys.setprofile(profile)
    try:
        build()
    finally:
        sys.setprofile(None)
    return given


def test_every_builder_argument_is_run_against_its_toml_file() -> None:
    """Each argument of each builder, and each key of a TypedDict argument, is given in some
    built scenario of EQUIVALENTS, which the simulator runs and compares with its TOML file."""
    given = set().union(*(_given_arguments(build) for _, build in EQUIVALENTS))
    wanted = set()
    for builder in public_builders():
        if is_typeddict(builder):
            continue
        wanted |= {(builder.__name__, a) for a in arguments(builder)}
        for name, keys in _typeddict_keys(builder).items():
            wanted |= {(builder.__name__, f"{name}.{k}") for k in keys}
    assert not wanted - given, f"never given in test_scenario_builders.EQUIVALENTS: {sorted(wanted - given)}"


def _resolved_keys(value: object, path: str) -> Iterator[tuple[str, str]]:
    """(table path, key) of every key of a resolved scenario, lists of tables as `path[]`, and a
    tagged table's kind or algorithm in its path (`workload{all_reduce}`)."""
    if isinstance(value, list):
        for v in value:
            yield from _resolved_keys(v, path + "[]")
    elif isinstance(value, dict):
        tag = value.get("kind") or value.get("algorithm")
        here = f"{path}{{{tag}}}" if isinstance(tag, str) and path.split(".")[-1] != "collective" else path
        for k, v in value.items():
            yield here, k
            yield from _resolved_keys(v, f"{here}.{k}" if here else k)


def _builder_of(path: str) -> Builder | None:
    """The builder that makes the table at `path` of a resolved scenario; None for `[cc]`, whose
    keys `cc` takes all."""
    if path.startswith("workload{parallel_training}.") or "workload[]{parallel_training}." in path:
        return PARALLEL_TRAINING_TABLES.get(path.split(".")[-1])
    last = re.sub(r"\{\w+\}", "", path.split(".")[-1])
    if last.startswith("cc"):
        return None
    if last in ("topology", "workload", "workload[]"):
        return getattr(scenario, re.findall(r"\{(\w+)\}$", path)[0])
    return TABLES.get(last)


# The tables of a parallel training workload, whose layers are not a training workload's.
PARALLEL_TRAINING_TABLES: dict[str, Builder] = {
    "layers[]": parallel_layer,
    "stragglers[]": scenario.Straggler,
    "model": scenario.Model,
    "gpu": scenario.Gpu,
    "layer_times[]": scenario.LayerTimes,
}

# The builder of each table of a resolved scenario, by its key (a tagged table by its tag).
TABLES: dict[str, Builder] = {
    "simulation": simulation,
    "switch": switch,
    "pfc": pfc,
    "credit": credit,
    "ecn": ecn,
    "flowlet": flowlet,
    "dlb": dlb,
    "spray_threshold": spray_threshold,
    "conga": conga,
    "ecmp_ns3": ecmp_ns3,
    "trimming": trimming,
    "routing": RoutingTiers,
    "nic": nic,
    "reps": reps,
    "clocks": clocks,
    "output": output,
    "trace": trace,
    "jobs[]": job,
    "events[]": event,
    "flows[]": flow,
    "links[]": link,
    "collective": collective,
    "layers[]": layer,
    "all_reduce": LayerCollective,
    "forward_all_to_all": LayerCollective,
    "backward_all_to_all": LayerCollective,
    "forward_comm": LayerComm,
    "input_grad_comm": LayerComm,
    "weight_grad_comm": LayerComm,
    # A link value (`link`, `fabric_link`, ...) has the keys of a custom topology's link.
    "link": link,
    "fabric_link": link,
    "nvlink": link,
    "bottleneck": link,
}


def test_every_key_the_simulator_resolves_is_a_builder_argument() -> None:
    """The engine's own list of keys: the resolved scenarios (run.json) of EQUIVALENTS, with
    every default filled in. Each key of each table is an argument of that table's builder (a
    link value's, two of them); a tagged table's `kind` is its builder."""
    missing = set()
    for _, build in EQUIVALENTS:
        for path, key in _resolved_keys(aiccsim.run(build()).scenario, ""):
            if not path or key == "kind" and path.endswith("}"):
                continue
            builder = _builder_of(path)
            if builder is None and not path.startswith("cc"):
                missing.add(f"{path}: a table no builder makes")
            elif builder is not None and not as_arguments(builder, key) <= arguments(builder):
                missing.add(f"{path}.{key} ({builder.__name__})")
    assert not missing, sorted(missing)


def test_every_workload_kind_of_the_registry_has_a_builder_that_writes_its_example() -> None:
    """The registry's example of each workload kind (`WorkloadConfig::examples()`, the one list of
    kinds) is written by the kind's builder, called with the example's keys: a kind added to the
    registry without a builder, or with a key the builder cannot set, fails here."""
    import tomllib

    from aiccsim import _native

    examples = _native.workload_examples()
    assert len(examples) >= 10, examples
    for kind, text in examples:
        table = dict(tomllib.loads(text)["workload"])
        assert table.pop("kind") == kind, text
        build = getattr(scenario, kind, None)
        assert callable(build), f"workload kind {kind!r} has no builder aiccsim.scenario.{kind}(...)"
        if kind == "flows":
            built = build([flow(**f) for f in table.pop("flows")])
        else:
            built = build(**table)
        assert dict(built["workload"]) == tomllib.loads(text)["workload"], (kind, built["workload"], text)
