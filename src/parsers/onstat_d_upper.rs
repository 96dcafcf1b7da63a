//! `onstat -D`: the storage spaces, as `onstat -d` prints them, and per chunk the pages read and
//! written since the counters were last reset (the chunk I/O that `-d` does not show).

use super::header::Header;
use super::lex::{self, dec_u32, dec_u64, hex_addr, trim_blanks, Line};
use super::onstat_b::column;
use super::onstat_d::{dbspace, directories, external_dirs_title, footer, Dbspace};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::Addr;
use serde::Serialize;

/// The whole output of one `onstat -D`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatDUpper {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    /// The same rows as `onstat -d` prints.
    pub dbspaces: Vec<Dbspace>,
    pub dbspaces_active: Option<u64>,
    pub dbspaces_maximum: Option<u64>,
    pub chunks: Vec<ChunkIo>,
    pub chunks_active: Option<u64>,
    pub chunks_maximum: Option<u64>,
    /// `NOTE:` paragraphs, each joined into one line without `NOTE:`.
    pub notes: Vec<String>,
    /// `Expanded chunk capacity mode: disabled` → `disabled`.
    pub expanded_chunk_capacity: Option<String>,
    pub unparsed: Vec<Unparsed>,
    /// A `-D` chunk header or row was seen: the dbspace rows alone are `-d`'s too.
    #[serde(skip)]
    chunk_io_seen: bool,
    /// The first line not understood, the error when nothing says `-D`.
    #[serde(skip)]
    first_miss: Option<ParseError>,
}

/// One row of the `Chunks` section of `onstat -D`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChunkIo {
    pub address: Addr,
    pub chunk: u32,
    /// The number of the space the chunk belongs to (`Dbspace::number`).
    pub dbs: u32,
    /// Pages, in the space's page size.
    pub offset: u64,
    /// Pages read from the chunk (`page Rd`).
    pub page_rd: u64,
    /// Pages written to the chunk (`page Wr`).
    pub page_wr: u64,
    pub path: String,
}

impl OnstatDUpper {
    /// The space a chunk belongs to.
    pub fn dbspace_of_chunk(&self, chunk: u32) -> Option<&Dbspace> {
        let c = self.chunks.iter().find(|c| c.chunk == chunk)?;
        self.dbspaces.iter().find(|d| d.number == c.dbs)
    }
}

/// What a caller is told when the input is not `onstat -D` output at all.
const EXPECTED: &str = "onstat -D output: the titles `Dbspaces` and `Chunks`, the chunk header \
     `address chunk/dbs offset page Rd page Wr pathname`, a dbspace row \
     (`a40d7d8 1 0x1 1 1 2048 N informix rootdbs`), a chunk row \
     (`a40d928 1 1 0 0 0 /work/dbspaces/stardbs3`) or a footer `N active, M maximum`";

/// Parses the output of `onstat -D`. Its dbspaces section is `onstat -d`'s, so the input must
/// also have a `-D` chunk header or row unless every line was understood (dbspaces alone).
pub fn parse(text: &str) -> Result<OnstatDUpper, ParseError> {
    let out = super::drive::<Body>(text)?;
    match (&out.first_miss, out.chunk_io_seen) {
        (Some(miss), false) => Err(miss.clone()),
        _ => Ok(out),
    }
}

record!(OnstatDUpper, onstat);

/// Which section the lines belong to, so a footer goes to the right one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Section {
    #[default]
    None,
    Dbspaces,
    Chunks,
}

struct Body {
    with_pgsize: bool,
    section: Section,
    /// The last known line was a `NOTE:`: an indented line continues it.
    in_note: bool,
    /// The last lines listed an external sbspace's directories: more may follow.
    in_external_dirs: bool,
}

impl Default for Body {
    fn default() -> Self {
        Body {
            with_pgsize: true,
            section: Section::None,
            in_note: false,
            in_external_dirs: false,
        }
    }
}

impl OnstatBody for Body {
    type Record = OnstatDUpper;
    const EXPECTED: &'static str = EXPECTED;

