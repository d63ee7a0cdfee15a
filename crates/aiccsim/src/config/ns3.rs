//! Import of the input files of the HPCC ns-3 simulator (alibaba-edu/High-Precision-Congestion-Control,
//! `simulation/mix/`): its topology file and its flow file, turned into a `custom` topology and
//! a `flows` workload. See docs/ns3.md for the formats and what is and is not carried over.
//! `twin.rs` adds the rest of the twin: ns-3's code constants and its configuration file.
//!
//! ns-3 reads both files as whitespace-separated token streams (`topof >> a >> b`), so line breaks
//! carry no meaning there; we read them the same way, keeping each token's line for errors. It
//! also stops reading after the counts its first line announces, which is why its published
//! `flow.txt` can carry prose at the end: we ignore what follows likewise, with a warning.

pub mod twin;

use super::{ConfigError, CustomLink, CustomTopology, FlowList, FlowSpec, TopologyConfig, WorkloadConfig};
use crate::time::ByteSize;
use crate::time::{Bandwidth, SimTime};
use twin::{Ns3Config, Twin};

/// The imported topology and flows, with where each aiccsim node came from.
#[derive(Clone, Debug)]
pub struct Ns3Import {
    /// The ns-3 node id of each host: host i is ns-3 node `host_ids[i]`.
    pub host_ids: Vec<u32>,
    /// The ns-3 node id of each switch: switch j is ns-3 node `switch_ids[j]`.
    pub switch_ids: Vec<u32>,
    pub topology: CustomTopology,
    /// Where each link of `topology` came from: "FILE:LINE" of the topology file.
    pub link_origins: Vec<String>,
    pub flows: Vec<FlowSpec>,
    /// Each flow's destination port (ns-3 hashes it into the flow's path).
    pub dports: Vec<u16>,
    /// The rest of the twin: ns-3's code constants, and its configuration file's settings once
    /// [`Ns3Import::configure`] has read one.
    pub twin: Twin,
    /// Things ignored on the way in; one line each.
    pub warnings: Vec<String>,
}

struct Tokens<'a> {
    file: &'a str,
    items: Vec<(usize, &'a str)>,
    next: usize,
    last_line: usize,
}

impl<'a> Tokens<'a> {
    fn new(file: &'a str, text: &'a str) -> Self {
        // A UTF-8 byte-order mark (some Windows editors write one) is not part of the first token.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let items: Vec<(usize, &str)> =
            text.lines().enumerate().flat_map(|(i, l)| l.split_whitespace().map(move |t| (i + 1, t))).collect();
        let last_line = text.lines().count().max(1);
        Tokens { file, items, next: 0, last_line }
    }

    fn err(&self, line: usize, field: &str, message: impl Into<String>) -> ConfigError {
        ConfigError { file: format!("{}:{line}", self.file), key: field.to_string(), message: message.into() }
    }

    fn take(&mut self, field: &str) -> Result<(usize, &'a str), ConfigError> {
        match self.items.get(self.next) {
            Some(&t) => {
                self.next += 1;
                Ok(t)
            }
            None => Err(self.err(self.last_line, field, "the file ends here, but more fields were announced")),
        }
    }

    fn integer(&mut self, field: &str) -> Result<(usize, u64), ConfigError> {
        let (line, t) = self.take(field)?;
        let v = t.parse::<u64>().map_err(|_| self.err(line, field, format!("'{t}' is not a whole number")))?;
        Ok((line, v))
    }

    /// The line of the first token not read, if any: ns-3 never reads it.
    fn rest(&self) -> Option<usize> {
        self.items.get(self.next).map(|t| t.0)
    }
}

/// Parses both files; `*_origin` names each in errors (usually its path).
pub fn import(
    topology: &str,
    topology_origin: &str,
    flows: &str,
    flows_origin: &str,
) -> Result<Ns3Import, ConfigError> {
    let mut warnings = Vec::new();
    let (nodes, topology) = read_topology(topology, topology_origin, &mut warnings)?;
    let (flows, dports) = read_flows(flows, flows_origin, &nodes, topology_origin, &mut warnings)?;
    let Nodes { host_ids, switch_ids, .. } = nodes;
    let (topology, link_origins) = topology;
    let twin = Twin::default();
    let mut import = Ns3Import { host_ids, switch_ids, topology, link_origins, flows, dports, twin, warnings };
    let mut notes = Vec::new();
    import.twin.settings = twin::code_constants(&import, &mut notes);
    import.warnings.extend(notes);
    Ok(import)
}

