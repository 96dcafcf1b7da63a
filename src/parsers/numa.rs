//! NUMA: `numactl -H`, `/sys/devices/system/node/nodeN/meminfo`, `/proc/<pid>/numa_maps`, and the
//! small sysfs/procfs files around them (cpulist, online, zone_reclaim_mode, /proc/vmstat).

use super::lex::{self, dec_u32, dec_u64, lines, sp0, sp1, Line, PResult};
use super::Unparsed;
use crate::error::ParseError;
use crate::ids::Addr;
use nom::branch::alt;
use nom::bytes::complete::{tag, take_till1, take_until};
use nom::character::complete::char;
use nom::combinator::opt;
use nom::sequence::terminated;
use nom::Parser;
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
    pub(crate) node: u32,
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
    /// Further nodes, when the text is a `grep` over several nodes' files
    /// (`/sys/devices/system/node/node1/meminfo:Node 1 MemTotal: ...`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub others: BTreeMap<u32, BTreeMap<String, u64>>,
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
    pub(crate) address: Addr,
    /// `default`, `interleave:0-3`, `bind:1`, `prefer:0`, ...
    pub(crate) policy: String,
    /// `file=...` value, when present.
    pub file: Option<String>,
    /// `heap`, `stack`, `huge` flags, when present.
    pub tags: Vec<String>,
    /// `N0=3 N1=5` → {0: 3, 1: 5}, in pages of `kernel_page_kb`.
    pub pages_per_node: BTreeMap<u32, u64>,
    /// `kernelpagesize_kB=4` (absent in old kernels: 4 KB then, or the huge page size for `huge`).
    pub kernel_page_kb: Option<u64>,
    pub(crate) anon: Option<u64>,
    pub(crate) dirty: Option<u64>,
    pub(crate) mapped: Option<u64>,
}

/// `node 3 cpus: 27 28 ...`, `node 3 size: 32251 MB`, `node 3 free: 32012 MB`.
fn node_line(i: &str) -> PResult<'_, (u32, &str, &str)> {
    let (i, (_, _, n, _, key, _, _, _)) = (
        tag("node"),
        sp1,
        dec_u32,
        sp1,
        alt((tag("cpus"), tag("size"), tag("free"))),
        // A copy from a mail or a ticket may space it out: `node 0 free :  1234 MB`.
        sp0,
        char(':'),
        sp0,
    )
        .parse(i)?;
    Ok(("", (n, key, i)))
}

fn numbers(text: &str) -> Option<Vec<u32>> {
    text.split_whitespace().map(|w| w.parse().ok()).collect()
}

/// A piece of a `size:` or `free:` value that a terminal narrower than the line wrapped onto a
/// line of its own: digits, blanks and the unit (`9 MB`, ` MB`, `B`).
fn is_value_fragment(text: &str) -> bool {
    !text.trim().is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b' ' | b'\t' | b'M' | b'B' | b'm' | b'b'))
}

/// A `cpus:` list continued by the numbers of the line after it (`text`): a mail wraps it
/// between numbers, a terminal narrower than the line may cut a number in two (`... 2` then
/// `3 24`). numactl lists a node's CPUs in ascending order, so the reading that keeps them
/// ascending is the one: the numbers taken apart, or the last and first joined. `None` when
/// both readings are ascending, or neither: which it was cannot be told.
fn continued(cpus: &[u32], more: &[u32], text: &str) -> Option<Vec<u32>> {
    let ascending = |v: &[u32]| v.windows(2).all(|w| w[0] < w[1]);
    let mut apart = cpus.to_vec();
    apart.extend_from_slice(more);
    // Joined only where the line starts with a digit (no blank before it).
    let joined = match (cpus.split_last(), more.split_first()) {
        (Some((last, before)), Some((_, after)))
            if text.starts_with(|c: char| c.is_ascii_digit()) =>
        {
            let first = text.split_whitespace().next().unwrap_or("");
            format!("{last}{first}").parse::<u32>().ok().map(|n| {
                let mut v = before.to_vec();
                v.push(n);
                v.extend_from_slice(after);
                v
            })
        }
        _ => None,
    };
    match (ascending(&apart), joined.filter(|j| ascending(j))) {
        (true, None) => Some(apart),
        (false, Some(j)) => Some(j),
        _ => None,
    }
}

/// Whether a `size:` or `free:` value is whole: numactl always ends it with its unit (`MB`).
fn has_unit(value: &str) -> bool {
    let v = value.trim_end();
    v.ends_with("MB") || v.ends_with("mb")
}

