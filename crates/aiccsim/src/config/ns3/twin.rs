//! The rest of an exact twin of an HPCC ns-3 run, beyond its topology and flows: the constants
//! of ns-3's code (the switch MMU's reserve, headroom, dynamic alpha and XON offset, where
//! switches queue ACKs, the NACK interval, the ECMP hash and its order of next hops) and the
//! settings of its configuration file (`mix/config*.txt`, read by `simulation/scratch/third.cc`:
//! CC_MODE and each algorithm's constants, ECN maps, buffer size, packet size, ...).
//! docs/ns3.md has the table of keys: what each becomes, and why the few that have no aiccsim
//! equivalent do not.
//!
//! Like ns-3, the file is read as whitespace-separated tokens: a key, then its value (three for
//! LINK_DOWN, a count and that many pairs for the *_MAP keys). A key given twice takes its last
//! value, as in ns-3. A key ns-3 does not read is warned about; what follows it up to the next
//! key is skipped, as ns-3 (which reads it as keys it does not know) skips it.

use super::{decimal, parse_rate, Ns3Import, Tokens};
use crate::config::events::{LinkAction, LinkEvent};
use crate::config::ConfigError;
use crate::time::{Bandwidth, ByteSize, SimTime};
use std::collections::BTreeMap;

/// How many values follow a key.
#[derive(Clone, Copy)]
enum Arity {
    One,
    Three,
    /// A count n, then n pairs (rate in bits/s, value).
    Map,
}

/// Every key `third.cc` reads, with its number of values.
const KEYS: &[(&str, Arity)] = &[
    ("ENABLE_QCN", Arity::One),
    ("USE_DYNAMIC_PFC_THRESHOLD", Arity::One),
    ("CLAMP_TARGET_RATE", Arity::One),
    ("PAUSE_TIME", Arity::One),
    ("DATA_RATE", Arity::One),
    ("LINK_DELAY", Arity::One),
    ("PACKET_PAYLOAD_SIZE", Arity::One),
    ("L2_CHUNK_SIZE", Arity::One),
    ("L2_ACK_INTERVAL", Arity::One),
    ("L2_BACK_TO_ZERO", Arity::One),
    ("TOPOLOGY_FILE", Arity::One),
    ("FLOW_FILE", Arity::One),
    ("TRACE_FILE", Arity::One),
    ("TRACE_OUTPUT_FILE", Arity::One),
    ("SIMULATOR_STOP_TIME", Arity::One),
    ("ALPHA_RESUME_INTERVAL", Arity::One),
    ("RP_TIMER", Arity::One),
    ("EWMA_GAIN", Arity::One),
    ("FAST_RECOVERY_TIMES", Arity::One),
    ("RATE_AI", Arity::One),
    ("RATE_HAI", Arity::One),
    ("ERROR_RATE_PER_LINK", Arity::One),
    ("CC_MODE", Arity::One),
    ("RATE_DECREASE_INTERVAL", Arity::One),
    ("MIN_RATE", Arity::One),
    ("FCT_OUTPUT_FILE", Arity::One),
    ("HAS_WIN", Arity::One),
    ("GLOBAL_T", Arity::One),
    ("MI_THRESH", Arity::One),
    ("VAR_WIN", Arity::One),
    ("FAST_REACT", Arity::One),
    ("U_TARGET", Arity::One),
    ("INT_MULTI", Arity::One),
    ("RATE_BOUND", Arity::One),
    ("ACK_HIGH_PRIO", Arity::One),
    ("DCTCP_RATE_AI", Arity::One),
    ("PFC_OUTPUT_FILE", Arity::One),
    ("LINK_DOWN", Arity::Three),
    ("ENABLE_TRACE", Arity::One),
    ("KMAX_MAP", Arity::Map),
    ("KMIN_MAP", Arity::Map),
    ("PMAX_MAP", Arity::Map),
    ("BUFFER_SIZE", Arity::One),
    ("QLEN_MON_FILE", Arity::One),
    ("QLEN_MON_START", Arity::One),
    ("QLEN_MON_END", Arity::One),
    ("MULTI_RATE", Arity::One),
    ("SAMPLE_FEEDBACK", Arity::One),
    ("PINT_LOG_BASE", Arity::One),
    ("PINT_PROB", Arity::One),
];

