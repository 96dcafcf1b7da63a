//! `onstat -g ckp`: the checkpoint history (what triggered each one, how long it took, whether it
//! blocked transactions), the logging rates around it and the summary of maxima and averages.

use super::header::Header;
use super::lex::{self, dec_u32, dec_u64, sp0, sp1, Line, PResult};
use super::onstat_b::{column, last_column};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use nom::branch::alt;
use nom::bytes::complete::{tag, take_while1, take_while_m_n};
use nom::character::complete::{char, digit1};
use nom::combinator::{all_consuming, map_res, opt, recognize};
use nom::Parser;
use serde::{Serialize, Serializer};

/// The whole output of one `onstat -g ckp`.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct OnstatGCkp {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    /// `Auto Checkpoints=On` (the AUTO_CKPTS parameter).
    pub auto_checkpoints: Option<bool>,
    /// `RTO_SERVER_RESTART=60 seconds`; 0 means RTO is off.
    pub rto_server_restart_s: Option<u64>,
    /// `Estimated recovery time 7 seconds` (printed only while RTO is on).
    pub estimated_recovery_s: Option<u64>,
    pub checkpoints: Vec<Checkpoint>,
    pub summary: Option<CheckpointSummary>,
    pub unparsed: Vec<Unparsed>,
}

/// One checkpoint: a row of the first table, with the row of the second table (`Dskflu`,
/// physical and logical log) at the same position merged in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Checkpoint {
    /// The checkpoint interval id.
    pub interval: u64,
    /// `18:42:44`, the server's clock.
    pub clock_time: String,
    /// `*` before the trigger: the checkpoint blocked transactions.
    pub blocking: bool,
    /// `Startup`, `Admin`, `Llog`, `User`, `RTO`, `CKPTINTVL`, ...
    pub trigger: String,
    pub lsn: Lsn,
    /// Seconds: the whole checkpoint, flushing the buffer pool, transactions blocked.
    pub total_time: f64,
    pub flush_time: f64,
    pub block_time: f64,
    /// Critical sections: transactions that waited, seconds from request to start, average
    /// and longest wait.
    pub waits: u64,
    pub ckpt_time: f64,
    pub wait_time: f64,
    pub long_time: f64,
    pub dirty_buffers: u64,
    /// From the second table: pages flushed per second, physical and logical log pages in the
    /// interval and per second.
    pub dskflu_per_sec: Option<u64>,
    pub plog_pages: Option<u64>,
    pub plog_per_sec: Option<u64>,
    pub llog_pages: Option<u64>,
    pub llog_per_sec: Option<u64>,
}

/// A log position `uniqid:offset` (`10:19c018`, `95:0x1cc6018`): log id in decimal, offset hex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lsn {
    pub log: u32,
    pub pos: u64,
}

impl Serialize for Lsn {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{}:{:x}", self.log, self.pos))
    }
}

/// The last block: maxima and averages over the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CheckpointSummary {
    pub max_plog_pages_per_sec: u64,
    pub max_llog_pages_per_sec: u64,
    /// Seconds.
    pub max_dskflush_time: u64,
    pub avg_dskflush_pages_per_sec: u64,
    pub avg_dirty_pages_per_sec: u64,
    /// Seconds.
    pub blocked_time: u64,
}

/// What a caller is told when the input is not `onstat -g ckp` output at all.
const EXPECTED: &str = "onstat -g ckp output: `Auto Checkpoints=On ...`, the column headers \
     (`Interval Time Trigger LSN ...`, `Dskflu Total Avg Total Avg`, `Max Plog Max Llog ...`), \
     a checkpoint row (`4 18:42:44*User 10:19c018 0.0 0.0 0.0 1 0.0 0.0 0.0 39`), a row of \
     `Dskflu/Sec` and log pages (`39 536 21 20412 816`) or the summary row";

/// Parses the output of `onstat -g ckp`.
pub fn parse(text: &str) -> Result<OnstatGCkp, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatGCkp, onstat);

