"""`python -m aiccsim` is the `aiccsim` command."""

from __future__ import annotations

import aiccsim

from conftest import SMALL, python_m_aiccsim


def test_version() -> None:
    done = python_m_aiccsim("--version")
    assert (done.returncode, done.stdout) == (0, f"aiccsim {aiccsim.__version__}\n")


def test_validate_prints_the_resolved_scenario(tmp_path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(SMALL)
    done = python_m_aiccsim("validate", str(path))
    assert done.returncode == 0, done.stderr
    assert 'buffer = "400KB"' in done.stdout
    assert "# estimated memory:" in done.stdout


def test_usage_errors_exit_2() -> None:
    done = python_m_aiccsim("frobnicate")
    assert done.returncode == 2
    assert "unrecognized subcommand" in done.stderr
