//! The worker table: one row per worker, columns dropped from the least
//! important up until the rest fit the width.

use super::{format, theme};
use crate::state::sample::WorkerSample;
use crate::state::{App, PoolHistory, SortKey};
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Row, Table, TableState};
use ratatui::Frame;

/// What a cell is made from.
struct Ctx<'a> {
    worker: &'a WorkerSample,
    history: &'a PoolHistory,
    queue_max: f64,
}

/// One column: its header, width, how expendable it is (higher goes
/// first), the sort key it shows, and how to fill a cell.
struct Column {
    title: &'static str,
    width: u16,
    drop_rank: u8,
    sort: Option<SortKey>,
    cell: fn(&Ctx<'_>, u16) -> Cell<'static>,
}

fn num(text: String, zero: bool) -> Cell<'static> {
    let style = if zero { theme::dim() } else { theme::value() };
    Cell::from(Line::from(Span::styled(text, style)).right_aligned())
}

fn rate_cell(v: f64) -> Cell<'static> {
    num(format::rate(v), v <= 0.0)
}

const COLUMNS: &[Column] = &[
    Column {
        title: "#",
        width: 3,
        drop_rank: 0,
        sort: Some(SortKey::Index),
        cell: |c, _| Cell::from(Line::from(format!("w{}", c.worker.index)).right_aligned()),
    },
    Column {
        title: "state",
        width: 10,
        drop_rank: 0,
        sort: Some(SortKey::State),
        cell: |c, w| {
            let name = c.worker.state.map_or("?", |s| s.as_str());
            let text = if w >= 12 {
                format!("● {name}")
            } else {
                name.to_owned()
            };
            Cell::from(Span::styled(text, theme::state(c.worker.state)))
        },
    },
    Column {
        title: "queue",
        width: 7,
        drop_rank: 4,
        sort: Some(SortKey::Queue),
        cell: |c, w| {
            let depth = c.worker.local_queue_depth;
            let n = format::count(depth as u64);
            let bar_w = (w as usize).saturating_sub(n.len() + 1);
            let bar = format::bar(depth as f64, c.queue_max, bar_w);
            let style = if depth == 0 {
                theme::dim()
            } else {
                theme::value()
            };
            Cell::from(Line::from(vec![
                Span::styled(format!("{n:>w$} ", w = n.len()), style),
                Span::styled(bar, Style::new().fg(ratatui::style::Color::Cyan)),
            ]))
        },
    },
    Column {
        title: "tasks/s",
        width: 7,
        drop_rank: 0,
        sort: Some(SortKey::Tasks),
        cell: |c, _| rate_cell(c.worker.tasks_per_sec),
    },
    Column {
        title: "trend",
        width: 8,
        drop_rank: 9,
        sort: None,
        cell: |c, w| {
            let values: Vec<f64> = c
                .history
                .worker_tasks
                .get(c.worker.index)
                .map(|r| r.tail(w as usize))
                .unwrap_or_default();
            Cell::from(Span::styled(
                format::sparkline(&values, w as usize),
                Style::new().fg(ratatui::style::Color::Green),
            ))
        },
    },
    Column {
        title: "steal/s",
        width: 7,
        drop_rank: 5,
        sort: Some(SortKey::Steals),
        cell: |c, _| rate_cell(c.worker.steals_attempted_per_sec),
    },
    Column {
        title: "ok/s",
        width: 6,
        drop_rank: 12,
        sort: None,
        cell: |c, _| rate_cell(c.worker.steals_succeeded_per_sec),
    },
    Column {
        title: "ok%",
        width: 4,
        drop_rank: 6,
        sort: None,
        cell: |c, _| {
            num(
                format::percent(c.worker.steal_success_ratio),
                c.worker.steal_success_ratio.is_none(),
            )
        },
    },
    Column {
        title: "stoln/s",
        width: 7,
        drop_rank: 7,
        sort: Some(SortKey::Stolen),
        cell: |c, _| rate_cell(c.worker.tasks_stolen_per_sec),
    },
    // Fork-join: joins this worker forked, and forks of its peers' joins
    // that it took and ran (its share of their parallelism).
    Column {
        title: "join/s",
        width: 6,
        drop_rank: 10,
        sort: None,
        cell: |c, _| rate_cell(c.worker.joins_per_sec),
    },
    Column {
        title: "fstln/s",
        width: 7,
        drop_rank: 11,
        sort: None,
        cell: |c, _| rate_cell(c.worker.forks_stolen_per_sec),
    },
    Column {
        title: "slp/s",
        width: 6,
        drop_rank: 8,
        sort: Some(SortKey::Sleeps),
        cell: |c, _| rate_cell(c.worker.sleeps_per_sec),
    },
    Column {
        title: "wake/s",
        width: 6,
        drop_rank: 13,
        sort: None,
        cell: |c, _| rate_cell(c.worker.wakeups_per_sec),
    },
    Column {
        title: "noop/s",
        width: 6,
        drop_rank: 14,
        sort: None,
        cell: |c, _| rate_cell(c.worker.noop_wakeups_per_sec),
    },
    Column {
        title: "resp",
        width: 4,
        drop_rank: 3,
        sort: Some(SortKey::Respawns),
        cell: |c, _| {
            let n = c.worker.totals.respawns;
            if n > 0 {
                Cell::from(
                    Line::from(Span::styled(format::count(n), theme::alarm())).right_aligned(),
                )
            } else {
                num("0".into(), true)
            }
        },
    },
    Column {
        title: "busy",
        width: 4,
        drop_rank: 0,
        sort: Some(SortKey::Busy),
        cell: |c, _| {
            let r = c.worker.busy_ratio;
            Cell::from(
                Line::from(Span::styled(format::percent(Some(r)), theme::busy(r))).right_aligned(),
            )
        },
    },
];

