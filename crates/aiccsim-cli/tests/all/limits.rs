//! `--max-wall` bounds the writing of results too: a run whose result files would take longer
//! to write than the limit allows is told so before it starts, and stopped runs leave no
//! half-written files of an earlier, killed run behind.

use crate::common::{aiccsim, repo};

#[test]
fn results_too_big_to_write_within_the_wall_limit_are_announced_up_front() {
    // S1 sampled every 100 ns: about 150 MB of timelines over its ideal 12.8 ms, more than
    // one second of writing.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo().join("benches/s1_incast16_dcqcn.toml")).unwrap();
    let scenario = dir.path().join("s1.toml");
    std::fs::write(&scenario, format!("{text}\n[output]\nsample_interval = \"100ns\"\nwarn_above = \"10GB\"\n"))
        .unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join(".rates.csv.tmp"), "left by a killed run").unwrap();
    let o = aiccsim(&["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--max-wall", "1s", "-q"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("more than the wall-clock limit of 1 s") && stderr.contains("results_cut"), "{stderr}");
    // Whether the run completed in its second or not, its folder holds its results only.
    assert!(out.join("summary.json").exists(), "{stderr}");
    assert!(!out.join(".rates.csv.tmp").exists());
}
