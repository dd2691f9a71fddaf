//! The arguments rewriter: the normalizer's core, a transducer from a call's
//! arguments text to its normalized text that both the one-shot API and the
//! streaming [`super::Normalizer`] run (the one-shot API feeds it the whole
//! text at once), so the two agree by construction.
//!
//! It reads the top-level object member by member. A member whose value
//! cannot need coercion (a string for a plain string parameter, any value
//! of an undeclared parameter that is kept) streams through byte for byte
//! as it arrives; any other value is held back until it is complete, then
//! coerced (and re-serialized) or passed on as written. Only the value
//! being coerced is ever held, never the call — except arguments that are
//! not an object or start with a wrapper key (`{"arguments": …}`), which
//! are held whole and fixed at the end (see [`super::structure`]).
//!
//! Output is the input with edits only where a fix was made: kept members
//! keep their bytes, separators and whitespace; a dropped member takes its
//! separator with it. Leading and trailing whitespace around the object is
//! dropped. Every decision depends on whole tokens only, so the output does
//! not depend on how the input was split; each byte is looked at a bounded
//! number of times (strings are skipped with `memchr`), so the work is
//! linear.

use serde_json::Value;

use super::coerce::KeyPlan;
use super::error::{pointer_push, CallError, Fix, FixKind, Fixes};
use super::fast::Fast;
use super::structure;
use super::template::{is_placeholder_text, MAX_PLACEHOLDER};
use super::{Catalog, CompiledTool};

/// Raw bytes of a streamed string kept to tell whether it is a placeholder
/// (an escape is at most 6 bytes for one byte of text).
const PLACEHOLDER_RAW: usize = 6 * MAX_PLACEHOLDER + 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Emit the value's bytes as they come.
    Stream,
    /// Hold the value until it is complete.
    Hold,
    /// Drop the member.
    Skip,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    /// Before the first non-whitespace byte.
    Lead,
    /// Not an object, or a wrapper candidate whose value is not an object:
    /// held whole until the end (at most `max_held_call_bytes`).
    HoldAll,
    /// After the inner object of a wrapper: its enclosing object's `}`
    /// (the wrapper was alone) or `,` (it was not) comes next.
    WrapEnd,
    /// In the object, between members.
    Between,
    /// In a key string.
    Key { esc: bool },
    /// Between a key and its value.
    AfterKey { colon: bool },
    /// In a value.
    Value(Mode),
    /// After the object's closing brace.
    Done,
    /// The input is not the JSON it should be: the rest passes through.
    Broken,
}

/// Where a value ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Scan {
    started: bool,
    depth: u32,
    in_str: bool,
    esc: bool,
    scalar: bool,
    /// Hex digits still expected of a `\u` escape.
    hex: u8,
    /// The value is not strict JSON (a bad escape, a raw control byte, a
    /// lone surrogate escape is possible): the fast check does not vouch for it.
    bad: bool,
    /// Bytes of escapes beyond the one character each stands for.
    esc_extra: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// The byte belongs to the value, which goes on.
    More,
    /// The byte ends the value.
    EndWith,
    /// The value ended before this byte.
    EndBefore,
}

impl Scan {
    fn step(&mut self, b: u8) -> Step {
        if !self.started {
            // The value's first byte.
            self.started = true;
            self.depth = u32::from(matches!(b, b'{' | b'['));
            self.in_str = b == b'"';
            self.scalar = !matches!(b, b'{' | b'[' | b'"');
            return Step::More;
        }
        if self.in_str {
            if self.hex > 0 && b != b'"' {
                // `\uD…`: maybe half a surrogate pair, left to the full check.
                self.bad |= !b.is_ascii_hexdigit() || (self.hex == 4 && (b | 0x20) == b'd');
                self.hex -= 1;
                return Step::More;
            }
            if self.hex > 0 {
                self.hex = 0;
                self.bad = true;
            }
            if self.esc {
                self.esc = false;
                match b {
                    b'u' => {
                        self.hex = 4;
                        self.esc_extra += 5;
                    }
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.esc_extra += 1,
                    _ => self.bad = true,
                }
            } else if b < 0x20 {
                self.bad = true;
            } else if b == b'\\' {
                self.esc = true;
            } else if b == b'"' {
                self.in_str = false;
                if self.depth == 0 {
                    return Step::EndWith;
                }
            }
            return Step::More;
        }
        if self.scalar {
            return if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n') {
                Step::EndBefore
            } else {
                Step::More
            };
        }
        match b {
            b'"' => self.in_str = true,
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    return Step::EndWith;
                }
            }
            _ => {}
        }
        Step::More
    }

    /// Steps over the bytes of `rest` that belong to the value: how many,
    /// and how the value ended (`None`: it goes on past `rest`). The same
    /// state as [`Scan::step`] byte by byte, with runs of string contents,
    /// of a scalar and of bytes inside a container that are not quotes or
    /// brackets passed in bulk.
    fn over(&mut self, rest: &[u8]) -> (usize, Option<Step>) {
        let mut i = 0;
        while i < rest.len() {
            if self.in_str && !self.esc && self.hex == 0 {
                let n = memchr::memchr2(b'"', b'\\', &rest[i..]).unwrap_or(rest.len() - i);
                if n > 0 {
                    self.bad |= rest[i..i + n].iter().fold(false, |a, &c| a | (c < 0x20));
                    i += n;
                    continue;
                }
            }
            if self.scalar {
                // A scalar runs up to its first separator byte.
                let n = rest[i..]
                    .iter()
                    .position(|&c| matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'))
                    .unwrap_or(rest.len() - i);
                i += n;
                return (i, (i < rest.len()).then_some(Step::EndBefore));
            }
            if self.started && !self.in_str {
                // Inside an array or object, up to its next quote or bracket
                // (the only bytes `step` acts on there).
                let n = rest[i..]
                    .iter()
                    .position(|&c| matches!(c, b'"' | b'{' | b'[' | b'}' | b']'))
                    .unwrap_or(rest.len() - i);
                if n > 0 {
                    i += n;
                    continue;
                }
            }
            match self.step(rest[i]) {
                Step::More => i += 1,
                Step::EndWith => return (i + 1, Some(Step::EndWith)),
                Step::EndBefore => return (i, Some(Step::EndBefore)),
            }
        }
        (i, None)
    }
}

