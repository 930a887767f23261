//! Idle workers sleep; spawns wake them. No wakeup is ever lost, and a spawn
//! pays neither a lock nor a syscall while no worker sleeps.
//!
//! The full argument, with the seed's two lost-wakeup scenarios, is in
//! `README.md` beside this file. In short, one `AtomicU64` holds two counts,
//! *sleeping* (workers registered to sleep) and *searching* (workers woken
//! and looking for work). The sleeping count only changes with the idle list
//! locked, so it always agrees with the list; spawners only read the word.
//!
//! - A spawner pushes its task, issues a `SeqCst` fence, then reads the word.
//!   It wakes a sleeper only if one sleeps and nobody is already searching.
//! - A worker about to sleep registers itself (list + word), issues a `SeqCst`
//!   fence, then looks at every queue once more before it parks.
//!
//! Of two `SeqCst` fences one comes first: either the worker's second look
//! sees the task, or the spawner sees the sleeper. A searching worker that a
//! spawner relied on either finds work or registers and looks again, so the
//! reliance is safe.
//!
//! - When every worker sleeps, an outside spawn hands its task to a sleeper
//!   already waiting on its condvar, with the token, under the idle lock
//!   ([`Sleep::deliver_external_task`]): the woken worker runs it without
//!   touching the global queue.
//! - Searchers skip the local queues of registered sleepers, which are
//!   empty: one bit per worker says who is not registered (`awake.rs`), a
//!   hint that nothing depends on.

mod awake;
pub(crate) mod parker;

use crate::queue::Injector;
use crate::recorder::WakerLog;
use crate::sync::atomic::fence;
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::{lock, Mutex};
use crate::task::Task;
use awake::AwakeSet;
use parker::{Parked, Parker};

/// One sleeping worker in the packed state word.
const ONE_SLEEPING: u64 = 1 << 32;
/// One searching worker in the packed state word.
const ONE_SEARCHING: u64 = 1;

fn sleeping(state: u64) -> u64 {
    state >> 32
}

fn searching(state: u64) -> u64 {
    state & (ONE_SLEEPING - 1)
}

/// The sleep/wake coordinator of one pool.
pub(crate) struct Sleep {
    /// `sleeping << 32 | searching`; the sleeping half only changes with
    /// `idle` locked.
    state: AtomicU64,
    /// Indices of the registered sleepers, most recent last (woken first: its
    /// caches are the warmest).
    idle: Mutex<Vec<usize>>,
    parkers: Box<[Parker]>,
    /// Who is not registered as a sleeper: searchers poll only their queues
    /// (`awake.rs`).
    awake: AwakeSet,
    /// Notes who woke whom for the flight recorder (nothing without it).
    waker_log: WakerLog,
}

impl Sleep {
    pub(crate) fn new(workers: usize, waker_log: WakerLog) -> Self {
        Sleep {
            waker_log,
            state: AtomicU64::new(0),
            idle: Mutex::new(Vec::with_capacity(workers)),
            parkers: (0..workers).map(|_| Parker::new()).collect(),
            awake: AwakeSet::new(workers),
        }
    }

    /// Delivers `task`, spawned from outside: onto the global queue, unless
    /// the whole pool sleeps and a sleeper takes it directly.
    ///
    /// While any worker is awake (the busy case) this is the push and
    /// [`notify_external_task`](Self::notify_external_task), inlined, plus
    /// one relaxed load of a line that the fence path reads anyway.
    #[inline(always)]
    pub(crate) fn deliver_external_task(&self, task: Task, global: &Injector<Task>) {
        // Relaxed: a stale view only chooses the other path, each of which
        // is safe on its own: the usual one has its fence, and the other
        // decides under the idle lock.
        let state = self.state.load(Ordering::Relaxed);
        if sleeping(state) == self.parkers.len() as u64 && searching(state) == 0 {
            self.wake_with_task(task, global);
        } else {
            global.push(task);
            self.notify_external_task();
        }
    }

