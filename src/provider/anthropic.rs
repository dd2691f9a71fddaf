//! Anthropic Messages streams (STREAMS.md §4).
//!
//! * `text_delta` → `Text`; `thinking_delta` → `Thinking`; `signature_delta`
//!   → [`Event::Opaque`] (`thinking_signature`); a `redacted_thinking` block →
//!   [`Event::Opaque`] (`redacted_thinking`).
//! * `tool_use`, `server_tool_use` and `mcp_tool_use` blocks are calls; their
//!   input is built from the `input_json_delta` fragments (no fragment means
//!   `{}`, or the block's own non-empty `input` when a proxy sent it whole).
//! * `content_block_stop` ends a call. A block still open at a `message_delta`
//!   with `stop_reason: max_tokens` (the API sends no stop for it), at
//!   `message_stop`, at a new `content_block_start` or `message_start`, or at
//!   end of stream is closed with `truncated: true`.
//! * `*_tool_result` blocks and unknown block types are skipped with a
//!   diagnostic; `citations_delta` and `ping` are skipped silently.
//! * `event: error` is a provider error. The event type is the payload's
//!   `type`, or the SSE event name when the payload has none.
//! * JSON padding (spaces before the closing brace) is just JSON.

use super::json::{Doc, Payloads, J};
use super::{Base, Decode, Frame};
use crate::config::Config;
use crate::event::{Event, FinishReason, OpaqueKind, Span};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    None,
    Text,
    Thinking,
    Tool(usize),
    Skip,
}

pub(crate) struct AnthropicDecoder {
    base: Base,
    block: Block,
    block_index: Option<u64>,
    in_message: bool,
}

impl AnthropicDecoder {
    pub(crate) fn new(cfg: &Config) -> Self {
        let mut base = Base::new(cfg, "`message_stop`");
        base.calls.empty_ok = true;
        base.stop_means_tools = false;
        AnthropicDecoder {
            base,
            block: Block::None,
            block_index: None,
            in_message: false,
        }
    }

    fn close_block(&mut self, cut: bool, span: Span, out: &mut Vec<Event>) {
        if let Block::Tool(ci) = self.block {
            self.base.calls.end(ci, cut, span, out);
        }
        self.block = Block::None;
        self.block_index = None;
    }

