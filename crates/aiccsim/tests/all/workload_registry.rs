//! Every workload kind of the registry (`WorkloadConfig::examples`) has an example that runs, is
//! documented with that example, and is known to the fuzzer: docs/scenario.md shows the example
//! in the kind's section, with a row for each key it writes, and lists the kind in its contents;
//! the fuzz dictionary, which takes docs/scenario.md's keys and quoted words, holds its name,
//! its keys and its words. A new kind that skips one fails here, naming it.

use crate::common::read;
use aiccsim::config::WorkloadConfig;
use aiccsim::Scenario;

/// The fabric docs/scenario.md's fragments run on (`FRAGMENT_BASE` of tests/python/test_docs.py):
/// five hosts on one switch.
const BASE: &str = "[topology]\nkind = \"star\"\nhosts = 5\nlink = { bandwidth = \"100Gbps\", delay = \"1us\" }\n";

/// An example's paths (the `chakra` kind's trace in examples/) are taken from the repository's
/// root, as docs/scenario.md's fragments are (tests/python/test_docs.py links examples/ in).
fn parse(name: &str, example: &str) -> Scenario {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    Scenario::from_toml_in(&format!("{BASE}{example}"), name, Some(&root))
        .unwrap_or_else(|e| panic!("{name}'s example: {e}"))
}

/// The example's `[workload]` table as the scenario writes it out, every default filled in.
fn written(name: &str, example: &str) -> toml::Table {
    let s = parse(name, example);
    toml::Table::try_from(s.workload.as_ref().expect("an example has a [workload]")).unwrap()
}

/// The section of docs/scenario.md whose heading names `kind = "name"`.
fn section<'a>(docs: &'a str, name: &str) -> &'a str {
    let needle = format!("`kind = \"{name}\"`");
    let heading = (docs.match_indices("\n### "))
        .map(|(at, _)| at + 1)
        .find(|&at| docs[at..].lines().next().is_some_and(|l| l.contains(&needle)))
        .unwrap_or_else(|| panic!("docs/scenario.md has no ### section for {needle}"));
    let rest = &docs[heading..];
    let end = rest[4..].find("\n## ").into_iter().chain(rest[4..].find("\n### ")).min().map_or(rest.len(), |e| e + 4);
    &rest[..end]
}

#[test]
fn every_example_parses_validates_and_runs_to_the_end() {
    let examples = WorkloadConfig::examples();
    for (name, example) in &examples {
        let s = parse(name, example);
        let w = s.workload.as_ref().unwrap();
        assert_eq!(w.name(), *name, "{name}'s example is of another kind");
        let results = aiccsim::run(&s).unwrap_or_else(|e| panic!("{name}'s example: {e}"));
        assert_eq!(results.flows.len() as u64, w.as_kind().size(5).flows, "{name}: the counted flows");
        assert!(!results.flows.is_empty(), "{name}'s example makes no flows");
        assert!(results.flows.iter().all(|f| f.finish.is_some()), "{name}'s example leaves flows unfinished");
    }
    let mut names: Vec<&str> = examples.iter().map(|(n, _)| *n).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), examples.len(), "two kinds share a name");
}

#[test]
fn every_kind_has_its_section_with_its_example_in_the_scenario_reference() {
    let docs = read("docs/scenario.md");
    let contents = docs.lines().find(|l| l.starts_with("- [`[workload]`]")).expect("the contents list [workload]");
    let contents = &docs[docs.find(contents).unwrap()..];
    let contents = &contents[..contents[1..].find("\n- [").unwrap()];
    for (name, example) in WorkloadConfig::examples() {
        assert!(contents.contains(&format!("`{name}`")), "docs/scenario.md's contents do not list `{name}`");
        let section = section(&docs, name);
        let block = format!("```toml\n{example}```");
        assert!(
            section.contains(&block),
            "docs/scenario.md, kind = \"{name}\": the registry's example is not shown:\n{block}"
        );
        let table = written(name, example);
        for (key, value) in &table {
            if key == "kind" {
                continue;
            }
            assert!(section.contains(&format!("| `{key}`")), "docs/scenario.md, kind = \"{name}\": no row for `{key}`");
            // Lists of tables (flows, layers): their keys have rows too.
            for item in value.as_array().into_iter().flatten().filter_map(toml::Value::as_table) {
                for inner in item.keys() {
                    assert!(
                        section.contains(&format!("| `{inner}`")),
                        "docs/scenario.md, kind = \"{name}\": no row for `{key}`'s `{inner}`"
                    );
                }
            }
        }
    }
}

/// Every key of `value` and every word among its strings.
fn words(value: &toml::Value, out: &mut Vec<String>) {
    match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                out.push(k.clone());
                words(v, out);
            }
        }
        toml::Value::Array(a) => a.iter().for_each(|v| words(v, out)),
        // Words, not quantities or host sets.
        toml::Value::String(s) if s.chars().all(|c| c.is_ascii_lowercase() || c == '_') => out.push(s.clone()),
        _ => {}
    }
}

#[test]
fn the_fuzz_dictionary_knows_every_kind_its_keys_and_its_words() {
    let docs = read("docs/scenario.md");
    let dict = crate::common::fuzz_dictionary();
    let entries: Vec<&str> = dict.iter().map(String::as_str).collect();
    let mut missing = Vec::new();
    for (name, example) in WorkloadConfig::examples() {
        let mut found = Vec::new();
        words(&toml::Value::Table(written(name, example)), &mut found);
        assert!(found.iter().any(|w| w == name), "{name}'s example does not write its kind");
        // And the keys the example leaves out: every row of the kind's tables in the reference.
        let rows = section(&docs, name).lines().filter_map(|l| l.strip_prefix("| `")?.split('`').next());
        found.extend(rows.map(str::to_string));
        for word in found {
            let entry = format!("\"{word}\"");
            if !entries.contains(&entry.as_str()) && !missing.contains(&entry) {
                missing.push(entry);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "neither fuzz/scenario.dict nor docs/scenario.md (a row or a quoted word) has {}",
        missing.join(", ")
    );
}

#[test]
fn a_written_example_parses_back_to_the_same_settings() {
    for (name, example) in WorkloadConfig::examples() {
        let table = written(name, example);
        let mut whole: toml::Table = toml::from_str(BASE).unwrap();
        whole.insert("workload".into(), toml::Value::Table(table.clone()));
        let again = toml::to_string(&whole).unwrap();
        let back = Scenario::from_toml(&again, name).unwrap_or_else(|e| panic!("{name} written out: {e}"));
        assert_eq!(toml::Table::try_from(back.workload.as_ref().unwrap()).unwrap(), table, "{name}");
    }
}
