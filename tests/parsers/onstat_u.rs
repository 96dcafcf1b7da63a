//! Tests for the `onstat -u` parser: every fixture snapshotted and checked, hand-made edge cases,
//! errors, and shuffled lines each counted once (never panicking on anything is `robust`'s).

// Tests fail by panicking; `expect` says what was missing.
#![allow(clippy::expect_used)]

use crate::common::kind;
use crate::common::{fixture, fixtures_in};
use ifxtop::ids::{Addr, Sid};
use ifxtop::parsers::onstat_u::{self, Flags, OnstatU, UserThread, WaitReason};
use proptest::prelude::*;

fn parse_fixture(stem: &str) -> OnstatU {
    onstat_u::parse(&fixture(&format!("onstat-u/{stem}.txt")))
        .unwrap_or_else(|e| panic!("{stem}: {e}"))
}

fn thread(u: &OnstatU, address: u64) -> &UserThread {
    u.threads
        .iter()
        .find(|t| t.address == Addr(address))
        .unwrap_or_else(|| panic!("no thread {address:x}"))
}

#[test]
fn every_fixture_matches_its_snapshot() {
    let all = fixtures_in("onstat-u");
    assert!(all.len() >= 9, "fixtures: {}", all.len());
    for (stem, text) in all {
        let json = kind("onstat-u")
            .parse_to_json(&text)
            .unwrap_or_else(|e| panic!("{stem}: {e}"));
        crate::snap_json!(format!("parse__onstat-u__{stem}"), &json);
    }
}

#[test]
fn oninit_page_with_condition_waiters_and_padding() {
    let u = parse_fixture("oninit-onstat-u");
    assert!(u.header.is_none());
    assert!(u.unparsed.is_empty());
    assert_eq!(u.threads.len(), 14);
    assert_eq!(
        (u.active, u.total, u.max_concurrent),
        (Some(136), Some(256), Some(136))
    );
    let first = &u.threads[0];
    assert_eq!(first.address, Addr(0x140d_3018));
    assert_eq!(first.flags.as_str(), "---P--D");
    assert_eq!(first.flags.thread_kind(), Some('D'));
    assert!(first.flags.is_primary());
    assert_eq!(first.sessid, Sid(1));
    assert_eq!(first.user, "informix");
    assert_eq!(first.tty, None);
    assert_eq!(first.wait, None);
    assert_eq!(first.wait_reason, None);
    assert_eq!((first.nreads, first.nwrites), (36, 194));
    // sessid 54 waits on the sm_read condition 14aa0588 of the same page's onstat -g con.
    let t = thread(&u, 0x14a5_8b98);
    assert_eq!(t.wait_reason, Some(WaitReason::Condition));
    assert_eq!(t.wait, Some(Addr(0x14aa_0588)));
    assert_eq!((t.sessid, t.user.as_str()), (Sid(54), "recommen"));
    assert_eq!((t.locks, t.nreads, t.nwrites), (1, 1376, 0));
    let waiting = u.threads.iter().filter(|t| t.wait.is_some()).count();
    assert_eq!(waiting, 5);
}

#[test]
fn ibm_doc_example() {
    let u = parse_fixture("ibm-kc-12.10-adref-0608");
    assert_eq!(u.threads.len(), 6);
    assert_eq!(
        (u.active, u.total, u.max_concurrent),
        (Some(6), Some(128), Some(7))
    );
    let t = thread(&u, 0xa4d_9e68);
    assert_eq!(t.flags.as_str(), "Y--P---");
    assert_eq!(t.wait, Some(Addr(0xa65_e5a8)));
    assert_eq!(t.user, "niraj");
    assert_eq!(t.sessid, Sid(21));
    assert_eq!(thread(&u, 0xa4d_8628).flags.thread_kind(), Some('F'));
    assert_eq!(thread(&u, 0xa4d_9248).flags.thread_kind(), Some('B'));
}

