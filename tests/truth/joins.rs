//! The joins against the truth: every waiter's state, whether it is idle, its direct blocker
//! (per kind of wait: named, unknown or wrong), its head blocker and the age of its wait; the
//! head blockers and the action offered for each; every mutex that truly has waiters and its
//! holder; an idle session's open transaction; and that the panes count alike.

use crate::report::Report;
use crate::walk::Moment;
use ifxtop::demo::truth::State;

/// How close an exact age must be (seconds). The demo's truth is per second and the collectors
/// sample on the whole second of a paused clock, so a wait ifxtop saw begin began at the sample
/// that first showed it: its age at the build is the truth's plus the half second to the build,
/// to the few milliseconds parts of one call may lie apart. Half a second too long or a second
/// too short is wrong.
pub const EXACT_S: f64 = 0.1;

/// The name a held-up wait is counted under, by the waiter's true state.
fn blocker_kind(st: State) -> Option<&'static str> {
    Some(match st {
        State::Lock => "blocker: lock",
        State::Buffer => "blocker: buffer",
        State::Mutex => "blocker: mutex",
        State::Checkpoint => "blocker: checkpoint",
        State::LogWait => "blocker: log",
        _ => return None,
    })
}

/// An age shown against the true one (both at the build): exact within [`EXACT_S`], or a
/// flagged lower bound not above it.
pub fn judge_age(
    r: &mut Report,
    kind: &'static str,
    shown: f64,
    at_least: bool,
    truth: f64,
    what: impl Fn() -> String,
) {
    if shown > truth + EXACT_S {
        r.wrong(
            kind,
            format!("{}: shown {shown:.2}s, true {truth:.2}s", what()),
        );
    } else if truth - shown > EXACT_S && !at_least {
        r.wrong(
            kind,
            format!(
                "{}: shown {shown:.2}s (not as a lower bound), true {truth:.2}s",
                what()
            ),
        );
    } else if truth - shown > EXACT_S {
        r.silent(
            kind,
            format!("{}: shown ≥{shown:.2}s, true {truth:.2}s", what()),
        );
    } else {
        r.right(kind);
    }
}

