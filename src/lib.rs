//! ifxtop: a top-like live inspector for IBM/HCL Informix servers.
//!
//! Data flows one way: sources (command runners) → collectors → parsers → store → joins → app
//! state → views. See `docs/architecture.md`.

pub mod cli;
pub mod error;
pub mod ids;
pub mod model;
pub mod parsers;
pub mod resolve;
pub mod extent_cache;
pub mod source;
pub mod demo;
