//! Is it the disk? Is it the replica? Each chunk (dbspace, path) joined to its block device and
//! the whole disks under it, Informix's page rates and operation times beside the device's await
//! and %util, with a verdict in words; and the replication peers: their lag in log pages and in
//! seconds, whether log transmission to them is blocked, their last acknowledgement.

use crate::format::thousands;
use crate::model::waiters::{WaitTarget, WaiterRow};
use crate::parsers::chunk_devices::ChunkDevices;
use crate::parsers::ha::{LogPos, Stamp};
use crate::parsers::onstat_g_cluster::OnstatGCluster;
use crate::parsers::onstat_g_dri::OnstatGDri;
use crate::parsers::onstat_g_rss::OnstatGRss;
use crate::parsers::onstat_g_sds::OnstatGSds;
use crate::parsers::onstat_l::OnstatL;
use crate::parsers::sysblock::DevNum;
use crate::source::Source;
use crate::store::io::{DiskRate, OpKind, OpTime};
use crate::store::Store;
use serde::Serialize;
use std::borrow::Cow;

/// A device whose I/Os take this long on average is slow (a SAN LUN or an SSD answers in a
/// few ms, a spinning disk in under 15).
pub const SLOW_AWAIT_MS: f64 = 20.0;
/// Beyond this the slowness is the alarm.
pub const VERY_SLOW_AWAIT_MS: f64 = 50.0;
/// A device busy this share of the time is saturated: its await is queueing.
pub const SATURATED_UTIL_PCT: f64 = 80.0;
/// Pages per second on one chunk that make it a hot chunk.
pub const HARD_PAGES_PER_S: f64 = 1000.0;
/// A secondary this many log pages behind is worth a look.
pub const LAG_PAGES_WARN: u64 = 1_000;
/// ... or this many seconds.
pub const LAG_SECONDS_WARN: f64 = 30.0;

/// How much a row deserves a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Concern {
    #[default]
    None,
    /// Worth knowing (a hot chunk that keeps up).
    Notice,
    Warn,
    Alarm,
}

/// One whole disk under a chunk's device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiskRow {
    pub name: String,
    pub await_ms: Option<f64>,
    pub util_pct: Option<f64>,
}

/// One chunk with its device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChunkRow {
    pub chunk: u32,
    pub dbspace: Option<String>,
    pub path: String,
    /// The kernel's name of the device the chunk's I/O goes to (`dm-5`): the device itself for
    /// a raw chunk, the filesystem's for a cooked one.
    pub device: Option<String>,
    /// A device-mapper device's own name (`vg_data2-lv_data2`, as `/dev/mapper/` shows it).
    pub device_name: Option<String>,
    /// `raw` (a block device) or `cooked` (a file on a filesystem).
    pub chunk_kind: Option<&'static str>,
    /// The layers between the device and the disks (`mpathb (dm-6)`).
    pub layers: Vec<String>,
    /// The whole disks at the bottom, with their own await and %util.
    pub disks: Vec<DiskRow>,
    /// Why the device (or the disks under it) cannot be known.
    pub device_unknown: Option<String>,
    /// Pages read and written per second (`onstat -D`), in the dbspace's page size.
    pub reads_per_s: Option<f64>,
    pub writes_per_s: Option<f64>,
    /// Informix's own average time per read and per write (`onstat -g iof`), ms: over the last
    /// `avg_*_over_s` seconds, or, when that is `null`, since its counters were last reset.
    pub avg_read_ms: Option<f64>,
    pub avg_read_over_s: Option<f64>,
    pub avg_write_ms: Option<f64>,
    pub avg_write_over_s: Option<f64>,
    /// The device's I/Os per second, ms per I/O and busy share over the last interval
    /// (`/proc/diskstats`, as `iostat -x` computes them).
    pub device_iops: Option<f64>,
    pub device_await_ms: Option<f64>,
    pub device_r_await_ms: Option<f64>,
    pub device_w_await_ms: Option<f64>,
    pub device_util_pct: Option<f64>,
    pub verdict: Option<String>,
    pub concern: Concern,
    /// The device's await over time (ms), oldest first.
    #[serde(skip)]
    pub await_history: Vec<f64>,
    /// Informix's pages per second on the chunk over time, oldest first.
    #[serde(skip)]
    pub demand_history: Vec<f64>,
}

