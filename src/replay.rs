//! Replay: plays a recording through the same parse → store → joins path as live collection,
//! with pause, step, speed and seek. Seeking back rebuilds the store from the start (parsers are
//! fast; the accumulators need the history).

use crate::app::{ReplayCommand, ReplayUi};
use crate::error::SourceError;
use crate::record::Recording;
use crate::sample::{parse_output, Parsed, RawSample, Update};
use crate::source::{Output, Source};
use crate::store::{Store, StoreSettings};
use std::sync::Arc;
use std::time::Duration;

/// Buckets of the timeline bar.
pub const TIMELINE_BUCKETS: usize = 120;

/// Turns one kept sample back into the update live collection would have produced.
pub fn stored_update(source: &Source, sample: &crate::record::StoredSample) -> Update {
    to_update(source, &sample.raw())
}

/// Turns one recorded line back into the update live collection would have produced.
pub fn to_update(source: &Source, raw: &RawSample) -> Update {
    let result = match raw.exit {
        // The run failed live (timeout, not found, killed): replay the failure as it was seen.
        None => Err(SourceError::Other(if raw.stderr.is_empty() {
            "no output (killed or timed out)".to_string()
        } else {
            raw.stderr.clone()
        })),
        Some(code) => parse_output(
            source,
            Output {
                exit: Some(code),
                stdout: raw.stdout.clone(),
                stderr: raw.stderr.clone(),
            },
        ),
    };
    Update {
        source: source.clone(),
        t: raw.at(),
        took: Duration::ZERO,
        result,
    }
}

/// A recording being played into a store.
pub struct Player {
    rec: Arc<Recording>,
    settings: StoreSettings,
    /// Index of the next sample to apply.
    next: usize,
    position: Duration,
    paused: bool,
    speed: f64,
    /// The times one step moves between: the `onstat -u` samples (else every sample).
    ticks: Vec<Duration>,
    spikes: Vec<u64>,
}

impl Player {
    pub fn new(rec: Arc<Recording>, settings: StoreSettings) -> Self {
        let mut ticks: Vec<Duration> = rec
            .samples
            .iter()
            .filter(|(s, _)| *s == Source::OnstatU)
            .map(|(_, r)| r.at())
            .collect();
        if ticks.is_empty() {
            ticks = rec.samples.iter().map(|(_, r)| r.at()).collect();
        }
        ticks.dedup();
        let spikes = spikes(&rec, TIMELINE_BUCKETS);
        Player {
            rec,
            settings,
            next: 0,
            position: Duration::ZERO,
            paused: false,
            speed: 1.0,
            ticks,
            spikes,
        }
    }

    pub fn position(&self) -> Duration {
        self.position
    }

    pub fn length(&self) -> Duration {
        self.rec.length()
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    pub fn at_end(&self) -> bool {
        self.next >= self.rec.samples.len()
    }

    pub fn ui(&self) -> ReplayUi {
        ReplayUi {
            position: self.position,
            length: self.length(),
            paused: self.paused,
            speed: self.speed,
            spikes: self.spikes.clone(),
            skipped: self.rec.skipped.clone(),
        }
    }

    /// Applies every sample up to `self.position` not applied yet.
    fn apply_due(&mut self, store: &mut Store) {
        while let Some((src, raw)) = self.rec.samples.get(self.next) {
            if raw.at() > self.position {
                break;
            }
            store.apply(stored_update(src, raw));
            self.next += 1;
        }
    }

    /// Real time passed: move on by `wall * speed` unless paused.
    pub fn advance(&mut self, wall: Duration, store: &mut Store) {
        if self.paused {
            return;
        }
        self.position = (self.position + wall.mul_f64(self.speed)).min(self.length());
        self.apply_due(store);
        if self.at_end() {
            self.paused = true;
        }
    }

    /// Moves to `target`; going back rebuilds the store from the start of the recording.
    pub fn seek(&mut self, target: Duration, store: &mut Store) {
        let target = target.min(self.length());
        if target < self.position || self.next == 0 {
            *store = Store::new(self.settings.clone());
            self.next = 0;
        }
        self.position = target;
        self.apply_due(store);
    }

    pub fn command(&mut self, cmd: ReplayCommand, store: &mut Store) {
        match cmd {
            ReplayCommand::TogglePause => {
                if self.paused && self.at_end() {
                    self.seek(Duration::ZERO, store);
                }
                self.paused = !self.paused;
            }
            ReplayCommand::Step(n) => {
                self.paused = true;
                let target = if n >= 0 {
                    self.ticks.iter().copied().find(|t| *t > self.position)
                } else {
                    self.ticks
                        .iter()
                        .copied()
                        .rev()
                        .find(|t| *t < self.position)
                };
                if let Some(t) = target {
                    self.seek(t, store);
                }
            }
            ReplayCommand::Speed(f) => self.speed = (self.speed * f).clamp(0.125, 64.0),
            ReplayCommand::SeekBy(frac) => {
                let len = self.length().as_secs_f64();
                let t = (self.position.as_secs_f64() + frac * len).clamp(0.0, len);
                self.seek(Duration::from_secs_f64(t), store);
            }
            ReplayCommand::SeekTo(t) => self.seek(t, store),
            ReplayCommand::SeekPercent(p) => {
                let t = self.length().as_secs_f64() * p.clamp(0.0, 1.0);
                self.seek(Duration::from_secs_f64(t), store);
            }
        }
    }
}

/// Waiting threads other than condition waits (B C G L S T X), per bucket of the recording: where
/// the incident spikes are. Condition waits are left out: idle sessions would drown the rest.
pub fn spikes(rec: &Recording, buckets: usize) -> Vec<u64> {
    let len = rec.length().as_secs_f64();
    let mut out = vec![0u64; buckets];
    if buckets == 0 {
        return out;
    }
    for (src, raw) in &rec.samples {
        if *src != Source::OnstatU {
            continue;
        }
        let Ok(Parsed::OnstatU(u)) = stored_update(src, raw).result else {
            continue;
        };
        let n = u
            .threads
            .iter()
            .filter(|t| {
                t.wait_reason
                    .is_some_and(|r| r != crate::parsers::onstat_u::WaitReason::Condition)
            })
            .count() as u64;
        let i = if len > 0.0 {
            ((raw.t / len) * (buckets as f64 - 1.0)).round() as usize
        } else {
            0
        };
        let slot = &mut out[i.min(buckets - 1)];
        *slot = (*slot).max(n);
    }
    out
}

/// A store holding everything a recording says up to `at` (the end when `None`).
pub fn store_at(rec: Arc<Recording>, settings: StoreSettings, at: Option<Duration>) -> Store {
    let mut store = Store::new(settings.clone());
    let mut p = Player::new(rec, settings);
    let target = at.unwrap_or_else(|| p.length());
    p.seek(target, &mut store);
    store
}
