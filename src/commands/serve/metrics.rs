//! What `ifxtop serve` exports: every metric's name, type and help in one table, the series one
//! instance exports (taken from its store and snapshot when its data settles, never per scrape),
//! and the text a scrape encodes from them with `prometheus-client` (OpenMetrics, or the
//! Prometheus text format 0.0.4 for clients that do not ask for OpenMetrics).
//!
//! A series is exported while the source it comes from answers: when that source's latest run
//! failed (the server off-line, ssh down, an onstat that timed out), its series go, so
//! Prometheus marks them stale at the next scrape instead of graphing old values as current.
//! `informix_up` and `informix_data_age_seconds` say what is missing and since when.

use crate::model::snapshot::Snapshot;
use crate::parsers::onstat_u::WaitReason;
use crate::source::Source;
use crate::store::Store;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Gauge,
    Counter,
}

/// Declares every metric once: its id, type, full exported name (counters with their `_total`)
/// and help. The order here is the order of the exposition.
macro_rules! metrics {
    ($( $id:ident => $kind:ident $name:literal $help:literal; )*) => {
        /// One metric of the exposition.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Metric { $($id),* }

        impl Metric {
            /// Every metric, in the order of the exposition.
            pub const ALL: &'static [Metric] = &[$(Metric::$id),*];

            /// The name as exported (counters end in `_total`).
            pub fn name(self) -> &'static str {
                match self { $(Metric::$id => $name),* }
            }

            pub fn help(self) -> &'static str {
                match self { $(Metric::$id => $help),* }
            }

            fn kind(self) -> Kind {
                match self { $(Metric::$id => Kind::$kind),* }
            }
        }
    };
}

metrics! {
    Up => Gauge "informix_up"
        "1 when the instance answered its last onstat -u, else 0 (off-line, ssh down, onstat failing or not answered yet)";
    DataAge => Gauge "informix_data_age_seconds"
        "Age of the newest onstat -u data at the scrape";
    Uptime => Gauge "informix_uptime_seconds"
        "How long the server has been up, from the onstat banner";
    ServerInfo => Gauge "informix_server_info"
        "Always 1, labelled with the banner's version and mode and the server's replication role (primary, standard, RSS secondary...): a mode change or a role switch changes its labels";
    Blocked => Gauge "informix_blocked"
        "1 while the onstat banner says Blocked:REASON, 0 for the other known reasons";
    WaitingThreads => Gauge "informix_waiting_threads"
        "Threads waiting, by what onstat -u says they wait on (idle client waits not counted)";
    IdleClientWaits => Gauge "informix_idle_client_waits"
        "Threads waiting for their client to send the next request (not a server problem)";
    LongestWait => Gauge "informix_longest_wait_seconds"
        "The longest current wait, by what it waits on (0 when nothing waits on it)";
    LongestWaitLowerBound => Gauge "informix_longest_wait_lower_bound"
        "1 when the longest current wait of that reason was already on when ifxtop first saw it: its seconds are a lower bound";
    HeadBlockers => Gauge "informix_head_blockers"
        "Sessions that block others without being blocked themselves";
    BlockedWaiters => Gauge "informix_blocked_waiters"
        "Waiting threads whose blocker chain ends at a head blocker session";
    DeadlockedThreads => Gauge "informix_deadlocked_threads"
        "Waiting threads in a blocker chain that loops back (a deadlock)";
    LockWaits => Counter "informix_lock_waits_total"
        "onstat -p lokwaits: waits for a lock (goes down after onstat -z; rate() treats that as a reset)";
    LockRequests => Counter "informix_lock_requests_total"
        "onstat -p lockreqs: lock requests";
    BufferWaits => Counter "informix_buffer_waits_total"
        "onstat -p bufwaits: waits for a buffer";
    LatchWaits => Counter "informix_latch_waits_total"
        "onstat -p lchwaits: waits for a latch";
    Deadlocks => Counter "informix_deadlocks_total"
        "onstat -p deadlks: deadlocks detected";
    DeadlockTimeouts => Counter "informix_deadlock_timeouts_total"
        "onstat -p dltouts: distributed deadlock time-outs";
    CheckpointWaits => Counter "informix_checkpoint_waits_total"
        "onstat -p ckpwaits: waits for a checkpoint to finish";
    Checkpoints => Counter "informix_checkpoints_total"
        "onstat -p numckpts: checkpoints";
    SequentialScans => Counter "informix_sequential_scans_total"
        "onstat -p seqscans: sequential scans";
    Commits => Counter "informix_commits_total"
        "onstat -p commit: transactions committed";
    Rollbacks => Counter "informix_rollbacks_total"
        "onstat -p rollbk: transactions rolled back";
    IsamCalls => Counter "informix_isam_calls_total"
        "onstat -p isamtot: ISAM calls";
    DiskReads => Counter "informix_disk_reads_total"
        "onstat -p dskreads: read operations from disk";
    DiskWrites => Counter "informix_disk_writes_total"
        "onstat -p dskwrits: write operations to disk";
    BufferReads => Counter "informix_buffer_reads_total"
        "onstat -p bufreads: reads served from the buffer pool";
    BufferWrites => Counter "informix_buffer_writes_total"
        "onstat -p bufwrits: writes to the buffer pool";
    LockTableOverflows => Counter "informix_lock_table_overflows_total"
        "onstat -p ovlock: times the lock table overflowed";
    UserThreadOverflows => Counter "informix_user_thread_overflows_total"
        "onstat -p ovuserthread: times the user-thread table overflowed";
    BufferOverflows => Counter "informix_buffer_overflows_total"
        "onstat -p ovbuff: times no buffer was free";
    CpuSeconds => Counter "informix_cpu_seconds_total"
        "onstat -p usercpu and syscpu: CPU seconds of the server's VPs, by mode";
    CheckpointDuration => Gauge "informix_checkpoint_duration_seconds"
        "The last checkpoint of onstat -g ckp: total time";
    CheckpointFlush => Gauge "informix_checkpoint_flush_seconds"
        "The last checkpoint of onstat -g ckp: time flushing buffers";
    CheckpointBlock => Gauge "informix_checkpoint_block_seconds"
        "The last checkpoint of onstat -g ckp: how long transactions were blocked";
    CheckpointCritical => Gauge "informix_checkpoint_critical_wait_seconds"
        "The last checkpoint of onstat -g ckp: the longest wait for threads to leave critical sections";
    BlockingCheckpoints => Counter "informix_blocking_checkpoints_total"
        "Checkpoints onstat -g ckp marked blocking, counted by ifxtop from its first look at the history";
    LogUsed => Gauge "informix_logical_log_used_ratio"
        "Share of logical-log pages used and not yet free for reuse (0 to 1)";
    LogsNotBackedUp => Gauge "informix_logical_logs_not_backed_up"
        "Logical-log files used and not backed up";
    Logs => Gauge "informix_logical_logs"
        "Logical-log files";
    PhysicalLogUsed => Gauge "informix_physical_log_used_ratio"
        "How full the physical log is (0 to 1)";
    OldestTransactionLogs => Gauge "informix_oldest_transaction_logs_spanned"
        "Logical logs from the one the oldest open transaction began in to the current one";
    VpBusy => Gauge "informix_vp_busy_ratio"
        "How busy the VPs of a class were over the last interval (0 to 1 per VP)";
    Vps => Gauge "informix_vps"
        "VPs per class";
    VpCpuSeconds => Counter "informix_vp_cpu_seconds_total"
        "onstat -g glo: CPU seconds of the VPs of a class, by mode";
    ReadyThreads => Gauge "informix_ready_threads"
        "Threads ready to run and waiting for a VP (onstat -g rea)";
    SharedMemory => Gauge "informix_shared_memory_bytes"
        "Shared memory of the instance (onstat -g seg)";
    SharedMemoryGrowth => Gauge "informix_shared_memory_growth_bytes"
        "Growth of shared memory since ifxtop serve started watching";
    SharedMemorySegments => Gauge "informix_shared_memory_segments"
        "Shared memory segments";
    SharedMemoryClass => Gauge "informix_shared_memory_class_bytes"
        "Shared memory by segment class (R resident, V virtual, M message, B buffer pool...)";
    ClientConnections => Gauge "informix_client_connections"
        "TCP connections of clients on a listener port";
    SendQueue => Gauge "informix_send_queue_bytes"
        "Bytes in the Send-Q of the client connections of a listener port, summed";
    SendQueueMax => Gauge "informix_send_queue_max_bytes"
        "The largest Send-Q of one client connection of a listener port, now";
    SendQueueWindowMax => Gauge "informix_send_queue_window_max_bytes"
        "The largest Send-Q of one client connection of a listener port over the socket window (60 s by default)";
    ZoneReclaimMode => Gauge "informix_host_zone_reclaim_mode"
        "/proc/sys/vm/zone_reclaim_mode of the host (anything but 0 stalls database servers)";
    OninitNumaNode => Gauge "informix_oninit_numa_node_bytes"
        "Memory of the oninit processes on a NUMA node (shared segments counted once)";
    SourceUp => Gauge "ifxtop_source_up"
        "1 when the latest run of an ifxtop source (onstat_u, onstat_g_ckp, proc_diskstats...) succeeded; 0 when one of that name failed";
    ChunkPageReads => Counter "informix_chunk_page_reads_total"
        "onstat -D page Rd: pages read from a chunk since the server started";
    ChunkPageWrites => Counter "informix_chunk_page_writes_total"
        "onstat -D page Wr: pages written to a chunk since the server started";
    ChunkReadLatency => Gauge "informix_chunk_read_latency_seconds"
        "Informix's average time per read of a chunk over the last interval (onstat -g iof)";
    ChunkWriteLatency => Gauge "informix_chunk_write_latency_seconds"
        "Informix's average time per write of a chunk over the last interval (onstat -g iof)";
    ChunkDeviceAwait => Gauge "informix_chunk_device_await_seconds"
        "Average time per I/O of the block device under a chunk (/proc/diskstats between two samples)";
    ChunkDeviceBusy => Gauge "informix_chunk_device_busy_ratio"
        "Share of the time the block device under a chunk was busy (/proc/diskstats, 1 = 100 %)";
    ReplicationLagPages => Gauge "informix_replication_lag_pages"
        "Logical-log pages a secondary has not acknowledged (onstat -g cluster / -g rss / -g sds / -g dri)";
    ReplicationLagSeconds => Gauge "informix_replication_lag_seconds"
        "How far behind a secondary is in time; while its acknowledged position is older than ifxtop's log history, the history's length (a lower bound)";
    ReplicationLagLowerBound => Gauge "informix_replication_lag_lower_bound"
        "1 when informix_replication_lag_seconds of that secondary is a lower bound (it is at least that far behind)";
    ReplicationBlocked => Gauge "informix_replication_transmission_blocked"
        "1 when log transmission to a secondary is blocked";
    FindingSeverity => Gauge "informix_finding_severity"
        "The worst severity of ifxtop's findings of a kind (lock_chain, checkpoint_blocked, ... docs/findings.md): 0 none holds, 1 info, 2 warning, 3 critical; every kind always, so a finding that comes, goes or worsens changes a value, never the series (cpu_saturation is absent until the CPU VPs' load is known, ring_stopped where no --ring is kept)";
    Sessions => Gauge "informix_sessions"
        "User sessions by state in the latest onstat -u: running, waiting (for the server), idle (waiting for their client), idle_in_txn (idle in an open transaction); the server's own daemons not counted";
    ActiveSessions => Gauge "informix_active_sessions"
        "Sessions active in the latest onstat -u sample, by class: on a CPU VP (cpu), waiting for one (cpu_wait), one or the other when no thread list of the moment tells (cpu_or_wait), waiting for a disk (io), or waiting for the server (lock, buffer, mutex, checkpoint, log_buffer, transaction, condition, other); idle client waits are not counted";
    DbTime => Counter "informix_db_time_seconds_total"
        "Database time by class since ifxtop serve started: each onstat -u sample's active sessions times the seconds it stands for (rate() of it: average active sessions)";
    SqlDbTime => Counter "informix_sql_db_time_seconds_total"
        "Database time by statement since ifxtop serve started, for the 20 statements with the most: each keyed by its fingerprint (its text with the values replaced by ?, blanks collapsed, its first 200 characters); the time of statements not read is fingerprint=\"(not read)\"";
    IfxtopCpu => Counter "ifxtop_cpu_seconds_total"
        "CPU time ifxtop has used since it started: itself (part=self; on the demo its simulation included, and that part alone as part=simulation) and the onstat and other processes it ran (part=children; absent on the demo, whose onstat is simulated)";
    SourceRuns => Counter "ifxtop_source_runs_total"
        "Runs of each of ifxtop's sources (calls made; several share one onstat -i process)";
    ShareViewers => Gauge "ifxtop_share_viewers"
        "Viewers attached to the instance's shared feed (--share), on its socket and over HTTPS; absent when not sharing";
    ShareSentBytes => Counter "ifxtop_share_sent_bytes_total"
        "Compressed feed bytes written to viewers of the shared feed since serve started";
    ShareDroppedViewers => Counter "ifxtop_share_dropped_viewers_total"
        "Viewers of the shared feed let go for leaving too much of it unread (a viewer never slows the collector)";
    RingWritten => Counter "ifxtop_ring_written_bytes_total"
        "Bytes the flight recorder (--ring) has written to its segments since serve started (compressed)";
    RingDisk => Gauge "ifxtop_ring_disk_bytes"
        "Bytes the flight recorder's ring holds on disk: its segments (part=segments) and the incidents cut out (part=incidents)";
    RingWriting => Gauge "ifxtop_ring_writing"
        "1 while the flight recorder writes, 0 once it stopped (a nearly full disk: the ring_stopped finding says why)";
}

