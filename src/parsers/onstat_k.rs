//! `onstat -k`: the lock table: address, owner and waiter list (rstcb addresses), lock type,
//! tblsnum (partnum), rowid and key.

use super::header::Header;
use super::lex::{self, dec_u64, hex_addr, sp0, sp1, Line, PResult};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::Addr;
use compact_str::CompactString;
use nom::bytes::complete::tag;
use nom::combinator::{all_consuming, opt};
use nom::Parser;
use serde::{Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatK {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    pub locks: Vec<Lock>,
    /// Footer `N active, M total, H hash buckets[, O lock table overflows]`.
    pub active: Option<u64>,
    pub total: Option<u64>,
    pub hash_buckets: Option<u64>,
    /// Only newer versions print it.
    pub overflows: Option<u64>,
    pub unparsed: Vec<Unparsed>,
}

impl OnstatK {
    /// The lock at this address (what a lock waiter's `onstat -u` wait column holds).
    pub fn lock(&self, address: Addr) -> Option<&Lock> {
        self.locks.iter().find(|l| l.address == address)
    }
}

/// One row: `a095f78  0  a4d9e68  0  HDR+S  100002  203  0`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lock {
    /// What a lock waiter's `onstat -u` wait column holds.
    pub address: Addr,
    /// The first thread (rstcb) waiting for this lock; `None` for 0.
    pub wtlist: Option<Addr>,
    /// The thread (rstcb) holding it.
    pub owner: Addr,
    /// The next lock in the owner's list; `None` for 0.
    pub lklist: Option<Addr>,
    /// As printed: `HDR+S`, `S`, `X`, `HDR+IX`, `B`, ...
    #[serde(rename = "type")]
    pub lock_type: CompactString,
    /// The partnum (hex as printed): which table or index. 64 bits: 15.0's native mode prints
    /// wider ones than the 8 digits of older versions.
    #[serde(serialize_with = "hex_u64")]
    pub tblsnum: u64,
    /// Hex as printed; 0 for a table lock.
    #[serde(serialize_with = "hex_u64")]
    pub rowid: u64,
    /// `key#/bsiz` as printed (`0`, `K- 1`).
    pub key: CompactString,
}

impl Lock {
    /// The lock mode without the `HDR+` prefix (`HDR+IX` → `IX`).
    pub fn mode(&self) -> &str {
        self.lock_type
            .strip_prefix("HDR+")
            .unwrap_or(&self.lock_type)
    }

    /// A lock on a whole table (rowid 0), as opposed to a row, key or byte lock.
    pub fn is_table_lock(&self) -> bool {
        self.rowid == 0
    }
}

/// A rowid stays hex in JSON, as onstat prints it.
fn hex_u64<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("{v:x}"))
}

/// What a caller is told when the input is not `onstat -k` output at all.
const EXPECTED: &str = "onstat -k output: the title `Locks`, the column header \
     `address wtlist owner lklist type tblsnum rowid key#/bsiz`, a lock row \
     (`a095f78 0 a4d9e68 0 HDR+S 100002 203 0`) or the footer \
     `N active, M total, H hash buckets`";

/// Parses the output of `onstat -k`.
pub fn parse(text: &str) -> Result<OnstatK, ParseError> {
    super::drive::<Body>(text)
}

/// [`parse`], giving again the row of a line `memo` remembers instead of parsing it.
pub(crate) fn parse_memo(
    text: &str,
    memo: &super::memo::LineMemo,
) -> super::memo::Recalled<OnstatK> {
    super::drive_memo::<Body>(text, memo)
}

record!(OnstatK, onstat; locks);

#[derive(Default)]
struct Body;

impl OnstatBody for Body {
    type Record = OnstatK;
    const EXPECTED: &'static str = EXPECTED;

    fn reserve(&mut self, out: &mut OnstatK, lines: usize) {
        out.locks.reserve(lines);
    }

    // A row is its line's alone: nothing but the line's text goes into it.
    const MEMO: bool = true;

    fn rows(out: &OnstatK) -> usize {
        out.locks.len()
    }

    fn copy_row(last: &OnstatK, i: usize, out: &mut OnstatK) -> bool {
        super::memo::copy_row(&last.locks, i, &mut out.locks)
    }

    fn line<'a>(&mut self, out: &mut OnstatK, line: Line<'a>) -> Seen<'a> {
        let miss = match lock_row(line.text) {
            Ok(l) => {
                out.locks.push(l);
                return Seen::Row;
            }
            Err(miss) => miss,
        };
        if line.text.trim() == "Locks" || is_column_header(line.text) {
            Seen::Known
        } else if let Some(f) = footer(line.text) {
            out.active = Some(f.active);
            out.total = Some(f.total);
            out.hash_buckets = Some(f.hash_buckets);
            out.overflows = f.overflows;
            // Without `lock table overflows` it is `onstat -t`'s footer too.
            if f.overflows.is_some() {
                Seen::Known
            } else {
                Seen::Row
            }
        } else {
            Seen::Miss(miss)
        }
    }
}

