//! The real flight recorder, compiled with the `recorder` feature.
//!
//! Each worker seat has a [`Ring`] that only the thread in that seat writes
//! (a replacement thread takes the seat, and its ring, after its predecessor
//! stopped writing: the thread spawn orders them). A thread outside the pool
//! that spawns into it or wakes one of its workers writes into a ring of its
//! own (`outside_rings.rs`). No event takes a lock, allocates or makes a
//! syscall once its ring exists: a level check, a clock read (which a
//! worker's spawn may spare, `spawn_clock.rs`) and four stores
//! (`ring.rs`).

use super::clock::{self, Conversion};
use super::event::{self, pack};
use super::level::RecordLevel;
use super::merge::{merge_with_sites, TrackEvents};
use super::outside_rings;
use super::recording::{Recording, Track};
use super::ring::{Copied, Ring};
use super::spawn_clock::{SpawnClock, Stamp};
pub(crate) use super::task_ids::next_task_id;
use super::task_ids::TaskIds;
use super::trigger::{RecordTrigger, TriggerState};
use super::DEFAULT_RECORD_CAPACITY;
use crate::sync::atomic::{AtomicU8, Ordering};
use crate::sync::Arc;
use crossbeam_utils::CachePadded;
use std::time::Duration;

/// Whether the recorder is compiled in: lets call sites fold their checks
/// away without it.
pub(crate) const ENABLED: bool = true;

/// What a pool's recorder needs to be made.
#[derive(Clone, Default)]
pub(crate) struct RecorderConfig {
    pub(crate) level: Option<RecordLevel>,
    pub(crate) capacity: Option<usize>,
    pub(crate) trigger: Option<RecordTrigger>,
}

/// What the recorder's rings share with whoever takes a recording (the
/// pool, a trigger's thread).
struct Shared {
    /// Tells this pool's outside rings apart from other pools'.
    pool_id: u64,
    pool_name: String,
    level: AtomicU8,
    /// One ring per worker seat, made at build whatever the level: from
    /// zeroed memory, so a ring that records nothing (level `Off`) never
    /// becomes resident, and an event needs no check that the rings exist.
    rings: Box<[CachePadded<Ring>]>,
    trigger: Option<TriggerState>,
}

/// A pool's flight recorder.
pub(crate) struct FlightRecorder {
    shared: Arc<Shared>,
}

