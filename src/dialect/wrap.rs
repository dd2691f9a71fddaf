//! A block opened by markup (usually a special token) whose body is JSON
//! call envelope(s) or pythonic calls, up to a closing token.
//!
//! Used by Llama 3 `<|python_tag|>`, Llama 4 `<|python_start|>`, LFM2
//! `<|tool_call_start|>`, Olmo3 `<function_calls>`, Granite `<|tool_call|>`,
//! Phi-4-mini `functools`, InternLM `<|action_start|><|plugin|>`, Cohere
//! `<|START_ACTION|>`, Nemotron `<TOOLCALL>`. The body kind is decided on
//! its first non-blank bytes: `{`, or `[` then `{` (or `]`), is JSON; a name
//! and `(`, or `[` then a name, is pythonic; anything else is raw text (for
//! dialects that carry code) or not a call.

use super::args::{match_any, RawArgs};
use super::json::JsonCalls;
use super::pythonic::{item_head, Head, PyCalls, PyOpts, PyStatus};
use super::{Block, BlockArgs, Cx, Flow, LaneHost, Resume};
use crate::config::Config;
use crate::event::{DiagnosticKind, Repair, RepairKind, Span};
use crate::json::Status;
use crate::scan::{match_lit, Match};

/// What a wrapper accepts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WrapSpec {
    /// The tokens that close the block (consumed, part of the last call's span).
    pub closes: &'static [&'static [u8]],
    /// A missing closing token is recorded ([`RepairKind::MissingCloseTag`]);
    /// otherwise the block may end right after its value.
    pub close_required: bool,
    /// JSON call envelopes may form the body.
    pub json: bool,
    /// Pythonic calls may form the body.
    pub python: bool,
    /// Only pythonic calls named `x.call(…)` (Llama 3.1 built-in tools).
    pub python_dot_call: bool,
    /// Bytes allowed between values besides blanks (Llama 3 `; `).
    pub seps: &'static [u8],
    /// Several values may follow one another.
    pub many: bool,
    /// A body that is neither JSON nor calls is a call of this tool, with the
    /// text under this key (code for a code interpreter).
    pub raw: Option<(&'static str, &'static str)>,
}

enum Body {
    None,
    Json(JsonCalls),
    Py(PyCalls),
    Raw { args: RawArgs, local: usize },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Lead,
    Body,
    After,
}

/// The block.
pub(crate) struct Wrap {
    spec: WrapSpec,
    st: St,
    body: Body,
    cfg: Config,
    stop_bytes: &'static [u8],
    /// Values read so far.
    values: usize,
    /// The opening token (for handing the block over).
    trigger: Vec<u8>,
    /// Markup content (`<invoke …>`) is read by the tag block this was handed to.
    delegate: Option<Box<dyn Block>>,
    /// The previous value's body and where it stopped, once the next value
    /// began: its calls end when the next value's kind is known (a JSON
    /// value after a JSON value is chained to it, see [`JsonCalls::after`])
    /// or with the block.
    prev: Option<(Body, u64)>,
    /// Repairs of the block's own markup (a repeated opening token).
    repairs: Vec<Repair>,
}

impl Wrap {
    pub(crate) fn new(spec: WrapSpec, a: &BlockArgs<'_>) -> Self {
        let lt = spec.closes.iter().all(|c| c.first() == Some(&b'<'));
        Wrap {
            trigger: a.trigger.to_vec(),
            delegate: None,
            prev: None,
            repairs: Vec::new(),
            spec,
            st: St::Lead,
            body: Body::None,
            cfg: a.cfg.clone(),
            stop_bytes: if lt && !spec.closes.is_empty() {
                b"<"
            } else {
                b""
            },
            values: 0,
        }
    }

    fn named(&self) -> bool {
        match &self.body {
            Body::None => false,
            Body::Json(j) => j.named(),
            Body::Py(p) => p.evidence(),
            Body::Raw { .. } => true,
        }
    }

    /// Ends the calls of the current body; the last ends at `end`.
    fn end_body(&mut self, cx: &mut Cx<'_>, end: u64, extra: Vec<Repair>) {
        match std::mem::replace(&mut self.body, Body::None) {
            Body::None => {
                // Between values (after `; `, or before bytes that may
                // start another one): the last value's calls end with the
                // block, so their span reaches the block's end.
                if let Some((b, _)) = self.prev.take() {
                    self.body = b;
                    self.end_body(cx, end, extra);
                }
            }
            Body::Json(mut j) => {
                if !j.is_closed() {
                    j.close(cx, false);
                }
                j.end_all(cx, end, extra);
            }
            Body::Py(mut p) => {
                p.close(cx, end, false);
                p.end_all(cx, end, extra);
            }
            Body::Raw { mut args, local } => args.end(cx, local, end, extra),
        }
    }

