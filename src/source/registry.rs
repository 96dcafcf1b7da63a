//! The registry of sources: every thing ifxtop reads, with how to get it, how often, how long
//! to wait for it, how to read its exit code, which parser reads it, and which collector runs
//! it. Adding a source is one entry in `registry!` below plus its parser file.

use super::{ExitPolicy, Request};
use crate::error::ParseError;
use crate::extents::ExtentMap;
use crate::ids::Sid;
use crate::parsers::memo::LineMemo;
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
/// Each session's memory (`onstat -g ses`, the list): a session's pool grows and shrinks with
/// its statements over seconds to minutes, and the list is one line per session (5,000 lines
/// on a busy server, the size of `onstat -u`), so every 30 s: a session that balloons shows
/// within half a minute at a sixtieth of `-u`'s cost.
pub(crate) const PERIOD_SESSION_MEMORY: Duration = Duration::from_secs(30);
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
    /// A recording may name it with other options (`netstat -Aan` on AIX).
    pub(crate) any_options: bool,
    /// The first server release that has it (`onstat -g bth`: 14.10); older ones are not asked.
    pub(crate) since: Option<(u32, u32)>,
    /// Where in its period it is due, at an interval of 1 s: sources of one period meet on
    /// its multiples, and a large output nothing joins at a moment is moved off them
    /// ([`SourceDef::offset`]).
    pub(crate) phase: Duration,
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
    /// What an entry written out in full starts from (`..SourceDef::BASE`).
    const BASE: SourceDef = SourceDef {
        run: Run::File(""),
        period: ON_DEMAND,
        timeout: FILE_TIMEOUT,
        exit: ExitPolicy::ZeroIsSuccess,
        collector: Collector::Poll,
        any_options: false,
        since: None,
        phase: Duration::ZERO,
    };

    /// `onstat OPTIONS`, polled by a task of its own.
    const fn onstat(options: &'static [&'static str], period: Duration) -> SourceDef {
        SourceDef {
            run: Run::Onstat(options),
            period,
            timeout: ONSTAT_TIMEOUT,
            exit: ExitPolicy::Onstat,
            ..SourceDef::BASE
        }
    }

    /// A file read directly, by the `collector` that knows which ones exist.
    const fn file(path: &'static str, period: Duration, collector: Collector) -> SourceDef {
        SourceDef {
            run: Run::File(path),
            period,
            collector,
            ..SourceDef::BASE
        }
    }

    const fn collected_by(mut self, collector: Collector) -> SourceDef {
        self.collector = collector;
        self
    }

    /// Due `seconds` past the multiples of its period: for a large output that nothing joins
    /// with another at one moment, so it is not read (and held twice while the old one is
    /// replaced) in the second every other period meets. At 5,000 sessions the 10, 30 and
    /// 60 s periods made one second's `onstat -i` output 7.8 MB.
    const fn offset(mut self, seconds: u64) -> SourceDef {
        self.phase = Duration::from_secs(seconds);
        self
    }

    /// Only servers of this release or later have it.
    const fn since(mut self, major: u32, minor: u32) -> SourceDef {
        self.since = Some((major, minor));
        self
    }
}

/// A source with the type of its record: `store.get(key::OnstatU)` is an `Option<&OnstatU>`,
/// and a key of one type for a source of another does not compile. Keys come only from
/// [`key`], which `registry!` writes from each entry's record type:
///
/// ```compile_fail
/// # fn f(store: &ifxtop::store::Store) {
/// // `onstat -X` is not a thread list: this does not compile.
/// let u: Option<&ifxtop::parsers::onstat_u::OnstatU> = store.get(ifxtop::source::key::OnstatX);
/// # }
/// ```
///
/// ```
/// # fn f(store: &ifxtop::store::Store) {
/// let u: Option<&ifxtop::parsers::onstat_u::OnstatU> = store.get(ifxtop::source::key::OnstatU);
/// # }
/// ```
pub struct Key<T> {
    source: Source,
    record: std::marker::PhantomData<fn() -> T>,
}

