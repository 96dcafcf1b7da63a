//! The registry of sources: every thing ifxtop reads, with how to get it, how often, how long
//! to wait for it, how to read its exit code, which parser reads it, and which collector runs
//! it. Adding a source is one entry in `registry!` below plus its parser file.

use super::{ExitPolicy, Request};
use crate::error::ParseError;
use crate::extents::ExtentMap;
use crate::ids::Sid;
use crate::parsers::{self, parsed, Parsed};
use std::path::PathBuf;
use std::time::Duration;

/// Base periods (DESIGN.md §1) at an interval of 1 s; `+`/`-` scale them together.
pub(crate) const PERIOD_FAST: Duration = Duration::from_secs(1);
pub(crate) const PERIOD_BUFFERS: Duration = Duration::from_secs(2);
pub(crate) const PERIOD_JOINS: Duration = Duration::from_secs(5);
/// Thread tables (`-g ath`, `-g ntt`): joins that change slowly.
pub(crate) const PERIOD_THREADS: Duration = Duration::from_secs(10);
/// The server's vital signs that move by the second: profile, logs, latches, transactions.
pub(crate) const PERIOD_VITALS: Duration = Duration::from_secs(5);
/// VP CPU, the ready queue, mutexes, the engine's blocker graph.
pub(crate) const PERIOD_CPU: Duration = Duration::from_secs(10);
/// Histories the server keeps itself (checkpoints, thread profiles).
pub(crate) const PERIOD_HISTORY: Duration = Duration::from_secs(30);
/// Memory segments: added rarely, watched for growth.
pub(crate) const PERIOD_MEMORY: Duration = Duration::from_secs(60);
pub(crate) const PERIOD_NUMA: Duration = Duration::from_secs(5);
pub(crate) const PERIOD_NUMA_MAPS: Duration = Duration::from_secs(30);
pub(crate) const PERIOD_DISCOVERY: Duration = Duration::from_secs(120);
/// Chunk page counts (`onstat -D`, inside the grouped onstat call: no process of its own):
/// rates over 5 s.
pub(crate) const PERIOD_IO: Duration = Duration::from_secs(5);
/// The kernel's device counters (`/proc/diskstats`, a small file read: no process) every
/// second, their rates over the last 5 s (`store::io::DISK_WINDOW`): a device that slows down
/// shows within seconds, not at the next 5 s.
pub(crate) const PERIOD_DEVICES: Duration = Duration::from_secs(1);
/// Informix's per-chunk operation times (`onstat -g iof`) and the replication commands: one
/// onstat process each, so 10 s (6 a minute each). Informix prints its average times to 0.1 ms
/// since the counters' last reset; a longer span between samples is also what makes the
/// average over it precise enough to show.
pub(crate) const PERIOD_HA: Duration = Duration::from_secs(10);
/// `sysmaster:systabnames` changes only when tables are created or dropped.
pub(crate) const PERIOD_TABLES: Duration = Duration::from_secs(600);
/// Not polled: run when asked (the extent map, a drilled session).
pub(crate) const ON_DEMAND: Duration = Duration::MAX;

pub(crate) const ONSTAT_TIMEOUT: Duration = Duration::from_secs(10);
pub(crate) const FILE_TIMEOUT: Duration = Duration::from_secs(2);
pub(crate) const ONCHECK_TIMEOUT: Duration = Duration::from_secs(1800);
pub(crate) const DBACCESS_TIMEOUT: Duration = Duration::from_secs(30);

/// How a source is collected. `{}` in an argument or a path stands for the source's argument
/// (a session id, a node, a pid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Run {
    /// `onstat` with these options.
    Onstat(&'static [&'static str]),
    /// Another program and its arguments.
    Command(&'static [&'static str]),
    /// `dbaccess DATABASE -` reading a query on its standard input.
    Dbaccess {
        database: &'static str,
        query: &'static str,
    },
    /// A file read directly (/proc, /sys).
    File(&'static str),
}