    /// An outside spawn into a pool whose every worker sleeps: wakes one
    /// under a single hold of the idle lock.
    ///
    /// - A sleeper already waiting on its condvar (or spinning before it
    ///   would wait: `parker.rs`) is handed the task with its token, in the
    ///   parker's cache line. It counts as running, not searching, and
    ///   starts the task without touching the global queue, the state word
    ///   or its peers' queues: that bookkeeping was a measurable part of a
    ///   wake's spawn-to-start time (`BENCHMARKS.md`, "Core design
    ///   figures": sleep-wake-with-task).
    /// - Otherwise (the sleepers are still taking their second look, which
    ///   looks in the global queue) the task is pushed there and the most
    ///   recent sleeper woken as a searcher, as the usual path would do.
    ///
    /// Only when the whole pool sleeps: a handed-off worker does not count
    /// as searching, so it does not hold back the next spawn's wake. In an
    /// idle pool that costs one extra wake when a burst starts (its second
    /// spawn wakes a searcher the usual way, which throttles the rest); in a
    /// busy pool, where spawns keep finding a sleeper, every such spawn could
    /// wake one (not measured: the rule avoids it), so there the usual path
    /// runs. Either way someone is woken
    /// after the task is visible or held, so no fence is needed here
    /// (`README.md`, "Handing a task to a sleeper").
    ///
    /// Out of line and cold: inlined, its loop and locks slowed the busy
    /// spawn path around it (`BENCHMARKS.md`, "Core design figures":
    /// sleep-wake-with-task).
    #[cold]
    #[inline(never)]
    fn wake_with_task(&self, task: Task, global: &Injector<Task>) {
        let mut idle = lock(&self.idle);
        let mut task = task;
        // Most recent sleeper first, as `wake_one` takes them.
        for position in (0..idle.len()).rev() {
            let index = idle[position];
            let claim = || {
                idle.remove(position);
                // Straight from sleeping to running: not a searcher.
                self.state.fetch_sub(ONE_SLEEPING, Ordering::SeqCst);
            };
            match self.parkers[index].hand_off_if_waiting(task, claim) {
                Ok(blocked) => {
                    drop(idle);
                    self.waker_log.unparking(index);
                    if blocked {
                        self.parkers[index].notify();
                    }
                    return;
                }
                Err(back) => task = back,
            }
        }
        global.push(task);
        match idle.pop() {
            Some(index) => {
                self.became_searcher();
                drop(idle);
                self.waker_log.unparking(index);
                self.parkers[index].unpark();
            }
            None => {
                // Every sleeper left meanwhile: the usual path decides.
                drop(idle);
                self.notify_external_task();
            }
        }
    }

    /// One registered sleeper becomes a searcher (with `idle` locked).
    fn became_searcher(&self) {
        self.state
            .fetch_add(ONE_SEARCHING.wrapping_sub(ONE_SLEEPING), Ordering::SeqCst);
    }

    /// Called by a spawner after pushing a task to the global queue.
    pub(crate) fn notify_external_task(&self) {
        // SeqCst fence: pairs with the fence in `register_sleeper`. Either the
        // sleeper's second look sees our push, or we see its registration.
        if !broken!("__broken_no_spawn_fence") {
            fence(Ordering::SeqCst);
        }
        self.wake_one_unless_searching(1);
    }

    /// Called by a worker after pushing a task to its own local queue.
    ///
    /// No fence here, deliberately: the owner of a local queue is awake (it
    /// is running the task that spawned) and will run the task itself if
    /// nobody steals it, so a missed wake can cost parallelism for a moment
    /// but can never strand a task. The next spawn sees the sleeper.
    pub(crate) fn notify_local_task(&self) {
        self.wake_one_unless_searching(1);
    }

