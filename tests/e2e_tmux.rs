//! End to end: `ifxtop --demo` in a detached tmux session at 80x24, as a DBA sees it: visit every
//! pane, open the help, read the screen with `capture-pane`, quit with `q`, and check the shell
//! got its terminal back. Needs tmux (`./test` installs it); outside CI a missing tmux skips
//! with a message, in CI it fails.

#[path = "common/mod.rs"]
mod common;

use std::process::Command;
use std::time::{Duration, Instant};

struct Tmux {
    name: String,
}

/// tmux on a server of this test run's own (`-L`): nothing else's sessions are touched, and
/// nothing else can kill these.
fn tmux() -> Command {
    let mut c = Command::new("tmux");
    c.args(["-L", &format!("ifxtop-e2e-{}", std::process::id())]);
    c
}

impl Tmux {
    fn start(cmd: &str, w: u16, h: u16) -> Option<Tmux> {
        if !common::have("tmux", "tmux", "the end-to-end tests") {
            return None;
        }
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("ifxtop-e2e-{}-{n}", std::process::id());
        let status = tmux()
            .args([
                "new-session",
                "-d",
                "-s",
                &name,
                "-x",
                &w.to_string(),
                "-y",
                &h.to_string(),
            ])
            .arg(cmd)
            .env("NO_COLOR", "1")
            .status()
            .expect("tmux new-session");
        assert!(status.success(), "tmux new-session failed");
        Some(Tmux { name })
    }

    fn keys(&self, keys: &[&str]) {
        let status = tmux()
            .args(["send-keys", "-t", &self.name])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    fn screen(&self) -> String {
        let out = tmux()
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen shows `needle` (the TUI draws asynchronously), and the same
    /// screen a moment later: a capture can catch tmux halfway through a frame (the new pane's
    /// top drawn, the old one's rows below it).
    fn wait_for(&self, needle: &str, within: Duration) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(needle) {
                std::thread::sleep(Duration::from_millis(100));
                if self.screen() == s {
                    return s;
                }
            }
            assert!(
                start.elapsed() < within,
                "screen never showed {needle:?}; last screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Tmux {
    /// The screen with its colours and attributes as escape sequences.
    fn screen_escaped(&self) -> String {
        let out = tmux()
            .args(["capture-pane", "-p", "-e", "-t", &self.name])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = tmux().args(["kill-session", "-t", &self.name]).status();
    }
}

#[test]
fn demo_at_80x24_every_pane_help_and_quit() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    // At 16 s the demo's first incident (an insert hot spot) has begun, so the Buffers pane
    // has rows within a second or two (from the start it waits the 15 s of calm first).
    let cmd = format!("{bin} --demo --demo-at 16; echo IFXTOP-EXIT=$?; sleep 30");
    let Some(t) = Tmux::start(&cmd, 80, 24) else {
        return;
    };
    let wait = Duration::from_secs(20);
    // Sessions first, as top lists processes first: every session and its state.
    let s = t.wait_for("STATE", wait);
    assert!(s.contains("1 Sessions"), "{s}");
    assert!(s.contains("On-Line"), "banner parsed: {s}");
    assert!(s.contains(" ses: "), "{s}");
    let lines: Vec<&str> = s.lines().collect();
    assert!(
        lines.len() <= 24 && lines.iter().all(|l| l.chars().count() <= 80),
        "{s}"
    );
    // The footer names the tree, the idle filter and opening a session by number.
    assert!(
        s.contains("# sid") && s.contains("t tree") && s.contains("i idle"),
        "{s}"
    );

    // Waiters: the summary line of wait letters and a table of waiting sessions.
    t.keys(&["2"]);
    let s = t.wait_for("IN WAIT", wait);
    assert!(s.contains("WAITING ON"), "{s}");

    t.keys(&["3"]);
    let s = t.wait_for("OBJECT", wait);
    assert!(s.contains("buffer waits"), "{s}");

    t.keys(&["4"]);
    let s = t.wait_for("SEND-Q", wait);
    // The summary line: `port 9088 · 297 connections · 5 with Send-Q · 336 KB queued`.
    assert!(s.contains(" connections · "), "{s}");

    t.keys(&["5"]);
    let s = t.wait_for("zone_reclaim_mode", wait);
    assert!(s.contains("NODE"), "{s}");

    // Server: the vital signs (profile rates, logs, VPs, mutexes, memory).
    t.keys(&["6"]);
    // (Waiting for the lower of the two: a capture can catch the terminal mid-redraw, the
    // pane's top drawn and the NUMA pane's rows still below it.)
    let s = t.wait_for("LOGICAL LOGS", wait);
    assert!(s.contains("PROFILE"), "{s}");

    // I/O & HA: each chunk with its device, the replication peers (at the demo's start the
    // device rates need two diskstats 5 s apart).
    t.keys(&["7"]);
    let s = t.wait_for("CHK DBSPACE", wait);
    assert!(s.contains("REPLICATION  primary"), "{s}");
    let s = t.wait_for("ol_dr1      RSS", wait);
    assert!(s.lines().all(|l| l.chars().count() <= 80), "{s}");

    // Activity: database time stacked by class, the classes' table; g groups by session.
    t.keys(&["8"]);
    let s = t.wait_for("DB TIME 5 min", wait);
    assert!(s.contains("CLASS") && s.contains("cpu"), "{s}");
    t.keys(&["g"]);
    let s = t.wait_for("by sql", wait);
    assert!(s.lines().all(|l| l.chars().count() <= 80), "{s}");

    // Tab moves on from the last pane to the first (the Sessions pane's summary line; the
    // I/O pane has a STATE column too).
    t.keys(&["Tab"]);
    t.wait_for(" ses: ", wait);

    t.keys(&["?"]);
    let s = t.wait_for("ifxtop help", wait);
    assert!(s.contains("freeze"), "{s}");
    // Esc and Space in one write, as a quick typist's keys arrive over ssh: the terminal reads
    // them as Alt-Space, which must still close the help and then freeze.
    t.keys(&["Escape", "Space"]);
    t.wait_for("FROZEN", wait);
    t.keys(&["Space"]);
    t.wait_for("RUNNING", wait);

    // q in the help closes the help, it does not quit.
    t.keys(&["?"]);
    t.wait_for("ifxtop help", wait);
    t.keys(&["q"]);
    let s = t.wait_for("STATE", wait);
    assert!(!s.contains("ifxtop help"), "{s}");

    t.keys(&["q"]);
    let s = t.wait_for("IFXTOP-EXIT=0", wait);
    // The alternate screen is gone: the shell's own output is what remains.
    assert!(
        !s.contains("WAITING ON"),
        "TUI left on screen after quit:\n{s}"
    );
}

/// `TERM=xterm` (8 colours) in a C locale: the basic colour codes, never the 256-colour form,
/// and ASCII glyphs: the help's corners are `+`, not `?`.
#[test]
fn an_8_colour_c_locale_terminal_gets_basic_colours_and_ascii() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let cmd =
        format!("env -u NO_COLOR -u COLORTERM TERM=xterm LANG=C LC_ALL=C {bin} --demo; sleep 30");
    let Some(t) = Tmux::start(&cmd, 80, 24) else {
        return;
    };
    let wait = Duration::from_secs(20);
    t.wait_for("STATE", wait);
    let s = t.screen_escaped();
    assert!(!s.contains("38;5;"), "256-colour codes on TERM=xterm:\n{s}");
    assert!(s.contains("\x1b[36m"), "no basic colour at all:\n{s}");
    t.keys(&["?"]);
    let s = t.wait_for("ifxtop help", wait);
    let top = s.lines().nth(1).unwrap_or_default().trim();
    assert!(top.starts_with('+') && top.ends_with('+'), "{s}");
    assert!(s.is_ascii() && !top.contains('?'), "{s}");
}

#[test]
fn tiny_terminal_gets_a_readable_message() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let cmd = format!("{bin} --demo; echo IFXTOP-EXIT=$?; sleep 30");
    let Some(t) = Tmux::start(&cmd, 40, 10) else {
        return;
    };
    let s = t.wait_for("needs a terminal", Duration::from_secs(20));
    assert!(s.contains("40x10"), "{s}");
    t.keys(&["q"]);
    t.wait_for("IFXTOP-EXIT=0", Duration::from_secs(20));
}

