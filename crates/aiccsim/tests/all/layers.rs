//! The core crate's modules import one way: each layer may use the layers below it and never one
//! above (the list in `src/lib.rs`). This test reads the `use` lines and `crate::` paths of every
//! source file (test modules left out), resolves each to the file it names, and fails on an
//! import that points up, naming the file, the path and the two layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules, lowest first. A module may import modules of lower layers only; two
/// modules of one layer never import each other.
const LAYERS: &[&[&str]] = &[
    &["time", "rng", "tags", "tagged_enum", "watch", "parse_folder"],
    &["wire"],
    &["cc"],
    &["workload"],
    &["config"],
    &["topology"],
    &["metrics"],
    &["engine"],
    &["results", "estimate"],
];

fn layer_of(module: &str) -> Option<usize> {
    let top = module.split("::").next().unwrap_or("");
    LAYERS.iter().position(|l| l.contains(&top))
}

/// Every source file of the crate as its module path ("engine::net::port"), with its text.
fn sources() -> BTreeMap<String, String> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.insert(module_path(&src, &path), std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    out
}

fn module_path(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod") | Some("lib")) {
        parts.pop();
    }
    parts.join("::")
}

/// The text without comments and without `#[cfg(test)]` items (test modules inside a file) and
/// the names of test-only child modules declared as `#[cfg(test)] mod name;`.
fn production_code(text: &str) -> (String, Vec<String>) {
    let mut code = String::new();
    let mut test_children = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if t == "#[cfg(test)]" {
            let Some(next) = lines.next() else { break };
            let n = next.trim();
            if n.ends_with(';') {
                if let Some(name) = n.trim_end_matches(';').split_whitespace().last() {
                    test_children.push(name.to_string());
                }
                continue;
            }
            // Skip the item: count braces until they balance.
            let mut depth = n.matches('{').count() as i64 - n.matches('}').count() as i64;
            while depth > 0 {
                let Some(l) = lines.next() else { break };
                depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
            }
            continue;
        }
        let without_comment = match t.find("//") {
            Some(0) => "",
            _ => line,
        };
        code.push_str(without_comment);
        code.push('\n');
    }
    (code, test_children)
}

/// `a::{b, c::{d, e}}` -> ["a::b", "a::c::d", "a::c::e"].
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else { return vec![tree] };
    let prefix = &tree[..open];
    // (A message text holding "; use {x}" reads as a statement: its braces need not pair.)
    let inner = &tree[open + 1..tree.rfind('}').filter(|&end| end > open).unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts.into_iter().filter(|p| !p.is_empty()).flat_map(|p| expand(&format!("{prefix}{p}"))).collect()
}

/// Absolute paths (without `crate::`) this module's code names.
fn imports(module: &str, code: &str) -> Vec<String> {
    let parent = |m: &str| m.rsplit_once("::").map(|(p, _)| p.to_string()).unwrap_or_default();
    let mut paths = Vec::new();
    // `use` statements, braces expanded.
    for stmt in code.split(';') {
        let s = stmt.trim();
        let Some(at) = s.find("use ") else { continue };
        let head = &s[..at];
        if !(head.is_empty() || head.ends_with("pub ") || head.ends_with(") ") || head.ends_with('\n')) {
            continue;
        }
        for p in expand(&s[at + 4..]) {
            let p = p.split(" as ").next().unwrap_or("").to_string();
            if let Some(rest) = p.strip_prefix("crate::") {
                paths.push(rest.to_string());
            } else if let Some(rest) = p.strip_prefix("super::") {
                let base = if module.is_empty() { String::new() } else { parent(module) };
                paths.push(if base.is_empty() { rest.to_string() } else { format!("{base}::{rest}") });
            }
        }
    }
    // Paths written inline: `crate::a::b` and `$crate::a::b`.
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let tail = &rest[at + 7..];
        let end = tail.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(tail.len());
        paths.push(tail[..end].trim_end_matches(':').to_string());
        rest = &tail[end..];
    }
    paths
}

/// The longest module prefix of `path` that is a file of the crate.
fn resolve(path: &str, modules: &BTreeSet<String>) -> Option<String> {
    let segs: Vec<&str> = path.split("::").collect();
    (1..=segs.len()).rev().map(|n| segs[..n].join("::")).find(|m| modules.contains(m))
}

#[test]
fn layers_import_downwards_only() {
    let files = sources();
    let mut test_only = BTreeSet::new();
    let mut code = BTreeMap::new();
    for (module, text) in &files {
        let (c, children) = production_code(text);
        for child in children {
            test_only.insert(if module.is_empty() { child } else { format!("{module}::{child}") });
        }
        code.insert(module.clone(), c);
    }
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let mut violations = Vec::new();
    let mut unknown = Vec::new();
    let mut arrows = 0;
    for (module, c) in &code {
        if module.is_empty() || test_only.contains(module) {
            continue; // lib.rs re-exports from every layer
        }
        let Some(own) = layer_of(module) else {
            unknown.push(module.clone());
            continue;
        };
        let mut targets = BTreeSet::new();
        for path in imports(module, c) {
            if let Some(target) = resolve(&path, &modules) {
                if target != *module && !target.is_empty() {
                    targets.insert((target, path));
                }
            }
        }
        for (target, path) in targets {
            let same_top = target.split("::").next() == module.split("::").next();
            if same_top {
                continue;
            }
            arrows += 1;
            let theirs = layer_of(&target);
            if theirs.is_none_or(|t| t >= own) {
                violations.push(format!(
                    "{module} (layer {own}) uses crate::{path} (module {target}, layer {})",
                    theirs.map_or("?".to_string(), |t| t.to_string())
                ));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "modules missing from LAYERS (add them to this test and to lib.rs's list): {unknown:?}"
    );
    assert!(arrows > 20, "only {arrows} imports between modules were found: the scan is broken");
    assert!(violations.is_empty(), "{} imports point up a layer:\n{}", violations.len(), violations.join("\n"));
}

#[test]
fn braces_expand() {
    assert_eq!(expand("a::{b, c::{d, e}}"), ["a::b", "a::c::d", "a::c::e"]);
    assert_eq!(expand("crate::x"), ["crate::x"]);
}
