//! `aiccsim`: run scenarios, validate them, reproduce published experiments, benchmark.

mod bench;
mod checks;
mod plot;
mod reproduce;

use aiccsim::cc::CcConfig;
use aiccsim::{Results, Scenario, Simulation};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "aiccsim",
    version,
    about = "Packet-level RoCEv2 congestion-control simulator for AI training clusters"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one scenario file and write its results (flows.csv, summary.json, ...) to a folder.
    Run {
        /// The scenario (TOML).
        scenario: PathBuf,
        /// Output folder (created if needed).
        #[arg(long, short)]
        out: PathBuf,
        /// Override the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Check a scenario and print it with every default filled in (or the error).
    Validate { scenario: PathBuf },
    /// Run every scenario of experiments/ID and write the experiment's table and plot.
    Reproduce {
        /// Experiment id: a folder name under experiments/ (e.g. "incast").
        id: String,
        /// Output folder; default out/ID.
        #[arg(long, short)]
        out: Option<PathBuf>,
        /// Where the experiment folders are; default ./experiments, else the source tree's.
        #[arg(long)]
        experiments: Option<PathBuf>,
    },
    /// List the congestion-control algorithms with their parameters and defaults.
    Algorithms,
    /// Run the benchmark scenarios and report wall time, events and packet-hops per second.
    Bench {
        /// Only these scenario files (default: every .toml in benches/).
        scenarios: Vec<PathBuf>,
        /// Runs per scenario; the fastest is reported.
        #[arg(long, default_value_t = 3)]
        repeat: u32,
        /// Internal: run one scenario in this process and print its figures as JSON.
        #[arg(long, hide = true)]
        child: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run { scenario, out, seed, quiet } => cmd_run(&scenario, &out, seed, quiet),
        Command::Validate { scenario } => load(&scenario).map(|s| print!("{}", s.to_toml())),
        Command::Reproduce { id, out, experiments } => reproduce::run(&id, out, experiments),
        Command::Algorithms => {
            print_algorithms();
            Ok(())
        }
        Command::Bench { scenarios, repeat, child } => bench::run(scenarios, repeat, child),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", e.message);
            ExitCode::from(e.code)
        }
    }
}

/// An error for the user: one line, and the exit code (2: bad input, 1: anything else).
pub struct CliError {
    pub message: String,
    pub code: u8,
}

impl CliError {
    pub fn input(message: impl Into<String>) -> Self {
        CliError { message: message.into(), code: 2 }
    }
    pub fn io(what: &str, e: impl std::fmt::Display) -> Self {
        CliError { message: format!("{what}: {e}"), code: 1 }
    }
}

impl From<aiccsim::ConfigError> for CliError {
    fn from(e: aiccsim::ConfigError) -> Self {
        CliError::input(e.to_string())
    }
}

pub fn load(path: &Path) -> Result<Scenario, CliError> {
    Ok(Scenario::load(path)?)
}

/// Runs a scenario with a progress bar that appears once the run has taken a second.
pub fn run_with_progress(scenario: &Scenario, label: &str, quiet: bool) -> Result<Results, CliError> {
    let sim = Simulation::new(scenario)?;
    let started = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    let results = sim.run(&mut |p| {
        if quiet || started.elapsed() < Duration::from_secs(1) {
            return;
        }
        let b = bar.get_or_insert_with(|| {
            let b = ProgressBar::new(p.flows_total as u64);
            b.set_style(
                ProgressStyle::with_template("{prefix} {bar:24} {pos}/{len} flows {msg}").expect("valid template"),
            );
            b.set_prefix(label.to_string());
            b
        });
        b.set_position(p.flows_done as u64);
        b.set_message(format!("t={:.3}ms", p.now.as_secs_f64() * 1e3));
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(results)
}

fn cmd_run(path: &Path, out: &Path, seed: Option<u64>, quiet: bool) -> Result<(), CliError> {
    let mut scenario = load(path)?;
    if let Some(s) = seed {
        scenario.simulation.seed = s;
    }
    let label = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    let results = run_with_progress(&scenario, &label, quiet)?;
    results.write_dir(out).map_err(|e| CliError::io(&format!("writing results to {}", out.display()), e))?;
    if !quiet {
        print_summary(&results);
        println!("results written to {}", out.display());
    }
    Ok(())
}

fn print_summary(r: &Results) {
    let s = &r.summary;
    if s.partial {
        eprintln!(
            "warning: {} of {} flows did not finish: the stop time came first, or nothing could move any more (check ports.csv for ports paused to the end)",
            s.flows - s.flows_finished,
            s.flows
        );
    }
    println!(
        "{}: {}/{} flows finished{} in {:.3} ms simulated ({:.2} s wall, {:.1} M packet-hops/s)",
        s.algorithm,
        s.flows_finished,
        s.flows,
        if s.partial { " (stopped early)" } else { "" },
        s.simulated_time_ns / 1e6,
        s.performance.wall_seconds,
        s.performance.packet_hops_per_second / 1e6
    );
    println!(
        "  FCT us: mean {:.1}  p50 {:.1}  p99 {:.1}  max {:.1};  slowdown mean {:.2}  p99 {:.2}",
        s.fct_ns.mean / 1e3,
        s.fct_ns.p50 / 1e3,
        s.fct_ns.p99 / 1e3,
        s.fct_ns.max / 1e3,
        s.slowdown.mean,
        s.slowdown.p99
    );
    println!(
        "  PAUSE frames {}  drops {}  ECN marks {}  CNPs {}  timeouts {}  max switch queue {:.1} KB",
        s.pause_frames,
        s.packets_dropped,
        s.ecn_marks,
        s.cnps,
        s.timeouts,
        s.max_switch_queue_bytes as f64 / 1e3
    );
}

/// Writes the listing; a closed pipe (`aiccsim algorithms | head`) just ends it.
fn print_algorithms() {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let mut write = || -> std::io::Result<()> {
        for cfg in CcConfig::all_defaults() {
            writeln!(out, "{}\n  {}", cfg.name(), cfg.describe())?;
            let table = toml::Table::try_from(&cfg).unwrap_or_default();
            for (k, v) in table.iter().filter(|(k, _)| k.as_str() != "algorithm") {
                writeln!(out, "    {k} = {v}")?;
            }
            for (k, rule) in cfg.optional_parameters() {
                writeln!(out, "    {k} = (unset: {rule})")?;
            }
            writeln!(out)?;
        }
        Ok(())
    };
    let _ = write();
}
