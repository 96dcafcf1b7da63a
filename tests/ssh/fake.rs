//! The ssh runner's connection handling with a fake `ssh` (no sshd needed): it logs its
//! arguments, fails like ssh when told to, and otherwise runs the remote command line with
//! `sh -c`, as a remote shell would.

use ifxtop::error::SourceError;
use ifxtop::source::ssh::{SshRunner, SshTarget};
use ifxtop::source::{CommandRunner, Request, Source};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

struct FakeSsh {
    dir: tempfile::TempDir,
}

impl FakeSsh {
    fn new() -> FakeSsh {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().display().to_string();
        let script = format!(
            r#"#!/bin/sh
for a in "$@"; do printf '%s\0' "$a"; done > '{d}/last-args'
case " $* " in
  *" -O exit "*) echo exit >> '{d}/control.log'; exit 0;;
esac
echo run >> '{d}/runs.log'
if [ -e '{d}/down' ]; then
  echo "ssh: connect to host db01 port 22: Connection refused" >&2
  exit 255
fi
for last; do :; done
exec sh -c "$last"
"#
        );
        let p = dir.path().join("ssh");
        std::fs::write(&p, script).expect("fake ssh");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        FakeSsh { dir }
    }

    fn runner(&self) -> SshRunner {
        SshRunner::new(SshTarget::parse("db01").expect("target"), Some("ol".into()))
            .expect("control dir")
            .with_local_path(format!("{}:/usr/bin:/bin", self.dir.path().display()))
    }

    fn set_down(&self, down: bool) {
        let p = self.dir.path().join("down");
        if down {
            std::fs::write(p, "").expect("down");
        } else {
            let _ = std::fs::remove_file(p);
        }
    }

    fn count(&self, log: &str) -> usize {
        std::fs::read_to_string(self.dir.path().join(log))
            .map(|s| s.lines().count())
            .unwrap_or(0)
    }

    fn last_args(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("last-args"))
            .unwrap_or_default()
            .split_terminator('\0')
            .map(str::to_string)
            .collect()
    }
}

fn echo(words: &[&str]) -> Request {
    let mut argv = vec!["echo".to_string()];
    argv.extend(words.iter().map(|w| w.to_string()));
    Request::Command(argv)
}

const T: Duration = Duration::from_secs(5);

#[tokio::test]
async fn ssh_gets_batch_mode_a_private_control_path_and_the_host_after_a_double_dash() {
    let f = FakeSsh::new();
    let r = f.runner();
    let out = r.run(&echo(&["hi"]), T).await.expect("runs");
    assert_eq!(out.stdout, "hi\n");
    let args = f.last_args();
    for o in ["BatchMode=yes", "ControlMaster=auto", "ConnectTimeout=10"] {
        assert!(args.iter().any(|a| a == o), "{o} missing: {args:?}");
    }
    let cp = format!("ControlPath={}/%C", r.control_dir().display());
    assert!(args.contains(&cp), "{args:?}");
    let dd = args.iter().position(|a| a == "--").expect("--");
    assert_eq!(args[dd + 1], "db01");
    // The remote script (its lines, the command's among them) is one argument, last, which
    // the login shell hands to /bin/sh.
    assert_eq!(args.len(), dd + 3, "{args:?}");
    assert!(args[dd + 2].starts_with("exec /bin/sh -c '"), "{args:?}");
    assert!(args[dd + 2].contains("INFORMIXSERVER=ol"), "{args:?}");
    // No input: a remote startup file that reads some gets the end of it at once.
    assert!(args[..dd].iter().any(|a| a == "-n"), "{args:?}");
}

#[tokio::test]
async fn a_failed_connection_backs_off_and_one_attempt_serves_every_waiting_run() {
    let f = FakeSsh::new();
    let r = f.runner();
    f.set_down(true);
    // Five runs at once while the host is down: one connection attempt, not five.
    let req = Source::OnstatU.request();
    let (a, b, c, d, e) = tokio::join!(
        r.run(&req, T),
        r.run(&req, T),
        r.run(&req, T),
        r.run(&req, T),
        r.run(&req, T)
    );
    for res in [a, b, c, d, e] {
        let err = res.expect_err("down");
        assert!(matches!(err, SourceError::Ssh { .. }), "{err:?}");
        assert!(err.to_string().contains("Connection refused"), "{err}");
    }
    assert_eq!(f.count("runs.log"), 1, "one attempt");
    // Inside the backoff nothing runs at all.
    let err = r.run(&req, T).await.expect_err("backing off");
    assert!(err.to_string().contains("next attempt in"), "{err}");
    assert_eq!(f.count("runs.log"), 1);
    // After the backoff (1 s after the first failure), another attempt; still down: the second
    // failure in a row closes the master.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    r.run(&req, T).await.expect_err("still down");
    assert_eq!(f.count("runs.log"), 2);
    assert_eq!(
        f.count("control.log"),
        1,
        "ssh -O exit after the second failure"
    );
    // Back up: after the next backoff (2 s) the runs go through again.
    f.set_down(false);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let out = r.run(&echo(&["back"]), T).await.expect("reconnected");
    assert_eq!(out.stdout, "back\n");
}

