"""Each run's iteration of training-cc split by what held its critical rank up (iterations.csv:
compute, pipeline bubble, exposed TP, PP, DP, EP and other communication), as a table on stdout
and a stacked bar chart.

    aiccsim reproduce training-cc --out out/training-cc
    python experiments/training-cc/split.py out/training-cc   # writes out/training-cc/split.png
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PARTS = [
    ("compute", "compute"),
    ("bubble_ns", "pipeline bubble"),
    ("exposed_tp_ns", "exposed TP"),
    ("exposed_pp_ns", "exposed PP"),
    ("exposed_dp_ns", "exposed DP"),
    ("exposed_ep_ns", "exposed EP"),
    ("exposed_other_ns", "exposed other"),
]


def folder(name: str) -> str:
    """The folder `aiccsim reproduce` writes a run into: its name, lower case, every character
    other than a letter or a digit made `_`."""
    return "".join(c if c.isascii() and c.isalnum() else "_" for c in name.lower())


def split(run: Path) -> dict[str, float]:
    """The last iteration's parts in ms; compute is the critical rank's (duration less the rest)."""
    row = list(csv.DictReader((run / "iterations.csv").open()))[-1]
    parts = {key: float(row[key]) / 1e6 for key, _ in PARTS[1:]}
    parts["compute"] = float(row["duration_ns"]) / 1e6 - sum(parts.values())
    return parts


def main(out: Path) -> None:
    names = [row["scheme"] for row in csv.DictReader((out / "table.csv").open())]
    rows = [split(out / folder(name)) for name in names]
    print("run," + ",".join(label for _, label in PARTS) + ",iteration (ms)")
    for name, parts in zip(names, rows, strict=True):
        cells = ",".join(f"{parts[key]:.2f}" for key, _ in PARTS)
        print(f"{name},{cells},{sum(parts.values()):.2f}")
    fig, ax = plt.subplots(figsize=(10.5, 5))
    left = [0.0] * len(rows)
    for key, label in PARTS:
        widths = [parts[key] for parts in rows]
        if any(w > 0.005 for w in widths):
            ax.barh(names, widths, left=left, label=label)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax.invert_yaxis()
    ax.set_xlabel("iteration time (ms), split on the critical rank")
    ax.set_title("training-cc: where each iteration's time went")
    # Room past the longest bar, and the legend beside the axes, where it hides no bar.
    ax.set_xlim(0, 1.05 * max(left))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "split.png", dpi=100)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
