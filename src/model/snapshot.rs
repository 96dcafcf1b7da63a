//! The snapshot: every pane's rows derived from the store at one moment. Views draw it, freeze
//! keeps it, `ifxtop snapshot` prints it. Rebuilt when data changes, never per frame.

use crate::ids::{Addr, Sid};
use crate::model::chains;
use crate::model::hotspots::HotspotRow;
use crate::model::numa::{self, NumaView};
use crate::model::sockets::SocketRow;
use crate::model::waiters::{WaitIndex, WaitTarget};
use crate::parsers::numa::NodeMeminfo;
use crate::parsers::onstat_u::{OnstatU, WaitReason};
use crate::parsers::sockets::Endpoint;
use crate::sample::Parsed;
use crate::source::Source;
use crate::store::Store;
use compact_str::CompactString;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

/// What the banner of the latest onstat said.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct ServerInfo {
    pub name: Option<String>,
    pub version: Option<String>,
    pub mode: Option<String>,
    pub mode_flags: Vec<String>,
    pub uptime_s: Option<u64>,
    pub blocked: Option<String>,
    /// The off-line message when the last onstat -u found the server down.
    pub offline: Option<String>,
}

/// A client socket joined to a session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SocketRef {
    pub local: Endpoint,
    pub remote: Endpoint,
    pub send_q: u64,
    pub recv_q: u64,
    pub max_send_q: u64,
}

impl From<&SocketRow> for SocketRef {
    fn from(r: &SocketRow) -> SocketRef {
        SocketRef {
            local: r.local.clone(),
            remote: r.remote.clone(),
            send_q: r.send_q,
            recv_q: r.recv_q,
            max_send_q: r.max_send_q,
        }
    }
}

/// One waiting thread, joined.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaiterRow {
    pub rstcb: Addr,
    pub sessid: Sid,
    pub user: CompactString,
    pub flags: CompactString,
    pub reason: WaitReason,
    pub waiting_on: WaitTarget,
    /// How long it has been in this wait, tracked across samples (seconds).
    pub in_wait_s: f64,
    pub locks: u64,
    pub reads_per_s: Option<f64>,
    pub writes_per_s: Option<f64>,
    /// A client session waiting for its client with nothing queued: not a problem.
    pub idle: bool,
    pub socket: Option<SocketRef>,
    /// The chain of blocking sessions, nearest first, up to the head blocker.
    pub blockers: Vec<Sid>,
    pub head_blocker: Option<Sid>,
    /// The chain loops back: a deadlock.
    pub deadlock: bool,
    /// One sentence saying why it waits (the common ones are static: thousands of idle
    /// sessions need no allocation each).
    pub verdict: Cow<'static, str>,
}

/// A head blocker: the root of a blocker tree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeadBlocker {
    pub sid: Sid,
    pub user: String,
    /// `running`, `in a read`, `waiting: condition`...
    pub state: String,
    pub locks: u64,
    /// Waiters whose chain ends at this session.
    pub blocked: usize,
}

/// Counts for the Waiters pane's summary line.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct WaitSummary {
    /// Per reason letter (B C G L S T Y X D): number of threads waiting.
    pub by_reason: BTreeMap<char, usize>,
    pub threads: usize,
    pub sessions: usize,
    pub idle: usize,
}

/// Health of one source, for the header and the status line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceStatus {
    pub source: String,
    pub age_s: Option<f64>,
    /// How often it is collected at an interval of 1 s: data older than a few periods is stale.
    pub period_s: f64,
    pub error: Option<String>,
    pub took_ms: u64,
    pub runs: u64,
    pub failures: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Snapshot {
    /// Session time the snapshot was built at (seconds).
    pub at_s: f64,
    pub server: ServerInfo,
    pub summary: WaitSummary,
    pub waiters: Vec<WaiterRow>,
    pub hotspots: Vec<HotspotRow>,
    pub sockets: Vec<SocketRow>,
    pub numa: NumaView,
    pub sources: Vec<SourceStatus>,
    /// Share of buffer pages with waiters that did not resolve through the extent map.
    pub unresolved_share: Option<f64>,
    pub extents_loaded: bool,
    /// The listener ports the Sockets pane filters on (empty: unknown, all connections).
    pub ports: Vec<u16>,
    /// Sessions that block others without being blocked themselves, most waiters first.
    pub heads: Vec<HeadBlocker>,
    /// The sessions drilled into, built with the rest so a frozen screen keeps them too.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<crate::model::session::SessionView>,
}

