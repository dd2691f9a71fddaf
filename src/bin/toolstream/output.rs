//! JSON shapes printed by the CLI: one NDJSON object per event
//! (`--output events`) and the accumulated `calls` object
//! (`--output calls`). `parse` and `decode` print the same shapes.

// `pub` is this module's interface to `main.rs` (and to the lead's `main.rs`
// at merge time); in a binary crate nothing is reachable from outside.
#![allow(unreachable_pub)]

use serde_json::{json, Map, Value};
use toolstream::{Event, FinishReason, Parsed, Span, ToolCall, Usage};

fn span(s: Span) -> Value {
    json!([s.start, s.end])
}

/// The arguments as a JSON value (they are always a valid JSON object; the
/// raw text is kept as a string if that ever fails to parse).
fn arguments(call: &ToolCall) -> Value {
    call.arguments_value()
        .unwrap_or_else(|_| Value::String(call.arguments.clone()))
}

fn repairs(call: &ToolCall) -> Value {
    Value::Array(
        call.repairs
            .iter()
            .map(|r| json!({"kind": r.kind.as_str(), "offset": r.offset}))
            .collect(),
    )
}

/// The stable name of a finish reason (`stop`, `tool_calls`, `length`,
/// `content_filter`, `error`, or the provider's own word).
pub fn reason_str(r: &FinishReason) -> String {
    match r {
        FinishReason::Stop => "stop".into(),
        FinishReason::ToolCalls => "tool_calls".into(),
        FinishReason::Length => "length".into(),
        FinishReason::ContentFilter => "content_filter".into(),
        FinishReason::Error => "error".into(),
        FinishReason::Other(s) => s.clone(),
        other => format!("{other:?}").to_lowercase(),
    }
}

fn usage(u: &Option<Usage>) -> Value {
    match u {
        Some(u) => json!({
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "reasoning_tokens": u.reasoning_tokens,
        }),
        None => Value::Null,
    }
}

/// One event as a JSON object:
///
/// * `{"type":"text"|"thinking","text","span":[s,e]}`
/// * `{"type":"tool_start","index","id","name","span"}`
/// * `{"type":"tool_args","index","delta","span"}`
/// * `{"type":"tool_end","index","id","name","arguments":{…},"repairs":[{"kind","offset"}],"truncated","span"}`
/// * `{"type":"diagnostic","kind","message","span"}`
/// * `{"type":"markup","span"}` (markup around text, such as an end-of-turn
///   token: its bytes are in no other event, so a consumer checking that
///   the spans tile the input needs it)
/// * `{"type":"finish","reason","usage":{"input_tokens","output_tokens","reasoning_tokens"}|null,"span"}`
/// * `{"type":"error","kind","message"}`
/// * `{"type":"opaque","kind","index","data","span"}` (signatures and encrypted reasoning)
pub fn event_json(e: &Event) -> Value {
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
        } => {
            json!({"type": "tool_start", "index": index, "id": id, "name": name, "span": span(*s)})
        }
        Event::ToolArgs {
            index,
            delta,
            span: s,
        } => {
            json!({"type": "tool_args", "index": index, "delta": String::from_utf8_lossy(delta), "span": span(*s)})
        }
        Event::ToolEnd { call, span: s } => json!({
            "type": "tool_end",
            "index": call.index,
            "id": call.id,
            "name": call.name,
            "arguments": arguments(call),
            "repairs": repairs(call),
            "truncated": call.truncated,
            "span": span(*s),
        }),
        Event::Diagnostic {
            kind,
            message,
            span: s,
        } => {
            json!({"type": "diagnostic", "kind": kind, "message": message, "span": span(*s)})
        }
        Event::Finish {
            reason,
            usage: u,
            span: s,
        } => {
            json!({"type": "finish", "reason": reason_str(reason), "usage": usage(u), "span": span(*s)})
        }
        Event::Error { kind, message, .. } => {
            json!({"type": "error", "kind": kind, "message": message})
        }
        Event::Markup { span: s } => json!({"type": "markup", "span": span(*s)}),
        Event::Opaque {
            kind,
            index,
            data,
            span: s,
        } => {
            json!({"type": "opaque", "kind": kind.as_str(), "index": index, "data": data, "span": span(*s)})
        }
        other => {
            let mut m = Map::new();
            m.insert("type".into(), json!("unknown"));
            m.insert("debug".into(), json!(format!("{other:?}")));
            Value::Object(m)
        }
    }
}

/// The accumulated result: `{"text","thinking","calls":[{"index","id","name","arguments":{…},"repairs":[…],"truncated"}]}`.
pub fn calls_json(p: &Parsed) -> Value {
    json!({
        "text": p.text,
        "thinking": p.thinking,
        "calls": p.calls.iter().map(|c| json!({
            "index": c.index,
            "id": c.id,
            "name": c.name,
            "arguments": arguments(c),
            "repairs": repairs(c),
            "truncated": c.truncated,
        })).collect::<Vec<_>>(),
    })
}
