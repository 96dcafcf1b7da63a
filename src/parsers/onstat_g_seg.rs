//! `onstat -g seg`: the shared-memory segments (resident, virtual, buffer pool, message, ...),
//! their size, use and whether they are locked in memory, and the summary under them.

use super::header::Header;
use super::lex::{self, dec_u64, hex_addr, sp0, Line, PResult};
use super::onstat_b::{column, last_column};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::Addr;
use nom::bytes::complete::{tag, take_while_m_n};
use nom::character::complete::char;
use nom::combinator::{all_consuming, opt};
use nom::Parser;
use serde::Serialize;

/// The whole output of one `onstat -g seg`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGSeg {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    pub segments: Vec<Segment>,
    /// The `Total:` row and the low-memory reserve lines. A text holding several outputs
    /// (`onstat -r`, a manual gluing two) keeps the last one's.
    pub summary: Option<SegmentSummary>,
    pub unparsed: Vec<Unparsed>,
}

impl OnstatGSeg {
    /// Bytes in segments of a class (`R`, `V`, `B`, ...).
    pub fn bytes_of_class(&self, class: &str) -> u64 {
        self.segments
            .iter()
            .filter(|s| s.class == class)
            .map(|s| s.size)
            .sum()
    }
}

/// One row: `720914  52e44801  44000000  4390912  248812  R  1072  0`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// The shared-memory segment id.
    pub id: u64,
    /// The shared-memory key (hex as printed).
    pub key: Addr,
    pub addr: Addr,
    /// Bytes.
    pub size: u64,
    /// Overhead, bytes.
    pub ovhd: u64,
    /// `R` resident, `V` virtual, `VX` virtual extension, `B` buffer pool, `M` message, ...
    pub class: String,
    /// `*` by the class: the segment is locked in memory.
    pub locked: bool,
    /// Blocks used and free.
    pub blkused: u64,
    pub blkfree: u64,
}

/// `Total:  -  -  285138944  -  -  60187  9427` and the reserve lines after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct SegmentSummary {
    /// Bytes.
    pub total_size: Option<u64>,
    pub total_blkused: Option<u64>,
    pub total_blkfree: Option<u64>,
    /// `Virtual segment low memory reserve (bytes):4194304`
    pub low_memory_reserve: Option<u64>,
    /// `Low memory reserve used 0 times and used maximum block size 0 bytes`
    pub low_memory_reserve_used: Option<u64>,
    pub low_memory_reserve_max_block: Option<u64>,
}

/// What a caller is told when the input is not `onstat -g seg` output at all.
const EXPECTED: &str = "onstat -g seg output: the title `Segment Summary:`, the column header \
     `id key addr size ovhd class blkused blkfree`, a segment row \
     (`720914 52e44801 44000000 4390912 248812 R 1072 0`) or the `Total:` row";

/// Parses the output of `onstat -g seg`.
pub fn parse(text: &str) -> Result<OnstatGSeg, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatGSeg, onstat);

#[derive(Default)]
struct Body;

impl OnstatBody for Body {
    type Record = OnstatGSeg;
    const EXPECTED: &'static str = EXPECTED;

    fn line<'a>(&mut self, out: &mut OnstatGSeg, line: Line<'a>) -> Seen<'a> {
        let t = lex::trim_blanks(line.text);
        let miss = match segment(t) {
            Ok(s) => {
                out.segments.push(s);
                return Seen::Known;
            }
            Err(miss) => miss,
        };
        if t == "Segment Summary:"
            || t == "(* segment locked in memory)"
            || lex::starts_with_words(t, &["id", "key", "addr", "size", "ovhd", "class"])
        {
            return Seen::Known;
        }
        if let Some((size, used, free)) = total_row(t) {
            // A `Total:` row starts the summary of an output.
            out.summary = Some(SegmentSummary {
                total_size: Some(size),
                total_blkused: Some(used),
                total_blkfree: Some(free),
                ..SegmentSummary::default()
            });
            return Seen::Known;
        }
        if let Some(bytes) = reserve_line(t) {
            out.summary
                .get_or_insert_with(SegmentSummary::default)
                .low_memory_reserve = Some(bytes);
            return Seen::Known;
        }
        if let Some((times, max)) = reserve_used_line(t) {
            let s = out.summary.get_or_insert_with(SegmentSummary::default);
            s.low_memory_reserve_used = Some(times);
            s.low_memory_reserve_max_block = Some(max);
            return Seen::Known;
        }
        Seen::Miss(miss)
    }
}

