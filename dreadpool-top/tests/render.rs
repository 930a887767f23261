//! Render tests: the dashboard drawn with ratatui's `TestBackend` at fixed
//! sizes from seeded, deterministic model inputs (never live pool data).

use dreadpool_top::fixture;
use dreadpool_top::input::Action;
use dreadpool_top::pattern::Pattern;
use dreadpool_top::state::{App, Link, Mode, Tick};
use dreadpool_top::view;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Style};
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

/// Compares `buffer`'s text with `tests/golden/NAME.txt`; with
/// `UPDATE_GOLDEN=1` in the environment, writes it instead.
fn golden(name: &str, buffer: &Buffer) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.txt"));
    let got = screen(buffer) + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_GOLDEN=1)", path.display()));
    assert!(
        got == want,
        "{name} differs from {}; got:\n{got}\n(run with UPDATE_GOLDEN=1 to accept)",
        path.display()
    );
}

fn row_with<'a>(lines: &'a [String], needle: &str) -> (usize, &'a String) {
    lines
        .iter()
        .enumerate()
        .find(|(_, l)| l.contains(needle))
        .unwrap_or_else(|| panic!("no row contains {needle:?}:\n{}", lines.join("\n")))
}

/// The style of the first cell of the first occurrence of `needle`.
fn style_of(buffer: &Buffer, needle: &str) -> Style {
    let lines = text(buffer);
    let (y, line) = row_with(&lines, needle);
    let byte = line.find(needle).unwrap();
    let x = line[..byte].chars().count() as u16;
    buffer[(x, y as u16)].style()
}

#[test]
fn frames_are_deterministic() {
    let app = demo(4, 40);
    assert_eq!(draw(&app, 80, 24), draw(&app, 80, 24));
    assert_eq!(draw(&app, 160, 48), draw(&app, 160, 48));
}

#[test]
fn golden_80x24() {
    let buffer = draw(&demo(4, 40), 80, 24);
    golden("demo-80x24", &buffer);
    let lines = text(&buffer);
    assert!(lines[0].contains("pool demo") && lines[0].contains("4 threads"));
    assert!(lines[0].contains("LIVE"));
    assert!(lines[1].contains("tasks/s") && lines[1].contains("respawns"));
    assert!(lines[2].contains("load steady"));
    for i in 0..4 {
        row_with(&lines, &format!(" w{i} "));
    }
    for panel in ["Workers", "Latency", "Steals", "Events"] {
        row_with(&lines, panel);
    }
    row_with(&lines, "q quit");
    for column in [
        "state", "queue", "tasks/s", "trend", "steal/s", "ok%", "stoln/s", "busy",
    ] {
        row_with(&lines, column);
    }
}

#[test]
fn golden_160x48_uses_the_room() {
    let buffer = draw(&demo(4, 40), 160, 48);
    golden("demo-160x48", &buffer);
    let lines = text(&buffer);
    for column in ["ok/s", "wake/s", "noop/s", "resp"] {
        row_with(&lines, column);
    }
    row_with(&lines, "Throughput");
    row_with(&lines, "sched Σ");
    row_with(&lines, "over time: ━ sched p50");
    row_with(&lines, "● running");
}

#[test]
fn states_are_colour_coded() {
    let buffer = draw(&demo(4, 40), 160, 48);
    assert_eq!(style_of(&buffer, "● running").fg, Some(Color::Green));
    assert_eq!(style_of(&buffer, "● searching").fg, Some(Color::Yellow));
    assert_eq!(style_of(&buffer, "● respawning").fg, Some(Color::Red));
}

#[test]
fn the_detail_and_the_help_overlays() {
    let mut app = demo(4, 40);
    app.update(Action::Down);
    app.update(Action::Open);
    let buffer = draw(&app, 80, 24);
    golden("detail-80x24", &buffer);
    let lines = text(&buffer);
    row_with(&lines, "demo-1");
    row_with(&lines, "stole from");
    row_with(&lines, "stolen by");
    row_with(&lines, "respawns");
    row_with(&lines, "Esc back");
    // At 80x24 the rarest rows give way to the latency; a taller terminal
    // shows every row.
    assert!(!lines.iter().any(|l| l.contains("sleep cancels")));
    let tall = draw(&app, 100, 30);
    golden("detail-100x30", &tall);
    let tall = text(&tall);
    row_with(&tall, "sleep cancels");
    row_with(&tall, "forks shared");
    row_with(&tall, "sched");

    app.update(Action::ToggleHelp);
    let buffer = draw(&app, 80, 24);
    golden("help-80x24", &buffer);
    let lines = text(&buffer);
    for (keys, _) in dreadpool_top::input::BINDINGS {
        row_with(&lines, keys);
    }
    for pattern in Pattern::ALL {
        row_with(&lines, pattern.name());
    }
}

