//! A sweep's plan: every point of the sweep file, resolved into a checked scenario, in the
//! sweep's order, before anything runs.
//!
//! Planning stays linear in the number of points, since a sweep of many seeds has hundreds of
//! thousands: each combination of `[[point]]` and grid values is resolved and checked once (the
//! expensive part), its seeds only differ in one line of the scenario, and two points are found
//! to be the same scenario through a set of their hashes, not by comparing each with all others.

use crate::{overrides, CliError};
use aiccsim::Scenario;
use indicatif::{ProgressBar, ProgressStyle};
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    base: PathBuf,
    /// Checked one by one ([`seeds`]), so that a bad one is named by its place.
    seeds: Option<Vec<toml::Value>>,
    #[serde(default)]
    grid: Grid,
    #[serde(default)]
    point: Vec<PointSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PointSpec {
    name: String,
    set: toml::Table,
}

/// The grid's axes in the order the file gives them, which is the table's column order and
/// decides which axis varies slowest. toml hands tables over sorted by key, so each axis is put
/// back in its place by where its values start in the file.
#[derive(Default)]
struct Grid(Vec<(String, Vec<toml::Value>)>);

impl<'de> Deserialize<'de> for Grid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Grid;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table of dotted scenario keys, each with a list of values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Grid, A::Error> {
                let mut axes = Vec::new();
                while let Some(key) = m.next_key::<String>()? {
                    let spanned: toml::Spanned<toml::Value> = m.next_value()?;
                    let at = spanned.span().start;
                    let value = spanned.into_inner();
                    let toml::Value::Array(values) = value else {
                        return Err(serde::de::Error::custom(format!(
                            "grid.\"{key}\": expected a list of values, like [\"dcqcn\", \"hpcc\"]"
                        )));
                    };
                    if values.is_empty() {
                        return Err(serde::de::Error::custom(format!("grid.\"{key}\": the list of values is empty")));
                    }
                    axes.push((at, key, values));
                }
                axes.sort_by_key(|a| a.0);
                Ok(Grid(axes.into_iter().map(|(_, k, v)| (k, v)).collect()))
            }
        }
        d.deserialize_map(V)
    }
}

/// One combination of `[[point]]` and grid values, resolved and checked: what its seeds share.
struct Resolved {
    /// The `point` column (when the file has `[[point]]`s), then one value per grid axis.
    axes: Vec<String>,
    scenario: Rendered,
}

/// What every point's scenario is made from: the base, and the folder its paths are taken in.
struct Source {
    base: toml::Table,
    folder: PathBuf,
}

/// A resolved scenario's TOML, ready for its seeds.
enum Rendered {
    /// A combination with only one seed (a grid without `seeds`): its TOML is hashed while
    /// planning, then dropped, and made again from `set` when the point's folder is written,
    /// so that a grid of many combinations does not hold every scenario's text at once.
    Again { source: Arc<Source>, set: toml::Table },
    /// The TOML around its seed's digits: a seed's scenario is `head`, the seed, `tail`.
    Around { head: String, tail: String },
    /// A scenario whose seed could not be told apart in its TOML (never seen): rendered anew
    /// for each seed.
    Whole(Box<Scenario>),
}

impl Rendered {
    /// A seed no scenario is likely to hold anywhere else, to find where the seed is written.
    const MARK: u64 = 7_305_182_946_017_493_821;