/// Rewriters whose calls ended, kept per thread so that the next call
/// reuses their buffers instead of allocating (a call allocates nothing
/// once its thread has normalized a call as long).
const POOL_SIZE: usize = 4;

/// A pooled rewriter's buffers larger than this are freed, not kept.
const POOL_MAX_BYTES: usize = 64 << 10;

std::thread_local! {
    // Boxed: a call's state is handed out and taken back as a `Box`, not moved.
    #[allow(clippy::vec_box)]
    static POOL: std::cell::RefCell<Vec<Box<Rewriter>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A rewriter for `tool` (see [`Rewriter::new`]), reusing a pooled one when
/// this thread has one.
pub(crate) fn pooled(tool: usize, max_repairs: usize) -> Box<Rewriter> {
    let spare = POOL
        .try_with(|p| p.try_borrow_mut().ok().and_then(|mut p| p.pop()))
        .ok()
        .flatten();
    match spare {
        Some(mut rw) => {
            rw.reset(tool, max_repairs);
            rw
        }
        None => Box::new(Rewriter::new(tool, max_repairs)),
    }
}

/// Gives a rewriter whose call ended back to this thread's pool.
pub(crate) fn recycle(rw: Box<Rewriter>) {
    if rw.input.capacity() > POOL_MAX_BYTES
        || rw.output.capacity() > POOL_MAX_BYTES
        || rw.held.capacity() > POOL_MAX_BYTES
    {
        return;
    }
    let _ = POOL.try_with(|p| {
        if let Ok(mut p) = p.try_borrow_mut() {
            if p.len() < POOL_SIZE {
                p.push(rw);
            }
        }
    });
}

/// The rewriter of one call's arguments for one tool.
#[derive(Debug)]
pub(crate) struct Rewriter {
    tool: usize,
    st: St,
    /// Whether a first key may be a wrapper.
    wrappers: bool,
    /// The `{` is written (with the first member kept, or the close).
    open: bool,
    /// Separator bytes (whitespace, comma) before the next member.
    sep: Vec<u8>,
    key_raw: Vec<u8>,
    /// The member's key as it will be written.
    key: String,
    /// Its position among the tool's declared properties, if declared.
    prop: Option<usize>,
    plan: KeyPlan,
    /// Bytes between the key and the value.
    colon: Vec<u8>,
    held: Vec<u8>,
    scan: Scan,
    emitted_any: bool,
    members: usize,
    /// Keys written so far: declared ones at positions below 64 as bits
    /// of `taken_mask`, the others in `taken_more`.
    taken_mask: u64,
    taken_more: Vec<String>,
    /// A key the tool does not declare was kept.
    pub(crate) undeclared: bool,
    /// The current member's key is undeclared, kept, and allowed by the
    /// schema (see `member_key`).
    free_key: bool,
    /// So far, every member is vouched for by the tool's fast check.
    fast: bool,
    /// So far, every member's value (as written) is a placeholder text.
    all_placeholders: bool,
    /// The start of the streamed string being read, while
    /// `all_placeholders` holds (at most `PLACEHOLDER_RAW` bytes).
    streamed: Vec<u8>,
    /// A wrapper key (first in its object) waiting for its value.
    wrap_pending: Option<String>,
    /// Wrapper objects entered and not yet closed.
    nest: usize,
    /// Wrappers entered while streaming.
    pub(crate) unwraps: usize,
    /// Output is held back until the first wrapper is known to be alone
    /// (or `max_held_call_bytes` of input went by).
    probing: bool,
    /// Output bytes handed out already.
    sent: usize,
    /// Input offset of the chunk being run.
    base: usize,
    /// Characters of the streamed string counted (for a length limit).
    count_chars: bool,
    /// Bytes of the streamed string that start a character.
    chars: u64,
    pub(crate) fixes: Fixes,
    pub(crate) errors: Vec<CallError>,
    /// Every input byte (for the end-of-call checks).
    pub(crate) input: Vec<u8>,
    /// Every output byte.
    pub(crate) output: Vec<u8>,
    /// The arguments as a value, when the held path already decoded them.
    pub(crate) decoded: Option<Value>,
    /// `output` is known to be UTF-8 (it equals a `String`).
    pub(crate) output_utf8: bool,
}

impl Rewriter {
    /// A rewriter for tool `tool`, listing at most `max_repairs` repairs.
    pub(crate) fn new(tool: usize, max_repairs: usize) -> Self {
        Rewriter {
            tool,
            st: St::Lead,
            wrappers: true,
            open: false,
            sep: Vec::new(),
            key_raw: Vec::new(),
            key: String::new(),
            prop: None,
            plan: KeyPlan::Keep,
            colon: Vec::new(),
            held: Vec::new(),
            scan: Scan::default(),
            emitted_any: false,
            members: 0,
            taken_mask: 0,
            taken_more: Vec::new(),
            undeclared: false,
            free_key: false,
            fast: true,
            all_placeholders: true,
            streamed: Vec::new(),
            wrap_pending: None,
            nest: 0,
            unwraps: 0,
            probing: false,
            sent: 0,
            base: 0,
            count_chars: false,
            chars: 0,
            fixes: Fixes::new(max_repairs),
            errors: Vec::new(),
            input: Vec::new(),
            output: Vec::new(),
            decoded: None,
            output_utf8: false,
        }
    }

    /// Makes this rewriter a fresh one for `tool` (as [`Rewriter::new`]),
    /// keeping the capacity of its buffers. Field by field, in place (the
    /// pattern names every field, so a new one cannot be forgotten).
    pub(crate) fn reset(&mut self, tool: usize, max_repairs: usize) {
        let Rewriter {
            tool: t,
            st,
            wrappers,
            open,
            sep,
            key_raw,
            key,
            prop,
            plan,
            colon,
            held,
            scan,
            emitted_any,
            members,
            taken_mask,
            taken_more,
            undeclared,
            free_key,
            fast,
            all_placeholders,
            streamed,
            wrap_pending,
            nest,
            unwraps,
            probing,
            sent,
            base,
            count_chars,
            chars,
            fixes,
            errors,
            input,
            output,
            decoded,
            output_utf8,
        } = self;
        *t = tool;
        *st = St::Lead;
        *wrappers = true;
        *open = false;
        sep.clear();
        key_raw.clear();
        key.clear();
        *prop = None;
        *plan = KeyPlan::Keep;
        colon.clear();
        held.clear();
        *scan = Scan::default();
        *emitted_any = false;
        *members = 0;
        *taken_mask = 0;
        taken_more.clear();
        *undeclared = false;
        *free_key = false;
        *fast = true;
        *all_placeholders = true;
        streamed.clear();
        *wrap_pending = None;
        *nest = 0;
        *unwraps = 0;
        *probing = false;
        *sent = 0;
        *base = 0;
        *count_chars = false;
        *chars = 0;
        fixes.reset(max_repairs);
        errors.clear();
        input.clear();
        output.clear();
        *decoded = None;
        *output_utf8 = false;
    }

    /// The tool this rewriter normalizes for.
    pub(crate) fn tool(&self) -> usize {
        self.tool
    }

    /// Feeds the next piece of the arguments text; returns what to emit for it.
    pub(crate) fn feed(&mut self, cat: &Catalog, bytes: &[u8]) -> &[u8] {
        self.feed_with(cat, bytes, true)
    }

    /// [`Rewriter::feed`], with the whole-object shortcut or without it.
    fn feed_with(&mut self, cat: &Catalog, bytes: &[u8], shortcut: bool) -> &[u8] {
        if self.output.capacity() == 0 {
            // Usually as long as the input.
            self.output.reserve(bytes.len() + 2);
        }
        self.input.extend_from_slice(bytes);
        self.base = self.input.len() - bytes.len();
        let taken = if shortcut && self.base == 0 && self.st == St::Lead {
            self.accept_prefix(cat, bytes)
        } else {
            0
        };
        // Positions in `run` count from the chunk's start.
        self.base += taken;
        self.run(cat, &bytes[taken..]);
        self.base -= taken;
        if self.probing
            && self.st != St::Done
            && self.input.len() <= cat.options().limits.max_held_call_bytes
        {
            return &[];
        }
        self.take_output()
    }

    /// The start of the arguments in `bytes`, already valid for the tool
    /// as written: the members (or the whole object) that [`Rewriter::run`]
    /// would write as they are and vouch for, taken in one scan without its
    /// per-byte and per-member work, leaving the state `run` would be in
    /// after them. Returns how many bytes it took (0: none); `run` reads
    /// the rest.
    ///
    /// A member is taken when its key is declared (at a position below
    /// 64), plain (no escape, no control byte) and new; one comma stands
    /// before it (none before the first); and its value is a plain string
    /// for a parameter any string fits, or a plain string or a complete
    /// scalar (not `null`) that the parameter's fast check accepts as it
    /// is. The object's `}` is taken when no comma stands before it. The
    /// equivalence is tested (`the_whole_object_shortcut_ends_as_run_does`).
    fn accept_prefix(&mut self, cat: &Catalog, bytes: &[u8]) -> usize {
        let tool = cat.tool(self.tool);
        if tool.fast.is_none() {
            return 0;
        }
        let max_held = cat.options().limits.max_held_bytes;
        let n = bytes.len();
        let mut i = 0;
        while i < n && is_ws(bytes[i]) {
            i += 1;
        }
        let start = i;
        if bytes.get(i) != Some(&b'{') {
            return 0;
        }
        i += 1;
        let (mut members, mut taken, mut placeholders) = (0usize, 0u64, true);
        // Where `run`'s state is known: after a member, or after the `}`.
        let mut known = None;
        loop {
            let mut commas = 0usize;
            while i < n {
                match bytes[i] {
                    b',' => commas += 1,
                    b' ' | b'\t' | b'\r' | b'\n' => {}
                    _ => break,
                }
                i += 1;
            }
            match bytes.get(i) {
                Some(b'}') if commas == 0 => {
                    known = Some((i + 1, true));
                    break;
                }
                Some(b'"') if commas == usize::from(members > 0) => {}
                _ => break,
            }
            let Some((end, bit, ph)) = plain_member(tool, max_held, bytes, i, taken, placeholders)
            else {
                break;
            };
            i = end;
            members += 1;
            taken |= bit;
            placeholders = ph;
            known = Some((i, false));
        }
        let Some((end, closed)) = known else {
            return 0;
        };
        self.output.extend_from_slice(&bytes[start..end]);
        self.open = true;
        self.emitted_any = members > 0;
        self.members = members;
        self.taken_mask = taken;
        self.all_placeholders = placeholders;
        self.st = if closed { St::Done } else { St::Between };
        end
    }

    /// The output not handed out yet.
    fn take_output(&mut self) -> &[u8] {
        let from = self.sent;
        self.sent = self.output.len();
        &self.output[from..]
    }

    /// True when key `k` was written already.
    fn is_taken(&self, tool: &CompiledTool, k: &str) -> bool {
        match tool.prop_index(k) {
            Some(i) if i < 64 => self.taken_mask >> i & 1 == 1,
            _ => self.taken_more.iter().any(|t| t == k),
        }
    }

    /// Starts again from the first byte with wrapper detection off, over
    /// the first `upto` input bytes (at most `max_held_call_bytes`: nothing
    /// was handed out yet).
    fn restart(&mut self, cat: &Catalog, upto: usize) {
        let input = std::mem::take(&mut self.input);
        let mut fresh = Rewriter::new(self.tool, self.fixes.max);
        fresh.wrappers = false;
        fresh.run(cat, &input[..upto]);
        fresh.input = input;
        fresh.base = self.base;
        *self = fresh;
    }

    /// Starts again holding the arguments whole, from their first byte to
    /// `upto` (at most `max_held_call_bytes`: nothing was handed out yet).
    fn hold_from_start(&mut self, upto: usize) {
        let input = std::mem::take(&mut self.input);
        let start = input
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(upto)
            .min(upto);
        let mut fresh = Rewriter::new(self.tool, self.fixes.max);
        fresh.held = input[start..upto].to_vec();
        fresh.st = St::HoldAll;
        fresh.input = input;
        fresh.base = self.base;
        *self = fresh;
    }

    /// Ends the arguments; returns what is left to emit.
    pub(crate) fn finish(&mut self, cat: &Catalog) -> &[u8] {
        if self.st != St::Done {
            self.fast = false;
        }
        match self.st {
            St::Done | St::Broken => {}
            St::Lead => {
                self.output.extend_from_slice(b"{}");
                self.fixes.push(Fix {
                    kind: FixKind::MissingArguments,
                    path: String::new(),
                    from: None,
                    to: Some("{}".into()),
                });
            }
            St::HoldAll => {
                let held = std::mem::take(&mut self.held);
                structure::finish_held(self, cat, &held);
            }
            St::Value(Mode::Hold) if self.scan.scalar => {
                // A scalar ends with the input.
                self.end_held(cat);
                self.broken();
            }
            _ => self.broken(),
        }
        self.st = St::Done;
        self.take_output()
    }

    /// Writes what was held verbatim and passes the rest through.
    fn broken(&mut self) {
        self.fast = false;
        if !self.open && !matches!(self.st, St::Lead | St::HoldAll | St::Done) {
            self.output.push(b'{');
            self.open = true;
        }
        self.output.append(&mut self.sep);
        self.output.append(&mut self.key_raw);
        self.output.append(&mut self.colon);
        self.output.append(&mut self.held);
        self.st = St::Broken;
    }

    fn run(&mut self, cat: &Catalog, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            match self.st {
                St::Broken => {
                    self.output.extend_from_slice(&bytes[i..]);
                    return;
                }
                St::Done => {
                    if !b.is_ascii_whitespace() {
                        // Bytes after the object: not JSON; keep them.
                        self.st = St::Broken;
                        continue;
                    }
                }
                St::HoldAll => {
                    self.held.extend_from_slice(&bytes[i..]);
                    if self.held.len() > cat.options().limits.max_held_call_bytes {
                        // Too long to hold: an object is read as it is
                        // (no wrapper removed); anything else passes
                        // through as written (and is reported).
                        if self.held.first() == Some(&b'{') {
                            self.restart(cat, self.base + bytes.len());
                        } else {
                            self.broken();
                        }
                    }
                    return;
                }
                St::WrapEnd => match b {
                    b' ' | b'\t' | b'\r' | b'\n' => {}
                    b'}' if self.nest > 0 => self.nest -= 1,
                    b'}' => self.close(),
                    b',' if self.wrappers
                        && self.base + i <= cat.options().limits.max_held_call_bytes =>
                    {
                        // Not alone: not a wrapper. Read again as it is.
                        self.restart(cat, self.base + i);
                        continue;
                    }
                    b',' => {
                        // Past the hold: its members were streamed; the
                        // members after it join them.
                        self.sep.clear();
                        self.sep.push(b);
                        self.st = St::Between;
                    }
                    _ => {
                        self.broken();
                        continue;
                    }
                },
                St::Lead => {
                    if b == b'{' {
                        self.st = St::Between;
                    } else if !b.is_ascii_whitespace() {
                        self.st = St::HoldAll;
                        continue;
                    }
                }
                St::Between => match b {
                    b'"' => {
                        self.key_raw.clear();
                        self.key_raw.push(b);
                        self.st = St::Key { esc: false };
                    }
                    b'}' if self.nest > 0 => {
                        // The end of a wrapper's inner object.
                        self.nest -= 1;
                        self.sep.clear();
                        self.st = St::WrapEnd;
                    }
                    b'}' => self.close(),
                    b',' | b' ' | b'\t' | b'\r' | b'\n' => self.sep.push(b),
                    _ => {
                        self.broken();
                        continue;
                    }
                },
                St::Key { esc } => {
                    // Skip plain key bytes at once.
                    if !esc {
                        if let Some(n) = memchr::memchr2(b'"', b'\\', &bytes[i..]) {
                            self.key_raw.extend_from_slice(&bytes[i..i + n]);
                            i += n;
                        } else {
                            self.key_raw.extend_from_slice(&bytes[i..]);
                            return;
                        }
                    }
                    let b = bytes[i];
                    self.key_raw.push(b);
                    if esc {
                        self.st = St::Key { esc: false };
                    } else if b == b'\\' {
                        self.st = St::Key { esc: true };
                    } else {
                        // `b` is the closing quote.
                        if !self.key_done(cat) {
                            i += 1;
                            continue;
                        }
                        self.st = St::AfterKey { colon: false };
                    }
                }
                St::AfterKey { colon } => {
                    if b == b':' && !colon {
                        self.colon.push(b);
                        self.st = St::AfterKey { colon: true };
                    } else if b.is_ascii_whitespace() {
                        self.colon.push(b);
                    } else if !colon {
                        self.broken();
                        continue;
                    } else if let Some(key) = self.wrap_pending.take() {
                        if b == b'{' {
                            self.enter(key);
                        } else if self.nest == 0 {
                            let mut held = vec![b'{'];
                            held.append(&mut self.sep);
                            held.append(&mut self.key_raw);
                            held.append(&mut self.colon);
                            self.held = held;
                            self.st = St::HoldAll;
                            continue;
                        } else if self.base + i <= cat.options().limits.max_held_call_bytes {
                            // A wrapper in a wrapper whose value is not an
                            // object (a JSON string of the arguments, a
                            // scalar): nothing was handed out yet; the
                            // arguments are held whole and undone at the end.
                            self.hold_from_start(self.base + i);
                            continue;
                        } else {
                            // Past the hold: an ordinary member (its colon kept).
                            self.key = key;
                            self.member_key(cat);
                            self.value_start(cat, b);
                            continue;
                        }
                    } else {
                        self.value_start(cat, b);
                        continue;
                    }
                }
                St::Value(mode) => {
                    // The value's bytes in this piece, taken in one go.
                    let rest = &bytes[i..];
                    let (n, end) = self.scan.over(rest);
                    if n > 0 {
                        self.take(cat, mode, &rest[..n]);
                    }
                    i += n;
                    if end.is_some() {
                        // `EndWith`: its last byte was taken; `EndBefore`:
                        // the byte at `i` is read again after it.
                        self.value_end(cat);
                    }
                    continue;
                }
            }
            i += 1;
        }
    }

    /// The object's closing brace.
    fn close(&mut self) {
        self.write_open();
        let sep = std::mem::take(&mut self.sep);
        self.output.extend(sep.iter().filter(|&&c| c != b','));
        self.output.push(b'}');
        self.probing = false;
        self.st = St::Done;
    }

    /// Enters the object value of wrapper `key`: its members are read as
    /// the arguments' own, streamed once the wrapper is known to be alone.
    fn enter(&mut self, key: String) {
        self.fixes.push(Fix {
            kind: FixKind::UnwrappedArguments,
            path: String::new(),
            from: Some(key),
            to: None,
        });
        self.nest += 1;
        self.unwraps += 1;
        self.members = 0;
        self.probing = true;
        self.sep.clear();
        self.key_raw.clear();
        self.colon.clear();
        self.st = St::Between;
    }

    /// Writes the `{` if it is not written yet.
    fn write_open(&mut self) {
        if !self.open {
            self.output.push(b'{');
            self.open = true;
        }
    }

    /// A key is complete. False when the rewriter left the member state
    /// (a wrapper candidate now held whole, or a broken key).
    fn key_done(&mut self, cat: &Catalog) -> bool {
        if !decode_key(&self.key_raw, &mut self.key) {
            self.broken();
            return false;
        }
        self.colon.clear();
        let tool = cat.tool(self.tool);
        let opts = cat.options();
        if self.wrappers
            && self.members == 0
            && opts.structure
            && structure::is_wrapper(tool, &self.key)
        {
            self.fast = false;
            if structure::is_shell_key(&self.key) {
                // `{"type": "object", "properties": …}`: held whole.
                if self.nest == 0 {
                    let mut held = vec![b'{'];
                    held.append(&mut self.sep);
                    held.append(&mut self.key_raw);
                    self.held = held;
                    self.st = St::HoldAll;
                    return false;
                }
            } else if self.nest < structure::MAX_DECODES {
                // Streamed into if its value is an object.
                self.wrap_pending = Some(self.key.clone());
                self.colon.clear();
                return true;
            }
        }
        self.member_key(cat);
        true
    }

    /// Plans the member whose key (as written) is in `self.key`
    /// (declared, renamed, dropped).
    fn member_key(&mut self, cat: &Catalog) {
        let tool = cat.tool(self.tool);
        self.members += 1;
        let declared = tool.prop_index(&self.key);
        let plan = if declared.is_some() {
            KeyPlan::Keep
        } else {
            tool.plan_key(&self.key, cat.options(), &|k| self.is_taken(tool, k))
        };
        // Vouched for only as written, declared, and once — or, where the
        // schema allows any other key (`additionalProperties` absent or
        // true, nothing else constraining them), undeclared and kept as
        // written, once (its value is vouched for only as a string).
        self.free_key = declared.is_none()
            && matches!(plan, KeyPlan::Keep)
            && tool.fast.as_ref().is_some_and(|f| f.additional)
            && !self.taken_more.contains(&self.key);
        let taken = match declared {
            None => !self.free_key,
            Some(i) if i < 64 => self.taken_mask >> i & 1 == 1,
            Some(_) => self.taken_more.contains(&self.key),
        };
        if taken {
            self.fast = false;
        }
        self.prop = None;
        match &plan {
            KeyPlan::Rename(to) => {
                self.fixes.push(Fix {
                    kind: FixKind::ParameterName,
                    path: pointer_push("", to),
                    from: Some(std::mem::take(&mut self.key)),
                    to: Some(to.clone()),
                });
                self.key_raw = serde_json::to_vec(to).unwrap_or_default();
                self.key.clone_from(to);
                self.prop = tool.prop_index(to);
            }
            KeyPlan::Drop(kind) => {
                self.fixes.push(Fix {
                    kind: *kind,
                    path: pointer_push("", &self.key),
                    from: Some(self.key.clone()),
                    to: None,
                });
            }
            KeyPlan::Keep => self.prop = declared,
        }
        self.undeclared |= self.prop.is_none() && !matches!(plan, KeyPlan::Drop(_));
        self.plan = plan;
    }

    fn value_start(&mut self, cat: &Catalog, b: u8) {
        self.scan = Scan::default();
        let tool = cat.tool(self.tool);
        let mode = match (&self.plan, self.prop.map(|i| tool.prop_at(i))) {
            (KeyPlan::Drop(_), _) => Mode::Skip,
            (_, Some(p)) if b == b'"' && p.streams_string => Mode::Stream,
            (_, Some(_)) => Mode::Hold,
            // An undeclared key's value schema is the same for every such
            // key (`additionalProperties`), judged once per catalog.
            (_, None) => match tool.undeclared_any_string {
                None => Mode::Stream,
                Some(true) if b == b'"' => Mode::Stream,
                Some(_) => Mode::Hold,
            },
        };
        self.held.clear();
        self.count_chars = false;
        if mode == Mode::Stream {
            match self.fast_prop(tool) {
                None if self.free_key && b == b'"' => {}
                Some(f) if f.any_string() => {}
                Some(f) if f.counts_chars() => {
                    self.count_chars = true;
                    self.chars = 0;
                }
                _ => self.fast = false,
            }
            self.streamed.clear();
            self.write_head();
        }
        self.st = St::Value(mode);
    }

    /// Writes the member's separator, key and colon.
    fn write_head(&mut self) {
        self.write_open();
        if self.emitted_any && self.sep.iter().filter(|&&c| c == b',').count() != 1 {
            // `{"a": 1 "b": 2}`, `{"a": 1,, "b": 2}`: written as they came.
            self.fast = false;
        }
        if self.emitted_any {
            self.output.append(&mut self.sep);
        } else {
            let sep = std::mem::take(&mut self.sep);
            self.output.extend(sep.iter().filter(|&&c| c != b','));
        }
        self.output.append(&mut self.key_raw);
        self.output.append(&mut self.colon);
        self.emitted_any = true;
        match self.prop {
            Some(i) if i < 64 => self.taken_mask |= 1 << i,
            _ => self.taken_more.push(self.key.clone()),
        }
    }

    fn take(&mut self, cat: &Catalog, mode: Mode, bytes: &[u8]) {
        match mode {
            Mode::Stream => {
                self.output.extend_from_slice(bytes);
                if self.count_chars {
                    self.chars += bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count() as u64;
                }
                if self.all_placeholders && self.streamed.len() <= PLACEHOLDER_RAW {
                    let room = PLACEHOLDER_RAW + 1 - self.streamed.len();
                    self.streamed
                        .extend_from_slice(&bytes[..bytes.len().min(room)]);
                }
            }
            Mode::Skip => {}
            Mode::Hold => {
                self.held.extend_from_slice(bytes);
                if self.held.len() > cat.options().limits.max_held_bytes {
                    // Too long to hold: written as it is from here on.
                    self.fast = false;
                    self.all_placeholders = false;
                    self.write_head();
                    self.output.append(&mut self.held);
                    self.st = St::Value(Mode::Stream);
                }
            }
        }
    }

    fn value_end(&mut self, cat: &Catalog) {
        if self.scan.bad {
            self.fast = false;
        }
        if self.st == St::Value(Mode::Stream) && self.all_placeholders {
            // A streamed value is a string: a placeholder only when short.
            self.all_placeholders =
                self.streamed.len() <= PLACEHOLDER_RAW && placeholder_string(&self.streamed);
        }
        if self.count_chars && self.st == St::Value(Mode::Stream) {
            // Less the quotes and what escapes take beyond their character.
            let n = self.chars.saturating_sub(2 + self.scan.esc_extra);
            if !self
                .fast_prop(cat.tool(self.tool))
                .is_some_and(|f| f.length_fits(n))
            {
                self.fast = false;
            }
            self.count_chars = false;
        }
        if self.st == St::Value(Mode::Hold) {
            self.end_held(cat);
        }
        if self.st == St::Value(Mode::Skip) {
            self.sep.clear();
        }
        self.key_raw.clear();
        self.colon.clear();
        self.held.clear();
        self.st = St::Between;
    }

    /// A held value is complete: drop it, coerce it, or write it as it is.
    fn end_held(&mut self, cat: &Catalog) {
        let tool = cat.tool(self.tool);
        let c = cat.coercer(self.tool);
        let Ok(v) = serde_json::from_slice::<Value>(&self.held) else {
            self.fast = false;
            self.all_placeholders = false;
            self.write_head();
            self.output.append(&mut self.held);
            return;
        };
        self.all_placeholders &= v.as_str().is_some_and(is_placeholder_text);
        // Valid as written (the fast check says so): nothing to coerce.
        if !v.is_null() && self.fast_prop(tool).is_some_and(|f| f.accepts(&v)) {
            self.write_head();
            self.output.append(&mut self.held);
            return;
        }
        let path = pointer_push("", &self.key);
        if v.is_null() && c.drops_null(&tool.schema, &self.key) {
            self.fixes.push(Fix {
                kind: FixKind::NullRemoved,
                path,
                from: Some("null".into()),
                to: None,
            });
            self.sep.clear();
            self.held.clear();
            return;
        }
        let coerced = c
            .value_schema(&tool.schema, &self.key)
            .and_then(|vs| c.coerce(&v, vs, &path, 1, &mut self.fixes));
        let fits = self
            .fast_prop(tool)
            .is_some_and(|f| f.accepts(coerced.as_ref().unwrap_or(&v)));
        self.fast &= fits;
        self.write_head();
        match coerced {
            Some(n) => {
                self.held.clear();
                // Serializing a `Value` cannot fail.
                let _ = serde_json::to_writer(&mut self.output, &n);
            }
            None => self.output.append(&mut self.held),
        }
    }

    /// True when the call is known valid for `tool` without the full
    /// check: every member vouched for as it streamed, the required ones
    /// present, the output strict JSON, and not a copied template.
    pub(crate) fn fits(&self, tool: &CompiledTool) -> bool {
        self.vouched(tool).is_some_and(|missing| missing.is_empty())
    }

    /// When every member written was vouched for by the fast check (as in
    /// [`Rewriter::fits`]): the required keys missing (in the schema's
    /// order), the call's only problem. `None` when not known.
    pub(crate) fn vouched<'t>(&self, tool: &'t CompiledTool) -> Option<Vec<&'t str>> {
        if self.decoded.is_some() {
            return None;
        }
        self.vouched_output(tool)
    }

    /// [`Rewriter::vouched`] for the output alone, also when the arguments
    /// were held and decoded (the caller checks the decoded value for a
    /// copied template).
    pub(crate) fn vouched_output<'t>(&self, tool: &'t CompiledTool) -> Option<Vec<&'t str>> {
        let schema = tool.fast.as_ref()?;
        let known = self.fast
            && self.errors.is_empty()
            && !(self.members > 0 && self.all_placeholders)
            && (self.output_utf8 || std::str::from_utf8(&self.output).is_ok());
        if !known {
            return None;
        }
        if tool.required_mask.is_some_and(|m| self.taken_mask & m == m) {
            return Some(Vec::new());
        }
        Some(
            schema
                .required
                .iter()
                .filter(|r| !self.is_taken(tool, r))
                .map(String::as_str)
                .collect(),
        )
    }

    /// Runs a fresh rewriter (no wrapper detection) over `text` and takes
    /// its output, repairs and errors as this one's.
    pub(crate) fn nested(&mut self, cat: &Catalog, text: &[u8]) {
        // A pooled one: its buffers are an earlier call's.
        let mut inner = pooled(self.tool, self.fixes.max);
        inner.wrappers = false;
        inner.input.extend_from_slice(text);
        inner.run(cat, text);
        inner.finish(cat);
        // The fast check's verdict is the nested rewriter's (its output is
        // the call's).
        self.fast = inner.fast;
        self.members = inner.members;
        self.all_placeholders = inner.all_placeholders;
        self.taken_mask = inner.taken_mask;
        self.taken_more = std::mem::take(&mut inner.taken_more);
        self.output.append(&mut inner.output);
        self.undeclared |= inner.undeclared;
        self.fixes.absorb(std::mem::take(&mut inner.fixes));
        self.errors.append(&mut inner.errors);
        recycle(inner);
    }
}

