//! The store: per source the last good value, the last error and their times; and the
//! accumulators fed by every sample (wait tracking, rates, hot spots, Send-Q history, scan rates).

pub mod hotspots;
pub mod scan;
pub mod sockets;
pub mod waits;

use crate::collect::sample::{Parsed, Update};
use crate::error::SourceError;
use crate::extents::ExtentMap;
use crate::ids::Sid;
use crate::parsers::onstat_g_ath::OnstatGAth;
use crate::parsers::onstat_g_con::OnstatGCon;
use crate::parsers::onstat_g_ntt::OnstatGNtt;
use crate::parsers::onstat_g_ses::OnstatGSes;
use crate::parsers::onstat_g_sql::OnstatGSql;
use crate::parsers::onstat_k::OnstatK;
use crate::parsers::onstat_u::OnstatU;
use crate::parsers::onstat_x::OnstatX;
use crate::parsers::systabnames::Systabnames;
use crate::source::Source;
use crate::store::hotspots::Hotspots;
use crate::store::scan::ScanRate;
use crate::store::sockets::SocketHistory;
use crate::store::waits::{Rates, WaitTracker};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The last good value of a source in its typed form (None: not collected yet).
macro_rules! typed {
    ($store:expr, $source:expr, $variant:ident) => {
        match $store.parsed(&$source) {
            Some(Parsed::$variant(v)) => Some(v.as_ref()),
            _ => None,
        }
    };
}

/// Settings the joins need.
#[derive(Debug, Clone)]
pub struct StoreSettings {
    /// Base page size in KB that onstat page numbers count in.
    pub base_page_kb: u32,
    /// Informix listener ports (empty: unknown, every TCP connection is shown).
    pub ports: Vec<u16>,
    pub hotspot_window: Duration,
    pub socket_window: Duration,
}

impl Default for StoreSettings {
    fn default() -> Self {
        StoreSettings {
            base_page_kb: 2,
            ports: Vec::new(),
            hotspot_window: Duration::from_secs(120),
            socket_window: Duration::from_secs(60),
        }
    }
}

/// What is known of one source.
#[derive(Debug, Clone, Default)]
pub struct SourceState {
    pub last_ok: Option<(Duration, Parsed)>,
    pub last_error: Option<(Duration, SourceError)>,
    pub runs: u64,
    pub failures: u64,
    pub last_took: Duration,
    /// The latest run applied failed. Order of arrival decides, not timestamps: an error and
    /// a good sample can carry the same time.
    pub latest_failed: bool,
}

impl SourceState {
    /// The last run failed: the data shown (if any) is older than the last attempt.
    pub fn failing(&self) -> Option<&SourceError> {
        match &self.last_error {
            Some((_, e)) if self.latest_failed => Some(e),
            _ => None,
        }
    }

    /// Age of the data shown, at `now`.
    pub fn age(&self, now: Duration) -> Option<Duration> {
        self.last_ok.as_ref().map(|(t, _)| now.saturating_sub(*t))
    }
}

#[derive(Debug, Clone)]
pub struct Store {
    pub settings: StoreSettings,
    sources: BTreeMap<Source, SourceState>,
    pub tracker: WaitTracker,
    pub rates: Rates,
    pub hotspots: Hotspots,
    pub sockets: SocketHistory,
    pub scan: ScanRate,
    extents: Option<(Duration, Arc<ExtentMap>)>,
    /// Bumped by every applied update: derived views are rebuilt when it moves.
    pub generation: u64,
    /// Time of the newest sample applied.
    pub latest: Duration,
}

impl Store {
    pub fn new(settings: StoreSettings) -> Self {
        Store {
            hotspots: Hotspots::new(settings.hotspot_window),
            sockets: SocketHistory::new(settings.socket_window),
            settings,
            sources: BTreeMap::new(),
            tracker: WaitTracker::default(),
            rates: Rates::default(),
            scan: ScanRate::default(),
            extents: None,
            generation: 0,
            latest: Duration::ZERO,
        }
    }

    pub fn source(&self, s: &Source) -> Option<&SourceState> {
        self.sources.get(s)
    }

    pub fn sources(&self) -> impl Iterator<Item = (&Source, &SourceState)> {
        self.sources.iter()
    }

    /// The last good value of a source.
    pub fn parsed(&self, s: &Source) -> Option<&Parsed> {
        self.sources
            .get(s)
            .and_then(|st| st.last_ok.as_ref())
            .map(|(_, p)| p)
    }

    pub fn onstat_u(&self) -> Option<&OnstatU> {
        typed!(self, Source::OnstatU, OnstatU)
    }

