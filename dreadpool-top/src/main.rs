//! `dreadpool-top`: wires the source, the model, the input mapping and the
//! view into a loop. Everything with logic lives in the library.

use clap::Parser;
use dreadpool_core::RecordLevel;
use dreadpool_top::cli::{Cli, Command};
use dreadpool_top::cpu::CpuMeter;
use dreadpool_top::source::{self, Attached, Demo, DemoRecorder, Source};
use dreadpool_top::state::{App, Link, Mode};
use dreadpool_top::{explain, headless, input, term, trace_file, view};
use ratatui::crossterm::event;
use std::io::{self, IsTerminal};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            term::restore();
            eprintln!("dreadpool-top: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), String> {
    if let Some(Command::Explain(args)) = &cli.command {
        let explained = match (&args.path, &args.attach) {
            (Some(path), _) => {
                let recording = trace_file::read(path).map_err(|e| e.to_string())?;
                explain::explain(&recording, 0, args.top)?
            }
            (None, Some(addr)) => explain::attached(addr, args.pool, args.top)?,
            (None, None) => unreachable!("clap requires a path or --attach"),
        };
        if args.json {
            println!("{}", explain::render_json(&explained));
        } else {
            print!("{}", explain::render_text(&explained));
        }
        return Ok(());
    }
    term::install_panic_hook(source::is_demo_panic);
    let (source, mode) = match &cli.attach {
        Some(addr) => (
            Source::Attached(Box::new(Attached::connect(addr, cli.record_dir.clone())?)),
            Mode::Attach {
                addr: addr.clone(),
                link: Link::Connected,
            },
        ),
        None => (
            Source::Demo(Box::new(Demo::start(
                usize::from(cli.threads),
                cli.pattern,
                cli.rate,
                cli.seed,
                demo_recorder(&cli),
            )?)),
            Mode::Demo {
                pattern: cli.pattern,
                rate: cli.rate,
                seed: cli.seed,
            },
        ),
    };
    if cli.headless {
        let duration = cli.duration.unwrap_or(Duration::from_secs(10));
        let mut out = io::stdout().lock();
        let record = cli.record.as_deref();
        let result = match source {
            Source::Demo(demo) => {
                headless::run_demo(*demo, duration, cli.refresh, cli.json, record, &mut out)
            }
            Source::Attached(a) => headless::run_attached(*a, duration, cli.json, record, &mut out),
        };
        return result.map_err(|e| e.to_string());
    }
    if !cli.headless && !io::stdout().is_terminal() {
        return Err(
            "standard output is not a terminal (use --headless --duration D for scripts)".into(),
        );
    }
    let app = App::new(mode, cli.refresh);
    let result = run_tui(app, source, cli.refresh).map_err(|e| format!("terminal error: {e}"));
    result
}

/// How the demo pool records: every task, in full-size rings, when a
/// headless run writes its recording; else the scheduler's events in small
/// rings, for the timeline (`source::DEMO_RECORD_CAPACITY` says why).
fn demo_recorder(cli: &Cli) -> DemoRecorder {
    let mut recorder = DemoRecorder {
        dir: cli.record_dir.clone(),
        timeline: !cli.headless,
        ..DemoRecorder::default()
    };
    if cli.headless && cli.record.is_some() {
        recorder.level = RecordLevel::Tasks;
        recorder.capacity = dreadpool_core::DEFAULT_RECORD_CAPACITY;
    }
    recorder
}

/// Reads terminal events on their own thread. crossterm's reader spins at
/// full CPU, without ever returning, once the terminal hangs up (it retries a
/// read that keeps returning end-of-file); on this thread that cannot stall
/// the main loop, which notices the hang-up (`term::hung_up`) and exits,
/// taking the process and this thread with it.
fn read_input() -> io::Result<mpsc::Receiver<io::Result<event::Event>>> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("dreadpool-top-input".into())
        .spawn(move || loop {
            let ev = event::read();
            let failed = ev.is_err();
            if tx.send(ev).is_err() || failed {
                return;
            }
        })?;
    Ok(rx)
}

/// The loop: draw when something changed, wait for a key until the next
/// sample is due, sample, repeat.
fn run_tui(mut app: App, mut source: Source, refresh: Duration) -> io::Result<()> {
    let signalled = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, Arc::clone(&signalled))?;
    }
    let (mut terminal, guard) = term::enter()?;
    let events = read_input()?;
    let mut meter = CpuMeter::new(Duration::from_secs(2));
    app.ingest(source.tick());
    let mut next_tick = Instant::now() + refresh;
    let mut dirty = true;
    let result = loop {
        if dirty {
            if let Err(e) = terminal.draw(|frame| view::render(&app, frame)) {
                break Err(e);
            }
            dirty = false;
        }
        // Wake at least every 100 ms to notice a signal.
        let wait = next_tick
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(100));
        match events.recv_timeout(wait) {
            Ok(Ok(ev)) => {
                if matches!(ev, event::Event::Resize(..)) {
                    dirty = true;
                }
                if let Some(action) = input::map_event(&ev) {
                    if let Some(command) = app.update(action) {
                        source.apply(command);
                    }
                    dirty = true;
                }
            }
            Ok(Err(e)) => break Err(e),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break Ok(()),
        }
        if app.should_quit() || signalled.load(Ordering::Relaxed) || term::hung_up() {
            break Ok(());
        }
        let now = Instant::now();
        if now >= next_tick {
            source.show_pool(app.current().map(|p| p.sample.name.as_str()));
            source.explain_waits(app.waits_open);
            app.ingest(source.tick());
            app.overhead = meter.poll();
            next_tick += refresh;
            if next_tick < now {
                next_tick = now + refresh;
            }
            dirty = true;
        }
    };
    drop(guard);
    source.shutdown();
    result
}
