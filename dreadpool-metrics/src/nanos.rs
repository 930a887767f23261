//! `Duration`s on the wire: integer nanoseconds (`#[serde(with = "nanos")]`).
//!
//! serde's own `Duration` form is `{"secs":..,"nanos":..}`; one integer is
//! easier to read in a dump and to use from other languages.

use serde::{Deserialize, Deserializer, Serializer};
use std::time::Duration;

/// `d` in whole nanoseconds, saturating at `u64::MAX` (584 years).
pub(crate) fn of(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(of(*d))
}

pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    u64::deserialize(d).map(Duration::from_nanos)
}
