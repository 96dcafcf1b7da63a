//! The onstat budget in every mode of the screen: at most 60 onstat processes a minute, calm,
//! with a session screen open, while recording, and with the Activity pane open. The loop runs
//! against the demo on a paused clock, through a runner that counts every onstat it is asked
//! to start (a local runner starts one process a request): a count, not a time.

use super::{code, demo_setup, key, play, Input};
use crossterm::event::KeyCode;
use ifxtop::error::SourceError;
use ifxtop::source::{CommandRunner, Cut, Output, Request};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The onstat processes asked: when (since the start), and the command line with an `onstat
/// -i`'s input lines.
type Calls = Arc<Mutex<Vec<(Duration, Vec<String>)>>>;

/// The demo, counting the onstat processes asked of it: when (since the start) and what (the
/// command line, and an `onstat -i`'s input lines).
struct Counting {
    inner: Arc<dyn CommandRunner>,
    start: Instant,
    calls: Calls,
}

impl Counting {
    fn count(&self, request: &Request) {
        let (argv, stdin) = match request {
            Request::Command(argv) => (argv, ""),
            Request::CommandInput { argv, stdin } => (argv, stdin.as_str()),
            _ => return,
        };
        if argv.first().map(String::as_str) != Some("onstat") {
            return;
        }
        let mut all = argv.clone();
        all.extend(stdin.lines().map(str::to_string));
        self.calls
            .lock()
            .expect("calls")
            .push((self.start.elapsed(), all));
    }
}

impl CommandRunner for Counting {
    fn run<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, SourceError>> {
        self.count(request);
        self.inner.run(request, timeout)
    }

    fn run_extent_report<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, SourceError>> {
        self.count(request);
        self.inner.run_extent_report(request, timeout)
    }

    fn run_keeping<'a>(
        &'a self,
        request: &'a Request,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Output, Cut>> {
        self.count(request);
        self.inner.run_keeping(request, timeout)
    }

    fn clock(&self) -> Option<Duration> {
        self.inner.clock()
    }
}

/// What a minute started: how many onstat processes, how many of each kind (`onstat -i`, or the
/// command line), and how often each option was asked (an `onstat -i` line, dash added, or a
/// command line's options).
struct Minute {
    processes: usize,
    by_kind: BTreeMap<String, usize>,
    options: BTreeMap<String, usize>,
    /// Each `onstat -i` call: when (since the start), and its options (dash added).
    interactive: Vec<(Duration, Vec<String>)>,
}

impl Minute {
    fn asked(&self, option: &str) -> usize {
        self.options.get(option).copied().unwrap_or(0)
    }

    /// The sessions whose `option` (`-g ses`, `-g pqs`) was asked, each with how often.
    fn sessions(&self, option: &str) -> Vec<(u64, usize)> {
        self.options
            .iter()
            .filter_map(|(o, n)| {
                let sid = o.strip_prefix(option)?.strip_prefix(' ')?.parse().ok()?;
                Some((sid, *n))
            })
            .collect()
    }

    /// The sessions in focus (their `-g ses` asked), at most `most`: each never more often
    /// than the joins' period (5 s), its statement in the same call (one moment), at least 6
    /// times in the minute (a background session may leave the set and come back), and those
    /// of `open` (a session screen) at every period: 12 times.
    fn assert_focus(&self, mode: &str, most: usize, open: &[u64]) -> Vec<u64> {
        let screens = self.sessions("-g ses");
        assert!(
            !screens.is_empty() && screens.len() <= most,
            "{mode}: {:#?}",
            self.options
        );
        for (sid, n) in &screens {
            let ses = format!("-g ses {sid}");
            let sql = format!("-g sql {sid}");
            let at: Vec<Duration> = self
                .interactive
                .iter()
                .filter(|(_, o)| o.contains(&ses))
                .map(|(t, o)| {
                    assert!(o.contains(&sql), "{mode}: {ses} without {sql}: {o:?}");
                    *t
                })
                .collect();
            assert!(
                at.windows(2)
                    .all(|w| w[1] - w[0] >= Duration::from_millis(4_990)),
                "{mode}: {ses} at {at:?}"
            );
            assert!(*n >= 6, "{mode}: {ses} {n} times: {:#?}", self.options);
            if open.contains(sid) {
                assert_eq!(*n, 12, "{mode}: {ses}: {:#?}", self.options);
            }
        }
        screens.into_iter().map(|(sid, _)| sid).collect()
    }
}

