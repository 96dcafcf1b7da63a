//! Chunk and device I/O over time: per chunk the pages read and written per second (`onstat -D`
//! deltas), Informix's average time per operation over the last samples (`onstat -g iof`),
//! per block device what `iostat -x` computes from `/proc/diskstats` (IOPS, await, %util), and
//! the primary's log position over time (`onstat -g cluster`) that turns a lag in pages into one
//! in seconds.
//!
//! Counters that go down were reset (`onstat -z`, a restart, a device added again): the rate
//! starts over from that sample, never negative. The kernel keeps some counters in 32 bits
//! (`io_ticks` before 5.x, everything on a 32-bit kernel): a counter that wrapped is read
//! through the wrap.

use crate::parsers::ha::LogPos;
use crate::parsers::onstat_d_upper::OnstatDUpper;
use crate::parsers::onstat_g_cluster::OnstatGCluster;
use crate::parsers::onstat_g_iof::OnstatGIof;
use crate::parsers::proc_diskstats::{DiskStats, ProcDiskstats};
use crate::parsers::sysblock::DevNum;
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

/// Points each history keeps (5 minutes at 5 s).
pub(crate) const HISTORY: usize = 60;
/// `onstat -g iof` samples kept: the average time per operation is taken over the shortest
/// span among them that is precise enough (see [`IofHistory::op_time`]).
const IOF_SAMPLES: usize = 7;
/// The primary's log positions kept (15 minutes at 10 s).
const LOG_SAMPLES: usize = 90;

fn push<T>(h: &mut VecDeque<T>, v: T, cap: usize) {
    if h.len() == cap {
        h.pop_front();
    }
    h.push_back(v);
}

/// The growth of a counter between two samples. A counter that went down wrapped when it was in
/// the top half of the 32-bit range and the wrapped growth is under half the range (the
/// serial-number rule); else it was reset (a device added again), and there is no rate.
pub(crate) fn grew(prev: u64, cur: u64) -> Option<u64> {
    if cur >= prev {
        return Some(cur - prev);
    }
    const WRAP: u64 = 1 << 32;
    if (WRAP / 2..WRAP).contains(&prev) {
        let d = cur + WRAP - prev;
        if d < WRAP / 2 {
            return Some(d);
        }
    }
    None
}

/// Pages per second of one chunk over the last interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChunkRate {
    pub reads_per_s: f64,
    pub writes_per_s: f64,
}

/// Chunk number → its path, pages read and pages written, as one `onstat -D` counted them.
type ChunkCounts = BTreeMap<u32, (String, u64, u64)>;

/// Per chunk page rates from `onstat -D`.
#[derive(Debug, Clone, Default)]
pub struct ChunkRates {
    prev: Option<(Duration, ChunkCounts)>,
    /// Chunk number → its rates over the last interval (absent right after a reset).
    pub(crate) rates: BTreeMap<u32, ChunkRate>,
    /// Chunk number → pages read and written per second, oldest first.
    pub(crate) history: BTreeMap<u32, VecDeque<f64>>,
    /// When counters last went down.
    pub(crate) reset_at: Option<Duration>,
}

impl ChunkRates {
    pub(crate) fn observe(&mut self, d: &OnstatDUpper, t: Duration) {
        let now: ChunkCounts = d
            .chunks
            .iter()
            .map(|c| (c.chunk, (c.path.clone(), c.page_rd, c.page_wr)))
            .collect();
        if let Some((t0, before)) = &self.prev {
            let dt = t.saturating_sub(*t0).as_secs_f64();
            if dt > 0.0 {
                self.rates.clear();
                for (chunk, (path, rd, wr)) in &now {
                    let Some((p0, rd0, wr0)) = before.get(chunk) else {
                        continue;
                    };
                    // A chunk number reused for another path (dropped and added) starts over.
                    if p0 != path {
                        continue;
                    }
                    if rd < rd0 || wr < wr0 {
                        self.reset_at = Some(t);
                        continue;
                    }
                    let r = ChunkRate {
                        reads_per_s: (rd - rd0) as f64 / dt,
                        writes_per_s: (wr - wr0) as f64 / dt,
                    };
                    push(
                        self.history.entry(*chunk).or_default(),
                        r.reads_per_s + r.writes_per_s,
                        HISTORY,
                    );
                    self.rates.insert(*chunk, r);
                }
                self.history.retain(|c, _| now.contains_key(c));
            }
        }
        self.prev = Some((t, now));
    }
}

