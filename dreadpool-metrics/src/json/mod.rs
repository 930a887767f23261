//! The JSON codec of the wire protocol and of recordings: serde's data
//! model to compact JSON text and back, written here instead of taken from
//! serde_json.
//!
//! Why not serde_json: a crate that links serde_json brings its impls of
//! std traits into every build that depends on it, among them
//! `impl PartialEq<serde_json::Value> for u64` (and for `i32`, `f64`,
//! `str`, ...). With those in scope, code that compiled before stops
//! inferring its types: `let total = iter.sum(); assert_eq!(expected, total)`
//! no longer knows what `total` is (rayon's own test suite fails to build
//! with them). This crate is linked into users' builds by the facade's
//! `metrics` feature, and by the drop-in `rayon-core` (`compat/`), which
//! must turn observability on by default without changing what its users'
//! code means. So the library speaks JSON itself; serde (the traits and
//! the derives) stays, and serde_json remains a dev-dependency, the
//! independent cross-check of this module's tests.
//! `dreadpool-core/src/recorder/chrome_json.rs` writes its JSON by hand for
//! the same reason.
//!
//! What it covers is what the wire types need, with serde_json's behaviour
//! wherever a reader could tell the difference: compact output in field
//! order, byte for byte what serde_json writes (floats in shortest
//! round-trip form, laid out as serde_json lays them out, so that every f64
//! reads back bit-exact; NaN and infinities written as `null`; `float.rs`
//! says where a float's last digit can differ); numbers read as serde_json classifies
//! them (u64, then i64, then f64); every escape, with surrogate pairs;
//! input driven `deserialize_any` for internally tagged enums and
//! `flatten`; unknown fields skipped; and the same nesting limit, so that
//! hostile bytes on the exporter's socket get an error, never a panic.

mod de;
mod error;
mod float;
mod ser;
#[cfg(test)]
mod tests;

pub(crate) use error::Error;

/// `value` as one line of compact JSON (no newline).
pub(crate) fn to_vec<T: serde::Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    let mut serializer = ser::Serializer::new();
    value.serialize(&mut serializer)?;
    Ok(serializer.into_inner())
}

/// Reads a `T` from `bytes`: one JSON value, with only whitespace around
/// it.
pub(crate) fn from_slice<'de, T: serde::Deserialize<'de>>(bytes: &'de [u8]) -> Result<T, Error> {
    let mut deserializer = de::Deserializer::from_slice(bytes)?;
    let value = T::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}
