//! Socket tables: `/proc/net/tcp{,6}`, Linux and AIX `netstat`, `ss`. One shape for all of them.

use super::Unparsed;
use crate::error::ParseError;
use compact_str::CompactString;
use serde::{Serialize, Serializer};
use std::fmt;

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
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Endpoint {
    pub host: CompactString,
    pub port: CompactString,
}

impl Endpoint {
    pub fn new(host: &str, port: &str) -> Self {
        Endpoint {
            host: host.into(),
            port: port.into(),
        }
    }

    /// The port as a number, when it was printed as one.
    pub fn port_num(&self) -> Option<u16> {
        self.port.parse().ok()
    }

    pub fn is_ipv6(&self) -> bool {
        self.host.contains(':')
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
    pub fn as_str(self) -> &'static str {
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

/// `/proc/net/tcp` or `/proc/net/tcp6` (told apart by the address width).
pub fn parse_proc_net_tcp(text: &str) -> Result<Sockets, ParseError> {
    let _ = text;
    Err(ParseError::empty("/proc/net/tcp (parser not written yet)"))
}

/// `netstat -an`, `-tn`, `-antp` (Linux) and `netstat -an`, `-Aan` (AIX, `host.port`).
pub fn parse_netstat(text: &str) -> Result<Sockets, ParseError> {
    let _ = text;
    Err(ParseError::empty("netstat output (parser not written yet)"))
}

/// `ss -tn`, `ss -tan`, `ss -an` (with or without the Netid column).
pub fn parse_ss(text: &str) -> Result<Sockets, ParseError> {
    let _ = text;
    Err(ParseError::empty("ss output (parser not written yet)"))
}
