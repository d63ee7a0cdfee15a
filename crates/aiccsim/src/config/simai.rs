//! Import of SimAI's workload file (aliyun/SimAI, written by AICB's workload generator): a
//! parallelism line, a layer count, and one row per layer with its forward, input-gradient and
//! weight-gradient compute, each followed by an optional collective. SimAI runs these rows with
//! ASTRA-sim's training loop, which is our `training` workload's loop, so a row becomes one
//! `training` layer with `forward_comm`, `input_grad_comm` and `weight_grad_comm`. docs/simai.md
//! gives the format and the subset read.
//!
//! Like SimAI, we read the rows as whitespace-separated tokens; compute times are SimAI ticks,
//! nanoseconds.

use super::{ConfigError, TopologyConfig, WorkloadConfig};
use crate::time::{ByteSize, SimTime};
use crate::workload::training::{CommGroup, CommOp, LayerComm};
use crate::workload::{HostSet, LayerConfig, TrainingWorkload};

/// The parallelism lines SimAI runs with the transformer loop (the ones AICB writes).
const POLICIES: [&str; 2] = ["HYBRID_TRANSFORMER_FWD_IN_BCKWD", "HYBRID_TRANSFORMER"];

/// A SimAI workload file, read.
#[derive(Clone, Debug)]
pub struct SimaiImport {
    /// Ranks: the file's `all_gpus`.
    pub gpus: u32,
    /// The layers as a `training` workload on hosts 0 to `gpus` - 1, one iteration.
    pub workload: TrainingWorkload,
    /// The layer names, in order, for the scenario's comment.
    pub names: Vec<String>,
    /// What was read but not simulated; one line each.
    pub warnings: Vec<String>,
}

/// One row's fields, in the file's order.
const FIELDS: [&str; 12] = [
    "name",
    "dependency",
    "forward compute",
    "forward comm type",
    "forward comm size",
    "input-gradient compute",
    "input-gradient comm type",
    "input-gradient comm size",
    "weight-gradient compute",
    "weight-gradient comm type",
    "weight-gradient comm size",
    "weight-gradient update time",
];

