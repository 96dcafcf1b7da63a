//! The ssh runner against a real `sshd` on loopback (tests/ssh/sshd.rs): onstat run remotely and
//! parsed, hostile server names and paths reaching the remote side as they are, one multiplexed
//! connection, a dropped connection as a source error and the reconnect after it.
//!
//! Skipped with a message when /usr/sbin/sshd is absent, unless `CI` is set (then it fails).

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod fake;
mod quote;
mod remote;
mod screen;
mod share;
mod shells;
mod sshd;
mod together;

use ifxtop::error::SourceError;
use ifxtop::parsers::onstat_u::OnstatU;
use ifxtop::source::ssh::{SshRunner, SshTarget};
use ifxtop::source::{CommandRunner, Output, Request, Source};
use sshd::Sshd;
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

fn runner(sshd: &Sshd, server: &str) -> SshRunner {
    SshRunner::new(
        SshTarget::parse(&sshd.target()).expect("target"),
        Some(server.to_string()),
    )
    .expect("control dir")
    .with_config(Some(sshd.client_config()))
    .with_remote_path(Some(sshd.bin().display().to_string()))
}

async fn run(r: &SshRunner, req: &Request) -> Result<Output, SourceError> {
    // Never a hang: a run that does not end within the limit fails the test.
    tokio::time::timeout(Duration::from_secs(60), r.run(req, T))
        .await
        .expect("the run ended")
}

fn cmd(argv: &[&str]) -> Request {
    Request::Command(argv.iter().map(|s| s.to_string()).collect())
}

#[tokio::test]
async fn onstat_u_runs_remotely_and_parses() {
    if !sshd::available("onstat_u_runs_remotely_and_parses") {
        return;
    }
    let sshd = Sshd::start();
    let r = runner(&sshd, "ol_remote");
    // The remote host's name, from the remote `uname -n`.
    let host = r.remote_hostname().await.expect("connects");
    assert_eq!(host, sshd::REMOTE_HOST);
    let out = run(&r, &Source::OnstatU.request()).await.expect("runs");
    assert_eq!(out.exit, Some(5), "{out:?}");
    let parsed = Source::OnstatU.parse(out).expect("parses");
    let u = parsed.get::<OnstatU>().expect("onstat -u");
    assert_eq!(u.threads.len(), 4);
    let seen = std::fs::read_to_string(sshd.bin().join("server-seen")).expect("onstat ran");
    assert_eq!(seen, "ol_remote");
    // Several runs, one connection: the master carries them all.
    for _ in 0..5 {
        run(&r, &Source::OnstatGCon.request()).await.expect("runs");
    }
    assert_eq!(sshd.logins(), 1, "{}", sshd.log());
}

#[tokio::test]
async fn an_off_line_server_is_off_line_not_a_dropped_connection() {
    if !sshd::available("an_off_line_server_is_off_line_not_a_dropped_connection") {
        return;
    }
    let sshd = Sshd::start();
    // The fake onstat exits 255 for this name, as onstat does when the server is down: ssh
    // then exits 255 too, which alone would read as a failed connection.
    let r = runner(&sshd, "offline_one");
    let out = run(&r, &Source::OnstatU.request()).await.expect("runs");
    assert_eq!(out.exit, Some(255));
    assert_eq!(
        Source::OnstatU.parse(out).expect_err("off-line"),
        SourceError::Offline {
            message: "shared memory not initialized for INFORMIXSERVER 'offline_one'".into()
        }
    );
    // A program the remote PATH lacks is "not found", naming the host.
    let err = run(&r, &cmd(&["no-such-onstat", "-u"]))
        .await
        .expect_err("not found");
    assert!(
        matches!(&err, SourceError::NotFound { program } if program.contains("127.0.0.1")),
        "{err:?}"
    );
    // A failing command keeps its exit code and stderr (the exit mark is taken off).
    let r = runner(&sshd, "ol");
    let out = run(&r, &cmd(&["onstat", "-z"])).await.expect("runs");
    assert_eq!(out.exit, Some(1));
    assert_eq!(out.stderr.trim(), "onstat: invalid option -z");
}

#[tokio::test]
async fn a_server_name_full_of_shell_metacharacters_reaches_onstat_as_it_is() {
    if !sshd::available("a_server_name_full_of_shell_metacharacters_reaches_onstat_as_it_is") {
        return;
    }
    let sshd = Sshd::start();
    let pwned_before = sshd::pwned_in_tmp();
    let local_mark = sshd.path().join("pwned");
    let names = [
        "ol'; touch /tmp/pwned_$$; echo '$(id)".to_string(),
        format!(
            "ol\"; touch {m}; `touch {m}` $(touch {m}) | touch {m} & touch {m} \\ * ~ {{a,b}} !x",
            m = local_mark.display()
        ),
        "ol\nwith a newline; touch /tmp/pwned_nl".to_string(),
        "-u".to_string(),
        String::new(),
    ];
    for name in &names {
        let r = runner(&sshd, name);
        let out = run(&r, &Source::OnstatU.request()).await.expect("runs");
        assert_eq!(out.exit, Some(5), "{name:?}: {out:?}");
        let seen = std::fs::read_to_string(sshd.bin().join("server-seen")).expect("onstat ran");
        assert_eq!(&seen, name);
    }
    assert!(!local_mark.exists(), "a server name ran a command");
    assert_eq!(
        sshd::pwned_in_tmp(),
        pwned_before,
        "a server name ran a command"
    );
}

