//! The hook for algorithms from outside the core (`cc/external.rs`): a registered factory is
//! named in a scenario, gets its `[cc]` keys and the scenario's folder, builds the sender
//! halves, writes its keys back, and can end the run with its own error.

use aiccsim::cc::external::{self, AlgorithmFailure, Built, ExternalFactory};
use aiccsim::cc::{Algorithm, Cc, CcConfig, FlowContext, FlowFacts, NicEvent, NicProgram, Programmed};
use aiccsim::time::SimTime;
use aiccsim::{Scenario, Simulation};
use std::path::Path;
use std::sync::Arc;

/// Sends at a quarter of the line rate from ACK `after` on; fails on ACK `fail_at` if set.
#[derive(Clone, Debug)]
struct Cutter {
    after: i64,
    fail_at: Option<i64>,
}

impl Algorithm for Cutter {
    fn name(&self) -> &'static str {
        "test_cutter"
    }
    fn describe(&self) -> &'static str {
        "a test algorithm"
    }
    fn sender(&self, facts: &FlowFacts) -> Cc {
        let program = CutterFlow { cfg: self.clone(), acks: 0, flow: facts.flow };
        Cc::Custom(Box::new(Programmed::new(program, facts)))
    }
}

struct CutterFlow {
    cfg: Cutter,
    acks: i64,
    flow: u32,
}

impl NicProgram for CutterFlow {
    fn on_event(&mut self, event: &NicEvent<'_>, flow: &mut FlowContext<'_>) {
        if let NicEvent::Ack(_) = event {
            self.acks += 1;
            if self.cfg.fail_at == Some(self.acks) {
                external::fail(AlgorithmFailure {
                    flow: self.flow,
                    at: flow.now(),
                    message: "ACK limit".into(),
                    detail: None,
                });
            }
            if self.acks > self.cfg.after {
                flow.set_rate(flow.facts().line_rate.as_f64() / 4.0);
            }
        }
    }
}

struct Factory;

impl ExternalFactory for Factory {
    fn build(&self, mut params: toml::Table, folder: &Path) -> Result<Built, (String, String)> {
        let int = |params: &mut toml::Table, key: &str| match params.get(key) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) => Ok(Some(*i)),
            Some(_) => Err((key.to_string(), "must be an integer".to_string())),
        };
        let after = int(&mut params, "after")?.ok_or_else(|| ("after".to_string(), "is required".to_string()))?;
        let fail_at = int(&mut params, "fail_at")?;
        // Written back once resolved, so that the scenario means the same read from elsewhere.
        params.entry("folder").or_insert_with(|| toml::Value::String(folder.display().to_string()));
        Ok((params, Arc::new(Cutter { after, fail_at })))
    }
}

fn register() {
    external::register("test_cutter", Arc::new(Factory));
}

fn scenario(cc: &str) -> String {
    format!(
        r#"
[topology]
kind = "star"
hosts = 3
link = {{ bandwidth = "100Gbps", delay = "1us" }}
[cc]
{cc}
[workload]
kind = "incast"
senders = "1..=2"
receiver = 0
size = "100KB"
"#
    )
}

#[test]
fn a_registered_factory_builds_the_algorithm_from_its_keys_and_the_files_folder() {
    register();
    assert!(external::is_registered("test_cutter"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, scenario("algorithm = \"test_cutter\"\nafter = 5")).unwrap();
    let s = Scenario::load(&path).unwrap();
    let CcConfig::External(e) = &s.cc else { panic!("not external: {:?}", s.cc) };
    assert_eq!(e.name(), "test_cutter");
    assert_eq!(e.params()["after"].as_integer(), Some(5));
    assert_eq!(e.params()["folder"].as_str(), Some(dir.path().to_str().unwrap()));
    // Written back with its name and keys, it reads again to the same algorithm.
    let written = s.to_toml();
    assert!(written.contains("algorithm = \"test_cutter\""), "{written}");
    let again = Scenario::from_toml(&written, "again").unwrap();
    assert_eq!(format!("{:?}", again.cc), format!("{:?}", s.cc));
    let slowed = Simulation::new(&s).unwrap().run(&mut |_| {});
    let lenient = Scenario::from_toml(&scenario("algorithm = \"test_cutter\"\nafter = 1000000"), "x").unwrap();
    let fast = Simulation::new(&lenient).unwrap().run(&mut |_| {});
    assert_eq!(slowed.summary.flows_finished, 2);
    assert!(
        slowed.summary.fct_ns.max > fast.summary.fct_ns.max,
        "the algorithm's cuts show in the FCT: {:?} {:?}",
        slowed.summary.fct_ns.max,
        fast.summary.fct_ns.max
    );
}

#[test]
fn a_factorys_error_names_the_key_under_cc() {
    register();
    let e = Scenario::from_toml(&scenario("algorithm = \"test_cutter\"\nafter = \"x\""), "f.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.message.as_str()), ("cc.after", "must be an integer"));
    let e = Scenario::from_toml(&scenario("algorithm = \"no_such\""), "f.toml").unwrap_err();
    assert_eq!(e.key, "cc.algorithm");
    assert!(e.message.contains("test_cutter") && e.message.contains("dcqcn"), "{}", e.message);
}

#[test]
fn an_algorithms_failure_ends_the_run_with_its_flow_and_time() {
    register();
    let s = Scenario::from_toml(&scenario("algorithm = \"test_cutter\"\nafter = 5\nfail_at = 7"), "x").unwrap();
    let Err(failure) = external::catch(|| Simulation::new(&s).unwrap().run(&mut |_| {})) else {
        panic!("the run ended without the failure")
    };
    assert!(failure.flow < 2 && failure.at > SimTime::ZERO);
    assert!(failure.to_string().starts_with(&format!("flow {} at ", failure.flow)), "{failure}");
    // Any other panic is not caught.
    let other = std::panic::catch_unwind(|| external::catch(|| panic!("a bug")));
    assert!(other.is_err());
}
