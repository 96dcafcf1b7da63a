//! `ifxtop completions` and `ifxtop man` as a user runs them: the bash script loads into bash
//! and completes ifxtop, the manual page renders with `man -l` without warnings.

#[path = "../common/mod.rs"]
mod common;

use std::io::Write;
use std::process::{Command, Stdio};

fn ifxtop(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ifxtop"))
        .args(args)
        .output()
        .expect("ifxtop runs")
}

#[test]
fn the_bash_completion_loads_and_completes_ifxtop() {
    let out = ifxtop(&["completions", "bash"]);
    assert!(out.status.success());
    let script = String::from_utf8(out.stdout).expect("utf-8");
    assert!(script.contains("snapshot") && script.contains("--demo"));
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("ifxtop.bash");
    std::fs::write(&file, &script).expect("write");
    // Loaded into bash, it registers a completion for ifxtop; asked for `ifxtop snap`, it
    // offers `snapshot`.
    let probe = format!(
        "source '{}' && complete -p ifxtop && COMP_WORDS=(ifxtop snap) && COMP_CWORD=1 && \
         COMP_LINE='ifxtop snap' && COMP_POINT=11 && _ifxtop ifxtop snap ifxtop && \
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file.display()
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &probe])
        .output()
        .expect("bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.lines().any(|l| l == "snapshot"), "{stdout}");
}

#[test]
fn zsh_and_fish_scripts_name_the_commands() {
    for shell in ["zsh", "fish"] {
        let out = ifxtop(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let s = String::from_utf8_lossy(&out.stdout);
        assert!(s.contains("snapshot") && s.contains("demo"), "{shell}");
    }
    assert_eq!(ifxtop(&["completions", "tcsh"]).status.code(), Some(2));
}

#[test]
fn the_man_page_renders_with_man() {
    let out = ifxtop(&["man"]);
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).expect("utf-8");
    assert!(page.contains(".TH ifxtop 1"), "{page}");
    assert!(page.contains("snapshot"), "{page}");
    let sub = ifxtop(&["man", "snapshot"]);
    assert!(sub.status.success());
    assert!(
        String::from_utf8_lossy(&sub.stdout).contains(".TH ifxtop\\-snapshot 1")
            || String::from_utf8_lossy(&sub.stdout).contains(".TH ifxtop-snapshot 1")
    );
    assert_eq!(ifxtop(&["man", "nope"]).status.code(), Some(2));
    // Without man (outside CI) the page was checked as roff text only.
    if !common::have("man", "man-db", "the man page rendered") {
        return;
    }
    let mut child = Command::new("man")
        .args(["-l", "-"])
        .env("MANWIDTH", "80")
        .env("MAN_KEEP_FORMATTING", "0")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("man");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(page.as_bytes())
        .expect("feed man");
    let out = child.wait_with_output().expect("man ends");
    let text = plain(&String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("warning"), "{err}");
    assert!(text.contains("NAME") && text.contains("SYNOPSIS"), "{text}");
    assert!(text.contains("snapshot"), "{text}");
}

/// man's output without overstrike (`N\x08N` bold, `_\x08x` underline): a backspace takes
/// off the character before it, and the one after stays.
fn plain(s: &str) -> String {
    let mut out: Vec<char> = Vec::with_capacity(s.len());
    for c in s.chars() {
        if c == '\u{8}' {
            out.pop();
        } else {
            out.push(c);
        }
    }
    out.into_iter().collect()
}
