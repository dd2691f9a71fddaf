#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod config;
pub mod dialect;
pub mod error;
pub mod event;
pub mod json;

pub use config::{Config, IdGenerator, Limits, ToolSpec, Tools};
pub use dialect::Dialect;
pub use error::{NoJson, ToolsError, UnknownDialect};
pub use event::{
    DiagnosticKind, ErrorKind, Event, FinishReason, Repair, RepairKind, Span, ToolCall, Usage,
};
