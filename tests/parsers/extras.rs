//! Tests for the `onstat -b`/`-B`, `onstat -d`, `onstat -t` and `onstat -g ckp` parsers: every
//! fixture snapshotted and checked, the values the joins rely on, errors. Never panicking is
//! `robust`'s, for every kind.

// Tests fail by panicking; `expect` says what was missing.
#![allow(clippy::expect_used)]

use crate::common::kind;
use crate::common::{fixture, fixtures_in};
use ifxtop::ids::Addr;
use ifxtop::parsers::onstat_b::{self, OnstatB};
use ifxtop::parsers::onstat_d::{self, ChunkArea, OnstatD};
use ifxtop::parsers::onstat_g_ckp::{self, Lsn, OnstatGCkp};
use ifxtop::parsers::onstat_t::{self, OnstatT, Tblspace};
use ifxtop::source::Kind;
use proptest::prelude::*;

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
    snapshot_all("onstat-B", kind("onstat-b"), 4);
    snapshot_all("onstat-d", kind("onstat-d"), 4);
    snapshot_all("onstat-t", kind("onstat-t"), 5);
    snapshot_all("onstat-g-ckp", kind("onstat-g-ckp"), 3);
}

/// The 1-based column of the first `needle` in `text`.
fn col_of(text: &str, needle: &str) -> usize {
    text.find(needle).expect("needle in text") + 1
}

// ---------------------------------------------------------------------------------------------
// onstat -b / -B

fn b_fixture(stem: &str) -> OnstatB {
    onstat_b::parse(&fixture(&format!("onstat-B/{stem}.txt")))
        .unwrap_or_else(|e| panic!("{stem}: {e}"))
}

#[test]
fn b_aix_doc_sample_has_a_4k_base_page_and_elisions() {
    let b = b_fixture("hcl-onedb-2.0-adr-0501-aix64");
    assert!(b.unparsed.is_empty(), "{:?}", b.unparsed);
    assert_eq!(b.base_page_kb(), Some(4));
    assert_eq!(b.elisions, 4);
    assert_eq!(b.pools.len(), 1);
    let p = &b.pools[0];
    assert_eq!(p.page_size, 4096);
    assert_eq!(p.buffers.len(), 9);
    assert_eq!(
        (
            p.modified,
            p.resident,
            p.total,
            p.hash_buckets,
            p.buffer_size
        ),
        (Some(25), None, Some(50000), Some(65536), Some(4096))
    );
    let shared = &p.buffers[4];
    assert_eq!(shared.address, Addr(0x0700_0000_1093_3f88));
    assert_eq!(shared.owner, Some(Addr(u64::MAX)));
    assert_eq!(
        (shared.flags, shared.chunk, shared.page, shared.packed),
        (0x86, 1, 44348, false)
    );
    assert_eq!((shared.nslots, shared.pgflgs, shared.xflgs), (39, 0x890, 0));
    assert_eq!(shared.userthread, None);
    assert_eq!(shared.waitlist, None);
    assert_eq!(p.buffers[5].page, 8);
}

#[test]
fn b_hcl_onstat_b_sample_right_aligned_flags() {
    let b = b_fixture("hcl-14.10-adr-0500-onstat-b");
    assert!(b.unparsed.is_empty(), "{:?}", b.unparsed);
    assert_eq!(b.base_page_kb(), Some(4));
    let p = &b.pools[0];
    assert_eq!(p.modified, Some(2011));
    let x = &p.buffers[1];
    assert_eq!(x.address, Addr(0x0700_0000_1098_2188));
    assert_eq!((x.flags, x.chunk, x.page), (0x807, 1, 47827));
    assert_eq!(x.memaddr, Some(Addr(0x0700_0000_1193_9000)));
    assert_eq!((x.nslots, x.pgflgs, x.xflgs), (225, 0x90, 0x10));
    assert_eq!(p.buffers[0].flags, 0xc07);
}

