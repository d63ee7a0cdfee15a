//! Structure-aware: the input picks a valid seed scenario and a few edits, each setting one of
//! its keys (every key, defaults written out) to a value at the edges of the types: counts near
//! 2^32, times and sizes near 2^64, NaN, another section's enum word, or nothing. Byte-level
//! mutation of TOML text seldom gets past the parser with a number that large, and the
//! overflows live there; the edited scenario goes through the same check as the text target.

#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use toml::{Table, Value};

const SEEDS: &[&str] = &[
    include_str!("../seeds/alg_none.toml"),
    include_str!("../seeds/alg_dcqcn.toml"),
    include_str!("../seeds/alg_dctcp.toml"),
    include_str!("../seeds/alg_timely.toml"),
    include_str!("../seeds/alg_hpcc.toml"),
    include_str!("../seeds/alg_hpcc_pint.toml"),
    include_str!("../seeds/alg_swift.toml"),
    include_str!("../seeds/alg_pc4.toml"),
    include_str!("../seeds/custom_flows.toml"),
    include_str!("../seeds/dumbbell_all_to_all.toml"),
    include_str!("../seeds/fat_tree_all_reduce.toml"),
    include_str!("../seeds/leaf_spine_permutation.toml"),
    include_str!("../seeds/star_training.toml"),
];

#[derive(Clone, Debug, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// A seed with every default written out, and the path of each of its values.
struct Seed {
    table: Table,
    paths: Vec<Vec<Seg>>,
}

fn seeds() -> &'static [Seed] {
    static SEEDS_RESOLVED: OnceLock<Vec<Seed>> = OnceLock::new();
    SEEDS_RESOLVED.get_or_init(|| {
        SEEDS
            .iter()
            .map(|text| {
                let resolved = aiccsim::Scenario::from_toml(text, "seed").expect("seeds are valid").to_toml();
                let table: Table = resolved.parse().expect("a resolved scenario is TOML");
                let mut paths = Vec::new();
                leaves(&Value::Table(table.clone()), &mut Vec::new(), &mut paths);
                Seed { table, paths }
            })
            .collect()
    })
}

fn leaves(v: &Value, at: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match v {
        Value::Table(t) => {
            for (k, v) in t {
                at.push(Seg::Key(k.clone()));
                leaves(v, at, out);
                at.pop();
            }
        }
        Value::Array(a) if a.iter().any(|x| x.is_table()) => {
            for (i, v) in a.iter().enumerate() {
                at.push(Seg::Index(i));
                leaves(v, at, out);
                at.pop();
            }
        }
        _ => out.push(at.clone()),
    }
}

#[derive(Arbitrary, Debug)]
enum NewValue {
    Int(IntPick),
    Float(FloatPick),
    Bool(bool),
    Quantity(NumPick, u8),
    Word(u8),
    List(Vec<IntPick>),
    Remove,
}

#[derive(Arbitrary, Debug)]
enum IntPick {
    Edge(u8),
    Any(i64),
}

#[derive(Arbitrary, Debug)]
enum FloatPick {
    Edge(u8),
    Any(f64),
}

#[derive(Arbitrary, Debug)]
enum NumPick {
    Edge(u8),
    Any(u64),
    Fraction(u32, u32),
}

const INT_EDGES: &[i64] = &[
    0,
    1,
    2,
    3,
    5,
    8,
    64,
    65,
    128,
    255,
    256,
    4096,
    65_536,
    1 << 20,
    (1 << 20) + 1,
    i32::MAX as i64,
    1 << 31,
    u32::MAX as i64,
    1 << 32,
    1 << 53,
    i64::MAX,
    -1,
    i64::MIN,
];
const FLOAT_EDGES: &[f64] =
    &[0.0, -0.0, 1.0, 0.5, 1e-9, 1e-300, 1e300, 64.0, 1.0000001, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0];
