//! Issue 25, real formats that did not parse right: captures pasted with their prompt line,
//! banners without a product name or the word `Version`, the 15.0 banner and wide numbers,
//! external sbspace directories, netstat spellings and IPv4-mapped hosts, numbers typed as
//! strings, wrapped `numactl -H` lines, kind names as the command is typed.

use crate::common::{fixture, kind};
use ifxtop::parsers::header::Header;
use ifxtop::parsers::{onstat_banner, onstat_d, onstat_d_upper, onstat_u};
use serde_json::Value;

/// The JSON of `text` parsed as kind `name`.
fn json(name: &str, text: &str) -> Value {
    kind(name)
        .parse_to_json(text)
        .unwrap_or_else(|e| panic!("{name}: {e}\n{text}"))
}

/// The banner `ifxtop parse` found, as JSON (`null` when none).
fn header_of(name: &str, text: &str) -> Value {
    json(name, text)["header"].clone()
}

// 1. Captures pasted with the shell prompt line that ran them.

/// Every prompt style, before the real captures with a banner, and before one with blank
/// lines between: the banner is still read, and the prompt line is not left unparsed.
#[test]
fn a_leading_prompt_line_naming_the_command_is_skipped() {
    let cases = [
        (
            "$ onstat -g dri",
            "onstat-g-dri",
            "onstat-g-dri/ifxtop-14.10-primary-hdr-txn-scope-trailing-blanks.txt",
        ),
        (
            "informix@db01:~> onstat -l",
            "onstat-l",
            "onstat-l/ifxtop-14.10-8-char-flags-tab-subsystems.txt",
        ),
        (
            "[informix@db01 ~]$ onstat -u",
            "onstat-u",
            "onstat-u/ifxtop-wrapped-banner.txt",
        ),
        (
            "# onstat -d",
            "onstat-d",
            "onstat-d/ibm-kc-14.10-adref-0504.txt",
        ),
        (
            "db01% /opt/informix/bin/onstat -g ntt",
            "onstat-g-ntt",
            "onstat-g-ntt/ifxtop-clients-ipv4.txt",
        ),
        (
            "informix@db01:/home/informix $ onstat -k",
            "onstat-k",
            "onstat-k/ifxtop-lock-chain-16-digit.txt",
        ),
        (
            "onstat -s",
            "onstat-s",
            "onstat-s/hcl-14.10-adr-0606-doc-blocked-ckpt.txt",
        ),
    ];
    for (prompt, name, rel) in cases {
        let real = fixture(rel);
        let expected = json(name, &real);
        assert!(expected["header"].is_object(), "{rel} has a banner");
        for pasted in [
            format!("{prompt}\n{real}"),
            format!("\n{prompt}\n\n{real}"),
            format!("{prompt}   \r\n{real}"),
        ] {
            let got = json(name, &pasted);
            assert_eq!(got["header"], expected["header"], "{prompt:?} before {rel}");
            assert_eq!(
                got["unparsed"].as_array().map(Vec::len),
                expected["unparsed"].as_array().map(Vec::len),
                "{prompt:?} before {rel}: {}",
                got["unparsed"]
            );
        }
    }
}

/// The constructed fixtures (a prompt line above a real capture's banner) read the banner.
#[test]
fn prompt_line_fixtures_keep_their_banner() {
    let dri = header_of(
        "onstat-g-dri",
        &fixture("onstat-g-dri/ifxtop-constructed-prompt-line-dollar.txt"),
    );
    assert_eq!(dri["version"], "14.10.FC4W1AEE");
    assert_eq!(dri["mode"], "On-Line");
    assert_eq!(dri["mode_flags"], serde_json::json!(["Prim"]));
    let l = header_of(
        "onstat-l",
        &fixture("onstat-l/ifxtop-constructed-prompt-line-suse.txt"),
    );
    assert_eq!(l["version"], "14.10.FC4");
    assert_eq!(l["uptime_s"], 7 * 86_400 + 3 * 3_600 + 21 * 60 + 9);
}

