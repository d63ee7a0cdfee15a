//! How a switch counts its packet buffer, as shared-buffer switch ASICs (and the HPCC ns-3 MMU)
//! do: three pools, charged per ingress port and priority.
//!
//! ```text
//!  buffer = reserve x ports  +  shared pool                      +  headroom x ports
//!           (guaranteed:        (first come; an ingress may hold    (only after the ingress
//!            each ingress's      up to the XOFF threshold of it:     has sent PAUSE: what is
//!            first bytes)        static, or alpha x free shared)     still on the link)
//! ```
//!
//! A data packet arriving through an ingress that has not paused its upstream fills that
//! ingress's `reserve` first, then the shared pool. When the ingress's shared bytes rise above
//! XOFF the switch sends PAUSE; from then on, until RESUME, its arrivals are charged to its
//! `headroom` (what the upstream sends before the PAUSE takes effect), and a packet that does not
//! fit there is dropped: the headroom was too small for the link's round trip. A packet that
//! the shared pool has no room for, through an ingress that has not paused, also goes to the
//! headroom and makes PAUSE due at once: with the pool full the dynamic XOFF is below one packet,
//! so the packet crosses it (the HPCC ns-3 MMU charges every packet past XOFF to the headroom
//! and pauses while the headroom holds any). Dropping it instead would send no PAUSE at all, and
//! the ingress would lose every packet until the pool drained. Bytes leave the headroom first,
//! then the shared pool, then the reserve. RESUME once the headroom is empty and the shared bytes
//! are at most XOFF - `xon_delta` (or zero). Control packets (ACKs, CNPs, at the never-paused
//! priority) take shared buffer without being charged to an ingress.
//!
//! With `reserve` and `headroom` zero this is one shared pool, as aiccsim counted before: every
//! byte against the shared pool, PAUSE above alpha x (buffer - bytes in use).

/// The switch-wide counts of the three pools.
#[derive(Clone, Debug, Default)]
pub struct Pools {
    /// Bytes the buffer holds.
    pub capacity: u64,
    /// `reserve` x the ports (one lossless priority carries data).
    pub reserve_total: u64,
    /// The headroom of all ports.
    pub headroom_total: u64,
    /// What the reserves and headrooms leave of the buffer.
    shared_capacity: u64,
    /// Bytes in use in all three pools, control packets included.
    pub used: u64,
    pub reserve_used: u64,
    pub headroom_used: u64,
    shared_used: u64,
}

impl Pools {
    pub fn new(capacity: u64, reserve_total: u64, headroom_total: u64) -> Pools {
        let shared_capacity = capacity.saturating_sub(reserve_total).saturating_sub(headroom_total);
        Pools { capacity, reserve_total, headroom_total, shared_capacity, ..Pools::default() }
    }

    /// Bytes of the shared pool in use.
    #[inline]
    pub fn shared_used(&self) -> u64 {
        self.shared_used
    }

    /// Size of the shared pool: what the reserves and headrooms leave of the buffer.
    #[inline]
    pub fn shared_capacity(&self) -> u64 {
        self.shared_capacity
    }

    /// The dynamic XOFF threshold: alpha x the free shared pool (the Broadcom-style rule).
    #[inline]
    pub fn dynamic_xoff(&self, alpha: f64) -> u64 {
        ((self.shared_capacity - self.shared_used) as f64 * alpha) as u64
    }

    /// Takes `size` bytes of the shared pool for a packet charged to no ingress (a control
    /// packet); false if the pool has no room (the packet is dropped).
    #[inline]
    pub fn admit_unowned(&mut self, size: u64) -> bool {
        if self.shared_used + size > self.shared_capacity {
            return false;
        }
        self.shared_used += size;
        self.used += size;
        true
    }

    #[inline]
    pub fn release_unowned(&mut self, size: u64) {
        self.shared_used -= size;
        self.used -= size;
    }
}

/// One ingress port's bytes at one priority.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IngressCount {
    /// Bytes in its reserve and in the shared pool.
    pub bytes: u64,
    /// Bytes in its headroom.
    pub headroom: u64,
}

impl IngressCount {
    /// Its bytes in the shared pool: those beyond its reserve.
    #[inline]
    pub fn shared(&self, reserve: u64) -> u64 {
        self.bytes.saturating_sub(reserve)
    }