#[test]
fn b_two_pools_base_page_is_the_smallest_pool() {
    let b = b_fixture("ifxtop-two-pools-16-digit-ckpt-inp");
    assert!(b.unparsed.is_empty(), "{:?}", b.unparsed);
    let h = b.header.as_ref().expect("banner");
    assert_eq!(h.checkpoint_flag(), Some("CKPT INP"));
    assert_eq!(h.blocked.as_deref(), Some("CKPT"));
    assert_eq!(b.base_page_kb(), Some(2));
    let sizes: Vec<_> = b.pools.iter().map(|p| p.page_size).collect();
    assert_eq!(sizes, [2048, 16384]);
    assert_eq!(b.pools[0].resident, Some(23));
    assert_eq!(b.pools[1].resident, Some(0));
    let held = &b.pools[0].buffers[0];
    assert_eq!(held.owner, Some(Addr(0xc000_0000_1a2b_40b8)));
    assert_eq!(held.waitlist, Some(Addr(0xc000_0000_1a2b_4900)));
    assert_eq!((held.chunk, held.page, held.xflgs), (3, 77215, 0x80));
    assert_eq!(b.pools[1].buffers[0].page, 25_597_176);
}

#[test]
fn b_single_pool_packed_pagenums() {
    let b = b_fixture("ifxtop-single-pool-packed-pagenum-8-digit");
    assert!(b.unparsed.is_empty(), "{:?}", b.unparsed);
    assert_eq!(b.elisions, 1);
    assert_eq!(b.pools.len(), 1);
    // No pool line: the page size is the footer's buffer size.
    assert_eq!(b.pools[0].page_size, 2048);
    assert_eq!(b.base_page_kb(), Some(2));
    let pages: Vec<_> = b.pools[0]
        .buffers
        .iter()
        .map(|x| (x.chunk, x.page, x.packed))
        .collect();
    assert_eq!(
        pages,
        [(1, 0x955, true), (2, 0x1a, true), (3, 0xc4f2, true)]
    );
    assert_eq!(b.pools[0].buffers[0].waitlist, Some(Addr(0x1a4d_9248)));
    assert_eq!(b.pools[0].buffers[2].owner, Some(Addr(0xffff_ffff)));
}

#[test]
fn b_base_page_needs_a_footer() {
    let b = onstat_b::parse(
        "Buffer pool page size: 4096\n\
         70000001097e9e8 0 c07 1:47841 7000000118e0000 10 1 0 0 0\n",
    )
    .expect("a pool without its footer");
    assert_eq!(b.pools[0].buffers.len(), 1);
    assert_eq!(b.base_page_kb(), None);
}

#[test]
fn b_lines_not_understood_are_kept() {
    let text = "Buffer pool page size: 2048\n\
                address  userthread flgs pagenum memaddr nslots pgflgs xflgs owner waitlist\n\
                1a0b1c28 0 807 1:10 1a2f4000 12 801 0 0 0\n\
                1a0b1c28 0 807 1:10 1a2f4000 12 801 0 0\n\
                1a0b1c28 0 807 1:1x 1a2f4000 12 801 0 0 0\n\
                . .\n\
                 1 modified, 10 total, 16 hash buckets, 2048 buffer size\n";
    let b = onstat_b::parse(text).expect("mostly onstat -b");
    let lines: Vec<_> = b.unparsed.iter().map(|l| l.line).collect();
    assert_eq!(lines, [4, 5, 6]);
    assert_eq!(b.pools[0].buffers.len(), 1);
    assert_eq!(b.elisions, 0);
}

