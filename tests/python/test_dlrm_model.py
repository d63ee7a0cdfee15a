"""experiments/rocecc-dlrm: its scenarios are what model.py writes, and they issue what paper
002 says one DLRM iteration issues (109.5 MB of all-reduce, 8 MB of all-to-all per GPU)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

EXPERIMENT = Path(__file__).resolve().parents[2] / "experiments" / "rocecc-dlrm"


def test_the_scenarios_are_what_model_py_writes(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(EXPERIMENT / "model.py"), str(tmp_path)], check=True, capture_output=True)
    for name in ("dlrm_1d.toml", "dlrm_2d.toml"):
        assert (tmp_path / name).read_text() == (EXPERIMENT / name).read_text(), f"run model.py again: {name}"


def test_one_iteration_issues_the_papers_bytes() -> None:
    for name, algorithm in (("dlrm_1d.toml", "direct"), ("dlrm_2d.toml", "hierarchical")):
        layers = tomllib.loads((EXPERIMENT / name).read_text())["workload"]["layers"]
        assert len(layers) == 1 + 7 + 12  # embeddings, bottom MLP 5+2, top MLP 10+2
        reduces = [layer["all_reduce"] for layer in layers if "all_reduce" in layer]
        assert {r["algorithm"] for r in reduces} == {algorithm}
        total = sum(int(r["size"].removesuffix("B")) for r in reduces)
        assert abs(total - 109.5e6) <= len(reduces), total
        a2a = [layer[k] for layer in layers for k in ("forward_all_to_all", "backward_all_to_all") if k in layer]
        # Per destination, to 127 others and itself: 4 MB each way per GPU.
        assert [int(a["size"].removesuffix("B")) * 128 for a in a2a] == [4_000_000, 4_000_000]
