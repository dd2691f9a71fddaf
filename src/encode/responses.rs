//! Events → OpenAI Responses SSE.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::{derive, is_fatal, sse, Derived, EncodeOptions};
use crate::event::{Event, FinishReason, OpaqueKind, Usage};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    None,
    /// A message item at this output index.
    Message(usize),
    /// A reasoning item at this output index.
    Reasoning(usize),
}

#[derive(Debug)]
pub(crate) struct ResponsesEncoder {
    opts: EncodeOptions,
    seq: u64,
    started: bool,
    /// Output items so far (their final form, for `response.completed`).
    output: Vec<Value>,
    open: Open,
    /// Text of the open message / reasoning item.
    buf: String,
    /// Encrypted content waiting for the next reasoning item to close.
    encrypted: Option<String>,
    /// Call index → output index.
    calls: HashMap<usize, usize>,
    /// Arguments so far of the calls still open, by output index.
    args: HashMap<usize, String>,
    ncalls: usize,
    truncated: bool,
    failed: bool,
    responses: usize,
    /// Names of freeform tools: their calls are `custom_tool_call` items.
    custom: HashSet<String>,
    /// Output indexes of the open custom calls.
    custom_open: HashSet<usize>,
}

/// The free text of a freeform (`custom`) tool call offered as a function
/// with one string parameter: that string, or the arguments as written
/// when the model used another shape.
pub(crate) fn custom_input(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(o)) if o.len() == 1 => match o.values().next() {
            Some(Value::String(s)) => s.clone(),
            _ => arguments.to_string(),
        },
        _ => arguments.to_string(),
    }
}

impl ResponsesEncoder {
    pub(crate) fn set_custom_tools(&mut self, names: HashSet<String>) {
        self.custom = names;
    }

    pub(crate) fn new(opts: EncodeOptions) -> Self {
        ResponsesEncoder {
            opts,
            seq: 0,
            started: false,
            output: Vec::new(),
            open: Open::None,
            buf: String::new(),
            encrypted: None,
            calls: HashMap::new(),
            args: HashMap::new(),
            ncalls: 0,
            truncated: false,
            failed: false,
            responses: 0,
            custom: HashSet::new(),
            custom_open: HashSet::new(),
        }
    }

    fn id(&self) -> String {
        let base = self
            .opts
            .id
            .clone()
            .unwrap_or_else(|| "resp_toolstream".into());
        if self.responses == 0 {
            base
        } else {
            format!("{base}_{}", self.responses)
        }
    }

    fn emit(&mut self, ty: &str, mut v: Value, out: &mut Vec<u8>) {
        v["type"] = json!(ty);
        v["sequence_number"] = json!(self.seq);
        self.seq += 1;
        sse(out, Some(ty), &v);
    }

    fn response(&self, status: &str, usage: Option<&Usage>) -> Value {
        let usage = usage.map(|u| {
            let (i, o) = (u.input_tokens.unwrap_or(0), u.output_tokens.unwrap_or(0));
            json!({
                "input_tokens": i,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": o,
                "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens.unwrap_or(0)},
                "total_tokens": i + o,
            })
        });
        json!({
            "id": self.id(),
            "object": "response",
            "created_at": self.opts.created,
            "status": status,
            "error": null,
            "incomplete_details": null,
            "instructions": null,
            "model": self.opts.model,
            "output": if status == "in_progress" { json!([]) } else { Value::Array(self.output.clone()) },
            "parallel_tool_calls": true,
            "tool_choice": "auto",
            "tools": [],
            "usage": usage,
        })
    }

    fn start(&mut self, out: &mut Vec<u8>) {
        if self.started {
            return;
        }
        self.started = true;
        let r = self.response("in_progress", None);
        self.emit("response.created", json!({"response": r}), out);
        let r = self.response("in_progress", None);
        self.emit("response.in_progress", json!({"response": r}), out);
    }

    fn item_id(prefix: &str, oi: usize) -> String {
        format!("{prefix}_{oi}")
    }

