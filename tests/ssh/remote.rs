//! What a run leaves on the remote host and what reaches ifxtop from it: a remote command that
//! hangs past its timeout is killed there with its whole group, and whatever the remote shell's
//! startup files print (a `.bashrc` greeting, an exit trap) never becomes part of an output.

use crate::sshd::{self, Sshd};
use crate::{run, runner};
use ifxtop::error::SourceError;
use ifxtop::parsers::onstat_u::OnstatU;
use ifxtop::source::{CommandRunner, Request, Source};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Whether `pid` is a live process: it exists and is not a zombie (a killed process whose
/// parent has not reaped it yet is gone for every purpose here).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .and_then(|at| stat[at + 1..].split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

fn script(path: &Path, text: &str) {
    std::fs::write(path, text).expect("script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[tokio::test]
async fn a_remote_command_that_hangs_is_killed_on_the_host_with_its_group() {
    if !sshd::available("a_remote_command_that_hangs_is_killed_on_the_host_with_its_group") {
        return;
    }
    let sshd = Sshd::start();
    let pids = sshd.bin().join("hang-pids");
    // A remote onstat that hangs, as one waiting on a stuck server does, with a child of its
    // own (a site wrapper's `sudo`, a pager): both must go.
    script(
        &sshd.bin().join("onstat"),
        &format!(
            "#!/bin/sh\nsleep 600 </dev/null >/dev/null 2>&1 &\necho \"$$ $!\" > '{}'\nwait\n",
            pids.display()
        ),
    );
    let r = runner(&sshd, "ol");
    let started = Instant::now();
    // Asked for 1 s, a remote run gets 5 (ssh.rs); the wrapper's own limit is later still.
    let err = tokio::time::timeout(
        Duration::from_secs(30),
        r.run(&Source::OnstatU.request(), Duration::from_secs(1)),
    )
    .await
    .expect("the run ended")
    .expect_err("times out");
    assert!(matches!(err, SourceError::Timeout { .. }), "{err:?}");
    let text = std::fs::read_to_string(&pids).expect("the remote onstat ran");
    let recorded: Vec<i32> = text
        .split_whitespace()
        .map(|p| p.parse().expect("a pid"))
        .collect();
    assert_eq!(recorded.len(), 2, "{text}");
    let until = Instant::now() + Duration::from_secs(10);
    while recorded.iter().any(|&p| alive(p)) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<i32> = recorded.iter().copied().filter(|&p| alive(p)).collect();
    // Whatever the outcome, end what this test started (by the pids it recorded).
    for &p in &left {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(p),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert!(
        left.is_empty(),
        "remote processes {left:?} still run {:.1}s after the run started",
        started.elapsed().as_secs_f64()
    );
    // The connection still serves the next run.
    script(
        &sshd.bin().join("onstat"),
        "#!/bin/sh\necho 'IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line'\n",
    );
    let out = run(&r, &Source::OnstatU.request()).await.expect("runs");
    assert!(out.stdout.contains("On-Line"), "{out:?}");
}

#[tokio::test]
async fn what_the_remote_shell_prints_at_start_and_exit_is_not_part_of_any_output() {
    if !sshd::available("what_the_remote_shell_prints_at_start_and_exit_is_not_part_of_any_output")
    {
        return;
    }
    let sshd = Sshd::start();
    // bash reads ~/.bashrc for a command run by sshd; HOME is the sessions' own (sshd.rs).
    let ran = sshd.path().join("bashrc-ran");
    std::fs::write(
        sshd.path().join("remote-home/.bashrc"),
        format!(
            "touch '{}'\n\
             echo 'Welcome to db01: authorized use only'\n\
             echo 'Last backup: yesterday' >&2\n\
             printf 'no newline at the end'\n\
             trap 'echo bye from .bashrc; echo bye on stderr >&2' EXIT\n",
            ran.display()
        ),
    )
    .expect(".bashrc");
    let r = runner(&sshd, "ol_remote");
    let host = r.remote_hostname().await.expect("connects");
    assert!(
        ran.exists(),
        "the remote .bashrc never ran: the test proves nothing"
    );
    assert_eq!(host, sshd::REMOTE_HOST);
    let out = run(&r, &Source::OnstatU.request()).await.expect("runs");
    assert_eq!(out.exit, Some(5), "{out:?}");
    // Exactly what the program prints, run here without any shell around it.
    let here = std::process::Command::new(sshd.bin().join("onstat"))
        .arg("-u")
        .env("INFORMIXSERVER", "ol_remote")
        .output()
        .expect("the fake onstat runs here");
    assert_eq!(out.stdout, String::from_utf8_lossy(&here.stdout));
    assert_eq!(out.stderr, "", "{out:?}");
    let parsed = Source::OnstatU.parse(out).expect("parses");
    assert_eq!(parsed.get::<OnstatU>().expect("-u").threads.len(), 4);
    // A failing command keeps its own stderr and exit code, nothing else.
    let fail = Request::Command(vec!["onstat".into(), "-z".into()]);
    let out = run(&r, &fail).await.expect("runs");
    assert_eq!(out.exit, Some(1));
    assert_eq!(out.stderr, "onstat: invalid option -z\n", "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
    // A file is read byte for byte, a last line without its newline too.
    let file = sshd.path().join("numa meminfo");
    std::fs::write(&file, "Node 0 MemTotal:  1024 kB\nNode 0 MemFree:  512 kB").expect("file");
    let out = run(&r, &Request::ReadFile(file)).await.expect("read");
    assert_eq!(
        out.stdout,
        "Node 0 MemTotal:  1024 kB\nNode 0 MemFree:  512 kB"
    );
    // What a command is fed arrives as it is, however it looks.
    let sql = "select 1 from systables;\n'$HOME' `id` \"x\"\nEOF\n";
    let fed = Request::CommandInput {
        argv: vec!["cat".into()],
        stdin: sql.into(),
    };
    let out = r.run(&fed, Duration::from_secs(20)).await.expect("runs");
    assert_eq!(out.stdout, sql);
    assert_eq!(sshd.logins(), 1, "{}", sshd.log());
}
