//! Tests for the vital-sign parsers (`onstat -`/`-r`, `-p`, `-l`, `-g glo`, `-g lmx`, `-g wmx`,
//! `-s`, `-g seg`, `-g bth`/`BTH`, `-g tpf`, `-x`, `-g rea`): every fixture snapshotted, the
//! quirks of each format by hand, the wrong-command matrix, and `onstat -p`'s values under any
//! names never panicking (never panicking on anything else is `robust`'s, for every kind).

// Tests fail by panicking; `expect` says what was missing.
#![allow(clippy::expect_used)]

use crate::common::{fixture, fixtures_in, kind};
use crate::fixtures_all::kind_for;
use ifxtop::ids::{Addr, Sid, Tid};
use ifxtop::parsers::onstat_banner;
use ifxtop::parsers::onstat_g_bth;
use ifxtop::parsers::onstat_g_glo;
use ifxtop::parsers::onstat_g_lmx;
use ifxtop::parsers::onstat_g_rea;
use ifxtop::parsers::onstat_g_seg;
use ifxtop::parsers::onstat_g_tpf;
use ifxtop::parsers::onstat_g_wmx;
use ifxtop::parsers::onstat_l;
use ifxtop::parsers::onstat_p::{self, Counter};
use ifxtop::parsers::onstat_s;
use ifxtop::parsers::onstat_x_txn::{self, LogPos};
use ifxtop::source::Kind;
use proptest::prelude::*;

/// The fixture directories of the vital-sign kinds, with their kind and how many samples each
/// holds at least.
const DIRS: &[(&str, &str, usize)] = &[
    ("onstat-banner", "onstat-banner", 5),
    ("onstat-r", "onstat-banner", 1),
    ("onstat-p", "onstat-p", 2),
    ("onstat-l", "onstat-l", 2),
    ("onstat-g-glo", "onstat-g-glo", 3),
    ("onstat-g-lmx", "onstat-g-lmx", 2),
    ("onstat-g-wmx", "onstat-g-wmx", 2),
    ("onstat-s", "onstat-s", 2),
    ("onstat-g-seg", "onstat-g-seg", 2),
    ("onstat-g-bth", "onstat-g-bth", 1),
    ("onstat-g-BTH", "onstat-g-bth", 1),
    ("onstat-g-tpf", "onstat-g-tpf", 2),
    ("onstat-x-txn", "onstat-x", 2),
    ("onstat-g-rea", "onstat-g-rea", 2),
];

/// The kinds this file is about.
const KINDS: &[&str] = &[
    "onstat-banner",
    "onstat-p",
    "onstat-l",
    "onstat-g-glo",
    "onstat-g-lmx",
    "onstat-g-wmx",
    "onstat-s",
    "onstat-g-seg",
    "onstat-g-bth",
    "onstat-g-tpf",
    "onstat-x",
    "onstat-g-rea",
];

