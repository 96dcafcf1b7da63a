//! Tests for the `onstat -X` parser: every fixture snapshotted and checked, several waiters,
//! packed pagenums, errors, and shuffled lines each counted once (never panicking on anything
//! is `robust`'s).

// Tests fail by panicking; `expect` says what was missing.
#![allow(clippy::expect_used)]

use crate::common::kind;
use crate::common::{fixture, fixtures_in};
use ifxtop::ids::Addr;
use ifxtop::parsers::onstat_x::{self, Buffer, OnstatX};
use proptest::prelude::*;

fn parse_fixture(stem: &str) -> OnstatX {
    onstat_x::parse(&fixture(&format!("onstat-X/{stem}.txt")))
        .unwrap_or_else(|e| panic!("{stem}: {e}"))
}

fn page_sizes(x: &OnstatX) -> Vec<u32> {
    x.pools.iter().map(|p| p.page_size).collect()
}

fn buffer(x: &OnstatX, address: u64) -> &Buffer {
    x.pools
        .iter()
        .flat_map(|p| &p.buffers)
        .find(|b| b.address == Addr(address))
        .unwrap_or_else(|| panic!("no buffer {address:x}"))
}

#[test]
fn every_fixture_matches_its_snapshot() {
    let all = fixtures_in("onstat-X");
    assert!(all.len() >= 5, "fixtures: {}", all.len());
    for (stem, text) in all {
        let json = kind("onstat-X")
            .parse_to_json(&text)
            .unwrap_or_else(|e| panic!("{stem}: {e}"));
        crate::snap_json!(format!("parse__onstat-X__{stem}"), &json);
    }
}

#[test]
fn oninit_two_pools_without_rows() {
    let x = parse_fixture("oninit-onstat-X-two-pools");
    assert!(x.unparsed.is_empty());
    assert_eq!(page_sizes(&x), [2048, 16384]);
    let p = &x.pools[0];
    assert!(p.buffers.is_empty());
    assert_eq!(
        (p.modified, p.total, p.hash_buckets, p.buffer_size),
        (Some(47), Some(3_000_000), Some(4_194_304), Some(2048))
    );
    let p = &x.pools[1];
    assert_eq!(
        (p.modified, p.total, p.hash_buckets, p.buffer_size),
        (Some(637), Some(500_000), Some(524_288), Some(16384))
    );
}

#[test]
fn hcl_doc_example_indented_without_blank_lines() {
    let x = parse_fixture("hcl-onedb-2.0-adr-0612-indented");
    assert!(x.unparsed.is_empty(), "{:?}", x.unparsed);
    assert_eq!(page_sizes(&x), [2048, 8192]);
    assert_eq!(x.pools[1].total, Some(1000));
    assert_eq!(x.pools[1].hash_buckets, Some(1024));
    assert!(x
        .pools
        .iter()
        .all(|p| p.buffers.is_empty() && p.modified == Some(0)));
}

#[test]
fn seed_four_pools_with_waiters() {
    let x = parse_fixture("ifxtop-seed-buffer-waits-4-pools");
    assert!(x.unparsed.is_empty());
    assert_eq!(page_sizes(&x), [2048, 4096, 8192, 16384]);
    let counts: Vec<_> = x.pools.iter().map(|p| p.buffers.len()).collect();
    assert_eq!(counts, [0, 2, 0, 17]);
    let b = buffer(&x, 0x2_443c_d7e8);
    assert_eq!(b.owner, Some(Addr(u64::MAX)));
    assert_eq!(
        (b.flags, b.chunk, b.page, b.packed),
        (0x80, 25, 1_523_486, false)
    );
    assert_eq!(b.memaddr, Some(Addr(0xc_ce17_b000)));
    assert_eq!((b.nslots, b.pgflgs, b.scount), (101, 0x2801, Some(0)));
    assert!(b.waiters.is_empty());
    let b = buffer(&x, 0x2_67ca_4628);
    assert_eq!((b.owner, b.flags, b.scount), (None, 0, Some(1)));
    let waited: Vec<_> = x
        .pools
        .iter()
        .flat_map(|p| &p.buffers)
        .filter(|b| !b.waiters.is_empty())
        .map(|b| (b.chunk, b.page, b.waiters.clone()))
        .collect();
    assert_eq!(
        waited,
        [
            (124, 25_597_176, vec![Addr(0x59_5236_d428)]),
            (162, 13_196_672, vec![Addr(0x62_4d39_d668)])
        ]
    );
    assert_eq!(buffer(&x, 0x3_7dc9_abe8).owner, Some(Addr(0x58_cc3c_7eb8)));
    let p = &x.pools[3];
    assert_eq!(
        (p.modified, p.total, p.hash_buckets),
        (Some(87962), Some(13_762_560), Some(16_777_216))
    );
}

