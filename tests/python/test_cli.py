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


def test_a_closed_stdout_pipe_ends_quietly(tmp_path) -> None:
    """`python -m aiccsim validate big.toml | head -1` ends by SIGPIPE, without a traceback."""
    import signal
    import subprocess
    import sys

    flows = ", ".join(f'{{ src = {1 + i % 3}, dst = 0, size = "1KB" }}' for i in range(5000))
    path = tmp_path / "big.toml"
    path.write_text(SMALL.split("[workload]")[0] + f'[workload]\nkind = "flows"\nflows = [{flows}]\n')
    child = subprocess.Popen(
        [sys.executable, "-m", "aiccsim", "validate", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.readline()
    child.stdout.close()
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=60) == -signal.SIGPIPE, stderr
    assert "Traceback" not in stderr and "panicked" not in stderr