impl<T> Clone for Key<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Key<T> {}

impl<T> std::fmt::Debug for Key<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({:?})", self.source)
    }
}

impl<T> Key<T> {
    /// Private: only `registry!` pairs a source with its record type.
    const fn new(source: Source) -> Self {
        Key {
            source,
            record: std::marker::PhantomData,
        }
    }

    /// The source it names.
    pub fn source(self) -> Source {
        self.source
    }
}

/// An entry's parse kind: its name and other spellings, what it runs, and its parser alone
/// (without the poll's rule).
pub(crate) struct KindEntry {
    pub(crate) name: &'static str,
    pub(crate) aliases: &'static [&'static str],
    pub(crate) run: Run,
    pub(crate) parse: fn(&str) -> Result<Parsed, ParseError>,
}

/// Generates `Source` (one variant per entry, with its argument type if it has one),
/// `Source::def` (its entry), `Source::parse` (its typed parser, then the poll's rule if it has
/// one), `Source::short`, [`key`] (one typed key per entry) and `kinds` (the entries
/// `ifxtop parse` reads by a kind name), so an entry is written once:
///
/// `Name(Arg): RecordType as "short" = parser, poll rule, kind "name" | "alias"; definition,`
///
/// (`poll` and `kind` are optional). The kind parses with the parser alone: `ifxtop parse`
/// reads a captured fragment that a poll would refuse. An entry may be `#[cfg(...)]` after its
/// doc comment (the test build's toy source is).
macro_rules! registry {
    ($( $(#[doc = $doc:literal])* $(#[cfg($cfg:meta)])?
        $name:ident $( ( $arg:ty ) )? : $rec:ty as $short:literal = $parse:expr
        $(, poll $check:expr)? $(, kind $kind:literal $(| $alias:literal)*)? ; $def:expr
    ),* $(,)?) => {
        /// One thing ifxtop collects. Its `label` is how a DBA would type it (`onstat -u`) or,
        /// for a file read directly, its path; recordings name their samples by it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Source {
            $( $(#[doc = $doc])* $(#[cfg($cfg)])? $name $( ($arg) )? ),*
        }

        /// The typed key of every source: a constant for a source without an argument
        /// (`key::OnstatU`), a function of its argument for one with (`key::OnstatGSes(sid)`).
        #[allow(non_upper_case_globals, non_snake_case, private_interfaces)]
        pub mod key {
            use super::*;
            $( $(#[cfg($cfg)])? registry!(@key $name, $rec $(, $arg)?); )*
        }

        /// The sources `ifxtop parse` reads by a kind name, in the registry's order
        /// (`source::kinds` lists them with the rest).
        pub(crate) fn kinds() -> Vec<KindEntry> {
            let mut all = Vec::new();
            $( $(#[cfg($cfg)])? {
                $( all.push(KindEntry {
                    name: $kind,
                    aliases: &[$($alias),*],
                    run: ($def).run,
                    parse: |text| {
                        let typed: fn(&str) -> Result<$rec, ParseError> = $parse;
                        parsed(typed(text))
                    },
                }); )?
            } )*
            all
        }

        impl Source {
            /// Its entry in the registry.
            pub(crate) fn def(&self) -> &'static SourceDef {
                match self {
                    $( $(#[cfg($cfg)])? Source::$name { .. } => {
                        const DEF: SourceDef = $def;
                        &DEF
                    } )*
                }
            }

            /// Reads what it printed as its record type (the one its [`Key`] promises), with
            /// the poll's rule for a source that has one (a cut `onstat -u` is refused).
            pub(crate) fn parse_str(&self, text: &str) -> Result<Parsed, ParseError> {
                match self {
                    $( $(#[cfg($cfg)])? Source::$name { .. } => {
                        let typed: fn(&str) -> Result<$rec, ParseError> = $parse;
                        parsed(typed(text) $( .and_then($check) )?)
                    } )*
                }
            }

            /// Its short name in the header's list of sources (`-u`, `con`, `disk`); empty
            /// for one the header shows otherwise.
            pub fn short(&self) -> &'static str {
                match self {
                    $( $(#[cfg($cfg)])? Source::$name { .. } => $short, )*
                }
            }

            /// The argument of a source that has one (a session id, a node, a pid), as text.
            pub(crate) fn arg(&self) -> Option<String> {
                match self {
                    $( $(#[cfg($cfg)])?
                        registry!(@bind $name x $($arg)?) => registry!(@show x $($arg)?) ),*
                }
            }

            /// Every source whose argument (if it takes one) reads from `arg`: the candidates a
            /// label is matched against.
            fn candidates(arg: Option<&str>) -> Vec<Source> {
                let mut all = Vec::new();
                $( $(#[cfg($cfg)])? if let Some(s) = registry!(@make $name arg $($arg)?) {
                    all.push(s);
                } )*
                all
            }
        }
    };
    (@key $name:ident, $rec:ty) => {
        /// The typed key of this source.
        pub const $name: Key<$rec> = Key::new(Source::$name);
    };
    (@key $name:ident, $rec:ty, $arg:ty) => {
        /// The typed key of this source for one argument.
        pub fn $name(arg: $arg) -> Key<$rec> {
            Key::new(Source::$name(arg))
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

impl Source {
    /// Its rows are each one line's alone, so a [`LineMemo`] gives the rows of unchanged lines
    /// again ([`Source::parse_str_memo`]). `onstat -g con`'s rows are remembered without their
    /// wait time, which ticks every second (whole lines are hardly ever the same).
    pub fn memoised(&self) -> bool {
        matches!(
            self,
            Source::OnstatU
                | Source::OnstatGAth
                | Source::OnstatGCon
                | Source::OnstatK
                | Source::OnstatXTxn
                | Source::ProcNetTcp
                | Source::ProcNetTcp6
        )
    }

    /// `parse_str` through the source's memo of its last parse, for a source that is
    /// `memoised`; `None` for another.
    pub(crate) fn parse_str_memo(
        &self,
        text: &str,
        memo: &mut LineMemo,
    ) -> Option<Result<Parsed, ParseError>> {
        use parsers::{onstat_g_ath, onstat_g_con, onstat_k, onstat_u, onstat_x_txn, sockets};
        Some(match self {
            Source::OnstatU => memo.read(text, onstat_u::parse_memo, complete_u),
            Source::OnstatGAth => memo.read(text, onstat_g_ath::parse_memo, Ok),
            Source::OnstatGCon => memo.read(text, onstat_g_con::parse_memo, Ok),
            Source::OnstatK => memo.read(text, onstat_k::parse_memo, Ok),
            Source::OnstatXTxn => memo.read(text, onstat_x_txn::parse_memo, Ok),
            Source::ProcNetTcp | Source::ProcNetTcp6 => {
                memo.read(text, sockets::parse_proc_net_tcp_memo, Ok)
            }
            _ => return None,
        })
    }
}

registry! {
    /// User threads: flags, wait address, session, counters.
    OnstatU: parsers::onstat_u::OnstatU as "-u" = parsers::onstat_u::parse, poll complete_u,
        kind "onstat-u";
        SourceDef::onstat(&["-u"], PERIOD_FAST),
    /// Buffers being accessed: owner, waiters, page.
    OnstatX: parsers::onstat_x::OnstatX as "-X" = parsers::onstat_x::parse, kind "onstat-X";
        SourceDef::onstat(&["-X"], PERIOD_BUFFERS),
    /// Conditions with waiters.
    OnstatGCon: parsers::onstat_g_con::OnstatGCon as "con" = parsers::onstat_g_con::parse,
        kind "onstat-g-con";
        SourceDef::onstat(&["-g", "con"], PERIOD_FAST),
    /// Threads: tid ↔ rstcb ↔ name.
    OnstatGAth: parsers::onstat_g_ath::OnstatGAth as "ath" = parsers::onstat_g_ath::parse,
        kind "onstat-g-ath";
        SourceDef::onstat(&["-g", "ath"], PERIOD_THREADS),
    /// Threads' CPU seconds: each session's CPU use between two samples, joined through the
    /// `-g ath` and `-u` read with it. Read with `-g ath`, so the three share a moment.
    OnstatGCpu: parsers::onstat_g_cpu::OnstatGCpu as "cpu" = parsers::onstat_g_cpu::parse,
        kind "onstat-g-cpu";
        SourceDef::onstat(&["-g", "cpu"], PERIOD_THREADS),
    /// Network threads: session ↔ client `host|port`.
    OnstatGNtt: parsers::onstat_g_ntt::OnstatGNtt as "ntt" = parsers::onstat_g_ntt::parse,
        kind "onstat-g-ntt";
        SourceDef::onstat(&["-g", "ntt"], PERIOD_THREADS),
    /// Locks: owner, waiters, partnum.
    OnstatK: parsers::onstat_k::OnstatK as "-k" = parsers::onstat_k::parse, kind "onstat-k";
        SourceDef::onstat(&["-k"], PERIOD_JOINS),
    /// Profile counters: per-second rates between two samples.
    OnstatP: parsers::onstat_p::OnstatP as "-p" = parsers::onstat_p::parse, kind "onstat-p";
        SourceDef::onstat(&["-p"], PERIOD_VITALS),
    /// Physical and logical logs: fill, backups, the current log.
    OnstatL: parsers::onstat_l::OnstatL as "-l" = parsers::onstat_l::parse, kind "onstat-l";
        SourceDef::onstat(&["-l"], PERIOD_VITALS),
    /// Latches held or waited for: who is behind an S waiter.
    OnstatS: parsers::onstat_s::OnstatS as "-s" = parsers::onstat_s::parse, kind "onstat-s";
        SourceDef::onstat(&["-s"], PERIOD_VITALS),
    /// Transactions: the oldest open one and the logs it spans.
    OnstatXTxn: parsers::onstat_x_txn::OnstatXTxn as "-x" = parsers::onstat_x_txn::parse,
        kind "onstat-x" | "onstat-x-txn";
        SourceDef::onstat(&["-x"], PERIOD_VITALS),
    /// VP classes and their CPU seconds: busy % between samples.
    OnstatGGlo: parsers::onstat_g_glo::OnstatGGlo as "glo" = parsers::onstat_g_glo::parse,
        kind "onstat-g-glo";
        SourceDef::onstat(&["-g", "glo"], PERIOD_CPU),
    /// Threads ready to run but waiting for a VP.
    OnstatGRea: parsers::onstat_g_rea::OnstatGRea as "rea" = parsers::onstat_g_rea::parse,
        kind "onstat-g-rea";
        SourceDef::onstat(&["-g", "rea"], PERIOD_CPU),
    /// Mutexes held, with their waiters.
    OnstatGLmx: parsers::onstat_g_lmx::OnstatGLmx as "lmx" = parsers::onstat_g_lmx::parse,
        kind "onstat-g-lmx";
        SourceDef::onstat(&["-g", "lmx"], PERIOD_CPU),
    /// Mutexes with waiters.
    OnstatGWmx: parsers::onstat_g_wmx::OnstatGWmx as "wmx" = parsers::onstat_g_wmx::parse,
        kind "onstat-g-wmx";
        SourceDef::onstat(&["-g", "wmx"], PERIOD_CPU),
    /// The engine's blocker graph (14.10+): MGM and condition blockers `-k` cannot see.
    OnstatGBth: parsers::onstat_g_bth::OnstatGBth as "bth" = parsers::onstat_g_bth::parse,
        kind "onstat-g-bth" | "onstat-g-BTH";
        SourceDef::onstat(&["-g", "bth"], PERIOD_CPU).since(14, 10),
    /// Per-thread profiles: log space used (who fills the logs).
    OnstatGTpf: parsers::onstat_g_tpf::OnstatGTpf as "tpf" = parsers::onstat_g_tpf::parse,
        kind "onstat-g-tpf";
        SourceDef::onstat(&["-g", "tpf"], PERIOD_HISTORY).offset(3),
    /// The last checkpoints: trigger, times, waits, whether they blocked.
    OnstatGCkp: parsers::onstat_g_ckp::OnstatGCkp as "ckp" = parsers::onstat_g_ckp::parse,
        kind "onstat-g-ckp";
        SourceDef::onstat(&["-g", "ckp"], PERIOD_HISTORY),
    /// Shared-memory segments: growth since start.
    OnstatGSeg: parsers::onstat_g_seg::OnstatGSeg as "seg" = parsers::onstat_g_seg::parse,
        kind "onstat-g-seg";
        SourceDef::onstat(&["-g", "seg"], PERIOD_MEMORY),
    /// Every session's memory (total and used of its pool): the list form of `-g ses`, without
    /// a session id. Short name `mem`: the `ses` of the header is the session screen's.
    OnstatGSesList: parsers::onstat_g_ses::OnstatGSes as "mem" = parsers::onstat_g_ses::parse,
        kind "onstat-g-ses";
        SourceDef::onstat(&["-g", "ses"], PERIOD_SESSION_MEMORY).offset(17),
    /// One session's detail, for the session screen.
    OnstatGSes(Sid): parsers::onstat_g_ses::OnstatGSes as "ses" = parsers::onstat_g_ses::parse;
        SourceDef::onstat(&["-g", "ses", "{}"], PERIOD_JOINS).collected_by(Collector::Focus),
    /// One session's SQL, for the session screen.
    OnstatGSql(Sid): parsers::onstat_g_sql::OnstatGSql as "sql" = parsers::onstat_g_sql::parse,
        kind "onstat-g-sql";
        SourceDef::onstat(&["-g", "sql", "{}"], PERIOD_JOINS).collected_by(Collector::Focus),
    /// The operators of the query a session runs (its plan as it runs), for the session
    /// screen: asked only while the screen is open (12.10+).
    OnstatGPqs(Sid): parsers::onstat_g_pqs::OnstatGPqs as "pqs" = parsers::onstat_g_pqs::parse,
        kind "onstat-g-pqs";
        SourceDef::onstat(&["-g", "pqs", "{}"], PERIOD_JOINS)
            .collected_by(Collector::Focus)
            .since(12, 10),
    /// The extent map: chunk:page → object. No short name: the header's map span says its
    /// state.
    OncheckPe: ExtentMap as "" = ExtentMap::from_oncheck_pe;
        SourceDef {
            run: Run::Command(&["oncheck", "-pe"]),
            period: ON_DEMAND,
            timeout: ONCHECK_TIMEOUT,
            exit: ExitPolicy::ZeroIsSuccess,
            collector: Collector::Extents,
            ..SourceDef::BASE
        },
    // Chunk I/O, devices and replication.
    /// Per chunk: pages read and written (rates between two samples). Not a `-g` option: it
    /// joins the grouped onstat call.
    OnstatDUpper: parsers::onstat_d_upper::OnstatDUpper as "-D" = parsers::onstat_d_upper::parse,
        kind "onstat-D";
        SourceDef::onstat(&["-D"], PERIOD_IO),
    /// Per chunk file: operations, and Informix's own average time per operation.
    OnstatGIof: parsers::onstat_g_iof::OnstatGIof as "iof" = parsers::onstat_g_iof::parse,
        kind "onstat-g-iof";
        SourceDef::onstat(&["-g", "iof"], PERIOD_HA),
    /// Per block device: I/Os completed, ms spent, busy time (await and %util from two
    /// samples).
    ProcDiskstats: parsers::proc_diskstats::ProcDiskstats as "disk" =
        parsers::proc_diskstats::parse, kind "proc-diskstats";
        SourceDef::file("/proc/diskstats", PERIOD_DEVICES, Collector::Devices),
    /// Each chunk path's block device and the disks under it: `stat -L` of the chunk paths,
    /// then `/sys/dev/block` files; recorded as the transcript of every request
    /// (`parsers::chunk_devices`), resolved once per chunk list.
    ChunkDevices: parsers::chunk_devices::ChunkDevices as "devices" =
        parsers::chunk_devices::parse;
        SourceDef {
            run: Run::Command(&["stat", "-L", "-c", parsers::chunk_devices::STAT_FORMAT, "--"]),
            period: ON_DEMAND,
            timeout: FILE_TIMEOUT,
            exit: ExitPolicy::ZeroIsSuccess,
            collector: Collector::Devices,
            any_options: true,
            ..SourceDef::BASE
        },
    /// The HA cluster as this server sees it: the primary's current log page, each peer's
    /// acknowledged position, type and state.
    OnstatGCluster: parsers::onstat_g_cluster::OnstatGCluster as "cluster" =
        parsers::onstat_g_cluster::parse, kind "onstat-g-cluster";
        SourceDef::onstat(&["-g", "cluster"], PERIOD_HA).collected_by(Collector::Ha),
    /// RSS secondaries: backlog, pages not yet acknowledged, log transmission blocked or not.
    OnstatGRss: parsers::onstat_g_rss::OnstatGRss as "rss" = parsers::onstat_g_rss::parse,
        kind "onstat-g-rss";
        SourceDef::onstat(&["-g", "rss", "verbose"], PERIOD_HA).collected_by(Collector::Ha),
    /// SDS secondaries: backlog and the last acknowledgement.
    OnstatGSds: parsers::onstat_g_sds::OnstatGSds as "sds" = parsers::onstat_g_sds::parse,
        kind "onstat-g-sds";
        SourceDef::onstat(&["-g", "sds", "verbose"], PERIOD_HA).collected_by(Collector::Ha),
    /// HDR: the pair's state, the backlog, the last log page applied.
    OnstatGDri: parsers::onstat_g_dri::OnstatGDri as "dri" = parsers::onstat_g_dri::parse,
        kind "onstat-g-dri";
        SourceDef::onstat(&["-g", "dri"], PERIOD_HA).collected_by(Collector::Ha),
    /// Sockets where /proc/net/tcp is missing.
    Netstat: parsers::sockets::Sockets as "netstat" = parsers::sockets::parse_netstat,
        kind "netstat";
        SourceDef {
            run: Run::Command(&["netstat", "-an"]),
            period: PERIOD_FAST,
            timeout: ONSTAT_TIMEOUT,
            exit: ExitPolicy::ZeroIsSuccess,
            collector: Collector::Sockets,
            any_options: true,
            ..SourceDef::BASE
        },
    /// TCP sockets over IPv4: Send-Q per connection.
    ProcNetTcp: parsers::sockets::Sockets as "tcp" = parsers::sockets::parse_proc_net_tcp,
        kind "proc-net-tcp";
        SourceDef::file("/proc/net/tcp", PERIOD_FAST, Collector::Sockets),
    /// TCP sockets over IPv6.
    ProcNetTcp6: parsers::sockets::Sockets as "tcp6" = parsers::sockets::parse_proc_net_tcp;
        SourceDef::file("/proc/net/tcp6", PERIOD_FAST, Collector::Sockets),
    /// The NUMA nodes (`0-1`).
    NodesOnline: parsers::numa::CpuList as "nodes" =
        |t| parsers::numa::parse_cpulist(t).map(parsers::numa::CpuList);
        SourceDef::file("/sys/devices/system/node/online", PERIOD_NUMA, Collector::Numa),
    /// A node's memory: total, free, file pages.
    NodeMeminfo(u32): parsers::numa::NodeMeminfo as "meminfo" = parsers::numa::parse_node_meminfo,
        kind "node-meminfo";
        SourceDef::file(
            "/sys/devices/system/node/node{}/meminfo",
            PERIOD_NUMA,
            Collector::Numa,
        ),
    /// A node's CPUs.
    NodeCpulist(u32): parsers::numa::CpuList as "cpulist" =
        |t| parsers::numa::parse_cpulist(t).map(parsers::numa::CpuList);
        SourceDef::file(
            "/sys/devices/system/node/node{}/cpulist",
            PERIOD_DISCOVERY,
            Collector::Numa,
        ),
    /// Whether the kernel reclaims memory on a node before it uses another.
    ZoneReclaimMode: parsers::numa::ZoneReclaimMode as "zone" =
        |t| parsers::numa::parse_zone_reclaim_mode(t).map(parsers::numa::ZoneReclaimMode);
        SourceDef::file("/proc/sys/vm/zone_reclaim_mode", PERIOD_NUMA, Collector::Numa),
    /// Page scans and NUMA counters.
    Vmstat: parsers::numa::Vmstat as "numa" =
        |t| parsers::numa::parse_vmstat(t).map(parsers::numa::Vmstat);
        SourceDef::file("/proc/vmstat", PERIOD_NUMA, Collector::Numa),
    /// Where an oninit process's memory sits, per node.
    NumaMaps(u32): parsers::numa::NumaMaps as "numa_maps" = parsers::numa::parse_numa_maps,
        kind "numa-maps";
        SourceDef::file("/proc/{}/numa_maps", PERIOD_NUMA_MAPS, Collector::Numa),
    /// `sysmaster:systabnames` through dbaccess: partnum → table name.
    Systabnames: parsers::systabnames::Systabnames as "tables" = parsers::systabnames::parse;
        SourceDef {
            run: Run::Dbaccess {
                database: "sysmaster",
                query: parsers::systabnames::QUERY,
            },
            period: PERIOD_TABLES,
            timeout: DBACCESS_TIMEOUT,
            exit: ExitPolicy::ZeroIsSuccess,
            collector: Collector::Poll,
            ..SourceDef::BASE
        },
    /// A toy, in test builds only: with its parser (`parsers::toy`) this entry is a whole
    /// source, collected, recorded, stored, listed and parsed (`instance::toy` shows it).
    #[cfg(test)]
    Toy: parsers::toy::LoadAvg as "toy" = parsers::toy::parse, kind "toy-loadavg";
        SourceDef::file("/proc/loadavg", PERIOD_FAST, Collector::Poll),
}

/// `template` with its `{}` replaced by `arg` (when it has one).
fn fill(template: &str, arg: Option<&str>) -> String {
    match arg {
        Some(a) => template.replacen("{}", a, 1),
        None => template.to_string(),
    }
}

impl Run {
    /// What it runs as a DBA would type it, with `arg` in its `{}`: `onstat -g ses 812`,
    /// `/proc/1234/numa_maps`. Without one, an argument word is left out and a path says `N`
    /// (`onstat -g ses`, `/proc/N/numa_maps`): how `ifxtop parse` names a kind's command.
    pub(crate) fn text(&self, arg: Option<&str>) -> String {
        let words = |argv: &[&str]| -> Vec<String> {
            argv.iter()
                .filter(|w| arg.is_some() || **w != "{}")
                .map(|w| fill(w, arg))
                .collect()
        };
        match *self {
            Run::Onstat(options) => std::iter::once("onstat".to_string())
                .chain(words(options))
                .collect::<Vec<_>>()
                .join(" "),
            Run::Command(argv) => words(argv).join(" "),
            Run::Dbaccess { database, .. } => format!("dbaccess {database} -"),
            Run::File(path) => fill(path, arg.or(Some("N"))),
        }
    }
}

/// What a call of a source costs the server: an onstat process, another command's process
/// (oncheck, dbaccess, stat, netstat...), or a file read (`/proc`, `/sys`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CallKind {
    #[default]
    Onstat,
    Command,
    FileRead,
}

impl Source {
    /// What a call of it costs: a process (onstat, another command) or a file read.
    pub fn call_kind(&self) -> CallKind {
        match self.def().run {
            Run::Onstat(_) => CallKind::Onstat,
            Run::Command(_) | Run::Dbaccess { .. } => CallKind::Command,
            Run::File(_) => CallKind::FileRead,
        }
    }

    /// `onstat -u`, `/proc/net/tcp`, `/sys/devices/system/node/node0/meminfo`, ...
    pub fn label(&self) -> String {
        self.def().run.text(self.arg().as_deref())
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

    /// Where in its period it is due (see `SourceDef::offset`): zero for most.
    pub fn phase(&self) -> Duration {
        self.def().phase
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry, those with an argument with a sample one.
    fn every_entry() -> Vec<Source> {
        let mut all = Source::candidates(None);
        all.extend(Source::candidates(Some("42")));
        all
    }

    #[test]
    fn every_entry_has_a_short_name() {
        let all = every_entry();
        assert!(all.len() >= 39, "{all:?}");
        for s in all {
            // The header lists it (the extent map has a span of its own).
            if s != Source::OncheckPe {
                assert!(!s.short().is_empty(), "{s:?} has no short name");
            }
        }
        assert_eq!(Source::OnstatU.short(), "-u");
        assert_eq!(Source::OnstatGRss.short(), "rss");
        assert_eq!(Source::NodeMeminfo(3).short(), "meminfo");
    }

    /// The list and one session's detail are two sources of one parser, told apart by the
    /// session id: a recording's label finds each.
    #[test]
    fn the_session_list_and_one_session_are_two_labels() {
        assert_eq!(Source::OnstatGSesList.label(), "onstat -g ses");
        assert_eq!(
            Source::from_label("onstat -g ses"),
            Some(Source::OnstatGSesList)
        );
        assert_eq!(
            Source::from_label("onstat -g ses 812"),
            Some(Source::OnstatGSes(Sid(812)))
        );
        assert!(Source::polled().contains(&Source::OnstatGSesList));
        // Its parser reads the real list (oninit.com's): every session with its memory.
        let text = include_str!("../../tests/fixtures/onstat-g-ses/oninit-onstat-g-ses.txt");
        let parsed = Source::OnstatGSesList.parse_str(text).expect("the list");
        let list = parsed
            .get::<parsers::onstat_g_ses::OnstatGSes>()
            .expect("an onstat -g ses");
        assert_eq!(list.sessions.len(), 11);
        assert_eq!(
            list.sessions
                .iter()
                .find(|r| r.sid == Sid(1458))
                .map(|r| (r.total_memory, r.used_memory)),
            Some((782_336, 735_584))
        );
    }

    #[test]
    fn a_key_names_its_source_and_its_parser_makes_its_type() {
        assert_eq!(key::OnstatU.source(), Source::OnstatU);
        assert_eq!(key::OnstatGSes(Sid(7)).source(), Source::OnstatGSes(Sid(7)));
        let text = "IBM Informix Dynamic Server Version 12.10.FC8 -- On-Line -- Up 00:01:00 -- 100 Kbytes\n\nUserthreads\naddress          flags   sessid   user     tty      wait             tout locks nreads   nwrites\n1 active, 128 total, 1 maximum concurrent\n";
        let parsed = Source::OnstatU.parse_str(text).expect("an onstat -u");
        assert!(parsed.get::<parsers::onstat_u::OnstatU>().is_some());
    }
}
