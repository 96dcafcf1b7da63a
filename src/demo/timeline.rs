//! The demo's incident timeline: one table of phases that repeats every `CYCLE` seconds. The
//! phase line under the tabs and every printer read this table, so what the screen says and what
//! the outputs show cannot drift apart.

use std::time::Duration;

/// Length of one pass through the timeline, in seconds.
pub const CYCLE: u64 = 720;

/// What plays during a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Incident {
    /// Only idle netnorm waits, a couple of `sm_read` waits, short mutex waits.
    Calm,
    /// Inserts into `order_log` queue (B) on the buffer of its last data page.
    InsertHotSpot,
    /// Updates that set `ship_date` to NULL all hit one leaf of `ix_orders_ship_date` (B).
    NullIndexLeaf,
    /// A few slow WAN clients stop reading a big fetch: netnorm waits, Send-Q filling.
    SendQFill,
    /// The same clients catch up: Send-Q draining.
    SendQDrain,
    /// `(CKPT REQ)`, `Blocked:CKPT`: threads wait C while one thread's critical section crawls
    /// through zone reclaim.
    CheckpointRequested,
    /// `(CKPT INP)`, still blocked: the checkpoint itself, quick once it starts.
    CheckpointInProgress,
    /// 814 waits on 813, which waits (with 815) on 812, the head blocker.
    LockChain,
    /// One session's transaction stays open while others write: the logical logs fill behind
    /// it until the server flags `LONGTX` and blocks (`Blocked:LONGTX`).
    LongTransaction,
    /// CPU VPs saturated: busy near 100 %, the ready queue growing; memory segments added.
    CpuSaturated,
    /// S waiters on one named mutex held by one thread.
    MutexContention,
    /// One chunk's device turns slow (await rising) while Informix asks no more of it: the SAN.
    SlowDevice,
    /// An RSS secondary falls behind until log transmission to it is blocked.
    ReplicaLag,
}

/// One row of the timeline: seconds `[start, end)` of each cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phase {
    pub start: u64,
    pub end: u64,
    pub incident: Incident,
}

impl Phase {
    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }

    /// The middle of the phase in the first cycle, for tests and `snapshot --at`.
    pub fn middle(&self) -> u64 {
        self.start + self.len() / 2
    }
}

const fn p(start: u64, end: u64, incident: Incident) -> Phase {
    Phase {
        start,
        end,
        incident,
    }
}

/// The timeline. Contiguous, from 0 to `CYCLE`, calm stretches between the incidents.
pub const TIMELINE: [Phase; 22] = [
    p(0, 15, Incident::Calm),
    p(15, 75, Incident::InsertHotSpot),
    p(75, 95, Incident::Calm),
    p(95, 130, Incident::NullIndexLeaf),
    p(130, 135, Incident::Calm),
    p(135, 185, Incident::SendQFill),
    p(185, 200, Incident::SendQDrain),
    p(200, 215, Incident::Calm),
    p(215, 250, Incident::CheckpointRequested),
    p(250, 260, Incident::CheckpointInProgress),
    p(260, 275, Incident::Calm),
    p(275, 345, Incident::LockChain),
    p(345, 375, Incident::Calm),
    p(375, 435, Incident::LongTransaction),
    p(435, 450, Incident::Calm),
    p(450, 500, Incident::CpuSaturated),
    p(500, 515, Incident::Calm),
    p(515, 555, Incident::MutexContention),
    p(555, 570, Incident::Calm),
    p(570, 630, Incident::SlowDevice),
    p(630, 645, Incident::Calm),
    p(645, 705, Incident::ReplicaLag),
];

/// The last calm stretch runs from the end of the table to the end of the cycle.
const TAIL: Phase = p(705, CYCLE, Incident::Calm);

/// Where a moment falls in the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Now {
    /// Seconds since the demo started.
    pub(crate) t: u64,
    /// Which pass through the timeline (0 for the first).
    pub(crate) cycle: u64,
    pub(crate) phase: Phase,
    /// Seconds since the phase began.
    pub(crate) into: u64,
}

impl Now {
    pub(crate) fn incident(&self) -> Incident {
        self.phase.incident
    }
}

