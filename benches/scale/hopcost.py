#!/usr/bin/env python3
"""Cost per packet-hop of a scenario, in instructions and simulated cache misses (BENCHMARKS.md,
session 16).

    hopcost.py BINARY SCENARIO T1 T2 [--cache] [--top N] [--keep DIR]

Runs SCENARIO twice under callgrind, cut at stop times T1 and T2 (e.g. "20us" "30us"),
collecting only inside `Simulation::run` (the event loop and the result files; building the
fabric and the flows is left out). The cost per hop is the difference between the two runs
over the difference in their packet-hops (summary.json), so the start of the run and the result
files cancel out. `--cache` adds callgrind's cache simulation (32 KiB L1, 1 MiB L2 as the last
level, see CACHES): first-level data misses (D1mr + D1mw) and L2 misses (DLmr + DLmw) per hop.
`--top N` prints the N functions whose cost grew most between the two runs, per hop (self cost,
inlined code counted in the function it was inlined into). Instruction counts are
deterministic, so the figures do not depend on the machine's load.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

# The development machine's caches per core (AMD EPYC: 32 KiB L1 data and instruction, 1 MiB
# L2), given explicitly: valgrind's detection on it reports a 256 MiB direct-mapped last level.
# The last level simulated is the L2, so "LL misses" below are L2 misses.
CACHES = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=1048576,8,64"]


def cut(scenario: str, stop: str, folder: Path) -> Path:
    """A copy of the scenario with its stop time set to `stop`."""
    text = Path(scenario).read_text()
    line = f'stop_time = "{stop}"'
    if re.search(r"^stop_time\s*=", text, flags=re.M):
        text = re.sub(r"^stop_time\s*=.*$", line, text, count=1, flags=re.M)
    elif re.search(r"^\[simulation\]", text, flags=re.M):
        text = re.sub(r"^\[simulation\]$", "[simulation]\n" + line, text, count=1, flags=re.M)
    else:
        text = "[simulation]\n" + line + "\n\n" + text
    path = folder / f"cut_{stop}.toml"
    path.write_text(text)
    return path


def profile(binary: str, scenario: Path, cache: bool, folder: Path, stop: str):
    """Runs one cut under callgrind; returns (packet-hops, totals by event, costs by function)."""
    out = folder / f"callgrind_{stop}.out"
    results = folder / f"results_{stop}"
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        "--collect-atstart=no",
        "--toggle-collect=*Simulation::run",
    ]
    if cache:
        command += ["--cache-sim=yes", *CACHES]
    command += [binary, "run", "-q", str(scenario), "-o", str(results)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    hops = json.loads((results / "summary.json").read_text())["packet_hops"]
    return (hops, *read_callgrind(out))


def read_callgrind(path: Path):
    """Totals by event, self costs by function (name without its file), and the cache
    description, read from a callgrind output file."""
    events: list[str] = []
    totals: dict[str, int] = {}
    by_function: dict[str, list[int]] = defaultdict(lambda: [0] * len(events))
    names: dict[str, str] = {}
    desc: list[str] = []
    function = None
    # Cost lines belong to the current `fn=`; those after `calls=` are the callee's inclusive
    # cost, charged to the caller only inclusively, so they are skipped here.
    skip_next = False
    for line in path.read_text().splitlines():
        if line.startswith("desc:") and "cache" in line:
            desc.append(line[5:].strip())
        elif line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:") or line.startswith("totals:"):
            totals = dict(zip(events, map(int, line.split()[1:])))
        elif line.startswith("fn="):
            function = resolve(line[3:], names)
        elif line.startswith(("cfn=", "cfi=", "cfl=", "cob=")):
            if line.startswith("cfn="):
                resolve(line[4:], names)
        elif line.startswith("calls="):
            skip_next = True
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            if skip_next:
                skip_next = False
                continue
            costs = line.split()[1:]
            row = by_function[function]
            for i, c in enumerate(costs):
                row[i] += int(c)
    return totals, dict(by_function), events, desc


def resolve(spec: str, names: dict) -> str:
    """Callgrind's name compression: "(id) name" defines, "(id)" refers."""
    m = re.match(r"\((\d+)\)(?:\s+(.*))?", spec)
    if not m:
        return spec
    if m.group(2) is not None:
        names[m.group(1)] = m.group(2)
    return names[m.group(1)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("scenario")
    parser.add_argument("t1")
    parser.add_argument("t2")
    parser.add_argument("--cache", action="store_true")
    parser.add_argument("--top", type=int, default=0)
    parser.add_argument("--keep", help="write the callgrind files and results here")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="hopcost"))
    folder.mkdir(parents=True, exist_ok=True)
    runs = [profile(args.binary, cut(args.scenario, t, folder), args.cache, folder, t) for t in (args.t1, args.t2)]
    (h1, tot1, fn1, events, desc), (h2, tot2, fn2, _, _) = runs
    hops = h2 - h1
    per = {e: (tot2.get(e, 0) - tot1.get(e, 0)) / hops for e in events}
    print(f"{args.scenario}: {args.t1} -> {args.t2}, {hops} packet-hops ({h1} -> {h2})")
    print(f"  instructions per hop: {per['Ir']:.1f}")
    if args.cache:
        for d in desc:
            print(f"  {d}")
        print(f"  D1 misses per hop: {per['D1mr'] + per['D1mw']:.2f} (read {per['D1mr']:.2f}, write {per['D1mw']:.2f})")
        l2 = per["DLmr"] + per["DLmw"]
        print(f"  L2 (LL) misses per hop: {l2:.2f} (read {per['DLmr']:.2f}, write {per['DLmw']:.2f})")
        print(f"  I1 misses per hop: {per['I1mr']:.2f}")
    if args.top:
        zero = [0] * len(events)
        grown = {f: [(b - a) / hops for a, b in zip(fn1.get(f, zero), fn2[f])] for f in fn2}
        shown = [e for e in ("Ir", "D1mr", "D1mw", "DLmr", "DLmw") if e in events]
        print("  per hop, by function (self cost): " + " ".join(f"{e:>8}" for e in shown))
        for f, row in sorted(grown.items(), key=lambda kv: -kv[1][0])[: args.top]:
            print("    " + " ".join(f"{row[events.index(e)]:8.2f}" for e in shown) + f"  {f[:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