#[cfg(test)]
impl Rewriter {
    /// Feeds `bytes` without the whole-object shortcut; returns what
    /// `feed` would.
    pub(crate) fn feed_by_run(&mut self, cat: &Catalog, bytes: &[u8]) -> Vec<u8> {
        self.feed_with(cat, bytes, false).to_vec()
    }

    /// Whether the shortcut takes `bytes` as a first piece.
    pub(crate) fn takes_shortcut(cat: &Catalog, tool: usize, bytes: &[u8]) -> bool {
        Rewriter::new(tool, 1000).accept_prefix(cat, bytes) > 0
    }

    /// Everything of the state that a later piece, `finish` or the
    /// end-of-call checks read.
    pub(crate) fn observable(&self) -> String {
        format!(
            "{:?}",
            (
                (self.st, self.open, self.emitted_any, self.members),
                (
                    self.taken_mask,
                    &self.taken_more,
                    self.undeclared,
                    self.fast
                ),
                (self.all_placeholders, self.unwraps, self.nest, self.probing),
                (&self.sep, &self.held, self.sent, &self.wrap_pending),
                (&self.output, &self.input, &self.fixes.list, &self.errors),
                (&self.decoded, self.output_utf8, self.base),
            )
        )
    }
}

impl Rewriter {
    /// The fast check of the current member's declared property, if it has one.
    fn fast_prop<'t>(&self, tool: &'t CompiledTool) -> Option<&'t Fast> {
        tool.prop_at(self.prop?).fast.as_ref()
    }
}

