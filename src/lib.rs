// The README is the crate's front page. Its links to the other pages are
// reference links: these definitions come first, so rustdoc (docs.rs)
// follows them to the modules of `docs`, while the README's own
// definitions (paths in the repository) serve where it is read as a file.
#![doc = "[docs-contracts]: crate::docs::contracts"]
#![doc = "[docs-dialects]: crate::docs::dialects"]
#![doc = "[docs-repairs]: crate::docs::repairs"]
#![doc = "[docs-configuration]: crate::docs::configuration"]
#![doc = "[docs-limits]: crate::docs::limits"]
#![doc = "[docs-providers]: crate::docs::providers"]
#![doc = "[docs-engineering]: crate::docs::engineering"]
#![doc = "[benchmarks]: crate::docs::benchmarks"]
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod arena;
pub mod config;
pub mod dialect;
pub mod docs;
pub mod encode;
mod envelope;
pub mod error;
pub mod event;
pub mod frame;
pub mod json;
pub mod model;
pub mod ndjson;
#[cfg(feature = "normalize")]
pub mod normalize;
mod parser;
pub mod provider;
#[cfg(feature = "proxy")]
pub mod proxy;
mod scan;
pub mod sse;
#[cfg(feature = "tokio")]
pub mod stream;
#[cfg(feature = "toolkit")]
pub mod toolkit;
pub mod xml;

pub use config::{Config, IdGenerator, LimitKind, Limits, ToolSpec, Tools};
pub use dialect::Dialect;
pub use encode::{EncodeOptions, Encoder, Target};
pub use error::{NoJson, ToolsError, UnknownDialect};
pub use event::{
    CompactString, Delta, DiagnosticKind, ErrorKind, Event, FinishReason, OpaqueKind, Repair,
    RepairKind, Span, ToolCall, Usage,
};
pub use frame::{FrameError, FrameLimits};
pub use model::{ModelRoute, ModelSpec};
pub use parser::{parse, parse_chunks, Parsed, Parser};
pub use provider::{DecodeOptions, Framing, Provider, StreamDecoder, UnknownProvider};
