//! `onstat -g iof`: I/O per global file descriptor (each chunk, primary or mirror): bytes and
//! pages read and written, operations per second, and the per-operation table under each file.

use super::header::Header;
use super::lex::{self, dec_u32, dec_u64, sp1, trim_blanks, Line, PResult};
use super::onstat_b::{column, last_column};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use nom::branch::alt;
use nom::bytes::complete::{tag, take_while1};
use nom::character::complete::{char, digit1};
use nom::combinator::{map, map_res, opt, recognize};
use nom::Parser;
use serde::Serialize;

/// The whole output of one `onstat -g iof`.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct OnstatGIof {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    pub files: Vec<IoFile>,
    pub unparsed: Vec<Unparsed>,
}

/// One global file (a chunk) and its I/O since the counters were last reset.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IoFile {
    /// The global file descriptor (the `gfd N` queue of `onstat -g ioq`).
    pub gfd: u32,
    pub path: String,
    /// 12.10 and later; `None` in the older `totalops dskread dskwrite` layout.
    pub bytes_read: Option<u64>,
    pub page_reads: Option<u64>,
    pub bytes_write: Option<u64>,
    pub page_writes: Option<u64>,
    /// The older layout's operation counts (`totalops`, `dskread`, `dskwrite`).
    pub total_ops: Option<u64>,
    pub read_ops: Option<u64>,
    pub write_ops: Option<u64>,
    /// Operations per second (`io/s`).
    pub io_per_s: f64,
    /// The `op type / count / avg. time` table printed under the file.
    pub ops: Vec<IoOp>,
}

/// One row of a file's operation table: `reads  937  0.0010`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IoOp {
    /// `seeks`, `reads`, `writes`, `kaio_reads`, `kaio_writes`, ...
    pub op: String,
    pub count: u64,
    /// Seconds per operation; `None` for `N/A` (no operation yet).
    pub avg_time_s: Option<f64>,
}

impl IoFile {
    /// The operation row named `op`.
    pub fn op(&self, op: &str) -> Option<&IoOp> {
        self.ops.iter().find(|o| o.op == op)
    }
}

/// What a caller is told when the input is not `onstat -g iof` output at all.
const EXPECTED: &str = "onstat -g iof output: the title `AIO global files:`, the column header \
     `gfd pathname bytes read page reads bytes write page writes io/s`, a file row \
     (`3 rootdbs 1918976 937 145061888 70831 36.5`), the operation header \
     `op type count avg. time` or an operation row (`reads 937 0.0010`)";

/// Parses the output of `onstat -g iof`.
pub fn parse(text: &str) -> Result<OnstatGIof, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatGIof, onstat);

/// Which file row layout the column header announced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Layout {
    /// `gfd pathname bytes read page reads bytes write page writes io/s` (12.10 and later).
    #[default]
    Bytes,
    /// `gfd pathname totalops dskread dskwrite io/s` (11.x).
    Ops,
}

#[derive(Default)]
struct Body {
    layout: Layout,
}

impl OnstatBody for Body {
    type Record = OnstatGIof;
    const EXPECTED: &'static str = EXPECTED;

    fn line<'a>(&mut self, out: &mut OnstatGIof, line: Line<'a>) -> Seen<'a> {
        let text = line.text;
        let file_miss = match file_row(text, self.layout) {
            Ok(f) => {
                out.files.push(f);
                return Seen::Known;
            }
            Err(miss) => miss,
        };
        let t = trim_blanks(text);
        if t == "AIO global files:" {
            return Seen::Known;
        }
        if lex::starts_with_words(text, &["gfd", "pathname"]) {
            let words: Vec<&str> = lex::header_words(text).collect();
            if words.ends_with(&["totalops", "dskread", "dskwrite", "io/s"]) {
                self.layout = Layout::Ops;
                return Seen::Known;
            }
            if words.ends_with(&["bytes", "write", "page", "writes", "io/s"]) {
                self.layout = Layout::Bytes;
                return Seen::Known;
            }
            return Seen::Miss(Miss::new(t, "a known column header"));
        }
        if lex::starts_with_words(text, &["op", "type", "count", "avg.", "time"]) {
            return if out.files.is_empty() {
                Seen::Miss(Miss::new(t, "a file row before its operation table"))
            } else {
                Seen::Known
            };
        }
        match (op_row(text), out.files.last_mut()) {
            (Ok(op), Some(f)) => {
                f.ops.push(op);
                Seen::Known
            }
            (Ok(_), None) => Seen::Miss(Miss::new(t, "a file row before its operations")),
            (Err(op_miss), _) => {
                if lex::offset_in(text, op_miss.at) > lex::offset_in(text, file_miss.at) {
                    Seen::Miss(op_miss)
                } else {
                    Seen::Miss(file_miss)
                }
            }
        }
    }
}

