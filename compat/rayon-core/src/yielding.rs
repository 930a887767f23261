//! Giving way inside a task: rayon's `yield_now` and `yield_local`.

/// What [`yield_now`] or [`yield_local`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Yield {
    /// Another task ran, and has returned.
    Executed,
    /// There was no task to run.
    Idle,
}

impl From<dreadpool::Yield> for Yield {
    fn from(done: dreadpool::Yield) -> Self {
        match done {
            dreadpool::Yield::Executed => Yield::Executed,
            dreadpool::Yield::Idle => Yield::Idle,
        }
    }
}

/// Runs one other task of the current pool, if there is one (the calling
/// thread's own, or one taken from elsewhere); `None` outside every pool.
///
/// ```
/// assert_eq!(rayon_core::yield_now(), None);
/// ```
pub fn yield_now() -> Option<Yield> {
    dreadpool::yield_now().map(Yield::from)
}

/// Runs one task from the calling thread's own queue, if it has one;
/// `None` outside every pool.
pub fn yield_local() -> Option<Yield> {
    dreadpool::yield_local().map(Yield::from)
}
