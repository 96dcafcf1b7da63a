//! Collector tests with fake `onstat` executables on PATH: ones that succeed, fail, print
//! garbage, hang past the timeout, or report the server off-line.

#[path = "../common/mod.rs"]
mod common;

use common::fixture_path;
use ifxtop::collect::{Ctx, SessionClock, Sinks};
use ifxtop::error::SourceError;
use ifxtop::parsers::onstat_u::OnstatU;
use ifxtop::parsers::Parsed;
use ifxtop::source::local::LocalRunner;
use ifxtop::source::{CommandRunner, Source};
use ifxtop::store::{Store, StoreSettings};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// A directory with an executable `onstat` running `body` (a bash script).
fn fake_onstat(body: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("onstat");
    std::fs::write(&path, format!("#!/usr/bin/env bash\n{body}\n")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let p = dir.path().to_path_buf();
    (dir, p)
}

/// PATH with the fake directory first, then the system's (for bash, cat, sleep).
fn path_with(dir: &Path) -> String {
    format!("{}:/usr/bin:/bin", dir.display())
}

fn runner(dir: &Path) -> LocalRunner {
    LocalRunner::new(Some("ol_test".into())).with_path(path_with(dir))
}

async fn run(r: &LocalRunner, source: &Source, timeout: Duration) -> Result<Parsed, SourceError> {
    let out = r.run(&source.request(), timeout).await?;
    source.parse(out)
}

#[tokio::test]
async fn a_working_onstat_is_parsed_and_gets_informixserver() {
    let (_d, dir) = fake_onstat(&format!(
        "[ \"$1\" = -u ] || exit 1\necho \"$INFORMIXSERVER\" > \"$(dirname \"$0\")/server\"\ncat {}\nexit 5",
        fixture_path("onstat-u/oninit-onstat-u.txt")
    ));
    let r = runner(&dir);
    let parsed = run(&r, &Source::OnstatU, Duration::from_secs(5))
        .await
        .expect("onstat -u parses");
    let Some(u) = parsed.get::<OnstatU>() else {
        panic!("wrong kind")
    };
    assert_eq!(u.threads.len(), 14);
    let server = std::fs::read_to_string(dir.join("server")).expect("script ran");
    assert_eq!(server.trim(), "ol_test");
}

#[tokio::test]
async fn off_line_server_is_reported_as_such() {
    let (_d, dir) = fake_onstat(
        "echo\necho \"shared memory not initialized for INFORMIXSERVER '$INFORMIXSERVER'\"\nexit 255",
    );
    let err = run(&runner(&dir), &Source::OnstatU, Duration::from_secs(5))
        .await
        .expect_err("off-line");
    assert_eq!(
        err,
        SourceError::Offline {
            message: "shared memory not initialized for INFORMIXSERVER 'ol_test'".into()
        }
    );
}

#[tokio::test]
async fn garbage_is_a_parse_error_naming_the_line() {
    let (_d, dir) = fake_onstat("echo 'Segmentation fault (core dumped) %%$#'\nexit 5");
    let err = run(&runner(&dir), &Source::OnstatU, Duration::from_secs(5))
        .await
        .expect_err("garbage");
    match err {
        SourceError::Parse(e) => assert_eq!(e.line, 1, "{e}"),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

/// The reliability test's cut outputs: the title only, the title and the column header, and a
/// 10 MB line after the title. Each is an incomplete `onstat -u` (no `N active, M total`
/// footer), never a server with no sessions.
#[tokio::test]
async fn a_cut_or_garbage_onstat_u_is_incomplete_not_empty() {
    let banner = "echo; echo 'IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 2 days 03:04:05 -- 2090332 Kbytes'; echo; echo Userthreads";
    let columns = "echo 'address          flags   sessid   user     tty      wait             tout locks nreads   nwrites'";
    let title = banner.to_string();
    let header = format!("{banner}; {columns}");
    let long = format!("{banner}; head -c 10000000 /dev/zero | tr '\\0' x; echo");
    let rows = "head -n 4 {u}".to_string();
    let u = fixture_path("onstat-u/oninit-onstat-u.txt");
    for body in [title, header, long, rows] {
        let (_d, dir) = fake_onstat(&format!("{}\nexit 5", body.replace("{u}", &u)));
        match run(&runner(&dir), &Source::OnstatU, Duration::from_secs(10)).await {
            Err(SourceError::Parse(_)) => {}
            Err(other) => panic!("{body}: expected a parse error, got {other:?}"),
            Ok(p) => panic!(
                "{body}: accepted as {} threads",
                p.get::<OnstatU>().map_or(0, |u| u.threads.len())
            ),
        }
    }
    // The whole output still parses.
    let (_d, dir) = fake_onstat(&format!("cat {u}\nexit 5"));
    assert!(run(&runner(&dir), &Source::OnstatU, Duration::from_secs(5))
        .await
        .is_ok());
}

#[tokio::test]
async fn a_failing_command_reports_its_exit_code_and_stderr() {
    let (_d, dir) = fake_onstat("echo 'onstat: permission denied' >&2\nexit 1");
    let err = run(&runner(&dir), &Source::OnstatU, Duration::from_secs(5))
        .await
        .expect_err("fails");
    assert_eq!(
        err,
        SourceError::Failed {
            code: 1,
            stderr: "onstat: permission denied".into()
        }
    );
}

#[tokio::test]
async fn a_hanging_onstat_is_killed_at_the_timeout() {
    let (_d, dir) = fake_onstat("echo $$ > \"$(dirname \"$0\")/pid\"\nexec sleep 30");
    let started = std::time::Instant::now();
    let err = run(&runner(&dir), &Source::OnstatU, Duration::from_millis(500))
        .await
        .expect_err("times out");
    assert_eq!(
        err,
        SourceError::Timeout {
            after: Duration::from_millis(500)
        }
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let pid = std::fs::read_to_string(dir.join("pid")).expect("script started");
    // kill_on_drop delivers SIGKILL when the timed-out future is dropped; give the kernel a
    // moment to reap it.
    let proc_dir = format!("/proc/{}", pid.trim());
    let mut gone = false;
    for _ in 0..50 {
        let state = std::fs::read_to_string(format!("{proc_dir}/stat")).unwrap_or_default();
        // Gone, or a zombie waiting for its reaper: either way no longer running.
        if state.is_empty() || state.split_whitespace().nth(2) == Some("Z") {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "the hung onstat ({proc_dir}) is still running");
}

#[tokio::test]
async fn a_missing_onstat_is_not_found() {
    let empty = tempfile::tempdir().expect("temp dir");
    let r = LocalRunner::new(None).with_path(empty.path().as_os_str().to_owned());
    let err = run(&r, &Source::OnstatU, Duration::from_secs(5))
        .await
        .expect_err("not found");
    assert_eq!(
        err,
        SourceError::NotFound {
            program: "onstat".into()
        }
    );
}

/// The collector loop keeps the last good data when a later poll fails, and says why.
#[tokio::test]
async fn a_failed_poll_keeps_the_last_good_data_marked_stale() {
    // First run succeeds, later runs fail: a counter file tells them apart.
    let (_d, dir) = fake_onstat(&format!(
        "c=\"$(dirname \"$0\")/count\"; n=$(cat \"$c\" 2>/dev/null || echo 0); echo $((n+1)) > \"$c\"\n\
         if [ \"$n\" = 0 ]; then cat {}; exit 5; fi\necho 'onstat: broken pipe' >&2; exit 1",
        fixture_path("onstat-u/ibm-kc-12.10-adref-0608.txt")
    ));
    let (tx, mut rx) = mpsc::channel(16);
    let (_itx, irx) = watch::channel(Duration::from_millis(100));
    let ctx = Ctx::new(
        Arc::new(runner(&dir)),
        SessionClock::start(),
        Sinks {
            updates: tx,
            raw: None,
        },
        irx,
    );
    let tasks = ifxtop::collect::spawn_polling(&ctx, vec![Source::OnstatU]);
    let mut store = Store::new(StoreSettings::default());
    for _ in 0..3 {
        let u = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("an update in time")
            .expect("collector alive");
        store.apply(u);
    }
    for t in tasks {
        t.abort();
    }
    let st = store.source(&Source::OnstatU).expect("source state");
    assert_eq!(st.runs, 3);
    assert_eq!(st.failures, 2);
    let Some(u) = st.last_ok.as_ref().and_then(|(_, p)| p.get::<OnstatU>()) else {
        panic!("last good data lost")
    };
    assert_eq!(u.threads.len(), 6);
    assert_eq!(
        st.failing(),
        Some(&SourceError::Failed {
            code: 1,
            stderr: "onstat: broken pipe".into()
        })
    );
}

/// Waits up to 5 s for every process holding `marker` to be gone; returns those left.
async fn left_behind(marker: &str) -> Vec<String> {
    for _ in 0..50 {
        let left = crate::common::processes_with(marker);
        if left.is_empty() {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    crate::common::processes_with(marker)
}

/// A wrapper (`sudo -u informix onstat`, a site script) whose own child hangs: the grandchild
/// is named `marker` (bash's `exec -a`), the wrapper hangs too.
fn wrapper_with_hung_grandchild(marker: &str) -> (tempfile::TempDir, PathBuf) {
    fake_onstat(&format!(
        "bash -c 'exec -a {marker}-grandchild sleep 1000' &\nexec -a {marker}-wrapper sleep 1000"
    ))
}

fn unique_marker(what: &str) -> String {
    format!("ifxtop-test-{what}-{}", std::process::id())
}

/// A timeout kills the command's whole process group, not only the wrapper it started.
#[tokio::test]
async fn a_timeout_kills_the_grandchildren_too() {
    let marker = unique_marker("timeout");
    let (_d, dir) = wrapper_with_hung_grandchild(&marker);
    let err = run(&runner(&dir), &Source::OnstatU, Duration::from_millis(700))
        .await
        .expect_err("times out");
    assert!(matches!(err, SourceError::Timeout { .. }), "{err:?}");
    let left = left_behind(&marker).await;
    assert!(left.is_empty(), "left behind after the timeout: {left:?}");
}

/// A run abandoned before it ends (the collectors stopped on quit: its future dropped) kills the
/// whole group as well.
#[tokio::test]
async fn a_dropped_run_kills_the_grandchildren_too() {
    let marker = unique_marker("drop");
    let (_d, dir) = wrapper_with_hung_grandchild(&marker);
    let r = Arc::new(runner(&dir));
    let task = tokio::spawn({
        let r = r.clone();
        async move {
            r.run(&Source::OnstatU.request(), Duration::from_secs(60))
                .await
        }
    });
    // Both the wrapper and its child are running before the run is dropped.
    for _ in 0..100 {
        if crate::common::processes_with(&marker).len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        crate::common::processes_with(&marker).len(),
        2,
        "the fake never started"
    );
    task.abort();
    let _ = task.await;
    let left = left_behind(&marker).await;
    assert!(left.is_empty(), "left behind after the drop: {left:?}");
}

/// A command that finishes but leaves a child of its own running: the group goes with the run.
#[tokio::test]
async fn a_finished_run_leaves_no_child_running() {
    let marker = unique_marker("done");
    let (_d, dir) = fake_onstat(&format!(
        "bash -c 'exec -a {marker}-grandchild sleep 1000' >/dev/null 2>&1 &\ncat {}\nexit 5",
        fixture_path("onstat-u/oninit-onstat-u.txt")
    ));
    let parsed = run(&runner(&dir), &Source::OnstatU, Duration::from_secs(10))
        .await
        .expect("parses");
    assert!(parsed.get::<OnstatU>().is_some());
    let left = left_behind(&marker).await;
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// An onstat that never stops printing (`exec yes '<valid row>'`) is killed at the output cap,
/// long before its timeout, and the run says why.
#[tokio::test]
async fn an_endless_output_is_killed_at_the_cap() {
    let marker = unique_marker("yes");
    let (_d, dir) = fake_onstat(&format!(
        "printf '\\nIBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 1 days 00:00:01 -- 1000 Kbytes\\n\\nUserthreads\\n'\n\
         exec -a {marker} yes '4a0f4028 ---P--D 1 informix - 0 0 0 1 2'"
    ));
    let r = runner(&dir).with_max_output_mb(1);
    let err = run(&r, &Source::OnstatU, Duration::from_secs(30))
        .await
        .expect_err("capped");
    assert_eq!(err, SourceError::OutputTooLarge { limit_mb: 1 });
    assert_eq!(err.to_string(), "output exceeded 1 MB (killed)");
    let left = left_behind(&marker).await;
    assert!(left.is_empty(), "the endless onstat still runs: {left:?}");
}

/// Standard error counts against the cap too.
#[tokio::test]
async fn an_endless_stderr_is_killed_at_the_cap() {
    let (_d, dir) = fake_onstat("yes 'onstat: error' >&2");
    let r = runner(&dir).with_max_output_mb(1);
    let err = run(&r, &Source::OnstatU, Duration::from_secs(30))
        .await
        .expect_err("capped");
    assert_eq!(err, SourceError::OutputTooLarge { limit_mb: 1 });
}

/// The tests that read extent reports in this process: reports share one part of the process's
/// one budget, and one report that fills it (as one test here does) leaves none to another.
static REPORTS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The extent map's report gets `EXTENT_OUTPUT_FACTOR` times the cap: a 3 MB `oncheck -pe`
/// passes under a 1 MB cap; a poll of the same size does not.
#[tokio::test]
async fn the_extent_report_gets_a_larger_cap() {
    let _one = REPORTS.lock().await;
    let (_d, dir) = fake_onstat("head -c 3000000 /dev/zero | tr '\\0' 'x'; echo");
    let r = runner(&dir).with_max_output_mb(1);
    let req = ifxtop::source::Request::Command(vec!["onstat".into()]);
    let big = r
        .run_extent_report(&req, Duration::from_secs(30))
        .await
        .expect("within 16 MB");
    assert_eq!(big.stdout.len(), 3_000_001);
    let err = r
        .run(&req, Duration::from_secs(30))
        .await
        .expect_err("past 1 MB");
    assert_eq!(err, SourceError::OutputTooLarge { limit_mb: 1 });
}

/// Files are read only when regular, never past the cap, and never block: a FIFO with no
/// writer, /dev/zero and a directory are refused at once by name.
#[tokio::test]
async fn file_reads_refuse_what_is_not_a_regular_file() {
    let _one = REPORTS.lock().await;
    use ifxtop::source::Request;
    let dir = tempfile::tempdir().expect("dir");
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo")
        .success());
    let big = dir.path().join("big");
    std::fs::write(&big, vec![b'x'; 1024 * 1024 + 1]).expect("write");
    let r = LocalRunner::new(None).with_max_output_mb(1);
    for (path, says) in [
        (fifo.clone(), "a FIFO"),
        (PathBuf::from("/dev/zero"), "a character device"),
        (dir.path().to_path_buf(), "a directory"),
        (big.clone(), "larger than 1 MB"),
    ] {
        let err = r
            .run(&Request::ReadFile(path.clone()), Duration::from_secs(5))
            .await
            .expect_err("refused");
        match &err {
            SourceError::Io { reason, .. } => assert!(reason.contains(says), "{path:?}: {err}"),
            other => panic!("{path:?}: {other:?}"),
        }
    }
    // Under the extent map's larger cap the same file is read.
    let ok = r
        .run_extent_report(&Request::ReadFile(big), Duration::from_secs(5))
        .await
        .expect("16 MB allowed");
    assert_eq!(ok.stdout.len(), 1024 * 1024 + 1);
}
mod interactive;

/// An `oncheck -pe` larger than the one budget of outputs being read (128 MB) is stopped there
/// with the budget's message, like any output: under a 1 GB `ulimit -v`, as on a database host,
/// ifxtop reports it and goes on, where reading it whole once aborted it.
#[test]
fn an_oncheck_larger_than_the_budget_is_refused_not_an_abort() {
    use common::fake_onstat::FakeOnstat;
    let f = FakeOnstat::new();
    f.answer(
        "-u",
        "\nUserthreads\naddress          flags   sessid   user     tty      wait             tout locks nreads   nwrites\n\
         4b4ad628         --BP--- 812      appuser  -        0                0    3     120      45\n\
         \x201 active, 128 total, 12 maximum concurrent\n",
    );
    f.install();
    // 600 MB of chunk table lines: well past the budget, and more than half the address space
    // it is given.
    let oncheck = f.bin.join("oncheck");
    std::fs::write(
        &oncheck,
        "#!/bin/sh\nprintf 'DBspace Usage Report: rootdbs   Owner: informix  Created: 01/01/2020\\n\\n'\n\
         yes ' Chunk Pathname                Pagesize(k)  Size(p)  Used(p)  Free(p)' | head -c 600000000\n",
    )
    .expect("oncheck");
    std::fs::set_permissions(&oncheck, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" snapshot --server ol_test --port 9088")
        .arg(env!("CARGO_BIN_EXE_ifxtop"))
        .env("PATH", f.path())
        .env("HOME", &f.home)
        .env("XDG_CACHE_HOME", f.home.join("cache"))
        .env_remove("INFORMIXSERVER")
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code().is_some(),
        "ifxtop ended by a signal ({}): {stderr}",
        out.status
    );
    assert!(
        stdout.contains(
            "oncheck -pe: output stopped at the 128 MB memory budget of all outputs being read (killed)"
        ),
        "{stdout}\n{stderr}"
    );
}

/// A captured report given with `--extents FILE` is taken from the same budget before it is
/// read: one larger than the budget is refused at once (a sparse file: nothing is written).
#[tokio::test]
async fn a_captured_report_larger_than_the_budget_is_refused_before_it_is_read() {
    let _one = REPORTS.lock().await;
    let dir = tempfile::tempdir().expect("dir");
    let big = dir.path().join("oncheck-pe.txt");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len(200 * 1024 * 1024))
        .expect("sparse file");
    let r = LocalRunner::new(None);
    match r
        .run_extent_report(
            &ifxtop::source::Request::ReadFile(big),
            Duration::from_secs(30),
        )
        .await
    {
        Err(e) => assert_eq!(e, SourceError::MemoryBudget { budget_mb: 128 }),
        Ok(out) => panic!("read whole: {} bytes", out.stdout.len()),
    }
}

/// A report is read whole up to what the budget lets reports take, past the last doubling of
/// its buffer that fits: 85 MB (about 950,000 extents) of the 96 MB reports may take of the
/// 128 MB budget (doubling alone stopped it at 64 MB: the next step, 128 MB, was over). And
/// while it is held, the polls still have their room: a poll of 8 MB runs beside it.
#[tokio::test]
async fn a_report_fills_its_share_of_the_budget_and_leaves_the_polls_their_room() {
    use ifxtop::source::{budget, Request};
    let _one = REPORTS.lock().await;
    // The report says when it has printed everything (all but a pipe's worth is read then), and
    // ends when told.
    let (d, dir) = fake_onstat(
        "cd \"$(dirname \"$0\")\"\n\
         case \"$1\" in\n\
         big) head -c 85000000 /dev/zero; : > printed; while [ ! -e go ]; do sleep 0.05; done ;;\n\
         *) head -c 8000000 /dev/zero ;;\n\
         esac",
    );
    let r = runner(&dir);
    let report = tokio::spawn({
        let r = r.clone();
        async move {
            r.run_extent_report(
                &Request::Command(vec!["onstat".into(), "big".into()]),
                Duration::from_secs(60),
            )
            .await
        }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !d.path().join("printed").exists() && !report.is_finished() {
        assert!(
            std::time::Instant::now() < deadline,
            "the report was never printed"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let poll = r
        .run(
            &Request::Command(vec!["onstat".into(), "-u".into()]),
            Duration::from_secs(30),
        )
        .await;
    std::fs::write(d.path().join("go"), "").expect("let the report end");
    let out = report
        .await
        .expect("task")
        .expect("within the reports' share");
    assert_eq!(out.stdout.len(), 85_000_000);
    assert_eq!(poll.expect("the polls' room").stdout.len(), 8_000_000);
    assert!(budget::peak() <= budget::limit());
}
