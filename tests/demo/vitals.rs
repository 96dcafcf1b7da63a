//! The demo's vital signs: `onstat -p`, `-l`, `-s`, `-x`, `-g glo`, `-g rea`, `-g lmx`,
//! `-g wmx`, `-g tpf`, `-g ckp`, `-g seg` and grouped calls. Each incident shows in them at its
//! phase and not outside it, they agree with each other and with `onstat -u`, and they reach the
//! screen's JSON through the real pipeline (`ifxtop snapshot --demo --at T`).

use crate::common::fixture;
use ifxtop::demo::timeline::{self, Incident, Phase, CYCLE};
use ifxtop::demo::DemoInstance;
use ifxtop::ids::{Addr, Sid, Tid};
use ifxtop::parsers::onstat_g_ath::OnstatGAth;
use ifxtop::parsers::onstat_g_ckp::OnstatGCkp;
use ifxtop::parsers::onstat_g_glo::OnstatGGlo;
use ifxtop::parsers::onstat_g_lmx::OnstatGLmx;
use ifxtop::parsers::onstat_g_seg::OnstatGSeg;
use ifxtop::parsers::onstat_l::OnstatL;
use ifxtop::parsers::onstat_p::OnstatP;
use ifxtop::parsers::onstat_u::OnstatU;
use ifxtop::parsers::onstat_x_txn::OnstatXTxn;
use ifxtop::parsers::{self, group};
use ifxtop::source::Request;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

fn request(args: &str) -> Request {
    Request::Command(args.split_whitespace().map(String::from).collect())
}

fn out(d: &DemoInstance, args: &str, t: u64) -> String {
    d.respond(&request(args), Duration::from_secs(t))
        .unwrap_or_else(|e| panic!("{args} at t={t}: {e}"))
        .stdout
}

fn phase(incident: Incident) -> Phase {
    timeline::first(incident).expect("the incident is in the timeline")
}

/// What plays at `t` (each incident but the calm plays once a cycle).
fn incident_at(t: u64) -> Incident {
    [
        Incident::InsertHotSpot,
        Incident::NullIndexLeaf,
        Incident::SendQFill,
        Incident::SendQDrain,
        Incident::CheckpointRequested,
        Incident::CheckpointInProgress,
        Incident::LockChain,
        Incident::LongTransaction,
        Incident::CpuSaturated,
        Incident::MutexContention,
        Incident::SlowDevice,
        Incident::ReplicaLag,
    ]
    .into_iter()
    .find(|i| {
        let p = phase(*i);
        (p.start..p.end).contains(&(t % CYCLE))
    })
    .unwrap_or(Incident::Calm)
}

fn p(d: &DemoInstance, t: u64) -> OnstatP {
    parsers::onstat_p::parse(&out(d, "onstat -p", t)).expect("onstat -p parses")
}
fn u(d: &DemoInstance, t: u64) -> OnstatU {
    parsers::onstat_u::parse(&out(d, "onstat -u", t)).expect("onstat -u parses")
}
fn l(d: &DemoInstance, t: u64) -> OnstatL {
    parsers::onstat_l::parse(&out(d, "onstat -l", t)).expect("onstat -l parses")
}
fn x(d: &DemoInstance, t: u64) -> OnstatXTxn {
    parsers::onstat_x_txn::parse(&out(d, "onstat -x", t)).expect("onstat -x parses")
}
fn glo(d: &DemoInstance, t: u64) -> OnstatGGlo {
    parsers::onstat_g_glo::parse(&out(d, "onstat -g glo", t)).expect("-g glo parses")
}
fn lmx(d: &DemoInstance, t: u64) -> OnstatGLmx {
    parsers::onstat_g_lmx::parse(&out(d, "onstat -g lmx", t)).expect("-g lmx parses")
}
fn wmx(d: &DemoInstance, t: u64) -> OnstatGLmx {
    parsers::onstat_g_wmx::parse(&out(d, "onstat -g wmx", t)).expect("-g wmx parses")
}
fn ckp(d: &DemoInstance, t: u64) -> OnstatGCkp {
    parsers::onstat_g_ckp::parse(&out(d, "onstat -g ckp", t)).expect("-g ckp parses")
}
fn seg(d: &DemoInstance, t: u64) -> OnstatGSeg {
    parsers::onstat_g_seg::parse(&out(d, "onstat -g seg", t)).expect("-g seg parses")
}
fn ath(d: &DemoInstance, t: u64) -> OnstatGAth {
    parsers::onstat_g_ath::parse(&out(d, "onstat -g ath", t)).expect("-g ath parses")
}
fn rea_len(d: &DemoInstance, t: u64) -> usize {
    parsers::onstat_g_rea::parse(&out(d, "onstat -g rea", t))
        .expect("-g rea parses")
        .threads
        .len()
}

fn counter(p: &OnstatP, name: &str) -> f64 {
    p.get(name)
        .unwrap_or_else(|| panic!("no counter {name}: {:?}", p.counters.keys()))
}

/// The session's primary thread in `onstat -u`.
fn thread_of(u: &OnstatU, sid: u64) -> &ifxtop::parsers::onstat_u::UserThread {
    u.threads
        .iter()
        .find(|t| t.sessid == Sid(sid) && t.flags.is_primary())
        .unwrap_or_else(|| panic!("sid {sid} in onstat -u"))
}

