//! A finished reply (the events of one upstream response) → the client's
//! non-streaming JSON: a `chat.completion`, an Anthropic `message`, or a
//! Responses `response`.
//!
//! Finish reasons follow the encoders' rules ([`crate::encode`]): a reply
//! with a truncated call or a `Length` finish is `length` / `max_tokens` /
//! `incomplete`, a reply that made calls is `tool_calls` / `tool_use`.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::encode::{derive, Derived};
use crate::event::{ErrorKind, Event, FinishReason, OpaqueKind, ToolCall, Usage};

/// One piece of a reply, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// Text.
    Text(String),
    /// Reasoning, with its signature when the source had one.
    Thinking(String, Option<String>),
    /// A finished call.
    Call(ToolCall),
}

/// What a reply amounted to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reply {
    /// The parts in order (adjacent text merged).
    pub parts: Vec<Part>,
    /// The finish reason.
    pub reason: Option<FinishReason>,
    /// Usage.
    pub usage: Option<Usage>,
    /// The message of the error that failed the reply.
    pub error: Option<String>,
}

impl Reply {
    /// Adds an event.
    pub fn push(&mut self, e: &Event) {
        match e {
            Event::Text { text, .. } => {
                let t = String::from_utf8_lossy(text);
                match self.parts.last_mut() {
                    Some(Part::Text(s)) => s.push_str(&t),
                    _ => self.parts.push(Part::Text(t.into_owned())),
                }
            }
            Event::Thinking { text, .. } => {
                let t = String::from_utf8_lossy(text);
                match self.parts.last_mut() {
                    Some(Part::Thinking(s, None)) => s.push_str(&t),
                    _ => self.parts.push(Part::Thinking(t.into_owned(), None)),
                }
            }
            Event::Opaque {
                kind: OpaqueKind::ThinkingSignature,
                data,
                ..
            } => {
                if let Some(Part::Thinking(_, sig @ None)) = self.parts.last_mut() {
                    *sig = Some(data.clone());
                }
            }
            Event::ToolEnd { call, .. } => self.parts.push(Part::Call((**call).clone())),
            Event::Error {
                kind: ErrorKind::Provider | ErrorKind::Truncated,
                message,
                ..
            } => {
                self.error.get_or_insert_with(|| message.clone());
            }
            Event::Finish { reason, usage, .. } => {
                self.reason = Some(reason.clone());
                if usage.is_some() {
                    self.usage = usage.clone();
                }
            }
            _ => {}
        }
    }