#[test]
fn pdq_helpers_share_a_session_and_have_ttys() {
    let u = parse_fixture("hcl-onedb-1.0.1-prf-619-pdq");
    assert_eq!(u.threads.len(), 15);
    assert_eq!(
        (u.active, u.total, u.max_concurrent),
        (Some(15), Some(20), Some(17))
    );
    let session10: Vec<_> = u.threads.iter().filter(|t| t.sessid == Sid(10)).collect();
    assert_eq!(session10.len(), 5);
    assert_eq!(session10.iter().filter(|t| t.flags.is_primary()).count(), 1);
    assert!(session10.iter().all(|t| t.tty.as_deref() == Some("ttyp2")));
    let reading = thread(&u, 0x81_0b78);
    assert!(reading.flags.in_read());
    assert_eq!(reading.tty.as_deref(), Some("ttyp3"));
    assert_eq!(thread(&u, 0x81_0f04).wait, Some(Addr(0xbe_acf8)));
    assert_eq!(thread(&u, 0x81_19a8).wait, Some(Addr(0xa8_a944)));
}

#[test]
fn checkpoint_stall_with_a_thread_in_critical_section() {
    let u = parse_fixture("ifxtop-banner-ckpt-req-critical-section");
    let h = u.header.as_ref().expect("banner");
    assert_eq!(h.version.as_deref(), Some("12.10.FC8"));
    assert_eq!(h.checkpoint_flag(), Some("CKPT REQ"));
    assert_eq!(h.blocked.as_deref(), Some("CKPT"));
    assert_eq!(u.threads.len(), 9);
    let ckpt: Vec<_> = u
        .threads
        .iter()
        .filter(|t| t.wait_reason == Some(WaitReason::Checkpoint))
        .collect();
    assert_eq!(ckpt.len(), 3);
    assert!(ckpt.iter().all(|t| t.wait == Some(Addr(0x26_e8a0_f2a0))));
    let critical: Vec<_> = u
        .threads
        .iter()
        .filter(|t| t.flags.in_critical_section())
        .collect();
    assert_eq!(critical.len(), 1);
    assert_eq!(critical[0].user, "loader");
    assert_eq!(critical[0].wait_reason, None);
    assert_eq!(
        (u.active, u.total, u.max_concurrent),
        (Some(9), Some(2048), Some(311))
    );
}

#[test]
fn wrapped_banner() {
    let u = parse_fixture("ifxtop-wrapped-banner");
    let h = u.header.as_ref().expect("banner");
    assert_eq!(h.product.as_deref(), Some("HCL Informix Dynamic Server"));
    assert_eq!(h.mode_flags, vec!["Prim", "CKPT INP"]);
    assert_eq!(h.uptime_s, Some(2 * 86_400 + 3_600));
    assert_eq!(h.shm_kb, Some(2_457_600));
    assert_eq!(u.threads.len(), 2);
    assert_eq!(u.threads[1].wait, Some(Addr(0x45d0_a6b8)));
}

#[test]
fn offline_message_alone_is_not_an_error() {
    let u = parse_fixture("ifxtop-offline");
    assert_eq!(
        u.offline.as_deref(),
        Some("shared memory not initialized for INFORMIXSERVER 'ol_prod'")
    );
    assert!(u.threads.is_empty());
    assert!(u.header.is_none());
    assert_eq!(u.active, None);
    assert!(u.unparsed.is_empty());
}

#[test]
fn sixteen_digit_addresses_running_into_flags_and_sessid() {
    let u = parse_fixture("ifxtop-16-digit-addresses-run-together");
    assert!(u.unparsed.is_empty(), "{:?}", u.unparsed);
    assert_eq!(u.threads.len(), 4);
    let t = &u.threads[1];
    assert_eq!(t.address, Addr(0xc000_0000_1a2b_3870));
    assert_eq!(t.flags.as_str(), "Y-BP---");
    assert_eq!(t.flags.txn_state(), Some('B'));
    assert_eq!(t.sessid, Sid(81));
    assert_eq!(t.wait, Some(Addr(0xc000_0000_1a9f_0e18)));
    let t = &u.threads[2];
    assert_eq!(t.flags.as_str(), "L--PR--");
    assert_eq!(t.sessid, Sid(123_456_789));
    assert_eq!(t.user, "batchusr");
    assert_eq!(t.tty.as_deref(), Some("pts/12"));
    assert_eq!(t.tout, -1);
    assert_eq!(t.wait_reason, Some(WaitReason::Lock));
    assert_eq!(u.threads[0].flags.as_str(), "---P--D");
    assert_eq!(u.threads[0].sessid, Sid(1));
}