/// The VP classes' CPU seconds (user + sys).
fn cpu_seconds(g: &OnstatGGlo, class: &str) -> f64 {
    g.classes
        .iter()
        .find(|c| c.class == class)
        .map(|c| c.usercpu + c.syscpu)
        .unwrap_or_else(|| panic!("no class {class}"))
}

/// Busy % of the CPU VPs between two moments, as the store computes it.
fn cpu_busy(d: &DemoInstance, from: u64, to: u64) -> f64 {
    let (a, b) = (glo(d, from), glo(d, to));
    let vps = b
        .classes
        .iter()
        .find(|c| c.class == "cpu")
        .map_or(1, |c| c.vps);
    100.0 * (cpu_seconds(&b, "cpu") - cpu_seconds(&a, "cpu")) / ((to - from) as f64 * vps as f64)
}

const PROFILE_COUNTERS: [&str; 16] = [
    "dskreads", "bufreads", "dskwrits", "bufwrits", "isamtot", "commit", "rollbk", "bufwaits",
    "lokwaits", "lockreqs", "deadlks", "dltouts", "ckpwaits", "seqscans", "lchwaits", "numckpts",
];

/// Counters only go up, at 300 and at 5,000 sessions (where they are so large that they run
/// into each other, as on a long-running server): read back, `%cached` agrees with the reads
/// and writes it is made of, and the server's CPU in `-p` is `-g glo`'s.
#[test]
fn profile_counters_rise_and_read_back_consistently() {
    for sessions in [300, 5_000] {
        let d = DemoInstance::new(3).with_sessions(sessions);
        let mut prev: BTreeMap<&str, f64> = BTreeMap::new();
        let mut prev_cpu = 0.0;
        let mut ran_together = false;
        for t in (0..CYCLE + 60).step_by(if sessions > 1_000 { 37 } else { 7 }) {
            let text = out(&d, "onstat -p", t);
            let pr = parsers::onstat_p::parse(&text).expect("parses");
            assert!(pr.unparsed.is_empty(), "t={t}\n{text}");
            // A line of values with fewer words than the names above it.
            let lines: Vec<&str> = text.lines().collect();
            ran_together |= lines.windows(2).any(|w| {
                w[1].starts_with(char::is_numeric)
                    && w[1].split_whitespace().count() < w[0].split_whitespace().count()
            });
            for name in PROFILE_COUNTERS {
                let v = counter(&pr, name);
                if let Some(p) = prev.get(name) {
                    assert!(v >= *p, "{name} went down at t={t}: {p} → {v}\n{text}");
                }
                prev.insert(name, v);
            }
            let cached = |disk: &str, buf: &str| {
                100.0 * (counter(&pr, buf) - counter(&pr, disk)) / counter(&pr, buf)
            };
            assert!(
                (cached("dskreads", "bufreads") - counter(&pr, "%cached_read")).abs() < 0.011,
                "t={t}\n{text}"
            );
            assert!(
                (cached("dskwrits", "bufwrits") - counter(&pr, "%cached_write")).abs() < 0.011,
                "t={t}\n{text}"
            );
            let g = glo(&d, t);
            let total = g.classes_total.as_ref().expect("a total row");
            let cpu = counter(&pr, "usercpu") + counter(&pr, "syscpu");
            assert!(
                (cpu - (total.usercpu + total.syscpu)).abs() < 0.05,
                "t={t}: -p {cpu} vs -g glo {}",
                total.usercpu + total.syscpu
            );
            assert!(cpu >= prev_cpu);
            prev_cpu = cpu;
        }
        // The big instance's values overflow their columns, as a real one's do (and were read
        // back right: the checks above).
        assert!(ran_together || sessions < 1_000, "{sessions} sessions");
    }
}

/// What the counters count rises with what happens: lock waits in the lock chain (and its
/// deadlock), buffer waits at the hot spots, checkpoint waits in the stall, latch waits in the
/// contention, sequential scans while the CPU is saturated.
#[test]
fn profile_rates_follow_the_incidents() {
    let d = DemoInstance::new(1);
    // Per second over a window of a phase.
    let rate = |name: &str, incident: Incident, from: u64, len: u64| {
        let s = phase(incident).start + from;
        (counter(&p(&d, s + len), name) - counter(&p(&d, s), name)) / len as f64
    };
    let calm = |name: &str| rate(name, Incident::Calm, 1, 10);
    assert!(rate("lokwaits", Incident::LockChain, 0, 30) > 0.5);
    assert!(calm("lokwaits") < 0.3);
    let chain = phase(Incident::LockChain);
    let deadlocks = counter(&p(&d, chain.end), "deadlks") - counter(&p(&d, chain.start), "deadlks");
    assert_eq!(deadlocks, 1.0);
    assert!(counter(&p(&d, chain.end), "dltouts") > counter(&p(&d, chain.start), "dltouts"));
    for hot in [Incident::InsertHotSpot, Incident::NullIndexLeaf] {
        assert!(rate("bufwaits", hot, 2, 10) > 20.0, "{hot:?}");
    }
    assert!(calm("bufwaits") < 1.0);
    assert!(rate("lchwaits", Incident::MutexContention, 2, 10) > 100.0);
    assert!(calm("lchwaits") < 10.0);
    assert!(rate("seqscans", Incident::CpuSaturated, 2, 10) > 10.0 * calm("seqscans"));
    assert!(calm("commit") > 10.0 && calm("isamtot") > 10.0 * calm("commit"));
    // The stall's waiters: 20 at the request, 40 by the time the checkpoint runs.
    let req = phase(Incident::CheckpointRequested);
    let before = counter(&p(&d, req.start - 1), "ckpwaits");
    assert_eq!(counter(&p(&d, req.start), "ckpwaits") - before, 20.0);
    let inp = phase(Incident::CheckpointInProgress);
    assert_eq!(counter(&p(&d, inp.end), "ckpwaits") - before, 40.0);
    // A checkpoint every 144 s (CKPTINTVL).
    let n = |t| counter(&p(&d, t), "numckpts");
    assert_eq!(n(req.start) - n(req.start - 1), 1.0);
    assert_eq!(n(req.start + 5 * 144) - n(req.start), 5.0);
}

