//! The onstat budget (at most 60 onstat processes a minute with every source, every
//! option due in a tick answered by one `onstat -i`; 179 before, with the non-`-g` options
//! grouped on one command line and the others one process each), counted rather than timed: every
//! collector runs for a minute of virtual time against the demo's primary (an RSS secondary
//! behind it, chunks on LVM and multipath), and each onstat process it starts is counted.
//!
//! The demo prints only the options its incidents need; here every other onstat option answers
//! with the banner and its title, an interactive call as the demo does (each option's answer
//! after an `onstat>` prompt), so the count is that of a server where everything works.

use super::extents::ExtentSource;
use super::sample::Update;
use super::{Collection, SessionClock};
use crate::demo::{DemoInstance, DemoRunner};
use crate::error::SourceError;
use crate::parsers::group::title_of;
use crate::source::{BoxFuture, CommandRunner, Output, Request};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// The demo, answering every onstat option and grouped calls, counting the onstat processes.
struct Counting {
    demo: DemoRunner,
    start: Instant,
    calls: Mutex<Vec<(Duration, Vec<String>)>>,
}

impl Counting {
    async fn alone(&self, option: &[String], timeout: Duration) -> Output {
        let mut argv = vec!["onstat".to_string()];
        argv.extend(option.iter().cloned());
        match self.demo.run(&Request::Command(argv), timeout).await {
            Ok(out) => out,
            // An option the demo does not print: the banner and the option's title.
            Err(_) => {
                let u = self
                    .demo
                    .run(
                        &Request::Command(vec!["onstat".into(), "-u".into()]),
                        timeout,
                    )
                    .await
                    .map(|o| o.stdout)
                    .unwrap_or_default();
                let banner = u
                    .split("Userthreads")
                    .next()
                    .unwrap_or_default()
                    .to_string();
                let title = option.first().and_then(|o| title_of(o)).unwrap_or("");
                Output {
                    exit: Some(5),
                    stdout: format!("{banner}{title}\n"),
                    stderr: String::new(),
                }
            }
        }
    }

    /// `onstat -i`: one process; each option's answer (as alone) after a prompt.
    async fn interactive(&self, argv: &[String], stdin: &str, timeout: Duration) -> Output {
        if let Ok(mut calls) = self.calls.lock() {
            let mut all = argv.to_vec();
            all.extend(stdin.lines().map(str::to_string));
            calls.push((self.start.elapsed(), all));
        }
        let mut text = String::new();
        for line in stdin.lines().filter(|l| !l.trim().is_empty()) {
            let option: Vec<String> = line
                .split_whitespace()
                .enumerate()
                .map(|(k, w)| {
                    if k == 0 {
                        format!("-{w}")
                    } else {
                        w.to_string()
                    }
                })
                .collect();
            text.push_str("onstat> ");
            text.push_str(&self.alone(&option, timeout).await.stdout);
        }
        text.push_str("onstat> ");
        Output {
            exit: Some(5),
            stdout: text,
            stderr: String::new(),
        }
    }

    async fn grouped(&self, options: &[String], timeout: Duration) -> Output {
        let mut banner = None;
        let mut sections = Vec::new();
        for o in options {
            let out = self.alone(std::slice::from_ref(o), timeout).await;
            let title = title_of(o).unwrap_or("");
            let lines: Vec<&str> = out.stdout.split_inclusive('\n').collect();
            let at = lines
                .iter()
                .position(|l| l.trim() == title)
                .unwrap_or(lines.len());
            banner.get_or_insert_with(|| lines[..at].concat());
            sections.push(lines[at..].concat());
        }
        Output {
            exit: Some(5),
            stdout: format!("{}{}", banner.unwrap_or_default(), sections.join("\n")),
            stderr: String::new(),
        }
    }
}

impl CommandRunner for Counting {
    fn run<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, SourceError>> {
        Box::pin(async move {
            if let Request::CommandInput { argv, stdin } = request {
                if argv.iter().map(String::as_str).eq(["onstat", "-i"]) {
                    return Ok(self.interactive(argv, stdin, timeout).await);
                }
            }
            let Request::Command(argv) = request else {
                return self.demo.run(request, timeout).await;
            };
            if argv.first().map(String::as_str) != Some("onstat") {
                return self.demo.run(request, timeout).await;
            }
            if let Ok(mut calls) = self.calls.lock() {
                calls.push((self.start.elapsed(), argv.clone()));
            }
            let options = &argv[1..];
            let groupable = options.len() > 1 && options.iter().all(|o| title_of(o).is_some());
            Ok(if groupable {
                self.grouped(options, timeout).await
            } else {
                self.alone(options, timeout).await
            })
        })
    }

    fn clock(&self) -> Option<Duration> {
        self.demo.clock()
    }
}

/// The onstat calls between `from` and `to` seconds of a run started at demo time `at`.
async fn calls_between(at: u64, from: u64, to: u64) -> Vec<Vec<String>> {
    calls_in_focus(at, from, to, super::Focus::default()).await
}

