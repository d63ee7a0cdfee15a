//! What every workload kind answers: the [`WorkloadKind`] trait, which each kind's settings
//! implement in the kind's own file, and the small checks several kinds share.
//!
//! The rest of the simulator reaches a kind only through this trait (`WorkloadConfig::as_kind`,
//! the one match, made by the registry): the scenario checks (`config/validate.rs`), the checks
//! against the fabric and the flow limit (`jobs::check`), the memory estimate (`estimate.rs`),
//! the expansion into flows and the collectives' descriptions (`jobs::lay_out`).

use super::{CollectiveInfo, HostSet, Workload};
use crate::cc::Check;
use crate::time::{ByteSize, SimTime};

/// A workload kind: its settings, as the `[workload]` table of its `kind` gives them.
///
/// Every key an error names is written under `workload` (`workload.size`); a job's workloads
/// are checked the same way and their errors moved to the job's key (`config::moved`).
pub trait WorkloadKind {
    /// Pipelined chunks each of its collectives is split into (1: not split).
    fn chunks(&self) -> u32 {
        1
    }

    /// Sets `local_ranks`, where the kind has the key, one of its algorithms groups ranks and
    /// the scenario left it out, to `group`: the ranks a server holds.
    fn fill_local_ranks(&mut self, _group: u32) {}

    /// Checks of the settings alone, before anything is built.
    fn check(&self) -> Check {
        Ok(())
    }

    /// Checks against the ranks it runs on: the hosts it names exist, its sets are large
    /// enough, its algorithms fit their number.
    fn check_ranks(&self, ranks: &Ranks) -> Check;

    /// What it makes on `ranks` ranks, counted without making it. `flows` is the one count of
    /// flows: the engine's limit and the memory estimate both read it, and a test holds it to
    /// the flows [`WorkloadKind::expand`] makes.
    fn size(&self, ranks: u32) -> Size;

    /// Its flows (and compute steps) on ranks 0 to `ranks - 1`, in the order they are numbered.
    /// Only for settings that passed both checks; `seed` seeds the kinds that draw.
    fn expand(&self, ranks: u32, seed: u64) -> Workload;

    /// The collectives it issued, described as a collective library reports them, given what
    /// [`WorkloadKind::expand`] made (`made.training` for a training loop). Their `chunks` is
    /// filled in from [`WorkloadKind::chunks`].
    fn collectives(&self, _ranks: u32, _made: &Workload) -> Vec<CollectiveInfo> {
        Vec::new()
    }

    /// When its flows are too many: the key to name (under the workload's) and the fix.
    fn too_many_flows(&self) -> (&'static str, &'static str) {
        ("hosts", "use fewer hosts")
    }
}

/// A workload's size, counted from its settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Size {
    /// Flows (saturating at `u64::MAX`).
    pub flows: u64,
    /// Payload bytes of all flows (a collective's pieces are rounded: within a byte per flow).
    pub bytes: u128,
    /// Bytes the busiest rank sends or receives through its NIC.
    pub busiest_rank_bytes: u128,
    /// The latest start the settings give.
    pub latest_start: SimTime,
    /// Compute steps (saturating), and each rank's compute time in all.
    pub computes: u64,
    pub compute_time: SimTime,
    /// Training iterations: rows of `iterations.csv`.
    pub iterations: u64,
}

impl Size {
    /// A workload of `flows` flows only, carrying `bytes`, the busiest rank moving `busiest`.
    pub fn of_flows(flows: u64, bytes: u128, busiest: u128, latest_start: SimTime) -> Size {
        Size { flows, bytes, busiest_rank_bytes: busiest, latest_start, ..Size::default() }
    }
}

/// The ranks a workload is checked against: `n` of them, numbered from 0, and how errors name
/// them ("host 9 does not exist (the topology has hosts 0 to 7)", or a job's "rank ...").
pub struct Ranks<'a> {
    pub n: u32,
    noun: &'a str,
    members: &'a str,
}

impl<'a> Ranks<'a> {
    /// `noun` names one ("host", "rank"), `members` the set ("the topology has hosts").
    pub fn new(n: u32, noun: &'a str, members: &'a str) -> Ranks<'a> {
        Ranks { n, noun, members }
    }

    /// `rank` is one of them.
    pub fn has(&self, key: &str, rank: u32) -> Check {
        if rank >= self.n {
            return fail(key, format!("{} {rank} does not exist ({} 0 to {})", self.noun, self.members, self.n - 1));
        }
        Ok(())
    }

    /// `set` names at least `min` of them, each once.
    pub fn set(&self, key: &str, set: &HostSet, min: usize) -> Check {
        let v = set.members(self.n, self.noun, self.members).map_err(|m| (key.to_string(), m))?;
        if v.len() < min {
            return fail(key, format!("needs at least {min} hosts, got {}", v.len()));
        }
        Ok(())
    }
}

/// The failure of a check.
pub(super) fn fail(key: impl Into<String>, msg: impl Into<String>) -> Check {
    Err((key.into(), msg.into()))
}

/// `workload.size` carries at least a byte.
pub(super) fn positive(size: ByteSize) -> Check {
    if size.0 == 0 {
        return fail("workload.size", "a flow must carry at least 1 byte");
    }
    Ok(())
}

/// `workload.chunks` splits a collective of `size` bytes into chunks of at least a byte.
pub(super) fn chunks_fit(chunks: u32, size: u64) -> Check {
    if chunks == 0 {
        return fail("workload.chunks", "must be at least 1 (1: the collective is not split)");
    }
    if size < u64::from(chunks) {
        return fail(
            "workload.chunks",
            format!("{chunks} chunks of a {size}-byte collective would leave some empty; use at most {size}"),
        );
    }
    Ok(())
}

/// A buffer of `size` splits into `pieces` pieces (`what`) of at least one byte each.
pub(super) fn splits(size: ByteSize, pieces: u64, what: &str) -> Check {
    if size.0 >= pieces {
        return Ok(());
    }
    fail("workload.size", format!("{size} cannot be split into {pieces} {what} of at least 1 byte; raise the size"))
}

/// A hierarchical collective's groups of `local` that do not divide its `ranks`; `at` is the
/// workload's key.
pub(super) fn groups_do_not_fit(at: &str, ranks: u64, local: Option<u32>) -> Check {
    fail(
        format!("{at}.local_ranks"),
        format!(
            "hierarchical needs groups of local_ranks that divide the {ranks} ranks, got {}; set local_ranks to a divisor of {ranks} (the GPUs of a server), or choose another algorithm",
            local.map_or("none".to_string(), |g| g.to_string())
        ),
    )
}