    /// The block ends before byte `at` (closing token included or missing).
    fn done(&mut self, cx: &mut Cx<'_>, at: usize, missing_close: bool) -> Flow {
        if !cx.committed() && self.named() {
            cx.commit();
        }
        if !cx.committed() {
            let span = Span::new(cx.em.span_cursor(), cx.abs(at));
            cx.diag(
                DiagnosticKind::UnparseableBlock,
                "call markup holds no tool call; kept as text",
                span,
            );
            return Flow::Reject {
                at,
                then: Resume::Text,
            };
        }
        let mut extra = std::mem::take(&mut self.repairs);
        if missing_close && self.spec.close_required {
            extra.push(Repair {
                kind: RepairKind::MissingCloseTag,
                offset: cx.abs(at),
            });
        }
        self.end_body(cx, cx.abs(at), extra);
        Flow::Done(at)
    }

    /// Chooses the body at byte `i` (not blank). `Err` is the flow to return.
    fn begin(&mut self, input: &[u8], i: usize, cx: &mut Cx<'_>) -> Result<(), Flow> {
        let b = input[i];
        let json = self.spec.json;
        let python = self.spec.python;
        let kind = match b {
            b'{' if json => Kind::Json,
            b'[' => {
                let mut k = i + 1;
                while k < input.len() && input[k].is_ascii_whitespace() && k < i + 64 {
                    k += 1;
                }
                match input.get(k) {
                    None => return Err(Flow::Partial(i)),
                    Some(b'{' | b']') if json => Kind::Json,
                    Some(_) if python => match item_head(&input[k..]) {
                        Head::Full { .. } | Head::Pair { .. } => Kind::Py,
                        Head::Partial => return Err(Flow::Partial(i)),
                        Head::No if json => Kind::Json,
                        Head::No => Kind::Other,
                    },
                    Some(_) if json => Kind::Json,
                    Some(_) => Kind::Other,
                }
            }
            _ if python
                && (b.is_ascii_alphabetic()
                    || b == b'_'
                    || b == b'\''
                    || b == b'"'
                    || b >= 0x80) =>
            {
                match item_head(&input[i..]) {
                    Head::Pair { .. } => Kind::Py,
                    Head::Full { start, end, .. } => {
                        if self.spec.python_dot_call
                            && !input[i + start..i + end].ends_with(b".call")
                        {
                            Kind::Other
                        } else {
                            Kind::Py
                        }
                    }
                    Head::Partial => return Err(Flow::Partial(i)),
                    Head::No => Kind::Other,
                }
            }
            _ => Kind::Other,
        };
        // JSON after a pythonic value is not read in the same wrapper: a JSON
        // value that held no call would have no call to take its bytes (only
        // a JSON value chains to the next one, see below), so the block ends
        // before it and it is text.
        let kind = match (kind, &self.prev) {
            (Kind::Json, Some((Body::Py(_), _))) => Kind::Other,
            (k, _) => k,
        };
        // The previous value ends where it stopped, unless both are JSON:
        // then it is chained to this one.
        let chained = match self.prev.take() {
            Some((Body::Json(p), at)) if matches!(kind, Kind::Json) => Some((p, at)),
            Some((b, at)) => {
                self.body = b;
                self.end_body(cx, at, Vec::new());
                None
            }
            None => None,
        };
        self.body = match kind {
            Kind::Json => {
                let next = JsonCalls::new(&self.cfg, false, self.stop_bytes == b"<").prose_ends();
                Body::Json(match chained {
                    Some((p, at)) => next.after(p, at),
                    None => next,
                })
            }
            Kind::Py => Body::Py(PyCalls::new(
                &self.cfg,
                PyOpts {
                    strong: true,
                    stops: self.stop_bytes,
                    multiline: true,
                    strip_call: self.spec.python_dot_call,
                },
            )),
            Kind::Other => match self.spec.raw {
                Some((name, key)) if self.values == 0 => {
                    let local = cx.start(name.to_owned(), None, Span::new(cx.abs(i), cx.abs(i)));
                    Body::Raw {
                        args: RawArgs::new(key, &self.cfg.limits),
                        local,
                    }
                }
                _ => {
                    return Err(if self.values == 0 {
                        Flow::Reject {
                            at: i,
                            then: Resume::Text,
                        }
                    } else {
                        self.done(cx, i, true)
                    })
                }
            },
        };
        self.values += 1;
        self.st = St::Body;
        Ok(())
    }
}

