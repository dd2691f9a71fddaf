//! Planning utilities: what to do with calls before and after they run.
//!
//! | module | what it does |
//! |---|---|
//! | [`errors`] | structured tool errors with codes, retry strategy and a message for the model (RFC-136 §6) |
//! | [`loops`] | loop detection from the conversation alone (seed 001 §5.3) |
//! | [`parallel`] | read/write classification and batching of calls (RFC-136 §9) |
//! | [`namespace`] | several servers' tools under `mcp__server__tool` (RFC-136 §12) |
//! | [`shaping`] | results capped to a budget at a line boundary (RFC-136 §11) |
//! | [`audit`] | tool description audit with fixes (RFC-136 §8) |
//! | [`intent`] | opt-in text-intent fallback (seed 003 approach 4) |

pub mod audit;
pub mod errors;
pub mod intent;
pub mod loops;
pub mod namespace;
pub mod parallel;
pub mod shaping;
