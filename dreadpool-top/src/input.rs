//! Keys to actions: a pure mapping, no state (htop / tokio-console habits).

use crate::pattern::Pattern;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What a key asks for. The state decides what it means in context (Esc
/// closes the detail view or the help first, and quits only from the main
/// view).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Leave now (`q`, Ctrl-C).
    Quit,
    /// Close what is open, or leave (Esc).
    Back,
    /// Freeze or unfreeze the display (Space).
    TogglePause,
    /// Select the worker above (Up, `k`).
    Up,
    /// Select the worker below (Down, `j`).
    Down,
    /// Select the first worker (Home, `g`).
    First,
    /// Select the last worker (End, `G`).
    Last,
    /// Open or close the selected worker's detail view (Enter).
    Open,
    /// Sort by the next column (`s`, Right).
    SortNext,
    /// Sort by the previous column (Left).
    SortPrev,
    /// Reverse the sort order (`S`).
    SortReverse,
    /// Save a flight recording of the shown pool to a file (`r`).
    SaveRecording,
    /// Show or hide the shown pool's longest waits and their causes (`w`).
    ToggleWaits,
    /// Switch the demo load to a pattern (`1`..`7`).
    Pattern(Pattern),
    /// Raise the demo load rate (`+`).
    RateUp,
    /// Lower the demo load rate (`-`).
    RateDown,
    /// Show or hide the key help (`?`).
    ToggleHelp,
    /// Show the next pool of an attached host (Tab, `p`).
    NextPool,
    /// Show the previous pool (Shift-Tab, `P`).
    PrevPool,
}

/// The action for a terminal event, if any (key presses only: releases and
/// repeats from terminals that report them are ignored).
pub fn map_event(event: &Event) -> Option<Action> {
    match event {
        Event::Key(key) => map_key(key),
        _ => None,
    }
}

