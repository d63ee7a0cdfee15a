//! The fuzz dictionary (`fuzz/scenario.dict` and docs/scenario.md's keys and words, as
//! `make fuzz-smoke` composes it) holds every key a scenario's sections have, as the
//! defaults of a small scenario write them out, and the values of their choices: a key the
//! fuzzer cannot spell is a part of the schema it never reaches. (Each algorithm's keys are
//! checked in `registry.rs`.)

/// Every key of `table` and of the tables inside it, dotted.
fn keys(prefix: &str, table: &toml::Table, out: &mut Vec<(String, String)>) {
    for (k, v) in table {
        out.push((format!("{prefix}{k}"), k.clone()));
        if let toml::Value::Table(t) = v {
            keys(&format!("{prefix}{k}."), t, out);
        }
    }
}

#[test]
fn the_fuzz_dictionary_knows_every_key_of_the_default_sections() {
    let scenario = aiccsim::Scenario::from_toml(
        "[topology]\nkind = \"star\"\nhosts = 2\nlink = { bandwidth = \"100Gbps\", delay = \"1us\" }\n[workload]\nkind = \"flows\"\nflows = [{ src = 0, dst = 1, size = \"1KB\" }]\n",
        "dictionary",
    )
    .unwrap();
    let table = toml::Table::try_from(&scenario).expect("a scenario serialises");
    let mut found = Vec::new();
    for section in ["simulation", "switch", "nic", "clocks", "output"] {
        if let Some(toml::Value::Table(t)) = table.get(section) {
            keys(&format!("{section}."), t, &mut found);
        }
    }
    let dict = crate::common::fuzz_dictionary();
    let missing: Vec<&String> =
        found.iter().filter(|(_, k)| !dict.contains(&format!("\"{k}\""))).map(|(dotted, _)| dotted).collect();
    assert!(missing.is_empty(), "the fuzz dictionary has no line for {missing:?}");
    for value in ["go_back_n", "selective", "persistent", "per_transfer", "uniform", "gaussian"] {
        assert!(dict.contains(&format!("\"{value}\"")), "the fuzz dictionary has no line \"{value}\"");
    }
}

/// The dictionary the tests compose is the one `make fuzz-smoke` gives the fuzzer (the
/// Makefile's rule for `fuzz/target/scenario.dict`), line for line as a set.
#[test]
fn the_tests_compose_the_dictionary_as_the_makefile_does() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let made = std::process::Command::new("make")
        .args(["--no-print-directory", "-s", "fuzz/target/scenario.dict"])
        .current_dir(&root)
        .status()
        .expect("make runs");
    assert!(made.success(), "make fuzz/target/scenario.dict failed");
    let written = crate::common::read("fuzz/target/scenario.dict");
    let mut by_make: Vec<&str> = written.lines().collect();
    by_make.sort_unstable();
    by_make.dedup();
    let ours = crate::common::fuzz_dictionary();
    let mut by_tests: Vec<&str> = ours.iter().map(String::as_str).collect();
    by_tests.sort_unstable();
    by_tests.dedup();
    assert_eq!(by_make, by_tests);
}
