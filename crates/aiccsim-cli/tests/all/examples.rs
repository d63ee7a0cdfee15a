//! Every scenario in examples/ passes the whole check a front end makes before a run: what the
//! docs and the READMEs point users to must stay valid as the schema moves.

use std::path::PathBuf;

#[test]
fn every_example_is_a_valid_scenario() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files: Vec<PathBuf> = (std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "only {} examples", files.len());
    for path in files {
        let scenario = aiccsim::Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
        aiccsim_cli::admit::check(&scenario).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}
