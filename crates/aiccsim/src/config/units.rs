//! Quantities written with their unit in scenario files: "100Gbps", "1us", "32MB".
//!
//! Decimal prefixes mean powers of ten (1 KB = 1000 B, 1 Gbps = 1e9 bit/s), as link speeds and
//! NIC datasheets use them; binary sizes are written KiB, MiB, GiB. A bare number is rejected:
//! a scenario that says `buffer = 32` is ambiguous, and we would rather say so than guess.

use crate::time::{format_bytes, Bandwidth, SimTime};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// A byte count from a scenario file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct ByteSize(pub u64);

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_bytes(self.0))
    }
}

/// Splits "12.5Gbps" into (12.5, "Gbps"); the number may have a sign, a decimal point and `_`
/// separators (no exponent: "1e3" would read as 1 with the unit "e3", which is then rejected).
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || c == '.' || c == '_' || ((c == '-' || c == '+') && i == 0)))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let num: f64 = num.replace('_', "").parse().ok()?;
    Some((num, unit.trim()))
}

fn scaled(s: &str, what: &str, units: &[(&str, f64)], example: &str) -> Result<u64, String> {
    let Some((num, unit)) = split_number(s) else {
        return Err(format!("invalid {what} '{s}': expected a number followed by a unit, e.g. \"{example}\""));
    };
    let Some(&(_, scale)) = units.iter().find(|(u, _)| *u == unit) else {
        let names: Vec<&str> = units.iter().map(|(u, _)| *u).collect();
        return Err(format!(
            "invalid {what} '{s}': unknown unit '{unit}' (use one of {}), e.g. \"{example}\"",
            names.join(", ")
        ));
    };
    if !num.is_finite() || num < 0.0 {
        return Err(format!("invalid {what} '{s}': must not be negative, e.g. \"{example}\""));
    }
    let v = num * scale;
    if v >= u64::MAX as f64 {
        return Err(format!("invalid {what} '{s}': too large to represent"));
    }
    Ok(v.round() as u64)
}

pub fn parse_bandwidth(s: &str) -> Result<Bandwidth, String> {
    let units =
        [("bps", 1.0), ("Kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9), ("Tbps", 1e12), ("Mb/s", 1e6), ("Gb/s", 1e9)];
    let v = scaled(s, "bandwidth", &units, "100Gbps")?;
    if v == 0 {
        return Err(format!("invalid bandwidth '{s}': must be positive, e.g. \"100Gbps\""));
    }
    Ok(Bandwidth(v))
}

pub fn parse_time(s: &str) -> Result<SimTime, String> {
    let units = [("ps", 1.0), ("ns", 1e3), ("us", 1e6), ("ms", 1e9), ("s", 1e12)];
    scaled(s, "time", &units, "1us").map(SimTime)
}

pub fn parse_bytes(s: &str) -> Result<ByteSize, String> {
    let units = [
        ("B", 1.0),
        ("KB", 1e3),
        ("MB", 1e6),
        ("GB", 1e9),
        ("TB", 1e12),
        ("KiB", 1024.0),
        ("MiB", 1048576.0),
        ("GiB", 1073741824.0),
    ];
    scaled(s, "size", &units, "32MB").map(ByteSize)
}

struct UnitVisitor<T> {
    what: &'static str,
    parse: fn(&str) -> Result<T, String>,
}

impl<T> Visitor<'_> for UnitVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a {} as a string with its unit", self.what)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Err(E::custom(format!("a bare number ({v}) has no unit: write the {} as a string with a unit", self.what)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        self.visit_i64(v as i64)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Err(E::custom(format!("a bare number ({v}) has no unit: write the {} as a string with a unit", self.what)))
    }
}

macro_rules! unit_serde {
    ($ty:ty, $what:literal, $parse:path) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(UnitVisitor { what: $what, parse: $parse })
            }
        }
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }
    };
}

unit_serde!(Bandwidth, "bandwidth (e.g. \"100Gbps\")", parse_bandwidth);
unit_serde!(SimTime, "time (e.g. \"1us\")", parse_time);
unit_serde!(ByteSize, "size (e.g. \"32MB\")", parse_bytes);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_bandwidth("100Gbps").unwrap(), Bandwidth::from_gbps(100));
        assert_eq!(parse_bandwidth("20Mbps").unwrap(), Bandwidth(20_000_000));
        assert_eq!(parse_bandwidth("12.5Gbps").unwrap(), Bandwidth(12_500_000_000));
        assert_eq!(parse_time("1us").unwrap(), SimTime::from_us(1));
        assert_eq!(parse_time("500ns").unwrap(), SimTime::from_ns(500));
        assert_eq!(parse_time("0.5us").unwrap(), SimTime::from_ns(500));
        assert_eq!(parse_bytes("32MB").unwrap(), ByteSize(32_000_000));
        assert_eq!(parse_bytes("1KiB").unwrap(), ByteSize(1024));
        assert_eq!(parse_bytes("1_000B").unwrap(), ByteSize(1000));
    }

    #[test]
    fn rejects_bad_values() {
        assert!(parse_bandwidth("-100Gbps").unwrap_err().contains("negative"));
        assert!(parse_bandwidth("0Gbps").unwrap_err().contains("positive"));
        assert!(parse_bandwidth("100Gbs").unwrap_err().contains("unknown unit"));
        assert!(parse_time("fast").is_err());
        assert!(parse_bytes("99999999999TB").unwrap_err().contains("too large"));
    }
}
