"""Congestion-control algorithms written in Python (docs/cc/programmable.md): the class a
scenario names in ``[cc] class = "module:Class"``, imported and checked before any run.

The native module calls :func:`load` while it parses the scenario; a failure becomes the
scenario's error at the key :class:`SpecError` names (``cc.class``), as for any other key."""

from __future__ import annotations

import importlib
import inspect
import sys
from typing import Any

from aiccsim._native import nic_events

# Each NIC event's handler and the arguments it takes after ``flow``, as the engine lists the
# events (crates/aiccsim/src/cc/events.rs).
HANDLERS: dict[str, tuple[str, ...]] = {handler: tuple(name for name, _ in args) for handler, args in nic_events()}


class SpecError(Exception):
    """``[cc]`` names a class that cannot be used: ``key`` (under ``[cc]``) and what to do."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


def load(spec: str, path: str, params: dict[str, Any]) -> tuple[type, list[str]]:
    """The class ``spec`` ("module:Class") names, with ``path`` searched before ``sys.path``,
    and the handlers it defines, checked by making one instance with ``params``."""
    module_name, sep, class_name = spec.partition(":")
    if not sep or not module_name or not class_name:
        raise SpecError("class", f'`{spec}` is not of the form "module:Class" (e.g. "my_cc:MyCc")')
    if path not in sys.path:
        # First, so that a module next to the scenario wins over one of the same name elsewhere.
        sys.path.insert(0, path)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name is not None and module_name.startswith(e.name):
            raise SpecError(
                "class",
                f"no module `{module_name}` in {path} (the scenario's folder, or cc.path) or on sys.path: "
                f"put {module_name.replace('.', '/')}.py there, or set cc.path to its folder",
            ) from None
        raise SpecError("class", f"importing `{module_name}` failed: {_one_line(e)}") from None
    except Exception as e:
        raise SpecError("class", f"importing `{module_name}` failed: {_one_line(e)}") from None
    cls: object = module
    for part in class_name.split("."):
        if not hasattr(cls, part):
            where = getattr(module, "__file__", None) or module_name
            raise SpecError("class", f"module `{module_name}` ({where}) has no `{class_name}`: check the name")
        cls = getattr(cls, part)
    if not isinstance(cls, type):
        raise SpecError("class", f"`{spec}` is a {type(cls).__name__}, not a class")
    handlers = check_handlers(cls, spec)
    try:
        cls(**params)
    except Exception as e:
        keys = ", ".join(sorted(params)) or "none"
        raise SpecError(
            "class",
            f"`{spec}(**params)` raised {_one_line(e)} (the parameters are the other [cc] keys: {keys})",
        ) from None
    return cls, handlers


def check_handlers(cls: type, spec: str) -> list[str]:
    """The event handlers ``cls`` defines, each callable with its arguments; a method named
    like a handler that is none (a typo) is an error."""
    known = ", ".join(HANDLERS)
    for name in dir(cls):
        if name.startswith("on_") and name not in HANDLERS:
            raise SpecError(
                "class", f"`{spec}` has a method `{name}`, which is no event handler: the handlers are {known}"
            )
    found = [name for name in HANDLERS if callable(getattr(cls, name, None))]
    if not found:
        raise SpecError("class", f"`{spec}` defines no event handler: define at least one of {known}")
    for name in found:
        args = ("flow", *HANDLERS[name])
        try:
            signature = inspect.signature(getattr(cls, name))
        except (TypeError, ValueError):
            continue  # a builtin without a signature: it will say so when called
        try:
            # Unbound, the method takes `self` first.
            signature.bind(None, *args)
        except TypeError:
            wanted = ", ".join(("self", *args))
            raise SpecError("class", f"`{spec}.{name}{signature}` must take ({wanted})") from None
    return found


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__
