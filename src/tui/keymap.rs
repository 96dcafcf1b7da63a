//! The one `Action` enum and the one keymap from keys to actions (configurable from TOML).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The keys one terminal event stands for. No key of ifxtop's is an Alt chord, so an Alt-held
/// key is read as what it almost always is: Esc, then the key. A terminal sends Alt-x as ESC
/// then x, and two keys typed quickly (over ssh they often arrive in one packet) read the same:
/// Esc then Space must close the help and then freeze, not just close the help.
pub(crate) fn keys_of(ev: KeyEvent) -> impl Iterator<Item = KeyEvent> {
    let alt = ev.modifiers.contains(KeyModifiers::ALT);
    let esc = alt.then_some(KeyEvent {
        code: KeyCode::Esc,
        modifiers: KeyModifiers::NONE,
        kind: ev.kind,
        state: ev.state,
    });
    let key = KeyEvent {
        modifiers: ev.modifiers - KeyModifiers::ALT,
        ..ev
    };
    esc.into_iter().chain(std::iter::once(key))
}

/// Everything a key can ask for.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Quit,
    Help,
    /// Every finding, the worst first, with its evidence and what helps (`f`).
    Findings,
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    NextPane,
    PrevPane,
    PaneSessions,
    PaneWaiters,
    PaneBuffers,
    PaneSockets,
    PaneNuma,
    PaneServer,
    PaneIo,
    PaneActivity,
    /// The Activity pane: group by the next key (class, SQL, user...); elsewhere, as Home.
    GroupNext,
    /// The Activity pane: the next window (1, 5, 15, 60 minutes).
    WindowNext,
    /// The Activity pane: pick a span of the chart (`v`; again marks where the cursor is,
    /// `←`/`→` move, Enter narrows the table to it).
    SpanPick,
    DrillDown,
    /// Open any session's screen by its number (`#`).
    GotoSession,
    Back,
    Filter,
    /// Jump to the next row holding a text (F3); again for the next.
    Search,
    SortNext,
    SortReverse,
    /// The Sessions pane, the most CPU first (htop's `P`).
    SortCpu,
    /// The Sessions pane, the most memory first (htop's `M`).
    SortMem,
    ToggleFreeze,
    IntervalLonger,
    IntervalShorter,
    ToggleIdle,
    RebuildExtents,
    ToggleTree,
    Copy,
    Export,
    ReplayPause,
    ReplayStepForward,
    ReplayStepBack,
    ReplayFaster,
    ReplaySlower,
    ReplaySeekForward,
    ReplaySeekBack,
    ReplaySeek,
    /// Mark the moment on screen with a note (`b`, a bookmark): into the flight recorder's
    /// ring, and to everyone watching a shared screen.
    Bookmark,
    /// Watching together: follow another's view (pane, session, moment) as it moves (`@`);
    /// any key comes back to one's own.
    Follow,
    /// Draw the whole screen again (Ctrl-L).
    Redraw,
    /// Stop ifxtop and give the shell back, as Ctrl-Z does everywhere (`fg` resumes).
    Suspend,
}

/// A key as written in the config: `q`, `ctrl-c`, `enter`, `shift-tab`, `f1`, `space`, `pgdn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Key {
    pub(crate) code: KeyCodeName,
    pub(crate) ctrl: bool,
}

/// The subset of key codes a binding can name (ordered, unlike crossterm's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum KeyCodeName {
    Char(char),
    Enter,
    Esc,
    Tab,
    BackTab,
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Home,
    End,
    F(u8),
}

