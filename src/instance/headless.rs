//! The one loop of an instance watched without a screen: what its collectors deliver (or a
//! recording, played at its recorded times) is applied to its store, settles, and is built into
//! a snapshot when the one rule (`watch.rs`) says a build is due; the snapshot samples database
//! time and goes to a front-end. `serve`, a live `ash`, a live `snapshot` and the walks
//! (`walk.rs`: the demo on a paused clock, a recording from its start) run on it. The screen's
//! loop (`tui/run.rs`) takes its arrivals the same way ([`poll_arrival`]) and follows the same
//! rule, with keys besides.

use crate::collect::extents::ExtentStatus;
use crate::collect::replay::{Played, Player};
use crate::collect::sample::Update;
use crate::collect::Collection;
use crate::instance::watch::Watched;
use crate::model::snapshot::Snapshot;
use crate::source::Source;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Instant;

/// What came from an instance's collectors.
pub(crate) enum Arrival {
    /// Updates to apply together: the first and every other already waiting.
    Updates(Vec<Update>),
    /// What a recording played at one of its times.
    Played(Played),
    /// The extent job's news.
    Extents(ExtentStatus),
    /// The extent job ended (or there is none): said once.
    ExtentsEnded,
    /// Every collector stopped.
    Closed,
}

/// The next arrival from `collection`, if one is ready. `extents_open` says whether the extent
/// job may still send: its end is said once, then its channel is no longer asked.
pub(crate) fn poll_arrival(
    collection: &mut Collection,
    extents_open: &mut bool,
    cx: &mut Context<'_>,
) -> Poll<Arrival> {
    match collection.updates.poll_recv(cx) {
        Poll::Ready(Some(first)) => {
            return Poll::Ready(Arrival::Updates(collection.arrived(first)))
        }
        Poll::Ready(None) => return Poll::Ready(Arrival::Closed),
        Poll::Pending => {}
    }
    if !*extents_open {
        return Poll::Pending;
    }
    match collection.extents.poll_recv(cx) {
        Poll::Ready(Some(st)) => Poll::Ready(Arrival::Extents(st)),
        Poll::Ready(None) => {
            *extents_open = false;
            Poll::Ready(Arrival::ExtentsEnded)
        }
        Poll::Pending => Poll::Pending,
    }
}

/// Where the loop's data comes from.
pub(crate) enum Input<'a> {
    /// The instance's collectors (live, or the demo on a paused clock), and whether their
    /// extent job may still send.
    Collectors(&'a mut Collection, bool),
    /// A recording, each of its times played when the loop's clock reaches it (on a paused
    /// clock: as fast as it reads).
    Recording(Recorded),
}

/// A recording played at its recorded times.
pub(crate) struct Recorded {
    player: Player,
    /// Its distinct sample times, up to where the walk ends.
    times: Vec<Duration>,
    next: usize,
    /// The loop's instant of the recording's second 0.
    t0: Instant,
    /// Only these sources are parsed (the rest arrive all the same, unread).
    only: Option<fn(Source) -> bool>,
}

impl Recorded {
    /// `rec` from its start to `to`, parsing only the sources `only` keeps, if given.
    pub(crate) fn new(
        rec: Arc<crate::collect::record::Recording>,
        to: Duration,
        only: Option<fn(Source) -> bool>,
    ) -> Self {
        let mut times: Vec<Duration> = rec.times().filter(|t| *t <= to).collect();
        times.sort_unstable();
        times.dedup();
        Recorded {
            player: Player::new(rec),
            times,
            next: 0,
            t0: Instant::now(),
            only,
        }
    }

    /// When the loop's clock reaches recording time `t`.
    pub(crate) fn instant_of(&self, t: Duration) -> Instant {
        self.t0 + t
    }

    async fn next(&mut self) -> Arrival {
        let Some(&t) = self.times.get(self.next) else {
            return std::future::pending().await;
        };
        tokio::time::sleep_until(self.t0 + t).await;
        self.next += 1;
        let played = self.player.seek(t);
        Arrival::Played(match self.only {
            Some(keep) => played.only(keep),
            None => played,
        })
    }
}