/// The columns that fit `width` (inner width, one space between columns),
/// in display order. The trend column stretches to use spare room.
fn fit(width: u16) -> Vec<(&'static Column, u16)> {
    let mut keep: Vec<&Column> = COLUMNS.iter().collect();
    let total = |cols: &[&Column]| -> u16 {
        cols.iter().map(|c| c.width).sum::<u16>() + cols.len().saturating_sub(1) as u16 + 1
    };
    while total(&keep) > width {
        let Some((pos, _)) = keep
            .iter()
            .enumerate()
            .filter(|(_, c)| c.drop_rank > 0)
            .max_by_key(|(i, c)| (c.drop_rank, *i))
        else {
            break;
        };
        keep.remove(pos);
    }
    // Spare room goes to the trend sparkline first, then to the queue bar.
    let mut spare = width.saturating_sub(total(&keep));
    let has_trend = keep.iter().any(|c| c.title == "trend");
    let mut widths: Vec<(&'static Column, u16)> = keep.into_iter().map(|c| (c, c.width)).collect();
    for (title, cap) in [("state", 2), ("trend", 40), ("queue", 12)] {
        if title == "state" && !has_trend {
            continue;
        }
        if let Some((_, w)) = widths.iter_mut().find(|(c, _)| c.title == title) {
            let extra = spare.min(cap);
            *w += extra;
            spare -= extra;
        }
    }
    widths
}

/// Draws the table into `area`, keeping the selected worker in view.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let sort_mark = if app.descending { "▼" } else { "▲" };
    let title = Line::from(vec![
        Span::styled(" Workers ", theme::title()),
        Span::styled(
            format!("sort: {} {sort_mark} ", app.sort.label()),
            theme::label(),
        ),
    ]);
    let block = Block::bordered().border_style(theme::border()).title(title);
    let Some(pool) = app.current() else {
        frame.render_widget(block, area);
        return;
    };
    let inner_w = area.width.saturating_sub(2);
    let columns = fit(inner_w);
    let header = Row::new(columns.iter().map(|(c, _)| {
        let style = if c.sort == Some(app.sort) {
            theme::title()
        } else {
            theme::label()
        };
        let text = if c.sort == Some(app.sort) {
            format!("{}{sort_mark}", c.title)
        } else {
            c.title.to_owned()
        };
        let line = Line::from(Span::styled(text, style));
        let left = matches!(c.title, "state" | "queue" | "trend");
        Cell::from(if left { line } else { line.right_aligned() })
    }));
    let queue_max = pool
        .sample
        .workers
        .iter()
        .map(|w| w.local_queue_depth)
        .max()
        .unwrap_or(0)
        .max(8) as f64;
    let workers = app.sorted_workers();
    let rows = workers.iter().map(|worker| {
        let ctx = Ctx {
            worker,
            history: &pool.history,
            queue_max,
        };
        Row::new(columns.iter().map(|(c, w)| (c.cell)(&ctx, *w)))
    });
    let widths = columns.iter().map(|(_, w)| Constraint::Length(*w));
    let table = Table::new(rows, widths)
        .header(header)
        .block(block)
        .row_highlight_style(theme::selected())
        .highlight_symbol("▶")
        .highlight_spacing(ratatui::widgets::HighlightSpacing::Always);
    let mut state = TableState::default().with_selected(app.selected_row());
    frame.render_stateful_widget(table, area, &mut state);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_fits_a_wide_table_and_the_core_ones_a_narrow_one() {
        let all = fit(200);
        assert_eq!(all.len(), COLUMNS.len());
        let narrow: Vec<&str> = fit(78).iter().map(|(c, _)| c.title).collect();
        for needed in [
            "#", "state", "queue", "tasks/s", "steal/s", "ok%", "resp", "busy",
        ] {
            assert!(narrow.contains(&needed), "{needed} missing from {narrow:?}");
        }
        for (c, _) in fit(78) {
            assert!(
                !["ok/s", "wake/s", "noop/s", "join/s", "fstln/s"].contains(&c.title),
                "{} kept",
                c.title
            );
        }
        // The fork-join columns come back before the redundant ones, as
        // soon as there is room: join/s first, then the stolen forks.
        let titles = |w: u16| -> Vec<&str> { fit(w).iter().map(|(c, _)| c.title).collect() };
        assert_eq!(fit(78).len() + 1, fit(85).len());
        assert!(titles(85).contains(&"join/s") && !titles(85).contains(&"fstln/s"));
        assert!(titles(93).contains(&"fstln/s") && !titles(93).contains(&"ok/s"));
        // Beside the steal columns, in display order.
        let wide = titles(200);
        let at = |t: &str| wide.iter().position(|&x| x == t).unwrap();
        assert_eq!(at("join/s"), at("stoln/s") + 1);
        assert_eq!(at("fstln/s"), at("join/s") + 1);
        for width in [30, 50, 78, 100, 158, 200] {
            let used: u16 = fit(width).iter().map(|(_, w)| w + 1).sum::<u16>();
            assert!(used <= width, "{used} > {width}");
        }
        let tiny: Vec<&str> = fit(30).iter().map(|(c, _)| c.title).collect();
        assert_eq!(tiny, ["#", "state", "tasks/s", "busy"]);
    }
}
