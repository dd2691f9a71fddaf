#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod arena;
pub mod config;
pub mod dialect;
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

pub use config::{Config, IdGenerator, Limits, ToolSpec, Tools};
pub use dialect::Dialect;
pub use encode::{EncodeOptions, Encoder, Target};
pub use error::{NoJson, ToolsError, UnknownDialect};
pub use event::{
    Delta, DiagnosticKind, ErrorKind, Event, FinishReason, OpaqueKind, Repair, RepairKind, Span,
    ToolCall, Usage,
};
pub use frame::{FrameError, FrameLimits};
pub use model::{ModelRoute, ModelSpec};
pub use parser::{parse, parse_chunks, Parsed, Parser};
pub use provider::{DecodeOptions, Framing, Provider, StreamDecoder, UnknownProvider};