/// `address  wtlist   owner    lklist   type     tblsnum  rowid    key#/bsiz`
fn is_column_header(text: &str) -> bool {
    lex::starts_with_words(text, &["address", "wtlist", "owner", "lklist", "type"])
}

struct Footer {
    active: u64,
    total: u64,
    hash_buckets: u64,
    overflows: Option<u64>,
}

/// ` 1 active, 2000 total, 2048 hash buckets, 0 lock table overflows` (the last part only in
/// newer versions).
fn footer(text: &str) -> Option<Footer> {
    let parsed: PResult<'_, _> = all_consuming((
        sp0,
        (dec_u64, sp1, tag("active,"), sp1),
        (dec_u64, sp1, tag("total,"), sp1),
        (dec_u64, sp1, tag("hash"), sp1, tag("buckets")),
        opt((
            tag(","),
            sp1,
            dec_u64,
            sp1,
            tag("lock"),
            sp1,
            tag("table"),
            sp1,
            tag("overflows"),
        )),
        sp0,
    ))
    .parse(text);
    let (_, (_, (active, ..), (total, ..), (hash_buckets, ..), overflows, _)) = parsed.ok()?;
    Some(Footer {
        active,
        total,
        hash_buckets,
        overflows: overflows.map(|(_, _, o, ..)| o),
    })
}

/// A lock type as printed: upper-case letters joined by `+` (`S`, `HDR+IX`, `SIX`).
#[inline]
fn is_type_char(c: char) -> bool {
    c.is_ascii_uppercase() || c == '+'
}

/// A lock type (`S`, `HDR+IX`): uppercase letters and `+`, read as bytes (they are ASCII).
#[inline]
fn lock_type(i: &str) -> PResult<'_, &str> {
    match i
        .bytes()
        .take_while(|&b| is_type_char(char::from(b)))
        .count()
    {
        0 => Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::TakeWhile1,
        ))),
        n => Ok((&i[n..], &i[..n])),
    }
}

/// A hex word ending at a blank, then the blanks.
#[inline]
fn hex_column(i: &str) -> PResult<'_, Addr> {
    let (i, (a, _)) = (hex_addr, sp1).parse(i)?;
    Ok((i, a))
}

/// One lock row: four addresses, the type, the tblsnum and rowid (hex), and the key column
/// (which may hold a blank: `K- 1`).
fn lock_row(text: &str) -> Result<Lock, Miss<'_>> {
    let i = super::lex::trim_start_bytes(text, super::lex::is_blank_byte);
    let (j, address) = hex_column(i).map_err(|_| Miss::new(i, "a lock address (hex)"))?;
    let (k, wtlist) =
        hex_column(j).map_err(|_| Miss::new(j, "a wtlist address (hex, 0 for none)"))?;
    let (j, owner) = hex_column(k).map_err(|_| Miss::new(k, "an owner address (hex)"))?;
    let (k, lklist) =
        hex_column(j).map_err(|_| Miss::new(j, "an lklist address (hex, 0 for none)"))?;
    let parsed: PResult<'_, _> = (lock_type, sp1).parse(k);
    let (j, (lock_type, _)) =
        parsed.map_err(|_| Miss::new(k, "a lock type (`S`, `X`, `HDR+S`, `IX`, ...)"))?;
    let parsed: PResult<'_, _> = (lex::hex_u64, sp1).parse(j);
    let (k, (tblsnum, _)) = parsed.map_err(|_| Miss::new(j, "a tblsnum (hex partnum)"))?;
    let parsed: PResult<'_, _> = (lex::hex_u64, sp1).parse(k);
    let (key, (rowid, _)) = parsed.map_err(|_| Miss::new(k, "a rowid (hex) and a key"))?;
    Ok(Lock {
        address,
        wtlist: wtlist.non_zero(),
        owner,
        lklist: lklist.non_zero(),
        lock_type: CompactString::new(lock_type),
        tblsnum,
        rowid,
        key: CompactString::new(super::lex::trim_end_bytes(key, super::lex::is_blank_byte)),
    })
}

/// The row parser as nom's tokens read it, character by character: what [`lock_row`] must
/// give, rows and misses alike.
#[cfg(test)]
pub(crate) mod reference {
    use super::super::lex::reference::{hex_addr, sp1};
    use super::super::lex::{self, PResult};
    use super::super::Miss;
    use super::{is_type_char, Lock};
    use crate::ids::Addr;
    use compact_str::CompactString;
    use nom::bytes::complete::{take_while1, take_while_m_n};
    use nom::combinator::map_res;
    use nom::Parser;

