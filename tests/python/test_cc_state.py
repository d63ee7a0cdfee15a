"""`output.cc_state` from Python: the algorithm's own state as a table beside the rates, the same
from a run and from its folder, and one pivot away from one column per name."""

from __future__ import annotations

from pathlib import Path

import aiccsim
from aiccsim import scenario as sc

BASE = (
    sc.star(hosts=9, bandwidth="100Gbps", delay="1us")
    | sc.cc("dcqcn")
    | sc.incast(senders="1..=8", receiver=0, size="1MB")
)
INCAST = BASE | sc.output(sample_interval="5us", rate_flows=[1, 2], cc_state=True)


def test_the_state_sits_beside_the_rates_and_survives_a_round_trip(tmp_path: Path) -> None:
    r = aiccsim.run(INCAST)
    state = r.cc_state
    assert state is not None and list(state.columns) == ["time_ns", "flow", "name", "value"]
    assert set(state["name"]) == {"alpha", "target_gbps"}
    wide = state.pivot_table(index=["time_ns", "flow"], columns="name", values="value").reset_index()
    joined = r.rates.merge(wide, on=["time_ns", "flow"], how="left")
    # Every rates row has its state, and the rate never exceeds DCQCN's target.
    assert joined["alpha"].notna().all() and len(joined) == len(r.rates)
    assert (joined["rate_gbps"] <= joined["target_gbps"] + 1e-9).all()
    assert (joined["alpha"] < 1).any(), "the incast marks packets: alpha moves"
    r.write(tmp_path / "out")
    assert aiccsim.load(tmp_path / "out").cc_state.equals(state)


def test_without_the_key_there_is_no_table() -> None:
    r = aiccsim.run(BASE | sc.output(sample_interval="5us", rate_flows=[1, 2]))
    assert r.cc_state is None and r.arrow.cc_state is None
    assert "cc_state" not in r.scenario["output"]
