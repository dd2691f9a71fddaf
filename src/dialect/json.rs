//! Generic JSON emulation: calls written as bare JSON in text, or inside a
//! code fence.
//!
//! ~~~text
//! I'll check.
//! ```json
//! {"name": "get_weather", "arguments": {"city": "Tokyo"}}
//! ```
//! ~~~
//!
//! A `{` (or `[` followed by `{`) in text starts a *speculative* block: the
//! JSON is repaired and routed as it arrives, and the block commits as soon
//! as the object names a tool and carries arguments (or names a known tool).
//! The first key must be one a call envelope uses, so `{"debug": true}` is
//! given back as text right after its first key. Fences whose language is
//! empty, `json`, `json5`, `jsonc`, `tool_call`, `tool_calls`, `tool_use`,
//! `python`, `py`, `tool_code`, `javascript`, `js`, `typescript`, `ts`, `java`
//! (BFCL's Java and JavaScript answers), `yaml` or `yml` (whose flow style is
//! JSON) are read the same way
//! when their content starts with `{` or `[`; any other fence (and one that
//! holds no call) is text up to its closing fence.

use super::pythonic::{item_head, Head, PyCalls, PyOpts, PyStatus};
use super::{Action, Block, BlockArgs, Cx, Emitter, Flow, LaneHost, Resume, Trigger};
use crate::config::{Config, Limits};
use crate::envelope::{CallRouter, CallShape};
use crate::event::{Repair, RepairKind, Span};
use crate::json::{closing_fence, in_pieces, Lane, Progress, Repairer, Sink, Status};
use crate::scan::{match_lit, Match, Pattern};

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Lit(b"{"),
        action: Action::Block {
            open: open_bare,
            consume: false,
        },
    },
    Trigger {
        pattern: Pattern::Custom {
            first: b"[",
            matches: bracket_object,
        },
        action: Action::Block {
            open: open_bare,
            consume: false,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"```"),
        action: Action::Block {
            open: open_fence,
            consume: true,
        },
    },
];

/// `[` followed by optional whitespace and `{`: an array of call objects.
fn bracket_object(at: &[u8]) -> Match {
    const MAX_BLANK: usize = 64;
    for (i, &b) in at.iter().enumerate().skip(1) {
        match b {
            b' ' | b'\t' | b'\n' | b'\r' if i <= MAX_BLANK => {}
            b'{' => return Match::Full(1),
            _ => return Match::No,
        }
    }
    if at.len() > MAX_BLANK {
        Match::No
    } else {
        Match::Partial
    }
}

fn open_bare(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(BareJson {
        jc: JsonCalls::fresh(a.spares, &a.cfg.limits, true, false, a.cfg.tools.clone())
            .judging_calls()
            .prose_ends(),
    })
}

/// Opens a code fence (its opening backticks consumed) for the JSON dialect:
/// pythonic calls are read too when that dialect is active.
pub(crate) fn open_fence(a: &BlockArgs<'_>) -> Box<dyn Block> {
    let py_ok = a.cfg.dialects.is_empty() || a.cfg.dialects.contains(&super::Dialect::Pythonic);
    fence(a, true, py_ok)
}

/// Opens a code fence for the pythonic dialect (Gemma 3's ```` ```tool_code ````).
pub(crate) fn open_python_fence(a: &BlockArgs<'_>) -> Box<dyn Block> {
    let json_ok = a.cfg.dialects.is_empty() || a.cfg.dialects.contains(&super::Dialect::Json);
    fence(a, json_ok, true)
}

/// Opens a code fence that holds JSON calls only (Command R's `Action:`).
pub(crate) fn open_json_fence(a: &BlockArgs<'_>) -> Box<dyn Block> {
    fence(a, true, false)
}

fn fence(a: &BlockArgs<'_>, json_ok: bool, py_ok: bool) -> Box<dyn Block> {
    Box::new(Fence {
        state: FenceState::Info,
        info: Vec::new(),
        jc: None,
        py: None,
        py_stopped: false,
        lead_comment: false,
        cfg_strict: true,
        cfg: a.cfg.clone(),
        json_ok,
        py_ok,
    })
}

/// What a [`JsonCalls`] has emitted for one router call.
#[derive(Clone, Copy, Debug, Default)]
struct Track {
    /// The block-local call number, once started.
    local: Option<usize>,
    /// Its end has been emitted.
    ended: bool,
    /// Its arguments were finished (`CallShape::finish_args`).
    finalized: bool,
}

/// Streams the calls found in consecutive JSON values of one block.
///
/// Shared by every dialect whose calls are JSON envelopes.
pub(crate) struct JsonCalls {
    rep: Repairer,
    router: CallRouter,
    /// What has been emitted for each router call (one entry per call).
    track: Vec<Track>,
    rep_cursor: usize,
    began: bool,
    /// Calls from this index on were still open when the input ended.
    truncated_from: Option<usize>,
    /// The repairer stopped for good (value complete or closed).
    closed: bool,
    /// An earlier value of the same block, whose calls end (at the offset
    /// given) when this value starts a call, or with the block if it never
    /// does, so that a value holding no call stays inside a call's span.
    prev: Option<(Box<JsonCalls>, u64)>,
    /// Router calls before this index are settled (ended, or closed without
    /// a name): per-feed work does not look at them again.
    settled: usize,
    /// Some call has its name.
    any_named: bool,
    /// Number of calls in `track` whose end was emitted.
    ended_count: usize,
    /// Router calls before this index are closed and do not confirm the
    /// block (see [`JsonCalls::confirmed`]).
    unconfirmed: usize,
    /// The value may be read by the fast path ([`super::fastcall`]) when
    /// it arrives whole in its first feed (see [`JsonCalls::fast_calls`]).
    fast: bool,
    /// A call the fast path read: started, its arguments all handed out,
    /// its end still to emit (by [`JsonCalls::end_all`]).
    fast_end: Option<FastEnd>,
    /// Set by [`JsonCalls::renew_later`]: the repairer, the router and
    /// `track` still hold the last value's state, and are renewed (with
    /// these `strict` and `stop_on_lt`) at the first feed the fast path
    /// does not take.
    stale: Option<(bool, bool)>,
    /// The streaming fast path's state ([`super::fastcall::Stream`]),
    /// kept for its buffer; reading a value while `active`.
    stream: Option<Box<super::fastcall::Stream>>,
    /// The arguments' bytes the streaming fast path handed out before it
    /// handed the value to the repairer (checked at the call's end: the
    /// final arguments start with them).
    #[cfg(debug_assertions)]
    handed: Vec<u8>,
}

/// A call read by the fast path, waiting for its end.
#[derive(Debug)]
struct FastEnd {
    /// Its block-local call number.
    local: usize,
    /// Its arguments, as written (and as the repairer would write them).
    args: String,
}

