//! Waiting threads over time: since when each thread is in its current wait (tracked across
//! samples), each session's recent wait states, and read/write rates per thread.

use crate::ids::{Addr, Cursor, Sid};
use crate::parsers::onstat_u::{OnstatU, UserThread, WaitReason};
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

impl Tracked {
    /// Holds a place in the list while its entry is moved on; never read.
    const HOLE: Tracked = Tracked {
        sessid: Sid(0),
        state: WaitState {
            reason: WaitReason::Lock,
            wait: None,
        },
        counts: (0, 0),
        since: Duration::ZERO,
        at_least: false,
    };

    /// The wait of `th` at `t`, after `prev`, what was kept of its address: the same wait of
    /// the same thread goes on from when it began.
    fn of(
        th: &UserThread,
        reason: WaitReason,
        prev: Option<&Tracked>,
        t: Duration,
        seen_begin: bool,
    ) -> Tracked {
        let state = WaitState {
            reason,
            wait: th.wait,
        };
        let (since, at_least) = match prev {
            Some(prev) if prev.state == state && th.continues(prev.sessid, prev.counts) => {
                (prev.since, prev.at_least)
            }
            _ => (t, !seen_begin),
        };
        Tracked {
            sessid: th.sessid,
            state,
            counts: th.counts(),
            since,
            at_least,
        }
    }
}

/// Each session's state in `u`, in session order: that of its first thread (in `u`'s order)
/// that waits, else running. `speakers` are (session, place in `u`) of its threads.
fn session_states(
    u: &OnstatU,
    mut speakers: Vec<(u64, u32)>,
) -> Vec<(Sid, Option<WaitReason>, Option<Addr>)> {
    crate::ids::sort_pairs(&mut speakers);
    let mut states: Vec<(Sid, Option<WaitReason>, Option<Addr>)> =
        Vec::with_capacity(speakers.len());
    for &(sid, i) in &speakers {
        let Some(th) = u.threads.get(i as usize) else {
            continue;
        };
        let state = (Sid(sid), th.wait_reason, th.wait_reason.and(th.wait));
        match states.last_mut() {
            Some(first) if first.0 == state.0 => {
                if first.1.is_none() {
                    *first = state;
                }
            }
            _ => states.push(state),
        }
    }
    states
}

/// A session's state at `t` taken into its history, `span` its state's span should it be a
/// new one. A session missing from the last sample (`last`) ended: a session seen again with
/// its sid is a new one (the server gives a freed sid out again), its history starts anew.
fn take_state(
    track: &mut SessionTrack,
    last: Option<Duration>,
    reason: Option<WaitReason>,
    wait: Option<Addr>,
    t: Duration,
    horizon: Duration,
    span: Span,
) {
    if last.is_some_and(|last| track.seen != last) {
        *track = SessionTrack::fresh(t, wait, span);
        return;
    }
    track.seen = t;
    if track.last.reason != reason || track.wait != wait {
        track.push(span, horizon);
    }
    track.wait = wait;
}

/// A list in key order rewritten in place, front to back, by a sample in the same order (the
/// waiting threads by address, the sessions' histories by sid): an entry stays where it lies
/// unless one before it was added or forgotten; those moved on wait aside for a free place
/// (usually none: most entries stay, new sessions have the highest sids and come last).
struct InPlaceMerge<'a, T> {
    list: &'a mut Vec<T>,
    aside: VecDeque<T>,
    /// Places before `write` hold this sample's entries; those from `read` on, the last's.
    write: usize,
    read: usize,
    /// What holds a place while its entry is moved on.
    hole: T,
}

impl<'a, T: Clone> InPlaceMerge<'a, T> {
    fn new(list: &'a mut Vec<T>, hole: T) -> Self {
        InPlaceMerge {
            list,
            aside: VecDeque::new(),
            write: 0,
            read: 0,
            hole,
        }
    }

    /// The last sample's next entry.
    fn next(&self) -> Option<&T> {
        self.list.get(self.read)
    }

    /// Keeps the next entry, updated by `update`: where it lies when nothing waits aside and
    /// nothing before it was forgotten, else aside (its place, read, is then free).
    fn keep(&mut self, update: impl FnOnce(&mut T)) {
        if self.aside.is_empty() && self.write == self.read {
            update(&mut self.list[self.read]);
            self.write += 1;
            self.read += 1;
            return;
        }
        let mut entry = std::mem::replace(&mut self.list[self.read], self.hole.clone());
        self.read += 1;
        update(&mut entry);
        self.aside.push_back(entry);
        self.settle();
    }

