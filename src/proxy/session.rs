//! One request's pipeline, from the upstream's bytes to the client's:
//!
//! ```text
//! upstream SSE ─▶ StreamDecoder (OpenAI chunks; content re-parsed for in-band calls,
//!                 merged with native tool_calls and deduplicated)
//!              ─▶ tool names mapped back (shortened names → the client's)
//!              ─▶ [CallStage: the normalizer (by default), checking and repairing calls]
//!              ─▶ gate (validation, tool_choice, loop stop: release, withhold, or retry)
//!              ─▶ Encoder (the client's API) or Reply (non-streaming)
//! ```
//!
//! Text is passed on as soon as the parser releases it. A [`CallStage`]
//! sees every event between the decoder and the encoder and may rewrite,
//! hold or drop them; without one, events pass unchanged. A stream the
//! upstream cuts ends with the client's own error event after what was
//! already sent, its open call flagged truncated (never presented as
//! complete).
//!
//! # The gate: when calls reach the client
//! Text and thinking of the first upstream reply stream as they arrive
//! (only the parser's hold-back delays them). Each call is held from its
//! `ToolStart` until its `ToolEnd` has been normalized, then judged:
//! * **valid** (no problem left after repair, not a loop, the tool
//!   `tool_choice` names if it names one): sent at once, whether or not a
//!   retry is left;
//! * **rejected, a validation retry left** ([`Checks::retries`]): set aside
//!   (never sent); the reply goes on streaming, and when it ends the
//!   upstream is asked again ([`Session::finish`] returns [`Next::Retry`]);
//! * **rejected, no retry left**: replaced by a text block naming it and its
//!   problems, or forwarded with a note, or an error ([`OnInvalid`]); a loop
//!   by the loop detector's message.
//!
//! **What the client sees when a retry follows** (the rule): a retry only
//! adds to what was sent, never takes anything back. The client's reply is
//! the first reply's text and valid calls, then the calls of the retries'
//! replies, in one stream (one message, one `Finish`). The retry request
//! tells the model which of its calls were accepted and sent (answered
//! with [`retry::ACCEPTED`]) and what was wrong with the others, so it
//! sends only corrections; a retry's call identical (name and arguments)
//! to one already sent is dropped. Calls of retries are numbered after
//! the ones sent (indices, and ids made unique), so every API sees one
//! consistent sequence of calls. A retry reply's text and thinking are
//! held until it ends and sent only if it made no call: the model mostly
//! repeats what it said before (which the client already has); that text
//! is in the retry request and in the logs, never silently lost when it is
//! the reply's only content. A rejected call the retries never replaced
//! (the last reply made no call) is settled like a call still invalid
//! after the retries ([`OnInvalid`]), so the client is always told.
//! `tool_choice` `required`/`any` with no call sent by the end of a reply
//! is retried the same way (nothing to take back: only text was sent).
//! A reply the upstream cut, or stopped by the token limit, is never
//! retried: its calls go out flagged truncated.
//!
//! Without anything that could replace a call (no normalizer, or
//! `on_invalid = forward` with no retries; no loop stop; `tool_choice`
//! `auto`), calls are not held at all: a call's start goes out when its
//! name is known and its arguments stream as they come.
//!
//! Latency: a call reaches the client when its own `ToolEnd` is normalized
//! (the normalizer needs the whole arguments to validate them), never later
//! because of a retry; only a rejected call waits, for its correction.
//!
//! # Usage
//! The `Finish` the client gets carries the usage of every upstream reply
//! of the request, summed. Where the upstream reported none, it is
//! estimated ([`estimate_request_tokens`], and the toolkit's
//! [`estimate_tokens`](crate::toolkit::estimate_tokens) over the generated
//! text) and [`Session::usage_estimated`] says so.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value};

