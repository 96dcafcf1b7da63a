//! `onstat -l`: the physical log (buffer, size, position, use), the logical log buffer with its
//! subsystems, and every logical-log file with its flags and how full it is.

use super::header::Header;
use super::lex::{self, dec_f64, dec_u64, hex_addr, sp0, sp1, Line, PResult};
use super::onstat_b::{column, last_column};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::Addr;
use nom::bytes::complete::{tag, take_while1, take_while_m_n};
use nom::character::complete::{char, digit1, one_of};
use nom::combinator::{all_consuming, recognize};
use nom::Parser;
use serde::Serialize;

/// The whole output of one `onstat -l`.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct OnstatL {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    pub physical: Option<PhysicalLog>,
    pub logical: Option<LogicalLog>,
    /// The logical-log files, in the order printed.
    pub logs: Vec<LogFile>,
    /// Footer `N active, M total`.
    pub active: Option<u64>,
    pub total: Option<u64>,
    pub unparsed: Vec<Unparsed>,
}

impl OnstatL {
    /// The log file being written (flag `C`).
    pub fn current(&self) -> Option<&LogFile> {
        self.logs.iter().find(|l| l.is_current())
    }

    /// Log files used and not yet backed up (`U` without `B`): what fills the logs.
    pub fn not_backed_up(&self) -> usize {
        self.logs
            .iter()
            .filter(|l| l.has_flag('U') && !l.has_flag('B'))
            .count()
    }
}

/// `Physical Logging`: the buffer row and the row under `phybegin physize phypos phyused %used`.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct PhysicalLog {
    /// The buffer in use (`P-1`, `P-2`).
    pub buffer: Option<String>,
    pub bufused: Option<u64>,
    pub bufsize: Option<u64>,
    pub numpages: Option<u64>,
    pub numwrits: Option<u64>,
    pub pages_per_io: Option<f64>,
    /// Where the physical log starts, `chunk:page` as printed (an old build's packed hex,
    /// `400035`, written the same way: `4:53`).
    pub phybegin: Option<String>,
    /// Pages.
    pub physize: Option<u64>,
    pub phypos: Option<u64>,
    pub phyused: Option<u64>,
    pub used_pct: Option<f64>,
}

/// `Logical Logging`: the buffer row and the subsystems writing to the logical log.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct LogicalLog {
    /// The buffer in use (`L-1`, `L-3`).
    pub buffer: Option<String>,
    pub bufused: Option<u64>,
    pub bufsize: Option<u64>,
    pub numrecs: Option<u64>,
    pub numpages: Option<u64>,
    pub numwrits: Option<u64>,
    pub recs_per_page: Option<f64>,
    pub pages_per_io: Option<f64>,
    pub subsystems: Vec<LogSubsystem>,
}

/// One row under `Subsystem numrecs Log Space used`: `OLDRSAM 42169 4436496`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogSubsystem {
    pub name: String,
    pub numrecs: u64,
    /// Bytes.
    pub space_used: u64,
}

/// One logical-log file: `a517f70  1  U-B----  1  1:763  500  500  100.00`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogFile {
    pub address: Addr,
    pub number: u64,
    /// As printed, 7 or 8 characters: `U` used, `B` backed up, `C` current, `L` holds the last
    /// checkpoint, `A` newly added, `F` free, `D` to be dropped, `-` none.
    pub flags: String,
    pub uniqid: u64,
    /// Where the file starts, `chunk:page` as printed (an old build's packed hex, `300035`,
    /// written the same way: `3:53`).
    pub begin: String,
    /// Pages.
    pub size: u64,
    pub used: u64,
    pub used_pct: f64,
}

impl LogFile {
    pub fn has_flag(&self, flag: char) -> bool {
        self.flags.contains(flag)
    }

    pub fn is_current(&self) -> bool {
        self.has_flag('C')
    }
}

