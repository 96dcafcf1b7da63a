//! Each session's CPU use, from two `onstat -g cpu` samples: a thread's CPU seconds are
//! cumulative, so their growth over the time between the samples is its CPU use. A thread is a
//! session's through `onstat -g ath` (tid → rstcb) and `onstat -u` (rstcb → session) read at
//! the moment of the later sample; read at another moment, an rstcb could be another
//! session's by then, and no session is named.
//!
//! What is not known is said: a thread whose CPU seconds went down (a restart, `onstat -z`)
//! or that was missing from a sample that was cut leaves its session unknown; so does a thread
//! whose seconds grew by more than the interval allows (one thread runs on one VP at a time, so
//! it uses at most one core: a wrapped or garbled counter, or a new thread that took an old
//! one's tid, would otherwise give its session thousands of cores); a thread that ended between
//! the samples takes its last seconds with it, so its session's figure is a lower bound.

use crate::ids::{BySid, Sid, Tid};
use crate::parsers::onstat_g_ath::OnstatGAth;
use crate::parsers::onstat_g_cpu::OnstatGCpu;
use crate::parsers::onstat_u::OnstatU;
use rustc_hash::FxHashMap;
use std::time::Duration;

/// A session's CPU use between two samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuUse {
    /// CPU seconds per second (1.0: one core busy the whole time).
    pub cores: f64,
    /// A lower bound: a thread of it ended between the samples.
    pub at_least: bool,
}

/// Above the interval's length, how much more a thread's CPU seconds may grow and still be
/// believed: the counters are printed to the hundredth of a second or finer, and the server
/// adds a running thread's time when it yields.
const GROWTH_SLACK: Duration = Duration::from_millis(500);

/// One `onstat -g cpu` sample as kept for the next one.
#[derive(Debug, Clone, Default)]
struct Sample {
    /// When its run started, and how long it took: onstat read the counters in between.
    t: Duration,
    took: Duration,
    cpu: FxHashMap<Tid, f64>,
    /// Each user thread's session, when `-g ath` and `-u` were read at its moment.
    sid: Option<FxHashMap<Tid, Sid>>,
    /// The highest tid listed: a thread not listed with a higher tid started after it (tids
    /// are never reused while the server is up).
    max_tid: u64,
    /// Every row was read (no elision, nothing unparsed): a thread not listed did not exist.
    complete: bool,
}

/// Why no session has a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuUnknown {
    /// One sample so far: use needs two.
    FirstSample,
    /// The latest `onstat -g cpu` was not read with an `onstat -g ath` and `onstat -u` of its
    /// moment.
    NotJoined,
    /// The latest `onstat -g cpu` was printed a second after the `onstat -u` of its call: the
    /// seconds it sums do not end at its time.
    Late,
}

impl CpuUnknown {
    pub fn words(self) -> &'static str {
        match self {
            CpuUnknown::FirstSample => "known after a second onstat -g cpu",
            CpuUnknown::NotJoined => {
                "not known: onstat -g ath and -u were not read at the moment of onstat -g cpu"
            }
            CpuUnknown::Late => {
                "not known: onstat -g cpu was printed a second after the onstat -u of its call"
            }
        }
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct SessionCpu {
    last: Option<Sample>,
    /// In session order: the sessions' rows read them with a cursor ([`Self::cursor`]).
    by_sid: BySid<CpuUse>,
    /// The interval the figures cover.
    interval: Option<(Duration, Duration)>,
    unknown: Option<CpuUnknown>,
}

impl SessionCpu {
    /// Takes the sample of `onstat -g cpu` whose run started at `t` and took `took`. `ath` and
    /// `u` are given only when they were read at the same moment.
    pub(crate) fn observe(
        &mut self,
        g: &OnstatGCpu,
        t: Duration,
        took: Duration,
        ath: Option<&OnstatGAth>,
        u: Option<&OnstatU>,
    ) {
        let sid = match (ath, u) {
            (Some(a), Some(u)) => Some(a.sessions(u)),
            _ => None,
        };
        let now = Sample {
            t,
            took,
            cpu: g.threads.iter().map(|th| (th.tid, th.cpu_s)).collect(),
            sid,
            max_tid: g.threads.iter().map(|th| th.tid.0).max().unwrap_or(0),
            complete: g.elisions.is_empty() && g.unparsed.is_empty(),
        };
        self.by_sid = BySid::default();
        self.interval = None;
        self.unknown = None;
        match (&self.last, &now.sid) {
            (None, _) => self.unknown = Some(CpuUnknown::FirstSample),
            (Some(_), None) => self.unknown = Some(CpuUnknown::NotJoined),
            (Some(prev), Some(sid_of)) if now.t > prev.t => {
                self.by_sid = uses(prev, &now, sid_of);
                self.interval = Some((prev.t, now.t));
            }
            (Some(_), Some(_)) => self.unknown = Some(CpuUnknown::FirstSample),
        }
        self.last = Some(now);
    }