#[test]
fn b_errors_name_line_and_column() {
    for text in ["", "\n\n"] {
        let e = onstat_b::parse(text).expect_err("empty");
        assert_eq!((e.line, e.column), (1, 1));
        assert!(e.expected.contains("userthread"), "{}", e.expected);
    }
    let e = onstat_b::parse("what is this\n").expect_err("garbage");
    assert_eq!(
        (e.line, e.column, e.snippet.as_str()),
        (1, 1, "what is this")
    );
    // An onstat -X row (9 columns): everything fits up to the owner, then the row ends.
    let row = "2443cd7e8 0 80 25:1523486 cce17b000 101 2801 0 0";
    let e = onstat_b::parse(row).expect_err("-X row");
    assert_eq!(
        (e.line, e.column, e.snippet.as_str()),
        (1, row.len() + 1, "end of line")
    );
    assert!(e.expected.contains("more columns"), "{}", e.expected);
    // A pagenum that is neither `chunk:page` nor hex.
    let row = "1a0b1c28 0 807 1:1x 1a2f4000 12 801 0 0 0";
    let e = onstat_b::parse(row).expect_err("bad pagenum");
    assert_eq!((e.line, e.column), (1, col_of(row, "1:1x")));
    assert!(e.expected.contains("a pagenum"), "{}", e.expected);
    let e = onstat_b::parse(&fixture("onstat-u/oninit-onstat-u.txt")).expect_err("-u");
    assert_eq!((e.line, e.column), (1, 1));
}

// ---------------------------------------------------------------------------------------------
// onstat -d

fn d_fixture(stem: &str) -> OnstatD {
    onstat_d::parse(&fixture(&format!("onstat-d/{stem}.txt")))
        .unwrap_or_else(|e| panic!("{stem}: {e}"))
}

#[test]
fn d_14_10_doc_sample_typo_banner_and_split_flags() {
    let d = d_fixture("ibm-kc-14.10-adref-0504");
    assert!(d.unparsed.is_empty(), "{:?}", d.unparsed);
    let h = d
        .header
        .as_ref()
        .expect("the `BM Informix` banner is still a banner");
    assert_eq!(h.product.as_deref(), Some("BM Informix Dynamic Server"));
    assert_eq!(h.version.as_deref(), Some("14.10.F"));
    assert_eq!(h.uptime_s, Some(87));
    assert_eq!(d.dbspaces.len(), 2);
    let root = &d.dbspaces[0];
    assert_eq!(
        (root.number, root.flags, root.fchunk, root.nchunks),
        (1, 0x1002_0001, 1, 1)
    );
    assert_eq!(root.flag_codes, "N  BAE");
    assert_eq!(
        (root.owner.as_str(), root.name.as_str()),
        ("informix", "rootdbs")
    );
    assert_eq!(d.dbspaces[1].flag_codes, "N  BA");
    assert_eq!(
        (d.dbspaces_active, d.dbspaces_maximum),
        (Some(2), Some(2047))
    );
    assert_eq!((d.chunks_active, d.chunks_maximum), (Some(2), Some(32766)));
    // Chunk 2 belongs to space1, whose pages are 2048 bytes.
    let space = d.dbspace_of_chunk(2).expect("chunk 2's space");
    assert_eq!((space.name.as_str(), space.pgsize), ("space1", Some(2048)));
    assert_eq!(d.chunk_page_kb(2), Some(2));
    let c = &d.chunks[1];
    assert_eq!(
        (c.chunk, c.dbs, c.offset, c.size, c.free, c.bpages),
        (2, 2, 0, 5000, 4947, None)
    );
    assert_eq!(c.flags, "PO-B--");
    assert_eq!(c.pathname, "/work3/AB/chunk5");
    assert_eq!(
        d.notes,
        [
            "The values in the \"size\" and \"free\" columns for DBspace chunks are \
          displayed in terms of \"pgsize\" of the DBspace to which they belong."
        ]
    );
    assert_eq!(d.expanded_chunk_capacity.as_deref(), Some("always"));
    assert_eq!(d.chunk_page_kb(3), None, "no chunk 3");
}

#[test]
fn d_ids10_three_page_sizes() {
    let d = d_fixture("oninit-ids10-adref404");
    assert!(d.unparsed.is_empty(), "{:?}", d.unparsed);
    let kb: Vec<_> = (1..=3).map(|c| d.chunk_page_kb(c)).collect();
    assert_eq!(kb, [Some(2), Some(4), Some(8)]);
    assert_eq!(d.dbspaces[2].flag_codes, "N  B");
    assert_eq!(d.chunks[0].flags, "PO-B");
    assert_eq!(d.chunks[0].address, Addr(0xa32_1928));
}

