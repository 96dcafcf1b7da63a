//! Synthetic `oncheck -pe` reports and `onstat -X` lines for tests and benches (HAND-MADE data,
//! never presented as real). The layout copies the newer real samples byte for byte (column
//! widths of tests/fixtures/oncheck-pe/gbase8s-*.txt); the content is random but deterministic.
//!
//! Shared by `benches/extents.rs` and the tests through `#[path]` includes.
#![allow(dead_code)]

use std::fmt::Write as _;

/// xorshift64*: small, deterministic, good enough to scatter pages.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// What to generate.
#[derive(Debug, Clone)]
pub struct Spec {
    pub seed: u64,
    pub dbspaces: u32,
    pub chunks_per_dbspace: u32,
    /// Object extents per chunk (FREE and system extents come on top).
    pub extents_per_chunk: u32,
    /// Distinct tables per database; each has a few indexes.
    pub tables: u32,
    /// Percent of dbspaces with 16 KB pages (the rest: 2, 4 or 8 KB; the root dbspace: 2 KB).
    pub percent_16k: u64,
    /// Give some objects names chunkpg's regex cannot read: system-named indexes (` 101_1`) and
    /// names with `#` or `.` in them.
    pub odd_names: bool,
}

impl Spec {
    /// About a million extents (~87 MB): the DESIGN.md budget size.
    pub fn million() -> Spec {
        Spec {
            seed: 1,
            dbspaces: 200,
            chunks_per_dbspace: 5,
            extents_per_chunk: 1000,
            tables: 400,
            percent_16k: 30,
            odd_names: true,
        }
    }

    pub fn small(seed: u64) -> Spec {
        Spec {
            seed,
            dbspaces: 6,
            chunks_per_dbspace: 3,
            extents_per_chunk: 40,
            tables: 30,
            percent_16k: 40,
            odd_names: true,
        }
    }
}

/// One extent as generated: offset and size in the chunk's pages, and its description index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynthExtent {
    pub offset: u64,
    pub size: u64,
    pub desc: u32,
}

#[derive(Debug, Clone)]
pub struct SynthChunk {
    pub number: u32,
    pub path: String,
    pub dbspace: String,
    pub page_size_kb: u32,
    pub size: u64,
    /// In offset order, covering the chunk without gaps (FREE included).
    pub extents: Vec<SynthExtent>,
}

#[derive(Debug, Clone)]
pub struct Synth {
    pub text: String,
    pub chunks: Vec<SynthChunk>,
    /// Descriptions as printed (`FREE`, `db:'owner'.name`, ...), indexed by `SynthExtent::desc`.
    pub descs: Vec<String>,
}

impl Synth {
    pub fn extent_count(&self) -> usize {
        self.chunks.iter().map(|c| c.extents.len()).sum()
    }
}

