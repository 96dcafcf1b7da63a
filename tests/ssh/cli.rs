//! `ifxtop snapshot --ssh` as a user runs it, against the loopback sshd: the report names the
//! remote host and the server given (shell metacharacters and all), one connection carries the
//! whole snapshot, and a recording made over ssh replays to the same report.

use crate::sshd::{self, Sshd};
use std::process::{Command, Output};

fn ifxtop(sshd: &Sshd, server: &str, args: &[&str]) -> Output {
    let mut all = vec!["--port", "9088"];
    all.extend_from_slice(args);
    ifxtop_bare(sshd, server, &all)
}

/// Without a listener port: ifxtop reads it from the remote sqlhosts file.
fn ifxtop_bare(sshd: &Sshd, server: &str, args: &[&str]) -> Output {
    let home = sshd.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .arg("snapshot")
        .arg("--ssh")
        .arg(sshd.target())
        .arg("--ssh-config")
        .arg(sshd.client_config())
        .arg("--ssh-path")
        .arg(sshd.bin())
        .arg("--server")
        .arg(server)
        .args(args)
        .env("HOME", &home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env_remove("INFORMIXSERVER")
        .env_remove("IFXTOP_SSH_CONFIG")
        .output()
        .expect("ifxtop runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn snapshot_over_ssh_reports_the_remote_instance() {
    if !sshd::available("snapshot_over_ssh_reports_the_remote_instance") {
        return;
    }
    let sshd = Sshd::start();
    let server = "ol'; touch /tmp/pwned_$$; echo '$(id)";
    let pwned_before = sshd::pwned_in_tmp();
    let out = ifxtop(&sshd, server, &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.contains(&format!("host {}", sshd::REMOTE_HOST)),
        "{first}"
    );
    assert!(first.contains(&format!("server {server}")), "{first}");
    assert!(first.contains("12.10.FC8 On-Line"), "{first}");
    assert!(
        stdout.contains("blocked by sid 813, head blocker sid 812"),
        "{stdout}"
    );
    // The server name reached onstat as given, and the head's SQL was asked for remotely.
    let seen = std::fs::read_to_string(sshd.bin().join("server-seen")).expect("onstat ran");
    assert_eq!(seen, server);
    let calls = sshd.fake.calls();
    assert!(calls.contains("onstat -g sql 812"), "{calls}");
    assert!(calls.contains("oncheck -pe"), "{calls}");
    assert_eq!(
        sshd::pwned_in_tmp(),
        pwned_before,
        "a server name ran a command"
    );
    // Every source, one connection.
    assert_eq!(sshd.logins(), 1, "{}", sshd.log());
}

#[test]
fn a_recording_made_over_ssh_replays_to_the_same_report() {
    if !sshd::available("a_recording_made_over_ssh_replays_to_the_same_report") {
        return;
    }
    let sshd = Sshd::start();
    let rec = sshd.path().join("over-ssh.jsonl");
    let rec_arg = rec.display().to_string();
    let out = ifxtop(
        &sshd,
        "ol_remote",
        &["--format", "json", "--record", &rec_arg],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let live: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(live["host"], sshd::REMOTE_HOST);
    let header: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&rec)
            .expect("recording")
            .lines()
            .next()
            .expect("header"),
    )
    .expect("header JSON");
    assert_eq!(header["host"], sshd::REMOTE_HOST, "{header}");
    assert_eq!(header["server"], "ol_remote", "{header}");
    let replayed = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(["snapshot", "--format", "json", "--replay", &rec_arg])
        .output()
        .expect("ifxtop runs");
    assert_eq!(
        replayed.status.code(),
        Some(0),
        "{}",
        text(&replayed.stderr)
    );
    let again: serde_json::Value = serde_json::from_slice(&replayed.stdout).expect("JSON");
    assert_eq!(again["host"], live["host"]);
    assert_eq!(again["heads"], live["heads"]);
    assert_eq!(again["waiters"], live["waiters"]);
}

#[test]
fn an_unreachable_host_fails_at_once_with_what_ssh_said() {
    if !sshd::available("an_unreachable_host_fails_at_once_with_what_ssh_said") {
        return;
    }
    let mut sshd = Sshd::start();
    sshd.kill();
    let out = ifxtop(&sshd, "ol", &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("--ssh {}: ssh: ", sshd.target()))
            && stderr.contains("Connection refused"),
        "{stderr}"
    );
}

#[test]
fn ssh_values_that_could_be_options_are_refused() {
    for bad in [
        "--ssh=-oProxyCommand=touch /tmp/pwned_proxy",
        "--ssh=db01:0",
        "--ssh=db 01",
        "--ssh=",
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
            .args(["snapshot", "--server", "ol", bad])
            .output()
            .expect("ifxtop runs");
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("--ssh"), "{}", text(&out.stderr));
    }
    assert!(!std::path::Path::new("/tmp/pwned_proxy").exists());
    // --ssh with --demo makes no sense.
    let out = Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(["snapshot", "--demo", "--ssh", "db01"])
        .output()
        .expect("ifxtop runs");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn listener_ports_come_from_the_remote_sqlhosts_named_by_ssh_env() {
    if !sshd::available("listener_ports_come_from_the_remote_sqlhosts_named_by_ssh_env") {
        return;
    }
    let sshd = Sshd::start();
    let sqlhosts = sshd.path().join("my sqlhosts 'x'");
    std::fs::write(
        &sqlhosts,
        "ol_remote onsoctcp db-remote-01 9123\nol_other onsoctcp db-remote-01 9200\n",
    )
    .expect("sqlhosts");
    let rec = sshd.path().join("ports.jsonl");
    let env = format!("INFORMIXSQLHOSTS={}", sqlhosts.display());
    let out = ifxtop_bare(
        &sshd,
        "ol_remote",
        &["--ssh-env", &env, "--record", &rec.display().to_string()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let header: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&rec)
            .expect("recording")
            .lines()
            .next()
            .expect("header"),
    )
    .expect("header JSON");
    assert_eq!(header["ports"], serde_json::json!([9123]), "{header}");
    // Without the variable the remote shell has no sqlhosts: no port, and still a report (a
    // recording of its own: an existing one is never overwritten).
    let rec = sshd.path().join("ports-without-env.jsonl");
    let out = ifxtop_bare(
        &sshd,
        "ol_remote",
        &["--record", &rec.display().to_string()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let header: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&rec)
            .expect("recording")
            .lines()
            .next()
            .expect("header"),
    )
    .expect("header JSON");
    // (An empty list is left out of the header.)
    assert!(
        header["ports"].is_null() || header["ports"] == serde_json::json!([]),
        "{header}"
    );
}
