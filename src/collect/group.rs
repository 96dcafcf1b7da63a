//! The polled onstat sources share calls. At each moment, every one due (the `-g` ones and the
//! replication commands too) is answered by ONE `onstat -i` process: the options are written one
//! a line, its input closed, and `parsers::interactive::split` cuts the answer at the `onstat>`
//! prompts into what each option prints alone, for its own parser. One process a second instead
//! of one per source (179-197 a minute before): onstat attaches the shared memory each time it
//! starts, the costly part on a big instance.
//!
//! What does not answer that way is not guessed at: an onstat without interactive mode (no
//! prompt, another banner rule, a runner that does not know the call) makes the sources run as
//! before (the non-`-g` options in one `onstat -u -X -k ...` call cut by
//! `parsers::group::split`, the others one by one) and interactive mode is tried again after
//! [`RETRY_GROUPING`]; an option whose answer its parser does not read (an option that onstat
//! does not know) runs alone for as long. Each update says how it ran (its `note`), which the
//! Server pane's sources and `snapshot` show.
//!
//! A slow option must not delay the fast ones: when a tick's call takes more than half the 1 s
//! period, the options of a period over 2 s go to a second `onstat -i` of their own, in a task
//! apart, until the retry.
//!
//! A hung option must cost only itself. When a call is killed at its timeout, what onstat
//! answered before keeps: the options whose answer ended (the next prompt came) are delivered
//! as usual; the option after the last prompt, whose answer never ended, is the one that hung:
//! it gets the timeout, and until the retry it runs alone, in a task of its own with its own
//! timeout, while the others go on grouped; the options after it were never reached, and are
//! asked again at the next tick rather than marked timed out until their own period. An
//! `onstat -i` killed before any prompt does not answer in interactive mode: its timeout is said
//! at once for the sources it carried, and they run
//! as before (plain calls) at once, and interactive mode is tried again after the retry. A
//! plain call that times out runs alone in its own task too.

use super::{Ctx, RawRun};
use crate::error::SourceError;
use crate::ids::Sid;
use crate::parsers::onstat_g_cluster::OnstatGCluster;
use crate::parsers::Parsed;
use crate::source::{Collector, Cut, Output, Request, Run, Source};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// After a grouped call failed to split, how long the sources run one by one.
const RETRY_GROUPING: Duration = Duration::from_secs(600);

/// The next time a source of `period` is due after `now`: the next multiple of the period on
/// the session clock (so sources with periods that divide each other meet), `phase` past it
/// (a source moved off those seconds: `Source::phase`), or the one after when the next is less
/// than half a period away (a slow run is not repeated back to back).
pub(crate) fn next_due(now: Duration, period: Duration, phase: Duration) -> Duration {
    let p = period.as_nanos().max(1);
    let phase = phase.as_nanos() % p;
    let n = now.as_nanos();
    let mut next = if n < phase {
        phase
    } else {
        phase + ((n - phase) / p + 1) * p
    };
    if next - n < p / 2 {
        next += p;
    }
    Duration::from_nanos(u64::try_from(next).unwrap_or(u64::MAX))
}

/// What the task keeps between ticks.
#[derive(Default)]
struct State {
    /// Interactive mode failed: until then the sources run as before.
    not_interactive: Option<(Instant, String)>,
    /// Options whose interactive answer did not parse: run alone until then.
    alone: Vec<(Source, Instant)>,
    /// A call took too long: the slow options get a call of their own until then.
    split_slow: Option<Instant>,
    /// The command-line grouping failed: until then one by one.
    alone_until: Option<Instant>,
    /// Options that hung a call: each runs alone, in a task of its own, until then.
    hung: Vec<(Source, Instant)>,
    /// Options a killed call never reached: asked again at the next tick.
    retry: Vec<Source>,
    /// The replication peers the last good `onstat -g cluster` listed.
    kinds: super::ha::Kinds,
}

impl State {
    fn runs_alone(&self, s: &Source) -> bool {
        let now = Instant::now();
        self.alone.iter().any(|(a, u)| a == s && now < *u)
    }

    fn is_hung(&self, s: &Source) -> bool {
        let now = Instant::now();
        self.hung.iter().any(|(h, u)| h == s && now < *u)
    }

    /// `source` hung a call: alone in its own task until the retry.
    fn isolate(&mut self, source: Source) {
        let now = Instant::now();
        self.hung.retain(|(h, u)| *h != source && now < *u);
        self.hung.push((source, now + RETRY_GROUPING));
    }
}