/// A first line that is real output, or a prompt running something else, is not skipped: it
/// is read (a banner, a title) or listed as not understood, as before.
#[test]
fn a_line_that_is_not_a_prompt_for_the_command_is_kept() {
    let u = fixture("onstat-u/ifxtop-wrapped-banner.txt");
    for first in [
        "$ ls -l",
        "informix@db01:~> onstat_wrapper -u",
        "$onstat -u",
        "onstat: cannot attach to shared memory",
        "echo onstat -u",
    ] {
        let text = format!("{first}\n{u}");
        match kind("onstat-u").parse_to_json(&text) {
            Ok(v) => {
                assert!(v["header"].is_null(), "{first:?} hid the banner: {v}");
                let lines: Vec<_> = v["unparsed"]
                    .as_array()
                    .expect("unparsed")
                    .iter()
                    .filter_map(|u| u["line"].as_u64())
                    .collect();
                assert!(lines.contains(&1), "{first:?} dropped silently: {lines:?}");
            }
            Err(e) => assert_eq!(e.line, 1, "{first:?}: {e}"),
        }
    }
    // The doc's command caption above a figure is a prompt line without a prompt.
    let r = onstat_banner::parse(&fixture("onstat-r/hcl-14.10-adr-0604-doc-r5-r10.txt"))
        .expect("onstat -r");
    assert!(r.header.is_some());
    assert!(r.unparsed.iter().all(|u| u.line != 1), "{:?}", r.unparsed);
}

// 2. Banners without a product name, or without the word `Version`.

/// A banner line and what it must give: product, version, mode, uptime, memory.
type BannerCase<'a> = (&'a str, Option<&'a str>, &'a str, &'a str, u64, u64);

#[test]
fn banners_of_oem_builds_keep_mode_uptime_and_memory() {
    let cases: [BannerCase<'_>; 6] = [
        (
            "GBase Database Server Version 8.8.0 -- On-Line -- Up 2 days 03:04:05 -- 2048000 Kbytes",
            Some("GBase Database Server"),
            "8.8.0",
            "On-Line",
            2 * 86_400 + 3 * 3_600 + 4 * 60 + 5,
            2_048_000,
        ),
        (
            "Version 12.10.FC8 -- Quiescent -- Up 00:00:09 -- 1024 Kbytes",
            None,
            "12.10.FC8",
            "Quiescent",
            9,
            1024,
        ),
        (
            "GBase 8s V8.8 -- On-Line (Prim) -- Up 1 day 00:00:01 -- 4096 Kbytes",
            Some("GBase 8s"),
            "V8.8",
            "On-Line",
            86_401,
            4096,
        ),
        (
            "IBM Informix Dynamic Server 12.10.FC8 -- Read-Only (Sec) -- Up 00:01:00 -- 512 Kbytes",
            Some("IBM Informix Dynamic Server"),
            "12.10.FC8",
            "Read-Only",
            60,
            512,
        ),
        (
            "8.8.0.2 -- Single-User -- Up 00:00:30 -- 100 Kbytes",
            None,
            "8.8.0.2",
            "Single-User",
            30,
            100,
        ),
        (
            "OEM Database Engine\t11.70.FC9 -- Fast Recovery -- Up 00:02:00 -- 64 Kbytes",
            Some("OEM Database Engine"),
            "11.70.FC9",
            "Fast Recovery",
            120,
            64,
        ),
    ];
    for (line, product, version, mode, up, kb) in cases {
        let text = format!(
            "{line}\n\nUserthreads\naddress flags sessid user tty wait tout locks nreads nwrites\n"
        );
        let h: Header = onstat_u::parse(&text)
            .unwrap_or_else(|e| panic!("{line}: {e}"))
            .header
            .unwrap_or_else(|| panic!("no banner in {line}"));
        assert_eq!(h.product.as_deref(), product, "{line}");
        assert_eq!(h.version.as_deref(), Some(version), "{line}");
        assert_eq!(h.mode, mode, "{line}");
        assert_eq!(h.uptime_s, Some(up), "{line}");
        assert_eq!(h.shm_kb, Some(kb), "{line}");
    }
}

