//! `onstat -g con`: conditions with waiters (`netnorm`, `sm_read`, ...), waiter tid and wait time.

use super::header::Header;
use super::Unparsed;
use crate::error::ParseError;
use crate::ids::{Addr, Tid};
use compact_str::CompactString;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGCon {
    pub header: Option<Header>,
    pub offline: Option<String>,
    pub conditions: Vec<Condition>,
    pub unparsed: Vec<Unparsed>,
}

/// One row: `cid addr name waiter waittime`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Condition {
    pub cid: u64,
    /// Matches the `wait` column of `onstat -u`.
    pub addr: Addr,
    pub name: CompactString,
    /// A thread id (`onstat -g ath` tid).
    pub waiter: Tid,
    /// Seconds.
    pub waittime: u64,
}

/// Parses the output of `onstat -g con`.
pub fn parse(text: &str) -> Result<OnstatGCon, ParseError> {
    let _ = text;
    Err(ParseError::empty(
        "onstat -g con output (parser not written yet)",
    ))
}
