//! The server's vital signs that need more than the latest sample: `onstat -p` counters as
//! per-second rates between two samples (with their recent history, for sparklines), VP CPU
//! seconds as busy % per class (`onstat -g glo`), the ready queue's history (`onstat -g rea`),
//! and shared memory's growth since ifxtop started (`onstat -g seg`).
//!
//! A counter that goes down means `onstat -z` (or a restart) reset it: the rates start over
//! from that sample, never a negative rate.

use crate::parsers::onstat_g_glo::OnstatGGlo;
use crate::parsers::onstat_g_seg::OnstatGSeg;
use crate::parsers::onstat_p::OnstatP;
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

/// How many points each sparkline keeps.
pub(crate) const HISTORY: usize = 60;

/// The profile counters turned into rates: the names ifxtop shows (as `onstat -p` prints them).
pub const RATE_COUNTERS: [&str; 10] = [
    "lokwaits", "bufwaits", "lchwaits", "deadlks", "dltouts", "ckpwaits", "seqscans", "commit",
    "rollbk", "isamtot",
];

fn push(h: &mut VecDeque<f64>, v: f64) {
    if h.len() == HISTORY {
        h.pop_front();
    }
    h.push_back(v);
}

/// Per-second rates of the profile counters between the last two samples.
#[derive(Debug, Clone, Default)]
pub struct ProfileRates {
    prev: Option<(Duration, BTreeMap<String, f64>)>,
    /// Counter name → per second, over the last interval (empty until two samples, and again
    /// right after a reset).
    pub(crate) per_s: BTreeMap<String, f64>,
    /// Read and write cache hit % over the last interval (`None` without reads or writes).
    pub(crate) read_cache_pct: Option<f64>,
    pub(crate) write_cache_pct: Option<f64>,
    /// The recent rates of `RATE_COUNTERS`, oldest first.
    pub(crate) history: BTreeMap<&'static str, VecDeque<f64>>,
    /// When counters last went down (`onstat -z`, a restart).
    pub(crate) reset_at: Option<Duration>,
}

impl ProfileRates {
    pub(crate) fn observe(&mut self, p: &OnstatP, t: Duration) {
        let now: BTreeMap<String, f64> = p
            .counters
            .iter()
            .map(|(k, v)| (k.clone(), v.as_f64()))
            .collect();
        if let Some((t0, before)) = &self.prev {
            let dt = t.saturating_sub(*t0).as_secs_f64();
            let reset = before
                .iter()
                .any(|(k, v)| !k.starts_with('%') && now.get(k).is_some_and(|n| n < v));
            if reset {
                self.per_s.clear();
                self.read_cache_pct = None;
                self.write_cache_pct = None;
                self.reset_at = Some(t);
            } else if dt > 0.0 {
                let delta = |k: &str| Some(now.get(k)? - before.get(k)?);
                self.per_s = now
                    .keys()
                    .filter(|k| !k.starts_with('%'))
                    .filter_map(|k| Some((k.clone(), delta(k)? / dt)))
                    .collect();
                let pct = |disk: &str, buf: &str| {
                    let (d, b) = (delta(disk)?, delta(buf)?);
                    (b > 0.0).then(|| (100.0 * (b - d) / b).clamp(0.0, 100.0))
                };
                self.read_cache_pct = pct("dskreads", "bufreads");
                self.write_cache_pct = pct("dskwrits", "bufwrits");
                for name in RATE_COUNTERS {
                    if let Some(v) = self.per_s.get(name) {
                        push(self.history.entry(name).or_default(), *v);
                    }
                }
            }
        }
        self.prev = Some((t, now));
    }
}

/// Class → (CPU seconds of the class, VPs in it).
type ClassCpu = BTreeMap<String, (f64, u64)>;

/// Busy % per VP class from the CPU seconds of `onstat -g glo` between two samples.
#[derive(Debug, Clone, Default)]
pub struct VpBusy {
    /// At the previous sample.
    prev: Option<(Duration, ClassCpu)>,
    /// Class → (VPs, busy % of those VPs over the last interval).
    pub(crate) busy: BTreeMap<String, (u64, f64)>,
    pub(crate) history: BTreeMap<String, VecDeque<f64>>,
}

impl VpBusy {
    /// Takes a sample of `onstat -g glo` printed in a later second of the server's clock than
    /// the `onstat -u` of its call (the call stalled between them): its CPU seconds run to
    /// another moment than its time says, so no busy % now (a second off in ten reads 100 %
    /// then 89 % for a class busy 95 % throughout), and the next sample is measured from the
    /// last one in step.
    pub(crate) fn observe_late(&mut self) {
        self.busy.clear();
    }

