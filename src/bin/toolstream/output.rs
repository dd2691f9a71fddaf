//! JSON shapes printed by the CLI: one NDJSON object per event
//! (`--output events`) and the accumulated `calls` object
//! (`--output calls`). `parse` and `decode` print the same shapes.

// `pub` is this module's interface to `main.rs` (and to the lead's `main.rs`
// at merge time); in a binary crate nothing is reachable from outside.
#![allow(unreachable_pub)]

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use toolstream::{DiagnosticKind, Event, FinishReason, Parsed, Span, ToolCall, Usage};

fn span(s: Span) -> Value {
    json!([s.start, s.end])
}

/// A call's arguments as the JSON object they are, written as their own
/// text with the blanks between tokens dropped (one NDJSON line): parsing
/// them into a `Value` would write `12345678901234567890123` as
/// `1.2345678901234568e+22` and `1.50` as `1.5`, and the CLI promises the
/// parser's arguments, not a float's round trip. Text serde_json will not
/// read (deeper than its recursion limit) is written as a string.
struct Arguments<'a>(&'a str);

impl Serialize for Arguments<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match RawValue::from_string(compact(self.0)) {
            Ok(raw) => raw.serialize(s),
            Err(_) => s.serialize_str(self.0),
        }
    }
}

/// `json` (valid JSON) without the blanks outside its strings.
fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_str, mut esc) = (false, false);
    for c in json.chars() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, '\\') => esc = true,
                (false, '"') => in_str = false,
                _ => {}
            }
        } else if c == '"' {
            in_str = true;
        } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        }
        out.push(c);
    }
    out
}

/// A call as the CLI prints it: in a `tool_end` event (`kind` and `span`
/// set) or in the `calls` list.
#[derive(Serialize)]
pub struct CallJson<'a> {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    index: usize,
    id: &'a str,
    name: &'a str,
    arguments: Arguments<'a>,
    repairs: Value,
    truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    span: Option<Value>,
}

impl<'a> CallJson<'a> {
    fn new(call: &'a ToolCall, end: Option<Span>) -> Self {
        CallJson {
            kind: end.map(|_| "tool_end"),
            index: call.index,
            id: &call.id,
            name: &call.name,
            arguments: Arguments(&call.arguments),
            repairs: repairs(call),
            truncated: call.truncated,
            span: end.map(span),
        }
    }
}

/// One printed event ([`event_json`]).
#[derive(Serialize)]
#[serde(untagged)]
pub enum EventJson<'a> {
    /// A `tool_end` event, whose arguments are written as they are.
    ToolEnd(CallJson<'a>),
    /// Any other event.
    Other(Value),
}

/// The accumulated result ([`calls_json`]).
#[derive(Serialize)]
pub struct CallsJson<'a> {
    text: &'a str,
    thinking: &'a str,
    calls: Vec<CallJson<'a>>,
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
pub fn event_json(e: &Event) -> EventJson<'_> {
    EventJson::Other(match e {
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
        Event::ToolEnd { call, span: s } => {
            return EventJson::ToolEnd(CallJson::new(call, Some(*s)))
        }
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
    })
}

/// The accumulated result: `{"text","thinking","calls":[{"index","id","name","arguments":{…},"repairs":[…],"truncated"}]}`.
pub fn calls_json(p: &Parsed) -> CallsJson<'_> {
    CallsJson {
        text: &p.text,
        thinking: &p.thinking,
        calls: p.calls.iter().map(|c| CallJson::new(c, None)).collect(),
    }
}

/// For a text or thinking event that is not UTF-8 (printed with U+FFFD in
/// its place): an `invalid_utf8` diagnostic line over its span, with the
/// offset of the first bad byte.
pub fn utf8_diagnostic(e: &Event) -> Option<Value> {
    let (text, s) = match e {
        Event::Text { text, span } | Event::Thinking { text, span } => (text, *span),
        _ => return None,
    };
    let bad = std::str::from_utf8(text).err()?;
    let at = s.start + bad.valid_up_to() as u64;
    Some(json!({
        "type": "diagnostic",
        "kind": DiagnosticKind::InvalidUtf8,
        "message": format!("text is not UTF-8 from byte {at}; printed with U+FFFD"),
        "span": span(s),
    }))
}

/// With `-v`: a diagnostic or error event, also on standard error.
pub fn report(command: &str, e: &Event) {
    if !crate::common::verbose() {
        return;
    }
    match e {
        Event::Diagnostic {
            kind,
            message,
            span: s,
        } => {
            let kind = serde_json::to_value(kind).unwrap_or_default();
            eprintln!(
                "toolstream {command}: {} at {}..{}: {message}",
                kind.as_str().unwrap_or("diagnostic"),
                s.start,
                s.end
            );
        }
        Event::Error { kind, message, .. } => {
            let kind = serde_json::to_value(kind).unwrap_or_default();
            eprintln!(
                "toolstream {command}: error {}: {message}",
                kind.as_str().unwrap_or("error")
            );
        }
        Event::ToolEnd { call, span: s } if !call.repairs.is_empty() || call.truncated => {
            let kinds: Vec<&str> = call.repairs.iter().map(|r| r.kind.as_str()).collect();
            eprintln!(
                "toolstream {command}: call {} `{}` at {}..{}: {}{}",
                call.index,
                call.name,
                s.start,
                s.end,
                if call.truncated { "truncated; " } else { "" },
                if kinds.is_empty() {
                    "no repairs".to_owned()
                } else {
                    format!("repairs {}", kinds.join(", "))
                }
            );
        }
        _ => {}
    }
}
