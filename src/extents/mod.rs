//! The extent map: `chunk:page` → object and dbspace, built once from `oncheck -pe`.
//!
//! Built straight from the report's text by one streaming pass ([`oncheck_pe::visit`]): no owned
//! record per extent. Per chunk the extents sit in flat arrays sorted by offset and are found by
//! binary search; chunk numbers index a `Vec`; object and dbspace names are interned, so a
//! million extents of a few thousand objects cost 20 bytes each.
//!
//! Page units (DESIGN.md §2): onstat prints page numbers in base pages (2 KB on Linux, 4 KB on
//! AIX and Windows); `oncheck -pe` prints offsets in the chunk's own page size P. A page is looked
//! up at `page / (P / base)`, as the seed's `chunkpg` does, but extents are half-open
//! `[offset, offset + size)`: chunkpg's `<= offset + size` also matches the first page of the
//! next extent.

pub mod cache;

use crate::error::ParseError;
use crate::parsers::oncheck_pe::{self, ExtentKind, PeEvent};
use compact_str::CompactString;
use rustc_hash::FxHashMap;

/// Chunk numbers below this are found through a dense `Vec` (Informix allows 32,767 chunks);
/// larger ones, which only odd input has, through a sorted list.
const DENSE_CHUNKS: u32 = 1 << 16;
const NONE: u32 = u32::MAX;

/// One chunk of the report: what the cache key and the UI need, and where its extents are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkInfo {
    pub number: u32,
    pub path: CompactString,
    /// `None` in old and abridged layouts: offsets are then taken to be in base pages.
    pub page_size_kb: Option<u32>,
    dbspace: u32,
    /// Its extents: `lo..hi` in the map's flat arrays.
    lo: usize,
    hi: usize,
}

impl ChunkInfo {
    /// Number of extents listed for this chunk.
    pub fn extent_count(&self) -> usize {
        self.hi - self.lo
    }

    /// Converts a page number in base pages (as onstat prints it) to the chunk's own pages:
    /// `page / (P / base)`, computed as `page * base / P` so 6 KB pages on a 4 KB base work too.
    pub(crate) fn page_in_chunk(&self, page: u64, base_page_kb: u32) -> u64 {
        let base = u128::from(base_page_kb.max(1));
        let own = u128::from(
            self.page_size_kb
                .filter(|&p| p > 0)
                .unwrap_or(base_page_kb.max(1)),
        );
        u64::try_from(u128::from(page) * base / own).unwrap_or(u64::MAX)
    }
}

/// An interned extent description with its kind and, for objects, its three parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    /// As printed: `stores:'informix'.customer`, `PHYSICAL LOG`, `FREE`, ...
    pub description: CompactString,
    pub(crate) kind: ExtentKind,
    pub database: Option<CompactString>,
    pub owner: Option<CompactString>,
    pub name: Option<CompactString>,
}

/// A page inside an extent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit<'m> {
    pub object: &'m ObjectInfo,
    /// The chunk's dbspace; `None` when the report had no `DBspace Usage Report` line above it.
    pub dbspace: Option<&'m str>,
    pub(crate) chunk: &'m ChunkInfo,
    /// The page in the chunk's own page size, and the extent holding it (same units).
    pub page_in_chunk: u64,
    pub extent_offset: u64,
    pub extent_size: u64,
}

impl Hit<'_> {
    pub fn kind(&self) -> ExtentKind {
        self.object.kind
    }
}