/// The condition a client session waits on when it waits for its client.
const CLIENT_WAIT: &str = "netnorm";

/// Fills each waiter's blocker chain from the owners of what they wait on.
fn join_chains(u: &OnstatU, waiters: &mut [WaiterRow]) {
    let owner_of: rustc_hash::FxHashMap<Addr, Addr> = waiters
        .iter()
        .filter_map(|w| w.waiting_on.owner().map(|o| (w.rstcb, o)))
        .collect();
    if owner_of.is_empty() {
        return;
    }
    let sid_of: rustc_hash::FxHashMap<Addr, Sid> =
        u.threads.iter().map(|t| (t.address, t.sessid)).collect();
    for w in waiters.iter_mut() {
        let c = chains::follow(w.rstcb, &owner_of);
        w.blockers = c
            .blockers
            .iter()
            .filter_map(|a| sid_of.get(a).copied())
            .collect();
        w.head_blocker = c.head.and_then(|a| sid_of.get(&a).copied());
        w.deadlock = c.cycle;
    }
}

/// "blocked by sid 812 (head blocker, holding 3 locks, in a read)".
fn blocker_words(row: &WaiterRow, u: &OnstatU) -> Option<String> {
    if row.deadlock {
        let sids: Vec<String> = row.blockers.iter().map(|s| s.to_string()).collect();
        return Some(format!("DEADLOCK with sid {}", sids.join(", ")));
    }
    let first = *row.blockers.first()?;
    let head = row.head_blocker?;
    let head_th = u
        .threads
        .iter()
        .find(|t| t.sessid == head && (t.flags.is_primary() || t.wait_reason.is_none()));
    let mut what = Vec::new();
    if first == head {
        what.push("head blocker".to_string());
    }
    if let Some(t) = head_th {
        what.push(format!(
            "holding {} lock{}",
            t.locks,
            if t.locks == 1 { "" } else { "s" }
        ));
        if t.flags.in_read() {
            what.push("in a read".into());
        } else if t.flags.in_critical_section() {
            what.push("in a critical section".into());
        } else if let Some(r) = t.wait_reason {
            what.push(format!("itself waiting: {}", r.words()));
        } else {
            what.push("running".into());
        }
    }
    let mut s = format!("blocked by sid {first}");
    if first != head {
        s.push_str(&format!(", head blocker sid {head}"));
    }
    if !what.is_empty() {
        s.push_str(&format!(" ({})", what.join(", ")));
    }
    Some(s)
}

