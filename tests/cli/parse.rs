//! CLI tests of `ifxtop parse KIND [FILE]`: JSON on success (exit 0), one line naming line and
//! column for input of the wrong kind (exit 2), clap's usage error for an unknown kind, exit 1
//! for a file that cannot be read.

// Tests fail by panicking; `expect` says what was missing.
#![allow(clippy::expect_used)]

use crate::common::{fixture, fixture_path};
use crate::run::ifxtop_parse;
use serde_json::Value;
use std::process::Output;

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

/// The one line on stderr of a failed parse.
fn error_line(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "stderr: {err}");
    assert!(out.stdout.is_empty());
    err
}

#[test]
fn onstat_u_from_a_file_prints_the_documented_fields() {
    let out = ifxtop_parse(
        &[
            "onstat-u",
            &fixture_path("onstat-u/ifxtop-banner-ckpt-req-critical-section.txt"),
        ],
        None,
    );
    let v = json_of(&out);
    assert_keys(
        &v,
        &[
            "header",
            "offline",
            "threads",
            "active",
            "total",
            "max_concurrent",
            "unparsed",
        ],
    );
    assert_eq!(v["header"]["mode_flags"][0], "CKPT REQ");
    assert_eq!(v["header"]["blocked"], "CKPT");
    assert_eq!(
        (v["active"].as_u64(), v["total"].as_u64()),
        (Some(9), Some(2048))
    );
    assert_eq!(v["max_concurrent"], 311);
    let threads = v["threads"].as_array().expect("threads");
    assert_eq!(threads.len(), 9);
    for t in threads {
        assert_keys(
            t,
            &[
                "address",
                "flags",
                "wait_reason",
                "sessid",
                "user",
                "tty",
                "wait",
                "tout",
                "locks",
                "nreads",
                "nwrites",
            ],
        );
    }
    let c = &threads[4];
    assert_eq!(c["address"], "26e8a03148");
    assert_eq!(c["flags"], "C--P---");
    assert_eq!(c["wait_reason"], "checkpoint");
    assert_eq!(c["sessid"], 4102);
    assert_eq!(c["user"], "appsrv");
    assert_eq!(c["tty"], Value::Null);
    assert_eq!(c["wait"], "26e8a0f2a0");
    assert_eq!(
        (c["tout"].as_i64(), c["locks"].as_u64()),
        (Some(0), Some(3))
    );
    assert_eq!(
        (c["nreads"].as_u64(), c["nwrites"].as_u64()),
        (Some(88120), Some(1204))
    );
    assert_eq!(threads[0]["wait"], Value::Null);
    assert_eq!(threads[0]["wait_reason"], Value::Null);
}

#[test]
fn stdin_gives_the_same_json_as_the_file() {
    let rel = "onstat-u/oninit-onstat-u.txt";
    let from_file = json_of(&ifxtop_parse(&["onstat-u", &fixture_path(rel)], None));
    let from_stdin = json_of(&ifxtop_parse(&["onstat-u"], Some(&fixture(rel))));
    assert_eq!(from_file, from_stdin);
    assert_eq!(from_stdin["threads"].as_array().map(Vec::len), Some(14));
}

#[test]
fn onstat_x_prints_pools_and_buffers() {
    // The kind is accepted in any case, as the command spells it.
    let rel = "onstat-X/ifxtop-several-waiters-continuation-lines.txt";
    let v = json_of(&ifxtop_parse(&["onstat-X", &fixture_path(rel)], None));
    assert_keys(&v, &["header", "offline", "pools", "unparsed"]);
    let pools = v["pools"].as_array().expect("pools");
    assert_eq!(pools.len(), 2);
    for p in pools {
        assert_keys(
            p,
            &[
                "page_size",
                "buffers",
                "modified",
                "total",
                "hash_buckets",
                "buffer_size",
            ],
        );
    }
    assert_eq!(pools[0]["page_size"], 2048);
    assert_eq!(pools[0]["hash_buckets"], 4_194_304);
    let b = &pools[0]["buffers"][1];
    assert_keys(
        b,
        &[
            "address", "owner", "flags", "chunk", "page", "nslots", "pgflgs", "waiters",
        ],
    );
    assert_eq!(b["address"], "2a1c0f9a0");
    assert_eq!(b["owner"], "ffffffffffffffff");
    assert_eq!(b["flags"], "80");
    assert_eq!(
        (b["chunk"].as_u64(), b["page"].as_u64()),
        (Some(3), Some(77215))
    );
    assert_eq!(b["pgflgs"], "890");
    assert_eq!(b["nslots"], 91);
    assert_eq!(b["waiters"].as_array().map(Vec::len), Some(5));
    assert_eq!(b["waiters"][4], "2b0e4f3c0");
    assert_eq!(pools[0]["buffers"][2]["owner"], Value::Null);
}

