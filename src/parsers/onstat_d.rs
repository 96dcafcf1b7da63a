//! `onstat -d`: the storage spaces (dbspaces, blobspaces, sbspaces) and their chunks, which give
//! each chunk its page size.

use super::header::Header;
use super::lex::last_word;
use super::lex::{self, dec_u32, dec_u64, hex_addr, sp0, sp1, Line, PResult};
use super::onstat_b::column;
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::Addr;
use nom::bytes::complete::{tag, take_while_m_n};
use nom::character::complete::char;
use nom::combinator::{all_consuming, map_res, opt};
use nom::Parser;
use serde::Serialize;

/// The whole output of one `onstat -d`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatD {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    pub dbspaces: Vec<Dbspace>,
    /// The `Dbspaces` footer `N active, M maximum`.
    pub dbspaces_active: Option<u64>,
    pub dbspaces_maximum: Option<u64>,
    pub chunks: Vec<Chunk>,
    /// The `Chunks` footer `N active, M maximum`.
    pub chunks_active: Option<u64>,
    pub chunks_maximum: Option<u64>,
    /// `NOTE:` paragraphs (each joined into one line, without `NOTE:`) and the
    /// `Waiting for server to update BLOB chunk statistics ...` line of `onstat -d update`.
    pub notes: Vec<String>,
    /// `Expanded chunk capacity mode: always` → `always`.
    pub expanded_chunk_capacity: Option<String>,
    pub unparsed: Vec<Unparsed>,
}

/// One row of the `Dbspaces` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dbspace {
    pub address: Addr,
    pub number: u32,
    /// The hex flag word (`0x10020001`): 0x10 blobspace, 0x2000 temporary, 0x8000 sbspace, ...
    #[serde(serialize_with = "crate::ids::hex_u32")]
    pub flags: u32,
    pub fchunk: u32,
    pub nchunks: u32,
    /// Bytes; `None` in builds that print no `pgsize` column.
    pub pgsize: Option<u32>,
    /// The coded flags exactly as printed, inner blanks kept: `N  BAE`, `N SBA`, `N  B`.
    pub flag_codes: String,
    pub owner: String,
    pub name: String,
    /// `External SBLOBspace directories:` printed under an external sbspace.
    pub external_dirs: Vec<String>,
}

/// One row of the `Chunks` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Chunk {
    pub address: Addr,
    pub chunk: u32,
    /// The number of the space the chunk belongs to (`Dbspace::number`).
    pub dbs: u32,
    /// Pages, in the space's page size (see the `NOTE:`).
    pub offset: u64,
    pub size: u64,
    pub free: u64,
    /// `~` before the free count: approximate (blobspace chunks until `onstat -d update`).
    pub free_approx: bool,
    /// Blobpages (blobspaces) or user-data pages (sbspaces); empty for dbspace chunks.
    pub bpages: Option<u64>,
    /// `PO-B--`: primary/mirror, online/down/recovering/new, blob/sbspace, ...
    pub flags: String,
    pub pathname: String,
    /// The `Metadata size free bpages` line some versions print under an sbspace chunk.
    pub metadata: Option<ChunkArea>,
}

/// The metadata area of an sbspace chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ChunkArea {
    pub size: u64,
    pub free: u64,
    pub bpages: u64,
}

impl OnstatD {
    /// The space a chunk belongs to.
    pub fn dbspace_of_chunk(&self, chunk: u32) -> Option<&Dbspace> {
        let c = self.chunks.iter().find(|c| c.chunk == chunk)?;
        self.dbspaces.iter().find(|d| d.number == c.dbs)
    }

    /// A chunk's page size in KB, through its space's `pgsize`.
    pub fn chunk_page_kb(&self, chunk: u32) -> Option<u32> {
        let pgsize = self.dbspace_of_chunk(chunk)?.pgsize?;
        Some(pgsize / 1024).filter(|kb| *kb > 0)
    }
}

/// What a caller is told when the input is not `onstat -d` output at all.
const EXPECTED: &str = "onstat -d output: the titles `Dbspaces` and `Chunks`, their column \
     headers (`address number flags fchunk nchunks pgsize flags owner name`, \
     `address chunk/dbs offset size free bpages flags pathname`), a dbspace row \
     (`4484a028 1 0x10020001 1 1 2048 N  BAE informix rootdbs`), a chunk row \
     (`4484a268 1 1 0 100000 65632 PO-B-- /work3/AB/rootchunk`) or a footer `N active, M maximum`";

/// Which section the lines belong to, so a footer goes to the right one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Dbspaces,
    Chunks,
}

