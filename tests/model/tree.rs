//! Property tests of the blocker tree over any set of waiters: every waiter a head or a deadlock
//! holds up is on exactly one line, under its direct blocker, and the drawing's `last` marks
//! agree with the lines that follow.

use ifxtop::ids::{Addr, Sid};
use ifxtop::model::tree::{tree, TreeItem};
use ifxtop::model::waiters::{WaitTarget, WaiterRow};
use ifxtop::parsers::onstat_u::WaitReason;
use proptest::prelude::*;

fn waiter(sid: Sid, blockers: Vec<Sid>, cycle: bool) -> WaiterRow {
    WaiterRow {
        rstcb: Addr(0x4400_0000 + sid.0),
        sessid: sid,
        user: "app".into(),
        flags: "L--P---".into(),
        reason: WaitReason::Lock,
        waiting_on: WaitTarget::Other { address: None },
        in_wait_s: 1.0,
        in_wait_s_at_least: false,
        locks: 1,
        reads_per_s: None,
        writes_per_s: None,
        idle: false,
        idle_unknown: false,
        socket: None,
        head_blocker: if cycle {
            None
        } else {
            blockers.last().copied()
        },
        blockers,
        deadlock: cycle,
        engine_blocker: None,
        verdict: "waiting".into(),
    }
}

/// Waiters 100.. whose direct blocker is another waiter, one of the heads 1..=3, or none; each
/// chain followed as the joins do (nearest first, the head last; a loop is a deadlock).
fn waiters(parents: &[Option<usize>]) -> Vec<WaiterRow> {
    let n = parents.len();
    let sid_of = |p: usize| {
        if p < n {
            Sid(100 + p as u64)
        } else {
            Sid((p - n) as u64 + 1)
        }
    };
    (0..n)
        .filter(|&i| parents[i].is_some())
        .map(|i| {
            let mut chain = Vec::new();
            let mut seen = vec![i];
            let mut cur = i;
            let mut cycle = false;
            while let Some(p) = parents.get(cur).copied().flatten() {
                if seen.contains(&p) {
                    cycle = true;
                    break;
                }
                chain.push(sid_of(p));
                seen.push(p);
                cur = p;
            }
            waiter(Sid(100 + i as u64), chain, cycle)
        })
        .collect()
}

proptest! {
    #[test]
    fn every_held_up_waiter_is_on_one_line_under_its_direct_blocker(
        raw in proptest::collection::vec(proptest::option::weighted(0.85, 0usize..18), 1..15),
    ) {
        // Indices past the waiters name the heads 1..=3 (who wait on nothing).
        let n = raw.len();
        let parents: Vec<Option<usize>> = raw
            .iter()
            .map(|p| p.map(|p| if p < n { p } else { n + p % 3 }))
            .collect();
        let ws = waiters(&parents);
        let mut heads: Vec<Sid> = ws.iter().filter_map(|w| w.head_blocker).collect();
        heads.sort();
        heads.dedup();
        let lines = tree(&ws, &heads);

        // On exactly one line: each waiter a head holds up, each deadlocked one; no other.
        let mut count = vec![0usize; ws.len()];
        for l in &lines {
            if let TreeItem::Waiter(i) = l.item {
                count[i] += 1;
            }
        }
        for (i, w) in ws.iter().enumerate() {
            let held = w.head_blocker.is_some_and(|h| heads.contains(&h)) || w.deadlock;
            prop_assert_eq!(count[i], usize::from(held), "waiter {} {:?}", w.sessid, w.blockers);
        }

        for (p, l) in lines.iter().enumerate() {
            let TreeItem::Waiter(i) = l.item else {
                prop_assert_eq!(l.depth(), 0, "heads and deadlocks are roots");
                continue;
            };
            let w = &ws[i];
            let d = l.depth();
            // Its parent: the nearest line above one level up (a root for depth 0).
            let parent = lines[..p]
                .iter()
                .rev()
                .find(|x| match x.item {
                    TreeItem::Waiter(_) => d > 0 && x.depth() == d - 1,
                    TreeItem::Head(_) | TreeItem::Deadlock(_) => true,
                })
                .map(|x| x.item);
            match parent {
                Some(TreeItem::Head(h)) if d == 0 => prop_assert_eq!(w.direct_blocker(), Some(h)),
                Some(TreeItem::Deadlock(_)) if d == 0 => prop_assert!(w.deadlock),
                Some(TreeItem::Waiter(j)) => {
                    prop_assert_eq!(w.direct_blocker(), Some(ws[j].sessid))
                }
                other => prop_assert!(false, "line {p} (depth {d}) has parent {other:?}"),
            }
            // `last`: no sibling follows before the parent's level ends.
            let sibling_follows = lines[p + 1..]
                .iter()
                .take_while(|x| matches!(x.item, TreeItem::Waiter(_)) && x.depth() >= d)
                .any(|x| x.depth() == d);
            prop_assert_eq!(l.last, !sibling_follows, "line {}", p);
        }
    }
}
