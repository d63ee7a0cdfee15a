"""Congestion-control algorithms written in Python (`[cc] algorithm = "python"`,
docs/cc/programmable.md): from `aiccsim.run`, the command (`python -m aiccsim` and the
standalone binary, which hands such scenarios over), sweeps and experiments."""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import aiccsim

from conftest import REPO, python_m_aiccsim, without_performance

# S1 without its DCQCN-only key (`cnp_interval`, which pins the benchmark's DCQCN).
INCAST16 = re.sub(r"(?m)^cnp_interval = .*\n", "", (REPO / "benches" / "s1_incast16_dcqcn.toml").read_text())
DCTCP_BUILTIN = INCAST16.replace('algorithm = "dcqcn"', 'algorithm = "dctcp"')
DCTCP_PYTHON = INCAST16.replace(
    'algorithm = "dcqcn"', f'algorithm = "python"\nclass = "dctcp:Dctcp"\npath = "{REPO / "examples"}"'
)

# A 4-to-1 incast: a few thousand ACKs.
SMALL = """
[topology]
kind = "star"
hosts = 5
link = { bandwidth = "100Gbps", delay = "1us" }
[cc]
algorithm = "python"
class = "CLASS"
PARAMS
[workload]
kind = "incast"
senders = "1..=4"
receiver = 0
size = "200KB"
"""

_names = itertools.count()


def module(folder: Path, source: str) -> str:
    """Writes `source` as a module of a name no other test uses (Python keeps a module once
    imported) and returns that name."""
    name = f"cc_under_test_{next(_names)}_{os.getpid()}"
    (folder / f"{name}.py").write_text(source)
    return name


def small(spec: str, params: str = "") -> str:
    return SMALL.replace("CLASS", spec).replace("PARAMS", params)


def flows_csv(result: aiccsim.Result, folder: Path) -> bytes:
    result.write(folder)
    return (folder / "flows.csv").read_bytes()


def test_the_python_dctcp_port_is_byte_identical_to_the_builtin(tmp_path: Path) -> None:
    builtin = aiccsim.run(DCTCP_BUILTIN)
    python = aiccsim.run(DCTCP_PYTHON)
    assert python.summary["algorithm"] == "python"
    assert flows_csv(python, tmp_path / "py") == flows_csv(builtin, tmp_path / "rs")
    # Not trivially: DCTCP cut the rates (the marks) and the flows finished unevenly.
    assert builtin.summary["ecn_marks"] > 0
    assert python.flows["fct_ns"].nunique() > 1


