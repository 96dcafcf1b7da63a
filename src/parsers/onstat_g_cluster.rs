//! `onstat -g cluster` (and `-g cluster verbose`): the whole high-availability cluster as one
//! server sees it: the primary, its current log page, and per secondary (HDR, SDS, RSS) the log
//! page it acknowledged and applied, whether it takes updates, its state and, verbose, its
//! backlog and last acknowledgement.

use super::ha::{
    control_block, label_key, label_value, log_pos, whole_log_pos, whole_u64, yes_no,
    IndexPageLogging, LogPos, Stamp,
};
use super::header::Header;
use super::lex::{self, dec_u64, sp0, sp1, trim_blanks, Line, PResult};
use super::onstat_b::column;
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::Addr;
use nom::bytes::complete::{tag, take_while1};
use nom::character::complete::char;
use nom::combinator::all_consuming;
use nom::Parser;
use serde::Serialize;
use std::collections::BTreeMap;

/// The whole output of one `onstat -g cluster` (brief or verbose).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGCluster {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    /// `Primary Server:serv1`.
    pub primary: Option<String>,
    /// `Current Log Page:16,476` (printed on the primary only).
    pub current_log_page: Option<LogPos>,
    pub index_page_logging: Option<IndexPageLogging>,
    pub servers: Vec<ClusterServer>,
    pub unparsed: Vec<Unparsed>,
}

/// One secondary server: a row of the table, completed by its verbose block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ClusterServer {
    pub name: String,
    /// `ACKed Log (log, page)`.
    pub acked: Option<LogPos>,
    /// `Applied Log (log, page)` (12.10 and later).
    pub applied: Option<LogPos>,
    /// `Supports Updates` (`Yes`/`No`).
    pub supports_updates: Option<bool>,
    /// As printed: `SYNC(SDS),Connected,Active`.
    pub status: Option<String>,
    /// `HDR`, `SDS` or `RSS`.
    #[serde(rename = "type")]
    pub server_type: Option<String>,
    /// `SYNC`, `ASYNC`, `NEAR_SYNC`, ...
    pub sync: Option<String>,
    /// `Connected`, `Disconnected`, ...
    pub connection: Option<String>,
    /// The server's own state: `Active`, `On`, `Defined`, ...
    pub server_status: Option<String>,
    // The verbose block only:
    pub control_block: Option<Addr>,
    /// `Last log page sent (log id, page):`.
    pub last_sent: Option<LogPos>,
    /// `Last log page acked (log id, page);` (with the `;` the server prints).
    pub last_acked: Option<LogPos>,
    /// `Last log page applied (log id, page):`.
    pub last_applied: Option<LogPos>,
    /// `Approximate log page backlog:`.
    pub backlog_pages: Option<u64>,
    /// `Time of last ack:`; the epoch when nothing was ever acknowledged (an HDR secondary).
    pub last_ack_time: Option<Stamp>,
    /// `SDS cycle current: 20 ACKed: 20`; `None` for `SDS cycle not used`.
    pub sds_cycle: Option<SdsCycle>,
    /// `Delayed Apply Not Used` → `Not Used`, as printed.
    pub delayed_apply: Option<String>,
    /// `Stop Apply Not Used` → `Not Used`, as printed.
    pub stop_apply: Option<String>,
    /// Other `Label: value` lines of the block, as printed.
    #[serde(serialize_with = "super::numbers_or_texts")]
    pub other: BTreeMap<String, String>,
}

/// The SDS cycle numbers of an SDS server's verbose block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SdsCycle {
    pub current: u64,
    pub acked: u64,
}

impl ClusterServer {
    /// Pages behind: the backlog when printed, else acked to the primary's current page within
    /// one log.
    pub fn lag_pages(&self, current: Option<LogPos>) -> Option<u64> {
        self.backlog_pages
            .or_else(|| self.acked?.pages_to(current?))
    }
}

/// What a caller is told when the input is not `onstat -g cluster` output at all.
const EXPECTED: &str =
    "onstat -g cluster output: `Primary Server:name`, `Current Log Page:16,476`, \
     the column header `Server ACKed Log [Applied Log] Supports Status`, a server row \
     (`serv2 16,476 16,476 Yes SYNC(SDS),Connected,Active`) or a verbose block \
     (`server name: london`, `type: ASYNC (HDR)`, ...)";

/// Parses the output of `onstat -g cluster` or `onstat -g cluster verbose`. Every line may be
/// indented with blanks or TABs (a published copy puts a TAB before each).
pub fn parse(text: &str) -> Result<OnstatGCluster, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatGCluster, onstat);