/// Informix's average time per operation over a span of samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpTime {
    /// Milliseconds per operation.
    pub ms: f64,
    /// How far off it may be, ms: the printed averages have four decimals (0.1 ms) over every
    /// operation since the counters' last reset.
    pub within_ms: f64,
    /// Over how many seconds (0 when `since_reset`).
    pub over_s: f64,
    /// No span was precise enough: this is Informix's own average since its counters were last
    /// reset (`onstat -z`), as printed.
    pub since_reset: bool,
    /// Operations per second over the span (`None` when `since_reset`).
    pub ops_per_s: Option<f64>,
}

/// Per file (by path): operation → (count, average seconds).
type IofSample = BTreeMap<String, BTreeMap<String, (u64, f64)>>;

/// The last `onstat -g iof` samples.
#[derive(Debug, Clone, Default)]
pub struct IofHistory {
    samples: VecDeque<(Duration, IofSample)>,
}

/// Which operations: reads (`reads`, `kaio_reads`) or writes (`writes`, `kaio_writes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Write,
}

impl OpKind {
    fn names(self) -> [&'static str; 2] {
        match self {
            OpKind::Read => ["reads", "kaio_reads"],
            OpKind::Write => ["writes", "kaio_writes"],
        }
    }
}

/// One unit of the last printed digit of `avg. time` (`0.0010`): the most each printed average
/// can be off, rounded or cut.
const PRINTED_UNIT_S: f64 = 0.0001;

impl IofHistory {
    pub(crate) fn observe(&mut self, g: &OnstatGIof, t: Duration) {
        let sample: IofSample = g
            .files
            .iter()
            .map(|f| {
                let ops = f
                    .ops
                    .iter()
                    .map(|o| (o.op.clone(), (o.count, o.avg_time_s.unwrap_or(0.0))))
                    .collect();
                (f.path.clone(), ops)
            })
            .collect();
        push(&mut self.samples, (t, sample), IOF_SAMPLES);
    }

    /// The paths of the latest sample.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &String> {
        self.samples.back().into_iter().flat_map(|(_, s)| s.keys())
    }

    /// (operations, total seconds, printed-rounding slack in seconds) of `kind` for `path` in a
    /// sample.
    fn totals(s: &IofSample, path: &str, kind: OpKind) -> Option<(u64, f64, f64)> {
        let ops = s.get(path)?;
        let mut count = 0u64;
        let mut secs = 0.0;
        let mut slack = 0.0;
        for name in kind.names() {
            if let Some((c, avg)) = ops.get(name) {
                count += c;
                secs += *c as f64 * avg;
                slack += *c as f64 * PRINTED_UNIT_S;
            }
        }
        Some((count, secs, slack))
    }

    /// Informix's average time per operation of `kind` on `path`: over the shortest span back
    /// from the latest sample whose bound is within a quarter of the value (or 0.5 ms), else its
    /// own average since the last reset. The printed averages are of every operation since the
    /// reset, to 0.1 ms: the average over a span is `Δ(count × avg) / Δcount`, off by up to
    /// `0.1 ms × (count then + count now) / Δcount` — on a server up for weeks without
    /// `onstat -z` no span is precise enough, and the average since the reset is what there is.
    /// `None` when there is no such file or it never had an operation of that kind.
    pub(crate) fn op_time(&self, path: &str, kind: OpKind) -> Option<OpTime> {
        let (t1, last) = self.samples.back()?;
        let (c1, s1, e1) = Self::totals(last, path, kind)?;
        for (t0, earlier) in self.samples.iter().rev().skip(1) {
            let Some((c0, s0, e0)) = Self::totals(earlier, path, kind) else {
                break;
            };
            if c1 < c0 {
                // Reset between the two: nothing older counts.
                break;
            }
            let dc = c1 - c0;
            let span = t1.saturating_sub(*t0).as_secs_f64();
            if dc == 0 || span <= 0.0 {
                continue;
            }
            let est = ((s1 - s0) / dc as f64).max(0.0);
            let bound = (e1 + e0) / dc as f64;
            if bound <= (0.25 * est).max(0.0005) {
                return Some(OpTime {
                    ms: est * 1000.0,
                    within_ms: bound * 1000.0,
                    over_s: span,
                    since_reset: false,
                    ops_per_s: Some(dc as f64 / span),
                });
            }
        }
        (c1 > 0).then(|| OpTime {
            ms: s1 / c1 as f64 * 1000.0,
            within_ms: PRINTED_UNIT_S * 1000.0,
            over_s: 0.0,
            since_reset: true,
            ops_per_s: None,
        })
    }
}

