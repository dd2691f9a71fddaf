//! Python and Gemma literal values transcoded to JSON, streaming.
//!
//! [`ValueLexer`] reads one value — `'text'`, `"""text"""`, `r'\d'`, `42`,
//! `0x1F`, `.5`, `True`, `None`, `[1, 2]`, `(1, 2)`, `{'a': 1}`, `{1, 2}`,
//! or Gemma's `{key:<|"|>text<|"|>,n:42}` — and writes its JSON form to a
//! [`Writer`] as the bytes arrive. It is a resumable state machine: every
//! input byte is looked at a bounded number of times, and where a decision
//! needs a few bytes of lookahead (a triple quote, an escape, a string
//! delimiter, `name=` after a value) it asks to be fed again from that byte
//! ([`VStep::Partial`]) instead of buffering.
//!
//! Mapping (decided, see the crate docs on pythonic calls):
//!
//! | Python | JSON |
//! |---|---|
//! | strings (any quotes, prefixes, escapes) | strings (`b'…'` as text) |
//! | `True` / `False` / `None` | `true` / `false` / `null` |
//! | `1_000`, `0x1F`, `.5`, `5.` | `1000`, `31`, `0.5`, `5.0` |
//! | lists and tuples | arrays |
//! | dicts (non-string keys as their source text) | objects |
//! | sets | arrays |
//! | anything else: a name, `a.b`, `f(x=1)`, `data['k']`, `2 * x` | the source text as a string ([`RepairKind::UnquotedString`]) |
//! | words running on, `[Product A, Product B]` | one string each, `["Product A", "Product B"]` |

use super::args::{ascii_verbatim_table, escape_str, is_ascii_verbatim, StrEscaper};
use super::Cx;
use crate::config::Limits;
use crate::event::{Repair, RepairKind, Span};
use crate::json::{into_string, is_json_number, Repairer, Status};
use crate::scan::{match_lit, Match};

/// The bytes a watched single-line string stops on (see
/// [`ValueLexer::string`]): its quote (`'`, then `"`), `\\`, a newline and
/// the parentheses, for a lookup a byte (short runs in [`watch_stop`]).
static WATCH_STOPS: [[bool; 256]; 2] = [watch_stops(b'\''), watch_stops(b'"')];

/// Position of the first byte of `s` that a watched single-line string
/// (see [`ValueLexer::string`]) stops on: its quote `q` (`'` or `"`), `\\`,
/// a newline or a parenthesis. From 32 bytes on, two SIMD searches, the
/// parentheses (rare in text) only before the first of the others: a lookup
/// a byte took 4-5 instructions a byte of every such string (a 10 KB one
/// fed whole: a tenth of the parse). Shorter runs (small chunks) keep the
/// lookup, which has no set-up cost (two searches cost some 100
/// instructions on a 16-byte chunk, the lookup 70).
#[inline(always)]
fn watch_stop(s: &[u8], q: u8) -> Option<usize> {
    if s.len() < 32 {
        let stops = &WATCH_STOPS[usize::from(q == b'"')];
        return s.iter().position(|&c| stops[c as usize]);
    }
    watch_stop_long(s, q)
}

/// [`watch_stop`] from 32 bytes on: windows of 64 bytes, doubling up to
/// 64 KB, so that a search costs what lies before the stop it finds (one
/// unbounded search for the other stops before each parenthesis of a
/// string full of them read the rest of the input each time: quadratic).
#[inline(never)]
fn watch_stop_long(s: &[u8], q: u8) -> Option<usize> {
    let q = if q == b'"' { b'"' } else { b'\'' };
    let mut at = 0;
    let mut width = 64;
    while at < s.len() {
        let end = at.saturating_add(width).min(s.len());
        let w = &s[at..end];
        let first = memchr::memchr3(q, b'\\', b'\n', w);
        if let Some(p) = memchr::memchr2(b'(', b')', &w[..first.unwrap_or(w.len())]).or(first) {
            return Some(at + p);
        }
        at = end;
        width = (width * 2).min(64 << 10);
    }
    None
}

const fn watch_stops(q: u8) -> [bool; 256] {
    let mut t = [false; 256];
    t[q as usize] = true;
    t[b'\\' as usize] = true;
    t[b'\n' as usize] = true;
    t[b'(' as usize] = true;
    t[b')' as usize] = true;
    t
}

/// Which literal syntax the lexer reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// Python literals.
    Python,
    /// Gemma: raw strings between `delim`, bare keys, JSON literals; `"…"`
    /// strings with JSON escapes are accepted too.
    Gemma {
        /// The string delimiter (`<|"|>` or `<escape>`).
        delim: &'static [u8],
    },
}

/// The arguments JSON of one call, append-only, bounded by `max_args_bytes`.
///
/// **The cut.** Arguments that would pass the limit are cut at the last
/// position of the JSON text, at most `max_args_bytes` bytes in, where
/// closing what is open gives valid JSON without changing what was written:
/// inside a string value (not inside an escape or a UTF-8 character), after
/// a complete value, or after an opening bracket. That position depends on
/// the JSON text alone, never on how the input was chunked, and so do the
/// arguments. Bytes after the last such position are not handed out as
/// deltas until a later one is known, so a cut never takes back a delta.
/// The [`RepairKind::LimitExceeded`] repair is recorded at the input offset
/// where the arguments began.
#[derive(Debug)]
pub(crate) struct Writer {
    pub out: Vec<u8>,
    pub emitted: usize,
    pub repairs: Vec<Repair>,
    max: usize,
    /// [`Limits::max_repairs`]: the repairs kept (see [`Repair::push_bounded`]).
    max_repairs: usize,
    pub limited: bool,
    /// Reads `out` as it grows.
    scan: JsonPos,
    /// The last position of `out` known to be a possible cut.
    safe: usize,
    /// After a cut: what closes `out`.
    close: Vec<u8>,
    /// The input offset of the first byte written.
    first_at: Option<u64>,
}

impl Writer {
    pub(crate) fn new(limits: &Limits) -> Self {
        Writer {
            out: Vec::new(),
            emitted: 0,
            repairs: Vec::new(),
            max: limits.max_args_bytes,
            max_repairs: limits.max_repairs,
            limited: false,
            scan: JsonPos::default(),
            safe: 0,
            close: Vec::new(),
            first_at: None,
        }
    }

    pub(crate) fn put(&mut self, b: &[u8], at: u64) {
        if self.limited || b.is_empty() {
            return;
        }
        let first_at = *self.first_at.get_or_insert(at);
        if self.out.capacity() == 0 {
            // Most arguments are short: one allocation instead of a chain
            // of doublings from 8 bytes.
            self.out
                .reserve(b.len().max(crate::envelope::ARGS_FIRST_CAPACITY));
        }
        if self.out.len() + b.len() <= self.max {
            let mut i = 0;
            while i < b.len() {
                if self.scan.in_str && self.scan.esc == 0 {
                    // A run of string content: no state changes inside it;
                    // in a value, the last character start is a cut.
                    let run = memchr::memchr2(b'"', b'\\', &b[i..]).unwrap_or(b.len() - i);
                    if run > 0 {
                        if !self.scan.key {
                            if let Some(k) = b[i..i + run].iter().rposition(|&x| x & 0xC0 != 0x80) {
                                self.safe = self.scan.pos + k;
                            }
                        }
                        self.scan.pos += run;
                        i += run;
                        continue;
                    }
                }
                let x = b[i];
                if self.scan.cut_before(x) {
                    self.safe = self.scan.pos;
                }
                self.scan.step(x);
                i += 1;
            }
            self.out.extend_from_slice(b);
            return;
        }
        // The last possible cut at most `max` bytes in: `b` reaches past
        // the limit, so the byte after every candidate is known.
        let room = self.max.saturating_sub(self.out.len());
        let mut s = self.scan.clone();
        let mut best = self.safe;
        for &x in &b[..=room] {
            if s.cut_before(x) {
                best = s.pos;
            }
            s.step(x);
        }
        let state = if best >= self.out.len() {
            let mut s = self.scan.clone();
            for &x in &b[..best - self.out.len()] {
                s.step(x);
            }
            self.out.extend_from_slice(&b[..best - self.out.len()]);
            s
        } else {
            // Not handed out yet (`best >= self.safe >= self.emitted`).
            self.out.truncate(best);
            let mut s = JsonPos::default();
            for &x in &self.out {
                s.step(x);
            }
            s
        };
        self.close = state.closers();
        self.limited = true;
        self.repair(RepairKind::LimitExceeded, first_at);
    }

    /// Writes `b`, string content that is its own JSON form (ASCII, none of
    /// `"`, `\\`, a control character or DEL), as [`Writer::put`] would,
    /// without reading it byte by byte. False, and nothing written, when
    /// the writer is not inside a string or `b` would reach the limit:
    /// [`Writer::put`]'s business.
    pub(crate) fn put_verbatim(&mut self, b: &[u8], at: u64) -> bool {
        if self.limited
            || b.is_empty()
            || !self.scan.in_str
            || self.scan.esc != 0
            || self.out.len() + b.len() > self.max
        {
            return false;
        }
        self.first_at.get_or_insert(at);
        if !self.scan.key {
            // Every byte starts a character: the last one is a cut.
            self.safe = self.scan.pos + b.len() - 1;
        }
        self.scan.pos += b.len();
        self.out.extend_from_slice(b);
        true
    }

    pub(crate) fn repair(&mut self, kind: RepairKind, offset: u64) {
        Repair::push_bounded(&mut self.repairs, Repair { kind, offset }, self.max_repairs);
    }

    /// The bytes written since the last call that no cut can take back.
    pub(crate) fn take_delta(&mut self) -> &[u8] {
        let upto = if self.limited {
            self.out.len()
        } else {
            self.safe.max(self.emitted)
        };
        let from = std::mem::replace(&mut self.emitted, upto);
        &self.out[from..upto]
    }

    /// Streams what is new to call `local`.
    pub(crate) fn flush(&mut self, cx: &mut Cx<'_>, local: usize, span: Span) {
        cx.args(local, self.take_delta(), span);
    }

    /// Ends call `local` at `end` with these arguments. The arguments
    /// buffer is handed over (left empty).
    pub(crate) fn end_call(
        &mut self,
        cx: &mut Cx<'_>,
        local: usize,
        end: u64,
        extra: Vec<Repair>,
        truncated: bool,
    ) {
        let span = Span::new(end, end);
        cx.args(local, &self.out[self.emitted..], span);
        self.emitted = self.out.len();
        let fin = if self.is_final() {
            // The usual case: `out` is the arguments; moved, not copied.
            self.emitted = 0;
            std::mem::take(&mut self.out)
        } else {
            let fin = self.final_json();
            if fin.len() > self.out.len() && fin.starts_with(&self.out) {
                cx.args(local, &fin[self.out.len()..], span);
            }
            fin
        };
        let mut repairs = std::mem::take(&mut self.repairs);
        repairs.extend(extra);
        repairs.sort_by_key(|r| r.offset);
        cx.end(
            local,
            end,
            into_string(fin),
            repairs,
            truncated || self.limited,
        );
    }

    /// True when `out` itself is the final arguments: no limit cut it, and
    /// it is a complete JSON object. The writer only writes valid JSON, so
    /// its reading of `out` (which it keeps for the cut) tells completeness;
    /// debug builds check the whole text as well.
    fn is_final(&self) -> bool {
        let complete = !self.limited && self.out.first() == Some(&b'{') && self.scan.complete();
        debug_assert!(
            !complete || serde_json::from_slice::<serde::de::IgnoredAny>(&self.out).is_ok(),
            "the writer wrote invalid JSON: {:?}",
            String::from_utf8_lossy(&self.out)
        );
        complete
    }

