//! Parser tests: real fixtures (snapshotted as JSON), hand-made edge cases, property tests.

#[path = "../common/mod.rs"]
mod common;

mod classes;
mod disk;
mod drill;
mod extras;
mod fixtures_all;
mod group;
mod numa;
mod oncheck_pe;
mod onstat_g_con;
mod onstat_u;
mod onstat_x;
mod real_formats;
mod robust;
mod sockets;
mod tight;
mod wrong_kind;
// Vital signs.
mod vitals;
