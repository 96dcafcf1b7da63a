//! Pure parsers: `&str` → typed records or a `ParseError`. Nothing here knows of tokio or ratatui.
//!
//! Every parser lists the lines it did not understand in `unparsed` (never drops them silently)
//! and fails with a `ParseError` (line, column, expected, found) when the input is not that
//! command's output at all. The onstat parsers share one driver ([`drive`]): the banner, the
//! off-line message and "was anything recognised" are handled once; each parser reads its body
//! a line at a time ([`OnstatBody`]). What `ifxtop parse` accepts is
//! named with each source in the source registry ([`UNPOLLED`] lists the rest).

/// Implements [`Record`]: `record!(T)` for a type with an `unparsed` list, `record!(T, onstat)`
/// for an onstat record (with `header`, `offline` and `unparsed`; also [`OnstatRecord`]),
/// `record!(T, none)` for a type with nothing to leave unparsed. Defined before the parser
/// modules, so they see it by name. The first two take, after a `;`, the fields holding a row
/// per session or thread ([`Record::shrink`]).
macro_rules! record {
    ($t:ty $(; $($rows:ident),+)?) => {
        impl $crate::parsers::Record for $t {
            fn unparsed(&self) -> usize {
                $crate::parsers::Unparsed::count(&self.unparsed)
            }
            fn to_json(&self) -> serde_json::Value {
                $crate::parsers::json_of(self)
            }
            fn shrink(&mut self) {
                self.unparsed.shrink_to_fit();
                $($(self.$rows.shrink_to_fit();)+)?
            }
        }
    };
    ($t:ty, none) => {
        impl $crate::parsers::Record for $t {
            fn unparsed(&self) -> usize {
                0
            }
            fn to_json(&self) -> serde_json::Value {
                $crate::parsers::json_of(self)
            }
        }
    };
    ($t:ty, onstat $(; $($rows:ident),+)?) => {
        impl $crate::parsers::Record for $t {
            fn unparsed(&self) -> usize {
                $crate::parsers::Unparsed::count(&self.unparsed)
            }
            fn shrink(&mut self) {
                self.unparsed.shrink_to_fit();
                $($(self.$rows.shrink_to_fit();)+)?
            }
            fn header(&self) -> Option<&$crate::parsers::header::Header> {
                self.header.as_ref()
            }
            fn offline(&self) -> Option<&str> {
                self.offline.as_deref()
            }
            fn to_json(&self) -> serde_json::Value {
                $crate::parsers::json_of(self)
            }
        }
        impl $crate::parsers::OnstatRecord for $t {
            fn set_preamble(
                &mut self,
                header: Option<$crate::parsers::header::Header>,
                offline: Option<String>,
            ) {
                self.header = header;
                self.offline = offline;
            }
            fn unparsed_mut(&mut self) -> &mut Vec<$crate::parsers::Unparsed> {
                &mut self.unparsed
            }
        }
    };
}

pub mod group;
pub mod header;
pub mod interactive;
pub mod lex;
pub mod memo;

pub mod numa;
pub mod oncheck_pe;
pub mod onstat_b;
pub mod onstat_d;
pub mod onstat_g_ath;
pub mod onstat_g_ckp;
pub mod onstat_g_con;
pub mod onstat_g_cpu;
pub mod onstat_g_ntt;
pub mod onstat_g_pqs;
pub mod onstat_g_ses;
pub mod onstat_g_sql;
pub mod onstat_k;
pub mod onstat_t;
pub mod onstat_u;
pub mod onstat_x;
/// Holds the byte-level row parsers to their nom references.
#[cfg(test)]
mod same_rows;
pub mod sockets;
pub mod systabnames;
/// The test build's toy source's parser (`Source::Toy`).
#[cfg(test)]
pub mod toy;

