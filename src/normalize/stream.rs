//! The streaming normalizer: events in, events out, calls normalized while
//! they stream.

use std::sync::Arc;

use crate::event::{CompactString, Delta, Event, Span, ToolCall};

use super::error::Fix;
use super::names::Resolution;
use super::rewrite::{self, Rewriter};
use super::{Catalog, Report};

/// One event of a normalized stream. `report` is set on the `ToolEnd` of
/// every call (repairs and errors: a call that fails validation still ends,
/// with its errors here) and on nothing else.
#[derive(Clone, Debug, PartialEq)]
pub struct Normalized {
    /// The event, its call rewritten: `ToolStart` with the resolved name,
    /// `ToolArgs` deltas of the normalized arguments, `ToolEnd` with the
    /// normalized call.
    pub event: Event,
    /// For a `ToolEnd`: what the normalizer did and what is still wrong.
    pub report: Option<Box<Report>>,
}

impl Normalized {
    fn plain(event: Event) -> Self {
        Normalized {
            event,
            report: None,
        }
    }
}

/// The calls open in a stream, by index: a few at a time (usually one), so
/// a list searched in place rather than a hashed map, its first entry held
/// inline (a stream with one call open at a time allocates no list).
#[derive(Debug, Default)]
struct Calls {
    first: Option<(usize, CallState)>,
    more: Vec<(usize, CallState)>,
}

impl Calls {
    fn insert(&mut self, index: usize, state: CallState) {
        if let Some(slot) = self.slot(&index) {
            *slot = state;
        } else if self.first.is_none() {
            self.first = Some((index, state));
        } else {
            self.more.push((index, state));
        }
    }

    fn slot(&mut self, index: &usize) -> Option<&mut CallState> {
        match &mut self.first {
            Some((i, s)) if i == index => Some(s),
            _ => self
                .more
                .iter_mut()
                .find(|(i, _)| i == index)
                .map(|(_, s)| s),
        }
    }

    fn get_mut(&mut self, index: &usize) -> Option<&mut CallState> {
        self.slot(index)
    }

    fn remove(&mut self, index: &usize) -> Option<CallState> {
        if matches!(&self.first, Some((i, _)) if i == index) {
            return self.first.take().map(|(_, s)| s);
        }
        let at = self.more.iter().position(|(i, _)| i == index)?;
        Some(self.more.swap_remove(at).1)
    }

    /// Every open call, in no particular order; leaves none.
    fn drain(&mut self) -> Vec<(usize, CallState)> {
        let mut all = std::mem::take(&mut self.more);
        all.extend(self.first.take());
        all
    }
}

#[derive(Debug)]
enum CallState {
    /// The name resolved: arguments are rewritten as they stream.
    Live {
        rw: Box<Rewriter>,
        fix: Option<Fix>,
        /// The name as written, when it is not the tool's (`fix` is set).
        written: Option<String>,
    },
    /// A placeholder name: the tool is chosen from the arguments, so the
    /// call is held whole until it ends.
    Held {
        id: CompactString,
        written: CompactString,
        start: Span,
        args: Vec<u8>,
    },
    /// No tool: passed through as written, reported at its end (`placeholder`:
    /// a placeholder name whose arguments grew too long to hold).
    Unknown {
        written: CompactString,
        placeholder: bool,
    },
}

/// The streaming normalizer: feed it the events of a parser or stream
/// decoder; it passes every event through, rewriting tool calls on the way.
///
/// The contracts of the event stream hold on its output: a call's
/// `ToolArgs` deltas concatenate to exactly the arguments of its `ToolEnd`;
/// the output does not depend on how the input was chunked; the work is
/// linear. Only the value being coerced is held back (a long string for a
/// string parameter streams through); a call with a placeholder name
/// (`tool_name`) is held whole, as its tool can only be told from its
/// arguments; arguments that are not an object or start with a wrapper key
/// are held until they end.
///
/// ```
/// use std::sync::Arc;
/// use toolstream::normalize::{Catalog, Normalizer};
/// use toolstream::{parse_chunks, Config, Event, Tools};
/// let tools = Tools::from_json(r#"[{"name": "get_weather", "parameters": {"type": "object",
///     "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}]"#).unwrap();
/// let mut norm = Normalizer::new(Arc::new(Catalog::new(&tools)));
/// let text = r#"<tool_call>{"name": "GetWeather", "arguments": {"city": "Paris", "days": "3"}}</tool_call>"#;
/// let mut out = Vec::new();
/// for ev in parse_chunks(text.as_bytes().chunks(7), &Config::default()).events {
///     out.extend(norm.push(ev));
/// }
/// out.extend(norm.finish());
/// let end = out.iter().find_map(|n| match &n.event {
///     Event::ToolEnd { call, .. } => Some((call, n.report.as_ref().unwrap())),
///     _ => None,
/// });
/// let (call, report) = end.unwrap();
/// assert_eq!(call.name, "get_weather");
/// assert_eq!(call.arguments, r#"{"city": "Paris", "days": 3}"#);
/// assert!(report.is_ok());
/// ```
#[derive(Debug)]
pub struct Normalizer {
    catalog: Arc<Catalog>,
    calls: Calls,
}

