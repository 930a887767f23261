//! The event log panel, newest first.

use super::{format, theme};
use crate::state::events::EventKind;
use crate::state::App;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

/// Draws the log into `area`.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let title = Line::from(vec![
        Span::styled(" Events ", theme::title()),
        Span::styled(
            format!(
                "{} panics, {} respawns logged ",
                app.events.panics(),
                app.events.respawns()
            ),
            theme::label(),
        ),
    ]);
    let block = Block::bordered().border_style(theme::border()).title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let events = app.events.newest(inner.height as usize);
    if events.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled(
                "no panics or respawns yet (press 6 for the panic storm)",
                theme::dim(),
            )),
            inner,
        );
        return;
    }
    let many_pools = app.pools.len() > 1;
    let lines: Vec<Line> = events
        .iter()
        .rev()
        .map(|e| {
            let kind_style = match e.kind {
                EventKind::Panic => theme::alarm(),
                EventKind::Respawn => Style::new().fg(Color::Yellow),
                EventKind::Info => Style::new().fg(Color::Cyan),
                EventKind::Warning => Style::new().fg(Color::Red),
            };
            let mut spans = vec![
                Span::styled(format::clock(e.at), theme::dim()),
                Span::raw(" "),
                Span::styled(format!("{:<7}", e.kind.label()), kind_style),
            ];
            let mut who = String::new();
            if many_pools {
                if let Some(pool) = &e.pool {
                    who.push_str(pool);
                    who.push('/');
                }
            }
            if let Some(w) = e.worker {
                who.push_str(&format!("w{w}"));
            }
            spans.push(Span::styled(format!(" {who:<3} "), theme::label()));
            if e.count > 1 && e.kind == EventKind::Panic {
                spans.push(Span::styled(format!("×{} ", e.count), theme::alarm()));
            }
            spans.push(Span::styled(e.message.clone(), theme::value()));
            if e.respawned > 0 {
                let text = if e.respawned == 1 {
                    " → respawned".to_owned()
                } else {
                    format!(" → {} respawns", e.respawned)
                };
                spans.push(Span::styled(text, Style::new().fg(Color::Yellow)));
            }
            Line::from(spans)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}
