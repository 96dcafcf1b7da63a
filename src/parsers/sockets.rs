//! Socket tables: `/proc/net/tcp{,6}`, Linux and AIX `netstat`, `ss`. One shape for all of them.

use super::lex::{dec_u64, header_words, lines, sp0, sp1, starts_with_words, Line, PResult};
use super::Unparsed;
use crate::error::ParseError;
use compact_str::{CompactString, ToCompactString};
use nom::bytes::complete::take_while_m_n;
use nom::character::complete::char;
use nom::Parser;
use serde::{Serialize, Serializer};
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Sockets {
    pub sockets: Vec<Socket>,
    pub unparsed: Vec<Unparsed>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Socket {
    /// `tcp`, `tcp6`, `udp`, ... as printed (`/proc/net/tcp6` rows are `tcp6`).
    pub proto: CompactString,
    pub recv_q: u64,
    pub send_q: u64,
    pub local: Endpoint,
    pub remote: Endpoint,
    /// netstat's spelling; `None` where netstat prints nothing (udp).
    pub state: Option<TcpState>,
    /// `PID/Program name` (netstat -p) or ss's `users:(...)`, when printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
}

/// One end of a connection. `host` is an IP address, a (possibly cut) host name, or `*`;
/// `port` is a number, a service name (netstat without -n) or `*`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Endpoint {
    pub host: CompactString,
    pub port: CompactString,
}

impl Endpoint {
    /// An IPv4-mapped IPv6 host (`::ffff:10.20.1.5`, a dual-stack listener's view of an IPv4
    /// client) becomes the plain IPv4 address, so one client is one host everywhere.
    pub fn new(host: &str, port: &str) -> Self {
        Endpoint {
            host: unmapped_host(host).into(),
            port: port.into(),
        }
    }

    /// The port as a number, when it was printed as one.
    pub fn port_num(&self) -> Option<u16> {
        self.port.parse().ok()
    }

    pub(crate) fn is_ipv6(&self) -> bool {
        self.host.contains(':')
    }
}

/// `::ffff:10.20.1.5` (any case, or `::FFFF:0a14:0105` in hex) → `10.20.1.5`; any other host
/// as it was.
pub fn unmapped_host(host: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    if !host
        .get(..7)
        .is_some_and(|p| p.eq_ignore_ascii_case("::ffff:"))
    {
        return Cow::Borrowed(host);
    }
    let tail = &host[7..];
    if tail.parse::<Ipv4Addr>().is_ok() {
        return Cow::Borrowed(tail);
    }
    match host
        .parse::<Ipv6Addr>()
        .ok()
        .and_then(|a| a.to_ipv4_mapped())
    {
        Some(v4) => Cow::Owned(v4.to_string()),
        None => Cow::Borrowed(host),
    }
}

/// `a.b.c.d:port`, `[v6]:port`, `name:port`, `*:*`.
impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_ipv6() {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl Serialize for Endpoint {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// TCP states, serialized as netstat spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TcpState {
    Established,
    SynSent,
    SynRecv,
    FinWait1,
    FinWait2,
    TimeWait,
    Close,
    CloseWait,
    LastAck,
    Listen,
    Closing,
    NewSynRecv,
    /// ss's `UNCONN` (udp and raw sockets).
    Unconn,
    Unknown,
}

impl TcpState {
    /// netstat's spelling.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TcpState::Established => "ESTABLISHED",
            TcpState::SynSent => "SYN_SENT",
            TcpState::SynRecv => "SYN_RECV",
            TcpState::FinWait1 => "FIN_WAIT1",
            TcpState::FinWait2 => "FIN_WAIT2",
            TcpState::TimeWait => "TIME_WAIT",
            TcpState::Close => "CLOSE",
            TcpState::CloseWait => "CLOSE_WAIT",
            TcpState::LastAck => "LAST_ACK",
            TcpState::Listen => "LISTEN",
            TcpState::Closing => "CLOSING",
            TcpState::NewSynRecv => "NEW_SYN_RECV",
            TcpState::Unconn => "UNCONN",
            TcpState::Unknown => "UNKNOWN",
        }
    }
}

impl TcpState {
    /// The kernel's `st` code in /proc/net/tcp.
    pub(crate) fn from_kernel(code: u8) -> TcpState {
        match code {
            0x01 => TcpState::Established,
            0x02 => TcpState::SynSent,
            0x03 => TcpState::SynRecv,
            0x04 => TcpState::FinWait1,
            0x05 => TcpState::FinWait2,
            0x06 => TcpState::TimeWait,
            0x07 => TcpState::Close,
            0x08 => TcpState::CloseWait,
            0x09 => TcpState::LastAck,
            0x0A => TcpState::Listen,
            0x0B => TcpState::Closing,
            0x0C => TcpState::NewSynRecv,
            _ => TcpState::Unknown,
        }
    }

