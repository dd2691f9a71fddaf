//! Events → Anthropic Messages SSE.
//!
//! Anthropic content blocks are strictly sequential, while calls of an
//! OpenAI-compatible source may interleave: events that cannot be written
//! yet (another call's arguments, text while a tool block is open) are
//! queued until the open tool block ends, then written in order.

use std::collections::VecDeque;

use serde_json::json;

use super::{derive, is_fatal, sse, Derived, EncodeOptions};
use crate::event::{Event, FinishReason, OpaqueKind, Usage};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    None,
    Text,
    Thinking,
    Tool(usize),
}

#[derive(Debug)]
pub(crate) struct AnthropicEncoder {
    opts: EncodeOptions,
    started: bool,
    block: Block,
    /// Index of the next content block.
    next_block: usize,
    queue: VecDeque<Event>,
    calls: usize,
    truncated: bool,
    failed: bool,
    responses: usize,
}

impl AnthropicEncoder {
    pub(crate) fn new(opts: EncodeOptions) -> Self {
        AnthropicEncoder {
            opts,
            started: false,
            block: Block::None,
            next_block: 0,
            queue: VecDeque::new(),
            calls: 0,
            truncated: false,
            failed: false,
            responses: 0,
        }
    }

    fn start(&mut self, out: &mut Vec<u8>) {
        if self.started {
            return;
        }
        self.started = true;
        let base = self
            .opts
            .id
            .clone()
            .unwrap_or_else(|| "msg_toolstream".into());
        let id = if self.responses == 0 {
            base
        } else {
            format!("{base}_{}", self.responses)
        };
        sse(
            out,
            Some("message_start"),
            &json!({"type": "message_start", "message": {
                "id": id, "type": "message", "role": "assistant", "model": self.opts.model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            }}),
        );
    }

    /// Closes the open block. A truncated call's block gets no stop at all:
    /// the decoder then sees it cut (by the next block or by `message_delta`),
    /// as the API does at `max_tokens`.
    fn stop_block(&mut self, out: &mut Vec<u8>) {
        if self.block != Block::None {
            let index = self.next_block - 1;
            sse(
                out,
                Some("content_block_stop"),
                &json!({"type": "content_block_stop", "index": index}),
            );
        }
        self.block = Block::None;
    }

    fn open(&mut self, block: Block, content: serde_json::Value, out: &mut Vec<u8>) {
        self.stop_block(out);
        let index = self.next_block;
        self.next_block += 1;
        sse(
            out,
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": content}),
        );
        self.block = block;
    }

    fn delta(&self, delta: serde_json::Value, out: &mut Vec<u8>) {
        let index = self.next_block - 1;
        sse(
            out,
            Some("content_block_delta"),
            &json!({"type": "content_block_delta", "index": index, "delta": delta}),
        );
    }

    pub(crate) fn event(&mut self, e: &Event, out: &mut Vec<u8>) {
        if let Block::Tool(cur) = self.block {
            let mine = match e {
                Event::ToolArgs { index, .. } => *index == cur,
                Event::ToolEnd { call, .. } => call.index == cur,
                Event::Finish { .. } | Event::Error { .. } => true,
                Event::Diagnostic { .. } => true,
                _ => false,
            };
            if !mine {
                self.queue.push_back(e.clone());
                return;
            }
        }
        self.write(e, out);
    }

    fn drain(&mut self, out: &mut Vec<u8>) {
        let q = std::mem::take(&mut self.queue);
        for e in q {
            self.event(&e, out);
        }
    }

