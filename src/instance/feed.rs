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
        /// The live feed other viewers attach to (`--share`).
        share: Option<Box<crate::instance::share::Share>>,
        /// The feed this viewer follows (`--attach`): its collection collects nothing.
        follow: Option<crate::collect::follow::Follower>,
    },
    Replay {
        player: Player,
        /// When the player last moved (its speed is relative to this clock).
        last: Instant,
        /// The flight recorder's ring replayed (`--replay DIR`): where a bookmark goes.
        ring: Option<std::path::PathBuf>,
    },
}

impl Feed {
    /// Starts the collectors of `setup` (or its replay), and the recorder when recording.
    pub fn start(setup: &Setup) -> Result<Feed, Error> {
        if let Some(rec) = &setup.replay {
            let ring = match &setup.mode {
                crate::instance::setup::Mode::Replay { file } => {
                    Some(std::path::PathBuf::from(file)).filter(|p| p.is_dir())
                }
                _ => None,
            };
            return Ok(Feed::Replay {
                player: Player::new(rec.clone()),
                last: Instant::now(),
                ring,
            });
        }
        let header = header_of(setup);
        let (raw, recorder) = match &setup.record {
            Some((path, max_mb)) => {
                let (tx, rx) = std::sync::mpsc::sync_channel::<RawSample>(4096);
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
        if let Some(joined) = &setup.follow {
            let joined = joined
                .lock()
                .ok()
                .and_then(|mut j| j.take())
                .ok_or_else(|| Error::Other("the shared feed is already followed".into()))?;
            let (collection, follower) = Collection::following(joined, setup.interval, raw);
            return Ok(Feed::Collect {
                collection,
                recorder,
                ring: None,
                share: None,
                follow: Some(follower),
            });
        }
        // The ring takes every output, and hands each on to the recording.
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
        let clock = crate::collect::SessionClock::start();
        // Sharing taps the outputs on their way to the ring and the recorder.
        let (raw, share) = match &setup.share {
            Some(opts) => {
                let (share, tx) = crate::instance::share::Share::start(
                    opts.clone(),
                    &setup.instance,
                    &header,
                    clock,
                    raw,
                )?;
                (Some(tx), Some(Box::new(share)))
            }
            None => (raw, None),
        };
        // A mark from a viewer is a bookmark of the ring.
        crate::instance::ring::share_marks(
            share.as_deref(),
            ring.as_ref(),
            setup.settings.wall_start,
        );
        let collection = Collection::start(
            setup.runner.clone(),
            setup.interval,
            raw,
            setup.extents.clone(),
            clock,
        );
        Ok(Feed::Collect {
            collection,
            recorder,
            ring,
            share,
            follow: None,
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

    /// Watching together: the feed followed (`--attach`) or shared (`--share`), if either.
    pub fn watching(&self) -> Option<crate::instance::share::Watching> {
        let Feed::Collect {
            collection,
            share,
            follow,
            ..
        } = self
        else {
            return None;
        };
        if let Some(share) = share {
            return Some(share.watching());
        }
        let follow = follow.as_ref()?;
        let st = follow.state();
        let (bytes, bytes_per_s) = follow.received();
        Some(crate::instance::share::Watching {
            following: Some(format!("{} ({})", st.target, st.collector)),
            behind_s: Some((collection.clock.now().as_secs_f64() - st.latest_t).max(0.0)),
            ended: st.ended,
            sharing: None,
            viewers: st.viewers,
            marks: st.marks,
            you: Some(st.you),
            bytes,
            bytes_per_s,
            screen: st.screen,
            kept: Some(follow.kept()),
        })
    }

    /// Tells the others what this screen shows (watching together), for them to follow.
    pub fn say_view(&self, view: crate::collect::wire::View) {
        match self {
            Feed::Collect {
                follow: Some(f), ..
            } => f.say_view(view),
            Feed::Collect { share: Some(s), .. } => s.set_view(view),
            _ => {}
        }
    }

    /// Collects the sessions of `focus` (a front-end's drill stack), and those the viewers of
    /// a shared feed ask for (bounded); `None` applies the viewers' asks again when they
    /// changed. A viewer's feed asks its collector instead.
    pub fn set_focus(&self, focus: Option<crate::collect::Focus>) {
        let Feed::Collect {
            collection, share, ..
        } = self
        else {
            return;
        };
        match (share, focus) {
            (Some(share), focus) => {
                if focus.is_some() || share.focus_asked().is_some() {
                    collection.set_focus(share.merged_focus(focus));
                }
            }
            (None, Some(focus)) => collection.set_focus(focus),
            (None, None) => {}
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

    /// Marks the moment `at` (session time; `wall` on the wall clock) with `note`: a viewer's
    /// mark goes to the collector (which keeps it in its ring and tells everyone), a shared
    /// screen's to its viewers and its ring, else into the ring kept or replayed. Where it
    /// went, in words, or why it went nowhere.
    pub fn mark(
        &self,
        at: Duration,
        wall: Option<time::OffsetDateTime>,
        note: &str,
    ) -> Result<String, String> {
        let into_ring = |dir: &std::path::Path| {
            let wall = wall.unwrap_or_else(time::OffsetDateTime::now_utc);
            crate::collect::ring::mark(dir, wall, note)
                .map(|()| format!("into the ring {}", dir.display()))
                .map_err(|e| format!("mark not kept: {e}"))
        };
        match self {
            Feed::Collect {
                follow: Some(f), ..
            } => {
                f.mark(at.as_secs_f64(), note);
                Ok("to the collector, for everyone watching".into())
            }
            Feed::Collect {
                share: Some(s),
                ring,
                ..
            } => {
                // The share hands it on to the ring (`ring::share_marks`).
                let viewers = s.mark(at.as_secs_f64(), note);
                let to = crate::format::count(viewers as u64, "viewer", "viewers");
                Ok(match ring {
                    Some(r) => format!("into the ring {} and to {to}", r.dir().display()),
                    None => format!("to {to} (no ring keeps it: --ring DIR)"),
                })
            }
            Feed::Collect { ring: Some(r), .. } => into_ring(r.dir()),
            Feed::Replay {
                ring: Some(dir), ..
            } => into_ring(dir),
            _ => Err("no ring to mark into: start ifxtop with `--ring DIR` to keep one".into()),
        }
    }

    /// Stops collecting; a recording is finished and its summary returned.
    pub async fn finish(self) -> Option<Result<String, Error>> {
        match self {
            Feed::Collect {
                mut collection,
                recorder,
                ring,
                share,
                ..
            } => {
                collection.stop();
                drop(collection);
                // The share hands what it has on to the ring, the ring then to the recording.
                drop(share);
                tokio::task::yield_now().await;
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

/// The recording's header of `setup` (a recording's first line, and the shared feed's).
pub(crate) fn header_of(setup: &Setup) -> RecordingHeader {
    RecordingHeader::new(
        setup.server.as_deref(),
        setup.settings.host.as_deref(),
        setup
            .settings
            .wall_start
            .unwrap_or_else(time::OffsetDateTime::now_utc),
        &setup.settings.ports,
        setup.settings.base_page_kb,
    )
}