/// Whether `source` is asked at all now: a later release's command waits for the banner, the
/// replication commands for a role that has them.
fn asked(ctx: &Ctx, state: &State, source: &Source) -> bool {
    if !ctx.asks(source) {
        return false;
    }
    if source.def().collector != Collector::Ha {
        return true;
    }
    match ctx.role().filter(|r| r.in_cluster()) {
        None => false,
        Some(role) => {
            *source == Source::OnstatGCluster
                || super::ha::commands(role, state.kinds).contains(source)
        }
    }
}

/// Why the slow options' call is apart (its sources' note).
const SLOW_CALL: &str = "a call of its own for the slow options";

/// The note of a source that hung a call, run alone.
const HUNG_ALONE: &str = "run alone: it hung a call";

/// The tick of the fastest sources.
const FAST_TICK: Duration = Duration::from_secs(1);

/// A source of this period or shorter stays in the fast call when calls are split.
const FAST: Duration = Duration::from_secs(2);

/// The longest a session screen just opened waits for the next tick's call before a call of its
/// own is started for it (at an interval over a second).
const DRILLED_WAIT: Duration = Duration::from_secs(1);

/// Starts the task; nothing runs when `sources` is empty.
pub(crate) fn spawn(ctx: &Ctx, sources: Vec<Source>) -> JoinHandle<()> {
    let mut ctx = ctx.clone();
    tokio::spawn(async move {
        if sources.is_empty() {
            return;
        }
        let mut next: Vec<Duration> = vec![Duration::ZERO; sources.len()];
        let state = Arc::new(Mutex::new(State::default()));
        let mut slow_call = AbortOnDrop(None);
        // The runs of options that hung a call, one in flight a source.
        let mut isolated = Isolated(Vec::new());
        loop {
            let now = ctx.clock.now();
            // Due on its period, or wanted with this tick's onstat -u (demand.rs).
            let candidates: Vec<Source> = sources
                .iter()
                .zip(&next)
                .filter(|(s, n)| **n <= now + Duration::from_millis(1) || ctx.demand.wants(s))
                .map(|(s, _)| *s)
                .collect();
            let asked_now: Vec<Source> = {
                let st = lock(&state);
                candidates
                    .iter()
                    .copied()
                    .filter(|s| asked(&ctx, &st, s))
                    .collect()
            };
            let (split, interactive) = {
                let st = lock(&state);
                let t = Instant::now();
                (
                    st.split_slow.is_some_and(|u| t < u),
                    st.not_interactive.as_ref().is_none_or(|(u, _)| t >= *u),
                )
            };
            // The sessions in focus (focus.rs), before the active sessions' statements: a
            // statement read for a session screen is not read twice.
            let round = ctx.scaled(Source::OnstatGSql(Sid(0)).period());
            let focus = ctx
                .demand
                .focus_due(now, next_due(now, round, Duration::ZERO), |s| ctx.asks(s));
            let (mut due, mut slow) = plan(
                asked_now.clone(),
                interactive,
                split,
                |s| ctx.demand.wants(s),
                || {
                    let st = lock(&state);
                    ctx.demand
                        .statements_due(now, super::demand::STATEMENTS_PER_TICK)
                        .into_iter()
                        .filter(|s| !st.runs_alone(s))
                        .collect()
                },
                focus,
            );
            // An option that hung a call runs alone, in a task of its own: its hang costs only
            // itself. One run at a time: due again while its run still hangs, it is not asked.
            let hung: Vec<Source> = {
                let st = lock(&state);
                due.iter()
                    .chain(&slow)
                    .copied()
                    .filter(|s| st.is_hung(s))
                    .collect()
            };
            due.retain(|s| !hung.contains(s));
            slow.retain(|s| !hung.contains(s));
            isolated.0.retain(|(_, h)| !h.is_finished());
            for s in hung {
                if isolated.0.iter().any(|(x, _)| *x == s) {
                    continue;
                }
                let (ctx2, state2) = (ctx.clone(), state.clone());
                let task = tokio::spawn(async move {
                    let run = ctx2.run_raw(&s, &s.request()).await;
                    if let Some(r) = ctx2.deliver_noted(&s, run, Some(HUNG_ALONE.into())).await {
                        observe(&state2, &s, &r);
                    }
                });
                isolated.0.push((s, task));
            }
            let mut held: Vec<Source> = Vec::new();
            if slow_call.0.as_ref().is_some_and(|h| !h.is_finished()) {
                // Still running: they stay due for the next tick.
                held = slow;
            } else if !slow.is_empty() {
                let (ctx2, state2) = (ctx.clone(), state.clone());
                slow_call.0 = Some(tokio::spawn(async move {
                    let _ = tick(&ctx2, &state2, &slow, SLOW_CALL).await;
                }));
            }
            if !due.is_empty() && tick(&ctx, &state, &due, "").await.is_none() {
                return;
            }
            let after = ctx.clock.now();
            let retry = std::mem::take(&mut lock(&state).retry);
            ctx.demand.unreached(&retry);
            for (s, n) in sources.iter().zip(next.iter_mut()) {
                if retry.contains(s) {
                    // A killed call never reached it: asked at the next tick.
                    *n = next_due(after, ctx.scaled(FAST_TICK), Duration::ZERO);
                } else if asked_now.contains(s) && !held.contains(s) {
                    *n = next_due(after, ctx.scaled(s.period()), ctx.scaled(s.phase()));
                } else if candidates.contains(s) && !asked_now.contains(s) {
                    // Not asked yet (the role, the peers or the release unknown until this
                    // tick's answers): asked at the next tick that knows, not a period later.
                    *n = next_due(after, ctx.scaled(FAST_TICK), Duration::ZERO);
                }
            }
            let wake = next.iter().min().copied().unwrap_or(after);
            loop {
                let left = wake.saturating_sub(ctx.clock.now());
                tokio::select! {
                    _ = tokio::time::sleep(left) => break,
                    changed = ctx.interval.changed() => {
                        if changed.is_err() {
                            return;
                        }
                        // New periods: every source is due again on the new grid.
                        let now = ctx.clock.now();
                        for (s, n) in sources.iter().zip(next.iter_mut()) {
                            *n = next_due(now, ctx.scaled(s.period()), ctx.scaled(s.phase()));
                        }
                        break;
                    }
                    // A session screen just opened: its options ride in the next tick's call,
                    // or in a call now when that tick is more than a second away.
                    () = ctx.demand.drilled() => {
                        if wake.saturating_sub(ctx.clock.now()) > DRILLED_WAIT {
                            break;
                        }
                    }
                }
            }
        }
    })
}

