//! What every front end (the `aiccsim` command and the Python package) checks before a run, on
//! top of what the library checks.
//!
//! The library answers the same on every machine: a scenario is valid or not, whatever runs it.
//! Whether this machine has the memory for the run is a question about the machine, so it is
//! asked here, last, once the fixed limits (which hold anywhere) have passed: a run too big for
//! the machine is refused with its figures before the simulation allocates anything, instead of
//! being killed by the kernel later.

use aiccsim::engine::Fabric;
use aiccsim::estimate::{available_memory, estimate, human, Estimate};
use aiccsim::watch::{BuildError, Watch};
use aiccsim::{ConfigError, Scenario};

/// The scenario checked against the fabric it builds and against this machine's memory; the
/// fabric, for the run (`Simulation::with_fabric`).
pub fn check(scenario: &Scenario) -> Result<Fabric, ConfigError> {
    check_watched(scenario, &mut Watch::unwatched()).map_err(BuildError::unwatched)
}

/// [`check`], reporting the build's progress to `watch` and stopping when it says so.
pub fn check_watched(scenario: &Scenario, watch: &mut Watch) -> Result<Fabric, BuildError<ConfigError>> {
    let fabric = Fabric::build_watched(scenario, watch)?;
    admit_memory(scenario).map_err(BuildError::Invalid)?;
    Ok(fabric)
}

/// [`check_watched`] without laying out the workload (`aiccsim validate`): the flows are counted,
/// not made, so a scenario near the flow limit is checked in the time and memory of its
/// topology. Returns the number of flows.
pub fn count_watched(scenario: &Scenario, watch: &mut Watch) -> Result<u64, BuildError<ConfigError>> {
    let flows = Fabric::check_watched(scenario, watch)?;
    admit_memory(scenario).map_err(BuildError::Invalid)?;
    Ok(flows)
}

/// Refuses a run whose estimated memory is more than this machine has available.
pub fn admit_memory(scenario: &Scenario) -> Result<(), ConfigError> {
    let estimate = estimate(scenario);
    let Some(available) = available_memory() else { return Ok(()) };
    if estimate.memory_bytes() <= available {
        return Ok(());
    }
    Err(scenario.error((
        estimate.largest_memory_part().key.to_string(),
        format!(
            "the run would need an estimated {} of memory, more than the {} this machine has available: simulate fewer hosts or flows, or sample timelines less often",
            Estimate::describe(&estimate.memory),
            human(available)
        ),
    )))
}

/// An imported ns-3 experiment as scenario text, checked as `run` will check it (named `origin`
/// in errors), so that what the CLI writes or Python returns is always a scenario that runs.
pub fn ns3_scenario(
    imported: &aiccsim::config::ns3::Ns3Import,
    base: &str,
    base_origin: &str,
    origin: &str,
) -> Result<String, ConfigError> {
    let text = imported.scenario_toml(base, base_origin)?;
    check(&Scenario::from_toml(&text, origin)?).map_err(|e| imported.blame_links(e))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_bigger_than_the_machine_is_refused_with_its_estimate() {
        if available_memory().is_none() {
            return; // no way to know the machine's memory here
        }
        // Every fixed limit holds; the nanosecond timelines over two minutes do not fit.
        let text = "[topology]\nkind = \"star\"\nhosts = 17\nlink = { bandwidth = \"100Gbps\", delay = \"1us\" }\n[workload]\nkind = \"incast\"\nsenders = \"1..=16\"\nreceiver = 0\nsize = \"100GB\"\n[output]\nsample_interval = \"1ns\"\n";
        let scenario = Scenario::from_toml(text, "big.toml").unwrap_or_else(|e| panic!("{e}"));
        let err = check(&scenario).err().expect("refused");
        assert_eq!((err.file.as_str(), err.key.as_str()), ("big.toml", "output.sample_interval"));
        assert!(err.message.contains("timelines") && err.message.contains("TB"), "{err}");
    }
}