    /// netstat's (`ESTABLISHED`, `TIME_WAIT`) and ss's (`ESTAB`, `TIME-WAIT`) spellings.
    pub(crate) fn from_name(name: &str) -> Option<TcpState> {
        let n = name
            .trim_matches(|c| c == '(' || c == ')')
            .replace('-', "_");
        Some(match n.to_ascii_uppercase().as_str() {
            "ESTABLISHED" | "ESTAB" => TcpState::Established,
            // AIX, BSD and Solaris spell some states apart: `SYN_RCVD`, `FIN_WAIT_1`,
            // `CLOSED`, Windows `LISTENING`; a few print them run together (`TIMEWAIT`).
            "SYN_RECV" | "SYN_RCVD" | "SYN_RECEIVED" | "SYNRECV" => TcpState::SynRecv,
            "SYN_SENT" | "SYNSENT" => TcpState::SynSent,
            "FIN_WAIT1" | "FIN_WAIT_1" | "FINWAIT1" | "FINWAIT_1" => TcpState::FinWait1,
            "FIN_WAIT2" | "FIN_WAIT_2" | "FINWAIT2" | "FINWAIT_2" => TcpState::FinWait2,
            "TIME_WAIT" | "TIMEWAIT" | "TIMED_WAIT" => TcpState::TimeWait,
            "CLOSE" | "CLOSED" => TcpState::Close,
            "CLOSE_WAIT" | "CLOSEWAIT" => TcpState::CloseWait,
            "LAST_ACK" | "LASTACK" => TcpState::LastAck,
            "LISTEN" | "LISTENING" => TcpState::Listen,
            "CLOSING" => TcpState::Closing,
            "NEW_SYN_RECV" => TcpState::NewSynRecv,
            "UNCONN" => TcpState::Unconn,
            "UNKNOWN" => TcpState::Unknown,
            _ => return None,
        })
    }
}

/// An IPv4 address as /proc/net/tcp prints it: 8 hex digits, the 32-bit value in host order.
fn proc_ipv4(hex: &str) -> Option<Ipv4Addr> {
    let v = u32::from_str_radix(hex, 16).ok()?;
    Some(Ipv4Addr::from(host_order_bytes(v)))
}

fn host_order_bytes(v: u32) -> [u8; 4] {
    if cfg!(target_endian = "little") {
        v.to_le_bytes()
    } else {
        v.to_be_bytes()
    }
}

/// An IPv6 address as /proc/net/tcp6 prints it: four 32-bit words, each in host order.
/// Read as bytes (no UTF-8 check, no `from_str_radix` per word); a word may start with `+`, as
/// `u32::from_str_radix` allowed when it read these.
fn proc_ipv6(hex: &[u8]) -> Option<Ipv6Addr> {
    let mut bytes = [0u8; 16];
    for (i, chunk) in bytes.chunks_mut(4).enumerate() {
        let word = hex.get(i * 8..i * 8 + 8)?;
        let v = match word.split_first() {
            Some((b'+', digits)) => hex_n(digits, 7)?,
            _ => hex_n(word, 8)?,
        };
        chunk.copy_from_slice(&host_order_bytes(u32::try_from(v).ok()?));
    }
    Some(Ipv6Addr::from(bytes))
}

/// An IPv6 host as printed, or the IPv4 address it maps (`::ffff:10.20.1.5` → `10.20.1.5`).
fn v6_host(a: Ipv6Addr) -> CompactString {
    match a.to_ipv4_mapped() {
        Some(v4) => dotted(v4),
        None => a.to_compact_string(),
    }
}

/// `a.b.c.d` without the formatting machinery: thousands of these are made every second.
fn dotted(a: Ipv4Addr) -> CompactString {
    let mut buf = [0u8; 15];
    let mut n = 0;
    for (i, o) in a.octets().into_iter().enumerate() {
        if i > 0 {
            buf[n] = b'.';
            n += 1;
        }
        if o >= 100 {
            buf[n] = b'0' + o / 100;
            n += 1;
        }
        if o >= 10 {
            buf[n] = b'0' + (o / 10) % 10;
            n += 1;
        }
        buf[n] = b'0' + o % 10;
        n += 1;
    }
    // Only ASCII digits and dots were written.
    CompactString::from_utf8(&buf[..n]).unwrap_or_default()
}

/// `0100007F:2328` → 127.0.0.1:9000 (on a little-endian machine).
fn proc_endpoint(i: &str) -> PResult<'_, Endpoint> {
    let (rest, (ip, _, port)) = (
        take_while_m_n(8, 32, |c: char| c.is_ascii_hexdigit()),
        char(':'),
        take_while_m_n(4, 4, |c: char| c.is_ascii_hexdigit()),
    )
        .parse(i)?;
    let host = match ip.len() {
        // Formatted straight into the inline string: no heap allocation per address.
        8 => proc_ipv4(ip).map(dotted),
        32 => proc_ipv6(ip.as_bytes()).map(v6_host),
        _ => None,
    };
    let port = u16::from_str_radix(port, 16).ok();
    match (host, port) {
        (Some(host), Some(port)) => Ok((
            rest,
            Endpoint {
                host,
                port: port.to_compact_string(),
            },
        )),
        _ => Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        ))),
    }
}

fn hex_u64(i: &str) -> PResult<'_, u64> {
    nom::combinator::map_res(
        take_while_m_n(1, 16, |c: char| c.is_ascii_hexdigit()),
        |s| u64::from_str_radix(s, 16),
    )
    .parse(i)
}

