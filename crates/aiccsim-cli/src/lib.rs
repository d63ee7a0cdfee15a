//! `aiccsim`: run scenarios, validate them, reproduce published experiments, benchmark.
//!
//! A library so that the Python package can offer the same command (`python -m aiccsim`)
//! without a separate binary; `src/bin/aiccsim.rs` is the command itself.

pub mod admit;
mod bench;
mod check_ff;
mod checks;
mod import_chakra;
mod interrupt;
mod overrides;
mod progress;
mod python;
mod reproduce;
mod sweep;
mod table_print;

use aiccsim::cc::CcConfig;
use aiccsim::config::FastForward;
use aiccsim::watch::{BuildError, Halt, Stop, Watch};
use aiccsim::{Results, RunControl, Scenario, Simulation, StopReason};
use clap::{Parser, Subcommand};
use interrupt::Stage;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
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
        /// Stop after this much wall-clock time (e.g. "90s", "600s"), keeping the
        /// results so far (marked partial).
        #[arg(long, value_parser = parse_wall)]
        max_wall: Option<Duration>,
        /// Skip the steady stretches of groups of flows (simulation.fast_forward), with this
        /// tolerance (default 0.01: rates steady within 1%).
        #[arg(long, value_name = "TOLERANCE", num_args = 0..=1, default_missing_value = "0.01")]
        fast_forward: Option<f64>,
    },
    /// Run a scenario, or every run of an experiment, packet by packet and with fast-forward,
    /// and print the error fast-forward makes (OUT/errors.csv, and both runs' folders).
    CheckFastForward {
        /// A scenario file, or an experiment's id (a folder under experiments/).
        target: PathBuf,
        /// Fast-forward's tolerance (default 0.01).
        #[arg(long)]
        tolerance: Option<f64>,
        /// Output folder; default out/check-ff-NAME.
        #[arg(long, short)]
        out: Option<PathBuf>,
        /// Where the experiment folders are; default ./experiments, else the source tree's.
        #[arg(long)]
        experiments: Option<PathBuf>,
        /// Stop each run after this much wall-clock time.
        #[arg(long, value_parser = parse_wall)]
        max_wall: Option<Duration>,
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
        /// Stop each run after this much wall-clock time (e.g. "600s").
        #[arg(long, value_parser = parse_wall)]
        max_wall: Option<Duration>,
        /// Then write the HTML report of the results (as `aiccsim report OUT` does): the
        /// experiment's index page and a page per run, with the Python package's plots.
        #[arg(long)]
        report: bool,
        /// Run every scenario with fast-forward (simulation.fast_forward), with this tolerance
        /// (default 0.01).
        #[arg(long, value_name = "TOLERANCE", num_args = 0..=1, default_missing_value = "0.01")]
        fast_forward: Option<f64>,
    },
    /// Run a base scenario over a grid of settings and seeds, in parallel, into one table
    /// (OUT/sweep.csv); points already finished are skipped.
    Sweep {
        /// The sweep file (TOML): see docs/sweeps.md.
        file: PathBuf,
        /// Points run at once; default: every core (of this machine, or of the Ray cluster when
        /// the sweep starts).
        #[arg(long, short)]
        jobs: Option<usize>,
        /// Output folder; default out/<sweep file name>.
        #[arg(long, short)]
        out: Option<PathBuf>,
        /// Where the points run: child processes on this machine, or tasks on a Ray cluster
        /// (needs Python with the aiccsim and ray packages: see docs/sweeps.md).
        #[arg(long, value_enum, default_value_t = SweepBackend::Local)]
        backend: SweepBackend,
        /// With --backend ray: the cluster to connect to (host:port, "auto", ray://host:port);
        /// default: start a local Ray instance.
        #[arg(long)]
        address: Option<String>,
    },
    /// Turn an HPCC ns-3 topology file and flow file into a scenario file (see docs/ns3.md).
    ImportNs3 {
        /// The ns-3 topology file (e.g. mix/topology.txt).
        #[arg(long)]
        topology: PathBuf,
        /// The ns-3 flow file (e.g. mix/flow.txt).
        #[arg(long)]
        flows: PathBuf,
        /// ns-3's configuration file (e.g. mix/config.txt): congestion control and its
        /// constants, ECN, buffer, packet size; what aiccsim has no equivalent for is warned
        /// about, one line per key (docs/ns3.md).
        #[arg(long)]
        config: Option<PathBuf>,
        /// A scenario whose other sections ([cc], [switch], [nic], ...) the result keeps;
        /// without it, aiccsim's defaults.
        #[arg(long)]
        base: Option<PathBuf>,
        /// The scenario file to write.
        #[arg(long, short)]
        out: PathBuf,
    },
    /// Turn a SimAI / AICB workload file into a scenario of a `training` workload (see
    /// docs/simai.md).
    ImportSimai {
        /// The SimAI workload file (e.g. example/microAllReduce.txt).
        file: PathBuf,
        /// A scenario whose other sections ([topology], [cc], [switch], [nic], ...) the result
        /// keeps; without one, aiccsim's defaults and a Clos of 8-GPU servers at 400 Gbps.
        #[arg(long)]
        base: Option<PathBuf>,
        /// Training iterations to run.
        #[arg(long, default_value_t = 1)]
        iterations: u32,
        /// The scenario file to write.
        #[arg(long, short)]
        out: PathBuf,
    },
    /// Turn a Chakra execution trace (one file per rank) into a scenario that runs it, and say
    /// what it holds (see docs/chakra.md).
    ImportChakra {
        /// The folder of the trace's files (<prefix>.<rank>.et), or their prefix.
        dir: PathBuf,
        /// A JSON file of the process groups' ranks ({"1": [0, 1], ...}), as ASTRA-sim's
        /// --comm-group-configuration.
        #[arg(long)]
        comm_groups: Option<PathBuf>,
        /// "ignore" for a trace converted from PyTorch, whose ctrl_deps name the calling
        /// operator; "wait" (default): nodes wait for their ctrl_deps as for their data_deps.
        #[arg(long, value_name = "wait|ignore")]
        ctrl_deps: Option<String>,
        /// A scenario whose topology and other sections the result keeps; without it, a star of
        /// one host per rank with 100 Gbps, 1 us links.
        #[arg(long)]
        base: Option<PathBuf>,
        /// The scenario file to write; without it, standard output (and the summary to
        /// standard error).
        #[arg(long, short)]
        out: Option<PathBuf>,
    },
    /// Write a self-contained HTML page of a run's results: summary, plots, scenario.
    ///
    /// For an experiment's folder (aiccsim reproduce), a page per run and an index page comparing
    /// the runs. Runs in Python (AICCSIM_PYTHON, else python3 or the source tree's .venv), which
    /// needs the aiccsim package and matplotlib (pip install '.[plot]').
    Report {
        /// A results folder (aiccsim run --out DIR) or an experiment's folder (out/ID).
        dir: PathBuf,
        /// The page to write; default DIR/report.html.
        #[arg(long, short)]
        out: Option<PathBuf>,
    },
    /// Draw an experiment's plot (plot.svg and plot.png) from the folder `aiccsim reproduce` wrote.
    ///
    /// `reproduce` does this itself when it finds the Python package; this draws it again, or
    /// once the package is installed. Runs in Python (AICCSIM_PYTHON, else python3 or the source
    /// tree's .venv), which needs the aiccsim package and matplotlib (pip install '.[plot]').
    Plot {
        /// The experiment's folder (out/ID).
        dir: PathBuf,
    },
    /// Add Parquet files of the tables (flows.parquet, ...) to results folders.
    ///
    /// The CSV files stay. An experiment's folder (aiccsim reproduce) converts every run's folder.
    /// Runs in Python (AICCSIM_PYTHON, else python3 or the source tree's .venv), which needs the
    /// aiccsim package.
    Parquet {
        /// Results folders or experiment folders.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
    /// List the congestion-control algorithms with their parameters and defaults.
    Algorithms {
        /// Show this one algorithm alone (a name or alias, e.g. dcqcn).
        name: Option<String>,
    },
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

#[derive(Clone, Copy, clap::ValueEnum)]
enum SweepBackend {
    Local,
    Ray,
}

/// Runs the command line `args` (the program name first) and returns the exit code. `relaunch`
/// is the command that starts this same program again (`bench` and `sweep` run each scenario in
/// a child process): the executable for the binary, `python -m aiccsim` from Python.
pub fn main(args: Vec<OsString>, relaunch: Vec<OsString>) -> u8 {
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version land here too, with exit code 0.
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    // A scenario with an algorithm written in Python runs where Python is: this binary, if it is
    // not the Python package's own command (`python -m aiccsim`), hands the command over to it.
    if !aiccsim::cc::external::is_registered(python::ALGORITHM) {
        if let Some(file) = python::names_python_algorithm(&cli.command_files()) {
            return python::hand_over(&file, &args);
        }
    }
    let result = match cli.command {
        Command::Run { scenario, out, seed, quiet, max_wall, fast_forward } => {
            fast_forward_setting(fast_forward).and_then(|ff| cmd_run(&scenario, &out, seed, quiet, max_wall, ff))
        }
        Command::CheckFastForward { target, tolerance, out, experiments, max_wall } => {
            check_ff::run(&target, tolerance, out, experiments, max_wall)
        }
        Command::Validate { scenario: path } => Scenario::load(&path).map_err(CliError::from).and_then(|s| {
            // Built as a run would be (a million hosts take seconds): with its progress, and
            // stopped by Ctrl-C at the next check.
            #[allow(clippy::disallowed_methods)]
            let control = run_control(None, Instant::now());
            interrupt::enter(Stage::Checking, "");
            let label = path.file_stem().unwrap_or_default().to_string_lossy().to_string();
            let flows = aiccsim::estimate::flow_count(&s);
            if flows <= VALIDATE_LAYS_OUT {
                let sim = build_run(&s, &label, false, &control)?;
                print_warnings(&sim, &label);
            } else {
                // Counted, not made: a 4-million-flow all-to-all took 46 s and 4.7 GB to lay out.
                check_run(&s, &label, false, &control)?;
                eprintln!(
                    "note: {label}: {flows} flows are counted, not laid out, so the warnings that look at each flow are left to `aiccsim run`, which prints them before the run"
                );
            }
            print!("{}", s.to_toml());
            print!("{}", describe_parallel_groups(&s));
            let e = aiccsim::estimate::estimate(&s);
            println!("# estimated memory: {}", aiccsim::estimate::Estimate::describe(&e.memory));
            println!("# estimated result files: {}", aiccsim::estimate::Estimate::describe(&e.output));
            Ok(())
        }),
        Command::Reproduce { id, out, experiments, max_wall, report, fast_forward } => {
            let out = out.unwrap_or_else(|| PathBuf::from("out").join(&id));
            let result = fast_forward_setting(fast_forward)
                .and_then(|ff| reproduce::run(&id, Some(out.clone()), experiments, max_wall, report, ff));
            // Failed claims (exit code 3) still leave every result to look at; a run that
            // could not be made leaves nothing to report.
            if report && result.as_ref().map_or_else(|e| e.code == 3, |()| true) {
                let code = python::run("report", vec![out.into_os_string()], &python::PLOT_MODULES, "'.[plot]'");
                if code != 0 && result.is_ok() {
                    return code;
                }
            }
            result
        }
        Command::Sweep { file, jobs, out, backend, address } => match (backend, address) {
            (SweepBackend::Local, None) => sweep::run(&file, jobs, out, sweep::Backend::Local, &relaunch),
            (SweepBackend::Ray, address) => sweep::run(&file, jobs, out, sweep::Backend::Ray { address }, &relaunch),
            (SweepBackend::Local, Some(_)) => Err(CliError::input("--address is for --backend ray")),
        },
        Command::ImportSimai { file, base, iterations, out } => import_simai(&file, base.as_deref(), iterations, &out),
        Command::ImportNs3 { topology, flows, config, base, out } => {
            import_ns3(&topology, &flows, config.as_deref(), base.as_deref(), &out)
        }
        Command::ImportChakra { dir, comm_groups, ctrl_deps, base, out } => import_chakra::run(import_chakra::Import {
            dir: &dir,
            comm_groups: comm_groups.as_deref(),
            ctrl_deps: ctrl_deps.as_deref(),
            base: base.as_deref(),
            out: out.as_deref(),
        }),
        // The Python side prints its own errors: its exit code is the command's.
        Command::Report { dir, out } => {
            let mut args = vec![dir.into_os_string()];
            if let Some(out) = out {
                args.extend([OsString::from("--out"), out.into_os_string()]);
            }
            return python::run("report", args, &python::PLOT_MODULES, "'.[plot]'");
        }
        Command::Plot { dir } => {
            return python::run("plot", vec![dir.into_os_string()], &python::PLOT_MODULES, "'.[plot]'")
        }
        Command::Parquet { dirs } => {
            let args = dirs.into_iter().map(PathBuf::into_os_string).collect();
            return python::run("parquet", args, &["aiccsim", "pyarrow.parquet"], ".");
        }
        Command::Algorithms { name } => print_algorithms(name.as_deref()),
        Command::Bench { scenarios, repeat, child } => bench::run(scenarios, repeat, child, &relaunch),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {}", aiccsim::config::elide(&e.message));
            e.code
        }
    }
}

