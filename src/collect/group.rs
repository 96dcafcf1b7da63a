//! The polled onstat sources that share calls: at each moment, those due run as ONE `onstat`
//! with all their options (`onstat -u -X -k -p -l -s -x`), whose output `parsers::group::split`
//! cuts back into what each option prints alone. One process a second instead of one per
//! source: onstat attaches the shared memory each time it starts, the costly part on a big
//! instance.
//!
//! A grouped output that does not split (an onstat that refuses one of the options, prints the
//! banner per option, or a runner that does not know the call) is not guessed at: the sources
//! then run one by one, and grouping is tried again later.

use super::{Ctx, RawRun};
use crate::error::SourceError;
use crate::source::{Output, Request, Source};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// After a grouped call failed to split, how long the sources run one by one.
const RETRY_GROUPING: Duration = Duration::from_secs(600);

/// The next time a source of `period` is due after `now`: the next multiple of the period on
/// the session clock (so sources with periods that divide each other meet), or the one after
/// when the next is less than half a period away (a slow run is not repeated back to back).
fn next_due(now: Duration, period: Duration) -> Duration {
    let p = period.as_nanos().max(1);
    let n = now.as_nanos();
    let mut next = (n / p + 1) * p;
    if next - n < p / 2 {
        next += p;
    }
    Duration::from_nanos(u64::try_from(next).unwrap_or(u64::MAX))
}

/// Starts the task; nothing runs when `sources` is empty.
pub(crate) fn spawn(ctx: &Ctx, sources: Vec<Source>) -> JoinHandle<()> {
    let mut ctx = ctx.clone();
    tokio::spawn(async move {
        if sources.is_empty() {
            return;
        }
        let mut next: Vec<Duration> = vec![Duration::ZERO; sources.len()];
        let mut alone_until: Option<Instant> = None;
        loop {
            let now = ctx.clock.now();
            let due: Vec<Source> = sources
                .iter()
                .zip(&next)
                // Due on its period, or wanted with this tick's onstat -u (demand.rs).
                .filter(|(s, n)| **n <= now + Duration::from_millis(1) || ctx.demand.wants(s))
                .map(|(s, _)| *s)
                .collect();
            let alone = alone_until.is_some_and(|u| Instant::now() < u);
            if due.len() == 1 || (alone && !due.is_empty()) {
                for s in &due {
                    if ctx.collect(s).await.is_none() {
                        return;
                    }
                }
            } else if !due.is_empty() {
                match run_grouped(&ctx, &due).await {
                    Grouped::Gone => return,
                    Grouped::Done => alone_until = None,
                    Grouped::Unsplit => {
                        alone_until = Some(Instant::now() + RETRY_GROUPING);
                        for s in &due {
                            if ctx.collect(s).await.is_none() {
                                return;
                            }
                        }
                    }
                }
            }
            let after = ctx.clock.now();
            for (s, n) in sources.iter().zip(next.iter_mut()) {
                if due.contains(s) {
                    *n = next_due(after, ctx.scaled(s.period()));
                }
            }
            let wake = next.iter().min().copied().unwrap_or(after);
            tokio::select! {
                _ = tokio::time::sleep(wake.saturating_sub(after)) => {}
                changed = ctx.interval.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    // New periods: every source is due again on the new grid.
                    let now = ctx.clock.now();
                    for (s, n) in sources.iter().zip(next.iter_mut()) {
                        *n = next_due(now, ctx.scaled(s.period()));
                    }
                }
            }
        }
    })
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
async fn run_grouped(ctx: &Ctx, due: &[Source]) -> Grouped {
    let options: Vec<&'static str> = due.iter().filter_map(|s| s.group_option()).collect();
    let mut argv = vec!["onstat".to_string()];
    argv.extend(options.iter().map(|o| o.to_string()));
    let request = Request::Command(argv.clone());
    let started = Instant::now();
    let t = ctx.clock.now();
    let timeout = due.iter().map(|s| s.timeout()).max().unwrap_or_default();
    let result = ctx.run_bounded(&request, timeout).await;
    let took = started.elapsed();
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
        let run = RawRun { t, took, result };
        ctx.record(source, &argv, &run);
        if ctx.deliver(source, run).await.is_none() {
            return Grouped::Gone;
        }
    }
    Grouped::Done
}
