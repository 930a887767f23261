//! Every way a task enters a pool: from one of its own tasks into that
//! worker's local queue, from outside into the global queue (or straight to
//! a sleeping worker), and into one worker's inbox (`broadcast`).
//!
//! Each way takes the same steps: the envelope (`envelope.rs`: the span to
//! run in), the latency sample, the identity at the recorder's `Tasks`
//! level, the task made, the spawn recorded, the task pushed, a sleeper
//! woken (`sleep/`).

mod envelope;
mod fifo;

pub(crate) use envelope::Envelope;

use crate::registry::Registry;
use crate::task::IntoTask;
use crate::trace::SpawnContext;
use crate::worker;

impl Registry {
    /// Spawns `task`: into the current worker's local queue when called from
    /// one of this pool's tasks, else into the global queue. Gives the task
    /// back if the pool is shutting down and the caller is outside it.
    #[inline]
    #[track_caller]
    pub(crate) fn try_spawn<T: IntoTask>(&self, task: T) -> Result<(), T> {
        if SpawnContext::may_exist() {
            return self.try_spawn_in_context(task);
        }
        self.try_spawn_with(task, Envelope::empty())
    }

    /// [`try_spawn`](Self::try_spawn) once a `tracing` subscriber exists:
    /// captures the current span to run the task in.
    ///
    /// Out of line, so that without a subscriber a spawn pays only the
    /// check in `try_spawn`, and its envelope is a constant that folds
    /// away. When the envelope was captured on every spawn it stayed live,
    /// with its spills, through the whole spawn path (`BENCHMARKS.md`,
    /// "Core design figures": spawn-try-spawn-in-context).
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn try_spawn_in_context<T: IntoTask>(&self, task: T) -> Result<(), T> {
        self.try_spawn_with(task, Envelope::new())
    }

    #[inline(always)]
    #[track_caller]
    fn try_spawn_with<T: IntoTask>(&self, task: T, envelope: Envelope) -> Result<(), T> {
        let (task, envelope) = match push_if_local(self, task, envelope) {
            Ok(()) => return Ok(()),
            Err(unspawned) => unspawned,
        };
        if self.global().is_sharded() {
            return self.spawn_outside_sharded(task, envelope);
        }
        self.spawn_outside(task, envelope, 0)
    }

    /// An outside spawn into the global queue's shard `shard`, counted in
    /// that shard's count.
    #[inline(always)]
    #[track_caller]
    fn spawn_outside<T: IntoTask>(
        &self,
        task: T,
        envelope: Envelope,
        shard: usize,
    ) -> Result<(), T> {
        if !self.admit_external(shard) {
            return Err(task);
        }
        if self.recorder().records_tasks() {
            self.deliver_recorded(task, envelope, shard);
            return Ok(());
        }
        let sampled_at = self.counters().sample_spawn();
        let task = envelope.into_outside_task(task, sampled_at, None);
        self.sleep()
            .deliver_external_task(task, self.global().shard(shard));
        Ok(())
    }

    /// [`spawn_outside`](Self::spawn_outside) into this thread's home shard
    /// of a sharded global queue (`queue/global.rs`). Out of line, so that
    /// with one shard a spawn pays only the check, and its shard is the
    /// constant 0 that folds away: computed on every spawn, the home and the
    /// shard's lookups took 15 instructions and 3-5% more time per outside
    /// spawn (`BENCHMARKS.md`, "Core design figures": spawn-outside-sharded).
    #[inline(never)]
    #[track_caller]
    fn spawn_outside_sharded<T: IntoTask>(&self, task: T, envelope: Envelope) -> Result<(), T> {
        let shard = self.global().home_of_this_thread();
        self.spawn_outside(task, envelope, shard)
    }

    /// An outside spawn while the flight recorder records spawns (its
    /// `Tasks` level): the task made with an identity and its spawn
    /// recorded. Out of line, so that the usual spawn pays only the check
    /// (a load and a branch; inline, the recorded path's code weighed on
    /// every spawn: `BENCHMARKS.md`, "Core design figures":
    /// spawn-deliver-recorded).
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn deliver_recorded<T: IntoTask>(&self, task: T, envelope: Envelope, shard: usize) {
        let sampled_at = self.counters().sample_spawn();
        let id = crate::recorder::next_task_id();
        let task = envelope.into_outside_task(task, sampled_at, Some(id));
        self.recorder()
            .outside_spawn(id, None, std::panic::Location::caller());
        self.sleep()
            .deliver_external_task(task, self.global().shard(shard));
    }

    /// [`try_spawn`](Self::try_spawn), panicking (for the public `spawn`s)
    /// when the task is refused.
    ///
    /// Inlined, with the panic out of line, so that a spawn compiles to the
    /// fast path at its call site whichever features are on: when the
    /// `tracing` feature made this function a call, that call alone was
    /// most of what the feature cost an external spawn (`BENCHMARKS.md`,
    /// "Core design figures": spawn-inlining).
    #[inline]
    #[track_caller]
    pub(crate) fn spawn<T: IntoTask>(&self, task: T) {
        if self.try_spawn(task).is_err() {
            self.refused();
        }
    }

