//! `onstat -g ntt`: network threads per session; the `address` column (`host|port|proto`) is the
//! client end of the session's socket, which joins a session to its Send-Q.

use super::header::Header;
use super::Unparsed;
use crate::error::ParseError;
use crate::ids::{Addr, Sid};
use compact_str::CompactString;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGNtt {
    pub header: Option<Header>,
    pub offline: Option<String>,
    /// Rows of `Individual thread network information`. Each row's date continues on the next
    /// line (under `open`); the two lines make one `NetThread`.
    pub threads: Vec<NetThread>,
    pub unparsed: Vec<Unparsed>,
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
    /// A host name or an IP address, as printed.
    pub host: CompactString,
    /// A port number or a service name, as printed.
    pub port: CompactString,
    /// `soctcp`, `tlitcp`, `onsoctcp`, `olsoctcp`, ... (empty when not printed).
    pub proto: CompactString,
}

impl ClientAddr {
    pub fn port_num(&self) -> Option<u16> {
        self.port.parse().ok()
    }
}

/// Parses the output of `onstat -g ntt`.
pub fn parse(text: &str) -> Result<OnstatGNtt, ParseError> {
    let _ = text;
    Err(ParseError::empty(
        "onstat -g ntt output (parser being written)",
    ))
}
