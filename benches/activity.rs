//! Budgets of database time (docs/activity.md) at 5,000 sessions:
//! - sampling and aggregation, and the Activity pane's report, at most 3 ms more per second of
//!   the cycle (`sample_5000`: one sample added and the chart taken, every second;
//!   `pane_5min_by_class_5000`: the pane's table over its default window, built every 5 s);
//! - one hour of samples within the whole TUI's 50 MB (printed: the history's heap after an
//!   hour of 5,000-session samples, each from a different demo moment);
//! - `ifxtop ash` over a one-hour recording of 5,000 sessions in under 5 s (`ash_track`: an
//!   hour's zstd recording read through its database-time track, as `ifxtop ash --replay` reads
//!   it; `ash_replay`: the outputs parsed again, as for a recording without a track, over a
//!   recorded stretch of the demo: a second of recording costs the time per `onstat -u`
//!   printed, times 3,600 for the hour).

use criterion::{criterion_group, criterion_main, Criterion};
use ifxtop::collect::sample::Update;
use ifxtop::demo::DemoInstance;
use ifxtop::model::activity::{actives, Activity, Key, Query};
use ifxtop::model::snapshot::{self, Snapshot};
use ifxtop::source::Source;
use ifxtop::store::{Store, StoreSettings};
use std::time::Duration;

const SOURCES: [Source; 10] = [
    Source::OnstatU,
    Source::OnstatGCon,
    Source::OnstatX,
    Source::OnstatK,
    Source::OnstatGNtt,
    Source::OnstatGRea,
    Source::OnstatGLmx,
    Source::OnstatGAth,
    // The sockets tell an idle client wait (nothing queued) from a slow client.
    Source::ProcNetTcp6,
    Source::ProcNetTcp,
];

/// Snapshots of `n` consecutive demo seconds from `from`, built as the screen builds them.
fn snapshots(sessions: usize, from: u64, n: u64) -> Vec<Snapshot> {
    let demo = DemoInstance::new(1).with_sessions(sessions);
    let mut store = Store::new(StoreSettings {
        ports: vec![ifxtop::demo::LISTENER_PORT],
        ..StoreSettings::default()
    });
    let mut out = Vec::new();
    for t in from - 20..from + n {
        for s in SOURCES {
            let o = demo
                .respond(&s.request(), Duration::from_secs(t))
                .expect("the demo answers");
            store.apply(Update {
                source: s,
                t: Duration::from_secs(t),
                took: Duration::ZERO,
                result: s.parse(o),
                how: Default::default(),
            });
        }
        if t >= from {
            out.push(snapshot::build(&store, Duration::from_secs(t), None, &[]));
        }
    }
    out
}

fn sample_all(a: &mut Activity, snaps: &[Snapshot], seconds: u64) {
    for t in 0..seconds {
        let i = (t as usize) % snaps.len();
        a.add(t as f64, &snaps[i].actives());
    }
}

fn activity(c: &mut Criterion) {
    ifxtop::memory::tune();
    // `cargo test --all-targets` runs this once without `--bench`: keep that cheap.
    let full = std::env::args().any(|a| a == "--bench");
    let (sessions, moments) = if full { (5_000, 60) } else { (200, 5) };
    // The lock chain and the stretch before it: running sessions, lock, buffer, mutex waits.
    let snaps = snapshots(sessions, 280, moments);
    let mut hour = Activity::new();
    sample_all(&mut hour, &snaps, 3_600);
    let active: usize = snaps
        .iter()
        .map(|s| actives(&s.sessions, &s.waiters, &Default::default()).len())
        .sum::<usize>()
        / snaps.len();
    eprintln!(
        "activity: {sessions} sessions, {active} active a sample on average; after an hour: {} rows, {:.1} MB on the heap, holding the last {:.0} s",
        hour.rows(),
        hour.heap_bytes() as f64 / 1e6,
        3_599.0 - hour.covered_from().unwrap_or(3_599.0)
    );
    assert!(
        hour.heap_bytes() < 20_000_000,
        "an hour of activity holds {} bytes",
        hour.heap_bytes()
    );
    let mut g = c.benchmark_group("activity");
    g.sample_size(20);
    // One second of the live loop's extra work: a sample, and with the pane open its chart.
    let mut a = hour.clone();
    let mut t = 3_600u64;
    g.bench_function("sample_5000", |b| {
        b.iter(|| {
            let i = (t as usize) % snaps.len();
            a.add(t as f64, &snaps[i].actives());
            let chart = a.chart(t as f64 - 300.0, t as f64).count();
            t += 1;
            chart
        })
    });
    // The pane's table over its default window (5 minutes, by class): built every 5 s.
    g.bench_function("pane_5min_by_class_5000", |b| {
        b.iter(|| {
            hour.report(&Query {
                from: 3_300.0,
                to: 3_600.0,
                keys: vec![Key::Class],
                filter: None,
                top: 200,
            })
            .db_time_s
        })
    });
    // The pane over the whole hour, grouped by session (the most groups).
    g.bench_function("pane_hour_by_session_5000", |b| {
        b.iter(|| {
            hour.report(&Query {
                from: 0.0,
                to: 3_600.0,
                keys: vec![Key::Session],
                filter: None,
                top: 200,
            })
            .db_time_s
        })
    });
    g.finish();
}

