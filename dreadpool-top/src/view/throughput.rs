//! The throughput panel (large terminals): pool tasks/s over time, with the
//! busy share and global queue depth as small lines below.

use super::{format, theme};
use crate::state::App;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Sparkline};
use ratatui::Frame;

/// Draws the panel into `area`.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let Some(pool) = app.current() else {
        frame.render_widget(Block::bordered().border_style(theme::border()), area);
        return;
    };
    let h = &pool.history;
    let peak = h.tasks_per_sec.iter().copied().fold(0.0f64, f64::max);
    let title = Line::from(vec![
        Span::styled(" Throughput ", theme::title()),
        Span::styled(
            format!(
                "tasks/s now {} peak {} ",
                format::rate(pool.sample.tasks_per_sec),
                format::rate(peak)
            ),
            theme::label(),
        ),
    ]);
    let block = Block::bordered().border_style(theme::border()).title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [chart, busy, queue] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(inner);
    let w = chart.width as usize;
    let data: Vec<u64> = h
        .tasks_per_sec
        .tail(w)
        .into_iter()
        .map(|v| v.max(0.0).round() as u64)
        .collect();
    frame.render_widget(
        Sparkline::default()
            .data(&data)
            .max(peak.max(1.0).round() as u64)
            .style(Style::new().fg(Color::Green)),
        chart,
    );
    let label_w = 10;
    let spark_w = (inner.width as usize).saturating_sub(label_w + 6);
    for (row, label, values, now, color) in [
        (
            busy,
            "busy",
            h.busy.tail(spark_w),
            format::percent(Some(pool.sample.busy_ratio)),
            Color::Cyan,
        ),
        (
            queue,
            "global q",
            h.global_queue.tail(spark_w),
            format::count(pool.sample.global_queue_depth as u64),
            Color::Blue,
        ),
    ] {
        let line = Line::from(vec![
            Span::styled(format!("{label:<label_w$}"), theme::label()),
            Span::styled(format::sparkline(&values, spark_w), Style::new().fg(color)),
            Span::styled(format!("{now:>6}"), theme::value()),
        ]);
        frame.render_widget(Paragraph::new(line), row);
    }
}
