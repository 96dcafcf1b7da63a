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
