//! The demo instance's storage: dbspaces, chunks, their extents and the tables and indexes with
//! their partnums. `oncheck -pe`, `onstat -d`, systabnames, `onstat -k` and `onstat -X` all read
//! this one layout, so pages and partnums resolve to the same objects everywhere.

/// The base page size of the demo (Linux): `onstat -X` counts pages in it.
pub(crate) const BASE_PAGE_KB: u32 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dbspace {
    pub(crate) number: u32,
    pub(crate) name: &'static str,
    pub(crate) page_kb: u32,
    /// `onstat -d` flags (hex) and the decoded letters column.
    pub(crate) flags: u32,
    pub(crate) letters: &'static str,
}

pub(crate) const CREATED: &str = "02/28/2024";

pub(crate) const DBSPACES: [Dbspace; 5] = [
    Dbspace {
        number: 1,
        name: "rootdbs",
        page_kb: 2,
        flags: 0x1002_0001,
        letters: "N  BA ",
    },
    Dbspace {
        number: 2,
        name: "datadbs1",
        page_kb: 2,
        flags: 0x2_0001,
        letters: "N  BA ",
    },
    Dbspace {
        number: 3,
        name: "datadbs2",
        page_kb: 8,
        flags: 0x2_0001,
        letters: "N  BA ",
    },
    Dbspace {
        number: 4,
        name: "plogdbs",
        page_kb: 2,
        flags: 0x2_0001,
        letters: "N  BA ",
    },
    Dbspace {
        number: 5,
        name: "llogdbs",
        page_kb: 2,
        flags: 0x2_0001,
        letters: "N  BA ",
    },
];

/// One row of a chunk's extent list: what `oncheck -pe` prints in `Description`, and its size in
/// the chunk's own pages (`REST` for the FREE extent that ends the chunk).
pub(crate) type ExtentSpec = (&'static str, u64);

pub(crate) const REST: u64 = 0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    pub(crate) number: u32,
    pub(crate) dbspace: u32,
    pub(crate) path: &'static str,
    /// In the chunk's own pages.
    pub(crate) size: u64,
    pub(crate) extents: &'static [ExtentSpec],
}

const ROOT_EXTENTS: &[ExtentSpec] = &[
    ("RESERVED PAGES", 12),
    ("CHUNK FREELIST PAGE", 1),
    ("rootdbs:'informix'.TBLSpace", 250),
    ("sysmaster:'informix'.sysdatabases", 4),
    ("sysmaster:'informix'.systables", 8),
    ("sysmaster:'informix'.syscolumns", 32),
    ("sysmaster:'informix'.sysindices", 8),
    ("sysmaster:'informix'.sysprocedures", 64),
    ("sysadmin:'informix'.systables", 8),
    ("sysadmin:'informix'.command_history", 2000),
    ("sysadmin:'informix'.mon_checkpoint", 400),
    ("sysadmin:'informix'.ph_run", 1600),
    ("sysuser:'informix'.systables", 8),
    ("sysadmin:'informix'.command_history", 2000),
    ("FREE", REST),
];

const DATA1_EXTENTS: &[ExtentSpec] = &[
    ("RESERVED PAGES", 2),
    ("CHUNK FREELIST PAGE", 1),
    ("datadbs1:'informix'.TBLSpace", 50),
    ("stores:'informix'.systables", 16),
    ("stores:'informix'.syscolumns", 32),
    ("stores:'informix'.sysindices", 16),
    ("stores:'informix'.customer", 20000),
    ("stores:'informix'.orders", 100000),
    ("stores:'informix'.items", 150000),
    ("stores:'informix'.stock", 8000),
    ("stores:'informix'.ix_customer_zip", 4000),
    ("stores:'informix'.ix_items_order", 30000),
    ("stores:'informix'.order_log", 50000),
    ("stores:'informix'.orders", 100000),
    ("stores:'informix'.items", 150000),
    // A table dropped long ago left this hole.
    ("FREE", 50000),
    ("stores:'informix'.order_log", 100000),
    ("stores:'informix'.ix_customer_zip", 4000),
    ("stores:'informix'.customer", 20000),
    ("FREE", REST),
];

const DATA1B_EXTENTS: &[ExtentSpec] = &[
    ("RESERVED PAGES", 2),
    ("CHUNK FREELIST PAGE", 1),
    ("stores:'informix'.items", 200000),
    ("stores:'informix'.ix_items_order", 30000),
    ("stores:'informix'.order_log", 200000),
    ("stores:'informix'.orders", 120000),
    ("FREE", REST),
];

const DATA2_EXTENTS: &[ExtentSpec] = &[
    ("RESERVED PAGES", 2),
    ("CHUNK FREELIST PAGE", 1),
    ("datadbs2:'informix'.TBLSpace", 50),
    ("stores:'informix'.ix_orders_ship_date", 6000),
    ("stores:'informix'.ix_orders_num", 5000),
    ("stores:'informix'.ix_stock_manu", 1000),
    ("stores:'informix'.ix_orders_cust", 5000),
    ("stores:'informix'.ix_orders_ship_date", 8000),
    ("stores:'informix'.ix_orders_num", 5000),
    ("stores:'informix'.ix_orders_ship_date", 12000),
    ("FREE", REST),
];

