//! What a blocking session costs the others, and what would help: blockers are ranked by the
//! harm they cause (the oldest wait they cause, its kind, how many wait), not by a count, and
//! `onmode -z` is offered only where ending the session frees what others wait for.

use crate::ids::Sid;
use crate::model::waiters::WaiterRow;
use crate::parsers::onstat_u::{OnstatU, WaitReason};
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

/// The harm `sid` causes, from the waiters whose chains name it.
pub(crate) fn harm_of(waiters: &[WaiterRow], sid: Sid) -> Harm {
    let mut h = Harm {
        background: true,
        ..Harm::default()
    };
    let mut any = false;
    for w in waiters.iter().filter(|w| w.blockers.contains(&sid)) {
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
    // What it holds directly: the reasons of the waits it is the first blocker of.
    let direct: Vec<&WaiterRow> = waiters
        .iter()
        .filter(|w| w.blockers.contains(&sid))
        .collect();
    if direct.is_empty() {
        return None;
    }
    let first_of = |r: WaitReason| {
        direct
            .iter()
            .any(|w| w.reason == r && w.direct_blocker() == Some(sid))
    };
    let threads: Vec<_> = u.threads.iter().filter(|t| t.sessid == sid).collect();
    let critical = threads.iter().any(|t| t.flags.in_critical_section());
    let rolling_back = threads.iter().any(|t| t.flags.txn_state() == Some('R'));
    let words = |s: &str| {
        Some(BlockerAction {
            command: None,
            words: s.to_string(),
        })
    };
    if first_of(WaitReason::LogBuffer) || (rolling_back && !first_of(WaitReason::Lock)) {
        return words(
            "the oldest transaction holds the logical logs: add logs (onparams -a -d DBSPACE) \
             and wait for its rollback; onmode -z does not hurry a rollback",
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
        return words(
            "holds a mutex for an instant: ending it does not help; find what contends on the \
             mutex",
        );
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
