//! Simulated time, bandwidth and byte counts, and every conversion between them.
//!
//! Time is an integer number of picoseconds: one byte at 800 Gbps is 10 ps, so every link
//! speed we model serialises a byte in a whole number of picoseconds or close to it, and
//! integer time keeps runs bit-for-bit repeatable (no floating-point drift in the clock).
//!
//! In scenario files each quantity is written with its unit: "100Gbps", "1us", "32MB".
//!
//! Decimal prefixes mean powers of ten (1 KB = 1000 B, 1 Gbps = 1e9 bit/s), as link speeds and
//! NIC datasheets use them; binary sizes are written KiB, MiB, GiB. A bare number is rejected:
//! a scenario that says `buffer = 32` is ambiguous, and we would rather say so than guess.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time, or a duration, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_ps(ps: u64) -> Self {
        SimTime(ps)
    }
    pub const fn from_ns(ns: u64) -> Self {
        SimTime(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> Self {
        SimTime(us * 1_000_000)
    }
    pub const fn from_ms(ms: u64) -> Self {
        SimTime(ms * 1_000_000_000)
    }
    /// Seconds as a float, rounded to the nearest picosecond (for CC math that works in seconds).
    pub fn from_secs_f64(s: f64) -> Self {
        SimTime((s * 1e12).round().max(0.0) as u64)
    }
    pub const fn ps(self) -> u64 {
        self.0
    }
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e12
    }
    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
}

/// Sums saturate at [`SimTime::MAX`], which stands for "never": a timer, pacing gap or flow
/// start that lands past the end of representable time (about 213 days) is simply never
/// reached, and a run stops there (see `Simulation::run`). Scenario values may be that large
/// (an `rto` of "5000000s"), so an overflow here is input, not a bug to trap on.
impl Add for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}
impl AddAssign for SimTime {
    #[inline]
    fn add_assign(&mut self, rhs: SimTime) {
        *self = *self + rhs;
    }
}
impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 - rhs.0)
    }
}

impl fmt::Display for SimTime {
    /// The shortest exact unit: "1us", "2500ns", "7ps".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        for (unit, scale) in [("s", 1_000_000_000_000u64), ("ms", 1_000_000_000), ("us", 1_000_000), ("ns", 1_000)] {
            if ps >= scale && ps.is_multiple_of(scale) {
                return write!(f, "{}{}", ps / scale, unit);
            }
        }
        write!(f, "{}ps", ps)
    }
}

/// A link or sending rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bandwidth(pub u64);

impl Bandwidth {
    pub const fn from_gbps(g: u64) -> Self {
        Bandwidth(g * 1_000_000_000)
    }
    pub const fn bps(self) -> u64 {
        self.0
    }
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }
    /// Time to serialise `bytes` at this rate, rounded up to a whole picosecond.
    /// Computed per packet in 128-bit arithmetic, so odd rates do not accumulate a rounding error
    /// the way a truncated picoseconds-per-byte constant would. Saturates at `SimTime::MAX`
    /// (a whole flow at a few bits per second takes longer than the clock can count).
    #[inline]
    pub fn tx_time(self, bytes: u64) -> SimTime {
        let num = bytes as u128 * 8 * 1_000_000_000_000u128;
        let bps = self.0 as u128;
        SimTime(u64::try_from(num.div_ceil(bps)).unwrap_or(u64::MAX))
    }
    /// Bytes that cross a link of this rate in `t` (the bandwidth-delay product when `t` is a delay).
    pub fn bytes_in(self, t: SimTime) -> u64 {
        (self.0 as u128 * t.0 as u128 / 8 / 1_000_000_000_000u128) as u64
    }
}

impl fmt::Display for Bandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (unit, scale) in
            [("Tbps", 1_000_000_000_000u64), ("Gbps", 1_000_000_000), ("Mbps", 1_000_000), ("Kbps", 1_000)]
        {
            if b >= scale && b.is_multiple_of(scale) {
                return write!(f, "{}{}", b / scale, unit);
            }
        }
        write!(f, "{}bps", b)
    }
}

/// Time to send `bytes` at a floating-point rate in bits per second (the pacer's gap).
/// Rounded to the nearest picosecond; a rate of zero or below gives `SimTime::MAX`.
#[inline]
pub fn pacing_gap(bytes: u64, rate_bps: f64) -> SimTime {
    if rate_bps <= 0.0 || !rate_bps.is_finite() {
        return SimTime::MAX;
    }
    SimTime((bytes as f64 * 8e12 / rate_bps).round() as u64)
}

