//! A global pool started by its first use cannot be configured afterwards.

use rayon_core::ThreadPoolBuilder;

#[test]
fn build_global_after_first_use_is_an_error() {
    let (a, b) = rayon_core::join(|| 1, || 2);
    assert_eq!(a + b, 3);
    let error = ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "The global thread pool has already been initialized."
    );
}
