//! Placeholder: see issue 4.

fn main() {}