/// What a caller is told when the input is not `onstat -l` output at all.
const EXPECTED: &str = "onstat -l output: the titles `Physical Logging` and `Logical Logging`, \
     a buffer row (`P-1 0 16 716 55 13.02`, `L-3 0 16 42169 2872 1043 14.7 2.8`), the \
     column header `address number flags uniqid begin size used %used`, a log row \
     (`a517f70 1 U-B---- 1 1:763 500 500 100.00`) or the footer `N active, M total`";

/// Parses the output of `onstat -l`.
pub fn parse(text: &str) -> Result<OnstatL, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatL, onstat);

/// Which part of the output the last title or column header opened.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Section {
    #[default]
    None,
    Physical,
    /// Under `phybegin physize ...`.
    PhysicalPosition,
    Logical,
    /// Under `Subsystem numrecs Log Space used`.
    Subsystems,
    Logs,
}

#[derive(Default)]
struct Body {
    section: Section,
}

impl OnstatBody for Body {
    type Record = OnstatL;
    const EXPECTED: &'static str = EXPECTED;

    fn reserve(&mut self, out: &mut OnstatL, lines: usize) {
        out.logs.reserve(lines);
    }

    fn line<'a>(&mut self, out: &mut OnstatL, line: Line<'a>) -> Seen<'a> {
        let miss = match log_file(line.text) {
            Ok(l) => {
                out.logs.push(l);
                self.section = Section::Logs;
                return Seen::Known;
            }
            Err(miss) => miss,
        };
        if let Some(section) = title_or_header(line.text) {
            self.section = section;
            return Seen::Known;
        }
        // `onstat -t` ends with the same footer: it is this command's only under the logs.
        if self.section == Section::Logs || !out.logs.is_empty() {
            if let Some((active, total)) = footer(line.text) {
                out.active = Some(active);
                out.total = Some(total);
                return Seen::Known;
            }
        }
        let i = lex::trim_start_bytes(line.text, lex::is_blank_byte);
        let row = match (self.section, i.as_bytes().first()) {
            (_, Some(b'P')) if is_buffer_name(i, 'P') => physical_buffer(i, out),
            (_, Some(b'L')) if is_buffer_name(i, 'L') => logical_buffer(i, out),
            (Section::PhysicalPosition, _) => physical_position(i, out),
            (Section::Subsystems, _) => subsystem(i, out),
            _ => Err(miss),
        };
        match row {
            Ok(()) => Seen::Known,
            Err(m) => Seen::Miss(m),
        }
    }
}

/// The titles and column headers, and the part of the output each opens.
fn title_or_header(text: &str) -> Option<Section> {
    let t = lex::trim_blanks(text);
    if t == "Physical Logging" {
        Some(Section::Physical)
    } else if t == "Logical Logging" {
        Some(Section::Logical)
    } else if lex::starts_with_words(t, &["Buffer", "bufused", "bufsize", "numpages"]) {
        Some(Section::Physical)
    } else if lex::starts_with_words(t, &["Buffer", "bufused", "bufsize", "numrecs"]) {
        Some(Section::Logical)
    } else if lex::starts_with_words(t, &["phybegin", "physize", "phypos", "phyused"]) {
        Some(Section::PhysicalPosition)
    } else if lex::starts_with_words(t, &["Subsystem", "numrecs"]) {
        Some(Section::Subsystems)
    } else if lex::starts_with_words(t, &["address", "number", "flags", "uniqid", "begin"]) {
        Some(Section::Logs)
    } else {
        None
    }
}

/// ` 8 active, 8 total`
fn footer(text: &str) -> Option<(u64, u64)> {
    let parsed: PResult<'_, _> = all_consuming((
        sp0,
        dec_u64,
        sp1,
        tag("active,"),
        sp1,
        dec_u64,
        sp1,
        tag("total"),
        sp0,
    ))
    .parse(text);
    parsed.ok().map(|(_, (_, a, _, _, _, t, _, _, _))| (a, t))
}

