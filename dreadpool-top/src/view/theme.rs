//! Colours and styles, in one place.

use crate::state::sample::WorkerStatus;
use ratatui::style::{Color, Modifier, Style};

/// Panel borders.
pub fn border() -> Style {
    Style::new().fg(Color::DarkGray)
}

/// Panel titles.
pub fn title() -> Style {
    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

/// Column headers and labels.
pub fn label() -> Style {
    Style::new().fg(Color::Gray)
}

/// Zeros and other quiet values.
pub fn dim() -> Style {
    Style::new().fg(Color::DarkGray)
}

/// Values that matter.
pub fn value() -> Style {
    Style::new().fg(Color::White)
}

/// Something bad (panics, lost connection).
pub fn alarm() -> Style {
    Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
}

/// The selected row.
pub fn selected() -> Style {
    Style::new()
        .bg(Color::Indexed(236))
        .add_modifier(Modifier::BOLD)
}

/// A worker state's colour.
pub fn state(status: Option<WorkerStatus>) -> Style {
    let color = match status {
        Some(WorkerStatus::Running) => Color::Green,
        Some(WorkerStatus::Searching) => Color::Yellow,
        Some(WorkerStatus::Sleeping) => Color::Blue,
        Some(WorkerStatus::Respawning) => Color::Red,
        Some(WorkerStatus::Stopped) | Some(WorkerStatus::Unknown) | None => Color::DarkGray,
    };
    let style = Style::new().fg(color);
    if status == Some(WorkerStatus::Respawning) {
        style.add_modifier(Modifier::BOLD)
    } else {
        style
    }
}

/// The heat ramp of the steal matrix, coldest first (256-colour palette).
const HEAT: [u8; 8] = [236, 52, 88, 124, 160, 196, 208, 220];

/// The background for a cell holding `value` out of `max`.
pub fn heat(value: u64, max: u64) -> Style {
    if value == 0 || max == 0 {
        return Style::new().fg(Color::DarkGray);
    }
    let level = 1 + ((value as f64 / max as f64) * (HEAT.len() - 2) as f64).round() as usize;
    let level = level.min(HEAT.len() - 1);
    let fg = if level >= 6 {
        Color::Black
    } else {
        Color::White
    };
    Style::new().bg(Color::Indexed(HEAT[level])).fg(fg)
}

/// A busy share's colour: green when idle, yellow, then red when saturated.
pub fn busy(ratio: f64) -> Style {
    let color = if ratio >= 0.9 {
        Color::Red
    } else if ratio >= 0.6 {
        Color::Yellow
    } else if ratio > 0.0 {
        Color::Green
    } else {
        Color::DarkGray
    };
    Style::new().fg(color)
}
