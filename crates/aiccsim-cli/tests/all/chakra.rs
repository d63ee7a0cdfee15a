//! `aiccsim import-chakra`: the example trace in examples/chakra/ imports into a scenario that
//! runs, its report counting what the files hold; a malformed trace (cut short, a cycle, an
//! unknown collective, a rank missing) is refused with exit code 2, naming the file and node,
//! by `import-chakra` and by `run` alike.

use crate::common::{aiccsim, repo};

use aiccsim::workload::chakra::schema::{CollectiveCommType, Value};
use aiccsim::workload::chakra::write::{collective, compute, write_trace};
use std::path::{Path, PathBuf};
use std::process::Output;

fn example() -> PathBuf {
    repo().join("examples/chakra")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn the_example_trace_imports_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("scenario.toml");
    let groups = example().join("comm_groups.json");
    let trace = example().join("tiny");
    let o = aiccsim(&[
        "import-chakra",
        trace.to_str().unwrap(),
        "--comm-groups",
        groups.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let (said, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(said.contains(": 4 ranks (") && said.contains("schema 1.0.2-chakra.0.0.4) on a star of 4 hosts"), "{said}");
    // Counted from the example (tests/all/workload_chakra.rs in the core crate writes it).
    assert!(said.contains("nodes: 1 METADATA_NODE, 4 MEM_LOAD_NODE, 1 MEM_STORE_NODE, 11 COMP_NODE, 1 COMM_SEND_NODE, 1 COMM_RECV_NODE, 8 COMM_COLL_NODE"), "{said}");
    assert!(said.contains("communication: 2 all_gather, 1 all_reduce, 1 send_recv"), "{said}");
    assert!(said.contains("makes 29 flows"), "{said}");
    let scenario = std::fs::read_to_string(&out).unwrap();
    assert!(scenario.contains("kind = \"chakra\"") && scenario.contains("kind = \"star\""), "{scenario}");

    let results = dir.path().join("out");
    let o = aiccsim(&["run", out.to_str().unwrap(), "--out", results.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let flows = std::fs::read_to_string(results.join("flows.csv")).unwrap();
    assert_eq!(flows.lines().count(), 1 + 29);
    let collectives = std::fs::read_to_string(results.join("collectives.csv")).unwrap();
    assert!(collectives.contains("\nsend_recv:3,,send_recv,direct,500000,2,"), "{collectives}");

    // Without -o: the scenario on standard output, the report on standard error.
    let o = aiccsim(&["import-chakra", trace.to_str().unwrap(), "--comm-groups", groups.to_str().unwrap()]);
    let (said, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(said.starts_with("# Imported by aiccsim import-chakra: 4 ranks"), "{said}");
    assert!(err.starts_with("wrote the scenario to standard output: 4 ranks"), "{err}");
}

#[test]
fn a_base_scenario_keeps_its_topology() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.toml");
    std::fs::write(
        &base,
        "[topology]\nkind = \"star\"\nhosts = 6\nlink = { bandwidth = \"25Gbps\", delay = \"2us\" }\n[cc]\nalgorithm = \"dcqcn\"\n[workload]\nkind = \"incast\"\nsenders = \"1..=4\"\nreceiver = 0\nsize = \"1MB\"\n",
    )
    .unwrap();
    let out = dir.path().join("s.toml");
    let groups = example().join("comm_groups.json");
    let trace = example().join("tiny");
    let o = aiccsim(&[
        "import-chakra",
        trace.to_str().unwrap(),
        "--comm-groups",
        groups.to_str().unwrap(),
        "--base",
        base.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let (said, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(said.contains(&format!("on the topology of {}", base.display())), "{said}");
    let s = aiccsim::Scenario::load(&out).unwrap();
    assert_eq!(s.workload.as_ref().unwrap().name(), "chakra");
    assert_eq!(s.cc.name(), "dcqcn");
    let scenario = std::fs::read_to_string(&out).unwrap();
    assert!(scenario.contains("hosts = 6") && scenario.contains("25Gbps"), "{scenario}");
}

/// The example's trace, damaged by `damage`, in a folder of its own with its process groups.
fn damaged(damage: impl Fn(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(example()).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    damage(dir.path());
    dir
}

/// import-chakra and run both refuse the trace in `dir` with exit code 2; returns the message.
fn refused(dir: &Path) -> String {
    let groups = dir.join("comm_groups.json");
    let o = aiccsim(&["import-chakra", dir.join("tiny").to_str().unwrap(), "--comm-groups", groups.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let scenario = dir.join("s.toml");
    let workload = "kind = \"chakra\"\ntrace = \"tiny\"\ncomm_groups = \"comm_groups.json\"\n";
    std::fs::write(&scenario, format!("[topology]\nkind = \"star\"\nhosts = 4\nlink = {{ bandwidth = \"100Gbps\", delay = \"1us\" }}\n[workload]\n{workload}")).unwrap();
    let o = aiccsim(&["run", scenario.to_str().unwrap(), "--out", dir.join("out").to_str().unwrap()]);
    let (_, run_err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{run_err}");
    assert!(run_err.contains("s.toml: workload.trace: "), "{run_err}");
    err
}

#[test]
fn malformed_traces_exit_with_2_naming_the_file_and_node() {
    let cut = damaged(|d| {
        let f = d.join("tiny.2.et");
        let bytes = std::fs::read(&f).unwrap();
        std::fs::write(&f, &bytes[..bytes.len() - 10]).unwrap();
    });
    let e = refused(cut.path());
    assert!(e.contains("tiny.2.et: truncated: node message 7"), "{e}");

    let missing = damaged(|d| std::fs::remove_file(d.join("tiny.1.et")).unwrap());
    let e = refused(missing.path());
    assert!(e.contains("rank 1 has no file") && e.contains("tiny.1.et is missing"), "{e}");

    // Two ranks whose compute nodes wait for each other; and a collective of type 12.
    let cycle = damaged(|d| {
        let (a, b) = (compute(1, 1, &[2]), compute(2, 1, &[1]));
        write_trace(d, "tiny", &[vec![a.clone(), b.clone()], vec![a, b]]).unwrap();
        for r in 2..4 {
            std::fs::remove_file(d.join(format!("tiny.{r}.et"))).unwrap();
        }
    });
    let e = refused(cycle.path());
    assert!(e.contains("tiny.0.et: node 1: the dependencies form a cycle (node 1 -> node 2 -> node 1"), "{e}");

    let unknown = damaged(|d| {
        let mut c = collective(1, CollectiveCommType::AllReduce, 1000, "", &[]);
        c.attr[0].value = Some(Value::Int64Val(12));
        write_trace(d, "tiny", &[vec![c.clone()], vec![c]]).unwrap();
        for r in 2..4 {
            std::fs::remove_file(d.join(format!("tiny.{r}.et"))).unwrap();
        }
    });
    let e = refused(unknown.path());
    assert!(e.contains("tiny.0.et: node 1: comm_type = 12 is not a collective of the Chakra schema"), "{e}");
}
