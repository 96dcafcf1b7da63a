//! Command line: the live inspector's options and the `parse`, `resolve`, `snapshot` commands.

use crate::format::When;
use crate::source::ssh::SshTarget;
use crate::source::Kind;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "ifxtop",
    version,
    about = "A top-like live inspector for IBM/HCL Informix servers",
    long_about = "Watches onstat -u, -X, -g con, the sockets and NUMA memory of an Informix \
                  instance and shows who waits, on what, and why. `ifxtop --demo` runs a \
                  simulated instance that needs nothing but this binary.",
    after_help = "Inside ifxtop: ? or F1 shows every key, q quits. \
                  `ifxtop snapshot` prints the same panes once, without a terminal."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub live: LiveArgs,
}

/// Options of the live inspector (no subcommand) and of `serve`: what to watch, and how the
/// watch runs (the interval, the demo's start, the recording's cap, the diary).
#[derive(Debug, Clone, Args)]
pub struct LiveArgs {
    #[command(flatten)]
    pub(crate) watch: WatchArgs,
    /// Start the demo's timeline this many seconds in, or at a time of day of its clock (13:30:00
    /// is second 0). The incidents repeat every 720 s: 15 insert hot spot, 95 all-NULL index
    /// leaf, 135 Send-Q filling, 215 checkpoint stall, 275 lock chain, 375 long transaction, 450
    /// CPU saturated, 515 mutex contention, 570 slow device, 645 replica lag.
    #[arg(long, value_name = "WHEN", default_value = "0", requires = "demo")]
    pub(crate) demo_at: When,
    /// Refresh interval in seconds for the 1 s sources (others scale with it).
    #[arg(long, value_name = "SECS")]
    pub(crate) interval: Option<f64>,
    /// Stop recording when the file reaches this size.
    #[arg(long, value_name = "MB", default_value_t = RECORD_MAX_MB)]
    pub(crate) record_max: u64,
    /// Write a debug log to FILE (nothing is logged otherwise).
    #[arg(long, value_name = "FILE")]
    pub(crate) log: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) ring: RingArgs,
    #[command(flatten)]
    pub(crate) share: ShareArgs,
}

/// The flight recorder (`--ring DIR`) and a replay of a window of one (`--replay DIR --from
/// 03:05 --to 03:20`): docs/recording.md.
#[derive(Debug, Clone, Args, Default)]
pub struct RingArgs {
    /// Keep every collected output in the ring directory DIR (created 0700): the last
    /// --ring-hours within --ring-max-mb, oldest out first, any minute replayable with
    /// `--replay DIR`; an incident's minutes are cut out on their own (`ifxtop incidents`).
    #[arg(long, value_name = "DIR", conflicts_with = "replay")]
    pub(crate) ring: Option<PathBuf>,
    /// How long the ring keeps what it collected (default 24).
    #[arg(long, value_name = "HOURS", requires = "ring")]
    pub(crate) ring_hours: Option<f64>,
    /// The ring's segments' size at most (default 2048).
    #[arg(long, value_name = "MB", requires = "ring")]
    pub(crate) ring_max_mb: Option<u64>,
    /// Minutes before an incident its cut keeps (default 5).
    #[arg(long, value_name = "MINUTES", requires = "ring")]
    pub(crate) ring_before: Option<f64>,
    /// The incidents' cuts' size at most, beyond the segments' (default 512).
    #[arg(long, value_name = "MB", requires = "ring")]
    pub(crate) ring_incidents_mb: Option<u64>,
    /// With --replay DIR (a ring): replay from this moment (a time of day on the ring's clock,
    /// 03:05; seconds from its start); default: an hour before --to.
    #[arg(long, value_name = "WHEN", requires = "replay")]
    pub(crate) from: Option<When>,
    /// With --replay DIR (a ring): replay up to this moment; default: the ring's end.
    #[arg(long, value_name = "WHEN", requires = "replay")]
    pub(crate) to: Option<When>,
}

