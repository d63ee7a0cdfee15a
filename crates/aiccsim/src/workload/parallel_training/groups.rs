//! Which ranks work together in each parallel dimension, as Megatron-LM numbers them: tensor
//! parallelism innermost (consecutive ranks, so a tensor-parallel group sits inside a server
//! when the group fits one), then data parallelism, then the pipeline stages outermost:
//!
//! tp_rank = r % tp, dp_rank = (r / tp) % dp, pp_rank = r / (tp x dp).
//!
//! Expert parallelism is carved out of the data-parallel ranks (Megatron-LM's
//! `expert_model_parallel_size`): an expert-parallel group is a block of `ep` consecutive
//! data-parallel ranks of one stage with the same tensor-parallel rank.
//!
//! Ranks here are positions in the workload's rank list (0 to tp x dp x pp - 1), not hosts.

use std::ops::Range;

/// The sizes of the parallel dimensions; their product is the number of ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Groups {
    pub tp: u32,
    pub dp: u32,
    pub pp: u32,
    /// Divides `dp`.
    pub ep: u32,
}

impl Groups {
    pub fn ranks(&self) -> u32 {
        self.tp * self.dp * self.pp
    }

    /// Ranks of one pipeline stage.
    pub fn per_stage(&self) -> u32 {
        self.tp * self.dp
    }

    /// The rank at these coordinates.
    pub fn rank(&self, tp_rank: u32, dp_rank: u32, pp_rank: u32) -> u32 {
        pp_rank * self.per_stage() + dp_rank * self.tp + tp_rank
    }

    pub fn tp_rank(&self, r: u32) -> u32 {
        r % self.tp
    }

    pub fn dp_rank(&self, r: u32) -> u32 {
        (r / self.tp) % self.dp
    }

    /// Its pipeline stage.
    pub fn stage(&self, r: u32) -> u32 {
        r / self.per_stage()
    }

    /// The ranks of stage `s`.
    pub fn stage_ranks(&self, s: u32) -> Range<u32> {
        s * self.per_stage()..(s + 1) * self.per_stage()
    }

    /// The rank with `r`'s tensor- and data-parallel position on stage `s`: where `r`'s
    /// activations go (or come from) between stages.
    pub fn on_stage(&self, r: u32, s: u32) -> u32 {
        r % self.per_stage() + s * self.per_stage()
    }

    /// The tensor-parallel group holding `r`.
    pub fn tp_group(&self, r: u32) -> Vec<u32> {
        let first = r - self.tp_rank(r);
        (first..first + self.tp).collect()
    }

    /// The data-parallel group holding `r`: its stage's ranks with its tensor-parallel rank.
    pub fn dp_group(&self, r: u32) -> Vec<u32> {
        let s = self.stage(r);
        (0..self.dp).map(|d| self.rank(self.tp_rank(r), d, s)).collect()
    }

    /// The expert-parallel group holding `r`.
    pub fn ep_group(&self, r: u32) -> Vec<u32> {
        let first = self.dp_rank(r) / self.ep * self.ep;
        (first..first + self.ep).map(|d| self.rank(self.tp_rank(r), d, self.stage(r))).collect()
    }

    /// Every group of stage `s` in one dimension, each once, in the order of their first rank.
    pub fn stage_groups(&self, s: u32, group: impl Fn(&Groups, u32) -> Vec<u32>) -> Vec<Vec<u32>> {
        let mut groups: Vec<Vec<u32>> = Vec::new();
        for r in self.stage_ranks(s) {
            let g = group(self, r);
            if !groups.iter().any(|h| h[0] == g[0]) {
                groups.push(g);
            }
        }
        groups
    }

    /// One line per dimension for `aiccsim validate`: its size, how many groups, the first.
    pub fn describe(&self, hosts: &[u32]) -> String {
        let of = |g: Vec<u32>| g.iter().map(|&r| hosts[r as usize].to_string()).collect::<Vec<_>>().join(", ");
        let pp: Vec<u32> = (0..self.pp).map(|s| self.on_stage(0, s)).collect();
        let line = |name: &str, size: u32, first: Vec<u32>| {
            format!("# {name} = {size}: {} groups, the first on hosts [{}]\n", self.ranks() / size, of(first))
        };
        [
            line("tp", self.tp, self.tp_group(0)),
            line("dp", self.dp, self.dp_group(0)),
            line("pp", self.pp, pp),
            line("ep", self.ep, self.ep_group(0)),
        ]
        .concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_numbered_as_megatron_numbers_them() {
        // 16 ranks: tp 2, dp 4, pp 2, ep 2.
        let g = Groups { tp: 2, dp: 4, pp: 2, ep: 2 };
        assert_eq!(g.ranks(), 16);
        for r in 0..16 {
            assert_eq!(g.rank(g.tp_rank(r), g.dp_rank(r), g.stage(r)), r);
            assert!(g.tp_group(r).contains(&r) && g.dp_group(r).contains(&r) && g.ep_group(r).contains(&r));
        }
        assert_eq!(g.tp_group(5), [4, 5]);
        assert_eq!(g.dp_group(5), [1, 3, 5, 7]);
        assert_eq!(g.dp_group(10), [8, 10, 12, 14]);
        assert_eq!(g.ep_group(5), [5, 7]);
        assert_eq!(g.ep_group(3), [1, 3]);
        assert_eq!((g.stage(7), g.stage(8), g.on_stage(5, 1), g.on_stage(13, 0)), (0, 1, 13, 5));
        assert_eq!(g.stage_groups(1, Groups::tp_group), [[8, 9], [10, 11], [12, 13], [14, 15]]);
        assert_eq!(g.stage_groups(0, Groups::dp_group), [vec![0, 2, 4, 6], vec![1, 3, 5, 7]]);
        assert_eq!(g.stage_groups(0, Groups::ep_group), [[0, 2], [1, 3], [4, 6], [5, 7]]);
    }

    #[test]
    fn describe_names_each_dimensions_first_group_by_host() {
        let g = Groups { tp: 2, dp: 2, pp: 2, ep: 1 };
        let hosts: Vec<u32> = (10..18).collect();
        let text = g.describe(&hosts);
        assert!(text.contains("# tp = 2: 4 groups, the first on hosts [10, 11]"), "{text}");
        assert!(text.contains("# dp = 2: 4 groups, the first on hosts [10, 12]"), "{text}");
        assert!(text.contains("# pp = 2: 4 groups, the first on hosts [10, 14]"), "{text}");
        assert!(text.contains("# ep = 1: 8 groups, the first on hosts [10]"), "{text}");
    }
}
