//! `oncheck -pe`: the chunk and extent report. Per dbspace, per chunk, the (object, offset, size)
//! extents. The source of the extent map that turns `chunk:page` into table and index names.
//!
//! There is ONE parser: [`visit`], a streaming pass that hands borrowed [`PeEvent`]s to a
//! callback. [`parse`] collects them into owned records (for `ifxtop parse` and tests);
//! `model::extents::ExtentMap` indexes them without allocating per extent.
//!
//! Layouts met in real samples (tests/fixtures/oncheck-pe/SOURCES.md):
//! - newer: ` Chunk Pathname  Pagesize(k)  Size(p)  Used(p)  Free(p)` and
//!   ` Description  Offset(p)  Size(p)`, one-blank indentation;
//! - older: `Chunk Pathname  Size  Used  Free` and `Description  Offset  Size`, rows indented by
//!   0 or 4 blanks, `DBSpace` spelled with a capital S;
//! - sbspace chunks print `see below` for Used/Free and end with `Total SBLOBSpace ...: N` lines;
//! - reports abridged by their publisher keep only `Chunk Pathname` and the chunk number + path.

use super::lex::{self, Line};
use super::Unparsed;
use crate::error::ParseError;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OncheckPe {
    /// Every `DBspace Usage Report:` line, in order (sbspaces and blobspaces too).
    pub dbspaces: Vec<PeDbspace>,
    pub chunks: Vec<PeChunk>,
    pub unparsed: Vec<Unparsed>,
}

/// `DBspace Usage Report: NAME  Owner: X  Created: DATE` (owner and date absent when abridged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeDbspace {
    pub name: String,
    pub owner: Option<String>,
    pub created: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeChunk {
    pub chunk: u32,
    /// From the `DBspace Usage Report: NAME` line above it; `None` when no such line was seen.
    pub dbspace: Option<String>,
    pub path: String,
    /// `Pagesize(k)`; `None` in the old layout (`Chunk Pathname Size Used Free`).
    pub page_size_kb: Option<u32>,
    pub size: Option<u64>,
    pub used: Option<u64>,
    /// `None` for sbspace chunks (`see below`) and abridged reports.
    pub free: Option<u64>,
    pub extents: Vec<PeExtent>,
    /// `Total Used:`, `Total Free:`, `Total SBLOBSpace FREE META DATA:` ... after the extents.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub totals: Vec<PeTotal>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeExtent {
    pub kind: ExtentKind,
    pub description: String,
    /// In the chunk's own page size.
    pub offset: u64,
    pub size: u64,
    /// For `db:'owner'.name` objects (tables, indexes, fragments, TBLSpace).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `Total LABEL: N` under a chunk's extents (`label` is what stands between `Total` and `:`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeTotal {
    pub label: String,
    pub value: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtentKind {
    /// `RESERVED PAGES`
    Reserved,
    /// `CHUNK FREELIST PAGE`
    Freelist,
    /// `dbs:'owner'.TBLSpace`
    Tblspace,
    /// `db:'owner'.table` (tables, indexes, fragments)
    Object,
    /// `SBLOBSpace LO [2,2,1]`
    Sblob,
    /// `FREE`
    Free,
    /// `PHYSICAL LOG`, `LOGICAL LOG: Log file 1`, metadata, ...
    Other,
}

/// One thing the streaming pass recognised. Everything borrows from the input text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeEvent<'a> {
    /// `DBspace Usage Report: NAME ...`: the chunks that follow belong to it.
    Dbspace {
        line: usize,
        name: &'a str,
        owner: Option<&'a str>,
        created: Option<&'a str>,
    },
    /// The row under a `Chunk Pathname ...` header: the extents that follow belong to it.
    Chunk(PeChunkRow<'a>),
    /// One extent row of the current chunk. `description` is trimmed; classify it with
    /// [`classify`] and [`split_object`].
    Extent {
        line: usize,
        description: &'a str,
        offset: u64,
        size: u64,
    },
    /// `Total LABEL: N` after the current chunk's extents.
    Total {
        line: usize,
        label: &'a str,
        value: u64,
    },
    /// A line not understood (publisher's `...` elisions, rows with no chunk above them, ...).
    Unparsed(Line<'a>),
}

/// A chunk row, e.g. `     3 /data/x   16   1000   53   947` (numbers per the header's columns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeChunkRow<'a> {
    pub(crate) line: usize,
    pub(crate) chunk: u32,
    pub(crate) path: &'a str,
    pub(crate) page_size_kb: Option<u32>,
    pub(crate) size: Option<u64>,
    pub(crate) used: Option<u64>,
    pub(crate) free: Option<u64>,
}

/// `db:'owner'.name` split in three. `name` is everything after the `.`: index names, fragment
/// and partition names can hold `#`, dots or blanks (system-generated index names start with
/// a blank, e.g. ` 101_1`), so it is not split further.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ObjectName<'a> {
    pub(crate) database: &'a str,
    pub(crate) owner: &'a str,
    pub(crate) name: &'a str,
}