    /// `scenario` (`set` over `source`) ready for `seeds`, with the hash of its one seed's TOML
    /// when it has only one: rendered once (the costly part), not once per seed.
    fn new(
        mut scenario: Scenario,
        seeds: &[u64],
        source: &Arc<Source>,
        set: toml::Table,
    ) -> (Rendered, Option<String>) {
        if let [only] = seeds {
            scenario.simulation.seed = *only;
            let hash = format!("{:016x}", aiccsim::rng::fnv1a(scenario.to_toml().as_bytes()));
            return (Rendered::Again { source: source.clone(), set }, Some(hash));
        }
        let own = scenario.simulation.seed;
        scenario.simulation.seed = Rendered::MARK;
        let text = scenario.to_toml();
        scenario.simulation.seed = own;
        let mark = Rendered::MARK.to_string();
        let mut at = text.match_indices(&mark).map(|(i, _)| i);
        if let (Some(i), None) = (at.next(), at.next()) {
            let around = Rendered::Around { head: text[..i].to_string(), tail: text[i + mark.len()..].to_string() };
            // The split must give exactly what rendering gives; checked on the scenario's seed.
            if around.toml(own).ok() == Some(scenario.to_toml()) {
                return (around, None);
            }
        }
        (Rendered::Whole(Box::new(scenario)), None)
    }

    /// The scenario's TOML with `seed`; an error only if the scenario, checked while planning,
    /// no longer resolves (its base's folder changed under the sweep).
    fn toml(&self, seed: u64) -> Result<String, CliError> {
        Ok(match self {
            Rendered::Again { source, set } => {
                let mut s = overrides::apply(&source.base, set, "a sweep point", &source.folder)?;
                s.simulation.seed = seed;
                s.to_toml()
            }
            Rendered::Around { head, tail } => format!("{head}{seed}{tail}"),
            Rendered::Whole(s) => {
                let mut s = s.clone();
                s.simulation.seed = seed;
                s.to_toml()
            }
        })
    }
}

/// A combination resolved (its own seed, its hash when it has one seed, and what its seeds
/// share), or why it cannot be.
type Resolving = Result<(u64, Option<String>, Arc<Resolved>), CliError>;

/// A `[[point]]` (its name and set) with one combination of grid values (its cells and set).
type Combination<'a> = (Option<&'a str>, &'a toml::Table, &'a [String], &'a toml::Table);

/// One run of the sweep.
pub(crate) struct Point {
    resolved: Arc<Resolved>,
    pub seed: u64,
    /// The hash of its scenario's TOML: the name of its folder.
    pub hash: String,
}

impl Point {
    /// The `point` column (when the file has `[[point]]`s), then one value per grid axis.
    pub fn axes(&self) -> &[String] {
        &self.resolved.axes
    }

    /// The point's scenario, as its folder's `scenario.toml` holds it.
    pub fn toml(&self) -> Result<String, CliError> {
        self.resolved.scenario.toml(self.seed)
    }
}

/// The table's leading columns and every point, in the sweep's order.
pub(crate) struct Plan {
    pub header: Vec<String>,
    pub points: Vec<Point>,
}

