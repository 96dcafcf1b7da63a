//! `onstat -u`: user threads, their 7 flag characters and what they wait for.

use super::header::{Header, Preamble};
use super::Unparsed;
use crate::error::ParseError;
use crate::ids::{Addr, Sid};
use compact_str::CompactString;
use serde::{Serialize, Serializer};

/// The whole output of one `onstat -u`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct OnstatU {
    pub header: Option<Header>,
    /// Set (and everything else empty) when onstat printed the off-line message.
    pub offline: Option<String>,
    pub threads: Vec<UserThread>,
    /// Footer `N active, M total, K maximum concurrent`.
    pub active: Option<u64>,
    pub total: Option<u64>,
    pub max_concurrent: Option<u64>,
    pub unparsed: Vec<Unparsed>,
}

/// One row of `onstat -u`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserThread {
    /// The rstcb address: what `onstat -X` owner/waiter and `onstat -k` owner refer to.
    pub address: Addr,
    pub flags: Flags,
    /// Decoded from flag position 1 (or `DEFUNCT`).
    pub wait_reason: Option<WaitReason>,
    pub sessid: Sid,
    pub user: CompactString,
    /// `None` for `-`.
    pub tty: Option<CompactString>,
    /// `None` for 0 (not waiting).
    pub wait: Option<Addr>,
    pub tout: i64,
    pub locks: u64,
    pub nreads: u64,
    pub nwrites: u64,
}

/// Position 1 of the flags: what the thread waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitReason {
    Buffer,
    Checkpoint,
    LogBuffer,
    Lock,
    Mutex,
    Transaction,
    Condition,
    Rollback,
    Defunct,
}

impl WaitReason {
    pub const ALL: [WaitReason; 9] = [
        WaitReason::Buffer,
        WaitReason::Checkpoint,
        WaitReason::LogBuffer,
        WaitReason::Lock,
        WaitReason::Mutex,
        WaitReason::Transaction,
        WaitReason::Condition,
        WaitReason::Rollback,
        WaitReason::Defunct,
    ];

    /// The flag letter onstat prints (`D` stands for `DEFUNCT`).
    pub fn letter(self) -> char {
        match self {
            WaitReason::Buffer => 'B',
            WaitReason::Checkpoint => 'C',
            WaitReason::LogBuffer => 'G',
            WaitReason::Lock => 'L',
            WaitReason::Mutex => 'S',
            WaitReason::Transaction => 'T',
            WaitReason::Condition => 'Y',
            WaitReason::Rollback => 'X',
            WaitReason::Defunct => 'D',
        }
    }

    pub fn from_letter(c: u8) -> Option<WaitReason> {
        Some(match c {
            b'B' => WaitReason::Buffer,
            b'C' => WaitReason::Checkpoint,
            b'G' => WaitReason::LogBuffer,
            b'L' => WaitReason::Lock,
            b'S' => WaitReason::Mutex,
            b'T' => WaitReason::Transaction,
            b'Y' => WaitReason::Condition,
            b'X' => WaitReason::Rollback,
            _ => return None,
        })
    }

    /// In words, for the screen.
    pub fn words(self) -> &'static str {
        match self {
            WaitReason::Buffer => "buffer",
            WaitReason::Checkpoint => "checkpoint",
            WaitReason::LogBuffer => "log buffer write",
            WaitReason::Lock => "lock",
            WaitReason::Mutex => "mutex",
            WaitReason::Transaction => "transaction",
            WaitReason::Condition => "condition",
            WaitReason::Rollback => "rollback cleanup",
            WaitReason::Defunct => "defunct",
        }
    }
}

/// The 7 flag characters exactly as printed (`Y--P--D`, or the word `DEFUNCT`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Flags(pub [u8; 7]);

impl Flags {
    pub fn as_str(&self) -> &str {
        // Only ASCII is ever stored (the parser checks), so this cannot fail.
        std::str::from_utf8(&self.0).unwrap_or("???????")
    }

    pub fn is_defunct(&self) -> bool {
        &self.0 == b"DEFUNCT"
    }

    pub fn wait_reason(&self) -> Option<WaitReason> {
        if self.is_defunct() {
            Some(WaitReason::Defunct)
        } else {
            WaitReason::from_letter(self.0[0])
        }
    }

    /// Position 3: `A` backup thread, or the transaction state letter (B, P, X, C, R, H).
    pub fn txn_state(&self) -> Option<char> {
        (!self.is_defunct() && self.0[2] != b'-').then_some(self.0[2] as char)
    }

    /// Position 4: `P` primary thread of its session (PDQ helpers print `-`).
    pub fn is_primary(&self) -> bool {
        !self.is_defunct() && self.0[3] == b'P'
    }

    /// Position 5: `R` in a read call.
    pub fn in_read(&self) -> bool {
        !self.is_defunct() && self.0[4] == b'R'
    }

    /// Position 5: `X` in a critical section.
    pub fn in_critical_section(&self) -> bool {
        !self.is_defunct() && self.0[4] == b'X'
    }

    /// Position 6: `R` recovery thread.
    pub fn is_recovery(&self) -> bool {
        !self.is_defunct() && self.0[5] == b'R'
    }

    /// Position 7: `B` btree cleaner, `C` terminated awaiting cleanup, `D` daemon, `F` page
    /// cleaner, `M` monitor.
    pub fn thread_kind(&self) -> Option<char> {
        (!self.is_defunct() && self.0[6] != b'-').then_some(self.0[6] as char)
    }
}

impl std::fmt::Debug for Flags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Flags({})", self.as_str())
    }
}

impl std::fmt::Display for Flags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Flags {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Parses the output of `onstat -u`.
pub fn parse(text: &str) -> Result<OnstatU, ParseError> {
    let _ = (text, Preamble::None);
    Err(ParseError::empty(
        "onstat -u output (parser not written yet)",
    ))
}
