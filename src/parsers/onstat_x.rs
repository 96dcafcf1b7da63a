//! `onstat -X`: buffers being accessed, per buffer pool, with their owner and waiting threads.

use super::header::Header;
use super::lex::{self, dec_u32, dec_u64, hex_addr, hex_u32, sp0, sp1, Line, PResult};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::Addr;
use nom::bytes::complete::{tag, take_while_m_n};
use nom::character::complete::char;
use nom::combinator::{all_consuming, map_res, opt};
use nom::Parser;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatX {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    pub pools: Vec<BufferPool>,
    pub unparsed: Vec<Unparsed>,
}

/// One `Buffer pool page size: N` section and its footer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BufferPool {
    /// Bytes. Builds with a single pool print no pool line: then it is the footer's buffer size
    /// (0 when the footer is missing too, as in a truncated capture).
    pub page_size: u32,
    pub buffers: Vec<Buffer>,
    pub modified: Option<u64>,
    pub total: Option<u64>,
    pub hash_buckets: Option<u64>,
    pub buffer_size: Option<u64>,
}

/// One buffer row. `owner`/`waiters` are rstcb addresses matching `onstat -u`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Buffer {
    pub address: Addr,
    /// `None` for 0; `ffffffffffffffff` is kept (it means "shared, no single owner").
    pub owner: Option<Addr>,
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
    /// `scount` (newer builds) or `sharers` (older builds).
    pub scount: Option<u32>,
    /// Every waiting thread; empty when the column is 0.
    pub waiters: Vec<Addr>,
}

/// What a caller is told when the input is not `onstat -X` output at all.
const EXPECTED: &str = "onstat -X output: the title `Buffers (Access)`, the column header \
     `address owner flags pagenum memaddr nslots pgflgs scount waiter`, \
     `Buffer pool page size: N`, a buffer row or the footer \
     `N modified, M total, H hash buckets, S buffer size`";

/// Which optional columns the rows have, read from the column header when there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    memaddr: bool,
    /// `scount` (newer builds) or `sharers` (older builds).
    count: bool,
}

impl Default for Layout {
    /// Today's layout, used when the header was cut off (`onstat -X | grep ...`).
    fn default() -> Self {
        Layout {
            memaddr: true,
            count: true,
        }
    }
}

/// Parses the output of `onstat -X`.
pub fn parse(text: &str) -> Result<OnstatX, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatX, onstat; pools);

#[derive(Default)]
struct Body {
    layout: Layout,
    /// The pool rows go to: its index in `out.pools` and whether its page size is known.
    open: Option<(usize, bool)>,
    /// Whether the line before was a buffer row or its continuation (so addresses may follow).
    after_row: bool,
}

impl OnstatBody for Body {
    type Record = OnstatX;
    const EXPECTED: &'static str = EXPECTED;

    fn blank(&mut self, _out: &mut OnstatX) {
        self.after_row = false;
    }

    fn line<'a>(&mut self, out: &mut OnstatX, line: Line<'a>) -> Seen<'a> {
        let miss = match buffer(line.text, self.layout) {
            Ok(b) => {
                let (idx, _) = *self.open.get_or_insert_with(|| {
                    out.pools.push(BufferPool::new(0));
                    (out.pools.len() - 1, false)
                });
                if let Some(pool) = out.pools.get_mut(idx) {
                    pool.buffers.push(b);
                }
                self.after_row = true;
                return Seen::Row;
            }
            Err(miss) => miss,
        };
        if self.after_row {
            if let Some(more) = waiter_continuation(line.text) {
                let last = self
                    .open
                    .and_then(|(idx, _)| out.pools.get_mut(idx))
                    .and_then(|p| p.buffers.last_mut());
                if let Some(b) = last {
                    b.waiters.extend(more);
                    return Seen::Row;
                }
            }
        }
        self.after_row = false;
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
                pool.total = Some(f.total);
                pool.hash_buckets = Some(f.hash_buckets);
                pool.buffer_size = Some(f.buffer_size);
            }
            Seen::Row
        } else if line.text.trim() == "Buffers (Access)" {
            Seen::Known
        } else if let Some(l) = column_header(line.text) {
            self.layout = l;
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
            total: None,
            hash_buckets: None,
            buffer_size: None,
        }
    }
}

/// `address owner flags pagenum memaddr nslots pgflgs scount waiter` (or `sharers`): the
/// optional columns it names.
fn column_header(text: &str) -> Option<Layout> {
    if !lex::starts_with_words(text, &["address", "owner", "flags", "pagenum"]) {
        return None;
    }
    let mut layout = Layout {
        memaddr: false,
        count: false,
    };
    let mut waiter = false;
    for w in lex::header_words(text) {
        match w {
            "memaddr" => layout.memaddr = true,
            "scount" | "sharers" => layout.count = true,
            "waiter" | "waiters" => waiter = true,
            _ => {}
        }
    }
    waiter.then_some(layout)
}

/// `Buffer pool page size: 2048`
fn pool_line(text: &str) -> Option<u32> {
    let parsed: PResult<'_, _> =
        all_consuming((sp0, tag("Buffer pool page size:"), sp0, dec_u32, sp0)).parse(text);
    parsed.ok().map(|(_, (_, _, _, n, _))| n)
}

