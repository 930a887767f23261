//! Where a worker's next task comes from: its own queue, its inbox, the
//! global queue (topped off in batches), peers' shared forks and queues.

use super::{WorkerThread, GLOBAL_CHECK_INTERVAL};
use crate::fork_join::steal_fork;
use crate::queue::{Steal, Worker};
use crate::task::Task;

impl WorkerThread {
    pub(super) fn find_task(&self) -> Option<Task> {
        let tick = self.tick.get().wrapping_add(1);
        self.tick.set(tick);
        if tick.is_multiple_of(GLOBAL_CHECK_INTERVAL) {
            self.refresh_record_level();
            if let Some(task) = self.pull_inbox().or_else(|| self.pull_global()) {
                return Some(task);
            }
        }
        self.state
            .queue
            .pop()
            .or_else(|| self.pull_inbox())
            .or_else(|| steal_fork(self))
            .or_else(|| self.paced_pull_global())
            .or_else(|| self.steal_from_peers())
    }

    /// What a worker waiting at the end of a join (its fork stolen) runs
    /// meanwhile, in the order that keeps its stack shallow and helps the
    /// waiting computation: its own queue (tasks its frames spawned), its
    /// own older shared forks (newest, so smallest, first), forks shared by
    /// peers, its inbox, peers' queues; the global queue last, so that no
    /// unrelated outside task starts ahead of the computation in flight.
    pub(super) fn find_task_in_join(&self) -> Option<Task> {
        self.state
            .queue
            .pop()
            .or_else(|| self.forks.take_own_newest())
            .or_else(|| steal_fork(self))
            .or_else(|| self.pull_inbox())
            .or_else(|| self.steal_from_peers())
            .or_else(|| self.pull_global())
    }

    /// What a worker waiting inside a task for a task latch (a scope, a
    /// handle, an `install` on another pool) runs meanwhile: what
    /// [`find_task`](Self::find_task) finds, and else its own shared forks,
    /// newest first.
    ///
    /// The wait may sit inside the `a` of joins whose forks this worker
    /// shared. Peers take such forks from its list, but `find_task` never
    /// looks at the worker's own list (in the main loop it is empty).
    /// Without this look a shared fork that no peer took (a peer busy, or
    /// asleep after a wake that sharing skips: `Sleep::notify_shared_forks`)
    /// waited for the end of the wait, which may depend on it; and the
    /// worker's second look before sleeping saw the fork as work and sent
    /// it searching again, so it spun until then.
    /// Last, after every other source: a peer may be about to take the
    /// fork, and this worker's own queue and its pool's queues come first
    /// as in any loop. Off the main loop's path: it cost nothing measurable
    /// (`BENCHMARKS.md`, "Core design figures": worker-wait-own-forks).
    pub(super) fn find_task_in_wait(&self) -> Option<Task> {
        self.find_task().or_else(|| self.forks.take_own_newest())
    }

    /// [`pull_global`](Self::pull_global) for a worker that ran out of local
    /// work, paused when its recent pulls drained the global queue (see
    /// `pull_pacer.rs`).
    pub(super) fn paced_pull_global(&self) -> Option<Task> {
        self.pacer.pause();
        let task = self.pull_global();
        let left = task.as_ref().map(|_| self.state.queue.len());
        self.pacer.pulled(left, self.registry.backlog());
        task
    }

    /// The first look of a worker just woken. It went to sleep only after
    /// finding its own queue empty, and only it pushes there, so the work it
    /// was woken for is in the global queue (or a peer's, or its inbox):
    /// looking there first spares the cold lines and the fence of popping
    /// its own empty queue before the task starts. Its gain in wake latency
    /// is within the noise; kept because it costs nothing (`BENCHMARKS.md`,
    /// "Core design figures": worker-find-after-wake).
    /// Its own queue is still looked at, last, so nothing depends on that
    /// argument for correctness.
    pub(super) fn find_task_after_wake(&self) -> Option<Task> {
        self.pull_global()
            .or_else(|| self.pull_inbox())
            .or_else(|| self.state.queue.pop())
            .or_else(|| steal_fork(self))
            .or_else(|| self.steal_from_peers())
    }

    /// Takes a task addressed to this worker alone (`broadcast`).
    pub(super) fn pull_inbox(&self) -> Option<Task> {
        let inbox = &self.registry.inboxes()[self.state.index];
        loop {
            match inbox.steal() {
                Steal::Success(task) => return Some(task),
                Steal::Empty => return None,
                Steal::Retry => continue,
            }
        }
    }