use super::config::OnInvalid;
use super::error::Api;
use super::retry::{self, Attempt, AttemptCall, Choice, RetryBuilder};
use super::translate::reply::Reply;
use super::translate::ToolTable;
use crate::config::{Config, Tools};
use crate::encode::{EncodeOptions, Encoder};
use crate::event::{ErrorKind, Event, FinishReason, Span, Usage};
use crate::normalize::Report;
use crate::provider::{DecodeOptions, Provider, StreamDecoder};
use crate::toolkit::planning::loops::{self, CallRecord, LoopOptions, Verdict};

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
    /// Appends the verdicts on the calls whose `ToolEnd` it passed on since
    /// it was last asked, by call index. A call without one passes as valid
    /// (the default: a stage that does not check calls).
    fn take_reports(&mut self, out: &mut Vec<(usize, Box<Report>)>) {
        let _ = out;
    }
    /// A new upstream reply begins (a retry): forget calls still open.
    fn restart(&mut self) {}
}

/// Makes the [`CallStage`] of a request from the tools it offered (`None`:
/// no stage for this request).
pub type StageFactory = Arc<dyn Fn(&ToolTable) -> Option<Box<dyn CallStage>> + Send + Sync>;

/// What a session checks the reply for, and how it retries.
#[derive(Clone)]
pub struct Checks {
    /// Validation retries: upstream requests made again with feedback.
    pub retries: u32,
    /// What a call still invalid after the retries becomes.
    pub on_invalid: OnInvalid,
    /// What the request's `tool_choice` demands.
    pub choice: Choice,
    /// Loop stop (`None`: off).
    pub loops: Option<LoopOptions>,
    /// The tool-call rounds since the last user turn, from the request
    /// (upstream tool names).
    pub history: Vec<Vec<CallRecord>>,
    /// The upstream request body of the first attempt.
    pub request: Arc<Map<String, Value>>,
    /// Builds a retry request from the first attempt's body and the
    /// replies asked again so far ([`retry::native`] for native mode).
    pub retry: RetryBuilder,
}

impl Default for Checks {
    fn default() -> Self {
        Checks {
            retries: 0,
            on_invalid: OnInvalid::Text,
            choice: Choice::Auto,
            loops: None,
            history: Vec::new(),
            request: Arc::new(Map::new()),
            retry: retry::native(),
        }
    }
}

impl std::fmt::Debug for Checks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checks")
            .field("retries", &self.retries)
            .field("on_invalid", &self.on_invalid)
            .field("choice", &self.choice)
            .field("loops", &self.loops)
            .finish_non_exhaustive()
    }
}

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
    /// Validation, `tool_choice`, loop stop and retries.
    pub checks: Checks,
}

/// What to do once an upstream reply has ended.
#[derive(Debug)]
pub enum Next {
    /// The client's reply is complete.
    Done,
    /// Ask the upstream again with this body and feed its reply to the
    /// same session; call [`Session::give_up`] if that request fails.
    Retry(Map<String, Value>),
}

/// One request's decoder → stage → gate → encoder pipeline.
pub struct Session {
    decode: DecodeOptions,
    decoder: StreamDecoder,
    tools: Arc<ToolTable>,
    stage: Option<Box<dyn CallStage>>,
    checks: Checks,
    encoder: Option<Encoder>,
    reply: Reply,
    events: Vec<Event>,
    staged: Vec<Event>,
    reports: HashMap<usize, Box<Report>>,
    report_buf: Vec<(usize, Box<Report>)>,
    /// Upstream replies so far (1 for the first).
    attempt: u32,
    /// Per-call holds: upstream index → its events so far (until `ToolEnd`).
    open: Vec<(usize, Vec<Event>)>,
    /// This reply's rejected calls, set aside for a retry.
    aside: Vec<(Rejection, Vec<Event>)>,
    /// The previous reply's rejected calls (settled if never replaced).
    pending: Vec<(Rejection, Vec<Event>)>,
    /// A retry's held text and thinking.
    quiet: Vec<Event>,
    /// The previous reply's held text (released if its retry fails).
    quiet_prev: Vec<Event>,
    /// Calls this reply made (sent, set aside or settled).
    reply_calls: usize,
    /// Calls this reply sent to the client.
    reply_sent: usize,
    /// This reply carried an error (a cut call, a provider error).
    reply_failed: bool,
    /// The reply's text (for the retry request).
    reply_text: String,
    /// This reply's calls as the retry request shows them.
    reply_attempt: Vec<AttemptCall>,
    /// The replies asked again so far (the retry request is built on all).
    attempts: Vec<Attempt>,
    /// Calls sent to the client: (client name, arguments), for dropping a
    /// retry's repeat of one.
    sent: Vec<(String, Value)>,
    /// Call ids sent to the client.
    sent_ids: Vec<String>,
    /// Upstream call index → client call index, this reply.
    index_map: HashMap<usize, usize>,
    /// The next client call index.
    next_index: usize,
    /// The reply's `Finish`.
    finish_ev: Option<(FinishReason, Span)>,
    usage: UsageSum,
    /// The current upstream request (for the input estimate).
    request: Arc<Map<String, Value>>,
    calls: usize,
    finished: bool,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("decoder", &self.decoder)
            .field("stage", &self.stage.is_some())
            .field("attempt", &self.attempt)
            .field("calls", &self.calls)
            .finish_non_exhaustive()
    }
}

