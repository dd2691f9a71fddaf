//! Provider stream decoders: the wire formats of LLM APIs in, [`Event`]s out.
//!
//! [`StreamDecoder`] owns the whole pipeline:
//!
//! ```text
//! bytes ─▶ framing (SSE / NDJSON / AWS eventstream) ─▶ provider decoder ─▶ [content re-parser] ─▶ events
//! ```
//!
//! The framing and the [`Provider`] are detected from the first bytes unless
//! given ([`DecodeOptions`]). Decoding never fails: a malformed payload
//! becomes an [`Event::Error`] of kind [`ErrorKind::Malformed`] and decoding
//! goes on, an unknown event type becomes an [`Event::Diagnostic`], an
//! oversized frame an [`Event::Error`] of kind [`ErrorKind::Limit`], and a
//! stream that ends before its provider's terminal event has its open calls
//! closed with `truncated: true`, then an [`Event::Error`] of kind
//! [`ErrorKind::Truncated`].
//!
//! # What the events promise
//!
//! * For each call: `ToolStart`, then `ToolArgs` deltas, then `ToolEnd`; the
//!   deltas concatenate to exactly [`ToolCall::arguments`](crate::ToolCall),
//!   which is always a valid JSON **object**. Provider argument text goes
//!   through the crate's [`Repairer`](crate::json::Repairer): valid JSON
//!   passes unchanged; anything else is repaired and the repairs are listed
//!   (a repair's offset is the start of the frame whose fragment triggered it).
//!   `"null"`, missing and non-object arguments become objects (`{}`,
//!   `{"value": …}`) with a repair recorded.
//! * A call whose name never comes (only `null` or `""`) is no call: a
//!   [`crate::DiagnosticKind::DroppedCall`] diagnostic holds its id and
//!   arguments.
//! * Call indexes count 0, 1, 2… in the order calls begin, across the whole
//!   stream. Calls of one provider may be open at the same time (OpenAI
//!   allows interleaving); each `ToolArgs` names its call.
//! * Every event's span is the byte range of the frame that produced it (an
//!   SSE event, an NDJSON line, an eventstream message); events produced at
//!   end of stream have an empty span at the end.
//! * One [`Event::Finish`] per provider response, at its terminal event
//!   (`[DONE]`, `message_stop`, `response.completed`, `done: true`, …) or at
//!   end of stream. Its reason is the provider's, mapped to
//!   [`FinishReason`]; for providers whose protocol has no tool-call reason
//!   (Gemini, Ollama, Responses, Bedrock) or that are known to send `stop`
//!   after tool calls (OpenAI-compatible servers), `Stop` becomes `ToolCalls`
//!   when the response made calls. Usage is the last the provider reported.
//! * Opaque state a client must send back (thinking signatures, redacted
//!   thinking, Gemini `thoughtSignature`, encrypted reasoning) is kept in
//!   [`Event::Opaque`].
//! * The events depend only on the bytes, never on how they were split into
//!   reads: decoding is chunk-invariant, spans included.

mod anthropic;
mod bedrock;
mod calls;
mod cohere;
mod gemini;
pub(crate) mod json;
mod ollama;
mod openai;
mod reparse;
mod responses;

use std::fmt;

use bytes::{Bytes, BytesMut};

use crate::config::Config;
use crate::event::{Delta, DiagnosticKind, ErrorKind, Event, FinishReason, Span, Usage};
use crate::frame::{FrameError, FrameErrorKind, FrameLimits};
use crate::ndjson::{NdjsonDecoder, NdjsonLine};
use crate::sse::{SseDecoder, SseEvent};

pub use bedrock::EventStreamDecoder;

use calls::Calls;
use json::{Doc, Payloads};

/// The provider APIs whose streams can be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI Chat Completions (`chat.completion.chunk`) and legacy
    /// completions (`text_completion`, `choices[].text`), and every
    /// OpenAI-compatible server (vLLM, llama.cpp, Ollama `/v1`, Groq,
    /// Mistral, xAI, DeepSeek, OpenRouter, LM Studio, …).
    OpenAi,
    /// OpenAI Responses (`response.*` events; also Azure, xAI, LM Studio).
    Responses,
    /// Anthropic Messages.
    Anthropic,
    /// Ollama's native `/api/chat` NDJSON.
    Ollama,
    /// Google Gemini / Vertex `streamGenerateContent`.
    Gemini,
    /// Cohere v2 chat.
    Cohere,
    /// AWS Bedrock `ConverseStream` (binary eventstream, or its JSON payloads
    /// one per line).
    Bedrock,
}