fn verdict(row: &WaiterRow, u: &OnstatU) -> Cow<'static, str> {
    if let Some(b) = blocker_words(row, u) {
        let on = match &row.waiting_on {
            WaitTarget::Lock {
                object: Some(o), ..
            } => format!("waiting for a lock on {o}: "),
            WaitTarget::Lock { .. } => "waiting for a lock: ".to_string(),
            WaitTarget::Buffer {
                object: Some(o), ..
            } => {
                format!("waiting for a buffer of {o}: ")
            }
            WaitTarget::Buffer { chunk, page, .. } => {
                format!("waiting for buffer {chunk}:{page}: ")
            }
            _ => String::new(),
        };
        return Cow::Owned(format!("{on}{b}"));
    }
    match &row.waiting_on {
        WaitTarget::Condition { name, .. } if name.as_deref() == Some(CLIENT_WAIT) => {
            match &row.socket {
                Some(s) if s.send_q > 0 => Cow::Owned(format!(
                    "waiting for its client to read: {} queued on {} (see FET_BUF_SIZE)",
                    human_bytes(s.send_q),
                    s.remote
                )),
                Some(_) => Cow::Borrowed("idle: waiting for the client"),
                None => Cow::Borrowed("waiting for the client (its socket is not known)"),
            }
        }
        WaitTarget::Condition { name: Some(n), .. } => {
            Cow::Owned(format!("waiting on condition {n}"))
        }
        WaitTarget::Condition { address, .. } => {
            Cow::Owned(format!("waiting on condition {address}"))
        }
        WaitTarget::Buffer {
            object,
            chunk,
            page,
            ..
        } => Cow::Owned(match object {
            Some(o) => format!("waiting for a buffer of {o} (page {chunk}:{page})"),
            None => format!("waiting for buffer page {chunk}:{page} (not in the extent map)"),
        }),
        WaitTarget::Lock { .. } => Cow::Borrowed("waiting for a lock"),
        WaitTarget::Latch { address } => Cow::Owned(format!("waiting for mutex {address}")),
        WaitTarget::Other { .. } => match row.reason {
            WaitReason::Checkpoint => Cow::Borrowed("waiting for a checkpoint to finish"),
            WaitReason::LogBuffer => Cow::Borrowed("waiting for a logical-log buffer write"),
            WaitReason::Transaction => Cow::Borrowed("waiting for a transaction"),
            WaitReason::Rollback => Cow::Borrowed("waiting for rollback cleanup"),
            WaitReason::Buffer => Cow::Borrowed("waiting for a buffer (not in onstat -X)"),
            r => Cow::Owned(format!("waiting: {}", r.words())),
        },
    }
}

/// `245 KB`, `1.2 MB`, `812 B`.
pub fn human_bytes(n: u64) -> String {
    const K: f64 = 1024.0;
    let f = n as f64;
    if f < K {
        format!("{n} B")
    } else if f < K * K {
        format!("{:.0} KB", f / K)
    } else if f < K * K * K {
        format!("{:.1} MB", f / K / K)
    } else {
        format!("{:.1} GB", f / K / K / K)
    }
}