/// The nodes of an ns-3 topology file: which are switches, and each one's number among the
/// hosts or among the switches.
struct Nodes {
    count: u64,
    is_switch: Vec<bool>,
    index: Vec<u32>,
    host_ids: Vec<u32>,
    switch_ids: Vec<u32>,
}

/// The topology file: its nodes, and its links as a custom topology.
fn read_topology(
    topology: &str,
    topology_origin: &str,
    warnings: &mut Vec<String>,
) -> Result<(Nodes, (CustomTopology, Vec<String>)), ConfigError> {
    let mut t = Tokens::new(topology_origin, topology);
    let (_, node_num) = t.integer("node_num")?;
    let (sline, switch_num) = t.integer("switch_node_num")?;
    let (_, link_num) = t.integer("link_num")?;
    // aiccsim's own limits (1 048 576 hosts and as many switches); checked before the per-node
    // tables are allocated, so that a mistyped count is an error and not an exhausted memory.
    if node_num > 2 * 1_048_576 {
        return Err(t.err(
            1,
            "node_num",
            format!("{node_num} nodes: aiccsim models at most 1048576 hosts and 1048576 switches"),
        ));
    }
    if switch_num > node_num {
        return Err(t.err(sline, "switch_node_num", format!("{switch_num} switches among {node_num} nodes")));
    }
    let mut is_switch = vec![false; node_num as usize];
    for _ in 0..switch_num {
        let (line, id) = t.integer("switch id")?;
        match is_switch.get_mut(id as usize) {
            None => {
                return Err(t.err(
                    line,
                    "switch id",
                    format!("node {id} does not exist (nodes are 0 to {})", node_num - 1),
                ))
            }
            Some(true) => return Err(t.err(line, "switch id", format!("node {id} is listed twice"))),
            Some(s) => *s = true,
        }
    }
    // Hosts and switches keep their relative ns-3 order whatever the interleaving.
    // `index[id]`: the node's number among the hosts or among the switches.
    let mut name = vec![String::new(); node_num as usize];
    let mut index = vec![0u32; node_num as usize];
    let (mut host_ids, mut switch_ids) = (Vec::new(), Vec::new());
    for (id, &sw) in is_switch.iter().enumerate() {
        let (prefix, ids) = if sw { ("s", &mut switch_ids) } else { ("h", &mut host_ids) };
        index[id] = ids.len() as u32;
        name[id] = format!("{prefix}{}", ids.len());
        ids.push(id as u32);
    }
    let mut host_link: Vec<Option<usize>> = vec![None; node_num as usize];
    let mut links = Vec::new();
    let mut link_origins = Vec::new();
    for _ in 0..link_num {
        let node = |t: &mut Tokens, field: &str| -> Result<(usize, usize), ConfigError> {
            let (line, id) = t.integer(field)?;
            if id >= node_num {
                return Err(t.err(
                    line,
                    field,
                    format!("node {id} does not exist (nodes are 0 to {})", node_num.max(1) - 1),
                ));
            }
            Ok((line, id as usize))
        };
        let (line, a) = node(&mut t, "src")?;
        let (_, b) = node(&mut t, "dst")?;
        if a == b {
            return Err(t.err(line, "dst", format!("a link from node {a} to itself")));
        }
        for (end, other) in [(a, b), (b, a)] {
            if is_switch[end] {
                continue;
            }
            if !is_switch[other] {
                return Err(t.err(
                    line,
                    "dst",
                    format!("nodes {a} and {b} are both hosts; aiccsim links every host to a switch"),
                ));
            }
            if let Some(first) = host_link[end] {
                return Err(t.err(
                    line,
                    "src",
                    format!(
                        "host node {end} has a second link (the first is on line {first}); aiccsim models a host as one NIC port with one link"
                    ),
                ));
            }
            host_link[end] = Some(line);
        }
        let (rl, rate) = t.take("rate")?;
        let bandwidth = parse_rate(rate).map_err(|m| t.err(rl, "rate", m))?;
        let (dl, delay) = t.take("delay")?;
        let delay = parse_delay(delay).map_err(|m| t.err(dl, "delay", m))?;
        let (el, e) = t.take("error_rate")?;
        match e.parse::<f64>() {
            Ok(0.0) => {}
            Ok(v) if (0.0..=1.0).contains(&v) => {
                return Err(t.err(
                    el,
                    "error_rate",
                    format!("{e}: aiccsim has no random packet loss on links; only 0 can be imported"),
                ))
            }
            _ => return Err(t.err(el, "error_rate", format!("'{e}' is not a probability (0 to 1)"))),
        }
        links.push(CustomLink { a: name[a].clone(), b: name[b].clone(), bandwidth, delay });
        link_origins.push(format!("{topology_origin}:{line}"));
    }
    if let Some(line) = t.rest() {
        warnings.push(format!(
            "{topology_origin}:{line}: ignored: ns-3 reads only the {link_num} links announced on line 1"
        ));
    }
    if let Some(h) = host_ids.iter().find(|&&h| host_link[h as usize].is_none()) {
        return Err(t.err(1, "link_num", format!("host node {h} has no link")));
    }
    let topology = CustomTopology { hosts: host_ids.len() as u32, switches: switch_ids.len() as u32, links };
    let nodes = Nodes { count: node_num, is_switch, index, host_ids, switch_ids };
    Ok((nodes, (topology, link_origins)))
}

