//! Tests of the `ifxtop` binary's commands, run as a user would run them.

#[path = "../common/mod.rs"]
mod common;

mod bidi;
mod call;
mod config;
mod drill;
mod extras;
mod live;
mod parse;
mod resolve;
mod run;
mod special;
mod when;