/// CPU VPs are 20-40 % busy in the calm, nearly all busy while saturated.
#[test]
fn cpu_busy_is_plausible_and_saturates() {
    let d = DemoInstance::new(1);
    for t in [0, 100, 300, 600, 705] {
        let b = cpu_busy(&d, t, t + 10);
        if incident_at(t) == Incident::Calm {
            assert!((18.0..42.0).contains(&b), "t={t}: {b}");
        } else {
            assert!((8.0..60.0).contains(&b), "t={t}: {b}");
        }
    }
    let cpu = phase(Incident::CpuSaturated);
    let b = cpu_busy(&d, cpu.start + 5, cpu.start + 15);
    assert!(b >= 95.0, "{b}");
    // The CPU seconds of every VP add up to the class's.
    let g = glo(&d, cpu.start + 10);
    let vps: f64 = g
        .vps
        .iter()
        .filter(|v| v.class == "cpu")
        .map(|v| v.total)
        .sum();
    assert!((vps - cpu_seconds(&g, "cpu")).abs() < 0.2, "{vps}");
    assert_eq!(g.vps.len() as u64, g.global.expect("global").vps);
}

/// The ready queue grows through the saturation and is short otherwise; its threads are the
/// `ready` ones of `onstat -g ath`.
#[test]
fn ready_queue_grows_while_the_cpu_vps_are_saturated() {
    let d = DemoInstance::new(1);
    let cpu = phase(Incident::CpuSaturated);
    let lens: Vec<usize> = [2, 15, 30, 45]
        .iter()
        .map(|i| rea_len(&d, cpu.start + i))
        .collect();
    assert!(lens.windows(2).all(|w| w[1] > w[0]), "{lens:?}");
    assert!(lens[0] >= 20 && lens[3] >= 80, "{lens:?}");
    for t in [cpu.start - 10, cpu.end + 5, 100, 700] {
        assert!(rea_len(&d, t) < 10, "t={t}: {}", rea_len(&d, t));
    }
    let t = cpu.start + 20;
    let ready_in_ath = ath(&d, t)
        .threads
        .iter()
        .filter(|th| th.status == "ready")
        .count();
    assert_eq!(ready_in_ath, rea_len(&d, t));
    // Sessions mostly run: few wait for their clients.
    let uu = u(&d, t);
    let running = uu
        .threads
        .iter()
        .filter(|th| th.sessid.0 >= 800 && th.wait_reason.is_none())
        .count();
    assert!(running > 90, "{running}");
}

