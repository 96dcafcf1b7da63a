//! `onstat -b` / `onstat -B`: buffers in use (or every buffer not on the free list), per buffer
//! pool, and the pool footers whose buffer size tells the base page size.

use super::header::Header;
use super::lex::{self, dec_u32, dec_u64, hex_addr, hex_u32, sp0, sp1, Line, PResult};
use super::onstat_x::pagenum;
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::Addr;
use nom::bytes::complete::tag;
use nom::character::complete::char;
use nom::combinator::{all_consuming, opt};
use nom::Parser;
use serde::Serialize;

/// The whole output of one `onstat -b` or `onstat -B`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatB {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    pub pools: Vec<BufferPool>,
    /// `.` lines: rows left out (by the publisher of a sample, or by a filter).
    pub elisions: usize,
    pub unparsed: Vec<Unparsed>,
}

/// One `Buffer pool page size: N` section and its footer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BufferPool {
    /// Bytes. Builds with a single pool print no pool line: then it is the footer's buffer size
    /// (0 when the footer is missing too).
    pub page_size: u32,
    pub buffers: Vec<Buffer>,
    pub modified: Option<u64>,
    /// `N resident,` in the footer of some builds (pages kept resident in the pool).
    pub resident: Option<u64>,
    pub total: Option<u64>,
    pub hash_buckets: Option<u64>,
    /// Bytes: the page size of this pool.
    pub buffer_size: Option<u64>,
}

/// One buffer row: `address userthread flgs pagenum memaddr nslots pgflgs xflgs owner waitlist`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Buffer {
    pub address: Addr,
    /// The most recent user thread (rstcb) to access the buffer; `None` for 0.
    pub userthread: Option<Addr>,
    #[serde(serialize_with = "crate::ids::hex_u32")]
    pub flags: u32,
    pub chunk: u32,
    /// In base pages, as onstat prints it (see DESIGN.md "Page units").
    pub page: u64,
    /// True when the pagenum was printed as packed hex (`100955`) rather than `chunk:page`.
    pub packed: bool,
    pub memaddr: Option<Addr>,
    pub nslots: u32,
    #[serde(serialize_with = "crate::ids::hex_u32")]
    pub pgflgs: u32,
    /// Access flags: 0x10 share lock, 0x80 exclusive lock.
    #[serde(serialize_with = "crate::ids::hex_u32")]
    pub xflgs: u32,
    /// The thread that set `xflgs`; `None` for 0, `ffffffffffffffff` kept (shared, no one owner).
    pub owner: Option<Addr>,
    /// The first waiting thread; `onstat -X` lists them all. `None` for 0.
    pub waitlist: Option<Addr>,
}

impl OnstatB {
    /// The base page size in KB: the buffer size of the pool with the smallest page size (the
    /// default pool's pages are base pages: 2 KB on Linux and most UNIX, 4 KB on AIX and Windows).
    /// `None` when no pool printed its footer.
    pub fn base_page_kb(&self) -> Option<u32> {
        let smallest = self
            .pools
            .iter()
            .filter_map(|p| {
                let size = p.buffer_size?;
                let key = if p.page_size > 0 {
                    u64::from(p.page_size)
                } else {
                    size
                };
                Some((key, size))
            })
            .min_by_key(|(key, _)| *key)?;
        u32::try_from(smallest.1 / 1024).ok().filter(|kb| *kb > 0)
    }
}

/// What a caller is told when the input is not `onstat -b`/`-B` output at all.
const EXPECTED: &str = "onstat -b/-B output: `Buffer pool page size: N`, the column header \
     `address userthread flgs pagenum memaddr nslots pgflgs xflgs owner waitlist`, a buffer row \
     or the footer `N modified, M total, H hash buckets, S buffer size`";

/// Parses the output of `onstat -b` or `onstat -B`.
pub fn parse(text: &str) -> Result<OnstatB, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatB, onstat);

struct Body {
    /// The column header said `memaddr` (newer builds print the buffer's memory address).
    memaddr: bool,
    /// The pool rows go to: its index in `out.pools` and whether its page size is known.
    open: Option<(usize, bool)>,
}