/// `P-1`, `L-3`: the buffer name at the start of `i`, ending at a blank.
fn is_buffer_name(i: &str, letter: char) -> bool {
    let parsed: PResult<'_, _> = (char(letter), char('-'), digit1, sp1).parse(i);
    parsed.is_ok()
}

/// A buffer name (`P-1`).
fn buffer_name(i: &str) -> PResult<'_, &str> {
    recognize((one_of("PL"), char('-'), digit1)).parse(i)
}

/// `P-1  0  16  716  55  13.02`: buffer, bufused, bufsize, numpages, numwrits, pages/io.
fn physical_buffer<'a>(i: &'a str, out: &mut OnstatL) -> Result<(), Miss<'a>> {
    let (i, buffer) = column(i, buffer_name, "a buffer (`P-1`)")?;
    let (i, bufused) = column(i, dec_u64, "bufused (a number)")?;
    let (i, bufsize) = column(i, dec_u64, "bufsize (a number)")?;
    let (i, numpages) = column(i, dec_u64, "numpages (a number)")?;
    let (i, numwrits) = column(i, dec_u64, "numwrits (a number)")?;
    let pages_per_io = last_column(i, dec_f64, "pages/io (a number) at the end of the row")?;
    let p = out.physical.get_or_insert_with(PhysicalLog::default);
    p.buffer = Some(buffer.to_string());
    p.bufused = Some(bufused);
    p.bufsize = Some(bufsize);
    p.numpages = Some(numpages);
    p.numwrits = Some(numwrits);
    p.pages_per_io = Some(pages_per_io);
    Ok(())
}

/// `L-3  0  16  42169  2872  1043  14.7  2.8`: buffer, bufused, bufsize, numrecs, numpages,
/// numwrits, recs/pages, pages/io.
fn logical_buffer<'a>(i: &'a str, out: &mut OnstatL) -> Result<(), Miss<'a>> {
    let (i, buffer) = column(i, buffer_name, "a buffer (`L-1`)")?;
    let (i, bufused) = column(i, dec_u64, "bufused (a number)")?;
    let (i, bufsize) = column(i, dec_u64, "bufsize (a number)")?;
    let (i, numrecs) = column(i, dec_u64, "numrecs (a number)")?;
    let (i, numpages) = column(i, dec_u64, "numpages (a number)")?;
    let (i, numwrits) = column(i, dec_u64, "numwrits (a number)")?;
    let (i, recs_per_page) = column(i, dec_f64, "recs/pages (a number)")?;
    let pages_per_io = last_column(i, dec_f64, "pages/io (a number) at the end of the row")?;
    let l = out.logical.get_or_insert_with(LogicalLog::default);
    l.buffer = Some(buffer.to_string());
    l.bufused = Some(bufused);
    l.bufsize = Some(bufsize);
    l.numrecs = Some(numrecs);
    l.numpages = Some(numpages);
    l.numwrits = Some(numwrits);
    l.recs_per_page = Some(recs_per_page);
    l.pages_per_io = Some(pages_per_io);
    Ok(())
}

/// A position: `chunk:page` (`1:263`, `2:1000052`) as printed; or, as old builds print it, one
/// packed hex number (`300035`: the chunk in the bits above the low 20, the page in those, as
/// `onstat -X`'s old page numbers are packed), written as `3:53`.
fn chunk_page(i: &str) -> PResult<'_, String> {
    let printed = recognize((digit1, char(':'), digit1)).map(String::from);
    let packed = nom::combinator::map_opt(nom::character::complete::hex_digit1, |h: &str| {
        let v = u32::from_str_radix(h, 16).ok()?;
        Some(format!("{}:{}", v >> 20, v & 0xF_FFFF))
    });
    nom::branch::alt((printed, packed)).parse(i)
}

