//! The steal matrix: who stole how many tasks from whom in the last
//! interval, thief rows by victim columns, as a heatmap.

use super::{format, theme};
use crate::state::App;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

const LABEL: u16 = 4;

/// Cell width for `threads` victims in `inner` columns: numbers when they
/// fit (6 or 5 wide), bare colour (2 or 1 wide) when not.
fn cell_width(threads: u16, inner: u16) -> u16 {
    let room = inner.saturating_sub(LABEL + 6);
    [6, 5, 3, 2, 1]
        .into_iter()
        .find(|&w| threads * w <= room)
        .unwrap_or(1)
}

/// The width the panel wants for `threads` workers, at most `max`.
pub fn width_for(threads: u16, max: u16) -> u16 {
    let cell = cell_width(threads, max.saturating_sub(2));
    (LABEL + threads * cell + 6 + 2).clamp(24, max.max(24))
}

/// Draws the matrix into `area`.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let title = Line::from(vec![
        Span::styled(" Steals ", theme::title()),
        Span::styled("thief↓ victim→ ", theme::label()),
    ]);
    let block = Block::bordered().border_style(theme::border()).title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(pool) = app.current() else {
        return;
    };
    let s = &pool.sample;
    let n = s.workers.len() as u16;
    let cell = cell_width(n, inner.width);
    let cw = cell as usize;
    let max = s.max_steal_cell();
    let numbers = cell >= 3;

    let mut lines = Vec::new();
    let mut head = vec![Span::raw(format!("{:<w$}", "", w = LABEL as usize))];
    for victim in 0..n {
        let text = if numbers || cell >= 2 {
            format!("{:>cw$}", format!("w{victim}"))
        } else {
            format!("{}", victim % 10)
        };
        head.push(Span::styled(
            text.chars()
                .rev()
                .take(cw)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<String>(),
            theme::label(),
        ));
    }
    head.push(Span::styled(format!("{:>6}", "Σ"), theme::label()));
    lines.push(Line::from(head));

    let rows = inner.height.saturating_sub(1) as usize;
    let shown = s.workers.len().min(rows);
    for thief in s.workers.iter().take(shown) {
        let mut spans = vec![Span::styled(
            format!("{:<w$}", format!("w{}", thief.index), w = LABEL as usize),
            theme::label(),
        )];
        for victim in 0..s.workers.len() {
            let v = thief.stolen_from.get(victim).copied().unwrap_or(0);
            let text = if victim == thief.index {
                format!("{:>cw$}", "·")
            } else if numbers {
                let t = if v == 0 {
                    "·".into()
                } else {
                    format::count(v)
                };
                format!("{t:>cw$}")
            } else {
                " ".repeat(cw)
            };
            spans.push(Span::styled(text, theme::heat(v, max)));
        }
        let total: u64 = thief.stolen_from.iter().sum();
        let style = if total == 0 {
            theme::dim()
        } else {
            theme::value()
        };
        spans.push(Span::styled(format!("{:>6}", format::count(total)), style));
        lines.push(Line::from(spans));
    }
    if shown < s.workers.len() && !lines.is_empty() {
        let more = s.workers.len() - shown;
        if let Some(last) = lines.last_mut() {
            *last = Line::from(Span::styled(format!("  … {} more", more + 1), theme::dim()));
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
