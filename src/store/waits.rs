//! Waiting threads over time: since when each thread is in its current wait (tracked across
//! samples), each session's recent wait states, and read/write rates per thread.

use crate::ids::{Addr, Sid};
use crate::parsers::onstat_u::{OnstatU, WaitReason};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::VecDeque;
use std::time::Duration;

/// What one thread is waiting in, as far as the tracker can tell apart two waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct WaitState {
    reason: WaitReason,
    wait: Option<Addr>,
}

#[derive(Debug, Clone, Copy)]
struct Tracked {
    sessid: Sid,
    state: WaitState,
    /// Its thread's reads and writes then: counts that went down are a new thread on the
    /// rstcb (a session that left and another, perhaps given the same sid, that came).
    counts: (u64, u64),
    since: Duration,
    /// The wait was already on when first seen (the first sample, or after a gap longer than
    /// [`SEEN_BEGIN_WITHIN`]): `since` is when ifxtop saw it, the wait is older.
    at_least: bool,
}

/// A wait first seen in a sample at most this long after the previous one began between the
/// two: its age is known to within that. After a longer gap (the first sample, a failed poll, a
/// slower interval) the age is only a lower bound.
pub(crate) const SEEN_BEGIN_WITHIN: Duration = Duration::from_millis(1_500);

/// Remembers since when each thread has been in its current wait, and each session's recent
/// wait states (for the session screen's history).
#[derive(Debug, Default, Clone)]
pub(crate) struct WaitTracker {
    current: FxHashMap<Addr, Tracked>,
    /// Compact spans (8 bytes, not the 24 of a `WaitSpan`): 5,000 sessions with ten minutes of
    /// history each held 15 MB this way before, the most of the resident memory's growth.
    history: FxHashMap<Sid, VecDeque<Span>>,
    /// Each session's current wait address: a new address is a new wait (a hot page moved on),
    /// a new span, so the history and the screen's `WAITS ON ... for` agree.
    history_wait: FxHashMap<Sid, Option<Addr>>,
    /// When each session of the history was last in a sample.
    seen: FxHashMap<Sid, Duration>,
    last_t: Option<Duration>,
}

/// One stretch of a session's wait history: from `from` on, it was in `reason` (None = running).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WaitSpan {
    #[serde(serialize_with = "secs")]
    pub(crate) from: Duration,
    pub(crate) reason: Option<WaitReason>,
    /// It was already on at `from` (first seen then): its length is a lower bound.
    pub(crate) at_least: bool,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 10.0).round() / 10.0)
}

/// A `WaitSpan` as the tracker keeps it: the start in tenths of a second since the session
/// started watching (13 years fit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    from_ds: u32,
    reason: Option<WaitReason>,
    /// The state was already on at `from` (first seen then, not begun then).
    at_least: bool,
}

impl Span {
    fn new(from: Duration, reason: Option<WaitReason>) -> Span {
        let ds = from.as_millis() / 100;
        Span {
            from_ds: u32::try_from(ds).unwrap_or(u32::MAX),
            reason,
            at_least: false,
        }
    }

    fn from(&self) -> Duration {
        Duration::from_millis(u64::from(self.from_ds) * 100)
    }

    fn span(&self) -> WaitSpan {
        WaitSpan {
            from: self.from(),
            reason: self.reason,
            at_least: self.at_least,
        }
    }
}

/// How long a session's wait history reaches back.
pub(crate) const HISTORY_SPAN: Duration = Duration::from_secs(600);
const HISTORY_MAX_SPANS: usize = 128;

