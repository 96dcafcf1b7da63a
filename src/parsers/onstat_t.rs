//! `onstat -t` / `onstat -T`: tblspaces (active ones, or all), their partnum and where on disk
//! their tblspace page lives.

use super::header::Header;
use super::lex::{self, dec_u32, dec_u64, hex_addr, hex_u32, sp0, sp1, Line, PResult};
use super::onstat_b::{column, is_elision, last_column};
use super::onstat_x::pagenum;
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::Addr;
use nom::bytes::complete::tag;
use nom::combinator::{all_consuming, opt};
use nom::Parser;
use serde::Serialize;

/// The whole output of one `onstat -t`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatT {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    pub tblspaces: Vec<Tblspace>,
    /// Footer `N active, M total` (`, K hash buckets` in older builds).
    pub active: Option<u64>,
    pub total: Option<u64>,
    pub hash_buckets: Option<u64>,
    /// `....` lines: rows left out (by the publisher of a sample, or by a filter).
    pub elisions: usize,
    pub unparsed: Vec<Unparsed>,
}

/// One row: `n address flgs ucnt tblnum physaddr npages nused npdata nrows nextns [resident]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tblspace {
    /// A counter of open tblspaces.
    pub n: u64,
    pub address: Addr,
    #[serde(serialize_with = "crate::ids::hex_u32")]
    pub flags: u32,
    /// User threads accessing the tblspace now.
    pub ucnt: u32,
    /// The partnum (`systables.partnum`, the `tblsnum` of `onstat -k`), printed in hex.
    #[serde(serialize_with = "crate::ids::hex_u32")]
    pub tblnum: u32,
    /// Where the tblspace's own page is: `chunk:page`, or packed hex in older builds.
    pub chunk: u32,
    pub page: u64,
    /// True when physaddr was printed as packed hex (`10000e`) rather than `chunk:page`.
    pub packed: bool,
    pub npages: u64,
    pub nused: u64,
    pub npdata: u64,
    pub nrows: u64,
    pub nextns: u64,
    /// Older builds: whether the tblspace is memory resident.
    pub resident: Option<u32>,
}

/// What a caller is told when the input is not `onstat -t` output at all.
const EXPECTED: &str = "onstat -t output: the title `Tblspaces`, the column header \
     `n address flgs ucnt tblnum physaddr npages nused npdata nrows nextns`, a tblspace row \
     (`62 a40dc70 0 1 100001 1:14 250 250 0 0 1`) or the footer `N active, M total`";

/// Parses the output of `onstat -t`.
pub fn parse(text: &str) -> Result<OnstatT, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatT, onstat);

#[derive(Default)]
struct Body;

impl OnstatBody for Body {
    type Record = OnstatT;
    const EXPECTED: &'static str = EXPECTED;

    fn line<'a>(&mut self, out: &mut OnstatT, line: Line<'a>) -> Seen<'a> {
        let miss = match tblspace(line.text) {
            Ok(t) => {
                out.tblspaces.push(t);
                return Seen::Row;
            }
            Err(miss) => miss,
        };
        if let Some((active, total, buckets)) = footer(line.text) {
            out.active = Some(active);
            out.total = Some(total);
            out.hash_buckets = buckets;
            // `N active, N total` alone ends `onstat -l`'s log list and `onstat -u` too.
            if buckets.is_some() {
                Seen::Known
            } else {
                Seen::Row
            }
        } else if line.text.trim() == "Tblspaces"
            || lex::starts_with_words(line.text, &["n", "address", "flgs", "ucnt", "tblnum"])
        {
            Seen::Known
        } else if is_elision(line.text) {
            out.elisions += 1;
            Seen::Skipped
        } else {
            Seen::Miss(miss)
        }
    }
}

/// ` 2 active, 221 total`, or ` 7 active, 200 total, 64 hash buckets`.
fn footer(text: &str) -> Option<(u64, u64, Option<u64>)> {
    let parsed: PResult<'_, _> = all_consuming((
        (sp0, dec_u64, sp1, tag("active,"), sp1),
        (dec_u64, sp1, tag("total")),
        opt((tag(","), sp1, dec_u64, sp1, tag("hash buckets"))),
        sp0,
    ))
    .parse(text);
    let (_, ((_, active, ..), (total, ..), buckets, _)) = parsed.ok()?;
    Some((active, total, buckets.map(|(_, _, b, _, _)| b)))
}

/// One tblspace row, read column by column; `n` may have overflowed its 2-character column so
/// that only one blank is left before the address (`195 ac843e0`). The `resident` column of older
/// builds is taken when the row has it.
fn tblspace(text: &str) -> Result<Tblspace, Miss<'_>> {
    let i = super::lex::trim_start_bytes(text, super::lex::is_blank_byte);
    let (i, n) = column(i, dec_u64, "n (a counter)")?;
    let (i, address) = column(i, hex_addr, "a hex tblspace address")?;
    let (i, flags) = column(i, hex_u32, "flgs (hex)")?;
    let (i, ucnt) = column(i, dec_u32, "ucnt (a number)")?;
    let (i, tblnum) = column(i, hex_u32, "a tblnum (hex partnum)")?;
    let (i, (chunk, page, packed)) = column(
        i,
        pagenum,
        "a physaddr (`chunk:page`, or packed hex `10000e`)",
    )?;
    let (i, npages) = column(i, dec_u64, "npages (a number)")?;
    let (i, nused) = column(i, dec_u64, "nused (a number)")?;
    let (i, npdata) = column(i, dec_u64, "npdata (a number)")?;
    let (i, nrows) = column(i, dec_u64, "nrows (a number)")?;
    let (nextns, resident) = match column(i, dec_u64, "") {
        Ok((rest, nextns)) => {
            let resident = last_column(rest, dec_u32, "resident (a number) at the end of the row")?;
            (nextns, Some(resident))
        }
        Err(_) => (
            last_column(i, dec_u64, "nextns (a number) at the end of the row")?,
            None,
        ),
    };
    Ok(Tblspace {
        n,
        address,
        flags,
        ucnt,
        tblnum,
        chunk,
        page,
        packed,
        npages,
        nused,
        npdata,
        nrows,
        nextns,
        resident,
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn overflowing_n_and_chunk_page() {
        let t = tblspace(
            "195 ac843e0  0    1    1000df   1:236            16     9      4      53     2",
        )
        .expect("row");
        assert_eq!(
            (t.n, t.address, t.tblnum),
            (195, Addr(0xac8_43e0), 0x10_00df)
        );
        assert_eq!((t.chunk, t.page, t.packed), (1, 236, false));
        assert_eq!(
            (t.npages, t.nused, t.npdata, t.nrows, t.nextns),
            (16, 9, 4, 53, 2)
        );
        assert_eq!(t.resident, None);
    }

    #[test]
    fn packed_physaddr_and_resident() {
        let t = tblspace(
            " 1 14a957c0 0    1    100001   10000e   350    350    0      0      3      0",
        )
        .expect("row");
        assert_eq!((t.chunk, t.page, t.packed), (1, 0xe, true));
        assert_eq!(t.resident, Some(0));
    }

    #[test]
    fn footer_variants() {
        assert_eq!(footer(" 2 active, 221 total"), Some((2, 221, None)));
        assert_eq!(
            footer(" 7 active, 200 total, 64 hash buckets"),
            Some((7, 200, Some(64)))
        );
        assert_eq!(footer("2 active"), None);
    }
}
