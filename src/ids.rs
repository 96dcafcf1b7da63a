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

/// Reads (key, value) pairs kept in key order, for keys asked mostly in that order (threads in
/// rstcb order, sessions in sid order): each lookup starts where the last one ended and looks a
/// few pairs on (keys not asked for in between), rather than into a hash table's scattered
/// slots, a cache miss each at 5,000 sessions; a key behind is found by a binary search. The
/// same answers as a map of the pairs (their keys unique).
pub(crate) struct Cursor<'a, K, V> {
    pairs: &'a [(K, V)],
    at: usize,
}

impl<'a, K: Ord + Copy, V> Cursor<'a, K, V> {
    pub(crate) fn new(pairs: &'a [(K, V)]) -> Self {
        Cursor { pairs, at: 0 }
    }

    pub(crate) fn get(&mut self, key: K) -> Option<&'a V> {
        let pairs = self.pairs;
        let ahead = pairs.get(self.at..).unwrap_or_default();
        let after_last = self.at == 0 || pairs[self.at - 1].0 < key;
        let found = match ahead.iter().take(4).position(|(k, _)| *k >= key) {
            Some(i) if ahead[i].0 == key => Some(self.at + i),
            // Between the last key asked and one further on: not there.
            Some(_) if after_last => None,
            _ => pairs.binary_search_by_key(&key, |(k, _)| *k).ok(),
        };
        found.map(|i| {
            self.at = i + 1;
            &pairs[i].1
        })
    }
}

/// Values by session in session order, a session named twice counted once (its later value,
/// as a map it was inserted into kept it): the sessions' rows, in that order too, read them
/// front to back ([`BySid::cursor`]), not through a hash table's scattered slots (a cache miss
/// each at 5,000 sessions).
#[derive(Debug, Clone)]
pub(crate) struct BySid<T>(Vec<(Sid, T)>);

impl<T> Default for BySid<T> {
    /// Empty, whatever the values (a derived one would ask them to have a default).
    fn default() -> Self {
        BySid(Vec::new())
    }
}

impl<T: Clone> FromIterator<(Sid, T)> for BySid<T> {
    fn from_iter<I: IntoIterator<Item = (Sid, T)>>(iter: I) -> Self {
        let v: Vec<(Sid, T)> = iter.into_iter().collect();
        if v.windows(2).all(|w| w[0].0 < w[1].0) {
            return BySid(v);
        }
        BySid(sorted_last_wins(&v, |(s, _)| s.0))
    }
}

impl<T> BySid<T> {
    /// Pairs already in session order, each session once (grouped from sorted pairs).
    pub(crate) fn from_sorted(pairs: Vec<(Sid, T)>) -> Self {
        debug_assert!(pairs.windows(2).all(|w| w[0].0 < w[1].0));
        BySid(pairs)
    }

    /// The value of one session (a binary search: for a few, not for every session in turn,
    /// which [`BySid::cursor`] reads).
    pub(crate) fn get(&self, sid: Sid) -> Option<&T> {
        let i = self.0.binary_search_by_key(&sid, |(s, _)| *s).ok()?;
        self.0.get(i).map(|(_, v)| v)
    }

    /// Without room to spare: for a map kept for many seconds.
    pub(crate) fn tight(mut self) -> Self {
        self.0.shrink_to_fit();
        self
    }

    /// Reads the values in session order ([`Cursor`]).
    pub(crate) fn cursor(&self) -> Cursor<'_, Sid, T> {
        Cursor::new(&self.0)
    }
}

/// Sorts (key, number) pairs: an address or a session with a row's place, or with a rank. Every
/// such sort of the per-second path goes through this one instantiation of the sort (each
/// element type sorted costs the binary its own copy of the sort's code). A row's place as the
/// number makes the sort a stable sort by key.
pub(crate) fn sort_pairs(pairs: &mut [(u64, u32)]) {
    pairs.sort_unstable();
}

/// `items` in order of `key`, one for each key: the later of items with one key (as a map they
/// were inserted into keeps it).
pub(crate) fn sorted_last_wins<T: Clone>(items: &[T], key: impl Fn(&T) -> u64) -> Vec<T> {
    let mut places: Vec<(u64, u32)> = (0u32..).zip(items).map(|(i, t)| (key(t), i)).collect();
    sort_pairs(&mut places);
    places
        .iter()
        .enumerate()
        .filter(|&(i, (k, _))| places.get(i + 1).is_none_or(|(next, _)| next != k))
        .filter_map(|(_, &(_, at))| items.get(at as usize).cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Pairs in any order and twice, made one per key by the later and read by a cursor
        /// in any order: what a map they were inserted into answers.
        #[test]
        fn sorted_pairs_read_by_a_cursor_are_a_map(
            pairs in proptest::collection::vec((0u64..30, 0u32..1000), 0..40),
            asked in proptest::collection::vec(0u64..32, 0..60),
        ) {
            let map: std::collections::HashMap<u64, u32> = pairs.iter().copied().collect();
            let sorted = sorted_last_wins(&pairs, |(k, _)| *k);
            proptest::prop_assert!(sorted.windows(2).all(|w| w[0].0 < w[1].0));
            proptest::prop_assert_eq!(sorted.len(), map.len());
            let mut c = Cursor::new(&sorted);
            for k in asked.into_iter().chain(0..32) {
                proptest::prop_assert_eq!(c.get(k), map.get(&k), "{}", k);
            }
        }
    }

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
