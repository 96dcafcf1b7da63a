//! NUMA: per node size/free/used and CPUs, zone_reclaim_mode, page-scan rates, and how much of
//! the oninit processes' memory sits on each node.

use crate::parsers::numa::{NodeMeminfo, NumaMaps};
use crate::store::scan::ScanRate;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One node's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeRow {
    pub node: u32,
    pub(crate) cpus: Option<Vec<u32>>,
    pub(crate) total_kb: Option<u64>,
    pub free_kb: Option<u64>,
    pub(crate) used_kb: Option<u64>,
    /// The oninit processes' resident memory on this node (shared segments counted once).
    pub(crate) oninit_kb: Option<u64>,
}

/// The NUMA pane's content.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct NumaView {
    pub nodes: Vec<NodeRow>,
    pub zone_reclaim_mode: Option<u32>,
    /// Pages scanned per second (kswapd + direct), from /proc/vmstat deltas.
    pub(crate) pgscan_per_s: Option<f64>,
    /// Direct-reclaim pages scanned per second: processes stalled reclaiming memory themselves.
    pub pgscan_direct_per_s: Option<f64>,
    pub(crate) oninit_processes: usize,
    /// One line explaining what the numbers mean (or why there are none).
    pub(crate) note: Option<String>,
}

impl NumaView {
    /// The warning the seed argues for: zone_reclaim_mode other than 0 on a NUMA machine makes
    /// the kernel evict page cache on the local node instead of using a remote one, which has
    /// caused long checkpoints (threads waiting in critical sections while reclaim runs).
    pub fn zone_reclaim_warning(&self) -> Option<String> {
        match self.zone_reclaim_mode {
            Some(m) if m != 0 => Some(format!(
                "zone_reclaim_mode = {m}: the kernel reclaims memory on the local node instead of \
                 using another node's; on database servers this stalls I/O and checkpoints \
                 (set vm.zone_reclaim_mode = 0)"
            )),
            _ => None,
        }
    }
}

/// KB per node of a set of processes' memory. Shared segments (SysV shm, files mapped shared)
/// appear in every attached process at the same address: they are counted once.
pub(crate) fn oninit_kb_per_node<'a>(
    maps: impl IntoIterator<Item = &'a NumaMaps>,
) -> BTreeMap<u32, u64> {
    let mut seen_shared: BTreeSet<(u64, &str)> = BTreeSet::new();
    let mut per_node: BTreeMap<u32, u64> = BTreeMap::new();
    for m in maps {
        for map in &m.mappings {
            if let Some(file) = map.file.as_deref() {
                // A file (incl. /SYSV shm) mapped in several processes: count it once.
                if !seen_shared.insert((map.address.0, file)) {
                    continue;
                }
            }
            let page_kb = map.kernel_page_kb.unwrap_or_else(|| {
                if map.tags.iter().any(|t| t == "huge") {
                    2048
                } else {
                    4
                }
            });
            for (node, pages) in &map.pages_per_node {
                *per_node.entry(*node).or_default() += pages.saturating_mul(page_kb);
            }
        }
    }
    per_node
}

/// The inputs of the pane, as the store holds them.
pub(crate) struct NumaInputs<'a> {
    pub(crate) online: Option<&'a [u32]>,
    pub(crate) meminfo: &'a BTreeMap<u32, NodeMeminfo>,
    pub(crate) cpulists: &'a BTreeMap<u32, Vec<u32>>,
    pub(crate) zone_reclaim_mode: Option<u32>,
    pub(crate) scan: &'a ScanRate,
    pub(crate) numa_maps: Vec<&'a NumaMaps>,
}

pub(crate) fn build(inp: &NumaInputs<'_>) -> NumaView {
    let mut nodes: BTreeSet<u32> = inp.meminfo.keys().copied().collect();
    if let Some(online) = inp.online {
        nodes.extend(online.iter().copied());
    }
    let oninit =
        (!inp.numa_maps.is_empty()).then(|| oninit_kb_per_node(inp.numa_maps.iter().copied()));
    let rows: Vec<NodeRow> = nodes
        .iter()
        .map(|&node| {
            let mi = inp.meminfo.get(&node);
            let get = |k: &str| mi.and_then(|m| m.values.get(k).copied());
            let total = get("MemTotal");
            let free = get("MemFree");
            let used = get("MemUsed").or_else(|| Some(total?.saturating_sub(free?)));
            NodeRow {
                node,
                cpus: inp.cpulists.get(&node).cloned(),
                total_kb: total,
                free_kb: free,
                used_kb: used,
                oninit_kb: oninit.as_ref().map(|o| o.get(&node).copied().unwrap_or(0)),
            }
        })
        .collect();
    let note = if rows.is_empty() {
        Some("no NUMA information (no /sys/devices/system/node on this system)".to_string())
    } else if rows.len() == 1 {
        Some("one memory node: not a NUMA machine".to_string())
    } else if inp.numa_maps.is_empty() {
        Some("no oninit process found: instance memory per node unknown".to_string())
    } else {
        None
    };
    NumaView {
        nodes: rows,
        zone_reclaim_mode: inp.zone_reclaim_mode,
        pgscan_per_s: inp.scan.per_s,
        pgscan_direct_per_s: inp.scan.direct_per_s,
        oninit_processes: inp.numa_maps.len(),
        note,
    }
}
