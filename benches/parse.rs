//! Parser benchmarks (criterion harness; none are defined yet).

fn main() {}
