//! OpenAI Chat Completions streams (`chat.completion.chunk`) and the
//! OpenAI-compatible servers' deviations (STREAMS.md §2.5).
//!
//! How deltas are merged into calls:
//!
//! * A delta with an `index` continues the open call of that index, unless it
//!   carries a non-empty `id` different from the call's (older Ollama sent
//!   every call at index 0), or a different non-empty `name` once the call's
//!   arguments are complete; then it starts a new call.
//! * A delta without `index` (Mistral, Gemini-compat, gateways) continues the
//!   most recently opened call under the same rules.
//! * `id` / `name` that are `""` or `null` are absent (DashScope, vLLM,
//!   Venice); a known id or name is never overwritten and names are never
//!   appended (old llama.cpp repeated the name on every delta). A call that
//!   ends without any name is no call (a `dropped_call` diagnostic).
//! * Arguments may come whole in one delta (Ollama, Groq, Mistral, xAI,
//!   LM Studio), in the start delta (llama.cpp's first `{`), as `""`, as
//!   `"null"` (Groq's zero-argument calls) or as a JSON object instead of a
//!   string; index numbering may start at 1 (Anthropic's compatibility
//!   endpoint). Our indexes always count from 0.
//! * Calls end at `finish_reason`, at `[DONE]`, at end of stream, or when a
//!   new call begins and their arguments are already complete. There is no
//!   end-of-call event, so a call is `truncated` exactly when its arguments
//!   were incomplete (`finish_reason: length` mid-arguments, a cut stream).
//! * Reasoning: `reasoning_content` (DeepSeek, xAI, Qwen, vLLM < 0.11),
//!   `reasoning` (OpenRouter, Ollama, vLLM ≥ 0.11), `reasoning_text`
//!   (Copilot); `reasoning_details[]` text only when none of those is
//!   present (OpenRouter sends both); encrypted details and Copilot's
//!   `reasoning_opaque` become [`Event::Opaque`].
//! * `refusal` text is text. Only choice 0 is decoded.
//! * Legacy completions (`POST /v1/completions`, `"object":
//!   "text_completion"`): a choice without `delta` or `message` carries its
//!   text in `text`; it is content like a chat delta's `content` (and goes
//!   through the content re-parser when that is on). `finish_reason` and
//!   `usage` are read as for chat; `logprobs` are skipped.
//! * A payload with a non-null `error` is a provider error.

use std::collections::HashMap;

use super::json::{Doc, Payloads, J};
use super::{openai_reason, Base, Decode, Frame};
use crate::config::Config;
use crate::event::{Event, OpaqueKind, Span};

pub(crate) struct OpenAiDecoder {
    base: Base,
    /// Provider tool index → our index.
    by_index: HashMap<u64, usize>,
    other_choices: bool,
}

impl OpenAiDecoder {
    pub(crate) fn new(cfg: &Config) -> Self {
        let mut base = Base::new(cfg, "`[DONE]` or a finish_reason");
        // No end-of-call event: a call is truncated when its arguments are.
        base.calls.cut_marks_truncated = false;
        OpenAiDecoder {
            base,
            by_index: HashMap::new(),
            other_choices: false,
        }
    }

    fn chunk(&mut self, d: &Doc<'_, '_>, span: Span, out: &mut Vec<Event>) {
        // One pass over each object's keys (see `J::pick`).
        let [err, usage, x_groq, choices] = d.root.pick(["error", "usage", "x_groq", "choices"]);
        if err.exists() {
            let msg = err
                .get("message")
                .str()
                .map(str::to_owned)
                .or_else(|| err.str().map(str::to_owned))
                .unwrap_or_else(|| err.encode());
            let kind = err.get("type").str().or_else(|| err.get("code").str());
            let message = match kind {
                Some(k) => format!("{k}: {msg}"),
                None => msg,
            };
            self.base.provider_error(message, span, out);
            return;
        }
        self.base.active = true;
        self.usage(usage);
        self.usage(x_groq.get("usage"));
        for choice in choices.items() {
            let [index, delta, message, text, finish_reason] =
                choice.pick(["index", "delta", "message", "text", "finish_reason"]);
            if index.u64().unwrap_or(0) != 0 {
                if !self.other_choices {
                    self.other_choices = true;
                    self.base.unknown(
                        "only choice 0 is decoded; other choices are skipped",
                        span,
                        out,
                    );
                }
                continue;
            }
            if delta.exists() {
                self.delta(d, delta, span, out);
            } else if message.exists() {
                self.delta(d, message, span, out);
            } else if let Some(t) = text.str() {
                // A legacy completions chunk.
                self.base.text(d, t, span, out);
            }
            if let Some(fr) = finish_reason.nonempty() {
                let reason = openai_reason(fr);
                self.base.calls.end_all(true, span, out);
                self.base.reason = Some(reason);
                self.base.eof_ok = true;
            }
        }
    }

