//! The view: draws the model, never changes it. One module per panel; this
//! one decides the layout for the terminal's size.
//!
//! At 80x24 the dashboard shows the header, the worker table, a compact
//! latency panel beside the steal matrix, the event log and the key line.
//! From 120 columns and 36 rows up it adds a throughput chart and a latency
//! chart; below 60x16 it keeps the header and the worker table only. The
//! timeline (from the flight recorder) takes the room above the event log
//! when there is enough for a row per worker and three rows of log (from
//! about 100x30 with 4 workers); otherwise it collapses away. The detail
//! (Enter) and the waits (`w`) are drawn over the body.

pub mod detail;
pub mod events;
pub mod footer;
pub mod format;
pub mod header;
pub mod help;
pub mod latency;
pub mod steals;
pub mod theme;
pub mod throughput;
pub mod timeline;
pub mod waits;
pub mod workers;

use crate::state::App;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::Frame;

/// Draws the whole dashboard.
pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    let [top, body, bottom] = Layout::vertical([
        Constraint::Length(header::HEIGHT),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(area);
    header::render(app, frame, top);
    footer::render(app, frame, bottom);
    render_body(app, frame, body);
    if app.waits_open {
        waits::render(app, frame, body);
    }
    if app.detail_open {
        detail::render(app, frame, body);
    }
    if app.show_help {
        help::render(app, frame, area);
    }
}

fn render_body(app: &App, frame: &mut Frame, body: Rect) {
    let threads = app.current().map_or(0, |p| p.sample.workers.len()) as u16;
    let wide = body.width >= 120 && body.height >= 32;
    let small = body.width < 60 || body.height < 14;
    if small {
        workers::render(app, frame, body);
        return;
    }
    // The table takes what it needs, up to about half the body; the panels
    // below get at least 8 rows (latency, steals) and 3 (events).
    let table_want = threads + 3;
    let table_max = (body.height.saturating_sub(11)).max(body.height / 2);
    let table_h = table_want.min(table_max).max(4);
    let [table, rest] =
        Layout::vertical([Constraint::Length(table_h), Constraint::Min(0)]).areas(body);
    workers::render(app, frame, table);

    if wide {
        let middle_h = (rest.height * 11 / 20).max(latency::WIDE_MIN_HEIGHT);
        let [middle, lower] =
            Layout::vertical([Constraint::Length(middle_h), Constraint::Min(0)]).areas(rest);
        let steals_w = steals::width_for(threads, middle.width / 2);
        let [lat, st] =
            Layout::horizontal([Constraint::Min(0), Constraint::Length(steals_w)]).areas(middle);
        latency::render(app, frame, lat, true);
        steals::render(app, frame, st);
        // The charts below keep 8 rows.
        let lower = render_timeline(app, frame, lower, 8);
        let [tp, ev] = Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
            .areas(lower);
        throughput::render(app, frame, tp);
        events::render(app, frame, ev);
    } else {
        let middle_want = latency::COMPACT_HEIGHT.max(threads + 3);
        let middle_h = middle_want.min(rest.height.saturating_sub(3)).max(3);
        let [middle, lower] =
            Layout::vertical([Constraint::Length(middle_h), Constraint::Min(0)]).areas(rest);
        let steals_w = steals::width_for(threads, middle.width * 2 / 5);
        let [lat, st] =
            Layout::horizontal([Constraint::Min(0), Constraint::Length(steals_w)]).areas(middle);
        latency::render(app, frame, lat, false);
        steals::render(app, frame, st);
        let lower = render_timeline(app, frame, lower, 3);
        events::render(app, frame, lower);
    }
}

/// Draws the shown pool's timeline at the top of `area` if there is one and
/// it fits with `keep` rows to spare; returns the rest of `area`.
fn render_timeline(app: &App, frame: &mut Frame, area: Rect, keep: u16) -> Rect {
    let Some(line) = app.timeline() else {
        return area;
    };
    let workers = app.current().map_or(0, |p| p.sample.workers.len());
    let height = timeline::height(workers.max(line.workers()));
    if area.height < height + keep {
        return area;
    }
    let [top, rest] =
        Layout::vertical([Constraint::Length(height), Constraint::Min(0)]).areas(area);
    timeline::render(app, line, frame, top);
    rest
}

/// A rectangle of at most `width` x `height` centred in `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}
