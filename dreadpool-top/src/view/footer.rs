//! The key line at the bottom, with the dashboard's own CPU use.

use super::theme;
use crate::state::App;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// Draws the footer into `area` (one row).
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let key = Style::new().fg(Color::Black).bg(Color::Gray);
    let mut spans = Vec::new();
    if let Some(status) = &app.status {
        spans.push(Span::styled(
            format!(" {status} "),
            Style::new().fg(Color::Yellow),
        ));
    } else {
        let attached = matches!(app.mode, crate::state::Mode::Attach { .. });
        let hints: &[(&str, &str)] = if app.detail_open {
            &[("Esc", "back"), ("↑↓", "worker"), ("q", "quit")]
        } else if app.waits_open {
            &[("w Esc", "close waits"), ("Tab", "pool"), ("q", "quit")]
        } else if attached {
            &[
                ("↑↓", "select"),
                ("⏎", "detail"),
                ("s", "sort"),
                ("␣", "pause"),
                ("Tab", "pool"),
                ("r", "record"),
                ("w", "waits"),
                ("?", "help"),
                ("q", "quit"),
            ]
        } else {
            &[
                ("↑↓", "select"),
                ("⏎", "detail"),
                ("s", "sort"),
                ("␣", "pause"),
                ("1-7", "load"),
                ("+-", "rate"),
                ("r", "record"),
                ("w", "waits"),
                ("?", "help"),
                ("q", "quit"),
            ]
        };
        // Hints from the left while they fit beside the overhead figure.
        let reserve = if app.overhead.is_some() { 13 } else { 0 };
        let mut used = 0;
        for (k, what) in hints {
            let w = k.chars().count() + what.chars().count() + 3;
            if used + w + reserve > usize::from(area.width) {
                break;
            }
            used += w;
            spans.push(Span::styled(format!(" {k} "), key));
            spans.push(Span::styled(format!("{what} "), theme::label()));
        }
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
    if let Some(overhead) = app.overhead {
        let text = format!("ui {:.1}% cpu ", overhead * 100.0);
        let w = text.chars().count() as u16;
        if area.width > w + 20 {
            frame.render_widget(
                Paragraph::new(Span::styled(text, theme::dim())).alignment(Alignment::Right),
                Rect {
                    x: area.x + area.width - w,
                    width: w,
                    ..area
                },
            );
        }
    }
}