const NUM_EDGES: &[&str] = &[
    "0",
    "1",
    "0.5",
    "0.0001",
    "1000",
    "65536",
    "4294967295",
    "18446744",
    "18446744.07",
    "18446744073709549568",
    "9223372036854775807",
    "18000000",
    "-1",
];
const UNITS: &[&str] = &[
    "ps", "ns", "us", "ms", "s", "B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "bps", "Kbps", "Mbps", "Gbps",
    "Tbps",
];
const WORDS: &[&str] = &[
    "all",
    "1..=3",
    "0..4000000000",
    "0..0",
    "5..=4",
    "star",
    "dumbbell",
    "leaf_spine",
    "fat_tree",
    "custom",
    "flows",
    "incast",
    "all_to_all",
    "permutation",
    "all_reduce",
    "training",
    "none",
    "dcqcn",
    "dctcp",
    "timely",
    "hpcc",
    "hpcc_pint",
    "swift",
    "pc4",
    "ecmp",
    "spray",
    "adaptive",
    "enqueue",
    "dequeue",
    "direct",
    "ring",
    "pairwise",
    "observed",
    "controller",
    "gaussian",
    "uniform",
    "h0",
    "s0",
    "h4294967295",
    "s1",
    "",
];

impl NewValue {
    fn value(&self) -> Option<Value> {
        let pick = |p: &IntPick| match *p {
            IntPick::Edge(i) => INT_EDGES[i as usize % INT_EDGES.len()],
            IntPick::Any(v) => v,
        };
        Some(match self {
            NewValue::Int(p) => Value::Integer(pick(p)),
            NewValue::Float(FloatPick::Edge(i)) => Value::Float(FLOAT_EDGES[*i as usize % FLOAT_EDGES.len()]),
            NewValue::Float(FloatPick::Any(f)) => Value::Float(*f),
            NewValue::Bool(b) => Value::Boolean(*b),
            NewValue::Quantity(n, u) => {
                let num = match *n {
                    NumPick::Edge(i) => NUM_EDGES[i as usize % NUM_EDGES.len()].to_string(),
                    NumPick::Any(v) => v.to_string(),
                    NumPick::Fraction(a, b) => format!("{a}.{b}"),
                };
                Value::String(format!("{num}{}", UNITS[*u as usize % UNITS.len()]))
            }
            NewValue::Word(i) => Value::String(WORDS[*i as usize % WORDS.len()].to_string()),
            NewValue::List(v) => Value::Array(v.iter().take(8).map(|p| Value::Integer(pick(p))).collect()),
            NewValue::Remove => return None,
        })
    }
}

#[derive(Arbitrary, Debug)]
struct Edit {
    key: u16,
    value: NewValue,
}

#[derive(Arbitrary, Debug)]
struct Input {
    seed: u8,
    edits: Vec<Edit>,
}

fn set(v: &mut Value, path: &[Seg], value: Option<Value>) {
    match path {
        [Seg::Key(k)] => {
            if let Value::Table(t) = v {
                match value {
                    Some(x) => t.insert(k.clone(), x),
                    None => t.remove(k),
                };
            }
        }
        [Seg::Key(k), rest @ ..] => {
            if let Some(next) = v.as_table_mut().and_then(|t| t.get_mut(k)) {
                set(next, rest, value);
            }
        }
        [Seg::Index(i), rest @ ..] => {
            if let Some(next) = v.as_array_mut().and_then(|a| a.get_mut(*i)) {
                set(next, rest, value);
            }
        }
        [] => {}
    }
}

fuzz_target!(|input: Input| {
    let seeds = seeds();
    let seed = &seeds[input.seed as usize % seeds.len()];
    let mut scenario = Value::Table(seed.table.clone());
    for edit in input.edits.iter().take(4) {
        let path = &seed.paths[edit.key as usize % seed.paths.len()];
        set(&mut scenario, path, edit.value.value());
    }
    let Ok(text) = toml::to_string(&scenario) else { return };
    if aiccsim_fuzz::verbose() {
        eprintln!("{text}");
    }
    aiccsim_fuzz::check(&text);
});