/// Cuts a tick's due sources into the tick's call and the slow options' call (empty unless
/// `interactive && split`). A source wanted at every tick (demand.rs) is read with this tick's
/// onstat -u, not in the slow call. The active sessions' statements (`statements`, asked only
/// then: asking counts them as read) ride in the call that carries onstat -u, never in calls
/// of their own nor in the slow call, which a tick may skip while the previous one runs. The
/// options of the sessions in focus (`focus`, already counted as asked) ride in the tick's call
/// too, whatever it carries; without interactive mode they are calls of their own, as every
/// option then.
fn plan(
    mut due: Vec<Source>,
    interactive: bool,
    split: bool,
    wanted: impl Fn(&Source) -> bool,
    statements: impl FnOnce() -> Vec<Source>,
    focus: Vec<Source>,
) -> (Vec<Source>, Vec<Source>) {
    let mut slow = Vec::new();
    if interactive && split {
        slow = due
            .iter()
            .copied()
            .filter(|s| s.period() > FAST && !wanted(s))
            .collect();
        due.retain(|s| !slow.contains(s));
    }
    for s in focus {
        if !due.contains(&s) {
            due.push(s);
        }
    }
    if interactive && due.contains(&Source::OnstatU) {
        for s in statements() {
            if !due.contains(&s) {
                due.push(s);
            }
        }
    }
    (due, slow)
}

/// The slow options' call ends with the task that started it.
struct AbortOnDrop(Option<JoinHandle<()>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(h) = &self.0 {
            h.abort();
        }
    }
}

/// The runs of the options that hung a call end with the task that started them.
struct Isolated(Vec<(Source, JoinHandle<()>)>);