/// Parses the output of `onstat -d` (or `-D`).
pub fn parse(text: &str) -> Result<OnstatD, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatD, onstat);

struct Body {
    with_pgsize: bool,
    section: Option<Section>,
    /// What a line indented under the previous one continues, if anything.
    continues: Continues,
}

impl Default for Body {
    fn default() -> Self {
        Body {
            with_pgsize: true,
            section: None,
            continues: Continues::Nothing,
        }
    }
}

impl OnstatBody for Body {
    type Record = OnstatD;
    const EXPECTED: &'static str = EXPECTED;

    fn blank(&mut self, _out: &mut OnstatD) {
        self.continues = Continues::Nothing;
    }

    fn line<'a>(&mut self, out: &mut OnstatD, line: Line<'a>) -> Seen<'a> {
        // `onstat -D` prints the same dbspaces; its chunks have read and write counts instead.
        if lex::starts_with_words(line.text, &["address", "chunk/dbs", "offset", "page", "Rd"]) {
            return Seen::Foreign("onstat -D");
        }
        let dbs_miss = match dbspace(line.text, self.with_pgsize) {
            Ok(d) => {
                out.dbspaces.push(d);
                self.section = Some(Section::Dbspaces);
                self.continues = Continues::Nothing;
                return Seen::Row;
            }
            Err(miss) => miss,
        };
        let chunk_miss = match chunk(line.text) {
            Ok(c) => {
                out.chunks.push(c);
                self.section = Some(Section::Chunks);
                self.continues = Continues::Nothing;
                return Seen::Row;
            }
            Err(miss) => miss,
        };
        let known = known_line(line, out, &mut self.section, &mut self.with_pgsize);
        if known == Continues::Banner {
            // Every onstat command prints it.
            self.continues = Continues::Nothing;
            return Seen::Shared;
        }
        if known != Continues::Unknown {
            self.continues = known;
            return Seen::Known;
        }
        if continuation(line.text, self.continues, out) {
            return Seen::Skipped;
        }
        self.continues = Continues::Nothing;
        // Point at the row kind that got further into the line.
        if lex::offset_in(line.text, chunk_miss.at) > lex::offset_in(line.text, dbs_miss.at) {
            Seen::Miss(chunk_miss)
        } else {
            Seen::Miss(dbs_miss)
        }
    }
}

/// What an indented line after this one may continue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Continues {
    /// The line was not understood at all.
    Unknown,
    /// The banner, after a vendor's notice: read, but no evidence of `onstat -d`.
    Banner,
    Nothing,
    /// A `NOTE:` paragraph: indented lines are more of its text.
    Note,
    /// `External SBLOBspace directories:`: indented lines are more directories.
    ExternalDirs,
}

/// Titles, column headers, footers, metadata lines, notes, the banner after a vendor's notice,
/// `Expanded chunk capacity mode:`. Returns what indented lines after it continue, or
/// `Unknown` when the line is none of these.
fn known_line(
    line: Line<'_>,
    out: &mut OnstatD,
    section: &mut Option<Section>,
    with_pgsize: &mut bool,
) -> Continues {
    let t = line.text.trim();
    if t == "Dbspaces" {
        *section = Some(Section::Dbspaces);
    } else if t == "Chunks" {
        *section = Some(Section::Chunks);
    } else if lex::starts_with_words(line.text, &["address", "number", "flags", "fchunk"]) {
        *with_pgsize = lex::header_words(line.text).any(|w| w == "pgsize");
        *section = Some(Section::Dbspaces);
    } else if lex::starts_with_words(line.text, &["address", "chunk/dbs"]) {
        *section = Some(Section::Chunks);
    } else if let Some((active, maximum)) = footer(line.text) {
        // In the Chunks section, or after the Dbspaces footer was seen (rows without titles).
        let to_chunks = *section == Some(Section::Chunks) || out.dbspaces_active.is_some();
        if to_chunks {
            out.chunks_active = Some(active);
            out.chunks_maximum = Some(maximum);
        } else {
            out.dbspaces_active = Some(active);
            out.dbspaces_maximum = Some(maximum);
            *section = None;
        }
    } else if let Some(area) = metadata(line.text) {
        match out.chunks.last_mut() {
            Some(c) if c.metadata.is_none() => c.metadata = Some(area),
            _ => return Continues::Unknown,
        }
    } else if let Some(note) = t.strip_prefix("NOTE:") {
        out.notes.push(note.trim().to_string());
        return Continues::Note;
    } else if t.starts_with("Waiting for server to update BLOB chunk statistics") {
        out.notes.push(t.to_string());
    } else if let Some(mode) = t.strip_prefix("Expanded chunk capacity mode:") {
        out.expanded_chunk_capacity = Some(mode.trim().to_string());
    } else if let Some(dirs) = external_dirs_title(t) {
        match out.dbspaces.last_mut() {
            Some(d) => d.external_dirs.extend(dirs),
            None => return Continues::Unknown,
        }
        return Continues::ExternalDirs;
    } else if out.header.is_none() && out.dbspaces.is_empty() && out.chunks.is_empty() {
        // A vendor's notice can come before the banner (GBase: `Your evaluation license ...`);
        // the notice stays unparsed, the banner is still read.
        match super::header::banner(line) {
            Some(h) => out.header = Some(h),
            None => return Continues::Unknown,
        }
        return Continues::Banner;
    } else {
        return Continues::Unknown;
    }
    Continues::Nothing
}