/// Watch together: what `--share` and its options ask for.
#[derive(Debug, Clone, Args, Default)]
pub struct ShareArgs {
    /// Share what is collected, live, with other DBAs on this host (`ifxtop attach`) or over
    /// ssh (`ifxtop --attach HOST`): a Unix socket, by default
    /// $XDG_RUNTIME_DIR/ifxtop/INSTANCE.sock (else /tmp/ifxtop-UID/INSTANCE.sock, in a
    /// directory 0700 of its own). Nothing more is run for the viewers.
    #[arg(long, value_name = "SOCKET", num_args = 0..=1)]
    pub(crate) share: Option<Option<PathBuf>>,
    /// The group that may attach to the shared feed (the socket 0660, its directory 0750).
    #[arg(long, value_name = "GROUP", requires = "share")]
    pub(crate) share_group: Option<String>,
    /// The shared feed's socket mode, in octal (0600; 0660 with --share-group).
    #[arg(long, value_name = "MODE", requires = "share", value_parser = parse_mode)]
    pub(crate) share_mode: Option<u32>,
    /// The most viewers attached at once.
    #[arg(long, value_name = "N", requires = "share",
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub(crate) share_viewers: Option<u16>,
    /// Watch what another ifxtop shares (`--share`): over ssh (`[USER@]HOST[:PORT]`: runs
    /// `ssh HOST ifxtop attach`, BatchMode, your ~/.ssh/config), or a socket here (a path).
    /// Nothing is run on the server for you but the collector's own polls; a session screen
    /// you open asks it to read that session too.
    #[arg(long, value_name = "TARGET", value_parser = crate::source::attach::AttachTarget::parse,
          conflicts_with_all = ["demo", "replay", "ssh", "share"])]
    pub(crate) attach: Option<crate::source::attach::AttachTarget>,
    /// The shared feed's socket on the attached host, when it has several.
    #[arg(long, value_name = "SOCKET", requires = "attach")]
    pub(crate) attach_socket: Option<String>,
    /// The ifxtop to run on the attached host (its path, when not on the remote PATH).
    #[arg(
        long,
        value_name = "PATH",
        requires = "attach",
        default_value = "ifxtop"
    )]
    pub(crate) attach_ifxtop: String,
    /// The user for serve's basic auth (`--attach https://...`; or `https://USER@HOST`). The
    /// password: `--attach-password-file`, else $IFXTOP_ATTACH_PASSWORD (never an argument).
    #[arg(long, value_name = "USER", requires = "attach")]
    pub(crate) attach_user: Option<String>,
    /// A file holding the password for serve's basic auth (its first line).
    #[arg(long, value_name = "FILE", requires = "attach")]
    pub(crate) attach_password_file: Option<PathBuf>,
    /// The CA certificate (PEM) that signed serve's (a self-signed one: the certificate
    /// itself); by default the system's bundle.
    #[arg(long, value_name = "FILE", requires = "attach")]
    pub(crate) attach_ca: Option<PathBuf>,
}

fn parse_mode(s: &str) -> std::result::Result<u32, String> {
    u32::from_str_radix(s.trim_start_matches("0o"), 8)
        .map_err(|_| format!("'{s}': a mode in octal, such as 0660"))
}

/// The default of `--record-max`.
const RECORD_MAX_MB: u64 = 512;

impl LiveArgs {
    /// What `watch` names, watched as the live screen watches it by default (a snapshot's
    /// instances are named and set up this way).
    pub(crate) fn watching(watch: WatchArgs) -> LiveArgs {
        LiveArgs {
            watch,
            demo_at: When::Offset(std::time::Duration::ZERO),
            interval: None,
            record_max: RECORD_MAX_MB,
            log: None,
            ring: RingArgs::default(),
            share: ShareArgs::default(),
        }
    }
}

