//! `ifxtop resolve`: the successor of the seed's `chunkpg` script.
//!
//! `onstat -X | ifxtop resolve --extents pe.txt -k 4` prints each input line unchanged and, when
//! its page field resolves, a TAB and `OBJECT,DBSPACE` after it, as chunkpg does. Unlike chunkpg
//! it binary-searches a map built once (chunkpg scans a chunk's extents for every line), treats
//! extents as half-open (chunkpg's inclusive end also matches the next extent's first page),
//! knows which pages fall in FREE extents (a stale map) and resolves packed hex page numbers.

use crate::extents::{ExtentMap, Hit, Lookup};
use crate::parsers::oncheck_pe::ExtentKind;
use serde::Serialize;
use std::io::{self, BufRead, BufWriter, Write};
use std::process::ExitCode;

/// How to read and print lines; what `ifxtop resolve`'s flags say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolveOptions {
    /// 1-based field holding the page; `None`: the first `chunk:page`-looking field.
    pub field: Option<usize>,
    pub base_page_kb: u32,
    pub json: bool,
}

impl Default for ResolveOptions {
    fn default() -> Self {
        ResolveOptions {
            field: None,
            base_page_kb: 2,
            json: false,
        }
    }
}

/// What happened to the lines of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResolveStats {
    pub(crate) lines: u64,
    pub(crate) resolved: u64,
    /// Pages in FREE extents: the map is older than the data.
    pub(crate) free: u64,
    pub(crate) unmapped: u64,
    pub(crate) no_chunk: u64,
    /// Lines without a page field (headers, footers, a field that is not a page).
    pub(crate) no_page: u64,
}

/// A page reference found in a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PageRef {
    ChunkPage { chunk: u32, page: u64 },
    Packed(u64),
}

/// Reads lines from `input`, writes them annotated (or as JSON) to `output`, and flushes it.
/// Lines are bytes: a user name in a legacy code set passes through untouched.
pub fn resolve_lines(
    map: &ExtentMap,
    opts: &ResolveOptions,
    mut input: impl BufRead,
    mut output: impl Write,
) -> io::Result<ResolveStats> {
    let mut stats = ResolveStats::default();
    let mut buf = Vec::with_capacity(256);
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        stats.lines += 1;
        let (line, ending) = split_ending(&buf);
        let found = find_page(line, opts.field);
        let lookup = found.map(|(_, r)| match r {
            PageRef::ChunkPage { chunk, page } => map.lookup(chunk, page, opts.base_page_kb),
            PageRef::Packed(v) => map.lookup_packed(v, opts.base_page_kb),
        });
        match &lookup {
            None => stats.no_page += 1,
            Some(Lookup::Resolved(_)) => stats.resolved += 1,
            Some(Lookup::Free(_)) => stats.free += 1,
            Some(Lookup::Unmapped { .. }) => stats.unmapped += 1,
            Some(Lookup::NoChunk { .. }) => stats.no_chunk += 1,
        }
        if opts.json {
            let rec = JsonLine::new(line, found, lookup.as_ref());
            serde_json::to_writer(&mut output, &rec).map_err(io::Error::from)?;
            output.write_all(b"\n")?;
        } else {
            output.write_all(line)?;
            if let Some(Lookup::Resolved(hit)) = &lookup {
                output.write_all(b"\t")?;
                output.write_all(hit.object.description.as_bytes())?;
                output.write_all(b",")?;
                output.write_all(hit.dbspace.unwrap_or("").as_bytes())?;
            }
            output.write_all(ending)?;
        }
    }
    output.flush()?;
    Ok(stats)
}

/// `ifxtop resolve`: exit 0 when done (also when stdout was closed early), 1 when a file or
/// stream cannot be read or written, 2 when the extents file is not an `oncheck -pe` report.
pub fn run_cli(args: &crate::cli::ResolveArgs) -> ExitCode {
    let shown = args.extents.display();
    // A FIFO or a device is refused at once, a file past the cap is not read further.
    let text = match crate::files::read_text_capped(&args.extents, super::parse::CAPTURE_CAP) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("ifxtop resolve: cannot read {shown}: {e}");
            return ExitCode::from(1);
        }
    };
    let map = match ExtentMap::from_oncheck_pe(&text) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("ifxtop resolve: {shown} is not oncheck -pe output: {e}");
            return ExitCode::from(2);
        }
    };
    drop(text);
    if map.extent_count() == 0 {
        eprintln!(
            "ifxtop resolve: warning: {shown} lists no extents (an abridged report?); \
             no page will resolve"
        );
    }
    let opts = ResolveOptions {
        field: args.key.map(|k| k as usize),
        base_page_kb: args.base_page_kb,
        json: args.json,
    };
    let stdin = io::stdin().lock();
    let stdout = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    match resolve_lines(&map, &opts, stdin, stdout) {
        Ok(stats) => {
            if stats.free > 0 {
                eprintln!(
                    "ifxtop resolve: {} page(s) fell in FREE extents: {shown} is older than the \
                     data; run oncheck -pe again",
                    stats.free
                );
            }
            ExitCode::SUCCESS
        }
        // `| head` closed the pipe: nothing left to say.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ifxtop resolve: {e}");
            ExitCode::from(1)
        }
    }
}

