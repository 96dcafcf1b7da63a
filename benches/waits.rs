//! The waits' share of a second at 5,000 sessions (DESIGN.md §6: ifxtop's own work under 0.5 %
//! of a core): the wait tracker taking each `onstat -u` (since when each thread waits, each
//! session's recent states, the threads' rates), and the snapshot built from a store that holds
//! a second (the waiters joined to what they wait on, their chains and verdicts, the sessions),
//! its rows let go into the next build's room as the screen does.

use criterion::{criterion_group, criterion_main, Criterion};
use ifxtop::collect::sample::Update;
use ifxtop::demo::DemoInstance;
use ifxtop::model::snapshot;
use ifxtop::source::Source;
use ifxtop::store::{Store, StoreSettings};
use std::time::Duration;

/// What a second of the waits part reads.
const SOURCES: [Source; 13] = [
    Source::OnstatU,
    Source::OnstatGCon,
    Source::OnstatX,
    Source::OnstatGAth,
    Source::OnstatGNtt,
    Source::OnstatK,
    Source::ProcNetTcp6,
    Source::ProcNetTcp,
    Source::OnstatS,
    Source::OnstatXTxn,
    Source::OnstatGRea,
    Source::OnstatGLmx,
    Source::OnstatGWmx,
];

fn update(demo: &DemoInstance, source: Source, t: u64) -> Update {
    let out = demo
        .respond(&source.request(), Duration::from_secs(t))
        .expect("the demo answers every live source");
    let result = source.parse(out);
    assert!(result.is_ok(), "{}: {:?}", source.label(), result.err());
    Update {
        source,
        t: Duration::from_secs(t),
        took: Duration::ZERO,
        result,
        how: Default::default(),
    }
}

fn waits(c: &mut Criterion) {
    ifxtop::memory::tune();
    // `cargo test --all-targets` runs this once without `--bench`: keep that cheap.
    let full = std::env::args().any(|a| a == "--bench");
    let sessions = if full { 5_000 } else { 200 };
    let demo = DemoInstance::new(1).with_sessions(sessions);
    let mut store = Store::new(StoreSettings {
        ports: vec![ifxtop::demo::LISTENER_PORT],
        ..StoreSettings::default()
    });
    // A minute of history first, so the tracker holds what it holds live.
    let start = 60;
    for t in 1..=start {
        for s in SOURCES {
            store.apply(update(&demo, s, t));
        }
    }
    let next: Vec<Update> = (start + 1..=start + 10)
        .map(|t| update(&demo, Source::OnstatU, t))
        .collect();

    let mut g = c.benchmark_group(format!("waits_{sessions}_sessions"));
    g.sample_size(30);
    // Ten seconds of onstat -u taken by the store (parsed beforehand): the tracker and the rates.
    g.bench_function("track_ten_seconds", |b| {
        b.iter_batched(
            || (store.clone(), next.clone()),
            |(mut st, next)| {
                for u in next {
                    st.apply(u);
                }
                st
            },
            criterion::BatchSize::LargeInput,
        )
    });
    // One second's snapshot from the store, let go into the next build's room.
    g.bench_function("build_one_second_recycled", |b| {
        let at = Duration::from_secs(start);
        let mut parts = snapshot::Parts::default();
        b.iter(|| {
            let snap = snapshot::build_from(&store, at, Some("ol_demo"), &[], None, &mut parts);
            snapshot::Snapshot::recycle(std::sync::Arc::new(snap), &mut parts);
        })
    });
    g.finish();
}

criterion_group!(benches, waits);
criterion_main!(benches);