impl Default for Body {
    fn default() -> Self {
        Body {
            memaddr: true,
            open: None,
        }
    }
}

impl OnstatBody for Body {
    type Record = OnstatB;
    const EXPECTED: &'static str = EXPECTED;

    fn line<'a>(&mut self, out: &mut OnstatB, line: Line<'a>) -> Seen<'a> {
        let miss = match buffer(line.text, self.memaddr) {
            Ok(b) => {
                let (idx, _) = *self.open.get_or_insert_with(|| {
                    out.pools.push(BufferPool::new(0));
                    (out.pools.len() - 1, false)
                });
                if let Some(pool) = out.pools.get_mut(idx) {
                    pool.buffers.push(b);
                }
                return Seen::Row;
            }
            Err(miss) => miss,
        };
        if let Some(page_size) = pool_line(line.text) {
            out.pools.push(BufferPool::new(page_size));
            self.open = Some((out.pools.len() - 1, true));
            Seen::Row
        } else if let Some(f) = footer(line.text) {
            let (idx, known) = self.open.take().unwrap_or_else(|| {
                out.pools.push(BufferPool::new(0));
                (out.pools.len() - 1, false)
            });
            if let Some(pool) = out.pools.get_mut(idx) {
                if !known {
                    pool.page_size = u32::try_from(f.buffer_size).unwrap_or(0);
                }
                pool.modified = Some(f.modified);
                pool.resident = f.resident;
                pool.total = Some(f.total);
                pool.hash_buckets = Some(f.hash_buckets);
                pool.buffer_size = Some(f.buffer_size);
            }
            Seen::Row
        } else if is_elision(line.text) {
            out.elisions += 1;
            Seen::Skipped
        } else if line.text.trim() == "Buffers" {
            // The title older builds print above the column header.
            Seen::Known
        } else if let Some(m) = column_header(line.text) {
            self.memaddr = m;
            Seen::Known
        } else {
            Seen::Miss(miss)
        }
    }
}

impl BufferPool {
    fn new(page_size: u32) -> Self {
        BufferPool {
            page_size,
            buffers: Vec::new(),
            modified: None,
            resident: None,
            total: None,
            hash_buckets: None,
            buffer_size: None,
        }
    }
}

/// A line of dots only (`.`, `....`): rows the publisher of a sample left out. (Shared with the
/// `onstat_t` parser.)
pub(super) fn is_elision(text: &str) -> bool {
    let t = text.trim();
    !t.is_empty() && t.bytes().all(|b| b == b'.')
}

/// Runs `p` on the column at `i` and then requires blanks (the next column follows). A token
/// that does not end at a blank is not this column at all: the miss points at its start; a row
/// that ends right after this column misses the columns after it: the miss points at its end.
/// (Shared with the `onstat_d`, `onstat_t` and `onstat_g_ckp` parsers.)
#[inline]
pub(super) fn column<'a, T>(
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

/// The last column of a row: `p` must take everything that is left.
#[inline]
pub(super) fn last_column<'a, T>(
    i: &'a str,
    p: impl Fn(&'a str) -> PResult<'a, T>,
    needs: &'static str,
) -> Result<T, Miss<'a>> {
    match p(i) {
        Ok(("", v)) => Ok(v),
        _ => Err(Miss::new(i, needs)),
    }
}

/// `address userthread flgs pagenum memaddr nslots pgflgs xflgs owner waitlist`: whether it has
/// the `memaddr` column.
fn column_header(text: &str) -> Option<bool> {
    lex::starts_with_words(text, &["address", "userthread", "flgs", "pagenum"])
        .then(|| lex::header_words(text).any(|w| w == "memaddr"))
}

/// `Buffer pool page size: 4096`
fn pool_line(text: &str) -> Option<u32> {
    let parsed: PResult<'_, _> =
        all_consuming((sp0, tag("Buffer pool page size:"), sp0, dec_u32, sp0)).parse(text);
    parsed.ok().map(|(_, (_, _, _, n, _))| n)
}

