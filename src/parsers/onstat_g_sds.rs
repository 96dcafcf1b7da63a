//! `onstat -g sds` (and `-g sds verbose`): shared-disk secondaries. On a primary, each SDS
//! server with its status, connection, last log page sent and, verbose, what it acknowledged
//! and its backlog; on an SDS server, its primary and the last log page received.

use super::ha::{
    control_block, label_key, label_value, local_server_type, server_row, whole_log_pos, whole_u64,
    yes_no, IndexPageLogging, LogPos, Stamp,
};
use super::header::Header;
use super::lex::{self, trim_blanks, Line};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::Addr;
use serde::Serialize;
use std::collections::BTreeMap;

/// The whole output of one `onstat -g sds` (brief or verbose).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGSds {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    /// `Local server type:` as printed: `Primary`, `Standard`, `SDS`.
    pub server_type: Option<String>,
    pub index_page_logging: Option<IndexPageLogging>,
    /// `Number of SDS servers:1`.
    pub sds_servers: Option<u64>,
    /// `Updater node alias name :server_1` (verbose, on the primary): the primary's alias.
    pub updater: Option<String>,
    /// On a primary: one per SDS server.
    pub servers: Vec<SdsServer>,
    /// On an SDS server: `Source server name:`, its primary.
    pub source: Option<String>,
    /// On an SDS server: `Server Status :`.
    pub status: Option<String>,
    /// On an SDS server: `Connection status:`.
    pub connection: Option<String>,
    /// On an SDS server: `Last log page received(log id,page):`.
    pub last_received: Option<LogPos>,
    /// On an SDS server: `Next log page to read(log id,page):`.
    pub next_page_to_read: Option<LogPos>,
    /// On an SDS server: `Last LSN acked (log id,pos):`, the last log record it applied and
    /// acknowledged (a byte position in the log, not a page).
    pub last_lsn_acked: Option<LogPos>,
    pub last_received_buffer: Option<u64>,
    pub last_acked_buffer: Option<u64>,
    /// Other `Label: value` lines of an SDS server's output (paging files, ...), as printed.
    #[serde(serialize_with = "super::numbers_or_texts")]
    pub other: BTreeMap<String, String>,
    pub unparsed: Vec<Unparsed>,
}

/// One SDS server as the primary sees it: a row of the brief table or a verbose block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct SdsServer {
    pub name: String,
    /// `Active`, `Inactive`, ... as printed.
    pub status: Option<String>,
    /// `Connected`, `Disconnected`, ... as printed.
    pub connection: Option<String>,
    /// `Last LPG sent (log id,page)`.
    pub last_sent: Option<LogPos>,
    pub supports_proxy_writes: Option<bool>,
    // The verbose block only:
    /// `SDS server control block: 0x46217640`.
    pub control_block: Option<Addr>,
    /// `server type: SDS`.
    pub server_type: Option<String>,
    /// `Last log page flushed(log id,page):`.
    pub last_flushed: Option<LogPos>,
    /// `Last LSN acked (log id,pos):` (a byte position, not a page).
    pub last_lsn_acked: Option<LogPos>,
    /// `Time of lastack:`; the epoch when nothing was ever acknowledged.
    pub last_ack_time: Option<Stamp>,
    /// `Approximate Log Page Backlog:`: how far the server lags, in pages.
    pub backlog_pages: Option<u64>,
    pub next_buffer: Option<u64>,
    pub last_acked_buffer: Option<u64>,
    /// Other `Label: value` lines of the block (SDS cycles, ...), as printed.
    #[serde(serialize_with = "super::numbers_or_texts")]
    pub other: BTreeMap<String, String>,
}

/// What a caller is told when the input is not `onstat -g sds` output at all.
const EXPECTED: &str =
    "onstat -g sds output: `Local server type: SDS`, `Number of SDS servers:N`, \
     `SDS server information`, the column header `SDS srv SDS srv Connection Last LPG sent`, a \
     server row (`C_151162 Active Connected 554,4998 Y`) or a verbose block \
     (`SDS server control block: 0x46217640`, `server name: ...`)";

/// Parses the output of `onstat -g sds` or `onstat -g sds verbose`.
pub fn parse(text: &str) -> Result<OnstatGSds, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatGSds, onstat);

/// Where the lines are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Part {
    #[default]
    Top,
    /// After the brief table's column header: rows.
    Table,
    /// Inside a verbose block (after `SDS server control block:`).
    Block,
}

#[derive(Default)]
struct Body {
    part: Part,
}

impl OnstatBody for Body {
    type Record = OnstatGSds;
    const EXPECTED: &'static str = EXPECTED;

