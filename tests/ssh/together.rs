//! Watch together, as the done-when has it: a real collector (`ifxtop serve --share`
//! on the lock chain's instance, a fake `onstat` on PATH answering `onstat -i` as the real one
//! and logging every process) and viewers over a real sshd on loopback and over HTTPS with
//! basic auth: two on the wire (the same transports `ifxtop --attach` opens) and two
//! `ifxtop --attach` screens in tmux. Both screens show the lock chain's finding; every
//! viewer is in the presence list; a mark from one reaches the other; what the collector's
//! onstat printed reaches each viewer within a second of its end; with one screen drilled
//! into session 812 the collector still runs one `onstat -i` a tick and nothing else; a
//! screen pauses (space) and comes back to the live end.

use crate::common::feed::{wait_for, web_config, Lines, PASSWORD, USER};
use crate::common::pki::pki;
use crate::screen::Tmux;
use crate::sshd::{self, Sshd};
use ifxtop::source::attach::{open, AttachTarget};
use ifxtop::source::attach_http::{self, Credentials, HttpOptions, HttpTarget};
use ifxtop::source::ssh::SshTarget;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The fake's `i:` log lines: the options, when it started and when it had printed them all.
fn interactive_runs(calls: &str) -> Vec<(String, f64, f64)> {
    calls
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("i: ")?;
            let (opts, times) = rest.split_once(" start=")?;
            let (start, done) = times.split_once(" done=")?;
            Some((opts.to_string(), start.parse().ok()?, done.parse().ok()?))
        })
        .collect()
}

fn secs(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64()
}

