//! The live screen over ssh, seen in tmux as a DBA sees it: the same panes as a local run of
//! the same instance, and a fleet of two servers on one ssh host.

use crate::sshd::{self, Sshd};
use std::process::Command;
use std::time::{Duration, Instant};

/// A detached tmux session on a server of its own (`-L`), killed on drop.
pub(crate) struct Tmux {
    socket: String,
}

impl Tmux {
    pub(crate) fn start(cmd: &str, env: &[(&str, String)]) -> Option<Tmux> {
        if !crate::common::have("tmux", "tmux", "the screen over ssh") {
            return None;
        }
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let socket = format!("ifxtop-ssh-{}-{n}", std::process::id());
        let mut c = Command::new("tmux");
        c.args(["-L", &socket, "new-session", "-d", "-x", "120", "-y", "30"])
            .arg(cmd)
            .env("NO_COLOR", "1")
            .env_remove("INFORMIXSERVER")
            .env_remove("IFXTOP_SSH_CONFIG");
        for (k, v) in env {
            c.env(k, v);
        }
        assert!(c.status().expect("tmux").success());
        Some(Tmux { socket })
    }

    pub(crate) fn keys(&self, keys: &[&str]) {
        Command::new("tmux")
            .args(["-L", &self.socket, "send-keys"])
            .args(keys)
            .status()
            .expect("send-keys");
    }

    pub(crate) fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p"])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(crate) fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            // The same screen a moment later: not a capture halfway through a frame.
            if s.contains(needle) {
                std::thread::sleep(Duration::from_millis(100));
                if self.screen() == s {
                    return s;
                }
            }
            assert!(
                start.elapsed() < Duration::from_secs(40),
                "screen never showed {needle:?}:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// The Waiters pane's rows, reduced to what does not move from one second to the next: sid,
/// user, wait and what it waits on.
fn waiter_rows(screen: &str) -> Vec<String> {
    let lines: Vec<&str> = screen.lines().collect();
    let Some(head) = lines.iter().position(|l| l.contains("WAITING ON")) else {
        return Vec::new();
    };
    let mut rows: Vec<String> = lines[head + 1..]
        .iter()
        .take_while(|l| !l.trim().is_empty() && !l.starts_with(" q quit"))
        .map(|l| {
            l.chars()
                .take(55)
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn the_live_screen_over_ssh_shows_what_a_local_run_shows() {
    if !sshd::available("the_live_screen_over_ssh_shows_what_a_local_run_shows") {
        return;
    }
    let sshd = Sshd::start();
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let home = sshd.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let env = [
        ("HOME", home.display().to_string()),
        ("XDG_CACHE_HOME", home.join("cache").display().to_string()),
    ];
    let local_path = format!(
        "{}:{}",
        sshd.bin().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let Some(local) = Tmux::start(
        &format!("{bin} --server ol_lock --port 9088; sleep 30"),
        &[env[0].clone(), env[1].clone(), ("PATH", local_path)],
    ) else {
        return;
    };
    let remote = Tmux::start(
        &format!(
            "{bin} --ssh {} --ssh-config {} --ssh-path {} --server ol_lock --port 9088; sleep 30",
            sshd.target(),
            sshd.client_config().display(),
            sshd.bin().display()
        ),
        &env,
    )
    .expect("tmux");
    for t in [&local, &remote] {
        t.wait_for("HDR+X");
        t.keys(&["2"]);
        t.wait_for("IN WAIT");
    }
    let (l, r) = (local.screen(), remote.screen());
    assert!(r.contains(&format!("@{}", sshd::REMOTE_HOST)), "{r}");
    let (lr, rr) = (waiter_rows(&l), waiter_rows(&r));
    assert!(!lr.is_empty(), "{l}");
    assert_eq!(lr, rr, "local:\n{l}\nover ssh:\n{r}");
    // The same blocker tree.
    for t in [&local, &remote] {
        t.keys(&["t"]);
        t.wait_for("HEAD sid 812");
    }
    let tree = |s: &str| -> Vec<String> {
        s.lines()
            // The tree's rows, not the line above the panes (its age ticks between the two
            // screens' captures).
            .filter(|l| l.contains("sid 81") && !l.contains("lock chain"))
            .map(|l| l.split("  ").next().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(tree(&local.screen()), tree(&remote.screen()));
    assert_eq!(sshd.logins(), 1, "one connection:\n{}", sshd.log());
}

#[test]
fn a_fleet_of_two_servers_on_one_ssh_host() {
    if !sshd::available("a_fleet_of_two_servers_on_one_ssh_host") {
        return;
    }
    let sshd = Sshd::start();
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let home = sshd.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let Some(t) = Tmux::start(
        &format!(
            "{bin} --ssh {} --ssh-config {} --ssh-path {} --server ol_a,ol_b --port 9088; \
             echo IFXTOP-EXIT=$?; sleep 30",
            sshd.target(),
            sshd.client_config().display(),
            sshd.bin().display()
        ),
        &[
            ("HOME", home.display().to_string()),
            ("XDG_CACHE_HOME", home.join("cache").display().to_string()),
        ],
    ) else {
        return;
    };
    let s = t.wait_for("fleet  2 instances");
    let host = sshd::REMOTE_HOST;
    let s = if s.matches("On-Line").count() >= 2 {
        s
    } else {
        let start = Instant::now();
        loop {
            let s = t.screen();
            if s.matches("On-Line").count() >= 2 {
                break s;
            }
            assert!(start.elapsed() < Duration::from_secs(40), "{s}");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    assert!(s.contains(&format!("ol_a@{host}")), "{s}");
    assert!(s.contains(&format!("ol_b@{host}")), "{s}");
    // Both servers' onstat ran remotely, each with its own INFORMIXSERVER.
    let calls = sshd.fake.calls();
    assert!(calls.contains("INFORMIXSERVER=ol_a"), "{calls}");
    assert!(calls.contains("INFORMIXSERVER=ol_b"), "{calls}");
    t.keys(&["Down", "Enter"]);
    t.wait_for(&format!("ol_b@{host}  "));
    t.keys(&["Escape"]);
    t.wait_for("fleet  2 instances");
    t.keys(&["q"]);
    t.wait_for("IFXTOP-EXIT=0");
}