impl Key {
    pub(crate) fn parse(s: &str) -> Option<Key> {
        let lower = s.trim().to_ascii_lowercase();
        let (ctrl, rest) = match lower.strip_prefix("ctrl-").or(lower.strip_prefix("c-")) {
            Some(r) => (true, r.to_string()),
            None => (false, lower.clone()),
        };
        let code = match rest.as_str() {
            "enter" | "return" => KeyCodeName::Enter,
            "esc" | "escape" => KeyCodeName::Esc,
            "tab" => KeyCodeName::Tab,
            "shift-tab" | "backtab" => KeyCodeName::BackTab,
            "up" => KeyCodeName::Up,
            "down" => KeyCodeName::Down,
            "left" => KeyCodeName::Left,
            "right" => KeyCodeName::Right,
            "pgup" | "pageup" => KeyCodeName::PageUp,
            "pgdn" | "pagedown" => KeyCodeName::PageDown,
            "home" => KeyCodeName::Home,
            "end" => KeyCodeName::End,
            "space" => KeyCodeName::Char(' '),
            f if f.len() >= 2 && f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
                KeyCodeName::F(f[1..].parse().ok()?)
            }
            _ => {
                // A single character keeps its case from the original text (`R` ≠ `r`).
                // After `ctrl-` exactly one character may follow: `ctrl-alt-shift-superX` names
                // no key (its last character is not what the user meant).
                let original = s.trim();
                let ch_src = if ctrl {
                    if rest.chars().count() != 1 {
                        return None;
                    }
                    original.get(original.len().saturating_sub(rest.len())..)?
                } else {
                    original
                };
                let mut chars = ch_src.chars();
                let c = chars.next()?;
                if chars.next().is_some() {
                    return None;
                }
                KeyCodeName::Char(if ctrl { c.to_ascii_lowercase() } else { c })
            }
        };
        Some(Key { code, ctrl })
    }

    pub(crate) fn from_event(ev: &KeyEvent) -> Option<Key> {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        let code = match ev.code {
            KeyCode::Char(c) => KeyCodeName::Char(if ctrl { c.to_ascii_lowercase() } else { c }),
            KeyCode::Enter => KeyCodeName::Enter,
            KeyCode::Esc => KeyCodeName::Esc,
            KeyCode::Tab => KeyCodeName::Tab,
            KeyCode::BackTab => KeyCodeName::BackTab,
            KeyCode::Up => KeyCodeName::Up,
            KeyCode::Down => KeyCodeName::Down,
            KeyCode::Left => KeyCodeName::Left,
            KeyCode::Right => KeyCodeName::Right,
            KeyCode::PageUp => KeyCodeName::PageUp,
            KeyCode::PageDown => KeyCodeName::PageDown,
            KeyCode::Home => KeyCodeName::Home,
            KeyCode::End => KeyCodeName::End,
            KeyCode::F(n) => KeyCodeName::F(n),
            _ => return None,
        };
        Some(Key { code, ctrl })
    }

    /// How the help screen shows it.
    pub(crate) fn label(&self) -> String {
        let base = match self.code {
            KeyCodeName::Char(' ') => "space".to_string(),
            KeyCodeName::Char(c) => c.to_string(),
            KeyCodeName::Enter => "Enter".into(),
            KeyCodeName::Esc => "Esc".into(),
            KeyCodeName::Tab => "Tab".into(),
            KeyCodeName::BackTab => "Shift-Tab".into(),
            KeyCodeName::Up => "↑".into(),
            KeyCodeName::Down => "↓".into(),
            KeyCodeName::Left => "←".into(),
            KeyCodeName::Right => "→".into(),
            KeyCodeName::PageUp => "PgUp".into(),
            KeyCodeName::PageDown => "PgDn".into(),
            KeyCodeName::Home => "Home".into(),
            KeyCodeName::End => "End".into(),
            KeyCodeName::F(n) => format!("F{n}"),
        };
        if self.ctrl {
            format!("Ctrl-{base}")
        } else {
            base
        }
    }
}

/// Keys to actions. Several keys may do the same thing.
#[derive(Debug, Clone)]
pub struct Keymap {
    map: BTreeMap<Key, Action>,
}

