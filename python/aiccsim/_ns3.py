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
    base: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
) -> str:
    """The scenario that ns-3's topology file ``topology`` and flow file ``flows`` describe, as
    TOML text that ``aiccsim.run`` accepts, as ``aiccsim import-ns3`` writes it.

    ``base`` (a scenario file's path, or TOML text) gives everything else (switch, cc, nic,
    output, ...); its ``[topology]`` and ``[workload]`` are replaced by the imported ones.
    ``out``, if given, is where the text is also written. The text starts with comments that map
    ns-3's node ids to aiccsim's hosts and switches. What the import could not carry over (a
    link error rate, say) is reported as a ``UserWarning``.

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
    )
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=2)
    if out is not None:
        Path(out).write_text(text, encoding="utf-8")
    return text