/// The phase at `t` seconds.
pub(crate) fn now(t: u64) -> Now {
    let cycle = t / CYCLE;
    let at = t % CYCLE;
    let phase = TIMELINE
        .iter()
        .copied()
        .find(|ph| (ph.start..ph.end).contains(&at))
        .unwrap_or(TAIL);
    Now {
        t,
        cycle,
        phase,
        into: at - phase.start,
    }
}

/// The first phase of an incident in the table.
pub fn first(incident: Incident) -> Option<Phase> {
    TIMELINE.iter().copied().find(|p| p.incident == incident)
}

/// Seconds spent in `incident` from 0 up to `t`: what cumulative counters (vmstat) integrate.
pub(crate) fn seconds_in(incident: Incident, t: u64) -> u64 {
    let per_cycle: u64 = TIMELINE
        .iter()
        .filter(|p| p.incident == incident)
        .map(Phase::len)
        .sum();
    let at = t % CYCLE;
    let partial: u64 = TIMELINE
        .iter()
        .filter(|p| p.incident == incident)
        .map(|p| at.clamp(p.start, p.end) - p.start)
        .sum();
    (t / CYCLE) * per_cycle + partial
}

/// What the phase is about, in words.
pub(crate) fn words(incident: Incident) -> &'static str {
    // The line is cut at the terminal's edge: what matters comes first.
    match incident {
        Incident::Calm => "calm: idle clients (netnorm, Send-Q 0)",
        Incident::InsertHotSpot => "buffer waits: last page of order_log",
        Incident::NullIndexLeaf => "buffer waits: all-NULL leaf of ix_orders_ship_date",
        Incident::SendQFill => "Send-Q filling: clients not reading (FET_BUF_SIZE)",
        Incident::SendQDrain => "Send-Q draining: clients reading again",
        Incident::CheckpointRequested => "checkpoint stall (CKPT REQ), zone reclaim on",
        Incident::CheckpointInProgress => "checkpoint (CKPT INP), still blocked",
        Incident::LockChain => "lock chain: 814 -> 813 -> 812",
        Incident::LongTransaction => "long transaction: logical logs filling (LONGTX)",
        Incident::CpuSaturated => "CPU VPs saturated: ready queue growing",
        Incident::MutexContention => "mutex contention: S waiters on one mutex",
        Incident::SlowDevice => "slow device: chunk await rising, demand flat (SAN)",
        Incident::ReplicaLag => "RSS secondary falling behind: transmission blocked",
    }
}

/// The line under the tabs: `t=143s Send-Q filling: ...` (the header already says demo).
pub(crate) fn describe(t: Duration) -> String {
    let s = t.as_secs();
    format!("t={s}s {}", words(now(s).incident()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_from_zero_to_the_cycle() {
        let mut at = 0;
        for p in TIMELINE.iter().chain(std::iter::once(&TAIL)) {
            assert_eq!(p.start, at, "{p:?}");
            assert!(p.end > p.start, "{p:?}");
            at = p.end;
        }
        assert_eq!(at, CYCLE);
    }

    #[test]
    fn phases_repeat_and_counters_integrate() {
        let fill = first(Incident::SendQFill).expect("in the table");
        assert_eq!(now(fill.start).incident(), Incident::SendQFill);
        assert_eq!(now(CYCLE + fill.start + 3).into, 3);
        assert_eq!(now(CYCLE + fill.start).cycle, 1);
        assert_eq!(now(CYCLE - 1).incident(), Incident::Calm);
        let ck = first(Incident::CheckpointRequested).expect("in the table");
        assert_eq!(seconds_in(Incident::CheckpointRequested, ck.start), 0);
        assert_eq!(seconds_in(Incident::CheckpointRequested, ck.start + 5), 5);
        assert_eq!(
            seconds_in(Incident::CheckpointRequested, CYCLE + ck.start + 5),
            ck.len() + 5
        );
        let mut prev = 0;
        for t in 0..3 * CYCLE {
            let v = seconds_in(Incident::CheckpointRequested, t);
            assert!(v >= prev);
            prev = v;
        }
    }

    #[test]
    fn description_names_the_phase() {
        let fill = first(Incident::SendQFill).expect("in the table");
        let d = describe(Duration::from_secs(fill.start + 8));
        assert_eq!(
            d,
            format!(
                "t={}s Send-Q filling: clients not reading (FET_BUF_SIZE)",
                fill.start + 8
            )
        );
    }
}