    /// Forgets the next entry: its place is free.
    fn forget(&mut self) {
        self.read += 1;
        self.settle();
    }

    /// Adds an entry before the next one.
    fn add(&mut self, entry: T) {
        self.aside.push_back(entry);
        self.settle();
    }

    /// What waits aside written into the free places.
    fn settle(&mut self) {
        while self.write < self.read {
            let Some(e) = self.aside.pop_front() else {
                break;
            };
            self.list[self.write] = e;
            self.write += 1;
        }
    }

    /// The places left free are let go, what waits aside put last.
    fn finish(self) {
        self.list.truncate(self.write);
        self.list.extend(self.aside);
    }
}

/// A wait first seen in a sample at most this long after the previous one began between the
/// two: its age is known to within that. After a longer gap (the first sample, a failed poll, a
/// slower interval) the age is only a lower bound.
pub(crate) const SEEN_BEGIN_WITHIN: Duration = Duration::from_millis(1_500);

/// Remembers since when each thread has been in its current wait, and each session's recent
/// wait states (for the session screen's history).
#[derive(Debug, Default, Clone)]
pub(crate) struct WaitTracker {
    /// The waiting threads by rstcb, in address order: `onstat -u` lists its threads in that
    /// order, so the next sample and the snapshot's waiters read it front to back
    /// ([`SinceCursor`]) rather than through a hash table's scattered slots, a cache miss each
    /// at 5,000 sessions.
    current: Vec<(Addr, Tracked)>,
    /// Each session's recent wait states, in session order: each sample is merged into it
    /// front to back, and the snapshot's sessions (in that order too) read it so
    /// ([`StateCursor`]), rather than through a hash table (a cache miss a session).
    history: Vec<(Sid, SessionTrack)>,
    last_t: Option<Duration>,
}

/// One session's wait history, with what the next sample compares against kept inline (one
/// cache line read a session each second, not its spans on the heap as well).
#[derive(Debug, Clone)]
struct SessionTrack {
    /// When it was last in a sample.
    seen: Duration,
    /// Its current wait address: a new address is a new wait (a hot page moved on), a new
    /// span, so the history and the screen's `WAITS ON ... for` agree.
    wait: Option<Addr>,
    /// The latest span (the back of `spans`).
    last: Span,
    /// Compact spans (8 bytes, not the 24 of a `WaitSpan`): 5,000 sessions with ten minutes of
    /// history each held 15 MB this way before, the most of the resident memory's growth.
    /// Those older than the history span are dropped when the next is added; until then
    /// [`WaitTracker::history`] leaves them out.
    spans: VecDeque<Span>,
}

impl SessionTrack {
    /// Holds a place in the list while its history is moved on.
    const EMPTY: SessionTrack = SessionTrack {
        seen: Duration::ZERO,
        wait: None,
        last: Span {
            from_ds: 0,
            reason: None,
            at_least: false,
        },
        spans: VecDeque::new(),
    };

    /// A session first seen at `t`, in the state `span`.
    fn fresh(t: Duration, wait: Option<Addr>, span: Span) -> SessionTrack {
        SessionTrack {
            seen: t,
            wait,
            last: span,
            spans: VecDeque::from([span]),
        }
    }

    fn push(&mut self, span: Span, horizon: Duration) {
        self.last = span;
        self.spans.push_back(span);
        while self.spans.len() > 1 && self.spans.get(1).is_some_and(|s| s.from() <= horizon) {
            self.spans.pop_front();
        }
        while self.spans.len() > HISTORY_MAX_SPANS {
            self.spans.pop_front();
        }
    }
}

/// Reads the threads' waits in rstcb order ([`crate::ids::Cursor`]).
pub(crate) struct SinceCursor<'a>(Cursor<'a, Addr, Tracked>);

impl SinceCursor<'_> {
    /// Since when the thread at `rstcb` has been in its current wait, and whether that is
    /// only when ifxtop first saw it (the wait is older: a lower bound).
    pub(crate) fn since(&mut self, rstcb: Addr) -> Option<(Duration, bool)> {
        self.0.get(rstcb).map(|t| (t.since, t.at_least))
    }
}

