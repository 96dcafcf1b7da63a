//! `onstat -g glo`: global multithreading counters (sessions, threads, VPs, long spins, the
//! scheduler), CPU time per virtual-processor class and per virtual processor.

use super::header::Header;
use super::lex::{self, dec_f64, dec_u64, Line, PResult};
use super::onstat_b::{column, last_column};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use nom::branch::alt;
use nom::bytes::complete::{tag, take_while1};
use nom::character::complete::char;
use nom::combinator::opt;
use nom::Parser;
use serde::Serialize;

/// The whole output of one `onstat -g glo`.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct OnstatGGlo {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    /// `MT global info:`.
    pub global: Option<GlobalInfo>,
    /// `sched calls  thread switches  yield 0  yield n  yield forever`: since start (or
    /// `onstat -z`) and per second.
    pub scheduler: Option<SchedulerCounts>,
    pub scheduler_per_sec: Option<SchedulerCounts>,
    /// `Virtual processor summary:`, one row per class.
    pub classes: Vec<VpClass>,
    /// The summary's `total` row (not a class).
    pub classes_total: Option<VpClass>,
    /// `Individual virtual processors:`.
    pub vps: Vec<Vp>,
    /// The `tot` row under the individual VPs.
    pub vps_total: Option<CpuTimes>,
    pub unparsed: Vec<Unparsed>,
}

/// `sessions threads vps lngspins [time]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GlobalInfo {
    pub sessions: u64,
    pub threads: u64,
    pub vps: u64,
    /// Times a thread spun more than 10,000 times for a latch.
    pub lngspins: u64,
    /// Seconds the statistics cover (newer versions).
    pub time: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SchedulerCounts {
    pub sched_calls: u64,
    pub thread_switches: u64,
    pub yield_0: u64,
    pub yield_n: u64,
    pub yield_forever: u64,
}

/// One class of the summary: `cpu  1  92.12  0.59  92.71`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VpClass {
    /// `cpu`, `aio`, `lio`, `soc`, user-defined classes as printed.
    pub class: String,
    pub vps: u64,
    /// Seconds.
    pub usercpu: f64,
    pub syscpu: f64,
    pub total: f64,
}

/// One VP: `1  26328  cpu  92.12  0.59  92.71  122.65  75%`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Vp {
    pub vp: u64,
    pub pid: u64,
    pub class: String,
    /// Seconds.
    pub usercpu: f64,
    pub syscpu: f64,
    pub total: f64,
    /// Newer versions: the seconds its threads were scheduled on it (`Thread`) and the
    /// share of that it spent on the CPU (`Eff`, percent); `None` where printed `NA` or not
    /// printed at all.
    pub thread: Option<f64>,
    pub eff_pct: Option<f64>,
}

/// The `tot` row: seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CpuTimes {
    pub usercpu: f64,
    pub syscpu: f64,
    pub total: f64,
}

/// What a caller is told when the input is not `onstat -g glo` output at all.
const EXPECTED: &str = "onstat -g glo output: the title `MT global info:`, `Virtual processor \
     summary:` or `Individual virtual processors:` with its column header and rows \
     (`cpu 1 92.12 0.59 92.71`, `1 26328 cpu 92.12 0.59 92.71 122.65 75%`)";

/// Parses the output of `onstat -g glo`.
pub fn parse(text: &str) -> Result<OnstatGGlo, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatGGlo, onstat);

/// The table the last title or column header opened: rows are only read under their own,
/// since a class row or a VP row alone looks like many other things.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Section {
    #[default]
    None,
    /// `MT global info:`; its column header.
    Global,
    GlobalValues,
    Scheduler,
    Classes,
    Vps,
}

#[derive(Default)]
struct Body {
    section: Section,
}

impl OnstatBody for Body {
    type Record = OnstatGGlo;
    const EXPECTED: &'static str = EXPECTED;

