//! `onstat -k`: the lock table: address, owner and waiter list (rstcb addresses), lock type,
//! tblsnum (partnum), rowid and key.

use super::header::Header;
use super::Unparsed;
use crate::error::ParseError;
use crate::ids::Addr;
use compact_str::CompactString;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatK {
    pub header: Option<Header>,
    pub offline: Option<String>,
    pub locks: Vec<Lock>,
    /// Footer `N active, M total, H hash buckets[, O lock table overflows]`.
    pub active: Option<u64>,
    pub total: Option<u64>,
    pub hash_buckets: Option<u64>,
    /// Only newer versions print it.
    pub overflows: Option<u64>,
    pub unparsed: Vec<Unparsed>,
}

/// One row: `a095f78  0  a4d9e68  0  HDR+S  100002  203  0`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lock {
    /// What a lock waiter's `onstat -u` wait column holds.
    pub address: Addr,
    /// The first thread (rstcb) waiting for this lock; `None` for 0.
    pub wtlist: Option<Addr>,
    /// The thread (rstcb) holding it.
    pub owner: Addr,
    /// The next lock in the owner's list; `None` for 0.
    pub lklist: Option<Addr>,
    /// As printed: `HDR+S`, `S`, `X`, `HDR+IX`, `B`, ...
    #[serde(rename = "type")]
    pub lock_type: CompactString,
    /// The partnum (hex as printed): which table or index.
    pub tblsnum: u32,
    /// Hex as printed; 0 for a table lock.
    pub rowid: u64,
    /// `key#/bsiz` as printed (`0`, `K- 1`).
    pub key: CompactString,
}

/// Parses the output of `onstat -k`.
pub fn parse(text: &str) -> Result<OnstatK, ParseError> {
    let _ = text;
    Err(ParseError::empty("onstat -k output (parser being written)"))
}