/// What the report's column header promised for the chunk row below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    PageSize,
    Size,
    Used,
    Free,
    Other,
}

/// Chunk headers have at most 4 numeric columns today; 8 leaves room for a future one.
const MAX_COLUMNS: usize = 8;

#[derive(Debug, Clone, Copy)]
struct ChunkLayout {
    columns: [Column; MAX_COLUMNS],
    len: usize,
}

const WHAT_IT_LOOKS_LIKE: &str = "an oncheck -pe report (a `DBspace Usage Report: NAME` line, a \
     ` Chunk Pathname  Pagesize(k)  Size(p)  Used(p)  Free(p)` header or a \
     ` Description  Offset(p)  Size(p)` header)";

/// Streams `text` through the parser, calling `f` for each recognised line and each line it did
/// not understand. Column headers, rules and blank lines produce no event.
///
/// Fails (after the pass) when no line of the input is an oncheck -pe title or header, naming the
/// first non-blank line.
pub fn visit<'a>(text: &'a str, mut f: impl FnMut(PeEvent<'a>)) -> Result<(), ParseError> {
    let mut recognised = false;
    let mut first_line: Option<Line<'a>> = None;
    // Column layout of a `Chunk Pathname` header whose row has not come yet.
    let mut pending_chunk: Option<ChunkLayout> = None;
    // Extent and total rows only belong somewhere once a chunk row has been read.
    let mut have_chunk = false;
    // After a `Description Offset Size` header: rows ending in two numbers are extents.
    let mut in_extents = false;

    let mut rows = lex::lines(text);
    lex::skip_prompt_line(&mut rows, &["oncheck"]);
    for line in rows {
        let t = line.text.trim_start_matches(lex::is_blank);
        if t.is_empty() {
            continue;
        }
        if first_line.is_none() {
            first_line = Some(line);
        }
        // The hot path: a million extent rows against a handful of everything else.
        if in_extents && have_chunk {
            if let Some((description, offset, size)) = extent_row(t) {
                f(PeEvent::Extent {
                    line: line.no,
                    description,
                    offset,
                    size,
                });
                continue;
            }
        }
        if let Some(layout) = pending_chunk.take() {
            if let Some(row) = chunk_row(line.no, t, &layout) {
                have_chunk = true;
                f(PeEvent::Chunk(row));
                continue;
            }
            // Not a chunk row: fall through, the header stays without a chunk.
        }
        if let Some((label, value)) = total_row(t) {
            if have_chunk {
                f(PeEvent::Total {
                    line: line.no,
                    label,
                    value,
                });
            } else {
                f(PeEvent::Unparsed(line));
            }
            continue;
        }
        if let Some((name, owner, created)) = usage_report(t) {
            recognised = true;
            have_chunk = false;
            in_extents = false;
            f(PeEvent::Dbspace {
                line: line.no,
                name,
                owner,
                created,
            });
            continue;
        }
        if let Some(layout) = chunk_header(t) {
            recognised = true;
            have_chunk = false;
            in_extents = false;
            pending_chunk = Some(layout);
            continue;
        }
        if is_description_header(t) {
            recognised = true;
            in_extents = true;
            continue;
        }
        if in_extents && lex::is_rule(t) {
            continue;
        }
        f(PeEvent::Unparsed(line));
    }
    if recognised {
        return Ok(());
    }
    Err(match first_line {
        None => ParseError::empty(WHAT_IT_LOOKS_LIKE),
        Some(l) => l.error_at(l.text, WHAT_IT_LOOKS_LIKE),
    })
}

