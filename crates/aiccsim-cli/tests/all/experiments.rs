//! The shipped experiments meet what REPRODUCE.md says they must show: `reproduce` evaluates
//! each experiment's `[[check]]` claims on its table and fails when one does not hold.

use crate::common::aiccsim;

use std::path::{Path, PathBuf};

fn experiments() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments")
}

fn reproduce(id: &str, experiments: &Path, out: &Path) -> String {
    reproduce_expecting(id, experiments, out, 0)
}

/// `reproduce` of an experiment whose claims fail or hold as its README says: exit code 0 when
/// every claim holds, 3 when one does not (the table and checks are written either way; the
/// plot, drawn by the Python package, is tested in tests/python/test_experiment_plot.py).
/// Returns what it printed, stdout then stderr.
fn reproduce_expecting(id: &str, experiments: &Path, out: &Path, code: i32) -> String {
    let o = aiccsim(&["reproduce", id, "--experiments", experiments.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{id}: {stderr}\n{stdout}");
    assert!(out.join("table.csv").is_file(), "{id}: table.csv missing");
    assert_eq!(out.join("checks.csv").is_file(), has_claims(experiments, id), "{id}: checks.csv for its claims");
    assert_no_spurious_timeouts(out);
    assert_fast_forward_agrees(id, experiments, out);
    // The verdicts are on stdout; a failed claim's count ends the run on stderr.
    stdout + &stderr
}

/// Whether experiment `id` states claims (`[[check]]`), which `reproduce` writes to checks.csv.
fn has_claims(experiments: &Path, id: &str) -> bool {
    std::fs::read_to_string(experiments.join(id).join("experiment.toml")).unwrap().contains("[[check]]")
}

/// Issue 33's targets for fast-forward's error: completion and iteration times within 1%, FCT
/// p50 and p99 within 2% (`summary.json`'s paths and the bound in percent).
const FAST_FORWARD_TARGETS: [(&[&str], f64); 4] = [
    (&["completion_time_ns"], 1.0),
    (&["iterations", "mean_duration_ns"], 1.0),
    (&["fct_ns", "p50"], 2.0),
    (&["fct_ns", "p99"], 2.0),
];

/// Runs whose FCT p50 with fast-forward misses issue 33's 2% (measured in session 22,
/// BENCHMARKS.md), each held to its measured error so that a larger one fails. Both are a skip of
/// flows still converging on a shared port: the skip freezes their shares, and after the thaw
/// they converge that much later (pc4-longshort's 5 MB flow ends 17 us early, -2.2%; pc4-incast's
/// median flow of 8, -3.0%).
const KNOWN_P50_MISSES: [(&str, f64); 2] = [("pc4-longshort/pc4", 2.3), ("pc4-incast/pc4_n_8", 3.1)];

/// Claims whose verdict fast-forward changes (sessions 22 and 23, BENCHMARKS.md): barre-fairness's
/// min Jain is 0.970 packet by packet and 0.947 with fast-forward at seed 1. Over seeds 1-20 the
/// two modes have the same spread (means 0.9718 and 0.9702, the difference per seed -0.0016 +-
/// 0.0050) and the claim fails at 2 and 4 seeds of 20: a skip moves the trajectory as a seed
/// does, and this claim is near its threshold (its README). Each must still flip, so that a
/// change shows.
const KNOWN_VERDICT_FLIPS: [(&str, &str); 1] =
    [("barre-fairness", "Barre: Jain's index >= 0.95 from 1 ms after each change")];

/// Experiments whose every run routes adaptively (`adaptive_spray`, CONGA), where fast-forward
/// stays off: not run a second time (mcc-spray-partial's 24 runs take a minute at the test's
/// scale).
const FAST_FORWARD_OFF: [&str; 1] = ["mcc-spray-partial-small"];

/// Experiment `id`, whose packet-level output is in `out`, again with `--fast-forward` (into
/// `out/fast-forward`): the same verdict for every claim (but `KNOWN_VERDICT_FLIPS`), and every run
/// within `FAST_FORWARD_TARGETS` of its packet-level self. Every experiment's test checks it,
/// at the scale the test runs it (issue 33: each experiment in both modes). A run whose fabric
/// fast-forward does not run on (spraying, credit links) must come out the same.
fn assert_fast_forward_agrees(id: &str, experiments: &Path, out: &Path) {
    if FAST_FORWARD_OFF.contains(&id) {
        // Fast-forward would run none of its runs (it refuses every routing but ECMP and says
        // so: `fast_forward::spraying_switches_are_not_fast_forwarded_and_the_summary_says_why`),
        // so its second run would only repeat the first. Checked so while it stays on the list:
        // no scenario of the experiment routes by ECMP.
        for entry in std::fs::read_dir(experiments.join(id)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(!text.contains("\"ecmp\""), "{path:?} routes by ECMP: take {id} off FAST_FORWARD_OFF");
            }
        }
        return;
    }
    let ff = out.join("fast-forward");
    let args = ["reproduce", id, "--fast-forward", "--experiments", experiments.to_str().unwrap(), "--out"];
    let o = aiccsim(&[&args[..], &[ff.to_str().unwrap()]].concat());
    // (Its exit code follows its verdicts, compared below: 0, or 3 when a claim fails.)
    assert!(matches!(o.status.code(), Some(0 | 3)), "{id} with fast-forward: {}", String::from_utf8_lossy(&o.stderr));
    let verdicts = |dir: &Path| -> Vec<(String, String)> {
        let Ok(mut checks) = csv::Reader::from_path(dir.join("checks.csv")) else { return Vec::new() };
        checks.records().map(Result::unwrap).map(|r| (r[0].to_string(), r[1].to_string())).collect()
    };
    let (mut full_verdicts, mut ff_verdicts) = (verdicts(out), verdicts(&ff));
    for (run, claim) in KNOWN_VERDICT_FLIPS.iter().filter(|(run, _)| *run == id) {
        let flipped = |v: &[(String, String)]| v.iter().find(|(c, _)| c == claim).map(|(_, holds)| holds.clone());
        assert_ne!(
            flipped(&full_verdicts),
            flipped(&ff_verdicts),
            "{run}: {claim:?} no longer flips: take it off the list"
        );
        full_verdicts.retain(|(c, _)| c != claim);
        ff_verdicts.retain(|(c, _)| c != claim);
    }
    assert_eq!(full_verdicts, ff_verdicts, "{id}: the claims' verdicts with fast-forward");
    let summary = |dir: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
    };
    let mut runs = 0;
    for entry in std::fs::read_dir(out).unwrap() {
        let run = entry.unwrap().path();
        if !run.join("summary.json").is_file() {
            continue;
        }
        runs += 1;
        let name = run.file_name().unwrap();
        let (full, fast) = (summary(&run), summary(&ff.join(name)));
        let known = KNOWN_P50_MISSES.iter().find(|(run, _)| *run == format!("{id}/{}", name.to_string_lossy()));
        for (path, target) in FAST_FORWARD_TARGETS {
            let bound = match known {
                Some(&(_, measured)) if path == ["fct_ns", "p50"] => measured,
                _ => target,
            };
            let at = |s: &serde_json::Value| path.iter().try_fold(s, |v, k| v.get(k)).and_then(|v| v.as_f64());
            let (Some(a), Some(b)) = (at(&full), at(&fast)) else {
                assert_eq!(at(&full).is_some(), at(&fast).is_some(), "{id}/{name:?}: {path:?} in one mode only");
                continue;
            };
            let error = match (a, b) {
                (0.0, 0.0) => 0.0,
                (0.0, _) => 100.0,
                _ => (b - a) / a * 100.0,
            };
            assert!(
                error.abs() <= bound,
                "{id}/{name:?}: {path:?} {a} packet by packet, {b} with fast-forward ({error:+.3}%)"
            );
        }
    }
    assert!(runs > 0, "{id}: no run compared");
}

