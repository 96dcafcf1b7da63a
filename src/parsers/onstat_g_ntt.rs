//! `onstat -g ntt`: network threads per session; the `address` column (`host|port|proto`) is the
//! client end of the session's socket, which joins a session to its Send-Q.

use super::header::Header;
use super::lex::{self, dec_u64, hex_addr, sp1, Line, PResult};
use super::Unparsed;
use super::{Miss, OnstatBody, Seen};
use crate::error::ParseError;
use crate::ids::{Addr, Sid};
use compact_str::CompactString;
use nom::Parser;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGNtt {
    pub header: Option<Header>,
    pub(crate) offline: Option<String>,
    /// Rows of `Individual thread network information`. Each row's date continues on the next
    /// line (under `open`); the two lines make one `NetThread`.
    pub threads: Vec<NetThread>,
    pub unparsed: Vec<Unparsed>,
}

impl OnstatGNtt {
    /// The network thread of this session, if it has one.
    pub fn session(&self, sid: Sid) -> Option<&NetThread> {
        self.threads.iter().find(|t| t.sid == sid)
    }
}

/// One session's network thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NetThread {
    pub netscb: Addr,
    /// `sqlexec`, `tlitcplst`, `sm_listen`, ...
    pub thread: CompactString,
    pub sid: Sid,
    /// Times as printed (`15:56:35`); `None` when the column is empty.
    pub open: Option<CompactString>,
    pub read: Option<CompactString>,
    pub write: Option<CompactString>,
    /// The date from the continuation line (`04/15/2001`), when there is one.
    pub date: Option<CompactString>,
    /// The `address` column, `host|port|proto`; `None` when empty.
    pub client: Option<ClientAddr>,
}

/// `10.1.2.3|51234|soctcp`: the client end of the connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClientAddr {
    /// A host name or an IP address, as printed (an IPv4-mapped IPv6 address as IPv4).
    pub host: CompactString,
    /// A port number or a service name, as printed (a number in JSON when it is one).
    #[serde(serialize_with = "super::number_or_text")]
    pub port: CompactString,
    /// `soctcp`, `tlitcp`, `onsoctcp`, `olsoctcp`, ... (empty when not printed).
    pub proto: CompactString,
}

impl ClientAddr {
    pub fn port_num(&self) -> Option<u16> {
        self.port.parse().ok()
    }

    /// `host|port[|proto]`; `None` without a `|` or with an empty host or port.
    pub(crate) fn parse(text: &str) -> Option<ClientAddr> {
        let mut parts = text.splitn(3, '|');
        let host = parts.next()?;
        let port = parts.next()?;
        let proto = parts.next().unwrap_or("");
        if host.is_empty() || port.is_empty() || proto.contains('|') {
            return None;
        }
        Some(ClientAddr {
            host: CompactString::new(super::sockets::unmapped_host(host)),
            port: CompactString::new(port),
            proto: CompactString::new(proto),
        })
    }
}

/// What a caller is told when the input is not `onstat -g ntt` output at all.
const EXPECTED: &str = "onstat -g ntt output: the title `global network information:` or \
     `Individual thread network information (times):`, the column header \
     `netscb thread name sid open read write address` or a thread row \
     (`142876c0 tlitcplst 8 13:24:37 12:02:03 theoden|1529|tlitcp`)";

/// Parses the output of `onstat -g ntt`.
pub fn parse(text: &str) -> Result<OnstatGNtt, ParseError> {
    super::drive::<Body>(text)
}

record!(OnstatGNtt, onstat; threads);

#[derive(Default)]
struct Body {
    /// The global numbers row is only known for what it is right under its column header.
    after_global_header: bool,
    /// A date line continues the row just before it, and only that one.
    last_row_open: bool,
}

impl OnstatBody for Body {
    type Record = OnstatGNtt;
    const EXPECTED: &'static str = EXPECTED;

    fn reserve(&mut self, out: &mut OnstatGNtt, lines: usize) {
        // Two lines a row: the row, then its date.
        out.threads.reserve(lines / 2);
    }

    fn line<'a>(&mut self, out: &mut OnstatGNtt, line: Line<'a>) -> Seen<'a> {
        let global_numbers = self.after_global_header && is_global_numbers(line.text);
        self.after_global_header = false;
        let continues = self.last_row_open;
        self.last_row_open = false;
        let miss = match thread_row(line.text) {
            Ok(t) => {
                // With a time or a client address the row is this table's; `48 sqlexec 26`
                // alone could be any table of threads (`onstat -g bth`'s blockers).
                let own = t.open.is_some() || t.client.is_some();
                out.threads.push(t);
                self.last_row_open = true;
                return if own { Seen::Known } else { Seen::Row };
            }
            Err(miss) => miss,
        };
        if continues {
            if let Some(date) = date_line(line.text) {
                if let Some(t) = out.threads.last_mut() {
                    t.date = Some(CompactString::new(date));
                    return Seen::Skipped;
                }
            }
        }
        if is_global_title(line.text) || is_thread_title(line.text) || is_thread_header(line.text) {
            Seen::Known
        } else if is_global_header(line.text) {
            self.after_global_header = true;
            Seen::Known
        } else if global_numbers {
            // Known for what it is; the global counters are not used.
            Seen::Skipped
        } else {
            Seen::Miss(miss)
        }
    }
}

/// `global network information:`
fn is_global_title(text: &str) -> bool {
    text.trim() == "global network information:"
}

