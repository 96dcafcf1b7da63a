//! Recordings: written, read back, damaged, hand-made, compressed; and replayed into the same
//! screens live collection gives.

#[path = "../common/mod.rs"]
mod common;

mod bombs;
mod cut;
mod incidents;
use common::{fixture, fixtures_dir};
use ifxtop::collect::record::{parse_recording, read_recording};
use ifxtop::collect::sample::RawSample;
use ifxtop::ids::Sid;
use ifxtop::model::snapshot;
use ifxtop::source::Source;
use ifxtop::store::StoreSettings;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn sample(t: f64, source: &str, stdout: &str) -> RawSample {
    RawSample {
        t,
        source: source.into(),
        argv: source.split(' ').map(String::from).collect(),
        exit: Some(5),
        stdout: stdout.into(),
        stderr: String::new(),
    }
}

/// Real captures of one instance, as a session at 1 s would have collected them.
fn oninit_samples() -> Vec<RawSample> {
    let u = fixture("onstat-u/oninit-onstat-u.txt");
    let con = fixture("onstat-g-con/oninit-onstat-g-con.txt");
    let x = fixture("onstat-X/ifxtop-seed-buffer-waits-4-pools.txt");
    let mut v = Vec::new();
    for t in 0..10 {
        v.push(sample(f64::from(t), "onstat -u", &u));
        v.push(sample(f64::from(t) + 0.01, "onstat -g con", &con));
        if t % 2 == 0 {
            v.push(sample(f64::from(t) + 0.02, "onstat -X", &x));
        }
    }
    v
}

fn settings() -> StoreSettings {
    StoreSettings {
        ports: vec![9088],
        ..StoreSettings::default()
    }
}

fn write(path: &Path, samples: &[RawSample]) {
    ifxtop::commands::snapshot::write_recording(path, Some("ol_oninit"), &settings(), samples)
        .expect("recording written");
}

#[test]
fn plain_and_compressed_recordings_read_back_exactly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let samples = oninit_samples();
    for name in ["rec.jsonl", "rec.jsonl.zst"] {
        let path = dir.path().join(name);
        write(&path, &samples);
        let bytes = std::fs::read(&path).expect("read");
        let compressed = bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
        assert_eq!(compressed, name.ends_with(".zst"), "{name}");
        let rec = read_recording(&path).expect("readable");
        assert!(rec.skipped.is_empty(), "{name}: {:?}", rec.skipped);
        let h = rec.header.as_ref().expect("header");
        assert_eq!(h.ifxtop_recording, 1);
        assert_eq!(h.server.as_deref(), Some("ol_oninit"));
        assert_eq!(h.ports, vec![9088]);
        let back: Vec<RawSample> = rec.samples().map(|(_, s)| s).collect();
        assert_eq!(back, samples, "{name}");

        assert_eq!(rec.sources().next(), Some(Source::OnstatU));
    }
    // The compressed file is much smaller: the same capture repeats.
    let plain = std::fs::metadata(dir.path().join("rec.jsonl"))
        .expect("meta")
        .len();
    let zst = std::fs::metadata(dir.path().join("rec.jsonl.zst"))
        .expect("meta")
        .len();
    assert!(zst * 5 < plain, "zst {zst} vs plain {plain}");
}

#[test]
fn the_header_line_is_the_documented_shape() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rec.jsonl");
    write(&path, &oninit_samples()[..1]);
    let text = std::fs::read_to_string(&path).expect("text");
    let mut lines = text.lines();
    let header: serde_json::Value =
        serde_json::from_str(lines.next().expect("header line")).expect("json");
    assert_eq!(header["ifxtop_recording"], 1);
    assert_eq!(header["server"], "ol_oninit");
    let started = header["started"].as_str().expect("started");
    assert!(
        time::OffsetDateTime::parse(started, &time::format_description::well_known::Rfc3339)
            .is_ok(),
        "{started}"
    );
    assert!(header.get("host").is_some());
    let line: serde_json::Value =
        serde_json::from_str(lines.next().expect("sample line")).expect("json");
    for key in ["t", "source", "argv", "exit", "stdout", "stderr"] {
        assert!(line.get(key).is_some(), "{key} missing in {line}");
    }
    assert_eq!(line["source"], "onstat -u");
    assert_eq!(line["argv"], serde_json::json!(["onstat", "-u"]));
    assert_eq!(line["exit"], 5);
}

