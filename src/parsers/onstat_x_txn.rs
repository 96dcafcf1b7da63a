//! `onstat -x` (lowercase): the transactions, their owner thread, locks, log positions (where
//! each began and where it writes now) and isolation. Kind `onstat-x` (once `onstat-x-txn`, still
//! accepted); `onstat-X` is `onstat -X`, the buffers.

use super::header::Header;
use super::lex::{self, dec_u32, dec_u64, hex_addr, sp0, sp1, Line, PResult};
use super::onstat_b::column;
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::Addr;
use compact_str::CompactString;
use nom::branch::alt;
use nom::bytes::complete::tag;
use nom::character::complete::char;
use nom::combinator::{all_consuming, opt};
use nom::Parser;
use serde::{Serialize, Serializer};

/// The whole output of one `onstat -x`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatXTxn {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    pub transactions: Vec<Transaction>,
    /// Footer `N active, M total, K maximum concurrent`.
    pub active: Option<u64>,
    pub total: Option<u64>,
    pub max_concurrent: Option<u64>,
    /// Line numbers of lines made only of dots (`.....`): rows were cut out there (by a
    /// publisher or a pager), so the list is known to be incomplete.
    pub elisions: Vec<usize>,
    pub unparsed: Vec<Unparsed>,
}

impl OnstatXTxn {
    /// The transactions that have written to the log, oldest begin position first: the first
    /// one is what keeps the oldest log file from being freed.
    pub fn by_begin(&self) -> Vec<&Transaction> {
        let mut v: Vec<_> = self
            .transactions
            .iter()
            .filter(|t| t.begin_logpos.is_some())
            .collect();
        v.sort_by_key(|t| t.begin_logpos);
        v
    }
}

/// One row: `a6dc4e8  A-B--  a69ee18  502  33:0x25018  34:0x486fc  COMMIT  0:07  0`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Transaction {
    pub address: Addr,
    /// The 5 flag characters as printed: 1 `A` attached, `S` suspended, `C` waiting for
    /// rollback; 2 `T` tightly / `L` loosely coupled; 3 `B` begun, `P` prepared, `X` XA
    /// prepared, `C` committing, `R` rolling back, `H` heuristically rolling back; 4 `X` XA;
    /// 5 `G` global, `C` coordinator, `S` subordinate, `B` both, `M` redirected.
    pub flags: CompactString,
    /// The owning thread (rstcb): an `onstat -u` address; `None` for 0 (a suspended XA
    /// transaction has no thread).
    pub userthread: Option<Addr>,
    pub locks: u64,
    /// Where the transaction's first log record is; `None` for `-` (nothing logged yet).
    pub begin_logpos: Option<LogPos>,
    /// Where its latest log record is (it moves back while it rolls back).
    pub curr_logpos: Option<LogPos>,
    /// `COMMIT`, `DIRTY`, `CURSOR`, `REPEAT`, `NOTRANS`, ... as printed.
    pub isolation: CompactString,
    /// `est. rb_time`: estimated rollback time as printed (`0:07`); `None` for `-` or where the
    /// column is not printed.
    pub rb_time: Option<CompactString>,
    pub retrys: u64,
    /// The coordinator of a distributed transaction, as printed.
    pub coord: Option<String>,
}

impl Transaction {
    /// Flag position 3: the transaction stage (`B`, `P`, `X`, `C`, `R`, `H`).
    pub fn stage(&self) -> Option<char> {
        self.flags.chars().nth(2).filter(|c| *c != '-')
    }

    /// Rolling back (`R` or `H` in position 3).
    pub fn is_rolling_back(&self) -> bool {
        matches!(self.stage(), Some('R' | 'H'))
    }
}

/// A log position `log:0xoffset` (`33:0x25018`): log unique id and position in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LogPos {
    pub log: u32,
    pub pos: u64,
}

/// `[log, position]` in JSON.
impl Serialize for LogPos {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (self.log, self.pos).serialize(s)
    }
}

/// What a caller is told when the input is not `onstat -x` output at all.
const EXPECTED: &str = "onstat -x output: the title `Transactions`, the column header \
     `address flags userthread locks begin current isol ...`, a transaction row \
     (`a6dc4e8 A-B-- a69ee18 502 33:0x25018 34:0x486fc COMMIT 0:07 0`) or, after those, the \
     footer `N active, M total, K maximum concurrent`";

/// Parses the output of `onstat -x` (transactions).
pub fn parse(text: &str) -> Result<OnstatXTxn, ParseError> {
    super::drive::<Body>(text)
}

/// [`parse`], giving again the row of a line `memo` remembers instead of parsing it.
pub(crate) fn parse_memo(
    text: &str,
    memo: &super::memo::LineMemo,
) -> super::memo::Recalled<OnstatXTxn> {
    super::drive_memo::<Body>(text, memo)
}

