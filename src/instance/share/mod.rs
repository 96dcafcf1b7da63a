//! Watch together: one collector's outputs, as a recording holds them, fed live to the DBAs who
//! attach (`ifxtop serve --share`, `ifxtop --share`). The feed taps what the collectors
//! record: nothing is run for a viewer that is not run anyway. Each batch of outputs is
//! compressed once (a zstd frame) for every viewer, and kept a few minutes, so one who joins
//! gets enough to build a whole snapshot, then the live frames. Bounded: viewers, each one's
//! queue in bytes (one that stops reading is dropped; the collector never waits for a viewer),
//! the history in bytes; what a viewer may send is a few small messages (`collect::wire`).

pub(crate) mod attach;
mod history;
pub mod socket;

use crate::collect::record::RecordingHeader;
use crate::collect::sample::RawSample;
use crate::collect::wire::{self, Control, Mark, Presence, ViewerMsg};
use crate::collect::SessionClock;
use crate::error::Error;
use history::{Frame, History};
use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// zstd's level for the feed (as recordings).
pub(crate) const LEVEL: i32 = 3;
/// Outputs arriving within this of the first go in one frame.
const BATCH_WAIT: Duration = Duration::from_millis(20);
/// A frame is closed at this many bytes of text however soon.
const BATCH_MAX: usize = 1 << 20;
/// The presence list goes to everyone this often (how far behind each is moves).
const PRESENCE_EVERY: Duration = Duration::from_secs(2);
/// Refused lines before a viewer is dropped.
const MAX_REFUSED: u32 = 20;
/// The samples the collectors may queue for the feed (as the recorder's queue).
const QUEUE: usize = 4096;

/// What `--share` and its options ask for.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareOptions {
    /// The socket; the default (`socket::default_path`) when `None`.
    pub path: Option<PathBuf>,
    pub access: socket::Access,
    pub max_viewers: usize,
    /// The feed bytes a viewer may leave unread before it is dropped.
    pub queue_bytes: u64,
    /// How much recent history a viewer who joins gets.
    pub history: Duration,
    /// The history's bound in compressed bytes.
    pub history_bytes: u64,
    /// Sessions one viewer may ask to be read each tick, and all viewers together.
    pub focus_per_viewer: usize,
    pub focus_total: usize,
}

impl ShareOptions {
    pub const DEFAULT_MAX_VIEWERS: usize = 16;
    pub const DEFAULT_QUEUE_MB: u64 = 16;

    pub fn new(path: Option<PathBuf>, access: socket::Access) -> Self {
        ShareOptions {
            path,
            access,
            max_viewers: Self::DEFAULT_MAX_VIEWERS,
            queue_bytes: Self::DEFAULT_QUEUE_MB << 20,
            history: Duration::from_secs(180),
            history_bytes: 64 << 20,
            focus_per_viewer: 2,
            focus_total: 8,
        }
    }
}

/// The options of `--share`, checked (`None` when not sharing).
pub fn options(args: &crate::cli::ShareArgs, replay: bool) -> Result<Option<ShareOptions>, Error> {
    let Some(path) = &args.share else {
        return Ok(None);
    };
    if replay {
        return Err(Error::Usage(
            "--share: shares what is collected live or from the demo, not a replay \
             (give the colleague the recording)"
                .into(),
        ));
    }
    let access =
        socket::Access::new(args.share_mode, args.share_group.as_deref()).map_err(Error::Usage)?;
    let path = path.clone().filter(|p| !p.as_os_str().is_empty());
    let mut o = ShareOptions::new(path, access);
    if let Some(n) = args.share_viewers {
        o.max_viewers = usize::from(n);
    }
    Ok(Some(o))
}

/// Watching together, as a screen shows it: whom a viewer follows, or where this one shares,
/// and who watches.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Watching {
    /// Following another's feed: the target and the collector (`db01 (informix@db01)`).
    pub following: Option<String>,
    /// How far the latest sample received is behind the collector's clock, in seconds.
    pub behind_s: Option<f64>,
    /// Why the followed feed ended, once it did.
    pub ended: Option<String>,
    /// Sharing: the socket.
    pub sharing: Option<String>,
    /// Everyone attached to the feed.
    pub viewers: Vec<Presence>,
    /// Marks seen, oldest first.
    pub marks: Vec<Mark>,
    /// Following: this viewer's number in the presence list.
    pub you: Option<u64>,
    /// The feed's compressed bytes: sent to viewers (sharing), received (following).
    pub bytes: u64,
    /// The same a second, over the last seconds.
    pub bytes_per_s: Option<f64>,
    /// Following: what the collector's own screen shows, when it shares one.
    pub screen: Option<crate::collect::wire::View>,
    /// Following: what is kept of what was received, for seeking back.
    pub kept: Option<crate::collect::received::Kept>,
}