/// Generates a report: a 2 KB root dbspace with the logs, then data dbspaces whose chunks hold
/// table and index extents with FREE gaps between them.
pub fn generate(spec: &Spec) -> Synth {
    let mut rng = Rng::new(spec.seed);
    let mut descs: Vec<String> = Vec::new();
    let mut ids = std::collections::HashMap::new();
    let mut intern = |descs: &mut Vec<String>, d: String| -> u32 {
        let next = ids.len() as u32;
        *ids.entry(d.clone()).or_insert_with(|| {
            descs.push(d);
            next
        })
    };
    let free = intern(&mut descs, "FREE".to_string());
    let reserved = intern(&mut descs, "RESERVED PAGES".to_string());
    let freelist = intern(&mut descs, "CHUNK FREELIST PAGE".to_string());

    let mut chunks = Vec::new();
    let mut text = String::with_capacity(
        (spec.dbspaces as usize + 1)
            * spec.chunks_per_dbspace as usize
            * (spec.extents_per_chunk as usize + 8)
            * 84,
    );
    let mut number = 0u32;
    for d in 0..=spec.dbspaces {
        let (dbs, page_kb) = if d == 0 {
            ("rootdbs".to_string(), 2)
        } else if rng.chance(spec.percent_16k) {
            (format!("data16k_{d:03}"), 16)
        } else {
            (
                format!("datadbs_{d:03}"),
                [2, 2, 4, 8][rng.below(4) as usize],
            )
        };
        let db = format!("db{}", d % 3);
        let _ = writeln!(
            text,
            "DBspace Usage Report: {dbs:<20}Owner: informix  Created: 03/0{}/2024\n\n",
            1 + d % 9
        );
        for c in 0..spec.chunks_per_dbspace.max(1) {
            number += 1;
            let mut ext = vec![
                SynthExtent {
                    offset: 0,
                    size: if number == 1 { 12 } else { 2 },
                    desc: reserved,
                },
                SynthExtent {
                    offset: 0,
                    size: 1,
                    desc: freelist,
                },
            ];
            if c == 0 {
                ext.push(SynthExtent {
                    offset: 0,
                    size: if d == 0 { 250 } else { 50 },
                    desc: intern(&mut descs, format!("{dbs}:'informix'.TBLSpace")),
                });
            }
            if d == 0 && c == 0 {
                ext.push(SynthExtent {
                    offset: 0,
                    size: 25000,
                    desc: intern(&mut descs, "PHYSICAL LOG".to_string()),
                });
                for l in 1..=6 {
                    ext.push(SynthExtent {
                        offset: 0,
                        size: 5000,
                        desc: intern(&mut descs, format!("LOGICAL LOG: Log file {l}")),
                    });
                }
            }
            let objects = if d == 0 {
                spec.extents_per_chunk / 4
            } else {
                spec.extents_per_chunk
            };
            for _ in 0..objects {
                if rng.chance(5) {
                    ext.push(SynthExtent {
                        offset: 0,
                        size: 1 + rng.below(400),
                        desc: free,
                    });
                }
                let name = object_name(&mut rng, spec, &db);
                ext.push(SynthExtent {
                    offset: 0,
                    size: [8, 16, 32, 64, 128, 500, 2000][rng.below(7) as usize],
                    desc: intern(&mut descs, name),
                });
            }
            // Lay the extents end to end, then FREE to the end of the chunk.
            let mut at = 0;
            for e in ext.iter_mut() {
                e.offset = at;
                at += e.size;
            }
            let tail = 1000 + rng.below(50_000);
            ext.push(SynthExtent {
                offset: at,
                size: tail,
                desc: free,
            });
            let size = at + tail;
            let used: u64 = ext.iter().filter(|e| e.desc != free).map(|e| e.size).sum();
            let path = format!("/ifx/chunks/{dbs}_{c:02}");
            let _ = writeln!(
                text,
                " Chunk Pathname                             Pagesize(k)  Size(p)  Used(p)  Free(p)"
            );
            let _ = writeln!(
                text,
                "{number:6} {path:<41} {page_kb:6} {size:8} {used:8} {:8}\n",
                size - used
            );
            text.push_str(
                " Description                                                   Offset(p)  Size(p)\n",
            );
            text.push_str(
                " ------------------------------------------------------------- -------- --------\n",
            );
            for e in &ext {
                let _ = writeln!(
                    text,
                    " {:<61} {:8} {:8}",
                    descs[e.desc as usize], e.offset, e.size
                );
            }
            let _ = writeln!(
                text,
                "\n Total Used: {used:8}\n Total Free: {:8}\n\n",
                size - used
            );
            chunks.push(SynthChunk {
                number,
                path,
                dbspace: dbs.clone(),
                page_size_kb: page_kb,
                size,
                extents: ext,
            });
        }
    }
    Synth {
        text,
        chunks,
        descs,
    }
}

fn object_name(rng: &mut Rng, spec: &Spec, db: &str) -> String {
    let t = rng.below(u64::from(spec.tables.max(1)));
    match rng.below(10) {
        0..=5 => format!("{db}:'informix'.tab_{t:04}"),
        6 | 7 => format!("{db}:'informix'.ix_tab_{t:04}_{}", rng.below(2)),
        // Informix names constraint indexes itself with a leading blank.
        8 if spec.odd_names => format!("{db}:'informix'. {}_1", 100 + t),
        // A hypothetical fragment name with characters chunkpg's regex cannot read.
        9 if spec.odd_names => format!("{db}:'app'.tab_{t:04}#p{}", rng.below(2)),
        _ => format!("{db}:'app'.hist_{t:04}"),
    }
}

/// A page (in base pages of `base_kb`) somewhere inside extent `e` of chunk `c`.
pub fn page_inside(rng: &mut Rng, c: &SynthChunk, e: &SynthExtent, base_kb: u32) -> u64 {
    let ratio = u64::from(c.page_size_kb / base_kb).max(1);
    e.offset * ratio + rng.below(e.size * ratio)
}

/// `n` `onstat -X` buffer rows (plus pool headers and footers) whose `chunk:page` fields point
/// into random extents of `s`.
pub fn onstat_x_lines(s: &Synth, n: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(n * 80 + 512);
    out.push_str(
        "\nBuffers (Access)\naddress owner flags pagenum memaddr nslots pgflgs scount waiter\n\n",
    );
    out.push_str("Buffer pool page size: 2048\n");
    for i in 0..n {
        let c = &s.chunks[rng.below(s.chunks.len() as u64) as usize];
        let e = &c.extents[rng.below(c.extents.len() as u64) as usize];
        let page = page_inside(&mut rng, c, e, 2);
        let _ = writeln!(
            out,
            "{:x} ffffffffffffffff 80 {}:{} {:x} {} 890 0 {}",
            0x3784a8188u64 + i as u64 * 0x1c0,
            c.number,
            page,
            0x4baadf4000u64 + rng.below(1 << 30),
            1 + rng.below(700),
            if rng.chance(20) { "595236d428" } else { "0" }
        );
    }
    out.push_str("87962 modified, 13762560 total, 16777216 hash buckets, 2048 buffer size\n");
    out
}