/// One /proc/net/tcp row: `  1: 0F02000A:0016 0202000A:8B6B 01 00000015:00000001 ...`.
fn proc_row(i: &str) -> PResult<'_, Socket> {
    let (i, _) = (sp0, dec_u64, char(':'), sp1).parse(i)?;
    // A tcp6 row stays `tcp6` when its addresses are IPv4-mapped (and printed as IPv4).
    let v6 = i.find(':') == Some(32);
    let (i, (local, _, remote, _, st, _, tx, _, rx)) = (
        proc_endpoint,
        sp1,
        proc_endpoint,
        sp1,
        take_while_m_n(2, 2, |c: char| c.is_ascii_hexdigit()),
        sp1,
        hex_u64,
        char(':'),
        hex_u64,
    )
        .parse(i)?;
    let state = u8::from_str_radix(st, 16).map_or(TcpState::Unknown, TcpState::from_kernel);
    let proto = if v6 { "tcp6" } else { "tcp" };
    Ok((
        i,
        Socket {
            proto: proto.into(),
            recv_q: rx,
            send_q: tx,
            local,
            remote,
            state: Some(state),
            process: None,
        },
    ))
}

/// The value of one ASCII hex digit.
#[inline]
fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// `n` hex digits at the start of `b`, as a number (n <= 16).
#[inline]
fn hex_n(b: &[u8], n: usize) -> Option<u64> {
    let digits = b.get(..n)?;
    let mut v = 0u64;
    for &d in digits {
        v = (v << 4) | u64::from(hex_val(d)?);
    }
    Some(v)
}

/// The fast path for the rows the kernel prints (fixed widths, one blank between fields), in
/// bytes: thousands of rows every second on a busy server. Anything else goes to `proc_row`,
/// which reads any spacing and says where a bad row went wrong; both give the same `Socket`.
fn proc_row_fast(line: &str) -> Option<Socket> {
    let b = line.as_bytes();
    let start = b.iter().position(|c| *c != b' ')?;
    let mut i = start;
    while b.get(i)?.is_ascii_digit() {
        i += 1;
    }
    // The row's number, then `: ` (the full parser wants a number there too).
    if i == start || b.get(i) != Some(&b':') || b.get(i + 1) != Some(&b' ') {
        return None;
    }
    i += 2;
    let v6 = b.get(i..)?.iter().position(|c| *c == b':') == Some(32);
    let endpoint = |i: &mut usize| -> Option<Endpoint> {
        let rest = b.get(*i..)?;
        let colon = rest.iter().position(|c| *c == b':')?;
        let host = match colon {
            8 => {
                let v = u32::try_from(hex_n(rest, 8)?).ok()?;
                dotted(Ipv4Addr::from(host_order_bytes(v)))
            }
            32 => v6_host(proc_ipv6(&rest[..32])?),
            _ => return None,
        };
        let port = u16::try_from(hex_n(rest.get(colon + 1..)?, 4)?).ok()?;
        if rest.get(colon + 5) != Some(&b' ') {
            return None;
        }
        *i += colon + 6;
        Some(Endpoint {
            host,
            port: port.to_compact_string(),
        })
    };
    let local = endpoint(&mut i)?;
    let remote = endpoint(&mut i)?;
    let st = u8::try_from(hex_n(b.get(i..)?, 2)?).ok()?;
    if b.get(i + 2) != Some(&b' ') {
        return None;
    }
    i += 3;
    let tx = hex_n(b.get(i..)?, 8)?;
    if b.get(i + 8) != Some(&b':') {
        return None;
    }
    let rx = hex_n(b.get(i + 9..)?, 8)?;
    // What follows the queues must be a field boundary, as the nom parser requires.
    if !matches!(b.get(i + 17), None | Some(b' ')) {
        return None;
    }
    let proto = if v6 { "tcp6" } else { "tcp" };
    Some(Socket {
        proto: proto.into(),
        recv_q: rx,
        send_q: tx,
        local,
        remote,
        state: Some(TcpState::from_kernel(st)),
        process: None,
    })
}

/// The column header: /proc/net/tcp says `rem_address`, /proc/net/tcp6 `remote_address`.
fn is_proc_header(text: &str) -> bool {
    starts_with_words(text, &["sl", "local_address", "rem_address", "st"])
        || starts_with_words(text, &["sl", "local_address", "remote_address", "st"])
}

/// `/proc/net/tcp` or `/proc/net/tcp6` (told apart by the address width).
pub fn parse_proc_net_tcp(text: &str) -> Result<Sockets, ParseError> {
    proc_net_tcp(text, None)
}

/// [`parse_proc_net_tcp`], giving again the socket of a line `memo` remembers instead of
/// parsing it (a socket is its line's alone).
pub(crate) fn parse_proc_net_tcp_memo(
    text: &str,
    memo: &super::memo::LineMemo,
) -> super::memo::Recalled<Sockets> {
    super::memo::parse_with(
        text,
        memo,
        |r| proc_net_tcp(text, Some(r)),
        |s| s.sockets.len(),
    )
}

