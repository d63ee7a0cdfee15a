//! The registry: every built-in algorithm, named once. The one list (`registry!` in `cc/mod.rs`)
//! declares each algorithm's module and makes the `[cc]`
//! section's enum ([`CcConfig`], with its `algorithm = "..."` tag and aliases), the enums of
//! sender halves ([`Cc`]) and of receiver halves ([`Receiver`], for the algorithms that name one;
//! the others' receivers only echo), both statically dispatched on the per-packet path, the one
//! match that
//! reaches each algorithm's [`Algorithm`] implementation, and [`CcConfig::all_defaults`], which
//! `aiccsim algorithms`, the tests and the docs check iterate over.

use super::{Algorithm, CcConfig, DcqcnConfig};

/// Expands the list of algorithms; invoked once, in `cc/mod.rs`, so that each `$module` is the
/// file `cc/$module.rs`.
macro_rules! registry {
    ($(
        $(#[$doc:meta])*
        $module:ident: $name:literal $(| $alias:literal)* => $variant:ident($config:ident, $sender:ident $(, $receiver:ident)?),
    )+) => {
        $( pub mod $module; pub use $module::{$config, $sender $(, $receiver)?}; )+

        /// Algorithm choice and parameters, as written under `[cc]` in a scenario.
        #[derive(Clone, Debug)]
        pub enum CcConfig {
            $( $(#[$doc])* $variant($config), )+
            /// One a front end registered (`external.rs`): an algorithm written in Python.
            External($crate::cc::external::ExternalConfig),
        }

        impl Serialize for CcConfig {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                #[derive(Serialize)]
                #[serde(tag = "algorithm")]
                enum Tagged<'a> {
                    $( #[serde(rename = $name)] $variant(&'a $config), )+
                }
                match self {
                    $( CcConfig::$variant(c) => Tagged::$variant(c).serialize(s), )+
                    CcConfig::External(e) => e.serialize(s),
                }
            }
        }

        // As `tagged_enum!` makes it, with the algorithm's `preset` put under the keys given.
        impl<'de> serde::Deserialize<'de> for CcConfig {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let mut table = <toml::Table as serde::Deserialize>::deserialize(d)?;
                let mut names = vec![$( $name, $( $alias, )* )+];
                names.extend($crate::cc::external::names());
                let tag = $crate::cc::registry::take_algorithm::<D::Error>(&mut table, &names)?;
                match tag.as_str() {
                    $( $name $( | $alias )* => {
                        let table = $crate::cc::registry::with_preset::<D::Error>(&<$config>::default(), table)?;
                        $crate::tagged_enum::variant::<$config, D::Error>(table).map(CcConfig::$variant)
                    } )+
                    external => match $crate::cc::external::ExternalConfig::build(external, table) {
                        Some(Ok(cfg)) => Ok(CcConfig::External(cfg)),
                        Some(Err((key, message))) => Err($crate::tagged_enum::at_key::<D::Error>(&key, message)),
                        None => unreachable!("take_tag checked the tag"),
                    },
                }
            }
        }

        impl CcConfig {
            /// The algorithm behind the settings.
            pub fn as_algorithm(&self) -> &dyn Algorithm {
                match self {
                    $( CcConfig::$variant(c) => c, )+
                    CcConfig::External(e) => e.algorithm(),
                }
            }

            /// Every built-in algorithm with its default parameters.
            pub fn all_defaults() -> Vec<CcConfig> {
                vec![$( CcConfig::$variant(<$config>::default()), )+]
            }
        }

        /// A sender half: the built-ins statically dispatched, or a user's own.
        pub enum Cc {
            $( $variant($sender), )+
            /// A user-supplied algorithm (Rust API only).
            Custom(Box<dyn CongestionControl + Send>),
        }

        macro_rules! dispatch {
            ($self_:ident, $cc:ident => $e:expr) => {
                match $self_ {
                    $( Cc::$variant($cc) => $e, )+
                    Cc::Custom($cc) => $e,
                }
            };
        }

        impl CongestionControl for Cc {
            fn on_start(&mut self, cx: &mut CcContext) {
                dispatch!(self, c => c.on_start(cx))
            }
            #[inline]
            fn on_ack(&mut self, ack: &AckInfo<'_>, cx: &mut CcContext) {
                dispatch!(self, c => c.on_ack(ack, cx))
            }
            #[inline]
            fn on_send(&mut self, bytes: u64, cx: &mut CcContext) {
                dispatch!(self, c => c.on_send(bytes, cx))
            }
            fn on_event(&mut self, ev: CcEvent, cx: &mut CcContext) {
                dispatch!(self, c => c.on_event(ev, cx))
            }
            fn on_timer(&mut self, slot: usize, cx: &mut CcContext) {
                dispatch!(self, c => c.on_timer(slot, cx))
            }
            #[inline]
            fn rate(&self) -> f64 {
                dispatch!(self, c => c.rate())
            }
            // Asked for every packet a host may send (`window_open`): out of line, its call
            // cost 1% of S1's instructions once the enum's arms grew (BENCHMARKS, session 20).
            #[inline(always)]
            fn window(&self) -> Option<u64> {
                dispatch!(self, c => c.window())
            }
            fn metrics(&self, report: &mut dyn FnMut(&str, f64)) {
                dispatch!(self, c => c.metrics(report))
            }
            fn steady_signal(&self) -> Option<f64> {
                dispatch!(self, c => c.steady_signal())
            }
            fn shift_clock(&mut self, by: SimTime) {
                dispatch!(self, c => c.shift_clock(by))
            }
        }

        /// A receiver half: an echo, a built-in's own (statically dispatched), or a user's own.
        pub enum Receiver {
            /// ACKs only (with the ECN echo and timestamp every ACK carries).
            Echo,
            $( $( $variant($receiver), )? )+
            /// A user-supplied receiver half (Rust API only).
            Custom(Box<dyn ReceiverCc + Send>),
        }

        impl ReceiverCc for Receiver {
            #[inline]
            fn on_data(&mut self, pkt: &DataArrival) -> ReceiverAction {
                match self {
                    Receiver::Echo => ReceiverAction::default(),
                    $( $( Receiver::$variant(r) => <$receiver as ReceiverCc>::on_data(r, pkt), )? )+
                    Receiver::Custom(r) => r.on_data(pkt),
                }
            }
            fn shift_clock(&mut self, by: SimTime) {
                match self {
                    Receiver::Echo => {}
                    $( $( Receiver::$variant(r) => <$receiver as ReceiverCc>::shift_clock(r, by), )? )+
                    Receiver::Custom(r) => r.shift_clock(by),
                }
            }
        }
    };
}

/// The `[cc]` keys with the algorithm's `preset` (if one is named) filled in under them: the
/// preset's values, then the keys the scenario gives.
pub(crate) fn with_preset<E: serde::de::Error>(
    algorithm: &dyn Algorithm,
    mut table: toml::Table,
) -> Result<toml::Table, E> {
    let Some(named) = table.remove("preset") else { return Ok(table) };
    let known = algorithm.presets();
    let listed = || match known {
        [] => format!("{} has no presets", algorithm.name()),
        names => format!("{}'s presets are {}", algorithm.name(), names.join(", ")),
    };
    let name = named
        .as_str()
        .ok_or_else(|| crate::tagged_enum::at_key::<E>("preset", format!("must be a string ({})", listed())))?;
    let mut merged = algorithm
        .preset_table(name)
        .ok_or_else(|| crate::tagged_enum::at_key::<E>("preset", format!("unknown preset `{name}`: {}", listed())))?;
    merged.extend(table);
    Ok(merged)
}

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig::Dcqcn(DcqcnConfig::default())
    }
}

