//! Chunk I/O, devices and replication: `onstat -D`, `-g iof`, `-g rss`, `-g sds`, `-g cluster`,
//! `-g dri`, `/proc/diskstats` and the sysfs block files. Every fixture snapshotted, the values
//! the views rely on, each quirk by hand, never panicking, and every kind refusing every other
//! fixture directory's outputs.

// Tests fail by panicking; `expect` says what was missing.
#![allow(clippy::expect_used)]

use crate::common::{fixture, fixtures_in, kind};
use ifxtop::parsers::ha::LogPos;
use ifxtop::parsers::onstat_d_upper::{self, OnstatDUpper};
use ifxtop::parsers::onstat_g_cluster::{self, OnstatGCluster, SdsCycle};
use ifxtop::parsers::onstat_g_dri::{self, OnstatGDri};
use ifxtop::parsers::onstat_g_iof::{self, OnstatGIof};
use ifxtop::parsers::onstat_g_rss::{self, OnstatGRss};
use ifxtop::parsers::onstat_g_sds::{self, OnstatGSds};
use ifxtop::parsers::proc_diskstats::{self, ProcDiskstats};
use ifxtop::parsers::sysblock::{self, BlockFacts, DevType, DmTarget};
use ifxtop::source::Kind;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// The kinds of this file and the fixture directory of each.
const KINDS: [(&str, &str); 7] = [
    ("onstat-D", "onstat-D"),
    ("onstat-g-iof", "onstat-g-iof"),
    ("onstat-g-rss", "onstat-g-rss"),
    ("onstat-g-dri", "onstat-g-dri"),
    ("onstat-g-cluster", "onstat-g-cluster"),
    ("onstat-g-sds", "onstat-g-sds"),
    ("proc-diskstats", "proc-diskstats"),
];

fn pos(log: u32, page: u64) -> Option<LogPos> {
    Some(LogPos { log, page })
}

/// Every fixture of `dir` parsed as `kind` and snapshotted as `parse__<dir>__<stem>`.
fn snapshot_all(dir: &str, kind: Kind, at_least: usize) {
    let all = fixtures_in(dir);
    assert!(all.len() >= at_least, "{dir}: {} fixtures", all.len());
    for (stem, text) in all {
        let json = kind
            .parse_to_json(&text)
            .unwrap_or_else(|e| panic!("{dir}/{stem}: {e}"));
        crate::snap_json!(format!("parse__{dir}__{stem}"), &json);
    }
}

#[test]
fn every_fixture_matches_its_snapshot() {
    for (name, dir, at_least) in [
        ("onstat-D", "onstat-D", 2),
        ("onstat-g-iof", "onstat-g-iof", 2),
        ("onstat-g-rss", "onstat-g-rss", 5),
        ("onstat-g-dri", "onstat-g-dri", 3),
        ("onstat-g-cluster", "onstat-g-cluster", 3),
        ("onstat-g-sds", "onstat-g-sds", 3),
        ("proc-diskstats", "proc-diskstats", 3),
    ] {
        snapshot_all(dir, kind(name), at_least);
    }
}

// ---------------------------------------------------------------------------------------------
// The wrong-command matrix

/// A fixture that holds nothing but onstat's off-line message: every onstat command prints the
/// same text when the server is down, so any onstat parser takes it (with `offline` set).
fn is_offline_only(text: &str) -> bool {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    matches!(
        (lines.next(), lines.next()),
        (Some(l), None) if l.contains("shared memory not initialized")
    )
}

#[test]
fn every_kind_refuses_every_other_fixture_directory() {
    let dirs = crate::common::fixture_dirs();
    let mut accepted = Vec::new();
    let mut checked = 0;
    for (name, own_dir) in KINDS {
        let k = kind(name);
        for dir in dirs.iter().filter(|d| d.as_str() != own_dir) {
            for (stem, text) in fixtures_in(dir) {
                // Exception: the off-line message alone is every onstat command's output
                // (`proc-diskstats` is not onstat and refuses it).
                if is_offline_only(&text) && name.starts_with("onstat") {
                    assert!(
                        k.parse_to_json(&text).is_ok(),
                        "{name}: off-line {dir}/{stem}"
                    );
                    continue;
                }
                checked += 1;
                if let Ok(json) = k.parse_to_json(&text) {
                    accepted.push(format!("{name} accepted {dir}/{stem}: {json}"));
                }
            }
        }
    }
    assert!(checked > 300, "only {checked} pairs checked");
    assert!(accepted.is_empty(), "{}", accepted.join("\n\n"));
}

