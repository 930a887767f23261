//! Where the global pool is made observable.
//!
//! [`from_env`] is called exactly once, by `global.rs`, right after this
//! crate built the global pool (by
//! [`build_global`](crate::ThreadPoolBuilder::build_global) or on first
//! use). With the `observe` feature (a default one, and so on in every
//! rayon program: `rayon` asks for rayon-core's default features) it hands the pool to
//! `dreadpool::metrics::observe::serve_from_env`: `DREADPOOL_SERVE` serves
//! it to `dreadpool-top --attach` (snapshots and flight recordings, at the
//! `tasks` level unless `DREADPOOL_RECORD` says otherwise),
//! `DREADPOOL_PROMETHEUS` to a Prometheus scrape endpoint. Whatever goes
//! wrong is one line on stderr, and the program carries on unobserved: a
//! rayon program must not fail for its monitoring. Without the feature, a
//! set variable gets a line saying how to turn the feature on.

/// The variables the switch reads, for the line printed without the feature.
#[cfg(not(feature = "observe"))]
const VARIABLES: [&str; 3] = [
    "DREADPOOL_SERVE",
    "DREADPOOL_PROMETHEUS",
    "DREADPOOL_RECORD",
];

/// Makes the freshly built global pool observable if the environment asks
/// for it.
#[cfg(feature = "observe")]
pub(crate) fn from_env(pool: &'static dreadpool::ThreadPool) {
    match dreadpool::metrics::observe::serve_from_env(pool.handle()) {
        // The global pool lives as long as the process: so does its server.
        Ok(observer) => observer.keep_for_process(),
        Err(error) => eprintln!("rayon-core (dreadpool): the global pool is not observed: {error}"),
    }
}

/// Without the `observe` feature: says so if the environment asks for it.
#[cfg(not(feature = "observe"))]
pub(crate) fn from_env(_pool: &'static dreadpool::ThreadPool) {
    if let Some(var) = VARIABLES.iter().find(|v| std::env::var_os(v).is_some()) {
        eprintln!(
            "rayon-core (dreadpool): {var} is set, but this rayon-core was built without its \
             default `observe` feature; the global pool is not observed"
        );
    }
}
