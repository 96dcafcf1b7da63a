//! Collector tests with fake `onstat` executables on PATH: ones that succeed, fail, print
//! garbage, hang past the timeout, or report the server off-line.

#[path = "../common/mod.rs"]
mod common;

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

fn fixture_path(rel: &str) -> String {
    common::fixtures_dir().join(rel).display().to_string()
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
    let (_itx, irx) = watch::channel(0.1);
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
