//! The seed README's Getting Started program, unchanged: prints `Final count: 100`.

use dreadpool::ThreadPoolBuilder;
use std::sync::{Arc, Mutex};

fn main() {
    let pool = ThreadPoolBuilder::default()
        .with_threads(4)
        .with_thread_name("dreadpool-worker")
        .build();

    let counter = Arc::new(Mutex::new(0));

    for _ in 0..100 {
        let counter = Arc::clone(&counter);
        pool.spawn(move || {
            let mut n = counter.lock().unwrap();
            *n += 1;
        });
    }

    pool.join(); // blocks until all tasks complete

    println!("Final count: {}", *counter.lock().unwrap()); // 100
}
