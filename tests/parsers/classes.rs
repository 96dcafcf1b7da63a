//! Formats seen in kept captures, each told as a class and rebuilt from a published sample:
//! `onstat -D` chunk pathnames that are not absolute, old `onstat -l` positions in packed hex, a
//! last `onstat -g cpu` row cut short, the `.....` elision in `onstat -x`, the `Waiting threads:`
//! title of `onstat -g wai`, the XA data sources of `onstat -g ses <sid>`, `numactl -H` wrapped
//! by a narrow terminal, a GBase 8s evaluation build's license line above the banner.

use crate::common::{fixture, kind};
use serde_json::{json, Value};

/// `text` parsed as kind `name`, as `ifxtop parse` prints it.
fn parsed(name: &str, text: &str) -> Value {
    kind(name)
        .parse_to_json(text)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}
use ifxtop::ids::Tid;
use ifxtop::parsers::{
    numa, onstat_d_upper, onstat_g_ath, onstat_g_cpu, onstat_g_ses, onstat_l, onstat_x_txn,
};

/// A session in an XA transaction: its data-source table follows the last parsed statement
/// with no blank line, and was read as more of that statement.
#[test]
fn xa_data_sources_are_not_sql() {
    let text = fixture("onstat-g-ses/ifxtop-constructed-xa-datasources.txt");
    let s = onstat_g_ses::parse(&text).expect("onstat -g ses 812");
    assert!(s.unparsed.is_empty(), "{:?}", s.unparsed);
    let d = s.detail.as_ref().expect("detail");
    assert_eq!(
        d.last_parsed_sql.as_deref(),
        Some("update customer set balance = balance + 10.00\nwhere customer_num = 104")
    );
    assert_eq!(
        parsed("onstat-g-ses", &text)["detail"]["xa_datasources"],
        json!([
            { "name": "xabasicdb@atmol10:sitaramv.xads_t3_i1", "rmid": 6, "active": true },
            { "name": "xabasicdb@atmol10:sitaramv.xads_t2_i1", "rmid": 4, "active": true },
            { "name": "xabasicdb@atmol10:sitaramv.xads_t2_i2", "rmid": 5, "active": false },
        ])
    );
}

/// Old builds print `phybegin 100107` and `begin 1002fb` (chunk above the low 20 bits, page in
/// them): the physical-log line and every log row were unparsed. Read as `chunk:page`.
#[test]
fn packed_hex_log_positions_are_read() {
    let l = onstat_l::parse(&fixture(
        "onstat-l/ifxtop-constructed-packed-hex-positions.txt",
    ))
    .expect("onstat -l");
    assert!(l.unparsed.is_empty(), "{:?}", l.unparsed);
    let p = l.physical.as_ref().expect("physical log");
    assert_eq!(p.phybegin.as_deref(), Some("1:263"));
    assert_eq!(p.physize, Some(500));
    let begins: Vec<&str> = l.logs.iter().map(|f| f.begin.as_str()).collect();
    assert_eq!(
        begins,
        ["1:763", "1:1263", "1:1763", "1:2263", "1:2763", "1:3263", "1:3763", "1:4263"]
    );
    assert_eq!(l.current().map(|f| f.number), Some(6));
    // The same instance printed as `chunk:page` reads the same.
    let printed =
        onstat_l::parse(&fixture("onstat-l/hcl-onedb-2.0-adr-0598-doc.txt")).expect("doc");
    assert_eq!(printed.logs, l.logs);
    assert_eq!(printed.physical, l.physical);
    // Other chunks: `300035` is chunk 3, page 0x35.
    let text = "address  number   flags    uniqid   begin                size     used    %used\na517f70  1        U-B----  1        300035                500      500   100.00\n";
    let l = onstat_l::parse(text).expect("row");
    assert_eq!(l.logs[0].begin, "3:53");
}

/// A chunk whose pathname is relative (to the directory the server started in) is a chunk: it
/// was left unparsed, and vanished from the I/O pane.
#[test]
fn chunks_with_relative_pathnames_are_read() {
    let d = onstat_d_upper::parse(&fixture(
        "onstat-D/ifxtop-constructed-relative-pathnames.txt",
    ))
    .expect("onstat -D");
    assert!(d.unparsed.is_empty(), "{:?}", d.unparsed);
    let chunks: Vec<(u32, &str, u64, u64)> = d
        .chunks
        .iter()
        .map(|c| (c.chunk, c.path.as_str(), c.page_rd, c.page_wr))
        .collect();
    assert_eq!(
        chunks,
        [(1, "./stardbs3", 0, 0), (2, "dbspaces/stardbs3.2", 12, 3)]
    );
    assert_eq!(d.chunks_active, Some(2));
}

