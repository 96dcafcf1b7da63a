//! The fleet screen's state: several instances watched at once, one line each. Enter opens the
//! selected instance's own screens; Esc there (with nothing else to go back from) returns here.

use crate::tui::app::Effect;
use crate::tui::keymap::{Action, Keymap};
use crossterm::event::KeyEvent;

/// Where the fleet screen is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FleetUi {
    /// The selected line.
    pub selected: usize,
    /// The instance whose screens are shown, or `None` for the fleet screen itself.
    pub open: Option<usize>,
    /// The help overlay of the fleet screen.
    pub help: bool,
}

/// What a key on the fleet screen asks the loop for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FleetCommand {
    /// Nothing beyond a redraw of the fleet screen.
    Moved,
    /// Show instance N's screens.
    Open(usize),
    Quit,
    Redraw,
    Suspend,
    /// A key the fleet screen does not use.
    Ignored,
}

impl FleetCommand {
    /// What the loop carries out for it as for any screen's key: quitting, a full repaint
    /// (Ctrl-L), a stop (Ctrl-Z). The others only change what the fleet screen shows.
    pub fn effect(self) -> Option<Effect> {
        match self {
            FleetCommand::Quit => Some(Effect::Quit(0)),
            FleetCommand::Redraw => Some(Effect::Redraw),
            FleetCommand::Suspend => Some(Effect::Suspend),
            FleetCommand::Moved | FleetCommand::Open(_) | FleetCommand::Ignored => None,
        }
    }
}

impl FleetUi {
    /// A key on the fleet screen of `n` instances.
    pub fn on_key(&mut self, keymap: &Keymap, key: &KeyEvent, n: usize) -> FleetCommand {
        let last = n.saturating_sub(1);
        let Some(action) = keymap.action(key) else {
            return FleetCommand::Ignored;
        };
        if self.help {
            // Any key closes the help; quitting from it takes a second key (as in the panes).
            self.help = false;
            return FleetCommand::Moved;
        }
        match action {
            Action::Quit => FleetCommand::Quit,
            Action::Help => {
                self.help = true;
                FleetCommand::Moved
            }
            Action::Up => {
                self.selected = self.selected.saturating_sub(1);
                FleetCommand::Moved
            }
            Action::Down => {
                self.selected = (self.selected + 1).min(last);
                FleetCommand::Moved
            }
            Action::Home | Action::GroupNext | Action::PageUp => {
                self.selected = 0;
                FleetCommand::Moved
            }
            Action::End | Action::PageDown => {
                self.selected = last;
                FleetCommand::Moved
            }
            Action::DrillDown if n > 0 => {
                self.selected = self.selected.min(last);
                self.open = Some(self.selected);
                FleetCommand::Open(self.selected)
            }
            Action::Redraw => FleetCommand::Redraw,
            Action::Suspend => FleetCommand::Suspend,
            _ => FleetCommand::Ignored,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyModifiers};

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    #[test]
    fn moves_within_the_list_opens_and_quits() {
        let km = Keymap::default();
        let mut f = FleetUi::default();
        assert_eq!(f.on_key(&km, &key(KeyCode::Up), 3), FleetCommand::Moved);
        assert_eq!(f.selected, 0);
        f.on_key(&km, &key(KeyCode::Down), 3);
        f.on_key(&km, &key(KeyCode::Down), 3);
        f.on_key(&km, &key(KeyCode::Down), 3);
        assert_eq!(f.selected, 2);
        assert_eq!(
            f.on_key(&km, &key(KeyCode::Enter), 3),
            FleetCommand::Open(2)
        );
        assert_eq!(f.open, Some(2));
        assert_eq!(
            f.on_key(&km, &key(KeyCode::Char('?')), 3),
            FleetCommand::Moved
        );
        assert!(f.help);
        // q in the help closes it; it does not quit.
        assert_eq!(
            f.on_key(&km, &key(KeyCode::Char('q')), 3),
            FleetCommand::Moved
        );
        assert!(!f.help);
        assert_eq!(
            f.on_key(&km, &key(KeyCode::Char('q')), 3),
            FleetCommand::Quit
        );
    }
}