/// The ifxtop process running in the session's pane (a child of the pane's shell).
fn ifxtop_pid(t: &Tmux) -> Option<String> {
    let out = tmux()
        .args(["list-panes", "-t", &t.name, "-F", "#{pane_pid}"])
        .output()
        .ok()?;
    let shell = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).ok()?;
    children
        .split_whitespace()
        .find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "ifxtop")
        })
        .map(String::from)
}

#[test]
fn sigterm_and_sighup_restore_the_terminal() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    for (signal, code) in [("TERM", 143), ("HUP", 129)] {
        let cmd = format!("{bin} --demo; echo IFXTOP-EXIT=$?; stty -a | grep -o -- '-icanon' ; echo STTY-DONE; sleep 30");
        let Some(t) = Tmux::start(&cmd, 80, 24) else {
            return;
        };
        t.wait_for("1 Sessions", Duration::from_secs(20));
        let pid = ifxtop_pid(&t).expect("ifxtop runs in the pane");
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .expect("kill");
        assert!(status.success());
        let s = t.wait_for("STTY-DONE", Duration::from_secs(20));
        assert!(s.contains(&format!("IFXTOP-EXIT={code}")), "{signal}: {s}");
        // Raw mode is off again: the terminal is back in canonical mode.
        assert!(
            !s.contains("-icanon"),
            "{signal}: terminal left in raw mode:\n{s}"
        );
        assert!(
            !s.contains("WAITING ON"),
            "{signal}: TUI left on screen:\n{s}"
        );
    }
}

