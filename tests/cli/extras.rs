//! CLI tests of `ifxtop parse` for `onstat-b`, `onstat-d`, `onstat-t` and `onstat-g-ckp`: JSON
//! with the documented fields on success (exit 0), one line naming line and column for input of
//! the wrong kind (exit 2).

// Tests fail by panicking; `expect` says what was missing.
#![allow(clippy::expect_used)]

use crate::common::{fixture, fixture_path};
use crate::run::ifxtop_parse;
use serde_json::Value;
use std::process::Output;

/// The JSON of a successful parse (exit 0, nothing on stderr).
fn json_of(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

fn assert_keys(v: &Value, keys: &[&str]) {
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"));
    for k in keys {
        assert!(obj.contains_key(*k), "missing {k} in {v}");
    }
}

/// The one line on stderr of a failed parse (exit 2, nothing on stdout).
fn error_line(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(2),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "stderr: {err}");
    assert!(out.stdout.is_empty());
    err
}

#[test]
fn onstat_b_prints_pools_buffers_and_footers() {
    // The kind is accepted as the command spells it (`-B`).
    let v = json_of(&ifxtop_parse(
        &[
            "onstat-B",
            &fixture_path("onstat-B/hcl-onedb-2.0-adr-0501-aix64.txt"),
        ],
        None,
    ));
    assert_keys(&v, &["header", "offline", "pools", "elisions", "unparsed"]);
    assert_eq!(v["elisions"], 4);
    let pool = &v["pools"][0];
    assert_keys(
        pool,
        &[
            "page_size",
            "buffers",
            "modified",
            "resident",
            "total",
            "hash_buckets",
            "buffer_size",
        ],
    );
    assert_eq!(
        (pool["page_size"].as_u64(), pool["buffer_size"].as_u64()),
        (Some(4096), Some(4096))
    );
    let b = &pool["buffers"][4];
    assert_keys(
        b,
        &[
            "address",
            "userthread",
            "flags",
            "chunk",
            "page",
            "packed",
            "memaddr",
            "nslots",
            "pgflgs",
            "xflgs",
            "owner",
            "waitlist",
        ],
    );
    assert_eq!(b["address"], "700000010933f88");
    assert_eq!(b["owner"], "ffffffffffffffff");
    assert_eq!(
        (b["chunk"].as_u64(), b["page"].as_u64()),
        (Some(1), Some(44348))
    );
    assert_eq!(b["pgflgs"], "890");
    assert_eq!(b["waitlist"], Value::Null);
}

