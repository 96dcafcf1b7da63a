//! One instance's store and the one policy for rebuilding what is built from it (the screen's
//! snapshot, `serve`'s metrics): data arriving together settles for `SETTLE`, then one build for
//! all of it, at most every half interval for data alone; what the user does, at once.

use crate::collect::log::DebugLog;
use crate::collect::sample::Update;
use crate::store::Store;
use std::time::Duration;
use tokio::time::Instant;

/// Data arriving together (one tick of the collectors) settles this long, so the snapshot is
/// built once for all of it.
pub(crate) const SETTLE: Duration = Duration::from_millis(60);

/// Applies updates that arrived together to `store` (and to the `--log` diary); the snapshot is
/// due `SETTLE` later.
pub(crate) fn apply(
    store: &mut Store,
    log: &mut Option<DebugLog>,
    updates: impl IntoIterator<Item = Update>,
) -> Duration {
    for u in updates {
        if let Some(l) = log {
            l.update(&u);
        }
        store.apply(u);
    }
    SETTLE
}

/// Whether a build is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Due {
    /// The data moved and the gap since the last build is over (or a build was forced).
    Now,
    /// The data moved, too soon after the last build: come back in this long.
    In(Duration),
    /// Nothing moved since the last build.
    Nothing,
}

/// When the store's data calls for a new build: the generation last built and when.
#[derive(Debug, Clone)]
pub(crate) struct Rebuild {
    built_generation: u64,
    last_build: Option<Instant>,
    force: bool,
}

impl Default for Rebuild {
    fn default() -> Self {
        Rebuild {
            built_generation: u64::MAX,
            last_build: None,
            force: true,
        }
    }
}

impl Rebuild {
    /// The next build is due as soon as anything moved, whatever the gap (a key, a drill).
    pub(crate) fn force(&mut self) {
        self.force = true;
    }

    /// The least time between two builds for data alone, at `interval` seconds (a build joins
    /// thousands of rows).
    pub(crate) fn min_gap(interval: f64) -> Duration {
        Duration::from_secs_f64(interval.clamp(0.1, 3600.0) * 0.5)
    }

    /// Whether the store at `generation` calls for a build, at `interval` seconds.
    pub(crate) fn due(&self, generation: u64, interval: f64) -> Due {
        if generation == self.built_generation {
            return Due::Nothing;
        }
        let min_gap = Self::min_gap(interval);
        match self.last_build {
            Some(b) if !self.force && b.elapsed() < min_gap => {
                Due::In(min_gap.saturating_sub(b.elapsed()))
            }
            _ => Due::Now,
        }
    }

    /// What was just built is of the store at `generation`.
    pub(crate) fn built(&mut self, generation: u64) {
        self.last_build = Some(Instant::now());
        self.force = false;
        self.built_generation = generation;
    }
}