const DEFAULTS: &[(&str, Action)] = &[
    ("q", Action::Quit),
    ("ctrl-c", Action::Quit),
    ("f10", Action::Quit),
    ("?", Action::Help),
    ("f1", Action::Help),
    ("h", Action::Help),
    ("f", Action::Findings),
    ("up", Action::Up),
    ("k", Action::Up),
    ("down", Action::Down),
    ("j", Action::Down),
    ("pgup", Action::PageUp),
    ("ctrl-b", Action::PageUp),
    ("pgdn", Action::PageDown),
    ("ctrl-f", Action::PageDown),
    ("home", Action::Home),
    ("g", Action::GroupNext),
    ("end", Action::End),
    ("G", Action::End),
    ("tab", Action::NextPane),
    ("shift-tab", Action::PrevPane),
    ("1", Action::PaneSessions),
    ("2", Action::PaneWaiters),
    ("3", Action::PaneBuffers),
    ("4", Action::PaneSockets),
    ("5", Action::PaneNuma),
    ("6", Action::PaneServer),
    ("7", Action::PaneIo),
    ("8", Action::PaneActivity),
    ("w", Action::WindowNext),
    ("v", Action::SpanPick),
    ("enter", Action::DrillDown),
    ("#", Action::GotoSession),
    ("esc", Action::Back),
    ("/", Action::Filter),
    ("f4", Action::Filter),
    ("f3", Action::Search),
    ("n", Action::Search),
    ("s", Action::SortNext),
    ("f6", Action::SortNext),
    ("S", Action::SortReverse),
    ("P", Action::SortCpu),
    ("M", Action::SortMem),
    ("space", Action::ToggleFreeze),
    ("+", Action::IntervalLonger),
    ("=", Action::IntervalLonger),
    ("-", Action::IntervalShorter),
    ("i", Action::ToggleIdle),
    ("R", Action::RebuildExtents),
    ("t", Action::ToggleTree),
    ("f5", Action::ToggleTree),
    ("y", Action::Copy),
    ("e", Action::Export),
    ("p", Action::ReplayPause),
    (".", Action::ReplayStepForward),
    (",", Action::ReplayStepBack),
    ("]", Action::ReplayFaster),
    ("[", Action::ReplaySlower),
    ("right", Action::ReplaySeekForward),
    ("left", Action::ReplaySeekBack),
    (":", Action::ReplaySeek),
    ("b", Action::Bookmark),
    ("@", Action::Follow),
    ("ctrl-l", Action::Redraw),
    ("ctrl-z", Action::Suspend),
];

impl Default for Keymap {
    fn default() -> Self {
        let map = DEFAULTS
            .iter()
            .filter_map(|(k, a)| Key::parse(k).map(|k| (k, *a)))
            .collect();
        Keymap { map }
    }
}

/// The action as the config's `[keys]` table names it (`page-down`).
fn action_name(a: Action) -> String {
    serde_json::to_value(a)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{a:?}"))
}

impl Keymap {
    /// The defaults with the config file's `[keys]` table (action name → keys), as written in
    /// the file: an action name ifxtop does not know is refused like a bad key.
    pub(crate) fn from_config(keys: &BTreeMap<String, Vec<String>>) -> Result<Keymap, String> {
        let mut overrides = BTreeMap::new();
        for (name, list) in keys {
            let action: Action = serde_json::from_value(serde_json::Value::String(name.clone()))
                .map_err(|e| format!("'{}': {e}", crate::format::printable(name)))?;
            overrides.insert(action, list.clone());
        }
        Keymap::with_overrides(&overrides)
    }