    fn close_open(&mut self, out: &mut Vec<u8>) {
        match std::mem::replace(&mut self.open, Open::None) {
            Open::None => {}
            Open::Message(oi) => {
                let id = Self::item_id("msg", oi);
                let text = std::mem::take(&mut self.buf);
                let part = json!({"type": "output_text", "text": text, "annotations": []});
                self.emit(
                    "response.output_text.done",
                    json!({"item_id": id, "output_index": oi, "content_index": 0, "text": text}),
                    out,
                );
                self.emit(
                    "response.content_part.done",
                    json!({"item_id": id, "output_index": oi, "content_index": 0, "part": part}),
                    out,
                );
                let item = json!({"id": id, "type": "message", "status": "completed", "role": "assistant", "content": [part]});
                self.output[oi] = item.clone();
                self.emit(
                    "response.output_item.done",
                    json!({"output_index": oi, "item": item}),
                    out,
                );
            }
            Open::Reasoning(oi) => {
                let id = Self::item_id("rs", oi);
                let text = std::mem::take(&mut self.buf);
                let part = json!({"type": "summary_text", "text": text});
                self.emit(
                    "response.reasoning_summary_text.done",
                    json!({"item_id": id, "output_index": oi, "summary_index": 0, "text": text}),
                    out,
                );
                self.emit(
                    "response.reasoning_summary_part.done",
                    json!({"item_id": id, "output_index": oi, "summary_index": 0, "part": part}),
                    out,
                );
                let mut item = json!({"id": id, "type": "reasoning", "summary": [part]});
                if let Some(enc) = self.encrypted.take() {
                    item["encrypted_content"] = json!(enc);
                }
                self.output[oi] = item.clone();
                self.emit(
                    "response.output_item.done",
                    json!({"output_index": oi, "item": item}),
                    out,
                );
            }
        }
    }

