//! An out-of-memory abort leaves a sane terminal (src/memory.rs): the live screen in a real
//! pseudo-terminal (`script`), under an address-space limit (`ulimit -v`), with an `onstat` that
//! prints forever and an output cap raised far past the limit, so a read buffer's allocation
//! fails and the process aborts (SIGABRT, no panic hook). Afterwards the terminal is in cooked
//! mode with echo, off the alternate screen, the cursor shown, and the reason is printed.
//!
//! Skipped with a message when `script` (Debian's bsdutils) is missing, unless in CI (then it fails).

#[path = "common/mod.rs"]
mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn available() -> bool {
    common::have(
        "/usr/bin/script",
        "bsdutils",
        "the abort under a pseudo-terminal",
    )
}

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).expect("script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The settings `stty -a` lists, one word each (`icanon`, `-echo`, `rows 24`'s words, ...).
fn stty_words(text: &str) -> Vec<&str> {
    text.split(|c: char| c.is_whitespace() || c == ';')
        .filter(|w| !w.is_empty())
        .collect()
}

#[test]
fn an_allocation_that_fails_under_the_live_screen_leaves_a_cooked_terminal() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir(d.join("bin")).expect("bin");
    executable(
        &d.join("bin/onstat"),
        "#!/bin/sh\nexec yes 'IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line'\n",
    );
    // Inside the pty: the terminal's settings before, ifxtop under a 1.5 GB address space (3 GB took 8-17 s to fill) with
    // 8 GB allowed per output (the read buffer outgrows the limit within a second), then its
    // exit status and the settings after.
    executable(
        &d.join("inner.sh"),
        &format!(
            "#!/bin/sh\ncd '{d}'\nstty -a > stty-before\nulimit -v 1500000\n\
             PATH='{d}/bin':/usr/bin:/bin '{exe}' --server ol --max-output-mb 8192 --log '{d}/ifxtop.log'\n\
             echo \"$?\" > exit-status\nstty -a > stty-after\n",
            d = d.display(),
            exe = env!("CARGO_BIN_EXE_ifxtop")
        ),
    );
    let mut script = Command::new("/usr/bin/script")
        .args(["-q", "-f", "-c"])
        .arg(d.join("inner.sh"))
        .arg(d.join("typescript"))
        .env("TERM", "xterm-256color")
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("script runs");
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(Some(_)) = script.try_wait() {
            break;
        }
        if Instant::now() > until {
            let _ = script.kill();
            let _ = script.wait();
            panic!("ifxtop did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let read = |name: &str| std::fs::read_to_string(d.join(name)).unwrap_or_default();
    let typescript =
        String::from_utf8_lossy(&std::fs::read(d.join("typescript")).expect("typescript"))
            .into_owned();
    // It did abort, for the allocation: otherwise this test proves nothing.
    assert_eq!(
        read("exit-status").trim(),
        "134",
        "not SIGABRT:\n{typescript}"
    );
    assert!(typescript.contains("memory allocation of"), "{typescript}");
    let before = read("stty-before");
    assert!(stty_words(&before).contains(&"icanon"), "{before}");
    let after = read("stty-after");
    let words = stty_words(&after);
    for cooked in ["icanon", "echo", "isig", "icrnl", "opost"] {
        assert!(
            words.contains(&cooked),
            "{cooked} not set after the abort:\n{after}"
        );
    }
    // Off the alternate screen, the cursor shown, after the last time they were taken.
    let entered = typescript
        .rfind("\x1b[?1049h")
        .expect("the screen was taken");
    let left = typescript
        .rfind("\x1b[?1049l")
        .expect("the alternate screen left");
    assert!(left > entered, "{typescript:?}");
    let hidden = typescript
        .rfind("\x1b[?25l")
        .expect("the cursor was hidden");
    let shown = typescript.rfind("\x1b[?25h").expect("the cursor shown");
    assert!(shown > hidden, "{typescript:?}");
    // And why, on the restored terminal.
    let said = typescript
        .rfind("ifxtop: out of memory (an allocation of ")
        .expect("the reason printed");
    assert!(said > left, "{typescript:?}");
}