/// `External SBLOBspace directories: /a /b` → the directories on that line (maybe none).
pub(super) fn external_dirs_title(t: &str) -> Option<Vec<String>> {
    let rest = t.strip_prefix("External SBLOBspace directories")?;
    let rest = rest.trim_start().strip_prefix(':')?;
    Some(directories(rest).unwrap_or_default())
}

/// A line continuing a list of external directories: paths alone, indented or not (a copy from
/// a mail loses the indent), one or several, maybe comma-separated. `None` when any word is not
/// a path: a dbspace or chunk row after the list is a row, never a directory.
pub(super) fn directories(text: &str) -> Option<Vec<String>> {
    text.split([' ', '\t', ','])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let path = w.starts_with('/')
                || w.starts_with("\\\\")
                || (w.len() > 2
                    && w.as_bytes()[1] == b':'
                    && w.as_bytes()[0].is_ascii_alphabetic());
            path.then(|| w.to_string())
        })
        .collect()
}

/// An indented line continuing a `NOTE:` paragraph, or a line continuing a list of external
/// directories.
fn continuation(text: &str, continues: Continues, out: &mut OnstatD) -> bool {
    if continues == Continues::ExternalDirs {
        return match (directories(text), out.dbspaces.last_mut()) {
            (Some(dirs), Some(d)) if !dirs.is_empty() => {
                d.external_dirs.extend(dirs);
                true
            }
            _ => false,
        };
    }
    if !text.starts_with([' ', '\t']) {
        return false;
    }
    let t = text.trim();
    match continues {
        Continues::Note => match out.notes.last_mut() {
            Some(note) => {
                if !note.is_empty() {
                    note.push(' ');
                }
                note.push_str(t);
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// ` 2 active, 2047 maximum`
pub(super) fn footer(text: &str) -> Option<(u64, u64)> {
    let parsed: PResult<'_, _> = all_consuming((
        sp0,
        dec_u64,
        sp1,
        tag("active,"),
        sp1,
        dec_u64,
        sp1,
        tag("maximum"),
        sp0,
    ))
    .parse(text);
    let (_, (_, active, _, _, _, maximum, _, _, _)) = parsed.ok()?;
    Some((active, maximum))
}

/// `                                 Metadata 650        479        650`
fn metadata(text: &str) -> Option<ChunkArea> {
    let parsed: PResult<'_, _> = all_consuming((
        sp0,
        tag("Metadata"),
        sp1,
        dec_u64,
        sp1,
        dec_u64,
        sp1,
        dec_u64,
        sp0,
    ))
    .parse(text);
    let (_, (_, _, _, size, _, free, _, bpages, _)) = parsed.ok()?;
    Some(ChunkArea { size, free, bpages })
}

/// `0x10020001`: the flag word, always printed with `0x`.
fn flag_word(i: &str) -> PResult<'_, u32> {
    let (i, _) = tag("0x").parse(i)?;
    map_res(take_while_m_n(1, 8, lex::is_hex), |s: &str| {
        u32::from_str_radix(s, 16)
    })
    .parse(i)
}

