//! `ifxtop snapshot` on a live server: fake `onstat`, `oncheck` and `dbaccess` executables on
//! PATH stand in for the instance (a lock chain: 812 holds, 813 and 815 wait for it, 814 for 813).
//! One collection of every source, then the report; exit 0 when it is complete, 1 with the reason
//! when the server is off-line or an onstat fails.

use crate::common::fixtures_dir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BANNER: &str =
    "\nIBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 2 days 03:04:05 -- 2395548 Kbytes\n\n";

const U: &str = "Userthreads
address          flags   sessid   user     tty      wait             tout locks nreads   nwrites
4b4ad628         --BP--- 812      appuser  -        0                0    3     120      45
4b4adc40         L-BP--- 813      appuser  -        44a1b000         0    1     10       2
4b4ae258         L--P--- 814      batch    -        44a1b2c8         0    0     5        0
4b4ae870         L--P--- 815      report   -        44a1b000         0    0     7        0
 4 active, 128 total, 12 maximum concurrent
";

const K: &str = "Locks
address          wtlist           owner            lklist           type     tblsnum  rowid    key#/bsiz
44a1a000         0                4b4ad628         0                HDR+IX   100105   0            0
44a1b000         4b4adc40         4b4ad628         44a1a000         HDR+X    100105   68           0
44a1b100         0                4b4ad628         44a1b000         HDR+X    100105   69           0
44a1b2c8         4b4ae258         4b4adc40         0                HDR+X    100106   12           0
 4 active, 20000 total, 16384 hash buckets, 0 lock table overflows
";

/// A directory of fake executables; `overrides` replaces the answer to one onstat option set
/// (`"-X"`) with a shell snippet.
struct FakeServer {
    _dir: tempfile::TempDir,
    bin: PathBuf,
    home: PathBuf,
    log: PathBuf,
}

fn fake_server(overrides: &[(&str, &str)]) -> FakeServer {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = dir.path().join("bin");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::create_dir_all(&home).expect("home");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).expect("data");
    let put = |name: &str, text: &str| std::fs::write(data.join(name), text).expect("write");
    put("u", &format!("{BANNER}{U}"));
    put("k", &format!("{BANNER}{K}"));
    put("empty", BANNER);
    let fx = fixtures_dir();
    let copy = |name: &str, rel: &str| {
        std::fs::copy(fx.join(rel), data.join(name)).expect("fixture");
    };
    copy("sql812", "onstat-g-sql/ifxtop-sql-812.txt");
    copy("x", "onstat-X/oninit-onstat-X-two-pools.txt");
    copy("con", "onstat-g-con/oninit-onstat-g-con.txt");
    copy("ath", "onstat-g-ath/oninit-onstat-g-ath-truncated.txt");
    copy("ntt", "onstat-g-ntt/oninit-onstat-g-ntt-truncated.txt");
    copy("pe", "oncheck-pe/ifxtop-chunks-of-seed-onstat-X.txt");
    let log = dir.path().join("calls.log");
    let mut cases = String::new();
    for (opts, body) in overrides {
        cases.push_str(&format!("  \"{opts}\") {body} ;;\n"));
    }
    let d = data.display();
    let onstat = format!(
        "#!/bin/sh\necho \"onstat $* INFORMIXSERVER=$INFORMIXSERVER\" >> '{log}'\n\
         case \"$*\" in\n{cases}\
           \"-u\") cat '{d}/u' ;;\n\
           \"-k\") cat '{d}/k' ;;\n\
           \"-X\") cat '{d}/x' ;;\n\
           \"-g con\") cat '{d}/con' ;;\n\
           \"-g ath\") cat '{d}/ath' ;;\n\
           \"-g ntt\") cat '{d}/ntt' ;;\n\
           \"-g sql 812\") cat '{d}/sql812' ;;\n\
           *) cat '{d}/empty' ;;\n\
         esac\nexit 5\n",
        log = log.display()
    );
    let script = |name: &str, text: &str| {
        use std::os::unix::fs::PermissionsExt;
        let p = bin.join(name);
        std::fs::write(&p, text).expect("script");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    };
    script("onstat", &onstat);
    script(
        "oncheck",
        &format!(
            "#!/bin/sh\necho \"oncheck $*\" >> '{}'\ncat '{d}/pe'\n",
            log.display()
        ),
    );
    script(
        "dbaccess",
        "#!/bin/sh\ncat > /dev/null\necho '1048837|stores:'\"'\"'informix'\"'\"'.customer'\n\
         echo '1048838|stores:'\"'\"'informix'\"'\"'.orders'\n",
    );
    FakeServer {
        _dir: dir,
        bin,
        home,
        log,
    }
}