/// The long transaction: sid 810 begins, the logs fill behind it and are not backed up, the
/// server flags LONGTX and rolls it back, then blocks the writers until the rollback is done;
/// then the logs are backed up and freed. Outside the phase there is no long transaction.
#[test]
fn long_transaction_fills_the_logs_then_rolls_back() {
    let d = DemoInstance::new(1);
    let ph = phase(Incident::LongTransaction);
    let owner = |t| thread_of(&u(&d, t), 810).address;
    let tx = |t: u64| {
        let a = owner(t);
        x(&d, t)
            .transactions
            .into_iter()
            .find(|tr| tr.userthread == Some(a))
            .expect("sid 810's transaction")
    };
    let begun = tx(ph.start + 2);
    assert_eq!(begun.flags, "A-B--");
    let begin_log = begun.begin_logpos.expect("it has logged").log;
    let current = |t| l(&d, t).current().expect("a current log").uniqid;
    assert_eq!(u64::from(begin_log), current(ph.start));
    // The oldest transaction, by far.
    let xs = x(&d, ph.start + 20);
    assert_eq!(xs.by_begin()[0].userthread, Some(owner(ph.start + 20)));
    // Logs fill behind it, not backed up.
    let not_backed_up = |t| l(&d, t).not_backed_up();
    let fill: Vec<usize> = [2, 12, 22, 32, 42, 52]
        .iter()
        .map(|i| not_backed_up(ph.start + i))
        .collect();
    assert!(fill.windows(2).all(|w| w[1] >= w[0]), "{fill:?}");
    assert!(fill[5] >= 9 && fill[0] <= 2, "{fill:?}");
    assert!(current(ph.start + 52) >= current(ph.start) + 9);
    // Its thread's log space grows (onstat -g tpf lsus).
    let tid = ath(&d, ph.start)
        .threads
        .iter()
        .find(|th| th.rstcb == Some(owner(ph.start)))
        .expect("in -g ath")
        .tid;
    let lsus = |t| {
        parsers::onstat_g_tpf::parse(&out(&d, "onstat -g tpf", t))
            .expect("parses")
            .profiles
            .into_iter()
            .find(|pr| pr.tid == tid)
            .and_then(|pr| pr.lsus)
            .expect("its profile")
    };
    assert!(lsus(ph.start + 20) > 2 * lsus(ph.start + 5));
    assert!(lsus(ph.start + 20) > 500_000_000, "{}", lsus(ph.start + 20));
    let top =
        parsers::onstat_g_tpf::parse(&out(&d, "onstat -g tpf", ph.start + 20)).expect("parses");
    assert_eq!(top.by_log_space()[0].tid, tid);
    // Before LTXHWM: no flag. Then LONGTX and the rollback (R), then Blocked:LONGTX and the
    // writers wait (G), then done.
    let header = |t| u(&d, t).header.expect("a banner");
    let h = header(ph.start + 22);
    // The demo is the primary of an RSS secondary: (Prim) is always there.
    assert!(h.mode_flags == ["Prim"] && h.blocked.is_none(), "{h:?}");
    let h = header(ph.start + 29);
    assert_eq!(
        (h.mode_flags.clone(), h.blocked.clone()),
        (vec!["Prim".to_string(), "LONGTX".to_string()], None)
    );
    let rolling = thread_of(&u(&d, ph.start + 29), 810).flags;
    assert_eq!(rolling.txn_state(), Some('R'));
    assert!(rolling.in_critical_section());
    assert_eq!(tx(ph.start + 29).flags, "A-R--");
    // Rolling back winds its current position back toward where it began.
    let cur = |t| tx(t).curr_logpos.expect("logged");
    assert!(cur(ph.start + 50) < cur(ph.start + 30));
    assert!(cur(ph.start + 50) >= tx(ph.start + 50).begin_logpos.expect("logged"));
    for i in [42, 47, 52] {
        let t = ph.start + i;
        let h = header(t);
        assert_eq!(h.blocked.as_deref(), Some("LONGTX"), "t={t}");
        assert_eq!(h.mode_flags, vec!["Prim".to_string(), "LONGTX".to_string()]);
        let g = u(&d, t)
            .threads
            .iter()
            .filter(|th| th.flags.0[0] == b'G')
            .count();
        assert!(g >= 3, "t={t}: {g} writers waiting");
    }
    // A writer that came to wait stays waiting until the server is unblocked.
    let waiting = |t| -> BTreeSet<Sid> {
        u(&d, t)
            .threads
            .iter()
            .filter(|th| th.flags.0[0] == b'G')
            .map(|th| th.sessid)
            .collect()
    };
    assert!(waiting(ph.start + 45).is_subset(&waiting(ph.start + 50)));
    // Rolled back: no transaction, no flag, then the backup catches up.
    let after = ph.start + 58;
    assert!(x(&d, after)
        .transactions
        .iter()
        .all(|tr| tr.userthread != Some(owner(after)) || tr.begin_logpos.is_none()));
    assert!(header(after).mode_flags == ["Prim"] && header(after).blocked.is_none());
    assert!(u(&d, after).threads.iter().all(|th| th.flags.0[0] != b'G'));
    assert_eq!(
        not_backed_up(ph.end + 30),
        1,
        "{:?}",
        l(&d, ph.end + 30).logs
    );
    // Nowhere else.
    for t in (0..2 * CYCLE).step_by(13) {
        if incident_at(t) != Incident::LongTransaction {
            let h = header(t);
            assert!(!h.mode_flags.contains(&"LONGTX".to_string()), "t={t}");
            assert_ne!(h.blocked.as_deref(), Some("LONGTX"), "t={t}");
        }
    }
}

/// `onstat -l`: twelve logs, the current one moves on, the one before it is backed up within
/// seconds; the log holding the last checkpoint is flagged `L`; logs the DBA added are `F`
/// until first used; the begin positions are the chunk's, as `oncheck -pe` lays them out.
#[test]
fn logical_logs_ring_and_flags() {
    let d = DemoInstance::new(1);
    let logs = l(&d, 0);
    assert_eq!(logs.logs.len(), 12);
    assert_eq!((logs.active, logs.total), (Some(12), Some(12)));
    let flags: Vec<&str> = logs.logs.iter().map(|f| f.flags.as_str()).collect();
    assert!(flags.contains(&"F------"), "{flags:?}");
    assert!(flags.iter().any(|f| f.starts_with("U-B")), "{flags:?}");
    assert_eq!(flags.iter().filter(|f| f.contains('C')).count(), 1);
    for (k, f) in logs.logs.iter().enumerate() {
        assert_eq!(f.begin, format!("6:{}", 53 + 50_000 * k as u64));
        assert_eq!(f.size, 50_000);
    }
    let mut prev = 0;
    for t in (0..CYCLE).step_by(30) {
        let logs = l(&d, t);
        let cur = logs.current().expect("current");
        assert!(cur.uniqid >= prev, "t={t}");
        prev = cur.uniqid;
        assert!(cur.used < cur.size);
        if incident_at(t) == Incident::Calm {
            assert!(logs.not_backed_up() <= 2, "t={t}: {:?}", logs.logs);
        }
    }
    // The last checkpoint's LSN is in the log flagged L.
    for t in [100, 300, 500, 700] {
        let lsn = ckp(&d, t).checkpoints.last().expect("a checkpoint").lsn.log;
        let l_flag: Vec<u64> = l(&d, t)
            .logs
            .iter()
            .filter(|f| f.flags.ends_with('L'))
            .map(|f| f.uniqid)
            .collect();
        assert_eq!(l_flag, vec![u64::from(lsn)], "t={t}");
    }
    // After a few minutes the added logs have been used.
    assert!(l(&d, 600).logs.iter().all(|f| f.flags.starts_with('U')));
}

