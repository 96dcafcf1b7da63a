//! `onstat -g cpu`: every thread's CPU time since it started, with its name, VP, when it last
//! ran, how often it was scheduled and its status. Two samples give each thread's CPU use
//! between them; through `onstat -g ath` (tid → rstcb) and `onstat -u` (rstcb → session) read
//! at the same moment, each session's (`store::cpu`).
//!
//! ```text
//! Thread CPU Info:
//!  tid    name              vp       Last Run           CPU Time     #scheds    status
//!  2      lio vp 0          3lio*   05/17 14:50:12        0.0000          1    IO Idle
//!  4      aio vp 0          5aio*   06/05 11:19:00    29409.7586    9587799    IO Idle
//! ```

use super::header::Header;
use super::lex::{self, Line};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::Tid;
use compact_str::CompactString;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct OnstatGCpu {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    pub threads: Vec<CpuThread>,
    /// Line numbers of lines made only of dots (`.....`): the list is known to be incomplete.
    pub elisions: Vec<usize>,
    /// The line number of a last row cut short: the output ended inside it (no line end; onstat
    /// ends every line), so its `#scheds` or status may be only their first characters. Kept
    /// in `unparsed`, not read.
    pub cut: Option<usize>,
    pub unparsed: Vec<Unparsed>,
}

/// One row: ` 4      aio vp 0          5aio*   06/05 11:19:00    29409.7586    9587799    IO Idle`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuThread {
    pub tid: Tid,
    /// `sqlexec`, `lio vp 0`, `flush_sub(0)`, ... (blanks kept single).
    pub name: CompactString,
    /// The VP as printed (`3lio*`, `1cpu`).
    pub vp: CompactString,
    /// When it last ran, as printed (`06/05 11:19:00`: month/day and time of day, no year).
    pub last_run: CompactString,
    /// CPU seconds since the thread started.
    pub cpu_s: f64,
    /// Times it was scheduled.
    pub scheds: u64,
    /// The status as printed, blanks collapsed (`IO Idle`, `cond wait netnorm`, `running`).
    pub status: String,
}

/// What a caller is told when the input is not `onstat -g cpu` output at all.
const EXPECTED: &str = "onstat -g cpu output: the title `Thread CPU Info:`, the column header \
     `tid name vp Last Run CPU Time #scheds status` or a thread row \
     (`4 aio vp 0 5aio* 06/05 11:19:00 29409.7586 9587799 IO Idle`)";

/// Parses the output of `onstat -g cpu`. A last row without its line end is where the output
/// was cut (an output cap, a pipe closed, a copy): `6810` may have been `68104`, `sl` a longer
/// status, so it is not taken as a thread's reading.
pub fn parse(text: &str) -> Result<OnstatGCpu, ParseError> {
    let mut out = super::drive::<Body>(text)?;
    let last = text.rsplit('\n').next().unwrap_or("");
    if !last.is_empty() && thread_row(last).is_ok() && out.threads.pop().is_some() {
        let no = text.bytes().filter(|b| *b == b'\n').count() + 1;
        out.cut = Some(no);
        Unparsed::keep(&mut out.unparsed, Line { no, text: last });
    }
    Ok(out)
}

record!(OnstatGCpu, onstat; threads);

#[derive(Default)]
struct Body;

impl OnstatBody for Body {
    type Record = OnstatGCpu;
    const EXPECTED: &'static str = EXPECTED;

    fn reserve(&mut self, out: &mut OnstatGCpu, lines: usize) {
        out.threads.reserve(lines);
    }

    fn line<'a>(&mut self, out: &mut OnstatGCpu, line: Line<'a>) -> Seen<'a> {
        match thread_row(line.text) {
            Ok(t) => {
                out.threads.push(t);
                Seen::Row
            }
            Err(_) if line.text.trim() == "Thread CPU Info:" => Seen::Known,
            Err(_) if is_column_header(line.text) => Seen::Known,
            Err(_) if super::onstat_g_ath::is_elision(line.text) => {
                out.elisions.push(line.no);
                Seen::Skipped
            }
            Err(miss) => Seen::Miss(miss),
        }
    }
}

/// ` tid    name              vp       Last Run           CPU Time     #scheds    status`
fn is_column_header(text: &str) -> bool {
    lex::starts_with_words(text, &["tid", "name", "vp", "Last", "Run", "CPU", "Time"])
}

/// `05/17`: month and day.
fn is_month_day(w: &str) -> bool {
    let b = w.as_bytes();
    b.len() == 5 && b[2] == b'/' && [0, 1, 3, 4].iter().all(|&i| b[i].is_ascii_digit())
}

/// `14:50:12`: a time of day.
fn is_time_of_day(w: &str) -> bool {
    let b = w.as_bytes();
    b.len() == 8
        && b[2] == b':'
        && b[5] == b':'
        && [0, 1, 3, 4, 6, 7].iter().all(|&i| b[i].is_ascii_digit())
}

