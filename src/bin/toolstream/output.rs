//! JSON renderings of events and results, shared by every subcommand.
//!
//! These shapes are a contract other tools depend on; see the README.

use serde_json::{json, Map, Value};
use toolstream::{Event, Parsed, Repair, ToolCall};

fn span(s: toolstream::Span) -> Value {
    json!([s.start, s.end])
}

fn repairs(r: &[Repair]) -> Value {
    Value::Array(
        r.iter()
            .map(|r| json!({"kind": r.kind.as_str(), "offset": r.offset}))
            .collect(),
    )
}

/// The arguments as a JSON value (they are always valid JSON).
fn arguments(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::Object(Map::new()))
}

/// One line of `--output events`.
pub(crate) fn event_json(e: &Event) -> Value {
    match e {
        Event::Text { text, span: s } => {
            json!({"type": "text", "text": String::from_utf8_lossy(text), "span": span(*s)})
        }
        Event::Thinking { text, span: s } => {
            json!({"type": "thinking", "text": String::from_utf8_lossy(text), "span": span(*s)})
        }
        Event::ToolStart {
            index,
            id,
            name,
            span: s,
        } => json!({"type": "tool_start", "index": index, "id": id, "name": name, "span": span(*s)}),
        Event::ToolArgs {
            index,
            delta,
            span: s,
        } => json!({"type": "tool_args", "index": index, "delta": String::from_utf8_lossy(delta), "span": span(*s)}),
        Event::ToolEnd { call, span: s } => json!({
            "type": "tool_end",
            "index": call.index,
            "id": call.id,
            "name": call.name,
            "arguments": arguments(call),
            "repairs": repairs(&call.repairs),
            "truncated": call.truncated,
            "span": span(*s),
        }),
        Event::Diagnostic {
            kind,
            message,
            span: s,
        } => json!({"type": "diagnostic", "kind": kind, "message": message, "span": span(*s)}),
        Event::Finish {
            reason,
            usage,
            span: s,
        } => json!({"type": "finish", "reason": reason, "usage": usage, "span": span(*s)}),
        Event::Error {
            kind,
            message,
            span: s,
        } => json!({"type": "error", "kind": kind, "message": message, "span": span(*s)}),
        _ => json!({"type": "unknown"}),
    }
}

/// The single object of `--output calls`.
pub(crate) fn calls_json(p: &Parsed) -> Value {
    json!({
        "text": p.text,
        "thinking": p.thinking,
        "calls": p.calls.iter().map(|c| json!({
            "index": c.index,
            "id": c.id,
            "name": c.name,
            "arguments": arguments(c),
            "repairs": repairs(&c.repairs),
            "truncated": c.truncated,
        })).collect::<Vec<_>>(),
    })
}