    fn blank(&mut self, _out: &mut OnstatDUpper) {
        self.in_note = false;
        self.in_external_dirs = false;
    }

    fn line<'a>(&mut self, out: &mut OnstatDUpper, line: Line<'a>) -> Seen<'a> {
        let seen = self.read(out, line);
        if let Seen::Miss(miss) = seen {
            self.in_note = false;
            if out.first_miss.is_none() {
                out.first_miss = Some(miss.error(line, EXPECTED));
            }
        }
        seen
    }
}

impl Body {
    fn read<'a>(&mut self, out: &mut OnstatDUpper, line: Line<'a>) -> Seen<'a> {
        let text = line.text;
        let t = trim_blanks(text);
        if self.in_note && text.starts_with([' ', '\t']) {
            if let Some(note) = out.notes.last_mut() {
                note.push(' ');
                note.push_str(t);
                return Seen::Known;
            }
        }
        self.in_note = false;
        if std::mem::take(&mut self.in_external_dirs) {
            if let (Some(dirs), Some(d)) = (directories(text), out.dbspaces.last_mut()) {
                if !dirs.is_empty() {
                    d.external_dirs.extend(dirs);
                    self.in_external_dirs = true;
                    return Seen::Known;
                }
            }
        }
        if let Some(dirs) = external_dirs_title(t) {
            if let Some(d) = out.dbspaces.last_mut() {
                d.external_dirs.extend(dirs);
                self.in_external_dirs = true;
                return Seen::Known;
            }
        }
        let dbs_miss = match dbspace(text, self.with_pgsize) {
            Ok(d) => {
                out.dbspaces.push(d);
                self.section = Section::Dbspaces;
                return Seen::Known;
            }
            Err(miss) => miss,
        };
        let chunk_miss = match chunk_io(text) {
            Ok(c) => {
                out.chunks.push(c);
                out.chunk_io_seen = true;
                self.section = Section::Chunks;
                return Seen::Known;
            }
            Err(miss) => miss,
        };
        if t == "Dbspaces" {
            self.section = Section::Dbspaces;
        } else if t == "Chunks" {
            self.section = Section::Chunks;
        } else if lex::starts_with_words(text, &["address", "number", "flags", "fchunk"]) {
            self.with_pgsize = lex::header_words(text).any(|w| w == "pgsize");
            self.section = Section::Dbspaces;
        } else if lex::starts_with_words(text, &["address", "chunk/dbs"]) {
            if !is_chunk_io_header(text) {
                // `size free bpages flags`: the chunk header of `onstat -d`.
                return Seen::Miss(Miss::new(t, "the -D chunk header (`page Rd  page Wr`)"));
            }
            out.chunk_io_seen = true;
            self.section = Section::Chunks;
        } else if let Some((active, maximum)) = footer(text) {
            if self.section == Section::Chunks || out.dbspaces_active.is_some() {
                out.chunks_active = Some(active);
                out.chunks_maximum = Some(maximum);
            } else {
                out.dbspaces_active = Some(active);
                out.dbspaces_maximum = Some(maximum);
                self.section = Section::None;
            }
        } else if let Some(note) = t.strip_prefix("NOTE:") {
            out.notes.push(trim_blanks(note).to_string());
            self.in_note = true;
        } else if let Some(mode) = t.strip_prefix("Expanded chunk capacity mode:") {
            out.expanded_chunk_capacity = Some(trim_blanks(mode).to_string());
        } else if lex::offset_in(text, chunk_miss.at) > lex::offset_in(text, dbs_miss.at) {
            return Seen::Miss(chunk_miss);
        } else {
            return Seen::Miss(dbs_miss);
        }
        Seen::Known
    }
}

/// `address  chunk/dbs  offset  page Rd  page Wr  pathname`
fn is_chunk_io_header(text: &str) -> bool {
    lex::starts_with_words(
        text,
        &["address", "chunk/dbs", "offset", "page", "Rd", "page", "Wr"],
    )
}

