//! `ifxtop serve`: a Prometheus exporter. Each instance runs the live screen's collectors and
//! store, without a screen; when its data settles, its snapshot and then its metrics are built
//! (at most every half interval, as the live screen rebuilds its snapshot). A scrape, answered
//! on a thread of its own, only encodes the latest metrics of every instance: it never waits
//! for an onstat, and an instance that fails or hangs holds up neither the others nor a scrape.

pub mod feed;
pub mod http;
pub mod metrics;
pub mod web;

use crate::cli::{LiveArgs, ServeArgs};
use crate::collect::log::DebugLog;
use crate::collect::{Collection, SessionClock};
use crate::error::Error;
use crate::instance::headless;
use crate::instance::setup::Setup;
use crate::instance::signals::Signal;
use crate::instance::watch::Watched;
use crate::model::snapshot;
use crate::store::Store;
use metrics::{Counted, InstanceMetrics};
use std::future::Future;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How long the instances get to stop (their collectors killing what runs) before serve exits
/// anyway.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// `ifxtop serve`.
pub fn run_cli(args: &ServeArgs) -> ExitCode {
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ifxtop serve: {e}");
            ExitCode::from(match e {
                Error::Usage(_) => 2,
                _ => 1,
            })
        }
    }
}

fn run(args: &ServeArgs) -> Result<(), Error> {
    check_args(&args.live)?;
    check_telemetry_path(&args.telemetry_path)?;
    let config = match &args.web_config {
        Some(p) => web::WebConfig::load(p)?,
        None => web::WebConfig::default(),
    };
    for w in &config.warnings {
        eprintln!("ifxtop serve: warning: {w}");
    }
    web::check_exposure(args.listen, &config, args.insecure)?;
    let setups = crate::instance::setup::setups_unattended(&args.live)?;
    let listener = http::listen(args.listen)
        .map_err(|e| Error::Usage(format!("--listen {}: {e}", args.listen)))?;
    let addr = listener.local_addr()?;
    // Listening for SIGTERM and SIGINT before saying where serve listens: a signal from then
    // on ends it cleanly (it once could come before, and kill it).
    let rt = crate::instance::runtime::current_thread()?;
    let mut ends = {
        let _in = rt.enter();
        crate::instance::signals::listen(&Signal::ENDS)?
    };
    let names: Vec<&str> = setups.iter().map(|s| s.instance.as_str()).collect();
    eprintln!(
        "ifxtop serve: metrics of {} at {}://{addr}{}{}{}",
        names.join(", "),
        if config.tls.is_some() {
            "https"
        } else {
            "http"
        },
        args.telemetry_path,
        if config.auth.is_some() {
            " (basic auth)"
        } else {
            ""
        },
        if addr.ip().is_loopback() || config.protects() {
            ""
        } else {
            " (not a loopback address, --web.insecure: anyone who reaches it reads them)"
        }
    );
    let web = http::Web {
        config,
        telemetry_path: args.telemetry_path.clone(),
        feeds: Arc::default(),
    };
    rt.block_on(async {
        let stop = async move {
            ends.recv().await;
        };
        serve(setups, listener, web, stop).await
    })
}

/// `--web.telemetry-path` must be a path a scraper can ask for as it is written: absolute, not
/// `/` (the landing page), and only the characters RFC 3986 allows in a path unencoded. A space,
/// `?` (a query), `#` (a fragment), `%`, a control character or anything a client would
/// percent-encode would leave the metrics at a path no request matches.
pub(crate) fn check_telemetry_path(path: &str) -> Result<(), Error> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "/-._~!$&'()*+,;=:@".contains(c);
    let why = if !path.starts_with('/') {
        Some("it must start with /".to_string())
    } else if path == "/" {
        Some("/ is the landing page".to_string())
    } else {
        path.chars().find(|c| !allowed(*c)).map(|c| {
            let what = match c {
                ' ' => "a space".to_string(),
                '?' => "'?' (it would start a query)".to_string(),
                '#' => "'#' (it would start a fragment)".to_string(),
                '%' => "'%' (percent-encoding)".to_string(),
                c if c.is_control() => format!("a control character (U+{:04X})", u32::from(c)),
                c => format!("{c:?}"),
            };
            format!("{what} is not allowed in it")
        })
    };
    match why {
        None => Ok(()),
        Some(why) => Err(Error::Usage(format!(
            "--web.telemetry-path {path:?}: {why}; give a path such as /metrics (letters, digits and -._~!$&'()*+,;=:@/)"
        ))),
    }
}

