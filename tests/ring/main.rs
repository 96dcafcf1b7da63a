//! The flight recorder (src/collect/ring.rs, src/instance/ring.rs): the demo walked on a paused
//! clock into a ring replays as the plain recording of the same run does; a lock chain is cut
//! out on its own and replays to the same finding and culprit; a torn ring replays up to the
//! tear; retention and the byte cap remove the oldest first; the bytes an hour costs.

use ifxtop::collect::record::{read_recording, read_replayable_for_walk, Recording};
use ifxtop::collect::ring::{self, Origin, RingConfig, RingIndex, RingWriter};
use ifxtop::collect::sample::RawSample;
use ifxtop::demo::DemoInstance;
use ifxtop::store::StoreSettings;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn settings() -> StoreSettings {
    StoreSettings {
        ports: vec![ifxtop::demo::LISTENER_PORT],
        wall_start: Some(ifxtop::demo::EPOCH),
        host: Some(ifxtop::demo::HOST.into()),
        ..StoreSettings::default()
    }
}

fn origin() -> Origin {
    Origin {
        server: Some("ol_demo".into()),
        host: Some(ifxtop::demo::HOST.into()),
        wall_start: ifxtop::demo::EPOCH,
        ports: vec![ifxtop::demo::LISTENER_PORT],
        base_page_kb: 2,
    }
}

fn config(dir: &Path) -> RingConfig {
    RingConfig {
        // The machine's disk may be fuller than a server's: the free-space stop is tested on
        // its own.
        min_free_bytes: Some(0),
        ..RingConfig::new(dir.to_path_buf())
    }
}

/// The snapshot a replay of `rec` shows at `t`, with its findings' history, as JSON.
fn snapshot_at(rec: Recording, t: Duration) -> serde_json::Value {
    let settings = ifxtop::instance::walk::replay_settings(&rec, settings());
    let wall_start = rec.started();
    let (store, mut history) =
        ifxtop::instance::walk::replay_with_findings(Arc::new(rec), settings, t, None);
    let mut snap = ifxtop::model::snapshot::build(&store, t, Some("ol_demo"), &[]);
    snap.track_findings(&mut history, wall_start);
    serde_json::to_value(&snap).expect("json")
}

/// One demo run (300 sessions, 0 to 1,400 s: the first segment, two segments long, and the
/// next; the checkpoint stall and the lock chain) written both as a plain recording and into a
/// ring: the ring's outputs, read back across its segments, are the recording's, each at the
/// same time to the bit, and a replay of each shows the same snapshot at every moment asked.
#[test]
fn a_ring_replays_as_the_plain_recording_of_the_same_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let to = Duration::from_secs(1400);
    let (_, samples) = ifxtop::instance::walk::demo_store(
        DemoInstance::new(1).with_sessions(300),
        Duration::ZERO,
        to,
        settings(),
        true,
    )
    .expect("demo");
    let plain = dir.path().join("plain.jsonl.zst");
    ifxtop::commands::snapshot::write_recording(&plain, Some("ol_demo"), &settings(), &samples)
        .expect("plain recording");
    let ring_dir = dir.path().join("ring");
    let mut w = RingWriter::open(config(&ring_dir), origin()).expect("ring");
    for s in samples {
        w.write(s);
    }
    let stats = w.close();
    assert!(stats.stopped.is_none(), "{stats:?}");
    let index = RingIndex::open(&ring_dir).expect("ring index");
    assert_eq!(index.segments.len(), 2, "{:?}", index.segments);
    let joined = index
        .window(index.start(), index.end, false)
        .expect("window");
    assert!(joined.skipped.is_empty(), "{:?}", joined.skipped);
    let plain_rec = read_recording(&plain).expect("plain");
    assert_eq!(joined.started(), plain_rec.started());
    assert_eq!(joined.len(), plain_rec.len());
    let mut n = 0;
    for (a, b) in joined.samples().zip(plain_rec.samples()) {
        assert_eq!(a, b, "sample {n}");
        n += 1;
    }
    assert_eq!(n, plain_rec.len());
    // Before the lock chain, in it (its culprit), in the second segment.
    for t in [250, 300, 1300] {
        let t = Duration::from_secs(t);
        let a = snapshot_at(index.window(index.start(), index.end, false).expect("w"), t);
        let b = snapshot_at(read_replayable_for_walk(&plain).expect("p"), t);
        assert_eq!(a, b, "the snapshots at {t:?}");
    }
}

