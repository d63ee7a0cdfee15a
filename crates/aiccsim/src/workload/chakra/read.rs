//! Reading a Chakra trace from disk: which files make it (one per rank, `<prefix>.<rank>.et`, as
//! ASTRA-sim names them), and the messages of each file: a `GlobalMetadata`, then the `Node`s,
//! each preceded by its length as a varint (Chakra's `protolib.encodeMessage`, ASTRA-sim's
//! `ProtobufUtils`). Also the process groups' JSON file, in ASTRA-sim's
//! `--comm-group-configuration` form.

use super::schema::{GlobalMetadata, Node};
use prost::Message;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One rank's file, read.
pub struct RankFile {
    pub path: PathBuf,
    pub metadata: GlobalMetadata,
    pub nodes: Vec<Node>,
}

/// The files of a trace, rank 0 first. `path` is a folder holding `<prefix>.<rank>.et` files of
/// one prefix, or that prefix itself (`folder/prefix`, as ASTRA-sim's
/// `--workload-configuration` names a trace). Every rank from 0 to the largest must have its
/// file.
pub fn rank_files(path: &Path) -> Result<Vec<PathBuf>, String> {
    let (dir, wanted) = if path.is_dir() {
        (path.to_path_buf(), None)
    } else {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        match (path.parent(), name) {
            (Some(dir), Some(name)) if dir.as_os_str().is_empty() || dir.is_dir() => (dir.to_path_buf(), Some(name)),
            _ => {
                return Err(format!(
                    "{}: no such folder; name the folder of the trace's files (<prefix>.<rank>.et), or their prefix",
                    path.display()
                ))
            }
        }
    };
    let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: cannot read the folder: {e}", dir.display()))?;
    // prefix -> rank -> file
    let mut found: BTreeMap<String, BTreeMap<u64, PathBuf>> = BTreeMap::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((prefix, rank)) = split_name(&name) else { continue };
        if wanted.as_ref().is_some_and(|w| *w != prefix) {
            continue;
        }
        found.entry(prefix.to_string()).or_default().insert(rank, entry.path());
    }
    let shown = match &wanted {
        Some(w) => format!("{}/{w}.<rank>.et", dir.display()),
        None => format!("{}/<prefix>.<rank>.et", dir.display()),
    };
    let ranks = match found.len() {
        0 => return Err(format!("no trace files ({shown}): a Chakra trace has one file per rank, named <prefix>.<rank>.et")),
        1 => found.into_values().next().expect("one prefix"),
        _ => {
            let prefixes: Vec<String> = found.keys().map(|p| format!("{}", dir.join(p).display())).collect();
            return Err(format!(
                "{} holds the files of {} traces ({}); name one by its prefix, e.g. trace = \"{}\"",
                dir.display(),
                prefixes.len(),
                prefixes.join(", "),
                prefixes[0]
            ));
        }
    };
    let last = *ranks.keys().next_back().expect("at least one file");
    if let Some(missing) = (0..=last).find(|r| !ranks.contains_key(r)) {
        let any = ranks.values().next().expect("at least one file");
        let expected = any.with_file_name(format!("{}.{missing}.et", split_name(&file_name(any)).expect("matched").0));
        return Err(format!(
            "rank {missing} has no file ({} is missing): every rank from 0 to {last} needs its trace",
            expected.display()
        ));
    }
    Ok(ranks.into_values().collect())
}

