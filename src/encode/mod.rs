//! Encoders: [`Event`]s back to a provider wire format (SSE), so that
//! toolstream can sit in a proxy in front of an official client.
//!
//! | target | what is written |
//! |---|---|
//! | [`Target::OpenAi`] | Chat Completions `chat.completion.chunk` SSE: role on the first chunk, `content`, `reasoning_content`, `tool_calls` deltas (id, type and name on the first delta of a call, then `arguments` fragments), a finish chunk, a usage chunk (`choices: []`), `data: [DONE]` |
//! | [`Target::Anthropic`] | Messages SSE: `message_start`, one content block at a time (`text`, `thinking` with its `signature_delta`, `redacted_thinking`, `tool_use` with `input_json_delta`), `message_delta` with `stop_reason` and usage, `message_stop` |
//! | [`Target::Responses`] | Responses SSE: `response.created` / `in_progress`, one output item per message, reasoning summary and function call (`output_item.added`, deltas, `.done` events, `output_item.done`), `response.completed` / `incomplete` / `failed` with the full output and usage, `sequence_number` on every event |
//!
//! # Finish reasons are derived from what happened
//!
//! A stream whose calls were cut ([`ToolCall::truncated`](crate::ToolCall)) or whose `Finish` says
//! [`FinishReason::Length`] ends with `length` / `max_tokens` /
//! `response.incomplete`; `ContentFilter` with `content_filter` / `refusal`;
//! otherwise a stream that made calls ends with `tool_calls` / `tool_use`
//! (whatever the source said: Gemini and Ollama say "stop"), and one that
//! made none with `stop` / `end_turn`. Usage from the `Finish` event is
//! written at the end (OpenAI: the usage chunk; Anthropic: `message_delta`;
//! Responses: the final response).
//!
//! # Errors
//!
//! An [`Event::Error`] of kind `Provider` or `Truncated` (the response
//! failed) is written as the protocol expects: OpenAI an in-band
//! `{"error": {…}}` payload and no `[DONE]`; Anthropic `event: error` and no
//! `message_stop`; Responses `event: error` then `response.failed`.
//! `Malformed` and `Limit` errors, like diagnostics, describe the input wire,
//! not the response, and are not written.
//!
//! # Round trip
//!
//! `decode(encode(events))` equals `events` under [`normalize`], which
//! defines exactly what is compared:
//!
//! * spans, chunking (how text, thinking and arguments are split into
//!   events), diagnostics and `Malformed`/`Limit` errors are ignored;
//! * the sequence of segments is compared: runs of text, runs of thinking,
//!   and calls, in order;
//! * text and thinking are compared as concatenations;
//! * calls, in index order: index, id, name and final arguments; `truncated` only for
//!   Anthropic and Responses (OpenAI has no end-of-call event, so a call
//!   written with complete arguments cannot come back truncated); repairs
//!   are not compared (the wire carries the repaired arguments, so they come
//!   back clean);
//! * opaque state, for the kinds the target carries: OpenAI thought
//!   signatures (as `extra_content.google.thought_signature`) and encrypted
//!   reasoning (`reasoning_details`); Anthropic thinking signatures and
//!   redacted thinking; Responses encrypted reasoning;
//! * finish reasons after the derivation above; usage fields the target
//!   carries (input and output tokens everywhere, reasoning tokens for
//!   OpenAI and Responses) when the original had them;
//! * errors by message (the wire has no error kinds).

mod anthropic;
mod openai;
mod responses;

#[cfg(feature = "proxy")]
pub(crate) use responses::custom_input;

use std::fmt;

use crate::event::{ErrorKind, Event, FinishReason, OpaqueKind, ToolCall, Usage};

/// A wire format to encode to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Target {
    /// OpenAI Chat Completions SSE.
    OpenAi,
    /// Anthropic Messages SSE.
    Anthropic,
    /// OpenAI Responses SSE.
    Responses,
}

impl Target {
    /// The CLI name.
    pub const fn name(self) -> &'static str {
        match self {
            Target::OpenAi => "openai",
            Target::Anthropic => "anthropic",
            Target::Responses => "responses",
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Metadata written into the encoded stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeOptions {
    /// The model name (default `toolstream`).
    pub model: String,
    /// The response / message / completion id (default derived from the target).
    pub id: Option<String>,
    /// The `created` timestamp (seconds; default 0, for reproducible output).
    pub created: u64,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            model: "toolstream".into(),
            id: None,
            created: 0,
        }
    }
}

