//! Tests of the pure model: extent map, joins, accumulators.

#[path = "../common/mod.rs"]
mod common;

mod cost;
mod extents;
mod findings;
mod io;
mod joins;
mod tree;
mod vitals;
