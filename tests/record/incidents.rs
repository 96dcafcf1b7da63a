//! Three hand-made recordings of incidents the demo does not play, built from real formats by
//! `tests/fixtures/recordings/make-incident-recordings.py` (its head says where each output
//! comes from), replayed as `ifxtop snapshot --replay FILE --at 12 --format json` does: the
//! top finding names the incident, its culprit and the words a DBA reads out.

use crate::fixtures_dir;
use clap::Parser;
use serde_json::Value;

/// The JSON `ifxtop snapshot --replay FILE --at 12 --format json` prints, in process.
fn replayed(name: &str) -> Value {
    let path = fixtures_dir().join("recordings").join(name);
    let path = path.display().to_string();
    let argv = [
        "ifxtop", "snapshot", "--replay", &path, "--at", "12", "--format", "json",
    ];
    let cli = ifxtop::cli::Cli::try_parse_from(argv).expect("arguments");
    let Some(ifxtop::cli::Command::Snapshot(args)) = cli.command else {
        panic!("a snapshot");
    };
    let snap = ifxtop::commands::snapshot::snapshot_for(&args).expect("replay");
    let text = ifxtop::commands::snapshot::json(&snap).expect("json");
    serde_json::from_str(&text).expect("json parses")
}

fn findings(v: &Value) -> &Vec<Value> {
    v["findings"].as_array().expect("findings[]")
}

fn summary(f: &Value) -> &str {
    f["summary"].as_str().unwrap_or_default()
}

/// Sid 54 is idle in an open transaction (its client's `sm_read`, a begun transaction, 3
/// locks) and two sessions wait for its row lock: the lock chain names it and says so.
#[test]
fn an_idle_session_in_an_open_transaction_heads_the_lock_chain() {
    let v = replayed("idle-in-transaction.jsonl");
    let top = &findings(&v)[0];
    assert_eq!(top["kind"], "lock_chain", "{v:#}");
    assert_eq!(top["severity"], "warning");
    assert_eq!(top["culprit"]["sids"], serde_json::json!([54]));
    assert_eq!(
        summary(top),
        "lock chain ≥12s: sid 54 holds up 2 (idle in an open transaction)"
    );
    // The waits were on before the recording began: a lower bound, and its start an upper one.
    assert_eq!(top["for_s"], 12.0);
    assert_eq!(top["for_s_at_least"], true);
    assert_eq!(top["since"], "2001-04-15T16:00:00Z");
    assert_eq!(top["impact"]["sessions"], 2);
    let action = top["action"].as_str().unwrap_or_default();
    assert!(action.contains("onmode -z 54"), "{action}");
}

/// Every logical log used and none backed up, the banner `Blocked:LBU`: the server's block is
/// named first, the logs waiting for a backup next.
#[test]
fn a_log_backup_that_blocks_the_server_is_named() {
    let v = replayed("log-backup-blocks.jsonl");
    let f = findings(&v);
    assert_eq!(f[0]["kind"], "server_blocked", "{v:#}");
    assert_eq!(f[0]["severity"], "critical");
    assert_eq!(
        summary(&f[0]),
        "server Blocked:LBU: the logs wait for a backup"
    );
    let action = f[0]["action"].as_str().unwrap_or_default();
    assert!(action.contains("ontape -a"), "{action}");
    assert_eq!(f[1]["kind"], "logs_not_backed_up", "{v:#}");
    assert_eq!(summary(&f[1]), "logs not backed up: 8 of 8 logical logs");
    // Threads waiting on the log buffer with no transaction to blame are no long transaction.
    assert!(!f.iter().any(|x| x["kind"] == "long_transaction"), "{v:#}");
}

/// A checkpoint flushing (no one in a critical section) while chunk 4's device answers in
/// about 40 ms: the checkpoint is named first with what slows it, the slow device next.
#[test]
fn a_slow_device_under_a_checkpoint_is_both_findings() {
    let v = replayed("slow-device-under-checkpoint.jsonl");
    let f = findings(&v);
    let top = &f[0];
    assert_eq!(top["kind"], "checkpoint_blocked", "{v:#}");
    assert_eq!(top["severity"], "critical");
    assert_eq!(
        summary(top),
        "checkpoint blocking ≥12s: flushing, 3 threads wait, slowed by chunk 4 device 41 ms"
    );
    assert_eq!(top["culprit"]["chunk"], 4);
    assert_eq!(top["culprit"]["device"], "dm-8");
    assert!(top["culprit"].get("sids").is_none(), "{top:#}");
    let action = top["action"].as_str().unwrap_or_default();
    assert!(action.contains("slow device"), "{action}");
    assert_eq!(f[1]["kind"], "slow_device", "{v:#}");
    assert_eq!(f[1]["culprit"]["chunk"], 4);
    assert_eq!(
        summary(&f[1]),
        "slow device: chunk 4 (datadbs2) on vg_data2-lv_data2 (dm-8) answers in 41 ms"
    );
}

/// The snapshot `ifxtop snapshot ARGS... --format json` prints, in process.
fn snapshot_json(argv: &[&str]) -> Value {
    let cli = ifxtop::cli::Cli::try_parse_from(argv).expect("arguments");
    let Some(ifxtop::cli::Command::Snapshot(args)) = cli.command else {
        panic!("a snapshot");
    };
    let snap = ifxtop::commands::snapshot::snapshot_for(&args).expect("snapshot");
    let text = ifxtop::commands::snapshot::json(&snap).expect("json");
    serde_json::from_str(&text).expect("json parses")
}

/// A replayed snapshot walks the recording before its moment, so its findings have the history
/// the screen gave them: the insert hot spot, whose waiters rotate every few seconds (each wait
/// a few seconds old), has held since the incident began, at every moment asked.
#[test]
fn a_replayed_finding_has_its_history() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("hot.jsonl");
    let file = file.display().to_string();
    let hot = ifxtop::demo::timeline::first(ifxtop::demo::timeline::Incident::InsertHotSpot)
        .expect("the insert hot spot");
    // The demo from 0 to 70 s, recorded: demo time is the recording's time.
    let at = (hot.start + 55).to_string();
    snapshot_json(&[
        "ifxtop", "snapshot", "--demo", "--at", &at, "--record", &file, "--format", "json",
    ]);
    for into in [20, 30, 40] {
        let t = (hot.start + into).to_string();
        let v = snapshot_json(&[
            "ifxtop", "snapshot", "--replay", &file, "--at", &t, "--format", "json",
        ]);
        let f = findings(&v)
            .iter()
            .find(|f| f["kind"] == "buffer_hot_spot")
            .unwrap_or_else(|| panic!("a hot spot at +{into}: {v:#}"));
        let age = f["for_s"].as_f64().expect("its age");
        assert!(
            (age - into as f64).abs() <= 0.1 && f["for_s_at_least"] == false,
            "+{into}: {f:#}"
        );
    }
}
