//! A moment is typed the same way wherever ifxtop takes one: seconds, a share of a recording,
//! or a time of day on the timeline's clock (a recording's `started`, the demo's 13:30:00).

use crate::common::fixtures_dir;
use std::process::Command;

fn ifxtop(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(args)
        .env_remove("INFORMIXSERVER")
        .output()
        .expect("ifxtop runs")
}

/// The JSON's `time` (the moment shown) of a snapshot, or the error it printed.
fn time_of(args: &[&str]) -> Result<String, String> {
    let mut argv = vec!["snapshot", "--format", "json"];
    argv.extend_from_slice(args);
    let out = ifxtop(&argv);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    Ok(v["time"].as_str().expect("time").to_string())
}

/// "Look at 13:10:12": `snapshot --replay F --at` takes the time of day a colleague reads out,
/// and shows the same moment as the seconds into the recording it is.
#[test]
fn snapshot_at_takes_a_time_of_day_on_the_recordings_clock() {
    let rec = fixtures_dir().join("recordings/slow-device-under-checkpoint.jsonl");
    let rec = rec.to_str().expect("path");
    // The recording started at 13:10:00Z.
    let by_clock = time_of(&["--replay", rec, "--at", "13:10:12"]);
    assert_eq!(by_clock, Ok("2026-11-26T13:10:12Z".to_string()));
    assert_eq!(by_clock, time_of(&["--replay", rec, "--at", "12"]));
    // A share of the recording, as the replay's `:` seek takes it.
    let len = time_of(&["--replay", rec]).expect("the end");
    assert_eq!(time_of(&["--replay", rec, "--at", "100%"]), Ok(len));
    // A time of day past the recording's end says where it ends.
    let late = time_of(&["--replay", rec, "--at", "14:00"]).expect_err("past the end");
    assert!(late.contains("ends at"), "{late}");
    // Something that is no moment: what is accepted.
    let out = ifxtop(&["snapshot", "--replay", rec, "--at", "soon"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a time of day (13:34, 13:34:50)"), "{err}");
}

/// The demo's clock starts at 13:30:00: `--at 13:34:50` is its second 290, in `snapshot` and
/// in `ash` (whose `--from`/`--to` read it the same way).
#[test]
fn the_demo_takes_a_time_of_day_on_its_clock() {
    assert_eq!(
        time_of(&["--demo", "--at", "13:34:50"]),
        Ok("2026-11-22T13:34:50Z".to_string())
    );
    assert_eq!(
        time_of(&["--demo", "--at", "13:34:50"]),
        time_of(&["--demo", "--at", "290"])
    );
    let ash = |args: &[&str]| {
        let mut argv = vec!["ash", "--demo", "--group", "class", "--format", "json"];
        argv.extend_from_slice(args);
        let out = ifxtop(&argv);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        (v["from_s"].clone(), v["to_s"].clone())
    };
    assert_eq!(
        ash(&["--from", "13:34:30", "--to", "13:34:50"]),
        ash(&["--from", "270", "--to", "290"])
    );
    assert_eq!(
        ash(&["--at", "13:34:50", "--window", "20"]),
        ash(&["--from", "270", "--to", "290"])
    );
}

/// The live screen's `--demo-at` takes one too (a share has no recording to be a share of).
#[test]
fn demo_at_takes_a_time_of_day() {
    use clap::Parser;
    for at in ["13:34:50", "290", "4m50s"] {
        assert!(
            ifxtop::cli::Cli::try_parse_from(["ifxtop", "--demo", "--demo-at", at]).is_ok(),
            "{at}"
        );
    }
    assert!(ifxtop::cli::Cli::try_parse_from(["ifxtop", "--demo", "--demo-at", "soon"]).is_err());
}