impl Provider {
    /// Every provider.
    pub const ALL: &'static [Provider] = &[
        Provider::OpenAi,
        Provider::Responses,
        Provider::Anthropic,
        Provider::Ollama,
        Provider::Gemini,
        Provider::Cohere,
        Provider::Bedrock,
    ];

    /// The CLI name.
    pub const fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Responses => "responses",
            Provider::Anthropic => "anthropic",
            Provider::Ollama => "ollama",
            Provider::Gemini => "gemini",
            Provider::Cohere => "cohere",
            Provider::Bedrock => "bedrock",
        }
    }

    /// Looks a provider up by name (case-insensitive; a few aliases).
    pub fn from_name(name: &str) -> Result<Provider, UnknownProvider> {
        let n = name.trim().to_ascii_lowercase().replace('_', "-");
        Ok(match n.as_str() {
            "openai" | "chat" | "openai-chat" | "chat-completions" | "openai-compatible" => {
                Provider::OpenAi
            }
            "responses" | "openai-responses" => Provider::Responses,
            "anthropic" | "claude" | "messages" => Provider::Anthropic,
            "ollama" | "ollama-native" => Provider::Ollama,
            "gemini" | "google" | "vertex" => Provider::Gemini,
            "cohere" | "cohere-v2" => Provider::Cohere,
            "bedrock" | "converse" | "aws" => Provider::Bedrock,
            _ => return Err(UnknownProvider(name.to_owned())),
        })
    }

    /// The framing the provider normally uses.
    pub const fn framing(self) -> Framing {
        match self {
            Provider::Ollama => Framing::Ndjson,
            Provider::Bedrock => Framing::EventStream,
            _ => Framing::Sse,
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Provider {
    type Err = UnknownProvider;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Provider::from_name(s)
    }
}

/// A provider name was not recognised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProvider(pub String);

impl fmt::Display for UnknownProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Provider::ALL.iter().map(|p| p.name()).collect();
        write!(
            f,
            "unknown provider `{}` (known: {}, auto)",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownProvider {}

/// How the stream is cut into frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Framing {
    /// Server-sent events ([`crate::sse`]).
    Sse,
    /// One JSON payload per line ([`crate::ndjson`]): Ollama's native API, and
    /// recordings that keep only the SSE data payloads.
    Ndjson,
    /// AWS binary eventstream ([`EventStreamDecoder`]).
    EventStream,
}

/// What a [`StreamDecoder`] needs to know.
#[derive(Clone, Debug, Default)]
pub struct DecodeOptions {
    /// The provider; `None` detects it from the first frames.
    pub provider: Option<Provider>,
    /// The framing; `None` detects it from the first bytes.
    pub framing: Option<Framing>,
    /// Argument limits and the id generator for calls without an id (only
    /// [`Config::limits`] and [`Config::ids`] are used here).
    pub config: Config,
    /// Frame size limits.
    pub frame_limits: FrameLimits,
    /// Re-parse text content for in-band tool calls with this parser
    /// configuration (see [`StreamDecoder`]); `None` leaves content as text.
    pub reparse: Option<Config>,
}

impl DecodeOptions {
    /// Sets the provider.
    pub fn with_provider(mut self, provider: Provider) -> Self {
        self.provider = Some(provider);
        self
    }

    /// Sets the framing.
    pub fn with_framing(mut self, framing: Framing) -> Self {
        self.framing = Some(framing);
        self
    }

    /// Turns content re-parsing on with the given parser configuration.
    pub fn with_reparse(mut self, config: Config) -> Self {
        self.reparse = Some(config);
        self
    }
}

/// One frame as the provider decoders see it.
pub(crate) struct Frame<'a> {
    /// The SSE event name (or eventstream `:event-type`), if any.
    pub event: Option<&'a str>,
    pub data: &'a Bytes,
    pub span: Span,
}

