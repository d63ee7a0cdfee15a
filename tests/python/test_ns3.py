"""`aiccsim.import_ns3`: the ns-3 pair in tests/ns3 imports to the same scenario the CLI writes,
runs, and its flows are the flow file's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import aiccsim

from conftest import REPO

NS3 = REPO / "tests" / "ns3"


def test_flows_match_the_flow_file() -> None:
    text = aiccsim.import_ns3(NS3 / "topology.txt", NS3 / "flow.txt", base=NS3 / "base.toml")
    flows = aiccsim.run(text).flows

    # ns-3 node ids 2 and 5 are switches; hosts are the others, in order.
    host = {ns3: i for i, ns3 in enumerate([0, 1, 3, 4])}
    lines = (NS3 / "flow.txt").read_text().split("\n")[1:]
    expected = [line.split() for line in lines if line.strip()]
    assert len(flows) == len(expected)
    for row, (src, dst, _prio, _port, size, start_s) in zip(flows.itertuples(), expected, strict=True):
        assert (row.src, row.dst, row.size_bytes) == (host[int(src)], host[int(dst)], int(size))
        assert row.start_ns == round(float(start_s) * 1e9)
    assert flows["finish_ns"].notna().all()


def test_same_text_as_the_cli(aiccsim_bin: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli.toml"
    args = ["import-ns3", "--topology", str(NS3 / "topology.txt"), "--flows", str(NS3 / "flow.txt")]
    done = subprocess.run([aiccsim_bin, *args, "--base", str(NS3 / "base.toml"), "-o", str(out)], capture_output=True)
    assert done.returncode == 0, done.stderr
    py_out = tmp_path / "py.toml"
    text = aiccsim.import_ns3(NS3 / "topology.txt", NS3 / "flow.txt", base=NS3 / "base.toml", out=py_out)
    assert text == out.read_text() == py_out.read_text()
    # With ns-3's configuration file: the same twin, and its warnings as UserWarnings.
    config = NS3 / "config_hpcc.txt"
    done = subprocess.run([aiccsim_bin, *args, "--config", str(config), "-o", str(out)], capture_output=True)
    assert done.returncode == 0, done.stderr
    with pytest.warns(UserWarning, match="GLOBAL_T"):
        assert aiccsim.import_ns3(NS3 / "topology.txt", NS3 / "flow.txt", config=config) == out.read_text()
    # The base as text gives the same scenario as the base as a path.
    assert aiccsim.import_ns3(NS3 / "topology.txt", NS3 / "flow.txt", base=(NS3 / "base.toml").read_text()) == text


def test_a_bad_file_names_its_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "flow.txt"
    bad.write_text("1\n0 9 3 100 1000 2.0\n")
    with pytest.raises(aiccsim.ScenarioError) as e:
        aiccsim.import_ns3(NS3 / "topology.txt", bad)
    assert (e.value.file, e.value.key) == (f"{bad}:2", "dst")
    assert "node 9 does not exist" in e.value.message


def test_unread_lines_are_a_warning(tmp_path: Path) -> None:
    topo = tmp_path / "topology.txt"
    topo.write_text((NS3 / "topology.txt").read_text() + "0 5 100Gbps 1us 0\n")
    with pytest.warns(UserWarning, match="ignored"):
        aiccsim.import_ns3(topo, NS3 / "flow.txt")