/// How a series' value is encoded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Gauge(f64),
    /// A counter counted in whole numbers.
    Count(u64),
    /// A counter of seconds (CPU time).
    Counter(f64),
}

/// Extra labels of a series (beyond the instance's `server` and `host`).
type Labels = Vec<(&'static str, String)>;

/// One series of one instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub metric: Metric,
    pub labels: Labels,
    pub value: Value,
}

/// What ifxtop keeps across builds for the counters it counts itself.
#[derive(Debug, Clone, Default)]
pub struct Counted {
    /// The newest checkpoint interval seen in `onstat -g ckp`.
    last_checkpoint: Option<u64>,
    blocking_checkpoints: u64,
    /// Database time by class (seconds), in the order of `Class::ALL`, and the latest sample.
    db_time: Option<[f64; crate::model::activity::Class::COUNT]>,
    active: Option<crate::model::activity::ChartPoint>,
    /// Database time by statement fingerprint (seconds), at most [`MAX_FINGERPRINTS`].
    sql: rustc_hash::FxHashMap<String, f64>,
    /// Each active session's statement fingerprint, made again only when its words change.
    fingerprints: crate::model::activity::WordsMemo<String>,
    /// Room for a statement's words.
    words: String,
}

/// Statements exported (`informix_sql_db_time_seconds_total`): the ones with the most time.
pub(crate) const TOP_STATEMENTS: usize = 20;

/// Statements counted at most: past it, those with the least time go (a series that comes back
/// starts from 0, a counter reset `rate()` handles), so a server running endless distinct
/// statements does not grow `serve`.
const MAX_FINGERPRINTS: usize = 1_000;

impl Counted {
    /// A new activity sample (`model/activity.rs`): counted into the database time.
    pub(crate) fn sampled(&mut self, p: &crate::model::activity::ChartPoint) {
        let t = self
            .db_time
            .get_or_insert([0.0; crate::model::activity::Class::COUNT]);
        for (secs, n) in t.iter_mut().zip(p.counts) {
            *secs += f64::from(n) * f64::from(p.weight);
        }
        self.active = Some(*p);
    }