#[test]
fn onstat_d_and_onstat_upper_d_are_two_kinds() {
    assert_eq!(kind("onstat-D").name, "onstat-D");
    assert_eq!(kind("onstat-d").name, "onstat-d");
    assert_eq!(kind("ONSTAT-U").name, "onstat-u");
    // `-d` output is refused by `-D` at its chunk header (`size free`, not `page Rd page Wr`).
    let e = onstat_d_upper::parse(&fixture("onstat-d/ibm-kc-14.10-adref-0504.txt"))
        .expect_err("-d is not -D");
    assert_eq!((e.line, e.column), (10, 1));
    assert!(e.expected.contains("page Rd"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// onstat -D

fn upper_d(stem: &str) -> OnstatDUpper {
    onstat_d_upper::parse(&fixture(&format!("onstat-D/{stem}.txt")))
        .unwrap_or_else(|e| panic!("{stem}: {e}"))
}

#[test]
fn upper_d_doc_sample() {
    let d = upper_d("hcl-14.10-adr-0507-doc");
    assert!(d.unparsed.is_empty(), "{:?}", d.unparsed);
    assert_eq!(d.dbspaces.len(), 1);
    let s = &d.dbspaces[0];
    assert_eq!((s.number, s.flags, s.pgsize), (1, 1, Some(2048)));
    assert_eq!((s.owner.as_str(), s.name.as_str()), ("informix", "rootdbs"));
    let c = &d.chunks[0];
    assert_eq!(
        (c.chunk, c.dbs, c.offset, c.page_rd, c.page_wr),
        (1, 1, 0, 0, 0)
    );
    assert_eq!(c.path, "/work/11.1/dbspaces/stardbs3");
    assert_eq!((d.dbspaces_active, d.chunks_maximum), (Some(1), Some(2047)));
    assert_eq!(d.expanded_chunk_capacity.as_deref(), Some("disabled"));
}

#[test]
fn upper_d_16_digit_sample_joins_chunks_to_spaces() {
    let d = upper_d("ifxtop-16-digit-five-spaces-prim");
    assert!(d.unparsed.is_empty(), "{:?}", d.unparsed);
    assert_eq!((d.dbspaces.len(), d.chunks.len()), (5, 6));
    let big = &d.chunks[4];
    assert_eq!((big.page_rd, big.page_wr), (187_330_912, 20_944_211));
    assert_eq!(
        d.dbspace_of_chunk(6).map(|s| (s.name.as_str(), s.pgsize)),
        Some(("datadbs16k", Some(16384)))
    );
    let h = d.header.as_ref().expect("banner");
    assert_eq!(h.mode_flags, vec!["Prim"]);
}

#[test]
fn upper_d_edge_cases() {
    // Dbspaces alone are `-d`'s too: accepted when every line is understood.
    let only = "Dbspaces\naddress number flags fchunk nchunks pgsize flags owner name\n\
                a40d7d8 1 0x1 1 1 2048 N informix rootdbs\n 1 active, 2047 maximum\n";
    let d = onstat_d_upper::parse(only).expect("dbspaces only");
    assert_eq!((d.dbspaces.len(), d.chunks.len()), (1, 0));
    // A Windows chunk path; a NOTE paragraph with its continuation.
    let d = onstat_d_upper::parse(
        "Chunks\naddress chunk/dbs offset page Rd page Wr pathname\n\
         1a2b3c 1 1 0 10 20 C:\\IFMXDATA\\ol_ids\\rootdbs_dat.000\n\
         NOTE: something the manual\n      says here\n",
    )
    .expect("windows");
    assert_eq!(d.chunks[0].path, "C:\\IFMXDATA\\ol_ids\\rootdbs_dat.000");
    assert_eq!(d.notes, vec!["something the manual says here"]);
    // A `-d` chunk row among `-D` rows stays unparsed; the input is still `-D`.
    let d =
        onstat_d_upper::parse("a40d928 1 1 0 0 0 /c1\n4484a268 2 1 0 100000 65632 PO-B-- /c2\n")
            .expect("mixed");
    assert_eq!((d.chunks.len(), d.unparsed.len()), (1, 1));
    assert!(onstat_d_upper::parse("").is_err());
}

// ---------------------------------------------------------------------------------------------
// onstat -g iof

fn iof(stem: &str) -> OnstatGIof {
    onstat_g_iof::parse(&fixture(&format!("onstat-g-iof/{stem}.txt")))
        .unwrap_or_else(|e| panic!("{stem}: {e}"))
}

#[test]
fn iof_doc_sample_has_the_op_table() {
    let i = iof("hcl-14.10-adr-0538-doc");
    assert!(i.unparsed.is_empty(), "{:?}", i.unparsed);
    let f = &i.files[0];
    assert_eq!((f.gfd, f.path.as_str()), (3, "rootdbs"));
    assert_eq!(
        (f.bytes_read, f.page_reads, f.bytes_write, f.page_writes),
        (Some(1_918_976), Some(937), Some(145_061_888), Some(70831))
    );
    assert_eq!(f.io_per_s, 36.5);
    assert_eq!(f.ops.len(), 5);
    assert_eq!(
        f.op("seeks").map(|o| (o.count, o.avg_time_s)),
        Some((0, None))
    );
    assert_eq!(f.op("writes").and_then(|o| o.avg_time_s), Some(0.0335));
}

#[test]
fn iof_four_files_each_with_its_ops() {
    let i = iof("ifxtop-four-chunks-kaio-temp-file");
    assert!(i.unparsed.is_empty(), "{:?}", i.unparsed);
    assert_eq!(i.files.len(), 4);
    assert!(i.files.iter().all(|f| f.ops.len() == 5));
    let data = &i.files[2];
    assert_eq!(data.bytes_read, Some(3_069_209_247_744));
    assert_eq!(
        data.op("kaio_writes").and_then(|o| o.avg_time_s),
        Some(0.0118)
    );
    assert_eq!(i.files[3].path, "/informix/tmp/srt_4f1c2_0");
}

#[test]
fn iof_edge_cases() {
    // Operations before any file are not attached to anything.
    let i = onstat_g_iof::parse("reads 937 0.0010\n3 rootdbs 1 2 3 4 0.5\n").expect("row");
    assert_eq!((i.files.len(), i.unparsed.len()), (1, 1));
    assert!(i.files[0].ops.is_empty());
    // The 11.x layout (remembered from older manuals, not checked against a capture).
    let old = "AIO global files:\ngfd pathname totalops dskread dskwrite io/s\n\
               3 /dev/rchunk1 5654 3398 2256 0.1\n";
    let i = onstat_g_iof::parse(old).expect("old layout");
    let f = &i.files[0];
    assert_eq!(
        (f.total_ops, f.read_ops, f.write_ops, f.bytes_read),
        (Some(5654), Some(3398), Some(2256), None)
    );
    // The title alone is this command's (a server with no files open yet).
    assert!(onstat_g_iof::parse("AIO global files:\n").is_ok());
    let e = onstat_g_iof::parse("3 rootdbs 1 2 3 4 5\n").expect_err("no fraction");
    assert_eq!((e.line, e.column), (1, 19));
}

// ---------------------------------------------------------------------------------------------
// onstat -g rss

fn rss(stem: &str) -> OnstatGRss {
    onstat_g_rss::parse(&fixture(&format!("onstat-g-rss/{stem}.txt")))
        .unwrap_or_else(|e| panic!("{stem}: {e}"))
}

#[test]
fn rss_brief_2010_four_columns() {
    let r = rss("oninit-grss-brief-standard-2010");
    assert!(r.unparsed.is_empty(), "{:?}", r.unparsed);
    assert_eq!(r.server_type.as_deref(), Some("Standard"));
    assert_eq!(r.rss_servers, Some(2));
    let ipl = r.index_page_logging.as_ref().expect("ipl");
    assert_eq!(ipl.status.as_deref(), Some("Enabled"));
    assert_eq!(r.servers.len(), 2);
    let s = &r.servers[0];
    assert_eq!(
        (
            s.name.as_str(),
            s.status.as_deref(),
            s.connection.as_deref()
        ),
        ("theoden", Some("Active"), Some("Connected"))
    );
    assert_eq!(s.next_page_to_send, pos(20714, 29007));
    assert_eq!(s.supports_proxy_writes, None);
}

#[test]
fn rss_verbose_doc_with_flow_control_and_delays() {
    let r = rss("hcl-onedb-2.0.1-adr-0569-verbose-doc");
    assert!(r.unparsed.is_empty(), "{:?}", r.unparsed);
    assert_eq!(r.server_type.as_deref(), Some("Primary"));
    let s = &r.servers[0];
    assert_eq!(s.name, "rahulb_3");
    assert_eq!(s.flow_control.as_deref(), Some("384/352"));
    assert_eq!(s.transmission.as_deref(), Some("Active"));
    assert_eq!(
        (s.next_page_to_send, s.last_acked, s.last_applied),
        (pos(6, 36), pos(6, 35), pos(6, 35))
    );
    assert_eq!(
        s.last_ack_time.as_ref().and_then(|t| t.when()),
        Some("2020-05-23.06:13:29")
    );
    assert_eq!((s.pending_ack_pages, s.backlog_pages), (Some(0), Some(0)));
    assert_eq!(
        (s.next_buffer, s.last_acked_buffer, s.delays),
        (Some(231), Some(230), Some(8))
    );
    assert_eq!(s.supports_proxy_writes, Some(false));
    assert!(s.other.is_empty(), "{:?}", s.other);
}

#[test]
fn rss_verbose_blocked_with_backlog_and_a_never_acked_server() {
    let r = rss("ifxtop-primary-verbose-blocked-backlog");
    assert!(r.unparsed.is_empty(), "{:?}", r.unparsed);
    assert_eq!(r.servers.len(), 2);
    let east = &r.servers[0];
    assert_eq!(east.transmission.as_deref(), Some("Blocked"));
    assert_eq!(
        (east.pending_ack_pages, east.backlog_pages),
        (Some(385), Some(97_104))
    );
    assert_eq!(east.lag_pages(), Some(97_104));
    let west = &r.servers[1];
    assert_eq!(west.status.as_deref(), Some("Defined"));
    let t = west.last_ack_time.as_ref().expect("time");
    assert!(t.epoch);
    assert_eq!(t.printed, "1969-12-31.19:00:00");
}

#[test]
fn rss_brief_five_columns_and_a_defined_server() {
    let r = rss("ifxtop-primary-brief-defined-and-blocked");
    assert!(r.unparsed.is_empty(), "{:?}", r.unparsed);
    let names: Vec<_> = r
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.supports_proxy_writes))
        .collect();
    assert_eq!(
        names,
        [
            ("ol_west", Some(false)),
            ("ol_dr_3", Some(false)),
            ("ol_dr_4", Some(true))
        ]
    );
    assert_eq!(r.servers[1].next_page_to_send, pos(0, 0));
    assert_eq!(r.servers[1].connection.as_deref(), Some("Disconnected"));
}

#[test]
fn rss_secondary_with_read_only_rss_banner() {
    let r = rss("ifxtop-rss-secondary-read-only-banner");
    assert!(r.unparsed.is_empty(), "{:?}", r.unparsed);
    assert_eq!(
        r.header.as_ref().map(|h| h.mode_flags.clone()),
        Some(vec!["RSS".to_string()])
    );
    assert_eq!(r.server_type.as_deref(), Some("RSS"));
    assert_eq!(
        (
            r.source.as_deref(),
            r.status.as_deref(),
            r.connection.as_deref()
        ),
        (Some("ol_east"), Some("Active"), Some("Connected"))
    );
    assert_eq!(r.last_received, pos(1871, 40102));
    assert!(r.servers.is_empty());
}

#[test]
fn rss_edge_cases() {
    // Spelling and spacing variants of the verbose labels.
    let r = onstat_g_rss::parse(
        "RSS Server control block: 0x1\nRSS server name: a\n\
         Next log page to send (log id, page): 7, 12\nTime of Last Acknowledgment: 2010/05/11 15:32:06\n\
         Some future line: 42\n",
    )
    .expect("variants");
    let s = &r.servers[0];
    assert_eq!(s.next_page_to_send, pos(7, 12));
    assert_eq!(s.last_ack_time.as_ref().map(|t| t.epoch), Some(false));
    assert_eq!(
        s.other.get("Some future line").map(String::as_str),
        Some("42")
    );
    // A bad value is unparsed, not guessed.
    let r = onstat_g_rss::parse("RSS server name: a\nApproximate Log Page Backlog:lots\n")
        .expect("row");
    assert_eq!((r.servers[0].backlog_pages, r.unparsed.len()), (None, 1));
    // An SDS server's output: the local type is read, but the rest is not `-g rss`.
    let e = onstat_g_rss::parse(&fixture("onstat-g-sds/ifxtop-sds-secondary-read-only.txt"))
        .expect_err("sds secondary");
    assert_eq!(e.line, 5);
    // The shared lines alone say nothing about the command.
    assert!(onstat_g_rss::parse(
        "Local server type: Primary\nIndex page logging status: Enabled\n"
    )
    .is_err());
    // Rows before the column header are not rows.
    assert!(onstat_g_rss::parse("theoden Active Connected 20714,29007\n").is_err());
    // A standard server without RSS servers.
    let r = onstat_g_rss::parse("Local server type: Standard\nNumber of RSS servers: 0\n")
        .expect("none");
    assert_eq!((r.rss_servers, r.servers.len()), (Some(0), 0));
}

// ---------------------------------------------------------------------------------------------
// onstat -g sds

fn sds(stem: &str) -> OnstatGSds {
    onstat_g_sds::parse(&fixture(&format!("onstat-g-sds/{stem}.txt")))
        .unwrap_or_else(|e| panic!("{stem}: {e}"))
}

#[test]
fn sds_primary_brief_and_secondary() {
    let p = sds("ifxtop-primary-brief");
    assert!(p.unparsed.is_empty(), "{:?}", p.unparsed);
    assert_eq!(
        (p.server_type.as_deref(), p.sds_servers),
        (Some("Primary"), Some(2))
    );
    let s = &p.servers[1];
    assert_eq!(
        (s.name.as_str(), s.status.as_deref(), s.last_sent),
        ("ol_sd_c", Some("Inactive"), pos(398, 90112))
    );
    let s = sds("ifxtop-sds-secondary-read-only");
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    assert_eq!(
        (s.source.as_deref(), s.last_received),
        (Some("ol_sd_pri"), pos(402, 7719))
    );
    assert_eq!(
        s.header.as_ref().map(|h| h.mode_flags.clone()),
        Some(vec!["SDS".to_string()])
    );
}

#[test]
fn sds_primary_verbose_blocks() {
    let v = sds("ifxtop-primary-verbose-reconstructed");
    assert!(v.unparsed.is_empty(), "{:?}", v.unparsed);
    assert_eq!(
        (v.sds_servers, v.updater.as_deref()),
        (Some(2), Some("ol_sd_pri"))
    );
    let a = &v.servers[0];
    assert_eq!(
        (a.name.as_str(), a.server_type.as_deref()),
        ("ol_sd_b", Some("SDS"))
    );
    assert_eq!(
        (a.last_sent, a.last_flushed, a.last_lsn_acked),
        (pos(402, 7730), pos(402, 7730), pos(402, 15_804_472))
    );
    assert_eq!(a.backlog_pages, Some(0));
    let b = &v.servers[1];
    assert_eq!(b.backlog_pages, Some(4611));
    assert!(b.last_ack_time.as_ref().is_some_and(|t| t.epoch));
}

#[test]
fn sds_edge_cases() {
    // An RSS primary's output is not `-g sds` output.
    assert!(
        onstat_g_sds::parse(&fixture("onstat-g-rss/oninit-grss-brief-standard-2010.txt")).is_err()
    );
    // A standard server: the count alone.
    let s = onstat_g_sds::parse("Local server type: Standard\nNumber of SDS servers:0\n")
        .expect("none");
    assert_eq!(s.sds_servers, Some(0));
    // The secondary's verbose lines (SMI names: next page to read, LSN acked), and paging files.
    let s = onstat_g_sds::parse(
        "Local server type: SDS\nNext log page to read(log id,page):13,2378\n\
         Last LSN acked (log id,pos):13,12296216\nCurrent paging file:/data/gbase/page1\n",
    )
    .expect("verbose secondary");
    assert_eq!(
        (s.next_page_to_read, s.last_lsn_acked),
        (pos(13, 2378), pos(13, 12_296_216))
    );
    assert_eq!(
        s.other.get("Current paging file").map(String::as_str),
        Some("/data/gbase/page1")
    );
    // Block lines without a block are another command's.
    assert!(onstat_g_sds::parse("server name: rahulb_4\nserver status: Active\n").is_err());
}

// ---------------------------------------------------------------------------------------------
// onstat -g cluster

fn cluster(stem: &str) -> OnstatGCluster {
    onstat_g_cluster::parse(&fixture(&format!("onstat-g-cluster/{stem}.txt")))
        .unwrap_or_else(|e| panic!("{stem}: {e}"))
}

#[test]
fn cluster_doc_sample_with_a_tab_before_every_line() {
    let c = cluster("hcl-14.10-adr-1087-doc-primary-tab-indented");
    assert!(c.unparsed.is_empty(), "{:?}", c.unparsed);
    assert_eq!(c.primary.as_deref(), Some("serv1"));
    assert_eq!(c.current_log_page, pos(16, 476));
    let types: Vec<_> = c
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.server_type.as_deref()))
        .collect();
    assert_eq!(
        types,
        [
            ("serv2", Some("SDS")),
            ("serv3", Some("HDR")),
            ("serv4", Some("RSS"))
        ]
    );
    let hdr = &c.servers[1];
    assert_eq!(
        (hdr.acked, hdr.applied, hdr.supports_updates),
        (pos(16, 476), pos(16, 476), Some(true))
    );
    assert_eq!(hdr.status.as_deref(), Some("ASYNC(HDR),Connected,On"));
    assert_eq!(
        (
            hdr.sync.as_deref(),
            hdr.connection.as_deref(),
            hdr.server_status.as_deref()
        ),
        (Some("ASYNC"), Some("Connected"), Some("On"))
    );
}

