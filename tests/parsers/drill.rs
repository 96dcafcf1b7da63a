//! Tests for the drill-down parsers (`onstat -g ath`, `-g ntt`, `-k`, `-g ses`, `-g sql`,
//! `-g pqs`): every fixture snapshotted and checked against its real values, hand-made edge cases, errors, the
//! join of the oninit captures. Never panicking is `robust`'s, for every kind.

// Tests fail by panicking; `expect` says what was missing.
#![allow(clippy::expect_used)]

use crate::common::kind;
use crate::common::{fixture, fixtures_in};
use ifxtop::error::ParseError;
use ifxtop::ids::{Addr, Sid, Tid};
use ifxtop::parsers::onstat_g_ath::{self, AthThread, OnstatGAth, ThreadState};
use ifxtop::parsers::onstat_g_con;
use ifxtop::parsers::onstat_g_ntt::{self, NetThread, OnstatGNtt};
use ifxtop::parsers::onstat_g_pqs::{self, OnstatGPqs};
use ifxtop::parsers::onstat_g_ses::{self, OnstatGSes, SessionDetail, SqlState};
use ifxtop::parsers::onstat_g_sql::{self, OnstatGSql};
use ifxtop::parsers::onstat_k::{self, Lock, OnstatK};
use ifxtop::parsers::onstat_u;
use ifxtop::source::Kind;

const BANNER: &str =
    "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 12 days 03:04:05 -- 4194304 Kbytes\n\n";
const CKPT_BANNER: &str = "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line (CKPT REQ) -- Up 12 days 03:04:05 -- 4194304 Kbytes\nBlocked:CKPT\n\n";
const OFFLINE: &str = "\nshared memory not initialized for INFORMIXSERVER 'ol_prod'\n";