/// A provider decoder.
pub(crate) trait Decode: Send {
    fn frame(&mut self, f: &Frame<'_>, p: &mut Payloads, out: &mut Vec<Event>);
    fn finish(&mut self, end: u64, out: &mut Vec<Event>);
    /// The state every decoder shares.
    fn base(&mut self) -> &mut Base;
}

/// State every provider decoder shares: the calls, the finish reason and
/// usage of the current response, and how the stream ended.
#[derive(Debug)]
pub(crate) struct Base {
    pub calls: Calls,
    pub reason: Option<FinishReason>,
    pub usage: Option<Usage>,
    /// Frames of a response were seen since the last `Finish`.
    pub active: bool,
    /// Any `Finish` was emitted.
    pub any_finish: bool,
    /// A provider error was reported in the current response.
    pub errored: bool,
    /// The stream may end here without being truncated.
    pub eof_ok: bool,
    /// `Stop` with calls becomes `ToolCalls`.
    pub stop_means_tools: bool,
    /// The name of the terminal event, for the truncation message.
    pub terminal: &'static str,
}

impl Base {
    pub(crate) fn new(cfg: &Config, terminal: &'static str) -> Self {
        Base {
            calls: Calls::new(&cfg.limits, &cfg.ids),
            reason: None,
            usage: None,
            active: false,
            any_finish: false,
            errored: false,
            eof_ok: false,
            stop_means_tools: true,
            terminal,
        }
    }

    pub(crate) fn text(&self, doc: &Doc<'_, '_>, s: &str, span: Span, out: &mut Vec<Event>) {
        if !s.is_empty() {
            out.push(Event::Text {
                text: doc.bytes(s).into(),
                span,
            });
        }
    }

    pub(crate) fn thinking(&self, doc: &Doc<'_, '_>, s: &str, span: Span, out: &mut Vec<Event>) {
        if !s.is_empty() {
            out.push(Event::Thinking {
                text: doc.bytes(s).into(),
                span,
            });
        }
    }

    /// The provider reported an error: open calls are cut, the response fails.
    pub(crate) fn provider_error(&mut self, message: String, span: Span, out: &mut Vec<Event>) {
        self.calls.end_all(true, span, out);
        out.push(Event::Error {
            kind: ErrorKind::Provider,
            message,
            span,
        });
        self.errored = true;
        self.active = true;
        self.reason = Some(FinishReason::Error);
    }

    /// Reports a payload that was not valid JSON: repaired and decoded
    /// (`Ok(Some(err))`), or skipped (`Err`).
    /// The report goes before the events decoded from the frame (at `mark`).
    pub(crate) fn parsed(
        &self,
        res: Result<Option<String>, String>,
        span: Span,
        mark: usize,
        out: &mut Vec<Event>,
    ) {
        let message = match res {
            Ok(None) => return,
            Ok(Some(e)) => format!("payload is not valid JSON ({e}); decoded after repair"),
            Err(e) => format!("payload is not JSON ({e}); skipped"),
        };
        out.insert(
            mark.min(out.len()),
            Event::Error {
                kind: ErrorKind::Malformed,
                message,
                span,
            },
        );
    }

    pub(crate) fn unknown(&self, message: impl Into<String>, span: Span, out: &mut Vec<Event>) {
        out.push(Event::Diagnostic {
            kind: DiagnosticKind::UnknownEvent,
            message: message.into(),
            span,
        });
    }

    /// Records usage numbers (only the ones given replace earlier ones).
    pub(crate) fn set_usage(
        &mut self,
        input: Option<u64>,
        output: Option<u64>,
        reasoning: Option<u64>,
    ) {
        if input.is_none() && output.is_none() && reasoning.is_none() {
            return;
        }
        let u = self.usage.get_or_insert_with(Usage::default);
        if input.is_some() {
            u.input_tokens = input;
        }
        if output.is_some() {
            u.output_tokens = output;
        }
        if reasoning.is_some() {
            u.reasoning_tokens = reasoning;
        }
    }

    /// The response ended normally: close open calls, emit `Finish`.
    pub(crate) fn finish_response(&mut self, span: Span, out: &mut Vec<Event>) {
        self.calls.end_all(false, span, out);
        let mut reason = self.reason.take().unwrap_or(FinishReason::Stop);
        if reason == FinishReason::Stop && self.stop_means_tools && self.calls.in_response > 0 {
            reason = FinishReason::ToolCalls;
        }
        out.push(Event::Finish {
            reason,
            usage: self.usage.take(),
            span,
        });
        self.calls.in_response = 0;
        self.active = false;
        self.any_finish = true;
        self.errored = false;
        self.eof_ok = false;
    }