    /// Charges a packet of `size` bytes; `paused` says the ingress has sent PAUSE upstream and
    /// not yet RESUME, `headroom_size` is the port's headroom (0: none, so the shared pool takes
    /// what arrives after PAUSE). A packet the shared pool cannot take goes to the headroom
    /// before PAUSE too, which is then due (`pause_due`). False if its pool has no room: the
    /// packet is dropped.
    #[inline]
    pub fn admit(&mut self, size: u64, reserve: u64, headroom_size: u64, paused: bool, pools: &mut Pools) -> bool {
        if paused && headroom_size > 0 {
            return self.admit_to_headroom(size, headroom_size, pools);
        }
        let in_reserve = reserve.saturating_sub(self.bytes).min(size);
        let in_shared = size - in_reserve;
        if pools.shared_used + in_shared > pools.shared_capacity {
            return headroom_size > 0 && self.admit_to_headroom(size, headroom_size, pools);
        }
        self.bytes += size;
        pools.reserve_used += in_reserve;
        pools.shared_used += in_shared;
        pools.used += size;
        true
    }

    /// Charges a packet of `size` bytes to the headroom; false if it does not fit.
    #[inline]
    fn admit_to_headroom(&mut self, size: u64, headroom_size: u64, pools: &mut Pools) -> bool {
        if self.headroom + size > headroom_size {
            return false;
        }
        self.headroom += size;
        pools.headroom_used += size;
        pools.used += size;
        true
    }

    /// Releases `size` bytes of this ingress's: from its headroom first, then the shared pool,
    /// then its reserve.
    #[inline]
    pub fn release(&mut self, size: u64, reserve: u64, pools: &mut Pools) {
        let from_headroom = self.headroom.min(size);
        self.headroom -= from_headroom;
        pools.headroom_used -= from_headroom;
        let reserve_before = self.bytes.min(reserve);
        let rest = size - from_headroom;
        self.bytes -= rest;
        let from_reserve = reserve_before - self.bytes.min(reserve);
        pools.reserve_used -= from_reserve;
        pools.shared_used -= rest - from_reserve;
        pools.used -= size;
    }

    /// PAUSE is due (if not yet sent): the ingress's shared bytes are above XOFF, or it holds
    /// headroom bytes (a packet the shared pool could not take).
    #[inline]
    pub fn pause_due(&self, reserve: u64, xoff: u64) -> bool {
        self.headroom > 0 || self.shared(reserve) > xoff
    }