/// `  #netscb connects     read    write    q-free  q-limits  q-exceed  alloc/max   slow_DNS`
fn is_global_header(text: &str) -> bool {
    lex::starts_with_words(text, &["#netscb", "connects", "read", "write"])
}

/// `  22/  27     4431   656504   670705    2/   2  240/  10    0/   0     0 / 0        12`
fn is_global_numbers(text: &str) -> bool {
    text.bytes().any(|b| b.is_ascii_digit())
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'/' || b == b' ' || b == b'\t')
}

/// `Individual thread network information (times):`
fn is_thread_title(text: &str) -> bool {
    text.trim() == "Individual thread network information (times):"
}

/// `  netscb thread name    sid       open       read      write address`
fn is_thread_header(text: &str) -> bool {
    lex::starts_with_words(text, &["netscb", "thread", "name", "sid"])
}

/// The continuation line holding only the row's date: `                      04/15/2001`.
fn date_line(text: &str) -> Option<&str> {
    let t = super::lex::trim_blanks(text);
    let b = t.as_bytes();
    let ok = b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            2 | 5 => *c == b'/',
            _ => c.is_ascii_digit(),
        });
    ok.then_some(t)
}

/// A time as printed: `15:56:35`.
fn is_time(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() == 8
        && b.iter().enumerate().all(|(i, c)| match i {
            2 | 5 => *c == b':',
            _ => c.is_ascii_digit(),
        })
}

/// Splits the first blank-separated word off `i` (which starts at a non-blank): (word, rest).
fn next_word(i: &str) -> (&str, &str) {
    let end = i.find([' ', '\t']).unwrap_or(i.len());
    (
        &i[..end],
        super::lex::trim_start_bytes(&i[end..], super::lex::is_blank_byte),
    )
}

/// One row: netscb, thread name and sid from the left; then up to three times (open, read,
/// write: any of them may be missing, so they are told by their `HH:MM:SS` shape and fill the
/// columns from the left) and the address, when there is one.
fn thread_row(text: &str) -> Result<NetThread, Miss<'_>> {
    let i = super::lex::trim_start_bytes(text, super::lex::is_blank_byte);
    let parsed: PResult<'_, _> = (hex_addr, sp1).parse(i);
    let (j, (netscb, _)) = parsed.map_err(|_| Miss::new(i, "a netscb address (hex)"))?;
    let (thread, k) = next_word(j);
    if thread.is_empty() || k.is_empty() {
        return Err(Miss::new(j, "a thread name and a session id"));
    }
    let parsed: PResult<'_, _> = dec_u64(k);
    let (mut rest, sid) = match parsed {
        Ok((r, sid)) if r.is_empty() || r.starts_with([' ', '\t']) => (
            super::lex::trim_start_bytes(r, super::lex::is_blank_byte),
            sid,
        ),
        _ => return Err(Miss::new(k, "a session id (a number)")),
    };
    let mut times: [Option<CompactString>; 3] = [None, None, None];
    for slot in times.iter_mut() {
        let (w, after) = next_word(rest);
        if !is_time(w) {
            break;
        }
        *slot = Some(CompactString::new(w));
        rest = after;
    }
    let client = if rest.is_empty() {
        None
    } else {
        let (w, after) = next_word(rest);
        if !after.is_empty() {
            return Err(Miss::new(after, "the end of the row after the address"));
        }
        Some(ClientAddr::parse(w).ok_or(Miss::new(
            rest,
            "a time (`15:56:35`) or an address `host|port|proto`",
        ))?)
    };
    let [open, read, write] = times;
    Ok(NetThread {
        netscb,
        thread: CompactString::new(thread),
        sid: Sid(sid),
        open,
        read,
        write,
        date: None,
        client,
    })
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn rows_with_missing_times() {
        let t = thread_row(
            "142876c0 tlitcplst        8   13:24:37   12:02:03            theoden|1529|tlitcp",
        )
        .expect("row");
        assert_eq!(t.sid, Sid(8));
        assert_eq!(t.open.as_deref(), Some("13:24:37"));
        assert_eq!(t.read.as_deref(), Some("12:02:03"));
        assert_eq!(t.write, None);
        let c = t.client.expect("client");
        assert_eq!(
            (c.host.as_str(), c.port_num(), c.proto.as_str()),
            ("theoden", Some(1529), "tlitcp")
        );
        let t = thread_row("14278c28 sm_listen        5   13:24:36").expect("row");
        assert_eq!((t.read, t.client), (None, None));
    }

    #[test]
    fn not_rows() {
        assert!(thread_row("netscb thread name sid").is_err());
        assert!(thread_row("14278c28 sm_listen 5x 13:24:36").is_err());
        assert!(thread_row("14278c28 sm_listen 5 13:24:36 nopipe").is_err());
        assert!(thread_row("14278c28 sm_listen 5 13:24:36 a|1|b extra").is_err());
        assert!(ClientAddr::parse("|1|x").is_none());
        assert!(ClientAddr::parse("h|1|x|y").is_none());
        assert_eq!(
            ClientAddr::parse("h|svc").map(|c| c.proto),
            Some(CompactString::new(""))
        );
    }

    #[test]
    fn dates_and_numbers() {
        assert_eq!(date_line("      04/15/2001"), Some("04/15/2001"));
        assert_eq!(date_line("04/15/01"), None);
        assert!(is_global_numbers("  22/  27     4431     0 / 0        12"));
        assert!(!is_global_numbers("   "));
        assert!(!is_global_numbers("22 a"));
    }
}
