//! `onstat -X`: buffers being accessed, per buffer pool, with their owner and waiting threads.

use super::header::Header;
use super::Unparsed;
use crate::error::ParseError;
use crate::ids::Addr;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatX {
    pub header: Option<Header>,
    pub offline: Option<String>,
    pub pools: Vec<BufferPool>,
    pub unparsed: Vec<Unparsed>,
}

/// One `Buffer pool page size: N` section and its footer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BufferPool {
    pub page_size: u32,
    pub buffers: Vec<Buffer>,
    pub modified: Option<u64>,
    pub total: Option<u64>,
    pub hash_buckets: Option<u64>,
    pub buffer_size: Option<u64>,
}

/// One buffer row. `owner`/`waiters` are rstcb addresses matching `onstat -u`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Buffer {
    pub address: Addr,
    /// `None` for 0; `ffffffffffffffff` is kept (it means "shared, no single owner").
    pub owner: Option<Addr>,
    #[serde(serialize_with = "crate::ids::hex_u32")]
    pub flags: u32,
    pub chunk: u32,
    /// In base pages, as onstat prints it (see DESIGN.md "Page units").
    pub page: u64,
    /// True when the pagenum was printed as packed hex (`100955`) rather than `chunk:page`.
    pub packed: bool,
    pub memaddr: Option<Addr>,
    pub nslots: u32,
    #[serde(serialize_with = "crate::ids::hex_u32")]
    pub pgflgs: u32,
    /// `scount` (newer builds) or `sharers` (older builds).
    pub scount: Option<u32>,
    /// Every waiting thread; empty when the column is 0.
    pub waiters: Vec<Addr>,
}

/// Parses the output of `onstat -X`.
pub fn parse(text: &str) -> Result<OnstatX, ParseError> {
    let _ = text;
    Err(ParseError::empty(
        "onstat -X output (parser not written yet)",
    ))
}