#[test]
fn onstat_d_prints_spaces_chunks_and_notes() {
    let v = json_of(&ifxtop_parse(
        &["onstat-d"],
        Some(&fixture("onstat-d/ibm-kc-14.10-adref-0504.txt")),
    ));
    assert_keys(
        &v,
        &[
            "header",
            "dbspaces",
            "dbspaces_active",
            "dbspaces_maximum",
            "chunks",
            "chunks_active",
            "chunks_maximum",
            "notes",
            "expanded_chunk_capacity",
            "unparsed",
        ],
    );
    assert_eq!(v["header"]["version"], "14.10.F");
    let space1 = &v["dbspaces"][1];
    assert_eq!(space1["name"], "space1");
    assert_eq!(space1["pgsize"], 2048);
    assert_eq!(space1["flag_codes"], "N  BA");
    assert_eq!(space1["flags"], "20001");
    let c2 = &v["chunks"][1];
    assert_eq!(
        (c2["chunk"].as_u64(), c2["dbs"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(c2["bpages"], Value::Null);
    assert_eq!(c2["pathname"], "/work3/AB/chunk5");
    assert_eq!(v["chunks_maximum"], 32766);
    assert_eq!(v["expanded_chunk_capacity"], "always");
    assert_eq!(v["unparsed"].as_array().map(Vec::len), Some(0));
}

#[test]
fn onstat_d_lists_the_lines_it_did_not_understand() {
    let rel = "onstat-d/gbase8s-12.10-csdn-sbspace-metadata-collapsed-truncated.txt";
    let v = json_of(&ifxtop_parse(&["onstat-d", &fixture_path(rel)], None));
    // GBase's licence notice is read with the banner it stands above.
    assert_eq!(v["unparsed"], serde_json::json!([]));
    assert_eq!(
        v["header"]["license"],
        "Your evaluation license will expire on 2021-08-27 00:00:00"
    );
    assert_eq!(v["chunks"][5]["metadata"]["free"], 25057);
    // A line it does not understand (here after the last chunk) is listed with its number.
    let text = std::fs::read_to_string(fixture_path(rel)).expect("fixture");
    let odd: String = text
        .lines()
        .enumerate()
        .flat_map(|(i, l)| {
            let extra = (i == 19).then_some("not a chunk row at all\n");
            [format!("{l}\n")]
                .into_iter()
                .chain(extra.map(String::from))
        })
        .collect();
    let v = json_of(&ifxtop_parse(&["onstat-d"], Some(&odd)));
    assert_eq!(v["unparsed"][0]["line"], 21);
    assert_eq!(v["unparsed"][0]["text"], "not a chunk row at all");
}

#[test]
fn onstat_t_prints_tblspaces() {
    let v = json_of(&ifxtop_parse(
        &[
            "onstat-t",
            &fixture_path("onstat-t/ibm-kc-12.10-adref-0607.txt"),
        ],
        None,
    ));
    assert_keys(
        &v,
        &[
            "header",
            "tblspaces",
            "active",
            "total",
            "hash_buckets",
            "elisions",
            "unparsed",
        ],
    );
    let t = &v["tblspaces"][1];
    assert_keys(
        t,
        &[
            "n", "address", "flags", "ucnt", "tblnum", "chunk", "page", "packed", "npages",
            "nused", "npdata", "nrows", "nextns", "resident",
        ],
    );
    assert_eq!(t["tblnum"], "1000df");
    assert_eq!(
        (t["chunk"].as_u64(), t["page"].as_u64()),
        (Some(1), Some(236))
    );
    assert_eq!(t["n"], 195);
    assert_eq!(
        (v["active"].as_u64(), v["total"].as_u64()),
        (Some(2), Some(221))
    );
}

#[test]
fn onstat_g_ckp_prints_checkpoints_and_summary() {
    let v = json_of(&ifxtop_parse(
        &["onstat-g-ckp"],
        Some(&fixture("onstat-g-ckp/ibm-kc-12.10-adr-0518.txt")),
    ));
    assert_keys(
        &v,
        &[
            "header",
            "auto_checkpoints",
            "rto_server_restart_s",
            "estimated_recovery_s",
            "checkpoints",
            "summary",
            "unparsed",
        ],
    );
    assert_eq!(v["auto_checkpoints"], true);
    let c = &v["checkpoints"][3];
    assert_eq!(c["interval"], 4);
    assert_eq!(c["blocking"], true);
    assert_eq!(c["trigger"], "User");
    assert_eq!(c["lsn"], "10:19c018");
    assert_eq!(c["llog_pages"], 20412);
    assert_eq!(v["checkpoints"][4]["total_time"], 54.8);
    assert_eq!(v["summary"]["max_plog_pages_per_sec"], 8796);
}

#[test]
fn garbage_exits_2_with_one_line_naming_line_and_column() {
    for kind in ["onstat-b", "onstat-d", "onstat-t", "onstat-g-ckp"] {
        let out = ifxtop_parse(&[kind], Some("\n\nthis is not onstat\n"));
        let err = error_line(&out);
        assert!(
            err.contains(&format!("<stdin> is not {kind} output")),
            "{err}"
        );
        assert!(err.contains("line 3, column 1"), "{err}");
        assert!(err.contains("\"this is not onstat\""), "{err}");

        let out = ifxtop_parse(&[kind], Some(""));
        let err = error_line(&out);
        assert!(err.contains("line 1, column 1"), "{err}");
        assert!(err.contains("end of input"), "{err}");
    }
}

#[test]
fn the_wrong_kind_exits_2_pointing_at_where_it_stopped() {
    // An onstat -t sample given as onstat -d: the title is unknown, then the rows miss the
    // dbspace flag word.
    let rel = "onstat-t/ibm-kc-12.10-adref-0607.txt";
    let out = ifxtop_parse(&["onstat-d", &fixture_path(rel)], None);
    let err = error_line(&out);
    assert!(err.contains(&fixture_path(rel)), "{err}");
    assert!(err.contains("is not onstat-d output"), "{err}");
    assert!(err.contains("line 1, column 1"), "{err}");
    // A checkpoint row without its dirty-buffer count.
    let row = "4        18:42:44*User     10:19c018  0.0    0.0    0.0    1      0.0   0.0   0.0\n";
    let out = ifxtop_parse(&["onstat-g-ckp"], Some(row));
    let err = error_line(&out);
    assert!(
        err.contains(&format!("line 1, column {}", row.len())),
        "{err}"
    );
    assert!(err.contains("more columns"), "{err}");
}

/// Without a terminal (`ssh host ifxtop` without -t, cron, a pipe) the live screen says what it
/// needs and names `ifxtop snapshot`, instead of "No such device or address".
#[test]
fn no_terminal_names_what_it_needs_and_the_snapshot() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .arg("--demo")
        .env("TERM", "xterm")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ifxtop runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("needs a terminal")
            && err.contains("ssh -t")
            && err.contains("ifxtop snapshot"),
        "{err}"
    );
    assert!(!err.contains("os error"), "{err}");
    // Nothing was drawn: no escape sequence reached the pipe.
    assert!(!out.stdout.contains(&0x1b), "{:?}", out.stdout);
}

/// `TERM=dumb` cannot draw the screen: refused with the same way out.
#[test]
fn a_dumb_terminal_is_refused() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .arg("--demo")
        .env("TERM", "dumb")
        .output()
        .expect("ifxtop runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("TERM=dumb") && err.contains("ifxtop snapshot"),
        "{err}"
    );
}