record!(OnstatXTxn, onstat; transactions);

#[derive(Default)]
struct Body {
    /// The title, column header or a row was seen: the footer is `onstat -u`'s too, so alone
    /// it says nothing.
    own_seen: bool,
    /// The first column header line was the last line: `logpos logpos rb_time` may follow.
    after_header: bool,
}

impl OnstatBody for Body {
    type Record = OnstatXTxn;
    const EXPECTED: &'static str = EXPECTED;

    fn reserve(&mut self, out: &mut OnstatXTxn, lines: usize) {
        out.transactions.reserve(lines);
    }

    // A row is its line's alone: nothing but the line's text goes into it.
    const MEMO: bool = true;

    fn rows(out: &OnstatXTxn) -> usize {
        out.transactions.len()
    }

    fn copy_row(last: &OnstatXTxn, i: usize, out: &mut OnstatXTxn) -> bool {
        super::memo::copy_row(&last.transactions, i, &mut out.transactions)
    }

    fn recalled(&mut self) {
        // As a row read: this command's own, and not right after the column header.
        self.own_seen = true;
        self.after_header = false;
    }

    fn line<'a>(&mut self, out: &mut OnstatXTxn, line: Line<'a>) -> Seen<'a> {
        let t = lex::trim_blanks(line.text);
        let after_header = std::mem::take(&mut self.after_header);
        let miss = match transaction(t) {
            Ok(x) => {
                out.transactions.push(x);
                self.own_seen = true;
                return Seen::Row;
            }
            Err(miss) => miss,
        };
        if t == "Transactions" {
            self.own_seen = true;
            return Seen::Known;
        }
        if lex::starts_with_words(t, &["address", "flags", "userthread", "locks"]) {
            self.own_seen = true;
            self.after_header = true;
            return Seen::Known;
        }
        if after_header && lex::starts_with_words(t, &["logpos", "logpos"]) {
            return Seen::Known;
        }
        if super::onstat_g_ath::is_elision(t) {
            out.elisions.push(line.no);
            return Seen::Skipped;
        }
        if self.own_seen {
            if let Some((active, total, max)) = footer(t) {
                out.active = Some(active);
                out.total = Some(total);
                out.max_concurrent = Some(max);
                return Seen::Known;
            }
        }
        Seen::Miss(miss)
    }
}

/// `22 active, 128 total, 23 maximum concurrent`
fn footer(t: &str) -> Option<(u64, u64, u64)> {
    let parsed: PResult<'_, _> = all_consuming((
        (dec_u64, sp1, tag("active,"), sp1),
        (dec_u64, sp1, tag("total,"), sp1),
        (dec_u64, sp1, tag("maximum"), sp1, tag("concurrent"), sp0),
    ))
    .parse(t);
    parsed
        .ok()
        .map(|(_, ((a, ..), (t, ..), (m, ..)))| (a, t, m))
}

/// A run of the leading bytes `keep` accepts, at least `min` and at most `max` of them (nom's
/// `take_while_m_n` for ASCII classes, without decoding characters).
#[inline]
fn ascii_run(i: &str, min: usize, max: usize, keep: fn(u8) -> bool) -> PResult<'_, &str> {
    let n = i.bytes().take(max).take_while(|&b| keep(b)).count();
    if n < min {
        let kind = if max == usize::MAX {
            nom::error::ErrorKind::TakeWhile1
        } else {
            nom::error::ErrorKind::TakeWhileMN
        };
        return Err(nom::Err::Error(nom::error::Error::new(i, kind)));
    }
    // Only ASCII bytes were taken, so `n` is a char boundary.
    Ok((&i[n..], &i[..n]))
}

/// Five flag characters (`A-B--`).
fn txn_flags(i: &str) -> PResult<'_, &str> {
    ascii_run(i, 5, 5, |b| b.is_ascii_uppercase() || b == b'-')
}

/// `-` (none) or `33:0x25018` (the `0x` is optional).
fn logpos(i: &str) -> PResult<'_, Option<LogPos>> {
    let pos = |i| {
        let (i, log) = dec_u32(i)?;
        let (i, _) = (char(':'), opt(tag("0x"))).parse(i)?;
        let (i, pos) = lex::hex_u64(i)?;
        Ok((i, Some(LogPos { log, pos })))
    };
    alt((tag("-").map(|_| None), pos)).parse(i)
}

/// An isolation level as printed: capitals and `_` (`COMMIT`, `NOTRANS`, `DIRTY`).
fn isolation(i: &str) -> PResult<'_, &str> {
    ascii_run(i, 1, usize::MAX, |b| b.is_ascii_uppercase() || b == b'_')
}

