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

/// Asks both instances the same things (`requests` of each second) in the same order (the CPU
/// ledger of `onstat -g cpu` depends on what was asked before) at each of `seconds`, at
/// `moments` (ms) spread through each second (the messy instance's calls straddle its seconds
/// near `skew::SERVER_TICK`); returns how many answers were compared.
fn compare(
    kept: &DemoInstance,
    fresh: &DemoInstance,
    seconds: impl Iterator<Item = u64>,
    requests: impl Fn(&DemoInstance, u64) -> Vec<Request>,
    moments: &[u64],
) -> usize {
    let mut compared = 0;
    for s in seconds {
        let requests = requests(kept, s);
        for ms in moments {
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

/// Every source at second `t`, and the grouped call and the `onstat -i` of them all.
fn sources_and_calls(demo: &DemoInstance, t: u64) -> Vec<Request> {
    let sources = every_source(demo, t);
    let mut requests: Vec<Request> = sources.iter().map(Source::request).collect();
    requests.extend(calls(&sources));
    requests
}

/// Moments of a second: its start, around the messy instance's server tick, later on.
const SPREAD: [u64; 6] = [0, 45, 49, 50, 400, 990];

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
        let n = compare(
            &kept,
            &fresh,
            stretch.chain(back),
            sources_and_calls,
            &SPREAD,
        );
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
        compare(
            &kept,
            &fresh,
            seconds.into_iter(),
            sources_and_calls,
            &SPREAD,
        );
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

/// The seconds the sweep asks at: each phase's first two seconds, its middle and its last
/// second (where an incident's state turns), the calm tail, each checkpoint's request and the
/// second after it (a quick one's block), and a stretch of the second cycle.
fn incident_windows() -> Vec<u64> {
    use super::timeline::{CYCLE, TIMELINE};
    let mut at: Vec<u64> = TIMELINE
        .iter()
        .flat_map(|p| [p.start, p.start + 1, p.middle(), p.end - 1])
        .collect();
    at.extend([705, 712, CYCLE - 1]);
    at.extend(
        super::schedule::offsets()
            .into_iter()
            .flat_map(|o| [o, o + 1, o + 2]),
    );
    at.extend((CYCLE + 270..CYCLE + 290).step_by(4));
    at.sort_unstable();
    at.dedup();
    at
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
/// live screen sends it (the polled onstat sources due at `t` with the session screen's).
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

/// Moments of a second the sweep asks at (fewer than `SPREAD`: more seconds).
const SWEEP: [u64; 4] = [0, 49, 50, 990];

/// The instance kept a second at a time, its derived tables computed once a second, answers as
/// the instance computed afresh for every output and every table: seeds 1 to 3, tidy and
/// messy, through every incident's window.
#[test]
fn every_output_through_the_incidents_is_the_same_kept_or_fresh_at_300_sessions() {
    let seconds = incident_windows();
    for seed in 1..=3 {
        for messy in [false, true] {
            let kept = DemoInstance::build(seed, 300, messy);
            let fresh = DemoInstance::build(seed, 300, messy).without_world_cache();
            let n = compare(
                &kept,
                &fresh,
                seconds.iter().copied(),
                every_request,
                &SWEEP,
            );
            assert!(n > 20_000, "seed {seed} messy {messy}: {n}");
        }
    }
}

/// The same at 5,000 sessions (minutes at the tests' opt-level: `--ignored`).
#[test]
#[ignore]
fn every_output_through_the_incidents_is_the_same_kept_or_fresh_at_5000_sessions() {
    let seconds = incident_windows();
    for seed in 1..=3 {
        for messy in [false, true] {
            let kept = DemoInstance::build(seed, 5_000, messy);
            let fresh = DemoInstance::build(seed, 5_000, messy).without_world_cache();
            compare(
                &kept,
                &fresh,
                seconds.iter().copied(),
                every_request,
                &SWEEP,
            );
        }
    }
}

/// Writes a digest of every answer of the sweep (seeds 1 to 3, tidy and messy, 300 sessions,
/// the incidents' windows) to the file `DEMO_DIGESTS` names, one line an answer: run on two
/// versions of the demo, the files compare what they print.
/// `DEMO_DIGESTS=/tmp/d.txt cargo test --lib demo::cached::digests -- --ignored`
#[test]
#[ignore]
fn digests() {
    use std::fmt::Write as _;
    let Some(path) = std::env::var_os("DEMO_DIGESTS") else {
        return;
    };
    let mut out = String::new();
    let seconds = incident_windows();
    for seed in 1..=3 {
        for messy in [false, true] {
            let demo = DemoInstance::build(seed, 300, messy);
            for &s in &seconds {
                let requests = every_request(&demo, s);
                for ms in SWEEP {
                    let t = Duration::from_millis(s * 1000 + ms);
                    for r in &requests {
                        let answer = text(demo.respond(r, t));
                        let d = ring::digest::digest(&ring::digest::SHA256, answer.as_bytes());
                        let _ = write!(out, "{seed} {messy} {t:?} {} ", answer.len());
                        for b in d.as_ref() {
                            let _ = write!(out, "{b:02x}");
                        }
                        let _ = writeln!(out, " {:?}", r);
                    }
                }
            }
        }
    }
    std::fs::write(path, out).expect("the digests written");
}
