//! OpenAI Responses streams (STREAMS.md §3), including LM Studio, xAI, Azure
//! and the ChatGPT backend.
//!
//! * `function_call` (and `mcp_call`) items are calls: `output_item.added`
//!   begins one (id = `call_id`), `function_call_arguments.delta` streams it,
//!   `output_item.done` ends it. When no delta came (LM Studio, "spark"
//!   models) the arguments of `function_call_arguments.done` or of the done
//!   item are used; when the deltas are a prefix of `.done`, the rest is
//!   appended; any other mismatch keeps the deltas and reports a diagnostic.
//! * `custom_tool_call` items carry free text: the call's arguments are
//!   `{"input": "<text>"}`.
//! * `output_text.delta` and `refusal.delta` → `Text`;
//!   `reasoning_summary_text.delta` and `reasoning_text.delta` → `Thinking`.
//!   Items that arrive only whole (text or summary in `output_item.done`
//!   without deltas) are emitted from the done item.
//! * A reasoning item's `encrypted_content` → [`Event::Opaque`].
//! * `response.completed` / `.incomplete` / `.failed` end a response; a
//!   stream may hold several responses. `error` is a provider error (flat or
//!   nested `error` object).

use std::collections::HashMap;

use super::json::{Doc, Payloads, J};
use super::{Base, Decode, Frame};
use crate::config::Config;
use crate::event::{Event, FinishReason, OpaqueKind, Span};

#[derive(Debug, Default)]
struct Item {
    /// Our call index, for call items.
    call: Option<usize>,
    /// Raw argument text received through deltas.
    raw: String,
    /// Any delta (text, reasoning or arguments) was seen for this item.
    deltas: bool,
    custom: bool,
}

pub(crate) struct ResponsesDecoder {
    base: Base,
    /// Items by `item_id` (`#n` for an item without id at output index n).
    items: HashMap<String, Item>,
    /// Output index → item key.
    by_output: HashMap<u64, String>,
}

fn key(id: Option<&str>, output_index: Option<u64>) -> String {
    match (id, output_index) {
        (Some(id), _) => id.to_owned(),
        (None, Some(i)) => format!("#{i}"),
        (None, None) => String::new(),
    }
}

impl ResponsesDecoder {
    pub(crate) fn new(cfg: &Config) -> Self {
        ResponsesDecoder {
            base: Base::new(cfg, "`response.completed`"),
            items: HashMap::new(),
            by_output: HashMap::new(),
        }
    }

    /// The item an event refers to (by `item_id`, else `output_index`).
    fn item_key(&self, r: J<'_, '_>) -> String {
        let oi = r.get("output_index").u64();
        if let Some(id) = r.get("item_id").nonempty() {
            if self.items.contains_key(id) {
                return id.to_owned();
            }
        }
        if let Some(k) = oi.and_then(|i| self.by_output.get(&i)) {
            return k.clone();
        }
        key(r.get("item_id").nonempty(), oi)
    }

