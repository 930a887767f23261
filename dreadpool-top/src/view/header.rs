//! The header: which pool, how big, how long up, how busy; the load or the
//! connection; live, paused or stale.

use super::{format, theme};
use crate::state::{App, Freshness, Link, Mode};
use ratatui::layout::{Alignment, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// Rows the header takes.
pub const HEIGHT: u16 = 3;

/// Columns of the help hint at the right of the first line.
const HINT_WIDTH: u16 = 16;

fn pair<'a>(label: &'a str, value: String, style: Style) -> [Span<'a>; 3] {
    [
        Span::styled(label, theme::label()),
        Span::styled(value, style),
        Span::raw("  "),
    ]
}

/// Draws the header into `area` (3 rows).
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let bar = Style::new().bg(Color::Indexed(24)).fg(Color::White);
    let pool = app.current().map(|p| &p.sample);

    // Line 1: title, pool, threads, uptime, the markers; help hint right.
    let mut title = vec![Span::styled(
        " dreadpool-top ",
        bar.add_modifier(Modifier::BOLD),
    )];
    // (span, drop order: higher goes first when the line is too long)
    let mut facts: Vec<(Span, u8)> = Vec::new();
    match pool {
        Some(p) => {
            facts.push((Span::styled(format!("│ pool {} ", p.name), bar), 0));
            facts.push((Span::styled(format!("│ {} threads ", p.threads), bar), 1));
            facts.push((
                Span::styled(format!("│ up {} ", format::uptime(p.uptime)), bar),
                2,
            ));
        }
        None => facts.push((Span::styled("│ waiting for the first sample ", bar), 0)),
    }
    let markers = markers(app);
    let width = |spans: &[Span]| spans.iter().map(Span::width).sum::<usize>();
    let fixed = width(&title) + width(&markers);
    let line_width =
        |facts: &[(Span, u8)]| fixed + facts.iter().map(|(s, _)| s.width()).sum::<usize>();
    // The markers say whether the figures can be trusted: they never give
    // way. The help hint goes first, then the least needed facts.
    let hint =
        area.width >= 72 && line_width(&facts) + usize::from(HINT_WIDTH) <= usize::from(area.width);
    while line_width(&facts) > usize::from(area.width) {
        let Some(pos) = facts
            .iter()
            .enumerate()
            .filter(|(_, f)| f.1 > 0)
            .max_by_key(|(_, f)| f.1)
            .map(|(i, _)| i)
        else {
            break;
        };
        facts.remove(pos);
    }
    title.extend(facts.into_iter().map(|(s, _)| s));
    title.extend(markers);
    frame.render_widget(
        Paragraph::new(Line::from(title)).style(bar),
        area_row(area, 0),
    );
    if hint {
        frame.render_widget(
            Paragraph::new(Line::from(Span::styled("? help  q quit ", bar)))
                .alignment(Alignment::Right),
            Rect {
                x: area.x + area.width - HINT_WIDTH,
                width: HINT_WIDTH,
                ..area_row(area, 0)
            },
        );
    }

    // Line 2: pool totals; on a narrow terminal the least needed go first.
    let mut line = vec![Span::raw(" ")];
    if let Some(p) = pool {
        let alarm = |n: u64| {
            if n > 0 {
                theme::alarm()
            } else {
                theme::value()
            }
        };
        // (label, value, style, drop order: higher goes first)
        let mut pairs = vec![
            ("tasks/s ", format::rate(p.tasks_per_sec), theme::value(), 0),
            ("done ", format::count(p.tasks_run), theme::value(), 0),
            (
                "global ",
                format::count(p.global_queue_depth as u64),
                theme::value(),
                2,
            ),
            ("pending ", format::count(p.pending), theme::value(), 1),
            (
                "busy ",
                format::percent(Some(p.busy_ratio)),
                theme::busy(p.busy_ratio),
                3,
            ),
            ("panics ", format::count(p.panics), alarm(p.panics), 0),
            ("respawns ", format::count(p.respawns), alarm(p.respawns), 0),
        ];
        // Fork-join work, only when there is some (first to give way).
        if p.joins_per_sec > 0.0 {
            pairs.insert(
                4,
                ("joins/s ", format::rate(p.joins_per_sec), theme::value(), 4),
            );
        }
        let width = |pairs: &[(&str, String, Style, u8)]| {
            1 + pairs
                .iter()
                .map(|(l, v, _, _)| l.len() + v.chars().count() + 2)
                .sum::<usize>()
        };
        while width(&pairs) > usize::from(area.width) + 2 {
            let Some(pos) = pairs
                .iter()
                .enumerate()
                .filter(|(_, p)| p.3 > 0)
                .max_by_key(|(_, p)| p.3)
                .map(|(i, _)| i)
            else {
                break;
            };
            pairs.remove(pos);
        }
        for (label, value, style, _) in pairs {
            line.extend(pair(label, value, style));
        }
    }
    frame.render_widget(Paragraph::new(Line::from(line)), area_row(area, 1));

    // Line 3: the load, or the connection and the pools.
    let mut line = vec![Span::raw(" ")];
    match &app.mode {
        Mode::Demo {
            pattern,
            rate,
            seed,
        } => {
            line.push(Span::styled("load ", theme::label()));
            line.push(Span::styled(
                pattern.name(),
                Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD),
            ));
            line.push(Span::styled(" @ ", theme::label()));
            let rate_text = if *rate == 0 {
                "off".to_owned()
            } else {
                format!("{}/s", format::rate(*rate as f64))
            };
            line.push(Span::styled(rate_text, theme::value()));
            line.push(Span::styled(format!("  seed {seed}"), theme::dim()));
            line.push(Span::styled("   1-7 pattern  +/- rate", theme::dim()));
        }
        Mode::Attach { addr, link } => {
            line.push(Span::styled("attached ", theme::label()));
            line.push(Span::styled(addr.clone(), theme::value()));
            line.push(Span::raw(" "));
            line.push(match link {
                Link::Connecting => Span::styled("◌ connecting", Style::new().fg(Color::Yellow)),
                Link::Connected => Span::styled("● connected", Style::new().fg(Color::Green)),
                Link::Lost { attempts, .. } => Span::styled(
                    format!("✖ connection lost, retrying (#{attempts})"),
                    theme::alarm(),
                ),
            });
            if app.pools.len() > 1 {
                line.push(Span::styled("  pools ", theme::label()));
                for (i, p) in app.pools.iter().enumerate() {
                    let style = if i == app.selected_pool {
                        Style::new().fg(Color::Black).bg(Color::Cyan)
                    } else {
                        theme::label()
                    };
                    line.push(Span::styled(format!(" {} ", p.sample.name), style));
                }
                line.push(Span::styled(" (Tab)", theme::dim()));
            }
        }
    }
    frame.render_widget(Paragraph::new(Line::from(line)), area_row(area, 2));
}

