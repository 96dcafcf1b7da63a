//! `onstat -g rss` (and `-g rss verbose`): remote standalone secondaries. On a primary, each RSS
//! server with its status and log positions (sent, acked, applied), backlog and transmission
//! state; on an RSS server, its source and the last log page received.

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

/// The whole output of one `onstat -g rss` (brief or verbose).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGRss {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    /// `Local server type:` as printed: `Primary`, `Standard`, `RSS`, ...
    pub server_type: Option<String>,
    pub index_page_logging: Option<IndexPageLogging>,
    /// `Number of RSS servers: 2`.
    pub rss_servers: Option<u64>,
    /// On a primary (or a standard server with RSS servers defined): one per RSS server.
    pub servers: Vec<RssServer>,
    /// On an RSS server: `Source server name:`.
    pub source: Option<String>,
    /// On an RSS server: `Server Status :` (`Active`, ...).
    pub status: Option<String>,
    /// On an RSS server: `Connection status:` (`Connected`, `Disconnected`).
    pub connection: Option<String>,
    /// On an RSS server: `Last log page received(log id,page):`.
    pub last_received: Option<LogPos>,
    /// On an RSS server: `Sequence number of last buffer received:`.
    pub last_received_buffer: Option<u64>,
    /// On an RSS server: `Sequence number of last buffer acked:`.
    pub last_acked_buffer: Option<u64>,
    /// Other `Label: value` lines of an RSS server's output, label → value as printed.
    #[serde(serialize_with = "super::numbers_or_texts")]
    pub other: BTreeMap<String, String>,
    pub unparsed: Vec<Unparsed>,
}

/// One RSS server as the primary sees it: a row of the brief table or a verbose block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct RssServer {
    pub name: String,
    /// `Active`, `Defined`, `Inactive`, ... as printed.
    pub status: Option<String>,
    /// `Connected`, `Disconnected`, ... as printed.
    pub connection: Option<String>,
    /// `Next LPG to send (log id,page)`.
    pub next_page_to_send: Option<LogPos>,
    /// `Supports Proxy Writes` (`Y`/`N`); `None` in layouts without it.
    pub supports_proxy_writes: Option<bool>,
    // The verbose block only:
    /// `RSS Server control block: 0x64f64758`.
    pub control_block: Option<Addr>,
    /// `RSS flow control:384/352` as printed (pages: on / off thresholds).
    pub flow_control: Option<String>,
    /// `Log transmission status:` `Active` or `Blocked`.
    pub transmission: Option<String>,
    pub last_acked: Option<LogPos>,
    pub last_applied: Option<LogPos>,
    /// `Time of Last Acknowledgement:`; the epoch when nothing was ever acknowledged.
    pub last_ack_time: Option<Stamp>,
    /// `Pending Log Pages to be ACKed:`.
    pub pending_ack_pages: Option<u64>,
    /// `Approximate Log Page Backlog:`.
    pub backlog_pages: Option<u64>,
    /// `Sequence number of next buffer to send:`.
    pub next_buffer: Option<u64>,
    /// `Sequence number of last buffer acked:`.
    pub last_acked_buffer: Option<u64>,
    /// `Total number of delay(s):`.
    pub delays: Option<u64>,
    /// `Time of last delay:` as printed.
    pub last_delay_time: Option<String>,
    /// Other `Label: value` lines of the block, label → value as printed.
    #[serde(serialize_with = "super::numbers_or_texts")]
    pub other: BTreeMap<String, String>,
}

impl RssServer {
    /// Pages not yet acknowledged: the backlog when printed, else next-to-send minus acked
    /// within one log.
    pub fn lag_pages(&self) -> Option<u64> {
        self.backlog_pages.or_else(|| {
            let acked = self.last_acked?;
            let next = self.next_page_to_send?;
            acked.pages_to(next).map(|n| n.saturating_sub(1))
        })
    }
}

