//! What one watched instance runs with, decided once from the command line and the config
//! file: the mode and its runner (local, ssh, demo, replay), settings, recording, log; and the
//! names, ssh targets and cache keys of the instances the arguments and the config name.

use crate::cli::{LiveArgs, SshArgs};
use crate::collect::extents::{CacheSpot, ExtentSource};
use crate::error::Error;
use crate::instance::config::Config;
use crate::source::local::LocalRunner;
use crate::source::ssh::{SshRunner, SshTarget};
use crate::source::CommandRunner;
use crate::store::StoreSettings;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Where the data comes from, for the header and the log.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    Live,
    Demo { seed: u64 },
    Replay { file: String },
}

/// Describes what plays at a demo time (the demo's incident).
pub(crate) type NoteFn = fn(Duration) -> String;

/// Everything one instance needs, decided from the command line and the config.
pub struct Setup {
    /// The instance's name as the fleet screen, reports and metrics show it: the server, with
    /// `@host` for a remote one (`ol_prod@db01`).
    pub instance: String,
    pub mode: Mode,
    pub runner: Arc<dyn CommandRunner>,
    pub settings: StoreSettings,
    /// The interval of the 1 s sources (`--interval`, the config's `interval`, else 1 s).
    pub interval: Duration,
    pub server: Option<String>,
    pub extents: ExtentSource,
    pub record: Option<(PathBuf, u64)>,
    /// The demo's incident line: what plays at a demo time, and where the timeline started.
    pub note: Option<(NoteFn, Duration)>,
    /// `--replay FILE`: the recording, read up front (damage is listed, never fatal).
    pub replay: Option<Arc<crate::collect::record::Recording>>,
    /// `--log FILE`.
    pub log: Option<PathBuf>,
    /// `--ring DIR`: the flight recorder (`collect/ring.rs`).
    pub ring: Option<crate::collect::ring::RingConfig>,
    /// `--share`: the live feed for other viewers.
    pub share: Option<crate::instance::share::ShareOptions>,
    /// `--attach`: the feed joined, taken when the watch starts.
    pub follow: Option<std::sync::Mutex<Option<crate::collect::follow::Joined>>>,
}

/// One instance to watch, as the command line and the config name it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum InstanceSpec {
    Replay(PathBuf),
    /// The `index`-th simulated instance (`--demo-instances`).
    Demo {
        index: usize,
    },
    Live {
        server: Option<String>,
        ssh: Option<SshTarget>,
        /// Listener ports of this instance (a config table's own, else the command line's).
        ports: Vec<u16>,
    },
}

/// How far apart the timelines of several demo instances start, so a fleet shows different
/// incidents at once (the second is 300 s further on: in the lock chain at the start).
pub(crate) const DEMO_INSTANCE_OFFSET: u64 = 300;