/// The claims of `checks.csv` in an experiment's output `out` that failed, in order.
fn failed_claims(out: &Path) -> Vec<String> {
    let mut checks = csv::Reader::from_path(out.join("checks.csv")).unwrap();
    checks.records().map(Result::unwrap).filter(|r| &r[1] == "false").map(|r| r[0].to_string()).collect()
}

/// No run of an experiment's output `out` had a retransmission timeout on a lossless fabric
/// (PFC on and nothing dropped): there every timeout is spurious, resending what was on its
/// way, and it would hurt whichever scheme lets its queues grow.
fn assert_no_spurious_timeouts(out: &Path) {
    let mut runs = 0;
    for entry in std::fs::read_dir(out).unwrap() {
        let run = entry.unwrap().path();
        let (Ok(summary), Ok(scenario)) =
            (std::fs::read_to_string(run.join("summary.json")), std::fs::read_to_string(run.join("scenario.toml")))
        else {
            continue;
        };
        runs += 1;
        let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
        let pfc = ::aiccsim::Scenario::from_toml(&scenario, "scenario.toml").unwrap().switch.pfc.enabled;
        let (timeouts, dropped) = (summary["timeouts"].as_u64().unwrap(), summary["packets_dropped"].as_u64().unwrap());
        assert!(
            !(pfc && dropped == 0 && timeouts > 0),
            "{}: {timeouts} retransmission timeouts on a lossless fabric (PFC on, nothing dropped)",
            run.display()
        );
    }
    assert!(runs > 0, "{}: no run folder with a summary.json and a scenario.toml", out.display());
}

