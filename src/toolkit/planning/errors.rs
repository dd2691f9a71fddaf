//! Structured tool errors (RFC-136 §6): a code, whether a retry can help,
//! how to retry, a suggested fix, and the text the model sees.
//!
//! ```
//! use toolstream::toolkit::planning::errors::{ErrorCode, RetryPolicy, ToolError};
//! let e = ToolError::classify("read_file", "ENOENT: no such file or directory, open 'src/mian.rs'");
//! assert_eq!(e.code, ErrorCode::NotFound);
//! assert!(RetryPolicy::default().should_retry(&e, 1));
//! assert!(e.render().starts_with("Error (not_found) from read_file:"));
//! ```

use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// What kind of failure (RFC-136's eight codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Bad arguments: missing, wrong type, invalid format.
    Validation,
    /// Not allowed: path outside the workspace, trust level.
    Permission,
    /// File, resource or tool not found.
    NotFound,
    /// The operation timed out.
    Timeout,
    /// A rate limit was hit.
    RateLimit,
    /// The model refused or made no usable call.
    ModelRefusal,
    /// The tool failed while running.
    Execution,
    /// A network failure.
    Network,
}

impl ErrorCode {
    /// The code's stable name (`not_found`, …).
    pub const fn name(self) -> &'static str {
        match self {
            ErrorCode::Validation => "validation",
            ErrorCode::Permission => "permission",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Timeout => "timeout",
            ErrorCode::RateLimit => "rate_limit",
            ErrorCode::ModelRefusal => "model_refusal",
            ErrorCode::Execution => "execution",
            ErrorCode::Network => "network",
        }
    }

    /// RFC-136's defaults for the code: recoverable, strategy and fix.
    pub fn defaults(self) -> (bool, Strategy, &'static str) {
        match self {
            ErrorCode::Validation => (
                true,
                Strategy::Rephrase,
                "Check the arguments against the tool's schema: every required parameter, the right types, no extra parameters.",
            ),
            ErrorCode::Permission => (
                false,
                Strategy::Abort,
                "The path or action is not allowed (outside the workspace, protected, or blocked by policy). Ask the user.",
            ),
            ErrorCode::NotFound => (
                true,
                Strategy::Rephrase,
                "List the directory to see what exists, check relative against absolute paths, and verify the parent directory.",
            ),
            ErrorCode::Timeout => (
                true,
                Strategy::Same,
                "Split the work into smaller operations or use narrower filters.",
            ),
            ErrorCode::RateLimit => (
                true,
                Strategy::Same,
                "Wait and retry; batch similar operations to make fewer calls.",
            ),
            ErrorCode::ModelRefusal => (
                true,
                Strategy::Rephrase,
                "Call one of the offered tools by its exact name with all required parameters.",
            ),
            ErrorCode::Execution => (
                true,
                Strategy::Escalate,
                "Try different arguments or another approach.",
            ),
            ErrorCode::Network => (
                true,
                Strategy::Same,
                "Network errors are usually transient; retry.",
            ),
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How to retry (RFC-136 §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// The same call again (a transient failure).
    Same,
    /// The model tries different arguments.
    Rephrase,
    /// A more capable strategy (another model, more context).
    Escalate,
    /// Stop and ask the user.
    Abort,
}

/// A tool failure, structured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolError {
    /// The tool.
    pub tool: String,
    /// The code.
    pub code: ErrorCode,
    /// What happened.
    pub message: String,
    /// Whether a retry can help.
    pub recoverable: bool,
    /// How to retry.
    pub strategy: Strategy,
    /// What to do about it.
    pub suggested_fix: Option<String>,
    /// Extra context (the validation errors, the status code).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl ToolError {
    /// An error with the code's defaults.
    pub fn new(tool: impl Into<String>, code: ErrorCode, message: impl Into<String>) -> ToolError {
        let (recoverable, strategy, fix) = code.defaults();
        ToolError {
            tool: tool.into(),
            code,
            message: message.into(),
            recoverable,
            strategy,
            suggested_fix: Some(fix.to_owned()),
            details: None,
        }
    }

    /// Classifies an error message (an exception text, an errno string, an
    /// HTTP status line) into a code, RFC-136's `from_exception` for text.
    pub fn classify(tool: impl Into<String>, message: &str) -> ToolError {
        let m = message.to_ascii_lowercase();
        let has = |ws: &[&str]| ws.iter().any(|w| m.contains(w));
        let code = if has(&[
            "rate limit",
            "ratelimit",
            "too many requests",
            " 429",
            "status 429",
        ]) {
            ErrorCode::RateLimit
        } else if has(&["timed out", "timeout", "deadline exceeded", "etimedout"]) {
            ErrorCode::Timeout
        } else if has(&[
            "permission denied",
            "eacces",
            "eperm",
            "forbidden",
            " 403",
            "not allowed",
            "outside the workspace",
        ]) {
            ErrorCode::Permission
        } else if has(&[
            "no such file",
            "enoent",
            "not found",
            "does not exist",
            " 404",
            "unknown tool",
        ]) {
            ErrorCode::NotFound
        } else if has(&[
            "connection",
            "network",
            "dns",
            "socket",
            "econnrefused",
            "econnreset",
            "unreachable",
        ]) {
            ErrorCode::Network
        } else if has(&[
            "invalid argument",
            "missing required",
            "validation",
            "expected type",
            "invalid type",
            "schema",
            "is required",
            "must be",
        ]) {
            ErrorCode::Validation
        } else {
            ErrorCode::Execution
        };
        ToolError::new(tool, code, message.trim())
    }

    /// The text to send back to the model as the tool result.
    pub fn render(&self) -> String {
        let mut s = format!("Error ({}) from {}: {}", self.code, self.tool, self.message);
        if let Some(f) = &self.suggested_fix {
            s.push_str("\nHow to fix: ");
            s.push_str(f);
        }
        s.push_str(match self.strategy {
            Strategy::Same => "\nThe same call may work if tried again.",
            Strategy::Rephrase => "\nCall the tool again with corrected arguments.",
            Strategy::Escalate => "\nTry a different approach.",
            Strategy::Abort => "\nDo not retry; tell the user.",
        });
        s
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} error from {}: {}",
            self.code, self.tool, self.message
        )
    }
}

impl std::error::Error for ToolError {}

/// When to retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RetryPolicy {
    /// The most attempts of one call, the first included (RFC-136: 3).
    pub max_attempts: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_attempts: 3 }
    }
}

impl RetryPolicy {
    /// Whether attempt `attempt` (1-based) that failed with `e` should be
    /// followed by another.
    pub fn should_retry(&self, e: &ToolError, attempt: u32) -> bool {
        e.recoverable && attempt < self.max_attempts && e.strategy != Strategy::Abort
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        let c = |m: &str| ToolError::classify("t", m).code;
        assert_eq!(c("HTTP 429 Too Many Requests"), ErrorCode::RateLimit);
        assert_eq!(c("operation timed out after 30s"), ErrorCode::Timeout);
        assert_eq!(c("EACCES: permission denied"), ErrorCode::Permission);
        assert_eq!(c("connection refused"), ErrorCode::Network);
        assert_eq!(c("missing required parameter: path"), ErrorCode::Validation);
        assert_eq!(c("segfault"), ErrorCode::Execution);
    }

    #[test]
    fn retry_policy() {
        let p = RetryPolicy::default();
        let e = ToolError::new("t", ErrorCode::Timeout, "slow");
        assert!(p.should_retry(&e, 2) && !p.should_retry(&e, 3));
        assert!(!p.should_retry(&ToolError::new("t", ErrorCode::Permission, "no"), 1));
    }
}
