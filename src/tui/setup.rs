//! What the live screen runs with, decided once from the command line and the config file:
//! the mode and its runner (local, demo, replay), settings, keys, theme, recording, log.

use crate::cli::{LiveArgs, SshArgs};
use crate::collect::extents::{CacheSpot, ExtentSource};
use crate::error::Error;
use crate::source::local::LocalRunner;
use crate::source::ssh::{SshRunner, SshTarget};
use crate::source::CommandRunner;
use crate::store::StoreSettings;
use crate::tui::app::{Mode, NoteFn};
use crate::tui::config::Config;
use crate::tui::keymap::Keymap;
use crate::tui::theme::Theme;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Everything the loop needs, decided from the command line and the config.
pub struct Setup {
    pub mode: Mode,
    pub runner: Arc<dyn CommandRunner>,
    pub settings: StoreSettings,
    pub interval: f64,
    pub server: Option<String>,
    pub extents: ExtentSource,
    pub keymap: Keymap,
    pub theme: Theme,
    pub record: Option<(PathBuf, u64)>,
    /// The demo's incident line: what plays at a demo time, and where the timeline started.
    pub note: Option<(NoteFn, Duration)>,
    /// `--replay FILE`: the recording, read up front (damage is listed, never fatal).
    pub replay: Option<Arc<crate::collect::record::Recording>>,
    /// `--log FILE`.
    pub log: Option<PathBuf>,
}

/// The config file as a message names it.
fn config_name(given: Option<&std::path::Path>) -> String {
    match given {
        Some(p) => p.display().to_string(),
        None => crate::tui::config::default_path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "the config file".to_string()),
    }
}

/// What the arguments and the config file ask for, each value checked; nothing started yet.
pub(crate) struct Checked {
    keymap: Keymap,
    interval: f64,
    settings: StoreSettings,
    max_output_mb: u64,
    ports: Vec<u16>,
}

