//! Tests of the demo instance: its outputs parse with the real parsers and tell the incidents.

#[path = "../common/mod.rs"]
mod common;

mod outputs;
mod screen;
mod vitals;