#[test]
fn a_recording_cut_mid_line_replays_what_came_before_and_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rec.jsonl");
    let samples = oninit_samples();
    write(&path, &samples);
    let bytes = std::fs::read(&path).expect("read");
    // Cut in the middle of the last line, as a dropped connection or a crash would.
    let cut = bytes.len() - 40;
    let rec = parse_recording(&bytes[..cut]);
    assert_eq!(rec.len(), samples.len() - 1);
    assert_eq!(rec.skipped.len(), 1, "{:?}", rec.skipped);
    assert!(rec.skipped[0].contains("cut off"), "{:?}", rec.skipped);
    // It still replays: the last complete onstat -u is on screen.
    let store = ifxtop::store::replayed(Arc::new(rec), settings(), None);
    let snap = snapshot::build(&store, store.latest, None, &[]);
    assert_eq!(snap.summary.by_reason.get(&'Y'), Some(&5));
}

#[test]
fn a_compressed_recording_cut_mid_stream_keeps_every_flushed_block() {
    // What the recorder does: a zstd block is flushed every second, so a crash loses at most
    // the last second. Flush after each line here, then cut the file inside the last block.
    let samples = oninit_samples();
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).expect("encoder");
    let header =
        r#"{"ifxtop_recording":1,"server":"x","started":"2026-11-22T00:00:00Z","host":null}"#;
    writeln!(enc, "{header}").expect("write");
    enc.flush().expect("flush");
    let mut flushed_at = Vec::new();
    for s in &samples {
        writeln!(enc, "{}", serde_json::to_string(s).expect("json")).expect("write");
        enc.flush().expect("flush");
        flushed_at.push(enc.get_ref().len());
    }
    let bytes = enc.finish().expect("finish");
    let keep = samples.len() - 3;
    let cut = flushed_at[keep - 1] + 5;
    let rec = parse_recording(&bytes[..cut]);
    assert_eq!(rec.len(), keep, "{:?}", rec.skipped);
    assert!(
        rec.skipped.iter().any(|s| s.contains("ends early")),
        "{:?}",
        rec.skipped
    );
}

#[test]
fn damaged_lines_are_listed_and_the_rest_replays() {
    let u = fixture("onstat-u/oninit-onstat-u.txt");
    let good = serde_json::to_string(&sample(1.0, "onstat -u", &u)).expect("json");
    let text = format!(
        "{}\n{good}\nthis is not json\n{}\n{}\n{}\n",
        r#"{"ifxtop_recording":7,"server":"x","started":"2026-11-22T00:00:00Z","host":null}"#,
        r#"{"t":2,"source":"onstat -Z","stdout":"?"}"#,
        r#"{"t":-1,"source":"onstat -u","stdout":""}"#,
        r#"{"t":3,"stdout":"no source"}"#,
    );
    let rec = parse_recording(text.as_bytes());
    assert_eq!(rec.len(), 1);
    let all = rec.skipped.join("\n");
    for needle in [
        "format version 7",
        "line 3: not JSON",
        "line 4: unknown source 'onstat -Z'",
        "line 5: bad time -1",
        "line 6: not a sample",
        "no onstat -X samples",
    ] {
        assert!(all.contains(needle), "missing {needle:?} in:\n{all}");
    }
    // Garbage only: nothing to replay, nothing panics.
    let rec = parse_recording(b"\x00\xff\xfe garbage\n{\"t\":\n");
    assert!(rec.is_empty());
    assert!(!rec.skipped.is_empty());
    let rec = parse_recording(&[0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3]);
    assert!(rec.is_empty());
    assert!(!rec.skipped.is_empty());
}

