//! One watched instance with no screen: its config and setup, the feed of its data (collectors
//! or a replay), its store's one rebuild policy, the signals that end a watch, and the runtime
//! it runs on. The live screen, `ifxtop serve` and `ifxtop snapshot` are front-ends on it.

pub mod config;
pub mod feed;
pub mod runtime;
pub mod setup;
pub mod signals;
pub mod watch;
