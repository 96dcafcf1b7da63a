//! Cost of the demo instance: generating each output for a 5,000-session instance (the size the
//! idle-cost budget of DESIGN.md §6 is measured at). `onstat -u` should take well under 10 ms.
//! Each output is generated at a moment of the incident that makes it largest.
//! `one_second_of_polling` is what the demo costs the live screen each second: every polled
//! source due at that second, averaged over successive seconds.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ifxtop::demo::timeline::{self, Incident};
use ifxtop::demo::DemoInstance;
use ifxtop::ids::Sid;
use ifxtop::source::Source;
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

fn one_second(c: &mut Criterion) {
    let demo = DemoInstance::new(1).with_sessions(5_000);
    let polled: Vec<(Source, u64)> = Source::polled()
        .into_iter()
        .map(|s| (s, s.period().as_secs().max(1)))
        .collect();
    let mut t = 0u64;
    c.bench_function("demo_5000_sessions/one_second_of_polling", |b| {
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
}

fn population(c: &mut Criterion) {
    c.bench_function("demo_build_5000_sessions", |b| {
        b.iter(|| DemoInstance::new(black_box(1)).with_sessions(5_000))
    });
}

criterion_group!(benches, outputs, one_second, population);
criterion_main!(benches);