    /// RESUME is due: the headroom has drained and the shared bytes are down to XOFF -
    /// `xon_delta`, or to zero.
    #[inline]
    pub fn below_xon(&self, reserve: u64, xoff: u64, xon_delta: u64) -> bool {
        let shared = self.shared(reserve);
        self.headroom == 0 && (shared == 0 || shared <= xoff.saturating_sub(xon_delta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    fn pools(capacity: u64, reserve_total: u64, headroom_total: u64) -> Pools {
        Pools::new(capacity, reserve_total, headroom_total)
    }

    #[test]
    fn an_ingress_fills_its_reserve_then_the_shared_pool_then_after_pause_its_headroom() {
        let mut p = pools(100_000, 2 * 4_000, 2 * 10_000);
        let mut a = IngressCount::default();
        assert!(a.admit(3_000, 4_000, 10_000, false, &mut p));
        assert_eq!((p.reserve_used, p.shared_used()), (3_000, 0));
        assert!(a.admit(3_000, 4_000, 10_000, false, &mut p));
        assert_eq!((p.reserve_used, p.shared_used(), a.shared(4_000)), (4_000, 2_000, 2_000));
        // After PAUSE: the headroom, up to its size; beyond it, a drop.
        assert!(a.admit(6_000, 4_000, 10_000, true, &mut p));
        assert!(!a.admit(5_000, 4_000, 10_000, true, &mut p));
        assert_eq!((p.headroom_used, p.used), (6_000, 12_000));
        // Leaving: the headroom first, then the shared pool, then the reserve.
        a.release(7_000, 4_000, &mut p);
        assert_eq!((a.headroom, a.bytes, p.reserve_used, p.shared_used()), (0, 5_000, 4_000, 1_000));
        a.release(5_000, 4_000, &mut p);
        assert_eq!((a, p.used, p.reserve_used), (IngressCount::default(), 0, 0));
    }

    /// The case that lost 9,942 packets in barre-incast's DCQCN run: an ingress that holds
    /// nothing and has not paused meets a shared pool with less than a packet free.
    #[test]
    fn a_packet_the_full_shared_pool_cannot_take_goes_to_the_headroom_and_pause_is_due() {
        let (reserve, headroom) = (0, 28_208);
        let mut p = pools(2 * 28_208 + 10_000, 0, 2 * headroom);
        let (mut full, mut late) = (IngressCount::default(), IngressCount::default());
        assert!(full.admit(9_500, reserve, headroom, false, &mut p));
        let xoff = p.dynamic_xoff(0.125);
        assert_eq!(xoff, 62, "500 B free: XOFF is below one packet");
        assert!(late.admit(1_048, reserve, headroom, false, &mut p), "into the headroom");
        assert_eq!((late.bytes, late.headroom, p.shared_used(), p.headroom_used), (0, 1_048, 9_500, 1_048));
        assert!(late.pause_due(reserve, xoff), "its PAUSE goes at once");
        // Until RESUME the rest of the round trip follows it into the headroom; RESUME once it
        // has drained (nothing of this ingress's is in the shared pool).
        assert!(late.admit(26_000, reserve, headroom, true, &mut p));
        assert!(!late.admit(1_200, reserve, headroom, true, &mut p), "past the headroom: dropped");
        late.release(27_048, reserve, &mut p);
        assert!(late.below_xon(reserve, p.dynamic_xoff(0.125), 3_000));
        // Without a headroom pool there is nowhere to put it.
        let mut none = IngressCount::default();
        assert!(!none.admit(1_048, reserve, 0, false, &mut p));
        assert_eq!(none, IngressCount::default());
    }

    #[test]
    fn pause_is_due_exactly_above_the_threshold_and_resume_only_with_the_headroom_empty() {
        let (reserve, xoff) = (4_000, 10_000);
        let count = |bytes, headroom| IngressCount { bytes, headroom };
        assert!(!count(reserve + xoff, 0).pause_due(reserve, xoff));
        assert!(count(reserve + xoff + 1, 0).pause_due(reserve, xoff));
        assert!(count(0, 1).pause_due(reserve, xoff), "a byte in the headroom");
        assert!(!count(reserve + 5_000, 1).below_xon(reserve, xoff, 3_000), "headroom still held");
        assert!(!count(reserve + 7_001, 0).below_xon(reserve, xoff, 3_000));
        assert!(count(reserve + 7_000, 0).below_xon(reserve, xoff, 3_000));
        assert!(count(reserve, 0).below_xon(reserve, 500, 3_000), "nothing shared");
    }

    #[test]
    fn without_reserve_and_headroom_it_is_one_shared_pool() {
        let mut p = pools(50_000, 0, 0);
        let mut a = IngressCount::default();
        assert!(a.admit(30_000, 0, 0, true, &mut p), "after PAUSE too, the shared pool");
        assert!(p.admit_unowned(20_000));
        assert!(!a.admit(1, 0, 0, false, &mut p), "the buffer is full");
        assert_eq!(p.dynamic_xoff(0.125), 0);
        p.release_unowned(20_000);
        assert_eq!(p.dynamic_xoff(0.125), 2_500);
    }

    /// Random arrivals and departures through four ingress ports: each pool stays within its
    /// size, the three together are exactly the bytes held, and a packet is lost only when its
    /// ingress's headroom is full (PAUSE is sent as soon as it is due). With alpha 8 the four
    /// XOFFs add up to more than the free pool, so it fills before any ingress is above its own.
    #[test]
    fn bytes_held_never_exceed_reserve_plus_shared_plus_headroom() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let (reserve, headroom) = (3_000, 8_000);
        for alpha in [0.5, 8.0] {
            let mut p = pools(60_000, 4 * reserve, 4 * headroom);
            let mut ports = [IngressCount::default(); 4];
            let mut held: [Vec<u64>; 4] = Default::default();
            for _ in 0..100_000 {
                let i = rng.random_range(0..4);
                if rng.random_bool(0.55) {
                    let size = rng.random_range(64..=1_100);
                    let paused = ports[i].pause_due(reserve, p.dynamic_xoff(alpha));
                    if ports[i].admit(size, reserve, headroom, paused, &mut p) {
                        held[i].push(size);
                    } else {
                        assert!(
                            ports[i].headroom + size > headroom,
                            "alpha {alpha}: dropped with room in the headroom"
                        );
                    }
                } else if let Some(size) = held[i].pop() {
                    ports[i].release(size, reserve, &mut p);
                }
                assert!(p.reserve_used <= p.reserve_total && p.headroom_used <= p.headroom_total);
                assert!(p.shared_used() <= p.shared_capacity());
                assert!(ports.iter().all(|c| c.headroom <= headroom));
                let total: u64 = held.iter().flatten().sum();
                assert_eq!(p.used, total);
                assert_eq!(p.used, p.reserve_used + p.shared_used() + p.headroom_used);
            }
        }
    }
}
