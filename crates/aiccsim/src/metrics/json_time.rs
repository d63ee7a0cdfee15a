//! Times in `summary.json`: nanoseconds, exact to the picosecond.
//!
//! The engine counts time in whole picoseconds (`u64`). Written through a float, a time above
//! 2^53 ps (about 2.5 simulated hours) loses picoseconds and large values come out in exponent
//! notation ("1.8446744073709552e16"). So a time is written as a JSON number whose text is the
//! exact decimal: an integer when it is a whole number of nanoseconds ("1000"), else with the
//! digits it needs ("1234.5", "1234.567"); never an exponent. The same values as the CSV files'
//! `*_ns` columns, which always write three decimals.

use crate::time::SimTime;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

/// The exact decimal text of `t` in nanoseconds: "1000", "1234.5", "18446744073709551.615".
pub fn ns_text(t: SimTime) -> String {
    let (whole, ps) = (t.0 / 1000, t.0 % 1000);
    if ps == 0 {
        return whole.to_string();
    }
    let fraction = format!("{ps:03}");
    format!("{whole}.{}", fraction.trim_end_matches('0'))
}

/// Serialises a time as its exact number of nanoseconds (`#[serde(serialize_with = "ns")]`).
pub fn ns<S: Serializer>(t: &SimTime, s: S) -> Result<S::Ok, S::Error> {
    // A number token written verbatim: serde_json offers no other way to write a decimal that
    // no f64 holds.
    let raw = RawValue::from_string(ns_text(*t)).expect("a decimal number is valid JSON");
    raw.serialize(s)
}

/// [`ns`] for an optional time: `null` when absent.
pub fn opt_ns<S: Serializer>(t: &Option<SimTime>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => ns(t, s),
        None => s.serialize_none(),
    }
}

/// Summary statistics of a sample of times: the mean (rounded to the picosecond) and
/// nearest-rank percentiles. `summary.json` writes each in nanoseconds.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct TimeDistribution {
    pub count: usize,
    #[serde(serialize_with = "ns")]
    pub mean: SimTime,
    #[serde(serialize_with = "ns")]
    pub p50: SimTime,
    #[serde(serialize_with = "ns")]
    pub p90: SimTime,
    #[serde(serialize_with = "ns")]
    pub p99: SimTime,
    #[serde(serialize_with = "ns")]
    pub max: SimTime,
}

impl TimeDistribution {
    /// The distribution of `values` (exact: the percentiles are values of the sample).
    pub fn of(values: &[SimTime]) -> TimeDistribution {
        if values.is_empty() {
            return TimeDistribution::default();
        }
        let mut v = values.to_vec();
        v.sort_unstable();
        let pct = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        TimeDistribution {
            count: v.len(),
            mean: mean(v.iter().copied()).unwrap_or_default(),
            p50: pct(0.50),
            p90: pct(0.90),
            p99: pct(0.99),
            max: v[v.len() - 1],
        }
    }
}

/// The mean of some times, rounded to the nearest picosecond (summed in 128 bits: a sum of
/// 64-bit times cannot overflow it); `None` for none.
pub fn mean(times: impl Iterator<Item = SimTime>) -> Option<SimTime> {
    let (sum, n) = times.fold((0u128, 0u128), |(sum, n), t| (sum + t.0 as u128, n + 1));
    (n > 0).then(|| SimTime(((sum + n / 2) / n) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Times {
        #[serde(serialize_with = "ns")]
        t: SimTime,
        #[serde(serialize_with = "opt_ns")]
        o: Option<SimTime>,
    }

    fn json(t: u64, o: Option<u64>) -> String {
        serde_json::to_string(&Times { t: SimTime(t), o: o.map(SimTime) }).unwrap()
    }

    #[test]
    fn times_are_written_exactly_without_exponents() {
        assert_eq!(json(1_000_000, None), r#"{"t":1000,"o":null}"#);
        assert_eq!(json(1_234_500, Some(1_234_567)), r#"{"t":1234.5,"o":1234.567}"#);
        assert_eq!(json(7, Some(0)), r#"{"t":0.007,"o":0}"#);
        // Through an f64 this was 1.8446744073709552e16.
        assert_eq!(json(u64::MAX, None), r#"{"t":18446744073709551.615,"o":null}"#);
        assert_eq!(json(9_007_199_254_740_993_000, None), r#"{"t":9007199254740993,"o":null}"#);
    }

    #[test]
    fn pretty_printing_and_values_keep_the_numbers() {
        let t = Times { t: SimTime(u64::MAX), o: Some(SimTime(9_007_199_254_740_993_000)) };
        let pretty = serde_json::to_string_pretty(&t).unwrap();
        assert!(pretty.contains("18446744073709551.615") && pretty.contains("9007199254740993\n"), "{pretty}");
        let v = serde_json::to_value(&t).unwrap();
        assert_eq!(v["o"].as_u64(), Some(9_007_199_254_740_993));
    }

    #[test]
    fn distributions_are_exact_and_means_round_to_the_picosecond() {
        let v: Vec<SimTime> = (1..=100).map(SimTime).collect();
        let d = TimeDistribution::of(&v);
        assert_eq!((d.p50, d.p90, d.p99, d.max), (SimTime(50), SimTime(90), SimTime(99), SimTime(100)));
        assert_eq!(d.mean, SimTime(51), "50.5 ps rounds half up");
        assert_eq!(mean([SimTime(u64::MAX), SimTime(u64::MAX)].into_iter()), Some(SimTime(u64::MAX)));
        assert_eq!(mean(std::iter::empty()), None);
    }
}
