//! Events → OpenAI Chat Completions SSE.

use serde_json::{json, Map, Value};

use super::{derive, is_fatal, sse, Derived, EncodeOptions};
use crate::event::{Event, FinishReason, OpaqueKind, Usage};

#[derive(Debug)]
pub(crate) struct OpenAiEncoder {
    opts: EncodeOptions,
    id: String,
    /// A response is under way (its first chunk was written).
    started: bool,
    calls: usize,
    truncated: bool,
    failed: bool,
    /// Responses finished so far (ids of later ones get a suffix).
    responses: usize,
    /// `data: {"id":…,"choices":[{"index":0,"delta":{` for the current
    /// response (chunks are written by hand on the hot path).
    prefix: Vec<u8>,
    prefix_for: Option<usize>,
}

impl OpenAiEncoder {
    pub(crate) fn new(opts: EncodeOptions) -> Self {
        let id = opts
            .id
            .clone()
            .unwrap_or_else(|| "chatcmpl-toolstream".into());
        OpenAiEncoder {
            opts,
            id,
            started: false,
            calls: 0,
            truncated: false,
            failed: false,
            responses: 0,
            prefix: Vec::new(),
            prefix_for: None,
        }
    }

    /// Writes one chunk whose delta members `members` writes (raw JSON,
    /// without braces); the first chunk of a response also carries the role.
    fn raw_delta(&mut self, out: &mut Vec<u8>, members: impl FnOnce(&mut Vec<u8>)) {
        if self.prefix_for != Some(self.responses) {
            let id = if self.responses == 0 {
                self.id.clone()
            } else {
                format!("{}-{}", self.id, self.responses)
            };
            self.prefix.clear();
            self.prefix.extend_from_slice(b"data: {\"id\":");
            jstr(&mut self.prefix, &id);
            self.prefix
                .extend_from_slice(b",\"object\":\"chat.completion.chunk\",\"created\":");
            self.prefix
                .extend_from_slice(self.opts.created.to_string().as_bytes());
            self.prefix.extend_from_slice(b",\"model\":");
            jstr(&mut self.prefix, &self.opts.model);
            self.prefix
                .extend_from_slice(b",\"choices\":[{\"index\":0,\"delta\":{");
            self.prefix_for = Some(self.responses);
        }
        out.extend_from_slice(&self.prefix);
        if !self.started {
            self.started = true;
            out.extend_from_slice(b"\"role\":\"assistant\",");
        }
        members(out);
        out.extend_from_slice(b"},\"logprobs\":null,\"finish_reason\":null}]}\n\n");
    }

    fn chunk(&self, delta: Value, finish: Option<&str>, out: &mut Vec<u8>) {
        let id = if self.responses == 0 {
            self.id.clone()
        } else {
            format!("{}-{}", self.id, self.responses)
        };
        let v = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": self.opts.created,
            "model": self.opts.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        sse(out, None, &v);
    }

    /// A delta; the first one of a response also carries the role.
    fn delta(&mut self, mut delta: Map<String, Value>, out: &mut Vec<u8>) {
        if !self.started {
            self.started = true;
            let mut d = Map::new();
            d.insert("role".into(), json!("assistant"));
            d.append(&mut delta);
            delta = d;
        }
        self.chunk(Value::Object(delta), None, out);
    }