    /// Called by a worker after sharing a fork, with `on_offer` forks now
    /// in its shared list: wakes a sleeper unless at least `on_offer`
    /// workers already search.
    ///
    /// A spawned task wakes nobody while anyone searches (one searcher
    /// finds it, and a stream of tiny tasks needs no more), but a shared
    /// fork is the oldest, so largest, piece of a computation, and each of
    /// a worker's shared forks can keep a worker busy: with the one-searcher
    /// rule a burst of coarse work reached the pool one wake after another,
    /// each thief waking the next, so by the protocol the last of `n`
    /// workers starts about `n` wake latencies after the first (a model,
    /// not yet timed on many cores: `BENCHMARKS.md`, "Coarse fork-join:
    /// wakes in parallel"). With one fork on offer this is the local rule.
    /// No fence, as for [`notify_local_task`](Self::notify_local_task): the
    /// owner takes back a fork nobody took.
    ///
    /// A build with `--cfg dreadpool_share_wakes_one` keeps the earlier
    /// rule (wake only while nobody searches), so that one many-core run
    /// can time both (`dreadpool-bench/scripts/sixteen-cores.sh coarse`).
    pub(crate) fn notify_shared_forks(&self, on_offer: usize) {
        let enough = if cfg!(dreadpool_share_wakes_one) {
            1
        } else {
            on_offer as u64
        };
        self.wake_one_unless_searching(enough);
    }

    /// Wakes one sleeper, if any, unless at least `enough` workers already
    /// search (1 for a spawned task: nobody may be searching).
    fn wake_one_unless_searching(&self, enough: u64) {
        // Relaxed: the fence before (or the argument above) does the ordering;
        // this is a plain read of a line that only sleep transitions write.
        let state = self.state.load(Ordering::Relaxed);
        if sleeping(state) > 0 && searching(state) < enough {
            self.wake_one();
        }
    }

    /// Wakes one sleeper, if any, which becomes a searcher.
    pub(crate) fn wake_one(&self) {
        let woken = {
            let mut idle = lock(&self.idle);
            let woken = idle.pop();
            if woken.is_some() {
                self.became_searcher();
            }
            woken
        };
        if let Some(index) = woken {
            self.waker_log.unparking(index);
            self.parkers[index].unpark();
        }
    }

    /// Wakes worker `index` if it is registered as a sleeper (it becomes a
    /// searcher); does nothing if it is awake. For latches, whose waiter must
    /// be woken however many others sleep.
    pub(crate) fn wake_specific(&self, index: usize) {
        let found = {
            let mut idle = lock(&self.idle);
            match idle.iter().position(|&i| i == index) {
                Some(position) => {
                    idle.swap_remove(position);
                    self.became_searcher();
                    true
                }
                None => false,
            }
        };
        if found {
            self.waker_log.unparking(index);
            self.parkers[index].unpark();
        }
    }

    /// Wakes every sleeper (shutdown, or a refused spawn that may have made
    /// the pool idle). Each becomes a searcher.
    pub(crate) fn wake_all(&self) {
        let woken = {
            let mut idle = lock(&self.idle);
            let woken = std::mem::take(&mut *idle);
            let n = woken.len() as u64;
            if n > 0 {
                self.state.fetch_add(
                    (n * ONE_SEARCHING).wrapping_sub(n * ONE_SLEEPING),
                    Ordering::SeqCst,
                );
            }
            woken
        };
        for index in woken {
            self.waker_log.unparking(index);
            self.parkers[index].unpark();
        }
    }

    /// Registers worker `index` as a sleeper. `was_searching` says whether it
    /// was counted as a searcher, which it stops being.
    ///
    /// After this returns, the worker must look at every queue (and the
    /// shutdown flag) once more, then call [`park`](Self::park) or
    /// [`cancel`](Self::cancel).
    pub(crate) fn register_sleeper(&self, index: usize, was_searching: bool) {
        {
            let mut idle = lock(&self.idle);
            idle.push(index);
            // Its local queue is empty: searchers may skip it from now on.
            self.awake.remove(index);
            let delta = if was_searching {
                ONE_SLEEPING.wrapping_sub(ONE_SEARCHING)
            } else {
                ONE_SLEEPING
            };
            self.state.fetch_add(delta, Ordering::SeqCst);
        }
        // SeqCst fence: pairs with the fence in `notify_external_task` (lost
        // wakeup), with the joiner's fence in `IdleLatch::wait` (a join that
        // misses the last task) and orders our completion counts before the
        // reads of the join waiters count.
        fence(Ordering::SeqCst);
    }