static NEXT_POOL_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl FlightRecorder {
    pub(crate) fn new(pool_name: &str, workers: usize, config: RecorderConfig) -> Self {
        clock::start();
        let level = config.level.unwrap_or_default();
        let recorder = FlightRecorder {
            shared: Arc::new(Shared {
                pool_id: NEXT_POOL_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                pool_name: pool_name.to_owned(),
                level: AtomicU8::new(RecordLevel::Off.as_u8()),
                rings: (0..workers)
                    .map(|_| {
                        CachePadded::new(Ring::new(
                            config.capacity.unwrap_or(DEFAULT_RECORD_CAPACITY),
                        ))
                    })
                    .collect(),
                trigger: config.trigger.map(TriggerState::new),
            }),
        };
        recorder.set_level(level);
        recorder
    }

    /// The level now.
    pub(crate) fn level(&self) -> RecordLevel {
        RecordLevel::from_u8(self.shared.level.load(Ordering::Relaxed))
    }

    /// Switches the level. Relaxed: the level orders nothing; each
    /// recording point reads it on its own, and a switch takes effect at
    /// each point's next look (a worker's cached flag: within 61 tasks or
    /// at its next sleep).
    pub(crate) fn set_level(&self, level: RecordLevel) {
        self.shared.level.store(level.as_u8(), Ordering::Relaxed);
    }

    /// Whether spawns into this pool are recorded now (its `Tasks` level):
    /// then they are made with an identity (`Task::identified_as`).
    #[inline(always)]
    pub(crate) fn records_tasks(&self) -> bool {
        self.shared.level.load(Ordering::Relaxed) >= RecordLevel::Tasks.as_u8()
    }

    /// Worker `index`'s track, for the worker in that seat to write.
    #[inline(always)]
    pub(crate) fn worker(&self, index: usize) -> WorkerTrack<'_> {
        WorkerTrack {
            shared: &self.shared,
            index,
        }
    }

    /// A spawn by a thread outside the pool, whose caller checked
    /// [`records_tasks`](Self::records_tasks) (and made the task with an
    /// identity, `id`). Out of line: the usual spawn path keeps only the
    /// check.
    #[cold]
    #[inline(never)]
    pub(crate) fn outside_spawn(
        &self,
        id: u64,
        inbox: Option<usize>,
        site: &'static std::panic::Location<'static>,
    ) {
        let (queue, worker) = match inbox {
            Some(worker) => (event::QUEUE_INBOX, worker as u32),
            None => (event::QUEUE_GLOBAL, 0),
        };
        let raw = event::pack_with_site(clock::now(), event::SPAWN, queue, worker, site, id);
        outside_rings::push(self.shared.pool_id, raw);
    }

    /// The recorder's shared part, for the sleep module to note wakes.
    pub(crate) fn waker_log(&self) -> WakerLog {
        WakerLog {
            shared: Some(Arc::clone(&self.shared)),
        }
    }

    /// A sampled task's schedule delay and run time, for the triggers.
    pub(crate) fn observed_latency(&self, schedule_delay: Duration, run_time: Duration) {
        if let Some(trigger) = &self.shared.trigger {
            if let Some(reason) = trigger.latency_crossed(schedule_delay, run_time) {
                self.fire(reason);
            }
        }
    }

    /// A task (or a thread handler) panicked, for the triggers.
    pub(crate) fn observed_panic(&self) {
        if let Some(trigger) = &self.shared.trigger {
            if trigger.fires_on_panic() {
                self.fire("panic");
            }
        }
    }

    /// Takes a recording and hands it to the trigger's sink on a thread of
    /// its own, if the trigger's interval allows one now: the worker that
    /// saw the reason goes straight back to work.
    #[cold]
    fn fire(&self, reason: &'static str) {
        let Some(trigger) = &self.shared.trigger else {
            return;
        };
        if !trigger.claim() {
            return;
        }
        let shared = Arc::clone(&self.shared);
        // If no thread can be had, this firing is skipped (the next may
        // come after the interval).
        let _ = std::thread::Builder::new()
            .name(format!("{}-recorder", shared.pool_name))
            .spawn(move || {
                let recording = take(&shared);
                if let Some(trigger) = &shared.trigger {
                    trigger.deliver(recording, reason);
                }
            });
    }

    /// A recording of what the rings hold now.
    pub(crate) fn recording(&self) -> Recording {
        take(&self.shared)
    }
}

impl Drop for FlightRecorder {
    fn drop(&mut self) {
        // Its outside rings go with it (a trigger's thread may still hold
        // the shared part; it finds no outside events then).
        outside_rings::forget_pool(self.shared.pool_id);
    }
}

/// Copies every ring of the pool (its workers' and the outside threads'
/// for it) and merges them.
fn take(shared: &Shared) -> Recording {
    let conversion = Conversion::measure();
    let taken_at_ns = conversion.nanos(clock::now());
    let mut tracks = Vec::new();
    let mut lost = 0;
    let mut timed = |track: Track, copied: Copied| {
        lost += copied.lost;
        let events = copied
            .events
            .into_iter()
            .map(|raw| {
                let unpacked = event::unpack(raw);
                (conversion.nanos(unpacked.ticks), unpacked)
            })
            .collect();
        tracks.push(TrackEvents { track, events });
    };
    for (index, ring) in shared.rings.iter().enumerate() {
        timed(Track::Worker(index), ring.copy());
    }
    let mut outside_names = Vec::new();
    for ring in outside_rings::of_pool(shared.pool_id) {
        timed(Track::Outside(outside_names.len()), ring.ring.copy());
        outside_names.push(ring.name.clone());
    }
    let level = RecordLevel::from_u8(shared.level.load(Ordering::Relaxed));
    let worker_names = (0..shared.rings.len())
        .map(|i| format!("{}-{i}", shared.pool_name))
        .collect();
    let (events, sites) = merge_with_sites(tracks, taken_at_ns);
    Recording {
        pool: shared.pool_name.clone(),
        level,
        worker_names,
        outside_names,
        events,
        lost,
        taken_at_ns,
        sites,
    }
}

/// A worker's direct pointer to its seat's ring, for the two per-task
/// events (a spawn, a run), and the seat's clock policy for them
/// (`spawn_clock.rs`): it spares them the walk from the pool through the
/// recorder to the ring on the hottest path (`BENCHMARKS.md`, "Core design
/// figures": recorder-seat-ring).
pub(crate) struct SeatRing {
    ring: std::ptr::NonNull<Ring>,
    clock: SpawnClock,
    /// The seat's thread's task identities (a thread-local costs the
    /// spawn a call where this is a field of the worker at hand).
    ids: TaskIds,
}