    pub fn onstat_x(&self) -> Option<&OnstatX> {
        typed!(self, Source::OnstatX, OnstatX)
    }

    pub fn onstat_g_con(&self) -> Option<&OnstatGCon> {
        typed!(self, Source::OnstatGCon, OnstatGCon)
    }

    pub fn onstat_g_ath(&self) -> Option<&OnstatGAth> {
        typed!(self, Source::OnstatGAth, OnstatGAth)
    }

    pub fn onstat_g_ntt(&self) -> Option<&OnstatGNtt> {
        typed!(self, Source::OnstatGNtt, OnstatGNtt)
    }

    pub fn onstat_k(&self) -> Option<&OnstatK> {
        typed!(self, Source::OnstatK, OnstatK)
    }

    pub fn systabnames(&self) -> Option<&Systabnames> {
        typed!(self, Source::Systabnames, Systabnames)
    }

    pub fn onstat_g_ses(&self, sid: Sid) -> Option<&OnstatGSes> {
        typed!(self, Source::OnstatGSes(sid), OnstatGSes)
    }

    pub fn onstat_g_sql(&self, sid: Sid) -> Option<&OnstatGSql> {
        typed!(self, Source::OnstatGSql(sid), OnstatGSql)
    }

    pub fn extents(&self) -> Option<&Arc<ExtentMap>> {
        self.extents.as_ref().map(|(_, m)| m)
    }

    pub fn extents_loaded_at(&self) -> Option<Duration> {
        self.extents.as_ref().map(|(t, _)| *t)
    }

    /// Installs an extent map that did not come through a source (a `--extents FILE` or the
    /// on-disk cache). Pages seen so far are re-resolved.
    pub fn set_extents(&mut self, map: Arc<ExtentMap>, t: Duration) {
        self.hotspots.rekey(&map, self.settings.base_page_kb);
        self.extents = Some((t, map));
        self.generation += 1;
    }

    /// Applies one sample: the source's state, then the accumulators it feeds.
    pub fn apply(&mut self, u: Update) {
        self.latest = self.latest.max(u.t);
        self.generation += 1;
        let st = self.sources.entry(u.source.clone()).or_default();
        st.runs += 1;
        st.last_took = u.took;
        let parsed = match u.result {
            Err(e) => {
                st.failures += 1;
                st.latest_failed = true;
                st.last_error = Some((u.t, e));
                return;
            }
            Ok(p) => p,
        };
        st.latest_failed = false;
        st.last_ok = Some((u.t, parsed.clone()));
        let base = self.settings.base_page_kb;
        match (&u.source, &parsed) {
            (Source::OnstatU, Parsed::OnstatU(v)) => {
                self.tracker.observe(v, u.t);
                self.rates.observe(v, u.t);
            }
            (Source::OnstatX, Parsed::OnstatX(v)) => {
                let map = self.extents.as_ref().map(|(_, m)| m.clone());
                self.hotspots.observe(v, u.t, map.as_deref(), base);
            }
            (Source::ProcNetTcp | Source::Netstat, Parsed::Sockets(v)) => {
                // tcp6 arrives on its own; the latest one joins each tcp sample.
                let v6 = match self.parsed(&Source::ProcNetTcp6) {
                    Some(Parsed::Sockets(s6)) => Some(s6.clone()),
                    _ => None,
                };
                let all = v
                    .sockets
                    .iter()
                    .chain(v6.iter().flat_map(|s| s.sockets.iter()));
                self.sockets.observe(all, u.t, &self.settings.ports);
            }
            (Source::Vmstat, Parsed::Vmstat(v)) => self.scan.observe(v, u.t),
            (Source::OncheckPe, Parsed::Extents(m)) => {
                self.hotspots.rekey(m, base);
                self.extents = Some((u.t, m.clone()));
            }
            _ => {}
        }
    }

    /// Applies what a replay step played: a seek back starts over from an empty store.
    pub fn play(&mut self, played: crate::collect::replay::Played) {
        if played.restart {
            *self = Store::new(self.settings.clone());
        }
        for u in played.updates {
            self.apply(u);
        }
    }
}

/// A store holding everything a recording says up to `at` (the end when `None`).
pub fn replayed(
    rec: Arc<crate::collect::record::Recording>,
    settings: StoreSettings,
    at: Option<Duration>,
) -> Store {
    let mut store = Store::new(settings);
    let mut p = crate::collect::replay::Player::new(rec);
    let target = at.unwrap_or_else(|| p.length());
    store.play(p.seek(target));
    store
}