#[test]
fn cluster_verbose_semicolon_and_epoch_ack() {
    let c = cluster("ifxtop-verbose-primary-semicolon-epoch-ack");
    assert!(c.unparsed.is_empty(), "{:?}", c.unparsed);
    assert_eq!(
        c.servers.len(),
        3,
        "blocks complete the rows, not add to them"
    );
    let london = &c.servers[0];
    assert_eq!(
        (london.last_sent, london.last_acked),
        (pos(1829, 4349), pos(1829, 4349))
    );
    assert!(london
        .last_ack_time
        .as_ref()
        .is_some_and(|t| t.epoch && t.when().is_none()));
    assert_eq!(
        (london.sds_cycle, london.delayed_apply.as_deref()),
        (None, Some("Not Used"))
    );
    let tokyo = &c.servers[1];
    assert_eq!(
        tokyo.sds_cycle,
        Some(SdsCycle {
            current: 20,
            acked: 20
        })
    );
    let berlin = &c.servers[2];
    assert_eq!(
        (berlin.acked, berlin.last_acked, berlin.backlog_pages),
        (pos(1829, 4270), pos(1829, 4270), Some(79))
    );
    assert_eq!(berlin.lag_pages(c.current_log_page), Some(79));
    assert_eq!(c.servers[0].lag_pages(c.current_log_page), Some(0));
}

