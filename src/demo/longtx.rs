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

#[cfg(test)]
mod tests {
    use super::super::logs::{self, LOG_FILES, LOG_PAGES};
    use super::super::profile::Counters;
    use super::*;

    /// LTXHWM and LTXEHWM (the 12.10 defaults), % of the logical-log space: the log rates of
    /// `profile` make the long transaction reach them at `HWM_INTO` and `EHWM_INTO`.
    const LTXHWM_PCT: u64 = 70;
    const LTXEHWM_PCT: u64 = 80;

    #[test]
    fn thresholds_fall_where_the_log_says() {
        let c = Counters::new(1, 300);
        let p = timeline::first(Incident::LongTransaction).expect("in the timeline");
        let all = LOG_FILES * LOG_PAGES;
        for cycle in [0, 1, 5] {
            let begin = (cycle * timeline::CYCLE + p.start) as i64;
            // What it and the others wrote in its first `into` seconds.
            let span = |into: u64| {
                100 * (logs::written(&c, begin + into as i64 - 1) - logs::written(&c, begin - 1))
                    / all
            };
            assert!(span(HWM_INTO) >= LTXHWM_PCT && span(HWM_INTO - 1) < LTXHWM_PCT);
            assert!(span(EHWM_INTO) >= LTXEHWM_PCT && span(EHWM_INTO - 1) < LTXEHWM_PCT);
            // It never wraps onto its own first log.
            assert!(span(p.len()) < 90, "{}", span(p.len()));
        }
        let at = |into| timeline::now(p.start + into);
        assert_eq!(stage(&at(0)), Some(Stage::Open));
        assert_eq!(stage(&at(HWM_INTO)), Some(Stage::RollingBack));
        assert_eq!(stage(&at(EHWM_INTO)), Some(Stage::Blocked));
        assert_eq!(stage(&at(DONE_INTO)), None);
    }
}
