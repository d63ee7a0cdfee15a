"""`aiccsim.import_ns3`: run an existing HPCC ns-3 experiment in aiccsim (docs/ns3.md)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from aiccsim import _native
from aiccsim._run import text_source


def import_ns3(
    topology: str | os.PathLike[str],
    flows: str | os.PathLike[str],
    *,
    config: str | os.PathLike[str] | None = None,
    base: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
) -> str:
    """The scenario that ns-3's topology file ``topology`` and flow file ``flows`` describe, as
    TOML text that ``aiccsim.run`` accepts, as ``aiccsim import-ns3`` writes it.

    ``config``, ns-3's configuration file (``mix/config.txt``), gives the congestion control
    and its constants, ECN, buffer and packet size; the switch MMU and where switches queue
    ACKs are ns-3's always (docs/ns3.md). ``base`` (a scenario file's path, or TOML text) gives
    everything else (output, ...); its ``[topology]`` and ``[workload]`` are replaced by the
    imported ones, and ns-3's values win over its own.
    ``out``, if given, is where the text is also written. The text starts with comments that map
    ns-3's node ids to aiccsim's hosts and switches. What the import could not carry over (a
    key of the configuration file with no aiccsim equivalent, say) is reported as a
    ``UserWarning``, one per key.

    Raises ``ScenarioError`` naming the file, line and field at fault, and ``OSError`` when a
    file cannot be read.
    """
    base_text, base_origin = ("", "(no base)") if base is None else text_source(base)
    text, notes = _native.import_ns3(
        Path(topology).read_text(encoding="utf-8"),
        os.fspath(topology),
        Path(flows).read_text(encoding="utf-8"),
        os.fspath(flows),
        base_text,
        base_origin,
        None if config is None else Path(config).read_text(encoding="utf-8"),
        "" if config is None else os.fspath(config),
    )
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=2)
    if out is not None:
        Path(out).write_text(text, encoding="utf-8")
    return text
