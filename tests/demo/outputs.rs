//! The demo's outputs: every one parses with ifxtop's own parsers with nothing left over, they
//! agree with each other (addresses, tids, partnums, sockets), they are deterministic, and the
//! incidents of the timeline show through the real pipeline (store, joins, snapshot).

use crate::common::kind;
use ifxtop::commands::snapshot as report;
use ifxtop::demo::timeline::{self, Incident, Phase, CYCLE};
use ifxtop::demo::{DemoInstance, LISTENER_PORT};
use ifxtop::error::SourceError;
use ifxtop::extents::ExtentMap;
use ifxtop::ids::{Addr, Sid};
use ifxtop::model::snapshot::{self, Snapshot};
use ifxtop::parsers;
use ifxtop::parsers::systabnames::Systabnames;
use ifxtop::source::Kind;
use ifxtop::source::{Output, Request, Source};
use ifxtop::store::{Store, StoreSettings};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

fn secs(t: u64) -> Duration {
    Duration::from_secs(t)
}

fn phase(incident: Incident) -> Phase {
    timeline::first(incident).expect("the incident is in the timeline")
}

fn run(d: &DemoInstance, source: &Source, t: u64) -> Output {
    d.respond(&source.request(), secs(t))
        .unwrap_or_else(|e| panic!("{} at t={t}: {e}", source.label()))
}

fn text(d: &DemoInstance, source: &Source, t: u64) -> String {
    run(d, source, t).stdout
}

const ONINIT_PID: u32 = 20210;

/// Every source ifxtop collects, with a few sessions to drill into.
fn sources(sids: &[u64]) -> Vec<Source> {
    let mut v = vec![
        Source::OnstatU,
        Source::OnstatX,
        Source::OnstatGCon,
        Source::OnstatGAth,
        Source::OnstatGNtt,
        Source::OnstatK,
        Source::OncheckPe,
        Source::Netstat,
        Source::ProcNetTcp,
        Source::ProcNetTcp6,
        Source::NodesOnline,
        Source::NodeMeminfo(0),
        Source::NodeMeminfo(1),
        Source::NodeCpulist(0),
        Source::NodeCpulist(1),
        Source::ZoneReclaimMode,
        Source::Vmstat,
        Source::NumaMaps(ONINIT_PID),
        Source::Systabnames,
        // Chunk I/O, the devices' counters and replication (the demo's primary with an RSS
        // secondary).
        Source::OnstatDUpper,
        Source::OnstatGIof,
        Source::ProcDiskstats,
        Source::OnstatGCluster,
        Source::OnstatGRss,
        Source::OnstatP,
        Source::OnstatL,
        Source::OnstatS,
        Source::OnstatXTxn,
        Source::OnstatGGlo,
        Source::OnstatGRea,
        Source::OnstatGLmx,
        Source::OnstatGWmx,
        Source::OnstatGTpf,
        Source::OnstatGCkp,
        Source::OnstatGSeg,
        Source::OnstatGSesList,
    ];
    for &sid in sids {
        v.push(Source::OnstatGSes(Sid(sid)));
        v.push(Source::OnstatGSql(Sid(sid)));
        v.push(Source::OnstatGPqs(Sid(sid)));
    }
    v
}

/// The parser `ifxtop parse` uses for sources the store keeps as text.
fn kind_of(source: &Source) -> Option<Kind> {
    Some(match source {
        Source::OnstatGAth => kind("onstat-g-ath"),
        Source::OnstatGNtt => kind("onstat-g-ntt"),
        Source::OnstatK => kind("onstat-k"),
        Source::OnstatGSes(_) | Source::OnstatGSesList => kind("onstat-g-ses"),
        Source::OnstatGSql(_) => kind("onstat-g-sql"),
        Source::OnstatGPqs(_) => kind("onstat-g-pqs"),
        Source::OncheckPe => kind("oncheck-pe"),
        Source::OnstatP => kind("onstat-p"),
        Source::OnstatL => kind("onstat-l"),
        Source::OnstatS => kind("onstat-s"),
        Source::OnstatXTxn => kind("onstat-x"),
        Source::OnstatGGlo => kind("onstat-g-glo"),
        Source::OnstatGRea => kind("onstat-g-rea"),
        Source::OnstatGLmx => kind("onstat-g-lmx"),
        Source::OnstatGWmx => kind("onstat-g-wmx"),
        Source::OnstatGTpf => kind("onstat-g-tpf"),
        Source::OnstatGCkp => kind("onstat-g-ckp"),
        Source::OnstatGSeg => kind("onstat-g-seg"),
        _ => return None,
    })
}

/// Parses one output the way the live pipeline does, and through `ifxtop parse` where the
/// store keeps text; fails on any line a parser did not understand.
fn assert_parses_fully(source: &Source, out: Output, what: &str) {
    let stdout = out.stdout.clone();
    if banner_only(&stdout) {
        // onstat -g sql (or -g pqs) of a session with no SQL (a daemon's) prints the banner
        // alone: only there is that expected.
        assert!(
            matches!(source, Source::OnstatGSql(Sid(sid)) | Source::OnstatGPqs(Sid(sid)) if *sid < 800),
            "{what} {}: the banner alone",
            source.label()
        );
    }
    let parsed = source
        .parse(out)
        .unwrap_or_else(|e| panic!("{what} {}: {e}\n{stdout}", source.label()));
    assert_eq!(
        parsed.unparsed(),
        0,
        "{what} {}: unparsed lines\n{stdout}",
        source.label()
    );
    if let Some(m) = parsed.get::<ExtentMap>() {
        assert_eq!(m.unparsed_lines(), 0, "{what} oncheck -pe");
        assert!(m.extent_count() > 40, "{what} oncheck -pe");
    }
    if let Some(s) = parsed.get::<Systabnames>() {
        assert!(s.unparsed.is_empty(), "{what}: {:?}", s.unparsed);
    }
    if let Some(kind) = kind_of(source) {
        let json = kind
            .parse_to_json(&stdout)
            .unwrap_or_else(|e| panic!("{what} {}: {e}\n{stdout}", source.label()));
        let unparsed = json
            .get("unparsed")
            .and_then(|u| u.as_array())
            .map_or(0, Vec::len);
        assert_eq!(
            unparsed,
            0,
            "{what} {}: {}\n{stdout}",
            source.label(),
            json["unparsed"]
        );
    }
}

/// The banner (and the `Blocked:` line under it) and nothing else.
fn banner_only(text: &str) -> bool {
    let mut lines = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("Blocked:"));
    lines
        .next()
        .is_some_and(|l| l.starts_with("IBM Informix Dynamic Server"))
        && lines.next().is_none()
}

/// Times across two cycles: a regular grid plus the first, middle and last second of every
/// phase.
fn test_times() -> Vec<u64> {
    let mut ts: BTreeSet<u64> = (0..2 * CYCLE).step_by(11).collect();
    for cycle in 0..2 {
        for p in timeline::TIMELINE {
            let base = cycle * CYCLE;
            ts.extend([base + p.start, base + p.middle(), base + p.end - 1]);
        }
    }
    ts.into_iter().collect()
}

fn sids_to_drill(d: &DemoInstance) -> Vec<u64> {
    let sids = d.sids();
    let mut v = vec![812, 814, 1];
    v.extend(sids.get(20).copied());
    v.extend(sids.get(45).copied());
    v.extend(sids.last().copied());
    v
}

#[test]
fn every_output_parses_with_nothing_left_over() {
    for seed in [1, 7] {
        let d = DemoInstance::new(seed);
        let all = sources(&sids_to_drill(&d));
        for t in test_times() {
            for s in &all {
                let out = run(&d, s, t);
                assert_parses_fully(s, out, &format!("seed {seed} t={t}"));
            }
        }
    }
}