/// The lock chain of the demo's timeline (275 s in): the tree view shows the head blocker, Enter
/// drills into a waiter whose session screen names its blocker and SQL, Enter on the blocker
/// drills further, Esc comes back.
#[test]
fn demo_lock_chain_tree_and_drill_down() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let cmd = format!("{bin} --demo --demo-at 280; echo IFXTOP-EXIT=$?; sleep 30");
    let Some(t) = Tmux::start(&cmd, 80, 24) else {
        return;
    };
    let wait = Duration::from_secs(20);
    t.wait_for("lock chain", wait);
    t.wait_for("HDR+X", wait);
    // t shows the blocker tree of the Waiters pane from any pane.
    t.keys(&["t"]);
    let s = t.wait_for("HEAD sid 812", wait);
    // Each waiter under its direct blocker: 814 waits on 813, not on 815.
    assert!(s.contains("├ sid 813"), "{s}");
    assert!(s.contains("│ └ sid 814"), "{s}");
    assert!(s.contains("└ sid 815"), "{s}");
    // The first waiter under the head: 813 (the head's own line is selectable: one down).
    t.keys(&["Down"]);
    t.keys(&["Enter"]);
    let s = t.wait_for("session 813", wait);
    assert!(s.contains("VERDICT"), "{s}");
    assert!(s.contains("blocked by sid 812"), "{s}");
    assert!(s.contains("HEAD BLOCKER"), "{s}");
    // The SQL comes from onstat -g sql 813, collected once the session is drilled into.
    let s = t.wait_for("SQL       [stores]", wait);
    assert!(s.contains("THREADS"), "{s}");
    // Enter on the selected blocker drills into 812; Esc goes back to 813, then to the tree.
    t.keys(&["Enter"]);
    let s = t.wait_for("session 812", wait);
    assert!(s.contains("head blocker: holds up 3 sessions"), "{s}");
    assert!(s.contains("onmode -z 812"), "{s}");
    t.keys(&["Escape"]);
    t.wait_for("session 813", wait);
    t.keys(&["Escape"]);
    t.wait_for("HEAD sid 812", wait);
    t.keys(&["q"]);
    t.wait_for("IFXTOP-EXIT=0", wait);
}

/// `--record` on the demo, then `--replay` of that file: the same screens come back, and
/// `snapshot --replay` reads it too.
#[test]
fn record_then_replay() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("incident.jsonl.zst");
    let file = file.display().to_string();
    let cmd = format!("{bin} --demo --demo-at 280 --record {file}; echo IFXTOP-EXIT=$?; sleep 30");
    let Some(t) = Tmux::start(&cmd, 80, 24) else {
        return;
    };
    let wait = Duration::from_secs(20);
    t.wait_for("HDR+X", wait);
    // A few seconds of samples.
    std::thread::sleep(Duration::from_secs(3));
    t.keys(&["q"]);
    let s = t.wait_for("IFXTOP-EXIT=0", wait);
    assert!(!s.contains("WAITING ON"), "{s}");
    let rec =
        ifxtop::collect::record::read_recording(std::path::Path::new(&file)).expect("recording");
    assert!(rec.skipped.is_empty(), "{:?}", rec.skipped);
    assert_eq!(
        rec.header.as_ref().and_then(|h| h.server.as_deref()),
        Some("ol_demo")
    );
    for source in ["onstat -u", "onstat -X", "onstat -g con", "/proc/net/tcp"] {
        assert!(
            rec.sources().any(|s| s.label() == source),
            "no {source} in the recording"
        );
    }

    let cmd = format!("{bin} --replay {file}; echo IFXTOP-EXIT=$?; sleep 30");
    let Some(r) = Tmux::start(&cmd, 80, 24) else {
        return;
    };
    let s = r.wait_for("REPLAY", wait);
    assert!(s.contains("replay"), "{s}");
    r.keys(&["2"]);
    let s = r.wait_for("HDR+X", wait);
    assert!(s.contains("BLOCKER"), "{s}");
    // Pause, then step back and forward one sample.
    r.keys(&["p"]);
    r.wait_for("paused", wait);
    r.keys(&[","]);
    r.keys(&["."]);
    r.keys(&["q"]);
    r.wait_for("IFXTOP-EXIT=0", wait);

    let out = std::process::Command::new(bin)
        .args(["snapshot", "--replay", &file, "--format", "json"])
        .output()
        .expect("snapshot runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let w814 = v["waiters"]
        .as_array()
        .expect("waiters")
        .iter()
        .find(|w| w["sessid"] == 814)
        .expect("814 waits in the recording");
    assert_eq!(w814["head_blocker"], 812);
    assert_eq!(w814["blockers"], serde_json::json!([813, 812]));
}

/// The fleet: two demo instances and an ssh host that refuses connections, at 80x24. The fleet
/// lists all three at once (the failing host says why, the demo lines carry on), Enter opens the
/// selected instance, Esc comes back, q quits cleanly.
#[test]
fn fleet_of_two_demo_instances_and_a_failing_host() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let cmd = format!(
        "{bin} --demo --demo-instances 2 --ssh nobody@127.0.0.1:1 --server ol_far; \
         echo IFXTOP-EXIT=$?; sleep 30"
    );
    let Some(t) = Tmux::start(&cmd, 80, 24) else {
        return;
    };
    let wait = Duration::from_secs(30);
    let s = t.wait_for("fleet  3 instances", wait);
    assert!(s.contains("ol_demo "), "{s}");
    assert!(s.contains("ol_demo2"), "{s}");
    assert!(s.contains("ol_far@127.0.0.1"), "{s}");
    // The failing host says so; the demo instances are on-line meanwhile.
    t.keys(&["End"]);
    let s = t.wait_for("ol_far@127.0.0.1: onstat", wait);
    assert!(s.contains("ssh"), "{s}");
    // It needs a look, and says so without colour: a mark before its name.
    assert!(
        s.lines().any(|l| l.starts_with("! ol_far@127.0.0.1")),
        "{s}"
    );
    assert!(s.matches("On-Line").count() >= 2, "{s}");
    let lines: Vec<&str> = s.lines().collect();
    assert!(
        lines.len() <= 24 && lines.iter().all(|l| l.chars().count() <= 80),
        "{s}"
    );
    // Enter on the second demo instance opens its screens, named in the header.
    t.keys(&["Home", "Down", "Enter"]);
    let s = t.wait_for("demo ol_demo2", wait);
    assert!(s.contains("Esc fleet"), "{s}");
    t.wait_for("STATE", wait);
    t.keys(&["Escape"]);
    t.wait_for("fleet  3 instances", wait);
    t.keys(&["q"]);
    t.wait_for("IFXTOP-EXIT=0", wait);
}

