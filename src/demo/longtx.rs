//! The long transaction of the timeline: session 810 (`purge`) deletes old rows of `order_log`
//! in one transaction while the others keep writing. The logical logs fill behind it until the
//! server reaches LTXHWM (70 % of the log space since its first record): it flags `(LONGTX)`
//! and rolls it back; at LTXEHWM (80 %) it blocks everything but the rollback
//! (`Blocked:LONGTX`). Once rolled back, the log backup catches up and the logs are freed.
//!
//! The log rates of `profile` are set so that those thresholds fall at these seconds of the
//! phase: the stages here and the log positions there tell the same story.

use super::timeline::{self, Incident, Now};

/// Seconds into the phase: the rollback starts (LTXHWM), the server blocks (LTXEHWM), the
/// rollback is done.
pub(crate) const HWM_INTO: u64 = 25;
pub(crate) const EHWM_INTO: u64 = 33;
pub(crate) const DONE_INTO: u64 = 57;

/// Where the long transaction is at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Begun and writing (`B`).
    Open,
    /// Rolling back (`R`, banner `(LONGTX)`), the others still writing.
    RollingBack,
    /// Rolling back with everything else blocked (`Blocked:LONGTX`).
    Blocked,
}

/// The stage at `now`, `None` when no long transaction is open.
pub(crate) fn stage(now: &Now) -> Option<Stage> {
    if now.incident() != Incident::LongTransaction {
        return None;
    }
    Some(match now.into {
        i if i < HWM_INTO => Stage::Open,
        i if i < EHWM_INTO => Stage::RollingBack,
        i if i < DONE_INTO => Stage::Blocked,
        _ => return None,
    })
}

/// When the long transaction of `now`'s cycle began (absolute seconds).
pub(crate) fn began(now: &Now) -> u64 {
    let start = timeline::first(Incident::LongTransaction).map_or(0, |p| p.start);
    now.cycle * timeline::CYCLE + start
}