/// The onstat processes started between 10 s and 70 s of the screen at demo time 278 (the
/// lock chain), `keys` pressed (each after its pause in ms), recording when `record`.
async fn a_minute(keys: Vec<(u64, Input)>, record: bool) -> Minute {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut setup = demo_setup(278);
    let calls = Arc::new(Mutex::new(Vec::new()));
    setup.runner = Arc::new(Counting {
        inner: setup.runner.clone(),
        start: Instant::now(),
        calls: calls.clone(),
    });
    if record {
        setup.record = Some((dir.path().join("rec.jsonl"), 50));
    }
    let waited: u64 = keys.iter().map(|(ms, _)| ms).sum();
    let mut script = keys;
    script.push((72_000 - waited, key('q')));
    let (exit, _, _) = play(setup, script).await;
    assert_eq!(exit, 0);
    let calls = calls.lock().expect("calls").clone();
    let minute: Vec<(Duration, Vec<String>)> = calls
        .into_iter()
        .filter(|(t, _)| *t >= Duration::from_secs(10) && *t < Duration::from_secs(70))
        .collect();
    // What each process was started for: `onstat -i` with its options, or a command line.
    let mut by_kind: BTreeMap<String, usize> = BTreeMap::new();
    let mut options: BTreeMap<String, usize> = BTreeMap::new();
    let mut interactive = Vec::new();
    for (t, argv) in &minute {
        if argv.get(1).map(String::as_str) == Some("-i") {
            *by_kind.entry("onstat -i".into()).or_default() += 1;
            let asked: Vec<String> = argv[2..].iter().map(|l| format!("-{l}")).collect();
            for o in &asked {
                *options.entry(o.clone()).or_default() += 1;
            }
            interactive.push((*t, asked));
        } else {
            *by_kind.entry(argv.join(" ")).or_default() += 1;
            *options.entry(argv[1..].join(" ")).or_default() += 1;
        }
    }
    Minute {
        processes: minute.len(),
        by_kind,
        options,
        interactive,
    }
}

/// At most 60 processes, and every one an `onstat -i`.
fn assert_budget(mode: &str, m: &Minute) {
    eprintln!(
        "{mode}: {} onstat processes in a minute: {:?}",
        m.processes, m.by_kind
    );
    assert!(
        m.processes <= 60,
        "{mode}: {} onstat processes a minute: {:#?}",
        m.processes,
        m.by_kind
    );
    assert_eq!(
        m.by_kind.keys().collect::<Vec<_>>(),
        ["onstat -i"],
        "{mode}: {:#?}",
        m.by_kind
    );
    // The tick's options are all there: onstat -u at every tick.
    assert_eq!(m.asked("-u"), 60, "{mode}: {:#?}", m.options);
}

#[tokio::test(start_paused = true)]
async fn a_calm_minute_starts_at_most_60_onstat_processes() {
    let m = a_minute(Vec::new(), false).await;
    assert_budget("calm", &m);
    // No session in focus: no session's screen nor plan is read.
    assert!(m.sessions("-g ses").is_empty(), "{:#?}", m.options);
    assert!(m.sessions("-g pqs").is_empty(), "{:#?}", m.options);
}

/// A session screen open (the lock chain's top waiter drilled into): its `onstat -g ses`,
/// `-g sql` and `-g pqs` ride in the tick's `onstat -i`, on the joins' period (5 s).
#[tokio::test(start_paused = true)]
async fn a_minute_with_a_session_screen_open_starts_at_most_60_onstat_processes() {
    let m = a_minute(vec![(5_000, key('2')), (500, code(KeyCode::Enter))], false).await;
    assert_budget("session screen", &m);
    let open = m.sessions("-g pqs");
    assert!(open.len() == 1 && open[0].1 == 12, "{:#?}", m.options);
    m.assert_focus("session screen", 1, &[open[0].0]);
}

/// Recording: the blockers' and long waiters' sessions (a few) collected in the background,
/// without their plans.
#[tokio::test(start_paused = true)]
async fn a_minute_of_recording_starts_at_most_60_onstat_processes() {
    let m = a_minute(Vec::new(), true).await;
    assert_budget("recording", &m);
    m.assert_focus("recording", ifxtop::collect::Focus::MAX_BACKGROUND, &[]);
    assert!(m.sessions("-g pqs").is_empty(), "{:#?}", m.options);
}

/// The Activity pane open: its sessions collected in the background too.
#[tokio::test(start_paused = true)]
async fn a_minute_with_the_activity_pane_open_starts_at_most_60_onstat_processes() {
    let m = a_minute(vec![(5_000, key('8'))], false).await;
    assert_budget("activity pane", &m);
    m.assert_focus("activity pane", ifxtop::collect::Focus::MAX_BACKGROUND, &[]);
    assert!(m.sessions("-g pqs").is_empty(), "{:#?}", m.options);
}

/// Everything at once: recording, the Activity pane open, then a session screen over it.
#[tokio::test(start_paused = true)]
async fn a_minute_of_every_mode_at_once_starts_at_most_60_onstat_processes() {
    let m = a_minute(
        vec![
            (5_000, key('8')),
            (500, key('2')),
            (500, code(KeyCode::Enter)),
        ],
        true,
    )
    .await;
    assert_budget("all at once", &m);
    let open = m.sessions("-g pqs");
    assert!(open.len() == 1 && open[0].1 == 12, "{:#?}", m.options);
    m.assert_focus(
        "all at once",
        1 + ifxtop::collect::Focus::MAX_BACKGROUND,
        &[open[0].0],
    );
}
