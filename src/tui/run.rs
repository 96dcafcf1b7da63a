//! The live inspector: wires a runner, the collectors, the store, the app and the terminal
//! together, and draws only when something changed (data, a key, a resize, the 1 s age clock).

use crate::cli::LiveArgs;
use crate::collect::sample::{Parsed, RawSample, Update};
use crate::collect::{self, Ctx, SessionClock, Sinks};
use crate::error::Error;
use crate::model::snapshot;
use crate::source::{local::LocalRunner, CommandRunner, Request, Source};
use crate::store::{Store, StoreSettings};
use crate::tui::app::{App, Effect, ExtentStatus, Mode};
use crate::tui::config::Config;
use crate::tui::keymap::Keymap;
use crate::tui::theme::Theme;
use crate::tui::views;
use crossterm::event::Event as TermEvent;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// Data-driven redraws wait this long for the other sources of the same tick.
const SETTLE: Duration = Duration::from_millis(60);
/// Rebuilding the extent map on its own because pages stop resolving: at most this often.
const AUTO_REBUILD_EVERY: Duration = Duration::from_secs(1800);

/// Describes what plays at a runner's own clock time (the demo's incident).
pub type NoteFn = fn(Duration) -> String;

/// Everything the loop needs, decided from the command line and the config.
pub struct Setup {
    pub mode: Mode,
    pub runner: Arc<dyn CommandRunner>,
    pub settings: StoreSettings,
    pub interval: f64,
    pub server: Option<String>,
    pub extents_file: Option<PathBuf>,
    pub keymap: Keymap,
    pub theme: Theme,
    pub record: Option<(PathBuf, u64)>,
    /// Describes the demo's current incident at a demo time.
    pub note: Option<NoteFn>,
    /// `--replay FILE`: the recording, read up front (damage is listed, never fatal).
    pub replay: Option<Arc<crate::collect::record::Recording>>,
    /// `--log FILE`.
    pub log: Option<PathBuf>,
}

/// Builds the setup of `ifxtop [--demo]` from its arguments.
pub fn setup(args: &LiveArgs) -> Result<Setup, Error> {
    let config = Config::load(args.config.as_deref())?;
    let keymap = Keymap::with_overrides(&config.keys)
        .map_err(|e| Error::Usage(format!("config [keys]: {e}")))?;
    let interval = args.interval.or(config.interval).unwrap_or(1.0);
    if !(0.1..=3600.0).contains(&interval) {
        return Err(Error::Usage(format!(
            "--interval {interval}: between 0.1 and 3600 seconds"
        )));
    }
    let base_page_kb = args.base_page_kb.or(config.base_page_kb).unwrap_or(2);
    if ![1, 2, 4, 8, 16].contains(&base_page_kb) {
        return Err(Error::Usage(format!(
            "--base-page-kb {base_page_kb}: one of 2, 4 (or 1, 8, 16)"
        )));
    }
    let mut settings = StoreSettings {
        base_page_kb,
        ..StoreSettings::default()
    };
    if let Some(w) = config.hotspot_window {
        settings.hotspot_window = Duration::from_secs(w.max(1));
    }
    if let Some(w) = config.socket_window {
        settings.socket_window = Duration::from_secs(w.max(1));
    }
    let ports: Vec<u16> = if !args.ports.is_empty() {
        args.ports.clone()
    } else if let Some(p) = &config.ports {
        p.clone()
    } else {
        Vec::new()
    };
    let mut replay = None;
    type Chosen = (Mode, Arc<dyn CommandRunner>, Option<String>, Option<NoteFn>);
    let (mode, runner, server, note): Chosen = if let Some(path) = &args.replay {
        let rec = crate::collect::record::read_recording(path)?;
        if rec.samples.is_empty() {
            return Err(Error::Usage(format!(
                "{}: nothing to replay ({})",
                path.display(),
                rec.skipped.join("; ")
            )));
        }
        let header = rec.header.clone();
        settings.ports = if ports.is_empty() {
            header.as_ref().map(|h| h.ports.clone()).unwrap_or_default()
        } else {
            ports
        };
        if args.base_page_kb.is_none() {
            if let Some(kb) = header.as_ref().and_then(|h| h.base_page_kb) {
                settings.base_page_kb = kb;
            }
        }
        replay = Some(Arc::new(rec));
        (
            Mode::Replay {
                file: path.display().to_string(),
            },
            // Nothing runs during a replay; the runner is never asked.
            Arc::new(LocalRunner::new(None)),
            header.and_then(|h| h.server),
            None,
        )
    } else if args.demo {
        let demo = crate::demo::DemoRunner::wall(args.seed, args.demo_sessions)
            .starting_at(Duration::from_secs(args.demo_at));
        settings.ports = if ports.is_empty() {
            vec![crate::demo::LISTENER_PORT]
        } else {
            ports
        };
        (
            Mode::Demo { seed: args.seed },
            Arc::new(demo),
            Some("ol_demo".to_string()),
            Some(crate::demo::describe_phase),
        )
    } else {
        let server = args.server.clone();
        settings.ports = if ports.is_empty() {
            sqlhosts_ports(server.as_deref())
        } else {
            ports
        };
        (
            Mode::Live,
            Arc::new(LocalRunner::new(server.clone())),
            server,
            None,
        )
    };
    Ok(Setup {
        mode,
        runner,
        settings,
        interval,
        server,
        extents_file: args.extents.clone(),
        keymap,
        theme: Theme::from_env(),
        record: args.record.clone().map(|p| {
            // A directory gets a timestamped file name of its own.
            let file = if p.is_dir() {
                crate::collect::record::default_file_name(&p)
            } else {
                p
            };
            (file, args.record_max)
        }),
        note,
        replay,
        log: args.log.clone(),
    })
}

