//! Shared memory: the resident segment, the first virtual segment, the two buffer pools and the
//! message segment, 4 GB in all (the banner's Kbytes). While the CPU VPs are saturated the
//! sessions' sorts and hash joins outgrow the virtual segment and the server adds three more
//! (SHMADD, 128 MB each). They stay until the calm at the end of the cycle, when the scheduler's
//! nightly-style `onmode -F` task frees the unused ones: every cycle starts again at 4 GB, so the
//! demo stays the same from one cycle to the next, and growth shows as growth since ifxtop
//! started watching (negative right after the free, when it started during the growth).

use super::noise::{unit, Salt};
use super::timeline::{self, Incident, CYCLE};

/// One shared-memory segment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Segment {
    pub(crate) id: u64,
    pub(crate) key: u64,
    pub(crate) addr: u64,
    pub(crate) size: u64,
    pub(crate) ovhd: u64,
    pub(crate) class: &'static str,
    pub(crate) blkused: u64,
    pub(crate) blkfree: u64,
    /// Backed by huge pages (2 MB), as `/proc/<pid>/numa_maps` shows.
    pub(crate) huge: bool,
}

const MB: u64 = 1 << 20;
const BLOCK: u64 = 4096;
/// SHMADD.
const ADDED_SIZE: u64 = 128 * MB;
/// Seconds into the CPU saturation at which a segment is added.
const ADD_AT: [u64; 3] = [8, 22, 36];
/// Second of the cycle at which the added segments are freed (`onmode -F`).
const FREE_AT: u64 = 710;
/// The first segment's key (`SYSV52564801` in numa_maps).
pub(crate) const FIRST_KEY: u64 = 0x5256_4801;

/// (class, size, overhead, huge pages) of the segments the server starts with.
const BASE: [(&str, u64, u64, bool); 5] = [
    ("R", 304 * MB, 2_361_672, true),
    ("V", 512 * MB, 3_155_968, false),
    ("B", 2_040 * MB, 1, true),
    ("B", 1_232 * MB, 1, true),
    ("M", 8 * MB, 100_768, false),
];

/// Segments added since the cycle began, at second `t`.
fn added(t: u64) -> usize {
    let Some(p) = timeline::first(Incident::CpuSaturated) else {
        return 0;
    };
    let at = t % CYCLE;
    if at >= FREE_AT {
        return 0;
    }
    ADD_AT.iter().filter(|&&a| at >= p.start + a).count()
}

/// How full the virtual segments are (0..1) at `t`: busier while the sessions' memory grows.
fn virtual_use(seed: u64, t: u64) -> f64 {
    let now = timeline::now(t);
    let base = 0.62 + 0.08 * unit(seed, Salt::Segment, 0, t / 30);
    if now.incident() == Incident::CpuSaturated {
        (base + 0.35 * (now.into as f64 / 10.0).min(1.0)).min(0.97)
    } else {
        base
    }
}

/// The segments at `t`; `base` is where the first is attached.
pub(crate) fn at(seed: u64, base: u64, sessions: usize, t: u64) -> Vec<Segment> {
    let mut out = Vec::with_capacity(BASE.len() + ADD_AT.len());
    let mut addr = base;
    let use_v = virtual_use(seed, t);
    for (k, (class, size, ovhd, huge)) in BASE.iter().copied().enumerate() {
        let blocks = size / BLOCK;
        let used = match class {
            "V" => (blocks as f64 * use_v) as u64,
            "M" => (600 + sessions as u64 / 4).min(blocks),
            _ => blocks,
        };
        out.push(Segment {
            id: 32_768 * (k as u64 + 1) + k as u64 + 1,
            key: FIRST_KEY + k as u64,
            addr,
            size,
            ovhd,
            class,
            blkused: used,
            blkfree: blocks - used,
            huge,
        });
        addr += size;
    }
    let cycle = t / CYCLE;
    for k in 0..added(t) {
        let blocks = ADDED_SIZE / BLOCK;
        let used = (blocks as f64 * (use_v + 0.02).min(0.99)) as u64;
        let seq = BASE.len() as u64 + 3 * cycle + k as u64 + 1;
        out.push(Segment {
            id: 32_768 * seq + BASE.len() as u64 + k as u64 + 1,
            key: FIRST_KEY + (BASE.len() + k) as u64,
            addr,
            size: ADDED_SIZE,
            ovhd: ADDED_SIZE / 170,
            class: "V",
            blkused: used,
            blkfree: blocks - used,
            huge: false,
        });
        addr += ADDED_SIZE;
    }
    out
}

/// Total shared memory at `t`, KB (what the banner prints).
pub(crate) fn total_kb(t: u64) -> u64 {
    let base: u64 = BASE.iter().map(|(_, size, _, _)| size).sum();
    (base + added(t) as u64 * ADDED_SIZE) / 1024
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_gb_then_growth_then_freed() {
        assert_eq!(total_kb(0), 4_194_304);
        let p = timeline::first(Incident::CpuSaturated).expect("in the timeline");
        assert_eq!(added(p.start), 0);
        assert_eq!(added(p.end), 3);
        assert_eq!(total_kb(p.end), 4_194_304 + 3 * 131_072);
        assert_eq!(added(FREE_AT), 0);
        assert_eq!(added(CYCLE + p.start + 30), 2);
        let segs = at(1, 0x27_0000_0000, 300, p.end);
        assert_eq!(segs.len(), 8);
        let sum: u64 = segs.iter().map(|s| s.size).sum();
        assert_eq!(sum / 1024, total_kb(p.end));
        for w in segs.windows(2) {
            assert_eq!(w[1].addr, w[0].addr + w[0].size);
        }
    }
}