/// The answer to "what is on this page?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup<'m> {
    /// The page is in an object's extent (or reserved pages, the logs, TBLSpace, ...).
    Resolved(Hit<'m>),
    /// The page is in a FREE extent: something was allocated there after `oncheck -pe` ran, so
    /// the map is stale and should be rebuilt.
    Free(Hit<'m>),
    /// The chunk is known but no extent holds the page (past the listed extents, or the report
    /// was abridged).
    Unmapped {
        chunk: &'m ChunkInfo,
        page_in_chunk: u64,
    },
    /// The report has no such chunk (added after it ran, or a different instance).
    NoChunk { chunk: u32 },
}

/// `chunk:page` → extent, for every chunk of one `oncheck -pe` report.
#[derive(Debug, Clone, Default)]
pub struct ExtentMap {
    chunks: Vec<ChunkInfo>,
    /// Chunk number → index in `chunks` (`NONE` when absent), for numbers below `DENSE_CHUNKS`.
    dense: Vec<u32>,
    /// (number, index) for chunk numbers from `DENSE_CHUNKS` up, sorted.
    sparse: Vec<(u32, u32)>,
    /// Extents of all chunks, grouped by chunk and sorted by offset within each: `ends` is
    /// `offset + size` (exclusive), `objects` an index in `names`.
    starts: Vec<u64>,
    ends: Vec<u64>,
    objects: Vec<u32>,
    names: Vec<ObjectInfo>,
    dbspaces: Vec<CompactString>,
    unparsed: usize,
}

impl ExtentMap {
    /// Parses and indexes an `oncheck -pe` report in one pass.
    pub fn from_oncheck_pe(text: &str) -> Result<ExtentMap, ParseError> {
        let mut b = Builder::new(text.len());
        oncheck_pe::visit(text, |ev| b.event(ev))?;
        Ok(b.finish())
    }

    /// What is on `page` (in base pages of `base_page_kb` KB, as onstat prints it) of `chunk`.
    pub fn lookup(&self, chunk: u32, page: u64, base_page_kb: u32) -> Lookup<'_> {
        let Some(c) = self.chunk(chunk) else {
            return Lookup::NoChunk { chunk };
        };
        let p = c.page_in_chunk(page, base_page_kb);
        let unmapped = Lookup::Unmapped {
            chunk: c,
            page_in_chunk: p,
        };
        let Some(starts) = self.starts.get(c.lo..c.hi) else {
            return unmapped;
        };
        // The last extent starting at or before p is the only one that can hold it.
        let i = starts.partition_point(|&s| s <= p);
        let Some(k) = i.checked_sub(1).map(|i| c.lo + i) else {
            return unmapped;
        };
        let (Some(&start), Some(&end), Some(&obj)) =
            (self.starts.get(k), self.ends.get(k), self.objects.get(k))
        else {
            return unmapped;
        };
        if p >= end {
            return unmapped;
        }
        let Some(object) = self.names.get(obj as usize) else {
            return unmapped;
        };
        let hit = Hit {
            object,
            dbspace: self.dbspace_of(c),
            chunk: c,
            page_in_chunk: p,
            extent_offset: start,
            extent_size: end - start,
        };
        if object.kind == ExtentKind::Free {
            Lookup::Free(hit)
        } else {
            Lookup::Resolved(hit)
        }
    }

    /// Looks up a packed page number as older onstat builds print it (`100955`: chunk =
    /// value >> 20, page = value & 0xFFFFF).
    pub fn lookup_packed(&self, packed: u64, base_page_kb: u32) -> Lookup<'_> {
        match u32::try_from(packed >> 20) {
            Ok(chunk) => self.lookup(chunk, packed & 0xF_FFFF, base_page_kb),
            Err(_) => Lookup::NoChunk { chunk: u32::MAX },
        }
    }

    /// The chunk numbered `number`, if the report listed it.
    pub fn chunk(&self, number: u32) -> Option<&ChunkInfo> {
        self.chunks.get(self.chunk_index(number)?)
    }

    fn chunk_index(&self, number: u32) -> Option<usize> {
        let idx = if number < DENSE_CHUNKS {
            *self.dense.get(number as usize)?
        } else {
            let i = self
                .sparse
                .binary_search_by_key(&number, |&(n, _)| n)
                .ok()?;
            self.sparse.get(i)?.1
        };
        (idx != NONE).then_some(idx as usize)
    }

    /// Every chunk in the order the report listed them (the cache key is built from these).
    pub fn chunks(&self) -> &[ChunkInfo] {
        &self.chunks
    }

    /// The dbspace a chunk belongs to.
    pub fn dbspace_of(&self, chunk: &ChunkInfo) -> Option<&str> {
        self.dbspaces
            .get(chunk.dbspace as usize)
            .map(|s| s.as_str())
    }

    /// Every distinct extent description (objects, FREE, logs, ...), interned.
    pub fn objects(&self) -> &[ObjectInfo] {
        &self.names
    }

    pub fn dbspaces(&self) -> impl Iterator<Item = &str> {
        self.dbspaces.iter().map(|s| s.as_str())
    }

    pub fn extent_count(&self) -> usize {
        self.starts.len()
    }

    /// Lines of the report the parser did not understand (elisions, ...).
    pub fn unparsed_lines(&self) -> usize {
        self.unparsed
    }

    /// Heap bytes held by the map (capacities, interned strings), for the memory budget.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let heap_str = |s: &CompactString| {
            if s.is_heap_allocated() {
                s.capacity()
            } else {
                0
            }
        };
        let opt = |s: &Option<CompactString>| s.as_ref().map_or(0, heap_str);
        self.chunks.capacity() * size_of::<ChunkInfo>()
            + self.chunks.iter().map(|c| heap_str(&c.path)).sum::<usize>()
            + self.dense.capacity() * size_of::<u32>()
            + self.sparse.capacity() * size_of::<(u32, u32)>()
            + self.starts.capacity() * size_of::<u64>()
            + self.ends.capacity() * size_of::<u64>()
            + self.objects.capacity() * size_of::<u32>()
            + self.names.capacity() * size_of::<ObjectInfo>()
            + self
                .names
                .iter()
                .map(|n| heap_str(&n.description) + opt(&n.database) + opt(&n.owner) + opt(&n.name))
                .sum::<usize>()
            + self.dbspaces.capacity() * size_of::<CompactString>()
            + self.dbspaces.iter().map(heap_str).sum::<usize>()
    }
}

