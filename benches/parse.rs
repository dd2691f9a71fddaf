//! Parser benchmarks (see `dialects.rs` for the dialect benchmarks).
fn main() {}
