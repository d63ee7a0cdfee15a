//! `simulation.fast_forward`: whether the run may skip the steady stretches of its flows
//! (`engine/fast_forward/`), and how steady is steady enough.

use serde::{Deserialize, Serialize};

/// The tolerance `fast_forward = true` means: every flow's delivery rate within 1% over the
/// windows that judge it steady.
pub const DEFAULT_TOLERANCE: f64 = 0.01;

/// The largest tolerance a scenario may ask for: beyond it "steady" would include the ramps
/// and oscillations fast-forward must not skip.
pub const MAX_TOLERANCE: f64 = 0.2;

/// Off (`false`, the default), on with the default tolerance (`true`), or on with a tolerance
/// (a fraction: `0.02` is 2%).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum FastForward {
    #[default]
    Off,
    On {
        tolerance: f64,
    },
}

impl FastForward {
    pub fn is_off(&self) -> bool {
        *self == FastForward::Off
    }

    /// The tolerance when on.
    pub fn tolerance(&self) -> Option<f64> {
        match self {
            FastForward::Off => None,
            FastForward::On { tolerance } => Some(*tolerance),
        }
    }

    /// On with the default tolerance.
    pub fn on() -> FastForward {
        FastForward::On { tolerance: DEFAULT_TOLERANCE }
    }

    /// The setting checked on its own: what is wrong with it, if anything.
    pub fn problem(&self) -> Option<String> {
        let tolerance = self.tolerance()?;
        (!(tolerance > 0.0 && tolerance <= MAX_TOLERANCE)).then(|| {
            format!(
                "a tolerance of {tolerance} is out of range: write a fraction above 0 and at most {MAX_TOLERANCE} (0.01 is 1%), or true for {DEFAULT_TOLERANCE}"
            )
        })
    }
}

/// What a scenario file writes: a switch or a tolerance.
#[derive(Deserialize)]
#[serde(untagged)]
enum Written {
    Switch(bool),
    Tolerance(f64),
}

impl<'de> Deserialize<'de> for FastForward {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Written::deserialize(d) {
            Ok(Written::Switch(false)) => Ok(FastForward::Off),
            Ok(Written::Switch(true)) => Ok(FastForward::on()),
            Ok(Written::Tolerance(tolerance)) => Ok(FastForward::On { tolerance }),
            Err(_) => {
                Err(serde::de::Error::custom("expected true, false or a tolerance (a fraction such as 0.01 for 1%)"))
            }
        }
    }
}

impl Serialize for FastForward {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            FastForward::Off => s.serialize_bool(false),
            FastForward::On { tolerance } => s.serialize_f64(*tolerance),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Serialize)]
    struct Holder {
        fast_forward: FastForward,
    }

    fn parse(text: &str) -> Result<FastForward, String> {
        toml::from_str::<Holder>(text).map(|h| h.fast_forward).map_err(|e| e.to_string())
    }

    #[test]
    fn a_switch_or_a_tolerance_and_nothing_else() {
        assert_eq!(parse("fast_forward = false"), Ok(FastForward::Off));
        assert_eq!(parse("fast_forward = true"), Ok(FastForward::On { tolerance: DEFAULT_TOLERANCE }));
        assert_eq!(parse("fast_forward = 0.02"), Ok(FastForward::On { tolerance: 0.02 }));
        let err = parse("fast_forward = \"yes\"").unwrap_err();
        assert!(err.contains("true, false or a tolerance"), "{err}");
        assert!(FastForward::On { tolerance: 0.5 }.problem().is_some());
        assert!(FastForward::On { tolerance: 0.0 }.problem().is_some());
        assert!(FastForward::On { tolerance: f64::NAN }.problem().is_some());
        assert!(FastForward::On { tolerance: 0.05 }.problem().is_none());
    }

    #[test]
    fn it_writes_back_what_it_reads() {
        for text in ["fast_forward = false", "fast_forward = true", "fast_forward = 0.03"] {
            let h: Holder = toml::from_str(text).unwrap();
            let again: Holder = toml::from_str(&toml::to_string(&h).unwrap()).unwrap();
            assert_eq!(again.fast_forward, h.fast_forward, "{text}");
        }
    }
}