/// An incremental encoder: feed events, get wire bytes.
///
/// ```
/// use toolstream::encode::{encode, EncodeOptions, Target};
/// use toolstream::provider::{decode, DecodeOptions};
///
/// let sse = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
/// let events = decode(sse, &DecodeOptions::default());
/// let openai = encode(&events, Target::OpenAi, &EncodeOptions::default());
/// let text = String::from_utf8(openai).unwrap();
/// assert!(text.contains("\"content\":\"Hi\""));
/// assert!(text.contains("\"finish_reason\":\"stop\""));
/// assert!(text.ends_with("data: [DONE]\n\n"));
/// ```
#[derive(Debug)]
pub struct Encoder {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    OpenAi(openai::OpenAiEncoder),
    Anthropic(anthropic::AnthropicEncoder),
    Responses(Box<responses::ResponsesEncoder>),
}

impl Encoder {
    /// An encoder for one stream.
    pub fn new(target: Target, opts: EncodeOptions) -> Encoder {
        Encoder {
            inner: match target {
                Target::OpenAi => Inner::OpenAi(openai::OpenAiEncoder::new(opts)),
                Target::Anthropic => Inner::Anthropic(anthropic::AnthropicEncoder::new(opts)),
                Target::Responses => {
                    Inner::Responses(Box::new(responses::ResponsesEncoder::new(opts)))
                }
            },
        }
    }

    /// Names the freeform (`custom`) tools of a Responses request: their
    /// calls, offered to the model as a function with one string parameter,
    /// are written as `custom_tool_call` items whose `input` is that string.
    /// Other targets ignore it.
    pub fn with_custom_tools(mut self, names: std::collections::HashSet<String>) -> Self {
        if let Inner::Responses(e) = &mut self.inner {
            e.set_custom_tools(names);
        }
        self
    }

    /// Encodes one event, appending wire bytes to `out`.
    pub fn encode(&mut self, event: &Event, out: &mut Vec<u8>) {
        match &mut self.inner {
            Inner::OpenAi(e) => e.event(event, out),
            Inner::Anthropic(e) => e.event(event, out),
            Inner::Responses(e) => e.event(event, out),
        }
    }

    /// Ends the stream: a response without a `Finish` event is finished as if
    /// one had come (`Stop`), so the output is always a complete stream.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        match &mut self.inner {
            Inner::OpenAi(e) => e.finish(out),
            Inner::Anthropic(e) => e.finish(out),
            Inner::Responses(e) => e.finish(out),
        }
    }
}

/// Encodes a whole event list.
pub fn encode(events: &[Event], target: Target, opts: &EncodeOptions) -> Vec<u8> {
    let mut enc = Encoder::new(target, opts.clone());
    let mut out = Vec::new();
    for e in events {
        enc.encode(e, &mut out);
    }
    enc.finish(&mut out);
    out
}

/// Appends one SSE event (`event:` line when `name` is given).
pub(crate) fn sse(out: &mut Vec<u8>, name: Option<&str>, data: &serde_json::Value) {
    if let Some(n) = name {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(n.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"data: ");
    // serde_json never fails on a Value.
    if let Ok(s) = serde_json::to_vec(data) {
        out.extend_from_slice(&s);
    }
    out.extend_from_slice(b"\n\n");
}

/// The reason a target writes, derived from the Finish event and the calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Derived {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
    PauseTurn,
}

pub(crate) fn derive(reason: &FinishReason, calls: usize, truncated: bool) -> Derived {
    match reason {
        FinishReason::Length => Derived::Length,
        _ if truncated => Derived::Length,
        FinishReason::ContentFilter => Derived::ContentFilter,
        FinishReason::Other(s) if s == "pause_turn" => Derived::PauseTurn,
        _ if calls > 0 => Derived::ToolCalls,
        _ => Derived::Stop,
    }
}

/// True for the errors that mean the response failed (and are written).
pub(crate) fn is_fatal(kind: ErrorKind) -> bool {
    matches!(kind, ErrorKind::Provider | ErrorKind::Truncated)
}

