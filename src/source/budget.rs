//! The one memory budget for command outputs being read, shared by every source of every
//! instance in the process.
//!
//! Each run is capped on its own (`max-output-mb`, 64 MB), but about 13 sources per instance run
//! side by side: with every command printing without end they would hold 13 caps at once (over
//! 1 GB measured, `ifxtop snapshot` against an `onstat` that is `yes`). Every runner reserves
//! here what its read buffers take as they grow; a run whose next step would pass the budget is
//! killed and fails like one past its own cap, naming the budget. What a run holds goes back when
//! it ends.
//!
//! 128 MB by default: twice the per-run cap, so one runaway command reaches its own cap and
//! leaves as much again to the others, and far above what every source of a 20,000-session
//! instance prints at once (`onstat -u`, the largest, about 2 MB; all of them about 10 MB), or of
//! a fleet of several such instances. A larger `max-output-mb` raises it to twice that cap.
//!
//! The extent map's report (`oncheck -pe`: about 90 MB per million extents, run on demand, one at
//! a time per instance) is counted too, but may go past the budget by its own cap (16 times the
//! per-run cap): the polls can never take that room, and the report can never take theirs. So
//! everything being read at once stays under the budget plus one extent cap (128 MB + 1 GB by
//! default), the polls alone under the budget.

use std::sync::atomic::{AtomicU64, Ordering};

/// The budget unless a larger output cap raises it, in MB.
pub const DEFAULT_BUDGET_MB: u64 = 128;

static LIMIT: AtomicU64 = AtomicU64::new(DEFAULT_BUDGET_MB * crate::files::MB);
static IN_FLIGHT: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);

/// The budget, in bytes.
pub fn limit() -> u64 {
    LIMIT.load(Ordering::Relaxed)
}

/// Raises the budget to at least `bytes` (never lowers it: runners with different caps share it).
pub(crate) fn raise_to(bytes: u64) {
    LIMIT.fetch_max(bytes, Ordering::Relaxed);
}

/// Bytes reserved by runs now.
pub fn in_flight() -> u64 {
    IN_FLIGHT.load(Ordering::Relaxed)
}

/// The most ever reserved at once in this process (tests check it never passes [`limit`]).
pub fn peak() -> u64 {
    PEAK.load(Ordering::Relaxed)
}

/// What one run's buffer holds of the budget; given back when dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    held: u64,
    /// Above the budget by this much for the extent map's report.
    beyond: u64,
}

impl Reservation {
    /// For an ordinary run: within the budget.
    pub(crate) fn poll() -> Reservation {
        Reservation { held: 0, beyond: 0 }
    }

    /// For the extent map's report, whose cap is `cap`: within the budget and that cap.
    pub(crate) fn extent_report(cap: u64) -> Reservation {
        Reservation {
            held: 0,
            beyond: cap,
        }
    }

    /// Takes `more` bytes of the budget, or nothing and `false` when that would pass it.
    pub(crate) fn grow(&mut self, more: u64) -> bool {
        let limit = limit().saturating_add(self.beyond);
        let mut now = IN_FLIGHT.load(Ordering::Relaxed);
        loop {
            let Some(next) = now.checked_add(more).filter(|&n| n <= limit) else {
                return false;
            };
            match IN_FLIGHT.compare_exchange_weak(now, next, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => {
                    self.held += more;
                    PEAK.fetch_max(next, Ordering::Relaxed);
                    return true;
                }
                Err(actual) => now = actual,
            }
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(self.held, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_stop_at_the_budget_and_give_back_what_they_held() {
        let mut a = Reservation::poll();
        // Other tests of this binary may hold some of it now: ask for what is left and more.
        assert!(!a.grow(limit() + 1));
        assert_eq!(a.held, 0);
        assert!(a.grow(4096));
        assert!(a.grow(4096));
        assert_eq!(a.held, 8192);
        assert!(in_flight() >= 8192);
        assert!(peak() >= 8192 && peak() <= limit());
        assert!(!a.grow(u64::MAX));
        drop(a);
        // The extent map's report may go past the budget by its cap, no further.
        let mut r = Reservation::extent_report(1 << 20);
        assert!(r.grow(1 << 20));
        assert!(!r.grow(limit() + 1));
    }
}
