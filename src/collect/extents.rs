//! The extent-map job: builds the `chunk:page` map in the background from `--extents FILE`, the
//! on-disk cache, or `oncheck -pe` (then saved to the cache); again on every rebuild request.
//! Never on the UI path.

use super::sample::{RawSample, Update};
use super::Ctx;
use crate::error::SourceError;
use crate::extents::cache::Cached;
use crate::extents::ExtentMap;
use crate::parsers::Parsed;
use crate::source::{Request, Source};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// The extent map's state, for the header and the Buffers pane.
#[derive(Debug, Clone, PartialEq)]
pub enum ExtentStatus {
    /// Not asked for (no oncheck, no file).
    None,
    /// Being read or built; `what` says from where (`oncheck -pe`, a file, the cache).
    Building { what: String, since: Duration },
    Ready {
        what: String,
        extents: usize,
        /// When the map was built (session time; negative ages come from the cache).
        built_at: Duration,
        age_at_load: Duration,
    },
    Failed {
        error: String,
        at: Duration,
        /// Extents of the older map still in use (a rebuild failed after a map was ready).
        in_use: Option<usize>,
    },
}

/// Where the extent map comes from.
#[derive(Debug, Clone, Default)]
pub struct ExtentSource {
    /// `--extents FILE`: a captured `oncheck -pe` (read once, at the start).
    pub(crate) file: Option<PathBuf>,
    /// Where the map is kept between runs (live mode only).
    pub(crate) cache: Option<CacheSpot>,
}

/// Where the extent job may keep and find the map between runs (live mode only: the demo and
/// tests never write to the user's cache).
#[derive(Debug, Clone)]
pub(crate) struct CacheSpot {
    pub(crate) dir: PathBuf,
    pub(crate) server: String,
}

/// Builds the extent map in the background: from `--extents FILE`, else from the on-disk cache,
/// else by running `oncheck -pe` (then saved to the cache); again on every rebuild request.
/// Never on the UI path.
pub(super) async fn job(
    ctx: Ctx,
    from: ExtentSource,
    mut rebuild: mpsc::Receiver<()>,
    status: mpsc::Sender<ExtentStatus>,
) {
    let ExtentSource { file, cache } = from;
    let mut first = true;
    loop {
        let since = ctx.clock.now();
        let from_file = if first { file.clone() } else { None };
        let from_cache = if first && from_file.is_none() {
            match &cache {
                Some(c) => load_cache(c.clone()).await,
                None => None,
            }
        } else {
            None
        };
        first = false;
        let st = if let Some(cached) = from_cache {
            deliver_cached(&ctx, cached).await
        } else {
            let (what, request) = match from_file {
                Some(path) => (path.display().to_string(), Request::ReadFile(path)),
                None => ("oncheck -pe".to_string(), Source::OncheckPe.request()),
            };
            let _ = status
                .send(ExtentStatus::Building {
                    what: what.clone(),
                    since,
                })
                .await;
            build_map(&ctx, &what, &request, cache.as_ref()).await
        };
        let Some(st) = st else { return };
        if status.send(st).await.is_err() || rebuild.recv().await.is_none() {
            return;
        }
    }
}

async fn load_cache(spot: CacheSpot) -> Option<Cached> {
    tokio::task::spawn_blocking(move || crate::extents::cache::load(&spot.dir, &spot.server))
        .await
        .ok()
        .and_then(|r| r.ok())
        .flatten()
}

/// Hands a cached map to the store as the `oncheck -pe` sample it came from (recorded too, so a
/// replay resolves pages the same way).
async fn deliver_cached(ctx: &Ctx, cached: Cached) -> Option<ExtentStatus> {
    let t = ctx.clock.now();
    if let Some(raw) = &ctx.sinks.raw {
        let _ = raw.try_send(RawSample {
            t: t.as_secs_f64(),
            source: Source::OncheckPe.label(),
            argv: vec!["cat".into(), cached.path.display().to_string()],
            exit: Some(0),
            stdout: cached.text.clone(),
            stderr: String::new(),
        });
    }
    let extents = cached.map.extent_count();
    let update = Update {
        source: Source::OncheckPe,
        t,
        took: Duration::ZERO,
        result: Ok(Arc::new(cached.map) as Parsed),
        // What was read for it: the cache file (a replay reads the same bytes again).
        how: crate::collect::sample::How {
            bytes: Some(cached.text.len() as u64),
            ..Default::default()
        },
    };
    ctx.sinks.updates.send(update).await.ok()?;
    Some(ExtentStatus::Ready {
        what: "the cache".into(),
        extents,
        built_at: t,
        age_at_load: cached.age,
    })
}

/// Runs (or reads) one `oncheck -pe`, indexes it off the async workers, and saves it to the
/// cache when it came from oncheck.
async fn build_map(
    ctx: &Ctx,
    what: &str,
    request: &Request,
    cache: Option<&CacheSpot>,
) -> Option<ExtentStatus> {
    let run = ctx.run_raw(&Source::OncheckPe, request).await;
    let t = run.t;
    let took = run.took;
    // The text is parsed where it is, and kept only for the cache: never a second copy of a
    // report of a hundred MB.
    let keep = cache.is_some() && matches!(request, Request::Command(_));
    let (result, bytes, text) = match run.result {
        Err(e) => (Err(e), None, None),
        Ok(out) => {
            let (parsed, text) = tokio::task::spawn_blocking(move || {
                let parsed = Source::OncheckPe.parse_ref(&out);
                (parsed, out.stdout)
            })
            .await
            .unwrap_or_else(|e| {
                (
                    Err(SourceError::Other(format!("parser: {e}"))),
                    String::new(),
                )
            });
            let bytes = text.len() as u64;
            (parsed, Some(bytes), keep.then_some(text))
        }
    };
    let st = match result.as_ref().map(|p| p.get::<ExtentMap>()) {
        Ok(Some(map)) => ExtentStatus::Ready {
            what: what.to_string(),
            extents: map.extent_count(),
            built_at: ctx.clock.now(),
            age_at_load: Duration::ZERO,
        },
        Ok(None) => ExtentStatus::Failed {
            in_use: None,
            error: format!("{what} gave no extent map"),
            at: ctx.clock.now(),
        },
        Err(e) => ExtentStatus::Failed {
            in_use: None,
            error: e.to_string(),
            at: ctx.clock.now(),
        },
    };
    let ok = result.is_ok();
    ctx.sinks
        .updates
        .send(Update {
            source: Source::OncheckPe,
            t,
            took,
            result,
            how: crate::collect::sample::How {
                bytes,
                ..Default::default()
            },
        })
        .await
        .ok()?;
    if let (true, Some(spot), Some(text), Request::Command(_)) = (ok, cache, text, request) {
        let spot = spot.clone();
        // A failed save only costs the next start a rebuild; it is not worth a message.
        let _ = tokio::task::spawn_blocking(move || {
            crate::extents::cache::save(&spot.dir, &spot.server, &text)
        })
        .await;
    }
    Some(st)
}