/// rocecc-incast holds 8 of its 9 claims. Since session 21 DCQCN (the HPCC study's parameters)
/// sends a CNP for every marked packet, as the study's ns-3 receiver, and its mean queue is
/// below TIMELY's: "TIMELY ... a queue below DCQCN's" fails, as its README reports.
#[test]
fn rocecc_incast_reports_its_claims_as_its_readme_says() {
    let out = tempfile::tempdir().unwrap();
    let stdout = reproduce_expecting("rocecc-incast", &experiments(), out.path(), 3);
    assert!(stdout.contains("1 of 9 checks failed"), "{stdout}");
    let failed = failed_claims(out.path());
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(
        failed[0]
            .starts_with("TIMELY with its published parameters shows the paper's behaviour: a queue below DCQCN's"),
        "{failed:?}"
    );
    let table = std::fs::read_to_string(out.path().join("table.csv")).unwrap();
    for scheme in ["PFC only", "DCQCN", "DCTCP", "TIMELY", "TIMELY T_high=100us", "HPCC", "HPCC-PINT", "Swift"] {
        assert!(table.lines().any(|l| l.starts_with(&format!("{scheme},"))), "no row for {scheme}");
    }
    // The terminal gets the columns the claims use, within 100 characters a line (it was 330
    // wide with 26 columns, five of them empty); table.csv keeps all 35.
    assert_eq!(table.lines().next().unwrap().split(',').count(), 35);
    let printed: Vec<&str> = stdout.lines().skip_while(|l| !l.trim_start().starts_with("scheme")).collect();
    let header: Vec<&str> = printed[0].split_whitespace().collect();
    assert_eq!(header, ["scheme", "pause_frames", "max_queue_kb", "mean_queue_kb", "completion_us", "drops"]);
    for line in printed.iter().take_while(|l| !l.starts_with('(')) {
        assert!(line.chars().count() <= 100, "{line:?}");
    }
}

#[test]
fn an_unknown_printed_column_is_an_input_error() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("x");
    std::fs::create_dir(&dir).unwrap();
    let src = experiments().join("incast");
    for f in ["pfc_only.toml", "dcqcn.toml"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    let spec = std::fs::read_to_string(src.join("experiment.toml")).unwrap().replace("\"cnps\"", "\"cnp\"");
    std::fs::write(dir.join("experiment.toml"), spec).unwrap();
    let out = root.path().join("out");
    let o =
        aiccsim(&["reproduce", "x", "--experiments", root.path().to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("columns: no table column 'cnp'"), "{err}");
}

#[test]
fn pc4_incast_meets_its_must_show() {
    let out = tempfile::tempdir().unwrap();
    let stdout = reproduce("pc4-incast", &experiments(), out.path());
    assert!(stdout.contains("all 84 checks pass"), "{stdout}");
}

/// pc4-longshort holds REPRODUCE.md's claims (PC4 recovers at once and faster than either
/// DCQCN), with the paper's PC4 and ours, and reports two of the paper's text as its README
/// says: with the vendor's parameters DCQCN has recovered before 4 ms, and PC4's 78% better
/// utilisation of the bottleneck holds against neither DCQCN, in either reading.
#[test]
fn pc4_longshort_reports_its_claims_as_its_readme_says() {
    let out = tempfile::tempdir().unwrap();
    let stdout = reproduce_expecting("pc4-longshort", &experiments(), out.path(), 3);
    assert!(stdout.contains("5 of 12 checks failed"), "{stdout}");
    let failed = failed_claims(out.path());
    assert_eq!(failed.len(), 5, "{failed:?}");
    assert!(failed[0].starts_with("DCQCN with the vendor's parameters has not recovered"), "{failed:?}");
    let utilisation = |c: &String| c.trim_start_matches("ours: ").starts_with("PC4 uses the bottleneck 78% better");
    assert!(failed[1..].iter().all(utilisation), "{failed:?}");
}

#[test]
fn pc4_fairness_meets_its_must_show() {
    let out = tempfile::tempdir().unwrap();
    let stdout = reproduce("pc4-fairness", &experiments(), out.path());
    assert!(stdout.contains("all 2 checks pass"), "{stdout}");
}

#[test]
fn barre_fairness_meets_its_must_show() {
    let out = tempfile::tempdir().unwrap();
    let stdout = reproduce("barre-fairness", &experiments(), out.path());
    assert!(stdout.contains("all 1 checks pass"), "{stdout}");
}

/// barre-incast's "very low queue" claim fails as its README reports (60.6 us of mean queuing
/// in steady state against a bound of 20 us); the dual lock's comparison holds (by 0.05%).
#[test]
fn barre_incast_reports_its_claims_as_its_readme_says() {
    let out = tempfile::tempdir().unwrap();
    let stdout = reproduce_expecting("barre-incast", &experiments(), out.path(), 3);
    assert!(stdout.contains("PASS Dual lock keeps the queue lower"), "{stdout}");
    assert!(stdout.contains("FAIL Barre keeps the queue very low"), "{stdout}");
    assert!(stdout.contains("1 of 2 checks failed"), "{stdout}");
}

/// The 8-GPU half of rocecc-single-switch (the 128-GPU half takes minutes; it is run by
/// `aiccsim reproduce rocecc-single-switch` and its figures are in the experiment's README).
#[test]
fn rocecc_single_switch_8_gpus_meets_its_must_show() {
    let src = experiments().join("rocecc-single-switch");
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("rocecc-single-switch-8");
    std::fs::create_dir(&dir).unwrap();
    for entry in std::fs::read_dir(&src).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "toml") {
            std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
        }
    }
    let mut spec: toml::Table = toml::from_str(&std::fs::read_to_string(src.join("experiment.toml")).unwrap()).unwrap();
    for (list, key) in [("run", "name"), ("check", "claim")] {
        let items = spec[list].as_array_mut().unwrap();
        items.retain(|item| !item[key].as_str().unwrap().starts_with("128 GPUs"));
    }
    let checks = spec["check"].as_array().unwrap().len();
    assert!(checks >= 9, "the 8-GPU groups keep their checks");
    std::fs::write(dir.join("experiment.toml"), toml::to_string(&spec).unwrap()).unwrap();
    let out = root.path().join("out");
    let stdout = reproduce_expecting("rocecc-single-switch-8", root.path(), &out, 3);
    // With the direct all-reduce the paper used, HPCC and HPCC-PINT are not within a few
    // percent (the README explains why and gives the figures); every other claim holds.
    assert!(stdout.contains(&format!("2 of {checks} checks failed")), "{stdout}");
    assert!(stdout.contains("FAIL 8 GPUs all-reduce: HPCC-PINT within 5% of them"), "{stdout}");
    assert!(stdout.contains("FAIL 8 GPUs all-reduce: HPCC within its 9.5% design cost plus 5%"), "{stdout}");
}

