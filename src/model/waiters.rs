//! Waiting threads: how long each has been in its current wait (tracked across samples), read and
//! write rates, and the join of each waiter to what it waits on.

use crate::ids::{Addr, Sid};
use crate::model::extents::{ExtentMap, Lookup};
use crate::parsers::onstat_g_con::OnstatGCon;
use crate::parsers::onstat_k::{Lock, OnstatK};
use crate::parsers::onstat_u::{Flags, OnstatU, UserThread, WaitReason};
use crate::parsers::onstat_x::OnstatX;
use crate::parsers::systabnames::Systabnames;
use compact_str::CompactString;
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
    since: Duration,
}

/// Remembers since when each thread has been in its current wait, and each session's recent
/// wait states (for the session screen's history).
#[derive(Debug, Default, Clone)]
pub struct WaitTracker {
    current: FxHashMap<Addr, Tracked>,
    history: FxHashMap<Sid, VecDeque<WaitSpan>>,
    last_t: Option<Duration>,
}

/// One stretch of a session's wait history: from `from` on, it was in `reason` (None = running).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WaitSpan {
    #[serde(serialize_with = "secs")]
    pub from: Duration,
    pub reason: Option<WaitReason>,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 10.0).round() / 10.0)
}

/// How long a session's wait history reaches back.
pub const HISTORY_SPAN: Duration = Duration::from_secs(600);
const HISTORY_MAX_SPANS: usize = 128;

impl WaitTracker {
    /// Takes one `onstat -u` sample taken at `t`.
    pub fn observe(&mut self, u: &OnstatU, t: Duration) {
        let mut next: FxHashMap<Addr, Tracked> =
            FxHashMap::with_capacity_and_hasher(u.threads.len(), Default::default());
        let mut session_state: FxHashMap<Sid, Option<WaitReason>> = FxHashMap::default();
        for th in &u.threads {
            if th.flags.is_primary() || th.sessid.0 != 0 {
                // The primary thread speaks for its session; a waiting helper thread does too.
                let e = session_state.entry(th.sessid).or_insert(None);
                if e.is_none() {
                    *e = th.wait_reason;
                }
            }
            let Some(reason) = th.wait_reason else {
                continue;
            };
            let state = WaitState {
                reason,
                wait: th.wait,
            };
            let since = match self.current.get(&th.address) {
                Some(prev) if prev.state == state && prev.sessid == th.sessid => prev.since,
                _ => t,
            };
            next.insert(
                th.address,
                Tracked {
                    sessid: th.sessid,
                    state,
                    since,
                },
            );
        }
        self.current = next;
        for (sid, reason) in session_state {
            if sid.0 == 0 {
                continue;
            }
            let h = self.history.entry(sid).or_default();
            if h.back().map(|s| s.reason) != Some(reason) {
                h.push_back(WaitSpan { from: t, reason });
            }
            while h.len() > HISTORY_MAX_SPANS {
                h.pop_front();
            }
        }
        // Forget sessions not seen for the whole history span.
        let horizon = t.saturating_sub(HISTORY_SPAN);
        self.history.retain(|_, h| {
            while h.len() > 1 && h.get(1).is_some_and(|s| s.from <= horizon) {
                h.pop_front();
            }
            !h.is_empty()
        });
        self.last_t = Some(t);
    }

    /// Since when the thread at `rstcb` has been in its current wait.
    pub fn since(&self, rstcb: Addr) -> Option<Duration> {
        self.current.get(&rstcb).map(|t| t.since)
    }

    /// The session's wait states over the last `HISTORY_SPAN`, oldest first.
    pub fn history(&self, sid: Sid) -> Vec<WaitSpan> {
        self.history
            .get(&sid)
            .map(|h| h.iter().copied().collect())
            .unwrap_or_default()
    }
}

/// Reads and writes per second per thread, from two consecutive `onstat -u` samples.
/// Per thread (nreads, nwrites) of one sample.
type Counters = FxHashMap<Addr, (u64, u64)>;

#[derive(Debug, Default, Clone)]
pub struct Rates {
    prev: Option<(Duration, Counters)>,
    rates: FxHashMap<Addr, (f64, f64)>,
}

impl Rates {
    pub fn observe(&mut self, u: &OnstatU, t: Duration) {
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

    pub fn get(&self, rstcb: Addr) -> Option<(f64, f64)> {
        self.rates.get(&rstcb).copied()
    }
}

/// What a waiter waits on, joined from the other sources.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WaitTarget {
    /// A condition from `onstat -g con` (`netnorm`, `sm_read`, ...).
    Condition {
        address: Addr,
        name: Option<CompactString>,
        /// Seconds, as `onstat -g con` reports it.
        waittime: Option<u64>,
    },
    /// A lock from `onstat -k`.
    Lock {
        address: Addr,
        #[serde(rename = "type")]
        lock_type: Option<CompactString>,
        partnum: Option<u32>,
        /// The table, when the partnum resolves.
        object: Option<String>,
        owner: Option<Addr>,
    },
    /// A buffer from `onstat -X` whose waiter list holds this thread.
    Buffer {
        address: Addr,
        chunk: u32,
        page: u64,
        /// Table or index from the extent map; `None` when the page did not resolve.
        object: Option<String>,
        owner: Option<Addr>,
    },
    /// A mutex/latch (`onstat -s`, `-g lmx`).
    Latch { address: Addr },
    /// Anything else (checkpoint, log buffer, transaction, rollback), with the address if any.
    Other { address: Option<Addr> },
}