/// Without the word `Version`, a line with `--` is a banner only with a known mode and an
/// uptime: SQL text or notes with dashes are not banners.
#[test]
fn lines_with_dashes_are_not_banners() {
    for line in [
        "select 1.5 -- On-Line -- comment",
        "Release 12.10 -- On-Line",
        "notes 1.2 -- busy -- Up 00:00:01",
        "GBase 8s -- On-Line -- Up 00:00:01 -- 1 Kbytes",
    ] {
        let text = format!("{line}\n");
        let parsed = onstat_banner::parse(&text);
        assert!(
            parsed.as_ref().map_or(true, |b| b.header.is_none()),
            "{line}: {parsed:?}"
        );
    }
}

// 3. Informix 15.0: the banner, its date line, wider numbers.

#[test]
fn the_15_0_banner_and_its_infrastructure_line() {
    let banner =
        "HCL Informix Dynamic Server Version 15.0.0.0 -- On-Line -- Up 00:05:00 -- 1048576 Kbytes";
    let cases: [(&str, &str, Option<u32>, Option<&str>); 5] = [
        (
            "2024-11-08 14:54:12 -- Infrastructure Version: 0 (Compatibility mode)",
            "2024-11-08 14:54:12",
            Some(0),
            Some("Compatibility mode"),
        ),
        (
            "2024-11-08 14:54:12 -- Infrastructure Version: 1 (Native mode)",
            "2024-11-08 14:54:12",
            Some(1),
            Some("Native mode"),
        ),
        (
            "2024-11-08 14:54:12 -- Infrastructure Version: 2",
            "2024-11-08 14:54:12",
            Some(2),
            None,
        ),
        ("2024-11-08 14:54:12", "2024-11-08 14:54:12", None, None),
        (
            "Fri Nov  8 14:54:12 2024 -- Infrastructure Version: 0 (Compatibility mode)",
            "Fri Nov  8 14:54:12 2024",
            Some(0),
            Some("Compatibility mode"),
        ),
    ];
    for (date_line, date, infra, mode) in cases {
        let text = format!(
            "{banner}\n{date_line}\n\nUserthreads\naddress flags sessid user tty wait tout locks nreads nwrites\n"
        );
        let u = onstat_u::parse(&text).unwrap_or_else(|e| panic!("{date_line}: {e}"));
        assert!(u.unparsed.is_empty(), "{date_line}: {:?}", u.unparsed);
        let h = u.header.expect("banner");
        assert_eq!(h.version.as_deref(), Some("15.0.0.0"));
        assert_eq!(h.release(), Some((15, 0)));
        assert_eq!(h.date.as_deref(), Some(date), "{date_line}");
        assert_eq!(h.infrastructure_version, infra, "{date_line}");
        assert_eq!(h.storage_mode.as_deref(), mode, "{date_line}");
    }
    // In JSON, under these names.
    let v = header_of(
        "onstat-banner",
        &format!(
            "{banner}\n2024-11-08 14:54:12 -- Infrastructure Version: 0 (Compatibility mode)\n"
        ),
    );
    assert_eq!(v["infrastructure_version"], 0);
    assert_eq!(v["storage_mode"], "Compatibility mode");
    // Not a date line: the line stays for the body.
    let text = format!("{banner}\n2024-11-08 14:54:12 -- Something else\n");
    let b = onstat_banner::parse(&text);
    assert!(
        b.as_ref().map_or(true, |b| b
            .header
            .as_ref()
            .is_some_and(|h| h.date.is_none())),
        "{b:?}"
    );
}