/// `ifxtop ash --replay` over a recorded stretch of the demo at 5,000 sessions.
fn ash_replay(c: &mut Criterion) {
    let full = std::env::args().any(|a| a == "--bench");
    let (sessions, secs) = if full { (5_000, 60) } else { (100, 5) };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("demo.jsonl.zst");
    let settings = StoreSettings {
        wall_start: Some(ifxtop::demo::EPOCH),
        ..StoreSettings::default()
    };
    let (_, samples) = ifxtop::commands::snapshot::demo_store(
        DemoInstance::new(1).with_sessions(sessions),
        Duration::from_secs(280),
        Duration::from_secs(280 + secs),
        settings.clone(),
        true,
    )
    .expect("the demo");
    ifxtop::commands::snapshot::write_recording(&path, Some("ol_demo"), &settings, &samples)
        .expect("written");
    let rec = std::sync::Arc::new(ifxtop::collect::record::read_recording(&path).expect("read"));
    let settings = ifxtop::instance::walk::replay_settings(&rec, StoreSettings::default());
    let mut g = c.benchmark_group("activity");
    g.sample_size(10);
    g.bench_function(format!("ash_replay_{secs}s_{sessions}"), |b| {
        b.iter(|| {
            let mut a = Activity::new();
            ifxtop::instance::walk::replay_activity(
                rec.clone(),
                settings.clone(),
                Duration::ZERO,
                rec.length(),
                &mut a,
            );
            a.rows()
        })
    });
    g.finish();
}

/// `ifxtop ash --replay` over an hour's zstd recording of 5,000 sessions through its
/// database-time track: the track's span, its samples added up, the report of every key. The
/// hour is the demo's lock chain and mutex contention (two minutes walked at 5,000 sessions,
/// their outputs and samples repeated thirty times, each a stretch later: the file is an hour's
/// size, about 700 MB, and its frames are walked as any hour's).
fn ash_track(c: &mut Criterion) {
    use ifxtop::model::track::{TrackDecoder, TrackEncoder};
    let full = std::env::args().any(|a| a == "--bench");
    let (sessions, walked, hour) = if full {
        (5_000, 120u64, 3_600u64)
    } else {
        (100, 10, 60)
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("hour.jsonl.zst");
    let settings = StoreSettings {
        wall_start: Some(ifxtop::demo::EPOCH),
        ..StoreSettings::default()
    };
    let mut track = Vec::new();
    let (_, samples) = ifxtop::instance::walk::demo_store_sampled(
        DemoInstance::new(1).with_sessions(sessions),
        Duration::from_secs(280),
        Duration::from_secs(280 + walked - 1),
        settings.clone(),
        true,
        None,
        Some(&mut track),
    )
    .expect("the demo");
    let mut decoder = TrackDecoder::new();
    let kept: Vec<_> = track
        .iter()
        .map(|l| decoder.sample(l).expect("a good line"))
        .collect();
    let mut encoder = TrackEncoder::new();
    let stretches = hour / walked;
    let shift = |k: u64| (k * walked) as f64;
    let lines: Vec<String> = (0..stretches)
        .flat_map(|k| kept.iter().map(move |s| (k, s)))
        .map(|(k, s)| encoder.line(s.at + shift(k), &s.actives()))
        .collect();
    let outputs = (0..stretches).flat_map(|k| {
        samples
            .iter()
            .map(move |r| ifxtop::collect::sample::RawSample {
                t: r.t + shift(k),
                ..r.clone()
            })
    });
    ifxtop::commands::snapshot::write_recording_tracked(
        &path,
        Some("ol_demo"),
        &settings,
        outputs,
        Some(&lines),
    )
    .expect("written");
    drop(samples);
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!(
        "ash_track: {hour} s of {sessions} sessions, {} MB, {} samples",
        size / 1_000_000,
        lines.len()
    );
    let mut g = c.benchmark_group("activity");
    g.sample_size(10);
    g.bench_function(format!("ash_track_{hour}s_{sessions}"), |b| {
        b.iter(|| {
            let (first, last, _) = ifxtop::instance::walk::track_span(&path)
                .expect("read")
                .expect("no damaged frame")
                .expect("a track");
            let mut a = Activity::new();
            ifxtop::instance::walk::track_activity(&path, first, last, &mut a)
                .expect("read")
                .expect("whole");
            a.report(&Query::every_key(first - 1.0, last, 10)).db_time_s
        })
    });
    g.finish();
}

criterion_group!(benches, activity, ash_replay, ash_track);
criterion_main!(benches);
