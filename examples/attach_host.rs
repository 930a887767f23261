//! Placeholder: see issue 5.

fn main() {}