/// The action for a key press, if any.
pub fn map_key(key: &KeyEvent) -> Option<Action> {
    if key.kind != KeyEventKind::Press {
        return None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let action = match key.code {
        KeyCode::Char('c') | KeyCode::Char('C') if ctrl => Action::Quit,
        _ if ctrl => return None,
        KeyCode::Char('q') | KeyCode::Char('Q') => Action::Quit,
        KeyCode::Esc => Action::Back,
        KeyCode::Char(' ') => Action::TogglePause,
        KeyCode::Up | KeyCode::Char('k') => Action::Up,
        KeyCode::Down | KeyCode::Char('j') => Action::Down,
        KeyCode::Home | KeyCode::Char('g') => Action::First,
        KeyCode::End | KeyCode::Char('G') => Action::Last,
        KeyCode::Enter => Action::Open,
        KeyCode::Char('s') | KeyCode::Right | KeyCode::Char('l') => Action::SortNext,
        KeyCode::Left | KeyCode::Char('h') => Action::SortPrev,
        KeyCode::Char('S') => Action::SortReverse,
        KeyCode::Char('r') => Action::SaveRecording,
        KeyCode::Char('w') | KeyCode::Char('W') => Action::ToggleWaits,
        KeyCode::Char('+') | KeyCode::Char('=') => Action::RateUp,
        KeyCode::Char('-') | KeyCode::Char('_') => Action::RateDown,
        KeyCode::Char('?') | KeyCode::F(1) => Action::ToggleHelp,
        KeyCode::Tab | KeyCode::Char('p') => Action::NextPool,
        KeyCode::BackTab | KeyCode::Char('P') => Action::PrevPool,
        KeyCode::Char(c) => return Pattern::from_key(c).map(Action::Pattern),
        _ => return None,
    };
    Some(action)
}

/// The key bindings as (keys, what they do), for the help overlay.
pub const BINDINGS: &[(&str, &str)] = &[
    ("q  Ctrl-C", "quit"),
    ("Esc", "close detail / waits / help, else quit"),
    ("Space", "pause / resume the display"),
    ("Up Down  j k", "select a worker"),
    ("Home End  g G", "first / last worker"),
    ("Enter", "open / close the worker's detail"),
    // One line for both sorting keys: at 80x24 the help keeps the footer
    // in view only at this many lines.
    (
        "s S  Left Right",
        "sort by next / previous column; S reverses",
    ),
    ("r", "save a recording of the pool (Perfetto)"),
    ("w", "longest waits of the pool, with causes"),
    ("1 .. 7", "demo load pattern"),
    ("+  -", "demo load rate up / down"),
    ("Tab  Shift-Tab", "next / previous pool (attached)"),
    ("?", "this help"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::KeyEventState;

    fn press(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    #[test]
    fn quit_keys() {
        assert_eq!(map_key(&press(KeyCode::Char('q'))), Some(Action::Quit));
        assert_eq!(map_key(&ctrl('c')), Some(Action::Quit));
        assert_eq!(map_key(&press(KeyCode::Esc)), Some(Action::Back));
    }

    #[test]
    fn movement_and_drill_down() {
        assert_eq!(map_key(&press(KeyCode::Up)), Some(Action::Up));
        assert_eq!(map_key(&press(KeyCode::Char('k'))), Some(Action::Up));
        assert_eq!(map_key(&press(KeyCode::Down)), Some(Action::Down));
        assert_eq!(map_key(&press(KeyCode::Char('j'))), Some(Action::Down));
        assert_eq!(map_key(&press(KeyCode::Enter)), Some(Action::Open));
        assert_eq!(map_key(&press(KeyCode::Home)), Some(Action::First));
        assert_eq!(map_key(&press(KeyCode::Char('G'))), Some(Action::Last));
    }

    #[test]
    fn sorting_pause_help_and_pools() {
        assert_eq!(map_key(&press(KeyCode::Char('s'))), Some(Action::SortNext));
        assert_eq!(map_key(&press(KeyCode::Right)), Some(Action::SortNext));
        assert_eq!(map_key(&press(KeyCode::Left)), Some(Action::SortPrev));
        assert_eq!(
            map_key(&press(KeyCode::Char('S'))),
            Some(Action::SortReverse)
        );
        assert_eq!(
            map_key(&press(KeyCode::Char('r'))),
            Some(Action::SaveRecording)
        );
        assert_eq!(
            map_key(&press(KeyCode::Char(' '))),
            Some(Action::TogglePause)
        );
        assert_eq!(
            map_key(&press(KeyCode::Char('?'))),
            Some(Action::ToggleHelp)
        );
        assert_eq!(
            map_key(&press(KeyCode::Char('w'))),
            Some(Action::ToggleWaits)
        );
        assert_eq!(
            map_key(&press(KeyCode::Char('W'))),
            Some(Action::ToggleWaits)
        );
        assert_eq!(map_key(&ctrl('w')), None);
        assert_eq!(map_key(&press(KeyCode::Tab)), Some(Action::NextPool));
        assert_eq!(map_key(&press(KeyCode::BackTab)), Some(Action::PrevPool));
    }

    #[test]
    fn digits_pick_patterns_and_plus_minus_the_rate() {
        for (i, p) in Pattern::ALL.into_iter().enumerate() {
            let key = char::from(b'1' + i as u8);
            assert_eq!(
                map_key(&press(KeyCode::Char(key))),
                Some(Action::Pattern(p))
            );
        }
        assert_eq!(
            map_key(&press(KeyCode::Char('6'))),
            Some(Action::Pattern(Pattern::PanicStorm))
        );
        assert_eq!(
            map_key(&press(KeyCode::Char('7'))),
            Some(Action::Pattern(Pattern::ForkJoin))
        );
        assert_eq!(map_key(&press(KeyCode::Char('8'))), None);
        assert_eq!(map_key(&press(KeyCode::Char('+'))), Some(Action::RateUp));
        assert_eq!(map_key(&press(KeyCode::Char('='))), Some(Action::RateUp));
        assert_eq!(map_key(&press(KeyCode::Char('-'))), Some(Action::RateDown));
    }

    #[test]
    fn releases_other_ctrl_chords_and_unknown_keys_do_nothing() {
        let mut release = press(KeyCode::Char('q'));
        release.kind = KeyEventKind::Release;
        release.state = KeyEventState::NONE;
        assert_eq!(map_key(&release), None);
        assert_eq!(map_key(&ctrl('q')), None);
        assert_eq!(map_key(&press(KeyCode::Char('x'))), None);
        assert_eq!(map_key(&press(KeyCode::F(5))), None);
        assert_eq!(map_event(&Event::FocusGained), None);
        assert_eq!(
            map_event(&Event::Key(press(KeyCode::Char('q')))),
            Some(Action::Quit)
        );
    }
}