/// The flow file, its hosts numbered as `nodes` numbers them, and each flow's destination port.
fn read_flows(
    flows: &str,
    flows_origin: &str,
    nodes: &Nodes,
    topology_origin: &str,
    warnings: &mut Vec<String>,
) -> Result<(Vec<FlowSpec>, Vec<u16>), ConfigError> {
    let Nodes { count: node_num, is_switch, index, .. } = nodes;
    let node_num = *node_num;
    let mut f = Tokens::new(flows_origin, flows);
    let (_, flow_num) = f.integer("flow count")?;
    let mut flow_list = Vec::new();
    let mut dports = Vec::new();
    let mut previous = SimTime::ZERO;
    for _ in 0..flow_num {
        let host = |f: &mut Tokens, field: &str| -> Result<(usize, u32), ConfigError> {
            let (line, id) = f.integer(field)?;
            if id >= node_num {
                return Err(f.err(line, field, format!("node {id} does not exist in {topology_origin}")));
            }
            if is_switch[id as usize] {
                return Err(f.err(line, field, format!("node {id} is a switch; flows go between hosts")));
            }
            Ok((line, index[id as usize]))
        };
        let (line, src) = host(&mut f, "src")?;
        let (_, dst) = host(&mut f, "dst")?;
        if src == dst {
            return Err(f.err(line, "dst", "the same host as src"));
        }
        // The priority group selects ns-3's queue; aiccsim sends all data at nic.data_priority,
        // so it is read only to keep our place in the stream. The destination port goes into
        // ns-3's ECMP hash (`switch.ecmp_ns3`), as a 16-bit field of the packet.
        f.integer("priority_group")?;
        let (pl, dport) = f.integer("dport")?;
        let dport = u16::try_from(dport)
            .map_err(|_| f.err(pl, "dport", format!("{dport} does not fit a 16-bit UDP port (0 to 65535)")))?;
        dports.push(dport);
        let (sl, size) = f.integer("size")?;
        if size == 0 {
            return Err(f.err(sl, "size", "a flow must carry at least 1 byte"));
        }
        let (tl, start) = f.take("start_time")?;
        let start = decimal(start, 12)
            .map(SimTime)
            .ok_or_else(|| f.err(tl, "start_time", format!("'{start}' is not a time in seconds, e.g. 2.000001")))?;
        if start < previous {
            return Err(f.err(
                tl,
                "start_time",
                format!("{start} is before the previous flow's {previous}; ns-3 needs flows in ascending start time"),
            ));
        }
        previous = start;
        flow_list.push(FlowSpec {
            src,
            dst,
            size: ByteSize(size),
            start,
            collective: None,
            after: Vec::new(),
            after_acked: Vec::new(),
            stop: None,
            connection: None,
        });
    }
    if let Some(line) = f.rest() {
        warnings
            .push(format!("{flows_origin}:{line}: ignored: ns-3 reads only the {flow_num} flows announced on line 1"));
    }
    if flow_list.is_empty() {
        return Err(f.err(1, "flow count", "no flows; aiccsim needs at least one"));
    }
    Ok((flow_list, dports))
}