#[derive(Default)]
struct Body {
    /// The summary (`Primary Server:` or the table header) was seen: verbose blocks follow it.
    summary: bool,
    /// After the table's column header: rows.
    table: bool,
    /// The server the verbose block is about.
    block: Option<usize>,
}

impl OnstatBody for Body {
    type Record = OnstatGCluster;
    const EXPECTED: &'static str = EXPECTED;

    fn line<'a>(&mut self, out: &mut OnstatGCluster, line: Line<'a>) -> Seen<'a> {
        let text = line.text;
        let t = trim_blanks(text);
        if lex::starts_with_words(text, &["Server", "ACKed", "Log"]) {
            self.summary = true;
            self.table = true;
            self.block = None;
            return Seen::Known;
        }
        if self.table && lex::starts_with_words(text, &["(log,", "page)"]) {
            return Seen::Known;
        }
        let row_miss = if self.table && self.block.is_none() {
            match server_row(text) {
                Ok(s) => {
                    out.servers.push(s);
                    return Seen::Known;
                }
                Err(miss) => Some(miss),
            }
        } else {
            None
        };
        if let Some(i) = self.block {
            if let Some(s) = out.servers.get_mut(i) {
                if let Some(seen) = block_phrase(s, t) {
                    return seen;
                }
            }
        }
        if IndexPageLogging::take(&mut out.index_page_logging, text) {
            return Seen::Shared;
        }
        let Some((label, value)) = label_value(text) else {
            return Seen::Miss(row_miss.unwrap_or(Miss::new(t, "a line of onstat -g cluster")));
        };
        let key = label_key(label);
        let bad = |needs| Seen::Miss(Miss::new(value, needs));
        match key.as_str() {
            "primary server" if !value.is_empty() => {
                out.primary = Some(value.to_string());
                self.summary = true;
            }
            "current log page" => match whole_log_pos(value) {
                Some(p) => {
                    out.current_log_page = Some(p);
                    self.summary = true;
                }
                None => return bad("a log position (`16,476`)"),
            },
            "server name" if self.summary && !value.is_empty() => {
                self.table = false;
                let at = out.servers.iter().position(|s| s.name == value);
                self.block = Some(at.unwrap_or_else(|| {
                    out.servers.push(ClusterServer {
                        name: value.to_string(),
                        ..ClusterServer::default()
                    });
                    out.servers.len() - 1
                }));
            }
            _ => {
                let Some(s) = self.block.and_then(|i| out.servers.get_mut(i)) else {
                    return Seen::Miss(
                        row_miss.unwrap_or(Miss::new(t, "a line of onstat -g cluster")),
                    );
                };
                if let Err(needs) = block_line(s, &key, label, value) {
                    return bad(needs);
                }
            }
        }
        Seen::Known
    }
}

/// The block lines that are not `Label: value`: `SDS cycle not used`, `SDS cycle current: 20
/// ACKed: 20`, `Delayed Apply Not Used`, `Stop Apply Not Used`.
fn block_phrase<'a>(s: &mut ClusterServer, t: &'a str) -> Option<Seen<'a>> {
    if let Some(rest) = t.strip_prefix("SDS cycle") {
        let rest = trim_blanks(rest);
        if rest == "not used" {
            s.sds_cycle = None;
            return Some(Seen::Known);
        }
        return Some(match sds_cycle(rest) {
            Some(c) => {
                s.sds_cycle = Some(c);
                Seen::Known
            }
            None => Seen::Miss(Miss::new(rest, "`not used` or `current: N ACKed: M`")),
        });
    }
    for (prefix, slot) in [
        ("Delayed Apply", &mut s.delayed_apply),
        ("Stop Apply", &mut s.stop_apply),
    ] {
        if let Some(rest) = t.strip_prefix(prefix) {
            let rest = trim_blanks(rest.strip_prefix(':').unwrap_or(rest));
            *slot = Some(rest.to_string());
            return Some(Seen::Known);
        }
    }
    None
}

/// `current: 20 ACKed: 20`
fn sds_cycle(text: &str) -> Option<SdsCycle> {
    let parsed: PResult<'_, _> = all_consuming((
        tag("current:"),
        sp0,
        dec_u64,
        sp1,
        tag("ACKed:"),
        sp0,
        dec_u64,
    ))
    .parse(text);
    parsed
        .ok()
        .map(|(_, (_, _, current, _, _, _, acked))| SdsCycle { current, acked })
}