/// JSON's whitespace (not `\x0c`, which `run` reads differently in
/// different places: the shortcut leaves it to `run`).
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// One member for [`Rewriter::accept_prefix`], from its key's opening
/// quote at `i`: its end, its key's bit and the placeholder verdict so
/// far; `None` when it is not one `run` would write as it is and vouch for
/// (or not complete in `bytes`).
fn plain_member(
    tool: &CompiledTool,
    max_held: usize,
    bytes: &[u8],
    i: usize,
    taken: u64,
    placeholders: bool,
) -> Option<(usize, u64, bool)> {
    let n = bytes.len();
    // The key.
    // Keys are short: one plain pass finds the closing quote (an escape or
    // a control byte first rules the member out, as `run` would read it).
    let k0 = i + 1;
    let kn = bytes
        .get(k0..)?
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
    let key = &bytes[k0..k0 + kn];
    if bytes[k0 + kn] != b'"' {
        return None;
    }
    // Compared as bytes (a declared name is UTF-8, so bytes that are not
    // match none).
    let p = tool
        .prop_index_bytes(key)
        .filter(|&p| p < 64 && taken >> p & 1 == 0)?;
    let mut i = k0 + kn + 1;
    while i < n && is_ws(bytes[i]) {
        i += 1;
    }
    if bytes.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    while i < n && is_ws(bytes[i]) {
        i += 1;
    }
    let prop = tool.prop_at(p);
    let f = prop.fast.as_ref()?;
    // The value.
    let v0 = i;
    let held = match bytes.get(i)? {
        b'"' => {
            let m = memchr::memchr2(b'"', b'\\', &bytes[i + 1..])?;
            i += 1 + m;
            if bytes[i] != b'"' || bytes[v0 + 1..i].iter().any(|&c| c < 0x20) {
                return None;
            }
            i += 1;
            if prop.streams_string && !f.any_string() {
                // Streamed, with its characters counted: left to `run`.
                return None;
            }
            !prop.streams_string
        }
        b'{' | b'[' => return None,
        _ => {
            while i < n && !matches!(bytes[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n') {
                i += 1;
            }
            // A scalar is complete only once a byte after it came.
            if i >= n {
                return None;
            }
            true
        }
    };
    let raw = &bytes[v0..i];
    let placeholders = if held {
        // As `end_held` takes a value that needs nothing.
        if raw.len() > max_held {
            return None;
        }
        let v = serde_json::from_slice::<Value>(raw).ok()?;
        if v.is_null() || !f.accepts(&v) {
            return None;
        }
        placeholders && v.as_str().is_some_and(is_placeholder_text)
    } else {
        // As `value_end` judges a streamed string.
        placeholders && raw.len() <= PLACEHOLDER_RAW && placeholder_string(raw)
    };
    Some((i, 1 << p, placeholders))
}

/// Decodes the JSON string `raw` (with its quotes) into `key`; false when
/// it is not a valid JSON string. Plain keys are copied without a parser.
fn decode_key(raw: &[u8], key: &mut String) -> bool {
    if let Some(inner) = raw
        .strip_prefix(b"\"")
        .and_then(|r| r.strip_suffix(b"\""))
        .filter(|r| !r.iter().any(|&b| b == b'\\' || b == b'"' || b < 0x20))
    {
        key.clear();
        if let Ok(t) = std::str::from_utf8(inner) {
            key.push_str(t);
            return true;
        }
        return false;
    }
    match serde_json::from_slice::<String>(raw) {
        Ok(k) => {
            *key = k;
            true
        }
        Err(_) => false,
    }
}

/// True when the JSON string `raw` (with its quotes, as written) holds a
/// placeholder text.
fn placeholder_string(raw: &[u8]) -> bool {
    // Every placeholder ends in one of a few characters (see
    // `is_placeholder_text`): most values are ruled out by their last byte.
    if let Some(&last) = raw
        .strip_suffix(b"\"")
        .and_then(|r| r.trim_ascii_end().last())
    {
        if last.is_ascii() && !matches!(last, b'.' | b'}' | b']' | b'>' | b'0'..=b'9' | b'\\') {
            return false;
        }
    }
    match raw
        .strip_prefix(b"\"")
        .and_then(|r| r.strip_suffix(b"\""))
        .filter(|r| !r.iter().any(|&b| b == b'\\' || b == b'"' || b < 0x20))
    {
        Some(inner) => std::str::from_utf8(inner).is_ok_and(is_placeholder_text),
        None => serde_json::from_slice::<String>(raw).is_ok_and(|t| is_placeholder_text(&t)),
    }
}

#[cfg(test)]
mod scan_tests {
    use super::{Scan, Step};

    /// Where `Scan::step` byte by byte ends the value in `bytes`: bytes
    /// taken, how it ended, and the state after.
    fn by_step(mut scan: Scan, bytes: &[u8]) -> (usize, Option<Step>, Scan) {
        for (i, &b) in bytes.iter().enumerate() {
            match scan.step(b) {
                Step::More => {}
                Step::EndWith => return (i + 1, Some(Step::EndWith), scan),
                Step::EndBefore => return (i, Some(Step::EndBefore), scan),
            }
        }
        (bytes.len(), None, scan)
    }

    /// `Scan::over` (the rewriter's bulk reading of a value) ends every
    /// value where `Scan::step` byte by byte does, in the same state, at
    /// every split of the input in two pieces.
    #[test]
    fn over_ends_as_step_does() {
        let values: &[&[u8]] = &[
            br#""plain text", "next""#,
            br#""a \"quoted\" \\ word\n" }"#,
            b"\"\\u00e9t\\u00E9 \\uD83D\\uDE00 \\uD800 x\"",
            b"\"bad \\q escape\", 1",
            b"\"raw\tcontrol\nbytes\"",
            b"\"short \\u12\" tail",
            br#"{"k": {"deep": [1, 2, {"s": "}]{["}], "t": true}, "u": null}, "after": 1"#,
            br#"[1, [2, [3]], "]", {"a": "\"}"}] rest"#,
            b"12345, \"x\"",
            b"-1.5e+3}",
            b"true ",
            b"null",
            b"nul",
            br#"{"unclosed": [1, 2"#,
            "\"caf\u{e9} \u{1F600}\", 2".as_bytes(),
        ];
        for v in values {
            let want = by_step(Scan::default(), v);
            for cut in 0..=v.len() {
                let mut scan = Scan::default();
                let (first, rest) = v.split_at(cut);
                let (n, end) = scan.over(first);
                let got = if end.is_some() {
                    (n, end, scan)
                } else {
                    assert_eq!(n, first.len(), "{:?} cut {cut}", String::from_utf8_lossy(v));
                    let (m, end) = scan.over(rest);
                    (n + m, end, scan)
                };
                assert_eq!(got, want, "{:?} cut {cut}", String::from_utf8_lossy(v));
            }
        }
    }
}