#[test]
fn d_gbase_sbspace_metadata_after_a_licence_notice() {
    let d = d_fixture("gbase8s-12.10-csdn-sbspace-metadata-collapsed-truncated");
    assert!(d.unparsed.is_empty(), "{:?}", d.unparsed);
    let h = d.header.as_ref().expect("banner after the notice");
    // The notice is kept with the banner it stands above.
    let json = serde_json::to_value(h).expect("json");
    assert_eq!(
        json["license"],
        "Your evaluation license will expire on 2021-08-27 00:00:00"
    );
    assert_eq!(h.product.as_deref(), Some("GBase Database Server"));
    assert_eq!(h.mode_flags, ["Prim"]);
    assert_eq!(d.dbspaces.len(), 7);
    assert_eq!(d.dbspaces[3].flag_codes, "N TBA");
    assert_eq!(d.dbspaces[5].flag_codes, "N SBA");
    let sb = &d.chunks[5];
    assert_eq!((sb.chunk, sb.bpages), (6, Some(466_272)));
    assert_eq!(
        sb.metadata,
        Some(ChunkArea {
            size: 33675,
            free: 25057,
            bpages: 33675
        })
    );
    assert!(d
        .chunks
        .iter()
        .filter(|c| c.chunk != 6)
        .all(|c| c.metadata.is_none()));
    assert_eq!(d.chunk_page_kb(4), Some(8));
    assert_eq!(d.chunk_page_kb(5), Some(16));
    assert_eq!(d.chunk_page_kb(7), Some(16));
    assert_eq!((d.chunks_active, d.chunks_maximum), (Some(7), Some(32766)));
    assert_eq!(
        d.notes,
        ["The values in the \"size\" and \"free\" columns for DBspace chunks are"]
    );
}

#[test]
fn d_hand_made_blobspace_sbspace_two_notes() {
    let d = d_fixture("ifxtop-16-digit-sbspace-blobspace-temp");
    assert!(d.unparsed.is_empty(), "{:?}", d.unparsed);
    let blob = d.chunks.iter().find(|c| c.chunk == 4).expect("chunk 4");
    assert!(blob.free_approx);
    assert_eq!((blob.free, blob.bpages), (15870, Some(16000)));
    let sb = d.chunks.iter().find(|c| c.chunk == 3).expect("chunk 3");
    assert_eq!(sb.metadata.map(|m| m.free), Some(9420));
    assert_eq!(d.chunk_page_kb(6), Some(16));
    assert_eq!(d.dbspace_of_chunk(6).map(|s| s.nchunks), Some(2));
    assert_eq!(d.dbspaces[0].address, Addr(0xc000_0000_18a4_c028));
    assert_eq!(d.notes.len(), 2);
    assert_eq!(
        d.notes[0],
        "For BLOB chunks, the number of free pages shown is out of date. \
         Run 'onstat -d update' for current stats."
    );
}

#[test]
fn d_external_sbspace_directories_and_rows_without_titles() {
    // The 15.0 manual's onstat -D shows an external sbspace's directories under its row.
    let text = "45ee2790         3        0x40028001 3        1        2048     N sBA    informix sb_ext1\n\
                \x20   External SBLOBspace directories: /work/sbdir1\n\
                \x20                                    /work/sbdir2\n\
                46064488         3      3      0          1000       900        900        POSB-- /work/sb_ext1\n";
    let d = onstat_d::parse(text).expect("rows");
    assert!(d.unparsed.is_empty(), "{:?}", d.unparsed);
    assert_eq!(
        d.dbspaces[0].external_dirs,
        ["/work/sbdir1", "/work/sbdir2"]
    );
    assert_eq!(d.dbspaces[0].flag_codes, "N sBA");
    assert_eq!(d.chunk_page_kb(3), Some(2));
}

#[test]
fn d_dbspaces_without_pgsize() {
    let text = "Dbspaces\n\
                address  number   flags    fchunk   nchunks  flags    owner    name\n\
                a1b2c3d  1        0x1      1        1        N        informix rootdbs\n";
    let d = onstat_d::parse(text).expect("older layout");
    assert!(d.unparsed.is_empty(), "{:?}", d.unparsed);
    assert_eq!(d.dbspaces[0].pgsize, None);
    assert_eq!(d.dbspaces[0].flag_codes, "N");
}