/// `/proc/net/tcp` or `tcp6`, each line through the memo when there is one.
fn proc_net_tcp(
    text: &str,
    mut recall: Option<&mut super::memo::Recall<'_, Sockets>>,
) -> Result<Sockets, ParseError> {
    let mut out = Sockets::default();
    out.sockets.reserve(super::lex::row_count_hint(text));
    let mut recognised = false;
    let mut first_bad: Option<ParseError> = None;
    for line in lines(text) {
        if line.is_blank() {
            continue;
        }
        let Some(r) = recall.as_deref_mut() else {
            recognised |= proc_line(&mut out, line, &mut first_bad);
            continue;
        };
        let key = super::memo::LineKey::of(line.text);
        if r.copied(key, |last, i| {
            super::memo::copy_row(&last.sockets, i, &mut out.sockets)
        }) {
            recognised = true;
            continue;
        }
        let before = out.sockets.len();
        let known = proc_line(&mut out, line, &mut first_bad);
        recognised |= known;
        let added = out.sockets.len() - before;
        r.note(key, known, added);
    }
    if !recognised {
        return Err(first_bad.unwrap_or_else(|| {
            ParseError::empty("/proc/net/tcp (header `sl local_address rem_address st ...`)")
        }));
    }
    Ok(out)
}

/// One non-blank line of `/proc/net/tcp`: a row (added to `out`), the header, or a line not
/// understood (kept, the first one as the error). Whether it was a row or the header.
fn proc_line<'a>(
    out: &mut Sockets,
    line: super::lex::Line<'a>,
    first_bad: &mut Option<ParseError>,
) -> bool {
    // Rows before the header's words, as nearly every line is a row: a row starts with its
    // number (or its colon), the header with `sl`, so no line is both.
    if let Some(s) = proc_row_fast(line.text) {
        out.sockets.push(s);
        return true;
    }
    if is_proc_header(line.text) {
        return true;
    }
    match proc_row(line.text) {
        Ok((_, s)) => {
            out.sockets.push(s);
            true
        }
        Err(_) => {
            if first_bad.is_none() {
                *first_bad = Some(line.error_at(
                    line.text.trim_start(),
                    "a /proc/net/tcp row (`sl: local_address rem_address st tx_queue:rx_queue ...`)",
                ));
            }
            Unparsed::keep(&mut out.unparsed, line);
            false
        }
    }
}

/// Splits `host:port` (Linux netstat, ss) or `host.port` (AIX, BSD) into an endpoint. Brackets
/// around IPv6 hosts (`[::1]:22`) are removed; Display puts them back.
pub(crate) fn split_endpoint(text: &str) -> Option<Endpoint> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    if let Some(rest) = t.strip_prefix('[') {
        let (host, port) = rest.split_once("]:")?;
        return Some(Endpoint::new(host, port));
    }
    // Linux: the last ':' separates the port, which never holds a '.'.
    if let Some((host, port)) = t.rsplit_once(':') {
        if !port.contains('.') && !host.is_empty() {
            return Some(Endpoint::new(host, port));
        }
        if host.is_empty() && !port.contains('.') {
            return None;
        }
    }
    // AIX/BSD: `10.1.2.3.9088`, `*.*`, `*.9088`, `::1.32768`.
    let (host, port) = t.rsplit_once('.')?;
    if host.is_empty() || port.is_empty() {
        return None;
    }
    Some(Endpoint::new(host, port))
}

fn is_proto(w: &str) -> bool {
    let w = w.to_ascii_lowercase();
    [
        "tcp", "tcp4", "tcp6", "tcp46", "udp", "udp4", "udp6", "udp46", "raw", "raw6", "sctp",
    ]
    .contains(&w.as_str())
}

/// One netstat row: `[PCB] proto recv-q send-q local foreign [state] [user inode]
/// [pid/program]`. AIX `netstat -Aan` puts a PCB address first; grep'd, its header is gone, so a
/// hex word before the protocol is taken as one on any row. Linux `-e` adds `User Inode`, `-p`
/// the program (`-laputen` both, udp rows without a state).
fn netstat_row(text: &str, has_pcb: bool) -> Option<Socket> {
    let mut words = text.split_whitespace().peekable();
    let first = *words.peek()?;
    if has_pcb || (!is_proto(first) && first.len() >= 8) {
        let pcb = words.next()?;
        if !pcb.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
    }
    let proto = words.next()?;
    if !is_proto(proto) {
        return None;
    }
    let recv_q = words.next()?.parse().ok()?;
    let send_q = words.next()?.parse().ok()?;
    let local = split_endpoint(words.next()?)?;
    let remote = split_endpoint(words.next()?)?;
    let mut rest: Vec<&str> = words.collect();
    let state = match rest.first().and_then(|w| TcpState::from_name(w)) {
        Some(s) => {
            rest.remove(0);
            Some(s)
        }
        None => None,
    };
    let process = match rest.as_slice() {
        [] => None,
        // `-p`: the program, or `-` when it is not ours to see.
        [p] => Some(p.to_string()),
        // `-e`: user (a name or a uid) and inode, then `-p`'s program if asked for.
        [_user, inode] if inode.chars().all(|c| c.is_ascii_digit()) => None,
        [_user, inode, p] if inode.chars().all(|c| c.is_ascii_digit()) => Some(p.to_string()),
        _ => return None,
    };
    Some(Socket {
        proto: proto.into(),
        recv_q,
        send_q,
        local,
        remote,
        state,
        process: process.filter(|p| p != "-"),
    })
}

