//! Pythonic calls: `[get_weather(city="Paris"), get_time()]`.
//!
//! Llama 3.2 (lightweight) and Llama 4, BFCL and ToolACE prompts, Gemma 3
//! prompts, LFM2 and Olmo3 write calls as a Python list of keyword calls. The
//! list is found bare in text, in ```` ```tool_code ````, ```` ```tool_call ````
//! and ```` ```python ```` fences, after `<|python_start|>`, inside
//! `<|tool_call_start|>…<|tool_call_end|>` (LFM2) and
//! `<function_calls>…</function_calls>` (Olmo3).
//!
//! # Decisions
//!
//! * **Recognition in text.** A `[` followed (after blanks, optionally a
//!   quote) by a name and `(` starts a candidate; so does a line that starts
//!   with `name(` (at the start of the output, after reasoning, or after a
//!   line break). A candidate in text *commits* only once its first call
//!   shows a keyword argument (`name(key=`), is empty (`name()`), or names a
//!   tool from [`crate::Config::tools`]. So `[1, 2]`, `[see(this)]` and
//!   `Note(1): …` stay text. Inside special tokens and tool fences the name
//!   and `(` suffice.
//! * **Values** are transcoded to JSON as documented in
//!   [`pyvalue`](super::pyvalue): strings, numbers, `True`/`False`/`None`,
//!   lists, tuples, dicts and sets map to their JSON forms.
//! * **Nested calls and other expressions** (`f(x=g(1))`, `x=data['k']`,
//!   `x=my_var`) are kept as **the string of their source text**
//!   (`"g(1)"`), with [`RepairKind::UnquotedString`]: the parser does not
//!   evaluate anything, a string keeps the expression intact, and a made-up
//!   object shape could not be told apart from a real dict argument.
//! * **Repairs.** Positional arguments are named after the tool's schema
//!   properties in order when the tool is known, else `arg0`, `arg1`, …
//!   ([`RepairKind::SyntaxFix`]); so are `key: value` arguments, calls
//!   written as strings (`['f(x=1)']`), quoted names (`'f'(x=1)`) and
//!   markdown-escaped names (`get\_weather`). A missing comma between
//!   arguments, an unclosed string, bracket or call are repaired like JSON.
//!   Calls joined by an operator in a list (`[f(…) + f(…)]`, `or`, `and`,
//!   `;`, `||`) or on a line (`f(…) or f(…)`) are each a call; `101L` is the integer 101; `from=` takes
//!   the schema's `_from` when the schema has it and not `from`
//!   ([`RepairKind::SyntaxFix`] for each). A call of an offered tool after
//!   the list on its line (`[f(…)], g(…)`) is one more call. In a call
//!   written as a string whose inner quotes are escaped
//!   (`['f(a=\'x\')']`) the escaped quote delimits its strings. A `#`
//!   comment (to its line break) is skipped between a list's items and
//!   between a call's arguments, and, in a code fence, as a line between
//!   calls.
//!   Anything else that does not parse is skipped up to the next `,` or
//!   closer ([`RepairKind::TrailingGarbage`]) once the block has committed,
//!   and turns the candidate back into text before that.
//! * **Schema typing.** With the tool's schema, an integer for a `float` or
//!   `double` parameter is written as a float (`12.0`), and an unquoted
//!   expression for a numeric parameter is held (up to the token limit) and
//!   read as a number when it is one with decoration (`$50000`, `60%`,
//!   `8.854 x 10^-12`), with [`RepairKind::TypeCoercion`].
//! * **Incremental.** The reader is a resumable state machine: each byte is
//!   read a bounded number of times, lookahead is bounded (a name, an
//!   escape), and argument deltas stream as values are read.

use std::sync::Arc;

use super::pyvalue::{kwarg_head, Flavor, KwHead, VStep, ValueLexer, Writer};
use super::{Action, Block, BlockArgs, Cx, Flow, Resume, Trigger};
use crate::config::{Config, Limits, Param};
use crate::event::{Repair, RepairKind, Span};
use crate::json::into_string;
use crate::scan::{Match, Pattern};

pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        pattern: Pattern::Custom {
            first: b"[",
            matches: bracket_call,
        },
        action: Action::Block {
            open: open_weak,
            consume: false,
        },
    },
    Trigger {
        pattern: Pattern::Line { matches: line_call },
        action: Action::Block {
            open: open_weak,
            consume: false,
        },
    },
    Trigger {
        pattern: Pattern::Lit(b"```"),
        action: Action::Block {
            open: super::json::open_python_fence,
            consume: true,
        },
    },
];

const MAX_NAME: usize = 256;

/// An operator between two calls in a list (`+`, `;`, `|`, `&`, `||`,
/// `&&`, `or`, `and`): the model joined calls it means to make all of.
/// A word operator must be followed by a blank.
fn call_joiner(at: &[u8]) -> Match {
    match at.first() {
        None => Match::Partial,
        Some(b'+' | b';') => Match::Full(1),
        Some(&c @ (b'|' | b'&')) => match at.get(1) {
            None => Match::Partial,
            Some(&d) if d == c => Match::Full(2),
            Some(_) => Match::Full(1),
        },
        Some(b'o' | b'a') => {
            for w in [&b"or"[..], b"and"] {
                match crate::scan::match_lit(w, at) {
                    Match::Full(n) => {
                        return match at.get(n) {
                            None => Match::Partial,
                            Some(c) if c.is_ascii_whitespace() => Match::Full(n),
                            Some(_) => Match::No,
                        }
                    }
                    Match::Partial => return Match::Partial,
                    Match::No => {}
                }
            }
            Match::No
        }
        Some(_) => Match::No,
    }
}

/// Most blanks read between a joining operator and the call after it.
const JOIN_BLANKS: usize = 16;