/// Most blanks between two values of a wrapper (and before its closing
/// markup): a longer run ends the block before it.
const MAX_GAP: usize = 64;

enum Kind {
    Json,
    Py,
    Other,
}

impl Block for Wrap {
    fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow {
        if let Some(d) = self.delegate.as_mut() {
            return d.feed(input, cx);
        }
        let mut i = 0;
        while i < input.len() {
            match self.st {
                St::Lead | St::After => {
                    // Blanks are part of the block only if markup or a value follows.
                    let Some(p) = input[i..].iter().position(|b| !b.is_ascii_whitespace()) else {
                        if self.st == St::After {
                            // The run decides nothing yet: held, up to its bound.
                            if input.len() - i < MAX_GAP {
                                return Flow::Partial(i);
                            }
                            return self.done(cx, i, true);
                        }
                        i = input.len();
                        continue;
                    };
                    if self.st == St::After && p >= MAX_GAP {
                        // A value or markup this far after the last one is
                        // not the wrapper's: the block ends before the run,
                        // however the input was cut (the run is held whole
                        // until its bound, so every chunking sees it so).
                        return self.done(cx, i, true);
                    }
                    let ws_start = i;
                    i += p;
                    let b = input[i];
                    if !self.spec.closes.is_empty() {
                        match match_any(self.spec.closes, &input[i..]) {
                            (Match::Full(n), _) => return self.done(cx, i + n, false),
                            (Match::Partial, _) => return Flow::Partial(ws_start),
                            (Match::No, _) => {}
                        }
                    }
                    if self.st == St::After {
                        if self.spec.seps.contains(&b) && self.spec.many {
                            i += 1;
                            continue;
                        }
                        let more = self.spec.many
                            && (b == b'{'
                                || b == b'['
                                || (self.spec.python && b.is_ascii_alphabetic()));
                        if !more {
                            return self.done(cx, ws_start, true);
                        }
                        let at = cx.abs(i);
                        // A JSON value's calls end only when the next value
                        // starts a call (or with the block): a next value that
                        // holds no call then stays inside their span.
                        // Deciding what the next value is may need more
                        // input (`Flow::Partial`), so the calls stay open
                        // until `begin` knows, or until the block ends.
                        match std::mem::replace(&mut self.body, Body::None) {
                            Body::None => {}
                            b => self.prev = Some((b, at)),
                        }
                    }
                    if self.st == St::Lead {
                        // The opening token again before the body
                        // (`<|python_tag|><|python_tag|>{…}`): one opening.
                        match match_lit(&self.trigger, &input[i..]) {
                            Match::Full(n) => {
                                self.repairs.push(Repair {
                                    kind: RepairKind::RepeatedOpenTag,
                                    offset: cx.abs(i),
                                });
                                i += n;
                                continue;
                            }
                            Match::Partial => return Flow::Partial(ws_start),
                            Match::No => {}
                        }
                    }
                    if self.st == St::Lead && b == b'<' && self.trigger.starts_with(b"<") {
                        // Markup inside the wrapper (`<invoke name=…>`): the tag
                        // block reads it, from this byte on.
                        let mut d = super::hermes::tag_block(&super::BlockArgs {
                            trigger: &self.trigger,
                            cfg: &self.cfg,
                            spares: &cx.em.spares,
                        });
                        let mut sub = cx.at(i);
                        let flow = d.feed(&input[i..], &mut sub);
                        self.delegate = Some(d);
                        return match flow {
                            Flow::More => Flow::More,
                            Flow::Partial(n) => Flow::Partial(i + n),
                            Flow::Done(n) => Flow::Done(i + n),
                            Flow::Reject { at, then } => Flow::Reject { at: i + at, then },
                        };
                    }
                    if let Err(flow) = self.begin(input, i, cx) {
                        return match flow {
                            Flow::Partial(_) => Flow::Partial(ws_start),
                            f => f,
                        };
                    }
                }
                St::Body => {
                    let mut sub = cx.at(i);
                    match &mut self.body {
                        Body::None => self.st = St::After,
                        Body::Json(jc) => {
                            let p = jc.feed(&input[i..], &mut sub);
                            i += p.consumed;
                            if !sub.committed() && jc.named() {
                                sub.commit();
                            }
                            match p.status {
                                Status::NeedMore => return Flow::More,
                                // Prose after a blank line: the value the
                                // model left open ends there (the prose is text).
                                Status::Stop
                                    if input.get(i).is_some_and(u8::is_ascii_alphabetic) =>
                                {
                                    jc.close(&mut sub, false);
                                    return self.done(cx, i, true);
                                }
                                Status::Done | Status::Stop | Status::Halted => self.st = St::After,
                                Status::Limit => {
                                    jc.close(&mut sub, true);
                                    self.st = St::After;
                                    if sub.committed() {
                                        return self.done(cx, i, true);
                                    }
                                }
                            }
                        }
                        Body::Py(py) => {
                            let p = py.feed(&input[i..], &mut sub);
                            i += p.consumed;
                            if !sub.committed() && py.evidence() {
                                sub.commit();
                            }
                            match p.status {
                                PyStatus::NeedMore => return Flow::More,
                                PyStatus::Partial => return Flow::Partial(i),
                                PyStatus::Done => self.st = St::After,
                                PyStatus::Reject => {
                                    if !cx.committed() {
                                        return Flow::Reject {
                                            at: i,
                                            then: Resume::Text,
                                        };
                                    }
                                    self.st = St::After;
                                }
                                PyStatus::Stop => match match_any(self.spec.closes, &input[i..]) {
                                    (Match::Full(n), _) => return self.done(cx, i + n, false),
                                    (Match::Partial, _) => return Flow::Partial(i),
                                    (Match::No, _) => py.resume_stop(),
                                },
                            }
                        }
                        Body::Raw { args, local } => {
                            let local = *local;
                            let rest = &input[i..];
                            match super::args::find_any(self.spec.closes, rest) {
                                Some((p, k, true)) => {
                                    args.push(&rest[..p], sub.base);
                                    let span = Span::new(sub.base, sub.abs(p));
                                    args.flush(&mut sub, local, span);
                                    let n = self.spec.closes[k].len();
                                    return self.done(cx, i + p + n, false);
                                }
                                Some((p, _, false)) => {
                                    args.push(&rest[..p], sub.base);
                                    let span = Span::new(sub.base, sub.abs(p));
                                    args.flush(&mut sub, local, span);
                                    return Flow::Partial(i + p);
                                }
                                None => {
                                    args.push(rest, sub.base);
                                    let span = Span::new(sub.base, sub.abs(rest.len()));
                                    args.flush(&mut sub, local, span);
                                    return Flow::More;
                                }
                            }
                        }
                    }
                }
            }
        }
        Flow::More
    }

