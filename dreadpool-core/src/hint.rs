//! A hint to the optimiser, on the stable compiler.

/// Marks the path that calls it as unlikely, so that the optimiser lays the
/// likely one out as a straight line (`std::hint::cold_path` is newer than
/// this crate's minimum Rust). A call to a `#[cold]` function makes its
/// block cold; inlined, the call itself costs nothing.
#[cold]
#[inline]
pub(crate) fn cold_path() {}