impl Drop for Isolated {
    fn drop(&mut self) {
        for (_, h) in &self.0 {
            h.abort();
        }
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Where an option goes in one call: `onstat -u` first, then what its waiters are joined with
/// at its moment (the holders of locks, buffers and mutexes, the conditions' ages, the
/// transactions, the engine's blocker graph), then the rest in the registry's order. A call's
/// options are printed one after the other: a bulky one (`-g ath` of 5,000 threads) between
/// `-u` and `-k` would leave `-k` milliseconds later, and a lock changes hands in less.
fn call_rank(s: &Source) -> u8 {
    match s {
        Source::OnstatU => 0,
        Source::OnstatK
        | Source::OnstatX
        | Source::OnstatGCon
        | Source::OnstatGLmx
        | Source::OnstatGWmx
        | Source::OnstatS
        | Source::OnstatXTxn
        | Source::OnstatGBth => 1,
        _ => 2,
    }
}

/// One tick's sources: in one `onstat -i` when it answers so, else as before. `None` when the
/// app has gone.
async fn tick(ctx: &Ctx, state: &Mutex<State>, due: &[Source], why: &str) -> Option<()> {
    let mut due = due.to_vec();
    due.sort_by_key(call_rank);
    let due = due.as_slice();
    let interactive = lock(state)
        .not_interactive
        .as_ref()
        .is_none_or(|(u, _)| Instant::now() >= *u);
    let (alone, together): (Vec<Source>, Vec<Source>) =
        due.iter().partition(|s| lock(state).runs_alone(s));
    let mut rest: Vec<Source> = together.clone();
    let mut note_alone = String::new();
    if interactive && together.len() > 1 {
        match run_interactive(ctx, state, &together, why).await {
            Interactive::Gone => return None,
            Interactive::Done {
                unread,
                hung,
                unreached,
            } => {
                let until = Instant::now() + RETRY_GROUPING;
                let mut st = lock(state);
                for s in &unread {
                    st.alone.push((*s, until));
                }
                if let Some(h) = hung {
                    st.isolate(h);
                }
                st.retry.extend(unreached);
                // The active sessions' statements it did not answer are not each run as a
                // process of their own now (up to a few hundred a tick): they stay unread until
                // the call is tried again; a session in focus has its own asked alone at its
                // next round.
                rest = unread
                    .into_iter()
                    .filter(|s| !matches!(s, Source::OnstatGSql(_)))
                    .collect();
                note_alone = "run alone: onstat -i did not answer this option".into();
            }
            Interactive::Unsplit(reason) => {
                lock(state).not_interactive = Some((Instant::now() + RETRY_GROUPING, reason));
            }
        }
    } else if together.len() <= 1 {
        rest = together;
    }
    if note_alone.is_empty() {
        if let Some((_, reason)) = lock(state).not_interactive.clone() {
            note_alone = format!("one call per option: onstat -i {reason}");
        }
    }
    for s in &alone {
        rest.push(*s);
        note_alone = "run alone: onstat -i did not answer this option".into();
    }
    if rest.is_empty() {
        return Some(());
    }
    before(ctx, state, &rest, &note_alone).await
}

/// As before `onstat -i`: the non-`-g` options in one command-line call, the others one by one.
async fn before(ctx: &Ctx, state: &Mutex<State>, due: &[Source], note: &str) -> Option<()> {
    let note = (!note.is_empty()).then(|| note.to_string());
    let (grouped, single): (Vec<Source>, Vec<Source>) =
        due.iter().partition(|s| s.group_option().is_some());
    let alone = lock(state).alone_until.is_some_and(|u| Instant::now() < u);
    let mut one_by_one = single;
    if grouped.len() > 1 && !alone {
        match run_grouped(ctx, &grouped, note.clone()).await {
            Grouped::Gone => return None,
            Grouped::Done => lock(state).alone_until = None,
            Grouped::Unsplit => {
                lock(state).alone_until = Some(Instant::now() + RETRY_GROUPING);
                one_by_one.extend(grouped);
            }
        }
    } else {
        one_by_one.extend(grouped);
    }
    for s in &one_by_one {
        let run = ctx.run_raw(s, &s.request()).await;
        if matches!(run.result, Err(SourceError::Timeout { .. })) {
            // It held up every call after it: alone in its own task from now.
            lock(state).isolate(*s);
        }
        let result = ctx.deliver_noted(s, run, note.clone()).await?;
        observe(state, s, &result);
    }
    Some(())
}

/// What a source's result tells the task: the cluster's peers.
fn observe(state: &Mutex<State>, source: &Source, result: &Result<Parsed, SourceError>) {
    if let (Source::OnstatGCluster, Ok(p)) = (source, result) {
        if let Some(c) = p.get::<OnstatGCluster>() {
            lock(state).kinds = super::ha::Kinds::of(c);
        }
    }
}

enum Interactive {
    /// Every source answered got its part, but `unread`, whose part did not parse, still need
    /// a run; `hung` got the call's timeout (its answer never ended); `unreached` got nothing.
    Done {
        unread: Vec<Source>,
        hung: Option<Source>,
        unreached: Vec<Source>,
    },
    /// The output did not split: why.
    Unsplit(String),
    Gone,
}

/// One `onstat -i` for every due source, its answer cut at the prompts.
async fn run_interactive(
    ctx: &Ctx,
    state: &Mutex<State>,
    due: &[Source],
    why: &str,
) -> Interactive {
    let mut lines = Vec::with_capacity(due.len());
    for s in due {
        let Run::Onstat(options) = s.def().run else {
            return Interactive::Unsplit(format!("cannot carry {}", s.label()));
        };
        let words: Vec<String> = options
            .iter()
            .map(|o| o.replace("{}", &s.arg().unwrap_or_default()))
            .collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        match crate::parsers::interactive::option_line(&words) {
            Some(l) => lines.push(l),
            None => return Interactive::Unsplit(format!("refuses to send {}", s.label())),
        }
    }
    let mut stdin = lines.join("\n");
    stdin.push('\n');
    let request = Request::CommandInput {
        argv: vec!["onstat".into(), "-i".into()],
        stdin,
    };
    let started = Instant::now();
    let t = ctx.clock.now();
    let timeout = due.iter().map(|s| s.timeout()).max().unwrap_or_default();
    let (result, cpu) = ctx.run_measured_keeping(&request, timeout).await;
    let took = started.elapsed();
    if took > ctx.scaled(super::super::source::registry::PERIOD_FAST) / 2 && why.is_empty() {
        lock(state).split_slow = Some(Instant::now() + RETRY_GROUPING);
    }
    let n = due.len();
    let mut argv = vec!["onstat".to_string(), "-i".to_string()];
    argv.extend(lines);
    let note = if why.is_empty() {
        format!("onstat -i: one process for {n} options")
    } else {
        format!("onstat -i: {why}")
    };
    // Killed at its timeout: the answers that ended before, then the option that hung.
    let mut cut: Option<(usize, SourceError)> = None;
    // The parts are slices of the one output where they can be (`interactive::split`): it
    // stays whole until every part is parsed.
    let whole = match result {
        Err(Cut {
            error: e @ SourceError::Timeout { .. },
            mut stdout,
        }) => match answered(&stdout) {
            None => {
                // Said at once for every source it carried (where everything hangs, the
                // timeout shows now, not when the plain calls time out too); then they run as
                // plain calls.
                let shared = u32::try_from(n).unwrap_or(u32::MAX);
                for s in due {
                    if ctx.recording() {
                        let run = RawRun {
                            t,
                            took,
                            result: Err(e.clone()),
                            cpu,
                            shared,
                        };
                        ctx.record(s, &argv, &run);
                    }
                    let how = super::sample::How {
                        note: Some(note.clone()),
                        cpu,
                        shared,
                        bytes: None,
                        process: None,
                        live: false, // deliver_result says
                    };
                    if ctx
                        .deliver_result(s, t, took, Err(e.clone()), how)
                        .await
                        .is_none()
                    {
                        return Interactive::Gone;
                    }
                }
                return Interactive::Unsplit(format!(
                    "hung before its first `onstat>` prompt ({e})"
                ));
            }
            Some((ended, _)) if ended > n => {
                return Interactive::Unsplit(format!("{ended} answers for {n} options ({e})"))
            }
            Some((ended, at)) => {
                stdout.truncate(at);
                cut = Some((ended, e));
                // Complete answers of a process killed later: no exit code of their own, the
                // text decides (as for any onstat output, whatever mode its exit code says).
                Ok(Output {
                    exit: Some(0),
                    stdout,
                    stderr: String::new(),
                })
            }
        },
        // Running them one by one would only wait (or read) that much again, once per source.
        Err(Cut {
            error: e @ (SourceError::OutputTooLarge { .. } | SourceError::MemoryBudget { .. }),
            ..
        }) => Err(e),
        Err(Cut { error: e, .. }) => return Interactive::Unsplit(format!("failed: {e}")),
        Ok(out) if out.exit.is_none() => return Interactive::Unsplit("was killed".into()),
        Ok(out) => Ok(out),
    };
    // How many parts the output holds: every option's, or those that ended before the hang.
    let answers = cut.as_ref().map_or(n, |(ended, _)| *ended);
    let parts: Vec<Result<Part<'_>, &SourceError>> = match &whole {
        Err(e) => vec![Err(e); n],
        Ok(_) if answers == 0 => Vec::new(),
        Ok(out) => match crate::parsers::interactive::split(&out.stdout, answers) {
            Ok(texts) => texts
                .into_iter()
                .map(|stdout| {
                    Ok(Part {
                        exit: out.exit,
                        stdout,
                        stderr: "",
                    })
                })
                .collect(),
            // What a killed call answered does not read: asked again with the others.
            Err(_) if cut.is_some() => Vec::new(),
            Err(e) => {
                // An onstat whose answer is only the off-line message is off-line, not
                // without interactive mode.
                if crate::parsers::header::is_offline_message(&out.stdout) {
                    let part = Part {
                        exit: out.exit,
                        stdout: std::borrow::Cow::Borrowed(out.stdout.as_str()),
                        stderr: &out.stderr,
                    };
                    vec![Ok(part); n]
                } else {
                    return Interactive::Unsplit(e.to_string());
                }
            }
        },
    };
    let mut assigned: Vec<(Source, Result<Part<'_>, &SourceError>)> =
        due.iter().copied().zip(parts).collect();
    let mut hung = None;
    let mut unreached = Vec::new();
    if let Some((ended, e)) = &cut {
        if let Some(h) = due.get(*ended) {
            // The option after the last answer that ended: its answer never did.
            hung = Some(*h);
            assigned.push((*h, Err(e)));
        }
        unreached = due
            .iter()
            .copied()
            .filter(|s| !assigned.iter().any(|(a, _)| a == s))
            .collect();
    }
    let mut unread = Vec::new();
    // Each part goes as it is delivered (an owned one, lent the banner, is freed then).
    for (source, part) in assigned {
        let source = &source;
        let note = if Some(*source) == hung {
            format!("{note}; it hung on this option, which runs alone from now")
        } else {
            note.clone()
        };
        let bytes = part.as_ref().ok().map(|p| p.stdout.len() as u64);
        let parsed = match &part {
            // Parsed where it is (no copy of the part); an `onstat -i` option is never the
            // extent map, which alone is parsed off the loop.
            Ok(p) => Some(ctx.memos.parse_text(source, p.exit, &p.stdout, p.stderr)),
            Err(_) => None,
        };
        if let Some(Err(SourceError::Parse(_))) = &parsed {
            unread.push(*source);
            continue;
        }
        if ctx.recording() {
            let run = RawRun {
                t,
                took,
                result: match &part {
                    Ok(p) => Ok(Output {
                        exit: p.exit,
                        stdout: p.stdout.to_string(),
                        stderr: p.stderr.to_string(),
                    }),
                    Err(e) => Err((*e).clone()),
                },
                cpu,
                shared: u32::try_from(n).unwrap_or(u32::MAX),
            };
            ctx.record(source, &argv, &run);
        }
        let result = match parsed {
            Some(r) => r,
            None => Err(part
                .as_ref()
                .err()
                .map_or(SourceError::Killed, |e| (*e).clone())),
        };
        let how = super::sample::How {
            note: Some(note),
            cpu,
            shared: u32::try_from(n).unwrap_or(u32::MAX),
            bytes,
            process: None,
            live: false, // deliver_result says
        };
        match ctx.deliver_result(source, t, took, result, how).await {
            None => return Interactive::Gone,
            Some(r) => observe(state, source, &r),
        }
        let_the_store_apply().await;
    }
    Interactive::Done {
        unread,
        hung,
        unreached,
    }
}

/// How far a killed `onstat -i` got: how many options' answers ended (the next prompt came)
/// and where the last prompt starts (the answers before it are whole). `None` when no prompt
/// came at all. Prompts are found as `interactive::split` finds them.
fn answered(text: &str) -> Option<(usize, usize)> {
    use crate::parsers::interactive::PROMPT;
    let mut count = 0;
    let mut last = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let mut rest = line;
        loop {
            let trimmed = rest.trim_start_matches([' ', '\t']);
            match trimmed.strip_prefix(PROMPT) {
                Some(after) => {
                    count += 1;
                    // The first prompt of a line cuts at the line's start (the blanks before
                    // it are no answer's, as `split` reads them).
                    last = Some(if rest.len() == line.len() {
                        offset
                    } else {
                        offset + line.len() - trimmed.len()
                    });
                    rest = after.strip_prefix(' ').unwrap_or(after);
                }
                None => break,
            }
        }
        offset += line.len();
    }
    last.map(|at| (count - 1, at))
}

/// One option's part of an `onstat -i` output: a slice of it, or built with the banner it
/// lends.
#[derive(Clone)]
struct Part<'a> {
    exit: Option<i32>,
    stdout: std::borrow::Cow<'a, str>,
    stderr: &'a str,
}

