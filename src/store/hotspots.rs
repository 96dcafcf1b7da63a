//! Buffer hot spots: objects with buffer waiters in `onstat -X`, accumulated over a sliding
//! window and since start. One sample is noise; the seed's advice is to watch repeatedly.

use crate::extents::{ExtentMap, Lookup};
use crate::ids::Addr;
use crate::parsers::onstat_x::OnstatX;
use compact_str::CompactString;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use std::collections::VecDeque;
use std::time::Duration;

/// What waits are accumulated under: the object when the page resolved, else the page itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum HotKey {
    Object {
        object: CompactString,
        dbspace: CompactString,
    },
    Page {
        chunk: u32,
        page: u64,
    },
}

impl HotKey {
    pub(crate) fn label(&self) -> String {
        match self {
            HotKey::Object { object, .. } => object.to_string(),
            HotKey::Page { chunk, page } => format!("{chunk}:{page}"),
        }
    }

    fn resolve(map: Option<&ExtentMap>, chunk: u32, page: u64, base_page_kb: u32) -> HotKey {
        if let Some(m) = map {
            if let Lookup::Resolved(hit) = m.lookup(chunk, page, base_page_kb) {
                return HotKey::Object {
                    object: hit.object.description.clone(),
                    dbspace: hit.dbspace.unwrap_or("?").into(),
                };
            }
        }
        HotKey::Page { chunk, page }
    }
}

#[derive(Debug, Clone)]
struct KeySample {
    key: HotKey,
    waiters: u32,
    pages: Vec<(u32, u64)>,
    /// Owner of this key's most-waited buffer in the sample.
    owner: Option<Addr>,
}

#[derive(Debug, Clone)]
struct Sample {
    t: Duration,
    index: u64,
    keys: Vec<KeySample>,
}

#[derive(Debug, Clone, Default)]
struct Totals {
    samples: u64,
    waiters: u64,
    pages: FxHashSet<(u32, u64)>,
    last_index: Option<u64>,
    streak: u32,
    longest: u32,
}

/// Distinct pages remembered per object: enough to tell "one hot page" from "spread out".
const MAX_PAGES_PER_KEY: usize = 4096;

/// The accumulator. Feed it every `onstat -X` sample.
#[derive(Debug, Clone)]
pub(crate) struct Hotspots {
    window: Duration,
    ring: VecDeque<Sample>,
    totals: FxHashMap<HotKey, Totals>,
    samples_seen: u64,
}

/// One row of the Buffer hot spots pane.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotspotRow {
    /// The object (`db:'owner'.table`) or `chunk:page` when the page did not resolve.
    pub object: String,
    pub dbspace: Option<String>,
    pub resolved: bool,
    /// Samples in the window in which it had waiters, and the window's sample count.
    pub samples_window: u64,
    pub window_samples: u64,
    pub waiters_window: u64,
    pub samples_total: u64,
    pub waiters_total: u64,
    pub distinct_pages: u64,
    pub current_waiters: u64,
    pub longest_streak: u32,
    /// Waiters per sample over the window, oldest first (the sparkline).
    pub trend: Vec<u64>,
    /// The thread (rstcb) holding its most-waited buffer in the latest sample.
    pub owner: Option<Addr>,
    /// That thread's session (joined through `onstat -u` when the snapshot is built).
    pub owner_sid: Option<crate::ids::Sid>,
    /// Seconds from the first to the latest sample of the window in which it had waiters.
    #[serde(skip)]
    pub span_s: f64,
}

impl Hotspots {
    pub(crate) fn new(window: Duration) -> Self {
        Hotspots {
            window,
            ring: VecDeque::new(),
            totals: FxHashMap::default(),
            samples_seen: 0,
        }
    }

    /// Takes one `onstat -X` sample taken at `t`.
    pub(crate) fn observe(
        &mut self,
        x: &OnstatX,
        t: Duration,
        map: Option<&ExtentMap>,
        base_page_kb: u32,
    ) {
        let index = self.samples_seen;
        self.samples_seen += 1;
        let mut by_key: FxHashMap<HotKey, KeySample> = FxHashMap::default();
        let mut best: FxHashMap<HotKey, usize> = FxHashMap::default();
        for b in x.pools.iter().flat_map(|p| &p.buffers) {
            if b.waiters.is_empty() {
                continue;
            }
            let key = HotKey::resolve(map, b.chunk, b.page, base_page_kb);
            let n = b.waiters.len();
            let ks = by_key.entry(key.clone()).or_insert_with(|| KeySample {
                key: key.clone(),
                waiters: 0,
                pages: Vec::new(),
                owner: None,
            });
            ks.waiters += u32::try_from(n).unwrap_or(u32::MAX);
            if !ks.pages.contains(&(b.chunk, b.page)) {
                ks.pages.push((b.chunk, b.page));
            }
            let top = best.entry(key).or_insert(0);
            if n > *top {
                *top = n;
                ks.owner = b.owner.filter(|o| o.0 != u64::MAX);
            }
        }
        let keys: Vec<KeySample> = by_key.into_values().collect();
        for ks in &keys {
            let tot = self.totals.entry(ks.key.clone()).or_default();
            tot.samples += 1;
            tot.waiters += u64::from(ks.waiters);
            for p in &ks.pages {
                if tot.pages.len() < MAX_PAGES_PER_KEY {
                    tot.pages.insert(*p);
                }
            }
            tot.streak = match tot.last_index {
                Some(i) if i + 1 == index => tot.streak + 1,
                _ => 1,
            };
            tot.longest = tot.longest.max(tot.streak);
            tot.last_index = Some(index);
        }
        self.ring.push_back(Sample { t, index, keys });
        let horizon = t.saturating_sub(self.window);
        while self.ring.front().is_some_and(|s| s.t < horizon) {
            self.ring.pop_front();
        }
    }

