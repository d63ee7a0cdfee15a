//! Host sets: which hosts (or a job's ranks) a workload runs on, as a scenario writes them.

use serde::{Deserialize, Serialize};

/// A set of hosts: "all", a range "1..=16" / "0..8", or a list [1, 2, 5].
#[derive(Clone, Debug, PartialEq, Default)]
pub enum HostSet {
    #[default]
    All,
    Range {
        start: u32,
        end: u32,
    },
    List(Vec<u32>),
}

impl HostSet {
    /// The hosts in order; `hosts` is the number of hosts in the topology (for "all").
    pub fn expand(&self, hosts: u32) -> Vec<u32> {
        match self {
            HostSet::All => (0..hosts).collect(),
            HostSet::Range { start, end } => (*start..*end).collect(),
            HostSet::List(v) => v.clone(),
        }
    }

    /// How many hosts `expand` gives, without building the list.
    pub fn len(&self, hosts: u32) -> u64 {
        match self {
            HostSet::All => u64::from(hosts),
            HostSet::Range { start, end } => u64::from(end - start),
            HostSet::List(v) => v.len() as u64,
        }
    }

    /// The largest host number in the set, without building the list.
    pub fn largest(&self, hosts: u32) -> Option<u32> {
        match self {
            HostSet::All => hosts.checked_sub(1),
            HostSet::Range { end, .. } => Some(end - 1),
            HostSet::List(v) => v.iter().copied().max(),
        }
    }

    /// The members, checked against a set of `hosts` numbered from 0: each exists, none is
    /// listed twice. `noun` and `numbered` name them in the error ("host", "the topology has
    /// hosts": "host 9 does not exist (the topology has hosts 0 to 7)").
    pub fn members(&self, hosts: u32, noun: &str, numbered: &str) -> Result<Vec<u32>, String> {
        // Before expanding: "0..4000000000" would be 16 GB of host numbers.
        if let Some(top) = self.largest(hosts).filter(|&t| t >= hosts) {
            return Err(format!("{noun} {top} does not exist ({numbered} 0 to {})", hosts.saturating_sub(1)));
        }
        let v = self.expand(hosts);
        let mut sorted = v.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(format!("lists a {noun} twice"));
        }
        Ok(v)
    }

    fn parse(s: &str) -> Result<HostSet, String> {
        let s = s.trim();
        if s == "all" {
            return Ok(HostSet::All);
        }
        let bad = || {
            format!("invalid host set '{s}': write \"all\", a range like \"1..=16\" or \"0..8\", or a list [1, 2, 3]")
        };
        let (a, b, inclusive) = if let Some((a, b)) = s.split_once("..=") {
            (a, b, true)
        } else if let Some((a, b)) = s.split_once("..") {
            (a, b, false)
        } else {
            return Err(bad());
        };
        let a: u32 = a.trim().parse().map_err(|_| bad())?;
        let b: u32 = b.trim().parse().map_err(|_| bad())?;
        let end = if inclusive { b.checked_add(1).ok_or_else(bad)? } else { b };
        if end <= a {
            return Err(format!("invalid host set '{s}': the range is empty"));
        }
        Ok(HostSet::Range { start: a, end })
    }
}

impl<'de> Deserialize<'de> for HostSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            S(String),
            L(Vec<u32>),
        }
        match Raw::deserialize(d).map_err(|_| {
            serde::de::Error::custom("expected \"all\", a range like \"1..=16\", or a list of host numbers")
        })? {
            Raw::S(s) => HostSet::parse(&s).map_err(serde::de::Error::custom),
            Raw::L(v) => Ok(HostSet::List(v)),
        }
    }
}

impl Serialize for HostSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            HostSet::All => s.serialize_str("all"),
            HostSet::Range { start, end } => s.serialize_str(&format!("{start}..{end}")),
            HostSet::List(v) => v.serialize(s),
        }
    }
}
