"""Every notebook-style example in docs/examples runs as written."""

from __future__ import annotations

import runpy

import pytest

from conftest import REPO

EXAMPLES = sorted((REPO / "docs" / "examples").glob("*.py"))


def test_there_are_examples() -> None:
    assert EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path, capsys) -> None:
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip(), "an example shows what it computed"