    /// Tops off the local queue from the global one, up to the backlog
    /// target, and returns one task to run now.
    pub(super) fn pull_global(&self) -> Option<Task> {
        // The limit counts the popped task too, so it is at least 1.
        let limit = self
            .registry
            .backlog()
            .saturating_sub(self.state.queue.len())
            .max(1);
        let global = self.registry.global();
        let queue = &self.state.queue;
        // Straight into the local queue: the metrics count tasks from outside
        // where they run (`Task::marked_from_outside`), not here. The recorder's
        // batch is the queue's growth, which a thief stealing meanwhile
        // makes smaller (its depth sample is exact).
        let before = if crate::recorder::ENABLED {
            queue.len()
        } else {
            0
        };
        let Some(task) = global.pull_batch(self.global_home, queue, limit) else {
            self.probe().global_queue_empty();
            return None;
        };
        if crate::recorder::ENABLED {
            let after = queue.len();
            self.probe()
                .pulled_global((after + 1).saturating_sub(before), || after);
        }
        Some(task)
    }

    /// Runs a batch transfer `take` (a steal from a peer) into this
    /// worker's local queue and returns the popped task with the batch size
    /// (popped task included).
    ///
    /// With the `metrics` feature the batch lands in a private scratch queue
    /// first and is counted there, then moved over: counting it in the
    /// shared local queue would undercount whenever a thief steals from it
    /// during the transfer (a test caught 978 global pulls for 1000 tasks,
    /// when global pulls were counted this way too). Without the feature
    /// the batch goes straight to the local queue and the size is not
    /// computed.
    pub(super) fn take_batch(
        &self,
        take: impl FnOnce(&Worker<Task>) -> Steal<Task>,
    ) -> Steal<(Task, usize)> {
        if !crate::metrics::COUNTS_BATCHES {
            return match take(&self.state.queue) {
                Steal::Success(task) => Steal::Success((task, 0)),
                Steal::Empty => Steal::Empty,
                Steal::Retry => Steal::Retry,
            };
        }
        match take(&self.scratch) {
            Steal::Success(task) => {
                let batch = self.scratch.len() + 1;
                while let Some(moved) = self.scratch.pop() {
                    self.state.queue.push(moved);
                }
                Steal::Success((task, batch))
            }
            Steal::Empty => Steal::Empty,
            Steal::Retry => Steal::Retry,
        }
    }

    /// Steals a batch (about half) of a peer's queue: from the peer it last
    /// stole from first, then from every other peer once from a random
    /// start, and again while any attempt lost a race (then starting with
    /// the peer that had work but was taken first). Registered sleepers are
    /// skipped: their queues are empty (`sleep/awake.rs`).
    ///
    /// The last victim first because work that outlives one batch keeps
    /// coming from one place (a fan-out's spawning task, a peer that pulled
    /// a long batch from the global queue): a thief that stole there finds
    /// more there at its first poll, where a random start polls, on
    /// average, half its empty peers on the way (`BENCHMARKS.md`, "Core
    /// design figures": worker-steal-last-victim). A victim found empty is
    /// forgotten, so the next search starts at random again; one that has
    /// gone to sleep since is skipped like any other sleeper (a worker woken
    /// long after its last steal would otherwise poll it first, empty).
    pub(super) fn steal_from_peers(&self) -> Option<Task> {
        let n = self.registry.stealers().len();
        if n < 2 {
            return None;
        }
        let sleep = self.registry.sleep();
        let mut first = self
            .last_victim
            .get()
            .filter(|&victim| sleep.may_have_local_work(victim));
        loop {
            // The peer that had work but was taken first, if any.
            let mut raced = None;
            if let Some(victim) = first {
                match self.steal_from(victim) {
                    Steal::Success(task) => return Some(task),
                    Steal::Retry => raced = Some(victim),
                    Steal::Empty => {}
                }
            }
            let start = self.next_random() as usize % n;
            for offset in 0..n {
                let victim = (start + offset) % n;
                // A registered sleeper's queue is empty (`sleep/awake.rs`).
                if victim == self.state.index
                    || Some(victim) == first
                    || !sleep.may_have_local_work(victim)
                {
                    continue;
                }
                match self.steal_from(victim) {
                    Steal::Success(task) => {
                        self.last_victim.set(Some(victim));
                        return Some(task);
                    }
                    Steal::Retry => {
                        raced.get_or_insert(victim);
                    }
                    Steal::Empty => {}
                }
            }
            if raced.is_none() {
                self.last_victim.set(None);
                return None;
            }
            first = raced;
        }
    }

    /// One poll of peer `victim`'s queue: a batch of about half of it, the
    /// first task returned to run now and the rest in this worker's queue.
    fn steal_from(&self, victim: usize) -> Steal<Task> {
        self.probe().steal_attempted();
        let stealer = &self.registry.stealers()[victim];
        match self.take_batch(|dest| stealer.steal_batch_and_pop(dest)) {
            Steal::Success((task, batch)) => {
                self.probe().stole(victim, batch, || self.state.queue.len());
                Steal::Success(task)
            }
            Steal::Retry => Steal::Retry,
            Steal::Empty => Steal::Empty,
        }
    }
}