    fn write(&mut self, e: &Event, out: &mut Vec<u8>) {
        if self.failed && !matches!(e, Event::Finish { .. }) {
            return;
        }
        match e {
            Event::Text { text, .. } => {
                self.start(out);
                if self.block != Block::Text {
                    self.open(Block::Text, json!({"type": "text", "text": ""}), out);
                }
                self.delta(
                    json!({"type": "text_delta", "text": String::from_utf8_lossy(text)}),
                    out,
                );
            }
            Event::Thinking { text, .. } => {
                self.start(out);
                if self.block != Block::Thinking {
                    self.open(
                        Block::Thinking,
                        json!({"type": "thinking", "thinking": "", "signature": ""}),
                        out,
                    );
                }
                self.delta(
                    json!({"type": "thinking_delta", "thinking": String::from_utf8_lossy(text)}),
                    out,
                );
            }
            Event::Opaque {
                kind: OpaqueKind::ThinkingSignature,
                data,
                ..
            } => {
                self.start(out);
                if self.block != Block::Thinking {
                    self.open(
                        Block::Thinking,
                        json!({"type": "thinking", "thinking": "", "signature": ""}),
                        out,
                    );
                }
                self.delta(json!({"type": "signature_delta", "signature": data}), out);
            }
            Event::Opaque {
                kind: OpaqueKind::RedactedThinking,
                data,
                ..
            } => {
                self.start(out);
                self.open(
                    Block::None,
                    json!({"type": "redacted_thinking", "data": data}),
                    out,
                );
                // `open` left `block` as None: close it now.
                let index = self.next_block - 1;
                sse(
                    out,
                    Some("content_block_stop"),
                    &json!({"type": "content_block_stop", "index": index}),
                );
            }
            Event::ToolStart {
                index, id, name, ..
            } => {
                self.start(out);
                self.calls += 1;
                self.open(
                    Block::Tool(*index),
                    json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                    out,
                );
            }
            Event::ToolArgs { delta, .. } => {
                self.delta(json!({"type": "input_json_delta", "partial_json": String::from_utf8_lossy(delta)}), out);
            }
            Event::ToolEnd { call, .. } => {
                self.truncated |= call.truncated;
                if call.truncated {
                    self.block = Block::None;
                } else {
                    self.stop_block(out);
                }
                self.drain(out);
            }
            Event::Error { kind, message, .. } if is_fatal(*kind) => {
                self.start(out);
                sse(
                    out,
                    Some("error"),
                    &json!({"type": "error", "error": {"type": "api_error", "message": message}}),
                );
                self.failed = true;
                self.queue.clear();
            }
            Event::Finish { reason, usage, .. } => self.end(reason, usage.as_ref(), out),
            _ => {}
        }
    }

    fn end(&mut self, reason: &FinishReason, usage: Option<&Usage>, out: &mut Vec<u8>) {
        // Anything still queued (calls that never ended) goes out first.
        if let Block::Tool(_) = self.block {
            self.block = Block::None;
            self.truncated = true;
        }
        self.drain(out);
        if !self.failed && *reason == FinishReason::Error {
            self.start(out);
            sse(
                out,
                Some("error"),
                &json!({"type": "error", "error": {"type": "api_error", "message": "the response failed"}}),
            );
            self.failed = true;
        }
        if !self.failed {
            self.start(out);
            let d = derive(reason, self.calls, self.truncated);
            self.stop_block(out);
            let stop_reason = match d {
                Derived::Length => "max_tokens",
                Derived::ContentFilter => "refusal",
                Derived::ToolCalls => "tool_use",
                Derived::PauseTurn => "pause_turn",
                Derived::Stop => "end_turn",
            };
            let mut u = json!({"output_tokens": usage.and_then(|u| u.output_tokens).unwrap_or(0)});
            if let Some(i) = usage.and_then(|u| u.input_tokens) {
                u["input_tokens"] = json!(i);
            }
            sse(
                out,
                Some("message_delta"),
                &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": u}),
            );
            sse(out, Some("message_stop"), &json!({"type": "message_stop"}));
        }
        self.started = false;
        self.block = Block::None;
        self.next_block = 0;
        self.calls = 0;
        self.truncated = false;
        self.failed = false;
        self.responses += 1;
        self.queue.clear();
    }

    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        if self.started || self.failed || !self.queue.is_empty() || self.responses == 0 {
            let r = if self.failed {
                FinishReason::Error
            } else {
                FinishReason::Stop
            };
            self.end(&r, None, out);
        }
    }
}
