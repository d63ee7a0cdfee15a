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

#[test]
fn reproduce_cuts_the_writing_of_a_run_at_its_max_wall() {
    // S1 with 100 MB per sender, sampled every 20 ns and traced: gigabytes of timelines over the
    // whole run, far more than its second allows to write; the run stops at its limit and
    // what it recorded by then still takes longer to write than the grace after it.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("experiments/big");
    std::fs::create_dir_all(&spec).unwrap();
    let text = std::fs::read_to_string(repo().join("benches/s1_incast16_dcqcn.toml")).unwrap();
    let text = text.replace("size = \"10MB\"", "size = \"100MB\"");
    let output = "\n[output]\nsample_interval = \"20ns\"\nwarn_above = \"100GB\"\ntrace = {}\n";
    std::fs::write(spec.join("s1.toml"), text + output).unwrap();
    let experiment =
        "title = \"S1 traced\"\nbase = \"s1.toml\"\n[[run]]\nname = \"traced\"\n[plot]\nkind = \"fct_cdf\"\n";
    std::fs::write(spec.join("experiment.toml"), experiment).unwrap();
    let out = dir.path().join("out");
    let (experiments, out_arg) = (dir.path().join("experiments"), out.to_str().unwrap().to_string());
    #[allow(clippy::disallowed_methods)] // how long the command took: what the test is about
    let began = std::time::Instant::now();
    let o = aiccsim(&[
        "reproduce",
        "big",
        "--experiments",
        experiments.to_str().unwrap(),
        "--out",
        &out_arg,
        "--max-wall",
        "1s",
    ]);
    // The limit, the second of grace for writing, and a generous margin for a loaded machine.
    assert!(began.elapsed().as_secs_f64() < 1.0 + 1.0 + 10.0, "{:?}", began.elapsed());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("--max-wall reached while writing"), "{stderr}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("traced/summary.json")).unwrap()).unwrap();
    assert_eq!(summary["partial"], serde_json::json!(true));
    let cut = summary["results_cut"].as_array().expect("results_cut");
    assert!(cut.iter().any(|c| c == "rates.csv"), "{cut:?}");
    assert!(out.join("traced/flows.csv").is_file() && out.join("traced/ports.csv").is_file());
}
