//! `onstat -g pqs <sid>`: the operators of the query a session is running (scan, nljoin, ...),
//! each with its phase, rows and time, and its inputs (so the plan is a tree).

use super::header::Header;
use super::lex::{self, dec_f64, dec_u64, hex_addr, sp1, word, Line, PResult};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::{Addr, Sid};
use compact_str::CompactString;
use nom::character::complete::char;
use nom::combinator::{all_consuming, opt};
use nom::sequence::terminated;
use nom::Parser;
use serde::Serialize;

/// The whole output of one `onstat -g pqs [sid]`.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct OnstatGPqs {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    /// The `Query Operators:` rows, in the order printed (every session's, or one's).
    pub operators: Vec<Operator>,
    pub unparsed: Vec<Unparsed>,
}

impl OnstatGPqs {
    /// The operators of session `sid`.
    pub fn of_session(&self, sid: Sid) -> impl Iterator<Item = &Operator> {
        self.operators.iter().filter(move |o| o.sid == sid)
    }
}

/// One row: `af269d0  5  nljoin  next  224717  00:01.82  af26a90  aeb4478  SELECT`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Operator {
    /// `addr`: the operator; another operator's `in1`/`in2` names it as its input.
    pub addr: Addr,
    /// `ses-id`.
    pub sid: Sid,
    /// `opname`: `scan`, `nljoin`, `hjoin`, `sort`, `group`, ...
    pub opname: CompactString,
    /// `phase`: `open`, `next`, `close`, ...
    pub phase: CompactString,
    /// `rows`: rows the operator has processed.
    pub rows: u64,
    /// `time`: seconds spent in the operator (printed `MM:SS.ss`).
    pub time_s: f64,
    /// `in1`, `in2`: the input operators (`None` for 0, or where the row was cut before them).
    pub in1: Option<Addr>,
    pub in2: Option<Addr>,
    /// `stmt-type`: `SELECT`, `UPDATE`, ...; `None` where the row was cut before it.
    pub stmt_type: Option<CompactString>,
}

/// What a caller is told when the input is not `onstat -g pqs` output at all.
const EXPECTED: &str = "onstat -g pqs output: the title `Query Operators:`, the column header \
     `addr ses-id opname phase rows time in1 in2 stmt-type`, or an operator row \
     (`af269d0 5 nljoin next 224717 00:01.82 af26a90 aeb4478 SELECT`)";

/// Parses the output of `onstat -g pqs` or `onstat -g pqs <sid>`.
pub fn parse(text: &str) -> Result<OnstatGPqs, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatGPqs, onstat);

#[derive(Default)]
struct Body;

impl OnstatBody for Body {
    type Record = OnstatGPqs;
    const EXPECTED: &'static str = EXPECTED;
    // A session running no query may get the banner alone: an answer (no operators).
    const BANNER_ALONE: bool = true;

    fn reserve(&mut self, out: &mut OnstatGPqs, lines: usize) {
        out.operators.reserve(lines);
    }

    fn line<'a>(&mut self, out: &mut OnstatGPqs, line: Line<'a>) -> Seen<'a> {
        let t = lex::trim_blanks(line.text);
        if t == "Query Operators:" || is_column_header(t) {
            return Seen::Known;
        }
        match operator(t) {
            Ok(o) => {
                out.operators.push(o);
                Seen::Row
            }
            Err(miss) => Seen::Miss(miss),
        }
    }
}

/// `addr     ses-id   opname    phase   rows   time  in1  in2  stmt-type`
fn is_column_header(t: &str) -> bool {
    lex::starts_with_words(t, &["addr", "ses-id", "opname", "phase"])
}

/// A column and the blanks after it; at the end of the line, no blanks needed.
fn column<'a, O>(
    i: &'a str,
    mut p: impl Parser<&'a str, Output = O, Error = nom::error::Error<&'a str>>,
    needs: &'static str,
) -> Result<(&'a str, O), Miss<'a>> {
    let (rest, v) = p.parse(i).map_err(|_| Miss::new(i, needs))?;
    if rest.is_empty() {
        return Ok((rest, v));
    }
    let r: PResult<'_, _> = sp1(rest);
    let (rest, _) = r.map_err(|_| Miss::new(i, needs))?;
    Ok((rest, v))
}

/// `00:01.82` (minutes, seconds), `1:02:03.50` (hours too), `1234:05.00` (wide minutes) →
/// seconds.
fn op_time(i: &str) -> PResult<'_, f64> {
    let (i, first) = terminated(dec_u64, char(':')).parse(i)?;
    let (i, second) = opt(terminated(dec_u64, char(':'))).parse(i)?;
    let (i, secs) = dec_f64(i)?;
    // Hours then minutes, or minutes alone (u64 → f64 is exact below 2^53).
    let minutes = match second {
        Some(m) => first as f64 * 60.0 + m as f64,
        None => first as f64,
    };
    Ok((i, minutes * 60.0 + secs))
}