    /// The final arguments: `out` itself, `out` and its closers after a
    /// limit cut it, or (never expected) `out` closed by a repairer.
    pub(crate) fn final_json(&self) -> Vec<u8> {
        if self.limited {
            if self.out.is_empty() {
                return b"{}".to_vec();
            }
            let mut fin = self.out.clone();
            fin.extend_from_slice(&self.close);
            return fin;
        }
        if self.is_final() {
            return self.out.clone();
        }
        let mut r = Repairer::new();
        let mut fixed = Vec::with_capacity(self.out.len() + 8);
        let p = r.feed(&self.out, &mut fixed);
        if p.status != Status::Done {
            r.finish(&mut fixed);
        }
        if fixed.first() == Some(&b'{')
            && serde_json::from_slice::<serde::de::IgnoredAny>(&fixed).is_ok()
        {
            fixed
        } else {
            b"{}".to_vec()
        }
    }
}

/// Where a JSON text read so far stands, byte by byte: enough to tell the
/// positions where it can be cut and closed (see [`Writer`]).
#[derive(Clone, Debug, Default)]
struct JsonPos {
    /// Open containers: `{` or `[`.
    stack: Vec<u8>,
    in_str: bool,
    /// The open string is an object key.
    key: bool,
    /// Escape bytes still to come: 5 right after `\`, then 4..1 in `\uXXXX`.
    esc: u8,
    /// Inside a number or literal.
    tok: bool,
    expect: Expect2,
    /// Bytes read.
    pos: usize,
}

/// What a [`JsonPos`] outside strings and tokens expects next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Expect2 {
    /// The top-level value, or a value after `:` or after `,` in an array.
    #[default]
    Value,
    /// After `{`: a key or `}`.
    KeyOrClose,
    /// After `[`: a value or `]`.
    ValueOrClose,
    /// After `,` in an object.
    Key,
    /// After a key.
    Colon,
    /// After a complete value.
    After,
}

impl JsonPos {
    fn is_tok(b: u8) -> bool {
        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')
    }

    fn step(&mut self, b: u8) {
        self.pos += 1;
        if self.in_str {
            if self.esc == 5 {
                self.esc = if b == b'u' { 4 } else { 0 };
            } else if self.esc > 0 {
                self.esc -= 1;
            } else if b == b'\\' {
                self.esc = 5;
            } else if b == b'"' {
                self.in_str = false;
                self.expect = if self.key {
                    Expect2::Colon
                } else {
                    Expect2::After
                };
            }
            return;
        }
        if self.tok {
            if Self::is_tok(b) {
                return;
            }
            self.tok = false;
            self.expect = Expect2::After;
        }
        match b {
            b'"' => {
                self.in_str = true;
                self.key = matches!(self.expect, Expect2::KeyOrClose | Expect2::Key);
            }
            b'{' | b'[' => {
                self.stack.push(b);
                self.expect = if b == b'{' {
                    Expect2::KeyOrClose
                } else {
                    Expect2::ValueOrClose
                };
            }
            b'}' | b']' => {
                self.stack.pop();
                self.expect = Expect2::After;
            }
            b',' => {
                self.expect = if self.stack.last() == Some(&b'{') {
                    Expect2::Key
                } else {
                    Expect2::Value
                };
            }
            b':' => self.expect = Expect2::Value,
            b if b.is_ascii_whitespace() => {}
            _ => self.tok = true,
        }
    }

    /// The text read is one complete value.
    fn complete(&self) -> bool {
        self.pos > 0
            && self.stack.is_empty()
            && !self.in_str
            && !self.tok
            && self.expect == Expect2::After
    }

    /// Can the text be cut here, `next` being the byte that follows?
    fn cut_before(&self, next: u8) -> bool {
        if self.pos == 0 {
            return true;
        }
        if self.in_str {
            return !self.key && self.esc == 0 && next & 0xC0 != 0x80;
        }
        if self.tok {
            return !Self::is_tok(next);
        }
        matches!(
            self.expect,
            Expect2::After | Expect2::KeyOrClose | Expect2::ValueOrClose
        )
    }

    /// What closes the text cut here.
    fn closers(&self) -> Vec<u8> {
        let mut c = Vec::with_capacity(self.stack.len() + 1);
        if self.in_str {
            c.push(b'"');
        }
        c.extend(
            self.stack
                .iter()
                .rev()
                .map(|&b| if b == b'{' { b'}' } else { b']' }),
        );
        c
    }
}

/// What [`ValueLexer::feed`] stopped on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VStep {
    /// Everything was consumed; the value goes on.
    More,
    /// The value is complete after this many bytes (its terminator, if any, is not consumed).
    Done(usize),
    /// This many bytes were consumed; the rest must be fed again with more input.
    Partial(usize),
    /// A stop byte in structural position, at this index (not consumed).
    Stop(usize),
}

#[derive(Debug)]
enum Cont {
    /// `[…]` or `(…)`, closed by `close`.
    Arr { close: u8, n: usize },
    /// `{…}` known to be a dict.
    Dict { n: usize },
    /// `{` whose first element is being read into `held`: dict or set?
    Pending { held: Held },
}

/// What a `Pending` container holds: its first element's JSON so far,
/// `opens` brackets and then `bytes` (an inner `{x}` set that was its whole
/// first element is moved here with one more bracket, not copied, so that
/// `{{{…}}}` costs the same at any depth).
#[derive(Debug, Default)]
struct Held {
    opens: usize,
    bytes: Vec<u8>,
    /// `bytes` holds a backslash (an escape, or a key stringified inside).
    backslash: bool,
}

impl Held {
    fn is_empty(&self) -> bool {
        self.opens == 0 && self.bytes.is_empty()
    }

    fn push(&mut self, b: &[u8]) {
        self.backslash |= memchr::memchr(b'\\', b).is_some();
        self.bytes.extend_from_slice(b);
    }

    /// Appends `opens` brackets, the content of `inner` and `tail`.
    fn push_wrapped(&mut self, opens: usize, inner: Held, tail: &[u8]) {
        if self.is_empty() {
            // The usual case: `inner` was this container's first element.
            let backslash = inner.backslash;
            self.bytes = inner.bytes;
            self.opens = opens + inner.opens;
            self.backslash = backslash;
        } else {
            self.bytes
                .extend(std::iter::repeat_n(b'[', opens + inner.opens));
            self.push(&inner.bytes);
        }
        self.push(tail);
    }

    /// The JSON text held.
    fn text(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.opens + self.bytes.len());
        out.extend(std::iter::repeat_n(b'[', self.opens));
        out.extend_from_slice(&self.bytes);
        out
    }
}

impl Cont {
    /// Where the byte that closes it is counted in [`Open::closers`].
    fn closer_slot(&self) -> usize {
        match self {
            Cont::Arr { close, .. } => closer_slot(*close),
            _ => closer_slot(b'}'),
        }
    }
}

/// Slot of a closing byte (`]`, `)`, `}`) in [`Open::closers`].
fn closer_slot(b: u8) -> usize {
    match b {
        b']' => 0,
        b')' => 1,
        _ => 2,
    }
}

/// The open containers, with what per-byte questions need about them kept
/// as they change (so that no question looks through the whole stack).
#[derive(Debug, Default)]
struct Open {
    stack: Vec<Cont>,
    /// Indices in `stack` of the `Pending` containers, innermost last.
    pending: Vec<usize>,
    /// How many open containers close with `]`, `)` and `}`.
    closers: [usize; 3],
}

impl Open {
    fn push(&mut self, c: Cont) {
        self.closers[c.closer_slot()] += 1;
        if matches!(c, Cont::Pending { .. }) {
            self.pending.push(self.stack.len());
        }
        self.stack.push(c);
    }

    fn pop(&mut self) -> Option<Cont> {
        let c = self.stack.pop()?;
        self.closers[c.closer_slot()] -= 1;
        if matches!(c, Cont::Pending { .. }) {
            self.pending.pop();
        }
        Some(c)
    }

    /// The innermost container, to count its elements (its kind and closer
    /// must not change).
    fn last_mut(&mut self) -> Option<&mut Cont> {
        self.stack.last_mut()
    }

    /// The innermost `Pending` container's held bytes.
    fn innermost_pending(&mut self) -> Option<&mut Held> {
        let &k = self.pending.last()?;
        match &mut self.stack[k] {
            Cont::Pending { held } => Some(held),
            _ => None,
        }
    }

    /// Replaces the innermost `Pending` container (closed by `}` like it)
    /// and returns its held bytes.
    fn resolve_pending(&mut self, with: Cont) -> Option<Held> {
        let k = self.pending.pop()?;
        debug_assert_eq!(with.closer_slot(), closer_slot(b'}'));
        match std::mem::replace(&mut self.stack[k], with) {
            Cont::Pending { held } => Some(held),
            _ => None,
        }
    }
}

impl std::ops::Deref for Open {
    type Target = [Cont];
    fn deref(&self) -> &[Cont] {
        &self.stack
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Value,
    Key,
    Colon,
    Comma,
    /// After the first element of a `{`: `:` makes it a dict.
    PendDecide,
}

#[derive(Clone, Copy, Debug)]
struct StrSt {
    q: u8,
    triple: bool,
    raw: bool,
    /// Raw content up to the flavor's delimiter.
    delim: bool,
    /// JSON escapes (Gemma `"…"`) rather than Python ones.
    json: bool,
    /// Closing quotes seen and not yet judged.
    pend: u8,
    /// Unmatched `(` in the content so far.
    parens: u32,
    /// Opened by a backslash and its quote, inside a call written as a
    /// string (`'f(a=\'x\')'`): the same pair closes it, a bare quote is content.
    esc: bool,
}

#[derive(Clone, Copy, Debug)]
struct ExprSt {
    depth: u32,
    quote: u8,
    esc: bool,
}

#[derive(Clone, Copy, Debug)]
enum Leaf {
    None,
    Str(StrSt),
    Tok { ws: bool },
    Expr(ExprSt),
}

/// Streams one Python (or Gemma) value as JSON.
#[derive(Debug)]
pub(crate) struct ValueLexer {
    flavor: Flavor,
    /// Gemma: a second string delimiter; the first one the value uses is
    /// its delimiter from then on.
    alt_delim: Option<&'static [u8]>,
    /// A delimited (Gemma) string was read.
    delim_seen: bool,
    stack: Open,
    expect: Expect,
    /// The value being read is a dict key (its JSON form must be a string).
    key: bool,
    leaf: Leaf,
    tok: Vec<u8>,
    ws: Vec<u8>,
    tok_start: u64,
    esc: StrEscaper,
    /// Scratch for escaped string content (reused, so a chunk of a long
    /// string does not allocate).
    escaped: Vec<u8>,
    /// Closing brackets at the end of a delimited string, held: if the
    /// string is never closed they were probably structure.
    tail: Vec<u8>,
    /// Bytes that end the top-level value besides closers and `,`.
    stops: &'static [u8],
    /// Literals that end everything even inside a delimited string.
    string_stops: &'static [&'static [u8]],
    skip_stop: bool,
    max_depth: usize,
    max_token: usize,
    done: bool,
    begun: bool,
    /// The top-level value ended because `name=` followed it without a comma.
    pub missing_comma: bool,
    /// A top-level `{` is a dict (never a set): it is the call's arguments.
    dict_top: bool,
    /// A line break ends a single-line string or an expression (calls found
    /// in prose, where a broken value must not swallow the text after it).
    line_bound: bool,
    /// The value is inside a call written as a string with this quote: an
    /// escaped quote opens and closes strings (see [`StrSt::esc`]).
    esc_quote: Option<u8>,
    /// The value is a parameter the schema types as a float: an integer
    /// written as its whole value is written as a float (`12` → `12.0`).
    float_param: bool,
    /// The value is a parameter the schema types as a number: an unquoted
    /// expression is held (up to the token limit) to see whether it is a
    /// number with decoration (`$50000`, `60%`, `8.854 x 10^-12`).
    number_param: bool,
    /// The held expression of a number parameter: its bytes, the offset its
    /// content starts at and that of its `unquoted_string` repair.
    held: Option<(Vec<u8>, u64, u64)>,
    /// The last token was followed by a line break.
    pub newline_after: bool,
    base: u64,
}

