//! The NIC events are listed once (`cc/events.rs`); what is written by hand about them elsewhere
//! is held to that list here: the table of docs/cc/programmable.md (each event's variant and
//! Python handler, in order) and python/aiccsim/_native.pyi (the export the Python package reads
//! the list through, and a class for each argument type a handler receives).

use crate::common::read;
use aiccsim::cc::NIC_EVENTS;

/// Each event as the docs table writes it: `` `Variant` `` and `` `handler(flow, args)` ``.
fn listed() -> Vec<(String, String)> {
    let call = |handler: &str, args: &[(&str, &str)]| {
        let names: Vec<&str> = std::iter::once("flow").chain(args.iter().map(|(name, _)| *name)).collect();
        format!("`{handler}({})`", names.join(", "))
    };
    NIC_EVENTS.iter().map(|e| (format!("`{}`", e.variant), call(e.handler, e.args))).collect()
}

/// The first two cells of each row of the table under "## The events".
fn documented(docs: &str) -> Vec<(String, String)> {
    let section = docs.split("\n## The events\n").nth(1).expect("docs/cc/programmable.md has a section The events");
    let table = section.lines().skip_while(|l| !l.starts_with('|')).take_while(|l| l.starts_with('|'));
    table
        .skip(2) // the header and its rule
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            (cells[1].to_string(), cells[2].to_string())
        })
        .collect()
}

#[test]
fn the_docs_table_lists_every_event_with_its_python_handler_in_order() {
    assert_eq!(documented(&read("docs/cc/programmable.md")), listed());
}

#[test]
fn the_stub_declares_the_export_and_every_argument_type() {
    let stub = read("python/aiccsim/_native.pyi");
    assert!(
        stub.contains("def nic_events() -> list[tuple[str, list[tuple[str, str]]]]: ..."),
        "_native.pyi declares nic_events as the binding exports it (crates/aiccsim-py/src/algorithm.rs)"
    );
    for event in NIC_EVENTS {
        for (arg, kind) in event.args {
            let declared = *kind == "int" || stub.lines().any(|l| l.starts_with(&format!("class {kind}:")));
            assert!(declared, "{}'s argument {arg} is a {kind}: _native.pyi has no class {kind}", event.handler);
        }
    }
}

#[test]
fn the_check_catches_a_wrong_signature() {
    // The check above can fail: a table without one event's row does not pass it.
    let docs = read("docs/cc/programmable.md").replace("| `Cnp` | `on_cnp(flow)` |", "| `Cnp` | `on_cnp(flow, x)` |");
    assert_ne!(documented(&docs), listed());
}
