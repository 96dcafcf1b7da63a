//! U+202E (right-to-left override) and the other bidirectional controls, with C1 controls,
//! never leave ifxtop as themselves: a user name holding one reaches the snapshot's text and JSON,
//! `ifxtop ash`'s text and JSON, `ifxtop parse`'s JSON and standard error only as `?` (text) or
//! its `\uXXXX` escape (JSON, which reads back as the name).

use std::process::Command;

const RLO: char = '\u{202e}';

fn ifxtop(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(args)
        .env_remove("INFORMIXSERVER")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .expect("ifxtop runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// No character of `text` is a bidirectional control, a C1 control or an escape.
fn clean(what: &str, text: &str) {
    for c in text.chars() {
        assert!(
            !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{80}'..='\u{9f}' | '\u{1b}'),
            "{what}: U+{:04X} in {text}",
            u32::from(c)
        );
    }
}

#[test]
fn a_right_to_left_override_in_a_user_name_never_leaves() {
    let dir = tempfile::tempdir().expect("tempdir");
    let whole = dir.path().join("demo.jsonl");
    let w = whole.display().to_string();
    let (code, _, err) = ifxtop(&[
        "snapshot", "--demo", "--at", "300", "--format", "json", "--record", &w,
    ]);
    assert_eq!(code, Some(0), "{err}");
    // Every `appuser` of every output becomes `ev<RLO>il<CSI>` (escapes in the JSON lines), and
    // one line names a source with the override (a problem said on standard error).
    let text = std::fs::read_to_string(&whole).expect("read");
    let mut hostile = text.replace("appuser", "ev\\u202eil\\u009b");
    hostile.push_str("{\"t\":1,\"source\":\"onstat \\u202ex\",\"stdout\":\"\"}\n");
    let path = dir.path().join("hostile.jsonl");
    std::fs::write(&path, hostile).expect("written");
    let p = path.display().to_string();
    let name = format!("ev{RLO}il\u{9b}");

    let (code, out, err) = ifxtop(&["snapshot", "--replay", &p]);
    assert_eq!(code, Some(0), "{err}");
    clean("snapshot text", &out);
    clean("snapshot stderr", &err);
    assert!(out.contains("ev?il?"), "{out}");
    assert!(err.contains("unknown source 'onstat ?x'"), "{err}");

    let (code, out, err) = ifxtop(&["snapshot", "--replay", &p, "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    clean("snapshot json", &out);
    assert!(out.contains("ev\\u202eil\\u009b"), "the JSON escapes it");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(v.to_string().contains(&name), "read back as the name");

    let (code, out, err) = ifxtop(&["ash", "--replay", &p, "--group", "user", "--window", "200"]);
    assert_eq!(code, Some(0), "{err}");
    clean("ash text", &out);
    clean("ash stderr", &err);
    assert!(out.contains("ev?il?"), "{out}");
    let (code, out, err) = ifxtop(&[
        "ash", "--replay", &p, "--group", "user", "--window", "200", "--format", "json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    clean("ash json", &out);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(v.to_string().contains(&name), "{v}");

    // `ifxtop parse` of an output holding it.
    let u = include_str!("../fixtures/onstat-u/oninit-onstat-u.txt")
        .replace("contact ", &format!("ev{RLO}il "));
    let f = dir.path().join("u.txt");
    std::fs::write(&f, u).expect("written");
    let (code, out, err) = ifxtop(&["parse", "onstat-u", &f.display().to_string()]);
    assert_eq!(code, Some(0), "{err}");
    clean("parse json", &out);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(v.to_string().contains(&format!("ev{RLO}il")), "{v}");
}