/// Whether the terminal of the pane is in canonical (cooked) mode, asked with `stty` typed at the
/// shell prompt: `-icanon` is raw mode left behind.
fn shell_sees_cooked_mode(t: &Tmux, tag: &str) -> String {
    t.keys(&[
        &format!("stty -a | grep -o -- '-\\?icanon' | sed 's/^/{tag}=/'"),
        "Enter",
    ]);
    // The answer, not the command line typed (which holds `{tag}=` too).
    let start = Instant::now();
    loop {
        let s = t.screen();
        if s.contains(&format!("{tag}=icanon")) || s.contains(&format!("{tag}=-icanon")) {
            return s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "stty never answered:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Ctrl-Z and `kill -TSTP` give the terminal back like any program stopped by the shell (the
/// alternate screen left, cooked mode); `fg` takes it again (raw mode: a key acts without
/// Enter) and repaints the whole screen. `kill -STOP` (which ifxtop cannot see coming), then
/// `fg`, takes the terminal again too. SIGQUIT ends it with 131 and the terminal restored.
#[test]
fn ctrl_z_tstp_and_stop_suspend_and_fg_resumes_raw_and_repainted() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let Some(t) = Tmux::start("bash --norc --noprofile", 80, 24) else {
        return;
    };
    let wait = Duration::from_secs(20);
    // The insert hot spot under way (see above): `3` shows buffer rows.
    t.keys(&[&format!("{bin} --demo --demo-at 16"), "Enter"]);
    t.wait_for("1 Sessions", wait);
    let pid = ifxtop_pid(&t).expect("ifxtop runs in the pane");

    // Ctrl-Z, then kill -TSTP: each time the shell has the terminal, in cooked mode.
    for (round, how) in ["ctrl-z", "tstp"].iter().enumerate() {
        match *how {
            "ctrl-z" => t.keys(&["C-z"]),
            _ => {
                let status = Command::new("kill")
                    .args(["-TSTP", &pid])
                    .status()
                    .expect("kill");
                assert!(status.success());
            }
        }
        let s = t.wait_for("Stopped", wait);
        assert!(!s.contains("1 Sessions"), "{how}: TUI left on screen:\n{s}");
        let s = shell_sees_cooked_mode(&t, &format!("MODE{round}"));
        assert!(
            s.contains(&format!("MODE{round}=icanon")),
            "{how}: the shell got a raw terminal:\n{s}"
        );
        t.keys(&["clear; fg", "Enter"]);
        // The whole screen comes back, the header's first line included (not only what
        // changed since the last frame).
        let s = t.wait_for("RUNNING", wait);
        let first = s.lines().next().unwrap_or_default();
        assert!(
            first.contains("ifxtop demo") && first.contains("On-Line"),
            "{how}: not repainted:\n{s}"
        );
        // Raw mode: `2` switches panes without Enter, `1` back.
        t.keys(&["2"]);
        t.wait_for("IN WAIT", wait);
        t.keys(&["1"]);
        t.wait_for("STATE", wait);
    }

    // SIGSTOP cannot be caught: the shell continues ifxtop in cooked mode; SIGCONT takes the
    // terminal again.
    let status = Command::new("kill")
        .args(["-STOP", &pid])
        .status()
        .expect("kill");
    assert!(status.success());
    std::thread::sleep(Duration::from_millis(500));
    t.keys(&["fg", "Enter"]);
    std::thread::sleep(Duration::from_millis(500));
    t.keys(&["3"]);
    let s = t.wait_for("OBJECT", wait);
    assert!(s.contains("buffer waits"), "{s}");

    // SIGQUIT: exit 131, the terminal restored.
    let status = Command::new("kill")
        .args(["-QUIT", &pid])
        .status()
        .expect("kill");
    assert!(status.success());
    let started = Instant::now();
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(started.elapsed() < wait, "SIGQUIT did not end ifxtop");
        std::thread::sleep(Duration::from_millis(100));
    }
    // `$?` after `fg` is the job's exit status (a stopped job's `; echo` never runs).
    t.keys(&["echo IFXTOP-EXIT=$?", "Enter"]);
    let s = t.wait_for("IFXTOP-EXIT=131", wait);
    assert!(!s.contains("buffer waits"), "TUI left on screen:\n{s}");
    let s = shell_sees_cooked_mode(&t, "AFTER");
    assert!(s.contains("AFTER=icanon"), "terminal left raw:\n{s}");
}

/// A live ifxtop whose `onstat -g con` hangs in a wrapper with a hung child of its own: however
/// ifxtop ends — `q`, SIGTERM, SIGHUP, SIGINT, SIGQUIT — it exits with its code, gives the
/// terminal back, and leaves neither the wrapper nor its child behind.
#[test]
fn every_way_out_leaves_no_onstat_behind() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let dir = tempfile::tempdir().expect("tempdir");
    let fake = dir.path().join("bin");
    std::fs::create_dir_all(&fake).expect("bin");
    for (how, code) in [
        ("q", 0),
        ("TERM", 143),
        ("HUP", 129),
        ("INT", 130),
        ("QUIT", 131),
    ] {
        let marker = format!("ifxtop-e2e-{how}-{}", std::process::id());
        let onstat = format!(
            "#!/bin/sh\n\
             if [ \"$*\" = '-g con' ]; then\n\
               bash -c 'exec -a {marker}-grandchild sleep 1000' &\n\
               exec bash -c 'exec -a {marker} sleep 1000'\n\
             fi\n\
             printf '\\nIBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 1 days 00:00:01 -- 1000 Kbytes\\n\\n'\n\
             exit 5\n"
        );
        let script = fake.join("onstat");
        std::fs::write(&script, onstat).expect("onstat");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let home = dir.path().display();
        let cmd = format!(
            "env PATH={}:/usr/bin:/bin HOME={home} XDG_CACHE_HOME={home}/cache \
             XDG_CONFIG_HOME={home}/config {bin} --server ol_test --port 9088; \
             echo IFXTOP-EXIT=$?; stty -a | grep -o -- '-\\?icanon' | sed 's/^/MODE=/'; sleep 30",
            fake.display()
        );
        let Some(t) = Tmux::start(&cmd, 80, 24) else {
            return;
        };
        let wait = Duration::from_secs(20);
        t.wait_for("1 Sessions", wait);
        let started = Instant::now();
        while crate::common::processes_with(&marker).len() < 2 {
            assert!(
                started.elapsed() < wait,
                "{how}: the hanging onstat never started"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        if how == "q" {
            t.keys(&["q"]);
        } else {
            let pid = ifxtop_pid(&t).expect("ifxtop runs in the pane");
            let status = Command::new("kill")
                .args([&format!("-{how}"), &pid])
                .status()
                .expect("kill");
            assert!(status.success());
        }
        let s = t.wait_for("MODE=", wait);
        assert!(s.contains(&format!("IFXTOP-EXIT={code}")), "{how}: {s}");
        assert!(s.contains("MODE=icanon"), "{how}: terminal left raw:\n{s}");
        let mut left = crate::common::processes_with(&marker);
        for _ in 0..50 {
            if left.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
            left = crate::common::processes_with(&marker);
        }
        assert!(left.is_empty(), "{how}: left behind {left:?}");
    }
}

/// `HH:MM:SS` somewhere in `line`: the wall clock of the title line.
fn has_clock(line: &str) -> bool {
    line.as_bytes().windows(8).any(|w| {
        w.iter().enumerate().all(|(i, b)| match i {
            2 | 5 => *b == b':',
            _ => b.is_ascii_digit(),
        })
    })
}

/// On a call two DBAs match their screens by the wall clock: at 80 columns it stays on the
/// title line in an incident, with the mode's alarm (`CKPT REQ`), `REC` and `FROZEN` shown.
#[test]
fn the_wall_clock_outlives_the_incidents_flags_at_80_columns() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("call.jsonl.zst");
    let cmd = format!(
        "{bin} --demo --demo-at 225 --record {}; echo IFXTOP-EXIT=$?; sleep 30",
        file.display()
    );
    let Some(t) = Tmux::start(&cmd, 80, 24) else {
        return;
    };
    let wait = Duration::from_secs(20);
    let s = t.wait_for("CKPT REQ", wait);
    let title = s.lines().next().unwrap_or_default();
    assert!(title.contains(" REC "), "{s}");
    assert!(has_clock(title), "the clock is gone: {title}");
    t.keys(&["Space"]);
    let s = t.wait_for("FROZEN", wait);
    let title = s.lines().next().unwrap_or_default();
    assert!(
        title.contains("CKPT REQ") && title.contains(" REC ") && title.contains("FROZEN"),
        "{title}"
    );
    assert!(has_clock(title), "the clock is gone: {title}");
    t.keys(&["q"]);
    t.wait_for("IFXTOP-EXIT=0", wait);
}

/// Under `LANG=C` the ASCII stand-ins say what they mean: the data's age is `<=0s` (at most),
/// not `<0s`; the help's keys are `Down/PgDn`, not `v/PgDn` (`v` is a key of its own).
#[test]
fn ascii_fallbacks_say_what_they_mean() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let cmd = format!("LANG=C LC_ALL=C {bin} --demo --demo-at 16; echo IFXTOP-EXIT=$?; sleep 30");
    let Some(t) = Tmux::start(&cmd, 80, 24) else {
        return;
    };
    let wait = Duration::from_secs(20);
    let s = t.wait_for("data <=", wait);
    assert!(s.is_ascii(), "{s}");
    let line2 = s.lines().nth(1).unwrap_or_default();
    assert!(
        !line2.contains("data <0") && !line2.contains("data <1"),
        "{line2}"
    );
    t.keys(&["?"]);
    let s = t.wait_for("help", wait);
    assert!(s.contains("(Down/PgDn)"), "{s}");
    assert!(!s.contains("(v/PgDn)") && !s.contains("v/PgDn"), "{s}");
    assert!(s.contains("Up/Down"), "{s}");
    t.keys(&["Escape"]);
    // The help closed before the next key: an Escape and a `q` arriving together are one
    // Alt+q to the terminal's parser, as they would be for a user typing that fast.
    t.wait_for("by activity", wait);
    t.keys(&["q"]);
    t.wait_for("IFXTOP-EXIT=0", wait);
}

