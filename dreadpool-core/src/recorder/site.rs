//! Where a task was spawned: the caller of `spawn` (or of a scope's spawn,
//! `spawn_with_handle`, `try_spawn`, `broadcast`'s inbox spawns, `install`),
//! or of the `join` whose fork another worker took, taken with
//! `#[track_caller]` at the recorder's `Tasks` level.
//!
//! The hot path stores only the address of the `&'static Location` (in the
//! spawn or shared fork's event's second word, `event.rs`); a [`SpawnSite`]
//! is made from it when a recording is taken.

use std::fmt;
use std::panic::Location;
use std::str::FromStr;
use std::sync::Arc;

/// The source location of a spawn: the line of the user's `spawn` call.
///
/// Displayed as `file:line` (for example `src/server.rs:88`), the way the
/// exports name a task slice; [`FromStr`] reads that form back, with or
/// without a `:column`.
///
/// ```
/// use dreadpool::SpawnSite;
///
/// let site: SpawnSite = "src/server.rs:88:17".parse().unwrap();
/// assert_eq!(site.file(), "src/server.rs");
/// assert_eq!(site.line(), 88);
/// assert_eq!(site.column(), 17);
/// assert_eq!(site.to_string(), "src/server.rs:88");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SpawnSite {
    /// Shared: a recording's tasks from one site share it.
    file: Arc<str>,
    line: u32,
    column: u32,
}

impl SpawnSite {
    /// A site from its parts (`column` 0 when unknown).
    pub fn new(file: impl Into<String>, line: u32, column: u32) -> Self {
        SpawnSite {
            file: Arc::from(file.into()),
            line,
            column,
        }
    }

    /// The source file, as the compiler names it (relative to the
    /// package's workspace for a local crate).
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The line of the spawn call, from 1.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The column of the spawn call, from 1 (0 when unknown, as in a site
    /// read back from `file:line`).
    pub fn column(&self) -> u32 {
        self.column
    }
}

impl From<&Location<'_>> for SpawnSite {
    fn from(location: &Location<'_>) -> Self {
        SpawnSite::new(location.file(), location.line(), location.column())
    }
}

impl fmt::Display for SpawnSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// A string that is not a spawn site (`file:line` or `file:line:column`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a spawn site (file:line or file:line:column): {text:?}")]
pub struct ParseSpawnSiteError {
    text: String,
}

impl FromStr for SpawnSite {
    type Err = ParseSpawnSiteError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || ParseSpawnSiteError {
            text: text.to_owned(),
        };
        let (rest, last) = text.rsplit_once(':').ok_or_else(error)?;
        let last: u32 = last.parse().map_err(|_| error())?;
        // `file:line:column` when what precedes the last number ends in one.
        if let Some((file, line)) = rest.rsplit_once(':') {
            if let Ok(line) = line.parse::<u32>() {
                if !file.is_empty() {
                    return Ok(SpawnSite::new(file, line, last));
                }
            }
        }
        if rest.is_empty() || rest.ends_with(':') {
            return Err(error());
        }
        Ok(SpawnSite::new(rest, last, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_parses_back() {
        let site = SpawnSite::new("src/server.rs", 88, 9);
        assert_eq!(site.to_string(), "src/server.rs:88");
        let back: SpawnSite = site.to_string().parse().unwrap();
        assert_eq!(back, SpawnSite::new("src/server.rs", 88, 0));
        assert_eq!("a:b:3:4".parse(), Ok(SpawnSite::new("a:b", 3, 4)));
    }

    #[test]
    fn rejects_what_is_not_a_site() {
        for text in ["", "src/server.rs", "src/server.rs:x", ":12", "::1"] {
            assert!(text.parse::<SpawnSite>().is_err(), "{text:?}");
        }
    }
}
