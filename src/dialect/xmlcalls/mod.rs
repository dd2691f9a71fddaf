//! The streaming engine shared by the XML-family dialects.
//!
//! Every XML dialect writes a call the same way, with different tags: an
//! optional container (`<tool_call>`, `<minimax:tool_call>`,
//! `<｜DSML｜function_calls>`, …), one or more *invokes* naming the tool
//! (`<function=NAME>`, `<invoke name="NAME">`, GLM's bare `NAME`, the plain
//! emulation's `<name>NAME</name>`, morph-xml's `<NAME>`), and *parameters*
//! whose values are raw text (`<parameter=k>v</parameter>`,
//! `<arg_key>k</arg_key><arg_value>v</arg_value>`, `<k>v</k>`). A [`Syntax`]
//! names a dialect's tags; [`XmlCalls`] reads any of them and writes the
//! arguments JSON `{"k": v, …}` as the values arrive ([`value`] has the
//! typing and whitespace rules).
//!
//! # States
//!
//! | state          | reads                              | leaves on |
//! |----------------|------------------------------------|-----------|
//! | `Lead`         | blanks, wrapper tags (Step-3)      | an invoke → `Invoke` |
//! | `FnName`       | the name after a bare `<function=` | `>` → `Invoke` |
//! | `GlmName`      | GLM's bare tool name               | a blank, `<` or `{` → `Invoke` |
//! | `PlainLead` / `PlainName` / `PlainAfterName` | `<name>NAME</name>` | `<arguments>` → `Invoke` |
//! | `Invoke`       | blanks between parameters          | a parameter → `Value`; the invoke's close → `AfterInvoke` or done |
//! | `GlmKey` / `GlmAfterKey` | `<arg_key>K</arg_key>`   | `<arg_value>` → `Value` |
//! | `Value`        | a value's content                  | its closing tag → `Invoke` |
//! | `Body`         | a JSON object instead of parameters (`<function=f>{…}</function>`) | the object's end → `Invoke` |
//! | `AfterInvoke`  | blanks between invokes             | another invoke, or the container's close |
//!
//! # Deciding what a tag in a value is
//!
//! Values are raw text, so a `<` in a value may be content (`a < b`, `<b>`,
//! a file that holds `</parameter>`) or markup. Only a `<` that can still
//! become one of the dialect's own tags is held back (the parser re-feeds
//! the held window with the next chunk: [`Flow::Partial`]); any other `<` is
//! content at once. The rules, each decided at a fixed byte:
//!
//! * **The value's closing tag** (`</parameter>`, `</arg_value>`, `</k>`)
//!   closes it only if what follows it, after blanks, is markup that can
//!   come next: another parameter (when the schema is known: one it
//!   declares, or — after a value it types as a number, a boolean or JSON,
//!   which cannot hold tags — one the call has not had), the invoke's or
//!   the container's closing tag, the next invoke, or the end of the input.
//!   Followed by anything else (`"`, text, another tag) it is content.
//! * **A missing closing tag** is repaired ([`RepairKind::MissingCloseTag`])
//!   when the value is followed by: a new parameter the schema declares and
//!   the call has not had yet (without a schema: one the call has not had,
//!   starting a line; GLM's `<arg_key>` always); the invoke's closing tag
//!   followed by the container's close, the next invoke or the end (in a
//!   bare Qwen3-Coder call, which has no container, `</function>` whatever
//!   follows it: the call ends there and the text after it is text); the
//!   container's closing tag followed by the next call or the end.
//! * **Nested calls**: a `<tool_call>` / invoke opening tag inside a value
//!   opens a nested example; tags up to its matching close are content.
//! * **CDATA**: `<![CDATA[…]]>` is content (its markers too, unless
//!   [`crate::Config::decode_entities`] is on); no tag inside it is markup.
//! * The blank run looked at after a closing tag is bounded by
//!   [`crate::Limits::max_tag_bytes`]; past that the tag closes.
//!
//! # Commits, rejects, truncation
//!
//! A block whose opening markup is unambiguous (`<tool_call>` + an invoke,
//! `<minimax:tool_call>`, `<seed:tool_call>`, DSML, Step-3) commits when the
//! tool name is known. A bare `<function=NAME>`, GLM's `NAME` and morph-xml's
//! `<NAME>` commit only when a parameter, the invoke's close or a JSON body
//! follows (at the end of the input: when the name is a known tool, or GLM's
//! name was followed by a newline). Before that, anything unexpected
//! gives the block back as text ([`Flow::Reject`], with a diagnostic for
//! container dialects). After it, unexpected text or a foreign tag ends the
//! block there (the container's close is recorded as missing) and parsing
//! resumes on it. At the end of the input every open value, parameter and
//! invoke is closed; a call whose invoke was not closed is `truncated`.
//! Arguments are cut when the call's input reaches
//! [`crate::Limits::max_args_bytes`]: at that byte, or inside a value at the
//! end of the character that byte belongs to (never inside a UTF-8
//! character), so the result depends on the input alone, not on chunking.

pub(crate) mod value;

use std::collections::HashSet;
use std::sync::Arc;

use super::{Blank, Cx, Flow, Resume};
use crate::config::{Limits, Tools};
use crate::dialect::args::escape_content_text;
use crate::event::{DiagnosticKind, Repair, RepairKind, Span};
use crate::json::{Repairer, Status};
use crate::scan::{match_lit, Match};
use crate::xml::{
    is_name_start, match_tag_start, Tag, TagScan, TagScanner, CDATA_CLOSE, CDATA_OPEN,
};
use value::{escape_bytes, json_string, Ty, Value, ValueOut, Ws};

/// How a dialect names tools and parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// `<function=NAME>` / `<parameter=K>` (Qwen3-Coder, Seed-OSS).
    Qwen,
    /// `<INVOKE name="NAME">` / `<PARAM name="K">` (MiniMax, DSML, Step-3).
    Invoke,
    /// `NAME` then `<arg_key>K</arg_key><arg_value>V</arg_value>` (GLM).
    Glm,
    /// `<name>NAME</name><arguments><K>V</K></arguments>` (XML emulation).
    Plain,
    /// `<NAME><K>V</K></NAME>` (AI SDK morph-xml).
    Morph,
}

/// A dialect's tags.
#[derive(Debug)]
pub(crate) struct Syntax {
    /// Shown in diagnostics.
    pub label: &'static str,
    pub family: Family,
    /// The invoke tag's name (`function`, `invoke`, `｜DSML｜invoke`).
    pub invoke: &'static [u8],
    /// The parameter tag's name.
    pub param: &'static [u8],
    pub ws: Ws,
    /// Tags skipped between invokes (Step-3's per-call wrappers).
    pub skip_tags: &'static [&'static [u8]],
    /// Words skipped between invokes (Step-3's `function`).
    pub skip_words: &'static [&'static [u8]],
    /// Opening tags that start a new call in this family (nesting inside
    /// values, and what may follow a closing tag).
    pub openers: &'static [&'static [u8]],
    /// The parameter tag carries DSML's `string="true|false"`; the tags'
    /// names are DSML's too (after the `｜DSML｜` marker, see
    /// [`super::dsml::tag_name`]).
    pub string_attr: bool,
}

/// A container around the invokes.
#[derive(Clone, Debug)]
pub(crate) struct Container {
    /// Name of the opening tag (`tool_call`).
    pub open: Vec<u8>,
    /// Name of the closing tag, and whether it is written `</name>` (else `<name>`).
    pub close: Vec<u8>,
    pub close_slash: bool,
}

impl Container {
    /// The container of a tag opened by `<NAME>` and closed by `</NAME>`.
    pub(crate) fn tag(open_trigger: &[u8]) -> Container {
        let name = open_trigger
            .strip_prefix(b"<")
            .and_then(|n| n.strip_suffix(b">"))
            .unwrap_or(open_trigger)
            .to_vec();
        Container {
            open: name.clone(),
            close: name,
            close_slash: true,
        }
    }
}

/// Where the engine starts.
#[derive(Clone, Debug)]
pub(crate) enum Start {
    /// Inside a container, before the first invoke.
    Lead,
    /// After a bare `<function=` (consumed): the name follows.
    FnName,
    /// GLM: the tool name follows.
    GlmName,
    /// XML emulation: `<name>` follows.
    PlainLead,
    /// morph-xml: the invoke `<NAME>` was consumed.
    Morph(Vec<u8>),
    /// Not a call at all (morph-xml trigger for an unknown tool).
    Reject,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Lead,
    FnName,
    GlmName,
    PlainLead,
    PlainName,
    PlainAfterName,
    Invoke,
    GlmKey,
    GlmAfterKey,
    Value,
    Body,
    AfterInvoke,
    Reject,
}

/// What a tag is, in the dialect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    ContainerOpen,
    ContainerClose,
    InvokeOpen,
    InvokeClose,
    ParamOpen,
    ParamClose,
    /// GLM `<arg_key>`.
    KeyOpen,
    /// GLM `<arg_value>`.
    ValueOpen,
    /// XML emulation `<name>`.
    NameOpen,
    /// XML emulation `<arguments>`.
    ArgsOpen,
    Skip,
    Other,
}

/// Argument wrapper tags of the XML emulation.
const ARGS_TAGS: &[&[u8]] = &[b"arguments", b"parameters", b"args", b"input", b"params"];

/// Longest GLM / emulation tool name.
const MAX_NAME: usize = 256;