    /// End of stream.
    pub(crate) fn eof(&mut self, end: u64, out: &mut Vec<Event>) {
        if !self.active && self.any_finish {
            return;
        }
        let span = Span::new(end, end);
        if self.eof_ok && !self.errored {
            self.finish_response(span, out);
            return;
        }
        self.calls.end_all(true, span, out);
        if !self.errored {
            let message = if self.active || self.any_finish {
                format!("stream ended before {}", self.terminal)
            } else {
                "stream ended before any event".to_string()
            };
            out.push(Event::Error {
                kind: ErrorKind::Truncated,
                message,
                span,
            });
        }
        self.reason = Some(FinishReason::Error);
        self.stop_means_tools = false;
        self.finish_response(span, out);
    }
}

/// The frame decoder chosen for the stream.
#[derive(Debug)]
enum Framer {
    Sse(SseDecoder),
    Ndjson(NdjsonDecoder),
    EventStream(EventStreamDecoder),
}

/// A frame kept while the provider is being detected.
struct Pending {
    event: Option<Bytes>,
    data: Bytes,
    span: Span,
}

/// Frames to look at before giving up on detection.
const DETECT_FRAMES: usize = 32;

/// Decodes one provider stream into [`Event`]s: framing, provider decoder
/// and (optionally) content re-parsing, behind a push API that needs no
/// runtime. With the `tokio` feature it is also a
/// `tokio_util::codec::Decoder<Item = Event>`.
///
/// # Content re-parsing
///
/// A local model behind an OpenAI-compatible server often writes its tool
/// calls as text (`<tool_call>{…}</tool_call>`) that the server does not
/// parse. With [`DecodeOptions::reparse`], every `Text` event goes through a
/// [`Parser`](crate::Parser) with that configuration, so those calls become
/// `ToolStart`/`ToolArgs`/`ToolEnd` (and `<think>` blocks become `Thinking`).
/// Native and in-content calls are merged into one index sequence, and a
/// call that both sources report (same name and same arguments value) is
/// emitted once: while calls of one source are out, a call of the other
/// source is held until it ends, compared, and then either dropped (with a
/// diagnostic) or released whole.
///
/// ```
/// use toolstream::provider::{DecodeOptions, StreamDecoder};
/// use toolstream::Event;
///
/// let sse = concat!(
///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]}}]}\n\n",
///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\": \\\"Pa\"}}]}}]}\n\n",
///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"ris\\\"}\"}}]}}]}\n\n",
///     "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
///     "data: [DONE]\n\n",
/// );
/// let mut dec = StreamDecoder::new(DecodeOptions::default());
/// let mut events = Vec::new();
/// for chunk in sse.as_bytes().chunks(7) {
///     dec.feed(chunk, &mut events);
/// }
/// dec.finish(&mut events);
/// let call = events.iter().find_map(|e| match e {
///     Event::ToolEnd { call, .. } => Some(call),
///     _ => None,
/// }).unwrap();
/// assert_eq!((call.id.as_str(), call.name.as_str()), ("call_1", "get_weather"));
/// assert_eq!(call.arguments, r#"{"city": "Paris"}"#);
/// assert!(matches!(events.last(), Some(Event::Finish { reason: toolstream::FinishReason::ToolCalls, .. })));
/// ```
pub struct StreamDecoder {
    opts: DecodeOptions,
    /// Bytes held while the framing is undecided.
    sniff: BytesMut,
    framer: Option<Framer>,
    decoder: Option<Box<dyn Decode>>,
    provider: Option<Provider>,
    pending: Vec<Pending>,
    payloads: Payloads,
    reparse: Option<reparse::Reparser>,
    sse_out: Vec<Result<SseEvent, FrameError>>,
    nd_out: Vec<Result<NdjsonLine, FrameError>>,
    es_out: Vec<Result<bedrock::Message, FrameError>>,
    tmp: Vec<Event>,
    pos: u64,
    queue: Vec<Event>,
    queue_pos: usize,
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    eof_done: bool,
}

impl fmt::Debug for StreamDecoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamDecoder")
            .field("provider", &self.provider)
            .field("framer", &self.framer)
            .field("pos", &self.pos)
            .finish_non_exhaustive()
    }
}

