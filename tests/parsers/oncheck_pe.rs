//! Tests for the `oncheck -pe` parser: every real sample (snapshot + explicit values), hand-made
//! edge cases. Never panicking is `robust`'s, for every kind.

use crate::common::kind;
use crate::common::{fixture, fixtures_in};
use ifxtop::parsers::oncheck_pe::{self, ExtentKind, OncheckPe, PeChunk, PeEvent};

fn parse(text: &str) -> OncheckPe {
    match oncheck_pe::parse(text) {
        Ok(p) => p,
        Err(e) => panic!("does not parse: {e}"),
    }
}

fn fx(stem: &str) -> OncheckPe {
    parse(&fixture(&format!("oncheck-pe/{stem}.txt")))
}

fn chunk(p: &OncheckPe, n: u32) -> &PeChunk {
    p.chunks
        .iter()
        .find(|c| c.chunk == n)
        .unwrap_or_else(|| panic!("no chunk {n}"))
}

/// (description, offset, size) of a chunk's extents.
fn rows(c: &PeChunk) -> Vec<(&str, u64, u64)> {
    c.extents
        .iter()
        .map(|e| (e.description.as_str(), e.offset, e.size))
        .collect()
}

#[test]
fn every_real_sample_snapshots() {
    let all = fixtures_in("oncheck-pe");
    assert!(all.len() >= 8, "only {} oncheck-pe fixtures", all.len());
    for (stem, text) in all {
        let json = match kind("oncheck-pe").parse_to_json(&text) {
            Ok(j) => j,
            Err(e) => panic!("{stem}: {e}"),
        };
        crate::snap_json!(format!("parse__oncheck-pe__{stem}"), &json);
    }
}

#[test]
fn gbase_16k_dbspace_two_chunks() {
    let p = fx("gbase8s-datadbs01-16k-two-chunks");
    assert_eq!(p.dbspaces.len(), 1);
    assert_eq!(p.dbspaces[0].name, "datadbs01");
    assert_eq!(p.dbspaces[0].owner.as_deref(), Some("gbasedbt"));
    assert_eq!(p.dbspaces[0].created.as_deref(), Some("12/14/2023"));
    assert_eq!(p.chunks.len(), 2);
    let c3 = chunk(&p, 3);
    assert_eq!(c3.dbspace.as_deref(), Some("datadbs01"));
    assert_eq!(c3.path, "/data/gbase/datadbs01chk001");
    assert_eq!(c3.page_size_kb, Some(16));
    assert_eq!(
        (c3.size, c3.used, c3.free),
        (Some(1000), Some(53), Some(947))
    );
    // Offsets are in the chunk's own 16 KB pages: 0..2 reserved, 2 freelist, TBLSpace at 3.
    assert_eq!(
        rows(c3),
        vec![
            ("RESERVED PAGES", 0, 2),
            ("CHUNK FREELIST PAGE", 2, 1),
            ("datadbs01:'gbasedbt'.TBLSpace", 3, 50),
            ("FREE", 53, 947),
        ]
    );
    let kinds: Vec<_> = c3.extents.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            ExtentKind::Reserved,
            ExtentKind::Freelist,
            ExtentKind::Tblspace,
            ExtentKind::Free
        ]
    );
    let t = &c3.extents[2];
    assert_eq!(
        (t.database.as_deref(), t.owner.as_deref(), t.name.as_deref()),
        (Some("datadbs01"), Some("gbasedbt"), Some("TBLSpace"))
    );
    let totals: Vec<_> = c3
        .totals
        .iter()
        .map(|t| (t.label.as_str(), t.value))
        .collect();
    assert_eq!(totals, [("Used", 53), ("Free", 947)]);
    let c4 = chunk(&p, 4);
    assert_eq!(c4.dbspace.as_deref(), Some("datadbs01"));
    assert_eq!(rows(c4).last(), Some(&("FREE", 3, 997)));
    assert!(p.unparsed.is_empty());
}