#[test]
fn many_workers_scroll_to_the_selection_and_the_matrix_shrinks() {
    let mut app = demo(16, 20);
    app.update(Action::Last);
    let buffer = draw(&app, 80, 24);
    let lines = text(&buffer);
    let (_, row) = row_with(&lines, "w15 ");
    assert!(row.contains('▶'), "the selected worker is shown: {row}");
    let big = draw(&app, 160, 48);
    let lines = text(&big);
    for i in 0..16 {
        row_with(&lines, &format!("w{i} "));
    }
}

#[test]
fn a_tiny_terminal_keeps_the_header_and_the_table() {
    let buffer = draw(&demo(4, 10), 50, 12);
    let lines = text(&buffer);
    row_with(&lines, "Workers");
    row_with(&lines, " w3 ");
    assert!(!lines.iter().any(|l| l.contains("Steals")));
    // Smaller than anything sensible: no panic.
    draw(&demo(4, 10), 10, 3);
    draw(&demo(4, 10), 1, 1);
}

#[test]
fn paused_and_empty_states() {
    let mut app = demo(4, 5);
    app.update(Action::TogglePause);
    let lines = text(&draw(&app, 80, 24));
    assert!(lines[0].contains("PAUSED"), "{}", lines[0]);

    let empty = App::new(
        Mode::Demo {
            pattern: Pattern::Bursty,
            rate: 0,
            seed: 1,
        },
        Duration::from_millis(500),
    );
    let lines = text(&draw(&empty, 80, 24));
    assert!(lines[0].contains("waiting for the first sample"));
    assert!(lines[2].contains("bursty @ off"), "{}", lines[2]);
}

#[test]
fn attached_header_shows_pools_and_the_connection() {
    let mut app = App::new(
        Mode::Attach {
            addr: "/tmp/host.sock".into(),
            link: Link::Connected,
        },
        Duration::from_millis(500),
    );
    let mut ticks = fixture::ticks(5, 3, 3);
    for tick in &mut ticks {
        let mut batch = tick.pools[0].clone();
        batch.name = "batch".into();
        tick.pools.push(batch);
    }
    for tick in ticks {
        app.ingest(tick);
    }
    app.update(Action::NextPool);
    app.set_link(
        Duration::from_secs(5),
        Link::Lost {
            error: "the exporter closed the connection".into(),
            attempts: 1,
        },
    );
    let buffer = draw(&app, 100, 30);
    golden("attach-100x30", &buffer);
    let lines = text(&buffer);
    assert!(lines[0].contains("pool batch"), "{}", lines[0]);
    assert!(lines[0].contains("STALE"), "{}", lines[0]);
    assert!(!lines[0].contains("LIVE"), "{}", lines[0]);
    assert!(lines[2].contains("/tmp/host.sock"));
    assert!(lines[2].contains("connection lost"));
    assert!(lines[2].contains("demo") && lines[2].contains("batch"));
    row_with(&lines, "Tab pool");
    assert!(!lines.iter().any(|l| l.contains("1-7 load")));
}

/// The first row, and the style of the marker's first cell in it.
fn header(app: &App, width: u16, height: u16, marker: &str) -> (String, Style) {
    let buffer = draw(app, width, height);
    let first = text(&buffer).remove(0);
    assert!(first.contains(marker), "no {marker:?} in {first:?}");
    (first, style_of(&buffer, marker))
}

