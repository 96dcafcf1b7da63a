//! CLI tests of `ifxtop resolve`, run as a DBA would: `onstat -X | ifxtop resolve --extents pe -k 4`.
//!
//! The input is the `onstat -X` output quoted in the seed blog post (shared/seeds/000_*,
//! "Buffer waits"; the blog collapsed its whitespace). The extents file is HAND-MADE
//! (tests/fixtures/oncheck-pe/ifxtop-chunks-of-seed-onstat-X.txt) so that its chunks match.

use crate::common::fixtures_dir;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const SEED_ONSTAT_X: &str = "Buffers (Access)
address owner flags pagenum memaddr nslots pgflgs scount waiter

Buffer pool page size: 2048
14700 modified, 16777216 total, 16777216 hash buckets, 2048 buffer size

Buffer pool page size: 4096
2443cd7e8 ffffffffffffffff 80 25:1523486 cce17b000 101 2801 0 0
267ca4628 0 0 47:1570054 105c3c5000 122 2890 1 0
53980 modified, 8388608 total, 8388608 hash buckets, 4096 buffer size

Buffer pool page size: 8192
59577 modified, 8388608 total, 8388608 hash buckets, 8192 buffer size

Buffer pool page size: 16384
3784a8188 ffffffffffffffff 80 162:18904760 4baadf4000 248 890 0 0
37854d188 ffffffffffffffff 80 162:24581408 4baeff4000 248 890 0 0
378ead5e8 ffffffffffffffff 80 124:25597240 4beb010000 187 2801 0 0
378f781a8 ffffffffffffffff 80 124:25597376 4bf0128000 710 890 0 0
3798d3388 ffffffffffffffff 80 124:25597176 4c2bf34000 710 890 0 595236d428
3799321a8 ffffffffffffffff 80 162:13196672 4c2e528000 248 890 0 624d39d668
37a353128 ffffffffffffffff 80 124:25597840 4c6f258000 197 801 0 0
37a4cefe8 ffffffffffffffff 80 168:32233760 4c78a50000 399 890 0 0
37c485d28 ffffffffffffffff 80 264:13942672 4d439d8000 319 890 0 0
37c5b45c8 ffffffffffffffff 80 162:24158848 4d4b2dc000 193 2801 0 0
37c80f368 ffffffffffffffff 80 168:33303832 4d5a400000 303 890 0 0
37caf6ce8 0 10 124:25597160 4d6cd70000 710 890 1 0
37ceaab28 ffffffffffffffff 80 166:8227296 4d84898000 332 890 0 0
37ceba8e8 ffffffffffffffff 80 124:25597648 4d84ef0000 710 890 0 0
37d70f4a8 ffffffffffffffff 80 124:25597208 4dba408000 193 801 0 0
37d891088 ffffffffffffffff 80 162:26376432 4dc3e54000 248 890 0 0
37dc9abe8 58cc3c7eb8 80 144:18435488 4dddbd0000 193 2801 0 0
87962 modified, 13762560 total, 16777216 hash buckets, 16384 buffer size
";

fn extents() -> PathBuf {
    fixtures_dir().join("oncheck-pe/ifxtop-chunks-of-seed-onstat-X.txt")
}

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .arg("resolve")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start ifxtop: {e}"));
    if let Some(mut i) = child.stdin.take() {
        // The process may exit before reading (bad arguments): a failed write is fine then.
        let _ = i.write_all(stdin.as_bytes());
    }
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("ifxtop did not finish: {e}"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn with_extents(more: &[&str]) -> Vec<String> {
    let mut v = vec!["--extents".to_string(), extents().display().to_string()];
    v.extend(more.iter().map(|s| s.to_string()));
    v
}

fn run_with(more: &[&str], stdin: &str) -> Output {
    let args = with_extents(more);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&refs, stdin)
}

/// The `OBJECT,DBSPACE` appended to the input line holding `pagenum`, if any.
fn suffix_of<'a>(out: &'a str, pagenum: &str) -> Option<&'a str> {
    let line = out
        .lines()
        .find(|l| l.split(' ').nth(3) == Some(pagenum))
        .unwrap_or_else(|| panic!("no line with {pagenum} in:\n{out}"));
    line.split_once('\t').map(|(_, s)| s)
}