#[test]
fn defunct_is_a_whole_word() {
    let u = parse_fixture("ifxtop-defunct");
    let t = thread(&u, 0xa4d_9e68);
    assert!(t.flags.is_defunct());
    assert_eq!(t.flags.as_str(), "DEFUNCT");
    assert_eq!(t.wait_reason, Some(WaitReason::Defunct));
    // The letters of DEFUNCT mean nothing positionally.
    assert!(!t.flags.is_primary());
    assert_eq!(t.flags.thread_kind(), None);
    assert_eq!(t.flags.txn_state(), None);
    assert_eq!((t.sessid, t.locks), (Sid(21), 2));
}

#[test]
fn every_wait_letter() {
    let u = parse_fixture("ifxtop-every-wait-letter");
    let got: Vec<_> = u.threads.iter().map(|t| t.wait_reason).collect();
    let want: Vec<_> = "BCGLSTYX"
        .bytes()
        .map(|b| Some(WaitReason::from_letter(b).expect("letter")))
        .collect();
    assert_eq!(got, want);
    for t in &u.threads {
        let r = t.wait_reason.expect("waiting");
        assert_eq!(t.flags.as_str().chars().next(), Some(r.letter()));
        assert!(t.wait.is_some());
    }
    assert_eq!(thread(&u, 0xa4d_9248).tout, 10);
}

#[test]
fn seed_grep_output_without_footer() {
    let u = parse_fixture("ifxtop-seed-grep-thompson-10-digit");
    assert_eq!(u.threads.len(), 9);
    assert_eq!(u.active, None);
    for t in &u.threads {
        assert_eq!(t.address, Addr(0x26_eb49_2d18));
        assert_eq!(t.flags.as_str(), "Y--P-R-");
        assert_eq!(t.sessid, Sid(76228));
        assert_eq!(t.user, "thompson");
        assert_eq!(t.tty.as_deref(), Some("0"));
        assert_eq!(t.wait, Some(Addr(0x26_e67c_d298)));
        assert!(t.flags.is_recovery());
    }
    let reads: Vec<_> = u.threads.iter().map(|t| t.nreads).collect();
    assert_eq!(reads, [552, 552, 560, 560, 568, 576, 592, 624, 624]);
}

#[test]
fn rows_alone_as_the_blog_printed_them() {
    // Whitespace collapsed, no header, no footer: `onstat -u | grep thompson`.
    let u = onstat_u::parse("26eb492d18 Y--P-R- 76228 thompson 0 26e67cd298 0 0 552 0\n")
        .expect("rows");
    assert_eq!(u.threads.len(), 1);
    assert_eq!(u.threads[0].nreads, 552);
    let u = onstat_u::parse("40074140Y-BP---81 informix - 0 0 0 12 5").expect("run together");
    assert_eq!(u.threads[0].address, Addr(0x4007_4140));
    assert_eq!(u.threads[0].flags, Flags(*b"Y-BP---"));
    assert_eq!(u.threads[0].sessid, Sid(81));
    assert_eq!((u.threads[0].nreads, u.threads[0].nwrites), (12, 5));
}

#[test]
fn tabs_crlf_and_star_flag() {
    let u = onstat_u::parse(
        "Userthreads\r\naddress\tflags\tsessid\tuser\ttty\twait\ttout\tlocks\tnreads\tnwrites\r\n\
         a4d8018\tY*-P---\t21\tniraj\t-\ta65e5a8\t0\t1\t0\t0\r\n",
    )
    .expect("tabs");
    assert_eq!(u.threads.len(), 1);
    assert_eq!(u.threads[0].flags.as_str(), "Y*-P---");
    assert!(u.unparsed.is_empty());
}

#[test]
fn lines_not_understood_are_kept_with_their_numbers() {
    let text = "Userthreads\n\
                address  flags   sessid   user     tty      wait     tout locks nreads   nwrites\n\
                a4d8018  ---P--D 1        informix -        0        0    0     58       4595\n\
                .....\n\
                a4d9e68  Y--P-- 21        niraj    -        a65e5a8  0    1     0        0\n\
                a4da478  Y--P--- 22       niraj    -        a65e5a8  0    1     x        0\n\
                 2 active, 128 total, 7 maximum concurrent\n";
    let u = onstat_u::parse(text).expect("mostly onstat -u");
    assert_eq!(u.threads.len(), 1);
    let lines: Vec<_> = u.unparsed.iter().map(|l| l.line).collect();
    assert_eq!(lines, [4, 5, 6]);
    assert_eq!(u.unparsed[0].text, ".....");
    assert_eq!(u.active, Some(2));
}

