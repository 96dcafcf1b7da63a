//! One session, drilled into: who it is, what it waits on and for how long, who blocks it up to
//! the head blocker, its locks, its SQL, its socket, and its recent wait history.

use crate::ids::{Addr, Sid};
use crate::model::snapshot::{SocketRef, WaiterRow};
use crate::model::waiters::{flags_in_words, WaitSpan};
use crate::parsers::onstat_u::OnstatU;
use crate::sample::Parsed;
use crate::source::Source;
use crate::store::Store;
use serde::Serialize;

/// One thread of the session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionThread {
    pub rstcb: Addr,
    pub tid: Option<u64>,
    pub name: Option<String>,
    pub flags: String,
    pub in_words: Vec<&'static str>,
    pub locks: u64,
    pub nreads: u64,
    pub nwrites: u64,
}

/// One step of the blocker chain.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChainLink {
    pub sid: Sid,
    pub user: String,
    /// What that session is doing: `running`, `in a read`, `waiting: lock`...
    pub state: String,
    pub locks: u64,
    pub head: bool,
}

/// A lock the session holds or waits for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LockLine {
    pub address: Addr,
    pub lock_type: String,
    pub table: String,
    pub rowid: String,
    /// Another thread waits for it.
    pub contended: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct SessionView {
    pub sid: Sid,
    pub user: Option<String>,
    pub tty: Option<String>,
    pub client_host: Option<String>,
    pub client_pid: Option<u64>,
    pub threads: Vec<SessionThread>,
    /// The session's waiting thread, joined (None when it does not wait).
    pub waiter: Option<WaiterRow>,
    pub chain: Vec<ChainLink>,
    pub locks: Vec<LockLine>,
    pub sql: Option<String>,
    pub socket: Option<SocketRef>,
    pub send_q_trend: Vec<u64>,
    pub history: Vec<WaitSpan>,
    pub verdict: String,
    /// What could not be known, and why (a source not collected, not in the recording...).
    pub notes: Vec<String>,
    /// The session no longer appears in onstat -u.
    pub gone: bool,
}

fn onstat_u(store: &Store) -> Option<&OnstatU> {
    match store.parsed(&Source::OnstatU) {
        Some(Parsed::OnstatU(u)) => Some(u),
        _ => None,
    }
}

/// What a session is doing, in a few words, from its threads.
pub fn state_words(u: &OnstatU, sid: Sid) -> (String, u64, String) {
    let threads: Vec<_> = u.threads.iter().filter(|t| t.sessid == sid).collect();
    let locks = threads.iter().map(|t| t.locks).sum();
    let user = threads
        .first()
        .map(|t| t.user.to_string())
        .unwrap_or_default();
    let primary = threads
        .iter()
        .find(|t| t.flags.is_primary())
        .or(threads.first());
    let state = match primary {
        None => "gone".to_string(),
        Some(t) => match t.wait_reason {
            Some(r) => format!("waiting: {}", r.words()),
            None if t.flags.in_read() => "in a read".to_string(),
            None if t.flags.in_critical_section() => "in a critical section".to_string(),
            None => "running".to_string(),
        },
    };
    (state, locks, user)
}

/// Builds the session screen's content from the store and the current snapshot's waiter rows.
pub fn build(store: &Store, waiters: &[WaiterRow], sid: Sid) -> SessionView {
    let mut v = SessionView {
        sid,
        ..SessionView::default()
    };
    let Some(u) = onstat_u(store) else {
        v.notes.push("no onstat -u data yet".into());
        return v;
    };
    for t in u.threads.iter().filter(|t| t.sessid == sid) {
        if v.user.is_none() {
            v.user = Some(t.user.to_string());
            v.tty = t.tty.as_ref().map(|s| s.to_string());
        }
        v.threads.push(SessionThread {
            rstcb: t.address,
            tid: None,
            name: None,
            flags: t.flags.to_string(),
            in_words: flags_in_words(&t.flags),
            locks: t.locks,
            nreads: t.nreads,
            nwrites: t.nwrites,
        });
    }
    v.gone = v.threads.is_empty();
    if v.gone {
        v.notes.push(format!(
            "session {sid} is not in the latest onstat -u (it ended?)"
        ));
    }
    v.waiter = waiters.iter().find(|w| w.sessid == sid).cloned();
    if let Some(w) = &v.waiter {
        v.verdict = w.verdict.clone();
        v.socket = w.socket.clone();
        for (i, b) in w.blockers.iter().enumerate() {
            let (state, locks, user) = state_words(u, *b);
            v.chain.push(ChainLink {
                sid: *b,
                user,
                state,
                locks,
                head: i + 1 == w.blockers.len() && !w.deadlock,
            });
        }
    } else if !v.gone {
        let (state, ..) = state_words(u, sid);
        v.verdict = format!("not waiting ({state})");
    }
    if let Some(s) = &v.socket {
        v.send_q_trend = store
            .sockets
            .rows()
            .into_iter()
            .find(|r| r.remote == s.remote && r.local == s.local)
            .map(|r| r.trend)
            .unwrap_or_default();
    }
    v.history = store.tracker.history(sid);
    v
}