/// A decimal with an optional fraction: `36.5`, `0.0010`, `12`.
fn decimal(i: &str) -> PResult<'_, f64> {
    map_res(recognize((digit1, opt((char('.'), digit1)))), |s: &str| {
        s.parse::<f64>()
    })
    .parse(i)
}

/// `io/s`, always printed with a fraction (`36.5`, `0.0`): a row of whole numbers is another
/// command's (`onstat -p`'s `39 2 27 51 0 0 16`).
fn rate(i: &str) -> PResult<'_, f64> {
    map_res(recognize((digit1, char('.'), digit1)), |s: &str| {
        s.parse::<f64>()
    })
    .parse(i)
}

/// `N/A` (no operation yet) or seconds.
fn avg_time(i: &str) -> PResult<'_, Option<f64>> {
    alt((map(tag("N/A"), |_| None), map(decimal, Some))).parse(i)
}

/// `3   rootdbs   1918976   937   145061888   70831   36.5` (or the 11.x layout:
/// `gfd pathname totalops dskread dskwrite io/s`). The pathname is one word.
fn file_row(text: &str, layout: Layout) -> Result<IoFile, Miss<'_>> {
    let i = lex::trim_start_bytes(text, lex::is_blank_byte);
    let (i, gfd) = column(i, dec_u32, "a global file descriptor (gfd)")?;
    let (i, path) = column(i, lex::word, "a pathname")?;
    let mut f = IoFile {
        gfd,
        path: path.to_string(),
        bytes_read: None,
        page_reads: None,
        bytes_write: None,
        page_writes: None,
        total_ops: None,
        read_ops: None,
        write_ops: None,
        io_per_s: 0.0,
        ops: Vec::new(),
    };
    let i = match layout {
        Layout::Bytes => {
            let (i, bytes_read) = column(i, dec_u64, "bytes read")?;
            let (i, page_reads) = column(i, dec_u64, "page reads")?;
            let (i, bytes_write) = column(i, dec_u64, "bytes written")?;
            let (i, page_writes) = column(i, dec_u64, "page writes")?;
            f.bytes_read = Some(bytes_read);
            f.page_reads = Some(page_reads);
            f.bytes_write = Some(bytes_write);
            f.page_writes = Some(page_writes);
            i
        }
        Layout::Ops => {
            let (i, total) = column(i, dec_u64, "totalops")?;
            let (i, reads) = column(i, dec_u64, "dskread")?;
            let (i, writes) = column(i, dec_u64, "dskwrite")?;
            f.total_ops = Some(total);
            f.read_ops = Some(reads);
            f.write_ops = Some(writes);
            i
        }
    };
    f.io_per_s = last_column(i, rate, "io/s with one decimal (`36.5`) ending the row")?;
    Ok(f)
}

/// `reads  937  0.0010`, `kaio_writes  0  N/A`
fn op_row(text: &str) -> Result<IoOp, Miss<'_>> {
    let i = lex::trim_start_bytes(text, lex::is_blank_byte);
    let op_name = take_while1(|c: char| c.is_ascii_lowercase() || c == '_');
    let parsed: PResult<'_, _> = (op_name, sp1).parse(i);
    let (j, (op, _)) = parsed.map_err(|_| Miss::new(i, "an operation name (`reads`)"))?;
    let (j, count) = column(j, dec_u64, "an operation count")?;
    let avg_time_s = last_column(j, avg_time, "an average time (seconds or `N/A`)")?;
    Ok(IoOp {
        op: op.to_string(),
        count,
        avg_time_s,
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn file_rows_of_both_layouts() {
        let f = file_row(
            "3   rootdbs       1918976      937          145061888     70831        36.5",
            Layout::Bytes,
        )
        .expect("row");
        assert_eq!(
            (f.gfd, f.page_reads, f.page_writes),
            (3, Some(937), Some(70831))
        );
        assert_eq!(f.io_per_s, 36.5);
        let f = file_row("  5 /dev/rchunk2  5654  3398  2256  0.1", Layout::Ops).expect("old");
        assert_eq!(
            (f.total_ops, f.read_ops, f.bytes_read),
            (Some(5654), Some(3398), None)
        );
        assert!(file_row("3 rootdbs 1 2 3 4", Layout::Bytes).is_err());
        assert!(file_row("3 root dbs 1 2 3 4 5.0", Layout::Bytes).is_err());
        // `onstat -p`'s `gp_read ... gp_curs` row: io/s has no fraction.
        assert!(file_row("39 2 27 51 0 0 16", Layout::Bytes).is_err());
    }

    #[test]
    fn op_rows() {
        let o = op_row("      kaio_reads  0             N/A").expect("n/a");
        assert_eq!(
            (o.op.as_str(), o.count, o.avg_time_s),
            ("kaio_reads", 0, None)
        );
        let o = op_row("reads 937 0.0010").expect("time");
        assert_eq!(o.avg_time_s, Some(0.001));
        assert!(op_row("Reads 937 0.0010").is_err());
        assert!(op_row("reads 937").is_err());
    }
}