impl StreamDecoder {
    /// A decoder for one stream.
    pub fn new(opts: DecodeOptions) -> StreamDecoder {
        let reparse = opts
            .reparse
            .clone()
            .map(|cfg| reparse::Reparser::new(cfg, opts.config.ids.clone()));
        let mut d = StreamDecoder {
            opts,
            sniff: BytesMut::new(),
            framer: None,
            decoder: None,
            provider: None,
            pending: Vec::new(),
            payloads: Payloads::default(),
            reparse,
            sse_out: Vec::new(),
            nd_out: Vec::new(),
            es_out: Vec::new(),
            tmp: Vec::new(),
            pos: 0,
            queue: Vec::new(),
            queue_pos: 0,
            eof_done: false,
        };
        if let Some(f) = d.opts.framing {
            d.framer = Some(d.make_framer(f));
        }
        if let Some(p) = d.opts.provider {
            d.set_provider(p);
        }
        d
    }

    /// The provider, once known (given or detected).
    pub fn provider(&self) -> Option<Provider> {
        self.provider
    }

    /// The framing, once known (given or detected).
    pub fn framing(&self) -> Option<Framing> {
        self.framer.as_ref().map(|f| match f {
            Framer::Sse(_) => Framing::Sse,
            Framer::Ndjson(_) => Framing::Ndjson,
            Framer::EventStream(_) => Framing::EventStream,
        })
    }

    /// Number of bytes fed so far.
    pub fn position(&self) -> u64 {
        self.pos
    }

    fn make_framer(&self, f: Framing) -> Framer {
        let limits = self.opts.frame_limits.clone();
        match f {
            Framing::Sse => Framer::Sse(SseDecoder::with_limits(limits).dispatch_at_eof(true)),
            Framing::Ndjson => Framer::Ndjson(NdjsonDecoder::with_limits(limits)),
            Framing::EventStream => Framer::EventStream(EventStreamDecoder::with_limits(limits)),
        }
    }

    fn set_provider(&mut self, p: Provider) {
        let cfg = &self.opts.config;
        self.decoder = Some(match p {
            Provider::OpenAi => Box::new(openai::OpenAiDecoder::new(cfg)),
            Provider::Responses => Box::new(responses::ResponsesDecoder::new(cfg)),
            Provider::Anthropic => Box::new(anthropic::AnthropicDecoder::new(cfg)),
            Provider::Ollama => Box::new(ollama::OllamaDecoder::new(cfg)),
            Provider::Gemini => Box::new(gemini::GeminiDecoder::new(cfg)),
            Provider::Cohere => Box::new(cohere::CohereDecoder::new(cfg)),
            Provider::Bedrock => Box::new(bedrock::BedrockDecoder::new(cfg)),
        });
        self.provider = Some(p);
    }