/// Bytes a quoted string's content may hold and the lexer passes on as
/// they are whatever the string's quote and kind: ASCII that is its own
/// JSON form, less the quotes and the parentheses a single-line string
/// watches.
static VERBATIM_CONTENT: [bool; 256] = {
    let mut t = ascii_verbatim_table();
    t[b'\'' as usize] = false;
    t[b'(' as usize] = false;
    t[b')' as usize] = false;
    t
};

/// `chunk` is all [`VERBATIM_CONTENT`]: inside a quoted string with nothing
/// pending (see [`ValueLexer::plain_chunk`]), it is written as it is.
#[inline]
pub(crate) fn is_verbatim_content(chunk: &[u8]) -> bool {
    crate::json::run_len_except::<true, true>(chunk, &VERBATIM_CONTENT, b"'()") == chunk.len()
}

/// The closing byte of a container.
fn is_closer(b: u8) -> bool {
    matches!(b, b')' | b']' | b'}')
}

#[inline]
fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

#[inline]
fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

/// The JSON of a literal token: `True`, `False`, `None` or their JSON
/// spellings.
fn py_literal(tok: &[u8]) -> Option<&'static [u8]> {
    match tok {
        b"True" | b"true" => Some(b"true"),
        b"False" | b"false" => Some(b"false"),
        b"None" | b"null" => Some(b"null"),
        _ => None,
    }
}

/// `name` (optionally with escaped underscores), blanks, then `=` (not
/// `==`) or `:`: the head of a keyword argument. Returns the name's length
/// and the length up to and including the `=`/`:`.
pub(crate) fn kwarg_head(at: &[u8]) -> KwHead {
    const MAX: usize = 256;
    let mut i = 0;
    while i < at.len() && i < MAX {
        let b = at[i];
        if is_ident_byte(b) || (i > 0 && b == b'-') {
            i += 1;
        } else if b == b'\\' && i + 1 < at.len() && at[i + 1] == b'_' {
            i += 2;
        } else if b == b'\\' && i + 1 == at.len() {
            return KwHead::Partial;
        } else {
            break;
        }
    }
    if i == 0 || i >= MAX || !(is_ident_start(at[0]) || at[0] == b'\\') {
        return KwHead::No;
    }
    let name = i;
    while i < at.len() && (at[i] == b' ' || at[i] == b'\t') && i < name + 16 {
        i += 1;
    }
    match at.get(i) {
        None => KwHead::Partial,
        Some(b'=') => match at.get(i + 1) {
            None => KwHead::Partial,
            Some(b'=') => KwHead::No,
            Some(_) => KwHead::Full {
                name,
                len: i + 1,
                colon: false,
            },
        },
        Some(b':') => match at.get(i + 1) {
            None => KwHead::Partial,
            Some(b':' | b'=') => KwHead::No,
            Some(_) => KwHead::Full {
                name,
                len: i + 1,
                colon: true,
            },
        },
        Some(_) => KwHead::No,
    }
}

/// The result of [`kwarg_head`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KwHead {
    No,
    Partial,
    Full {
        name: usize,
        len: usize,
        colon: bool,
    },
}

/// After a `)` inside a single-line string (`at` starts after it): did the
/// string lose its closing quote, so that this `)` closes the call?
///
/// Yes when `, name(` or `]` follows the `)` *and* the string does not close
/// properly later: the next unescaped `q` (within a bounded window) is
/// followed by a name character (`units="m), f(units="m")` — that quote
/// opens the next value), or the line ends first. `s="a), g(b=1)]", t=2`
/// keeps its `)`: its next quote ends it.
fn quote_lost_before(at: &[u8], q: u8) -> Match {
    const WINDOW: usize = 256;
    let mut i = 0;
    while i < at.len() && at[i] == b' ' && i < 8 {
        i += 1;
    }
    match at.get(i) {
        // The byte after at most eight blanks decides: wait for it.
        None => return Match::Partial,
        Some(b']') => {}
        Some(b',') => {
            i += 1;
            while i < at.len() && at[i].is_ascii_whitespace() && i < 16 {
                i += 1;
            }
            if i == at.len() {
                return Match::Partial;
            }
            match super::pythonic::call_head(&at[i..], false) {
                super::pythonic::Head::Full { .. } => {}
                super::pythonic::Head::Partial => return Match::Partial,
                _ => return Match::No,
            }
        }
        _ => return Match::No,
    }
    let mut k = 0;
    while k < at.len() && k < WINDOW {
        match at[k] {
            b'\\' => k += 2,
            b'\n' => return Match::Full(0),
            c if c == q => {
                return match at.get(k + 1) {
                    None => Match::Partial,
                    Some(&n) if is_ident_byte(n) => Match::Full(0),
                    Some(_) => Match::No,
                };
            }
            _ => k += 1,
        }
    }
    if k >= WINDOW {
        Match::No
    } else {
        Match::Partial
    }
}

/// Converts a Python number token to JSON number text, if it is one.
/// Writes an integer (JSON text) as a float (`12` → `12.0`); true when it was one.
fn integer_as_float(n: &mut Vec<u8>) -> bool {
    let integer = n
        .strip_prefix(b"-")
        .unwrap_or(n)
        .iter()
        .all(u8::is_ascii_digit);
    if integer {
        n.extend_from_slice(b".0");
    }
    integer
}

/// A number written with decoration, as models write them for numeric
/// parameters: a currency sign before it (`$50000`), a percent sign after it
/// (`60%`), or scientific notation spelt out (`8.854 x 10^-12`,
/// `5×10^-12`, `3*10**8`). Returns the number as JSON.
pub(crate) fn decorated_number(text: &[u8]) -> Option<Vec<u8>> {
    let t = std::str::from_utf8(text).ok()?.trim();
    let t = t
        .strip_prefix(['$', '€', '£'])
        .or_else(|| t.strip_suffix('%'))
        .map_or(t, str::trim);
    for times in [
        " x 10^", "x10^", " × 10^", "×10^", " * 10^", "*10^", " * 10**", "*10**",
    ] {
        if let Some((m, e)) = t.split_once(times) {
            let m = py_number(m.trim().as_bytes())?;
            let e = e.trim();
            let digits = e.strip_prefix(['-', '+']).unwrap_or(e);
            if digits.is_empty() || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return None;
            }
            let mut n = m;
            n.push(b'e');
            n.extend_from_slice(e.trim_start_matches('+').as_bytes());
            return crate::json::fits_f64(&n).then_some(n);
        }
    }
    if t.len() == text.len() {
        // Nothing was taken off: not a decorated number.
        return None;
    }
    py_number(t.as_bytes())
}

pub(crate) fn py_number(tok: &[u8]) -> Option<Vec<u8>> {
    if tok.is_empty() || tok.len() > 400 {
        return None;
    }
    let (neg, body) = match tok[0] {
        b'-' => (true, &tok[1..]),
        b'+' => (false, &tok[1..]),
        _ => (false, tok),
    };
    if body.is_empty() {
        return None;
    }
    // The commonest number, a short decimal integer without leading zeros
    // (`3`; short: a JSON number that fits an `f64`, as below): itself
    // (less a `+`), read without the copies below.
    if body.len() <= 15
        && body.iter().all(u8::is_ascii_digit)
        && (body.len() == 1 || body[0] != b'0')
    {
        let mut out = Vec::with_capacity(body.len() + 1);
        if neg {
            out.push(b'-');
        }
        out.extend_from_slice(body);
        return Some(out);
    }
    // Underscores only between digits.
    let mut clean = Vec::with_capacity(body.len() + 2);
    for (k, &b) in body.iter().enumerate() {
        if b == b'_' {
            let ok = k > 0
                && k + 1 < body.len()
                && body[k - 1].is_ascii_alphanumeric()
                && body[k + 1].is_ascii_alphanumeric();
            if !ok {
                return None;
            }
        } else {
            clean.push(b);
        }
    }
    let mut out = Vec::with_capacity(clean.len() + 3);
    if neg {
        out.push(b'-');
    }
    let radix = match clean.get(..2) {
        Some(b"0x" | b"0X") => 16,
        Some(b"0o" | b"0O") => 8,
        Some(b"0b" | b"0B") => 2,
        _ => 10,
    };
    if radix != 10 {
        let digits = std::str::from_utf8(&clean[2..]).ok()?;
        let v = u128::from_str_radix(digits, radix).ok()?;
        out.extend_from_slice(v.to_string().as_bytes());
        return Some(out);
    }
    if !clean
        .iter()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    // `.5` → `0.5`, `5.` → `5.0`, `5.e3` → `5.0e3`.
    let mut fixed = Vec::with_capacity(clean.len() + 2);
    if clean[0] == b'.' {
        fixed.push(b'0');
    }
    for (k, &b) in clean.iter().enumerate() {
        fixed.push(b);
        if b == b'.' && !clean.get(k + 1).is_some_and(u8::is_ascii_digit) {
            fixed.push(b'0');
        }
    }
    out.extend_from_slice(&fixed);
    if is_json_number(&out) {
        Some(out)
    } else {
        None
    }
}