    /// Takes back worker `index`'s registration because its second look found
    /// work (or it is exiting). Afterwards the worker counts as searching,
    /// unless a task was handed to it: then it is returned, and the worker
    /// counts as running.
    pub(crate) fn cancel(&self, index: usize) -> Option<Task> {
        // Awake again before it takes any task (`awake.rs`).
        self.awake.insert(index);
        {
            let mut idle = lock(&self.idle);
            if let Some(position) = idle.iter().position(|&i| i == index) {
                idle.swap_remove(position);
                self.became_searcher();
                return None;
            }
        }
        // A waker popped us between our registration and now, and is about to
        // unpark us (it already counted us as searching, or as running if it
        // hands us a task: `wake_with_task` only does so once we wait, so
        // not here, but nothing depends on that). Consume that token now, or our next `park` would
        // return at once while we are listed.
        self.parkers[index].park()
    }

    /// Parks worker `index` until a waker pops it from the idle list. It
    /// then counts as searching, or as running with the task handed to it,
    /// which is returned.
    pub(crate) fn park(&self, index: usize) -> Option<Task> {
        let handed = self.parkers[index].park();
        // Awake again before it takes any task (`awake.rs`).
        self.awake.insert(index);
        handed
    }

    /// Like [`park`](Self::park), but gives up at `deadline`; either way
    /// the worker is no longer registered afterwards.
    pub(crate) fn park_until(&self, index: usize, deadline: std::time::Instant) -> Option<Task> {
        match self.parkers[index].park_until(deadline) {
            Parked::Woken(task) => {
                self.awake.insert(index);
                task
            }
            Parked::TimedOut => self.cancel(index),
        }
    }

    /// Whether worker `index` may have tasks in its local queue: false only
    /// while it is registered as a sleeper, whose queue is empty
    /// (`awake.rs`). A hint: searchers skip the queues it rules out.
    #[inline]
    pub(crate) fn may_have_local_work(&self, index: usize) -> bool {
        self.awake.contains(index)
    }