/// `1234 MB` (or `1234MB`, `1234 mb`) → 1234.
fn megabytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let num = t
        .strip_suffix("MB")
        .or_else(|| t.strip_suffix("mb"))
        .unwrap_or(t)
        .trim();
    num.parse().ok()
}

pub fn parse_numactl_h(text: &str) -> Result<NumactlH, ParseError> {
    let mut out = NumactlH::default();
    let mut recognised = false;
    let mut in_distances = false;
    let mut distance_cols: Vec<u32> = Vec::new();
    let mut distances: Vec<Vec<u32>> = Vec::new();
    let mut first_line: Option<Line<'_>> = None;
    // The node whose `cpus:` list the last line was: a line of numbers alone continues it (a
    // long list wrapped in a mail or ticket copy).
    let mut cpus_of: Option<usize> = None;
    // A `size:` or `free:` line whose value has no unit yet (a terminal narrower than the line
    // wrapped it, inside the number or before `MB`): its node, key, line and value so far. The
    // pieces on the lines after it are joined as the terminal cut them (no blank added); a value
    // still without its unit is left unparsed, never read short (`18653` of `186539 MB`).
    let mut unfinished: Option<(usize, bool, Line<'_>, String)> = None;
    let mut rows = lines(text);
    lex::skip_prompt_line(&mut rows, &["numactl"]);
    for line in rows {
        if line.is_blank() {
            continue;
        }
        if let Some((idx, free, first, mut value)) = unfinished.take() {
            if is_value_fragment(line.text) {
                value.push_str(line.text);
                if !has_unit(&value) {
                    unfinished = Some((idx, free, first, value));
                    continue;
                }
            }
            match megabytes(&value).filter(|_| has_unit(&value)) {
                Some(v) if free => out.nodes[idx].free_mb = Some(v),
                Some(v) => out.nodes[idx].size_mb = Some(v),
                None => Unparsed::keep(&mut out.unparsed, first),
            }
            if is_value_fragment(line.text) {
                continue;
            }
        }
        first_line.get_or_insert(line);
        let t = line.text.trim();
        if let Some(idx) = cpus_of.take() {
            if let Some(more) = numbers(t).filter(|m| !m.is_empty()) {
                match continued(&out.nodes[idx].cpus, &more, t) {
                    Some(cpus) => {
                        out.nodes[idx].cpus = cpus;
                        cpus_of = Some(idx);
                    }
                    // Both readings (or neither) ascending: the list stops here, said.
                    None => Unparsed::keep(&mut out.unparsed, line),
                }
                continue;
            }
        }
        if t.starts_with("No NUMA available") {
            recognised = true;
            continue;
        }
        if let Some(rest) = t.strip_prefix("available:") {
            recognised = true;
            out.available = rest.split_whitespace().next().and_then(|n| n.parse().ok());
            continue;
        }
        if t == "node distances:" {
            recognised = true;
            in_distances = true;
            continue;
        }
        if in_distances {
            if let Some(cols) = t.strip_prefix("node").and_then(numbers) {
                distance_cols = cols;
                continue;
            }
            if let Some((row, vals)) = t.split_once(':') {
                if let (Ok(_), Some(v)) = (row.trim().parse::<u32>(), numbers(vals)) {
                    if distance_cols.is_empty() || v.len() == distance_cols.len() {
                        distances.push(v);
                        continue;
                    }
                }
            }
            Unparsed::keep(&mut out.unparsed, line);
            continue;
        }
        if let Ok((_, (n, key, value))) = node_line(t) {
            let idx = match out.nodes.iter().position(|x| x.node == n) {
                Some(i) => i,
                None => {
                    out.nodes.push(NumaNode {
                        node: n,
                        cpus: Vec::new(),
                        size_mb: None,
                        free_mb: None,
                    });
                    out.nodes.len() - 1
                }
            };
            let node = &mut out.nodes[idx];
            let ok = match key {
                "cpus" => {
                    cpus_of = Some(idx);
                    numbers(value).map(|c| node.cpus = c).is_some()
                }
                _ if !has_unit(value) => {
                    unfinished = Some((idx, key == "free", line, value.to_string()));
                    true
                }
                "size" => megabytes(value).map(|v| node.size_mb = Some(v)).is_some(),
                _ => megabytes(value).map(|v| node.free_mb = Some(v)).is_some(),
            };
            if ok {
                recognised = true;
            } else {
                Unparsed::keep(&mut out.unparsed, line);
            }
            continue;
        }
        Unparsed::keep(&mut out.unparsed, line);
    }
    if let Some((_, _, first, _)) = unfinished {
        Unparsed::keep(&mut out.unparsed, first);
    }
    if !recognised {
        return Err(match first_line {
            Some(l) => l.error_at(
                l.text.trim_start(),
                "numactl -H output (`available: N nodes`, `node N cpus: ...`)",
            ),
            None => ParseError::empty("numactl -H output"),
        });
    }
    if !distances.is_empty() {
        out.distances = Some(distances);
    }
    Ok(out)
}

/// `Node 0 MemTotal:       134182340 kB` → (0, MemTotal, 134182340); `grep` over several
/// files puts the file's path and a colon first (`/sys/.../node0/meminfo:Node 0 ...`).
fn meminfo_line(i: &str) -> PResult<'_, (bool, u32, &str, u64)> {
    let (i, path) = opt(terminated(take_until(":Node "), char(':'))).parse(i)?;
    let (i, (_, _, n, _, key, _, _, v, _)) = (
        tag("Node"),
        sp1,
        dec_u32,
        sp1,
        take_till1(|c: char| c == ':' || c == ' '),
        char(':'),
        sp0,
        dec_u64,
        sp0,
    )
        .parse(i)?;
    let (i, _) = opt(tag("kB")).parse(i)?;
    Ok((i, (path.is_some(), n, key, v)))
}