/// `netstat -an`, `-tn`, `-antp` (Linux) and `netstat -an`, `-Aan` (AIX, `host.port`).
pub fn parse_netstat(text: &str) -> Result<Sockets, ParseError> {
    let mut out = Sockets::default();
    let mut recognised = false;
    let mut has_pcb = false;
    let mut in_unix = false;
    let mut first_line: Option<Line<'_>> = None;
    let mut rows = lines(text);
    super::lex::skip_prompt_line(&mut rows, &["netstat"]);
    for line in rows {
        if line.is_blank() {
            continue;
        }
        first_line.get_or_insert(line);
        let t = line.text.trim();
        if t.starts_with("Active Internet connections") || t.starts_with("Active IPv") {
            recognised = true;
            in_unix = false;
            continue;
        }
        if t.starts_with("Active UNIX domain sockets") || t.starts_with("Active unix domain") {
            // Not TCP/IP: its rows are not ours to read.
            in_unix = true;
            recognised = true;
            continue;
        }
        if in_unix {
            continue;
        }
        let words: Vec<&str> = header_words(t).collect();
        if words.contains(&"Proto") && words.contains(&"Recv-Q") && words.contains(&"Send-Q") {
            recognised = true;
            has_pcb = words.first().is_some_and(|w| w.starts_with("PCB"));
            continue;
        }
        match netstat_row(t, has_pcb) {
            Some(s) => {
                recognised = true;
                out.sockets.push(s);
            }
            None => Unparsed::keep(&mut out.unparsed, line),
        }
    }
    if !recognised {
        return Err(match first_line {
            Some(l) => l.error_at(
                l.text.trim_start(),
                "netstat output (`Proto Recv-Q Send-Q Local Address Foreign Address State`)",
            ),
            None => ParseError::empty("netstat output"),
        });
    }
    Ok(out)
}

/// `ss -tn`, `ss -tan`, `ss -an` (with or without the Netid column).
pub fn parse_ss(text: &str) -> Result<Sockets, ParseError> {
    let mut out = Sockets::default();
    let mut recognised = false;
    let mut has_netid = false;
    let mut first_line: Option<Line<'_>> = None;
    let mut rows = lines(text);
    super::lex::skip_prompt_line(&mut rows, &["ss"]);
    for line in rows {
        if line.is_blank() {
            continue;
        }
        first_line.get_or_insert(line);
        let words: Vec<&str> = header_words(line.text).collect();
        // ss's header starts with `State` (or `Netid State` with `-a`/`-u`); netstat's has the
        // same queue columns after `Proto` (or `PCB/ADDR Proto` on AIX): not ss output.
        let ss_header = matches!(words.first(), Some(&"State") | Some(&"Netid"));
        if ss_header
            && words.contains(&"Recv-Q")
            && words.contains(&"Send-Q")
            && !recognised_row(&words)
        {
            recognised = true;
            has_netid = words.first() == Some(&"Netid");
            continue;
        }
        let row = ss_row(&words, has_netid);
        match row {
            Some(s) => {
                recognised = true;
                out.sockets.push(s);
            }
            None => Unparsed::keep(&mut out.unparsed, line),
        }
    }
    if !recognised {
        return Err(match first_line {
            Some(l) => l.error_at(
                l.text.trim_start(),
                "ss output (`State Recv-Q Send-Q Local Address:Port Peer Address:Port`)",
            ),
            None => ParseError::empty("ss output"),
        });
    }
    Ok(out)
}

/// A header line has no numbers where the queues go.
fn recognised_row(words: &[&str]) -> bool {
    words.iter().any(|w| w.parse::<u64>().is_ok())
}

fn ss_row(words: &[&str], has_netid: bool) -> Option<Socket> {
    let mut w = words.iter().copied();
    let proto = if has_netid {
        let n = w.next()?;
        if !is_proto(n) {
            return None;
        }
        n
    } else {
        "tcp"
    };
    let state = TcpState::from_name(w.next()?)?;
    let recv_q = w.next()?.parse().ok()?;
    let send_q = w.next()?.parse().ok()?;
    let local = split_endpoint(w.next()?)?;
    let remote = split_endpoint(w.next()?)?;
    let rest: Vec<&str> = w.collect();
    // Mapped addresses were made IPv4 (`Endpoint::new`): such a socket counts as tcp.
    let proto = if !has_netid && local.is_ipv6() {
        "tcp6"
    } else {
        proto
    };
    Some(Socket {
        proto: proto.into(),
        recv_q,
        send_q,
        local,
        remote,
        state: Some(state),
        process: (!rest.is_empty()).then(|| rest.join(" ")),
    })
}

record!(Sockets; sockets);

/// The parse as it read a file before rows were tried first, with nom's tokens read character
/// by character: what [`parse_proc_net_tcp`] must give.
#[cfg(test)]
pub(crate) mod reference {
    use super::super::lex::reference::{dec_u64, sp0, sp1};
    use super::super::lex::{lines, PResult};
    use super::super::Unparsed;
    use super::{
        dotted, hex_n, host_order_bytes, proc_endpoint, v6_host, Endpoint, Socket, Sockets,
        TcpState,
    };
    use crate::error::ParseError;
    use compact_str::ToCompactString;
    use nom::bytes::complete::take_while_m_n;
    use nom::character::complete::char;
    use nom::Parser;
    use std::net::{Ipv4Addr, Ipv6Addr};

