//! The Sessions pane: every session (not only those waiting) with what it is doing — running,
//! waiting on something, idle — its client, its I/O rates, the locks it holds, whom it holds up,
//! and since when it is in its state.

use crate::ids::{BySid, Sid};
use crate::model::waiters::WaiterRow;
use crate::parsers::onstat_u::{OnstatU, WaitReason};
use crate::store::waits::{Rates, WaitTracker};
use crate::store::Read;
use compact_str::CompactString;
use serde::Serialize;
use std::fmt::Write as _;
use std::time::Duration;

/// What a session is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    Running,
    Waiting,
    /// Waiting for its client with nothing to send: nothing to look at.
    Idle,
}

/// One session of the Sessions pane.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionRow {
    pub sessid: Sid,
    pub user: CompactString,
    /// The client's host (`onstat -g ntt`, or `onstat -g ses <sid>` when drilled into).
    pub host: Option<CompactString>,
    /// The client program, when `onstat -g ses <sid>` told it.
    pub program: Option<String>,
    /// Its current statement, when an `onstat -g sql <sid>` read within
    /// [`crate::model::activity::SQL_FRESH_S`] of the moment told it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sql: Option<String>,
    /// Which read of the session's `onstat -g sql` `sql` came from, in which store: the next
    /// build, finding the same read, keeps the text without comparing it (a statement runs to
    /// kilobytes, and most are the same read second after second).
    #[serde(skip)]
    pub(crate) sql_read: Option<Read>,
    pub state: SessionState,
    /// What it waits on, as the Waiters pane says it (`lock`, `HDR+X on customer (stores)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<WaitReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_on: Option<String>,
    pub reads_per_s: Option<f64>,
    pub writes_per_s: Option<f64>,
    /// Locks held by its threads.
    pub locks: u64,
    /// The sessions waiting on it, directly or further down their chains.
    pub blocks: Vec<Sid>,
    /// The harm it does to them (the oldest wait it causes; background when they are all
    /// brief mutex waits).
    pub harm: crate::model::harm::Harm,
    /// One of its threads is inside a critical section (it holds up checkpoints).
    pub critical_section: bool,
    /// How long it is in its state (seconds): for a wait, the wait's own time (which may
    /// predate ifxtop); otherwise as far as ifxtop has seen it.
    pub in_state_s: Option<f64>,
    /// `in_state_s` is a lower bound: the state was on before ifxtop saw it begin.
    pub in_state_s_at_least: bool,
    pub threads: u32,
    /// Every thread of it is one of the server's own (`onstat -u` flags position 7: `B` B-tree
    /// cleaner, `D` daemon, `F` page flusher, `M` monitor): not database time.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub system: bool,
    /// Its primary thread is in a transaction (`onstat -u` flags position 3 `B`): with the
    /// session idle, the application that forgot to commit (`idle txn`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub in_txn: bool,
    /// CPU use of its threads between the last two `onstat -g cpu` samples, in % of one core
    /// (htop's `CPU%`): `None` when not known (`Snapshot::session_cpu` says why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_percent: Option<f64>,
    /// `cpu_percent` is a lower bound: a thread of it ended between the samples.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cpu_at_least: bool,
    /// The memory its pool holds (`total memory` of the last `onstat -g ses`, read every 30 s
    /// at `Snapshot::session_memory_at_s`): `None` for a session that list did not name (one
    /// started since), never 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// What of it is in use (`used memory`), from the same read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_used_bytes: Option<u64>,
}

impl SessionRow {
    /// A row of `sid` with nothing known yet (no thread counted: a daemon's until one is).
    pub(crate) fn empty(sid: Sid) -> SessionRow {
        SessionRow {
            sessid: sid,
            user: CompactString::default(),
            host: None,
            program: None,
            sql: None,
            sql_read: None,
            state: SessionState::Running,
            wait: None,
            waiting_on: None,
            reads_per_s: None,
            writes_per_s: None,
            locks: 0,
            blocks: Vec::new(),
            harm: crate::model::harm::Harm::default(),
            critical_section: false,
            in_state_s: None,
            in_state_s_at_least: false,
            threads: 0,
            system: true,
            in_txn: false,
            cpu_percent: None,
            cpu_at_least: false,
            memory_bytes: None,
            memory_used_bytes: None,
        }
    }

