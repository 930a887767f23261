//! A host application's request span follows its work onto the pool.
//!
//! Run with `cargo run --example tracing`: every log line a task writes
//! carries the `request{id=..}` span it was spawned in, inside the worker's
//! own `dreadpool.worker{pool=.. worker=..}` span.

use dreadpool::ThreadPoolBuilder;
use tracing::{info, info_span};

fn main() {
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .init();

    let pool = ThreadPoolBuilder::new()
        .with_threads(2)
        .with_thread_name("app-pool")
        .build();

    for id in 0..3 {
        let _request = info_span!("request", id).entered();
        info!("handling the request on the caller's thread");
        pool.spawn(move || {
            info!(id, "working on the pool");
        });
    }
    pool.spawn(|| panic!("a task panics: logged at ERROR, worker respawned at WARN"));
    pool.join();
}
