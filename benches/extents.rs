//! Benches of the extent map's budgets (DESIGN.md §6): `oncheck -pe` parsed and indexed at
//! 500 MB/s or more in no more than 1.5x the text's size, a chunk:page lookup under 200 ns, and
//! `ifxtop resolve` of 100,000 onstat -X lines against a 1,000,000-extent map in 0.3 s end to end.
//!
//! Full sizes only under `cargo bench` (`--bench` on the command line); `cargo test
//! --all-targets` runs each bench once on a small report.
//!
//! Measured here (2 shared cores): parse + index of the generated 85.8 MB, 1,054,670-extent
//! report ~108 ms (~750 MiB/s); map 22 MB on the heap (21 bytes/extent, text + map = 1.26x the
//! text); a lookup ~115 ns; resolve end to end (map build + 100,000 lines) ~180 ms, and the
//! `ifxtop resolve` binary reading the file from disk 0.23-0.25 s with 108 MB peak RSS.
//! The seed's chunkpg (tests/tools/chunkpg.pl, perl 5.36) on the same files, timed by hand:
//! 2.6 s to read the report, 2.9 s with 1,000 lines, 27.8 s with 100,000 lines (its linear scan
//! costs ~0.25 ms a line over this report's ~1,000 extents per chunk; it grows with the extents
//! per chunk, hence DESIGN.md's ~3 minutes for instances with fewer, fuller chunks).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ifxtop::commands::resolve::{resolve_lines, ResolveOptions};
use ifxtop::extents::ExtentMap;
use std::hint::black_box;
use std::time::Duration;

#[path = "../tests/tools/synth_oncheck_pe.rs"]
mod synth;

fn full_size() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn extents(c: &mut Criterion) {
    let full = full_size();
    let spec = if full {
        synth::Spec::million()
    } else {
        synth::Spec::small(1)
    };
    let s = synth::generate(&spec);
    let text_mb = s.text.len() as f64 / 1e6;

    // Memory: what the built map holds on the heap, next to the text it was built from.
    let map = match ExtentMap::from_oncheck_pe(&s.text) {
        Ok(m) => m,
        Err(e) => panic!("synthetic report does not parse: {e}"),
    };
    let heap = map.heap_bytes();
    println!(
        "extent map: {} extents, {} chunks, {} distinct descriptions; text {:.1} MB, map {:.1} MB \
         ({:.1} bytes/extent); text + map = {:.2}x the text",
        map.extent_count(),
        map.chunks().len(),
        map.objects().len(),
        text_mb,
        heap as f64 / 1e6,
        heap as f64 / map.extent_count().max(1) as f64,
        (s.text.len() + heap) as f64 / s.text.len() as f64
    );

    let mut g = c.benchmark_group("extents");
    if full {
        g.sample_size(10).measurement_time(Duration::from_secs(8));
    }
    g.throughput(Throughput::Bytes(s.text.len() as u64));
    g.bench_function(
        BenchmarkId::new("parse_index", format!("{text_mb:.0}MB")),
        |b| b.iter(|| ExtentMap::from_oncheck_pe(black_box(&s.text)).map(|m| m.extent_count())),
    );

    // Lookups of random pages inside random extents (2 KB base pages).
    let mut rng = synth::Rng::new(7);
    let probes: Vec<(u32, u64)> = (0..4096)
        .map(|_| {
            let ch = &s.chunks[rng.below(s.chunks.len() as u64) as usize];
            let e = &ch.extents[rng.below(ch.extents.len() as u64) as usize];
            (ch.number, synth::page_inside(&mut rng, ch, e, 2))
        })
        .collect();
    g.throughput(Throughput::Elements(probes.len() as u64));
    g.bench_function("lookup_4096", |b| {
        b.iter(|| {
            let mut hits = 0usize;
            for &(chunk, page) in &probes {
                if matches!(
                    map.lookup(black_box(chunk), black_box(page), 2),
                    ifxtop::extents::Lookup::Resolved(_)
                ) {
                    hits += 1;
                }
            }
            hits
        })
    });

    // `ifxtop resolve` end to end: build the map from text, resolve every line into a sink.
    let lines = if full { 100_000 } else { 1_000 };
    let input = synth::onstat_x_lines(&s, lines, 11);
    g.throughput(Throughput::Elements(lines as u64));
    g.bench_function(
        BenchmarkId::new("resolve_end_to_end", format!("{lines}_lines")),
        |b| {
            b.iter(|| {
                let map = ExtentMap::from_oncheck_pe(black_box(&s.text)).ok()?;
                resolve_lines(
                    &map,
                    &ResolveOptions::default(),
                    input.as_bytes(),
                    std::io::sink(),
                )
                .ok()
            })
        },
    );
    g.finish();
}

criterion_group!(benches, extents);
criterion_main!(benches);