/// A VP as `onstat -g cpu` prints it: its number and class, a `*` after (`3lio*`, `1cpu`).
fn is_vp(w: &str) -> bool {
    let w = w.strip_suffix('*').unwrap_or(w);
    let digits = w.bytes().take_while(u8::is_ascii_digit).count();
    let class = &w[digits..];
    digits > 0
        && !w.starts_with('0')
        && class.as_bytes().first().is_some_and(u8::is_ascii_lowercase)
        && class
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The next blank-separated word of `s` and what follows it, or `None` at the end.
fn word(s: &str) -> Option<(&str, &str)> {
    let s = lex::trim_start_bytes(s, lex::is_blank_byte);
    if s.is_empty() {
        return None;
    }
    let end = s.find([' ', '\t']).unwrap_or(s.len());
    Some((&s[..end], &s[end..]))
}

/// `text` with its blanks made single, without a copy when they already are.
fn single_blanks(text: &str) -> CompactString {
    let text = lex::trim_blanks(text);
    if text.contains("  ") || text.contains('\t') {
        super::onstat_g_ath::collapse_blanks_compact(text)
    } else {
        CompactString::new(text)
    }
}

/// One thread row. The name and the status may hold blanks, so the row is read from the
/// `Last Run` date inward: the word before it is the VP, the words between the tid and the VP
/// the name; after it come the time of day, the CPU seconds, the schedule count and the status.
/// Read word by word without a copy of the line (5,000 rows every 10 s).
fn thread_row(text: &str) -> Result<CpuThread, Miss<'_>> {
    let i = lex::trim_start_bytes(text, lex::is_blank_byte);
    let (first, after_tid) = word(i).ok_or(Miss::new(i, "a thread id (a number)"))?;
    let tid = first
        .parse::<u64>()
        .map_err(|_| Miss::new(i, "a thread id (a number)"))?;
    // Walk to the date, keeping the word before it (the VP) and where the name ends.
    let needs_date = "a name, a VP (`3lio*`) and the last run (`05/17 14:50:12`)";
    let mut rest = after_tid;
    let mut prev: Option<&str> = None;
    let mut words = 0usize;
    let (date, after_date) = loop {
        let (w, r) = word(rest).ok_or(Miss::new(i, needs_date))?;
        if words >= 2 && is_month_day(w) && word(r).is_some_and(|(t, _)| is_time_of_day(t)) {
            break (w, r);
        }
        prev = Some(w);
        words += 1;
        rest = r;
    };
    let vp = prev.ok_or(Miss::new(i, needs_date))?;
    if !is_vp(vp) {
        return Err(Miss::new(vp, "a VP (`1cpu`, `3lio*`) before the last run"));
    }
    let name_end = lex::offset_in(i, vp);
    let name_start = lex::offset_in(i, after_tid);
    let name = single_blanks(i.get(name_start..name_end).unwrap_or(""));
    let (time, r) = word(after_date).ok_or(Miss::new(i, needs_date))?;
    let (cpu, r) = word(r).ok_or(Miss::new(i, "the CPU seconds (`29409.7586`)"))?;
    let cpu_s = cpu
        .parse::<f64>()
        .ok()
        .filter(|c| c.is_finite() && *c >= 0.0)
        .ok_or(Miss::new(cpu, "the CPU seconds (`29409.7586`)"))?;
    let (scheds_word, status) = word(r).ok_or(Miss::new(i, "the times scheduled (a number)"))?;
    let scheds = scheds_word
        .parse::<u64>()
        .map_err(|_| Miss::new(scheds_word, "the times scheduled (a number)"))?;
    let run_start = lex::offset_in(i, date);
    let run_end = lex::offset_in(i, time) + time.len();
    Ok(CpuThread {
        tid: Tid(tid),
        name,
        vp: CompactString::new(vp),
        last_run: single_blanks(i.get(run_start..run_end).unwrap_or("")),
        cpu_s,
        scheds,
        status: single_blanks(status).into(),
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_row_with_blanks_in_name_and_status() {
        let t = thread_row(
            " 4      aio vp 0          5aio*   06/05 11:19:00    29409.7586    9587799    IO Idle",
        )
        .expect("row");
        assert_eq!(t.tid, Tid(4));
        assert_eq!(t.name, "aio vp 0");
        assert_eq!(t.vp, "5aio*");
        assert_eq!(t.last_run, "06/05 11:19:00");
        assert!((t.cpu_s - 29409.7586).abs() < 1e-9);
        assert_eq!(t.scheds, 9_587_799);
        assert_eq!(t.status, "IO Idle");
    }

    #[test]
    fn a_session_thread() {
        let t = thread_row(
            " 1043   sqlexec           1cpu    11/22 13:41:07       12.5031       4410    cond wait netnorm",
        )
        .expect("row");
        assert_eq!(t.name, "sqlexec");
        assert_eq!(t.vp, "1cpu");
        assert_eq!(t.status, "cond wait netnorm");
    }

    #[test]
    fn not_rows() {
        for l in [
            "Thread CPU Info:",
            " tid    name              vp       Last Run           CPU Time     #scheds    status",
            " 20     aio vp 14         30aio*   06/05 11:01:27     9506.3932",
            " x      sqlexec           1cpu    11/22 13:41:07       12.5031       4410    running",
            " 7      sqlexec           cpu     11/22 13:41:07       12.5031       4410    running",
            " 7      1cpu    11/22 13:41:07       12.5031       4410    running",
            " 7      sqlexec           1cpu    11/22 13:41:07       -1.0       4410    running",
        ] {
            assert!(thread_row(l).is_err(), "{l}");
        }
    }
}