impl Ns3Import {
    /// Adds the settings of ns-3's configuration file `text` (`mix/config.txt`; `origin` names
    /// it in errors and warnings) to the twin.
    pub fn configure(&mut self, text: &str, origin: &str) -> Result<(), ConfigError> {
        let mut notes = Vec::new();
        let config = Ns3Config::parse(text, origin)?;
        let twin = config.twin(self, &mut notes);
        self.warnings.extend(notes);
        let twin = twin?;
        self.twin.settings.extend(twin.settings);
        self.twin.cc = twin.cc;
        self.twin.events.extend(twin.events);
        Ok(())
    }

    /// An error of the written scenario that a link of the topology file causes, moved to that
    /// link's line: a rate floor above a NIC's speed (`cc.min_rate`) is the slowest host
    /// link's. Other errors are left as they are.
    pub fn blame_links(&self, e: ConfigError) -> ConfigError {
        if e.key != "cc.min_rate" {
            return e;
        }
        let is_host = |name: &str| name.starts_with('h');
        let links = self.topology.links.iter().zip(&self.link_origins);
        let slowest = links.filter(|(l, _)| is_host(&l.a) || is_host(&l.b)).min_by_key(|(l, _)| l.bandwidth);
        match slowest {
            Some((link, origin)) => ConfigError {
                file: origin.clone(),
                key: "rate".into(),
                message: format!(
                    "{} between {} and {}: {} (the algorithm's cc.min_rate)",
                    link.bandwidth, link.a, link.b, e.message
                ),
            },
            None => e,
        }
    }

    /// A scenario file: `base` (TOML text, may be empty) with its `[topology]` and `[workload]`
    /// replaced by the imported ones, headed by comments that give the node mapping.
    pub fn scenario_toml(&self, base: &str, base_origin: &str) -> Result<String, ConfigError> {
        let mut table: toml::Table = base.parse().map_err(|e: toml::de::Error| ConfigError {
            file: base_origin.to_string(),
            key: String::new(),
            message: e.message().to_string(),
        })?;
        let topology = TopologyConfig::Custom(self.topology.clone());
        let workload = WorkloadConfig::Flows(FlowList { flows: self.flows.clone() });
        let to_value = |v: Result<toml::Value, toml::ser::Error>| {
            v.map_err(|e| ConfigError { file: base_origin.to_string(), key: String::new(), message: e.to_string() })
        };
        table.insert("topology".into(), to_value(toml::Value::try_from(topology))?);
        table.insert("workload".into(), to_value(toml::Value::try_from(workload))?);
        self.apply_twin(&mut table, base_origin)?;
        let body = toml::to_string(&table).map_err(|e| ConfigError {
            file: base_origin.to_string(),
            key: String::new(),
            message: e.to_string(),
        })?;
        Ok(format!("{}{body}", self.mapping_comment()))
    }

    /// The twin's settings over the base's: a key both give takes ns-3's value; the base's
    /// `[cc]` is kept only for the keys ns-3's file leaves to it, and only for the same algorithm.
    fn apply_twin(&self, table: &mut toml::Table, base_origin: &str) -> Result<(), ConfigError> {
        let clash = |key: &str| ConfigError {
            file: base_origin.to_string(),
            key: key.to_string(),
            message: "must be a table to take the imported settings under it".into(),
        };
        for s in &self.twin.settings {
            let mut path: Vec<&str> = s.key.split('.').collect();
            let last = path.pop().unwrap_or(s.key);
            let mut at = &mut *table;
            for (i, part) in path.iter().enumerate() {
                let entry = at.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
                at = entry.as_table_mut().ok_or_else(|| clash(&path[..=i].join(".")))?;
            }
            at.insert(last.to_string(), s.value.clone());
        }
        if let Some(cc) = &self.twin.cc {
            let mut merged = match table.get("cc").and_then(|c| c.as_table()) {
                Some(base) if base.get("algorithm") == cc.get("algorithm") => base.clone(),
                _ => toml::Table::new(),
            };
            merged.extend(cc.iter().map(|(k, v)| (k.clone(), v.clone())));
            table.insert("cc".into(), toml::Value::Table(merged));
        }
        if !self.twin.events.is_empty() {
            let events = table.entry("events").or_insert_with(|| toml::Value::Array(Vec::new()));
            let events = events.as_array_mut().ok_or_else(|| clash("events"))?;
            for e in &self.twin.events {
                let v = toml::Value::try_from(e).map_err(|e| ConfigError {
                    file: base_origin.to_string(),
                    key: "events".into(),
                    message: e.to_string(),
                })?;
                events.push(v);
            }
        }
        Ok(())
    }

