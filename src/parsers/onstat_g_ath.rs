//! `onstat -g ath`: every thread with its tid, tcb, rstcb (the `onstat -u` address), priority,
//! status (old and new spellings), VP class and name.

use super::header::Header;
use super::Unparsed;
use crate::error::ParseError;
use crate::ids::{Addr, Tid};
use compact_str::CompactString;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatGAth {
    pub header: Option<Header>,
    pub offline: Option<String>,
    pub threads: Vec<AthThread>,
    pub unparsed: Vec<Unparsed>,
}

/// One row: `213  14c91ec0 14a58b98 2  cond wait  sm_read  1cpu  sqlexec`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AthThread {
    pub tid: Tid,
    pub tcb: Addr,
    /// The `onstat -u` address of a user thread; `None` for 0 (a thread with no rstcb).
    pub rstcb: Option<Addr>,
    pub prty: u32,
    /// The status exactly as printed, blanks collapsed (`cond wait sm_read`, `sleeping secs: 44`).
    pub status: String,
    /// The status decoded.
    pub state: ThreadState,
    /// `1cpu`, `4lio`, `8tli`, ... (the VP class with its number, as printed).
    pub vp_class: CompactString,
    /// `sqlexec`, `main_loop()`, `flush_sub(0)`, ...
    pub name: CompactString,
}

/// What `status` says the thread is doing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ThreadState {
    Running,
    Ready,
    /// `sleeping forever` (secs None) or `sleeping secs: N`.
    Sleeping {
        secs: Option<u64>,
    },
    /// `cond wait NAME` (NAME is the `onstat -g con` condition name).
    CondWait {
        name: CompactString,
    },
    /// `mutex wait NAME`.
    MutexWait {
        name: CompactString,
    },
    /// `lock wait` / `lockwait`.
    LockWait,
    /// `IO Wait`, `IO Idle`.
    Io,
    /// `join wait`, `yield ...`, `buffer wait`, `checkpoint wait`, `log buffer wait`, `terminated`,
    /// and anything newer: the words as printed.
    Other {
        words: String,
    },
}

/// Parses the output of `onstat -g ath` (whole, or rows picked out by `grep`).
pub fn parse(text: &str) -> Result<OnstatGAth, ParseError> {
    let _ = text;
    Err(ParseError::empty(
        "onstat -g ath output (parser being written)",
    ))
}