// Chunk I/O, devices and replication (HA).
pub mod chunk_devices;
pub mod ha;
pub mod onstat_d_upper;
pub mod onstat_g_cluster;
pub mod onstat_g_dri;
pub mod onstat_g_iof;
pub mod onstat_g_rss;
pub mod onstat_g_sds;
pub mod proc_diskstats;
pub mod sysblock;
// Vital signs: the banner, profile, logs, VPs, mutexes, latches, memory segments,
// blockers, thread profiles, transactions, the ready queue.
pub mod onstat_banner;
pub mod onstat_g_bth;
pub mod onstat_g_glo;
pub mod onstat_g_lmx;
pub mod onstat_g_rea;
pub mod onstat_g_seg;
pub mod onstat_g_tpf;
pub mod onstat_g_wmx;
pub mod onstat_l;
pub mod onstat_p;
pub mod onstat_s;
pub mod onstat_x_txn;

use crate::error::ParseError;
use header::Header;
use serde::Serialize;
use std::any::Any;
use std::sync::Arc;

/// A line the parser did not understand, kept so it can be shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unparsed {
    pub line: usize,
    pub text: String,
    /// Lines after this one not understood either, counted but not kept: only on the last
    /// entry, when more than `MAX_UNPARSED_KEPT` lines were not understood (a command printing
    /// garbage must not cost memory per line).
    #[serde(skip_serializing_if = "is_zero")]
    pub more: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Lines not understood that are kept, with their text, per parse; the rest are counted.
pub const MAX_UNPARSED_KEPT: usize = 1000;

impl Unparsed {
    pub(crate) fn new(line: lex::Line<'_>) -> Self {
        Unparsed {
            line: line.no,
            text: line.text.to_string(),
            more: 0,
        }
    }

    /// Keeps `line` in `list`, or once the list holds `MAX_UNPARSED_KEPT` lines, counts it on
    /// the last one.
    pub(crate) fn keep(list: &mut Vec<Unparsed>, line: lex::Line<'_>) {
        let full = list.len() >= MAX_UNPARSED_KEPT;
        match list.last_mut() {
            Some(last) if full => last.more += 1,
            _ => list.push(Unparsed::new(line)),
        }
    }

    /// How many lines a list stands for: those kept and those only counted.
    pub fn count(list: &[Unparsed]) -> usize {
        list.iter().map(|u| 1 + u.more).sum()
    }
}

/// What one parse gives: the store keeps it (shared, so a frozen screen holds on to it cheaply),
/// `ifxtop parse` prints it. Implemented through [`record!`] for every parsed type.
pub trait Record: Any + Send + Sync {
    /// Lines the parser did not understand.
    fn unparsed(&self) -> usize;
    /// The onstat banner, when there was one.
    fn header(&self) -> Option<&Header> {
        None
    }
    /// The message onstat printed instead of its output because the server is off-line.
    fn offline(&self) -> Option<&str> {
        None
    }
    /// What `ifxtop parse` prints.
    fn to_json(&self) -> serde_json::Value;
    /// Gives back what its vectors hold past their rows, before the store keeps it for the
    /// source's period: a vector grown by doubling holds up to twice its rows (5,000 rows
    /// of a session's `onstat -g ntt` in room for 8,192).
    fn shrink(&mut self) {}
}

/// A parsed output of any kind.
pub type Parsed = Arc<dyn Record>;

/// A record of any kind shows as its JSON. Not a supertrait: a `Debug` in every record's
/// table of functions kept each record's derived formatting code, and its rows', in the
/// binary (about 100 KB), for what only a test or a log line prints.
impl std::fmt::Debug for dyn Record {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.to_json())
    }
}

impl dyn Record {
    /// The record as its own type, when it is one.
    pub fn get<T: Record>(&self) -> Option<&T> {
        (self as &dyn Any).downcast_ref::<T>()
    }
}

/// Wraps a parse result for the store.
pub(crate) fn parsed<T: Record>(r: Result<T, ParseError>) -> Result<Parsed, ParseError> {
    r.map(|mut v| {
        v.shrink();
        Arc::new(v) as Parsed
    })
}

/// The JSON of a serializable record. Our records only have string keys and finite numbers, so
/// this cannot fail; if it ever did, the output says so rather than panic.
pub(crate) fn json_of<T: Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v)
        .unwrap_or_else(|e| serde_json::Value::String(format!("cannot encode: {e}")))
}