/// `prefix.rank.et` split into its prefix and rank.
fn split_name(name: &str) -> Option<(&str, u64)> {
    let stem = name.strip_suffix(".et")?;
    let (prefix, rank) = stem.rsplit_once('.')?;
    if prefix.is_empty() || rank.is_empty() || !rank.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((prefix, rank.parse().ok()?))
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Reads one rank's file.
pub fn read_rank(path: &Path) -> Result<RankFile, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let (metadata, nodes) = decode(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(RankFile { path: path.to_path_buf(), metadata, nodes })
}

/// The messages of a trace file's bytes.
pub fn decode(bytes: &[u8]) -> Result<(GlobalMetadata, Vec<Node>), String> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Err("is gzip-compressed (Chakra's tools can write it so); decompress it first (gunzip)".into());
    }
    if bytes.is_empty() {
        return Err("is empty: a trace file starts with its GlobalMetadata message".into());
    }
    let mut at = 0usize;
    let metadata = next(bytes, &mut at, "the GlobalMetadata message")?;
    let metadata = GlobalMetadata::decode(metadata)
        .map_err(|e| format!("the GlobalMetadata message (at byte 0) does not decode: {e}; is this a Chakra trace?"))?;
    let mut nodes = Vec::new();
    while at < bytes.len() {
        let start = at;
        let what = format!("node message {} (the {} after the metadata)", nodes.len(), ordinal(nodes.len() + 1));
        let body = next(bytes, &mut at, &what)?;
        let node = Node::decode(body).map_err(|e| {
            let after = nodes.last().map_or(String::new(), |n: &Node| format!(", after node {}", n.id));
            format!("{what} at byte {start}{after} does not decode: {e}; the file is damaged, regenerate it")
        })?;
        nodes.push(node);
    }
    Ok((metadata, nodes))
}

/// The next length-prefixed message from `at`, moving `at` past it.
fn next<'a>(bytes: &'a [u8], at: &mut usize, what: &str) -> Result<&'a [u8], String> {
    let start = *at;
    let mut rest = &bytes[start..];
    let len = prost::encoding::decode_varint(&mut rest)
        .map_err(|_| format!("truncated: the length of {what} at byte {start} is cut off; the file was cut short, copy or regenerate it"))?;
    let body_start = bytes.len() - rest.len();
    let left = rest.len() as u64;
    if len > left {
        return Err(format!(
            "truncated: {what} at byte {start} announces {len} bytes, but the file ends {left} bytes later; the file was cut short, copy or regenerate it"
        ));
    }
    *at = body_start + len as usize;
    Ok(&bytes[body_start..*at])
}

/// "1st", "2nd", "3rd", "4th", ...
pub(super) fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, r) if r != 11 => "st",
        (2, r) if r != 12 => "nd",
        (3, r) if r != 13 => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The process groups of a JSON file as ASTRA-sim's `--comm-group-configuration` reads it: a
/// group's name (the `pg_name` of its nodes) and its ranks, `{"1": [0, 1], "2": [2, 3]}`.
pub fn comm_groups(path: &Path) -> Result<BTreeMap<String, Vec<u32>>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: {e}; write each process group's name and its ranks, e.g. {{\"1\": [0, 1], \"2\": [2, 3]}}",
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::chakra::write::encode_rank;

    #[test]
    fn file_names_split_into_prefix_and_rank() {
        assert_eq!(split_name("gpt.12.et"), Some(("gpt", 12)));
        assert_eq!(split_name("a.b.3.et"), Some(("a.b", 3)));
        assert_eq!(split_name("gpt.et"), None);
        assert_eq!(split_name(".3.et"), None);
        assert_eq!(split_name("gpt.x3.et"), None);
    }

    #[test]
    fn every_cut_of_a_file_is_reported_as_truncated() {
        let nodes = vec![Node { id: 1, name: "a".into(), ..Default::default() }, Node { id: 2, ..Default::default() }];
        let bytes = encode_rank(&GlobalMetadata { version: "0.0.4".into(), attr: vec![] }, &nodes);
        let (_, back) = decode(&bytes).unwrap();
        assert_eq!(back, nodes);
        // Cut inside a message: always a clear error. (A cut between two messages leaves a
        // shorter, whole file, which no reader can tell from a complete one.)
        let ends: Vec<usize> = {
            let mut at = 0;
            let mut ends = vec![];
            while at < bytes.len() {
                next(&bytes, &mut at, "m").unwrap();
                ends.push(at);
            }
            ends
        };
        for cut in 1..bytes.len() {
            let r = decode(&bytes[..cut]);
            if ends.contains(&cut) {
                assert!(r.is_ok(), "cut at {cut}");
            } else {
                let e = r.unwrap_err();
                assert!(e.starts_with("truncated:"), "cut at {cut}: {e}");
            }
        }
        assert!(decode(&[]).unwrap_err().contains("empty"));
        assert!(decode(&[0x1f, 0x8b, 8]).unwrap_err().contains("gunzip"));
    }

    #[test]
    fn ordinals() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101].iter().map(|&n| ordinal(n)).collect();
        assert_eq!(got, ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]);
    }
}