/// The mutex contention: sid 811 holds `free_lock`, a growing queue of S waiters waits for it,
/// in `-g lmx`, `-g wmx`, `-s` and `onstat -u`; not outside the phase.
#[test]
fn mutex_contention_names_the_mutex_its_holder_and_waiters() {
    let d = DemoInstance::new(1);
    let ph = phase(Incident::MutexContention);
    let tids = |t| -> BTreeMap<Addr, Tid> {
        ath(&d, t)
            .threads
            .iter()
            .filter_map(|th| Some((th.rstcb?, th.tid)))
            .collect()
    };
    let mut prev = 0;
    for i in [1, 10, 20, 35] {
        let t = ph.start + i;
        let uu = u(&d, t);
        let holder = thread_of(&uu, 811);
        let tid_of = tids(t);
        let m = lmx(&d, t)
            .mutexes
            .into_iter()
            .find(|m| m.name == "free_lock")
            .expect("free_lock is held");
        assert_eq!(m.holder, tid_of.get(&holder.address).copied(), "t={t}");
        assert!(
            m.waiters.len() >= 8 && m.waiters.len() >= prev,
            "t={t}: {}",
            m.waiters.len()
        );
        prev = m.waiters.len();
        // Each waiter is an S thread of onstat -u waiting on that very mutex.
        for w in &m.waiters {
            let th = uu
                .threads
                .iter()
                .find(|th| tid_of.get(&th.address) == Some(&w.tid))
                .expect("waiter in onstat -u");
            assert_eq!(th.flags.0[0], b'S');
            assert_eq!(th.wait, Some(m.addr));
        }
        assert!(m.waiters.iter().map(|w| w.waittime).max() <= Some(i));
        let w = wmx(&d, t);
        let in_wmx = w.mutexes.iter().find(|x| x.addr == m.addr).expect("in wmx");
        assert_eq!(in_wmx.waiters, m.waiters);
        // -s: the same mutex as a latch held by the same thread.
        let s = parsers::onstat_s::parse(&out(&d, "onstat -s", t)).expect("parses");
        let latch = s
            .latches
            .iter()
            .find(|x| x.address == m.addr)
            .expect("in -s");
        assert_eq!(latch.userthread, Some(holder.address));
        assert_eq!(latch.name, "free_lock");
    }
    assert!(prev >= 20, "{prev}");
    for t in [ph.start - 5, ph.end + 2, 100, 420] {
        assert!(
            lmx(&d, t).mutexes.iter().all(|m| m.name != "free_lock"),
            "t={t}"
        );
    }
}

/// At any moment, every S waiter's wait address is a mutex that `-g lmx` lists with it among
/// its waiters and a holder that is another thread: what the Waiters pane joins.
#[test]
fn every_s_waiter_joins_its_mutex_and_holder() {
    let d = DemoInstance::new(2);
    let mut seen = 0;
    for t in (0..CYCLE).step_by(9) {
        let uu = u(&d, t);
        let a = ath(&d, t);
        let tid_of: BTreeMap<Addr, Tid> = a
            .threads
            .iter()
            .filter_map(|th| Some((th.rstcb?, th.tid)))
            .collect();
        let rstcb_of: BTreeMap<Tid, Addr> = tid_of.iter().map(|(a, t)| (*t, *a)).collect();
        let m = lmx(&d, t);
        for th in uu.threads.iter().filter(|th| th.flags.0[0] == b'S') {
            let mx = m
                .mutexes
                .iter()
                .find(|mx| Some(mx.addr) == th.wait)
                .unwrap_or_else(|| panic!("t={t}: {th:?} waits on no listed mutex"));
            let tid = tid_of[&th.address];
            assert!(mx.waiters.iter().any(|w| w.tid == tid), "t={t}");
            let holder = mx.holder.expect("a holder");
            let h = rstcb_of.get(&holder).expect("the holder has an rstcb");
            assert_ne!(*h, th.address);
            assert!(uu.threads.iter().any(|x| x.address == *h));
            seen += 1;
        }
        // The held mutexes with no waiters are listed too, but not in -g wmx.
        let with: usize = m.mutexes.iter().filter(|x| !x.waiters.is_empty()).count();
        assert_eq!(wmx(&d, t).mutexes.len(), with, "t={t}");
    }
    assert!(seen > 30, "{seen}");
}