    fn line<'a>(&mut self, out: &mut OnstatGGlo, line: Line<'a>) -> Seen<'a> {
        let t = lex::trim_blanks(line.text);
        if let Some(section) = title_or_header(t) {
            self.section = section;
            return Seen::Known;
        }
        let row = match self.section {
            Section::GlobalValues => global(t).map(|g| out.global = Some(g)),
            Section::Scheduler => scheduler(t).map(|(per_sec, counts)| {
                if per_sec {
                    out.scheduler_per_sec = Some(counts);
                } else {
                    out.scheduler = Some(counts);
                }
            }),
            Section::Classes => vp_class(t).map(|c| {
                if c.class == "total" {
                    out.classes_total = Some(c);
                } else {
                    out.classes.push(c);
                }
            }),
            Section::Vps => match vps_total(t) {
                Some(tot) => {
                    out.vps_total = Some(tot);
                    Ok(())
                }
                None => vp(t).map(|v| out.vps.push(v)),
            },
            Section::None | Section::Global => Err(Miss::new(
                t,
                "a title (`MT global info:`, `Virtual processor summary:`, \
                 `Individual virtual processors:`) before the rows",
            )),
        };
        match row {
            Ok(()) => Seen::Known,
            Err(miss) => Seen::Miss(miss),
        }
    }
}

/// The titles and column headers, and the table each opens.
fn title_or_header(t: &str) -> Option<Section> {
    Some(match t {
        "MT global info:" => Section::Global,
        "Virtual processor summary:" => Section::Classes,
        "Individual virtual processors:" => Section::Vps,
        _ if lex::starts_with_words(t, &["sessions", "threads", "vps", "lngspins"]) => {
            Section::GlobalValues
        }
        _ if lex::starts_with_words(t, &["sched", "calls", "thread", "switches", "yield"]) => {
            Section::Scheduler
        }
        _ if lex::starts_with_words(t, &["class", "vps", "usercpu", "syscpu", "total"]) => {
            Section::Classes
        }
        _ if lex::starts_with_words(t, &["vp", "pid", "class", "usercpu", "syscpu", "total"]) => {
            Section::Vps
        }
        _ => return None,
    })
}

/// `0  23  14  0  142`: sessions, threads, vps, lngspins and (newer) time.
fn global(t: &str) -> Result<GlobalInfo, Miss<'_>> {
    let (i, sessions) = column(t, dec_u64, "sessions (a number)")?;
    let (i, threads) = column(i, dec_u64, "threads (a number)")?;
    let (i, vps) = column(i, dec_u64, "vps (a number)")?;
    let (lngspins, time) = match column(i, dec_u64, "lngspins (a number)") {
        Ok((i, lngspins)) => (lngspins, Some(last_column(i, dec_u64, "time (seconds)")?)),
        Err(_) => (
            last_column(i, dec_u64, "lngspins (a number) at the end of the row")?,
            None,
        ),
    };
    Ok(GlobalInfo {
        sessions,
        threads,
        vps,
        lngspins,
        time,
    })
}

/// `total:  85240  70451  16956  868  37319` or `per sec:  0  0  0  0  0` → (per second?,
/// counts).
fn scheduler(t: &str) -> Result<(bool, SchedulerCounts), Miss<'_>> {
    let label: PResult<'_, _> = alt((
        tag("total:").map(|_| false),
        (tag("per"), lex::sp1, tag("sec:")).map(|_| true),
    ))
    .parse(t);
    let (i, per_sec) = label.map_err(|_| Miss::new(t, "`total:` or `per sec:`"))?;
    let i = lex::trim_start_bytes(i, lex::is_blank_byte);
    let (i, sched_calls) = column(i, dec_u64, "sched calls (a number)")?;
    let (i, thread_switches) = column(i, dec_u64, "thread switches (a number)")?;
    let (i, yield_0) = column(i, dec_u64, "yield 0 (a number)")?;
    let (i, yield_n) = column(i, dec_u64, "yield n (a number)")?;
    let yield_forever = last_column(i, dec_u64, "yield forever (a number) at the end")?;
    Ok((
        per_sec,
        SchedulerCounts {
            sched_calls,
            thread_switches,
            yield_0,
            yield_n,
            yield_forever,
        },
    ))
}

/// A VP class name: letters, digits and `_` starting with a letter (`cpu`, `nyevp`, `ETX`,
/// `regexp`).
fn class_name(i: &str) -> PResult<'_, &str> {
    let (rest, name) = take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_').parse(i)?;
    if name.as_bytes()[0].is_ascii_alphabetic() {
        Ok((rest, name))
    } else {
        Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Alpha,
        )))
    }
}