/// Progress on the `<` at the start of the current window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Nothing looked at yet.
    Fresh,
    /// Scanning a tag (with `scan`).
    Tag,
    /// Value state: a closing tag of kind `cand`, `len` bytes long, was
    /// found; blanks up to `ws_end` were skipped; the follower is scanned
    /// with `follow`.
    Follow {
        cand: Kind,
        len: usize,
        ws_end: usize,
    },
    /// Value state, inside CDATA: the window holds `n` bytes of `]` that may
    /// start `]]>`.
    CdataEnd(usize),
}

/// Most parameter names [`Seen`] searches in a list before it moves them
/// into a hash set.
const SEEN_LIST: usize = 16;

/// The parameter names of a call: a short list searched in order (a call
/// has a few parameters: no hash set to allocate and no SipHash per name,
/// some 600 instructions a call at the 100 B matrix cells), a hash set
/// once there are more than [`SEEN_LIST`] (a call may have many: the work
/// per name stays bounded).
#[derive(Debug, Default)]
struct Seen {
    list: Vec<String>,
    set: HashSet<String>,
}

impl Seen {
    fn contains(&self, name: &str) -> bool {
        if self.set.is_empty() {
            self.list.iter().any(|n| n == name)
        } else {
            self.set.contains(name)
        }
    }

    /// Adds `name` (not [`Seen::contains`]'d).
    fn insert(&mut self, name: String) {
        if self.set.is_empty() {
            if self.list.len() < SEEN_LIST {
                self.list.push(name);
                return;
            }
            self.set.extend(self.list.drain(..));
        }
        self.set.insert(name);
    }

    fn is_empty(&self) -> bool {
        self.list.is_empty() && self.set.is_empty()
    }
}

/// A string run at least this long is escaped straight into
/// [`ArgsText`]'s checked text rather than its byte buffer.
const HEAD_WRITE_MIN: usize = 256;

/// Once this many bytes of arguments wait in [`ArgsText`]'s byte buffer
/// when they are handed out, they move to its checked text.
const HEAD_MOVE_MIN: usize = 4 << 10;

/// A call's arguments JSON as it is written: `head`, checked text, then
/// `out`, bytes written since.
///
/// Short pieces (keys, escapes, a streamed chunk's content, what the JSON
/// repairer writes) go to `out`. A long string run, already checked as
/// UTF-8 where it was read, is escaped straight into `head`, and `out`
/// moves to `head` (checked by `simdutf8`, still in cache) when it has
/// grown long by the time it is handed out. The final arguments are then
/// `head` itself, with no copy and no second check: std's check of a long
/// `Vec<u8>` at the call's end, a byte at a time from each non-ASCII
/// character on, was a third of the instructions of a 1 MB value fed
/// whole, and it read the buffer back from beyond the core's cache
/// (`perf record`, #42). Short arguments stay in `out`, as before.
#[derive(Debug)]
pub(crate) struct ArgsText {
    head: String,
    out: Vec<u8>,
    /// Bytes handed out, counted over `head` then `out`.
    emitted: usize,
    /// `out` once held bytes that were not UTF-8 on their own (never
    /// expected: the writers write whole characters): nothing more moves
    /// to `head`.
    no_head: bool,
}

impl Default for ArgsText {
    fn default() -> Self {
        ArgsText {
            head: String::new(),
            out: Vec::with_capacity(crate::envelope::ARGS_FIRST_CAPACITY),
            emitted: 0,
            no_head: false,
        }
    }
}

impl ValueOut for ArgsText {
    #[inline]
    fn bytes(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    #[inline]
    fn escape_valid(&mut self, b: &[u8]) {
        if b.len() >= HEAD_WRITE_MIN {
            self.escape_long(b);
        } else {
            escape_bytes(b, &mut self.out);
        }
    }
}

impl ArgsText {
    /// [`ValueOut::escape_valid`] of a long run: escaped straight into
    /// `head` (after `out`), else into `out`.
    fn escape_long(&mut self, b: &[u8]) {
        match simdutf8::basic::from_utf8(b) {
            Ok(s) if self.move_out() => escape_content_text(s, &mut self.head, false),
            _ => escape_bytes(b, &mut self.out),
        }
    }

    /// Nothing written.
    fn is_empty(&self) -> bool {
        self.head.is_empty() && self.out.is_empty()
    }

    /// Moves `out` to the end of `head`: false (and nothing moved) if its
    /// bytes are not UTF-8 on their own.
    fn move_out(&mut self) -> bool {
        if self.out.is_empty() {
            return !self.no_head;
        }
        if self.no_head {
            return false;
        }
        match simdutf8::basic::from_utf8(&self.out) {
            Ok(text) => {
                self.head.push_str(text);
                self.out.clear();
                true
            }
            Err(_) => {
                self.no_head = true;
                false
            }
        }
    }

    /// The bytes written since the last call, in one or two pieces (the
    /// second only when they start in `head` and `out` cannot join it);
    /// empty when there are none.
    #[inline]
    fn take_delta(&mut self) -> (&[u8], &[u8]) {
        let from = self.emitted;
        let h = self.head.len();
        if from >= h && self.out.len() < HEAD_MOVE_MIN {
            // What a chunk usually leaves: a few bytes after the last delta.
            self.emitted = h + self.out.len();
            return (self.out.get(from - h..).unwrap_or_default(), &[]);
        }
        if self.out.len() >= HEAD_MOVE_MIN || (from < h && !self.out.is_empty()) {
            self.move_out();
        }
        let h = self.head.len();
        self.emitted = h + self.out.len();
        if from >= h {
            (self.out.get(from - h..).unwrap_or_default(), &[])
        } else {
            (&self.head.as_bytes()[from..], &self.out)
        }
    }

    /// All of the arguments, as a `String`.
    fn into_string(self) -> String {
        if self.head.is_empty() {
            return crate::json::into_string(self.out);
        }
        let mut head = self.head;
        if !self.out.is_empty() {
            head.push_str(&crate::json::into_string(self.out));
        }
        head
    }
}

/// The current call.
#[derive(Debug)]
struct Call {
    local: usize,
    name: String,
    /// Arguments JSON written so far: `head`, then `out` ([`ArgsText`]).
    args: ArgsText,
    /// `{` written.
    open: bool,
    /// The parameter names written (a set: a call may have many).
    seen: Seen,
    value: Option<Value>,
    /// The open value's parameter is a duplicate: its content is dropped.
    discard: bool,
    /// The open value's parameter name (emulation and morph-xml close tags).
    param: Vec<u8>,
    /// GLM key waiting for its value.
    key: Option<String>,
    body: Option<Box<Repairer>>,
    /// The arguments are a JSON object (`body`), not parameters.
    json_body: bool,
    repairs: Vec<Repair>,
    /// The invoke's closing tag (or what stands for it) was seen; the call
    /// waits for its end event.
    closed: bool,
    /// Where the invoke's close ended.
    closed_at: u64,
    /// The input position where the arguments get cut.
    cut_at: u64,
    /// The tool's parameter schema is known.
    schema: bool,
}

/// Reads the calls of one block of an XML dialect.
pub(crate) struct XmlCalls {
    syn: &'static Syntax,
    container: Option<Container>,
    /// Commit as soon as an invoke names a tool (unambiguous openers).
    commit_on_name: bool,
    /// A rejected block gets a diagnostic (its opening tag is the dialect's own).
    diag: bool,
    /// Some of the dialect's markup was read (a rejected block gets a diagnostic).
    saw_markup: bool,
    st: St,
    phase: Phase,
    scan: TagScanner,
    follow: TagScanner,
    call: Option<Call>,
    /// Calls started in this block.
    started: usize,
    /// Text being collected (GLM name / key, emulation name, Step-3 word).
    word: Vec<u8>,
    /// morph-xml: the tool tag's name.
    morph: Vec<u8>,
    /// GLM: a newline followed the name (the GLM-4.5 layout).
    glm_nl: bool,
    /// Value state: the last content byte was a newline.
    prev_nl: bool,
    /// Value state: nesting depth of call markup inside the value.
    depth: u32,
    /// Value state: inside CDATA.
    cdata: bool,
    /// Discarded output of duplicate parameters.
    trash: Vec<u8>,
    limits: Limits,
    decode: bool,
    tools: Option<Arc<Tools>>,
    /// Repairs of the container's markup before the first call (a repeated
    /// opening tag): the first call gets them.
    lead_repairs: Vec<Repair>,
}

/// One step of the main loop.
enum Step {
    /// Continue at this index.
    At(usize),
    /// Stop with this flow.
    Out(Flow),
}

impl XmlCalls {
    pub(crate) fn new(
        syn: &'static Syntax,
        container: Option<Container>,
        start: Start,
        commit_on_name: bool,
        diag: bool,
        cfg: &crate::config::Config,
    ) -> XmlCalls {
        let mut morph = Vec::new();
        let st = match start {
            Start::Lead => St::Lead,
            Start::FnName => St::FnName,
            Start::GlmName => St::GlmName,
            Start::PlainLead => St::PlainLead,
            Start::Morph(name) => {
                morph = name;
                St::Invoke
            }
            Start::Reject => St::Reject,
        };
        let max_tag = cfg.limits.max_tag_bytes.max(16);
        XmlCalls {
            syn,
            container,
            commit_on_name,
            diag,
            saw_markup: false,
            st,
            phase: Phase::Fresh,
            // DSML tags may be written with ASCII bars (`<|DSML|invoke>`).
            scan: TagScanner::new(max_tag).bar_names(syn.string_attr),
            follow: TagScanner::new(max_tag).bar_names(syn.string_attr),
            call: None,
            started: 0,
            word: Vec::new(),
            morph,
            glm_nl: false,
            prev_nl: false,
            depth: 0,
            cdata: false,
            trash: Vec::new(),
            limits: cfg.limits.clone(),
            decode: cfg.decode_entities,
            tools: cfg.tools.clone(),
            lead_repairs: Vec::new(),
        }
    }