#[test]
fn old_footer_without_maximum() {
    let u = onstat_u::parse("a4d8018 ---P--D 1 informix - 0 0 0 58 4595\n 6 active, 128 total\n")
        .expect("footer");
    assert_eq!(
        (u.active, u.total, u.max_concurrent),
        (Some(6), Some(128), None)
    );
}

#[test]
fn empty_and_blank_input_are_errors() {
    for text in ["", "\n\n", "   \n\t\n"] {
        let e = onstat_u::parse(text).expect_err("empty");
        assert_eq!((e.line, e.column), (1, 1), "{text:?}");
        assert!(e.expected.contains("Userthreads"), "{}", e.expected);
    }
}

#[test]
fn garbage_is_an_error_naming_line_and_column() {
    let e = onstat_u::parse("\nhello world\nmore\n").expect_err("garbage");
    assert_eq!((e.line, e.column), (2, 1));
    assert_eq!(e.snippet, "hello world");
    assert!(e
        .expected
        .contains("address flags sessid user tty wait tout locks nreads nwrites"));
    // Hex digits followed by lowercase text are no address either.
    let e = onstat_u::parse("0x1f ---P--D 1 informix - 0 0 0 1 1").expect_err("garbage");
    assert_eq!((e.line, e.column), (1, 1));
}

#[test]
fn other_onstat_outputs_are_errors() {
    let e = onstat_u::parse(&fixture("onstat-X/oninit-onstat-X-two-pools.txt")).expect_err("-X");
    assert_eq!((e.line, e.column), (1, 1));
    assert_eq!(e.snippet, "Buffers (Access)");
    let e = onstat_u::parse(&fixture("onstat-g-con/oninit-onstat-g-con.txt")).expect_err("con");
    assert_eq!(e.line, 1);
    // An onstat -X row: the address parses, the flags do not.
    let e = onstat_u::parse("2443cd7e8 ffffffffffffffff 80 25:1523486 cce17b000 101 2801 0 0\n")
        .expect_err("-X row");
    assert_eq!((e.line, e.column), (1, 11));
    assert!(e.expected.contains("7 flag characters"), "{}", e.expected);
}

#[test]
fn a_banner_alone_is_an_error_after_it() {
    let e = onstat_u::parse(
        "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 00:01:27 -- 133540 Kbytes\n\n",
    )
    .expect_err("banner only");
    assert_eq!(e.line, 3);
    assert_eq!(e.snippet, "end of input");
}

#[test]
fn huge_numbers_do_not_overflow() {
    let e = onstat_u::parse("a4d8018 ---P--D 99999999999999999999999 informix - 0 0 0 1 1")
        .expect_err("sessid too large");
    assert_eq!(e.column, 17);
    let u = onstat_u::parse(
        "ffffffffffffffff ---P--D 18446744073709551615 informix - 0 -9223372036854775807 0 1 1",
    )
    .expect("largest values");
    assert_eq!(u.threads[0].sessid, Sid(u64::MAX));
    assert_eq!(u.threads[0].tout, -i64::MAX);
}

/// Every fixture of this kind, for the robustness properties.
fn all_texts() -> Vec<String> {
    fixtures_in("onstat-u")
        .into_iter()
        .map(|(_, t)| t)
        .collect()
}

proptest! {
    #[test]
    fn shuffled_and_duplicated_lines_do_not_panic(
        pick in 0usize..64,
        order in proptest::collection::vec(0usize..64, 0..40),
    ) {
        let texts = all_texts();
        let text = &texts[pick % texts.len()];
        let lines: Vec<&str> = text.lines().collect();
        if !lines.is_empty() {
            let mixed: Vec<&str> = order.iter().map(|i| lines[i % lines.len()]).collect();
            let joined = mixed.join("\n");
            if let Ok(u) = onstat_u::parse(&joined) {
                // Every non-blank line is a thread, a known line, or listed as unparsed.
                prop_assert!(u.unparsed.len() + u.threads.len() <= mixed.len());
            }
        }
    }
}
