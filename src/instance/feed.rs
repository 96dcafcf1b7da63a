//! Where one instance's data comes from: its collectors (and the recorder, when recording) or
//! a replay's player.

use crate::collect::record::{Recorder, RecordingHeader};
use crate::collect::replay::Player;
use crate::collect::sample::RawSample;
use crate::collect::Collection;
use crate::error::Error;
use crate::instance::setup::Setup;
use std::time::Duration;
use tokio::time::Instant;

/// Where the store's updates come from.
pub enum Feed {
    Collect {
        collection: Collection,
        recorder: Option<Recorder>,
        /// The flight recorder (`--ring DIR`).
        ring: Option<crate::collect::ring::Ring>,
    },
    Replay {
        player: Player,
        /// When the player last moved (its speed is relative to this clock).
        last: Instant,
    },
}

impl Feed {
    /// Starts the collectors of `setup` (or its replay), and the recorder when recording.
    pub fn start(setup: &Setup) -> Result<Feed, Error> {
        if let Some(rec) = &setup.replay {
            return Ok(Feed::Replay {
                player: Player::new(rec.clone()),
                last: Instant::now(),
            });
        }
        let (raw, recorder) = match &setup.record {
            Some((path, max_mb)) => {
                let (tx, rx) = std::sync::mpsc::sync_channel::<RawSample>(4096);
                let header = RecordingHeader::new(
                    setup.server.as_deref(),
                    setup.settings.host.as_deref(),
                    setup
                        .settings
                        .wall_start
                        .unwrap_or_else(time::OffsetDateTime::now_utc),
                    &setup.settings.ports,
                    setup.settings.base_page_kb,
                );
                let rec = Recorder::start(
                    path,
                    *max_mb,
                    &header,
                    rx,
                    Some(crate::collect::record::TRACK_QUEUE),
                )?;
                (Some(tx), Some(rec))
            }
            None => (None, None),
        };
        // The ring takes every output first, and hands each on to the recording.
        let (raw, ring) = match &setup.ring {
            Some(cfg) => {
                let (ring, tx) = crate::instance::ring::start(
                    cfg,
                    &setup.settings,
                    setup.server.as_deref(),
                    raw,
                )?;
                (Some(tx), Some(ring))
            }
            None => (raw, None),
        };
        let collection = Collection::start(
            setup.runner.clone(),
            setup.interval,
            raw,
            setup.extents.clone(),
            crate::collect::SessionClock::start(),
        );
        Ok(Feed::Collect {
            collection,
            recorder,
            ring,
        })
    }

    /// The session time: the collectors' clock, or the moment the replay shows (its position,
    /// or during a seek the sample it has reached).
    pub(crate) fn now(&self) -> Duration {
        match self {
            Feed::Collect { collection, .. } => collection.clock.now(),
            Feed::Replay { player, .. } => player.shown(),
        }
    }

    /// Where the database-time track of the recording goes, when recording one.
    pub fn track(&self) -> Option<std::sync::mpsc::SyncSender<String>> {
        match self {
            Feed::Collect {
                recorder: Some(r), ..
            } => r.track(),
            _ => None,
        }
    }

    /// The flight recorder, when it keeps one.
    pub fn ring(&self) -> Option<&crate::collect::ring::Ring> {
        match self {
            Feed::Collect { ring, .. } => ring.as_ref(),
            Feed::Replay { .. } => None,
        }
    }

    /// Stops collecting; a recording is finished and its summary returned.
    pub async fn finish(self) -> Option<Result<String, Error>> {
        match self {
            Feed::Collect {
                mut collection,
                recorder,
                ring,
            } => {
                collection.stop();
                drop(collection);
                tokio::task::yield_now().await;
                // The ring ends first: it hands its last outputs on to the recording.
                if let Some(r) = ring {
                    r.finish();
                }
                let rec = recorder?;
                // Aborted collectors drop their senders; the recorder then writes what it has.
                tokio::task::yield_now().await;
                Some(rec.finish())
            }
            Feed::Replay { .. } => None,
        }
    }
}