/// The instances named by the arguments and the config: a recording; `--demo-instances` demo
/// instances; each server of `--server a,b` on each `--ssh` host (or this machine); else the
/// config's `[[instance]]` tables when the command line names no `--ssh` and no `--server` of
/// its own (one taken from `$INFORMIXSERVER` does not count); else `$INFORMIXSERVER` here.
pub(crate) fn instance_specs(args: &LiveArgs, config: &Config) -> Result<Vec<InstanceSpec>, Error> {
    if let Some(path) = &args.watch.replay {
        return Ok(vec![InstanceSpec::Replay(path.clone())]);
    }
    if args.watch.demo {
        if !(1..=MAX_INSTANCES).contains(&args.watch.demo_instances) {
            return Err(Error::Usage(format!(
                "--demo-instances {}: between 1 and {MAX_INSTANCES}",
                args.watch.demo_instances
            )));
        }
        let mut out: Vec<InstanceSpec> = (0..args.watch.demo_instances)
            .map(|index| InstanceSpec::Demo { index })
            .collect();
        // Beside the demo, hosts of --ssh too (a fleet that mixes them, as the tests use to
        // show one host failing while the others run).
        if !args.watch.ssh.ssh.is_empty() {
            out.extend(live_specs(args, config)?);
        }
        return check_count(out);
    }
    let from_env = std::env::var("INFORMIXSERVER").ok();
    let server_given = args.watch.server.is_some() && args.watch.server != from_env;
    if args.watch.ssh.ssh.is_empty() && !server_given && !config.instance.is_empty() {
        let mut out = Vec::new();
        for (i, t) in config.instance.iter().enumerate() {
            let server = nonempty_server(&t.server)
                .map_err(|e| Error::Usage(format!("config [[instance]] {}: {e}", i + 1)))?;
            let ssh = match &t.ssh {
                Some(s) => Some(
                    SshTarget::parse(s)
                        .map_err(|e| Error::Usage(format!("config [[instance]] {}: {e}", i + 1)))?,
                ),
                None => None,
            };
            out.push(InstanceSpec::Live {
                server: Some(server),
                ssh,
                ports: t
                    .ports
                    .clone()
                    .unwrap_or_else(|| listener_ports(args, config)),
            });
        }
        return check_count(out);
    }
    check_count(live_specs(args, config)?)
}

/// The listener ports of `--port`, else of the config's `ports` (empty: looked up in sqlhosts).
fn listener_ports(args: &LiveArgs, config: &Config) -> Vec<u16> {
    if args.watch.ports.is_empty() {
        config.ports.clone().unwrap_or_default()
    } else {
        args.watch.ports.clone()
    }
}

/// Each server of `--server a,b` on each `--ssh` host (or this machine).
fn live_specs(args: &LiveArgs, config: &Config) -> Result<Vec<InstanceSpec>, Error> {
    let servers: Vec<Option<String>> = match &args.watch.server {
        None => vec![None],
        Some(list) => list
            .split(',')
            .map(|s| nonempty_server(s).map(Some))
            .collect::<Result<_, _>>()
            .map_err(|e| Error::Usage(format!("--server '{list}': {e}")))?,
    };
    let hosts: Vec<Option<SshTarget>> = if args.watch.ssh.ssh.is_empty() {
        vec![None]
    } else {
        args.watch.ssh.ssh.iter().cloned().map(Some).collect()
    };
    let mut out = Vec::new();
    for ssh in &hosts {
        for server in &servers {
            out.push(InstanceSpec::Live {
                server: server.clone(),
                ssh: ssh.clone(),
                ports: listener_ports(args, config),
            });
        }
    }
    Ok(out)
}

/// At most this many instances in one ifxtop (each runs its own collectors).
pub(crate) const MAX_INSTANCES: usize = 32;

fn check_count(specs: Vec<InstanceSpec>) -> Result<Vec<InstanceSpec>, Error> {
    if specs.len() > MAX_INSTANCES {
        return Err(Error::Usage(format!(
            "{} instances: at most {MAX_INSTANCES}",
            specs.len()
        )));
    }
    let mut seen = std::collections::HashSet::new();
    for s in &specs {
        if !seen.insert(s) {
            return Err(Error::Usage(format!("{s:?} is named twice")));
        }
    }
    Ok(specs)
}

impl std::hash::Hash for InstanceSpec {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        match self {
            InstanceSpec::Replay(p) => p.hash(h),
            InstanceSpec::Demo { index } => index.hash(h),
            InstanceSpec::Live { server, ssh, .. } => {
                server.hash(h);
                ssh.as_ref().map(|t| (&t.user, &t.host, t.port)).hash(h);
            }
        }
    }
}

impl Eq for InstanceSpec {}

/// A server name: not empty, no control characters. Anything else is passed on as it is (to
/// onstat as INFORMIXSERVER, quoted word by word over ssh): whether it names a server is the
/// server's to say.
fn nonempty_server(s: &str) -> Result<String, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("an empty server name".into());
    }
    if s.chars().any(char::is_control) {
        return Err(format!(
            "'{}' holds control characters",
            crate::format::printable(s)
        ));
    }
    Ok(s.to_string())
}