/// What to watch, the same for the live screen, `snapshot` and `serve`: the demo, a recording,
/// or live instances (local or over ssh), with the config file and the limits that go with them.
#[derive(Debug, Clone, Args, Default)]
pub struct WatchArgs {
    /// Watch a simulated instance that prints real onstat formats and plays the seeds' incidents.
    #[arg(long, conflicts_with = "replay")]
    pub(crate) demo: bool,
    /// Fix the demo's randomness (same seed, same incident timeline).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) seed: u64,
    /// Sessions of the simulated instance (to measure ifxtop's own cost on a big instance).
    #[arg(long, value_name = "N", default_value_t = 300, requires = "demo")]
    pub(crate) demo_sessions: usize,
    /// Several simulated instances at once (their timelines 300 s apart), for the fleet screen.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "demo")]
    pub(crate) demo_instances: usize,
    /// The instance to watch (sets INFORMIXSERVER for every onstat/oncheck run); several,
    /// comma-separated (`--server ol_a,ol_b`), get the fleet screen.
    #[arg(long, value_name = "NAME[,NAME...]", env = "INFORMIXSERVER",
          value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub(crate) server: Option<String>,
    /// Informix listener port(s) whose sockets to show; default: from the sqlhosts file.
    #[arg(long = "port", value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) ports: Vec<u16>,
    /// A captured `oncheck -pe` to resolve chunk:page with, instead of running oncheck.
    #[arg(long, value_name = "FILE")]
    pub(crate) extents: Option<PathBuf>,
    /// Base page size in KB that onstat page numbers count in (2 on Linux, 4 on AIX/Windows).
    #[arg(long, value_name = "KB")]
    pub(crate) base_page_kb: Option<u32>,
    /// Record every collected output to FILE (JSON Lines; zstd when FILE ends in .zst).
    #[arg(long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,
    /// Play a recording made with --record.
    #[arg(long, value_name = "FILE")]
    pub(crate) replay: Option<PathBuf>,
    /// Configuration file (TOML); default: the user's config directory, ifxtop/config.toml.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Kill a command whose output passes this size, and read no file past it (default 64).
    /// All outputs being read share a budget of twice this (at least 128 MB); `oncheck -pe` and
    /// --extents may take three quarters of it.
    #[arg(long, value_name = "MB", value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub(crate) max_output_mb: Option<u64>,
    #[command(flatten)]
    pub(crate) ssh: SshArgs,
}

/// Watching a remote host: every source runs there through the system `ssh` client.
#[derive(Debug, Clone, Args, Default)]
pub struct SshArgs {
    /// Run every source on HOST through ssh: one multiplexed connection, your keys, agent and
    /// ~/.ssh/config as usual, never a prompt (BatchMode). Give --server too. Repeat it to watch
    /// several hosts (each server of --server on each host; the fleet screen lists them).
    #[arg(long, value_name = "[USER@]HOST[:PORT]", value_parser = parse_ssh_target,
          conflicts_with = "replay")]
    pub ssh: Vec<SshTarget>,
    /// The ssh client configuration file (ssh -F), instead of ~/.ssh/config.
    #[arg(long, value_name = "FILE", env = "IFXTOP_SSH_CONFIG")]
    pub ssh_config: Option<PathBuf>,
    /// Directories (`:`-separated) put in front of the remote PATH, when the remote shell's PATH
    /// does not hold onstat (non-login shells often lack $INFORMIXDIR/bin).
    #[arg(long, value_name = "DIRS", requires = "ssh")]
    pub ssh_path: Option<String>,
    /// A variable set on the remote host for every command (repeatable), for what the remote
    /// shell's environment lacks: --ssh-env INFORMIXDIR=/opt/informix.
    #[arg(long, value_name = "NAME=VALUE", requires = "ssh",
          value_parser = crate::source::ssh::parse_env_assignment)]
    pub ssh_env: Vec<(String, String)>,
}

fn parse_ssh_target(s: &str) -> std::result::Result<SshTarget, String> {
    SshTarget::parse(s)
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse one captured output and print what ifxtop understood, as JSON.
    Parse(ParseArgs),
    /// Append the object and dbspace to each line holding a chunk:page (the chunkpg successor).
    Resolve(ResolveArgs),
    /// Print every pane once (text or JSON) and exit, for cron, tickets and chat: of the live
    /// instance (one collection of every source; exit 1 when the server is off-line or an onstat
    /// fails), the demo, or a recording.
    Snapshot(Box<SnapshotArgs>),
    /// Database time over a window (an Informix ASH): who waited on what, grouped by class,
    /// SQL, user, host, program, object, session or head blocker, from the demo or a recording
    /// (`ifxtop ash --replay incident.jsonl.zst --group class,sql --from 13:10 --to 13:20`).
    Ash(Box<AshArgs>),
    /// Export the instances' metrics for Prometheus at http://ADDR/metrics (OpenMetrics): the
    /// live screen's collectors, without a screen, for the instances it would watch (`--server
    /// a,b`, `--ssh`, `[[instance]]` in the config, `--demo`). Ends cleanly on SIGTERM or
    /// SIGINT.
    Serve(Box<ServeArgs>),
    /// List the incidents the flight recorder (`--ring DIR`) cut out on its own, and its
    /// bookmarks: when, what, culprit, file.
    Incidents(IncidentsArgs),
    /// Bookmark this moment in a ring with a note (`ifxtop mark --ring DIR "slow batch"`): it
    /// shows in `ifxtop incidents` and on a replay's timeline.
    Mark(MarkArgs),
    /// Join a shared feed on this host (`ifxtop --share`, `ifxtop serve --share`) and copy it
    /// to standard output, and standard input to it: `ifxtop --attach HOST` runs
    /// `ssh HOST ifxtop attach` and shows it. Without SOCKET, the one shared feed found.
    Attach {
        #[arg(value_name = "SOCKET")]
        socket: Option<PathBuf>,
    },
    /// Print a shell completion script: `ifxtop completions bash > /etc/bash_completion.d/ifxtop`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `ifxtop man | man -l -`, `ifxtop man snapshot`.
    Man {
        /// A command's own page instead of ifxtop's.
        #[arg(value_name = "COMMAND")]
        command: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Clone, Args)]