/// Whether the figures are live, paused or stale. Stale (attached, the
/// connection lost) shows even while paused: pausing does not bring the
/// host back, and "● LIVE" never stands over frozen figures.
fn markers(app: &App) -> Vec<Span<'static>> {
    let marker = |text: String, bg: Color, fg: Color| {
        Span::styled(
            text,
            Style::new().bg(bg).fg(fg).add_modifier(Modifier::BOLD),
        )
    };
    let mut spans = Vec::new();
    if app.paused {
        spans.push(marker(" ❚❚ PAUSED ".into(), Color::Yellow, Color::Black));
    }
    match app.freshness() {
        Freshness::Stale { age: Some(age) } => spans.push(marker(
            format!(" ○ STALE {} ", format::age(age)),
            Color::Red,
            Color::White,
        )),
        Freshness::Stale { age: None } => {
            spans.push(marker(" ✕ LOST ".into(), Color::Red, Color::White))
        }
        Freshness::Live if !app.paused => {
            spans.push(marker(" ● LIVE ".into(), Color::Green, Color::Black))
        }
        Freshness::Live => {}
    }
    spans
}

fn area_row(area: Rect, row: u16) -> Rect {
    Rect {
        x: area.x,
        y: area.y + row.min(area.height.saturating_sub(1)),
        width: area.width,
        height: u16::from(area.height > row),
    }
}