/// `calls_between`, with the sessions of `focus` collected.
async fn calls_in_focus(at: u64, from: u64, to: u64, focus: super::Focus) -> Vec<Vec<String>> {
    let runner = Arc::new(Counting {
        demo: DemoRunner::new(DemoInstance::new(1)).starting_at(Duration::from_secs(at)),
        start: Instant::now(),
        calls: Mutex::new(Vec::new()),
    });
    let mut collection = Collection::start(
        runner.clone(),
        Duration::from_secs(1),
        None,
        ExtentSource::default(),
        SessionClock::starting_at(Duration::from_secs(at)),
    );
    collection.set_focus(focus);
    let deadline = Instant::now() + Duration::from_secs(to);
    loop {
        tokio::select! {
            Some(_) = collection.updates.recv() => {}
            _ = tokio::time::sleep_until(deadline) => break,
        }
    }
    collection.stop();
    let calls = runner.calls.lock().map(|c| c.clone()).unwrap_or_default();
    calls
        .into_iter()
        .filter(|(t, _)| *t >= Duration::from_secs(from) && *t < Duration::from_secs(to))
        .map(|(_, argv)| argv)
        .collect()
}

/// The options asked over a minute of `calls`, once it is checked that they were one
/// `onstat -i` a second (at most 60 processes), each with its `onstat -u`.
fn one_call_a_second(calls: &[Vec<String>]) -> std::collections::BTreeMap<String, usize> {
    let by_option = options_asked(calls);
    let total = calls.len();
    // One `onstat -i` a tick answers every option due (179 processes a minute before it).
    assert!(
        total <= 60,
        "{total} onstat processes a minute: {by_option:#?}"
    );
    assert!(
        calls.iter().all(|a| a[1] == "-i"),
        "every call interactive: {calls:?}"
    );
    assert_eq!(by_option.get("-u").copied(), Some(60), "{by_option:#?}");
    by_option
}

/// How often each option was asked in `calls` (an `onstat -i` call's options are its input
/// lines, dash added; a command line's are its words).
fn options_asked(calls: &[Vec<String>]) -> BTreeMap<String, usize> {
    let mut by_option: BTreeMap<String, usize> = BTreeMap::new();
    for argv in calls {
        if argv.get(1).map(String::as_str) == Some("-i") {
            for line in &argv[2..] {
                *by_option.entry(format!("-{line}")).or_default() += 1;
            }
        } else {
            *by_option.entry(argv[1..].join(" ")).or_default() += 1;
        }
    }
    by_option
}

#[tokio::test(start_paused = true)]
async fn a_minute_of_every_source_starts_at_most_60_onstat_processes() {
    // Demo time 600: the slow device; the server is a primary with an RSS secondary. The first
    // 10 s (start-up: every source at once) are left out; then one minute.
    let calls = calls_between(600, 10, 70).await;
    let by_option = one_call_a_second(&calls);
    let count = |o: &str| by_option.get(o).copied().unwrap_or(0);
    assert_eq!(count("-g con"), 60, "{by_option:#?}");
    // Each on its own period, inside the tick's call: -D every 5 s, `-g iof` and the
    // replication commands every 10 s, only those the role asks for.
    assert_eq!(count("-D"), 12, "{by_option:#?}");
    assert_eq!(count("-g iof"), 6, "{by_option:#?}");
    // The threads' states at every tick: more threads look runnable than the demo's 16 CPU
    // VPs (demand.rs), so database time knows who is on a CPU and who waits for one.
    assert_eq!(count("-g ath"), 60, "{by_option:#?}");
    // The active sessions' statements ride in the same calls, each read again every 10 s.
    let statements: usize = by_option
        .iter()
        .filter(|(o, _)| o.starts_with("-g sql "))
        .map(|(_, n)| n)
        .sum();
    assert!(
        statements > 60,
        "{statements} statements read: {by_option:#?}"
    );
    assert!(
        by_option
            .iter()
            .filter(|(o, _)| o.starts_with("-g sql "))
            .all(|(_, n)| *n <= 6),
        "a statement read more than once in 10 s: {by_option:#?}"
    );
    assert_eq!(count("-g cluster"), 6, "{by_option:#?}");
    assert_eq!(count("-g rss verbose"), 6, "{by_option:#?}");
    assert_eq!(count("-g seg"), 1, "{by_option:#?}");
    assert_eq!(count("-g sds verbose") + count("-g dri"), 0);
    // Never a counter reset or a repeat.
    assert!(
        by_option.keys().all(|o| !o.contains('z') && o != "-r"),
        "{by_option:#?}"
    );
    eprintln!(
        "onstat processes in one minute: {} ({by_option:?})",
        calls.len()
    );
}