/// An operator (see [`call_joiner`]) followed by a call: `Full(n)` covers
/// the operator. Decided within a bounded lookahead (the operator, at most
/// [`JOIN_BLANKS`] blanks, the next call's head), so the answer does not
/// depend on how the input was cut.
fn joined_call(at: &[u8], strong: bool) -> Match {
    let n = match call_joiner(at) {
        Match::Full(n) => n,
        m => return m,
    };
    let mut k = n;
    while k < at.len() && k <= n + JOIN_BLANKS && (at[k] == b' ' || at[k] == b'\t') {
        k += 1;
    }
    let Some(&b) = at.get(k) else {
        return Match::Partial;
    };
    if k > n + JOIN_BLANKS || !next_call_start(b, strong) {
        return Match::No;
    }
    match item_head(&at[k..]) {
        Head::Full { .. } | Head::Pair { .. } => Match::Full(n),
        Head::Partial => Match::Partial,
        Head::No => Match::No,
    }
}

/// After a list of calls (`at` follows its `]`): blanks, a comma, blanks and
/// the head of a call of an offered tool on the same line. `Full(n)` covers
/// what comes before the call. A bounded lookahead, like [`joined_call`].
fn list_then_call(at: &[u8], cx: &Cx<'_>) -> Match {
    let blanks = |from: usize| {
        let mut k = from;
        while k < at.len() && k <= from + JOIN_BLANKS && (at[k] == b' ' || at[k] == b'\t') {
            k += 1;
        }
        k
    };
    let k = blanks(0);
    match at.get(k) {
        None => return Match::Partial,
        Some(b',') => {}
        Some(_) => return Match::No,
    }
    let k = blanks(k + 1);
    let Some(&b) = at.get(k) else {
        return Match::Partial;
    };
    if !is_ident_start(b) {
        return Match::No;
    }
    match call_head(&at[k..], false) {
        Head::Full { start, end, .. } => {
            let name = normalize_name(&at[k + start..k + end]);
            if cx.known_tool(&name) {
                Match::Full(k)
            } else {
                Match::No
            }
        }
        Head::Partial => Match::Partial,
        _ => Match::No,
    }
}

/// A byte the next call on a line may start with: a name (possibly with a
/// markdown-escaped `\_`), or with `strong` a quoted call (`'f(x=1)'`).
#[inline]
fn next_call_start(b: u8, strong: bool) -> bool {
    is_ident_start(b) || b == b'\\' || (strong && (b == b'\'' || b == b'"'))
}

#[inline]
fn is_ident_byte(b: u8) -> bool {
    IDENT[b as usize]
}

/// [`is_ident_byte`] as a table: names are read at every line start.
static IDENT: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
        b += 1;
    }
    t
};

#[inline]
fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

/// The head of a call: a (dotted) name, optional blanks, `(`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Head {
    No,
    Partial,
    /// `'name', {`: a call written as a name string and an arguments dict;
    /// the name is `at[start..end]`, the dict starts at `len`.
    Pair {
        start: usize,
        end: usize,
        len: usize,
    },
    /// The name is `at[start..end]`; the head is `len` bytes through `(`.
    Full {
        start: usize,
        end: usize,
        len: usize,
        /// The call is written inside a string (`'f(x=1)'`): its quote.
        quote: Option<u8>,
        /// The name was quoted (`'f'(x=1)`).
        quoted_name: bool,
    },
}

/// Length of a name at the start of `at` (`Err(())`: the input ended inside it).
fn name_len(at: &[u8]) -> Result<usize, ()> {
    let mut i = 0;
    while i < at.len() && i < MAX_NAME {
        let b = at[i];
        if is_ident_byte(b) || (i > 0 && (b == b'.' || b == b'-')) {
            i += 1;
        } else if b == b'\\' {
            // A markdown-escaped underscore.
            match at.get(i + 1) {
                None => return Err(()),
                Some(b'_') => i += 2,
                Some(_) => break,
            }
        } else {
            break;
        }
    }
    if i == at.len() && i < MAX_NAME {
        return Err(());
    }
    let first_ok = at.first().is_some_and(|&b| is_ident_start(b) || b == b'\\');
    Ok(if first_ok && i < MAX_NAME { i } else { 0 })
}

/// `name(` or `name (`; `spaces`: blanks allowed before `(`.
pub(crate) fn call_head(at: &[u8], spaces: bool) -> Head {
    let Ok(n) = name_len(at) else {
        return Head::Partial;
    };
    if n == 0 {
        return Head::No;
    }
    let mut i = n;
    if spaces {
        while i < at.len() && (at[i] == b' ' || at[i] == b'\t') && i < n + 8 {
            i += 1;
        }
    }
    match at.get(i) {
        None => Head::Partial,
        Some(b'(') => Head::Full {
            start: 0,
            end: n,
            len: i + 1,
            quote: None,
            quoted_name: false,
        },
        Some(_) => Head::No,
    }
}

/// A list item that is a call: `name(`, `'name(` (a call written as a
/// string) or `'name'(`.
pub(crate) fn item_head(at: &[u8]) -> Head {
    let Some(&q) = at.first() else {
        return Head::Partial;
    };
    if q != b'\'' && q != b'"' {
        return call_head(at, true);
    }
    match call_head(&at[1..], true) {
        Head::Full { end, len, .. } => Head::Full {
            start: 1,
            end: end + 1,
            len: len + 1,
            quote: Some(q),
            quoted_name: false,
        },
        Head::Partial => Head::Partial,
        _ => {
            let Ok(n) = name_len(&at[1..]) else {
                return Head::Partial;
            };
            if n == 0 {
                return Head::No;
            }
            let mut i = 1 + n;
            match at.get(i) {
                None => return Head::Partial,
                Some(&c) if c == q => i += 1,
                Some(_) => return Head::No,
            }
            while i < at.len() && at[i] == b' ' && i < n + 10 {
                i += 1;
            }
            match at.get(i) {
                None => Head::Partial,
                Some(b'(') => Head::Full {
                    start: 1,
                    end: 1 + n,
                    len: i + 1,
                    quote: None,
                    quoted_name: true,
                },
                Some(b',') => {
                    // `'name', {…}`
                    i += 1;
                    let lim = i + 16;
                    while i < at.len() && at[i].is_ascii_whitespace() && i < lim {
                        i += 1;
                    }
                    match at.get(i) {
                        // Cut at the bound too: the byte there decides.
                        None => Head::Partial,
                        Some(b'{') => Head::Pair {
                            start: 1,
                            end: 1 + n,
                            len: i,
                        },
                        _ => Head::No,
                    }
                }
                Some(_) => Head::No,
            }
        }
    }
}

