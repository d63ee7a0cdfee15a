//! Scenarios made from a base scenario file with some keys replaced: an experiment run's
//! `set = { ... }` and a sweep's points.

use crate::CliError;
use aiccsim::Scenario;
use std::path::Path;

/// The base scenario as a TOML table, so that keys can be replaced before it is checked.
pub fn read_base(file: &Path) -> Result<toml::Table, CliError> {
    let text = std::fs::read_to_string(file).map_err(|e| CliError::io(&file.display().to_string(), e))?;
    toml::from_str(&text).map_err(|e| CliError::input(format!("{}: {}", file.display(), e.message())))
}

/// `base` with `set`'s keys replaced, checked as a scenario; `origin` names it in errors, and
/// relative paths in it are taken against `folder` (the base file's).
pub fn apply(base: &toml::Table, set: &toml::Table, origin: &str, folder: &Path) -> Result<Scenario, CliError> {
    let mut doc = base.clone();
    merge(&mut doc, set);
    let merged = toml::to_string(&doc).map_err(|e| CliError::input(format!("{origin}: {e}")))?;
    let scenario = Scenario::from_toml_in(&merged, origin, Some(folder)).map_err(|e| explain(e, base, set))?;
    crate::admit::check(&scenario)?;
    Ok(scenario)
}

/// A scenario error about the merged document, said in terms of what the user wrote: the
/// merged TOML is nobody's file, so its lines and columns mean nothing; an unknown key is named
/// with the table it is not a key of; a section that only `set` makes is said to be missing
/// from the base.
fn explain(mut e: aiccsim::ConfigError, base: &toml::Table, set: &toml::Table) -> CliError {
    if let Some(at) = e.message.find("TOML parse error at line ") {
        if let Some(colon) = e.message[at..].find(": ") {
            e.message.replace_range(at..at + colon + 2, "");
        }
    }
    let mut unknown_section = false;
    if let Some(rest) = e.message.strip_prefix("unknown field `") {
        if let Some((field, expected)) = rest.split_once('`') {
            let parent = e.key.strip_suffix(field).map_or(e.key.as_str(), |p| p.trim_end_matches('.'));
            unknown_section = parent.is_empty();
            let parent = if unknown_section { "a scenario's top level".to_string() } else { format!("`{parent}`") };
            let expected = expected.trim_start_matches(',').trim();
            e.message = format!("`{field}` is not a key of {parent} ({expected})");
        }
    }
    // Only a section's own shape can be wrong for want of it in the base: a required key
    // missing, or a table where a list of tables goes. Other errors are about the key set.
    let section = e.key.split(['.', '[']).next().unwrap_or_default().to_string();
    let list = e.message.contains("invalid type: map, expected a sequence");
    if list {
        e.message = format!(
            "`{section}` is a list of tables ([[{section}]]), and a dotted key cannot name a field of its elements; replace the whole list instead: a [[point]] with set = {{ {section} = [{{ ... }}, ...] }}"
        );
    }
    let shape = list || e.message.starts_with("missing field");
    if !unknown_section && shape && !base.contains_key(&section) && set.contains_key(&section) {
        let instead = match section.as_str() {
            "workload" if base.contains_key("jobs") => " (it has [[jobs]], each with its own workload)",
            "jobs" if base.contains_key("workload") => " (it has [workload])",
            _ => "",
        };
        let brackets = if list { format!("[[{section}]]") } else { format!("[{section}]") };
        e.message = if list {
            format!("the base has no {brackets}{instead}; {}", e.message)
        } else {
            format!("the base has no {brackets}{instead}, so this made one with only the keys set here: {}", e.message)
        };
    }
    CliError::from(e)
}

/// Whether `set` (keys under `prefix`) only reaches into `base` where a key can: not into the
/// elements of a list of tables (`[[jobs]]`, `[[events]]`), which have no names to give in a
/// dotted key.
pub fn reaches(base: &toml::Table, set: &toml::Table, prefix: &str) -> Result<(), String> {
    for (k, v) in set {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match (base.get(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => reaches(b, o, &key)?,
            (Some(toml::Value::Array(_)), toml::Value::Table(o)) => {
                let field = o.keys().next().map_or(String::new(), |f| format!(".{f}"));
                return Err(format!(
                    "{key}{field}: `{key}` is a list of tables in the base ([[{key}]]), and a dotted key cannot reach into one of its elements; replace the whole list instead: a [[point]] with set = {{ {k} = [{{ ... }}, ...] }}, or a grid axis \"{key}\" whose values are whole lists"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Replaces `over`'s keys in `base`, descending into tables present in both.
pub fn merge(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The nested table that sets one dotted key (`cc.algorithm`), or why the key is unusable.
pub fn dotted(key: &str, value: toml::Value) -> Result<toml::Table, String> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!("'{key}' is not a dotted scenario key (like \"cc.algorithm\")"));
    }
    let mut v = value;
    for p in parts.iter().skip(1).rev() {
        let mut t = toml::Table::new();
        t.insert(p.to_string(), v);
        v = toml::Value::Table(t);
    }
    let mut t = toml::Table::new();
    t.insert(parts[0].to_string(), v);
    Ok(t)
}
