//! Pure joins and derived state: the extent map, waiters, buffer hot spots, sockets, NUMA.

pub mod chains;
pub mod extents;
pub mod hotspots;
pub mod numa;
pub mod session;
pub mod snapshot;
pub mod sockets;
pub mod waiters;