/// A column that holds a number or a word (a port or a service name, a setting's value):
/// a JSON number when it is a decimal number, its text otherwise.
pub(crate) fn number_or_text<S: serde::Serializer, T: AsRef<str> + ?Sized>(
    v: &T,
    s: S,
) -> Result<S::Ok, S::Error> {
    let v = v.as_ref();
    match v.parse::<u64>() {
        Ok(n) => s.serialize_u64(n),
        Err(_) => match v.parse::<i64>() {
            Ok(n) => s.serialize_i64(n),
            Err(_) => s.serialize_str(v),
        },
    }
}

/// [`number_or_text`] for every value of a map of settings or other named fields.
pub(crate) fn numbers_or_texts<S: serde::Serializer>(
    map: &std::collections::BTreeMap<String, String>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(map.len()))?;
    for (k, v) in map {
        m.serialize_key(k)?;
        m.serialize_value(&NumberOrText(v))?;
    }
    m.end()
}

/// One value as [`number_or_text`] writes it.
struct NumberOrText<'a>(&'a str);

impl Serialize for NumberOrText<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        number_or_text(self.0, s)
    }
}

/// The parts every onstat record has: the banner and the off-line message (both from the
/// preamble) and the lines not understood.
pub(crate) trait OnstatRecord: Default + Record {
    fn set_preamble(&mut self, header: Option<Header>, offline: Option<String>);
    fn unparsed_mut(&mut self) -> &mut Vec<Unparsed>;
}

/// What one non-blank body line of an onstat output was.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Seen<'a> {
    /// A part of the output only this command prints (a title, a column header, a footer):
    /// the input is that command's output.
    Known,
    /// A row of the command's table. Rows are weak evidence: many commands print rows of a
    /// hex address and a few numbers, so rows alone recognise the input only when no line was
    /// missed (a grep'd fragment of rows); among lines not understood (another command's
    /// titles and headers) they need a title or header of this command's own.
    Row,
    /// A part it knows but could not use (a part printed twice): listed as unparsed, and still
    /// evidence of the right command.
    KnownUnused,
    /// Something the parser skips on purpose (an elision of dots in a published sample).
    Skipped,
    /// A line the parser read and used that other commands print too (`Local server type:
    /// Primary` heads `-g rss` and `-g sds`): not evidence that the input is this command's.
    Shared,
    /// Not understood: listed as unparsed; the first one is the error when nothing is known.
    Miss(Miss<'a>),
    /// A line only another command prints (`onstat -D`'s chunk header in what would otherwise
    /// read as `onstat -d`): the input is that command's output, whatever else matched. Names
    /// the command.
    Foreign(&'static str),
}

/// Reads an onstat command's body a line at a time; [`drive`] does the rest.
pub(crate) trait OnstatBody: Default {
    type Record: OnstatRecord;
    /// What a caller is told when the input is not this command's output at all.
    const EXPECTED: &'static str;
    /// The banner alone is a whole answer (`onstat -g ses <sid>` of a session with nothing to
    /// show prints nothing else).
    const BANNER_ALONE: bool = false;
    /// Room for the rows of an output of `lines` lines.
    fn reserve(&mut self, _out: &mut Self::Record, _lines: usize) {}
    /// A blank line (some parsers end a section there).
    fn blank(&mut self, _out: &mut Self::Record) {}
    /// One non-blank line.
    fn line<'a>(&mut self, out: &mut Self::Record, line: lex::Line<'a>) -> Seen<'a>;
    /// After the last line: a verdict on the whole input that no single line could give (the
    /// banner alone ends with a banner) and parts read as a whole (a block handed to another
    /// parser). Its error is the parse's error.
    fn finish(&mut self, _out: &mut Self::Record) -> Result<(), ParseError> {
        Ok(())
    }
    /// Every row is a pure function of the text of the one line it came from (no section
    /// state, no line number in it): a [`memo::LineMemo`] may give a row again for an
    /// identical line. Such a body also says how many rows a record holds and how one is
    /// copied.
    const MEMO: bool = false;
    /// How many rows `out` holds (with `MEMO`).
    fn rows(_out: &Self::Record) -> usize {
        0
    }
    /// Adds a copy of row `i` of `last` to `out`'s rows; false when there is none (with
    /// `MEMO`).
    fn copy_row(_last: &Self::Record, _i: usize, _out: &mut Self::Record) -> bool {
        false
    }
    /// A line was a row given again from the memo: what reading it would have left in the
    /// body's own state.
    fn recalled(&mut self) {}
    /// What of a line its memo key stands for (with `MEMO`): the whole line, or less for a
    /// body whose [`OnstatBody::copy_line`] reads the rest again from the line; `None`: the
    /// line is parsed.
    fn memo_text(text: &str) -> Option<&str> {
        Some(text)
    }
    /// [`OnstatBody::copy_row`] for the line `text`, whose `memo_text` was that of the row's
    /// line: a body that keys less than the whole line reads the rest of the row from `text`
    /// here, and gives false (the line is parsed) when it cannot.
    fn copy_line(last: &Self::Record, i: usize, out: &mut Self::Record, _text: &str) -> bool {
        Self::copy_row(last, i, out)
    }
}