impl WaitTarget {
    /// The address waited on, whatever the kind.
    pub fn address(&self) -> Option<Addr> {
        match self {
            WaitTarget::Condition { address, .. }
            | WaitTarget::Lock { address, .. }
            | WaitTarget::Buffer { address, .. }
            | WaitTarget::Latch { address } => Some(*address),
            WaitTarget::Other { address } => *address,
        }
    }

    /// The thread holding what is waited on, where the sources say.
    pub fn owner(&self) -> Option<Addr> {
        match self {
            WaitTarget::Lock { owner, .. } | WaitTarget::Buffer { owner, .. } => {
                owner.filter(|o| o.0 != u64::MAX)
            }
            _ => None,
        }
    }

    /// The Waiters list's short form: the table or index name before its database
    /// (`HDR+X on customer (stores)`), so a narrow column still shows what is locked. The full
    /// `db:'owner'.name` is in the verdict and on the session screen.
    pub fn describe_short(&self) -> String {
        let short = |o: &str| match crate::parsers::oncheck_pe::split_object(o) {
            Some(n) => format!("{} ({})", n.name, n.database),
            None => o.to_string(),
        };
        match self {
            WaitTarget::Lock {
                lock_type: Some(t),
                object: Some(o),
                ..
            } => format!("{t} on {}", short(o)),
            WaitTarget::Buffer {
                chunk,
                page,
                object: Some(o),
                ..
            } => format!("{} {chunk}:{page}", short(o)),
            other => other.describe(),
        }
    }

    /// One line for the Waiters pane.
    pub fn describe(&self) -> String {
        match self {
            WaitTarget::Condition { address, name, .. } => match name {
                Some(n) => n.to_string(),
                None => format!("cond {address}"),
            },
            WaitTarget::Lock {
                address,
                lock_type,
                object,
                partnum,
                ..
            } => {
                // What is locked first (a narrow column shows that), the address last.
                let on = match (object, partnum) {
                    (Some(o), _) => Some(o.clone()),
                    (None, Some(p)) => Some(format!("partnum {p:x}")),
                    _ => None,
                };
                match (lock_type, on) {
                    (Some(t), Some(on)) => format!("{t} on {on} (lock {address})"),
                    (None, Some(on)) => format!("lock on {on} ({address})"),
                    (Some(t), None) => format!("{t} lock {address}"),
                    (None, None) => format!("lock {address}"),
                }
            }
            WaitTarget::Buffer {
                chunk,
                page,
                object,
                ..
            } => match object {
                Some(o) => format!("{o} ({chunk}:{page})"),
                None => format!("buffer {chunk}:{page}"),
            },
            WaitTarget::Latch { address } => format!("mutex {address}"),
            WaitTarget::Other { address } => match address {
                Some(a) => format!("{a}"),
                None => String::new(),
            },
        }
    }
}

/// Index of the sources a waiter is joined against, built once per snapshot.
#[derive(Debug, Default)]
pub struct WaitIndex<'a> {
    conditions: FxHashMap<Addr, (&'a str, u64)>,
    /// Waiting thread (rstcb) → the buffer whose waiter list holds it.
    buffers: FxHashMap<Addr, BufferRef>,
    /// Buffer header address → buffer, for a `B` waiter whose `onstat -u` wait column names the
    /// buffer but whom the (less often polled) `onstat -X` does not list as a waiter yet.
    buffers_by_address: FxHashMap<Addr, BufferRef>,
    locks: FxHashMap<Addr, &'a Lock>,
    tables: Option<&'a Systabnames>,
}

#[derive(Debug, Clone, Copy)]
struct BufferRef {
    address: Addr,
    chunk: u32,
    page: u64,
    owner: Option<Addr>,
}

impl<'a> WaitIndex<'a> {
    pub fn new(con: Option<&'a OnstatGCon>, x: Option<&'a OnstatX>) -> Self {
        let mut idx = WaitIndex::default();
        if let Some(con) = con {
            for c in &con.conditions {
                idx.conditions
                    .entry(c.addr)
                    .or_insert((c.name.as_str(), c.waittime));
            }
        }
        if let Some(x) = x {
            for b in x.pools.iter().flat_map(|p| &p.buffers) {
                let r = BufferRef {
                    address: b.address,
                    chunk: b.chunk,
                    page: b.page,
                    owner: b.owner,
                };
                idx.buffers_by_address.insert(b.address, r);
                for w in &b.waiters {
                    idx.buffers.insert(*w, r);
                }
            }
        }
        idx
    }

