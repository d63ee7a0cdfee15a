"""`aiccsim.load` gives back what `aiccsim.run` gave, from CSV or Parquet files, and says what is
wrong with a folder that is not a results folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pandas as pd
import polars.testing
import pyarrow as pa
import pytest

import aiccsim
from aiccsim._schema import TABLES as SCHEMAS

from conftest import SMALL, SMALL_UNSAMPLED, STOPPED, TABLES, without_performance
from test_schema import SCHEMA

ALL = [*TABLES, "collectives", "collective_stats", "iterations", "jobs"]


@pytest.fixture(scope="module")
def run(small_or_stopped: aiccsim.Result) -> aiccsim.Result:
    return small_or_stopped


def assert_same_result(a: aiccsim.Result, b: aiccsim.Result) -> None:
    assert a.summary == b.summary
    assert a.run_info == b.run_info and a.scenario == b.scenario
    for name in ALL:
        x, y = getattr(a.arrow, name), getattr(b.arrow, name)
        assert (x is None) == (y is None), name
        if x is None:
            continue
        # Schema (types and nullability) and values.
        assert x.schema == y.schema and x.equals(y), name
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)
        polars.testing.assert_frame_equal(getattr(a.polars, name), getattr(b.polars, name), check_exact=True)


@pytest.mark.parametrize("format", ["csv", "parquet"])
def test_load_gives_back_the_run(run: aiccsim.Result, format: str, tmp_path: Path) -> None:
    run.write(tmp_path, format=format)
    assert_same_result(run, aiccsim.load(tmp_path))


def test_the_tables_of_a_run_have_the_schemas_load_uses(run: aiccsim.Result) -> None:
    """_schema.py is the Python copy of the native module's column types: they must agree."""
    for name in TABLES:
        assert getattr(run.arrow, name).schema == SCHEMAS[name], name


def test_load_reads_what_the_binary_wrote(small_file: Path, aiccsim_bin: Path, tmp_path: Path) -> None:
    subprocess.run([str(aiccsim_bin), "run", str(small_file), "--out", str(tmp_path), "-q"], check=True)
    loaded = aiccsim.load(tmp_path)
    ran = aiccsim.run(small_file)
    assert without_performance(loaded.summary) == without_performance(ran.summary)
    for name in TABLES:
        assert getattr(loaded.arrow, name).equals(getattr(ran.arrow, name)), name


def test_a_loaded_result_writes_the_same_files(run: aiccsim.Result, tmp_path: Path) -> None:
    """CSV -> Parquet -> CSV gives the engine's bytes back (the JSON files too)."""
    run.write(tmp_path / "engine")
    aiccsim.load(tmp_path / "engine").write(tmp_path / "parquet", format="parquet")
    aiccsim.load(tmp_path / "parquet").write(tmp_path / "again")
    engine = sorted(p.name for p in (tmp_path / "engine").iterdir())
    assert engine == sorted(p.name for p in (tmp_path / "again").iterdir())
    for name in engine:
        assert (tmp_path / "engine" / name).read_bytes() == (tmp_path / "again" / name).read_bytes(), name


JOBS = """
[topology]
kind = "star"
hosts = 6
link = { bandwidth = "100Gbps", delay = "1us" }
[[jobs]]
name = "train"
ranks = 4
[jobs.workload]
kind = "training"
iterations = 2
layers = [{ forward = "5us", backward = "10us", all_reduce = { size = "200KB" } }]
[[jobs]]
ranks = 2
start = "3us"
[jobs.workload]
kind = "all_to_all"
size = "100KB"
"""


@pytest.mark.parametrize("format", ["csv", "parquet"])
def test_jobs_and_collective_stats_come_back(format: str, tmp_path: Path) -> None:
    r = aiccsim.run(JOBS)
    assert list(r.jobs["job"]) == ["train", "job1"] and list(r.jobs["hosts"]) == ["0-3", "4-5"]
    assert list(r.collective_stats["job"]) == ["train", "train", "job1"]
    assert (r.iterations["job"] == "train").all() and len(r.iterations) == 2
    r.write(tmp_path, format=format)
    assert_same_result(r, aiccsim.load(tmp_path))


