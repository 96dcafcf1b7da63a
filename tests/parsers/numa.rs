//! NUMA: numactl -H, node meminfo, numa_maps — real samples and edge cases.

use crate::common::kind;
use crate::common::{fixture, fixtures_in};
use ifxtop::parsers::numa::{bytes_per_node, parse_node_meminfo, parse_numa_maps, parse_numactl_h};
use proptest::prelude::*;

#[test]
fn every_numa_fixture_snapshots() {
    for (dir, kind) in [
        ("numactl-H", kind("numactl-H")),
        ("node-meminfo", kind("node-meminfo")),
        ("numa_maps", kind("numa-maps")),
    ] {
        for (stem, text) in fixtures_in(dir) {
            let json = kind.parse_to_json(&text).expect("parses");
            crate::snap_json!(format!("parse__{dir}__{stem}"), &json);
        }
    }
}

#[test]
fn numactl_two_nodes_with_trailing_blanks_in_distances() {
    let n = parse_numactl_h(&fixture("numactl-H/cn-fio-note-2node-64cpu.txt")).expect("ok");
    assert!(n.unparsed.is_empty(), "{:?}", n.unparsed);
    assert_eq!(n.available, Some(2));
    assert_eq!(n.nodes.len(), 2);
    assert_eq!(n.nodes[0].cpus.len(), 32);
    assert_eq!(n.nodes[1].size_mb, Some(32231));
    assert_eq!(n.nodes[1].free_mb, Some(8446));
    assert_eq!(n.distances, Some(vec![vec![10, 21], vec![21, 10]]));
}

#[test]
fn numactl_memory_only_nodes_have_no_cpus() {
    let n = parse_numactl_h(&fixture(
        "numactl-H/stevescargall-pmem-4node-memory-only-nodes.txt",
    ))
    .expect("ok");
    assert!(n.unparsed.is_empty(), "{:?}", n.unparsed);
    assert_eq!(n.nodes.len(), 4);
    assert!(n.nodes[2].cpus.is_empty() && n.nodes[3].cpus.is_empty());
    assert_eq!(n.nodes[2].size_mb, Some(311_296));
    assert_eq!(n.distances.as_ref().map(|d| d[2][0]), Some(17));
}

#[test]
fn numactl_four_nodes_and_no_numa() {
    let n = parse_numactl_h(&fixture("numactl-H/intel-4node-72cpu-sysinfo-dump.txt")).expect("ok");
    assert_eq!(n.nodes.len(), 4);
    assert_eq!(n.distances.as_ref().map(|d| d.len()), Some(4));
    let none = parse_numactl_h("No NUMA available on this system\n").expect("ok");
    assert!(none.nodes.is_empty());
    assert!(parse_numactl_h("Userthreads\n").is_err());
}

#[test]
fn node_meminfo_with_an_empty_first_line_and_hugepages() {
    let m =
        parse_node_meminfo(&fixture("node-meminfo/node_exporter-fixture-node1.txt")).expect("ok");
    assert!(m.unparsed.is_empty(), "{:?}", m.unparsed);
    assert_eq!(m.node, 1);
    assert_eq!(m.values.get("MemTotal"), Some(&134_217_728));
    assert_eq!(m.values.get("MemFree"), Some(&39_634_788));
    assert_eq!(m.values.get("HugePages_Total"), Some(&0));
    assert_eq!(m.values.get("Inactive(file)"), Some(&71_165_504));
    // Lines of two different nodes in one file are not one node's meminfo.
    let mixed = parse_node_meminfo("Node 0 MemTotal: 1 kB\nNode 1 MemFree: 2 kB\n").expect("ok");
    assert_eq!(mixed.unparsed.len(), 1);
}

#[test]
fn old_numa_maps_split_pages_across_nodes() {
    let m = parse_numa_maps(&fixture(
        "numa_maps/drepper-2007-what-every-programmer-fig5.2-4node.txt",
    ))
    .expect("ok");
    assert!(m.unparsed.is_empty(), "{:?}", m.unparsed);
    assert_eq!(m.mappings.len(), 15);
    let libc = &m.mappings[6];
    assert_eq!(libc.file.as_deref(), Some("/lib64/libc-2.4.so"));
    assert_eq!(libc.pages_per_node.get(&1), Some(&51));
    assert_eq!(libc.pages_per_node.get(&2), Some(&2));
    assert_eq!(libc.kernel_page_kb, None);
    // The bare `default file=...` line has no counts at all.
    assert!(m.mappings[7].pages_per_node.is_empty());
    let per_node = bytes_per_node(&m);
    // Node 1: 22 + 51 + 2 pages of 4 KB (no kernelpagesize_kB in 2.6 kernels).
    assert_eq!(per_node.get(&1), Some(&((22 + 51 + 2) * 4096)));
}

#[test]
fn centos_numa_maps_with_kernel_page_size() {
    let m =
        parse_numa_maps(&fixture("numa_maps/jp-note-centos7-cat-self-truncated.txt")).expect("ok");
    assert!(m.unparsed.is_empty(), "{:?}", m.unparsed);
    assert_eq!(m.mappings[0].kernel_page_kb, Some(4));
    assert_eq!(m.mappings[3].tags, vec!["heap"]);
    assert!(parse_numa_maps("this is not numa_maps\n").is_err());
}

fn all_texts() -> Vec<String> {
    ["numactl-H", "node-meminfo", "numa_maps"]
        .iter()
        .flat_map(|d| fixtures_in(d).into_iter().map(|(_, t)| t))
        .collect()
}

// Never panicking on anything, and on a fixture cut or shuffled read as its own kind, is
// `robust`'s, for every kind (`numactl-H`, `node-meminfo`, `numa-maps`); here the files no kind
// reads, and each kind's samples, cut or shuffled, read as the other two kinds too.
proptest! {
    #[test]
    fn files_no_kind_reads_never_panic_on_arbitrary_text(s in "\\PC{0,300}") {
        let _ = ifxtop::parsers::numa::parse_cpulist(&s);
        let _ = ifxtop::parsers::numa::parse_vmstat(&s);
        let _ = ifxtop::parsers::numa::parse_zone_reclaim_mode(&s);
    }

    #[test]
    fn never_panics_on_truncated_or_shuffled_fixtures(cut in 0usize..2000, seed in any::<u64>()) {
        for text in all_texts() {
            let mut end = cut.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let t = &text[..end];
            let _ = parse_numactl_h(t);
            let _ = parse_node_meminfo(t);
            let _ = parse_numa_maps(t);
            let mut lines: Vec<&str> = text.lines().collect();
            let n = lines.len().max(1);
            for i in 0..lines.len() {
                lines.swap(i, (seed as usize).wrapping_add(i * 7) % n);
            }
            let shuffled = lines.join("\n");
            let _ = parse_numactl_h(&shuffled);
            let _ = parse_node_meminfo(&shuffled);
            let _ = parse_numa_maps(&shuffled);
        }
    }
}
