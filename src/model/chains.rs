//! Blocker chains: from a waiting thread, follow "who holds what it waits on" to the head
//! blocker; a chain that comes back to itself is a deadlock.

use crate::ids::Addr;
use rustc_hash::{FxHashMap, FxHashSet};

/// Where a waiter's chain leads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Chain {
    /// The blocking threads, nearest first; the last one is the head blocker (unless a cycle).
    pub(crate) blockers: Vec<Addr>,
    /// The first thread that is not itself blocked by another thread.
    pub(crate) head: Option<Addr>,
    /// The chain loops: these threads wait on each other (a deadlock).
    pub(crate) cycle: bool,
}

/// The longest chain followed; real chains are short, this bounds damage from odd data.
pub(crate) const MAX_DEPTH: usize = 64;

/// Follows `owner_of` (waiting thread → thread holding what it waits on) from `start`.
pub(crate) fn follow(start: Addr, owner_of: &FxHashMap<Addr, Addr>) -> Chain {
    let mut chain = Chain::default();
    let mut seen: FxHashSet<Addr> = FxHashSet::default();
    seen.insert(start);
    let mut cur = start;
    while let Some(&next) = owner_of.get(&cur) {
        if next == cur {
            break;
        }
        if !seen.insert(next) {
            chain.cycle = true;
            break;
        }
        chain.blockers.push(next);
        if chain.blockers.len() >= MAX_DEPTH {
            break;
        }
        cur = next;
    }
    if !chain.cycle {
        chain.head = chain.blockers.last().copied();
    }
    chain
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(u64, u64)]) -> FxHashMap<Addr, Addr> {
        pairs.iter().map(|(a, b)| (Addr(*a), Addr(*b))).collect()
    }

    #[test]
    fn chain_to_the_head_blocker() {
        // 904 -> 902 -> 901 (901 waits on nothing held by a thread)
        let m = map(&[(904, 902), (903, 902), (902, 901)]);
        let c = follow(Addr(904), &m);
        assert_eq!(c.blockers, vec![Addr(902), Addr(901)]);
        assert_eq!(c.head, Some(Addr(901)));
        assert!(!c.cycle);
        assert_eq!(follow(Addr(901), &m), Chain::default());
    }

    #[test]
    fn cycles_are_deadlocks() {
        let m = map(&[(1, 2), (2, 3), (3, 1)]);
        let c = follow(Addr(1), &m);
        assert!(c.cycle);
        assert_eq!(c.head, None);
        assert_eq!(c.blockers, vec![Addr(2), Addr(3)]);
    }
}
