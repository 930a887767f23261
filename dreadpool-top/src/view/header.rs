//! The header: which pool, how big, how long up, how busy; the load or the
//! connection; live or paused.

use super::{format, theme};
use crate::state::{App, Link, Mode};
use ratatui::layout::{Alignment, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// Rows the header takes.
pub const HEIGHT: u16 = 3;

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

    // Line 1: title, pool, threads, uptime, live/paused; help hint right.
    let mut title = vec![Span::styled(
        " dreadpool-top ",
        bar.add_modifier(Modifier::BOLD),
    )];
    match pool {
        Some(p) => {
            title.push(Span::styled(format!("│ pool {} ", p.name), bar));
            title.push(Span::styled(format!("│ {} threads ", p.threads), bar));
            title.push(Span::styled(
                format!("│ up {} ", format::uptime(p.uptime)),
                bar,
            ));
        }
        None => title.push(Span::styled("│ waiting for the first sample ", bar)),
    }
    let live = if app.paused {
        Span::styled(
            " ❚❚ PAUSED ",
            Style::new()
                .bg(Color::Yellow)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD),
        )
    } else {
        Span::styled(
            " ● LIVE ",
            Style::new()
                .bg(Color::Green)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD),
        )
    };
    title.push(live);
    frame.render_widget(
        Paragraph::new(Line::from(title)).style(bar),
        area_row(area, 0),
    );
    if area.width >= 72 {
        frame.render_widget(
            Paragraph::new(Line::from(Span::styled("? help  q quit ", bar)))
                .alignment(Alignment::Right),
            Rect {
                x: area.x + area.width - 16,
                width: 16,
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
            line.push(Span::styled("   1-6 pattern  +/- rate", theme::dim()));
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

fn area_row(area: Rect, row: u16) -> Rect {
    Rect {
        x: area.x,
        y: area.y + row.min(area.height.saturating_sub(1)),
        width: area.width,
        height: u16::from(area.height > row),
    }
}