    fn plain_chunk(&mut self, input: &[u8], cx: &mut Cx<'_>) -> bool {
        if let Some(d) = self.delegate.as_mut() {
            return d.plain_chunk(input, cx);
        }
        match (self.st, &mut self.body) {
            (St::Body, Body::Py(py)) => py.plain_chunk(input, cx),
            _ => false,
        }
    }

    fn lane_host(&mut self) -> Option<LaneHost<'_>> {
        if let Some(d) = self.delegate.as_mut() {
            return d.lane_host();
        }
        match (self.st, &mut self.body) {
            (St::Body, Body::Json(jc)) => Some(LaneHost::Calls(jc)),
            _ => None,
        }
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        if let Some(d) = self.delegate.as_mut() {
            return d.finish(cx);
        }
        match &mut self.body {
            Body::None => {}
            Body::Json(j) => {
                let named = j.named();
                j.close(cx, true);
                if named && !cx.committed() {
                    cx.commit();
                }
            }
            Body::Py(p) => {
                let end = cx.base;
                p.close(cx, end, true);
                if p.evidence() && !cx.committed() {
                    cx.commit();
                }
            }
            Body::Raw { args, .. } => {
                if self.spec.close_required {
                    args.set_truncated();
                }
                cx.commit();
            }
        }
        if !cx.committed() {
            return false;
        }
        let mut extra = std::mem::take(&mut self.repairs);
        if self.spec.close_required {
            extra.push(Repair {
                kind: RepairKind::MissingCloseTag,
                offset: cx.base,
            });
        }
        let end = cx.base;
        self.end_body(cx, end, extra);
        true
    }
}