#[test]
fn a_failing_claim_fails_the_command() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("x");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(experiments().join("rocecc-incast/incast.toml"), dir.join("incast.toml")).unwrap();
    std::fs::write(
        dir.join("experiment.toml"),
        r#"
title = "a claim that does not hold"
base = "incast.toml"
[[run]]
name = "PFC only"
set = { workload = { size = "200KB" } }
[[run]]
name = "DCQCN"
set = { cc = { algorithm = "dcqcn" }, workload = { size = "200KB" } }
[plot]
kind = "queue"
switch = 0
port = 0
[[check]]
claim = "DCQCN sends the most PAUSE frames"
metric = "pause_frames"
runs = ["DCQCN"]
rule = "max"
"#,
    )
    .unwrap();
    let out = root.path().join("out");
    let o =
        aiccsim(&["reproduce", "x", "--experiments", root.path().to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stdout).contains("FAIL DCQCN sends the most PAUSE frames"));
    let checks = std::fs::read_to_string(out.join("checks.csv")).unwrap();
    assert!(checks.contains("false"));
}

#[test]
fn a_plot_of_a_flow_that_does_not_exist_is_an_input_error() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("x");
    std::fs::create_dir(&dir).unwrap();
    let src = experiments().join("pc4-longshort");
    std::fs::copy(src.join("longshort.toml"), dir.join("longshort.toml")).unwrap();
    let spec =
        std::fs::read_to_string(src.join("experiment.toml")).unwrap().replace("flows = [0, 1]", "flows = [0, 7]");
    std::fs::write(dir.join("experiment.toml"), spec).unwrap();
    let out = root.path().join("out");
    let o =
        aiccsim(&["reproduce", "x", "--experiments", root.path().to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("plot: flow 7 does not exist in run 'PC4' (its flows are 0 to 1)"), "{err}");
}

/// Fig. 8: on the paper's own workload (one 100 KB flow per connection) the 7 claims that need
/// the target to act fail in either reading; on long-lived connections, the labelled second
/// setup, ours holds all 13 and the paper's PC4 fails the 6 on saturation and delay, as the
/// README reports. Its run names hold commas, which `table.csv` quotes.
#[test]
fn pc4_target_qtime_reports_its_claims_as_its_readme_says() {
    let out = tempfile::tempdir().unwrap();
    let stdout = reproduce_expecting("pc4-target-qtime", &experiments(), out.path(), 3);
    assert!(stdout.contains("20 of 52 checks failed"), "{stdout}");
    let failed = failed_claims(out.path());
    let (ours, paper): (Vec<&String>, Vec<&String>) = failed.iter().partition(|c| c.starts_with("ours: "));
    assert!(ours.iter().all(|c| c.starts_with("ours: one 100 KB flow each: ")), "{ours:?}");
    assert_eq!(ours.len(), 7, "{ours:?}");
    assert_eq!(paper.iter().filter(|c| c.starts_with("one 100 KB flow each: ")).count(), 7, "{paper:?}");
    assert_eq!(paper.len(), 13, "{paper:?}");
    let mut table = csv::Reader::from_path(out.path().join("table.csv")).unwrap();
    let columns = table.headers().unwrap().len();
    let rows: Vec<csv::StringRecord> = table.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 26);
    assert!(rows.iter().all(|r| r.len() == columns));
    assert_eq!(&rows[12][0], "target 0 us, one 100 KB flow each");
}