/// What the live screen's options mean nothing to serve: said, not ignored.
fn check_args(args: &LiveArgs) -> Result<(), Error> {
    let refuse = |what: &str, why: &str| Err(Error::Usage(format!("{what}: {why}")));
    if args.watch.replay.is_some() {
        return refuse(
            "--replay",
            "serve exports live instances or the demo (a recording: `ifxtop --replay`)",
        );
    }
    if args.watch.record.is_some() {
        return refuse(
            "--record",
            "serve does not record (`ifxtop --record` or `ifxtop snapshot --record` do)",
        );
    }
    if args.watch.extents.is_some() {
        return refuse(
            "--extents",
            "serve builds no extent map (no metric needs one)",
        );
    }
    Ok(())
}

/// The labels an instance's series carry: its server, and the host when it is watched over ssh
/// (a remote instance's name is `server@host`, a local one's the server alone).
pub(crate) fn labels_of(setup: &Setup) -> (Option<&str>, Option<&str>) {
    let server = setup.server.as_deref();
    let remote = setup.instance != crate::instance::setup::instance_name(server, None);
    let host = if remote {
        setup.settings.host.as_deref()
    } else {
        None
    };
    (server, host)
}

/// Serves the metrics of `setups` on `listener` until `stop` resolves; then stops every
/// instance's collectors (and so every command they run) and the HTTP thread.
pub(crate) async fn serve(
    setups: Vec<Setup>,
    listener: std::net::TcpListener,
    mut web: http::Web,
    stop: impl Future<Output = ()>,
) -> Result<(), Error> {
    let feed_off = feed::why_off(web.config.tls.is_some(), web.config.auth.is_some());
    let mut doors = Vec::new();
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut latest = Vec::with_capacity(setups.len());
    let mut tasks = Vec::with_capacity(setups.len());
    for setup in setups {
        let (server, host) = labels_of(&setup);
        let (tx, rx) = watch::channel(Arc::new(InstanceMetrics::waiting(server, host)));
        latest.push(rx);
        let log = match &setup.log {
            Some(p) => Some(DebugLog::open(p).map_err(|source| Error::File {
                path: p.display().to_string(),
                source,
            })?),
            None => None,
        };
        // The flight recorder (`--ring DIR`): a bad directory is said before serving.
        let ring = match &setup.ring {
            Some(cfg) => Some(crate::instance::ring::start(
                cfg,
                &setup.settings,
                setup.server.as_deref(),
                None,
            )?),
            None => None,
        };
        let (ring, ring_raw) = ring.unzip();
        // Sharing starts with the instance, so a socket that cannot be made stops serve now;
        // it taps the outputs on their way to the ring.
        let clock = SessionClock::start();
        let share = shared(&setup, clock, ring_raw.clone())?;
        // A mark from a viewer is a bookmark of the ring.
        crate::instance::ring::share_marks(
            share.as_ref().map(|(s, _)| s),
            ring.as_ref(),
            setup.settings.wall_start,
        );
        if let Some(p) = share.as_ref().and_then(|(s, _)| s.path()) {
            eprintln!(
                "ifxtop serve: sharing {} at {} (`ifxtop attach {}`); over HTTP: {}",
                setup.instance,
                p.display(),
                p.display(),
                match &feed_off {
                    None => format!(
                        "{}/{}",
                        crate::source::attach_http::FEED_PATH,
                        crate::files::name_of_instance(&setup.instance)
                    ),
                    Some(why) => format!("no ({why})"),
                }
            );
        }
        if let Some((s, _)) = &share {
            doors.push((setup.instance.clone(), s.door()));
        }
        tasks.push(tokio::spawn(watch_instance(
            setup,
            clock,
            share,
            tx,
            stop_rx.clone(),
            log,
            (ring, ring_raw),
        )));
    }
    web.feeds = Arc::new(feed::Feeds::new(doors, feed_off));
    let http = http::HttpServer::start(listener, latest, web)?;
    stop.await;
    let _ = stop_tx.send(true);
    for t in tasks {
        // Each stops its collectors and returns at once; a task that does not is dropped
        // with the runtime, which kills what it runs all the same.
        let _ = tokio::time::timeout(STOP_WAIT, t).await;
    }
    http.stop();
    Ok(())
}