/// Collects events into the map's arrays; `finish` sorts only what the report left unsorted.
impl crate::parsers::Record for ExtentMap {
    fn unparsed(&self) -> usize {
        self.unparsed_lines()
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "chunks": self.chunks().len(),
            "objects": self.objects().len(),
            "extents": self.extent_count(),
            "unparsed": self.unparsed_lines(),
        })
    }
}

struct Builder {
    map: ExtentMap,
    interned: FxHashMap<CompactString, u32>,
    dbspace_ids: FxHashMap<CompactString, u32>,
    dbspace: u32,
    /// Index in `map.chunks` of the chunk whose extents are being read.
    current: Option<usize>,
    /// (chunk index, first extent, end) runs as they came; one per chunk in a normal report.
    runs: Vec<(u32, usize, usize)>,
    sorted: bool,
}

impl Builder {
    fn new(text_len: usize) -> Builder {
        // A real extent row is 80 bytes or more; reserving for that avoids most regrowth.
        let guess = text_len / 80;
        Builder {
            map: ExtentMap {
                starts: Vec::with_capacity(guess),
                ends: Vec::with_capacity(guess),
                objects: Vec::with_capacity(guess),
                ..ExtentMap::default()
            },
            interned: FxHashMap::default(),
            dbspace_ids: FxHashMap::default(),
            dbspace: NONE,
            current: None,
            runs: Vec::new(),
            sorted: true,
        }
    }

    fn event(&mut self, ev: PeEvent<'_>) {
        match ev {
            PeEvent::Extent {
                description,
                offset,
                size,
                ..
            } => self.extent(description, offset, size),
            PeEvent::Chunk(row) => self.chunk(row.chunk, row.path, row.page_size_kb),
            PeEvent::Dbspace { name, .. } => {
                self.close_run();
                let next = self.dbspace_ids.len() as u32;
                let id = *self
                    .dbspace_ids
                    .entry(CompactString::from(name))
                    .or_insert(next);
                if id == next {
                    self.map.dbspaces.push(CompactString::from(name));
                }
                self.dbspace = id;
            }
            PeEvent::Total { .. } => {}
            PeEvent::Unparsed(_) => self.map.unparsed += 1,
        }
    }

    fn chunk(&mut self, number: u32, path: &str, page_size_kb: Option<u32>) {
        self.close_run();
        let idx = match self.map.chunk_index(number) {
            // Listed twice (a concatenated or shuffled report): extents join the first listing.
            Some(idx) => Some(idx),
            None => {
                let idx = self.map.chunks.len();
                self.map.chunks.push(ChunkInfo {
                    number,
                    path: CompactString::from(path),
                    page_size_kb,
                    dbspace: self.dbspace,
                    lo: 0,
                    hi: 0,
                });
                let as_u32 = u32::try_from(idx).unwrap_or(NONE);
                if number < DENSE_CHUNKS {
                    let n = number as usize;
                    if self.map.dense.len() <= n {
                        self.map.dense.resize(n + 1, NONE);
                    }
                    if let Some(slot) = self.map.dense.get_mut(n) {
                        *slot = as_u32;
                    }
                } else {
                    let at = self.map.sparse.partition_point(|&(k, _)| k < number);
                    self.map.sparse.insert(at, (number, as_u32));
                }
                Some(idx)
            }
        };
        self.current = idx;
        let start = self.map.starts.len();
        if let Some(i) = idx {
            self.runs.push((i as u32, start, start));
        }
    }