    pub(crate) fn proc_ipv6(hex: &str) -> Option<Ipv6Addr> {
        let mut bytes = [0u8; 16];
        for (i, chunk) in bytes.chunks_mut(4).enumerate() {
            let word = hex.get(i * 8..i * 8 + 8)?;
            let v = u32::from_str_radix(word, 16).ok()?;
            chunk.copy_from_slice(&host_order_bytes(v));
        }
        Some(Ipv6Addr::from(bytes))
    }

    fn proc_row_fast(line: &str) -> Option<Socket> {
        let b = line.as_bytes();
        let start = b.iter().position(|c| *c != b' ')?;
        let mut i = start;
        while b.get(i)?.is_ascii_digit() {
            i += 1;
        }
        if i == start || b.get(i) != Some(&b':') || b.get(i + 1) != Some(&b' ') {
            return None;
        }
        i += 2;
        let v6 = b.get(i..)?.iter().position(|c| *c == b':') == Some(32);
        let endpoint = |i: &mut usize| -> Option<Endpoint> {
            let rest = b.get(*i..)?;
            let colon = rest.iter().position(|c| *c == b':')?;
            let host = match colon {
                8 => {
                    let v = u32::try_from(hex_n(rest, 8)?).ok()?;
                    dotted(Ipv4Addr::from(host_order_bytes(v)))
                }
                32 => v6_host(proc_ipv6(std::str::from_utf8(&rest[..32]).ok()?)?),
                _ => return None,
            };
            let port = u16::try_from(hex_n(rest.get(colon + 1..)?, 4)?).ok()?;
            if rest.get(colon + 5) != Some(&b' ') {
                return None;
            }
            *i += colon + 6;
            Some(Endpoint {
                host,
                port: port.to_compact_string(),
            })
        };
        let local = endpoint(&mut i)?;
        let remote = endpoint(&mut i)?;
        let st = u8::try_from(hex_n(b.get(i..)?, 2)?).ok()?;
        if b.get(i + 2) != Some(&b' ') {
            return None;
        }
        i += 3;
        let tx = hex_n(b.get(i..)?, 8)?;
        if b.get(i + 8) != Some(&b':') {
            return None;
        }
        let rx = hex_n(b.get(i + 9..)?, 8)?;
        // What follows the queues must be a field boundary, as the nom parser requires.
        if !matches!(b.get(i + 17), None | Some(b' ')) {
            return None;
        }
        let proto = if v6 { "tcp6" } else { "tcp" };
        Some(Socket {
            proto: proto.into(),
            recv_q: rx,
            send_q: tx,
            local,
            remote,
            state: Some(TcpState::from_kernel(st)),
            process: None,
        })
    }

    fn starts_with_words(text: &str, expected: &[&str]) -> bool {
        let mut w = super::super::lex::reference::header_words(text);
        expected.iter().all(|e| w.next() == Some(*e))
    }

