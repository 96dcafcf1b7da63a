//! One watched instance with no screen: its config and setup, the feed of its data (collectors
//! or a replay), its store's one rule for when a build is due, the one loop without a screen
//! (`headless.rs`), the signals that end a watch, the runtime it runs on, and its walks through
//! time (the demo on a paused clock, a recording from its start: `walk.rs`). The live screen,
//! `ifxtop serve`, `ifxtop snapshot` and `ifxtop ash` are front-ends on it.

pub mod config;
#[cfg(test)]
mod equivalence;
pub mod feed;
pub mod headless;
pub mod ring;
pub mod runtime;
pub mod setup;
pub mod share;
pub mod signals;
#[cfg(test)]
mod toy;
pub mod walk;
pub mod watch;