/// What every instance of one ifxtop shares: decided once from the arguments and the config.
pub(crate) struct Shared {
    /// Now, in this machine's time zone, read while the process has one thread (see
    /// `now_in_local_offset`).
    pub(crate) started: time::OffsetDateTime,
    config: Config,
    interval: Duration,
    /// The base page size and the windows of the command line or the config.
    pub(crate) settings: StoreSettings,
    /// `--max-output-mb`, else the config's `max-output-mb`, else the default.
    pub(crate) max_output_mb: u64,
    /// `--port`, else the config's `ports`.
    pub(crate) ports: Vec<u16>,
}

/// The config file as a message names it.
fn config_name(given: Option<&std::path::Path>) -> String {
    match given {
        Some(p) => p.display().to_string(),
        None => crate::instance::config::default_path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "the config file".to_string()),
    }
}

/// Reads the config and checks every value of it and of the arguments, so a bad value is
/// reported before anything runs (and also without a terminal).
/// What it returns is what `setups` builds from: the config is read once.
pub(crate) fn checked(args: &LiveArgs) -> Result<Shared, Error> {
    shared(args)
}

impl Shared {
    /// The config file as read (the screen takes its key bindings from it).
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }
}

/// What every instance shares, each value of the arguments and the config checked; nothing
/// started yet.
fn shared(args: &LiveArgs) -> Result<Shared, Error> {
    let started = now_in_local_offset();
    let config = Config::load(args.watch.config.as_deref())?;
    let interval = args.interval.or(config.interval).unwrap_or(1.0);
    if !(0.1..=3600.0).contains(&interval) {
        // Name where the value came from: the user looks there.
        let from = if args.interval.is_some() {
            "--interval".to_string()
        } else {
            format!("interval in {}", config_name(args.watch.config.as_deref()))
        };
        return Err(Error::Usage(format!(
            "{from} = {interval}: between 0.1 and 3600 seconds"
        )));
    }
    // Seconds on the command line and in the config; a Duration from here on.
    let interval = Duration::from_secs_f64(interval);
    let base_page_kb = args.watch.base_page_kb.or(config.base_page_kb).unwrap_or(2);
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
    let max_output_mb = args
        .watch
        .max_output_mb
        .or(config.max_output_mb)
        .unwrap_or(crate::source::DEFAULT_MAX_OUTPUT_MB);
    if !(1..=65536).contains(&max_output_mb) {
        return Err(Error::Usage(format!(
            "max-output-mb = {max_output_mb}: between 1 and 65536 (MB)"
        )));
    }
    if let Some(file) = &args.watch.extents {
        check_extents_file(file)?;
    }
    let ports: Vec<u16> = if !args.watch.ports.is_empty() {
        args.watch.ports.clone()
    } else if let Some(p) = &config.ports {
        if p.contains(&0) {
            return Err(Error::Usage(format!(
                "ports in {}: port 0 is no listener port (1-65535)",
                config_name(args.watch.config.as_deref())
            )));
        }
        p.clone()
    } else {
        Vec::new()
    };
    Ok(Shared {
        started,
        config,
        interval,
        settings,
        max_output_mb,
        ports,
    })
}

/// The setups of every instance the arguments and the config name (one for most runs; several
/// get the fleet screen). With several, an ssh host that cannot be reached is not an error
/// here: its instance shows as failing and is tried again, while the others run.
/// `checked` is what `checked(args)` returned.
pub(crate) fn setups(args: &LiveArgs, checked: Shared) -> Result<Vec<Setup>, Error> {
    setups_with(args, checked, true)
}

/// `setups` for `ifxtop serve`, which keeps running unattended: one ssh host that cannot be
/// reached at start is not an error either (its instance reports it and reconnects).
pub(crate) fn setups_unattended(args: &LiveArgs) -> Result<Vec<Setup>, Error> {
    setups_with(args, shared(args)?, false)
}

