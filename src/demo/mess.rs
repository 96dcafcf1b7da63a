//! The demo is as untidy as a server: each kind of mess it plays, proven to be played, so none
//! can silently disappear (the oracle, `tests/truth/`, proves ifxtop survives them).

use super::instance::Population;
use super::moment::{Activity, World, CONTENDED};
use super::timeline::{self, Incident, CYCLE};
use super::truth::{State, TruthWalk};
use super::DemoInstance;
use crate::source::Request;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

fn demo() -> DemoInstance {
    DemoInstance::new(1).messy()
}

/// The session on each rstcb at a moment (a slot's next session takes its rstcb).
fn sids_by_rstcb(d: &DemoInstance, w: &World<'_>) -> BTreeMap<u64, u64> {
    d.pop
        .sessions
        .iter()
        .filter(|s| w.present(s.idx))
        .map(|s| (s.rstcb, w.sid(s.idx)))
        .collect()
}

fn phase(i: Incident) -> timeline::Phase {
    timeline::first(i).expect("in the timeline")
}

/// Sessions connect and disconnect throughout: over one cycle, dozens of new sids appear and
/// old ones go, and the slot a session left stays empty a moment before the next connects.
#[test]
fn sessions_come_and_go() {
    let d = demo();
    let at = |t: u64| -> BTreeSet<u64> { d.sids_at(t).into_iter().collect() };
    let first = at(0);
    let (mut came, mut went) = (BTreeSet::new(), BTreeSet::new());
    let mut prev = first.clone();
    let mut fewer = false;
    for t in 1..CYCLE {
        let now = at(t);
        came.extend(now.difference(&prev).copied());
        went.extend(prev.difference(&now).copied());
        fewer |= now.len() < first.len();
        prev = now;
    }
    assert!(came.len() >= 100, "{} sessions connected", came.len());
    assert!(went.len() >= 100, "{} sessions left", went.len());
    assert!(fewer, "no slot was ever empty");
    // Those connected all along are there all along.
    for sid in d.sids() {
        assert!((0..CYCLE).step_by(7).all(|t| at(t).contains(&sid)), "{sid}");
    }
}

/// A session that leaves is followed on its slot (its rstcb, its lock slots) by a new one, and
/// now and then the new one is given the old one's sid: the same rstcb, the same sid, a new
/// session (a new thread id, counters from zero, connected since).
#[test]
fn a_new_session_takes_the_sid_and_the_rstcb_of_one_that_left() {
    let d = demo();
    let pop: &Population = &d.pop;
    let mut reused = 0;
    let mut with_new_sid = 0;
    for s in pop.sessions.iter().filter(|s| s.churn.is_some()) {
        let mut last: Option<super::instance::Tenant> = None;
        for t in 0..CYCLE {
            let tn = pop.tenant(s.idx, t);
            if !tn.present {
                continue;
            }
            if let Some(prev) = last.filter(|p| p.epoch != tn.epoch) {
                assert_ne!(prev.tid, tn.tid, "a new session, a new thread");
                assert!(tn.since > prev.since);
                if prev.sid == tn.sid {
                    reused += 1;
                } else {
                    with_new_sid += 1;
                }
            }
            last = Some(tn);
        }
    }
    assert!(reused >= 10, "{reused} sids given out again");
    assert!(
        with_new_sid >= 30,
        "{with_new_sid} new sessions with new sids"
    );
    // The truth keys sessions by sid: a reused sid is a new session, connected since.
    let mut walk = TruthWalk::new(&d, 0);
    let mut since: BTreeMap<u64, i64> = BTreeMap::new();
    let mut restarted = 0;
    for _ in 0..CYCLE {
        let truth = walk.next();
        for st in truth.sessions.values() {
            if let Some(old) = since.insert(st.sid, st.connected_s) {
                if old != st.connected_s {
                    restarted += 1;
                    assert!(
                        st.wait_age
                            .is_none_or(|a| (a as i64) <= truth.t as i64 - st.connected_s),
                        "sid {} at {}: a wait older than its session",
                        st.sid,
                        truth.t
                    );
                }
            }
        }
    }
    assert!(restarted >= 10, "{restarted}");
}

/// A lock slot (an `onstat -k` address) is held by one session, later by another: the next
/// session on the slot, and the hot counter row's lock passing on.
#[test]
fn a_lock_slot_is_held_by_another_session_later() {
    let d = demo();
    let mut owners: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for t in (0..CYCLE).step_by(3) {
        let w = World::at(&d.pop, &d.counters, t);
        let sid_of = sids_by_rstcb(&d, &w);
        for l in w.locks() {
            if let Some(sid) = sid_of.get(&l.owner) {
                owners.entry(l.address).or_default().insert(*sid);
            }
        }
    }
    let shared = owners.values().filter(|s| s.len() > 1).count();
    assert!(
        shared >= 20,
        "{shared} lock slots held by more than one session"
    );
}