impl WaitTracker {
    /// Takes one `onstat -u` sample taken at `t`.
    pub(crate) fn observe(&mut self, u: &OnstatU, t: Duration) {
        let mut next: FxHashMap<Addr, Tracked> =
            FxHashMap::with_capacity_and_hasher(u.threads.len(), Default::default());
        let mut session_state: FxHashMap<Sid, (Option<WaitReason>, Option<Addr>)> =
            FxHashMap::default();
        // What is new in this sample began since the previous one, if that one is recent.
        let seen_begin = self
            .last_t
            .is_some_and(|last| t.saturating_sub(last) <= SEEN_BEGIN_WITHIN);
        for th in &u.threads {
            if th.flags.is_primary() || th.sessid.0 != 0 {
                // The primary thread speaks for its session; a waiting helper thread does too.
                let e = session_state.entry(th.sessid).or_insert((None, None));
                if e.0.is_none() {
                    *e = (th.wait_reason, th.wait_reason.and(th.wait));
                }
            }
            let Some(reason) = th.wait_reason else {
                continue;
            };
            let state = WaitState {
                reason,
                wait: th.wait,
            };
            let counts = (th.nreads, th.nwrites);
            let (since, at_least) = match self.current.get(&th.address) {
                Some(prev)
                    if prev.state == state
                        && prev.sessid == th.sessid
                        && counts.0 >= prev.counts.0
                        && counts.1 >= prev.counts.1 =>
                {
                    (prev.since, prev.at_least)
                }
                _ => (t, !seen_begin),
            };
            next.insert(
                th.address,
                Tracked {
                    sessid: th.sessid,
                    state,
                    counts,
                    since,
                    at_least,
                },
            );
        }
        self.current = next;
        for (sid, (reason, wait)) in session_state {
            if sid.0 == 0 {
                continue;
            }
            // A session missing from the last sample ended: a session seen again with its sid
            // is a new one (the server gives a freed sid out again), its history starts anew.
            if self
                .last_t
                .is_some_and(|last| self.seen.get(&sid) != Some(&last))
            {
                self.history.remove(&sid);
                self.history_wait.remove(&sid);
            }
            self.seen.insert(sid, t);
            let h = self.history.entry(sid).or_default();
            let same_wait = self.history_wait.get(&sid) == Some(&wait);
            self.history_wait.insert(sid, wait);
            if h.back().map(|s| s.reason) != Some(reason) || !same_wait {
                let mut span = Span::new(t, reason);
                span.at_least = !seen_begin;
                h.push_back(span);
            }
            while h.len() > HISTORY_MAX_SPANS {
                h.pop_front();
            }
        }
        // Forget sessions not seen for the whole history span.
        let horizon = t.saturating_sub(HISTORY_SPAN);
        self.history.retain(|_, h| {
            while h.len() > 1 && h.get(1).is_some_and(|s| s.from() <= horizon) {
                h.pop_front();
            }
            !h.is_empty()
        });
        let history = &self.history;
        self.history_wait.retain(|sid, _| history.contains_key(sid));
        self.seen.retain(|sid, _| history.contains_key(sid));
        self.last_t = Some(t);
    }

    /// Since when the thread at `rstcb` has been in its current wait, and whether that is
    /// only when ifxtop first saw it (the wait is older: a lower bound).
    pub(crate) fn since(&self, rstcb: Addr) -> Option<(Duration, bool)> {
        self.current.get(&rstcb).map(|t| (t.since, t.at_least))
    }

    /// Since when the session is in its current state (running, or waiting on one reason), and
    /// whether that is only when ifxtop first saw it.
    pub(crate) fn session_state_since(&self, sid: Sid) -> Option<(Duration, bool)> {
        self.history
            .get(&sid)
            .and_then(|h| h.back())
            .map(|s| (s.from(), s.at_least))
    }

    /// The session's wait states over the last `HISTORY_SPAN`, oldest first.
    pub(crate) fn history(&self, sid: Sid) -> Vec<WaitSpan> {
        self.history
            .get(&sid)
            .map(|h| h.iter().map(Span::span).collect())
            .unwrap_or_default()
    }
}

/// Reads and writes per second per thread, from two consecutive `onstat -u` samples.
/// Per thread (nreads, nwrites) of one sample.
type Counters = FxHashMap<Addr, (u64, u64)>;

#[derive(Debug, Default, Clone)]
pub(crate) struct Rates {
    prev: Option<(Duration, Counters)>,
    rates: FxHashMap<Addr, (f64, f64)>,
}

