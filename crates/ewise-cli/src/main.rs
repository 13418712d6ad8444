//! The `ewise` command (work in progress).
fn main() {}