    pub(crate) fn event(&mut self, e: &Event, out: &mut Vec<u8>) {
        if self.failed && !matches!(e, Event::Finish { .. }) {
            return;
        }
        match e {
            Event::Text { text, .. } => self.raw_delta(out, |o| {
                o.extend_from_slice(b"\"content\":");
                jstr(o, &String::from_utf8_lossy(text));
            }),
            Event::Thinking { text, .. } => self.raw_delta(out, |o| {
                o.extend_from_slice(b"\"reasoning_content\":");
                jstr(o, &String::from_utf8_lossy(text));
            }),
            Event::ToolStart {
                index, id, name, ..
            } => {
                self.calls += 1;
                self.raw_delta(out, |o| {
                    o.extend_from_slice(b"\"tool_calls\":[{\"index\":");
                    o.extend_from_slice(index.to_string().as_bytes());
                    o.extend_from_slice(b",\"id\":");
                    jstr(o, id);
                    o.extend_from_slice(b",\"type\":\"function\",\"function\":{\"name\":");
                    jstr(o, name);
                    o.extend_from_slice(b",\"arguments\":\"\"}}]");
                });
            }
            Event::ToolArgs { index, delta, .. } => self.raw_delta(out, |o| {
                o.extend_from_slice(b"\"tool_calls\":[{\"index\":");
                o.extend_from_slice(index.to_string().as_bytes());
                o.extend_from_slice(b",\"function\":{\"arguments\":");
                jstr(o, &String::from_utf8_lossy(delta));
                o.extend_from_slice(b"}}]");
            }),
            Event::ToolEnd { call, .. } => self.truncated |= call.truncated,
            Event::Opaque {
                kind: OpaqueKind::ThoughtSignature,
                index: Some(i),
                data,
                ..
            } => {
                let mut d = Map::new();
                d.insert(
                    "tool_calls".into(),
                    json!([{"index": i, "function": {"arguments": ""}, "extra_content": {"google": {"thought_signature": data}}}]),
                );
                self.delta(d, out);
            }
            Event::Opaque {
                kind: OpaqueKind::EncryptedReasoning,
                data,
                ..
            } => {
                let mut d = Map::new();
                d.insert(
                    "reasoning_details".into(),
                    json!([{"type": "reasoning.encrypted", "data": data, "format": "unknown", "index": 0}]),
                );
                self.delta(d, out);
            }
            Event::Error { kind, message, .. } if is_fatal(*kind) => {
                sse(
                    out,
                    None,
                    &json!({"error": {"message": message, "type": null, "param": null, "code": null}}),
                );
                self.failed = true;
            }
            Event::Finish { reason, usage, .. } => self.end(reason, usage.as_ref(), out),
            _ => {}
        }
    }

    fn end(&mut self, reason: &FinishReason, usage: Option<&Usage>, out: &mut Vec<u8>) {
        if !self.failed && *reason == FinishReason::Error {
            sse(
                out,
                None,
                &json!({"error": {"message": "the response failed", "type": null, "param": null, "code": null}}),
            );
            self.failed = true;
        }
        if !self.failed {
            let r = match derive(reason, self.calls, self.truncated) {
                Derived::Length => "length",
                Derived::ContentFilter => "content_filter",
                Derived::ToolCalls => "tool_calls",
                Derived::Stop | Derived::PauseTurn => "stop",
            };
            if !self.started {
                self.delta(Map::new(), out);
            }
            self.chunk(json!({}), Some(r), out);
            if let Some(u) = usage {
                let id = if self.responses == 0 {
                    self.id.clone()
                } else {
                    format!("{}-{}", self.id, self.responses)
                };
                let mut usage = json!({
                    "prompt_tokens": u.input_tokens.unwrap_or(0),
                    "completion_tokens": u.output_tokens.unwrap_or(0),
                    "total_tokens": u.input_tokens.unwrap_or(0) + u.output_tokens.unwrap_or(0),
                });
                if let Some(r) = u.reasoning_tokens {
                    usage["completion_tokens_details"] = json!({"reasoning_tokens": r});
                }
                sse(
                    out,
                    None,
                    &json!({
                        "id": id,
                        "object": "chat.completion.chunk",
                        "created": self.opts.created,
                        "model": self.opts.model,
                        "choices": [],
                        "usage": usage,
                    }),
                );
            }
            out.extend_from_slice(b"data: [DONE]\n\n");
        }
        self.started = false;
        self.calls = 0;
        self.truncated = false;
        self.failed = false;
        self.responses += 1;
    }

    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        if self.started || self.failed {
            let failed = self.failed;
            self.end(
                if failed {
                    &FinishReason::Error
                } else {
                    &FinishReason::Stop
                },
                None,
                out,
            );
        } else if self.responses == 0 {
            self.end(&FinishReason::Stop, None, out);
        }
    }
}

/// Appends `s` as a JSON string.
fn jstr(out: &mut Vec<u8>, s: &str) {
    // Writing to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}