#[test]
fn every_fixture_matches_its_snapshot() {
    for &(dir, k, at_least) in DIRS {
        let all = fixtures_in(dir);
        assert!(all.len() >= at_least, "{dir}: {} fixtures", all.len());
        for (stem, text) in all {
            let json = kind(k)
                .parse_to_json(&text)
                .unwrap_or_else(|e| panic!("{dir}/{stem}: {e}"));
            crate::snap_json!(format!("parse__{dir}__{stem}"), &json);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The wrong-command matrix

/// Fixtures every onstat kind accepts, and why.
const ACCEPTED_BY_EVERY_ONSTAT_KIND: &[&str] = &[
    // The off-line message is the whole answer of every onstat command: no command's output
    // can be told from another's when the server is down.
    "onstat-u/ifxtop-offline.txt",
];

#[test]
fn each_vital_kind_rejects_every_other_commands_fixture() {
    let dirs = crate::common::fixture_dirs();
    let mut accepted = Vec::new();
    let mut checked = 0;
    for dir in &dirs {
        for (stem, text) in fixtures_in(dir) {
            let file = format!("{stem}.txt");
            let own = kind_for(dir, &file).map(|k| k.name);
            let rel = format!("{dir}/{file}");
            for &k in KINDS {
                if own == Some(k) || ACCEPTED_BY_EVERY_ONSTAT_KIND.contains(&rel.as_str()) {
                    continue;
                }
                checked += 1;
                if let Ok(json) = kind(k).parse_to_json(&text) {
                    accepted.push(format!("{k} accepted {rel}: {json}"));
                }
            }
        }
    }
    assert!(checked > 500, "only {checked} pairs");
    assert!(accepted.is_empty(), "{}", accepted.join("\n\n"));
}

#[test]
fn the_offline_message_is_every_kinds_answer() {
    let text = fixture("onstat-u/ifxtop-offline.txt");
    for &k in KINDS {
        let json = kind(k).parse_to_json(&text).expect("offline");
        assert!(json["offline"].is_string(), "{k}: {json}");
    }
}

#[test]
fn every_vital_kind_rejects_empty_and_garbage() {
    for &k in KINDS {
        for text in ["", "\n\n", "hello world\n", "12 34 56\n"] {
            let e = kind(k).parse_to_json(text).expect_err(k);
            assert_eq!(e.line, 1, "{k}");
            assert!(e.expected.starts_with("onstat -"), "{k}: {}", e.expected);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The banner (`onstat -`, `onstat -r`) and the date line

#[test]
fn banner_alone_with_the_15_0_date_line() {
    let b =
        onstat_banner::parse(&fixture("onstat-banner/ifxtop-15.0-date-line.txt")).expect("banner");
    let h = b.header.as_ref().expect("header");
    assert_eq!(h.date.as_deref(), Some("Mon Nov 23 13:35:20 2026"));
    assert_eq!(
        (h.version.as_deref(), h.mode_flags.as_slice()),
        (Some("15.0.0.1"), &["Prim".to_string()][..])
    );
    let b = onstat_banner::parse(&fixture(
        "onstat-banner/ifxtop-15.0-iso-date-blocked-ckpt.txt",
    ))
    .expect("banner");
    let h = b.header.as_ref().expect("header");
    assert_eq!(
        (h.date.as_deref(), h.blocked.as_deref(), h.checkpoint_flag()),
        (Some("2026-11-23 13:35:20"), Some("CKPT"), Some("CKPT INP"))
    );
}

#[test]
fn every_onstat_kind_reads_the_date_line() {
    // The date line belongs to the banner whatever the command.
    let text =
        "HCL Informix Dynamic Server Version 15.0.0.1 -- On-Line -- Up 00:10:00 -- 1024 Kbytes\n\
                Mon Nov 23 13:35:20 2026\n\n\
                Latches with lock or userthread set\n\
                name     address           lock wait userthread\n\
                physlog  4410d5a8          0    0    45a616b8\n";
    let s = onstat_s::parse(text).expect("-s");
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    assert_eq!(
        s.header.and_then(|h| h.date).as_deref(),
        Some("Mon Nov 23 13:35:20 2026")
    );
    let u = ifxtop::parsers::onstat_u::parse(
        "Version 15.0.0.1 -- On-Line -- Up 00:10:00 -- 1024 Kbytes\n2026-11-23 13:35:20\n\nUserthreads\n",
    )
    .expect("-u");
    let h = u.header.expect("banner");
    assert_eq!(
        (h.product, h.date.as_deref()),
        (None, Some("2026-11-23 13:35:20"))
    );
}

#[test]
fn banner_longtx_and_no_product() {
    let b = onstat_banner::parse(&fixture("onstat-banner/ifxtop-blocked-longtx.txt")).expect("x");
    let h = b.header.expect("header");
    assert_eq!(h.mode_flags, ["LONGTX"]);
    assert_eq!(h.blocked.as_deref(), Some("LONGTX"));
    let b = onstat_banner::parse(&fixture("onstat-banner/ifxtop-no-product-rss.txt")).expect("x");
    let h = b.header.expect("header");
    assert_eq!(h.product, None);
    assert_eq!(
        (h.mode.as_str(), h.mode_flags.as_slice()),
        ("Updatable", &["RSS".to_string()][..])
    );
}

#[test]
fn onstat_r_repeats_wrapped_banners() {
    let b = onstat_banner::parse(&fixture(
        "onstat-banner/ifxtop-r-5-wrapped-no-vendor-sec.txt",
    ))
    .expect("onstat -r");
    assert!(b.unparsed.is_empty(), "{:?}", b.unparsed);
    let up: Vec<_> = std::iter::once(b.header.as_ref())
        .chain(b.repeats.iter().map(Some))
        .map(|h| h.and_then(|h| h.uptime_s))
        .collect();
    assert_eq!(up, [Some(1_036_809), Some(1_036_814), Some(1_036_819)]);
    assert_eq!(b.repeats[0].blocked.as_deref(), Some("CKPT"));
    assert_eq!(b.latest().and_then(|h| h.blocked.as_deref()), None);
    let r =
        onstat_banner::parse(&fixture("onstat-r/hcl-14.10-adr-0604-doc-r5-r10.txt")).expect("doc");
    assert_eq!(r.repeats.len(), 5);
    assert_eq!(
        r.latest().and_then(|h| h.version.as_deref()),
        Some("11.50.F")
    );
}

#[test]
fn banner_kind_rejects_a_banner_with_a_body() {
    let e = onstat_banner::parse(&fixture("onstat-s/hcl-14.10-adr-0606-doc-blocked-ckpt.txt"))
        .expect_err("onstat -s");
    assert_eq!((e.line, e.column), (5, 1));
    assert!(
        e.expected.contains("ends with its banner"),
        "{}",
        e.expected
    );
}

// ---------------------------------------------------------------------------------------------
// onstat -p

#[test]
fn p_doc_sample_names_both_cached_columns() {
    let p = onstat_p::parse(&fixture("onstat-p/hcl-14.10-adr-0602-doc.txt")).expect("-p");
    assert!(p.unparsed.is_empty(), "{:?}", p.unparsed);
    assert_eq!(p.counters.len(), 45);
    assert_eq!(p.counters["%cached_read"], Counter::Decimal(99.99));
    assert_eq!(p.counters["%cached_write"], Counter::Decimal(89.16));
    assert_eq!(p.counters["bufreads"], Counter::Count(203_600_361));
    assert_eq!(p.get("usercpu"), Some(1551.59));
    assert_eq!(p.counters["RA-pgsused"], Counter::Count(2002));
}

#[test]
fn p_counters_running_into_each_other() {
    let p = onstat_p::parse(&fixture(
        "onstat-p/ifxtop-412-days-counters-run-together.txt",
    ))
    .expect("-p");
    assert!(p.unparsed.is_empty(), "{:?}", p.unparsed);
    let c = |n: &str| p.counters[n];
    assert_eq!(c("dskreads"), Counter::Count(8_812_903_417));
    assert_eq!(c("pagreads"), Counter::Count(12_040_981_552));
    assert_eq!(c("bufreads"), Counter::Count(98_123_440_917));
    assert_eq!(c("%cached_read"), Counter::Decimal(99.99));
    assert_eq!(c("commit"), Counter::Count(31_102_293));
    assert_eq!(c("rollbk"), Counter::Count(441_209));
    assert_eq!(c("usercpu"), Counter::Decimal(1_551_234.59));
    assert_eq!(c("syscpu"), Counter::Decimal(144_810.22));
    assert_eq!(c("numckpts"), Counter::Count(60211));
    assert_eq!(c("lockreqs"), Counter::Count(99_812_304_412));
    assert_eq!(c("deadlks"), Counter::Count(2));
}

#[test]
fn p_values_without_names_are_unparsed() {
    let p = onstat_p::parse("Profile\n1 2 3\ndskreads pagreads\n1 2 3\n").expect("title");
    let lines: Vec<_> = p.unparsed.iter().map(|u| u.line).collect();
    assert_eq!(lines, [2, 4]);
    assert!(p.counters.is_empty());
}

// ---------------------------------------------------------------------------------------------
// onstat -l

#[test]
fn l_doc_sample() {
    let l = onstat_l::parse(&fixture("onstat-l/hcl-onedb-2.0-adr-0598-doc.txt")).expect("-l");
    assert!(l.unparsed.is_empty(), "{:?}", l.unparsed);
    let p = l.physical.as_ref().expect("physical");
    assert_eq!(
        (p.bufused, p.bufsize, p.numpages, p.numwrits),
        (Some(0), Some(16), Some(716), Some(55))
    );
    assert_eq!(
        (
            p.phybegin.as_deref(),
            p.physize,
            p.phypos,
            p.phyused,
            p.used_pct
        ),
        (Some("1:263"), Some(500), Some(270), Some(0), Some(0.0))
    );
    let g = l.logical.as_ref().expect("logical");
    assert_eq!(
        (g.numrecs, g.numpages, g.numwrits),
        (Some(42169), Some(2872), Some(1043))
    );
    assert_eq!(g.subsystems.len(), 1);
    assert_eq!(g.subsystems[0].space_used, 4_436_496);
    assert_eq!(l.logs.len(), 8);
    let cur = l.current().expect("current log");
    assert_eq!(
        (cur.number, cur.flags.as_str(), cur.used_pct),
        (6, "U---C-L", 74.4)
    );
    assert_eq!((l.active, l.total), (Some(8), Some(8)));
    assert_eq!(l.not_backed_up(), 1);
}

#[test]
fn l_eight_char_flags_and_tab_indented_subsystems() {
    let l = onstat_l::parse(&fixture(
        "onstat-l/ifxtop-14.10-8-char-flags-tab-subsystems.txt",
    ))
    .expect("-l");
    assert!(l.unparsed.is_empty(), "{:?}", l.unparsed);
    let subs: Vec<_> = l
        .logical
        .as_ref()
        .expect("logical")
        .subsystems
        .iter()
        .map(|s| (s.name.as_str(), s.numrecs, s.space_used))
        .collect();
    assert_eq!(
        subs,
        [
            ("OLDRSAM", 98_390_115, 9_876_543_210),
            ("HA", 25418, 1_118_392)
        ]
    );
    assert!(l.logs.iter().all(|f| f.flags.len() == 8));
    assert_eq!(l.current().map(|f| f.uniqid), Some(3087));
    assert_eq!(l.not_backed_up(), 5);
}

#[test]
fn l_subsystem_rows_need_their_header() {
    // `OLDRSAM 42169 4436496` alone is three words: not a row outside its table.
    let l = onstat_l::parse("Logical Logging\nOLDRSAM 42169 4436496\n").expect("title");
    assert_eq!(l.unparsed.len(), 1);
    let l = onstat_l::parse(
        "Logical Logging\n\tSubsystem\tnumrecs\tLog Space used\n\tOLDRSAM\t42169\t4436496\n",
    )
    .expect("tabs between columns too");
    assert!(l.unparsed.is_empty(), "{:?}", l.unparsed);
}

// ---------------------------------------------------------------------------------------------
// onstat -g glo

#[test]
fn glo_doc_sample() {
    let g = onstat_g_glo::parse(&fixture(
        "onstat-g-glo/hcl-14.10-adr-0533-doc-truncated.txt",
    ))
    .expect("glo");
    assert!(g.unparsed.is_empty(), "{:?}", g.unparsed);
    let gl = g.global.expect("global");
    assert_eq!(
        (gl.sessions, gl.threads, gl.vps, gl.lngspins, gl.time),
        (0, 23, 14, 0, Some(142))
    );
    assert_eq!(g.scheduler.map(|s| s.yield_forever), Some(37319));
    assert_eq!(g.classes.len(), 11);
    assert_eq!(g.classes[5].class, "soc");
    assert_eq!(g.classes[5].vps, 4);
    // The copy ends inside the class summary.
    assert!(g.vps.is_empty() && g.classes_total.is_none());
}

#[test]
fn glo_many_vps_with_thread_and_eff() {
    let g = onstat_g_glo::parse(&fixture(
        "onstat-g-glo/ifxtop-14.10-16-cpu-vps-wide-times.txt",
    ))
    .expect("glo");
    assert!(g.unparsed.is_empty(), "{:?}", g.unparsed);
    assert_eq!(g.vps.len(), 24);
    assert_eq!(g.vps.iter().filter(|v| v.class == "cpu").count(), 16);
    let total = g.classes_total.as_ref().expect("total row");
    assert_eq!((total.vps, total.total), (24, 4_816_405.33));
    assert_eq!(g.classes.iter().map(|c| c.vps).sum::<u64>(), 24);
    let soc = g.vps.iter().find(|v| v.class == "soc").expect("soc");
    assert_eq!((soc.thread, soc.eff_pct), (None, None));
    let first = &g.vps[0];
    assert_eq!((first.pid, first.eff_pct), (4410, Some(64.0)));
    assert_eq!(g.vps_total.map(|t| t.total), Some(4_816_405.33));
}

#[test]
fn glo_vp_table_without_thread_eff() {
    let g = onstat_g_glo::parse(&fixture(
        "onstat-g-glo/ifxtop-11.50-no-time-no-thread-eff.txt",
    ))
    .expect("glo");
    assert!(g.unparsed.is_empty(), "{:?}", g.unparsed);
    assert_eq!(g.global.map(|x| x.time), Some(None));
    assert_eq!(g.vps.len(), 10);
    assert!(g
        .vps
        .iter()
        .all(|v| v.thread.is_none() && v.eff_pct.is_none()));
    assert_eq!(g.vps[9].total, 210.29);
}

#[test]
fn glo_rows_need_their_title() {
    let e = onstat_g_glo::parse(" cpu         1         92.12     0.59      92.71\n")
        .expect_err("a class row alone");
    assert_eq!((e.line, e.column), (1, 2));
}

// ---------------------------------------------------------------------------------------------
// onstat -g lmx / wmx

#[test]
fn lmx_doc_two_outputs_with_continued_waiters() {
    let m = onstat_g_lmx::parse(&fixture(
        "onstat-g-lmx/hcl-14.10-adr-0544-doc-two-outputs-aix.txt",
    ))
    .expect("lmx");
    assert!(m.unparsed.is_empty(), "{:?}", m.unparsed);
    assert_eq!(m.mutexes.len(), 5);
    let free_lock = &m.mutexes[1];
    assert_eq!(free_lock.addr, Addr(0x0700_0002_043a_9148));
    assert_eq!(free_lock.holder, Some(Tid(11009)));
    let waiters: Vec<_> = free_lock
        .waiters
        .iter()
        .map(|w| (w.tid, w.waittime))
        .collect();
    assert_eq!(waiters, [(Tid(200), 22921), (Tid(11010), 22918)]);
    assert_eq!(m.free_list_mutexes, Some(49));
    assert_eq!(m.waits().count(), 4);
}

#[test]
fn lmx_several_waiters_blank_names_and_no_holder() {
    let m = onstat_g_lmx::parse(&fixture(
        "onstat-g-lmx/ifxtop-12.10-x86-three-waiters-no-holder.txt",
    ))
    .expect("lmx");
    assert!(m.unparsed.is_empty(), "{:?}", m.unparsed);
    assert_eq!(m.mutexes[0].waiters.len(), 3);
    assert_eq!(
        (m.mutexes[1].name.as_str(), m.mutexes[1].holder),
        ("ddh chain", None)
    );
    assert!(m.mutexes[2].waiters.is_empty());
    // A waiter pair that follows no mutex row is not a waiter.
    let m = onstat_g_lmx::parse("Locked mutexes:\n200 22921\n").expect("title");
    assert_eq!(m.unparsed.len(), 1);
}

#[test]
fn wmx_and_lmx_are_told_apart_by_their_title() {
    let text = fixture("onstat-g-wmx/hcl-onedb-adr-0591-doc.txt");
    let w = onstat_g_wmx::parse(&text).expect("wmx");
    assert!(w.unparsed.is_empty(), "{:?}", w.unparsed);
    assert_eq!(w.mutexes[0].waiters.len(), 2);
    let e = onstat_g_lmx::parse(&text).expect_err("lmx of a wmx output");
    assert_eq!(e.line, 1);
    assert!(e.expected.contains("Locked mutexes:"), "{}", e.expected);
}

// ---------------------------------------------------------------------------------------------
// onstat -s

#[test]
fn s_blocked_checkpoint_and_elisions() {
    let s =
        onstat_s::parse(&fixture("onstat-s/hcl-14.10-adr-0606-doc-blocked-ckpt.txt")).expect("-s");
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    let h = s.header.as_ref().expect("wrapped banner");
    assert_eq!(
        (h.blocked.as_deref(), h.checkpoint_flag(), h.uptime_s),
        (Some("CKPT"), Some("CKPT REQ"), Some(19 * 60 + 21))
    );
    assert_eq!(s.latches[0].name, "physlog");
    assert_eq!(s.latches[0].userthread, Some(Addr(0x45a6_16b8)));
    let s = onstat_s::parse(&fixture("onstat-s/hcl-14.10-prf-186-doc-lru-bf.txt")).expect("-s");
    assert_eq!(s.elisions, [1, 6]);
    let names: Vec<_> = s.latches.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["LRU1", "bf[34]"]);
}

// ---------------------------------------------------------------------------------------------
// onstat -g seg

#[test]
fn seg_doc_two_outputs_and_locked_segments() {
    let g = onstat_g_seg::parse(&fixture(
        "onstat-g-seg/hcl-14.10-adr-0573-doc-two-outputs.txt",
    ))
    .expect("seg");
    assert!(g.unparsed.is_empty(), "{:?}", g.unparsed);
    assert_eq!(g.segments.len(), 6);
    // The summary is the last output's.
    let s = g.summary.as_ref().expect("summary");
    assert_eq!(
        (s.total_size, s.low_memory_reserve),
        (Some(264_724_480), Some(4_194_304))
    );
    let g =
        onstat_g_seg::parse(&fixture("onstat-g-seg/ifxtop-64-bit-locked-vx-m.txt")).expect("seg");
    assert!(g.segments.iter().all(|s| s.locked));
    let classes: Vec<_> = g.segments.iter().map(|s| s.class.as_str()).collect();
    assert_eq!(classes, ["R", "V", "B", "VX", "M"]);
    assert_eq!(g.bytes_of_class("B"), 8_589_950_976);
    let s = g.summary.expect("summary");
    assert_eq!(
        (s.low_memory_reserve_used, s.low_memory_reserve_max_block),
        (Some(2), Some(1_183_744))
    );
}

// ---------------------------------------------------------------------------------------------
// onstat -g bth / BTH

#[test]
fn bth_doc_sample() {
    let b = onstat_g_bth::parse(&fixture("onstat-g-bth/hcl-14.10-adr-1179-doc.txt")).expect("bth");
    assert!(b.unparsed.is_empty(), "{:?}", b.unparsed);
    assert_eq!(b.blockers.len(), 1);
    assert_eq!(
        (b.blockers[0].tid, b.blockers[0].session),
        (Tid(48), Sid(26))
    );
    assert_eq!(b.waiting.len(), 9);
    let lock = &b.waiting[2];
    assert_eq!((lock.tid, lock.blocker), (Tid(50), Some(Tid(49))));
    assert_eq!(lock.resource_address, Some(Addr(0x4411_e578)));
    let cond = &b.waiting[6];
    assert_eq!(
        (cond.name.as_str(), cond.resource.as_str(), cond.blocker),
        ("bf_priosweep()", "Condition (bp_cond)", None)
    );
}

#[test]
fn bth_upper_case_stack_and_session_block() {
    let b = onstat_g_bth::parse(&fixture(
        "onstat-g-BTH/ibm-kc-14.10-adr-1179-collapsed-truncated.txt",
    ))
    .expect("BTH");
    assert!(b.unparsed.is_empty(), "{:?}", b.unparsed);
    let st = &b.stacks[0];
    assert_eq!(
        (st.tid, st.name.as_str(), st.vp, st.len),
        (Tid(48), "sqlexec", Some(1), Some(69632))
    );
    assert_eq!(st.frames.len(), 17);
    assert_eq!(st.frames[16].function, "startup");
    assert_eq!(b.blockers[0].session, Sid(26));
    // The session block is cut after its first header line: read, and empty.
    assert_eq!(b.blocker_sessions.len(), 1);
    assert!(b.blocker_sessions[0].sessions.is_empty());
}

#[test]
fn bth_session_block_is_read_by_the_ses_parser() {
    let text = format!(
        "This command attempts to identify any blocking threads.\n\n\
         Highest level blocker(s)\n tid      name                 session\n 48       sqlexec              26\n\n\
         Stack for thread: 48 sqlexec\nstate: running\n\n{}",
        fixture("onstat-g-ses/ifxtop-ses-detail-12.10.txt")
            .lines()
            .skip(2)
            .collect::<Vec<_>>()
            .join("\n")
    );
    let b = onstat_g_bth::parse(&text).expect("BTH with a whole session");
    assert!(b.unparsed.is_empty(), "{:?}", b.unparsed);
    let ses = &b.blocker_sessions[0];
    assert_eq!(ses.sessions[0].sid, Sid(812));
    assert!(ses.detail.is_some());
    // Alone, the session block is `onstat -g ses` output, not this command's.
    assert!(onstat_g_bth::parse(&fixture("onstat-g-ses/ifxtop-ses-detail-12.10.txt")).is_err());
}

// ---------------------------------------------------------------------------------------------
// onstat -g tpf

#[test]
fn tpf_doc_sample_and_log_space() {
    let t = onstat_g_tpf::parse(&fixture("onstat-g-tpf/hcl-14.10-adr-0587-doc.txt")).expect("tpf");
    // Line 1 is the doc's command line (`onstat -g tpf 945`): skipped as a prompt line is.
    assert!(t.unparsed.is_empty(), "{:?}", t.unparsed);
    let p = &t.profiles[0];
    assert_eq!((p.tid, p.lsus, p.lsmx), (Tid(945), Some(743_580), Some(0)));
    assert_eq!(p.counter("bfr"), Some(16183));
    assert_eq!(p.counters.len(), 15);
    let t = onstat_g_tpf::parse(&fixture(
        "onstat-g-tpf/ifxtop-all-threads-one-fills-the-log.txt",
    ))
    .expect("tpf");
    assert!(t.unparsed.is_empty(), "{:?}", t.unparsed);
    assert_eq!(t.by_log_space()[0].tid, Tid(5118));
    assert_eq!(t.by_log_space()[0].lsus, Some(1_318_932_480));
}

#[test]
fn tpf_session_column_where_printed() {
    let t = onstat_g_tpf::parse("tid sid lkreqs lsus lsmx\n77 12 4 1024 2048\n").expect("tpf");
    let p = &t.profiles[0];
    assert_eq!(
        (p.tid, p.session, p.lsus),
        (Tid(77), Some(Sid(12)), Some(1024))
    );
}

// ---------------------------------------------------------------------------------------------
// onstat -x (transactions)

#[test]
fn x_txn_two_line_header_long_transaction() {
    let x = onstat_x_txn::parse(&fixture(
        "onstat-x-txn/ifxtop-12.10-long-txn-rolling-back.txt",
    ))
    .expect("-x");
    assert!(x.unparsed.is_empty(), "{:?}", x.unparsed);
    assert_eq!(x.transactions.len(), 8);
    assert_eq!(
        (x.active, x.total, x.max_concurrent),
        (Some(8), Some(256), Some(61))
    );
    let oldest = x.by_begin()[0];
    assert_eq!(
        oldest.begin_logpos,
        Some(LogPos {
            log: 9871,
            pos: 0x2f_3018
        })
    );
    assert!(oldest.is_rolling_back());
    assert_eq!(
        (oldest.locks, oldest.rb_time.as_deref()),
        (183_221, Some("41:37"))
    );
    assert_eq!(oldest.userthread, Some(Addr(0x4b5a_9278)));
    let xa = &x.transactions[7];
    assert_eq!((xa.flags.as_str(), xa.userthread), ("S-XXG", None));
    assert_eq!(x.transactions[6].coord.as_deref(), Some("ol_hq"));
    assert_eq!(x.transactions[6].retrys, 1);
}

#[test]
fn x_txn_single_line_header_without_rb_time() {
    let x = onstat_x_txn::parse(&fixture(
        "onstat-x-txn/ifxtop-single-line-header-no-rb-time.txt",
    ))
    .expect("-x");
    assert!(x.unparsed.is_empty(), "{:?}", x.unparsed);
    assert!(x.transactions.iter().all(|t| t.rb_time.is_none()));
    assert_eq!(x.transactions[3].coord.as_deref(), Some("ol_east"));
    assert_eq!(
        x.transactions[1].curr_logpos,
        Some(LogPos {
            log: 34,
            pos: 0x486fc
        })
    );
}

#[test]
fn x_txn_footer_alone_is_onstat_u() {
    // `onstat -u` ends with the same footer.
    let e =
        onstat_x_txn::parse(" 4 active, 128 total, 9 maximum concurrent\n").expect_err("footer");
    assert_eq!(e.line, 1);
}

// ---------------------------------------------------------------------------------------------
// onstat -g rea

#[test]
fn rea_ready_queue() {
    let r = onstat_g_rea::parse(&fixture("onstat-g-rea/ifxtop-12.10-cpu-queue.txt")).expect("rea");
    assert!(r.unparsed.is_empty(), "{:?}", r.unparsed);
    assert_eq!(r.threads.len(), 6);
    assert_eq!(r.threads[5].vp_class, "12cpu");
    assert_eq!(r.threads[2].rstcb, None);
    let r = onstat_g_rea::parse(&fixture("onstat-g-rea/ifxtop-old-narrow-empty-queue.txt"))
        .expect("empty queue");
    assert!(r.threads.is_empty());
    // The same rows under `Threads:` are `onstat -g ath`.
    assert!(
        onstat_g_rea::parse(&fixture("onstat-g-ath/oninit-onstat-g-ath-truncated.txt")).is_err()
    );
}

#[test]
fn kinds_are_registered() {
    for &name in KINDS {
        assert_eq!(Kind::from_name(name).map(|k| k.name), Some(name));
    }
    // Named as typed: `onstat -X` is `onstat-X`, `onstat -x` is `onstat-x` (once
    // `onstat-x-txn`, still accepted).
    assert_eq!(
        Kind::from_name("onstat-X").map(|k| k.name),
        Some("onstat-X")
    );
    assert_eq!(
        Kind::from_name("onstat-x-TXN").map(|k| k.name),
        Some("onstat-x")
    );
}

// ---------------------------------------------------------------------------------------------
// `onstat -p`'s values under any names (never panicking on anything else is `robust`'s, for
// every kind)

proptest! {
    #[test]
    fn profile_values_cut_anywhere_never_panic(
        names in proptest::collection::vec("[a-z%]{1,12}", 1..10),
        values in "[0-9. ]{0,80}",
    ) {
        let text = format!("dskreads {}\n{values}\n", names.join("  "));
        let _ = onstat_p::parse(&text);
    }
}

/// `onstat -g cpu` as oninit.com published it: every VP thread's row read from the date
/// inward (names and statuses hold blanks), the row the copy cut left unparsed, not guessed.
#[test]
fn cpu_published_sample() {
    let c =
        ifxtop::parsers::onstat_g_cpu::parse(&fixture("onstat-g-cpu/oninit-onstat-g-cpu-cut.txt"))
            .expect("cpu");
    assert_eq!(c.threads.len(), 18);
    let aio = c.threads.iter().find(|t| t.tid == Tid(4)).expect("tid 4");
    assert_eq!(aio.name, "aio vp 0");
    assert_eq!(aio.vp, "5aio*");
    assert_eq!(aio.last_run, "06/05 11:19:00");
    assert!((aio.cpu_s - 29_409.758_6).abs() < 1e-6);
    assert_eq!(aio.scheds, 9_587_799);
    assert_eq!(aio.status, "IO Idle");
    let fifo = c.threads.iter().find(|t| t.tid == Tid(6)).expect("tid 6");
    assert_eq!(
        (fifo.name.as_str(), fifo.vp.as_str()),
        ("fifo vp 0", "7fifo*")
    );
    let cut: Vec<usize> = c.unparsed.iter().map(|u| u.line).collect();
    assert_eq!(cut, [21]);
    assert!(c.threads.iter().all(|t| t.tid != Tid(20)));
}