/// `['name'](`: a quoted name alone in a list, then the arguments.
pub(crate) fn bracketed_name_head(at: &[u8]) -> Head {
    let Some(&q) = at.get(1) else {
        return Head::Partial;
    };
    if q != b'\'' && q != b'"' {
        return Head::No;
    }
    let Ok(n) = name_len(&at[2..]) else {
        return Head::Partial;
    };
    if n == 0 {
        return Head::No;
    }
    let close = [q, b']', b'('];
    for (k, want) in close.iter().enumerate() {
        match at.get(2 + n + k) {
            None => return Head::Partial,
            Some(c) if c == want => {}
            Some(_) => return Head::No,
        }
    }
    Head::Full {
        start: 2,
        end: 2 + n,
        len: 2 + n + 3,
        quote: None,
        quoted_name: true,
    }
}

/// `[`, blanks, then a call item.
fn bracket_call(at: &[u8]) -> Match {
    match bracketed_name_head(at) {
        Head::Full { .. } => return Match::Full(1),
        Head::Partial => return Match::Partial,
        _ => {}
    }
    const MAX_BLANK: usize = 64;
    let mut i = 1;
    while i < at.len() && (at[i].is_ascii_whitespace() || (at[i] == b'[' && i < 4)) {
        i += 1;
        if i > MAX_BLANK {
            return Match::No;
        }
    }
    if i == at.len() {
        return Match::Partial;
    }
    match item_head(&at[i..]) {
        Head::Full { .. } | Head::Pair { .. } => Match::Full(1),
        Head::Partial => Match::Partial,
        Head::No => Match::No,
    }
}

/// Markdown that may start a line before a bare call: `**`, `* `, `- `,
/// `> `, `## `, `1. ` (and blanks).
fn is_line_prefix(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'*' | b'#' | b'>' | b'-' | b'0'..=b'9' | b'.'
    )
}

/// A line that starts with `name(` (after blanks and markdown list,
/// heading, quote or emphasis marks).
fn line_call(at: &[u8]) -> Match {
    let mut i = 0;
    while i < at.len() && is_line_prefix(at[i]) {
        i += 1;
        if i > 16 {
            return Match::No;
        }
    }
    if i == at.len() {
        return Match::Partial;
    }
    match call_head(&at[i..], false) {
        Head::Full { .. } => Match::Full(i + 1),
        Head::Partial => Match::Partial,
        Head::No | Head::Pair { .. } => Match::No,
    }
}

fn open_weak(a: &BlockArgs<'_>) -> Box<dyn Block> {
    Box::new(PyBlock {
        py: PyCalls::new(
            a.cfg,
            PyOpts {
                strong: false,
                stops: b"",
                multiline: false,
                strip_call: false,
            },
        ),
    })
}

/// A pythonic candidate found in text.
struct PyBlock {
    py: PyCalls,
}

impl Block for PyBlock {
    fn plain_chunk(&mut self, input: &[u8], cx: &mut Cx<'_>) -> bool {
        self.py.plain_chunk(input, cx)
    }

    fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> Flow {
        let p = self.py.feed(input, cx);
        if !cx.committed() && self.py.evidence() {
            cx.commit();
        }
        match p.status {
            PyStatus::NeedMore => Flow::More,
            PyStatus::Partial => Flow::Partial(p.consumed),
            PyStatus::Reject => Flow::Reject {
                at: p.consumed,
                then: Resume::Text,
            },
            PyStatus::Done | PyStatus::Stop => {
                if !cx.committed() {
                    return Flow::Reject {
                        at: p.consumed,
                        then: Resume::Text,
                    };
                }
                let end = cx.abs(p.consumed);
                self.py.close(cx, end, false);
                self.py.end_all(cx, end, Vec::new());
                Flow::Done(p.consumed)
            }
        }
    }

    fn finish(&mut self, cx: &mut Cx<'_>) -> bool {
        let end = cx.base;
        self.py.close(cx, end, true);
        if !cx.committed() && self.py.evidence() {
            cx.commit();
        }
        if !cx.committed() {
            return false;
        }
        let end = cx.base;
        self.py.end_all(cx, end, Vec::new());
        true
    }
}

/// How a [`PyCalls`] reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PyOpts {
    /// Inside markup that announces calls: a name and `(` suffice.
    pub strong: bool,
    /// Bytes that, in structural position, stop reading so the wrapper can
    /// look for its closing token.
    pub stops: &'static [u8],
    /// Bare calls go on across line breaks.
    pub multiline: bool,
    /// `brave_search.call(…)` names `brave_search` (Llama 3.1 built-in tools).
    pub strip_call: bool,
}

/// Why [`PyCalls::feed`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PyStatus {
    /// All input consumed.
    NeedMore,
    /// The calls ended; `consumed` bytes belong to them.
    Done,
    /// `consumed` bytes were read; feed the rest again with more input.
    Partial,
    /// A stop byte in structural position at `consumed`.
    Stop,
    /// Not pythonic calls (before any evidence): text up to `consumed`.
    Reject,
}

/// The result of [`PyCalls::feed`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct PyProgress {
    pub consumed: usize,
    pub status: PyStatus,
}

#[derive(Debug)]
struct Call {
    local: usize,
    w: Writer,
    closed: bool,
    ended: bool,
    end: u64,
    truncated: bool,
    n_args: usize,
    used: Vec<String>,
    /// The tool's parameters in schema order (`None` for an unknown tool).
    /// A parameter typed `float` or `double` (BFCL's type names) gets an
    /// integer written as a float (`12.0`); one typed as a number of any
    /// kind reads a number written with decoration (`$50000`).
    params: Option<Arc<[Param]>>,
    /// The call's `{` has been written.
    opened: bool,
    /// The arguments are a dict written as the only positional argument
    /// (`f({'a': 1})`) or after the name string (`['f', {'a': 1}]`).
    dict_args: bool,
    /// Written as `'name', {…}`: the call ends with its dict.
    pair: bool,
    /// A dict as the arguments counts as evidence: the tool is known or
    /// its name looks like code (`get_weather`, not `print`).
    dict_ok: bool,
}

