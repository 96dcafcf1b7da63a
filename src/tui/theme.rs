//! Colours and styles, with a plain variant for `NO_COLOR` and terminals without colour.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    pub color: bool,
    pub title: Style,
    pub header_bar: Style,
    pub tab_active: Style,
    pub tab: Style,
    pub column_header: Style,
    pub selected: Style,
    pub error: Style,
    pub warn: Style,
    pub ok: Style,
    pub dim: Style,
    pub hot: Style,
    pub key: Style,
    pub badge_frozen: Style,
    pub badge_running: Style,
}

impl Theme {
    /// Colour unless `NO_COLOR` is set to anything non-empty (https://no-color.org).
    pub fn from_env() -> Theme {
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