/// Which task collects a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Collector {
    /// A task of its own on its period.
    Poll,
    /// The sockets task (`/proc/net/tcp{,6}`, falling back to `netstat`).
    Sockets,
    /// The NUMA task (node list, per node files, vmstat, oninit numa_maps).
    Numa,
    /// The drill-down task: only for the sessions on the drill stack.
    Focus,
    /// The extent-map job: on demand.
    Extents,
    /// The devices task: `/proc/diskstats`, and each chunk path's device resolved once per
    /// chunk list (`collect::devices`).
    Devices,
    /// The replication task: `onstat -g cluster`, and `-g rss`, `-g sds`, `-g dri` for the
    /// peers the cluster has; nothing on a server whose banner names no role
    /// (`collect::ha`).
    Ha,
}

/// One entry of the registry.
#[derive(Clone, Copy)]
pub(crate) struct SourceDef {
    pub(crate) run: Run,
    /// How often at an interval of 1 s ([`ON_DEMAND`]: when asked).
    pub(crate) period: Duration,
    pub(crate) timeout: Duration,
    pub(crate) exit: ExitPolicy,
    pub(crate) collector: Collector,
    pub(crate) parse: fn(&str) -> Result<Parsed, ParseError>,
    /// A recording may name it with other options (`netstat -Aan` on AIX).
    pub(crate) any_options: bool,
    /// The first server release that has it (`onstat -g bth`: 14.10); older ones are not asked.
    pub(crate) since: Option<(u32, u32)>,
}

impl std::fmt::Debug for SourceDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceDef")
            .field("run", &self.run)
            .field("period", &self.period)
            .finish_non_exhaustive()
    }
}

impl SourceDef {
    /// `onstat OPTIONS`, polled by a task of its own.
    const fn onstat(
        options: &'static [&'static str],
        period: Duration,
        parse: fn(&str) -> Result<Parsed, ParseError>,
    ) -> SourceDef {
        SourceDef {
            run: Run::Onstat(options),
            period,
            timeout: ONSTAT_TIMEOUT,
            exit: ExitPolicy::Onstat,
            collector: Collector::Poll,
            parse,
            any_options: false,
            since: None,
        }
    }

    /// A file read directly, by the `collector` that knows which ones exist.
    const fn file(
        path: &'static str,
        period: Duration,
        collector: Collector,
        parse: fn(&str) -> Result<Parsed, ParseError>,
    ) -> SourceDef {
        SourceDef {
            run: Run::File(path),
            period,
            timeout: FILE_TIMEOUT,
            exit: ExitPolicy::ZeroIsSuccess,
            collector,
            parse,
            any_options: false,
            since: None,
        }
    }

    const fn collected_by(mut self, collector: Collector) -> SourceDef {
        self.collector = collector;
        self
    }

    /// Only servers of this release or later have it.
    const fn since(mut self, major: u32, minor: u32) -> SourceDef {
        self.since = Some((major, minor));
        self
    }
}