#[test]
fn five_thousand_sessions_parse_too() {
    let d = DemoInstance::new(3).with_sessions(5_000);
    assert_eq!(d.sessions(), 5_000);
    let all = sources(&sids_to_drill(&d));
    for incident in [
        Incident::Calm,
        Incident::InsertHotSpot,
        Incident::SendQFill,
        Incident::CheckpointRequested,
        Incident::LockChain,
        Incident::LongTransaction,
        Incident::CpuSaturated,
        Incident::MutexContention,
    ] {
        let t = phase(incident).middle();
        for s in &all {
            assert_parses_fully(s, run(&d, s, t), &format!("5000 sessions t={t}"));
        }
    }
    let u = parsers::onstat_u::parse(&text(&d, &Source::OnstatU, 0)).expect("parses");
    let sessions: BTreeSet<Sid> = u
        .threads
        .iter()
        .filter(|t| t.sessid.0 >= 800)
        .map(|t| t.sessid)
        .collect();
    assert_eq!(sessions.len(), 5_000);
}

#[test]
fn twenty_thousand_sessions_do_not_blow_up() {
    let d = DemoInstance::new(1).with_sessions(20_000);
    let t = phase(Incident::CheckpointRequested).middle();
    let u = parsers::onstat_u::parse(&text(&d, &Source::OnstatU, t)).expect("parses");
    let primaries = u.threads.iter().filter(|t| t.sessid.0 >= 800).count();
    assert!(primaries >= 20_000, "{primaries}");
    assert_eq!(u.active, Some(u.threads.len() as u64));
    let tcp =
        parsers::sockets::parse_proc_net_tcp(&text(&d, &Source::ProcNetTcp, t)).expect("parses");
    assert!(tcp.sockets.len() > 19_000, "{}", tcp.sockets.len());
    // Asking for more is clamped, not refused.
    assert_eq!(
        DemoInstance::new(1).with_sessions(50_000).sessions(),
        20_000
    );
    assert_eq!(DemoInstance::new(1).with_sessions(0).sessions(), 1);
}

#[test]
fn a_tiny_population_still_answers_everything() {
    for n in [1, 5, 15] {
        let d = DemoInstance::new(2).with_sessions(n);
        for t in test_times().into_iter().step_by(5) {
            for s in sources(&[800]) {
                let slow = matches!(
                    s,
                    Source::OnstatGAth
                        | Source::OnstatGNtt
                        | Source::OnstatK
                        | Source::OnstatGSes(_)
                        | Source::OnstatGSql(_)
                        | Source::OncheckPe
                );
                if !slow {
                    assert_parses_fully(&s, run(&d, &s, t), &format!("{n} sessions t={t}"));
                }
            }
        }
    }
}

#[test]
fn same_seed_same_bytes_other_seed_other_population() {
    let a = DemoInstance::new(11);
    let b = DemoInstance::new(11);
    for t in [0, 37, phase(Incident::LockChain).middle() + CYCLE] {
        for s in sources(&sids_to_drill(&a)) {
            assert_eq!(run(&a, &s, t), run(&b, &s, t), "{} at {t}", s.label());
        }
    }
    let c = DemoInstance::new(12);
    assert_ne!(a.sids(), c.sids(), "sids beyond the lock chain's differ");
    assert_ne!(text(&a, &Source::OnstatU, 0), text(&c, &Source::OnstatU, 0));
    assert_ne!(
        text(&a, &Source::ProcNetTcp, 0),
        text(&c, &Source::ProcNetTcp, 0)
    );
    // The lock chain's sessions exist whatever the seed.
    for d in [&a, &c] {
        for sid in 812..=815 {
            assert!(d.sids().contains(&sid));
        }
    }
}

#[test]
fn unknown_requests_are_not_found_or_unreadable() {
    let d = DemoInstance::new(1);
    for argv in [
        vec!["onstat", "-z"],
        vec!["onstat", "-g", "ses", "x"],
        vec!["ls", "-l"],
        vec!["oncheck", "-cI"],
    ] {
        let req = Request::Command(argv.iter().map(|s| s.to_string()).collect());
        match d.respond(&req, secs(3)) {
            Err(SourceError::NotFound { program }) => assert_eq!(program, argv[0]),
            other => panic!("{argv:?}: {other:?}"),
        }
    }
    for path in [
        "/proc/nope",
        "/proc/99999/comm",
        "/proc/20210/status",
        "/sys/devices/system/node/node2/meminfo",
        "/etc/passwd",
    ] {
        match d.respond(&Request::ReadFile(path.into()), secs(3)) {
            Err(SourceError::Io { path: p, .. }) => assert_eq!(p, path),
            other => panic!("{path}: {other:?}"),
        }
    }
    match d.respond(&Request::ListDir("/home".into()), secs(3)) {
        Err(SourceError::Io { .. }) => {}
        other => panic!("{other:?}"),
    }
    // dbaccess answers the systabnames query; other SQL is a syntax error, not a table list.
    let other = Request::CommandInput {
        argv: vec!["dbaccess".into(), "sysmaster".into(), "-".into()],
        stdin: "select * from sysdual;\n".into(),
    };
    let out = d.respond(&other, secs(3)).expect("dbaccess runs");
    assert_eq!(out.exit, Some(1));
    assert!(out.stderr.contains("201: A syntax error"));
}

#[test]
fn onstat_prints_the_banner_and_exits_with_the_server_mode() {
    let d = DemoInstance::new(1);
    for (t, up) in [
        (0, "Up 12 days 03:04:05"),
        (3_600 + 55, "Up 12 days 04:05:00"),
    ] {
        for s in [
            Source::OnstatU,
            Source::OnstatX,
            Source::OnstatGCon,
            Source::OnstatGAth,
            Source::OnstatGNtt,
            Source::OnstatK,
            Source::OnstatGSes(Sid(812)),
            Source::OnstatGSql(Sid(812)),
        ] {
            let out = run(&d, &s, t);
            assert_eq!(out.exit, Some(5), "{}", s.label());
            let first = format!(
                // The primary of an RSS secondary.
                "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line (Prim) -- {up} -- 4194304 Kbytes\n\n"
            );
            assert!(
                out.stdout.starts_with(&first),
                "{}:\n{}",
                s.label(),
                out.stdout
            );
        }
    }
    // An unknown sid: the banner alone.
    let out = run(&d, &Source::OnstatGSes(Sid(999_999)), 5);
    assert_eq!(out.stdout.lines().filter(|l| !l.is_empty()).count(), 1);
    let out = run(&d, &Source::OnstatGSql(Sid(999_999)), 5);
    assert_eq!(out.stdout.lines().filter(|l| !l.is_empty()).count(), 1);
    assert_eq!(run(&d, &Source::OncheckPe, 5).exit, Some(0));
    assert_eq!(run(&d, &Source::Netstat, 5).exit, Some(0));
}

#[test]
fn counters_only_grow() {
    let d = DemoInstance::new(5);
    let mut prev_threads: BTreeMap<Addr, (u64, u64)> = BTreeMap::new();
    let mut prev_vm: BTreeMap<String, u64> = BTreeMap::new();
    let mut prev_waits: BTreeMap<(Addr, u64), u64> = BTreeMap::new();
    for t in (0..CYCLE + 40).step_by(3) {
        let u = parsers::onstat_u::parse(&text(&d, &Source::OnstatU, t)).expect("parses");
        for th in &u.threads {
            if let Some(&(r, w)) = prev_threads.get(&th.address) {
                assert!(th.nreads >= r && th.nwrites >= w, "{th:?} at {t}");
            }
        }
        prev_threads = u
            .threads
            .iter()
            .map(|th| (th.address, (th.nreads, th.nwrites)))
            .collect();
        let vm = parsers::numa::parse_vmstat(&text(&d, &Source::Vmstat, t)).expect("parses");
        for (k, v) in &vm {
            if k.starts_with("nr_") {
                continue;
            }
            if let Some(p) = prev_vm.get(k) {
                assert!(v >= p, "{k} went down at {t}");
            }
        }
        prev_vm = vm;
        // A condition wait that goes on (same condition, same waiter) only gets longer.
        let con = parsers::onstat_g_con::parse(&text(&d, &Source::OnstatGCon, t)).expect("parses");
        let now: BTreeMap<(Addr, u64), u64> = con
            .conditions
            .iter()
            .map(|c| ((c.addr, c.waiter.0), c.waittime))
            .collect();
        for (k, w) in &now {
            if let Some(p) = prev_waits.get(k) {
                assert!(
                    *w >= *p + 3 || *w < 3,
                    "waittime of {k:?} went from {p} to {w} at {t}"
                );
            }
        }
        prev_waits = now;
    }
}

