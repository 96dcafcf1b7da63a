//! Cost of the demo instance: generating each output for a 5,000-session instance (the size the
//! idle-cost budget of DESIGN.md §6 is measured at). `onstat -u` should take well under 10 ms.
//! Each output is generated at a moment of the incident that makes it largest.
//! `one_second_of_polling` is what the demo costs the live screen each second: every polled
//! source due at that second, averaged over successive seconds, the instance at each second
//! computed once for all its outputs beside computed afresh for each. `lmx_in_the_call` is what
//! `onstat -g lmx` adds to a tick's `onstat -i` while mutex waits are seen, measured beside the
//! same call without it: the demo answering stands in for the server's side (its time and the
//! bytes), the split and parse for ifxtop's.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ifxtop::demo::timeline::{self, Incident};
use ifxtop::demo::DemoInstance;
use ifxtop::ids::Sid;
use ifxtop::source::{Request, Source};
use std::hint::black_box;
use std::time::Duration;

fn at(incident: Incident) -> Duration {
    Duration::from_secs(timeline::first(incident).map_or(0, |p| p.middle()))
}

fn outputs(c: &mut Criterion) {
    let demo = DemoInstance::new(1).with_sessions(5_000);
    let mut g = c.benchmark_group("demo_5000_sessions");
    let cases = [
        (Source::OnstatU, Incident::CheckpointRequested),
        (Source::OnstatGCon, Incident::Calm),
        (Source::OnstatX, Incident::InsertHotSpot),
        (Source::OnstatGAth, Incident::CheckpointRequested),
        (Source::OnstatGNtt, Incident::Calm),
        (Source::OnstatK, Incident::LockChain),
        (Source::OnstatGSes(Sid(812)), Incident::LockChain),
        (Source::OnstatGSql(Sid(812)), Incident::LockChain),
        (Source::OncheckPe, Incident::Calm),
        (Source::Netstat, Incident::SendQFill),
        (Source::ProcNetTcp, Incident::SendQFill),
        (Source::ProcNetTcp6, Incident::SendQFill),
        (Source::NodeMeminfo(0), Incident::CheckpointRequested),
        (Source::Vmstat, Incident::CheckpointRequested),
        (Source::NumaMaps(20210), Incident::Calm),
        (Source::Systabnames, Incident::Calm),
    ];
    for (source, incident) in cases {
        let req = source.request();
        let t = at(incident);
        let bytes = demo.respond(&req, t).map_or(0, |o| o.stdout.len());
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_with_input(
            BenchmarkId::from_parameter(source.label()),
            &req,
            |b, req| b.iter(|| demo.respond(black_box(req), black_box(t))),
        );
    }
    g.finish();
}

/// Every polled source due at second `t` asked as the collectors ask (the onstat options in
/// one `onstat -i`, the files and commands one by one): the bytes answered.
fn poll_second(demo: &DemoInstance, polled: &[(Source, u64)], t: u64) -> usize {
    let due = polled.iter().filter(|(_, every)| t % every == 0);
    let mut lines = Vec::new();
    let mut bytes = 0;
    for (s, _) in due {
        match s.request() {
            Request::Command(argv) if argv[0] == "onstat" => {
                lines.extend(ifxtop::parsers::interactive::option_line(
                    &argv[1..].iter().map(String::as_str).collect::<Vec<_>>(),
                ))
            }
            r => {
                let out = demo.respond(&r, Duration::from_secs(t));
                bytes += out.map_or(0, |o| o.stdout.len());
            }
        }
    }
    lines.push(String::new());
    let call = Request::CommandInput {
        argv: vec!["onstat".into(), "-i".into()],
        stdin: lines.join("\n"),
    };
    bytes
        + demo
            .respond(&call, Duration::from_secs(t))
            .map_or(0, |o| o.stdout.len())
}

