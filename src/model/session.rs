//! One session, drilled into: who it is, what it waits on and for how long, who blocks it up to
//! the head blocker, its locks, its SQL, its socket, and its recent wait history.

use crate::ids::{Addr, Sid};
use crate::model::waiters::{flags_in_words, state_words, WaitTarget};
use crate::model::waiters::{SocketRef, WaiterRow};
use crate::parsers::onstat_g_ath::AthThread;
use crate::parsers::onstat_k::OnstatK;
use crate::parsers::systabnames::Systabnames;
use crate::source::Source;
use crate::store::sockets::SocketRow;
use crate::store::waits::WaitSpan;
use crate::store::Store;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// One thread of the session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionThread {
    pub(crate) rstcb: Addr,
    pub tid: Option<u64>,
    pub name: Option<String>,
    /// The `onstat -g ath` status (`cond wait netnorm`, `running`...).
    pub status: Option<String>,
    pub(crate) flags: String,
    pub(crate) in_words: Vec<&'static str>,
    pub(crate) locks: u64,
    pub(crate) nreads: u64,
    pub(crate) nwrites: u64,
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
    pub(crate) address: Addr,
    pub lock_type: String,
    pub table: String,
    pub rowid: String,
    /// Another thread waits for it.
    pub contended: bool,
    /// Held by the session (false: the lock it waits for).
    pub held: bool,
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
    /// The sessions it holds up: those it blocks directly first, then those further down their
    /// chains.
    pub blocking: Vec<Sid>,
    pub locks: Vec<LockLine>,
    pub sql: Option<String>,
    /// `sql` is the last statement parsed, not one running now.
    pub sql_is_last_parsed: bool,
    /// `onstat -g sql <sid>` or `-g ses <sid>` answered, so no `sql` means it has none.
    pub sql_collected: bool,
    pub database: Option<String>,
    /// The client program (`onstat -g ses <sid>`).
    pub program: Option<String>,
    /// `onstat -k` was collected, so an empty `locks` means none.
    pub locks_known: bool,
    pub socket: Option<SocketRef>,
    pub send_q_trend: Vec<u64>,
    pub history: Vec<WaitSpan>,
    /// When the history ends (the snapshot's time, seconds): the last span lasts until then.
    pub history_end_s: f64,
    pub verdict: String,
    /// What could not be known, and why (a source not collected, not in the recording...).
    pub notes: Vec<String>,
    /// The session no longer appears in onstat -u.
    pub gone: bool,
    /// One of its threads is inside a critical section: checkpoints wait for it.
    pub critical_section: bool,
    /// The command that would end it, for a head blocker whose locks or transaction hold
    /// others up (ifxtop itself only reads).
    pub kill_command: Option<String>,
    /// What helps, for a head blocker, in words (where `onmode -z` does not help, what does).
    pub action: Option<String>,
    /// Its threads' CPU use between the last two `onstat -g cpu` samples (% of one core), a
    /// lower bound when `cpu_at_least`, and the samples' session seconds.
    pub cpu_percent: Option<f64>,
    pub cpu_at_least: bool,
    pub cpu_over_s: Option<(f64, f64)>,
}

/// The session's lock lines from `onstat -k`: those its threads hold, then the one it waits for.
fn lock_lines(
    k: &OnstatK,
    rstcbs: &[Addr],
    waiting_for: Option<Addr>,
    tables: Option<&Systabnames>,
) -> Vec<LockLine> {
    let line = |l: &crate::parsers::onstat_k::Lock, held: bool| LockLine {
        address: l.address,
        lock_type: l.lock_type.to_string(),
        table: tables
            .and_then(|t| t.table(l.tblsnum))
            .map_or_else(|| format!("partnum {:x}", l.tblsnum), String::from),
        rowid: format!("{:x}", l.rowid),
        // Another thread waits for a lock held; the one waited for is contended by definition.
        contended: !held || l.wtlist.is_some(),
        held,
    };
    let mut out: Vec<LockLine> = k
        .locks
        .iter()
        .filter(|l| rstcbs.contains(&l.owner))
        .map(|l| line(l, true))
        .collect();
    // Those others wait for first: they are why this session matters.
    out.sort_by_key(|l| !l.contended);
    if let Some(l) = waiting_for.and_then(|w| k.locks.iter().find(|l| l.address == w)) {
        out.push(line(l, false));
    }
    out
}

