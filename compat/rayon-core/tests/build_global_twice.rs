//! `build_global` succeeds once; then it is an error, with rayon's message,
//! and the global pool keeps its first configuration.

use rayon_core::ThreadPoolBuilder;
use std::error::Error;

#[test]
fn build_global_once_then_an_error() {
    ThreadPoolBuilder::new()
        .num_threads(3)
        .build_global()
        .unwrap();
    assert_eq!(rayon_core::current_num_threads(), 3);
    let error = ThreadPoolBuilder::new()
        .num_threads(5)
        .build_global()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "The global thread pool has already been initialized."
    );
    assert!(error.source().is_none());
    assert_eq!(
        rayon_core::current_num_threads(),
        3,
        "the first configuration stays"
    );
    assert_eq!(rayon_core::join(rayon_core::current_num_threads, || 0).0, 3);
}
