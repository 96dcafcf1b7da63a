//! `onstat -g sql <sid>`: a session's SQL state and its current statement.

use super::header::Header;
use super::onstat_g_ses::SqlState;
use super::Unparsed;
use crate::error::ParseError;
use compact_str::CompactString;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGSql {
    pub header: Option<Header>,
    pub offline: Option<String>,
    /// The `Sess SQL Current ...` rows (one per session with `onstat -g sql`, one with `<sid>`).
    pub sessions: Vec<SqlState>,
    /// `Current statement name : unlcur`.
    pub statement_name: Option<CompactString>,
    /// `Current SQL statement [(N)] :` (lines joined with `\n`, indentation removed).
    pub current_sql: Option<String>,
    /// `Last parsed SQL statement :`.
    pub last_parsed_sql: Option<String>,
    pub unparsed: Vec<Unparsed>,
}

/// Parses the output of `onstat -g sql` or `onstat -g sql <sid>`.
pub fn parse(text: &str) -> Result<OnstatGSql, ParseError> {
    let _ = text;
    Err(ParseError::empty(
        "onstat -g sql output (parser being written)",
    ))
}