/// Reads `text`, the contents of the file `file`.
pub fn import(text: &str, file: &str) -> Result<SimaiImport, ConfigError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim().is_empty());
    let err = |line: usize, key: &str, message: String| ConfigError {
        file: format!("{file}:{line}"),
        key: key.into(),
        message,
    };
    let (first, head) =
        lines.next().ok_or_else(|| err(1, "", "the file is empty: expected SimAI's parallelism line".into()))?;
    let head: Vec<&str> = head.split_whitespace().collect();
    if !POLICIES.contains(&head[0]) {
        return Err(err(
            first,
            "parallelism",
            format!(
                "{:?} is not read: aiccsim reads the transformer workloads AICB writes ({}); DLRM, MICRO and the others have loops of their own",
                head[0],
                POLICIES.join(", ")
            ),
        ));
    }
    let value = |name: &str| -> Result<Option<u64>, ConfigError> {
        let Some(i) = head.iter().position(|t| t.trim_end_matches(':') == name) else { return Ok(None) };
        let v = head.get(i + 1).ok_or_else(|| err(first, name, "has no value after it".into()))?;
        v.parse().map(Some).map_err(|_| err(first, name, format!("{v:?} is not a whole number")))
    };
    let gpus = value("all_gpus")?.ok_or_else(|| err(first, "all_gpus", "missing: the number of GPUs".into()))?;
    let tp = value("model_parallel_NPU_group")?.unwrap_or(1);
    let ep = value("ep")?.unwrap_or(1);
    let pp = value("pp")?.unwrap_or(1);
    let positive_u32 = |name: &str, v: u64| -> Result<u32, ConfigError> {
        u32::try_from(v)
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| err(first, name, format!("{v} must be from 1 to {}", u32::MAX)))
    };
    let (gpus, tp, ep) =
        (positive_u32("all_gpus", gpus)?, positive_u32("model_parallel_NPU_group", tp)?, positive_u32("ep", ep)?);
    let mut warnings = Vec::new();
    if value("checkpoints")?.unwrap_or(0) > 0 || value("checkpoint_initiates")?.unwrap_or(0) > 0 {
        return Err(err(
            first,
            "checkpoints",
            "activation recomputation (forward-in-backward checkpoints) is not read; give a file generated without it (checkpoints: 0)".into(),
        ));
    }
    if pp > 1 {
        warnings.push(format!(
            "{file}:{first}: pp: {pp} (and pp_comm, vpp, ga) are not simulated: SimAI itself runs the rows with one pipeline stage and adds a pipeline term by formula; the data-parallel groups are all_gpus / tp = {} ranks, as SimAI makes them. For a simulated pipeline use kind = \"parallel_training\"",
            gpus / tp
        ));
    }

    let (count_line, count) =
        lines.next().ok_or_else(|| err(first + 1, "layers", "missing: the number of layer rows".into()))?;
    let count: usize = count
        .trim()
        .parse()
        .map_err(|_| err(count_line, "layers", format!("{:?} is not a number of layers", count.trim())))?;
    if count == 0 {
        return Err(err(count_line, "layers", "the workload has no layer rows".into()));
    }
    // ASTRA-sim reads the rows as one token stream, whatever the line breaks.
    let tokens: Vec<(usize, &str)> = lines.flat_map(|(n, l)| l.split_whitespace().map(move |t| (n, t))).collect();
    let rows = tokens.chunks(FIELDS.len());
    let (mut layers, mut names, mut update_ns) = (Vec::with_capacity(count), Vec::with_capacity(count), 0u64);
    for (i, row) in rows.take(count).enumerate() {
        let line = row[0].0;
        if row.len() < FIELDS.len() {
            return Err(err(
                line,
                FIELDS[row.len()],
                format!("row {} of {count} ends after {} of its {} fields", i + 1, row.len(), FIELDS.len()),
            ));
        }
        let number = |f: usize| -> Result<u64, ConfigError> {
            let (n, t) = row[f];
            t.parse().map_err(|_| err(n, FIELDS[f], format!("{t:?} is not a whole number (layer {:?})", row[0].1)))
        };
        let comm = |f: usize| -> Result<Option<LayerComm>, ConfigError> {
            let (n, t) = row[f];
            let size = number(f + 1)?;
            parse_comm(t, size).map_err(|m| err(n, FIELDS[f], format!("{m} (layer {:?})", row[0].1)))
        };
        let ns = |f: usize| number(f).map(SimTime::from_ns);
        update_ns += number(11)?;
        layers.push(LayerConfig {
            forward: ns(2)?,
            backward: None,
            input_grad: Some(ns(5)?),
            weight_grad: Some(ns(8)?),
            all_reduce: None,
            forward_all_to_all: None,
            backward_all_to_all: None,
            forward_comm: comm(3)?,
            input_grad_comm: comm(6)?,
            weight_grad_comm: comm(9)?,
        });
        names.push(row[0].1.to_string());
    }
    if layers.len() < count {
        let line = tokens.last().map_or(count_line, |t| t.0);
        return Err(err(line, "layers", format!("the file announces {count} layer rows but has {}", layers.len())));
    }
    if tokens.len() > count * FIELDS.len() {
        let line = tokens[count * FIELDS.len()].0;
        warnings.push(format!("{file}:{line}: text after the {count} layer rows the file announces is ignored"));
    }
    if update_ns > 0 {
        warnings.push(format!(
            "{file}: the weight-gradient update times ({update_ns} ns in all) are not simulated: SimAI adds each row's to the end of its collectives"
        ));
    }
    let workload = TrainingWorkload {
        hosts: HostSet::Range { start: 0, end: gpus },
        iterations: 1,
        start: SimTime::ZERO,
        chunks: 1,
        local_ranks: None,
        tp,
        ep,
        layers,
    };
    Ok(SimaiImport { gpus, workload, names, warnings })
}