impl ChunkRow {
    /// The slowest figure: the device's await or Informix's own time per operation over the
    /// last samples (its average since a reset says nothing of now).
    pub fn latency_ms(&self) -> Option<f64> {
        let recent = |ms: Option<f64>, over: Option<f64>| ms.filter(|_| over.is_some());
        [
            self.device_await_ms,
            recent(self.avg_read_ms, self.avg_read_over_s),
            recent(self.avg_write_ms, self.avg_write_over_s),
        ]
        .into_iter()
        .flatten()
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
    }

    /// `vg_data2-lv_data2 (dm-5)`, `sdd1`, `?`.
    pub fn device_label(&self) -> String {
        match (&self.device_name, &self.device) {
            (Some(n), Some(d)) => format!("{n} ({d})"),
            (None, Some(d)) => d.clone(),
            _ => "?".to_string(),
        }
    }
}

/// The chunks and what is known of their devices.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct IoView {
    /// Slowest first.
    pub chunks: Vec<ChunkRow>,
    /// What holds for every chunk: why no device is known (no `/proc/diskstats`), or what the
    /// rows wait for.
    pub note: Option<String>,
}

impl IoView {
    /// The chunk with the highest latency.
    pub fn worst(&self) -> Option<&ChunkRow> {
        self.chunks.iter().max_by(|a, b| {
            a.latency_ms()
                .unwrap_or(-1.0)
                .total_cmp(&b.latency_ms().unwrap_or(-1.0))
        })
    }

    pub fn chunk(&self, chunk: u32) -> Option<&ChunkRow> {
        self.chunks.iter().find(|c| c.chunk == chunk)
    }
}

/// The `onstat -g iof` path of a chunk: the same path, else the one file whose path ends with
/// the chunk path's last part (the manual's sample prints `rootdbs` for its chunk); never a
/// guess between several.
fn iof_path<'a>(store: &'a Store, path: &str) -> Option<&'a String> {
    let mut all = store.io.iof.paths();
    let exact = store.io.iof.paths().find(|p| *p == path);
    if exact.is_some() {
        return exact;
    }
    let base = path.rsplit(['/', '\\']).next()?;
    let mut same = all
        .by_ref()
        .filter(|p| p.rsplit(['/', '\\']).next() == Some(base));
    let one = same.next()?;
    same.next().is_none().then_some(one)
}

/// The rows of the I/O pane, slowest first.
pub fn build_io(store: &Store) -> IoView {
    let Some(d) = store.get(crate::source::key::OnstatDUpper) else {
        return IoView {
            chunks: Vec::new(),
            note: Some("waiting for onstat -D (the chunks and their page counts)".into()),
        };
    };
    let devices = store.get(crate::source::key::ChunkDevices);
    // /proc/diskstats never read: not Linux, or not readable.
    let no_diskstats = store.source(&Source::ProcDiskstats).and_then(|st| {
        (st.last_ok.is_none())
            .then(|| st.failing().map(|e| e.to_string()))
            .flatten()
    });
    let note = match (&no_diskstats, devices) {
        (Some(e), _) => Some(format!(
            "device latency unknown: /proc/diskstats cannot be read ({e}); Informix's own \
             figures only"
        )),
        (None, None) => Some("resolving each chunk's device (stat -L, /sys/dev/block)".into()),
        _ => None,
    };
    let rate = |dev: DevNum| store.io.disks.rates.get(&dev);
    let mut chunks: Vec<ChunkRow> = d
        .chunks
        .iter()
        .map(|c| {
            let r = store.io.chunks.rates.get(&c.chunk);
            let iof = iof_path(store, &c.path);
            let op = |k: OpKind| iof.and_then(|p| store.io.iof.op_time(p, k));
            let (rd, wr) = (op(OpKind::Read), op(OpKind::Write));
            let over = |t: &Option<OpTime>| t.filter(|t| !t.since_reset).map(|t| t.over_s);
            let mut row = ChunkRow {
                chunk: c.chunk,
                dbspace: d.dbspace_of_chunk(c.chunk).map(|s| s.name.clone()),
                path: c.path.clone(),
                device: None,
                device_name: None,
                chunk_kind: None,
                layers: Vec::new(),
                disks: Vec::new(),
                device_unknown: None,
                reads_per_s: r.map(|r| r.reads_per_s),
                writes_per_s: r.map(|r| r.writes_per_s),
                avg_read_ms: rd.map(|t| t.ms),
                avg_read_over_s: over(&rd),
                avg_write_ms: wr.map(|t| t.ms),
                avg_write_over_s: over(&wr),
                device_iops: None,
                device_await_ms: None,
                device_r_await_ms: None,
                device_w_await_ms: None,
                device_util_pct: None,
                verdict: None,
                concern: Concern::None,
                await_history: Vec::new(),
                demand_history: store
                    .io
                    .chunks
                    .history
                    .get(&c.chunk)
                    .map(|h| h.iter().copied().collect())
                    .unwrap_or_default(),
            };
            if no_diskstats.is_some() {
                row.device_unknown = Some("no /proc/diskstats".into());
            } else if let Some(devs) = devices {
                join_device(&mut row, devs, &rate, store);
            } else {
                row.device_unknown = Some("not resolved yet".into());
            }
            let (verdict, concern) = chunk_verdict(&row);
            row.verdict = verdict;
            row.concern = concern;
            row
        })
        .collect();
    chunks.sort_by(|a, b| {
        b.latency_ms()
            .unwrap_or(-1.0)
            .total_cmp(&a.latency_ms().unwrap_or(-1.0))
            .then(a.chunk.cmp(&b.chunk))
    });
    IoView { chunks, note }
}