    fn calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.parts.iter().filter_map(|p| match p {
            Part::Call(c) => Some(c),
            _ => None,
        })
    }

    fn derived(&self) -> Derived {
        let n = self.calls().count();
        let truncated = self.calls().any(|c| c.truncated);
        derive(
            self.reason.as_ref().unwrap_or(&FinishReason::Stop),
            n,
            truncated,
        )
    }

    fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    fn thinking(&self) -> String {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::Thinking(t, _) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    fn tokens(&self) -> (u64, u64) {
        let u = self.usage.clone().unwrap_or_default();
        (u.input_tokens.unwrap_or(0), u.output_tokens.unwrap_or(0))
    }

    /// A Chat Completions `chat.completion`.
    pub fn to_chat(&self, id: &str, model: &str, created: u64) -> Value {
        let calls: Vec<Value> = self
            .calls()
            .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
            .collect();
        let text = self.text();
        let mut msg = json!({"role": "assistant", "content": if text.is_empty() && !calls.is_empty() { Value::Null } else { Value::String(text) }});
        let thinking = self.thinking();
        if !thinking.is_empty() {
            msg["reasoning_content"] = Value::String(thinking);
        }
        if !calls.is_empty() {
            msg["tool_calls"] = Value::Array(calls);
        }
        let finish = match self.derived() {
            Derived::Length => "length",
            Derived::ContentFilter => "content_filter",
            Derived::ToolCalls => "tool_calls",
            Derived::Stop | Derived::PauseTurn => "stop",
        };
        let (i, o) = self.tokens();
        json!({
            "id": id, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": msg, "logprobs": null, "finish_reason": finish}],
            "usage": {"prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o},
        })
    }

    /// An Anthropic `message`.
    pub fn to_messages(&self, id: &str, model: &str) -> Value {
        let mut content = Vec::new();
        for p in &self.parts {
            match p {
                Part::Text(t) => content.push(json!({"type": "text", "text": t})),
                Part::Thinking(t, sig) => content.push(
                    json!({"type": "thinking", "thinking": t, "signature": sig.clone().unwrap_or_default()}),
                ),
                Part::Call(c) => content.push(json!({
                    "type": "tool_use", "id": c.id, "name": c.name,
                    "input": serde_json::from_str::<Value>(&c.arguments).unwrap_or_else(|_| json!({})),
                })),
            }
        }
        let stop = match self.derived() {
            Derived::Length => "max_tokens",
            Derived::ContentFilter => "refusal",
            Derived::ToolCalls => "tool_use",
            Derived::PauseTurn => "pause_turn",
            Derived::Stop => "end_turn",
        };
        let (i, o) = self.tokens();
        json!({
            "id": id, "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": stop, "stop_sequence": null,
            "usage": {"input_tokens": i, "output_tokens": o},
        })
    }

    /// A Responses `response`; calls to the tools in `custom` are
    /// `custom_tool_call` items.
    pub fn to_responses(
        &self,
        id: &str,
        model: &str,
        created: u64,
        custom: &HashSet<String>,
    ) -> Value {
        let mut output = Vec::new();
        for (n, p) in self.parts.iter().enumerate() {
            match p {
                Part::Text(t) => output.push(json!({
                    "id": format!("msg_{n}"), "type": "message", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": t, "annotations": []}],
                })),
                Part::Thinking(t, _) => output.push(json!({
                    "id": format!("rs_{n}"), "type": "reasoning", "summary": [{"type": "summary_text", "text": t}],
                })),
                Part::Call(c) if custom.contains(c.name.as_str()) => output.push(json!({
                    "id": format!("ctc_{n}"), "type": "custom_tool_call",
                    "status": if c.truncated { "incomplete" } else { "completed" },
                    "call_id": c.id, "name": c.name, "input": custom_input(&c.arguments),
                })),
                Part::Call(c) => output.push(json!({
                    "id": format!("fc_{n}"), "type": "function_call",
                    "status": if c.truncated { "incomplete" } else { "completed" },
                    "call_id": c.id, "name": c.name, "arguments": c.arguments,
                })),
            }
        }
        let d = self.derived();
        let (status, details) = match d {
            Derived::Length => ("incomplete", json!({"reason": "max_output_tokens"})),
            Derived::ContentFilter => ("incomplete", json!({"reason": "content_filter"})),
            _ => ("completed", Value::Null),
        };
        let (i, o) = self.tokens();
        json!({
            "id": id, "object": "response", "created_at": created, "status": status, "error": null,
            "incomplete_details": details, "model": model, "output": output,
            "parallel_tool_calls": true, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": i, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": o, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": i + o},
        })
    }
}

/// The free text of a custom tool call: the `input` string of its
/// arguments, or the arguments as written when the model did not use that
/// shape.
///
/// ```
/// use toolstream::proxy::translate::reply::custom_input;
/// assert_eq!(custom_input(r#"{"input": "*** Begin Patch"}"#), "*** Begin Patch");
/// assert_eq!(custom_input(r#"{"a": 1, "b": 2}"#), r#"{"a": 1, "b": 2}"#);
/// ```
pub fn custom_input(arguments: &str) -> String {
    crate::encode::custom_input(arguments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Span;

    fn call(truncated: bool) -> Event {
        Event::ToolEnd {
            call: Box::new(ToolCall {
                index: 0,
                id: "call_1".into(),
                name: "apply_patch".into(),
                arguments: "{\"input\":\"*** Begin\"}".into(),
                repairs: vec![],
                truncated,
            }),
            span: Span::default(),
        }
    }

    #[test]
    fn renders_each_api() {
        let mut r = Reply::default();
        r.push(&Event::Text {
            text: "Hi".as_bytes().into(),
            span: Span::default(),
        });
        r.push(&call(false));
        r.push(&Event::Finish {
            reason: FinishReason::Stop,
            usage: Some(Usage {
                input_tokens: Some(3),
                output_tokens: Some(4),
                reasoning_tokens: None,
            }),
            span: Span::default(),
        });
        let c = r.to_chat("id", "m", 0);
        assert_eq!(c["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(c["usage"]["total_tokens"], 7);
        let m = r.to_messages("id", "m");
        assert_eq!(m["stop_reason"], "tool_use");
        assert_eq!(m["content"][1]["input"]["input"], "*** Begin");
        let custom: HashSet<String> = ["apply_patch".to_string()].into();
        let x = r.to_responses("id", "m", 0, &custom);
        assert_eq!(x["output"][1]["type"], "custom_tool_call");
        assert_eq!(x["output"][1]["input"], "*** Begin");
        let mut t = Reply::default();
        t.push(&call(true));
        assert_eq!(t.to_messages("i", "m")["stop_reason"], "max_tokens");
        assert_eq!(
            t.to_responses("i", "m", 0, &HashSet::new())["status"],
            "incomplete"
        );
    }
}