#[test]
fn seed_onstat_x_resolves_like_chunkpg_with_k4() {
    let out = run_with(&["-k", "4"], SEED_ONSTAT_X);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    crate::snap_text!("cli__resolve__seed_onstat_X_k4", &stdout);
    // Every input line comes back unchanged, in order.
    let unannotated: Vec<&str> = stdout
        .lines()
        .map(|l| l.split_once('\t').map_or(l, |(a, _)| a))
        .collect();
    assert_eq!(unannotated, SEED_ONSTAT_X.lines().collect::<Vec<_>>());
    // 4 KB chunk 25: base page 1523486 is 4 KB page 761743.
    assert_eq!(
        suffix_of(&stdout, "25:1523486"),
        Some("trading:'informix'.positions,data4k")
    );
    // 785027 is where `accounts` ends and `positions` starts: half-open, so positions only.
    assert_eq!(
        suffix_of(&stdout, "47:1570054"),
        Some("trading:'informix'.positions,data4k")
    );
    // 16 KB chunks: page / 8.
    assert_eq!(
        suffix_of(&stdout, "124:25597176"),
        Some("trading:'informix'.order_events,data16k")
    );
    assert_eq!(
        suffix_of(&stdout, "162:13196672"),
        Some("trading:'informix'.ix_trades_settled,idx16k")
    );
    assert_eq!(
        suffix_of(&stdout, "168:33303832"),
        Some("trading:'informix'.ix_order_events_acct,idx16k")
    );
    // A system-named index keeps its leading blank.
    assert_eq!(
        suffix_of(&stdout, "144:18435488"),
        Some("trading:'informix'. 121_45,data16k")
    );
    // A page in a FREE extent: no name, and a word on stderr that the map is stale.
    assert_eq!(suffix_of(&stdout, "264:13942672"), None);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("1 page(s) fell in FREE extents"),
        "{stderr}"
    );
    let annotated = stdout.lines().filter(|l| l.contains('\t')).count();
    assert_eq!(annotated, 18);
    let order_events = stdout
        .lines()
        .filter(|l| l.ends_with("order_events,data16k"))
        .count();
    assert_eq!(order_events, 7);
}

#[test]
fn without_k_the_first_chunk_page_field_is_used() {
    let with_k = run_with(&["-k", "4"], SEED_ONSTAT_X);
    let without = run_with(&[], SEED_ONSTAT_X);
    assert!(without.status.success());
    assert_eq!(text(&with_k.stdout), text(&without.stdout));
    // A line whose chunk:page sits elsewhere still resolves by default...
    let moved = "waiter 0 124:25597240 x\n";
    let out = run_with(&[], moved);
    assert_eq!(
        text(&out.stdout),
        "waiter 0 124:25597240 x\ttrading:'informix'.order_events,data16k\n"
    );
    // ...but not when -k points elsewhere.
    let out = run_with(&["-k", "4"], moved);
    assert_eq!(text(&out.stdout), moved);
}

#[test]
fn packed_hex_resolves_when_k_points_at_it() {
    // Chunk 25 (0x19 << 20), base page 0x100 = 256 -> 4 KB page 128 -> accounts.
    let line = "1a2b3c 0 0 1900100 5 890 0 0\r\n";
    let out = run_with(&["-k", "4"], line);
    assert_eq!(
        text(&out.stdout),
        "1a2b3c 0 0 1900100 5 890 0 0\ttrading:'informix'.accounts,data4k\r\n"
    );
    // Without -k only chunk:page fields are looked at.
    let out = run_with(&[], line);
    assert_eq!(text(&out.stdout), line);
}

#[test]
fn json_says_what_each_line_resolved_to_or_why_not() {
    let out = run_with(&["--json"], SEED_ONSTAT_X);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    let recs: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(recs.len(), SEED_ONSTAT_X.lines().count());
    let status = |s: &str| recs.iter().filter(|r| r["status"] == s).count();
    assert_eq!(
        (status("resolved"), status("free"), status("no_page")),
        (18, 1, 14)
    );
    let r = recs
        .iter()
        .find(|r| r["page"] == 25597176)
        .unwrap_or_else(|| panic!("no record for page 25597176"));
    assert_eq!(
        r["line"],
        "3798d3388 ffffffffffffffff 80 124:25597176 4c2bf34000 710 890 0 595236d428"
    );
    assert_eq!(r["field"], 4);
    assert_eq!(r["chunk"], 124);
    assert_eq!(r["page_in_chunk"], 3199647);
    assert_eq!(r["object"], "trading:'informix'.order_events");
    assert_eq!(r["dbspace"], "data16k");
    assert_eq!(r["kind"], "object");
    assert_eq!(r["database"], "trading");
    assert_eq!(r["owner"], "informix");
    assert_eq!(r["name"], "order_events");
    assert_eq!(
        (r["extent_offset"].as_u64(), r["extent_size"].as_u64()),
        (Some(3000053), Some(199700))
    );
    let free = recs
        .iter()
        .find(|r| r["status"] == "free")
        .unwrap_or_else(|| panic!("no free record"));
    assert_eq!(free["chunk"], 264);
    assert_eq!(free["object"], "FREE");
    crate::snap_text!("cli__resolve__seed_onstat_X_json", &stdout);
}