/// Builds every pane's rows from the store at `now`.
pub fn build(store: &Store, now: Duration, server_name: Option<&str>, focus: &[Sid]) -> Snapshot {
    let base = store.settings.base_page_kb;
    let extents = store.extents().map(|m| m.as_ref());
    let index = WaitIndex::new(store.onstat_g_con(), store.onstat_x())
        .with_locks(store.onstat_k(), store.systabnames());
    let mut sockets = store.sockets.rows();
    let client_row = match store.onstat_g_ntt() {
        Some(n) => crate::model::sockets::join_sessions(&mut sockets, n),
        None => Default::default(),
    };
    let socket_of = |sid: Sid| -> Option<SocketRef> {
        sockets.get(*client_row.get(&sid)?).map(SocketRef::from)
    };

    let mut server = ServerInfo {
        name: server_name.map(String::from),
        ..ServerInfo::default()
    };
    if let Some(st) = store.source(&Source::OnstatU) {
        if let Some(crate::error::SourceError::Offline { message }) = st.failing() {
            server.offline = Some(message.clone());
        }
    }
    let mut summary = WaitSummary::default();
    let mut waiters = Vec::new();
    let mut heads = Vec::new();
    if let Some(u) = store.onstat_u() {
        if let Some(h) = &u.header {
            server.version = Some(h.version.clone());
            server.mode = Some(h.mode.clone());
            server.mode_flags = h.mode_flags.clone();
            server.uptime_s = h.uptime_s;
            server.blocked = h.blocked.clone();
        }
        summary.threads = u.threads.len();
        let mut sessions: Vec<Sid> = u.threads.iter().map(|t| t.sessid).collect();
        sessions.sort_unstable();
        sessions.dedup();
        summary.sessions = sessions.len();
        for th in &u.threads {
            let Some(reason) = th.wait_reason else {
                continue;
            };
            *summary.by_reason.entry(reason.letter()).or_default() += 1;
            let target = index.target(th, reason, extents, base);
            let since = store.tracker.since(th.address).unwrap_or(now);
            let tracked = now.saturating_sub(since).as_secs_f64();
            // onstat -g con knows how long a condition wait has lasted, from before ifxtop ran.
            let reported = match &target {
                WaitTarget::Condition {
                    waittime: Some(w), ..
                } => *w as f64,
                _ => 0.0,
            };
            let rates = store.rates.get(th.address);
            let row = WaiterRow {
                rstcb: th.address,
                sessid: th.sessid,
                user: th.user.clone(),
                flags: CompactString::new(th.flags.as_str()),
                reason,
                waiting_on: target,
                in_wait_s: tracked.max(reported),
                locks: th.locks,
                reads_per_s: rates.map(|r| r.0),
                writes_per_s: rates.map(|r| r.1),
                idle: false,
                socket: socket_of(th.sessid),
                blockers: Vec::new(),
                head_blocker: None,
                deadlock: false,
                verdict: Cow::Borrowed(""),
            };
            waiters.push(row);
        }
        join_chains(u, &mut waiters);
        for row in &mut waiters {
            // Idle only when its socket is known to hold nothing: a netnorm wait with an
            // unknown socket may be the FET_BUF_SIZE case.
            row.idle = matches!(&row.waiting_on,
                WaitTarget::Condition { name, .. } if name.as_deref() == Some(CLIENT_WAIT))
                && row.socket.as_ref().is_some_and(|s| s.send_q == 0);
            if row.idle {
                summary.idle += 1;
            }
        }
        let ckpt = u.header.as_ref().and_then(|h| {
            h.blocked
                .as_ref()
                .map(|b| format!("Blocked:{b}"))
                .or_else(|| h.checkpoint_flag().map(String::from))
        });
        // A checkpoint cannot start while threads are inside critical sections: name them, they
        // are what the checkpoint (and so every C waiter) waits for.
        let mut critical: Vec<String> = u
            .threads
            .iter()
            .filter(|t| t.flags.in_critical_section())
            .map(|t| t.sessid.to_string())
            .collect();
        critical.sort_unstable();
        critical.dedup();
        for row in &mut waiters {
            row.verdict = verdict(row, u);
            if row.reason != WaitReason::Checkpoint {
                continue;
            }
            let mut why = Vec::new();
            if let Some(c) = &ckpt {
                why.push(format!("server {c}"));
            }
            if !critical.is_empty() {
                why.push(format!(
                    "in a critical section: sid {}",
                    critical.join(", ")
                ));
            }
            if !why.is_empty() {
                row.verdict
                    .to_mut()
                    .push_str(&format!(" ({})", why.join("; ")));
            }
        }
        let mut counts: BTreeMap<Sid, usize> = BTreeMap::new();
        for w in &waiters {
            if let Some(h) = w.head_blocker {
                *counts.entry(h).or_default() += 1;
            }
        }
        heads = counts
            .into_iter()
            .map(|(sid, blocked)| {
                let (state, locks, user) = crate::model::session::state_words(u, sid);
                HeadBlocker {
                    sid,
                    user,
                    state,
                    locks,
                    blocked,
                }
            })
            .collect();
        heads.sort_by(|a, b| b.blocked.cmp(&a.blocked).then(a.sid.cmp(&b.sid)));
    }

    let mut hotspots = store.hotspots.rows();
    if let Some(u) = store.onstat_u() {
        let users: rustc_hash::FxHashMap<Sid, &CompactString> =
            u.threads.iter().map(|t| (t.sessid, &t.user)).collect();
        for r in &mut sockets {
            r.user = r.sessid.and_then(|s| users.get(&s)).map(|u| (*u).clone());
        }
        let sid_of: rustc_hash::FxHashMap<Addr, Sid> =
            u.threads.iter().map(|t| (t.address, t.sessid)).collect();
        for h in &mut hotspots {
            h.owner_sid = h.owner.and_then(|o| sid_of.get(&o).copied());
        }
    }

    let meminfo: BTreeMap<u32, NodeMeminfo> = store
        .sources()
        .filter_map(|(s, st)| match (s, st.last_ok.as_ref()) {
            (Source::NodeMeminfo(n), Some((_, Parsed::NodeMeminfo(m)))) => {
                Some((*n, m.as_ref().clone()))
            }
            _ => None,
        })
        .collect();
    let cpulists: BTreeMap<u32, Vec<u32>> = store
        .sources()
        .filter_map(|(s, st)| match (s, st.last_ok.as_ref()) {
            (Source::NodeCpulist(n), Some((_, Parsed::CpuList(c)))) => Some((*n, c.to_vec())),
            _ => None,
        })
        .collect();
    let online = match store.parsed(&Source::NodesOnline) {
        Some(Parsed::NodeList(n)) => Some(n.as_slice()),
        _ => None,
    };
    let zone = match store.parsed(&Source::ZoneReclaimMode) {
        Some(Parsed::ZoneReclaimMode(z)) => Some(*z),
        _ => None,
    };
    let maps = store
        .sources()
        .filter_map(|(s, st)| match (s, st.last_ok.as_ref()) {
            (Source::NumaMaps(_), Some((_, Parsed::NumaMaps(m)))) => Some(m.as_ref()),
            _ => None,
        })
        .collect();
    let numa = numa::build(&numa::NumaInputs {
        online,
        meminfo: &meminfo,
        cpulists: &cpulists,
        zone_reclaim_mode: zone,
        scan: &store.scan,
        numa_maps: maps,
    });

    let sources = store
        .sources()
        .filter(|(s, _)| {
            !matches!(
                s,
                Source::NodeMeminfo(_) | Source::NodeCpulist(_) | Source::NumaMaps(_)
            )
        })
        .map(|(s, st)| SourceStatus {
            source: s.label(),
            age_s: st.age(now).map(|a| a.as_secs_f64()),
            period_s: s.period().as_secs_f64(),
            error: st.failing().map(|e| e.to_string()),
            took_ms: u64::try_from(st.last_took.as_millis()).unwrap_or(u64::MAX),
            runs: st.runs,
            failures: st.failures,
        })
        .collect();

    let sessions = focus
        .iter()
        .map(|sid| crate::model::session::build(store, &waiters, &sockets, *sid, now))
        .collect();
    Snapshot {
        heads,
        sessions,
        at_s: now.as_secs_f64(),
        server,
        summary,
        waiters,
        hotspots,
        sockets,
        numa,
        sources,
        unresolved_share: store.hotspots.unresolved_share(),
        ports: store.settings.ports.clone(),
        extents_loaded: extents.is_some(),
    }
}