    /// Of the buffer pages with waiters in the window, how many did not resolve to an object.
    /// Over the window, after re-keying: pages seen before the map arrived do not count against
    /// it (that would rebuild a fresh map at start).
    pub(crate) fn unresolved_share(&self) -> Option<f64> {
        let (mut resolved, mut unresolved) = (0u64, 0u64);
        for ks in self.ring.iter().flat_map(|s| &s.keys) {
            let n = ks.pages.len() as u64;
            match ks.key {
                HotKey::Object { .. } => resolved += n,
                HotKey::Page { .. } => unresolved += n,
            }
        }
        let all = resolved + unresolved;
        (all > 0).then(|| unresolved as f64 / all as f64)
    }

    /// A new extent map arrived: pages that now resolve join their object's row.
    pub(crate) fn rekey(&mut self, map: &ExtentMap, base_page_kb: u32) {
        let old = std::mem::take(&mut self.totals);
        for (key, tot) in old {
            let new_key = match &key {
                HotKey::Page { chunk, page } => {
                    HotKey::resolve(Some(map), *chunk, *page, base_page_kb)
                }
                k => k.clone(),
            };
            let e = self.totals.entry(new_key).or_default();
            e.samples = e.samples.max(tot.samples);
            e.waiters += tot.waiters;
            for p in tot.pages {
                if e.pages.len() < MAX_PAGES_PER_KEY {
                    e.pages.insert(p);
                }
            }
            e.longest = e.longest.max(tot.longest);
            if tot.last_index > e.last_index {
                e.last_index = tot.last_index;
                e.streak = tot.streak;
            }
        }
        for s in &mut self.ring {
            let mut merged: Vec<KeySample> = Vec::with_capacity(s.keys.len());
            for mut ks in std::mem::take(&mut s.keys) {
                if let HotKey::Page { chunk, page } = ks.key {
                    ks.key = HotKey::resolve(Some(map), chunk, page, base_page_kb);
                }
                match merged.iter_mut().find(|m| m.key == ks.key) {
                    Some(m) => {
                        m.waiters += ks.waiters;
                        m.pages.extend(ks.pages);
                    }
                    None => merged.push(ks),
                }
            }
            s.keys = merged;
        }
    }

    /// Since when `page` has had waiters without a break (the start of its latest run of
    /// samples in the window), for the object labelled `label`.
    pub(crate) fn page_since(&self, label: &str, page: (u32, u64)) -> Option<Duration> {
        let mut since = None;
        for s in &self.ring {
            let present = s
                .keys
                .iter()
                .any(|k| k.key.label() == label && k.pages.contains(&page));
            since = match (present, since) {
                (true, None) => Some(s.t),
                (true, Some(t)) => Some(t),
                (false, _) => None,
            };
        }
        since
    }

    /// The pane's rows, hottest first (waiters in the window, then since start).
    pub(crate) fn rows(&self) -> Vec<HotspotRow> {
        let latest = self.ring.back().map(|s| s.index);
        let mut rows: Vec<HotspotRow> = self
            .totals
            .iter()
            .map(|(key, tot)| {
                let mut trend = Vec::with_capacity(self.ring.len());
                let mut samples_window = 0;
                let mut waiters_window = 0;
                let mut current = 0;
                let mut owner = None;
                let mut span: Option<(Duration, Duration)> = None;
                for s in &self.ring {
                    let w = s
                        .keys
                        .iter()
                        .find(|k| &k.key == key)
                        .map(|k| {
                            if Some(s.index) == latest {
                                owner = k.owner;
                            }
                            u64::from(k.waiters)
                        })
                        .unwrap_or(0);
                    if w > 0 {
                        samples_window += 1;
                        waiters_window += w;
                        span = Some(span.map_or((s.t, s.t), |(a, _)| (a, s.t)));
                    }
                    if Some(s.index) == latest {
                        current = w;
                    }
                    trend.push(w);
                }
                let (object, dbspace, resolved) = match key {
                    HotKey::Object { object, dbspace } => {
                        (object.to_string(), Some(dbspace.to_string()), true)
                    }
                    HotKey::Page { .. } => (key.label(), None, false),
                };
                HotspotRow {
                    object,
                    dbspace,
                    resolved,
                    samples_window,
                    window_samples: self.ring.len() as u64,
                    waiters_window,
                    samples_total: tot.samples,
                    waiters_total: tot.waiters,
                    distinct_pages: tot.pages.len() as u64,
                    current_waiters: current,
                    longest_streak: tot.longest,
                    trend,
                    owner,
                    owner_sid: None,
                    span_s: span.map_or(0.0, |(a, b)| b.saturating_sub(a).as_secs_f64()),
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            b.waiters_window
                .cmp(&a.waiters_window)
                .then(b.waiters_total.cmp(&a.waiters_total))
                .then(a.object.cmp(&b.object))
        });
        rows
    }
}