/// Reads the sessions' states in session order ([`crate::ids::Cursor`]): the same answers as
/// [`WaitTracker::session_state_since`].
pub(crate) struct StateCursor<'a>(Cursor<'a, Sid, SessionTrack>);

impl StateCursor<'_> {
    pub(crate) fn since(&mut self, sid: Sid) -> Option<(Duration, bool)> {
        self.0.get(sid).map(|t| (t.last.from(), t.last.at_least))
    }
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
    /// Takes one `onstat -u` sample taken at `t`. The waiting threads and the sessions are
    /// merged into their lists where they are kept: an entry whose place did not change (most,
    /// each second) is updated where it lies, costing a comparison when its state is the same;
    /// only those after a new one are moved on.
    pub(crate) fn observe(&mut self, u: &OnstatU, t: Duration) {
        // What is new in this sample began since the previous one, if that one is recent.
        let seen_begin = self
            .last_t
            .is_some_and(|last| t.saturating_sub(last) <= SEEN_BEGIN_WITHIN);
        // (session, thread's place in `u`) of the threads that speak for a session.
        let mut speakers: Vec<(u64, u32)> = Vec::with_capacity(u.threads.len());
        // The waiting threads are listed in address order, each once (as onstat -u lists them).
        let mut ordered = true;
        let mut last_waiting: Option<Addr> = None;
        for (i, th) in u.threads.iter().enumerate() {
            // The primary thread speaks for its session; a waiting helper thread does too.
            // Session 0 (the server's own threads) has no history.
            if th.sessid.0 != 0 {
                speakers.push((th.sessid.0, i as u32));
            }
            if th.wait_reason.is_some() {
                ordered &= last_waiting.is_none_or(|a| a < th.address);
                last_waiting = Some(th.address);
            }
        }
        if ordered {
            self.track_in_place(u, t, seen_begin);
        } else {
            self.track_anew(u, t, seen_begin);
        }
        let states = session_states(u, speakers);
        self.merge_states(&states, t, seen_begin);
        self.last_t = Some(t);
    }

    /// The waiting threads of `u`, listed in address order, merged into `current` (in that
    /// order too): each compared with the same address's thread of the last sample, written
    /// where the list has room (the places of threads no longer waiting, of those read
    /// already), the few that find none kept aside until it has.
    fn track_in_place(&mut self, u: &OnstatU, t: Duration, seen_begin: bool) {
        let hole = (Addr(0), Tracked::HOLE);
        let mut merge = InPlaceMerge::new(&mut self.current, hole);
        for th in &u.threads {
            let Some(reason) = th.wait_reason else {
                continue;
            };
            // The last sample's threads before it wait no longer.
            while merge.next().is_some_and(|(a, _)| *a < th.address) {
                merge.forget();
            }
            if merge.next().is_some_and(|(a, _)| *a == th.address) {
                merge
                    .keep(|(_, prev)| *prev = Tracked::of(th, reason, Some(&*prev), t, seen_begin));
            } else {
                let tracked = Tracked::of(th, reason, None, t, seen_begin);
                merge.add((th.address, tracked));
            }
        }
        // What is left of the last sample's waits no longer.
        while merge.next().is_some() {
            merge.forget();
        }
        merge.finish();
    }

    /// The waiting threads of `u`, in any order, in a list built anew: each compared with the
    /// same address's thread of the last sample.
    fn track_anew(&mut self, u: &OnstatU, t: Duration, seen_begin: bool) {
        let mut next: Vec<(Addr, Tracked)> = Vec::with_capacity(self.current.len().max(16));
        let mut prev = Cursor::new(&self.current);
        let mut ordered = true;
        for th in &u.threads {
            let Some(reason) = th.wait_reason else {
                continue;
            };
            let tracked = Tracked::of(th, reason, prev.get(th.address), t, seen_begin);
            ordered &= next.last().is_none_or(|(a, _)| *a < th.address);
            next.push((th.address, tracked));
        }
        if !ordered {
            // Out of address order, or an rstcb listed twice: the later row counts, as it did
            // when they were kept by address.
            next = crate::ids::sorted_last_wins(&next, |(a, _)| a.0);
        }
        self.current = next;
    }

    /// The sessions' states (in session order) merged into their histories where they are
    /// kept: a session not in the sample is kept until it has been gone the whole history span.
    fn merge_states(
        &mut self,
        states: &[(Sid, Option<WaitReason>, Option<Addr>)],
        t: Duration,
        seen_begin: bool,
    ) {
        let horizon = t.saturating_sub(HISTORY_SPAN);
        let last = self.last_t;
        let mut merge = InPlaceMerge::new(&mut self.history, (Sid(0), SessionTrack::EMPTY));
        for &(sid, reason, wait) in states {
            // Sessions not in this sample: kept while seen within the history span.
            while let Some(gone) = merge.next().filter(|(s, _)| *s < sid) {
                if gone.1.seen >= horizon {
                    merge.keep(|_| {});
                } else {
                    merge.forget();
                }
            }
            let mut span = Span::new(t, reason);
            span.at_least = !seen_begin;
            if merge.next().is_some_and(|(s, _)| *s == sid) {
                merge.keep(|(_, track)| take_state(track, last, reason, wait, t, horizon, span));
            } else {
                merge.add((sid, SessionTrack::fresh(t, wait, span)));
            }
        }
        while let Some(gone) = merge.next() {
            if gone.1.seen >= horizon {
                merge.keep(|_| {});
            } else {
                merge.forget();
            }
        }
        merge.finish();
    }

    /// The threads' waits, to be read in rstcb order ([`SinceCursor::since`]).
    pub(crate) fn cursor(&self) -> SinceCursor<'_> {
        SinceCursor(Cursor::new(&self.current))
    }

    /// Since when the thread at `rstcb` has been in its current wait, and whether that is
    /// only when ifxtop first saw it (the wait is older: a lower bound).
    pub(crate) fn since(&self, rstcb: Addr) -> Option<(Duration, bool)> {
        self.cursor().since(rstcb)
    }

    /// The sessions' states, to be read in session order ([`StateCursor::since`]).
    pub(crate) fn states(&self) -> StateCursor<'_> {
        StateCursor(Cursor::new(&self.history))
    }

    /// A session's history, by its sid.
    fn track(&self, sid: Sid) -> Option<&SessionTrack> {
        self.history
            .binary_search_by_key(&sid, |(s, _)| *s)
            .ok()
            .map(|i| &self.history[i].1)
    }

    /// Since when the session is in its current state (running, or waiting on one reason), and
    /// whether that is only when ifxtop first saw it.
    #[cfg(test)]
    pub(crate) fn session_state_since(&self, sid: Sid) -> Option<(Duration, bool)> {
        self.track(sid).map(|h| (h.last.from(), h.last.at_least))
    }

    /// How many sessions' histories are kept.
    #[cfg(test)]
    fn sessions_kept(&self) -> usize {
        self.history.len()
    }

    /// The session's wait states over the last `HISTORY_SPAN`, oldest first.
    pub(crate) fn history(&self, sid: Sid) -> Vec<WaitSpan> {
        let Some(h) = self.track(sid) else {
            return Vec::new();
        };
        let horizon = self
            .last_t
            .map_or(Duration::ZERO, |t| t.saturating_sub(HISTORY_SPAN));
        // Spans that ended before the horizon, as when they are dropped: the one in force
        // at the horizon stays.
        let skip = (1..h.spans.len())
            .take_while(|&i| h.spans[i].from() <= horizon)
            .count();
        h.spans.iter().skip(skip).map(Span::span).collect()
    }
}