/// The reliability test's recordings: one sample at `t: 1e300` hid every other one (the
/// replay showed nothing, with no message); a header `base_page_kb` of 0 was taken; a directory
/// read as a damaged compressed stream; a garbage file listed every line.
#[test]
fn absurd_times_page_sizes_directories_and_garbage_are_named() {
    let u = fixture("onstat-u/oninit-onstat-u.txt");
    let line = |t: f64| serde_json::to_string(&sample(t, "onstat -u", &u)).expect("json");
    let text = format!(
        "{}\n{}\n{}\n{}\n",
        r#"{"ifxtop_recording":1,"server":"x","started":"2026-11-22T00:00:00Z","host":null,"base_page_kb":0}"#,
        line(1.0),
        line(2.0),
        line(9.0).replace("\"t\":9.0", "\"t\":1e300"),
    );
    assert!(
        text.contains("1e300"),
        "the time as the reliability test wrote it"
    );
    let rec = parse_recording(text.as_bytes());
    assert_eq!(rec.len(), 2, "{:?}", rec.skipped);
    assert_eq!(rec.length(), Duration::from_secs(2));
    let all = rec.skipped.join("\n");
    assert!(all.contains("line 4: bad time 1e300"), "{all}");
    assert!(all.contains("base_page_kb 0"), "{all}");
    assert_eq!(rec.header.as_ref().and_then(|h| h.base_page_kb), None);
    // The replay shows the samples that are there.
    let store = ifxtop::store::replayed(Arc::new(rec), settings(), None);
    let snap = snapshot::build(&store, Duration::from_secs(2), None, &[]);
    assert_eq!(snap.waiters.len(), 5);

    let dir = tempfile::tempdir().expect("tempdir");
    let e = read_recording(dir.path()).expect_err("a directory");
    assert!(
        e.to_string().contains("a directory, not a regular file"),
        "{e}"
    );
    assert!(!e.to_string().contains("compressed"), "{e}");

    // 100,000 garbage lines: the problems kept are bounded, the line to show is short and
    // counts them all.
    let garbage = "x\n".repeat(100_000);
    let rec = parse_recording(garbage.as_bytes());
    assert!(rec.is_empty());
    assert!(rec.skipped.len() <= 110, "{}", rec.skipped.len());
    assert_eq!(
        rec.problem_count(),
        100_000 + 2,
        "every line and the two missing sources"
    );
    let shown = rec.problems_line();
    assert!(shown.len() < 600, "{} bytes: {shown}", shown.len());
    assert!(
        shown.starts_with("100002 problems: line 1: not JSON"),
        "{shown}"
    );
    assert!(shown.ends_with("and 99999 more"), "{shown}");
}

#[test]
fn a_failed_run_replays_as_the_failure_it_was() {
    let u = fixture("onstat-u/oninit-onstat-u.txt");
    let mut failed = sample(2.0, "onstat -u", "");
    failed.exit = None;
    failed.stderr = "timed out after 10s (killed)".into();
    let rec = parse_recording(
        format!(
            "{}\n{}\n",
            serde_json::to_string(&sample(1.0, "onstat -u", &u)).expect("json"),
            serde_json::to_string(&failed).expect("json")
        )
        .as_bytes(),
    );
    let store = ifxtop::store::replayed(Arc::new(rec), settings(), None);
    let snap = snapshot::build(&store, Duration::from_secs(2), None, &[]);
    let st = snap
        .sources
        .iter()
        .find(|s| s.source == "onstat -u")
        .expect("status");
    assert_eq!(st.error.as_deref(), Some("timed out after 10s (killed)"));
    // The last good data stays.
    assert_eq!(snap.waiters.len(), 5);
}

/// The hand-written recording docs/recording.md describes, made by its script from real captures.
#[test]
fn a_hand_written_recording_of_real_captures_replays() {
    let path = fixtures_dir().join("recordings/oninit-handmade.jsonl");
    let rec = read_recording(&path).expect("readable");
    assert!(rec.skipped.is_empty(), "{:?}", rec.skipped);
    assert_eq!(rec.length(), Duration::from_secs(5));
    let rec = Arc::new(rec);
    let store = ifxtop::store::replayed(rec.clone(), settings(), None);
    let snap = snapshot::build(&store, rec.length(), Some("ol_oninit"), &[Sid(54)]);
    let w54 = snap
        .waiters
        .iter()
        .find(|w| w.sessid == Sid(54))
        .expect("sid 54 waits");
    // sm_read: a shared-memory client between requests, idle, with no socket to look at.
    assert_eq!(
        w54.verdict,
        "idle: waiting for the client (shared-memory connection: no socket)"
    );
    assert!(w54.idle);
    // onstat -g con says 187 s; that wait started before the recording.
    assert!(w54.in_wait_s >= 187.0, "{}", w54.in_wait_s);
    assert_eq!(snap.summary.threads, 14);
    let s54 = &snap.session_views[0];
    assert_eq!(s54.sid, Sid(54));
    // onstat -g ath joins rstcb 14a58b98 to tid 213, sqlexec.
    assert_eq!(s54.threads[0].tid, Some(213));
    assert_eq!(s54.threads[0].name.as_deref(), Some("sqlexec"));
}