#[test]
fn attached_the_header_marks_frozen_figures_stale_until_the_host_is_back() {
    let mut app = App::new(
        Mode::Attach {
            addr: "/tmp/host.sock".into(),
            link: Link::Connected,
        },
        Duration::from_millis(500),
    );
    let mut ticks = fixture::ticks(5, 4, 4).into_iter();
    let mut last = Duration::ZERO;
    for tick in ticks.by_ref().take(3) {
        last = tick.at;
        app.ingest(tick);
    }
    let (live, style) = header(&app, 80, 24, "● LIVE");
    assert_eq!(style.bg, Some(Color::Green));
    assert!(
        live.contains("pool demo") && live.contains("q quit"),
        "{live}"
    );

    // The host dies: ticks bring the lost link and no samples; the figures
    // stay, marked stale and aging, never under "LIVE".
    let lost = Link::Lost {
        error: "the exporter closed the connection".into(),
        attempts: 1,
    };
    for (after, age) in [(1, "1s"), (12, "12s"), (185, "3m05s")] {
        app.ingest(Tick {
            at: last + Duration::from_secs(after),
            link: Some(lost.clone()),
            ..Tick::default()
        });
        let marker = format!("○ STALE {age}");
        let (stale, style) = header(&app, 80, 24, &marker);
        assert!(!stale.contains("LIVE"), "{stale}");
        assert_eq!(style.bg, Some(Color::Red));
        let lines = text(&draw(&app, 80, 24));
        assert!(
            lines[1].contains("tasks/s"),
            "the figures stay: {}",
            lines[1]
        );
        assert!(lines[2].contains("connection lost"), "{}", lines[2]);
    }
    // Paused as well: both say so.
    app.update(Action::TogglePause);
    let (both, _) = header(&app, 80, 24, "PAUSED");
    assert!(both.contains("STALE") && !both.contains("LIVE"), "{both}");
    app.update(Action::TogglePause);
    // A long pool name on a narrow terminal: the marker stays whole, the
    // hint and the least needed facts give way.
    let (narrow, _) = header(&app, 60, 20, "○ STALE 3m05s");
    assert!(!narrow.contains("q quit"), "{narrow}");

    // The host is back: samples again, and live.
    let mut back = ticks.next().unwrap();
    back.at = last + Duration::from_secs(186);
    back.link = Some(Link::Connected);
    app.ingest(back);
    let (again, _) = header(&app, 80, 24, "● LIVE");
    assert!(!again.contains("STALE"), "{again}");

    // Lost before the first sample: no figures to call stale.
    let mut empty = App::new(
        Mode::Attach {
            addr: "/tmp/host.sock".into(),
            link: Link::Connected,
        },
        Duration::from_millis(500),
    );
    empty.set_link(Duration::from_secs(1), lost);
    let (nothing, _) = header(&empty, 80, 24, "✕ LOST");
    assert!(!nothing.contains("LIVE"), "{nothing}");
}

/// `demo(threads, 40)` with 12 seeded seconds of flight recorder marks.
fn with_timeline(threads: usize) -> App {
    let mut app = demo(threads, 40);
    let at = app.now;
    app.ingest(Tick {
        at,
        timelines: vec![fixture::timeline_chunk(42, threads, 12)],
        ..Tick::default()
    });
    app
}

/// The timeline row of worker `w` (the row in the Timeline panel, below
/// its title), without its label.
fn strip(lines: &[String], w: usize) -> String {
    let (top, _) = row_with(lines, " Timeline ");
    let label = format!(" w{w:<3}");
    let row = lines[top + 1..]
        .iter()
        .find(|l| l.contains(&label))
        .unwrap_or_else(|| panic!("no timeline row for w{w}:\n{}", lines.join("\n")));
    let start = row.find(&label).unwrap() + label.len();
    row[start..].trim_end_matches(['│', ' ']).to_owned()
}

