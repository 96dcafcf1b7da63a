//! What the latest `onstat -u` asks to be read with the next one. Who holds a lock, a buffer or
//! a mutex changes within a second, so the joins name a holder only from an output taken at
//! the same moment as the `onstat -u` whose waiter it explains. While threads wait on locks or
//! buffers, `onstat -k` and `onstat -X` join every tick's grouped call (no process of their
//! own); while mutex waits are seen (any within the last [`MUTEX_WATCH`] samples of `onstat
//! -u`), `onstat -g lmx` (holders and waiters) joins it too, so the holder of a mutex wait is
//! named from the very call that shows it: on a busy server mutex waits come and go every
//! second, each an instant, and a holder read a tick later is another moment's. A calm server
//! asks for none of them more often than their own periods.
//!
//! Database time classes a session with no wait flag by what its thread does at the moment:
//! on a CPU VP, ready for one, or waiting inside the server (`onstat -g ath`'s status). While
//! more user threads have no wait flag than there are CPU VPs, some of them cannot be on a
//! CPU, so `onstat -g ath` joins every tick's call; otherwise it keeps its own period, and the
//! moments between say `cpu_or_wait` for those sessions.

use crate::ids::Sid;
use crate::parsers::onstat_u::{OnstatU, WaitReason};
use crate::source::Source;
use std::sync::Mutex;
use tokio::sync::watch;

/// How often `onstat -g lmx` runs while it is wanted and not in the grouped call (an onstat
/// without interactive mode: a process of its own each time, kept inside the budget of onstat
/// processes a minute).
pub(crate) const MUTEX_PERIOD: std::time::Duration = std::time::Duration::from_secs(3);

/// `onstat -g lmx` stays in every tick's call while a mutex wait was seen in one of the last
/// this many samples of `onstat -u`: its own period (10 s), so a server whose threads queue on
/// mutexes now and then has the holder of each wait read with it, and a calm one goes back to
/// the period.
pub(crate) const MUTEX_WATCH: u32 = 10;

const LOCKS: u8 = 1;
const BUFFERS: u8 = 2;
const MUTEXES: u8 = 4;
/// `onstat -D` and `onstat -g glo`: wanted at every tick only when a front-end asks
/// ([`Demand::pin`]).
const CHUNKS: u8 = 8;
const VPS: u8 = 16;
/// `onstat -g ath`: the threads' states, at every tick while more threads look runnable than
/// there are CPU VPs.
const THREADS: u8 = 32;

/// A statement read this long ago is read again while its session stays active: under
/// `model::activity::SQL_FRESH_S`, so an active session's statement is always of the last
/// seconds.
pub(crate) const STATEMENT_REREAD: std::time::Duration = std::time::Duration::from_secs(10);

/// At most this many `onstat -g sql <sid>` lines ride in one tick's call (the sessions never
/// read first, then the longest ago): at 5,000 sessions, a few hundred are active at once.
pub(crate) const STATEMENTS_PER_TICK: usize = 200;

/// The statements of the active sessions: who was active at the latest `onstat -u`, and when
/// each session's statement was last asked for.
#[derive(Debug, Default)]
struct Statements {
    active: Vec<Sid>,
    /// Besides those: what a front-end's snapshot says is active too (`Focus::statements`).
    also: Vec<Sid>,
    asked: rustc_hash::FxHashMap<Sid, std::time::Duration>,
}

/// The demand, shared by the collectors of one instance.
#[derive(Debug)]
pub(crate) struct Demand {
    bits: watch::Sender<u8>,
    /// What a front-end wants at every tick whatever `onstat -u` says: a snapshot's second
    /// `onstat -D` (the chunk rates) and `onstat -g glo` (the CPU VPs' load) at the next tick
    /// rather than five and ten seconds on.
    pinned: std::sync::atomic::AtomicU8,
    /// Samples of `onstat -u` since the last one with a mutex wait (`None`: none yet).
    since_mutex_wait: Mutex<Option<u32>>,
    /// The CPU VPs of the latest `onstat -g glo` (0: not known yet).
    cpu_vps: std::sync::atomic::AtomicU64,
    statements: Mutex<Statements>,
    /// The sessions in focus and when their options are due (focus.rs).
    focus: Mutex<super::focus::Schedule>,
    /// Told when a session is newly drilled into (the group task may not wait for its tick).
    drilled: tokio::sync::Notify,
}

