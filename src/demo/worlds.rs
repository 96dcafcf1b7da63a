//! The last few seconds' [`Moment`]s of one demo instance, shared by every printer of those
//! seconds: a tick's `onstat -i` prints its options one by one, the socket tables are read
//! beside it, and each used to compute the whole instance again (8 a second, most of the
//! demo's cost). A moment is a pure function of the population, its counters and the second
//! (`moment.rs`), and an instance's population never changes, so the second alone keys it.
//!
//! Bounded: the `KEPT` seconds asked last. Several collector tasks may ask at once (from
//! several threads): the first to ask for a second computes it, the others wait for it rather
//! than compute it again.

use super::instance::Population;
use super::moment::{Moment, World};
use super::profile::Counters;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Seconds kept: the second being polled and the one after it (the messy instance prints the
/// parts of a call a second apart), with room for a slow source read a second or two late.
pub(crate) const KEPT: usize = 4;

/// One second's moment, computed by the first to ask for it.
type Slot = Arc<OnceLock<Arc<Moment>>>;

pub(crate) struct Worlds {
    /// The seconds asked last, the most recent first (at most `kept`).
    kept: Mutex<Vec<(u64, Slot)>>,
    /// How many seconds are kept: 0 computes every world afresh (the way it was before, kept
    /// for the equivalence test and the bench).
    capacity: usize,
    /// Moments computed so far.
    computed: AtomicU64,
}

impl std::fmt::Debug for Worlds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worlds")
            .field("capacity", &self.capacity)
            .field("computed", &self.computed())
            .finish_non_exhaustive()
    }
}

impl Worlds {
    /// Keeping the last `capacity` seconds (0: none).
    pub(crate) fn new(capacity: usize) -> Self {
        Worlds {
            kept: Mutex::new(Vec::with_capacity(capacity + 1)),
            capacity,
            computed: AtomicU64::new(0),
        }
    }

    /// The instance at second `t`: the kept moment, or computed now (and kept). `pop` and
    /// `counters` must be the ones every earlier call passed (the instance's own).
    pub(crate) fn at<'a>(&self, pop: &'a Population, counters: &'a Counters, t: u64) -> World<'a> {
        let compute = || {
            self.computed.fetch_add(1, Ordering::Relaxed);
            Arc::new(Moment::at(pop, counters, t))
        };
        if self.capacity == 0 {
            return World::of(pop, counters, compute());
        }
        let slot = {
            let mut kept = super::lock(&self.kept);
            let slot = match kept.iter().position(|(s, _)| *s == t) {
                Some(k) => kept.remove(k).1,
                None => Slot::default(),
            };
            kept.insert(0, (t, Arc::clone(&slot)));
            kept.truncate(self.capacity);
            slot
        };
        // Outside the list's lock: another second is served while this one is computed.
        let moment = Arc::clone(slot.get_or_init(compute));
        World::of(pop, counters, moment)
    }

    /// The instance at second `t`, shared when kept, else computed and not kept: for a walk
    /// over past seconds (`onstat -g cpu`'s ledger), which would otherwise push out the
    /// seconds being polled.
    pub(crate) fn passing<'a>(
        &self,
        pop: &'a Population,
        counters: &'a Counters,
        t: u64,
    ) -> World<'a> {
        let kept = {
            let kept = super::lock(&self.kept);
            kept.iter()
                .find(|(s, _)| *s == t)
                .and_then(|(_, slot)| slot.get().cloned())
        };
        let moment = kept.unwrap_or_else(|| {
            self.computed.fetch_add(1, Ordering::Relaxed);
            Arc::new(Moment::at(pop, counters, t))
        });
        World::of(pop, counters, moment)
    }

    /// How many moments were computed (the rest were shared).
    pub(crate) fn computed(&self) -> u64 {
        self.computed.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance() -> (Population, Counters) {
        (Population::new(1, 300, false), Counters::new(1, 300))
    }

    #[test]
    fn a_second_is_computed_once_and_the_kept_ones_are_bounded() {
        let (pop, counters) = instance();
        let worlds = Worlds::new(KEPT);
        for t in 100..110 {
            for _ in 0..8 {
                assert_eq!(worlds.at(&pop, &counters, t).now.t, t);
            }
            // The second before is still kept: asked again, it is not computed again.
            assert_eq!(worlds.at(&pop, &counters, t - 1).now.t, t - 1);
        }
        // 99 once, then 100..110 once each.
        assert_eq!(worlds.computed(), 11);
        assert!(super::super::lock(&worlds.kept).len() <= KEPT);
        // Older than the kept seconds: computed again, the same.
        let again = worlds.at(&pop, &counters, 100);
        assert_eq!(worlds.computed(), 12);
        let fresh = World::at(&pop, &counters, 100);
        assert_eq!(again.sessions.len(), fresh.sessions.len());
        assert!(again
            .sessions
            .iter()
            .zip(&fresh.sessions)
            .all(|(a, b)| a.activity == b.activity && a.txn == b.txn && a.send_q == b.send_q));
    }

    #[test]
    fn threads_asking_for_one_second_at_once_share_one_computation() {
        let (pop, counters) = instance();
        let worlds = Worlds::new(KEPT);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    // No more seconds than are kept: none is let go before another thread asks.
                    for t in 200..200 + KEPT as u64 {
                        let _ = worlds.at(&pop, &counters, t).threads();
                    }
                });
            }
        });
        assert_eq!(worlds.computed(), KEPT as u64);
    }

    #[test]
    fn without_a_cache_every_ask_computes() {
        let (pop, counters) = instance();
        let worlds = Worlds::new(0);
        for _ in 0..3 {
            let _ = worlds.at(&pop, &counters, 5);
        }
        assert_eq!(worlds.computed(), 3);
    }
}
