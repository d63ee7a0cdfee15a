"""A bad scenario raises ScenarioError naming the file, the key and what to write instead."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import aiccsim

from conftest import SMALL, python_m_aiccsim

BAD_DST = SMALL.replace("receiver = 0", "receiver = 9")


def test_the_error_names_the_key_in_a_dict() -> None:
    with pytest.raises(aiccsim.ScenarioError) as caught:
        aiccsim.run(tomllib.loads(BAD_DST))
    e = caught.value
    assert isinstance(e, ValueError)
    assert (e.file, e.key) == ("<dict>", "workload.receiver")
    assert "host 9 does not exist" in e.message
    assert str(e) == f"<dict>: workload.receiver: {e.message}"


def test_the_error_is_the_commands_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(BAD_DST)
    with pytest.raises(aiccsim.ScenarioError) as caught:
        aiccsim.run(path)
    assert (caught.value.file, caught.value.key) == (str(path), "workload.receiver")
    cli = python_m_aiccsim("validate", str(path))
    assert cli.returncode == 2
    assert cli.stderr == f"error: {caught.value}\n"


def test_none_in_a_dict_names_its_key() -> None:
    scenario = tomllib.loads(SMALL)
    scenario["switch"]["buffer"] = None
    with pytest.raises(aiccsim.ScenarioError) as caught:
        aiccsim.run(scenario)
    assert caught.value.key == "switch.buffer"
    assert "None" in caught.value.message


def test_unknown_keys_are_errors() -> None:
    scenario = tomllib.loads(SMALL)
    scenario["switch"]["bufer"] = "1MB"
    with pytest.raises(aiccsim.ScenarioError) as caught:
        aiccsim.run(scenario)
    assert caught.value.key == "switch.bufer"


def test_broken_toml_text_is_an_error_of_the_whole_text() -> None:
    with pytest.raises(aiccsim.ScenarioError) as caught:
        aiccsim.run("[topology\nkind = 1\n")
    assert (caught.value.file, caught.value.key) == ("<string>", "")
    assert "TOML parse error" in caught.value.message


def test_a_likely_mistake_is_a_warning_naming_its_key() -> None:
    text = SMALL.replace('algorithm = "none"', 'algorithm = "dcqcn"').replace("[cc]", "ecn = { enabled = false }\n[cc]")
    with pytest.warns(aiccsim.ScenarioWarning, match=r"<string>: switch\.ecn\.enabled: dcqcn slows down") as caught:
        r = aiccsim.run(text)
    assert len(caught) == 1
    assert [w["key"] for w in r.summary["warnings"]] == ["switch.ecn.enabled"]
