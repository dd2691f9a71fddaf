//! The `toolstream` command-line tool.
fn main() {}