    /// The state in a word or two, at most 10 characters: `running`, `idle`, `idle txn` (idle
    /// in an open transaction), what it waits on
    /// (`lock`, `checkpoint`, `condition`...), `crit.sect.` (running inside a critical section).
    pub fn state_words(&self) -> &'static str {
        match (self.state, self.wait) {
            (SessionState::Waiting, Some(r)) => r.short(),
            (SessionState::Idle, _) if self.in_txn => "idle txn",
            (SessionState::Idle, _) => "idle",
            (SessionState::Running, _) if self.critical_section => "crit.sect.",
            (SessionState::Running, _) => "running",
            (SessionState::Waiting, None) => "waiting",
        }
    }
}

/// What the sessions are built from, besides `onstat -u`.
pub(crate) struct SessionInputs<'a> {
    pub(crate) waiters: &'a [WaiterRow],
    pub(crate) tracker: &'a WaitTracker,
    pub(crate) rates: &'a Rates,
    /// CPU use per session (onstat -g cpu).
    pub(crate) cpu: &'a crate::store::cpu::SessionCpu,
    /// Memory per session, total and used (onstat -g ses, the list).
    pub(crate) memory: &'a BySid<(u64, u64)>,
    /// Client host per session (onstat -g ntt).
    pub(crate) hosts: &'a BySid<CompactString>,
    /// Client program per session, where known.
    pub(crate) programs: &'a BySid<&'a str>,
    /// Current statement per session with when it was read, where read lately.
    pub(crate) sql: &'a BySid<(Read, &'a str)>,
    pub(crate) now: Duration,
}

/// What one session's threads of `onstat -u` add up to.
struct Threads<'u> {
    sid: Sid,
    /// Its first thread's user.
    user: &'u CompactString,
    threads: u32,
    system: bool,
    in_txn: bool,
    locks: u64,
    critical_section: bool,
    reads_per_s: Option<f64>,
    writes_per_s: Option<f64>,
}

/// Each user session's threads of `u` added up, in session order (their `onstat -u` order
/// kept within one), each thread's rates read in rstcb order first.
fn session_threads<'u>(u: &'u OnstatU, rates: &Rates) -> Vec<Threads<'u>> {
    let mut rate_of = rates.cursor();
    let thread_rates: Vec<Option<(f64, f64)>> = u
        .threads
        .iter()
        .map(|th| rate_of.get(th.address).copied())
        .collect();
    // (session, place in `u`) of each thread of a user session.
    let mut order: Vec<(u64, u32)> = (0u32..)
        .zip(&u.threads)
        .filter(|(_, th)| th.sessid.0 != 0)
        .map(|(i, th)| (th.sessid.0, i))
        .collect();
    crate::ids::sort_pairs(&mut order);
    let mut sessions: Vec<Threads<'u>> = Vec::with_capacity(order.len());
    for &(sid, i) in &order {
        let (Some(th), Some(&rates)) = (u.threads.get(i as usize), thread_rates.get(i as usize))
        else {
            continue;
        };
        let sid = Sid(sid);
        if sessions.last().is_none_or(|s| s.sid != sid) {
            sessions.push(Threads {
                sid,
                user: &th.user,
                threads: 0,
                system: true,
                in_txn: false,
                locks: 0,
                critical_section: false,
                reads_per_s: None,
                writes_per_s: None,
            });
        }
        let Some(s) = sessions.last_mut() else {
            continue;
        };
        s.threads += 1;
        s.system &= matches!(th.flags.thread_kind(), Some('B' | 'D' | 'F' | 'M'));
        if th.flags.is_primary() {
            s.in_txn = th.flags.txn_state() == Some('B');
        }
        s.locks += th.locks;
        s.critical_section |= th.flags.in_critical_section();
        if let Some((r, w)) = rates {
            s.reads_per_s = Some(s.reads_per_s.unwrap_or(0.0) + r);
            s.writes_per_s = Some(s.writes_per_s.unwrap_or(0.0) + w);
        }
    }
    sessions
}