/// What `iostat -x` shows of one device over the last interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiskRate {
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    /// KB per second.
    pub read_kb_per_s: f64,
    pub write_kb_per_s: f64,
    /// ms per read, per write, per I/O (`None` without I/O of that kind).
    pub r_await_ms: Option<f64>,
    pub w_await_ms: Option<f64>,
    pub await_ms: Option<f64>,
    /// Share of the time with I/O in flight, %.
    pub util_pct: f64,
    /// Average I/Os in flight (`aqu-sz`).
    pub queue: f64,
}

/// The counters a rate needs, kept from the previous sample.
#[derive(Debug, Clone, Copy)]
struct DiskCounters {
    reads: u64,
    read_sectors: u64,
    read_ms: u64,
    writes: u64,
    write_sectors: u64,
    write_ms: u64,
    io_ms: u64,
    weighted_ms: u64,
}

impl From<&DiskStats> for DiskCounters {
    fn from(d: &DiskStats) -> Self {
        DiskCounters {
            reads: d.reads_completed,
            read_sectors: d.sectors_read,
            read_ms: d.read_ms,
            writes: d.writes_completed,
            write_sectors: d.sectors_written,
            write_ms: d.write_ms,
            io_ms: d.io_ms,
            weighted_ms: d.weighted_io_ms,
        }
    }
}

fn rate_of(a: &DiskCounters, b: &DiskCounters, dt_s: f64) -> Option<DiskRate> {
    if dt_s <= 0.0 {
        return None;
    }
    let reads = grew(a.reads, b.reads)?;
    let writes = grew(a.writes, b.writes)?;
    let rs = grew(a.read_sectors, b.read_sectors)?;
    let ws = grew(a.write_sectors, b.write_sectors)?;
    let rms = grew(a.read_ms, b.read_ms)?;
    let wms = grew(a.write_ms, b.write_ms)?;
    let io = grew(a.io_ms, b.io_ms)?;
    let weighted = grew(a.weighted_ms, b.weighted_ms)?;
    let per = |ms: u64, n: u64| (n > 0).then(|| ms as f64 / n as f64);
    Some(DiskRate {
        reads_per_s: reads as f64 / dt_s,
        writes_per_s: writes as f64 / dt_s,
        read_kb_per_s: rs as f64 / 2.0 / dt_s,
        write_kb_per_s: ws as f64 / 2.0 / dt_s,
        r_await_ms: per(rms, reads),
        w_await_ms: per(wms, writes),
        await_ms: per(rms + wms, reads + writes),
        // As sysstat does: busy ms over elapsed ms, at most 100.
        util_pct: (io as f64 / (dt_s * 10.0)).min(100.0),
        queue: weighted as f64 / (dt_s * 1000.0),
    })
}

/// The span a device's rates are taken over: read every second, the await over the last 5 s
/// (what `iostat 5` shows, steady enough to judge a device by) is known a second after ifxtop
/// starts (over that second) and follows a device that slows down within a second, not at the
/// next multiple of 5 s.
pub(crate) const DISK_WINDOW: Duration = Duration::from_secs(5);