/// Formats a byte count in the shortest exact decimal unit ("10MB", "1500B").
pub fn format_bytes(b: u64) -> String {
    for (unit, scale) in [("GB", 1_000_000_000u64), ("MB", 1_000_000), ("KB", 1_000)] {
        if b >= scale && b.is_multiple_of(scale) {
            return format!("{}{}", b / scale, unit);
        }
    }
    format!("{}B", b)
}

/// A byte count from a scenario file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct ByteSize(pub u64);

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_bytes(self.0))
    }
}

/// A decimal number as written: `digits` / 10^`decimals`, exactly.
struct Decimal {
    negative: bool,
    digits: u128,
    decimals: u32,
}

/// Splits "12.5Gbps" into (12.5 as an exact decimal, "Gbps"); the number may have a sign, a
/// decimal point and `_` separators (no exponent: "1e3" would read as 1 with the unit "e3",
/// which is then rejected). None if there is no number, or more digits than 38.
fn split_number(s: &str) -> Option<(Decimal, &str)> {
    let s = s.trim();
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let end = body.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(body.len());
    let (num, unit) = body.split_at(end);
    let (whole, fraction) = num.split_once('.').unwrap_or((num, ""));
    if fraction.contains('.')
        || !(whole.chars().any(|c| c.is_ascii_digit()) || fraction.chars().any(|c| c.is_ascii_digit()))
    {
        return None;
    }
    // "12.5" is 125 / 10^1: every digit, the fraction's too, then as many decimals as it has.
    let mut digits = 0u128;
    for c in whole.chars().chain(fraction.chars()).filter(|c| *c != '_') {
        digits = digits.checked_mul(10)?.checked_add(u128::from(c.to_digit(10)?))?;
    }
    let decimals = fraction.chars().filter(char::is_ascii_digit).count() as u32;
    Some((Decimal { negative, digits, decimals }, unit.trim()))
}

/// `s` as a whole number of the base unit (ps, B, b/s): the number times the unit's `scale`,
/// exactly, or an error saying why not (negative, finer than the base unit, above 2^64 - 1).
fn scaled(s: &str, what: &str, units: &[(&str, u128)], base: &str, example: &str) -> Result<u64, String> {
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
    if num.negative && num.digits != 0 {
        return Err(format!("invalid {what} '{s}': must not be negative, e.g. \"{example}\""));
    }
    let too_large = || format!("invalid {what} '{s}': too large to represent (at most {} {base})", u64::MAX);
    let scaled = num.digits.checked_mul(scale).ok_or_else(too_large)?;
    let divisor = 10u128.checked_pow(num.decimals).ok_or_else(too_large)?;
    if scaled % divisor != 0 {
        return Err(format!("invalid {what} '{s}': not a whole number of {base}, the finest step aiccsim counts in"));
    }
    u64::try_from(scaled / divisor).map_err(|_| too_large())
}

pub fn parse_bandwidth(s: &str) -> Result<Bandwidth, String> {
    // Bits per second, and bytes per second ("GB/s": the way GPU interconnects are quoted).
    let units = [
        ("bps", 1),
        ("Kbps", 1_000),
        ("Mbps", 1_000_000),
        ("Gbps", 1_000_000_000),
        ("Tbps", 1_000_000_000_000),
        ("Mb/s", 1_000_000),
        ("Gb/s", 1_000_000_000),
        ("MB/s", 8_000_000),
        ("GB/s", 8_000_000_000),
        ("TB/s", 8_000_000_000_000),
    ];
    let v = scaled(s, "bandwidth", &units, "bit/s", "100Gbps")?;
    if v == 0 {
        return Err(format!("invalid bandwidth '{s}': must be positive, e.g. \"100Gbps\""));
    }
    Ok(Bandwidth(v))
}

pub fn parse_time(s: &str) -> Result<SimTime, String> {
    let units = [("ps", 1), ("ns", 1_000), ("us", 1_000_000), ("ms", 1_000_000_000), ("s", 1_000_000_000_000)];
    scaled(s, "time", &units, "ps", "1us").map(SimTime)
}

