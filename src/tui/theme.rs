//! Colours and styles: the eight basic ANSI colours only (an 8-colour terminal shows them all),
//! emphasis that reads on light and on dark backgrounds (reverse video and bold rather than a
//! fixed background), alarm colour only for what needs action; a plain variant for `NO_COLOR`,
//! and ASCII glyphs for a terminal whose locale is not UTF-8.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    pub(crate) color: bool,
    /// The terminal cannot show UTF-8: every glyph is drawn in ASCII.
    pub ascii: bool,
    pub(crate) title: Style,
    pub(crate) header_bar: Style,
    pub(crate) tab_active: Style,
    pub(crate) tab: Style,
    pub(crate) column_header: Style,
    pub(crate) selected: Style,
    /// Something failed, or a state that needs action now (Blocked, off-line, deadlock).
    pub(crate) error: Style,
    /// Worth a look.
    pub(crate) warn: Style,
    pub(crate) ok: Style,
    pub(crate) dim: Style,
    /// Needs attention: a long wait, a session holding others up.
    pub(crate) hot: Style,
    pub(crate) key: Style,
    pub(crate) badge_frozen: Style,
    pub(crate) badge_running: Style,
    /// The alarm in the header (Blocked, CKPT REQ): reverse video in the alarm colour, readable
    /// on any background.
    pub(crate) badge_alarm: Style,
}

impl Theme {
    /// Colour unless `NO_COLOR` is set to anything non-empty (https://no-color.org); ASCII
    /// glyphs unless the locale is UTF-8.
    pub fn from_env() -> Theme {
        let env = |k: &str| std::env::var(k).ok();
        let mut t = match palette(env) {
            Palette::None => Theme::plain(),
            Palette::Basic | Palette::Extended => Theme::colored(),
        };
        t.ascii = !locale_is_utf8(env);
        t
    }

    pub fn colored() -> Theme {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        Theme {
            color: true,
            ascii: false,
            title: bold,
            // Reverse video: the terminal's own colours swapped, readable whatever they are.
            header_bar: Style::new().add_modifier(Modifier::REVERSED),
            tab_active: Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
            tab: Style::new().fg(Color::Cyan),
            column_header: bold.add_modifier(Modifier::UNDERLINED),
            selected: Style::new().add_modifier(Modifier::REVERSED),
            error: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            warn: Style::new().fg(Color::Yellow),
            ok: Style::new().fg(Color::Green),
            dim: Style::new().add_modifier(Modifier::DIM),
            hot: Style::new().fg(Color::Red),
            key: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            badge_frozen: Style::new()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
            badge_running: Style::new()
                .fg(Color::Black)
                .bg(Color::Green)
                .add_modifier(Modifier::BOLD),
            badge_alarm: Style::new()
                .fg(Color::White)
                .bg(Color::Red)
                .add_modifier(Modifier::BOLD),
        }
    }

    /// No colour at all: emphasis by bold/reverse only, which every terminal shows.
    pub fn plain() -> Theme {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        Theme {
            color: false,
            ascii: false,
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
            badge_alarm: Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
        }
    }

    /// A wait row's style by how long it has lasted: nothing for a few seconds (waits come and
    /// go), yellow past 5 s, red past 30 s, bold red past 2 minutes.
    pub(crate) fn wait_style(&self, secs: f64) -> Style {
        if secs >= 120.0 {
            self.error
        } else if secs >= 30.0 {
            self.hot
        } else if secs >= 5.0 {
            self.warn
        } else {
            Style::new()
        }
    }
}

impl Theme {
    /// The frame of a box: ASCII corners (`+`) where the locale is not UTF-8, so a box does not
    /// read as a tree's `` ` ``.
    pub(crate) fn border_set(&self) -> ratatui::symbols::border::Set<'static> {
        if self.ascii {
            ratatui::symbols::border::Set {
                top_left: "+",
                top_right: "+",
                bottom_left: "+",
                bottom_right: "+",
                vertical_left: "|",
                vertical_right: "|",
                horizontal_top: "-",
                horizontal_bottom: "-",
            }
        } else {
            ratatui::symbols::border::PLAIN
        }
    }
}