enum Grouped {
    /// Every source got its part (or the call's failure).
    Done,
    /// The output did not split: run the sources one by one.
    Unsplit,
    /// The app has gone.
    Gone,
}

/// One `onstat` for every due source, cut into each source's output.
async fn run_grouped(ctx: &Ctx, due: &[Source], note: Option<String>) -> Grouped {
    let options: Vec<&'static str> = due.iter().filter_map(|s| s.group_option()).collect();
    let mut argv = vec!["onstat".to_string()];
    argv.extend(options.iter().map(|o| o.to_string()));
    let request = Request::Command(argv.clone());
    let started = Instant::now();
    let t = ctx.clock.now();
    let timeout = due.iter().map(|s| s.timeout()).max().unwrap_or_default();
    let (result, cpu) = ctx.run_measured(&request, timeout).await;
    let took = started.elapsed();
    let shared = u32::try_from(due.len()).unwrap_or(u32::MAX);
    let parts: Vec<Result<Output, SourceError>> = match result {
        // Running them one by one would only wait that long again, once per source.
        Err(e @ SourceError::Timeout { .. }) => vec![Err(e); due.len()],
        Err(_) => return Grouped::Unsplit,
        Ok(out) => match crate::parsers::group::split(&out.stdout, &options) {
            Some(texts) => texts
                .into_iter()
                .map(|stdout| {
                    Ok(Output {
                        exit: out.exit,
                        stdout,
                        stderr: out.stderr.clone(),
                    })
                })
                .collect(),
            None => return Grouped::Unsplit,
        },
    };
    for (source, result) in due.iter().zip(parts) {
        let run = RawRun {
            t,
            took,
            result,
            cpu,
            shared,
        };
        ctx.record(source, &argv, &run);
        if ctx.deliver_noted(source, run, note.clone()).await.is_none() {
            return Grouped::Gone;
        }
        let_the_store_apply().await;
    }
    Grouped::Done
}