/// The setup of the one instance `args` name (`ifxtop snapshot` sets its instances up one by
/// one, side by side): a remote one is connected here, once, so a host that cannot be reached
/// is that instance's error before anything runs.
pub(crate) fn setup_one(args: &LiveArgs, shared: &Shared) -> Result<Setup, Error> {
    let mut specs = instance_specs(args, &shared.config)?;
    if specs.len() != 1 {
        return Err(Error::Usage(
            "--ssh: one host here (a snapshot of several instances takes them one by one)".into(),
        ));
    }
    setup_of(specs.remove(0), args, shared, false)
}

/// With `connect_one`, a single ssh instance is connected before anything starts.
fn setups_with(args: &LiveArgs, shared: Shared, connect_one: bool) -> Result<Vec<Setup>, Error> {
    if let Some(target) = &args.share.attach {
        return Ok(vec![attach_setup(args, target, shared.settings.clone())?]);
    }
    let specs = instance_specs(args, &shared.config)?;
    if specs.len() > 1 && args.share.share.is_some() {
        return Err(Error::Usage(format!(
            "--share: shares one instance, and {} are named",
            specs.len()
        )));
    }
    if specs.len() > 1 && args.watch.record.is_some() {
        return Err(Error::Usage(format!(
            "--record: records one instance, and {} are named",
            specs.len()
        )));
    }
    if specs.len() == 1 {
        return specs
            .into_iter()
            .map(|spec| setup_of(spec, args, &shared, !connect_one))
            .collect();
    }
    // Several: set up side by side, so hosts that hang delay the start once, not once each.
    let shared = &shared;
    let setups: Vec<Setup> = std::thread::scope(|sc| {
        let handles: Vec<_> = specs
            .into_iter()
            .map(|spec| sc.spawn(move || setup_of(spec, args, shared, true)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Other("instance setup panicked".into())))
            })
            .collect::<Result<Vec<Setup>, Error>>()
    })?;
    // Several instances: a ring each, in a directory of its own in the one named.
    setups
        .into_iter()
        .map(|mut s| {
            if let Some(r) = &mut s.ring {
                crate::instance::ring::per_instance(r, &s.instance)?;
            }
            Ok(s)
        })
        .collect()
}