#[test]
fn several_waiters_on_the_row_and_on_continuation_lines() {
    let x = parse_fixture("ifxtop-several-waiters-continuation-lines");
    assert!(x.unparsed.is_empty(), "{:?}", x.unparsed);
    assert_eq!(
        x.header.as_ref().and_then(|h| h.version.as_deref()),
        Some("12.10.FC8")
    );
    assert_eq!(page_sizes(&x), [2048, 16384]);
    assert_eq!(
        buffer(&x, 0x2_a1c0_e7e8).waiters,
        [
            Addr(0x2_b0e4_b9c8),
            Addr(0x2_b0e4_c210),
            Addr(0x2_b0e4_ca58)
        ]
    );
    assert_eq!(
        buffer(&x, 0x2_a1c0_f9a0).waiters,
        [
            Addr(0x2_b0e4_d2a0),
            Addr(0x2_b0e4_dae8),
            Addr(0x2_b0e4_e330),
            Addr(0x2_b0e4_eb78),
            Addr(0x2_b0e4_f3c0)
        ]
    );
    assert!(buffer(&x, 0x2_a1c1_0b58).waiters.is_empty());
    // Continuation lines belong to the last buffer of the right pool.
    assert_eq!(
        buffer(&x, 0x3_7dc9_abe8).waiters,
        [
            Addr(0x59_5236_d428),
            Addr(0x62_4d39_d668),
            Addr(0x58_cc3c_8700)
        ]
    );
    assert_eq!(x.pools[0].buffers.len(), 3);
    assert_eq!(x.pools[1].buffers.len(), 1);
}

#[test]
fn older_build_packed_pagenum_sharers_single_pool() {
    let x = parse_fixture("ifxtop-packed-pagenum-sharers-8-digit");
    assert!(x.unparsed.is_empty(), "{:?}", x.unparsed);
    assert_eq!(x.pools.len(), 1);
    let p = &x.pools[0];
    // No pool line: the page size is the footer's buffer size.
    assert_eq!(p.page_size, 2048);
    assert_eq!(p.buffer_size, Some(2048));
    let b = &p.buffers[0];
    assert_eq!((b.chunk, b.page, b.packed), (1, 0x955, true));
    assert_eq!(b.owner, Some(Addr(0x1a4d_9e68)));
    assert_eq!(b.scount, Some(0));
    let b = &p.buffers[1];
    assert_eq!((b.chunk, b.page, b.scount), (2, 0x1a, Some(2)));
    assert_eq!(b.waiters, [Addr(0x1a4d_9248)]);
    let b = &p.buffers[2];
    assert_eq!((b.chunk, b.page), (0x30, 0xc4f2));
    assert_eq!(b.waiters, [Addr(0x1a4d_9858), Addr(0x1a4d_a478)]);
}

#[test]
fn rows_without_any_header_use_todays_layout() {
    // `onstat -X | grep ffff` as the blog collapsed it.
    let x = onstat_x::parse(
        "3798d3388 ffffffffffffffff 80 124:25597176 4c2bf34000 710 890 0 595236d428\n",
    )
    .expect("row");
    assert_eq!(x.pools.len(), 1);
    assert_eq!(
        x.pools[0].page_size, 0,
        "unknown without a pool line or footer"
    );
    let b = &x.pools[0].buffers[0];
    assert_eq!((b.chunk, b.page), (124, 25_597_176));
    assert_eq!(b.waiters, [Addr(0x59_5236_d428)]);
}

#[test]
fn header_without_count_column() {
    let x = onstat_x::parse(
        "Buffers (Access)\naddress  owner    flags pagenum  memaddr  nslots pgflgs waiter\n\
         1a0b1c28 1a4d9e68 80    1:2389   1a2f4000 12     801    1a4d9248\n",
    )
    .expect("8 columns");
    let b = &x.pools[0].buffers[0];
    assert_eq!(b.scount, None);
    assert_eq!(b.waiters, [Addr(0x1a4d_9248)]);
}