/// 15.0 native mode: page numbers of 10 and more digits, in `onstat -X` (`chunk:page`),
/// `onstat -k` (rowids), `oncheck -pe` (offsets and sizes) and `onstat -D` (pages read).
#[test]
fn wide_page_numbers_and_rowids_of_native_mode() {
    let x = json(
        "onstat-X",
        "Buffers (Access)\n\
         address          owner            flags pagenum               memaddr          nslots pgflgs scount   waiter\n\
         Buffer pool page size: 4096\n\
         2443cd7e8        ffffffffffffffff 80    25:12345678901         cce17b000        101    2801   0        0\n\
         267ca4628        0                0     32766:4294967296000    105c3c5000       122    2890   1        0\n\
         \x20 2 modified, 8388608 total, 8388608 hash buckets, 4096 buffer size\n",
    );
    assert_eq!(x["unparsed"], serde_json::json!([]));
    let bufs = &x["pools"][0]["buffers"];
    assert_eq!(bufs[0]["chunk"], 25);
    assert_eq!(bufs[0]["page"], 12_345_678_901_u64);
    assert_eq!(bufs[1]["chunk"], 32766);
    assert_eq!(bufs[1]["page"], 4_294_967_296_000_u64);

    let k = json(
        "onstat-k",
        "Locks\n\
         address          wtlist           owner            lklist           type     tblsnum  rowid            key#/bsiz\n\
         c000000012a01a28 0                c0000000101a6d28 0                HDR+S    100002   2fffffffff0c     0\n\
         c000000012a01b50 0                c0000000101a6d28 c000000012a01a28 HDR+X    3000f1   ffffffff01a07    0\n\
         \x202 active, 200000 total, 262144 hash buckets, 0 lock table overflows\n",
    );
    assert_eq!(k["unparsed"], serde_json::json!([]));
    assert_eq!(k["locks"][0]["rowid"], "2fffffffff0c");
    assert_eq!(k["locks"][1]["rowid"], "ffffffff01a07");

    let pe = json(
        "oncheck-pe",
        "DBspace Usage Report: big16k              Owner: informix  Created: 11/08/2024\n\
         \n\
         \x20Chunk Pathname                             Pagesize(k)  Size(p)      Used(p)      Free(p)\n\
         \x20   25 /ifx/chunks/big16k_01                         16  20000000000  12345678901  7654321099\n\
         \n\
         \x20Description                                                   Offset(p)    Size(p)\n\
         \x20------------------------------------------------------------- ------------ -----------\n\
         \x20RESERVED PAGES                                                           0            2\n\
         \x20big16k:'informix'.TBLSpace                                               2           50\n\
         \x20trading:'informix'.ticks                                                52  12345678849\n\
         \x20FREE                                                           12345678901   7654321099\n",
    );
    assert_eq!(pe["unparsed"], serde_json::json!([]), "{pe}");
    let chunk = &pe["chunks"][0];
    assert_eq!(chunk["size"], 20_000_000_000_u64);
    assert_eq!(chunk["extents"][2]["size"], 12_345_678_849_u64);
    assert_eq!(chunk["extents"][3]["offset"], 12_345_678_901_u64);

    let d = onstat_d_upper::parse(
        "Chunks\n\
         address          chunk/dbs     offset       page Rd      page Wr      pathname\n\
         269e881280       1      1      0            12345678901  9876543210   /ifx/chunks/rootdbs_01\n\
         269e8834c0       32766  2047   10000000000  1            2            /ifx/chunks/big_01\n",
    )
    .expect("onstat -D");
    assert!(d.unparsed.is_empty(), "{:?}", d.unparsed);
    assert_eq!(d.chunks[0].page_rd, 12_345_678_901);
    assert_eq!(d.chunks[1].offset, 10_000_000_000);
}

// 4. `External SBLOBspace directories:` under a dbspace.

