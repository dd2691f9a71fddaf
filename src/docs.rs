//! Long-form documentation, rendered here so that it is at hand wherever
//! the crate's documentation is (docs.rs included); in the repository these
//! are the files of `docs/` and `BENCHMARKS.md`. Nothing in this module is
//! code.

pub mod contracts {
    //! The contracts every layer keeps (`docs/contracts.md`).
    #![doc = include_str!("../docs/contracts.md")]
}

pub mod dialects {
    //! The dialects auto-detection reads (`docs/dialects.md`).
    #![doc = include_str!("../docs/dialects.md")]
}

pub mod repairs {
    //! The JSON repair policies (`docs/repairs.md`).
    #![doc = include_str!("../docs/repairs.md")]
}

pub mod configuration {
    //! Configuration, limits and buffers (`docs/configuration.md`).
    #![doc = include_str!("../docs/configuration.md")]
}

pub mod limits {
    //! Every limit, the memory bound it gives, and what a server must do
    //! with the limits per request (`docs/limits.md`).
    #![doc = include_str!("../docs/limits.md")]
}

pub mod providers {
    //! Provider streams: decoders and encoders (`docs/providers.md`).
    #![doc = include_str!("../docs/providers.md")]
}

pub mod engineering {
    //! Testing, fuzzing, performance and layout (`docs/engineering.md`).
    #![doc = include_str!("../docs/engineering.md")]
}

pub mod benchmarks {
    //! The benchmark results (the repository's `BENCHMARKS.md`).
    #![doc = include_str!("../BENCHMARKS.md")]
}