impl JsonCalls {
    /// `strict`: bare-text mode (reject early). `stop_on_lt`: a `<` where JSON
    /// syntax is expected stops the repairer (the dialect checks its closing tag).
    pub(crate) fn new(cfg: &Config, strict: bool, stop_on_lt: bool) -> Self {
        let mut jc = Self::with_limits(&cfg.limits, strict, stop_on_lt);
        jc.set_tools(cfg.tools.clone());
        jc
    }

    /// Tool definitions and placeholders written as calls are no calls (see
    /// [`CallRouter::judging_calls`]): for JSON without call markup.
    pub(crate) fn judging_calls(mut self) -> Self {
        self.router = self.router.judging_calls(true);
        self
    }

    /// The offered tools (see [`CallRouter::with_tools`]).
    pub(crate) fn set_tools(&mut self, tools: Option<std::sync::Arc<crate::config::Tools>>) {
        self.router.set_tools(tools);
    }

    pub(crate) fn with_limits(limits: &Limits, strict: bool, stop_on_lt: bool) -> Self {
        JsonCalls {
            rep: Repairer::with_limits(limits).stop_on_lt(stop_on_lt),
            router: CallRouter::new(limits).strict(strict),
            track: Vec::new(),
            rep_cursor: 0,
            began: false,
            truncated_from: None,
            closed: false,
            prev: None,
            settled: 0,
            any_named: false,
            ended_count: 0,
            unconfirmed: 0,
            fast: false,
            fast_end: None,
            stale: None,
            stream: None,
            #[cfg(debug_assertions)]
            handed: Vec::new(),
        }
    }

    /// A reader for a new value, as [`JsonCalls::with_limits`] and
    /// [`JsonCalls::set_tools`] make it: the one `spares` keeps, renewed in
    /// place (its state dropped, its buffers kept: see
    /// [`JsonCalls::renew`]), or a new one.
    pub(crate) fn fresh(
        spares: &super::Spares,
        limits: &Limits,
        strict: bool,
        stop_on_lt: bool,
        tools: Option<std::sync::Arc<crate::config::Tools>>,
    ) -> Self {
        match spares.take_json() {
            Some(mut jc) => {
                jc.renew(limits, strict, stop_on_lt, tools);
                jc
            }
            None => {
                // Set in place: the reader is not moved once more.
                let mut jc = Self::with_limits(limits, strict, stop_on_lt);
                jc.set_tools(tools);
                jc
            }
        }
    }

    /// Makes this reader a new one for the next value of the stream, in
    /// place: every field as [`JsonCalls::with_limits`] and
    /// [`JsonCalls::set_tools`] set it, the buffers kept (up to
    /// [`crate::json::reuse`]'s bound). Only buffers pass from one value to
    /// the next, never state. (A reader built anew and handed the old one's
    /// buffers moved the whole reader three times and cost some 600
    /// instructions per call of a reply of many small calls.)
    pub(crate) fn renew(
        &mut self,
        limits: &Limits,
        strict: bool,
        stop_on_lt: bool,
        tools: Option<std::sync::Arc<crate::config::Tools>>,
    ) {
        let old = std::mem::replace(
            &mut self.rep,
            Repairer::with_limits(limits).stop_on_lt(stop_on_lt),
        );
        self.rep.reuse_buffers(old);
        let old = std::mem::replace(
            &mut self.router,
            CallRouter::new(limits).strict(strict).with_tools(tools),
        );
        self.router.reuse_buffers(old);
        let old = std::mem::take(&mut self.track);
        crate::json::reuse(&mut self.track, old);
        self.reset();
    }

    /// The per-value fields, as [`JsonCalls::with_limits`] sets them.
    fn reset(&mut self) {
        self.rep_cursor = 0;
        self.began = false;
        self.truncated_from = None;
        self.closed = false;
        self.prev = None;
        self.settled = 0;
        self.any_named = false;
        self.ended_count = 0;
        self.unconfirmed = 0;
        self.fast = false;
        self.fast_end = None;
        self.stale = None;
        self.stop_stream();
        #[cfg(debug_assertions)]
        self.handed.clear();
    }

    /// The streaming fast path is reading this value.
    #[inline]
    fn streaming(&self) -> bool {
        self.stream.as_ref().is_some_and(|s| s.active)
    }

    fn stop_stream(&mut self) {
        if let Some(st) = self.stream.as_mut() {
            st.active = false;
        }
    }

    /// [`JsonCalls::renew`] (with the parser's limits and tools) put off
    /// to the value's first feed, for a reader inside call markup (see
    /// [`JsonCalls::fast_calls`]): a value the fast path takes never needs
    /// the repairer or the router, so it does not renew them. Until then
    /// the reader holds the last value's state: the first call on it must
    /// be [`JsonCalls::feed`] (the tag block feeds the value's `{` at once).
    pub(crate) fn renew_later(&mut self, strict: bool, stop_on_lt: bool, fast: bool) {
        // What the fast path reads and what a value it took is asked
        // afterwards (`closed`, `any_named`, `fast_end`, `prev`, which it
        // requires empty) are all it needs; the renewal resets the rest.
        self.began = false;
        self.fast_end = None;
        self.stop_stream();
        self.stale = Some((strict, stop_on_lt));
        self.fast_calls(fast);
    }

    /// A value inside call markup, whose reader is not strict, does not
    /// judge calls and stops at a `<`: a well-formed call object that
    /// arrives whole in the value's first feed is read by the fast path
    /// ([`super::fastcall`]), with the same events, when `on` (false for
    /// [`Config::repairer_only`]).
    pub(crate) fn fast_calls(&mut self, on: bool) {
        self.fast = on;
    }

    /// Prose after a blank line, where the value cannot go on, ends it
    /// ([`Status::Stop`]; see [`Repairer::set_stop_on_prose`]): for calls
    /// written bare in text, which nothing else bounds.
    pub(crate) fn prose_ends(mut self) -> Self {
        self.rep.set_stop_on_prose(true);
        self
    }

    /// The value is inside a code fence: the repairer stops at a backtick
    /// and at a raw line break in a string ([`Status::Stop`]), where the
    /// fence reader looks for its closing fence ([`crate::json::closing_fence`]).
    pub(crate) fn fenced(mut self) -> Self {
        self.rep.set_stop_on_fence(true);
        self
    }

    /// After a [`Status::Stop`] that was no closing fence: the repairer
    /// reads that byte as JSON.
    pub(crate) fn accept_stop(&mut self) {
        self.rep.accept_stop();
    }

    /// A value that follows `prev` (at offset `at`) in the same block.
    pub(crate) fn after(mut self, prev: JsonCalls, at: u64) -> Self {
        self.prev = Some((Box::new(prev), at));
        self
    }

