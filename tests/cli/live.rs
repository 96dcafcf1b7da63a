//! `ifxtop snapshot` on a live server: fake `onstat`, `oncheck` and `dbaccess` executables on
//! PATH stand in for the instance (a lock chain: 812 holds, 813 and 815 wait for it, 814 for 813).
//! One collection of every source, then the report; exit 0 when it is complete, 1 with the reason
//! when the server is off-line or an onstat fails.

use crate::common::fake_onstat::FakeOnstat;
use std::process::{Command, Output};

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

/// The lock chain's instance: every source ifxtop polls answers, grouped options as real onstat
/// prints them. `tweak` changes the fake before it is installed.
fn fake_server(tweak: impl FnOnce(&mut FakeOnstat)) -> FakeOnstat {
    let mut f = FakeOnstat::new();
    f.answer("-u", &format!("\n{U}"))
        .answer("-k", &format!("\n{K}"))
        .answer_fixture(
            "-X",
            "onstat-X/oninit-onstat-X-two-pools.txt",
            Some("Buffers (Access)"),
        )
        .answer_fixture("-p", "onstat-p/hcl-14.10-adr-0602-doc.txt", Some("Profile"))
        .answer_fixture(
            "-l",
            "onstat-l/hcl-onedb-2.0-adr-0598-doc.txt",
            Some("Physical Logging"),
        )
        .answer_fixture(
            "-s",
            "onstat-s/hcl-14.10-prf-186-doc-lru-bf.txt",
            Some("Latches with lock or userthread set"),
        )
        .answer_fixture(
            "-x",
            "onstat-x-txn/ifxtop-single-line-header-no-rb-time.txt",
            Some("Transactions"),
        )
        .answer_fixture("-g con", "onstat-g-con/oninit-onstat-g-con.txt", None)
        .answer_fixture(
            "-g ath",
            "onstat-g-ath/oninit-onstat-g-ath-truncated.txt",
            None,
        )
        .answer_fixture("-g cpu", "onstat-g-cpu/oninit-onstat-g-cpu-cut.txt", None)
        // The session list (`-g ses` exactly: `-g ses 812` is another answer).
        .answer_fixture("-g ses", "onstat-g-ses/ibm-kc-12.10-adr-0574.txt", None)
        .answer_fixture(
            "-g ntt",
            "onstat-g-ntt/oninit-onstat-g-ntt-truncated.txt",
            None,
        )
        .answer_fixture("-g sql 812", "onstat-g-sql/ifxtop-sql-812.txt", None)
        .answer_fixture("-g pqs 812", "onstat-g-pqs/ifxtop-pqs-812.txt", None)
        .answer_fixture(
            "-g glo",
            "onstat-g-glo/hcl-14.10-adr-0533-doc-truncated.txt",
            None,
        )
        .answer_fixture("-g rea", "onstat-g-rea/ifxtop-12.10-cpu-queue.txt", None)
        .answer_fixture(
            "-g lmx",
            "onstat-g-lmx/ifxtop-12.10-x86-three-waiters-no-holder.txt",
            None,
        )
        .answer_fixture(
            "-g wmx",
            "onstat-g-wmx/ifxtop-12.10-x86-three-waiters-no-holder.txt",
            None,
        )
        .answer_fixture("-g seg", "onstat-g-seg/ifxtop-64-bit-locked-vx-m.txt", None)
        .answer_fixture(
            "-D",
            "onstat-D/ifxtop-16-digit-five-spaces-prim.txt",
            Some("Dbspaces"),
        )
        .answer_fixture(
            "-g iof",
            "onstat-g-iof/ifxtop-four-chunks-kaio-temp-file.txt",
            None,
        )
        .answer_fixture(
            "-g tpf",
            "onstat-g-tpf/ifxtop-all-threads-one-fills-the-log.txt",
            None,
        )
        .answer_fixture(
            "-g ckp",
            "onstat-g-ckp/ifxtop-20-checkpoints-5-blocking.txt",
            None,
        );
    f.oncheck_fixture("oncheck-pe/ifxtop-chunks-of-seed-onstat-X.txt");
    f.dbaccess_tables("1048837|stores:'informix'.customer\n1048838|stores:'informix'.orders\n");
    tweak(&mut f);
    f.install();
    f
}