    /// The same sample's active sessions (`weight` seconds each): counted by statement.
    pub(crate) fn statements(
        &mut self,
        actives: &[crate::model::activity::Active<'_>],
        weight: f32,
    ) {
        for a in actives {
            let key = match a.sql {
                Some(q) => self
                    .fingerprints
                    .key(a.sid, q, &mut self.words, |words| {
                        crate::model::fingerprint::fingerprint(words)
                    })
                    .as_str(),
                None => crate::model::activity::NOT_READ,
            };
            match self.sql.get_mut(key) {
                Some(secs) => *secs += f64::from(weight),
                None => {
                    self.sql.insert(key.to_string(), f64::from(weight));
                }
            }
        }
        self.fingerprints.end_sample();
        if self.sql.len() > MAX_FINGERPRINTS {
            let mut v: Vec<(String, f64)> = self.sql.drain().collect();
            v.sort_by(|a, b| b.1.total_cmp(&a.1));
            v.truncate(MAX_FINGERPRINTS / 2);
            self.sql = v.into_iter().collect();
        }
    }

    /// Sessions whose statement fingerprint is kept from the last sample.
    #[cfg(test)]
    fn fingerprints_kept(&self) -> usize {
        self.fingerprints.len()
    }

    /// The statements with the most database time, at most `n`, the most first.
    fn top_statements(&self, n: usize) -> Vec<(&str, f64)> {
        let mut v: Vec<(&str, f64)> = self.sql.iter().map(|(k, s)| (k.as_str(), *s)).collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        v.truncate(n);
        v
    }
}

/// User sessions by state, every state always (0 when none): the server's own daemons are no
/// one's sessions.
fn sessions(out: &mut Out, snap: &Snapshot) {
    use crate::model::sessions::SessionState;
    let mut n = [0usize; 4];
    for s in snap.sessions.iter().filter(|s| !s.system) {
        n[match (s.state, s.in_txn) {
            (SessionState::Running, _) => 0,
            (SessionState::Waiting, _) => 1,
            (SessionState::Idle, false) => 2,
            (SessionState::Idle, true) => 3,
        }] += 1;
    }
    for (state, n) in ["running", "waiting", "idle", "idle_in_txn"]
        .into_iter()
        .zip(n)
    {
        out.gauge(Metric::Sessions, vec![("state", state.into())], n as f64);
    }
}

/// Active sessions by class and database time: one series per class (ten, bounded), from the
/// first sample on.
fn activity(out: &mut Out, counted: &Counted) {
    use crate::model::activity::Class;
    if let Some(p) = &counted.active {
        for c in Class::ALL {
            out.gauge(
                Metric::ActiveSessions,
                vec![("class", c.name().into())],
                f64::from(p.counts[c.index()]),
            );
        }
    }
    if let Some(t) = &counted.db_time {
        for c in Class::ALL {
            out.push(
                Metric::DbTime,
                vec![("class", c.name().into())],
                Value::Counter(t[c.index()]),
            );
        }
    }
    for (fingerprint, secs) in counted.top_statements(TOP_STATEMENTS) {
        out.push(
            Metric::SqlDbTime,
            vec![("fingerprint", fingerprint.to_string())],
            Value::Counter(secs),
        );
    }
}

/// What one instance exports at one moment.
#[derive(Debug, Clone)]
pub struct InstanceMetrics {
    /// `server`, and `host` for an instance watched over ssh.
    labels: Labels,
    up: bool,
    /// Age of the newest good `onstat -u` data when this was built (`None`: never answered).
    data_age_s: Option<f64>,
    built: Instant,
    /// Every series but `informix_up` and `informix_data_age_seconds`, in the order of `Metric`.
    series: Vec<Series>,
}

/// Wait reasons as label values, in the order of `WaitReason::ALL`.
fn reason_label(r: WaitReason) -> &'static str {
    match r {
        WaitReason::Buffer => "buffer",
        WaitReason::Checkpoint => "checkpoint",
        WaitReason::LogBuffer => "log_buffer",
        WaitReason::Lock => "lock",
        WaitReason::Mutex => "mutex",
        WaitReason::Transaction => "transaction",
        WaitReason::Condition => "condition",
        WaitReason::Rollback => "rollback",
        WaitReason::Defunct => "defunct",
    }
}

/// The reasons the banner's `Blocked:` names (always exported, 0 unless blocked by it).
pub const BLOCKED_REASONS: [&str; 8] = [
    "CKPT",
    "LONGTX",
    "ARCHIVE",
    "MEDIA_FAILURE",
    "HANG_SYSTEM",
    "DBS_DROP",
    "DDR",
    "LBU",
];

/// The `onstat -p` counters exported as they are, by their `onstat -p` name.
const PROFILE_COUNTERS: [(&str, Metric); 19] = [
    ("lokwaits", Metric::LockWaits),
    ("lockreqs", Metric::LockRequests),
    ("bufwaits", Metric::BufferWaits),
    ("lchwaits", Metric::LatchWaits),
    ("deadlks", Metric::Deadlocks),
    ("dltouts", Metric::DeadlockTimeouts),
    ("ckpwaits", Metric::CheckpointWaits),
    ("numckpts", Metric::Checkpoints),
    ("seqscans", Metric::SequentialScans),
    ("commit", Metric::Commits),
    ("rollbk", Metric::Rollbacks),
    ("isamtot", Metric::IsamCalls),
    ("dskreads", Metric::DiskReads),
    ("dskwrits", Metric::DiskWrites),
    ("bufreads", Metric::BufferReads),
    ("bufwrits", Metric::BufferWrites),
    ("ovlock", Metric::LockTableOverflows),
    ("ovuserthread", Metric::UserThreadOverflows),
    ("ovbuff", Metric::BufferOverflows),
];

/// The latest run of `s` succeeded (and it has data): its series are exported.
fn answers(store: &Store, s: Source) -> bool {
    store
        .source(&s)
        .is_some_and(|st| st.last_ok.is_some() && st.failing().is_none())
}

/// Collects the series of one instance.
struct Out(Vec<Series>);

impl Out {
    fn push(&mut self, metric: Metric, labels: Labels, value: Value) {
        let finite = match value {
            Value::Gauge(v) | Value::Counter(v) => v.is_finite(),
            Value::Count(_) => true,
        };
        // A value that is not a number says nothing: left out, never exported as NaN.
        if finite {
            self.0.push(Series {
                metric,
                labels,
                value,
            });
        }
    }

    fn gauge(&mut self, metric: Metric, labels: Labels, v: f64) {
        self.push(metric, labels, Value::Gauge(v));
    }
}

impl InstanceMetrics {
    /// The labels every series of an instance carries: `server` (`-` when none is named), and
    /// `host` when it is watched over ssh.
    fn instance_labels(server: Option<&str>, ssh_host: Option<&str>) -> Labels {
        let mut l = vec![("server", server.unwrap_or("-").to_string())];
        if let Some(h) = ssh_host {
            l.push(("host", h.to_string()));
        }
        l
    }

    /// An instance that has not answered yet: `informix_up` 0 and nothing else.
    pub fn waiting(server: Option<&str>, ssh_host: Option<&str>) -> InstanceMetrics {
        InstanceMetrics {
            labels: Self::instance_labels(server, ssh_host),
            up: false,
            data_age_s: None,
            built: Instant::now(),
            series: Vec::new(),
        }
    }

    /// This instance with nothing but `informix_up` 0 (its collection ended).
    pub(crate) fn gone(&self) -> InstanceMetrics {
        InstanceMetrics {
            labels: self.labels.clone(),
            up: false,
            data_age_s: None,
            built: self.built,
            series: Vec::new(),
        }
    }