/// The one onstat parse driver: preamble (banner or off-line message), then every body line
/// through `B`, then "was this that command's output at all".
pub(crate) fn drive<B: OnstatBody>(text: &str) -> Result<B::Record, ParseError> {
    drive_with::<B>(text, None)
}

/// [`drive`] with a memo of the source's last parse (a body with `MEMO`): a row line identical
/// to one of the last output is that row again, not parsed.
pub(crate) fn drive_memo<B: OnstatBody>(
    text: &str,
    memo: &memo::LineMemo,
) -> memo::Recalled<B::Record> {
    memo::parse_with(text, memo, |r| drive_with::<B>(text, Some(r)), B::rows)
}

/// One body line read through the memo: the remembered row of an identical line, or the line
/// parsed and its key noted.
fn recalled_line<'a, B: OnstatBody>(
    body: &mut B,
    out: &mut B::Record,
    line: lex::Line<'a>,
    recall: &mut memo::Recall<'_, B::Record>,
) -> Seen<'a> {
    let key = B::memo_text(line.text).map_or(memo::LineKey::NONE, memo::LineKey::of);
    if recall.copied(key, |last, i| B::copy_line(last, i, out, line.text)) {
        body.recalled();
        return Seen::Row;
    }
    let before = B::rows(out);
    let seen = body.line(out, line);
    let added = B::rows(out).saturating_sub(before);
    recall.note(key, matches!(seen, Seen::Row), added);
    seen
}

fn drive_with<B: OnstatBody>(
    text: &str,
    mut recall: Option<&mut memo::Recall<'_, B::Record>>,
) -> Result<B::Record, ParseError> {
    let mut lines = lex::lines(text);
    let mut out = B::Record::default();
    let mut body = B::default();
    body.reserve(&mut out, lex::row_count_hint(text));
    let (banner, offline) = header::parse_preamble(&mut lines).into_parts();
    // The off-line message alone is a whole answer; so is the banner alone for the commands
    // that print nothing else when there is nothing to show (but not a banner followed by
    // lines this command does not print).
    let mut recognised = offline.is_some();
    let banner_alone = B::BANNER_ALONE && banner.is_some();
    let mut rows = false;
    // Any body line the banner-alone rule must not see past (all but `Skipped`).
    let mut body_seen = false;
    out.set_preamble(banner, offline);
    let mut first_miss: Option<ParseError> = None;
    let mut foreign: Option<ParseError> = None;
    for line in lines {
        if line.is_blank() {
            body.blank(&mut out);
            continue;
        }
        let seen = match recall.as_deref_mut() {
            Some(r) if B::MEMO => recalled_line(&mut body, &mut out, line, r),
            _ => body.line(&mut out, line),
        };
        body_seen |= !matches!(seen, Seen::Skipped);
        match seen {
            Seen::Known => recognised = true,
            Seen::Row => rows = true,
            Seen::KnownUnused => {
                recognised = true;
                Unparsed::keep(out.unparsed_mut(), line);
            }
            Seen::Skipped | Seen::Shared => {}
            Seen::Miss(miss) => {
                if first_miss.is_none() {
                    first_miss = Some(miss.error(line, B::EXPECTED));
                }
                Unparsed::keep(out.unparsed_mut(), line);
            }
            Seen::Foreign(other) => {
                if foreign.is_none() {
                    foreign = Some(line.error_at(
                        line.text.trim_start(),
                        format!("{}; this line is {other}'s", B::EXPECTED),
                    ));
                }
                Unparsed::keep(out.unparsed_mut(), line);
            }
        }
    }
    if let Some(e) = foreign {
        return Err(e);
    }
    body.finish(&mut out)?;
    if !recognised && first_miss.is_none() && (rows || (banner_alone && !body_seen)) {
        recognised = true;
    }
    if !recognised {
        return Err(first_miss.unwrap_or_else(|| nothing_found(text, B::EXPECTED)));
    }
    Ok(out)
}

