//! A recording cut short (a crash, a full disk, a copy still under way): every reader says so.

use std::process::Command;

fn ifxtop(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(args)
        .env_remove("INFORMIXSERVER")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .expect("ifxtop runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `ifxtop ash` on a cut recording says it is cut, as `snapshot --replay` does: read from the
/// outputs (the window at the end) or from the database-time track (a window before the cut),
/// compressed or plain.
#[test]
fn ash_on_a_cut_recording_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in ["whole.jsonl.zst", "whole.jsonl"] {
        let whole = dir.path().join(name);
        let w = whole.display().to_string();
        let (ok, _, err) = ifxtop(&[
            "snapshot", "--demo", "--at", "200", "--format", "json", "--record", &w,
        ]);
        assert!(ok, "{err}");
        let bytes = std::fs::read(&whole).expect("read");
        let cut = dir.path().join(format!("cut-{name}"));
        std::fs::write(&cut, &bytes[..bytes.len() * 9 / 10 + 7]).expect("written");
        let c = cut.display().to_string();
        // The snapshot's words, for the same file.
        let (ok, _, snap_err) = ifxtop(&["snapshot", "--replay", &c, "--format", "json"]);
        assert!(ok, "{snap_err}");
        let said = if name.ends_with(".zst") {
            "compressed stream ends early"
        } else {
            "cut off (the recording ended mid-line)"
        };
        assert!(snap_err.contains(said), "{name}: {snap_err}");
        let (ok, out, err) = ifxtop(&["ash", "--window", "20", "--format", "json", "--replay", &c]);
        assert!(ok, "{err}");
        assert!(err.starts_with("ifxtop ash: "), "{name}: {err}");
        assert!(err.contains(said), "{name}: {err}");
        let ash: serde_json::Value = serde_json::from_str(&out).expect("json");
        assert_eq!(ash["read_from"], "outputs", "{name}: {ash}");
        if name.ends_with(".zst") {
            // A window before the cut is read from the track: the cut is said all the same.
            let (ok, out, err) = ifxtop(&[
                "ash", "--from", "120", "--to", "130", "--format", "json", "--replay", &c,
            ]);
            assert!(ok, "{err}");
            let ash: serde_json::Value = serde_json::from_str(&out).expect("json");
            assert_eq!(ash["read_from"], "track", "{ash}");
            assert!(err.contains("cut short or damaged after"), "{err}");
            let note = ash["read_from_note"].as_str().unwrap_or_default();
            assert!(note.contains("cut short or damaged after"), "{note}");
        }
    }
}
