//! One request's pipeline, from the upstream's bytes to the client's:
//!
//! ```text
//! upstream SSE ─▶ StreamDecoder (OpenAI chunks; content re-parsed for in-band calls,
//!                 merged with native tool_calls and deduplicated)
//!              ─▶ tool names mapped back (shortened names → the client's)
//!              ─▶ [CallStage: the normalizer, when one is plugged in]
//!              ─▶ Encoder (the client's API) or Reply (non-streaming)
//! ```
//!
//! Text is passed on as soon as the parser releases it, a call's start as
//! soon as its name is known, its arguments as deltas. A [`CallStage`] sees
//! every event between the decoder and the encoder and may rewrite, hold
//! or drop them; without one, events pass unchanged. A stream the upstream
//! cuts ends with the client's own error event after what was already
//! sent, its open call flagged truncated (never presented as complete).

use std::sync::Arc;

use bytes::Bytes;

use super::error::Api;
use super::translate::reply::Reply;
use super::translate::ToolTable;
use crate::config::{Config, Tools};
use crate::encode::{EncodeOptions, Encoder};
use crate::event::{ErrorKind, Event};
use crate::provider::{DecodeOptions, Provider, StreamDecoder};

/// A stage between the decoder and the encoder, per request: the slot the
/// normalizer fills (checking and fixing calls against the request's tools).
///
/// It must keep the event contracts: every call it passes on has its
/// `ToolStart`, `ToolArgs` deltas that add up to the final arguments, and
/// `ToolEnd`; it ends with [`CallStage::finish`].
pub trait CallStage: Send {
    /// Takes the decoder's events (drained from `input`), appends what goes
    /// on to `out`.
    fn process(&mut self, input: &mut Vec<Event>, out: &mut Vec<Event>);
    /// The upstream reply is over: appends whatever is still held.
    fn finish(&mut self, out: &mut Vec<Event>);
}

/// Makes the [`CallStage`] of a request from the tools it offered (`None`:
/// no stage for this request).
pub type StageFactory = Arc<dyn Fn(&ToolTable) -> Option<Box<dyn CallStage>> + Send + Sync>;

/// What a session needs to know.
#[derive(Clone)]
pub struct SessionOptions {
    /// The client's API.
    pub api: Api,
    /// The client wants a stream (else the reply is collected).
    pub stream: bool,
    /// The model name reported to the client.
    pub model: String,
    /// The response id reported to the client.
    pub id: String,
    /// Unix seconds.
    pub created: u64,
    /// Parser configuration for in-band calls (the upstream model's
    /// dialects), `None` to leave content as text.
    pub parse: Option<Config>,
    /// The request's tools.
    pub tools: Arc<ToolTable>,
}

/// One request's decoder → stage → encoder pipeline.
pub struct Session {
    decoder: StreamDecoder,
    tools: Arc<ToolTable>,
    stage: Option<Box<dyn CallStage>>,
    encoder: Option<Encoder>,
    reply: Reply,
    events: Vec<Event>,
    staged: Vec<Event>,
    calls: usize,
    finished: bool,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("decoder", &self.decoder)
            .field("stage", &self.stage.is_some())
            .field("calls", &self.calls)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A session; `stage` is the request's [`CallStage`], if any.
    pub fn new(opts: SessionOptions, stage: Option<Box<dyn CallStage>>) -> Session {
        let mut dec = DecodeOptions::default().with_provider(Provider::OpenAi);
        if let Some(cfg) = opts.parse {
            let specs = opts.tools.upstream_specs();
            let cfg = if specs.is_empty() {
                cfg
            } else {
                cfg.with_tools(Tools::new(specs))
            };
            dec = dec.with_reparse(cfg);
        }
        let encoder = opts.stream.then(|| {
            Encoder::new(
                opts.api.target(),
                EncodeOptions {
                    model: opts.model.clone(),
                    id: Some(opts.id.clone()),
                    created: opts.created,
                },
            )
            .with_custom_tools(opts.tools.custom.clone())
        });
        Session {
            decoder: StreamDecoder::new(dec),
            tools: opts.tools,
            stage,
            encoder,
            reply: Reply::default(),
            events: Vec::new(),
            staged: Vec::new(),
            calls: 0,
            finished: false,
        }
    }

    /// Feeds the next bytes of the upstream reply; appends client bytes
    /// (streaming) to `out`.
    pub fn feed(&mut self, chunk: Bytes, out: &mut Vec<u8>) {
        if self.finished {
            return;
        }
        self.decoder.feed_bytes(chunk, &mut self.events);
        self.flush(false, out);
    }

