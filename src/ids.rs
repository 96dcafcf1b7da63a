//! Typed identifiers shared by parsers, joins and views.
//!
//! Every address onstat prints (rstcb, wait address, lock, condition, buffer) lives in the one
//! shared-memory address space, so one `Addr` type lets them be compared with each other: a
//! thread's wait address *is* a lock address or a condition address.

use serde::{Serialize, Serializer};
use std::fmt;

/// A shared-memory address as onstat prints it (lowercase hex, 6 to 16 digits).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Addr(pub u64);

impl Addr {
    /// Parses hex digits (no `0x`), case-insensitive. `None` for empty, non-hex or > 16 digits.
    pub fn from_hex(s: &str) -> Option<Addr> {
        if s.is_empty() || s.len() > 16 {
            return None;
        }
        u64::from_str_radix(s, 16).ok().map(Addr)
    }

    /// onstat prints 0 for "none" in owner, wait and waiter columns.
    pub(crate) fn non_zero(self) -> Option<Addr> {
        (self.0 != 0).then_some(self)
    }
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Through LowerHex so width and alignment (`{:>16}`) apply.
        fmt::LowerHex::fmt(&self.0, f)
    }
}

impl fmt::Debug for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Addr({:x})", self.0)
    }
}

impl Serialize for Addr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A session id (`sessid` in `onstat -u`, `sid` in `onstat -g ntt`). 0 = daemon thread.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
#[serde(transparent)]
pub struct Sid(pub u64);

impl fmt::Display for Sid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::str::FromStr for Sid {
    type Err = std::num::ParseIntError;

    fn from_str(s: &str) -> Result<Sid, Self::Err> {
        s.parse().map(Sid)
    }
}

impl fmt::Debug for Sid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sid({})", self.0)
    }
}

/// A thread id (`tid` in `onstat -g ath`, `waiter` in `onstat -g con`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
#[serde(transparent)]
pub struct Tid(pub u64);

impl fmt::Display for Tid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for Tid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tid({})", self.0)
    }
}

/// serde `serialize_with` helper: a flag word printed in hex by onstat (`80`, `890`) stays hex.
pub(crate) fn hex_u32<S: Serializer>(v: &u32, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("{v:x}"))
}

/// Sorts (key, number) pairs: an address or a session with a row's place, or with a rank. Every
/// such sort of the per-second path goes through this one instantiation of the sort (each
/// element type sorted costs the binary its own copy of the sort's code). A row's place as the
/// number makes the sort a stable sort by key.
pub(crate) fn sort_pairs(pairs: &mut [(u64, u32)]) {
    pairs.sort_unstable();
}

/// The last place of each key in `pairs` sorted by [`sort_pairs`] (the later of rows with one
/// key counts, as a map they were inserted into keeps it).
pub(crate) fn last_of_each(pairs: &[(u64, u32)]) -> impl Iterator<Item = u32> + '_ {
    pairs
        .iter()
        .enumerate()
        .filter(|&(i, (k, _))| pairs.get(i + 1).is_none_or(|(next, _)| next != k))
        .map(|(_, &(_, at))| at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addr_round_trips_hex() {
        assert_eq!(Addr::from_hex("14a58b98"), Some(Addr(0x14a5_8b98)));
        assert_eq!(Addr::from_hex("ffffffffffffffff"), Some(Addr(u64::MAX)));
        assert_eq!(Addr::from_hex("1ffffffffffffffff"), None);
        assert_eq!(Addr::from_hex(""), None);
        assert_eq!(Addr::from_hex("xyz"), None);
        assert_eq!(Addr(0x80eb8c).to_string(), "80eb8c");
        assert_eq!(Addr(0).non_zero(), None);
        assert_eq!(
            format!("{:>8}|{:<4}|", Addr(0xab), Sid(7)),
            "      ab|7   |"
        );
    }
}
