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

use std::collections::{HashMap, HashSet};

use crate::config::{Config, IdGenerator};
use crate::event::{DiagnosticKind, Event, FinishReason, Span, ToolCall};
use crate::parser::Parser;

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
        }
    }

    /// Routes the decoder's events (drained from `input`) to `out`.
    pub(crate) fn process(&mut self, input: &mut Vec<Event>, out: &mut Vec<Event>) {
        for ev in input.drain(..) {
            match ev {
                Event::Text { text, span } => {
                    let mut tmp = std::mem::take(&mut self.tmp);
                    self.parser.feed_bytes(text, &mut tmp);
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
                Event::ToolStart {
                    index, id, name, ..
                } => self.call_event(
                    Src::Content,
                    Event::ToolStart {
                        index,
                        id,
                        name,
                        span,
                    },
                    out,
                ),
                Event::ToolArgs { index, delta, .. } => {
                    self.call_event(Src::Content, Event::ToolArgs { index, delta, span }, out)
                }
                Event::ToolEnd { call, .. } => {
                    self.call_event(Src::Content, Event::ToolEnd { call, span }, out)
                }
                other => out.push(other),
            }
        }
    }

    fn unmatched(&self, src: Src) -> bool {
        self.emitted.iter().any(|e| e.src == src && !e.matched)
    }

    fn unique_id(&mut self, id: String, merged: usize) -> String {
        let mut id = id;
        if self.ids_used.contains(&id) {
            id = self.ids.id(merged);
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
                let other = src.other();
                let route = if self.inflight[other as usize] > 0 || self.unmatched(other) {
                    Route::Hold
                } else {
                    let m = self.next;
                    self.next += 1;
                    self.inflight[s] += 1;
                    let id = self.unique_id(id, m);
                    self.final_ids.insert(m, id.clone());
                    out.push(Event::ToolStart {
                        index: m,
                        id,
                        name,
                        span,
                    });
                    Route::Stream(m)
                };
                self.routes[s].insert(index, route);
            }
            Event::ToolArgs { index, delta, span } => {
                if let Some(Route::Stream(m)) = self.routes[s].get(&index) {
                    out.push(Event::ToolArgs {
                        index: *m,
                        delta,
                        span,
                    });
                }
            }
            Event::ToolEnd { mut call, span } => match self.routes[s].get(&call.index).copied() {
                Some(Route::Stream(m)) => {
                    call.index = m;
                    if let Some(id) = self.final_ids.remove(&m) {
                        call.id = id;
                    }
                    self.inflight[s] = self.inflight[s].saturating_sub(1);
                    self.emitted.push(Emitted {
                        src,
                        index: m,
                        name: call.name.clone(),
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
            call.id = self.unique_id(call.id, m);
            out.push(Event::ToolStart {
                index: m,
                id: call.id.clone(),
                name: call.name.clone(),
                span: h.span,
            });
            out.push(Event::ToolArgs {
                index: m,
                delta: bytes::Bytes::from(call.arguments.clone()),
                span: h.span,
            });
            self.emitted.push(Emitted {
                src: h.src,
                index: m,
                name: call.name.clone(),
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