    #[cold]
    #[inline(never)]
    #[track_caller]
    fn refused(&self) -> ! {
        panic!(
            "dreadpool: cannot spawn into pool {:?}: it has shut down (use try_spawn to get the task back)",
            self.name()
        );
    }

    /// Spawns `task` into worker `index`'s inbox, to run on that worker and
    /// no other. The same acceptance rule as [`try_spawn`](Self::try_spawn):
    /// refused after shutdown unless the caller is one of the pool's tasks.
    #[track_caller]
    pub(crate) fn try_spawn_on<T: IntoTask>(&self, index: usize, task: T) -> Result<(), T> {
        let envelope = Envelope::new();
        let me = worker::current_index(Some(self));
        let own_task = me.is_some();
        // Counted as an outside spawn, in the home shard's count; the task
        // goes to the inbox, not that shard.
        let shard = self.global().home_of_this_thread();
        if !own_task && !self.admit_external(shard) {
            return Err(task);
        }
        if own_task {
            // Draining: a pool's own tasks may always spawn.
            self.counts().external_spawned(shard);
        }
        let sampled_at = self.counters().sample_spawn();
        let identity = self
            .recorder()
            .records_tasks()
            .then(crate::recorder::next_task_id);
        let task = envelope.into_task(task, sampled_at, identity);
        if let Some(id) = identity {
            let site = std::panic::Location::caller();
            match me {
                Some(me) => self.recorder().worker(me).spawned_inbox(id, index, site),
                None => self.recorder().outside_spawn(id, Some(index), site),
            }
        }
        self.inboxes()[index].push(task);
        // Only worker `index` may take it, so wake that one: its sleep
        // registration (under the idle lock that `wake_specific` takes)
        // precedes its second look at its inbox.
        self.sleep().wake_specific(index);
        // Unless it was the building thread's seat, and that thread left.
        self.redirect_if_seat_left(index);
        Ok(())
    }
}

/// If the calling thread is a worker of `registry`, pushes `task` to its local
/// queue; otherwise gives it back.
#[inline(always)]
#[track_caller]
fn push_if_local<T: IntoTask>(
    registry: &Registry,
    task: T,
    envelope: Envelope,
) -> Result<(), (T, Envelope)> {
    let worker = worker::current_ptr();
    if worker.is_null() {
        return Err((task, envelope));
    }
    // SAFETY: non-null, so the thread's current worker is this one (set and
    // cleared together with the pointer, also when the thread's locals are
    // destroyed: `worker/current.rs`), and nothing below runs code that
    // could clear it: making the task and pushing it run no user code.
    let worker = unsafe { &*worker };
    // A worker of this pool, and not a `use_current_thread` pool's worker 0
    // (whose field is null): one comparison for both, so that the spawns
    // of every other worker pay no test for worker 0's fence.
    if !std::ptr::eq(worker.unfenced_spawns_into(), registry) {
        // Tested here, not in the out-of-line call, which would otherwise
        // have to hand the task back: the outside spawn's path, which
        // leaves at the null test above, stays as short as before.
        if !(worker.is_user_thread() && std::ptr::eq(worker.registry(), registry)) {
            return Err((task, envelope));
        }
        push_from_worker_0(worker, registry, task, envelope);
        return Ok(());
    }
    push_local_from(worker, registry, task, envelope, false);
    Ok(())
}

/// [`push_if_local`] on worker 0 of `registry`'s pool by
/// `use_current_thread`: pushes `task` to its local queue with the fenced
/// wake (`worker/current_thread.rs`, point 1).
#[cold]
#[inline(never)]
#[track_caller]
fn push_from_worker_0<T: IntoTask>(
    worker: &worker::WorkerThread,
    registry: &Registry,
    task: T,
    envelope: Envelope,
) {
    push_local_from(worker, registry, task, envelope, true);
}

/// Pushes `task` to `worker`'s local queue (`registry` is its pool); with
/// the outside spawn's fence on the wake when `fenced` (a constant at each
/// call).
#[inline(always)]
#[track_caller]
fn push_local_from<T: IntoTask>(
    worker: &worker::WorkerThread,
    registry: &Registry,
    task: T,
    envelope: Envelope,
    fenced: bool,
) {
    // (The pool's counters through `registry`, already at hand: through the
    // worker's own pointer to its pool it was one more load a spawn.)
    let sampled_at = worker.sample_spawn(registry.counters());
    if worker.records_tasks() {
        // Made inline, as the unrecorded task is (out of line it cost the
        // `Tasks` level's spawns more, `BENCHMARKS.md`); marked unlikely, so
        // that the spawn site's usual path stays together.
        crate::hint::cold_path();
        let id = worker.next_task_id();
        let site = std::panic::Location::caller();
        worker.push_local_recorded(envelope.into_task(task, sampled_at, Some(id)), id, site);
    } else if fenced {
        worker.push_local_fenced(envelope.into_task(task, sampled_at, None));
    } else {
        worker.push_local(envelope.into_task(task, sampled_at, None));
    }
}