/// What a viewer's end of the feed is: where its frames are written, what it sends (if it
/// may), and how to cut it off (a writer blocked on a viewer that stopped reading is woken).
pub struct Transport {
    pub writer: Box<dyn Write + Send>,
    pub reader: Option<Box<dyn BufRead + Send>>,
    pub close: Box<dyn Fn() + Send + Sync>,
}

/// Who attaches, as the collector knows them.
#[derive(Debug, Clone)]
pub struct Who {
    pub user: String,
    pub via: &'static str,
}

/// A viewer's queue of frames not yet written to it.
#[derive(Default)]
struct Queue {
    frames: VecDeque<Arc<[u8]>>,
    bytes: u64,
    closed: bool,
    /// The feed ended: what is queued is written, then the viewer is let go.
    ended: bool,
}

struct Viewer {
    id: u64,
    who: Who,
    since: String,
    host: Mutex<Option<String>>,
    /// The latest sample time it said it has shown.
    at: Mutex<Option<f64>>,
    focus: Mutex<Vec<u64>>,
    /// What its screen shows, as it last said.
    view: Mutex<Option<wire::View>>,
    queue: Mutex<Queue>,
    ready: Condvar,
    close: Box<dyn Fn() + Send + Sync>,
    refused: std::sync::atomic::AtomicU32,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Viewer {
    /// Queues `frame`; false (and the viewer cut off) when that would leave more than `limit`
    /// bytes unread. A frame bigger than `limit` (one `oncheck -pe` of a big instance) is
    /// taken when nothing else waits.
    /// Queues `frame`: false when this frame cut the viewer off (it fell `limit` bytes
    /// behind). A viewer already cut off or gone is passed over, and not counted again.
    fn push(&self, frame: Arc<[u8]>, limit: u64) -> bool {
        let mut q = lock(&self.queue);
        if q.closed {
            return true;
        }
        if q.bytes > 0 && q.bytes + frame.len() as u64 > limit {
            q.closed = true;
            drop(q);
            self.ready.notify_all();
            (self.close)();
            return false;
        }
        q.bytes += frame.len() as u64;
        q.frames.push_back(frame);
        drop(q);
        self.ready.notify_all();
        true
    }

    /// The next frame to write (`None`: it is cut off).
    fn pop(&self) -> Option<Arc<[u8]>> {
        let mut q = lock(&self.queue);
        loop {
            if q.closed {
                return None;
            }
            if let Some(f) = q.frames.pop_front() {
                q.bytes -= f.len() as u64;
                return Some(f);
            }
            if q.ended {
                return None;
            }
            q = self.ready.wait(q).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn cut(&self) {
        lock(&self.queue).closed = true;
        self.ready.notify_all();
        (self.close)();
    }

    fn presence(&self, now: Option<f64>) -> Presence {
        Presence {
            id: self.id,
            user: self.who.user.clone(),
            host: lock(&self.host).clone(),
            via: self.who.via.to_string(),
            since: self.since.clone(),
            behind_s: match (now, *lock(&self.at)) {
                (Some(now), Some(at)) => Some((now - at).max(0.0)),
                _ => None,
            },
            queued_bytes: lock(&self.queue).bytes,
            view: lock(&self.view).clone(),
        }
    }
}

/// The history and the viewers, under one lock: a viewer who joins gets the history up to a
/// frame and every frame after it, none twice.
struct Inner {
    history: History,
    viewers: Vec<Arc<Viewer>>,
}

/// What the hub, the listener and every viewer's threads share.
struct Hub {
    inner: Mutex<Inner>,
    opts: ShareOptions,
    header: Vec<u8>,
    collector: String,
    clock: SessionClock,
    next_id: AtomicU64,
    /// The presence list changed since it was last sent.
    changed: AtomicBool,
    /// Compressed bytes written to viewers, and viewers dropped for not reading.
    sent: AtomicU64,
    dropped: AtomicU64,
    /// Marks, for the front-end to put in the history (the flight recorder's bookmarks).
    marks: Mutex<Option<SyncSender<Mark>>>,
    /// The sessions viewers ask to be read, bounded, for the front-end to add to its focus.
    focus: Mutex<Vec<u64>>,
    focus_changed: AtomicBool,
    /// What the collector's own screen shows (`ifxtop --share`), for viewers to follow.
    screen: Mutex<Option<wire::View>>,
}

fn frame_of(text: &[u8]) -> Arc<[u8]> {
    zstd::bulk::compress(text, LEVEL).unwrap_or_default().into()
}

impl Hub {
    /// Queues `frame` for every viewer; those who fell too far behind are cut off and leave
    /// the list at once (not when their writer's blocked write gives up): counted dropped and
    /// listed are never both.
    fn broadcast(&self, inner: &mut Inner, frame: &Arc<[u8]>) {
        let before = inner.viewers.len();
        inner
            .viewers
            .retain(|v| v.push(frame.clone(), self.opts.queue_bytes));
        let cut = before - inner.viewers.len();
        if cut > 0 {
            self.dropped.fetch_add(cut as u64, Ordering::Relaxed);
            self.changed.store(true, Ordering::Relaxed);
        }
    }

    fn publish(&self, frame: Frame) {
        let bytes = frame.bytes.clone();
        let mut inner = lock(&self.inner);
        inner.history.push(frame);
        self.broadcast(&mut inner, &bytes);
    }

    fn control(&self, c: Control) {
        let f = frame_of(&wire::control(c));
        let mut inner = lock(&self.inner);
        self.broadcast(&mut inner, &f);
    }

    fn presence(&self) -> Vec<Presence> {
        let inner = lock(&self.inner);
        let now = inner.history.now();
        inner.viewers.iter().map(|v| v.presence(now)).collect()
    }

    fn remove(&self, id: u64) {
        lock(&self.inner).viewers.retain(|v| v.id != id);
        self.changed.store(true, Ordering::Relaxed);
        self.refocus();
    }

    /// The sessions all viewers ask for, bounded (`focus_total`), for the front-end.
    fn refocus(&self) {
        let mut all: Vec<u64> = Vec::new();
        for v in &lock(&self.inner).viewers {
            for s in lock(&v.focus).iter() {
                if !all.contains(s) && all.len() < self.opts.focus_total {
                    all.push(*s);
                }
            }
        }
        let mut f = lock(&self.focus);
        if *f != all {
            *f = all;
            self.focus_changed.store(true, Ordering::Relaxed);
        }
    }

    /// Attaches a viewer: its own writer thread (the history, then the live frames) and reader
    /// thread (its messages). Refused beyond `max_viewers`.
    fn attach(self: &Arc<Self>, who: Who, mut t: Transport) -> Result<(), String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let since = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let viewer = Arc::new(Viewer {
            id,
            who,
            since,
            host: Mutex::new(None),
            at: Mutex::new(None),
            focus: Mutex::new(Vec::new()),
            view: Mutex::new(None),
            queue: Mutex::new(Queue::default()),
            ready: Condvar::new(),
            close: t.close,
            refused: Default::default(),
        });
        let mut first = self.header.clone();
        let replay = {
            let mut inner = lock(&self.inner);
            if inner.viewers.len() >= self.opts.max_viewers {
                let why = format!(
                    "{} viewers are attached, the most this collector takes (--share-viewers)",
                    inner.viewers.len()
                );
                first.extend(wire::control(Control::Refused(why.clone())));
                let _ = t.writer.write_all(&frame_of(&first));
                let _ = t.writer.flush();
                (viewer.close)();
                return Err(why);
            }
            inner.viewers.push(viewer.clone());
            first.extend(wire::control(Control::Hello {
                version: wire::VERSION,
                now: self.clock.now().as_secs_f64(),
                collector: self.collector.clone(),
                you: id,
                max_focus: self.opts.focus_per_viewer,
            }));
            inner.history.replay()
        };
        self.changed.store(true, Ordering::Relaxed);
        let hub = self.clone();
        let v = viewer.clone();
        let mut writer = t.writer;
        std::thread::Builder::new()
            .name(format!("share-out-{id}"))
            .spawn(move || {
                let sent = std::iter::once(frame_of(&first))
                    .chain(replay)
                    .try_for_each(|f| {
                        writer.write_all(&f)?;
                        hub.sent.fetch_add(f.len() as u64, Ordering::Relaxed);
                        Ok::<(), std::io::Error>(())
                    })
                    .and_then(|()| writer.flush());
                if sent.is_ok() {
                    while let Some(f) = v.pop() {
                        if writer.write_all(&f).and_then(|()| writer.flush()).is_err() {
                            break;
                        }
                        hub.sent.fetch_add(f.len() as u64, Ordering::Relaxed);
                    }
                }
                v.cut();
                hub.remove(v.id);
            })
            .map_err(|e| e.to_string())?;
        if let Some(reader) = t.reader.take() {
            let hub = self.clone();
            let v = viewer;
            std::thread::Builder::new()
                .name(format!("share-in-{id}"))
                .spawn(move || hub.read_viewer(&v, reader))
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Reads what a viewer sends until it stops: each line one message, anything else refused
    /// (said back to it), and too many refusals cut it off.
    fn read_viewer(&self, v: &Viewer, mut reader: Box<dyn BufRead + Send>) {
        let mut buf = Vec::with_capacity(256);
        loop {
            buf.clear();
            let n = match std::io::Read::take(&mut reader, wire::MAX_VIEWER_LINE as u64 + 1)
                .read_until(b'\n', &mut buf)
            {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if buf.last() != Some(&b'\n') && n > wire::MAX_VIEWER_LINE {
                self.refuse(
                    v,
                    format!("a line longer than {} bytes", wire::MAX_VIEWER_LINE),
                );
                v.cut();
                return;
            }
            let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match wire::viewer_msg(line) {
                Ok(msg) => self.take(v, msg),
                Err(why) => {
                    self.refuse(v, why);
                    if v.refused.fetch_add(1, Ordering::Relaxed) + 1 >= MAX_REFUSED {
                        v.cut();
                        return;
                    }
                }
            }
        }
    }

    fn refuse(&self, v: &Viewer, why: String) {
        let _ = v.push(
            frame_of(&wire::control(Control::Refused(why))),
            self.opts.queue_bytes,
        );
    }

    fn take(&self, v: &Viewer, msg: ViewerMsg) {
        match msg {
            ViewerMsg::Hello { host } => {
                *lock(&v.host) = host.map(|h| {
                    crate::format::SafeText::new(&h)
                        .as_str()
                        .chars()
                        .take(64)
                        .collect()
                });
                self.changed.store(true, Ordering::Relaxed);
            }
            ViewerMsg::At { t } => *lock(&v.at) = Some(t),
            ViewerMsg::Focus { sids } => {
                let mut kept: Vec<u64> = Vec::new();
                for s in sids {
                    if !kept.contains(&s) && kept.len() < self.opts.focus_per_viewer {
                        kept.push(s);
                    }
                }
                *lock(&v.focus) = kept.clone();
                self.refocus();
                let granted: Vec<u64> = kept
                    .into_iter()
                    .filter(|s| lock(&self.focus).contains(s))
                    .collect();
                let _ = v.push(
                    frame_of(&wire::control(Control::Focus(granted))),
                    self.opts.queue_bytes,
                );
            }
            ViewerMsg::View(view) => {
                let mut kept = lock(&v.view);
                if kept.as_ref() != Some(&view) {
                    *kept = Some(view);
                    self.changed.store(true, Ordering::Relaxed);
                }
            }
            ViewerMsg::Mark { at, text } => self.mark(Mark {
                at,
                text: crate::format::SafeText::new(&text).as_str().to_string(),
                by: v.who.user.clone(),
            }),
        }
    }
}

impl Hub {
    /// A mark to everyone, and to the front-end's history (the ring's bookmarks).
    fn mark(&self, mark: Mark) {
        if let Some(tx) = lock(&self.marks).as_ref() {
            let _ = tx.try_send(mark.clone());
        }
        self.control(Control::Mark(mark));
    }
}

/// A shared feed, running: dropping it stops listening, cuts every viewer off and removes the
/// socket.
pub struct Share {
    hub: Arc<Hub>,
    /// The front-end's own focus, which the viewers' asks are added to.
    own_focus: Mutex<crate::collect::Focus>,
    /// Bytes sent a second, for the cost line.
    rate: Mutex<wire::Rate>,
    bound: Option<socket::Bound>,
    stop: Arc<AtomicBool>,
    accept: Option<std::thread::JoinHandle<()>>,
}

impl Share {
    /// Starts sharing the outputs sent to the returned sender (the collectors' raw sink): each
    /// also goes on to `tee` (the recorder) when there is one. Listens on the socket of
    /// `opts` (of `instance` by default); `header` is the recording's header, `clock` the
    /// collectors'.
    pub fn start(
        opts: ShareOptions,
        instance: &str,
        header: &RecordingHeader,
        clock: SessionClock,
        tee: Option<SyncSender<RawSample>>,
    ) -> Result<(Share, SyncSender<RawSample>), Error> {
        let bound = socket::bind(opts.path.as_deref(), instance, &opts.access)?;
        let (tx, rx) = std::sync::mpsc::sync_channel::<RawSample>(QUEUE);
        let hub = Arc::new(Hub {
            inner: Mutex::new(Inner {
                history: History::new(opts.history.as_secs_f64(), opts.history_bytes),
                viewers: Vec::new(),
            }),
            header: wire::line(header),
            collector: format!(
                "{}@{}",
                socket::own_user(),
                header.host.as_deref().unwrap_or("localhost")
            ),
            opts,
            clock,
            next_id: AtomicU64::new(1),
            changed: AtomicBool::new(false),
            sent: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            marks: Mutex::new(None),
            focus: Mutex::new(Vec::new()),
            focus_changed: AtomicBool::new(false),
            screen: Mutex::new(None),
        });
        {
            let hub = hub.clone();
            std::thread::Builder::new()
                .name("share-hub".into())
                .spawn(move || hub_loop(&hub, &rx, tee.as_ref()))?;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let listener = bound.listener.try_clone()?;
        let accept = {
            let hub = hub.clone();
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("share-accept".into())
                .spawn(move || {
                    for conn in listener.incoming() {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        let Ok(stream) = conn else { continue };
                        let _ = attach_unix(&hub, stream);
                    }
                })?
        };
        Ok((
            Share {
                hub,
                own_focus: Mutex::default(),
                rate: Mutex::default(),
                bound: Some(bound),
                stop,
                accept: Some(accept),
            },
            tx,
        ))
    }

    /// Where it listens.
    pub fn path(&self) -> Option<&std::path::Path> {
        self.bound.as_ref().map(|b| b.path.as_path())
    }

    /// Who is attached now.
    pub fn viewers(&self) -> Vec<Presence> {
        self.hub.presence()
    }

    /// Compressed bytes written to viewers so far, and viewers dropped for not reading.
    pub fn sent(&self) -> (u64, u64) {
        (
            self.hub.sent.load(Ordering::Relaxed),
            self.hub.dropped.load(Ordering::Relaxed),
        )
    }

    /// The history's compressed bytes.
    pub fn history_bytes(&self) -> u64 {
        lock(&self.hub.inner).history.bytes()
    }

    /// Sharing, as a screen shows it.
    pub fn watching(&self) -> Watching {
        let bytes = self.sent().0;
        Watching {
            sharing: self.path().map(|p| p.display().to_string()),
            viewers: self.viewers(),
            bytes,
            bytes_per_s: lock(&self.rate).per_s(bytes, Instant::now()),
            ..Watching::default()
        }
    }

    /// Attaches a viewer over another transport (serve's `/feed`).
    pub fn attach(&self, who: Who, t: Transport) -> Result<(), String> {
        self.hub.attach(who, t)
    }

    /// A way in for viewers over another transport (serve's `/feed`) that does not keep the
    /// feed up: once the share is dropped, it refuses.
    pub fn door(&self) -> Door {
        Door {
            hub: Arc::downgrade(&self.hub),
            stop: self.stop.clone(),
        }
    }

    /// The collector's own mark (its screen's `b`): to every viewer and to the marks' `tx`, as
    /// a viewer's is; how many viewers it went to.
    pub fn mark(&self, at: f64, text: &str) -> usize {
        self.hub.mark(Mark {
            at,
            text: crate::format::SafeText::new(
                &text.chars().take(wire::MAX_MARK_TEXT).collect::<String>(),
            )
            .as_str()
            .to_string(),
            by: socket::own_user(),
        });
        self.hub.presence().len()
    }

    /// What the collector's own screen shows now: sent to the viewers when it changed, for
    /// them to follow.
    pub fn set_view(&self, view: wire::View) {
        let mut kept = lock(&self.hub.screen);
        if kept.as_ref() != Some(&view) {
            *kept = Some(view.clone());
            drop(kept);
            self.hub.control(Control::Screen(view));
        }
    }

    /// Marks from viewers go to `tx` too (the flight recorder's bookmarks).
    pub fn marks_to(&self, tx: SyncSender<Mark>) {
        *lock(&self.hub.marks) = Some(tx);
    }

    /// The sessions viewers ask to be read with every tick, when that changed since last
    /// asked: bounded by the options (per viewer, in all).
    pub fn focus_asked(&self) -> Option<Vec<u64>> {
        self.hub
            .focus_changed
            .swap(false, Ordering::Relaxed)
            .then(|| self.focus_now())
    }

    /// The sessions viewers ask to be read now.
    pub fn focus_now(&self) -> Vec<u64> {
        lock(&self.hub.focus).clone()
    }

    /// `own` (what this front-end drills into) with the viewers' sessions added to what is
    /// drilled; `own` is kept, to add the viewers' to again when they change.
    pub fn merged_focus(&self, own: Option<crate::collect::Focus>) -> crate::collect::Focus {
        let mut kept = lock(&self.own_focus);
        if let Some(own) = own {
            *kept = own;
        }
        let mut f = kept.clone();
        for s in self.focus_now() {
            let sid = crate::ids::Sid(s);
            if !f.drilled.contains(&sid) {
                f.drilled.push(sid);
            }
        }
        f
    }
}

/// A way in to a shared feed for another transport (serve's `/feed`), held apart from the
/// [`Share`] itself: it refuses once the share stopped.
#[derive(Clone)]
pub struct Door {
    hub: std::sync::Weak<Hub>,
    stop: Arc<AtomicBool>,
}

impl Door {
    /// Attaches a viewer: the history, then the live frames, written to `t.writer` on a thread
    /// of the share's (a write may block); what it sends read from `t.reader`.
    pub fn attach(&self, who: Who, t: Transport) -> Result<(), String> {
        match self.hub.upgrade() {
            Some(hub) if !self.stop.load(Ordering::Relaxed) => hub.attach(who, t),
            _ => {
                (t.close)();
                Err("the feed has stopped".to_string())
            }
        }
    }

    /// Viewers attached now, compressed bytes written to viewers so far and viewers dropped
    /// for not reading (zeros once the share stopped).
    pub fn counts(&self) -> (usize, u64, u64) {
        match self.hub.upgrade() {
            Some(hub) => (
                lock(&hub.inner).viewers.len(),
                hub.sent.load(Ordering::Relaxed),
                hub.dropped.load(Ordering::Relaxed),
            ),
            None => (0, 0, 0),
        }
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(b) = &self.bound {
            // Wakes the listener so it sees the stop.
            let _ = std::os::unix::net::UnixStream::connect(&b.path);
        }
        if let Some(a) = self.accept.take() {
            let _ = a.join();
        }
        let viewers: Vec<Arc<Viewer>> = lock(&self.hub.inner).viewers.clone();
        for v in viewers {
            v.cut();
        }
        self.bound = None;
    }
}

/// Attaches a viewer on the socket: its user as the kernel says.
fn attach_unix(hub: &Arc<Hub>, stream: std::os::unix::net::UnixStream) -> std::io::Result<()> {
    let user = socket::peer_user(&stream);
    let reader = std::io::BufReader::new(stream.try_clone()?);
    let closer = stream.try_clone()?;
    let t = Transport {
        writer: Box::new(stream),
        reader: Some(Box::new(reader)),
        close: Box::new(move || {
            let _ = closer.shutdown(std::net::Shutdown::Both);
        }),
    };
    hub.attach(
        Who {
            user,
            via: "socket",
        },
        t,
    )
    .map_err(std::io::Error::other)
}

/// The hub: each batch of outputs (those arriving within `BATCH_WAIT` of the first) becomes a
/// frame, kept and queued for every viewer; the presence list goes out when it changed and
/// every `PRESENCE_EVERY`. Each output goes on to `tee` (the recorder) as it came. Ends when the
/// collectors are gone.
fn hub_loop(hub: &Hub, rx: &Receiver<RawSample>, tee: Option<&SyncSender<RawSample>>) {
    let mut last_presence = Instant::now();
    loop {
        let first = match rx.recv_timeout(Duration::from_millis(250)) {
            Ok(s) => Some(s),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        if let Some(first) = first {
            let until = Instant::now() + BATCH_WAIT;
            let mut text = Vec::new();
            let mut samples = Vec::new();
            let mut last_t = 0.0f64;
            let mut next = Some(first);
            while let Some(s) = next.take() {
                text.extend(wire::line(&s));
                samples.push((s.source.clone(), s.t));
                last_t = last_t.max(s.t);
                if let Some(tee) = tee {
                    let _ = tee.try_send(s);
                }
                if text.len() >= BATCH_MAX {
                    break;
                }
                next = rx
                    .recv_timeout(until.saturating_duration_since(Instant::now()))
                    .ok();
            }
            hub.publish(Frame {
                bytes: frame_of(&text),
                samples,
                text_len: text.len(),
                last_t,
            });
        }
        if hub.changed.swap(false, Ordering::Relaxed) || last_presence.elapsed() >= PRESENCE_EVERY {
            last_presence = Instant::now();
            hub.control(Control::Viewers(hub.presence()));
            // The collector's screen too, for a viewer who joined since it last changed.
            let screen = lock(&hub.screen).clone();
            if let Some(v) = screen {
                hub.control(Control::Screen(v));
            }
        }
    }
    // The collectors stopped: every viewer is let go once what it was sent is written.
    let viewers: Vec<Arc<Viewer>> = lock(&hub.inner).viewers.clone();
    for v in viewers {
        lock(&v.queue).ended = true;
        v.ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::net::UnixStream;

    fn sample(t: f64, stdout: String) -> RawSample {
        RawSample::onstat_u(t, stdout)
    }

    fn start(dir: &std::path::Path, queue_bytes: u64) -> (Share, SyncSender<RawSample>) {
        let mut o = ShareOptions::new(
            Some(dir.join("feed.sock")),
            socket::Access::new(None, None).unwrap(),
        );
        o.queue_bytes = queue_bytes;
        o.max_viewers = 3;
        let header = RecordingHeader::new(
            Some("ol_test"),
            Some("db01"),
            time::OffsetDateTime::now_utc(),
            &[],
            2,
        );
        Share::start(o, "ol_test", &header, SessionClock::start(), None).unwrap()
    }

    /// Reads the feed on `s` for a while: its lines (as text).
    fn lines_of(s: UnixStream, for_: Duration) -> Vec<String> {
        let end = Instant::now() + for_;
        read_lines(s, || Instant::now() >= end)
    }

    /// The lines read until `done` says so and nothing more is waiting (or the feed ends).
    fn read_lines(s: UnixStream, mut done: impl FnMut() -> bool) -> Vec<String> {
        s.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let mut raw = Vec::new();
        let mut s = s;
        let mut buf = [0u8; 65536];
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => raw.extend_from_slice(&buf[..n]),
                // Nothing for 100 ms: the end, once asked for.
                Err(_) if done() => break,
                Err(_) => {}
            }
        }
        let mut out = Vec::new();
        let mut d = zstd::stream::read::Decoder::new(&raw[..]).unwrap();
        let _ = d.read_to_end(&mut out);
        String::from_utf8_lossy(&out)
            .lines()
            .map(String::from)
            .collect()
    }

    fn wait_for(mut f: impl FnMut() -> bool) {
        let end = Instant::now() + Duration::from_secs(20);
        while !f() {
            assert!(Instant::now() < end, "never happened");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A viewer that stops reading is dropped once its queue passes its bound; the collector's
    /// sends never wait for it, and the viewer who reads gets every frame.
    #[test]
    fn a_viewer_that_stops_reading_is_dropped_and_nobody_waits_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let (share, tx) = start(dir.path(), 1 << 20);
        let path = share.path().unwrap().to_path_buf();
        let stalled = UnixStream::connect(&path).unwrap();
        let reader = UnixStream::connect(&path).unwrap();
        wait_for(|| share.viewers().len() == 2);
        // It reads until told the test has sent everything and its queue is empty: however
        // slow the machine, it never stops reading before the end.
        let finished = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let done = std::sync::Arc::clone(&finished);
        let got = std::thread::spawn(move || {
            read_lines(reader, || done.load(std::sync::atomic::Ordering::SeqCst))
        });
        // Outputs that compress badly (each different), megabytes in all: far past the stalled
        // viewer's socket buffers and queue.
        let mut seed = 1u64;
        let noise: String = (0..4_000_000)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                char::from(b'a' + (seed >> 60) as u8)
            })
            .collect();
        for i in 0..400 {
            // Paced by the reading viewer (however loaded the machine): only the stalled one
            // falls behind.
            wait_for(|| {
                share
                    .viewers()
                    .iter()
                    .all(|v| v.id != 2 || v.queued_bytes < 256 << 10)
            });
            let text = noise[i * 9000..i * 9000 + 20_000].to_string();
            // The collectors' own call: it never waits, and the hub keeps up.
            tx.try_send(sample(i as f64, text))
                .expect("the feed's queue never fills");
        }
        let end = Instant::now() + Duration::from_secs(20);
        while share.sent().1 != 1 {
            assert!(
                Instant::now() < end,
                "not dropped: {:?} sent {:?} history {}",
                share
                    .viewers()
                    .iter()
                    .map(|v| (v.id, v.queued_bytes))
                    .collect::<Vec<_>>(),
                share.sent(),
                share.history_bytes()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            share.viewers().iter().map(|v| v.id).collect::<Vec<_>>(),
            [2]
        );
        wait_for(|| share.viewers().iter().all(|v| v.queued_bytes == 0));
        finished.store(true, std::sync::atomic::Ordering::SeqCst);
        let lines = got.join().unwrap();
        let samples = lines.iter().filter(|l| l.starts_with("{\"t\":")).count();
        assert_eq!(samples, 400, "the reading viewer got every output");
        drop(stalled);
    }

    /// Junk and commands from a viewer are refused and said back; a focus ask is bounded per
    /// viewer; a mark reaches every viewer, marked by who sent it as the socket says; the
    /// presence list names both.
    #[test]
    fn viewers_see_each_other_marks_travel_and_junk_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (share, tx) = start(dir.path(), 16 << 20);
        let path = share.path().unwrap().to_path_buf();
        let mut a = UnixStream::connect(&path).unwrap();
        let b = UnixStream::connect(&path).unwrap();
        wait_for(|| share.viewers().len() == 2);
        tx.try_send(sample(1.0, "x".into())).unwrap();
        a.write_all(b"{\"hello\":{\"host\":\"10.0.0.5\"}}\n")
            .unwrap();
        a.write_all(b"{\"run\":\"onmode -z 812\"}\nonstat -g ses 812\n")
            .unwrap();
        a.write_all(b"{\"focus\":{\"sids\":[812,813,814,815]}}\n")
            .unwrap();
        a.write_all(b"{\"mark\":{\"at\":1.0,\"text\":\"look at sid 812\"}}\n")
            .unwrap();
        wait_for(|| share.focus_now() == vec![812, 813]);
        assert_eq!(share.focus_asked(), Some(vec![812, 813]));
        let b_lines = std::thread::spawn(move || lines_of(b, Duration::from_secs(3)));
        let a_lines = lines_of(a, Duration::from_secs(3));
        let b_lines = b_lines.join().unwrap();
        let user = socket::own_user();
        let mark = format!(
            r#"{{"share":{{"mark":{{"at":1.0,"text":"look at sid 812","by":"{user}"}}}}}}"#
        );
        assert!(b_lines.contains(&mark), "{b_lines:?}");
        assert!(a_lines.contains(&mark));
        let refused: Vec<&String> = a_lines.iter().filter(|l| l.contains("refused")).collect();
        assert_eq!(refused.len(), 2, "{refused:?}");
        assert!(a_lines.contains(&r#"{"share":{"focus":[812,813]}}"#.to_string()));
        assert!(!b_lines.iter().any(|l| l.contains("refused")));
        let presence = b_lines
            .iter()
            .rev()
            .find(|l| l.contains("\"viewers\""))
            .unwrap();
        assert!(presence.contains("\"host\":\"10.0.0.5\""), "{presence}");
        assert_eq!(presence.matches("\"via\":\"socket\"").count(), 2);
        // Both saw the header and the sample.
        assert!(b_lines[0].starts_with("{\"ifxtop_recording\":1"));
        assert!(b_lines.iter().any(|l| l.starts_with("{\"t\":1.0")));
    }

    /// A viewer's view (pane, session, moment) reaches the others in the presence list, and
    /// the collector's screen's as a line of its own: what follow-me reads; nothing runs.
    #[test]
    fn views_travel_to_the_other_viewers_for_them_to_follow() {
        let dir = tempfile::tempdir().unwrap();
        let (share, tx) = start(dir.path(), 16 << 20);
        let path = share.path().unwrap().to_path_buf();
        let mut a = UnixStream::connect(&path).unwrap();
        let b = UnixStream::connect(&path).unwrap();
        wait_for(|| share.viewers().len() == 2);
        a.write_all(b"{\"view\":{\"pane\":2,\"sid\":812,\"open\":true,\"at\":290.5}}\n")
            .unwrap();
        wait_for(|| share.viewers().iter().any(|v| v.view.is_some()));
        share.set_view(wire::View {
            pane: 6,
            ..wire::View::default()
        });
        // A sample: the hub's loop sends the presence list with it.
        tx.try_send(sample(1.0, "x".into())).unwrap();
        let b_lines = lines_of(b, Duration::from_secs(3));
        let presence = b_lines
            .iter()
            .rev()
            .find(|l| l.contains("\"viewers\""))
            .expect("a presence list");
        assert!(
            presence.contains(r#""view":{"pane":2,"sid":812,"open":true,"at":290.5}"#),
            "{presence}"
        );
        assert!(
            b_lines.contains(&r#"{"share":{"screen":{"pane":6}}}"#.to_string()),
            "{b_lines:?}"
        );
        assert_eq!(
            share.focus_now(),
            Vec::<u64>::new(),
            "a view asks for nothing"
        );
    }

    /// The collector's own mark (its screen's `b`) reaches every viewer, by the collector's
    /// user, and the marks' sender (the ring's bookmarks), as a viewer's does.
    #[test]
    fn the_collectors_mark_reaches_the_viewers_and_the_ring() {
        let dir = tempfile::tempdir().unwrap();
        let (share, _tx) = start(dir.path(), 16 << 20);
        let (marks_tx, marks_rx) = std::sync::mpsc::sync_channel(4);
        share.marks_to(marks_tx);
        let path = share.path().unwrap().to_path_buf();
        let a = UnixStream::connect(&path).unwrap();
        wait_for(|| share.viewers().len() == 1);
        assert_eq!(share.mark(290.0, "sid 812 \u{1b}[2Jholds it"), 1);
        let lines = lines_of(a, Duration::from_secs(2));
        let user = socket::own_user();
        let mark = format!(
            r#"{{"share":{{"mark":{{"at":290.0,"text":"sid 812 ?[2Jholds it","by":"{user}"}}}}}}"#
        );
        assert!(lines.contains(&mark), "{lines:?}");
        let kept = marks_rx.try_recv().expect("the ring's copy");
        assert_eq!((kept.at, kept.by.as_str()), (290.0, user.as_str()));
    }

    /// Past the most viewers, one more is told why and let go.
    #[test]
    fn past_the_most_viewers_one_more_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (share, _tx) = start(dir.path(), 16 << 20);
        let path = share.path().unwrap().to_path_buf();
        let _kept: Vec<UnixStream> = (0..3)
            .map(|_| UnixStream::connect(&path).unwrap())
            .collect();
        wait_for(|| share.viewers().len() == 3);
        let lines = lines_of(UnixStream::connect(&path).unwrap(), Duration::from_secs(1));
        assert!(lines[1].contains("3 viewers are attached"), "{lines:?}");
        assert_eq!(share.viewers().len(), 3);
    }
}

#[cfg(test)]
mod option_tests {
    use clap::Parser;

    /// `--share` alone shares at the default socket; `--share PATH` at PATH (a bare `--share`
    /// was once refused: "a value is required").
    #[test]
    fn share_takes_a_socket_or_none() {
        let parse = |a: &[&str]| {
            let cli = crate::cli::Cli::try_parse_from(a.iter().copied()).expect("parses");
            super::options(&cli.live.share, false).expect("options")
        };
        let bare = parse(&["ifxtop", "--demo", "--share"]).expect("shared");
        assert_eq!(bare.path, None);
        let at = parse(&["ifxtop", "--demo", "--share", "/tmp/x.sock"]).expect("shared");
        assert_eq!(
            at.path.as_deref(),
            Some(std::path::Path::new("/tmp/x.sock"))
        );
        assert!(parse(&["ifxtop", "--demo"]).is_none());
    }
}
