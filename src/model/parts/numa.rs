//! The NUMA part: every node's memory and CPUs, zone reclaim, page scans and where the
//! server's memory sits.

use crate::model::numa::{self, NumaView};
use crate::parsers::numa::NodeMeminfo;
use crate::source::Source;
use crate::store::Store;
use std::collections::BTreeMap;

/// What it reads (one of a kind stands for all: every node's meminfo, every process's maps);
/// `/proc/vmstat` feeds the scan rates.
pub(crate) const INPUTS: &[Source] = &[
    Source::NodeMeminfo(0),
    Source::NodeCpulist(0),
    Source::NodesOnline,
    Source::ZoneReclaimMode,
    Source::NumaMaps(0),
    Source::Vmstat,
];

/// The NUMA view from every node's meminfo and cpulist, the nodes online, zone reclaim and
/// the server processes' numa_maps.
pub(crate) fn build(store: &Store) -> NumaView {
    let meminfo: BTreeMap<u32, NodeMeminfo> = store
        .sources()
        .filter_map(|(s, _)| match s {
            Source::NodeMeminfo(n) => {
                Some((*n, store.get(crate::source::key::NodeMeminfo(*n))?.clone()))
            }
            _ => None,
        })
        .collect();
    let cpulists: BTreeMap<u32, Vec<u32>> = store
        .sources()
        .filter_map(|(s, _)| match s {
            Source::NodeCpulist(n) => Some((
                *n,
                store.get(crate::source::key::NodeCpulist(*n))?.0.clone(),
            )),
            _ => None,
        })
        .collect();
    let online = store
        .get(crate::source::key::NodesOnline)
        .map(|n| n.0.as_slice());
    let zone = store.get(crate::source::key::ZoneReclaimMode).map(|z| z.0);
    let maps = store
        .sources()
        .filter_map(|(s, _)| match s {
            Source::NumaMaps(pid) => store.get(crate::source::key::NumaMaps(*pid)),
            _ => None,
        })
        .collect();
    numa::build(&numa::NumaInputs {
        online,
        meminfo: &meminfo,
        cpulists: &cpulists,
        zone_reclaim_mode: zone,
        scan: &store.scan,
        numa_maps: maps,
    })
}
