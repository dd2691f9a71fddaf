//! Feedback for the model: a call's errors as a short retry message, and
//! that message as an OpenAI `tool` message or an Anthropic `tool_result`
//! with `is_error: true`.
//!
//! The shape (a header line, one bullet per problem — `tool.param: error`,
//! `→ suggestion`, `(expected: …, got: …)` — and a closing line) is the one
//! validation-retry loops use; it is kept short because small models have
//! small contexts.

use serde_json::{json, Value};

use super::error::{CallError, ErrorKind, InvalidReason};

/// The first line of a retry message.
pub const HEADER: &str = "Tool call validation failed. Please fix these issues:";
/// The last line of a retry message.
pub const CLOSING: &str = "Please try the tool call again with corrected arguments.";

/// Renders `errors` of a call to `tool` as a retry message; empty when there
/// is no error.
///
/// ```
/// use toolstream::normalize::{feedback, Catalog};
/// use toolstream::Tools;
/// let tools = Tools::from_json(
///     r#"[{"name": "get_weather", "parameters": {"type": "object",
///         "properties": {"city": {"type": "string"}}, "required": ["city"]}}]"#,
/// ).unwrap();
/// let out = Catalog::new(&tools).normalize("get_weather", "{}");
/// let msg = feedback::message(&out.name, &out.report.errors);
/// assert!(msg.starts_with(feedback::HEADER));
/// assert!(msg.contains("• get_weather.city: missing required parameter `city`"));
/// assert!(msg.contains("→ add `city` (string)"));
/// ```
pub fn message(tool: &str, errors: &[CallError]) -> String {
    if errors.is_empty() {
        return String::new();
    }
    let mut out = String::from(HEADER);
    for e in errors {
        out.push_str("\n• ");
        out.push_str(tool);
        if let Some(p) = e.parameter() {
            out.push('.');
            out.push_str(&p);
            let rest = e.path.splitn(3, '/').nth(2);
            if let Some(rest) = rest {
                out.push('/');
                out.push_str(rest);
            }
        }
        out.push_str(": ");
        out.push_str(&e.message);
        let suggestion = match (e.kind, e.reason) {
            (ErrorKind::UnknownTool, _) if !e.candidates.is_empty() => {
                Some(format!("use one of: {}", e.candidates.join(", ")))
            }
            (ErrorKind::InvalidArguments, Some(InvalidReason::SchemaCopy)) => Some(
                "you sent the schema itself; send real values for the parameters instead"
                    .to_owned(),
            ),
            (ErrorKind::InvalidArguments, Some(InvalidReason::Placeholder)) => {
                Some("you sent the example's placeholder; fill in real values".to_owned())
            }
            _ => e.suggestion.clone(),
        };
        if let Some(s) = suggestion {
            out.push_str("\n  → ");
            out.push_str(&s);
        }
        if let (Some(x), Some(r)) = (&e.expected, &e.received) {
            out.push_str(&format!("\n  (expected: {x}, got: {r})"));
        }
    }
    out.push('\n');
    out.push_str(CLOSING);
    out
}

/// An OpenAI Chat Completions `tool` message answering call `call_id` with `content`.
///
/// ```
/// let m = toolstream::normalize::feedback::openai_tool_message("call_1", "bad");
/// assert_eq!(m["role"], "tool");
/// assert_eq!(m["tool_call_id"], "call_1");
/// ```
pub fn openai_tool_message(call_id: &str, content: &str) -> Value {
    json!({"role": "tool", "tool_call_id": call_id, "content": content})
}

/// An Anthropic Messages `tool_result` block answering `tool_use_id` with
/// `content`, marked `is_error: true`.
///
/// ```
/// let b = toolstream::normalize::feedback::anthropic_tool_result("toolu_1", "bad");
/// assert_eq!(b["type"], "tool_result");
/// assert_eq!(b["is_error"], true);
/// ```
pub fn anthropic_tool_result(tool_use_id: &str, content: &str) -> Value {
    json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": true})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_of_the_retry_message() {
        let mut e = CallError::new(
            ErrorKind::TypeMismatch,
            "/days",
            "expected integer, got string",
        );
        e.expected = Some("integer".into());
        e.received = Some("\"three\"".into());
        e.suggestion = Some("give a integer value".into());
        let mut u = CallError::new(ErrorKind::UnknownTool, "", "unknown tool `get_wether`");
        u.candidates = vec!["get_weather".into(), "read_file".into()];
        let msg = message("forecast", &[e, u]);
        let lines: Vec<&str> = msg.lines().collect();
        assert_eq!(lines[0], HEADER);
        assert_eq!(lines[1], "• forecast.days: expected integer, got string");
        assert_eq!(lines[2], "  → give a integer value");
        assert_eq!(lines[3], "  (expected: integer, got: \"three\")");
        assert_eq!(lines[4], "• forecast: unknown tool `get_wether`");
        assert_eq!(lines[5], "  → use one of: get_weather, read_file");
        assert_eq!(*lines.last().unwrap(), CLOSING);
        assert_eq!(message("x", &[]), "");
    }

    #[test]
    fn nested_paths_and_templates() {
        let e = CallError::new(
            ErrorKind::TypeMismatch,
            "/items/2/qty",
            "expected integer, got string",
        );
        assert!(message("order", &[e]).contains("• order.items/2/qty: expected integer"));
        let mut t = CallError::new(
            ErrorKind::InvalidArguments,
            "",
            "arguments are a copy of the schema",
        );
        t.reason = Some(InvalidReason::SchemaCopy);
        assert!(message("t", &[t]).contains("send real values"));
    }
}