fn cell(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The `seeds` list, each an integer a scenario's `simulation.seed` takes.
fn seeds(shown: &str, list: Option<Vec<toml::Value>>) -> Result<Option<Vec<u64>>, CliError> {
    let Some(list) = list else { return Ok(None) };
    if list.is_empty() {
        return Err(CliError::input(format!("{shown}: seeds: the list is empty; leave it out to use the base's seed")));
    }
    let seed = |(i, v): (usize, toml::Value)| match v {
        toml::Value::Integer(n) if n >= 0 => Ok(n as u64),
        other => Err(CliError::input(format!(
            "{shown}: seeds[{i}]: {other} is not a seed; a seed is a whole number, 0 or more (simulation.seed)"
        ))),
    };
    list.into_iter().enumerate().map(seed).collect::<Result<Vec<_>, _>>().map(Some)
}

/// Every point in the sweep's order (point, then grid with its first axis slowest, then seed),
/// each checked, so that a bad value fails before anything runs. A bar counts the points
/// (drawn on a terminal only); `interrupt` (Ctrl-C) stops the planning at the next point.
pub(crate) fn plan(path: &Path, interrupt: &AtomicBool) -> Result<Plan, CliError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| CliError::io(&shown, e))?;
    let spec: SweepFile = toml::from_str(&text).map_err(|e| CliError::input(format!("{shown}: {}", e.message())))?;
    let seeds = seeds(&shown, spec.seeds)?;
    let mut names = std::collections::BTreeSet::new();
    for p in &spec.point {
        if !names.insert(p.name.as_str()) {
            return Err(CliError::input(format!("{shown}: point: two points are named '{}'", p.name)));
        }
    }
    let base_path = path.parent().unwrap_or(Path::new(".")).join(&spec.base);
    if !base_path.is_file() {
        return Err(CliError::input(format!("{shown}: base: no scenario file {}", base_path.display())));
    }
    let base = overrides::read_base(&base_path)?;
    let source = Arc::new(Source { base: base.clone(), folder: aiccsim::config::folder_of(&base_path).to_path_buf() });
    for (key, values) in &spec.grid.0 {
        let one =
            overrides::dotted(key, values[0].clone()).map_err(|e| CliError::input(format!("{shown}: grid: {e}")))?;
        overrides::reaches(&base, &one, "").map_err(|e| CliError::input(format!("{shown}: grid: \"{key}\": {e}")))?;
    }
    for p in &spec.point {
        overrides::reaches(&base, &p.set, "")
            .map_err(|e| CliError::input(format!("{shown}: point '{}': {e}", p.name)))?;
    }
    let mut grid_sets: Vec<(Vec<String>, toml::Table)> = vec![(Vec::new(), toml::Table::new())];
    for (key, values) in &spec.grid.0 {
        let mut next = Vec::new();
        for (cells, set) in &grid_sets {
            for v in values {
                let mut set = set.clone();
                let one =
                    overrides::dotted(key, v.clone()).map_err(|e| CliError::input(format!("{shown}: grid: {e}")))?;
                overrides::merge(&mut set, &one);
                let mut cells = cells.clone();
                cells.push(cell(v));
                next.push((cells, set));
            }
        }
        grid_sets = next;
    }
    // A point's setting that the grid also varies would be replaced in every run of the point,
    // without a word: the point would not be what its name says.
    for p in &spec.point {
        if let Some(key) = grid_sets.first().and_then(|(_, g)| shared_key(&p.set, g, "")) {
            return Err(CliError::input(format!(
                "{shown}: point '{}' sets {key}, which the grid varies too: the grid's values would replace the point's in every run; remove it from the point or from the grid",
                p.name
            )));
        }
    }
    let nothing = toml::Table::new();
    let named: Vec<(Option<&str>, &toml::Table)> = if spec.point.is_empty() {
        vec![(None, &nothing)]
    } else {
        spec.point.iter().map(|p| (Some(p.name.as_str()), &p.set)).collect()
    };

    let mut header: Vec<String> = Vec::new();
    if !spec.point.is_empty() {
        header.push("point".into());
    }
    header.extend(spec.grid.0.iter().map(|(k, _)| k.clone()));
    let per_combination = seeds.as_ref().map_or(1, Vec::len);
    let combinations: Vec<Combination> = (named.iter())
        .flat_map(|&(name, point_set)| grid_sets.iter().map(move |(cells, g)| (name, point_set, cells.as_slice(), g)))
        .collect();
    let total = combinations.len() * per_combination;
    let bar = ProgressBar::new(total as u64).with_style(
        ProgressStyle::with_template(
            "planning the sweep {wide_bar} {human_pos}/{human_len} points ({elapsed}, ETA {eta})",
        )
        .expect("valid template"),
    );
    let stopped = |done: usize| {
        bar.finish_and_clear();
        Err(CliError {
            message: format!("interrupted while planning the sweep ({done} of {total} points resolved); nothing ran"),
            code: 130,
        })
    };

    // Resolving a combination (a scenario parsed and checked) is the expensive part, and each
    // is on its own: they are shared among every core, in contiguous runs, each run stopping at
    // its first error. The results are then taken in the sweep's order, so that the error
    // reported is the first point's, as if one by one.
    let resolve = |&(name, point_set, cells, grid_set): &Combination| -> Resolving {
        let mut set = point_set.clone();
        overrides::merge(&mut set, grid_set);
        let settings: Vec<String> = name
            .map(|n| format!("point '{n}'"))
            .into_iter()
            .chain(spec.grid.0.iter().zip(cells).map(|((k, _), c)| format!("{k} = {c}")))
            .collect();
        let origin = if settings.is_empty() {
            format!("{} (base of {shown})", base_path.display())
        } else {
            format!("{shown} with {}", settings.join(", "))
        };
        let scenario = overrides::apply(&base, &set, &origin, aiccsim::config::folder_of(&base_path))?;
        let axes: Vec<String> = name.map(str::to_string).into_iter().chain(cells.iter().cloned()).collect();
        let own = scenario.simulation.seed;
        let (rendered, hash) = Rendered::new(scenario, seeds.as_deref().unwrap_or(&[own]), &source, set);
        bar.inc(per_combination as u64);
        Ok((own, hash, Arc::new(Resolved { axes, scenario: rendered })))
    };
    // An algorithm written in Python is imported as its scenario is parsed, which needs the GIL,
    // and `python -m aiccsim` holds it on this thread: the points are then checked here, one
    // after another (other threads would wait for the GIL for good).
    let cores = match aiccsim::cc::external::names().is_empty() {
        true => std::thread::available_parallelism().map_or(1, |n| n.get()),
        false => 1,
    };
    let workers = cores.clamp(1, combinations.len().max(1));
    let run_length = combinations.len().div_ceil(workers).max(1);
    let resolve = &resolve;
    // Each run of combinations stops at its first error (reported in sweep order below).
    let resolve_run = |run: &[Combination]| -> Vec<Resolving> {
        let mut out = Vec::with_capacity(run.len());
        for c in run {
            if interrupt.load(Ordering::SeqCst) {
                break;
            }
            let r = resolve(c);
            let failed = r.is_err();
            out.push(r);
            if failed {
                break;
            }
        }
        out
    };
    let runs: Vec<Vec<Resolving>> = match workers {
        1 => vec![resolve_run(&combinations)],
        _ => std::thread::scope(|scope| {
            let handles: Vec<_> =
                (combinations.chunks(run_length)).map(|run| scope.spawn(move || resolve_run(run))).collect();
            handles.into_iter().map(|h| h.join().expect("a planning thread panicked")).collect()
        }),
    };
    if interrupt.load(Ordering::SeqCst) {
        return stopped(runs.iter().map(|r| r.iter().filter(|x| x.is_ok()).count()).sum::<usize>() * per_combination);
    }

    bar.set_position(0);
    let mut points = Vec::with_capacity(total);
    // Each point's hash, with its place: membership only, never iterated.
    let mut seen: HashMap<String, usize> = HashMap::with_capacity(total);
    for resolved in runs.into_iter().flatten() {
        let (own_seed, one_hash, resolved) = resolved.inspect_err(|_| bar.finish_and_clear())?;
        for &seed in seeds.as_deref().unwrap_or(&[own_seed]) {
            let hash = match &one_hash {
                Some(h) => h.clone(),
                None => format!("{:016x}", aiccsim::rng::fnv1a(resolved.scenario.toml(seed)?.as_bytes())),
            };
            if let Some(twin) = seen.insert(hash.clone(), points.len()) {
                bar.finish_and_clear();
                return Err(CliError::input(format!(
                    "{shown}: points {} and {} are the same scenario (seed {seed}); remove one",
                    twin + 1,
                    points.len() + 1
                )));
            }
            points.push(Point { resolved: resolved.clone(), seed, hash });
            if points.len() % 4096 == 0 {
                bar.set_position(points.len() as u64);
                if interrupt.load(Ordering::SeqCst) {
                    return stopped(points.len());
                }
            }
        }
    }
    bar.finish_and_clear();
    Ok(Plan { header, points })
}