fn setup_of(
    spec: InstanceSpec,
    args: &LiveArgs,
    shared: &Shared,
    several: bool,
) -> Result<Setup, Error> {
    let mut settings = shared.settings.clone();
    let ports = shared.ports.clone();
    let mut replay = None;
    type Chosen = (
        Mode,
        Arc<dyn CommandRunner>,
        Option<String>,
        Option<(NoteFn, Duration)>,
    );
    let mut remote = false;
    let (mode, runner, server, note): Chosen = match &spec {
        InstanceSpec::Replay(path) => {
            let rec = if path.is_dir() {
                crate::instance::ring::replay_window(path, &args.ring, true)?
            } else {
                crate::collect::record::read_replayable(path)?
            };
            let header = rec.header.clone();
            settings.ports = if ports.is_empty() {
                header.as_ref().map(|h| h.ports.clone()).unwrap_or_default()
            } else {
                ports
            };
            if args.watch.base_page_kb.is_none() {
                if let Some(kb) = header.as_ref().and_then(|h| h.base_page_kb) {
                    settings.base_page_kb = kb;
                }
            }
            settings.wall_start = rec.started();
            settings.host = header.as_ref().and_then(|h| h.host.clone());
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
        }
        InstanceSpec::Demo { index } => {
            let index = *index as u64;
            // A time of day is on the demo's clock (second 0 is `demo::EPOCH`).
            let at = args
                .demo_at
                .into_timeline(Some(crate::demo::EPOCH), None)
                .map_err(|e| Error::Usage(format!("--demo-at {e}")))?
                .as_secs()
                + index * DEMO_INSTANCE_OFFSET;
            let seed = args.watch.seed + index;
            let demo = crate::demo::DemoRunner::wall(seed, args.watch.demo_sessions)
                .starting_at(Duration::from_secs(at));
            settings.ports = if ports.is_empty() {
                vec![crate::demo::LISTENER_PORT]
            } else {
                ports
            };
            settings.wall_start = Some(crate::demo::EPOCH + Duration::from_secs(at));
            settings.host = Some(demo_host(index));
            (
                Mode::Demo { seed },
                Arc::new(demo),
                Some(demo_server(index)),
                Some((
                    crate::demo::describe_phase as NoteFn,
                    Duration::from_secs(at),
                )),
            )
        }
        InstanceSpec::Live { server, ssh, ports } => {
            settings.wall_start = Some(shared.started);
            let live = match ssh {
                None => local_target(server.clone(), ports, shared.max_output_mb),
                Some(target) => {
                    remote = true;
                    remote_target(
                        target,
                        server.clone(),
                        ports,
                        &args.watch.ssh,
                        args.watch.extents.clone(),
                        !several,
                        shared.max_output_mb,
                    )?
                }
            };
            settings.ports = live.ports;
            settings.host = live.host;
            (Mode::Live, live.runner, server.clone(), None)
        }
    };
    // Live mode only: the demo and a replay never write to the user's cache. A remote
    // instance's map is kept apart from a local one of the same name.
    let cache = match mode {
        Mode::Live => {
            let remote = settings.host.as_deref().filter(|_| remote);
            cache_spot(cache_key(server.as_deref(), remote).as_deref())
        }
        _ => None,
    };
    let instance = instance_name(
        server.as_deref(),
        settings.host.as_deref().filter(|_| remote),
    );
    settings.instance = Some(instance.clone());
    let ring = match mode {
        Mode::Replay { .. } => None,
        _ => crate::instance::ring::config_for(args, shared.config())?,
    };
    Ok(Setup {
        instance,
        mode,
        runner,
        settings,
        interval: shared.interval,
        server,
        extents: ExtentSource {
            file: args.watch.extents.clone(),
            cache,
        },
        record: args.watch.record.clone().map(|p| {
            // A directory gets a timestamped file name of its own.
            let file = if p.is_dir() {
                crate::collect::record::default_file_name(&p)
            } else {
                p
            };
            (file, args.record_max)
        }),
        ring,
        note,
        share: crate::instance::share::options(&args.share, replay.is_some())?,
        follow: None,
        replay,
        log: args.log.clone(),
    })
}

/// The `index`-th demo instance's server name: `ol_demo`, then `ol_demo2`, `ol_demo3`...
pub(crate) fn demo_server(index: u64) -> String {
    if index == 0 {
        "ol_demo".to_string()
    } else {
        format!("ol_demo{}", index + 1)
    }
}

/// The `index`-th demo instance's host: `db01-demo`, `db02-demo`...
pub(crate) fn demo_host(index: u64) -> String {
    if index == 0 {
        crate::demo::HOST.to_string()
    } else {
        format!("db{:02}-demo", index + 1)
    }
}

/// `ol_prod`, or `ol_prod@db01` for a remote instance; `-` when no server is named.
pub(crate) fn instance_name(server: Option<&str>, remote_host: Option<&str>) -> String {
    let server = server.unwrap_or("-");
    match remote_host {
        Some(h) => format!("{server}@{h}"),
        None => server.to_string(),
    }
}

/// A live instance: what runs its commands, the host it is on, its listener ports.
pub(crate) struct LiveTarget {
    pub(crate) runner: Arc<dyn CommandRunner>,
    /// The host reports and recordings name: this machine, or the remote one.
    pub(crate) host: Option<String>,
    /// `ports` when given, else from the sqlhosts file (the remote one over ssh).
    pub(crate) ports: Vec<u16>,
}

