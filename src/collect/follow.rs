//! A viewer's source: a shared feed (`collect::wire`) read as it comes, each output parsed as a
//! replay parses a recorded one and handed on as the collectors hand theirs, so the whole
//! pipeline (every pane, finding, drill-down, database time, `--record`) works as on the
//! collector's own screen. Nothing here runs anything: a drill-down becomes a small message
//! asking the collector to read that session in its next tick.

use crate::collect::record::RecordingHeader;
use crate::collect::sample::RawSample;
use crate::collect::wire::{self, Control, FeedLine, Mark, Presence, ViewerMsg};
use crate::collect::Focus;
use crate::collect::{Collection, SessionClock};
use crate::source::Source;
use std::io::{BufRead, Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// The longest line of a feed (an `oncheck -pe` of a big instance is one line).
const MAX_LINE: u64 = 1 << 30;
/// Marks and refusals kept for the screen.
const KEEP: usize = 50;
/// How often the viewer tells the collector how far it has got.
const SAY_AT_EVERY: Duration = Duration::from_secs(2);

/// A feed joined: its header and hello read, the rest to follow.
pub struct Joined {
    pub header: RecordingHeader,
    /// The collector's session time when the viewer joined.
    pub now: f64,
    /// Who collects (`user@host`).
    pub collector: String,
    /// Whom the viewer follows, as the user named it (`db01`, a socket, a URL).
    pub target: String,
    /// The collector's number for this viewer.
    pub you: u64,
    pub max_focus: usize,
    lines: Box<dyn BufRead + Send>,
    to_collector: Box<dyn Write + Send>,
    /// What keeps the transport up (the ssh process): dropped with the follower.
    keep: Box<dyn Send>,
    /// The feed's compressed bytes read so far.
    received: Arc<std::sync::atomic::AtomicU64>,
}

/// Counts the bytes read through it.
struct Counted<R> {
    inner: R,
    n: Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.n
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// What a viewer knows of the others and of the feed, for its screen.
#[derive(Debug, Clone, Default)]
pub struct FollowState {
    pub target: String,
    pub collector: String,
    pub you: u64,
    /// Everyone attached, as the collector last said.
    pub viewers: Vec<Presence>,
    pub marks: Vec<Mark>,
    /// What the collector refused of this viewer.
    pub refused: Vec<String>,
    /// The sessions the collector reads for this viewer.
    pub focus: Vec<u64>,
    /// The latest sample's time, on the collector's clock.
    pub latest_t: f64,
    /// Why the feed ended, once it did.
    pub ended: Option<String>,
    /// Lines of the feed that were neither a sample nor a control line.
    pub unread: u64,
    /// What the collector's own screen shows, when it shares one.
    pub screen: Option<wire::View>,
}

/// Reads one line of at most `cap` bytes (without its newline); `None` at the end.
fn read_line(r: &mut dyn BufRead, buf: &mut Vec<u8>, cap: u64) -> std::io::Result<Option<()>> {
    buf.clear();
    let n = Read::take(&mut *r, cap + 1).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    } else if n as u64 > cap {
        return Err(std::io::Error::other(format!(
            "a line of the feed is longer than {} MB",
            cap >> 20
        )));
    }
    Ok(Some(()))
}

/// Joins the feed `from` (the collector's frames) answering on `to` (the viewer's messages):
/// reads the header and the hello. `keep` is held as long as the feed is followed.
pub fn join(
    from: Box<dyn Read + Send>,
    mut to: Box<dyn Write + Send>,
    target: &str,
    keep: Box<dyn Send>,
) -> Result<Joined, String> {
    let received = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let from = Counted {
        inner: from,
        n: received.clone(),
    };
    let mut d = zstd::stream::read::Decoder::new(from).map_err(|e| e.to_string())?;
    d.window_log_max(crate::collect::track::WINDOW_LOG_MAX)
        .map_err(|e| e.to_string())?;
    let mut lines: Box<dyn BufRead + Send> = Box::new(std::io::BufReader::new(d));
    let mut buf = Vec::new();
    let ended = |what: &str| format!("{target}: {what}");
    let first = read_line(&mut lines, &mut buf, 1 << 20)
        .map_err(|e| ended(&format!("not a shared feed ({e})")))?
        .map(|()| buf.clone())
        .ok_or_else(|| ended("the feed ended before it began (is anything shared there?)"))?;
    let header: RecordingHeader = serde_json::from_slice(&first)
        .map_err(|_| ended("not a shared feed (no recording header)"))?;
    read_line(&mut lines, &mut buf, 1 << 20)
        .map_err(|e| ended(&e.to_string()))?
        .ok_or_else(|| ended("the feed ended after its header"))?;
    let hello: wire::ControlLine =
        serde_json::from_slice(&buf).map_err(|_| ended("not a shared feed (no hello)"))?;
    let (now, collector, you, max_focus) = match hello.share {
        Control::Hello {
            version,
            now,
            collector,
            you,
            max_focus,
        } if version == wire::VERSION => (now, collector, you, max_focus),
        Control::Hello { version, .. } => {
            return Err(ended(&format!(
                "the collector speaks version {version} of the feed, this ifxtop {}",
                wire::VERSION
            )))
        }
        Control::Refused(why) => return Err(ended(&format!("refused: {why}"))),
        _ => return Err(ended("not a shared feed (no hello)")),
    };
    let host = crate::source::local::hostname();
    let _ = to
        .write_all(&wire::line(&ViewerMsg::Hello { host }))
        .and_then(|()| to.flush());
    Ok(Joined {
        header,
        now,
        collector: crate::format::printable(&collector),
        target: target.to_string(),
        you,
        max_focus,
        lines,
        to_collector: to,
        keep,
        received,
    })
}

impl Collection {
    /// A collection that collects nothing: its updates are the feed's outputs, parsed as they
    /// come; a focus (a session screen opened) is asked of the collector. Its clock reads the
    /// collector's session time. Each output also goes to `raw` (a local `--record`).
    pub(crate) fn following(
        joined: Joined,
        interval: Duration,
        raw: Option<std::sync::mpsc::SyncSender<RawSample>>,
    ) -> (Collection, Follower) {
        let clock =
            SessionClock::starting_at(Duration::try_from_secs_f64(joined.now).unwrap_or_default());
        let (upd_tx, updates) = mpsc::channel(4096);
        let (interval_tx, _) = watch::channel(interval);
        let (focus, mut focus_rx) = watch::channel(Focus::default());
        let (rebuild, _) = mpsc::channel(2);
        let (_, extents) = mpsc::channel(1);
        let state = Arc::new(Mutex::new(FollowState {
            target: joined.target.clone(),
            collector: joined.collector.clone(),
            you: joined.you,
            latest_t: joined.now,
            ..FollowState::default()
        }));
        let (say, said) = std::sync::mpsc::sync_channel::<ViewerMsg>(64);
        // What arrives is kept for seeking back over it.
        let history = Arc::new(crate::collect::received::Received::new(
            joined.header.clone(),
            crate::collect::received::DEFAULT_MAX_BYTES,
        ));
        let follower = Follower {
            state: state.clone(),
            say: say.clone(),
            received: joined.received.clone(),
            rate: Arc::default(),
            history: history.clone(),
            view: Arc::default(),
        };
        let Joined {
            lines,
            mut to_collector,
            keep,
            max_focus,
            ..
        } = joined;
        // The viewer's messages, written on a thread of their own (a write may block).
        let _ = std::thread::Builder::new()
            .name("follow-out".into())
            .spawn(move || {
                for msg in said {
                    if to_collector
                        .write_all(&wire::line(&msg))
                        .and_then(|()| to_collector.flush())
                        .is_err()
                    {
                        return;
                    }
                }
            });
        let st = state.clone();
        let say_at = say.clone();
        let reader = std::thread::Builder::new()
            .name("follow-in".into())
            .spawn(move || {
                let _keep = keep;
                follow(lines, &upd_tx, raw.as_ref(), &st, &say_at, &history);
            });
        let mut tasks = Vec::new();
        // A session screen opened asks the collector for it, within what it allows a viewer.
        tasks.push(tokio::spawn(async move {
            loop {
                let sids: Vec<u64> = focus_rx
                    .borrow_and_update()
                    .drilled
                    .iter()
                    .take(max_focus)
                    .map(|s| s.0)
                    .collect();
                let _ = say.try_send(ViewerMsg::Focus { sids });
                if focus_rx.changed().await.is_err() {
                    return;
                }
            }
        }));
        if let Err(e) = reader {
            if let Ok(mut s) = state.lock() {
                s.ended = Some(e.to_string());
            }
        }
        (
            Collection::from_parts(clock, interval_tx, focus, rebuild, updates, extents, tasks),
            follower,
        )
    }
}

/// Reads the feed until it ends: samples become updates (and go to `raw`), control lines
/// change `state`; the collector is told every few seconds how far the viewer has got.
fn follow(
    mut lines: Box<dyn BufRead + Send>,
    updates: &mpsc::Sender<crate::collect::sample::Update>,
    raw: Option<&std::sync::mpsc::SyncSender<RawSample>>,
    state: &Mutex<FollowState>,
    say: &std::sync::mpsc::SyncSender<ViewerMsg>,
    history: &crate::collect::received::Received,
) {
    let mut buf = Vec::new();
    let mut last_said = std::time::Instant::now();
    let lock = || state.lock().unwrap_or_else(|p| p.into_inner());
    let why = loop {
        match read_line(&mut lines, &mut buf, MAX_LINE) {
            Ok(Some(())) => {}
            Ok(None) => break "the collector ended the feed".to_string(),
            Err(e) => break format!("the feed broke: {e}"),
        }
        match serde_json::from_slice::<FeedLine>(&buf) {
            Ok(FeedLine::Sample(sample)) => {
                let Some(source) = Source::from_label(&sample.source) else {
                    lock().unread += 1;
                    continue;
                };
                let update = crate::collect::replay::to_update(&source, &sample);
                let t = sample.t;
                history.push(&buf, source, t);
                if let Some(raw) = raw {
                    let _ = raw.try_send(sample);
                }
                if updates.blocking_send(update).is_err() {
                    return;
                }
                let mut s = lock();
                s.latest_t = s.latest_t.max(t);
                if last_said.elapsed() >= SAY_AT_EVERY {
                    last_said = std::time::Instant::now();
                    let _ = say.try_send(ViewerMsg::At { t: s.latest_t });
                }
            }
            Ok(FeedLine::Control(c)) => {
                let mut s = lock();
                match c.share {
                    Control::Viewers(v) => s.viewers = v,
                    Control::Mark(m) => {
                        s.marks.push(m);
                        if s.marks.len() > KEEP {
                            s.marks.remove(0);
                        }
                    }
                    Control::Refused(why) => {
                        s.refused.push(crate::format::printable(&why));
                        if s.refused.len() > KEEP {
                            s.refused.remove(0);
                        }
                    }
                    Control::Focus(sids) => s.focus = sids,
                    Control::Screen(v) => s.screen = Some(v),
                    Control::Hello { .. } => {}
                }
            }
            Err(_) => lock().unread += 1,
        }
    };
    lock().ended = Some(why);
}

/// A viewer's side of the feed, for its screen: what it knows, and what it may say.
#[derive(Clone)]
pub struct Follower {
    pub state: Arc<Mutex<FollowState>>,
    say: std::sync::mpsc::SyncSender<ViewerMsg>,
    received: Arc<std::sync::atomic::AtomicU64>,
    rate: Arc<Mutex<wire::Rate>>,
    /// What arrived since it joined, kept on disk for seeking back.
    history: Arc<crate::collect::received::Received>,
    /// The view last said to the collector.
    view: Arc<Mutex<Option<wire::View>>>,
}

impl Follower {
    /// What the viewer knows now.
    pub fn state(&self) -> FollowState {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The feed's compressed bytes received so far, and a second over the last seconds.
    pub fn received(&self) -> (u64, Option<f64>) {
        let n = self.received.load(std::sync::atomic::Ordering::Relaxed);
        let rate = self
            .rate
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .per_s(n, std::time::Instant::now());
        (n, rate)
    }

    /// Tells the collector what this screen shows (when it changed since last said), for
    /// the others to follow.
    pub fn say_view(&self, view: wire::View) {
        let mut last = self.view.lock().unwrap_or_else(|p| p.into_inner());
        if last.as_ref() != Some(&view) && self.say.try_send(ViewerMsg::View(view.clone())).is_ok()
        {
            *last = Some(view);
        }
    }

    /// What arrived since it joined, as a recording to seek over (`None`: nothing yet).
    pub fn history(&self) -> Option<Arc<crate::collect::record::Recording>> {
        self.history.recording()
    }

    /// The history's bytes on disk, and why it stopped being kept if it did.
    pub fn kept(&self) -> crate::collect::received::Kept {
        self.history.kept()
    }

    /// Sends a mark to the collector (and so to every viewer).
    pub fn mark(&self, at: f64, text: &str) {
        let _ = self.say.try_send(ViewerMsg::Mark {
            at,
            text: text.chars().take(wire::MAX_MARK_TEXT).collect(),
        });
    }
}