    /// Feeds the next read (copied once), appending the events it completes.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Event>) {
        if !chunk.is_empty() {
            self.feed_bytes(Bytes::copy_from_slice(chunk), out);
        }
    }

    /// Feeds the next read without copying it (text events may be slices of it).
    pub fn feed_bytes(&mut self, chunk: Bytes, out: &mut Vec<Event>) {
        if chunk.is_empty() {
            return;
        }
        self.pos += chunk.len() as u64;
        let chunk = if self.framer.is_some() {
            chunk
        } else {
            self.sniff.extend_from_slice(&chunk);
            match sniff_framing(&self.sniff) {
                Some(f) => {
                    self.framer = Some(self.make_framer(f));
                    if f == Framing::EventStream && self.decoder.is_none() {
                        self.set_provider(Provider::Bedrock);
                    }
                    self.sniff.split().freeze()
                }
                None => return,
            }
        };
        self.push_framer(chunk, false);
        self.drain_frames(out);
    }

    /// Ends the stream: flushes the framing, closes what is open, emits the
    /// final `Finish` (or the truncation error). The decoder is then done;
    /// create a new one for another stream.
    pub fn finish(&mut self, out: &mut Vec<Event>) {
        if self.framer.is_none() {
            // Too little input to decide: take the provider's framing or SSE.
            let f = self
                .opts
                .provider
                .map(Provider::framing)
                .unwrap_or(Framing::Sse);
            self.framer = Some(self.make_framer(f));
            let held = self.sniff.split().freeze();
            if !held.is_empty() {
                self.push_framer(held, false);
            }
        }
        self.push_framer(Bytes::new(), true);
        self.drain_frames(out);
        if self.decoder.is_none() {
            // Nothing decisive: decode what was held as OpenAI-compatible.
            if !self.pending.is_empty() {
                self.tmp.push(Event::Diagnostic {
                    kind: DiagnosticKind::UnknownEvent,
                    message: "provider not recognised; decoding as OpenAI-compatible".into(),
                    span: self.pending[0].span,
                });
            }
            self.set_provider(Provider::OpenAi);
            self.replay();
        }
        let end = self.pos;
        if let Some(d) = self.decoder.as_mut() {
            d.finish(end, &mut self.tmp);
        }
        self.emit(out, true);
    }

    fn push_framer(&mut self, chunk: Bytes, eof: bool) {
        match self.framer.as_mut() {
            Some(Framer::Sse(d)) => {
                if !chunk.is_empty() {
                    d.feed_bytes(chunk, &mut self.sse_out);
                }
                if eof {
                    d.finish(&mut self.sse_out);
                }
            }
            Some(Framer::Ndjson(d)) => {
                if !chunk.is_empty() {
                    d.feed_bytes(chunk, &mut self.nd_out);
                }
                if eof {
                    d.finish(&mut self.nd_out);
                }
            }
            Some(Framer::EventStream(d)) => {
                if !chunk.is_empty() {
                    d.feed_bytes(chunk, &mut self.es_out);
                }
                if eof {
                    d.finish(&mut self.es_out);
                }
            }
            None => {}
        }
    }

    fn drain_frames(&mut self, out: &mut Vec<Event>) {
        let mut sse = std::mem::take(&mut self.sse_out);
        for item in sse.drain(..) {
            match item {
                Ok(ev) => self.frame(ev.event, ev.data, ev.span),
                Err(e) => self.frame_error(e),
            }
        }
        self.sse_out = sse;
        let mut nd = std::mem::take(&mut self.nd_out);
        for item in nd.drain(..) {
            match item {
                Ok(line) => self.frame(None, line.data, line.span),
                Err(e) => self.frame_error(e),
            }
        }
        self.nd_out = nd;
        let mut es = std::mem::take(&mut self.es_out);
        for item in es.drain(..) {
            match item {
                Ok(m) => self.eventstream_message(m),
                Err(e) => self.frame_error(e),
            }
        }
        self.es_out = es;
        self.emit(out, false);
    }

    fn eventstream_message(&mut self, m: bedrock::Message) {
        if m.message_type.as_deref() == Some("exception")
            || m.message_type.as_deref() == Some("error")
        {
            let kind = m
                .exception_type
                .clone()
                .or(m.event_type.clone())
                .unwrap_or_default();
            let text = String::from_utf8_lossy(&m.payload).into_owned();
            if self.decoder.is_none() {
                self.set_provider(Provider::Bedrock);
            }
            if let Some(d) = self.decoder.as_mut() {
                let data = Bytes::from(format!(
                    "{{\"__exception\":{},\"message\":{}}}",
                    serde_json::Value::String(kind),
                    serde_json::Value::String(text)
                ));
                d.frame(
                    &Frame {
                        event: Some("exception"),
                        data: &data,
                        span: m.span,
                    },
                    &mut self.payloads,
                    &mut self.tmp,
                );
            }
            return;
        }
        let event = m.event_type.map(Bytes::from);
        self.frame(event, m.payload, m.span);
    }

    fn frame_error(&mut self, e: FrameError) {
        // A frame lost inside open calls: each of them may miss a fragment.
        if matches!(
            e.kind,
            FrameErrorKind::TooLarge { .. } | FrameErrorKind::IgnoredLine
        ) {
            if let Some(d) = self.decoder.as_mut() {
                d.base().calls.frame_lost(e.span.start);
            }
        }
        if e.kind == FrameErrorKind::IgnoredLine {
            self.tmp.push(Event::Diagnostic {
                kind: DiagnosticKind::LostFrame,
                message: e.to_string(),
                span: e.span,
            });
            return;
        }
        let kind = match e.kind {
            FrameErrorKind::TooLarge { .. } => ErrorKind::Limit,
            _ => ErrorKind::Malformed,
        };
        self.tmp.push(Event::Error {
            kind,
            message: e.to_string(),
            span: e.span,
        });
    }

    fn frame(&mut self, event: Option<Bytes>, data: Bytes, span: Span) {
        if self.decoder.is_none() {
            let ev = event.as_deref().and_then(|e| std::str::from_utf8(e).ok());
            match detect(ev, &data, &mut self.payloads) {
                Some(p) => {
                    self.set_provider(p);
                    self.replay();
                }
                None => {
                    self.pending.push(Pending { event, data, span });
                    if self.pending.len() >= DETECT_FRAMES {
                        self.tmp.push(Event::Diagnostic {
                            kind: DiagnosticKind::UnknownEvent,
                            message: "provider not recognised; decoding as OpenAI-compatible"
                                .into(),
                            span: self.pending[0].span,
                        });
                        self.set_provider(Provider::OpenAi);
                        self.replay();
                    }
                    return;
                }
            }
        }
        let ev = event.as_deref().and_then(|e| std::str::from_utf8(e).ok());
        if let Some(d) = self.decoder.as_mut() {
            d.frame(
                &Frame {
                    event: ev,
                    data: &data,
                    span,
                },
                &mut self.payloads,
                &mut self.tmp,
            );
        }
    }

    fn replay(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for p in pending {
            let ev = p.event.as_deref().and_then(|e| std::str::from_utf8(e).ok());
            if let Some(d) = self.decoder.as_mut() {
                d.frame(
                    &Frame {
                        event: ev,
                        data: &p.data,
                        span: p.span,
                    },
                    &mut self.payloads,
                    &mut self.tmp,
                );
            }
        }
    }

    fn emit(&mut self, out: &mut Vec<Event>, eof: bool) {
        match self.reparse.as_mut() {
            Some(r) => {
                r.process(&mut self.tmp, out);
                if eof {
                    r.finish(self.pos, out);
                }
            }
            None => out.append(&mut self.tmp),
        }
    }
}