/// `cpu  1  92.12  0.59  92.71` (and the `total` row).
fn vp_class(t: &str) -> Result<VpClass, Miss<'_>> {
    let (i, class) = column(t, class_name, "a VP class (`cpu`, `aio`)")?;
    let (i, vps) = column(i, dec_u64, "vps (a number)")?;
    let (i, usercpu) = column(i, dec_f64, "usercpu (seconds)")?;
    let (i, syscpu) = column(i, dec_f64, "syscpu (seconds)")?;
    let total = last_column(i, dec_f64, "total (seconds) at the end of the row")?;
    Ok(VpClass {
        class: class.to_string(),
        vps,
        usercpu,
        syscpu,
        total,
    })
}

/// `NA` or a number: `None` for `NA`.
fn number_or_na(i: &str) -> PResult<'_, Option<f64>> {
    alt((tag("NA").map(|_| None), dec_f64.map(Some))).parse(i)
}

/// `75%` or `NA`.
fn percent_or_na(i: &str) -> PResult<'_, Option<f64>> {
    alt((
        tag("NA").map(|_| None),
        (dec_f64, opt(char('%'))).map(|(n, _)| Some(n)),
    ))
    .parse(i)
}

/// `1  26328  cpu  92.12  0.59  92.71  [122.65  75%]`: the last two only in newer versions.
fn vp(t: &str) -> Result<Vp, Miss<'_>> {
    let (i, vp) = column(t, dec_u64, "a VP number")?;
    let (i, pid) = column(i, dec_u64, "a pid")?;
    let (i, class) = column(i, class_name, "a VP class (`cpu`, `aio`)")?;
    let (i, usercpu) = column(i, dec_f64, "usercpu (seconds)")?;
    let (i, syscpu) = column(i, dec_f64, "syscpu (seconds)")?;
    let (total, thread, eff_pct) = match column(i, dec_f64, "") {
        Ok((i, total)) => {
            let (i, thread) = column(i, number_or_na, "Thread (seconds or `NA`)")?;
            let eff = last_column(
                i,
                percent_or_na,
                "Eff (`75%` or `NA`) at the end of the row",
            )?;
            (total, thread, eff)
        }
        Err(_) => (
            last_column(i, dec_f64, "total (seconds) at the end of the row")?,
            None,
            None,
        ),
    };
    Ok(Vp {
        vp,
        pid,
        class: class.to_string(),
        usercpu,
        syscpu,
        total,
        thread,
        eff_pct,
    })
}

/// `tot  92.18  0.69  92.87`
fn vps_total(t: &str) -> Option<CpuTimes> {
    let row: Result<_, Miss<'_>> = (|| {
        let (i, _) = column(t, |i| tag("tot").parse(i), "")?;
        let (i, usercpu) = column(i, dec_f64, "")?;
        let (i, syscpu) = column(i, dec_f64, "")?;
        let total = last_column(i, dec_f64, "")?;
        Ok(CpuTimes {
            usercpu,
            syscpu,
            total,
        })
    })();
    row.ok()
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn vp_rows_with_and_without_thread_eff() {
        let v = vp("1     26328     cpu         92.12     0.59      92.71     122.65    75%")
            .expect("new");
        assert_eq!((v.thread, v.eff_pct), (Some(122.65), Some(75.0)));
        let v = vp("11    26339     soc         0.00      0.00      0.00      NA        NA")
            .expect("NA");
        assert_eq!((v.thread, v.eff_pct), (None, None));
        let v = vp("3     1555      lio         3.18      9.19      12.37").expect("old");
        assert_eq!((v.class.as_str(), v.total, v.thread), ("lio", 12.37, None));
        assert!(vp("1 26328 cpu 92.12 0.59 92.71 122.65").is_err());
        assert!(vp("tot 92.18 0.69 92.87").is_err());
        assert!(vps_total("tot 92.18 0.69 92.87").is_some());
    }

    #[test]
    fn global_rows_with_and_without_time() {
        assert_eq!(global("0 23 14 0 142").expect("new").time, Some(142));
        assert_eq!(global("32 250 33 113648").expect("old").lngspins, 113_648);
        assert!(global("32 250 33").is_err());
    }
}
