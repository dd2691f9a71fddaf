//! Long-form documentation, rendered here so that it is at hand wherever
//! the crate's documentation is (docs.rs included). Nothing in this module
//! is code.

pub mod benchmarks {
    //! The benchmark results (the repository's `BENCHMARKS.md`).
    #![doc = include_str!("../BENCHMARKS.md")]
}
