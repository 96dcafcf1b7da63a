//! Pieces the replication (HA) outputs share: `onstat -g rss`, `-g sds`, `-g cluster` and `-g dri`
//! print log positions (`16,476`), `Label: value` lines (some with `;` or ` :`), the local server
//! type and the index page logging lines, and times that may be the epoch (never).

use super::lex::{self, dec_u32, dec_u64, hex_addr, sp0, trim_blanks, PResult};
use super::onstat_b::column;
use super::Miss;
use crate::ids::Addr;
use nom::bytes::complete::tag;
use nom::character::complete::char;
use nom::combinator::all_consuming;
use nom::Parser;
use serde::{Serialize, Serializer};

/// A position in the logical log: `(log id, page)` as printed (`16,476`), in JSON `[16, 476]`.
/// For an LSN (`Last LSN acked (log id,pos)`) the second number is a byte position instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogPos {
    pub log: u32,
    pub page: u64,
}

impl Serialize for LogPos {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (self.log, self.page).serialize(s)
    }
}

impl LogPos {
    /// Pages from `self` forward to `later`, when both are in the same log (across logs the
    /// distance depends on each log's size, which these outputs do not print).
    pub fn pages_to(self, later: LogPos) -> Option<u64> {
        (self.log == later.log)
            .then(|| later.page.checked_sub(self.page))
            .flatten()
    }
}

/// `20714,29007`, `16, 476`
pub(crate) fn log_pos(i: &str) -> PResult<'_, LogPos> {
    let (i, (log, _, _, _, page)) = (dec_u32, sp0, char(','), sp0, dec_u64).parse(i)?;
    Ok((i, LogPos { log, page }))
}

/// The whole of `text` (blanks around allowed) as a log position.
pub(crate) fn whole_log_pos(text: &str) -> Option<LogPos> {
    all_consuming(log_pos)
        .parse(trim_blanks(text))
        .ok()
        .map(|(_, p)| p)
}

/// A time as printed (`2013/06/04 14:22:37`, `2020-05-23.06:13:29`). A server that never got an
/// acknowledgement prints the epoch in its own time zone (`1969/12/31 19:00:00` on the oninit
/// page): `epoch` says so, and the text stays as printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stamp {
    pub printed: String,
    /// The time is time_t 0 in some zone: it never happened.
    pub epoch: bool,
}

impl Stamp {
    pub(crate) fn new(text: &str) -> Stamp {
        let printed = trim_blanks(text);
        Stamp {
            printed: printed.to_string(),
            epoch: is_epoch(printed),
        }
    }

    /// The time, unless it is the epoch placeholder.
    pub fn when(&self) -> Option<&str> {
        (!self.epoch).then_some(self.printed.as_str())
    }
}

/// time_t 0 printed in any zone from UTC-12 to UTC+14: 1969-12-31 from 12:00, or 1970-01-01
/// before 15:00 (with `/` or `-` between the parts).
fn is_epoch(t: &str) -> bool {
    let date: String = t
        .chars()
        .take(10)
        .map(|c| if c == '-' { '/' } else { c })
        .collect();
    let hour: Option<u32> = t.get(11..13).and_then(|h| h.parse().ok());
    match (date.as_str(), hour) {
        ("1969/12/31", Some(h)) => h >= 12,
        ("1970/01/01", Some(h)) => h < 15,
        ("1969/12/31" | "1970/01/01", None) => true,
        _ => false,
    }
}

/// A `Label: value` line split in two, both trimmed: `Primary Server:serv1`, `Server Status :
/// Active`, and the cluster quirk `Last log page acked (log id, page); 1829,4525` (a `;` after a
/// parenthesised unit). The label must start with a letter; the value may be empty.
pub(crate) fn label_value(text: &str) -> Option<(&str, &str)> {
    let t = trim_blanks(text);
    if !t.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let colon = t.find(':');
    // `); ` ends the label only before any colon (values hold colons: `14:22:37`).
    let semi = t
        .find(");")
        .filter(|s| colon.is_none_or(|c| *s < c))
        .map(|s| s + 1);
    let at = semi.or(colon)?;
    let label = trim_blanks(&t[..at]);
    if label.is_empty() {
        return None;
    }
    Some((label, trim_blanks(&t[at + 1..])))
}

/// A label in a canonical form for matching: lower case, the parenthesised unit dropped
/// (`Next log page to send(log id,page)` → `next log page to send`), blanks collapsed.
pub(crate) fn label_key(label: &str) -> String {
    let base = match label.find('(') {
        Some(i) => &label[..i],
        None => label,
    };
    let mut out = String::with_capacity(base.len());
    for w in base.split([' ', '\t']).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&w.to_ascii_lowercase());
    }
    out
}

/// `Local server type: Primary` → `Primary`.
pub(crate) fn local_server_type(text: &str) -> Option<&str> {
    let (label, value) = label_value(text)?;
    (label_key(label) == "local server type" && !value.is_empty() && !value.contains([' ', '\t']))
        .then_some(value)
}

/// The index page logging lines (`Index page logging status: Enabled`, `Index page logging was
/// enabled at: 2013/12/11 14:05:17`) that `-g rss`, `-g sds` and `-g cluster` all print.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct IndexPageLogging {
    /// `Enabled` or `Disabled` as printed.
    pub status: Option<String>,
    /// The `was enabled at` time as printed.
    pub enabled_at: Option<String>,
}

