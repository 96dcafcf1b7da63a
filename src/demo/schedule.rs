//! When checkpoints are requested (every CKPTINTVL, five a cycle, one of them the stall's), how
//! many threads wait for the stalled one, and the second or two a quick one blocks: read by the
//! counters, by the threads' flags, by the banner and by `onstat -g ckp`, so they agree.

use super::timeline::{self, Incident, CYCLE};

/// CKPTINTVL, seconds: a divisor of the cycle, so the checkpoints repeat with it. Two of the
/// quick ones fall in calm stretches (359 and 503), where their brief block must read as the
/// normal checkpoint it is.
pub(crate) const CKPTINTVL: u64 = 144;
/// Checkpoints requested in a cycle.
pub(crate) const PER_CYCLE: usize = (CYCLE / CKPTINTVL) as usize;
/// A quick checkpoint is over (and listed) this many seconds after its request.
pub(crate) const NORMAL_DONE_AFTER: u64 = 3;

/// When the stall's checkpoint is requested (second of the cycle), and when it ends.
pub(crate) fn stall() -> (u64, u64) {
    let req = timeline::first(Incident::CheckpointRequested).map_or(215, |p| p.start);
    let end = timeline::first(Incident::CheckpointInProgress).map_or(req + 45, |p| p.end);
    (req, end)
}

/// The seconds of a cycle at which a checkpoint is requested, in order.
pub(crate) fn offsets() -> [u64; PER_CYCLE] {
    let (req, _) = stall();
    let mut v = [0; PER_CYCLE];
    for (k, o) in v.iter_mut().enumerate() {
        *o = (req + k as u64 * CKPTINTVL) % CYCLE;
    }
    v.sort_unstable();
    v
}

/// Seconds the `j`-th checkpoint of a cycle blocks the server when it is a quick one: a
/// non-blocking checkpoint still blocks for a moment at its start (the manual's own
/// `onstat -g ckp` example shows a 2.0 s block), `Blocked:CKPT` in the banner, a thread or two
/// waiting (C).
pub(crate) fn quick_block(j: usize) -> u64 {
    1 + (j as u64 % 2)
}

/// Whether second `t` falls in a quick checkpoint's block: the checkpoint's place in the
/// cycle, and the seconds since its request.
pub(crate) fn quick_block_at(t: u64) -> Option<(usize, u64)> {
    let at = t % CYCLE;
    offsets()
        .into_iter()
        .enumerate()
        .find(|&(j, o)| !is_stall(o) && (o..o + quick_block(j)).contains(&at))
        .map(|(j, o)| (j, at - o))
}

pub(crate) fn is_stall(offset: u64) -> bool {
    offset == stall().0
}

/// The waits of a quick checkpoint, by its place in the cycle.
pub(crate) fn normal_waits(j: usize) -> u64 {
    [1, 2, 0][j % 3]
}

/// How many threads wait for the stalled checkpoint `into` seconds into `incident`, of a group
/// of `group` sessions that may: 20 at the request, 40 by the time it runs.
pub(crate) fn checkpoint_waiters(incident: Incident, into: u64, group: u64) -> u64 {
    let req = timeline::first(Incident::CheckpointRequested)
        .map_or(1, |p| p.len())
        .max(1);
    let want = match incident {
        Incident::CheckpointRequested => 20 + 20 * into / req,
        Incident::CheckpointInProgress => 40,
        _ => 0,
    };
    want.min(group)
}
