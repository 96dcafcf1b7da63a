//! One session, drilled into: who it is, what it waits on and for how long, who blocks it up to
//! the head blocker, its locks, its SQL, its socket, and its recent wait history.

use crate::ids::{Addr, Sid};
use crate::model::waiters::{flags_in_words, state_words, WaitTarget};
use crate::model::waiters::{SocketRef, WaiterRow};
use crate::parsers::onstat_g_ath::AthThread;
use crate::parsers::onstat_g_pqs::{OnstatGPqs, Operator};
use crate::parsers::onstat_k::OnstatK;
use crate::parsers::onstat_u::OnstatU;
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

/// One operator of the query the session runs (`onstat -g pqs <sid>`), in plan order: each
/// operator, then its inputs (in1 then in2) one level deeper.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanStep {
    /// 0 for the operator no other reads from (the plan's root), 1 for its inputs, ...
    pub depth: usize,
    /// `scan`, `nljoin`, `hjoin`, `sort`, ...
    pub opname: String,
    /// `open`, `next`, `close`, ...
    pub phase: String,
    /// Rows the operator has processed.
    pub rows: u64,
    /// Seconds spent in it.
    pub time_s: f64,
}

impl PlanStep {
    /// `nljoin  next  224,717 rows  1.82s`, indented two blanks a level: how the session
    /// screen and `ifxtop snapshot` print it.
    pub fn line(&self) -> String {
        let time = if self.time_s < 60.0 {
            format!("{:.2}s", self.time_s)
        } else {
            crate::format::human_duration(self.time_s)
        };
        format!(
            "{}{}  {}  {} rows  {time}",
            "  ".repeat(self.depth.min(8)),
            self.opname,
            self.phase,
            crate::format::thousands(self.rows)
        )
    }
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
    /// The running query's operators as a tree (`onstat -g pqs <sid>`, asked while the
    /// session's screen is open).
    pub plan: Vec<PlanStep>,
    /// `onstat -g pqs <sid>` answered, so an empty `plan` means no query running.
    pub plan_collected: bool,
    /// How long before the moment shown it answered (seconds): the plan is of then, and the
    /// session may have moved on (it is read every 5 s, the state every second).
    pub plan_age_s: Option<f64>,
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
    /// Its pool's memory, from the newer of `onstat -g ses` (the list, every 30 s) and
    /// `onstat -g ses <sid>` (this screen's, every 5 s), with the moment it was read.
    pub memory: Option<SessionMemory>,
    /// The list read at this moment (session seconds) did not name it (it started since) and
    /// no `onstat -g ses <sid>` told it: its memory is not known.
    pub memory_missing_at_s: Option<f64>,
}

/// A session's memory as one `onstat -g ses` printed it: a slow fact, with its moment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SessionMemory {
    /// `total memory`: what its pool holds.
    pub total_bytes: u64,
    /// `used memory`.
    pub used_bytes: u64,
    /// When it was read (session seconds).
    pub at_s: f64,
    /// Read with `onstat -g ses <sid>` (else the list, `onstat -g ses`).
    pub by_sid: bool,
}

/// Whether the session that owned the oldest open transaction's thread when `onstat -x` was
/// read still has that thread in `u`: its sid at that address with counters that did not go
/// back (a session given the freed sid and rstcb again since is another).
fn still_owns_oldest(store: &Store, u: &OnstatU) -> bool {
    store.logs.oldest().is_some_and(|o| {
        o.owner.as_ref().is_some_and(|w| {
            u.threads
                .iter()
                .any(|th| th.address == o.userthread && w.is(th))
        })
    })
}

