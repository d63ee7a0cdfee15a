"""A scenario from a file, from TOML text or from a dict is the same scenario."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pandas as pd
import pytest

import aiccsim

from conftest import SMALL, without_performance


def assert_same_run(a: aiccsim.Result, b: aiccsim.Result) -> None:
    assert without_performance(a.summary) == without_performance(b.summary)
    assert a.scenario == b.scenario
    pd.testing.assert_frame_equal(a.flows, b.flows, check_exact=True)


def test_path_text_and_dict_give_the_same_run(small_file: Path) -> None:
    from_path = aiccsim.run(small_file)
    assert_same_run(from_path, aiccsim.run(str(small_file)))
    assert_same_run(from_path, aiccsim.run(SMALL))
    assert_same_run(from_path, aiccsim.run(tomllib.loads(SMALL)))


def test_the_resolved_scenario_runs_the_same() -> None:
    first = aiccsim.run(SMALL)
    assert first.scenario["switch"]["buffer"] == "400KB"
    assert_same_run(first, aiccsim.run(first.scenario))


def test_seed_replaces_the_scenarios(tmp_path: Path) -> None:
    r = aiccsim.run(SMALL, seed=7)
    assert r.scenario["simulation"]["seed"] == 7
    r.write(tmp_path)
    assert '"seed": 7' in (tmp_path / "run.json").read_text()


def test_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        aiccsim.run(tmp_path / "nothing.toml")


def test_other_types_are_type_errors() -> None:
    with pytest.raises(TypeError, match="a scenario is a path, TOML text or a dict"):
        aiccsim.run(42)  # type: ignore[arg-type]