/// The output ends inside the last row (no line end): its status `IO Id` (or a `#scheds` of
/// `68` for `6810`) would be read as whole. It is left unparsed and marked cut, not read.
#[test]
fn a_cpu_row_cut_by_the_end_of_the_output_is_not_read() {
    let text = fixture("onstat-g-cpu/ifxtop-constructed-last-row-cut-in-status.txt");
    let c = onstat_g_cpu::parse(&text).expect("cpu");
    assert_eq!(c.threads.len(), 18);
    assert!(c.threads.iter().all(|t| t.tid != Tid(20)));
    assert_eq!(parsed("onstat-g-cpu", &text)["cut"], 21);
    let lines: Vec<usize> = c.unparsed.iter().map(|u| u.line).collect();
    assert_eq!(lines, [21]);
    // Cut inside `#scheds`: the same.
    let text = "Thread CPU Info:\n 5      msc vp 0          6msc*   06/05 11:13:08        0.5395       8285    IO Idle\n 20     aio vp 14        30aio*   06/05 11:01:27     9506.3932       68";
    let c = onstat_g_cpu::parse(text).expect("cpu");
    let tids: Vec<Tid> = c.threads.iter().map(|t| t.tid).collect();
    assert_eq!(tids, [Tid(5)]);
    assert_eq!(parsed("onstat-g-cpu", text)["cut"], 3);
    // With its line end the row is whole.
    let whole = format!("{text}10\n");
    let c = onstat_g_cpu::parse(&whole).expect("cpu");
    assert_eq!(c.threads.len(), 2);
    assert_eq!(c.threads[1].scheds, 6810);
    assert_eq!(parsed("onstat-g-cpu", &whole)["cut"], Value::Null);
    assert!(c.unparsed.is_empty());
}

/// `.....` where rows were cut out is an elision (the list is known to be incomplete), not an
/// unparsed line.
#[test]
fn an_elided_transaction_list_says_so() {
    let text = fixture("onstat-x-txn/ifxtop-constructed-elided-rows.txt");
    let x = onstat_x_txn::parse(&text).expect("onstat -x");
    assert_eq!(parsed("onstat-x", &text)["elisions"], json!([9]));
    assert!(x.unparsed.is_empty(), "{:?}", x.unparsed);
    assert_eq!(x.transactions.len(), 6);
    assert_eq!(x.active, Some(8));
}

/// `onstat -g wai` prints `onstat -g ath`'s table under `Waiting threads:`: read as
/// `Running threads:` (`onstat -g act`) is.
#[test]
fn the_waiting_threads_title_is_read_as_the_running_one() {
    let w = onstat_g_ath::parse(&fixture(
        "onstat-g-ath/ifxtop-constructed-g-wai-waiting-threads.txt",
    ))
    .expect("onstat -g wai");
    assert_eq!(w.threads.len(), 10);
    assert!(w.unparsed.is_empty(), "{:?}", w.unparsed);
    // Alone, the title was refused before; now it is known.
    let text = "Waiting threads:\n tid     tcb      rstcb    prty status                vp-class      name\n 213     14c91ec0 14a58b98 2    cond wait  sm_read      1cpu        sqlexec\n";
    let w = onstat_g_ath::parse(text).expect("wai");
    assert_eq!(w.threads.len(), 1);
    assert!(w.unparsed.is_empty());
}

/// `numactl -H` copied from a terminal narrower than its lines: `node 0 free: 186539 MB` at 16
/// columns is `node 0 free: 186` and `539 MB`. Each node's size and free memory are read whole
/// at every width the key fits in, never short (`186` or `18653` MB was read before).
#[test]
fn numactl_lines_wrapped_by_a_narrow_terminal_keep_their_memory() {
    let text = fixture("numactl-H/hadoop-yarn-numa-doc-2node-96cpu.txt");
    for width in 14..=30 {
        let mut wrapped = String::new();
        for line in text.lines() {
            let chars: Vec<char> = line.chars().collect();
            for piece in chars.chunks(width) {
                wrapped.extend(piece);
                wrapped.push('\n');
            }
            if chars.is_empty() {
                wrapped.push('\n');
            }
        }
        let n = numa::parse_numactl_h(&wrapped).expect("numactl -H");
        let memory: Vec<(Option<u64>, Option<u64>)> =
            n.nodes.iter().map(|x| (x.size_mb, x.free_mb)).collect();
        assert_eq!(
            memory,
            [
                (Some(191_297), Some(186_539)),
                (Some(191_383), Some(185_914))
            ],
            "{width} columns:\n{wrapped}"
        );
    }
    // A value cut with nothing after it is not read short.
    let n = numa::parse_numactl_h("available: 1 nodes (0)\nnode 0 cpus: 0 1\nnode 0 size: 1912\n")
        .expect("numactl -H");
    assert_eq!(n.nodes[0].size_mb, None);
    assert_eq!(n.unparsed.len(), 1);
}

/// A GBase 8s evaluation build prints `Your evaluation license will expire on ...` right above
/// the banner: the banner, and with it the server mode, was lost in every kind.
#[test]
fn an_evaluation_license_line_above_the_banner_keeps_the_banner() {
    let text = fixture("onstat-banner/ifxtop-constructed-gbase-evaluation-license-sds.txt");
    let license = text.lines().next().expect("first line");
    let body = fixture("onstat-u/oninit-onstat-u.txt");
    for (name, input, mode, flags) in [
        ("onstat-banner", text.clone(), "Updatable", vec!["SDS"]),
        // Above another kind's output, with another mode.
        (
            "onstat-u",
            format!(
                "{license}\nGBase Database Server Version 12.10.FC4G1AEE -- Read-Only (SDS) -- Up 01:02:03 -- 1213440 Kbytes\n\n{body}"
            ),
            "Read-Only",
            vec!["SDS"],
        ),
    ] {
        let json = parsed(name, &input);
        let h = &json["header"];
        assert_eq!(h["mode"], mode, "{name}: {h}");
        assert_eq!(h["mode_flags"], json!(flags), "{name}: {h}");
        assert_eq!(h["license"], license, "{name}: {h}");
        assert_eq!(json["unparsed"], json!([]), "{name}");
    }
}