impl<'a> Input<'a> {
    /// The collectors of `collection`.
    pub(crate) fn collectors(collection: &'a mut Collection) -> Self {
        Input::Collectors(collection, true)
    }

    /// The session time now.
    fn now(&self) -> Duration {
        match self {
            Input::Collectors(c, _) => c.clock.now(),
            Input::Recording(r) => r.t0.elapsed(),
        }
    }

    fn collection(&self) -> Option<&Collection> {
        match self {
            Input::Collectors(c, _) => Some(c),
            Input::Recording(_) => None,
        }
    }

    async fn next(&mut self) -> Arrival {
        match self {
            Input::Collectors(c, open) => {
                std::future::poll_fn(|cx| poll_arrival(c, open, cx)).await
            }
            Input::Recording(r) => r.next().await,
        }
    }
}

/// Whether the loop goes on after a build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Go,
    Stop,
}

/// What a front-end does with what the loop sees. Every method but `built` does nothing unless
/// the front-end says otherwise.
pub(crate) trait Front {
    /// A batch of updates was applied: each source that answered, and its error if it failed.
    fn applied(
        &mut self,
        _arrived: &[(Source, Option<String>)],
        _watched: &mut Watched,
        _collection: Option<&Collection>,
    ) {
    }

    /// The extent job's news (`None`: it ended).
    fn extents(&mut self, _status: Option<&ExtentStatus>, _watched: &mut Watched) {}

    /// Whether a build that is due needs its snapshot. One that does not still counts as built,
    /// so the builds that follow fall when the screen's did (a walk that only samples database
    /// time skips those with no new `onstat -u` moment).
    fn wants(&mut self, _watched: &Watched) -> bool {
        true
    }

    /// A snapshot was built from the settled store (`sampled`: it was a new moment of database
    /// time, already sampled into `watched.activity`).
    fn built(
        &mut self,
        snap: Snapshot,
        sampled: bool,
        watched: &mut Watched,
        collection: Option<&Collection>,
    ) -> Flow;
}

/// Runs the loop until `until` resolves, the front-end says stop, or the collectors end: every
/// arrival applied to `watched`, a snapshot built (of `server`) whenever the rule says one is
/// due, each sampled and handed to `front`. What arrived by the end is applied before it
/// returns.
pub(crate) async fn run(
    input: &mut Input<'_>,
    watched: &mut Watched,
    interval: Duration,
    server: Option<&str>,
    until: impl Future<Output = ()>,
    front: &mut impl Front,
) {
    watched.nothing_built_yet();
    tokio::pin!(until);
    loop {
        let wake = watched.wake_at(interval);
        tokio::select! {
            // In this order when several are ready at one instant: the end; the build that is
            // due (it takes what arrived before its instant, not at it: what a build asks for
            // arrives after it); then what arrived.
            biased;
            () = &mut until => break,
            () = tokio::time::sleep_until(wake.unwrap_or_else(Instant::now)), if wake.is_some() => {
                if !watched.take_due(interval) || !front.wants(watched) {
                    continue;
                }
                let snap = watched.build(input.now(), server, &[], None);
                let sampled = watched.sample(&snap);
                if front.built(snap, sampled, watched, input.collection()) == Flow::Stop {
                    break;
                }
            }
            arrival = input.next() => match arrival {
                Arrival::Updates(batch) => {
                    let arrived: Vec<(Source, Option<String>)> = batch
                        .iter()
                        .map(|u| (u.source, u.result.as_ref().err().map(|e| e.to_string())))
                        .collect();
                    watched.apply(batch);
                    front.applied(&arrived, watched, input.collection());
                }
                Arrival::Played(played) => watched.play(played),
                Arrival::Extents(status) => front.extents(Some(&status), watched),
                Arrival::ExtentsEnded => front.extents(None, watched),
                Arrival::Closed => break,
            },
        }
    }
    if let Input::Collectors(c, _) = input {
        let mut late = Vec::new();
        while let Ok(u) = c.updates.try_recv() {
            late.push(u);
        }
        watched.apply(late);
    }
}