/// Fills in the device, the layers and disks under it, and their rates.
fn join_device<'s>(
    row: &mut ChunkRow,
    devs: &ChunkDevices,
    rate: &dyn Fn(DevNum) -> Option<&'s DiskRate>,
    store: &Store,
) {
    let Some(cd) = devs.chunk(&row.path) else {
        row.device_unknown = Some("not resolved yet (a new chunk)".into());
        return;
    };
    row.chunk_kind = cd.kind.and_then(|k| match k {
        crate::parsers::chunk_devices::PathKind::BlockDevice => Some("raw"),
        crate::parsers::chunk_devices::PathKind::File => Some("cooked"),
        _ => None,
    });
    row.device_unknown = cd.unknown.clone();
    let Some(dev) = cd.device else {
        return;
    };
    match devs.device(dev) {
        Some(b) => {
            row.device = Some(b.name.clone());
            row.device_name = b.dm_name.clone();
        }
        None => row.device = Some(dev.to_string()),
    }
    row.layers = cd
        .below
        .iter()
        .filter_map(|l| devs.device(*l).map(|b| b.label()))
        .collect();
    row.disks = cd
        .disks
        .iter()
        .filter(|d| **d != dev)
        .map(|d| DiskRow {
            name: devs
                .device(*d)
                .map_or_else(|| d.to_string(), |b| b.name.clone()),
            await_ms: rate(*d).and_then(|r| r.await_ms),
            util_pct: rate(*d).map(|r| r.util_pct),
        })
        .collect();
    if let Some(r) = rate(dev) {
        row.device_iops = Some(r.reads_per_s + r.writes_per_s);
        // No I/O in the interval: nothing waited (iostat prints 0.00).
        row.device_await_ms = Some(r.await_ms.unwrap_or(0.0));
        row.device_r_await_ms = r.r_await_ms;
        row.device_w_await_ms = r.w_await_ms;
        row.device_util_pct = Some(r.util_pct);
    } else if cd.unknown.is_none() && store.io.disks.reset.contains(&dev) {
        row.device_unknown = Some(format!(
            "{}: counters reset, rates next sample",
            b_name(row)
        ));
    }
    row.await_history = store
        .io
        .disks
        .await_history
        .get(&dev)
        .map(|h| h.iter().copied().collect())
        .unwrap_or_default();
}

fn b_name(row: &ChunkRow) -> String {
    row.device.clone().unwrap_or_else(|| "the device".into())
}

/// What a rate was about a minute ago (12 samples at 5 s) and now, when the history reaches
/// that far.
fn minute_ago(h: &[f64]) -> Option<(f64, f64)> {
    let now = *h.last()?;
    let then = *h.get(h.len().checked_sub(13)?)?;
    Some((then, now))
}

fn pages(v: f64) -> String {
    thousands(v.round().max(0.0) as u64)
}