/// The stall's checkpoint, once over, heads `onstat -g ckp`: CKPTINTVL, blocking, its block
/// time mostly the wait for the critical section (request to start), a short flush, and as many
/// waits as threads waited. The ones before it are quick.
#[test]
fn checkpoint_history_gains_the_stall() {
    let d = DemoInstance::new(1);
    let req = phase(Incident::CheckpointRequested);
    let inp = phase(Incident::CheckpointInProgress);
    let before = ckp(&d, inp.end - 1);
    assert!(before.checkpoints.iter().all(|k| !k.blocking));
    assert_eq!(before.checkpoints.len(), 20);
    let after = ckp(&d, inp.end);
    assert_eq!(after.checkpoints.len(), 20);
    let k = after.checkpoints.last().expect("rows");
    assert!(k.blocking, "{k:?}");
    assert_eq!(k.trigger, "CKPTINTVL");
    assert_eq!(k.clock_time, "13:33:35");
    assert!(
        (k.total_time - (inp.end - req.start) as f64).abs() < 0.5,
        "{k:?}"
    );
    assert!((k.block_time - k.total_time).abs() < 0.05, "{k:?}");
    assert!(k.ckpt_time >= 0.75 * k.block_time, "{k:?}");
    assert!(k.flush_time <= 0.25 * k.total_time, "{k:?}");
    let waits = counter(&p(&d, inp.end), "ckpwaits") - counter(&p(&d, req.start - 1), "ckpwaits");
    assert_eq!(k.waits as f64, waits);
    assert_eq!(k.waits, 40);
    for w in after.checkpoints.windows(2) {
        assert_eq!(w[1].interval, w[0].interval + 1);
    }
    assert!(after.checkpoints[..19]
        .iter()
        .all(|k| !k.blocking && k.total_time < 4.0));
    // The quick ones block for a second or two each (every checkpoint blocks a moment).
    assert!(after.checkpoints[..19]
        .iter()
        .all(|k| (0.4..=2.0).contains(&k.block_time)));
    // The first and second blocks agree row for row, and the summary's blocked time is the
    // sum of theirs.
    assert!(after.checkpoints.iter().all(|k| k.llog_pages.is_some()));
    let blocked: f64 = after.checkpoints.iter().map(|k| k.block_time).sum();
    assert!(
        after
            .summary
            .is_some_and(|s| (s.blocked_time as f64 - blocked).abs() <= 1.0),
        "{:?} against {blocked}",
        after.summary
    );
    assert!(after.unparsed.is_empty());
    // Later cycles keep theirs in the history.
    let later = ckp(&d, CYCLE + inp.end + 10);
    assert_eq!(later.checkpoints.iter().filter(|k| k.blocking).count(), 2);
}

/// Shared memory: 4 GB, three virtual segments added while the CPU is saturated, freed at the
/// end of the cycle; the banner's Kbytes is always the segments' total.
#[test]
fn segments_added_during_saturation_then_freed() {
    let d = DemoInstance::new(1);
    let cpu = phase(Incident::CpuSaturated);
    let v = |t| {
        seg(&d, t)
            .segments
            .iter()
            .filter(|s| s.class == "V")
            .count()
    };
    assert_eq!(v(cpu.start), 1);
    assert_eq!(v(cpu.start + 25), 3);
    assert_eq!(v(cpu.end), 4);
    assert_eq!(v(CYCLE - 5), 1);
    assert_eq!(v(CYCLE + cpu.end), 4);
    for t in (0..2 * CYCLE).step_by(17) {
        let s = seg(&d, t);
        assert!(s.unparsed.is_empty());
        let total = s.summary.and_then(|x| x.total_size).expect("a total");
        assert_eq!(total, s.segments.iter().map(|x| x.size).sum::<u64>());
        let banner = u(&d, t).header.and_then(|h| h.shm_kb).expect("Kbytes");
        assert_eq!(banner, total / 1024, "t={t}");
    }
}

/// A grouped call prints the banner once and each option's part; cut back by
/// `parsers::group::split` each part is exactly what the option prints alone.
#[test]
fn grouped_calls_split_back_into_the_single_outputs() {
    let d = DemoInstance::new(1);
    let sets: [&[&str]; 6] = [
        &["-u", "-X", "-k", "-p", "-l", "-s", "-x"],
        &["-p", "-l", "-s", "-x"],
        &["-x", "-u"],
        &["-s", "-p", "-d"],
        &["-l"],
        &["-k", "-u", "-X"],
    ];
    let ph = |i: Incident| phase(i).start + 7;
    for t in [
        0,
        ph(Incident::CheckpointRequested),
        ph(Incident::LongTransaction) + 40,
        ph(Incident::MutexContention),
        ph(Incident::InsertHotSpot),
    ] {
        for opts in sets {
            let grouped = out(&d, &format!("onstat {}", opts.join(" ")), t);
            assert_eq!(
                grouped.matches(" Version 12.10.FC8 ").count(),
                1,
                "one banner"
            );
            let parts = group::split(&grouped, opts).unwrap_or_else(|| panic!("{opts:?} splits"));
            for (o, part) in opts.iter().zip(parts) {
                let alone = out(&d, &format!("onstat {o}"), t);
                assert_eq!(part, alone, "t={t} {opts:?}: {o}");
            }
        }
    }
    // Not an option onstat groups: not answered (the collectors then run them one by one).
    assert!(d
        .respond(&request("onstat -u -z"), Duration::from_secs(3))
        .is_err());
}

