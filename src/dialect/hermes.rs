//! Hermes / Qwen2.5 / Qwen3 tool-call tags.
//!
//! ```text
//! Let me check.
//! <tool_call>
//! {"name": "get_weather", "arguments": {"city": "Tokyo"}}
//! </tool_call>
//! ```
//!
//! The same reader serves the tag variants `<tool_use>`, `<function_call>`
//! (granite-20b-functioncalling repeats it without closing tags, which is
//! not a repair there), `<tools>` and `<tool_calls>` (Jamba, Hunyuan,
//! MiniMax-M1). `<function_calls>` may hold JSON or Olmo 3's pythonic calls
//! and is read by the Olmo 3 reader, which dispatches on the content. Inside the tags: one
//! JSON object, an array of objects, or several objects one after another;
//! any envelope shape ([`crate::envelope`]). A missing closing tag is
//! repaired ([`RepairKind::MissingCloseTag`]); a closing tag that arrives
//! inside an unfinished object closes it. A block that names no tool (prose
//! after the tag, an empty block) is given back as text with a diagnostic.
//!
//! Small models stutter: the opening tag written again before any content
//! (`<tool_call>\n<tool_call>\n{…}`) opens the block once
//! ([`RepairKind::RepeatedOpenTag`]), both tags the call's markup; a closing
//! tag that follows a call with only blanks between (the closing tag
//! written twice, or a call written without its opening tag) is markup too
//! ([`Event::Markup`](crate::Event::Markup)). Anywhere else a closing tag
//! is text.
//!
//! # The XML dialects that share the tag
//!
//! The first thing inside the tag decides how the block is read:
//!
//! | content starts with | read as | dialect |
//! |---|---|---|
//! | `{` or `[` | JSON calls (this module) | [`Dialect::Hermes`] |
//! | `<function=` | [`super::qwen3_coder`] | [`Dialect::Qwen3Coder`] |
//! | `<name>` | [`super::xml_emulation`] | [`Dialect::XmlEmulation`] |
//! | `<invoke` | MiniMax-style invokes ([`super::minimax`]) | [`Dialect::MiniMaxM2`] |
//! | an identifier (in `<tool_call>` only) | [`super::glm`] | [`Dialect::Glm`] |
//!
//! An XML reading is only tried when its dialect is enabled (auto mode
//! enables all); JSON is always read.

use std::borrow::Cow;

use super::json::JsonCalls;
use super::xmlcalls::{Container, Start, Syntax, XmlCalls};
use super::{
    enabled, glm, minimax, qwen3_coder, unicode_blank, unicode_letter, xml_emulation, Action,
    Blank, Block, BlockArgs, Cx, Dialect, Flow, LaneHost, Resume, Trigger,
};
use crate::event::{DiagnosticKind, Repair, RepairKind, Span};
use crate::json::Status;
use crate::scan::{match_lit, Match, Pattern};

macro_rules! tags {
    ($(($open:literal, $close:literal)),*; markup: $($markup:literal),*) => {
        /// The tags a tag block opens with, and their closing tags.
        const TAGS: &[(&[u8], &[u8])] = &[$(($open, $close)),*];

        pub(crate) const TRIGGERS: &[Trigger] = &[$(Trigger {
            pattern: Pattern::Lit($open),
            action: Action::Block { open: open_tag, consume: true },
        }),*, $(Trigger {
            pattern: Pattern::Lit($close),
            action: Action::Closer,
        }),*, $(Trigger {
            pattern: Pattern::Lit($markup),
            action: Action::Markup,
        }),*];
    };
}

tags!(
    (b"<tool_call>", b"</tool_call>"),
    (b"<tool_use>", b"</tool_use>"),
    (b"<function_call>", b"</function_call>"),
    (b"<function_calls>", b"</function_calls>"),
    (b"<tools>", b"</tools>"),
    (b"<tool_calls>", b"</tool_calls>");
    // The ChatML turn tokens of the models that write these tags (Hermes,
    // Qwen, SmolLM2): a model that runs on past its turn writes them, and
    // Hermes 2 Theta writes `<|im_start|>` where `<tool_call>` belongs.
    markup: b"<|im_end|>", b"<|im_start|>", b"<|endoftext|>"
);