/// Lets the store apply the part just delivered before the next is parsed. The runtime has
/// one thread: without it, every part of a call is parsed before the first is applied, so
/// each source's new record and the one it replaces are held at once, with the whole output
/// (at 5,000 sessions, when every period meets, about 10 MB more at that second).
async fn let_the_store_apply() {
    tokio::task::yield_now().await;
}

#[cfg(test)]
mod tests {
    use super::{answered, next_due, plan};
    use crate::ids::Sid;
    use crate::source::Source;

    #[test]
    fn a_killed_call_answered_the_options_before_its_last_prompt() {
        let banner = "\nIBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 00:10:00 -- 2457600 Kbytes\n\n";
        let text = format!(
            "onstat> {banner}Userthreads\nrow\nonstat> {banner}Locks\nl\n  onstat> {banner}Half"
        );
        let (ended, at) = answered(&text).expect("prompts");
        assert_eq!(ended, 2);
        assert!(text[at..].starts_with("  onstat> "), "{}", &text[at..]);
        let parts = crate::parsers::interactive::split(&text[..at], ended).expect("splits");
        assert_eq!(parts[1], format!("{banner}Locks\nl\n"));
        // An option with no answer: the next prompt on the same line.
        assert_eq!(answered("onstat> onstat> x").map(|a| a.0), Some(1));
        // Killed at the first option: none ended.
        assert_eq!(answered("onstat> \nIBM"), Some((0, 0)));
        // No prompt at all.
        assert_eq!(answered(""), None);
        assert_eq!(answered("IBM Informix Dynamic Server\n"), None);
    }
    use std::time::Duration;

