//! Blocker chains: from a waiting thread, follow "who holds what it waits on" to the head
//! blocker; a chain that comes back to itself is a deadlock. And the blocker tree: each head
//! blocker with the waiters it holds up, each waiter under its direct blocker.

use crate::ids::{Addr, Sid};
use crate::model::waiters::WaiterRow;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

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
const MAX_DEPTH: usize = 64;

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

/// One line of the blocker tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TreeItem {
    /// A head blocker: blocks others, is not blocked itself.
    Head(Sid),
    /// Sessions waiting on each other: the lowest of the cycle stands for it.
    Deadlock(Sid),
    /// A waiter (an index into the snapshot's waiters).
    Waiter(usize),
}

/// A line of the tree with what its drawing needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TreeLine {
    pub item: TreeItem,
    /// For each ancestor below the root: whether more siblings follow it (a `│` is drawn).
    pub guides: Vec<bool>,
    /// The last child of its parent (`└` rather than `├`).
    pub last: bool,
}

impl TreeLine {
    pub fn depth(&self) -> usize {
        self.guides.len()
    }
}

/// The blocker tree: each head blocker (most waiters first), then depth first every waiter it
/// holds up, each under its direct blocker; deadlocked waiters under a line of their own.
/// Waiters that nobody blocks are not in the tree.
pub fn tree(waiters: &[WaiterRow], heads: &[Sid]) -> Vec<TreeLine> {
    // Direct blocker → the waiters it holds up directly, in session order.
    let mut children: FxHashMap<Sid, Vec<usize>> = FxHashMap::default();
    for (i, w) in waiters.iter().enumerate() {
        if let Some(b) = w.direct_blocker() {
            children.entry(b).or_default().push(i);
        }
    }
    for v in children.values_mut() {
        v.sort_by_key(|&i| (waiters[i].sessid, waiters[i].rstcb));
    }
    let mut out = Vec::new();
    let mut placed: FxHashSet<usize> = FxHashSet::default();
    for &h in heads {
        out.push(TreeLine {
            item: TreeItem::Head(h),
            guides: Vec::new(),
            last: true,
        });
        descend(
            h,
            &children,
            waiters,
            &mut Vec::new(),
            &mut placed,
            &mut out,
        );
    }
    // Deadlocks: every cycle's waiters under the lowest session of the cycle.
    let mut cycles: Vec<(Sid, Vec<usize>)> = Vec::new();
    for (i, w) in waiters.iter().enumerate() {
        if !w.deadlock || placed.contains(&i) {
            continue;
        }
        let lowest = w
            .blockers
            .iter()
            .copied()
            .chain([w.sessid])
            .min()
            .unwrap_or(w.sessid);
        match cycles.iter_mut().find(|(s, _)| *s == lowest) {
            Some((_, v)) => v.push(i),
            None => cycles.push((lowest, vec![i])),
        }
    }
    cycles.sort_by_key(|(s, _)| *s);
    for (sid, rows) in cycles {
        out.push(TreeLine {
            item: TreeItem::Deadlock(sid),
            guides: Vec::new(),
            last: true,
        });
        let n = rows.len();
        for (k, i) in rows.into_iter().enumerate() {
            out.push(TreeLine {
                item: TreeItem::Waiter(i),
                guides: Vec::new(),
                last: k + 1 == n,
            });
        }
    }
    out
}

/// The waiters `sid` holds up directly, and theirs below them. `guides` says, for each level
/// above, whether more siblings follow there.
fn descend(
    sid: Sid,
    children: &FxHashMap<Sid, Vec<usize>>,
    waiters: &[WaiterRow],
    guides: &mut Vec<bool>,
    placed: &mut FxHashSet<usize>,
    out: &mut Vec<TreeLine>,
) {
    // Bounded like the chains: odd data must not recurse forever.
    if guides.len() >= MAX_DEPTH {
        return;
    }
    let Some(kids) = children.get(&sid) else {
        return;
    };
    let kids: Vec<usize> = kids
        .iter()
        .copied()
        .filter(|i| !placed.contains(i))
        .collect();
    let n = kids.len();
    for (k, i) in kids.into_iter().enumerate() {
        if !placed.insert(i) {
            continue;
        }
        let last = k + 1 == n;
        out.push(TreeLine {
            item: TreeItem::Waiter(i),
            guides: guides.clone(),
            last,
        });
        guides.push(!last);
        let w = &waiters[i];
        if w.sessid != sid {
            descend(w.sessid, children, waiters, guides, placed, out);
        }
        guides.pop();
    }
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