/// What a caller is told when the input is not `onstat -g rss` output at all.
const EXPECTED: &str =
    "onstat -g rss output: `Local server type: RSS`, `Number of RSS servers: N`, \
     `RSS Server information:`, the column header `RSS Srv RSS Srv Connection Next LPG to send`, \
     a server row (`theoden Active Connected 20714,29007`) or a verbose block \
     (`RSS Server control block: 0x64f64758`, `RSS server name: ...`)";

/// Parses the output of `onstat -g rss` or `onstat -g rss verbose`.
pub fn parse(text: &str) -> Result<OnstatGRss, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatGRss, onstat);

/// Where the lines are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Part {
    #[default]
    Top,
    /// After the brief table's column header: rows.
    Table,
    /// Inside a verbose block (after `RSS Server control block:` or `RSS server name:`).
    Block,
}

#[derive(Default)]
struct Body {
    part: Part,
}

impl OnstatBody for Body {
    type Record = OnstatGRss;
    const EXPECTED: &'static str = EXPECTED;

    fn line<'a>(&mut self, out: &mut OnstatGRss, line: Line<'a>) -> Seen<'a> {
        let text = line.text;
        let t = trim_blanks(text);
        if let Some(ty) = local_server_type(text) {
            out.server_type = Some(ty.to_string());
            // Only an RSS server's own output says `RSS` here; `Primary` and `Standard` head
            // `onstat -g sds` too.
            return if ty == "RSS" {
                Seen::Known
            } else {
                Seen::Shared
            };
        }
        if IndexPageLogging::take(&mut out.index_page_logging, text) {
            return Seen::Shared;
        }
        if t == "RSS Server information:" {
            return Seen::Known;
        }
        if lex::starts_with_words(text, &["RSS", "Srv", "RSS", "Srv", "Connection"]) {
            self.part = Part::Table;
            return Seen::Known;
        }
        if self.part == Part::Table && lex::starts_with_words(text, &["name", "status", "status"]) {
            return Seen::Known;
        }
        if self.part == Part::Table {
            match brief_row(text) {
                Ok(s) => {
                    out.servers.push(s);
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
        out: &mut OnstatGRss,
        t: &'a str,
        label: &str,
        value: &'a str,
    ) -> Seen<'a> {
        let key = label_key(label);
        let bad = |needs| Seen::Miss(Miss::new(value, needs));
        match key.as_str() {
            "number of rss servers" => match whole_u64(value) {
                Some(n) => out.rss_servers = Some(n),
                None => return bad("a number of servers"),
            },
            "rss server control block" => match control_block(value) {
                Some(a) => {
                    out.servers.push(RssServer {
                        control_block: Some(a),
                        ..RssServer::default()
                    });
                    self.part = Part::Block;
                }
                None => return bad("a control block address (`0x64f64758`)"),
            },
            "rss server name" => {
                match out.servers.last_mut() {
                    Some(s) if self.part == Part::Block && s.name.is_empty() => {
                        s.name = value.to_string()
                    }
                    _ => out.servers.push(RssServer {
                        name: value.to_string(),
                        ..RssServer::default()
                    }),
                }
                self.part = Part::Block;
            }
            _ if self.part == Part::Block => {
                let Some(s) = out.servers.last_mut() else {
                    return Seen::Miss(Miss::new(t, "an RSS server block"));
                };
                if let Err(needs) = block_line(s, &key, label, value) {
                    return bad(needs);
                }
            }
            _ if out.server_type.as_deref() == Some("RSS") => {
                if let Err(needs) = secondary_line(out, &key, label, value) {
                    return bad(needs);
                }
            }
            _ => return Seen::Miss(Miss::new(t, "a line of onstat -g rss")),
        }
        Seen::Known
    }
}