/// Opens the block of a `<tool_call>`-like tag (shared by the dialects that
/// use the tag).
pub(crate) fn open_tag(a: &BlockArgs<'_>) -> Box<dyn Block> {
    if a.trigger == b"<function_calls>" {
        // JSON here, pythonic calls in Olmo 3, `<invoke>` XML in the Claude
        // style: dispatched on the content (the wrapper hands `<…` to
        // [`tag_block`]).
        return super::olmo3::open_function_calls(a);
    }
    tag_block(a)
}

/// The tag block itself, without the `<function_calls>` dispatch.
pub(crate) fn tag_block(a: &BlockArgs<'_>) -> Box<dyn Block> {
    // `<tool_call>` closes with `</tool_call>` (a known tag: no allocation).
    let (open, close): (Cow<'static, [u8]>, Cow<'static, [u8]>) =
        match TAGS.iter().find(|(o, _)| *o == a.trigger) {
            Some(&(o, c)) => (Cow::Borrowed(o), Cow::Borrowed(c)),
            None => {
                let mut close = Vec::with_capacity(a.trigger.len() + 1);
                close.extend_from_slice(b"</");
                close.extend_from_slice(&a.trigger[1..]);
                (Cow::Owned(a.trigger.to_vec()), Cow::Owned(close))
            }
        };
    let cfg = a.cfg;
    let xml_use = XmlUse {
        qwen: enabled(cfg, Dialect::Qwen3Coder),
        plain: enabled(cfg, Dialect::XmlEmulation),
        invoke: enabled(cfg, Dialect::MiniMaxM2),
        glm: enabled(cfg, Dialect::Glm) && a.trigger == b"<tool_call>",
    };
    // granite-20b-functioncalling repeats `<function_call> {…}` without closing tags.
    let close_optional = a.trigger == b"<function_call>";
    // The box of the stream's last tag block, set up again in place: a
    // reply of many short calls opens one block per call.
    if let Some(mut b) = a.spares.take_tag() {
        let t = &mut *b;
        t.open = open;
        t.close = close;
        t.state = State::Lead;
        t.jc_live = false;
        t.xml = None;
        t.repairs.clear();
        t.limits.clone_from(&cfg.limits);
        if !same_tools(&t.tools, &cfg.tools) {
            t.tools.clone_from(&cfg.tools);
        }
        t.cfg = xml_use;
        t.close_optional = close_optional;
        return b;
    }
    Box::new(TagBlock {
        open,
        close,
        state: State::Lead,
        jc_slot: None,
        jc_live: false,
        xml: None,
        repairs: Vec::new(),
        limits: cfg.limits.clone(),
        tools: cfg.tools.clone(),
        fast_calls: !cfg.repairer_only,
        cfg: xml_use,
        close_optional,
    })
}

/// The same tool list (or none in both).
fn same_tools(
    a: &Option<std::sync::Arc<crate::config::Tools>>,
    b: &Option<std::sync::Arc<crate::config::Tools>>,
) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// Which XML readings of the tag's content are enabled.
#[derive(Clone, Copy, Debug)]
struct XmlUse {
    qwen: bool,
    plain: bool,
    invoke: bool,
    glm: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Blanks before the content.
    Lead,
    /// Inside a JSON value.
    Json,
    /// After a value (or where the repairer stopped at a `<`).
    After,
    /// The content is an XML dialect's, read by `xml`.
    Xml,
}

/// A tag-delimited block of JSON calls.
pub(crate) struct TagBlock {
    /// The opening tag (the trigger).
    open: Cow<'static, [u8]>,
    close: Cow<'static, [u8]>,
    state: State,
    /// The block's JSON reader. Kept with the box when the block ends
    /// (see [`Block::recycle`]), so the next tag block renews it in place;
    /// it is this block's only once `jc_live`.
    jc_slot: Option<JsonCalls>,
    /// `jc_slot` reads this block's JSON (else it is an earlier block's,
    /// kept for its buffers, or empty).
    jc_live: bool,
    /// The XML engine, once the block turns out to hold XML (boxed: most
    /// blocks hold JSON, and the block stays small enough to allocate and
    /// move cheaply).
    xml: Option<Box<XmlCalls>>,
    repairs: Vec<Repair>,
    limits: crate::config::Limits,
    /// The offered tools (for the `{"tool": {…}}` envelope).
    tools: Option<std::sync::Arc<crate::config::Tools>>,
    /// Values may be read by the fast path for well-formed call objects
    /// (not [`crate::Config::repairer_only`]).
    fast_calls: bool,
    cfg: XmlUse,
    /// A missing closing tag is the dialect's normal form, not a repair.
    close_optional: bool,
}