    /// Feeds input, then emits what became known.
    pub(crate) fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Progress {
        if !self.began {
            if let Some(p) = self.begin(input, cx) {
                return p;
            }
        }
        // Input left in the data the parser reads, from this feed's start
        // (a long argument is sized for it: `CallRouter::feed_left`).
        let len = input
            .len()
            .max(cx.em.data_end.saturating_sub(cx.base) as usize);
        // A long input is read in pieces, each followed by the per-feed
        // bookkeeping, so that what that bounds (the repairs kept for an
        // open call) stays bounded within one feed too.
        in_pieces(input, |piece, at| {
            self.router.feed_left(len - at);
            if at == 0 {
                self.feed_piece(piece, cx)
            } else {
                self.feed_piece(piece, &mut cx.at(at))
            }
        })
    }

    /// The value's first feed: the fast path's try (its progress, when it
    /// took the value), else the renewal [`JsonCalls::renew_later`] put
    /// off, and the repairer set at the value's offset. Out of line: once a
    /// value, kept off the per-chunk path.
    #[inline(never)]
    fn begin(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Option<Progress> {
        // A first feed of up to 64 bytes is a streamed chunk: the value
        // mostly goes on past it (and a search would cost more than the
        // fast path saves there).
        if self.streaming() {
            return Some(self.feed_stream(input, cx));
        }
        if self.fast && self.prev.is_none() {
            if input.len() > 64 {
                if let Some(p) = self.feed_fast(input, cx) {
                    return Some(p);
                }
            } else if input.first() == Some(&b'{') {
                // A streamed value: the streaming fast path reads it while
                // it stays well-formed.
                self.stream
                    .get_or_insert_with(Default::default)
                    .begin(cx.base, &cx.cfg.limits);
                self.closed = false;
                self.any_named = false;
                return Some(self.feed_stream(input, cx));
            }
        }
        if let Some((strict, stop_on_lt)) = self.stale {
            let tools = cx.cfg.tools.clone();
            self.renew(&cx.cfg.limits, strict, stop_on_lt, tools);
        }
        self.began = true;
        self.rep.set_offset(cx.base);
        None
    }

    /// The fast path: `input` starts with a whole well-formed call object
    /// ([`super::fastcall::scan`]). Emits what the repairer and the router
    /// would have made known in this feed — the call's start and its whole
    /// arguments, over the value's span, or for a value longer than the
    /// repairer's pieces the start over the first piece and the arguments
    /// written by each piece's end over that piece (as
    /// [`crate::json::in_pieces`] feeds it) — and keeps its end for
    /// [`JsonCalls::end_all`]. `None`: not such a value (nothing done).
    #[inline]
    fn feed_fast(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Option<Progress> {
        // A value read whole ends with a `}` in this feed.
        let last = memchr::memrchr(b'}', input)?;
        // All the parser's data is here: a long value is not cut by the feed.
        let whole = cx.em.data_end <= cx.abs(input.len());
        let found = super::fastcall::scan(&input[..=last], &cx.cfg.limits, whole)?;
        // The arguments' only UTF-8 check (the scan leaves it here): made
        // text at once, with one copy.
        let args = simdutf8::basic::from_utf8(&input[found.args.0..found.args.1]).ok()?;
        let name = std::str::from_utf8(&input[found.name.0..found.name.1]).ok()?;
        super::fast_call_taken();
        // Made before the deltas are copied, as the repairer's writer makes
        // its text before its first delta: in the other order a long
        // value's buffers were given back to the system after each parse
        // (glibc: some 20 page faults a parse of 100 KB, none this way).
        let args = args.to_owned();
        self.began = true;
        self.closed = true;
        self.any_named = true;
        let end = cx.abs(found.end);
        let first = match found.cuts.is_empty() {
            true => end,
            false => cx.abs(crate::json::PIECE),
        };
        let local = cx.start(name, None, Span::new(cx.base, first));
        let mut from = found.args.0;
        let mut at = cx.base;
        for (k, &cut) in found.cuts.iter().enumerate() {
            let to = cx.abs((k + 1) * crate::json::PIECE);
            cx.args(local, &input[from..cut], Span::new(at, to));
            (from, at) = (cut, to);
        }
        cx.args(local, &input[from..found.args.1], Span::new(at, end));
        self.fast_end = Some(FastEnd { local, args });
        Some(Progress {
            consumed: found.end,
            status: Status::Done,
        })
    }

    /// A feed of a value the streaming fast path reads
    /// ([`super::fastcall::Stream`]): the call's start once its name is
    /// complete, the arguments' bytes that became safe, and at the value's
    /// end what [`JsonCalls::feed_fast`] leaves (the end for
    /// [`JsonCalls::end_all`]). At anything the scan does not accept, the
    /// value goes to the repairer ([`JsonCalls::hand_over`]).
    #[inline(never)]
    fn feed_stream(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Progress {
        let Some(st) = self.stream.as_mut() else {
            debug_assert!(false, "no stream");
            return Progress {
                consumed: 0,
                status: Status::Halted,
            };
        };
        let old = st.buf.len();
        // No more than the scan may read (a long feed's rest, which it
        // would refuse, is not copied: the repairer reads it in place).
        let take = input.len().min(st.room(&cx.cfg.limits));
        st.buf.extend_from_slice(&input[..take]);
        st.last_feed = input.len();
        let step = st.advance(&cx.cfg.limits);
        if step == super::fastcall::Step::Refuse {
            return self.hand_over(cx, old, &input[take..]);
        }
        debug_assert!(
            take == input.len() || matches!(step, super::fastcall::Step::Done(_)),
            "the scan wants more of a cut feed"
        );
        let span = Span::new(cx.base, cx.abs(input.len()));
        if st.local.is_none() {
            if let Some(name) = st.name_bytes() {
                // Printable ASCII (checked by the scan).
                let name = std::str::from_utf8(name).unwrap_or_default();
                st.local = Some(cx.start(name, None, span));
                self.any_named = true;
            }
        }
        if let Some(local) = st.local {
            if st.safe > st.emitted {
                cx.args(local, &st.buf[st.emitted..st.safe], span);
                st.emitted = st.safe;
            }
        }
        match step {
            super::fastcall::Step::Done(end) => {
                let Some(local) = st.local else {
                    debug_assert!(false, "a complete call without a start");
                    return self.hand_over(cx, old, &input[take..]);
                };
                debug_assert_eq!(st.emitted, st.args_end);
                super::fast_call_taken();
                st.active = false;
                self.fast_end = Some(FastEnd {
                    local,
                    args: crate::json::into_string(st.take_args()),
                });
                self.began = true;
                self.closed = true;
                Progress {
                    consumed: end - old,
                    status: Status::Done,
                }
            }
            _ => Progress {
                consumed: input.len(),
                status: Status::NeedMore,
            },
        }
    }

    /// Hands a value the streaming fast path was reading to the repairer
    /// and the router, renewed as [`JsonCalls::begin`] renews them: the
    /// value's bytes so far (of which the last feed's start at `old`) are
    /// replayed from its first byte, then `rest` (the last feed's bytes
    /// past those the stream took, read in place). The call already
    /// started keeps its number, and the arguments' bytes already handed
    /// out count as handed out ([`crate::envelope::ArgsWriter::handed_out`]):
    /// the repairer writes valid JSON as it was written, and those bytes
    /// are a prefix of what it writes whatever follows (see
    /// [`super::fastcall::Stream`]). Its progress is over the last feed.
    ///
    /// Both are read in pieces ([`in_pieces`]), each followed by the
    /// per-feed bookkeeping, as a long feed is: what that bounds (the
    /// repairs kept for an open call) stays bounded in a replay too.
    #[inline(never)]
    fn hand_over(&mut self, cx: &mut Cx<'_>, old: usize, rest: &[u8]) -> Progress {
        let Some(mut st) = self.stream.take() else {
            debug_assert!(false, "no stream");
            return Progress {
                consumed: 0,
                status: Status::Halted,
            };
        };
        st.active = false;
        if let Some((strict, stop_on_lt)) = self.stale {
            let tools = cx.cfg.tools.clone();
            self.renew(&cx.cfg.limits, strict, stop_on_lt, tools);
        }
        self.began = true;
        self.rep.set_offset(st.start);
        let value = st.value();
        // (`old` is an index into `buf`, after the detached head.)
        let old = old + st.shift;
        let left = (cx.em.data_end.saturating_sub(st.start) as usize).max(value.len() + rest.len());
        let mut first = true;
        let p = {
            let mut vcx = Cx {
                base: st.start,
                em: &mut *cx.em,
                cfg: cx.cfg,
            };
            in_pieces(&value, |piece, at| {
                self.router.feed_left(left - at);
                let p = self.rep.feed(piece, &mut self.router);
                if matches!(p.status, Status::Done) {
                    self.closed = true;
                }
                if std::mem::take(&mut first) {
                    // The name is in the first piece (the stream reads at
                    // most `MAX_STREAM` bytes before the arguments).
                    self.adopt_stream_call(&st);
                }
                let base = vcx.abs(at);
                self.sync(&mut vcx.at(at), Span::new(base, base + p.consumed as u64));
                p
            })
        };
        drop(value);
        debug_assert!(p.consumed >= old, "a replayed value ended early");
        let mut done = p.consumed.saturating_sub(old);
        let mut status = p.status;
        if status == Status::NeedMore && !rest.is_empty() {
            // The value goes on in the rest of the feed, read as any feed
            // of a value the repairer reads.
            let q = self.feed(rest, &mut cx.at(done));
            done += q.consumed;
            status = q.status;
        }
        self.stream = Some(st);
        Progress {
            consumed: done,
            status,
        }
    }

    /// The repairer reads a value the streaming fast path started its call
    /// of ([`JsonCalls::hand_over`]): the call keeps its number, and its
    /// arguments' bytes already handed out count as handed out.
    fn adopt_stream_call(&mut self, st: &super::fastcall::Stream) {
        let Some(local) = st.local else {
            return;
        };
        self.any_named = true;
        self.track.clear();
        self.track.push(Track {
            local: Some(local),
            ..Track::default()
        });
        let handed = &st.buf[st.args.min(st.emitted)..st.emitted];
        match self.router.calls.first_mut() {
            Some(c) => {
                debug_assert_eq!(c.call_name().map(|n| n.as_bytes()), st.name_bytes());
                c.args.handed_out(handed);
            }
            None => debug_assert!(false, "a started call the router does not have"),
        }
        #[cfg(debug_assertions)]
        {
            self.handed.clear();
            self.handed.extend_from_slice(handed);
        }
    }

    fn feed_piece(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Progress {
        let p = self.rep.feed(input, &mut self.router);
        if matches!(p.status, Status::Done) {
            self.closed = true;
        }
        self.sync(cx, Span::new(cx.base, cx.abs(p.consumed)));
        p
    }

    /// Arms the parser's lane on the steady state of a streamed call (see
    /// [`crate::json::Lane`]): one started call, open, inside its arguments
    /// where the router passes bytes through, everything written so far
    /// handed out, and the repairer in a plain state. The lane then reads
    /// the chunks until [`JsonCalls::lane_disarm`]. False: not armed.
    pub(crate) fn lane_arm(&mut self, lane: &mut Lane, em: &Emitter) -> bool {
        if self.streaming() {
            return self.stream_lane_arm(lane, em);
        }
        let n = self.router.calls.len();
        if self.closed
            || !self.began
            || self.prev.is_some()
            || n == 0
            || n != self.track.len()
            || self.settled + 1 != n
        {
            return false;
        }
        let t = &self.track[n - 1];
        let Some(local) = t.local.filter(|_| !t.ended && !t.finalized) else {
            return false;
        };
        if self.router.calls[n - 1].closed || !self.router.opaque() {
            return false;
        }
        let closable = self.router.opaque_closable();
        let Some((out, max)) = self.router.calls[n - 1].args.lane_buffer() else {
            return false;
        };
        lane.arm(&mut self.rep, closable, out, max, em.locals[local].index)
    }

    /// [`JsonCalls::lane_arm`] on a value the streaming fast path reads
    /// ([`Lane::arm_stream`]): inside its arguments, at a string value's
    /// content or after a value, everything read handed out.
    fn stream_lane_arm(&mut self, lane: &mut Lane, em: &Emitter) -> bool {
        let Some(st) = self.stream.as_mut() else {
            return false;
        };
        let Some((at, local)) = st.armable() else {
            return false;
        };
        st.detach_head();
        let (objs, depth) = st.containers();
        let out_max = st.args.saturating_add(st.max_args.saturating_sub(2));
        if st.buf.len() >= out_max {
            return false;
        }
        lane.arm_stream(
            at,
            objs,
            depth,
            &mut st.buf,
            st.start + st.shift as u64,
            out_max,
            st.lane_limits,
            em.locals[local].index,
        );
        true
    }

    /// Disarms the lane (see [`JsonCalls::lane_arm`]): the repairer and the
    /// arguments take back the state of the lane's last commit point.
    pub(crate) fn lane_disarm(&mut self, lane: &mut Lane) {
        if let Some(st) = self.stream.as_mut().filter(|s| s.active) {
            // Armed by the streaming fast path: it reads on.
            let (at, objs, depth) = lane.disarm_stream(&mut st.buf);
            st.resume(at, objs, depth);
            return;
        }
        let Some(call) = self.router.calls.last_mut() else {
            debug_assert!(false, "a lane armed without a call");
            return;
        };
        let change = lane.disarm(&mut self.rep, call.args.lane_out());
        call.args.lane_done();
        // The containers the lane opened and closed, counted as a run would.
        self.router.write_opaque(&[], change);
    }

    /// True when the router has decided (strict mode) that this is not a call.
    pub(crate) fn rejected(&self) -> bool {
        self.router.rejected()
    }

    /// True when some call (of this value or an earlier one) has its name.
    pub(crate) fn named(&self) -> bool {
        if self.streaming() {
            // (The router may still hold the last value's calls.)
            return self.any_named;
        }
        self.any_named
            || self.router.calls[self.settled..]
                .iter()
                .any(|c| c.call_name().is_some())
            || self.prev.as_ref().is_some_and(|p| p.0.named())
    }

    /// True when some call has a name and arguments, or names a known tool
    /// (and has no `description`, as a tool definition cut short before its
    /// parameters has: `{"name": "f", "description": "…`).
    /// TGI's `{"function": {"_name": …, …args}}` carries its arguments
    /// flattened (its `no_tool` pseudo-call is not a call).
    /// Asked after every feed until it holds, it looks at each closed call
    /// once: a closed call that did not confirm never will.
    pub(crate) fn confirmed(&mut self, cx: &Cx<'_>) -> bool {
        let confirms = |c: &CallShape| {
            c.call_name().is_some_and(|n| {
                c.has_args
                    || (c.tgi && c.closed && n != "no_tool")
                    || (cx.known_tool(n) && !c.described())
            })
        };
        let calls = &self.router.calls;
        while let Some(c) = calls.get(self.unconfirmed).filter(|c| c.closed) {
            if confirms(c) {
                return true;
            }
            self.unconfirmed += 1;
        }
        calls[self.unconfirmed..].iter().any(confirms)
    }

    /// Lets the repairer read the `<` it stopped on as JSON.
    pub(crate) fn accept_lt(&mut self) {
        self.rep.accept_lt();
    }

    /// True once the JSON value is complete or was closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Closes the value early: the input ended (`eof`) or markup ended it.
    pub(crate) fn close(&mut self, cx: &mut Cx<'_>, eof: bool) {
        if self.streaming() {
            let old = self.stream.as_ref().map_or(0, |s| s.buf.len());
            self.hand_over(cx, old, &[]);
        }
        if self.closed {
            return;
        }
        if eof {
            self.truncated_from = Some(
                self.router
                    .calls
                    .iter()
                    .position(|c| !c.closed)
                    .unwrap_or(self.router.calls.len()),
            );
            if self.rep.has_begun() && !self.rep.is_done() && self.router.calls.is_empty() {
                self.truncated_from = Some(0);
            }
        }
        let at = self.rep.offset();
        self.rep.finish(&mut self.router);
        self.closed = true;
        self.sync(cx, Span::new(at, at));
    }

    /// Bounds the repairer's list while a call is open: every repair from
    /// the cursor on then goes to one call (the open one, or the first
    /// started after it if it never starts), whose list keeps only its
    /// `max_repairs` lowest and marks the next ([`Repair::cap`]), so only
    /// that many more than those need be kept.
    fn bound_repairs(&mut self, cx: &Cx<'_>) {
        let n = self.router.calls.len();
        if n == 0 || (self.settled + 1 == n && !self.router.calls[n - 1].closed) {
            let keep = cx.cfg.limits.max_repairs.saturating_add(1);
            self.rep.bound_repairs(self.rep_cursor, keep);
        }
    }

    /// Emits starts and argument deltas for every named call.
    fn sync(&mut self, cx: &mut Cx<'_>, span: Span) {
        self.bound_repairs(cx);
        let n = self.router.calls.len();
        // The steady state of a long call: one unsettled call, started and
        // still open, no new call since the last feed. Only its delta is
        // new; the bookkeeping below would find nothing else to do.
        if n == self.track.len() && self.settled + 1 == n {
            let k = self.settled;
            if let (Some(local), false, false) = (
                self.track[k].local,
                self.track[k].ended,
                self.router.calls[k].closed,
            ) {
                cx.args(local, self.router.calls[k].args.take_delta(), span);
                return;
            }
        }
        self.track.resize(n, Track::default());
        // Started calls before this index are ended (so that a value of
        // many calls read in one feed ends each earlier call once).
        let mut ended_to = self.settled;
        for k in self.settled..n {
            if self.router.calls[k].closed && !self.track[k].finalized {
                self.track[k].finalized = true;
                // After the closing brace; a brace the end of the input
                // supplied is at the input's end, not past it.
                let at = self.router.calls[k].end.min(span.end);
                if let Some(r) = self.router.calls[k].finish_args(at) {
                    self.router.calls[k].args.repairs.push(r);
                }
            }
            if self.track[k].local.is_none() {
                // (Held inline: a name of up to 24 bytes costs no allocation.)
                let Some(name) = self.router.calls[k]
                    .call_name()
                    .map(crate::event::CompactString::from)
                else {
                    continue;
                };
                self.any_named = true;
                // Every earlier started call is closed by now: end it.
                for j in ended_to..k {
                    if self.track[j].local.is_some() && !self.track[j].ended {
                        let end = self.router.calls[j].end;
                        self.end_one(j, cx, end, Vec::new());
                    }
                }
                ended_to = k;
                if let Some((mut prev, at)) = self.prev.take() {
                    prev.end_all(cx, at, Vec::new());
                }
                let id = self.router.calls[k].id.clone();
                let local = cx.start(name, id, span);
                self.track[k].local = Some(local);
            }
            if let (Some(local), false) = (self.track[k].local, self.track[k].ended) {
                let d = self.router.calls[k].args.take_delta();
                cx.args(local, d, span);
            }
        }
        while self.settled < n
            && self.router.calls[self.settled].closed
            && self.track[self.settled].finalized
            && (self.track[self.settled].ended
                || self.router.calls[self.settled].call_name().is_none())
        {
            self.settled += 1;
        }
    }

    /// Ends every started call; the last one's span ends at `end`. `extra`
    /// repairs (block markup) go to the last call.
    pub(crate) fn end_all(&mut self, cx: &mut Cx<'_>, end: u64, mut extra: Vec<Repair>) {
        if let Some((mut prev, _)) = self.prev.take() {
            // This value started no call: the earlier calls end with the block.
            prev.end_all(cx, end, extra);
            return;
        }
        if let Some(f) = self.fast_end.take() {
            // As `end_one` ends it: no repairs but the block's (sorted:
            // equal repairs are alike, so sorting a sorted list is no change),
            // complete.
            if extra.len() > 1 {
                extra.sort_unstable();
            }
            cx.end(f.local, end, f.args, extra, false);
            return;
        }
        let open = |t: &Track| t.local.is_some() && !t.ended;
        // Settled calls are ended (or never started): only the rest is looked at.
        let Some(last) = self.track[self.settled..].iter().rposition(open) else {
            return;
        };
        let last = self.settled + last;
        // Each call's span ends where it closed; the last one's at `end`,
        // with the block's repairs.
        for k in self.settled..last {
            if open(&self.track[k]) {
                let e = self.router.calls[k].end;
                self.end_one(k, cx, e, Vec::new());
            }
        }
        self.end_one(last, cx, end, extra);
    }

    fn end_one(&mut self, k: usize, cx: &mut Cx<'_>, end: u64, extra: Vec<Repair>) {
        let Some(local) = self.track[k].local else {
            return;
        };
        if !self.track[k].ended {
            self.ended_count += 1;
        }
        self.track[k].ended = true;
        let truncated_json = self.truncated_from.is_some_and(|t| k >= t);
        let ncalls = self.router.calls.len();
        let all_ended = self.ended_count == self.track.len();
        let c = &mut self.router.calls[k];
        if !self.track[k].finalized {
            self.track[k].finalized = true;
            if let Some(r) = c.finish_args(end) {
                c.args.repairs.push(r);
            }
        }
        // Deltas so far, then whatever closing the arguments needs.
        let span = Span::new(end, end);
        cx.args(local, c.args.take_delta(), span);
        let (final_json, tail) = c.args.take_final();
        #[cfg(debug_assertions)]
        if k == 0 && !self.handed.is_empty() {
            debug_assert!(
                final_json.as_bytes().starts_with(&self.handed),
                "handed out {:?}, final {final_json:?}",
                String::from_utf8_lossy(&self.handed)
            );
        }
        if !tail.is_empty() {
            cx.args(local, &tail, span);
        }
        let truncated = truncated_json || c.args.limited;
        // Repairs: the repairer's up to this call's end, the writer's, the block's.
        let all = self.rep.repairs();
        let limit = if all_ended || k + 1 == ncalls {
            u64::MAX
        } else {
            c.end
        };
        // The repairer's from the cursor on, up to the first at the limit.
        let from = self.rep_cursor;
        let to = all.get(from..).map_or(from, |rest| {
            from + rest
                .iter()
                .position(|r| r.offset >= limit)
                .unwrap_or(rest.len())
        });
        self.rep_cursor = to;
        let start = c.start;
        let mut repairs: Vec<Repair> =
            Vec::with_capacity(to - from + c.args.repairs.len() + extra.len());
        repairs.extend_from_slice(all.get(from..to).unwrap_or_default());
        repairs.extend(c.args.repairs.drain(..).map(|r| Repair {
            kind: r.kind,
            offset: if r.offset == 0 { start } else { r.offset },
        }));
        repairs.extend(extra);
        if !repairs.is_sorted() {
            repairs.sort_unstable();
        }
        cx.end(local, end, final_json, repairs, truncated);
    }
}

/// A bare JSON object or array of calls in text.
struct BareJson {
    jc: JsonCalls,
}

impl Block for BareJson {
    fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow {
        let p = self.jc.feed(input, cx);
        if !cx.committed() {
            if p.status == Status::Halted || self.jc.rejected() {
                return Flow::Reject {
                    at: p.consumed,
                    then: Resume::Text,
                };
            }
            if self.jc.confirmed(cx) {
                cx.commit();
            }
        }
        match p.status {
            Status::NeedMore => Flow::More,
            Status::Done if cx.committed() => {
                self.jc.end_all(cx, cx.abs(p.consumed), Vec::new());
                Flow::Done(p.consumed)
            }
            // Prose after a blank line: the call the model left open ends
            // there, and the prose is text.
            Status::Stop if cx.committed() => {
                self.jc.close(cx, false);
                self.jc.end_all(cx, cx.abs(p.consumed), Vec::new());
                Flow::Done(p.consumed)
            }
            Status::Limit if cx.committed() => {
                self.jc.close(cx, true);
                self.jc.end_all(cx, cx.abs(p.consumed), Vec::new());
                Flow::Done(p.consumed)
            }
            _ => Flow::Reject {
                at: p.consumed,
                then: Resume::Text,
            },
        }
    }

    fn lane_host(&mut self) -> Option<LaneHost<'_>> {
        Some(LaneHost::Calls(&mut self.jc))
    }

    fn recycle(self: Box<Self>, spares: &super::Spares) {
        spares.put_json(self.jc);
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        let named_before = self.jc.named();
        self.jc.close(cx, true);
        let named_before = named_before || self.jc.named();
        if !cx.committed() && named_before && self.jc.confirmed(cx) {
            cx.commit();
        }
        if !cx.committed() {
            return false;
        }
        let end = cx.base;
        self.jc.end_all(cx, end, Vec::new());
        true
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FenceState {
    /// Reading the info string (language) up to the newline.
    Info,
    /// Blanks before the JSON.
    Lead,
    /// A comment line (`# …`, `// …`) before the first value: skipped to
    /// its line break.
    LeadComment,
    /// Inside a JSON value.
    Json,
    /// Inside pythonic calls.
    Py,
    /// After a value: blanks, then the closing fence (or another value).
    After,
    /// A `#` or `//` comment after a value: skipped to its line break (or
    /// a backtick, which may close the fence).
    AfterComment,
}

/// A fenced code block that may hold calls.
struct Fence {
    state: FenceState,
    info: Vec<u8>,
    jc: Option<JsonCalls>,
    py: Option<PyCalls>,
    /// The pythonic reader stopped at a backtick that may close the fence.
    py_stopped: bool,
    /// A comment line came before the code: explanatory code often starts
    /// so, so a pythonic call must then name an offered tool.
    lead_comment: bool,
    cfg_strict: bool,
    cfg: Config,
    /// JSON calls may form the body.
    json_ok: bool,
    /// Pythonic calls may form the body.
    py_ok: bool,
}

/// Fences whose body is read for calls — JSON (or Python-dict) call objects,
/// or pythonic calls — by their info string (models also fill `python` and
/// `js` fences with a list of calls; the body must still be call-shaped).
/// Any other fence is text.
const JSON_FENCES: &[&[u8]] = &[
    b"",
    b"json",
    b"json5",
    b"jsonc",
    b"tool_call",
    b"tool_calls",
    b"tool_use",
    b"tool",
    b"function_call",
    b"functions",
    b"tool_code",
    b"python",
    b"py",
    b"javascript",
    b"js",
    b"typescript",
    b"ts",
    b"java",
    // YAML's flow style is JSON: a model asked for JSON that labels its
    // fence `yaml` (Gemma 3) still wrote a JSON object.
    b"yaml",
    b"yml",
];

/// The length of a name a list of call objects is assigned to or follows,
/// through the blanks before the list's `[` (`requests = [{`,
/// `functionCall[{`): `Ok(None)` when `at` does not start so, `Err(())`
/// when it ends before that is known.
fn list_prefix(at: &[u8]) -> Result<Option<usize>, ()> {
    const MAX_NAME: usize = 64;
    let n = at
        .iter()
        .take(MAX_NAME + 1)
        .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'.'))
        .unwrap_or(at.len().min(MAX_NAME + 1));
    if n == 0 || n > MAX_NAME || !at[0].is_ascii_alphabetic() && at[0] != b'_' {
        return Ok(None);
    }
    let blanks = |from: usize| {
        from + at[from..]
            .iter()
            .take(8)
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count()
    };
    let mut i = blanks(n);
    if at.get(i) == Some(&b'=') {
        i = blanks(i + 1);
    }
    match at.get(i) {
        None => return Err(()),
        Some(b'[') => {}
        Some(_) => return Ok(None),
    }
    let list = i;
    let mut k = i + 1;
    while k < at.len() && at[k].is_ascii_whitespace() && k < list + 64 {
        k += 1;
    }
    match at.get(k) {
        None => Err(()),
        Some(b'{') => Ok(Some(list)),
        Some(_) => Ok(None),
    }
}

/// Fences that announce calls: pythonic calls there need no further evidence
/// (Gemma 3's ```` ```tool_code ````); in other fences they commit like
/// pythonic calls in text.
const CALL_FENCES: &[&[u8]] = &[
    b"tool_call",
    b"tool_calls",
    b"tool_use",
    b"tool",
    b"function_call",
    b"functions",
    b"tool_code",
];

impl Fence {
    /// The closing fence (bytes `at..end` of the input) came while the JSON
    /// value was still open: the value is closed there (its repairs say
    /// what was missing) and the block ends after the fence. A value that
    /// made no call gives the fence back as text.
    fn fence_closed(&mut self, cx: &mut Cx<'_>, at: usize, end: usize) -> Flow {
        let Some(jc) = self.jc.as_mut() else {
            return Flow::Reject {
                at: end,
                then: Resume::Text,
            };
        };
        let mut sub = cx.at(at);
        let named_before = jc.named();
        jc.close(&mut sub, false);
        if !sub.committed() && (named_before || jc.named()) && jc.confirmed(&sub) {
            sub.commit();
        }
        if !sub.committed() {
            return Flow::Reject {
                at: end,
                then: Resume::Text,
            };
        }
        jc.end_all(cx, cx.abs(end), Vec::new());
        Flow::Done(end)
    }

    /// No closing fence: the block ends before byte `i`.
    fn missing_close(&mut self, cx: &mut Cx<'_>, i: usize) -> Flow {
        let end = cx.abs(i);
        let extra = vec![Repair {
            kind: RepairKind::MissingCloseTag,
            offset: end,
        }];
        if let Some(jc) = self.jc.as_mut() {
            jc.end_all(cx, end, extra);
        } else if let Some(py) = self.py.as_mut() {
            py.close(cx, end, false);
            py.end_all(cx, end, extra);
        }
        Flow::Done(i)
    }

    fn lang(&self) -> Vec<u8> {
        self.info.trim_ascii().to_ascii_lowercase()
    }
}

impl Block for Fence {
    fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow {
        let mut i = 0;
        while i < input.len() {
            match self.state {
                FenceState::Info => {
                    // Decided at a fixed byte: the newline, a backtick (an
                    // info string cannot hold one: not a fence) or the 65th
                    // info byte.
                    let rest = &input[i..];
                    let room = 64usize.saturating_sub(self.info.len());
                    let stop = memchr::memchr2(b'\n', b'`', rest);
                    match stop {
                        Some(p) if p <= room && rest[p] == b'\n' => {
                            self.info.extend_from_slice(&rest[..p]);
                            i += p + 1;
                            let lang = self.info.trim_ascii().to_ascii_lowercase();
                            if !JSON_FENCES.contains(&&lang[..]) {
                                return Flow::Reject {
                                    at: i,
                                    then: Resume::FenceText,
                                };
                            }
                            self.state = FenceState::Lead;
                        }
                        Some(p) if p <= room => {
                            return Flow::Reject {
                                at: i + p,
                                then: Resume::FenceText,
                            };
                        }
                        _ if rest.len() > room => {
                            return Flow::Reject {
                                at: i + room,
                                then: Resume::FenceText,
                            };
                        }
                        _ => {
                            self.info.extend_from_slice(rest);
                            return Flow::More;
                        }
                    }
                }
                FenceState::Lead => {
                    let b = input[i];
                    if b.is_ascii_whitespace() {
                        i += 1;
                        continue;
                    }
                    // `# Call the tool` or `// …` before the code.
                    match (b, input.get(i + 1)) {
                        (b'#', _) | (b'/', Some(b'/')) => {
                            self.lead_comment = true;
                            self.state = FenceState::LeadComment;
                            i += 1;
                            continue;
                        }
                        (b'/', None) => return Flow::Partial(i),
                        _ => {}
                    }
                    // JSON, or pythonic calls?
                    let py = if b == b'{' {
                        false
                    } else if b == b'[' {
                        let mut k = i + 1;
                        while k < input.len() && input[k].is_ascii_whitespace() && k < i + 64 {
                            k += 1;
                        }
                        match input.get(k) {
                            None => return Flow::Partial(i),
                            Some(b'{' | b']') => false,
                            Some(_) => match item_head(&input[k..]) {
                                Head::Full { .. } | Head::Pair { .. } => true,
                                Head::Partial => return Flow::Partial(i),
                                Head::No => false,
                            },
                        }
                    } else {
                        // `requests = [` or `functionCall[` before a list of
                        // call objects: the name is markup of the block.
                        match list_prefix(&input[i..]) {
                            Err(()) => return Flow::Partial(i),
                            Ok(Some(n)) if self.json_ok => {
                                i += n;
                                continue;
                            }
                            Ok(_) => {}
                        }
                        match item_head(&input[i..]) {
                            // After a comment line: only a call of an
                            // offered tool (`# Define the problem` then
                            // `creator.create(…, weights=…)` is example code).
                            Head::Full { start, end, .. } | Head::Pair { start, end, .. }
                                if self.lead_comment
                                    && !cx.known_tool(&String::from_utf8_lossy(
                                        &input[i + start..i + end],
                                    )) =>
                            {
                                return Flow::Reject {
                                    at: i,
                                    then: Resume::FenceText,
                                }
                            }
                            Head::Full { .. } | Head::Pair { .. } => true,
                            Head::Partial => return Flow::Partial(i),
                            Head::No => {
                                return Flow::Reject {
                                    at: i,
                                    then: Resume::FenceText,
                                }
                            }
                        }
                    };
                    let lang = self.lang();
                    if py && self.py_ok {
                        self.py = Some(PyCalls::new(
                            &self.cfg,
                            PyOpts {
                                strong: CALL_FENCES.contains(&&lang[..]),
                                stops: b"`",
                                multiline: true,
                                strip_call: false,
                            },
                        ));
                        self.state = FenceState::Py;
                    } else if !py && self.json_ok && JSON_FENCES.contains(&&lang[..]) {
                        self.jc = Some(
                            JsonCalls::fresh(
                                &cx.em.spares,
                                &self.cfg.limits,
                                self.cfg_strict,
                                false,
                                self.cfg.tools.clone(),
                            )
                            .judging_calls()
                            .fenced(),
                        );
                        self.state = FenceState::Json;
                    } else {
                        return Flow::Reject {
                            at: i,
                            then: Resume::FenceText,
                        };
                    }
                }
                FenceState::LeadComment => match memchr::memchr(b'\n', &input[i..]) {
                    Some(p) => {
                        i += p + 1;
                        self.state = FenceState::Lead;
                    }
                    None => return Flow::More,
                },
                FenceState::Py => {
                    let Some(py) = self.py.as_mut() else {
                        return Flow::Reject {
                            at: i,
                            then: Resume::FenceText,
                        };
                    };
                    let mut sub = cx.at(i);
                    let p = py.feed(&input[i..], &mut sub);
                    i += p.consumed;
                    if !sub.committed() && py.evidence() {
                        sub.commit();
                    }
                    match p.status {
                        PyStatus::NeedMore => return Flow::More,
                        PyStatus::Partial => return Flow::Partial(i),
                        PyStatus::Done | PyStatus::Stop if sub.committed() => {
                            self.py_stopped = p.status == PyStatus::Stop;
                            self.state = FenceState::After;
                        }
                        _ => {
                            return Flow::Reject {
                                at: i,
                                then: Resume::FenceText,
                            }
                        }
                    }
                }
                FenceState::Json => {
                    let Some(jc) = self.jc.as_mut() else {
                        return Flow::Reject {
                            at: i,
                            then: Resume::FenceText,
                        };
                    };
                    let mut sub = cx.at(i);
                    let p = jc.feed(&input[i..], &mut sub);
                    i += p.consumed;
                    if p.status == Status::Stop {
                        // A backtick where JSON syntax belongs, or a line
                        // break in a string: a closing fence there ends the
                        // value, whatever it still had open.
                        let fence = if input[i] == b'`' {
                            match_lit(b"```", &input[i..])
                        } else {
                            closing_fence(&input[i..])
                        };
                        match fence {
                            Match::Full(n) => return self.fence_closed(cx, i, i + n),
                            Match::Partial => return Flow::Partial(i),
                            Match::No => {
                                jc.accept_stop();
                                continue;
                            }
                        }
                    }
                    if !sub.committed() {
                        if p.status == Status::Halted || jc.rejected() {
                            return Flow::Reject {
                                at: i,
                                then: Resume::FenceText,
                            };
                        }
                        if jc.confirmed(&sub) {
                            sub.commit();
                        }
                    }
                    match p.status {
                        Status::NeedMore => return Flow::More,
                        Status::Done if sub.committed() => self.state = FenceState::After,
                        Status::Limit if sub.committed() => {
                            jc.close(&mut sub, true);
                            self.state = FenceState::After;
                        }
                        _ => {
                            return Flow::Reject {
                                at: i,
                                then: Resume::FenceText,
                            }
                        }
                    }
                }
                FenceState::AfterComment => {
                    match input[i..].iter().position(|&b| b == b'\n' || b == b'`') {
                        Some(p) => {
                            i += p;
                            self.state = FenceState::After;
                        }
                        None => return Flow::More,
                    }
                }
                FenceState::After => {
                    let b = input[i];
                    if b == b'`' {
                        match match_lit(b"```", &input[i..]) {
                            Match::Full(n) => {
                                i += n;
                                if let Some(jc) = self.jc.as_mut() {
                                    jc.end_all(cx, cx.abs(i), Vec::new());
                                } else if let Some(py) = self.py.as_mut() {
                                    let end = cx.abs(i);
                                    py.close(cx, end, false);
                                    py.end_all(cx, end, Vec::new());
                                }
                                return Flow::Done(i);
                            }
                            Match::Partial => return Flow::Partial(i),
                            Match::No if self.py_stopped => {
                                // A backtick inside the calls, not the fence.
                                self.py_stopped = false;
                                if let Some(py) = self.py.as_mut() {
                                    py.resume_stop();
                                }
                                self.state = FenceState::Py;
                            }
                            Match::No => return self.missing_close(cx, i),
                        }
                    } else if b.is_ascii_whitespace() && !self.py_stopped {
                        i += 1;
                    } else if !self.py_stopped && (b == b'#' || b == b'/' && self.jc.is_some()) {
                        // `[f(a=1)]  # done`, `{…} // the call`: a comment
                        // after the code, as before it.
                        if b == b'/' {
                            match match_lit(b"//", &input[i..]) {
                                Match::Full(_) => {}
                                Match::Partial => return Flow::Partial(i),
                                Match::No => return self.missing_close(cx, i),
                            }
                        }
                        self.state = FenceState::AfterComment;
                        i += 1;
                    } else if self.py_stopped {
                        self.py_stopped = false;
                        self.state = FenceState::Py;
                    } else if self.jc.is_some() && (b == b'{' || b == b'[') {
                        // Another value in the same fence.
                        let next = JsonCalls::new(&self.cfg, false, false)
                            .judging_calls()
                            .fenced();
                        self.jc = Some(match self.jc.take() {
                            Some(prev) => next.after(prev, cx.abs(i)),
                            None => next,
                        });
                        self.state = FenceState::Json;
                    } else {
                        return self.missing_close(cx, i);
                    }
                }
            }
        }
        Flow::More
    }

    fn lane_host(&mut self) -> Option<LaneHost<'_>> {
        match self.state {
            FenceState::Json => self.jc.as_mut().map(LaneHost::Calls),
            _ => None,
        }
    }

    fn recycle(self: Box<Self>, spares: &super::Spares) {
        if let Some(jc) = self.jc {
            spares.put_json(jc);
        }
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        if let Some(py) = self.py.as_mut() {
            let end = cx.base;
            py.close(cx, end, true);
            if !cx.committed() && py.evidence() {
                cx.commit();
            }
            if !cx.committed() {
                return false;
            }
            let end = cx.base;
            py.end_all(
                cx,
                end,
                vec![Repair {
                    kind: RepairKind::MissingCloseTag,
                    offset: end,
                }],
            );
            return true;
        }
        let Some(jc) = self.jc.as_mut() else {
            return false;
        };
        let named_before = jc.named();
        jc.close(cx, true);
        let named_before = named_before || jc.named();
        if !cx.committed() && named_before && jc.confirmed(cx) {
            cx.commit();
        }
        if !cx.committed() {
            return false;
        }
        let end = cx.base;
        jc.end_all(
            cx,
            end,
            vec![Repair {
                kind: RepairKind::MissingCloseTag,
                offset: end,
            }],
        );
        true
    }
}