/// `e` writes the whole screen, as `y` copies it: the head blocker's session screen does not
/// fit 80x24 (it says `more lines (PgDn)`), and the exported text holds every section of it,
/// down to its threads.
#[test]
fn e_exports_the_whole_session_screen() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let dir = tempfile::tempdir().expect("tempdir");
    let cmd = format!(
        "cd {} && {bin} --demo --demo-at 285; echo IFXTOP-EXIT=$?; sleep 30",
        dir.path().display()
    );
    let Some(t) = Tmux::start(&cmd, 80, 24) else {
        return;
    };
    let wait = Duration::from_secs(20);
    t.wait_for("lock chain", wait);
    t.keys(&["#", "8", "1", "2", "Enter"]);
    t.wait_for("session 812", wait);
    // Its SQL (read as an active session's) and, after the second onstat -g cpu, its CPU
    // line make the screen longer than the terminal.
    t.wait_for("SQL       [stores]", wait);
    let s = t.wait_for("more lines (PgDn)", wait);
    assert!(
        s.contains("SQL       [stores]"),
        "the screen must show the SQL for this test: {s}"
    );
    t.keys(&["e"]);
    t.wait_for("exported", wait);
    let txt = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "txt"))
        .expect("the exported text");
    let text = std::fs::read_to_string(&txt).expect("read");
    assert!(!text.contains("more lines (PgDn)"), "{text}");
    for section in ["VERDICT", "SQL", "THREADS"] {
        assert!(text.contains(section), "{section}: {text}");
    }
    // The screen's last section is there, and the footer is the last line.
    let last = text.lines().last().unwrap_or_default();
    assert!(last.contains("q quit"), "{text}");
    // The JSON beside it: the lock chain's summary quotes the head blocker's statement whole,
    // as the exported screen's SQL section has it (its lines after the 10-column label).
    let json = txt.with_extension("json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("the JSON")).expect("JSON");
    let mut in_sql = false;
    let mut sql = String::new();
    for l in text.lines() {
        let (label, rest) = l.split_at(l.len().min(10));
        if label.trim() == "SQL" {
            in_sql = true;
        } else if !label.trim().is_empty() {
            in_sql = false;
        }
        if in_sql {
            sql.push(' ');
            sql.push_str(rest);
        }
    }
    let sql = sql.split_whitespace().skip(1).collect::<Vec<_>>().join(" ");
    assert!(sql.starts_with("update "), "{sql}\n{text}");
    let chain = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["kind"] == "lock_chain")
        .expect("the lock chain");
    let summary = chain["summary"].as_str().expect("summary");
    assert!(summary.contains(&sql), "{summary} / {sql}");
    assert!(!summary.contains('…'), "{summary}");
    t.keys(&["q"]);
    t.wait_for("IFXTOP-EXIT=0", wait);
}