/// docs/keys.md names every action the config's `[keys]` table accepts.
#[test]
fn the_docs_list_every_action_name() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/keys.md"))
        .expect("docs/keys.md");
    let keys = doc
        .split("table binds keys to these action names")
        .nth(1)
        .and_then(|t| t.split("Key names:").next())
        .expect("the action list of docs/keys.md");
    let listed: std::collections::BTreeSet<String> = keys
        .split('`')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect();
    let actions: std::collections::BTreeSet<String> = ifxtop::tui::keymap::Keymap::default()
        .bindings()
        .keys()
        .map(|a| serde_json::to_value(a).expect("name"))
        .filter_map(|v| v.as_str().map(String::from))
        .collect();
    assert_eq!(listed, actions);
}

/// `--help` says how to get help inside (`?`, F1) and names `ifxtop snapshot` for when there is
/// no terminal.
#[test]
fn help_names_the_keys_inside_and_the_snapshot() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .arg("--help")
        .output()
        .expect("ifxtop runs");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("? or F1"), "{text}");
    assert!(text.contains("ifxtop snapshot"), "{text}");
}

/// `snapshot --demo-at 290` (the live screen's flag, typed by habit) points to `--at`, which
/// means the same there, instead of clap's tip for `--demo`.
#[test]
fn snapshot_demo_at_points_to_at() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(["snapshot", "--demo-at", "290"])
        .env_remove("INFORMIXSERVER")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ifxtop runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--demo --at 290"), "{err}");
    assert!(!err.contains("a similar argument exists"), "{err}");
}

/// Arguments and config values that name nothing are refused before anything runs, and the
/// message names where the bad value came from.
#[test]
fn bad_arguments_and_config_values_are_refused_by_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ifxtop"))
            .args(args)
            .env("TERM", "xterm")
            .env_remove("INFORMIXSERVER")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("ifxtop runs");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for args in [
        &["--port", "0"][..],
        &["--server", ""],
        &["snapshot", "--port", "0"],
        &["snapshot", "--server", ""],
    ] {
        let (code, err) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains("--port") || err.contains("--server"),
            "{args:?}: {err}"
        );
    }
    let config = |text: &str| {
        let p = dir.path().join("config.toml");
        std::fs::write(&p, text).expect("write config");
        p.display().to_string()
    };
    // `interval = 0` in the file: the message names the file's key, not `--interval`.
    let p = config("interval = 0\n");
    let (code, err) = run(&["--demo", "--config", &p]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("interval in") && err.contains(&p), "{err}");
    assert!(!err.contains("--interval"), "{err}");
    for (text, want) in [
        ("ports = [0]\n", "port 0"),
        (
            "[keys]\nquit = [\"ctrl-alt-shift-superX\"]\n",
            "unknown key",
        ),
        ("[keys]\nquit = [\"?\"]\n", "bound to both"),
        ("[keys]\nhelp = [\"ctrl-c\"]\n", "Ctrl-C always quits"),
    ] {
        let p = config(text);
        let (code, err) = run(&["--demo", "--config", &p]);
        assert_eq!(code, Some(1), "{text}: {err}");
        assert!(err.contains(want), "{text}: {err}");
    }
}

/// `snapshot --replay` of garbage, an empty file or a directory: exit 2, and one short message
/// with the first problems and a count (a garbage file used to print a line per bad line).
#[test]
fn snapshot_replay_of_garbage_says_so_briefly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let garbage = dir.path().join("garbage.jsonl");
    std::fs::write(&garbage, "not json at all\n".repeat(20_000)).expect("write");
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").expect("write");
    for (path, want) in [
        (garbage.clone(), "20002 problems: line 1: not JSON"),
        (empty, "nothing to replay"),
        (dir.path().to_path_buf(), "a directory, not a regular file"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ifxtop"))
            .arg("snapshot")
            .arg("--replay")
            .arg(&path)
            .output()
            .expect("ifxtop runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", path.display());
        assert!(out.stdout.is_empty(), "{}", path.display());
        assert!(err.contains(want), "{}: {err}", path.display());
        assert!(
            err.len() < 1000,
            "{}: {} bytes: {err}",
            path.display(),
            err.len()
        );
    }
}