#[derive(Default)]
struct Body {
    /// How many second-table rows were merged so far.
    merged: usize,
}

impl OnstatBody for Body {
    type Record = OnstatGCkp;
    const EXPECTED: &'static str = EXPECTED;

    fn line<'a>(&mut self, out: &mut OnstatGCkp, line: Line<'a>) -> Seen<'a> {
        let miss = match checkpoint(line.text) {
            Ok(c) => {
                out.checkpoints.push(c);
                return Seen::Row;
            }
            Err(miss) => miss,
        };
        if let Some(rates) = rates_row(line.text) {
            match out.checkpoints.get_mut(self.merged) {
                Some(c) if c.dskflu_per_sec.is_none() => {
                    rates.merge_into(c);
                    self.merged += 1;
                    return Seen::Known;
                }
                // More rate rows than checkpoints: nothing to merge into, shown as unparsed.
                _ => {}
            }
        } else if let Some(s) = summary_row(line.text) {
            out.summary = Some(s);
            // Six numbers: any table's row could be that.
            return Seen::Row;
        } else if known_line(line, out) {
            return Seen::Known;
        }
        Seen::Miss(miss)
    }
}

/// The settings line and the column headers of the three blocks (in the two-block layout of the
/// manuals, or run together on wider lines).
fn known_line(line: Line<'_>, out: &mut OnstatGCkp) -> bool {
    if let Some((auto, rto, estimate)) = settings(line.text) {
        out.auto_checkpoints = Some(auto);
        out.rto_server_restart_s = rto;
        out.estimated_recovery_s = estimate;
        return true;
    }
    let t = line.text.trim();
    t.starts_with("Critical Sections")
        || lex::starts_with_words(t, &["Physical", "Log"])
        || lex::starts_with_words(t, &["Clock"])
        || lex::starts_with_words(t, &["Interval", "Time", "Trigger", "LSN"])
        || lex::starts_with_words(t, &["Dskflu", "Total", "Avg"])
        || lex::starts_with_words(t, &["/Sec", "Pages", "/Sec"])
        || lex::starts_with_words(t, &["Max", "Plog", "Max", "Llog"])
        || lex::starts_with_words(t, &["pages/sec", "pages/sec", "Time"])
}

/// `Auto Checkpoints=On   RTO_SERVER_RESTART=60 seconds   Estimated recovery time 7 seconds`
/// → (auto, RTO seconds, estimated recovery seconds).
fn settings(text: &str) -> Option<(bool, Option<u64>, Option<u64>)> {
    let on_off = |i| alt((tag("On").map(|_| true), tag("Off").map(|_| false))).parse(i);
    let seconds = |i| (dec_u64, sp1, tag("seconds")).map(|(n, _, _)| n).parse(i);
    let parsed: PResult<'_, _> = all_consuming((
        (sp0, tag("Auto Checkpoints="), on_off),
        opt((sp1, tag("RTO_SERVER_RESTART="), seconds)),
        opt((sp1, tag("Estimated recovery time"), sp1, seconds)),
        sp0,
    ))
    .parse(text);
    let (_, ((_, _, auto), rto, estimate, _)) = parsed.ok()?;
    Some((auto, rto.map(|(_, _, s)| s), estimate.map(|(_, _, _, s)| s)))
}

/// `18:42:44`
fn clock(i: &str) -> PResult<'_, &str> {
    let two = || take_while_m_n(2, 2, |c: char| c.is_ascii_digit());
    recognize((two(), char(':'), two(), char(':'), two())).parse(i)
}

/// `54.8`, `0.0` (or a whole number).
fn seconds(i: &str) -> PResult<'_, f64> {
    map_res(recognize((digit1, opt((char('.'), digit1)))), |s: &str| {
        s.parse::<f64>()
    })
    .parse(i)
}