fn snapshot(f: &FakeServer, args: &[&str]) -> Output {
    let path = format!(
        "{}:{}",
        f.bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .arg("snapshot")
        .args(["--server", "ol_test", "--port", "9088"])
        .args(args)
        .env("PATH", path)
        .env("HOME", &f.home)
        .env("XDG_CACHE_HOME", f.home.join("cache"))
        .env_remove("INFORMIXSERVER")
        .output()
        .expect("ifxtop runs")
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

fn calls(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

#[test]
fn a_live_snapshot_collects_every_source_once_and_reports() {
    let f = fake_server(&[]);
    let out = snapshot(&f, &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("ifxtop snapshot 20") && first.contains("server ol_test"),
        "{stdout}"
    );
    assert!(first.contains("12.10.FC8 On-Line"), "{first}");
    // The chain, with the head blocker named, and its SQL collected for the report.
    assert!(
        stdout.contains("blocked by sid 813, head blocker sid 812"),
        "{stdout}"
    );
    let heads = stdout
        .split("HEAD BLOCKERS")
        .nth(1)
        .and_then(|h| h.lines().nth(2))
        .unwrap_or_default();
    assert!(
        heads.trim_start().starts_with("812 appuser")
            && heads.contains("update customer set balance"),
        "{stdout}"
    );
    let log = calls(&f.log);
    for cmd in [
        "onstat -u ",
        "onstat -X ",
        "onstat -k ",
        "onstat -g con ",
        "onstat -g ath ",
    ] {
        assert!(log.contains(cmd), "{cmd} never ran:\n{log}");
    }
    assert!(log.contains("onstat -g sql 812 "), "the head's SQL:\n{log}");
    assert!(log.contains("INFORMIXSERVER=ol_test"), "{log}");
    // Once each (twice for the 1 s sources, whose rates need two samples): not a polling loop.
    let runs = |cmd: &str| log.lines().filter(|l| l.starts_with(cmd)).count();
    assert!((2..=3).contains(&runs("onstat -u ")), "{log}");
    assert_eq!(runs("onstat -k "), 1, "{log}");
    assert_eq!(runs("oncheck -pe"), 1, "{log}");
}

#[test]
fn a_live_snapshot_as_json_names_time_host_and_server() {
    let f = fake_server(&[]);
    let out = snapshot(&f, &["--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(v["time"].as_str().is_some_and(|t| t.ends_with('Z')), "{v}");
    assert!(v["host"].is_string(), "{}", v["host"]);
    let heads: Vec<u64> = v["heads"]
        .as_array()
        .expect("heads")
        .iter()
        .filter_map(|h| h["sid"].as_u64())
        .collect();
    assert_eq!(heads, vec![812], "{}", v["heads"]);
    let s814 = v["waiters"]
        .as_array()
        .expect("waiters")
        .iter()
        .find(|w| w["sessid"] == 814)
        .expect("814 waits");
    assert_eq!(s814["blockers"], serde_json::json!([813, 812]));
}

#[test]
fn an_off_line_server_is_a_failed_snapshot_that_says_so() {
    let off = "echo; echo 'shared memory not initialized for INFORMIXSERVER '\"'\"'ol_test'\"'\"''";
    let f = fake_server(&[("-u", off), ("-X", off), ("-k", off), ("-g con", off)]);
    let out = snapshot(&f, &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("off-line"), "{stderr}");
}

#[test]
fn a_failing_onstat_makes_the_snapshot_incomplete() {
    let f = fake_server(&[("-X", "echo 'onstat: permission denied' >&2; exit 1")]);
    let out = snapshot(&f, &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("onstat -X") && stderr.contains("permission denied"),
        "{stderr}"
    );
    // What could be seen is still reported.
    assert!(stdout.contains("812"), "{stdout}");
}

#[test]
fn no_onstat_at_all_is_a_clear_failure() {
    let f = fake_server(&[]);
    std::fs::remove_file(f.bin.join("onstat")).expect("rm");
    let out = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(["snapshot", "--server", "ol_test"])
        .env("PATH", &f.bin)
        .env("HOME", &f.home)
        .env("XDG_CACHE_HOME", f.home.join("cache"))
        .output()
        .expect("ifxtop runs");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("onstat -u") && stderr.contains("not found"),
        "{stderr}"
    );
}

#[test]
fn at_is_refused_for_a_live_snapshot() {
    let f = fake_server(&[]);
    let out = snapshot(&f, &["--at", "10"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}