    /// The upstream reply ended normally.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if self.finished {
            return;
        }
        self.decoder.finish(&mut self.events);
        self.flush(true, out);
    }

    /// The upstream reply was cut (`cause`: a read error, an idle timeout):
    /// open calls end truncated and the client gets its error event.
    pub fn cut(&mut self, cause: &str, out: &mut Vec<u8>) {
        if self.finished {
            return;
        }
        self.decoder.finish(&mut self.events);
        for e in &mut self.events {
            if let Event::Error {
                kind: ErrorKind::Truncated,
                message,
                ..
            } = e
            {
                *message = format!("upstream stream cut ({cause}): {message}");
            }
        }
        self.flush(true, out);
    }

    /// The collected reply (non-streaming sessions; complete after
    /// [`Session::finish`] or [`Session::cut`]).
    pub fn reply(&self) -> &Reply {
        &self.reply
    }

    /// Calls passed to the client so far.
    pub fn calls(&self) -> usize {
        self.calls
    }

    fn flush(&mut self, end: bool, out: &mut Vec<u8>) {
        for e in &mut self.events {
            match e {
                Event::ToolStart { name, .. } => {
                    let n = self.tools.client_name(name);
                    if n != name {
                        *name = n.to_string();
                    }
                }
                Event::ToolEnd { call, .. } => {
                    let n = self.tools.client_name(&call.name);
                    if n != call.name {
                        call.name = n.to_string();
                    }
                }
                _ => {}
            }
        }
        let events = match &mut self.stage {
            Some(stage) => {
                stage.process(&mut self.events, &mut self.staged);
                if end {
                    stage.finish(&mut self.staged);
                }
                &mut self.staged
            }
            None => &mut self.events,
        };
        for e in events.iter() {
            if let Event::ToolEnd { .. } = e {
                self.calls += 1;
            }
            match &mut self.encoder {
                Some(enc) => enc.encode(e, out),
                None => self.reply.push(e),
            }
        }
        events.clear();
        if end {
            if let Some(enc) = &mut self.encoder {
                enc.finish(out);
            }
            self.finished = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ToolSpec;

    fn opts(api: Api, stream: bool) -> SessionOptions {
        SessionOptions {
            api,
            stream,
            model: "claude".into(),
            id: "msg_1".into(),
            created: 0,
            parse: Some(Config::default()),
            tools: Arc::new(ToolTable::default()),
        }
    }

    const CUT: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi \"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\": \"}}]}}]}\n\n";

    #[test]
    fn cut_stream_ends_with_error_event() {
        let mut s = Session::new(opts(Api::Messages, true), None);
        let mut out = Vec::new();
        s.feed(Bytes::from_static(CUT.as_bytes()), &mut out);
        s.cut("connection reset", &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\"text\":\"Hi \""), "{text}");
        assert!(text.contains("\"name\":\"f\""));
        assert!(text.contains("event: error"));
        assert!(text.contains("upstream stream cut (connection reset)"));
        assert!(!text.contains("message_stop"));
    }

    #[test]
    fn content_calls_found_and_names_mapped_back() {
        let long = format!("mcp__server__{}", "t".repeat(70));
        let mut tools = ToolTable::default();
        let short = tools.upstream_name(&long, 64);
        tools.specs.push(ToolSpec {
            name: long.clone(),
            parameters: None,
        });
        let mut o = opts(Api::Chat, false);
        o.tools = Arc::new(tools);
        let mut s = Session::new(o, None);
        let body = format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"<tool_call>{{\\\"name\\\": \\\"{short}\\\", \\\"arguments\\\": {{\\\"x\\\": 1}}}}</tool_call>\"}}}}]}}\n\ndata: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}]}}\n\ndata: [DONE]\n\n"
        );
        let mut out = Vec::new();
        s.feed(Bytes::from(body), &mut out);
        s.finish(&mut out);
        assert!(out.is_empty());
        let c = s.reply().to_chat("id", "m", 0);
        assert_eq!(
            c["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
            long.as_str()
        );
        assert_eq!(c["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(s.calls(), 1);
    }

    /// A stage that holds every call until it ends and passes it on with
    /// its arguments as one delta: checks that the slot sees every event,
    /// and that what it emits is what is encoded.
    struct Hold {
        held: Vec<Event>,
    }

    impl CallStage for Hold {
        fn process(&mut self, input: &mut Vec<Event>, out: &mut Vec<Event>) {
            for e in input.drain(..) {
                match e {
                    Event::ToolStart { .. } | Event::ToolArgs { .. } => self.held.push(e),
                    Event::ToolEnd { call, span } => {
                        if let Some(start) = self.held.drain(..).next() {
                            out.push(start);
                        }
                        out.push(Event::ToolArgs {
                            index: call.index,
                            delta: call.arguments.as_bytes().into(),
                            span,
                        });
                        out.push(Event::ToolEnd { call, span });
                    }
                    other => out.push(other),
                }
            }
        }
        fn finish(&mut self, out: &mut Vec<Event>) {
            out.append(&mut self.held);
        }
    }

    #[test]
    fn stage_sits_between_decoder_and_encoder() {
        let mut s = Session::new(
            opts(Api::Chat, true),
            Some(Box::new(Hold { held: Vec::new() })),
        );
        let sse = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\": 1}\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
        let mut out = Vec::new();
        s.feed(Bytes::from_static(sse.as_bytes()), &mut out);
        s.finish(&mut out);
        let text = String::from_utf8(out).unwrap();
        // One arguments delta: the stage's, not the upstream's two.
        assert_eq!(
            text.matches("\"arguments\":\"{\\\"a\\\": 1}\"").count(),
            1,
            "{text}"
        );
        assert!(!text.contains("\"arguments\":\": 1}\""), "{text}");
        assert!(text.contains("\"finish_reason\":\"tool_calls\""));
        assert_eq!(s.calls(), 1);
    }
}
