//! The checkpoints: one every CKPTINTVL (144 s, five a cycle), all quick except the one
//! requested when the timeline's checkpoint stall begins — the seed's zone-reclaim story: a
//! thread crawls through its critical section for half a minute while everyone waits, then the
//! checkpoint itself is done in seconds. Its block time is almost all critical-section time.
//! Before the demo's time 0 every checkpoint was a quick one.

use super::logs::{self, LogPos};
use super::noise::{unit, Salt};
use super::profile::{Counters, DIRTY_AT_CHECKPOINT, Q};
use super::schedule::{self, offsets, stall, NORMAL_DONE_AFTER, PER_CYCLE};
use super::timeline::{self, Incident, CYCLE};

/// How many `onstat -g ckp` keeps.
pub(crate) const HISTORY: usize = 20;
/// The interval id of the first checkpoint of cycle 0.
const FIRST_ID: i64 = 4_120;

/// One row of `onstat -g ckp`.
#[derive(Debug, Clone)]
pub(crate) struct Checkpoint {
    pub(crate) id: i64,
    /// Demo second it was requested.
    pub(crate) at: i64,
    pub(crate) blocking: bool,
    pub(crate) trigger: &'static str,
    pub(crate) lsn: LogPos,
    pub(crate) total: f64,
    pub(crate) flush: f64,
    pub(crate) block: f64,
    pub(crate) waits: u64,
    pub(crate) ckpt_time: f64,
    pub(crate) wait_time: f64,
    pub(crate) long_time: f64,
    pub(crate) dirty: u64,
    pub(crate) dskflu_per_sec: u64,
    pub(crate) plog_pages: u64,
    pub(crate) llog_pages: u64,
}

/// The checkpoint requested `j`-th in cycle `cycle`.
fn planned(cycle: i64, j: usize) -> (i64, i64, bool) {
    let off = offsets()[j];
    let at = cycle * CYCLE as i64 + off as i64;
    let stalled = cycle >= 0 && schedule::is_stall(off);
    let done = if stalled {
        cycle * CYCLE as i64 + stall().1 as i64
    } else {
        at + NORMAL_DONE_AFTER as i64
    };
    (at, done, stalled)
}

/// The checkpoints completed by `t`, oldest first, at most `HISTORY`.
pub(crate) fn history(c: &Counters, seed: u64, group: u64, t: u64) -> Vec<Checkpoint> {
    let t = t as i64;
    let mut done = Vec::with_capacity(HISTORY + 1);
    let mut cycle = t.div_euclid(CYCLE as i64);
    // Newest first, back through the cycles.
    'outer: loop {
        for j in (0..PER_CYCLE).rev() {
            let (at, end, stalled) = planned(cycle, j);
            if end <= t {
                done.push((cycle, j, at, stalled));
                if done.len() > HISTORY {
                    break 'outer;
                }
            }
        }
        cycle -= 1;
    }
    // The one before the oldest listed gives its interval's log and physical-log pages.
    let mut rows: Vec<Checkpoint> = done
        .windows(2)
        .map(|w| {
            let (cycle, j, at, stalled) = w[0];
            let (_, _, before, _) = w[1];
            row(c, seed, group, cycle, j, at, before, stalled)
        })
        .collect();
    rows.reverse();
    rows
}

/// The log holding the last completed checkpoint.
pub(crate) fn last_lsn(c: &Counters, t: u64) -> Option<LogPos> {
    let t = t as i64;
    let mut cycle = t.div_euclid(CYCLE as i64);
    for _ in 0..3 {
        for j in (0..PER_CYCLE).rev() {
            let (at, end, _) = planned(cycle, j);
            if end <= t {
                return Some(logs::pos_at(c, at));
            }
        }
        cycle -= 1;
    }
    None
}

/// Seconds since the last checkpoint ended (what has been dirtied since).
pub(crate) fn since_last(t: u64) -> u64 {
    let t = t as i64;
    let mut cycle = t.div_euclid(CYCLE as i64);
    for _ in 0..3 {
        for j in (0..PER_CYCLE).rev() {
            let (_, end, _) = planned(cycle, j);
            if end <= t {
                return (t - end) as u64;
            }
        }
        cycle -= 1;
    }
    0
}

#[allow(clippy::too_many_arguments)]
fn row(
    c: &Counters,
    seed: u64,
    group: u64,
    cycle: i64,
    j: usize,
    at: i64,
    before: i64,
    stalled: bool,
) -> Checkpoint {
    let id = FIRST_ID + PER_CYCLE as i64 * cycle + j as i64;
    let u = |k: u64| unit(seed, Salt::Ckpt, id as u64, k);
    let since = |q: Q| (c.at(q, at) - c.at(q, before)).max(0.0);
    let dirty = (since(Q::BufWrits) * DIRTY_AT_CHECKPOINT) as u64;
    let plog_pages = since(Q::PlogPages) as u64;
    let llog_pages = logs::written(c, at).saturating_sub(logs::written(c, before));
    let (total, flush, block, waits, ckpt_time, wait_time, long_time) = if stalled {
        // The request waits ~35 s for the thread in its critical section (zone reclaim), the
        // flush then takes ten: everyone waited for nearly all of it.
        let (req, end) = stall();
        let inp = timeline::first(Incident::CheckpointInProgress).map_or(10, |p| p.len());
        let total = (end - req) as f64 - 0.1 - 0.3 * u(1);
        let flush = inp as f64 - 0.4 - 0.3 * u(2);
        let waits = schedule::checkpoint_waiters(Incident::CheckpointInProgress, 0, group);
        let ckpt_time = (end - req - inp) as f64 - 0.2;
        (
            total,
            flush,
            total,
            waits,
            ckpt_time,
            total * 0.61,
            total - 0.1,
        )
    } else {
        // It blocks for a second or two at its start (`schedule::quick_block`).
        let block = schedule::quick_block(j) as f64 - 0.1 - 0.5 * u(5);
        let total = block + 0.4 + 0.4 * u(1);
        let waits = schedule::normal_waits(j);
        let wait = if waits > 0 { 0.1 * u(3) } else { 0.0 };
        (
            total,
            total * (0.8 + 0.1 * u(2)),
            block,
            waits,
            0.3 * u(4),
            wait,
            wait * 1.5,
        )
    };
    Checkpoint {
        id,
        at,
        blocking: stalled,
        trigger: "CKPTINTVL",
        lsn: logs::pos_at(c, at),
        total,
        flush,
        block,
        waits,
        ckpt_time,
        wait_time,
        long_time,
        dirty,
        dskflu_per_sec: (dirty as f64 / flush.max(0.1)) as u64,
        plog_pages,
        llog_pages,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ckptintvl_and_the_stall_blocks() {
        assert_eq!(offsets(), [71, 215, 359, 503, 647]);
        let c = Counters::new(1, 300);
        let h = history(&c, 1, 40, 300);
        assert_eq!(h.len(), HISTORY);
        let last = h.last().expect("rows");
        assert!(last.blocking && last.at == 215, "{last:?}");
        assert!(last.long_time / last.block > 0.95, "{last:?}");
        assert!(h[..HISTORY - 1].iter().all(|k| !k.blocking));
        for w in h.windows(2) {
            assert_eq!(w[1].id, w[0].id + 1);
            assert_eq!(w[1].at - w[0].at, schedule::CKPTINTVL as i64);
        }
        // Before the stall is over it is not listed.
        let h = history(&c, 1, 40, 259);
        assert!(h.iter().all(|k| !k.blocking));
    }
}