/// The verdict on one chunk, in words, and how much it deserves a look.
pub(crate) fn chunk_verdict(r: &ChunkRow) -> (Option<String>, Concern) {
    let demand = r.reads_per_s.unwrap_or(0.0) + r.writes_per_s.unwrap_or(0.0);
    let demand_words = || -> String {
        match minute_ago(&r.demand_history) {
            Some((then, now)) if then > 0.0 && (now - then).abs() <= 0.3 * then => format!(
                ", while Informix asks no more of it than a minute ago ({} pages/s)",
                pages(now)
            ),
            Some((then, now)) if now > 1.3 * then => format!(
                "; Informix asks more of it than a minute ago ({} → {} pages/s)",
                pages(then),
                pages(now)
            ),
            _ => format!(" (Informix: {} pages/s)", pages(demand)),
        }
    };
    if let (Some(aw), Some(util)) = (r.device_await_ms, r.device_util_pct) {
        let busy = r.device_iops.unwrap_or(0.0) >= 1.0;
        if busy && aw >= SLOW_AWAIT_MS {
            let concern = if aw >= VERY_SLOW_AWAIT_MS {
                Concern::Alarm
            } else {
                Concern::Warn
            };
            if util < SATURATED_UTIL_PCT {
                return (
                    Some(format!(
                        "the device is slow: {aw:.0} ms await at {util:.0} % util{} — look \
                         below Informix (the array, the SAN, multipath)",
                        demand_words()
                    )),
                    concern,
                );
            }
            let who = if demand >= HARD_PAGES_PER_S {
                format!(
                    " — Informix reads this chunk hard: {} pages/s",
                    pages(demand)
                )
            } else {
                format!(
                    " — more I/O than it serves; this chunk asks {} pages/s of it",
                    pages(demand)
                )
            };
            return (
                Some(format!(
                    "the device is saturated: {aw:.0} ms await at {util:.0} % util{who}"
                )),
                concern,
            );
        }
    }
    // Informix's own time far above the device's: the wait is above the disk.
    let ifx = [
        (r.avg_read_ms, r.avg_read_over_s, "read"),
        (r.avg_write_ms, r.avg_write_over_s, "write"),
    ]
    .into_iter()
    .filter_map(|(ms, over, what)| Some((ms?, over?, what)))
    .max_by(|a, b| a.0.total_cmp(&b.0));
    if let (Some((ms, _, what)), Some(aw)) = (ifx, r.device_await_ms) {
        if ms >= SLOW_AWAIT_MS && aw < SLOW_AWAIT_MS / 4.0 {
            return (
                Some(format!(
                    "Informix takes {ms:.0} ms per {what} but the device answers in {aw:.1} ms: \
                     the time goes above the disk (AIO/KAIO queues, the VPs doing I/O)"
                )),
                Concern::Warn,
            );
        }
    }
    if demand >= HARD_PAGES_PER_S {
        let (what, v) = if r.reads_per_s.unwrap_or(0.0) >= r.writes_per_s.unwrap_or(0.0) {
            ("reads", r.reads_per_s.unwrap_or(0.0))
        } else {
            ("writes", r.writes_per_s.unwrap_or(0.0))
        };
        let at = r
            .device_await_ms
            .or(r.avg_read_ms)
            .map(|ms| format!(" at {ms:.0} ms"))
            .unwrap_or_default();
        return (
            Some(format!(
                "Informix {what} this chunk hard: {} pages/s{at}",
                pages(v)
            )),
            Concern::Notice,
        );
    }
    (None, Concern::None)
}

/// Adds to the verdict of every buffer waiter whose page is on a chunk with a slow device.
pub(crate) fn note_slow_chunks(waiters: &mut [WaiterRow], io: &IoView) {
    for w in waiters {
        let WaitTarget::Buffer { chunk, .. } = &w.waiting_on else {
            continue;
        };
        let Some(c) = io.chunk(*chunk) else {
            continue;
        };
        let Some(aw) = c
            .device_await_ms
            .filter(|a| *a >= SLOW_AWAIT_MS && c.device_iops.unwrap_or(0.0) >= 1.0)
        else {
            continue;
        };
        let note = format!(
            "; its page is on chunk {}{}, whose device is slow: {aw:.0} ms await ({})",
            c.chunk,
            c.dbspace
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default(),
            c.device_label()
        );
        w.verdict = Cow::Owned(format!("{}{note}", w.verdict));
    }
}

// ---------------------------------------------------------------------------------------------
// Replication