/// The parts of one `onstat -i` call are printed a few milliseconds apart, and now and then the
/// call stalls between two of them past the server's next second: the later parts' banners
/// say one second more of uptime, and what changed in that second shows in them.
#[test]
fn the_parts_of_one_call_are_printed_apart() {
    let d = demo();
    // `-- Up 12 days 03:04:05 --`: seconds.
    let uptimes = |out: &str| -> Vec<u64> {
        out.lines()
            .filter_map(|l| {
                let up = l.split(" -- Up ").nth(1)?;
                let mut w = up.split_whitespace();
                let days: u64 = w.next()?.parse().ok()?;
                let _ = w.next()?;
                let hms: Vec<u64> = w
                    .next()?
                    .split(':')
                    .map(|x| x.parse().ok())
                    .collect::<Option<_>>()?;
                Some(days * 86_400 + hms.first()? * 3_600 + hms.get(1)? * 60 + hms.get(2)?)
            })
            .collect()
    };
    let mut stalled = 0;
    for t in 0..400u64 {
        let req = Request::CommandInput {
            argv: vec!["onstat".into(), "-i".into()],
            stdin: "u\nk\nX\ng con\ng lmx\np\n".into(),
        };
        let out = d
            .respond(&req, Duration::from_secs(t))
            .expect("onstat -i")
            .stdout;
        let up = uptimes(&out);
        assert_eq!(up.len(), 6, "{out}");
        // The first part (onstat -u) is always of the call's own second.
        assert_eq!(up[0], super::onstat::UPTIME_AT_ZERO + t);
        if up.iter().any(|u| *u != up[0]) {
            stalled += 1;
            assert!(up.windows(2).all(|w| w[1] >= w[0]));
            assert!(up.iter().all(|u| *u <= up[0] + 1));
        }
    }
    assert!(stalled >= 3, "{stalled} calls of 400 stalled");
}

/// The contended mutex passes from holder to holder within the incident: the repricing session
/// most of the time, in turn one of the waiters, never one that is itself waiting for it.
#[test]
fn the_contended_mutex_changes_hands() {
    let d = demo();
    let p = phase(Incident::MutexContention);
    let mut holders: BTreeMap<u64, u64> = BTreeMap::new();
    for t in p.start..p.end {
        let w = World::at(&d.pop, &d.counters, t);
        let m = w
            .mutexes
            .iter()
            .find(|m| m.which == CONTENDED)
            .expect("the contended mutex is held");
        let holder = match m.holder {
            super::moment::Holder::Session(i) => i,
            super::moment::Holder::Daemon(_) => panic!("a daemon holds it at {t}"),
        };
        assert!(m.waiters.iter().all(|(i, _)| *i != holder), "{t}");
        assert!(!matches!(
            w.sessions[holder].activity,
            Activity::Mutex { .. }
        ));
        *holders.entry(w.sid(holder)).or_default() += 1;
        // Clearly more waiters than the background's few, once the crowd has gathered.
        if t >= p.start + 8 {
            assert!(m.waiters.len() >= 30, "{} waiters at {t}", m.waiters.len());
        }
    }
    assert!(holders.len() >= 5, "{holders:?}");
    assert!(
        holders.get(&811).is_some_and(|n| *n > p.len() / 2),
        "{holders:?}"
    );
}

/// Locks held by a session onmode -z cannot help against: the session in its critical section
/// during the checkpoint stall, and the long transaction while it rolls back (between two log
/// records it is not in a critical section at all).
#[test]
fn sessions_that_cannot_be_ended_hold_locks_others_wait_for() {
    let d = demo();
    let stall = phase(Incident::CheckpointRequested);
    let longtx = phase(Incident::LongTransaction);
    let mut walk = TruthWalk::new(&d, stall.start - 5);
    let (mut behind_critical, mut behind_rollback, mut rolling_not_critical) = (0, 0, 0);
    for _ in stall.start - 5..longtx.end {
        let truth = walk.next();
        for st in truth.sessions.values().filter(|s| s.state == State::Lock) {
            match st.head.and_then(|h| truth.session(h)).map(|h| h.state) {
                Some(State::Critical) => behind_critical += 1,
                Some(State::Rollback) => behind_rollback += 1,
                _ => {}
            }
        }
        let w = World::at(&d.pop, &d.counters, truth.t);
        if let Some(th) = w.threads().iter().find(|th| th.flags[2] == b'R') {
            if th.flags[4] != b'X' {
                rolling_not_critical += 1;
            }
        }
    }
    assert!(behind_critical >= 30, "{behind_critical}");
    assert!(behind_rollback >= 20, "{behind_rollback}");
    assert!(rolling_not_critical >= 5, "{rolling_not_critical}");
}

