//! Page-scan rates from /proc/vmstat deltas (the kernel reclaiming memory).

use std::collections::BTreeMap;
use std::time::Duration;

/// Turns the running totals of /proc/vmstat into rates.
#[derive(Debug, Default, Clone)]
pub(crate) struct ScanRate {
    prev: Option<(Duration, u64, u64)>,
    pub(crate) per_s: Option<f64>,
    pub(crate) direct_per_s: Option<f64>,
}

/// Sums the page-scan counters: `pgscan_kswapd`/`pgscan_direct` on modern kernels, the per-zone
/// `pgscan_kswapd_normal`... on old ones. Returns (all, direct).
pub(crate) fn pgscan_totals(vmstat: &BTreeMap<String, u64>) -> (u64, u64) {
    let mut all = 0u64;
    let mut direct = 0u64;
    for (k, v) in vmstat {
        // pgscan_khugepaged and pgscan_anon/file (6.x) would double count: take kswapd/direct.
        if k.starts_with("pgscan_kswapd") || k.starts_with("pgscan_direct") {
            if k.starts_with("pgscan_direct_throttle") {
                continue;
            }
            all = all.saturating_add(*v);
            if k.starts_with("pgscan_direct") {
                direct = direct.saturating_add(*v);
            }
        }
    }
    (all, direct)
}

impl ScanRate {
    pub(crate) fn observe(&mut self, vmstat: &BTreeMap<String, u64>, t: Duration) {
        let (all, direct) = pgscan_totals(vmstat);
        if let Some((pt, pall, pdirect)) = self.prev {
            let dt = t.saturating_sub(pt).as_secs_f64();
            if dt > 0.0 && all >= pall && direct >= pdirect {
                self.per_s = Some((all - pall) as f64 / dt);
                self.direct_per_s = Some((direct - pdirect) as f64 / dt);
            }
        }
        self.prev = Some((t, all, direct));
    }
}