#[test]
fn d_lines_not_understood_are_kept() {
    let text = "Chunks\n\
                4484a268 1 1 0 100000 65632 PO-B-- /work3/AB/rootchunk\n\
                                 Metadata 650 479\n\
                45f1f028 2 2 0 5000 4947 PO-B--\n\
                \x20     an indented line after no NOTE\n";
    let d = onstat_d::parse(text).expect("mostly onstat -d");
    let lines: Vec<_> = d.unparsed.iter().map(|u| u.line).collect();
    assert_eq!(lines, [3, 4, 5]);
    assert_eq!(d.chunks.len(), 1);
    assert!(d.chunks[0].metadata.is_none());
}

#[test]
fn d_errors_name_line_and_column() {
    let e = onstat_d::parse("").expect_err("empty");
    assert_eq!((e.line, e.column), (1, 1));
    assert!(e.expected.contains("Dbspaces"), "{}", e.expected);
    let e = onstat_d::parse("\n\nthis is not onstat\n").expect_err("garbage");
    assert_eq!(
        (e.line, e.column, e.snippet.as_str()),
        (3, 1, "this is not onstat")
    );
    // A chunk row without its pathname: the chunk reading got further than the dbspace one.
    let row = "45f1f028 2 2 0 5000 4947 PO-B--";
    let e = onstat_d::parse(row).expect_err("no pathname");
    assert_eq!(
        (e.line, e.column, e.snippet.as_str()),
        (1, row.len() + 1, "end of line")
    );
    assert!(e.expected.contains("more columns"), "{}", e.expected);
    // A dbspace row whose flag word is not hex.
    let row = "45ed5b30 2 0x2000g 2 1 2048 N BA informix space1";
    let e = onstat_d::parse(row).expect_err("bad flag word");
    assert_eq!((e.line, e.column), (1, col_of(row, "0x")));
    assert!(e.expected.contains("flag word"), "{}", e.expected);
    // A banner alone is not onstat -d output.
    let e = onstat_d::parse(
        "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 00:01:00 -- 1024 Kbytes\n",
    )
    .expect_err("banner only");
    assert_eq!(
        (e.line, e.column, e.snippet.as_str()),
        (2, 1, "end of input")
    );
}

// ---------------------------------------------------------------------------------------------
// onstat -t

fn t_fixture(stem: &str) -> OnstatT {
    onstat_t::parse(&fixture(&format!("onstat-t/{stem}.txt")))
        .unwrap_or_else(|e| panic!("{stem}: {e}"))
}

fn tblspace(t: &OnstatT, tblnum: u32) -> &Tblspace {
    t.tblspaces
        .iter()
        .find(|x| x.tblnum == tblnum)
        .unwrap_or_else(|| panic!("no tblspace {tblnum:x}"))
}

#[test]
fn t_12_10_doc_sample_chunk_page_and_overflowing_n() {
    let t = t_fixture("ibm-kc-12.10-adref-0607");
    assert!(t.unparsed.is_empty(), "{:?}", t.unparsed);
    assert_eq!(
        (t.active, t.total, t.hash_buckets),
        (Some(2), Some(221), None)
    );
    let x = tblspace(&t, 0x10_00df);
    assert_eq!((x.n, x.address), (195, Addr(0xac8_43e0)));
    assert_eq!((x.chunk, x.page, x.packed), (1, 236, false));
    assert_eq!(
        (x.flags, x.ucnt, x.npages, x.nused, x.npdata, x.nrows, x.nextns),
        (0, 1, 16, 9, 4, 53, 2)
    );
    assert_eq!(x.resident, None);
    assert_eq!(tblspace(&t, 0x10_0001).page, 14);
}