/// The switch MMU's constants (`switch-mmu.cc`): bytes reserved to each ingress queue before
/// the shared pool, and how far below the threshold the shared use must fall before RESUME.
const MMU_RESERVE: u64 = 4 * 1024;
const MMU_RESUME_OFFSET: u64 = 3 * 1024;
/// `third.cc` sets `pfc_a_shift` to 3 on every switch port: XOFF at 1/8 of the free buffer.
const MMU_ALPHA: f64 = 0.125;
/// `rdma-hw.cc`'s "NACK Generation Interval" (500 us), which `third.cc` leaves as it is.
const NACK_INTERVAL_US: u64 = 500;
/// A data packet's headers besides the payload and INT (`custom-header.cc`
/// `GetStaticWholeHeaderSize`): PPP 14 (`ppp-header.cc`), IPv4 20, UDP 8, SeqTs 6 (pg, seq).
const DATA_HEADER: u64 = 14 + 20 + 8 + 6;
/// An ACK or NACK (`rdma-hw.cc` `ReceiveUdp`): PPP 14, IPv4 20, `qbbHeader` 12 (ports, flags,
/// pg, seq) and the INT header, padded to at least 60 B.
const ACK_HEADER: u64 = 14 + 20 + 12;
const ACK_MIN: u64 = 60;
/// HPCC's INT header (`int-header.h`, mode NORMAL): 5 hop records of 8 B and a 2 B hop count,
/// whatever the path's length.
const INT_HOPS: u64 = 5;
const INT_HOP_BYTES: u64 = 8;
const INT_BASE_BYTES: u64 = 2;
/// TIMELY's (mode TS): one 8 B timestamp.
const TS_BYTES: u64 = 8;
/// DCQCN's notification point (`rdma-hw.cc` `ReceiveUdp`): the ACK of every ECN-marked data
/// packet carries the CNP flag (`if (ecnbits) seqh.SetCnp()`), with no interval between two, and
/// the sender reacts to each (`ReceiveAck`, `cnp_received_mlx`). aiccsim's `cnp_interval` 0: a
/// CNP for every marked packet.
const CNP_INTERVAL: SimTime = SimTime::ZERO;

/// One setting of the written scenario: its dotted key and value.
#[derive(Clone, Debug)]
pub struct Setting {
    pub key: &'static str,
    pub value: toml::Value,
}

fn setting<T: serde::Serialize>(key: &'static str, value: T) -> Setting {
    // Every type given here (numbers, strings, aiccsim's units) has a TOML form.
    let value = toml::Value::try_from(value).unwrap_or_else(|e| panic!("{key}: {e}"));
    Setting { key, value }
}

/// What the twin adds to the scenario, beyond the topology and flows.
#[derive(Clone, Debug, Default)]
pub struct Twin {
    pub settings: Vec<Setting>,
    /// The `[cc]` table the configuration file's CC_MODE and constants give.
    pub cc: Option<toml::Table>,
    /// LINK_DOWN as a link failure.
    pub events: Vec<LinkEvent>,
}

/// A switch port: the speed and delay of its link.
struct Port {
    bandwidth: Bandwidth,
    delay: SimTime,
}

fn switch_ports(import: &Ns3Import) -> Vec<Port> {
    let is_switch = |n: &str| n.starts_with('s');
    let mut ports = Vec::new();
    for l in &import.topology.links {
        for end in [&l.a, &l.b] {
            if is_switch(end) {
                ports.push(Port { bandwidth: l.bandwidth, delay: l.delay });
            }
        }
    }
    ports
}

/// The NIC speed ns-3 takes (`get_nic_rate`): that of the first host's link.
fn nic_rate(import: &Ns3Import) -> Bandwidth {
    let links = &import.topology.links;
    links.iter().find(|l| l.a == "h0" || l.b == "h0").map_or(Bandwidth::from_gbps(100), |l| l.bandwidth)
}

/// ns-3's headroom of a switch port (`third.cc`): three times the bytes its link holds one way,
/// in ns-3's integer arithmetic (delay in nanoseconds).
fn headroom(p: &Port) -> u64 {
    let delay_ns = p.delay.0 / 1000;
    (u128::from(p.bandwidth.0) * u128::from(delay_ns) / 8 / 1_000_000_000 * 3) as u64
}