/// Builds the session screen's content from the store, the snapshot's waiter rows and its
/// socket rows (already joined to sessions).
pub(crate) fn build(
    store: &Store,
    waiters: &[WaiterRow],
    sockets: &[SocketRow],
    sid: Sid,
    now: std::time::Duration,
) -> SessionView {
    let mut v = SessionView {
        sid,
        history_end_s: now.as_secs_f64(),
        ..SessionView::default()
    };
    if let (Some(c), Some((from, to))) = (store.cpu.get(sid), store.cpu.interval()) {
        v.cpu_percent = Some(c.cores * 100.0);
        v.cpu_at_least = c.at_least;
        v.cpu_over_s = Some((from.as_secs_f64(), to.as_secs_f64()));
    }
    let Some(u) = store.get(crate::source::key::OnstatU) else {
        v.notes.push("no onstat -u data yet".into());
        return v;
    };
    let ath = store.get(crate::source::key::OnstatGAth);
    // A thread's name and id do not change; its status does within a second: shown only from
    // an onstat -g ath read at the moment of the onstat -u (else its flags say what it does).
    let status_now = store
        .get_at_moment(crate::source::key::OnstatGAth)
        .is_some();
    let by_rstcb: FxHashMap<Addr, &AthThread> = ath
        .map(|a| {
            a.threads
                .iter()
                .filter_map(|t| t.rstcb.map(|r| (r, t)))
                .collect()
        })
        .unwrap_or_default();
    for t in u.threads.iter().filter(|t| t.sessid == sid) {
        if v.user.is_none() {
            v.user = Some(t.user.to_string());
            v.tty = t.tty.as_ref().map(|s| s.to_string());
        }
        let a = by_rstcb.get(&t.address);
        v.threads.push(SessionThread {
            rstcb: t.address,
            tid: a.map(|a| a.tid.0),
            name: a.map(|a| a.name.to_string()),
            status: a.filter(|_| status_now).map(|a| a.status.clone()),
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
    if ath.is_some() && !status_now && !v.gone {
        let age = match (store.moment(), store.observed(Source::OnstatGAth)) {
            (Some(m), Some(t)) => crate::format::human_duration(m.saturating_sub(t).as_secs_f64()),
            _ => "-".into(),
        };
        v.notes.push(format!(
            "status: onstat -g ath is {age} older than this moment (flags are of the moment)"
        ));
    }
    if ath.is_none() && !v.gone {
        v.notes
            .push("thread names: no onstat -g ath data (not collected yet)".into());
    }
    v.waiter = waiters.iter().find(|w| w.sessid == sid).cloned();
    if let Some(w) = &v.waiter {
        v.verdict = w.verdict.to_string();
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
    }
    let mut held_up: Vec<(usize, Sid)> = waiters
        .iter()
        .filter_map(|w| Some((w.blockers.iter().position(|b| *b == sid)?, w.sessid)))
        .collect();
    held_up.sort_unstable();
    held_up.dedup_by_key(|(_, s)| *s);
    v.blocking = held_up.into_iter().map(|(_, s)| s).collect();
    v.critical_section = v
        .threads
        .iter()
        .any(|t| t.flags.as_bytes().get(4) == Some(&b'X'));
    let checkpoint_waiters = waiters
        .iter()
        .filter(|w| w.reason == crate::parsers::onstat_u::WaitReason::Checkpoint)
        .count();
    if v.waiter.is_none() && !v.gone {
        let (state, ..) = state_words(u, sid);
        v.verdict = if v.critical_section && checkpoint_waiters > 0 {
            format!(
                "holds up the checkpoint: in a critical section while {} for the checkpoint",
                crate::format::count(checkpoint_waiters as u64, "session waits", "sessions wait")
            )
        } else if !v.blocking.is_empty() {
            format!(
                "head blocker: holds up {} session{} ({state})",
                v.blocking.len(),
                if v.blocking.len() == 1 { "" } else { "s" }
            )
        } else {
            format!("not waiting ({state})")
        };
    }
    // Ending the head blocker is the DBA's call; ifxtop names the command and runs nothing.
    let blocked_itself = v.waiter.as_ref().is_some_and(|w| !w.blockers.is_empty());
    if !v.blocking.is_empty() && !blocked_itself && !v.gone {
        let action = crate::model::harm::action_for(u, waiters, sid);
        v.kill_command = action.as_ref().and_then(|a| a.command.clone());
        v.action = action.map(|a| a.words);
        // The oldest open transaction holding the logs: where it began and what it spans.
        if let Some(l) = store.get(crate::source::key::OnstatL) {
            let current = l.logs.iter().find(|f| f.is_current());
            let oldest = crate::model::vitals::oldest_transaction(
                store.get(crate::source::key::OnstatXTxn),
                Some(u),
                current.map(|f| f.uniqid),
            );
            let rolling_back = v
                .threads
                .iter()
                .any(|t| t.flags.as_bytes().get(2) == Some(&b'R'));
            // Worth saying once it holds more than the current log, or rolls back.
            if let Some(o) =
                oldest.filter(|o| o.sessid == Some(sid) && (o.logs_spanned > 1 || rolling_back))
            {
                v.notes.push(format!(
                    "the oldest open transaction: began in log {}, spans {} of {} logs{}",
                    o.begin_log,
                    o.logs_spanned,
                    l.logs.len(),
                    if rolling_back { ", rolling back" } else { "" }
                ));
            }
        }
        if v.waiter.is_some() {
            // Waiting itself (for its client, say) while holding what others wait for.
            v.verdict = format!(
                "head blocker: holds up {} session{} while {}",
                v.blocking.len(),
                if v.blocking.len() == 1 { "" } else { "s" },
                v.verdict
            );
        }
    }
    if let Some(r) = sockets.iter().find(|r| r.sessid == Some(sid)) {
        v.socket = Some(SocketRef::from(r));
        v.send_q_trend = r.trend.clone();
    }
    // Client host and pid: onstat -g ses <sid>, else the host onstat -g ntt printed.
    if let Some(ses) = store.get(crate::source::key::OnstatGSes(sid)) {
        v.sql_collected = true;
        if let Some(row) = ses.sessions.iter().find(|r| r.sid == sid) {
            v.client_host = row.hostname.as_ref().map(|h| h.to_string());
            v.client_pid = row.pid;
        }
        if let Some(d) = &ses.detail {
            v.program = d.program.clone();
            if v.sql.is_none() {
                v.sql = d.current_sql.clone();
                v.sql_is_last_parsed = false;
            }
            if v.sql.is_none() {
                v.sql = d.last_parsed_sql.clone();
                v.sql_is_last_parsed = v.sql.is_some();
            }
            v.database = d
                .sql
                .as_ref()
                .and_then(|q| q.database.as_ref().map(|d| d.to_string()));
        }
    }
    if v.client_host.is_none() {
        if let Some(n) = store.get(crate::source::key::OnstatGNtt) {
            v.client_host = n
                .threads
                .iter()
                .find(|t| t.sid == sid)
                .and_then(|t| t.client.as_ref())
                .map(|c| c.host.to_string());
        }
    }
    // The current statement: onstat -g sql <sid> is fresher than the ses detail.
    if let Some(q) = store.get(crate::source::key::OnstatGSql(sid)) {
        v.sql_collected = true;
        if let Some(cur) = &q.current_sql {
            v.sql = Some(cur.clone());
            v.sql_is_last_parsed = false;
        } else if v.sql.is_none() {
            v.sql = q.last_parsed_sql.clone();
            v.sql_is_last_parsed = v.sql.is_some();
        }
        if let Some(st) = q.sessions.iter().find(|r| r.sid == sid) {
            if let Some(db) = &st.database {
                v.database = Some(db.to_string());
            }
        }
    }
    if let Some(k) = store.get(crate::source::key::OnstatK) {
        let rstcbs: Vec<Addr> = v.threads.iter().map(|t| t.rstcb).collect();
        let waiting_for = v.waiter.as_ref().and_then(|w| match &w.waiting_on {
            WaitTarget::Lock { address, .. } => Some(*address),
            _ => None,
        });
        v.locks = lock_lines(
            k,
            &rstcbs,
            waiting_for,
            store.get(crate::source::key::Systabnames),
        );
        v.locks_known = true;
    }
    v.history = store.tracker.history(sid);
    v
}