pub fn parse_node_meminfo(text: &str) -> Result<NodeMeminfo, ParseError> {
    let mut out = NodeMeminfo::default();
    let mut node: Option<u32> = None;
    let mut first_line: Option<Line<'_>> = None;
    for line in lines(text) {
        if line.is_blank() {
            continue;
        }
        first_line.get_or_insert(line);
        match meminfo_line(line.text.trim()) {
            Ok(("", (_, n, key, v))) if node.is_none_or(|x| x == n) => {
                node = Some(n);
                out.values.insert(key.to_string(), v);
            }
            // Another node's line is only expected from `grep` over several files, which names
            // each line's file; in one file it is not this node's meminfo.
            Ok(("", (true, n, key, v))) => {
                out.others.entry(n).or_default().insert(key.to_string(), v);
            }
            _ => Unparsed::keep(&mut out.unparsed, line),
        }
    }
    match node {
        Some(n) => {
            out.node = n;
            Ok(out)
        }
        None => Err(match first_line {
            Some(l) => l.error_at(
                l.text.trim_start(),
                "node meminfo lines (`Node N MemTotal:  123 kB`)",
            ),
            None => ParseError::empty("node meminfo"),
        }),
    }
}

/// Old kernels print no `kernelpagesize_kB`: pages are 4 KB then, 2 MB for `huge` mappings.
pub(crate) const DEFAULT_PAGE_KB: u64 = 4;
pub(crate) const DEFAULT_HUGE_PAGE_KB: u64 = 2048;

fn numa_maps_line(text: &str) -> Option<NumaMapping> {
    let mut words = text.split_whitespace().peekable();
    let address = Addr::from_hex(words.next()?)?;
    let first = words.next()?;
    // The kernel's two-word policies: `weighted interleave:0-1`, `prefer (many):0-1`.
    let policy = match (policy_name(first)?, words.peek()) {
        ("weighted", Some(w)) if policy_name(w) == Some("interleave") => {
            format!("{first} {}", words.next()?)
        }
        ("weighted", _) => return None,
        ("prefer", Some(w)) if w.starts_with("(many)") => format!("{first} {}", words.next()?),
        _ => first.to_string(),
    };
    let mut m = NumaMapping {
        address,
        policy,
        file: None,
        tags: Vec::new(),
        pages_per_node: BTreeMap::new(),
        kernel_page_kb: None,
        anon: None,
        dirty: None,
        mapped: None,
    };
    for w in words {
        match w.split_once('=') {
            None => m.tags.push(w.to_string()),
            Some(("file", f)) => m.file = Some(f.replace("\\040", " ")),
            Some((k, v)) => {
                let n: u64 = v.parse().ok()?;
                if let Some(node) = k.strip_prefix('N').and_then(|x| x.parse::<u32>().ok()) {
                    m.pages_per_node.insert(node, n);
                } else {
                    match k {
                        "kernelpagesize_kB" => m.kernel_page_kb = Some(n),
                        "anon" => m.anon = Some(n),
                        "dirty" => m.dirty = Some(n),
                        "mapped" => m.mapped = Some(n),
                        // mapmax, active, writeback, swapcache, unevictable...: not used.
                        _ => {}
                    }
                }
            }
        }
    }
    Some(m)
}

