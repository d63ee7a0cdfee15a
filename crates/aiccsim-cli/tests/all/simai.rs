//! `aiccsim import-simai`: an AICB-format workload file with every comm type and group suffix
//! imports, runs, and moves the bytes its rows describe on the groups they name.

use crate::common::aiccsim;

use std::path::PathBuf;

fn simai(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/simai").join(file)
}

/// Bytes one rank of a group of `g` sends in a collective of `size` (counted as SimAI does).
fn per_rank(kind: &str, g: u64, size: u64) -> u64 {
    let factor = if kind.starts_with("ALLREDUCE") { 2 } else { 1 };
    factor * (g - 1) * size / g
}

#[test]
fn every_comm_type_runs_on_its_groups() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("scenario.toml");
    let file = simai("aicb_every_type.txt");
    let o = aiccsim(&[
        "import-simai",
        file.to_str().unwrap(),
        "--base",
        simai("base.toml").to_str().unwrap(),
        "--iterations",
        "2",
        "-o",
        scenario.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("16 GPUs (tp 2, ep 4), 8 layers, 17 collectives per iteration (each on every group of its dimension), 2 iteration(s)"), "{said}");

    let out = dir.path().join("out");
    let o = aiccsim(&["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // 16 ranks: tensor groups of 2, data-parallel groups of 8, expert groups of 4, and the
    // data-parallel ranks of an expert, 2.
    let text = std::fs::read_to_string(&file).unwrap();
    let mut expected = 0;
    for row in text.lines().skip(2) {
        let t: Vec<&str> = row.split_whitespace().collect();
        for (kind, size, default) in [(t[3], t[4], 2), (t[6], t[7], 2), (t[9], t[10], 8)] {
            if kind == "NONE" {
                continue;
            }
            let g = if kind.ends_with("_DP_EP") {
                2
            } else if kind.ends_with("_EP") {
                4
            } else {
                default
            };
            expected += 16 * per_rank(kind, g, size.parse().unwrap());
        }
    }
    let rows = std::fs::read_to_string(out.join("iterations.csv")).unwrap();
    let rows: Vec<Vec<&str>> = rows.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(row[8].parse::<u64>().unwrap(), expected, "bytes of iteration {}", row[1]);
        assert!(!row[3].is_empty(), "iteration {} finished", row[1]);
    }
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let collectives = summary["collectives"].as_array().unwrap();
    for kind in ["all_reduce", "all_gather", "reduce_scatter", "all_to_all"] {
        assert!(collectives.iter().any(|c| c["name"].as_str().unwrap().starts_with(kind)), "{kind}");
    }
}

#[test]
fn a_malformed_file_exits_2_naming_the_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.txt");
    let text = std::fs::read_to_string(simai("aicb_every_type.txt")).unwrap().replace("ALLTOALL_DP_EP", "BROADCAST");
    std::fs::write(&bad, text).unwrap();
    let out = dir.path().join("s.toml");
    let o = aiccsim(&["import-simai", bad.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.txt:8: weight-gradient comm type") && err.contains("BROADCAST"), "{err}");
    assert!(!out.exists(), "nothing is written");
}