/// Decodes one escape sequence at the start of `at` (which begins with a
/// backslash) into raw bytes. `None`: more bytes are needed.
/// Returns (decoded bytes, bytes used, invalid).
fn decode_escape(at: &[u8], python: bool) -> Option<(Vec<u8>, usize, bool)> {
    let c = *at.get(1)?;
    let hex = |from: usize, n: usize| -> Option<Option<u32>> {
        // None: need more; Some(None): not hex.
        let mut v = 0u32;
        for k in 0..n {
            let Some(&h) = at.get(from + k) else {
                return if at[from..].iter().all(u8::is_ascii_hexdigit) {
                    None
                } else {
                    Some(None)
                };
            };
            let d = (h as char).to_digit(16);
            match d {
                Some(d) => v = v * 16 + d,
                None => return Some(None),
            }
        }
        Some(Some(v))
    };
    let ch = |c: u32| -> Vec<u8> {
        let c = char::from_u32(c).unwrap_or('\u{FFFD}');
        let mut b = [0u8; 4];
        c.encode_utf8(&mut b).as_bytes().to_vec()
    };
    let simple: Option<u8> = match c {
        b'\\' => Some(b'\\'),
        b'"' => Some(b'"'),
        b'\'' if python => Some(b'\''),
        b'/' if !python => Some(b'/'),
        b'n' => Some(b'\n'),
        b't' => Some(b'\t'),
        b'r' => Some(b'\r'),
        b'b' => Some(0x08),
        b'f' => Some(0x0C),
        b'a' if python => Some(0x07),
        b'v' if python => Some(0x0B),
        _ => None,
    };
    if let Some(s) = simple {
        return Some((vec![s], 2, false));
    }
    match c {
        b'\n' if python => Some((Vec::new(), 2, false)),
        b'\r' if python => match at.get(2) {
            None => None,
            Some(b'\n') => Some((Vec::new(), 3, false)),
            Some(_) => Some((Vec::new(), 2, false)),
        },
        b'x' if python => match hex(2, 2)? {
            Some(v) => Some((ch(v), 4, false)),
            None => Some((b"\\x".to_vec(), 2, true)),
        },
        b'U' if python => match hex(2, 8)? {
            Some(v) if char::from_u32(v).is_some() => Some((ch(v), 10, false)),
            _ => Some((b"\\U".to_vec(), 2, true)),
        },
        b'u' => match hex(2, 4)? {
            Some(v) if (0xD800..0xDC00).contains(&v) => {
                // A high surrogate: a low one must follow.
                let rest = &at[6..];
                if rest.len() < 6 {
                    let could = rest.iter().zip(b"\\u").all(|(a, b)| a == b)
                        && rest.iter().skip(2).all(u8::is_ascii_hexdigit);
                    if could {
                        return None;
                    }
                    return Some(("\u{FFFD}".as_bytes().to_vec(), 6, true));
                }
                let low = std::str::from_utf8(&rest[2..6])
                    .ok()
                    .and_then(|h| u32::from_str_radix(h, 16).ok());
                match low {
                    Some(low) if rest.starts_with(b"\\u") && (0xDC00..0xE000).contains(&low) => {
                        Some((
                            ch(0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)),
                            12,
                            false,
                        ))
                    }
                    _ => Some(("\u{FFFD}".as_bytes().to_vec(), 6, true)),
                }
            }
            Some(v) if (0xDC00..0xE000).contains(&v) => {
                Some(("\u{FFFD}".as_bytes().to_vec(), 6, true))
            }
            Some(v) => Some((ch(v), 6, false)),
            None => Some((b"\\u".to_vec(), 2, true)),
        },
        b'0'..=b'7' if python => {
            let mut n = 1;
            while n < 3 {
                match at.get(1 + n) {
                    None => return None,
                    Some(b'0'..=b'7') => n += 1,
                    Some(_) => break,
                }
            }
            let v = at[1..1 + n]
                .iter()
                .fold(0u32, |v, d| v * 8 + u32::from(d - b'0'));
            Some((ch(v), 1 + n, false))
        }
        b'N' if python => {
            // `\N{NAME}`: names are not resolved; the text is kept.
            match at.get(2) {
                None => None,
                Some(b'{') => match at[3..].iter().position(|&b| b == b'}') {
                    Some(p) if p < 64 => Some((at[..3 + p + 1].to_vec(), 3 + p + 1, false)),
                    None if at.len() < 3 + 64 => None,
                    _ => Some((b"\\N".to_vec(), 2, true)),
                },
                Some(_) => Some((b"\\N".to_vec(), 2, true)),
            }
        }
        // A markdown-escaped underscore (`SUSPEND\_ALL`): Python would keep the
        // backslash, but models that escape names this way mean `_`.
        b'_' => Some((vec![b'_'], 2, true)),
        _ if c >= 0x80 => Some((b"\\".to_vec(), 1, !python)),
        // Python keeps the backslash of an unknown escape (`\d`); JSON-style
        // strings record it as a repair.
        _ => Some((vec![b'\\', c], 2, !python)),
    }
}

