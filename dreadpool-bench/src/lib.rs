//! dreadpool's benchmark suite (see issue 6).