    /// Worker stops searching (it found work, or it exits). Returns true when
    /// it was the last searcher and more sleepers remain: the caller should
    /// then wake one if there is more work than it can take, because spawners
    /// skipped waking while it searched.
    pub(crate) fn stop_searching(&self) -> bool {
        let previous = self.state.fetch_sub(ONE_SEARCHING, Ordering::SeqCst);
        searching(previous) == 1 && sleeping(previous) > 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    //! Each way an outside spawn reaches a worker, driven step by step: the
    //! worker side is played by this thread or one spawned thread, ordered
    //! by observed state (the parker says when it waits), never by sleeps.

    use super::*;
    use crate::queue::Steal;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    fn flag_task(flag: &Arc<AtomicBool>) -> Task {
        let flag = Arc::clone(flag);
        Task::new(move || flag.store(true, Ordering::Relaxed))
    }

    /// Registers worker `index` and parks it on its own thread, returning
    /// that thread once the worker waits on its condvar.
    fn parked(sleep: &Arc<Sleep>, index: usize) -> std::thread::JoinHandle<Option<Task>> {
        sleep.register_sleeper(index, false);
        let worker = {
            let sleep = Arc::clone(sleep);
            std::thread::spawn(move || sleep.park(index))
        };
        while !sleep.parkers[index].is_waiting() {
            std::thread::yield_now();
        }
        worker
    }

    #[test]
    fn a_waiting_sleeper_of_an_idle_pool_is_handed_the_task() {
        let sleep = Arc::new(Sleep::new(1, WakerLog::none()));
        let global = Injector::new();
        let worker = parked(&sleep, 0);
        let ran = Arc::new(AtomicBool::new(false));
        sleep.deliver_external_task(flag_task(&ran), &global);
        let task = worker
            .join()
            .unwrap()
            .expect("the task comes with the token");
        assert!(
            global.is_empty(),
            "a handed-off task skips the global queue"
        );
        // It counts as running: neither sleeping nor searching.
        assert_eq!(sleep.state.load(Ordering::Relaxed), 0);
        task.run();
        assert!(ran.load(Ordering::Relaxed));
    }

    #[test]
    fn a_sleeper_still_taking_its_second_look_finds_the_task_in_the_global_queue() {
        let sleep = Sleep::new(1, WakerLog::none());
        let global = Injector::new();
        sleep.register_sleeper(0, false);
        let ran = Arc::new(AtomicBool::new(false));
        sleep.deliver_external_task(flag_task(&ran), &global);
        assert!(!global.is_empty(), "the second look must be able to see it");
        // It was woken as a searcher: taking back its registration consumes
        // that plain token.
        assert_eq!(sleep.state.load(Ordering::Relaxed), ONE_SEARCHING);
        assert!(sleep.cancel(0).is_none());
        assert!(matches!(global.steal(), Steal::Success(_)));
    }

    #[test]
    fn a_pool_with_a_worker_awake_gets_the_usual_path() {
        let sleep = Arc::new(Sleep::new(2, WakerLog::none()));
        let global = Injector::new();
        let worker = parked(&sleep, 0);
        let ran = Arc::new(AtomicBool::new(false));
        sleep.deliver_external_task(flag_task(&ran), &global);
        // Worker 1 is awake: the task is queued and the sleeper woken to
        // search for it, as a searcher that holds back further wakes.
        assert!(worker.join().unwrap().is_none());
        assert!(!global.is_empty());
        assert_eq!(sleep.state.load(Ordering::Relaxed), ONE_SEARCHING);
    }

    #[test]
    fn a_searcher_holds_back_the_handoff() {
        let sleep = Arc::new(Sleep::new(2, WakerLog::none()));
        let global = Injector::new();
        let first = parked(&sleep, 0);
        let second = parked(&sleep, 1);
        sleep.wake_one();
        assert!(
            second.join().unwrap().is_none(),
            "most recent sleeper first"
        );
        // Worker 1 searches; worker 0 still waits: no handoff, no wake.
        let ran = Arc::new(AtomicBool::new(false));
        sleep.deliver_external_task(flag_task(&ran), &global);
        assert!(!global.is_empty());
        // Nothing was claimed: worker 0 still sleeps, worker 1 still searches.
        assert_eq!(
            sleep.state.load(Ordering::Relaxed),
            ONE_SLEEPING + ONE_SEARCHING
        );
        sleep.wake_all();
        assert!(first.join().unwrap().is_none());
    }

    #[test]
    fn each_fork_on_offer_may_wake_a_sleeper_while_fewer_search() {
        let sleep = Arc::new(Sleep::new(4, WakerLog::none()));
        let sleepers: Vec<_> = (1..4).map(|index| parked(&sleep, index)).collect();
        // The sharing worker's first fork: nobody searches, one is woken.
        sleep.notify_shared_forks(1);
        assert_eq!(
            sleep.state.load(Ordering::Relaxed),
            2 * ONE_SLEEPING + ONE_SEARCHING
        );
        // A second fork on offer while that one still searches: a spawned
        // task would wake nobody here, a shared fork wakes one more.
        sleep.notify_shared_forks(2);
        assert_eq!(
            sleep.state.load(Ordering::Relaxed),
            ONE_SLEEPING + 2 * ONE_SEARCHING,
            "two forks on offer, one searcher: a second is woken"
        );
        // As many searchers as forks on offer: nobody more.
        sleep.notify_shared_forks(2);
        assert_eq!(
            sleep.state.load(Ordering::Relaxed),
            ONE_SLEEPING + 2 * ONE_SEARCHING
        );
        sleep.wake_all();
        for sleeper in sleepers {
            assert!(sleeper.join().unwrap().is_none());
        }
    }
}
