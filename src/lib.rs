//! ifxtop: a top-like live inspector for IBM/HCL Informix servers.
//!
//! Data flows one way, and the folders follow it: `source` (what to run, the runners) →
//! `demo` (a simulated instance, itself a runner) → `collect` (one task per source) → `parsers`
//! (text → typed records) → `store` (last good value, error, age, histories) → `model` (pure
//! joins) → `instance` (one watched instance without a screen: config, setup, feed, store
//! policy, signals, runtime) → `tui` (state, loop, views) and `commands` (parse, resolve,
//! snapshot, serve). A folder imports only those before it in `docs/architecture.md`'s list.
//! See that file.

pub mod cli;
pub mod collect;
pub mod commands;
pub mod demo;
pub mod error;
pub mod extents;
pub mod files;
pub mod format;
pub mod ids;
pub mod instance;
pub mod memory;
pub mod model;
pub mod parsers;
pub mod source;
pub mod store;
pub mod tui;