    fn event(&mut self, d: &Doc<'_, '_>, ty: &str, span: Span, out: &mut Vec<Event>) {
        let r = d.root;
        match ty {
            "response.created" | "response.in_progress" | "response.queued" => {
                if ty == "response.created" {
                    self.items.clear();
                    self.by_output.clear();
                }
                self.base.active = true;
            }
            "response.output_item.added" => {
                self.base.active = true;
                let item = r.get("item");
                let id = item.get("id").nonempty();
                let oi = r.get("output_index").u64();
                let it = self.added(d, item, span, out);
                let k = key(id, oi);
                if let Some(oi) = oi {
                    self.by_output.insert(oi, k.clone());
                }
                self.items.insert(k, it);
            }
            "response.function_call_arguments.delta"
            | "response.mcp_call_arguments.delta"
            | "response.custom_tool_call_input.delta" => {
                self.base.active = true;
                let k = self.item_key(r);
                let delta = r.get("delta").str().unwrap_or_default();
                let Some(it) = self.items.get_mut(&k) else {
                    self.base
                        .unknown(format!("`{ty}` for an unknown item; skipped"), span, out);
                    return;
                };
                it.deltas = true;
                it.raw.push_str(delta);
                if let (Some(ci), false) = (it.call, it.custom) {
                    self.base.calls.args(ci, delta.as_bytes(), span, out);
                }
            }
            "response.function_call_arguments.done" | "response.mcp_call_arguments.done" => {
                self.base.active = true;
                let k = self.item_key(r);
                if let Some(args) = r.get("arguments").str() {
                    self.full_args(&k, args, span, out);
                }
            }
            "response.custom_tool_call_input.done" => {
                let k = self.item_key(r);
                if let Some(input) = r.get("input").str() {
                    if let Some(it) = self.items.get_mut(&k) {
                        it.raw = input.to_owned();
                        it.deltas = true;
                    }
                }
            }
            "response.output_item.done" => {
                self.base.active = true;
                let item = r.get("item");
                let id = item.get("id").nonempty();
                let oi = r.get("output_index").u64();
                let k = match id {
                    Some(id) if self.items.contains_key(id) => id.to_owned(),
                    _ => oi
                        .and_then(|i| self.by_output.get(&i).cloned())
                        .unwrap_or_else(|| key(id, oi)),
                };
                self.done_item(d, &k, item, span, out);
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                self.base.active = true;
                self.mark_delta(r);
                if let Some(t) = r.get("delta").str() {
                    self.base.text(d, t, span, out);
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.base.active = true;
                self.mark_delta(r);
                if let Some(t) = r.get("delta").str() {
                    self.base.thinking(d, t, span, out);
                }
            }
            "response.completed" | "response.incomplete" => {
                let resp = r.get("response");
                let u = resp.get("usage");
                if u.is_object() {
                    self.base.set_usage(
                        u.get("input_tokens").u64(),
                        u.get("output_tokens").u64(),
                        u.get("output_tokens_details").get("reasoning_tokens").u64(),
                    );
                }
                if ty == "response.incomplete" {
                    let why = resp
                        .get("incomplete_details")
                        .get("reason")
                        .str()
                        .unwrap_or("incomplete");
                    self.base.reason = Some(match why {
                        "max_output_tokens" | "max_tokens" => FinishReason::Length,
                        "content_filter" => FinishReason::ContentFilter,
                        other => FinishReason::Other(other.to_owned()),
                    });
                    let open = self.base.calls.open_handles();
                    for ci in open {
                        self.base.calls.end(ci, true, span, out);
                    }
                } else if !self.base.errored {
                    self.base.reason = Some(FinishReason::Stop);
                }
                self.base.finish_response(span, out);
                self.items.clear();
                self.by_output.clear();
            }
            "response.failed" => {
                if !self.base.errored {
                    let e = r.get("response").get("error");
                    let msg = e.get("message").str().unwrap_or("response failed");
                    let message = match e.get("code").str() {
                        Some(c) => format!("{c}: {msg}"),
                        None => msg.to_owned(),
                    };
                    self.base.provider_error(message, span, out);
                }
                self.base.reason = Some(FinishReason::Error);
                self.base.finish_response(span, out);
                self.items.clear();
            }
            "error" => {
                let e = if r.get("error").is_object() {
                    r.get("error")
                } else {
                    r
                };
                let msg = e.get("message").str().unwrap_or("unknown error");
                let code = e
                    .get("code")
                    .str()
                    .or_else(|| e.get("type").str().filter(|t| *t != "error"));
                let message = match code {
                    Some(c) => format!("{c}: {msg}"),
                    None => msg.to_owned(),
                };
                self.base.provider_error(message, span, out);
            }
            t if is_known(t) => {}
            other => self.base.unknown(
                format!("event `{other}` is not represented; skipped"),
                span,
                out,
            ),
        }
    }

    fn mark_delta(&mut self, r: J<'_, '_>) {
        let k = self.item_key(r);
        if let Some(it) = self.items.get_mut(&k) {
            it.deltas = true;
        }
    }

    fn added(
        &mut self,
        _d: &Doc<'_, '_>,
        item: J<'_, '_>,
        span: Span,
        out: &mut Vec<Event>,
    ) -> Item {
        let mut it = Item::default();
        match item.get("type").str().unwrap_or_default() {
            "function_call" | "mcp_call" | "custom_tool_call" => {
                let id = item
                    .get("call_id")
                    .nonempty()
                    .or_else(|| item.get("id").nonempty());
                let ci = self
                    .base
                    .calls
                    .begin(id, item.get("name").nonempty(), span, out);
                it.call = Some(ci);
                it.custom = item.get("type").str() == Some("custom_tool_call");
                if let Some(a) = item.get("arguments").nonempty() {
                    if !it.custom {
                        it.raw.push_str(a);
                        it.deltas = true;
                        self.base.calls.args(ci, a.as_bytes(), span, out);
                    }
                }
            }
            "reasoning" | "message" => {}
            other => {
                self.base.unknown(
                    format!("output item `{other}` is not represented; skipped"),
                    span,
                    out,
                );
            }
        }
        it
    }

    /// Whole arguments from a `.done` event or a done item.
    fn full_args(&mut self, k: &str, args: &str, span: Span, out: &mut Vec<Event>) {
        let Some(it) = self.items.get_mut(k) else {
            return;
        };
        let Some(ci) = it.call else { return };
        if it.custom {
            return;
        }
        if !it.deltas {
            it.deltas = true;
            it.raw.push_str(args);
            self.base.calls.args(ci, args.as_bytes(), span, out);
        } else if it.raw != args {
            if let Some(rest) = args.strip_prefix(it.raw.as_str()) {
                let rest = rest.to_owned();
                it.raw.push_str(&rest);
                self.base.calls.args(ci, rest.as_bytes(), span, out);
            } else {
                self.base.unknown(
                    "`arguments` of the done event differ from the streamed deltas; the deltas are kept",
                    span,
                    out,
                );
            }
        }
    }

    fn done_item(
        &mut self,
        d: &Doc<'_, '_>,
        k: &str,
        item: J<'_, '_>,
        span: Span,
        out: &mut Vec<Event>,
    ) {
        let deltas = self.items.get(k).is_some_and(|it| it.deltas);
        match item.get("type").str().unwrap_or_default() {
            "function_call" | "mcp_call" | "custom_tool_call" => {
                let call = self.items.get(k).and_then(|it| it.call);
                let ci = match call {
                    Some(ci) => ci,
                    None => {
                        // Done without added: the whole call at once.
                        let id = item
                            .get("call_id")
                            .nonempty()
                            .or_else(|| item.get("id").nonempty());
                        let ci = self
                            .base
                            .calls
                            .begin(id, item.get("name").nonempty(), span, out);
                        let custom = item.get("type").str() == Some("custom_tool_call");
                        self.items.insert(
                            k.to_owned(),
                            Item {
                                call: Some(ci),
                                custom,
                                ..Item::default()
                            },
                        );
                        ci
                    }
                };
                if let Some(n) = item.get("name").nonempty() {
                    self.base.calls.set_name(ci, n, span, out);
                }
                let custom = self.items.get(k).is_some_and(|it| it.custom);
                if custom {
                    let input = match item.get("input").str() {
                        Some(s) if !deltas => s.to_owned(),
                        _ => self
                            .items
                            .get(k)
                            .map(|it| it.raw.clone())
                            .unwrap_or_default(),
                    };
                    let json = serde_json::json!({ "input": input }).to_string();
                    self.base.calls.args(ci, json.as_bytes(), span, out);
                } else if let Some(a) = item.get("arguments").str() {
                    self.full_args(k, a, span, out);
                }
                self.base.calls.end(ci, false, span, out);
            }
            "reasoning" => {
                if !deltas {
                    for s in item
                        .get("summary")
                        .items()
                        .chain(item.get("content").items())
                    {
                        if let Some(t) = s.get("text").str() {
                            self.base.thinking(d, t, span, out);
                        }
                    }
                }
                if let Some(enc) = item.get("encrypted_content").nonempty() {
                    out.push(Event::Opaque {
                        kind: OpaqueKind::EncryptedReasoning,
                        index: None,
                        data: enc.to_owned(),
                        span,
                    });
                }
            }
            "message" if !deltas => {
                for c in item.get("content").items() {
                    if let Some(t) = c.get("text").str().or_else(|| c.get("refusal").str()) {
                        self.base.text(d, t, span, out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Event types that are understood and carry nothing the events model.
fn is_known(t: &str) -> bool {
    const EXACT: &[&str] = &[
        "response.content_part.added",
        "response.content_part.done",
        "response.output_text.done",
        "response.output_text.annotation.added",
        "response.refusal.done",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.done",
        "response.reasoning_text.done",
        "keepalive",
        "ping",
    ];
    const PREFIXES: &[&str] = &[
        "response.web_search_call.",
        "response.file_search_call.",
        "response.code_interpreter_call",
        "response.image_generation_call.",
        "response.mcp_list_tools.",
        "response.mcp_call.",
        "response.audio",
    ];
    EXACT.contains(&t) || PREFIXES.iter().any(|p| t.starts_with(p))
}

impl Decode for ResponsesDecoder {
    fn base(&mut self) -> &mut Base {
        &mut self.base
    }

    fn frame(&mut self, f: &Frame<'_>, p: &mut Payloads, out: &mut Vec<Event>) {
        let data = f.data.trim_ascii();
        if data.is_empty() || data == b"[DONE]" {
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
