//! The work-stealing scheduler behind [dreadpool](https://docs.rs/dreadpool).
//!
//! Most users depend on the `dreadpool` facade crate, which re-exports all of
//! this. The design, in the seed's words: `spawn` from outside pushes to a
//! global queue; each worker tops off its local queue from it, runs local
//! tasks, steals batches from peers when it runs dry, and sleeps when there is
//! nothing anywhere, woken by the next spawn without a lost wakeup.
//!
//! - [`ThreadPoolBuilder`] configures and starts a [`ThreadPool`].
//! - [`ThreadPool::spawn`] / [`Handle::spawn`] run a closure on the pool.
//! - [`ThreadPool::join`] waits until the pool is idle; dropping the pool
//!   drains it and joins its threads.
//! - [`PanicPolicy`] decides what a panicking task does to its worker.
//!
//! ```
//! use dreadpool::ThreadPoolBuilder;
//!
//! let pool = ThreadPoolBuilder::new().with_threads(2).build();
//! let (tx, rx) = std::sync::mpsc::channel();
//! pool.spawn(move || tx.send(6 * 7).unwrap());
//! assert_eq!(rx.recv().unwrap(), 42);
//! ```

mod builder;
mod error;
mod handle;
mod idle_latch;
mod panic;
mod pending;
mod pool;
mod queue;
mod registry;
mod sleep;
mod sync;
mod task;
mod trace;
mod worker;

pub use builder::{
    ThreadPoolBuilder, DEFAULT_BACKLOG, DEFAULT_THREAD_NAME, MAX_STACK_SIZE, MAX_THREADS,
    MIN_STACK_SIZE, THREADS_ENV,
};
pub use error::{BuildError, SpawnError};
pub use handle::Handle;
pub use panic::{PanicPayload, PanicPolicy};
pub use pool::ThreadPool;