/// Splits a line from its `\n` or `\r\n` ending (empty for a last line without one).
fn split_ending(buf: &[u8]) -> (&[u8], &[u8]) {
    let mut cut = buf.len();
    if buf.last() == Some(&b'\n') {
        cut -= 1;
        if cut > 0 && buf.get(cut - 1) == Some(&b'\r') {
            cut -= 1;
        }
    }
    buf.split_at(cut)
}

fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&b| b == b' ' || b == b'\t')
        .filter(|f| !f.is_empty())
}

/// The 1-based field number and page of `field`, or of the first `chunk:page` field.
fn find_page(line: &[u8], field: Option<usize>) -> Option<(usize, PageRef)> {
    match field {
        Some(k) => {
            let f = fields(line).nth(k.checked_sub(1)?)?;
            chunk_page(f).or_else(|| packed(f)).map(|r| (k, r))
        }
        None => fields(line)
            .enumerate()
            .find_map(|(i, f)| chunk_page(f).map(|r| (i + 1, r))),
    }
}

/// `25:1523486`: decimal chunk, colon, decimal page, nothing else.
fn chunk_page(f: &[u8]) -> Option<PageRef> {
    let colon = f.iter().position(|&b| b == b':')?;
    let (c, p) = (f.get(..colon)?, f.get(colon + 1..)?);
    Some(PageRef::ChunkPage {
        chunk: std::str::from_utf8(c)
            .ok()
            .filter(|s| all_digits(s))?
            .parse()
            .ok()?,
        page: std::str::from_utf8(p)
            .ok()
            .filter(|s| all_digits(s))?
            .parse()
            .ok()?,
    })
}

/// `100955` or `0x100955`: a packed page number (chunk in the bits above 20).
fn packed(f: &[u8]) -> Option<PageRef> {
    let s = std::str::from_utf8(f).ok()?;
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if s.is_empty() || s.len() > 16 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(s, 16).ok().map(PageRef::Packed)
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// One `--json` output line.
#[derive(Serialize)]
struct JsonLine<'a> {
    line: std::borrow::Cow<'a, str>,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    chunk: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    page: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    packed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    page_in_chunk: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    object: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dbspace: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<ExtentKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    database: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    owner: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extent_offset: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extent_size: Option<u64>,
}

impl<'a> JsonLine<'a> {
    fn new(line: &'a [u8], found: Option<(usize, PageRef)>, lookup: Option<&Lookup<'a>>) -> Self {
        let mut rec = JsonLine {
            line: String::from_utf8_lossy(line),
            status: "no_page",
            field: None,
            chunk: None,
            page: None,
            packed: None,
            page_in_chunk: None,
            object: None,
            dbspace: None,
            kind: None,
            database: None,
            owner: None,
            name: None,
            extent_offset: None,
            extent_size: None,
        };
        if let Some((field, r)) = found {
            rec.field = Some(field);
            match r {
                PageRef::ChunkPage { chunk, page } => {
                    rec.chunk = Some(chunk);
                    rec.page = Some(page);
                }
                PageRef::Packed(v) => {
                    rec.packed = Some(format!("{v:x}"));
                    rec.chunk = u32::try_from(v >> 20).ok();
                    rec.page = Some(v & 0xF_FFFF);
                }
            }
        }
        match lookup {
            None => {}
            Some(Lookup::Resolved(hit)) => {
                rec.status = "resolved";
                rec.hit(hit);
            }
            Some(Lookup::Free(hit)) => {
                rec.status = "free";
                rec.hit(hit);
            }
            Some(Lookup::Unmapped {
                chunk,
                page_in_chunk,
            }) => {
                rec.status = "unmapped";
                rec.page_in_chunk = Some(*page_in_chunk);
                rec.chunk = Some(chunk.number);
            }
            Some(Lookup::NoChunk { .. }) => rec.status = "no_chunk",
        }
        rec
    }

    fn hit(&mut self, hit: &Hit<'a>) {
        let o = hit.object;
        self.page_in_chunk = Some(hit.page_in_chunk);
        self.object = Some(o.description.as_str());
        self.dbspace = hit.dbspace;
        self.kind = Some(o.kind);
        self.database = o.database.as_deref();
        self.owner = o.owner.as_deref();
        self.name = o.name.as_deref();
        self.extent_offset = Some(hit.extent_offset);
        self.extent_size = Some(hit.extent_size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_found_by_field_or_by_shape() {
        let l = b"2443cd7e8 ffffffffffffffff 80 25:1523486 cce17b000 101 2801 0 0";
        let cp = PageRef::ChunkPage {
            chunk: 25,
            page: 1523486,
        };
        assert_eq!(find_page(l, None), Some((4, cp)));
        assert_eq!(find_page(l, Some(4)), Some((4, cp)));
        // Field 5 is hex: with -k it is taken as a packed page number.
        assert_eq!(
            find_page(l, Some(5)),
            Some((5, PageRef::Packed(0xcce17b000)))
        );
        assert_eq!(find_page(l, Some(40)), None);
        assert_eq!(find_page(b"Buffer pool page size: 2048", None), None);
        assert_eq!(find_page(b"10:31:00 x", None), None);
        assert_eq!(split_ending(b"a\r\n"), (&b"a"[..], &b"\r\n"[..]));
        assert_eq!(split_ending(b"a"), (&b"a"[..], &b""[..]));
    }
}