#[test]
fn cluster_on_a_secondary_has_no_current_page() {
    let c = cluster("ifxtop-sds-secondary-read-only");
    assert!(c.unparsed.is_empty(), "{:?}", c.unparsed);
    assert_eq!(
        (c.primary.as_deref(), c.current_log_page),
        (Some("ol_sd_pri"), None)
    );
    let s = &c.servers[0];
    assert_eq!(
        (s.acked, s.applied, s.supports_updates),
        (pos(402, 7719), None, Some(false))
    );
}

#[test]
fn cluster_edge_cases() {
    // TABs and blanks before verbose lines too, and a verbose block without a table.
    let c = onstat_g_cluster::parse(
        "\tPrimary Server:p\n\t\n\tserver name: s1\n\t type: NEAR_SYNC (HDR)\n\
         \tLast log page acked (log id, page); 3,4\n\tSupports Updates: No\n",
    )
    .expect("tabbed verbose");
    let s = &c.servers[0];
    assert_eq!(
        (s.sync.as_deref(), s.server_type.as_deref(), s.last_acked),
        (Some("NEAR_SYNC"), Some("HDR"), pos(3, 4))
    );
    // A verbose block with no summary before it is not this command's (SDS verbose has
    // `server name:` lines too).
    assert!(onstat_g_cluster::parse("server name: x\nserver status: Active\n").is_err());
    // A row whose status is not `MODE(TYPE),...` stays unparsed.
    let c = onstat_g_cluster::parse(
        "Primary Server:p\nServer ACKed Log Supports Status\nx 1,2 Yes Connected\n",
    )
    .expect("summary");
    assert_eq!((c.servers.len(), c.unparsed.len()), (0, 1));
}