/// The checkpoint stall in its flushing phase (`CKPT INP`) blames memory reclaim: at 80 columns
/// the header keeps that "why" (the count of the other findings goes first), and Enter on the
/// finding opens what it blames, the NUMA pane, not the Server pane.
#[test]
fn a_findings_why_outlives_its_count_and_enter_opens_what_it_blames() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let cmd = format!("{bin} --demo --demo-at 240; echo IFXTOP-EXIT=$?; sleep 30");
    let Some(t) = Tmux::start(&cmd, 80, 24) else {
        return;
    };
    let wait = Duration::from_secs(30);
    // In a critical section first (a summary longer than 80 columns), then flushing: the why
    // stays on the line in both.
    let s = t.wait_for("slowed by memory reclaim", wait);
    let line4 = s.lines().nth(3).unwrap_or_default();
    assert!(line4.contains("checkpoint blocked"), "{s}");
    assert!(
        line4.trim_end().ends_with("slowed by memory reclaim"),
        "{s}"
    );
    let s = t.wait_for("checkpoint blocking", wait);
    let line4 = s.lines().nth(3).unwrap_or_default();
    let s = if line4.contains("slowed by memory reclaim") {
        s
    } else {
        t.wait_for("flushing, 40 threads wait, slowed by memory reclaim", wait)
    };
    let line4 = s.lines().nth(3).unwrap_or_default();
    assert!(line4.contains("slowed by memory reclaim"), "{s}");
    t.keys(&["f"]);
    t.wait_for("Enter", wait);
    t.keys(&["Enter"]);
    let s = t.wait_for("zone_reclaim_mode", wait);
    assert!(s.contains("5 NUMA"), "{s}");
    assert!(
        !s.contains("PROFILE (per second"),
        "the Server pane opened: {s}"
    );
    t.keys(&["q"]);
    t.wait_for("IFXTOP-EXIT=0", wait);
}