impl Call {
    /// The tool's parameters in schema order (none for an unknown tool).
    fn params(&self) -> &[Param] {
        self.params.as_deref().unwrap_or_default()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Lead,
    Item,
    ArgStart,
    Value,
    AfterArg,
    AfterCall,
    Skip {
        depth: u32,
        quote: u8,
        esc: bool,
        list: bool,
    },
    /// A `#` comment (Python's): skipped to its line break (or a byte that
    /// ends the block), then the reader is back in the state it left.
    Comment(Back),
    Done,
}

/// Where a `#` comment was, so where the reader goes on after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Back {
    /// A comment line between calls in a code fence.
    Line,
    /// Between a list's items.
    Item,
    /// After a call in a list.
    AfterCall,
    /// Between a call's arguments.
    ArgStart,
    AfterArg,
}

/// Reads pythonic calls and streams them to the block's [`Cx`].
pub(crate) struct PyCalls {
    opts: PyOpts,
    st: St,
    list_depth: usize,
    wrap_quote: Option<u8>,
    /// The list's closing `]` waits for the bytes after it (a call may
    /// follow on its line, see [`list_then_call`]).
    tail_pending: bool,
    /// A `;` or `,` followed the last bare call.
    sep_seen: bool,
    calls: Vec<Call>,
    lexer: Option<ValueLexer>,
    evidence: bool,
    skip_stop: bool,
    /// A line break since the last value or call (calls in prose end at
    /// text that follows on a new line).
    nl_seen: bool,
    limits: Limits,
    base: u64,
}

type StepResult = Result<usize, (PyStatus, usize)>;

impl PyCalls {
    pub(crate) fn new(cfg: &Config, opts: PyOpts) -> Self {
        PyCalls {
            opts,
            st: St::Lead,
            list_depth: 0,
            wrap_quote: None,
            tail_pending: false,
            sep_seen: false,
            calls: Vec::new(),
            lexer: None,
            evidence: false,
            skip_stop: false,
            nl_seen: false,
            limits: cfg.limits.clone(),
            base: 0,
        }
    }

    /// True once the calls are known to be calls (see the module docs).
    pub(crate) fn evidence(&self) -> bool {
        self.evidence
    }

    /// After a [`PyStatus::Stop`] that was not the wrapper's closing token.
    pub(crate) fn resume_stop(&mut self) {
        match self.lexer.as_mut() {
            Some(l) if self.st == St::Value => l.resume_stop(),
            _ => self.skip_stop = true,
        }
    }

    #[inline]
    fn abs(&self, i: usize) -> u64 {
        self.base + i as u64
    }

    fn is_stop(&mut self, b: u8) -> bool {
        if self.opts.stops.contains(&b) {
            if self.skip_stop {
                self.skip_stop = false;
                return false;
            }
            return true;
        }
        false
    }

