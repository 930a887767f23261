//! Writing a recording in the Chrome JSON trace event format (placeholder:
//! written by the encoder work in progress).

use super::recording::Recording;
use std::io::{self, Write};

impl Recording {
    /// Writes the recording in the Chrome JSON trace event format.
    pub fn write_chrome_json<W: Write>(&self, _out: W) -> io::Result<()> {
        Err(io::Error::other("not yet written"))
    }
}
