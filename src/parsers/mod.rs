//! Pure parsers: `&str` → typed records or a `ParseError`. Nothing here knows of tokio or ratatui.
//!
//! Every parser lists the lines it did not understand in `unparsed` (never drops them silently)
//! and fails with a `ParseError` (line, column, expected, found) when the input is not that
//! command's output at all.

pub mod header;
pub mod lex;

pub mod numa;
pub mod oncheck_pe;
pub mod onstat_b;
pub mod onstat_d;
pub mod onstat_g_ath;
pub mod onstat_g_ckp;
pub mod onstat_g_con;
pub mod onstat_g_ntt;
pub mod onstat_g_ses;
pub mod onstat_g_sql;
pub mod onstat_k;
pub mod onstat_t;
pub mod onstat_u;
pub mod onstat_x;
pub mod sockets;
pub mod systabnames;

use crate::error::ParseError;
use serde::Serialize;

/// A line the parser did not understand, kept so it can be shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unparsed {
    pub line: usize,
    pub text: String,
}

impl Unparsed {
    pub fn new(line: lex::Line<'_>) -> Self {
        Unparsed {
            line: line.no,
            text: line.text.to_string(),
        }
    }
}

/// What `ifxtop parse KIND` accepts: one per command (or file) whose output ifxtop reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    OnstatU,
    OnstatX,
    OnstatGCon,
    OncheckPe,
    Netstat,
    Ss,
    ProcNetTcp,
    NumactlH,
    NodeMeminfo,
    NumaMaps,
    OnstatGAth,
    OnstatGNtt,
    OnstatK,
    OnstatGSes,
    OnstatGSql,
    OnstatB,
    OnstatD,
    OnstatT,
    OnstatGCkp,
}

impl Kind {
    pub const ALL: [Kind; 19] = [
        Kind::OnstatU,
        Kind::OnstatX,
        Kind::OnstatGCon,
        Kind::OncheckPe,
        Kind::Netstat,
        Kind::Ss,
        Kind::ProcNetTcp,
        Kind::NumactlH,
        Kind::NodeMeminfo,
        Kind::NumaMaps,
        Kind::OnstatGAth,
        Kind::OnstatGNtt,
        Kind::OnstatK,
        Kind::OnstatGSes,
        Kind::OnstatGSql,
        Kind::OnstatB,
        Kind::OnstatD,
        Kind::OnstatT,
        Kind::OnstatGCkp,
    ];

    /// The name used on the command line (`ifxtop parse onstat-u`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::OnstatU => "onstat-u",
            Kind::OnstatX => "onstat-x",
            Kind::OnstatGCon => "onstat-g-con",
            Kind::OncheckPe => "oncheck-pe",
            Kind::Netstat => "netstat",
            Kind::Ss => "ss",
            Kind::ProcNetTcp => "proc-net-tcp",
            Kind::NumactlH => "numactl-h",
            Kind::NodeMeminfo => "node-meminfo",
            Kind::NumaMaps => "numa-maps",
            Kind::OnstatGAth => "onstat-g-ath",
            Kind::OnstatGNtt => "onstat-g-ntt",
            Kind::OnstatK => "onstat-k",
            Kind::OnstatGSes => "onstat-g-ses",
            Kind::OnstatGSql => "onstat-g-sql",
            Kind::OnstatB => "onstat-b",
            Kind::OnstatD => "onstat-d",
            Kind::OnstatT => "onstat-t",
            Kind::OnstatGCkp => "onstat-g-ckp",
        }
    }

    /// Accepts the command-line name in any case (`onstat-X` works as well as `onstat-x`).
    pub fn from_name(name: &str) -> Option<Kind> {
        let lower = name.to_ascii_lowercase();
        Kind::ALL.into_iter().find(|k| k.name() == lower)
    }

    /// Parses `text` as this kind and returns what was understood as JSON.
    pub fn parse_to_json(self, text: &str) -> Result<serde_json::Value, ParseError> {
        match self {
            Kind::OnstatU => json(onstat_u::parse(text)),
            Kind::OnstatX => json(onstat_x::parse(text)),
            Kind::OnstatGCon => json(onstat_g_con::parse(text)),
            Kind::OncheckPe => json(oncheck_pe::parse(text)),
            Kind::Netstat => json(sockets::parse_netstat(text)),
            Kind::Ss => json(sockets::parse_ss(text)),
            Kind::ProcNetTcp => json(sockets::parse_proc_net_tcp(text)),
            Kind::NumactlH => json(numa::parse_numactl_h(text)),
            Kind::NodeMeminfo => json(numa::parse_node_meminfo(text)),
            Kind::NumaMaps => json(numa::parse_numa_maps(text)),
            Kind::OnstatGAth => json(onstat_g_ath::parse(text)),
            Kind::OnstatGNtt => json(onstat_g_ntt::parse(text)),
            Kind::OnstatK => json(onstat_k::parse(text)),
            Kind::OnstatGSes => json(onstat_g_ses::parse(text)),
            Kind::OnstatGSql => json(onstat_g_sql::parse(text)),
            Kind::OnstatB => json(onstat_b::parse(text)),
            Kind::OnstatD => json(onstat_d::parse(text)),
            Kind::OnstatT => json(onstat_t::parse(text)),
            Kind::OnstatGCkp => json(onstat_g_ckp::parse(text)),
        }
    }
}

fn json<T: Serialize>(r: Result<T, ParseError>) -> Result<serde_json::Value, ParseError> {
    let v = r?;
    // Our records only have string keys and finite numbers, so this cannot fail; if it ever did,
    // say so in the output rather than panic.
    Ok(serde_json::to_value(v)
        .unwrap_or_else(|e| serde_json::Value::String(format!("cannot encode: {e}"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_round_trip() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_name(k.name()), Some(k));
        }
        assert_eq!(Kind::from_name("onstat-X"), Some(Kind::OnstatX));
        assert_eq!(Kind::from_name("onstat -u"), None);
    }
}
