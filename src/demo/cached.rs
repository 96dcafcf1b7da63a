//! The instance kept a second at a time (`worlds.rs`) answers what the instance computed
//! afresh for every output answers, byte for byte: every source, at every second of a stretch
//! of the timeline, tidy and messy (whose calls print their parts up to a second apart), and
//! the calls the collectors make (`onstat -u -X -k ...`, a tick's `onstat -i`). And it computes
//! the instance once a second where the polling used to compute it for each output.

use super::DemoInstance;
use crate::source::{Request, Source};
use std::time::Duration;

/// Every source: those with no argument, and those with one for a few sessions present at
/// `t` (the lock chain's among them), NUMA nodes and processes.
fn every_source(demo: &DemoInstance, t: u64) -> Vec<Source> {
    let mut all = Source::candidates_for_tests(None);
    let sids = demo.sids_at(t);
    let mut args: Vec<String> = ["812", "813", "0", "1", "20210"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(sids.iter().step_by(97).take(3).map(u64::to_string));
    for a in &args {
        all.extend(Source::candidates_for_tests(Some(a)));
    }
    all.sort_by_key(Source::label);
    all.dedup_by_key(|s| s.label());
    all
}

/// The calls the collectors make of several options: the grouped `onstat`, and a tick's
/// `onstat -i` with every onstat source in it.
fn calls(sources: &[Source]) -> Vec<Request> {
    let grouped = Request::Command(
        [
            "onstat", "-u", "-X", "-k", "-d", "-D", "-p", "-l", "-s", "-x",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    );
    let mut lines: Vec<String> = sources
        .iter()
        .filter_map(|s| match s.request() {
            Request::Command(argv) if argv.first().is_some_and(|p| p == "onstat") => {
                crate::parsers::interactive::option_line(
                    &argv[1..].iter().map(String::as_str).collect::<Vec<_>>(),
                )
            }
            _ => None,
        })
        .collect();
    lines.push(String::new());
    let interactive = Request::CommandInput {
        argv: vec!["onstat".into(), "-i".into()],
        stdin: lines.join("\n"),
    };
    vec![grouped, interactive]
}

fn text(r: Result<crate::source::Output, crate::error::SourceError>) -> String {
    match r {
        Ok(o) => format!("{:?}\n{}\n{}", o.exit, o.stdout, o.stderr),
        Err(e) => format!("error: {e}"),
    }
}

/// Asks both instances the same things in the same order (the CPU ledger of `onstat -g cpu`
/// depends on what was asked before) at each of `seconds`, at moments spread through each
/// second (the messy instance's calls straddle its seconds near `skew::SERVER_TICK`); returns
/// how many answers were compared.
fn compare(kept: &DemoInstance, fresh: &DemoInstance, seconds: impl Iterator<Item = u64>) -> usize {
    let mut compared = 0;
    for s in seconds {
        let sources = every_source(kept, s);
        let mut requests: Vec<Request> = sources.iter().map(Source::request).collect();
        requests.extend(calls(&sources));
        for ms in [0, 45, 49, 50, 400, 990] {
            let t = Duration::from_millis(s * 1000 + ms);
            for r in &requests {
                let (a, b) = (text(kept.respond(r, t)), text(fresh.respond(r, t)));
                assert!(a == b, "{r:?} at {t:?} differs:\n{a}\n---\n{b}");
                compared += 1;
            }
        }
    }
    compared
}

#[test]
fn kept_moments_answer_as_fresh_ones_at_300_sessions() {
    for messy in [false, true] {
        // Two instances (a clone would share the kept moments).
        let kept = DemoInstance::build(1, 300, messy);
        let fresh = DemoInstance::build(1, 300, messy).without_world_cache();
        // A stretch through several incidents, then back and forth (a seek: kept seconds are
        // not taken for others).
        let stretch = (100..400).step_by(3);
        let back = [399, 12, 13, 12, 700, 5];
        let n = compare(&kept, &fresh, stretch.chain(back));
        assert!(n > 10_000, "{n}");
        assert!(kept.worlds_computed() < fresh.worlds_computed() / 5);
    }
}

#[test]
fn kept_moments_answer_as_fresh_ones_at_5000_sessions() {
    for messy in [false, true] {
        let kept = DemoInstance::build(3, 5_000, messy);
        let fresh = DemoInstance::build(3, 5_000, messy).without_world_cache();
        // A sample: the lock chain, the send-Q fill, the checkpoint.
        let at = |i| super::timeline::first(i).map_or(0, |p| p.middle());
        use super::timeline::Incident;
        let seconds = [
            at(Incident::LockChain),
            at(Incident::SendQFill),
            at(Incident::CheckpointRequested),
        ];
        compare(&kept, &fresh, seconds.into_iter());
    }
}

/// What the live screen asks each second: every polled source due then, in one call per
/// second, as `benches/demo.rs` polls.
fn poll(demo: &DemoInstance, seconds: std::ops::Range<u64>) {
    let polled: Vec<(Source, u64)> = Source::polled()
        .into_iter()
        .map(|s| (s, s.period().as_secs().max(1)))
        .collect();
    for t in seconds {
        for (s, every) in &polled {
            if t % every == 0 {
                let _ = demo.respond(&s.request(), Duration::from_secs(t));
            }
        }
    }
}

#[test]
fn polling_computes_the_instance_once_a_second() {
    for messy in [false, true] {
        let demo = DemoInstance::build(1, 300, messy);
        let fresh = DemoInstance::build(1, 300, messy).without_world_cache();
        poll(&demo, 1..121);
        poll(&fresh, 1..121);
        // `onstat -g cpu`'s walk over the 10 seconds since its last ask included; the messy
        // instance's calls start on the runner's whole seconds, in the server's second.
        assert_eq!(demo.worlds_computed(), 120, "messy {messy}");
        assert!(
            fresh.worlds_computed() > 5 * 120,
            "{}",
            fresh.worlds_computed()
        );
    }
}

/// A tick's `onstat -i` builds the threads of its second once for all the options that print
/// them (`-u`, `-g con`, `-g ath`, `-x`, `-g glo`), and a grouped call once for its parts: as
/// many times as asked alone would build them once each.
#[test]
fn one_call_builds_its_threads_once() {
    use super::moment::THREADS_BUILT;
    let demo = DemoInstance::build(1, 300, false);
    let built = |r: &Request| {
        let before = THREADS_BUILT.with(std::cell::Cell::get);
        demo.respond(r, Duration::from_secs(280)).expect("answered");
        THREADS_BUILT.with(std::cell::Cell::get) - before
    };
    let tick = Request::CommandInput {
        argv: vec!["onstat".into(), "-i".into()],
        stdin: "u\ng con\ng ath\nx\ng glo\n".into(),
    };
    assert_eq!(built(&tick), 1);
    let grouped = Request::Command(["onstat", "-u", "-k", "-x"].map(String::from).to_vec());
    assert_eq!(built(&grouped), 1);
    let alone = Request::Command(["onstat", "-g", "con"].map(String::from).to_vec());
    assert_eq!(built(&alone), 1);
}

/// What a collector asks of a session: its `-g ses`, `-g sql` and `-g pqs`, for sessions
/// present at `t`: the lock chain's, a spread of the others, and those running parallel
/// queries.
fn session_sources(demo: &DemoInstance, t: u64) -> Vec<Source> {
    let present = demo.sids_at(t);
    let mut sids: Vec<u64> = vec![812, 813, 814, 815];
    sids.extend(present.iter().step_by(41).take(8));
    let pdq = demo
        .pop
        .sessions
        .iter()
        .filter(|s| s.pdq)
        .map(|s| demo.pop.tenant(s.idx, t))
        .filter(|tn| tn.present)
        .map(|tn| tn.sid);
    sids.extend(pdq.take(4));
    sids.into_iter()
        .flat_map(|sid| {
            let sid = crate::ids::Sid(sid);
            [
                Source::OnstatGSes(sid),
                Source::OnstatGSql(sid),
                Source::OnstatGPqs(sid),
            ]
        })
        .collect()
}

/// Every request at second `t`: every source (files, commands, the per-session ones), the
/// grouped `onstat` and an `onstat -i` with every option, and the tick's `onstat -i` as the
/// live screen sends it (the polled onstat sources due at `t` with a session screen's).
fn every_request(demo: &DemoInstance, t: u64) -> Vec<Request> {
    let mut sources = every_source(demo, t);
    sources.extend(session_sources(demo, t));
    let mut requests: Vec<Request> = sources.iter().map(Source::request).collect();
    requests.extend(calls(&sources));
    let mut tick: Vec<Source> = Source::polled()
        .into_iter()
        .filter(|s| t % s.period().as_secs().max(1) == 0)
        .collect();
    tick.extend(session_sources(demo, t).into_iter().take(3));
    requests.extend(calls(&tick).into_iter().skip(1));
    requests
}

/// A digest of every answer the demo gives through a whole cycle of its timeline, to compare
/// two versions of the demo's printing (they must print the same bytes): seeds 1 to 3, tidy
/// and messy, 300 and 5,000 sessions, every second of the cycle, every request of
/// `every_request` asked at moments spread through the second (fewer at 5,000 sessions, for
/// time). Writes one line a (seed, sessions, messy, second): the SHA-256 of that second's
/// answers in order, and how many; the last line the total. Minutes even in a release build:
///
/// `DEMO_DIGESTS=/tmp/d.txt cargo test --release --lib demo::cached::digests -- --ignored`
///
/// `DEMO_DIGESTS_SESSIONS=300` limits it to one size; `DEMO_DIGESTS_STRIDE=N` asks at every
/// `N`th second of the 5,000-session instance only (the whole cycle at opt-level 1 is most of
/// an hour); with `DEMO_DIGESTS_STRIDE_ALL=1` the 300-session instance too; with
/// `DEMO_DIGESTS_SPREAD=1` every instance at `spread_seconds` instead. The last line counts the
/// answers and their bytes.
#[test]
#[ignore]
fn digests() {
    use std::fmt::Write as _;
    let Some(path) = std::env::var_os("DEMO_DIGESTS") else {
        return;
    };
    let only: Option<usize> = std::env::var("DEMO_DIGESTS_SESSIONS")
        .ok()
        .and_then(|v| v.parse().ok());
    let stride: u64 = std::env::var("DEMO_DIGESTS_STRIDE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let all_strided = std::env::var_os("DEMO_DIGESTS_STRIDE_ALL").is_some();
    let spread = std::env::var_os("DEMO_DIGESTS_SPREAD").is_some();
    let mut out = String::new();
    let mut total = 0usize;
    let mut bytes = 0usize;
    for sessions in [300, 5_000] {
        if only.is_some_and(|n| n != sessions) {
            continue;
        }
        // The messy instance's calls straddle its seconds near 50 ms (`skew::SERVER_TICK`).
        let moments: &[u64] = if sessions == 300 {
            &[0, 49, 50, 990]
        } else {
            &[0, 50]
        };
        for seed in 1..=3 {
            for messy in [false, true] {
                let demo = DemoInstance::build(seed, sessions, messy);
                let every = if sessions == 300 && !all_strided {
                    1
                } else {
                    stride
                };
                let seconds: Vec<u64> = if spread {
                    spread_seconds()
                } else {
                    (0..super::timeline::CYCLE)
                        .step_by(every as usize)
                        .collect()
                };
                for s in seconds {
                    let requests = every_request(&demo, s);
                    let mut d = ring::digest::Context::new(&ring::digest::SHA256);
                    let mut n = 0usize;
                    for &ms in moments {
                        let t = Duration::from_millis(s * 1000 + ms);
                        for r in &requests {
                            let answer = text(demo.respond(r, t));
                            bytes += answer.len();
                            d.update(answer.as_bytes());
                            d.update(b"\0");
                            n += 1;
                        }
                    }
                    total += n;
                    let _ = write!(out, "{sessions} {seed} {messy} {s} {n} ");
                    for b in d.finish().as_ref() {
                        let _ = write!(out, "{b:02x}");
                    }
                    out.push('\n');
                }
            }
        }
    }
    let _ = writeln!(out, "answers {total} bytes {bytes}");
    std::fs::write(path, out).expect("the digests written");
}

/// The seconds `DEMO_DIGESTS_SPREAD=1` asks at, in this order: 40 spread over the cycle, 40
/// in a row through the lock chain (what a memo of the second before serves), then a seek
/// backwards and forwards, and a second of the next cycle.
fn spread_seconds() -> Vec<u64> {
    let cycle = super::timeline::CYCLE;
    let mut seconds: Vec<u64> = (0..40).map(|k| k * cycle / 40 + k % 7).collect();
    seconds.extend(270..310);
    seconds.extend([
        309,
        150,
        151,
        152,
        640,
        641,
        12,
        290,
        291,
        cycle + 291,
        cycle + 292,
    ]);
    seconds
}

/// A tick's `onstat -i` is sized from the last answers to its options: the second time the
/// same options are asked, the answer is written without growing (no copy of what was
/// written, no fresh pages), though the writers of its parts once reserved their own room.
#[test]
fn a_tick_call_is_written_without_growing() {
    let demo = DemoInstance::build(1, 5_000, false);
    let stdin = "u\ng con\ng ath\nx\nk\ng ntt\ng ses\n";
    let first = demo.interactive(stdin, Duration::from_secs(280));
    let room = super::lock(&demo.answer_sizes).room_for(&stdin.lines().collect::<Vec<_>>());
    let second = demo.interactive(stdin, Duration::from_secs(281));
    assert_eq!(second.capacity(), room, "{} bytes", second.len());
    assert!(second.len() <= room && first.len() <= room);
}

/// A call's thread rows are written into the last call's memory, and are the rows computed
/// afresh (none of the last call's left behind), at any size of the instance.
#[test]
fn thread_rows_reuse_the_last_calls_memory_and_equal_fresh_ones() {
    use super::moment::World;
    for sessions in [300, 40, 5_000] {
        let demo = DemoInstance::build(2, sessions, true);
        let mut last: Option<*const super::moment::Thread> = None;
        for t in [278, 279, 100, 640] {
            let w = demo.world(t);
            let rows = format!("{:?}", w.threads());
            let fresh = World::at(&demo.pop, &demo.counters, t);
            assert_eq!(rows, format!("{:?}", fresh.threads()), "{sessions} at {t}");
            if let Some(p) = last.filter(|_| sessions == 5_000) {
                assert_eq!(w.threads().as_ptr(), p);
            }
            last = Some(w.threads().as_ptr());
        }
    }
}

/// The tenants a moment reads are every slot's `Population::tenant` at its second, shared
/// across seconds only where no slot churns: tidy and messy, small and large.
#[test]
fn tenants_at_a_second_are_each_slots() {
    for (sessions, messy) in [(300, false), (300, true), (5_000, false), (5_000, true)] {
        let demo = DemoInstance::build(1, sessions, messy);
        for t in [0, 1, 95, 278, 719, 5_000] {
            let each: Vec<_> = (0..sessions).map(|i| demo.pop.tenant(i, t)).collect();
            assert_eq!(
                &*demo.pop.tenants_at(t),
                each.as_slice(),
                "{sessions} {messy} {t}"
            );
        }
    }
}

/// A session's slot found by its sid is the first slot whose tenant has it, as a walk over
/// every slot finds it: for every sid present, the ones that left and some never given, tidy
/// and messy, at seconds where slots churn.
#[test]
fn a_sids_slot_is_the_walks() {
    for (sessions, messy) in [(300, false), (300, true), (5_000, true)] {
        let demo = DemoInstance::build(2, sessions, messy);
        let mut asked: Vec<u64> = (0..40).collect();
        for t in [0, 31, 277, 278, 700, 1_500] {
            asked.extend(demo.sids_at(t));
            asked.extend(demo.sids_at(t).iter().map(|s| s + 1));
        }
        asked.extend(demo.sids());
        for t in [0, 31, 277, 278, 700, 1_500] {
            let w = demo.world(t);
            for &sid in &asked {
                let walk = w.tenants.iter().position(|tn| tn.present && tn.sid == sid);
                assert_eq!(w.slot_of_sid(sid), walk, "{sessions} {messy} {t} {sid}");
            }
        }
    }
}