    pub(crate) fn event(&mut self, e: &Event, out: &mut Vec<u8>) {
        if self.failed && !matches!(e, Event::Finish { .. }) {
            return;
        }
        match e {
            Event::Text { text, .. } => {
                self.start(out);
                let oi = match self.open {
                    Open::Message(oi) => oi,
                    _ => {
                        self.close_open(out);
                        let oi = self.output.len();
                        let id = Self::item_id("msg", oi);
                        let item = json!({"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []});
                        self.output.push(item.clone());
                        self.emit(
                            "response.output_item.added",
                            json!({"output_index": oi, "item": item}),
                            out,
                        );
                        self.emit(
                            "response.content_part.added",
                            json!({"item_id": id, "output_index": oi, "content_index": 0,
                                   "part": {"type": "output_text", "text": "", "annotations": []}}),
                            out,
                        );
                        self.open = Open::Message(oi);
                        oi
                    }
                };
                let t = String::from_utf8_lossy(text);
                self.buf.push_str(&t);
                self.emit(
                    "response.output_text.delta",
                    json!({"item_id": Self::item_id("msg", oi), "output_index": oi, "content_index": 0, "delta": t, "logprobs": []}),
                    out,
                );
            }
            Event::Thinking { text, .. } => {
                self.start(out);
                let oi = match self.open {
                    Open::Reasoning(oi) => oi,
                    _ => self.open_reasoning(out),
                };
                let t = String::from_utf8_lossy(text);
                self.buf.push_str(&t);
                self.emit(
                    "response.reasoning_summary_text.delta",
                    json!({"item_id": Self::item_id("rs", oi), "output_index": oi, "summary_index": 0, "delta": t}),
                    out,
                );
            }
            Event::Opaque {
                kind: OpaqueKind::EncryptedReasoning,
                data,
                ..
            } => {
                self.start(out);
                self.encrypted = Some(data.clone());
                if !matches!(self.open, Open::Reasoning(_)) {
                    self.open_reasoning(out);
                }
                self.close_open(out);
            }
            Event::ToolStart {
                index, id, name, ..
            } => {
                self.start(out);
                self.close_open(out);
                self.ncalls += 1;
                let oi = self.output.len();
                let item = if self.custom.contains(name.as_str()) {
                    self.custom_open.insert(oi);
                    json!({"id": Self::item_id("ctc", oi), "type": "custom_tool_call", "status": "in_progress",
                           "input": "", "call_id": id, "name": name})
                } else {
                    json!({"id": Self::item_id("fc", oi), "type": "function_call", "status": "in_progress",
                           "arguments": "", "call_id": id, "name": name})
                };
                self.output.push(item.clone());
                self.calls.insert(*index, oi);
                self.emit(
                    "response.output_item.added",
                    json!({"output_index": oi, "item": item}),
                    out,
                );
            }
            Event::ToolArgs { index, delta, .. } => {
                if let Some(&oi) = self.calls.get(index) {
                    let d = String::from_utf8_lossy(delta);
                    self.args.entry(oi).or_default().push_str(&d);
                    if self.custom_open.contains(&oi) {
                        // The input is the decoded string: written whole at the end.
                        return;
                    }
                    self.emit(
                        "response.function_call_arguments.delta",
                        json!({"item_id": Self::item_id("fc", oi), "output_index": oi, "delta": d}),
                        out,
                    );
                }
            }
            Event::ToolEnd { call, .. } => {
                if let Some(oi) = self.calls.remove(&call.index) {
                    self.args.remove(&oi);
                    if self.custom_open.remove(&oi) {
                        let input = custom_input(&call.arguments);
                        self.output[oi]["input"] = json!(input);
                        if call.truncated {
                            self.truncated = true;
                            self.output[oi]["status"] = json!("incomplete");
                            return;
                        }
                        self.output[oi]["status"] = json!("completed");
                        self.emit(
                            "response.custom_tool_call_input.done",
                            json!({"item_id": Self::item_id("ctc", oi), "output_index": oi, "input": input}),
                            out,
                        );
                        let item = self.output[oi].clone();
                        self.emit(
                            "response.output_item.done",
                            json!({"output_index": oi, "item": item}),
                            out,
                        );
                        return;
                    }
                    self.output[oi]["arguments"] = json!(call.arguments);
                    if call.truncated {
                        // Left open: `response.incomplete` ends it, as a cut call.
                        self.truncated = true;
                        self.output[oi]["status"] = json!("incomplete");
                        return;
                    }
                    self.output[oi]["status"] = json!("completed");
                    self.emit(
                        "response.function_call_arguments.done",
                        json!({"item_id": Self::item_id("fc", oi), "output_index": oi, "arguments": call.arguments}),
                        out,
                    );
                    let item = self.output[oi].clone();
                    self.emit(
                        "response.output_item.done",
                        json!({"output_index": oi, "item": item}),
                        out,
                    );
                }
            }
            Event::Error { kind, message, .. } if is_fatal(*kind) => {
                self.start(out);
                self.emit(
                    "error",
                    json!({"code": null, "message": message, "param": null}),
                    out,
                );
                self.fail(message, out);
            }
            Event::Finish { reason, usage, .. } => self.end(reason, usage.as_ref(), out),
            _ => {}
        }
    }

    fn open_reasoning(&mut self, out: &mut Vec<u8>) -> usize {
        self.close_open(out);
        let oi = self.output.len();
        let id = Self::item_id("rs", oi);
        let item = json!({"id": id, "type": "reasoning", "summary": []});
        self.output.push(item.clone());
        self.emit(
            "response.output_item.added",
            json!({"output_index": oi, "item": item}),
            out,
        );
        self.emit(
            "response.reasoning_summary_part.added",
            json!({"item_id": id, "output_index": oi, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
            out,
        );
        self.open = Open::Reasoning(oi);
        oi
    }

    fn fail(&mut self, message: &str, out: &mut Vec<u8>) {
        self.close_open(out);
        let mut r = self.response("failed", None);
        r["error"] = json!({"code": "server_error", "message": message});
        self.emit("response.failed", json!({"response": r}), out);
        self.failed = true;
    }

    fn end(&mut self, reason: &FinishReason, usage: Option<&Usage>, out: &mut Vec<u8>) {
        if !self.failed && *reason == FinishReason::Error {
            self.start(out);
            self.emit(
                "error",
                json!({"code": null, "message": "the response failed", "param": null}),
                out,
            );
            self.fail("the response failed", out);
        }
        if !self.failed {
            self.start(out);
            self.close_open(out);
            if !self.calls.is_empty() {
                // Calls that never ended go out as they stand, incomplete.
                self.truncated = true;
                for (oi, a) in self.args.drain() {
                    if self.custom_open.remove(&oi) {
                        self.output[oi]["input"] = json!(custom_input(&a));
                    } else {
                        self.output[oi]["arguments"] = json!(a);
                    }
                    self.output[oi]["status"] = json!("incomplete");
                }
            }
            match derive(reason, self.ncalls, self.truncated) {
                Derived::Length | Derived::ContentFilter => {
                    let why = if derive(reason, self.ncalls, self.truncated) == Derived::Length {
                        "max_output_tokens"
                    } else {
                        "content_filter"
                    };
                    let mut r = self.response("incomplete", usage);
                    r["incomplete_details"] = json!({"reason": why});
                    self.emit("response.incomplete", json!({"response": r}), out);
                }
                _ => {
                    let r = self.response("completed", usage);
                    self.emit("response.completed", json!({"response": r}), out);
                }
            }
        }
        self.started = false;
        self.output.clear();
        self.open = Open::None;
        self.buf.clear();
        self.encrypted = None;
        self.calls.clear();
        self.args.clear();
        self.custom_open.clear();
        self.ncalls = 0;
        self.truncated = false;
        self.failed = false;
        self.responses += 1;
    }

    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        if self.started || self.responses == 0 {
            self.end(&FinishReason::Stop, None, out);
        }
    }
}