    /// The instance's series from its store and the snapshot just built from it, at `built`.
    pub fn build(
        server: Option<&str>,
        ssh_host: Option<&str>,
        store: &Store,
        snap: &Snapshot,
        counted: &mut Counted,
        built: Instant,
    ) -> InstanceMetrics {
        let up = answers(store, Source::OnstatU);
        let data_age_s = snap
            .sources
            .iter()
            .find(|s| s.source == Source::OnstatU.label())
            .and_then(|s| s.age_s);
        let mut out = Out(Vec::new());
        if up {
            server_state(&mut out, snap);
            waits(&mut out, snap);
            findings(&mut out, snap);
            sessions(&mut out, snap);
            activity(&mut out, counted);
        }
        if answers(store, Source::OnstatP) {
            profile(&mut out, store);
        }
        if answers(store, Source::OnstatGCkp) {
            checkpoints(&mut out, snap, counted);
        }
        if answers(store, Source::OnstatL) {
            logs(&mut out, snap);
        }
        if answers(store, Source::OnstatGGlo) {
            vps(&mut out, snap, store);
        }
        if answers(store, Source::OnstatGRea) {
            if let Some(n) = snap.vitals.ready_queue {
                out.gauge(Metric::ReadyThreads, vec![], n as f64);
            }
        }
        if answers(store, Source::OnstatGSeg) {
            memory(&mut out, snap);
        }
        if answers(store, Source::ProcNetTcp) || answers(store, Source::Netstat) {
            sockets(&mut out, snap);
        }
        numa(&mut out, snap, store);
        if answers(store, Source::OnstatDUpper)
            || answers(store, Source::OnstatGIof)
            || answers(store, Source::ProcDiskstats)
        {
            io(&mut out, snap, store);
        }
        if [
            Source::OnstatGCluster,
            Source::OnstatGRss,
            Source::OnstatGSds,
            Source::OnstatGDri,
        ]
        .into_iter()
        .any(|s| answers(store, s))
        {
            replication(&mut out, snap);
        }
        sources(&mut out, snap);
        cost(&mut out, snap);
        let mut series = out.0;
        // Stable: within a metric, the order the groups pushed.
        series.sort_by_key(|s| s.metric);
        InstanceMetrics {
            labels: Self::instance_labels(server, ssh_host),
            up,
            data_age_s,
            built,
            series,
        }
    }

    pub fn up(&self) -> bool {
        self.up
    }

    /// With the shared feed's counts (`--share`): viewers attached, compressed bytes sent to
    /// them, viewers dropped for not reading.
    pub fn with_share(mut self, viewers: usize, sent_bytes: u64, dropped: u64) -> InstanceMetrics {
        let mut out = Out(std::mem::take(&mut self.series));
        out.gauge(Metric::ShareViewers, vec![], viewers as f64);
        out.push(Metric::ShareSentBytes, vec![], Value::Count(sent_bytes));
        out.push(Metric::ShareDroppedViewers, vec![], Value::Count(dropped));
        self.series = out.0;
        self.series.sort_by_key(|s| s.metric);
        self
    }

    /// Every series but `informix_up` and `informix_data_age_seconds`.
    pub fn series(&self) -> &[Series] {
        &self.series
    }

    /// The series of `metric`.
    fn of(&self, metric: Metric) -> &[Series] {
        let from = self.series.partition_point(|s| s.metric < metric);
        let to = self.series.partition_point(|s| s.metric <= metric);
        &self.series[from..to]
    }
}

/// Per chunk: `onstat -D`'s cumulative page counts (counters: `rate()` over the scrape's own
/// window, not ifxtop's) and Informix's times (while `onstat -D` / `-g iof` answer), and the
/// block device's await and busy share (while `/proc/diskstats` answers and the chunk's device is
/// known).
fn io(out: &mut Out, snap: &Snapshot, store: &Store) {
    let d_upper = answers(store, Source::OnstatDUpper)
        .then(|| store.get(crate::source::key::OnstatDUpper))
        .flatten();
    let iof = answers(store, Source::OnstatGIof);
    let disks = answers(store, Source::ProcDiskstats);
    for c in &snap.io.chunks {
        let l = || {
            vec![
                ("chunk", c.chunk.to_string()),
                ("dbspace", c.dbspace.clone().unwrap_or_default()),
            ]
        };
        if let Some(io) = d_upper.and_then(|d| d.chunks.iter().find(|k| k.chunk == c.chunk)) {
            out.push(Metric::ChunkPageReads, l(), Value::Count(io.page_rd));
            out.push(Metric::ChunkPageWrites, l(), Value::Count(io.page_wr));
        }
        if iof {
            // Only a time measured over the last interval (not the average since the reset).
            if let (Some(ms), Some(_)) = (c.avg_read_ms, c.avg_read_over_s) {
                out.gauge(Metric::ChunkReadLatency, l(), ms / 1000.0);
            }
            if let (Some(ms), Some(_)) = (c.avg_write_ms, c.avg_write_over_s) {
                out.gauge(Metric::ChunkWriteLatency, l(), ms / 1000.0);
            }
        }
        // The kernel's name (`dm-8`, `sdd1`), as node_exporter labels its disk series.
        if let (true, Some(device)) = (disks, c.device.as_ref()) {
            let dl = || {
                let mut v = l();
                v.push(("device", device.clone()));
                v
            };
            if let Some(ms) = c.device_await_ms {
                out.gauge(Metric::ChunkDeviceAwait, dl(), ms / 1000.0);
            }
            if let Some(pct) = c.device_util_pct {
                out.gauge(Metric::ChunkDeviceBusy, dl(), pct / 100.0);
            }
        }
    }
}

/// Per secondary of this primary: pages behind, seconds behind (or at least behind) when known,
/// transmission blocked.
fn replication(out: &mut Out, snap: &Snapshot) {
    for p in &snap.replication.peers {
        let l = || {
            vec![
                ("peer", p.name.clone()),
                ("type", p.peer_type.clone().unwrap_or_default()),
            ]
        };
        if let Some(n) = p.lag_pages {
            out.gauge(Metric::ReplicationLagPages, l(), n as f64);
        }
        let blocked = p.transmission.as_deref() == Some("Blocked");
        // While the acknowledged position is older than ifxtop's log history (transmission
        // blocked for longer than ifxtop has watched), the history's length is a lower bound:
        // exported as the value, and said by its companion, so an alert still fires. Before the
        // history has two samples, a secondary known to be behind is at least 0 s behind: the
        // series is there from the first scrape, said to be a bound, and grows as the history
        // does (never absent while it lags, never a guess).
        let behind = blocked || p.lag_pages.is_some_and(|n| n > 0);
        let (secs, at_least) = match (p.lag_s, p.lag_s_at_least) {
            (Some(s), _) => (Some(s), false),
            (None, Some(s)) => (Some(s), true),
            (None, None) if behind => (Some(0.0), true),
            (None, None) => (None, false),
        };
        if let Some(secs) = secs {
            out.gauge(Metric::ReplicationLagSeconds, l(), secs);
            out.gauge(
                Metric::ReplicationLagLowerBound,
                l(),
                f64::from(u8::from(at_least)),
            );
        }
        out.gauge(
            Metric::ReplicationBlocked,
            l(),
            f64::from(u8::from(blocked)),
        );
    }
}

/// Uptime, the server's version, mode and role, and `Blocked:`.
fn server_state(out: &mut Out, snap: &Snapshot) {
    let s = &snap.server;
    if let Some(up) = s.uptime_s {
        out.gauge(Metric::Uptime, vec![], up as f64);
    }
    // The banner's mode without its passing flags (`(CKPT REQ)`, `Prim`): those change every
    // checkpoint and would churn the series. `unknown` until a banner or a cluster says.
    if s.version.is_some() || s.mode.is_some() {
        let or_unknown = |v: Option<&str>| v.unwrap_or("unknown").to_string();
        out.gauge(
            Metric::ServerInfo,
            vec![
                ("version", or_unknown(s.version.as_deref())),
                ("mode", or_unknown(s.mode.as_deref())),
                ("role", or_unknown(snap.replication.role.as_deref())),
            ],
            1.0,
        );
    }
    let current: Vec<&str> = s
        .blocked
        .as_deref()
        .map(|b| b.split_whitespace().collect())
        .unwrap_or_default();
    for r in BLOCKED_REASONS {
        let on = current.contains(&r);
        out.gauge(
            Metric::Blocked,
            vec![("reason", r.into())],
            f64::from(u8::from(on)),
        );
    }
    for r in current.iter().filter(|r| !BLOCKED_REASONS.contains(r)) {
        out.gauge(Metric::Blocked, vec![("reason", (*r).into())], 1.0);
    }
}

