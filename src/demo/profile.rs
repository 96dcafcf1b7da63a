//! The instance's cumulative counters: what `onstat -p`, `-g glo`, `-l` and `-g ckp` count since
//! the server started (commits, ISAM calls, waits, CPU seconds per VP class, log pages, ...).
//!
//! Each counter rises by a rate that depends on the second of the timeline (lock waits during
//! the lock chain, buffer waits during the hot spots, CPU during the saturation, log pages
//! during the long transaction) with a little noise. The rates of one cycle are summed once,
//! when the population is built; a counter at any moment is then its value at time 0 plus
//! whole cycles plus the sum up to that second: counters only rise, and any moment is found
//! directly.

use super::instance::{CKPT, MUTEX_WAITERS};
use super::longtx::{self, Stage};
use super::noise::{unit, Salt};
use super::schedule::{self, checkpoint_waiters};
use super::timeline::{self, Incident, CYCLE};

/// The counters kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum Q {
    Commit,
    Rollbk,
    Isam,
    BufReads,
    DskReads,
    BufWrits,
    DskWrits,
    BufWaits,
    LokWaits,
    LockReqs,
    Deadlks,
    Dltouts,
    CkpWaits,
    SeqScans,
    LchWaits,
    LngSpins,
    /// CPU seconds of the `cpu` VP class, user and system.
    CpuUser,
    CpuSys,
    /// CPU seconds of the other VP classes (user + system).
    AioCpu,
    LioCpu,
    PioCpu,
    SocCpu,
    AdmCpu,
    MscCpu,
    SchedCalls,
    Switches,
    /// Logical-log pages written, and those the long transaction wrote itself.
    LogPages,
    TxnLogPages,
    /// Physical-log pages written.
    PlogPages,
    /// Checkpoints requested.
    Checkpoints,
    ReadAhead,
    /// Rows the purge deleted.
    PurgeRows,
}

const NQ: usize = Q::PurgeRows as usize + 1;

/// Of the buffers written between two checkpoints, the share still dirty when the next one
/// comes (what it flushes: its `#Dirty Buffers`).
pub(crate) const DIRTY_AT_CHECKPOINT: f64 = 0.12;

/// The DBA last reset the statistics (`onstat -z`) this long before the demo's time 0: the
/// counters count from there.
pub(crate) const ZEROED_AGO: u64 = 2 * 86_400 + 5 * 3_600;

/// The CPU VPs of the demo (`1cpu` ... `16cpu` in `onstat -g ath`).
pub(crate) const CPU_VPS: u64 = 16;

/// Logical-log pages written per second when nothing special happens (a 50,000-page log file
/// every ~90 s).
const LOG_PAGES_CALM: f64 = 560.0;

/// The counters' per-second rates over one cycle, summed.
#[derive(Debug, Clone)]
pub(crate) struct Counters {
    /// `prefix[s][q]`: the sum of the rates of seconds `0..s` of the cycle.
    prefix: Vec<[f64; NQ]>,
    /// The values at time 0 (counted since `ZEROED_AGO`).
    base: [f64; NQ],
    /// The rates before time 0, when nothing happened but the calm (and the checkpoints).
    before: [f64; NQ],
    /// The rates of each second, for `per sec` columns.
    rates: Vec<[f64; NQ]>,
}