/// `1:263  500  270  0  0.00`: phybegin, physize, phypos, phyused, %used.
fn physical_position<'a>(i: &'a str, out: &mut OnstatL) -> Result<(), Miss<'a>> {
    let (i, phybegin) = column(i, chunk_page, "phybegin (`chunk:page` or packed hex)")?;
    let (i, physize) = column(i, dec_u64, "physize (a number)")?;
    let (i, phypos) = column(i, dec_u64, "phypos (a number)")?;
    let (i, phyused) = column(i, dec_u64, "phyused (a number)")?;
    let used_pct = last_column(i, dec_f64, "%used (a number) at the end of the row")?;
    let p = out.physical.get_or_insert_with(PhysicalLog::default);
    p.phybegin = Some(phybegin);
    p.physize = Some(physize);
    p.phypos = Some(phypos);
    p.phyused = Some(phyused);
    p.used_pct = Some(used_pct);
    Ok(())
}

/// `OLDRSAM  42169  4436496` (TAB-indented in some versions): name, numrecs, space used.
fn subsystem<'a>(i: &'a str, out: &mut OnstatL) -> Result<(), Miss<'a>> {
    let name_chars = |i| take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_').parse(i);
    let (i, name) = column(i, name_chars, "a subsystem name (`OLDRSAM`)")?;
    let (i, numrecs) = column(i, dec_u64, "numrecs (a number)")?;
    let space_used = last_column(
        i,
        dec_u64,
        "Log Space used (a number) at the end of the row",
    )?;
    out.logical
        .get_or_insert_with(LogicalLog::default)
        .subsystems
        .push(LogSubsystem {
            name: name.to_string(),
            numrecs,
            space_used,
        });
    Ok(())
}

/// Log flags: 7 or 8 of `A`-`Z` and `-` (`U-B----`, `U---C-L`, `A------`, 8 in newer versions).
fn log_flags(i: &str) -> PResult<'_, &str> {
    take_while_m_n(7, 8, |c: char| c.is_ascii_uppercase() || c == '-').parse(i)
}

/// One log file row: address (hex), number, flags, uniqid, begin (`chunk:page`), size, used,
/// %used.
fn log_file(text: &str) -> Result<LogFile, Miss<'_>> {
    let i = lex::trim_start_bytes(text, lex::is_blank_byte);
    let (i, address) = column(i, hex_addr, "a log file address (hex)")?;
    let (i, number) = column(i, dec_u64, "a log number")?;
    let (i, flags) = column(i, log_flags, "log flags (`U-B----`, 7 or 8 characters)")?;
    let (i, uniqid) = column(i, dec_u64, "a uniqid (a number)")?;
    let (i, begin) = column(i, chunk_page, "begin (`chunk:page` or packed hex)")?;
    let (i, size) = column(i, dec_u64, "a size (pages)")?;
    let (i, used) = column(i, dec_u64, "used (pages)")?;
    let used_pct = last_column(i, dec_f64, "%used (a number) at the end of the row")?;
    Ok(LogFile {
        address,
        number,
        flags: flags.to_string(),
        uniqid,
        begin,
        size,
        used,
        used_pct,
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn log_rows_with_7_and_8_flags() {
        let l = log_file(
            "a517f70  1        U-B----  1        1:763                 500      500   100.00",
        )
        .expect("7 flags");
        assert_eq!(
            (l.number, l.flags.as_str(), l.used_pct),
            (1, "U-B----", 100.0)
        );
        let l = log_file(
            "4b2c6f28         12       U---C-L-  12       2:1000052        25000    1201     4.80",
        )
        .expect("8 flags");
        assert!(l.is_current());
        assert_eq!(l.begin, "2:1000052");
        assert!(log_file("a517f70 1 U-B 1 1:763 500 500 100.00").is_err());
        assert!(log_file("a517f70 1 U-B------ 1 1:763 500 500 100.00").is_err());
    }

    #[test]
    fn footers() {
        assert_eq!(footer(" 8 active, 8 total"), Some((8, 8)));
        assert_eq!(footer(" 8 active, 8 total, 9 maximum concurrent"), None);
    }
}