/// One secondary as the primary sees it (or the primary as a secondary sees it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Peer {
    pub name: String,
    /// `HDR`, `RSS`, `SDS`.
    #[serde(rename = "type")]
    pub peer_type: Option<String>,
    /// The server's state as printed (`Active`, `On`, `Defined`).
    pub status: Option<String>,
    /// `Connected`, `Disconnected`, ... as printed.
    pub connection: Option<String>,
    /// `SYNC`, `ASYNC`, `NEAR_SYNC`.
    pub sync: Option<String>,
    /// The last log position it acknowledged.
    pub acked: Option<LogPos>,
    /// Log pages between the primary's current position and what it acknowledged.
    pub lag_pages: Option<u64>,
    /// How long ago the primary was where it is (`None` when the samples do not tell).
    pub lag_s: Option<f64>,
    /// The lag is more than the samples kept: at least this many seconds.
    pub lag_s_at_least: Option<f64>,
    /// RSS: log transmission `Active`, `Blocked`, `Inactive`, as printed.
    pub transmission: Option<String>,
    /// Pages sent and not yet acknowledged (RSS).
    pub pending_ack_pages: Option<u64>,
    /// Pages not yet sent (`Approximate Log Page Backlog`).
    pub backlog_pages: Option<u64>,
    /// `RSS flow control:384/352` as printed.
    pub flow_control: Option<String>,
    /// When it last acknowledged, as printed; `never` when the server prints the epoch.
    pub last_ack: Option<String>,
    pub verdict: Option<String>,
    pub concern: Concern,
    /// Its lag in pages over the samples kept, oldest first.
    #[serde(skip)]
    pub lag_history: Vec<f64>,
}

/// On a secondary: how far behind it is, as far as it can tell.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct SecondaryView {
    /// Its primary.
    pub source: Option<String>,
    pub connection: Option<String>,
    /// The last log page it received.
    pub received: Option<LogPos>,
    /// The last log page it applied.
    pub applied: Option<LogPos>,
    /// Pages received and not yet applied (one log).
    pub apply_behind_pages: Option<u64>,
    /// The HDR pair's state (`onstat -g dri`).
    pub dr_state: Option<String>,
}

/// The server's part in replication and its peers.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Replication {
    /// `primary`, `HDR secondary`, `RSS secondary`, `SDS secondary`, `standard`; `null` until a
    /// banner says.
    pub role: Option<String>,
    /// The primary's current log position (`onstat -g cluster`).
    pub current_log_page: Option<LogPos>,
    pub peers: Vec<Peer>,
    pub secondary: Option<SecondaryView>,
    pub note: Option<String>,
}

impl Replication {
    /// The peer furthest behind (blocked first).
    pub fn worst(&self) -> Option<&Peer> {
        self.peers.iter().max_by(|a, b| {
            a.concern
                .cmp(&b.concern)
                .then(a.lag_pages.unwrap_or(0).cmp(&b.lag_pages.unwrap_or(0)))
        })
    }
}

/// The role the banner's flags say.
fn role_of(flags: &[String]) -> &'static str {
    let has = |f: &str| flags.iter().any(|x| x == f);
    if has("Prim") {
        "primary"
    } else if has("RSS") {
        "RSS secondary"
    } else if has("SDS") {
        "SDS secondary"
    } else if has("Sec") {
        "HDR secondary"
    } else {
        "standard"
    }
}

/// Pages from `from` to `to`: within one log directly, across logs with the sizes `onstat -l`
/// gives (every log between them must be listed, else unknown).
pub(crate) fn pages_between(from: LogPos, to: LogPos, logs: Option<&OnstatL>) -> Option<u64> {
    // Ahead in the same log: samples a moment apart, caught up. In a later log than the
    // primary's current one: positions of different moments or servers, not a lag.
    if from.log > to.log {
        return None;
    }
    if from.log == to.log && from.page >= to.page {
        return Some(0);
    }
    if let Some(n) = from.pages_to(to) {
        return Some(n);
    }
    let logs = logs?;
    let size = |id: u32| {
        logs.logs
            .iter()
            .find(|l| l.uniqid == u64::from(id))
            .map(|l| l.size)
    };
    let mut n = size(from.log)?.checked_sub(from.page)?;
    for id in from.log + 1..to.log {
        n += size(id)?;
    }
    Some(n + to.page)
}

fn ack_words(s: &Stamp) -> String {
    s.when().map_or_else(|| "never".to_string(), str::to_string)
}