/// onstat -u and -g con agree: each condition's address is the wait address of a `Y` thread,
/// and each `Y` thread has its condition.
#[test]
fn conditions_are_the_waits_of_y_threads() {
    let d = DemoInstance::new(1);
    for t in test_times().into_iter().step_by(4) {
        let u = parsers::onstat_u::parse(&text(&d, &Source::OnstatU, t)).expect("parses");
        let con = parsers::onstat_g_con::parse(&text(&d, &Source::OnstatGCon, t)).expect("parses");
        let conds: BTreeMap<Addr, &str> = con
            .conditions
            .iter()
            .map(|c| (c.addr, c.name.as_str()))
            .collect();
        let y: Vec<_> = u
            .threads
            .iter()
            .filter(|th| th.flags.0[0] == b'Y')
            .collect();
        assert_eq!(y.len(), con.conditions.len(), "t={t}");
        for th in y {
            let w = th.wait.expect("a Y thread waits on something");
            let name = conds.get(&w).copied();
            assert!(
                matches!(name, Some("netnorm" | "sm_read")),
                "t={t}: {th:?} → {name:?}"
            );
        }
    }
}

/// onstat -X's owners and waiters are onstat -u threads; every waiter is a `B` thread whose
/// wait address is that buffer; and the pages resolve through oncheck -pe.
#[test]
fn buffer_waiters_are_b_threads_and_pages_resolve() {
    let d = DemoInstance::new(1);
    let map = ifxtop::extents::ExtentMap::from_oncheck_pe(&text(&d, &Source::OncheckPe, 0))
        .expect("parses");
    for t in test_times() {
        let u = parsers::onstat_u::parse(&text(&d, &Source::OnstatU, t)).expect("parses");
        let x = parsers::onstat_x::parse(&text(&d, &Source::OnstatX, t)).expect("parses");
        let by_addr: BTreeMap<Addr, _> = u.threads.iter().map(|th| (th.address, th)).collect();
        assert_eq!(
            x.pools.iter().map(|p| p.page_size).collect::<Vec<_>>(),
            vec![2048, 8192]
        );
        let mut waiting = 0;
        for b in x.pools.iter().flat_map(|p| &p.buffers) {
            if let Some(o) = b.owner.filter(|o| o.0 != u64::MAX) {
                assert!(by_addr.contains_key(&o), "owner {o} at {t}");
            }
            for w in &b.waiters {
                let th = by_addr
                    .get(w)
                    .unwrap_or_else(|| panic!("waiter {w} at {t}"));
                assert_eq!(th.flags.0[0], b'B', "{th:?}");
                assert_eq!(th.wait, Some(b.address));
                waiting += 1;
            }
            match map.lookup(b.chunk, b.page, 2) {
                ifxtop::extents::Lookup::Resolved(hit) => {
                    assert!(hit.object.description.starts_with("stores:"), "{hit:?}")
                }
                other => panic!("{}:{} at {t}: {other:?}", b.chunk, b.page),
            }
        }
        let b_threads = u.threads.iter().filter(|th| th.flags.0[0] == b'B').count();
        assert_eq!(waiting, b_threads, "t={t}");
    }
}

/// A store fed by the live collectors from `from` to `to`, as `ifxtop snapshot --demo` does.
fn simulate(d: &DemoInstance, from: u64, to: u64) -> Store {
    let settings = StoreSettings {
        ports: vec![LISTENER_PORT],
        ..StoreSettings::default()
    };
    report::demo_store(d.clone(), secs(from), secs(to), settings, false)
        .expect("the demo runs")
        .0
}

fn snap(d: &DemoInstance, from: u64, to: u64) -> Snapshot {
    snapshot::build(&simulate(d, from, to), secs(to), Some("ol_demo"), &[])
}

#[test]
fn insert_hot_spot_ranks_order_log_first() {
    let p = phase(Incident::InsertHotSpot);
    for (seed, cycle) in [(1, 0), (7, 1)] {
        let d = DemoInstance::new(seed);
        let from = cycle * CYCLE + p.start;
        let s = snap(&d, from, from + 30);
        let top = s.hotspots.first().expect("a hot spot");
        assert_eq!(
            top.object, "stores:'informix'.order_log",
            "{:#?}",
            s.hotspots
        );
        assert_eq!(top.dbspace.as_deref(), Some("datadbs1"));
        assert!(top.resolved);
        assert!((8..=15).contains(&top.current_waiters), "{top:?}");
        assert!(top.samples_window >= 14, "{top:?}");
        // The table grows: its last page moved on during the window.
        assert!(top.distinct_pages >= 5, "{top:?}");
        assert_eq!(s.unresolved_share, Some(0.0));
        // Each waiter is blocked by the inserting session that owns the page.
        let waiters: Vec<_> = s
            .waiters
            .iter()
            .filter(|w| w.waiting_on.describe().contains("order_log"))
            .collect();
        assert_eq!(waiters.len() as u64, top.current_waiters);
        let owner = top.owner.expect("the buffer has an owner");
        let store = simulate(&d, from + 30, from + 30);
        let u = store
            .get(ifxtop::source::key::OnstatU)
            .expect("onstat -u")
            .clone();
        let owner_sid = u
            .threads
            .iter()
            .find(|t| t.address == owner)
            .map(|t| t.sessid)
            .expect("owner in onstat -u");
        for w in waiters {
            assert_eq!(w.blockers, vec![owner_sid], "{w:?}");
            assert!(w.verdict.contains("order_log"), "{}", w.verdict);
        }
    }
}

#[test]
fn order_log_last_page_advances() {
    let d = DemoInstance::new(1);
    let p = phase(Incident::InsertHotSpot);
    let page_at = |t| {
        let x = parsers::onstat_x::parse(&text(&d, &Source::OnstatX, t)).expect("parses");
        x.pools
            .iter()
            .flat_map(|p| &p.buffers)
            .find(|b| !b.waiters.is_empty())
            .map(|b| (b.chunk, b.page))
            .expect("a buffer with waiters")
    };
    let (c1, p1) = page_at(p.start + 2);
    let (c2, p2) = page_at(p.start + 30);
    assert_eq!(c1, c2);
    assert!(p2 > p1, "{p1} then {p2}");
    assert!(p2 - p1 <= 10, "a few pages, not a jump: {p1} then {p2}");
}