/// One chunk row: `address chunk dbs offset page_rd page_wr pathname`. The pathname is one word
/// (chunk paths hold no blanks): a `-d` row (`size free [bpages] flags pathname`) leaves more
/// than one word there and is refused.
fn chunk_io(text: &str) -> Result<ChunkIo, Miss<'_>> {
    let i = lex::trim_start_bytes(text, lex::is_blank_byte);
    let (i, address) = column(i, hex_addr, "a hex address")?;
    let (i, chunk) = column(i, dec_u32, "a chunk number")?;
    let (i, dbs) = column(i, dec_u32, "a dbspace number")?;
    let (i, offset) = column(i, dec_u64, "an offset (pages)")?;
    let (i, page_rd) = column(i, dec_u64, "pages read (a number)")?;
    let (i, page_wr) = column(i, dec_u64, "pages written (a number)")?;
    if chunk == 0 || dbs == 0 {
        return Err(Miss::new(text, "chunk and dbspace numbers from 1"));
    }
    let path = trim_blanks(i);
    if !is_chunk_path(path) {
        return Err(Miss::new(i, "one pathname after the page counts"));
    }
    Ok(ChunkIo {
        address,
        chunk,
        dbs,
        offset,
        page_rd,
        page_wr,
        path: path.to_string(),
    })
}

/// A chunk's pathname as onspaces takes it, one word: full (`/dev/...`, `C:\ifmxdata\...`,
/// `\\.\PhysicalDrive1`) or relative to the directory the server started in (`./rootchunk`,
/// `chunks/dbs1`, as the 15.0 manual's sample prints them). Not a number (another table's
/// column) nor a flags word (`PO-B--`, an `onstat -d` row without its path).
fn is_chunk_path(path: &str) -> bool {
    let one_word = !path.is_empty() && !path.contains([' ', '\t']);
    let number = path.bytes().all(|b| b.is_ascii_digit());
    let flags = path.bytes().all(|b| b.is_ascii_uppercase() || b == b'-');
    one_word && !number && !flags
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn chunk_rows() {
        let c = chunk_io(
            "a40d928  1      1   0          0        0        /work/11.1/dbspaces/stardbs3",
        )
        .expect("row");
        assert_eq!((c.chunk, c.dbs, c.page_rd, c.page_wr), (1, 1, 0, 0));
        assert_eq!(c.path, "/work/11.1/dbspaces/stardbs3");
        // `onstat -d` rows: size, free and flags before the path.
        assert!(chunk_io("4484a268 1 1 0 100000 65632 PO-B-- /work3/AB/rootchunk").is_err());
        assert!(chunk_io("57b02028 6 6 0 500000 466272 466272 POSB-D /data/sbspace1").is_err());
        assert!(chunk_io("a4e8268 3 3 0 1000 ~938 250 POB--- /ix/blob").is_err());
        // An `onstat -g ses` sqscb row: no dbspace 0, no relative path.
        assert!(chunk_io("52fda4d0 53234018 0        0           0        0           1").is_err());
        // Relative to where the server started (the 15.0 manual's sample); never a number or
        // a flags word.
        assert_eq!(
            chunk_io("a40d928 1 1 0 0 0 chunks/c1")
                .expect("relative")
                .path,
            "chunks/c1"
        );
        assert!(chunk_io("a40d928 1 1 0 0 0 ./rootchunk").is_ok());
        assert!(chunk_io("a40d928 1 1 0 0 0 1234").is_err());
        assert!(chunk_io("a40d928 1 1 0 0 0 PO-B--").is_err());
        assert!(chunk_io("a40d928 1 1 0 0 0 C:\\IFMXDATA\\ol\\rootdbs.000").is_ok());
    }

    #[test]
    fn headers() {
        assert!(is_chunk_io_header(
            "address  chunk/dbs  offset     page Rd  page Wr  pathname"
        ));
        assert!(!is_chunk_io_header(
            "address          chunk/dbs     offset     size       free       bpages     flags pathname"
        ));
    }
}
