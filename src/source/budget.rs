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
//! a time per instance; or a captured one read with `--extents FILE`) lives within the same
//! budget, less the polls' room (a quarter: `oncheck -pe` prints for minutes on a large
//! instance, and the polls go on meanwhile): 96 MB by default, a little over a million extents.
//! A larger report fails with the budget's message, and ifxtop goes on without the map (it once
//! had a cap of its own, 1 GB past the budget, and a big report under a 1 GB `ulimit -v` aborted
//! ifxtop). So everything being read at once stays under the budget; a larger `max-output-mb`
//! raises it for a larger report.

use std::sync::atomic::{AtomicU64, Ordering};

/// The share of the budget (one part in this many: 32 MB of 128) an extent map's report never
/// takes, so that the polls go on while a report of minutes is read: three times what every
/// source of a 20,000-session instance prints at once.
pub const POLL_ROOM: u64 = 4;

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
    /// An extent map's report: it may not take the polls' room.
    report: bool,
}

impl Reservation {
    /// For an ordinary run: nothing held yet, the whole budget open to it.
    pub(crate) fn poll() -> Reservation {
        Reservation {
            held: 0,
            report: false,
        }
    }

    /// For the extent map's report: nothing held yet; it grows only while the runs in flight
    /// leave the polls their room ([`POLL_ROOM`]).
    pub(crate) fn extent_report() -> Reservation {
        Reservation {
            held: 0,
            report: true,
        }
    }

    /// Takes `more` bytes of the budget, or nothing and `false` when that would pass it.
    pub(crate) fn grow(&mut self, more: u64) -> bool {
        self.grow_between(more, more).is_some()
    }

    /// Takes `want` bytes of the budget, or as much of it as is left when that is at least
    /// `least`; else nothing. Returns what it took. (A buffer that doubles would otherwise fail
    /// at its last doubling with half the budget still free.)
    pub(crate) fn grow_between(&mut self, least: u64, want: u64) -> Option<u64> {
        let limit = if self.report {
            limit() - limit() / POLL_ROOM
        } else {
            limit()
        };
        let want = want.max(least);
        let mut now = IN_FLIGHT.load(Ordering::Relaxed);
        loop {
            let take = want.min(limit.saturating_sub(now));
            if take < least || now.checked_add(take).is_none() {
                return None;
            }
            let next = now + take;
            match IN_FLIGHT.compare_exchange_weak(now, next, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => {
                    self.held += take;
                    PEAK.fetch_max(next, Ordering::Relaxed);
                    return Some(take);
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
        // Short of what it wants, it takes what is left when that is enough, and no more.
        assert_eq!(a.grow_between(limit() + 1, u64::MAX), None);
        let took = a.grow_between(1, u64::MAX).expect("what is left");
        assert!(took >= 1 && a.held == 8192 + took);
        assert!(in_flight() <= limit() && peak() <= limit());
        drop(a);
        // A report leaves the polls their room: never the whole budget, even when it is free.
        let mut r = Reservation::extent_report();
        assert!(!r.grow(limit()));
        assert!(r.grow_between(1, limit()).expect("some") <= limit() - limit() / POLL_ROOM);
    }
}