/// The memory policy a `numa_maps` line names after its address (`default`, `bind:0-1`,
/// `interleave=static:0-3`, `prefer:1`, `local`), as the kernel's `mpol_to_str` prints them: the
/// name before any `=flags` or `:nodes`. Anything else (`---P--D`, `N0=3`, a number) is no policy,
/// so the line is no `numa_maps` line.
fn policy_name(word: &str) -> Option<&str> {
    let name = word.split([':', '=']).next().unwrap_or(word);
    matches!(
        name,
        "default" | "local" | "prefer" | "preferred" | "bind" | "interleave" | "weighted"
    )
    .then_some(name)
}

pub fn parse_numa_maps(text: &str) -> Result<NumaMaps, ParseError> {
    let mut out = NumaMaps::default();
    let mut first_line: Option<Line<'_>> = None;
    for line in lines(text) {
        if line.is_blank() {
            continue;
        }
        first_line.get_or_insert(line);
        match numa_maps_line(line.text) {
            Some(m) => out.mappings.push(m),
            None => Unparsed::keep(&mut out.unparsed, line),
        }
    }
    if out.mappings.is_empty() && !out.unparsed.is_empty() {
        return Err(match first_line {
            Some(l) => l.error_at(
                l.text.trim_start(),
                "numa_maps lines (`7f25e80bf000 default anon=3 N0=3`)",
            ),
            None => ParseError::empty("numa_maps"),
        });
    }
    Ok(out)
}

/// KB per node of one process's mappings (pages × page size). Shared segments appear in every
/// attached process: summing several processes counts them several times (see
/// `model::numa::oninit_kb_per_node`, which counts them once).
pub fn bytes_per_node(maps: &NumaMaps) -> BTreeMap<u32, u64> {
    let mut out: BTreeMap<u32, u64> = BTreeMap::new();
    for m in &maps.mappings {
        let kb = m
            .kernel_page_kb
            .unwrap_or(if m.tags.iter().any(|t| t == "huge") {
                DEFAULT_HUGE_PAGE_KB
            } else {
                DEFAULT_PAGE_KB
            });
        for (n, pages) in &m.pages_per_node {
            *out.entry(*n).or_default() += pages.saturating_mul(kb).saturating_mul(1024);
        }
    }
    out
}

/// A kernel cpu/node list: `0-15,32-47` → [0..=15, 32..=47]. Empty text → empty list.
pub fn parse_cpulist(text: &str) -> Result<Vec<u32>, ParseError> {
    let t = text.trim();
    let mut out = Vec::new();
    if t.is_empty() {
        return Ok(out);
    }
    let err = |part: &str| {
        let col = t.find(part).unwrap_or(0);
        ParseError::at(1, t, col, "a cpu list like `0-15,32-47`")
    };
    for part in t.split(',') {
        let part = part.trim();
        match part.split_once('-') {
            Some((a, b)) => {
                let a: u32 = a.trim().parse().map_err(|_| err(part))?;
                let b: u32 = b.trim().parse().map_err(|_| err(part))?;
                // Real lists are short; a huge range is garbage, not 4 billion CPUs.
                if b < a || b - a > 65_536 {
                    return Err(err(part));
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| err(part))?),
        }
    }
    Ok(out)
}

/// `/proc/sys/vm/zone_reclaim_mode`: one number (a bit mask; 0 = off).
pub fn parse_zone_reclaim_mode(text: &str) -> Result<u32, ParseError> {
    let t = text.trim();
    t.parse()
        .map_err(|_| ParseError::at(1, t, 0, "a number (zone_reclaim_mode)"))
}

/// `/proc/vmstat`: `key value` lines.
pub fn parse_vmstat(text: &str) -> Result<BTreeMap<String, u64>, ParseError> {
    let mut out = BTreeMap::new();
    for line in lines(text) {
        if line.is_blank() {
            continue;
        }
        let mut w = line.text.split_whitespace();
        match (
            w.next(),
            w.next().and_then(|v| v.parse::<u64>().ok()),
            w.next(),
        ) {
            (Some(k), Some(v), None) => {
                out.insert(k.to_string(), v);
            }
            _ => {
                return Err(line.error_at(line.text, "/proc/vmstat lines (`key value`)"));
            }
        }
    }
    if out.is_empty() {
        return Err(ParseError::empty("/proc/vmstat lines (`key value`)"));
    }
    Ok(out)
}

record!(NumactlH);

/// A cpulist (`0-3,8`) as numbers: a node's CPUs, or the nodes that are online.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub(crate) struct CpuList(pub Vec<u32>);

/// `/proc/sys/vm/zone_reclaim_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub(crate) struct ZoneReclaimMode(pub u32);

/// `/proc/vmstat`: counter name → value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub(crate) struct Vmstat(pub BTreeMap<String, u64>);