    fn s(x: f64) -> Duration {
        Duration::from_secs_f64(x)
    }

    #[test]
    fn due_on_the_multiples_of_the_period_or_past_them_by_the_phase() {
        // On the multiples, as before.
        assert_eq!(next_due(s(0.5), s(10.0), s(0.0)), s(10.0));
        assert_eq!(next_due(s(10.2), s(10.0), s(0.0)), s(20.0));
        // A run that took most of its period waits for the next multiple but one.
        assert_eq!(next_due(s(16.0), s(10.0), s(0.0)), s(30.0));
        // Past them by the phase: 3, 33, 63...
        assert_eq!(next_due(s(0.0), s(30.0), s(3.0)), s(33.0));
        assert_eq!(next_due(s(3.4), s(30.0), s(3.0)), s(33.0));
        assert_eq!(next_due(s(33.2), s(30.0), s(3.0)), s(63.0));
        assert_eq!(next_due(s(20.0), s(30.0), s(3.0)), s(63.0));
        assert_eq!(next_due(s(10.0), s(30.0), s(3.0)), s(33.0));
        // A phase of a period or more is taken modulo the period.
        assert_eq!(next_due(s(0.5), s(30.0), s(33.0)), s(33.0));
    }

    /// While the slow options have a call of their own: `onstat -g ath`, wanted at every tick
    /// (more threads look runnable than CPU VPs), stays with this tick's `onstat -u`, and the
    /// statements ride with it too; a tick without `onstat -u` asks for no statement (asking
    /// counts them as read).
    #[test]
    fn statements_and_sources_wanted_at_every_tick_ride_with_the_ticks_onstat_u() {
        let sql = Source::OnstatGSql(Sid(812));
        let wanted = |s: &Source| *s == Source::OnstatGAth;
        let due = vec![Source::OnstatU, Source::OnstatGAth, Source::OnstatGSeg];
        assert!(Source::OnstatGSeg.period() > super::FAST);
        let (fast, slow) = plan(due.clone(), true, true, wanted, || vec![sql], Vec::new());
        assert_eq!(fast, [Source::OnstatU, Source::OnstatGAth, sql]);
        assert_eq!(slow, [Source::OnstatGSeg]);
        // Not split: one call.
        let (fast, slow) = plan(due, true, false, wanted, || vec![sql], Vec::new());
        assert_eq!(
            fast,
            [Source::OnstatU, Source::OnstatGAth, Source::OnstatGSeg, sql]
        );
        assert!(slow.is_empty());
        // A tick without onstat -u: the statements are not asked for.
        let mut asked = false;
        let (fast, _) = plan(
            vec![Source::OnstatGSeg],
            true,
            false,
            wanted,
            || {
                asked = true;
                vec![sql]
            },
            Vec::new(),
        );
        assert_eq!(fast, [Source::OnstatGSeg]);
        assert!(!asked);
        // Without interactive mode they would be calls of their own: none.
        let (fast, _) = plan(
            vec![Source::OnstatU],
            false,
            true,
            wanted,
            || vec![sql],
            Vec::new(),
        );
        assert_eq!(fast, [Source::OnstatU]);
    }