/// One dbspace row: `address number flags fchunk nchunks [pgsize] flags owner name`, the second
/// (coded) flags holding blanks of its own (`N  BAE`), so owner and name are taken from the right.
pub(super) fn dbspace(text: &str, with_pgsize: bool) -> Result<Dbspace, Miss<'_>> {
    let i = super::lex::trim_start_bytes(text, super::lex::is_blank_byte);
    let (i, address) = column(i, hex_addr, "a hex address")?;
    let (i, number) = column(i, dec_u32, "a space number")?;
    let (i, flags) = column(i, flag_word, "a dbspace flag word (`0x20001`)")?;
    let (i, fchunk) = column(i, dec_u32, "fchunk (a chunk number)")?;
    let (i, nchunks) = column(i, dec_u32, "nchunks (a number)")?;
    let (i, pgsize) = if with_pgsize {
        let (i, p) = column(i, dec_u32, "pgsize (bytes)")?;
        (i, Some(p))
    } else {
        (i, None)
    };
    let (rest, name) = last_word(i).ok_or(Miss::new(i, "the space name at the end of the row"))?;
    let (rest, owner) = last_word(rest).ok_or(Miss::new(rest, "an owner"))?;
    let flag_codes = super::lex::trim_blanks(rest);
    if flag_codes.is_empty() {
        return Err(Miss::new(
            i,
            "the coded flags (`N  BA`) before owner and name",
        ));
    }
    Ok(Dbspace {
        address,
        number,
        flags,
        fchunk,
        nchunks,
        pgsize,
        flag_codes: flag_codes.to_string(),
        owner: owner.to_string(),
        name: name.to_string(),
        external_dirs: Vec::new(),
    })
}

/// `free`, with a `~` when it is approximate.
fn free_pages(i: &str) -> PResult<'_, (u64, bool)> {
    let (i, approx) = opt(char('~')).parse(i)?;
    let (i, n) = dec_u64(i)?;
    Ok((i, (n, approx.is_some())))
}

/// One chunk row: `address chunk dbs offset size free [bpages] flags pathname`.
fn chunk(text: &str) -> Result<Chunk, Miss<'_>> {
    let i = super::lex::trim_start_bytes(text, super::lex::is_blank_byte);
    let (i, address) = column(i, hex_addr, "a hex address")?;
    let (i, chunk) = column(i, dec_u32, "a chunk number")?;
    let (i, dbs) = column(i, dec_u32, "a dbspace number")?;
    let (i, offset) = column(i, dec_u64, "an offset (pages)")?;
    let (i, size) = column(i, dec_u64, "a size (pages)")?;
    let (i, (free, free_approx)) = column(i, free_pages, "free pages (a number)")?;
    // bpages is empty for dbspace chunks: a number here is bpages, anything else the flags.
    let (i, bpages) = match column(i, dec_u64, "") {
        Ok((i, b)) => (i, Some(b)),
        Err(_) => (i, None),
    };
    let (i, flags) = column(i, lex::word, "chunk flags (`PO-B--`) and a pathname")?;
    let pathname = super::lex::trim_blanks(i);
    if pathname.is_empty() {
        return Err(Miss::new(i, "a pathname"));
    }
    Ok(Chunk {
        address,
        chunk,
        dbs,
        offset,
        size,
        free,
        free_approx,
        bpages,
        flags: flags.to_string(),
        pathname: pathname.to_string(),
        metadata: None,
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn dbspace_flags_with_inner_blanks() {
        let d = dbspace(
            "4484a028         1        0x10020001 1        1        2048     N  BAE   informix rootdbs",
            true,
        )
        .expect("row");
        assert_eq!((d.number, d.flags, d.pgsize), (1, 0x1002_0001, Some(2048)));
        assert_eq!(d.flag_codes, "N  BAE");
        assert_eq!((d.owner.as_str(), d.name.as_str()), ("informix", "rootdbs"));
    }

    #[test]
    fn chunk_rows_with_and_without_bpages() {
        let c = chunk("4484a268 1 1 0 100000 65632 PO-B-- /work3/AB/rootchunk").expect("row");
        assert_eq!(
            (c.chunk, c.dbs, c.size, c.free, c.bpages),
            (1, 1, 100000, 65632, None)
        );
        let c = chunk("57b02028 6 6 0 500000 466272 466272 POSB-D /data/sbspace1").expect("sb");
        assert_eq!(c.bpages, Some(466_272));
        assert_eq!(c.flags, "POSB-D");
        let c = chunk("a4e8268 3 3 0 1000 ~938 250 POB--- /ix/blob").expect("blob");
        assert!(c.free_approx);
        assert_eq!(c.free, 938);
    }

    #[test]
    fn rows_are_told_apart_by_structure() {
        assert!(dbspace(
            "4484a268 1 1 0 100000 65632 PO-B-- /work3/AB/rootchunk",
            true
        )
        .is_err());
        assert!(chunk("45ed5b30 2 0x20001 2 1 2048 N  BA informix space1").is_err());
    }
}