    /// Feeds input whose first byte is at `cx.base`.
    pub(crate) fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>) -> PyProgress {
        self.base = cx.base;
        let mut i = 0;
        let status = loop {
            if i >= input.len() {
                break PyStatus::NeedMore;
            }
            match self.step(input, i, cx) {
                Ok(n) => i = n,
                Err((s, n)) => {
                    i = n;
                    break s;
                }
            }
        };
        self.sync(cx, Span::new(cx.base, cx.abs(i)));
        PyProgress {
            consumed: i,
            status,
        }
    }

    /// Takes `input` if it is a chunk of a string argument's content that
    /// the lexer would only pass on ([`ValueLexer::plain_chunk`]): written
    /// and streamed as [`PyCalls::feed`] would, without reading it byte by
    /// byte. False, and nothing done, for any other chunk.
    pub(crate) fn plain_chunk(&mut self, input: &[u8], cx: &mut Cx<'_>) -> bool {
        if self.st != St::Value {
            return false;
        }
        let (Some(lx), Some(c)) = (self.lexer.as_mut(), self.calls.last_mut()) else {
            return false;
        };
        if c.ended || !lx.plain_chunk(input, cx.base, &mut c.w) {
            return false;
        }
        let span = Span::new(cx.base, cx.abs(input.len()));
        cx.args(c.local, c.w.take_delta(), span);
        true
    }

    fn sync(&mut self, cx: &mut Cx<'_>, span: Span) {
        if let Some(c) = self.calls.last_mut() {
            if !c.ended {
                cx.args(c.local, c.w.take_delta(), span);
            }
        }
    }

    fn step(&mut self, input: &[u8], i: usize, cx: &mut Cx<'_>) -> StepResult {
        let b = input[i];
        match self.st {
            St::Done => Err((PyStatus::Done, i)),
            St::Comment(back) => {
                let stops = self.opts.stops;
                let Some(p) = input[i..]
                    .iter()
                    .position(|&b| b == b'\n' || stops.contains(&b))
                else {
                    return Ok(input.len());
                };
                self.st = match back {
                    Back::Line | Back::AfterCall => St::AfterCall,
                    Back::Item => St::Item,
                    Back::ArgStart => St::ArgStart,
                    Back::AfterArg => St::AfterArg,
                };
                if back == Back::Line {
                    self.sep_seen = false;
                }
                // The line break is the state's own to read (a stop byte too).
                Ok(i + p)
            }
            St::Lead => {
                if b.is_ascii_whitespace() || (!self.opts.strong && is_line_prefix(b)) {
                    return Ok(i + 1);
                }
                if b == b'[' {
                    // `['name'](…)`: a name in a list, then the arguments.
                    match bracketed_name_head(&input[i..]) {
                        h @ Head::Full { .. } => return self.start_call_with(h, input, i, cx),
                        Head::Partial => return Err((PyStatus::Partial, i)),
                        _ => {}
                    }
                    self.list_depth = 1;
                    self.st = St::Item;
                    return Ok(i + 1);
                }
                if self.is_stop(b) {
                    return Err((PyStatus::Stop, i));
                }
                match item_head(&input[i..]) {
                    Head::Full { .. } | Head::Pair { .. } => self.start_call(input, i, cx),
                    Head::Partial => Err((PyStatus::Partial, i)),
                    Head::No => Err((PyStatus::Reject, i)),
                }
            }
            St::Item => {
                if b.is_ascii_whitespace() || b == b',' {
                    self.nl_seen |= b == b'\n';
                    return Ok(i + 1);
                }
                match b {
                    b'#' => {
                        self.st = St::Comment(Back::Item);
                        Ok(i + 1)
                    }
                    b']' => {
                        if self.list_depth == 1 {
                            self.tail_pending = false;
                            match list_then_call(&input[i + 1..], cx) {
                                Match::Partial => {
                                    // Closed, unless the input ends here (see `close`).
                                    self.tail_pending = true;
                                    return Err((PyStatus::Partial, i));
                                }
                                // `[f(…), f(…)], g(…)`: one more call of an
                                // offered tool after the list, on its line.
                                Match::Full(n) => {
                                    self.list_depth = 0;
                                    let end = self.abs(i + 1 + n);
                                    let c = self.cur();
                                    c.w.repair(RepairKind::SyntaxFix, end);
                                    c.end = end;
                                    self.sep_seen = true;
                                    self.st = St::AfterCall;
                                    return Ok(i + 1 + n);
                                }
                                Match::No => {}
                            }
                        }
                        self.list_depth -= 1;
                        if self.list_depth == 0 {
                            self.st = St::Done;
                            if let Some(c) = self.calls.last_mut() {
                                c.end = self.base + i as u64 + 1;
                            }
                            return Err((PyStatus::Done, i + 1));
                        }
                        Ok(i + 1)
                    }
                    b'[' => {
                        self.list_depth += 1;
                        Ok(i + 1)
                    }
                    _ if self.is_stop(b) => Err((PyStatus::Stop, i)),
                    _ => match item_head(&input[i..]) {
                        Head::Full { .. } | Head::Pair { .. } => self.start_call(input, i, cx),
                        Head::Partial => Err((PyStatus::Partial, i)),
                        Head::No => self.garbage(i, true),
                    },
                }
            }
            St::ArgStart => {
                if b.is_ascii_whitespace() {
                    self.nl_seen |= b == b'\n';
                    return Ok(i + 1);
                }
                match b {
                    b'#' => {
                        self.st = St::Comment(Back::ArgStart);
                        Ok(i + 1)
                    }
                    b')' => self.close_call(i),
                    b'{' if self.cur().n_args == 0 => {
                        // `f({'a': 1})`: the dict is the arguments.
                        let at = self.abs(i);
                        self.dict_args(at);
                        Ok(i)
                    }
                    b',' => {
                        let at = self.abs(i);
                        self.cur().w.repair(RepairKind::ExtraComma, at);
                        Ok(i + 1)
                    }
                    _ if self.is_stop(b) => Err((PyStatus::Stop, i)),
                    _ if is_ident_start(b) || b == b'\\' => match kwarg_head(&input[i..]) {
                        KwHead::Full { name, len, colon } => {
                            let mut key = normalize_name(&input[i..i + name]);
                            let at = self.abs(i);
                            let c = self.cur();
                            let mut fixed = key.len() != name || colon;
                            if let Some(k) = keyword_param(&key, c.params()) {
                                // `from=` where the schema says `_from`.
                                key = k;
                                fixed = true;
                            }
                            if fixed {
                                c.w.repair(RepairKind::SyntaxFix, at);
                            }
                            self.evidence = true;
                            self.begin_arg(key, at);
                            Ok(i + len)
                        }
                        KwHead::Partial => Err((PyStatus::Partial, i)),
                        KwHead::No => self.positional(i),
                    },
                    _ => self.positional(i),
                }
            }
            St::Value => {
                let base = self.abs(i);
                let Some(lx) = self.lexer.as_mut() else {
                    self.st = St::AfterArg;
                    return Ok(i);
                };
                let Some(c) = self.calls.last_mut() else {
                    return Err((PyStatus::Reject, i));
                };
                match lx.feed(&input[i..], base, &mut c.w) {
                    VStep::More => Ok(input.len()),
                    VStep::Done(n) => {
                        let missing_comma = lx.missing_comma;
                        self.nl_seen = lx.newline_after;
                        self.lexer = None;
                        if c.pair {
                            c.closed = true;
                            c.end = base + n as u64;
                            if !self.evidence {
                                return Err((PyStatus::Reject, i + n));
                            }
                            self.st = St::AfterCall;
                        } else if missing_comma {
                            c.w.repair(RepairKind::MissingComma, base + n as u64);
                            self.st = St::ArgStart;
                        } else {
                            self.st = St::AfterArg;
                        }
                        Ok(i + n)
                    }
                    VStep::Partial(n) => Err((PyStatus::Partial, i + n)),
                    VStep::Stop(n) => Err((PyStatus::Stop, i + n)),
                }
            }
            St::AfterArg => {
                if b.is_ascii_whitespace() {
                    self.nl_seen |= b == b'\n';
                    return Ok(i + 1);
                }
                match b {
                    _ if self.cur().dict_args && (b == b',' || is_ident_start(b)) => {
                        // More arguments after a dict that already is the
                        // object, with or without a comma (`f({"x": 1} q=2)`).
                        let at = self.abs(i);
                        self.cur().w.repair(RepairKind::TrailingGarbage, at);
                        self.st = St::Skip {
                            depth: 0,
                            quote: 0,
                            esc: false,
                            list: false,
                        };
                        Ok(i + usize::from(b == b','))
                    }
                    b'#' => {
                        self.st = St::Comment(Back::AfterArg);
                        Ok(i + 1)
                    }
                    b',' => {
                        self.st = St::ArgStart;
                        Ok(i + 1)
                    }
                    b')' => self.close_call(i),
                    _ if self.is_stop(b) => Err((PyStatus::Stop, i)),
                    _ if is_ident_start(b) => match kwarg_head(&input[i..]) {
                        KwHead::Full { .. } => {
                            let at = self.abs(i);
                            self.cur().w.repair(RepairKind::MissingComma, at);
                            self.st = St::ArgStart;
                            Ok(i)
                        }
                        KwHead::Partial => Err((PyStatus::Partial, i)),
                        KwHead::No => self.garbage(i, false),
                    },
                    _ => self.garbage(i, false),
                }
            }
            St::AfterCall => {
                if let Some(q) = self.wrap_quote {
                    if b == b' ' {
                        return Ok(i + 1);
                    }
                    self.wrap_quote = None;
                    if b == q {
                        let end = self.abs(i + 1);
                        self.cur().end = end;
                        return Ok(i + 1);
                    }
                }
                if self.list_depth > 0 {
                    if b.is_ascii_whitespace() {
                        self.nl_seen |= b == b'\n';
                        return Ok(i + 1);
                    }
                    // (Not after a line break in prose: see `garbage`.)
                    if self.evidence && (self.opts.strong || !self.nl_seen) {
                        // `[f(a=1) + f(a=2)]`, `[f(…) or f(…)]`: calls
                        // joined by an operator are each a call (the list
                        // holds calls, not an expression to evaluate).
                        match call_joiner(&input[i..]) {
                            Match::Full(n) => {
                                let at = self.abs(i);
                                if let Some(c) = self.calls.last_mut() {
                                    c.w.repair(RepairKind::SyntaxFix, at);
                                }
                                return Ok(i + n);
                            }
                            Match::Partial => return Err((PyStatus::Partial, i)),
                            Match::No => {}
                        }
                    }
                    return match b {
                        b'#' => {
                            self.st = St::Comment(Back::AfterCall);
                            Ok(i + 1)
                        }
                        b',' | b']' | b'[' | b'\'' | b'"' => {
                            self.st = St::Item;
                            Ok(i)
                        }
                        _ if is_ident_start(b) || b == b'\\' => {
                            self.st = St::Item;
                            Ok(i)
                        }
                        _ if self.is_stop(b) => Err((PyStatus::Stop, i)),
                        _ => self.garbage(i, true),
                    };
                }
                if !self.sep_seen && self.evidence && matches!(b, b'+' | b'|' | b'&' | b'o' | b'a')
                {
                    // `f(…) or f(…)` on a line, as in a list: calls joined
                    // by an operator are each a call (when a call follows).
                    match joined_call(&input[i..], self.opts.strong) {
                        Match::Full(n) => {
                            let at = self.abs(i);
                            self.sep_seen = true;
                            let c = self.cur();
                            c.w.repair(RepairKind::SyntaxFix, at);
                            c.end = at + n as u64;
                            return Ok(i + n);
                        }
                        Match::Partial => return Err((PyStatus::Partial, i)),
                        Match::No => {}
                    }
                }
                match b {
                    b' ' | b'\t' => Ok(i + 1),
                    // `# …` in a code fence: a comment line, calls may follow.
                    b'#' if self.opts.multiline => {
                        self.st = St::Comment(Back::Line);
                        Ok(i + 1)
                    }
                    b';' | b',' if !self.sep_seen => {
                        self.sep_seen = true;
                        let end = self.abs(i + 1);
                        self.cur().end = end;
                        Ok(i + 1)
                    }
                    b'\n' | b'\r' if self.opts.multiline => {
                        self.sep_seen = false;
                        Ok(i + 1)
                    }
                    _ if self.is_stop(b) => Err((PyStatus::Stop, i)),
                    _ if next_call_start(b, self.opts.strong) => match item_head(&input[i..]) {
                        Head::Full { .. } | Head::Pair { .. } => {
                            self.sep_seen = false;
                            self.start_call(input, i, cx)
                        }
                        Head::Partial => Err((PyStatus::Partial, i)),
                        Head::No => Err((PyStatus::Done, i)),
                    },
                    _ => Err((PyStatus::Done, i)),
                }
            }
            St::Skip {
                mut depth,
                mut quote,
                mut esc,
                list,
            } => {
                let mut k = i;
                while k < input.len() {
                    let c = input[k];
                    if quote != 0 {
                        if esc {
                            esc = false;
                        } else if c == b'\\' {
                            esc = true;
                        } else if c == quote || c == b'\n' {
                            quote = 0;
                        }
                        k += 1;
                        continue;
                    }
                    match c {
                        b'\'' | b'"' => quote = c,
                        b'(' | b'[' | b'{' => depth += 1,
                        // Only what ends the context ends the skip: `,` and
                        // the list's `]` or the call's `)`.
                        b',' if depth == 0 => {
                            self.st = if list { St::AfterCall } else { St::AfterArg };
                            return Ok(k);
                        }
                        b']' if depth == 0 && list => {
                            self.st = St::AfterCall;
                            return Ok(k);
                        }
                        b')' if depth == 0 && !list => {
                            self.st = St::AfterArg;
                            return Ok(k);
                        }
                        b'\n' if depth == 0 && !self.opts.strong => {
                            self.st = St::Skip {
                                depth,
                                quote,
                                esc,
                                list,
                            };
                            return Err((PyStatus::Done, k));
                        }
                        b')' | b']' | b'}' if depth == 0 => {}
                        b')' | b']' | b'}' => depth -= 1,
                        _ if depth == 0 && self.opts.stops.contains(&c) => {
                            self.st = St::Skip {
                                depth,
                                quote,
                                esc,
                                list,
                            };
                            if self.skip_stop {
                                self.skip_stop = false;
                            } else {
                                return Err((PyStatus::Stop, k));
                            }
                        }
                        _ => {}
                    }
                    k += 1;
                }
                self.st = St::Skip {
                    depth,
                    quote,
                    esc,
                    list,
                };
                Ok(k)
            }
        }
    }

    fn cur(&mut self) -> &mut Call {
        let n = self.calls.len();
        &mut self.calls[n - 1]
    }

    /// Something that is not part of a call.
    fn garbage(&mut self, i: usize, list: bool) -> StepResult {
        if !self.evidence {
            return Err((PyStatus::Reject, i));
        }
        if self.nl_seen && !self.opts.strong {
            // Prose on a new line after broken calls: the calls end here
            // (closing what is open), the prose stays text.
            return Err((PyStatus::Done, i));
        }
        let at = self.abs(i);
        if let Some(c) = self.calls.last_mut() {
            c.w.repair(RepairKind::TrailingGarbage, at);
        }
        self.st = St::Skip {
            depth: 0,
            quote: 0,
            esc: false,
            list,
        };
        Ok(i)
    }

    fn start_call(&mut self, input: &[u8], i: usize, cx: &mut Cx<'_>) -> StepResult {
        let head = item_head(&input[i..]);
        self.start_call_with(head, input, i, cx)
    }

    fn start_call_with(
        &mut self,
        head: Head,
        input: &[u8],
        i: usize,
        cx: &mut Cx<'_>,
    ) -> StepResult {
        let (start, end, len, quote, quoted_name, pair) = match head {
            Head::Full {
                start,
                end,
                len,
                quote,
                quoted_name,
            } => (start, end, len, quote, quoted_name, false),
            Head::Pair { start, end, len } => (start, end, len, None, true, true),
            _ => return Err((PyStatus::Reject, i)),
        };
        let raw = &input[i + start..i + end];
        let mut name = normalize_name(raw);
        let mut fixes = Vec::new();
        let at = self.abs(i);
        if let Some(rest) = name.strip_prefix("functions.").filter(|r| !r.is_empty()) {
            // An OpenAI-style namespace.
            name = rest.to_owned();
            fixes.push(Repair {
                kind: RepairKind::SyntaxFix,
                offset: at,
            });
        }
        if name.len() != raw.len() && fixes.is_empty() || quote.is_some() || quoted_name {
            fixes.push(Repair {
                kind: RepairKind::SyntaxFix,
                offset: at,
            });
        }
        if self.opts.strip_call && name.len() > 5 && name.ends_with(".call") {
            name.truncate(name.len() - 5);
        }
        let known = cx.known_tool(&name);
        let dict_ok = known || name.contains('_');
        if self.opts.strong || (pair && dict_ok) || known {
            self.evidence = true;
        }
        self.end_closed(cx);
        let params = params_of(cx.cfg, &name);
        let local = cx.start(name, None, Span::new(at, self.abs(i + len)));
        let mut w = Writer::new(&self.limits);
        w.repairs = fixes;
        self.calls.push(Call {
            local,
            w,
            closed: false,
            ended: false,
            end: at,
            truncated: false,
            n_args: 0,
            used: Vec::new(),
            params,
            opened: false,
            dict_args: false,
            pair,
            dict_ok,
        });
        self.wrap_quote = quote;
        if pair {
            self.dict_args(self.abs(i + len));
        } else {
            self.st = St::ArgStart;
        }
        Ok(i + len)
    }

    /// The arguments are one dict (its `{` is next).
    fn dict_args(&mut self, at: u64) {
        self.nl_seen = false;
        let c = self.cur();
        c.dict_args = true;
        c.opened = true;
        c.n_args += 1;
        c.w.repair(RepairKind::SyntaxFix, at);
        self.lexer = Some(
            ValueLexer::new(Flavor::Python, &self.limits, self.opts.stops, &[])
                .dict_top()
                .esc_quote(self.wrap_quote),
        );
        self.st = St::Value;
    }

    fn begin_arg(&mut self, key: String, at: u64) {
        self.nl_seen = false;
        let c = self.cur();
        let mut out = Vec::with_capacity(key.len() + 6);
        if !c.opened {
            c.opened = true;
            out.push(b'{');
        }
        if c.n_args > 0 {
            out.extend_from_slice(b", ");
        }
        c.n_args += 1;
        out.extend_from_slice(&super::args::json_string(&key));
        out.extend_from_slice(b": ");
        c.w.put(&out, at);
        let param = c.params().iter().find(|p| *p.name == *key);
        let float = param.is_some_and(|p| p.typed(FLOAT_TYPES));
        let number = param.is_some_and(|p| p.typed(NUMBER_TYPES));
        c.used.push(key);
        self.lexer = Some(
            ValueLexer::new(Flavor::Python, &self.limits, self.opts.stops, &[])
                .line_bound(!self.opts.strong)
                .esc_quote(self.wrap_quote)
                .float_param(float)
                .number_param(number),
        );
        self.st = St::Value;
    }

    fn positional(&mut self, i: usize) -> StepResult {
        if self.calls.is_empty() {
            return Err((PyStatus::Reject, i));
        }
        let at = self.abs(i);
        let c = self.cur();
        let key = c
            .params()
            .iter()
            .find(|p| !c.used.iter().any(|u| **u == *p.name))
            .map(|p| p.name.to_string())
            .unwrap_or_else(|| format!("arg{}", c.n_args));
        c.w.repair(RepairKind::SyntaxFix, at);
        self.begin_arg(key, at);
        Ok(i)
    }

    fn close_call(&mut self, i: usize) -> StepResult {
        let at = self.abs(i);
        let c = self.cur();
        if !c.opened {
            c.opened = true;
            c.w.put(b"{}", at);
        } else if !c.dict_args {
            c.w.put(b"}", at);
        }
        c.closed = true;
        c.end = at + 1;
        if c.n_args == 0 || (c.dict_args && c.dict_ok) {
            self.evidence = true;
        }
        if !self.evidence {
            return Err((PyStatus::Reject, i + 1));
        }
        self.st = St::AfterCall;
        Ok(i + 1)
    }

    /// Ends every call that is closed and not ended yet (before a new one starts).
    fn end_closed(&mut self, cx: &mut Cx<'_>) {
        // Only the last call can still be open: every earlier one was ended
        // when the next one started.
        if let Some(k) = self.calls.len().checked_sub(1) {
            if !self.calls[k].ended {
                let end = self.calls[k].end;
                self.end_one(k, cx, end, Vec::new());
            }
        }
    }

    fn end_one(&mut self, k: usize, cx: &mut Cx<'_>, end: u64, extra: Vec<Repair>) {
        let c = &mut self.calls[k];
        c.ended = true;
        let truncated = c.truncated;
        c.w.end_call(cx, c.local, end, extra, truncated);
        // Its arguments are out: free them.
        c.w.out = Vec::new();
        c.w.emitted = 0;
    }

    /// Closes what is open at absolute offset `at`: markup ended the calls,
    /// or (`eof`) the input did.
    pub(crate) fn close(&mut self, cx: &mut Cx<'_>, at: u64, eof: bool) {
        if let (Some(lx), Some(c)) = (self.lexer.as_mut(), self.calls.last_mut()) {
            if self.st == St::Value {
                lx.finish(&mut c.w, at);
            }
        }
        self.lexer = None;
        if self.tail_pending {
            // The input ended while the list's `]` waited to see whether a
            // call follows it: the list is closed.
            self.list_depth = 0;
        }
        let list_open = self.list_depth > 0 && self.st != St::Done;
        if let Some(c) = self.calls.last_mut() {
            if !c.closed && !c.ended {
                c.w.repair(RepairKind::MissingCloser, at);
                if !c.opened {
                    c.w.put(b"{}", at);
                } else if !c.dict_args {
                    c.w.put(b"}", at);
                }
                c.closed = true;
                c.truncated = eof;
            } else if list_open && !c.ended {
                c.w.repair(RepairKind::MissingCloser, at);
            }
        }
        self.st = St::Done;
        let span = Span::new(at, at);
        self.sync(cx, span);
    }

    /// Ends every started call; the last ends at `end` with `extra` repairs.
    pub(crate) fn end_all(&mut self, cx: &mut Cx<'_>, end: u64, extra: Vec<Repair>) {
        // Only the last call can be open (see `end_closed`).
        let from = self.calls.len().saturating_sub(1);
        let open: Vec<usize> = (from..self.calls.len())
            .filter(|&k| !self.calls[k].ended)
            .collect();
        let mut extra = Some(extra);
        for (j, &k) in open.iter().enumerate() {
            let last = j + 1 == open.len();
            let e = if last { end } else { self.calls[k].end };
            let x = if last {
                extra.take().unwrap_or_default()
            } else {
                Vec::new()
            };
            self.end_one(k, cx, e, x);
        }
    }
}