impl Normalizer {
    /// A normalizer checking calls against `catalog`.
    pub fn new(catalog: Arc<Catalog>) -> Self {
        Normalizer {
            catalog,
            calls: Calls::default(),
        }
    }

    /// The catalog in use.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// Takes the next event; returns the events to pass on for it (none,
    /// one, or — when a held call ends — several).
    pub fn push(&mut self, event: Event) -> Vec<Normalized> {
        let mut out = Vec::new();
        self.push_into(event, &mut out);
        out
    }

    /// Like [`Normalizer::push`], appending to `out`.
    #[inline]
    pub fn push_into(&mut self, event: Event, out: &mut Vec<Normalized>) {
        match event {
            Event::ToolStart { .. } | Event::ToolArgs { .. } | Event::ToolEnd { .. } => {
                self.push_call_event(event, out)
            }
            // Text, reasoning, markup: passed on as they are.
            other => out.push(Normalized::plain(other)),
        }
    }

    /// [`Normalizer::push_into`] for the events of a call (out of line: the
    /// other events pass through without its frame).
    #[inline(never)]
    fn push_call_event(&mut self, event: Event, out: &mut Vec<Normalized>) {
        let cat = &*self.catalog;
        match event {
            Event::ToolStart {
                index,
                id,
                name,
                span,
            } => {
                let state = match cat.resolve(&name) {
                    Resolution::Tool(i, fix) => {
                        // The name as written is passed on when it is the
                        // tool's (no copy, nothing for the report to keep).
                        let (written, name) = if fix.is_none() {
                            (None, name)
                        } else {
                            (
                                Some(name.to_string()),
                                CompactString::from(cat.names()[i].as_str()),
                            )
                        };
                        out.push(Normalized::plain(Event::ToolStart {
                            index,
                            id,
                            name,
                            span,
                        }));
                        CallState::Live {
                            rw: rewrite::pooled(i, cat.options().limits.max_repairs),
                            fix,
                            written,
                        }
                    }
                    Resolution::Placeholder => CallState::Held {
                        id,
                        written: name,
                        start: span,
                        args: Vec::new(),
                    },
                    Resolution::Unknown => {
                        out.push(Normalized::plain(Event::ToolStart {
                            index,
                            id,
                            name: name.clone(),
                            span,
                        }));
                        CallState::Unknown {
                            written: name,
                            placeholder: false,
                        }
                    }
                };
                self.calls.insert(index, state);
            }
            Event::ToolArgs { index, delta, span } => match self.calls.get_mut(&index) {
                Some(CallState::Live { rw, .. }) => {
                    let bytes = rw.feed(cat, &delta);
                    if bytes.is_empty() {
                        return;
                    }
                    let delta = if bytes == &delta[..] {
                        delta
                    } else {
                        Delta::copy_from_slice(bytes)
                    };
                    out.push(Normalized::plain(Event::ToolArgs { index, delta, span }));
                }
                Some(CallState::Held { args, .. }) => {
                    args.extend_from_slice(&delta);
                    if args.len() > cat.options().limits.max_held_call_bytes {
                        // Too long to hold: no tool will be chosen (as
                        // `Catalog::rescue` says); passed on as written.
                        if let Some(CallState::Held {
                            id,
                            written,
                            start,
                            args,
                        }) = self.calls.remove(&index)
                        {
                            out.push(Normalized::plain(Event::ToolStart {
                                index,
                                id,
                                name: written.clone(),
                                span: start,
                            }));
                            push_args(out, index, &args, span);
                            self.calls.insert(
                                index,
                                CallState::Unknown {
                                    written,
                                    placeholder: true,
                                },
                            );
                        }
                    }
                }
                Some(CallState::Unknown { .. }) | None => {
                    out.push(Normalized::plain(Event::ToolArgs { index, delta, span }))
                }
            },
            Event::ToolEnd { call, span } => self.end(call, span, out),
            other => out.push(Normalized::plain(other)),
        }
    }

