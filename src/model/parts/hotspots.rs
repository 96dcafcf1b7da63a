//! The hot spots part: the buffer hot spots of the window (`onstat -X` through the extent map),
//! each owner named by its session at the latest `onstat -u`.

use crate::ids::{Addr, Sid};
use crate::source::Source;
use crate::store::hotspots::HotspotRow;
use crate::store::Store;

/// What it reads.
#[allow(dead_code)]
pub(crate) const INPUTS: &[Source] = &[Source::OnstatX, Source::OncheckPe, Source::OnstatU];

pub(crate) fn build(store: &Store) -> Vec<HotspotRow> {
    let mut rows = store.hotspots.rows();
    if let Some(u) = store.get(crate::source::key::OnstatU) {
        let sid_of: rustc_hash::FxHashMap<Addr, Sid> =
            u.threads.iter().map(|t| (t.address, t.sessid)).collect();
        for h in rows.iter_mut() {
            h.owner_sid = h.owner.and_then(|o| sid_of.get(&o).copied());
        }
    }
    rows
}
