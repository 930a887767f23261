//! How a pool's threads are started: rayon's `spawn_handler` and the
//! [`ThreadBuilder`] it is handed.
//!
//! rayon's builder carries its spawner in a type parameter,
//! `ThreadPoolBuilder<S = DefaultSpawn>`, and so does this one:
//! [`DefaultSpawn`] lets dreadpool start its own threads (which it can
//! replace after a panic), [`CustomSpawn`] hands each worker to the user's
//! closure, through dreadpool's `try_build_with_spawner`. Both types, and
//! the sealed [`ThreadSpawn`] trait, are public only because they appear in
//! the builder's type; as in rayon, they live in a private module and
//! cannot be named from outside.

use std::fmt;
use std::io;

mod sealed {
    /// Keeps [`ThreadSpawn`](super::ThreadSpawn) implemented only here.
    pub trait Sealed {}
}

/// How a pool's threads are started (sealed: [`DefaultSpawn`] or
/// [`CustomSpawn`]).
pub trait ThreadSpawn: sealed::Sealed {
    /// The user's spawner, if there is one.
    #[doc(hidden)]
    fn custom(&mut self) -> Option<&mut dyn FnMut(ThreadBuilder) -> io::Result<()>>;
}

/// The default: dreadpool starts the threads itself.
#[derive(Debug, Default)]
pub struct DefaultSpawn;

impl sealed::Sealed for DefaultSpawn {}

impl ThreadSpawn for DefaultSpawn {
    fn custom(&mut self) -> Option<&mut dyn FnMut(ThreadBuilder) -> io::Result<()>> {
        None
    }
}

/// The user's spawner, from [`spawn_handler`](crate::ThreadPoolBuilder::spawn_handler).
pub struct CustomSpawn<F>(pub(crate) F);

impl<F> fmt::Debug for CustomSpawn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CustomSpawn").field(&"<closure>").finish()
    }
}

impl<F> sealed::Sealed for CustomSpawn<F> {}

impl<F> ThreadSpawn for CustomSpawn<F>
where
    F: FnMut(ThreadBuilder) -> io::Result<()>,
{
    fn custom(&mut self) -> Option<&mut dyn FnMut(ThreadBuilder) -> io::Result<()>> {
        Some(&mut self.0)
    }
}

/// One worker thread of a pool being built, handed to a
/// [`spawn_handler`](crate::ThreadPoolBuilder::spawn_handler), which must
/// call [`run`](Self::run) on the thread it starts.
///
/// ```
/// let pool = rayon_core::ThreadPoolBuilder::new()
///     .num_threads(2)
///     .thread_name(|i| format!("mine-{i}"))
///     .spawn_handler(|thread| {
///         let mut builder = std::thread::Builder::new();
///         if let Some(name) = thread.name() {
///             builder = builder.name(name.to_owned());
///         }
///         builder.spawn(move || thread.run())?;
///         Ok(())
///     })
///     .build()
///     .unwrap();
/// let names = pool.broadcast(|_| std::thread::current().name().map(str::to_owned));
/// assert_eq!(names, [Some("mine-0".to_owned()), Some("mine-1".to_owned())]);
/// ```
pub struct ThreadBuilder {
    start: dreadpool::WorkerStart,
    /// Whether the builder was given a `thread_name`: rayon reports a name
    /// only then, while dreadpool always has one ready.
    named: bool,
}

impl ThreadBuilder {
    pub(crate) fn new(start: dreadpool::WorkerStart, named: bool) -> Self {
        ThreadBuilder { start, named }
    }

    /// The index of this thread in the pool, within `0..num_threads`.
    pub fn index(&self) -> usize {
        self.start.index()
    }

    /// The name from the builder's
    /// [`thread_name`](crate::ThreadPoolBuilder::thread_name), if it has one.
    pub fn name(&self) -> Option<&str> {
        self.named.then(|| self.start.name())
    }

    /// The stack size from the builder's
    /// [`stack_size`](crate::ThreadPoolBuilder::stack_size), if it has one.
    pub fn stack_size(&self) -> Option<usize> {
        self.start.stack_size()
    }

    /// Runs this worker on the calling thread until its pool is dropped and
    /// has no more work.
    pub fn run(self) {
        self.start.run();
    }
}

impl fmt::Debug for ThreadBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadBuilder")
            .field("index", &self.index())
            .field("name", &self.name())
            .field("stack_size", &self.stack_size())
            .finish()
    }
}