/// The directories under the title (indented, unindented, several on a line, on the title
/// line), then the chunks: every chunk is kept, in `onstat -d` and in `onstat -D`.
#[test]
fn external_sbspace_directories_keep_the_chunks_after_them() {
    let dbspaces =
        "IBM Informix Dynamic Server Version 15.0.0.0 -- On-Line -- Up 00:10:00 -- 150000 Kbytes\n\
        \n\
        Dbspaces\n\
        address          number   flags      fchunk   nchunks  pgsize   flags    owner    name\n\
        45ee2028         1        0x60001    1        1        2048     N  BA    informix rootdbs\n\
        45ee2790         3        0x40028001 3        1        2048     N SBA    informix sb_ext1\n\
        \x20   External SBLOBspace directories:\n\
        \x20     /work/sbdir1\n\
        /work/sbdir2\n\
        \x20     /work/sbdir3, /work/sbdir4\n\
        45ee2ef8         4        0x40028001 4        1        2048     N SBA    informix sb_ext2\n\
        \x20   External SBLOBspace directories: /work/sbdir5\n\
        \x202 active, 2047 maximum\n\
        \n\
        Chunks\n";
    let d = onstat_d::parse(&format!(
        "{dbspaces}address          chunk/dbs     offset     size       free       bpages     flags pathname\n\
         45ee2258         1      1      0          100000     65632                 PO-B-- /work/rootchunk\n\
         46064488         3      3      0          1000       900        900        POSB-- /work/sb_ext1\n\
         460644f0         4      4      0          1000       900        900        POSB-- /work/sb_ext2\n\
         \x203 active, 32766 maximum\n"
    ))
    .expect("onstat -d");
    assert!(d.unparsed.is_empty(), "{:?}", d.unparsed);
    assert_eq!(
        d.chunks.iter().map(|c| c.chunk).collect::<Vec<_>>(),
        [1, 3, 4]
    );
    assert_eq!(
        d.dbspaces[1].external_dirs,
        [
            "/work/sbdir1",
            "/work/sbdir2",
            "/work/sbdir3",
            "/work/sbdir4"
        ]
    );
    assert_eq!(d.dbspaces[2].external_dirs, ["/work/sbdir5"]);
    assert_eq!(d.dbspaces_active, Some(2));

    let upper = onstat_d_upper::parse(&format!(
        "{dbspaces}address          chunk/dbs     offset     page Rd    page Wr    pathname\n\
         45ee2258         1      1      0          7500       3750       /work/rootchunk\n\
         46064488         3      3      0          10         20         /work/sb_ext1\n\
         460644f0         4      4      0          30         40         /work/sb_ext2\n\
         \x203 active, 32766 maximum\n"
    ))
    .expect("onstat -D");
    assert!(upper.unparsed.is_empty(), "{:?}", upper.unparsed);
    assert_eq!(
        upper.chunks.iter().map(|c| c.chunk).collect::<Vec<_>>(),
        [1, 3, 4]
    );
    assert_eq!(
        upper.dbspaces[1].external_dirs,
        [
            "/work/sbdir1",
            "/work/sbdir2",
            "/work/sbdir3",
            "/work/sbdir4"
        ]
    );
    assert_eq!(upper.dbspaces[2].external_dirs, ["/work/sbdir5"]);
    assert_eq!(upper.chunks_active, Some(3));
}

// 5. netstat spellings and IPv4-mapped addresses.

#[test]
fn netstat_states_of_every_platform_read_as_linux_names() {
    let rows = [
        ("FIN_WAIT1", "FIN_WAIT1"),
        ("FIN_WAIT_1", "FIN_WAIT1"),
        ("FIN_WAIT2", "FIN_WAIT2"),
        ("FIN_WAIT_2", "FIN_WAIT2"),
        ("CLOSE_WAIT", "CLOSE_WAIT"),
        ("TIME_WAIT", "TIME_WAIT"),
        ("SYN_RCVD", "SYN_RECV"),
        ("SYN_RECEIVED", "SYN_RECV"),
        ("CLOSED", "CLOSE"),
        ("LISTENING", "LISTEN"),
        ("TIMEWAIT", "TIME_WAIT"),
        ("CLOSEWAIT", "CLOSE_WAIT"),
    ];
    let text: String = rows
        .iter()
        .enumerate()
        .map(|(i, (state, _))| {
            format!("f1000e0002b4a{i:03x} tcp4       0      0  10.20.1.13.9088       10.20.1.5.{}  {state}\n", 51000 + i)
        })
        .collect();
    let v = json("netstat", &text);
    assert_eq!(v["unparsed"], serde_json::json!([]), "{v}");
    let got: Vec<_> = v["sockets"]
        .as_array()
        .expect("sockets")
        .iter()
        .map(|s| s["state"].as_str().unwrap_or("?").to_string())
        .collect();
    let want: Vec<_> = rows.iter().map(|(_, w)| w.to_string()).collect();
    assert_eq!(got, want);
}