#[test]
fn two_viewers_over_ssh_and_https_watch_one_collector_together() {
    if !sshd::available("two_viewers_over_ssh_and_https_watch_one_collector_together")
        || !crate::common::have("tmux", "tmux", "watch together's screens")
    {
        return;
    }
    let sshd = Sshd::start();
    sshd.fake.interactive();
    let dir = tempfile::tempdir().expect("dir");
    let pki = pki(dir.path());
    let web = web_config(dir.path(), &pki);
    let sock = dir.path().join("feed.sock");
    let home = sshd.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let path = format!(
        "{}:{}",
        sshd.bin().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The collector: serve on the lock chain's instance, sharing on a socket and over HTTPS.
    let mut serve = Command::new(bin);
    serve
        .args(["serve", "--server", "ol_lock", "--port", "9088"])
        .args(["--web.listen-address", "127.0.0.1:0", "--web.config.file"])
        .arg(&web)
        .arg("--share")
        .arg(&sock)
        .env("PATH", &path)
        .env("HOME", &home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env_remove("INFORMIXSERVER")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = serve.spawn().expect("serve");
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let _serve = Killed(child);
    let mut line = String::new();
    while !line.contains("://") {
        assert!(
            err.read_line(&mut line).expect("serve's line") > 0,
            "{line}"
        );
    }
    let port: u16 = line
        .split("://127.0.0.1:")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    wait_for("the socket", || sock.exists());

    // Two viewers on the wire: over ssh (`ssh HOST ifxtop attach SOCK`) and over HTTPS.
    let ssh_target = AttachTarget::Ssh(SshTarget::parse(&sshd.target()).expect("target"));
    let over_ssh = open(
        &ssh_target,
        Some(&sshd.client_config()),
        bin,
        Some(&sock.display().to_string()),
    )
    .expect("ssh");
    let ssh_lines = Lines::read(over_ssh.from);
    let mut to_ssh = over_ssh.to;
    let url = format!("https://{USER}@127.0.0.1:{port}");
    let over_https = attach_http::open(
        &HttpTarget::parse(&url).expect("url"),
        &HttpOptions {
            ca: Some(pki.ca.clone()),
            credentials: Some(Credentials {
                user: USER.into(),
                password: PASSWORD.into(),
            }),
        },
    )
    .expect("https");
    let https_lines = Lines::read(over_https.from);
    let mut to_https = over_https.to;

    // Two screens: `ifxtop --attach` over ssh and over HTTPS (the password from the
    // environment, never the command line).
    let env = [
        ("HOME", home.display().to_string()),
        ("XDG_CACHE_HOME", home.join("cache").display().to_string()),
    ];
    let ssh_screen = Tmux::start(
        &format!(
            "{bin} --attach {} --ssh-config {} --attach-socket {} --attach-ifxtop {bin}; sleep 30",
            sshd.target(),
            sshd.client_config().display(),
            sock.display()
        ),
        &env,
    )
    .expect("tmux");
    let mut https_env = env.to_vec();
    https_env.push(("IFXTOP_ATTACH_PASSWORD", PASSWORD.to_string()));
    let https_screen = Tmux::start(
        &format!(
            "{bin} --attach {url} --attach-ca {}; sleep 30",
            pki.ca.display()
        ),
        &https_env,
    )
    .expect("tmux");

    // Both screens show the lock chain's finding, and say whom they follow.
    for s in [&ssh_screen, &https_screen] {
        s.wait_for("lock chain");
        s.wait_for("ATTACHED");
    }
    // Every viewer in the presence list: two on the socket (through sshd, from 127.0.0.1) and
    // two over HTTPS as the user their password proved.
    for l in [&ssh_lines, &https_lines] {
        wait_for("four in the presence list", || {
            l.any(|p| {
                p.contains("\"viewers\"")
                    && p.matches("\"via\":\"socket\"").count() == 2
                    && p.matches("\"via\":\"http\"").count() == 2
                    && p.matches(&format!("\"user\":\"{USER}\"")).count() == 2
                    && p.contains("\"host\":\"127.0.0.1\"")
            })
        });
    }
    // A mark from each reaches the other, signed by who sent it as the collector knows them.
    to_ssh
        .write_all(b"{\"mark\":{\"at\":1.0,\"text\":\"sid 812 holds the chain\"}}\n")
        .and_then(|()| to_ssh.flush())
        .expect("mark over ssh");
    to_https
        .write_all(b"{\"mark\":{\"at\":2.0,\"text\":\"look at customer\"}}\n")
        .and_then(|()| to_https.flush())
        .expect("mark over https");
    wait_for("the ssh viewer's mark over https", || {
        https_lines.has("sid 812 holds the chain")
    });
    wait_for("the https viewer's mark over ssh", || {
        ssh_lines.has(&format!("\"text\":\"look at customer\",\"by\":\"{USER}\""))
    });
    // A mark made on a viewer's screen (`b`, a note, Enter) goes to its collector, which
    // sends it to every viewer.
    https_screen.keys(&["b"]);
    https_screen.wait_for("Enter marks");
    https_screen.keys(&["screen-mark-812", "Enter"]);
    wait_for("the screen's mark at the other viewer", || {
        ssh_lines.has("screen-mark-812")
    });

    // Within a second: the sessions change (815's user becomes `tk0001`); the first onstat -i
    // after that prints it; each wire viewer has that output less than a second after the
    // process that printed it ended.
    let changed_at = secs(SystemTime::now());
    sshd.fake.answer(
        "-u",
        &format!("\n{}", sshd::U.replace("report  ", "tk0001  ")),
    );
    for l in [&ssh_lines, &https_lines] {
        wait_for("the change", || l.has("tk0001"));
    }
    let runs = interactive_runs(&sshd.fake.calls());
    let (_, _, done) = runs
        .iter()
        .find(|(opts, start, _)| *start > changed_at && opts.split(',').any(|o| o == "u"))
        .expect("an onstat -i with u after the change");
    for (name, l) in [("ssh", &ssh_lines), ("https", &https_lines)] {
        let got = secs(l.when("tk0001").expect("seen"));
        let behind = got - done;
        eprintln!("{name}: the change {behind:.3} s after its onstat -i ended");
        assert!(
            (0.0..1.0).contains(&behind),
            "{name}: {behind:.3} s after the collector's onstat ended"
        );
    }

    // One screen drills into session 812: the collector reads it for that viewer, within the
    // tick's one onstat -i, and runs nothing else.
    let read_812 = |calls: &str| {
        interactive_runs(calls)
            .iter()
            .filter(|(opts, _, _)| opts.split(',').any(|o| o == "g ses 812"))
            .count()
    };
    assert_eq!(
        read_812(&sshd.fake.calls()),
        0,
        "812 read before anyone drilled"
    );
    https_screen.keys(&["#"]);
    https_screen.keys(&["8", "1", "2", "Enter"]);
    wait_for("the session read for the viewer", || {
        read_812(&sshd.fake.calls()) > 0
    });
    https_screen.wait_for("812");
    let before = sshd.fake.calls().lines().count();
    let from = Instant::now();
    std::thread::sleep(Duration::from_secs(10));
    let calls = sshd.fake.calls();
    let elapsed = from.elapsed().as_secs_f64();
    let new: Vec<&str> = calls
        .lines()
        .skip(before)
        .filter(|l| l.starts_with("onstat "))
        .collect();
    assert!(
        new.iter().all(|l| l.starts_with("onstat -i ")),
        "only onstat -i runs: {new:?}"
    );
    assert!(
        !new.is_empty() && new.len() as f64 <= elapsed.ceil() + 1.0,
        "{} onstat processes in {elapsed:.1} s",
        new.len()
    );
    let drilled = interactive_runs(&calls)
        .iter()
        .skip_while(|(_, start, _)| *start < secs(SystemTime::now()) - elapsed)
        .filter(|(opts, _, _)| opts.split(',').any(|o| o == "g ses 812"))
        .count();
    assert!(drilled > 0, "812 still read for the viewer:\n{calls}");
    eprintln!(
        "{} onstat processes in {elapsed:.1} s with a screen drilled into 812 ({drilled} of them read it)",
        new.len()
    );

    // A viewer pauses (space, as the live screen freezes): its moment stays while the feed
    // goes on, and space again takes it back to the live end.
    let clock = |screen: &str| -> String {
        let head = screen.lines().next().unwrap_or_default();
        head.split_whitespace()
            .find(|w| w.len() == 8 && w.as_bytes()[2] == b':' && w.as_bytes()[5] == b':')
            .unwrap_or_else(|| panic!("no clock in {head:?}"))
            .to_string()
    };
    ssh_screen.keys(&["Space"]);
    let frozen = ssh_screen.wait_for("FROZEN");
    assert!(frozen.contains("ATTACHED"), "{frozen}");
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        clock(&ssh_screen.screen()),
        clock(&frozen),
        "the moment stays"
    );
    ssh_screen.keys(&["Space"]);
    let live = ssh_screen.wait_for("RUNNING");
    assert_ne!(clock(&live), clock(&frozen), "back to the live end");
    drop(over_ssh.keep);
    drop(over_https.keep);
}