/// A row: addr, ses-id, opname, phase, rows and time, then in1, in2 and stmt-type where the
/// row goes on (a copy cut after the time keeps what it has).
fn operator(t: &str) -> Result<Operator, Miss<'_>> {
    let (i, addr) = column(t, hex_addr, "an operator address (hex)")?;
    let (i, sid) = column(i, dec_u64, "a session id")?;
    let (i, opname) = column(i, word, "an operator name (`scan`, `nljoin`, ...)")?;
    let (i, phase) = column(i, word, "a phase (`open`, `next`, `close`)")?;
    let (i, rows) = column(i, dec_u64, "a row count")?;
    let (mut i, time_s) = column(i, op_time, "a time (`MM:SS.ss`)")?;
    let mut inputs = [None, None];
    for slot in &mut inputs {
        // An input is a hex word; a word that is not (`SELECT`) is the statement type.
        let w = lex::header_words(i).next().unwrap_or("");
        let hex: PResult<'_, _> = all_consuming(hex_addr).parse(w);
        match hex {
            Ok((_, a)) => {
                *slot = Some(a.non_zero());
                i = lex::trim_start_bytes(&i[w.len()..], lex::is_blank_byte);
            }
            Err(_) => break,
        }
    }
    let stmt = lex::trim_blanks(i);
    // After two inputs, a third hex word is not a statement type: not this command's row.
    let third: PResult<'_, _> = all_consuming(hex_addr).parse(stmt);
    if third.is_ok() {
        return Err(Miss::new(i, "a statement type (`SELECT`, `UPDATE`, ...)"));
    }
    Ok(Operator {
        addr,
        sid: Sid(sid),
        opname: CompactString::new(opname),
        phase: CompactString::new(phase),
        rows,
        time_s,
        in1: inputs[0].flatten(),
        in2: inputs[1].flatten(),
        stmt_type: (!stmt.is_empty()).then(|| CompactString::new(stmt)),
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        let t = |s: &str| all_consuming(op_time).parse(s).map(|(_, v)| v).ok();
        assert_eq!(t("00:01.82"), Some(1.82));
        assert_eq!(t("02:00.50"), Some(120.5));
        assert_eq!(t("1:02:03.50"), Some(3723.5));
        assert_eq!(t("1234:05.00"), Some(74_045.0));
        assert_eq!(t("00:07"), Some(7.0));
        assert_eq!(t("1.82"), None);
        assert_eq!(t("1:2:3:4.0"), None);
    }

    #[test]
    fn rows_full_and_cut() {
        let o = operator("af269d0   5  nljoin  next  224717 00:01.82 af26a90 aeb4478  SELECT")
            .expect("full row");
        assert_eq!(o.in1, Some(Addr(0xaf2_6a90)));
        assert_eq!(o.stmt_type.as_deref(), Some("SELECT"));
        let o = operator("ae50b3a 23 scan open 0 00:00.00 0 0 SELECT").expect("no inputs");
        assert_eq!((o.in1, o.in2), (None, None));
        let o = operator("af26a90 5 scan next 472 00:00.20").expect("cut row");
        assert_eq!((o.in1, o.in2, o.stmt_type), (None, None, None));
        let o = operator("af26a90 5 scan next 472 00:00.20 af26a91").expect("cut after in1");
        assert_eq!((o.in1, o.in2), (Some(Addr(0xaf2_6a91)), None));
    }

    #[test]
    fn not_rows() {
        assert!(operator("af26a90 5 scan next 472").is_err());
        assert!(operator("af26a90 5 scan next x 00:00.20").is_err());
        assert!(operator("af26a90 5 scan next 472 0.20").is_err());
        assert!(operator("zz 5 scan next 472 00:00.20").is_err());
        assert!(operator("af26a90 5 scan next 472 00:00.20 1 2 3").is_err());
    }
}