/// Same moment, same bytes: every vital sign and a grouped call.
#[test]
fn vitals_are_deterministic() {
    let (a, b) = (DemoInstance::new(9), DemoInstance::new(9));
    for t in [0, 231, 404, 470, 540, CYCLE + 420] {
        for args in [
            "onstat -p",
            "onstat -l",
            "onstat -s",
            "onstat -x",
            "onstat -g glo",
            "onstat -g rea",
            "onstat -g lmx",
            "onstat -g wmx",
            "onstat -g tpf",
            "onstat -g ckp",
            "onstat -g seg",
            "onstat -u -X -k -p -l -s -x",
        ] {
            assert_eq!(out(&a, args, t), out(&b, args, t), "{args} at {t}");
        }
    }
}

/// The Server pane's "held up by critical sections" is the request-to-start time (`Ckpt Time`):
/// a checkpoint that blocked while it flushed (the manuals' 20-checkpoint sample's `*Plog`)
/// waited on the disks, the demo's stall on a thread.
#[test]
fn checkpoint_crit_time_is_request_to_start() {
    use ifxtop::collect::sample::Update;
    use ifxtop::source::{Output, Source};
    use ifxtop::store::{Store, StoreSettings};
    let ckp_of = |text: String| {
        let mut store = Store::new(StoreSettings::default());
        let result = Source::OnstatGCkp.parse(Output {
            exit: Some(5),
            stdout: text,
            stderr: String::new(),
        });
        store.apply(Update {
            source: Source::OnstatGCkp,
            t: Duration::from_secs(1),
            took: Duration::ZERO,
            result,
            how: Default::default(),
        });
        ifxtop::model::snapshot::build(&store, Duration::from_secs(1), None, &[])
            .vitals
            .checkpoints
    };
    let sample = ckp_of(fixture("onstat-g-ckp/ifxtop-20-checkpoints-5-blocking.txt"));
    let plog = sample
        .iter()
        .find(|k| k.interval == 40214)
        .expect("the *Plog row");
    assert!(plog.blocking);
    // Blocked 27.3 s while flushing 27.1 s; it waited 0.6 s for the critical sections.
    assert_eq!((plog.block_s, plog.crit_s), (27.3, 0.6));
    let d = DemoInstance::new(1);
    let inp = phase(Incident::CheckpointInProgress);
    let rows = ckp_of(out(&d, "onstat -g ckp", inp.end));
    let stall = rows.last().expect("rows");
    assert!(stall.blocking && stall.crit_s > 30.0 && stall.crit_s > 3.0 * stall.flush_s);
}

/// `onstat -` prints the banner alone, and it tells the same story as every other banner: the
/// mode with its flag and the `Blocked:` line (LONGTX while the rollback holds the writers, CKPT
/// during the stall), nothing after it.
#[test]
fn onstat_dash_prints_the_banner_alone() {
    let d = DemoInstance::new(1);
    let longtx = phase(Incident::LongTransaction);
    let stall = phase(Incident::CheckpointRequested);
    let cases = [
        (0, vec!["Prim"], None),
        (longtx.start + 29, vec!["Prim", "LONGTX"], None),
        (longtx.start + 45, vec!["Prim", "LONGTX"], Some("LONGTX")),
        (stall.start + 15, vec!["Prim", "CKPT REQ"], Some("CKPT")),
        (phase(Incident::CpuSaturated).middle(), vec!["Prim"], None),
    ];
    for (t, flags, blocked) in cases {
        let text = out(&d, "onstat -", t);
        let b = parsers::onstat_banner::parse(&text).expect("onstat - parses");
        assert!(
            b.unparsed.is_empty() && b.repeats.is_empty(),
            "t={t}: {text}"
        );
        let h = b.header.expect("a banner");
        assert_eq!(h.version.as_deref(), Some("12.10.FC8"));
        assert_eq!(h.mode, "On-Line", "t={t}");
        assert_eq!(h.mode_flags, flags, "t={t}");
        assert_eq!(h.blocked.as_deref(), blocked, "t={t}");
        // The same banner as the one heading `onstat -u` at that moment.
        assert_eq!(u(&d, t).header, Some(h), "t={t}");
        // As `ifxtop parse onstat-banner` reads it.
        let json = crate::common::kind("onstat-banner")
            .parse_to_json(&text)
            .expect("parses as onstat-banner");
        assert_eq!(json["unparsed"], serde_json::json!([]), "t={t}: {json}");
        assert_eq!(
            json["header"]["blocked"],
            serde_json::json!(blocked),
            "t={t}"
        );
    }
}