    fn usage(&mut self, u: J<'_, '_>) {
        if u.is_object() {
            self.base.set_usage(
                u.get("prompt_tokens")
                    .u64()
                    .or_else(|| u.get("input_tokens").u64()),
                u.get("completion_tokens")
                    .u64()
                    .or_else(|| u.get("output_tokens").u64()),
                u.get("completion_tokens_details")
                    .get("reasoning_tokens")
                    .u64(),
            );
        }
    }

    fn delta(&mut self, d: &Doc<'_, '_>, delta: J<'_, '_>, span: Span, out: &mut Vec<Event>) {
        let [reasoning_content, reasoning, reasoning_text, details, opaque, content, refusal, tool_calls, function_call] =
            delta.pick([
                "reasoning_content",
                "reasoning",
                "reasoning_text",
                "reasoning_details",
                "reasoning_opaque",
                "content",
                "refusal",
                "tool_calls",
                "function_call",
            ]);
        // Reasoning.
        let reasoning = reasoning_content
            .nonempty()
            .or_else(|| reasoning.nonempty())
            .or_else(|| reasoning_text.nonempty());
        match reasoning {
            Some(t) => self.base.thinking(d, t, span, out),
            None => {
                for det in details.items() {
                    if let Some(t) = det
                        .get("text")
                        .nonempty()
                        .or_else(|| det.get("summary").nonempty())
                    {
                        self.base.thinking(d, t, span, out);
                    }
                }
            }
        }
        for det in details.items() {
            if det.get("type").str() == Some("reasoning.encrypted") {
                if let Some(data) = det.get("data").nonempty() {
                    out.push(Event::Opaque {
                        kind: OpaqueKind::EncryptedReasoning,
                        index: None,
                        data: data.to_owned(),
                        span,
                    });
                }
            }
        }
        if let Some(o) = opaque.nonempty() {
            out.push(Event::Opaque {
                kind: OpaqueKind::EncryptedReasoning,
                index: None,
                data: o.to_owned(),
                span,
            });
        }
        if let Some(t) = content.str() {
            self.base.text(d, t, span, out);
        }
        if let Some(t) = refusal.str() {
            self.base.text(d, t, span, out);
        }
        let mut any_tool_call = false;
        for tc in tool_calls.items() {
            any_tool_call = true;
            self.tool_delta(d, tc, span, out);
        }
        // The legacy `function_call` is read only when the delta has no
        // `tool_calls`: llama-cpp-python's server mirrors `tool_calls[0]` into
        // it in every chunk (corpus/streams/*-tools-forced.sse), and reading
        // both doubled every argument fragment.
        if function_call.is_object() && !any_tool_call {
            self.tool_fields(d, None, None, function_call, span, out);
        }
    }

    fn tool_delta(&mut self, d: &Doc<'_, '_>, tc: J<'_, '_>, span: Span, out: &mut Vec<Event>) {
        let [index, id, function, extra] = tc.pick(["index", "id", "function", "extra_content"]);
        let ci = self.tool_fields(d, index.u64(), id.nonempty(), function, span, out);
        if let Some(ci) = ci {
            if let Some(sig) = extra.get("google").get("thought_signature").nonempty() {
                out.push(Event::Opaque {
                    kind: OpaqueKind::ThoughtSignature,
                    index: self.base.calls.index_of(ci),
                    data: sig.to_owned(),
                    span,
                });
            }
        }
    }

    /// Merges one tool-call delta; returns our index of the call it went to.
    fn tool_fields(
        &mut self,
        d: &Doc<'_, '_>,
        pidx: Option<u64>,
        id: Option<&str>,
        func: J<'_, '_>,
        span: Span,
        out: &mut Vec<Event>,
    ) -> Option<usize> {
        let [name, args_j] = func.pick(["name", "arguments"]);
        let name = name.nonempty();
        let args_owned;
        let args: &[u8] = if let Some(s) = args_j.str() {
            s.as_bytes()
        } else if args_j.is_object() || args_j.is_array() {
            args_owned = args_j.encode();
            args_owned.as_bytes()
        } else {
            b""
        };
        let calls = &self.base.calls;
        let current = match pidx {
            Some(p) => self.by_index.get(&p).copied(),
            None => calls.last_open(),
        };
        let target = match current {
            Some(ci) if calls.is_open(ci) => {
                let known_id = calls.id(ci).unwrap_or_default();
                let known_name = calls.name(ci).unwrap_or_default();
                let new_id = id.is_some_and(|i| !known_id.is_empty() && i != known_id);
                let new_name = name
                    .is_some_and(|n| !known_name.is_empty() && (n != known_name || pidx.is_none()))
                    && calls.is_complete(ci);
                if new_id || new_name {
                    None
                } else {
                    Some(ci)
                }
            }
            Some(_) if id.is_none() && name.is_none() => {
                // More for a call that has ended.
                if args.iter().any(|c| !c.is_ascii_whitespace()) {
                    self.base.unknown(
                        "arguments for a call that has already ended; skipped",
                        span,
                        out,
                    );
                }
                return None;
            }
            _ => None,
        };
        let ci = match target {
            Some(ci) => {
                if let Some(i) = id {
                    self.base.calls.set_id(ci, i);
                }
                if let Some(n) = name {
                    self.base.calls.set_name(ci, n, span, out);
                }
                ci
            }
            None => {
                if id.is_none() && name.is_none() && args.is_empty() {
                    return None;
                }
                // Calls whose arguments are complete end when a new one begins.
                for open in self.base.calls.take_completed() {
                    self.base.calls.end(open, false, span, out);
                }
                let ci = self.base.calls.begin(id, name, span, out);
                if let Some(p) = pidx {
                    self.by_index.insert(p, ci);
                }
                ci
            }
        };
        if !args.is_empty() {
            self.base.calls.args(ci, args, span, out);
        }
        let _ = d;
        Some(ci)
    }
}