/// Runs experiment `id` at a small scale in a scratch folder: each of its .toml files on 2
/// racks of 2 servers of 4 GPUs and 4 spines (a Clos of 8 racks), then `shrink`. A scenario must
/// come out changed, so that nothing runs at full scale by mistake. Returns the folder (kept while
/// the result lives), the output folder, and the table's header and rows.
fn reproduce_small(
    id: &str,
    shrink: impl Fn(&str) -> String,
) -> (tempfile::TempDir, PathBuf, csv::StringRecord, Vec<csv::StringRecord>) {
    let root = tempfile::tempdir().unwrap();
    let small_id = format!("{id}-small");
    let dir = root.path().join(&small_id);
    std::fs::create_dir(&dir).unwrap();
    for entry in std::fs::read_dir(experiments().join(id)).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let fewer = text.replace("racks = 8", "racks = 2").replace("gpus_per_server = 8", "gpus_per_server = 4");
        let small = shrink(&fewer.replace("spines = 8", "spines = 4"));
        assert!(p.file_name().unwrap() == "experiment.toml" || small != text, "{p:?} left at full scale");
        std::fs::write(dir.join(p.file_name().unwrap()), small).unwrap();
    }
    let out = root.path().join("out");
    let o = aiccsim(&[
        "reproduce",
        &small_id,
        "--experiments",
        root.path().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", String::from_utf8_lossy(&o.stderr));
    assert_no_spurious_timeouts(&out);
    assert_fast_forward_agrees(&small_id, root.path(), &out);
    let mut table = csv::Reader::from_path(out.join("table.csv")).unwrap();
    let header = table.headers().unwrap().clone();
    let rows = table.records().map(Result::unwrap).collect();
    (root, out, header, rows)
}

/// rocecc-clos at a sixteenth of its scale (its 18 runs take about 20 minutes; their figures
/// are in the experiment's README): the same experiment.toml, 1 MB collectives. Every run
/// finishes, and the 2D all-reduce takes at most half the 1D's time with PFC only, as at full
/// scale.
#[test]
fn rocecc_clos_runs_at_a_small_scale() {
    let (_root, _, header, rows) = reproduce_small("rocecc-clos", |text| {
        let small = text
            .replace("size = \"128MB\"", "size = \"1MB\"")
            .replace("size = \"1MB\"                 # per destination", "size = \"64KB\"  # per destination");
        assert!(!small.contains("128MB"), "a collective left at full size");
        small
    });
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(rows.len(), 18);
    assert!(rows.iter().all(|r| r[col("flows")] == r[col("finished")]), "every run finishes");
    let time =
        |name: &str| -> f64 { rows.iter().find(|r| &r[0] == name).unwrap()[col("completion_us")].parse().unwrap() };
    assert!(time("2D all-reduce / PFC only") < 0.5 * time("1D all-reduce / PFC only"));
}

/// rocecc-dlrm at a small scale (its 12 runs take about 7 minutes; their figures are in the
/// experiment's README): the same experiment.toml and layers, every collective a hundredth of
/// its size. Every run finishes its iteration, which takes at least its compute.
#[test]
fn rocecc_dlrm_runs_at_a_small_scale() {
    // `size = "<n>B"` -> a hundredth.
    let hundredth = |text: &str| -> String {
        let lines = text.lines().map(|line| {
            match line.split_once("size = \"").and_then(|(head, rest)| Some((head, rest.split_once("B\"")?))) {
                Some((head, (n, tail))) if n.chars().all(|c| c.is_ascii_digit()) => {
                    format!("{head}size = \"{}B\"{tail}", n.parse::<u64>().unwrap() / 100 + 16)
                }
                _ => line.to_string(),
            }
        });
        lines.collect::<Vec<_>>().join("\n")
    };
    let (_root, _out, header, rows) = reproduce_small("rocecc-dlrm", hundredth);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(rows.len(), 12);
    for r in &rows {
        let (iteration, exposed): (f64, f64) =
            (r[col("mean_iteration_us")].parse().unwrap(), r[col("mean_exposed_comm_us")].parse().unwrap());
        // model.py's compute: 3327.3 us per iteration on every rank.
        assert!((iteration - exposed - 3327.3).abs() < 0.2, "{}: {iteration} - {exposed}", &r[0]);
    }
}

/// training-cc at a small scale (its 12 runs take about 12 minutes of CPU; the figures are in
/// the experiment's README): 16 GPUs in servers of 4, tensor parallel 4, 2 microbatches of
/// 256-token sequences, the same models cut the same way. Every scheme finishes its iteration
/// without a drop or a timeout, and the iteration takes at least its compute: all schemes share
/// one compute time, as they share one model.
#[test]
fn training_cc_runs_at_a_small_scale() {
    let (_root, _out, header, rows) = reproduce_small("training-cc", |text| {
        let text = text
            .replace("tp = 8", "tp = 4")
            .replace("ep = 8", "ep = 2")
            .replace("microbatches = 4", "microbatches = 2");
        text.replace("seq_len = 2048", "seq_len = 256").replace("seq_len = 4096", "seq_len = 256")
    });
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(rows.len(), 12);
    let mut compute = Vec::new();
    for r in &rows {
        let (iteration, exposed): (f64, f64) =
            (r[col("mean_iteration_us")].parse().unwrap(), r[col("mean_exposed_comm_us")].parse().unwrap());
        assert!(iteration > 0.0 && exposed >= 0.0, "{}: {iteration} - {exposed}", &r[0]);
        assert_eq!((&r[col("drops")], &r[col("timeouts")]), ("0", "0"), "{}", &r[0]);
        compute.push(((iteration - exposed) * 10.0).round() as i64);
    }
    // The table's figures are rounded to 0.1 us.
    let alike = |c: &[i64]| c.iter().all(|&x| (x - c[0]).abs() <= 1);
    assert!(alike(&compute[..6]) && alike(&compute[6..]), "{compute:?}");
}

/// mcc-spray at a thirtieth of its size (its 72 runs take about 15 minutes; the figures are in
/// the experiment's README): 64 KB messages still, fewer of them. What holds at full size holds
/// here: spraying lifts every algorithm from the ECMP hash collisions to near line rate, MCC
/// among them, on every fabric; with CONGA on the credit-based fabric DCQCN falls below 60%
/// and PFC only beats it; and the claims the README reports failing fail (exit code 3).
#[test]
fn mcc_spray_runs_at_a_small_scale() {
    let (_root, out, header, rows) = reproduce_small("mcc-spray", |text| {
        text.replace(
            "size = \"500MB\", algorithm = \"ring\", chunks = 3906",
            "size = \"16MB\", algorithm = \"ring\", chunks = 125",
        )
        .replace(
            "size = \"1GB\", algorithm = \"ring\", chunks = 7813",
            "size = \"32MB\", algorithm = \"ring\", chunks = 250",
        )
        .replace(
            "size = \"2GB\", algorithm = \"ring\", chunks = 15625",
            "size = \"64MB\", algorithm = \"ring\", chunks = 500",
        )
    });
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(rows.len(), 72);
    let pct =
        |name: &str| -> f64 { rows.iter().find(|r| &r[0] == name).unwrap()[col("line_rate_pct")].parse().unwrap() };
    for size in ["0.5 GB", "1 GB", "2 GB"] {
        for alg in ["DCQCN", "TIMELY", "PFC only", "MCC"] {
            let (ecmp, spray) = (pct(&format!("{alg}, ECMP, {size}")), pct(&format!("{alg}, spray, {size}")));
            assert!(spray > ecmp + 20.0, "{alg}, {size}: spray {spray} vs ECMP {ecmp}");
        }
        assert!(pct(&format!("MCC, spray, {size}")) >= 90.0);
        for alg in ["DCQCN", "TIMELY", "PFC only", "MCC"] {
            assert!(pct(&format!("{alg}, spray, credit, {size}")) >= 90.0, "{alg}, {size}, credit");
        }
        let (dcqcn, pfc_only) =
            (pct(&format!("DCQCN, CONGA, credit, {size}")), pct(&format!("PFC only, CONGA, credit, {size}")));
        assert!(dcqcn < 60.0 && pfc_only > dcqcn, "{size}, CONGA, credit: DCQCN {dcqcn}, PFC only {pfc_only}");
    }
    let checks = std::fs::read_to_string(out.join("checks.csv")).unwrap();
    assert!(checks.contains("\"MCC with spray is near line rate (> 90%)\",true"), "{checks}");
    assert!(checks.contains("\"DCQCN with spray stays below 60% of line rate (the slides: < 60%)\",false"), "{checks}");
    assert!(
        checks.contains("\"0.5 GB: MCC with spray has at least 16% lower CCT than DCQCN and TIMELY with spray\",false"),
        "{checks}"
    );
    assert!(checks.contains("\"CONGA, credit: DCQCN stays below 60% of line rate\",true"), "{checks}");
    assert!(checks.contains("\"CONGA, credit: MCC is near line rate (> 90%)\",false"), "{checks}");
}

/// mcc-spray-partial at a quarter of its size (its 24 runs take about 3 minutes; the figures are
/// in the experiment's README): 125 MB all-reduces in 32 KB chunks, where the README's are 500 MB
/// in 128 KB. What the README reports at full size holds here: DCQCN's CNPs from the slow path
/// cut the three healthy ones to about half (the slides' overreaction), PFC only and TIMELY keep
/// them full; MCC does too on the shallow-backpressure fabric, and not on the deep one (its
/// claims there fail). On the credit-based fabric the backpressure is the credit loop's: no
/// PAUSE, credit stalls instead, the healthy paths full without congestion control and DCQCN's
/// overreaction as on the others. (One verdict differs at this size: with CONGA on the deep
/// fabric DCQCN loses more than a third, 58% against 78% at full size.)
#[test]
fn mcc_spray_partial_runs_at_a_small_scale() {
    let (_root, out, header, rows) = reproduce_small("mcc-spray-partial", |text| {
        text.replace(
            "size = \"500MB\", algorithm = \"ring\", chunks = 3906",
            "size = \"125MB\", algorithm = \"ring\", chunks = 977",
        )
    });
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(rows.len(), 24);
    let util: Vec<(String, f64)> =
        rows.iter().map(|r| (r[0].to_string(), r[col("mean_link_util_pct")].parse().unwrap())).collect();
    let of = |name: &str| util.iter().find(|(n, _)| n == name).unwrap().1;
    assert!(of("PFC only") > 90.0 && of("TIMELY") > 90.0, "{util:?}");
    assert!(of("DCQCN") < 0.7 * of("PFC only"), "{util:?}");
    assert!(of("MCC, shallow PFC") > 90.0 && of("DCQCN, shallow PFC") < 66.7, "{util:?}");
    assert!(of("PFC only, credit") > 90.0 && of("DCQCN, credit") < 66.7, "{util:?}");
    let checks = std::fs::read_to_string(out.join("checks.csv")).unwrap();
    for (claim, holds) in [
        ("MCC keeps the three healthy paths above 90% utilisation (ideal adaptive routing)\"", false),
        ("DCQCN loses at least a third of the healthy paths' utilisation (ideal adaptive routing)\"", true),
        ("MCC keeps the three healthy paths above 90% utilisation (ideal adaptive routing) on shallow PFC\"", true),
        (
            "DCQCN loses at least a third of the healthy paths' utilisation (ideal adaptive routing) on credit links\"",
            true,
        ),
    ] {
        assert!(checks.contains(&format!("\"{claim},{holds}")), "{claim}: {checks}");
    }
    // The credit runs' backpressure is the credit loop's: no PAUSE, no drop, and without
    // congestion control ports wait for credits.
    for run in ["pfc_only__credit", "mcc__credit", "dcqcn__conga__credit"] {
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(run).join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["pause_frames"], 0, "{run}");
        assert_eq!(summary["packets_dropped"], 0, "{run}");
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("pfc_only__credit/summary.json")).unwrap()).unwrap();
    assert!(summary["credit"]["stalls"].as_u64().unwrap() > 0, "{summary}");
}