#[test]
fn base_page_size_changes_the_arithmetic() {
    let line = "378ead5e8 ffffffffffffffff 80 124:25597240 4beb010000 187 2801 0 0\n";
    // With 4 KB base pages the same number is twice as far into the chunk: past its end.
    let out = run_with(&["--base-page-kb", "4", "--json"], line);
    let r: serde_json::Value =
        serde_json::from_str(text(&out.stdout).trim()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r["status"], "unmapped");
    assert_eq!(r["page_in_chunk"], 6399310);
    let out = run_with(&["--json"], "x 0 0 999:1 y\n");
    let r: serde_json::Value =
        serde_json::from_str(text(&out.stdout).trim()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r["status"], "no_chunk");
    assert_eq!(r["chunk"], 999);
}

#[test]
fn bad_extents_files_and_arguments_fail_with_one_line() {
    let out = run(&["--extents", "/nonexistent/pe.txt"], "");
    assert_eq!(out.status.code(), Some(1));
    let e = text(&out.stderr);
    assert!(
        e.starts_with("ifxtop resolve: cannot read /nonexistent/pe.txt"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1);

    let not_pe = fixtures_dir().join("onstat-X/oninit-onstat-X-two-pools.txt");
    let out = run(&["--extents", &not_pe.display().to_string()], "");
    assert_eq!(out.status.code(), Some(2));
    let e = text(&out.stderr);
    assert!(e.contains("is not oncheck -pe output: line"), "{e}");
    assert!(e.contains("Chunk Pathname"), "{e}");
    assert_eq!(e.lines().count(), 1);
    assert!(out.stdout.is_empty());

    let out = run_with(&["-k", "0"], "");
    assert_eq!(out.status.code(), Some(2));

    // An abridged report parses but lists no extents: say so, print the lines unchanged.
    let abridged = fixtures_dir().join("oncheck-pe/pl-student-report-abridged-by-author.txt");
    let out = run(&["--extents", &abridged.display().to_string()], "a 1:5\n");
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), "a 1:5\n");
    assert!(text(&out.stderr).contains("lists no extents"));
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let args = with_extents(&[]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .arg("resolve")
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start ifxtop: {e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    let feeder = std::thread::spawn(move || {
        let line = "3784a8188 ffffffffffffffff 80 162:18904760 4baadf4000 248 890 0 0\n";
        for _ in 0..200_000 {
            if stdin.write_all(line.as_bytes()).is_err() {
                break;
            }
        }
    });
    // Read one line's worth, then hang up, as `| head -1` does.
    let mut stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let mut first = [0u8; 64];
    let n = stdout.read(&mut first).unwrap_or(0);
    assert!(n > 0);
    drop(stdout);
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("ifxtop did not finish: {e}"));
    let _ = feeder.join();
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(text(&out.stderr), "");
}

/// The seed's own script on the same input: identical wherever its known faults do not apply,
/// and each place they apply is named here.
#[test]
fn seed_onstat_x_through_the_reconstructed_chunkpg() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tools/chunkpg.pl");
    let mut child = Command::new("perl")
        .args([script, "-k", "4"])
        .env("CHUNKPG_ONCHECK_PE", extents())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("perl is needed here (it is in every Debian base image): {e}"));
    if let Some(mut i) = child.stdin.take() {
        i.write_all(SEED_ONSTAT_X.as_bytes())
            .unwrap_or_else(|e| panic!("write to perl: {e}"));
    }
    let perl = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("perl did not finish: {e}"));
    assert!(perl.status.success());
    let perl = text(&perl.stdout);
    let ours = text(&run_with(&["-k", "4"], SEED_ONSTAT_X).stdout);
    let mut differ = Vec::new();
    for (p, o) in perl.lines().zip(ours.lines()) {
        // chunkpg ends every line with a TAB, resolved or not.
        let p = p.strip_suffix('\t').unwrap_or(p);
        if p != o {
            let page = o.split(' ').nth(3).unwrap_or("");
            differ.push((
                page.to_string(),
                p.split_once('\t').map(|x| x.1.to_string()),
            ));
        }
    }
    let d = |page: &str, perl: Option<&str>| (page.to_string(), perl.map(str::to_string));
    assert_eq!(
        differ,
        vec![
            // Chunk 47 is data4k's last chunk: chunkpg names the next dbspace. Its page 785027
            // is where `accounts` ends: the inclusive end matches both extents.
            d(
                "47:1570054",
                Some("trading:'informix'.accounts,data16ktrading:'informix'.positions,data16k")
            ),
            // Chunk 168 is idx16k's last chunk: the next dbspace's name again.
            d(
                "168:32233760",
                Some("trading:'informix'.ix_trades_settled,hist16k")
            ),
            d(
                "168:33303832",
                Some("trading:'informix'.ix_order_events_acct,hist16k")
            ),
            // A system-named index (leading blank) never matches chunkpg's \w+ regex.
            d("144:18435488", None),
        ]
    );
    assert_eq!(perl.lines().count(), ours.lines().count());
}