#[tokio::test]
async fn dropping_the_runner_closes_the_master() {
    let f = FakeSsh::new();
    let r = f.runner();
    r.run(&echo(&["x"]), T).await.expect("runs");
    let dir: PathBuf = r.control_dir().to_path_buf();
    assert_eq!(f.count("control.log"), 0);
    drop(r);
    assert_eq!(f.count("control.log"), 1, "ssh -O exit on drop");
    let args = f.last_args();
    assert!(args.iter().any(|a| a == "-O"), "{args:?}");
    assert!(
        args.contains(&format!("ControlPath={}/%C", dir.display())),
        "the same control path: {args:?}"
    );
    assert!(!dir.exists());
}

#[tokio::test]
async fn a_remote_run_gets_at_least_five_seconds() {
    let f = FakeSsh::new();
    let r = f.runner();
    // Asked with 1 s (a /proc read's local allowance), a run taking 2 s still ends well: the
    // network and the remote shell take their share.
    let req = Request::Command(vec!["sh".into(), "-c".into(), "sleep 2; echo late".into()]);
    let out = r
        .run(&req, Duration::from_secs(1))
        .await
        .expect("not killed");
    assert_eq!(out.stdout, "late\n");
}

/// A remote run killed at its timeout keeps what the command printed before (an `onstat -i`
/// that answered some options, then hung): the wrapper's frame and its heartbeats taken off.
#[tokio::test]
async fn a_run_killed_at_its_timeout_keeps_what_it_printed_before() {
    let f = FakeSsh::new();
    let r = f.runner();
    let req = Request::Command(vec![
        "sh".into(),
        "-c".into(),
        "printf 'onstat> answered\\n'; sleep 1.5; printf 'onstat> half'; exec sleep 600".into(),
    ]);
    let cut = r
        .run_keeping(&req, Duration::from_secs(1))
        .await
        .expect_err("killed at 5 s");
    assert!(matches!(cut.error, SourceError::Timeout { .. }), "{cut:?}");
    assert_eq!(cut.stdout, "onstat> answered\nonstat> half");
}

#[tokio::test]
async fn at_most_eight_remote_commands_run_at_once_over_the_connection() {
    // sshd refuses an eleventh session on a connection by default ("no more sessions"), and
    // ssh then logs in again: a snapshot asks for more sources than that at once.
    let f = FakeSsh::new();
    let r = std::sync::Arc::new(f.runner());
    let running = f.dir.path().join("running");
    std::fs::create_dir(&running).expect("dir");
    let peaks = f.dir.path().join("peaks");
    let script = format!(
        "t=$(mktemp -p '{run}'); ls '{run}' | wc -l >> '{peaks}'; sleep 0.4; rm -f \"$t\"",
        run = running.display(),
        peaks = peaks.display()
    );
    let req = Request::Command(vec!["sh".into(), "-c".into(), script]);
    let mut runs = tokio::task::JoinSet::new();
    for _ in 0..20 {
        let (r, req) = (r.clone(), req.clone());
        runs.spawn(async move { r.run(&req, T).await.map(|_| ()) });
    }
    while let Some(out) = runs.join_next().await {
        out.expect("joined").expect("ran");
    }
    let peak = std::fs::read_to_string(&peaks)
        .expect("peaks")
        .lines()
        .filter_map(|l| l.trim().parse::<usize>().ok())
        .max()
        .expect("counted");
    assert!(peak <= 8, "{peak} at once");
    assert!(peak >= 2, "runs still go side by side: {peak}");
    // The connection's first probe, then the twenty commands.
    assert_eq!(f.count("runs.log"), 21);
}