/// The constants of ns-3's code, which hold whatever its configuration file says: the switch
/// MMU, control packets queued behind data at switches, the NACK interval, the ECMP hash.
pub fn code_constants(import: &Ns3Import, warnings: &mut Vec<String>) -> Vec<Setting> {
    let ports = switch_ports(import);
    let nic = nic_rate(import);
    let mut settings = vec![
        setting("switch.pfc.enabled", true),
        setting("switch.pfc.reserve", ByteSize(MMU_RESERVE)),
        setting("switch.pfc.xon_delta", ByteSize(MMU_RESUME_OFFSET)),
        setting("switch.pfc.dynamic_alpha", MMU_ALPHA),
        setting("switch.control_priority", "data"),
        setting("nic.nack_interval", SimTime::from_us(NACK_INTERVAL_US)),
        // Packet sizes of CC_MODE 1 (third.cc's default; the configuration file may change
        // them): no INT header.
        setting("nic.header", ByteSize(DATA_HEADER)),
        setting("nic.ack_size", ByteSize(ACK_MIN)),
    ];
    settings.extend(routing(import, warnings));
    let rooms: std::collections::BTreeSet<u64> = ports.iter().map(headroom).collect();
    if let Some(&largest) = rooms.last() {
        if rooms.len() > 1 {
            let smallest = rooms.first().copied().unwrap_or(largest);
            warnings.push(format!(
                "headroom: ns-3 gives each switch port 3 x its link's rate x delay / 8 ({smallest} to {largest} B here); aiccsim has one headroom for every port: wrote the largest, {largest} B"
            ));
        }
        settings.push(setting("switch.pfc.headroom", ByteSize(largest)));
    }
    if let Some(fast) = ports.iter().map(|p| p.bandwidth).filter(|&b| b > nic).max() {
        warnings.push(format!(
            "dynamic_alpha: ns-3 doubles the PFC alpha of switch ports faster than the NIC ({fast} vs {nic}) for each doubling of speed; aiccsim has one alpha (1/8) for every port"
        ));
    }
    settings
}

/// ns-3's ECMP (`topology/ecmp_ns3.rs`): its hash, seeds and order of next hops, with the node ids
/// where they are not aiccsim's numbering (hosts first), and the flows' destination port.
fn routing(import: &Ns3Import, warnings: &mut Vec<String>) -> Vec<Setting> {
    let hosts = import.host_ids.len() as u32;
    let mut settings = vec![setting("switch.routing", "ecmp_ns3")];
    let in_order = import.host_ids.iter().copied().eq(0..hosts)
        && import.switch_ids.iter().copied().eq(hosts..hosts + import.switch_ids.len() as u32);
    if !in_order {
        settings.push(setting("switch.ecmp_ns3.host_ids", import.host_ids.clone()));
        settings.push(setting("switch.ecmp_ns3.switch_ids", import.switch_ids.clone()));
    }
    // The most common port (the first of those, on a tie); ns-3's traffic generator writes 100.
    let mut counts = BTreeMap::new();
    for &p in &import.dports {
        *counts.entry(p).or_insert(0usize) += 1;
    }
    let most = counts.values().copied().max().unwrap_or(0);
    let dport = counts.iter().find(|&(_, &n)| n == most).map_or(100, |(&p, _)| p);
    if most < import.dports.len() {
        warnings.push(format!(
            "dport: ns-3 hashes each flow's destination port into its path; aiccsim gives every flow one ({dport}, that of {most} of the {} flows), so the paths of the others may differ from ns-3's",
            import.dports.len()
        ));
    }
    settings.push(setting("switch.ecmp_ns3.dport", dport));
    settings
}

/// A parsed configuration file: each key's line and values.
pub struct Ns3Config<'a> {
    origin: String,
    keys: BTreeMap<&'static str, (usize, Vec<&'a str>)>,
    /// Tokens that are no key ns-3 reads: their line and the warning.
    unknown: Vec<(usize, String)>,
}

impl<'a> Ns3Config<'a> {
    /// Reads `text` (origin: its path, for errors and warnings).
    pub fn parse(text: &'a str, origin: &'a str) -> Result<Self, ConfigError> {
        let mut t = Tokens::new(origin, text);
        let mut keys = BTreeMap::new();
        let mut unknown = Vec::new();
        while let Some(&(line, key)) = t.items.get(t.next) {
            t.next += 1;
            let Some(&(name, arity)) = KEYS.iter().find(|(k, _)| *k == key) else {
                unknown
                    .push((line, format!("{origin}:{line}: {key}: not a key ns-3 reads; ignored up to the next key")));
                while t.items.get(t.next).is_some_and(|&(_, k)| !KEYS.iter().any(|(n, _)| *n == k)) {
                    t.next += 1;
                }
                continue;
            };
            let mut values = Vec::new();
            let count = match arity {
                Arity::One => 1,
                Arity::Three => 3,
                Arity::Map => {
                    let (_, n) = t.integer(name)?;
                    values.push(t.items[t.next - 1].1);
                    2 * n
                }
            };
            for _ in 0..count {
                values.push(t.take(name)?.1);
            }
            keys.insert(name, (line, values));
        }
        Ok(Ns3Config { origin: origin.to_string(), keys, unknown })
    }