    fn hex_u64(i: &str) -> PResult<'_, u64> {
        nom::combinator::map_res(
            take_while_m_n(1, 16, |c: char| c.is_ascii_hexdigit()),
            |s| u64::from_str_radix(s, 16),
        )
        .parse(i)
    }

    fn proc_row(i: &str) -> PResult<'_, Socket> {
        let (i, _) = (sp0, dec_u64, char(':'), sp1).parse(i)?;
        let v6 = i.find(':') == Some(32);
        let (i, (local, _, remote, _, st, _, tx, _, rx)) = (
            proc_endpoint,
            sp1,
            proc_endpoint,
            sp1,
            take_while_m_n(2, 2, |c: char| c.is_ascii_hexdigit()),
            sp1,
            hex_u64,
            char(':'),
            hex_u64,
        )
            .parse(i)?;
        let state = u8::from_str_radix(st, 16).map_or(TcpState::Unknown, TcpState::from_kernel);
        let proto = if v6 { "tcp6" } else { "tcp" };
        Ok((
            i,
            Socket {
                proto: proto.into(),
                recv_q: rx,
                send_q: tx,
                local,
                remote,
                state: Some(state),
                process: None,
            },
        ))
    }

    pub(crate) fn parse_proc_net_tcp(text: &str) -> Result<Sockets, ParseError> {
        let mut out = Sockets::default();
        let mut recognised = false;
        let mut first_bad: Option<ParseError> = None;
        for line in lines(text) {
            if line.is_blank() {
                continue;
            }
            if starts_with_words(line.text, &["sl", "local_address", "rem_address", "st"])
                || starts_with_words(line.text, &["sl", "local_address", "remote_address", "st"])
            {
                recognised = true;
                continue;
            }
            if let Some(s) = proc_row_fast(line.text) {
                recognised = true;
                out.sockets.push(s);
                continue;
            }
            match proc_row(line.text) {
                Ok((_, s)) => {
                    recognised = true;
                    out.sockets.push(s);
                }
                Err(_) => {
                    if first_bad.is_none() {
                        first_bad = Some(line.error_at(
                            line.text.trim_start(),
                            "a /proc/net/tcp row (`sl: local_address rem_address st tx_queue:rx_queue ...`)",
                        ));
                    }
                    Unparsed::keep(&mut out.unparsed, line);
                }
            }
        }
        if !recognised {
            return Err(first_bad.unwrap_or_else(|| {
                ParseError::empty("/proc/net/tcp (header `sl local_address rem_address st ...`)")
            }));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    /// AIX `netstat -Aan | grep 9088`: the PCB column first, `tcp4`, `host.port`, no header.
    /// (Rows as `ifxtop-aix-netstat-Aan.txt` prints them.)
    #[test]
    fn grepped_aix_rows_with_a_pcb_and_no_header() {
        let text = "f1000e0000b9e3b8 tcp4       0      0  *.9088             *.*                LISTEN\n\
                    f1000e0000ba23b8 tcp4       0 249856  10.0.0.5.9088      10.1.2.3.51234     ESTABLISHED\n";
        let s = super::parse_netstat(text).expect("grep'd AIX rows");
        assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
        assert_eq!(s.sockets.len(), 2);
        let est = &s.sockets[1];
        assert_eq!(est.proto, "tcp4");
        assert_eq!(est.send_q, 249_856);
        assert_eq!(est.local, super::Endpoint::new("10.0.0.5", "9088"));
        assert_eq!(est.remote, super::Endpoint::new("10.1.2.3", "51234"));
        assert_eq!(est.state, Some(super::TcpState::Established));
    }

    /// Linux `netstat -e -p` / `-laputen`: `User Inode PID/Program name` after the state (udp
    /// rows have no state). These rows were dropped.
    #[test]
    fn linux_rows_with_user_inode_and_program() {
        let text = "Active Internet connections (servers and established)\n\
Proto Recv-Q Send-Q Local Address           Foreign Address         State       User       Inode      PID/Program name\n\
tcp        0      0 0.0.0.0:9088            0.0.0.0:*               LISTEN      informix   31337      2211/oninit\n\
tcp        0  52340 10.0.0.5:9088           10.1.2.3:51234          ESTABLISHED 1001       31338      2211/oninit\n\
tcp        0      0 10.0.0.5:22             10.1.2.9:50000          ESTABLISHED 0          41000      -\n\
udp        0      0 0.0.0.0:68              0.0.0.0:*                           0          1234       812/dhclient\n";
        let s = super::parse_netstat(text).expect("netstat -e -p");
        assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
        assert_eq!(s.sockets.len(), 4);
        assert_eq!(s.sockets[1].send_q, 52_340);
        assert_eq!(s.sockets[1].state, Some(super::TcpState::Established));
        assert_eq!(s.sockets[1].process.as_deref(), Some("2211/oninit"));
        assert_eq!(s.sockets[2].process, None);
        assert_eq!(s.sockets[3].proto, "udp");
        assert_eq!(s.sockets[3].state, None);
        assert_eq!(s.sockets[3].process.as_deref(), Some("812/dhclient"));
        // `-e` without `-p`: user and inode only.
        let row = "tcp        0      0 10.0.0.5:9088  10.1.2.3:51234  ESTABLISHED informix 31338";
        let s = super::parse_netstat(row).expect("netstat -e");
        assert_eq!(s.sockets.len(), 1, "{:?}", s.unparsed);
        // Words that fit no layout stay unparsed, not guessed at.
        let odd = "tcp 0 0 10.0.0.5:9088 10.1.2.3:51234 ESTABLISHED a b c d\n";
        let s = super::parse_netstat(&format!("{row}\n{odd}")).expect("one good row");
        assert_eq!(s.unparsed.len(), 1);
    }
    use super::super::same_rows::{fixture_lines, gap, mutated, variants};
    use super::*;
    use proptest::prelude::*;

    /// The whole parse against the reference: results and errors, `unparsed` included.
    fn same(text: &str) -> Result<(), TestCaseError> {
        prop_assert_eq!(
            parse_proc_net_tcp(text),
            reference::parse_proc_net_tcp(text),
            "{:?}",
            text
        );
        Ok(())
    }

    #[test]
    fn fixtures_read_as_the_reference_reads_them() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        for dir in ["proc-net-tcp", "netstat", "proc-diskstats", "onstat-u"] {
            for f in std::fs::read_dir(root.join(dir))
                .expect("fixtures")
                .flatten()
            {
                let text = std::fs::read_to_string(f.path()).expect("fixture");
                same(&text).expect("whole file");
            }
        }
        // Each line alone, cut and changed, and after a header.
        let header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
        for line in fixture_lines() {
            for v in variants(&line) {
                same(&v).expect("line");
                same(&format!("{header}{v}\n")).expect("line after a header");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn v6_words_read_as_from_str_radix_reads_them(
            hex in prop_oneof![
                3 => "[0-9A-Fa-f]{32}",
                1 => "[0-9A-F+-]{32}",
                1 => "(\\+[0-9A-F]{7}){4}",
                1 => "[0-9A-F]{28,31}[gé+ ]{1,2}",
            ]
        ) {
            prop_assert_eq!(proc_ipv6(hex.as_bytes()), reference::proc_ipv6(&hex), "{:?}", hex);
        }
    }

    /// A row as the kernel prints it (v4 or v6, mapped or not), sometimes spaced otherwise.
    fn tcp_row() -> impl Strategy<Value = String> {
        let addr = prop_oneof![
            3 => "[0-9A-F]{8}",
            2 => "0000000000000000FFFF0000[0-9A-F]{8}",
            1 => "[0-9A-F]{32}",
            1 => "[0-9a-fA-F]{6,34}",
        ];
        let end = (addr, "[0-9A-F]{4}").prop_map(|(a, p)| format!("{a}:{p}"));
        (
            "[ ]{0,4}[0-9]{1,5}",
            gap(),
            end.clone(),
            gap(),
            end,
            gap(),
            "[0-9A-F]{2}",
            gap(),
            "[0-9A-F]{8}:[0-9A-F]{8}",
            prop_oneof![
                Just(String::new()),
                Just(" 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0".to_string()),
                "[ ][ -~]{0,20}",
            ],
        )
            .prop_map(|(sl, g1, l, g2, r, g3, st, g4, q, tail)| {
                format!("{sl}:{g1}{l}{g2}{r}{g3}{st}{g4}{q}{tail}")
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5_000))]
        #[test]
        fn generated_files_read_as_the_reference_reads_them(
            rows in proptest::collection::vec(
                prop_oneof![
                    4 => tcp_row(),
                    4 => mutated(tcp_row()),
                    1 => Just("  sl  local_address remote_address st tx_queue".to_string()),
                    1 => super::super::lex::columnish(),
                ],
                0..6,
            )
        ) {
            same(&rows.join("\n"))?;
        }
    }

    #[test]
    fn the_fast_path_reads_rows_as_the_full_parser_does() {
        let rows = [
            "   0: 0100007F:2328 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0",
            "   1: 0500000A:2380 0501140A:C822 01 00009000:0000001F 01:00000014 00000000   200        0 2 1 0 20 4 30 10 -1",
            "  12: 0000000000000000FFFF00000500000A:2380 0000000000000000FFFF00000302010A:C822 01 0003D000:00000000 01:00000014 00000000   200        0 31338 1 0000000000000000 20 4 30 10 -1",
            "   3: 0500000A:2380 0501140A:C822 01 00009000:00000000",
        ];
        for r in rows {
            let fast = proc_row_fast(r).expect("fast path");
            let (_, full) = proc_row(r).expect("full parser");
            assert_eq!(fast, full, "{r}");
        }
        // Not the kernel's spacing: the fast path declines, the full parser reads it.
        let odd = "   1:  0500000A:2380   0501140A:C822 01 00009000:00000000";
        assert!(proc_row_fast(odd).is_none());
        assert!(proc_row(odd).is_ok());
        for bad in [
            "",
            "   1:",
            "   1: 0500000A:2380",
            "   1: 0500000G:2380 0501140A:C822 01 0:0",
            "x",
            // No row number before the colon: not a row to either parser.
            "   : 0500000A:2380 0501140A:C822 01 00009000:00000000",
        ] {
            assert!(proc_row_fast(bad).is_none(), "{bad:?}");
            assert!(proc_row(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn dotted_quads() {
        for a in [
            Ipv4Addr::new(0, 0, 0, 0),
            Ipv4Addr::new(10, 20, 1, 5),
            Ipv4Addr::new(255, 255, 100, 9),
            Ipv4Addr::new(127, 0, 0, 1),
            Ipv4Addr::new(192, 168, 10, 99),
        ] {
            assert_eq!(dotted(a), a.to_string());
        }
    }

    #[test]
    fn proc_addresses_in_host_order() {
        let s = parse_proc_net_tcp(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:2328 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0\n",
        )
        .expect("parses");
        let s0 = &s.sockets[0];
        if cfg!(target_endian = "little") {
            assert_eq!(s0.local.to_string(), "127.0.0.1:9000");
        }
        assert_eq!(s0.state, Some(TcpState::Listen));
    }

    #[test]
    fn endpoints_of_every_flavour() {
        let e = |s| split_endpoint(s).map(|e| e.to_string());
        assert_eq!(e("192.168.1.2:48342").as_deref(), Some("192.168.1.2:48342"));
        assert_eq!(e(":::22").as_deref(), Some("[::]:22"));
        assert_eq!(e("::ffff:10.1.2.3:9088").as_deref(), Some("10.1.2.3:9088"));
        assert_eq!(
            e("[::ffff:10.1.2.3]:9088").as_deref(),
            Some("10.1.2.3:9088")
        );
        assert_eq!(
            e("[::FFFF:0a01:0203]:9088").as_deref(),
            Some("10.1.2.3:9088")
        );
        assert_eq!(e("[::ffff:1]:9088").as_deref(), Some("[::ffff:1]:9088"));
        assert_eq!(e("0.0.0.0:*").as_deref(), Some("0.0.0.0:*"));
        assert_eq!(e("localhost:ipp").as_deref(), Some("localhost:ipp"));
        assert_eq!(e("10.1.2.3.9088").as_deref(), Some("10.1.2.3:9088"));
        assert_eq!(e("*.*").as_deref(), Some("*:*"));
        assert_eq!(e("*:22").as_deref(), Some("*:22"));
        assert_eq!(e(""), None);
        assert_eq!(e(":"), None);
    }
}