/// Reads the config and checks every value of it and of the arguments, so a bad value is
/// reported before anything runs (and also without a terminal).
pub(crate) fn checked(args: &LiveArgs) -> Result<Checked, Error> {
    let config = Config::load(args.config.as_deref())?;
    let keymap = Keymap::with_overrides(&config.keys)
        .map_err(|e| Error::Usage(format!("config [keys]: {e}")))?;
    let interval = args.interval.or(config.interval).unwrap_or(1.0);
    if !(0.1..=3600.0).contains(&interval) {
        // Name where the value came from: the user looks there.
        let from = if args.interval.is_some() {
            "--interval".to_string()
        } else {
            format!("interval in {}", config_name(args.config.as_deref()))
        };
        return Err(Error::Usage(format!(
            "{from} = {interval}: between 0.1 and 3600 seconds"
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
    let max_output_mb = args
        .max_output_mb
        .or(config.max_output_mb)
        .unwrap_or(crate::source::DEFAULT_MAX_OUTPUT_MB);
    if !(1..=65536).contains(&max_output_mb) {
        return Err(Error::Usage(format!(
            "max-output-mb = {max_output_mb}: between 1 and 65536 (MB)"
        )));
    }
    if let Some(file) = &args.extents {
        check_extents_file(file)?;
    }
    let ports: Vec<u16> = if !args.ports.is_empty() {
        args.ports.clone()
    } else if let Some(p) = &config.ports {
        if p.contains(&0) {
            return Err(Error::Usage(format!(
                "ports in {}: port 0 is no listener port (1-65535)",
                config_name(args.config.as_deref())
            )));
        }
        p.clone()
    } else {
        Vec::new()
    };
    Ok(Checked {
        keymap,
        interval,
        settings,
        max_output_mb,
        ports,
    })
}

/// Builds the setup of `ifxtop [--demo]` from its arguments.
pub(crate) fn setup(args: &LiveArgs) -> Result<Setup, Error> {
    let Checked {
        keymap,
        interval,
        mut settings,
        max_output_mb,
        ports,
    } = checked(args)?;
    let mut replay = None;
    type Chosen = (
        Mode,
        Arc<dyn CommandRunner>,
        Option<String>,
        Option<(NoteFn, Duration)>,
    );
    let (mode, runner, server, note): Chosen = if let Some(path) = &args.replay {
        let rec = crate::collect::record::read_recording(path)?;
        if rec.samples.is_empty() {
            // The first few problems and a count, not every line of a garbage file.
            return Err(Error::Usage(format!(
                "{}: nothing to replay: {}",
                path.display(),
                rec.problems_line()
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
    } else if args.demo {
        let demo = crate::demo::DemoRunner::wall(args.seed, args.demo_sessions)
            .starting_at(Duration::from_secs(args.demo_at));
        settings.ports = if ports.is_empty() {
            vec![crate::demo::LISTENER_PORT]
        } else {
            ports
        };
        settings.wall_start = Some(crate::demo::EPOCH + Duration::from_secs(args.demo_at));
        settings.host = Some(crate::demo::HOST.to_string());
        (
            Mode::Demo { seed: args.seed },
            Arc::new(demo),
            Some("ol_demo".to_string()),
            Some((
                crate::demo::describe_phase as NoteFn,
                Duration::from_secs(args.demo_at),
            )),
        )
    } else {
        let server = args.server.clone();
        // Read while the process has one thread (see `now_in_local_offset`).
        settings.wall_start = Some(now_in_local_offset());
        let live = live_target(
            server.clone(),
            &ports,
            &args.ssh,
            args.extents.clone(),
            max_output_mb,
        )?;
        settings.ports = live.ports;
        settings.host = live.host;
        (Mode::Live, live.runner, server, None)
    };
    // Live mode only: the demo and a replay never write to the user's cache. A remote
    // instance's map is kept apart from a local one of the same name.
    let cache = match mode {
        Mode::Live => {
            let remote = args.ssh.ssh.as_ref().and(settings.host.as_deref());
            cache_spot(cache_key(server.as_deref(), remote).as_deref())
        }
        _ => None,
    };
    Ok(Setup {
        mode,
        runner,
        settings,
        interval,
        server,
        extents: ExtentSource {
            file: args.extents.clone(),
            cache,
        },
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

/// A live instance: what runs its commands, the host it is on, its listener ports.
pub(crate) struct LiveTarget {
    pub(crate) runner: Arc<dyn CommandRunner>,
    /// The host reports and recordings name: this machine, or the remote one.
    pub(crate) host: Option<String>,
    /// `ports` when given, else from the sqlhosts file (the remote one over ssh).
    pub(crate) ports: Vec<u16>,
}

/// The live instance `server`, local or through `--ssh` (then connected here, once: a host
/// that cannot be reached is an error before anything starts).
pub(crate) fn live_target(
    server: Option<String>,
    ports: &[u16],
    ssh: &SshArgs,
    extents: Option<PathBuf>,
    max_output_mb: u64,
) -> Result<LiveTarget, Error> {
    let Some(target) = &ssh.ssh else {
        return Ok(LiveTarget {
            ports: if ports.is_empty() {
                sqlhosts_ports(server.as_deref())
            } else {
                ports.to_vec()
            },
            runner: Arc::new(LocalRunner::new(server).with_max_output_mb(max_output_mb)),
            host: crate::source::local::hostname(),
        });
    };
    let runner =
        ssh_runner(target, ssh, server.clone(), extents)?.with_max_output_mb(max_output_mb);
    let ports_of = if ports.is_empty() {
        server.as_deref()
    } else {
        None
    };
    let (host, remote_ports) = runner
        .connect_blocking(ports_of)
        .map_err(|e| Error::Usage(format!("--ssh {target}: {e}")))?;
    Ok(LiveTarget {
        runner: Arc::new(runner),
        host: Some(host),
        ports: if ports.is_empty() {
            remote_ports
        } else {
            ports.to_vec()
        },
    })
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
    let Some(text) = path.and_then(|p| std::fs::read_to_string(p).ok()) else {
        return Vec::new();
    };
    let services = std::fs::read_to_string("/etc/services")
        .map(|t| crate::source::sqlhosts::parse_services(&t))
        .unwrap_or_default();
    let entries = crate::source::sqlhosts::parse_sqlhosts(&text);
    crate::source::sqlhosts::listener_ports(&entries, &[server], &services)
}
