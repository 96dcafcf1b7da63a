//! What each session used: its CPU between two `onstat -g cpu` samples and its memory as the
//! last `onstat -g ses` list printed it, against the demo's truth at those samples' moments.

use crate::report::Report;
use crate::walk::{Check, Moment};
use ifxtop::demo::truth::Truth;
use ifxtop::model::snapshot::Snapshot;
use std::collections::BTreeMap;

/// The CPU and memory checks, fed every second of the truth.
#[derive(Default)]
pub struct Usage {
    cpu: CpuSoFar,
    memory: MemorySoFar,
}

impl Check for Usage {
    fn truth(&mut self, truth: &Truth) {
        self.cpu.push(truth.t, truth);
        self.memory.push(truth);
    }

    fn check(&mut self, m: &Moment<'_>, r: &mut Report) {
        check_session_cpu(m.snap, &self.cpu, r);
        check_session_memory(m.snap, &self.memory, m.truth, r);
    }
}

/// Each session's CPU seconds from the walk's start up to a second (excluded), for the last
/// minute of seconds: what the demo's `onstat -g cpu` adds up, second by second.
#[derive(Default)]
struct CpuSoFar {
    /// (second, CPU seconds per session before it).
    upto: std::collections::VecDeque<(u64, BTreeMap<u64, f64>)>,
}

impl CpuSoFar {
    /// Takes the truth of second `t`: the sums before `t + 1`.
    fn push(&mut self, t: u64, truth: &Truth) {
        let mut next = self.upto.back().map(|(_, m)| m.clone()).unwrap_or_default();
        if self.upto.is_empty() {
            self.upto.push_back((t, next.clone()));
        }
        for (sid, st) in &truth.sessions {
            *next.entry(*sid).or_insert(0.0) += st.cpu_s;
        }
        if let Some((_, first)) = self.upto.back_mut() {
            for sid in truth.sessions.keys() {
                first.entry(*sid).or_insert(0.0);
            }
        }
        self.upto.push_back((t + 1, next));
        while self.upto.len() > 60 {
            self.upto.pop_front();
        }
    }

    /// A session's true CPU seconds over `[from, to)`, when both ends are kept.
    fn between(&self, sid: u64, from: u64, to: u64) -> Option<f64> {
        let at = |t: u64| {
            self.upto
                .iter()
                .find(|(s, _)| *s == t)
                // A daemon's session is not in the truth's client sessions.
                .and_then(|(_, m)| m.get(&sid).copied())
        };
        Some(at(to)? - at(from)?)
    }
}

/// Each session's CPU % (two `onstat -g cpu` samples joined through `-g ath` and `-u` of the
/// later one's moment) against the CPU its session truly used between them: equal (to the
/// printed 4 decimals), or a lower bound not above it, or not given.
fn check_session_cpu(snap: &Snapshot, so_far: &CpuSoFar, r: &mut Report) {
    let Some((Some(from), Some(to))) = snap.session_cpu.as_ref().map(|c| (c.from_s, c.to_s)) else {
        return;
    };
    // The demo prints the sums up to its whole second.
    let (a, b) = (from as u64, to as u64);
    for row in &snap.sessions {
        let sid = row.sessid.0;
        let Some(truth) = so_far.between(sid, a, b) else {
            continue;
        };
        let Some(shown) = row.cpu_percent else {
            r.unknown("session cpu");
            continue;
        };
        let true_pct = truth / (to - from) * 100.0;
        let ok = if row.cpu_at_least {
            shown <= true_pct + 0.01
        } else {
            (shown - true_pct).abs() <= 0.01
        };
        if ok {
            r.right("session cpu");
        } else {
            r.wrong(
                "session cpu",
                format!(
                    "sid {sid} over {from}-{to}: shown {shown:.3}% (at least: {}), true {true_pct:.3}%",
                    row.cpu_at_least
                ),
            );
        }
    }
}

/// Each session's memory (total, used) at each second of the last two minutes: the list is
/// read every 30 s, and its figures are of its own moment.
#[derive(Default)]
struct MemorySoFar {
    seconds: std::collections::VecDeque<(u64, Pools)>,
}

/// Each session's (total, used) memory at one second.
type Pools = BTreeMap<u64, (u64, u64)>;

impl MemorySoFar {
    fn push(&mut self, truth: &Truth) {
        let now = truth
            .sessions
            .iter()
            .map(|(sid, st)| (*sid, st.memory))
            .collect();
        self.seconds.push_back((truth.t, now));
        while self.seconds.len() > 120 {
            self.seconds.pop_front();
        }
    }

    fn at(&self, t: u64, sid: u64) -> Option<(u64, u64)> {
        let (_, m) = self.seconds.iter().find(|(s, _)| *s == t)?;
        m.get(&sid).copied()
    }
}

/// Each session's memory (`onstat -g ses`, the list) against the demo's truth at the moment the
/// list was read (not the moment of the snapshot): equal, or not given for a session the list
/// did not name.
fn check_session_memory(snap: &Snapshot, so_far: &MemorySoFar, now: &Truth, r: &mut Report) {
    let Some(at) = snap.session_memory_at_s else {
        return;
    };
    // The demo prints the memory of its whole second.
    let t = at as u64;
    for row in &snap.sessions {
        let sid = row.sessid.0;
        let truth = if now.t == t {
            now.session(sid).map(|s| s.memory)
        } else {
            so_far.at(t, sid)
        };
        // A daemon's session is not in the truth's client sessions.
        let Some((total, used)) = truth else {
            continue;
        };
        match (row.memory_bytes, row.memory_used_bytes) {
            (None, _) => r.unknown("session memory"),
            (Some(shown), Some(shown_used)) if (shown, shown_used) == (total, used) => {
                r.right("session memory");
            }
            (shown, shown_used) => r.wrong(
                "session memory",
                format!(
                    "sid {sid} read at {at}: shown {shown:?}/{shown_used:?}, true {total}/{used}"
                ),
            ),
        }
    }
}