const PLOG_EXTENTS: &[ExtentSpec] = &[
    ("RESERVED PAGES", 2),
    ("CHUNK FREELIST PAGE", 1),
    ("plogdbs:'informix'.TBLSpace", 50),
    ("PHYSICAL LOG", 400000),
    ("FREE", REST),
];

const LLOG_EXTENTS: &[ExtentSpec] = &[
    ("RESERVED PAGES", 2),
    ("CHUNK FREELIST PAGE", 1),
    ("llogdbs:'informix'.TBLSpace", 50),
    ("LOGICAL LOG: Log file 1", 50000),
    ("LOGICAL LOG: Log file 2", 50000),
    ("LOGICAL LOG: Log file 3", 50000),
    ("LOGICAL LOG: Log file 4", 50000),
    ("LOGICAL LOG: Log file 5", 50000),
    ("LOGICAL LOG: Log file 6", 50000),
    ("LOGICAL LOG: Log file 7", 50000),
    ("LOGICAL LOG: Log file 8", 50000),
    ("LOGICAL LOG: Log file 9", 50000),
    ("LOGICAL LOG: Log file 10", 50000),
    ("LOGICAL LOG: Log file 11", 50000),
    ("LOGICAL LOG: Log file 12", 50000),
    ("FREE", REST),
];

pub(crate) const CHUNKS: [Chunk; 6] = [
    Chunk {
        number: 1,
        dbspace: 1,
        path: "/ifx/chunks/rootdbs_01",
        size: 250_000,
        extents: ROOT_EXTENTS,
    },
    Chunk {
        number: 2,
        dbspace: 2,
        path: "/ifx/chunks/datadbs1_01",
        size: 1_000_000,
        extents: DATA1_EXTENTS,
    },
    Chunk {
        number: 3,
        dbspace: 2,
        path: "/ifx/chunks/datadbs1_02",
        size: 1_000_000,
        extents: DATA1B_EXTENTS,
    },
    Chunk {
        number: 4,
        dbspace: 3,
        path: "/ifx/chunks/datadbs2_01",
        size: 250_000,
        extents: DATA2_EXTENTS,
    },
    Chunk {
        number: 5,
        dbspace: 4,
        path: "/ifx/chunks/plogdbs_01",
        size: 500_000,
        extents: PLOG_EXTENTS,
    },
    Chunk {
        number: 6,
        dbspace: 5,
        path: "/ifx/chunks/llogdbs_01",
        size: 700_000,
        extents: LLOG_EXTENTS,
    },
];

/// A table, index or TBLSpace with its partnum (what `onstat -k` prints as tblsnum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Partition {
    pub(crate) partnum: u32,
    /// `db:'owner'.name` as `oncheck -pe` and systabnames print it.
    pub(crate) name: &'static str,
}

pub(crate) const PARTITIONS: [Partition; 34] = [
    pt(0x10_0001, "rootdbs:'informix'.TBLSpace"),
    pt(0x10_0002, "sysmaster:'informix'.sysdatabases"),
    pt(0x10_0003, "sysmaster:'informix'.systables"),
    pt(0x10_0004, "sysmaster:'informix'.syscolumns"),
    pt(0x10_0005, "sysmaster:'informix'.sysindices"),
    pt(0x10_0006, "sysmaster:'informix'.sysprocedures"),
    pt(0x10_0007, "sysadmin:'informix'.systables"),
    pt(0x10_0008, "sysadmin:'informix'.command_history"),
    pt(0x10_0009, "sysadmin:'informix'.mon_checkpoint"),
    pt(0x10_000a, "sysadmin:'informix'.ph_run"),
    pt(0x10_000b, "sysuser:'informix'.systables"),
    pt(0x20_0001, "datadbs1:'informix'.TBLSpace"),
    pt(0x20_0002, "stores:'informix'.systables"),
    pt(0x20_0003, "stores:'informix'.syscolumns"),
    pt(0x20_0004, "stores:'informix'.sysindices"),
    pt(0x20_0102, "stores:'informix'.customer"),
    pt(0x20_0103, "stores:'informix'.orders"),
    pt(0x20_0104, "stores:'informix'.items"),
    pt(0x20_0105, "stores:'informix'.stock"),
    pt(0x20_0106, "stores:'informix'.order_log"),
    pt(0x20_0107, "stores:'informix'.ix_customer_zip"),
    pt(0x20_0108, "stores:'informix'.ix_items_order"),
    pt(0x30_0001, "datadbs2:'informix'.TBLSpace"),
    pt(0x30_0002, "stores:'informix'.ix_orders_ship_date"),
    pt(0x30_0003, "stores:'informix'.ix_orders_num"),
    pt(0x30_0004, "stores:'informix'.ix_stock_manu"),
    pt(0x30_0005, "stores:'informix'.ix_orders_cust"),
    pt(0x40_0001, "plogdbs:'informix'.TBLSpace"),
    pt(0x50_0001, "llogdbs:'informix'.TBLSpace"),
    pt(0x10_000c, "sysmaster:'informix'.syssessions"),
    pt(0x10_000d, "sysmaster:'informix'.systabnames"),
    pt(0x10_000e, "sysmaster:'informix'.sysextents"),
    pt(0x10_000f, "sysutils:'informix'.systables"),
    pt(0x10_0010, "sysha:'informix'.systables"),
];