/// Per device rates from `/proc/diskstats`, by device number.
#[derive(Debug, Clone, Default)]
pub struct DiskRates {
    /// The samples of the last [`DISK_WINDOW`] (and the newest one older), oldest first: a
    /// rate is taken from the newest at least the window old, else the oldest.
    prev: VecDeque<(Duration, BTreeMap<DevNum, DiskCounters>)>,
    /// When the histories last took a sample: one every [`DISK_WINDOW`], so they span what they
    /// did when the counters were read every 5 s (the trend's 12 cells a minute, the slowing
    /// rule's first sample five minutes back), while the rates follow every second.
    last_kept: Option<Duration>,
    pub(crate) rates: BTreeMap<DevNum, DiskRate>,
    /// Device → await (ms) over time, oldest first (0 when the device did no I/O).
    pub(crate) await_history: BTreeMap<DevNum, VecDeque<f64>>,
    /// Device → %util over time, oldest first.
    pub(crate) util_history: BTreeMap<DevNum, VecDeque<f64>>,
    /// Devices whose counters went down (reset) at the last sample.
    pub(crate) reset: Vec<DevNum>,
}

impl DiskRates {
    pub(crate) fn observe(&mut self, p: &ProcDiskstats, t: Duration) {
        let now: BTreeMap<DevNum, DiskCounters> = p
            .disks
            .iter()
            .map(|d| {
                (
                    DevNum {
                        major: d.major,
                        minor: d.minor,
                    },
                    DiskCounters::from(d),
                )
            })
            .collect();
        // A sample from before the last (a replay's seek back, a restart) starts over.
        if self.prev.back().is_some_and(|(t0, _)| *t0 >= t) {
            self.prev.clear();
        }
        while self.prev.len() >= 2
            && self
                .prev
                .get(1)
                .is_some_and(|(t1, _)| t.saturating_sub(*t1) >= DISK_WINDOW)
        {
            self.prev.pop_front();
        }
        if let Some((t0, before)) = self.prev.front() {
            let dt = t.saturating_sub(*t0).as_secs_f64();
            let keep = self
                .last_kept
                .is_none_or(|k| t < k || t.saturating_sub(k) >= DISK_WINDOW);
            if dt > 0.0 && keep {
                self.last_kept = Some(t);
            }
            if dt > 0.0 {
                self.rates.clear();
                self.reset.clear();
                for (dev, c) in &now {
                    let Some(c0) = before.get(dev) else {
                        continue;
                    };
                    match rate_of(c0, c, dt) {
                        Some(r) => {
                            if keep {
                                push(
                                    self.await_history.entry(*dev).or_default(),
                                    r.await_ms.unwrap_or(0.0),
                                    HISTORY,
                                );
                                push(
                                    self.util_history.entry(*dev).or_default(),
                                    r.util_pct,
                                    HISTORY,
                                );
                            }
                            self.rates.insert(*dev, r);
                        }
                        None => self.reset.push(*dev),
                    }
                }
                self.await_history.retain(|d, _| now.contains_key(d));
                self.util_history.retain(|d, _| now.contains_key(d));
            }
        }
        self.prev.push_back((t, now));
    }
}

/// The primary's current log position over time, from `onstat -g cluster`.
#[derive(Debug, Clone, Default)]
pub struct LogHistory {
    pub(crate) positions: VecDeque<(Duration, LogPos)>,
    /// Per peer: log pages between the primary's position and its acknowledged one, per
    /// sample (within one log; 0 for a sample where they are in different logs is not
    /// guessed: the sample is left out).
    pub(crate) peer_lag: BTreeMap<String, VecDeque<f64>>,
}

impl LogHistory {
    pub(crate) fn observe(&mut self, c: &OnstatGCluster, t: Duration) {
        if let Some(p) = c.current_log_page {
            // A position that went back is another primary (a failover): start over.
            if self
                .positions
                .back()
                .is_some_and(|(_, last)| (p.log, p.page) < (last.log, last.page))
            {
                self.positions.clear();
            }
            push(&mut self.positions, (t, p), LOG_SAMPLES);
            for s in &c.servers {
                let acked = s.last_acked.or(s.acked);
                if let Some(n) = acked.and_then(|a| a.pages_to(p)) {
                    push(
                        self.peer_lag.entry(s.name.clone()).or_default(),
                        n as f64,
                        HISTORY,
                    );
                }
            }
            self.peer_lag
                .retain(|name, _| c.servers.iter().any(|s| s.name == *name));
        }
    }

