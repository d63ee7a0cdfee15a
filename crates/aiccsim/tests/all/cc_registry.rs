//! Every algorithm of the registry (`CcConfig::all_defaults`) is documented and known to the
//! fuzzer: docs/scenario.md has its section with a row for each of its parameters, and the fuzz
//! dictionary holds its name and its keys. A new algorithm that skips one fails here, naming it.

use crate::common::read;
use aiccsim::cc::CcConfig;

/// The keys of an algorithm's `[cc]` section: its parameters with defaults, and those whose
/// default depends on the run.
fn keys(cfg: &CcConfig) -> Vec<String> {
    let table = toml::Table::try_from(cfg).expect("a config serialises");
    let mut keys: Vec<String> = table.keys().filter(|k| k.as_str() != "algorithm").cloned().collect();
    keys.extend(cfg.as_algorithm().optional_parameters().iter().map(|(k, _)| k.to_string()));
    keys
}

#[test]
fn every_algorithm_has_its_section_in_the_scenario_reference() {
    let docs = read("docs/scenario.md");
    for cfg in CcConfig::all_defaults() {
        let name = cfg.name();
        let heading = format!("### `algorithm = \"{name}\"`");
        let start = docs.find(&heading).unwrap_or_else(|| panic!("docs/scenario.md has no section {heading}"));
        let rest = &docs[start + heading.len()..];
        let section = &rest[..rest.find("\n#").unwrap_or(rest.len())];
        for key in keys(&cfg) {
            assert!(section.contains(&format!("| `{key}`")), "docs/scenario.md, {heading}: no row for `{key}`");
        }
        assert!(
            docs.contains(&format!("| `{name}`")),
            "docs/scenario.md: the [cc] overview table has no row for `{name}`"
        );
    }
}

#[test]
fn the_fuzz_dictionary_knows_every_algorithm_and_its_keys() {
    let dict = crate::common::fuzz_dictionary();
    let entries: Vec<&str> = dict.iter().map(String::as_str).collect();
    for cfg in CcConfig::all_defaults() {
        for word in std::iter::once(cfg.name().to_string()).chain(keys(&cfg)) {
            let entry = format!("\"{word}\"");
            assert!(
                entries.contains(&entry.as_str()),
                "neither fuzz/scenario.dict nor docs/scenario.md has {entry} ({})",
                cfg.name()
            );
        }
    }
}

#[test]
fn names_are_unique_and_each_parses_back_to_its_algorithm() {
    let all = CcConfig::all_defaults();
    let mut names: Vec<&str> = all.iter().map(CcConfig::name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all.len(), "two algorithms share a name");
    for cfg in &all {
        let text = format!(
            "[topology]\nkind = \"star\"\nhosts = 2\nlink = {{ bandwidth = \"100Gbps\", delay = \"1us\" }}\n[cc]\nalgorithm = \"{}\"\n[workload]\nkind = \"flows\"\nflows = [{{ src = 0, dst = 1, size = \"1KB\" }}]\n",
            cfg.name()
        );
        let s = aiccsim::Scenario::from_toml(&text, "registry").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.cc.name(), cfg.name());
        assert_eq!(toml::Table::try_from(&s.cc).unwrap(), toml::Table::try_from(cfg).unwrap());
    }
}

#[test]
fn a_preset_fills_in_the_keys_the_scenario_leaves_out() {
    let cc = |body: &str| {
        let text = format!("[topology]\nkind = \"star\"\nhosts = 2\nlink = {{ bandwidth = \"100Gbps\", delay = \"1us\" }}\n[cc]\n{body}\n[workload]\nkind = \"incast\"\nsenders = [1]\nreceiver = 0\nsize = \"1KB\"");
        aiccsim::Scenario::from_toml(&text, "p.toml").map(|s| s.cc)
    };
    let CcConfig::Dcqcn(d) = cc("algorithm = \"dcqcn\"\npreset = \"nvidia\"\nadditive_increase = \"10Mbps\"").unwrap()
    else {
        panic!("not dcqcn")
    };
    let nvidia = aiccsim::cc::DcqcnConfig::preset("nvidia").unwrap();
    assert_eq!(d.additive_increase.0, 10_000_000, "the scenario's own key wins");
    assert_eq!((d.g, d.byte_counter, d.min_rate), (nvidia.g, nvidia.byte_counter, nvidia.min_rate));
    // The resolved values are what run.json and `aiccsim validate` show: no `preset` key.
    let written = toml::to_string(&CcConfig::Dcqcn(d)).unwrap();
    assert!(!written.contains("preset") && written.contains("min_dec_factor = 0.5"), "{written}");

    let err = cc("algorithm = \"dcqcn\"\npreset = \"fastest\"").unwrap_err();
    assert_eq!(err.key, "cc.preset");
    assert!(err.message.contains("dcqcn's presets are hpcc_study, nvidia, barre_tuned"), "{err}");
    let err = cc("algorithm = \"hpcc\"\npreset = \"nvidia\"").unwrap_err();
    assert_eq!((err.key.as_str(), err.message.as_str()), ("cc.preset", "unknown preset `nvidia`: hpcc has no presets"));
}

/// Every key and word of `[switch]` and `[[events]]`, with routing per tier, flowlets and each
/// link action written out (`aiccsim validate`'s form: every default filled in).
#[test]
fn the_fuzz_dictionary_knows_the_switch_and_event_keys() {
    let text = r#"
[topology]
kind = "fat_tree"
k = 4
link = { bandwidth = "100Gbps", delay = "1us" }
[switch]
egress_alpha = 0.5
pfc = { xoff = "100KB", headroom = "30KB" }
routing = { default = "round_robin", leaf = "flowlet", spine = "spray", core = "adaptive" }
[workload]
kind = "permutation"
size = "1MB"
[[events]]
at = "1us"
link = ["s0", "s8"]
action = "slow"
bandwidth = "10Gbps"
[[events]]
at = "2us"
link = ["s0", "s8"]
index = 0
action = "fail"
detection = "1us"
[[events]]
at = "3us"
link = ["s0", "s8"]
action = "restore"
"#;
    let s = aiccsim::Scenario::from_toml(text, "dict").unwrap_or_else(|e| panic!("{e}"));
    let written: toml::Table = toml::from_str(&s.to_toml()).unwrap();
    let mut words = vec!["[[events]]".to_string(), "ecmp".to_string()];
    fn walk(v: &toml::Value, words: &mut Vec<String>) {
        match v {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    words.push(k.clone());
                    walk(v, words);
                }
            }
            toml::Value::Array(a) => a.iter().for_each(|v| walk(v, words)),
            // Words, not quantities or node names.
            toml::Value::String(s) if s.chars().all(|c| c.is_ascii_lowercase() || c == '_') => words.push(s.clone()),
            _ => {}
        }
    }
    for section in ["switch", "events"] {
        words.push(section.to_string());
        walk(&written[section], &mut words);
    }
    for w in ["flowlet", "failure_detection", "gap", "pick", "slots", "leaf", "spine", "core", "default", "slow"] {
        assert!(words.iter().any(|x| x == w), "the scenario does not write {w}: {written:?}");
    }
    let dict = crate::common::fuzz_dictionary();
    let entries: Vec<&str> = dict.iter().map(String::as_str).collect();
    for word in words {
        let entry = format!("\"{word}\"");
        assert!(entries.contains(&entry.as_str()), "neither fuzz/scenario.dict nor docs/scenario.md has {entry}");
    }
}