#[test]
fn gbase_root_chunk_head_logs_and_objects() {
    let p = fx("gbase8s-rootdbs-2k-chunk1-head-and-chunk2");
    let c1 = chunk(&p, 1);
    assert_eq!(c1.page_size_kb, Some(2));
    assert_eq!(
        (c1.size, c1.used, c1.free),
        (Some(100000), Some(72938), Some(27062))
    );
    assert_eq!(c1.extents.len(), 15);
    assert_eq!(rows(c1)[3], ("PHYSICAL LOG", 263, 25000));
    assert_eq!(rows(c1)[4], ("LOGICAL LOG: Log file 1", 25263, 5000));
    assert_eq!(c1.extents[4].kind, ExtentKind::Other);
    assert_eq!(c1.extents[4].database, None);
    let last = &c1.extents[14];
    assert_eq!(
        (last.kind, last.offset, last.size),
        (ExtentKind::Object, 60291, 32)
    );
    assert_eq!(
        (
            last.database.as_deref(),
            last.owner.as_deref(),
            last.name.as_deref()
        ),
        (Some("sysmaster"), Some("gbasedbt"), Some("syscolumns"))
    );
    assert_eq!(c1.extents[12].database.as_deref(), Some("system"));
    assert!(c1.totals.is_empty());
    assert!(p.unparsed.is_empty());
}

#[test]
fn gbase_root_elided_keeps_the_elision_as_unparsed() {
    let p = fx("gbase8s-rootdbs-2k-elided-with-chunk2");
    assert_eq!(p.chunks.len(), 2);
    let c1 = chunk(&p, 1);
    assert_eq!(c1.extents.len(), 13);
    assert_eq!(rows(c1).last(), Some(&("FREE", 67939, 32061)));
    assert_eq!(c1.totals[0].value, 67936);
    let c2 = chunk(&p, 2);
    assert_eq!(c2.dbspace.as_deref(), Some("rootdbs"));
    assert_eq!((c2.size, c2.used, c2.free), (Some(500), Some(3), Some(497)));
    assert_eq!(p.unparsed.len(), 1);
    assert_eq!(
        (p.unparsed[0].line, p.unparsed[0].text.as_str()),
        (22, " ......")
    );
}

#[test]
fn gbase_sbspace_see_below_and_user_data_areas() {
    let p = fx("gbase8s-sbspace01-2k-see-below");
    let c = chunk(&p, 16);
    assert_eq!(c.dbspace.as_deref(), Some("sbspace01"));
    assert_eq!(c.page_size_kb, Some(2));
    assert_eq!(c.size, Some(5000));
    // `see below` in Used and Free.
    assert_eq!((c.used, c.free), (None, None));
    assert_eq!(c.extents.len(), 12);
    assert_eq!(rows(c)[3], ("SBLOBSpace FREE USER DATA (AREA 1)", 53, 1305));
    assert_eq!(c.extents[3].kind, ExtentKind::Other);
    assert_eq!(c.extents[5].kind, ExtentKind::Object);
    assert_eq!(c.extents[5].name.as_deref(), Some("sbspace_desc"));
    assert_eq!(
        rows(c)[11],
        ("SBLOBSpace FREE USER DATA (AREA 2)", 3694, 1306)
    );
    assert!(p.unparsed.is_empty());
}

#[test]
fn ibm_old_layout_sbspace_with_lo_rows() {
    let p = fx("ibm-12.10-admin-0639-sbspace-old-format");
    assert!(p.dbspaces.is_empty());
    let c = chunk(&p, 2);
    assert_eq!(c.dbspace, None);
    assert_eq!(c.path, "/ix/ids9.2/./s9_sbspc");
    assert_eq!(c.page_size_kb, None);
    assert_eq!((c.size, c.used, c.free), (Some(1000), Some(940), Some(60)));
    assert_eq!(rows(c)[3], ("SBLOBSpace LO [2,2,1]", 53, 8));
    assert_eq!(c.extents[3].kind, ExtentKind::Sblob);
    assert_eq!(c.extents[4].kind, ExtentKind::Sblob);
    assert_eq!(c.extents[2].kind, ExtentKind::Tblspace);
    assert!(p.unparsed.is_empty());
}

#[test]
fn hcl_old_layout_sbspace_mangled_with_sblob_totals() {
    let p = fx("hcl-onedb-1.0.1-admin-0639-sbspace-old-format-mangled");
    let c = chunk(&p, 2);
    assert_eq!(c.extents.len(), 14);
    assert_eq!(rows(c)[6], ("SBLOBSpace FREE USER DATA", 169, 305));
    assert_eq!(rows(c)[9], ("s9_sbspc:'informix'.LO_hdr_partn", 482, 8));
    assert_eq!(rows(c)[12], ("FREE", 519, 60));
    assert_eq!(c.extents[12].kind, ExtentKind::Free);
    let totals: Vec<_> = c
        .totals
        .iter()
        .map(|t| (t.label.as_str(), t.value))
        .collect();
    assert_eq!(
        totals,
        [
            ("Used", 214),
            ("SBLOBSpace FREE META DATA", 60),
            ("SBLOBSpace FREE USER DATA", 726)
        ]
    );
    assert_eq!(p.unparsed.len(), 1);
    assert_eq!(p.unparsed[0].text, "...");
}