fn snapshot(f: &FakeOnstat, args: &[&str]) -> Output {
    let path = f.path();
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

#[test]
fn a_live_snapshot_collects_every_source_once_and_reports() {
    let f = fake_server(|_| {});
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
    let log = f.calls();
    // The options that print no `-g` table run as one onstat, each once (-u twice: its rates
    // need two samples); the `-g` ones alone.
    let grouped = log
        .lines()
        .find(|l| l.starts_with("onstat -u -X -k "))
        .unwrap_or_else(|| panic!("one grouped call:\n{log}"));
    for opt in ["-p", "-l", "-s", "-x"] {
        assert!(grouped.contains(&format!(" {opt} ")), "{grouped}");
    }
    for cmd in [
        "onstat -g con ",
        "onstat -g ath ",
        "onstat -g glo ",
        "onstat -g ckp ",
    ] {
        assert!(log.contains(cmd), "{cmd} never ran:\n{log}");
    }
    assert!(log.contains("onstat -g sql 812 "), "the head's SQL:\n{log}");
    // And the plan of the query it runs, under its SQL.
    assert!(
        log.contains("onstat -g pqs 812 "),
        "the head's plan:\n{log}"
    );
    assert!(
        stdout.contains("       plan: scan  next  1 rows  0.02s"),
        "{stdout}"
    );
    assert!(log.contains("INFORMIXSERVER=ol_test"), "{log}");
    // Once each, twice for the sources whose rates need two samples: the 1 s ones and the chunk
    // page counts (`-D`, in the grouped call every 5 s, asked at the next tick by a snapshot),
    // so the report waits about a second; not a polling loop.
    let runs = |cmd: &str| log.lines().filter(|l| l.starts_with(cmd)).count();
    assert!((2..=8).contains(&runs("onstat -u")), "{log}");
    assert_eq!(
        log.lines().filter(|l| l.contains(" -D ")).count(),
        2,
        "{log}"
    );
    // The second `-D` rides in the very next grouped call, not five calls later.
    let grouped: Vec<&str> = log.lines().filter(|l| l.starts_with("onstat -u")).collect();
    assert!(
        grouped.len() >= 2 && grouped[..2].iter().all(|l| l.contains(" -D ")),
        "{log}"
    );
    // The fixture's onstat -u has lock waiters: onstat -k joins every grouped call from then on
    // (no process of its own), so each waiter's lock holder is read at the moment of its wait.
    assert!(
        log.lines()
            .filter(|l| l.starts_with("onstat -u"))
            .all(|l| l.contains(" -k ")),
        "{log}"
    );
    assert_eq!(
        log.lines().filter(|l| l.contains(" -k ")).count(),
        runs("onstat -u"),
        "{log}"
    );
    assert_eq!(runs("onstat -g iof"), 1, "{log}");
    assert_eq!(runs("onstat -g glo"), 2, "{log}");
    // A standard server (no role in its banner): no replication command at all.
    for ha in ["-g cluster", "-g rss", "-g sds", "-g dri"] {
        assert_eq!(runs(&format!("onstat {ha}")), 0, "{log}");
    }
    assert_eq!(runs("oncheck -pe"), 1, "{log}");
    // 12.10 has no onstat -g bth (14.10+): it is not run at all.
    assert_eq!(runs("onstat -g bth"), 0, "{log}");
}

/// A report names a lock's holder only from an `onstat -k` read at the moment of the waiter's
/// `onstat -u`. Here the first call's `-u` shows no lock waits, so the second call (the one
/// whose `-u` shows them) has no `-k`: at that moment the holders cannot be named. The report
/// waits for the next moment, whose call has `-k` (asked for by the lock waits), and names
/// them, rather than say "holder unknown" a second before it could know.
#[test]
fn a_report_waits_for_a_moment_at_which_it_can_name_the_lock_holders() {
    let calm = U
        .replace("L-BP---", "--BP---")
        .replace("L--P---", "---P---")
        .replace("44a1b000", "0")
        .replace("44a1b2c8", "0");
    let f = fake_server(|f| {
        f.answer_sequence("-u", &[&format!("\n{calm}"), &format!("\n{U}")]);
    });
    let out = snapshot(&f, &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    let log = f.calls();
    let grouped: Vec<&str> = log.lines().filter(|l| l.starts_with("onstat -u")).collect();
    // The case as set up: `-k` in the first call (due at start), not in the second.
    assert!(
        grouped.len() >= 2 && grouped[0].contains(" -k ") && !grouped[1].contains(" -k "),
        "{log}"
    );
    assert!(
        stdout.contains("blocked by sid 813, head blocker sid 812"),
        "{stdout}\n{log}"
    );
    assert!(!stdout.contains("holder unknown"), "{stdout}");
    // The moment it named them from is the third call's, and it waited no longer.
    assert!(grouped.len() >= 3 && grouped[2].contains(" -k "), "{log}");
    assert!(grouped.len() <= 6, "{log}");
}

#[test]
fn a_live_snapshot_as_json_names_time_host_and_server() {
    let f = fake_server(|_| {});
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
    // The CPU VPs' load is known (two `onstat -g glo`, the second at the next tick): without
    // it the findings could not judge a saturated CPU.
    let cpu = v["vps"]
        .as_array()
        .expect("vps")
        .iter()
        .find(|vp| vp["class"] == "cpu")
        .expect("the CPU VPs");
    assert!(cpu["busy_pct"].is_number(), "{cpu}");
    // What each source cost in output: `onstat -g con` read as many bytes a call as the fake
    // prints for it (this fake has no interactive mode: one call per option).
    let con = v["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .find(|s| s["source"] == "onstat -g con")
        .expect("onstat -g con");
    let printed = Command::new("sh")
        .args(["-c", "onstat -g con"])
        .env("PATH", f.path())
        .output()
        .expect("the fake onstat");
    assert!(printed.stdout.len() > 400, "{}", text(&printed.stdout));
    assert_eq!(
        con["bytes_per_call"].as_f64(),
        Some(printed.stdout.len() as f64),
        "{con}"
    );
}

/// `sessions[].memory_bytes` from `onstat -g ses` (the list): a session it names has its pool's
/// total memory, one it does not (started since the list was read) has none, never 0; the
/// read's moment is `session_memory_at_s`.
#[test]
fn a_live_snapshot_as_json_gives_each_listed_session_its_memory() {
    let list =
        "\nsession                                      #RSAM    total      used       dynamic
id       user     tty      pid      hostname threads  memory     memory     explain
813      appuser  -        20551    app03    1        90112      61440      off
812      appuser  -        20544    app03    1        782336     735584     off
";
    let f = fake_server(|f| {
        f.answer("-g ses", list);
    });
    let out = snapshot(&f, &["--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(v["session_memory_at_s"].is_number(), "{v}");
    let sessions = v["sessions"].as_array().expect("sessions");
    let of = |sid: u64| {
        sessions
            .iter()
            .find(|s| s["sessid"] == sid)
            .unwrap_or_else(|| panic!("session {sid}: {}", v["sessions"]))
    };
    assert_eq!(of(812)["memory_bytes"], 782_336);
    assert_eq!(of(812)["memory_used_bytes"], 735_584);
    assert_eq!(of(813)["memory_bytes"], 90_112);
    for sid in [814, 815] {
        assert_eq!(of(sid)["memory_bytes"], serde_json::Value::Null, "{sid}");
    }
}

#[test]
fn an_off_line_server_is_a_failed_snapshot_that_says_so() {
    let off = "echo; echo 'shared memory not initialized for INFORMIXSERVER '\"'\"'ol_test'\"'\"''";
    let f = fake_server(|f| {
        f.override_call("*", &format!("{off}; exit 255"));
    });
    let out = snapshot(&f, &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("off-line"), "{stderr}");
}

#[test]
fn a_failing_onstat_makes_the_snapshot_incomplete() {
    let f = fake_server(|f| {
        // Alone it fails; grouped, onstat fails the whole call (the other options then run
        // alone and answer).
        f.forget("-X");
        f.override_call("-X", "echo 'onstat: permission denied' >&2; exit 1");
    });
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
    let f = fake_server(|_| {});
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
    let f = fake_server(|_| {});
    let out = snapshot(&f, &["--at", "10"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// Several instances on one host (`--server a,b`): one report each, collected side by side;
/// the one that is off-line is said and makes the exit code 1, the other is reported in full.
#[test]
fn a_snapshot_of_two_instances_reports_each_and_says_which_failed() {
    let f = fake_server(|f| {
        f.override_call(
            "*",
            "if [ \"$INFORMIXSERVER\" = ol_down ]; then \
             echo \"shared memory not initialized for INFORMIXSERVER 'ol_down'\"; exit 255; fi",
        );
    });
    let out = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(["snapshot", "--server", "ol_test,ol_down", "--port", "9088"])
        .args(["--format", "json"])
        .env("PATH", f.path())
        .env("HOME", &f.home)
        .env("XDG_CACHE_HOME", f.home.join("cache"))
        .env_remove("INFORMIXSERVER")
        .output()
        .expect("ifxtop runs");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("ol_down: the server is off-line"),
        "{stderr}"
    );
    assert!(!stderr.contains("ol_test:"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let all = v["instances"].as_array().expect("instances");
    assert_eq!(all.len(), 2, "{v}");
    assert_eq!(all[0]["instance"], "ol_test");
    assert_eq!(all[1]["instance"], "ol_down");
    let heads: Vec<u64> = all[0]["heads"]
        .as_array()
        .expect("heads")
        .iter()
        .filter_map(|h| h["sid"].as_u64())
        .collect();
    assert_eq!(heads, vec![812]);
    assert!(all[1]["server"]["offline"]
        .as_str()
        .is_some_and(|m| m.contains("ol_down")));
    let log = f.calls();
    assert!(log.contains("INFORMIXSERVER=ol_test"), "{log}");
    assert!(log.contains("INFORMIXSERVER=ol_down"), "{log}");
}

/// `--demo-instances 2`: two simulated instances, the second 300 s further on its timeline and
/// on a host of its own; one report each in `instances`.
#[test]
fn a_snapshot_of_two_demo_instances() {
    let out = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(["snapshot", "--demo", "--demo-instances", "2", "--at", "290"])
        .args(["--format", "json"])
        .env_remove("INFORMIXSERVER")
        .output()
        .expect("ifxtop runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let all = v["instances"].as_array().expect("instances");
    let got: Vec<(&str, &str, &str)> = all
        .iter()
        .map(|s| {
            (
                s["instance"].as_str().unwrap_or_default(),
                s["host"].as_str().unwrap_or_default(),
                s["time"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("ol_demo", "db01-demo", "2026-11-22T13:34:50Z"),
            ("ol_demo2", "db02-demo", "2026-11-22T13:39:50Z"),
        ]
    );
    // The first is in its lock chain (812 the head blocker); the second is past it: no lock
    // waiter, and only the instant mutex holders of a busy server block anyone.
    assert_eq!(all[0]["heads"][0]["sid"], 812, "{}", all[0]["heads"]);
    let waits = |s: &serde_json::Value, reason: &str| {
        s["waiters"]
            .as_array()
            .map_or(0, |w| w.iter().filter(|w| w["reason"] == reason).count())
    };
    assert_eq!(waits(&all[0], "lock"), 3, "{}", all[0]["waiters"]);
    assert_eq!(waits(&all[1], "lock"), 0, "{}", all[1]["waiters"]);
    let heads = all[1]["heads"].as_array().expect("heads");
    assert!(
        heads.iter().all(|h| h["blocked"] == 1 && h["sid"] != 812),
        "{heads:?}"
    );
}

/// `snapshot` as a child process, killed and failed if it has not ended within `secs`.
fn snapshot_within(f: &FakeOnstat, args: &[&str], secs: u64) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .arg("snapshot")
        .args(["--server", "ol_test", "--port", "9088"])
        .args(args)
        .env("PATH", f.path())
        .env("HOME", &f.home)
        .env("XDG_CACHE_HOME", f.home.join("cache"))
        .env_remove("INFORMIXSERVER")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ifxtop runs");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < until {
        if let Ok(Some(_)) = child.try_wait() {
            return child.wait_with_output().expect("output");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    let out = child.wait_with_output().expect("output");
    panic!(
        "ifxtop snapshot {args:?} still running after {secs}s: {}",
        text(&out.stderr)
    );
}

/// `--extents` must name a regular file: a FIFO without a writer (whose read never ends),
/// `/dev/zero` (which never ends either) and a directory are refused at once, by name.
#[test]
fn extents_that_are_not_a_regular_file_are_refused_at_once() {
    let f = fake_server(|_| {});
    let fifo = f.home.join("pe.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo")
        .success());
    let dir = f.home.display().to_string();
    for (file, says) in [
        (fifo.display().to_string(), "a FIFO"),
        ("/dev/zero".to_string(), "a character device"),
        (dir, "a directory"),
    ] {
        let out = snapshot_within(&f, &["--extents", &file], 20);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {stderr}");
        assert!(
            stderr.contains(&format!("--extents {file}: {says}")),
            "{file}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{file}: a report was printed");
    }
}

/// An onstat that prints forever (`exec yes '<valid row>'`) is killed at the output cap: the
/// report says so (exit 1), the other sources are still reported.
#[test]
fn an_endless_onstat_is_cut_at_the_output_cap() {
    let f = fake_server(|f| {
        f.override_call(
            "-g con",
            "printf '\\nIBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 1 days \
             00:00:01 -- 1000 Kbytes\\n\\nConditions with waiters:\\n'; \
             exec yes '44a1b000 44a1b000 netnorm 57 1'",
        );
    });
    let out = snapshot_within(&f, &["--max-output-mb", "2"], 60);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("onstat -g con: output exceeded 2 MB (killed)"),
        "{stderr}"
    );
    assert!(stdout.starts_with("ifxtop snapshot "), "{stdout}");
}

/// A signal ends `snapshot` at once, and the onstat it waits for goes with it, grandchildren
/// included (a command runs in its own process group, which the terminal's Ctrl-C no longer
/// reaches: ifxtop kills it).
#[test]
fn a_signal_ends_a_snapshot_and_leaves_no_onstat_behind() {
    for (signal, code) in [("INT", 130), ("TERM", 143), ("HUP", 129), ("QUIT", 131)] {
        let marker = format!("ifxtop-cli-{signal}-{}", std::process::id());
        let f = fake_server(|f| {
            f.override_call(
                "-g con",
                &format!(
                    "bash -c 'exec -a {marker}-grandchild sleep 1000' & \
                     exec bash -c 'exec -a {marker} sleep 1000'"
                ),
            );
        });
        let child = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
            .args(["snapshot", "--server", "ol_test", "--port", "9088"])
            .env("PATH", f.path())
            .env("HOME", &f.home)
            .env("XDG_CACHE_HOME", f.home.join("cache"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("ifxtop runs");
        let pid = child.id().to_string();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while crate::common::processes_with(&marker).len() < 2 {
            assert!(
                std::time::Instant::now() < until,
                "{signal}: the hanging onstat never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .expect("kill")
            .success());
        let out = child.wait_with_output().expect("ends");
        assert_eq!(
            out.status.code(),
            Some(code),
            "{signal}: {}",
            text(&out.stderr)
        );
        let mut left = crate::common::processes_with(&marker);
        for _ in 0..50 {
            if left.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
            left = crate::common::processes_with(&marker);
        }
        assert!(left.is_empty(), "{signal}: left behind {left:?}");
    }
}

fn ash(f: &FakeOnstat, args: &[&str]) -> std::process::Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ifxtop"));
    c.arg("ash")
        .args(["--server", "ol_test", "--port", "9088", "--format", "json"])
        .args(["--group", "class,head_blocker,object"])
        .args(args)
        .env("PATH", f.path())
        .env("HOME", &f.home)
        .env("XDG_CACHE_HOME", f.home.join("cache"))
        .env_remove("INFORMIXSERVER");
    c
}

/// `ifxtop ash` on a live server watches it for the window and prints its database time: the
/// lock chain's three waiters are lock time, held up by 812, on the customer table.
#[test]
fn a_live_ash_watches_for_the_window() {
    let f = fake_server(|_| {});
    let out = ash(&f, &["--window", "3"]).output().expect("ifxtop runs");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(v["read_from"], "live", "{v}");
    let samples = v["samples"].as_u64().unwrap_or_default();
    assert!((2..=4).contains(&samples), "{v}");
    let lock = v["by_class"]["lock"].as_f64().unwrap_or_default();
    assert!(
        lock >= 3.0 * (samples - 1) as f64,
        "three waiters each second: {v}"
    );
    let heads = v["top"]["head_blocker"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        heads
            .iter()
            .any(|h| h["key"] == "812" && h["sessions"] == 3),
        "{heads:?}"
    );
}

/// The window of a live `ifxtop ash` counts from the server's first `onstat -u` answer: a first
/// call slower than the whole window (an ssh connection, a loaded server) still gets the
/// window's samples, not none.
#[test]
fn a_live_ash_counts_its_window_from_the_first_answer() {
    let f = fake_server(|f| {
        let once = f.home.join("slow-once");
        f.override_call(
            "*",
            &format!(
                "case \" $* \" in *' -u '*) [ -e '{o}' ] || {{ touch '{o}'; sleep 4; }};; esac",
                o = once.display()
            ),
        );
    });
    let out = ash(&f, &["--window", "3"]).output().expect("ifxtop runs");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let samples = v["samples"].as_u64().unwrap_or_default();
    assert!((2..=4).contains(&samples), "{v}");
    assert!(
        f.home.join("slow-once").exists(),
        "the first -u call was slow"
    );
}

/// Ctrl-C (SIGINT) ends a live `ifxtop ash` early with the table so far, saying so; an off-line
/// server is an error that says so, never an empty table.
#[test]
fn a_live_ash_interrupted_prints_what_it_has_and_off_line_is_an_error() {
    let f = fake_server(|_| {});
    let child = ash(&f, &["--window", "600"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ifxtop runs");
    // Interrupted once its first `onstat -u` has been answered and sampled (this fake has no
    // interactive mode: one call per option, one run at a time, so a third `-u` begins a whole
    // tick after the first tick's options all ended: on a machine loaded with builds, the
    // second's start came before that tick's sample); a loaded machine takes longer to get
    // there than any fixed sleep allows.
    let calls_u = || {
        f.calls()
            .lines()
            .filter(|l| l.starts_with("onstat -u "))
            .count()
    };
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while calls_u() < 3 && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("a pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("signalled");
    let out = child.wait_with_output().expect("it ends");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let note = v["read_from_note"].as_str().unwrap_or_default();
    assert!(note.starts_with("interrupted after"), "{v}");
    assert!(v["samples"].as_u64().is_some_and(|n| n >= 1), "{v}");

    let off = "echo; echo 'shared memory not initialized for INFORMIXSERVER '\"'\"'ol_test'\"'\"''";
    let f = fake_server(|f| {
        f.override_call("*", &format!("{off}; exit 255"));
    });
    let out = ash(&f, &["--window", "1"]).output().expect("ifxtop runs");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("off-line"), "{stderr}");
    assert!(text(&out.stdout).is_empty());
}

/// A live snapshot without `--port` watches the ports of the config file's `ports`, as the
/// live screen does (its JSON said `"ports": []`).
#[test]
fn the_config_files_ports_are_a_live_snapshots_ports() {
    let f = fake_server(|_| {});
    let config = f.home.join("ifxtop.toml");
    std::fs::write(&config, "ports = [9099, 9100]\n").expect("config");
    let out = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(["snapshot", "--server", "ol_test", "--format", "json"])
        .arg("--config")
        .arg(&config)
        .env("PATH", f.path())
        .env("HOME", &f.home)
        .env("XDG_CACHE_HOME", f.home.join("cache"))
        .env_remove("INFORMIXSERVER")
        .output()
        .expect("ifxtop runs");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(v["ports"], serde_json::json!([9099, 9100]), "{stdout}");
    // `--port` still comes first.
    let out = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(["snapshot", "--server", "ol_test", "--port", "9088"])
        .args(["--format", "json", "--config"])
        .arg(&config)
        .env("PATH", f.path())
        .env("HOME", &f.home)
        .env("XDG_CACHE_HOME", f.home.join("cache"))
        .env_remove("INFORMIXSERVER")
        .output()
        .expect("ifxtop runs");
    let v: serde_json::Value = serde_json::from_str(&text(&out.stdout)).expect("json");
    assert_eq!(v["ports"], serde_json::json!([9088]));
}