/// The waiter of each session that speaks for it: its last primary thread's, else its first.
fn speaking_waiters(waiters: &[WaiterRow]) -> BySid<&WaiterRow> {
    // (session, place in `waiters`): the waiters of each session together, in their order.
    let mut by_session: Vec<(u64, u32)> = (0u32..)
        .zip(waiters)
        .map(|(i, w)| (w.sessid.0, i))
        .collect();
    crate::ids::sort_pairs(&mut by_session);
    let is_primary = |w: &&WaiterRow| w.flags.as_bytes().get(3) == Some(&b'P');
    BySid::from_sorted(
        by_session
            .chunk_by(|a, b| a.0 == b.0)
            .filter_map(|group| {
                let rows = group.iter().filter_map(|(_, i)| waiters.get(*i as usize));
                let w = rows
                    .clone()
                    .rev()
                    .find(is_primary)
                    .or_else(|| rows.clone().next())?;
                Some((w.sessid, w))
            })
            .collect(),
    )
}

/// Per session, the waiters whose chains name it (place in `waiters`, in their order): in
/// `pairs` (room), grouped.
fn held_up_by<'p>(
    waiters: &[WaiterRow],
    pairs: &'p mut Vec<(u64, u32)>,
) -> BySid<&'p [(u64, u32)]> {
    pairs.clear();
    for (i, w) in (0u32..).zip(waiters) {
        pairs.extend(w.blockers.iter().map(|b| (b.0, i)));
    }
    crate::ids::sort_pairs(pairs);
    pairs.dedup();
    BySid::from_sorted(
        pairs
            .chunk_by(|a, b| a.0 == b.0)
            .map(|group| (Sid(group[0].0), group))
            .collect(),
    )
}

