//! rayon's free `spawn` and `spawn_fifo`: into the current pool, or the
//! global one.

/// Runs `func` in the background on the current pool (the global pool
/// outside every pool). A panic in it goes to the pool's panic handler, or
/// aborts the process if it has none, as in rayon.
///
/// ```
/// let (sent, received) = std::sync::mpsc::channel();
/// rayon_core::spawn(move || sent.send(6 * 7).unwrap());
/// assert_eq!(received.recv().unwrap(), 42);
/// ```
pub fn spawn<F>(func: F)
where
    F: FnOnce() + Send + 'static,
{
    match dreadpool::current() {
        Some(pool) => pool.spawn(func),
        None => crate::global::pool().spawn(func),
    }
}

/// Like [`spawn`], in FIFO order with the calling thread's other FIFO
/// spawns (from outside a pool, in the order of the global queue).
pub fn spawn_fifo<F>(func: F)
where
    F: FnOnce() + Send + 'static,
{
    match dreadpool::current() {
        Some(pool) => pool.spawn_fifo(func),
        None => crate::global::pool().spawn_fifo(func),
    }
}