    pub(crate) fn observe(&mut self, g: &OnstatGGlo, t: Duration) {
        let now: ClassCpu = g
            .classes
            .iter()
            .map(|c| (c.class.clone(), (c.usercpu + c.syscpu, c.vps)))
            .collect();
        if let Some((t0, before)) = &self.prev {
            let dt = t.saturating_sub(*t0).as_secs_f64();
            let reset = before
                .iter()
                .any(|(k, (cpu, _))| now.get(k).is_some_and(|(n, _)| n < cpu));
            if reset {
                self.busy.clear();
            } else if dt > 0.0 {
                self.busy = now
                    .iter()
                    .filter_map(|(class, (cpu, vps))| {
                        let (was, _) = before.get(class)?;
                        let pct = 100.0 * (cpu - was) / (dt * (*vps).max(1) as f64);
                        Some((class.clone(), (*vps, pct.clamp(0.0, 100.0))))
                    })
                    .collect();
                for (class, (_, pct)) in &self.busy {
                    push(self.history.entry(class.clone()).or_default(), *pct);
                }
            }
        }
        self.prev = Some((t, now));
    }
}

/// Shared memory: the first total seen and the latest, in KB.
#[derive(Debug, Clone, Default)]
pub struct MemoryGrowth {
    pub(crate) first_kb: Option<u64>,
    pub(crate) latest_kb: Option<u64>,
    pub(crate) segments: usize,
    /// Segments added since ifxtop started.
    pub(crate) added: usize,
    first_segments: Option<usize>,
}

impl MemoryGrowth {
    pub(crate) fn observe(&mut self, s: &OnstatGSeg) {
        let bytes = s
            .summary
            .as_ref()
            .and_then(|x| x.total_size)
            .unwrap_or_else(|| s.segments.iter().map(|g| g.size).sum());
        let kb = bytes / 1024;
        self.first_kb.get_or_insert(kb);
        self.latest_kb = Some(kb);
        self.segments = s.segments.len();
        let first = *self.first_segments.get_or_insert(s.segments.len());
        self.added = s.segments.len().saturating_sub(first);
    }
}

/// The ready queue's length over time.
#[derive(Debug, Clone, Default)]
pub struct ReadyQueue {
    pub(crate) history: VecDeque<f64>,
}

impl ReadyQueue {
    pub(crate) fn observe(&mut self, len: usize) {
        push(&mut self.history, len as f64);
    }
}

/// Since when the banner has said the server is blocked, and for what (`Blocked:CKPT`): a
/// checkpoint blocks for a moment every time, and only a block that lasts is a cause.
#[derive(Debug, Clone, Default)]
pub struct Blocked {
    /// The reason, since when, and whether that is only when ifxtop first saw it.
    current: Option<(String, Duration, bool)>,
    last_t: Option<Duration>,
}

impl Blocked {
    /// Takes the `Blocked:` reason of an `onstat -u` banner read at `t` (`None`: not blocked).
    pub(crate) fn observe(&mut self, reason: Option<&str>, t: Duration) {
        let seen_begin = self
            .last_t
            .is_some_and(|last| t.saturating_sub(last) <= crate::store::waits::SEEN_BEGIN_WITHIN);
        self.current = match (reason, self.current.take()) {
            (None, _) => None,
            (Some(r), Some((was, since, at_least))) if was == r && seen_begin => {
                Some((was, since, at_least))
            }
            (Some(r), _) => Some((r.to_string(), t, !seen_begin)),
        };
        self.last_t = Some(t);
    }

    /// The reason, the seconds it has lasted at `now`, and whether that is a lower bound.
    pub(crate) fn lasted(&self, now: Duration) -> Option<(&str, f64, bool)> {
        self.current.as_ref().map(|(r, since, at_least)| {
            (
                r.as_str(),
                now.saturating_sub(*since).as_secs_f64(),
                *at_least,
            )
        })
    }
}

/// Everything of the vital signs the store accumulates.
#[derive(Debug, Clone, Default)]
pub struct Vitals {
    pub(crate) profile: ProfileRates,
    pub(crate) vps: VpBusy,
    pub(crate) memory: MemoryGrowth,
    pub(crate) ready: ReadyQueue,
    pub(crate) blocked: Blocked,
}