    /// Gives the first call these repairs of the container's markup.
    pub(crate) fn with_lead_repairs(mut self, repairs: Vec<Repair>) -> XmlCalls {
        self.lead_repairs = repairs;
        self
    }

    /// morph-xml: the call for the consumed `<NAME>` tag is started on the first feed.
    fn morph_start(&mut self, cx: &mut Cx<'_>) {
        if self.syn.family == Family::Morph
            && self.call.is_none()
            && self.started == 0
            && self.st == St::Invoke
        {
            let name = std::mem::take(&mut self.morph);
            let at = cx.base;
            self.start_call_raw(cx, &name, Span::new(at, at));
            self.morph = name;
        }
    }

    fn max_tag(&self) -> usize {
        self.limits.max_tag_bytes.max(16)
    }

    // ----- classification -------------------------------------------------

    fn classify(&self, t: &Tag<'_>) -> Kind {
        // DSML names its tags after the `｜DSML｜` marker, written with or
        // without a space after it; a tag without the marker is none of its.
        let name = if self.syn.string_attr {
            super::dsml::tag_name(t).unwrap_or(b"")
        } else {
            t.name()
        };
        let close = t.is_close();
        if let Some(c) = &self.container {
            if close == c.close_slash && name == c.close.as_slice() {
                return Kind::ContainerClose;
            }
            if !close && name == c.open.as_slice() {
                return Kind::ContainerOpen;
            }
        }
        if !close && self.syn.openers.contains(&name) {
            return Kind::ContainerOpen;
        }
        if !close && self.syn.skip_tags.contains(&name) {
            return Kind::Skip;
        }
        match self.syn.family {
            Family::Qwen | Family::Invoke => {
                if name == self.syn.invoke {
                    if close {
                        Kind::InvokeClose
                    } else {
                        Kind::InvokeOpen
                    }
                } else if name == self.syn.param {
                    if close {
                        Kind::ParamClose
                    } else {
                        Kind::ParamOpen
                    }
                } else {
                    Kind::Other
                }
            }
            Family::Glm => match (close, name) {
                (false, b"arg_key") => Kind::KeyOpen,
                (false, b"arg_value") => Kind::ValueOpen,
                (true, b"arg_value") => Kind::ParamClose,
                _ => Kind::Other,
            },
            Family::Plain => {
                let cur = self.call.as_ref().map(|c| c.param.as_slice());
                if ARGS_TAGS.contains(&name) {
                    if close {
                        Kind::InvokeClose
                    } else {
                        Kind::ArgsOpen
                    }
                } else if !close && name == b"name" {
                    Kind::NameOpen
                } else if close && cur == Some(name) {
                    Kind::ParamClose
                } else if !close {
                    Kind::ParamOpen
                } else {
                    Kind::Other
                }
            }
            Family::Morph => {
                let cur = self.call.as_ref().map(|c| c.param.as_slice());
                if name == self.morph.as_slice() {
                    if close {
                        Kind::InvokeClose
                    } else {
                        Kind::InvokeOpen
                    }
                } else if close && cur == Some(name) {
                    Kind::ParamClose
                } else if !close {
                    Kind::ParamOpen
                } else {
                    Kind::Other
                }
            }
        }
    }

