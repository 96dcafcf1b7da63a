//! The Sessions pane: every session (not only those waiting) with what it is doing — running,
//! waiting on something, idle — its client, its I/O rates, the locks it holds, whom it holds up,
//! and since when it is in its state.

use crate::ids::Sid;
use crate::model::waiters::WaiterRow;
use crate::parsers::onstat_u::{OnstatU, WaitReason};
use crate::store::waits::{Rates, WaitTracker};
use compact_str::CompactString;
use rustc_hash::FxHashMap;
use serde::Serialize;
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
    pub(crate) memory: &'a FxHashMap<Sid, (u64, u64)>,
    /// Client host per session (onstat -g ntt).
    pub(crate) hosts: &'a FxHashMap<Sid, CompactString>,
    /// Client program per session, where known.
    pub(crate) programs: &'a FxHashMap<Sid, &'a str>,
    /// Current statement per session, where read lately.
    pub(crate) sql: &'a FxHashMap<Sid, &'a str>,
    pub(crate) now: Duration,
}

/// Every user session of `onstat -u` (session 0, the daemons, left out), in session order.
/// The rows fill the room of `rows` (emptied first).
pub(crate) fn build(
    u: &OnstatU,
    inp: &SessionInputs<'_>,
    mut rows: Vec<SessionRow>,
) -> Vec<SessionRow> {
    // The rows in a Vec, found through a small index: a map of 200-byte rows, rebuilt every
    // second for thousands of sessions, was this function's largest allocation.
    // Sized once (at most a row a thread): grown by doubling, 5,000 rows held twice their size
    // while the snapshot was built.
    rows.clear();
    rows.reserve_exact(u.threads.len());
    let mut index: FxHashMap<Sid, usize> =
        FxHashMap::with_capacity_and_hasher(u.threads.len(), Default::default());
    // The waiter of each session that speaks for it: the primary thread's, else any.
    let mut waiter_of: FxHashMap<Sid, &WaiterRow> = FxHashMap::default();
    for w in inp.waiters {
        let primary = w.flags.as_bytes().get(3) == Some(&b'P');
        let e = waiter_of.entry(w.sessid).or_insert(w);
        if primary {
            *e = w;
        }
    }
    // Whom each session holds up: every waiter whose chain names it.
    let mut blocks: FxHashMap<Sid, Vec<Sid>> = FxHashMap::default();
    for w in inp.waiters {
        for b in &w.blockers {
            blocks.entry(*b).or_default().push(w.sessid);
        }
    }
    for th in &u.threads {
        if th.sessid.0 == 0 {
            continue;
        }
        let at = *index.entry(th.sessid).or_insert_with(|| {
            rows.push(SessionRow {
                sessid: th.sessid,
                user: th.user.clone(),
                host: inp.hosts.get(&th.sessid).cloned(),
                program: inp.programs.get(&th.sessid).map(|p| (*p).to_string()),
                sql: inp.sql.get(&th.sessid).map(|q| (*q).to_string()),
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
            });
            rows.len() - 1
        });
        let Some(row) = rows.get_mut(at) else {
            continue;
        };
        row.threads += 1;
        row.system &= matches!(th.flags.thread_kind(), Some('B' | 'D' | 'F' | 'M'));
        if th.flags.is_primary() {
            row.in_txn = th.flags.txn_state() == Some('B');
        }
        row.locks += th.locks;
        row.critical_section |= th.flags.in_critical_section();
        if let Some((r, w)) = inp.rates.get(th.address) {
            row.reads_per_s = Some(row.reads_per_s.unwrap_or(0.0) + r);
            row.writes_per_s = Some(row.writes_per_s.unwrap_or(0.0) + w);
        }
    }
    drop(index);
    rows.sort_unstable_by_key(|r| r.sessid);
    for row in &mut rows {
        let sid = row.sessid;
        if let Some(c) = inp.cpu.get(sid) {
            row.cpu_percent = Some(c.cores * 100.0);
            row.cpu_at_least = c.at_least;
        }
        if let Some(&(total, used)) = inp.memory.get(&sid) {
            row.memory_bytes = Some(total);
            row.memory_used_bytes = Some(used);
        }
        if let Some(w) = waiter_of.get(&sid) {
            row.wait = Some(w.reason);
            // A client wait with data queued to the client is the Send-Q story: say so here,
            // where no Send-Q column is.
            row.waiting_on = Some(match w.socket.as_ref().filter(|s| s.send_q > 0) {
                Some(s) if !w.idle => format!(
                    "{}, {} queued",
                    w.waiting_on_short(),
                    crate::format::human_bytes(s.send_q)
                ),
                _ => w.waiting_on_short(),
            });
            row.state = if w.idle {
                SessionState::Idle
            } else {
                SessionState::Waiting
            };
        }
        if let Some(mut b) = blocks.remove(&sid) {
            b.sort_unstable();
            b.dedup();
            row.blocks = b;
            row.harm = crate::model::harm::harm_of(inp.waiters, sid);
        }
        let tracked = inp.tracker.session_state_since(sid);
        row.in_state_s = tracked.map(|(since, _)| inp.now.saturating_sub(since).as_secs_f64());
        row.in_state_s_at_least = tracked.is_some_and(|(_, at_least)| at_least);
        // A wait knows better how long it lasts than ifxtop's watching does: onstat -g con
        // counts from before ifxtop started.
        if let Some(w) = waiter_of.get(&sid) {
            let state = row.in_state_s.unwrap_or(0.0);
            if w.in_wait_s >= state {
                row.in_state_s = Some(w.in_wait_s);
                row.in_state_s_at_least = w.in_wait_s_at_least;
            }
        }
    }
    rows
}