/// `::ffff:10.20.1.5` is `10.20.1.5` in every parser that reads addresses: netstat (Linux and
/// AIX), ss, /proc/net/tcp6, `onstat -g ntt` and `onstat -g ses`.
#[test]
fn ipv4_mapped_addresses_read_as_plain_ipv4() {
    let linux = json(
        "netstat",
        "Active Internet connections (servers and established)\n\
         Proto Recv-Q Send-Q Local Address           Foreign Address         State\n\
         tcp6       0      0 ::ffff:10.20.1.13:9088  ::ffff:10.20.1.5:51234  ESTABLISHED\n\
         tcp6       0      0 :::9088                 :::*                    LISTEN\n",
    );
    assert_eq!(linux["sockets"][0]["local"], "10.20.1.13:9088");
    assert_eq!(linux["sockets"][0]["remote"], "10.20.1.5:51234");
    assert_eq!(linux["sockets"][1]["local"], "[::]:9088");
    let aix = json(
        "netstat",
        "f1000e0002b4a3d8 tcp6       0      0  ::ffff:10.20.1.13.9088  ::FFFF:10.20.1.5.51236  CLOSE_WAIT\n",
    );
    assert_eq!(aix["sockets"][0]["remote"], "10.20.1.5:51236");
    let ss = json(
        "ss",
        "State  Recv-Q Send-Q Local Address:Port          Peer Address:Port\n\
         ESTAB  0      0      [::ffff:10.20.1.13]:9088    [::ffff:10.20.1.5]:51234\n",
    );
    assert_eq!(ss["sockets"][0]["remote"], "10.20.1.5:51234");
    assert_eq!(ss["sockets"][0]["proto"], "tcp");
    // /proc/net/tcp6: ::ffff:10.20.1.13 port 9088 to ::ffff:10.20.1.5 port 51234.
    let proc = json(
        "proc-net-tcp",
        "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
         \x20  0: 0000000000000000FFFF00000D01140A:2380 0000000000000000FFFF00000501140A:C822 01 00000000:00000000 00:00000000 00000000  1000        0 12345 1 0000000000000000 20 4 30 10 -1\n",
    );
    assert_eq!(proc["sockets"][0]["local"], "10.20.1.13:9088");
    assert_eq!(proc["sockets"][0]["remote"], "10.20.1.5:51234");
    assert_eq!(proc["sockets"][0]["proto"], "tcp6");

    let ntt = json(
        "onstat-g-ntt",
        "Individual thread network information (times):\n\
         \x20         netscb thread name    sid     open     read    write address\n\
         c000000011f2a028 sqlexec        812 09:14:02 10:31:44 10:31:44 ::ffff:10.20.1.5|51234|soctcp\n\
         \x20                                 05/14/2024\n\
         c000000011f4c4a8 sqlexec        815 09:20:17 10:31:40 10:31:41 10.20.1.13|40022|soctcp\n\
         \x20                                 05/14/2024\n",
    );
    assert_eq!(ntt["unparsed"], serde_json::json!([]), "{ntt}");
    assert_eq!(ntt["threads"][0]["client"]["host"], "10.20.1.5");
    assert_eq!(ntt["threads"][1]["client"]["host"], "10.20.1.13");

    let ses = json(
        "onstat-g-ses",
        "session                                      #RSAM    total      used       dynamic\n\
         id       user     tty      pid      hostname threads  memory     memory     explain\n\
         812      appsrv   -        4321     ::ffff:10.20.1.5 1 73728      64512      off\n\
         813      appsrv   -        4322     db02     1        73728      64512      off\n",
    );
    let hosts: Vec<_> = ses["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| s["hostname"].clone())
        .collect();
    assert_eq!(hosts, [Value::from("10.20.1.5"), Value::from("db02")]);
}

// 6. Numbers typed as strings.

/// Every value in every fixture's JSON that is a decimal number is a JSON number, except the
/// columns that are hex (addresses, flags, partnums, rowids, keys: printed in hex, read in
/// hex) or words that may look like numbers (versions, names, times).
#[test]
fn numeric_columns_are_json_numbers() {
    fn walk(v: &Value, path: &str, found: &mut Vec<String>) {
        match v {
            Value::Object(m) => m
                .iter()
                .for_each(|(k, v)| walk(v, &format!("{path}.{k}"), found)),
            Value::Array(a) => a.iter().for_each(|v| walk(v, &format!("{path}[]"), found)),
            Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
                found.push(format!("{path} = {s:?}"))
            }
            _ => {}
        }
    }
    // Columns that are hex as printed (a hex word of digits only looks decimal).
    let hex = [
        "address",
        "flags",
        "memaddr",
        "pgflgs",
        "tcb",
        "addr",
        "netscb",
        "control_block",
        "key",
        "rowid",
        "tblsnum",
        "tblnum",
        "rstcb",
        "wait",
        "owner",
        "wtlist",
        "lklist",
        "waiter",
        "waiters[]",
        "userthread",
        "xflgs",
    ];
    // Words: a version (`9.28`), a tty name.
    let words = ["fe_version", "tty", "name", "user"];
    let mut found = Vec::new();
    let root = crate::common::fixtures_dir();
    for dir in std::fs::read_dir(&root).expect("fixtures").flatten() {
        let dname = dir.file_name().to_string_lossy().to_string();
        for f in std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let fname = f.file_name().to_string_lossy().to_string();
            if !fname.ends_with(".txt") {
                continue;
            }
            let Some(k) = crate::fixtures_all::kind_for(&dname, &fname) else {
                continue;
            };
            let text = std::fs::read_to_string(f.path()).expect("read");
            if let Ok(v) = k.parse_to_json(&text) {
                let mut here = Vec::new();
                walk(&v, "", &mut here);
                found.extend(
                    here.into_iter()
                        .filter(|p| {
                            let field = p.split(" = ").next().unwrap_or("");
                            let last = field.rsplit('.').next().unwrap_or("");
                            !hex.contains(&last) && !words.contains(&last)
                        })
                        .map(|p| format!("{dname}/{fname}: {p}")),
                );
            }
        }
    }
    assert!(
        found.is_empty(),
        "numbers typed as strings:\n{}",
        found.join("\n")
    );
}