#[cfg(feature = "tokio")]
impl tokio_util::codec::Decoder for StreamDecoder {
    /// One event.
    type Item = Event;
    type Error = std::io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Event>, Self::Error> {
        if self.queue_pos == self.queue.len() && !src.is_empty() {
            let mut q = std::mem::take(&mut self.queue);
            q.clear();
            self.queue_pos = 0;
            self.feed_bytes(src.split().freeze(), &mut q);
            self.queue = q;
        }
        Ok(self.pop())
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Event>, Self::Error> {
        if let Some(e) = self.decode(src)? {
            return Ok(Some(e));
        }
        if !self.eof_done {
            self.eof_done = true;
            let mut q = std::mem::take(&mut self.queue);
            q.clear();
            self.queue_pos = 0;
            self.finish(&mut q);
            self.queue = q;
        }
        Ok(self.pop())
    }
}

impl StreamDecoder {
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    fn pop(&mut self) -> Option<Event> {
        let slot = self.queue.get_mut(self.queue_pos)?;
        let e = std::mem::replace(
            slot,
            Event::Text {
                text: Delta::new(),
                span: Span::default(),
            },
        );
        self.queue_pos += 1;
        Some(e)
    }
}

/// Decodes a whole stream at once.
pub fn decode(input: &[u8], opts: &DecodeOptions) -> Vec<Event> {
    decode_chunks(std::iter::once(input), opts)
}

/// Decodes a stream given as a sequence of reads.
pub fn decode_chunks<'a>(
    chunks: impl IntoIterator<Item = &'a [u8]>,
    opts: &DecodeOptions,
) -> Vec<Event> {
    let mut d = StreamDecoder::new(opts.clone());
    let mut out = Vec::new();
    for c in chunks {
        d.feed(c, &mut out);
    }
    d.finish(&mut out);
    out
}

/// Decides the framing from the first bytes (`None`: need more).
fn sniff_framing(buf: &[u8]) -> Option<Framing> {
    let mut b = buf;
    if b.starts_with(b"\xEF\xBB\xBF") {
        b = &b[3..];
    } else if b"\xEF\xBB\xBF".starts_with(b) {
        return None;
    }
    let first = *b
        .iter()
        .find(|c| !matches!(c, b' ' | b'\t' | b'\r' | b'\n'))?;
    Some(match first {
        b'{' => Framing::Ndjson,
        0 => Framing::EventStream,
        _ => Framing::Sse,
    })
}

