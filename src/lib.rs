//! ifxtop: a top-like live inspector for IBM/HCL Informix servers.
//!
//! Data flows one way: sources (command runners) → collectors → parsers → store → joins → app
//! state → views. See `docs/architecture.md`.

pub mod app;
pub mod cli;
pub mod collect;
pub mod config;
pub mod debug_log;
pub mod demo;
pub mod error;
pub mod extent_cache;
pub mod ids;
pub mod keymap;
pub mod live;
pub mod model;
pub mod parsers;
pub mod record;
pub mod replay;
pub mod report;
pub mod resolve;
pub mod sample;
pub mod share;
pub mod source;
pub mod sqlhosts;
pub mod store;
pub mod terminal;
pub mod views;