#[tokio::test]
async fn remote_files_with_spaces_and_quotes_in_their_paths_are_read() {
    if !sshd::available("remote_files_with_spaces_and_quotes_in_their_paths_are_read") {
        return;
    }
    let sshd = Sshd::start();
    let dir = sshd.path().join("a dir; $(touch x)");
    std::fs::create_dir(&dir).expect("dir");
    let file = dir.join("it's \"quoted\" $HOME `id`.txt");
    std::fs::write(&file, "  7: 0100007F:2328 00000000:0000 0A\n").expect("file");
    std::fs::write(dir.join("-n"), "").expect("file");
    std::fs::write(dir.join(".hidden"), "").expect("file");
    let r = runner(&sshd, "ol");
    let out = run(&r, &Request::ReadFile(file.clone()))
        .await
        .expect("read");
    assert_eq!(out.stdout, "  7: 0100007F:2328 00000000:0000 0A\n");
    assert_eq!(out.exit, Some(0));
    // A directory is listed sorted, one name a line, as the local runner lists it.
    let out = run(&r, &Request::ListDir(dir.clone())).await.expect("list");
    assert_eq!(out.stdout, "-n\n.hidden\nit's \"quoted\" $HOME `id`.txt");
    // A missing file is an I/O error naming the path, not a connection failure.
    let missing = dir.join("nope 'x'");
    let err = run(&r, &Request::ReadFile(missing.clone()))
        .await
        .expect_err("missing");
    match err {
        SourceError::Io { path, reason } => {
            assert_eq!(path, missing.display().to_string());
            assert!(reason.contains("No such file"), "{reason}");
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
    assert!(!sshd.path().join("x").exists());
    // A file named with `--extents` is read on this machine, not on the host.
    let local = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(local.path(), "local text").expect("write");
    let r = runner(&sshd, "ol").with_local_file(local.path().to_path_buf());
    let out = run(&r, &Request::ReadFile(local.path().to_path_buf()))
        .await
        .expect("read");
    assert_eq!(out.stdout, "local text");
}

#[tokio::test]
async fn a_dropped_connection_is_a_source_error_and_the_runner_reconnects() {
    if !sshd::available("a_dropped_connection_is_a_source_error_and_the_runner_reconnects") {
        return;
    }
    let mut sshd = Sshd::start();
    let r = runner(&sshd, "ol");
    run(&r, &Source::OnstatU.request()).await.expect("runs");
    sshd.kill();
    let err = run(&r, &Source::OnstatU.request())
        .await
        .expect_err("no server");
    assert!(matches!(err, SourceError::Ssh { .. }), "{err:?}");
    assert!(err.to_string().starts_with("ssh: "), "{err}");
    // While backing off, a run fails at once with the last reason, and runs nothing.
    let err = run(&r, &Source::OnstatU.request())
        .await
        .expect_err("backing off");
    assert!(err.to_string().contains("next attempt in"), "{err}");
    sshd.restart();
    let until = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        match run(&r, &Source::OnstatU.request()).await {
            Ok(out) => {
                assert!(Source::OnstatU.parse(out).is_ok());
                break;
            }
            Err(e) => {
                assert!(
                    std::time::Instant::now() < until,
                    "no reconnect: {e}\n{}",
                    sshd.log()
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

#[tokio::test]
async fn quitting_closes_the_master_and_its_private_directory() {
    if !sshd::available("quitting_closes_the_master_and_its_private_directory") {
        return;
    }
    let sshd = Sshd::start();
    let r = runner(&sshd, "ol");
    run(&r, &Source::OnstatU.request()).await.expect("runs");
    let dir = r.control_dir().to_path_buf();
    let sockets = std::fs::read_dir(&dir).expect("control dir").count();
    assert_eq!(sockets, 1, "one master socket");
    assert!(masters_of(&dir) >= 1, "a master process runs");
    drop(r);
    assert!(!dir.exists(), "control directory left behind");
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while masters_of(&dir) > 0 {
        assert!(std::time::Instant::now() < until, "master still running");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// ssh processes whose command line names `dir` (the master shows its ControlPath).
fn masters_of(dir: &std::path::Path) -> usize {
    let needle = dir.display().to_string();
    std::fs::read_dir("/proc")
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| {
                    std::fs::read(e.path().join("cmdline"))
                        .map(|c| String::from_utf8_lossy(&c).contains(&needle))
                        .unwrap_or(false)
                })
                .count()
        })
        .unwrap_or(0)
}

#[tokio::test]
async fn any_words_cross_the_connection_unchanged() {
    if !sshd::available("any_words_cross_the_connection_unchanged") {
        return;
    }
    let sshd = Sshd::start();
    let r = runner(&sshd, "ol");
    for words in quote::samples(24) {
        // A first word of its own: printf prints its format once even with no word.
        let mut argv = vec![
            "printf".to_string(),
            "%s\\0".to_string(),
            "first".to_string(),
        ];
        argv.extend(words.iter().cloned());
        let out = run(&r, &Request::Command(argv)).await.expect("runs");
        assert_eq!(out.exit, Some(0), "{out:?}");
        let back = quote::split_nul(&out.stdout);
        assert_eq!(back.first().map(String::as_str), Some("first"));
        assert_eq!(&back[1..], &words[..]);
    }
    assert_eq!(sshd.logins(), 1, "{}", sshd.log());
}