    /// Takes a sample of `onstat -g cpu` printed in a later second of the server's clock than
    /// its time says: no figure now, and the next sample is measured from the last one in step.
    pub(crate) fn observe_late(&mut self) {
        self.by_sid = BySid::default();
        self.interval = None;
        self.unknown = Some(CpuUnknown::Late);
    }

    /// A session's CPU use over [`Self::interval`], when known.
    pub(crate) fn get(&self, sid: Sid) -> Option<CpuUse> {
        self.by_sid.get(sid).copied()
    }

    /// The sessions' CPU use read in session order ([`crate::ids::Cursor`]).
    pub(crate) fn cursor(&self) -> crate::ids::Cursor<'_, Sid, CpuUse> {
        self.by_sid.cursor()
    }

    /// The interval the figures cover (the two samples' times).
    pub(crate) fn interval(&self) -> Option<(Duration, Duration)> {
        self.interval
    }

    /// Why no session has a figure (`None` when they have, or `onstat -g cpu` was never read).
    pub(crate) fn unknown(&self) -> Option<CpuUnknown> {
        self.unknown
    }
}

/// The use per session between `prev` and `now` (`now.t > prev.t`).
fn uses(prev: &Sample, now: &Sample, sid_of: &FxHashMap<Tid, Sid>) -> BySid<CpuUse> {
    let dt = now.t.saturating_sub(prev.t).as_secs_f64();
    // The longest the two reads can be apart (each is within its run), and so the most one
    // thread can have used in between: one core all that time.
    let most = (now.t + now.took + GROWTH_SLACK)
        .saturating_sub(prev.t)
        .as_secs_f64();
    // Per session: CPU seconds, a lower bound, unknown.
    let mut acc: FxHashMap<Sid, (f64, bool, bool)> = FxHashMap::default();
    for (tid, cpu) in &now.cpu {
        let Some(sid) = sid_of.get(tid) else {
            continue;
        };
        let e = acc.entry(*sid).or_insert((0.0, false, false));
        let grew = match prev.cpu.get(tid) {
            Some(p) if cpu >= p => cpu - p,
            // Went down: the counters were reset, or the tid is another thread's.
            Some(_) => f64::NAN,
            // Started since: all its seconds are of the interval.
            None if prev.complete && tid.0 > prev.max_tid => *cpu,
            // Left out of a cut sample, or listed below the highest tid: not known.
            None => f64::NAN,
        };
        // More than one core the whole time (or no number at all): not a use, a counter that
        // jumped.
        if grew.is_finite() && grew <= most {
            e.0 += grew;
        } else {
            e.2 = true;
        }
    }
    // Threads that ended between the samples took their last seconds with them.
    for tid in prev.cpu.keys().filter(|t| !now.cpu.contains_key(t)) {
        match prev.sid.as_ref().map(|m| m.get(tid)) {
            Some(Some(sid)) => {
                if let Some(e) = acc.get_mut(sid) {
                    e.1 = true;
                }
            }
            // A server thread (no session) that ended: nobody's.
            Some(None) => {}
            // Whose it was is not known: every figure may miss it.
            None => acc.values_mut().for_each(|e| e.1 = true),
        }
    }
    // In session order (`BySid` sorts them).
    acc.into_iter()
        .filter(|(_, (_, _, unknown))| !unknown)
        .map(|(sid, (secs, at_least, _))| {
            (
                sid,
                CpuUse {
                    cores: secs / dt,
                    at_least,
                },
            )
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn cpu(rows: &[(u64, f64)]) -> OnstatGCpu {
        let mut text = String::from(
            "Thread CPU Info:\n tid    name              vp       Last Run           CPU Time     #scheds    status\n",
        );
        for (tid, secs) in rows {
            text.push_str(&format!(
                " {tid}   sqlexec   1cpu   11/22 13:41:07   {secs:.4}   10   running\n"
            ));
        }
        crate::parsers::onstat_g_cpu::parse(&text).expect("cpu")
    }

    fn ath(rows: &[(u64, u64)]) -> OnstatGAth {
        let mut text = String::from(
            "Threads:\n tid     tcb              rstcb            prty status                vp-class      name\n",
        );
        for (tid, rstcb) in rows {
            text.push_str(&format!(
                " {tid}   4000{tid:04x}   {rstcb:x}   2    running   1cpu   sqlexec\n"
            ));
        }
        crate::parsers::onstat_g_ath::parse(&text).expect("ath")
    }

    fn u(rows: &[(u64, u64)]) -> OnstatU {
        let mut text = String::from(
            "Userthreads\naddress          flags   sessid   user     tty      wait             tout locks nreads   nwrites\n",
        );
        for (addr, sid) in rows {
            text.push_str(&format!("{addr:x} ---P--- {sid} informix - 0 0 1 0 0\n"));
        }
        text.push_str(&format!(
            " {} active, 128 total, 20 maximum concurrent\n",
            rows.len()
        ));
        crate::parsers::onstat_u::parse(&text).expect("u")
    }

    const S: fn(u64) -> Duration = Duration::from_secs;
    const TOOK: Duration = Duration::from_millis(30);

    #[test]
    fn use_is_the_growth_of_the_sessions_threads_over_the_interval() {
        let mut c = SessionCpu::default();
        let (a, uu) = (
            ath(&[(50, 0xa000), (51, 0xa100), (52, 0xb000)]),
            u(&[(0xa000, 7), (0xa100, 7), (0xb000, 8)]),
        );
        c.observe(
            &cpu(&[(2, 100.0), (50, 1.0), (51, 2.0), (52, 3.0)]),
            S(10),
            TOOK,
            Some(&a),
            Some(&uu),
        );
        assert_eq!(c.unknown(), Some(CpuUnknown::FirstSample));
        assert_eq!(c.get(Sid(7)), None);
        c.observe(
            &cpu(&[(2, 300.0), (50, 6.0), (51, 4.5), (52, 3.0)]),
            S(20),
            TOOK,
            Some(&a),
            Some(&uu),
        );
        assert_eq!(c.interval(), Some((S(10), S(20))));
        let seven = c.get(Sid(7)).expect("7");
        assert!((seven.cores - 0.75).abs() < 1e-9, "{seven:?}");
        assert!(!seven.at_least);
        assert_eq!(
            c.get(Sid(8)),
            Some(CpuUse {
                cores: 0.0,
                at_least: false
            })
        );
    }

    /// The figures are read in session order (the sessions' rows walk them with a cursor):
    /// sessions whose threads' ids run against their session numbers, each given its own
    /// thread's growth, through the cursor and one by one alike.
    #[test]
    fn figures_are_read_in_session_order() {
        let n = 200u64;
        // Session 1000 + k runs thread 500 - k at rstcb 0xa000 + k, which grew k/100 s.
        let threads: Vec<(u64, u64)> = (0..n).map(|k| (500 - k, 0xa000 + k)).collect();
        let users: Vec<(u64, u64)> = (0..n).map(|k| (0xa000 + k, 1000 + k)).collect();
        let (a, uu) = (ath(&threads), u(&users));
        let before: Vec<(u64, f64)> = threads.iter().map(|&(tid, _)| (tid, 1.0)).collect();
        let after: Vec<(u64, f64)> = (0..n).map(|k| (500 - k, 1.0 + k as f64 / 100.0)).collect();
        let mut c = SessionCpu::default();
        c.observe(&cpu(&before), S(0), TOOK, Some(&a), Some(&uu));
        c.observe(&cpu(&after), S(10), TOOK, Some(&a), Some(&uu));
        let mut cursor = c.cursor();
        for k in 0..n {
            let want = k as f64 / 1000.0;
            let got = cursor.get(Sid(1000 + k)).map(|u| u.cores);
            assert!(got.is_some_and(|g| (g - want).abs() < 1e-9), "{k}: {got:?}");
            let one = c.get(Sid(1000 + k)).map(|u| u.cores);
            assert_eq!(one, got, "{k}");
        }
        assert_eq!(c.cursor().get(Sid(999)), None);
        assert_eq!(c.get(Sid(1000 + n)), None);
    }

    #[test]
    fn a_thread_that_ended_makes_a_lower_bound_and_one_that_began_counts_whole() {
        let mut c = SessionCpu::default();
        c.observe(
            &cpu(&[(50, 1.0), (51, 2.0)]),
            S(0),
            TOOK,
            Some(&ath(&[(50, 0xa000), (51, 0xa100)])),
            Some(&u(&[(0xa000, 7), (0xa100, 7)])),
        );
        c.observe(
            &cpu(&[(50, 2.0), (60, 3.0)]),
            S(10),
            TOOK,
            Some(&ath(&[(50, 0xa000), (60, 0xa100)])),
            Some(&u(&[(0xa000, 7), (0xa100, 7)])),
        );
        let seven = c.get(Sid(7)).expect("7");
        assert!((seven.cores - 0.4).abs() < 1e-9, "{seven:?}");
        assert!(seven.at_least);
    }

    #[test]
    fn what_cannot_be_known_is_not_given() {
        let (a, uu) = (ath(&[(50, 0xa000)]), u(&[(0xa000, 7)]));
        // Not read at the moment of -g ath and -u: no session is named.
        let mut c = SessionCpu::default();
        c.observe(&cpu(&[(50, 1.0)]), S(0), TOOK, Some(&a), Some(&uu));
        c.observe(&cpu(&[(50, 2.0)]), S(10), TOOK, None, Some(&uu));
        assert_eq!(c.get(Sid(7)), None);
        assert_eq!(c.unknown(), Some(CpuUnknown::NotJoined));
        // CPU seconds that went down: reset counters.
        let mut c = SessionCpu::default();
        c.observe(&cpu(&[(50, 5.0)]), S(0), TOOK, Some(&a), Some(&uu));
        c.observe(&cpu(&[(50, 2.0)]), S(10), TOOK, Some(&a), Some(&uu));
        assert_eq!(c.get(Sid(7)), None);
        // A thread missing from the sample before, with a lower tid than one listed there: it
        // was left out, not started since.
        let mut c = SessionCpu::default();
        let (a2, u2) = (
            ath(&[(40, 0xa000), (50, 0xb000)]),
            u(&[(0xa000, 7), (0xb000, 8)]),
        );
        c.observe(&cpu(&[(50, 1.0)]), S(0), TOOK, Some(&a2), Some(&u2));
        c.observe(
            &cpu(&[(40, 9.0), (50, 2.0)]),
            S(10),
            TOOK,
            Some(&a2),
            Some(&u2),
        );
        assert_eq!(c.get(Sid(7)), None);
        assert!(c.get(Sid(8)).is_some());
    }

    /// A counter that jumps (wrapped, reset to garbage, a new thread on an old tid) would give
    /// its session thousands of cores: a thread above one core over the interval leaves its
    /// session unknown, while one at one core, read a little late, is believed.
    #[test]
    fn a_thread_above_one_core_over_the_interval_is_not_believed() {
        let (a, uu) = (
            ath(&[(50, 0xa000), (51, 0xa100), (52, 0xb000), (60, 0xc000)]),
            u(&[(0xa000, 7), (0xa100, 7), (0xb000, 8), (0xc000, 9)]),
        );
        let mut c = SessionCpu::default();
        c.observe(
            &cpu(&[(50, 1.0), (51, 2.0), (52, 5.0)]),
            S(0),
            TOOK,
            Some(&a),
            Some(&uu),
        );
        // 50 jumped by 10^12 s; 52 ran the whole 10 s, read 0.3 s into a slow run; 60 began
        // since with more seconds than the interval holds.
        c.observe(
            &cpu(&[(50, 1e12), (51, 3.0), (52, 15.3), (60, 11.0)]),
            S(10),
            Duration::from_millis(300),
            Some(&a),
            Some(&uu),
        );
        assert_eq!(c.get(Sid(7)), None, "a session of a thread that jumped");
        let eight = c.get(Sid(8)).expect("one core the whole interval");
        assert!((eight.cores - 1.03).abs() < 1e-9, "{eight:?}");
        assert_eq!(c.get(Sid(9)), None, "a new thread older than the interval");
        // The next interval is judged on its own.
        c.observe(
            &cpu(&[(50, 1e12 + 2.0), (51, 3.5), (52, 15.3), (60, 12.0)]),
            S(20),
            TOOK,
            Some(&a),
            Some(&uu),
        );
        let seven = c.get(Sid(7)).expect("7 again");
        assert!((seven.cores - 0.25).abs() < 1e-9, "{seven:?}");
        assert!(c.get(Sid(9)).is_some());
    }
}
