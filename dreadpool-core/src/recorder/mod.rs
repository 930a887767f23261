//! The flight recorder: a timeline of the scheduler, kept in per-worker
//! rings of fixed-size events and copied out on demand.
//!
//! Twin modules with identical signatures, the real `enabled` with the
//! `recorder` feature and the empty `disabled` without, so that no call site
//! carries a `cfg` and a disabled feature compiles to nothing (as `metrics/`
//! does).
//!
//! - `ring.rs`: the single-writer ring and its torn-read-free copy;
//! - `clock.rs`: the timestamp counter and its conversion at dump time;
//! - `spawn_clock.rs`: when a worker's spawn spares its clock read;
//! - `task_ids.rs`: the identities that link a spawn to its run;
//! - `identity_slots.rs`: where an outside spawn's identity travels
//!   without a box;
//! - `event.rs`: an event's three words;
//! - `enabled.rs`: the pool's recorder, its workers' tracks, outside
//!   threads' rings;
//! - `recording.rs`: the public `Recording` and the merge of the rings;
//! - `perfetto.rs`, `chrome_json.rs`: the two output formats;
//! - `trigger.rs`: writing a recording by itself on a panic or a slow task.

#[cfg(feature = "recorder")]
mod enabled;
#[cfg(feature = "recorder")]
pub(crate) use enabled::*;

#[cfg(not(feature = "recorder"))]
mod disabled;
#[cfg(not(feature = "recorder"))]
pub(crate) use disabled::*;

// The identity slots are compiled under loom too, for their model.
#[cfg(any(feature = "recorder", loom))]
pub(crate) mod identity_slots;
/// Without the recorder no task has an identity, so no slot is ever
/// claimed: an uninhabited slot, for `task.rs` to name.
#[cfg(not(any(feature = "recorder", loom)))]
pub(crate) mod identity_slots {
    pub(crate) enum IdentitySlot {}

    #[allow(clippy::unused_self)]
    impl IdentitySlot {
        pub(crate) unsafe fn fill<F: Send>(&self, _id: u64, _f: F) {
            match *self {}
        }
        pub(crate) unsafe fn id(&self) -> u64 {
            match *self {}
        }
        pub(crate) unsafe fn take<F>(&self) -> F {
            match *self {}
        }
    }

    #[inline(always)]
    pub(crate) fn claim() -> Option<&'static IdentitySlot> {
        None
    }
}

// The ring is compiled under loom too, for its model (`tests/loom.rs`).
#[cfg(any(feature = "recorder", loom))]
pub(crate) mod ring;

#[cfg(feature = "recorder")]
mod chrome_json;
#[cfg(feature = "recorder")]
mod clock;
#[cfg(feature = "recorder")]
mod event;
#[cfg(feature = "recorder")]
mod explain;
#[cfg(feature = "recorder")]
mod level;
#[cfg(feature = "recorder")]
mod merge;
#[cfg(feature = "recorder")]
mod outside_rings;
#[cfg(feature = "recorder")]
mod perfetto;
#[cfg(feature = "recorder")]
mod recording;
#[cfg(feature = "recorder")]
mod seat;
#[cfg(feature = "recorder")]
pub(crate) use seat::leave_thread;
#[cfg(feature = "recorder")]
mod site;
#[cfg(feature = "recorder")]
mod spawn_clock;
#[cfg(feature = "recorder")]
mod task_ids;
#[cfg(feature = "recorder")]
mod trigger;

#[cfg(feature = "recorder")]
pub use explain::{
    CauseTotal, ExplainError, Explanation, RanMeanwhile, SchedulerSummary, SiteTotal, TaskWait,
    WaitCause,
};
#[cfg(feature = "recorder")]
pub use level::RecordLevel;
#[cfg(feature = "recorder")]
pub use recording::{EventKind, RecordedEvent, Recording, SpawnQueue, Track, WorkerActivity};
#[cfg(feature = "recorder")]
pub use site::{ParseSpawnSiteError, SpawnSite};
#[cfg(feature = "recorder")]
pub use trigger::RecordTrigger;

/// The default ring size, in events per worker: 65,536 events of 24 bytes,
/// 1.5 MiB per worker (allocated once, at build, from zeroed memory: a
/// block this large usually comes as fresh pages, resident only once
/// events fill them). At `Scheduler` level a worker records a few events per
/// global pull, steal, sleep and wake, not per task; at `Tasks` level two
/// events per task besides, so a worker running 1 us tasks keeps its last
/// 30 ms or so, and one running 100 us tasks its last 3 s.
pub const DEFAULT_RECORD_CAPACITY: usize = 1 << 16;

/// The largest ring a worker may have: 2^28 events, 6 GiB. More is a
/// mistake (a ring is allocated for each worker).
#[cfg(feature = "recorder")]
pub(crate) const MAX_RECORD_CAPACITY: usize = 1 << 28;