    /// The tool name an invoke tag carries.
    fn invoke_name<'t>(&self, t: &Tag<'t>) -> Option<&'t [u8]> {
        let n = match self.syn.family {
            Family::Qwen => t.eq_value(),
            _ => t.attr(b"name").or_else(|| t.eq_value()),
        }?;
        let n = n.trim_ascii();
        (!n.is_empty()).then_some(n)
    }

    /// The parameter name a parameter tag carries.
    fn param_name<'t>(&self, t: &Tag<'t>) -> Option<&'t [u8]> {
        let n = match self.syn.family {
            Family::Qwen => t.eq_value(),
            Family::Invoke => t.attr(b"name").or_else(|| t.eq_value()),
            _ => Some(t.name()),
        }?;
        let n = n.trim_ascii();
        (!n.is_empty()).then_some(n)
    }

    /// Does the tool's schema allow parameter `name`? `None`: no schema.
    fn schema_has(&self, name: &[u8]) -> Option<bool> {
        let call = self.call.as_ref()?;
        let tools = self.tools.as_ref()?;
        tools.has_param(&call.name, &String::from_utf8_lossy(name))
    }

    /// `</parameter>` then `<parameter=NAME>`, NAME undeclared: the open
    /// value is one the schema types as something other than text (a
    /// number, a boolean, JSON), which cannot hold the tags as content, and
    /// the call has not had NAME — a parameter the model added, not a
    /// literal tag in a string.
    fn typed_then_unseen(&self, name: &[u8]) -> bool {
        self.call.as_ref().is_some_and(|c| {
            c.value.as_ref().is_some_and(|v| !v.may_be_text())
                && !c.seen.contains(String::from_utf8_lossy(name).as_ref())
        })
    }

    fn known_tool(&self, name: &str) -> bool {
        self.tools.as_ref().is_some_and(|t| t.get(name).is_some())
    }

    // ----- calls and arguments --------------------------------------------

    /// Starts a call named by the raw bytes `raw`: not UTF-8, they are read
    /// with U+FFFD and an `invalid_utf8` repair at the name's start.
    fn start_call_raw(&mut self, cx: &mut Cx<'_>, raw: &[u8], span: Span) {
        let name = String::from_utf8_lossy(raw).into_owned();
        let bad = std::str::from_utf8(raw).is_err();
        self.start_call(cx, name, span);
        if bad {
            if let Some(c) = self.call.as_mut() {
                c.repairs.push(Repair {
                    kind: RepairKind::InvalidUtf8,
                    offset: span.start,
                });
            }
        }
    }

    fn start_call(&mut self, cx: &mut Cx<'_>, name: String, span: Span) {
        // A previous call of this block whose end event waits.
        if let Some(c) = self.call.as_ref() {
            let at = if c.closed { c.closed_at } else { span.start };
            self.end_call(cx, at, false);
        }
        if self.commit_on_name {
            cx.commit();
        }
        let schema = self
            .tools
            .as_ref()
            .and_then(|t| t.get(&name)?.parameters.as_ref()?.get("properties"))
            .is_some();
        let local = cx.start(name.clone(), None, span);
        self.started += 1;
        self.call = Some(Call {
            local,
            name,
            // Most arguments are short: one allocation, no doublings.
            args: ArgsText::default(),
            open: false,
            seen: Seen::default(),
            value: None,
            discard: false,
            param: Vec::new(),
            key: None,
            body: None,
            json_body: false,
            repairs: std::mem::take(&mut self.lead_repairs),
            closed: false,
            closed_at: 0,
            cut_at: span.start.saturating_add(self.limits.max_args_bytes as u64),
            schema,
        });
    }

    /// Emits the arguments written since the last flush.
    #[inline(always)]
    fn flush(&mut self, cx: &mut Cx<'_>, span: Span) {
        if let Some(c) = self.call.as_mut() {
            let a = &mut c.args;
            let h = a.head.len();
            if a.emitted >= h && a.out.len() < HEAD_MOVE_MIN {
                // What a chunk usually leaves: a few bytes after the last
                // delta, all in `out`.
                let from = a.emitted - h;
                if a.out.len() > from {
                    a.emitted = h + a.out.len();
                    cx.args(c.local, &a.out[from..], span);
                }
                return;
            }
            Self::flush_long(c, cx, span);
        }
    }

    /// [`XmlCalls::flush`] of long arguments (some in `head`, or `out`
    /// long enough to move there): out of line, off the per-chunk path.
    #[cold]
    #[inline(never)]
    fn flush_long(c: &mut Call, cx: &mut Cx<'_>, span: Span) {
        let (first, second) = c.args.take_delta();
        if !first.is_empty() {
            cx.args(c.local, first, span);
        }
        if !second.is_empty() {
            cx.args(c.local, second, span);
        }
    }

    /// Opens parameter `name`: writes its key and starts its value.
    fn open_param(&mut self, name: &[u8], string: Option<bool>, at: u64) {
        let ws = self.syn.ws;
        let decode = self.decode;
        let ty = match string {
            Some(true) => Ty::Str,
            _ => {
                let schema = self.call.as_ref().and_then(|c| {
                    self.tools
                        .as_ref()
                        .and_then(|t| t.param_type(&c.name, &String::from_utf8_lossy(name)))
                });
                match (Ty::from_schema(schema), string) {
                    (Ty::Auto, Some(false)) => Ty::Json,
                    (t, _) => t,
                }
            }
        };
        let Some(call) = self.call.as_mut() else {
            return;
        };
        let key = String::from_utf8_lossy(name).into_owned();
        if std::str::from_utf8(name).is_err() {
            call.repairs.push(Repair {
                kind: RepairKind::InvalidUtf8,
                offset: at,
            });
        }
        let mut v = Value::new(ty, ws, decode, &self.limits);
        if call.seen.contains(&key) {
            call.discard = true;
            call.repairs.push(Repair {
                kind: RepairKind::DuplicateKey,
                offset: at,
            });
            self.trash.clear();
            v.begin(&mut self.trash);
        } else {
            call.discard = false;
            call.args
                .bytes()
                .extend_from_slice(if call.open { b", " } else { b"{" });
            call.open = true;
            json_string(&key, call.args.bytes());
            call.args.bytes().extend_from_slice(b": ");
            v.begin(&mut call.args);
            call.seen.insert(key);
        }
        // (Its buffer kept from the call's last parameter.)
        call.param.clear();
        call.param.extend_from_slice(name);
        call.value = Some(v);
        self.st = St::Value;
        self.phase = Phase::Fresh;
        self.prev_nl = false;
        self.depth = 0;
        self.cdata = false;
    }

    /// GLM: a key without a value gets `null`.
    fn key_without_value(&mut self, at: u64) {
        let Some(call) = self.call.as_mut() else {
            return;
        };
        let Some(key) = call.key.take() else { return };
        if call.seen.contains(&key) {
            call.repairs.push(Repair {
                kind: RepairKind::DuplicateKey,
                offset: at,
            });
            return;
        }
        call.args
            .bytes()
            .extend_from_slice(if call.open { b", " } else { b"{" });
        call.open = true;
        json_string(&key, call.args.bytes());
        call.args.bytes().extend_from_slice(b": null");
        call.seen.insert(key);
        call.repairs.push(Repair {
            kind: RepairKind::MissingValue,
            offset: at,
        });
    }

    /// Content of the open value.
    fn push(&mut self, bytes: &[u8], at: u64, literal: bool) {
        if bytes.is_empty() {
            return;
        }
        self.prev_nl = bytes.last() == Some(&b'\n');
        let Some(call) = self.call.as_mut() else {
            return;
        };
        let Some(v) = call.value.as_mut() else { return };
        match (call.discard, literal) {
            (true, true) => v.push_literal(bytes, at, &mut self.trash),
            (true, false) => v.push(bytes, at, &mut self.trash),
            (false, true) => v.push_literal(bytes, at, &mut call.args),
            (false, false) => v.push(bytes, at, &mut call.args),
        }
        if call.discard {
            self.trash.clear();
        }
    }

    /// Closes the open value; `missing` records a missing closing tag at `at`.
    fn close_value(&mut self, missing: Option<u64>) {
        if let Some(call) = self.call.as_mut() {
            if let Some(mut v) = call.value.take() {
                if call.discard {
                    v.finish(&mut self.trash);
                } else {
                    v.finish(&mut call.args);
                }
                if !call.discard {
                    call.repairs.append(&mut v.repairs);
                }
                self.trash.clear();
            }
            call.discard = false;
            if let Some(at) = missing {
                call.repairs.push(Repair {
                    kind: RepairKind::MissingCloseTag,
                    offset: at,
                });
            }
        }
        self.cdata = false;
        self.depth = 0;
        self.st = St::Invoke;
    }

    /// Closes the invoke: the arguments object is complete. `end` is where
    /// its closing markup ended.
    fn close_invoke(&mut self, end: u64, missing: Option<u64>) {
        if self.call.as_ref().is_some_and(|c| c.value.is_some()) {
            self.close_value(None);
        }
        let Some(call) = self.call.as_mut() else {
            return;
        };
        if call.closed {
            return;
        }
        if let Some(mut rep) = call.body.take() {
            rep.finish(call.args.bytes());
            call.repairs.extend(rep.take_repairs());
        } else if !call.json_body {
            if !call.open {
                call.args.bytes().push(b'{');
            }
            call.args.bytes().push(b'}');
        }
        if call.args.is_empty() {
            // A JSON body announced by its `{` and cut by the limit before
            // its repairer wrote anything.
            call.args.bytes().extend_from_slice(b"{}");
        }
        call.open = true;
        call.closed = true;
        call.closed_at = end;
        if let Some(at) = missing {
            call.repairs.push(Repair {
                kind: RepairKind::MissingCloseTag,
                offset: at,
            });
        }
    }

    /// Ends the current call at `end`.
    fn end_call(&mut self, cx: &mut Cx<'_>, end: u64, truncated: bool) {
        let mut truncated = truncated;
        if let Some(c) = self.call.as_ref() {
            if !c.closed {
                truncated = true;
                self.close_invoke(end, None);
            }
        }
        self.flush(cx, Span::new(end, end));
        let Some(mut call) = self.call.take() else {
            return;
        };
        call.repairs.sort_by_key(|r| r.offset);
        let args = call.args.into_string();
        cx.end(call.local, end, args, call.repairs, truncated);
        self.st = St::AfterInvoke;
    }

    /// Something that is not this dialect's markup at `i`.
    fn stray(&mut self, cx: &mut Cx<'_>, i: usize) -> Flow {
        if !cx.committed() {
            return self.reject(cx, i);
        }
        // The block ends before it; the call is complete but its closing
        // markup is missing.
        let at = cx.abs(i);
        if let Some(call) = self.call.as_mut() {
            if !call.closed || self.container.is_some() {
                call.repairs.push(Repair {
                    kind: RepairKind::MissingCloseTag,
                    offset: at,
                });
            }
        }
        if self.call.as_ref().is_some_and(|c| !c.closed) {
            self.close_invoke(at, None);
        }
        self.end_call(cx, at, false);
        Flow::Done(i)
    }

    fn reject(&mut self, cx: &mut Cx<'_>, i: usize) -> Flow {
        if cx.committed() {
            // Calls were already reported: the block cannot become text
            // any more. It ends here instead (fuzz finding
            // `content_split-19`: an empty `<name></name>` after a call).
            return self.stray(cx, i);
        }
        if (self.diag || self.saw_markup) && self.st != St::Reject {
            let span = Span::new(cx.em.span_cursor(), cx.abs(i));
            cx.diag(
                DiagnosticKind::UnparseableBlock,
                format!("{} block holds no tool call; kept as text", self.syn.label),
                span,
            );
        }
        Flow::Reject {
            at: i,
            then: Resume::Text,
        }
    }

    /// The arguments limit was reached at `i`.
    fn limit(&mut self, cx: &mut Cx<'_>, i: usize) -> Flow {
        if !cx.committed() {
            return self.reject(cx, i);
        }
        let at = cx.abs(i);
        if let Some(call) = self.call.as_mut() {
            call.repairs.push(Repair {
                kind: RepairKind::LimitExceeded,
                offset: at,
            });
        }
        self.close_invoke(at, None);
        self.end_call(cx, at, true);
        Flow::Done(i)
    }

    fn cut_at(&self) -> u64 {
        self.call.as_ref().map_or(u64::MAX, |c| c.cut_at)
    }

    // ----- the main loop --------------------------------------------------

    /// Takes `input` if it is a chunk of a string value's content that
    /// [`XmlCalls::feed`] would only escape into the arguments (no `<` or
    /// `&`, before the arguments limit, the value streaming as a string
    /// with nothing held, see [`Value::push_plain`]): written and streamed
    /// as `feed` would, without the reading. False, and nothing done, for
    /// any other chunk.
    pub(crate) fn plain_chunk(&mut self, input: &[u8], cx: &mut Cx<'_>) -> bool {
        if self.st != St::Value || self.cdata || self.phase != Phase::Fresh {
            return false;
        }
        let at = cx.base;
        let Some(call) = self.call.as_mut() else {
            return false;
        };
        if call.discard
            || at + input.len() as u64 > call.cut_at
            || memchr::memchr2(b'<', b'&', input).is_some()
        {
            return false;
        }
        let Some(v) = call.value.as_mut() else {
            return false;
        };
        if !v.push_plain(input, at, &mut call.args) {
            return false;
        }
        self.prev_nl = input.last() == Some(&b'\n');
        self.flush(cx, Span::new(at, cx.abs(input.len())));
        true
    }

    pub(crate) fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow {
        self.morph_start(cx);
        let mut i = 0;
        let flow = loop {
            if i >= input.len() {
                break Flow::More;
            }
            let step = match self.st {
                St::Reject => Step::Out(Flow::Reject {
                    at: 0,
                    then: Resume::Text,
                }),
                St::Value => self.value(input, i, cx),
                St::Body => self.body(input, i, cx),
                St::FnName => self.fn_name(input, i, cx),
                St::GlmName => self.glm_name(input, i, cx),
                St::GlmKey | St::PlainName => self.raw_text(input, i, cx),
                _ => self.structural(input, i, cx),
            };
            match step {
                Step::At(n) => i = n,
                Step::Out(f) => break f,
            }
        };
        let consumed = match flow {
            Flow::More => input.len(),
            Flow::Partial(n) | Flow::Done(n) => n,
            Flow::Reject { at, .. } => at,
        };
        self.flush(cx, Span::new(cx.base, cx.abs(consumed)));
        flow
    }

    /// Scans the tag at the start of `w` (resuming). `Err` is the flow or
    /// step to take when it is not complete.
    fn scan_tag(&mut self, w: &[u8]) -> Option<Result<usize, ()>> {
        self.phase = Phase::Tag;
        match self.scan.feed(w) {
            TagScan::Complete(n) => {
                self.scan.reset();
                self.phase = Phase::Fresh;
                Some(Ok(n))
            }
            TagScan::NeedMore => None,
            TagScan::NotTag => {
                self.scan.reset();
                self.phase = Phase::Fresh;
                Some(Err(()))
            }
        }
    }

    /// The states between values: blanks and markup.
    fn structural(&mut self, input: &[u8], i: usize, cx: &mut Cx<'_>) -> Step {
        let b = input[i];
        if b.is_ascii_whitespace() {
            if b == b'\n' && self.syn.family == Family::Glm {
                self.glm_nl = true;
            }
            if !self.word.is_empty() {
                return self.end_word(input, i, cx);
            }
            return Step::At(i + 1);
        }
        if b == b'<' {
            if !self.word.is_empty() {
                return self.end_word(input, i, cx);
            }
            if cx.abs(i) >= self.cut_at() {
                return Step::Out(self.limit(cx, i));
            }
            let w = &input[i..];
            let n = match self.scan_tag(w) {
                None => return Step::Out(Flow::Partial(i)),
                Some(Err(())) => return Step::Out(self.stray(cx, i)),
                Some(Ok(n)) => n,
            };
            let tag = Tag::new(&w[..n]);
            if self.st == St::Invoke
                && self.container.is_none()
                && self.syn.family == Family::Qwen
                && self.classify(&tag) == Kind::InvokeClose
            {
                // A bare `<function=…>` (the `<tool_call>` opener omitted)
                // may still be followed by `</tool_call>`: it belongs to the call.
                match self.wrapper_close_after(w, n) {
                    None => {
                        self.phase = Phase::Follow {
                            cand: Kind::InvokeClose,
                            len: n,
                            ws_end: n,
                        };
                        return Step::Out(Flow::Partial(i));
                    }
                    Some(extra) if extra > 0 => {
                        cx.commit();
                        self.close_invoke(cx.abs(i + n), None);
                        self.end_call(cx, cx.abs(i + n + extra), false);
                        return Step::Out(Flow::Done(i + n + extra));
                    }
                    Some(_) => {}
                }
            }
            return self.on_tag(&tag, i, n, cx);
        }
        // Text.
        match self.st {
            St::Lead | St::AfterInvoke
                if !self.syn.skip_words.is_empty() && b.is_ascii_alphabetic() =>
            {
                if self.word.len() >= 16 {
                    return Step::Out(self.stray(cx, i));
                }
                self.word.push(b);
                Step::At(i + 1)
            }
            St::Invoke if (b == b'{') && self.body_allowed() => {
                let at = cx.abs(i);
                let limits = self.limits.clone();
                let Some(call) = self.call.as_mut() else {
                    return Step::Out(self.stray(cx, i));
                };
                let mut rep = Box::new(Repairer::with_limits(&limits).stop_on_lt(true));
                rep.set_offset(at);
                call.body = Some(rep);
                call.json_body = true;
                call.open = true;
                cx.commit();
                self.st = St::Body;
                Step::At(i)
            }
            St::Invoke
                if matches!(b, b'}' | b']' | b',')
                    && self
                        .call
                        .as_ref()
                        .is_some_and(|c| c.json_body && c.body.is_none()) =>
            {
                // Stray closers after a JSON body.
                if let Some(call) = self.call.as_mut() {
                    call.repairs.push(Repair {
                        kind: RepairKind::TrailingGarbage,
                        offset: cx.abs(i),
                    });
                }
                Step::At(i + 1)
            }
            _ => Step::Out(self.stray(cx, i)),
        }
    }

    /// After the `n`-byte `</function>` at the start of `w`: the length of the
    /// blanks and `</tool_call>` that follow, 0 when something else follows,
    /// `None` when the window does not tell yet.
    fn wrapper_close_after(&self, w: &[u8], n: usize) -> Option<usize> {
        let mut k = n;
        while k < w.len() && w[k].is_ascii_whitespace() {
            k += 1;
            if k - n > self.max_tag() {
                return Some(0);
            }
        }
        if k == w.len() {
            return None;
        }
        match match_lit(b"</tool_call>", &w[k..]) {
            Match::Full(c) => Some(k - n + c),
            Match::Partial => None,
            Match::No => Some(0),
        }
    }

    /// A JSON object may stand for the parameters.
    fn body_allowed(&self) -> bool {
        self.call
            .as_ref()
            .is_some_and(|c| !c.open && c.seen.is_empty() && !c.closed)
            && matches!(
                self.syn.family,
                Family::Qwen | Family::Glm | Family::Plain | Family::Morph
            )
    }

    /// Step-3's skip words end at a tag or a blank.
    fn end_word(&mut self, _input: &[u8], i: usize, cx: &mut Cx<'_>) -> Step {
        let word = std::mem::take(&mut self.word);
        if self.syn.skip_words.contains(&word.as_slice()) {
            Step::At(i)
        } else {
            Step::Out(self.stray(cx, i))
        }
    }

    fn on_tag(&mut self, tag: &Tag<'_>, i: usize, n: usize, cx: &mut Cx<'_>) -> Step {
        let kind = self.classify(tag);
        if !matches!(kind, Kind::Other | Kind::ParamOpen) {
            self.saw_markup = true;
        }
        let start = cx.abs(i);
        let end = cx.abs(i + n);
        match (self.st, kind) {
            (_, Kind::Skip) if matches!(self.st, St::Lead | St::AfterInvoke) => Step::At(i + n),
            (St::Lead | St::AfterInvoke, Kind::InvokeOpen) if self.syn.family != Family::Morph => {
                let Some(name) = self.invoke_name(tag) else {
                    return Step::Out(self.stray(cx, i));
                };
                let name = name.to_vec();
                if self.st == St::AfterInvoke {
                    if let Some(c) = self.call.as_ref() {
                        let at = c.closed_at;
                        self.end_call(cx, at, false);
                    }
                }
                self.start_call_raw(cx, &name, Span::new(start, end));
                self.st = St::Invoke;
                Step::At(i + n)
            }
            (St::Lead | St::PlainLead, Kind::NameOpen) | (St::AfterInvoke, Kind::NameOpen)
                if self.syn.family == Family::Plain =>
            {
                if self.st == St::AfterInvoke {
                    if let Some(c) = self.call.as_ref() {
                        let at = c.closed_at;
                        self.end_call(cx, at, false);
                    }
                }
                self.word.clear();
                self.st = St::PlainName;
                Step::At(i + n)
            }
            (St::Lead | St::PlainLead, Kind::ContainerClose) => {
                // An empty container: not a call.
                Step::Out(self.reject(cx, i + n))
            }
            (St::AfterInvoke, Kind::ContainerClose) => {
                self.end_call(cx, end, false);
                Step::Out(Flow::Done(i + n))
            }
            (St::PlainAfterName, Kind::ArgsOpen) => {
                if tag.is_self_closing() {
                    self.close_invoke(end, None);
                    self.st = St::AfterInvoke;
                } else {
                    self.st = St::Invoke;
                }
                Step::At(i + n)
            }
            (St::PlainAfterName, Kind::ParamOpen) => {
                // Parameters without an `<arguments>` wrapper.
                self.st = St::Invoke;
                self.on_tag(tag, i, n, cx)
            }
            (St::PlainAfterName, Kind::ContainerClose) => {
                self.close_invoke(start, None);
                self.end_call(cx, end, false);
                Step::Out(Flow::Done(i + n))
            }
            (St::Invoke, Kind::ParamOpen) if self.syn.family != Family::Glm => {
                let Some(name) = self.param_name(tag) else {
                    return Step::Out(self.stray(cx, i));
                };
                let string = if self.syn.string_attr {
                    match tag.attr(b"string") {
                        Some(s) if s.eq_ignore_ascii_case(b"true") => Some(true),
                        Some(s) if s.eq_ignore_ascii_case(b"false") => Some(false),
                        _ => None,
                    }
                } else {
                    None
                };
                if self.call.as_ref().is_some_and(|c| c.closed || c.json_body) {
                    return Step::Out(self.stray(cx, i));
                }
                cx.commit();
                if tag.is_self_closing() {
                    // `<k/>`: an empty value.
                    let name = name.to_vec();
                    self.open_param(&name, string, start);
                    self.close_value(None);
                    return Step::At(i + n);
                }
                let name = name.to_vec();
                self.open_param(&name, string, start);
                Step::At(i + n)
            }
            (St::Invoke, Kind::KeyOpen) => {
                if self.call.as_ref().is_some_and(|c| c.closed || c.json_body) {
                    return Step::Out(self.stray(cx, i));
                }
                cx.commit();
                self.word.clear();
                self.st = St::GlmKey;
                Step::At(i + n)
            }
            (St::GlmAfterKey, Kind::ValueOpen) => {
                let key = self
                    .call
                    .as_mut()
                    .and_then(|c| c.key.take())
                    .unwrap_or_default();
                self.open_param(key.as_bytes(), None, start);
                Step::At(i + n)
            }
            (St::GlmAfterKey, Kind::KeyOpen) => {
                self.key_without_value(start);
                self.word.clear();
                self.st = St::GlmKey;
                Step::At(i + n)
            }
            (St::GlmAfterKey, Kind::ContainerClose) => {
                self.key_without_value(start);
                self.close_invoke(start, None);
                self.end_call(cx, end, false);
                Step::Out(Flow::Done(i + n))
            }
            (St::Invoke, Kind::InvokeClose) => {
                cx.commit();
                self.close_invoke(end, None);
                if self.container.is_some() && self.syn.family != Family::Morph {
                    self.st = St::AfterInvoke;
                    Step::At(i + n)
                } else {
                    self.end_call(cx, end, false);
                    Step::Out(Flow::Done(i + n))
                }
            }
            (St::Invoke, Kind::ContainerClose) => {
                cx.commit();
                let missing = match self.syn.family {
                    // GLM's container close is the invoke's close; an
                    // emulation without `<arguments>` needs none.
                    Family::Glm => None,
                    Family::Plain
                        if self
                            .call
                            .as_ref()
                            .is_some_and(|c| c.seen.is_empty() && !c.open) =>
                    {
                        None
                    }
                    _ => Some(start),
                };
                self.close_invoke(start, missing);
                self.end_call(cx, end, false);
                Step::Out(Flow::Done(i + n))
            }
            (St::Invoke, Kind::InvokeOpen)
                if self.container.is_some() && self.syn.family != Family::Morph =>
            {
                // The next invoke without this one's close.
                self.close_invoke(start, Some(start));
                self.st = St::AfterInvoke;
                Step::At(i)
            }
            (St::Invoke, Kind::Skip) => Step::At(i + n),
            _ => Step::Out(self.stray(cx, i)),
        }
    }

    /// A bare `<function=` was consumed: read the name up to `>`.
    fn fn_name(&mut self, input: &[u8], i: usize, cx: &mut Cx<'_>) -> Step {
        let rest = &input[i..];
        let stop = rest.iter().position(|&b| matches!(b, b'>' | b'<' | b'\n'));
        let take = stop.unwrap_or(rest.len());
        if self.word.len() + take > self.max_tag() {
            return Step::Out(self.reject(
                cx,
                i + (self.max_tag().saturating_sub(self.word.len())).min(take),
            ));
        }
        self.word.extend_from_slice(&rest[..take]);
        match stop {
            None => Step::At(input.len()),
            Some(p) if rest[p] == b'>' => {
                let word = std::mem::take(&mut self.word);
                let t = word.trim_ascii();
                let t = unquote(t);
                if t.is_empty() {
                    return Step::Out(self.reject(cx, i + p));
                }
                // The span runs from the block's `<function=` to the `>`.
                let span = Span::new(cx.em.span_cursor(), cx.abs(i + p + 1));
                self.start_call_raw(cx, t, span);
                self.st = St::Invoke;
                Step::At(i + p + 1)
            }
            Some(p) => Step::Out(self.reject(cx, i + p)),
        }
    }

    /// GLM: the tool name right after `<tool_call>`.
    fn glm_name(&mut self, input: &[u8], i: usize, cx: &mut Cx<'_>) -> Step {
        let rest = &input[i..];
        // The name ends at a blank, ASCII or not (a blank that is not ASCII
        // is looked at only at a byte >= 0x80).
        let mut stop = None;
        let mut partial = false;
        for (k, &b) in rest.iter().enumerate() {
            if b >= 0x80 {
                match super::unicode_blank(&rest[k..]) {
                    Blank::Yes(_) => {}
                    Blank::No => continue,
                    Blank::Partial => partial = true,
                }
            } else if is_glm_name_byte(b) {
                continue;
            }
            stop = Some(k);
            break;
        }
        let take = stop.unwrap_or(rest.len());
        if self.word.len() + take > MAX_NAME {
            return Step::Out(self.reject(cx, i + (MAX_NAME - self.word.len()).min(take)));
        }
        self.word.extend_from_slice(&rest[..take]);
        let Some(mut p) = stop else {
            return Step::At(input.len());
        };
        if partial {
            // A character that may be a blank: wait for the rest of it.
            return Step::Out(Flow::Partial(i + p));
        }
        // Blanks that are not ASCII after the name are read with it.
        while rest.get(p).is_some_and(|&b| b >= 0x80) {
            match super::unicode_blank(&rest[p..]) {
                Blank::Yes(n) => p += n,
                Blank::Partial => return Step::Out(Flow::Partial(i + p)),
                Blank::No => break,
            }
        }
        let Some(&b) = rest.get(p) else {
            // The blanks run to the end of the chunk: what follows decides.
            return Step::Out(Flow::Partial(i + take));
        };
        let after_blank = p > take;
        if !(after_blank || b.is_ascii_whitespace() || b == b'<' || b == b'{')
            || self.word.is_empty()
        {
            return Step::Out(self.reject(cx, i + p));
        }
        let word = std::mem::take(&mut self.word);
        let end = cx.abs(i + take);
        let start = end.saturating_sub(word.len() as u64);
        self.start_call_raw(cx, &word, Span::new(start, end));
        self.st = St::Invoke;
        Step::At(i + p)
    }

    /// Raw text up to a closing tag: GLM's key, the emulation's name.
    fn raw_text(&mut self, input: &[u8], i: usize, cx: &mut Cx<'_>) -> Step {
        let close: &[u8] = if self.st == St::GlmKey {
            b"</arg_key>"
        } else {
            b"</name>"
        };
        let rest = &input[i..];
        let p = memchr::memchr(b'<', rest).unwrap_or(rest.len());
        if self.word.len() + p > self.max_tag() {
            // Too long for a key or name: the text ends the block at the
            // byte that crosses the limit, the same byte however the input
            // is split. (Not backed off to a character start: byte by byte
            // the character's first bytes were already read, so the answer
            // would depend on the split — fuzz finding `content_split-18`.
            // The word is dropped, so nothing is cut inside a character.)
            let room = self.max_tag().saturating_sub(self.word.len());
            return Step::Out(self.stray(cx, i + room));
        }
        self.word.extend_from_slice(&rest[..p]);
        if p == rest.len() {
            return Step::At(input.len());
        }
        let at = i + p;
        match match_lit(close, &input[at..]) {
            Match::Partial => Step::Out(Flow::Partial(at)),
            Match::No => {
                self.word.push(b'<');
                Step::At(at + 1)
            }
            Match::Full(n) => {
                let word = std::mem::take(&mut self.word);
                // Where the text began, however it arrived (the limit on the
                // call's arguments counts from there).
                let start = cx.abs(at).saturating_sub(word.len() as u64);
                let text = String::from_utf8_lossy(word.trim_ascii()).into_owned();
                if self.st == St::GlmKey {
                    if let Some(c) = self.call.as_mut() {
                        c.key = Some(text);
                        if std::str::from_utf8(&word).is_err() {
                            c.repairs.push(Repair {
                                kind: RepairKind::InvalidUtf8,
                                offset: start,
                            });
                        }
                    }
                    self.st = St::GlmAfterKey;
                } else {
                    if text.is_empty() || text.len() > MAX_NAME {
                        return Step::Out(self.reject(cx, at + n));
                    }
                    let span = Span::new(start, cx.abs(at + n));
                    self.start_call(cx, text, span);
                    cx.commit();
                    self.st = St::PlainAfterName;
                }
                Step::At(at + n)
            }
        }
    }

    /// A JSON object standing for the parameters.
    fn body(&mut self, input: &[u8], i: usize, cx: &mut Cx<'_>) -> Step {
        let cut = self.cut_at();
        let Some(call) = self.call.as_mut() else {
            return Step::Out(self.stray(cx, i));
        };
        let Some(rep) = call.body.as_mut() else {
            self.st = St::Invoke;
            return Step::At(i);
        };
        let room = cut.saturating_sub(cx.abs(i));
        let end = (i as u64 + room).min(input.len() as u64) as usize;
        rep.set_offset(cx.abs(i));
        let p = rep.feed(&input[i..end], call.args.bytes());
        let at = i + p.consumed;
        match p.status {
            Status::NeedMore if end < input.len() => Step::Out(self.limit(cx, end)),
            Status::NeedMore => Step::At(input.len()),
            Status::Done | Status::Stop | Status::Halted => {
                // The object ends here (or a tag interrupts it): close it now.
                if let Some(mut rep) = call.body.take() {
                    rep.finish(call.args.bytes());
                    call.repairs.extend(rep.take_repairs());
                }
                self.st = St::Invoke;
                Step::At(at)
            }
            Status::Limit => {
                if let Some(mut rep) = call.body.take() {
                    rep.finish(call.args.bytes());
                    call.repairs.extend(rep.take_repairs());
                }
                Step::Out(self.limit(cx, at))
            }
        }
    }

    /// Inside a value.
    fn value(&mut self, input: &[u8], i: usize, cx: &mut Cx<'_>) -> Step {
        let cut = self.cut_at();
        if self.cdata {
            if let Phase::CdataEnd(_) = self.phase {
                self.phase = Phase::Fresh;
            }
            let rest = &input[i..];
            let room = cut.saturating_sub(cx.abs(i)) as usize;
            match memchr::memmem::find(rest, CDATA_CLOSE) {
                Some(k) if k <= room => {
                    self.push(&rest[..k], cx.abs(i), true);
                    if !self.decode {
                        self.push(CDATA_CLOSE, cx.abs(i + k), true);
                    }
                    self.cdata = false;
                    return Step::At(i + k + CDATA_CLOSE.len());
                }
                _ => {
                    let keep = if rest.ends_with(b"]]") {
                        2
                    } else if rest.ends_with(b"]") {
                        1
                    } else {
                        0
                    };
                    let body = rest.len() - keep;
                    if body > room {
                        let Some(k) = char_end(rest, room) else {
                            self.push(&rest[..room], cx.abs(i), true);
                            return Step::Out(Flow::Partial(i + room));
                        };
                        self.push(&rest[..k], cx.abs(i), true);
                        return Step::Out(self.limit(cx, i + k));
                    }
                    self.push(&rest[..body], cx.abs(i), true);
                    if keep > 0 {
                        self.phase = Phase::CdataEnd(keep);
                        return Step::Out(Flow::Partial(i + body));
                    }
                    return Step::At(input.len());
                }
            }
        }
        let rest = &input[i..];
        let p = if self.phase == Phase::Fresh {
            memchr::memchr(b'<', rest).unwrap_or(rest.len())
        } else {
            // Resuming on a held `<`.
            0
        };
        let room = cut.saturating_sub(cx.abs(i)) as usize;
        if p > room {
            let Some(k) = char_end(rest, room) else {
                self.push(&rest[..room], cx.abs(i), false);
                return Step::Out(Flow::Partial(i + room));
            };
            self.push(&rest[..k], cx.abs(i), false);
            return Step::Out(self.limit(cx, i + k));
        }
        self.push(&rest[..p], cx.abs(i), false);
        if p == rest.len() {
            return Step::At(input.len());
        }
        let at = i + p;
        match self.value_lt(&input[at..], cx.abs(at)) {
            Lt::NeedMore => Step::Out(Flow::Partial(at)),
            Lt::Content(n) => {
                if cx.abs(at + n) > cut {
                    let room = cut.saturating_sub(cx.abs(at)) as usize;
                    let Some(k) = char_end(&input[at..], room) else {
                        self.push(&input[at..at + room], cx.abs(at), false);
                        return Step::Out(Flow::Partial(at + room));
                    };
                    self.push(&input[at..at + k], cx.abs(at), false);
                    return Step::Out(self.limit(cx, at + k));
                }
                self.push(&input[at..at + n], cx.abs(at), false);
                Step::At(at + n)
            }
            Lt::Cdata(n) => {
                if self.decode {
                    if let Some(v) = self.call.as_mut().and_then(|c| c.value.as_mut()) {
                        v.note(RepairKind::EntityDecoded, cx.abs(at));
                    }
                } else {
                    self.push(&input[at..at + n], cx.abs(at), true);
                }
                self.cdata = true;
                Step::At(at + n)
            }
            Lt::Markup(n) => Step::At(at + n),
        }
    }

    /// Candidate tags in a value: (closing?, name).
    fn is_candidate(&self, w: &[u8]) -> Match {
        let mut partial = false;
        let mut check = |close: bool, name: &[u8]| match match_tag_start(w, close, name) {
            Match::Full(_) => true,
            Match::Partial => {
                partial = true;
                false
            }
            Match::No => false,
        };
        let syn = self.syn;
        let mut hit = false;
        if syn.string_attr {
            // DSML: any tag carrying the marker, spaced or not.
            for pre in super::dsml::TAG_STARTS {
                match crate::scan::match_lit(pre, w) {
                    Match::Full(_) => hit = true,
                    Match::Partial => partial = true,
                    Match::No => {}
                }
            }
            return if hit {
                Match::Full(1)
            } else if partial {
                Match::Partial
            } else {
                Match::No
            };
        }
        if let Some(c) = &self.container {
            hit |= check(c.close_slash, &c.close);
            hit |= check(false, &c.open);
        }
        for o in syn.openers {
            hit |= check(false, o);
        }
        match syn.family {
            Family::Qwen | Family::Invoke => {
                hit |= check(true, syn.param);
                hit |= check(false, syn.param);
                hit |= check(true, syn.invoke);
                hit |= check(false, syn.invoke);
            }
            Family::Glm => {
                hit |= check(true, b"arg_value");
                hit |= check(false, b"arg_key");
            }
            Family::Plain | Family::Morph => {
                let cur: &[u8] = self.call.as_ref().map_or(b"", |c| c.param.as_slice());
                hit |= check(true, cur);
                hit |= check(false, cur);
                if syn.family == Family::Morph {
                    hit |= check(true, &self.morph);
                    hit |= check(false, &self.morph);
                } else {
                    for a in ARGS_TAGS {
                        hit |= check(true, a);
                    }
                }
                // With a schema, any declared parameter may open here.
                if self.call.as_ref().is_some_and(|c| c.schema) {
                    match w.get(1) {
                        None => partial = true,
                        Some(&b) if is_name_start(b) => hit = true,
                        _ => {}
                    }
                }
            }
        }
        if hit {
            Match::Full(1)
        } else if partial {
            Match::Partial
        } else {
            Match::No
        }
    }

    /// A `<` inside a value, at the start of `w`.
    fn value_lt(&mut self, w: &[u8], abs: u64) -> Lt {
        if self.phase == Phase::Fresh {
            match match_lit(CDATA_OPEN, w) {
                Match::Full(n) => return Lt::Cdata(n),
                Match::Partial => return Lt::NeedMore,
                Match::No => {}
            }
            match self.is_candidate(w) {
                Match::No => return Lt::Content(1),
                Match::Partial => return Lt::NeedMore,
                Match::Full(_) => self.phase = Phase::Tag,
            }
        }
        if self.phase == Phase::Tag {
            let n = match self.scan.feed(w) {
                TagScan::NeedMore => return Lt::NeedMore,
                TagScan::NotTag => {
                    self.scan.reset();
                    self.phase = Phase::Fresh;
                    return Lt::Content(1);
                }
                TagScan::Complete(n) => {
                    self.scan.reset();
                    n
                }
            };
            let tag = Tag::new(&w[..n]);
            let kind = self.classify(&tag);
            let opener = matches!(kind, Kind::ContainerOpen | Kind::InvokeOpen)
                || (matches!(self.syn.family, Family::Plain | Family::Morph)
                    && kind == Kind::ParamOpen
                    && self
                        .call
                        .as_ref()
                        .is_some_and(|c| c.param.as_slice() == tag.name()));
            let closer = matches!(kind, Kind::ContainerClose | Kind::InvokeClose)
                || (matches!(self.syn.family, Family::Plain | Family::Morph)
                    && kind == Kind::ParamClose);
            if self.depth > 0 {
                if opener {
                    self.depth += 1;
                } else if closer {
                    self.depth -= 1;
                }
                self.phase = Phase::Fresh;
                return Lt::Content(n);
            }
            if opener {
                self.depth = 1;
                self.phase = Phase::Fresh;
                return Lt::Content(n);
            }
            match kind {
                Kind::InvokeClose
                    if self.container.is_none() && self.syn.family == Family::Qwen =>
                {
                    // A bare `<function=…>` has no container whose close
                    // could follow: its `</function>` ends the call.
                    return self.accept(kind, n, abs);
                }
                Kind::ParamClose | Kind::InvokeClose | Kind::ContainerClose => {
                    self.phase = Phase::Follow {
                        cand: kind,
                        len: n,
                        ws_end: n,
                    };
                }
                Kind::ParamOpen if self.implicit_ok(&tag) => {
                    self.phase = Phase::Fresh;
                    self.close_value(Some(abs));
                    return Lt::Markup(0);
                }
                Kind::KeyOpen => {
                    // GLM: the next key; this value's close is missing.
                    self.phase = Phase::Fresh;
                    self.close_value(Some(abs));
                    return Lt::Markup(0);
                }
                _ => {
                    self.phase = Phase::Fresh;
                    return Lt::Content(n);
                }
            }
        }
        let Phase::Follow {
            cand,
            len,
            mut ws_end,
        } = self.phase
        else {
            self.phase = Phase::Fresh;
            return Lt::Content(1);
        };
        // Blanks after the closing tag.
        while ws_end < w.len() && w[ws_end].is_ascii_whitespace() {
            ws_end += 1;
            if ws_end - len > self.max_tag() {
                return self.accept(cand, len, abs);
            }
        }
        self.phase = Phase::Follow { cand, len, ws_end };
        if ws_end == w.len() {
            return Lt::NeedMore;
        }
        if w[ws_end] != b'<' {
            return self.close_as_content(len, abs);
        }
        let f = &w[ws_end..];
        let fl = match self.follow.feed(f) {
            TagScan::NeedMore => return Lt::NeedMore,
            TagScan::NotTag => {
                self.follow.reset();
                return self.close_as_content(len, abs);
            }
            TagScan::Complete(fl) => {
                self.follow.reset();
                fl
            }
        };
        let ftag = Tag::new(&f[..fl]);
        if self.follower_ok(cand, &ftag) {
            self.accept(cand, len, abs)
        } else {
            self.close_as_content(len, abs)
        }
    }

    /// The dialect's own closing tag at `abs` is content of the value (what
    /// follows it is no markup that may come next: code or HTML being
    /// written). That reading is a decision the model's text left open, so
    /// it is recorded ([`RepairKind::CloseTagInValue`]).
    fn close_as_content(&mut self, len: usize, abs: u64) -> Lt {
        self.phase = Phase::Fresh;
        if let Some(v) = self.call.as_mut().and_then(|c| c.value.as_mut()) {
            v.note(RepairKind::CloseTagInValue, abs);
        }
        Lt::Content(len)
    }

    /// May a missing closing tag be inferred before this parameter tag?
    fn implicit_ok(&self, tag: &Tag<'_>) -> bool {
        let Some(name) = self.param_name(tag) else {
            return false;
        };
        let Some(call) = self.call.as_ref() else {
            return false;
        };
        let key = String::from_utf8_lossy(name);
        if call.seen.contains(key.as_ref()) {
            return false;
        }
        match self.schema_has(name) {
            Some(known) => known,
            None => matches!(self.syn.family, Family::Qwen | Family::Invoke) && self.prev_nl,
        }
    }

    /// Can `f` follow a closing tag of kind `cand`?
    fn follower_ok(&self, cand: Kind, f: &Tag<'_>) -> bool {
        let k = self.classify(f);
        match cand {
            Kind::ParamClose => match k {
                Kind::ParamOpen => {
                    let name = self.param_name(f).unwrap_or_default();
                    self.schema_has(name).unwrap_or(true) || self.typed_then_unseen(name)
                }
                Kind::KeyOpen
                | Kind::InvokeClose
                | Kind::ContainerClose
                | Kind::InvokeOpen
                | Kind::Skip => true,
                _ => false,
            },
            Kind::InvokeClose => {
                if self.container.is_some() {
                    matches!(
                        k,
                        Kind::ContainerClose | Kind::InvokeOpen | Kind::ContainerOpen | Kind::Skip
                    )
                } else {
                    matches!(k, Kind::InvokeOpen | Kind::ContainerOpen)
                }
            }
            Kind::ContainerClose => matches!(k, Kind::ContainerOpen | Kind::InvokeOpen),
            _ => false,
        }
    }

    /// A closing tag of kind `cand` (`len` bytes at the start of `w`) closes the value.
    fn accept(&mut self, cand: Kind, len: usize, at: u64) -> Lt {
        self.phase = Phase::Fresh;
        match cand {
            Kind::ParamClose => {
                self.close_value(None);
                Lt::Markup(len)
            }
            _ => {
                // The value's own closing tag is missing; the structural
                // state reads the tag again.
                self.close_value(Some(at));
                Lt::Markup(0)
            }
        }
    }

    /// The input ended (`cx.base` is its end).
    pub(crate) fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        let end = cx.base;
        if self.st == St::Reject {
            return false;
        }
        self.morph_start(cx);
        if self.call.is_none() {
            return false;
        }
        if !cx.committed() {
            let name_known = self.call.as_ref().is_some_and(|c| self.known_tool(&c.name));
            let glm = self.syn.family == Family::Glm && self.glm_nl;
            // A bare `</function>` whose follower was still being looked at.
            let closing = matches!(
                (self.st, self.phase),
                (
                    St::Invoke,
                    Phase::Follow {
                        cand: Kind::InvokeClose,
                        ..
                    }
                )
            );
            if !(name_known || glm || closing) {
                return false;
            }
            cx.commit();
        }
        // The unfed tail (a held window) ends the structure it started.
        let mut container_closed = false;
        match (self.st, self.phase) {
            (
                St::Invoke,
                Phase::Follow {
                    cand: Kind::InvokeClose,
                    ..
                },
            ) => self.close_invoke(end, None),
            (
                St::Value,
                Phase::Follow {
                    cand: Kind::ParamClose,
                    ..
                },
            ) => self.close_value(None),
            (St::Value, Phase::Follow { cand, .. }) => {
                self.close_value(Some(end));
                if cand == Kind::InvokeClose || cand == Kind::ContainerClose {
                    // The invoke's own close is missing when the container's closes it.
                    let missing = (cand == Kind::ContainerClose && self.syn.family != Family::Glm)
                        .then_some(end);
                    self.close_invoke(end, missing);
                    container_closed = cand == Kind::ContainerClose;
                }
            }
            (St::Value, Phase::CdataEnd(k)) => {
                let tail = vec![b']'; k];
                self.push(&tail, end - k as u64, true);
            }
            (St::GlmAfterKey, _) => self.key_without_value(end),
            (St::GlmKey, _) => {
                if let Some(c) = self.call.as_mut() {
                    c.repairs.push(Repair {
                        kind: RepairKind::DroppedKey,
                        offset: end,
                    });
                }
            }
            _ => {}
        }
        let closed = self.call.as_ref().is_some_and(|c| c.closed);
        let bare_done = self.container.is_none() && self.st == St::Invoke;
        if closed && !bare_done && !container_closed {
            if let Some(c) = self.call.as_mut() {
                c.repairs.push(Repair {
                    kind: RepairKind::MissingCloseTag,
                    offset: end,
                });
            }
        }
        self.end_call(cx, end, !closed);
        true
    }
}