    fn line<'a>(&mut self, out: &mut OnstatGSds, line: Line<'a>) -> Seen<'a> {
        let text = line.text;
        let t = trim_blanks(text);
        if let Some(ty) = local_server_type(text) {
            out.server_type = Some(ty.to_string());
            // `Primary` and `Standard` head `onstat -g rss` too.
            return if ty == "SDS" {
                Seen::Known
            } else {
                Seen::Shared
            };
        }
        if IndexPageLogging::take(&mut out.index_page_logging, text) {
            return Seen::Shared;
        }
        if t == "SDS server information" || t == "SDS server information:" {
            return Seen::Known;
        }
        if lex::starts_with_words(text, &["SDS", "srv", "SDS", "srv", "Connection"]) {
            self.part = Part::Table;
            return Seen::Known;
        }
        if self.part == Part::Table {
            if lex::starts_with_words(text, &["name", "status", "status"]) {
                return Seen::Known;
            }
            match server_row(text, "the last log page sent (`554,4998`)") {
                Ok(r) => {
                    out.servers.push(SdsServer {
                        name: r.name.to_string(),
                        status: Some(r.status.to_string()),
                        connection: Some(r.connection.to_string()),
                        last_sent: Some(r.pos),
                        supports_proxy_writes: r.proxy_writes,
                        ..SdsServer::default()
                    });
                    return Seen::Known;
                }
                Err(miss) if label_value(text).is_none() => return Seen::Miss(miss),
                Err(_) => {}
            }
        }
        let Some((label, value)) = label_value(text) else {
            return Seen::Miss(Miss::new(t, "a `Label: value` line or a server row"));
        };
        self.label(out, t, label, value)
    }
}

impl Body {
    fn label<'a>(
        &mut self,
        out: &mut OnstatGSds,
        t: &'a str,
        label: &str,
        value: &'a str,
    ) -> Seen<'a> {
        let key = label_key(label);
        let bad = |needs| Seen::Miss(Miss::new(value, needs));
        match key.as_str() {
            "number of sds servers" => match whole_u64(value) {
                Some(n) => out.sds_servers = Some(n),
                None => return bad("a number of servers"),
            },
            "updater node alias name" => out.updater = Some(value.to_string()),
            "sds server control block" => match control_block(value) {
                Some(a) => {
                    out.servers.push(SdsServer {
                        control_block: Some(a),
                        ..SdsServer::default()
                    });
                    self.part = Part::Block;
                }
                None => return bad("a control block address (`0x46217640`)"),
            },
            _ if self.part == Part::Block => {
                let Some(s) = out.servers.last_mut() else {
                    return Seen::Miss(Miss::new(t, "an SDS server block"));
                };
                if let Err(needs) = block_line(s, &key, label, value) {
                    return bad(needs);
                }
            }
            _ if out.server_type.as_deref() == Some("SDS") => {
                if let Err(needs) = secondary_line(out, &key, label, value) {
                    return bad(needs);
                }
            }
            _ => return Seen::Miss(Miss::new(t, "a line of onstat -g sds")),
        }
        Seen::Known
    }
}

/// One `Label: value` line of a verbose server block.
fn block_line(s: &mut SdsServer, key: &str, label: &str, value: &str) -> Result<(), &'static str> {
    let pos = || whole_log_pos(value).ok_or("a log position (`554,4998`)");
    let num = || whole_u64(value).ok_or("a number");
    match key {
        "server name" => s.name = value.to_string(),
        "server type" => s.server_type = Some(value.to_string()),
        "server status" => s.status = Some(value.to_string()),
        "connection status" => s.connection = Some(value.to_string()),
        "last log page sent" => s.last_sent = Some(pos()?),
        "last log page flushed" => s.last_flushed = Some(pos()?),
        "last lsn acked" => s.last_lsn_acked = Some(pos()?),
        "time of lastack" | "time of last ack" => s.last_ack_time = Some(Stamp::new(value)),
        "approximate log page backlog" => s.backlog_pages = Some(num()?),
        "sequence number of next buffer to send" => s.next_buffer = Some(num()?),
        "sequence number of last buffer acked" => s.last_acked_buffer = Some(num()?),
        "supports proxy writes" => {
            s.supports_proxy_writes = Some(yes_no(value).ok_or("`Y` or `N`")?)
        }
        _ => {
            s.other.insert(label.to_string(), value.to_string());
        }
    }
    Ok(())
}

/// One `Label: value` line of an SDS server's own output.
fn secondary_line(
    out: &mut OnstatGSds,
    key: &str,
    label: &str,
    value: &str,
) -> Result<(), &'static str> {
    let pos = || whole_log_pos(value).ok_or("a log position (`13,2377`)");
    let num = || whole_u64(value).ok_or("a number");
    match key {
        "server status" => out.status = Some(value.to_string()),
        "source server name" => out.source = Some(value.to_string()),
        "connection status" => out.connection = Some(value.to_string()),
        "last log page received" => out.last_received = Some(pos()?),
        "next log page to read" => out.next_page_to_read = Some(pos()?),
        "last lsn acked" => out.last_lsn_acked = Some(pos()?),
        "sequence number of last buffer received" => out.last_received_buffer = Some(num()?),
        "sequence number of last buffer acked" => out.last_acked_buffer = Some(num()?),
        _ => {
            out.other.insert(label.to_string(), value.to_string());
        }
    }
    Ok(())
}