    fn err(&self, key: &str, message: impl Into<String>) -> ConfigError {
        let line = self.keys.get(key).map_or(1, |k| k.0);
        ConfigError { file: format!("{}:{line}", self.origin), key: key.to_string(), message: message.into() }
    }

    /// The key's value as written, or ns-3's default (`third.cc`) when absent.
    fn raw(&self, key: &str, default: &'a str) -> &'a str {
        self.keys.get(key).map_or(default, |(_, v)| v[0])
    }

    fn number<T: std::str::FromStr>(&self, key: &str, default: &'a str) -> Result<T, ConfigError> {
        let v = self.raw(key, default);
        v.parse().map_err(|_| self.err(key, format!("'{v}' is not a number")))
    }

    fn flag(&self, key: &str, default: &'a str) -> Result<bool, ConfigError> {
        Ok(self.number::<u64>(key, default)? != 0)
    }

    fn rate(&self, key: &str, default: &'a str) -> Result<Bandwidth, ConfigError> {
        parse_rate(self.raw(key, default)).map_err(|m| self.err(key, m))
    }

    /// A time in microseconds, as `rdma-hw.cc` reads its intervals (`MicroSeconds(double)`).
    fn micros(&self, key: &str, default: &'a str) -> Result<SimTime, ConfigError> {
        let v = self.raw(key, default);
        match decimal(v, 6) {
            Some(ps) if ps > 0 => Ok(SimTime(ps)),
            _ => Err(self.err(key, format!("'{v}' is not a positive number of microseconds"))),
        }
    }

    /// A key `third.cc` leaves undefined or unusable when absent (an empty rate, an
    /// uninitialised timer): the algorithm of CC_MODE needs it given.
    fn required(&self, key: &str) -> Result<(), ConfigError> {
        match self.keys.contains_key(key) {
            true => Ok(()),
            false => Err(self.err(key, "missing: the algorithm of CC_MODE uses it and ns-3 has no usable default")),
        }
    }

    /// A `*_MAP` key: port speed (bits/s) to value.
    fn map(&self, key: &str) -> Result<BTreeMap<u64, &'a str>, ConfigError> {
        let Some((_, v)) = self.keys.get(key) else {
            return Err(self.err(key, "missing: ns-3 needs a value for every switch port speed"));
        };
        let mut out = BTreeMap::new();
        for pair in v[1..].chunks(2) {
            let rate = pair[0].parse().map_err(|_| self.err(key, format!("'{}' is not a rate in bits/s", pair[0])))?;
            out.insert(rate, pair[1]);
        }
        Ok(out)
    }

    /// The twin's settings, `[cc]` and events from this file; what has no aiccsim equivalent
    /// goes to `warnings`, one line per key.
    pub fn twin(&self, import: &Ns3Import, warnings: &mut Vec<String>) -> Result<Twin, ConfigError> {
        // In the file's order, whatever order they are found in.
        let mut found = self.unknown.clone();
        let twin = self.twin_noting(import, &mut found);
        found.sort_by_key(|f| f.0);
        warnings.extend(found.into_iter().map(|f| f.1));
        twin
    }