/// The live instance `server` on this machine.
fn local_target(server: Option<String>, ports: &[u16], max_output_mb: u64) -> LiveTarget {
    LiveTarget {
        ports: if ports.is_empty() {
            sqlhosts_ports(server.as_deref())
        } else {
            ports.to_vec()
        },
        runner: Arc::new(LocalRunner::new(server).with_max_output_mb(max_output_mb)),
        host: crate::source::local::hostname(),
    }
}

/// The live instance `server` on `target` through ssh. With `connect`, connected here, once:
/// a host that cannot be reached is an error before anything starts. Without (one of several
/// instances), a failed connection leaves the instance to its collectors, which report it and
/// reconnect with backoff.
fn remote_target(
    target: &SshTarget,
    server: Option<String>,
    ports: &[u16],
    ssh: &SshArgs,
    extents: Option<PathBuf>,
    connect: bool,
    max_output_mb: u64,
) -> Result<LiveTarget, Error> {
    let runner = Arc::new(
        ssh_runner(target, ssh, server.clone(), extents)?.with_max_output_mb(max_output_mb),
    );
    let ports_of = if ports.is_empty() {
        server.as_deref()
    } else {
        None
    };
    let found = if connect {
        Some(
            runner
                .connect_blocking(ports_of)
                .map_err(|e| Error::Usage(format!("--ssh {target}: {e}")))?,
        )
    } else {
        connect_within(&runner, ports_of, FLEET_CONNECT_WAIT)
    };
    let (host, remote_ports) = found.unwrap_or_else(|| (target.host.clone(), Vec::new()));
    Ok(LiveTarget {
        runner,
        host: Some(host),
        ports: if ports.is_empty() {
            remote_ports
        } else {
            ports.to_vec()
        },
    })
}

/// How long one of several ssh instances may take to connect at start before the others go on
/// without waiting (it is then connected by its collectors, with backoff).
const FLEET_CONNECT_WAIT: Duration = Duration::from_secs(5);

/// Connects on a thread of its own and waits at most `wait`: a host that hangs delays the start
/// by `wait`, never longer (the attempt goes on in the background until ssh gives up).
fn connect_within(
    runner: &Arc<SshRunner>,
    ports_of: Option<&str>,
    wait: Duration,
) -> Option<(String, Vec<u16>)> {
    let (tx, rx) = std::sync::mpsc::channel();
    let runner = runner.clone();
    let ports_of = ports_of.map(str::to_string);
    std::thread::spawn(move || {
        let _ = tx.send(runner.connect_blocking(ports_of.as_deref()));
    });
    rx.recv_timeout(wait).ok()?.ok()
}

/// The runner of `--ssh`: the client config and remote PATH of the arguments; `--extents FILE`
/// stays a file on this machine.
pub(crate) fn ssh_runner(
    target: &SshTarget,
    args: &SshArgs,
    server: Option<String>,
    extents: Option<PathBuf>,
) -> Result<SshRunner, Error> {
    let mut runner = SshRunner::new(target.clone(), server)
        .map_err(|e| Error::Other(format!("ssh control directory: {e}")))?
        .with_config(args.ssh_config.clone())
        .with_remote_path(args.ssh_path.clone())
        .with_remote_env(args.ssh_env.clone());
    if let Some(file) = extents {
        runner = runner.with_local_file(file);
    }
    Ok(runner)
}

/// `--extents FILE` must be a regular file: a FIFO (whose read would never end), a device
/// (`/dev/zero` never ends either) or a directory is refused before anything starts.
pub(crate) fn check_extents_file(file: &std::path::Path) -> Result<(), Error> {
    crate::files::check_regular(file)
        .map_err(|e| Error::Usage(format!("--extents {}: {e}", file.display())))
}

