//! `ifxtop snapshot` reads the config file as the live screen and `serve` do: `--config FILE`,
//! else the user's config directory.

use std::process::Command;

/// `ifxtop snapshot --demo --at 40 --format json` with `args` and `env`: every hot spot's
/// samples in its window.
fn window_samples(args: &[&str], env: &[(&str, &std::path::Path)]) -> Vec<u64> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ifxtop"));
    cmd.args(["snapshot", "--demo", "--at", "40", "--format", "json"])
        .args(args)
        .env_remove("INFORMIXSERVER");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("ifxtop runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let spots = v["hotspots"].as_array().expect("hotspots").clone();
    assert!(!spots.is_empty(), "the demo at 40 s has hot spots");
    spots
        .iter()
        .map(|h| h["window_samples"].as_u64().expect("window_samples"))
        .collect()
}

/// The config's `hotspot-window` shortens the hot spots' window in a snapshot, named with
/// `--config` or found in the user's config directory; a bad value in it is refused by name.
#[test]
fn snapshot_honours_the_config_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("empty.toml");
    std::fs::write(&empty, "").expect("write");
    let short = dir.path().join("short.toml");
    std::fs::write(&short, "hotspot-window = 10\n").expect("write");
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join("ifxtop")).expect("mkdir");
    std::fs::write(home.join("ifxtop/config.toml"), "hotspot-window = 10\n").expect("write");
    let nowhere = dir.path().join("nowhere");
    // The default window (120 s) holds every onstat -X sample of the 40 s run.
    let default = window_samples(&[], &[("XDG_CONFIG_HOME", &nowhere), ("HOME", &nowhere)]);
    assert!(default.iter().all(|n| *n >= 15), "{default:?}");
    let given = window_samples(&["--config", &empty.display().to_string()], &[]);
    assert_eq!(given, default);
    // 10 s: onstat -X every second while threads wait on buffers (it joins the grouped call
    // then, collect/demand.rs), so at most 11 samples.
    let short_window = window_samples(&["--config", &short.display().to_string()], &[]);
    assert!(short_window.iter().all(|n| *n <= 11), "{short_window:?}");
    let found = window_samples(&[], &[("XDG_CONFIG_HOME", &home), ("HOME", &nowhere)]);
    assert_eq!(found, short_window);
    // A bad value in the file is refused by name before anything runs.
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "base-page-kb = 3\n").expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(["snapshot", "--demo", "--config"])
        .arg(&bad)
        .output()
        .expect("ifxtop runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("base-page-kb 3"), "{err}");
}

/// A config file others can write is used, with a warning naming it (ssh warns of its own the
/// same way); one only its owner writes gets none.
#[test]
fn a_world_writable_config_is_warned_of() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "hotspot-window = 10\n").expect("write");
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_ifxtop"))
            .args([
                "snapshot", "--demo", "--at", "20", "--format", "json", "--config",
            ])
            .arg(&path)
            .output()
            .expect("ifxtop runs")
    };
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let quiet = run();
    assert!(quiet.status.success());
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("writable"));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    let loud = run();
    assert!(loud.status.success());
    let err = String::from_utf8_lossy(&loud.stderr);
    assert!(
        err.contains("writable by others") && err.contains("config.toml"),
        "{err}"
    );
}

/// A source collected once or on demand has no period: `period_s` is `null` in the JSON, not
/// `Duration::MAX` in seconds (1.8e19); a polled source keeps its period in seconds.
#[test]
fn one_shot_sources_have_a_null_period() {
    let out = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(["snapshot", "--demo", "--at", "40", "--format", "json"])
        .env_remove("INFORMIXSERVER")
        .output()
        .expect("ifxtop runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let sources = v["sources"].as_array().expect("sources");
    let period = |name: &str| {
        sources
            .iter()
            .find(|s| s["source"] == name)
            .unwrap_or_else(|| panic!("source {name} in {sources:?}"))["period_s"]
            .clone()
    };
    for s in sources {
        let p = &s["period_s"];
        assert!(
            p.is_null() || p.as_f64().is_some_and(|p| p > 0.0 && p < 86_400.0),
            "{s}"
        );
    }
    assert!(period("onstat -u").as_f64().is_some(), "{sources:?}");
    assert!(
        sources.iter().any(|s| s["period_s"].is_null()),
        "a one-shot source: {sources:?}"
    );
}