// Every tag block is boxed at its opening tag: keep it within an allocator's
// small size class (mimalloc: 1 KiB), so that opening one stays cheap.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<TagBlock>() <= 1024);

impl TagBlock {
    /// This block's JSON reader, if it has one.
    #[inline]
    fn jc(&self) -> Option<&JsonCalls> {
        self.jc_slot.as_ref().filter(|_| self.jc_live)
    }

    /// This block's JSON reader, if it has one.
    #[inline]
    fn jc_mut(&mut self) -> Option<&mut JsonCalls> {
        self.jc_slot.as_mut().filter(|_| self.jc_live)
    }

    /// A JSON value starts at `at`: the block's reader for it (renewed in
    /// place when it is an earlier block's; a new one after an earlier
    /// value of this block, whose calls it ends when it starts one).
    fn next_value(&mut self, cx: &mut Cx<'_>, at: u64) {
        let spares = &cx.em.spares;
        match self.jc_slot.as_mut() {
            Some(jc) if !self.jc_live => {
                // Renewed at its first feed, unless the fast path takes
                // the value (the tag block's limits and tools are the
                // parser's, which the feed's context carries).
                jc.renew_later(false, true, self.fast_calls);
            }
            Some(_) => {
                let next = JsonCalls::fresh(spares, &self.limits, false, true, self.tools.clone());
                let prev = self.jc_slot.take().expect("checked above");
                self.jc_slot = Some(next.after(prev, at));
            }
            None => {
                let mut jc =
                    JsonCalls::fresh(spares, &self.limits, false, true, self.tools.clone());
                jc.fast_calls(self.fast_calls);
                self.jc_slot = Some(jc);
            }
        }
        self.jc_live = true;
    }

    /// Hands the block to the XML engine from byte `i` of `input` on.
    // Out of line: keeps the per-chunk path's frame small.
    #[inline(never)]
    fn hand_to_xml(
        &mut self,
        syn: &'static Syntax,
        start: Start,
        commit_on_name: bool,
        input: &[u8],
        i: usize,
        cx: &mut Cx<'_>,
    ) -> Flow {
        let container = Container::tag(&self.open);
        let xml = self.xml.insert(Box::new(
            XmlCalls::new(syn, Some(container), start, commit_on_name, false, cx.cfg)
                .with_lead_repairs(std::mem::take(&mut self.repairs)),
        ));
        self.state = State::Xml;
        let mut sub = cx.at(i);
        match xml.feed(&input[i..], &mut sub) {
            Flow::More => Flow::More,
            Flow::Partial(n) => Flow::Partial(i + n),
            Flow::Done(n) => Flow::Done(i + n),
            Flow::Reject { at, then } => Flow::Reject { at: i + at, then },
        }
    }

