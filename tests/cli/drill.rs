//! CLI tests of `ifxtop parse` for the drill-down kinds (`onstat-g-ath`, `onstat-g-ntt`,
//! `onstat-k`, `onstat-g-ses`, `onstat-g-sql`): JSON with the right values on success (exit 0),
//! one line naming line and column on garbage (exit 2).

// Tests fail by panicking; `expect` says what was missing.
#![allow(clippy::expect_used)]

use crate::common::{fixture, fixtures_dir};
use crate::run::ifxtop_parse;
use serde_json::Value;

/// `ifxtop parse KIND tests/fixtures/REL`: exit 0, nothing on stderr, JSON on stdout.
fn parse_file(kind: &str, rel: &str) -> Value {
    let path = fixtures_dir().join(rel).display().to_string();
    let out = ifxtop_parse(&[kind, &path], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{kind} {rel}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(
        v["unparsed"].as_array().map(Vec::len),
        Some(0),
        "{rel}: {v}"
    );
    v
}

/// The element of `list` whose `key` is `value`.
fn find<'a>(list: &'a Value, key: &str, value: u64) -> &'a Value {
    list.as_array()
        .and_then(|a| a.iter().find(|x| x[key].as_u64() == Some(value)))
        .unwrap_or_else(|| panic!("no {key} {value} in {list}"))
}

#[test]
fn onstat_g_ath_prints_threads_with_rstcb_and_decoded_state() {
    let v = parse_file(
        "onstat-g-ath",
        "onstat-g-ath/oninit-onstat-g-ath-truncated.txt",
    );
    assert_eq!(v["threads"].as_array().map(Vec::len), Some(22));
    assert_eq!(v["elisions"], serde_json::json!([17]));
    let t = find(&v["threads"], "tid", 213);
    assert_eq!(t["tcb"], "14c91ec0");
    assert_eq!(t["rstcb"], "14a58b98");
    assert_eq!(t["prty"], 2);
    assert_eq!(t["status"], "cond wait sm_read");
    assert_eq!(t["state"]["kind"], "cond_wait");
    assert_eq!(t["state"]["name"], "sm_read");
    assert_eq!(t["vp_class"], "1cpu");
    assert_eq!(t["name"], "sqlexec");
    let t = find(&v["threads"], "tid", 2);
    assert_eq!(t["rstcb"], Value::Null);
    assert_eq!(t["name"], "lio vp 0");
    assert_eq!(t["state"]["kind"], "sleeping");
    assert_eq!(t["state"]["secs"], Value::Null);
}

#[test]
fn onstat_g_ntt_prints_client_addresses() {
    let v = parse_file("onstat-g-ntt", "onstat-g-ntt/ifxtop-clients-ipv4.txt");
    let t = find(&v["threads"], "sid", 812);
    assert_eq!(t["netscb"], "c000000011f2a028");
    assert_eq!(t["thread"], "sqlexec");
    assert_eq!(t["client"]["host"], "10.20.4.31");
    assert_eq!(t["client"]["port"], 51234);
    assert_eq!(t["client"]["proto"], "soctcp");
    assert_eq!(t["date"], "05/14/2024");
    let v = parse_file(
        "onstat-g-ntt",
        "onstat-g-ntt/oninit-onstat-g-ntt-truncated.txt",
    );
    let t = find(&v["threads"], "sid", 8);
    assert_eq!(t["client"]["host"], "theoden");
    assert_eq!(t["write"], Value::Null);
}

#[test]
fn onstat_k_prints_locks_with_hex_partnums_and_the_footer() {
    let v = parse_file("onstat-k", "onstat-k/ibm-kc-12.10-adref-0597.txt");
    let l = &v["locks"][0];
    assert_eq!(l["address"], "a095f78");
    assert_eq!(l["owner"], "a4d9e68");
    assert_eq!(l["wtlist"], Value::Null);
    assert_eq!(l["type"], "HDR+S");
    assert_eq!(l["tblsnum"], "100002");
    assert_eq!(l["rowid"], "203");
    assert_eq!(l["key"], "0");
    assert_eq!(
        (v["active"].as_u64(), v["total"].as_u64()),
        (Some(1), Some(2000))
    );
    assert_eq!(
        (v["hash_buckets"].as_u64(), v["overflows"].as_u64()),
        (Some(2048), Some(0))
    );
    let v = parse_file("onstat-k", "onstat-k/ifxtop-lock-chain-16-digit.txt");
    assert_eq!(v["locks"][1]["wtlist"], "c0000000101a74c8");
}