/// The demo walked into a ring as `serve --ring` writes it: its lock chain (275 s into the
/// timeline) is cut out on its own, from the minutes before it until it cleared, listed by
/// `ifxtop incidents`, and its cut replays to the same finding and culprit.
#[test]
fn a_lock_chain_is_cut_out_on_its_own_and_replays_to_the_same_culprit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ring_dir = dir.path().join("ring");
    let mut cfg = config(&ring_dir);
    cfg.before = Duration::from_secs(120);
    let mut w = RingWriter::open(cfg, origin()).expect("ring");
    ifxtop::instance::ring::demo_ring(
        DemoInstance::new(1).with_sessions(300),
        Duration::from_secs(150),
        Duration::from_secs(420),
        settings(),
        &mut w,
    )
    .expect("walk");
    w.close();
    let lines = ring::incident_lines(&ring_dir);
    let began_s = |l: &ring::IncidentLine| {
        let t =
            time::OffsetDateTime::parse(&l.began, &time::format_description::well_known::Rfc3339)
                .expect("began");
        (t - ifxtop::demo::EPOCH).as_seconds_f64()
    };
    // The chain of the demo's lock chain (275 s on, before the long transaction at 375 s).
    let chain = lines
        .iter()
        .find(|l| {
            l.event == "cut" && l.kind == "lock_chain" && (275.0..330.0).contains(&began_s(l))
        })
        .unwrap_or_else(|| panic!("no lock chain cut: {lines:#?}"));
    assert!(chain.culprit.starts_with("sid "), "{chain:?}");
    let began_s = began_s(chain);
    let file = ring_dir
        .join("incidents")
        .join(chain.file.as_ref().expect("a file"));
    let cut = read_replayable_for_walk(&file).expect("the cut replays");
    // The minutes before it: from 120 s before it began (not before the walk's start).
    let cut_start = (cut.started().expect("started") - ifxtop::demo::EPOCH).as_seconds_f64();
    assert!(
        (cut_start - (began_s - 120.0)).abs() < 1.0,
        "{cut_start} {began_s}"
    );
    // The cut holds what the ring holds over its minutes, output for output.
    let ended = time::OffsetDateTime::parse(
        chain.ended.as_deref().expect("ended"),
        &time::format_description::well_known::Rfc3339,
    )
    .expect("ended");
    let index = RingIndex::open(&ring_dir).expect("ring index");
    let minutes = index
        .window(cut.started().expect("started"), ended, false)
        .expect("the ring's minutes");
    assert_eq!(minutes.started(), cut.started());
    assert_eq!(minutes.len(), cut.len());
    assert!(
        minutes.samples().eq(cut.samples()),
        "the cut differs from the ring"
    );
    let listed = ifxtop::commands::incidents::list(&ring_dir);
    assert!(
        listed
            .iter()
            .any(|l| l.what == "lock_chain" && l.file.as_deref() == Some(&*file.to_string_lossy())),
        "{listed:#?}"
    );
    // Replayed, the cut shows the chain with the same culprit 10 s after it began.
    let at = Duration::from_secs_f64(began_s - cut_start + 10.0);
    let snap = snapshot_at(cut, at);
    let findings = snap["findings"].as_array().expect("findings");
    let found = findings
        .iter()
        .find(|f| f["kind"] == "lock_chain")
        .unwrap_or_else(|| panic!("{findings:#?}"));
    let sids: Vec<String> = found["culprit"]["sids"]
        .as_array()
        .expect("sids")
        .iter()
        .map(|s| s.to_string())
        .collect();
    let named = format!("sid {}", sids.join(", "));
    assert!(
        chain.culprit.starts_with(&named),
        "{named} / {}",
        chain.culprit
    );
}

/// Incompressible outputs, a sample every 0.1 s: what fills a ring fast.
fn noise_samples(from_s: u64, to_s: u64, bytes: usize) -> impl Iterator<Item = RawSample> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ from_s;
    (from_s * 10..to_s * 10).map(move |i| {
        let stdout: String = (0..bytes / 16)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                format!("{x:016x}")
            })
            .collect();
        RawSample {
            t: i as f64 / 10.0,
            source: "onstat -k".into(),
            argv: vec!["onstat".into(), "-k".into()],
            exit: Some(5),
            stdout,
            stderr: String::new(),
        }
    })
}