#[test]
fn hcl_old_layout_dbspace_with_capital_s_and_no_indent() {
    let p = fx("hcl-onedb-2.0-admin-0626-old-format-elided-truncated");
    assert_eq!(p.dbspaces[0].name, "rootdbs");
    assert_eq!(p.dbspaces[0].owner.as_deref(), Some("informix"));
    assert_eq!(p.dbspaces[0].created.as_deref(), Some("08/08/2006"));
    let c1 = chunk(&p, 1);
    assert_eq!(c1.path, "/home/server/root_chunk");
    assert_eq!(
        (c1.size, c1.used, c1.free),
        (Some(75000), Some(19420), Some(55580))
    );
    assert_eq!(c1.extents.len(), 9);
    assert_eq!(rows(c1)[4], ("FREE", 1263, 1500));
    assert_eq!(rows(c1)[8], ("sysmaster:'informix'.systables", 10267, 8));
    let c2 = chunk(&p, 2);
    assert_eq!(c2.dbspace.as_deref(), Some("rootdbs"));
    assert_eq!(c2.size, Some(5000));
    assert!(c2.extents.is_empty());
    let lines: Vec<_> = p.unparsed.iter().map(|u| u.line).collect();
    assert_eq!(lines, [15, 18]);
}

#[test]
fn abridged_report_has_chunks_and_totals_only() {
    let p = fx("pl-student-report-abridged-by-author");
    let names: Vec<_> = p.dbspaces.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        ["rootdbs", "danemb1", "danemb2", "logmb", "tmp1_mb", "tmp2_mb"]
    );
    assert_eq!(p.chunks.len(), 8);
    let c3 = chunk(&p, 3);
    assert_eq!(c3.dbspace.as_deref(), Some("danemb1"));
    assert_eq!(c3.path, "/ol_mb_data/danemb1_2");
    assert_eq!((c3.page_size_kb, c3.size, c3.used), (None, None, None));
    assert!(c3.extents.is_empty());
    assert_eq!(c3.totals[1].value, 9997);
    assert_eq!(chunk(&p, 8).dbspace.as_deref(), Some("tmp2_mb"));
    assert!(p.dbspaces.iter().all(|d| d.owner.is_none()));
    assert!(p.unparsed.is_empty());
}

/// Hand-made: the newer layout with names no real sample shows (system-named index with a
/// leading blank, a `#` fragment name, a dotted name), a chunk path with a blank, CRLF endings.
const HAND_MADE: &str =
    "DBspace Usage Report: datadbs1            Owner: informix  Created: 01/02/2024\r\n\
\r\n\
 Chunk Pathname                             Pagesize(k)  Size(p)  Used(p)  Free(p)\r\n\
     5 /data/my chunks/dbs1                           4     2000     1500      500\r\n\
\r\n\
 Description                                                   Offset(p)  Size(p)\r\n\
 ------------------------------------------------------------- -------- --------\r\n\
 RESERVED PAGES                                                       0        2\r\n\
 stores:'informix'. 101_1                                             2       10\r\n\
 stores:'informix'.orders#p1                                         12       20\r\n\
 stores:'app'.v1.2_data                                              32        8\r\n\
 stores:'informix'.TBLSpace                                          40       50\r\n\
 FREE                                                                90     1910\r\n\
\r\n\
 Total Used:     1500\r\n\
 Total Free:      500\r\n";

#[test]
fn hand_made_odd_names_paths_and_crlf() {
    let p = parse(HAND_MADE);
    let c = chunk(&p, 5);
    assert_eq!(c.path, "/data/my chunks/dbs1");
    assert_eq!(c.page_size_kb, Some(4));
    let names: Vec<_> = c.extents.iter().map(|e| e.name.as_deref()).collect();
    assert_eq!(
        names,
        [
            None,
            Some(" 101_1"),
            Some("orders#p1"),
            Some("v1.2_data"),
            Some("TBLSpace"),
            None
        ]
    );
    assert_eq!(c.extents[3].owner.as_deref(), Some("app"));
    assert_eq!(c.extents[1].kind, ExtentKind::Object);
    assert_eq!(rows(c)[1], ("stores:'informix'. 101_1", 2, 10));
    assert_eq!(c.totals.len(), 2);
    assert!(p.unparsed.is_empty());
}