    /// The node mapping as TOML comments, consecutive ids folded into ranges.
    pub fn mapping_comment(&self) -> String {
        format!(
            "# Imported from ns-3 (HPCC) topology and flow files.\n# hosts: {}\n# switches: {}\n",
            mapping("h", &self.host_ids),
            mapping("s", &self.switch_ids)
        )
    }
}

/// "h0..h3 = ns-3 0..3, h4 = ns-3 9": each run of consecutive ns-3 ids as one range.
pub fn mapping(prefix: &str, ids: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            format!("{prefix}{i} = ns-3 {}", ids[i])
        } else {
            format!("{prefix}{i}..{prefix}{j} = ns-3 {}..{}", ids[i], ids[j])
        });
        i = j + 1;
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// A non-negative decimal ("2", "2.000001", "1e-6") times 10^`shift`, rounded to a whole number;
/// done on the digits so that "2.000001" seconds is exactly 2 000 001 000 000 ps.
fn decimal(s: &str, shift: i32) -> Option<u64> {
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let mantissa = mantissa.strip_prefix('+').unwrap_or(mantissa);
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let mut value: u128 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
    let power = shift.checked_add(exp)?.checked_sub(frac.len() as i32)?;
    if power >= 0 {
        for _ in 0..power {
            value = value.checked_mul(10)?;
        }
    } else {
        let div = 10u128.checked_pow(power.unsigned_abs())?;
        value = (value + div / 2) / div;
    }
    u64::try_from(value).ok()
}

fn split_unit(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | 'e' | 'E'))).unwrap_or(s.len());
    // "1e" could be a number with an exponent or a unit starting with e; ns-3 units never do.
    s.split_at(end)
}

/// An ns-3 `DataRate` string: "100Gbps", "25Gb/s", "12.5GBps" (bytes), "1000000bps".
fn parse_rate(s: &str) -> Result<Bandwidth, String> {
    let (num, unit) = split_unit(s);
    let (prefix, bits) = if let Some(p) = unit.strip_suffix("bps").or_else(|| unit.strip_suffix("b/s")) {
        (p, 0)
    } else if let Some(p) = unit.strip_suffix("Bps").or_else(|| unit.strip_suffix("B/s")) {
        (p, 3)
    } else {
        return Err(format!("'{s}': expected a rate such as 100Gbps or 25Gb/s"));
    };
    let (scale, shift) = match prefix {
        "" => (1u64, 0),
        "k" | "K" => (1, 3),
        "M" => (1, 6),
        "G" => (1, 9),
        "T" => (1, 12),
        "Ki" => (1 << 10, 0),
        "Mi" => (1 << 20, 0),
        "Gi" => (1 << 30, 0),
        _ => return Err(format!("'{s}': unknown prefix '{prefix}'")),
    };
    let v = decimal(num, shift)
        .and_then(|v| v.checked_mul(scale << bits))
        .ok_or_else(|| format!("'{s}': expected a rate such as 100Gbps"))?;
    // `decimal` rounds to whole bits per second: "0.6bps" would become 1 bps.
    match decimal(num, shift + 6).and_then(|micro| micro.checked_mul(scale << bits)) {
        Some(0) => Err(format!("'{s}': a link must have a positive rate")),
        Some(micro) if micro < 1_000_000 => {
            Err(format!("'{s}': below 1 bps; aiccsim counts rates in whole bits per second"))
        }
        _ => Ok(Bandwidth(v)),
    }
}