fn segment_starts(dir: &Path) -> Vec<f64> {
    ring::segments(dir)
        .expect("segments")
        .iter()
        .map(|s| (s.started - ifxtop::demo::EPOCH).as_seconds_f64())
        .collect()
}

/// The retention and the byte cap remove the oldest segments first, and the segments never
/// hold more than the cap.
#[test]
fn retention_and_the_cap_remove_the_oldest_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ring_dir = dir.path().join("ring");
    let mut cfg = config(&ring_dir);
    cfg.retention = Duration::from_secs(3600);
    let mut w = RingWriter::open(cfg.clone(), origin()).expect("ring");
    // Three hours of 16 bytes a tenth of a second: far under the cap.
    for s in noise_samples(0, 3 * 3600, 16) {
        w.write(s);
    }
    w.close();
    let starts = segment_starts(&ring_dir);
    // What is left is the last hour and the segment it began in, nothing older.
    assert!(starts[0] >= 2.0 * 3600.0 - 700.0, "{starts:?}");
    assert!(starts.windows(2).all(|p| p[0] < p[1]), "{starts:?}");

    // The cap: 16 MB, outputs of 2 kB a tenth of a second (20 kB/s): ~13 minutes fill it.
    let capped = dir.path().join("capped");
    let mut cfg = config(&capped);
    cfg.max_bytes = 16 * 1024 * 1024;
    let mut w = RingWriter::open(cfg.clone(), origin()).expect("ring");
    let mut most = 0;
    for s in noise_samples(0, 3600, 2048) {
        w.write(s);
        most = most.max(w.stats().segments_bytes);
    }
    w.close();
    assert!(most <= cfg.max_bytes, "{most}");
    let on_disk: u64 = ring::segments(&capped)
        .expect("segments")
        .iter()
        .map(|s| s.bytes)
        .sum();
    assert!(
        on_disk <= cfg.max_bytes && on_disk > cfg.max_bytes / 2,
        "{on_disk}"
    );
    let starts = segment_starts(&capped);
    assert!(starts.windows(2).all(|p| p[0] < p[1]), "{starts:?}");
    // The oldest went first: what is left is the last of the hour.
    assert!(starts[0] > 1200.0, "{starts:?}");
    // What is left replays to its end.
    let index = RingIndex::open(&capped).expect("index");
    let rec = index
        .window(index.start(), index.end, false)
        .expect("window");
    // Nothing dropped (the outputs here are all `onstat -k`: the rest is said missing).
    let problems: Vec<&String> = rec
        .skipped
        .iter()
        .filter(|s| !s.ends_with("samples: that part stays empty"))
        .collect();
    assert!(problems.is_empty(), "{problems:?}");
    assert!((rec.length().as_secs_f64() + starts[0] - 3599.9).abs() < 0.01);
}

/// A segment torn by a crash (cut mid-write) replays up to the tear, and says so.
#[test]
fn a_torn_ring_replays_up_to_the_tear() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ring_dir = dir.path().join("ring");
    let mut w = RingWriter::open(config(&ring_dir), origin()).expect("ring");
    for s in noise_samples(0, 1800, 256) {
        w.write(s);
    }
    // No close: the segment being written is as a crash leaves it (flushed each second),
    // then cut further, mid-block.
    std::mem::forget(w);
    let segs = ring::segments(&ring_dir).expect("segments");
    assert_eq!(segs.len(), 2);
    let last = &segs[1].path;
    let bytes = std::fs::read(last).expect("read");
    std::fs::write(last, &bytes[..bytes.len() * 2 / 3]).expect("tear");
    let index = RingIndex::open(&ring_dir).expect("index");
    let rec = index
        .window(index.start(), index.end, false)
        .expect("window");
    let end = rec.length().as_secs_f64();
    // The first segment whole (0 to 1,260 s), the second up to about two thirds.
    assert!((1300.0..1750.0).contains(&end), "{end}");
    let played = rec.samples().count();
    assert_eq!(played, rec.len());
    assert!(
        rec.skipped
            .iter()
            .any(|s| s.contains("torn") || s.contains("cut")),
        "{:?}",
        rec.skipped
    );
}

