//! Cohere v2 `/v2/chat` streams (STREAMS.md §7).
//!
//! * `content-delta` → `Text` (`text`) or `Thinking` (`thinking`);
//!   `tool-plan-delta` (the plan Cohere writes before calling tools) →
//!   `Thinking`.
//! * `tool-call-start` / `tool-call-delta` / `tool-call-end` are a call's
//!   start, argument fragments and end (`tool_calls` is an object there, not
//!   an array).
//! * `message-end` ends the response (`TOOL_CALL`, `COMPLETE`, `MAX_TOKENS`,
//!   …; usage from `usage.tokens`, else `usage.billed_units`); a later
//!   `[DONE]` is ignored.

use std::collections::HashMap;

use super::json::{Doc, Payloads};
use super::{Base, Decode, Frame};
use crate::config::Config;
use crate::event::{Event, FinishReason, Span};

pub(crate) struct CohereDecoder {
    base: Base,
    by_index: HashMap<u64, usize>,
    last_call: Option<usize>,
}

impl CohereDecoder {
    pub(crate) fn new(cfg: &Config) -> Self {
        let mut base = Base::new(cfg, "`message-end`");
        base.calls.empty_ok = true;
        CohereDecoder {
            base,
            by_index: HashMap::new(),
            last_call: None,
        }
    }

    fn call_for(&self, index: Option<u64>) -> Option<usize> {
        match index {
            Some(i) => self.by_index.get(&i).copied(),
            None => self.last_call,
        }
    }

    fn event(&mut self, d: &Doc<'_, '_>, ty: &str, span: Span, out: &mut Vec<Event>) {
        let r = d.root;
        let msg = r.get("delta").get("message");
        match ty {
            "message-start" => {
                self.base.active = true;
                self.by_index.clear();
            }
            "content-start" | "content-delta" => {
                self.base.active = true;
                let c = msg.get("content");
                if let Some(t) = c.get("thinking").str() {
                    self.base.thinking(d, t, span, out);
                }
                if let Some(t) = c.get("text").str() {
                    self.base.text(d, t, span, out);
                }
            }
            "tool-plan-delta" => {
                self.base.active = true;
                if let Some(t) = msg.get("tool_plan").str() {
                    self.base.thinking(d, t, span, out);
                }
            }
            "tool-call-start" => {
                self.base.active = true;
                let tc = msg.get("tool_calls");
                let f = tc.get("function");
                let ci = self.base.calls.begin(
                    tc.get("id").nonempty(),
                    f.get("name").nonempty(),
                    span,
                    out,
                );
                if let Some(i) = r.get("index").u64() {
                    self.by_index.insert(i, ci);
                }
                self.last_call = Some(ci);
                if let Some(a) = f.get("arguments").nonempty() {
                    self.base.calls.args(ci, a.as_bytes(), span, out);
                }
            }
            "tool-call-delta" => {
                self.base.active = true;
                match self.call_for(r.get("index").u64()) {
                    Some(ci) => {
                        if let Some(a) =
                            msg.get("tool_calls").get("function").get("arguments").str()
                        {
                            self.base.calls.args(ci, a.as_bytes(), span, out);
                        }
                    }
                    None => self.base.unknown(
                        "`tool-call-delta` without a started call; skipped",
                        span,
                        out,
                    ),
                }
            }
            "tool-call-end" => {
                self.base.active = true;
                if let Some(ci) = self.call_for(r.get("index").u64()) {
                    self.base.calls.end(ci, false, span, out);
                }
            }
            "message-end" => {
                let delta = r.get("delta");
                if let Some(fr) = delta.get("finish_reason").nonempty() {
                    self.base.reason = Some(match fr {
                        "COMPLETE" | "STOP_SEQUENCE" => FinishReason::Stop,
                        "TOOL_CALL" => FinishReason::ToolCalls,
                        "MAX_TOKENS" => FinishReason::Length,
                        "ERROR" | "TIMEOUT" => FinishReason::Error,
                        other => FinishReason::Other(other.to_owned()),
                    });
                }
                let u = delta.get("usage");
                let t = if u.get("tokens").is_object() {
                    u.get("tokens")
                } else {
                    u.get("billed_units")
                };
                self.base.set_usage(
                    t.get("input_tokens").u64(),
                    t.get("output_tokens").u64(),
                    t.get("reasoning_tokens").u64(),
                );
                let cut = self.base.reason == Some(FinishReason::Length);
                self.base.calls.end_all(cut, span, out);
                self.base.finish_response(span, out);
            }
            "content-end" | "citation-start" | "citation-end" | "debug" => {}
            "error" => {
                let m = r
                    .get("message")
                    .str()
                    .or_else(|| r.get("error").get("message").str())
                    .unwrap_or("unknown error");
                self.base.provider_error(m.to_owned(), span, out);
            }
            other => self.base.unknown(
                format!("event `{other}` is not represented; skipped"),
                span,
                out,
            ),
        }
    }
}

impl Decode for CohereDecoder {
    fn base(&mut self) -> &mut Base {
        &mut self.base
    }

    fn frame(&mut self, f: &Frame<'_>, p: &mut Payloads, out: &mut Vec<Event>) {
        let data = f.data.trim_ascii();
        if data.is_empty() {
            return;
        }
        if data == b"[DONE]" {
            if self.base.active {
                self.base.finish_response(f.span, out);
            }
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
        self.base.eof(end, out);
    }
}
