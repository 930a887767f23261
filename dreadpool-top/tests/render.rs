//! Render tests: the dashboard drawn with ratatui's `TestBackend` at fixed
//! sizes from seeded, deterministic model inputs (never live pool data).

use dreadpool_top::fixture;
use dreadpool_top::input::Action;
use dreadpool_top::pattern::Pattern;
use dreadpool_top::state::{App, Link, Mode};
use dreadpool_top::view;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::Terminal;
use std::time::Duration;

fn demo(threads: usize, ticks: usize) -> App {
    let mut app = App::new(
        Mode::Demo {
            pattern: Pattern::Steady,
            rate: 2_000,
            seed: 1,
        },
        Duration::from_millis(500),
    );
    for tick in fixture::ticks(42, threads, ticks) {
        app.ingest(tick);
    }
    app.overhead = Some(0.004);
    app
}

fn draw(app: &App, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| view::render(app, frame)).unwrap();
    terminal.backend().buffer().clone()
}

/// The buffer's text, one string per row (trailing spaces kept).
fn text(buffer: &Buffer) -> Vec<String> {
    let area = buffer.area;
    (0..area.height)
        .map(|y| {
            let mut line = String::new();
            let mut x = 0;
            while x < area.width {
                let cell = &buffer[(x, y)];
                line.push_str(cell.symbol());
                x += 1;
            }
            line
        })
        .collect()
}

fn screen(buffer: &Buffer) -> String {
    text(buffer).join("\n")
}

#[test]
fn print_frames() {
    for (w, h) in [(80, 24), (160, 48)] {
        println!("{}", screen(&draw(&demo(4, 40), w, h)));
    }
    let mut app = demo(4, 40);
    app.update(Action::Open);
    println!("{}", screen(&draw(&app, 80, 24)));
    println!("{}", screen(&draw(&app, 160, 48)));
    app.update(Action::ToggleHelp);
    println!("{}", screen(&draw(&app, 80, 24)));
    let _ = Link::Connected;
}