#[test]
fn onstat_g_con_prints_conditions() {
    let v = json_of(&ifxtop_parse(
        &["onstat-g-con"],
        Some(&fixture("onstat-g-con/oninit-onstat-g-con.txt")),
    ));
    let conds = v["conditions"].as_array().expect("conditions");
    assert_eq!(conds.len(), 5);
    for c in conds {
        assert_keys(c, &["cid", "addr", "name", "waiter", "waittime"]);
    }
    assert_eq!(conds[0]["cid"], 920);
    assert_eq!(conds[0]["addr"], "14aa0588");
    assert_eq!(conds[0]["name"], "sm_read");
    assert_eq!(conds[0]["waiter"], 213);
    assert_eq!(conds[0]["waittime"], 187);
}

#[test]
fn the_wrong_kind_exits_2_with_one_line_naming_line_and_column() {
    let rel = "onstat-X/oninit-onstat-X-two-pools.txt";
    let out = ifxtop_parse(&["onstat-u", &fixture_path(rel)], None);
    assert_eq!(out.status.code(), Some(2));
    let err = error_line(&out);
    assert!(err.contains("is not onstat-u output"), "{err}");
    assert!(err.contains("line 1, column 1"), "{err}");
    assert!(err.contains("Buffers (Access)"), "{err}");
    assert!(err.contains(&fixture_path(rel)), "{err}");

    let out = ifxtop_parse(
        &["onstat-g-con"],
        Some(&fixture("onstat-u/oninit-onstat-u.txt")),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = error_line(&out);
    assert!(err.contains("<stdin> is not onstat-g-con output"), "{err}");
    assert!(err.contains("line 1, column 1"), "{err}");
}

#[test]
fn garbage_exits_2_pointing_at_where_it_stopped() {
    let out = ifxtop_parse(&["onstat-X"], Some("\n\nthis is not onstat\n"));
    assert_eq!(out.status.code(), Some(2));
    let err = error_line(&out);
    assert!(err.contains("line 3, column 1"), "{err}");
    assert!(err.contains("\"this is not onstat\""), "{err}");
    // An onstat -X row given as onstat -u: the flags column is where it stops.
    let out = ifxtop_parse(
        &["onstat-u"],
        Some("2443cd7e8 ffffffffffffffff 80 25:1523486 cce17b000 101 2801 0 0\n"),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = error_line(&out);
    assert!(err.contains("line 1, column 11"), "{err}");
    assert!(err.contains("7 flag characters"), "{err}");
}

#[test]
fn empty_input_exits_2() {
    for kind in ["onstat-u", "onstat-x", "onstat-g-con"] {
        let out = ifxtop_parse(&[kind], Some(""));
        assert_eq!(out.status.code(), Some(2), "{kind}");
        let err = error_line(&out);
        assert!(err.contains("line 1, column 1"), "{err}");
        assert!(err.contains("end of input"), "{err}");
    }
}

#[test]
fn an_off_line_server_is_not_an_error() {
    let out = ifxtop_parse(
        &["onstat-u"],
        Some("\nshared memory not initialized for INFORMIXSERVER 'ol_prod'\n"),
    );
    let v = json_of(&out);
    assert_eq!(
        v["offline"],
        "shared memory not initialized for INFORMIXSERVER 'ol_prod'"
    );
    assert_eq!(v["threads"].as_array().map(Vec::len), Some(0));
}

#[test]
fn an_unknown_kind_is_a_usage_error() {
    let out = ifxtop_parse(&["onstat-q"], Some(""));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: invalid value 'onstat-q' for '<KIND>'"),
        "{err}"
    );
    assert!(
        err.contains("unknown kind 'onstat-q'; one of: onstat-u, onstat-X"),
        "{err}"
    );
    assert!(err.contains("try '--help'"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_missing_file_exits_1() {
    let out = ifxtop_parse(
        &["onstat-u", "tests/fixtures/onstat-u/no-such-file.txt"],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let err = error_line(&out);
    assert!(err.contains("no-such-file.txt"), "{err}");
}

/// `ifxtop parse --help` names every kind the parsers know (the list is not kept by hand).
#[test]
fn parse_help_names_every_kind() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(["parse", "--help"])
        .output()
        .expect("ifxtop runs");
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout).replace(['\n', ' '], "");
    for k in ifxtop::source::kinds::kinds() {
        assert!(help.contains(k.name), "{} is not in: {help}", k.name);
    }
    assert!(
        help.contains("onstat-D,") && help.contains("onstat-g-rea"),
        "{help}"
    );
}