#[test]
fn hand_made_rows_without_a_chunk_are_unparsed_not_dropped() {
    let text = "DBspace Usage Report: x  Owner: informix  Created: 01/02/2024\n\
 Description                                                   Offset(p)  Size(p)\n\
 FREE                                                                 3      997\n\
 Total Used:        3\n\
 Chunk Pathname                             Pagesize(k)  Size(p)  Used(p)  Free(p)\n\
 not a chunk row\n";
    let p = parse(text);
    assert!(p.chunks.is_empty());
    let lines: Vec<_> = p.unparsed.iter().map(|u| u.line).collect();
    assert_eq!(lines, [3, 4, 6]);
}

#[test]
fn hand_made_two_dbspaces_chunks_follow_their_own_dbspace() {
    let text = "DBspace Usage Report: a  Owner: informix  Created: 01/02/2024\n\
 Chunk Pathname   Pagesize(k)  Size(p)  Used(p)  Free(p)\n\
     1 /a   2  100  10  90\n\
 Description   Offset(p)  Size(p)\n\
 -------- -------- --------\n\
 d:'o'.t1   0   10\n\
DBspace Usage Report: b  Owner: informix  Created: 01/02/2024\n\
 Chunk Pathname   Pagesize(k)  Size(p)  Used(p)  Free(p)\n\
     2 /b   16  100  10  90\n\
 Description   Offset(p)  Size(p)\n\
 d:'o'.t2   0   10\n";
    let p = parse(text);
    assert_eq!(chunk(&p, 1).dbspace.as_deref(), Some("a"));
    assert_eq!(chunk(&p, 2).dbspace.as_deref(), Some("b"));
    assert_eq!(chunk(&p, 1).extents.len(), 1);
    assert_eq!(chunk(&p, 2).extents[0].name.as_deref(), Some("t2"));
    assert!(p.unparsed.is_empty());
}

#[test]
fn hand_made_numbers_too_big_are_unparsed() {
    let text = " Chunk Pathname  Size  Used  Free\n\
     1 /a  10  5  5\n\
 Description  Offset  Size\n\
 d:'o'.t  99999999999999999999999  1\n";
    let p = parse(text);
    assert_eq!(chunk(&p, 1).extents.len(), 0);
    assert_eq!(p.unparsed.len(), 1);
    assert_eq!(p.unparsed[0].line, 4);
}

#[test]
fn other_outputs_and_garbage_are_errors() {
    let onstat_x = fixture("onstat-X/oninit-onstat-X-two-pools.txt");
    let e = match oncheck_pe::parse(&onstat_x) {
        Err(e) => e,
        Ok(p) => panic!("onstat -X parsed as oncheck -pe: {p:?}"),
    };
    assert!(e.expected.contains("Chunk Pathname"), "{e}");
    assert_eq!(e.column, 1);
    assert!(e.line >= 1);
    let e = oncheck_pe::parse("").err();
    assert_eq!(e.map(|e| e.snippet), Some("end of input".to_string()));
    let e = oncheck_pe::parse("\n\n  hello world 1 2\n").err();
    assert_eq!(
        e.map(|e| (e.line, e.snippet)),
        Some((3, "  hello world 1 2".to_string()))
    );
}

#[test]
fn the_visitor_and_the_owned_parse_agree() {
    for (stem, text) in fixtures_in("oncheck-pe") {
        let mut extents = 0;
        let mut chunks = 0;
        let mut unparsed = 0;
        let r = oncheck_pe::visit(&text, |ev| match ev {
            PeEvent::Extent { .. } => extents += 1,
            PeEvent::Chunk(_) => chunks += 1,
            PeEvent::Unparsed(_) => unparsed += 1,
            _ => {}
        });
        assert!(r.is_ok(), "{stem}");
        let p = parse(&text);
        assert_eq!(chunks, p.chunks.len(), "{stem}");
        assert_eq!(
            extents,
            p.chunks.iter().map(|c| c.extents.len()).sum::<usize>(),
            "{stem}"
        );
        assert_eq!(unparsed, p.unparsed.len(), "{stem}");
    }
}