impl Cli {
    /// The scenario, sweep and experiment files the command reads (that exist).
    fn command_files(&self) -> Vec<PathBuf> {
        let mut files = match &self.command {
            Command::Run { scenario, .. } | Command::Validate { scenario } => vec![scenario.clone()],
            Command::Sweep { file, .. } => {
                let mut files = vec![file.clone()];
                let base = std::fs::read_to_string(file).ok().and_then(|t| t.parse::<toml::Table>().ok());
                if let Some(toml::Value::String(base)) = base.as_ref().and_then(|t| t.get("base")) {
                    files.push(aiccsim::config::folder_of(file).join(base));
                }
                files
            }
            Command::Reproduce { id, experiments, .. } => {
                let dir = reproduce::experiments_dir(experiments.clone()).join(id);
                let entries: Vec<PathBuf> =
                    std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
                entries.into_iter().filter(|p| p.extension().is_some_and(|x| x == "toml")).collect()
            }
            Command::Bench { scenarios, .. } => scenarios.clone(),
            _ => Vec::new(),
        };
        files.retain(|f| f.is_file());
        files
    }
}

/// `f`, or the error of an algorithm from outside the core (written in Python) that ended it:
/// its traceback is printed here, whole, and the error is its first line.
fn caught<T>(f: impl FnOnce() -> Result<T, CliError>) -> Result<T, CliError> {
    aiccsim::cc::external::catch(f).unwrap_or_else(|failure| {
        let text = failure.to_string();
        let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
        if !rest.trim().is_empty() {
            eprintln!("{}", rest.trim_end());
        }
        Err(CliError { message: format!("{first} (traceback above)"), code: 1 })
    })
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

/// Reads a scenario file and checks it completely ([`admit::check`]), as before any run.
pub fn load(path: &Path) -> Result<Scenario, CliError> {
    let scenario = Scenario::load(path)?;
    admit::check(&scenario)?;
    Ok(scenario)
}

fn read(path: &Path, what: &str) -> Result<String, CliError> {
    std::fs::read_to_string(path)
        .map_err(|e| CliError::input(format!("{}: cannot read the {what}: {e}", path.display())))
}

fn import_ns3(
    topology: &Path,
    flows: &Path,
    config: Option<&Path>,
    base: Option<&Path>,
    out: &Path,
) -> Result<(), CliError> {
    let (t, f) = (read(topology, "topology file")?, read(flows, "flow file")?);
    let mut imported =
        aiccsim::config::ns3::import(&t, &topology.display().to_string(), &f, &flows.display().to_string())?;
    if let Some(c) = config {
        imported.configure(&read(c, "ns-3 configuration file")?, &c.display().to_string())?;
    }
    let (base_text, base_origin) = match base {
        Some(b) => (read(b, "base scenario")?, b.display().to_string()),
        None => (String::new(), String::from("(no base)")),
    };
    let text = admit::ns3_scenario(&imported, &base_text, &base_origin, &out.display().to_string())?;
    std::fs::write(out, &text).map_err(|e| CliError::io(&format!("cannot write {}", out.display()), e))?;
    for w in &imported.warnings {
        eprintln!("warning: {w}");
    }
    let t = &imported.topology;
    println!(
        "wrote {}: {} hosts, {} switches, {} links, {} flows",
        out.display(),
        t.hosts,
        t.switches,
        t.links.len(),
        imported.flows.len()
    );
    println!("hosts: {}", aiccsim::config::ns3::mapping("h", &imported.host_ids));
    println!("switches: {}", aiccsim::config::ns3::mapping("s", &imported.switch_ids));
    Ok(())
}

fn import_simai(file: &Path, base: Option<&Path>, iterations: u32, out: &Path) -> Result<(), CliError> {
    let text = read(file, "SimAI workload file")?;
    let mut imported = aiccsim::config::simai::import(&text, &file.display().to_string())?;
    imported.workload.iterations = iterations;
    let (base_text, base_origin) = match base {
        Some(b) => (read(b, "base scenario")?, b.display().to_string()),
        None => (String::new(), String::from("(no base)")),
    };
    let scenario = imported.scenario_toml(&base_text, &base_origin)?;
    admit::check(&Scenario::from_toml(&scenario, &out.display().to_string())?)?;
    std::fs::write(out, &scenario).map_err(|e| CliError::io(&format!("cannot write {}", out.display()), e))?;
    for w in &imported.warnings {
        eprintln!("warning: {w}");
    }
    let w = &imported.workload;
    let comms = w.layers.iter().map(|l| l.comms().count()).sum::<usize>();
    println!(
        "wrote {}: {} GPUs (tp {}, ep {}), {} layers, {comms} collectives per iteration (each on every group of its dimension), {} iteration(s)",
        out.display(),
        imported.gpus,
        w.tp,
        w.ep,
        w.layers.len(),
        w.iterations
    );
    Ok(())
}

/// A wall-clock duration with a time unit ("90s", "1500ms").
fn parse_wall(s: &str) -> Result<Duration, String> {
    let t = aiccsim::time::parse_time(s)?;
    if t.0 == 0 {
        return Err("must be positive".into());
    }
    Ok(Duration::from_nanos(t.0 / 1000))
}

/// What a run that did not complete means for the command: a stall is an error (exit 4), an
/// interrupt exits 130 as shells expect, a spent wall-clock budget exits 5. The results have
/// been written either way.
pub fn check_ending(r: &Results, out: &Path) -> Result<(), CliError> {
    let s = &r.summary;
    let partial = format!("partial results in {}", out.display());
    match s.stop_reason {
        // The CLI sets no event budget; a stop the scenario asked for is no error.
        StopReason::Completed | StopReason::StopTime | StopReason::EventLimit => Ok(()),
        StopReason::Stalled => {
            let why = s.stall.as_ref().map(|d| d.describe()).unwrap_or_default();
            Err(CliError { message: format!("run stalled: {why}; {partial}"), code: 4 })
        }
        StopReason::Interrupted => Err(CliError { message: format!("interrupted; {partial}"), code: 130 }),
        StopReason::WallLimit => Err(CliError { message: format!("wall-clock limit reached; {partial}"), code: 5 }),
    }
}

/// The scenario's settings that are legal but almost certainly a mistake, on stderr, each once,
/// before the run (`summary.json` keeps them too).
/// `aiccsim validate`'s lines on the resolved parallel groups of every `parallel_training`
/// workload, the `[workload]`'s or each job's (headed by its key when there are jobs).
fn describe_parallel_groups(s: &Scenario) -> String {
    let hosts = s.topology.fabric_hosts() as u32;
    let plans =
        aiccsim::workload::jobs::plan(s.workload.as_ref(), &s.jobs, s.simulation.seed, hosts, s.topology.per_server());
    let mut text = String::new();
    for plan in plans.iter().flatten() {
        for (key, w) in &plan.workloads {
            if let aiccsim::workload::WorkloadConfig::ParallelTraining(w) = w {
                if !s.jobs.is_empty() {
                    text += &format!("# {key} ({}):\n", plan.name);
                }
                text += &w.describe_groups(&plan.hosts);
            }
        }
    }
    text
}

fn print_warnings(sim: &Simulation, label: &str) {
    for w in sim.warnings() {
        eprintln!("warning: {label}: {}", aiccsim::config::elide(&w.to_string()));
    }
}

/// How long writing may go on past `--max-wall`, for the tables that grow with the run's
/// length (timelines, pauses, the trace); they are cut there.
pub const WRITING_GRACE: Duration = Duration::from_secs(1);

/// The rate result files are written at, for the warning that they would not fit the
/// wall-clock limit: a modest disk's and a loaded machine's (a quiet one writes CSV at several
/// hundred MB/s).
const WRITE_BYTES_PER_SECOND: u128 = 100_000_000;

/// Warns (before the run) when the result files are expected to exceed `output.warn_above`,
/// and when writing them alone would take longer than the wall-clock limit `control` sets.
fn warn_about_output(scenario: &Scenario, label: &str, control: &RunControl) {
    let e = aiccsim::estimate::estimate(scenario);
    if let Some(limit) = control.wall_limit {
        let seconds = e.output_bytes() / WRITE_BYTES_PER_SECOND;
        if seconds >= limit.as_secs() as u128 {
            eprintln!(
                "warning: {label}: writing the expected {} of results would take about {seconds} s, more than the wall-clock limit of {} s: the timelines, pauses and trace will be cut where the limit falls (summary.json lists them under results_cut); sample less, or raise --max-wall",
                aiccsim::estimate::Estimate::describe(&e.output),
                limit.as_secs()
            );
        }
    }
    if e.output_bytes() > scenario.output.warn_above.0 as u128 {
        eprintln!(
            "warning: {label}: the result files are expected to reach {} over the run's ideal {:.3} ms; sample timelines less often (output.sample_interval) or fewer of them (output.queue_switches, output.rate_flows), or raise output.warn_above",
            aiccsim::estimate::Estimate::describe(&e.output),
            e.ideal_duration.as_secs_f64() * 1e3
        );
    }
}

/// Builds the run of `scenario`, showing the progress of each long phase (unless `quiet`), and
/// stops when `control` says so: an error that says in which phase, with exit code 130
/// (interrupted) or 5 (wall-clock limit). A stop before the simulation starts leaves no results.
pub fn build_run(scenario: &Scenario, label: &str, quiet: bool, control: &RunControl) -> Result<Simulation, CliError> {
    let mut phases = progress::Phases::new(label, quiet);
    let mut observe = |phase, done, total| phases.observe(phase, done, total);
    let mut watch = Watch::new(control.clone(), &mut observe);
    let built = caught(|| {
        Ok(match admit::check_watched(scenario, &mut watch) {
            Ok(fabric) => Simulation::with_fabric_watched(scenario, fabric, &mut watch).map_err(BuildError::from),
            Err(e) => Err(e),
        })
    });
    drop(watch);
    phases.finish();
    match built? {
        Ok(sim) => Ok(sim),
        Err(BuildError::Invalid(e)) => Err(e.into()),
        Err(BuildError::Stopped(stop)) => Err(stopped_early(stop)),
    }
}

/// `validate` lays out workloads of up to this many flows, to find the warnings that look at
/// each flow (a fraction of a second); larger ones it only counts.
const VALIDATE_LAYS_OUT: u64 = 1 << 16;

/// [`build_run`]'s checks without laying out the workload (`validate` of a large one): every
/// error a run would report before its simulation starts.
fn check_run(scenario: &Scenario, label: &str, quiet: bool, control: &RunControl) -> Result<(), CliError> {
    let mut phases = progress::Phases::new(label, quiet);
    let mut observe = |phase, done, total| phases.observe(phase, done, total);
    let mut watch = Watch::new(control.clone(), &mut observe);
    let checked = caught(|| Ok(admit::count_watched(scenario, &mut watch)));
    drop(watch);
    phases.finish();
    match checked? {
        Ok(_) => Ok(()),
        Err(BuildError::Invalid(e)) => Err(e.into()),
        Err(BuildError::Stopped(stop)) => Err(stopped_early(stop)),
    }
}

/// A run stopped from outside before its simulation started: nothing to write.
fn stopped_early(stop: Stop) -> CliError {
    let (what, code) = match stop.halt {
        Halt::Interrupted => ("interrupted", 130),
        Halt::WallLimit => ("wall-clock limit reached", 5),
    };
    CliError {
        message: format!("{what} while {} (before the simulation started): no results to write", stop.phase.describe()),
        code,
    }
}

/// Runs a simulation built from `scenario` with a progress bar that appears once the run has
/// taken a second. `control` can end it early with partial results. With `ended`, Ctrl-C ends
/// the command at once from the end of the event loop on, saying that (gathering the results
/// checks nothing).
pub fn run_built(
    mut sim: Simulation,
    scenario: &Scenario,
    label: &str,
    quiet: bool,
    control: &RunControl,
    ended: Option<&str>,
) -> Result<Results, CliError> {
    print_warnings(&sim, label);
    warn_about_output(scenario, label, control);
    sim.set_control(control.clone());
    let mut bar = progress::RunBar::new(label, quiet);
    let results = caught(|| {
        Ok(sim.run(&mut |p| {
            if let (true, Some(note)) = (p.ended, ended) {
                interrupt::enter(Stage::Writing, note);
            }
            bar.observe(&p)
        }))
    });
    bar.finish();
    results
}

/// How the command stops a run from outside: Ctrl-C, and `max_wall` counted from `since` (the
/// command's start, so that reading and building count against it).
pub fn run_control(max_wall: Option<Duration>, since: Instant) -> RunControl {
    RunControl { interrupt: Some(interrupt::flag()), wall_limit: max_wall, since: Some(since) }
}

/// `--fast-forward [TOLERANCE]`, checked.
fn fast_forward_setting(tolerance: Option<f64>) -> Result<Option<FastForward>, CliError> {
    let Some(tolerance) = tolerance else { return Ok(None) };
    let ff = FastForward::On { tolerance };
    match ff.problem() {
        Some(problem) => Err(CliError::input(format!("--fast-forward: {problem}"))),
        None => Ok(Some(ff)),
    }
}

/// The line a run's `scenario.toml` starts with when `--fast-forward` set it.
pub(crate) fn fast_forward_note(ff: FastForward) -> String {
    format!(
        "# run with --fast-forward (tolerance {}), which replaces simulation.fast_forward below\n",
        ff.tolerance().unwrap_or_default()
    )
}

fn cmd_run(
    path: &Path,
    out: &Path,
    seed: Option<u64>,
    quiet: bool,
    max_wall: Option<Duration>,
    fast_forward: Option<FastForward>,
) -> Result<(), CliError> {
    // The wall-clock budget counts from here; it never steers what the run computes.
    #[allow(clippy::disallowed_methods)]
    let since = Instant::now();
    let control = run_control(max_wall, since);
    interrupt::enter(Stage::Reading, "interrupted while reading the scenario; nothing written");
    if let Some(limit) = max_wall {
        interrupt::limit_reading(limit, since);
    }
    let mut scenario = Scenario::load(path)?;
    if let Some(s) = seed {
        scenario.simulation.seed = s;
    }
    if let Some(ff) = fast_forward {
        scenario.simulation.fast_forward = ff;
    }
    let label = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    interrupt::enter(Stage::Checking, "");
    let marker = start_writing(out)?;
    let remove_marker = || std::fs::remove_file(&marker).map_err(|e| CliError::io(&marker.display().to_string(), e));
    let sim = match build_run(&scenario, &label, quiet, &control) {
        Ok(sim) => sim,
        Err(e) => {
            // No run is writing here after all: the folder is left empty, without the marker.
            // (Should that fail, the reason the run never started is still the error to report.)
            if let Err(not_removed) = remove_marker() {
                eprintln!("warning: {}", not_removed.message);
            }
            return Err(e);
        }
    };
    // From the end of the event loop on, Ctrl-C ends the command at once; the marker then says
    // the folder is not complete. (The interrupt that stopped the run is spent: it asked for
    // these results.)
    let incomplete = format!("interrupted while writing the results; {} holds no complete results", out.display());
    let results = match run_built(sim, &scenario, &label, quiet, &control, Some(&incomplete)) {
        Ok(results) => results,
        // An algorithm's error: no results, so no marker of a run writing them.
        Err(e) => {
            if let Err(not_removed) = remove_marker() {
                eprintln!("warning: {}", not_removed.message);
            }
            return Err(e);
        }
    };
    interrupt::enter(Stage::Writing, incomplete);
    let pressed = interrupt::flag().swap(false, Ordering::SeqCst);
    let pressed = pressed && results.summary.stop_reason != StopReason::Interrupted;
    if pressed {
        // Pressed after the simulation ended, while its results were being gathered.
        return Err(CliError {
            message: format!(
                "interrupted before the results were written; {} holds no complete results",
                out.display()
            ),
            code: 130,
        });
    }
    // The wall-clock limit bounds the writing too: what follows the run's length is cut at the
    // limit plus WRITING_GRACE (the rest is bounded by the scenario's flows and ports).
    write_results(&results, out, &label, max_wall.map(|limit| since + limit))?;
    let mut text = std::fs::read_to_string(path).map_err(|e| CliError::io(&path.display().to_string(), e))?;
    if let Some(seed) = seed {
        text.insert_str(0, &format!("# run with --seed {seed}, which replaces simulation.seed below\n"));
    }
    if let Some(ff) = fast_forward {
        text.insert_str(0, &fast_forward_note(ff));
    }
    write_scenario_text(out, &text)?;
    remove_marker()?;
    if !quiet {
        print_summary(&results);
        println!("results written to {}", out.display());
    }
    check_ending(&results, out)
}

/// Writes a run's result files into `out`. With a wall-clock `limit` (the run's start plus its
/// --max-wall), the tables that grow with the run's length are cut at the limit plus
/// [`WRITING_GRACE`] (summary.json lists them under results_cut), and the command is told so;
/// the rest is bounded by the scenario's flows and ports.
pub(crate) fn write_results(
    results: &Results,
    out: &Path,
    label: &str,
    limit: Option<Instant>,
) -> Result<(), CliError> {
    let deadline = limit.map(|at| at + WRITING_GRACE);
    let cut = (results.write_dir_until(out, deadline))
        .map_err(|e| CliError::io(&format!("writing results to {}", out.display()), e))?;
    if !cut.is_empty() {
        eprintln!(
            "warning: {label}: --max-wall reached while writing: {} cut short (summary.json lists them under results_cut)",
            cut.join(", ")
        );
    }
    Ok(())
}

/// Writes `scenario.toml` into a run's folder: the scenario as the user wrote it, for the
/// report's page (run.json has it resolved, every default filled in, as JSON).
pub(crate) fn write_scenario_text(dir: &Path, text: &str) -> Result<(), CliError> {
    let path = dir.join("scenario.toml");
    std::fs::write(&path, text).map_err(|e| CliError::io(&path.display().to_string(), e))
}

/// The file that stands in a run's output folder while the run is under way.
pub const IN_PROGRESS: &str = "RUN-IN-PROGRESS";

/// Readies `out` for a run before it starts: creates it, removes the result files of an
/// earlier run (a killed run must not leave another's complete-looking results behind), and
/// marks it in progress until the results are written. Returns the marker's path.
fn start_writing(out: &Path) -> Result<PathBuf, CliError> {
    aiccsim::results::clear_results(out).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotADirectory => CliError::input(format!("--out {}: {e}", out.display())),
        _ => CliError::io(&out.display().to_string(), e),
    })?;
    let marker = out.join(IN_PROGRESS);
    let note = format!(
        "An aiccsim run (process {}) is writing its results here. If this file is still here when no run is, that run was killed: this folder holds no complete results.\n",
        std::process::id()
    );
    std::fs::write(&marker, note).map_err(|e| CliError::io(&marker.display().to_string(), e))?;
    Ok(marker)
}

