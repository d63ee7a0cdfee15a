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
    let scenario = Scenario::from_toml_in(&merged, origin, Some(folder))?;
    crate::admit::check(&scenario)?;
    Ok(scenario)
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