/// The replication view. `flags` are the banner's mode flags.
pub fn build_replication(store: &Store, flags: Option<&[String]>) -> Replication {
    let Some(flags) = flags else {
        return Replication::default();
    };
    let role = role_of(flags);
    let cluster = store.get(crate::source::key::OnstatGCluster);
    let rss = store.get(crate::source::key::OnstatGRss);
    let sds = store.get(crate::source::key::OnstatGSds);
    let dri = store.get(crate::source::key::OnstatGDri);
    let logs = store.get(crate::source::key::OnstatL);
    let mut out = Replication {
        role: Some(role.to_string()),
        current_log_page: cluster.and_then(|c| c.current_log_page),
        ..Replication::default()
    };
    if role == "standard" {
        out.note = Some("a standard server: no replication (no role in the banner)".into());
        return out;
    }
    if cluster.is_none() && rss.is_none() && sds.is_none() && dri.is_none() {
        out.note = Some("waiting for onstat -g cluster".into());
        return out;
    }
    if role != "primary" {
        out.secondary = Some(secondary_view(cluster, rss, sds, dri));
        return out;
    }
    let mut peers: Vec<Peer> = Vec::new();
    let mut backlog_of: Vec<(usize, u64)> = Vec::new();
    if let Some(c) = cluster {
        for s in &c.servers {
            let (i, p) = peer(&mut peers, &s.name);
            p.peer_type = s.server_type.clone();
            p.status = s.server_status.clone();
            p.connection = s.connection.clone();
            p.sync = s.sync.clone();
            p.acked = s.last_acked.or(s.acked);
            p.last_ack = s.last_ack_time.as_ref().map(ack_words);
            if let Some(b) = s.backlog_pages {
                backlog_of.push((i, b));
            }
        }
    }
    if let Some(r) = rss {
        for s in &r.servers {
            let (_, p) = peer(&mut peers, &s.name);
            p.peer_type.get_or_insert_with(|| "RSS".into());
            if p.status.is_none() {
                p.status = s.status.clone();
            }
            if p.connection.is_none() {
                p.connection = s.connection.clone();
            }
            p.transmission = s.transmission.clone();
            p.pending_ack_pages = s.pending_ack_pages;
            p.backlog_pages = s.backlog_pages;
            p.flow_control = s.flow_control.clone();
            // The cluster's acknowledged position goes with its current page (one sample):
            // kept when there is one.
            p.acked = p.acked.or(s.last_acked.filter(|a| a.log > 0));
            if let Some(t) = &s.last_ack_time {
                p.last_ack = Some(ack_words(t));
            }
        }
    }
    if let Some(d) = sds {
        for s in &d.servers {
            let (_, p) = peer(&mut peers, &s.name);
            p.peer_type.get_or_insert_with(|| "SDS".into());
            if p.status.is_none() {
                p.status = s.status.clone();
            }
            if p.connection.is_none() {
                p.connection = s.connection.clone();
            }
            p.backlog_pages = s.backlog_pages.or(p.backlog_pages);
            if let Some(t) = &s.last_ack_time {
                p.last_ack = Some(ack_words(t));
            }
        }
    }
    if let Some(d) = dri {
        if let Some(name) = d.paired_server.as_deref().filter(|n| !n.is_empty()) {
            let (_, p) = peer(&mut peers, name);
            p.peer_type.get_or_insert_with(|| "HDR".into());
            if p.status.is_none() {
                p.status = d.state.clone();
            }
            p.backlog_pages = p.backlog_pages.or(d.backlog);
        }
    }
    for (i, b) in backlog_of {
        if let Some(p) = peers.get_mut(i) {
            p.backlog_pages.get_or_insert(b);
        }
    }
    for p in &mut peers {
        let from_positions = match (p.acked, out.current_log_page) {
            (Some(a), Some(cur)) if a.log > 0 => pages_between(a, cur, logs),
            _ => None,
        };
        p.lag_pages = from_positions.or_else(|| match (p.backlog_pages, p.pending_ack_pages) {
            (Some(b), Some(q)) => Some(b + q),
            (b, _) => b,
        });
        if let Some(a) = p.acked.filter(|a| a.log > 0) {
            match store.io.log.seconds_behind(a) {
                Some(Ok(s)) => p.lag_s = Some(s),
                Some(Err(at_least)) => p.lag_s_at_least = Some(at_least),
                None => {}
            }
        }
        p.lag_history = store
            .io
            .log
            .peer_lag
            .get(&p.name)
            .map(|h| h.iter().copied().collect())
            .unwrap_or_default();
        let (v, c) = peer_verdict(p);
        p.verdict = v;
        p.concern = c;
    }
    peers.sort_by(|a, b| {
        b.concern
            .cmp(&a.concern)
            .then(b.lag_pages.unwrap_or(0).cmp(&a.lag_pages.unwrap_or(0)))
            .then(a.name.cmp(&b.name))
    });
    out.peers = peers;
    out
}

