//! The waits view (`w`): over the body, the shown pool's longest waits
//! (spawn to start) in the flight recorder's current window, each with the
//! worker that ran it, its cause, the cause's figures and where the task
//! was spawned (the last column, cut short on a narrow terminal); below them the
//! totals by cause. Where the pool records below `Tasks` level it says so,
//! and how to change it, rather than show an empty table.

use super::theme;
use crate::state::waits::{short, CauseRow, WaitRow, Waits};
use crate::state::App;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

/// The most cause rows shown (there are eight causes, "unexplained" among
/// them).
const CAUSE_ROWS: u16 = 8;

fn wait_line(rank: usize, wait: &WaitRow) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{:>3} ", rank + 1), theme::dim()),
        Span::styled(format!("{:>8}  ", short(wait.delay)), theme::value()),
        Span::styled(
            format!("{:<7}", format!("w{}", wait.ran_on)),
            theme::label(),
        ),
        Span::styled(format!("{:<10}", wait.queue), theme::dim()),
        Span::styled(format!("{:<21}", wait.cause), cause_style(wait.cause)),
        Span::styled(format!("{:<32}", wait.details), theme::label()),
        Span::styled(wait.site.clone(), theme::dim()),
    ])
}

fn cause_line(total: &CauseRow) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("  {:<22}", total.cause), cause_style(total.cause)),
        Span::styled(format!("{:>8}", total.waits), theme::value()),
        Span::styled(format!("{:>10}", short(total.total)), theme::value()),
        Span::styled(format!("{:>10}", short(total.p99)), theme::value()),
    ])
}

/// Causes that point at the host (descheduled workers, a starved queue)
/// stand out from the ordinary ones (a busy or sleeping pool).
fn cause_style(cause: &str) -> Style {
    match cause {
        "no progress" | "global queue starved" | "unexplained" => theme::alarm(),
        "behind a long task" => Style::new().fg(Color::Yellow),
        _ => Style::new().fg(Color::Cyan),
    }
}

fn header(text: &str) -> Line<'static> {
    Line::from(Span::styled(text.to_owned(), theme::title()))
}

/// Draws the waits panel over `area`.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let name = app.current().map_or("", |p| p.sample.name.as_str());
    let waits = app.waits();
    let mut title = vec![Span::styled(format!(" Waits {name} "), theme::title())];
    if let Some(Waits::Explained { tasks, .. }) = waits {
        title.push(Span::styled(
            format!("longest of {tasks} tasks in the recorder's window "),
            theme::label(),
        ));
    }
    title.push(Span::styled("w / Esc close ", theme::dim()));
    frame.render_widget(Clear, area);
    let block = Block::bordered()
        .border_style(Style::new().fg(Color::Cyan))
        .title(Line::from(title));
    let inner = block.inner(area);
    frame.render_widget(block, area);

    let (worst, by_cause, spawns_missing) = match waits {
        None => {
            let text = "explaining the flight recorder's window…";
            frame.render_widget(Paragraph::new(Span::styled(text, theme::dim())), inner);
            return;
        }
        Some(Waits::NoRecorder) => {
            let text = "the host has no flight recorder (build it with dreadpool's `recorder` \
                        feature): no waits to explain";
            frame.render_widget(Paragraph::new(Span::styled(text, theme::alarm())), inner);
            return;
        }
        Some(Waits::NeedsTasksLevel { level }) => {
            let lines = vec![
                Line::from(Span::styled(
                    format!("the pool records at {level} level: no cause to show"),
                    theme::alarm(),
                )),
                Line::from(Span::styled(
                    "explaining waits needs RecordLevel::Tasks, which links each spawn to its run",
                    theme::label(),
                )),
                Line::from(Span::styled(
                    "(the host sets it with ThreadPool::set_record_level or \
                     ThreadPoolBuilder::with_record_level)",
                    theme::dim(),
                )),
            ];
            frame.render_widget(Paragraph::new(lines), inner);
            return;
        }
        Some(Waits::Explained {
            worst,
            by_cause,
            spawns_missing,
            ..
        }) => (worst, by_cause, *spawns_missing),
    };
    if worst.is_empty() {
        let text = "no task was both spawned and started in the recorder's window yet";
        frame.render_widget(Paragraph::new(Span::styled(text, theme::dim())), inner);
        return;
    }
    let causes_h = (by_cause.len() as u16).min(CAUSE_ROWS) + 2;
    // The totals keep their rows while the list keeps a few of its own.
    let causes_h = if inner.height >= causes_h + 4 {
        causes_h
    } else {
        0
    };
    let [top, bottom] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(causes_h)]).areas(inner);

    let mut lines = vec![header(&format!(
        "{:>3} {:>8}  {:<7}{:<10}{:<21}{:<32}{}",
        "#", "wait", "worker", "queue", "cause", "details", "site"
    ))];
    let room = usize::from(top.height).saturating_sub(1);
    lines.extend(
        worst
            .iter()
            .take(room)
            .enumerate()
            .map(|(i, w)| wait_line(i, w)),
    );
    frame.render_widget(Paragraph::new(lines), top);

    if causes_h > 0 {
        let mut heading = format!(
            "{:<24}{:>8}{:>10}{:>10}",
            "  by cause", "waits", "total", "p99"
        );
        if spawns_missing > 0 {
            heading.push_str(&format!("   ({spawns_missing} whose spawn left the rings)"));
        }
        let mut lines = vec![Line::raw(""), header(&heading)];
        lines.extend(
            by_cause
                .iter()
                .take(usize::from(CAUSE_ROWS))
                .map(cause_line),
        );
        frame.render_widget(Paragraph::new(lines), bottom);
    }
}