/// Where a row stopped making sense, and what it needed there.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Miss<'a> {
    pub(crate) at: &'a str,
    pub(crate) needs: &'static str,
}

impl<'a> Miss<'a> {
    pub(crate) fn new(at: &'a str, needs: &'static str) -> Self {
        Miss { at, needs }
    }

    /// The error for a whole input none of whose lines was recognised: this first line is what
    /// the caller sees, pointing at the column where it stopped looking like a row.
    pub(crate) fn error(self, line: lex::Line<'_>, expected: &str) -> ParseError {
        line.error_at(
            self.at,
            format!("{expected}; a row needs {} here", self.needs),
        )
    }
}

/// The error for input with no line at all past the banner (empty, blank, or a banner alone).
pub(crate) fn nothing_found(text: &str, expected: &str) -> ParseError {
    if text.trim().is_empty() {
        ParseError::empty(expected)
    } else {
        ParseError {
            // The line after the last one (the banner and blank lines after it).
            line: text.lines().count() + 1,
            column: 1,
            expected: expected.to_string(),
            snippet: "end of input".to_string(),
        }
    }
}

/// An output `ifxtop parse` reads that no source polls (the sources' kinds are named in the
/// source registry, with their entries): its kind name, older or other spellings, the command
/// as typed, and its parser. `ifxtop::source::Kind` lists both.
#[derive(Clone, Copy)]
pub struct Unpolled {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub command: &'static str,
    pub parse: fn(&str) -> Result<Parsed, ParseError>,
}

/// Outputs `ifxtop parse` reads that no source polls: read from a capture, or by a collector
/// in another form (the extent map reads `oncheck -pe` into a map, not these rows).
pub const UNPOLLED: &[Unpolled] = &[
    Unpolled {
        name: "oncheck-pe",
        aliases: &[],
        command: "oncheck -pe",
        parse: |t| parsed(oncheck_pe::parse(t)),
    },
    Unpolled {
        name: "ss",
        aliases: &[],
        command: "ss -tan",
        parse: |t| parsed(sockets::parse_ss(t)),
    },
    Unpolled {
        name: "numactl-H",
        aliases: &["numactl-h"],
        command: "numactl -H",
        parse: |t| parsed(numa::parse_numactl_h(t)),
    },
    Unpolled {
        name: "onstat-b",
        aliases: &["onstat-B"],
        command: "onstat -b",
        parse: |t| parsed(onstat_b::parse(t)),
    },
    Unpolled {
        name: "onstat-d",
        aliases: &[],
        command: "onstat -d",
        parse: |t| parsed(onstat_d::parse(t)),
    },
    Unpolled {
        name: "onstat-t",
        aliases: &[],
        command: "onstat -t",
        parse: |t| parsed(onstat_t::parse(t)),
    },
    Unpolled {
        name: "onstat-banner",
        aliases: &[],
        command: "onstat -",
        parse: |t| parsed(onstat_banner::parse(t)),
    },
];
