//! Blocker chains: from a waiting thread, follow "who holds what it waits on" to the head
//! blocker; a chain that comes back to itself is a deadlock.

use crate::ids::Addr;
use rustc_hash::FxHashMap;

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
    // Most waiters (idle clients) wait on nothing a thread holds: nothing to follow, and
    // nothing to allocate for them.
    if !owner_of.contains_key(&start) {
        return chain;
    }
    // The chain is short (at most MAX_DEPTH): a list searched end to end beats a hash set.
    let mut seen: Vec<Addr> = Vec::with_capacity(4);
    seen.push(start);
    let mut cur = start;
    while let Some(&next) = owner_of.get(&cur) {
        if next == cur {
            break;
        }
        if seen.contains(&next) {
            chain.cycle = true;
            break;
        }
        seen.push(next);
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
    use rustc_hash::FxHashSet;

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

    use proptest::prelude::*;

    proptest! {
        /// Over any "waits on a thing held by" map of a few threads: the chain follows the
        /// map's edges one by one from the start, names no thread twice and not the start,
        /// stops within MAX_DEPTH; a chain with a head ends where the map ends (or a thread
        /// holds what it waits on itself), a cycle's last thread leads back into the chain.
        #[test]
        fn a_chain_follows_the_map_to_its_head_or_its_cycle(
            pairs in proptest::collection::vec((0u64..12, 0u64..12), 0..24),
            start in 0u64..12,
        ) {
            let m: FxHashMap<Addr, Addr> = pairs.iter().map(|(a, b)| (Addr(*a), Addr(*b))).collect();
            let c = follow(Addr(start), &m);
            prop_assert!(c.blockers.len() <= MAX_DEPTH);
            let mut seen = FxHashSet::default();
            seen.insert(Addr(start));
            let mut cur = Addr(start);
            for b in &c.blockers {
                prop_assert_eq!(m.get(&cur), Some(b), "each blocker holds what the one before waits on");
                prop_assert!(seen.insert(*b), "no thread twice");
                cur = *b;
            }
            let next = m.get(&cur).copied();
            if c.cycle {
                prop_assert_eq!(c.head, None);
                let back = next.expect("a cycle continues");
                prop_assert!(back != cur && seen.contains(&back), "the cycle leads back into the chain");
            } else {
                prop_assert_eq!(c.head, c.blockers.last().copied());
                prop_assert!(next.is_none() || next == Some(cur), "the head waits on no other thread");
            }
        }
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