/// The comparable content of an event stream; see the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Normalized {
    /// Segments in order: `text`, `thinking`, `call <index>`.
    pub segments: Vec<String>,
    /// All text.
    pub text: String,
    /// All thinking.
    pub thinking: String,
    /// The calls (repairs cleared; `truncated` cleared unless the target carries it).
    pub calls: Vec<ToolCall>,
    /// Opaque state the target carries: (kind, call index, data).
    pub opaque: Vec<(OpaqueKind, Option<usize>, String)>,
    /// Derived finish reasons and the usage fields the target carries.
    pub finish: Vec<(String, Option<Usage>)>,
    /// Messages of the errors that are written.
    pub errors: Vec<String>,
}

fn carries(target: Target, kind: OpaqueKind) -> bool {
    match target {
        Target::OpenAi => matches!(
            kind,
            OpaqueKind::ThoughtSignature | OpaqueKind::EncryptedReasoning
        ),
        Target::Anthropic => matches!(
            kind,
            OpaqueKind::ThinkingSignature | OpaqueKind::RedactedThinking
        ),
        Target::Responses => matches!(kind, OpaqueKind::EncryptedReasoning),
    }
}

/// Reduces an event stream to what survives a round trip through `target`
/// (see the module docs). `reference` is the original stream when
/// normalizing a decoded one: usage fields it lacks are not compared.
pub fn normalize(events: &[Event], target: Target, reference: Option<&[Event]>) -> Normalized {
    let mut n = Normalized {
        segments: Vec::new(),
        text: String::new(),
        thinking: String::new(),
        calls: Vec::new(),
        opaque: Vec::new(),
        finish: Vec::new(),
        errors: Vec::new(),
    };
    let ref_usage: Vec<Option<Usage>> = reference
        .unwrap_or(events)
        .iter()
        .filter_map(|e| match e {
            Event::Finish { usage, .. } => Some(usage.clone()),
            _ => None,
        })
        .collect();
    let mut calls_in_response = 0usize;
    let mut truncated_in_response = false;
    let mut failed = false;
    for e in events {
        match e {
            Event::Text { text, .. } => {
                if n.segments.last().map(String::as_str) != Some("text") {
                    n.segments.push("text".into());
                }
                n.text.push_str(&String::from_utf8_lossy(text));
            }
            Event::Thinking { text, .. } => {
                if n.segments.last().map(String::as_str) != Some("thinking") {
                    n.segments.push("thinking".into());
                }
                n.thinking.push_str(&String::from_utf8_lossy(text));
            }
            Event::ToolStart { index, .. } => n.segments.push(format!("call {index}")),
            Event::ToolEnd { call, .. } => {
                let mut c = (**call).clone();
                c.repairs.clear();
                calls_in_response += 1;
                truncated_in_response |= c.truncated;
                if target == Target::OpenAi {
                    c.truncated = false;
                }
                n.calls.push(c);
            }
            Event::Opaque {
                kind, index, data, ..
            } if carries(target, *kind) => {
                n.opaque.push((*kind, *index, data.clone()));
            }
            Event::Error { kind, message, .. } if is_fatal(*kind) => {
                failed = true;
                n.errors.push(message.clone());
            }
            Event::Finish { reason, usage, .. } => {
                let name = if failed || *reason == FinishReason::Error {
                    "error".to_string()
                } else {
                    let d = derive(reason, calls_in_response, truncated_in_response);
                    // Only Anthropic has a pause reason.
                    let d = if d == Derived::PauseTurn && target != Target::Anthropic {
                        Derived::Stop
                    } else {
                        d
                    };
                    format!("{d:?}")
                };
                let want = ref_usage.get(n.finish.len()).cloned().flatten();
                let usage = match (usage, want) {
                    (Some(u), Some(w)) if name != "error" => Some(Usage {
                        input_tokens: w.input_tokens.and(u.input_tokens),
                        output_tokens: w.output_tokens.and(u.output_tokens),
                        reasoning_tokens: if target == Target::Anthropic {
                            None
                        } else {
                            w.reasoning_tokens.and(u.reasoning_tokens)
                        },
                    }),
                    _ => None,
                };
                n.finish.push((name, usage));
                calls_in_response = 0;
                truncated_in_response = false;
                failed = false;
            }
            _ => {}
        }
    }
    n.calls.sort_by_key(|c| c.index);
    n
}