/// Waiting threads by reason, idle client waits, the longest waits, blockers.
fn waits(out: &mut Out, snap: &Snapshot) {
    // Per reason: how many wait, the longest wait, and whether that is a lower bound.
    let mut count: BTreeMap<WaitReason, (usize, f64, bool)> = BTreeMap::new();
    let mut idle = 0usize;
    let mut deadlocked = 0usize;
    for w in &snap.waiters {
        if w.idle {
            idle += 1;
            continue;
        }
        let e = count.entry(w.reason).or_insert((0, 0.0, false));
        e.0 += 1;
        if w.in_wait_s >= e.1 {
            e.1 = w.in_wait_s;
            e.2 = w.in_wait_s_at_least;
        }
        deadlocked += usize::from(w.deadlock);
    }
    // Every reason, 0 when nothing waits on it: a graph has no gaps and an alert compares
    // against 0, not against a missing series.
    for r in WaitReason::ALL {
        let (n, _, _) = count.get(&r).copied().unwrap_or_default();
        out.gauge(
            Metric::WaitingThreads,
            vec![("reason", reason_label(r).into())],
            n as f64,
        );
    }
    for r in WaitReason::ALL {
        let (_, longest, at_least) = count.get(&r).copied().unwrap_or_default();
        out.gauge(
            Metric::LongestWait,
            vec![("reason", reason_label(r).into())],
            longest,
        );
        out.gauge(
            Metric::LongestWaitLowerBound,
            vec![("reason", reason_label(r).into())],
            f64::from(u8::from(at_least)),
        );
    }
    out.gauge(Metric::IdleClientWaits, vec![], idle as f64);
    out.gauge(Metric::HeadBlockers, vec![], snap.heads.len() as f64);
    let blocked: usize = snap.heads.iter().map(|h| h.blocked).sum();
    out.gauge(Metric::BlockedWaiters, vec![], blocked as f64);
    out.gauge(Metric::DeadlockedThreads, vec![], deadlocked as f64);
}

/// A finding's severity as a value: what `informix_finding_severity` is when none holds, and
/// the severities in their order, so `>= 2` reads "warning or worse".
pub const FINDING_NONE: f64 = 0.0;

fn severity_value(s: crate::model::findings::Severity) -> f64 {
    use crate::model::findings::Severity;
    match s {
        Severity::Info => 1.0,
        Severity::Warning => 2.0,
        Severity::Critical => 3.0,
    }
}

/// One series per kind of finding, its value the worst severity of that kind that holds (0 for
/// none). The severity is the value, not a label: a finding that worsens from warning to
/// critical keeps its series (its graph and an alert's `for` go on), as the Prometheus
/// practices ask of a value that changes ("avoid missing metrics": export every series that may
/// exist, 0 when it does not hold). A kind whose rule cannot judge yet is left out: unknown,
/// not "none".
fn findings(out: &mut Out, snap: &Snapshot) {
    use crate::model::findings::FindingKind;
    let mut worst: BTreeMap<FindingKind, f64> = BTreeMap::new();
    for f in &snap.findings {
        let e = worst.entry(f.kind).or_insert(FINDING_NONE);
        *e = e.max(severity_value(f.severity));
    }
    let cpu_unknown = crate::model::findings::not_yet_judged(&snap.vitals).contains(&"CPU VP load");
    for kind in FindingKind::ALL {
        let value = worst.get(&kind).copied().unwrap_or(FINDING_NONE);
        if kind == FindingKind::CpuSaturation && cpu_unknown && value == FINDING_NONE {
            continue;
        }
        // ifxtop's own ring: a series only where one is kept.
        if kind == FindingKind::RingStopped && snap.ring.is_none() {
            continue;
        }
        out.gauge(
            Metric::FindingSeverity,
            vec![("kind", kind.as_str().into())],
            value,
        );
    }
}

/// The `onstat -p` counters, as the store holds the last good `onstat -p`.
fn profile(out: &mut Out, store: &Store) {
    use crate::parsers::onstat_p::Counter;
    let Some(p) = store.get(crate::source::key::OnstatP) else {
        return;
    };
    for (name, metric) in PROFILE_COUNTERS {
        match p.counters.get(name) {
            Some(Counter::Count(n)) => out.push(metric, vec![], Value::Count(*n)),
            // Printed with decimals where a count is expected: whole part (it never is, but a
            // counter must stay a counter).
            Some(Counter::Decimal(x)) if *x >= 0.0 => {
                out.push(metric, vec![], Value::Count(x.trunc() as u64))
            }
            _ => {}
        }
    }
    for (name, mode) in [("usercpu", "user"), ("syscpu", "system")] {
        if let Some(v) = p.get(name).filter(|v| *v >= 0.0) {
            out.push(
                Metric::CpuSeconds,
                vec![("mode", mode.into())],
                Value::Counter(v),
            );
        }
    }
}

/// The last checkpoint's times, and blocking checkpoints counted as they appear.
fn checkpoints(out: &mut Out, snap: &Snapshot, counted: &mut Counted) {
    let rows = &snap.vitals.checkpoints;
    let newest = rows.iter().map(|c| c.interval).max();
    if let (Some(newest), Some(seen)) = (newest, counted.last_checkpoint) {
        if newest < seen {
            // The numbering started over (the server restarted): every row is new.
            counted.last_checkpoint = None;
        }
    }
    let seen = counted.last_checkpoint;
    let new_blocking = rows
        .iter()
        .filter(|c| seen.is_none_or(|s| c.interval > s) && c.blocking)
        .count();
    counted.blocking_checkpoints += new_blocking as u64;
    if newest.is_some() {
        counted.last_checkpoint = newest;
    }
    if let Some(last) = rows.iter().max_by_key(|c| c.interval) {
        out.gauge(Metric::CheckpointDuration, vec![], last.total_s);
        out.gauge(Metric::CheckpointFlush, vec![], last.flush_s);
        out.gauge(Metric::CheckpointBlock, vec![], last.block_s);
        out.gauge(Metric::CheckpointCritical, vec![], last.crit_s);
    }
    out.push(
        Metric::BlockingCheckpoints,
        vec![],
        Value::Count(counted.blocking_checkpoints),
    );
}

/// Logical and physical logs, and how many logs the oldest transaction holds.
fn logs(out: &mut Out, snap: &Snapshot) {
    let Some(l) = &snap.vitals.logs else {
        return;
    };
    out.gauge(Metric::LogUsed, vec![], l.used_pct / 100.0);
    out.gauge(Metric::LogsNotBackedUp, vec![], l.not_backed_up as f64);
    out.gauge(Metric::Logs, vec![], l.total as f64);
    if let Some(p) = l.physical_used_pct {
        out.gauge(Metric::PhysicalLogUsed, vec![], p / 100.0);
    }
    if let Some(t) = &l.oldest_transaction {
        out.gauge(Metric::OldestTransactionLogs, vec![], t.logs_spanned as f64);
    }
}

/// VP classes: how busy, how many, their CPU seconds.
fn vps(out: &mut Out, snap: &Snapshot, store: &Store) {
    for v in &snap.vitals.vps {
        let class = || vec![("class", v.class.clone())];
        out.gauge(Metric::Vps, class(), v.count as f64);
        if let Some(b) = v.busy_pct {
            out.gauge(Metric::VpBusy, class(), b / 100.0);
        }
    }
    if let Some(g) = store.get(crate::source::key::OnstatGGlo) {
        for c in &g.classes {
            for (mode, v) in [("user", c.usercpu), ("system", c.syscpu)] {
                if v >= 0.0 {
                    out.push(
                        Metric::VpCpuSeconds,
                        vec![("class", c.class.clone()), ("mode", mode.into())],
                        Value::Counter(v),
                    );
                }
            }
        }
    }
}

