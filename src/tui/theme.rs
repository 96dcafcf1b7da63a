//! Colours and styles, with a plain variant for `NO_COLOR` and terminals without colour.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    pub(crate) color: bool,
    pub(crate) title: Style,
    pub(crate) header_bar: Style,
    pub(crate) tab_active: Style,
    pub(crate) tab: Style,
    pub(crate) column_header: Style,
    pub(crate) selected: Style,
    pub(crate) error: Style,
    pub(crate) warn: Style,
    pub(crate) ok: Style,
    pub(crate) dim: Style,
    pub(crate) hot: Style,
    pub(crate) key: Style,
    pub(crate) badge_frozen: Style,
    pub(crate) badge_running: Style,
}

impl Theme {
    /// Colour unless `NO_COLOR` is set to anything non-empty (https://no-color.org).
    pub(crate) fn from_env() -> Theme {
        match std::env::var_os("NO_COLOR") {
            Some(v) if !v.is_empty() => Theme::plain(),
            _ => Theme::colored(),
        }
    }

    pub fn colored() -> Theme {
        Theme {
            color: true,
            title: Style::new().add_modifier(Modifier::BOLD),
            header_bar: Style::new().fg(Color::Black).bg(Color::Cyan),
            tab_active: Style::new()
                .fg(Color::Black)
                .bg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
            tab: Style::new().fg(Color::Cyan),
            column_header: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            selected: Style::new().add_modifier(Modifier::REVERSED),
            error: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            warn: Style::new().fg(Color::Yellow),
            ok: Style::new().fg(Color::Green),
            dim: Style::new().fg(Color::DarkGray),
            hot: Style::new().fg(Color::Red),
            key: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            badge_frozen: Style::new()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
            badge_running: Style::new().fg(Color::Green),
        }
    }

    /// No colour at all: emphasis by bold/reverse only, which every terminal shows.
    pub fn plain() -> Theme {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        Theme {
            color: false,
            title: bold,
            header_bar: Style::new().add_modifier(Modifier::REVERSED),
            tab_active: Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
            tab: Style::new(),
            column_header: bold,
            selected: Style::new().add_modifier(Modifier::REVERSED),
            error: bold,
            warn: bold,
            ok: Style::new(),
            dim: Style::new(),
            hot: bold,
            key: bold,
            badge_frozen: Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
            badge_running: Style::new(),
        }
    }
}
