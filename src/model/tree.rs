//! The blocker tree: each head blocker with the waiters it holds up, each waiter under its
//! direct blocker (from the waiters' chains, `chains.rs`).

use crate::ids::Sid;
use crate::model::chains::MAX_DEPTH;
use crate::model::waiters::WaiterRow;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

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