/// Where a live instance's extent map is cached (the user's cache directory, per server).
pub(crate) fn cache_spot(server: Option<&str>) -> Option<CacheSpot> {
    Some(CacheSpot {
        dir: crate::extents::cache::default_dir()?,
        server: server?.to_string(),
    })
}

/// The extent cache's key: the server, and the host for a remote one (`ol_prod@db01`).
pub(crate) fn cache_key(server: Option<&str>, remote_host: Option<&str>) -> Option<String> {
    let server = server?;
    Some(match remote_host {
        Some(host) => format!("{server}@{host}"),
        None => server.to_string(),
    })
}

/// Now, in this machine's time zone (the server's, when ifxtop runs on it). The offset is read
/// while the process has one thread (`time` refuses it later, for soundness); UTC when unknown.
pub fn now_in_local_offset() -> time::OffsetDateTime {
    let offset = time::UtcOffset::current_local_offset().unwrap_or(time::UtcOffset::UTC);
    time::OffsetDateTime::now_utc().to_offset(offset)
}

/// Listener ports of INFORMIXSERVER from `$INFORMIXSQLHOSTS` or `$INFORMIXDIR/etc/sqlhosts`.
pub(crate) fn sqlhosts_ports(server: Option<&str>) -> Vec<u16> {
    let Some(server) = server else {
        return Vec::new();
    };
    let path = std::env::var_os("INFORMIXSQLHOSTS")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("INFORMIXDIR").map(|d| PathBuf::from(d).join("etc/sqlhosts")));
    // A regular file only, at most a megabyte (a FIFO named by the variable would hold the
    // start forever).
    let Some(text) = path.and_then(|p| crate::files::read_text_capped(&p, crate::files::MB).ok())
    else {
        return Vec::new();
    };
    let services = std::fs::read_to_string("/etc/services")
        .map(|t| crate::source::sqlhosts::parse_services(&t))
        .unwrap_or_default();
    let entries = crate::source::sqlhosts::parse_sqlhosts(&text);
    crate::source::sqlhosts::listener_ports(&entries, &[server], &services)
}

