//! What a DBA reads out on an incident call is true: the mutex advice says how long the waits
//! on it have lasted, how many wait and who holds it, not that it is held "for an instant".

use std::process::Command;

fn demo_json(at: &str) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(["snapshot", "--demo", "--at", at, "--format", "json"])
        .env_remove("INFORMIXSERVER")
        .output()
        .expect("ifxtop runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// The demo's mutex contention, 20 s in: sid 811 has held `free_lock` while two dozen wait.
#[test]
fn the_mutex_advice_says_what_is_true() {
    let v = demo_json("535");
    let f = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["kind"] == "mutex_contention")
        .expect("the mutex contention");
    let action = f["action"].as_str().expect("action");
    let summary = f["summary"].as_str().expect("summary");
    assert!(!action.contains("for an instant"), "{action}");
    assert!(action.contains("not an instant"), "{action}");
    // Who holds it, what it is doing, how many wait and for how long.
    let holder = f["culprit"]["sids"][0].as_u64().expect("the holder");
    assert!(action.starts_with(&format!("sid {holder} (")), "{action}");
    assert!(action.contains("holds mutex free_lock"), "{action}");
    let waiting = summary
        .split("contention: ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .expect("the count in the summary");
    assert!(
        action.contains(&format!("{waiting} wait for it")),
        "{action} / {summary}"
    );
    let longest = f["for_s"].as_f64().expect("for_s");
    assert!(longest >= 5.0, "{f}");
    assert!(action.contains("the longest "), "{action}");
    assert!(
        action.contains(&format!("onstat -g ses {holder}")),
        "{action}"
    );
    // The holder's own advice (the head blockers' list, the session screen) says the same.
    let head = v["heads"]
        .as_array()
        .expect("heads")
        .iter()
        .find(|h| h["sid"] == holder)
        .expect("the holder heads its waiters");
    let words = head["action"].as_str().expect("the holder's action");
    assert!(!words.contains("for an instant"), "{words}");
    assert!(words.contains("holds mutex free_lock"), "{words}");
    assert!(words.contains("not an instant"), "{words}");
}
