//! One memory budget for the whole process (src/source/budget.rs): with every command printing
//! without end at once, what is being read never passes the budget, each run fails with a clear
//! error (its own cap, or the budget), the process stays up, and its resident memory stays
//! bounded. A test binary of its own, so no other test's runs share the counter.

use ifxtop::error::SourceError;
use ifxtop::source::budget;
use ifxtop::source::local::LocalRunner;
use ifxtop::source::{CommandRunner, Request, Source};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

const LINE: &str = "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 3 days 04:05:06";

/// A directory with an `onstat` that prints forever (as a wedged wrapper script could).
/// One test at a time: each writes an executable and starts processes, and a file being written
/// while another thread forks is held open in the child until it execs (`Text file busy` when
/// the other test then runs its own).
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn endless_onstat() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("onstat");
    std::fs::write(&path, format!("#!/bin/sh\nexec yes '{LINE}'\n")).expect("script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

fn path_with(dir: &Path) -> String {
    format!("{}:/usr/bin:/bin", dir.display())
}

#[tokio::test]
async fn outputs_being_read_at_once_never_pass_the_one_budget() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let dir = endless_onstat();
    let r =
        std::sync::Arc::new(LocalRunner::new(Some("ol".into())).with_path(path_with(dir.path())));
    let limit = budget::limit();
    assert_eq!(limit, budget::DEFAULT_BUDGET_MB << 20);
    // As many runs side by side as one instance's sources, each allowed 64 MB: 13 caps are far
    // above the budget.
    let mut runs = tokio::task::JoinSet::new();
    for _ in 0..13 {
        let r = r.clone();
        runs.spawn(async move {
            r.run(&Source::OnstatU.request(), Duration::from_secs(60))
                .await
        });
    }
    let (mut capped, mut budgeted) = (0, 0);
    while let Some(res) = runs.join_next().await {
        match res.expect("joined") {
            Err(SourceError::OutputTooLarge { limit_mb: 64 }) => capped += 1,
            Err(e @ SourceError::MemoryBudget { .. }) => {
                assert_eq!(
                    e.to_string(),
                    "output stopped at the 128 MB memory budget of all outputs being read (killed)"
                );
                budgeted += 1;
            }
            other => panic!("an endless output must fail: {other:?}"),
        }
    }
    let peak = budget::peak();
    eprintln!(
        "peak in flight {peak} bytes ({:.1} MB) of {limit}; {capped} runs at their own cap, \
         {budgeted} at the budget",
        peak as f64 / 1048576.0
    );
    assert!(peak <= limit, "peak {peak} > budget {limit}");
    assert!(budgeted >= 1, "13 runs of 64 MB never met a 128 MB budget");
    // Everything is given back, and the next run works.
    assert_eq!(budget::in_flight(), 0);
    std::fs::write(
        dir.path().join("onstat"),
        format!("#!/bin/sh\necho '{LINE}'\n"),
    )
    .expect("script");
    let out = r
        .run(&Source::OnstatU.request(), Duration::from_secs(10))
        .await
        .expect("runs");
    assert_eq!(out.stdout, format!("{LINE}\n"));
    // A file read is not counted: nothing is left in flight either way.
    let _ = r
        .run(
            &Request::ReadFile("/proc/self/status".into()),
            Duration::from_secs(5),
        )
        .await;
    assert_eq!(budget::in_flight(), 0);
}

/// Peak resident memory (VmHWM, kB) of `pid` while it runs: the last value read before it ends.
fn watch_peak(child: &mut std::process::Child) -> u64 {
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let until = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(text) = std::fs::read_to_string(&status) {
            if let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kb);
            }
        }
        if let Ok(Some(_)) = child.try_wait() {
            return peak;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ifxtop snapshot did not end within 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_snapshot_with_every_onstat_printing_forever_stays_small_and_says_why() {
    let _alone = ONE_AT_A_TIME.blocking_lock();
    let dir = endless_onstat();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(["snapshot", "--server", "ol"])
        .env("PATH", path_with(dir.path()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ifxtop runs");
    let stderr = child.stderr.take().expect("stderr");
    let errors = std::thread::spawn(move || {
        let mut s = String::new();
        use std::io::Read;
        let _ = std::io::BufReader::new(stderr).read_to_string(&mut s);
        s
    });
    let peak_kb = watch_peak(&mut child);
    let errors = errors.join().expect("stderr read");
    eprintln!("peak resident memory {peak_kb} kB\n{errors}");
    // Every source failed, each saying why: the tick's one `onstat -i` passed its cap, and
    // each option it carried says so (the `-g` ones too, which had processes of their own).
    for source in [
        "onstat -u",
        "onstat -X",
        "onstat -g con",
        "onstat -g ath",
        "onstat -p",
    ] {
        assert!(
            errors.contains(&format!("{source}: output exceeded 64 MB (killed)")),
            "{source}: {errors}"
        );
    }
    // One onstat is read at a time now (one call a tick), so the shared budget (128 MB, tested
    // with 13 runs at once in the test above) is not reached: one cap (64 MB) and what the
    // process needs besides; 13 caps would be 832 MB.
    assert!(peak_kb < 160 * 1024, "peak resident memory {peak_kb} kB");
}