#[test]
fn null_index_leaf_ranks_ix_orders_ship_date_first() {
    let d = DemoInstance::new(1);
    let p = phase(Incident::NullIndexLeaf);
    let s = snap(&d, p.start, p.start + 24);
    let top = s.hotspots.first().expect("a hot spot");
    assert_eq!(top.object, "stores:'informix'.ix_orders_ship_date");
    // The 8 KB dbspace: onstat -X counts 2 KB base pages, oncheck -pe 8 KB pages.
    assert_eq!(top.dbspace.as_deref(), Some("datadbs2"));
    assert_eq!(top.distinct_pages, 1, "one leaf: {top:?}");
    assert!((4..=8).contains(&top.current_waiters), "{top:?}");
    let store = simulate(&d, p.start + 24, p.start + 24);
    let x = store
        .get(ifxtop::source::key::OnstatX)
        .expect("onstat -X")
        .clone();
    let leaf = x
        .pools
        .iter()
        .find(|pool| pool.page_size == 8192)
        .and_then(|pool| pool.buffers.iter().find(|b| !b.waiters.is_empty()))
        .expect("the leaf's buffer in the 8 KB pool");
    assert_eq!(leaf.chunk, 4);
    assert_eq!(
        leaf.page % 4,
        0,
        "an 8 KB page starts on a 4-base-page boundary"
    );
    // Read with the wrong base page size, the same page lands elsewhere (or nowhere).
    let map = ifxtop::extents::ExtentMap::from_oncheck_pe(&text(&d, &Source::OncheckPe, 0))
        .expect("parses");
    let wrong = match map.lookup(leaf.chunk, leaf.page, 8) {
        ifxtop::extents::Lookup::Resolved(hit) => hit.object.description.to_string(),
        other => format!("{other:?}"),
    };
    assert_ne!(wrong, "stores:'informix'.ix_orders_ship_date");
}

/// (remote host, port) → Send-Q of the connections to the listener.
fn send_queues(d: &DemoInstance, t: u64) -> BTreeMap<(String, String), u64> {
    let mut m = BTreeMap::new();
    for src in [Source::ProcNetTcp, Source::ProcNetTcp6] {
        let s = parsers::sockets::parse_proc_net_tcp(&text(d, &src, t)).expect("parses");
        for k in s.sockets {
            if k.local.port_num() == Some(LISTENER_PORT) && k.remote.port_num() != Some(0) {
                m.insert(
                    (k.remote.host.to_string(), k.remote.port.to_string()),
                    k.send_q,
                );
            }
        }
    }
    m
}

#[test]
fn send_q_fills_on_a_few_connections_then_drains() {
    let d = DemoInstance::new(1);
    let fill = phase(Incident::SendQFill);
    let drain = phase(Incident::SendQDrain);
    let early = send_queues(&d, fill.start + 5);
    let late = send_queues(&d, fill.end - 2);
    let grown: Vec<_> = late
        .iter()
        .filter(|(k, q)| **q > 200_000 && early.get(*k).is_some_and(|e| *e > 1_000 && *e < 20_000))
        .collect();
    assert!((4..=6).contains(&grown.len()), "{grown:?}");
    let after = send_queues(&d, drain.end - 1);
    for (k, _) in &grown {
        assert_eq!(after.get(*k), Some(&0), "{k:?} drained");
    }
    // Calm: nothing of that size anywhere.
    let calm = send_queues(&d, phase(Incident::Calm).middle());
    assert!(calm.values().all(|q| *q < 2_000), "{calm:?}");
    // Through the store: the Sockets pane ranks those connections first, their Send-Q growing.
    let s = snap(&d, fill.start, fill.start + 40);
    let top: Vec<_> = s.sockets.iter().take(grown.len()).collect();
    for row in &top {
        assert!(row.send_q > 100_000, "{row:?}");
        let rising = row.trend.windows(2).filter(|w| w[1] > w[0]).count();
        assert!(rising + 2 >= row.trend.len(), "{:?}", row.trend);
    }
}

/// The FET_BUF_SIZE story joined as ifxtop joins it: netnorm waiters (onstat -u + -g con) →
/// their client address (onstat -g ntt) → their socket's Send-Q (/proc/net/tcp), growing.
#[test]
fn netnorm_waiters_have_growing_send_q() {
    let d = DemoInstance::new(7);
    let fill = phase(Incident::SendQFill);
    let t1 = CYCLE + fill.start + 10;
    let t2 = CYCLE + fill.start + 40;
    let netnorm_waiters = |t| -> BTreeMap<Sid, u64> {
        let u = parsers::onstat_u::parse(&text(&d, &Source::OnstatU, t)).expect("parses");
        let con = parsers::onstat_g_con::parse(&text(&d, &Source::OnstatGCon, t)).expect("parses");
        let netnorm: BTreeMap<Addr, u64> = con
            .conditions
            .iter()
            .filter(|c| c.name == "netnorm")
            .map(|c| (c.addr, c.waittime))
            .collect();
        u.threads
            .iter()
            .filter(|th| th.flags.0[0] == b'Y')
            .filter_map(|th| Some((th.sessid, *netnorm.get(&th.wait?)?)))
            .collect()
    };
    let client_of = |t| -> BTreeMap<Sid, (String, String)> {
        let ntt = parsers::onstat_g_ntt::parse(&text(&d, &Source::OnstatGNtt, t)).expect("parses");
        assert!(ntt.unparsed.is_empty(), "{:?}", ntt.unparsed);
        ntt.threads
            .iter()
            .filter_map(|n| {
                let c = n.client.as_ref()?;
                Some((n.sid, (c.host.to_string(), c.port.to_string())))
            })
            .collect()
    };
    let (w1, w2) = (netnorm_waiters(t1), netnorm_waiters(t2));
    let (c1, c2) = (client_of(t1), client_of(t2));
    let (q1, q2) = (send_queues(&d, t1), send_queues(&d, t2));
    let mut growing = 0;
    for (sid, wait2) in &w2 {
        let Some(wait1) = w1.get(sid) else { continue };
        let (Some(a1), Some(a2)) = (c1.get(sid), c2.get(sid)) else {
            continue;
        };
        assert_eq!(a1, a2);
        let (Some(&s1), Some(&s2)) = (q1.get(a1), q2.get(a2)) else {
            continue;
        };
        if s1 > 0 && s2 > s1 {
            growing += 1;
            assert!(s2 > 100_000, "{sid}: {s1} → {s2}");
            assert_eq!(
                *wait2,
                wait1 + (t2 - t1),
                "{sid}: waittime grows with the wait"
            );
        }
    }
    assert!((4..=6).contains(&growing), "{growing} sessions");
    // Every client session's address is one of the listener's connections.
    let conns: BTreeSet<_> = q2.keys().cloned().collect();
    for (sid, addr) in &c2 {
        if sid.0 >= 800 {
            assert!(conns.contains(addr), "{sid}: {addr:?}");
        }
    }
}

/// netnorm waiters (client sessions) in a snapshot: sid → (Send-Q of its socket, seconds in
/// the wait, idle, verdict).
fn netnorm_rows(s: &Snapshot) -> BTreeMap<Sid, (Option<u64>, f64, bool, String)> {
    s.waiters
        .iter()
        .filter(|w| {
            matches!(&w.waiting_on,
                ifxtop::model::waiters::WaitTarget::Condition { name: Some(n), .. } if n == "netnorm")
        })
        .map(|w| {
            let q = w.socket.as_ref().map(|k| k.send_q);
            (w.sessid, (q, w.in_wait_s, w.idle, w.verdict.to_string()))
        })
        .collect()
}