    /// The defaults, with the config's `[keys]` table (action → keys) replacing the keys of the
    /// actions it names. Refused: a key name ifxtop does not know, a key bound to two actions
    /// (one would silently take the other's place), and taking Ctrl-C from quit: Ctrl-C always
    /// quits, so no config leaves the user without a way out.
    pub(crate) fn with_overrides(
        overrides: &BTreeMap<Action, Vec<String>>,
    ) -> Result<Keymap, String> {
        let mut km = Keymap::default();
        for action in overrides.keys() {
            km.map.retain(|_, a| a != action);
        }
        let ctrl_c = Key {
            code: KeyCodeName::Char('c'),
            ctrl: true,
        };
        for (action, keys) in overrides {
            for k in keys {
                let key = Key::parse(k).ok_or_else(|| format!("unknown key '{k}'"))?;
                if key == ctrl_c && *action != Action::Quit {
                    return Err(format!(
                        "'{k}' is kept for quit (Ctrl-C always quits); bind {} to another key",
                        action_name(*action)
                    ));
                }
                if let Some(other) = km.map.get(&key).filter(|a| *a != action) {
                    return Err(format!(
                        "key '{k}' is bound to both {} and {}; give one of them other keys",
                        action_name(*other),
                        action_name(*action)
                    ));
                }
                km.map.insert(key, *action);
            }
        }
        km.map.insert(ctrl_c, Action::Quit);
        Ok(km)
    }

    pub(crate) fn action(&self, ev: &KeyEvent) -> Option<Action> {
        let key = Key::from_event(ev)?;
        self.map.get(&key).copied()
    }

    /// The key that does `action`, as a hint names it: its first default key still bound to
    /// it, else the first key the config gave it, a key without Ctrl first (quit bound to `x`
    /// is hinted `x`, not the Ctrl-C every keymap keeps); `None` when it has none.
    pub(crate) fn key_of(&self, action: Action) -> Option<Key> {
        let defaults = DEFAULTS
            .iter()
            .filter(|(_, a)| *a == action)
            .filter_map(|(k, _)| Key::parse(k))
            .filter(|k| self.map.get(k) == Some(&action));
        let bound = self
            .map
            .iter()
            .filter(|(_, a)| **a == action)
            .map(|(k, _)| *k);
        let all: Vec<Key> = defaults.chain(bound).collect();
        all.iter()
            .find(|k| !k.ctrl)
            .or_else(|| all.first())
            .copied()
    }

    /// A hint's keys: each action's key ([`Keymap::key_of`]) joined by `/` (`↑/↓`); `None`
    /// when one of them has no key.
    pub(crate) fn hint(&self, actions: &[Action]) -> Option<String> {
        let labels: Option<Vec<String>> = actions
            .iter()
            .map(|a| self.key_of(*a).map(|k| k.label()))
            .collect();
        Some(labels?.join("/"))
    }