/// One `Label: value` line of a verbose server block.
fn block_line(s: &mut RssServer, key: &str, label: &str, value: &str) -> Result<(), &'static str> {
    let pos = || whole_log_pos(value).ok_or("a log position (`6,36`)");
    let num = || whole_u64(value).ok_or("a number");
    match key {
        "rss server status" => s.status = Some(value.to_string()),
        "rss connection status" => s.connection = Some(value.to_string()),
        "rss flow control" => s.flow_control = Some(value.to_string()),
        "log transmission status" => s.transmission = Some(value.to_string()),
        "next log page to send" => s.next_page_to_send = Some(pos()?),
        "last log page acked" => s.last_acked = Some(pos()?),
        "last log page applied" => s.last_applied = Some(pos()?),
        "time of last acknowledgement" | "time of last acknowledgment" => {
            s.last_ack_time = Some(Stamp::new(value))
        }
        "pending log pages to be acked" => s.pending_ack_pages = Some(num()?),
        "approximate log page backlog" => s.backlog_pages = Some(num()?),
        "sequence number of next buffer to send" => s.next_buffer = Some(num()?),
        "sequence number of last buffer acked" => s.last_acked_buffer = Some(num()?),
        "supports proxy writes" => {
            s.supports_proxy_writes = Some(yes_no(value).ok_or("`Y` or `N`")?)
        }
        "total number of delay" => s.delays = Some(num()?),
        "time of last delay" => s.last_delay_time = Some(value.to_string()),
        _ => {
            s.other.insert(label.to_string(), value.to_string());
        }
    }
    Ok(())
}

/// One `Label: value` line of an RSS server's own output.
fn secondary_line(
    out: &mut OnstatGRss,
    key: &str,
    label: &str,
    value: &str,
) -> Result<(), &'static str> {
    let num = || whole_u64(value).ok_or("a number");
    match key {
        "server status" => out.status = Some(value.to_string()),
        "source server name" => out.source = Some(value.to_string()),
        "connection status" => out.connection = Some(value.to_string()),
        "last log page received" => {
            out.last_received = Some(whole_log_pos(value).ok_or("a log position (`20,45822`)")?)
        }
        "sequence number of last buffer received" => out.last_received_buffer = Some(num()?),
        "sequence number of last buffer acked" => out.last_acked_buffer = Some(num()?),
        _ => {
            out.other.insert(label.to_string(), value.to_string());
        }
    }
    Ok(())
}

/// A brief table row: `theoden  Active  Connected  20714,29007  [Y|N]`.
fn brief_row(text: &str) -> Result<RssServer, Miss<'_>> {
    let r = server_row(text, "the next log page to send (`20714,29007`)")?;
    Ok(RssServer {
        name: r.name.to_string(),
        status: Some(r.status.to_string()),
        connection: Some(r.connection.to_string()),
        next_page_to_send: Some(r.pos),
        supports_proxy_writes: r.proxy_writes,
        ..RssServer::default()
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn brief_rows() {
        let s = brief_row("theoden      Active       Connected           20714,29007").expect("4");
        assert_eq!(
            s.next_page_to_send,
            Some(LogPos {
                log: 20714,
                page: 29007
            })
        );
        assert_eq!(s.supports_proxy_writes, None);
        let s = brief_row("ifx2  Defined  Disconnected  0,0  N").expect("5");
        assert_eq!(s.supports_proxy_writes, Some(false));
        assert!(brief_row("ifx2 Active Connected 20,45823 maybe").is_err());
        assert!(brief_row("ifx2 Active Connected").is_err());
    }

    #[test]
    fn lag_from_positions_or_backlog() {
        let mut s = RssServer {
            next_page_to_send: Some(LogPos { log: 6, page: 36 }),
            last_acked: Some(LogPos { log: 6, page: 30 }),
            ..RssServer::default()
        };
        assert_eq!(s.lag_pages(), Some(5));
        s.backlog_pages = Some(97_104);
        assert_eq!(s.lag_pages(), Some(97_104));
    }
}
