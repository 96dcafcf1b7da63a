//! Paths a user names that are not regular files (a FIFO, a device, a directory) are refused at
//! once by every command that reads one, with one message: a FIFO with no writer held the open
//! forever, `/dev/zero` never ended.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `ifxtop args`, killed (by its pid) if it has not ended within 20 s: the exit code and
/// standard error, or `None` when it had to be killed.
pub(crate) fn run_bounded(args: &[&str]) -> Option<(Option<i32>, String)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(args)
        .env_remove("INFORMIXSERVER")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ifxtop runs");
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            return Some((status.code(), err));
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn fifos_and_devices_given_as_files_are_refused_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(made.expect("mkfifo runs").success());
    let fifo = fifo.display().to_string();
    let d = dir.path().display().to_string();
    for (args, code, says) in [
        (
            vec!["snapshot", "--demo", "--config", &fifo],
            2,
            "--config FIFO: a FIFO (named pipe), not a regular file",
        ),
        (
            vec!["snapshot", "--demo", "--config", "/dev/zero"],
            2,
            "--config /dev/zero: a character device, not a regular file",
        ),
        (
            vec!["snapshot", "--replay", &fifo],
            2,
            "--replay FIFO: a FIFO (named pipe), not a regular file",
        ),
        (
            vec!["snapshot", "--replay", "/dev/zero"],
            2,
            "--replay /dev/zero: a character device, not a regular file",
        ),
        (
            vec!["ash", "--replay", &fifo],
            2,
            "--replay FIFO: a FIFO (named pipe), not a regular file",
        ),
        (
            vec!["snapshot", "--replay", &d],
            2,
            "--replay DIR: a directory, not a regular file",
        ),
        (
            vec!["parse", "onstat-u", &fifo],
            1,
            "file FIFO: a FIFO (named pipe), not a regular file",
        ),
        (
            vec!["parse", "onstat-u", "/dev/zero"],
            1,
            "file /dev/zero: a character device, not a regular file",
        ),
        (
            vec!["resolve", "--extents", &fifo],
            1,
            "FIFO: a FIFO (named pipe), not a regular file",
        ),
    ] {
        let (got, err) = run_bounded(&args).unwrap_or_else(|| panic!("{args:?} hung"));
        let err = err.replace(&fifo, "FIFO").replace(&d, "DIR");
        assert_eq!(got, Some(code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// A moment past ten years (`--at 2e10`: the session clock's nanoseconds overflow) walked the
/// demo for ever; a window past the hour database time keeps reported only its last hour. Each
/// is refused at once, naming the flag and the range; the edge of the range still answers.
#[test]
fn moments_and_windows_out_of_range_are_refused_at_once() {
    for (args, says) in [
        (
            vec!["snapshot", "--demo", "--at", "2e10"],
            "`2e10`: at most 315360000 s (ten years) into a timeline",
        ),
        (
            vec!["ash", "--demo", "--to", "2e10"],
            "`2e10`: at most 315360000 s (ten years) into a timeline",
        ),
        (
            vec!["ash", "--demo", "--at", "2e10"],
            "`2e10`: at most 315360000 s (ten years)",
        ),
        (
            vec!["ash", "--demo", "--from", "0", "--to", "7200"],
            "a window of at most 3600 s (database time keeps an hour)",
        ),
        (
            vec!["ash", "--demo", "--window", "1e12"],
            "--window 1000000000000: seconds, more than 0 and at most 3600",
        ),
        (
            vec!["snapshot", "--demo", "--at", "100", "--window", "7200"],
            "--window 7200: seconds, more than 0 and at most 3600",
        ),
        (
            vec!["--demo", "--demo-at", "20000000000"],
            "`20000000000`: at most 315360000 s (ten years)",
        ),
    ] {
        let (code, err) = run_bounded(&args).unwrap_or_else(|| panic!("{args:?} spun"));
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let (code, err) = run_bounded(&[
        "snapshot",
        "--demo",
        "--at",
        "315360000",
        "--format",
        "json",
    ])
    .expect("the last moment answers");
    assert_eq!(code, Some(0), "{err}");
}