/// The fleet's mark, its "N need a look" and PROBLEM follow one rule: the third demo instance
/// (600 s into its timeline: the slow device) is marked and counted; at 220 columns PROBLEM has
/// the width its finding needs while INSTANCE and MODE hold no spare blanks.
#[test]
fn the_fleets_mark_count_and_problem_agree() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let cmd = format!("{bin} --demo --demo-instances 3; echo IFXTOP-EXIT=$?; sleep 30");
    let Some(t) = Tmux::start(&cmd, 220, 24) else {
        return;
    };
    let wait = Duration::from_secs(30);
    let s = t.wait_for("slow device", wait);
    let rows: Vec<&str> = s
        .lines()
        .filter(|l| l.contains("ol_demo") && l.contains("On-Line"))
        .collect();
    assert_eq!(rows.len(), 3, "{s}");
    let marked = rows
        .iter()
        .filter(|r| r.starts_with('⚠') || r.starts_with('✖') || r.starts_with('!'))
        .count();
    for r in &rows {
        let has_problem = r.contains('⚠') || r.contains('✖');
        let mark = r.starts_with('⚠') || r.starts_with('✖') || r.starts_with('!');
        assert_eq!(has_problem, mark, "mark and PROBLEM disagree: {r}");
    }
    let slow = rows
        .iter()
        .find(|r| r.contains("slow device"))
        .expect("the slow device");
    assert!(slow.starts_with('⚠') || slow.starts_with('✖'), "{slow}");
    // Its finding whole: nothing cut.
    assert!(!slow.trim_end().ends_with('…'), "PROBLEM is cut: {slow}");
    assert!(
        s.lines()
            .next()
            .unwrap_or_default()
            .contains(&format!("{marked} need a look")),
        "{s}"
    );
    t.keys(&["q"]);
    t.wait_for("IFXTOP-EXIT=0", wait);
}

/// The cost line names ifxtop's own CPU and, apart, its demo's simulation's (in the process), and
/// keeps processes apart from file reads; within the first minute it gives counts, not rates.
#[test]
fn the_cost_line_shows_ifxtops_cpu_and_processes_apart_from_file_reads() {
    let bin = env!("CARGO_BIN_EXE_ifxtop");
    let cmd = format!("{bin} --demo --demo-at 16; echo IFXTOP-EXIT=$?; sleep 30");
    let Some(t) = Tmux::start(&cmd, 160, 48) else {
        return;
    };
    let wait = Duration::from_secs(30);
    t.wait_for("RUNNING", wait);
    // A share of a core needs ten seconds of readings.
    std::thread::sleep(Duration::from_secs(12));
    t.keys(&["6"]);
    let s = t.wait_for("IFXTOP ", wait);
    let line = s
        .lines()
        .find(|l| l.starts_with("IFXTOP "))
        .expect("the IFXTOP line");
    assert!(
        line.contains("ifxtop ") && line.contains("% of a core"),
        "{line}"
    );
    // The demo's simulation runs inside ifxtop: its part is said apart.
    assert!(line.contains(", the demo's simulation "), "{line}");
    assert!(line.contains("% more;"), "{line}");
    assert!(line.contains("onstat (simulated)"), "{line}");
    assert!(line.contains("file reads"), "{line}");
    assert!(
        line.contains("in the first"),
        "no rate before a minute: {line}"
    );
    assert!(!line.contains("calls/min"), "{line}");
    t.keys(&["q"]);
    t.wait_for("IFXTOP-EXIT=0", wait);
}

