//! Database time against the truth: every sample's class (on a CPU, waiting for one, I/O, a
//! lock...) is what the session truly did at the moment of its `onstat -u`, or said not known
//! (`cpu_or_wait`), never another; over each phase of the timeline, each class's share of the
//! database time is the truth's within 5 points; and each incident's window names its cause as
//! the timeline plays it.

use super::Report;
use ifxtop::demo::timeline::{Incident, TIMELINE};
use ifxtop::demo::truth::{Dispatch, SessionTruth, State, Truth};
use ifxtop::model::activity::{Activity, Class, Key, Query};
use ifxtop::model::snapshot::Snapshot;
use std::collections::BTreeMap;

/// The pipeline against the demo from `start` for `len` seconds (`walk::run_with`), as a
/// front-end runs it: its sessions active on a slow client and its top CPU sessions asked for
/// their statements with the active ones, each moment judged against the truth at the moment of
/// its `onstat -u`.
fn run(seed: u64, sessions: usize, start: u64, len: u64, judge: &mut Judge) -> Report {
    crate::walk::run_with(seed, sessions, start, len, judge)
}

impl crate::walk::Check for Judge {
    fn check(&mut self, m: &crate::walk::Moment<'_>, r: &mut Report) {
        self.moment(m.snap, m.truth, &m.at, r);
    }
    fn asks_statements(&self) -> bool {
        true
    }
}

/// Points a class's share of a window may be off the truth's.
const SHARE_POINTS: f64 = 5.0;

/// The class the truth gives a session at a moment: `None` when it is not database time (idle,
/// waiting for its client with nothing to send).
fn true_class(st: &SessionTruth) -> Option<Class> {
    Some(match st.state {
        State::Idle => return None,
        State::SlowFetch if st.send_q == 0 => return None,
        State::SlowFetch => Class::Condition,
        State::Running | State::Reading | State::Critical | State::Rollback => match st.dispatch? {
            Dispatch::OnCpu => Class::Cpu,
            Dispatch::Ready => Class::CpuWait,
            Dispatch::Io => Class::Io,
        },
        State::Mutex => Class::Mutex,
        State::Buffer => Class::Buffer,
        State::Checkpoint => Class::Checkpoint,
        State::Lock => Class::Lock,
        State::LogWait => Class::LogBuffer,
    })
}

/// The truth's database time of one window, by class (session seconds).
#[derive(Default, Debug)]
struct TrueTime {
    by_class: BTreeMap<Class, f64>,
}

impl TrueTime {
    fn total(&self) -> f64 {
        self.by_class.values().sum()
    }
}

/// What one run keeps to judge its windows: the samples as the screen takes them, and the
/// truth's classes at the same moments.
#[derive(Default)]
pub(super) struct Judge {
    pub(super) activity: Activity,
    truth: BTreeMap<u64, BTreeMap<Class, u64>>,
}

impl Judge {
    /// One moment: the sample's classes against the truth's (right, unknown or wrong), and
    /// both kept for the windows.
    pub(super) fn moment(&mut self, snap: &Snapshot, truth: &Truth, at: &str, r: &mut Report) {
        let Some(moment) = snap.moment_s else {
            return;
        };
        let actives = snap.actives();
        let mut seen = std::collections::BTreeSet::new();
        for a in &actives {
            seen.insert(a.sid.0);
            let Some(st) = truth.session(a.sid.0) else {
                continue; // not a client session of the truth
            };
            match (a.class, true_class(st)) {
                (shown, Some(t)) if shown == t => r.right("sample class"),
                (Class::CpuOrWait, Some(Class::Cpu | Class::CpuWait | Class::Io)) => {
                    r.unknown("sample class")
                }
                (shown, t) => r.wrong(
                    "sample class",
                    format!(
                        "{at} sid {}: shown {}, true {:?} ({:?}, {:?})",
                        a.sid,
                        shown.name(),
                        t.map(Class::name),
                        st.state,
                        st.dispatch
                    ),
                ),
            }
        }
        // Every session truly active is in the sample.
        for st in truth.sessions.values() {
            if let Some(t) = true_class(st) {
                // A client wait whose Send-Q was seen once (or whose socket is not known yet)
                // is not counted until the next sample tells: unknown, not missed.
                let unjudged = snap
                    .waiters
                    .iter()
                    .any(|w| w.sessid.0 == st.sid && w.idle_unknown);
                if !seen.contains(&st.sid) && unjudged {
                    r.unknown("sample class");
                } else if !seen.contains(&st.sid) {
                    r.wrong(
                        "sample class",
                        format!(
                            "{at} sid {}: not sampled, true {} ({:?})",
                            st.sid,
                            t.name(),
                            st.state
                        ),
                    );
                }
            }
        }
        if self.activity.add(moment, &actives) {
            let counts = self.truth.entry(truth.t).or_default();
            for st in truth.sessions.values() {
                if let Some(c) = true_class(st) {
                    *counts.entry(c).or_default() += 1;
                }
            }
        }
    }