impl Default for Demand {
    fn default() -> Self {
        Demand {
            bits: watch::channel(0).0,
            pinned: std::sync::atomic::AtomicU8::new(0),
            since_mutex_wait: Mutex::new(None),
            cpu_vps: std::sync::atomic::AtomicU64::new(0),
            statements: Mutex::new(Statements::default()),
            focus: Mutex::new(super::focus::Schedule::default()),
            drilled: tokio::sync::Notify::new(),
        }
    }
}

impl Demand {
    /// Takes one `onstat -u` sample.
    pub(crate) fn observe(&self, u: &OnstatU) {
        let mut bits = 0;
        let mut mutex_wait = false;
        let mut runnable = 0u64;
        let mut active: Vec<Sid> = Vec::new();
        for th in &u.threads {
            let server_own =
                th.sessid.0 == 0 || matches!(th.flags.thread_kind(), Some('B' | 'D' | 'F' | 'M'));
            if th.wait_reason.is_none() && !server_own {
                runnable += 1;
            }
            // Active: running, or waiting for the server (a condition is most often the
            // client's: idle).
            if !server_own && th.wait_reason != Some(WaitReason::Condition) {
                active.push(th.sessid);
            }
            match th.wait_reason {
                Some(WaitReason::Lock) => bits |= LOCKS,
                Some(WaitReason::Buffer) => bits |= BUFFERS,
                Some(WaitReason::Mutex) => mutex_wait = true,
                _ => {}
            }
        }
        let vps = self.cpu_vps.load(std::sync::atomic::Ordering::Relaxed);
        if runnable > 0 && (vps == 0 || runnable > vps) {
            bits |= THREADS;
        }
        active.sort_unstable();
        active.dedup();
        if let Ok(mut st) = self.statements.lock() {
            st.active = active;
        }
        if let Ok(mut since) = self.since_mutex_wait.lock() {
            *since = match (mutex_wait, *since) {
                (true, _) => Some(0),
                (false, Some(n)) => Some(n.saturating_add(1)),
                (false, None) => None,
            };
            if since.is_some_and(|n| n < MUTEX_WATCH) {
                bits |= MUTEXES;
            }
        }
        self.bits.send_if_modified(|b| {
            let changed = *b != bits;
            *b = bits;
            changed
        });
    }

    fn bit(source: &Source) -> u8 {
        match source {
            Source::OnstatK => LOCKS,
            Source::OnstatX => BUFFERS,
            Source::OnstatGLmx => MUTEXES,
            Source::OnstatDUpper => CHUNKS,
            Source::OnstatGGlo => VPS,
            Source::OnstatGAth => THREADS,
            _ => 0,
        }
    }

    /// The statements to read in the tick's call at `now`: those of the sessions active at the
    /// latest `onstat -u` not asked for within [`STATEMENT_REREAD`], never asked first, at
    /// most `max`. They count as asked from now.
    pub(crate) fn statements_due(&self, now: std::time::Duration, max: usize) -> Vec<Source> {
        let Ok(mut st) = self.statements.lock() else {
            return Vec::new();
        };
        let st = &mut *st;
        let mut due: Vec<(Option<std::time::Duration>, Sid)> = st
            .active
            .iter()
            .chain(
                st.also
                    .iter()
                    .filter(|s| st.active.binary_search(s).is_err()),
            )
            .map(|s| (st.asked.get(s).copied(), *s))
            .filter(|(at, _)| at.is_none_or(|at| now.saturating_sub(at) >= STATEMENT_REREAD))
            .collect();
        due.sort_unstable();
        due.truncate(max);
        for (_, sid) in &due {
            st.asked.insert(*sid, now);
        }
        // Sessions not asked for a while are forgotten (sessions come and go).
        if st.asked.len() > 4 * st.active.len().max(1024) {
            st.asked
                .retain(|_, at| now.saturating_sub(*at) < 6 * STATEMENT_REREAD);
        }
        due.into_iter()
            .map(|(_, s)| Source::OnstatGSql(s))
            .collect()
    }

    /// A statement read at `now` for a session in focus: not read again with the active ones
    /// within [`STATEMENT_REREAD`].
    fn statement_read(&self, sid: Sid, now: std::time::Duration) {
        if let Ok(mut st) = self.statements.lock() {
            st.asked.insert(sid, now);
        }
    }

    /// Sessions whose statements are read besides the active ones of `onstat -u` (a
    /// front-end's snapshot knows them: `Focus::statements`).
    pub(crate) fn also_statements(&self, sids: &[Sid]) {
        if let Ok(mut st) = self.statements.lock() {
            if st.also != sids {
                st.also = sids.to_vec();
            }
        }
    }