/// Compares one snapshot's joins with the truth at the moment of its `onstat -u`.
pub fn compare(m: &Moment<'_>, r: &mut Report) {
    let (snap, truth, at) = (m.snap, m.truth, m.at.as_str());
    let mut seen_waiting: Vec<u64> = Vec::new();
    for w in &snap.waiters {
        let sid = w.sessid.0;
        let Some(st) = truth.session(sid) else {
            continue; // daemons and helper threads: not in the demo's session truth
        };
        if w.flags.chars().nth(3) != Some('P') {
            continue; // a PDQ helper thread speaks for nobody
        }
        seen_waiting.push(sid);
        if st.state.wait_letter() != Some(w.reason.letter()) {
            r.wrong(
                "state",
                format!("{at} sid {sid}: shown {:?}, true {:?}", w.reason, st.state),
            );
            continue;
        }
        r.right("state");
        // Idle: a client wait with nothing queued.
        let truly_idle =
            st.state == State::Idle || (st.state == State::SlowFetch && st.send_q == 0);
        // Not judged: a client wait whose socket is not known (a new session not yet in
        // onstat -g ntt), or whose Send-Q holds a few bytes seen once (a reply in flight, or a
        // client that stopped reading).
        let netnorm = matches!(&w.waiting_on,
            ifxtop::model::waiters::WaitTarget::Condition { name: Some(n), .. } if n == "netnorm");
        if w.idle_unknown || (!w.idle && netnorm && w.socket.is_none()) {
            r.unknown("idle");
        } else {
            r.judge("idle", w.idle == truly_idle, || {
                format!(
                    "{at} sid {sid}: shown idle={} (socket {:?}, on {:?}), true {:?} send_q {}",
                    w.idle,
                    w.socket.as_ref().map(|s| s.send_q),
                    w.waiting_on,
                    st.state,
                    st.send_q
                )
            });
        }
        // The direct blocker of a wait truly held up by a session, per kind: named right,
        // unknown (counted: silence has a floor), or wrong.
        let shown = w.blockers.first().map(|s| s.0);
        if let (Some(kind), Some(t)) = (blocker_kind(st.state), st.blocker) {
            match shown {
                Some(b) if b == t => r.right(kind),
                Some(b) => r.wrong(
                    kind,
                    format!(
                        "{at} sid {sid} ({:?}): shown blocked by {b}, true {t}",
                        st.state
                    ),
                ),
                None => r.silent(
                    kind,
                    format!("{at} sid {sid} ({:?}) on {:?}", st.state, w.waiting_on),
                ),
            }
        }
        // The lock waited for, as the moment's `onstat -k` has it: its type and table.
        if let ifxtop::model::waiters::WaitTarget::Lock {
            lock_type, object, ..
        } = &w.waiting_on
        {
            if lock_type.is_some() || object.is_some() {
                let same = lock_type.as_deref().is_none_or(|k| Some(k) == st.lock_type)
                    && object.as_deref().is_none_or(|o| Some(o) == st.object);
                r.judge("lock waited for", same, || {
                    format!(
                        "{at} sid {sid}: shown {lock_type:?} on {object:?}, true {:?} on {:?}",
                        st.lock_type, st.object
                    )
                });
            }
        }
        match (shown, st.blocker) {
            (Some(b), t) if Some(b) != t => r.wrong(
                "direct blocker",
                format!(
                    "{at} sid {sid} ({:?}): shown blocked by {b}, true {t:?}",
                    st.state
                ),
            ),
            (None, Some(_)) => r.unknown("direct blocker"),
            _ => r.right("direct blocker"),
        }
        match (w.head_blocker.map(|s| s.0), st.head) {
            (Some(h), t) if Some(h) != t => r.wrong(
                "head blocker",
                format!(
                    "{at} sid {sid} ({:?}): shown head {h}, true {t:?}",
                    st.state
                ),
            ),
            (None, Some(_)) => r.unknown("head blocker"),
            _ => r.right("head blocker"),
        }
        // The wait's age at the build: exact, or a flagged lower bound, never above the truth.
        if let Some(age) = truth.wait_age(sid) {
            let truth_s = age as f64 + m.since_truth();
            judge_age(
                r,
                "wait age",
                w.in_wait_s,
                w.in_wait_s_at_least,
                truth_s,
                || format!("{at} sid {sid} ({:?})", st.state),
            );
        }
    }
    // An idle session is said to be in an open transaction exactly when it is (the
    // application that forgot to commit).
    for row in &snap.sessions {
        let Some(st) = truth.session(row.sessid.0) else {
            continue;
        };
        if row.state != ifxtop::model::sessions::SessionState::Idle {
            continue;
        }
        r.judge("idle in txn", row.in_txn == st.txn, || {
            format!(
                "{at} sid {}: shown in_txn={}, true {}",
                row.sessid, row.in_txn, st.txn
            )
        });
    }
    // One screen, one answer: the Waiters pane's session count is the Sessions pane's.
    r.judge(
        "counts agree",
        snap.summary.sessions == snap.sessions.len(),
        || {
            format!(
                "{at}: Waiters counts {} sessions, Sessions lists {}",
                snap.summary.sessions,
                snap.sessions.len()
            )
        },
    );
    // Every session waiting on the server is listed as waiting.
    for st in truth.sessions.values() {
        if st.state.is_server_wait() && !seen_waiting.contains(&st.sid) {
            r.wrong(
                "state",
                format!(
                    "{at} sid {}: not shown waiting, true {:?}",
                    st.sid, st.state
                ),
            );
        }
    }
    heads(m, r);
    mutex_holders(m, r);
}