/// What the demo costs the live screen each second, its instance at the second computed once
/// and shared by the second's outputs (`kept`) beside computed afresh for each output, as it
/// was before (`fresh`): each iteration is the next second, every polled source due then,
/// asked one by one (`one_source_a_call`) or as the collectors ask (`tick_call`: the onstat
/// options in one `onstat -i`).
fn one_second(c: &mut Criterion) {
    let polled: Vec<(Source, u64)> = Source::polled()
        .into_iter()
        .map(|s| (s, s.period().as_secs().max(1)))
        .collect();
    let mut g = c.benchmark_group("demo_5000_sessions/one_second_of_polling");
    g.sample_size(20);
    for (name, demo) in [
        ("kept", DemoInstance::new(1).with_sessions(5_000)),
        (
            "fresh",
            DemoInstance::new(1)
                .with_sessions(5_000)
                .without_world_cache(),
        ),
    ] {
        let mut t = 0u64;
        g.bench_function(format!("one_source_a_call/{name}"), |b| {
            b.iter(|| {
                t += 1;
                let mut bytes = 0;
                for (s, every) in &polled {
                    if t % every == 0 {
                        let out = demo.respond(&s.request(), Duration::from_secs(t));
                        bytes += out.map_or(0, |o| o.stdout.len());
                    }
                }
                black_box(bytes)
            })
        });
        let before = demo.worlds_computed();
        let mut t = 0u64;
        let mut seconds = 0u64;
        g.bench_function(format!("tick_call/{name}"), |b| {
            b.iter(|| {
                t += 1;
                seconds += 1;
                black_box(poll_second(&demo, &polled, t))
            })
        });
        eprintln!(
            "tick_call/{name}: {:.2} instances computed a second",
            (demo.worlds_computed() - before) as f64 / seconds.max(1) as f64
        );
    }
    g.finish();
}

fn population(c: &mut Criterion) {
    c.bench_function("demo_build_5000_sessions", |b| {
        b.iter(|| DemoInstance::new(black_box(1)).with_sessions(5_000))
    });
}

/// A tick's `onstat -i` at 5,000 sessions during the mutex contention (the most mutexes held and
/// waited for), with and without `-g lmx`: the server's side of the call (the demo answering
/// it, and the bytes it prints) and ifxtop's (cutting the answer at the prompts and parsing the
/// `-g lmx` part).
fn lmx_in_the_call(c: &mut Criterion) {
    let demo = DemoInstance::new(1).with_sessions(5_000);
    let t = at(Incident::MutexContention);
    let tick = [
        Source::OnstatU,
        Source::OnstatGCon,
        Source::OnstatX,
        Source::OnstatK,
    ];
    let lines = |with_lmx: bool| -> String {
        let mut v: Vec<String> = tick
            .iter()
            .chain(with_lmx.then_some(&Source::OnstatGLmx))
            .filter_map(|s| match s.request() {
                Request::Command(argv) => ifxtop::parsers::interactive::option_line(
                    &argv[1..].iter().map(String::as_str).collect::<Vec<_>>(),
                ),
                _ => None,
            })
            .collect();
        v.push(String::new());
        v.join("\n")
    };
    let mut g = c.benchmark_group("lmx_in_the_call_5000_sessions");
    for (name, with_lmx) in [("without_lmx", false), ("with_lmx", true)] {
        let request = Request::CommandInput {
            argv: vec!["onstat".into(), "-i".into()],
            stdin: lines(with_lmx),
        };
        let answer = demo.respond(&request, t).expect("onstat -i").stdout;
        let parts = tick.len() + usize::from(with_lmx);
        g.throughput(Throughput::Bytes(answer.len() as u64));
        g.bench_function(format!("server_answers_{name}"), |b| {
            b.iter(|| demo.respond(black_box(&request), t))
        });
        g.bench_function(format!("ifxtop_splits_{name}"), |b| {
            b.iter(|| ifxtop::parsers::interactive::split(black_box(&answer), parts))
        });
        if with_lmx {
            let cut = ifxtop::parsers::interactive::split(&answer, parts).expect("splits");
            let lmx = cut.last().expect("the -g lmx part").to_string();
            g.throughput(Throughput::Bytes(lmx.len() as u64));
            g.bench_function("ifxtop_parses_the_lmx_part", |b| {
                b.iter(|| ifxtop::parsers::onstat_g_lmx::parse(black_box(&lmx)))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, outputs, one_second, population, lmx_in_the_call);
criterion_main!(benches);
