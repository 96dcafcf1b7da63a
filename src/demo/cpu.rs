//! `onstat -g cpu`: each thread's CPU seconds since it started.
//!
//! A client thread's CPU seconds are the sum, over every second since the demo was first asked
//! for them, of what its session used in that second ([`World::cpu_use`], the same function the
//! ground truth reads). A sum over all the seconds since time 0 would cost minutes at a late
//! demo time, so the sum starts where the demo was first asked (`Ledger`), as if the threads had
//! started then. Asked about an earlier moment, or one far ahead, the ledger starts again, as a
//! restarted server's counters do: the CPU seconds go down, and ifxtop must (and does) say the
//! use over that interval is not known. This is the one output of the demo that depends on what
//! was asked before; deltas between two moments a run asks in order are exact.
//!
//! The server's own threads use CPU at a steady pace (a pure function of `t`). The scan
//! helpers of a parallel query show no CPU seconds: the demo gives a helper the same tid each
//! time its query runs, which a real server never does (its tids are never reused).

use super::instance::{Population, Status, SYSTEM_THREADS};
use super::moment::{Vp, World};
use super::noise::{below, Salt};
use super::text;
use super::worlds::Line;
use std::fmt::Write as _;
use std::sync::Mutex;

/// Further ahead than this, the ledger starts again rather than walk every second between.
const MAX_GAP_S: u64 = 600;

/// The client threads' CPU seconds, as far as the demo has walked.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    /// The second the sums run up to (excluded); `None` before the first ask.
    t: Option<u64>,
    /// The second they began at.
    start: u64,
    /// Per session: CPU seconds, the last second it ran, times scheduled.
    cpu: Vec<f64>,
    last_run: Vec<Option<u64>>,
    scheds: Vec<u64>,
    /// Per slot, which of its sessions the sums are of: a new session's thread starts at 0.
    epochs: Vec<u64>,
}

impl Ledger {
    /// Brings the sums up to second `t` (excluded), reading each second's `line`.
    fn walk_to(&mut self, pop: &Population, line: impl Fn(u64) -> std::sync::Arc<Line>, t: u64) {
        let n = pop.sessions.len();
        let restart = match self.t {
            None => true,
            Some(at) => t < at || t - at > MAX_GAP_S || self.cpu.len() != n,
        };
        if restart {
            // What each thread had used before: a few seconds, as after a recent start; an
            // empty slot has no thread (the next session's starts from nothing).
            self.cpu = pop
                .sessions
                .iter()
                .map(|s| {
                    if pop.tenant(s.idx, t).present {
                        below(pop.seed, Salt::Cpu, s.idx as u64, 0, 400) as f64 / 100.0
                    } else {
                        0.0
                    }
                })
                .collect();
            self.last_run = vec![None; n];
            self.scheds = pop
                .sessions
                .iter()
                .map(|s| 1 + below(pop.seed, Salt::Cpu, s.idx as u64, 1, 900))
                .collect();
            self.epochs = (0..n).map(|i| pop.tenant(i, t).epoch).collect();
            self.t = Some(t);
            self.start = t;
            return;
        }
        let from = self.t.unwrap_or(t);
        for u in from..t {
            let line = line(u);
            for (i, epoch) in line.epochs.iter().enumerate() {
                if self.epochs.get(i).is_some_and(|e| e != epoch) {
                    self.epochs[i] = *epoch;
                    self.cpu[i] = 0.0;
                    self.last_run[i] = None;
                    self.scheds[i] = 1;
                }
            }
            for &(i, c) in &line.used {
                self.cpu[i] += c;
                self.last_run[i] = Some(u);
                // Scheduled about every 2.5 ms of CPU.
                self.scheds[i] += 1 + (c * 400.0) as u64;
            }
        }
        self.t = Some(t);
    }
}

/// CPU seconds per second of a server thread (a VP's poll thread, a daemon).
fn steady_rate(seed: u64, tid: u64) -> f64 {
    below(seed, Salt::Cpu, tid, 2, 50) as f64 / 10_000.0
}

