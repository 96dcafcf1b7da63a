//! `onstat -g ses` (the session list, with `Last 20 Sessions Terminated` where printed) and
//! `onstat -g ses <sid>` (one session's detail: its threads and its SQL).

use super::header::Header;
use super::Unparsed;
use crate::error::ParseError;
use crate::ids::{Addr, Sid, Tid};
use compact_str::CompactString;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGSes {
    pub header: Option<Header>,
    pub offline: Option<String>,
    /// The session table (one row with `onstat -g ses <sid>`).
    pub sessions: Vec<SessionRow>,
    /// `Last 20 Sessions Terminated` (newer versions of the list).
    pub terminated: Vec<TerminatedSession>,
    /// The parts only `onstat -g ses <sid>` prints.
    pub detail: Option<SessionDetail>,
    pub unparsed: Vec<Unparsed>,
}

/// `id user tty pid hostname #RSAM-threads total-memory used-memory [dynamic-explain]`, with the
/// `effective user` column of newer detail output when present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionRow {
    pub sid: Sid,
    pub user: CompactString,
    /// `None` for `-`.
    pub effective_user: Option<CompactString>,
    pub tty: Option<CompactString>,
    /// The client process id (0 or `-` for server-internal sessions: `None`).
    pub pid: Option<u64>,
    /// `None` for `-`.
    pub hostname: Option<CompactString>,
    pub threads: u64,
    pub total_memory: u64,
    pub used_memory: u64,
    /// `on`/`off` where printed.
    pub dynamic_explain: Option<CompactString>,
}

/// One row of `Last 20 Sessions Terminated`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TerminatedSession {
    pub sid: Sid,
    pub user: CompactString,
    pub hostname: CompactString,
    pub pid: u64,
    /// As printed: `01/19/2015.15:20`.
    pub time: CompactString,
    pub reason: String,
}

/// What `onstat -g ses <sid>` adds to the session row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct SessionDetail {
    /// `Program :` line(s), when printed.
    pub program: Option<String>,
    /// `tid name rstcb flags curstk status`.
    pub threads: Vec<SesThread>,
    /// From the `Sess SQL ...` table: statement type, database, isolation, lock mode, errors.
    pub sql: Option<SqlState>,
    /// `Current SQL statement :` (may span lines; joined with `\n`, indentation removed).
    pub current_sql: Option<String>,
    /// `Last parsed SQL statement :`.
    pub last_parsed_sql: Option<String>,
}

/// One thread of a session: `78  sqlexec  4b4ad628  Y--P---  5840  cond wait  netnorm -`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SesThread {
    pub tid: Tid,
    pub name: CompactString,
    pub rstcb: Addr,
    /// The 7 `onstat -u` flag characters as printed.
    pub flags: CompactString,
    pub curstk: u64,
    /// As printed, blanks collapsed.
    pub status: String,
}

/// The `Sess SQL Current Iso Lock SQL ISAM F.E.` table row (shared with `onstat -g sql`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SqlState {
    pub sid: Sid,
    /// `SELECT`, `INSERT`, ...; `None` for `-`.
    pub stmt_type: Option<CompactString>,
    /// `None` for `-`.
    pub database: Option<CompactString>,
    /// `CR`, `DR`, `CS`, `RR`, `NL`, ...
    pub isolation: Option<CompactString>,
    /// `Not Wait`, `Wait 30`, ...
    pub lock_mode: Option<CompactString>,
    pub sql_error: Option<i64>,
    pub isam_error: Option<i64>,
    /// Client library version (`9.24`), `None` for `-`.
    pub fe_version: Option<CompactString>,
    /// `Off`/`On`, where printed.
    pub explain: Option<CompactString>,
}

/// Parses the output of `onstat -g ses` or `onstat -g ses <sid>`.
pub fn parse(text: &str) -> Result<OnstatGSes, ParseError> {
    let _ = text;
    Err(ParseError::empty(
        "onstat -g ses output (parser being written)",
    ))
}