/// The first dotted key both tables set (a value in one where the other has a value or a table),
/// or `None` when they set different keys.
fn shared_key(a: &toml::Table, b: &toml::Table, prefix: &str) -> Option<String> {
    a.iter().find_map(|(k, va)| {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match (va, b.get(k)?) {
            (toml::Value::Table(ta), toml::Value::Table(tb)) => shared_key(ta, tb, &key),
            _ => Some(key),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sweep of `seeds` seeds of a small base, in a temporary folder.
    fn sweep_of_seeds(seeds: usize, twin_at_end: bool) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("base.toml"),
            "[topology]\nkind = \"star\"\nhosts = 3\nlink = { bandwidth = \"100Gbps\", delay = \"1us\" }\n[workload]\nkind = \"incast\"\nsenders = \"1..=2\"\nreceiver = 0\nsize = \"10KB\"\n",
        )
        .unwrap();
        let mut list: Vec<String> = (1..=seeds).map(|s| s.to_string()).collect();
        if twin_at_end {
            list.push("1".into());
        }
        let file = dir.path().join("sweep.toml");
        std::fs::write(&file, format!("base = \"base.toml\"\nseeds = [{}]\n", list.join(","))).unwrap();
        (dir, file)
    }

    #[test]
    fn each_seed_gives_the_scenario_rendering_gives() {
        let (_dir, file) = sweep_of_seeds(3, false);
        let Ok(plan) = plan(&file, &AtomicBool::new(false)) else { panic!("the sweep plans") };
        assert_eq!(plan.points.len(), 3);
        for p in &plan.points {
            assert!(matches!(p.resolved.scenario, Rendered::Around { .. }));
            assert_eq!(p.axes(), &[] as &[String]);
            let text = p.toml().ok().unwrap();
            let s = Scenario::from_toml_in(&text, "t", None).unwrap();
            assert_eq!(s.simulation.seed, p.seed);
            assert_eq!(text, s.to_toml());
            assert_eq!(p.hash, format!("{:016x}", aiccsim::rng::fnv1a(s.to_toml().as_bytes())));
        }
    }

    /// A grid's point (one seed) is made again for its folder: the same text as was hashed.
    #[test]
    fn a_grid_point_is_made_again_as_it_was_hashed() {
        let (dir, _) = sweep_of_seeds(1, false);
        let file = dir.path().join("grid.toml");
        std::fs::write(&file, "base = \"base.toml\"\n[grid]\n\"cc.algorithm\" = [\"dcqcn\", \"hpcc\"]\n").unwrap();
        let Ok(plan) = plan(&file, &AtomicBool::new(false)) else { panic!("the sweep plans") };
        assert_eq!(plan.header, ["cc.algorithm"]);
        for p in &plan.points {
            assert!(matches!(p.resolved.scenario, Rendered::Again { .. }));
            let text = p.toml().ok().unwrap();
            assert!(text.contains(&format!("algorithm = \"{}\"", p.axes()[0])), "{text}");
            assert_eq!(p.hash, format!("{:016x}", aiccsim::rng::fnv1a(text.as_bytes())));
        }
    }

    /// Planning is linear: 200,000 seeds are planned, and their twin found, in a few seconds
    /// even in a debug build (comparing each point with all before it took about half an hour).
    #[test]
    fn two_hundred_thousand_seeds_plan_in_seconds() {
        let (_dir, file) = sweep_of_seeds(200_000, true);
        #[allow(clippy::disallowed_methods)] // times the planning; decides nothing
        let started = std::time::Instant::now();
        let err = plan(&file, &AtomicBool::new(false)).err().unwrap();
        assert!(err.message.contains("points 1 and 200001 are the same scenario"), "{}", err.message);
        assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
    }

    #[test]
    fn an_interrupt_stops_the_planning() {
        let (_dir, file) = sweep_of_seeds(5000, false);
        let err = plan(&file, &AtomicBool::new(true)).err().unwrap();
        assert_eq!(err.code, 130);
        assert!(err.message.contains("interrupted while planning the sweep (0 of 5000 points"), "{}", err.message);
    }
}
