//! The commands besides the live screen: `parse`, `resolve`, `snapshot`, `attach` (a shared
//! feed to standard output), `serve` (the Prometheus exporter), `incidents` and `mark` (the
//! flight recorder's), and the shell completions and manual page (`manual`).

pub mod ash;
pub mod attach;
pub mod incidents;
pub mod manual;
pub mod parse;
pub mod resolve;
pub mod serve;
pub mod snapshot;
