//! The timeline panel: each worker's recent seconds as a strip of its
//! states, from the flight recorder, one cell per [`CELL`], the newest on
//! the right: how busy it was, what it did when idle, where it stole and
//! where it respawned.

use super::theme;
use crate::state::sample::WorkerStatus;
use crate::state::timeline::{Cell, Timeline};
use crate::state::App;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;
use std::time::Duration;

/// The time one cell covers.
pub const CELL: Duration = Duration::from_millis(100);

/// The panel's height for `workers` workers (one row each, and borders).
pub fn height(workers: usize) -> u16 {
    u16::try_from(workers).unwrap_or(u16::MAX).saturating_add(2)
}

/// What marks a cell in which the worker stole: its glyph in this colour.
pub const STOLE: Color = Color::Magenta;

/// The glyph and style of a cell: a block as tall as the share of the cell
/// the worker spent running (green), else what it did instead (`▒`
/// searching, `·` sleeping); magenta if it stole in the cell (steals are
/// too frequent under load for a glyph of their own: it would hide the
/// state); `✖` for a panic or respawn.
pub fn glyph(cell: Cell) -> (char, Style) {
    if cell.respawn || cell.state == Some(WorkerStatus::Respawning) {
        let alarm = Style::new().fg(Color::Red).add_modifier(Modifier::BOLD);
        return ('✖', alarm);
    }
    const BLOCKS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let (symbol, style) = if cell.running > 0 {
        (
            BLOCKS[usize::from(cell.running.min(8))],
            theme::state(Some(WorkerStatus::Running)),
        )
    } else {
        match cell.state {
            Some(WorkerStatus::Searching) => ('▒', theme::state(cell.state)),
            Some(WorkerStatus::Sleeping) => ('·', theme::dim()),
            Some(WorkerStatus::Stopped) => ('_', theme::dim()),
            _ => (' ', Style::new()),
        }
    };
    if cell.steal {
        return (symbol, Style::new().fg(STOLE));
    }
    (symbol, style)
}

/// How a span of time reads in the title: `9.4s`, `1m12s`.
fn span(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 60.0 {
        format!("{secs:.1}s")
    } else {
        format!("{}m{:02}s", d.as_secs() / 60, d.as_secs() % 60)
    }
}

/// Draws `timeline` into `area`.
pub fn render(app: &App, timeline: &Timeline, frame: &mut Frame, area: Rect) {
    let label_w = 5u16;
    let cells = usize::from(area.width.saturating_sub(2 + label_w));
    let shown = CELL.saturating_mul(u32::try_from(cells).unwrap_or(u32::MAX));
    let mut title = vec![
        Span::styled(" Timeline ", theme::title()),
        Span::styled(format!("last {} ", span(shown)), theme::label()),
    ];
    for (symbol, what, style) in [
        ("▁▄█", " run ", theme::state(Some(WorkerStatus::Running))),
        ("▒", " search ", theme::state(Some(WorkerStatus::Searching))),
        ("·", " sleep ", theme::dim()),
        ("█", " stole ", Style::new().fg(STOLE)),
        ("✖", " respawn ", theme::alarm()),
    ] {
        title.push(Span::styled(symbol, style));
        title.push(Span::styled(what, theme::label()));
    }
    let block = Block::bordered()
        .border_style(theme::border())
        .title(Line::from(title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if timeline.recorder_off() {
        let text = "the pool's flight recorder is off (RecordLevel::Off)";
        frame.render_widget(Paragraph::new(Span::styled(text, theme::dim())), inner);
        return;
    }
    if timeline.is_empty() {
        let text = "waiting for the flight recorder…";
        frame.render_widget(Paragraph::new(Span::styled(text, theme::dim())), inner);
        return;
    }
    let workers = app.current().map_or(0, |p| p.sample.workers.len());
    let rows = workers.max(timeline.workers());
    let lines: Vec<Line> = (0..rows)
        .take(usize::from(inner.height))
        .map(|worker| {
            let label_style = if worker == app.selected_worker {
                theme::selected()
            } else {
                theme::label()
            };
            let mut spans = vec![Span::styled(format!(" w{worker:<3}"), label_style)];
            // Runs of equal glyphs share a span: fewer cells to style.
            let mut run = String::new();
            let mut run_style = Style::new();
            for cell in timeline.cells(worker, cells, CELL) {
                let (symbol, style) = glyph(cell);
                if style != run_style && !run.is_empty() {
                    spans.push(Span::styled(std::mem::take(&mut run), run_style));
                }
                run_style = style;
                run.push(symbol);
            }
            if !run.is_empty() {
                spans.push(Span::styled(run, run_style));
            }
            Line::from(spans)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}