impl Decode for OpenAiDecoder {
    fn base(&mut self) -> &mut Base {
        &mut self.base
    }

    fn frame(&mut self, f: &Frame<'_>, p: &mut Payloads, out: &mut Vec<Event>) {
        let data = f.data.trim_ascii();
        if data.is_empty() {
            return;
        }
        if data.starts_with(b"[DONE]") {
            self.base.finish_response(f.span, out);
            self.by_index.clear();
            return;
        }
        let mark = out.len();
        let res = p.parse_lenient(f.data, |d| self.chunk(d, f.span, out));
        self.base.parsed(res.map(|r| r.1), f.span, mark, out);
    }

    fn finish(&mut self, end: u64, out: &mut Vec<Event>) {
        self.base.eof(end, out);
    }
}

#[cfg(test)]
mod tests {
    use crate::event::{Event, FinishReason};
    use crate::parser::Parsed;
    use crate::provider::{decode, decode_chunks, DecodeOptions, Provider};
    use crate::Config;

    fn completion(text: &str, finish: Option<&str>) -> String {
        format!(
            "data: {}\n\n",
            serde_json::json!({
                "object": "text_completion",
                "choices": [{"text": text, "index": 0, "logprobs": null, "finish_reason": finish}],
            })
        )
    }

    #[test]
    fn legacy_completion_text_is_content() {
        let sse = completion(" Paris", None)
            + &completion(" is", None)
            + &completion("", Some("length"))
            + "data: {\"object\":\"text_completion\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n";
        for opts in [
            DecodeOptions::default(),
            DecodeOptions::default().with_provider(Provider::OpenAi),
        ] {
            let events = decode(sse.as_bytes(), &opts);
            let finish: Vec<_> = events
                .iter()
                .filter_map(|e| match e {
                    Event::Finish { reason, usage, .. } => Some((reason.clone(), usage.clone())),
                    _ => None,
                })
                .collect();
            assert_eq!(finish.len(), 1);
            assert_eq!(finish[0].0, FinishReason::Length);
            let usage = finish[0].1.clone().expect("usage");
            assert_eq!(
                (usage.input_tokens, usage.output_tokens),
                (Some(5), Some(2))
            );
            let p = Parsed::from_events(events);
            assert_eq!(p.text, " Paris is");
            assert!(p.calls.is_empty());
        }
    }

    #[test]
    fn legacy_completion_text_is_reparsed() {
        let sse = completion("Sure.<tool_call>{\"name\": \"f\", ", None)
            + &completion("\"arguments\": {\"a\": 1}}</tool_call>", None)
            + &completion("", Some("stop"))
            + "data: [DONE]\n\n";
        let opts = DecodeOptions::default().with_reparse(Config::default());
        let whole = decode(sse.as_bytes(), &opts);
        assert_eq!(decode_chunks(sse.as_bytes().chunks(3), &opts), whole);
        assert!(whole.iter().any(|e| matches!(
            e,
            Event::Finish {
                reason: FinishReason::ToolCalls,
                ..
            }
        )));
        let p = Parsed::from_events(whole);
        assert_eq!(p.text, "Sure.");
        assert_eq!(p.calls.len(), 1);
        assert_eq!(p.calls[0].name, "f");
        assert_eq!(
            p.calls[0].arguments_value().unwrap(),
            serde_json::json!({"a": 1})
        );
    }

    #[test]
    fn a_chat_delta_wins_over_a_stray_text() {
        // A choice with both is a chat chunk: `text` is not read twice.
        let sse = "data: {\"choices\":[{\"index\":0,\"text\":\"x\",\"delta\":{\"content\":\"y\"}}]}\n\ndata: [DONE]\n\n";
        let p = Parsed::from_events(decode(sse.as_bytes(), &DecodeOptions::default()));
        assert_eq!(p.text, "y");
    }
}