/// `ifxtop snapshot --demo --at T --format json`: the real collectors (grouped calls included)
/// against the demo, the store's rates, the model's joins.
fn snapshot_json(at: u64) -> serde_json::Value {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let out = std::process::Command::new(bin)
        .args([
            "snapshot",
            "--demo",
            "--at",
            &at.to_string(),
            "--format",
            "json",
        ])
        .output()
        .expect("ifxtop runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Each new moment of the timeline through the whole pipeline, as `snapshot` prints it.
#[test]
fn snapshot_json_shows_each_incident() {
    let longtx = phase(Incident::LongTransaction);
    // The long transaction has begun: the oldest transaction is the one whose first log
    // record is the oldest, as the demo's truth has it (an ETL's, begun two seconds before the
    // purge in the same log; the purge's once it commits).
    let s = snapshot_json(longtx.start + 5);
    let oldest = &s["logs"]["oldest_transaction"];
    let truth = ifxtop::demo::truth::TruthWalk::new(&DemoInstance::new(1), longtx.start + 5)
        .next()
        .oldest_txn
        .expect("an open transaction");
    assert_eq!(oldest["sessid"], truth.sid, "{}", s["logs"]);
    assert!(s["server"]["blocked"].is_null());
    assert!(f(&s["rates"]["commit"]) > 5.0 && f(&s["rates"]["isamtot"]) > 50.0);
    assert!(f(&s["rates"]["read_cache_pct"]) > 95.0);
    // Late in it: blocked, the logs nearly full behind it, not backed up.
    let s = snapshot_json(longtx.start + 45);
    assert_eq!(s["server"]["blocked"], "LONGTX");
    assert_eq!(
        s["server"]["mode_flags"],
        serde_json::json!(["Prim", "LONGTX"])
    );
    let logs = &s["logs"];
    assert_eq!(logs["oldest_transaction"]["sessid"], 810);
    assert!(
        f(&logs["oldest_transaction"]["logs_spanned"]) >= 9.0,
        "{logs}"
    );
    assert!(
        f(&logs["used_pct"]) >= 70.0 && f(&logs["not_backed_up"]) >= 9.0,
        "{logs}"
    );
    assert!(
        f(&s["summary"]["by_reason"]["G"]) >= 3.0,
        "{}",
        s["summary"]
    );
    // The CPU saturated: busy, a long ready queue, memory added.
    let cpu = phase(Incident::CpuSaturated);
    let s = snapshot_json(cpu.start + 30);
    let vps = s["vps"].as_array().expect("vps");
    let busy = vps
        .iter()
        .find(|v| v["class"] == "cpu")
        .map(|v| f(&v["busy_pct"]))
        .expect("cpu VPs");
    assert!(busy >= 90.0, "{busy}");
    assert!(f(&s["ready_queue"]) >= 50.0, "{}", s["ready_queue"]);
    assert!(f(&s["rates"]["seqscans"]) > 10.0);
    let mem = &s["memory"];
    assert!(
        f(&mem["growth_kb"]) > 0.0 && f(&mem["added_segments"]) >= 1.0,
        "{mem}"
    );
    assert_eq!(f(&mem["total_kb"]) - f(&mem["growth_kb"]), 4_194_304.0);
    // After it the segments stay until the end of the cycle.
    let s = snapshot_json(cpu.end + 40);
    assert_eq!(
        f(&s["memory"]["growth_kb"]),
        3.0 * 131_072.0,
        "{}",
        s["memory"]
    );
    // The mutex contention: free_lock, its holder 811, its waiters; each S waiter is blocked by
    // the holder.
    let mx = phase(Incident::MutexContention);
    let s = snapshot_json(mx.start + 25);
    let top = &s["mutexes"][0];
    assert_eq!(top["name"], "free_lock");
    assert_eq!(top["holder_sessid"], 811);
    assert!(f(&top["waiters"]) >= 20.0, "{top}");
    assert!(f(&s["rates"]["lchwaits"]) > 100.0);
    let s_waiters: Vec<&serde_json::Value> = s["waiters"]
        .as_array()
        .expect("waiters")
        .iter()
        .filter(|w| w["waiting_on"]["name"] == "free_lock")
        .collect();
    assert!(s_waiters.len() >= 20);
    for w in s_waiters {
        assert_eq!(w["blockers"], serde_json::json!([811]), "{w}");
    }
    // The checkpoint stall: blocked while it waits, then in the history, held up by the
    // critical section.
    let req = phase(Incident::CheckpointRequested);
    let s = snapshot_json(req.start + 15);
    assert_eq!(s["server"]["blocked"], "CKPT");
    assert!(f(&s["rates"]["ckpwaits"]) > 0.0, "{}", s["rates"]);
    let inp = phase(Incident::CheckpointInProgress);
    // (`onstat -g ckp` is polled every 30 s.)
    let s = snapshot_json(inp.end + 15);
    let k = s["checkpoints"]
        .as_array()
        .and_then(|c| c.last())
        .expect("checkpoints");
    assert_eq!(k["blocking"], true);
    assert_eq!(k["trigger"], "CKPTINTVL");
    assert_eq!(k["waits"], 40);
    assert!(f(&k["crit_s"]) >= 0.75 * f(&k["block_s"]), "{k}");
    assert_eq!(s["checkpoints"].as_array().map(Vec::len), Some(20));
    // The lock chain: lock waits per second.
    let chain = phase(Incident::LockChain);
    let s = snapshot_json(chain.start + 30);
    assert!(f(&s["rates"]["lokwaits"]) > 0.3, "{}", s["rates"]);
    assert!(s["logs"]["oldest_transaction"]["logs_spanned"].as_u64() <= Some(2));
}

/// `DEMO_DUMP="onstat -p" DEMO_AT=380 cargo test --test demo dump -- --ignored --nocapture`
/// prints one output, to look at it.
#[test]
#[ignore]
fn dump() {
    let d = DemoInstance::new(1);
    let args = std::env::var("DEMO_DUMP").unwrap_or_else(|_| "onstat -p".into());
    let at: u64 = std::env::var("DEMO_AT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    print!("{}", out(&d, &args, at));
}