    #[inline]
    fn extent(&mut self, description: &str, offset: u64, size: u64) {
        if self.current.is_none() {
            return;
        }
        let id = match self.interned.get(description) {
            Some(&id) => id,
            None => self.intern(description),
        };
        if let Some(&prev) = self.map.starts.last() {
            let in_this_run = self
                .runs
                .last()
                .is_some_and(|&(_, lo, _)| lo < self.map.starts.len());
            if in_this_run && offset < prev {
                self.sorted = false;
            }
        }
        self.map.starts.push(offset);
        self.map.ends.push(offset.saturating_add(size));
        self.map.objects.push(id);
    }

    #[cold]
    fn intern(&mut self, description: &str) -> u32 {
        let id = self.map.names.len() as u32;
        let obj = oncheck_pe::split_object(description);
        self.map.names.push(ObjectInfo {
            description: CompactString::from(description),
            kind: oncheck_pe::classify(description),
            database: obj.map(|o| CompactString::from(o.database)),
            owner: obj.map(|o| CompactString::from(o.owner)),
            name: obj.map(|o| CompactString::from(o.name)),
        });
        self.interned.insert(CompactString::from(description), id);
        id
    }

    fn close_run(&mut self) {
        let end = self.map.starts.len();
        if let Some(run) = self.runs.last_mut() {
            run.2 = end;
        }
        self.current = None;
    }

    fn finish(mut self) -> ExtentMap {
        self.close_run();
        let mut seen = vec![false; self.map.chunks.len()];
        let mut one_run_each = true;
        for &(c, _, _) in &self.runs {
            match seen.get_mut(c as usize) {
                Some(s) if *s => one_run_each = false,
                Some(s) => *s = true,
                None => {}
            }
        }
        if one_run_each && self.sorted {
            for &(c, lo, hi) in &self.runs {
                if let Some(chunk) = self.map.chunks.get_mut(c as usize) {
                    chunk.lo = lo;
                    chunk.hi = hi;
                }
            }
        } else {
            self.regroup();
        }
        let m = &mut self.map;
        m.starts.shrink_to_fit();
        m.ends.shrink_to_fit();
        m.objects.shrink_to_fit();
        m.names.shrink_to_fit();
        m.chunks.shrink_to_fit();
        self.map
    }

    /// The slow path for reports whose chunks come back or whose extents are out of order:
    /// sort every extent by (chunk, offset) and cut the chunks' ranges anew.
    #[cold]
    fn regroup(&mut self) {
        let m = &mut self.map;
        let mut all: Vec<(u32, u64, u64, u32)> = Vec::with_capacity(m.starts.len());
        for &(c, lo, hi) in &self.runs {
            for k in lo..hi {
                if let (Some(&s), Some(&e), Some(&o)) =
                    (m.starts.get(k), m.ends.get(k), m.objects.get(k))
                {
                    all.push((c, s, e, o));
                }
            }
        }
        all.sort_unstable();
        m.starts.clear();
        m.ends.clear();
        m.objects.clear();
        for c in m.chunks.iter_mut() {
            c.lo = 0;
            c.hi = 0;
        }
        let mut i = 0;
        while i < all.len() {
            let c = all.get(i).map_or(0, |x| x.0);
            let lo = m.starts.len();
            while let Some(&(cc, s, e, o)) = all.get(i) {
                if cc != c {
                    break;
                }
                m.starts.push(s);
                m.ends.push(e);
                m.objects.push(o);
                i += 1;
            }
            if let Some(chunk) = m.chunks.get_mut(c as usize) {
                chunk.lo = lo;
                chunk.hi = m.starts.len();
            }
        }
    }
}