    /// The truth's database time of the moments from `from` to before `to`.
    fn true_time(&self, from: u64, to: u64) -> TrueTime {
        let mut out = TrueTime::default();
        for (_, counts) in self.truth.range(from..to) {
            for (c, n) in counts {
                *out.by_class.entry(*c).or_default() += *n as f64;
            }
        }
        out
    }

    /// The database time of the moments from `from` to before `to`, both multiples of the
    /// history's 10 s buckets (a window older than a minute is read whole buckets at a time).
    fn report(
        &self,
        from: u64,
        to: u64,
        filter: Option<(Key, &str)>,
    ) -> ifxtop::model::activity::Report {
        // Samples after `from - 0.5` up to `to - 0.5`; buckets whose middle is there.
        self.activity.report(&Query {
            filter: filter.map(|(k, v)| (k, v.to_string())),
            ..Query::every_key(from as f64 - 0.5, to as f64 - 0.5, 10)
        })
    }

    /// Each window of the timeline that the samples cover whole (from its start plus `warm`
    /// to its end, in whole 10 s buckets): each class's share within [`SHARE_POINTS`] of the
    /// truth's, and each incident's cause named.
    pub(super) fn windows(&self, warm: u64, r: &mut Report) -> Vec<String> {
        let mut lines = Vec::new();
        let mut calm: Option<ifxtop::model::activity::Report> = None;
        let first = self.truth.keys().next().copied().unwrap_or(0);
        let last = self.truth.keys().last().copied().unwrap_or(0);
        for p in TIMELINE {
            let (from, to) = ((p.start + warm).div_ceil(10) * 10, p.end / 10 * 10);
            if from <= first || to > last || from >= to {
                continue;
            }
            let report = self.report(from, to, None);
            let truth = self.true_time(from, to);
            let mut line = format!("{:<22}", format!("{:?}", p.incident));
            for c in Class::ALL {
                let shown = report.class_secs(c) / report.db_time_s.max(1e-9) * 100.0;
                let t = truth.by_class.get(&c).copied().unwrap_or(0.0) / truth.total().max(1e-9)
                    * 100.0;
                if shown == 0.0 && t == 0.0 {
                    continue;
                }
                line.push_str(&format!(" {} {shown:.1}/{t:.1}", c.name()));
                if (shown - t).abs() <= SHARE_POINTS {
                    r.right("window class share");
                } else {
                    r.wrong(
                        "window class share",
                        format!(
                            "{:?} {from}-{to}: {} {shown:.1} % shown, {t:.1} % true",
                            p.incident,
                            c.name()
                        ),
                    );
                }
            }
            // The statements: known for at least 90 % of the window's database time.
            let unread = report
                .list(Key::Sql)
                .iter()
                .find(|e| e.key == ifxtop::model::activity::NOT_READ)
                .map_or(0.0, |e| e.share);
            line.push_str(&format!("  (not read) {:.1} %", unread * 100.0));
            if unread < 0.10 {
                r.right("window statements known");
            } else {
                r.wrong(
                    "window statements known",
                    format!(
                        "{:?} {from}-{to}: statements not read for {:.1} % of the database time",
                        p.incident,
                        unread * 100.0
                    ),
                );
            }
            lines.push(line);
            self.grew(p.incident, (from, to), &mut calm, &report, r);
            self.cause(p.incident, from, to, r);
            if p.incident == Incident::Calm {
                calm = Some(report);
            }
        }
        lines
    }

    /// The class that grew most against the calm stretch before (in average active sessions)
    /// is the incident's.
    fn grew(
        &self,
        incident: Incident,
        (from, to): (u64, u64),
        calm: &mut Option<ifxtop::model::activity::Report>,
        report: &ifxtop::model::activity::Report,
        r: &mut Report,
    ) {
        let want = match incident {
            Incident::InsertHotSpot | Incident::NullIndexLeaf => Class::Buffer,
            Incident::SendQFill | Incident::SendQDrain => Class::Condition,
            Incident::CheckpointRequested | Incident::CheckpointInProgress => Class::Checkpoint,
            Incident::LockChain => Class::Lock,
            Incident::LongTransaction => Class::LogBuffer,
            Incident::CpuSaturated => Class::CpuWait,
            Incident::MutexContention => Class::Mutex,
            Incident::Calm | Incident::SlowDevice | Incident::ReplicaLag => return,
        };
        let Some(before) = calm.as_ref() else {
            return;
        };
        let aas = |rep: &ifxtop::model::activity::Report, c: Class| {
            rep.class_secs(c) / rep.window_s.max(1e-9)
        };
        let top = Class::ALL
            .into_iter()
            .max_by(|a, b| {
                (aas(report, *a) - aas(before, *a)).total_cmp(&(aas(report, *b) - aas(before, *b)))
            })
            .expect("classes");
        if top == want {
            r.right("incident class");
        } else {
            r.wrong(
                "incident class",
                format!(
                    "{incident:?} {from}-{to}: {} grew most, not {}",
                    top.name(),
                    want.name()
                ),
            );
        }
    }

