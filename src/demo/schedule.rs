//! When checkpoints are requested (every CKPTINTVL, three a cycle, one of them the stall's) and
//! how many threads wait for the stalled one: read by the counters, by the threads' flags and
//! by `onstat -g ckp`, so they agree.

use super::timeline::{self, Incident, CYCLE};

/// CKPTINTVL, seconds: a divisor of the cycle, so the checkpoints repeat with it.
pub(crate) const CKPTINTVL: u64 = 240;
/// A quick checkpoint is over (and listed) this many seconds after its request.
pub(crate) const NORMAL_DONE_AFTER: u64 = 3;

/// When the stall's checkpoint is requested (second of the cycle), and when it ends.
pub(crate) fn stall() -> (u64, u64) {
    let req = timeline::first(Incident::CheckpointRequested).map_or(215, |p| p.start);
    let end = timeline::first(Incident::CheckpointInProgress).map_or(req + 45, |p| p.end);
    (req, end)
}

/// The seconds of a cycle at which a checkpoint is requested, in order.
pub(crate) fn offsets() -> [u64; 3] {
    let (req, _) = stall();
    let mut v = [0, 1, 2].map(|k| (req + k * CKPTINTVL) % CYCLE);
    v.sort_unstable();
    v
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