#[test]
fn the_documented_script_makes_that_recording() {
    // Without jq (outside CI) the committed file stands, and the test above replays it.
    if !common::have("jq", "jq", "the documented recording script") {
        return;
    }
    let dir = fixtures_dir();
    let out = std::process::Command::new("sh")
        .arg(dir.join("recordings/make-oninit-recording.sh"))
        .arg(&dir)
        .output()
        .expect("script runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let committed =
        std::fs::read(dir.join("recordings/oninit-handmade.jsonl")).expect("committed file");
    assert_eq!(out.stdout, committed);
}

#[test]
fn a_replay_keeps_no_outputs_in_memory() {
    // A recording of a big instance holds gigabytes of text an hour; the replay keeps where each
    // sample is and reads the outputs again as they are played (it held each one compressed:
    // about twice the file, 100 MB for four minutes of 5,000 sessions).
    let demo = ifxtop::demo::DemoInstance::new(1).with_sessions(2000);
    let mut samples = Vec::new();
    for t in 0..5u64 {
        for source in [Source::OnstatU, Source::OnstatGCon, Source::ProcNetTcp] {
            let req = source.request();
            let out = demo
                .respond(&req, Duration::from_secs(t))
                .expect("demo output");
            samples.push(RawSample {
                t: t as f64,
                source: source.label(),
                argv: req.argv(),
                exit: out.exit,
                stdout: out.stdout,
                stderr: out.stderr,
            });
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("big.jsonl.zst");
    write(&path, &samples);
    let rec = read_recording(&path).expect("readable");
    let text: usize = samples.iter().map(|s| s.stdout.len()).sum();
    assert!(text > 1_000_000, "{text}");
    assert!(rec.kept_bytes() < 4096, "keeps {} bytes", rec.kept_bytes());
    // In time order as written: nothing read ahead of its turn.
    let mut it = rec.samples();
    let mut back = Vec::new();
    while let Some((_, s)) = it.next() {
        assert_eq!(it.read_ahead(), 0);
        back.push(s);
    }
    assert_eq!(back, samples);
    // Read again: the same samples.
    assert_eq!(rec.samples().count(), samples.len());
}

#[test]
fn samples_written_out_of_time_order_replay_in_time_order() {
    // A slow command's output is written when it ends, after samples of later times.
    let mut text = String::from(
        "{\"ifxtop_recording\":1,\"server\":\"x\",\"started\":\"2026-11-22T13:00:00Z\",\"host\":null}\n",
    );
    for (t, source) in [
        (0.0, "onstat -u"),
        (1.0, "onstat -u"),
        (0.5, "onstat -X"),
        (2.0, "onstat -u"),
        (1.0, "onstat -g con"),
    ] {
        text.push_str(&format!(
            "{{\"t\":{t},\"source\":\"{source}\",\"stdout\":\"{source} at {t}\"}}\n"
        ));
    }
    let rec = parse_recording(text.as_bytes());
    let mut it = rec.samples();
    let mut order: Vec<(f64, String)> = Vec::new();
    let mut most_ahead = 0;
    while let Some((_, s)) = it.next() {
        most_ahead = most_ahead.max(it.read_ahead());
        order.push((s.t, s.stdout));
    }
    // One sample held at a time: the 1 s `-u` read on the way to the 0.5 s `-X`, then the 2 s
    // `-u` on the way to the 1 s `-g con`.
    assert_eq!(most_ahead, 1);
    let want = [
        (0.0, "onstat -u at 0"),
        (0.5, "onstat -X at 0.5"),
        (1.0, "onstat -u at 1"),
        (1.0, "onstat -g con at 1"),
        (2.0, "onstat -u at 2"),
    ];
    let want: Vec<(f64, String)> = want.iter().map(|(t, s)| (*t, s.to_string())).collect();
    assert_eq!(order, want);
}

#[test]
fn a_recording_changed_on_disk_during_a_replay_ends_it_with_a_reason() {
    let samples = oninit_samples();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rec.jsonl");
    write(&path, &samples);
    let rec = read_recording(&path).expect("readable");
    assert_eq!(rec.len(), samples.len());
    let bytes = std::fs::read(&path).expect("read");

    // Still being written (a colleague replays what is there so far): what came after the file
    // was opened is not part of this replay, and nothing of it is held.
    let mut grown = bytes.clone();
    for _ in 0..3 {
        grown.extend_from_slice(b"{\"t\":0.5,\"source\":\"onstat -u\",\"stdout\":\"later\"}\n");
    }
    std::fs::write(&path, &grown).expect("append");
    let back: Vec<RawSample> = rec.samples().map(|(_, s)| s).collect();
    assert_eq!(back, samples);

    // Cut in half after it was read: the replay plays what is left, then says why it stopped.
    std::fs::write(&path, &bytes[..bytes.len() / 2]).expect("cut");
    let played = rec.samples().count();
    assert!(played > 0 && played < samples.len(), "{played}");

    // Replaced by other lines: nothing from the new file is played as the old one's.
    std::fs::write(
        &path,
        "{\"t\":0,\"source\":\"onstat -k\",\"stdout\":\"x\"}\n".repeat(50),
    )
    .expect("replace");
    assert_eq!(rec.samples().count(), 0);

    // Gone: no samples, no panic.
    std::fs::remove_file(&path).expect("remove");
    assert_eq!(rec.samples().count(), 0);
}

/// The round trip the issue asks for: the demo recorded while it makes a snapshot, the
/// recording replayed to the same moment, and the two snapshots identical, JSON for JSON.
#[test]
fn a_recorded_demo_replays_to_the_same_snapshot() {
    use clap::Parser;
    use ifxtop::cli::SnapshotArgs;
    let dir = tempfile::tempdir().expect("tempdir");
    for (at, name) in [(40.0, "hot-spot.jsonl.zst"), (300.0, "lock-chain.jsonl")] {
        let path = dir.path().join(name);
        let args =
            |demo: bool, replay: Option<std::path::PathBuf>, record: Option<std::path::PathBuf>| {
                // As `ifxtop snapshot --seed 3 --at AT --format json` and the rest names them.
                let at = at.to_string();
                let mut argv = vec!["ifxtop", "snapshot", "--seed", "3", "--at", &at];
                argv.extend(["--format", "json", "--demo-sessions", "300"]);
                argv.extend(["--base-page-kb", "2", "--max-output-mb", "64"]);
                if demo {
                    argv.push("--demo");
                }
                let replay = replay.map(|p| p.display().to_string());
                if let Some(p) = &replay {
                    argv.extend(["--replay", p]);
                }
                let record = record.map(|p| p.display().to_string());
                if let Some(p) = &record {
                    argv.extend(["--record", p]);
                }
                let cli = ifxtop::cli::Cli::try_parse_from(argv).expect("arguments");
                let Some(ifxtop::cli::Command::Snapshot(args)) = cli.command else {
                    panic!("a snapshot");
                };
                let args: SnapshotArgs = *args;
                args
            };
        let live = ifxtop::commands::snapshot::snapshot_for(&args(true, None, Some(path.clone())))
            .expect("demo snapshot");
        let replayed =
            ifxtop::commands::snapshot::snapshot_for(&args(false, Some(path.clone()), None))
                .expect("replay");
        let a = ifxtop::commands::snapshot::json(&live).expect("json");
        let b = ifxtop::commands::snapshot::json(&replayed).expect("json");
        assert!(!live.waiters.is_empty(), "{name}: nothing waits");
        // The first line that differs, with a little context (the whole JSON is large).
        if a != b {
            let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
            let i = la
                .iter()
                .zip(&lb)
                .position(|(x, y)| x != y)
                .unwrap_or(la.len().min(lb.len()));
            let from = i.saturating_sub(12);
            panic!(
                "{name}: the replay differs from what was recorded at line {i}:\nrecorded:\n{}\nreplayed:\n{}",
                la[from..(i + 3).min(la.len())].join("\n"),
                lb[from..(i + 3).min(lb.len())].join("\n")
            );
        }
    }
}

/// `snapshot --replay --at` past the recording's end is an error (exit 2, saying where it
/// ends), not the last sample passed off as that moment; within it, exit 0.
#[test]
fn a_snapshot_past_the_end_of_a_recording_is_refused() {
    let rec = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/recordings/oninit-handmade.jsonl"
    );
    let run = |at: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ifxtop"))
            .args(["snapshot", "--replay", rec, "--at", at])
            .env_remove("INFORMIXSERVER")
            .output()
            .expect("ifxtop runs")
    };
    let out = run("99999");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ends at 00:05"), "{err}");
    assert!(
        out.stdout.is_empty(),
        "nothing printed as if it were that moment"
    );
    let out = run("3");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ifxtop snapshot 2001-04-15T16:00:0"));
}

/// The reliability test's hostile header: a `started` in the year 9999 (a positive offset
/// pushes it past the calendar's end) is no start, and a snapshot of the recording does not
/// panic adding session time to it.
#[test]
fn a_start_at_the_end_of_the_calendar_is_no_start_and_no_panic() {
    let u = fixture("onstat-u/oninit-onstat-u.txt");
    for started in ["9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z"] {
        let text = format!(
            "{{\"ifxtop_recording\":1,\"server\":\"x\",\"started\":\"{started}\",\"utc_offset\":\"+14:00\",\"host\":null}}\n{}\n",
            serde_json::to_string(&sample(3.0, "onstat -u", &u)).expect("json")
        );
        let rec = parse_recording(text.as_bytes());
        assert_eq!(rec.len(), 1, "{:?}", rec.skipped);
        assert_eq!(rec.started(), None, "{started}");
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, &text).expect("write");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ifxtop"))
            .args(["snapshot", "--format", "json", "--replay"])
            .arg(&path)
            .output()
            .expect("ifxtop runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{started}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(json["time"], serde_json::Value::Null, "{started}");
        assert!(
            json["sessions"].as_array().is_some_and(|s| !s.is_empty()),
            "{json}"
        );
    }
}

/// `--record` never truncates an earlier recording and never writes through a planted link;
/// the new file is 0600 (it holds SQL text).
#[test]
fn a_recording_is_a_new_private_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let earlier = dir.path().join("incident.jsonl");
    std::fs::write(&earlier, "an earlier incident\n").expect("write");
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep me").expect("write");
    let link = dir.path().join("planted.jsonl");
    std::os::unix::fs::symlink(&victim, &link).expect("symlink");
    let fresh = dir.path().join("fresh.jsonl");
    let run = |path: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ifxtop"))
            .args([
                "snapshot", "--demo", "--at", "60", "--format", "json", "--record",
            ])
            .arg(path)
            .output()
            .expect("ifxtop runs")
    };
    let out = run(&earlier);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("already exists"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&earlier).expect("read"),
        "an earlier incident\n"
    );
    assert!(!run(&link).status.success());
    assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep me");
    let out = run(&fresh);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mode = std::fs::metadata(&fresh)
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