impl ValueLexer {
    /// A lexer for one value. `stops` are bytes that, in structural
    /// position, stop the lexer so a wrapper can look for its closing
    /// token; `string_stops` end everything even inside a delimited string.
    pub(crate) fn new(
        flavor: Flavor,
        limits: &Limits,
        stops: &'static [u8],
        string_stops: &'static [&'static [u8]],
    ) -> Self {
        ValueLexer {
            flavor,
            alt_delim: None,
            delim_seen: false,
            stack: Open::default(),
            expect: Expect::Value,
            key: false,
            leaf: Leaf::None,
            tok: Vec::new(),
            ws: Vec::new(),
            tok_start: 0,
            esc: StrEscaper::default(),
            escaped: Vec::new(),
            tail: Vec::new(),
            stops,
            string_stops,
            skip_stop: false,
            max_depth: limits.max_depth.max(1),
            max_token: limits.max_token_bytes.max(16),
            done: false,
            begun: false,
            missing_comma: false,
            dict_top: false,
            line_bound: false,
            esc_quote: None,
            float_param: false,
            number_param: false,
            held: None,
            newline_after: false,
            base: 0,
        }
    }

    /// A top-level `{` is read as a dict (the arguments object itself).
    pub(crate) fn dict_top(mut self) -> Self {
        self.dict_top = true;
        self
    }

    /// Gemma: `alt` delimits strings too, until one of the two is used.
    pub(crate) fn alt_delim(mut self, alt: &'static [u8]) -> Self {
        self.alt_delim = Some(alt);
        self
    }

    /// True once a delimited (Gemma) string began.
    pub(crate) fn delim_seen(&self) -> bool {
        self.delim_seen
    }

    /// The value is inside a call written as a string quoted with `q`.
    pub(crate) fn esc_quote(mut self, q: Option<u8>) -> Self {
        self.esc_quote = q;
        self
    }

    /// The value is a parameter the schema types as a float.
    pub(crate) fn float_param(mut self, yes: bool) -> Self {
        self.float_param = yes;
        self
    }

    /// The value is a parameter the schema types as a number (see
    /// [`decorated_number`]).
    pub(crate) fn number_param(mut self, yes: bool) -> Self {
        self.number_param = yes;
        self
    }

    /// A line break ends single-line strings and expressions.
    pub(crate) fn line_bound(mut self, yes: bool) -> Self {
        self.line_bound = yes;
        self
    }

    /// True once the value is complete.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// True once any byte of the value was seen.
    pub(crate) fn has_begun(&self) -> bool {
        self.begun
    }

    /// After a [`VStep::Stop`] that was not the wrapper's closing token: the
    /// stop byte is read as part of the value.
    pub(crate) fn resume_stop(&mut self) {
        self.skip_stop = true;
    }

    #[inline]
    fn abs(&self, i: usize) -> u64 {
        self.base + i as u64
    }

    fn is_stop(&mut self, b: u8) -> bool {
        if self.stops.contains(&b) {
            if self.skip_stop {
                self.skip_stop = false;
                return false;
            }
            return true;
        }
        false
    }

    /// Writes output, into the innermost undecided `{` if there is one.
    fn put(&mut self, w: &mut Writer, b: &[u8], at: u64) {
        match self.stack.innermost_pending() {
            Some(held) => held.push(b),
            None => w.put(b, at),
        }
    }

    /// Writes `opens` brackets, what `inner` held and `tail` (a resolved
    /// `Pending` container), as [`ValueLexer::put`] would.
    fn put_wrapped(&mut self, w: &mut Writer, opens: usize, inner: Held, tail: &[u8], at: u64) {
        match self.stack.innermost_pending() {
            Some(held) => held.push_wrapped(opens, inner, tail),
            None => {
                let mut out =
                    Vec::with_capacity(opens + inner.opens + inner.bytes.len() + tail.len());
                out.extend(std::iter::repeat_n(b'[', opens + inner.opens));
                out.extend_from_slice(&inner.bytes);
                out.extend_from_slice(tail);
                w.put(&out, at);
            }
        }
    }

    fn content(&mut self, w: &mut Writer, raw: &[u8], at: u64) {
        if raw.is_empty() {
            return;
        }
        if self.esc.held() == 0 && is_ascii_verbatim(raw) {
            // Its own JSON form: no escaping, no copy.
            self.put(w, raw, at);
            return;
        }
        let mut out = std::mem::take(&mut self.escaped);
        out.clear();
        for rel in self.esc.push(raw, &mut out) {
            w.repair(
                RepairKind::InvalidUtf8,
                at.saturating_add_signed(rel as i64),
            );
        }
        self.put(w, &out, at);
        self.escaped = out;
    }

    /// Content of a delimited string: trailing closers are held back.
    fn delim_content(&mut self, w: &mut Writer, raw: &[u8], at: u64) {
        if raw.is_empty() {
            return;
        }
        let k = raw
            .iter()
            .rposition(|b| !matches!(b, b'}' | b']'))
            .map_or(0, |p| p + 1);
        if k > 0 || self.tail.len() + raw.len() > 64 {
            // The held closers sit right before `raw`: their own offset, so
            // a repair inside them is at the same byte however input came.
            let tail = std::mem::take(&mut self.tail);
            self.content(w, &tail, at.saturating_sub(tail.len() as u64));
        }
        if self.tail.len() + raw.len() - k > 64 {
            self.content(w, raw, at);
        } else {
            self.content(w, &raw[..k], at);
            self.tail.extend_from_slice(&raw[k..]);
        }
    }

    fn end_content(&mut self, w: &mut Writer, at: u64) {
        if self.esc.held() == 0 {
            // The common case: only the closing quote (no buffer for it).
            self.put(w, b"\"", at);
            return;
        }
        let mut out = Vec::new();
        if self.esc.finish(&mut out) {
            w.repair(RepairKind::InvalidUtf8, at);
        }
        out.push(b'"');
        self.put(w, &out, at);
    }

    /// Writes `input`, a chunk at absolute offset `at` inside the string
    /// being read, as [`ValueLexer::feed`] would, when that is only to pass
    /// it on as content: nothing is pending (no quote to judge, no
    /// character to complete, no undecided `{`) and the chunk holds none of
    /// the bytes the string stops on — for a quoted string its quote, `\\`,
    /// a line break, a parenthesis; for a delimited (Gemma) one `<`, where
    /// its delimiter or a stop literal may begin, nor does it end in the
    /// closers such a string holds back. False, and nothing done, otherwise.
    pub(crate) fn plain_chunk(&mut self, input: &[u8], at: u64, w: &mut Writer) -> bool {
        let Leaf::Str(s) = self.leaf else {
            return false;
        };
        if s.pend != 0 || self.done || self.esc.held() != 0 || !self.stack.pending.is_empty() {
            return false;
        }
        if s.delim {
            if !self.tail.is_empty()
                || memchr::memchr(b'<', input).is_some()
                || matches!(input.last(), Some(b'}' | b']'))
            {
                return false;
            }
        } else {
            if is_verbatim_content(input) {
                // Its own JSON form.
                return w.put_verbatim(input, at);
            }
            if watch_stop(input, s.q).is_some() {
                return false;
            }
        }
        // What the string's reading does with a run of content (for a
        // delimited string `delim_content`, which with nothing held and no
        // closer at the end is this).
        self.content(w, input, at);
        true
    }

    /// Feeds input whose first byte is at absolute offset `base`.
    pub(crate) fn feed(&mut self, input: &[u8], base: u64, w: &mut Writer) -> VStep {
        self.base = base;
        let mut i = 0;
        while i < input.len() {
            if self.done {
                return VStep::Done(i);
            }
            let r = match self.leaf {
                Leaf::Str(s) => self.string(s, input, i, w),
                Leaf::Tok { ws } => self.token(ws, input, i, w),
                Leaf::Expr(e) => self.expr(e, input, i, w),
                Leaf::None => self.structural(input, i, w),
            };
            match r {
                Ok(n) => i = n,
                Err(step) => return step,
            }
        }
        if self.done {
            VStep::Done(i)
        } else {
            VStep::More
        }
    }

    fn structural(&mut self, input: &[u8], i: usize, w: &mut Writer) -> Result<usize, VStep> {
        let b = input[i];
        let at = self.abs(i);
        if b.is_ascii_whitespace() {
            return Ok(i + 1);
        }
        match self.expect {
            Expect::Value | Expect::Key => {
                if is_closer(b) {
                    if self.stack.is_empty() {
                        // `f(a=)`: the value is missing.
                        return self.missing_value(i, w);
                    }
                    return self.close(b, i, w);
                }
                if b == b',' {
                    if self.stack.is_empty() {
                        return self.missing_value(i, w);
                    }
                    w.repair(RepairKind::ExtraComma, at);
                    return Ok(i + 1);
                }
                self.start_value(input, i, w)
            }
            Expect::Colon => match b {
                b':' | b'=' => {
                    self.put(w, b": ", at);
                    self.expect = Expect::Value;
                    Ok(i + 1)
                }
                b',' | b')' | b']' | b'}' => {
                    w.repair(RepairKind::MissingValue, at);
                    self.put(w, b": null", at);
                    self.expect = Expect::Comma;
                    Ok(i)
                }
                _ => {
                    if self.is_stop(b) {
                        return Err(VStep::Stop(i));
                    }
                    w.repair(RepairKind::MissingColon, at);
                    self.put(w, b": ", at);
                    self.expect = Expect::Value;
                    Ok(i)
                }
            },
            Expect::Comma | Expect::PendDecide => {
                if b == b',' {
                    if self.expect == Expect::PendDecide {
                        self.resolve_pending(false, w, at);
                    }
                    self.expect = match self.stack.last() {
                        Some(Cont::Dict { .. }) => Expect::Key,
                        _ => Expect::Value,
                    };
                    return Ok(i + 1);
                }
                if b == b':' && self.expect == Expect::PendDecide {
                    if self.stack.innermost_pending().is_some_and(|h| h.backslash) {
                        // The key would be a JSON string holding escapes:
                        // stringified again, a key holding such keys grows
                        // twice as long at each level (`{{{…: 1}: 1}: 1}`).
                        // The braces are a set of the key and the value.
                        self.resolve_pending(false, w, at);
                        w.repair(RepairKind::SyntaxFix, at);
                    } else {
                        self.resolve_pending(true, w, at);
                        self.put(w, b": ", at);
                    }
                    self.expect = Expect::Value;
                    return Ok(i + 1);
                }
                if is_closer(b) {
                    return self.close(b, i, w);
                }
                if self.is_stop(b) {
                    return Err(VStep::Stop(i));
                }
                // Two values without a comma.
                if self.expect == Expect::PendDecide {
                    self.resolve_pending(false, w, at);
                }
                w.repair(RepairKind::MissingComma, at);
                self.expect = match self.stack.last() {
                    Some(Cont::Dict { .. }) => Expect::Key,
                    _ => Expect::Value,
                };
                Ok(i)
            }
        }
    }

    /// The top-level value is missing: it is `null`.
    fn missing_value(&mut self, i: usize, w: &mut Writer) -> Result<usize, VStep> {
        let at = self.abs(i);
        w.repair(RepairKind::MissingValue, at);
        self.begun = true;
        self.put(w, b"null", at);
        self.value_done();
        Ok(i)
    }

    fn separator(&mut self, w: &mut Writer, at: u64) {
        let key = self.expect == Expect::Key;
        let sep = match self.stack.last_mut() {
            Some(Cont::Arr { n, .. }) => {
                *n += 1;
                *n > 1
            }
            Some(Cont::Dict { n }) if key => {
                *n += 1;
                *n > 1
            }
            _ => false,
        };
        if sep {
            self.put(w, b", ", at);
        }
    }

    fn start_value(&mut self, input: &[u8], i: usize, w: &mut Writer) -> Result<usize, VStep> {
        let b = input[i];
        let at = self.abs(i);
        let key = self.expect == Expect::Key;
        self.key = key;
        // Lookahead first: it may need more bytes before anything is written.
        let gemma_delim = match self.flavor {
            Flavor::Gemma { delim } if b == b'<' => {
                let mut found = None;
                for d in std::iter::once(delim).chain(self.alt_delim) {
                    match match_lit(d, &input[i..]) {
                        Match::Full(n) => {
                            found = Some((d, n));
                            break;
                        }
                        Match::Partial => return Err(VStep::Partial(i)),
                        Match::No => {}
                    }
                }
                found.map(|(d, n)| {
                    // The first delimiter used is the value's.
                    self.flavor = Flavor::Gemma { delim: d };
                    self.alt_delim = None;
                    self.delim_seen = true;
                    n
                })
            }
            _ => None,
        };
        if let (Some(q), b'\\') = (self.esc_quote, b) {
            match input.get(i + 1) {
                None => return Err(VStep::Partial(i)),
                Some(&c) if c == q => {
                    self.begun = true;
                    self.separator(w, at);
                    self.put(w, b"\"", at);
                    self.leaf = Leaf::Str(StrSt {
                        q,
                        triple: false,
                        raw: false,
                        delim: false,
                        json: false,
                        pend: 0,
                        parens: 0,
                        esc: true,
                    });
                    return Ok(i + 2);
                }
                Some(_) => {}
            }
        }
        let quote_open = if gemma_delim.is_none() && (b == b'\'' || b == b'"') {
            Some(self.quote_open(input, i)?)
        } else {
            None
        };
        if gemma_delim.is_none() && quote_open.is_none() && self.is_stop(b) {
            return Err(VStep::Stop(i));
        }
        self.begun = true;
        self.separator(w, at);
        if let Some(n) = gemma_delim {
            self.put(w, b"\"", at);
            self.leaf = Leaf::Str(StrSt {
                q: 0,
                triple: false,
                raw: true,
                delim: true,
                json: false,
                pend: 0,
                parens: 0,
                esc: false,
            });
            return Ok(i + n);
        }
        if let Some((n, triple)) = quote_open {
            return Ok(self.open_string(b, n, triple, false, w, at, i));
        }
        match b {
            b'[' | b'(' | b'{' if key => {
                self.tok.clear();
                self.ws.clear();
                self.tok_start = at;
                self.start_expr(w, at);
                Ok(i)
            }
            b'[' | b'(' | b'{' if self.stack.len() >= self.max_depth => {
                w.repair(RepairKind::LimitExceeded, at);
                self.tok.clear();
                self.ws.clear();
                self.tok_start = at;
                self.start_expr(w, at);
                Ok(i)
            }
            b'[' | b'(' => {
                self.put(w, b"[", at);
                self.stack.push(Cont::Arr {
                    close: if b == b'[' { b']' } else { b')' },
                    n: 0,
                });
                self.expect = Expect::Value;
                Ok(i + 1)
            }
            b'{' => {
                if matches!(self.flavor, Flavor::Gemma { .. })
                    || (self.dict_top && self.stack.is_empty())
                {
                    self.put(w, b"{", at);
                    self.stack.push(Cont::Dict { n: 0 });
                    self.expect = Expect::Key;
                } else {
                    self.stack.push(Cont::Pending {
                        held: Held::default(),
                    });
                    self.expect = Expect::Value;
                }
                Ok(i + 1)
            }
            _ if b.is_ascii_alphanumeric()
                || b == b'_'
                || b == b'-'
                || b == b'+'
                || b == b'.'
                || b >= 0x80 =>
            {
                self.tok.clear();
                self.ws.clear();
                self.tok.push(b);
                self.tok_start = at;
                self.leaf = Leaf::Tok { ws: false };
                Ok(i + 1)
            }
            _ => {
                self.tok.clear();
                self.ws.clear();
                self.tok_start = at;
                self.start_expr(w, at);
                Ok(i)
            }
        }
    }

    /// At a quote: how many bytes open the string, and whether it is triple-quoted.
    fn quote_open(&self, input: &[u8], i: usize) -> Result<(usize, bool), VStep> {
        let q = input[i];
        if matches!(self.flavor, Flavor::Gemma { .. }) {
            return Ok((1, false));
        }
        match input.get(i + 1) {
            None => Err(VStep::Partial(i)),
            Some(&c) if c != q => Ok((1, false)),
            Some(_) => match input.get(i + 2) {
                None => Err(VStep::Partial(i)),
                Some(&c) if c == q => Ok((3, true)),
                // `''`: an empty string.
                Some(_) => Ok((2, false)),
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn open_string(
        &mut self,
        q: u8,
        n: usize,
        triple: bool,
        raw: bool,
        w: &mut Writer,
        at: u64,
        i: usize,
    ) -> usize {
        self.put(w, b"\"", at);
        let json = matches!(self.flavor, Flavor::Gemma { .. }) && q == b'"';
        if matches!(self.flavor, Flavor::Gemma { .. }) && q == b'\'' {
            w.repair(RepairKind::SingleQuotes, at);
        }
        if n == 2 {
            // `''` (also after a prefix, `b''`: the prefix token is over).
            self.end_content(w, at);
            self.leaf = Leaf::None;
            self.value_done();
            return i + 2;
        }
        self.leaf = Leaf::Str(StrSt {
            q,
            triple,
            raw,
            delim: false,
            json,
            pend: 0,
            parens: 0,
            esc: false,
        });
        i + n
    }

    fn string(
        &mut self,
        mut s: StrSt,
        input: &[u8],
        mut i: usize,
        w: &mut Writer,
    ) -> Result<usize, VStep> {
        let python = self.flavor == Flavor::Python;
        let mut run_start = i;
        macro_rules! flush {
            () => {
                if i > run_start {
                    let at = self.abs(run_start);
                    if s.delim {
                        self.delim_content(w, &input[run_start..i], at);
                    } else {
                        self.content(w, &input[run_start..i], at);
                    }
                }
            };
        }
        while i < input.len() {
            let b = input[i];
            if s.pend > 0 {
                if s.triple {
                    if b == s.q {
                        s.pend += 1;
                        i += 1;
                        run_start = i;
                        if s.pend == 3 {
                            let at = self.abs(i);
                            self.end_content(w, at);
                            self.leaf = Leaf::None;
                            self.value_done();
                            return Ok(i);
                        }
                        continue;
                    }
                    let quotes = vec![s.q; s.pend as usize];
                    let at = self.abs(i);
                    self.content(w, &quotes, at);
                    s.pend = 0;
                    run_start = i;
                    continue;
                }
                if is_ident_byte(b) {
                    // An apostrophe, not the end (`'it's'`).
                    let at = self.abs(i);
                    w.repair(RepairKind::UnescapedQuote, at - 1);
                    self.content(w, &[s.q], at);
                    s.pend = 0;
                    run_start = i;
                    continue;
                }
                if b == s.q && python {
                    // `… = 'active'')`: a quote closing a quoted word inside
                    // the string, then the string's own closing quote (read
                    // as concatenation, a new literal would open before the
                    // closer and never end).
                    match input.get(i + 1) {
                        None => {
                            self.leaf = Leaf::Str(s);
                            return Err(VStep::Partial(i));
                        }
                        Some(b')' | b',' | b']' | b'}') => {
                            let at = self.abs(i);
                            w.repair(RepairKind::UnescapedQuote, at - 1);
                            self.content(w, &[s.q], at);
                            self.end_content(w, at + 1);
                            self.leaf = Leaf::None;
                            self.value_done();
                            return Ok(i + 1);
                        }
                        Some(_) => {}
                    }
                    // `'a''b'`: adjacent literals are concatenated.
                    s.pend = 0;
                    i += 1;
                    run_start = i;
                    continue;
                }
                let at = self.abs(i);
                self.end_content(w, at);
                self.leaf = Leaf::None;
                self.value_done();
                return Ok(i);
            }
            if s.delim {
                let Flavor::Gemma { delim } = self.flavor else {
                    break;
                };
                let Some(p) = memchr::memchr(b'<', &input[i..]) else {
                    i = input.len();
                    break;
                };
                i += p;
                match match_lit(delim, &input[i..]) {
                    Match::Full(n) => {
                        flush!();
                        let at = self.abs(i);
                        let tail = std::mem::take(&mut self.tail);
                        self.content(w, &tail, at.saturating_sub(tail.len() as u64));
                        self.end_content(w, at);
                        self.leaf = Leaf::None;
                        self.value_done();
                        return Ok(i + n);
                    }
                    Match::Partial => {
                        flush!();
                        self.leaf = Leaf::Str(s);
                        return Err(VStep::Partial(i));
                    }
                    Match::No => {}
                }
                for lit in self.string_stops {
                    match match_lit(lit, &input[i..]) {
                        Match::Full(_) => {
                            flush!();
                            self.leaf = Leaf::Str(s);
                            return Err(VStep::Stop(i));
                        }
                        Match::Partial => {
                            flush!();
                            self.leaf = Leaf::Str(s);
                            return Err(VStep::Partial(i));
                        }
                        Match::No => {}
                    }
                }
                i += 1;
                continue;
            }
            // A single-line string that is an argument's value also watches
            // its parentheses: `units="m), next(…` lost its closing quote.
            let watch = python && !s.triple && !s.json && self.stack.is_empty();
            let found = if watch {
                // A quoted string's quote is `'` or `"`.
                watch_stop(&input[i..], s.q)
            } else {
                memchr::memchr3(s.q, b'\\', b'\n', &input[i..])
            };
            let Some(p) = found else {
                i = input.len();
                break;
            };
            i += p;
            let b = input[i];
            if b == b'(' {
                s.parens += 1;
                i += 1;
                continue;
            }
            if b == b')' {
                if s.parens > 0 {
                    s.parens -= 1;
                    i += 1;
                    continue;
                }
                match quote_lost_before(&input[i + 1..], s.q) {
                    Match::Full(_) => {
                        flush!();
                        let at = self.abs(i);
                        w.repair(RepairKind::UnclosedString, at);
                        self.end_content(w, at);
                        self.leaf = Leaf::None;
                        self.value_done();
                        return Ok(i);
                    }
                    Match::Partial => {
                        flush!();
                        self.leaf = Leaf::Str(s);
                        return Err(VStep::Partial(i));
                    }
                    Match::No => {
                        i += 1;
                        continue;
                    }
                }
            }
            if b == b'\n' {
                if !s.triple && python && self.line_bound {
                    // A single-line string left open: it ends with its line.
                    flush!();
                    let at = self.abs(i);
                    w.repair(RepairKind::UnclosedString, at);
                    self.end_content(w, at);
                    self.leaf = Leaf::None;
                    self.value_done();
                    return Ok(i);
                }
                if !s.triple && python {
                    let at = self.abs(i);
                    w.repair(RepairKind::ControlCharacter, at);
                }
                i += 1;
                continue;
            }
            if b == s.q && s.esc {
                // A bare quote inside an escaped-quote string is content.
                i += 1;
                continue;
            }
            if b == s.q {
                flush!();
                s.pend = 1;
                i += 1;
                run_start = i;
                continue;
            }
            // A backslash.
            if s.raw {
                // Kept, and the next byte (even a quote) is content.
                if i + 1 >= input.len() {
                    flush!();
                    self.leaf = Leaf::Str(s);
                    return Err(VStep::Partial(i));
                }
                i += 2;
                continue;
            }
            flush!();
            if s.esc {
                // The escaped quote closes the string.
                match input.get(i + 1) {
                    None => {
                        self.leaf = Leaf::Str(s);
                        return Err(VStep::Partial(i));
                    }
                    Some(&c) if c == s.q => {
                        let at = self.abs(i);
                        self.end_content(w, at);
                        self.leaf = Leaf::None;
                        self.value_done();
                        return Ok(i + 2);
                    }
                    Some(_) => {}
                }
            }
            match decode_escape(&input[i..], python && !s.json) {
                None => {
                    self.leaf = Leaf::Str(s);
                    return Err(VStep::Partial(i));
                }
                Some((raw, used, bad)) => {
                    let at = self.abs(i);
                    if bad {
                        w.repair(RepairKind::InvalidEscape, at);
                    }
                    self.content(w, &raw, at);
                    i += used;
                    run_start = i;
                }
            }
        }
        flush!();
        self.leaf = Leaf::Str(s);
        Ok(i)
    }

    fn token(
        &mut self,
        ws: bool,
        input: &[u8],
        mut i: usize,
        w: &mut Writer,
    ) -> Result<usize, VStep> {
        if !ws {
            let numeric = matches!(self.tok[0], b'0'..=b'9' | b'.' | b'-' | b'+');
            while i < input.len() {
                let b = input[i];
                let last = *self.tok.last().unwrap_or(&0);
                let cont = is_ident_byte(b)
                    || b == b'.'
                    || (numeric && (b == b'+' || b == b'-') && (last == b'e' || last == b'E'));
                if !cont {
                    break;
                }
                if self.tok.len() >= self.max_token {
                    // Too long for a literal: stream it as text, from
                    // the token's first byte (its offsets are the input's).
                    let at = self.tok_start;
                    self.start_expr(w, at);
                    return Ok(i);
                }
                self.tok.push(b);
                i += 1;
            }
            if i == input.len() {
                return Ok(i);
            }
        }
        while i < input.len()
            && (input[i] == b' ' || input[i] == b'\t' || input[i] == b'\n' || input[i] == b'\r')
        {
            if self.ws.len() < 64 {
                self.ws.push(input[i]);
            }
            i += 1;
        }
        self.leaf = Leaf::Tok { ws: true };
        let Some(&b) = input.get(i) else {
            return Ok(i);
        };
        let at = self.abs(i);
        let after_ws = !self.ws.is_empty();
        // A string prefix: `r'…'`, `b"…"`, `f'…'`.
        if !after_ws && (b == b'\'' || b == b'"') && self.flavor == Flavor::Python {
            let p = self.tok.to_ascii_lowercase();
            if matches!(
                &p[..],
                b"r" | b"b" | b"u" | b"f" | b"rb" | b"br" | b"fr" | b"rf"
            ) {
                let (n, triple) = self.quote_open(input, i)?;
                let raw = p.contains(&b'r');
                let start = self.tok_start;
                self.tok.clear();
                return Ok(self.open_string(b, n, triple, raw, w, start, i));
            }
        }
        let in_container = !self.stack.is_empty();
        self.newline_after = self.ws.contains(&b'\n');
        let term = (self.line_bound && self.newline_after)
            || b == b','
            || is_closer(b)
            || (b == b':' && (self.key || matches!(self.stack.last(), Some(Cont::Pending { .. }))))
            || (b == b'=' && self.key);
        if term {
            self.finish_token(w);
            return Ok(i);
        }
        if self.stops.contains(&b) && !self.skip_stop {
            self.finish_token(w);
            return Ok(i);
        }
        if after_ws && !in_container && is_ident_start(b) {
            // `f(a=1 b=2)`: a new keyword argument without a comma.
            match kwarg_head(&input[i..]) {
                KwHead::Full { .. } => {
                    self.finish_token(w);
                    self.missing_comma = true;
                    return Ok(i);
                }
                KwHead::Partial => return Err(VStep::Partial(i)),
                KwHead::No => {}
            }
        }
        if after_ws
            && self.key
            && matches!(self.flavor, Flavor::Gemma { .. })
            && is_ident_byte(b)
            && !self.ws.iter().any(|&c| c == b'\n' || c == b'\r')
        {
            // Gemma 4: a bare key may hold spaces (`{event name:…}`); the
            // key runs on to its colon.
            let ws = std::mem::take(&mut self.ws);
            self.tok.extend_from_slice(&ws);
            self.leaf = Leaf::Tok { ws: false };
            return Ok(i);
        }
        if after_ws
            && in_container
            && (is_ident_byte(b) || b == b'\'' || b == b'"' || b == b'[' || b == b'{')
            && !(self.flavor == Flavor::Python
                && !self.key
                && is_ident_start(b)
                && self.tok_is_word())
        {
            // `[1 2]`: the structural step records the missing comma.
            self.finish_token(w);
            return Ok(i);
        }
        // `[Product A, Product B]`: unquoted words running on are one
        // string (an expression), as in a keyword argument's value.
        // An expression: a call, a subscript, arithmetic, a dotted name…
        let start = self.tok_start;
        self.start_expr(w, start);
        let _ = at;
        Ok(i)
    }

    /// Whether the held token is a bare word: a name that is no literal
    /// (`True`, `None`, …) and no number.
    fn tok_is_word(&self) -> bool {
        self.tok.first().is_some_and(|&b| is_ident_start(b))
            && py_literal(&self.tok).is_none()
            && py_number(&self.tok).is_none()
    }

    /// The held token is a complete scalar.
    fn finish_token(&mut self, w: &mut Writer) {
        let tok = std::mem::take(&mut self.tok);
        self.ws.clear();
        let at = self.tok_start;
        self.leaf = Leaf::None;
        let gemma = matches!(self.flavor, Flavor::Gemma { .. });
        let literal = py_literal(&tok);
        let number = if literal.is_none() {
            py_number(&tok)
        } else {
            None
        };
        // `101L`: Python 2's long integer suffix (Java's too).
        let long = match (&number, literal, tok.split_last()) {
            (None, None, Some((b'L' | b'l', digits)))
                if digits
                    .strip_prefix(b"-")
                    .unwrap_or(digits)
                    .first()
                    .is_some_and(u8::is_ascii_digit)
                    && digits[1..].iter().all(u8::is_ascii_digit) =>
            {
                py_number(digits)
            }
            _ => None,
        };
        if self.key {
            // Keys are strings: a name, a number or a literal as its source text.
            if !gemma && literal.is_none() && number.is_none() {
                w.repair(RepairKind::UnquotedString, at);
            }
            let mut out = Vec::with_capacity(tok.len() + 2);
            out.push(b'"');
            escape_str(&String::from_utf8_lossy(&tok), &mut out);
            out.push(b'"');
            self.put(w, &out, at);
        } else if let Some(l) = literal {
            self.put(w, l, at);
        } else if let Some(mut n) = number {
            if self.float_param && self.stack.is_empty() && integer_as_float(&mut n) {
                w.repair(RepairKind::TypeCoercion, at);
            }
            self.put(w, &n, at);
        } else if let Some(n) = long {
            w.repair(RepairKind::SyntaxFix, at);
            self.put(w, &n, at);
        } else {
            let lz = tok.len() > 1 && tok[0] == b'0' && tok.iter().all(u8::is_ascii_digit);
            w.repair(
                if lz {
                    RepairKind::LeadingZeros
                } else {
                    RepairKind::UnquotedString
                },
                at,
            );
            let mut out = Vec::with_capacity(tok.len() + 2);
            out.push(b'"');
            escape_str(&String::from_utf8_lossy(&tok), &mut out);
            out.push(b'"');
            self.put(w, &out, at);
        }
        self.value_done();
    }

    /// Starts writing the held token (and blanks) and what follows as the
    /// source text of an expression.
    fn start_expr(&mut self, w: &mut Writer, at: u64) {
        let mut prefix = std::mem::take(&mut self.tok);
        prefix.extend_from_slice(&self.ws);
        self.ws.clear();
        let repair_at = self.tok_start.min(at);
        if self.number_param && self.stack.is_empty() && !self.key {
            self.held = Some((prefix, at, repair_at));
        } else {
            w.repair(RepairKind::UnquotedString, repair_at);
            self.put(w, b"\"", at);
            self.content(w, &prefix, at);
        }
        self.leaf = Leaf::Expr(ExprSt {
            depth: 0,
            quote: 0,
            esc: false,
        });
    }

    fn expr(
        &mut self,
        mut e: ExprSt,
        input: &[u8],
        mut i: usize,
        w: &mut Writer,
    ) -> Result<usize, VStep> {
        let mut run = Vec::new();
        // Blanks held from the previous chunk come first in `run`: they sit
        // right before this input.
        let at0 = self.abs(i).saturating_sub(self.ws.len() as u64);
        let mut result = Ok(input.len());
        while i < input.len() {
            let b = input[i];
            if b == b'\n' && self.line_bound && (e.depth == 0 || e.quote != 0) {
                result = Ok(i);
                break;
            }
            if e.quote != 0 {
                if e.esc {
                    e.esc = false;
                } else if b == b'\\' {
                    e.esc = true;
                } else if b == e.quote {
                    e.quote = 0;
                }
                run.push(b);
                i += 1;
                continue;
            }
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => {
                    if self.ws.len() < 4096 {
                        self.ws.push(b);
                    } else {
                        run.extend_from_slice(&self.ws);
                        self.ws.clear();
                        self.ws.push(b);
                    }
                    i += 1;
                    continue;
                }
                b')' | b']' | b'}' | b',' if e.depth == 0 => {
                    result = Ok(i);
                    break;
                }
                b':' if e.depth == 0 && self.key => {
                    result = Ok(i);
                    break;
                }
                _ if e.depth == 0 && self.stops.contains(&b) => {
                    if self.skip_stop {
                        self.skip_stop = false;
                    } else {
                        result = Err(VStep::Stop(i));
                        break;
                    }
                }
                _ => {}
            }
            run.extend_from_slice(&self.ws);
            self.ws.clear();
            match b {
                b'\'' | b'"' => e.quote = b,
                b'(' | b'[' | b'{' => e.depth += 1,
                b')' | b']' | b'}' => e.depth -= 1,
                _ => {}
            }
            run.push(b);
            i += 1;
        }
        if let Some((held, _, _)) = self.held.as_mut() {
            held.extend_from_slice(&run);
            if held.len() > self.max_token {
                self.release_held(w);
            }
        } else {
            self.content(w, &run, at0);
        }
        match result {
            Ok(n) if n < input.len() => {
                // The expression ended before a terminator.
                self.ws.clear();
                let at = self.abs(n);
                self.end_expr(w, at);
                self.leaf = Leaf::None;
                self.value_done();
                Ok(n)
            }
            other => {
                self.leaf = Leaf::Expr(e);
                other
            }
        }
    }

    /// Writes a held expression as the string it is (see [`Self::number_param`]).
    fn release_held(&mut self, w: &mut Writer) {
        if let Some((held, at, repair_at)) = self.held.take() {
            w.repair(RepairKind::UnquotedString, repair_at);
            self.put(w, b"\"", at);
            self.content(w, &held, at);
        }
    }

    /// Ends an expression: a held one that is a decorated number is that
    /// number, anything else a string.
    fn end_expr(&mut self, w: &mut Writer, at: u64) {
        if let Some((held, _, repair_at)) = &self.held {
            if let Some(mut n) = decorated_number(held) {
                if self.float_param {
                    integer_as_float(&mut n);
                }
                w.repair(RepairKind::TypeCoercion, *repair_at);
                self.held = None;
                self.put(w, &n, at);
                return;
            }
        }
        self.release_held(w);
        self.end_content(w, at);
    }

    fn closes_innermost(&self, b: u8) -> bool {
        match self.stack.last() {
            Some(Cont::Arr { close, .. }) => *close == b,
            Some(Cont::Dict { .. } | Cont::Pending { .. }) => b == b'}',
            None => false,
        }
    }

    fn closes_any(&self, b: u8) -> bool {
        self.stack.closers[closer_slot(b)] > 0
    }

    /// A closer in structural position.
    fn close(&mut self, b: u8, i: usize, w: &mut Writer) -> Result<usize, VStep> {
        let at = self.abs(i);
        if self.stack.is_empty() {
            self.done = true;
            return Ok(i);
        }
        if !self.closes_any(b) {
            // Nothing open is closed by `b`: it ends the value (the
            // enclosing call's `)`), or is stray.
            if b == b')' || b == b']' {
                self.close_all(w, at);
                return Ok(i);
            }
            w.repair(RepairKind::RedundantCloser, at);
            return Ok(i + 1);
        }
        if !self.closes_innermost(b) {
            w.repair(RepairKind::MissingCloser, at);
            while !self.closes_innermost(b) {
                self.pop(w, at);
            }
        }
        self.pop(w, at);
        Ok(i + 1)
    }

    /// Closes the innermost container and completes it as a value.
    fn pop(&mut self, w: &mut Writer, at: u64) {
        let in_dict = matches!(self.stack.last(), Some(Cont::Dict { .. }));
        if in_dict && self.expect == Expect::Colon {
            w.repair(RepairKind::MissingValue, at);
            self.put(w, b": null", at);
        } else if in_dict && self.expect == Expect::Value {
            w.repair(RepairKind::MissingValue, at);
            self.put(w, b"null", at);
        }
        let decide = self.expect == Expect::PendDecide;
        match self.stack.pop() {
            Some(Cont::Arr { .. }) => self.put(w, b"]", at),
            Some(Cont::Dict { .. }) => self.put(w, b"}", at),
            Some(Cont::Pending { held }) => {
                if decide {
                    // `{x}`: a set of one.
                    self.put_wrapped(w, 1, held, b"]", at);
                } else {
                    self.put(w, b"{}", at);
                }
            }
            None => {}
        }
        // The container was a value (containers in key position are read as
        // expression text), even when a trailing `,` left a key expected.
        self.expect = Expect::Value;
        self.value_done();
    }

    fn close_all(&mut self, w: &mut Writer, at: u64) {
        if !self.stack.is_empty() {
            w.repair(RepairKind::MissingCloser, at);
        }
        while !self.stack.is_empty() {
            self.pop(w, at);
        }
        self.done = true;
    }

    fn resolve_pending(&mut self, dict: bool, w: &mut Writer, at: u64) {
        let with = if dict {
            Cont::Dict { n: 1 }
        } else {
            Cont::Arr { close: b'}', n: 1 }
        };
        let Some(held) = self.stack.resolve_pending(with) else {
            return;
        };
        if !dict {
            self.put_wrapped(w, 1, held, b"", at);
            return;
        }
        let mut out = Vec::with_capacity(held.opens + held.bytes.len() + 4);
        out.push(b'{');
        if held.opens == 0 && held.bytes.first() == Some(&b'"') {
            out.extend_from_slice(&held.bytes);
        } else {
            out.push(b'"');
            escape_str(&String::from_utf8_lossy(&held.text()), &mut out);
            out.push(b'"');
        }
        self.put(w, &out, at);
    }

    fn value_done(&mut self) {
        self.key = false;
        match self.stack.last() {
            None => self.done = true,
            Some(Cont::Arr { .. }) => self.expect = Expect::Comma,
            Some(Cont::Dict { .. }) => {
                self.expect = if self.expect == Expect::Key {
                    Expect::Colon
                } else {
                    Expect::Comma
                }
            }
            Some(Cont::Pending { .. }) => self.expect = Expect::PendDecide,
        }
    }

    /// Ends the value where it stands: `eof` when the input ended (strings
    /// left open are then [`RepairKind::UnclosedString`]); otherwise markup
    /// ended it.
    pub(crate) fn finish(&mut self, w: &mut Writer, at: u64) {
        if self.done {
            return;
        }
        match self.leaf {
            Leaf::Str(s) if s.delim => {
                // Closers held at the end of an unclosed string close the
                // structure when they match it (`{command:<|"|>ls}`).
                let tail = std::mem::take(&mut self.tail);
                let mut depth = self.stack.len();
                let structural = !tail.is_empty()
                    && tail.iter().all(|&b| {
                        let ok = depth > 0
                            && match &self.stack[depth - 1] {
                                Cont::Arr { close, .. } => *close == b,
                                _ => b == b'}',
                            };
                        depth = depth.saturating_sub(1);
                        ok
                    });
                if !structural {
                    self.content(w, &tail, at.saturating_sub(tail.len() as u64));
                }
                w.repair(RepairKind::UnclosedString, at);
                self.end_content(w, at);
                self.leaf = Leaf::None;
                self.value_done();
                if structural {
                    for _ in 0..tail.len() {
                        self.pop(w, at);
                    }
                }
            }
            Leaf::Str(s) => {
                let closed = s.pend > 0 && !s.triple;
                if !closed {
                    if s.triple && s.pend > 0 {
                        let quotes = vec![s.q; s.pend as usize];
                        self.content(w, &quotes, at);
                    }
                    w.repair(RepairKind::UnclosedString, at);
                }
                self.end_content(w, at);
                self.leaf = Leaf::None;
                self.value_done();
            }
            Leaf::Tok { .. } => self.finish_token(w),
            Leaf::Expr(_) => {
                self.ws.clear();
                self.end_expr(w, at);
                self.leaf = Leaf::None;
                self.value_done();
            }
            Leaf::None => {}
        }
        if self.done {
            return;
        }
        if self.stack.is_empty() {
            if !self.begun || self.expect == Expect::Value {
                w.repair(RepairKind::MissingValue, at);
                self.put(w, b"null", at);
            }
            self.done = true;
            return;
        }
        self.close_all(w, at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `watch_stop` finds the first byte the table lookup finds, for both
    /// quotes, wherever stops sit (first, last, none, several, parentheses
    /// before and after the other stops, in the SIMD searches' long and
    /// short ranges).
    #[test]
    fn watch_stop_is_the_table_lookup() {
        let stops = [
            b'\'', b'"', b'\\', b'\n', b'(', b')', b'\r', b'x', 0xC3, b'{',
        ];
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for len in [
            0, 1, 2, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 191, 192, 193, 500,
        ] {
            for round in 0..60 {
                let mut s = vec![b'a'; len];
                let n = if round == 0 { 0 } else { 1 + round % 4 };
                for _ in 0..n {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    if len > 0 {
                        s[(seed % len as u64) as usize] = stops[((seed >> 32) % 10) as usize];
                    }
                }
                for q in [b'\'', b'"'] {
                    let table = &WATCH_STOPS[usize::from(q == b'"')];
                    let want = s.iter().position(|&c| table[c as usize]);
                    assert_eq!(watch_stop(&s, q), want, "{:?} q={}", s, q as char);
                }
            }
        }
    }

    /// `Writer::put` skips runs of string content; its last cut position
    /// must be the one a byte-by-byte reading finds, wherever the text is
    /// split (keys, escapes, multi-byte characters, values).
    #[test]
    fn writer_runs_find_the_same_cuts() {
        let texts = [
            r#"{"path": "/tmp/x", "content": "naïve café — 42 ÷ 7 \"q\" \\ \u00e9 end", "n": 3}"#,
            r#"{"ké": ["a\nb", {"x": "ü"}], "y": "\ud83d\ude00 😀"}"#,
            r#"["", "é", "\\", "a\"", {"": ""}]"#,
        ];
        for text in texts {
            let b = text.as_bytes();
            // Reference: every byte through `cut_before` and `step`.
            let mut scan = JsonPos::default();
            let mut safe = Vec::new();
            let mut last = 0;
            for &x in b {
                if scan.cut_before(x) {
                    last = scan.pos;
                }
                scan.step(x);
                safe.push(last);
            }
            for chunk in [1, 2, 3, 5, 8, b.len()] {
                let mut w = Writer::new(&Limits::default());
                let mut at = 0;
                for piece in b.chunks(chunk) {
                    w.put(piece, 0);
                    at += piece.len();
                    assert_eq!(
                        w.safe,
                        safe[at - 1],
                        "{text} in {chunk}-byte pieces, at {at}"
                    );
                    assert_eq!(w.scan.pos, at);
                }
                assert_eq!(
                    (w.scan.in_str, w.scan.esc, w.scan.stack.len()),
                    (scan.in_str, scan.esc, scan.stack.len())
                );
            }
        }
    }

    /// `Writer::put_verbatim`, where it takes a piece, leaves the writer as
    /// `Writer::put` does (output, cut, position, limit), in keys and
    /// values, up to and across an arguments limit.
    #[test]
    fn put_verbatim_is_put() {
        let text = br#"{"path key": "/tmp/x.txt", "content": "plain words, more plain words; end", "k": ["ab cd", "ef"]}"#;
        for max in [usize::MAX, 40, 64] {
            let limits = Limits {
                max_args_bytes: max,
                ..Limits::default()
            };
            for chunk in [1, 2, 3, 5, 8] {
                let (mut a, mut b) = (Writer::new(&limits), Writer::new(&limits));
                let mut took = 0;
                for (k, piece) in text.chunks(chunk).enumerate() {
                    a.put(piece, k as u64);
                    if is_verbatim_content(piece) && b.put_verbatim(piece, k as u64) {
                        took += 1;
                    } else {
                        b.put(piece, k as u64);
                    }
                    assert_eq!(
                        (&a.out, a.safe, a.scan.pos, a.limited, a.first_at),
                        (&b.out, b.safe, b.scan.pos, b.limited, b.first_at),
                        "{chunk}-byte pieces, max {max}, piece {k}"
                    );
                }
                assert!(took > 0, "{chunk}-byte pieces, max {max}");
            }
        }
        // Outside a string, nothing is taken.
        let mut w = Writer::new(&Limits::default());
        w.put(b"{", 0);
        assert!(!w.put_verbatim(b"ab", 1));
        assert!(w.out == b"{");
    }

    #[test]
    fn verbatim_content_is_ascii_without_quotes_escapes_or_parentheses() {
        for b in 0..=255u8 {
            let want = (0x20..0x7F).contains(&b) && !b"\"\\'()".contains(&b);
            for len in 1..=17 {
                for at in [0, len / 2, len - 1] {
                    let mut s = vec![b'x'; len];
                    s[at] = b;
                    assert_eq!(is_verbatim_content(&s), want, "{b:#04x} at {at} of {len}");
                }
            }
        }
    }

    fn conv_flavor(src: &str, flavor: Flavor, chunk: usize) -> (String, Vec<RepairKind>) {
        let limits = Limits::default();
        let mut lx = ValueLexer::new(flavor, &limits, b"", &[]);
        let mut w = Writer::new(&limits);
        let bytes = src.as_bytes();
        let mut carry: Vec<u8> = Vec::new();
        let mut pos = 0usize;
        let mut base = 0u64;
        let mut done = false;
        while pos < bytes.len() || !carry.is_empty() {
            let end = if chunk == 0 {
                bytes.len()
            } else {
                (pos + chunk).min(bytes.len())
            };
            carry.extend_from_slice(&bytes[pos..end]);
            pos = end;
            match lx.feed(&carry, base, &mut w) {
                VStep::More => {
                    base += carry.len() as u64;
                    carry.clear();
                }
                VStep::Partial(n) => {
                    base += n as u64;
                    carry.drain(..n);
                    if pos >= bytes.len() {
                        break;
                    }
                }
                VStep::Done(_) => {
                    done = true;
                    break;
                }
                VStep::Stop(_) => break,
            }
        }
        if !done {
            lx.finish(&mut w, base);
        }
        let out = String::from_utf8(w.out).unwrap();
        (out, w.repairs.iter().map(|r| r.kind).collect())
    }

    fn conv(src: &str) -> String {
        let whole = conv_flavor(src, Flavor::Python, 0);
        for n in [1, 2, 3] {
            assert_eq!(
                conv_flavor(src, Flavor::Python, n),
                whole,
                "chunk {n} of {src}"
            );
        }
        serde_json::from_str::<serde_json::Value>(&whole.0)
            .unwrap_or_else(|e| panic!("{e}: {}", whole.0));
        whole.0
    }

    #[test]
    fn scalars() {
        assert_eq!(conv("'Paris'"), r#""Paris""#);
        assert_eq!(conv(r#""say \"hi\"\n""#), r#""say \"hi\"\n""#);
        assert_eq!(conv(r"'it\'s'"), r#""it's""#);
        assert_eq!(conv("'''a\n'b'\"c\"'''"), r#""a\n'b'\"c\"""#);
        assert_eq!(conv(r"r'\d+\''"), r#""\\d+\\'""#);
        assert_eq!(conv(r"'\x41\u00e9\U0001F600\101'"), "\"Aé😀A\"");
        assert_eq!(conv("True"), "true");
        assert_eq!(conv("None"), "null");
        assert_eq!(conv("1_000"), "1000");
        assert_eq!(conv("0x1F"), "31");
        assert_eq!(conv(".5"), "0.5");
        assert_eq!(conv("-2.5e-3"), "-2.5e-3");
        assert_eq!(conv("'a' 'b'"), r#""a""#.to_string());
        assert_eq!(conv("'a''b'"), r#""ab""#);
        assert_eq!(
            conv("['status = 'active'', 'x']"),
            r#"["status = 'active'", "x"]"#
        );
        assert_eq!(conv("'' "), r#""""#);
    }

    #[test]
    fn containers() {
        assert_eq!(conv("[1, 'a', (2, 3)]"), r#"[1, "a", [2, 3]]"#);
        assert_eq!(
            conv("{'a': 1, 'b': [True, None]}"),
            r#"{"a": 1, "b": [true, null]}"#
        );
        assert_eq!(conv("{1: 'x'}"), r#"{"1": "x"}"#);
        assert_eq!(conv("{1, 2}"), "[1, 2]");
        assert_eq!(conv("{}"), "{}");
        assert_eq!(conv("[1, 2,]"), "[1, 2]");
        assert_eq!(
            conv("{'a': {'b': {'c': []}}}"),
            r#"{"a": {"b": {"c": []}}}"#
        );
    }

    /// Unquoted words running on inside a container are one string, as in
    /// a keyword argument's value (`f(a=Product A)`); numbers, literals and
    /// quoted items written without a comma are still separate items.
    #[test]
    fn words_in_a_container_are_one_string() {
        assert_eq!(
            conv("[Product A, Product B, Product C]"),
            r#"["Product A", "Product B", "Product C"]"#
        );
        assert_eq!(conv("[New York]"), r#"["New York"]"#);
        assert_eq!(conv("{'city': New York}"), r#"{"city": "New York"}"#);
        assert_eq!(conv("[1 2]"), "[1, 2]");
        assert_eq!(conv("[True False]"), "[true, false]");
        assert_eq!(conv("[a 'b']"), r#"["a", "b"]"#);
        assert_eq!(conv("[2 apples]"), r#"[2, "apples"]"#);
    }

    /// A dict used as a key is written as its JSON in a string, once: a key
    /// holding such a key is not stringified again (each level would double
    /// the backslashes: 128 bytes of `{{{…'x':1}:1}…:1}` took 14 s and
    /// megabytes). Those braces become a set of key and value. Nested sets
    /// move their content up instead of copying it at each level.
    #[test]
    fn keys_of_keys_and_nested_sets_stay_small() {
        assert_eq!(conv("{{'x': 1}: 2}"), r#"{"{\"x\": 1}": 2}"#);
        assert_eq!(conv("{{{'x': 1}: 2}: 3}"), r#"[{"{\"x\": 1}": 2}, 3]"#);
        assert_eq!(conv("{{{1}}}"), "[[[1]]]");
        assert_eq!(conv("{{{1}, 2}}"), "[[[1], 2]]");
        let depth = 2000;
        let keys = format!("{}'x'{}", "{".repeat(depth), ":1}".repeat(depth));
        let (json, _) = conv_flavor(&keys, Flavor::Python, 0);
        assert!(json.len() < 8 * keys.len(), "{} bytes", json.len());
        serde_json::from_str::<serde_json::Value>(&json).expect("valid JSON");
        // (Within the default depth limit, 100.)
        let sets = format!("{}1{}", "{".repeat(90), "}".repeat(90));
        let (json, _) = conv_flavor(&sets, Flavor::Python, 7);
        assert_eq!(json, format!("{}1{}", "[".repeat(90), "]".repeat(90)));
    }

    #[test]
    fn expressions_become_strings() {
        assert_eq!(conv("philadelphia_id"), r#""philadelphia_id""#);
        assert_eq!(conv("Element.class"), r#""Element.class""#);
        assert_eq!(conv("f(x=1, y=[2])"), r#""f(x=1, y=[2])""#);
        assert_eq!(conv("data['sales']"), r#""data['sales']""#);
        assert_eq!(conv("2 * x"), r#""2 * x""#);
        assert_eq!(conv("/usr/local/bin"), r#""/usr/local/bin""#);
        assert_eq!(conv("1.2.3"), r#""1.2.3""#);
        assert_eq!(conv("[a, b.c]"), r#"["a", "b.c"]"#);
    }

    #[test]
    fn gemma() {
        let g = Flavor::Gemma { delim: b"<|\"|>" };
        let (out, reps) = conv_flavor(
            r#"{location:<|"|>Paris "x"<|"|>,n:42,b:true,l:[<|"|>a<|"|>],o:{k:null}}"#,
            g,
            0,
        );
        assert_eq!(
            out,
            r#"{"location": "Paris \"x\"", "n": 42, "b": true, "l": ["a"], "o": {"k": null}}"#
        );
        assert!(reps.is_empty(), "{reps:?}");
        for n in [1, 2, 3] {
            assert_eq!(
                conv_flavor(
                    r#"{location:<|"|>Paris "x"<|"|>,n:42,b:true,l:[<|"|>a<|"|>],o:{k:null}}"#,
                    g,
                    n
                )
                .0,
                out
            );
        }
        let (out, _) = conv_flavor(r#"{path:<|"|>C:\users\bob<|"|>,q:"a \"b\""}"#, g, 1);
        assert_eq!(out, r#"{"path": "C:\\users\\bob", "q": "a \"b\""}"#);
    }

    #[test]
    fn truncated() {
        let (out, reps) = conv_flavor("{'a': [1, 'hel", Flavor::Python, 0);
        assert_eq!(out, r#"{"a": [1, "hel"]}"#);
        assert!(reps.contains(&RepairKind::UnclosedString));
        assert!(reps.contains(&RepairKind::MissingCloser));
    }

    #[test]
    fn decorated_numbers() {
        let d = |s: &str| decorated_number(s.as_bytes()).map(|n| String::from_utf8(n).unwrap());
        assert_eq!(d("$50000").as_deref(), Some("50000"));
        assert_eq!(d("60%").as_deref(), Some("60"));
        assert_eq!(d("€ 1.5").as_deref(), Some("1.5"));
        assert_eq!(d("8.854 x 10^-12").as_deref(), Some("8.854e-12"));
        assert_eq!(d("5×10^+3").as_deref(), Some("5e3"));
        assert_eq!(d("3*10**8").as_deref(), Some("3e8"));
        for no in [
            "x+1",
            "50000",
            "$abc",
            "5 x 10^",
            "5 x 10^1234",
            "1e999 x 10^2",
            "%",
        ] {
            assert_eq!(d(no), None, "{no}");
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(py_number(b"5."), Some(b"5.0".to_vec()));
        assert_eq!(py_number(b"007"), None);
        assert_eq!(py_number(b"1j"), None);
        assert_eq!(py_number(b"0b101"), Some(b"5".to_vec()));
        assert_eq!(py_number(b"-0o17"), Some(b"-15".to_vec()));
    }

    #[test]
    fn kwargs() {
        assert_eq!(
            kwarg_head(b"city=1"),
            KwHead::Full {
                name: 4,
                len: 5,
                colon: false
            }
        );
        assert_eq!(
            kwarg_head(b"city = 1"),
            KwHead::Full {
                name: 4,
                len: 6,
                colon: false
            }
        );
        assert_eq!(kwarg_head(b"a==b"), KwHead::No);
        assert_eq!(
            kwarg_head(b"dir: 'x'"),
            KwHead::Full {
                name: 3,
                len: 4,
                colon: true
            }
        );
        assert_eq!(kwarg_head(b"cit"), KwHead::Partial);
        assert_eq!(
            kwarg_head(b"movie\\_name=1"),
            KwHead::Full {
                name: 11,
                len: 12,
                colon: false
            }
        );
        assert_eq!(kwarg_head(b"'x'"), KwHead::No);
    }
}