/// The class letters with the `*` of a segment locked in memory, on either side (`R`, `VX`,
/// `R*`): (class, locked).
fn class_column(i: &str) -> PResult<'_, (&str, bool)> {
    let (i, before) = opt(char('*')).parse(i)?;
    let (i, class) = take_while_m_n(1, 3, |c: char| c.is_ascii_uppercase()).parse(i)?;
    let (i, after) = opt(char('*')).parse(i)?;
    Ok((i, (class, before.is_some() || after.is_some())))
}

/// One segment row: id, key (hex), addr (hex), size, ovhd, class (with its `*` glued, or
/// standing alone after it), blkused, blkfree.
fn segment(t: &str) -> Result<Segment, Miss<'_>> {
    let (i, id) = column(t, dec_u64, "a segment id (a number)")?;
    let (i, key) = column(i, hex_addr, "a key (hex)")?;
    let (i, addr) = column(i, hex_addr, "an address (hex)")?;
    let (i, size) = column(i, dec_u64, "a size (bytes)")?;
    let (i, ovhd) = column(i, dec_u64, "an overhead (bytes)")?;
    let (i, (class, mut locked)) = column(i, class_column, "a class (`R`, `V`, `VX`, `B`, `M`)")?;
    let i = match column(i, |i| tag("*").parse(i), "") {
        Ok((i, _)) => {
            locked = true;
            i
        }
        Err(_) => i,
    };
    let (i, blkused) = column(i, dec_u64, "blkused (a number)")?;
    let blkfree = last_column(i, dec_u64, "blkfree (a number) at the end of the row")?;
    Ok(Segment {
        id,
        key,
        addr,
        size,
        ovhd,
        class: class.to_string(),
        locked,
        blkused,
        blkfree,
    })
}

/// `Total:  -  -  285138944  -  -  60187  9427` → (size, blkused, blkfree).
fn total_row(t: &str) -> Option<(u64, u64, u64)> {
    let dash = |i| (tag("-"), lex::sp1).parse(i);
    let parsed: PResult<'_, _> = all_consuming((
        (tag("Total:"), lex::sp1, dash, dash),
        (dec_u64, lex::sp1, dash, dash),
        (dec_u64, lex::sp1, dec_u64),
    ))
    .parse(t);
    parsed
        .ok()
        .map(|(_, (_, (size, ..), (used, _, free)))| (size, used, free))
}

/// `Virtual segment low memory reserve (bytes):4194304`
fn reserve_line(t: &str) -> Option<u64> {
    let parsed: PResult<'_, _> = all_consuming((
        tag("Virtual segment low memory reserve (bytes):"),
        sp0,
        dec_u64,
    ))
    .parse(t);
    parsed.ok().map(|(_, (_, _, n))| n)
}

/// `Low memory reserve used 0 times and used maximum block size 0 bytes` → (times, bytes).
fn reserve_used_line(t: &str) -> Option<(u64, u64)> {
    let parsed: PResult<'_, _> = all_consuming((
        tag("Low memory reserve used"),
        lex::sp1,
        dec_u64,
        lex::sp1,
        tag("times and used maximum block size"),
        lex::sp1,
        dec_u64,
        lex::sp1,
        tag("bytes"),
    ))
    .parse(t);
    parsed
        .ok()
        .map(|(_, (_, _, times, _, _, _, max, _, _))| (times, max))
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_locked_segments() {
        let s = segment("753683    52e44802  44430000 131072000  769136  V    22573    9427")
            .expect("row");
        assert_eq!((s.class.as_str(), s.locked, s.blkfree), ("V", false, 9427));
        assert!(segment("1 2 3 4 5 R* 6 7").expect("glued").locked);
        assert!(segment("1 2 3 4 5 R * 6 7").expect("apart").locked);
        assert_eq!(segment("1 2 3 4 5 VX 6 7").expect("VX").class, "VX");
        assert!(segment("1 2 3 4 5 r 6 7").is_err());
        assert!(segment("1 2 3 4 5 R 6").is_err());
    }

    #[test]
    fn summary_lines() {
        assert_eq!(
            total_row("Total:    -          -       285138944 -        -    60187    9427"),
            Some((285_138_944, 60187, 9427))
        );
        assert_eq!(
            reserve_used_line(
                "Low memory reserve used 0 times and used maximum block size 0 bytes"
            ),
            Some((0, 0))
        );
    }
}