#[test]
fn rows_after_a_footer_open_a_new_pool() {
    let x = onstat_x::parse(
        "1a0b1c28 0 80 1:10 1a2f4000 12 801 0 0\n 1 modified, 10 total, 16 hash buckets, 4096 buffer size\n\
         1a0b2d40 0 80 2:20 1a2f4800 12 801 0 0\n",
    )
    .expect("two sections");
    assert_eq!(x.pools.len(), 2);
    assert_eq!(x.pools[0].page_size, 4096);
    assert_eq!(x.pools[1].buffers[0].chunk, 2);
}

#[test]
fn footer_alone_makes_a_pool() {
    let x = onstat_x::parse(" 0 modified, 50 total, 64 hash buckets, 2048 buffer size\n")
        .expect("footer");
    assert_eq!(page_sizes(&x), [2048]);
}

#[test]
fn lines_not_understood_are_kept() {
    let text = "Buffers (Access)\n\
                address          owner            flags pagenum          memaddr          nslots pgflgs scount   waiter\n\
                \n\
                Buffer pool page size: 2048\n\
                2443cd7e8        0                80    25:1523486       cce17b000        101    2801   0        0\n\
                .\n\
                2443cd7e8        0                80    25:15x3486       cce17b000        101    2801   0        0\n\
                \n\
                2b0e4e330\n\
                 1 modified, 10 total, 16 hash buckets, 2048 buffer size\n";
    let x = onstat_x::parse(text).expect("mostly onstat -X");
    let lines: Vec<_> = x.unparsed.iter().map(|l| l.line).collect();
    // The `.` elision, a broken pagenum, and addresses after a blank line (not a continuation).
    assert_eq!(lines, [6, 7, 9]);
    assert_eq!(x.pools[0].buffers.len(), 1);
    assert!(x.pools[0].buffers[0].waiters.is_empty());
}

#[test]
fn errors_name_line_and_column() {
    for text in ["", "\n \n"] {
        let e = onstat_x::parse(text).expect_err("empty");
        assert_eq!((e.line, e.column), (1, 1));
        assert!(e.expected.contains("Buffers (Access)"), "{}", e.expected);
    }
    let e = onstat_x::parse("what is this\n").expect_err("garbage");
    assert_eq!(
        (e.line, e.column, e.snippet.as_str()),
        (1, 1, "what is this")
    );
    assert!(e
        .expected
        .contains("address owner flags pagenum memaddr nslots pgflgs scount waiter"));
    let e = onstat_x::parse(&fixture("onstat-u/oninit-onstat-u.txt")).expect_err("-u");
    assert_eq!((e.line, e.column), (1, 1));
    let e = onstat_x::parse(&fixture("onstat-g-con/oninit-onstat-g-con.txt")).expect_err("con");
    assert_eq!(e.line, 1);
    // An onstat -u row: address and owner-looking hex parse, the flags column does not.
    let e = onstat_x::parse("a4d9e68  Y--P--- 21 niraj - a65e5a8 0 1 0 0\n").expect_err("-u row");
    assert_eq!((e.line, e.column), (1, 10));
}

#[test]
fn huge_values_do_not_overflow() {
    // A packed pagenum whose chunk does not fit 32 bits, and a flag word over 8 digits.
    let e = onstat_x::parse("1 0 80 ffffffffffffffff 1 1 1 0 0").expect_err("chunk");
    assert_eq!(e.column, 8);
    let e = onstat_x::parse("1 0 180000000 1:1 1 1 1 0 0").expect_err("flags");
    assert_eq!(e.column, 5);
}

fn all_texts() -> Vec<String> {
    fixtures_in("onstat-X")
        .into_iter()
        .map(|(_, t)| t)
        .collect()
}

proptest! {
    #[test]
    fn shuffled_and_duplicated_lines_do_not_panic(
        pick in 0usize..64,
        order in proptest::collection::vec(0usize..64, 0..60),
    ) {
        let texts = all_texts();
        let text = &texts[pick % texts.len()];
        let lines: Vec<&str> = text.lines().collect();
        if !lines.is_empty() {
            let mixed: Vec<&str> = order.iter().map(|i| lines[i % lines.len()]).collect();
            let joined = mixed.join("\n");
            if let Ok(x) = onstat_x::parse(&joined) {
                let rows: usize = x.pools.iter().map(|p| p.buffers.len()).sum();
                prop_assert!(rows + x.unparsed.len() <= mixed.len());
            }
        }
    }
}