impl FlightRecorder {
    /// Worker `index`'s ring, for [`SeatRing`].
    pub(crate) fn seat_ring(&self, index: usize) -> SeatRing {
        SeatRing {
            ring: std::ptr::NonNull::from(&*self.shared.rings[index]),
            clock: SpawnClock::new(),
            ids: TaskIds::new(),
        }
    }
}

impl SeatRing {
    /// A fresh task identity (see [`next_task_id`]).
    #[inline(always)]
    pub(crate) fn next_task_id(&self) -> u64 {
        self.ids.next()
    }

    /// A spawn of the task with identity `id` into the worker's own queue.
    /// Its time is the worker's latest clock reading when readings come
    /// quickly (`spawn_clock.rs`).
    ///
    /// # Safety
    ///
    /// The recorder this came from must still exist (the worker holds its
    /// pool), and the caller must be the thread in the ring's seat.
    #[inline(always)]
    pub(crate) unsafe fn spawned_local(
        &self,
        id: u64,
        site: &'static std::panic::Location<'static>,
    ) {
        let (ticks, kind) = match self.clock.for_spawn() {
            Stamp::Read(ticks) => (ticks, event::SPAWN),
            Stamp::Inherited(ticks) => (ticks, event::SPAWN | event::INHERITED),
        };
        // SAFETY: the rings live as long as the recorder (a boxed slice,
        // never moved or shrunk), which the caller keeps alive.
        let ring = unsafe { self.ring.as_ref() };
        ring.push(event::pack_with_site(
            ticks,
            kind,
            event::QUEUE_LOCAL,
            0,
            site,
            id,
        ));
    }

    /// A task is about to run.
    ///
    /// # Safety
    ///
    /// As for [`spawned_local`](Self::spawned_local).
    #[inline(always)]
    pub(crate) unsafe fn run_begin(&self, id: u64) {
        let now = self.clock.read();
        // SAFETY: as in `spawned_local`.
        let ring = unsafe { self.ring.as_ref() };
        ring.push(pack(now, event::RUN_BEGIN, 0, 0, id));
    }
}

/// A worker seat's view of the recorder. Only the thread in the seat may
/// call its methods (its ring has one writer).
pub(crate) struct WorkerTrack<'a> {
    shared: &'a Shared,
    index: usize,
}

