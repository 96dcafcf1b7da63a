//! The terminal UI: app state and the one `update`, the run loop, panes and their columns,
//! keymap, terminal, theme, sharing, and the views that draw it all. What it watches (setup,
//! config, feed, store policy, signals) is `instance`'s.

pub mod app;
pub mod fleet;
pub mod keymap;
pub mod panes;
pub mod report;
pub mod run;
pub mod server_lines;
pub mod session;
pub mod share;
pub mod table;
pub mod terminal;
pub mod theme;
pub mod update;
pub mod views;