/// One row: address, flags, userthread, locks, begin and current log positions and isolation
/// from the left; then `est. rb_time` (`-` or `m:ss`, in newer versions), retrys, and the
/// coordinator when there is one.
fn transaction(t: &str) -> Result<Transaction, Miss<'_>> {
    let (i, address) = column(t, hex_addr, "a transaction address (hex)")?;
    let (i, flags) = column(i, txn_flags, "5 flag characters (`A-B--`)")?;
    let (i, userthread) = column(i, hex_addr, "a userthread (rstcb, hex)")?;
    let (i, locks) = column(i, dec_u64, "locks (a number)")?;
    let (i, begin_logpos) = column(i, logpos, "a begin logpos (`33:0x25018` or `-`)")?;
    let (i, curr_logpos) = column(i, logpos, "a current logpos (`34:0x486fc` or `-`)")?;
    let (i, isol) = column(i, isolation, "an isolation level (`COMMIT`, `DIRTY`)")?;
    let mut words = lex::header_words(i).peekable();
    let rb_time = match words.peek() {
        Some(w) if *w == "-" || w.contains(':') => words.next().map(|w| (w != "-").then_some(w)),
        _ => None,
    }
    .flatten();
    let retrys_word = words
        .next()
        .ok_or(Miss::new(&i[i.len()..], "retrys (a number)"))?;
    let (_, retrys) = all_consuming(dec_u64)
        .parse(retrys_word)
        .map_err(|_| Miss::new(&i[lex::offset_in(i, retrys_word)..], "retrys (a number)"))?;
    let coord = words.next().map(|w| {
        let rest = &i[lex::offset_in(i, w)..];
        lex::trim_blanks(rest).to_string()
    });
    Ok(Transaction {
        address,
        flags: flags.into(),
        userthread: userthread.non_zero(),
        locks,
        begin_logpos,
        curr_logpos,
        isolation: isol.into(),
        rb_time: rb_time.map(CompactString::from),
        retrys,
        coord,
    })
}

/// The row parser as nom's tokens read it, character by character: what [`transaction`] must
/// give, rows and misses alike.
#[cfg(test)]
pub(crate) mod reference {
    use super::super::lex::reference::{dec_u32, dec_u64, header_words, hex_addr, sp1};
    use super::super::lex::{self, PResult};
    use super::super::Miss;
    use super::{CompactString, LogPos, Transaction};
    use nom::branch::alt;
    use nom::bytes::complete::{tag, take_while1, take_while_m_n};
    use nom::character::complete::char;
    use nom::combinator::{all_consuming, opt};
    use nom::Parser;

    fn column<'a, T>(
        i: &'a str,
        p: impl Fn(&'a str) -> PResult<'a, T>,
        needs: &'static str,
    ) -> Result<(&'a str, T), Miss<'a>> {
        let (rest, v) = p(i).map_err(|_| Miss::new(i, needs))?;
        if rest.is_empty() {
            return Err(Miss::new(rest, "more columns (the row ends too early)"));
        }
        let (rest, _) = sp1(rest).map_err(|_| Miss::new(i, needs))?;
        Ok((rest, v))
    }

    fn txn_flags(i: &str) -> PResult<'_, &str> {
        take_while_m_n(5, 5, |c: char| c.is_ascii_uppercase() || c == '-').parse(i)
    }