/// The setup of a viewer of the feed at `target`.
fn attach_setup(
    args: &LiveArgs,
    target: &crate::source::attach::AttachTarget,
    mut settings: StoreSettings,
) -> Result<Setup, Error> {
    let joined = crate::instance::share::attach::join(args, target)?;
    let h = &joined.header;
    settings.ports = h.ports.clone();
    if let Some(kb) = h.base_page_kb {
        settings.base_page_kb = kb;
    }
    settings.wall_start = h.started_at();
    settings.host = h.host.clone();
    let server = h.server.clone();
    let instance = instance_name(server.as_deref(), h.host.as_deref());
    settings.instance = Some(instance.clone());
    let interval = args
        .interval
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero())
        .unwrap_or(Duration::from_secs(1));
    Ok(Setup {
        instance,
        mode: Mode::Live,
        // Nothing runs for a viewer: the runner is never asked.
        runner: Arc::new(LocalRunner::new(None)),
        settings,
        interval,
        server,
        extents: Default::default(),
        record: args.watch.record.clone().map(|p| (p, args.record_max)),
        note: None,
        replay: None,
        log: args.log.clone(),
        ring: None,
        share: None,
        follow: Some(std::sync::Mutex::new(Some(joined))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn live(argv: &[&str]) -> LiveArgs {
        let mut all = vec!["ifxtop"];
        all.extend(argv);
        crate::cli::Cli::try_parse_from(all)
            .expect("arguments")
            .live
    }

    fn specs(argv: &[&str], config: &str) -> Result<Vec<InstanceSpec>, Error> {
        let config = Config::parse(config).expect("config");
        instance_specs(&live(argv), &config)
    }

    fn host(h: &str) -> Option<SshTarget> {
        Some(SshTarget::parse(h).expect("target"))
    }

    #[test]
    fn each_server_on_each_host() {
        let got = specs(
            &[
                "--server",
                "ol_a,ol_b",
                "--ssh",
                "db01",
                "--ssh",
                "informix@db02:2222",
            ],
            "",
        )
        .expect("specs");
        let want: Vec<(Option<&str>, Option<SshTarget>)> = vec![
            (Some("ol_a"), host("db01")),
            (Some("ol_b"), host("db01")),
            (Some("ol_a"), host("informix@db02:2222")),
            (Some("ol_b"), host("informix@db02:2222")),
        ];
        assert_eq!(got.len(), 4);
        for (g, (server, ssh)) in got.iter().zip(want) {
            let InstanceSpec::Live {
                server: s, ssh: h, ..
            } = g
            else {
                panic!("{g:?}");
            };
            assert_eq!(s.as_deref(), server);
            assert_eq!(h, &ssh);
        }
    }

    #[test]
    fn demo_instances_and_hosts_beside_them() {
        let got = specs(&["--demo", "--demo-instances", "2"], "").expect("specs");
        assert_eq!(
            got,
            vec![
                InstanceSpec::Demo { index: 0 },
                InstanceSpec::Demo { index: 1 }
            ]
        );
        let got = specs(
            &[
                "--demo",
                "--demo-instances",
                "2",
                "--ssh",
                "db09",
                "--server",
                "ol_x",
            ],
            "",
        )
        .expect("specs");
        assert_eq!(got.len(), 3);
        assert!(matches!(&got[2], InstanceSpec::Live { ssh, .. } if ssh == &host("db09")));
        assert!(specs(&["--demo", "--demo-instances", "0"], "").is_err());
        assert!(specs(&["--demo", "--demo-instances", "33"], "").is_err());
    }

    #[test]
    fn config_instances_when_the_command_line_names_none() {
        let config = "[[instance]]\nserver = \"ol_a\"\n\n[[instance]]\nserver = \"ol_b\"\nssh = \"informix@db02\"\nports = [9090]\n";
        let got = specs(&["--port", "9088"], config).expect("specs");
        assert_eq!(
            got,
            vec![
                InstanceSpec::Live {
                    server: Some("ol_a".into()),
                    ssh: None,
                    ports: vec![9088]
                },
                InstanceSpec::Live {
                    server: Some("ol_b".into()),
                    ssh: host("informix@db02"),
                    ports: vec![9090]
                },
            ]
        );
        // The command line's own server wins over the tables.
        if std::env::var_os("INFORMIXSERVER").is_none() {
            let got = specs(&["--server", "ol_c"], config).expect("specs");
            assert_eq!(got.len(), 1);
        }
        assert!(Config::parse("[[instance]]\nserver = \"a\"\nhost = \"x\"\n").is_err());
        let bad = "[[instance]]\nserver = \"ol_a\"\nssh = \"\"\n";
        assert!(specs(&[], bad).is_err());
    }

    #[test]
    fn empty_blank_and_repeated_servers_are_refused() {
        // An empty one is refused by the argument parser itself.
        assert!(crate::cli::Cli::try_parse_from(["ifxtop", "--server", ""]).is_err());
        for list in ["ol_a,", ",ol_a", " ", "ol_a,\u{1b}x"] {
            let e = specs(&["--server", list], "").expect_err(list);
            assert!(e.to_string().contains("--server"), "{e}");
        }
        let e = specs(&["--server", "ol_a,ol_a"], "").expect_err("twice");
        assert!(e.to_string().contains("twice"), "{e}");
    }

    #[test]
    fn names_say_where() {
        assert_eq!(instance_name(Some("ol_a"), None), "ol_a");
        assert_eq!(instance_name(Some("ol_a"), Some("db01")), "ol_a@db01");
        assert_eq!(instance_name(None, None), "-");
        assert_eq!(demo_server(0), "ol_demo");
        assert_eq!(demo_server(1), "ol_demo2");
        assert_eq!(demo_host(0), "db01-demo");
        assert_eq!(demo_host(2), "db03-demo");
    }
}