/// An ns-3 `Time` string: "0.001ms", "1us", "1000ns"; a bare number is seconds, as in ns-3.
fn parse_delay(s: &str) -> Result<SimTime, String> {
    let (num, unit) = split_unit(s);
    let shift = match unit {
        "" | "s" => 12,
        "ms" => 9,
        "us" => 6,
        "ns" => 3,
        "ps" => 0,
        _ => return Err(format!("'{s}': expected a delay such as 1us, 1000ns or 0.001ms")),
    };
    decimal(num, shift).map(SimTime).ok_or_else(|| format!("'{s}': expected a delay such as 1us"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_read_exactly() {
        assert_eq!(decimal("2.000001", 12), Some(2_000_001_000_000));
        assert_eq!(decimal("2", 12), Some(2_000_000_000_000));
        assert_eq!(decimal("1e-6", 12), Some(1_000_000));
        assert_eq!(decimal("x", 12), None);
        assert_eq!(decimal("-1", 12), None);
        assert_eq!(parse_rate("100Gbps").unwrap(), Bandwidth::from_gbps(100));
        assert_eq!(parse_rate("25Gb/s").unwrap(), Bandwidth::from_gbps(25));
        assert_eq!(parse_rate("1GBps").unwrap(), Bandwidth::from_gbps(8));
        assert!(parse_rate("100Gbs").is_err());
        assert!(parse_rate("0Gbps").is_err());
        assert_eq!(parse_delay("0.001ms").unwrap(), SimTime::from_us(1));
        assert_eq!(parse_delay("1000ns").unwrap(), SimTime::from_us(1));
        assert!(parse_delay("1min").is_err());
    }

    #[test]
    fn switches_anywhere_in_the_numbering() {
        let topo = "5 2 4\n0 3\n1 0 100Gbps 1us 0\n2 0 100Gbps 1us 0\n3 0 100Gbps 1us 0\n4 3 100Gbps 1us 0\n";
        let flows = "1\n4 1 3 100 1000 2.5\n";
        let i = import(topo, "t", flows, "f").unwrap();
        assert_eq!(i.host_ids, vec![1, 2, 4]);
        assert_eq!(i.switch_ids, vec![0, 3]);
        assert_eq!((i.flows[0].src, i.flows[0].dst), (2, 0));
        assert_eq!(i.topology.links[3].a, "h2");
        assert_eq!(mapping("h", &i.host_ids), "h0..h1 = ns-3 1..2, h2 = ns-3 4");
    }

    #[test]
    fn destination_ports_go_to_ns3s_hash_as_16_bit_fields() {
        let topo = "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n";
        let value = |i: &Ns3Import, key: &str| i.twin.settings.iter().find(|s| s.key == key).map(|s| s.value.clone());
        let same = import(topo, "t", "2\n0 1 3 4791 1000 2\n1 0 3 4791 1000 2\n", "f").unwrap();
        assert_eq!(same.dports, vec![4791, 4791]);
        assert_eq!(value(&same, "switch.routing"), Some("ecmp_ns3".into()));
        assert_eq!(value(&same, "switch.ecmp_ns3.dport"), Some(4791.into()));
        assert_eq!(value(&same, "switch.ecmp_ns3.host_ids"), None, "ns-3's numbering is aiccsim's");
        assert!(same.warnings.is_empty(), "{:?}", same.warnings);
        let mixed = import(topo, "t", "3\n0 1 3 7 1000 2\n1 0 3 100 1000 2\n0 1 3 100 1 2\n", "f").unwrap();
        assert_eq!(value(&mixed, "switch.ecmp_ns3.dport"), Some(100.into()), "the most common");
        assert!(
            mixed.warnings.iter().any(|w| w.starts_with("dport:") && w.contains("2 of the 3")),
            "{:?}",
            mixed.warnings
        );
        let e = import(topo, "t", "1\n0 1 3 65536 1000 2\n", "f").unwrap_err();
        assert_eq!((e.file.as_str(), e.key.as_str()), ("f:2", "dport"));
    }

    #[test]
    fn absurd_node_count_is_an_error_not_an_allocation() {
        let e = import("4000000000 0 0\n", "t", "1\n0 1 3 100 1 0\n", "f").unwrap_err();
        assert_eq!((e.file.as_str(), e.key.as_str()), ("t:1", "node_num"));
    }
}