/// A comm type and its size; `None` for NONE or a size of 0. The group suffixes are SimAI's:
/// none (tensor parallel after a forward or input-gradient compute, data parallel after a
/// weight-gradient one), `_EP`, `_DP_EP`.
fn parse_comm(kind: &str, size: u64) -> Result<Option<LayerComm>, String> {
    if kind == "NONE" || size == 0 {
        return Ok(None);
    }
    let (op, rest) = [
        ("ALLREDUCEALLTOALL", None),
        ("ALLREDUCE", Some(CommOp::AllReduce)),
        ("ALLGATHER", Some(CommOp::AllGather)),
        ("REDUCESCATTER", Some(CommOp::ReduceScatter)),
        ("ALLTOALL", Some(CommOp::AllToAll)),
    ]
    .into_iter()
    .find_map(|(name, op)| kind.strip_prefix(name).map(|rest| (op, rest)))
    .ok_or_else(|| {
        format!("{kind:?} is not a SimAI comm type: NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER or ALLTOALL, with _EP or _DP_EP")
    })?;
    let op = op.ok_or_else(|| format!("{kind:?} (an all-reduce then an all-to-all in one) is not read"))?;
    let group = match rest {
        "" => None,
        "_EP" => Some(CommGroup::Ep),
        "_DP_EP" => Some(CommGroup::DpEp),
        _ => return Err(format!("{kind:?} has an unknown group suffix {rest:?}: none, _EP or _DP_EP")),
    };
    Ok(Some(LayerComm { op, size: ByteSize(size), group }))
}

impl SimaiImport {
    /// A scenario: `base`'s sections (its topology, when it has one) with the imported workload.
    /// Without a topology in `base`, a two-tier Clos of 8-GPU servers with NVLink when the GPUs
    /// fill whole servers, else a star.
    pub fn scenario_toml(&self, base: &str, base_origin: &str) -> Result<String, ConfigError> {
        let to_err = |message: String| ConfigError { file: base_origin.to_string(), key: String::new(), message };
        let mut table: toml::Table = base.parse().map_err(|e: toml::de::Error| to_err(e.message().to_string()))?;
        if !table.contains_key("topology") {
            table.insert("topology".into(), toml::Value::Table(default_topology(self.gpus)?));
        }
        let workload = WorkloadConfig::Training(self.workload.clone());
        table.insert("workload".into(), toml::Value::try_from(workload).map_err(|e| to_err(e.to_string()))?);
        let body = toml::to_string(&table).map_err(|e| to_err(e.to_string()))?;
        let mut names = String::new();
        for (i, n) in self.names.iter().enumerate() {
            names += &format!("#   layers[{i}]: {n}\n");
        }
        Ok(format!("# Imported from a SimAI workload file (aiccsim import-simai): {} GPUs, tp {}, ep {}.\n# Rows:\n{names}{body}", self.gpus, self.workload.tp, self.workload.ep))
    }
}