/// Listener ports of INFORMIXSERVER from `$INFORMIXSQLHOSTS` or `$INFORMIXDIR/etc/sqlhosts`.
fn sqlhosts_ports(server: Option<&str>) -> Vec<u16> {
    let Some(server) = server else {
        return Vec::new();
    };
    let path = std::env::var_os("INFORMIXSQLHOSTS")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("INFORMIXDIR").map(|d| PathBuf::from(d).join("etc/sqlhosts")));
    let Some(text) = path.and_then(|p| std::fs::read_to_string(p).ok()) else {
        return Vec::new();
    };
    let services = std::fs::read_to_string("/etc/services")
        .map(|t| crate::source::sqlhosts::parse_services(&t))
        .unwrap_or_default();
    let entries = crate::source::sqlhosts::parse_sqlhosts(&text);
    crate::source::sqlhosts::listener_ports(&entries, &[server], &services)
}

/// Runs the TUI until the user quits or a signal arrives.
pub fn run(args: &LiveArgs) -> Result<ExitCode, Error> {
    let setup = setup(args)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(run_async(setup))
}

/// Where the store's updates come from: collectors (live, demo) or a recording.
enum Feed {
    Collect {
        clock: SessionClock,
        interval: watch::Sender<f64>,
        rebuild: mpsc::Sender<()>,
        /// The sessions drilled into, for the ses/sql collector.
        focus: watch::Sender<Vec<crate::ids::Sid>>,
        tasks: Vec<tokio::task::JoinHandle<()>>,
        ctx: Ctx,
        recorder: Option<crate::collect::record::Recorder>,
    },
    Replay {
        player: crate::collect::replay::Player,
        last: Instant,
    },
}

/// How often a playing replay moves on.
const REPLAY_STEP: Duration = Duration::from_millis(100);

/// The receiving ends of a collecting feed, kept apart so `select!` can borrow them separately.
struct Inbox {
    updates: mpsc::Receiver<Update>,
    extents: mpsc::Receiver<ExtentStatus>,
}

async fn recv_opt<T>(rx: &mut Option<mpsc::Receiver<T>>) -> Option<T> {
    match rx {
        Some(r) => r.recv().await,
        None => std::future::pending().await,
    }
}