/// The parts of one `onstat -i` reach the store one at a time: each is applied (its source's
/// record replaced, the old one let go) before the next part is parsed. A consumer that takes
/// what has arrived finds one part of the call at a time, never a whole call's parsed records
/// waiting beside the ones they replace.
#[tokio::test(start_paused = true)]
async fn the_parts_of_one_call_are_applied_one_at_a_time() {
    let mut collection = Collection::start(
        Arc::new(DemoRunner::new(DemoInstance::new(1)).starting_at(Duration::from_secs(600))),
        Duration::from_secs(1),
        None,
        ExtentSource::default(),
        SessionClock::starting_at(Duration::from_secs(600)),
    );
    let from_one_call = |u: &Update| {
        u.how
            .note
            .as_deref()
            .is_some_and(|n| n.starts_with("onstat -i: one process for "))
    };
    let deadline = Instant::now() + Duration::from_secs(12);
    let (mut parts, mut largest) = (0, 0);
    loop {
        tokio::select! {
            Some(first) = collection.updates.recv() => {
                let batch = collection.arrived(first);
                let n = batch.iter().filter(|u| from_one_call(u)).count();
                parts += n;
                largest = largest.max(n);
            }
            _ = tokio::time::sleep_until(deadline) => break,
        }
    }
    collection.stop();
    // Twelve ticks of the calls' parts (several options each), each part taken alone.
    assert!(parts > 24, "{parts} parts of onstat -i calls");
    assert_eq!(largest, 1, "parts of one call waited together");
}

/// The large outputs nothing joins at a moment (`-g tpf`, the `-g ses` list) are read off the
/// seconds the 10 s sources meet, each in a second of its own: the heaviest second's
/// `onstat -i` output at 5,000 sessions was 7.8 MB with them in it.
#[tokio::test(start_paused = true)]
async fn the_large_slow_outputs_are_read_off_the_busy_seconds() {
    let calls = calls_between(600, 10, 70).await;
    let by_option = options_asked(&calls);
    let count = |o: &str| by_option.get(o).copied().unwrap_or(0);
    // Still on their periods.
    assert_eq!(count("-g tpf"), 2, "{by_option:#?}");
    assert_eq!(count("-g ses"), 2, "{by_option:#?}");
    assert_eq!(count("-g seg"), 1, "{by_option:#?}");
    let slow = ["-g tpf", "-g ses"];
    let mut apart = 0;
    for argv in &calls {
        let options: Vec<String> = argv[2..].iter().map(|l| format!("-{l}")).collect();
        let has = |o: &str| options.iter().any(|x| x == o);
        let here: Vec<&str> = slow.iter().copied().filter(|o| has(o)).collect();
        if here.is_empty() {
            continue;
        }
        apart += here.len();
        assert_eq!(here.len(), 1, "two large outputs in one call: {options:?}");
        // (`-g ath` is in every tick's call while more threads look runnable than there are
        // CPU VPs: demand.rs.)
        for busy in ["-g ntt", "-g cpu", "-k", "-x"] {
            assert!(!has(busy), "{here:?} read with {busy}: {options:?}");
        }
    }
    assert_eq!(apart, 4);
}

/// The same budget while a mutex contention lasts (demo time 515-555): `onstat -g lmx` then
/// runs every 3 s to name the holder at the moment of its waiters (demand.rs), and the minute
/// stays under 200 processes.
#[tokio::test(start_paused = true)]
async fn a_minute_of_mutex_contention_stays_at_most_60_onstat_processes() {
    let calls = calls_between(505, 10, 70).await;
    let by_command = options_asked(&calls);
    let total = calls.len();
    assert!(
        total <= 60,
        "{total} onstat processes a minute: {by_command:#?}"
    );
    // The contention (40 s of the minute) asked for -g lmx every 3 s, more than its 10 s.
    let lmx = by_command.get("-g lmx").copied().unwrap_or(0);
    assert!(lmx >= 12, "{lmx}: {by_command:#?}");
    eprintln!("onstat processes in a minute of mutex contention: {total} ({by_command:?})");
}

/// The same budget with a session screen open and a recording's four background sessions:
/// their `onstat -g ses`, `-g sql` and `-g pqs` ride in the ticks' calls on the joins' period
/// (5 s), no process of their own (96 to 168 processes a minute when each had one).
#[tokio::test(start_paused = true)]
async fn a_minute_with_sessions_in_focus_stays_at_most_60_onstat_processes() {
    let sid = crate::ids::Sid;
    let focus = super::Focus {
        drilled: vec![sid(812)],
        background: vec![sid(813), sid(814), sid(815), sid(816)],
        statements: Vec::new(),
    };
    let calls = calls_in_focus(600, 10, 70, focus).await;
    let by_option = one_call_a_second(&calls);
    let count = |o: &str| by_option.get(o).copied().unwrap_or(0);
    for s in 812..=816 {
        assert_eq!(count(&format!("-g ses {s}")), 12, "{by_option:#?}");
        assert_eq!(count(&format!("-g sql {s}")), 12, "{by_option:#?}");
    }
    // The plan for the session whose screen is open only.
    assert_eq!(count("-g pqs 812"), 12, "{by_option:#?}");
    assert_eq!(
        by_option.keys().filter(|o| o.starts_with("-g pqs")).count(),
        1,
        "{by_option:#?}"
    );
    // A session's screen and statement in one call: one moment.
    for argv in &calls {
        for s in 812..=816 {
            let has = |o: String| argv.contains(&o);
            assert_eq!(
                has(format!("g ses {s}")),
                has(format!("g sql {s}")),
                "{argv:?}"
            );
        }
    }
}
