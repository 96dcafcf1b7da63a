//! Sorting a list allocates nothing per row: its sort keys borrow from the rows, and the
//! selected row is found again by comparing its identity in place. Counted by an allocator that
//! counts this thread's allocations (the other tests of this binary run on their own threads).

use super::{bare_app, key, NOW};
use ifxtop::model::snapshot::Snapshot;
use ifxtop::tui::panes::ListPane;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::time::Duration;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// The test's one exception to `unsafe_code = "deny"` (Cargo.toml): a global allocator can only
// be written as one.
// SAFETY: every call is passed to the system allocator unchanged; the count is a plain
// thread-local cell with a const initialiser (no allocation, no destructor).
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocations_in(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// The demo's snapshot with every list's rows repeated `times` times.
fn repeated(base: &Snapshot, times: usize) -> Arc<Snapshot> {
    let mut s = base.clone();
    for _ in 1..times {
        s.sessions.extend(base.sessions.iter().cloned());
        s.waiters.extend(base.waiters.iter().cloned());
        s.hotspots.extend(base.hotspots.iter().cloned());
        s.sockets.extend(base.sockets.iter().cloned());
        Arc::make_mut(&mut s.io)
            .chunks
            .extend(base.io.chunks.iter().cloned());
    }
    Arc::new(s)
}

#[test]
fn sorting_a_list_by_any_column_allocates_nothing_per_row() {
    // A buffer hot spot is building then (the Buffers pane has rows).
    let at = 110;
    let (store, _) = ifxtop::commands::snapshot::demo_store(
        ifxtop::demo::DemoInstance::new(1),
        Duration::from_secs(at - 40),
        Duration::from_secs(at),
        ifxtop::store::StoreSettings::default(),
        false,
    )
    .expect("demo store");
    let base = ifxtop::model::snapshot::build(&store, Duration::from_secs(at), None, &[]);
    for (list, k) in [
        (ListPane::Sessions, '1'),
        (ListPane::Waiters, '2'),
        (ListPane::Buffers, '3'),
        (ListPane::Sockets, '4'),
        (ListPane::Io, '7'),
    ] {
        let n = list.len(&base);
        assert!(n > 0, "{list:?}: the demo has rows to sort");
        let (small, large) = (repeated(&base, 4), repeated(&base, 40));
        let mut a = bare_app(160, 48);
        a.set_snapshot(small.clone());
        a.on_key(key(k), NOW);
        // Every column, then back to the pane's grouped order where it has one.
        for _ in 0..=list.columns().len() {
            // Off the top row: the selection follows its row, found again in each snapshot.
            a.on_key(key('j'), NOW);
            let few = allocations_in(|| a.set_snapshot(small.clone()));
            let many = allocations_in(|| a.set_snapshot(large.clone()));
            // Ten times the rows: a few more allocations where a vector doubles, not one a row.
            assert!(
                many <= few + 8,
                "{list:?} sorted by {:?}: {few} allocations for {} rows, {many} for {}",
                a.table().sort,
                4 * n,
                40 * n,
            );
            a.on_key(key('s'), NOW);
        }
    }
}
