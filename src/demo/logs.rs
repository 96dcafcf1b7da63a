//! The logical logs: twelve 50,000-page files in `llogdbs` (as `oncheck -pe` lays them out),
//! written in a ring at the rate `profile` counts, each backed up a few seconds after it fills —
//! except while the long transaction runs, when the backup falls behind until the rollback is
//! done. `onstat -l`, `-x`, `-g ckp` and `-g tpf` read their positions here.

use super::longtx;
use super::profile::{Counters, Q};
use super::timeline::{self, Incident, CYCLE};

/// Log files and their size in (2 KB) pages.
pub(crate) const LOG_FILES: u64 = 12;
pub(crate) const LOG_PAGES: u64 = 50_000;

/// The log being written at time 0 and how far into it.
const UNIQ_AT_ZERO: u64 = 9_870;
const PAGES_INTO_IT_AT_ZERO: u64 = 31_000;
/// Log file 1 held this unique id: the ring's position.
const SLOT_BASE_UNIQ: u64 = 9_864;
/// Logs whose last unique id in their slot is older than this were added since (by the DBA,
/// after the current log): `F`, never used.
const FIRST_UNIQ: u64 = 9_862;

/// Seconds a filled log waits for its backup normally, and between two backups catching up.
const BACKUP_AFTER: i64 = 10;
const CATCH_UP_EACH: i64 = 2;

/// A position in the logical log: unique id and page in that file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct LogPos {
    pub(crate) uniq: u64,
    pub(crate) page: u64,
}

impl LogPos {
    /// The byte offset onstat prints (`9871:0x2f3018`).
    pub(crate) fn offset(&self) -> u64 {
        self.page * 2048 + 0x18
    }
}

/// Pages written since log 0 at `t`: the global position of the log's end.
pub(crate) fn written(c: &Counters, t: i64) -> u64 {
    let at_zero = UNIQ_AT_ZERO * LOG_PAGES + PAGES_INTO_IT_AT_ZERO;
    let since = c.at(Q::LogPages, t) - c.at(Q::LogPages, 0);
    (at_zero as f64 + since).max(0.0) as u64
}

pub(crate) fn pos_of(pages: u64) -> LogPos {
    LogPos {
        uniq: pages / LOG_PAGES,
        page: pages % LOG_PAGES,
    }
}

/// Where the log is written at `t`.
pub(crate) fn pos_at(c: &Counters, t: i64) -> LogPos {
    pos_of(written(c, t))
}

/// The log file (1-12) that holds unique id `uniq`.
pub(crate) fn slot(uniq: u64) -> u64 {
    (uniq + LOG_FILES * 1_000 - SLOT_BASE_UNIQ) % LOG_FILES + 1
}

/// The first second at which log `uniq` was full.
pub(crate) fn filled_at(c: &Counters, uniq: u64) -> i64 {
    let target = (uniq + 1) * LOG_PAGES;
    let (mut lo, mut hi) = (-400_000_i64, 1_i64 << 40);
    // written() rises every second: the first second at or past the target.
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if written(c, mid) >= target {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// Whether log `uniq` (full by `t`) has been backed up by `t`.
pub(crate) fn backed_up(c: &Counters, uniq: u64, t: i64) -> bool {
    let f = filled_at(c, uniq);
    if f > t {
        return false;
    }
    let Some(p) = timeline::first(Incident::LongTransaction) else {
        return t >= f + BACKUP_AFTER;
    };
    let cycle = f.div_euclid(CYCLE as i64);
    let at = f.rem_euclid(CYCLE as i64);
    let start = p.start as i64;
    let resumes = start + longtx::DONE_INTO as i64 + 3;
    // The backup stalls while the purge fills the logs, then takes them one by one once the
    // rollback is done; logs filled right after queue behind them.
    if cycle >= 0 && (start..resumes + 60).contains(&at) {
        let first = pos_at(c, cycle * CYCLE as i64 + start - 1).uniq;
        let queued = cycle * CYCLE as i64 + resumes + CATCH_UP_EACH * (uniq - first) as i64;
        let done = if at < resumes {
            queued
        } else {
            queued.max(f + BACKUP_AFTER)
        };
        return t >= done;
    }
    t >= f + BACKUP_AFTER
}

/// One log file at a moment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LogFile {
    pub(crate) number: u64,
    /// 0 for a log never used.
    pub(crate) uniq: u64,
    pub(crate) used: u64,
    pub(crate) flags: [u8; 7],
}

/// The twelve log files at `t`, by number; `last_ckpt` is the unique id of the log holding the
/// last checkpoint.
pub(crate) fn files(c: &Counters, t: i64, last_ckpt: Option<u64>) -> Vec<LogFile> {
    let cur = pos_at(c, t);
    let cur_slot = slot(cur.uniq);
    (1..=LOG_FILES)
        .map(|number| {
            let back = (cur_slot + LOG_FILES - number) % LOG_FILES;
            let uniq = cur.uniq - back;
            let mut flags = *b"-------";
            if uniq < FIRST_UNIQ {
                flags[0] = b'F';
                return LogFile {
                    number,
                    uniq: 0,
                    used: 0,
                    flags,
                };
            }
            flags[0] = b'U';
            let used = if back == 0 {
                flags[4] = b'C';
                cur.page
            } else {
                if backed_up(c, uniq, t) {
                    flags[2] = b'B';
                }
                LOG_PAGES
            };
            if last_ckpt == Some(uniq) {
                flags[6] = b'L';
            }
            LogFile {
                number,
                uniq,
                used,
                flags,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::longtx::{stage, Stage, DONE_INTO, EHWM_INTO, HWM_INTO};
    use super::*;
    use crate::demo::timeline;

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
                100 * (written(&c, begin + into as i64 - 1) - written(&c, begin - 1)) / all
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

    #[test]
    fn positions_advance_and_fill_times_invert_them() {
        let c = Counters::new(1, 300);
        let a = pos_at(&c, 0);
        assert_eq!((a.uniq, a.page), (UNIQ_AT_ZERO, PAGES_INTO_IT_AT_ZERO));
        let b = pos_at(&c, 200);
        assert!(b > a);
        let f = filled_at(&c, a.uniq);
        assert!(written(&c, f) >= (a.uniq + 1) * LOG_PAGES);
        assert!(written(&c, f - 1) < (a.uniq + 1) * LOG_PAGES);
        assert_eq!(slot(SLOT_BASE_UNIQ), 1);
        assert_eq!(slot(SLOT_BASE_UNIQ + 11), 12);
        assert_eq!(slot(SLOT_BASE_UNIQ - 1), 12);
    }
}
