//! The terminal UI: app state and the one `update`, the run loop, panes and their columns,
//! keymap, config, terminal, theme, sharing, and the views that draw it all.

pub mod app;
pub mod config;
pub mod fleet;
pub mod keymap;
pub mod panes;
pub mod run;
pub mod server_lines;
pub mod session;
pub mod setup;
pub mod share;
pub mod table;
pub mod terminal;
pub mod theme;
pub mod update;
pub mod views;