impl CcConfig {
    /// The `algorithm = "..."` value (the first name, for aliased algorithms).
    pub fn name(&self) -> &'static str {
        self.as_algorithm().name()
    }
}

/// What a Python class is named by, for the errors that list the algorithms: the standalone
/// binary has no `python` factory registered (it hands such scenarios to the Python package),
/// yet it is one of the names a user may write.
const PYTHON_HINT: &str = "python (a class of your own: class = \"module:Class\", docs/cc/programmable.md)";

/// Takes `algorithm` out of a `[cc]` table, checked against `known` (every name and alias this
/// process can build); an unknown name lists them, `python` always among them.
pub(crate) fn take_algorithm<E: serde::de::Error>(table: &mut toml::Table, known: &[&str]) -> Result<String, E> {
    let mut listed: Vec<&str> = known.iter().copied().filter(|n| *n != "python").collect();
    listed.push(PYTHON_HINT);
    let listed = listed.join(", ");
    match table.get("algorithm") {
        Some(toml::Value::String(s)) if s == "python" && !known.contains(&"python") => {
            Err(crate::tagged_enum::at_key::<E>(
                "algorithm",
                "`python` is built by the Python package: run the scenario with `python -m aiccsim` or \
                 aiccsim.run (the `aiccsim` command hands it over itself), after `make python` or `pip install .`"
                    .into(),
            ))
        }
        Some(toml::Value::String(s)) if !known.contains(&s.as_str()) => Err(crate::tagged_enum::at_key::<E>(
            "algorithm",
            format!("unknown variant `{s}`, expected one of {listed}"),
        )),
        None => Err(E::custom(format!("missing field `algorithm` (one of {listed})"))),
        _ => crate::tagged_enum::take_tag(table, "algorithm", known),
    }
}