/// Shared memory: total, growth, segments, by class.
fn memory(out: &mut Out, snap: &Snapshot) {
    let Some(m) = &snap.vitals.memory else {
        return;
    };
    out.gauge(Metric::SharedMemory, vec![], m.total_kb as f64 * 1024.0);
    out.gauge(
        Metric::SharedMemoryGrowth,
        vec![],
        m.growth_kb as f64 * 1024.0,
    );
    out.gauge(Metric::SharedMemorySegments, vec![], m.segments as f64);
    for (class, kb) in &m.by_class {
        out.gauge(
            Metric::SharedMemoryClass,
            vec![("class", class.clone())],
            *kb as f64 * 1024.0,
        );
    }
}

/// Client connections and their Send-Q, per listener port. With no listener port known (no
/// `--port`, no sqlhosts entry), only connections joined to an Informix session count: every
/// other TCP connection of the host (an ssh, the exporter's own scrapes) has an ephemeral local
/// port, and a series per ephemeral port is churn a Prometheus pays for.
fn sockets(out: &mut Out, snap: &Snapshot) {
    for (port, (n, sum, max, window)) in by_port(snap) {
        let l = || vec![("port", port.clone())];
        out.gauge(Metric::ClientConnections, l(), n as f64);
        out.gauge(Metric::SendQueue, l(), sum as f64);
        out.gauge(Metric::SendQueueMax, l(), max as f64);
        out.gauge(Metric::SendQueueWindowMax, l(), window as f64);
    }
}

/// A socket's local port as read: a number, or the name netstat printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Port<'a> {
    Number(u16),
    Name(&'a str),
}

impl Port<'_> {
    /// The `port` label. Distinct ports have distinct labels: a name is never a number's
    /// digits (those read as the number).
    fn label(self) -> String {
        match self {
            Port::Number(p) => p.to_string(),
            Port::Name(s) => s.to_string(),
        }
    }
}

/// Per local port, in the labels' order: connections, Send-Q summed, the largest now and the
/// largest over the window. The sockets are counted by the port as read and a label made once
/// per port: a string made for each of thousands of sockets a second (and a tree of strings
/// searched with it) was most of `serve`'s metrics of an instance.
fn by_port(snap: &Snapshot) -> Vec<(String, (usize, u64, u64, u64))> {
    let mut ports: rustc_hash::FxHashMap<Port<'_>, (usize, u64, u64, u64)> =
        rustc_hash::FxHashMap::default();
    let known = !snap.ports.is_empty();
    for k in snap.sockets.iter().filter(|k| known || k.sessid.is_some()) {
        let port = k
            .local
            .port_num()
            .map_or(Port::Name(k.local.port.as_str()), Port::Number);
        let e = ports.entry(port).or_default();
        e.0 += 1;
        e.1 = e.1.saturating_add(k.send_q);
        e.2 = e.2.max(k.send_q);
        e.3 = e.3.max(k.max_send_q);
    }
    // The instance's listener ports are there even with no client connected.
    for p in &snap.ports {
        ports.entry(Port::Number(*p)).or_default();
    }
    let mut rows: Vec<(String, (usize, u64, u64, u64))> =
        ports.into_iter().map(|(p, v)| (p.label(), v)).collect();
    rows.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    rows
}

/// What of the host's NUMA state only ifxtop knows: zone_reclaim_mode (node_exporter's default
/// collectors do not read sysctls, and it is the seeds' checkpoint stall) and where the oninit
/// processes' memory sits (the join with the instance). The host's page scans and node memory
/// are node_exporter's (`node_vmstat_pgscan_*`, `node_memory_numa_*`): not exported twice.
fn numa(out: &mut Out, snap: &Snapshot, store: &Store) {
    let n = &snap.numa;
    if answers(store, Source::ZoneReclaimMode) {
        if let Some(z) = n.zone_reclaim_mode {
            out.gauge(Metric::ZoneReclaimMode, vec![], f64::from(z));
        }
    }
    for node in &n.nodes {
        let l = || vec![("node", node.node.to_string())];
        if let Some(kb) = node.oninit_kb {
            out.gauge(Metric::OninitNumaNode, l(), kb as f64 * 1024.0);
        }
    }
}

/// Whether each of ifxtop's sources answered its latest run.
/// Per short name (`source_name`): 1 when every source of that name answered (the per-node
/// and per-process files share one).
fn sources(out: &mut Out, snap: &Snapshot) {
    let mut up: BTreeMap<String, bool> = BTreeMap::new();
    for s in &snap.sources {
        *up.entry(source_name(&s.source)).or_insert(true) &= s.error.is_none();
    }
    for (name, ok) in up {
        out.gauge(
            Metric::SourceUp,
            vec![("source", name)],
            f64::from(u8::from(ok)),
        );
    }
}

/// What ifxtop costs: its CPU time and its children's, and each source's runs.
fn cost(out: &mut Out, snap: &Snapshot) {
    if let Some(c) = &snap.cost {
        for (part, v) in [
            ("self", c.self_cpu_s),
            ("simulation", c.simulation_cpu_s),
            ("children", c.children_cpu_s),
        ] {
            if let Some(v) = v {
                out.push(
                    Metric::IfxtopCpu,
                    vec![("part", part.into())],
                    Value::Counter(v),
                );
            }
        }
    }
    // Per short name (`source_name`), as `ifxtop_source_up`: the per-node and per-process
    // files add up into one series.
    let mut runs: BTreeMap<String, u64> = BTreeMap::new();
    for s in &snap.sources {
        *runs.entry(source_name(&s.source)).or_default() += s.runs;
    }
    for (name, n) in runs {
        out.push(Metric::SourceRuns, vec![("source", name)], Value::Count(n));
    }
    if let Some(r) = &snap.ring {
        out.push(Metric::RingWritten, vec![], Value::Count(r.written));
        for (part, b) in [
            ("segments", r.segments_bytes),
            ("incidents", r.incidents_bytes),
        ] {
            out.gauge(Metric::RingDisk, vec![("part", part.into())], b as f64);
        }
        let writing = if r.stopped.is_some() { 0.0 } else { 1.0 };
        out.gauge(Metric::RingWriting, vec![], writing);
    }
}

/// A source's short, stable name for the `source` label, from its label (`Source::label`):
/// an onstat's options joined by `_` (`onstat -g rss verbose` → `onstat_g_rss`, `onstat -X`
/// → `onstat_X`: onstat's options are case-sensitive), a file's path without its numbers
/// (`/sys/devices/system/node/node1/meminfo` → `node_meminfo`, `/proc/4711/numa_maps` →
/// `numa_maps`), a command's words (`oncheck -pe` → `oncheck_pe`; the chunk paths' `stat -L
/// -c FORMAT --` → `chunk_devices`). Never a
/// command line, a pid or anything else that changes from run to run.
pub fn source_name(label: &str) -> String {
    let words: Vec<&str> = label.split_whitespace().collect();
    match words.as_slice() {
        ["onstat", options @ ..] => {
            let mut name = String::from("onstat");
            for o in options.iter().filter(|o| **o != "verbose") {
                // `onstat -g ses 812`: the session is no part of the name.
                if o.bytes().all(|b| b.is_ascii_digit()) {
                    continue;
                }
                name.push('_');
                name.push_str(o.trim_start_matches('-'));
            }
            name
        }
        ["stat", ..] => "chunk_devices".to_string(),
        ["dbaccess", database, ..] => format!("dbaccess_{database}"),
        [path] if path.starts_with('/') => {
            let file = |p: &str| {
                p.rsplit('/')
                    .next()
                    .unwrap_or(p)
                    .trim_matches(|c: char| c.is_ascii_digit())
                    .to_string()
            };
            let parent = path.rsplit('/').nth(1).unwrap_or("");
            match *path {
                p if p.starts_with("/sys/devices/system/node/node") => {
                    format!("node_{}", file(p))
                }
                "/sys/devices/system/node/online" => "nodes_online".to_string(),
                p if p.starts_with("/proc/") && parent.bytes().all(|b| b.is_ascii_digit()) => {
                    file(p)
                }
                p => p
                    .trim_start_matches('/')
                    .replace(['/', '.', '-'], "_")
                    .replace("proc_sys_vm_", ""),
            }
        }
        // `oncheck -pe` → `oncheck_pe`, `netstat -an` → `netstat_an`.
        words => words
            .iter()
            .map(|w| w.trim_start_matches('-'))
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join("_")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect(),
    }
}