/// The fabric an import gets when the base scenario has none: 400 Gbps NICs under ToRs of up to
/// 4 servers, 8 spines, NVLink inside each 8-GPU server; a star when the GPUs are not whole servers.
fn default_topology(gpus: u32) -> Result<toml::Table, ConfigError> {
    let text = if gpus.is_multiple_of(8) {
        let servers = gpus / 8;
        let per_rack = [4, 2, 1].into_iter().find(|k| servers.is_multiple_of(*k)).unwrap_or(1);
        format!(
            "kind = \"clos\"\nracks = {}\nservers_per_rack = {per_rack}\ngpus_per_server = 8\nspines = 8\nlink = {{ bandwidth = \"400Gbps\", delay = \"1us\" }}\nnvlink = {{ bandwidth = \"450GB/s\", delay = \"25ns\" }}\n",
            servers / per_rack
        )
    } else {
        format!("kind = \"star\"\nhosts = {gpus}\nlink = {{ bandwidth = \"400Gbps\", delay = \"1us\" }}\n")
    };
    let check: Result<TopologyConfig, _> = toml::from_str(&text);
    check.map_err(|e| ConfigError { file: String::new(), key: "topology".into(), message: e.to_string() })?;
    text.parse().map_err(|e: toml::de::Error| ConfigError {
        file: String::new(),
        key: "topology".into(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 2 pp: 1 vpp: 8 ga: 1 all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0
3
embedding_layer -1 556000 ALLREDUCE 16777216 1 NONE 0 1 NONE 0 100
attention_row -1 1750 REDUCESCATTER 4096 875 ALLGATHER 4096 875 ALLREDUCE 8192 100
mlp_moelayer -1 1 ALLTOALL_EP 1024 1 ALLTOALL_EP 1024 2 ALLGATHER_DP_EP 2048 0
";

    #[test]
    fn rows_become_layers_with_their_groups() {
        let s = import(FILE, "w.txt").unwrap();
        assert_eq!((s.gpus, s.workload.tp, s.workload.ep, s.workload.layers.len()), (8, 2, 2, 3));
        let l = &s.workload.layers;
        assert_eq!(l[0].forward, SimTime::from_us(556));
        let c = l[0].forward_comm.unwrap();
        assert_eq!((c.op, c.size.0, c.group), (CommOp::AllReduce, 16777216, None));
        assert!(l[0].input_grad_comm.is_none() && l[0].weight_grad_comm.is_none());
        assert_eq!(l[1].weight_grad_comm.unwrap().op, CommOp::AllReduce);
        assert_eq!(l[2].forward_comm.unwrap().group, Some(CommGroup::Ep));
        assert_eq!(l[2].weight_grad_comm.unwrap().group, Some(CommGroup::DpEp));
        assert_eq!(l[2].weight_grad, Some(SimTime::from_ns(2)));
        assert_eq!(s.names, ["embedding_layer", "attention_row", "mlp_moelayer"]);
        assert_eq!(s.warnings.len(), 1, "the update times: {:?}", s.warnings);
    }

    #[test]
    fn bad_files_name_the_line_and_the_field() {
        let bad = |text: &str| import(text, "w.txt").unwrap_err();
        let e = bad("HYBRID_DLRM DLRM_LAST_BOTTOM_LAYER: 3\n1\n");
        assert_eq!((e.file.as_str(), e.key.as_str()), ("w.txt:1", "parallelism"));
        let e = bad(&FILE.replace("ALLGATHER_DP_EP", "BROADCAST"));
        assert_eq!((e.file.as_str(), e.key.as_str()), ("w.txt:5", "weight-gradient comm type"));
        assert!(e.message.contains("mlp_moelayer"), "{e}");
        let e = bad(&FILE.replace("\n3\n", "\n4\n"));
        assert!(e.message.contains("announces 4 layer rows but has 3"), "{e}");
        let e = bad(&FILE.replace("1750 REDUCESCATTER", "1.5 REDUCESCATTER"));
        assert_eq!((e.file.as_str(), e.key.as_str()), ("w.txt:4", "forward compute"));
        let e = bad(&FILE.replace("all_gpus: 8", "all_gpus: 0"));
        assert_eq!(e.key, "all_gpus");
        let e = bad(&FILE.replace("checkpoints: 0", "checkpoints: 1 3"));
        assert_eq!(e.key, "checkpoints");
        let e = bad(&FILE.replace("ALLTOALL_EP 1024 1 ALLTOALL_EP", "ALLTOALL_XP 1024 1 ALLTOALL_EP"));
        assert!(e.message.contains("unknown group suffix"), "{e}");
        let e = bad(&FILE.replace("ALLREDUCE 8192", "ALLREDUCEALLTOALL 8192"));
        assert!(e.message.contains("is not read"), "{e}");
    }

    #[test]
    fn a_pipeline_is_warned_about_not_simulated() {
        let s = import(&FILE.replace("pp: 1", "pp: 4").replace(" 100\n", " 0\n"), "w.txt").unwrap();
        assert_eq!(s.warnings.len(), 1);
        assert!(s.warnings[0].contains("pp: 4") && s.warnings[0].contains("parallel_training"), "{:?}", s.warnings);
    }

    #[test]
    fn the_scenario_runs_through_the_checks() {
        let s = import(FILE, "w.txt").unwrap();
        let text = s.scenario_toml("[cc]\nalgorithm = \"none\"\n", "base.toml").unwrap();
        let scenario = crate::config::Scenario::from_toml(&text, "out.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert!(matches!(scenario.topology, TopologyConfig::Clos(_)));
        assert!(text.contains("#   layers[2]: mlp_moelayer"));
    }
}