/// Every user session of `onstat -u` (session 0, the daemons, left out), in session order.
/// The rows are made in `rows`: the room of the previous build's, whose strings (program,
/// statement, what it waits on) are written over in place rather than made anew.
pub(crate) fn build(
    u: &OnstatU,
    inp: &SessionInputs<'_>,
    mut rows: Vec<SessionRow>,
) -> Vec<SessionRow> {
    let sessions = session_threads(u, inp.rates);
    let waiter_of = speaking_waiters(inp.waiters);
    let mut pairs = Vec::new();
    let held_up = held_up_by(inp.waiters, &mut pairs);

    place_rows(&mut rows, &sessions);
    let mut hosts = inp.hosts.cursor();
    let mut programs = inp.programs.cursor();
    let mut statements = inp.sql.cursor();
    let mut memory = inp.memory.cursor();
    let mut cpu = inp.cpu.cursor();
    let mut states = inp.tracker.states();
    let mut waiters = waiter_of.cursor();
    let mut held_up = held_up.cursor();
    let mut scratch = String::new();
    for (row, s) in rows.iter_mut().zip(&sessions) {
        let sid = s.sid;
        row.sessid = sid;
        if row.user != *s.user {
            row.user.clone_from(s.user);
        }
        let host = hosts.get(sid);
        if row.host.as_ref() != host {
            row.host = host.cloned();
        }
        write_over(&mut row.program, programs.get(sid).copied());
        write_statement(row, statements.get(sid).copied());
        row.threads = s.threads;
        row.system = s.system;
        row.in_txn = s.in_txn;
        row.locks = s.locks;
        row.critical_section = s.critical_section;
        row.reads_per_s = s.reads_per_s;
        row.writes_per_s = s.writes_per_s;
        (row.cpu_percent, row.cpu_at_least) = match cpu.get(sid) {
            Some(c) => (Some(c.cores * 100.0), c.at_least),
            None => (None, false),
        };
        (row.memory_bytes, row.memory_used_bytes) = match memory.get(sid) {
            Some(&(total, used)) => (Some(total), Some(used)),
            None => (None, None),
        };
        let waiter = waiters.get(sid).copied();
        match waiter {
            Some(w) => {
                row.wait = Some(w.reason);
                // A client wait with data queued to the client is the Send-Q story: say so
                // here, where no Send-Q column is.
                scratch.clear();
                w.write_waiting_on_short(&mut scratch);
                if let Some(s) = w.socket.as_ref().filter(|s| s.send_q > 0 && !w.idle) {
                    let _ = write!(scratch, ", {} queued", crate::format::human_bytes(s.send_q));
                }
                write_over(&mut row.waiting_on, Some(&scratch));
                row.state = if w.idle {
                    SessionState::Idle
                } else {
                    SessionState::Waiting
                };
            }
            None => {
                row.wait = None;
                row.waiting_on = None;
                row.state = SessionState::Running;
            }
        }
        // Whom it holds up, and the harm done to them.
        let mine: &[(u64, u32)] = held_up.get(sid).copied().unwrap_or_default();
        row.blocks.clear();
        if mine.is_empty() {
            row.harm = crate::model::harm::Harm::default();
        } else {
            row.blocks.extend(
                mine.iter()
                    .filter_map(|(_, i)| inp.waiters.get(*i as usize))
                    .map(|w| w.sessid),
            );
            row.blocks.sort_unstable();
            row.blocks.dedup();
            row.harm = crate::model::harm::harm_to(
                mine.iter()
                    .filter_map(|(_, i)| inp.waiters.get(*i as usize)),
            );
        }
        let tracked = states.since(sid);
        row.in_state_s = tracked.map(|(since, _)| inp.now.saturating_sub(since).as_secs_f64());
        row.in_state_s_at_least = tracked.is_some_and(|(_, at_least)| at_least);
        // A wait knows better how long it lasts than ifxtop's watching does: onstat -g con
        // counts from before ifxtop started.
        if let Some(w) = waiter {
            let state = row.in_state_s.unwrap_or(0.0);
            if w.in_wait_s >= state {
                row.in_state_s = Some(w.in_wait_s);
                row.in_state_s_at_least = w.in_wait_s_at_least;
            }
        }
    }
    rows
}