pub struct SnapshotArgs {
    /// The moment: seconds into the demo's timeline or the recording (90, 2m), a share of the
    /// recording (40%), or a time of day on its clock (13:34:50); default: the demo at 0 + its
    /// warm-up, the end of a recording.
    #[arg(long, value_name = "WHEN")]
    pub at: Option<When>,
    /// The live screen's `--demo-at`: here the moment is `--at`, which says so (the live
    /// screen's flag typed by habit must not meet clap's "did you mean --demo").
    #[arg(long, hide = true, value_name = "SECONDS", value_parser = demo_at_is_at)]
    pub demo_at: Option<f64>,
    /// Which of the demo instances this is (set per report, not on the command line).
    #[arg(skip)]
    pub demo_index: u64,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Add the database time of the SECONDS before the moment (`activity` in JSON: by class,
    /// and the top SQL, users, hosts, programs, objects, sessions and head blockers).
    #[arg(long, value_name = "SECONDS")]
    pub window: Option<f64>,
    // What to watch, as the live screen and `serve` take it (the config file too): the demo
    // (`--demo-instances N`: one report each), a recording, or the live instances (each server
    // of `--server a,b` on each `--ssh` host, else the config's `[[instance]]` tables).
    // `--record FILE` writes every output collected for this snapshot.
    #[command(flatten)]
    pub watch: WatchArgs,
}

/// `--demo-at` given to `snapshot` or `ash`: points to `--at`, which means the same there.
fn demo_at_is_at(value: &str) -> Result<f64, String> {
    Err(format!(
        "here the demo's moment is --at: `--demo --at {value}` (seconds into the demo's \
         timeline, as the live screen's --demo-at)"
    ))
}

#[derive(Debug, Clone, Args)]
pub struct AshArgs {
    /// What to group by, comma-separated: class, sql, user, host, program, object, session,
    /// head_blocker (one table each).
    #[arg(
        long,
        value_name = "KEYS",
        value_delimiter = ',',
        default_value = "class,session,sql,object"
    )]
    pub group: Vec<String>,
    /// The window's start: seconds into the demo's timeline or the recording, a share of the
    /// recording (40%), or a time of day (13:10, 13:10:30); default: --window seconds before its
    /// end.
    #[arg(long, value_name = "WHEN")]
    pub from: Option<When>,
    /// The window's end, likewise; default: --at, else the end of the recording (the demo:
    /// --window seconds into its timeline).
    #[arg(long, value_name = "WHEN")]
    pub to: Option<When>,
    /// At most this many entries in each table.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Parse a recording's outputs again rather than read its database-time track (the
    /// samples the screen took while recording): a newer ifxtop's parsers and joins.
    #[arg(long)]
    pub rederive: bool,
    #[command(flatten)]
    pub snapshot: SnapshotArgs,
}

