# %% [markdown]
# # Comparing congestion control on an incast
#
# A notebook-style walk-through (each `# %%` is a cell: open it in Jupyter, VS Code or run it
# as a script). CI runs it (tests/python/test_docs_examples.py), so it stays true.
#
# Eight senders each send 500 KB to one receiver through one 100 Gbps switch. We run the same
# scenario under four algorithms and compare how long the incast takes, how deep the switch
# queue gets and whether PFC had to pause anyone.

# %%
import pandas as pd

import aiccsim
from aiccsim.scenario import cc, incast, output, star

base = (
    star(hosts=9, bandwidth="100Gbps", delay="1us")
    | incast(senders=range(1, 9), receiver=0, size="500KB")
    | output(sample_interval="5us", queue_switches=[0])
)

# %% [markdown]
# One run per algorithm. The builders of `aiccsim.scenario` make the plain dict `aiccsim.run`
# takes (`|` merges them); `cc(...)` picks the algorithm and every other parameter keeps its
# published default.

# %%
results = {}
for algorithm in ["pfc_only", "dcqcn", "hpcc", "pc4"]:
    results[algorithm] = aiccsim.run(base | cc(algorithm))

table = pd.DataFrame(
    {
        name: {
            "completion_us": r.summary["completion_time_ns"] / 1e3,
            "p99_slowdown": r.summary["slowdown"]["p99"],
            "max_queue_kb": r.summary["max_switch_queue_bytes"] / 1e3,
            "pause_frames": r.summary["pause_frames"],
            "mean_rtt_us": r.summary["rtt_ns"]["mean"] / 1e3,
        }
        for name, r in results.items()
    }
).T
print(table.round(2))

# %% [markdown]
# The ideal is 8 x 500 KB through one 100 Gbps port: 320 us plus headers. Every algorithm moves
# all the bytes (no loss under PFC); they differ in the queue they build to do it.

# %%
ideal_us = 8 * 500e3 * 8 / 100e9 * 1e6
assert all(r.summary["flows_finished"] == 8 for r in results.values())
assert all(r.summary["packets_dropped"] == 0 for r in results.values())
assert table["completion_us"].min() > ideal_us
# Delay- and telemetry-based control keeps the queue far below what PFC alone lets build.
assert table.loc["hpcc", "max_queue_kb"] < table.loc["pfc_only", "max_queue_kb"] / 4
assert table.loc["pc4", "max_queue_kb"] < table.loc["pfc_only", "max_queue_kb"] / 4

# %% [markdown]
# The queue timeline of the receiver's port (port 0 of switch 0), from `queues.csv`'s table.

# %%
timeline = pd.concat(
    {name: r.queues[r.queues["port"] == 0].set_index("time_ns")["bytes"] for name, r in results.items()},
    axis=1,
)
print(timeline.describe().loc[["mean", "max"]].round(0))

# %% [markdown]
# The same comparison as plots (`aiccsim.plot`, matplotlib without pyplot): the queue of the
# receiver's port and the FCT CDF, one colour per algorithm. In a notebook, `fig` shows itself;
# `aiccsim report DIR` puts every plot of a run on one HTML page.

# %%
from matplotlib.figure import Figure

from aiccsim import plot

fig = Figure(figsize=(11, 4), layout="constrained")
queue_ax, fct_ax = fig.subplots(1, 2)
plot.queue_timeline(results, ax=queue_ax, ports=[(0, 0)])
plot.fct_cdf(results, ax=fct_ax)
print(f"plotted {len(queue_ax.get_lines())} queue lines and {len(fct_ax.get_lines())} FCT CDFs")
assert len(fct_ax.get_lines()) == len(results)