    fn twin_noting(&self, import: &Ns3Import, warnings: &mut Vec<(usize, String)>) -> Result<Twin, ConfigError> {
        let mut twin = Twin::default();
        let mut warn = |key: &str, message: String| {
            let line = self.keys.get(key).map_or(1, |k| k.0);
            warnings.push((line, format!("{}:{line}: {key}: {message}", self.origin)));
        };
        let error_rate: f64 = self.number("ERROR_RATE_PER_LINK", "0")?;
        if error_rate != 0.0 {
            return Err(self.err(
                "ERROR_RATE_PER_LINK",
                format!("{error_rate}: aiccsim has no random packet loss on links; only 0 can be imported"),
            ));
        }
        let s = &mut twin.settings;
        s.push(setting("switch.buffer", ByteSize(self.number::<u64>("BUFFER_SIZE", "16")? * 1024 * 1024)));
        s.push(setting("nic.mtu", ByteSize(self.number("PACKET_PAYLOAD_SIZE", "1000")?)));
        let stop = self.raw("SIMULATOR_STOP_TIME", "3.01");
        let stop = decimal(stop, 12)
            .ok_or_else(|| self.err("SIMULATOR_STOP_TIME", format!("'{stop}' is not a time in seconds")))?;
        s.push(setting("simulation.stop_time", SimTime(stop)));
        self.ecn(import, s, &mut warn)?;
        self.transport(s, &mut warn)?;
        let (cc, windowed, int) = self.cc(&mut warn)?;
        twin.cc = Some(cc);
        // ns-3 sizes data packets and ACKs with the INT header of CC_MODE (`ns3_int`);
        // aiccsim adds its algorithm's own (`aiccsim_int`) to nic.header and nic.ack_size.
        let s = &mut twin.settings;
        s.push(setting("nic.header", ByteSize(DATA_HEADER + int.ns3 - int.aiccsim)));
        s.push(setting("nic.ack_size", ByteSize((ACK_HEADER + int.ns3).max(ACK_MIN) - int.aiccsim)));
        let has_win = self.flag("HAS_WIN", "1")?;
        if has_win != windowed {
            let what = if windowed { "a window" } else { "no window" };
            warn("HAS_WIN", format!("{}: aiccsim's algorithm of this CC_MODE has {what}", u8::from(has_win)));
        }
        if has_win && !self.flag("VAR_WIN", "0")? {
            warn("VAR_WIN", "0: aiccsim's windows follow the rate (ns-3's VAR_WIN 1)".into());
        }
        // The base RTT is T of HPCC's utilisation and sizes windows; DCQCN and TIMELY without a
        // window do not read it.
        if (has_win || windowed) && self.flag("GLOBAL_T", "1")? {
            warn(
                "GLOBAL_T",
                "1: ns-3 gives every flow the fabric's largest base RTT and BDP; aiccsim gives each flow its own (equal on a fabric whose host pairs are all as far apart)".into(),
            );
        }
        if !self.flag("RATE_BOUND", "1")? {
            warn("RATE_BOUND", "0: aiccsim always paces at the algorithm's rate".into());
        }
        if !self.flag("ACK_HIGH_PRIO", "0")? {
            warn(
                "ACK_HIGH_PRIO",
                "0: ns-3's hosts send ACKs at the data priority, paused with it; aiccsim's hosts send them at the top priority".into(),
            );
        }
        if self.raw("PAUSE_TIME", "5") == "0" {
            warn("PAUSE_TIME", "0: a PAUSE of 0 resumes in ns-3; aiccsim's PAUSE holds until RESUME".into());
        }
        twin.events = self.link_down(import)?;
        Ok(twin)
    }

    /// ENABLE_QCN and the ECN maps: aiccsim gives kmin and kmax for one port speed (the NIC's)
    /// and scales them linearly with port speed, as the HPCC study's maps do.
    fn ecn(
        &self,
        import: &Ns3Import,
        s: &mut Vec<Setting>,
        warn: &mut impl FnMut(&str, String),
    ) -> Result<(), ConfigError> {
        s.push(setting("switch.ecn.enabled", self.flag("ENABLE_QCN", "1")?));
        let nic = nic_rate(import);
        let speeds: std::collections::BTreeSet<Bandwidth> = switch_ports(import).iter().map(|p| p.bandwidth).collect();
        let kilobytes = |key: &str, v: &str| -> Result<u128, ConfigError> {
            v.parse::<u128>().map(|k| k * 1000).map_err(|_| self.err(key, format!("'{v}' is not a whole number of KB")))
        };
        for key in ["KMIN_MAP", "KMAX_MAP", "PMAX_MAP"] {
            let map = self.map(key)?;
            let at = |b: Bandwidth| {
                map.get(&b.0).copied().ok_or_else(|| {
                    self.err(key, format!("no value for {b}, the speed of switch ports here (ns-3 stops: \"must set {} for each link speed\")", key[..4].to_lowercase()))
                })
            };
            let reference = at(nic)?;
            for &b in &speeds {
                let v = at(b)?;
                let scales = match key {
                    "PMAX_MAP" => v.parse::<f64>().ok() == reference.parse::<f64>().ok(),
                    _ => kilobytes(key, v)? * u128::from(nic.0) == kilobytes(key, reference)? * u128::from(b.0),
                };
                if !scales {
                    warn(key, format!("{v} at {b}: aiccsim scales the {nic} value ({reference}) with port speed; wrote the {nic} value"));
                    break;
                }
            }
            match key {
                "KMIN_MAP" => s.push(setting("switch.ecn.kmin", ByteSize(kilobytes(key, reference)? as u64))),
                "KMAX_MAP" => s.push(setting("switch.ecn.kmax", ByteSize(kilobytes(key, reference)? as u64))),
                _ => {
                    let p: f64 =
                        reference.parse().map_err(|_| self.err(key, format!("'{reference}' is not a probability")))?;
                    s.push(setting("switch.ecn.pmax", p));
                }
            }
        }
        s.push(setting("switch.ecn.reference_bandwidth", nic));
        s.push(setting("switch.ecn.mark_at", "dequeue"));
        Ok(())
    }

