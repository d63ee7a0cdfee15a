//! The registry: every workload kind, named once. The one list (`registry!` in `workload/mod.rs`)
//! declares each kind's module and makes the `[workload]` section's enum ([`WorkloadConfig`],
//! with its `kind = "..."` tag), the one match that reaches each kind's [`WorkloadKind`]
//! implementation, and [`WorkloadConfig::examples`], which the tests, docs/scenario.md and the
//! fuzz dictionary are checked against.
//!
//! [`WorkloadConfig`]: super::WorkloadConfig
//! [`WorkloadKind`]: super::WorkloadKind
//! [`WorkloadConfig::examples`]: super::WorkloadConfig::examples

/// Expands the list of kinds; invoked once, in `workload/mod.rs`, so that each `$module` is the
/// file `workload/$module.rs`, which holds the kind's settings `$config` (implementing
/// `WorkloadKind`) and its `EXAMPLE`.
macro_rules! registry {
    ($(
        $(#[$doc:meta])*
        $module:ident: $name:literal => $variant:ident($config:ident),
    )+) => {
        $( pub mod $module; pub use $module::$config; )+

        /// The traffic, as written under `[workload]` (or a job's `workload`) in a scenario.
        #[derive(Clone, Debug)]
        pub enum WorkloadConfig {
            $( $(#[$doc])* $variant($config), )+
        }

        impl serde::Serialize for WorkloadConfig {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                #[derive(serde::Serialize)]
                #[serde(tag = "kind")]
                enum Tagged<'a> {
                    $( #[serde(rename = $name)] $variant(&'a $config), )+
                }
                match self {
                    $( WorkloadConfig::$variant(w) => Tagged::$variant(w).serialize(s), )+
                }
            }
        }

        tagged_enum!(WorkloadConfig, "kind", { $( $name => $variant($config) ),+ });

        impl WorkloadConfig {
            /// The kind behind the settings.
            pub fn as_kind(&self) -> &dyn WorkloadKind {
                match self {
                    $( WorkloadConfig::$variant(w) => w, )+
                }
            }

            /// The kind behind the settings, to fill in what depends on the topology.
            pub fn as_kind_mut(&mut self) -> &mut dyn WorkloadKind {
                match self {
                    $( WorkloadConfig::$variant(w) => w, )+
                }
            }

            /// The `kind = "..."` value.
            pub fn name(&self) -> &'static str {
                match self {
                    $( WorkloadConfig::$variant(_) => $name, )+
                }
            }

            /// Every kind's name and example: a `[workload]` table that runs on five hosts.
            pub fn examples() -> Vec<(&'static str, &'static str)> {
                vec![$( ($name, $module::EXAMPLE), )+]
            }
        }
    };
}