/// The peer named `name`, added when new, with its index.
fn peer<'p>(peers: &'p mut Vec<Peer>, name: &str) -> (usize, &'p mut Peer) {
    let i = match peers.iter().position(|p| p.name == name) {
        Some(i) => i,
        None => {
            peers.push(Peer {
                name: name.to_string(),
                peer_type: None,
                status: None,
                connection: None,
                sync: None,
                acked: None,
                lag_pages: None,
                lag_s: None,
                lag_s_at_least: None,
                transmission: None,
                pending_ack_pages: None,
                backlog_pages: None,
                flow_control: None,
                last_ack: None,
                verdict: None,
                concern: Concern::None,
                lag_history: Vec::new(),
            });
            peers.len() - 1
        }
    };
    (i, &mut peers[i])
}

fn secondary_view(
    cluster: Option<&OnstatGCluster>,
    rss: Option<&OnstatGRss>,
    sds: Option<&OnstatGSds>,
    dri: Option<&OnstatGDri>,
) -> SecondaryView {
    let mut v = SecondaryView::default();
    if let Some(r) = rss {
        v.source = r.source.clone();
        v.connection = r.connection.clone();
        v.received = r.last_received;
    }
    if let Some(s) = sds {
        v.source = v.source.clone().or_else(|| s.source.clone());
        v.connection = v.connection.clone().or_else(|| s.connection.clone());
        v.received = v.received.or(s.last_received);
    }
    if let Some(d) = dri {
        v.source = v
            .source
            .clone()
            .or_else(|| d.paired_server.clone().filter(|p| !p.is_empty()));
        v.applied = d.last_applied;
        v.dr_state = d.state.clone();
    }
    if let Some(c) = cluster {
        v.source = v.source.clone().or_else(|| c.primary.clone());
        // Its own row: what it acknowledged and applied.
        if let Some(own) = c.servers.first().filter(|_| c.servers.len() == 1) {
            v.received = v.received.or(own.acked);
            v.applied = v.applied.or(own.applied);
        }
    }
    v.apply_behind_pages = match (v.applied, v.received) {
        (Some(a), Some(r)) => a.pages_to(r),
        _ => None,
    };
    v
}

