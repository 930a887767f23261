//! The help overlay (`?`): keys, load patterns and what the columns mean.

use super::{centered, theme};
use crate::input::BINDINGS;
use crate::pattern::Pattern;
use crate::state::App;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

const COLUMNS: &[(&str, &str)] = &[
    (
        "steal/s ok/s ok%",
        "steal attempts, successes, success ratio",
    ),
    ("stoln/s", "tasks taken by steals (batches count each task)"),
    (
        "join/s fstln/s",
        "joins forked; forks of peers' joins taken and run",
    ),
    (
        "slp/s wake/s noop/s",
        "parks; wakeups that found work / nothing",
    ),
    (
        "resp busy",
        "threads respawned; share of time running tasks",
    ),
];

/// Draws the overlay centred in `area`.
pub fn render(_app: &App, frame: &mut Frame, area: Rect) {
    let mut lines = Vec::new();
    let key = Style::new().fg(Color::Yellow);
    for (keys, what) in BINDINGS {
        lines.push(Line::from(vec![
            Span::styled(format!(" {keys:<16}"), key),
            Span::styled(*what, theme::value()),
        ]));
    }
    let tall = area.height >= 34;
    // The blank line before the patterns gives way first on a short
    // terminal (80x24), so that the footer stays in view.
    let with_blank = lines.len() + 1 + 1 + Pattern::ALL.len() + 2;
    if tall || with_blank < usize::from(area.height) {
        lines.push(Line::raw(""));
    }
    lines.push(Line::from(Span::styled(
        " load patterns (demo)",
        theme::title(),
    )));
    for p in Pattern::ALL {
        lines.push(Line::from(vec![
            Span::styled(format!(" {}  {:<12}", p.key(), p.name()), key),
            Span::styled(p.describe(), theme::value()),
        ]));
    }
    if tall {
        lines.push(Line::raw(""));
        lines.push(Line::from(Span::styled(" columns", theme::title())));
        for (cols, what) in COLUMNS {
            lines.push(Line::from(vec![
                Span::styled(format!(" {cols:<20}"), key),
                Span::styled(*what, theme::value()),
            ]));
        }
    }
    let height = lines.len() as u16 + 2;
    let popup = centered(area, 70, height);
    frame.render_widget(Clear, popup);
    let block = Block::bordered()
        .border_style(Style::new().fg(Color::Yellow))
        .title(Line::from(Span::styled(" Help ", theme::title())))
        .title_bottom(Line::from(Span::styled(
            " ? or Esc to close ",
            theme::dim(),
        )));
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}