impl WaiterRow {
    /// The default order, largest first: what deserves a look first (see `concern`), the
    /// longest wait first within each; idle client waits last, whatever their age. One number,
    /// so the Waiters pane sorts and reverses by it, and the text report orders the same way.
    pub fn priority(&self) -> f64 {
        if self.idle {
            -1.0 / (1.0 + self.in_wait_s)
        } else {
            f64::from(self.concern()) * 1e9 + self.in_wait_s.min(1e8)
        }
    }

    /// How much this wait deserves a look, for the default order: waits on a session or a
    /// resource (lock, buffer, checkpoint, log buffer, transaction) first, then client waits with
    /// data queued, other conditions and mutexes, client waits whose socket is unknown, and idle
    /// client waits last.
    pub fn concern(&self) -> u8 {
        if self.idle {
            return 0;
        }
        match &self.waiting_on {
            WaitTarget::Condition { name, .. } if name.as_deref() == Some(CLIENT_WAIT) => {
                match &self.socket {
                    Some(s) if s.send_q > 0 => 3,
                    _ => 1,
                }
            }
            // Mutex waits come and go within a sample: a long one still sorts by its time.
            WaitTarget::Condition { .. } | WaitTarget::Latch { .. } => 2,
            _ => 4,
        }
    }
}