/// Usage over the replies of a request.
#[derive(Debug, Default)]
struct UsageSum {
    input: u64,
    output: u64,
    reasoning: Option<u64>,
    estimated: bool,
    /// This reply's usage, as reported.
    reply: Option<Usage>,
    /// Generated bytes and line breaks of this reply (the output estimate).
    out_bytes: usize,
    out_lines: usize,
}

impl UsageSum {
    fn count(&mut self, bytes: &[u8]) {
        self.out_bytes += bytes.len();
        self.out_lines += memchr::memchr_iter(b'\n', bytes).count();
    }

    /// Adds the reply just ended (its reported usage, else an estimate).
    fn close_reply(&mut self, request: &Map<String, Value>) {
        let u = self.reply.take().unwrap_or_default();
        match u.input_tokens {
            Some(i) => self.input += i,
            None => {
                self.input += estimate_request_tokens(request);
                self.estimated = true;
            }
        }
        match u.output_tokens {
            Some(o) => self.output += o,
            None => {
                // The toolkit's estimate_tokens, over the reply's bytes.
                self.output += (self.out_bytes.div_ceil(4) + self.out_lines) as u64;
                self.estimated = true;
            }
        }
        if let Some(r) = u.reasoning_tokens {
            *self.reasoning.get_or_insert(0) += r;
        }
        self.out_bytes = 0;
        self.out_lines = 0;
    }

    fn usage(&self) -> Usage {
        Usage {
            input_tokens: Some(self.input),
            output_tokens: Some(self.output),
            reasoning_tokens: self.reasoning,
        }
    }
}

/// The token estimate of an upstream request: the toolkit's
/// [`estimate_tokens`](crate::toolkit::estimate_tokens) (one token per 4
/// bytes, plus one per line break) over its messages and tools as JSON.
///
/// ```
/// use serde_json::json;
/// let body = json!({"messages": [{"role": "user", "content": "x".repeat(400)}]});
/// let n = toolstream::proxy::session::estimate_request_tokens(body.as_object().unwrap());
/// assert!((100..120).contains(&n));
/// ```
pub fn estimate_request_tokens(body: &Map<String, Value>) -> u64 {
    let mut n = 0usize;
    for k in ["messages", "tools"] {
        if let Some(v) = body.get(k) {
            n += crate::toolkit::estimate_tokens(&v.to_string());
        }
    }
    n as u64
}

fn call_index(e: &Event) -> Option<usize> {
    match e {
        Event::ToolStart { index, .. } | Event::ToolArgs { index, .. } => Some(*index),
        Event::ToolEnd { call, .. } => Some(call.index),
        Event::Opaque { index, .. } => *index,
        _ => None,
    }
}

fn text_event(text: String) -> Event {
    Event::Text {
        text: Bytes::from(text).into(),
        span: Span::default(),
    }
}

/// Why a call is not passed on as it is.
enum Rejection {
    Invalid(String),
    Loop(String),
}