fn start_collectors(setup: &Setup) -> Result<(Feed, Inbox), Error> {
    let clock = SessionClock::start();
    let (upd_tx, updates) = mpsc::channel::<Update>(4096);
    let (interval, interval_rx) = watch::channel(setup.interval);
    let (raw_tx, recorder) = match &setup.record {
        Some((path, max_mb)) => {
            let (tx, rx) = std::sync::mpsc::sync_channel::<RawSample>(4096);
            let header = crate::collect::record::RecordingHeader::now(
                setup.server.as_deref(),
                &setup.settings.ports,
                setup.settings.base_page_kb,
            );
            let rec = crate::collect::record::Recorder::start(path, *max_mb, &header, rx)?;
            (Some(tx), Some(rec))
        }
        None => (None, None),
    };
    let ctx = Ctx {
        runner: setup.runner.clone(),
        clock,
        sinks: Sinks {
            updates: upd_tx,
            raw: raw_tx,
        },
        interval: interval_rx,
    };
    let mut tasks = collect::spawn_polling(&ctx, collect::onstat_schedules());
    let (focus, focus_rx) = watch::channel::<Vec<crate::ids::Sid>>(Vec::new());
    tasks.push(collect::spawn_focus(&ctx, focus_rx));
    tasks.push(collect::spawn_sockets(&ctx));
    tasks.push(collect::spawn_numa(&ctx));
    let (rebuild, rebuild_rx) = mpsc::channel::<()>(2);
    let (ext_tx, extents) = mpsc::channel::<ExtentStatus>(16);
    let cache = match (
        &setup.mode,
        &setup.server,
        crate::extents::cache::default_dir(),
    ) {
        (Mode::Live, Some(server), Some(dir)) => Some(CacheSpot {
            dir,
            server: server.clone(),
        }),
        _ => None,
    };
    tasks.push(tokio::spawn(extent_job(
        ctx.clone(),
        setup.extents_file.clone(),
        cache,
        rebuild_rx,
        ext_tx,
    )));
    Ok((
        Feed::Collect {
            clock,
            interval,
            rebuild,
            focus,
            tasks,
            ctx,
            recorder,
        },
        Inbox { updates, extents },
    ))
}