record!(CpuList, none);
record!(ZoneReclaimMode, none);
record!(Vmstat, none);
record!(NodeMeminfo);
record!(NumaMaps);

#[cfg(test)]
mod tests {
    /// `grep . /sys/devices/system/node/node*/meminfo`: every line starts with its file's path.
    #[test]
    fn grepped_meminfo_of_several_nodes() {
        let text = "/sys/devices/system/node/node0/meminfo:Node 0 MemTotal:       134182340 kB\n\
                    /sys/devices/system/node/node0/meminfo:Node 0 MemFree:        53030372 kB\n\
                    /sys/devices/system/node/node1/meminfo:Node 1 MemTotal:       134217728 kB\n\
                    /sys/devices/system/node/node1/meminfo:Node 1 HugePages_Total:     0\n";
        let m = super::parse_node_meminfo(text).expect("grep'd meminfo");
        assert!(m.unparsed.is_empty(), "{:?}", m.unparsed);
        assert_eq!(m.node, 0);
        assert_eq!(m.values.get("MemTotal"), Some(&134_182_340));
        assert_eq!(m.values.get("MemFree"), Some(&53_030_372));
        let n1 = m.others.get(&1).expect("node 1");
        assert_eq!(n1.get("MemTotal"), Some(&134_217_728));
        assert_eq!(n1.get("HugePages_Total"), Some(&0));
        // Without the prefix, as before; a colon elsewhere is no path.
        let plain = super::parse_node_meminfo("Node 0 MemTotal:       1 kB\n").expect("plain");
        assert!(plain.others.is_empty());
        assert!(super::parse_node_meminfo("x:y Node 0 MemTotal: 1 kB\n").is_err());
    }
    use super::*;

    #[test]
    fn cpulists() {
        assert_eq!(
            parse_cpulist("0-3,8,10-11\n").expect("ok"),
            vec![0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(parse_cpulist("").expect("ok"), Vec::<u32>::new());
        assert!(parse_cpulist("3-1").is_err());
        assert!(parse_cpulist("0-4000000000").is_err());
        assert!(parse_cpulist("a").is_err());
    }

    #[test]
    fn zone_reclaim_and_vmstat() {
        assert_eq!(parse_zone_reclaim_mode("1\n").expect("ok"), 1);
        assert!(parse_zone_reclaim_mode("on").is_err());
        let v = parse_vmstat("pgscan_kswapd 12\npgscan_direct 3\n").expect("ok");
        assert_eq!(v.get("pgscan_direct"), Some(&3));
        assert!(parse_vmstat("garbage here now\n").is_err());
    }

    #[test]
    fn numa_maps_kinds_of_line() {
        let m = parse_numa_maps(
            "7f00 default file=/SYSV00000000\\040(deleted) dirty=2 N0=10 N1=2 kernelpagesize_kB=4\n38a933f000 default file=/lib64/libc-2.4.so\n2aaa00 interleave:0-1 huge anon=4 N0=2 N1=2\n",
        )
        .expect("ok");
        assert_eq!(m.mappings.len(), 3);
        assert_eq!(
            m.mappings[0].file.as_deref(),
            Some("/SYSV00000000 (deleted)")
        );
        assert_eq!(m.mappings[2].tags, vec!["huge"]);
        let b = bytes_per_node(&m);
        assert_eq!(b.get(&0), Some(&(10 * 4096 + 2 * 2048 * 1024)));
    }

    #[test]
    fn numa_maps_policies_as_the_kernel_prints_them() {
        let m = parse_numa_maps(
            "1000 bind=static:0-1 anon=1 N0=1
2000 weighted interleave:0-1 N1=2
             3000 prefer (many):0-1 N0=1
4000 local
5000 prefer:1 file=/x
",
        )
        .expect("policies");
        let p: Vec<_> = m.mappings.iter().map(|x| x.policy.as_str()).collect();
        assert_eq!(
            p,
            [
                "bind=static:0-1",
                "weighted interleave:0-1",
                "prefer (many):0-1",
                "local",
                "prefer:1"
            ]
        );
        assert_eq!(m.mappings[1].pages_per_node.get(&1), Some(&2));
        // Another command's rows: a hex address, then no policy.
        assert!(parse_numa_maps(
            "4500c028 ---P--D 1 informix - 0 0 0 4 0
"
        )
        .is_err());
        assert!(parse_numa_maps(
            "1a0b1c28 0 80 1:10 1a2f4000 12 801 0 0
"
        )
        .is_err());
        assert!(parse_numa_maps(
            "7f00 N0=3 N1=2
"
        )
        .is_err());
        assert!(parse_numa_maps(
            "7f00 weighted N0=3
"
        )
        .is_err());
    }
}
