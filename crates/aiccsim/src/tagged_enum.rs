//! Sections chosen by a tag (`kind = "star"`, `algorithm = "dcqcn"`), deserialised so that an
//! error deep inside one still names its full key.
//!
//! serde's derived internally-tagged enums buffer the section and lose the path of an error
//! inside it ("workload: invalid host set" instead of "workload.senders: ..."). Here the section
//! is read as a TOML table, the tag is taken out, and the variant's own struct is deserialised
//! with its own path tracking; the inner path travels in the error message, between two
//! `PATH_MARK` characters, and [`join_path`] splices it onto the outer one.

use serde::de::{DeserializeOwned, Error};

const PATH_MARK: char = '\u{1f}';

/// Removes and returns the tag of a section, checking it against the known variants.
pub(crate) fn take_tag<E: Error>(table: &mut toml::Table, tag: &str, known: &[&str]) -> Result<String, E> {
    match table.remove(tag) {
        Some(toml::Value::String(s)) if known.contains(&s.as_str()) => Ok(s),
        Some(toml::Value::String(s)) => Err(E::custom(format!(
            "{PATH_MARK}{tag}{PATH_MARK}unknown variant `{s}`, expected one of {}",
            known.join(", ")
        ))),
        Some(other) => Err(E::custom(format!("{PATH_MARK}{tag}{PATH_MARK}must be a string, got {}", other.type_str()))),
        None => Err(E::custom(format!("missing field `{tag}` (one of {})", known.join(", ")))),
    }
}

/// An error at `key` inside the section being read.
pub(crate) fn at_key<E: Error>(key: &str, message: String) -> E {
    E::custom(format!("{PATH_MARK}{key}{PATH_MARK}{message}"))
}

/// Deserialises one variant's struct from the rest of the section.
pub(crate) fn variant<T: DeserializeOwned, E: Error>(table: toml::Table) -> Result<T, E> {
    serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." || path.is_empty() {
            E::custom(inner)
        } else {
            E::custom(format!("{PATH_MARK}{path}{PATH_MARK}{inner}"))
        }
    })
}

/// Splices an inner path carried in `message` onto `outer`: ("workload", "<inner>senders<>msg")
/// gives ("workload.senders", "msg"). Handles nesting.
pub(crate) fn join_path(outer: &str, message: &str) -> (String, String) {
    let mut key = outer.to_string();
    let mut rest = message;
    while let Some(start) = rest.find(PATH_MARK) {
        let after = &rest[start + 1..];
        let Some(end) = after.find(PATH_MARK) else {
            break;
        };
        let inner = &after[..end];
        key = if key.is_empty() { inner.to_string() } else { format!("{key}.{inner}") };
        rest = &after[end + 1..];
    }
    (key, rest.to_string())
}

/// Implements `Deserialize` for an enum of newtype variants selected by a tag key.
macro_rules! tagged_enum {
    ($enum:ident, $tag:literal, { $($name:literal => $variant:ident($ty:ty)),+ $(,)? }) => {
        impl<'de> serde::Deserialize<'de> for $enum {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let mut table = <toml::Table as serde::Deserialize>::deserialize(d)?;
                let tag = $crate::tagged_enum::take_tag::<D::Error>(&mut table, $tag, &[$($name),+])?;
                match tag.as_str() {
                    $($name => $crate::tagged_enum::variant::<$ty, D::Error>(table).map($enum::$variant),)+
                    _ => unreachable!("take_tag checked the tag"),
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_nested_paths() {
        let m = format!("{PATH_MARK}a.b{PATH_MARK}{PATH_MARK}c{PATH_MARK}bad");
        assert_eq!(join_path("x", &m), ("x.a.b.c".to_string(), "bad".to_string()));
        assert_eq!(join_path("x", "plain"), ("x".to_string(), "plain".to_string()));
    }
}