/// Reads and writes per second per thread, from two consecutive `onstat -u` samples.
///
/// Both samples are kept by rstcb in address order, the order `onstat -u` lists its threads:
/// the rates are a merge of the two lists, and the snapshot reads them front to back
/// ([`Rates::cursor`]) rather than through a hash table's scattered slots (a cache miss each at
/// 5,000 sessions).
#[derive(Debug, Default, Clone)]
pub(crate) struct Rates {
    /// The previous sample: (rstcb, (nreads, nwrites)) in address order, one per rstcb.
    prev: Option<(Duration, Counters)>,
    rates: Vec<(Addr, (f64, f64))>,
}

/// Per thread (nreads, nwrites) of one sample, by rstcb in address order.
type Counters = Vec<(Addr, (u64, u64))>;

/// Each thread's (nreads, nwrites) of `u` in address order, an rstcb listed twice counted once
/// (its later row, as a map keyed by address kept it), in the room of `into`.
fn counters(u: &OnstatU, mut into: Counters) -> Counters {
    into.clear();
    into.reserve(u.threads.len());
    let mut ordered = true;
    for th in &u.threads {
        ordered &= into.last().is_none_or(|(a, _)| *a < th.address);
        into.push((th.address, (th.nreads, th.nwrites)));
    }
    if !ordered {
        into = crate::ids::sorted_last_wins(&into, |(a, _)| a.0);
    }
    into
}

