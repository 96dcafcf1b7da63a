//! Every login shell a DBA logs in with: bash, dash, ksh93 and tcsh, each the login shell of a
//! test user (`sshd::login_user`). Under each, a run's words and input reach the program exact,
//! a startup file that reads input does not hold the run up, and nothing of any run is left on
//! the host: not after runs that end, not after one whose ssh is gone mid-run (killed, as at a
//! timeout), not after the master is closed.

use crate::sshd::{self, Sshd};
use ifxtop::source::ssh::{SshRunner, SshTarget};
use ifxtop::source::{CommandRunner, Request};
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

/// Words sh and csh would love to interpret.
const WORDS: [&str; 8] = [
    "a!b !! !$",
    "it's",
    "x\ny",
    "$HOME `id` $(id)",
    "\\n\\",
    "%d %%",
    "é 日本",
    "",
];

fn runner(sshd: &Sshd, user: &str) -> SshRunner {
    SshRunner::new(
        SshTarget::parse(&sshd.target_as(user)).expect("target"),
        Some("ol".into()),
    )
    .expect("control dir")
    .with_config(Some(sshd.client_config()))
}

/// The sessions' HOME belongs to `user`, with startup files that print on both streams and
/// read a line of input (bash's `.bashrc`, csh's and tcsh's `.cshrc`), each noting it ran.
fn startup_files(sshd: &Sshd, user: &str) {
    rc_files(
        sshd,
        user,
        "read line; echo \"bash read [$line]\" > \"$HOME/ran\"\n\
         echo 'Welcome to db01'; echo 'Last backup: yesterday' >&2\n",
        "set line = $<\necho \"csh read [$line]\" > \"$HOME/ran\"\n\
         echo 'Welcome to db01'\n",
    );
}

/// The sessions' HOME belongs to `user`, with this `.bashrc` and `.cshrc`.
fn rc_files(sshd: &Sshd, user: &str, bashrc: &str, cshrc: &str) {
    let home = sshd.path().join("remote-home");
    std::fs::write(home.join(".bashrc"), bashrc).expect(".bashrc");
    std::fs::write(home.join(".cshrc"), cshrc).expect(".cshrc");
    let uid = sshd::uid_of(user).expect("the test user");
    for p in [home.clone(), home.join(".bashrc"), home.join(".cshrc")] {
        std::os::unix::fs::chown(&p, Some(uid), None).expect("chown");
    }
    // A file the user reads.
    let file = sshd.path().join("readable");
    std::fs::write(&file, "line 1\nno newline").expect("file");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
}

async fn under(shell: &str, reads_startup: Option<&str>) {
    let Some(user) = sshd::login_user(shell) else {
        return;
    };
    let sshd = Sshd::start();
    startup_files(&sshd, &user);
    let r = runner(&sshd, &user);
    let started = Instant::now();
    // A startup file waiting for input would hold this up until the connection's timeout.
    let host = tokio::time::timeout(Duration::from_secs(30), r.remote_hostname())
        .await
        .expect("the probe ended")
        .unwrap_or_else(|e| panic!("{shell}: {e}\n{}", sshd.log()));
    assert!(!host.is_empty());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{shell}: connecting took {:?}",
        started.elapsed()
    );
    let ran = std::fs::read_to_string(sshd.path().join("remote-home/ran")).ok();
    assert_eq!(ran.as_deref(), reads_startup, "{shell}");

    let mut argv: Vec<String> = vec!["printf".into(), "%s|".into()];
    argv.extend(WORDS.iter().map(|w| w.to_string()));
    let out = r
        .run(&Request::Command(argv), Duration::from_secs(20))
        .await
        .unwrap_or_else(|e| panic!("{shell}: {e}"));
    let want: String = WORDS.iter().map(|w| format!("{w}|")).collect();
    assert_eq!((out.exit, out.stdout.as_str()), (Some(0), want.as_str()));
    assert_eq!(out.stderr, "", "{shell}");
    let input = format!("{}\n", WORDS.join("\n"));
    let fed = Request::CommandInput {
        argv: vec!["cat".into()],
        stdin: input.clone(),
    };
    let out = r.run(&fed, Duration::from_secs(20)).await.expect("runs");
    assert_eq!(out.stdout, input, "{shell}");
    let out = r
        .run(
            &Request::ReadFile(sshd.path().join("readable")),
            Duration::from_secs(20),
        )
        .await
        .expect("reads");
    assert_eq!(out.stdout, "line 1\nno newline", "{shell}");
    let left = sshd.left_on_host(Duration::from_secs(3));
    assert!(left.is_empty(), "{shell}: runs that ended left {left:?}");

    // A run whose ssh goes mid-run (its future dropped: ssh killed, as at a timeout).
    let r = std::sync::Arc::new(r);
    let hang = Request::Command(vec![
        "sh".into(),
        "-c".into(),
        "sleep 600 </dev/null >/dev/null 2>&1 & exec sleep 601".into(),
    ]);
    let task = tokio::spawn({
        let r = r.clone();
        async move { r.run(&hang, Duration::from_secs(60)).await }
    });
    let until = Instant::now() + Duration::from_secs(10);
    while !sshd
        .on_host()
        .iter()
        .filter(|(_, c)| c.starts_with("sleep 60"))
        .count()
        .eq(&2)
    {
        assert!(Instant::now() < until, "{shell}: {:?}", sshd.on_host());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    task.abort();
    let _ = task.await;
    let left = sshd.left_on_host(Duration::from_secs(5));
    assert!(left.is_empty(), "{shell}: ssh gone mid-run left {left:?}");
    drop(r);
    let left = sshd.left_on_host(Duration::from_secs(3));
    assert!(left.is_empty(), "{shell}: the closed master left {left:?}");
}

#[tokio::test]
async fn bash_login_shell() {
    if sshd::available("bash_login_shell") {
        under("/bin/bash", Some("bash read []\n")).await;
    }
}

#[tokio::test]
async fn dash_login_shell() {
    if sshd::available("dash_login_shell") {
        under("/bin/dash", None).await;
    }
}

#[tokio::test]
async fn ksh93_login_shell() {
    if sshd::available("ksh93_login_shell") {
        under("/bin/ksh93", None).await;
    }
}

#[tokio::test]
async fn tcsh_login_shell() {
    if sshd::available("tcsh_login_shell") {
        under("/bin/tcsh", Some("csh read []\n")).await;
    }
}

/// A startup file that never lets the login shell start the command is named as the cause,
/// not taken for a host that does not answer.
#[tokio::test]
async fn a_startup_file_that_hangs_is_named_not_taken_for_no_connection() {
    if !sshd::available("a_startup_file_that_hangs_is_named_not_taken_for_no_connection") {
        return;
    }
    let Some(user) = sshd::login_user("/bin/bash") else {
        return;
    };
    let sshd = Sshd::start();
    rc_files(&sshd, &user, "sleep 30\n", "");
    let r = runner(&sshd, &user).with_connect_timeout(Duration::from_secs(2));
    let err = tokio::time::timeout(Duration::from_secs(30), r.remote_hostname())
        .await
        .expect("the probe ended")
        .expect_err("the login shell never starts the command");
    // What hangs there is the account's own (its .bashrc), not ifxtop's: end it here.
    let _ = sshd.left_on_host(Duration::ZERO);
    assert_eq!(
        err.to_string(),
        format!(
            "ssh: logged in to {}, but the remote login shell did not start the command within \
             3s: does a startup file of that account (~/.bashrc, ~/.cshrc) wait for something?",
            sshd.target_as(&user)
        )
    );
}