def test_the_command_runs_it_through_python_and_the_binary_alike(tmp_path: Path, aiccsim_bin: Path) -> None:
    (tmp_path / "incast.toml").write_text(DCTCP_PYTHON)
    (tmp_path / "builtin.toml").write_text(DCTCP_BUILTIN)
    done = python_m_aiccsim("run", "builtin.toml", "--out", "rs", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = python_m_aiccsim("run", "incast.toml", "--out", "py", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # The binary alone cannot run Python: it hands the command to `python -m aiccsim`.
    env = {**os.environ, "AICCSIM_PYTHON": sys.executable}
    done = subprocess.run(
        [aiccsim_bin, "run", "incast.toml", "--out", "bin", "-q"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    expected = (tmp_path / "rs" / "flows.csv").read_bytes()
    assert (tmp_path / "py" / "flows.csv").read_bytes() == expected
    assert (tmp_path / "bin" / "flows.csv").read_bytes() == expected
    # run.json names the module's folder absolutely: it reruns from anywhere.
    cc = json.loads((tmp_path / "py" / "run.json").read_text())["scenario"]["cc"]
    assert cc == {"algorithm": "python", "class": "dctcp:Dctcp", "path": str(REPO / "examples")}


def test_the_binary_says_how_to_get_python_when_it_cannot(tmp_path: Path, aiccsim_bin: Path) -> None:
    (tmp_path / "incast.toml").write_text(DCTCP_PYTHON)
    env = {**os.environ, "AICCSIM_PYTHON": str(tmp_path / "no-python")}
    done = subprocess.run(
        [aiccsim_bin, "validate", "incast.toml"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 1
    assert 'cc.algorithm = "python"' in done.stderr and "pip install" in done.stderr
    assert "panicked" not in done.stderr


RAISES = """
class Fails:
    def __init__(self, after=3):
        self.after = after
        self.acks = 0

    def on_ack(self, flow, ack):
        self.acks += 1
        if flow.id == 2 and self.acks == self.after:
            self.explode(flow)

    def explode(self, flow):
        return 1 / 0
"""


def test_an_exception_ends_the_run_with_the_traceback_flow_and_time(tmp_path: Path) -> None:
    name = module(tmp_path, RAISES)
    with pytest.raises(aiccsim.AlgorithmError) as caught:
        aiccsim.run(small(f"{name}:Fails", "path = " + json.dumps(str(tmp_path))))
    e = caught.value
    assert e.flow == 2 and e.time_ns > 0
    text = str(e)
    assert text.startswith("flow 2 at ") and f" ns: {name}:Fails.on_ack raised ZeroDivisionError" in text, text
    # The user's traceback, down to the line that raised.
    assert "Traceback (most recent call last)" in text
    assert f"{name}.py" in text and "in explode" in text and "return 1 / 0" in text
    assert isinstance(e.__cause__, ZeroDivisionError)


def test_the_command_prints_the_traceback_and_exits_1(tmp_path: Path) -> None:
    name = module(tmp_path, RAISES)
    (tmp_path / "s.toml").write_text(small(f"{name}:Fails"))
    done = python_m_aiccsim("run", "s.toml", "--out", "out", cwd=tmp_path)
    assert done.returncode == 1
    assert "return 1 / 0" in done.stderr and "ZeroDivisionError" in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: flow 2 at ") and f"{name}:Fails.on_ack raised ZeroDivisionError" in last, last
    assert "panicked" not in done.stderr
    assert not (tmp_path / "out" / "RUN-IN-PROGRESS").exists()


BAD_CLASSES = {
    "no module": ("cc_nowhere_to_be_found:X", "no module `cc_nowhere_to_be_found`"),
    "no class": ("MODULE:Missing", "has no `Missing`"),
    "no handler": ("MODULE:NoHandlers", "defines no event handler"),
    "misspelt handler": ("MODULE:Misspelt", "`on_acks`, which is no event handler"),
    "wrong arguments": ("MODULE:TooFew", "must take (self, flow, ack)"),
    "not a class": ("MODULE:function", "is a function, not a class"),
    "no colon": ("MODULE", 'is not of the form "module:Class"'),
    "bad parameter": ("MODULE:NoParameters", "raised TypeError: NoParameters() takes no arguments"),
}

SOME_CLASSES = """
class NoHandlers:
    pass

class Misspelt:
    def on_acks(self, flow, ack):
        pass

class TooFew:
    def on_ack(self, flow):
        pass

class NoParameters:
    def on_cnp(self, flow):
        pass

def function():
    pass
"""


@pytest.mark.parametrize("case", BAD_CLASSES)
def test_a_bad_class_is_a_scenario_error_at_cc_class(case: str, tmp_path: Path) -> None:
    name = module(tmp_path, SOME_CLASSES)
    spec, message = BAD_CLASSES[case]
    params = "gain = 2" if case == "bad parameter" else ""
    path = tmp_path / "s.toml"
    path.write_text(small(spec.replace("MODULE", name), params))
    with pytest.raises(aiccsim.ScenarioError) as caught:
        aiccsim.run(path)
    assert caught.value.key == "cc.class"
    assert message in caught.value.message
    # `validate` says the same, and how to fix it.
    done = python_m_aiccsim("validate", str(path))
    assert done.returncode == 2
    assert f"{path}: cc.class: " in done.stderr and message in done.stderr


def test_a_missing_module_says_where_it_was_looked_for(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(small("cc_nowhere_to_be_found:X"))
    with pytest.raises(aiccsim.ScenarioError, match="put cc_nowhere_to_be_found.py there, or set cc.path") as e:
        aiccsim.run(path)
    assert str(tmp_path) in e.value.message


RECORDS = """
import json

seen = []

class Records:
    def __init__(self, fraction, label="none", steps=()):
        self.fraction, self.label, self.steps = fraction, label, list(steps)

    def on_start(self, flow):
        seen.append((flow.id, self.fraction, self.label, self.steps, flow.line_rate, flow.mtu, flow.hops))
        flow.rate = flow.line_rate * self.fraction
        # A timer 5 us on, in slot 2.
        self.armed = flow.now_ps + 5_000_000
        flow.set_timer(2, self.armed / 1e12)

    def on_timer(self, flow, slot):
        seen.append(("timer", flow.id, slot, flow.now_ps == self.armed))
"""


def test_the_other_cc_keys_are_the_constructors_parameters(tmp_path: Path) -> None:
    name = module(tmp_path, RECORDS)
    sys.path.insert(0, str(tmp_path))
    try:
        records = __import__(name)
    finally:
        sys.path.remove(str(tmp_path))
    slow = aiccsim.run(small(f"{name}:Records", 'fraction = 0.1\nlabel = "slow"\nsteps = [1, 2]'))
    starts = [s for s in records.seen if s[0] != "timer"]
    assert sorted(starts) == [(f, 0.1, "slow", [1, 2], 100e9, 1000, 1) for f in range(4)]
    # Each flow's timer fired at the time it was set for, in its slot.
    assert sorted(s for s in records.seen if s[0] == "timer") == [("timer", f, 2, True) for f in range(4)]
    # The rate the class set is the rate the flows were sent at: at 10 Gbps, 200 KB take at
    # least 160 us (at full rate, the four share the receiver's link: about 70 us).
    assert slow.flows["fct_ns"].min() > 160_000
    fast = aiccsim.run(small(f"{name}:Records", "fraction = 1.0"))
    assert fast.flows["fct_ns"].max() < slow.flows["fct_ns"].min()


def test_a_class_object_in_a_dict_names_itself(tmp_path: Path) -> None:
    from dctcp_for_dict import Dctcp

    scenario = {
        "topology": {"kind": "star", "hosts": 3, "link": {"bandwidth": "100Gbps", "delay": "1us"}},
        "cc": {"algorithm": "python", "class": Dctcp},
        "workload": {"kind": "incast", "senders": "1..=2", "receiver": 0, "size": "100KB"},
    }
    r = aiccsim.run(scenario)
    assert r.scenario["cc"]["class"] == "dctcp_for_dict:Dctcp"
    assert r.summary["flows_finished"] == 2


@pytest.fixture(autouse=True, scope="module")
def dctcp_for_dict():
    """examples/dctcp.py importable as `dctcp_for_dict` (a module name no other test takes)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("dctcp_for_dict", REPO / "examples" / "dctcp.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules["dctcp_for_dict"] = mod
    yield
    del sys.modules["dctcp_for_dict"]


def test_the_same_scenario_and_seed_give_the_same_bytes(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(DCTCP_PYTHON.replace("10MB", "1MB"))
    for out in ["a", "b"]:
        done = python_m_aiccsim("run", "s.toml", "--out", out, "-q", "--seed", "7", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    for table in ["flows.csv", "ports.csv"]:
        assert (tmp_path / "a" / table).read_bytes() == (tmp_path / "b" / table).read_bytes()
    a, b = (json.loads((tmp_path / d / "summary.json").read_text()) for d in "ab")
    assert without_performance(a) == without_performance(b)
    first, second = aiccsim.run(DCTCP_PYTHON, seed=3), aiccsim.run(DCTCP_PYTHON, seed=3)
    assert flows_csv(first, tmp_path / "c") == flows_csv(second, tmp_path / "d")


SWEEP = """
base = "base.toml"
[grid]
"cc.fraction" = [0.1, 1.0]
"""

FRACTION = """
class Fraction:
    def __init__(self, fraction):
        self.fraction = fraction

    def on_start(self, flow):
        flow.rate = flow.line_rate * self.fraction
"""


def test_a_sweep_runs_a_python_algorithm_in_its_points(tmp_path: Path, aiccsim_bin: Path) -> None:
    spec = tmp_path / "spec"
    spec.mkdir()
    name = module(spec, FRACTION)
    (spec / "base.toml").write_text(small(f"{name}:Fraction", "fraction = 0.5"))
    (spec / "sweep.toml").write_text(SWEEP)
    # Run from elsewhere: the points' scenarios are written under OUT/runs/, away from the
    # module, and still find it.
    df = aiccsim.sweep(spec / "sweep.toml", jobs=2, out=tmp_path / "py")
    assert list(df["cc.fraction"]) == [0.1, 1.0]
    assert (df["flows_finished"] == 4).all()
    assert df["fct_max_ns"].iloc[0] > df["fct_max_ns"].iloc[1]
    env = {**os.environ, "AICCSIM_PYTHON": sys.executable}
    done = subprocess.run(
        [aiccsim_bin, "sweep", spec / "sweep.toml", "-j", "1", "--out", tmp_path / "bin"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "py" / "sweep.csv").read_bytes() == (tmp_path / "bin" / "sweep.csv").read_bytes()


EXPERIMENT = """
title = "Python algorithm at two rates"
base = "base.toml"

[[run]]
name = "tenth"
set = { cc = { fraction = 0.1 } }

[[run]]
name = "full"
set = { cc = { fraction = 1.0 } }

[plot]
kind = "fct_cdf"
"""


def test_reproduce_runs_an_experiment_with_a_python_algorithm(tmp_path: Path, aiccsim_bin: Path) -> None:
    exp = tmp_path / "experiments" / "pyexp"
    exp.mkdir(parents=True)
    name = module(exp, FRACTION)
    (exp / "base.toml").write_text(small(f"{name}:Fraction", "fraction = 0.5"))
    (exp / "experiment.toml").write_text(EXPERIMENT)
    env = {**os.environ, "AICCSIM_PYTHON": sys.executable}
    done = subprocess.run(
        [aiccsim_bin, "reproduce", "pyexp", "--experiments", tmp_path / "experiments", "--out", tmp_path / "out"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    tenth = aiccsim.load(tmp_path / "out" / "tenth")
    full = aiccsim.load(tmp_path / "out" / "full")
    assert tenth.flows["fct_ns"].min() > full.flows["fct_ns"].max()


FAILS_LATER = """
class FailsLater:
    made = 0

    def __init__(self):
        # The first instance is the check made when the scenario is read; then one per flow.
        FailsLater.made += 1
        if FailsLater.made == 3:
            raise RuntimeError("no third instance")

    def on_start(self, flow):
        pass
"""


def test_a_constructor_that_fails_for_a_flow_ends_the_run_naming_it(tmp_path: Path) -> None:
    name = module(tmp_path, FAILS_LATER)
    with pytest.raises(aiccsim.AlgorithmError) as caught:
        aiccsim.run(small(f"{name}:FailsLater", "path = " + json.dumps(str(tmp_path))))
    assert (caught.value.flow, caught.value.time_ns) == (1, 0.0)
    assert f"{name}:FailsLater(**params) raised RuntimeError: no third instance" in str(caught.value)
    assert isinstance(caught.value.__cause__, RuntimeError)


# Flow 1 loops for ever in `on_ack` once some data has gone: the other flows have progress to
# show. It first leaves a mark, so that a test knows when the loop has begun.
ENDLESS = """
from pathlib import Path

class Endless:
    def __init__(self, mark=""):
        self.mark = mark

    def on_ack(self, flow, ack):
        if flow.id == 1 and ack.ack_seq > 50_000:
            if self.mark:
                Path(self.mark).touch()
            while True:
                pass
"""

# Generous: the machine that runs the tests may be a loaded 2-core box.
MARGIN_S = 10.0


def endless_scenario(tmp_path: Path, mark: str = "") -> str:
    name = module(tmp_path, ENDLESS)
    params = "path = " + json.dumps(str(tmp_path))
    if mark:
        params += "\nmark = " + json.dumps(mark)
    return small(f"{name}:Endless", params)


# In a child process, so that a handler the limit fails to stop fails the test instead of
# hanging it.
RUN_WITH_WALL_LIMIT = """
import json, sys, time, warnings
import aiccsim

began = time.monotonic()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    r = aiccsim.run(sys.stdin.read(), wall_limit=1.0)
took = time.monotonic() - began
notes = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
# Nothing is left pending in this thread: later Python code runs undisturbed.
assert sum(range(1_000_000)) == 499999500000
print(json.dumps({"took": took, "summary": r.summary, "flows": len(r.flows), "notes": notes}))
"""


def test_the_wall_limit_stops_a_handler_that_never_returns(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", RUN_WITH_WALL_LIMIT],
        input=endless_scenario(tmp_path),
        capture_output=True,
        text=True,
        timeout=30 + MARGIN_S,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["took"] < 1.0 + MARGIN_S
    assert out["summary"]["stop_reason"] == "wall_limit"
    # The results so far: data went before the handler stuck (the other flows may finish
    # after it, with no handler called: the run is partial all the same).
    assert out["summary"]["events"] > 0 and out["flows"] == 4
    notes = out["notes"]
    assert len(notes) == 1, notes
    assert "wall-clock limit reached inside cc_under_test_" in notes[0]
    assert ":Endless.on_ack (flow 1, simulated time " in notes[0] and "results are partial" in notes[0]


def test_the_command_writes_partial_results_at_its_max_wall_inside_a_handler(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(endless_scenario(tmp_path))
    began = time.monotonic()
    done = python_m_aiccsim("run", "s.toml", "--out", "out", "-q", "--max-wall", "2s", cwd=tmp_path)
    assert time.monotonic() - began < 2.0 + MARGIN_S
    assert done.returncode == 5, done.stderr
    assert "wall-clock limit reached inside cc_under_test_" in done.stderr
    assert ":Endless.on_ack (flow 1, " in done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stop_reason"] == "wall_limit"
    assert (tmp_path / "out" / "flows.csv").is_file()
    assert not (tmp_path / "out" / "RUN-IN-PROGRESS").exists()


def test_ctrl_c_stops_a_handler_that_never_returns_and_keeps_the_results(tmp_path: Path) -> None:
    mark = tmp_path / "looping"
    (tmp_path / "s.toml").write_text(endless_scenario(tmp_path, str(mark)))
    child = subprocess.Popen(
        [sys.executable, "-m", "aiccsim", "run", "s.toml", "--out", "out", "-q"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while not mark.exists():
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the handler never began its loop"
            time.sleep(0.05)
        time.sleep(0.3)
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=MARGIN_S)
    finally:
        child.kill()
    assert child.returncode == 130, stderr
    assert "interrupted inside cc_under_test_" in stderr and ":Endless.on_ack (flow 1, " in stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stop_reason"] == "interrupted"


# Handlers that catch every exception, HandlerStopped too, and go on: each shape keeps its
# busy loop inside a `try`, where the watchdog's periodic raise would land every time.
STUBBORN = {
    "nested loops": """
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    pass
""",
    "a catch in the except": """
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    try:
                        while True:
                            pass
                    except BaseException:
                        continue
""",
    "finally": """
            while True:
                try:
                    while True:
                        pass
                finally:
                    continue
""",
    "a function that catches": """
            def spin():
                try:
                    while True:
                        pass
                except BaseException:
                    return
            while True:
                try:
                    spin()
                except BaseException:
                    pass
""",
}


@pytest.mark.parametrize("shape", sorted(STUBBORN))
def test_the_wall_limit_stops_a_handler_that_catches_every_exception(tmp_path: Path, shape: str) -> None:
    source = ENDLESS.replace(
        """            while True:
                pass
""",
        STUBBORN[shape],
    )
    name = module(tmp_path, source)
    scenario = small(f"{name}:Endless", "path = " + json.dumps(str(tmp_path)))
    done = subprocess.run(
        [sys.executable, "-c", RUN_WITH_WALL_LIMIT],
        input=scenario,
        capture_output=True,
        text=True,
        timeout=30 + MARGIN_S,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["took"] < 1.0 + MARGIN_S
    assert out["summary"]["stop_reason"] == "wall_limit"
    assert len(out["notes"]) == 1 and ":Endless.on_ack (flow 1, " in out["notes"][0], out["notes"]


# Ctrl-C in `aiccsim.run`: KeyboardInterrupt, as for any run, even from inside the handler.
RUN_UNTIL_CTRL_C = """
import sys
import aiccsim

try:
    aiccsim.run(sys.argv[1])
except KeyboardInterrupt:
    print("KeyboardInterrupt")
# Nothing is left pending in this thread: later Python code runs undisturbed.
print(sum(range(1_000_000)))
"""


def test_ctrl_c_stops_a_handler_that_never_returns_in_aiccsim_run(tmp_path: Path) -> None:
    mark = tmp_path / "looping"
    (tmp_path / "s.toml").write_text(endless_scenario(tmp_path, str(mark)))
    child = subprocess.Popen(
        [sys.executable, "-c", RUN_UNTIL_CTRL_C, str(tmp_path / "s.toml")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Python leaves SIGINT ignored if its parent did (a shell's background job).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while not mark.exists():
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the handler never began its loop"
            time.sleep(0.05)
        time.sleep(0.3)
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=MARGIN_S)
    finally:
        child.kill()
    assert child.returncode == 0, stderr
    assert stdout.split() == ["KeyboardInterrupt", "499999500000"], stdout + stderr


BAD_VALUES = {
    "rate NaN": ('flow.rate = float("nan")', "flow.rate = NaN: a rate must be a finite number"),
    "rate infinite": ('flow.rate = float("inf")', "flow.rate = inf: a rate must be"),
    "rate negative": ("flow.rate = -1e9", "flow.rate = -1000000000: a rate must be"),
    "rate zero": ("flow.rate = 0.0", "flow.rate = 0: a rate must be"),
    "window negative": ("flow.window = -5", "flow.window = -5: a window is a whole number of bytes"),
    "window float": ("flow.window = 1.5e4", "flow.window = 15000.0: a window is a whole number"),
    "timer in the past": ("flow.set_timer(0, flow.now - 1e-6)", "the time is before now"),
    "timer NaN": ('flow.set_timer(0, float("nan"))', "flow.set_timer(0, NaN): the time must be a finite"),
}

SETS = """
class Sets:
    def on_ack(self, flow, ack):
        if flow.id == 2 and ack.ack_seq > 100_000:
            STATEMENT
"""


@pytest.mark.parametrize("case", sorted(BAD_VALUES))
def test_a_value_an_algorithm_hands_back_is_checked(case: str, tmp_path: Path) -> None:
    statement, wanted = BAD_VALUES[case]
    name = module(tmp_path, SETS.replace("STATEMENT", statement))
    with pytest.raises(aiccsim.AlgorithmError) as caught:
        aiccsim.run(small(f"{name}:Sets", "path = " + json.dumps(str(tmp_path))))
    e = caught.value
    assert e.flow == 2 and e.time_ns > 0
    first = str(e).splitlines()[0]
    assert first.startswith("flow 2 at ") and f"{name}:Sets.on_ack raised ValueError: " in first, first
    assert wanted in first, first


def test_an_unknown_algorithm_lists_python_with_its_class_key(tmp_path: Path, aiccsim_bin: Path) -> None:
    scenario = small("x:Y").replace('algorithm = "python"', 'algorithm = "nosuch"')
    with pytest.raises(aiccsim.ScenarioError) as caught:
        aiccsim.run(scenario)
    assert caught.value.key == "cc.algorithm"
    assert 'python (a class of your own: class = "module:Class"' in caught.value.message
    # The binary alone has no `python` registered, and names it all the same.
    (tmp_path / "s.toml").write_text(scenario)
    done = subprocess.run([aiccsim_bin, "validate", "s.toml"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2
    assert "dcqcn" in done.stderr and 'python (a class of your own: class = "module:Class"' in done.stderr


def test_algorithms_shows_one_algorithm_by_name_or_alias() -> None:
    done = python_m_aiccsim("algorithms", "dcqcn")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("dcqcn\n  DCQCN: ")
    assert "    cnp_interval = " in done.stdout and "preset = " in done.stdout
    assert "dctcp" not in done.stdout and "\npython\n" not in done.stdout
    alias = python_m_aiccsim("algorithms", "pfc_only")
    assert alias.returncode == 0 and alias.stdout.startswith("none\n"), alias.stdout + alias.stderr
    assert alias.stdout.count("\n  ") == 1
    python = python_m_aiccsim("algorithms", "python")
    assert python.returncode == 0 and python.stdout.startswith("python\n") and "module:Class" in python.stdout
    unknown = python_m_aiccsim("algorithms", "nosuch")
    assert unknown.returncode == 2
    assert "unknown algorithm `nosuch`: one of none, " in unknown.stderr and "python" in unknown.stderr
    # Without a name: every one, as before.
    every = python_m_aiccsim("algorithms")
    assert every.returncode == 0 and "\ndcqcn\n" in every.stdout and "\npython\n" in every.stdout