/// A `serve --demo --demo-at 280 --share SOCKET` of its own (killed when dropped), for viewers.
struct Shared {
    serve: std::process::Child,
    sock: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Shared {
    fn start() -> Shared {
        let dir = tempfile::tempdir().expect("tempdir");
        let sock = dir.path().join("feed.sock");
        let serve = common::feed::serve_sharing(&sock);
        let shared = Shared {
            serve,
            sock,
            _dir: dir,
        };
        let start = Instant::now();
        while !shared.sock.exists() {
            assert!(start.elapsed() < Duration::from_secs(30), "no socket");
            std::thread::sleep(Duration::from_millis(100));
        }
        shared
    }

    /// The shell command of a viewer in tmux: `ifxtop --attach SOCKET`, its exit code said.
    fn viewer(&self) -> String {
        format!(
            "{} --attach {}; echo IFXTOP-EXIT=$?; sleep 30",
            env!("CARGO_BIN_EXE_ifxtop"),
            self.sock.display()
        )
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let _ = self.serve.kill();
        let _ = self.serve.wait();
    }
}

/// The wall clock `HH:MM:SS` of the title line.
fn clock_of(screen: &str) -> String {
    let title = screen.lines().next().unwrap_or_default();
    title
        .as_bytes()
        .windows(8)
        .find(|w| has_clock(&String::from_utf8_lossy(w)))
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .unwrap_or_else(|| panic!("no clock on the title line: {title}"))
}

/// A viewer (`ifxtop --attach SOCKET` of a `serve --demo --share SOCKET`) seeks back over what
/// it received, as a replay seeks: `:` to the first moment received, `.` a step on, the header
/// says how far behind the live end it stands and stays on that moment while the feed goes on;
/// space comes back to the live end.
#[test]
fn a_viewer_seeks_back_over_what_it_received_and_space_is_live_again() {
    let shared = Shared::start();
    let cmd = shared.viewer();
    let Some(t) = Tmux::start(&cmd, 80, 24) else {
        return;
    };
    let wait = Duration::from_secs(30);
    t.wait_for("RUNNING", wait);
    // Some seconds received.
    std::thread::sleep(Duration::from_secs(6));
    let live = clock_of(&t.screen());
    t.keys(&[":"]);
    t.keys(&["0%", "Enter"]);
    let s = t.wait_for("behind the live end", wait);
    assert!(s.contains("BEHIND"), "{s}");
    let first = clock_of(&s);
    assert!(first < live, "the first moment {first} is before {live}");
    // The screen stays on that moment while the feed goes on, further behind.
    std::thread::sleep(Duration::from_secs(2));
    let s = t.screen();
    assert_eq!(clock_of(&s), first, "{s}");
    // Steps on (an `onstat -u` each: the first may be in the same second): a later moment,
    // still behind.
    let mut steps = 0;
    let stepped = loop {
        let s = t.screen();
        if clock_of(&s) != first {
            break s;
        }
        assert!(steps < 5, "the steps never moved: {s}");
        steps += 1;
        t.keys(&["."]);
        std::thread::sleep(Duration::from_secs(1));
    };
    assert!(clock_of(&stepped) > first, "{stepped}");
    assert!(stepped.contains("BEHIND"), "{stepped}");
    // Space: back to the live end.
    t.keys(&["Space"]);
    let s = t.wait_for("back to the live end", wait);
    assert!(!s.contains("BEHIND"), "{s}");
    assert!(clock_of(&s) >= live, "{s}");
    t.keys(&["q"]);
    t.wait_for("IFXTOP-EXIT=0", wait);
}

/// The number of another viewer in the follow prompt's list (`follow: (1 root (you), 2 root;
/// Enter follows, Esc cancels)`), not the collector's own screen: entries are split at the
/// commas, so "(you)" stays with its own entry whichever place this viewer has in the list.
fn other_viewer(prompt: &str) -> Option<String> {
    let (_, list) = prompt.split_once('(')?;
    list.split([',', ';'])
        .map(str::trim)
        .filter(|p| p.starts_with(|c: char| c.is_ascii_digit()))
        .find(|p| !p.contains("(you)") && !p.contains("the collector's screen"))
        .and_then(|p| p.split_whitespace().next())
        .map(str::to_string)
}

#[test]
fn the_other_viewer_is_read_from_the_prompt_whichever_place_this_one_has() {
    let first = "follow: (1 root (you), 2 root; Enter follows, Esc cancels)";
    let second = "follow: (1 root, 2 root (you); Enter follows, Esc cancels)";
    let screen =
        "follow: (0 the collector's screen, 1 ann@h (you), 2 bob@h; Enter follows, Esc cancels)";
    assert_eq!(other_viewer(first).as_deref(), Some("2"));
    assert_eq!(other_viewer(second).as_deref(), Some("1"));
    assert_eq!(other_viewer(screen).as_deref(), Some("2"));
    assert_eq!(
        other_viewer("follow: (1 root (you); Enter follows, Esc cancels)"),
        None
    );
}

/// Follow-me between two viewers of one `serve --demo --share`: B follows A (`@`, A's number,
/// Enter) and shows A's pane, the session A opened and, when A goes back in time, A's moment;
/// any key brings B's own view back; A leaving ends the following with a plain message.
#[test]
fn a_viewer_follows_another_and_comes_back_to_its_own_view() {
    let shared = Shared::start();
    let cmd = shared.viewer();
    let Some(a) = Tmux::start(&cmd, 80, 24) else {
        return;
    };
    let Some(b) = Tmux::start(&cmd, 80, 24) else {
        return;
    };
    let wait = Duration::from_secs(30);
    a.wait_for("2 watching", wait);
    b.wait_for("2 watching", wait);
    // A: the Waiters pane, then session 812's screen.
    a.keys(&["2"]);
    a.wait_for("BLOCKER", wait);
    a.keys(&["#"]);
    a.keys(&["812", "Enter"]);
    a.wait_for("session 812", wait);
    // B: whom to follow, as the prompt lists them (B itself is "(you)").
    b.keys(&["@"]);
    let s = b.wait_for("Enter follows", wait);
    let prompt = s
        .lines()
        .rev()
        .find(|l| l.contains("follow:"))
        .unwrap_or_default();
    let other =
        other_viewer(prompt).unwrap_or_else(|| panic!("nobody else in the prompt: {prompt}"));
    b.keys(&[&other, "Enter"]);
    let s = b.wait_for("session 812", wait);
    assert!(s.contains("FOLLOWING"), "{s}");
    // A goes back to the first moment it received: B goes there too.
    a.keys(&[":"]);
    a.keys(&["0%", "Enter"]);
    let s = a.wait_for("BEHIND", wait);
    let moment = clock_of(&s);
    let s = b.wait_for("BEHIND", wait);
    assert_eq!(clock_of(&s), moment, "{s}");
    assert!(s.contains("session 812"), "{s}");
    // Any key: B's own view (the Sessions pane, live).
    b.keys(&["x"]);
    let s = b.wait_for("back to your own view", wait);
    assert!(!s.contains("BEHIND") && !s.contains("session 812"), "{s}");
    assert!(!s.contains("FOLLOWING"), "{s}");
    // Following again; A quits.
    b.keys(&["@"]);
    b.wait_for("Enter follows", wait);
    b.keys(&[&other, "Enter"]);
    b.wait_for("FOLLOWING", wait);
    a.keys(&["q"]);
    a.wait_for("IFXTOP-EXIT=0", wait);
    let s = b.wait_for("left: back to your own view", wait);
    assert!(!s.contains("FOLLOWING") && !s.contains("BEHIND"), "{s}");
    b.keys(&["q"]);
    b.wait_for("IFXTOP-EXIT=0", wait);
}