#[test]
fn snapshot_joins_netnorm_waiters_to_their_growing_send_q() {
    let d = DemoInstance::new(1);
    let fill = phase(Incident::SendQFill);
    let (t1, t2) = (fill.start + 10, fill.start + 40);
    // From before the fetch, so a wait merged with the idle wait before it would show.
    let r1 = netnorm_rows(&snap(&d, fill.start - 20, t1));
    let s2 = snap(&d, fill.start - 20, t2);
    let r2 = netnorm_rows(&s2);
    let filling: Vec<_> = r2
        .iter()
        .filter(|(_, (q, ..))| q.is_some_and(|q| q > 0))
        .collect();
    assert!((4..=6).contains(&filling.len()), "{filling:?}");
    for (sid, (q2, wait2, idle, verdict)) in &filling {
        let (q1, wait1, ..) = r1.get(sid).unwrap_or_else(|| panic!("{sid} waited at t1"));
        let (q1, q2) = (q1.expect("socket known"), q2.expect("socket known"));
        assert!(q1 > 0 && q2 > 10 * q1, "{sid}: Send-Q {q1} then {q2}");
        assert!(
            wait2 - wait1 >= (t2 - t1) as f64 - 1.0,
            "{sid}: {wait1} then {wait2}"
        );
        // The wait began with the fetch (the query ran before it, not an idle wait).
        assert!(
            (wait2 - (t2 - fill.start) as f64).abs() <= 1.0,
            "{sid}: in the wait for {wait2} s"
        );
        assert!(!idle);
        assert!(verdict.contains("FET_BUF_SIZE"), "{verdict}");
    }
    // Everyone else waiting on netnorm is idle: their socket is known and empty.
    let idle = r2
        .values()
        .filter(|(q, _, idle, _)| *q == Some(0) && *idle)
        .count();
    assert_eq!(idle + filling.len(), r2.len());
    // The idle count holds those and the shared-memory clients between requests (sm_read).
    let shm = s2
        .waiters
        .iter()
        .filter(|w| w.waiting_on.describe() == "sm_read")
        .count();
    assert!(shm > 0);
    assert_eq!(s2.summary.idle, idle + shm);
    // The Sockets pane names the sessions on those connections.
    let top = s2.sockets.first().expect("a socket");
    assert!(
        top.sessid.is_some_and(|sid| r2.contains_key(&sid)),
        "{top:?}"
    );
}

#[test]
fn calm_netnorm_waiters_are_idle_with_known_sockets() {
    for seed in [1, 7] {
        let d = DemoInstance::new(seed);
        let calm = phase(Incident::Calm);
        let s = snap(&d, calm.start, calm.end - 1);
        let rows = netnorm_rows(&s);
        assert!(rows.len() > 100, "{}", rows.len());
        for (sid, (q, _, idle, verdict)) in &rows {
            assert_eq!(*q, Some(0), "{sid}");
            assert!(idle, "{sid}: {verdict}");
        }
        // Local batch jobs on shared-memory connections wait on sm_read between requests: idle
        // too, and said to have no socket (rather than an unknown one).
        let shm: Vec<_> = s
            .waiters
            .iter()
            .filter(|w| w.waiting_on.describe() == "sm_read")
            .collect();
        assert!(!shm.is_empty());
        for w in shm {
            assert!(w.idle, "{}", w.sessid);
            assert!(
                w.verdict.contains("shared-memory connection"),
                "{}",
                w.verdict
            );
        }
    }
}

#[test]
fn checkpoint_stall_blocks_threads_and_reclaim_climbs() {
    let d = DemoInstance::new(1);
    let req = phase(Incident::CheckpointRequested);
    let inp = phase(Incident::CheckpointInProgress);
    let calm = phase(Incident::Calm);
    let s = snap(&d, req.start, req.start + 20);
    assert_eq!(s.server.mode.as_deref(), Some("On-Line"));
    assert_eq!(
        s.server.mode_flags,
        vec!["Prim".to_string(), "CKPT REQ".to_string()]
    );
    assert_eq!(s.server.blocked.as_deref(), Some("CKPT"));
    let c = s.summary.by_reason.get(&'C').copied().unwrap_or(0);
    assert!((20..=40).contains(&c), "{c} C waiters");
    let s_inp = snap(&d, inp.start, inp.start + 5);
    assert_eq!(
        s_inp.server.mode_flags,
        vec!["Prim".to_string(), "CKPT INP".to_string()]
    );
    assert_eq!(s_inp.server.blocked.as_deref(), Some("CKPT"));
    assert_eq!(s_inp.summary.by_reason.get(&'C').copied(), Some(40));
    // One thread sits in a critical section while the others wait.
    let u = parsers::onstat_u::parse(&text(&d, &Source::OnstatU, req.start + 20)).expect("parses");
    assert_eq!(
        u.threads
            .iter()
            .filter(|t| t.flags.in_critical_section())
            .count(),
        1
    );
    // NUMA: zone reclaim on, direct reclaim scanning fast, node 0 nearly out of free memory.
    assert_eq!(s.numa.zone_reclaim_mode, Some(1));
    assert!(s.numa.zone_reclaim_warning().is_some());
    let s_calm = snap(&d, calm.start, calm.end - 1);
    assert_eq!(s_calm.numa.zone_reclaim_mode, Some(1));
    let direct = s.numa.pgscan_direct_per_s.expect("a rate");
    let direct_calm = s_calm.numa.pgscan_direct_per_s.expect("a rate");
    assert!(
        direct > 100_000.0 && direct_calm < 100.0,
        "{direct} vs {direct_calm}"
    );
    let free = |s: &Snapshot| {
        s.numa
            .nodes
            .iter()
            .find(|n| n.node == 0)
            .and_then(|n| n.free_kb)
            .expect("node 0")
    };
    assert!(free(&s) < 200_000 && free(&s_calm) > 1_000_000);
    let vm = |t| parsers::numa::parse_vmstat(&text(&d, &Source::Vmstat, t)).expect("parses");
    let (a, b) = (vm(req.start + 5), vm(req.start + 15));
    for k in [
        "pgscan_direct",
        "pgsteal_direct",
        "zone_reclaim_failed",
        "allocstall_normal",
    ] {
        assert!(b[k] > a[k] + 10 * 100, "{k}: {} → {}", a[k], b[k]);
    }
    // Outside the stall, the banner is plain again.
    assert_eq!(s_calm.server.mode_flags, vec!["Prim".to_string()]);
    assert_eq!(s_calm.server.blocked, None);
}

#[test]
fn lock_chain_in_onstat_u_and_onstat_k() {
    let d = DemoInstance::new(1);
    let p = phase(Incident::LockChain);
    for t in [p.start + 1, p.middle(), CYCLE + p.end - 1] {
        let u = parsers::onstat_u::parse(&text(&d, &Source::OnstatU, t)).expect("parses");
        let k = parsers::onstat_k::parse(&text(&d, &Source::OnstatK, t)).expect("parses");
        assert!(k.unparsed.is_empty(), "{:?}", k.unparsed);
        let parsed = Source::Systabnames
            .parse(run(&d, &Source::Systabnames, t))
            .expect("systabnames");
        let names = parsed.get::<Systabnames>().expect("systabnames").clone();
        let th = |sid: u64| {
            u.threads
                .iter()
                .find(|t| t.sessid == Sid(sid) && t.flags.is_primary())
                .unwrap_or_else(|| panic!("sid {sid}"))
        };
        let head = th(812);
        assert!(head.wait_reason.is_none());
        assert_eq!(head.flags.txn_state(), Some('B'));
        assert_eq!(head.locks, 3);
        let lock = |addr: Addr| {
            k.locks
                .iter()
                .find(|l| l.address == addr)
                .unwrap_or_else(|| panic!("lock {addr}"))
        };
        let owner_sid = |sid: u64| {
            let w = th(sid);
            assert_eq!(w.flags.0[0], b'L');
            let l = lock(w.wait.expect("a lock address"));
            let owner = u
                .threads
                .iter()
                .find(|t| t.address == l.owner)
                .expect("owner in onstat -u");
            (owner.sessid.0, l)
        };
        let (o813, l813) = owner_sid(813);
        let (o815, l815) = owner_sid(815);
        let (o814, l814) = owner_sid(814);
        assert_eq!((o813, o815, o814), (812, 812, 813));
        assert_eq!(l813.wtlist, Some(th(813).address));
        assert_eq!(l815.wtlist, Some(th(815).address));
        assert_eq!(l814.wtlist, Some(th(814).address));
        assert_eq!(
            names.table(l813.tblsnum),
            Some("stores:'informix'.customer")
        );
        assert_eq!(l813.lock_type, "HDR+X");
        assert_ne!(l813.rowid, 0);
        // Every lock's table has a name, and each thread's lock count is its rows in onstat -k.
        for l in &k.locks {
            assert!(names.table(l.tblsnum).is_some(), "{l:?}");
        }
        for t in &u.threads {
            let held = k.locks.iter().filter(|l| l.owner == t.address).count() as u64;
            assert_eq!(held, t.locks, "{t:?}");
        }
        assert_eq!(k.active, Some(k.locks.len() as u64));
    }
}

