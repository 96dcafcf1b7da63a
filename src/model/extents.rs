//! The extent map: `chunk:page` → object and dbspace, built once from `oncheck -pe`.
//! (Placeholder API in the lead's branch; the real map lands from the extent-map work.)

use crate::error::ParseError;
use crate::parsers::oncheck_pe::ExtentKind;

#[derive(Debug, Default)]
pub struct ExtentMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup<'a> {
    Resolved {
        object: &'a str,
        dbspace: &'a str,
        kind: ExtentKind,
    },
    Free,
    Unmapped,
    NoChunk,
}

impl ExtentMap {
    pub fn from_oncheck_pe(text: &str) -> Result<ExtentMap, ParseError> {
        let _ = text;
        Err(ParseError::empty("oncheck -pe"))
    }

    pub fn lookup(&self, chunk: u32, page: u64, base_page_kb: u32) -> Lookup<'_> {
        let _ = (chunk, page, base_page_kb);
        Lookup::NoChunk
    }

    pub fn extent_count(&self) -> usize {
        0
    }
}
