"""`aiccsim.run`: where a scenario comes from (a file, TOML text or a dict)."""

from __future__ import annotations

import datetime
import os
import warnings
from collections.abc import Mapping
from typing import Any, Union

from aiccsim import _native
from aiccsim._result import Result, from_native

ScenarioSource = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def run(
    scenario: ScenarioSource,
    *,
    seed: int | None = None,
    wall_limit: float | datetime.timedelta | None = None,
    fast_forward: bool | float | None = None,
) -> Result:
    """Runs one scenario and returns its results.

    ``scenario`` is a path to a TOML file (``str`` or ``pathlib.Path``), TOML text (a ``str``
    with a line break: a scenario always has more than one line), or a dict shaped like the
    TOML file. All three go through the same parser, defaults and checks as ``aiccsim run``.

    ``seed`` replaces the scenario's ``simulation.seed``, as ``aiccsim run --seed`` does.
    ``fast_forward`` replaces ``simulation.fast_forward``, as ``--fast-forward`` does: ``True``
    skips the steady stretches of groups of flows with the default tolerance (1%), a number
    is the tolerance (``0.02``), ``False`` turns it off; ``summary["fast_forward"]`` says
    what was skipped.
    ``wall_limit`` (seconds, or a ``timedelta``) stops the run after that much wall-clock time,
    as ``--max-wall`` does: the results so far come back with ``summary["stop_reason"] ==
    "wall_limit"``. The budget counts the building of the fabric too; spent before the
    simulation starts, it raises ``TimeoutError`` naming the phase.

    The engine runs without holding the GIL. Ctrl-C (or any exception a signal handler raises)
    stops it within milliseconds and the exception propagates; no result is returned then.
    Both hold inside the handlers of an algorithm written in Python, even one that never
    returns: a watchdog interrupts the handler, and a ``RuntimeWarning`` names it (its class,
    handler, flow and simulated time).

    Raises ``ScenarioError`` (a ``ValueError``) for a bad scenario, naming its ``file``,
    ``key`` and ``message``, and ``OSError`` when the file cannot be read.

    A setting that is legal but almost certainly a mistake (an ECN-driven algorithm with ECN
    off, a timeout within two round trips, ...) is reported once as a ``ScenarioWarning``
    naming its key, as ``aiccsim run`` prints it; ``summary["warnings"]`` keeps them.
    """
    source, origin = _source(scenario)
    if isinstance(wall_limit, datetime.timedelta):
        wall_limit = wall_limit.total_seconds()
    # A file's relative paths (an algorithm's module folder) are taken against its folder.
    folder = None if isinstance(scenario, Mapping) or origin == "<string>" else os.path.dirname(origin) or "."
    text = source if isinstance(source, str) else None
    if text is not None and seed is not None:
        text = f"# run with seed={seed}, which replaces simulation.seed below\n{text}"
    tolerance = None
    if fast_forward is not None:
        # 0 is off for the native side; True is the default tolerance.
        tolerance = 0.01 if fast_forward is True else 0.0 if fast_forward is False else float(fast_forward)
        if text is not None:
            text = f"# run with fast_forward={fast_forward}, which replaces simulation.fast_forward below\n{text}"
    result = from_native(_native.run(source, origin, seed, wall_limit, folder, tolerance), text)
    for w in result.summary["warnings"]:
        warnings.warn(f"{origin}: {w['key']}: {w['message']}", ScenarioWarning, stacklevel=2)
    return result


class ScenarioWarning(UserWarning):
    """A scenario setting that is legal but almost certainly a mistake."""


def _source(scenario: ScenarioSource) -> tuple[str | dict[str, Any], str]:
    """The scenario's TOML text or dict, and the name errors give it."""
    if isinstance(scenario, Mapping):
        return _plain(scenario), "<dict>"
    if isinstance(scenario, (str, os.PathLike)):
        return text_source(scenario)
    raise TypeError(f"a scenario is a path, TOML text or a dict, not {type(scenario).__name__}")


def text_source(scenario: str | os.PathLike[str]) -> tuple[str, str]:
    """TOML text (a ``str`` with a line break) or the text of the file at a path, and the name
    errors give it."""
    if isinstance(scenario, str) and "\n" in scenario:
        return scenario, "<string>"
    path = os.fspath(scenario)
    with open(path, "rb") as f:
        # Bytes, not text mode: the file reaches the parser exactly as `aiccsim run` reads it.
        return f.read().decode("utf-8"), path


def _plain(value: Any) -> Any:
    """Any Mapping or tuple as the dict or list the native side reads; a class (an algorithm's,
    for ``cc.class``) as the "module:Class" that names it."""
    if isinstance(value, type):
        return f"{value.__module__}:{value.__qualname__}"
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
