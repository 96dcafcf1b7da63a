//! `onstat -g con`: conditions with waiters (`netnorm`, `sm_read`, ...), waiter tid and wait time.

use super::header::Header;
use super::lex::{self, dec_u64, hex_addr, last_word, sp1, Line, PResult};
use super::{Miss, OnstatBody, Seen, Unparsed};
use crate::error::ParseError;
use crate::ids::{Addr, Tid};
use compact_str::CompactString;
use nom::Parser;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGCon {
    pub header: Option<Header>,
    pub offline: Option<String>,
    pub conditions: Vec<Condition>,
    pub unparsed: Vec<Unparsed>,
}

/// One row: `cid addr name waiter waittime`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Condition {
    pub cid: u64,
    /// Matches the `wait` column of `onstat -u`.
    pub addr: Addr,
    pub name: CompactString,
    /// A thread id (`onstat -g ath` tid).
    pub waiter: Tid,
    /// Seconds.
    pub waittime: u64,
}

/// What a caller is told when the input is not `onstat -g con` output at all.
const EXPECTED: &str = "onstat -g con output: the title `Conditions with waiters:`, the column \
     header `cid addr name waiter waittime` or a condition row (`2370 14480848 netnorm 349 3682`)";

/// Parses the output of `onstat -g con`.
pub fn parse(text: &str) -> Result<OnstatGCon, ParseError> {
    super::drive::<Body>(text)
}

/// [`parse`], giving again the row of a line `memo` remembers (its wait time read again)
/// instead of parsing it.
pub(crate) fn parse_memo(
    text: &str,
    memo: &super::memo::LineMemo,
) -> super::memo::Recalled<OnstatGCon> {
    super::drive_memo::<Body>(text, memo)
}

record!(OnstatGCon, onstat; conditions);

#[derive(Default)]
struct Body;

impl OnstatBody for Body {
    type Record = OnstatGCon;
    const EXPECTED: &'static str = EXPECTED;

    fn reserve(&mut self, out: &mut OnstatGCon, lines: usize) {
        out.conditions.reserve(lines);
    }

    // A row is its line's alone. Its wait time ticks every second, so a row is remembered by
    // its line without the last column, which is read again from the line.
    const MEMO: bool = true;

    fn rows(out: &OnstatGCon) -> usize {
        out.conditions.len()
    }

    fn memo_text(text: &str) -> Option<&str> {
        last_word(text).map(|(before, _)| before)
    }

    fn copy_line(last: &OnstatGCon, i: usize, out: &mut OnstatGCon, text: &str) -> bool {
        waittime_again(last, i, text).is_some_and(|c| {
            out.conditions.push(c);
            true
        })
    }

    fn line<'a>(&mut self, out: &mut OnstatGCon, line: Line<'a>) -> Seen<'a> {
        match condition(line.text) {
            Ok(c) => {
                out.conditions.push(c);
                Seen::Row
            }
            Err(_) if line.text.trim() == "Conditions with waiters:" => Seen::Known,
            Err(_) if lex::starts_with_words(line.text, &["cid", "addr", "name"]) => Seen::Known,
            Err(miss) => Seen::Miss(miss),
        }
    }
}

/// Row `i` of `last` with the wait time of `text`, a line equal to that row's but for its last
/// word: what [`condition`] reads from `text`. The columns before the last are the row's (they
/// are read from the left and from the right up to that word, never into it); the last word is
/// read as [`condition`] reads it, and `None` (the line is parsed) when it is no wait time.
fn waittime_again(last: &OnstatGCon, i: usize, text: &str) -> Option<Condition> {
    let (_, waittime) = number_from_right(text, "a wait time").ok()?;
    let row = last.conditions.get(i)?;
    Some(Condition {
        waittime,
        ..row.clone()
    })
}

/// Pops the last word of `rest` as a decimal number.
fn number_from_right<'a>(rest: &'a str, needs: &'static str) -> Result<(&'a str, u64), Miss<'a>> {
    let (before, w) = last_word(rest).ok_or(Miss::new(rest, needs))?;
    match dec_u64(w) {
        Ok(("", v)) => Ok((before, v)),
        _ => Err(Miss::new(w, needs)),
    }
}

/// One row: cid and addr from the left, waittime and waiter from the right, the name between.
fn condition(text: &str) -> Result<Condition, Miss<'_>> {
    let i = super::lex::trim_start_bytes(text, super::lex::is_blank_byte);
    // Each column must end at a blank: `14aa0588x` is no address, `address` no cid.
    let parsed: PResult<'_, _> = (dec_u64, sp1).parse(i);
    let (j, (cid, _)) = parsed.map_err(|_| Miss::new(i, "a condition id (a number)"))?;
    let parsed: PResult<'_, _> = (hex_addr, sp1).parse(j);
    let (i, (addr, _)) = parsed.map_err(|_| Miss::new(j, "a condition address (hex)"))?;
    let (rest, waittime) = number_from_right(i, "a wait time (seconds) at the end of the row")?;
    let (rest, waiter) = number_from_right(rest, "a waiter thread id (a number)")?;
    let name = super::lex::trim_blanks(rest);
    if name.is_empty() {
        return Err(Miss::new(rest, "a condition name"));
    }
    // A name is words (`netnorm`, `backend:3`), never a number: a row with numbers between
    // its address and its last two is another table's (`onstat -t`, `/proc/diskstats`).
    if let Some(n) = name
        .split_ascii_whitespace()
        .find(|w| w.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(Miss::new(n, "a condition name (a word, not a number)"));
    }
    Ok(Condition {
        cid,
        addr,
        name: CompactString::new(name),
        waiter: Tid(waiter),
        waittime,
    })
}