const ANTHROPIC_TYPES: &[&str] = &[
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
];
const COHERE_TYPES: &[&str] = &[
    "message-start",
    "content-start",
    "content-delta",
    "content-end",
    "tool-plan-delta",
    "tool-call-start",
    "tool-call-delta",
    "tool-call-end",
    "citation-start",
    "citation-end",
    "message-end",
];
const BEDROCK_KEYS: &[&str] = &[
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
];

fn by_type(t: &str) -> Option<Provider> {
    if t.starts_with("response.") {
        Some(Provider::Responses)
    } else if ANTHROPIC_TYPES.contains(&t) {
        Some(Provider::Anthropic)
    } else if COHERE_TYPES.contains(&t) {
        Some(Provider::Cohere)
    } else {
        None
    }
}

/// Recognises the provider from one frame (`None`: not decisive).
fn detect(event: Option<&str>, data: &Bytes, payloads: &mut Payloads) -> Option<Provider> {
    if let Some(p) = event.and_then(by_type) {
        return Some(p);
    }
    let trimmed = data.trim_ascii();
    if trimmed == b"[DONE]" {
        return Some(Provider::OpenAi);
    }
    payloads
        .parse(data, |d| {
            let r = d.root;
            if let Some(t) = r.get("type").str() {
                if let Some(p) = by_type(t) {
                    return Some(p);
                }
            }
            if r.get("choices").exists() || r.get("object").str() == Some("chat.completion.chunk") {
                return Some(Provider::OpenAi);
            }
            if r.get("candidates").exists() || r.get("usageMetadata").exists() {
                return Some(Provider::Gemini);
            }
            if r.get("done").bool().is_some()
                && (r.get("message").is_object() || r.get("created_at").exists())
            {
                return Some(Provider::Ollama);
            }
            let err = r.get("error");
            if err.exists() {
                return match r.get("type").str() {
                    // Responses errors carry a sequence number; Anthropic's do not.
                    Some("error")
                        if r.get("sequence_number").exists() || r.get("code").exists() =>
                    {
                        Some(Provider::Responses)
                    }
                    Some("error") => Some(Provider::Anthropic),
                    _ if err.str().is_some() => Some(Provider::Ollama),
                    _ if err.get("status").exists() => Some(Provider::Gemini),
                    _ => Some(Provider::OpenAi),
                };
            }
            if BEDROCK_KEYS.iter().any(|k| r.get(k).is_object()) {
                return Some(Provider::Bedrock);
            }
            if r.get("message_type").exists() && r.get("payload").is_object() {
                return Some(Provider::Bedrock);
            }
            None
        })
        .ok()
        .flatten()
}

/// Maps an OpenAI `finish_reason`.
pub(crate) fn openai_reason(s: &str) -> FinishReason {
    match s {
        "stop" | "end_turn" | "stop_sequence" | "eos" => FinishReason::Stop,
        "tool_calls" | "function_call" | "tool_use" => FinishReason::ToolCalls,
        "length" | "max_tokens" => FinishReason::Length,
        "content_filter" | "refusal" => FinishReason::ContentFilter,
        "error" => FinishReason::Error,
        other => FinishReason::Other(other.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoders_can_move_between_threads() {
        fn send<T: Send>() {}
        send::<StreamDecoder>();
        send::<SseDecoder>();
        send::<NdjsonDecoder>();
        send::<EventStreamDecoder>();
        send::<crate::encode::Encoder>();
    }

    #[test]
    fn provider_names() {
        for p in Provider::ALL {
            assert_eq!(Provider::from_name(p.name()).unwrap(), *p);
        }
        assert_eq!("Claude".parse::<Provider>().unwrap(), Provider::Anthropic);
        assert!(Provider::from_name("nope")
            .unwrap_err()
            .to_string()
            .contains("known: openai"));
    }

    #[test]
    fn framing_sniff() {
        assert_eq!(sniff_framing(b"\n\n  data: x"), Some(Framing::Sse));
        assert_eq!(sniff_framing(b"\xEF\xBB"), None);
        assert_eq!(sniff_framing(b"\r\n"), None);
        assert_eq!(sniff_framing(b"{\"a\""), Some(Framing::Ndjson));
        assert_eq!(sniff_framing(b": ping"), Some(Framing::Sse));
        assert_eq!(sniff_framing(b"\0\0\x01"), Some(Framing::EventStream));
    }
}