#[test]
fn t_resident_column_packed_physaddr_and_elision() {
    let t = t_fixture("oninit-onstat-t-resident");
    assert!(t.unparsed.is_empty(), "{:?}", t.unparsed);
    assert_eq!(t.elisions, 1);
    assert_eq!(t.tblspaces.len(), 6);
    let x = tblspace(&t, 0x10_0001);
    assert_eq!((x.chunk, x.page, x.packed), (1, 0xe, true));
    assert_eq!((x.npages, x.nextns, x.resident), (350, 3, Some(0)));
    assert_eq!(tblspace(&t, 0x40_0042).page, 0x2b5);
    assert_eq!((t.active, t.total), (Some(37), Some(164)));
}

#[test]
fn t_hash_bucket_footer() {
    let t = t_fixture("hcl-onedb-2.0-prf-314-hash-buckets");
    assert!(t.unparsed.is_empty(), "{:?}", t.unparsed);
    assert_eq!(
        (t.active, t.total, t.hash_buckets),
        (Some(7), Some(200), Some(64))
    );
    let x = tblspace(&t, 0x10_001b);
    assert_eq!((x.n, x.address, x.ucnt), (193, Addr(0x42_f840), 6));
    assert_eq!((x.chunk, x.page), (1, 0x28));
    assert_eq!(tblspace(&t, 0x10_0036).flags, 3);
}

#[test]
fn t_16_digit_addresses_and_wide_counters() {
    let t = t_fixture("ifxtop-16-digit-banner-ckpt-inp");
    assert!(t.unparsed.is_empty(), "{:?}", t.unparsed);
    let h = t.header.as_ref().expect("banner");
    assert_eq!(
        (h.checkpoint_flag(), h.blocked.as_deref()),
        (Some("CKPT INP"), Some("CKPT"))
    );
    let x = tblspace(&t, 0x70_02b5);
    assert_eq!(
        (x.n, x.address, x.flags),
        (40000, Addr(0xc000_0000_19f2_b6a8), 0x4000_0002)
    );
    let x = tblspace(&t, 0x50_0112);
    assert_eq!((x.npages, x.nrows, x.nextns), (524_288, 9_120_442, 17));
    assert_eq!(tblspace(&t, 0x70_02a1).chunk, 124);
}

#[test]
fn t_grep_rows_without_title_or_footer() {
    let t = t_fixture("ifxtop-grep-rows");
    assert!(t.unparsed.is_empty(), "{:?}", t.unparsed);
    assert_eq!(t.tblspaces.len(), 2);
    assert_eq!((t.active, t.total), (None, None));
}

#[test]
fn t_errors_name_line_and_column() {
    let e = onstat_t::parse("\n").expect_err("blank");
    assert_eq!((e.line, e.column), (1, 1));
    assert!(e.expected.contains("Tblspaces"), "{}", e.expected);
    let row = "62 a40dc70  0    1    100001   1:14             250    250    0      0      x";
    let e = onstat_t::parse(row).expect_err("bad nextns");
    assert_eq!((e.line, e.column), (1, col_of(row, "x")));
    assert!(e.expected.contains("nextns"), "{}", e.expected);
    // `n` run into the address cannot be told apart from it.
    let row = "195ac843e0  0    1    1000df   1:236            16     9      4      53     2";
    let e = onstat_t::parse(row).expect_err("n run into the address");
    assert_eq!((e.line, e.column), (1, 1));
    let e = onstat_t::parse(&fixture("onstat-X/oninit-onstat-X-two-pools.txt")).expect_err("-X");
    assert_eq!((e.line, e.column), (1, 1));
}

// ---------------------------------------------------------------------------------------------
// onstat -g ckp

fn ckp_fixture(stem: &str) -> OnstatGCkp {
    onstat_g_ckp::parse(&fixture(&format!("onstat-g-ckp/{stem}.txt")))
        .unwrap_or_else(|e| panic!("{stem}: {e}"))
}

