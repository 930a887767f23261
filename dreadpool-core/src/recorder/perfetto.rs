//! Writing a recording as a Perfetto protobuf trace (placeholder: written
//! by the encoder work in progress).

use super::recording::Recording;
use std::io::{self, Write};

impl Recording {
    /// Writes the recording as a Perfetto trace (TrackEvent protobuf).
    pub fn write_perfetto<W: Write>(&self, _out: W) -> io::Result<()> {
        Err(io::Error::other("not yet written"))
    }
}