pub fn parse_bytes(s: &str) -> Result<ByteSize, String> {
    let units = [
        ("B", 1),
        ("KB", 1_000),
        ("MB", 1_000_000),
        ("GB", 1_000_000_000),
        ("TB", 1_000_000_000_000),
        ("KiB", 1 << 10),
        ("MiB", 1 << 20),
        ("GiB", 1 << 30),
    ];
    scaled(s, "size", &units, "bytes", "32MB").map(ByteSize)
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
    fn tx_time_is_exact_at_common_rates() {
        assert_eq!(Bandwidth::from_gbps(100).tx_time(1), SimTime(80));
        assert_eq!(Bandwidth::from_gbps(800).tx_time(1), SimTime(10));
        assert_eq!(Bandwidth::from_gbps(100).tx_time(1048), SimTime(83_840));
        assert_eq!(Bandwidth::from_gbps(200).tx_time(1048), SimTime(41_920));
    }

    #[test]
    fn tx_time_rounds_up_at_odd_rates() {
        // 3 bytes at 7 bps = 24/7 s = 3.428..e12 ps, rounded up.
        assert_eq!(Bandwidth(7).tx_time(3), SimTime(3_428_571_428_572));
    }

    #[test]
    fn sums_and_long_transmissions_saturate_at_never() {
        assert_eq!(SimTime(u64::MAX - 5) + SimTime(10), SimTime::MAX);
        let mut t = SimTime(u64::MAX - 5);
        t += SimTime(6);
        assert_eq!(t, SimTime::MAX);
        assert_eq!(Bandwidth(1).tx_time(u64::MAX), SimTime::MAX);
    }

    #[test]
    fn bdp() {
        assert_eq!(Bandwidth::from_gbps(100).bytes_in(SimTime::from_us(1)), 12_500);
    }

    #[test]
    fn display_round_trips_units() {
        assert_eq!(SimTime::from_us(1).to_string(), "1us");
        assert_eq!(SimTime::from_ns(2500).to_string(), "2500ns");
        assert_eq!(SimTime(7).to_string(), "7ps");
        assert_eq!(Bandwidth::from_gbps(100).to_string(), "100Gbps");
        assert_eq!(Bandwidth(1_500_000_000).to_string(), "1500Mbps");
        assert_eq!(format_bytes(10_000_000), "10MB");
    }

    #[test]
    fn pacing_gap_handles_zero_rate() {
        assert_eq!(pacing_gap(1000, 0.0), SimTime::MAX);
        assert_eq!(pacing_gap(1000, 8e9), SimTime::from_us(1));
    }

    #[test]
    fn parses_units() {
        assert_eq!(parse_bandwidth("100Gbps").unwrap(), Bandwidth::from_gbps(100));
        assert_eq!(parse_bandwidth("200GB/s").unwrap(), Bandwidth::from_gbps(1600), "bytes per second");
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
        assert!(parse_bytes("18446744073709551616B").unwrap_err().contains("too large"));
        assert!(parse_time("0.5ps").unwrap_err().contains("whole number of ps"));
        assert!(parse_bytes("1.0001KB").unwrap_err().contains("whole number of bytes"));
        assert!(parse_time("1.2.3us").is_err());
        assert!(parse_time("us").is_err());
        assert!(parse_time("1e3us").unwrap_err().contains("unknown unit 'e3us'"));
    }

    /// Every 64-bit value is reachable and read exactly: no detour through a float, which
    /// rounds above 2^53.
    #[test]
    fn large_quantities_are_exact() {
        assert_eq!(parse_bytes("9007199254740993B").unwrap(), ByteSize(9_007_199_254_740_993));
        assert_eq!(parse_time("18446744073709551615ps").unwrap(), SimTime(u64::MAX));
        assert_eq!(parse_time("18446744.073709551615s").unwrap(), SimTime(u64::MAX));
        assert_eq!(parse_bandwidth("1_000_000_000_000_000_001bps").unwrap(), Bandwidth(1_000_000_000_000_000_001));
        assert_eq!(parse_time("0.000001us").unwrap(), SimTime(1));
        assert_eq!(parse_bytes("-0B").unwrap(), ByteSize(0), "zero may carry a sign");
        assert_eq!(parse_bytes("+1.5KB").unwrap(), ByteSize(1500));
        assert_eq!(parse_bytes(".5KB").unwrap(), ByteSize(500));
    }
}