/// The verdict on one peer, in words.
pub(crate) fn peer_verdict(p: &Peer) -> (Option<String>, Concern) {
    let behind = || -> String {
        let secs = match (p.lag_s, p.lag_s_at_least) {
            (Some(s), _) => format!(" ({})", crate::format::human_duration(s)),
            (None, Some(s)) => format!(" (more than {})", crate::format::human_duration(s)),
            _ => String::new(),
        };
        match p.lag_pages {
            Some(n) => format!("{} log pages behind{secs}", thousands(n)),
            None => "behind by an unknown number of pages".to_string(),
        }
    };
    if p.transmission.as_deref() == Some("Blocked") {
        let pending = p
            .pending_ack_pages
            .map(|n| {
                format!(
                    ": {} pages sent and not acknowledged{}",
                    thousands(n),
                    p.flow_control
                        .as_deref()
                        .map(|f| format!(" (flow control {f})"))
                        .unwrap_or_default()
                )
            })
            .unwrap_or_default();
        return (
            Some(format!(
                "log transmission blocked{pending}; {} — the secondary (or the network to it) \
                 does not keep up",
                behind()
            )),
            Concern::Alarm,
        );
    }
    if let Some(c) = p.connection.as_deref().filter(|c| *c != "Connected") {
        let concern = if p.status.as_deref() == Some("Defined") {
            Concern::Notice
        } else {
            Concern::Alarm
        };
        return (Some(format!("not connected ({c})")), concern);
    }
    let far = p.lag_pages.is_some_and(|n| n >= LAG_PAGES_WARN)
        || p.lag_s.is_some_and(|s| s >= LAG_SECONDS_WARN)
        || p.lag_s_at_least.is_some_and(|s| s >= LAG_SECONDS_WARN);
    if far {
        return (Some(behind()), Concern::Warn);
    }
    (None, Concern::None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> ChunkRow {
        ChunkRow {
            chunk: 4,
            dbspace: Some("datadbs2".into()),
            path: "/ifx/chunks/datadbs2_01".into(),
            device: Some("dm-5".into()),
            device_name: Some("vg_data2-lv_data2".into()),
            chunk_kind: Some("raw"),
            layers: Vec::new(),
            disks: Vec::new(),
            device_unknown: None,
            reads_per_s: Some(60.0),
            writes_per_s: Some(10.0),
            avg_read_ms: None,
            avg_read_over_s: None,
            avg_write_ms: None,
            avg_write_over_s: None,
            device_iops: Some(40.0),
            device_await_ms: Some(41.0),
            device_r_await_ms: None,
            device_w_await_ms: None,
            device_util_pct: Some(31.0),
            verdict: None,
            concern: Concern::None,
            await_history: Vec::new(),
            demand_history: vec![70.0; 20],
        }
    }

    #[test]
    fn slow_device_with_flat_demand() {
        let (v, c) = chunk_verdict(&row());
        let v = v.unwrap_or_default();
        assert_eq!(c, Concern::Warn);
        assert!(
            v.starts_with("the device is slow: 41 ms await at 31 % util"),
            "{v}"
        );
        assert!(
            v.contains("no more of it than a minute ago (70 pages/s)"),
            "{v}"
        );
        assert!(
            v.ends_with("look below Informix (the array, the SAN, multipath)"),
            "{v}"
        );
    }

    #[test]
    fn saturated_hot_and_quiet_chunks() {
        let mut r = row();
        r.device_util_pct = Some(97.0);
        r.reads_per_s = Some(2_400.0);
        r.device_await_ms = Some(60.0);
        let (v, c) = chunk_verdict(&r);
        assert_eq!(c, Concern::Alarm);
        assert_eq!(
            v.as_deref(),
            Some(
                "the device is saturated: 60 ms await at 97 % util — Informix reads this chunk \
                 hard: 2,410 pages/s"
            )
        );
        r.device_util_pct = Some(40.0);
        r.device_await_ms = Some(2.0);
        let (v, c) = chunk_verdict(&r);
        assert_eq!(c, Concern::Notice);
        assert_eq!(
            v.as_deref(),
            Some("Informix reads this chunk hard: 2,400 pages/s at 2 ms")
        );
        r.reads_per_s = Some(10.0);
        assert_eq!(chunk_verdict(&r), (None, Concern::None));
        // Informix slow, the device fast: the time goes above the disk.
        r.avg_read_ms = Some(25.0);
        r.avg_read_over_s = Some(20.0);
        let (v, _) = chunk_verdict(&r);
        assert!(v
            .unwrap_or_default()
            .starts_with("Informix takes 25 ms per read"));
        // Its average since a reset says nothing of now.
        r.avg_read_over_s = None;
        assert_eq!(chunk_verdict(&r), (None, Concern::None));
    }

    #[test]
    fn a_few_pages_behind_a_short_history_is_no_warning() {
        let mut p = Peer {
            name: "ol_dr1".into(),
            peer_type: Some("RSS".into()),
            status: Some("Active".into()),
            connection: Some("Connected".into()),
            sync: None,
            acked: None,
            lag_pages: Some(3),
            lag_s: None,
            lag_s_at_least: Some(10.0),
            transmission: Some("Active".into()),
            pending_ack_pages: None,
            backlog_pages: None,
            flow_control: None,
            last_ack: None,
            verdict: None,
            concern: Concern::None,
            lag_history: Vec::new(),
        };
        // Passed before the 10 s the samples reach back: not yet a lag worth a look.
        assert_eq!(peer_verdict(&p), (None, Concern::None));
        // Behind everything kept for longer than the warning: said, with the bound.
        p.lag_s_at_least = Some(LAG_SECONDS_WARN + 10.0);
        let (v, c) = peer_verdict(&p);
        assert_eq!(c, Concern::Warn);
        assert_eq!(v.as_deref(), Some("3 log pages behind (more than 40s)"));
    }

    #[test]
    fn lag_across_logs_needs_their_sizes() {
        let a = LogPos { log: 7, page: 900 };
        let b = LogPos { log: 9, page: 50 };
        assert_eq!(
            pages_between(a, LogPos { log: 7, page: 950 }, None),
            Some(50)
        );
        assert_eq!(pages_between(a, b, None), None);
        assert_eq!(pages_between(b, a, None), None);
        assert_eq!(
            pages_between(
                LogPos { log: 7, page: 960 },
                LogPos { log: 7, page: 950 },
                None
            ),
            Some(0)
        );
    }
}