/// Parses a whole report into owned records (for `ifxtop parse` and tests; the extent map is
/// built without these allocations).
pub fn parse(text: &str) -> Result<OncheckPe, ParseError> {
    let mut out = OncheckPe::default();
    let mut dbspace: Option<String> = None;
    visit(text, |ev| match ev {
        PeEvent::Dbspace {
            name,
            owner,
            created,
            ..
        } => {
            dbspace = Some(name.to_string());
            out.dbspaces.push(PeDbspace {
                name: name.to_string(),
                owner: owner.map(str::to_string),
                created: created.map(str::to_string),
            });
        }
        PeEvent::Chunk(row) => out.chunks.push(PeChunk {
            chunk: row.chunk,
            dbspace: dbspace.clone(),
            path: row.path.to_string(),
            page_size_kb: row.page_size_kb,
            size: row.size,
            used: row.used,
            free: row.free,
            extents: Vec::new(),
            totals: Vec::new(),
        }),
        PeEvent::Extent {
            description,
            offset,
            size,
            ..
        } => {
            let obj = split_object(description);
            // `visit` only reports extents once a chunk row was seen.
            if let Some(c) = out.chunks.last_mut() {
                c.extents.push(PeExtent {
                    kind: classify(description),
                    description: description.to_string(),
                    offset,
                    size,
                    database: obj.map(|o| o.database.to_string()),
                    owner: obj.map(|o| o.owner.to_string()),
                    name: obj.map(|o| o.name.to_string()),
                });
            }
        }
        PeEvent::Total { label, value, .. } => {
            if let Some(c) = out.chunks.last_mut() {
                c.totals.push(PeTotal {
                    label: label.to_string(),
                    value,
                });
            }
        }
        PeEvent::Unparsed(line) => Unparsed::keep(&mut out.unparsed, line),
    })?;
    Ok(out)
}

/// What an extent's description names. Case matters: oncheck prints these words in capitals.
pub(crate) fn classify(description: &str) -> ExtentKind {
    match description {
        "FREE" => return ExtentKind::Free,
        "RESERVED PAGES" => return ExtentKind::Reserved,
        "CHUNK FREELIST PAGE" => return ExtentKind::Freelist,
        _ => {}
    }
    if let Some(o) = split_object(description) {
        return if o.name == "TBLSpace" {
            ExtentKind::Tblspace
        } else {
            ExtentKind::Object
        };
    }
    if description.starts_with("SBLOBSpace LO [") {
        return ExtentKind::Sblob;
    }
    ExtentKind::Other
}

/// Splits `db:'owner'.name` (or the unquoted `db:owner.name` of old tbcheck builds). The database
/// is one word; `LOGICAL LOG: Log file 1` has a blank before its colon and is not an object.
pub(crate) fn split_object(description: &str) -> Option<ObjectName<'_>> {
    let (database, rest) = description.split_once(':')?;
    if database.is_empty() || database.contains(lex::is_blank) {
        return None;
    }
    let (owner, name) = if let Some(quoted) = rest.strip_prefix('\'') {
        quoted.split_once("'.")?
    } else {
        rest.split_once('.')?
    };
    if owner.is_empty() || owner.contains(lex::is_blank) || name.is_empty() {
        return None;
    }
    Some(ObjectName {
        database,
        owner,
        name,
    })
}

/// `DESCRIPTION  OFFSET  SIZE`: the two trailing numbers, each after at least one blank (the
/// description holds blanks of its own). Hand-written over bytes, not nom: this runs once per
/// extent and the map's budget is 500 MB/s. `t` has no leading or trailing blanks.
fn extent_row(t: &str) -> Option<(&str, u64, u64)> {
    let (rest, size) = last_number(t)?;
    let (rest, offset) = last_number(rest)?;
    if rest.is_empty() {
        return None;
    }
    Some((rest, offset, size))
}