/// The reliability test's hostile recording: a database user named with an OSC title sequence,
/// a host and server with an OSC 52 clipboard write. `ifxtop snapshot --replay` prints them,
/// text or JSON, with no control character reaching the terminal (every byte that leaves goes
/// through `SafeText`).
#[test]
fn a_hostile_recording_prints_no_escape_sequence() {
    let u = fixture("onstat-u/oninit-onstat-u.txt").replace("contact ", "x\u{1b}]0;pwn\u{7}");
    assert!(u.contains('\u{1b}'));
    let header = serde_json::json!({
        "ifxtop_recording": 1,
        "server": "ol\u{1b}]52;c;cHduZWQ=\u{7}",
        "started": "2026-11-22T13:00:00Z",
        "host": "db01\u{1b}[2J\u{9b}31m",
    });
    let text = format!(
        "{header}\n{}\n{}\n",
        serde_json::to_string(&sample(1.0, "onstat -u", &u)).expect("json"),
        serde_json::to_string(&sample(2.0, "onstat -u", &u)).expect("json")
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("hostile.jsonl");
    std::fs::write(&path, text).expect("write");
    for format in ["text", "json"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ifxtop"))
            .args(["snapshot", "--format", format, "--replay"])
            .arg(&path)
            .output()
            .expect("ifxtop runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (what, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let s = String::from_utf8_lossy(bytes);
            let bad: Vec<char> = s
                .chars()
                .filter(|c| c.is_control() && *c != '\n' && *c != '\t')
                .collect();
            assert!(bad.is_empty(), "{format} {what}: {bad:?} in\n{s}");
        }
        if format == "text" {
            let s = String::from_utf8_lossy(&out.stdout);
            assert!(
                s.contains("x?]0;pwn?"),
                "the user is shown, made harmless:\n{s}"
            );
        }
    }
}