/// Head blockers: each heads a true chain; `onmode -z` only where ending the session frees what
/// others wait for: its locks (it is neither inside a critical section nor rolling back).
fn heads(m: &Moment<'_>, r: &mut Report) {
    let (snap, truth, at) = (m.snap, m.truth, m.at.as_str());
    for h in &snap.heads {
        let heads_someone = truth.sessions.values().any(|s| s.head == Some(h.sid.0));
        r.judge("heads", heads_someone, || {
            format!(
                "{at} head sid {} blocks {}: heads no true chain",
                h.sid, h.blocked
            )
        });
        let offers_kill = h.command.is_some();
        if offers_kill
            != h.action
                .as_deref()
                .is_some_and(|a| a.starts_with("onmode -z"))
        {
            r.wrong(
                "action",
                format!(
                    "{at} head sid {}: command {:?} beside words {:?}",
                    h.sid, h.command, h.action
                ),
            );
        }
        let Some(st) = truth.session(h.sid.0) else {
            continue;
        };
        let holds_locks_others_wait_for = truth
            .sessions
            .values()
            .any(|w| w.state == State::Lock && w.head == Some(h.sid.0));
        let killable = !matches!(st.state, State::Critical | State::Rollback);
        // Its lock waiters' holder not known at this moment (no `onstat -k` read with the
        // `-u`): ifxtop cannot offer to end it, and must not say ending it does not help.
        let lock_waits_unjoined = holds_locks_others_wait_for
            && truth
                .sessions
                .values()
                .filter(|w| w.state == State::Lock && w.head == Some(h.sid.0))
                .all(|w| {
                    snap.waiters
                        .iter()
                        .filter(|x| x.sessid.0 == w.sid)
                        .all(|x| x.blockers.is_empty())
                });
        if lock_waits_unjoined && !offers_kill {
            let says_no_help = h
                .action
                .as_deref()
                .is_some_and(|a| a.contains("does not help"));
            if says_no_help {
                r.wrong(
                    "action",
                    format!(
                        "{at} head sid {}: {:?} while its lock waiters' holder is not known",
                        h.sid, h.action
                    ),
                );
            } else {
                r.unknown("action");
            }
            continue;
        }
        r.judge(
            "action",
            offers_kill == (holds_locks_others_wait_for && killable),
            || {
                format!(
                    "{at} head sid {} ({:?}): action {:?}, holds locks others wait for: {}",
                    h.sid, st.state, h.action, holds_locks_others_wait_for
                )
            },
        );
    }
}

/// Every holder named is the true one; every mutex that truly has waiters has its holder named
/// (or it is counted unknown: a mutex listed without a holder, or not listed at all).
fn mutex_holders(m: &Moment<'_>, r: &mut Report) {
    let (snap, truth, at) = (m.snap, m.truth, m.at.as_str());
    let shown = |address: u64| {
        snap.vitals
            .mutexes
            .iter()
            .find(|s| s.kind == "mutex" && s.address.0 == address)
    };
    for s in snap.vitals.mutexes.iter().filter(|s| s.kind == "mutex") {
        let Some(holder) = s.holder_sessid else {
            continue;
        };
        let t = truth.mutexes.iter().find(|t| t.address == s.address.0);
        r.judge(
            "mutex holder",
            t.is_some_and(|t| t.holder == holder.0),
            || {
                format!(
                    "{at} mutex {} ({}): shown held by {holder}, true {:?}",
                    s.name,
                    s.address,
                    t.map(|t| t.holder)
                )
            },
        );
    }
    for t in truth.mutexes.iter().filter(|t| !t.waiters.is_empty()) {
        match shown(t.address).and_then(|s| s.holder_sessid) {
            Some(h) if h.0 == t.holder => r.right("holder: mutex with waiters"),
            Some(h) => r.wrong(
                "holder: mutex with waiters",
                format!(
                    "{at} mutex {}: shown held by {h}, true {}",
                    t.name, t.holder
                ),
            ),
            None => r.silent(
                "holder: mutex with waiters",
                format!(
                    "{at} mutex {} ({} waiting): {}",
                    t.name,
                    t.waiters.len(),
                    if shown(t.address).is_some() {
                        "listed, holder unknown"
                    } else {
                        "not listed"
                    }
                ),
            ),
        }
    }
}