/// An idle client shows a few hundred bytes in its Send-Q for a moment after each reply (Linux
/// counts the unacknowledged bytes): never two seconds in a row.
#[test]
fn idle_clients_show_a_brief_send_q_after_a_reply() {
    let d = demo();
    let p = timeline::TIMELINE[0];
    let mut walk = TruthWalk::new(&d, p.start);
    let mut last: BTreeSet<u64> = BTreeSet::new();
    let mut blips = 0;
    for _ in p.start..p.end {
        let truth = walk.next();
        assert_eq!(truth.incident, Incident::Calm);
        let now: BTreeSet<u64> = truth
            .sessions
            .values()
            .filter(|s| s.state == State::Idle && s.send_q > 0)
            .map(|s| {
                assert!(s.send_q < 1_500, "{s:?}");
                assert_eq!(s.wait_age, Some(0), "{s:?}");
                s.sid
            })
            .collect();
        assert!(
            now.is_disjoint(&last),
            "a Send-Q held two seconds at {}",
            truth.t
        );
        blips += now.len();
        last = now;
    }
    assert!(blips >= 10, "{blips}");
}

/// A quick checkpoint blocks the server for a second or two now and then, in calm stretches
/// too: `Blocked:CKPT`, perhaps a thread waiting for it, and it is over.
#[test]
fn a_quick_checkpoint_blocks_for_a_second_or_two_in_calm() {
    let d = demo();
    let mut calm_blocks: Vec<u64> = Vec::new();
    for t in 0..CYCLE {
        let w = World::at(&d.pop, &d.counters, t);
        if w.now.incident() == Incident::Calm && w.blocked() == Some("CKPT") {
            calm_blocks.push(t);
            assert_eq!(w.mode_flag(), Some("CKPT INP"));
        }
    }
    assert!(!calm_blocks.is_empty());
    // Each block lasts one or two seconds.
    let mut runs: Vec<u64> = Vec::new();
    for t in &calm_blocks {
        match runs.last_mut() {
            Some(n) if calm_blocks.contains(&(t - 1)) => *n += 1,
            _ => runs.push(1),
        }
    }
    assert!(
        runs.len() >= 2 && runs.iter().all(|n| (1..=2).contains(n)),
        "{runs:?}"
    );
    // At least one of them has a thread waiting for it.
    let waited = calm_blocks.iter().any(|&t| {
        let w = World::at(&d.pop, &d.counters, t);
        w.sessions
            .iter()
            .any(|s| s.activity == Activity::Checkpoint)
    });
    assert!(waited);
}

/// The tidy instance plays none of it: its sessions stay, and one call is of one instant.
#[test]
fn the_tidy_instance_stays_tidy() {
    let d = DemoInstance::new(1);
    assert_eq!(d.sids_at(0), d.sids_at(CYCLE / 2));
    assert_eq!(d.sids(), d.sids_at(0));
    let req = Request::CommandInput {
        argv: vec!["onstat".into(), "-i".into()],
        stdin: "u\nk\nX\ng con\ng lmx\np\n".into(),
    };
    for t in 0..200u64 {
        let out = d
            .respond(&req, Duration::from_millis(t * 1_000 + 999))
            .expect("onstat -i")
            .stdout;
        let banners: BTreeSet<&str> = out.lines().filter(|l| l.contains(" -- Up ")).collect();
        assert_eq!(banners.len(), 1, "{out}");
    }
}

/// The truth's oldest transaction is the session on the slot now (the churn's tenant): its sid
/// is one of the sessions of that second, never the slot's first session's when another has
/// taken it.
#[test]
fn the_oldest_transaction_is_named_by_the_session_that_holds_it() {
    let d = DemoInstance::new(2).messy();
    let p = phase(Incident::LongTransaction);
    let mut walk = TruthWalk::new(&d, p.start.saturating_sub(30));
    let mut named = 0;
    loop {
        let t = walk.next();
        if t.t > p.end {
            break;
        }
        if let Some(x) = &t.oldest_txn {
            assert!(
                t.sessions.get(&x.sid).is_some_and(|s| s.txn),
                "t={}: oldest transaction's sid {} is no session in a transaction",
                t.t,
                x.sid
            );
            named += 1;
        }
    }
    assert!(named > 30, "{named}");
}

/// A lock's address is the server's, not a session's: the hot counter row's lock is taken from
/// the free list by each holder in turn, so one address waited on is held by one session and,
/// seconds later, by another (an `onstat -k` of another moment names the wrong holder).
#[test]
fn one_lock_address_waited_on_changes_hands_within_seconds() {
    let d = demo();
    let mut last: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    let mut changed = 0;
    for t in 0..CYCLE {
        let w = World::at(&d.pop, &d.counters, t);
        let sid_of = sids_by_rstcb(&d, &w);
        let waited: BTreeSet<u64> = w
            .sessions
            .iter()
            .filter_map(|s| match s.activity {
                Activity::Lock { lock } => Some(lock),
                _ => None,
            })
            .collect();
        for l in w.locks().iter().filter(|l| waited.contains(&l.address)) {
            let Some(&sid) = sid_of.get(&l.owner) else {
                continue;
            };
            if let Some(&(was, at)) = last.get(&l.address) {
                if was != sid && t - at <= 5 {
                    changed += 1;
                }
            }
            last.insert(l.address, (sid, t));
        }
    }
    assert!(
        changed >= 50,
        "{changed} waited-on lock addresses changed hands within 5 s"
    );
}