/// barre-dcqcn-tuning at a small scale (its 6 runs take about 20 minutes; the figures are in the
/// experiment's README): 16 MB all-reduces on 16 GPUs (2 racks of 2 servers of 4, 4 spines)
/// and, for the talk's 1024-GPU scenario (fluid NVLink), on 32 (4 racks). Every run finishes,
/// and the lossless reference never pauses.
#[test]
fn barre_dcqcn_tuning_runs_at_a_small_scale() {
    let (_root, out, header, rows) = reproduce_small("barre-dcqcn-tuning", |text| {
        text.replace("size = \"256MB\"", "size = \"16MB\"").replace("racks = 64", "racks = 4")
    });
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(rows.len(), 6);
    assert!(rows.iter().all(|r| r[col("flows")] == r[col("finished")]), "every run finishes");
    let checks = std::fs::read_to_string(out.join("checks.csv")).unwrap();
    assert!(checks.contains("\"The lossless reference never pauses\",true"), "{checks}");
}

/// `busbw_bound_gbps`: an all-to-all on a star is bound by each host's NIC sending 7 parts of
/// its buffer (payload over wire bytes of its 100 Gbit/s: 95.42), and the run stays under it.
#[test]
fn the_bus_bandwidth_bound_is_the_busiest_host_links() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("bound");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join("a2a.toml"),
        "[topology]\nkind = \"star\"\nhosts = 8\nlink = { bandwidth = \"100Gbps\", delay = \"1us\" }\n[cc]\nalgorithm = \"none\"\n[workload]\nkind = \"all_to_all\"\nsize = \"1MB\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("experiment.toml"),
        "title = \"bound\"\nbase = \"a2a.toml\"\n[[run]]\nname = \"a2a\"\n[plot]\nkind = \"bars\"\nmetric = \"busbw_bound_gbps\"\n",
    )
    .unwrap();
    let out = root.path().join("out");
    let o = aiccsim(&[
        "reproduce",
        "bound",
        "--experiments",
        root.path().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let mut table = csv::Reader::from_path(out.join("table.csv")).unwrap();
    let header = table.headers().unwrap().clone();
    let row = table.records().next().unwrap().unwrap();
    let col = |name: &str| -> f64 { row[header.iter().position(|h| h == name).unwrap()].parse().unwrap() };
    assert_eq!(col("busbw_bound_gbps"), 95.42);
    assert!(col("busbw_gbps") <= col("busbw_bound_gbps") && col("busbw_gbps") > 80.0, "{}", col("busbw_gbps"));
}

/// barre-alltoall at a small scale (its 12 runs of six 256-GPU all-to-alls take minutes; the
/// figures are in the experiment's README): 2 racks of 2 servers of 4 GPUs, 4 peers in flight.
/// Every run finishes its six iterations, the warm bus bandwidth is measured for each, the
/// IB-like reference, on credit-based links, neither pauses nor drops, and the RoCE runs with
/// adaptive routing keep every packet too (PFC).
#[test]
fn barre_alltoall_runs_at_a_small_scale() {
    let (_root, out, header, rows) = reproduce_small("barre-alltoall", |text| {
        text.replace("racks = 16", "racks = 2").replace("peers_in_flight = 16", "peers_in_flight = 4")
    });
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(rows.len(), 12);
    for r in &rows {
        assert_eq!(r[col("flows")], r[col("finished")], "{}: every flow finishes", &r[0]);
        assert_eq!(&r[col("drops")], "0", "{}", &r[0]);
        // Six all-to-alls of 16 ranks, one flow per ordered pair each.
        assert_eq!(&r[col("flows")], "1440", "{}", &r[0]);
        let warm: f64 = r[col("warm_busbw_gbps")].parse().unwrap();
        assert!(warm > 0.0 && warm < 400.0, "{}: {warm}", &r[0]);
    }
    for r in rows.iter().filter(|r| r[0].starts_with("IB-like")) {
        assert_eq!((&r[col("pause_frames")], &r[col("drops")]), ("0", "0"), "{}", &r[0]);
    }
    let summary = std::fs::read_to_string(out.join("ib_like_reference__256_kb").join("summary.json")).unwrap();
    assert!(summary.contains("\"credit\""), "the reference runs on credits");
}

/// uec-vs-roce at a small scale (its 32 runs on a k = 8 fat tree take minutes; the figures are in
/// the experiment's README): the same experiment.toml on a k = 4 fat tree (16 hosts), a tenth of
/// the sizes, the degraded link renamed to that fabric's. Every run finishes; the lossy UEC runs
/// send no PAUSE and drop nothing (they trim instead), the lossless ones drop nothing.
#[test]
fn uec_vs_roce_runs_at_a_small_scale() {
    let (_root, _out, header, rows) = reproduce_small("uec-vs-roce", |text| {
        text.replace("k = 8", "k = 4")
            .replace("size = \"128KB\"", "size = \"16KB\"")
            .replace("size = \"32MB\"", "size = \"2MB\"")
            .replace("[\"s32\", \"s64\"]", "[\"s8\", \"s16\"]")
    });
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(rows.len(), 40);
    for r in &rows {
        assert_eq!(r[col("flows")], r[col("finished")], "{}: every flow finishes", &r[0]);
        let count = |c: &str| -> u64 { r[col(c)].parse().unwrap() };
        if r[0].contains("lossy") {
            assert_eq!((count("pause_frames"), count("drops")), (0, 0), "{}: trims instead", &r[0]);
        } else {
            assert_eq!(count("drops"), 0, "{}: a lossless fabric", &r[0]);
            assert_eq!(count("trims"), 0, "{}: nothing trims with PFC", &r[0]);
        }
    }
}

/// incast as shipped (the demo's headline; two runs, about a second): every flow of both runs
/// finishes, DCQCN's receiver sends CNPs and PFC only's none, and DCQCN pauses less than PFC
/// only (its README's table); and with fast-forward the same.
#[test]
fn incast_runs_as_its_readme_says() {
    let out = tempfile::tempdir().unwrap();
    reproduce("incast", &experiments(), out.path());
    let summary = |run: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(out.path().join(run).join("summary.json")).unwrap()).unwrap()
    };
    let (pfc, dcqcn) = (summary("pfc_only"), summary("dcqcn"));
    for s in [&pfc, &dcqcn] {
        assert_eq!(s["flows"], s["flows_finished"], "{s}");
    }
    assert_eq!(pfc["cnps"], 0);
    assert!(dcqcn["cnps"].as_u64().unwrap() > 0);
    assert!(dcqcn["pause_frames"].as_u64().unwrap() < pfc["pause_frames"].as_u64().unwrap());
}

