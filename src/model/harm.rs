//! What a blocking session costs the others, and what would help: blockers are ranked by the
//! harm they cause (the oldest wait they cause, its kind, how many wait), not by a count, and
//! `onmode -z` is offered only where ending the session frees what others wait for.

use crate::ids::Sid;
use crate::model::waiters::{WaitTarget, WaiterRow};
use crate::parsers::onstat_u::{OnstatU, UserThread, WaitReason};
use serde::Serialize;

/// A mutex wait shorter than this (seconds) is the background of any busy server: a mutex is
/// held for microseconds, and its holder changes all the time.
pub const BRIEF_MUTEX_WAIT_S: f64 = 1.0;

/// The harm a session does to those it holds up.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Harm {
    /// Sessions held up (directly or further down their chains).
    pub held_up: usize,
    /// The oldest wait it causes (seconds).
    pub oldest_wait_s: f64,
    /// That wait is a lower bound (it began before ifxtop saw it).
    pub oldest_wait_at_least: bool,
    /// Every wait it causes is a brief mutex wait: background, not an alarm.
    pub background: bool,
}

impl Harm {
    /// Orders blockers, most harmful first: alarms before background, then the oldest wait,
    /// then the most sessions held up.
    pub fn rank_key(&self) -> (bool, u64, usize) {
        (
            !self.background,
            (self.oldest_wait_s.max(0.0) * 10.0) as u64,
            self.held_up,
        )
    }
}

/// The harm done to `held_up`, the waiters whose chains name one session, in the waiters'
/// order.
pub(crate) fn harm_to<'a>(held_up: impl Iterator<Item = &'a WaiterRow>) -> Harm {
    let mut h = Harm {
        background: true,
        ..Harm::default()
    };
    let mut any = false;
    for w in held_up {
        any = true;
        h.held_up += 1;
        if w.in_wait_s > h.oldest_wait_s || h.held_up == 1 {
            h.oldest_wait_s = w.in_wait_s;
            h.oldest_wait_at_least = w.in_wait_s_at_least;
        }
        if !(w.reason == WaitReason::Mutex && w.in_wait_s < BRIEF_MUTEX_WAIT_S) {
            h.background = false;
        }
    }
    if !any {
        h.background = false;
    }
    h
}

/// What is known of a mutex with waiters, for the advice: its name, its holder and what that
/// session is doing, how many wait and the longest wait (a lower bound when ifxtop did not see
/// it begin).
pub(crate) struct MutexFacts<'a> {
    pub name: Option<&'a str>,
    pub holder: Option<Sid>,
    /// `running`, `in a read`, `waiting: lock`...
    pub holder_state: Option<&'a str>,
    pub waiting: usize,
    pub longest_s: f64,
    pub longest_at_least: bool,
}

/// What to do about a mutex others wait for, saying what is true. onstat prints no hold time:
/// the longest wait is how long the mutex has not come free to that waiter, so a wait past
/// [`BRIEF_MUTEX_WAIT_S`] is no instant, and what the holder runs is where to look; under it,
/// the background of any busy server.
pub(crate) fn mutex_advice(m: &MutexFacts<'_>) -> String {
    let name = m
        .name
        .map(|n| format!("mutex {n}"))
        .unwrap_or_else(|| "a mutex".to_string());
    let wait = crate::format::human_duration_bound(m.longest_s, m.longest_at_least);
    let waiting = crate::format::count(m.waiting as u64, "waits", "wait");
    if m.longest_s < BRIEF_MUTEX_WAIT_S {
        return format!(
            "holds {name} ({waiting}, the longest {wait}): an instant, the background of a busy \
             server; ending it does not help"
        );
    }
    match m.holder {
        Some(sid) => {
            format!(
            "sid {sid}{} holds {name}; {waiting} for it, the longest {wait}: not an instant. Look \
             at what sid {sid} runs (onstat -g ses {sid}); ending a waiter does not help",
            m.holder_state.map(|s| format!(" ({s})")).unwrap_or_default()
        )
        }
        None => format!(
            "{waiting} on {name}, the longest {wait}: not an instant; its holder is not known \
             at this moment (onstat -g lmx): see who holds it there"
        ),
    }
}

/// What helps against a blocking session, in the words the session screen shows, and the
/// command when ending the session is what helps (ifxtop itself only reads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockerAction {
    /// `onmode -z 812`, only where ending the session frees what others wait for.
    pub command: Option<String>,
    pub words: String,
}