#[test]
fn onstat_g_ses_prints_the_session_and_its_detail() {
    let v = parse_file("onstat-g-ses", "onstat-g-ses/ifxtop-ses-detail-12.10.txt");
    let s = &v["sessions"][0];
    assert_eq!(
        (s["sid"].as_u64(), s["pid"].as_u64()),
        (Some(812), Some(20544))
    );
    assert_eq!(s["hostname"], "app03");
    let d = &v["detail"];
    assert_eq!(d["program"], "/opt/app/bin/order_entry");
    assert_eq!(d["threads"][0]["rstcb"], "4b4ad628");
    assert_eq!(d["threads"][0]["status"], "cond wait netnorm -");
    assert_eq!(d["sql"]["lock_mode"], "Wait 30");
    assert_eq!(
        d["current_sql"],
        "update customer set balance = balance + 10.00\nwhere customer_num = 104"
    );
    let v = parse_file("onstat-g-ses", "onstat-g-ses/ibm-kc-12.10-adr-0574.txt");
    assert_eq!(v["terminated"][0]["reason"], "session limit txn time (60s)");
    assert_eq!(v["detail"], Value::Null);
}

#[test]
fn onstat_g_sql_prints_the_sql_state_and_statements() {
    let v = parse_file("onstat-g-sql", "onstat-g-sql/ifxtop-sql-812.txt");
    let s = &v["sessions"][0];
    assert_eq!(s["sid"], 812);
    assert_eq!(s["stmt_type"], "UPDATE");
    assert_eq!(s["database"], "stores");
    assert_eq!(s["isolation"], "CR");
    assert_eq!(s["lock_mode"], "Wait 30");
    assert_eq!(
        (s["sql_error"].as_i64(), s["isam_error"].as_i64()),
        (Some(0), Some(0))
    );
    assert_eq!(s["fe_version"], "9.24");
    assert_eq!(v["statement_name"], "slctcur");
    assert_eq!(v["current_sql_id"], 5);
    assert_eq!(
        v["last_parsed_sql"],
        "update customer set balance = balance + 10.00\nwhere customer_num = 104"
    );
}

#[test]
fn garbage_exits_2_with_one_line_naming_line_and_column() {
    let cases = [
        (
            "onstat-g-ath",
            "213 14c91ec0 zz98 2 cond wait sm_read 1cpu sqlexec",
            14,
        ),
        ("onstat-g-ntt", "14e2a8c0 sqlexec x4448 15:56:35", 18),
        ("onstat-k", "a095f78 0 a4d9e68 0 hdr+s 100002 203 0", 21),
        (
            "onstat-g-ses",
            "23 informix - 17602 carson 1 57344 4896x off",
            36,
        ),
        ("onstat-g-sql", "812 UPDATE stores CR Wait 30 0 0", 22),
    ];
    for (kind, line, column) in cases {
        let out = ifxtop_parse(&[kind], Some(&format!("\n{line}\n")));
        assert_eq!(out.status.code(), Some(2), "{kind}");
        assert!(out.stdout.is_empty(), "{kind}");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(err.lines().count(), 1, "{kind}: {err}");
        assert!(
            err.contains(&format!("<stdin> is not {kind} output")),
            "{err}"
        );
        assert!(
            err.contains(&format!("line 2, column {column}")),
            "{kind}: {err}"
        );
    }
}

#[test]
fn another_commands_output_exits_2() {
    let text = fixture("onstat-u/oninit-onstat-u.txt");
    for kind in [
        "onstat-g-ath",
        "onstat-g-ntt",
        "onstat-k",
        "onstat-g-ses",
        "onstat-g-sql",
    ] {
        let out = ifxtop_parse(&[kind], Some(&text));
        assert_eq!(out.status.code(), Some(2), "{kind}");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(err.lines().count(), 1, "{kind}: {err}");
        assert!(err.contains("line 1, column 1"), "{kind}: {err}");
        assert!(err.contains("address  flags"), "{kind}: {err}");
    }
}