impl Rejection {
    fn message(&self) -> &str {
        match self {
            Rejection::Invalid(m) | Rejection::Loop(m) => m,
        }
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
        let request = opts.checks.request.clone();
        Session {
            decoder: StreamDecoder::new(dec.clone()),
            decode: dec,
            tools: opts.tools,
            stage,
            checks: opts.checks,
            encoder,
            reply: Reply::default(),
            events: Vec::new(),
            staged: Vec::new(),
            reports: HashMap::new(),
            report_buf: Vec::new(),
            attempt: 1,
            open: Vec::new(),
            aside: Vec::new(),
            pending: Vec::new(),
            quiet: Vec::new(),
            quiet_prev: Vec::new(),
            reply_calls: 0,
            reply_sent: 0,
            reply_failed: false,
            reply_text: String::new(),
            reply_attempt: Vec::new(),
            attempts: Vec::new(),
            sent: Vec::new(),
            sent_ids: Vec::new(),
            index_map: HashMap::new(),
            next_index: 0,
            finish_ev: None,
            usage: UsageSum::default(),
            request,
            calls: 0,
            finished: false,
        }
    }

    fn may_retry(&self) -> bool {
        self.attempt <= self.checks.retries && !self.tools.specs.is_empty()
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

    /// The upstream reply ended normally. Returns [`Next::Retry`] when the
    /// reply is to be asked again (then feed the new reply's bytes); else
    /// the client's reply is complete.
    pub fn finish(&mut self, out: &mut Vec<u8>) -> Next {
        if self.finished {
            return Next::Done;
        }
        self.decoder.finish(&mut self.events);
        self.flush(true, out);
        if let Some(attempt) = self.judge_reply() {
            tracing::info!(
                attempt = self.attempt,
                rejected = attempt
                    .calls
                    .iter()
                    .filter(|c| c.feedback.is_some())
                    .count(),
                sent = attempt
                    .calls
                    .iter()
                    .filter(|c| c.feedback.is_none())
                    .count(),
                note = attempt.note.is_some(),
                "reply rejected: asking the upstream again with feedback"
            );
            self.attempts.push(attempt);
            let body = (self.checks.retry)(&self.checks.request, &self.attempts);
            self.begin_retry(&body);
            return Next::Retry(body);
        }
        self.conclude(true, out);
        Next::Done
    }

    /// The retry request could not be made (`cause`): the previous reply's
    /// rejected calls are settled as if no retry were left, its held text
    /// released.
    pub fn give_up(&mut self, cause: &str, out: &mut Vec<u8>) {
        if self.finished {
            return;
        }
        tracing::warn!(cause = %cause, "retry request failed: settling the previous reply");
        for e in std::mem::take(&mut self.quiet_prev) {
            self.emit(&e, out);
        }
        self.conclude(true, out);
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
        self.conclude(false, out);
    }

    /// The collected reply (non-streaming sessions; complete once
    /// [`Session::finish`] returned [`Next::Done`], or after
    /// [`Session::cut`] / [`Session::give_up`]).
    pub fn reply(&self) -> &Reply {
        &self.reply
    }

    /// Calls passed to the client so far.
    pub fn calls(&self) -> usize {
        self.calls
    }

    /// Upstream replies read so far (1 + retries made).
    pub fn attempts(&self) -> u32 {
        self.attempt
    }

    /// The usage reported to the client was (at least partly) estimated:
    /// the upstream reported none for some reply.
    pub fn usage_estimated(&self) -> bool {
        self.usage.estimated
    }

    /// Passes an event on to the client.
    fn emit(&mut self, e: &Event, out: &mut Vec<u8>) {
        if let Event::ToolEnd { .. } = e {
            self.calls += 1;
        }
        match &mut self.encoder {
            Some(enc) => enc.encode(e, out),
            None => self.reply.push(e),
        }
    }

    fn flush(&mut self, end: bool, out: &mut Vec<u8>) {
        for e in &mut self.events {
            match e {
                Event::ToolStart { name, .. } => {
                    let n = self.tools.client_name(name);
                    if n != name {
                        *name = n.to_string().into();
                    }
                }
                Event::ToolEnd { call, .. } => {
                    let n = self.tools.client_name(&call.name);
                    if n != call.name {
                        call.name = n.to_string().into();
                    }
                }
                _ => {}
            }
        }
        let mut events = match &mut self.stage {
            Some(stage) => {
                stage.process(&mut self.events, &mut self.staged);
                if end {
                    stage.finish(&mut self.staged);
                }
                stage.take_reports(&mut self.report_buf);
                self.reports.extend(self.report_buf.drain(..));
                std::mem::take(&mut self.staged)
            }
            None => std::mem::take(&mut self.events),
        };
        for e in events.drain(..) {
            self.route(e, out);
        }
        // Keep the buffers' capacity.
        if self.stage.is_some() {
            self.staged = events;
        } else {
            self.events = events;
        }
    }

    /// One event through the gate.
    fn route(&mut self, e: Event, out: &mut Vec<u8>) {
        match &e {
            Event::Text { text, .. } => {
                self.usage.count(text);
                if self.may_retry() && self.reply_text.len() < 64 << 10 {
                    self.reply_text.push_str(&String::from_utf8_lossy(text));
                }
            }
            Event::Thinking { text, .. } => self.usage.count(text),
            Event::ToolArgs { delta, .. } => self.usage.count(delta),
            Event::Error {
                kind: ErrorKind::Provider | ErrorKind::Truncated,
                ..
            } => self.reply_failed = true,
            Event::Finish {
                reason,
                usage,
                span,
            } => {
                if usage.is_some() {
                    self.usage.reply = usage.clone();
                }
                self.finish_ev = Some((reason.clone(), *span));
                return;
            }
            _ => {}
        }
        if call_index(&e).is_some() && self.streams_calls() {
            // Nothing to judge before the call ends: it streams as it comes.
            match e {
                Event::ToolEnd { .. } => {
                    self.reply_calls += 1;
                    let rejection = match &e {
                        Event::ToolEnd { call, .. } => self.reject(call),
                        _ => None,
                    };
                    match rejection {
                        Some(r) => self.settle(r, vec![e], out),
                        None => self.release_call(vec![e], out),
                    }
                }
                e => self.release_call(vec![e], out),
            }
        } else if let Some(i) = call_index(&e) {
            let pos = self.open.iter().position(|(j, _)| *j == i);
            match e {
                Event::ToolEnd { .. } => {
                    self.reply_calls += 1;
                    let mut evs = pos.map(|p| self.open.remove(p).1).unwrap_or_default();
                    evs.push(e);
                    self.judge_call(evs, out);
                }
                Event::ToolStart { .. } => self.open.push((i, vec![e])),
                _ => match pos {
                    Some(p) => self.open[p].1.push(e),
                    None => self.release_call(vec![e], out),
                },
            }
        } else if self.attempt > 1
            && matches!(
                e,
                Event::Text { .. } | Event::Thinking { .. } | Event::Opaque { index: None, .. }
            )
        {
            self.quiet.push(e);
        } else {
            self.emit(&e, out);
        }
    }

    /// Calls stream from their start (no hold until `ToolEnd`) when no
    /// verdict can replace them: no normalizer (or one whose invalid calls
    /// are forwarded with a note and never retried), no loop stop, and no
    /// `tool_choice` to enforce.
    fn streams_calls(&self) -> bool {
        self.checks.loops.is_none()
            && self.checks.choice == Choice::Auto
            && (self.stage.is_none()
                || (self.checks.retries == 0 && self.checks.on_invalid == OnInvalid::Forward))
    }

    /// The verdict on one finished call (its `ToolEnd` is in `call`).
    fn reject(&self, call: &crate::event::ToolCall) -> Option<Rejection> {
        if call.truncated {
            return None;
        }
        if let Some(r) = self.reports.get(&call.index) {
            if let Some(f) = r.feedback(&call.name) {
                return Some(Rejection::Invalid(f));
            }
        }
        // A named tool_choice: another tool's call is rejected while a
        // retry can ask for the named one.
        if let Choice::Named(n) = &self.checks.choice {
            if *n != call.name && self.may_retry() {
                return Some(Rejection::Invalid(format!(
                    "Only `{n}` may be called now (tool_choice); this call of `{}` was not run.",
                    call.name
                )));
            }
        }
        let opts = self.checks.loops.as_ref()?;
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let record = CallRecord::new(self.tools.upstream_name_of(&call.name), &args, false);
        let past = self.checks.history.iter().flatten();
        let same: Vec<&CallRecord> = past
            .filter(|c| c.name == record.name && c.args == record.args)
            .collect();
        let failures = same.iter().filter(|c| c.failed).count();
        let verdict = if failures >= opts.max_failures.max(1) {
            Verdict::FailingRetry {
                name: call.name.to_string(),
                failures,
            }
        } else if same.len() + 1 >= opts.max_repeats.max(2) {
            Verdict::Repeated {
                name: call.name.to_string(),
                count: same.len() + 1,
            }
        } else {
            let mut rounds = self.checks.history.clone();
            rounds.push(vec![record.clone()]);
            match loops::detect(&rounds, opts) {
                v @ Verdict::PingPong { .. } if loops::detect(&self.checks.history, opts) != v => v,
                _ => Verdict::Ok,
            }
        };
        verdict.message().map(Rejection::Loop)
    }

    /// A finished call (its events, `ToolEnd` last): sent, set aside for
    /// a retry, dropped as a retry's repeat of a sent call, or settled.
    fn judge_call(&mut self, evs: Vec<Event>, out: &mut Vec<u8>) {
        let Some(Event::ToolEnd { call, .. }) = evs.last() else {
            return;
        };
        let call = call.clone();
        match self.reject(&call) {
            Some(r) if self.may_retry() => {
                self.reply_attempt.push(AttemptCall {
                    id: call.id.to_string(),
                    name: self.tools.upstream_name_of(&call.name).to_string(),
                    arguments: call.arguments.clone(),
                    feedback: Some(r.message().to_string()),
                });
                self.aside.push((r, evs));
            }
            Some(r) => self.settle(r, evs, out),
            None => {
                let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
                if self.attempt > 1
                    && !call.truncated
                    && self.sent.iter().any(|(n, a)| *n == call.name && *a == args)
                {
                    tracing::info!(tool = %call.name, "a retry repeated a call already sent: dropped");
                    return;
                }
                self.reply_attempt.push(AttemptCall {
                    id: call.id.to_string(),
                    name: self.tools.upstream_name_of(&call.name).to_string(),
                    arguments: call.arguments.clone(),
                    feedback: None,
                });
                self.sent.push((call.name.to_string(), args));
                self.release_call(evs, out);
            }
        }
    }

    /// Sends one call's events: its index is the next client index (the
    /// calls of retries follow the ones sent), its id made unique.
    fn release_call(&mut self, mut evs: Vec<Event>, out: &mut Vec<u8>) {
        let Some(up) = evs.iter().find_map(call_index) else {
            return;
        };
        let index = match self.index_map.get(&up) {
            Some(&i) => i,
            None => {
                let i = self.next_index;
                self.next_index += 1;
                self.index_map.insert(up, i);
                i
            }
        };
        let id = evs.iter().find_map(|e| match e {
            Event::ToolStart { id, .. } => Some(id.clone()),
            Event::ToolEnd { call, .. } => Some(call.id.clone()),
            _ => None,
        });
        let new_id = id.as_ref().map(|id| {
            let mut n = id.clone();
            let mut k = 1;
            while self.sent_ids.iter().any(|s| s == n.as_str()) {
                k += 1;
                n = format!("{id}_{k}").into();
            }
            n
        });
        if let Some(n) = &new_id {
            self.sent_ids.push(n.to_string());
        }
        for e in &mut evs {
            match e {
                Event::ToolStart { index: i, id, .. } => {
                    *i = index;
                    if let Some(n) = &new_id {
                        id.clone_from(n);
                    }
                }
                Event::ToolArgs { index: i, .. } => *i = index,
                Event::ToolEnd { call, .. } => {
                    call.index = index;
                    if let Some(n) = &new_id {
                        call.id.clone_from(n);
                    }
                }
                Event::Opaque { index: i, .. } => *i = Some(index),
                _ => {}
            }
        }
        if matches!(evs.last(), Some(Event::ToolEnd { .. })) {
            self.reply_sent += 1;
        }
        for e in &evs {
            self.emit(e, out);
        }
    }

    /// After an upstream reply ended: the attempt to send back, or `None`
    /// when the client's reply is complete.
    fn judge_reply(&mut self) -> Option<Attempt> {
        if !self.may_retry()
            || self.reply_failed
            || matches!(self.finish_ev, Some((FinishReason::Length, _)))
        {
            return None;
        }
        let called: Vec<&str> = self.sent.iter().map(|(n, _)| n.as_str()).collect();
        let note = self.checks.choice.unmet(&called);
        if self.aside.is_empty() && note.is_none() {
            return None;
        }
        Some(Attempt {
            text: std::mem::take(&mut self.reply_text),
            calls: std::mem::take(&mut self.reply_attempt),
            note,
        })
    }

    /// A new upstream reply is coming: reset the per-reply state.
    fn begin_retry(&mut self, body: &Map<String, Value>) {
        let request = std::mem::replace(&mut self.request, Arc::new(body.clone()));
        self.usage.close_reply(&request);
        self.pending = std::mem::take(&mut self.aside);
        self.quiet_prev = std::mem::take(&mut self.quiet);
        self.attempt += 1;
        self.decoder = StreamDecoder::new(self.decode.clone());
        if let Some(s) = &mut self.stage {
            s.restart();
        }
        self.reports.clear();
        self.open.clear();
        self.index_map.clear();
        self.reply_calls = 0;
        self.reply_sent = 0;
        self.reply_failed = false;
        self.reply_text.clear();
        self.reply_attempt.clear();
        self.finish_ev = None;
    }

    /// A rejected call's events, no retry left: replaced by a note, sent
    /// with a note, or an error ([`OnInvalid`]); a loop by its message.
    fn settle(&mut self, r: Rejection, evs: Vec<Event>, out: &mut Vec<u8>) {
        let Some(Event::ToolEnd { call, .. }) = evs.last() else {
            return;
        };
        let call = call.clone();
        match r {
            Rejection::Loop(msg) => {
                tracing::info!(tool = %call.name, "repeated call stopped");
                let t = retry::withheld_note(&call.name, &call.arguments, &msg);
                self.emit(&text_event(t), out);
            }
            Rejection::Invalid(f) => {
                tracing::info!(tool = %call.name, on_invalid = ?self.checks.on_invalid, "call still invalid after retries");
                let why = format!(
                    "it is still invalid after {} attempt(s).\n{f}",
                    self.attempt
                );
                match self.checks.on_invalid {
                    OnInvalid::Text => {
                        let t = retry::withheld_note(&call.name, &call.arguments, &why);
                        self.emit(&text_event(t), out);
                    }
                    OnInvalid::Forward => {
                        self.release_call(evs, out);
                        self.emit(
                            &text_event(format!(
                                "\n[toolstream] The call to `{}` above {why}\n",
                                call.name
                            )),
                            out,
                        );
                    }
                    OnInvalid::Error => {
                        let e = Event::Error {
                            kind: ErrorKind::Provider,
                            message: format!("the model's call to `{}` {why}", call.name),
                            span: Span::default(),
                        };
                        self.emit(&e, out);
                    }
                }
            }
        }
    }

    /// Ends the client's reply: a retry's held text goes out if it sent no
    /// call, rejected calls no retry replaced are settled, calls still open
    /// go out, then the `Finish` with the summed usage (`normal`:
    /// the upstream reply ended normally, rather than being cut).
    fn conclude(&mut self, normal: bool, out: &mut Vec<u8>) {
        let quiet = std::mem::take(&mut self.quiet);
        if self.reply_sent == 0 {
            for e in quiet {
                self.emit(&e, out);
            }
        } else if !quiet.is_empty() {
            tracing::debug!(
                events = quiet.len(),
                "a retry's text not sent: its reply sent calls (the text is in the retry request)"
            );
        }
        let pending = std::mem::take(&mut self.pending);
        if self.reply_calls == 0 {
            for (r, evs) in pending {
                self.settle(r, evs, out);
            }
        } else if !pending.is_empty() {
            tracing::debug!(
                calls = pending.len(),
                "rejected calls replaced by the retry's calls"
            );
        }
        for (r, evs) in std::mem::take(&mut self.aside) {
            self.settle(r, evs, out);
        }
        for (_, evs) in std::mem::take(&mut self.open) {
            self.release_call(evs, out);
        }
        let request = self.request.clone();
        self.usage.close_reply(&request);
        if self.usage.estimated {
            tracing::debug!("usage estimated: the upstream reported none");
        }
        if let Some((reason, span)) = self.finish_ev.take() {
            let e = Event::Finish {
                reason,
                usage: Some(self.usage.usage()),
                span,
            };
            self.emit(&e, out);
        } else if normal {
            let e = Event::Finish {
                reason: FinishReason::Stop,
                usage: Some(self.usage.usage()),
                span: Span::default(),
            };
            self.emit(&e, out);
        }
        if let Some(enc) = &mut self.encoder {
            enc.finish(out);
        }
        self.finished = true;
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
            checks: Checks::default(),
        }
    }