    /// How long before the latest sample the primary was where `acked` is: the lag in seconds
    /// of a secondary that had acknowledged `acked` at that sample. Between two samples the
    /// time is interpolated by page within one log. `Err(at_least)` when the primary passed
    /// `acked` before the oldest sample kept (the lag is at least that long); `None` without
    /// samples, or with one sample when `acked` is behind it (no time to tell).
    pub(crate) fn seconds_behind(&self, acked: LogPos) -> Option<Result<f64, f64>> {
        let (now, latest) = *self.positions.back()?;
        let key = |p: &LogPos| (p.log, p.page);
        if key(&acked) >= key(&latest) {
            return Some(Ok(0.0));
        }
        // The last sample at or before `acked`, and the one after it.
        let mut after: Option<&(Duration, LogPos)> = None;
        for s in self.positions.iter().rev() {
            if key(&s.1) <= key(&acked) {
                let (t0, p0) = s;
                let at = match after {
                    Some((t1, p1)) if p1.log == p0.log && p1.page > p0.page => {
                        let f = (acked.page - p0.page) as f64 / (p1.page - p0.page) as f64;
                        t0.as_secs_f64() + f * t1.saturating_sub(*t0).as_secs_f64()
                    }
                    _ => t0.as_secs_f64(),
                };
                return Some(Ok((now.as_secs_f64() - at).max(0.0)));
            }
            after = Some(s);
        }
        // Passed before the oldest sample: at least as long as the samples reach back; with one
        // sample (just started) that is nothing worth saying.
        let oldest = self.positions.front()?.0;
        let span = now.saturating_sub(oldest);
        (!span.is_zero()).then_some(Err(span.as_secs_f64()))
    }
}

/// Everything of chunk I/O, devices and replication the store accumulates.
#[derive(Debug, Clone, Default)]
pub struct IoHistory {
    pub(crate) chunks: ChunkRates,
    pub(crate) iof: IofHistory,
    pub(crate) disks: DiskRates,
    pub(crate) log: LogHistory,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_wrap_at_32_bits_and_reset_otherwise() {
        assert_eq!(grew(10, 25), Some(15));
        assert_eq!(grew(u32::MAX as u64 - 4, 5), Some(10));
        assert_eq!(grew(3_000_000_000, 1_000), Some(1_294_968_296));
        // Down from low in the range: a reset, not a wrap.
        assert_eq!(grew(1_000_000, 5), None);
        assert_eq!(grew(3_000_000_000, 2_500_000_000), None);
        // A 64-bit counter never wraps in practice: down is a reset.
        assert_eq!(grew(1 << 40, 5), None);
    }

    #[test]
    fn seconds_behind_interpolates_within_a_log() {
        let mut h = LogHistory::default();
        for (t, page) in [(0u64, 100u64), (10, 200), (20, 300)] {
            h.positions
                .push_back((Duration::from_secs(t), LogPos { log: 7, page }));
        }
        assert_eq!(
            h.seconds_behind(LogPos { log: 7, page: 300 }),
            Some(Ok(0.0))
        );
        assert_eq!(
            h.seconds_behind(LogPos { log: 7, page: 250 }),
            Some(Ok(5.0))
        );
        assert_eq!(
            h.seconds_behind(LogPos { log: 7, page: 50 }),
            Some(Err(20.0))
        );
        assert_eq!(
            h.seconds_behind(LogPos { log: 6, page: 900 }),
            Some(Err(20.0))
        );
        // One sample: behind it by some pages, yet no time is known (not "more than 0s").
        let mut one = LogHistory::default();
        one.positions
            .push_back((Duration::from_secs(600), LogPos { log: 7, page: 300 }));
        assert_eq!(one.seconds_behind(LogPos { log: 7, page: 297 }), None);
        assert_eq!(
            one.seconds_behind(LogPos { log: 7, page: 300 }),
            Some(Ok(0.0))
        );
    }
}
