//! A live terminal dashboard of a dreadpool's workers (work in progress: see issue 5).

fn main() {}