#[test]
fn ckp_doc_sample_blocking_user_checkpoint_and_merged_rates() {
    let k = ckp_fixture("ibm-kc-12.10-adr-0518");
    assert!(k.unparsed.is_empty(), "{:?}", k.unparsed);
    assert_eq!(
        (
            k.auto_checkpoints,
            k.rto_server_restart_s,
            k.estimated_recovery_s
        ),
        (Some(true), Some(60), Some(7))
    );
    let intervals: Vec<_> = k.checkpoints.iter().map(|c| c.interval).collect();
    assert_eq!(intervals, [1, 2, 3, 4, 5]);
    let blocking: Vec<_> = k
        .checkpoints
        .iter()
        .filter(|c| c.blocking)
        .map(|c| (c.interval, c.trigger.as_str(), c.clock_time.as_str()))
        .collect();
    assert_eq!(blocking, [(4, "User", "18:42:44")]);
    let c = &k.checkpoints[3];
    assert_eq!(
        c.lsn,
        Lsn {
            log: 10,
            pos: 0x19_c018
        }
    );
    assert_eq!((c.waits, c.dirty_buffers), (1, 39));
    assert_eq!(
        (
            c.dskflu_per_sec,
            c.plog_pages,
            c.plog_per_sec,
            c.llog_pages,
            c.llog_per_sec
        ),
        (Some(39), Some(536), Some(21), Some(20412), Some(816))
    );
    let rto = &k.checkpoints[4];
    assert_eq!(rto.trigger, "RTO");
    assert_eq!(
        (rto.total_time, rto.flush_time, rto.block_time),
        (54.8, 54.2, 0.0)
    );
    assert_eq!(
        (rto.waits, rto.ckpt_time, rto.wait_time, rto.long_time),
        (30, 0.6, 0.4, 0.6)
    );
    assert_eq!(rto.dirty_buffers, 68232);
    assert_eq!(
        (rto.dskflu_per_sec, rto.llog_per_sec),
        (Some(1259), Some(735))
    );
    assert_eq!(k.checkpoints[2].block_time, 2.0);
    let s = k.summary.expect("summary");
    assert_eq!(
        (
            s.max_plog_pages_per_sec,
            s.max_llog_pages_per_sec,
            s.max_dskflush_time,
            s.avg_dskflush_pages_per_sec,
            s.avg_dirty_pages_per_sec,
            s.blocked_time
        ),
        (8796, 6581, 54, 43975, 2314, 0)
    );
}

#[test]
fn ckp_onedb_copy_with_a_tab_only_line_is_the_same() {
    // The OneDB manuals print a line holding a tab and blanks before `Physical Log`.
    let text = fixture("onstat-g-ckp/ibm-kc-12.10-adr-0518.txt").replacen(
        "           Physical Log",
        "\t   \n           Physical Log",
        1,
    );
    let with_tab = onstat_g_ckp::parse(&text).expect("OneDB copy");
    assert_eq!(with_tab, ckp_fixture("ibm-kc-12.10-adr-0518"));
}

#[test]
fn ckp_apar_wide_row() {
    let k = ckp_fixture("cursor-apar-it13088-11.70-one-row-unwrapped");
    assert!(k.unparsed.is_empty(), "{:?}", k.unparsed);
    let c = &k.checkpoints[0];
    assert_eq!(
        (c.interval, c.blocking, c.trigger.as_str()),
        (8827, true, "User")
    );
    assert_eq!(
        c.lsn,
        Lsn {
            log: 95,
            pos: 0x1cc_6018
        }
    );
    assert_eq!((c.total_time, c.wait_time, c.long_time), (16.0, 16.0, 16.0));
    assert_eq!((c.waits, c.dirty_buffers), (1, 0));
    assert_eq!(
        (
            c.dskflu_per_sec,
            c.plog_pages,
            c.plog_per_sec,
            c.llog_pages,
            c.llog_per_sec
        ),
        (Some(0), Some(0), Some(0), Some(2), Some(0))
    );
    assert_eq!(k.summary, None);
}

