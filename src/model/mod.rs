//! Pure joins and derived state: the extent map, waiters, buffer hot spots, sockets, NUMA.

pub mod extents;