const fn pt(partnum: u32, name: &'static str) -> Partition {
    Partition { partnum, name }
}

pub(crate) const CUSTOMER: &str = "stores:'informix'.customer";
pub(crate) const ORDERS: &str = "stores:'informix'.orders";
pub(crate) const ITEMS: &str = "stores:'informix'.items";
pub(crate) const STOCK: &str = "stores:'informix'.stock";
pub(crate) const ORDER_LOG: &str = "stores:'informix'.order_log";
pub(crate) const IX_SHIP_DATE: &str = "stores:'informix'.ix_orders_ship_date";
pub(crate) const IX_ORDERS_NUM: &str = "stores:'informix'.ix_orders_num";
pub(crate) const IX_ITEMS_ORDER: &str = "stores:'informix'.ix_items_order";
pub(crate) const IX_CUSTOMER_ZIP: &str = "stores:'informix'.ix_customer_zip";
/// The database tblspace: every session connected to a database holds a shared lock on its row.
pub(crate) const DATABASE_TBLSPACE: u32 = 0x10_0002;
/// The row of `stores` in the database tblspace (what the database lock's rowid shows).
pub(crate) const STORES_DB_ROWID: u64 = 0x205;

/// The partnum of an object by its `db:'owner'.name`.
pub(crate) fn partnum(name: &str) -> u32 {
    PARTITIONS
        .iter()
        .find(|p| p.name == name)
        .map_or(0, |p| p.partnum)
}

/// One extent placed in its chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placed {
    pub(crate) chunk: u32,
    pub(crate) description: &'static str,
    /// In the chunk's own pages.
    pub(crate) offset: u64,
    pub(crate) size: u64,
    pub(crate) page_kb: u32,
}

impl Placed {
    /// A page of this extent (`nth` in the chunk's own pages from its start) as `onstat -X`
    /// prints it: in base pages.
    pub(crate) fn base_page(&self, nth: u64) -> u64 {
        (self.offset + nth.min(self.size.saturating_sub(1)))
            * u64::from(self.page_kb / BASE_PAGE_KB)
    }
}

pub(crate) fn dbspace(number: u32) -> Option<&'static Dbspace> {
    DBSPACES.iter().find(|d| d.number == number)
}

/// The page size of a chunk in KB.
pub(crate) fn chunk_page_kb(c: &Chunk) -> u32 {
    dbspace(c.dbspace).map_or(BASE_PAGE_KB, |d| d.page_kb)
}

/// The extents of a chunk with their offsets, the final FREE extent sized to the chunk's end.
pub(crate) fn placed(c: &Chunk) -> Vec<Placed> {
    let page_kb = chunk_page_kb(c);
    let mut at = 0;
    c.extents
        .iter()
        .map(|&(description, size)| {
            let size = if size == REST {
                c.size.saturating_sub(at)
            } else {
                size
            };
            let e = Placed {
                chunk: c.number,
                description,
                offset: at,
                size,
                page_kb,
            };
            at += size;
            e
        })
        .collect()
}

/// Every extent of an object, in chunk order.
pub(crate) fn extents_of(name: &str) -> Vec<Placed> {
    CHUNKS
        .iter()
        .flat_map(placed)
        .filter(|e| e.description == name)
        .collect()
}

/// Pages used and free in a chunk (own pages).
pub(crate) fn chunk_usage(c: &Chunk) -> (u64, u64) {
    let free: u64 = placed(c)
        .iter()
        .filter(|e| e.description == "FREE")
        .map(|e| e.size)
        .sum();
    (c.size - free, free)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_filled_exactly_and_objects_have_partnums() {
        for c in &CHUNKS {
            let p = placed(c);
            let end = p.last().map(|e| e.offset + e.size);
            assert_eq!(end, Some(c.size), "chunk {}", c.number);
            for e in &p {
                assert!(e.size > 0, "{e:?}");
                if e.description.contains(":'") {
                    assert_ne!(partnum(e.description), 0, "{}", e.description);
                }
            }
        }
        let mut nums: Vec<u32> = PARTITIONS.iter().map(|p| p.partnum).collect();
        nums.sort_unstable();
        nums.dedup();
        assert_eq!(nums.len(), PARTITIONS.len());
    }

    #[test]
    fn eight_k_pages_count_four_base_pages() {
        let ix = extents_of(IX_SHIP_DATE);
        assert_eq!(ix.len(), 3);
        assert_eq!(ix[0].chunk, 4);
        assert_eq!(ix[0].base_page(0), ix[0].offset * 4);
        let ol = extents_of(ORDER_LOG);
        assert_eq!(ol.last().map(|e| e.chunk), Some(3));
        assert_eq!(ol[0].base_page(10), ol[0].offset + 10);
    }
}