/// The numbers of a pool footer.
struct Footer {
    modified: u64,
    resident: Option<u64>,
    total: u64,
    hash_buckets: u64,
    buffer_size: u64,
}

/// ` 25 modified, 50000 total, 65536 hash buckets, 4096 buffer size`, or with ` 23 resident,`
/// after the modified count and a final `.` (as the 12.10 manual prints it).
fn footer(text: &str) -> Option<Footer> {
    let parsed: PResult<'_, _> = all_consuming((
        (sp0, dec_u64, sp1, tag("modified,"), sp1),
        opt((dec_u64, sp1, tag("resident,"), sp1)),
        (dec_u64, sp1, tag("total,"), sp1),
        (dec_u64, sp1, tag("hash buckets,"), sp1),
        (dec_u64, sp1, tag("buffer size"), opt(char('.')), sp0),
    ))
    .parse(text);
    let (_, (m, r, t, h, b)) = parsed.ok()?;
    Some(Footer {
        modified: m.1,
        resident: r.map(|r| r.0),
        total: t.0,
        hash_buckets: h.0,
        buffer_size: b.0,
    })
}

/// One buffer row, 10 columns (9 in builds without `memaddr`).
fn buffer(text: &str, memaddr: bool) -> Result<Buffer, Miss<'_>> {
    let i = super::lex::trim_start_bytes(text, super::lex::is_blank_byte);
    let (i, address) = column(i, hex_addr, "a hex buffer address")?;
    let (i, userthread) = column(i, hex_addr, "a userthread (hex rstcb address, 0 for none)")?;
    let (i, flags) = column(i, hex_u32, "buffer flags (hex)")?;
    let (i, (chunk, page, packed)) = column(
        i,
        pagenum,
        "a pagenum (`chunk:page`, or packed hex `100955`)",
    )?;
    let (i, memaddr) = if memaddr {
        let (i, m) = column(i, hex_addr, "a memaddr (hex)")?;
        (i, Some(m))
    } else {
        (i, None)
    };
    let (i, nslots) = column(i, dec_u32, "nslots (a number)")?;
    let (i, pgflgs) = column(i, hex_u32, "page flags (hex)")?;
    let (i, xflgs) = column(i, hex_u32, "xflgs (hex)")?;
    let (i, owner) = column(i, hex_addr, "an owner (hex rstcb address, 0 for none)")?;
    let waitlist = last_column(
        i,
        hex_addr,
        "a waitlist (one hex rstcb address, 0 for none) at the end of the row",
    )?;
    Ok(Buffer {
        address,
        userthread: userthread.non_zero(),
        flags,
        chunk,
        page,
        packed,
        memaddr,
        nslots,
        pgflgs,
        xflgs,
        owner: owner.non_zero(),
        waitlist: waitlist.non_zero(),
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn footer_variants() {
        let f = footer(" 25 modified, 50000 total, 65536 hash buckets, 4096 buffer size")
            .expect("plain");
        assert_eq!(
            (
                f.modified,
                f.resident,
                f.total,
                f.hash_buckets,
                f.buffer_size
            ),
            (25, None, 50000, 65536, 4096)
        );
        let f =
            footer("123 modified, 23 resident, 2000 total, 2048 hash buckets, 2048 buffer size.")
                .expect("resident");
        assert_eq!((f.resident, f.total), (Some(23), 2000));
        assert!(footer("123 modified, 2000 total").is_none());
    }

    #[test]
    fn elisions() {
        assert!(is_elision("."));
        assert!(is_elision("  ....  "));
        assert!(!is_elision(""));
        assert!(!is_elision(". ."));
    }

    #[test]
    fn row_without_memaddr() {
        let b = buffer("a0b1c28 a4d9e68 807 100955 5 801 80 a4d9e68 a4d9248", false).expect("9");
        assert_eq!((b.chunk, b.page, b.packed), (1, 0x955, true));
        assert_eq!(b.memaddr, None);
        assert_eq!(b.waitlist, Some(Addr(0xa4d_9248)));
    }
}
