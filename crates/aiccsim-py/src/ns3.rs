//! `aiccsim.import_ns3`: the HPCC ns-3 topology and flow files as an aiccsim scenario, by the
//! same code as `aiccsim import-ns3` (docs/ns3.md).

use crate::errors::scenario_error;
use pyo3::prelude::*;

/// Returns the scenario's TOML text (headed by the node mapping as comments) and the import's
/// warnings. The text is validated before it is returned, as the CLI does before writing it.
/// `config`: ns-3's configuration file's text, if any (`config_origin` names it).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn import_ns3(
    py: Python<'_>,
    topology: &str,
    topology_origin: &str,
    flows: &str,
    flows_origin: &str,
    base: &str,
    base_origin: &str,
    config: Option<&str>,
    config_origin: &str,
) -> PyResult<(String, Vec<String>)> {
    let mut imported = aiccsim::config::ns3::import(topology, topology_origin, flows, flows_origin)
        .map_err(|e| scenario_error(py, e))?;
    if let Some(c) = config {
        imported.configure(c, config_origin).map_err(|e| scenario_error(py, e))?;
    }
    let text = aiccsim_cli::admit::ns3_scenario(&imported, base, base_origin, "<imported scenario>")
        .map_err(|e| scenario_error(py, e))?;
    Ok((text, imported.warnings))
}