impl WorkerTrack<'_> {
    /// Whether events of `level` are recorded now.
    #[inline(always)]
    fn records(&self, level: RecordLevel) -> bool {
        self.shared.level.load(Ordering::Relaxed) >= level.as_u8()
    }

    /// Records an event if the level is at least `level`.
    #[inline(always)]
    fn record(&self, level: RecordLevel, kind: u8, a: u32, b: u32, c: u64) {
        if self.records(level) {
            self.push(kind, a, b, c);
        }
    }

    #[inline(always)]
    fn push(&self, kind: u8, a: u32, b: u32, c: u64) {
        self.shared.rings[self.index].push(pack(clock::now(), kind, a, b, c));
    }

    /// Whether task events are recorded now: the run path reads a task's
    /// identity only then.
    #[inline(always)]
    fn records_tasks(&self) -> bool {
        self.shared.level.load(Ordering::Relaxed) >= RecordLevel::Tasks.as_u8()
    }

    /// A spawn of the task with identity `id` into worker `worker`'s inbox
    /// (`broadcast`).
    #[inline(always)]
    pub(crate) fn spawned_inbox(
        &self,
        id: u64,
        worker: usize,
        site: &'static std::panic::Location<'static>,
    ) {
        if self.records_tasks() {
            let raw = event::pack_with_site(
                clock::now(),
                event::SPAWN,
                event::QUEUE_INBOX,
                worker as u32,
                site,
                id,
            );
            self.shared.rings[self.index].push(raw);
        }
    }

    /// A task is about to run; `id` from `Task::record_id` (0 when task
    /// events are not recorded).
    /// A task panicked (the only run end recorded: a run otherwise ends
    /// where the next event of its level begins, see `merge.rs`,
    /// which saves an event and a clock read per task).
    #[inline(always)]
    pub(crate) fn run_panicked(&self, id: u64) {
        self.push(event::RUN_END, 1, 0, id);
    }

    pub(crate) fn pulled_global(&self, batch: usize, local_depth: impl FnOnce() -> usize) {
        if self.records(RecordLevel::Scheduler) {
            let depth = local_depth() as u64;
            self.push(event::GLOBAL_PULL, 0, batch as u32, depth);
        }
    }

    pub(crate) fn stole(&self, victim: usize, batch: usize, local_depth: impl FnOnce() -> usize) {
        if self.records(RecordLevel::Scheduler) {
            let depth = local_depth() as u64;
            self.push(event::STEAL, victim as u32, batch as u32, depth);
        }
    }

    fn state(&self, state: u32) {
        self.record(RecordLevel::Scheduler, event::STATE, state, 0, 0);
    }

    pub(crate) fn running(&self) {
        self.state(event::RUNNING);
    }

    pub(crate) fn searching(&self) {
        self.state(event::SEARCHING);
    }

    pub(crate) fn sleeping(&self) {
        self.state(event::SLEEPING);
    }

    pub(crate) fn respawning(&self) {
        self.state(event::RESPAWNING);
    }

    pub(crate) fn stopped(&self) {
        self.state(event::STOPPED);
    }

    /// Woken: with a task handed over (`handoff`, whose run the next
    /// state change, running, shows), or to search.
    pub(crate) fn woken(&self, handoff: bool) {
        self.record(
            RecordLevel::Scheduler,
            event::WAKE,
            u32::from(handoff),
            0,
            0,
        );
        if !handoff {
            self.searching();
        }
    }

    pub(crate) fn wakeup_found_nothing(&self) {
        self.record(RecordLevel::Scheduler, event::NOOP_WAKEUP, 0, 0, 0);
    }

    pub(crate) fn respawned(&self) {
        self.record(RecordLevel::Scheduler, event::RESPAWN, 0, 0, 0);
    }

    pub(crate) fn panicked(&self, id: u64) {
        self.record(RecordLevel::Scheduler, event::PANIC, 0, 0, id);
    }

    pub(crate) fn wait_begin(&self) {
        self.record(RecordLevel::Scheduler, event::WAIT_BEGIN, 0, 0, 0);
    }

    pub(crate) fn wait_end(&self) {
        self.record(RecordLevel::Scheduler, event::WAIT_END, 0, 0, 0);
    }

    /// This worker shared the fork with identity `fork` (its stack job's
    /// address), of a join called at `site` (kept at `Tasks` level, as a
    /// spawn's is).
    pub(crate) fn fork_shared(&self, fork: u64, site: &'static std::panic::Location<'static>) {
        if self.records_tasks() {
            let raw = event::pack_with_site(clock::now(), event::FORK_SHARED, 0, 0, site, fork);
            self.shared.rings[self.index].push(raw);
        } else {
            self.record(RecordLevel::Scheduler, event::FORK_SHARED, 0, 0, fork);
        }
    }

    /// This worker took `owner`'s shared fork `fork` to run it.
    pub(crate) fn fork_stolen(&self, owner: usize, fork: u64) {
        self.record(
            RecordLevel::Scheduler,
            event::FORK_STOLEN,
            owner as u32,
            0,
            fork,
        );
    }
}

/// What the sleep module holds to note who woke a worker.
pub(crate) struct WakerLog {
    shared: Option<Arc<Shared>>,
}

impl WakerLog {
    /// A log that notes nothing (for the sleep module's own tests).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn none() -> Self {
        WakerLog { shared: None }
    }

    /// The calling thread is about to wake worker `index`: recorded on the
    /// caller's track (its own worker ring if it is one of this pool's
    /// workers, else its outside ring).
    pub(crate) fn unparking(&self, index: usize) {
        let Some(shared) = self.shared.as_deref() else {
            return;
        };
        if shared.level.load(Ordering::Relaxed) < RecordLevel::Scheduler.as_u8() {
            return;
        }
        let raw = pack(clock::now(), event::UNPARK, index as u32, 0, 0);
        match super::seat::current() {
            Some((pool, me)) if pool == shared.pool_id => shared.rings[me].push(raw),
            _ => outside_rings::push(shared.pool_id, raw),
        }
    }
}

impl FlightRecorder {
    /// The calling thread runs worker `index` of this pool from now on
    /// (`seat.rs`).
    pub(crate) fn enter_thread(&self, index: usize) {
        super::seat::enter(self.shared.pool_id, index);
    }
}
