//! Every malformed scenario in tests/bad_inputs/ is rejected with one line naming the file and
//! the offending key, and nothing panics. Each file states what it expects in its first lines:
//! `# expect-key: switch.ecn.kmin` and `# expect-message: must not exceed kmax`.
//!
//! The scenarios go through the whole check a front end makes before a run: the scenario alone
//! (`Scenario::load`), against its fabric, and against this machine's memory (`admit::check`).

use aiccsim::{ConfigError, Scenario};
use std::path::PathBuf;

fn corpus() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/bad_inputs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

fn expectation(text: &str, tag: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("# {tag}:")))
        .unwrap_or_else(|| panic!("missing '# {tag}:' line"))
        .trim()
        .to_string()
}

fn check(path: &std::path::Path) -> Result<(), ConfigError> {
    let scenario = Scenario::load(path)?;
    aiccsim_cli::admit::check(&scenario).map(drop)
}

#[test]
fn every_bad_input_is_rejected_with_its_key() {
    let files = corpus();
    assert!(files.len() >= 30, "the corpus has only {} files", files.len());
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let key = expectation(&text, "expect-key");
        let message = expectation(&text, "expect-message");
        let result = std::panic::catch_unwind(|| check(&path));
        let err = match result {
            Ok(Ok(_)) => panic!("{} was accepted", path.display()),
            Ok(Err(e)) => e,
            Err(_) => panic!("{} made the parser panic", path.display()),
        };
        let line = err.to_string();
        assert!(!line.contains('\n'), "{}: error spans several lines: {line}", path.display());
        assert!(
            line.starts_with(&path.display().to_string()),
            "{}: error does not name the file: {line}",
            path.display()
        );
        assert_eq!(err.key, key, "{}: wrong key in: {line}", path.display());
        assert!(line.contains(&message), "{}: expected '{message}' in: {line}", path.display());
    }
}