    fn hex_column(i: &str) -> PResult<'_, Addr> {
        let (i, (a, _)) = (hex_addr, sp1).parse(i)?;
        Ok((i, a))
    }

    pub(crate) fn lock_row(text: &str) -> Result<Lock, Miss<'_>> {
        let i = lex::trim_start_bytes(text, lex::is_blank_byte);
        let (j, address) = hex_column(i).map_err(|_| Miss::new(i, "a lock address (hex)"))?;
        let (k, wtlist) =
            hex_column(j).map_err(|_| Miss::new(j, "a wtlist address (hex, 0 for none)"))?;
        let (j, owner) = hex_column(k).map_err(|_| Miss::new(k, "an owner address (hex)"))?;
        let (k, lklist) =
            hex_column(j).map_err(|_| Miss::new(j, "an lklist address (hex, 0 for none)"))?;
        let parsed: PResult<'_, _> = (take_while1(is_type_char), sp1).parse(k);
        let (j, (lock_type, _)) =
            parsed.map_err(|_| Miss::new(k, "a lock type (`S`, `X`, `HDR+S`, `IX`, ...)"))?;
        let parsed: PResult<'_, _> = (
            map_res(take_while_m_n(1, 16, lex::is_hex), |s: &str| {
                u64::from_str_radix(s, 16)
            }),
            sp1,
        )
            .parse(j);
        let (k, (tblsnum, _)) = parsed.map_err(|_| Miss::new(j, "a tblsnum (hex partnum)"))?;
        let parsed: PResult<'_, _> = (
            map_res(take_while_m_n(1, 16, lex::is_hex), |s: &str| {
                u64::from_str_radix(s, 16)
            }),
            sp1,
        )
            .parse(k);
        let (key, (rowid, _)) = parsed.map_err(|_| Miss::new(k, "a rowid (hex) and a key"))?;
        Ok(Lock {
            address,
            wtlist: wtlist.non_zero(),
            owner,
            lklist: lklist.non_zero(),
            lock_type: CompactString::new(lock_type),
            tblsnum,
            rowid,
            key: CompactString::new(lex::trim_end_bytes(key, lex::is_blank_byte)),
        })
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::super::lex::columnish;
    use super::super::same_rows::{check, check_fixtures, hex_col, mutated, row_of};
    use super::*;
    use proptest::prelude::*;

    fn k_row() -> impl Strategy<Value = String> {
        let kind = prop_oneof![
            4 => "(HDR\\+)?(S|X|IX|IS|SIX|U|B)",
            1 => "[A-Z+]{1,6}",
            1 => "[A-Za-z+é]{1,4}",
        ]
        .boxed();
        let key = prop_oneof![
            3 => "[0-9]{1,4}",
            1 => "K- [0-9]",
            1 => "[ -~]{0,10}",
        ]
        .boxed();
        row_of(vec![
            hex_col(),
            hex_col(),
            hex_col(),
            hex_col(),
            kind,
            hex_col(),
            hex_col(),
            key,
        ])
    }

    #[test]
    fn fixture_rows_read_as_the_reference_reads_them() {
        let rows = check_fixtures(lock_row, reference::lock_row);
        assert!(rows > 5, "{rows} rows");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn generated_rows_read_as_the_reference_reads_them(
            row in prop_oneof![3 => k_row(), 3 => mutated(k_row()), 1 => columnish()]
        ) {
            check(&row, lock_row, reference::lock_row)?;
        }
    }

    #[test]
    fn right_aligned_type_and_key_with_a_blank() {
        let l =
            lock_row("a1993e8  0         5c2f03d0 a19be30     S         2   1c05a            0")
                .expect("row");
        assert_eq!(l.lock_type, "S");
        assert_eq!(l.tblsnum, 2);
        assert_eq!(l.rowid, 0x1c05a);
        assert_eq!(l.lklist, Some(Addr(0xa19_be30)));
        assert_eq!(l.key, "0");
        let l = lock_row("a095f78 0 a4d9e68 0 HDR+IX 100002 0 K- 1").expect("row");
        assert_eq!(l.mode(), "IX");
        assert!(l.is_table_lock());
        assert_eq!(l.key, "K- 1");
    }

    #[test]
    fn not_rows() {
        assert!(lock_row("address wtlist owner lklist type tblsnum rowid key#/bsiz").is_err());
        assert!(lock_row("a095f78 0 a4d9e68 0 hdr+s 100002 203 0").is_err());
        assert!(lock_row("a095f78 0 a4d9e68 0 HDR+S 100002 203").is_err());
        // Wider than 16 hex digits is no number onstat prints.
        assert!(lock_row("a095f78 0 a4d9e68 0 HDR+S 10000200000000000 203 0").is_err());
    }

    #[test]
    fn footers() {
        let f = footer(" 1 active, 2000 total, 2048 hash buckets, 0 lock table overflows")
            .expect("new footer");
        assert_eq!(
            (f.active, f.total, f.hash_buckets, f.overflows),
            (1, 2000, 2048, Some(0))
        );
        let f = footer("7 active, 2000 total, 2048 hash buckets").expect("old footer");
        assert_eq!(f.overflows, None);
        assert!(footer("7 active, 2000 total").is_none());
    }
}
