//! The check both fuzz targets run: scenario text in, through parsing and validation, and a
//! short run of what validates.
//!
//! The contract under test: a bad scenario is rejected with one line that names the file (and
//! the key, where the text gets that far), and nothing a valid scenario says makes the library
//! panic, hang or run out of memory. Valid scenarios are cut down before the run (see `bounded`)
//! so one input costs milliseconds: the fuzzer is after crashes, not long simulations.

use aiccsim::config::{TopologyConfig, WorkloadConfig};
use aiccsim::time::SimTime;
use aiccsim::{Fabric, Scenario, Simulation};

const FILE: &str = "fuzz.toml";
const MAX_HOSTS: u64 = 64;
const MAX_SWITCHES: u64 = 80;
const MAX_FLOWS: u64 = 256;
const MAX_COMPUTE_STEPS: u64 = 4096;
const STOP_TIME: SimTime = SimTime::from_us(200);
/// Enough for a few thousand packets across the fabric; a run that gets no further in this many
/// events is cut there, as a stop time would cut it.
const MAX_EVENTS: u64 = 200_000;
/// Progress is reported every 2^16 events; that many events at one instant means the run is
/// going round in circles without time moving (a zero-length timer or retry interval).
const PROGRESS_EVERY: u64 = 1 << 16;

/// Checks one scenario text against the contract above.
pub fn check(text: &str) {
    if let Ok(raw) = toml::from_str::<Scenario>(text) {
        if slow_to_validate(&raw.topology) {
            return;
        }
    }
    // The whole check a run makes: the scenario alone, then against the fabric it builds.
    let checked = Scenario::from_toml(text, FILE).and_then(|s| Fabric::build(&s).map(|fabric| (s, fabric)));
    let (scenario, fabric) = match checked {
        Ok(checked) => checked,
        Err(e) => {
            let line = e.to_string();
            if verbose() {
                eprintln!("rejected: {line}");
            }
            assert!(!line.contains('\n'), "error spans several lines: {line:?}");
            assert!(line.starts_with(FILE), "error does not name the file: {line:?}");
            assert!(!e.message.trim().is_empty(), "error without a message: {line:?}");
            return;
        }
    };
    // What validates must render back to TOML that parses to the same scenario: `aiccsim
    // validate` prints it for the user to edit and run.
    let rendered = scenario.to_toml();
    match Scenario::from_toml(&rendered, "resolved.toml") {
        Ok(again) => assert_eq!(again.to_toml(), rendered, "the resolved scenario changes when read back"),
        Err(e) => panic!("the resolved scenario does not parse back: {e}\n{rendered}"),
    }
    let Some(scenario) = bounded(scenario) else {
        if verbose() {
            eprintln!("valid, too large to run here");
        }
        return;
    };
    let mut sim = Simulation::with_fabric(&scenario, fabric);
    sim.set_event_limit(MAX_EVENTS);
    let mut last_now = SimTime::ZERO;
    let results = sim.run(&mut |p| {
        if p.events > 0 && p.events % PROGRESS_EVERY == 0 {
            assert!(p.now > last_now, "{} events at {} without time moving", PROGRESS_EVERY, p.now);
            last_now = p.now;
        }
    });
    if verbose() {
        eprintln!(
            "ran: {} of {} flows done, {} events, {} ns simulated",
            results.summary.flows_finished,
            results.summary.flows,
            results.summary.events,
            results.summary.simulated_time_ns
        );
    }
}

/// `FUZZ_VERBOSE=1` says what became of each input (for triage: `cargo fuzz run scenario FILE`).
pub fn verbose() -> bool {
    std::env::var_os("FUZZ_VERBOSE").is_some()
}