/// Session `sid`'s memory from the newer of the list and its own `-g ses <sid>`; else, when the
/// list was read without it, that moment.
fn memory(store: &Store, sid: Sid) -> (Option<SessionMemory>, Option<f64>) {
    use crate::source::{key, Key};
    let read = |k: Key<crate::parsers::onstat_g_ses::OnstatGSes>, by_sid: bool| {
        let at = store.observed(k.source())?;
        let ses = store.get(k)?;
        Some((at, ses.sessions.iter().find(|r| r.sid == sid), by_sid))
    };
    let list = read(key::OnstatGSesList, false);
    let own = read(key::OnstatGSes(sid), true);
    let newest = [list, own]
        .into_iter()
        .flatten()
        .filter_map(|(at, row, by_sid)| row.map(|r| (at, r, by_sid)))
        .max_by_key(|(at, ..)| *at)
        .map(|(at, r, by_sid)| SessionMemory {
            total_bytes: r.total_memory,
            used_bytes: r.used_memory,
            at_s: at.as_secs_f64(),
            by_sid,
        });
    let missing = match (&newest, list) {
        (None, Some((at, None, _))) => Some(at.as_secs_f64()),
        _ => None,
    };
    (newest, missing)
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

/// Session `sid`'s operators as a tree: each root (an operator no other names as its in1 or
/// in2) in the order printed, then its in1 and in2 below it, depth first. An input that is not
/// among the rows (a cut output) is left out; an operator reached by no root (inputs naming
/// each other in a circle) is shown as a root of its own, so that no row is lost.
pub(crate) fn plan(pqs: &OnstatGPqs, sid: Sid) -> Vec<PlanStep> {
    let ops: Vec<&Operator> = pqs.of_session(sid).collect();
    let index: FxHashMap<Addr, usize> = ops
        .iter()
        .enumerate()
        .rev()
        .map(|(i, o)| (o.addr, i))
        .collect();
    let read_by_another: Vec<bool> = {
        let mut named = vec![false; ops.len()];
        for (i, o) in ops.iter().enumerate() {
            for input in [o.in1, o.in2].into_iter().flatten() {
                match index.get(&input) {
                    Some(&j) if j != i => named[j] = true,
                    _ => {}
                }
            }
        }
        named
    };
    let mut seen = vec![false; ops.len()];
    let mut out = Vec::with_capacity(ops.len());
    let roots = (0..ops.len())
        .filter(|&i| !read_by_another[i])
        .chain(0..ops.len());
    for root in roots {
        if seen[root] {
            continue;
        }
        // Depth first without recursion: a long chain from a garbled output cannot overflow.
        let mut stack = vec![(root, 0usize)];
        while let Some((i, depth)) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            let o = ops[i];
            out.push(PlanStep {
                depth,
                opname: crate::format::printable(&o.opname),
                phase: crate::format::printable(&o.phase),
                rows: o.rows,
                time_s: o.time_s,
            });
            // in2 pushed first so that in1 comes out first.
            for input in [o.in2, o.in1].into_iter().flatten() {
                if let Some(&j) = index.get(&input) {
                    if !seen[j] {
                        stack.push((j, depth + 1));
                    }
                }
            }
        }
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
    (v.memory, v.memory_missing_at_s) = memory(store, sid);
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
            status: a.filter(|_| status_now).map(|a| a.status.to_string()),
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
    // The oldest open transaction, when this session holds it: what keeps the logs from being
    // freed, whether or not anyone waits for it yet.
    let oldest = store
        .get(crate::source::key::OnstatL)
        .and_then(|l| {
            let current = l.logs.iter().find(|f| f.is_current());
            crate::model::vitals::oldest_transaction(store, current.map(|f| f.uniqid))
                .map(|o| (o, l.logs.len()))
        })
        .filter(|(o, _)| o.sessid == Some(sid) && still_owns_oldest(store, u));
    let rolling_back = v
        .threads
        .iter()
        .any(|t| t.flags.as_bytes().get(2) == Some(&b'R'));
    let holds_oldest = oldest.as_ref().map(|(o, _)| {
        let age = o
            .age(now.as_secs_f64())
            .map(|(s, at_least)| {
                format!(
                    ", open {}",
                    crate::format::human_duration_bound(s, at_least)
                )
            })
            .unwrap_or_default();
        format!(
            "holds the oldest open transaction{age} (spans {} of the logical logs{})",
            o.logs_spanned,
            if rolling_back { ", rolling back" } else { "" }
        )
    });
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
        } else if let Some(h) = &holds_oldest {
            format!("not waiting ({state}); {h}")
        } else {
            format!("not waiting ({state})")
        };
    }
    if let Some((o, total)) = &oldest {
        v.notes.push(format!(
            "the oldest open transaction: began in log {}, spans {} of {} logs{}",
            o.begin_log,
            o.logs_spanned,
            total,
            if rolling_back { ", rolling back" } else { "" }
        ));
    }
    // Ending the head blocker is the DBA's call; ifxtop names the command and runs nothing.
    let blocked_itself = v.waiter.as_ref().is_some_and(|w| !w.blockers.is_empty());
    if !v.blocking.is_empty() && !blocked_itself && !v.gone {
        let action = crate::model::harm::action_for(u, waiters, sid);
        v.kill_command = action.as_ref().and_then(|a| a.command.clone());
        v.action = action.map(|a| a.words);
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
    if let Some(pqs) = store.get(crate::source::key::OnstatGPqs(sid)) {
        v.plan = plan(pqs, sid);
        v.plan_collected = true;
        v.plan_age_s = store
            .observed(Source::OnstatGPqs(sid))
            .map(|t| now.saturating_sub(t).as_secs_f64());
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

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn steps(text: &str, sid: u64) -> Vec<(usize, String, u64)> {
        let pqs = crate::parsers::onstat_g_pqs::parse(text).expect("pqs");
        plan(&pqs, Sid(sid))
            .into_iter()
            .map(|s| (s.depth, s.opname, s.rows))
            .collect()
    }

    /// The root is the operator nobody reads from, whatever the order printed; in1 before in2.
    #[test]
    fn the_plan_is_a_tree_root_first_in1_then_in2() {
        let text = "Query Operators:\n\
            a3 5 scan next 10 00:00.01 0 0 SELECT\n\
            a1 5 hjoin next 7 00:01.00 a2 a3 SELECT\n\
            a9 6 scan next 1 00:00.00 0 0 SELECT\n\
            a2 5 sort next 20 00:00.50 a4 0 SELECT\n\
            a4 5 scan next 30 00:00.40 0 0 SELECT\n";
        let s = |d, n: &str, r| (d, n.to_string(), r);
        assert_eq!(
            steps(text, 5),
            [
                s(0, "hjoin", 7),
                s(1, "sort", 20),
                s(2, "scan", 30),
                s(1, "scan", 10)
            ]
        );
        assert_eq!(steps(text, 6), [s(0, "scan", 1)]);
        assert!(steps(text, 7).is_empty());
    }

    /// Inputs naming each other in a circle, or missing rows: every row is shown once.
    #[test]
    fn a_garbled_plan_loses_no_row_and_ends() {
        let text = "a1 5 nljoin next 1 00:00.00 a2 ff SELECT\n\
            a2 5 nljoin next 2 00:00.00 a1 a2 SELECT\n\
            a3 5 scan next 3 00:00.00 a3 0 SELECT\n";
        let got = steps(text, 5);
        assert_eq!(got.len(), 3, "{got:?}");
        let mut rows: Vec<u64> = got.iter().map(|g| g.2).collect();
        rows.sort_unstable();
        assert_eq!(rows, [1, 2, 3]);
    }
}