/// The row parser as nom's tokens read it, character by character: what [`condition`] must
/// give, rows and misses alike.
#[cfg(test)]
pub(crate) mod reference {
    use super::super::lex::reference::{dec_u64, hex_addr, sp1};
    use super::super::lex::{self, last_word, PResult};
    use super::super::Miss;
    use super::Condition;
    use crate::ids::Tid;
    use compact_str::CompactString;
    use nom::Parser;

    fn number_from_right<'a>(
        rest: &'a str,
        needs: &'static str,
    ) -> Result<(&'a str, u64), Miss<'a>> {
        let (before, w) = last_word(rest).ok_or(Miss::new(rest, needs))?;
        match dec_u64(w) {
            Ok(("", v)) => Ok((before, v)),
            _ => Err(Miss::new(w, needs)),
        }
    }

    pub(crate) fn condition(text: &str) -> Result<Condition, Miss<'_>> {
        let i = lex::trim_start_bytes(text, lex::is_blank_byte);
        let parsed: PResult<'_, _> = (dec_u64, sp1).parse(i);
        let (j, (cid, _)) = parsed.map_err(|_| Miss::new(i, "a condition id (a number)"))?;
        let parsed: PResult<'_, _> = (hex_addr, sp1).parse(j);
        let (i, (addr, _)) = parsed.map_err(|_| Miss::new(j, "a condition address (hex)"))?;
        let (rest, waittime) = number_from_right(i, "a wait time (seconds) at the end of the row")?;
        let (rest, waiter) = number_from_right(rest, "a waiter thread id (a number)")?;
        let name = lex::trim_blanks(rest);
        if name.is_empty() {
            return Err(Miss::new(rest, "a condition name"));
        }
        if let Some(n) = name
            .split_ascii_whitespace()
            .find(|w| w.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(Miss::new(n, "a condition name (a word, not a number)"));
        }
        Ok(Condition {
            cid,
            addr,
            name: CompactString::new(name),
            waiter: Tid(waiter),
            waittime,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::lex::{columnish, last_word};
    use super::super::same_rows::{check, check_fixtures, dec_col, hex_col, mutated, row_of};
    use super::*;
    use proptest::prelude::*;

    fn name_col() -> BoxedStrategy<String> {
        prop_oneof![
            4 => "[a-z_]{2,10}(:[0-9])?",
            1 => "[a-z]{2,6} [a-z0-9]{1,4}",
            1 => "[0-9]{1,3}",
            1 => "[a-zA-Z0-9é_: ]{1,10}",
        ]
        .boxed()
    }

    fn con_row() -> impl Strategy<Value = String> {
        row_of(vec![dec_col(), hex_col(), name_col(), dec_col(), dec_col()])
    }

    #[test]
    fn fixture_rows_read_as_the_reference_reads_them() {
        let rows = check_fixtures(condition, reference::condition);
        assert!(rows > 5, "{rows} rows");
    }

    /// A last column a second later: a wait time, one too big for a number, or no number.
    fn later_last_col() -> BoxedStrategy<String> {
        prop_oneof![
            4 => dec_col(),
            1 => "[0-9a-fx+-]{1,3}",
            1 => Just(String::new()),
        ]
        .boxed()
    }

    /// `rows` with each one's last word replaced by its new one (with the blanks given), under
    /// the table's titles.
    fn table(rows: &[(String, String, String, String)], later: bool) -> String {
        let mut text = String::from("Conditions with waiters:\ncid addr name waiter waittime\n");
        for (row, last, sep, trail) in rows {
            match last_word(row) {
                Some((before, _)) if later => {
                    text.push_str(&format!("{before}{sep}{last}{trail}\n"));
                }
                _ => {
                    text.push_str(row);
                    text.push('\n');
                }
            }
        }
        text
    }

    fn outcome(r: Result<OnstatGCon, ParseError>) -> Result<serde_json::Value, ParseError> {
        r.map(|c| serde_json::to_value(c).expect("json"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3_000))]

        /// Rows a second later with their last word changed (a wait time ticking, or no longer
        /// one), read through the memo of the rows before: what a parse of them alone reads.
        #[test]
        fn rows_with_a_new_wait_time_read_through_the_memo_as_alone(
            rows in prop::collection::vec(
                (
                    prop_oneof![3 => con_row(), 1 => mutated(con_row())],
                    later_last_col(),
                    "[ \t]{1,2}",
                    "[ \t]{0,2}",
                ),
                1..12,
            )
        ) {
            let mut memo = super::super::memo::LineMemo::default();
            let before = table(&rows, false);
            let _ = memo.read(&before, parse_memo, Ok);
            let after = table(&rows, true);
            let with = parse_memo(&after, &memo).result;
            prop_assert_eq!(outcome(with), outcome(parse(&after)), "text:\n{}", after);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn generated_rows_read_as_the_reference_reads_them(
            row in prop_oneof![3 => con_row(), 3 => mutated(con_row()), 1 => columnish()]
        ) {
            check(&row, condition, reference::condition)?;
        }
    }
}