/// `10:19c018`, `95:0x1cc6018`
fn lsn(i: &str) -> PResult<'_, Lsn> {
    let (i, log) = dec_u32(i)?;
    let (i, _) = (char(':'), opt(tag("0x"))).parse(i)?;
    let (i, pos) = map_res(take_while_m_n(1, 16, lex::is_hex), |s: &str| {
        u64::from_str_radix(s, 16)
    })
    .parse(i)?;
    Ok((i, Lsn { log, pos }))
}

/// The trigger name: letters, digits and `_` (`CKPTINTVL`, `Llog`).
fn trigger(i: &str) -> PResult<'_, &str> {
    take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_').parse(i)
}

/// One checkpoint row: `interval clock [*]trigger lsn total flush block waits ckpt wait long
/// dirty`, optionally followed by the five columns of the second table on the same row. The
/// `*` is glued to the time (`18:42:44*User`) or stands after a blank (`13:44:18 *User`).
fn checkpoint(text: &str) -> Result<Checkpoint, Miss<'_>> {
    let i = super::lex::trim_start_bytes(text, super::lex::is_blank_byte);
    let (i, interval) = column(i, dec_u64, "a checkpoint interval id")?;
    let (j, clock_time) = clock(i).map_err(|_| Miss::new(i, "a clock time (`18:41:36`)"))?;
    let j = super::lex::trim_start_bytes(j, super::lex::is_blank_byte);
    let (j, star) = match j.strip_prefix('*') {
        Some(rest) => (rest, true),
        None => (j, false),
    };
    let (i, trigger) = column(j, trigger, "a trigger (`User`, `*User`, `CKPTINTVL`)")?;
    let (i, lsn) = column(i, lsn, "an LSN (`10:19c018`)")?;
    let (i, total_time) = column(i, seconds, "Total Time (seconds)")?;
    let (i, flush_time) = column(i, seconds, "Flush Time (seconds)")?;
    let (i, block_time) = column(i, seconds, "Block Time (seconds)")?;
    let (i, waits) = column(i, dec_u64, "# Waits (a number)")?;
    let (i, ckpt_time) = column(i, seconds, "Ckpt Time (seconds)")?;
    let (i, wait_time) = column(i, seconds, "Wait Time (seconds)")?;
    let (i, long_time) = column(i, seconds, "Long Time (seconds)")?;
    let mut c = Checkpoint {
        interval,
        clock_time: clock_time.to_string(),
        blocking: star,
        trigger: trigger.to_string(),
        lsn,
        total_time,
        flush_time,
        block_time,
        waits,
        ckpt_time,
        wait_time,
        long_time,
        dirty_buffers: 0,
        dskflu_per_sec: None,
        plog_pages: None,
        plog_per_sec: None,
        llog_pages: None,
        llog_per_sec: None,
    };
    match column(i, dec_u64, "") {
        // The wide layout: the second table's five columns follow on the same row.
        Ok((rest, dirty)) => {
            c.dirty_buffers = dirty;
            let rates = rates(rest)?;
            rates.merge_into(&mut c);
        }
        Err(_) => {
            c.dirty_buffers = last_column(i, dec_u64, "# Dirty Buffers at the end of the row")?;
        }
    }
    Ok(c)
}

/// A row of the second table.
#[derive(Debug, Clone, Copy)]
struct Rates {
    dskflu_per_sec: u64,
    plog_pages: u64,
    plog_per_sec: u64,
    llog_pages: u64,
    llog_per_sec: u64,
}

impl Rates {
    fn merge_into(self, c: &mut Checkpoint) {
        c.dskflu_per_sec = Some(self.dskflu_per_sec);
        c.plog_pages = Some(self.plog_pages);
        c.plog_per_sec = Some(self.plog_per_sec);
        c.llog_pages = Some(self.llog_pages);
        c.llog_per_sec = Some(self.llog_per_sec);
    }
}