impl Counters {
    pub(crate) fn new(seed: u64, sessions: usize) -> Counters {
        let n = sessions as f64;
        // How many checkpoint waiters this population has (the stall's `# Waits`).
        let ckpt_group = CKPT.end.min(sessions).saturating_sub(CKPT.start) as u64;
        let mut rates = Vec::with_capacity(CYCLE as usize);
        for s in 0..CYCLE {
            rates.push(second(seed, n, ckpt_group, s));
        }
        flush_at_checkpoints(&mut rates);
        let mut prefix = Vec::with_capacity(CYCLE as usize + 1);
        let mut sum = [0.0; NQ];
        prefix.push(sum);
        for r in &rates {
            for (acc, x) in sum.iter_mut().zip(r) {
                *acc += x;
            }
            prefix.push(sum);
        }
        // Before time 0 the server was calm: the calm seconds' average rates, with the
        // checkpoints' interval and their few waits and flushes.
        let calm: Vec<&[f64; NQ]> = (0..CYCLE)
            .filter(|&s| timeline::now(s).incident() == Incident::Calm)
            .map(|s| &rates[s as usize])
            .collect();
        let mut before = [0.0; NQ];
        for (q, b) in before.iter_mut().enumerate() {
            *b = calm.iter().map(|r| r[q]).sum::<f64>() / calm.len().max(1) as f64;
        }
        before[Q::Checkpoints as usize] = sum[Q::Checkpoints as usize] / CYCLE as f64;
        before[Q::CkpWaits as usize] = (0..schedule::PER_CYCLE)
            .map(schedule::normal_waits)
            .sum::<u64>() as f64
            / CYCLE as f64;
        before[Q::DskWrits as usize] = before[Q::BufWrits as usize] * (0.03 + DIRTY_AT_CHECKPOINT);
        let mut base = [0.0; NQ];
        for (q, b) in base.iter_mut().enumerate() {
            // Quieter on average since the reset (nights), but checkpoints keep their interval.
            let busy = if q == Q::Checkpoints as usize {
                1.0
            } else {
                0.6
            };
            *b = (before[q] * ZEROED_AGO as f64 * busy).floor();
        }
        base[Q::Deadlks as usize] = 2.0;
        Counters {
            prefix,
            base,
            before,
            rates,
        }
    }

    /// The counter at demo second `t` (negative: before the demo started), what happened
    /// during second `t` included (the `onstat -u` of that second shows it too).
    pub(crate) fn at(&self, q: Q, t: i64) -> f64 {
        if t < 0 {
            return self.base[q as usize] + t as f64 * self.before[q as usize];
        }
        let c = CYCLE as i64;
        let cycles = (t + 1).div_euclid(c) as f64;
        let rem = (t + 1).rem_euclid(c) as usize;
        let q = q as usize;
        self.base[q] + cycles * self.prefix[CYCLE as usize][q] + self.prefix[rem][q]
    }

    /// The counter as a whole number.
    pub(crate) fn count(&self, q: Q, t: u64) -> u64 {
        self.at(q, t as i64).max(0.0) as u64
    }

    /// Its rate during second `t`.
    pub(crate) fn rate(&self, q: Q, t: u64) -> f64 {
        self.rates[(t % CYCLE) as usize][q as usize]
    }
}

/// Each checkpoint writes the buffers still dirty since the one before (in the second after
/// its request, or while the stalled one is in progress).
fn flush_at_checkpoints(rates: &mut [[f64; NQ]]) {
    let c = CYCLE as usize;
    let interval = schedule::CKPTINTVL as usize;
    let (_, stall_end) = schedule::stall();
    let inp = timeline::first(Incident::CheckpointInProgress).map_or(10, |p| p.len()) as usize;
    for at in schedule::offsets() {
        let at = at as usize;
        let written: f64 = (1..=interval)
            .map(|k| rates[(at + c - k) % c][Q::BufWrits as usize])
            .sum();
        let dirty = written * DIRTY_AT_CHECKPOINT;
        if schedule::is_stall(at as u64) {
            let from = stall_end as usize - inp;
            for k in 0..inp {
                rates[(from + k) % c][Q::DskWrits as usize] += dirty / inp as f64;
            }
        } else {
            rates[(at + 1) % c][Q::DskWrits as usize] += dirty;
        }
    }
}

/// Noise around 1 (0.85 .. 1.15), different per counter and second.
fn wobble(seed: u64, q: Q, s: u64) -> f64 {
    0.85 + 0.3 * unit(seed, Salt::Profile, q as u64, s)
}

/// Busy fraction of the CPU VPs during second `s` of the cycle.
fn cpu_busy(seed: u64, s: u64) -> f64 {
    let now = timeline::now(s);
    let base = match now.incident() {
        Incident::InsertHotSpot => 0.32,
        Incident::NullIndexLeaf => 0.30,
        Incident::CheckpointRequested => 0.12,
        Incident::CheckpointInProgress => 0.20,
        Incident::LongTransaction => match longtx::stage(&now) {
            Some(Stage::Open) => 0.38,
            Some(Stage::RollingBack) => 0.30,
            Some(Stage::Blocked) => 0.16,
            None => 0.26,
        },
        // Saturated within a few seconds: the CPU VPs have nothing left.
        Incident::CpuSaturated => {
            return (0.6 + 0.4 * (now.into as f64 / 4.0).min(1.0))
                * (0.975 + 0.02 * unit(seed, Salt::Profile, 99, s));
        }
        // Threads spinning on the mutex burn CPU too.
        Incident::MutexContention => 0.45,
        _ => 0.26,
    };
    base * wobble(seed, Q::CpuUser, s)
}