/// Where `ifxtop serve` listens by default: 19088 recalls Informix's own 9088 and stays away
/// from the 91xx ports of the common exporters (node_exporter's 9100, postgres_exporter's 9187,
/// often on the same database hosts).
pub const SERVE_DEFAULT_LISTEN: &str = "127.0.0.1:19088";

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// The address to listen on (HOST:PORT). Beyond loopback, serve needs --web.config.file
    /// with TLS or basic auth (or --web.insecure): the servers' waits, sessions and SQL must not
    /// travel in plain HTTP to whoever can reach it.
    #[arg(long, visible_alias = "web.listen-address", value_name = "ADDR",
          default_value = SERVE_DEFAULT_LISTEN, value_parser = parse_listen)]
    pub listen: std::net::SocketAddr,
    /// The path of the metrics (the landing page is `/`).
    #[arg(
        long = "telemetry-path",
        visible_alias = "web.telemetry-path",
        value_name = "PATH",
        default_value = "/metrics"
    )]
    pub telemetry_path: String,
    /// The Prometheus exporter toolkit's web configuration (YAML, as node_exporter reads it):
    /// `tls_server_config` (cert_file, key_file, client_ca_file, client_auth_type) and
    /// `basic_auth_users` (user: bcrypt hash).
    #[arg(long = "web.config.file", value_name = "FILE")]
    pub web_config: Option<std::path::PathBuf>,
    /// Listen beyond loopback in plain HTTP with no authentication all the same (behind a
    /// firewall that only lets Prometheus in).
    #[arg(long = "web.insecure")]
    pub insecure: bool,
    #[command(flatten)]
    pub live: LiveArgs,
}

fn parse_listen(s: &str) -> std::result::Result<std::net::SocketAddr, String> {
    s.parse().map_err(|_| {
        format!("'{s}': an IP address and a port, such as {SERVE_DEFAULT_LISTEN} or [::1]:19088")
    })
}

#[derive(Debug, Clone, Args)]
pub struct IncidentsArgs {
    /// The ring directory (`--ring DIR` of `serve` or the screen).
    #[arg(long, value_name = "DIR")]
    pub ring: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Clone, Args)]
pub struct MarkArgs {
    /// The ring directory.
    #[arg(long, value_name = "DIR")]
    pub ring: PathBuf,
    /// What happened (shown with the mark).
    #[arg(value_name = "NOTE")]
    pub note: String,
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// What the input is (every kind listed in the help, from the parsers' own registry).
    #[arg(value_name = "KIND", value_parser = parse_kind, help = kind_help())]
    pub(crate) kind: Kind,
    /// The captured output; standard input when absent.
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<PathBuf>,
}

/// `What the input is: onstat-u, ...`: every kind `Kind::from_name` accepts.
fn kind_help() -> String {
    let names = crate::source::kinds::names();
    format!("What the input is: {}", names.join(", "))
}

fn parse_kind(s: &str) -> std::result::Result<Kind, String> {
    Kind::from_name(s).ok_or_else(|| {
        let names = crate::source::kinds::names();
        format!("unknown kind '{s}'; one of: {}", names.join(", "))
    })
}

#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// A captured `oncheck -pe` output.
    #[arg(long, value_name = "FILE")]
    pub(crate) extents: PathBuf,
    /// The field (1-based, blank-separated) holding the page: `chunk:page`, or packed hex as older
    /// onstat builds print it. Default: the first field that looks like `chunk:page`.
    #[arg(short = 'k', long = "key", value_name = "FIELD",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) key: Option<u32>,
    /// Base page size in KB that onstat page numbers count in (2 on Linux, 4 on AIX/Windows).
    #[arg(long, value_name = "KB", default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(crate) base_page_kb: u32,
    /// Print one JSON object per input line (the line, chunk, page, and what it resolved to or
    /// why it did not) instead of the annotated lines.
    #[arg(long)]
    pub(crate) json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// `--demo-at`'s help lists where every incident of the timeline starts, and the cycle.
    #[test]
    fn demo_at_help_names_every_incident() {
        let cmd = Cli::command();
        let arg = cmd
            .get_arguments()
            .find(|a| a.get_id() == "demo_at")
            .expect("--demo-at");
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            help.contains(&format!("every {} s", crate::demo::timeline::CYCLE)),
            "{help}"
        );
        let mut seen = std::collections::HashSet::new();
        for p in crate::demo::timeline::TIMELINE {
            let name = format!("{:?}", p.incident);
            if name == "Calm" || name == "SendQDrain" || name == "CheckpointInProgress" {
                continue;
            }
            if seen.insert(name.clone()) {
                assert!(
                    help.contains(&format!("{} ", p.start)),
                    "{name} at {}: {help}",
                    p.start
                );
            }
        }
    }
}