    /// An incident's window names its cause as the timeline plays it: the lock chain's lock
    /// waits have sid 812 at their head, the CPU saturation's time is on a CPU or waiting for
    /// one.
    fn cause(&self, incident: Incident, from: u64, to: u64, r: &mut Report) {
        let window = |filter: Option<(Key, &str)>| self.report(from, to, filter);
        match incident {
            Incident::LockChain => {
                // By class (the first view): the lock waits' head is 812, running the update
                // of customer; the waits' own statements are the chain's updates.
                let all = window(None);
                let lock = all.class_tops.iter().find(|t| t.class == Class::Lock);
                let head = lock
                    .and_then(|t| t.head_blocker.as_ref())
                    .map(|h| h.key.clone());
                let sql = lock.and_then(|t| t.sql.as_ref()).map(|q| q.key.clone());
                let head_sql = lock
                    .and_then(|t| t.head_sql.as_ref())
                    .map(|q| q.key.clone());
                let ok = head.as_deref() == Some("812")
                    && head_sql
                        .as_deref()
                        .is_some_and(|q| q.starts_with("update customer set"))
                    && sql.as_deref().is_some_and(|q| q.starts_with("update "));
                if ok {
                    r.right("incident cause");
                } else {
                    r.wrong(
                        "incident cause",
                        format!(
                            "lock chain {from}-{to}: the lock waits' head {head:?} running {head_sql:?}, their statement {sql:?}"
                        ),
                    );
                }
            }
            Incident::CpuSaturated => {
                let all = window(None);
                let cpu = all.class_secs(Class::Cpu) + all.class_secs(Class::CpuWait);
                // The top statement is one of the busy ones: on a CPU or waiting for one.
                let top = all.list(Key::Sql).first();
                let busy = top.is_some_and(|e| {
                    e.key != ifxtop::model::activity::NOT_READ
                        && e.by_class
                            .iter()
                            .filter(|(c, _)| matches!(c, Class::Cpu | Class::CpuWait))
                            .map(|(_, s)| s)
                            .sum::<f64>()
                            > e.db_time_s / 2.0
                });
                if cpu > all.db_time_s / 2.0 && busy {
                    r.right("incident cause");
                } else {
                    r.wrong(
                        "incident cause",
                        format!(
                            "CPU saturation {from}-{to}: on a CPU or waiting for one {cpu:.0} s of {:.0} s; top statement {:?}",
                            all.db_time_s,
                            top.map(|e| (&e.key, &e.by_class))
                        ),
                    );
                }
            }
            _ => {}
        }
    }
}

/// The whole first pass of the timeline at 300 sessions: every sample's class against the
/// truth, every phase's class shares (from 5 s into it: the samples of its first seconds are
/// those of the phase before), each incident's cause.
#[test]
fn database_time_classes_are_the_truths() {
    let mut judge = Judge::default();
    let mut report = run(1, 300, 0, 720, &mut judge);
    let lines = judge.windows(5, &mut report);
    eprintln!("{}\n{}", lines.join("\n"), report.table());
    assert_eq!(
        report.wrong_total(),
        0,
        "{}\n{}\n{}",
        lines.join("\n"),
        report.table(),
        report.examples.join("\n")
    );
    for kind in [
        "sample class",
        "window class share",
        "window statements known",
        "incident class",
        "incident cause",
    ] {
        assert!(
            report.kinds.get(kind).is_some_and(|t| t.right > 0),
            "nothing right of kind {kind}:\n{}",
            report.table()
        );
    }
    // Classes are known: the moment's thread list is read at every tick while more threads
    // look runnable than there are CPU VPs (always, in this demo).
    let t = report.kinds["sample class"];
    assert!(
        t.unknown * 100 <= t.checked,
        "{} of {} samples' classes unknown",
        t.unknown,
        t.checked
    );
}