def test_collectives_hold_the_summary_entries() -> None:
    done = aiccsim.run(STOPPED.replace('stop_time = "30us"', ""))
    stopped = aiccsim.run(STOPPED)
    for r in (done, stopped):
        assert r.collectives.to_dict("records")[0].keys() == r.summary["collectives"][0].keys()
        assert len(r.collectives) == len(r.summary["collectives"]) == 1
    row = done.collectives.iloc[0]
    assert (row["name"], row["ranks"], row["flows"]) == ("all_reduce:0", 4, 24)
    assert row["duration_ns"] == row["finish_ns"] - row["start_ns"] == done.summary["completion_time_ns"]
    # A collective that did not finish keeps its nulls.
    assert stopped.collectives["finish_ns"].isna().all() and stopped.collectives["duration_ns"].isna().all()
    assert stopped.polars.collectives["duration_ns"].null_count() == 1
    # No collective: an empty table with the columns all the same.
    empty = aiccsim.run(SMALL).collectives
    assert empty.empty and list(empty.columns) == ["name", "ranks", "flows", "start_ns", "finish_ns", "duration_ns"]


def test_the_format_can_be_chosen_and_the_newer_file_wins(tmp_path: Path) -> None:
    r = aiccsim.run(SMALL)
    r.write(tmp_path, format="both")
    # Spoil the CSV copy of flows: reading Parquet does not see it, reading CSV does.
    flows_csv = tmp_path / "flows.csv"
    flows_csv.write_text(flows_csv.read_text().replace("\n0,1,0,", "\n7,1,0,", 1))
    parquet_time = (tmp_path / "flows.parquet").stat().st_mtime
    os.utime(flows_csv, (parquet_time - 10, parquet_time - 10))
    assert aiccsim.load(tmp_path).flows["flow_id"][0] == 0
    assert aiccsim.load(tmp_path, format="parquet").flows["flow_id"][0] == 0
    assert aiccsim.load(tmp_path, format="csv").flows["flow_id"][0] == 7
    # A CSV file written after the Parquet file (a new run into the folder) is the one read.
    os.utime(flows_csv, (parquet_time + 10, parquet_time + 10))
    assert aiccsim.load(tmp_path).flows["flow_id"][0] == 7


def test_tables_the_scenario_did_not_record_are_none_even_if_a_file_is_left(tmp_path: Path) -> None:
    aiccsim.run(SMALL).write(tmp_path)
    queues = (tmp_path / "queues.csv").read_text()
    # A run without [output] into the same folder removes the older run's timelines ...
    aiccsim.run(SMALL_UNSAMPLED).write(tmp_path)
    assert not (tmp_path / "queues.csv").exists()
    # ... and one left there anyway (by hand, or by an older aiccsim) is not read as this run's.
    (tmp_path / "queues.csv").write_text(queues)
    loaded = aiccsim.load(tmp_path)
    assert loaded.queues is None and loaded.rates is None and loaded.trace is None and loaded.pauses is None
    assert loaded.links is None


def test_pauses_are_optional_and_read_with_their_schema(tmp_path: Path) -> None:
    aiccsim.run(SMALL).write(tmp_path)
    # A folder from an aiccsim that did not write pauses.csv yet.
    (tmp_path / "pauses.csv").unlink()
    assert aiccsim.load(tmp_path).pauses is None
    (tmp_path / "pauses.csv").write_text(
        "time_ns,node,port,peer,priority,event\n1000.000,s0,1,h1,3,pause\n2500.500,s0,1,h1,3,resume\n"
    )
    pauses = aiccsim.load(tmp_path).pauses
    assert pauses is not None
    assert [(c, str(t)) for c, t in pauses.dtypes.items()] == SCHEMA["pauses"]
    assert pauses["time_ns"].tolist() == [1000.0, 2500.5] and pauses["event"].tolist() == ["pause", "resume"]


def test_links_are_optional_and_read_with_their_schema(tmp_path: Path) -> None:
    run = aiccsim.run(SMALL)
    run.write(tmp_path)
    assert run.links is not None and len(run.links) > 0, "the switch's links to the hosts are sampled"
    assert aiccsim.load(tmp_path).links.equals(run.links)
    # A folder from an aiccsim that did not write links.csv yet.
    (tmp_path / "links.csv").unlink()
    assert aiccsim.load(tmp_path).links is None
    (tmp_path / "links.csv").write_text("time_ns,node,port,peer,bytes,utilisation\n10000.000,s0,4,s2,124712,0.997696\n")
    links = aiccsim.load(tmp_path).links
    assert links is not None
    assert [(c, str(t)) for c, t in links.dtypes.items()] == SCHEMA["links"]
    assert links["bytes"].tolist() == [124712] and links["utilisation"].tolist() == [0.997696]


