//! The worker detail view (Enter): one worker's rates and totals, its
//! recent throughput and busy share, whom it stole from and who stole from
//! it, and its latency.

use super::{centered, format, theme};
use crate::state::App;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Sparkline};
use ratatui::Frame;

fn row(label: &str, rate: String, total: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{label:<14}"), theme::label()),
        Span::styled(format!("{rate:>8}"), theme::value()),
        Span::styled(format!("{total:>10}"), theme::dim()),
    ])
}

/// Draws the detail popup over `area`.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let (Some(pool), Some(w)) = (app.current(), app.selected()) else {
        return;
    };
    let popup = centered(area, 96, 23);
    frame.render_widget(Clear, popup);
    let state = w.state.map_or("?", |s| s.as_str());
    let title = Line::from(vec![
        Span::styled(
            format!(" {}-{} ", pool.sample.name, w.index),
            theme::title(),
        ),
        Span::styled(format!("● {state} "), theme::state(w.state)),
        Span::styled("Esc back ", theme::dim()),
    ]);
    let block = Block::bordered()
        .border_style(Style::new().fg(Color::Cyan))
        .title(title);
    let inner = block.inner(popup);
    frame.render_widget(block, popup);

    let two = inner.width >= 70;
    let (left, right) = if two {
        let [l, r] = Layout::horizontal([Constraint::Length(34), Constraint::Min(0)]).areas(inner);
        (l, r)
    } else {
        (inner, Rect::default())
    };
    let t = &w.totals;
    // (line, drop order: on a short terminal, higher goes first)
    let mut lines: Vec<(Line<'static>, u8)> = vec![
        (
            Line::from(vec![
                Span::styled(format!("{:<14}", ""), theme::label()),
                Span::styled(format!("{:>8}", "per s"), theme::label()),
                Span::styled(format!("{:>10}", "total"), theme::label()),
            ]),
            0,
        ),
        (
            row(
                "tasks run",
                format::rate(w.tasks_per_sec),
                format::count(t.tasks_run),
            ),
            0,
        ),
        (
            row(
                "steal attempts",
                format::rate(w.steals_attempted_per_sec),
                format::count(t.steals_attempted),
            ),
            0,
        ),
        (
            row(
                "steals ok",
                format::rate(w.steals_succeeded_per_sec),
                format::count(t.steals_succeeded),
            ),
            0,
        ),
        (
            row(
                "tasks stolen",
                format::rate(w.tasks_stolen_per_sec),
                format::count(t.tasks_stolen),
            ),
            0,
        ),
        (
            row(
                "joins",
                format::rate(w.joins_per_sec),
                format::count(t.joins),
            ),
            0,
        ),
        (
            row(
                "forks shared",
                format::rate(w.forks_shared_per_sec),
                format::count(t.forks_shared),
            ),
            1,
        ),
        (
            row(
                "forks stolen",
                format::rate(w.forks_stolen_per_sec),
                format::count(t.forks_stolen),
            ),
            0,
        ),
        (
            row(
                "sleeps",
                format::rate(w.sleeps_per_sec),
                format::count(t.sleeps),
            ),
            0,
        ),
        (
            row(
                "wakeups",
                format::rate(w.wakeups_per_sec),
                format::count(t.wakeups),
            ),
            0,
        ),
        (
            row(
                "noop wakeups",
                format::rate(w.noop_wakeups_per_sec),
                format::count(t.noop_wakeups),
            ),
            0,
        ),
        (
            row(
                "sleep cancels",
                format::rate(w.sleeps_cancelled_per_sec),
                format::count(t.sleeps_cancelled),
            ),
            1,
        ),
        (row("respawns", String::new(), format::count(t.respawns)), 0),
        (row("panics", String::new(), format::count(t.panics)), 0),
        (
            row(
                "local queue",
                format::count(w.local_queue_depth as u64),
                String::new(),
            ),
            0,
        ),
        (
            row("busy", format::percent(Some(w.busy_ratio)), String::new()),
            0,
        ),
        (
            row(
                "steal success",
                format::percent(w.steal_success_ratio),
                String::new(),
            ),
            0,
        ),
        (Line::raw(""), 2),
        (
            Line::from(Span::styled("latency   p50    p99    max", theme::label())),
            0,
        ),
    ];
    for (label, q) in [("sched", &w.schedule_delay), ("run", &w.run_time)] {
        lines.push((
            Line::from(vec![
                Span::styled(format!("{label:<6}"), theme::label()),
                Span::styled(
                    format!(
                        "{:>7}{:>7}{:>7}",
                        format::latency(q.p50),
                        format::latency(q.p99),
                        format::latency(q.max)
                    ),
                    theme::value(),
                ),
            ]),
            0,
        ));
    }
    // At 80x24 the blank line, the sleep cancels and the forks shared (the
    // table's columns are joins and stolen forks) give way, so that the
    // latency stays.
    while lines.len() > usize::from(left.height) {
        let Some(pos) = lines
            .iter()
            .enumerate()
            .filter(|(_, (_, drop))| *drop > 0)
            .max_by_key(|(_, (_, drop))| *drop)
            .map(|(i, _)| i)
        else {
            break;
        };
        lines.remove(pos);
    }
    let lines: Vec<Line> = lines.into_iter().map(|(line, _)| line).collect();
    frame.render_widget(Paragraph::new(lines), left);
    if !two {
        return;
    }

    let [spark_t, spark_b, busy_t, busy_b, from, by] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(5),
        Constraint::Length(1),
        Constraint::Length(3),
        Constraint::Length(2),
        Constraint::Min(2),
    ])
    .areas(right);
    let h = &pool.history;
    let tasks = h
        .worker_tasks
        .get(w.index)
        .map(|r| r.tail(right.width as usize))
        .unwrap_or_default();
    let peak = tasks.iter().copied().fold(0.0f64, f64::max);
    frame.render_widget(
        Paragraph::new(Span::styled(
            format!(
                "tasks/s  now {}  peak {}",
                format::rate(w.tasks_per_sec),
                format::rate(peak)
            ),
            theme::label(),
        )),
        spark_t,
    );
    let data: Vec<u64> = tasks.iter().map(|v| v.round() as u64).collect();
    frame.render_widget(
        Sparkline::default()
            .data(&data)
            .style(Style::new().fg(Color::Green)),
        spark_b,
    );
    let busy: Vec<u64> = h
        .worker_busy
        .get(w.index)
        .map(|r| r.tail(right.width as usize))
        .unwrap_or_default()
        .iter()
        .map(|v| (v * 1000.0).round() as u64)
        .collect();
    let busy_peak = busy.iter().copied().max().unwrap_or(0);
    frame.render_widget(
        Paragraph::new(Span::styled(
            format!(
                "busy share  now {}  peak {}",
                format::percent(Some(w.busy_ratio)),
                format::percent(Some(busy_peak as f64 / 1000.0))
            ),
            theme::label(),
        )),
        busy_t,
    );
    frame.render_widget(
        Sparkline::default()
            .data(&busy)
            .style(Style::new().fg(Color::Cyan)),
        busy_b,
    );

    let max = pool.sample.max_steal_cell();
    let mut stole = vec![Span::styled("stole from  ", theme::label())];
    let mut robbed = vec![Span::styled("stolen by   ", theme::label())];
    for other in &pool.sample.workers {
        if other.index == w.index {
            continue;
        }
        let taken = w.stolen_from.get(other.index).copied().unwrap_or(0);
        stole.push(Span::styled(
            format!(" w{}:{} ", other.index, format::count(taken)),
            theme::heat(taken, max),
        ));
        let lost = other.stolen_from.get(w.index).copied().unwrap_or(0);
        robbed.push(Span::styled(
            format!(" w{}:{} ", other.index, format::count(lost)),
            theme::heat(lost, max),
        ));
    }
    frame.render_widget(
        Paragraph::new(Line::from(stole)).wrap(ratatui::widgets::Wrap { trim: false }),
        from,
    );
    frame.render_widget(
        Paragraph::new(Line::from(robbed)).wrap(ratatui::widgets::Wrap { trim: false }),
        by,
    );
}