    /// Adds `onstat -k` (a lock waiter's wait address is a lock address) and the partnum → table
    /// names from `sysmaster:systabnames`, when collected.
    pub fn with_locks(mut self, k: Option<&'a OnstatK>, tables: Option<&'a Systabnames>) -> Self {
        if let Some(k) = k {
            self.locks = k.locks.iter().map(|l| (l.address, l)).collect();
        }
        self.tables = tables;
        self
    }

    /// The table a partnum names, when systabnames was read.
    pub fn table(&self, partnum: u32) -> Option<&'a str> {
        self.tables.and_then(|t| t.table(partnum))
    }

    /// Joins one waiting thread to what it waits on.
    pub fn target(
        &self,
        th: &UserThread,
        reason: WaitReason,
        extents: Option<&ExtentMap>,
        base_page_kb: u32,
    ) -> WaitTarget {
        match reason {
            WaitReason::Condition => {
                let address = th.wait.unwrap_or_default();
                let hit = self.conditions.get(&address);
                WaitTarget::Condition {
                    address,
                    name: hit.map(|(n, _)| CompactString::from(*n)),
                    waittime: hit.map(|(_, w)| *w),
                }
            }
            WaitReason::Buffer => match self.buffers.get(&th.address).or_else(|| {
                th.wait
                    .and_then(|a| self.buffers_by_address.get(&a))
                    // Its own buffer is no wait on itself.
                    .filter(|b| b.owner != Some(th.address))
            }) {
                Some(b) => WaitTarget::Buffer {
                    address: b.address,
                    chunk: b.chunk,
                    page: b.page,
                    object: extents.and_then(|m| match m.lookup(b.chunk, b.page, base_page_kb) {
                        Lookup::Resolved(hit) => Some(hit.object.description.to_string()),
                        _ => None,
                    }),
                    owner: b.owner,
                },
                None => WaitTarget::Other { address: th.wait },
            },
            WaitReason::Lock => {
                let address = th.wait.unwrap_or_default();
                match self.locks.get(&address) {
                    Some(l) => WaitTarget::Lock {
                        address,
                        lock_type: Some(l.lock_type.clone()),
                        partnum: Some(l.tblsnum),
                        object: self.table(l.tblsnum).map(String::from),
                        owner: l.owner.non_zero(),
                    },
                    None => WaitTarget::Lock {
                        address,
                        lock_type: None,
                        partnum: None,
                        object: None,
                        owner: None,
                    },
                }
            }
            WaitReason::Mutex => WaitTarget::Latch {
                address: th.wait.unwrap_or_default(),
            },
            _ => WaitTarget::Other { address: th.wait },
        }
    }
}

/// Counts of waiting threads per wait reason, in the order of `WaitReason::ALL`.
pub fn reason_counts(u: &OnstatU) -> [usize; 9] {
    let mut counts = [0usize; 9];
    for th in &u.threads {
        if let Some(r) = th.wait_reason {
            if let Some(i) = WaitReason::ALL.iter().position(|x| *x == r) {
                counts[i] += 1;
            }
        }
    }
    counts
}

/// Describes the flags in words, for the session screen.
pub fn flags_in_words(flags: &Flags) -> Vec<&'static str> {
    let mut v = Vec::new();
    if flags.is_defunct() {
        v.push("defunct");
        return v;
    }
    if let Some(r) = flags.wait_reason() {
        v.push(match r {
            WaitReason::Buffer => "waiting for a buffer",
            WaitReason::Checkpoint => "waiting for a checkpoint",
            WaitReason::LogBuffer => "waiting for a logical-log buffer write",
            WaitReason::Lock => "waiting for a lock",
            WaitReason::Mutex => "waiting for a mutex",
            WaitReason::Transaction => "waiting for a transaction",
            WaitReason::Condition => "waiting on a condition",
            WaitReason::Rollback => "waiting for rollback cleanup",
            WaitReason::Defunct => "defunct",
        });
    }
    match flags.txn_state() {
        Some('A') => v.push("backup thread"),
        Some('B') => v.push("transaction begun"),
        Some('P') => v.push("transaction prepared"),
        Some('X') => v.push("XA transaction prepared"),
        Some('C') => v.push("committing"),
        Some('R') => v.push("rolling back"),
        Some('H') => v.push("heuristically rolled back"),
        _ => {}
    }
    if flags.is_primary() {
        v.push("primary thread");
    }
    if flags.in_read() {
        v.push("in a read call");
    }
    if flags.in_critical_section() {
        v.push("in a critical section");
    }
    if flags.is_recovery() {
        v.push("recovery thread");
    }
    match flags.thread_kind() {
        Some('B') => v.push("btree cleaner"),
        Some('C') => v.push("terminated, awaiting cleanup"),
        Some('D') => v.push("daemon"),
        Some('F') => v.push("page cleaner"),
        Some('M') => v.push("monitor"),
        _ => {}
    }
    v
}