#[test]
fn lock_chain_joins_to_a_head_blocker() {
    let d = DemoInstance::new(1);
    let p = phase(Incident::LockChain);
    let s = snap(&d, p.start, p.start + 20);
    let row = |sid| {
        s.waiters
            .iter()
            .find(|w| w.sessid == Sid(sid))
            .unwrap_or_else(|| panic!("sid {sid} waits"))
    };
    let w814 = row(814);
    assert_eq!(w814.blockers, vec![Sid(813), Sid(812)]);
    assert_eq!(w814.head_blocker, Some(Sid(812)));
    assert_eq!(row(813).blockers, vec![Sid(812)]);
    assert_eq!(row(815).head_blocker, Some(Sid(812)));
    let head = s.heads.first().expect("a head blocker");
    assert_eq!((head.sid, head.blocked, head.locks), (Sid(812), 3, 3));
}

/// onstat -g ath and onstat -g ses agree with onstat -u and -g con: tids, rstcbs, statuses.
#[test]
fn threads_agree_across_ath_ses_and_con() {
    let d = DemoInstance::new(1);
    for t in [
        phase(Incident::InsertHotSpot).middle(),
        phase(Incident::SendQFill).middle(),
        phase(Incident::CheckpointRequested).middle(),
        phase(Incident::LockChain).middle(),
    ] {
        let u = parsers::onstat_u::parse(&text(&d, &Source::OnstatU, t)).expect("parses");
        let ath = parsers::onstat_g_ath::parse(&text(&d, &Source::OnstatGAth, t)).expect("parses");
        let con = parsers::onstat_g_con::parse(&text(&d, &Source::OnstatGCon, t)).expect("parses");
        assert!(ath.unparsed.is_empty(), "{:?}", ath.unparsed);
        let by_rstcb: BTreeMap<Addr, _> = ath
            .threads
            .iter()
            .filter_map(|a| Some((a.rstcb?, a)))
            .collect();
        assert_eq!(by_rstcb.len(), u.threads.len());
        for th in &u.threads {
            let a = by_rstcb
                .get(&th.address)
                .unwrap_or_else(|| panic!("{th:?}"));
            use parsers::onstat_g_ath::ThreadState as S;
            match th.flags.0[0] {
                b'Y' => assert!(matches!(a.state, S::CondWait { .. }), "{a:?}"),
                b'L' => assert_eq!(a.state, S::LockWait, "{a:?}"),
                b'S' => assert!(matches!(a.state, S::MutexWait { .. }), "{a:?}"),
                _ => assert!(!matches!(a.state, S::CondWait { .. }), "{a:?}"),
            }
        }
        let by_tid: BTreeMap<_, _> = ath.threads.iter().map(|a| (a.tid, a)).collect();
        for c in &con.conditions {
            let a = by_tid.get(&c.waiter).expect("waiter tid in onstat -g ath");
            let rstcb = a.rstcb.expect("a user thread");
            let th = u
                .threads
                .iter()
                .find(|t| t.address == rstcb)
                .expect("in -u");
            assert_eq!(th.wait, Some(c.addr));
        }
        for sid in [812u64, 814] {
            let ses = parsers::onstat_g_ses::parse(&text(&d, &Source::OnstatGSes(Sid(sid)), t))
                .expect("parses");
            assert!(ses.unparsed.is_empty(), "{:?}", ses.unparsed);
            let row = ses.sessions.first().expect("the session row");
            assert_eq!(row.sid, Sid(sid));
            let detail = ses.detail.as_ref().expect("detail");
            let mine: Vec<_> = u.threads.iter().filter(|t| t.sessid == Sid(sid)).collect();
            assert_eq!(detail.threads.len(), mine.len());
            for st in &detail.threads {
                let th = mine.iter().find(|t| t.address == st.rstcb).expect("rstcb");
                assert_eq!(st.flags.as_str(), th.flags.as_str());
            }
            assert!(detail.current_sql.as_deref().is_some_and(|s| !s.is_empty()));
            let sql = parsers::onstat_g_sql::parse(&text(&d, &Source::OnstatGSql(Sid(sid)), t))
                .expect("parses");
            assert_eq!(sql.current_sql, detail.current_sql);
            assert_eq!(sql.sessions.first().map(|s| s.sid), Some(Sid(sid)));
        }
    }
}

#[test]
fn sessions_play_their_roles_in_sql() {
    let d = DemoInstance::new(1);
    let p = phase(Incident::LockChain);
    let sql = |sid: u64| text(&d, &Source::OnstatGSql(Sid(sid)), p.middle());
    assert!(sql(812).contains("update customer set balance = balance + 10.00"));
    assert!(sql(812).contains("where customer_num = 104"));
    let hot = phase(Incident::InsertHotSpot).middle();
    let u = parsers::onstat_u::parse(&text(&d, &Source::OnstatU, hot)).expect("parses");
    let b_sids: BTreeSet<Sid> = u
        .threads
        .iter()
        .filter(|t| t.flags.0[0] == b'B')
        .map(|t| t.sessid)
        .collect();
    assert!(b_sids.len() >= 8);
    for sid in b_sids {
        let s = text(&d, &Source::OnstatGSql(sid), hot);
        assert!(s.contains("insert into order_log"), "{sid}: {s}");
    }
}

#[test]
fn numa_files_describe_two_nodes_and_where_oninit_lives() {
    let d = DemoInstance::new(1);
    assert_eq!(text(&d, &Source::NodesOnline, 0).trim(), "0-1");
    assert_eq!(
        parsers::numa::parse_cpulist(&text(&d, &Source::NodeCpulist(1), 0)).expect("parses"),
        (16..32).collect::<Vec<_>>()
    );
    let m =
        parsers::numa::parse_node_meminfo(&text(&d, &Source::NodeMeminfo(1), 0)).expect("parses");
    assert_eq!(m.node, 1);
    assert!(m.unparsed.is_empty());
    // /proc lists oninit processes among others; comm names them.
    let list = d
        .respond(&Request::ListDir("/proc".into()), secs(0))
        .expect("ls /proc");
    let pids: Vec<u32> = list.stdout.lines().filter_map(|l| l.parse().ok()).collect();
    let oninit: Vec<u32> = pids
        .iter()
        .copied()
        .filter(|p| {
            d.respond(
                &Request::ReadFile(format!("/proc/{p}/comm").into()),
                secs(0),
            )
            .is_ok_and(|o| o.stdout.trim() == "oninit")
        })
        .collect();
    assert!(oninit.len() >= 4 && oninit.len() < pids.len(), "{oninit:?}");
    let maps =
        parsers::numa::parse_numa_maps(&text(&d, &Source::NumaMaps(oninit[0]), 0)).expect("parses");
    let per_node = parsers::numa::bytes_per_node(&maps);
    assert!(per_node[&0] > 3 * per_node[&1], "{per_node:?}");
}