/// Whether `c` may go out in a label value as it is: not a control character (C0, DEL, C1:
/// ESC and BEL would drive the terminal of whoever runs `curl /metrics`) and not a
/// bidirectional formatting character (U+202E turns the rest of a line around on screen).
fn plain(c: char) -> bool {
    !c.is_control()
        && !matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// A label value as it leaves ifxtop: every character [`plain`] refuses becomes `?`, as the
/// screen's sanitizer has it. Every label of every series goes through here, at the one place
/// the exposition is written ([`SafeLabels`]), whatever the value came from (a dbspace, a
/// peer, a VP class, the banner's version, a host name).
pub fn label_value(v: &str) -> std::borrow::Cow<'_, str> {
    if v.chars().all(plain) {
        std::borrow::Cow::Borrowed(v)
    } else {
        std::borrow::Cow::Owned(v.chars().map(|c| if plain(c) { c } else { '?' }).collect())
    }
}

/// Labels encoded through [`label_value`].
struct SafeLabels<'a>(&'a [(&'static str, String)]);

impl prometheus_client::encoding::EncodeLabelSet for SafeLabels<'_> {
    fn encode(
        &self,
        encoder: &mut prometheus_client::encoding::LabelSetEncoder,
    ) -> Result<(), std::fmt::Error> {
        use prometheus_client::encoding::EncodeLabel;
        for (key, value) in self.0 {
            (*key, label_value(value)).encode(encoder.encode_label())?;
        }
        Ok(())
    }
}

/// The text formats a scrape can be answered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// OpenMetrics 1.0 (what Prometheus asks for).
    OpenMetrics,
    /// The Prometheus text format 0.0.4 (what `curl` and `promtool check metrics` get).
    Text,
}

impl Format {
    /// The format an `Accept` header asks for: OpenMetrics when it names it, else text.
    pub fn from_accept(accept: Option<&str>) -> Format {
        match accept {
            Some(a) if a.contains("application/openmetrics-text") => Format::OpenMetrics,
            _ => Format::Text,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Text => prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
        }
    }
}

/// One scrape: the instances' latest metrics and the moment of the scrape.
#[derive(Debug)]
struct Scrape {
    instances: Vec<Arc<InstanceMetrics>>,
    now: Instant,
}

