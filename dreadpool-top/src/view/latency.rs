//! The latency panel: schedule delay (spawn to start) and run time
//! quantiles, and how their tails moved over time.

use super::{format, theme};
use crate::state::sample::Quantiles;
use crate::state::App;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType, Paragraph};
use ratatui::Frame;
use std::time::Duration;

/// Rows the compact panel wants.
pub const COMPACT_HEIGHT: u16 = 7;
/// Rows below which the wide panel has no room for its chart.
pub const WIDE_MIN_HEIGHT: u16 = 12;

const SCHED: Color = Color::Yellow;
const RUN: Color = Color::Magenta;
const SCHED_P50: Color = Color::Indexed(136);

fn quantile_line(label: &str, color: Color, q: &Quantiles, col: usize) -> Line<'static> {
    let mut spans = vec![Span::styled(format!("{label:<7}"), Style::new().fg(color))];
    for d in [q.p50, q.p90, q.p99, q.p999, q.max] {
        let style = if d.is_zero() {
            theme::dim()
        } else {
            theme::value()
        };
        spans.push(Span::styled(format!("{:>col$}", format::latency(d)), style));
    }
    Line::from(spans)
}

fn header_line(col: usize) -> Line<'static> {
    let mut text = format!("{:<7}", "");
    for name in ["p50", "p90", "p99", "p99.9", "max"] {
        text.push_str(&format!("{name:>col$}"));
    }
    Line::from(Span::styled(text, theme::label()))
}

fn micros(values: impl Iterator<Item = Duration>) -> Vec<f64> {
    values.map(|d| d.as_secs_f64() * 1e6).collect()
}

/// Draws the panel; `wide` adds cumulative rows and a chart.
pub fn render(app: &App, frame: &mut Frame, area: Rect, wide: bool) {
    let title = Line::from(vec![
        Span::styled(" Latency ", theme::title()),
        Span::styled("last interval ", theme::label()),
    ]);
    let block = Block::bordered().border_style(theme::border()).title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(pool) = app.current() else {
        return;
    };
    let s = &pool.sample;
    let col = (usize::from(inner.width).saturating_sub(7) / 5).clamp(6, 8);
    let mut lines = vec![
        header_line(col),
        quantile_line("sched", SCHED, &s.schedule_delay, col),
        quantile_line("run", RUN, &s.run_time, col),
    ];
    if wide {
        lines.push(quantile_line(
            "sched Σ",
            SCHED,
            &s.schedule_delay_total,
            col,
        ));
        lines.push(quantile_line("run Σ", RUN, &s.run_time_total, col));
    }
    let table_h = lines.len() as u16;
    let [top, rest] =
        Layout::vertical([Constraint::Length(table_h), Constraint::Min(0)]).areas(inner);
    frame.render_widget(Paragraph::new(lines), top);

    let h = &pool.history;
    if wide && rest.height >= 6 {
        render_chart(app, frame, rest);
        return;
    }
    // Compact: one sparkline per tail.
    let spark_w = rest.width.saturating_sub(10) as usize;
    let mut lines = Vec::new();
    for (label, color, ring) in [
        ("sched p99", SCHED, &h.sched_p99),
        ("run p99", RUN, &h.run_p99),
    ] {
        let values = micros(ring.iter().copied());
        lines.push(Line::from(vec![
            Span::styled(format!("{label:<10}"), theme::label()),
            Span::styled(format::sparkline(&values, spark_w), Style::new().fg(color)),
        ]));
    }
    frame.render_widget(Paragraph::new(lines), rest);
}

fn render_chart(app: &App, frame: &mut Frame, area: Rect) {
    let Some(pool) = app.current() else {
        return;
    };
    let h = &pool.history;
    let points = |ring: &crate::state::history::Ring<Duration>| -> Vec<(f64, f64)> {
        ring.iter()
            .enumerate()
            .map(|(i, d)| (i as f64, d.as_secs_f64() * 1e6))
            .collect()
    };
    let sched99 = points(&h.sched_p99);
    let sched50 = points(&h.sched_p50);
    let run99 = points(&h.run_p99);
    let n = sched99.len().max(2) as f64;
    let max = sched99
        .iter()
        .chain(run99.iter())
        .map(|p| p.1)
        .fold(1.0f64, f64::max)
        * 1.1;
    let span = app.refresh.mul_f64(n - 1.0);
    let datasets = vec![
        Dataset::default()
            .name("sched p50")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::new().fg(SCHED_P50))
            .data(&sched50),
        Dataset::default()
            .name("sched p99")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::new().fg(SCHED))
            .data(&sched99),
        Dataset::default()
            .name("run p99")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::new().fg(RUN))
            .data(&run99),
    ];
    let chart = Chart::new(datasets)
        .x_axis(
            Axis::default()
                .bounds([0.0, n - 1.0])
                .style(theme::dim())
                .labels([Span::raw(format!("-{}s", span.as_secs())), Span::raw("now")]),
        )
        .y_axis(
            Axis::default()
                .bounds([0.0, max])
                .style(theme::dim())
                .labels([
                    Span::raw("0"),
                    Span::raw(format::latency(Duration::from_secs_f64(max / 1e6))),
                ]),
        )
        .legend_position(None);
    let [key, plot] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    let legend = Line::from(vec![
        Span::styled("over time: ", theme::label()),
        Span::styled("━ sched p50  ", Style::new().fg(SCHED_P50)),
        Span::styled("━ sched p99  ", Style::new().fg(SCHED)),
        Span::styled("━ run p99", Style::new().fg(RUN)),
    ]);
    frame.render_widget(Paragraph::new(legend), key);
    frame.render_widget(chart, plot);
}