/// `ifxtop snapshot --demo --at T` prints the phase of the timeline at T, as text and as JSON.
#[test]
fn snapshot_cli_shows_the_phase() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let fill = phase(Incident::SendQFill);
    let at = (fill.start + 15).to_string();
    let out = std::process::Command::new(bin)
        .args(["snapshot", "--demo", "--at", &at])
        .output()
        .expect("ifxtop runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("ifxtop snapshot 2026-11-22T13:")
            && text
                .lines()
                .next()
                .is_some_and(|l| l.contains("host db01-demo  server ol_demo")),
        "{text}"
    );
    assert!(text.contains("12.10.FC8 On-Line"), "{text}");
    let fet = text.lines().filter(|l| l.contains("FET_BUF_SIZE")).count();
    assert!((4..=6).contains(&fet), "{text}");
    for section in [
        "WAITERS",
        "BUFFER HOT SPOTS",
        "SOCKETS",
        "NUMA",
        "zone_reclaim_mode = 1",
    ] {
        assert!(text.contains(section), "{section}: {text}");
    }
    let ckpt = phase(Incident::CheckpointRequested);
    let at = (ckpt.start + 20).to_string();
    let out = std::process::Command::new(bin)
        .args(["snapshot", "--demo", "--at", &at, "--format", "json"])
        .output()
        .expect("ifxtop runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["server"]["mode"], "On-Line");
    assert_eq!(
        v["server"]["mode_flags"],
        serde_json::json!(["Prim", "CKPT REQ"])
    );
    assert_eq!(v["server"]["blocked"], "CKPT");
    let c = v["summary"]["by_reason"]["C"].as_u64().expect("C waiters");
    assert!((20..=40).contains(&c), "{c}");
    assert_eq!(v["numa"]["zone_reclaim_mode"], 1);
}

/// The hot buffer's waiters: several on its row, more on lines holding only addresses.
#[test]
fn onstat_x_lists_many_waiters_on_continuation_lines() {
    let d = DemoInstance::new(1);
    let p = phase(Incident::InsertHotSpot);
    let mut seen = 0;
    for t in p.start..p.end {
        let out = text(&d, &Source::OnstatX, t);
        let x = parsers::onstat_x::parse(&out).expect("parses");
        let most = x
            .pools
            .iter()
            .flat_map(|p| &p.buffers)
            .map(|b| b.waiters.len())
            .max()
            .unwrap_or(0);
        let address_only = out
            .lines()
            .filter(|l| l.starts_with(' ') && !l.trim().is_empty())
            .filter(|l| l.split_whitespace().all(|w| Addr::from_hex(w).is_some()))
            .count();
        assert!(most >= 8, "t={t}: {most} waiters");
        assert_eq!(address_only, (most - 1) / 3, "t={t}:\n{out}");
        seen += 1;
    }
    assert_eq!(seen, p.len());
}

/// The SAN story: chunk 4 (datadbs2) on the LUN that turns slow. Before the phase its device
/// answers in about 2 ms; in it the await climbs past 40 ms while Informix asks the same pages
/// of it as before; the chunk goes first (slowest first) with the verdict that looks below
/// Informix, and the JSON has it under the names the issue fixed.
#[test]
fn slow_device_shows_on_its_chunk_while_demand_stays_flat() {
    let p = phase(Incident::SlowDevice);
    let d = DemoInstance::new(1);
    let calm = snap(&d, p.start - 40, p.start);
    let slow = snap(&d, p.start - 40, p.start + 50);
    let chunk4 = |s: &Snapshot| {
        s.io.chunks
            .iter()
            .find(|c| c.chunk == 4)
            .cloned()
            .expect("chunk 4 in io")
    };
    let (before, during) = (chunk4(&calm), chunk4(&slow));
    assert_eq!(before.dbspace.as_deref(), Some("datadbs2"));
    assert_eq!(before.device.as_deref(), Some("dm-8"), "{before:?}");
    let aw = |c: &ifxtop::model::io::ChunkRow| c.device_await_ms.expect("device await");
    assert!(aw(&before) < 5.0, "{before:?}");
    assert!(aw(&during) > 40.0, "{during:?}");
    // Informix's demand did not move: the same pages per second either side.
    let rd = |c: &ifxtop::model::io::ChunkRow| c.reads_per_s.expect("reads/s");
    assert!(
        (rd(&before) - rd(&during)).abs() < 1.0,
        "{before:?} {during:?}"
    );
    assert!(before.verdict.is_none(), "{before:?}");
    let v = during.verdict.as_deref().unwrap_or_default();
    assert!(
        v.starts_with("the device is slow: ") && v.contains("look below Informix"),
        "{v}"
    );
    assert_eq!(slow.io.chunks.first().map(|c| c.chunk), Some(4));
    // No other chunk is called slow (datadbs1's hard reading is a notice, before and during).
    let warned: Vec<u32> = slow
        .io
        .chunks
        .iter()
        .filter(|c| c.concern >= ifxtop::model::io::Concern::Warn)
        .map(|c| c.chunk)
        .collect();
    assert_eq!(warned, vec![4], "{:#?}", slow.io.chunks);

    let v = serde_json::to_value(&slow).expect("JSON");
    let first = &v["io"]["chunks"][0];
    assert_eq!(first["chunk"], 4);
    assert_eq!(first["dbspace"], "datadbs2");
    assert_eq!(first["path"], "/ifx/chunks/datadbs2_01");
    assert_eq!(first["device"], "dm-8");
    for key in [
        "reads_per_s",
        "writes_per_s",
        "avg_read_ms",
        "avg_write_ms",
        "device_await_ms",
        "device_util_pct",
    ] {
        assert!(first[key].is_f64(), "{key}: {first}");
    }
    assert!(
        first["device_await_ms"].as_f64().unwrap_or(0.0) > 40.0,
        "{first}"
    );
    // Informix's own time per read on that chunk rose with the device's.
    assert!(
        first["avg_read_ms"].as_f64().unwrap_or(0.0) > 20.0,
        "{first}"
    );
}

/// The RSS secondary: a few pages behind while calm; in the phase it falls behind until the
/// primary blocks log transmission, and the replication view, its verdict and the JSON say so.
#[test]
fn a_lagging_rss_secondary_ends_with_transmission_blocked() {
    let p = phase(Incident::ReplicaLag);
    let d = DemoInstance::new(1);
    let calm = snap(&d, p.start - 40, p.start);
    let lag = snap(&d, p.start - 40, p.end - 5);
    for s in [&calm, &lag] {
        assert_eq!(s.replication.role.as_deref(), Some("primary"));
        assert_eq!(s.replication.peers.len(), 1, "{:#?}", s.replication);
    }
    let (before, during) = (&calm.replication.peers[0], &lag.replication.peers[0]);
    assert_eq!(before.name, "ol_dr1");
    assert_eq!(before.peer_type.as_deref(), Some("RSS"));
    assert_eq!(before.transmission.as_deref(), Some("Active"));
    assert!(before.lag_pages.is_some_and(|n| n < 10), "{before:?}");
    assert!(before.lag_s.is_some_and(|s| s < 2.0), "{before:?}");
    assert_eq!(before.verdict, None);

    assert_eq!(
        during.transmission.as_deref(),
        Some("Blocked"),
        "{during:?}"
    );
    assert!(during.lag_pages.is_some_and(|n| n > 1_000), "{during:?}");
    let v = during.verdict.as_deref().unwrap_or_default();
    assert!(v.starts_with("log transmission blocked: "), "{v}");
    assert!(during.lag_history.len() >= 4, "{during:?}");
    let h = &during.lag_history;
    assert!(h[h.len() - 1] > h[0], "the lag grew: {h:?}");

    let v = serde_json::to_value(&lag).expect("JSON");
    // The last acknowledgement, as onstat prints it, reads against the moment shown (the
    // demo's onstat and its header keep one clock): before it, on the same day, when the
    // transmission blocked.
    let ack = during.last_ack.clone().expect("a last ack");
    let stamp = |t: u64| {
        let at = ifxtop::demo::EPOCH + secs(t);
        format!(
            "{:04}-{:02}-{:02}.{:02}:{:02}:{:02}",
            at.year(),
            u8::from(at.month()),
            at.day(),
            at.hour(),
            at.minute(),
            at.second()
        )
    };
    let (now, minute_ago) = (stamp(p.end - 5), stamp(p.end - 65));
    assert!(
        ack.len() == now.len() && minute_ago < ack && ack < now,
        "{ack} not in {minute_ago} .. {now}"
    );
    let r = &v["replication"];
    assert_eq!(r["role"], "primary");
    let peer = &r["peers"][0];
    assert_eq!(peer["name"], "ol_dr1");
    assert_eq!(peer["type"], "RSS");
    assert_eq!(peer["status"], "Active");
    assert_eq!(peer["transmission"], "Blocked");
    assert!(
        peer["lag_pages"].as_u64().is_some_and(|n| n > 1_000),
        "{peer}"
    );
}

