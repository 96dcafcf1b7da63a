//! The last few seconds' [`Moment`]s of one demo instance, shared by every printer of those
//! seconds: a tick's `onstat -i` prints its options one by one, the socket tables are read
//! beside it, and each used to compute the whole instance again (8 a second, most of the
//! demo's cost). A moment is a pure function of the population, its counters and the second
//! (`moment.rs`), and an instance's population never changes, so the second alone keys it.
//!
//! Bounded: the `KEPT` seconds asked last, and for `onstat -g cpu`'s ledger, which walks every
//! second since its last ask, what it reads of the last `LINES` seconds. Several collector tasks may ask at once (from
//! several threads): the first to ask for a second computes it, the others wait for it rather
//! than compute it again.

use super::instance::Population;
use super::moment::{Moment, SpareThreads, World};
use super::profile::Counters;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Seconds kept: the second being polled and the one after it (the messy instance prints the
/// parts of a call a second apart), with room for a slow source read a second or two late.
pub(crate) const KEPT: usize = 4;

/// The CPU ledger's lines kept: more than the seconds between two asks of `onstat -g cpu` (its
/// period, 10 s at an interval of 1 s).
pub(crate) const LINES: usize = 16;

/// One second's moment, computed by the first to ask for it.
type Slot = Arc<OnceLock<Arc<Moment>>>;

pub(crate) struct Worlds {
    /// The seconds asked last, the most recent first (at most `capacity`).
    kept: Mutex<Vec<(u64, Slot)>>,
    /// How many seconds are kept: 0 computes every world afresh (the way it was before, kept
    /// for the equivalence test and the bench).
    capacity: usize,
    /// Moments computed so far.
    computed: AtomicU64,
    /// The CPU ledger's lines of the last seconds computed, the most recent first (at most
    /// `LINES`), once it asked for one (`lines_wanted`).
    lines: Mutex<VecDeque<(u64, Arc<Line>)>>,
    lines_wanted: AtomicBool,
    /// The last call's thread rows, emptied, for the next call to fill (`World::threads`).
    spare_threads: SpareThreads,
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
            lines: Mutex::default(),
            lines_wanted: AtomicBool::new(false),
            spare_threads: SpareThreads::default(),
        }
    }

    /// The instance at second `t`: the kept moment, or computed now (and kept). `pop` and
    /// `counters` must be the ones every earlier call passed (the instance's own).
    pub(crate) fn at<'a>(
        &'a self,
        pop: &'a Population,
        counters: &'a Counters,
        t: u64,
    ) -> World<'a> {
        let compute = || {
            self.computed.fetch_add(1, Ordering::Relaxed);
            let moment = Arc::new(Moment::at(pop, counters, t));
            if self.capacity > 0 && self.lines_wanted.load(Ordering::Relaxed) {
                self.keep_line(t, &World::of(pop, counters, Arc::clone(&moment)));
            }
            moment
        };
        if self.capacity == 0 {
            return World::of(pop, counters, compute()).sparing(&self.spare_threads);
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
        World::of(pop, counters, moment).sparing(&self.spare_threads)
    }

    /// What `onstat -g cpu`'s ledger reads of second `t` (`cpu::Line`). Its walk goes over
    /// every second since its last ask (10 s apart at an interval of 1 s), most of them no
    /// longer kept: once the ledger is walked, each second's line is taken as its moment is
    /// computed, and the last `LINES` are kept (a few bytes a session, not the moment).
    pub(crate) fn cpu_line(&self, pop: &Population, counters: &Counters, t: u64) -> Arc<Line> {
        if self.capacity == 0 {
            return Arc::new(Line::of(&self.at(pop, counters, t)));
        }
        self.want_cpu_lines(pop, counters);
        if let Some(line) = super::lock(&self.lines)
            .iter()
            .find(|(s, _)| *s == t)
            .map(|(_, l)| Arc::clone(l))
        {
            return line;
        }
        let kept = super::lock(&self.kept)
            .iter()
            .find(|(s, _)| *s == t)
            .and_then(|(_, slot)| slot.get().cloned());
        let moment = kept.unwrap_or_else(|| {
            // Not kept: the walk over past seconds would push out the seconds being polled.
            self.computed.fetch_add(1, Ordering::Relaxed);
            Arc::new(Moment::at(pop, counters, t))
        });
        self.keep_line(t, &World::of(pop, counters, moment))
    }

    /// The CPU ledger was asked for: from now on each second's line is taken as its moment is
    /// computed (and now the kept ones'), for its next walk.
    pub(crate) fn want_cpu_lines(&self, pop: &Population, counters: &Counters) {
        if self.lines_wanted.swap(true, Ordering::Relaxed) {
            return;
        }
        let kept: Vec<(u64, Arc<Moment>)> = super::lock(&self.kept)
            .iter()
            .filter_map(|(t, slot)| slot.get().map(|m| (*t, Arc::clone(m))))
            .collect();
        for (t, moment) in kept {
            self.keep_line(t, &World::of(pop, counters, moment));
        }
    }

    /// Takes and keeps second `t`'s line of the ledger.
    fn keep_line(&self, t: u64, w: &World<'_>) -> Arc<Line> {
        let line = Arc::new(Line::of(w));
        let mut lines = super::lock(&self.lines);
        if !lines.iter().any(|(s, _)| *s == t) {
            lines.push_front((t, Arc::clone(&line)));
            lines.truncate(LINES);
        }
        line
    }

    /// How many moments were computed (the rest were shared).
    pub(crate) fn computed(&self) -> u64 {
        self.computed.load(Ordering::Relaxed)
    }
}

/// What `onstat -g cpu`'s ledger (`cpu.rs`) reads of one second: which session each slot has,
/// and the CPU seconds of those that used any (`World::cpu_use`), in slot order.
#[derive(Debug)]
pub(crate) struct Line {
    pub(crate) epochs: Vec<u64>,
    pub(crate) used: Vec<(usize, f64)>,
}

impl Line {
    pub(crate) fn of(w: &World<'_>) -> Line {
        Line {
            epochs: w.tenants.iter().map(|tn| tn.epoch).collect(),
            used: w
                .cpu_use()
                .into_iter()
                .enumerate()
                .filter(|(_, c)| *c > 0.0)
                .collect(),
        }
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
        // The ledger's lines, once asked for, are bounded too.
        for t in 0..3 * LINES as u64 {
            let _ = worlds.cpu_line(&pop, &counters, t);
            let _ = worlds.at(&pop, &counters, t + 1);
        }
        assert!(super::super::lock(&worlds.lines).len() <= LINES);
        // Older than the kept seconds: computed again, the same.
        let before = worlds.computed();
        let again = worlds.at(&pop, &counters, 100);
        assert_eq!(worlds.computed(), before + 1);
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