// ---------------------------------------------------------------------------------------------
// onstat -g dri

fn dri(stem: &str) -> OnstatGDri {
    onstat_g_dri::parse(&fixture(&format!("onstat-g-dri/{stem}.txt")))
        .unwrap_or_else(|e| panic!("{stem}: {e}"))
}

#[test]
fn dri_doc_sample() {
    let d = dri("hcl-14.10-adr-0527-doc");
    assert!(d.unparsed.is_empty(), "{:?}", d.unparsed);
    assert_eq!(
        (
            d.dr_type.as_deref(),
            d.state.as_deref(),
            d.paired_server.as_deref()
        ),
        (Some("primary"), Some("on"), Some("my_server"))
    );
    assert_eq!(d.last_dr_ckpt.map(|c| (c.id, c.page)), Some((4, 5)));
    assert_eq!(d.supports_proxy_writes.as_deref(), Some("NA"));
    assert_eq!(d.backlog, Some(0));
    assert_eq!(d.last_ping.as_deref(), Some("2013/12/11 16:39:44"));
    assert_eq!(d.last_applied, pos(4, 6));
    let want: BTreeMap<String, String> = [
        ("DRAUTO", "3"),
        ("DRIDXAUTO", "0"),
        ("DRINTERVAL", "5"),
        ("DRLOSTFOUND", "/etc/dr.lostfound"),
        ("DRTIMEOUT", "30"),
        ("ENCRYPT_HDR", "0"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(d.settings, want);
}

#[test]
fn dri_hdr_secondary_and_txn_scope() {
    let d = dri("ifxtop-14.10-hdr-secondary-two-word-type");
    assert!(d.unparsed.is_empty(), "{:?}", d.unparsed);
    assert_eq!(d.dr_type.as_deref(), Some("HDR Secondary"));
    assert_eq!(
        d.settings.get("HDR_TXN_SCOPE").map(String::as_str),
        Some("NEAR_SYNC")
    );
    assert_eq!(d.last_applied, pos(0, 0));
    let p = dri("ifxtop-14.10-primary-hdr-txn-scope-trailing-blanks");
    assert!(p.unparsed.is_empty(), "{:?}", p.unparsed);
    assert_eq!(
        (p.paired_server.as_deref(), p.last_dr_ckpt.map(|c| c.page)),
        (Some("ol_prod_b"), Some(12203))
    );
}

#[test]
fn dri_edge_cases() {
    // No pair, no proxy-writes column, a setting with no value.
    let d = onstat_g_dri::parse(
        "Data Replication at 0x4d676028:\n  Type State Paired server Last DR CKPT (id/pg)\n\
         \x20 standard  off  -1 / -1\n\n  DRLOSTFOUND\n  Backlog 12\n",
    )
    .expect("standard");
    assert_eq!(
        (
            d.state.as_deref(),
            d.paired_server.as_deref(),
            d.supports_proxy_writes.as_deref()
        ),
        (Some("off"), Some(""), None)
    );
    assert_eq!(d.last_dr_ckpt.map(|c| c.id), Some(-1));
    assert_eq!(
        (d.settings.get("DRLOSTFOUND").map(String::as_str), d.backlog),
        (Some(""), Some(12))
    );
    // Settings without the title are not this command's (`onstat -g cfg` prints such lines).
    assert!(onstat_g_dri::parse("DRINTERVAL 5\nDRTIMEOUT 30\n").is_err());
    // A row that is not `type state [server] id / page` stays unparsed.
    let d =
        onstat_g_dri::parse("Data Replication at 0x1:\n Type State Paired server\n primary on\n")
            .expect("title");
    assert_eq!(d.unparsed.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// /proc/diskstats

fn diskstats(stem: &str) -> ProcDiskstats {
    proc_diskstats::parse(&fixture(&format!("proc-diskstats/{stem}.txt")))
        .unwrap_or_else(|e| panic!("{stem}: {e}"))
}

#[test]
fn diskstats_the_three_layouts() {
    let old = diskstats("ifxtop-rhel7-3.10-14-fields-lvm");
    assert!(old.unparsed.is_empty() && old.disks.len() == 9);
    assert!(old
        .disks
        .iter()
        .all(|d| d.discards_completed.is_none() && d.flushes_completed.is_none()));
    assert_eq!(old.device("sr0").map(|d| d.sectors_read), Some(2056));
    let mid = diskstats("ifxtop-rhel8-4.18-18-fields-nvme-multipath");
    assert!(mid.unparsed.is_empty());
    assert!(mid
        .disks
        .iter()
        .all(|d| d.discard_ms.is_some() && d.flush_ms.is_none()));
    assert_eq!(
        mid.by_number(259, 2).map(|d| d.device.as_str()),
        Some("nvme0n1p2")
    );
    let new = diskstats("ifxtop-rhel9-5.14-20-fields-md-loop");
    assert!(new.unparsed.is_empty());
    assert!(new.disks.iter().all(|d| d.flushes_completed.is_some()));
    assert_eq!(new.device("md127").map(|d| d.major), Some(9));
}

#[test]
fn diskstats_edge_cases() {
    let d = proc_diskstats::parse(
        "   8       0 sda 1 2 3 4 5 6 7 8 9 10 11\nnot a line\n 104 0 cciss!c0d0 1 2 3 4 5 6 7 8 9 10 11\n",
    )
    .expect("two devices");
    assert_eq!(d.disks.len(), 2);
    assert_eq!(d.unparsed.len(), 1);
    assert_eq!(d.disks[1].device, "cciss!c0d0");
    let e = proc_diskstats::parse("8 0 sda 1 2 3\n").expect_err("too few");
    assert_eq!(e.line, 1);
    assert!(proc_diskstats::parse("").is_err());
}

// ---------------------------------------------------------------------------------------------
// sysfs block files

/// A small machine: nvme0n1 with partitions, sdb/sdc two paths to one LUN under `mpatha`
/// (dm-2), a kpartx partition of it (dm-3), LVM `vg0-data` (dm-4) over dm-3 and sda1, md127
/// over sdd and sde, and a loop in the facts (dm-8 ⇄ dm-9) that must not hang.
fn facts(name: &str) -> Option<BlockFacts> {
    let part = |p: &str| BlockFacts {
        devtype: Some(DevType::Partition),
        parent: Some(p.to_string()),
        slaves: Vec::new(),
    };
    let over = |s: &[&str]| BlockFacts {
        devtype: Some(DevType::Disk),
        parent: None,
        slaves: s.iter().map(|x| x.to_string()).collect(),
    };
    Some(match name {
        "nvme0n1p2" => part("nvme0n1"),
        "sda1" => part("sda"),
        "dm-2" => over(&["sdb", "sdc"]),
        "dm-3" => over(&["dm-2"]),
        "dm-4" => over(&["dm-3", "sda1"]),
        "md127" => over(&["sdd", "sde"]),
        "dm-8" => over(&["dm-9"]),
        "dm-9" => over(&["dm-8"]),
        "nvme0n1" | "sda" | "sdb" | "sdc" | "sdd" | "sde" => over(&[]),
        _ => return None,
    })
}

#[test]
fn whole_disks_through_every_layer() {
    assert_eq!(sysblock::whole_disks("nvme0n1p2", facts), ["nvme0n1"]);
    assert_eq!(sysblock::whole_disks("dm-4", facts), ["sdb", "sdc", "sda"]);
    assert_eq!(sysblock::whole_disks("md127", facts), ["sdd", "sde"]);
    assert_eq!(sysblock::whole_disks("sdb", facts), ["sdb"]);
    assert_eq!(sysblock::whole_disks("unknown0", facts), ["unknown0"]);
    // A loop ends where it closes: no disk under it, nothing invented.
    assert!(sysblock::whole_disks("dm-8", facts).is_empty());
}

#[test]
fn sysfs_files() {
    let u = sysblock::parse_uevent(
        "MAJOR=259\nMINOR=2\nDEVNAME=nvme0n1p2\nDEVTYPE=partition\nPARTN=2\nPARTNAME=informix\n",
    )
    .expect("uevent");
    assert_eq!((u.dev.major, u.dev.minor, u.partn), (259, 2, Some(2)));
    assert_eq!(
        (u.devname.as_str(), u.partname.as_deref()),
        ("nvme0n1p2", Some("informix"))
    );
    assert_eq!(u.dev.sys_dev_block(), "/sys/dev/block/259:2");
    let dm = sysblock::parse_uevent("MAJOR=253\nMINOR=4\nDEVNAME=dm-4\nDEVTYPE=disk\nDISKSEQ=14\n")
        .expect("dm");
    assert_eq!(dm.devtype, Some(DevType::Disk));
    assert_eq!(
        sysblock::parse_dm_uuid("mpath-3600508b400105e210000900000490000\n")
            .expect("uuid")
            .target,
        DmTarget::Multipath
    );
    assert_eq!(
        sysblock::parse_dm_uuid("CRYPT-LUKS2-0123-luks\n")
            .expect("uuid")
            .target,
        DmTarget::Crypt
    );
    assert_eq!(
        sysblock::parse_dm_uuid("").expect("empty").target,
        DmTarget::Other(String::new())
    );
    assert_eq!(
        sysblock::parse_slaves("").expect("none"),
        Vec::<String>::new()
    );
    assert_eq!(
        sysblock::parse_slaves("dm-2  sda1\n").expect("ls"),
        ["dm-2", "sda1"]
    );
    assert_eq!(
        sysblock::parent_from_sysfs_path("../../devices/virtual/block/dm-3/dm-3p1", "dm-3p1")
            .as_deref(),
        Some("dm-3")
    );
}

// ---------------------------------------------------------------------------------------------
// Never panicking. On anything, and on a fixture cut or shuffled read as its own kind, it is
// `robust`'s, for every kind; here the sysfs files' parsers (no kind reads them) on anything,
// and every parser of this file on every sample of this file's kinds, cut or shuffled (each
// kind reading the others' too).

type Parse = fn(&str) -> bool;

/// The parsers of this file's kinds, ignoring what they return: only a panic fails.
const KIND_PARSERS: [(&str, Parse); 7] = [
    ("onstat-D", |s| onstat_d_upper::parse(s).is_ok()),
    ("onstat-g-iof", |s| onstat_g_iof::parse(s).is_ok()),
    ("onstat-g-rss", |s| onstat_g_rss::parse(s).is_ok()),
    ("onstat-g-dri", |s| onstat_g_dri::parse(s).is_ok()),
    ("onstat-g-cluster", |s| onstat_g_cluster::parse(s).is_ok()),
    ("onstat-g-sds", |s| onstat_g_sds::parse(s).is_ok()),
    ("proc-diskstats", |s| proc_diskstats::parse(s).is_ok()),
];

/// The parsers of the sysfs files, which no kind reads, ignoring what they return.
const SYSFS_PARSERS: [(&str, Parse); 5] = [
    ("uevent", |s| sysblock::parse_uevent(s).is_ok()),
    ("dev", |s| sysblock::parse_dev(s).is_ok()),
    ("dm/uuid", |s| sysblock::parse_dm_uuid(s).is_ok()),
    ("slaves", |s| sysblock::parse_slaves(s).is_ok()),
    ("sysfs path", |s| {
        sysblock::parent_from_sysfs_path(s, "sda1").is_some() || sysblock::parse_dm_name(s).is_ok()
    }),
];

/// Every parser of this file.
fn parsers() -> impl Iterator<Item = (&'static str, Parse)> {
    KIND_PARSERS.into_iter().chain(SYSFS_PARSERS)
}

/// Every fixture of this file's kinds.
fn all_texts() -> Vec<String> {
    KINDS
        .iter()
        .flat_map(|(_, dir)| fixtures_in(dir).into_iter().map(|(_, t)| t))
        .collect()
}

#[test]
fn every_fixture_truncated_anywhere_does_not_panic() {
    for text in all_texts() {
        for (i, _) in text.char_indices() {
            for (_, parse) in parsers() {
                let _ = parse(&text[..i]);
            }
        }
    }
}

proptest! {
    #[test]
    fn sysfs_files_never_panic_on_arbitrary_text(s in "\\PC{0,300}") {
        for (_, parse) in SYSFS_PARSERS {
            let _ = parse(&s);
        }
    }

    #[test]
    fn sysfs_files_never_panic_on_row_like_noise(
        s in "[0-9a-zA-Z:;,./()= \\t-]{0,120}(\n[\\t ]?[0-9a-zA-Z:;,./()= -]{0,90}){0,6}"
    ) {
        for (_, parse) in SYSFS_PARSERS {
            let _ = parse(&s);
        }
    }

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
            for (_, parse) in parsers() {
                let _ = parse(&joined);
            }
        }
    }

    #[test]
    fn whole_disks_ends_on_any_graph(
        edges in proptest::collection::vec((0u8..8, 0u8..8, any::<bool>()), 0..30),
    ) {
        // Arbitrary slave/parent links between 8 names, loops included: it always returns.
        let f = |name: &str| {
            let n: u8 = name.strip_prefix("d")?.parse().ok()?;
            let mut facts = BlockFacts::default();
            for (a, b, partition) in &edges {
                if *a == n {
                    if *partition {
                        facts.devtype = Some(DevType::Partition);
                        facts.parent = Some(format!("d{b}"));
                    } else {
                        facts.slaves.push(format!("d{b}"));
                    }
                }
            }
            Some(facts)
        };
        let disks = sysblock::whole_disks("d0", f);
        prop_assert!(disks.len() <= 8);
    }
}

/// Every name in the JSON of `onstat-g-sds` and `proc-diskstats` (the two kinds whose names are
/// ifxtop's own) is in docs/commands.md, so a user of `ifxtop parse` can look them up. The
/// banner's names are its `header`; `other` holds labels as printed, not names.
#[test]
fn the_docs_name_every_sds_and_diskstats_field() {
    fn walk(v: &serde_json::Value, names: &mut std::collections::BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    names.insert(k.clone());
                    if !matches!(k.as_str(), "header" | "other" | "unparsed") {
                        walk(x, names);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, names)),
            _ => {}
        }
    }
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/commands.md"))
        .expect("docs/commands.md");
    for (name, dir) in [
        ("onstat-g-sds", "onstat-g-sds"),
        ("proc-diskstats", "proc-diskstats"),
    ] {
        let mut names = std::collections::BTreeSet::new();
        for (stem, text) in fixtures_in(dir) {
            let json = kind(name)
                .parse_to_json(&text)
                .unwrap_or_else(|e| panic!("{dir}/{stem}: {e}"));
            walk(&json, &mut names);
        }
        assert!(names.len() > 10, "{name}: {names:?}");
        let missing: Vec<&String> = names
            .iter()
            .filter(|n| !readme.contains(&format!("`{n}`")))
            .collect();
        assert!(
            missing.is_empty(),
            "{name}: docs/commands.md lacks {missing:?}"
        );
    }
}