    fn logpos(i: &str) -> PResult<'_, Option<LogPos>> {
        let pos = |i| {
            let (i, log) = dec_u32(i)?;
            let (i, _) = (char(':'), opt(tag("0x"))).parse(i)?;
            let (i, pos) =
                nom::combinator::map_res(take_while_m_n(1, 16, lex::is_hex), |s: &str| {
                    u64::from_str_radix(s, 16)
                })
                .parse(i)?;
            Ok((i, Some(LogPos { log, pos })))
        };
        alt((tag("-").map(|_| None), pos)).parse(i)
    }

    fn isolation(i: &str) -> PResult<'_, &str> {
        take_while1(|c: char| c.is_ascii_uppercase() || c == '_').parse(i)
    }

    pub(crate) fn transaction(t: &str) -> Result<Transaction, Miss<'_>> {
        let (i, address) = column(t, hex_addr, "a transaction address (hex)")?;
        let (i, flags) = column(i, txn_flags, "5 flag characters (`A-B--`)")?;
        let (i, userthread) = column(i, hex_addr, "a userthread (rstcb, hex)")?;
        let (i, locks) = column(i, dec_u64, "locks (a number)")?;
        let (i, begin_logpos) = column(i, logpos, "a begin logpos (`33:0x25018` or `-`)")?;
        let (i, curr_logpos) = column(i, logpos, "a current logpos (`34:0x486fc` or `-`)")?;
        let (i, isol) = column(i, isolation, "an isolation level (`COMMIT`, `DIRTY`)")?;
        let mut words = header_words(i).peekable();
        let rb_time = match words.peek() {
            Some(w) if *w == "-" || w.contains(':') => {
                words.next().map(|w| (w != "-").then_some(w))
            }
            _ => None,
        }
        .flatten();
        let retrys_word = words
            .next()
            .ok_or(Miss::new(&i[i.len()..], "retrys (a number)"))?;
        let (_, retrys) = all_consuming(dec_u64)
            .parse(retrys_word)
            .map_err(|_| Miss::new(&i[lex::offset_in(i, retrys_word)..], "retrys (a number)"))?;
        let coord = words.next().map(|w| {
            let rest = &i[lex::offset_in(i, w)..];
            lex::trim_blanks(rest).to_string()
        });
        Ok(Transaction {
            address,
            flags: flags.into(),
            userthread: userthread.non_zero(),
            locks,
            begin_logpos,
            curr_logpos,
            isolation: isol.into(),
            rb_time: rb_time.map(CompactString::from),
            retrys,
            coord,
        })
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::super::lex::columnish;
    use super::super::same_rows::{check, check_fixtures, dec_col, hex_col, mutated, row_of};
    use super::*;
    use proptest::prelude::*;

    fn x_row() -> impl Strategy<Value = String> {
        let flags = prop_oneof![4 => "[-A][-B][-BPXCRH][-][-C]", 1 => "[-A-Z]{3,7}"].boxed();
        let pos = prop_oneof![
            2 => Just("-".to_string()),
            3 => "[0-9]{1,3}:0x[0-9a-f]{1,8}",
            1 => "[0-9]{1,3}:[0-9a-fA-F]{1,18}",
            1 => "[0-9:x-]{1,6}",
        ]
        .boxed();
        let isol = prop_oneof![
            4 => prop::sample::select(vec!["COMMIT", "DIRTY", "NOTRANS", "REPEAT", "CURSOR"])
                .prop_map(str::to_string),
            1 => "[A-Z_a-z]{1,8}",
        ]
        .boxed();
        let tail = prop_oneof![
            2 => (prop_oneof![Just("-".to_string()), "[0-9]{1,2}:[0-9]{2}".boxed()], dec_col())
                .prop_map(|(rb, r)| format!("{rb}  {r}")),
            1 => dec_col(),
            1 => dec_col().prop_map(|r| format!("{r} ol_coord")),
            1 => "[ -~]{0,12}",
        ]
        .boxed();
        row_of(vec![
            hex_col(),
            flags,
            hex_col(),
            dec_col(),
            pos.clone(),
            pos,
            isol,
            tail,
        ])
    }

    #[test]
    fn fixture_rows_read_as_the_reference_reads_them() {
        let rows = check_fixtures(transaction, reference::transaction);
        assert!(rows > 5, "{rows} rows");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn generated_rows_read_as_the_reference_reads_them(
            row in prop_oneof![3 => x_row(), 3 => mutated(x_row()), 1 => columnish()]
        ) {
            check(&row, transaction, reference::transaction)?;
        }
    }

    #[test]
    fn rows_with_and_without_log_positions() {
        let x = transaction(
            "a6dc4e8   A-B-- a69ee18     502    33:0x25018 34:0x486fc COMMIT  0:07     0",
        )
        .expect("logged");
        assert_eq!(
            x.begin_logpos,
            Some(LogPos {
                log: 33,
                pos: 0x25018
            })
        );
        assert_eq!(
            (x.rb_time.as_deref(), x.retrys, x.coord.as_deref()),
            (Some("0:07"), 0, None)
        );
        assert_eq!(x.stage(), Some('B'));
        let x = transaction(
            "a6d8028   A---- a695028     0      -         -          COMMIT  -        0",
        )
        .expect("idle");
        assert_eq!((x.begin_logpos, x.rb_time), (None, None));
        // No rb_time column (older versions), a coordinator.
        let x =
            transaction("a6d8028 A---C a695028 3 12:0x18 12:0x2c REPEAT 0 ol_coord").expect("old");
        assert_eq!((x.retrys, x.coord.as_deref()), (0, Some("ol_coord")));
        assert!(transaction("a6d8028 A--- a695028 0 - - COMMIT - 0").is_err());
        assert!(transaction("a4d9e68 Y--P--- 21 niraj - a65e5a8 0 1 0 0").is_err());
        assert!(transaction("a6d8028 A---- a695028 0 - - COMMIT -").is_err());
    }

    #[test]
    fn logpos_json_is_a_pair() {
        let json = serde_json::to_string(&LogPos {
            log: 33,
            pos: 0x25018,
        })
        .expect("json");
        assert_eq!(json, "[33,151576]");
    }
}