/// `Dskflu/Sec  Plog Total Pages  Plog Avg/Sec  Llog Total Pages  Llog Avg/Sec`: five numbers.
fn rates(i: &str) -> Result<Rates, Miss<'_>> {
    let (i, dskflu_per_sec) = column(i, dec_u64, "Dskflu/Sec (a number)")?;
    let (i, plog_pages) = column(i, dec_u64, "physical log Total Pages (a number)")?;
    let (i, plog_per_sec) = column(i, dec_u64, "physical log Avg/Sec (a number)")?;
    let (i, llog_pages) = column(i, dec_u64, "logical log Total Pages (a number)")?;
    let llog_per_sec = last_column(i, dec_u64, "logical log Avg/Sec (a number)")?;
    Ok(Rates {
        dskflu_per_sec,
        plog_pages,
        plog_per_sec,
        llog_pages,
        llog_per_sec,
    })
}

/// A row of the second table on its own line.
fn rates_row(text: &str) -> Option<Rates> {
    rates(super::lex::trim_start_bytes(
        text,
        super::lex::is_blank_byte,
    ))
    .ok()
}

/// The summary row: six numbers under `Max Plog  Max Llog  Max Dskflush  Avg Dskflush
/// Avg Dirty  Blocked`.
fn summary_row(text: &str) -> Option<CheckpointSummary> {
    let six: Result<_, Miss<'_>> = (|| {
        let i = super::lex::trim_start_bytes(text, super::lex::is_blank_byte);
        let (i, a) = column(i, dec_u64, "")?;
        let (i, b) = column(i, dec_u64, "")?;
        let (i, c) = column(i, dec_u64, "")?;
        let (i, d) = column(i, dec_u64, "")?;
        let (i, e) = column(i, dec_u64, "")?;
        let f = last_column(i, dec_u64, "")?;
        Ok((a, b, c, d, e, f))
    })();
    let (a, b, c, d, e, f) = six.ok()?;
    Some(CheckpointSummary {
        max_plog_pages_per_sec: a,
        max_llog_pages_per_sec: b,
        max_dskflush_time: c,
        avg_dskflush_pages_per_sec: d,
        avg_dirty_pages_per_sec: e,
        blocked_time: f,
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn star_glued_or_apart() {
        let c = checkpoint("4        18:42:44*User     10:19c018  0.0    0.0    0.0    1      0.0   0.0   0.0   39")
            .expect("glued");
        assert!(c.blocking);
        assert_eq!((c.trigger.as_str(), c.dirty_buffers), ("User", 39));
        assert_eq!(
            c.lsn,
            Lsn {
                log: 10,
                pos: 0x19_c018
            }
        );
        let c =
            checkpoint("8827 13:44:18 *User 95:0x1cc6018 16.0 0.0 0.0 1 0.0 16.0 16.0 0 0 0 0 2 0")
                .expect("wide");
        assert!(c.blocking);
        assert_eq!(
            c.lsn,
            Lsn {
                log: 95,
                pos: 0x1cc_6018
            }
        );
        assert_eq!((c.llog_pages, c.llog_per_sec), (Some(2), Some(0)));
        let c = checkpoint(
            "1        18:41:36 Startup  1:f8       0.0    0.0    0.0    0      0.0   0.0   0.0   4",
        )
        .expect("plain");
        assert!(!c.blocking);
        assert_eq!(c.dskflu_per_sec, None);
    }

    #[test]
    fn settings_variants() {
        assert_eq!(
            settings("Auto Checkpoints=On   RTO_SERVER_RESTART=60 seconds   Estimated recovery time 7 seconds"),
            Some((true, Some(60), Some(7)))
        );
        assert_eq!(
            settings("Auto Checkpoints=Off   RTO_SERVER_RESTART=0 seconds"),
            Some((false, Some(0), None))
        );
        assert_eq!(settings("Auto Checkpoints=Maybe"), None);
    }

    #[test]
    fn rows_by_count() {
        assert!(rates_row("  2884     1966    163      4549    379").is_some());
        assert!(summary_row("  2884     1966    163      4549    379").is_none());
        assert!(summary_row(
            "8796       6581        54              43975          2314         0"
        )
        .is_some());
        assert!(
            rates_row("8796       6581        54              43975          2314         0")
                .is_none()
        );
    }
}
