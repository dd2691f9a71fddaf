//! Error types.
//!
//! Parsing model output never fails: malformed input is repaired or kept as
//! text. Errors exist only for what the caller hands in (a tool list, a dialect
//! name) and for the one-shot JSON repairer when there is no JSON at all.

use std::fmt;

/// A tool list could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolsError {
    /// The text is not JSON.
    Json(serde_json::Error),
    /// The JSON is not a list of tools.
    Shape(String),
}

impl fmt::Display for ToolsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolsError::Json(e) => write!(f, "tool list is not valid JSON: {e}"),
            ToolsError::Shape(m) => write!(f, "tool list has an unexpected shape: {m}"),
        }
    }
}

impl std::error::Error for ToolsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ToolsError::Json(e) => Some(e),
            ToolsError::Shape(_) => None,
        }
    }
}

/// A dialect or model name was not recognised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownDialect(pub String);

impl fmt::Display for UnknownDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown dialect `{}` (known: {})",
            self.0,
            crate::Dialect::ALL
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

impl std::error::Error for UnknownDialect {}

/// [`crate::json::repair_document`] found no JSON value in its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoJson;

impl fmt::Display for NoJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no JSON value found in the input")
    }
}

impl std::error::Error for NoJson {}
