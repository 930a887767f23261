//! A `tracing` subscriber that panics on every event and every span must not
//! take the pool down: no worker dies, no count is left dangling, `join()`
//! returns. (tracing-subscriber's fmt layer really does panic, via `eprint!`,
//! when both its writer and stderr are closed pipes.)
#![cfg(feature = "tracing")]

use dreadpool_core::{PanicPolicy, ThreadPoolBuilder};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

struct Hostile;

impl Subscriber for Hostile {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        panic!("hostile subscriber: new_span")
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {
        panic!("hostile subscriber: event")
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn a_panicking_subscriber_cannot_hang_or_shrink_the_pool() {
    tracing::subscriber::set_global_default(Hostile).unwrap();
    for policy in [PanicPolicy::Respawn, PanicPolicy::Continue] {
        let pool = Arc::new(
            ThreadPoolBuilder::new()
                .with_threads(2)
                .with_panic_policy(policy)
                .build(),
        );
        let done = Arc::new(AtomicUsize::new(0));
        for i in 0..2000 {
            let (p, d) = (Arc::clone(&pool), Arc::clone(&done));
            pool.spawn(move || {
                // Children make the other worker steal (traced at TRACE).
                for _ in 0..3 {
                    let d = Arc::clone(&d);
                    p.spawn(move || {
                        d.fetch_add(1, Ordering::Relaxed);
                    });
                }
                if i % 10 == 0 {
                    panic!("task panic, logged through the hostile subscriber");
                }
            });
        }
        // A worker killed by the subscriber would leave its owed count
        // behind: join would never return.
        assert!(
            pool.join_timeout(std::time::Duration::from_secs(60)),
            "{policy:?}: hung"
        );
        assert_eq!(done.load(Ordering::Relaxed), 6000, "{policy:?}");
        assert_eq!(pool.panic_count(), 200, "{policy:?}");
    }
}