    /// Keys bound to each action, in the order of the help screen.
    pub fn bindings(&self) -> BTreeMap<Action, Vec<String>> {
        let mut out: BTreeMap<Action, Vec<String>> = BTreeMap::new();
        for (k, a) in &self.map {
            out.entry(*a).or_default().push(k.label());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyEventKind;

    /// A hint names the key that does the action: the first default, else the key the config
    /// gave it, never a key taken away; an action with no key has no hint.
    #[test]
    fn hints_name_the_bound_keys() {
        let km = Keymap::default();
        assert_eq!(km.hint(&[Action::Quit]).as_deref(), Some("q"));
        assert_eq!(km.hint(&[Action::Up, Action::Down]).as_deref(), Some("↑/↓"));
        assert_eq!(
            km.hint(&[Action::IntervalLonger, Action::IntervalShorter])
                .as_deref(),
            Some("+/-")
        );
        assert_eq!(km.hint(&[Action::ToggleFreeze]).as_deref(), Some("space"));
        let mut overrides = BTreeMap::new();
        overrides.insert(Action::WindowNext, vec!["W".to_string()]);
        overrides.insert(Action::Copy, vec![]);
        overrides.insert(Action::Up, vec!["ctrl-p".to_string(), "up".to_string()]);
        let km = Keymap::with_overrides(&overrides).expect("keymap");
        assert_eq!(km.hint(&[Action::WindowNext]).as_deref(), Some("W"));
        assert_eq!(km.hint(&[Action::Copy]), None);
        assert_eq!(km.hint(&[Action::Up, Action::Down]).as_deref(), Some("↑/↓"));
        let mut overrides = BTreeMap::new();
        overrides.insert(Action::Up, vec!["ctrl-p".to_string()]);
        let km = Keymap::with_overrides(&overrides).expect("keymap");
        assert_eq!(
            km.hint(&[Action::Up, Action::Down]).as_deref(),
            Some("Ctrl-p/↓")
        );
    }

    /// An action name the config's `[keys]` table does not know is refused (it was a typo).
    #[test]
    fn unknown_actions_in_the_config_are_rejected() {
        let config = crate::instance::config::Config::parse("[keys]\nfly = [\"f\"]")
            .expect("the file parses");
        assert!(Keymap::from_config(&config.keys).is_err());
        let config = crate::instance::config::Config::parse("[keys]\nquit = [\"x\"]")
            .expect("the file parses");
        assert!(Keymap::from_config(&config.keys).is_ok());
    }

    fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent {
            code,
            modifiers: mods,
            kind: KeyEventKind::Press,
            state: crossterm::event::KeyEventState::NONE,
        }
    }

    #[test]
    fn an_alt_held_key_is_esc_then_the_key() {
        let keys: Vec<KeyEvent> = keys_of(ev(KeyCode::Char(' '), KeyModifiers::ALT)).collect();
        assert_eq!(
            keys,
            [
                ev(KeyCode::Esc, KeyModifiers::NONE),
                ev(KeyCode::Char(' '), KeyModifiers::NONE)
            ]
        );
        let ctrl_alt = KeyModifiers::ALT | KeyModifiers::CONTROL;
        let keys: Vec<KeyEvent> = keys_of(ev(KeyCode::Char('c'), ctrl_alt)).collect();
        assert_eq!(keys[1], ev(KeyCode::Char('c'), KeyModifiers::CONTROL));
        let plain = ev(KeyCode::Char('q'), KeyModifiers::NONE);
        assert_eq!(keys_of(plain).collect::<Vec<_>>(), [plain]);
    }

    #[test]
    fn defaults_cover_the_top_like_keys() {
        let km = Keymap::default();
        let none = KeyModifiers::NONE;
        assert_eq!(km.action(&ev(KeyCode::Char('q'), none)), Some(Action::Quit));
        assert_eq!(
            km.action(&ev(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert_eq!(km.action(&ev(KeyCode::Char('j'), none)), Some(Action::Down));
        assert_eq!(
            km.action(&ev(KeyCode::Char('R'), KeyModifiers::SHIFT)),
            Some(Action::RebuildExtents)
        );
        assert_eq!(km.action(&ev(KeyCode::Char('r'), none)), None);
        assert_eq!(
            km.action(&ev(KeyCode::Char(' '), none)),
            Some(Action::ToggleFreeze)
        );
        assert_eq!(km.action(&ev(KeyCode::Tab, none)), Some(Action::NextPane));
        // The Sessions pane first, as `top` lists processes first.
        assert_eq!(
            km.action(&ev(KeyCode::Char('1'), none)),
            Some(Action::PaneSessions)
        );
        assert_eq!(
            km.action(&ev(KeyCode::Char('4'), none)),
            Some(Action::PaneSockets)
        );
        // The function keys of top and htop.
        for (f, a) in [
            (1, Action::Help),
            (3, Action::Search),
            (4, Action::Filter),
            (5, Action::ToggleTree),
            (6, Action::SortNext),
            (10, Action::Quit),
        ] {
            assert_eq!(km.action(&ev(KeyCode::F(f), none)), Some(a), "F{f}");
        }
        assert_eq!(
            km.action(&ev(KeyCode::Char('l'), KeyModifiers::CONTROL)),
            Some(Action::Redraw)
        );
        assert_eq!(
            km.action(&ev(KeyCode::Char('z'), KeyModifiers::CONTROL)),
            Some(Action::Suspend)
        );
        assert_eq!(
            km.action(&ev(KeyCode::Char('#'), none)),
            Some(Action::GotoSession)
        );
    }

    #[test]
    fn overrides_replace_an_actions_keys() {
        let mut o = BTreeMap::new();
        o.insert(Action::Quit, vec!["x".to_string()]);
        let km = Keymap::with_overrides(&o).expect("valid keys");
        assert_eq!(
            km.action(&ev(KeyCode::Char('x'), KeyModifiers::NONE)),
            Some(Action::Quit)
        );
        assert_eq!(km.action(&ev(KeyCode::Char('q'), KeyModifiers::NONE)), None);
        o.insert(Action::Help, vec!["nonsense-key".to_string()]);
        assert!(Keymap::with_overrides(&o).is_err());
    }

    /// `[keys] quit = []` took every way out; Ctrl-C still quits, and cannot be given away.
    #[test]
    fn ctrl_c_always_quits() {
        let mut o = BTreeMap::new();
        o.insert(Action::Quit, Vec::new());
        let km = Keymap::with_overrides(&o).expect("valid");
        assert_eq!(km.action(&ev(KeyCode::Char('q'), KeyModifiers::NONE)), None);
        assert_eq!(
            km.action(&ev(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        o.insert(Action::Help, vec!["ctrl-c".to_string()]);
        let e = Keymap::with_overrides(&o).expect_err("ctrl-c taken from quit");
        assert!(
            e.contains("Ctrl-C always quits") && e.contains("help"),
            "{e}"
        );
    }

    /// `ctrl-alt-shift-superX` was read as Ctrl-X.
    #[test]
    fn unknown_key_names_are_refused() {
        for bad in [
            "ctrl-alt-shift-superX",
            "ctrl-xy",
            "ctrl-",
            "alt-x",
            "qq",
            "",
        ] {
            assert_eq!(Key::parse(bad), None, "{bad}");
        }
        assert_eq!(
            Key::parse("ctrl-X"),
            Some(Key {
                code: KeyCodeName::Char('x'),
                ctrl: true
            })
        );
        assert_eq!(
            Key::parse("R"),
            Some(Key {
                code: KeyCodeName::Char('R'),
                ctrl: false
            })
        );
        let mut o = BTreeMap::new();
        o.insert(Action::Quit, vec!["ctrl-alt-shift-superX".to_string()]);
        let e = Keymap::with_overrides(&o).expect_err("unknown key");
        assert!(e.contains("unknown key 'ctrl-alt-shift-superX'"), "{e}");
    }

    /// A key bound twice silently took over another action's key.
    #[test]
    fn a_key_bound_to_two_actions_is_refused() {
        let mut o = BTreeMap::new();
        // `h` is not quit's: bound by default to another action (or free) — `?` is help's.
        o.insert(Action::Quit, vec!["?".to_string()]);
        let e = Keymap::with_overrides(&o).expect_err("? is help's");
        assert!(
            e.contains("'?'") && e.contains("help") && e.contains("quit"),
            "{e}"
        );
        let mut o = BTreeMap::new();
        o.insert(Action::Quit, vec!["x".to_string()]);
        o.insert(Action::Help, vec!["x".to_string()]);
        let e = Keymap::with_overrides(&o).expect_err("x twice");
        assert!(e.contains("'x'"), "{e}");
        // Both actions rebound: no clash.
        let mut o = BTreeMap::new();
        o.insert(Action::Quit, vec!["?".to_string()]);
        o.insert(Action::Help, vec!["f1".to_string()]);
        let km = Keymap::with_overrides(&o).expect("no clash");
        assert_eq!(
            km.action(&ev(KeyCode::Char('?'), KeyModifiers::NONE)),
            Some(Action::Quit)
        );
    }
}