/// Splits `...text<blanks>123` into (`...text`, 123). `None` when `s` does not end in a number
/// preceded by a blank, or the number does not fit in 64 bits. Works on bytes: the digits and
/// blanks it steps over are ASCII, so every cut is a char boundary.
#[inline]
fn last_number(s: &str) -> Option<(&str, u64)> {
    let b = s.as_bytes();
    let end = b.len();
    let mut i = end;
    while let Some(&c) = i.checked_sub(1).and_then(|k| b.get(k)) {
        if !c.is_ascii_digit() {
            break;
        }
        i -= 1;
    }
    if i == end {
        return None;
    }
    let mut value: u64 = 0;
    for &d in b.get(i..)? {
        value = value.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    let mut j = i;
    while let Some(&c) = j.checked_sub(1).and_then(|k| b.get(k)) {
        if c != b' ' && c != b'\t' {
            break;
        }
        j -= 1;
    }
    if j == i {
        return None;
    }
    Some((s.get(..j)?, value))
}

/// `Total Used:    53`, `Total SBLOBSpace FREE META DATA: 60`.
fn total_row(t: &str) -> Option<(&str, u64)> {
    let rest = t.strip_prefix("Total ")?;
    let (label, value) = rest.rsplit_once(':')?;
    let value = value.trim_start_matches(lex::is_blank);
    let (tail, n) = lex::dec_u64(value).ok()?;
    if !tail.is_empty() || label.trim().is_empty() {
        return None;
    }
    Some((label.trim(), n))
}

/// `DBspace Usage Report: NAME  Owner: X  Created: DATE`; `DBSpace`, `SBLOBspace` ... too: any
/// first word ending in `space`, so a kind of space we have not met still starts a new section.
fn usage_report(t: &str) -> Option<(&str, Option<&str>, Option<&str>)> {
    let mut words = lex::header_words(t);
    let kind = words.next()?;
    let ends_in_space = kind
        .len()
        .checked_sub(5)
        .and_then(|at| kind.get(at..))
        .is_some_and(|tail| tail.eq_ignore_ascii_case("space"));
    if !ends_in_space || words.next()? != "Usage" || words.next()? != "Report:" {
        return None;
    }
    let name = words.next()?;
    let mut owner = None;
    let mut created = None;
    while let Some(w) = words.next() {
        match w {
            "Owner:" => owner = words.next(),
            "Created:" => {
                // The rest of the line, blanks kept as printed (a date today).
                let at = lex::offset_in(t, w) + w.len();
                created = t.get(at..).map(str::trim).filter(|s| !s.is_empty());
                break;
            }
            _ => {}
        }
    }
    Some((name, owner, created))
}

/// `Chunk Pathname` followed by its numeric columns (none in abridged reports).
fn chunk_header(t: &str) -> Option<ChunkLayout> {
    let mut words = lex::header_words(t);
    if words.next()? != "Chunk" || words.next()? != "Pathname" {
        return None;
    }
    let mut layout = ChunkLayout {
        columns: [Column::Other; MAX_COLUMNS],
        len: 0,
    };
    for w in words {
        let col = match w {
            "Pagesize(k)" | "Pagesize" => Column::PageSize,
            "Size(p)" | "Size" => Column::Size,
            "Used(p)" | "Used" => Column::Used,
            "Free(p)" | "Free" => Column::Free,
            _ => Column::Other,
        };
        *layout.columns.get_mut(layout.len)? = col;
        layout.len += 1;
    }
    Some(layout)
}

/// `Description  Offset(p)  Size(p)` or `Description  Offset  Size`.
fn is_description_header(t: &str) -> bool {
    let mut w = lex::header_words(t);
    w.next() == Some("Description")
        && matches!(w.next(), Some("Offset(p)" | "Offset"))
        && matches!(w.next(), Some("Size(p)" | "Size"))
        && w.next().is_none()
}

/// The row under a chunk header: chunk number, path, then the header's columns read from the
/// right (the path may hold blanks). `see below` stands for a number in sbspace rows.
fn chunk_row<'a>(no: usize, t: &'a str, layout: &ChunkLayout) -> Option<PeChunkRow<'a>> {
    let (rest, chunk) = lex::dec_u32(t).ok()?;
    let mut rest = rest
        .strip_prefix(lex::is_blank)?
        .trim_start_matches(lex::is_blank);
    let mut row = PeChunkRow {
        line: no,
        chunk,
        path: "",
        page_size_kb: None,
        size: None,
        used: None,
        free: None,
    };
    for col in layout.columns.get(..layout.len)?.iter().rev() {
        let value = if let Some(head) = rest.strip_suffix("see below") {
            rest = head
                .strip_suffix(lex::is_blank)?
                .trim_end_matches(lex::is_blank);
            None
        } else {
            let (head, n) = last_number(rest)?;
            rest = head;
            Some(n)
        };
        match col {
            Column::PageSize => row.page_size_kb = value.and_then(|v| u32::try_from(v).ok()),
            Column::Size => row.size = value,
            Column::Used => row.used = value,
            Column::Free => row.free = value,
            Column::Other => {}
        }
    }
    if rest.is_empty() {
        return None;
    }
    row.path = rest;
    Some(row)
}

record!(OncheckPe);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_numbers_leave_the_description_whole() {
        assert_eq!(
            extent_row(
                "LOGICAL LOG: Log file 1                                          25263     5000"
            ),
            Some(("LOGICAL LOG: Log file 1", 25263, 5000))
        );
        assert_eq!(extent_row("Total Used:       53"), None);
        assert_eq!(extent_row("53 947"), None);
        assert_eq!(extent_row("x 99999999999999999999 1"), None);
    }

    #[test]
    fn objects_split_into_database_owner_and_name() {
        let o = split_object("stores:'informix'. 101_1").map(|o| (o.database, o.owner, o.name));
        assert_eq!(o, Some(("stores", "informix", " 101_1")));
        assert_eq!(split_object("LOGICAL LOG: Log file 1"), None);
        assert_eq!(
            classify("rootdbs:'informix'.TBLSpace"),
            ExtentKind::Tblspace
        );
        assert_eq!(classify("SBLOBSpace FREE USER DATA"), ExtentKind::Other);
    }
}