/// Every counter's increase during second `s` of the cycle.
fn second(seed: u64, n: f64, ckpt_group: u64, s: u64) -> [f64; NQ] {
    let now = timeline::now(s);
    let inc = now.incident();
    let w = |q: Q| wobble(seed, q, s);
    let mut r = [0.0; NQ];
    let set = |r: &mut [f64; NQ], q: Q, v: f64| r[q as usize] = v;
    let stage = longtx::stage(&now);
    // Work done: commits scale with the sessions; the CPU-saturated server gets less done, and
    // writers wait while the server is blocked.
    let throughput = match (inc, stage) {
        (_, Some(Stage::Blocked)) => 0.05,
        (Incident::CheckpointRequested | Incident::CheckpointInProgress, _) => 0.3,
        (Incident::CpuSaturated, _) => 0.8,
        (Incident::MutexContention, _) => 0.7,
        _ => 1.0,
    };
    let commit = 0.07 * n * throughput * w(Q::Commit);
    set(&mut r, Q::Commit, commit);
    let mut rollbk = 0.001 * n * w(Q::Rollbk);
    if inc == Incident::LockChain {
        // Lock timeouts roll back.
        rollbk += 0.12;
    }
    if inc == Incident::LongTransaction && now.into == longtx::DONE_INTO {
        rollbk += 1.0;
    }
    set(&mut r, Q::Rollbk, rollbk);
    let seq = match inc {
        Incident::CpuSaturated => 18.0,
        _ => 1.2,
    } * w(Q::SeqScans);
    set(&mut r, Q::SeqScans, seq);
    let purge = if stage == Some(Stage::Open) {
        8_000.0
    } else {
        0.0
    };
    set(&mut r, Q::PurgeRows, purge);
    let isam = commit * 15.0 + seq * 200.0 + purge;
    set(&mut r, Q::Isam, isam);
    let bufreads = isam * 5.0 * w(Q::BufReads);
    set(&mut r, Q::BufReads, bufreads);
    let miss = if inc == Incident::CpuSaturated {
        0.012
    } else {
        0.003
    };
    set(&mut r, Q::DskReads, bufreads * miss * w(Q::DskReads));
    let bufwrits = (commit * 14.0 + purge * 0.05) * w(Q::BufWrits);
    set(&mut r, Q::BufWrits, bufwrits);
    // The page cleaners' writes between checkpoints (the checkpoints' own are added after).
    set(&mut r, Q::DskWrits, bufwrits * 0.03 * w(Q::DskWrits));
    set(&mut r, Q::LockReqs, isam * 1.3 * w(Q::LockReqs));
    set(&mut r, Q::PlogPages, bufwrits * 0.05 * w(Q::PlogPages));
    set(&mut r, Q::ReadAhead, bufreads * 0.02);
    let bufwaits = match inc {
        Incident::InsertHotSpot => 45.0,
        Incident::NullIndexLeaf => 28.0,
        _ => 0.4,
    } * w(Q::BufWaits);
    set(&mut r, Q::BufWaits, bufwaits);
    let mut lokwaits = match inc {
        Incident::LockChain => 0.8,
        _ => 0.05,
    } * w(Q::LokWaits);
    if let Some(p) = timeline::first(Incident::LockChain) {
        if s == p.start {
            // The chain's three waits begin.
            lokwaits += 3.0;
        }
        // Once per cycle two of the application sessions behind the chain deadlock.
        if s == p.start + 40 {
            r[Q::Deadlks as usize] = 1.0;
        }
    }
    set(&mut r, Q::LokWaits, lokwaits);
    if inc == Incident::LockChain {
        set(&mut r, Q::Dltouts, 0.12 * w(Q::Dltouts));
    }
    // Checkpoint waits: the stall's waiters as they queue up, and the few waits of the others
    // when they complete.
    let mut ckpwaits = 0.0;
    let waiting = |at: u64| {
        let n = timeline::now(at);
        checkpoint_waiters(n.incident(), n.into, ckpt_group)
    };
    let before = waiting((s + CYCLE - 1) % CYCLE);
    ckpwaits += waiting(s).saturating_sub(before) as f64;
    for (j, at) in schedule::offsets().into_iter().enumerate() {
        if s == at {
            r[Q::Checkpoints as usize] = 1.0;
        }
        if !schedule::is_stall(at) && s == at + schedule::NORMAL_DONE_AFTER {
            ckpwaits += schedule::normal_waits(j) as f64;
        }
    }
    set(&mut r, Q::CkpWaits, ckpwaits);
    // Latch (mutex) waits: the short S waits of the calm, and the contention's queue.
    let contention = (MUTEX_WAITERS.end.min(n as usize)).saturating_sub(MUTEX_WAITERS.start);
    let lch = match inc {
        Incident::MutexContention if contention > 0 => 9.0 * contention as f64,
        _ => 2.0 + n * 0.004,
    } * w(Q::LchWaits);
    set(&mut r, Q::LchWaits, lch);
    let spins = match inc {
        Incident::MutexContention => 6.0,
        _ => 0.02,
    } * w(Q::LngSpins);
    set(&mut r, Q::LngSpins, spins);
    let busy = cpu_busy(seed, s).min(0.995);
    let cpu = busy * CPU_VPS as f64;
    set(&mut r, Q::CpuUser, cpu * 0.94);
    set(&mut r, Q::CpuSys, cpu * 0.06);
    set(&mut r, Q::AioCpu, 0.004 * w(Q::AioCpu));
    set(&mut r, Q::PioCpu, 0.0002);
    set(&mut r, Q::SocCpu, (0.004 + n * 0.00004) * w(Q::SocCpu));
    set(&mut r, Q::AdmCpu, 0.0009);
    set(&mut r, Q::MscCpu, 0.00002);
    set(&mut r, Q::SchedCalls, cpu * 2_600.0);
    set(&mut r, Q::Switches, cpu * 2_450.0);
    // The logical log: the purge writes fast until LTXHWM, the rollback's compensation records
    // and the others after, the rollback alone while the server is blocked.
    let (log, own) = match stage {
        Some(Stage::Open) => (16_800.0, 16_240.0),
        Some(Stage::RollingBack) => (7_500.0, 6_940.0),
        Some(Stage::Blocked) => (1_600.0, 1_600.0),
        None => (LOG_PAGES_CALM * throughput.max(0.3) * w(Q::LogPages), 0.0),
    };
    set(&mut r, Q::LogPages, log);
    set(&mut r, Q::TxnLogPages, own);
    set(&mut r, Q::LioCpu, 0.0006 + log * 0.000_002);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_rise_and_repeat_every_cycle() {
        let c = Counters::new(1, 300);
        let mut prev = [f64::MIN; NQ];
        for t in -100..2 * CYCLE as i64 {
            for (q, p) in prev.iter_mut().enumerate() {
                let v = c.at_index(q, t);
                assert!(v >= *p, "counter {q} went down at {t}");
                *p = v;
            }
        }
        // One cycle adds the same whichever it is.
        let d0 = c.at(Q::Commit, 700) - c.at(Q::Commit, -20 + 720) + c.at(Q::Commit, 720)
            - c.at(Q::Commit, 0);
        let d1 = c.at(Q::Commit, 700 + 720) - c.at(Q::Commit, 700);
        assert!((d0 - d1).abs() < 1e-6 * d1, "{d0} vs {d1}");
        // Busy about 20-40 % of 16 VPs in the calm.
        let calm =
            c.at(Q::CpuUser, 10) + c.at(Q::CpuSys, 10) - c.at(Q::CpuUser, 0) - c.at(Q::CpuSys, 0);
        assert!((0.18 * 160.0..0.42 * 160.0).contains(&calm), "{calm}");
    }

    impl Counters {
        fn at_index(&self, q: usize, t: i64) -> f64 {
            if t < 0 {
                return self.base[q] + t as f64 * self.before[q];
            }
            let c = CYCLE as i64;
            self.base[q]
                + (t + 1).div_euclid(c) as f64 * self.prefix[CYCLE as usize][q]
                + self.prefix[(t + 1).rem_euclid(c) as usize][q]
        }
    }
}
