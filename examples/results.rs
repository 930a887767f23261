//! Results and panics through `TaskHandle`s, and `current()`.
//!
//! `cargo run --example results`: spawns tasks that return values, one that
//! panics, and one that fans out into the pool it runs in via
//! `dreadpool::current()`, then prints what each handle gave back.

use dreadpool::ThreadPoolBuilder;

fn main() {
    let pool = ThreadPoolBuilder::new().with_threads(2).build();

    let squares: Vec<_> = (1..=5u64)
        .map(|i| pool.spawn_with_handle(move || i * i))
        .collect();
    let squares: Vec<u64> = squares.into_iter().map(|h| h.join().unwrap()).collect();
    println!("squares: {squares:?}");

    let failing = pool.spawn_with_handle(|| -> u64 { panic!("this task fails") });
    match failing.join() {
        Ok(value) => println!("unexpected value {value}"),
        Err(payload) => {
            let message = payload.downcast_ref::<&str>().copied().unwrap_or("?");
            println!(
                "the failing task panicked with {message:?}; the pool saw {} panics",
                pool.panic_count()
            );
        }
    }

    // Library code deep inside a task finds its pool without being handed it.
    let total = pool
        .spawn_with_handle(|| {
            let here = dreadpool::current().expect("running inside a pool");
            let parts: Vec<_> = (0..4u64)
                .map(|i| here.spawn_with_handle(move || (i * 250..(i + 1) * 250).sum::<u64>()))
                .collect();
            parts.into_iter().map(|h| h.join().unwrap()).sum::<u64>()
        })
        .join()
        .unwrap();
    println!("sum of 0..1000 computed by nested tasks: {total}");
    assert_eq!(total, 499_500);
}