/// What a `<` in a value turned out to be.
enum Lt {
    /// The window does not decide yet.
    NeedMore,
    /// The first `n` bytes are content.
    Content(usize),
    /// A CDATA opening marker of `n` bytes.
    Cdata(usize),
    /// Markup: the value was closed; continue `n` bytes on in the new state.
    Markup(usize),
}

/// Bytes of a GLM tool name.
fn is_glm_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':' | b'/' | b'@') || b >= 0x80
}

fn unquote(v: &[u8]) -> &[u8] {
    if v.len() >= 2 && (v[0] == b'"' || v[0] == b'\'') && v[v.len() - 1] == v[0] {
        &v[1..v.len() - 1]
    } else {
        v
    }
}

/// A block read entirely by the engine (every XML dialect except the ones
/// that share Hermes's `<tool_call>`, which [`super::hermes`] dispatches).
pub(crate) struct XmlBlock(pub(crate) XmlCalls);

impl super::Block for XmlBlock {
    fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow {
        self.0.feed(input, cx)
    }

    fn plain_chunk(&mut self, input: &[u8], cx: &mut Cx<'_>) -> bool {
        self.0.plain_chunk(input, cx)
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        self.0.finish(cx)
    }
}

/// The limit cut inside a value: the first character boundary at or after
/// `room` in `rest` (a limit never splits a UTF-8 character, so the value
/// stays valid and the text after the call starts on a character). The
/// cut depends only on the input bytes: `None` when the bytes that decide
/// it have not arrived yet.
fn char_end(rest: &[u8], room: usize) -> Option<usize> {
    let mut k = room;
    // At most three continuation bytes follow a lead byte.
    while k < rest.len() && k < room + 3 && rest[k] & 0xC0 == 0x80 {
        k += 1;
    }
    (k < rest.len() || k == room + 3).then_some(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A write to the arguments: bytes as they are, or text to escape.
    enum W<'a> {
        Bytes(&'a [u8]),
        Text(&'a str),
    }

    /// Writes `ws` to an [`ArgsText`], handing out a delta after each when
    /// `deltas` (else once at the end): (the deltas joined, the final
    /// text, the bytes the writes stand for, whether `head` was used).
    fn args_text_of(ws: &[W<'_>], deltas: bool) -> (Vec<u8>, String, Vec<u8>, bool) {
        let mut a = ArgsText::default();
        let mut handed = Vec::new();
        let mut want = Vec::new();
        let take = |a: &mut ArgsText, handed: &mut Vec<u8>| {
            let (first, second) = a.take_delta();
            handed.extend_from_slice(first);
            handed.extend_from_slice(second);
            assert_eq!(
                a.take_delta(),
                (&[] as &[u8], &[] as &[u8]),
                "a delta handed out twice"
            );
        };
        for w in ws {
            match w {
                W::Bytes(b) => {
                    a.bytes().extend_from_slice(b);
                    want.extend_from_slice(b);
                }
                W::Text(t) => {
                    a.escape_valid(t.as_bytes());
                    escape_bytes(t.as_bytes(), &mut want);
                }
            }
            if deltas {
                take(&mut a, &mut handed);
            }
        }
        take(&mut a, &mut handed);
        let used = !a.head.is_empty();
        (handed, a.into_string(), want, used)
    }

    #[test]
    fn args_text_hands_out_each_byte_once_and_ends_as_the_whole() {
        let long = "é\"\\ \n\t\u{1}x".repeat(HEAD_MOVE_MIN / 4);
        let short = "a \"b\"";
        let cases: Vec<Vec<W<'_>>> = vec![
            vec![],
            vec![W::Bytes(b"{\"a\": 1}")],
            vec![W::Bytes(b"{\"c\": \""), W::Text(short), W::Bytes(b"\"}")],
            vec![W::Bytes(b"{\"c\": \""), W::Text(&long), W::Bytes(b"\"}")],
            vec![
                W::Bytes(long.as_bytes()),
                W::Bytes(long.as_bytes()),
                W::Text(&long),
            ],
            vec![
                W::Text(&long),
                W::Bytes(b"x"),
                W::Text(short),
                W::Text(&long),
                W::Bytes(b"}"),
            ],
            vec![
                W::Bytes(&long.as_bytes()[..HEAD_MOVE_MIN - 1]),
                W::Bytes(b"}"),
            ],
        ];
        for ws in &cases {
            for deltas in [false, true] {
                let (handed, text, want, used) = args_text_of(ws, deltas);
                assert_eq!(handed, want);
                assert_eq!(text.as_bytes(), &want[..]);
                let long_text = ws
                    .iter()
                    .any(|w| matches!(w, W::Text(t) if t.len() >= HEAD_WRITE_MIN));
                if long_text {
                    assert!(used, "a long run is written to the text");
                }
                if !long_text && want.len() < HEAD_MOVE_MIN {
                    assert!(!used, "short arguments stay in the buffer");
                }
            }
        }
    }

    #[test]
    fn args_text_keeps_bytes_that_are_not_utf8_in_the_buffer() {
        // Never written by the value writers; if it were, nothing is lost
        // or checked twice: the text is made lossily once, at the end.
        let long = "a".repeat(HEAD_MOVE_MIN);
        let bad: &[u8] = b"\xff\xfe";
        for deltas in [false, true] {
            let ws = [
                W::Text(&long),
                W::Bytes(bad),
                W::Text(&long),
                W::Bytes(b"z"),
            ];
            let (handed, text, want, _) = args_text_of(&ws, deltas);
            assert_eq!(handed, want);
            assert_eq!(text, format!("{long}\u{FFFD}\u{FFFD}{long}z"));
        }
    }

    #[test]
    fn seen_names_are_a_set_in_the_list_and_past_it() {
        let mut seen = Seen::default();
        assert!(seen.is_empty());
        for n in 0..3 * SEEN_LIST {
            let name = format!("p{n}");
            assert!(!seen.contains(&name), "{name}");
            seen.insert(name.clone());
            assert!(seen.contains(&name), "{name}");
            assert!(!seen.is_empty());
            // Every name added before is still there, none other is.
            assert!((0..=n).all(|k| seen.contains(&format!("p{k}"))));
            assert!(!seen.contains(&format!("p{}", n + 1)));
        }
        assert!(seen.list.is_empty() && seen.set.len() == 3 * SEEN_LIST);
    }
}