    const CUT: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi \"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\": \"}}]}}]}\n\n";

    #[test]
    fn output_estimate_is_the_toolkits_over_the_whole_reply() {
        let parts = ["Hello, ", "wor", "ld\nand ", "more\n", "{\"a\": 1}"];
        let mut u = UsageSum::default();
        for p in parts {
            u.count(p.as_bytes());
        }
        u.close_reply(&Map::new());
        let whole: String = parts.concat();
        assert_eq!(u.output, crate::toolkit::estimate_tokens(&whole) as u64);
        assert_eq!(u.input, 0);
        assert!(u.estimated);
    }

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

    fn sse_call(index: usize, id: &str, name: &str, args: &str) -> String {
        let start = serde_json::json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": args}}]}}]});
        format!("data: {start}\n\n")
    }

    #[test]
    fn a_retrys_calls_follow_the_sent_ones_with_unique_indices_and_ids() {
        let mut tools = ToolTable::default();
        for n in ["f", "g"] {
            tools.specs.push(ToolSpec {
                name: n.into(),
                parameters: None,
            });
        }
        let mut o = opts(Api::Chat, true);
        o.tools = Arc::new(tools);
        o.checks.retries = 1;
        o.checks.choice = Choice::Named("g".into());
        let mut s = Session::new(o, None);
        let end = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
        // Reply 1: `g` (sent at once), then `f` (not the named tool: set aside).
        let first = format!(
            "{}{}{end}",
            sse_call(0, "c1", "g", "{}"),
            sse_call(1, "c2", "f", "{}")
        );
        let mut out = Vec::new();
        s.feed(Bytes::from(first), &mut out);
        let Next::Retry(body) = s.finish(&mut out) else {
            panic!("expected a retry")
        };
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m[0]["tool_calls"].as_array().unwrap().len(), 2);
        assert_eq!(m[1]["content"], retry::ACCEPTED);
        assert!(m[2]["content"].as_str().unwrap().contains("Only `g`"));
        // Reply 2 reuses the id `c1` and index 0 for a new call of `g`.
        let second = format!("{}{end}", sse_call(0, "c1", "g", "{\"x\": 1}"));
        s.feed(Bytes::from(second), &mut out);
        assert!(matches!(s.finish(&mut out), Next::Done));
        let text = String::from_utf8(out).unwrap();
        let ev = crate::provider::decode(text.as_bytes(), &DecodeOptions::default());
        let calls: Vec<(usize, String, String)> = ev
            .iter()
            .filter_map(|e| match e {
                Event::ToolEnd { call, .. } => {
                    Some((call.index, call.id.to_string(), call.arguments.clone()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            [
                (0, "c1".to_string(), "{}".to_string()),
                (1, "c1_2".to_string(), "{\"x\": 1}".to_string())
            ],
            "{text}"
        );
        assert!(!text.contains("\"name\":\"f\""), "{text}");
        assert_eq!(text.matches("[DONE]").count(), 1);
    }

    #[test]
    fn without_checks_a_call_streams_from_its_start() {
        let mut s = Session::new(opts(Api::Chat, true), None);
        let mut out = Vec::new();
        s.feed(Bytes::from(sse_call(0, "c1", "f", "{\"a\": ")), &mut out);
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.contains("\"name\":\"f\""), "{text}");
        assert!(text.contains("{\\\"a\\\": "), "{text}");
    }
}