    /// Takes the sessions a front-end wants in focus (their statements read besides the active
    /// ones too), and says when one was newly drilled into ([`Demand::drilled`]).
    pub(crate) fn set_focus(&self, focus: &super::Focus) {
        self.also_statements(&focus.statements);
        let drilled = self
            .focus
            .lock()
            .is_ok_and(|mut schedule| schedule.set(focus));
        if drilled {
            self.drilled.notify_one();
        }
    }

    /// The options of the sessions in focus to ask in the call at `now` (focus.rs; the round
    /// after one now at `next_round`), their statements counted as read.
    pub(crate) fn focus_due(
        &self,
        now: std::time::Duration,
        next_round: std::time::Duration,
        asks: impl Fn(&Source) -> bool,
    ) -> Vec<Source> {
        let due = match self.focus.lock() {
            Ok(mut schedule) => schedule.due(now, next_round, asks),
            Err(_) => return Vec::new(),
        };
        for s in &due {
            if let Source::OnstatGSql(sid) = s {
                self.statement_read(*sid, now);
            }
        }
        due
    }

    /// Options a killed call never reached: the focus's at the next call, and the statements
    /// read again as not read.
    pub(crate) fn unreached(&self, sources: &[Source]) {
        if let Ok(mut schedule) = self.focus.lock() {
            schedule.retry(sources);
        }
        if let Ok(mut st) = self.statements.lock() {
            for s in sources {
                if let Source::OnstatGSql(sid) = s {
                    st.asked.remove(sid);
                }
            }
        }
    }

    /// Completes when a session was newly drilled into since the last time it completed.
    pub(crate) async fn drilled(&self) {
        self.drilled.notified().await;
    }