/// The action for `sid`, a session holding others up (`None` when it holds nobody up).
pub(crate) fn action_for(u: &OnstatU, waiters: &[WaiterRow], sid: Sid) -> Option<BlockerAction> {
    let threads: Vec<&UserThread> = u.threads.iter().filter(|t| t.sessid == sid).collect();
    let held_up: Vec<&WaiterRow> = waiters
        .iter()
        .filter(|w| w.blockers.contains(&sid))
        .collect();
    action_with(&threads, &held_up, waiters, sid)
}

/// [`action_for`] from the session's threads (in the `onstat -u`'s order) and the waiters
/// whose chains name it (in the waiters' order), gathered once for every head blocker.
pub(crate) fn action_with(
    threads: &[&UserThread],
    held_up: &[&WaiterRow],
    waiters: &[WaiterRow],
    sid: Sid,
) -> Option<BlockerAction> {
    // What it holds directly: the reasons of the waits it is the first blocker of.
    let direct = held_up;
    if direct.is_empty() {
        return None;
    }
    let first_of = |r: WaitReason| {
        direct
            .iter()
            .any(|w| w.reason == r && w.direct_blocker() == Some(sid))
    };
    let critical = threads.iter().any(|t| t.flags.in_critical_section());
    let rolling_back = threads.iter().any(|t| t.flags.txn_state() == Some('R'));
    let words = |s: &str| {
        Some(BlockerAction {
            command: None,
            words: s.to_string(),
        })
    };
    if first_of(WaitReason::LogBuffer) {
        return words(
            "the oldest transaction holds the logical logs: add logs (onparams -a -d DBSPACE) \
             and wait for its rollback; onmode -z does not hurry a rollback",
        );
    }
    if rolling_back {
        // Its locks go when the rollback ends, whatever is done to the session: between two
        // log records it is not in a critical section, and onmode -z would still free nothing.
        return words(
            "rolling back: its locks are freed when the rollback ends, and onmode -z does not \
             hurry a rollback: wait for it",
        );
    }
    if critical {
        return words(
            "inside a critical section, where onmode -z cannot end it: wait for it to leave, \
             and find why it crawls (a slow log device, memory reclaim)",
        );
    }
    if first_of(WaitReason::Lock) {
        return Some(BlockerAction {
            command: Some(format!("onmode -z {sid}")),
            words: format!(
                "onmode -z {sid} ends the session: its transaction rolls back and its locks \
                 are freed (or ask its application to commit)"
            ),
        });
    }
    if first_of(WaitReason::Buffer) {
        return words(
            "holds a hot page for the moment: its holder changes every few seconds, so ending \
             it only moves the wait; the fix is the table's design (last-page inserts, one \
             index key)",
        );
    }
    if first_of(WaitReason::Mutex) {
        let held: Vec<&&WaiterRow> = direct
            .iter()
            .filter(|w| w.reason == WaitReason::Mutex && w.direct_blocker() == Some(sid))
            .collect();
        let longest = held
            .iter()
            .copied()
            .max_by(|a, b| a.in_wait_s.total_cmp(&b.in_wait_s));
        let name = held.iter().find_map(|w| match &w.waiting_on {
            WaitTarget::Latch { name, .. } => name.as_deref().map(str::to_string),
            _ => None,
        });
        let advice = mutex_advice(&MutexFacts {
            name: name.as_deref(),
            holder: Some(sid),
            holder_state: None,
            waiting: held.len(),
            longest_s: longest.map_or(0.0, |w| w.in_wait_s),
            longest_at_least: longest.is_some_and(|w| w.in_wait_s_at_least),
        });
        // Lock waits whose holder is not known at this moment may be on its locks: ending it
        // may help after all, and nothing says so.
        let locks_unknown = waiters
            .iter()
            .any(|w| w.reason == WaitReason::Lock && w.blockers.is_empty() && !w.idle);
        return match advice.strip_suffix("; ending it does not help") {
            Some(brief) if locks_unknown => words(&format!(
                "{brief}; whether it holds a lock others wait for is not known at this moment                  (onstat -k was not read with this onstat -u)"
            )),
            _ => words(&advice),
        };
    }
    if first_of(WaitReason::Checkpoint) {
        return words("holds up the checkpoint: wait for it, and find why it crawls");
    }
    // Held up further down a chain only (it heads the chain through another session's wait).
    let via_lock = direct.iter().any(|w| w.reason == WaitReason::Lock);
    if via_lock {
        return Some(BlockerAction {
            command: Some(format!("onmode -z {sid}")),
            words: format!(
                "onmode -z {sid} ends the session: its transaction rolls back and its locks \
                 are freed (or ask its application to commit)"
            ),
        });
    }
    words("look at what it holds: ending it may not help")
}