/// pc4-clock-noise as shipped (14 runs, a few seconds): the paper's PC4 holds 2 of its 3
/// claims and aiccsim's reading 1 of 3, as its README reports.
#[test]
fn pc4_clock_noise_reports_its_claims_as_its_readme_says() {
    let out = tempfile::tempdir().unwrap();
    let stdout = reproduce_expecting("pc4-clock-noise", &experiments(), out.path(), 3);
    assert!(stdout.contains("3 of 6 checks failed"), "{stdout}");
    let failed = failed_claims(out.path());
    assert!(failed[0].starts_with("Noise up to 400 ns changes completion by under 2%"), "{failed:?}");
    assert!(failed[1..].iter().all(|c| c.starts_with("ours: 1 us of noise")), "{failed:?}");
}

/// pc4-alltoall at a fiftieth of its size (its 6 runs take about 5 minutes; the figures are in
/// the experiment's README): 1 MB per flow. Every flow of every run finishes, without a drop.
#[test]
fn pc4_alltoall_runs_at_a_small_scale() {
    let (_root, _out, header, rows) =
        reproduce_small("pc4-alltoall", |text| text.replace("size = \"50MB\"", "size = \"1MB\""));
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(rows.len(), 6);
    assert!(rows.iter().all(|r| r[col("flows")] == r[col("finished")]), "every run finishes");
}

/// pc4-incast5000 at a twenty-fifth of its flows (its 13 runs take about 90 s; the figures are
/// in the experiment's README): 50 senders with 4 flows of 100 KB each instead of 100 of 1 MB.
/// Every flow of every run finishes, without a drop.
#[test]
fn pc4_incast5000_runs_at_a_small_scale() {
    let (_root, _out, header, rows) = reproduce_small("pc4-incast5000", |text| {
        text.replace("flows_per_sender = 100", "flows_per_sender = 4").replace("size = \"1MB\"", "size = \"100KB\"")
    });
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(rows.len(), 13);
    assert!(rows.iter().all(|r| r[col("flows")] == r[col("finished")]), "every run finishes");
}