/// A ring's directory is its own: created 0700, files 0600; one others may read is refused.
#[test]
fn the_ring_is_a_directory_of_its_own() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let ring_dir = dir.path().join("ring");
    let mut w = RingWriter::open(config(&ring_dir), origin()).expect("ring");
    for s in noise_samples(0, 5, 16) {
        w.write(s);
    }
    w.close();
    let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode(&ring_dir), 0o700);
    for s in ring::segments(&ring_dir).expect("segments") {
        assert_eq!(mode(&s.path), 0o600);
    }
    let open = dir.path().join("open");
    std::fs::create_dir(&open).expect("mkdir");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let err = RingWriter::open(config(&open), origin())
        .err()
        .expect("refused");
    assert!(err.to_string().contains("chmod 700"), "{err}");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&ring_dir, &link).expect("symlink");
    assert!(RingWriter::open(config(&link), origin()).is_err());
}

/// A nearly full disk stops the ring, with a message.
#[test]
fn a_nearly_full_disk_stops_the_ring() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = config(&dir.path().join("ring"));
    cfg.min_free_bytes = Some(u64::MAX);
    let mut w = RingWriter::open(cfg, origin()).expect("ring");
    for s in noise_samples(0, 5, 16) {
        w.write(s);
    }
    let stats = w.close();
    assert_eq!(stats.samples, 0);
    assert!(
        stats
            .stopped
            .as_deref()
            .is_some_and(|s| s.contains("disk nearly full")),
        "{stats:?}"
    );
}

/// Bytes an hour of the demo costs in a ring, at `sessions`, over `secs` of its timeline.
fn bytes_of_demo(sessions: usize, secs: u64) -> (u64, u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ring_dir = dir.path().join("ring");
    let mut w = RingWriter::open(config(&ring_dir), origin()).expect("ring");
    ifxtop::instance::ring::demo_ring(
        DemoInstance::new(1).with_sessions(sessions),
        Duration::ZERO,
        Duration::from_secs(secs),
        settings(),
        &mut w,
    )
    .expect("walk");
    let stats = w.close();
    let on_disk: u64 = ring::segments(&ring_dir)
        .expect("segments")
        .iter()
        .map(|s| s.bytes)
        .sum();
    let per_hour = on_disk * 3600 / secs;
    eprintln!(
        "ring: {sessions} sessions, {secs} s: {on_disk} bytes on disk ({} MB/h), {} samples, \
         {} incidents cut",
        per_hour / (1024 * 1024),
        stats.samples,
        stats.cuts
    );
    (on_disk, per_hour)
}

/// Budget: 20 minutes of the demo at 300 sessions within 40 MB an hour.
#[test]
fn twenty_minutes_at_300_sessions_stay_within_the_budget() {
    let (_, per_hour) = bytes_of_demo(300, 1200);
    assert!(per_hour <= 40 * 1024 * 1024, "{per_hour}");
}

/// Budget: a day of the demo at 300 sessions within 1 GB (on demand: `cargo test --test ring
/// -- --ignored`).
#[test]
#[ignore]
fn a_day_at_300_sessions_stays_within_the_budget() {
    let (on_disk, _) = bytes_of_demo(300, 86_400);
    assert!(on_disk <= 1024 * 1024 * 1024, "{on_disk}");
}

/// Budget: an hour of the demo at 5,000 sessions within 600 MB (on demand).
#[test]
#[ignore]
fn an_hour_at_5000_sessions_stays_within_the_budget() {
    let (on_disk, _) = bytes_of_demo(5000, 3600);
    assert!(on_disk <= 600 * 1024 * 1024, "{on_disk}");
}

/// The memory the ring's writer holds while it writes a 5,000-session instance (35 s of the
/// demo: every source, those of 30 s included, has printed at least once): zstd's context and
/// the last output of each source, within 16 MB. A compression window reaching back to each
/// source's last output held 35 MB, which put `serve --ring` over its memory budget.
#[test]
fn the_ring_writer_holds_little_memory_at_5000_sessions() {
    let (_, samples) = ifxtop::instance::walk::demo_store(
        DemoInstance::new(1).with_sessions(5000),
        Duration::ZERO,
        Duration::from_secs(35),
        settings(),
        true,
    )
    .expect("demo");
    let raw: usize = samples.iter().map(|s| s.stdout.len()).sum();
    assert!(
        raw > 60 << 20,
        "{raw} bytes of outputs: a 5,000-session instance's"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = RingWriter::open(config(&dir.path().join("ring")), origin()).expect("ring");
    let mut most = 0;
    for s in samples {
        w.write(s);
        most = most.max(w.held());
    }
    let stats = w.close();
    assert!(stats.stopped.is_none(), "{stats:?}");
    eprintln!("the ring writer held at most {most} bytes");
    assert!(most <= 16 << 20, "the writer held {most} bytes");
}
