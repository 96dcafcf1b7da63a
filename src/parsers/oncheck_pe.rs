//! `oncheck -pe`: the chunk and extent report. Per dbspace, per chunk, the (object, offset, size)
//! extents. The source of the extent map that turns `chunk:page` into table and index names.

use super::Unparsed;
use crate::error::ParseError;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OncheckPe {
    pub chunks: Vec<PeChunk>,
    pub unparsed: Vec<Unparsed>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeChunk {
    pub chunk: u32,
    /// From the `DBspace Usage Report: NAME` line above it; `None` when no such line was seen.
    pub dbspace: Option<String>,
    pub path: String,
    /// `Pagesize(k)`; `None` in the old layout (`Chunk Pathname Size Used Free`).
    pub page_size_kb: Option<u32>,
    pub size: Option<u64>,
    pub used: Option<u64>,
    /// `None` for sbspace chunks (`see below`) and abridged reports.
    pub free: Option<u64>,
    pub extents: Vec<PeExtent>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeExtent {
    pub kind: ExtentKind,
    pub description: String,
    /// In the chunk's own page size.
    pub offset: u64,
    pub size: u64,
    /// For `db:'owner'.name` objects (tables, indexes, fragments, TBLSpace).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtentKind {
    /// `RESERVED PAGES`
    Reserved,
    /// `CHUNK FREELIST PAGE`
    Freelist,
    /// `dbs:'owner'.TBLSpace`
    Tblspace,
    /// `db:'owner'.table` (tables, indexes, fragments)
    Object,
    /// `SBLOBSpace LO [2,2,1]`
    Sblob,
    /// `FREE`
    Free,
    /// `PHYSICAL LOG`, `LOGICAL LOG: Log file 1`, metadata, ...
    Other,
}

/// Parses a whole report into owned records (for `ifxtop parse` and tests; the extent map is
/// built without these allocations).
pub fn parse(text: &str) -> Result<OncheckPe, ParseError> {
    let _ = text;
    Err(ParseError::empty(
        "oncheck -pe output (parser not written yet)",
    ))
}