/// How colours are written to the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Palette {
    /// `NO_COLOR`: no colour at all.
    None,
    /// The 16 colours every terminal knows (`ESC[36m`): `TERM=xterm`, `vt100`, `linux`, `screen`
    /// show only these; the 256-colour form (`ESC[38;5;6m`) may print garbage or nothing there.
    Basic,
    /// The terminal says it has 256 colours or more (`TERM=*-256color`, `COLORTERM=truecolor`).
    Extended,
}

/// The palette the environment asks for: `NO_COLOR` (non-empty) wins; then 256 colours or more
/// only when the terminal advertises them (`COLORTERM` `truecolor`/`24bit`, or a `TERM` naming
/// `256color` or `direct`); else the basic 16.
pub fn palette(var: impl Fn(&str) -> Option<String>) -> Palette {
    if var("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return Palette::None;
    }
    let colorterm = var("COLORTERM").unwrap_or_default().to_ascii_lowercase();
    let term = var("TERM").unwrap_or_default().to_ascii_lowercase();
    if colorterm == "truecolor"
        || colorterm == "24bit"
        || term.contains("256color")
        || term.contains("direct")
    {
        Palette::Extended
    } else {
        Palette::Basic
    }
}

/// The locale's character set is UTF-8 (`LC_ALL`, then `LC_CTYPE`, then `LANG`, as the C
/// library looks them up; unset everywhere is the C locale: ASCII).
pub(crate) fn locale_is_utf8(var: impl Fn(&str) -> Option<String>) -> bool {
    for key in ["LC_ALL", "LC_CTYPE", "LANG"] {
        if let Some(v) = var(key).filter(|v| !v.is_empty()) {
            let v = v.to_ascii_lowercase();
            return v.contains("utf-8") || v.contains("utf8");
        }
    }
    false
}

/// The ASCII stand-in for a glyph ifxtop draws, for terminals that cannot show UTF-8; `?` for
/// anything else outside ASCII (a user name in another script, say).
pub(crate) fn ascii_for(c: char) -> char {
    match c {
        c if c.is_ascii() => c,
        '▼' | '↓' => 'v',
        '▲' | '↑' => '^',
        '·' | '─' | '—' | '–' => '-',
        '⚠' => '!',
        '✖' => 'X',
        'ℹ' => 'i',
        '✓' => '+',
        '◔' => 'o',
        '│' => '|',
        '├' => '+',
        '└' => '`',
        '→' | '▶' => '>',
        '←' => '<',
        '…' => '~',
        '░' | '▁' => '.',
        '▂' | '▃' => '_',
        '▄' | '▅' => '-',
        '▆' => '=',
        '▇' | '█' => '#',
        '≤' => '<',
        '≥' => '>',
        '▸' => '>',
        '◆' => '*',
        '×' => 'x',
        '±' => '+',
        '≠' => '#',
        // Box corners and lines (the help's and the findings' frames).
        '═' | '━' => '-',
        '║' | '┃' => '|',
        '\u{2500}'..='\u{257F}' => '+',
        '\u{2580}'..='\u{259F}' => '#',
        _ => '?',
    }
}

