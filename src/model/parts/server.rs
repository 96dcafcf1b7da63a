//! The server part: its name, mode and banner, from the latest `onstat -u`.

use crate::source::Source;
use crate::store::Store;
use serde::Serialize;

/// What it reads.
#[allow(dead_code)]
pub(crate) const INPUTS: &[Source] = &[Source::OnstatU];

/// What the banner of the latest onstat said.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct ServerInfo {
    pub(crate) name: Option<String>,
    pub(crate) version: Option<String>,
    /// Informix 15.0's storage mode from its banner's second line (`Compatibility mode`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) storage_mode: Option<String>,
    pub mode: Option<String>,
    pub mode_flags: Vec<String>,
    pub(crate) uptime_s: Option<u64>,
    pub blocked: Option<String>,
    /// The off-line message when the last onstat -u found the server down.
    pub(crate) offline: Option<String>,
}

/// The server's name, whether it is off-line, and what the latest onstat -u's banner said.
pub(crate) fn build(store: &Store, server_name: Option<&str>) -> ServerInfo {
    let mut server = ServerInfo {
        name: server_name.map(String::from),
        ..ServerInfo::default()
    };
    if let Some(st) = store.source(&Source::OnstatU) {
        if let Some(crate::error::SourceError::Offline { message }) = st.failing() {
            server.offline = Some(message.clone());
        }
    }
    if let Some(h) = store
        .get(crate::source::key::OnstatU)
        .and_then(|u| u.header.as_ref())
    {
        server.version = h.version.clone();
        server.storage_mode = h.storage_mode.clone();
        server.mode = Some(h.mode.clone());
        server.mode_flags = h.mode_flags.clone();
        server.uptime_s = h.uptime_s;
        server.blocked = h.blocked.clone();
    }
    server
}
