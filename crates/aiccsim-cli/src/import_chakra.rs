//! `aiccsim import-chakra DIR`: reads a Chakra execution trace (one file per rank), says what it
//! holds, and writes a scenario that runs it (`kind = "chakra"`), on a star of one host per rank
//! or on the topology of a base scenario. The scenario is checked as `run` will check it, so
//! what is written always runs.

use crate::{admit, read, CliError};
use aiccsim::config::folder_of;
use aiccsim::workload::chakra::{CtrlDeps, Trace};
use aiccsim::Scenario;
use std::path::{Path, PathBuf};

/// The star a scenario without a base runs the trace on: one host per rank.
const LINK: (&str, &str) = ("100Gbps", "1us");

/// What the command was given.
pub struct Import<'a> {
    pub dir: &'a Path,
    pub comm_groups: Option<&'a Path>,
    pub ctrl_deps: Option<&'a str>,
    pub base: Option<&'a Path>,
    /// The scenario file to write; standard output when absent (and the report to standard
    /// error).
    pub out: Option<&'a Path>,
}

pub fn run(args: Import) -> Result<(), CliError> {
    let ctrl = match args.ctrl_deps {
        None | Some("wait") => CtrlDeps::Wait,
        Some("ignore") => CtrlDeps::Ignore,
        Some(other) => {
            return Err(CliError::input(format!("--ctrl-deps: {other:?} is neither \"wait\" nor \"ignore\"")))
        }
    };
    let trace = Trace::load(args.dir, args.comm_groups, ctrl).map_err(|(key, e)| match key {
        "comm_groups" => CliError::input(format!("--comm-groups: {e}")),
        _ => CliError::input(e),
    })?;
    // Paths in the scenario are taken from its folder: relative to it where the trace lies
    // under it, absolute otherwise.
    let out_dir = args.out.map_or_else(|| PathBuf::from("."), |o| folder_of(o).to_path_buf());
    let origin = args.out.map_or_else(|| "the scenario".to_string(), |o| o.display().to_string());
    let mut workload = toml::Table::new();
    workload.insert("kind".into(), "chakra".into());
    workload.insert("trace".into(), written_path(args.dir, &out_dir).into());
    if let Some(g) = args.comm_groups {
        workload.insert("comm_groups".into(), written_path(g, &out_dir).into());
    }
    if ctrl == CtrlDeps::Ignore {
        workload.insert("ctrl_deps".into(), "ignore".into());
    }
    let (mut table, on) = match args.base {
        Some(b) => {
            let text = read(b, "base scenario")?;
            let table: toml::Table = text
                .parse()
                .map_err(|e: toml::de::Error| CliError::input(format!("{}: {}", b.display(), e.message())))?;
            (table, format!("the topology of {}", b.display()))
        }
        None => (toml::Table::new(), String::new()),
    };
    let star = !table.contains_key("topology");
    if star {
        let mut topology = toml::Table::new();
        topology.insert("kind".into(), "star".into());
        topology.insert("hosts".into(), i64::from(trace.ranks()).into());
        let mut link = toml::Table::new();
        link.insert("bandwidth".into(), LINK.0.into());
        link.insert("delay".into(), LINK.1.into());
        topology.insert("link".into(), link.into());
        table.insert("topology".into(), topology.into());
    }
    table.remove("jobs");
    table.insert("workload".into(), workload.into());
    let body = toml::to_string(&table).map_err(|e| CliError::io("cannot write the scenario", e))?;
    let text = format!("{}{body}", header(&trace));
    let scenario = Scenario::from_toml_in(&text, &origin, Some(&out_dir))?;
    admit::check(&scenario)?;

    let on = if star { format!("a star of {} hosts ({} and {} links)", trace.ranks(), LINK.0, LINK.1) } else { on };
    let wrote = args
        .out
        .map_or_else(|| "wrote the scenario to standard output".to_string(), |o| format!("wrote {}", o.display()));
    let report = report(&trace, &on, &wrote);
    match args.out {
        Some(out) => {
            std::fs::write(out, &text).map_err(|e| CliError::io(&format!("cannot write {}", out.display()), e))?;
            print!("{report}");
        }
        None => {
            print!("{text}");
            eprint!("{report}");
        }
    }
    Ok(())
}

/// `path` as the scenario in `folder` should name it.
fn written_path(path: &Path, folder: &Path) -> String {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let (path, folder) = (abs(path), abs(folder));
    match path.strip_prefix(&folder) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// The trace's counts as comments heading the scenario.
fn header(trace: &Trace) -> String {
    format!("# Imported by aiccsim import-chakra: {}\n# {}\n\n", ranks(trace), nodes(trace))
}

fn ranks(trace: &Trace) -> String {
    let schema = if trace.schema.is_empty() { String::new() } else { format!(", schema {}", trace.schema) };
    let first = trace.files[0].display();
    match trace.files.len() {
        1 => format!("1 rank ({first}{schema})"),
        n => format!(
            "{n} ranks ({first} to {}{schema})",
            trace.files[n - 1].file_name().unwrap_or_default().to_string_lossy()
        ),
    }
}

fn nodes(trace: &Trace) -> String {
    let counts: Vec<String> =
        trace.nodes.iter().filter(|(_, n)| *n > 0).map(|(t, n)| format!("{n} {}", t.name())).collect();
    format!("nodes: {}", counts.join(", "))
}

fn report(trace: &Trace, on: &str, wrote: &str) -> String {
    let collectives: Vec<String> = trace.collectives.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let size = trace.size();
    format!(
        "{wrote}: {} on {on}\n{}\ncommunication: {}\nmakes {} flows and {} compute steps\n",
        ranks(trace),
        nodes(trace),
        if collectives.is_empty() { "none".to_string() } else { collectives.join(", ") },
        size.flows,
        size.computes
    )
}