impl Rates {
    pub(crate) fn observe(&mut self, u: &OnstatU, t: Duration) {
        let prev = self.prev.take();
        let now = counters(
            u,
            Vec::with_capacity(prev.as_ref().map_or(0, |(_, p)| p.len())),
        );
        self.rates.clear();
        if let Some((pt, prev)) = &prev {
            let dt = t.saturating_sub(*pt).as_secs_f64();
            if dt > 0.0 {
                // Both lists in address order: a merge.
                let mut before = prev.iter().peekable();
                for &(addr, (r, w)) in &now {
                    while before.next_if(|(a, _)| *a < addr).is_some() {}
                    let Some(&&(_, (pr, pw))) = before.peek().filter(|(a, _)| *a == addr) else {
                        continue;
                    };
                    // A counter that went down means a new thread reused the rstcb.
                    if r >= pr && w >= pw {
                        self.rates
                            .push((addr, ((r - pr) as f64 / dt, (w - pw) as f64 / dt)));
                    }
                }
            }
        }
        self.prev = Some((t, now));
    }

    /// A thread's rates, by its rstcb.
    #[cfg(test)]
    pub(crate) fn get(&self, rstcb: Addr) -> Option<(f64, f64)> {
        self.rates
            .binary_search_by_key(&rstcb, |(a, _)| *a)
            .ok()
            .map(|i| self.rates[i].1)
    }