/// Generates `Source` (one variant per entry, with its argument type if it has one) and
/// `Source::def` (its entry), so an entry is written once.
macro_rules! registry {
    ($( $(#[$doc:meta])* $name:ident $( ( $arg:ty ) )? => $def:expr ),* $(,)?) => {
        /// One thing ifxtop collects. Its `label` is how a DBA would type it (`onstat -u`) or,
        /// for a file read directly, its path; recordings name their samples by it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Source {
            $( $(#[$doc])* $name $( ($arg) )? ),*
        }

        impl Source {
            /// Its entry in the registry.
            pub(crate) fn def(&self) -> &'static SourceDef {
                match self {
                    $( Source::$name { .. } => {
                        const DEF: SourceDef = $def;
                        &DEF
                    } )*
                }
            }

            /// The argument of a source that has one (a session id, a node, a pid), as text.
            pub(crate) fn arg(&self) -> Option<String> {
                match self {
                    $( registry!(@bind $name x $($arg)?) => registry!(@show x $($arg)?) ),*
                }
            }

            /// Every source whose argument (if it takes one) reads from `arg`: the candidates a
            /// label is matched against.
            fn candidates(arg: Option<&str>) -> Vec<Source> {
                let mut all = Vec::new();
                $( if let Some(s) = registry!(@make $name arg $($arg)?) {
                    all.push(s);
                } )*
                all
            }
        }
    };
    (@bind $name:ident $x:ident $arg:ty) => { Source::$name($x) };
    (@bind $name:ident $x:ident) => { Source::$name };
    (@show $x:ident $arg:ty) => { Some($x.to_string()) };
    (@show $x:ident) => { None };
    (@make $name:ident $a:ident $arg:ty) => {
        $a.and_then(|t| t.parse::<$arg>().ok()).map(Source::$name)
    };
    (@make $name:ident $a:ident) => { $a.is_none().then_some(Source::$name) };
}

/// A polled `onstat -u` ends with its `N active, M total` footer: one without it was cut short
/// (or is garbage after a title), and taking it as the whole list would show a busy server as
/// empty. The last good list stays on screen, marked failing. (`ifxtop parse` still reads a
/// grep'd fragment: this is the poll's rule, not the parser's.)
fn complete_u(
    u: parsers::onstat_u::OnstatU,
) -> Result<parsers::onstat_u::OnstatU, crate::error::ParseError> {
    if u.active.is_some() || u.offline.is_some() {
        return Ok(u);
    }
    let lines = u.threads.len() + 1;
    Err(crate::error::ParseError {
        line: lines,
        column: 1,
        expected: "the footer `N active, M total, K maximum concurrent`: the output was cut short"
            .into(),
        snippet: String::new(),
    })
}

registry! {
    /// User threads: flags, wait address, session, counters.
    OnstatU => SourceDef::onstat(&["-u"], PERIOD_FAST, |t| {
        parsed(parsers::onstat_u::parse(t).and_then(complete_u))
    }),
    /// Buffers being accessed: owner, waiters, page.
    OnstatX => SourceDef::onstat(&["-X"], PERIOD_BUFFERS, |t| {
        parsed(parsers::onstat_x::parse(t))
    }),
    /// Conditions with waiters.
    OnstatGCon => SourceDef::onstat(&["-g", "con"], PERIOD_FAST, |t| {
        parsed(parsers::onstat_g_con::parse(t))
    }),
    /// Threads: tid ↔ rstcb ↔ name.
    OnstatGAth => SourceDef::onstat(&["-g", "ath"], PERIOD_THREADS, |t| {
        parsed(parsers::onstat_g_ath::parse(t))
    }),
    /// Network threads: session ↔ client `host|port`.
    OnstatGNtt => SourceDef::onstat(&["-g", "ntt"], PERIOD_THREADS, |t| {
        parsed(parsers::onstat_g_ntt::parse(t))
    }),
    /// Locks: owner, waiters, partnum.
    OnstatK => SourceDef::onstat(&["-k"], PERIOD_JOINS, |t| {
        parsed(parsers::onstat_k::parse(t))
    }),
    /// Profile counters: per-second rates between two samples.
    OnstatP => SourceDef::onstat(&["-p"], PERIOD_VITALS, |t| {
        parsed(parsers::onstat_p::parse(t))
    }),
    /// Physical and logical logs: fill, backups, the current log.
    OnstatL => SourceDef::onstat(&["-l"], PERIOD_VITALS, |t| {
        parsed(parsers::onstat_l::parse(t))
    }),
    /// Latches held or waited for: who is behind an S waiter.
    OnstatS => SourceDef::onstat(&["-s"], PERIOD_VITALS, |t| {
        parsed(parsers::onstat_s::parse(t))
    }),
    /// Transactions: the oldest open one and the logs it spans.
    OnstatXTxn => SourceDef::onstat(&["-x"], PERIOD_VITALS, |t| {
        parsed(parsers::onstat_x_txn::parse(t))
    }),
    /// VP classes and their CPU seconds: busy % between samples.
    OnstatGGlo => SourceDef::onstat(&["-g", "glo"], PERIOD_CPU, |t| {
        parsed(parsers::onstat_g_glo::parse(t))
    }),
    /// Threads ready to run but waiting for a VP.
    OnstatGRea => SourceDef::onstat(&["-g", "rea"], PERIOD_CPU, |t| {
        parsed(parsers::onstat_g_rea::parse(t))
    }),
    /// Mutexes held, with their waiters.
    OnstatGLmx => SourceDef::onstat(&["-g", "lmx"], PERIOD_CPU, |t| {
        parsed(parsers::onstat_g_lmx::parse(t))
    }),
    /// Mutexes with waiters.
    OnstatGWmx => SourceDef::onstat(&["-g", "wmx"], PERIOD_CPU, |t| {
        parsed(parsers::onstat_g_wmx::parse(t))
    }),
    /// The engine's blocker graph (14.10+): MGM and condition blockers `-k` cannot see.
    OnstatGBth => SourceDef::onstat(&["-g", "bth"], PERIOD_CPU, |t| {
        parsed(parsers::onstat_g_bth::parse(t))
    })
    .since(14, 10),
    /// Per-thread profiles: log space used (who fills the logs).
    OnstatGTpf => SourceDef::onstat(&["-g", "tpf"], PERIOD_HISTORY, |t| {
        parsed(parsers::onstat_g_tpf::parse(t))
    }),
    /// The last checkpoints: trigger, times, waits, whether they blocked.
    OnstatGCkp => SourceDef::onstat(&["-g", "ckp"], PERIOD_HISTORY, |t| {
        parsed(parsers::onstat_g_ckp::parse(t))
    }),
    /// Shared-memory segments: growth since start.
    OnstatGSeg => SourceDef::onstat(&["-g", "seg"], PERIOD_MEMORY, |t| {
        parsed(parsers::onstat_g_seg::parse(t))
    }),
    /// One session's detail, for the session screen.
    OnstatGSes(Sid) => SourceDef::onstat(&["-g", "ses", "{}"], PERIOD_JOINS, |t| {
        parsed(parsers::onstat_g_ses::parse(t))
    })
    .collected_by(Collector::Focus),
    /// One session's SQL, for the session screen.
    OnstatGSql(Sid) => SourceDef::onstat(&["-g", "sql", "{}"], PERIOD_JOINS, |t| {
        parsed(parsers::onstat_g_sql::parse(t))
    })
    .collected_by(Collector::Focus),
    /// The extent map: chunk:page → object.
    OncheckPe => SourceDef {
        run: Run::Command(&["oncheck", "-pe"]),
        period: ON_DEMAND,
        timeout: ONCHECK_TIMEOUT,
        exit: ExitPolicy::ZeroIsSuccess,
        collector: Collector::Extents,
        parse: |t| parsed(ExtentMap::from_oncheck_pe(t)),
        any_options: false,
        since: None,
    },
    // Chunk I/O, devices and replication (issue 12).
    /// Per chunk: pages read and written (rates between two samples). Not a `-g` option: it
    /// joins the grouped onstat call.
    OnstatDUpper => SourceDef::onstat(&["-D"], PERIOD_IO, |t| {
        parsed(parsers::onstat_d_upper::parse(t))
    }),
    /// Per chunk file: operations, and Informix's own average time per operation.
    OnstatGIof => SourceDef::onstat(&["-g", "iof"], PERIOD_HA, |t| {
        parsed(parsers::onstat_g_iof::parse(t))
    }),
    /// Per block device: I/Os completed, ms spent, busy time (await and %util from two
    /// samples).
    ProcDiskstats => SourceDef::file("/proc/diskstats", PERIOD_DEVICES, Collector::Devices, |t| {
        parsed(parsers::proc_diskstats::parse(t))
    }),
    /// Each chunk path's block device and the disks under it: `stat -L` of the chunk paths,
    /// then `/sys/dev/block` files; recorded as the transcript of every request
    /// (`parsers::chunk_devices`), resolved once per chunk list.
    ChunkDevices => SourceDef {
        run: Run::Command(&["stat", "-L", "-c", parsers::chunk_devices::STAT_FORMAT, "--"]),
        period: ON_DEMAND,
        timeout: FILE_TIMEOUT,
        exit: ExitPolicy::ZeroIsSuccess,
        collector: Collector::Devices,
        parse: |t| parsed(parsers::chunk_devices::parse(t)),
        any_options: true,
        since: None,
    },
    /// The HA cluster as this server sees it: the primary's current log page, each peer's
    /// acknowledged position, type and state.
    OnstatGCluster => SourceDef::onstat(&["-g", "cluster"], PERIOD_HA, |t| {
        parsed(parsers::onstat_g_cluster::parse(t))
    })
    .collected_by(Collector::Ha),
    /// RSS secondaries: backlog, pages not yet acknowledged, log transmission blocked or not.
    OnstatGRss => SourceDef::onstat(&["-g", "rss", "verbose"], PERIOD_HA, |t| {
        parsed(parsers::onstat_g_rss::parse(t))
    })
    .collected_by(Collector::Ha),
    /// SDS secondaries: backlog and the last acknowledgement.
    OnstatGSds => SourceDef::onstat(&["-g", "sds", "verbose"], PERIOD_HA, |t| {
        parsed(parsers::onstat_g_sds::parse(t))
    })
    .collected_by(Collector::Ha),
    /// HDR: the pair's state, the backlog, the last log page applied.
    OnstatGDri => SourceDef::onstat(&["-g", "dri"], PERIOD_HA, |t| {
        parsed(parsers::onstat_g_dri::parse(t))
    })
    .collected_by(Collector::Ha),
    /// Sockets where /proc/net/tcp is missing.
    Netstat => SourceDef {
        run: Run::Command(&["netstat", "-an"]),
        period: PERIOD_FAST,
        timeout: ONSTAT_TIMEOUT,
        exit: ExitPolicy::ZeroIsSuccess,
        collector: Collector::Sockets,
        parse: |t| parsed(parsers::sockets::parse_netstat(t)),
        any_options: true,
        since: None,
    },
    ProcNetTcp => SourceDef::file("/proc/net/tcp", PERIOD_FAST, Collector::Sockets, |t| {
        parsed(parsers::sockets::parse_proc_net_tcp(t))
    }),
    ProcNetTcp6 => SourceDef::file("/proc/net/tcp6", PERIOD_FAST, Collector::Sockets, |t| {
        parsed(parsers::sockets::parse_proc_net_tcp(t))
    }),
    /// The NUMA nodes (`0-1`).
    NodesOnline => SourceDef::file(
        "/sys/devices/system/node/online",
        PERIOD_NUMA,
        Collector::Numa,
        |t| parsed(parsers::numa::parse_cpulist(t).map(parsers::numa::CpuList)),
    ),
    NodeMeminfo(u32) => SourceDef::file(
        "/sys/devices/system/node/node{}/meminfo",
        PERIOD_NUMA,
        Collector::Numa,
        |t| parsed(parsers::numa::parse_node_meminfo(t)),
    ),
    NodeCpulist(u32) => SourceDef::file(
        "/sys/devices/system/node/node{}/cpulist",
        PERIOD_DISCOVERY,
        Collector::Numa,
        |t| parsed(parsers::numa::parse_cpulist(t).map(parsers::numa::CpuList)),
    ),
    ZoneReclaimMode => SourceDef::file(
        "/proc/sys/vm/zone_reclaim_mode",
        PERIOD_NUMA,
        Collector::Numa,
        |t| parsed(parsers::numa::parse_zone_reclaim_mode(t).map(parsers::numa::ZoneReclaimMode)),
    ),
    Vmstat => SourceDef::file("/proc/vmstat", PERIOD_NUMA, Collector::Numa, |t| {
        parsed(parsers::numa::parse_vmstat(t).map(parsers::numa::Vmstat))
    }),
    /// Where an oninit process's memory sits, per node.
    NumaMaps(u32) => SourceDef::file(
        "/proc/{}/numa_maps",
        PERIOD_NUMA_MAPS,
        Collector::Numa,
        |t| parsed(parsers::numa::parse_numa_maps(t)),
    ),
    /// `sysmaster:systabnames` through dbaccess: partnum → table name.
    Systabnames => SourceDef {
        run: Run::Dbaccess {
            database: "sysmaster",
            query: parsers::systabnames::QUERY,
        },
        period: PERIOD_TABLES,
        timeout: DBACCESS_TIMEOUT,
        exit: ExitPolicy::ZeroIsSuccess,
        collector: Collector::Poll,
        parse: |t| parsed(parsers::systabnames::parse(t)),
        any_options: false,
        since: None,
    },
}

/// `template` with its `{}` replaced by `arg` (when it has one).
fn fill(template: &str, arg: Option<&str>) -> String {
    match arg {
        Some(a) => template.replacen("{}", a, 1),
        None => template.to_string(),
    }
}

impl Source {
    /// `onstat -u`, `/proc/net/tcp`, `/sys/devices/system/node/node0/meminfo`, ...
    pub fn label(&self) -> String {
        let arg = self.arg();
        match self.def().run {
            Run::Onstat(options) => {
                let mut s = String::from("onstat");
                for o in options {
                    s.push(' ');
                    s.push_str(&fill(o, arg.as_deref()));
                }
                s
            }
            Run::Command(argv) => argv
                .iter()
                .map(|a| fill(a, arg.as_deref()))
                .collect::<Vec<_>>()
                .join(" "),
            Run::Dbaccess { database, .. } => format!("dbaccess {database} -"),
            Run::File(path) => fill(path, arg.as_deref()),
        }
    }

    /// The inverse of `label`, for recordings. Extra blanks in a hand-written label are
    /// accepted; a file path must be exact.
    pub(crate) fn from_label(label: &str) -> Option<Source> {
        let words: Vec<&str> = label.split_whitespace().collect();
        let path = label.trim();
        // The argument, if any, is the one part of a label that varies: try the label's last
        // word (`onstat -g ses 812`) and the number in a path (`/proc/1234/numa_maps`).
        let mut args: Vec<Option<&str>> = vec![None];
        if let Some(last) = words.last() {
            args.push(Some(last));
        }
        if path.starts_with('/') {
            args.extend(
                path.split(|c: char| !c.is_ascii_digit())
                    .filter(|p| !p.is_empty())
                    .map(Some),
            );
        }
        for arg in args {
            for s in Source::candidates(arg) {
                let want = s.label();
                let matches = if matches!(s.def().run, Run::File(_)) {
                    want == path
                } else {
                    let want: Vec<&str> = want.split_whitespace().collect();
                    want == words || (s.def().any_options && words.first() == want.first())
                };
                if matches {
                    return Some(s);
                }
            }
        }
        None
    }

    /// Whether a server of `release` has it; a source of a late release waits until the
    /// release is known (from the first banner).
    pub(crate) fn supported_by(&self, release: Option<(u32, u32)>) -> bool {
        match (self.def().since, release) {
            (None, _) => true,
            (Some(since), Some(r)) => r >= since,
            (Some(_), None) => false,
        }
    }

    /// How often it is collected at an interval of 1 s (`+`/`-` scale it): the one table the
    /// collectors, the demo and the header's staleness all read.
    pub fn period(&self) -> Duration {
        self.def().period
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.def().timeout
    }

    /// How to collect it.
    pub fn request(&self) -> Request {
        let arg = self.arg();
        let fill_all = |argv: &[&str]| -> Vec<String> {
            argv.iter().map(|a| fill(a, arg.as_deref())).collect()
        };
        match self.def().run {
            Run::Onstat(options) => {
                let mut argv = vec!["onstat".to_string()];
                argv.extend(fill_all(options));
                Request::Command(argv)
            }
            Run::Command(argv) => Request::Command(fill_all(argv)),
            Run::Dbaccess { database, query } => Request::CommandInput {
                argv: vec!["dbaccess".into(), database.into(), "-".into()],
                stdin: query.to_string(),
            },
            Run::File(path) => Request::ReadFile(PathBuf::from(fill(path, arg.as_deref()))),
        }
    }

    /// How its exit code is read.
    pub(crate) fn exit_policy(&self) -> ExitPolicy {
        self.def().exit
    }

    #[cfg(test)]
    pub(crate) fn candidates_for_tests(arg: Option<&str>) -> Vec<Source> {
        Source::candidates(arg)
    }

    /// The sources polled on their own periods (no argument, `Collector::Poll`).
    pub fn polled() -> Vec<Source> {
        Source::candidates(None)
            .into_iter()
            .filter(|s| s.def().collector == Collector::Poll)
            .collect()
    }

    /// The replication commands (`collect::ha` says which a role asks).
    pub(crate) fn replication() -> Vec<Source> {
        Source::candidates(None)
            .into_iter()
            .filter(|s| s.def().collector == Collector::Ha)
            .collect()
    }

    /// The onstat option a polled source adds to a grouped call (`-u`): a polled onstat
    /// source with one option other than `-g`, whose output `parsers::group::split` can cut
    /// out of a grouped output.
    pub(crate) fn group_option(&self) -> Option<&'static str> {
        match self.def() {
            SourceDef {
                run: Run::Onstat([option]),
                collector: Collector::Poll,
                ..
            } if crate::parsers::group::title_of(option).is_some() => Some(option),
            _ => None,
        }
    }
}