    /// Takes an `onstat -g glo`'s count of CPU VPs.
    pub(crate) fn cpu_vps(&self, n: u64) {
        self.cpu_vps.store(n, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether `source` is ever wanted at every tick.
    pub(crate) fn demandable(source: &Source) -> bool {
        Demand::bit(source) != 0
    }

    /// The period of `source` while it is wanted.
    pub(crate) fn period(source: &Source) -> std::time::Duration {
        match source {
            Source::OnstatGLmx => MUTEX_PERIOD,
            _ => crate::source::registry::PERIOD_FAST,
        }
    }

    /// Whether `source` is wanted at every tick now.
    pub(crate) fn wants(&self, source: &Source) -> bool {
        let pinned = self.pinned.load(std::sync::atomic::Ordering::Relaxed);
        (*self.bits.borrow() | pinned) & Demand::bit(source) != 0
    }

    /// Wants `source` at every tick (`on`) until unpinned, whatever `onstat -u` says. Only the
    /// grouped call's sources follow a pin (`onstat -D`, `-g glo`, `-k`, `-X`).
    pub(crate) fn pin(&self, source: &Source, on: bool) {
        let bit = Demand::bit(source);
        if on {
            self.pinned
                .fetch_or(bit, std::sync::atomic::Ordering::Relaxed);
        } else {
            self.pinned
                .fetch_and(!bit, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// A receiver that sees the demand change.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u8> {
        self.bits.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(rows: &[(u64, char, u64)]) -> OnstatU {
        let mut text = String::from(
            "\nIBM Informix Dynamic Server Version 12.10.FC14 -- On-Line -- Up 1 days 00:00:00 -- 1000 Kbytes\n\nUserthreads\naddress          flags   sessid   user     tty      wait             tout locks nreads   nwrites\n",
        );
        for (i, (addr, f, wait)) in rows.iter().enumerate() {
            text.push_str(&format!(
                "{addr:x} {f}--P--- {} informix - {wait:x} 0 1 0 0\n",
                100 + i
            ));
        }
        text.push_str(&format!(
            " {} active, 1024 total, 20 maximum concurrent\n",
            rows.len()
        ));
        crate::parsers::onstat_u::parse(&text).expect("parses")
    }

    #[test]
    fn lock_buffer_and_mutex_waits_ask_for_their_holders_with_the_next_call() {
        let d = Demand::default();
        d.observe(&u(&[(0x1000, 'L', 0x9000)]));
        assert!(d.wants(&Source::OnstatK));
        assert!(!d.wants(&Source::OnstatX));
        assert!(!d.wants(&Source::OnstatGLmx));
        d.observe(&u(&[(0x1000, 'B', 0x9100), (0x2000, 'S', 0x7000)]));
        assert!(!d.wants(&Source::OnstatK));
        assert!(d.wants(&Source::OnstatX));
        // A mutex wait seen: -g lmx rides in the next calls, so the holders of the waits that
        // follow are read with them.
        assert!(d.wants(&Source::OnstatGLmx));
        // -g lmx names holders and waiters: -g wmx is not asked for more often.
        assert!(!d.wants(&Source::OnstatGWmx));
        d.observe(&u(&[]));
        assert!(!d.wants(&Source::OnstatK) && !d.wants(&Source::OnstatX));
        // Still wanted while a mutex wait was seen within the last samples, then not.
        for _ in 1..MUTEX_WATCH {
            assert!(d.wants(&Source::OnstatGLmx));
            d.observe(&u(&[]));
        }
        assert!(!d.wants(&Source::OnstatGLmx));
        d.observe(&u(&[(0x2000, 'S', 0x7100)]));
        assert!(d.wants(&Source::OnstatGLmx));
    }

    /// `onstat -g ath` joins every tick while more user threads look runnable (no wait flag)
    /// than there are CPU VPs, and before the VPs are known; the server's own threads do not
    /// count.
    #[test]
    fn the_threads_states_are_read_at_every_tick_while_more_look_runnable_than_cpu_vps() {
        let d = Demand::default();
        let busy: Vec<(u64, char, u64)> = (0..5).map(|i| (0x1000 + i * 0x100, '-', 0)).collect();
        // The VPs not known yet: read it.
        d.observe(&u(&busy));
        assert!(d.wants(&Source::OnstatGAth));
        d.cpu_vps(4);
        d.observe(&u(&busy));
        assert!(d.wants(&Source::OnstatGAth), "5 runnable on 4 CPU VPs");
        d.observe(&u(&busy[..4]));
        assert!(!d.wants(&Source::OnstatGAth), "4 runnable on 4 CPU VPs");
        // Waiters do not look runnable.
        let mut waiting = busy.clone();
        waiting[0].1 = 'L';
        d.observe(&u(&waiting));
        assert!(!d.wants(&Source::OnstatGAth));
        d.observe(&u(&[]));
        assert!(!d.wants(&Source::OnstatGAth));
    }

    /// The statements of the sessions active at the latest `onstat -u` (running, or waiting
    /// for the server; not those waiting on a condition, most often their client, nor the
    /// server's own), never read first, each again once [`STATEMENT_REREAD`] has passed, at
    /// most `max` a tick.
    #[test]
    fn the_active_sessions_statements_are_read_each_in_turn() {
        let d = Demand::default();
        let secs = std::time::Duration::from_secs;
        let sql = |v: Vec<Source>| -> Vec<u64> {
            v.into_iter()
                .map(|s| match s {
                    Source::OnstatGSql(sid) => sid.0,
                    other => panic!("{other:?}"),
                })
                .collect()
        };
        // Sessions 100..=103: running, a lock wait, a condition (idle), running.
        d.observe(&u(&[
            (0x1000, '-', 0),
            (0x2000, 'L', 0x9000),
            (0x3000, 'Y', 0x9100),
            (0x4000, '-', 0),
        ]));
        assert_eq!(sql(d.statements_due(secs(1), 2)), [100, 101]);
        assert_eq!(sql(d.statements_due(secs(2), 2)), [103]);
        assert!(d.statements_due(secs(5), 2).is_empty());
        // Read again once STATEMENT_REREAD has passed, the longest ago first.
        assert_eq!(sql(d.statements_due(secs(11), 2)), [100, 101]);
        assert_eq!(sql(d.statements_due(secs(12), 9)), [103]);
        // A session no longer active is not read.
        d.observe(&u(&[(0x4000, '-', 0)]));
        assert!(d.statements_due(secs(13), 9).is_empty());
        assert_eq!(sql(d.statements_due(secs(30), 9)), [100]);
        // One a front-end knows is active (a slow client's condition wait) is read too.
        d.also_statements(&[Sid(102)]);
        assert_eq!(sql(d.statements_due(secs(31), 9)), [102]);
    }

    #[test]
    fn a_pinned_source_is_wanted_until_unpinned_whatever_onstat_u_says() {
        let d = Demand::default();
        assert!(!d.wants(&Source::OnstatDUpper));
        d.pin(&Source::OnstatDUpper, true);
        d.observe(&u(&[(0x1000, 'L', 0x9000)]));
        assert!(d.wants(&Source::OnstatDUpper) && d.wants(&Source::OnstatK));
        d.observe(&u(&[]));
        assert!(d.wants(&Source::OnstatDUpper) && !d.wants(&Source::OnstatK));
        d.pin(&Source::OnstatDUpper, false);
        assert!(!d.wants(&Source::OnstatDUpper));
    }
}
