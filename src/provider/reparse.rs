//! Content re-parsing: in-band tool calls inside a provider's text content,
//! merged with the provider's native calls.
//!
//! Call indexes of both sources are renumbered into one sequence. A call of
//! one source is streamed straight through unless calls of the other source
//! are in flight or have been emitted without a match; then it is held until
//! it ends (and until the other source's calls in flight have ended), and
//! compared with the other source's unmatched calls: same name and the same
//! arguments value means the same call, reported twice, and the held copy
//! is dropped with a diagnostic. Otherwise it is released whole.
//!
//! A call that begins in the content waits for the end of its frame before
//! it is streamed: a server that reports a call in both places at the same
//! moment puts both in one frame (content first), and the native copy, which
//! carries the server's id, is the one kept. A content call that began in an
//! earlier frame is already streaming; the native copy is then held and
//! dropped. Frames are whole within one batch of decoder events, so the
//! decision depends on the bytes only, never on how they were read.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::config::{Config, IdGenerator};
use crate::event::{Delta, DiagnosticKind, Event, FinishReason, Span, ToolCall};
use crate::parser::Parser;
use bytes::Bytes;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Src {
    Native = 0,
    Content = 1,
}

impl Src {
    fn other(self) -> Src {
        match self {
            Src::Native => Src::Content,
            Src::Content => Src::Native,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Route {
    /// Streamed under this merged index.
    Stream(usize),
    /// Held until it ends.
    Hold,
    /// A content call waiting for the end of its frame (`Reparser::pending`).
    Pending,
}

/// A content call that began in the current frame.
#[derive(Debug)]
struct Pending {
    /// The parser's index.
    index: usize,
    id: String,
    name: String,
    span: Span,
    /// Argument deltas so far.
    args: Vec<(Delta, Span)>,
    /// The call, when it ended within the frame.
    end: Option<(ToolCall, Span)>,
}

#[derive(Debug)]
struct Emitted {
    src: Src,
    index: usize,
    name: String,
    args: Option<serde_json::Value>,
    matched: bool,
}

#[derive(Debug)]
struct Held {
    src: Src,
    call: ToolCall,
    span: Span,
}

pub(crate) struct Reparser {
    parser: Parser,
    ids: IdGenerator,
    next: usize,
    routes: [HashMap<usize, Route>; 2],
    /// Final ids of streamed calls, by merged index.
    final_ids: HashMap<usize, String>,
    inflight: [usize; 2],
    emitted: Vec<Emitted>,
    held: Vec<Held>,
    ids_used: HashSet<String>,
    tmp: Vec<Event>,
    /// `next` when the current response began.
    next_at_response: usize,
    /// Content calls that began in the current frame, in order.
    pending: Vec<Pending>,
    /// The span of the frame they began in.
    pending_span: Span,
    /// Where the content fed to the parser came from: (the parser's offset
    /// of a feed's first byte, the start of its frame in the stream), so
    /// that a content call's repairs are given in stream positions, as its
    /// spans are. Kept back to where an open call may have begun.
    feeds: VecDeque<(u64, u64)>,
    /// Bytes fed to the parser since it last started over.
    fed: u64,
    /// The parser's offset where its open call's name became known.
    call_from: Option<u64>,
}

impl Reparser {
    pub(crate) fn new(cfg: Config, ids: IdGenerator) -> Self {
        Reparser {
            parser: Parser::new(cfg),
            ids,
            next: 0,
            routes: [HashMap::new(), HashMap::new()],
            final_ids: HashMap::new(),
            inflight: [0, 0],
            emitted: Vec::new(),
            held: Vec::new(),
            ids_used: HashSet::new(),
            tmp: Vec::new(),
            next_at_response: 0,
            pending: Vec::new(),
            pending_span: Span::default(),
            feeds: VecDeque::new(),
            fed: 0,
            call_from: None,
        }
    }

    /// The stream position of the parser's offset `at`: the start of the
    /// frame whose content held that byte (`here` when it is not known).
    fn stream_pos(&self, at: u64, here: u64) -> u64 {
        let k = self.feeds.partition_point(|&(c, _)| c <= at);
        if k == 0 {
            return here;
        }
        self.feeds[k - 1].1
    }

    /// Forgets feeds no repair can point into any more: those before the
    /// open call's block could have begun (or, with none open, before the
    /// bytes the parser may hold undecided).
    fn prune_feeds(&mut self) {
        let held = self.parser.config().limits.max_held_bytes as u64;
        let from = self.call_from.unwrap_or(self.fed).saturating_sub(held);
        while self.feeds.len() > 1 && self.feeds[1].0 <= from {
            self.feeds.pop_front();
        }
    }

    /// Routes the decoder's events (drained from `input`) to `out`.
    pub(crate) fn process(&mut self, input: &mut Vec<Event>, out: &mut Vec<Event>) {
        for ev in input.drain(..) {
            // A frame's events are consecutive and share its span.
            if !self.pending.is_empty() && ev.span() != self.pending_span {
                self.release(out);
            }
            match ev {
                Event::Text { text, span } => {
                    let mut tmp = std::mem::take(&mut self.tmp);
                    self.feeds.push_back((self.fed, span.start));
                    self.fed += text.len() as u64;
                    self.parser.feed_bytes(Bytes::from(text), &mut tmp);
                    self.content(&mut tmp, span, out);
                    self.tmp = tmp;
                }
                Event::Error { .. } => {
                    let span = ev.span();
                    self.flush_parser(span, out);
                    out.push(ev);
                }
                Event::Finish {
                    reason,
                    usage,
                    span,
                } => {
                    self.flush_parser(span, out);
                    // Calls found in the content count as calls made.
                    let reason =
                        if reason == FinishReason::Stop && self.next > self.next_at_response {
                            FinishReason::ToolCalls
                        } else {
                            reason
                        };
                    self.next_at_response = self.next;
                    // A later response's calls are its own: they must not be
                    // matched against this one's unmatched calls.
                    if self.held.is_empty() {
                        self.emitted.clear();
                    }
                    out.push(Event::Finish {
                        reason,
                        usage,
                        span,
                    });
                }
                ev @ (Event::ToolStart { .. } | Event::ToolArgs { .. } | Event::ToolEnd { .. }) => {
                    self.call_event(Src::Native, ev, out);
                }
                Event::Opaque {
                    kind,
                    index,
                    data,
                    span,
                } => {
                    let index = index.and_then(|i| match self.routes[0].get(&i) {
                        Some(Route::Stream(m)) => Some(*m),
                        _ => None,
                    });
                    out.push(Event::Opaque {
                        kind,
                        index,
                        data,
                        span,
                    });
                }
                other => out.push(other),
            }
        }
        // The decoder hands over whole frames: the batch ends with one.
        self.release(out);
    }

    /// End of stream.
    pub(crate) fn finish(&mut self, end: u64, out: &mut Vec<Event>) {
        let span = Span::new(end, end);
        self.flush_parser(span, out);
        self.inflight = [0, 0];
        self.resolve(out);
    }

    fn flush_parser(&mut self, span: Span, out: &mut Vec<Event>) {
        let mut tmp = std::mem::take(&mut self.tmp);
        self.parser.finish(&mut tmp);
        self.content(&mut tmp, span, out);
        self.tmp = tmp;
        // The parser's offsets start over with it.
        self.feeds.clear();
        self.fed = 0;
        self.call_from = None;
        // The response (or the stream) is over: its calls have all been seen.
        self.release(out);
        // The parser starts over: its call indexes restart at 0.
        self.routes[1].clear();
    }

    fn content(&mut self, events: &mut Vec<Event>, span: Span, out: &mut Vec<Event>) {
        for ev in events.drain(..) {
            match ev {
                Event::Text { text, .. } => out.push(Event::Text { text, span }),
                Event::Thinking { text, .. } => out.push(Event::Thinking { text, span }),
                Event::Diagnostic { kind, message, .. } => out.push(Event::Diagnostic {
                    kind,
                    message,
                    span,
                }),
                // Like every other content event, it is placed at its frame.
                Event::Markup { .. } => out.push(Event::Markup { span }),
                Event::ToolStart {
                    index,
                    id,
                    name,
                    span: at,
                } => {
                    self.call_from = Some(at.start);
                    self.call_event(
                        Src::Content,
                        Event::ToolStart {
                            index,
                            id,
                            name,
                            span,
                        },
                        out,
                    )
                }
                Event::ToolArgs { index, delta, .. } => {
                    self.call_event(Src::Content, Event::ToolArgs { index, delta, span }, out)
                }
                Event::ToolEnd { mut call, .. } => {
                    // Repairs in stream positions, like the spans.
                    for r in &mut call.repairs {
                        r.offset = self.stream_pos(r.offset, span.start);
                    }
                    self.call_from = None;
                    self.call_event(Src::Content, Event::ToolEnd { call, span }, out)
                }
                other => out.push(other),
            }
        }
        self.prune_feeds();
    }

    fn unmatched(&self, src: Src) -> bool {
        self.emitted.iter().any(|e| e.src == src && !e.matched)
    }

    fn unique_id(&mut self, id: String, merged: usize) -> String {
        let mut id = id;
        if self.ids_used.contains(&id) {
            id = self.ids.id(merged).to_string();
            let mut n = 1;
            while self.ids_used.contains(&id) {
                id = format!("{}_{n}", self.ids.id(merged));
                n += 1;
            }
        }
        self.ids_used.insert(id.clone());
        id
    }

    fn call_event(&mut self, src: Src, ev: Event, out: &mut Vec<Event>) {
        let s = src as usize;
        match ev {
            Event::ToolStart {
                index,
                id,
                name,
                span,
            } => {
                let route = if self.must_hold(src) {
                    Route::Hold
                } else if src == Src::Content {
                    if self.pending.is_empty() {
                        self.pending_span = span;
                    }
                    self.pending.push(Pending {
                        index,
                        id: id.to_string(),
                        name: name.to_string(),
                        span,
                        args: Vec::new(),
                        end: None,
                    });
                    Route::Pending
                } else {
                    Route::Stream(self.stream_start(
                        src,
                        id.to_string(),
                        name.to_string(),
                        span,
                        out,
                    ))
                };
                self.routes[s].insert(index, route);
            }
            Event::ToolArgs { index, delta, span } => match self.routes[s].get(&index) {
                Some(Route::Stream(m)) => out.push(Event::ToolArgs {
                    index: *m,
                    delta,
                    span,
                }),
                Some(Route::Pending) => {
                    if let Some(p) = self.pending.iter_mut().find(|p| p.index == index) {
                        p.args.push((delta, span));
                    }
                }
                _ => {}
            },
            Event::ToolEnd { call, span }
                if matches!(self.routes[s].get(&call.index), Some(Route::Pending)) =>
            {
                if let Some(p) = self.pending.iter_mut().find(|p| p.index == call.index) {
                    p.end = Some((*call, span));
                }
            }
            Event::ToolEnd { mut call, span } => match self.routes[s].get(&call.index).copied() {
                Some(Route::Stream(m)) => {
                    call.index = m;
                    if let Some(id) = self.final_ids.remove(&m) {
                        call.id = id.into();
                    }
                    self.inflight[s] = self.inflight[s].saturating_sub(1);
                    self.emitted.push(Emitted {
                        src,
                        index: m,
                        name: call.name.to_string(),
                        args: serde_json::from_str(&call.arguments).ok(),
                        matched: false,
                    });
                    out.push(Event::ToolEnd { call, span });
                    self.resolve(out);
                }
                _ => {
                    self.held.push(Held {
                        src,
                        call: *call,
                        span,
                    });
                    self.resolve(out);
                }
            },
            other => out.push(other),
        }
    }

    /// A new call of `src` must be held: calls of the other source are in
    /// flight or were emitted without a match.
    fn must_hold(&self, src: Src) -> bool {
        let other = src.other();
        self.inflight[other as usize] > 0 || self.unmatched(other)
    }

    /// Emits the `ToolStart` of a call streamed straight through; returns
    /// its merged index.
    fn stream_start(
        &mut self,
        src: Src,
        id: String,
        name: String,
        span: Span,
        out: &mut Vec<Event>,
    ) -> usize {
        let m = self.next;
        self.next += 1;
        self.inflight[src as usize] += 1;
        let id = self.unique_id(id, m);
        self.final_ids.insert(m, id.clone());
        out.push(Event::ToolStart {
            index: m,
            id: id.into(),
            name: name.into(),
            span,
        });
        m
    }

    /// The frame the pending content calls began in is over: the native
    /// calls of that frame have been seen. Each pending call is streamed,
    /// held, or (when it already ended) compared like a held call.
    fn release(&mut self, out: &mut Vec<Event>) {
        if self.pending.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        for p in pending {
            if let Some((call, span)) = p.end {
                // Its index is not reused before the parser starts over.
                self.routes[1].insert(p.index, Route::Hold);
                self.held.push(Held {
                    src: Src::Content,
                    call,
                    span,
                });
                self.resolve(out);
                continue;
            }
            let route = if self.must_hold(Src::Content) {
                Route::Hold
            } else {
                let m = self.stream_start(Src::Content, p.id, p.name, p.span, out);
                for (delta, span) in p.args {
                    out.push(Event::ToolArgs {
                        index: m,
                        delta,
                        span,
                    });
                }
                Route::Stream(m)
            };
            self.routes[1].insert(p.index, route);
        }
    }

    /// Releases or drops the held calls that can be decided now.
    fn resolve(&mut self, out: &mut Vec<Event>) {
        let mut i = 0;
        while i < self.held.len() {
            let other = self.held[i].src.other();
            if self.inflight[other as usize] > 0 {
                i += 1;
                continue;
            }
            let h = self.held.remove(i);
            let args: Option<serde_json::Value> = serde_json::from_str(&h.call.arguments).ok();
            let dup = self
                .emitted
                .iter_mut()
                .find(|e| e.src == other && !e.matched && e.name == h.call.name && e.args == args);
            if let Some(e) = dup {
                e.matched = true;
                out.push(Event::Diagnostic {
                    kind: DiagnosticKind::SkippedContent,
                    message: format!(
                        "call `{}` reported both natively and in the content; kept once (call {})",
                        h.call.name, e.index
                    ),
                    span: h.span,
                });
                continue;
            }
            let m = self.next;
            self.next += 1;
            let mut call = h.call;
            call.index = m;
            call.id = self.unique_id(call.id.to_string(), m).into();
            out.push(Event::ToolStart {
                index: m,
                id: call.id.clone(),
                name: call.name.clone(),
                span: h.span,
            });
            out.push(Event::ToolArgs {
                index: m,
                delta: Delta::from(call.arguments.as_str()),
                span: h.span,
            });
            self.emitted.push(Emitted {
                src: h.src,
                index: m,
                name: call.name.to_string(),
                args,
                matched: false,
            });
            out.push(Event::ToolEnd {
                call: Box::new(call),
                span: h.span,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn reparser() -> Reparser {
        Reparser::new(Config::default(), IdGenerator::default())
    }

    fn text(s: &'static str, span: Span) -> Event {
        Event::Text {
            text: Bytes::from_static(s.as_bytes()).into(),
            span,
        }
    }

    /// A whole native call, as one frame's events.
    fn native(index: usize, id: &str, name: &str, args: &str, span: Span) -> Vec<Event> {
        vec![
            Event::ToolStart {
                index,
                id: id.into(),
                name: name.into(),
                span,
            },
            Event::ToolArgs {
                index,
                delta: Delta::from(args),
                span,
            },
            Event::ToolEnd {
                call: Box::new(ToolCall {
                    index,
                    id: id.into(),
                    name: name.into(),
                    arguments: args.into(),
                    repairs: Vec::new(),
                    truncated: false,
                }),
                span,
            },
        ]
    }

    fn finish(span: Span) -> Event {
        Event::Finish {
            reason: FinishReason::Stop,
            usage: None,
            span,
        }
    }

    /// Feeds each frame (a list of events) as one batch, then ends the stream.
    fn run(frames: Vec<Vec<Event>>) -> Vec<Event> {
        let mut r = reparser();
        let mut out = Vec::new();
        let mut end = 0;
        for mut f in frames {
            end = f.iter().map(|e| e.span().end).max().unwrap_or(end);
            r.process(&mut f, &mut out);
        }
        r.finish(end, &mut out);
        out
    }

    use crate::event::ended_calls as calls;

    fn skipped(events: &[Event]) -> Vec<Span> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Diagnostic {
                    kind: DiagnosticKind::SkippedContent,
                    span,
                    ..
                } => Some(*span),
                _ => None,
            })
            .collect()
    }

    const CALL: &str = r#"<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>"#;

    #[test]
    fn same_frame_duplicate_keeps_the_native_call() {
        let a = Span::new(0, 100);
        let mut frame = vec![text(CALL, a)];
        frame.extend(native(0, "call_srv", "f", r#"{"a":1}"#, a));
        let out = run(vec![frame, vec![finish(Span::new(100, 110))]]);
        let c = calls(&out);
        assert_eq!(c.len(), 1, "{out:?}");
        assert_eq!((c[0].index, c[0].id.as_str()), (0, "call_srv"));
        assert_eq!(c[0].arguments, r#"{"a":1}"#);
        // The content copy is accounted for at its frame.
        assert_eq!(skipped(&out), vec![a]);
        assert!(matches!(
            out.last(),
            Some(Event::Finish {
                reason: FinishReason::ToolCalls,
                ..
            })
        ));
    }

    #[test]
    fn same_frame_duplicate_with_the_content_call_still_open() {
        // The content call starts in the frame the native call arrives in,
        // and ends in the next one.
        let a = Span::new(0, 100);
        let b = Span::new(100, 200);
        let mut first = vec![text(r#"<tool_call>{"name": "f", "arguments": {"a""#, a)];
        first.extend(native(0, "call_srv", "f", r#"{"a": 1}"#, a));
        let second = vec![text(r#": 1}}</tool_call>"#, b)];
        let out = run(vec![first, second]);
        let c = calls(&out);
        assert_eq!(c.len(), 1, "{out:?}");
        assert_eq!(c[0].id, "call_srv");
        assert_eq!(skipped(&out), vec![b]);
    }

    #[test]
    fn a_content_call_from_an_earlier_frame_keeps_streaming() {
        // It was streamed before the native copy appeared: the native copy is
        // the one dropped.
        let a = Span::new(0, 100);
        let b = Span::new(100, 200);
        let first = vec![text(r#"<tool_call>{"name": "f", "arguments": {"#, a)];
        let mut second = native(0, "call_srv", "f", r#"{"a": 1}"#, b);
        second.insert(0, text(r#""a": 1}}</tool_call>"#, b));
        let out = run(vec![first, second]);
        assert!(matches!(
            out.first(),
            Some(Event::ToolStart { index: 0, span, .. }) if *span == a
        ));
        let c = calls(&out);
        assert_eq!(c.len(), 1, "{out:?}");
        assert_ne!(c[0].id, "call_srv");
        assert_eq!(skipped(&out), vec![b]);
    }

    #[test]
    fn a_content_call_alone_streams_at_the_end_of_its_frame() {
        let a = Span::new(0, 100);
        let b = Span::new(100, 200);
        let mut r = reparser();
        let mut out = Vec::new();
        // (A value begun: the streaming fast path holds a key until its
        // value begins, the repairer hands `{"a": ` out at once.)
        r.process(
            &mut vec![text(r#"<tool_call>{"name": "f", "arguments": {"a": "x"#, a)],
            &mut out,
        );
        // Started and streaming before the call ends.
        assert!(matches!(
            out.first(),
            Some(Event::ToolStart { index: 0, .. })
        ));
        assert!(out
            .iter()
            .any(|e| matches!(e, Event::ToolArgs { index: 0, .. })));
        assert!(calls(&out).is_empty());
        r.process(&mut vec![text(r#"y", "b": 1}}</tool_call>"#, b)], &mut out);
        r.finish(200, &mut out);
        let c = calls(&out);
        assert_eq!(c.len(), 1);
        assert_eq!(
            c[0].arguments_value().unwrap(),
            serde_json::json!({"a": "xy", "b": 1})
        );
        assert!(skipped(&out).is_empty());
    }

    #[test]
    fn different_calls_in_one_frame_are_both_kept_in_order() {
        let a = Span::new(0, 100);
        let mut frame = vec![text(CALL, a)];
        frame.extend(native(0, "call_srv", "g", "{}", a));
        let out = run(vec![frame]);
        let c: Vec<(usize, &str)> = calls(&out)
            .iter()
            .map(|c| (c.index, c.name.as_str()))
            .collect();
        // The native call streamed; the content call was held behind it.
        assert_eq!(c, vec![(0, "g"), (1, "f")]);
        assert!(skipped(&out).is_empty());
    }

    #[test]
    fn a_finish_in_the_frame_releases_the_pending_call() {
        // Ollama puts the last content and `done: true` in one line; the
        // parser's indexes restart after it and must not meet a stale route.
        let a = Span::new(0, 100);
        let b = Span::new(100, 200);
        let out = run(vec![
            vec![text(CALL, a), finish(a)],
            vec![text(CALL, b), finish(b)],
        ]);
        let c: Vec<usize> = calls(&out).iter().map(|c| c.index).collect();
        assert_eq!(c, vec![0, 1]);
        let reasons: Vec<&FinishReason> = out
            .iter()
            .filter_map(|e| match e {
                Event::Finish { reason, .. } => Some(reason),
                _ => None,
            })
            .collect();
        assert_eq!(reasons, vec![&FinishReason::ToolCalls; 2]);
    }

    #[test]
    fn a_later_response_does_not_match_an_earlier_responses_call() {
        // Response 1 calls f natively; response 2 writes the same call in its
        // content only. Both are calls the model made.
        let a = Span::new(0, 100);
        let b = Span::new(100, 200);
        let mut first = native(0, "call_srv", "f", r#"{"a": 1}"#, a);
        first.push(finish(a));
        let out = run(vec![first, vec![text(CALL, b), finish(b)]]);
        let c: Vec<(usize, &str)> = calls(&out)
            .iter()
            .map(|c| (c.index, c.name.as_str()))
            .collect();
        assert_eq!(c, vec![(0, "f"), (1, "f")], "{out:?}");
        assert!(skipped(&out).is_empty());
    }

    #[test]
    fn content_markup_is_placed_at_its_frame() {
        let a = Span::new(500, 600);
        let out = run(vec![vec![text("Hi<|END_OF_TURN_TOKEN|>", a)]]);
        let markup: Vec<Span> = out
            .iter()
            .filter_map(|e| match e {
                Event::Markup { span } => Some(*span),
                _ => None,
            })
            .collect();
        assert_eq!(markup, vec![a], "{out:?}");
    }
}