impl Collector for Scrape {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        for &metric in Metric::ALL {
            let any = match metric {
                Metric::Up => !self.instances.is_empty(),
                Metric::DataAge => self.instances.iter().any(|i| i.data_age_s.is_some()),
                m => self.instances.iter().any(|i| !i.of(m).is_empty()),
            };
            if !any {
                continue;
            }
            let (name, kind) = match metric.kind() {
                Kind::Counter => (
                    metric
                        .name()
                        .strip_suffix("_total")
                        .unwrap_or(metric.name()),
                    MetricType::Counter,
                ),
                Kind::Gauge => (metric.name(), MetricType::Gauge),
            };
            let mut family = encoder.encode_descriptor(name, metric.help(), None, kind)?;
            for i in &self.instances {
                let none: &[(&'static str, String)] = &[];
                match metric {
                    Metric::Up => {
                        let labels = (SafeLabels(&i.labels), SafeLabels(none));
                        let e = family.encode_family(&labels)?;
                        ConstGauge::new(if i.up { 1.0 } else { 0.0 }).encode(e)?;
                    }
                    Metric::DataAge => {
                        if let Some(age) = i.data_age_s {
                            let since = self.now.saturating_duration_since(i.built);
                            let labels = (SafeLabels(&i.labels), SafeLabels(none));
                            let e = family.encode_family(&labels)?;
                            ConstGauge::new(age + since.as_secs_f64()).encode(e)?;
                        }
                    }
                    m => {
                        for s in i.of(m) {
                            let labels = (SafeLabels(&i.labels), SafeLabels(&s.labels));
                            let e = family.encode_family(&labels)?;
                            match s.value {
                                Value::Gauge(v) => ConstGauge::new(v).encode(e)?,
                                Value::Count(v) => ConstCounter::new(v).encode(e)?,
                                Value::Counter(v) => ConstCounter::new(v).encode(e)?,
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// The exposition of `instances` at `now`, in `format`.
pub fn exposition(
    instances: Vec<Arc<InstanceMetrics>>,
    now: Instant,
    format: Format,
) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Scrape { instances, now }));
    let mut out = String::with_capacity(16 * 1024);
    match format {
        Format::OpenMetrics => prometheus_client::encoding::text::encode(&mut out, &registry)?,
        Format::Text => prometheus_client::encoding::prometheus_text::encode(&mut out, &registry)?,
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parsers::sockets::Endpoint;
    use crate::store::sockets::SocketRow;

    fn row(local_port: &str, remote_port: &str, sessid: Option<u64>) -> SocketRow {
        SocketRow {
            local: Endpoint::new("10.20.0.5", local_port),
            remote: Endpoint::new("10.20.1.9", remote_port),
            state: None,
            send_q: 0,
            recv_q: 0,
            max_send_q: 0,
            trend: Vec::new(),
            queued_for_s: None,
            sessid: sessid.map(crate::ids::Sid),
            user: None,
        }
    }

    /// Every label `Source::label` gives, as the `source` label: short, stable (no pid, node,
    /// session or format string), distinct where the sources differ.
    #[test]
    fn source_labels_are_short_stable_names() {
        for (label, name) in [
            ("onstat -u", "onstat_u"),
            ("onstat -X", "onstat_X"),
            ("onstat -x", "onstat_x"),
            ("onstat -g con", "onstat_g_con"),
            ("onstat -g rss verbose", "onstat_g_rss"),
            ("onstat -g ses 812", "onstat_g_ses"),
            ("onstat -D", "onstat_D"),
            ("oncheck -pe", "oncheck_pe"),
            ("netstat -an", "netstat_an"),
            ("stat -L -c %f %t %T %d %n --", "chunk_devices"),
            ("dbaccess sysmaster -", "dbaccess_sysmaster"),
            ("/proc/diskstats", "proc_diskstats"),
            ("/proc/net/tcp", "proc_net_tcp"),
            ("/proc/net/tcp6", "proc_net_tcp6"),
            ("/proc/vmstat", "proc_vmstat"),
            ("/proc/sys/vm/zone_reclaim_mode", "zone_reclaim_mode"),
            ("/proc/4711/numa_maps", "numa_maps"),
            ("/sys/devices/system/node/online", "nodes_online"),
            ("/sys/devices/system/node/node1/meminfo", "node_meminfo"),
            ("/sys/devices/system/node/node12/cpulist", "node_cpulist"),
        ] {
            assert_eq!(source_name(label), name, "{label}");
        }
    }

    /// ifxtop's CPU by part: on the demo its simulation apart (within `self`), no children.
    #[test]
    fn the_demos_simulation_is_a_cpu_part_of_its_own() {
        let snap = Snapshot {
            cost: Some(crate::model::snapshot::Cost {
                self_cpu_s: Some(12.0),
                simulation_cpu_s: Some(3.0),
                ..Default::default()
            }),
            ..Snapshot::default()
        };
        let mut out = Out(Vec::new());
        cost(&mut out, &snap);
        let parts: Vec<(String, f64)> = out
            .0
            .iter()
            .filter(|s| s.metric == Metric::IfxtopCpu)
            .map(|s| {
                let v = match s.value {
                    Value::Counter(v) => v,
                    _ => f64::NAN,
                };
                (s.labels[0].1.clone(), v)
            })
            .collect();
        assert_eq!(
            parts,
            [("self".to_string(), 12.0), ("simulation".to_string(), 3.0)]
        );
    }

    /// The flight recorder's cost and whether it writes: the bytes written, its disk by part,
    /// 0 once it stopped.
    #[test]
    fn the_rings_cost_and_stop_are_series() {
        let mut snap = Snapshot {
            ring: Some(crate::collect::ring::RingStats {
                written: 4096,
                segments_bytes: 3000,
                incidents_bytes: 500,
                ..Default::default()
            }),
            ..Snapshot::default()
        };
        let series = |snap: &Snapshot| {
            let mut out = Out(Vec::new());
            cost(&mut out, snap);
            out.0
                .iter()
                .map(|s| {
                    let v = match s.value {
                        Value::Gauge(v) | Value::Counter(v) => v,
                        Value::Count(n) => n as f64,
                    };
                    let labels: Vec<String> = s.labels.iter().map(|(_, v)| v.clone()).collect();
                    (s.metric, labels, v)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            series(&snap),
            [
                (Metric::RingWritten, vec![], 4096.0),
                (Metric::RingDisk, vec!["segments".to_string()], 3000.0),
                (Metric::RingDisk, vec!["incidents".to_string()], 500.0),
                (Metric::RingWriting, vec![], 1.0),
            ]
        );
        if let Some(r) = &mut snap.ring {
            r.stopped = Some("ring stopped: disk nearly full".into());
        }
        assert_eq!(
            series(&snap).last(),
            Some(&(Metric::RingWriting, vec![], 0.0))
        );
        // The ring's finding is a series where a ring is kept, none where none is.
        let ring_kind = |snap: &Snapshot| {
            let mut out = Out(Vec::new());
            findings(&mut out, snap);
            out.0
                .iter()
                .any(|s| s.labels.iter().any(|(_, v)| v == "ring_stopped"))
        };
        assert!(ring_kind(&snap));
        snap.ring = None;
        assert!(series(&snap).is_empty());
        assert!(!ring_kind(&snap));
    }

    /// Node 0 answers, node 1 does not: one `node_meminfo` series, 0.
    #[test]
    fn sources_of_one_name_are_one_series_up_only_when_all_answer() {
        let status = |source: &str, error: Option<&str>| crate::model::snapshot::SourceStatus {
            source: source.into(),
            short: "",
            age_s: None,
            period_s: 1.0,
            error: error.map(String::from),
            failure: None,
            took_ms: 0,
            runs: 1,
            failures: 0,
            via: None,
            cpu_ms_per_call: None,
            calls_per_min: None,
            bytes_per_call: None,
            late: false,
        };
        let snap = Snapshot {
            sources: vec![
                status("/sys/devices/system/node/node0/meminfo", None),
                status("/sys/devices/system/node/node1/meminfo", Some("gone")),
                status("onstat -u", None),
            ],
            ..Snapshot::default()
        };
        let mut out = Out(Vec::new());
        sources(&mut out, &snap);
        let got: Vec<(String, f64)> = out
            .0
            .iter()
            .map(|s| match s.value {
                Value::Gauge(v) => (s.labels[0].1.clone(), v),
                v => panic!("{v:?}"),
            })
            .collect();
        assert_eq!(
            got,
            [
                ("node_meminfo".to_string(), 0.0),
                ("onstat_u".to_string(), 1.0)
            ]
        );
    }

    /// Over samples where sessions keep, lengthen, change and lose their statements, each
    /// statement's time goes to the fingerprint of its own words, as when every fingerprint
    /// is made anew.
    #[test]
    fn statements_are_counted_by_their_own_fingerprints() {
        use crate::model::activity::{
            active_with, changing_statements, statement_words, Picks, SQL_KEY_CHARS,
        };
        let texts = changing_statements();
        let mut counted = Counted::default();
        let mut plain: rustc_hash::FxHashMap<String, f64> = rustc_hash::FxHashMap::default();
        let mut picks = Picks(11);
        let mut kept = 0;
        for _ in 0..300 {
            let mut actives = Vec::new();
            for sid in 1..7u64 {
                // Two times in three the session's own statement (the memo is used), else
                // any other or none.
                let pick = picks.below(texts.len() * 3);
                let sql = if pick < texts.len() {
                    texts.get(pick).filter(|_| pick + 1 < texts.len())
                } else {
                    texts.get(sid as usize % texts.len())
                }
                .map(String::as_str);
                actives.push(active_with(crate::ids::Sid(sid), sql));
                let key = sql.map_or(crate::model::activity::NOT_READ.to_string(), |q| {
                    crate::model::fingerprint::fingerprint(&statement_words(q, SQL_KEY_CHARS))
                });
                *plain.entry(key).or_default() += 0.5;
            }
            kept += counted.fingerprints_kept();
            counted.statements(&actives, 0.5);
            assert_eq!(counted.sql, plain);
        }
        // The check has teeth: fingerprints were kept from one sample to the next.
        assert!(kept > 300, "{kept}");
    }

    /// The plain computation `by_port` is held to: a tree keyed by each socket's port label.
    fn by_port_plain(snap: &Snapshot) -> Vec<(String, (usize, u64, u64, u64))> {
        let mut ports: BTreeMap<String, (usize, u64, u64, u64)> = BTreeMap::new();
        let known = !snap.ports.is_empty();
        for k in snap.sockets.iter().filter(|k| known || k.sessid.is_some()) {
            let port = k
                .local
                .port_num()
                .map_or_else(|| k.local.port.to_string(), |p| p.to_string());
            let e = ports.entry(port).or_default();
            e.0 += 1;
            e.1 = e.1.saturating_add(k.send_q);
            e.2 = e.2.max(k.send_q);
            e.3 = e.3.max(k.max_send_q);
        }
        for p in &snap.ports {
            ports.entry(p.to_string()).or_default();
        }
        ports.into_iter().collect()
    }

    proptest::proptest! {
        /// Ports as numbers (with leading zeros and signs, as `u16` reads them), as names, and
        /// as numbers too large for a port; known listener ports or none.
        #[test]
        fn ports_are_counted_as_the_plain_tree_counts_them(
            socks in proptest::collection::vec(
                (proptest::sample::select(vec![
                    "9088", "09088", "+9088", "1526", "10000", "65535", "65536", "70000",
                    "sqlexec", "ol_demo", "*", "", "0",
                ]), 0u64..5, 0u64..9, proptest::option::of(1u64..4)),
                0..40,
            ),
            known in proptest::collection::vec(proptest::sample::select(vec![9088u16, 1526, 10000, 0]), 0..3),
        ) {
            let mut snap = Snapshot { ports: known, ..Snapshot::default() };
            for (port, send_q, max, sid) in socks {
                let mut r = row(port, "51234", sid);
                r.send_q = send_q;
                r.max_send_q = max;
                snap.sockets.push(r);
            }
            proptest::prop_assert_eq!(by_port(&snap), by_port_plain(&snap));
        }
    }

    /// The reliability test's churn: with no listener port known, 109 `port` values in 12 s,
    /// one per ephemeral port (the exporter's own scrapes among them). Only connections of
    /// Informix sessions count then.
    #[test]
    fn with_no_port_known_only_session_connections_are_series() {
        let mut snap = Snapshot {
            sockets: vec![
                row("9088", "51234", Some(501)),
                row("9088", "51300", Some(502)),
            ],
            ..Snapshot::default()
        };
        for p in 40_000..40_050 {
            snap.sockets.push(row(&p.to_string(), "9100", None));
        }
        let mut out = Out(Vec::new());
        sockets(&mut out, &snap);
        let ports: Vec<&str> = out
            .0
            .iter()
            .filter(|s| s.metric == Metric::ClientConnections)
            .flat_map(|s| s.labels.iter().map(|(_, v)| v.as_str()))
            .collect();
        assert_eq!(ports, ["9088"]);
        // A known listener port: its connections are counted whatever their join.
        snap.ports = vec![9088];
        snap.sockets.push(row("9088", "51400", None));
        let mut out = Out(Vec::new());
        sockets(&mut out, &snap);
        let n: Vec<(String, String)> = out
            .0
            .iter()
            .filter(|s| s.metric == Metric::ClientConnections)
            .map(|s| (s.labels[0].1.clone(), format!("{:?}", s.value)))
            .collect();
        assert!(
            n.iter().any(|(p, v)| p == "9088" && v.contains('3')),
            "{n:?}"
        );
    }
}