    /// Reads the rates in address order, each lookup starting where the last one ended.
    pub(crate) fn cursor(&self) -> Cursor<'_, Addr, (f64, f64)> {
        Cursor::new(&self.rates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustc_hash::FxHashMap;

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

    /// The tracker as it was built each second, every list anew: what `observe` gives by
    /// taking the threads and the sessions where they are kept.
    fn observe_plain(w: &mut WaitTracker, u: &OnstatU, t: Duration) {
        let seen_begin = w
            .last_t
            .is_some_and(|last| t.saturating_sub(last) <= SEEN_BEGIN_WITHIN);
        let mut next: Vec<(Addr, Tracked)> = Vec::new();
        let mut speakers: Vec<(u64, u32)> = Vec::new();
        let mut prev = Cursor::new(&w.current);
        for (i, th) in u.threads.iter().enumerate() {
            if th.sessid.0 != 0 {
                speakers.push((th.sessid.0, i as u32));
            }
            let Some(reason) = th.wait_reason else {
                continue;
            };
            next.push((
                th.address,
                Tracked::of(th, reason, prev.get(th.address), t, seen_begin),
            ));
        }
        w.current = crate::ids::sorted_last_wins(&next, |(a, _)| a.0);
        let horizon = t.saturating_sub(HISTORY_SPAN);
        let states = session_states(u, speakers);
        let old = std::mem::take(&mut w.history);
        let mut history = Vec::new();
        let mut old = old.into_iter().peekable();
        for &(sid, reason, wait) in &states {
            while let Some(gone) = old.next_if(|(s, _)| *s < sid) {
                if gone.1.seen >= horizon {
                    history.push(gone);
                }
            }
            let mut span = Span::new(t, reason);
            span.at_least = !seen_begin;
            let track = match old.next_if(|(s, _)| *s == sid) {
                Some((_, track)) if w.last_t.is_some_and(|last| track.seen != last) => {
                    SessionTrack::fresh(t, wait, span)
                }
                Some((_, mut track)) => {
                    track.seen = t;
                    if track.last.reason != reason || track.wait != wait {
                        track.push(span, horizon);
                    }
                    track.wait = wait;
                    track
                }
                None => SessionTrack::fresh(t, wait, span),
            };
            history.push((sid, track));
        }
        history.extend(old.filter(|(_, track)| track.seen >= horizon));
        w.history = history;
        w.last_t = Some(t);
    }

    /// `onstat -u` of the rows given: (rstcb slot, sid, flags, wait address, nreads).
    fn sample(rows: &[(u64, u64, usize, u64, u64)]) -> OnstatU {
        const FLAGS: [&str; 5] = ["L--P---", "Y--P---", "---P---", "L------", "-------"];
        let mut text = String::from(
            "\nIBM Informix Dynamic Server Version 12.10.FC14 -- On-Line -- Up 1 days 00:00:00 -- 1000 Kbytes\n\nUserthreads\naddress          flags   sessid   user     tty      wait             tout locks nreads   nwrites\n",
        );
        for &(slot, sid, flags, wait, nreads) in rows {
            let wait = if FLAGS[flags].starts_with('-') {
                0
            } else {
                0x9000 + wait
            };
            text.push_str(&format!(
                "{:x} {} {sid} informix - {wait:x} 0 1 {nreads} 0\n",
                0x1000 + slot * 0x100,
                FLAGS[flags]
            ));
        }
        text.push_str(&format!(
            " {} active, 1024 total, 20 maximum concurrent\n",
            rows.len()
        ));
        crate::parsers::onstat_u::parse(&text).expect("parses")
    }

    proptest::proptest! {
        /// Samples that mostly repeat the last one (a few threads change wait, flags, counts
        /// or session), listed in or out of order, a thread twice, one gone, seconds apart or
        /// after a gap or at the same time: the tracker is the one built anew each sample.
        #[test]
        fn taken_in_place_it_is_the_tracker_built_anew(
            base in proptest::collection::vec((0u64..12, 1u64..6, 0usize..5, 0u64..3, 0u64..4), 0..10),
            steps in proptest::collection::vec(
                (
                    0usize..5,
                    proptest::collection::vec((0usize..10, 0usize..5, 0u64..3, 0u64..4, 0u64..8), 0..3),
                    0u8..8,
                ),
                1..10,
            ),
        ) {
            let mut rows = base;
            rows.sort_by_key(|r| r.0);
            rows.dedup_by_key(|r| r.0);
            let mut t = Duration::from_secs(100);
            let mut fast = WaitTracker::default();
            let mut plain = WaitTracker::default();
            for (step, edits, shape) in steps {
                t += [0, 1, 1, 2, 700][step] * Duration::from_secs(1);
                for (i, flags, wait, nreads, sid) in edits {
                    if let Some(r) = rows.get_mut(i) {
                        r.1 = if sid < 6 { r.1 } else { sid };
                        r.2 = flags;
                        r.3 = wait;
                        // Counts go up, or start again (another thread on the rstcb).
                        r.4 = match nreads {
                            0 => r.4,
                            3 => 0,
                            n => r.4 + n,
                        };
                    }
                }
                let mut these = rows.clone();
                match shape {
                    0 => these.reverse(),
                    1 => {
                        if let Some(&(slot, sid, flags, wait, nreads)) = these.first() {
                            these.push((slot, sid, (flags + 1) % 5, wait, nreads));
                        }
                    }
                    2 => {
                        these.pop();
                    }
                    3 => these.push((20, 9, 0, 0, 0)),
                    _ => {}
                }
                let u = sample(&these);
                fast.observe(&u, t);
                observe_plain(&mut plain, &u, t);
                proptest::prop_assert_eq!(format!("{fast:?}"), format!("{plain:?}"));
            }
        }
    }

    /// Over the demo's timelines (seeds 1-3, tidy and messy, 300 sessions, its whole cycle),
    /// the tracker is the one built anew each second, most seconds merged in place.
    #[test]
    fn over_the_demo_the_tracker_is_the_one_built_anew() {
        for demo in (1..=3).flat_map(|seed| {
            [false, true].map(|messy| {
                let d = crate::demo::DemoInstance::new(seed).with_sessions(300);
                if messy {
                    d.messy()
                } else {
                    d
                }
            })
        }) {
            let mut fast = WaitTracker::default();
            let mut plain = WaitTracker::default();
            let mut in_order = 0;
            for t in 1..=crate::demo::timeline::CYCLE {
                let t = Duration::from_secs(t);
                let u = crate::collect::sample::Update::from_demo(
                    &demo,
                    crate::source::Source::OnstatU,
                    t,
                )
                .expect("onstat -u");
                let Ok(record) = &u.result else { continue };
                let Some(u) = record.get::<OnstatU>() else {
                    continue;
                };
                let waiting: Vec<Addr> = u
                    .threads
                    .iter()
                    .filter(|t| t.wait_reason.is_some())
                    .map(|t| t.address)
                    .collect();
                in_order += usize::from(waiting.windows(2).all(|w| w[0] < w[1]));
                fast.observe(u, t);
                observe_plain(&mut plain, u, t);
                assert_eq!(format!("{fast:?}"), format!("{plain:?}"), "{t:?}");
            }
            let cycle = crate::demo::timeline::CYCLE as usize;
            assert!(in_order > cycle / 2, "{in_order} seconds merged in place");
        }
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

    /// A session that left is forgotten once it has been gone for the whole history span:
    /// sids keep coming (a busy server gives out thousands a day), and one kept for every sid
    /// ever seen is memory without end. Until then its screen still shows its history.
    #[test]
    fn a_session_gone_for_the_history_span_is_forgotten() {
        let s = Duration::from_secs;
        let mut w = WaitTracker::default();
        for sid in 0..50 {
            w.observe(&u(&[(0x1000 + sid, 900 + sid, 0x9000, 5)]), s(1 + sid));
        }
        w.observe(&u(&[]), s(100));
        assert_eq!(w.history(Sid(949)).len(), 1, "still shown while recent");
        let step = 30;
        let mut t = 100;
        while t <= 100 + HISTORY_SPAN.as_secs() + step {
            w.observe(&u(&[(0x2000, 7, 0x9000, 5)]), s(t));
            t += step;
        }
        assert!(w.history(Sid(949)).is_empty());
        assert_eq!(w.sessions_kept(), 1, "only the session still there");
    }

    /// Threads listed out of rstcb order, and an rstcb listed twice (a torn read): each is
    /// found as a lookup by address finds it, the later of two rows counting.
    #[test]
    fn threads_out_of_order_or_listed_twice_are_found_as_by_address() {
        let s = Duration::from_secs;
        let mut w = WaitTracker::default();
        w.observe(
            &u(&[
                (0x3000, 3, 0x9000, 5),
                (0x1000, 1, 0x9000, 5),
                (0x2000, 2, 0x9000, 5),
            ]),
            s(1),
        );
        w.observe(
            &u(&[
                (0x2000, 2, 0x9000, 6),
                (0x3000, 3, 0x9100, 6),
                (0x1000, 1, 0x9000, 6),
                (0x2000, 2, 0x9200, 7),
            ]),
            s(2),
        );
        assert_eq!(w.since(Addr(0x1000)), Some((s(1), true)));
        // The second row of 0x2000 (another wait) is the one kept.
        assert_eq!(w.since(Addr(0x2000)), Some((s(2), false)));
        assert_eq!(w.since(Addr(0x3000)), Some((s(2), false)));
        assert_eq!(w.since(Addr(0x4000)), None);
        let mut c = w.cursor();
        for (addr, want) in [
            (0x3000, s(2)),
            (0x1000, s(1)),
            (0x2000, s(2)),
            (0x1000, s(1)),
        ] {
            assert_eq!(c.since(Addr(addr)).map(|(t, _)| t), Some(want), "{addr:x}");
        }
    }

    /// The rates as a map keyed by address computed them: the later row of an rstcb listed
    /// twice counts, a counter gone down gives no rate.
    fn rates_by_map(prev: &OnstatU, now: &OnstatU, dt: f64) -> Vec<(Addr, (f64, f64))> {
        let counts = |u: &OnstatU| -> FxHashMap<Addr, (u64, u64)> {
            u.threads
                .iter()
                .map(|th| (th.address, (th.nreads, th.nwrites)))
                .collect()
        };
        let (before, after) = (counts(prev), counts(now));
        let mut out: Vec<_> = after
            .iter()
            .filter_map(|(a, (r, w))| {
                let (pr, pw) = before.get(a)?;
                (r >= pr && w >= pw).then(|| (*a, ((r - pr) as f64 / dt, (w - pw) as f64 / dt)))
            })
            .collect();
        out.sort_by_key(|(a, _)| *a);
        out
    }

    proptest::proptest! {
        /// Threads in any order, listed twice, come and gone, counters reset: the rates read
        /// by address and through the cursor (in any order) are those of a map keyed by
        /// address.
        #[test]
        fn rates_are_those_of_a_map_by_address(
            first in proptest::collection::vec((0u64..12, 0u64..50), 0..20),
            second in proptest::collection::vec((0u64..12, 0u64..50), 0..20),
            dt in 1u64..5,
        ) {
            let sample = |rows: &[(u64, u64)]| {
                let rows: Vec<_> = rows
                    .iter()
                    .map(|&(slot, n)| (0x1000 + slot * 0x100, 7, 0, n))
                    .collect();
                u(&rows)
            };
            let (a, b) = (sample(&first), sample(&second));
            let s = Duration::from_secs;
            let mut r = Rates::default();
            r.observe(&a, s(10));
            r.observe(&b, s(10 + dt));
            let want = rates_by_map(&a, &b, dt as f64);
            proptest::prop_assert_eq!(&r.rates, &want);
            let mut c = r.cursor();
            for th in &b.threads {
                let by_map = want.iter().find(|(a, _)| *a == th.address).map(|x| x.1);
                proptest::prop_assert_eq!(r.get(th.address), by_map);
                proptest::prop_assert_eq!(c.get(th.address).copied(), by_map);
            }
        }
    }

    /// A thread's reads per second over the interval; none for its first sample, none when its
    /// counter went down (another thread on the rstcb).
    #[test]
    fn a_thread_reads_per_second_and_a_reset_counter_has_no_rate() {
        let s = Duration::from_secs;
        let mut r = Rates::default();
        r.observe(&u(&[(0x1000, 1, 0, 100), (0x2000, 2, 0, 500)]), s(1));
        assert_eq!(r.get(Addr(0x1000)), None, "one sample has no rate");
        r.observe(&u(&[(0x1000, 1, 0, 160), (0x2000, 2, 0, 10)]), s(3));
        assert_eq!(r.get(Addr(0x1000)), Some((30.0, 0.0)));
        assert_eq!(r.get(Addr(0x2000)), None, "its counter went down");
    }

    /// The sessions' states read in session order, out of it, and for a session gone from the
    /// last sample (still kept): the same as a lookup by sid.
    #[test]
    fn session_states_read_in_any_order_are_those_looked_up_by_sid() {
        let s = Duration::from_secs;
        let mut w = WaitTracker::default();
        w.observe(&u(&[(0x1000, 5, 0x9000, 1), (0x2000, 9, 0, 1)]), s(1));
        w.observe(
            &u(&[
                (0x3000, 7, 0x9100, 1),
                (0x1000, 5, 0x9200, 2),
                (0x2000, 9, 0, 2),
            ]),
            s(2),
        );
        w.observe(&u(&[(0x3000, 7, 0x9100, 1), (0x1000, 5, 0x9200, 2)]), s(3));
        for order in [[5, 7, 9, 11], [9, 7, 5, 11], [11, 9, 5, 7]] {
            let mut c = w.states();
            for sid in order {
                let sid = Sid(sid);
                assert_eq!(
                    c.since(sid),
                    w.session_state_since(sid),
                    "{sid:?} in {order:?}"
                );
            }
        }
        assert_eq!(w.states().since(Sid(5)), Some((s(2), false)));
        assert!(
            w.states().since(Sid(9)).is_some(),
            "gone a second: still kept"
        );
        assert_eq!(w.states().since(Sid(11)), None);
    }

    /// A session whose state changes often keeps only the spans of the last history span:
    /// those that ended before it are left out as soon as they are, whether or not dropped yet.
    #[test]
    fn history_reaches_back_the_history_span() {
        let s = Duration::from_secs;
        let mut w = WaitTracker::default();
        // A new wait (another lock address) every 100 s, then the same one for 20 minutes.
        for t in 1..=1800u64 {
            let lock = 0x9000 + (t.min(300) / 100);
            w.observe(&u(&[(0x1000, 900, lock, t)]), s(t));
        }
        let h = w.history(Sid(900));
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].from, s(300));
        // Its screen still shows the wait in force at the horizon, from when it began.
        for t in 1801..=1805u64 {
            w.observe(&u(&[(0x1000, 900, 0x9010, t)]), s(t));
        }
        let h = w.history(Sid(900));
        assert_eq!(h.len(), 2, "{h:?}");
        assert_eq!((h[0].from, h[1].from), (s(300), s(1801)));
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
