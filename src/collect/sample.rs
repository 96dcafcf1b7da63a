//! One collected output: the raw form a recording keeps (`RawSample`), the typed form the store
//! keeps (`Parsed`), and the one function that turns the first into the second for every mode.

use crate::error::SourceError;
use crate::extents::ExtentMap;
use crate::parsers::{
    numa, onstat_g_ath, onstat_g_con, onstat_g_ntt, onstat_g_ses, onstat_g_sql, onstat_k, onstat_u,
    onstat_x, sockets,
};
use crate::source::{Output, Source};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// A collected output exactly as the command printed it: one line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawSample {
    /// Seconds since the start of the session (recording).
    pub t: f64,
    /// The command line as a DBA types it (`onstat -u`) or the path of a file read directly.
    pub source: String,
    #[serde(default)]
    pub argv: Vec<String>,
    /// Exit code; null when killed, timed out or not started (then `stderr` says why). A
    /// hand-written line may leave it out: it then counts as a successful run (0).
    #[serde(default = "exit_ok")]
    pub exit: Option<i32>,
    #[serde(default)]
    pub stdout: String,
    #[serde(default)]
    pub stderr: String,
}

fn exit_ok() -> Option<i32> {
    Some(0)
}

impl RawSample {
    pub fn at(&self) -> Duration {
        Duration::try_from_secs_f64(self.t).unwrap_or_default()
    }
}

/// What the store keeps per source: typed, shared (a frozen screen holds on to it cheaply).
#[derive(Debug, Clone)]
pub enum Parsed {
    OnstatU(Arc<onstat_u::OnstatU>),
    OnstatX(Arc<onstat_x::OnstatX>),
    OnstatGCon(Arc<onstat_g_con::OnstatGCon>),
    OnstatGAth(Arc<onstat_g_ath::OnstatGAth>),
    OnstatGNtt(Arc<onstat_g_ntt::OnstatGNtt>),
    OnstatK(Arc<onstat_k::OnstatK>),
    OnstatGSes(Arc<onstat_g_ses::OnstatGSes>),
    OnstatGSql(Arc<onstat_g_sql::OnstatGSql>),
    Sockets(Arc<sockets::Sockets>),
    NodeList(Arc<Vec<u32>>),
    NodeMeminfo(Arc<numa::NodeMeminfo>),
    CpuList(Arc<Vec<u32>>),
    ZoneReclaimMode(u32),
    Vmstat(Arc<BTreeMap<String, u64>>),
    NumaMaps(Arc<numa::NumaMaps>),
    Extents(Arc<ExtentMap>),
    Systabnames(Arc<crate::parsers::systabnames::Systabnames>),
    /// A source whose typed form the live screens do not use yet: kept as text.
    Text(Arc<str>),
}

impl Parsed {
    /// Lines the parser did not understand, for the status line.
    pub fn unparsed_count(&self) -> usize {
        match self {
            Parsed::OnstatU(v) => v.unparsed.len(),
            Parsed::OnstatX(v) => v.unparsed.len(),
            Parsed::OnstatGCon(v) => v.unparsed.len(),
            Parsed::OnstatGAth(v) => v.unparsed.len(),
            Parsed::OnstatGNtt(v) => v.unparsed.len(),
            Parsed::OnstatK(v) => v.unparsed.len(),
            Parsed::OnstatGSes(v) => v.unparsed.len(),
            Parsed::OnstatGSql(v) => v.unparsed.len(),
            Parsed::Sockets(v) => v.unparsed.len(),
            Parsed::NodeMeminfo(v) => v.unparsed.len(),
            Parsed::NumaMaps(v) => v.unparsed.len(),
            _ => 0,
        }
    }
}

/// Parses a finished run of `source`. Exit codes are read per command first (onstat's code is the
/// server mode; 255 means off-line), so a failed run never reaches a parser.
pub fn parse_output(source: &Source, out: Output) -> Result<Parsed, SourceError> {
    let out = source.exit_policy().check(out)?;
    let text = out.stdout.as_str();
    Ok(match source {
        Source::OnstatU => Parsed::OnstatU(Arc::new(offline_check(onstat_u::parse(text)?)?)),
        Source::OnstatX => Parsed::OnstatX(Arc::new(onstat_x::parse(text)?)),
        Source::OnstatGCon => Parsed::OnstatGCon(Arc::new(onstat_g_con::parse(text)?)),
        Source::ProcNetTcp | Source::ProcNetTcp6 => {
            Parsed::Sockets(Arc::new(sockets::parse_proc_net_tcp(text)?))
        }
        Source::Netstat => Parsed::Sockets(Arc::new(sockets::parse_netstat(text)?)),
        Source::NodesOnline => Parsed::NodeList(Arc::new(numa::parse_cpulist(text)?)),
        Source::NodeMeminfo(_) => Parsed::NodeMeminfo(Arc::new(numa::parse_node_meminfo(text)?)),
        Source::NodeCpulist(_) => Parsed::CpuList(Arc::new(numa::parse_cpulist(text)?)),
        Source::ZoneReclaimMode => Parsed::ZoneReclaimMode(numa::parse_zone_reclaim_mode(text)?),
        Source::Vmstat => Parsed::Vmstat(Arc::new(numa::parse_vmstat(text)?)),
        Source::NumaMaps(_) => Parsed::NumaMaps(Arc::new(numa::parse_numa_maps(text)?)),
        Source::OncheckPe => Parsed::Extents(Arc::new(ExtentMap::from_oncheck_pe(text)?)),
        Source::Systabnames => {
            Parsed::Systabnames(Arc::new(crate::parsers::systabnames::parse(text)?))
        }
        Source::OnstatGAth => Parsed::OnstatGAth(Arc::new(onstat_g_ath::parse(text)?)),
        Source::OnstatGNtt => Parsed::OnstatGNtt(Arc::new(onstat_g_ntt::parse(text)?)),
        Source::OnstatK => Parsed::OnstatK(Arc::new(onstat_k::parse(text)?)),
        Source::OnstatGSes(_) => Parsed::OnstatGSes(Arc::new(onstat_g_ses::parse(text)?)),
        Source::OnstatGSql(_) => Parsed::OnstatGSql(Arc::new(onstat_g_sql::parse(text)?)),
        Source::OnstatD => Parsed::Text(Arc::from(text)),
    })
}

/// onstat -u printing the off-line message with exit code 5 would be odd, but a wrapper script
/// could do it: the message wins over the exit code.
fn offline_check(u: onstat_u::OnstatU) -> Result<onstat_u::OnstatU, SourceError> {
    match &u.offline {
        Some(m) => Err(SourceError::Offline { message: m.clone() }),
        None => Ok(u),
    }
}

/// A typed sample on its way to the store.
#[derive(Debug, Clone)]
pub struct Update {
    pub source: Source,
    pub t: Duration,
    /// How long the run took (the command's cost, shown in the status view).
    pub took: Duration,
    pub result: Result<Parsed, SourceError>,
}