impl Rates {
    pub(crate) fn observe(&mut self, u: &OnstatU, t: Duration) {
        let now: Counters = u
            .threads
            .iter()
            .map(|th| (th.address, (th.nreads, th.nwrites)))
            .collect();
        self.rates.clear();
        if let Some((pt, prev)) = &self.prev {
            let dt = t.saturating_sub(*pt).as_secs_f64();
            if dt > 0.0 {
                for (addr, (r, w)) in &now {
                    if let Some((pr, pw)) = prev.get(addr) {
                        // A counter that went down means a new thread reused the rstcb.
                        if r >= pr && w >= pw {
                            self.rates
                                .insert(*addr, ((r - pr) as f64 / dt, (w - pw) as f64 / dt));
                        }
                    }
                }
            }
        }
        self.prev = Some((t, now));
    }

    pub(crate) fn get(&self, rstcb: Addr) -> Option<(f64, f64)> {
        self.rates.get(&rstcb).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `onstat -u` of lock waiters: (rstcb, sid, lock address, nreads).
    fn u(rows: &[(u64, u64, u64, u64)]) -> OnstatU {
        let mut text = String::from(
            "\nIBM Informix Dynamic Server Version 12.10.FC14 -- On-Line -- Up 1 days 00:00:00 -- 1000 Kbytes\n\nUserthreads\naddress          flags   sessid   user     tty      wait             tout locks nreads   nwrites\n",
        );
        for (addr, sid, wait, nreads) in rows {
            text.push_str(&format!(
                "{addr:x} L--P--- {sid} informix - {wait:x} 0 1 {nreads} 0\n"
            ));
        }
        text.push_str(&format!(
            " {} active, 1024 total, 20 maximum concurrent\n",
            rows.len()
        ));
        crate::parsers::onstat_u::parse(&text).expect("parses")
    }

    /// A session that left, and another that connected on its rstcb between two samples with
    /// its sid (the server gives a freed sid out again), waiting on the same lock address: its
    /// thread's counts start again, so its wait is a new one, not the old one's.
    #[test]
    fn a_new_thread_on_the_rstcb_with_the_same_sid_waits_anew() {
        let s = Duration::from_secs;
        let mut w = WaitTracker::default();
        for t in 1..=3 {
            w.observe(&u(&[(0x1000, 900, 0x9000, 40 + t)]), s(t));
        }
        assert_eq!(w.since(Addr(0x1000)), Some((s(1), true)));
        w.observe(&u(&[(0x1000, 900, 0x9000, 3)]), s(4));
        assert_eq!(w.since(Addr(0x1000)), Some((s(4), false)));
    }

    /// A sid missing from a sample ended: seen again, it is a new session whose history starts
    /// anew (not the old one's spans).
    #[test]
    fn a_sid_seen_again_after_a_sample_without_it_has_a_new_history() {
        let s = Duration::from_secs;
        let mut w = WaitTracker::default();
        w.observe(&u(&[(0x1000, 900, 0x9000, 5)]), s(1));
        w.observe(&u(&[(0x1000, 900, 0x9100, 6)]), s(2));
        assert_eq!(w.history(Sid(900)).len(), 2);
        w.observe(&u(&[]), s(3));
        w.observe(&u(&[(0x1000, 900, 0x9100, 1)]), s(4));
        let h = w.history(Sid(900));
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].from, s(4));
    }

    /// Ten minutes of history for 5,000 sessions, up to 128 spans each: at 24 bytes a span (a
    /// `Duration` and the reason) that was 15 MB, the resident memory's growth over the first
    /// ten minutes of `--demo-sessions 5000`; kept at 8 it is 5 MB at most.
    #[test]
    fn a_kept_span_is_eight_bytes_and_reads_back_to_the_tenth() {
        assert_eq!(std::mem::size_of::<Span>(), 8);
        let s = Span::new(Duration::from_millis(12_345), Some(WaitReason::Lock));
        assert_eq!(
            s.span(),
            WaitSpan {
                from: Duration::from_millis(12_300),
                reason: Some(WaitReason::Lock),
                at_least: false,
            }
        );
        // Past 13 years it saturates instead of wrapping to the start.
        assert_eq!(
            Span::new(Duration::from_secs(u64::MAX / 4), None).from_ds,
            u32::MAX
        );
    }
}