/// The six kinds: (fixture directory, kind).
fn kinds() -> [(&'static str, Kind); 6] {
    [
        ("onstat-g-ath", kind("onstat-g-ath")),
        ("onstat-g-ntt", kind("onstat-g-ntt")),
        ("onstat-k", kind("onstat-k")),
        ("onstat-g-ses", kind("onstat-g-ses")),
        ("onstat-g-sql", kind("onstat-g-sql")),
        ("onstat-g-pqs", kind("onstat-g-pqs")),
    ]
}

fn ok<T>(dir: &str, stem: &str, parse: fn(&str) -> Result<T, ParseError>) -> T {
    parse(&fixture(&format!("{dir}/{stem}.txt"))).unwrap_or_else(|e| panic!("{stem}: {e}"))
}

fn ath(stem: &str) -> OnstatGAth {
    ok("onstat-g-ath", stem, onstat_g_ath::parse)
}
fn ntt(stem: &str) -> OnstatGNtt {
    ok("onstat-g-ntt", stem, onstat_g_ntt::parse)
}
fn locks(stem: &str) -> OnstatK {
    ok("onstat-k", stem, onstat_k::parse)
}
fn ses(stem: &str) -> OnstatGSes {
    ok("onstat-g-ses", stem, onstat_g_ses::parse)
}
fn sql(stem: &str) -> OnstatGSql {
    ok("onstat-g-sql", stem, onstat_g_sql::parse)
}

fn tid(a: &OnstatGAth, t: u64) -> &AthThread {
    a.thread(Tid(t)).unwrap_or_else(|| panic!("no tid {t}"))
}
fn sid(n: &OnstatGNtt, s: u64) -> &NetThread {
    n.session(Sid(s)).unwrap_or_else(|| panic!("no sid {s}"))
}
fn lock(k: &OnstatK, a: u64) -> &Lock {
    k.lock(Addr(a)).unwrap_or_else(|| panic!("no lock {a:x}"))
}
fn detail(s: &OnstatGSes) -> &SessionDetail {
    s.detail.as_ref().expect("session detail")
}
fn sql_of(s: &OnstatGSes) -> &SqlState {
    detail(s).sql.as_ref().expect("SQL state row")
}
fn cond(name: &str) -> ThreadState {
    ThreadState::CondWait { name: name.into() }
}
fn unparsed_lines(v: &[ifxtop::parsers::Unparsed]) -> Vec<usize> {
    v.iter().map(|u| u.line).collect()
}

// ---------------------------------------------------------------------------------------------
// Snapshots: every fixture of the six kinds, as `ifxtop parse KIND` prints it.

fn snapshot_dir(dir: &str, kind: Kind, at_least: usize) {
    let all = fixtures_in(dir);
    assert!(all.len() >= at_least, "{dir}: {} fixtures", all.len());
    for (stem, text) in all {
        let json = kind
            .parse_to_json(&text)
            .unwrap_or_else(|e| panic!("{stem}: {e}"));
        crate::snap_json!(format!("parse__{dir}__{stem}"), &json);
    }
}

#[test]
fn every_ath_fixture_matches_its_snapshot() {
    snapshot_dir("onstat-g-ath", kind("onstat-g-ath"), 4);
}

#[test]
fn every_ntt_fixture_matches_its_snapshot() {
    snapshot_dir("onstat-g-ntt", kind("onstat-g-ntt"), 3);
}

#[test]
fn every_pqs_fixture_matches_its_snapshot() {
    snapshot_dir("onstat-g-pqs", kind("onstat-g-pqs"), 2);
}

#[test]
fn every_k_fixture_matches_its_snapshot() {
    snapshot_dir("onstat-k", kind("onstat-k"), 3);
}

#[test]
fn every_ses_fixture_matches_its_snapshot() {
    snapshot_dir("onstat-g-ses", kind("onstat-g-ses"), 6);
}

#[test]
fn every_sql_fixture_matches_its_snapshot() {
    snapshot_dir("onstat-g-sql", kind("onstat-g-sql"), 3);
}

// ---------------------------------------------------------------------------------------------
// onstat -g ath

#[test]
fn ath_oninit_page_old_spelling_and_elision() {
    let a = ath("oninit-onstat-g-ath-truncated");
    assert!(a.header.is_none());
    assert!(a.unparsed.is_empty(), "{:?}", a.unparsed);
    assert_eq!(a.threads.len(), 22);
    // The page's `.....` cut is known for what it is.
    assert_eq!(a.elisions, [17]);
    let t = tid(&a, 213);
    assert_eq!(t.tcb, Addr(0x14c9_1ec0));
    assert_eq!(t.rstcb, Some(Addr(0x14a5_8b98)));
    assert_eq!(t.prty, 2);
    // Printed `cond wait  sm_read` (two blanks): kept with blanks collapsed.
    assert_eq!(t.status, "cond wait sm_read");
    assert_eq!(t.state, cond("sm_read"));
    assert_eq!((t.vp_class.as_str(), t.name.as_str()), ("1cpu", "sqlexec"));
    let t = tid(&a, 2);
    assert_eq!((t.rstcb, t.name.as_str()), (None, "lio vp 0"));
    assert_eq!(t.state, ThreadState::Sleeping { secs: None });
    assert_eq!(t.vp_class, "4lio");
    let t = tid(&a, 6);
    assert_eq!(
        (t.rstcb, t.name.as_str()),
        (Some(Addr(0x140d_3018)), "main_loop()")
    );
    assert_eq!(t.state, ThreadState::Sleeping { secs: Some(1) });
    assert_eq!(tid(&a, 14).name, "flush_sub(0)");
    assert_eq!(tid(&a, 15).name, "flush_sub(1)");
    assert_eq!(tid(&a, 143).state, ThreadState::Sleeping { secs: Some(44) });
    assert_eq!(tid(&a, 143).status, "sleeping secs: 44");
    assert_eq!(tid(&a, 9).vp_class, "9tli");
    assert_eq!(tid(&a, 9).state, ThreadState::Running);
    let netnorm: Vec<_> = a
        .threads
        .iter()
        .filter(|t| t.state == cond("netnorm"))
        .map(|t| t.tid.0)
        .collect();
    assert_eq!(netnorm, [349, 357, 358]);
}

#[test]
fn ath_hcl_14_10_doc_io_states_and_two_digit_vps() {
    let a = ath("hcl-14.10-adr-0514-truncated");
    assert!(a.unparsed.is_empty());
    assert_eq!(a.threads.len(), 13);
    let t = tid(&a, 13);
    assert_eq!((t.tcb, t.vp_class.as_str()), (Addr(0x1_0bd5_6218), "10aio"));
    assert_eq!(
        (t.state.clone(), t.name.as_str()),
        (ThreadState::Io, "aio vp 4")
    );
    let t = tid(&a, 10);
    assert_eq!(
        (t.rstcb, t.status.as_str()),
        (Some(Addr(0x1_0b23_1780)), "IO Wait")
    );
    assert_eq!(t.state, ThreadState::Io);
    assert_eq!(t.name, "flush_sub(0)");
    assert_eq!(tid(&a, 14).vp_class, "11aio");
    let io = a
        .threads
        .iter()
        .filter(|t| t.state == ThreadState::Io)
        .count();
    assert_eq!(io, 8);

    let p = ath("hcl-14.10-prf-686-truncated");
    assert_eq!(p.threads.len(), 8);
    assert_eq!(tid(&p, 7).prty, 4);
    assert_eq!(tid(&p, 7).rstcb, Some(Addr(0x1_0b23_1028)));
    assert_eq!(tid(&p, 9).prty, 3);
}

#[test]
fn ath_16_digit_addresses_every_status_and_ckpt_banner() {
    let a = ath("ifxtop-16-digit-statuses");
    assert!(a.unparsed.is_empty(), "{:?}", a.unparsed);
    let h = a.header.as_ref().expect("banner");
    assert_eq!(h.checkpoint_flag(), Some("CKPT REQ"));
    assert_eq!(h.blocked.as_deref(), Some("CKPT"));
    assert_eq!(a.threads.len(), 22);
    let t = tid(&a, 978);
    assert_eq!(t.tcb, Addr(0xc000_0000_11f2_a3a8));
    assert_eq!(t.rstcb, Some(Addr(0xc000_0000_101a_6d28)));
    assert_eq!(t.state, cond("netnorm"));
    assert_eq!(tid(&a, 47).state, cond("sm_read"));
    assert_eq!(tid(&a, 47).status, "cond wait sm_read");
    let other = |w: &str| ThreadState::Other { words: w.into() };
    let want = [
        (2, ThreadState::Io),
        (3, ThreadState::Io),
        (7, ThreadState::Sleeping { secs: Some(1) }),
        (8, ThreadState::Running),
        (9, ThreadState::Sleeping { secs: None }),
        (10, other("checkpoint wait")),
        (11, other("yield bufwait")),
        (12, ThreadState::Ready),
        (15, other("yield time")),
        (18, other("yield forever")),
        (22, other("join wait")),
        (981, ThreadState::LockWait),
        (983, ThreadState::LockWait),
        (
            985,
            ThreadState::MutexWait {
                name: "lockhash[12]".into(),
            },
        ),
        (986, other("buffer wait")),
        (990, other("terminated")),
        (1024, ThreadState::Running),
    ];
    for (n, state) in want {
        assert_eq!(tid(&a, n).state, state, "tid {n}");
    }
    let vps: Vec<_> = [5, 8, 12, 1024]
        .iter()
        .map(|n| tid(&a, *n).vp_class.as_str())
        .collect();
    assert_eq!(vps, ["12msc", "11soc", "2adm", "14cpu"]);
    assert_eq!(tid(&a, 18).name, "bf_priosweep()");
}

#[test]
fn ath_rows_picked_out_by_grep() {
    let a = onstat_g_ath::parse(
        "213     14c91ec0 14a58b98 2    cond wait  sm_read      1cpu        sqlexec     \n\
         349 14abae60 14a59718 2 cond wait netnorm 1cpu sqlexec\n",
    )
    .expect("rows alone");
    assert!(a.header.is_none());
    assert_eq!(a.threads.len(), 2);
    assert_eq!(a.threads[1].state, cond("netnorm"));
    assert_eq!(a.threads[0].status, "cond wait sm_read");
}

#[test]
fn ath_old_parenthesised_condition_and_act_title() {
    let a = onstat_g_ath::parse(
        "Running threads:\n tid tcb rstcb prty status vp-class name\n\
         2 b3132d8 0 1 running *2adm adminthd\n\
         35 a7ed9f4 a7ed9f4 2 cond wait(netnorm) 1cpu sqlexec\n",
    )
    .expect("onstat -g act layout");
    assert!(a.unparsed.is_empty());
    assert_eq!(a.threads[0].vp_class, "*2adm");
    assert_eq!(a.threads[1].state, cond("netnorm"));
}

#[test]
fn ath_lines_not_understood_are_kept() {
    let text = "Threads:\n\
                 tid tcb rstcb prty status vp-class name\n\
                 213 14c91ec0 14a58b98 2 cond wait sm_read 1cpu sqlexec\n\
                 214 14c91ec0 14a58b98 2 cond wait sm_read sqlexec\n\
                 215 14c91ec0 14a58b98 2 cond wait sm_read 1cpu\n\
                 .....\n";
    let a = onstat_g_ath::parse(text).expect("mostly -g ath");
    assert_eq!(a.threads.len(), 1);
    // No VP class; a VP class but no name.
    assert_eq!(unparsed_lines(&a.unparsed), [4, 5]);
    assert_eq!(a.elisions, [6]);
}

// ---------------------------------------------------------------------------------------------
// onstat -g ntt

#[test]
fn ntt_oninit_dates_fold_into_their_rows() {
    let n = ntt("oninit-onstat-g-ntt-truncated");
    assert!(n.unparsed.is_empty(), "{:?}", n.unparsed);
    assert_eq!(n.threads.len(), 7);
    let t = sid(&n, 4448);
    assert_eq!(t.netscb, Addr(0x14e2_a8c0));
    assert_eq!(t.thread, "sqlexec");
    assert_eq!(
        (t.open.as_deref(), t.read.as_deref(), t.write.as_deref()),
        (Some("15:56:35"), Some("15:56:36"), Some("15:56:36"))
    );
    assert_eq!(t.date.as_deref(), Some("04/15/2001"));
    assert_eq!(t.client, None);
    // tid 124 has no continuation line: the next line is a row.
    assert_eq!(sid(&n, 124).date, None);
    let l = sid(&n, 8);
    assert_eq!(l.thread, "tlitcplst");
    assert_eq!(
        (l.open.as_deref(), l.read.as_deref(), l.write.as_deref()),
        (Some("13:24:37"), Some("12:02:03"), None)
    );
    assert_eq!(l.date.as_deref(), Some("04/14/2001"));
    let c = l.client.as_ref().expect("address");
    assert_eq!(
        (c.host.as_str(), c.port.as_str(), c.proto.as_str()),
        ("theoden", "1529", "tlitcp")
    );
    assert_eq!(c.port_num(), Some(1529));
    let d = sid(&n, 7);
    assert_eq!(
        (d.read.as_deref(), d.date.as_deref()),
        (None, Some("04/14/2001"))
    );
}

#[test]
fn ntt_client_addresses_of_sessions() {
    let n = ntt("ifxtop-clients-ipv4");
    assert!(n.unparsed.is_empty(), "{:?}", n.unparsed);
    assert_eq!(
        n.header.as_ref().and_then(|h| h.version.as_deref()),
        Some("12.10.FC8")
    );
    assert_eq!(n.threads.len(), 6);
    let t = sid(&n, 812);
    assert_eq!(t.netscb, Addr(0xc000_0000_11f2_a028));
    let c = t.client.as_ref().expect("client");
    assert_eq!(
        (c.host.as_str(), c.port_num(), c.proto.as_str()),
        ("10.20.4.31", Some(51234), "soctcp")
    );
    assert_eq!(t.date.as_deref(), Some("05/14/2024"));
    let t = sid(&n, 820);
    assert_eq!(
        (t.read.as_deref(), t.write.as_deref()),
        (Some("10:02:55"), None)
    );
    assert_eq!(
        t.client.as_ref().map(|c| c.host.as_str()),
        Some("10.20.7.118")
    );
    let t = sid(&n, 824);
    assert_eq!(
        (t.open.as_deref(), t.read.as_deref()),
        (Some("10:30:59"), None)
    );
    assert_eq!(t.client.as_ref().and_then(|c| c.port_num()), Some(51290));
    let poll = sid(&n, 8);
    assert_eq!(
        (poll.thread.as_str(), poll.client.as_ref()),
        ("soctcppoll", None)
    );
    assert_eq!(poll.date.as_deref(), Some("05/14/2024"));
}

#[test]
fn ntt_hcl_14_10_layout_without_dates() {
    let n = ntt("hcl-14.10-adr-0555");
    assert!(n.unparsed.is_empty(), "{:?}", n.unparsed);
    assert_eq!(n.threads.len(), 3);
    assert!(n.threads.iter().all(|t| t.date.is_none()));
    let t = sid(&n, 4);
    assert_eq!(
        t.client.as_ref().map(|c| c.host.as_str()),
        Some("server.ibm.com")
    );
    assert_eq!(t.client.as_ref().and_then(|c| c.port_num()), Some(5006));
    assert_eq!(sid(&n, 61).thread, "ontape");
    assert_eq!(sid(&n, 3).open.as_deref(), Some("14:32:32"));
}

#[test]
fn ntt_grep_rows_names_and_stray_dates() {
    // A date line with no row before it, and an address that is not `host|port`.
    let n = onstat_g_ntt::parse(
        "                      04/15/2001\n\
         14e2a8c0 sqlexec 4448 15:56:35 15:56:36 15:56:36 client7|svc_ifx|soctcp\n\
                               04/15/2001\n\
                               04/16/2001\n\
         14e2a8c1 sqlexec 4449 15:56:35 client7\n",
    )
    .expect("rows");
    assert_eq!(n.threads.len(), 1);
    let c = n.threads[0].client.as_ref().expect("client");
    assert_eq!(
        (c.host.as_str(), c.port.as_str(), c.port_num()),
        ("client7", "svc_ifx", None)
    );
    assert_eq!(n.threads[0].date.as_deref(), Some("04/15/2001"));
    assert_eq!(unparsed_lines(&n.unparsed), [1, 4, 5]);
}

// ---------------------------------------------------------------------------------------------
// onstat -k

#[test]
fn k_doc_example_and_footer_with_overflows() {
    let k = locks("ibm-kc-12.10-adref-0597");
    assert!(k.unparsed.is_empty());
    assert_eq!(k.locks.len(), 1);
    let l = &k.locks[0];
    assert_eq!(l.address, Addr(0xa09_5f78));
    assert_eq!(l.owner, Addr(0xa4d_9e68));
    assert_eq!((l.wtlist, l.lklist), (None, None));
    assert_eq!(l.lock_type, "HDR+S");
    assert_eq!(l.mode(), "S");
    assert_eq!(l.tblsnum, 0x10_0002);
    assert_eq!(l.rowid, 0x203);
    assert_eq!(l.key, "0");
    assert_eq!(
        (k.active, k.total, k.hash_buckets, k.overflows),
        (Some(1), Some(2000), Some(2048), Some(0))
    );
}

/// 15.0 native mode: wider row ids, page numbers and partnums. SYNTHETIC: the real row of
/// `onstat-k/ibm-kc-12.10-adref-0597.txt` (`a095f78 0 a4d9e68 0 HDR+S 100002 203 0`, under
/// that file's own title and column header) widened by hand: 16-hex-digit addresses, a
/// 12-digit partnum, a 16-digit rowid, a wider key/bsiz, the columns pushed out of line.
#[test]
fn k_wider_15_0_numbers_synthetic() {
    let text = format!(
        "{BANNER}Locks\n\
         address  wtlist   owner    lklist   type     tblsnum  rowid    key#/bsiz\n\
         c00000000a095f78  0        c00000000a4d9e68  0        HDR+S    100000100002   7fff000000000203         0   \n\
         c00000000a095f79 c00000000a4d9e69 c00000000a4d9e68 c00000000a095f78 HDR+X fffffffff00002 10000000203 65536\n\
         \x20 2 active, 2000 total, 2048 hash buckets, 0 lock table overflows\n"
    );
    let k = onstat_k::parse(&text).expect("wide -k");
    assert!(k.unparsed.is_empty(), "{:?}", k.unparsed);
    assert_eq!(k.locks.len(), 2);
    let l = &k.locks[0];
    assert_eq!(
        (l.address, l.owner, l.wtlist),
        (
            Addr(0xc000_0000_0a09_5f78),
            Addr(0xc000_0000_0a4d_9e68),
            None
        )
    );
    assert_eq!(
        (l.lock_type.as_str(), l.tblsnum, l.rowid, l.key.as_str()),
        ("HDR+S", 0x1000_0010_0002, 0x7fff_0000_0000_0203, "0")
    );
    let l = &k.locks[1];
    assert_eq!(l.wtlist, Some(Addr(0xc000_0000_0a4d_9e69)));
    assert_eq!(l.lklist, Some(Addr(0xc000_0000_0a09_5f78)));
    assert_eq!(
        (l.tblsnum, l.rowid, l.key.as_str()),
        (0xff_ffff_fff0_0002, 0x100_0000_0203, "65536")
    );
    assert_eq!(k.active, Some(2));
}

#[test]
fn k_er_guide_sentence_is_unparsed_and_types_right_aligned() {
    let k = locks("oninit-ids10-erep327");
    assert_eq!(unparsed_lines(&k.unparsed), [5]);
    assert!(k.unparsed[0].text.starts_with("In the following output"));
    assert_eq!(k.locks.len(), 9);
    assert_eq!(k.active, None);
    let l = lock(&k, 0xa19_8050);
    assert_eq!((l.lock_type.as_str(), l.owner), ("S", Addr(0x5c2d_b4a8)));
    assert_eq!(l.lklist, Some(Addr(0xa19_7ff8)));
    // The Enterprise Replication pseudo lock: tblsnum 2, rowid 1c05a.
    let l = lock(&k, 0xa19_93e8);
    assert_eq!((l.tblsnum, l.rowid), (2, 0x1_c05a));
}

#[test]
fn k_lock_chain_with_16_digit_addresses() {
    let k = locks("ifxtop-lock-chain-16-digit");
    assert!(k.unparsed.is_empty(), "{:?}", k.unparsed);
    assert_eq!(k.locks.len(), 7);
    assert_eq!(
        (k.active, k.total, k.hash_buckets, k.overflows),
        (Some(7), Some(200_000), Some(262_144), Some(0))
    );
    let l = lock(&k, 0xc000_0000_12a0_1b50);
    assert_eq!(l.wtlist, Some(Addr(0xc000_0000_101a_74c8)));
    assert_eq!(l.owner, Addr(0xc000_0000_101a_6d28));
    assert_eq!(
        (l.lock_type.as_str(), l.tblsnum, l.rowid),
        ("HDR+X", 0x30_00f1, 0x1a07)
    );
    let key = lock(&k, 0xc000_0000_12a0_2118);
    assert_eq!((key.lock_type.as_str(), key.key.as_str()), ("X", "K- 1"));
    assert!(lock(&k, 0xc000_0000_12a0_1c78).is_table_lock());

    // Follow waiter → the lock it waits for → its owner, to the head blocker.
    let mut chain = vec![Addr(0xc000_0000_101a_7c68)];
    while let Some(l) = k.locks.iter().find(|l| l.wtlist == chain.last().copied()) {
        chain.push(l.owner);
        assert!(chain.len() < 10, "cycle");
    }
    assert_eq!(
        chain,
        [
            Addr(0xc000_0000_101a_7c68),
            Addr(0xc000_0000_101a_74c8),
            Addr(0xc000_0000_101a_6d28)
        ]
    );
    // The head blocker is tid 978 of the matching -g ath sample: idle, waiting for its client.
    let a = ath("ifxtop-16-digit-statuses");
    let head = a
        .threads
        .iter()
        .find(|t| t.rstcb == chain.last().copied())
        .expect("head blocker in -g ath");
    assert_eq!((head.tid, head.state.clone()), (Tid(978), cond("netnorm")));
    for w in &chain[..2] {
        let t = a
            .threads
            .iter()
            .find(|t| t.rstcb == Some(*w))
            .expect("waiter");
        assert_eq!(t.state, ThreadState::LockWait);
    }
}

#[test]
fn k_grep_rows_banner_and_almost_rows() {
    let text = format!(
        "{CKPT_BANNER}Locks\n\
         address  wtlist   owner    lklist   type     tblsnum  rowid    key#/bsiz\n\
         a095f78  0        a4d9e68  0        HDR+S    100002   203         0\n\
         a095f79  0        a4d9e68  0        hdr+s    100002   203         0\n\
         a095f7a  0        a4d9e68  0        HDR+S    100002   203\n\
          1 active, 2000 total, 2048 hash buckets\n"
    );
    let k = onstat_k::parse(&text).expect("-k");
    assert_eq!(
        k.header.as_ref().and_then(|h| h.checkpoint_flag()),
        Some("CKPT REQ")
    );
    assert_eq!(k.locks.len(), 1);
    // A lower-case type and a row without its key column are no rows.
    assert_eq!(unparsed_lines(&k.unparsed), [7, 8]);
    assert_eq!((k.active, k.overflows), (Some(1), None));
    let k = onstat_k::parse("a095f78 c0000000101a74c8 a4d9e68 0 IX 100002 0 0\n").expect("grep");
    assert_eq!(k.locks[0].wtlist, Some(Addr(0xc000_0000_101a_74c8)));
    assert_eq!(k.locks[0].mode(), "IX");
}

// ---------------------------------------------------------------------------------------------
// onstat -g ses

#[test]
fn ses_doc_list_and_terminated_sessions() {
    let s = ses("ibm-kc-12.10-adr-0574");
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    assert!(s.detail.is_none());
    assert_eq!(s.sessions.len(), 4);
    let r = &s.sessions[1];
    assert_eq!((r.sid, r.user.as_str()), (Sid(23), "informix"));
    assert_eq!(
        (r.tty.as_deref(), r.pid, r.hostname.as_deref()),
        (None, Some(17602), Some("carson"))
    );
    assert_eq!(
        (r.threads, r.total_memory, r.used_memory),
        (1, 57_344, 48_968)
    );
    assert_eq!(r.dynamic_explain.as_deref(), Some("off"));
    assert_eq!(r.effective_user, None);
    // Server-internal sessions: pid 0 and hostname `-`.
    assert_eq!(
        (s.sessions[0].pid, s.sessions[0].hostname.as_deref()),
        (None, None)
    );
    assert_eq!(s.terminated.len(), 4);
    let t = &s.terminated[1];
    assert_eq!(
        (t.sid, t.user.as_str(), t.hostname.as_str(), t.pid),
        (Sid(43), "user_1", "host_1", 21340)
    );
    assert_eq!(t.time, "01/19/2015.15:14");
    assert_eq!(t.reason, "session limit memory (5124 KB)");
}

#[test]
fn ses_oninit_list_without_explain_column() {
    let s = ses("oninit-onstat-g-ses");
    assert!(s.unparsed.is_empty());
    assert_eq!(s.sessions.len(), 11);
    let r = s
        .sessions
        .iter()
        .find(|r| r.sid == Sid(1458))
        .expect("1458");
    assert_eq!(
        (r.pid, r.hostname.as_deref()),
        (Some(23399), Some("oninit"))
    );
    assert_eq!((r.total_memory, r.used_memory), (782_336, 735_584));
    assert!(s.sessions.iter().all(|r| r.dynamic_explain.is_none()));
}

#[test]
fn ses_detail_demo_layout() {
    let s = ses("ifxtop-ses-detail-12.10");
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    assert_eq!(s.sessions.len(), 1);
    let r = &s.sessions[0];
    assert_eq!(
        (r.sid, r.user.as_str(), r.effective_user.as_deref()),
        (Sid(812), "appuser", None)
    );
    assert_eq!(
        (r.pid, r.hostname.as_deref(), r.threads),
        (Some(20544), Some("app03"), 1)
    );
    let d = detail(&s);
    assert_eq!(d.program.as_deref(), Some("/opt/app/bin/order_entry"));
    assert_eq!(d.threads.len(), 1);
    let t = &d.threads[0];
    assert_eq!(
        (t.tid, t.name.as_str(), t.rstcb),
        (Tid(978), "sqlexec", Addr(0x4b4a_d628))
    );
    assert_eq!((t.flags.as_str(), t.curstk), ("Y--P---", 5840));
    assert_eq!(t.status, "cond wait netnorm -");
    let q = sql_of(&s);
    assert_eq!(q.sid, Sid(812));
    assert_eq!(q.stmt_type.as_deref(), Some("UPDATE"));
    assert_eq!(q.database.as_deref(), Some("stores"));
    assert_eq!(q.isolation.as_deref(), Some("CR"));
    assert_eq!(q.lock_mode.as_deref(), Some("Wait 30"));
    assert_eq!((q.sql_error, q.isam_error), (Some(0), Some(0)));
    assert_eq!(
        (
            q.fe_version.as_deref(),
            q.explain.as_deref(),
            q.role.as_deref()
        ),
        (Some("9.24"), Some("Off"), None)
    );
    assert_eq!(d.statement_name.as_deref(), Some("slctcur"));
    assert_eq!(d.current_sql_id, Some(5));
    let stmt = "update customer set balance = balance + 10.00\nwhere customer_num = 104";
    assert_eq!(d.current_sql.as_deref(), Some(stmt));
    assert_eq!(d.last_parsed_sql.as_deref(), Some(stmt));
    assert_eq!(d.sscpool_bytes, None);
}

#[test]
fn ses_detail_cisco_11_50_and_10_00() {
    let s = ses("cisco-uccx-15.0-cli-ses-58-11.50");
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    assert_eq!(
        s.header.as_ref().and_then(|h| h.version.as_deref()),
        Some("11.50.UC4")
    );
    let r = &s.sessions[0];
    // pid -1: no client process id.
    assert_eq!(
        (r.sid, r.user.as_str(), r.pid, r.hostname.as_deref()),
        (Sid(58), "uccxuser", None, Some("sakkumar"))
    );
    let d = detail(&s);
    assert_eq!(d.program, None);
    assert_eq!(d.threads[0].rstcb, Addr(0x4b2d_eca0));
    assert_eq!(d.threads[0].status, "cond wait netnorm -");
    let q = sql_of(&s);
    assert_eq!(
        (q.stmt_type.as_deref(), q.database.as_deref()),
        (None, Some("db_cra"))
    );
    assert_eq!(
        (q.isolation.as_deref(), q.lock_mode.as_deref()),
        (Some("LC"), Some("Not Wait"))
    );
    assert_eq!(q.fe_version.as_deref(), Some("9.28"));
    assert_eq!(d.current_sql, None);
    let last = d.last_parsed_sql.as_deref().expect("last parsed");
    assert_eq!(last.lines().count(), 12);
    assert!(last.starts_with("select campaignen0_.campaignID as campaignID3_,"));
    assert!(last.ends_with("where campaignen0_.active=?"));

    let s = ses("cisco-uccx-15.0-cli-ses-27-10.00");
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    assert_eq!(
        (s.sessions[0].sid, s.sessions[0].tty.as_deref()),
        (Sid(27), None)
    );
    let d = detail(&s);
    assert_eq!(d.threads[0].status, "cond wait(netnorm)");
    let q = sql_of(&s);
    assert_eq!(
        (q.sid, q.lock_mode.as_deref(), q.fe_version.as_deref()),
        (Sid(27), Some("Wait 30"), Some("9.03"))
    );
    assert_eq!(
        d.last_parsed_sql.as_deref().map(|t| t.lines().count()),
        Some(3)
    );
}

#[test]
fn ses_detail_gbase_running_session() {
    let s = ses("gbase8s-ses-51-running-cut-banner");
    // The banner, cut by the author's copy to `On-Line -- Up ...`, is read from its mode on.
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    let h = s.header.as_ref().expect("the cut banner");
    assert_eq!(
        (h.version.as_deref(), h.mode.as_str(), h.uptime_s, h.shm_kb),
        (
            None,
            "On-Line",
            Some(14 * 86_400 + 19 * 3_600 + 53 * 60 + 19),
            Some(674_664)
        )
    );
    let d = detail(&s);
    assert_eq!(d.program.as_deref(), Some("/opt/gbase/bin/dbaccess"));
    assert_eq!(
        (d.threads[0].tid, d.threads[0].status.as_str()),
        (Tid(215), "running-")
    );
    assert_eq!(d.threads[0].flags, "---P---");
    let q = sql_of(&s);
    assert_eq!(
        (
            q.stmt_type.as_deref(),
            q.database.as_deref(),
            q.isolation.as_deref()
        ),
        (Some("SELECT"), Some("testdb"), Some("LC"))
    );
    assert_eq!(
        (d.statement_name.as_deref(), d.current_sql_id),
        (Some("unlcur"), Some(2))
    );
    assert_eq!(
        d.current_sql.as_deref(),
        Some("select max(t3.tabid) as id from systables t1,systables t2,systables t3,\nsystables t4,systables t5,systables t6  group by t1.tabname,t2.tabname")
    );
}

#[test]
fn ses_unknown_parts_are_unparsed_not_skipped() {
    let text = format!(
        "{BANNER}session                                      #RSAM    total      used       dynamic\n\
         id       user     tty      pid      hostname threads  memory     memory     explain\n\
         16       sitaramv 1        18523    carson   1        81920      71720      off\n\
         \n\
         Xadatasources participated in this session :\n\
         Xadatasource name                       RMID   Active\n\
         \n\
         Memory pools    count 1\n\
         name         class addr     totalsize freesize #allocfrag #freefrag\n\
         16           V     afea020  81920     10200    119        13\n\
         16           V     afea020  81920     10200\n"
    );
    let s = onstat_g_ses::parse(&text).expect("ses");
    assert_eq!(s.sessions[0].tty.as_deref(), Some("1"));
    // The XA part (its title and header, no data source) is read; the short pool row is
    // almost a row.
    assert_eq!(unparsed_lines(&s.unparsed), [13]);
    assert!(s.detail.is_some());
}

#[test]
fn ses_program_dash_grep_rows_and_offline() {
    let s = onstat_g_ses::parse(
        "Program :\n-\n\ntid      name     rstcb            flags    curstk   status\n\
         21674501 sqlexec  3d8005588        Y--P---  6256     cond wait  netnorm   -\n",
    )
    .expect("detail parts");
    let d = detail(&s);
    assert_eq!(d.program, None);
    assert_eq!(d.threads[0].rstcb, Addr(0x3_d800_5588));
    assert_eq!(d.threads[0].tid, Tid(21_674_501));
    // Session rows grep'd out of the list, with and without the effective-user column.
    let s = onstat_g_ses::parse(
        "21673556 wwbe     -         -        8598     saruman. 1        540672     455688     off\n\
         4522     informix -        14156 oninit   1        45056      33960\n",
    )
    .expect("rows");
    assert_eq!(s.sessions.len(), 2);
    assert_eq!(
        (
            s.sessions[0].effective_user.as_deref(),
            s.sessions[0].hostname.as_deref()
        ),
        (None, Some("saruman."))
    );
    assert_eq!(s.sessions[1].dynamic_explain, None);
    let s = onstat_g_ses::parse(OFFLINE).expect("offline");
    assert_eq!(
        s.offline.as_deref(),
        Some("shared memory not initialized for INFORMIXSERVER 'ol_prod'")
    );
    assert!(s.sessions.is_empty() && s.detail.is_none());
}

#[test]
fn ses_a_part_printed_twice_is_listed() {
    let text = "Current SQL statement :\n  select 1\n\nCurrent SQL statement :\n  select 2\n";
    let s = onstat_g_ses::parse(text).expect("ses");
    assert_eq!(detail(&s).current_sql.as_deref(), Some("select 1"));
    assert_eq!(unparsed_lines(&s.unparsed), [4, 5]);
}

// ---------------------------------------------------------------------------------------------
// onstat -g sql

#[test]
fn sql_demo_session_812() {
    let q = sql("ifxtop-sql-812");
    assert!(q.unparsed.is_empty());
    assert_eq!(
        q.header.as_ref().map(|h| h.uptime_s),
        Some(Some(12 * 86_400 + 3 * 3_600 + 4 * 60 + 5))
    );
    assert_eq!(q.sessions.len(), 1);
    let r = &q.sessions[0];
    assert_eq!(
        (r.sid, r.stmt_type.as_deref(), r.lock_mode.as_deref()),
        (Sid(812), Some("UPDATE"), Some("Wait 30"))
    );
    assert_eq!(
        (q.statement_name.as_deref(), q.current_sql_id),
        (Some("slctcur"), Some(5))
    );
    assert_eq!(
        q.current_sql.as_deref(),
        Some("update customer set balance = balance + 10.00\nwhere customer_num = 104")
    );
    // The same row as in `onstat -g ses 812`.
    assert_eq!(
        Some(r),
        ses("ifxtop-ses-detail-12.10")
            .detail
            .as_ref()
            .and_then(|d| d.sql.as_ref())
    );
}

#[test]
fn sql_doc_current_role_and_sscpool() {
    let q = sql("hcl-onedb-adr-0579-current-role");
    assert!(q.unparsed.is_empty());
    let r = &q.sessions[0];
    assert_eq!(
        (r.sid, r.stmt_type.as_deref(), r.database.as_deref()),
        (Sid(22), None, Some("test"))
    );
    assert_eq!(
        (r.explain.as_deref(), r.role.as_deref()),
        (Some("Off"), Some("hr"))
    );
    assert_eq!(
        q.last_parsed_sql.as_deref(),
        Some("select id, name, decrypt_char(ssn, 'XXXXXXXXXX') from emp")
    );
    assert_eq!(q.current_sql, None);

    let q = sql("hcl-onedb-prf-680-sscpool");
    assert!(q.unparsed.is_empty());
    let r = &q.sessions[0];
    assert_eq!(
        (r.sid, r.database.as_deref(), r.explain.as_deref()),
        (Sid(14), Some("vjp_stores"), None)
    );
    assert_eq!((q.current_sql_id, q.sscpool_bytes), (None, Some(11_600)));
    assert_eq!(q.current_sql.as_deref().map(|s| s.lines().count()), Some(2));
}

#[test]
fn sql_list_two_word_statements_and_lock_modes() {
    let q = onstat_g_sql::parse(
        "Sess       SQL            Current            Iso Lock       SQL  ISAM F.E.\n\
         Id         Stmt type      Database           Lvl Mode       ERR  ERR  Vers  Explain\n\
         101        SELECT INTO    ko                 CR  Not Wait   0    0    8.50  Off\n\
         102        -              -                  NL  Not Wait   0    0    9.24  Off\n\
         103        DELETE         stores             RR  Wait 0    -243  -111 9.24  Off\n\
         104        INSERT         stores             CS  Wait       0    0    -     On\n\
         105        INSERT         stores             CS  Wait 30    0\n\
         106        INSERT         stores             CS  Not Wait   0    0    9.24  Off  hr  x\n",
    )
    .expect("list");
    assert_eq!(q.sessions.len(), 4);
    let s = &q.sessions;
    assert_eq!(s[0].stmt_type.as_deref(), Some("SELECT INTO"));
    assert_eq!(
        (s[1].stmt_type.as_deref(), s[1].database.as_deref()),
        (None, None)
    );
    assert_eq!(
        (s[2].lock_mode.as_deref(), s[2].sql_error, s[2].isam_error),
        (Some("Wait 0"), Some(-243), Some(-111))
    );
    assert_eq!(
        (
            s[3].lock_mode.as_deref(),
            s[3].fe_version.as_deref(),
            s[3].explain.as_deref()
        ),
        (Some("Wait"), None, Some("On"))
    );
    assert_eq!(unparsed_lines(&q.unparsed), [7, 8]);
}

#[test]
fn sql_offline_and_banner_alone() {
    let q = onstat_g_sql::parse(OFFLINE).expect("offline");
    assert!(q.offline.is_some() && q.sessions.is_empty());
    // `onstat -g sql <sid>` of a session that is gone or has no SQL prints the banner alone.
    let q = onstat_g_sql::parse(BANNER).expect("banner only");
    assert!(q.header.is_some());
    assert!(q.sessions.is_empty() && q.current_sql.is_none() && q.unparsed.is_empty());
    let s = onstat_g_ses::parse(BANNER).expect("banner only");
    assert!(s.sessions.is_empty() && s.detail.is_none() && s.unparsed.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Every kind: off-line, empty, garbage, another command's output.

#[test]
fn every_kind_accepts_the_off_line_message() {
    for (dir, kind) in kinds() {
        let v = kind
            .parse_to_json(OFFLINE)
            .unwrap_or_else(|e| panic!("{dir}: {e}"));
        assert_eq!(
            v["offline"], "shared memory not initialized for INFORMIXSERVER 'ol_prod'",
            "{dir}"
        );
        assert_eq!(v["unparsed"].as_array().map(Vec::len), Some(0), "{dir}");
    }
}

#[test]
fn every_kind_rejects_empty_and_garbage_at_line_and_column() {
    for (dir, kind) in kinds() {
        for text in ["", "\n\n  \n"] {
            let e = kind.parse_to_json(text).expect_err(dir);
            assert_eq!(
                (e.line, e.column, e.snippet.as_str()),
                (1, 1, "end of input"),
                "{dir}"
            );
        }
        let e = kind
            .parse_to_json("\n\nhello world\nmore\n")
            .expect_err(dir);
        assert_eq!(
            (e.line, e.column, e.snippet.as_str()),
            (3, 1, "hello world"),
            "{dir}"
        );
        let command = match kind.name {
            "onstat-g-ath" => "onstat -g ath",
            "onstat-g-ntt" => "onstat -g ntt",
            "onstat-k" => "onstat -k",
            "onstat-g-ses" => "onstat -g ses",
            "onstat-g-pqs" => "onstat -g pqs",
            _ => "onstat -g sql",
        };
        assert!(
            e.expected.starts_with(&format!("{command} output: ")),
            "{dir}: {}",
            e.expected
        );
    }
}

/// The column (1-based) where `needle` starts in `line`.
fn col(line: &str, needle: &str) -> usize {
    line.find(needle).expect("needle in line") + 1
}

#[test]
fn errors_point_at_the_column_that_stopped_the_row() {
    let cases: [(Kind, &str, &str, &str); 5] = [
        (
            kind("onstat-g-ath"),
            "213 14c91ec0 zz98 2 cond wait sm_read 1cpu sqlexec",
            "zz98",
            "rstcb",
        ),
        (
            kind("onstat-g-ntt"),
            "14e2a8c0 sqlexec x4448 15:56:35",
            "x4448",
            "session id",
        ),
        (
            kind("onstat-k"),
            "a095f78 0 a4d9e68 0 hdr+s 100002 203 0",
            "hdr+s",
            "lock type",
        ),
        (
            kind("onstat-g-ses"),
            "23 informix - 17602 carson 1 57344 4896x off",
            "4896x",
            "used memory",
        ),
        (
            kind("onstat-g-sql"),
            "812 UPDATE stores CR Wait 30 0 0",
            "Wait",
            "errors and a client version",
        ),
    ];
    for (kind, line, at, needs) in cases {
        let e = kind
            .parse_to_json(&format!("\n{line}\n"))
            .expect_err(kind.name);
        assert_eq!((e.line, e.column), (2, col(line, at)), "{}: {e}", kind.name);
        assert!(e.expected.contains(needs), "{}: {}", kind.name, e.expected);
    }
}

#[test]
fn other_commands_outputs_are_errors() {
    let others = [
        "onstat-u/oninit-onstat-u.txt",
        "onstat-g-con/oninit-onstat-g-con.txt",
        "onstat-X/oninit-onstat-X-two-pools.txt",
    ];
    for (dir, kind) in kinds() {
        for other in others {
            let e = kind.parse_to_json(&fixture(other)).expect_err(dir);
            assert_eq!((e.line, e.column), (1, 1), "{dir} given {other}: {e}");
        }
    }
    // And the five do not take each other's output.
    let e = onstat_g_ath::parse(&fixture("onstat-k/ibm-kc-12.10-adref-0597.txt"))
        .expect_err("k as ath");
    assert_eq!(e.line, 1);
    let e = onstat_k::parse(&fixture("onstat-g-ath/hcl-14.10-adr-0514-truncated.txt"))
        .expect_err("ath as k");
    assert_eq!(e.line, 1);
    let e = onstat_g_ntt::parse(&fixture("onstat-g-ses/ibm-kc-12.10-adr-0574.txt"))
        .expect_err("ses as ntt");
    assert_eq!(e.line, 1);
    let e = onstat_g_sql::parse(&fixture("onstat-g-ntt/hcl-14.10-adr-0555.txt"))
        .expect_err("ntt as sql");
    assert_eq!(e.line, 1);
}

// ---------------------------------------------------------------------------------------------
// The oninit captures come from one instance: -g con waiter → -g ath tid → rstcb → -u address,
// whose wait column is the condition's address.

#[test]
fn oninit_con_waiters_are_ath_threads_waiting_in_onstat_u() {
    let con = onstat_g_con::parse(&fixture("onstat-g-con/oninit-onstat-g-con.txt")).expect("con");
    let a = ath("oninit-onstat-g-ath-truncated");
    let u = onstat_u::parse(&fixture("onstat-u/oninit-onstat-u.txt")).expect("-u");
    let mut joined = Vec::new();
    for c in &con.conditions {
        let Some(t) = a.thread(c.waiter) else {
            continue;
        };
        let rstcb = t.rstcb.expect("a waiting thread has an rstcb");
        let user = u
            .threads
            .iter()
            .find(|x| x.address == rstcb)
            .unwrap_or_else(|| panic!("tid {} rstcb {rstcb} not in onstat -u", t.tid));
        assert_eq!(user.wait, Some(c.addr), "tid {}", t.tid);
        assert_eq!(t.status, format!("cond wait {}", c.name), "tid {}", t.tid);
        assert_eq!(t.state, cond(&c.name), "tid {}", t.tid);
        joined.push((t.tid.0, user.sessid.0));
    }
    // tid 359 is past the cut of the -g ath copy.
    assert_eq!(joined, [(213, 54), (349, 23), (357, 83), (358, 85)]);
}

// ---------------------------------------------------------------------------------------------
// onstat -g pqs

fn pqs(stem: &str) -> OnstatGPqs {
    ok("onstat-g-pqs", stem, onstat_g_pqs::parse)
}

/// The doc figure (ids_adr_1077, no banner): every field of the two whole rows, and the third
/// row, cut by the copy after its time, kept with what it has.
#[test]
fn pqs_doc_figure_rows_and_the_cut_row() {
    let p = pqs("hcl-14.10-adr-1077-doc-cut");
    assert!(p.header.is_none());
    assert!(p.unparsed.is_empty(), "{:?}", p.unparsed);
    assert_eq!(p.operators.len(), 3);
    let o = &p.operators[0];
    assert_eq!(
        (o.addr, o.sid, o.opname.as_str(), o.phase.as_str(), o.rows),
        (Addr(0xae5_0b3a), Sid(23), "scan", "open", 0)
    );
    assert_eq!((o.time_s, o.in1, o.in2), (0.0, None, None));
    assert_eq!(o.stmt_type.as_deref(), Some("SELECT"));
    let o = &p.operators[1];
    assert_eq!(
        (o.addr, o.sid, o.opname.as_str(), o.phase.as_str(), o.rows),
        (Addr(0xaf2_69d0), Sid(5), "nljoin", "next", 224_717)
    );
    assert!((o.time_s - 1.82).abs() < 1e-9, "{}", o.time_s);
    assert_eq!(
        (o.in1, o.in2),
        (Some(Addr(0xaf2_6a90)), Some(Addr(0xaeb_4478)))
    );
    assert_eq!(o.stmt_type.as_deref(), Some("SELECT"));
    let o = &p.operators[2];
    assert_eq!(
        (o.addr, o.sid, o.opname.as_str(), o.phase.as_str(), o.rows),
        (Addr(0xaf2_6a90), Sid(5), "scan", "next", 472)
    );
    assert!((o.time_s - 0.2).abs() < 1e-9, "{}", o.time_s);
    assert_eq!((o.in1, o.in2, o.stmt_type.as_deref()), (None, None, None));
    // Session 5's join reads the scan: in1 names it.
    assert_eq!(p.of_session(Sid(5)).count(), 2);
}

/// SYNTHETIC (`ifxtop-15.0-wide-three-sessions.txt`, made from the doc figure's layout): a 15.0
/// banner and date line, 16-hex-digit addresses, rows in the billions, times past an hour.
#[test]
fn pqs_wide_15_0_numbers_synthetic() {
    let p = pqs("ifxtop-15.0-wide-three-sessions");
    assert_eq!(p.header.as_ref().map(|h| h.mode.as_str()), Some("On-Line"));
    assert!(p.unparsed.is_empty(), "{:?}", p.unparsed);
    assert_eq!(p.operators.len(), 6);
    let o = &p.operators[0];
    assert_eq!(
        (o.addr, o.sid, o.opname.as_str(), o.rows),
        (
            Addr(0x7f3a_2c00_18a0_e2b0),
            Sid(1201),
            "hjoin",
            4_829_110_377
        )
    );
    assert!((o.time_s - 3761.07).abs() < 1e-6, "{}", o.time_s);
    assert_eq!(
        (o.in1, o.in2),
        (
            Some(Addr(0x7f3a_2c00_18a0_f410)),
            Some(Addr(0x7f3a_2c00_18a1_0570))
        )
    );
    let sort = &p.operators[3];
    assert_eq!(
        (sort.in1, sort.in2),
        (Some(Addr(0x7f3a_2c00_21b7_8e68)), None)
    );
    let last = &p.operators[5];
    assert_eq!(
        (last.sid, last.rows, last.stmt_type.as_deref()),
        (Sid(77), 12_000_000_000, Some("DELETE"))
    );
    assert!((last.time_s - 150_787.4).abs() < 1e-6, "{}", last.time_s);
    assert_eq!(
        [Sid(1201), Sid(18004), Sid(77)].map(|s| p.of_session(s).count()),
        [3, 2, 1]
    );
}

/// A row the parser cannot read is listed, not dropped; the banner alone is an answer.
#[test]
fn pqs_unreadable_rows_are_listed_and_the_banner_alone_answers() {
    let text = format!(
        "{BANNER}Query Operators:\naddr ses-id opname phase rows time in1 in2 stmt-type\n\
         af269d0 5 nljoin next 224717 00:01.82 af26a90 aeb4478 SELECT\n\
         af26a90 5 scan next lots 00:00.20 0 0 SELECT\n"
    );
    let p = onstat_g_pqs::parse(&text).expect("pqs");
    assert_eq!(p.operators.len(), 1);
    assert_eq!(p.unparsed.len(), 1);
    assert!(p.unparsed[0].text.contains("lots"));
    let p = onstat_g_pqs::parse(BANNER).expect("banner alone");
    assert!(p.operators.is_empty() && p.header.is_some());
}