def test_not_a_results_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such folder"):
        aiccsim.load(tmp_path / "nothing")
    with pytest.raises(FileNotFoundError, match=r"not a results folder: summary\.json is missing"):
        aiccsim.load(tmp_path)
    (tmp_path / "table.csv").write_text("scheme\n")
    with pytest.raises(FileNotFoundError, match="it is an experiment's folder .*: load one of its runs' folders"):
        aiccsim.load(tmp_path)
    aiccsim.run(SMALL).write(tmp_path)
    (tmp_path / "flows.csv").unlink()
    with pytest.raises(FileNotFoundError, match=r"flows\.csv \(or flows\.parquet\) is missing"):
        aiccsim.load(tmp_path)


def test_a_missing_timeline_names_the_setting(tmp_path: Path) -> None:
    aiccsim.run(SMALL).write(tmp_path)
    (tmp_path / "rates.csv").unlink()
    with pytest.raises(FileNotFoundError, match=r"rates\.csv .*is missing.*output\.sample_interval"):
        aiccsim.load(tmp_path)


def test_a_malformed_file_names_the_file_and_the_column(tmp_path: Path) -> None:
    aiccsim.run(SMALL).write(tmp_path)
    ports = tmp_path / "ports.csv"
    text = ports.read_text()
    ports.write_text(text.replace("tx_bytes", "bytes_sent", 1))
    with pytest.raises(ValueError, match=r"ports\.csv: the columns are node, port, peer, tx_packets, bytes_sent"):
        _ = aiccsim.load(tmp_path).ports
    lines = text.splitlines(keepends=True)
    ports.write_text(lines[0] + ",".join([""] + lines[1].split(",")[1:]))
    with pytest.raises(ValueError, match=r"ports\.csv: column node has an empty value in row 1"):
        _ = aiccsim.load(tmp_path).ports
    ports.write_text(lines[0] + lines[1].replace(",0,", ",zero,", 1))
    with pytest.raises(ValueError, match=r"ports\.csv: cannot read it as aiccsim's ports table"):
        _ = aiccsim.load(tmp_path).ports
    (tmp_path / "summary.json").write_text("{")
    with pytest.raises(ValueError, match=r"summary\.json: not valid JSON"):
        aiccsim.load(tmp_path)


def test_a_parquet_file_with_other_types_is_refused(tmp_path: Path) -> None:
    r = aiccsim.run(SMALL)
    r.write(tmp_path, format="parquet")
    import pyarrow.parquet as pq

    queues = r.arrow.queues
    as_text = queues.set_column(3, "bytes", queues.column("bytes").cast(pa.string()))
    pq.write_table(as_text.replace_schema_metadata(None), tmp_path / "queues.parquet")
    assert aiccsim.load(tmp_path).queues["bytes"].dtype == "int64"  # text that holds integers is cast
    pq.write_table(pa.table({"time_ns": [1.0]}), tmp_path / "queues.parquet")
    with pytest.raises(ValueError, match=r"queues\.parquet: the columns are time_ns; aiccsim writes"):
        _ = aiccsim.load(tmp_path).queues


def test_jobs_built_in_python_run_as_their_toml_file() -> None:
    from aiccsim.scenario import all_reduce, all_to_all, job, star

    layer = {"forward": "5us", "backward": "10us", "all_reduce": {"size": "200KB"}}
    built = (
        star(hosts=6, bandwidth="100Gbps", delay="1us")
        # (No builder for training yet: a workload is any mapping with a "workload" table.)
        | job({"workload": {"kind": "training", "iterations": 2, "layers": [layer]}}, name="train", ranks=4)
        | job(all_to_all(size="100KB"), ranks=2, start="3us")
    )
    r, from_file = aiccsim.run(built), aiccsim.run(JOBS)
    assert r.scenario == from_file.scenario
    pd.testing.assert_frame_equal(r.jobs, from_file.jobs)
    # Several workloads: a list, run in order.
    sequence = job(all_to_all(size="100KB"), all_reduce(size="50KB"), ranks=2)["jobs"][0]["workload"]
    assert [w["kind"] for w in sequence] == ["all_to_all", "all_reduce"]