impl IndexPageLogging {
    /// Takes the line when it is one of the two; false otherwise.
    pub(crate) fn take(this: &mut Option<IndexPageLogging>, text: &str) -> bool {
        // Most lines are not these two: skip them before building a key.
        if !trim_blanks(text).starts_with("Index page logging") {
            return false;
        }
        let Some((label, value)) = label_value(text) else {
            return false;
        };
        let key = label_key(label);
        let ipl = this.get_or_insert_with(IndexPageLogging::default);
        match key.as_str() {
            "index page logging status" => ipl.status = Some(value.to_string()),
            "index page logging was enabled at" => ipl.enabled_at = Some(value.to_string()),
            _ => {
                if ipl.status.is_none() && ipl.enabled_at.is_none() {
                    *this = None;
                }
                return false;
            }
        }
        true
    }
}

/// `Y`/`Yes` → true, `N`/`No` → false (as printed in the proxy-writes and updates columns).
pub(crate) fn yes_no(word: &str) -> Option<bool> {
    match word {
        "Y" | "Yes" | "YES" | "yes" => Some(true),
        "N" | "No" | "NO" | "no" => Some(false),
        _ => None,
    }
}

/// A number as the whole value (`0`, `97104`).
pub(crate) fn whole_u64(text: &str) -> Option<u64> {
    all_consuming(dec_u64)
        .parse(trim_blanks(text))
        .ok()
        .map(|(_, n)| n)
}

/// A control block address as printed: `0x64f64758`.
pub(crate) fn control_block(value: &str) -> Option<Addr> {
    let parsed: PResult<'_, _> = all_consuming((tag("0x"), hex_addr)).parse(trim_blanks(value));
    parsed.ok().map(|(_, (_, a))| a)
}

/// A row of the brief server tables of `-g rss` and `-g sds` on a primary:
/// `name  status  connection  log,page  [Y|N]` (the last column, proxy writes, only in newer
/// builds).
pub(crate) struct ServerRow<'a> {
    pub(crate) name: &'a str,
    pub(crate) status: &'a str,
    pub(crate) connection: &'a str,
    pub(crate) pos: LogPos,
    pub(crate) proxy_writes: Option<bool>,
}

/// Reads a [`ServerRow`]; `pos_is` names the log position column in the error.
pub(crate) fn server_row<'a>(
    text: &'a str,
    pos_is: &'static str,
) -> Result<ServerRow<'a>, Miss<'a>> {
    let i = lex::trim_start_bytes(text, lex::is_blank_byte);
    let (i, name) = column(i, lex::word, "a server name")?;
    let (i, status) = column(i, lex::word, "a server status")?;
    let (i, connection) = column(i, lex::word, "a connection status")?;
    let parsed: PResult<'_, _> = log_pos(i);
    let (rest, pos) = parsed.map_err(|_| Miss::new(i, pos_is))?;
    let rest = trim_blanks(rest);
    let proxy_writes = if rest.is_empty() {
        None
    } else {
        Some(yes_no(rest).ok_or(Miss::new(rest, "`Y` or `N` (supports proxy writes)"))?)
    };
    Ok(ServerRow {
        name,
        status,
        connection,
        pos,
        proxy_writes,
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_values() {
        assert_eq!(
            label_value("Primary Server:serv1"),
            Some(("Primary Server", "serv1"))
        );
        assert_eq!(
            label_value("\tServer Status : Active"),
            Some(("Server Status", "Active"))
        );
        assert_eq!(
            label_value("Last log page acked (log id, page); 1829,4525"),
            Some(("Last log page acked (log id, page)", "1829,4525"))
        );
        assert_eq!(
            label_value("Time of last ack: 2013/06/04 14:22:37"),
            Some(("Time of last ack", "2013/06/04 14:22:37"))
        );
        assert_eq!(label_value("SDS cycle not used"), None);
        assert_eq!(label_value(": x"), None);
        assert_eq!(
            label_key("Next log page to send(log id,page)"),
            "next log page to send"
        );
        assert_eq!(
            label_key("Approximate Log Page Backlog"),
            "approximate log page backlog"
        );
    }

    #[test]
    fn log_positions() {
        assert_eq!(
            whole_log_pos(" 20714,29007"),
            Some(LogPos {
                log: 20714,
                page: 29007
            })
        );
        assert_eq!(
            whole_log_pos("16, 476"),
            Some(LogPos { log: 16, page: 476 })
        );
        assert_eq!(whole_log_pos("16,476 x"), None);
        let a = LogPos { log: 6, page: 35 };
        assert_eq!(a.pages_to(LogPos { log: 6, page: 36 }), Some(1));
        assert_eq!(a.pages_to(LogPos { log: 7, page: 1 }), None);
        assert_eq!(
            serde_json::to_string(&a).expect("json"),
            "[6,35]".to_string()
        );
    }

    #[test]
    fn epoch_stamps() {
        assert!(Stamp::new("1969/12/31 19:00:00").epoch);
        assert!(Stamp::new("1970-01-01.00:00:00").epoch);
        assert!(!Stamp::new("2013/06/04 14:22:37").epoch);
        assert!(!Stamp::new("1969/12/31 09:00:00").epoch);
        assert_eq!(Stamp::new("1969/12/31 19:00:00").when(), None);
    }
}