/// A name with markdown escapes (`get\_weather`) removed.
fn normalize_name(raw: &[u8]) -> String {
    let mut out = Vec::with_capacity(raw.len());
    let mut k = 0;
    while k < raw.len() {
        if raw[k] == b'\\' && raw.get(k + 1) == Some(&b'_') {
            k += 1;
            continue;
        }
        out.push(raw[k]);
        k += 1;
    }
    into_string(out)
}

/// The schema's name for a keyword argument spelt as a Python keyword: a
/// parameter Python cannot spell (`from`) is declared `_from` (BFCL's
/// convention), and models write `from=` anyway. Only when the schema has
/// `_KEY` and not `KEY`.
fn keyword_param(key: &str, params: &[Param]) -> Option<String> {
    const KEYWORDS: &[&str] = &[
        "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
        "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with",
        "yield",
    ];
    if !KEYWORDS.contains(&key) || params.iter().any(|p| *p.name == *key) {
        return None;
    }
    let alt = format!("_{key}");
    params.iter().any(|p| *p.name == *alt).then_some(alt)
}

/// The tool's parameters in schema order (for positional arguments and
/// typed values); `None` for an unknown tool.
fn params_of(cfg: &Config, name: &str) -> Option<Arc<[Param]>> {
    cfg.tools.as_ref()?.signature(name)?.params.clone()
}