/// One instance on the headless loop: its collectors feed its store; when the data settles
/// (and at most every half interval) the snapshot and the metrics are built and published for
/// the scrapes.
async fn watch_instance(
    setup: Setup,
    clock: SessionClock,
    shared: Option<Shared>,
    publish: watch::Sender<Arc<InstanceMetrics>>,
    mut stop: watch::Receiver<bool>,
    log: Option<DebugLog>,
    (ring, raw): RingTap,
) {
    let (server, host) = labels_of(&setup);
    let (raw, share) = match shared {
        Some((share, tx)) => (Some(tx), Some(share)),
        None => (raw, None),
    };
    let mut collection =
        Collection::start_with(setup.runner.clone(), setup.interval, raw, None, clock);
    let mut watched = Watched::new(Store::new(setup.settings.clone()), log);
    if let Some(r) = &ring {
        watched.keep_ring(r);
    }
    // The exporter reads only the latest counts by class: no session's row is kept.
    watched.activity = crate::model::activity::Activity::counts_only();
    watched.log(
        Duration::ZERO,
        &format!(
            "serve: {} ({:?}, ports {:?}, interval {}s)",
            setup.instance,
            setup.mode,
            setup.settings.ports,
            setup.interval.as_secs_f64()
        ),
    );
    let mut front = Exporter {
        server,
        host,
        share: share.as_ref(),
        counted: Counted::default(),
        publish: &publish,
    };
    let stopped = async move {
        let _ = stop.changed().await;
    };
    headless::run(
        &mut headless::Input::collectors(&mut collection),
        &mut watched,
        setup.interval,
        setup.server.as_deref(),
        stopped,
        &mut front,
    )
    .await;
    collection.stop();
    drop(share);
    watched.log(collection.clock.now(), "serve: stopped");
    drop(collection);
    drop(watched);
    if let Some(r) = ring {
        // Its collectors gone, the ring writes what it has and cuts the incidents still open.
        tokio::task::yield_now().await;
        let _ = tokio::task::spawn_blocking(move || r.finish()).await;
    }
}

/// A shared feed and where its outputs go.
/// The flight recorder of an instance (`--ring DIR`) and where its outputs go to reach it.
type RingTap = (
    Option<crate::collect::ring::Ring>,
    Option<std::sync::mpsc::SyncSender<crate::collect::sample::RawSample>>,
);

type Shared = (
    crate::instance::share::Share,
    std::sync::mpsc::SyncSender<crate::collect::sample::RawSample>,
);

/// The shared feed of `setup`, when `--share` asks for one.
fn shared(
    setup: &Setup,
    clock: SessionClock,
    tee: Option<std::sync::mpsc::SyncSender<crate::collect::sample::RawSample>>,
) -> Result<Option<Shared>, Error> {
    let Some(opts) = &setup.share else {
        return Ok(None);
    };
    let header = crate::instance::feed::header_of(setup);
    crate::instance::share::Share::start(opts.clone(), &setup.instance, &header, clock, tee)
        .map(Some)
}