/// docs/commands.md names every field of the snapshot's `io` and `replication` (a chunk, a
/// peer, a secondary's view), as the demo's incidents fill them.
#[test]
fn the_docs_name_every_io_and_replication_field() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/commands.md"))
        .expect("docs/commands.md");
    let p = phase(Incident::ReplicaLag);
    let s = snap(&DemoInstance::new(1), p.start, p.start + 30);
    let v = serde_json::to_value(&s).expect("JSON");
    let mut names: BTreeSet<String> = BTreeSet::new();
    for obj in [
        &v["io"],
        &v["io"]["chunks"][0],
        &v["io"]["chunks"][0]["disks"][0],
        &v["replication"],
        &v["replication"]["peers"][0],
    ] {
        let m = obj.as_object().expect("an object");
        names.extend(m.keys().cloned());
    }
    let secondary =
        serde_json::to_value(ifxtop::model::io::SecondaryView::default()).expect("JSON");
    names.extend(secondary.as_object().expect("an object").keys().cloned());
    assert!(names.len() > 40, "{names:?}");
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| !readme.contains(&format!("`{n}`")))
        .collect();
    assert!(missing.is_empty(), "docs/commands.md lacks {missing:?}");
}

/// `onstat -g pqs <sid>`: a session inside a statement shows its plan (the report's three-table
/// join as joins of scans), rows growing from one second to the next within the statement; a
/// session waiting for its client prints the title and column header with no rows.
#[test]
fn pqs_shows_the_plan_of_a_running_statement_and_none_for_an_idle_session() {
    let d = DemoInstance::new(1);
    let t = 40;
    let pqs = |sid: u64, t: u64| {
        let s = Source::OnstatGPqs(Sid(sid));
        let out = text(&d, &s, t);
        ifxtop::parsers::onstat_g_pqs::parse(&out).unwrap_or_else(|e| panic!("{sid}: {e}"))
    };
    let (mut idle, mut joins, mut grew) = (0, 0, 0);
    for sid in d.sids() {
        let now = pqs(sid, t);
        assert!(now.unparsed.is_empty(), "{sid}: {:?}", now.unparsed);
        if now.operators.is_empty() {
            idle += 1;
            continue;
        }
        assert!(now
            .operators
            .iter()
            .all(|o| o.sid == Sid(sid) && o.phase == "next"));
        if now.operators[0].opname == "hjoin" {
            joins += 1;
            assert_eq!(now.operators.len(), 5, "{:?}", now.operators);
        }
        let next = pqs(sid, t + 1);
        if let (Some(a), Some(b)) = (now.operators.last(), next.operators.last()) {
            if a.addr == b.addr && b.rows > a.rows {
                grew += 1;
            }
        }
    }
    assert!(idle > 0, "no idle session");
    assert!(joins > 0, "no report's join");
    assert!(grew > 0, "rows never grow");
}

/// `onstat -i` answers `g pqs <sid>` as the command does.
#[test]
fn pqs_inside_onstat_i() {
    let d = DemoInstance::new(1);
    let req = Request::CommandInput {
        argv: vec!["onstat".into(), "-i".into()],
        stdin: "g pqs 812\n".into(),
    };
    let out = d.respond(&req, secs(40)).expect("onstat -i").stdout;
    assert!(out.contains("Query Operators:"), "{out}");
    assert!(!out.contains("invalid option"), "{out}");
}

/// `onstat -g ses` (the list) names every session of `onstat -u`, each with the memory its own
/// `onstat -g ses <sid>` prints at the same moment (the two never disagree), and the memory
/// moves over minutes; `onstat -i` answers `g ses` as the command does.
#[test]
fn the_session_list_agrees_with_each_session() {
    let d = DemoInstance::new(1);
    let list_at = |t: u64| {
        let out = run(&d, &Source::OnstatGSesList, t);
        let l = parsers::onstat_g_ses::parse(&out.stdout).expect("the list parses");
        assert!(l.unparsed.is_empty(), "{:?}", l.unparsed);
        assert!(l.detail.is_none());
        l
    };
    let t = 300;
    let list = list_at(t);
    let u = parsers::onstat_u::parse(&text(&d, &Source::OnstatU, t)).expect("-u");
    let u_sids: BTreeSet<Sid> = u
        .threads
        .iter()
        .map(|th| th.sessid)
        .filter(|s| s.0 != 0)
        .collect();
    let list_sids: BTreeSet<Sid> = list.sessions.iter().map(|r| r.sid).collect();
    assert_eq!(list_sids, u_sids, "the list names the sessions of -u");
    // Newest first, as onstat prints it.
    assert!(list.sessions.windows(2).all(|w| w[0].sid > w[1].sid));
    let all = d.sids();
    for sid in [812, all[20], all[all.len() - 1]] {
        let one = parsers::onstat_g_ses::parse(&text(&d, &Source::OnstatGSes(Sid(sid)), t))
            .expect("-g ses <sid>");
        let own = one.sessions.first().expect("its row");
        let row = list
            .sessions
            .iter()
            .find(|r| r.sid == Sid(sid))
            .expect("in the list");
        assert_eq!(
            (row.total_memory, row.used_memory, row.threads),
            (own.total_memory, own.used_memory, own.threads),
            "sid {sid}"
        );
        assert!(row.used_memory > 0 && row.used_memory < row.total_memory);
    }
    let later = list_at(t + 120);
    let moved = list
        .sessions
        .iter()
        .zip(&later.sessions)
        .filter(|(a, b)| a.sid == b.sid && a.total_memory != b.total_memory)
        .count();
    assert!(moved > 0, "memory never moves");
    let req = Request::CommandInput {
        argv: vec!["onstat".into(), "-i".into()],
        stdin: "g ses\n".into(),
    };
    let out = d.respond(&req, secs(t)).expect("onstat -i").stdout;
    assert!(out.contains("#RSAM"), "{out}");
    assert!(!out.contains("invalid option"), "{out}");
}

/// A thread that started within the last second has used at most that second (one thread runs
/// on one VP at a time): when a churning slot's next session connects, its new thread starts
/// from nothing, never from the CPU seconds of the slot's last session (ifxtop takes a new
/// thread's seconds as all used since the last sample, so a carried sum read as up to ~100 %
/// of a core for a session that barely ran).
#[test]
fn a_new_sessions_thread_starts_with_no_cpu_seconds() {
    use ifxtop::parsers::onstat_g_cpu;
    let mut fresh = 0;
    for seed in 1..=3 {
        let d = DemoInstance::new(seed).with_sessions(300).messy();
        let mut prev: Option<BTreeMap<u64, f64>> = None;
        for t in 0..400 {
            let g = onstat_g_cpu::parse(&text(&d, &Source::OnstatGCpu, t)).expect("parses");
            let now: BTreeMap<u64, f64> = g.threads.iter().map(|th| (th.tid.0, th.cpu_s)).collect();
            if let Some(prev) = &prev {
                let max = prev.keys().max().copied().unwrap_or(0);
                for (tid, cpu) in now.range(max + 1..) {
                    fresh += 1;
                    assert!(
                        *cpu <= 1.0,
                        "seed {seed} t={t}: thread {tid}, new since t={}, shows {cpu} CPU seconds",
                        t - 1
                    );
                }
            }
            prev = Some(now);
        }
    }
    assert!(fresh > 20, "sessions connected: {fresh}");
}