#[test]
fn ckp_hand_made_long_block_and_rto_off() {
    let k = ckp_fixture("ifxtop-banner-ckpt-inp-rto-off");
    assert!(k.unparsed.is_empty(), "{:?}", k.unparsed);
    assert_eq!(
        k.header.as_ref().and_then(|h| h.blocked.as_deref()),
        Some("CKPT")
    );
    assert_eq!(
        (
            k.auto_checkpoints,
            k.rto_server_restart_s,
            k.estimated_recovery_s
        ),
        (Some(false), Some(0), None)
    );
    let c = &k.checkpoints[2];
    assert!(c.blocking);
    assert_eq!(
        (c.trigger.as_str(), c.block_time, c.waits),
        ("Llog", 212.6, 418)
    );
    assert_eq!(
        c.lsn,
        Lsn {
            log: 4415,
            pos: 0x18
        }
    );
    assert_eq!(c.plog_pages, Some(703_311));
    assert_eq!(k.checkpoints[0].trigger, "CKPTINTVL");
    assert_eq!(k.summary.map(|s| s.blocked_time), Some(212));
}

#[test]
fn ckp_more_rate_rows_than_checkpoints_are_unparsed() {
    let text = "1 18:41:36 Startup 1:f8 0.0 0.0 0.0 0 0.0 0.0 0.0 4\n\
                4 3 0 1 0\n\
                2884 1966 163 4549 379\n";
    let k = onstat_g_ckp::parse(text).expect("a row and two rate rows");
    assert_eq!(k.checkpoints[0].dskflu_per_sec, Some(4));
    let lines: Vec<_> = k.unparsed.iter().map(|u| u.line).collect();
    assert_eq!(lines, [3]);
}

#[test]
fn ckp_errors_name_line_and_column() {
    let e = onstat_g_ckp::parse("").expect_err("empty");
    assert_eq!((e.line, e.column), (1, 1));
    assert!(e.expected.contains("Auto Checkpoints"), "{}", e.expected);
    // A row without its #Dirty Buffers.
    let row = "4        18:42:44*User     10:19c018  0.0    0.0    0.0    1      0.0   0.0   0.0";
    let e = onstat_g_ckp::parse(row).expect_err("no dirty buffers");
    assert_eq!(
        (e.line, e.column, e.snippet.as_str()),
        (1, row.len() + 1, "end of line")
    );
    assert!(e.expected.contains("more columns"), "{}", e.expected);
    // The #Dirty Buffers column is not a number.
    let row = "4 18:42:44*User 10:19c018 0.0 0.0 0.0 1 0.0 0.0 0.0 3g";
    let e = onstat_g_ckp::parse(row).expect_err("bad dirty buffers");
    assert_eq!((e.line, e.column), (1, col_of(row, "3g")));
    assert!(e.expected.contains("# Dirty Buffers"), "{}", e.expected);
    // A clock time with one-digit seconds.
    let row = "4 18:42:4 User 10:19c018 0.0 0.0 0.0 1 0.0 0.0 0.0 39";
    let e = onstat_g_ckp::parse(row).expect_err("bad clock");
    assert_eq!((e.line, e.column), (1, col_of(row, "18:")));
    assert!(e.expected.contains("clock time"), "{}", e.expected);
    // An LSN without its log id.
    let row = "4 18:42:44 User :19c018 0.0 0.0 0.0 1 0.0 0.0 0.0 39";
    let e = onstat_g_ckp::parse(row).expect_err("bad lsn");
    assert_eq!((e.line, e.column), (1, col_of(row, ":19")));
    let e = onstat_g_ckp::parse(&fixture("onstat-t/ibm-kc-12.10-adref-0607.txt")).expect_err("-t");
    assert_eq!((e.line, e.column), (1, 1));
}

// ---------------------------------------------------------------------------------------------
// Shuffled rows, each counted once (never panicking is `robust`'s, for every kind)

proptest! {
    #[test]
    fn shuffled_rows_are_each_counted_once(
        order in proptest::collection::vec(0usize..64, 0..60),
    ) {
        // Every line of a shuffled -t sample is a row, a known line or unparsed: never two.
        let text = fixture("onstat-t/oninit-onstat-t-resident.txt");
        let lines: Vec<&str> = text.lines().collect();
        let mixed: Vec<&str> = order.iter().map(|i| lines[i % lines.len()]).collect();
        if let Ok(t) = onstat_t::parse(&mixed.join("\n")) {
            prop_assert!(t.tblspaces.len() + t.unparsed.len() + t.elisions <= mixed.len());
        }
    }
}
