"""python/aiccsim/_native.pyi is true to the compiled module (crates/aiccsim-py/src): mypy's
stubtest compares each name, function signature and class of the stub with the module's at run
time, so a function added, renamed or given another argument in Rust fails here until the stub
says so too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# Names of the stub alone: type aliases for the type checker.
STUB_ONLY = ["aiccsim._native.ColumnParts"]


def test_the_native_stub_matches_the_module(tmp_path: Path) -> None:
    allowlist = tmp_path / "allowlist.txt"
    allowlist.write_text("\n".join(STUB_ONLY) + "\n", encoding="utf-8")
    command = [sys.executable, "-m", "mypy.stubtest", "aiccsim._native", "--allowlist", str(allowlist)]
    r = subprocess.run(command, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