/// Checking a scenario builds the fabric's routing tables (`Fabric::build`): one breadth-first
/// search per top-of-rack switch over the whole fabric, seconds for a k = 32 fat tree and
/// minutes for k = 128. Such inputs are valid but far too slow for a fuzzer, so they are
/// skipped, unless a dimension is beyond the library's limits (`config/topology.rs`,
/// `topology/mod.rs`'s `MAX_ROUTE_ENTRIES`): those must be rejected cheaply, before anything is
/// built, and that is worth testing.
fn slow_to_validate(t: &TopologyConfig) -> bool {
    let (hosts, switches, links, tors) = match t {
        TopologyConfig::Star(t) => (u64::from(t.hosts), 1, u64::from(t.hosts), 1),
        TopologyConfig::Dumbbell(t) => {
            let hosts = u64::from(t.left) + u64::from(t.right);
            (hosts, 2, hosts + 1, 2)
        }
        TopologyConfig::LeafSpine(t) => {
            let (leaves, spines) = (u64::from(t.leaves), u64::from(t.spines));
            let hosts = leaves * u64::from(t.hosts_per_leaf);
            (hosts, leaves + spines, hosts.saturating_add(leaves * spines), leaves)
        }
        TopologyConfig::FatTree(t) => {
            // Any k past the library's 128 is rejected at once; capped so k^3 fits.
            let k = u64::from(t.k).min(1 << 16);
            (k * k * k / 4, 5 * k * k / 4, 3 * k * k * k / 4, k * k / 2)
        }
        TopologyConfig::Clos(t) => {
            let (racks, spines) = (u64::from(t.racks), u64::from(t.spines));
            let hosts =
                racks.saturating_mul(u64::from(t.servers_per_rack)).saturating_mul(u64::from(t.gpus_per_server));
            // NVLink adds a port per GPU and a switch per server (at most as many as GPUs).
            (2 * hosts, racks + spines + hosts, hosts.saturating_mul(3), racks + hosts)
        }
        TopologyConfig::Rail(t) => {
            let hosts = u64::from(t.servers).saturating_mul(u64::from(t.gpus_per_server));
            let rails = hosts;
            (2 * hosts, rails + u64::from(t.spines) + hosts, hosts.saturating_mul(3), rails + hosts)
        }
        TopologyConfig::Custom(t) => {
            let (hosts, switches) = (u64::from(t.hosts), u64::from(t.switches));
            (hosts, switches, t.links.len() as u64, hosts.min(switches))
        }
    };
    let within_limits =
        hosts <= 1 << 20 && switches <= 1 << 20 && links <= 1 << 23 && switches.saturating_mul(tors) <= 1 << 28;
    within_limits && tors.saturating_mul(switches.saturating_add(links)) > 20_000_000
}

/// The scenario with its run cut short, or None when it is too large to fuzz cheaply (the
/// library accepts far larger ones; they are just slow).
fn bounded(mut s: Scenario) -> Option<Scenario> {
    let (hosts, switches) = match &s.topology {
        TopologyConfig::Star(t) => (u64::from(t.hosts), 1),
        TopologyConfig::Dumbbell(t) => (u64::from(t.left) + u64::from(t.right), 2),
        TopologyConfig::LeafSpine(t) => {
            (u64::from(t.leaves) * u64::from(t.hosts_per_leaf), u64::from(t.leaves) + u64::from(t.spines))
        }
        TopologyConfig::FatTree(t) => {
            let k = u64::from(t.k);
            (k * k * k / 4, 5 * k * k / 4)
        }
        TopologyConfig::Clos(t) => {
            let per_rack = u64::from(t.servers_per_rack).saturating_mul(u64::from(t.gpus_per_server));
            (u64::from(t.racks).saturating_mul(per_rack), u64::from(t.racks) + u64::from(t.spines))
        }
        TopologyConfig::Rail(t) => {
            let hosts = u64::from(t.servers).saturating_mul(u64::from(t.gpus_per_server));
            (hosts, hosts.saturating_add(u64::from(t.spines)))
        }
        TopologyConfig::Custom(t) => {
            if t.links.len() > 4 * (MAX_HOSTS + MAX_SWITCHES) as usize {
                return None;
            }
            (u64::from(t.hosts), u64::from(t.switches))
        }
    };
    if hosts > MAX_HOSTS || switches > MAX_SWITCHES {
        return None;
    }
    // A job's ranks are at most the hosts: counting on all of them bounds its workloads.
    let workloads: Vec<&WorkloadConfig> = s.workload.iter().chain(s.jobs.iter().flat_map(|j| &j.workload.0)).collect();
    let (mut flows, mut steps) = (0u64, 0u64);
    for w in workloads {
        // Each kind counts its flows and compute steps without making them (the registry's size).
        let size = w.as_kind().size(hosts as u32);
        flows = flows.saturating_add(size.flows);
        steps = steps.saturating_add(size.computes);
    }
    if flows > MAX_FLOWS || steps > MAX_COMPUTE_STEPS {
        return None;
    }
    s.simulation.stop_time = Some(s.simulation.stop_time.map_or(STOP_TIME, |t| t.min(STOP_TIME)));
    Some(s)
}