fn print_summary(r: &Results) {
    let s = &r.summary;
    if s.stop_reason == StopReason::StopTime && s.flows_finished < s.flows {
        eprintln!(
            "warning: {} of {} flows did not finish before simulation.stop_time",
            s.flows - s.flows_finished,
            s.flows
        );
    }
    println!(
        "{}: {}/{} flows finished{} in {:.3} ms simulated ({:.2} s wall, {:.1} M packet-hops/s)",
        s.algorithm,
        s.flows_finished,
        s.flows,
        if s.partial { format!(" (stopped early: {})", s.stop_reason.as_str()) } else { String::new() },
        s.simulated_time_ns.as_ns_f64() / 1e6,
        s.performance.wall_seconds,
        s.performance.packet_hops_per_second / 1e6
    );
    // Without a finished flow the figures are zeros, which would read as instant flows.
    if s.flows_finished == 0 {
        println!("  FCT: none finished");
    } else {
        println!(
            "  FCT us: mean {:.1}  p50 {:.1}  p99 {:.1}  max {:.1};  slowdown mean {:.2}  p99 {:.2}",
            s.fct_ns.mean.as_us_f64(),
            s.fct_ns.p50.as_us_f64(),
            s.fct_ns.p99.as_us_f64(),
            s.fct_ns.max.as_us_f64(),
            s.slowdown.mean,
            s.slowdown.p99
        );
    }
    // A collective's figure of merit, as NCCL's tests report it.
    let view = r.view();
    if let Some(busbw) = view.mean_busbw_bps() {
        let of = view.collectives.iter().filter(|c| c.busbw_bps().is_some()).count();
        let which = if of == 1 { "the collective".to_string() } else { format!("{of} collectives, mean") };
        println!("  busbw {:.1} Gbps ({which})", busbw / 1e9);
    }
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

/// Writes the listing of every algorithm, or of the one `only` names (a name or an alias); a
/// closed pipe (`aiccsim algorithms | head`) just ends it.
fn print_algorithms(only: Option<&str>) -> Result<(), CliError> {
    use std::io::Write;
    let all = CcConfig::all_defaults();
    let wanted = match only {
        None => None,
        Some(name) if name == python::ALGORITHM => Some(python::ALGORITHM),
        // An alias (`pfc_only`) is read as a scenario would read it.
        Some(name) => match toml::from_str::<CcConfig>(&format!("algorithm = {}", toml::Value::from(name))) {
            Ok(cfg) => Some(cfg.as_algorithm().name()),
            Err(_) => {
                let mut names: Vec<&str> = all.iter().map(|c| c.as_algorithm().name()).collect();
                names.push(python::ALGORITHM);
                return Err(CliError {
                    message: format!("unknown algorithm `{name}`: one of {}", names.join(", ")),
                    code: 2,
                });
            }
        },
    };
    let shown = |name: &str| wanted.is_none_or(|w| w == name);
    let mut out = std::io::stdout().lock();
    let mut write = || -> std::io::Result<()> {
        for cfg in all.iter().filter(|c| shown(c.as_algorithm().name())) {
            let algorithm = cfg.as_algorithm();
            writeln!(out, "{}\n  {}", algorithm.name(), algorithm.describe())?;
            let table = toml::Table::try_from(cfg).unwrap_or_default();
            for (k, v) in table.iter().filter(|(k, _)| k.as_str() != "algorithm") {
                writeln!(out, "    {k} = {v}")?;
            }
            for (k, rule) in algorithm.optional_parameters() {
                writeln!(out, "    {k} = (unset: {rule})")?;
            }
            // Each preset's values where they differ from the defaults.
            for name in algorithm.presets() {
                let preset = algorithm.preset_table(name).unwrap_or_default();
                let differs: Vec<String> = (preset.iter())
                    .filter(|(k, v)| table.get(*k) != Some(v))
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect();
                let differs = if differs.is_empty() { "the defaults".to_string() } else { differs.join(", ") };
                writeln!(out, "    preset = \"{name}\": {differs}")?;
            }
            if wanted.is_none() {
                writeln!(out)?;
            }
        }
        if shown(python::ALGORITHM) {
            // Not in the registry: built by the Python package, to which this command hands it.
            writeln!(out, "{}\n  an algorithm written as a Python class with one method per NIC event; runs in the Python package (docs/cc/programmable.md)", python::ALGORITHM)?;
            writeln!(out, "    class = (required: \"module:Class\")")?;
            writeln!(out, "    path = (unset: the scenario file's folder)")?;
            writeln!(out, "    any other key = (a parameter of the class's constructor)")?;
        }
        Ok(())
    };
    let _ = write();
    Ok(())
}
