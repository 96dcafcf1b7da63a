//! Pure joins of one moment's data: waiters to what they wait on, blocker chains, sessions to
//! their sockets, NUMA, the session screen, and the snapshot every pane is drawn from.

pub mod activity;
pub mod chains;
pub mod findings;
pub mod fingerprint;
pub mod fleet;
pub mod harm;
pub mod hotspot;
pub mod incidents;
pub mod io;
pub mod numa;
pub mod parts;
pub mod session;
pub mod sessions;
pub mod snapshot;
pub mod sockets;
#[cfg(test)]
pub(crate) mod test_store;
pub mod track;
pub mod tree;
pub mod vitals;
pub mod waiters;