#[test]
fn onstat_s_lock_and_settings_are_numbers() {
    let s = json(
        "onstat-s",
        &fixture("onstat-s/hcl-14.10-adr-0606-doc-blocked-ckpt.txt"),
    );
    assert!(s["latches"][0]["lock"].is_u64(), "{}", s["latches"][0]);
    let dri = json(
        "onstat-g-dri",
        &fixture("onstat-g-dri/hcl-14.10-adr-0527-doc.txt"),
    );
    assert!(
        dri["settings"]["DRINTERVAL"].is_u64(),
        "{}",
        dri["settings"]
    );
    let ntt = json(
        "onstat-g-ntt",
        &fixture("onstat-g-ntt/oninit-onstat-g-ntt-truncated.txt"),
    );
    let client = ntt["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .find_map(|t| t["client"].as_object())
        .expect("a client");
    assert!(client["port"].is_u64(), "{client:?}");
}

// 7. `numactl -H` copied from a mail or a ticket.

#[test]
fn numactl_wrapped_cpu_lists_and_spaced_free_lines() {
    let wrapped = json(
        "numactl-H",
        &fixture("numactl-H/ifxtop-constructed-hadoop-doc-wrapped-in-a-ticket.txt"),
    );
    let real = json(
        "numactl-H",
        &fixture("numactl-H/hadoop-yarn-numa-doc-2node-96cpu.txt"),
    );
    assert_eq!(wrapped["unparsed"], serde_json::json!([]), "{wrapped}");
    assert_eq!(wrapped["nodes"], real["nodes"]);
    assert_eq!(wrapped["distances"], real["distances"]);
    let cpus = |n: usize| wrapped["nodes"][n]["cpus"].as_array().map(Vec::len);
    assert_eq!((cpus(0), cpus(1)), (Some(48), Some(48)));
    assert_eq!(wrapped["nodes"][1]["free_mb"], 185_914);
    // A line of numbers after anything but a cpu list is not taken for cpus.
    let stray = json(
        "numactl-H",
        "available: 1 nodes (0)\nnode 0 cpus: 0 1\nnode 0 size: 100 MB\n2 3\n",
    );
    assert_eq!(stray["nodes"][0]["cpus"], serde_json::json!([0, 1]));
    assert_eq!(stray["unparsed"][0]["line"], 4);
    // A terminal narrower than the line cut a number in two: 23 read whole, never 2 and 3.
    let cut = json(
        "numactl-H",
        "available: 1 nodes (0)\nnode 0 cpus: 20 21 22 2\n3 24 25\nnode 0 size: 100 MB\n",
    );
    assert_eq!(
        cut["nodes"][0]["cpus"],
        serde_json::json!([20, 21, 22, 23, 24, 25])
    );
    assert_eq!(cut["unparsed"], serde_json::json!([]), "{cut}");
    // Cut between two numbers, as a mail wraps it: read apart.
    let apart = json(
        "numactl-H",
        "available: 1 nodes (0)\nnode 0 cpus: 20 21 22\n23 24 25\nnode 0 size: 100 MB\n",
    );
    assert_eq!(
        apart["nodes"][0]["cpus"],
        serde_json::json!([20, 21, 22, 23, 24, 25])
    );
    // Both readings ascending (5 6 7 80, or 5 67 80): not guessed, the line said unparsed.
    let either = json(
        "numactl-H",
        "available: 1 nodes (0)\nnode 0 cpus: 5 6\n7 80\nnode 0 size: 100 MB\n",
    );
    assert_eq!(either["nodes"][0]["cpus"], serde_json::json!([5, 6]));
    assert_eq!(either["unparsed"][0]["line"], 3, "{either}");
}

// 8. Kind names as the command is typed.

#[test]
fn kinds_are_named_as_the_command_is_typed() {
    let x_upper = fixture("onstat-X/ifxtop-seed-buffer-waits-4-pools.txt");
    let x_lower = fixture("onstat-x-txn/ifxtop-single-line-header-no-rb-time.txt");
    assert!(json("onstat-X", &x_upper)["pools"].is_array());
    assert!(json("onstat-x", &x_lower)["transactions"].is_array());
    assert_eq!(
        json("onstat-x-txn", &x_lower),
        json("onstat-x", &x_lower),
        "the old name stays an alias"
    );
    // `onstat-x` once meant `-X`: given `-X` output it says which kind to use.
    for rel in [
        "onstat-X/ifxtop-seed-buffer-waits-4-pools.txt",
        "onstat-X/oninit-onstat-X-two-pools.txt",
        "onstat-X/hcl-onedb-2.0-adr-0612-indented.txt",
    ] {
        let e = kind("onstat-x")
            .parse_to_json(&fixture(rel))
            .expect_err("-X output is not -x output");
        assert!(
            e.to_string()
                .contains("this looks like `onstat -X` output: use kind onstat-X"),
            "{rel}: {e}"
        );
    }
    // Output of neither says nothing of `-X`.
    let e = kind("onstat-x")
        .parse_to_json(
            "Userthreads\naddress flags sessid user tty wait tout locks nreads nwrites\n",
        )
        .expect_err("-u output");
    assert!(!e.to_string().contains("onstat-X"), "{e}");
    for (typed, name) in [
        ("numactl-H", "numactl-H"),
        ("numactl-h", "numactl-H"),
        ("onstat-B", "onstat-b"),
        ("onstat-g-BTH", "onstat-g-bth"),
        ("onstat-D", "onstat-D"),
        ("onstat-d", "onstat-d"),
    ] {
        assert_eq!(kind(typed).name, name, "{typed}");
    }
    assert!(ifxtop::source::Kind::from_name("ONSTAT-X").is_none());
}

/// The other commands a ticket pastes (`netstat`, `ss`, `oncheck -pe`, `numactl -H`): their
/// prompt line is skipped too, not listed as a line not understood.
#[test]
fn prompt_lines_before_the_os_commands_and_oncheck() {
    for (prompt, name, rel) in [
        (
            "[root@db01 ~]# netstat -Aan | grep 9088",
            "netstat",
            "netstat/ifxtop-aix-netstat-Aan.txt",
        ),
        (
            "$ ss -ant",
            "ss",
            "netstat/ss-github-netdata-2169-ss-ant.txt",
        ),
        (
            "informix@db01:~> oncheck -pe datadbs01",
            "oncheck-pe",
            "oncheck-pe/gbase8s-datadbs01-16k-two-chunks.txt",
        ),
        (
            "# numactl -H",
            "numactl-H",
            "numactl-H/hadoop-yarn-numa-doc-2node-96cpu.txt",
        ),
    ] {
        let real = fixture(rel);
        let expected = json(name, &real);
        let got = json(name, &format!("{prompt}\n{real}"));
        assert_eq!(got, expected, "{prompt:?} before {rel}");
    }
}