/// The demo clock's `MM/DD HH:MM:SS` at demo second `t`, written onto `o`.
fn month_day_time(o: &mut text::Rows<'_>, t: u64) {
    let (month, day, tod) = super::onstat::civil(i64::try_from(t).unwrap_or(i64::MAX));
    o.zdec(month, 2);
    o.ascii(b'/');
    o.zdec(day, 2);
    o.ascii(b' ');
    o.hms(tod);
}

/// One row: ` 4      aio vp 0          5aio*   06/05 11:19:00    29409.7586    9587799    IO Idle`.
/// The vp column is `vp` and a `*` when `star` (a VP's own poll thread).
#[allow(clippy::too_many_arguments)]
fn row(
    o: &mut text::Rows<'_>,
    tid: u64,
    name: &str,
    vp: Vp,
    star: bool,
    last_run: u64,
    cpu: f64,
    scheds: u64,
    status: &Status,
) {
    o.ascii(b' ');
    o.dec(tid, 7);
    o.left(name, 18);
    let at = o.len();
    vp.write(o);
    if star {
        o.ascii(b'*');
    }
    o.pad(8usize.saturating_sub(o.len() - at));
    month_day_time(o, last_run);
    o.ascii(b' ');
    // Straight into the row (no String a row): the same digits as `format!("{cpu:.4}")`
    // right-aligned in 13.
    let _ = write!(o, "{cpu:>13.4}");
    o.ascii(b' ');
    o.rdec(scheds, 10);
    o.str("    ");
    status.write(o);
    o.ascii(b'\n');
}

/// `onstat -g cpu` at the world's moment, walking the ledger up to it.
pub(crate) fn onstat_g_cpu(
    w: &World<'_>,
    ledger: &Mutex<Ledger>,
    worlds: &super::worlds::Worlds,
) -> String {
    let t = w.now.t;
    let seed = w.pop.seed;
    let threads = w.threads();
    let mut o = super::onstat::banner(w);
    o.reserve(100 * (threads.len() + SYSTEM_THREADS.len() + 4));
    o.push_str("\nThread CPU Info:\n");
    o.push_str(
        " tid    name              vp       Last Run           CPU Time     #scheds    status\n",
    );
    let steady =
        |o: &mut text::Rows<'_>, tid: u64, name: &str, vp: Vp, star: bool, status: &Status| {
            let rate = steady_rate(seed, tid);
            // Up since an hour before time 0.
            let secs = (t + 3_600) as f64 * rate;
            row(
                o,
                tid,
                name,
                vp,
                star,
                t.saturating_sub(1),
                secs,
                1 + (secs * 400.0) as u64,
                status,
            );
        };
    let mut r = text::Rows::new(&mut o);
    for (i, (status, vp, name)) in SYSTEM_THREADS.iter().enumerate() {
        steady(&mut r, 2 + i as u64, name, Vp::Named(vp), true, status);
    }
    let mut ledger = ledger
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    worlds.want_cpu_lines(w.pop, w.counters);
    ledger.walk_to(w.pop, |u| worlds.cpu_line(w.pop, w.counters, u), t);
    for th in threads {
        let (vp, status) = (th.vp, &th.status);
        match th.session {
            Some(i) if w.tenants.get(i).is_some_and(|tn| tn.tid == th.tid) => {
                // The ledger's sums run up to `t` (excluded): a session that connected at `t`
                // is not in them yet, and its thread starts from nothing (never from the
                // slot's last session's seconds).
                let fresh = w
                    .tenants
                    .get(i)
                    .is_some_and(|tn| ledger.epochs.get(i) != Some(&tn.epoch));
                let last = ledger.last_run.get(i).copied().flatten();
                let (last, cpu, scheds) = if fresh {
                    (t, 0.0, 1)
                } else {
                    (
                        // Never ran since the ledger began.
                        last.unwrap_or(ledger.start),
                        ledger.cpu.get(i).copied().unwrap_or(0.0),
                        ledger.scheds.get(i).copied().unwrap_or(1),
                    )
                };
                row(
                    &mut r, th.tid, th.name, vp, false, last, cpu, scheds, status,
                );
            }
            // A parallel query's helper: see the module's note.
            Some(_) => {
                let last = t.saturating_sub(1);
                row(&mut r, th.tid, th.name, vp, false, last, 0.0, 1, status);
            }
            None => steady(&mut r, th.tid, th.name, vp, false, status),
        }
    }
    drop(r);
    o
}
