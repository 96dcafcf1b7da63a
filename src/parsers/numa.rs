//! NUMA: `numactl -H`, `/sys/devices/system/node/nodeN/meminfo`, `/proc/<pid>/numa_maps`, and the
//! small sysfs/procfs files around them (cpulist, online, zone_reclaim_mode, /proc/vmstat).

use super::Unparsed;
use crate::error::ParseError;
use crate::ids::Addr;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct NumactlH {
    /// `available: N nodes (0-1)`.
    pub available: Option<u32>,
    pub nodes: Vec<NumaNode>,
    /// `distances[i][j]` in the order of `nodes`; `None` when no table was printed.
    pub distances: Option<Vec<Vec<u32>>>,
    pub unparsed: Vec<Unparsed>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NumaNode {
    pub node: u32,
    /// Empty for memory-only nodes (`node 2 cpus:` with nothing after).
    pub cpus: Vec<u32>,
    pub size_mb: Option<u64>,
    pub free_mb: Option<u64>,
}

/// `/sys/devices/system/node/nodeN/meminfo`: `Node N Key: value kB`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct NodeMeminfo {
    pub node: u32,
    /// Key → number as printed (kB for sizes; pages for HugePages_*).
    pub values: BTreeMap<String, u64>,
    pub unparsed: Vec<Unparsed>,
}

/// `/proc/<pid>/numa_maps`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct NumaMaps {
    pub mappings: Vec<NumaMapping>,
    pub unparsed: Vec<Unparsed>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NumaMapping {
    pub address: Addr,
    /// `default`, `interleave:0-3`, `bind:1`, `prefer:0`, ...
    pub policy: String,
    /// `file=...` value, when present.
    pub file: Option<String>,
    /// `heap`, `stack`, `huge` flags, when present.
    pub tags: Vec<String>,
    /// `N0=3 N1=5` → {0: 3, 1: 5}, in pages of `kernel_page_kb`.
    pub pages_per_node: BTreeMap<u32, u64>,
    /// `kernelpagesize_kB=4` (absent in old kernels: 4 KB then, or the huge page size for `huge`).
    pub kernel_page_kb: Option<u64>,
    pub anon: Option<u64>,
    pub dirty: Option<u64>,
    pub mapped: Option<u64>,
}

pub fn parse_numactl_h(text: &str) -> Result<NumactlH, ParseError> {
    let _ = text;
    Err(ParseError::empty(
        "numactl -H output (parser not written yet)",
    ))
}

pub fn parse_node_meminfo(text: &str) -> Result<NodeMeminfo, ParseError> {
    let _ = text;
    Err(ParseError::empty("node meminfo (parser not written yet)"))
}

pub fn parse_numa_maps(text: &str) -> Result<NumaMaps, ParseError> {
    let _ = text;
    Err(ParseError::empty("numa_maps (parser not written yet)"))
}

/// A kernel cpu/node list: `0-15,32-47` → [0..=15, 32..=47]. Empty text → empty list.
pub fn parse_cpulist(text: &str) -> Result<Vec<u32>, ParseError> {
    let _ = text;
    Err(ParseError::empty("cpu list (parser not written yet)"))
}

/// `/proc/sys/vm/zone_reclaim_mode`: one number (a bit mask; 0 = off).
pub fn parse_zone_reclaim_mode(text: &str) -> Result<u32, ParseError> {
    let _ = text;
    Err(ParseError::empty(
        "zone_reclaim_mode (parser not written yet)",
    ))
}

/// `/proc/vmstat`: `key value` lines.
pub fn parse_vmstat(text: &str) -> Result<BTreeMap<String, u64>, ParseError> {
    let _ = text;
    Err(ParseError::empty("/proc/vmstat (parser not written yet)"))
}
