//! Tests for the `onstat -g con` parser: fixtures snapshotted and checked, errors, shuffled lines
//! each counted once (never panicking on anything is `robust`'s).

// Tests fail by panicking; `expect` says what was missing.
#![allow(clippy::expect_used)]

use crate::common::kind;
use crate::common::{fixture, fixtures_in};
use ifxtop::ids::{Addr, Tid};
use ifxtop::parsers::onstat_g_con::{self, OnstatGCon};
use proptest::prelude::*;

fn parse_fixture(stem: &str) -> OnstatGCon {
    onstat_g_con::parse(&fixture(&format!("onstat-g-con/{stem}.txt")))
        .unwrap_or_else(|e| panic!("{stem}: {e}"))
}

#[test]
fn every_fixture_matches_its_snapshot() {
    let all = fixtures_in("onstat-g-con");
    assert!(all.len() >= 2, "fixtures: {}", all.len());
    for (stem, text) in all {
        let json = kind("onstat-g-con")
            .parse_to_json(&text)
            .unwrap_or_else(|e| panic!("{stem}: {e}"));
        crate::snap_json!(format!("parse__onstat-g-con__{stem}"), &json);
    }
}

#[test]
fn oninit_page_with_padding() {
    let c = parse_fixture("oninit-onstat-g-con");
    assert!(c.unparsed.is_empty());
    assert_eq!(c.conditions.len(), 5);
    let first = &c.conditions[0];
    assert_eq!(first.cid, 920);
    assert_eq!(first.addr, Addr(0x14aa_0588));
    assert_eq!(first.name, "sm_read");
    assert_eq!(first.waiter, Tid(213));
    assert_eq!(first.waittime, 187);
    let names: Vec<_> = c.conditions.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["sm_read", "netnorm", "netnorm", "netnorm", "netnorm"]
    );
    let last = &c.conditions[4];
    assert_eq!(
        (last.cid, last.addr, last.waiter, last.waittime),
        (2508, Addr(0x1477_b880), Tid(359), 2994)
    );
}

#[test]
fn seed_row_with_a_10_digit_address() {
    let c = parse_fixture("ifxtop-seed-netnorm-10-digit");
    assert_eq!(c.conditions.len(), 1);
    let r = &c.conditions[0];
    assert_eq!((r.cid, r.addr), (5789, Addr(0x26_e67c_d298)));
    assert_eq!(
        (r.name.as_str(), r.waiter, r.waittime),
        ("netnorm", Tid(84353), 0)
    );
}

#[test]
fn rows_alone_and_banner() {
    let c = onstat_g_con::parse(
        "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 3 days 04:05:06 -- 2457600 Kbytes\n\n\
         5789 26e67cd298 netnorm 84353 0\n7 14aa0588 backend:3 12 1\n",
    )
    .expect("rows");
    assert!(c.header.is_some());
    assert_eq!(c.conditions.len(), 2);
    assert_eq!(c.conditions[1].name, "backend:3");
}

#[test]
fn title_and_header_alone_mean_no_waiters() {
    let c = onstat_g_con::parse(
        "Conditions with waiters:\ncid      addr     name               waiter   waittime\n",
    )
    .expect("empty table");
    assert!(c.conditions.is_empty());
    assert!(c.unparsed.is_empty());
}

#[test]
fn offline() {
    let c = onstat_g_con::parse("shared memory not initialized for INFORMIXSERVER 'ol_prod'\n")
        .expect("offline");
    assert!(c.offline.is_some());
}

#[test]
fn lines_not_understood_are_kept() {
    let c = onstat_g_con::parse(
        "Conditions with waiters:\ncid addr name waiter waittime\n920 14aa0588 sm_read 213 187\n.....\n2370 14480848 netnorm 349\n",
    )
    .expect("mostly -g con");
    let lines: Vec<_> = c.unparsed.iter().map(|u| u.line).collect();
    assert_eq!(lines, [4, 5]);
    assert_eq!(c.conditions.len(), 1);
}

#[test]
fn errors_name_line_and_column() {
    let e = onstat_g_con::parse("").expect_err("empty");
    assert_eq!((e.line, e.column), (1, 1));
    assert!(
        e.expected.contains("cid addr name waiter waittime"),
        "{}",
        e.expected
    );
    let e = onstat_g_con::parse(&fixture("onstat-u/oninit-onstat-u.txt")).expect_err("-u");
    assert_eq!((e.line, e.column), (1, 1));
    let e =
        onstat_g_con::parse(&fixture("onstat-X/oninit-onstat-X-two-pools.txt")).expect_err("-X");
    assert_eq!((e.line, e.column), (1, 1));
    // A cid followed by something that is no address.
    let e = onstat_g_con::parse("920 xyz sm_read 213 187").expect_err("addr");
    assert_eq!((e.line, e.column), (1, 5));
    let e = onstat_g_con::parse("920 14aa0588 213 187").expect_err("no name");
    assert!(e.expected.contains("condition name"), "{}", e.expected);
}

fn all_texts() -> Vec<String> {
    fixtures_in("onstat-g-con")
        .into_iter()
        .map(|(_, t)| t)
        .collect()
}

proptest! {
    #[test]
    fn shuffled_and_duplicated_lines_do_not_panic(
        pick in 0usize..64,
        order in proptest::collection::vec(0usize..64, 0..30),
    ) {
        let texts = all_texts();
        let text = &texts[pick % texts.len()];
        let lines: Vec<&str> = text.lines().collect();
        if !lines.is_empty() {
            let mixed: Vec<&str> = order.iter().map(|i| lines[i % lines.len()]).collect();
            if let Ok(c) = onstat_g_con::parse(&mixed.join("\n")) {
                prop_assert!(c.conditions.len() + c.unparsed.len() <= mixed.len());
            }
        }
    }
}
