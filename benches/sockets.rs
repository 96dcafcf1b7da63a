//! The sockets' path per second at 5,000 sessions (DESIGN.md §6: ifxtop's own work under 0.5 %
//! of one core): `/proc/net/tcp` and `/proc/net/tcp6` read through their line memos as the
//! collector reads them, applied to the store (the Send-Q history), and the snapshot's socket
//! rows built and joined to their sessions (`onstat -g ntt`, read every 10 s), from the demo's
//! timeline. The snapshot is of those sources alone, so little else is built with it.

use criterion::{criterion_group, criterion_main, Criterion};
use ifxtop::collect::sample::Update;
use ifxtop::demo::DemoInstance;
use ifxtop::model::parts::Parts;
use ifxtop::model::snapshot::{self, Snapshot};
use ifxtop::parsers::memo::LineMemo;
use ifxtop::source::{Output, Source};
use ifxtop::store::{Store, StoreSettings};
use std::sync::Arc;
use std::time::Duration;

/// What the sockets path holds from one second to the next.
struct Path {
    store: Store,
    tcp: LineMemo,
    tcp6: LineMemo,
    parts: Parts,
}

impl Path {
    /// One second: its outputs parsed and applied, one snapshot built and handed back.
    fn second(&mut self, t: u64, outs: &[(Source, Output)]) -> usize {
        for (source, out) in outs {
            let memo = match source {
                Source::ProcNetTcp => Some(&mut self.tcp),
                Source::ProcNetTcp6 => Some(&mut self.tcp6),
                _ => None,
            };
            let result = match memo {
                Some(m) => source.parse_text_memo(out.exit, &out.stdout, &out.stderr, m),
                None => source.parse(out.clone()),
            };
            assert!(result.is_ok(), "{}: {:?}", source.label(), result.err());
            self.store.apply(Update {
                source: *source,
                t: Duration::from_secs(t),
                took: Duration::ZERO,
                result,
                how: Default::default(),
            });
        }
        let snap = snapshot::build_from(
            &self.store,
            Duration::from_secs(t),
            None,
            &[],
            None,
            &mut self.parts,
        );
        let rows = snap.sockets.len();
        Snapshot::recycle(Arc::new(snap), &mut self.parts);
        rows
    }
}

fn sockets(c: &mut Criterion) {
    ifxtop::memory::tune();
    // `cargo test --all-targets` runs this once without `--bench`: keep that cheap.
    let full = std::env::args().any(|a| a == "--bench");
    let sessions = if full { 5_000 } else { 200 };
    let demo = DemoInstance::new(1).with_sessions(sessions);
    // The socket tables every second (tcp6 first, as it joins the tcp sample that follows),
    // `onstat -g ntt` every 10 s.
    let outputs_at = |t: u64| -> Vec<(Source, Output)> {
        [Source::OnstatGNtt, Source::ProcNetTcp6, Source::ProcNetTcp]
            .into_iter()
            .filter(|s| *s != Source::OnstatGNtt || t % 10 == 0)
            .map(|s| {
                let out = demo
                    .respond(&s.request(), Duration::from_secs(t))
                    .expect("the demo answers the socket tables");
                (s, out)
            })
            .collect()
    };
    let settings = StoreSettings {
        ports: vec![ifxtop::demo::LISTENER_PORT],
        ..StoreSettings::default()
    };
    let mut path = Path {
        store: Store::new(settings),
        tcp: LineMemo::default(),
        tcp6: LineMemo::default(),
        parts: Parts::default(),
    };
    // A minute of history first (the Send-Q windows full), from 90 s into the demo's timeline:
    // client waits with a filling Send-Q.
    for t in 90..150 {
        path.second(t, &outputs_at(t));
    }
    let rows = path.second(150, &outputs_at(150));
    assert!(rows >= sessions / 2, "{rows} socket rows");
    let mut next = 151;
    let mut g = c.benchmark_group("sockets");
    g.bench_function("second", |b| {
        b.iter_batched(
            || {
                next += 1;
                (next - 1, outputs_at(next - 1))
            },
            |(t, outs)| path.second(t, &outs),
            criterion::BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, sockets);
criterion_main!(benches);