    fn end(&mut self, mut call: Box<ToolCall>, span: Span, out: &mut Vec<Normalized>) {
        let cat = &*self.catalog;
        let index = call.index;
        let report = match self.calls.remove(&index) {
            Some(CallState::Live {
                mut rw,
                fix,
                written,
            }) => {
                if rw.input.is_empty() && !call.arguments.is_empty() {
                    // A call whose arguments came only with its end.
                    let bytes = rw.feed(cat, call.arguments.as_bytes());
                    push_args(out, index, bytes, span);
                }
                let tail = rw.finish(cat);
                push_args(out, index, tail, span);
                // Arguments left as they were need no copy (nor a UTF-8 check).
                rw.output_utf8 = rw.output == call.arguments.as_bytes();
                let errors = cat.check(&rw);
                let name = &cat.names()[rw.tool()];
                if call.name != *name {
                    call.name = CompactString::from(name.as_str());
                }
                if !rw.output_utf8 {
                    // The parser's text becomes the pooled rewriter's next
                    // output buffer.
                    let out = super::utf8(std::mem::take(&mut rw.output));
                    rw.output = std::mem::replace(&mut call.arguments, out).into_bytes();
                }
                let fixes = std::mem::take(&mut rw.fixes);
                let report = Report::build(
                    written,
                    fix,
                    fixes,
                    errors,
                    cat.options().limits.max_repairs,
                );
                rewrite::recycle(rw);
                report
            }
            Some(CallState::Held {
                id,
                written,
                start,
                args,
            }) => {
                let args = if args.is_empty() {
                    call.arguments.clone().into_bytes()
                } else {
                    args
                };
                let (name, text, report) = match cat.rescue(&args) {
                    Some((i, text, fixes)) => {
                        let fix = cat.placeholder_fix(&written, i);
                        let report = Report::build(
                            Some(written.to_string()),
                            Some(fix),
                            fixes,
                            Vec::new(),
                            cat.options().limits.max_repairs,
                        );
                        (CompactString::from(cat.names()[i].as_str()), text, report)
                    }
                    None => {
                        // Passed on under the name as written.
                        let errors = vec![cat.unknown(&written, true)];
                        let report = Report {
                            errors,
                            ..Report::default()
                        };
                        (written, args, report)
                    }
                };
                out.push(Normalized::plain(Event::ToolStart {
                    index,
                    id,
                    name: name.clone(),
                    span: start,
                }));
                push_args(out, index, &text, span);
                call.name = name;
                call.arguments = super::utf8(text);
                report
            }
            Some(CallState::Unknown {
                written,
                placeholder,
            }) => Report {
                errors: vec![cat.unknown(&written, placeholder)],
                // The call keeps the name it came with.
                written_name: (written != call.name).then_some(written.to_string()),
                ..Report::default()
            },
            None => {
                // An end without a start: normalized whole.
                let o = cat.normalize(&call.name, &call.arguments);
                call.name = o.name.into();
                call.arguments = o.arguments;
                o.report
            }
        };
        out.push(Normalized {
            event: Event::ToolEnd { call, span },
            report: Some(Box::new(report)),
        });
    }

    /// Ends the stream: a call that never ended (the input stopped in the
    /// middle of it) is passed on as it is, so nothing is lost; its
    /// rewriter's held bytes are written out unchanged.
    pub fn finish(&mut self) -> Vec<Normalized> {
        let mut out = Vec::new();
        let mut open = self.calls.drain();
        open.sort_by_key(|(i, _)| *i);
        let cat = &*self.catalog;
        for (index, state) in open {
            match state {
                CallState::Live { mut rw, .. } => {
                    let tail = rw.finish(cat);
                    push_args(&mut out, index, tail, Span::default());
                }
                CallState::Held {
                    id,
                    written,
                    start,
                    args,
                } => {
                    out.push(Normalized::plain(Event::ToolStart {
                        index,
                        id,
                        name: written,
                        span: start,
                    }));
                    push_args(&mut out, index, &args, start);
                }
                CallState::Unknown { .. } => {}
            }
        }
        out
    }
}

fn push_args(out: &mut Vec<Normalized>, index: usize, bytes: &[u8], span: Span) {
    if !bytes.is_empty() {
        out.push(Normalized::plain(Event::ToolArgs {
            index,
            delta: Delta::copy_from_slice(bytes),
            span,
        }));
    }
}