    /// At a `<` in the lead: an XML dialect's first tag?
    // Out of line: keeps the per-chunk path's frame small.
    #[inline(never)]
    fn xml_lead(&mut self, input: &[u8], i: usize, cx: &mut Cx<'_>) -> Option<Flow> {
        let w = &input[i..];
        let mut partial = false;
        let candidates: [(bool, &[u8], &'static Syntax, Start); 3] = [
            (
                self.cfg.qwen,
                b"<function=",
                &qwen3_coder::SYNTAX,
                Start::Lead,
            ),
            (
                self.cfg.plain,
                b"<name>",
                &xml_emulation::SYNTAX,
                Start::PlainLead,
            ),
            (self.cfg.invoke, b"<invoke", &minimax::SYNTAX, Start::Lead),
        ];
        for (on, lit, syn, start) in candidates {
            if !on {
                continue;
            }
            let m = match match_lit(lit, w) {
                // `<invoke` must end its name there.
                Match::Full(n) if lit == b"<invoke" => match w.get(n) {
                    None => Match::Partial,
                    Some(c) if c.is_ascii_whitespace() || *c == b'>' => Match::Full(n),
                    Some(_) => Match::No,
                },
                m => m,
            };
            match m {
                Match::Full(_) => return Some(self.hand_to_xml(syn, start, true, input, i, cx)),
                Match::Partial => partial = true,
                Match::No => {}
            }
        }
        partial.then_some(Flow::Partial(i))
    }

    fn end_calls(&mut self, cx: &mut Cx<'_>, end: u64) {
        let extra = std::mem::take(&mut self.repairs);
        if let Some(jc) = self.jc_mut() {
            if !jc.is_closed() {
                jc.close(cx, false);
            }
            jc.end_all(cx, end, extra);
        }
    }

    /// The block ended at `at` (the closing tag included, or missing).
    // Out of line: keeps the per-chunk path's frame small.
    #[inline(never)]
    fn done(&mut self, cx: &mut Cx<'_>, at: usize, missing_close: bool) -> Flow {
        if let Some(jc) = self.jc_mut() {
            if !jc.is_closed() {
                jc.close(cx, false);
            }
            if !cx.committed() && jc.named() {
                cx.commit();
            }
        }
        if !cx.committed() {
            let span = Span::new(cx.em.span_cursor(), cx.abs(at));
            cx.diag(
                DiagnosticKind::UnparseableBlock,
                format!(
                    "`{}` block holds no tool call; kept as text",
                    String::from_utf8_lossy(&self.close[2..self.close.len() - 1])
                ),
                span,
            );
            return Flow::Reject {
                at,
                then: Resume::Text,
            };
        }
        if missing_close && !self.close_optional {
            self.repairs.push(Repair {
                kind: RepairKind::MissingCloseTag,
                offset: cx.abs(at),
            });
        }
        self.end_calls(cx, cx.abs(at));
        Flow::Done(at)
    }
}

impl Block for TagBlock {
    fn plain_chunk(&mut self, input: &[u8], cx: &mut Cx<'_>) -> bool {
        self.xml
            .as_mut()
            .is_some_and(|xml| xml.plain_chunk(input, cx))
    }

    fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow {
        if let Some(xml) = self.xml.as_mut() {
            return xml.feed(input, cx);
        }
        let mut i = 0;
        while i < input.len() {
            match self.state {
                State::Xml => {
                    return Flow::Reject {
                        at: i,
                        then: Resume::Text,
                    }
                }
                State::Lead | State::After => {
                    let b = input[i];
                    if b >= 0x80 {
                        // Blanks that are not ASCII are blanks here too
                        // (NBSP, U+3000, a BOM or zero-width space).
                        match unicode_blank(&input[i..]) {
                            Blank::Yes(n) => {
                                i += n;
                                continue;
                            }
                            Blank::Partial => return Flow::Partial(i),
                            Blank::No => {}
                        }
                    }
                    if self.state == State::Lead {
                        if b == b'<' {
                            if let Some(flow) = self.xml_lead(input, i, cx) {
                                return flow;
                            }
                        } else if self.cfg.glm && b >= 0x80 {
                            // A name may start with a letter that is not
                            // ASCII, never with another character or a
                            // stray byte.
                            match unicode_letter(&input[i..]) {
                                None => return Flow::Partial(i),
                                Some(true) => {
                                    return self.hand_to_xml(
                                        &glm::SYNTAX,
                                        Start::GlmName,
                                        false,
                                        input,
                                        i,
                                        cx,
                                    )
                                }
                                Some(false) => {}
                            }
                        } else if self.cfg.glm && glm_name_start(b) {
                            return self.hand_to_xml(
                                &glm::SYNTAX,
                                Start::GlmName,
                                false,
                                input,
                                i,
                                cx,
                            );
                        }
                    }
                    match b {
                        b' ' | b'\t' | b'\n' | b'\r' => i += 1,
                        b'<' => match match_lit(&self.close, &input[i..]) {
                            Match::Full(n) => return self.done(cx, i + n, false),
                            Match::Partial => return Flow::Partial(i),
                            Match::No => {
                                let rest = &input[i..];
                                let json_open = self.jc().is_some_and(|j| !j.is_closed());
                                let reopen = match_lit(&self.open, rest);
                                if rest.len() < 2 || reopen == Match::Partial {
                                    return Flow::Partial(i);
                                }
                                if let (State::Lead, Match::Full(n)) = (self.state, reopen) {
                                    // The opening tag again before any content
                                    // (`<tool_call>\n<tool_call>\n{…}`, a stutter
                                    // of small Hermes models): one opening, whose
                                    // call the block still is.
                                    self.repairs.push(Repair {
                                        kind: RepairKind::RepeatedOpenTag,
                                        offset: cx.abs(i),
                                    });
                                    i += n;
                                    continue;
                                }
                                if json_open && rest[1] != b'/' && reopen == Match::No {
                                    // `<placeholder>` inside unfinished JSON: a value, not markup.
                                    if let Some(jc) = self.jc_mut() {
                                        jc.accept_lt();
                                    }
                                    self.state = State::Json;
                                    continue;
                                }
                                // A closing tag of something else, or our opening tag
                                // again: the block ends before it.
                                return self.done(cx, i, true);
                            }
                        },
                        b'{' | b'[' => {
                            // Another value in the same block (if any).
                            self.next_value(cx, cx.abs(i));
                            self.state = State::Json;
                        }
                        b'}' | b']' | b',' if self.state == State::After => {
                            self.repairs.push(Repair {
                                kind: RepairKind::TrailingGarbage,
                                offset: cx.abs(i),
                            });
                            i += 1;
                        }
                        _ => {
                            if self.state == State::Lead {
                                // Prose after the tag: not a call.
                                return Flow::Reject {
                                    at: i,
                                    then: Resume::Text,
                                };
                            }
                            return self.done(cx, i, true);
                        }
                    }
                }
                State::Json => {
                    let Some(jc) = self.jc_mut() else {
                        return Flow::Reject {
                            at: i,
                            then: Resume::Text,
                        };
                    };
                    // A chunk that continues the value (the streaming case)
                    // starts at 0: the block's context serves as it is.
                    let (n, status) = if i == 0 {
                        feed_json(jc, input, cx)
                    } else {
                        feed_json(jc, &input[i..], &mut cx.at(i))
                    };
                    i += n;
                    match status {
                        Status::NeedMore => return Flow::More,
                        Status::Done | Status::Stop | Status::Halted => self.state = State::After,
                        Status::Limit => {
                            self.state = State::After;
                            if cx.committed() {
                                return self.done(cx, i, true);
                            }
                        }
                    }
                }
            }
        }
        Flow::More
    }

    fn lane_host(&mut self) -> Option<LaneHost<'_>> {
        match (&self.xml, self.state) {
            (None, State::Json) => self.jc_mut().map(LaneHost::Calls),
            _ => None,
        }
    }

    fn recycle(mut self: Box<Self>, spares: &super::Spares) {
        // The JSON reader stays in the box, for the next tag block to renew.
        self.jc_live = false;
        // An XML engine is not kept (few blocks hold one); a repair list
        // that grew long is not pinned.
        self.xml = None;
        if self.repairs.capacity() > 64 {
            self.repairs = Vec::new();
        }
        spares.put_tag(self);
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        if let Some(xml) = self.xml.as_mut() {
            return xml.finish(cx);
        }
        let Some(jc) = self.jc_mut() else {
            return false;
        };
        let named_before = jc.named();
        jc.close(cx, true);
        if !cx.committed() && (named_before || jc.named()) {
            cx.commit();
        }
        if !cx.committed() {
            return false;
        }
        if !self.close_optional {
            self.repairs.push(Repair {
                kind: RepairKind::MissingCloseTag,
                offset: cx.base,
            });
        }
        let end = cx.base;
        self.end_calls(cx, end);
        true
    }
}

/// Feeds the block's JSON reader; it commits the block once a call is named,
/// and closes it at a limit. Returns the bytes consumed and the status.
fn feed_json(jc: &mut JsonCalls, input: &[u8], cx: &mut Cx<'_>) -> (usize, Status) {
    let p = jc.feed(input, cx);
    if !cx.committed() && jc.named() {
        cx.commit();
    }
    if p.status == Status::Limit {
        jc.close(cx, true);
    }
    (p.consumed, p.status)
}

/// ASCII bytes a GLM tool name can start with (a letter that is not
/// ASCII may start one too: see [`unicode_letter`]).
fn glm_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}