/// One `Label: value` line of a verbose block.
fn block_line(
    s: &mut ClusterServer,
    key: &str,
    label: &str,
    value: &str,
) -> Result<(), &'static str> {
    let pos = || whole_log_pos(value).ok_or("a log position (`1829,4349`)");
    match key {
        "type" => {
            let (sync, ty) = sync_type(value).ok_or("a type like `ASYNC (HDR)`")?;
            s.sync = Some(sync.to_string());
            s.server_type = Some(ty.to_string());
        }
        "control block" => s.control_block = Some(control_block(value).ok_or("`0x68cec1c0`")?),
        "server status" => s.server_status = Some(value.to_string()),
        "connection status" => s.connection = Some(value.to_string()),
        "last log page sent" => s.last_sent = Some(pos()?),
        "last log page acked" => s.last_acked = Some(pos()?),
        "last log page applied" => s.last_applied = Some(pos()?),
        "approximate log page backlog" => {
            s.backlog_pages = Some(whole_u64(value).ok_or("a number of pages")?)
        }
        "time of last ack" => s.last_ack_time = Some(Stamp::new(value)),
        "supports updates" => s.supports_updates = Some(yes_no(value).ok_or("`Yes` or `No`")?),
        _ => {
            s.other.insert(label.to_string(), value.to_string());
        }
    }
    Ok(())
}

/// A synchronisation mode: upper-case letters and `_` (`SYNC`, `ASYNC`, `NEAR_SYNC`).
fn mode_word(i: &str) -> PResult<'_, &str> {
    take_while1(|c: char| c.is_ascii_uppercase() || c == '_').parse(i)
}

/// `SYNC(SDS)` in a row, `ASYNC (HDR)` in a verbose block: (mode, type).
fn sync_type(text: &str) -> Option<(&str, &str)> {
    let parsed: PResult<'_, _> = (mode_word, sp0, char('('), mode_word, char(')')).parse(text);
    let (rest, (sync, _, _, ty, _)) = parsed.ok()?;
    trim_blanks(rest).is_empty().then_some((sync, ty))
}

/// A table row: `serv2  16,476  [16,476]  Yes  SYNC(SDS),Connected,Active`.
fn server_row(text: &str) -> Result<ClusterServer, Miss<'_>> {
    let i = lex::trim_start_bytes(text, lex::is_blank_byte);
    let (i, name) = column(i, lex::word, "a server name")?;
    let (i, acked) = column(i, log_pos, "the ACKed log position (`16,476`)")?;
    let (i, applied) = match column(i, log_pos, "") {
        Ok((i, p)) => (i, Some(p)),
        Err(_) => (i, None),
    };
    let (i, updates) = column(i, lex::word, "`Yes` or `No` (supports updates)")?;
    let supports_updates = yes_no(updates).ok_or(Miss::new(i, "`Yes` or `No`"))?;
    let status = trim_blanks(i);
    let (sync_ty, rest) = status.split_once(',').unwrap_or((status, ""));
    let (sync, ty) = sync_type(sync_ty).ok_or(Miss::new(
        status,
        "a status like `SYNC(SDS),Connected,Active`",
    ))?;
    let mut parts = rest.splitn(2, ',');
    let connection = parts.next().filter(|p| !p.is_empty());
    let server_status = parts.next().filter(|p| !p.is_empty());
    Ok(ClusterServer {
        name: name.to_string(),
        acked: Some(acked),
        applied,
        supports_updates: Some(supports_updates),
        status: Some(status.to_string()),
        server_type: Some(ty.to_string()),
        sync: Some(sync.to_string()),
        connection: connection.map(str::to_string),
        server_status: server_status.map(str::to_string),
        ..ClusterServer::default()
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn rows_with_and_without_the_applied_column() {
        let s =
            server_row("serv2  16,476       16,476       Yes          SYNC(SDS),Connected,Active")
                .expect("row");
        assert_eq!(s.applied, Some(LogPos { log: 16, page: 476 }));
        assert_eq!(
            (
                s.server_type.as_deref(),
                s.sync.as_deref(),
                s.server_status.as_deref()
            ),
            (Some("SDS"), Some("SYNC"), Some("Active"))
        );
        let s =
            server_row("london  1829,4349    No           ASYNC(HDR),Connected,On").expect("old");
        assert_eq!((s.applied, s.supports_updates), (None, Some(false)));
        assert!(server_row("serv2 16,476 Yes Connected").is_err());
        assert!(server_row("serv2 16,476 Maybe SYNC(SDS),Connected,Active").is_err());
    }

    #[test]
    fn phrases_and_types() {
        assert_eq!(sync_type("ASYNC (HDR)"), Some(("ASYNC", "HDR")));
        assert_eq!(sync_type("SYNC(SDS)"), Some(("SYNC", "SDS")));
        assert_eq!(sync_type("async (hdr)"), None);
        assert_eq!(
            sds_cycle("current: 20 ACKed: 20"),
            Some(SdsCycle {
                current: 20,
                acked: 20
            })
        );
    }
}