    /// The options of a session in focus ride in the tick's call whatever it carries, never in
    /// the slow options' call (their period is the joins' 5 s), each once although the active
    /// sessions' statements name the same session; without interactive mode they are still
    /// asked (one call each, as every option then).
    #[test]
    fn the_sessions_in_focus_ride_in_the_ticks_call() {
        let ses = Source::OnstatGSes(Sid(812));
        let sql = Source::OnstatGSql(Sid(812));
        let other = Source::OnstatGSql(Sid(900));
        assert!(ses.period() > super::FAST);
        let due = vec![Source::OnstatU, Source::OnstatGSeg];
        let (fast, slow) = plan(
            due.clone(),
            true,
            true,
            |_| false,
            || vec![sql, other],
            vec![ses, sql],
        );
        assert_eq!(fast, [Source::OnstatU, ses, sql, other]);
        assert_eq!(slow, [Source::OnstatGSeg]);
        // A tick without onstat -u (a call started for a session just drilled into).
        let (fast, _) = plan(Vec::new(), true, false, |_| false, Vec::new, vec![ses, sql]);
        assert_eq!(fast, [ses, sql]);
        let (fast, _) = plan(due, false, false, |_| false, Vec::new, vec![ses]);
        assert_eq!(fast, [Source::OnstatU, Source::OnstatGSeg, ses]);
    }
}