/// Schema types of a float: the names BFCL's Python and Java tools use
/// (JSON Schema's `number` takes integers too, so it is not among them).
const FLOAT_TYPES: &[&str] = &["float", "double"];

/// Schema types of a number of any kind.
const NUMBER_TYPES: &[&str] = &["integer", "number", "float", "double", "long", "int"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads() {
        assert!(matches!(
            call_head(b"get_weather(city", false),
            Head::Full {
                end: 11,
                len: 12,
                ..
            }
        ));
        assert_eq!(call_head(b"get_wea", false), Head::Partial);
        assert_eq!(call_head(b"see this", false), Head::No);
        assert!(matches!(
            call_head(b"a.b.c (x", true),
            Head::Full { end: 5, len: 7, .. }
        ));
        assert!(matches!(
            item_head(b"'f(x=1)'"),
            Head::Full {
                start: 1,
                end: 2,
                quote: Some(b'\''),
                ..
            }
        ));
        assert!(matches!(
            item_head(b"'f'(x=1)"),
            Head::Full {
                quoted_name: true,
                ..
            }
        ));
        assert_eq!(item_head(b"'hello', 2"), Head::No);
        assert_eq!(item_head(b"'hello'"), Head::Partial);
        assert_eq!(bracket_call(b"[1, 2]"), Match::No);
        assert_eq!(bracket_call(b"[\n  f(x"), Match::Full(1));
        assert_eq!(bracket_call(b"[TOOL_CALLS]"), Match::No);
        assert_eq!(bracket_call(b"[f"), Match::Partial);
        assert_eq!(bracket_call(b"['run'](x=1)"), Match::Full(1));
        assert!(matches!(
            bracketed_name_head(b"['run'](x"),
            Head::Full {
                start: 2,
                end: 5,
                len: 8,
                ..
            }
        ));
        assert_eq!(bracketed_name_head(b"['run', 2]"), Head::No);
        assert_eq!(line_call(b"  get_time()"), Match::Full(3));
        assert_eq!(line_call(b"The end"), Match::No);
        assert_eq!(
            normalize_name(b"get\\_movie\\_director"),
            "get_movie_director"
        );
    }
}