    /// ACKs and loss recovery: L2_ACK_INTERVAL is in bytes (an ACK each time the bytes received
    /// pass the next multiple); at most a packet's payload, that is an ACK per packet.
    fn transport(&self, s: &mut Vec<Setting>, warn: &mut impl FnMut(&str, String)) -> Result<(), ConfigError> {
        let interval: u64 = self.number("L2_ACK_INTERVAL", "0")?;
        let payload: u64 = self.number("PACKET_PAYLOAD_SIZE", "1000")?;
        if interval == 0 {
            return Err(self.err("L2_ACK_INTERVAL", "0: ns-3 then sends no ACKs, and its flows never finish"));
        }
        if interval <= payload {
            s.push(setting("nic.ack_every", 1u32));
        } else {
            warn(
                "L2_ACK_INTERVAL",
                format!("{interval} B: an ACK per {interval} bytes and per L2_CHUNK_SIZE; aiccsim ACKs every nic.ack_every packets: wrote an ACK per packet"),
            );
            s.push(setting("nic.ack_every", 1u32));
        }
        s.push(setting("nic.recovery", "go_back_n"));
        if self.flag("L2_BACK_TO_ZERO", "0")? {
            warn("L2_BACK_TO_ZERO", "1: ns-3 goes back to the start of the L2_CHUNK_SIZE chunk; aiccsim goes back to the first missing byte".into());
        }
        Ok(())
    }

