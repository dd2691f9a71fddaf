//! Ollama's native `/api/chat` NDJSON stream (STREAMS.md §5).
//!
//! * `message.thinking` → `Thinking`, `message.content` → `Text` (with `think`
//!   unset, qwen3 streams its reasoning and a literal `</think>` as content:
//!   that stays text unless content re-parsing is on).
//! * Each `message.tool_calls[]` element is a whole call: `ToolStart`, one
//!   `ToolArgs` with the `arguments` object as compact JSON, `ToolEnd`.
//! * `done: true` ends the response (`done_reason` `stop` even after tool
//!   calls, so `Stop` with calls becomes `ToolCalls`); usage is
//!   `prompt_eval_count` / `eval_count`.
//! * A line `{"error": "…"}` is a provider error.

use super::json::{Doc, Payloads};
use super::{Base, Decode, Frame};
use crate::config::Config;
use crate::event::{Event, FinishReason, Span};

pub(crate) struct OllamaDecoder {
    base: Base,
}

impl OllamaDecoder {
    pub(crate) fn new(cfg: &Config) -> Self {
        OllamaDecoder {
            base: Base::new(cfg, "a `done: true` line"),
        }
    }

    fn line(&mut self, d: &Doc<'_, '_>, span: Span, out: &mut Vec<Event>) {
        let r = d.root;
        let err = r.get("error");
        if err.exists() {
            let message = err.str().map(str::to_owned).unwrap_or_else(|| err.encode());
            self.base.provider_error(message, span, out);
            return;
        }
        self.base.active = true;
        let m = r.get("message");
        if let Some(t) = m.get("thinking").str() {
            self.base.thinking(d, t, span, out);
        }
        if let Some(t) = m.get("content").str() {
            self.base.text(d, t, span, out);
        }
        for tc in m.get("tool_calls").items() {
            let f = tc.get("function");
            let ci =
                self.base
                    .calls
                    .begin(tc.get("id").nonempty(), f.get("name").nonempty(), span, out);
            let a = f.get("arguments");
            if let Some(s) = a.str() {
                self.base.calls.args(ci, s.as_bytes(), span, out);
            } else if a.exists() {
                self.base.calls.args(ci, a.encode().as_bytes(), span, out);
            }
            self.base.calls.end(ci, false, span, out);
        }
        if r.get("done").bool() == Some(true) {
            self.base.reason = Some(match r.get("done_reason").str().unwrap_or("stop") {
                "stop" => FinishReason::Stop,
                "length" => FinishReason::Length,
                other => FinishReason::Other(other.to_owned()),
            });
            self.base.set_usage(
                r.get("prompt_eval_count").u64(),
                r.get("eval_count").u64(),
                None,
            );
            self.base.finish_response(span, out);
        }
    }
}

impl Decode for OllamaDecoder {
    fn base(&mut self) -> &mut Base {
        &mut self.base
    }

    fn frame(&mut self, f: &Frame<'_>, p: &mut Payloads, out: &mut Vec<Event>) {
        if f.data.trim_ascii().is_empty() {
            return;
        }
        let mark = out.len();
        let res = p.parse_lenient(f.data, |d| self.line(d, f.span, out));
        self.base.parsed(res.map(|r| r.1), f.span, mark, out);
    }

    fn finish(&mut self, end: u64, out: &mut Vec<Event>) {
        self.base.eof(end, out);
    }
}