async fn run_async(setup: Setup) -> Result<ExitCode, Error> {
    let mut log = match &setup.log {
        Some(p) => Some(
            crate::collect::log::DebugLog::open(p).map_err(|source| Error::File {
                path: p.display().to_string(),
                source,
            })?,
        ),
        None => None,
    };
    if let Some(l) = &mut log {
        l.line(
            Duration::ZERO,
            &format!(
                "start: {:?} server {} ports {:?} base page {} KB interval {}s",
                setup.mode,
                setup.server.as_deref().unwrap_or("-"),
                setup.settings.ports,
                setup.settings.base_page_kb,
                setup.interval
            ),
        );
    }
    let mut store = Store::new(setup.settings.clone());
    let (mut feed, inbox) = match &setup.replay {
        Some(rec) => (
            Feed::Replay {
                player: crate::collect::replay::Player::new(rec.clone()),
                last: Instant::now(),
            },
            None,
        ),
        None => {
            let (f, i) = start_collectors(&setup)?;
            (f, Some(i))
        }
    };
    let (mut updates_rx, mut extents_rx) = match inbox {
        Some(i) => (Some(i.updates), Some(i.extents)),
        None => (None, None),
    };

    let (term_tx, mut term_rx) = mpsc::channel::<TermEvent>(256);
    std::thread::spawn(move || {
        // Blocking reads on their own thread: the async loop never waits on the terminal.
        while let Ok(ev) = crossterm::event::read() {
            if term_tx.blocking_send(ev).is_err() {
                break;
            }
        }
    });
    let mut sigterm = signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut sighup = signal(tokio::signal::unix::SignalKind::hangup())?;
    let mut sigint = signal(tokio::signal::unix::SignalKind::interrupt())?;

    let (mut terminal, guard) = crate::tui::terminal::enter()?;
    let mut app = App::new(
        setup.keymap.clone(),
        setup.theme,
        setup.mode.clone(),
        setup.interval,
    );
    app.server = setup.server.clone();
    if let Ok(size) = terminal.size() {
        app.size = (size.width, size.height);
    }
    if let Feed::Replay { player, .. } = &feed {
        app.replay = Some(player.ui());
        let skipped = &player.ui().skipped;
        if !skipped.is_empty() {
            app.say(format!("recording: {}", skipped.join("; ")), Duration::ZERO);
        }
    }
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut replay_tick = tokio::time::interval(REPLAY_STEP);
    replay_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut built_generation = u64::MAX;
    let mut built_focus: Vec<crate::ids::Sid> = Vec::new();
    let mut settle: Option<tokio::time::Instant> = None;
    let mut redraw = true;
    let mut last_rebuild: Option<Instant> = None;
    // When the snapshot was last built; data alone rebuilds it at most every half interval (the
    // build joins thousands of rows), what the user does at once.
    let mut last_build: Option<Instant> = None;
    let mut force_build = true;
    let mut exit = ExitCode::SUCCESS;

    loop {
        let now = now_of(&feed);
        if redraw {
            let focus: Vec<_> = app.drill.iter().map(|d| d.sid).collect();
            if focus != built_focus {
                if let Feed::Collect { focus: tx, .. } = &feed {
                    let mut sids = focus.clone();
                    sids.sort_unstable();
                    sids.dedup();
                    let _ = tx.send(sids);
                }
            }
            let min_gap = Duration::from_secs_f64(app.interval.clamp(0.1, 3600.0) * 0.5);
            let data_due = store.generation != built_generation
                && (force_build || last_build.is_none_or(|b| b.elapsed() >= min_gap));
            if store.generation != built_generation && !data_due {
                // Too soon after the last build: come back when the gap is over.
                if let Some(b) = last_build {
                    let at = tokio::time::Instant::from_std(b + min_gap);
                    settle = Some(settle.map_or(at, |s| s.min(at)));
                }
            }
            if data_due || focus != built_focus {
                last_build = Some(Instant::now());
                force_build = false;
                let snap = snapshot::build(&store, now, setup.server.as_deref(), &focus);
                built_focus = focus;
                if let Feed::Collect { rebuild, .. } = &feed {
                    maybe_auto_rebuild(&snap, &app, &mut last_rebuild, rebuild);
                }
                if let Feed::Replay { .. } = &feed {
                    app.extents = replay_extent_status(&store);
                }
                app.set_snapshot(Arc::new(snap));
                built_generation = store.generation;
            }
            if let (Some(note), Some(t)) = (setup.note, setup.runner.clock()) {
                app.note = Some(note(t));
            }
            if let Feed::Collect {
                recorder: Some(rec),
                ..
            } = &feed
            {
                if let Some(msg) = rec.status() {
                    if app.message.as_ref().map(|(m, _)| m) != Some(&msg) {
                        app.say(msg, now);
                    }
                }
            }
            terminal.draw(|f| views::draw(f, &app, now))?;
            redraw = false;
        }
        let replaying = matches!(&feed, Feed::Replay { player, .. } if !player.is_paused());
        tokio::select! {
            Some(first) = recv_opt(&mut updates_rx) => {
                // This update and every other already waiting, applied together.
                let more = std::iter::from_fn(|| updates_rx.as_mut()?.try_recv().ok());
                for u in std::iter::once(first).chain(more) {
                    if let Some(l) = &mut log {
                        l.update(&u);
                    }
                    store.apply(u);
                }
                if settle.is_none() {
                    settle = Some(tokio::time::Instant::now() + SETTLE);
                }
            }
            Some(st) = recv_opt(&mut extents_rx) => {
                if let Some(l) = &mut log {
                    l.line(now, &format!("extent map: {st:?}"));
                }
                app.extents = st;
                redraw = true;
            }
            _ = async {
                match settle {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            } => {
                settle = None;
                redraw = true;
            }
            _ = replay_tick.tick(), if replaying => {
                if let Feed::Replay { player, last } = &mut feed {
                    let wall = last.elapsed();
                    *last = Instant::now();
                    let before = (store.generation, player.position().as_secs(), player.is_paused());
                    store.play(player.advance(wall));
                    let after = (store.generation, player.position().as_secs(), player.is_paused());
                    // Draw when a sample was applied or the clock on screen moved, not 10 times
                    // a second.
                    if after != before {
                        app.replay = Some(player.ui());
                        redraw = true;
                    }
                }
            }
            Some(ev) = term_rx.recv() => {
                // What a key changes (a replay seek, a drill) shows at once.
                force_build = true;
                match ev {
                    TermEvent::Key(k) => {
                        for e in app.on_key(k, now) {
                            apply_effect(e, &mut app, &mut feed, &mut store, &mut terminal, now);
                        }
                    }
                    TermEvent::Resize(w, h) => {
                        app.size = (w, h);
                        app.refresh_orders();
                        let _ = terminal.autoresize();
                    }
                    _ => {}
                }
                redraw = true;
            }
            _ = tick.tick() => redraw = true,
            _ = sigterm.recv() => { exit = ExitCode::from(143); break; }
            _ = sighup.recv() => { exit = ExitCode::from(129); break; }
            _ = sigint.recv() => { exit = ExitCode::from(130); break; }
        }
        if app.quit {
            break;
        }
    }
    drop(guard);
    if let Some(l) = &mut log {
        l.line(now_of(&feed), &format!("exit ({exit:?})"));
    }
    if let Feed::Collect {
        tasks,
        ctx,
        recorder,
        ..
    } = feed
    {
        for t in tasks {
            t.abort();
        }
        drop(ctx);
        if let Some(rec) = recorder {
            // Aborted collectors drop their senders; the recorder then writes what it has.
            tokio::task::yield_now().await;
            match rec.finish() {
                Ok(note) if !note.is_empty() => eprintln!("ifxtop: {note}"),
                Ok(_) => {}
                Err(e) => eprintln!("ifxtop: recording: {e}"),
            }
        }
    }
    Ok(exit)
}

/// The session time: the collectors' clock, or the replay's position.
fn now_of(feed: &Feed) -> Duration {
    match feed {
        Feed::Collect { clock, .. } => clock.now(),
        Feed::Replay { player, .. } => player.position(),
    }
}

/// In a replay the map comes from the recording's `oncheck -pe` sample, if it has one.
fn replay_extent_status(store: &Store) -> ExtentStatus {
    match store.extents() {
        Some(m) => ExtentStatus::Ready {
            what: "the recording".into(),
            extents: m.extent_count(),
            built_at: store.extents_loaded_at().unwrap_or_default(),
            age_at_load: Duration::ZERO,
        },
        None => ExtentStatus::None,
    }
}

fn signal(kind: tokio::signal::unix::SignalKind) -> Result<tokio::signal::unix::Signal, Error> {
    tokio::signal::unix::signal(kind).map_err(Error::Io)
}

/// Pages stop resolving (new extents since the map was built): rebuild, rate-limited.
fn maybe_auto_rebuild(
    snap: &snapshot::Snapshot,
    app: &App,
    last: &mut Option<Instant>,
    rebuild: &mpsc::Sender<()>,
) {
    if !matches!(app.extents, ExtentStatus::Ready { .. }) {
        return;
    }
    let unresolved = snap.unresolved_share.unwrap_or(0.0);
    let enough = snap.hotspots.iter().filter(|h| !h.resolved).count() >= 3;
    if unresolved > 0.2 && enough && last.is_none_or(|l| l.elapsed() > AUTO_REBUILD_EVERY) {
        *last = Some(Instant::now());
        let _ = rebuild.try_send(());
    }
}

fn apply_effect(
    effect: Effect,
    app: &mut App,
    feed: &mut Feed,
    store: &mut Store,
    terminal: &mut crate::tui::terminal::Term,
    now: Duration,
) {
    match effect {
        Effect::SetInterval(v) => {
            if let Feed::Collect { interval, .. } = feed {
                let _ = interval.send(v);
            }
        }
        Effect::RebuildExtents => {
            if let Feed::Collect { rebuild, .. } = feed {
                if matches!(app.extents, ExtentStatus::Building { .. }) {
                    app.say("the extent map is being built already", now);
                } else if rebuild.try_send(()).is_ok() {
                    app.say(
                        "rebuilding the extent map (oncheck -pe) in the background",
                        now,
                    );
                }
            }
        }
        Effect::Copy(text) => {
            use std::io::Write;
            let seq = crate::tui::share::osc52(&text);
            let mut out = std::io::stdout();
            let ok = out
                .write_all(seq.as_bytes())
                .and_then(|_| out.flush())
                .is_ok();
            if ok {
                let tmux = std::env::var_os("TMUX").is_some();
                app.say(crate::tui::share::copy_note(text.len(), tmux), now);
            } else {
                app.say("could not write to the terminal", now);
            }
        }
        Effect::Export => {
            let size = terminal.size().unwrap_or_default();
            let area = ratatui::layout::Rect::new(0, 0, size.width, size.height);
            let mut buf = ratatui::buffer::Buffer::empty(area);
            views::render(app, now, area, &mut buf);
            let text = views::buffer_text(&buf);
            let json = serde_json::to_string_pretty(app.shown().as_ref()).unwrap_or_default();
            let stem = crate::format::export_stem(time::OffsetDateTime::now_utc());
            let dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
            match crate::tui::share::export(&dir, &stem, &text, &json) {
                // The names first: the directory is where ifxtop was started, and a long one
                // would push them off an 80-column status line.
                Ok((a, b)) => {
                    let name = |p: &std::path::Path| {
                        p.file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default()
                    };
                    app.say(
                        format!(
                            "exported {} and {} to {}",
                            name(&a),
                            name(&b),
                            dir.display()
                        ),
                        now,
                    )
                }
                Err(e) => app.say(format!("export failed: {e}"), now),
            }
        }
        Effect::Replay(cmd) => {
            if let Feed::Replay { player, last } = feed {
                store.play(player.command(cmd));
                *last = Instant::now();
                app.replay = Some(player.ui());
            }
        }
    }
}

/// Where the extent job may keep and find the map between runs (live mode only: the demo and
/// tests never write to the user's cache).
#[derive(Debug, Clone)]
pub struct CacheSpot {
    pub dir: PathBuf,
    pub server: String,
}

/// Builds the extent map in the background: from `--extents FILE`, else from the on-disk cache,
/// else by running `oncheck -pe` (then saved to the cache); again on every rebuild request.
/// Never on the UI path.
async fn extent_job(
    ctx: Ctx,
    file: Option<PathBuf>,
    cache: Option<CacheSpot>,
    mut rebuild: mpsc::Receiver<()>,
    status: mpsc::Sender<ExtentStatus>,
) {
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

async fn load_cache(spot: CacheSpot) -> Option<crate::extents::cache::Cached> {
    tokio::task::spawn_blocking(move || crate::extents::cache::load(&spot.dir, &spot.server))
        .await
        .ok()
        .and_then(|r| r.ok())
        .flatten()
}

/// Hands a cached map to the store as the `oncheck -pe` sample it came from (recorded too, so a
/// replay resolves pages the same way).
async fn deliver_cached(ctx: &Ctx, cached: crate::extents::cache::Cached) -> Option<ExtentStatus> {
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
        result: Ok(Parsed::Extents(Arc::new(cached.map))),
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
    let run = ctx
        .run_raw(&Source::OncheckPe, request, crate::source::ONCHECK_TIMEOUT)
        .await;
    let t = run.t;
    let took = run.took;
    let (result, text) = match run.result {
        Err(e) => (Err(e), None),
        Ok(out) => {
            let text = out.stdout.clone();
            let parsed = tokio::task::spawn_blocking(move || {
                crate::collect::sample::parse_output(&Source::OncheckPe, out)
            })
            .await
            .unwrap_or_else(|e| Err(crate::error::SourceError::Other(format!("indexer: {e}"))));
            (parsed, Some(text))
        }
    };
    let st = match &result {
        Ok(Parsed::Extents(map)) => ExtentStatus::Ready {
            what: what.to_string(),
            extents: map.extent_count(),
            built_at: ctx.clock.now(),
            age_at_load: Duration::ZERO,
        },
        Ok(_) => ExtentStatus::Failed {
            error: format!("{what} gave no extent map"),
            at: ctx.clock.now(),
        },
        Err(e) => ExtentStatus::Failed {
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