    /// `[cc]` for CC_MODE, whether its algorithm keeps a window, and its INT header's size.
    fn cc(&self, warn: &mut impl FnMut(&str, String)) -> Result<(toml::Table, bool, IntBytes), ConfigError> {
        let mode: u32 = self.number("CC_MODE", "1")?;
        let mut cc = toml::Table::new();
        let mut put = |key: &str, v: Setting| {
            cc.insert(key.to_string(), v.value);
        };
        let min_rate = setting("", self.rate("MIN_RATE", "100Mb/s")?);
        let mut int = IntBytes { ns3: 0, aiccsim: 0 };
        let windowed = match mode {
            1 => {
                for key in ["RP_TIMER", "RATE_AI", "RATE_HAI"] {
                    self.required(key)?;
                }
                put("algorithm", setting("", "dcqcn"));
                put("preset", setting("", "hpcc_study"));
                put("g", setting("", self.number::<f64>("EWMA_GAIN", "0.0625")?));
                put("alpha_update_interval", setting("", self.micros("ALPHA_RESUME_INTERVAL", "55")?));
                put("rate_decrease_interval", setting("", self.micros("RATE_DECREASE_INTERVAL", "4")?));
                put("rate_increase_interval", setting("", self.micros("RP_TIMER", "")?));
                put("fast_recovery_stages", setting("", self.number::<u32>("FAST_RECOVERY_TIMES", "5")?));
                put("additive_increase", setting("", self.rate("RATE_AI", "")?));
                put("hyper_increase", setting("", self.rate("RATE_HAI", "")?));
                put("min_rate", min_rate);
                put("clamp_target_rate", setting("", self.flag("CLAMP_TARGET_RATE", "0")?));
                // The reaction point's constants of `rdma-hw.cc` (Mellanox mode), which no key
                // sets: written so that a base's DCQCN keys cannot change them.
                put("cnp_interval", setting("", CNP_INTERVAL));
                // cnp_received_mlx: m_alpha = 1 on the first CNP; "RateOnFirstCnp" 1.0, which
                // third.cc leaves; CheckRateDecreaseMlx: no floor on a cut but MIN_RATE, and the
                // target follows the rate once a timer increase came (m_rpTimeStage != 0).
                put("initial_alpha", setting("", 1.0));
                put("rate_on_first_cnp", setting("", 1.0));
                put("min_dec_factor", setting("", 0.0));
                put("clamp_target_after_timer_increase", setting("", true));
                false
            }
            3 | 10 => {
                self.required("RATE_AI")?;
                put("algorithm", setting("", if mode == 3 { "hpcc" } else { "hpcc_pint" }));
                put("eta", setting("", self.number::<f64>("U_TARGET", "0.95")?));
                put("max_stage", setting("", self.number::<u32>("MI_THRESH", "5")?));
                put("additive_increase", setting("", self.rate("RATE_AI", "")?));
                put("min_rate", min_rate);
                let fast_react = self.flag("FAST_REACT", "1")?;
                if mode == 3 {
                    put("fast_react", setting("", fast_react));
                    put("int_max_hops", setting("", INT_HOPS));
                    put("int_bytes_per_hop", setting("", INT_HOP_BYTES));
                    put("int_base_bytes", setting("", INT_BASE_BYTES));
                    let bytes = INT_BASE_BYTES + INT_HOPS * INT_HOP_BYTES;
                    int = IntBytes { ns3: bytes, aiccsim: bytes };
                } else {
                    if !fast_react {
                        warn("FAST_REACT", "0: aiccsim's HPCC-PINT reacts per ACK".into());
                    }
                    let base: f64 = self.number("PINT_LOG_BASE", "1.05")?;
                    if base.is_nan() || base <= 1.0 {
                        return Err(self.err("PINT_LOG_BASE", format!("{base}: must be above 1")));
                    }
                    put("log_base", setting("", base));
                    put("feedback_fraction", setting("", self.number::<f64>("PINT_PROB", "1.0")?));
                    put("header_bytes", setting("", pint_bytes(base)));
                    int = IntBytes { ns3: pint_bytes(base), aiccsim: pint_bytes(base) };
                }
                if self.flag("MULTI_RATE", "1")? {
                    warn("MULTI_RATE", "1: aiccsim's HPCC keeps one rate for the path, not one per hop".into());
                }
                if self.flag("SAMPLE_FEEDBACK", "0")? {
                    warn("SAMPLE_FEEDBACK", "1: aiccsim's HPCC reads INT from every ACK".into());
                }
                if self.raw("INT_MULTI", "1") != "1" {
                    warn(
                        "INT_MULTI",
                        format!(
                            "{}: ns-3 counts INT bytes in units of this; aiccsim's INT is exact",
                            self.raw("INT_MULTI", "1")
                        ),
                    );
                }
                true
            }
            7 => {
                for key in ["RATE_AI", "RATE_HAI"] {
                    self.required(key)?;
                }
                let (ai, hai) = (self.rate("RATE_AI", "")?, self.rate("RATE_HAI", "")?);
                put("algorithm", setting("", "timely"));
                put("preset", setting("", "hpcc_study"));
                put("additive_increase", setting("", ai));
                put("hai_factor", setting("", hai.0 as f64 / ai.0 as f64));
                put("min_rate", min_rate);
                // aiccsim's TIMELY times packets without carrying a timestamp.
                int = IntBytes { ns3: TS_BYTES, aiccsim: 0 };
                false
            }
            8 => {
                put("algorithm", setting("", "dctcp"));
                put("g", setting("", self.number::<f64>("EWMA_GAIN", "0.0625")?));
                put("additive_increase", setting("", self.rate("DCTCP_RATE_AI", "1000Mb/s")?));
                put("min_rate", min_rate);
                true
            }
            _ => {
                return Err(self.err(
                    "CC_MODE",
                    format!("{mode}: aiccsim imports 1 (DCQCN), 3 (HPCC), 7 (TIMELY), 8 (DCTCP) and 10 (HPCC-PINT)"),
                ))
            }
        };
        Ok((cc, windowed, int))
    }