/// The ASCII for a glyph where one character would mislead: `≤` `≥` as `<=` `>=` (a lower
/// bound is not "more than"), and an arrow that names a key (`key`: in a hint like `↑/↓`) as
/// its name, `Up`, `Down`, `Left`, `Right` (`v` is a key of its own); else [`ascii_for`].
pub(crate) fn ascii_text(c: char, key: bool) -> std::borrow::Cow<'static, str> {
    match (c, key) {
        ('≤', _) => "<=".into(),
        ('≥', _) => ">=".into(),
        ('↑', true) => "Up".into(),
        ('↓', true) => "Down".into(),
        ('←', true) => "Left".into(),
        ('→', true) => "Right".into(),
        _ => ascii_for(c).to_string().into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_locale_decides_utf8_like_the_c_library() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert!(locale_is_utf8(env(&[("LANG", "en_US.UTF-8")])));
        assert!(locale_is_utf8(env(&[("LC_CTYPE", "de_DE.utf8")])));
        // LC_ALL wins over LANG.
        assert!(!locale_is_utf8(env(&[
            ("LC_ALL", "C"),
            ("LANG", "en_US.UTF-8")
        ])));
        assert!(!locale_is_utf8(env(&[("LANG", "en_US.ISO-8859-1")])));
        assert!(!locale_is_utf8(env(&[])));
    }

    #[test]
    fn the_palette_follows_what_the_terminal_advertises() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        for term in ["xterm", "vt100", "linux", "screen", "tmux", "xterm-color"] {
            let only_term = |k: &str| (k == "TERM").then(|| term.to_string());
            assert_eq!(palette(only_term), Palette::Basic, "{term}");
        }
        assert_eq!(palette(env(&[])), Palette::Basic);
        assert_eq!(
            palette(env(&[("TERM", "xterm-256color")])),
            Palette::Extended
        );
        assert_eq!(
            palette(env(&[("TERM", "screen-256color")])),
            Palette::Extended
        );
        assert_eq!(
            palette(env(&[("TERM", "xterm"), ("COLORTERM", "truecolor")])),
            Palette::Extended
        );
        assert_eq!(
            palette(env(&[("TERM", "linux"), ("COLORTERM", "24bit")])),
            Palette::Extended
        );
        // NO_COLOR wins over everything; empty, it means nothing.
        assert_eq!(
            palette(env(&[("TERM", "xterm-256color"), ("NO_COLOR", "1")])),
            Palette::None
        );
        assert_eq!(
            palette(env(&[("TERM", "xterm-256color"), ("NO_COLOR", "")])),
            Palette::Extended
        );
    }

    #[test]
    fn every_glyph_has_an_ascii_stand_in() {
        for c in "▼▲·⚠│├└→…░▁▂▃▄▅▆▇█┌┐┘╭╮╯╰┬┴┤┼═║≥▸×±↑↓←".chars()
        {
            let a = ascii_for(c);
            assert!(a.is_ascii() && a != '?', "{c} -> {a}");
        }
        assert_eq!(ascii_for('é'), '?');
        assert_eq!(ascii_text('≤', false), "<=");
        assert_eq!(ascii_text('↓', true), "Down");
        assert_eq!(ascii_text('↓', false), "v");
        assert_eq!(ascii_for('x'), 'x');
    }

    /// Only the eight ANSI colours (an 8-colour terminal shows them all), no colour laid on the
    /// header bar's reverse video (yellow on cyan was unreadable), and the alarm badge a
    /// foreground/background pair of its own.
    #[test]
    fn eight_colours_and_a_readable_alarm() {
        let t = Theme::colored();
        let basic = [
            Color::Reset,
            Color::Black,
            Color::Red,
            Color::Green,
            Color::Yellow,
            Color::Blue,
            Color::Magenta,
            Color::Cyan,
            Color::White,
        ];
        for st in [
            t.title,
            t.header_bar,
            t.tab_active,
            t.tab,
            t.column_header,
            t.selected,
            t.error,
            t.warn,
            t.ok,
            t.dim,
            t.hot,
            t.key,
            t.badge_frozen,
            t.badge_running,
            t.badge_alarm,
        ] {
            for c in [st.fg, st.bg].into_iter().flatten() {
                assert!(basic.contains(&c), "{c:?} is not one of the 8 colours");
            }
        }
        assert_eq!(t.header_bar.fg, None);
        assert_eq!(t.header_bar.bg, None);
        assert!(t.badge_alarm.fg.is_some() && t.badge_alarm.bg.is_some());
        assert_ne!(t.badge_alarm.fg, t.badge_alarm.bg);
    }

    #[test]
    fn waits_escalate_with_their_length() {
        let t = Theme::colored();
        assert_eq!(t.wait_style(1.0), Style::new());
        assert_eq!(t.wait_style(10.0), t.warn);
        assert_eq!(t.wait_style(60.0), t.hot);
        assert_eq!(t.wait_style(3600.0), t.error);
    }
}
