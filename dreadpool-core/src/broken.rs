//! Deliberately broken variants of the concurrency protocols, each marked
//! at the one site where it differs from the real protocol.
//!
//! `broken!("__broken_NAME")` is true only under `--cfg loom` with the
//! crate feature `__broken_NAME`: there a loom model in `tests/loom.rs`
//! must catch the bug (`.ci/run`'s `must_fail` list checks that it does).
//! Everywhere else it is the constant `false`, so each site folds to the
//! real protocol, and `--all-features` builds stay correct.

/// True only when loom checks the broken variant `$name` (see the module
/// docs).
macro_rules! broken {
    ($name:literal) => {
        cfg!(all(loom, feature = $name))
    };
}