    /// LINK_DOWN t a b (t > 0): the link between nodes a and b fails at 2 s + t us, and routes
    /// avoid it at once (ns-3 recomputes them in the same event).
    fn link_down(&self, import: &Ns3Import) -> Result<Vec<LinkEvent>, ConfigError> {
        let Some((_, v)) = self.keys.get("LINK_DOWN") else { return Ok(Vec::new()) };
        let numbers: Vec<u64> = v
            .iter()
            .map(|t| t.parse().map_err(|_| self.err("LINK_DOWN", format!("'{t}' is not a whole number"))))
            .collect::<Result<_, _>>()?;
        if numbers[0] == 0 {
            return Ok(Vec::new());
        }
        let name = |id: u64| -> Option<String> {
            let pos = |ids: &[u32]| ids.iter().position(|&n| u64::from(n) == id);
            pos(&import.host_ids).map(|i| format!("h{i}")).or_else(|| pos(&import.switch_ids).map(|i| format!("s{i}")))
        };
        let (a, b) = (name(numbers[1]), name(numbers[2]));
        let linked =
            |a: &str, b: &str| import.topology.links.iter().any(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a));
        match (a, b) {
            (Some(a), Some(b)) if linked(&a, &b) => Ok(vec![LinkEvent {
                at: SimTime(2_000_000_000_000 + numbers[0] * 1_000_000),
                link: [a, b],
                index: None,
                action: LinkAction::Fail,
                bandwidth: None,
                detection: Some(SimTime::ZERO),
            }]),
            _ => Err(self.err("LINK_DOWN", format!("no link between nodes {} and {}", numbers[1], numbers[2]))),
        }
    }
}

/// The INT header of a CC_MODE: its bytes in ns-3's packets (data and ACKs alike), and those
/// aiccsim's algorithm adds to `nic.header` and `nic.ack_size` itself.
struct IntBytes {
    ns3: u64,
    aiccsim: u64,
}

/// The bytes of ns-3's PINT field for `log_base` (`pint.cc`): enough bits for the encoded
/// utilisation of up to 512 concurrent flows.
fn pint_bytes(log_base: f64) -> u64 {
    let max_value = (512.0f64 * 512.0).ln() / log_base.ln();
    let bits = max_value.log2().ceil().max(0.0) as u64;
    if bits == 0 {
        0
    } else {
        (bits - 1) / 8 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pint_field_size_follows_the_log_base() {
        assert_eq!(pint_bytes(1.05), 1);
        assert_eq!(pint_bytes(1.01), 2);
    }

    #[test]
    fn headroom_is_three_one_way_link_loads() {
        let p = Port { bandwidth: Bandwidth::from_gbps(100), delay: SimTime::from_us(1) };
        assert_eq!(headroom(&p), 37_500);
    }

    #[test]
    fn the_dcqcn_twin_sends_a_cnp_for_every_marked_packet_as_ns3_does() {
        // rdma-hw.cc sets the CNP flag on the ACK of each marked packet: no interval, so the
        // twin's DCQCN must not pace CNPs. The `hpcc_study` preset agrees; the twin still writes
        // it, so that a base's `cnp_interval` cannot change it.
        let c = Ns3Config::parse("CC_MODE 1\nRP_TIMER 300\nRATE_AI 20Mb/s\nRATE_HAI 200Mb/s\n", "c").unwrap();
        let (mut cc, _, _) = c.cc(&mut |_: &str, _: String| {}).unwrap();
        assert_eq!(cc.remove("preset").and_then(|v| v.as_str().map(String::from)).as_deref(), Some("hpcc_study"));
        cc.remove("algorithm");
        let preset = crate::cc::DcqcnConfig::preset("hpcc_study").unwrap();
        assert_eq!(preset.cnp_interval, SimTime::ZERO);
        assert_eq!(cc.get("cnp_interval").map(|v| v.to_string()).as_deref(), Some("\"0ps\""));
        let twin: crate::cc::DcqcnConfig = toml::Value::Table(cc).try_into().unwrap();
        assert_eq!(twin.cnp_interval, SimTime::ZERO);
        // The reaction point's other code constants are ns-3's, whatever a base would say.
        assert_eq!((twin.initial_alpha, twin.rate_on_first_cnp, twin.min_dec_factor), (1.0, 1.0, 0.0));
        assert!(twin.clamp_target_after_timer_increase && !twin.clamp_target_rate);
    }

    #[test]
    fn unknown_keys_are_named_and_skipped_up_to_the_next_key() {
        let c = Ns3Config::parse("CC_MODE 3\nNO_SUCH_KEY 1 2\nU_TARGET 0.9\n", "c").unwrap();
        assert_eq!(c.unknown, [(2, "c:2: NO_SUCH_KEY: not a key ns-3 reads; ignored up to the next key".to_string())]);
        assert_eq!(c.raw("U_TARGET", ""), "0.9");
        assert_eq!(c.raw("CC_MODE", ""), "3");
    }
}