fn longest_run(strip: &str, glyph: char) -> usize {
    let mut best = 0;
    let mut run = 0;
    for c in strip.chars() {
        run = if c == glyph { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

#[test]
fn the_timeline_at_100x32_shows_states_steals_stalls_and_gaps() {
    let app = with_timeline(4);
    let buffer = draw(&app, 100, 32);
    golden("timeline-100x32", &buffer);
    assert_eq!(buffer, draw(&app, 100, 32), "deterministic");
    let lines = text(&buffer);
    let (_, title) = row_with(&lines, " Timeline ");
    // 100 columns: 93 cells of 100 ms.
    assert!(title.contains("last 9.3s"), "{title}");
    for legend in ["▁▄█ run", "▒ search", "· sleep", "█ stole", "✖ respawn"] {
        assert!(title.contains(legend), "{title}");
    }
    let strips: Vec<String> = (0..4).map(|w| strip(&lines, w)).collect();
    for (w, s) in strips.iter().enumerate() {
        assert_eq!(s.chars().count(), 93, "w{w}: {s:?}");
        assert!(s.contains('█') && s.contains('·'), "w{w}: {s}");
    }
    assert!(strips.iter().any(|s| s.contains('▒')), "{strips:?}");
    // Steals colour their cells.
    let (title_at, _) = row_with(&lines, " Timeline ");
    let stole = (title_at + 1..title_at + 5)
        .any(|y| (6..99).any(|x| buffer[(x, y as u16)].style().fg == Some(Color::Magenta)));
    assert!(stole, "no cell marked as a steal");
    // Worker 0's 1.5 s stall on one task: a solid run of 100 ms cells.
    assert!(longest_run(&strips[0], '█') >= 14, "{}", strips[0]);
    // The last worker's 3 s idle gap.
    assert!(longest_run(&strips[3], '·') >= 25, "{}", strips[3]);
    // Worker 1 respawned 1.2 s before the end: 12 cells from the right.
    let respawn = strips[1].chars().rev().position(|c| c == '✖');
    assert!(
        respawn.is_some_and(|p| (11..=13).contains(&p)),
        "{}",
        strips[1]
    );
    // Colours follow the worker table's.
    assert_eq!(style_of(&buffer, "▒").fg, Some(Color::Yellow));
    let y = title_at + 1;
    let green = (6..99).any(|x| {
        let cell = &buffer[(x, y as u16)];
        cell.symbol() == "█" && cell.style().fg == Some(Color::Green)
    });
    assert!(green, "no running cell in green");
    // The event log keeps its place below.
    let (events_at, _) = row_with(&lines, " Events ");
    let (timeline_at, _) = row_with(&lines, " Timeline ");
    assert!(events_at > timeline_at + 4);
}

#[test]
fn the_timeline_collapses_at_80x24_and_without_a_recorder() {
    let app = with_timeline(4);
    let lines = text(&draw(&app, 80, 24));
    assert!(
        !lines.iter().any(|l| l.contains("Timeline")),
        "{}",
        lines.join("\n")
    );
    row_with(&lines, " Events ");
    row_with(&lines, " w3 ");
    // Wide terminals have room beside the charts.
    let lines = text(&draw(&app, 160, 48));
    row_with(&lines, " Timeline ");
    row_with(&lines, "Throughput");
    // No recorder data for the pool: no panel, the frame as before.
    assert_eq!(draw(&demo(4, 40), 100, 32), {
        let mut plain = demo(4, 40);
        plain.timelines.clear();
        draw(&plain, 100, 32)
    });
    assert!(!text(&draw(&demo(4, 40), 100, 32))
        .iter()
        .any(|l| l.contains("Timeline")));
    // A pool recording nothing says so.
    let mut off = demo(4, 40);
    let at = off.now;
    off.ingest(Tick {
        at,
        timelines: vec![dreadpool_top::state::timeline::TimelineChunk {
            pool: "demo".into(),
            workers: 4,
            recorder_off: true,
            ..Default::default()
        }],
        ..Tick::default()
    });
    row_with(&text(&draw(&off, 100, 32)), "flight recorder is off");
}

#[test]
fn the_r_key_asks_to_save_the_shown_pool_and_the_outcome_shows_in_the_footer() {
    use dreadpool_top::state::Command;
    let mut app = demo(4, 5);
    assert_eq!(
        app.update(Action::SaveRecording),
        Some(Command::SaveRecording { pool: 0 })
    );
    let lines = text(&draw(&app, 100, 32));
    assert!(lines[31].contains("recording pool demo"), "{}", lines[31]);
    let at = app.now;
    app.ingest(Tick {
        at,
        notes: vec!["recording of demo (12 events) saved to /tmp/x.perfetto-trace".into()],
        ..Tick::default()
    });
    let lines = text(&draw(&app, 100, 32));
    assert!(
        lines[31].contains("saved to /tmp/x.perfetto-trace"),
        "{}",
        lines[31]
    );
    row_with(&lines, "INFO");
}

/// A fixed explanation of the shown pool: a wait of each kind of cause.
fn waits_chunk(pool: &str) -> dreadpool_top::state::waits::WaitsChunk {
    use dreadpool_top::state::waits::{CauseRow, WaitRow, Waits, WaitsChunk};
    let row = |task, ms, ran_on, queue: &str, cause, details: &str, site: &str| WaitRow {
        task,
        delay: Duration::from_micros(ms),
        ran_on,
        queue: queue.into(),
        cause,
        details: details.into(),
        site: site.into(),
    };
    let cause = |cause, waits, total_ms, p99_ms| CauseRow {
        cause,
        waits,
        total: Duration::from_micros(total_ms),
        p99: Duration::from_micros(p99_ms),
    };
    WaitsChunk {
        pool: pool.into(),
        waits: Waits::Explained {
            worst: vec![
                row(
                    812,
                    48_200,
                    2,
                    "local w2",
                    "behind a long task",
                    "w2 ran one task 47.9ms, 3 ahead",
                    "server.rs:214",
                ),
                row(
                    77,
                    9_400,
                    0,
                    "global",
                    "no progress",
                    "w0 silent 9.1ms (descheduled?)",
                    "main.rs:41",
                ),
                row(
                    1_090,
                    3_100,
                    1,
                    "global",
                    "global queue starved",
                    "14 steals, no global pull",
                    "",
                ),
                row(
                    5,
                    850,
                    3,
                    "global",
                    "pool asleep",
                    "the wake took 610.0us",
                    "main.rs:41",
                ),
            ],
            by_cause: vec![
                cause("behind a long task", 12, 190_000, 48_200),
                cause("pool asleep", 2_310, 41_500, 90),
                cause("no progress", 3, 17_800, 9_400),
                cause("global queue starved", 9, 11_200, 3_100),
            ],
            tasks: 2_334,
            spawns_missing: 41,
        },
    }
}

#[test]
fn the_waits_view_lists_the_longest_waits_with_causes_and_the_totals() {
    let mut app = demo(4, 10);
    app.update(Action::ToggleWaits);
    // Open, before any recording is explained: it says it is working.
    let lines = text(&draw(&app, 100, 30));
    row_with(&lines, "explaining the flight recorder's window");
    row_with(&lines, " w Esc close waits ");

    let at = app.now;
    app.ingest(Tick {
        at,
        waits: vec![waits_chunk("demo")],
        ..Tick::default()
    });
    let buffer = draw(&app, 100, 30);
    golden("waits-100x30", &buffer);
    let lines = text(&buffer);
    row_with(&lines, "Waits demo longest of 2334 tasks");
    // Longest first, each with its worker, cause and the cause's figures.
    let (first, row) = row_with(&lines, "48.2ms");
    assert!(
        row.contains("w2") && row.contains("behind a long task") && row.contains("47.9ms"),
        "{row}"
    );
    // And its spawn site, last.
    assert!(
        row.trim_end_matches('│')
            .trim_end()
            .ends_with("server.rs:214"),
        "{row}"
    );
    let (second, row) = row_with(&lines, "9.4ms");
    assert!(first < second && row.contains("no progress"), "{row}");
    // The totals below, and the waits whose spawn left the rings.
    let (totals, row) = row_with(&lines, "by cause");
    assert!(totals > second && row.contains("41 whose spawn"), "{row}");
    let (at, row) = row_with(&lines, "2310");
    assert!(
        at > totals && row.contains("pool asleep") && row.contains("41.5ms"),
        "{row}"
    );
    // Host-side causes stand out.
    assert_eq!(style_of(&buffer, "no progress").fg, Some(Color::Red));

    // At 80x24 the list shrinks but the totals keep their rows.
    let lines = text(&draw(&app, 80, 24));
    row_with(&lines, "48.2ms");
    row_with(&lines, "  global queue starved");

    // w again closes it; reopened, nothing old shows.
    app.update(Action::ToggleWaits);
    assert!(!screen(&draw(&app, 100, 30)).contains(" Waits "));
    app.update(Action::ToggleWaits);
    assert!(screen(&draw(&app, 100, 30)).contains("explaining the flight recorder's window"));
}

#[test]
fn the_waits_view_says_when_the_pool_records_below_tasks_level_or_not_at_all() {
    use dreadpool_top::state::waits::{Waits, WaitsChunk};
    let mut app = demo(4, 10);
    app.update(Action::ToggleWaits);
    let at = app.now;
    app.ingest(Tick {
        at,
        waits: vec![WaitsChunk {
            pool: "demo".into(),
            waits: Waits::NeedsTasksLevel {
                level: "Scheduler".into(),
            },
        }],
        ..Tick::default()
    });
    let lines = text(&draw(&app, 100, 30));
    row_with(&lines, "the pool records at Scheduler level");
    row_with(&lines, "needs RecordLevel::Tasks");
    row_with(&lines, "set_record_level");

    // A host built without the recorder: said, rather than waited for.
    app.ingest(Tick {
        at,
        waits: vec![WaitsChunk {
            pool: "demo".into(),
            waits: Waits::NoRecorder,
        }],
        ..Tick::default()
    });
    let lines = text(&draw(&app, 100, 30));
    row_with(&lines, "the host has no flight recorder");
}
