//! Where samples come from: the in-process demo or an attached host, behind one [`Source`].
//!
//! The only module that touches `dreadpool-metrics`: a demo pool in this
//! process (`demo/`), or the pools of another process over an exporter
//! connection (`attached/`). Both turn `Snapshot`s into `Interval`s with a
//! `Monitor`, and both into the model's
//! [`PoolSample`](crate::state::sample::PoolSample)s (`conversion.rs`);
//! both pull flight recordings for the timeline, paced by what a pull costs
//! (`pacing.rs`).
//!
//! Two things the metrics crate's `Interval` does not carry are worked out
//! here from the snapshots themselves: per-worker latency quantiles (for the
//! detail view) and the running totals (for the detail view and to derive
//! respawn and panic events when attached).

mod attached;
mod conversion;
mod demo;
mod pacing;

pub use attached::{Attached, DIGEST_MAX_EVENTS, RECORDING_PATIENCE};
pub use conversion::{to_sample, PoolFeed};
pub use demo::{is_demo_panic, Demo, DemoRecorder, DEMO_POOL, DEMO_RECORD_CAPACITY};
pub use pacing::{
    Pacer, HOST_COST_FACTOR, TIMELINE_COST_FACTOR, TIMELINE_EVERY, WAITS_COST_FACTOR,
};

use crate::state::{Command, Tick};

/// Either source, behind one face for the main loop.
#[derive(Debug)]
pub enum Source {
    /// The in-process demo (boxed: it holds a monitor's histograms).
    Demo(Box<Demo>),
    /// An attached host (boxed: it holds its requests' state).
    Attached(Box<Attached>),
}

impl Source {
    /// Samples now.
    pub fn tick(&mut self) -> Tick {
        match self {
            Source::Demo(d) => d.tick(),
            Source::Attached(a) => a.tick(),
        }
    }

    /// Carries out a command of the model (load commands mean nothing when
    /// attached; the model does not send them then).
    pub fn apply(&mut self, command: Command) {
        match (self, command) {
            (Source::Demo(d), command) => d.apply(command),
            (Source::Attached(a), Command::SaveRecording { pool }) => a.save(pool),
            (Source::Attached(_), _) => {}
        }
    }

    /// Tells the source which pool is shown (an attached host's timeline
    /// is pulled for that pool only).
    pub fn show_pool(&mut self, name: Option<&str>) {
        if let Source::Attached(a) = self {
            a.show_pool(name);
        }
    }

    /// Tells the source whether the waits view is shown: while it is, the
    /// recordings it takes are at `Tasks` level (the level that links each
    /// spawn to its run) and explained, and the tick carries their waits.
    pub fn explain_waits(&mut self, on: bool) {
        match self {
            Source::Demo(d) => d.explain_waits(on),
            Source::Attached(a) => a.explain_waits(on),
        }
    }

    /// Stops whatever runs.
    pub fn shutdown(self) {
        if let Source::Demo(d) = self {
            (*d).shutdown();
        }
    }
}