    fn event(&mut self, d: &Doc<'_, '_>, ty: &str, span: Span, out: &mut Vec<Event>) {
        let r = d.root;
        match ty {
            "message_start" => {
                if self.in_message || self.block != Block::None {
                    self.close_block(true, span, out);
                    self.base.unknown(
                        "`message_start` inside a message: the open block was cut",
                        span,
                        out,
                    );
                }
                self.in_message = true;
                self.base.active = true;
                let u = r.get("message").get("usage");
                self.usage(u);
            }
            "content_block_start" => {
                self.base.active = true;
                if self.block != Block::None {
                    self.close_block(true, span, out);
                }
                self.block_index = r.get("index").u64();
                let cb = r.get("content_block");
                let bt = cb.get("type").str().unwrap_or_default();
                self.block = match bt {
                    "text" => {
                        if let Some(t) = cb.get("text").str() {
                            self.base.text(d, t, span, out);
                        }
                        Block::Text
                    }
                    "thinking" => {
                        if let Some(t) = cb.get("thinking").str() {
                            self.base.thinking(d, t, span, out);
                        }
                        self.signature(cb.get("signature"), span, out);
                        Block::Thinking
                    }
                    "redacted_thinking" => {
                        out.push(Event::Opaque {
                            kind: OpaqueKind::RedactedThinking,
                            index: None,
                            data: cb.get("data").str().unwrap_or_default().to_owned(),
                            span,
                        });
                        Block::Skip
                    }
                    "tool_use" | "server_tool_use" | "mcp_tool_use" => {
                        let ci = self.base.calls.begin(
                            cb.get("id").nonempty(),
                            cb.get("name").nonempty(),
                            span,
                            out,
                        );
                        let input = cb.get("input");
                        if input.is_object() && input.len() > 0 {
                            self.base.calls.set_fallback(ci, input.encode());
                        }
                        Block::Tool(ci)
                    }
                    other => {
                        self.base.unknown(
                            format!("content block `{other}` is not represented; skipped"),
                            span,
                            out,
                        );
                        Block::Skip
                    }
                };
            }
            "content_block_delta" => {
                self.base.active = true;
                let delta = r.get("delta");
                let dt = delta.get("type").str().unwrap_or_default();
                match (dt, self.block) {
                    ("text_delta", _) => {
                        if let Some(t) = delta.get("text").str() {
                            self.base.text(d, t, span, out);
                        }
                    }
                    ("thinking_delta", _) => {
                        if let Some(t) = delta.get("thinking").str() {
                            self.base.thinking(d, t, span, out);
                        }
                    }
                    ("signature_delta", _) => self.signature(delta.get("signature"), span, out),
                    ("input_json_delta", Block::Tool(ci)) => {
                        if let Some(pj) = delta.get("partial_json").str() {
                            self.base.calls.args(ci, pj.as_bytes(), span, out);
                        }
                    }
                    ("input_json_delta", _) => {
                        self.base.unknown(
                            "`input_json_delta` outside a tool block; skipped",
                            span,
                            out,
                        );
                    }
                    ("citations_delta", _) => {}
                    (other, _) => self.base.unknown(
                        format!("delta type `{other}` is not represented; skipped"),
                        span,
                        out,
                    ),
                }
            }
            "content_block_stop" => {
                self.base.active = true;
                self.close_block(false, span, out);
            }
            "message_delta" => {
                self.base.active = true;
                let reason = r
                    .get("delta")
                    .get("stop_reason")
                    .nonempty()
                    .map(stop_reason);
                // A block still open here was cut by `max_tokens` (or by a
                // delta without a reason). After `tool_use` / `end_turn` the
                // block merely lacked its stop event: its call is truncated
                // only if its arguments are incomplete.
                let cut = matches!(reason, None | Some(FinishReason::Length));
                if let Block::Tool(ci) = self.block {
                    self.base.calls.cut_marks_truncated = cut;
                    self.base.calls.end(ci, true, span, out);
                    self.base.calls.cut_marks_truncated = true;
                }
                self.block = Block::None;
                self.block_index = None;
                if let Some(reason) = reason {
                    self.base.reason = Some(reason);
                    self.base.eof_ok = true;
                }
                self.usage(r.get("usage"));
            }
            "message_stop" => {
                self.close_block(true, span, out);
                self.in_message = false;
                self.base.finish_response(span, out);
            }
            "ping" => {}
            "error" => {
                let e = r.get("error");
                let msg = e.get("message").str().unwrap_or("unknown error");
                // The generic `api_error` type adds nothing to the message.
                let message = match e.get("type").str() {
                    Some(t) if t != "api_error" => format!("{t}: {msg}"),
                    _ => msg.to_owned(),
                };
                self.block = Block::None;
                self.base.provider_error(message, span, out);
            }
            other => self.base.unknown(
                format!("event `{other}` is not represented; skipped"),
                span,
                out,
            ),
        }
    }

    fn signature(&mut self, sig: J<'_, '_>, span: Span, out: &mut Vec<Event>) {
        if let Some(s) = sig.nonempty() {
            out.push(Event::Opaque {
                kind: OpaqueKind::ThinkingSignature,
                index: None,
                data: s.to_owned(),
                span,
            });
        }
    }

    fn usage(&mut self, u: J<'_, '_>) {
        if u.is_object() {
            let input = u.get("input_tokens").u64().map(|i| {
                i + u.get("cache_creation_input_tokens").u64().unwrap_or(0)
                    + u.get("cache_read_input_tokens").u64().unwrap_or(0)
            });
            self.base
                .set_usage(input, u.get("output_tokens").u64(), None);
        }
    }
}

/// Maps an Anthropic `stop_reason`.
pub(crate) fn stop_reason(s: &str) -> FinishReason {
    match s {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

impl Decode for AnthropicDecoder {
    fn base(&mut self) -> &mut Base {
        &mut self.base
    }

    fn frame(&mut self, f: &Frame<'_>, p: &mut Payloads, out: &mut Vec<Event>) {
        if f.data.trim_ascii().is_empty() {
            return;
        }
        let mark = out.len();
        let res = p.parse_lenient(f.data, |d| {
            let ty = d.root.get("type").str().or(f.event).unwrap_or_default();
            self.event(d, ty, f.span, out);
        });
        self.base.parsed(res.map(|r| r.1), f.span, mark, out);
    }

    fn finish(&mut self, end: u64, out: &mut Vec<Event>) {
        let span = Span::new(end, end);
        if self.block != Block::None {
            self.close_block(true, span, out);
        }
        self.base.eof(end, out);
    }
}