/// `serve`'s front-end on the loop: each snapshot's findings tracked, its metrics built and
/// published.
struct Exporter<'a> {
    server: Option<&'a str>,
    /// The shared feed (`--share`): its viewers' asks are read with the next tick.
    share: Option<&'a crate::instance::share::Share>,
    host: Option<&'a str>,
    counted: Counted,
    publish: &'a watch::Sender<Arc<InstanceMetrics>>,
}

impl headless::Front for Exporter<'_> {
    fn built(
        &mut self,
        mut snap: snapshot::Snapshot,
        sampled: bool,
        watched: &mut Watched,
        collection: Option<&Collection>,
    ) -> headless::Flow {
        snap.track_findings(&mut watched.findings, watched.store.settings.wall_start);
        if sampled {
            if let Some(p) = watched.activity.latest() {
                self.counted.sampled(p);
                self.counted.statements(&snap.actives(), p.weight);
            }
        }
        // The statements of the sessions active on a slow client, and of the top CPU
        // sessions, ride with the active ones.
        if let Some(c) = collection {
            c.ask_statements(snapshot::statements_wanted(&snap));
            // What viewers of the shared feed drill into (bounded by the share): serve drills
            // into nothing of its own.
            if let Some(sids) = self.share.and_then(|s| s.focus_asked()) {
                // (The watch's value read apart: a borrow held while sending would deadlock.)
                let statements = c.focus.borrow().statements.clone();
                c.set_focus(crate::collect::Focus {
                    drilled: sids.into_iter().map(crate::ids::Sid).collect(),
                    statements,
                    ..Default::default()
                });
            }
        }
        let mut m = InstanceMetrics::build(
            self.server,
            self.host,
            &watched.store,
            &snap,
            &mut self.counted,
            std::time::Instant::now(),
        );
        if let Some(s) = self.share {
            let (viewers, sent, dropped) = s.door().counts();
            m = m.with_share(viewers, sent, dropped);
        }
        self.publish.send_replace(Arc::new(m));
        // The rows go back to the parts, as the screen's do: the next build writes over the
        // sessions' rows and keeps the sockets' unchanged ones instead of building, then
        // freeing, every row again (docs/measurements.md: the CPU and memory of it).
        watched.recycle(Arc::new(snap));
        headless::Flow::Go
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::sample::Update;
    use crate::instance::headless::Front;
    use crate::source::Source;

    /// The exporter hands each snapshot's rows back once its metrics are published: the next
    /// build writes over them instead of building (and freeing) every row anew each second.
    #[test]
    fn each_build_fills_the_room_of_the_snapshot_published() {
        let demo = crate::demo::DemoInstance::new(1).with_sessions(300);
        let settings = crate::store::StoreSettings {
            ports: vec![crate::demo::LISTENER_PORT],
            ..Default::default()
        };
        let mut watched = Watched::new(Store::new(settings), None);
        let (publish, latest) = watch::channel(Arc::new(InstanceMetrics::waiting(None, None)));
        let mut front = Exporter {
            server: None,
            host: None,
            share: None,
            counted: Counted::default(),
            publish: &publish,
        };
        for t in 100..105 {
            let t = Duration::from_secs(t);
            let updates = [
                Source::OnstatU,
                Source::OnstatGAth,
                Source::OnstatGNtt,
                Source::ProcNetTcp,
            ]
            .map(|source| Update::from_demo(&demo, source, t).expect("answers"));
            watched.apply(updates);
            let snap = watched.build(t, None, &[], None);
            assert!(snap.sessions.len() > 100, "{}", snap.sessions.len());
            let _ = front.built(snap, false, &mut watched, None);
        }
        let counts = watched.parts.counts();
        assert!(counts.built > 0, "nothing was built: {counts:?}");
        assert!(counts.rooms >= 4, "the rows' room was not kept: {counts:?}");
        assert!(
            latest.has_changed().expect("open"),
            "no metrics were published"
        );
    }
}