/// Puts the previous build's rows where this build's sessions (`sessions`, in session order)
/// want them, in the same vector: the rows of sessions gone dropped, an empty row for each new
/// session. The rows kept lend their strings to the build, which writes every field over.
fn place_rows(rows: &mut Vec<SessionRow>, sessions: &[Threads<'_>]) {
    // The rows of sessions still there, in session order (a row out of order or twice is
    // dropped too: it cannot be placed).
    let mut wanted = sessions.iter().map(|s| s.sid).peekable();
    rows.retain(|r| {
        while wanted.next_if(|&sid| sid < r.sessid).is_some() {}
        wanted.next_if_eq(&r.sessid).is_some()
    });
    // Then spread out from the back: the rows kept are a subsequence of the sessions, so each
    // moves back to its place, over an empty row, never over a row not placed yet.
    let mut unplaced = rows.len();
    rows.resize_with(sessions.len(), || SessionRow::empty(Sid(0)));
    for (at, s) in sessions.iter().enumerate().rev() {
        match unplaced.checked_sub(1) {
            Some(last) if rows[last].sessid == s.sid => {
                // Most rows are in their place already (no session came or went before them).
                if last != at {
                    rows.swap(last, at);
                }
                unplaced = last;
            }
            _ => rows[at] = SessionRow::empty(s.sid),
        }
    }
}

/// Sets the row's statement to `read` (which read, its text): a row holding the same read of
/// its session keeps its text unread (a read is one text, whatever store the row was built
/// from: [`Read`]; its length is checked all the same), any other is written over.
fn write_statement(row: &mut SessionRow, read: Option<(Read, &str)>) {
    match read {
        Some((at, text))
            if row.sql_read == Some(at)
                && row.sql.as_ref().map(String::len) == Some(text.len()) => {}
        Some((at, text)) => {
            write_over(&mut row.sql, Some(text));
            row.sql_read = Some(at);
        }
        None => {
            row.sql = None;
            row.sql_read = None;
        }
    }
}

/// Sets `slot` to `value`, writing over the string already there (its room kept) rather than
/// making a new one.
fn write_over(slot: &mut Option<String>, value: Option<&str>) {
    match (slot.as_mut(), value) {
        (Some(old), Some(v)) => {
            if old != v {
                old.clear();
                old.push_str(v);
            }
        }
        (None, Some(v)) => *slot = Some(v.to_string()),
        (_, None) => *slot = None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustc_hash::FxHashMap;

    proptest::proptest! {
        /// Values named in any order and twice, asked for in any order: those of a map they
        /// were inserted into (the later value of a session named twice).
        #[test]
        fn a_cursor_finds_what_a_map_finds(
            values in proptest::collection::vec((0u64..30, 0u32..1000), 0..40),
            asked in proptest::collection::vec(0u64..32, 0..60),
        ) {
            let map: FxHashMap<Sid, u32> = values.iter().map(|&(s, v)| (Sid(s), v)).collect();
            let by_sid: BySid<u32> = values.iter().map(|&(s, v)| (Sid(s), v)).collect();
            let mut c = by_sid.cursor();
            for sid in asked {
                proptest::prop_assert_eq!(c.get(Sid(sid)), map.get(&Sid(sid)), "{}", sid);
            }
            let mut c = by_sid.cursor();
            for sid in 0..32 {
                proptest::prop_assert_eq!(c.get(Sid(sid)), map.get(&Sid(sid)), "{}", sid);
            }
        }
    }

    proptest::proptest! {
        /// Whatever the previous rows (in order or not, twice, gone, new), each session gets
        /// a row of its own in its place, and a row kept is the previous row of that session.
        #[test]
        fn rows_are_placed_where_the_sessions_want_them(
            old in proptest::collection::vec(0u64..40, 0..30),
            new in proptest::collection::btree_set(0u64..40, 0..30),
        ) {
            let user = CompactString::default();
            let sessions: Vec<Threads<'_>> = new
                .iter()
                .map(|&sid| Threads {
                    sid: Sid(sid),
                    user: &user,
                    threads: 1,
                    system: false,
                    in_txn: false,
                    locks: 0,
                    critical_section: false,
                    reads_per_s: None,
                    writes_per_s: None,
                })
                .collect();
            // Each old row marked with its place in the old vector.
            let mut rows: Vec<SessionRow> = old
                .iter()
                .enumerate()
                .map(|(i, &sid)| SessionRow {
                    locks: i as u64 + 1,
                    ..SessionRow::empty(Sid(sid))
                })
                .collect();
            place_rows(&mut rows, &sessions);
            proptest::prop_assert_eq!(rows.len(), sessions.len());
            for (r, s) in rows.iter().zip(&sessions) {
                proptest::prop_assert_eq!(r.sessid, s.sid);
                if r.locks > 0 {
                    proptest::prop_assert_eq!(Sid(old[r.locks as usize - 1]), s.sid);
                }
            }
            // When the old rows are in order and once each, every session in both keeps its row.
            let sorted: std::collections::BTreeSet<u64> = old.iter().copied().collect();
            let mut rows: Vec<SessionRow> = sorted
                .iter()
                .map(|&sid| SessionRow { locks: sid + 1, ..SessionRow::empty(Sid(sid)) })
                .collect();
            place_rows(&mut rows, &sessions);
            for r in &rows {
                let kept = sorted.contains(&r.sessid.0);
                proptest::prop_assert_eq!(r.locks, if kept { r.sessid.0 + 1 } else { 0 });
            }
        }
    }
}