/// The numbers of a pool footer.
struct Footer {
    modified: u64,
    total: u64,
    hash_buckets: u64,
    buffer_size: u64,
}

/// ` 47 modified, 3000000 total, 4194304 hash buckets, 2048 buffer size`
fn footer(text: &str) -> Option<Footer> {
    let parsed: PResult<'_, _> = all_consuming((
        (sp0, dec_u64, sp1, tag("modified,"), sp1),
        (dec_u64, sp1, tag("total,"), sp1),
        (dec_u64, sp1, tag("hash buckets,"), sp1),
        (dec_u64, sp1, tag("buffer size"), opt(char('.')), sp0),
    ))
    .parse(text);
    let (_, (m, t, h, b)) = parsed.ok()?;
    Some(Footer {
        modified: m.1,
        total: t.0,
        hash_buckets: h.0,
        buffer_size: b.0,
    })
}

/// A line holding nothing but hex addresses: more waiters of the buffer above.
fn waiter_continuation(text: &str) -> Option<Vec<Addr>> {
    let i = super::lex::trim_start_bytes(text, super::lex::is_blank_byte);
    if i.is_empty() {
        return None;
    }
    waiter_list(i).ok()
}

/// `chunk:page` in decimal (`25:1523486`) or packed hex (`100955`), as (chunk, page, packed).
/// (Shared with `onstat_b` and `onstat_t`, whose pagenum and physaddr columns print the same.)
#[inline]
pub(super) fn pagenum(i: &str) -> PResult<'_, (u32, u64, bool)> {
    if let Ok((rest, (chunk, _, page))) = (dec_u32, char(':'), dec_u64).parse(i) {
        return Ok((rest, (chunk, page, false)));
    }
    let (rest, v) = map_res(take_while_m_n(1, 16, lex::is_hex), |s: &str| {
        u64::from_str_radix(s, 16)
    })
    .parse(i)?;
    // Older builds pack the chunk into the bits above the 20-bit page number.
    let chunk = u32::try_from(v >> 20)
        .map_err(|_| nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::TooLarge)))?;
    Ok((rest, (chunk, v & 0xF_FFFF, true)))
}

/// Runs `p` on the column at `i` and then requires blanks (the next column follows).
#[inline]
fn column<'a, T>(
    i: &'a str,
    p: impl Fn(&'a str) -> PResult<'a, T>,
    needs: &'static str,
) -> Result<(&'a str, T), Miss<'a>> {
    // A token that does not end at a blank is not this column at all (`address` is no hex
    // number even though it starts with `add`): point at its start.
    let (rest, v) = p(i).map_err(|_| Miss::new(i, needs))?;
    let (rest, _) = sp1(rest).map_err(|_| Miss::new(i, needs))?;
    Ok((rest, v))
}

/// One buffer row: 8 or 9 columns, the last (`waiter`) holding 0 or one or more addresses.
fn buffer(text: &str, layout: Layout) -> Result<Buffer, Miss<'_>> {
    let i = super::lex::trim_start_bytes(text, super::lex::is_blank_byte);
    let (i, address) = column(i, hex_addr, "a hex buffer address")?;
    let (i, owner) = column(i, hex_addr, "an owner (hex rstcb address, 0 for none)")?;
    let (i, flags) = column(i, hex_u32, "buffer flags (hex)")?;
    let (i, (chunk, page, packed)) = column(
        i,
        pagenum,
        "a pagenum (`chunk:page`, or packed hex `100955`)",
    )?;
    let (i, memaddr) = if layout.memaddr {
        let (i, m) = column(i, hex_addr, "a memaddr (hex)")?;
        (i, Some(m))
    } else {
        (i, None)
    };
    let (i, nslots) = column(i, dec_u32, "nslots (a number)")?;
    let (i, pgflgs) = column(i, hex_u32, "page flags (hex)")?;
    let (i, scount) = if layout.count {
        let (i, n) = column(i, dec_u32, "scount (a number)")?;
        (i, Some(n))
    } else {
        (i, None)
    };
    let waiters = waiter_list(i)?;
    Ok(Buffer {
        address,
        owner: owner.non_zero(),
        flags,
        chunk,
        page,
        packed,
        memaddr,
        nslots,
        pgflgs,
        scount,
        waiters,
    })
}

/// The waiter column: `0`, or one or more rstcb addresses separated by blanks.
#[inline]
fn waiter_list(mut i: &str) -> Result<Vec<Addr>, Miss<'_>> {
    // Most buffers have no waiter: answer `0` without building anything.
    if i == "0" {
        return Ok(Vec::new());
    }
    let mut v = Vec::new();
    loop {
        const NEEDS: &str = "a waiter (hex rstcb address, 0 for none)";
        let (rest, a) = hex_addr(i).map_err(|_| Miss::new(i, NEEDS))?;
        if let Some(a) = a.non_zero() {
            v.push(a);
        }
        if rest.is_empty() {
            return Ok(v);
        }
        let (rest, _) = sp1(rest).map_err(|_| Miss::new(i, NEEDS))?;
        i = rest;
    }
}
