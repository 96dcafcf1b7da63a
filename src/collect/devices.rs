//! The devices task: `/proc/diskstats` on its period, and each chunk path's block device,
//! resolved once per chunk list (when `onstat -D` lists other paths) with a few small requests
//! (`stat -L` of every path in one process, then `/sys/dev/block` files; see
//! `parsers::chunk_devices`). Every request goes through the command runner, so it works the same
//! locally, over ssh and in the demo; the requests and their answers are delivered (and
//! recorded) as one `ChunkDevices` sample, which a replay resolves again the same way.
//!
//! A host without `/proc/diskstats` (not Linux) is asked once: the I/O pane then shows what
//! Informix says of its chunks and says why the devices are unknown.

use super::{pause, Ctx, RawRun};
use crate::parsers::chunk_devices::{Answer, Ask, Resolver};
use crate::source::{CommandRunner, Output, Request, Source, FILE_TIMEOUT};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// A resolution that left a chunk unknown is tried again after this long (a dropped ssh
/// connection, a volume not yet mapped), never sooner.
const RETRY_UNKNOWN: Duration = Duration::from_secs(600);

/// Rounds of requests one resolution makes at most: each round asks what the answers so far
/// showed (a device, then its slaves, then theirs).
const MAX_ROUNDS: usize = 32;

pub(crate) fn spawn(ctx: &Ctx) -> JoinHandle<()> {
    let mut ctx = ctx.clone();
    tokio::spawn(async move {
        let mut chunks = ctx.chunk_paths.subscribe();
        let mut diskstats_ever_ok = false;
        let mut not_linux = false;
        let mut resolved: Option<(Vec<String>, Option<Instant>)> = None;
        loop {
            if !not_linux {
                match ctx.collect(&Source::ProcDiskstats).await {
                    None => return,
                    Some(Ok(_)) => diskstats_ever_ok = true,
                    Some(Err(_)) if !diskstats_ever_ok => not_linux = true,
                    Some(Err(_)) => {}
                }
            }
            let paths = chunks.borrow_and_update().clone();
            let due = match &resolved {
                _ if not_linux || paths.is_empty() => false,
                None => true,
                Some((done, retry)) => *done != paths || retry.is_some_and(|r| Instant::now() >= r),
            };
            if due {
                match resolve(&ctx, &paths).await {
                    None => return,
                    Some(complete) => {
                        let retry = (!complete).then(|| Instant::now() + RETRY_UNKNOWN);
                        resolved = Some((paths, retry));
                    }
                }
            }
            pause(
                &mut ctx,
                Source::ProcDiskstats.period(),
                std::time::Duration::ZERO,
            )
            .await;
        }
    })
}

/// How a request of the resolution is run.
fn request_of(ask: &Ask) -> Request {
    match ask {
        Ask::Stat(paths) => Request::Command(Ask::stat_argv(paths)),
        Ask::Read(p) => Request::ReadFile(p.into()),
        Ask::List(p) => Request::ListDir(p.into()),
    }
}

/// Asks `runner` what the resolution of `paths` needs, round after round, until it is complete
/// (or `MAX_ROUNDS` rounds): the same requests and answers the devices task makes, for tests and
/// tools.
pub async fn resolve_with(runner: &dyn CommandRunner, paths: &[String]) -> Resolver {
    let mut r = Resolver::new(paths);
    for _ in 0..MAX_ROUNDS {
        let needs = r.needs();
        if needs.is_empty() {
            break;
        }
        for ask in needs {
            let answer = match runner.run(&request_of(&ask), FILE_TIMEOUT).await {
                Ok(o) => Answer::Done {
                    exit: o.exit,
                    stdout: o.stdout,
                    stderr: o.stderr,
                },
                Err(e) => Answer::Failed(e.to_string()),
            };
            r.answer(ask, answer);
        }
    }
    r
}

/// Resolves `paths` and delivers the transcript. `Some(true)` when every chunk's device is
/// known, `Some(false)` when some is not, `None` when the app has gone.
async fn resolve(ctx: &Ctx, paths: &[String]) -> Option<bool> {
    let started = Instant::now();
    let t = ctx.clock.now();
    let r = resolve_with(ctx.runner.as_ref(), paths).await;
    let complete = r.result().chunks.iter().all(|c| c.unknown.is_none());
    let run = RawRun {
        t,
        took: started.elapsed(),
        result: Ok(Output::ok(r.transcript())),
        cpu: None,
        shared: 1,
    };
    let source = Source::ChunkDevices;
    ctx.record(&source, &Ask::stat_argv(r.paths()), &run);
    let _ = ctx.deliver(&source, run).await?;
    Some(complete)
}
