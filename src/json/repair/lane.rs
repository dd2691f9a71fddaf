//! The lane: plain JSON arguments streamed in small chunks, read byte by
//! byte with resumable state, outside the parser's layers.
//!
//! The repairer's fast path reads *units* (a member `, "key":`, a scalar
//! and the byte after it, a string's closing quote and what follows it)
//! and commits a unit once it is complete and plain. A chunk that ends
//! inside a unit leaves the unit's bytes to be read again with the next
//! chunk ([`Repairer::feed`]'s stash). That is cheap per byte, but a
//! model server sends a token or two per chunk, so nearly every chunk ends
//! inside a unit, and each chunk also passes through the parser, the
//! dialect's block, the calls reader, the repairer, the envelope router and
//! the arguments writer, each with its own bookkeeping.
//!
//! The lane is the steady state of that path kept as one small machine. The
//! parser arms it after a chunk that leaves a call's arguments in a plain
//! state ([`crate::dialect::json::JsonCalls::lane_arm`]): it takes a copy of
//! the repairer's stack and position and the arguments writer's buffer, and
//! reads the next chunks itself. It accepts exactly what the fast path
//! commits unchanged, keeps its place inside a unit across chunks (holding
//! the unit's bytes, never reading them again) and hands the parser one
//! delta per chunk. Every byte it takes is appended to the arguments buffer
//! as it is read; a commit only moves the index that divides the arguments
//! from the held bytes after them. The commonest chunk of all, a few plain
//! bytes inside a string value, does not enter the byte loop
//! ([`Lane::feed_string`]).
//!
//! At the first byte it does not take (a repair to make, a `<` that may be
//! the closing tag, a container whose end the calls reader must see, a
//! limit) it stops: the repairer gets back the state of the last commit
//! point (stack, position, offset), the writer its buffer, and the held
//! bytes of the cut unit and the rest of the chunk are fed to the parser
//! as usual. Whatever the lane commits is what the repairer would have
//! written for those bytes, and the state it leaves is the state the
//! repairer would be in there, so the output does not depend on whether,
//! or for how long, the lane was armed — the contract tests compare every
//! split of the same input.

use super::fast::number_len;
use super::{
    fits_f64, plain_len, plain_word, utf8_len, Esc, Frame, Kind, Lex, Pos, Quote, Repairer, StrLex,
};

/// Where the lane is inside the current unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    /// In structural position, nothing held: a commit point.
    Clean,
    /// Inside a string value's content (a commit point while [`Sub::Plain`]).
    Str,
    /// A string value's closing quote (and blanks) held: it ends the string
    /// if `,` `}` or `]` follows.
    ValQuote,
    /// A comma (and blanks) held until the next member or element begins.
    Comma,
    /// A key being read, from its opening quote (and a comma before it).
    Key,
    /// A key's closing quote (and blanks) held until its colon.
    KeyQuote,
    /// A number or literal held until the byte after it.
    Scalar,
}

/// Inside string content: a character or an escape in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sub {
    Plain,
    /// After a backslash.
    Esc,
    /// After `\u` and this many hex digits (with their value so far).
    Hex(u8, u16),
    /// A UTF-8 character: bytes read so far, its length.
    Utf8(u8, u8),
}

/// The resumable reader of plain JSON arguments (see the module docs).
/// Owned by the parser; armed and disarmed by the calls reader.
#[derive(Debug)]
pub(crate) struct Lane {
    armed: bool,
    /// The repairer's innermost containers (kinds), from depth `base` on,
    /// as the lane moved them.
    stack: Vec<Kind>,
    /// The depth of `stack[0]`: the frames below are not copied (arming
    /// costs the same at any depth) and the lane never closes them.
    base: usize,
    /// Frames below this depth are unchanged since the lane was armed.
    low: usize,
    /// Depth when armed.
    depth0: usize,
    /// Containers may be closed while the depth is above this.
    floor: usize,
    max_depth: usize,
    max_token: usize,
    /// The position as read (ahead of the commit point while a unit is held).
    pos: Pos,
    unit: Unit,
    sub: Sub,
    /// The last commit point, while a unit is held: its position and
    /// whether it is inside a string value.
    cpos: Pos,
    cin_str: bool,
    /// The UTF-8 character being read.
    ch: [u8; 4],
    /// Bytes of the held key or scalar (a key's from its opening quote, up
    /// to its colon), or blanks after a held comma or closing quote.
    tok: usize,
    /// The arguments JSON (the writer's buffer while armed), then the held
    /// (read, uncommitted) bytes of the current unit: every byte the lane
    /// takes is appended as it is read, and a commit only moves
    /// `committed`.
    out: Vec<u8>,
    /// The commit point: `out[..committed]` is the arguments, the rest held.
    committed: usize,
    /// How much of `out` has been handed out as deltas.
    emitted: usize,
    /// `out` never grows past this (`max_args_bytes`).
    out_max: usize,
    /// The held bytes, once split off `out` (see [`Lane::take_held`]).
    held: Vec<u8>,
    /// Absolute offset of `out[committed0]`: the lane takes input bytes
    /// one for one, so the commit point is at `at0 + committed - committed0`.
    at0: u64,
    committed0: usize,
    /// The call's index (for its `ToolArgs` events).
    index: usize,
    /// The last stop was at a closer the lane may not close (the end of
    /// the arguments, as a rule), not at something to repair.
    at_end: bool,
}

impl Default for Lane {
    fn default() -> Self {
        Lane {
            armed: false,
            stack: Vec::new(),
            base: 0,
            low: 0,
            depth0: 0,
            floor: 0,
            max_depth: 0,
            max_token: 0,
            pos: Pos::Value,
            unit: Unit::Clean,
            sub: Sub::Plain,
            cpos: Pos::Value,
            cin_str: false,
            ch: [0; 4],
            tok: 0,
            out: Vec::new(),
            committed: 0,
            emitted: 0,
            out_max: 0,
            held: Vec::new(),
            at0: 0,
            committed0: 0,
            index: 0,
            at_end: false,
        }
    }
}

/// How many of the repairer's innermost containers the lane copies when
/// armed (it may close all but the outermost of them).
const STACK_COPY: usize = 32;

/// Bytes that end a number or literal (the slow path's bare-token ends).
#[inline]
fn ends_scalar(b: u8) -> bool {
    matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
}

/// A byte a scalar (number or literal) may hold, as the repairer reads one.
#[inline]
fn scalar_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-')
}

/// JSON whitespace.
#[inline]
fn blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Length of the run of bytes `take` accepts at the start of `s`.
#[inline(always)]
fn run(s: &[u8], take: impl Fn(u8) -> bool) -> usize {
    s.iter().position(|&b| !take(b)).unwrap_or(s.len())
}

impl Lane {
    /// True while the lane reads the call's chunks.
    #[inline]
    pub(crate) fn armed(&self) -> bool {
        self.armed
    }

    /// The lane's last stop was at a closer of a container it may not
    /// close — where the arguments end, as a rule — rather than at input
    /// the repairer must read (a repair, a surrogate escape, a limit).
    pub(crate) fn stopped_at_end(&self) -> bool {
        self.at_end
    }

    /// The call whose arguments the lane writes.
    #[inline]
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// Arms the lane on `rep` (inside a call's arguments) when it is in a
    /// plain state the fast path could have left: `closable` containers may
    /// be closed (the sink's [`super::Sink::opaque_closable`]), `out` is the
    /// arguments writer's buffer (all of it handed out), which may not grow
    /// past `out_max`. A unit the repairer holds (its stash) is taken over.
    /// False leaves everything as it was.
    pub(crate) fn arm(
        &mut self,
        rep: &mut Repairer,
        closable: usize,
        out: &mut Vec<u8>,
        out_max: usize,
        index: usize,
    ) -> bool {
        debug_assert!(!self.armed);
        if rep.limited
            || rep.stack.is_empty()
            || rep.lt_once
            || rep.inline != 0
            || rep.utf8_len != 0
            || rep.comma.is_some()
            || !(rep.comma_ws.is_empty()
                && rep.key.is_empty()
                && rep.tok.is_empty()
                && rep.quote_ws.is_empty()
                && rep.tok_ws.is_empty()
                && rep.esc_buf.is_empty())
            || out.len() > out_max
        {
            return false;
        }
        let unit = match rep.lex {
            Lex::None if matches!(rep.pos, Pos::Value | Pos::ObjKey | Pos::AfterValue) => {
                Unit::Clean
            }
            Lex::Str(StrLex {
                quote: Quote::Double,
                key: false,
                esc: Esc::None,
                quote_pending: false,
                newline: false,
            }) => Unit::Str,
            _ => return false,
        };
        let depth = rep.stack.len();
        // As the fast path computes it: never the outermost container, and
        // never a frame the slow path marked (a tuple, phantom closers).
        let mut floor = depth.saturating_sub(closable).max(1);
        let base = depth.saturating_sub(STACK_COPY);
        if let Some(k) = rep.stack[base..]
            .iter()
            .rposition(|f| f.tuple || f.phantoms > 0)
        {
            floor = floor.max(base + k + 1);
        }
        // The innermost frame copied stays open: the lane always knows the
        // kind of the container it is in.
        floor = floor.max(base + 1);
        self.stack.clear();
        self.stack.extend(rep.stack[base..].iter().map(|f| f.kind));
        self.base = base;
        self.low = depth;
        self.depth0 = depth;
        self.floor = floor;
        self.max_depth = rep.max_depth;
        self.max_token = rep.max_token;
        self.pos = rep.pos;
        self.unit = unit;
        self.sub = Sub::Plain;
        self.tok = 0;
        self.held.clear();
        self.committed = out.len();
        self.emitted = out.len();
        self.committed0 = out.len();
        self.out_max = out_max;
        self.at0 = rep.offset - rep.stash.len() as u64;
        self.index = index;
        std::mem::swap(&mut self.out, out);
        self.armed = true;
        if !rep.stash.is_empty() {
            // The unit a chunk cut: read here, from the commit point before it.
            let stash = std::mem::take(&mut rep.stash);
            let len = self.out.len();
            let taken = self.feed(&stash).is_none();
            if !taken {
                // Not a unit the lane completes: the repairer keeps it.
                self.held.clear();
                self.out.truncate(len);
                std::mem::swap(&mut self.out, out);
                self.armed = false;
                rep.stash = stash;
                return false;
            }
            rep.stash = stash;
            rep.stash.clear();
        }
        true
    }

    /// Reads `input` when it is the common chunk of a streamed string
    /// value: at most 8 bytes of plain content, inside a string value whose
    /// earlier bytes are all handed out. Then all of it is committed and is
    /// the chunk's delta, returned as a word ([`crate::event::word`]) so the
    /// caller makes the event without reading the bytes again, and without
    /// the byte loop of [`Lane::feed`]. None: not such a chunk, nothing done.
    #[inline(always)]
    pub(crate) fn feed_string(&mut self, input: &[u8]) -> Option<u64> {
        let n = input.len();
        let len = self.out.len();
        if self.unit != Unit::Str
            || !matches!(self.sub, Sub::Plain)
            || n > 8
            || n == 0
            || self.emitted != len
            || len + n > self.out_max
        {
            return None;
        }
        let w = crate::event::word(input);
        if !plain_word(w, n) {
            return None;
        }
        debug_assert_eq!(self.committed, len, "a string value holds nothing");
        append_word(&mut self.out, w, n);
        self.committed = len + n;
        self.emitted = len + n;
        Some(w)
    }

    /// Reads `input`. None: all of it was taken (committed to the arguments,
    /// or held as the start of a unit). `Some(p)`: the lane stops before
    /// `input[p]`; the bytes before it are committed or held (see
    /// [`Lane::take_held`]), and the caller disarms the lane.
    pub(crate) fn feed(&mut self, input: &[u8]) -> Option<usize> {
        debug_assert!(self.armed);
        let n = input.len();
        if self.out.len() + n > self.out_max {
            // This chunk might reach `max_args_bytes`: the writer cuts there.
            return Some(0);
        }
        // The chunk is appended as it is; what the lane does not take is cut
        // off again when it stops. `input[i]` is `out[base + i]`.
        let base = self.out.len();
        append(&mut self.out, input);
        if self.unit == Unit::Str && self.sub == Sub::Plain && plain_len(input) == n {
            // Inside a string value, nothing held, and all of the chunk is
            // plain content: the common chunk of a long string.
            self.committed = base + n;
            return None;
        }
        // The commit point in this chunk, if it moved (every commit in a
        // feed extends the one before).
        let mut i = 0;
        let mut upto = None;
        macro_rules! commit_to {
            ($to:expr) => {{
                upto = Some($to);
            }};
        }
        // Leaves a commit point: the state there is kept for a stop.
        macro_rules! hold_from {
            ($to:expr) => {{
                commit_to!($to);
                self.cpos = self.pos;
                self.cin_str = self.unit == Unit::Str;
            }};
        }
        macro_rules! stop {
            () => {{
                return self.stop(base, i, upto);
            }};
        }
        while i < n {
            let b = input[i];
            if matches!(self.unit, Unit::Comma | Unit::ValQuote | Unit::KeyQuote) && blank(b) {
                // Blanks held with a comma, a closing quote or a key: counted
                // against the token limit, as the repairer holds them.
                // The count may already be past the limit (a key's closing
                // quote is counted without a check): then this blank stops.
                match self.count_run(run(&input[i..], blank)) {
                    Ok(k) => i += k,
                    Err(k) => {
                        i += k;
                        stop!();
                    }
                }
                continue;
            }
            match self.unit {
                Unit::Clean => match b {
                    b' ' | b'\t' | b'\n' | b'\r' => i += run(&input[i..], blank),
                    b'"' => match self.pos {
                        Pos::Value => {
                            self.unit = Unit::Str;
                            self.sub = Sub::Plain;
                            i += 1;
                        }
                        Pos::ObjKey => {
                            hold_from!(i);
                            self.unit = Unit::Key;
                            self.sub = Sub::Plain;
                            self.tok = 1;
                            i += 1;
                        }
                        _ => stop!(),
                    },
                    b',' => {
                        if self.pos != Pos::AfterValue {
                            stop!();
                        }
                        hold_from!(i);
                        self.pos = self.after_comma();
                        self.unit = Unit::Comma;
                        self.tok = 0;
                        i += 1;
                    }
                    b'{' | b'[' => {
                        if self.pos != Pos::Value || !self.open(b) {
                            stop!();
                        }
                        i += 1;
                    }
                    b'}' | b']' => {
                        if !self.close(b) {
                            stop!();
                        }
                        i += 1;
                    }
                    b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                        if self.pos != Pos::Value {
                            stop!();
                        }
                        hold_from!(i);
                        self.unit = Unit::Scalar;
                        self.tok = 1;
                        i += 1;
                    }
                    _ => stop!(),
                },
                Unit::Comma => match b {
                    b'"' if self.pos == Pos::Value => {
                        // A string value begins: the comma is written with it.
                        i += 1;
                        commit_to!(i);
                        self.unit = Unit::Str;
                        self.sub = Sub::Plain;
                    }
                    b'"' => {
                        self.unit = Unit::Key;
                        self.sub = Sub::Plain;
                        self.tok = 1;
                        i += 1;
                    }
                    b'{' | b'[' if self.pos == Pos::Value => {
                        if !self.open(b) {
                            stop!();
                        }
                        i += 1;
                        commit_to!(i);
                        self.unit = Unit::Clean;
                    }
                    b'-' | b'0'..=b'9' | b't' | b'f' | b'n' if self.pos == Pos::Value => {
                        self.unit = Unit::Scalar;
                        self.tok = 1;
                        i += 1;
                    }
                    // A closer after a comma (a trailing comma), or anything else.
                    _ => stop!(),
                },
                Unit::Str | Unit::Key => {
                    let key = self.unit == Unit::Key;
                    match self.sub {
                        Sub::Plain => {
                            let k = plain_len(&input[i..]);
                            i += k;
                            if key {
                                self.tok += k;
                                if self.tok > self.max_token {
                                    stop!();
                                }
                            }
                            let Some(&c) = input.get(i) else { break };
                            match c {
                                b'"' => {
                                    if key {
                                        self.unit = Unit::KeyQuote;
                                        self.tok += 1;
                                    } else {
                                        hold_from!(i);
                                        self.unit = Unit::ValQuote;
                                        self.tok = 0;
                                    }
                                    i += 1;
                                }
                                b'\\' => {
                                    if !key {
                                        hold_from!(i);
                                    }
                                    self.sub = Sub::Esc;
                                    self.step_key(key);
                                    i += 1;
                                }
                                0x80..=0xFF => {
                                    let len = utf8_len(c);
                                    if len < 2 {
                                        stop!();
                                    }
                                    if !key {
                                        hold_from!(i);
                                    }
                                    self.ch[0] = c;
                                    self.sub = Sub::Utf8(1, len as u8);
                                    self.step_key(key);
                                    i += 1;
                                }
                                // A control character: the slow path's.
                                _ => stop!(),
                            }
                        }
                        Sub::Esc => match b {
                            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                                i += 1;
                                self.end_char(key, &mut upto, i);
                            }
                            b'u' => {
                                self.sub = Sub::Hex(0, 0);
                                self.step_key(key);
                                i += 1;
                            }
                            _ => stop!(),
                        },
                        Sub::Hex(d, v) => {
                            let Some(h) = (b as char).to_digit(16) else {
                                stop!();
                            };
                            let v = v << 4 | h as u16;
                            if d == 3 {
                                // Surrogates (paired or not) are the fast path's.
                                if (0xD800..=0xDFFF).contains(&v) {
                                    stop!();
                                }
                                i += 1;
                                self.end_char(key, &mut upto, i);
                            } else {
                                self.sub = Sub::Hex(d + 1, v);
                                self.step_key(key);
                                i += 1;
                            }
                        }
                        Sub::Utf8(have, len) => {
                            if b & 0xC0 != 0x80 {
                                stop!();
                            }
                            self.ch[have as usize] = b;
                            if have + 1 == len {
                                if std::str::from_utf8(&self.ch[..len as usize]).is_err() {
                                    stop!();
                                }
                                i += 1;
                                self.end_char(key, &mut upto, i);
                            } else {
                                self.sub = Sub::Utf8(have + 1, len);
                                self.step_key(key);
                                i += 1;
                            }
                        }
                    }
                    if self.unit == Unit::Key && self.tok > self.max_token {
                        stop!();
                    }
                }
                Unit::ValQuote => match b {
                    b',' | b'}' | b']' => {
                        // The string ended: the delimiter is read next.
                        commit_to!(i);
                        self.unit = Unit::Clean;
                        self.pos = Pos::AfterValue;
                    }
                    _ => stop!(),
                },
                Unit::KeyQuote => match b {
                    b':' => {
                        i += 1;
                        commit_to!(i);
                        self.unit = Unit::Clean;
                        self.pos = Pos::Value;
                    }
                    _ => stop!(),
                },
                Unit::Scalar => {
                    match self.count_run(run(&input[i..], scalar_byte)) {
                        Ok(k) => i += k,
                        Err(k) => {
                            i += k;
                            stop!();
                        }
                    }
                    let Some(&b) = input.get(i) else { break };
                    if !ends_scalar(b) || !self.scalar_ok(base + i) {
                        stop!();
                    }
                    commit_to!(i);
                    self.unit = Unit::Clean;
                    self.pos = Pos::AfterValue;
                }
            }
        }
        self.commit(base, if self.clean() { Some(n) } else { upto });
        None
    }

    /// Stops before `input[i]` (the chunk at `out[base..]`; `upto` as in
    /// [`Lane::commit`]): what was read is committed or held, the rest of the
    /// chunk is cut off again. Out of line: a stop ends the lane's run.
    #[cold]
    #[inline(never)]
    fn stop(&mut self, base: usize, i: usize, upto: Option<usize>) -> Option<usize> {
        self.at_end = self.unit == Unit::Clean
            && self.depth() <= self.floor
            && matches!(self.out.get(base + i), Some(b'}' | b']'));
        self.commit(base, if self.clean() { Some(i) } else { upto });
        self.out.truncate(base + i);
        Some(i)
    }

    /// The current depth.
    #[inline]
    fn depth(&self) -> usize {
        self.base + self.stack.len()
    }

    /// At a commit point: nothing is held.
    #[inline]
    fn clean(&self) -> bool {
        self.unit == Unit::Clean || (self.unit == Unit::Str && self.sub == Sub::Plain)
    }

    /// The position after a comma in the innermost container.
    #[inline]
    fn after_comma(&self) -> Pos {
        match self.stack.last() {
            Some(Kind::Obj) => Pos::ObjKey,
            _ => Pos::Value,
        }
    }

    /// Counts a run of `k` bytes against the token limit, a byte at a time
    /// as the repairer does: `Ok(k)` when all fit, `Err(j)` when the byte
    /// after the first `j` passes the limit (there the lane stops).
    #[inline]
    fn count_run(&mut self, k: usize) -> Result<usize, usize> {
        let room = self.max_token.saturating_sub(self.tok);
        if k > room {
            self.tok += room + 1;
            return Err(room);
        }
        self.tok += k;
        Ok(k)
    }

    /// Counts a byte of a key (a string value's bytes are not counted).
    #[inline]
    fn step_key(&mut self, key: bool) {
        if key {
            self.tok += 1;
        }
    }

    /// A character or escape ended at `to`: inside a value, a commit point.
    #[inline]
    fn end_char(&mut self, key: bool, upto: &mut Option<usize>, to: usize) {
        self.sub = Sub::Plain;
        if key {
            self.tok += 1;
        } else {
            *upto = Some(to);
        }
    }

    /// Moves the commit point to what a feed committed, if anything
    /// (`upto`: through `input[..upto]`, the chunk being at `out[base..]`).
    #[inline(always)]
    fn commit(&mut self, base: usize, upto: Option<usize>) {
        if let Some(upto) = upto {
            self.committed = base + upto;
        }
    }

    /// Opens a container at a value's place (false at the depth limit).
    fn open(&mut self, b: u8) -> bool {
        if self.depth() >= self.max_depth {
            return false;
        }
        let kind = if b == b'{' { Kind::Obj } else { Kind::Arr };
        self.stack.push(kind);
        self.pos = if kind == Kind::Obj {
            Pos::ObjKey
        } else {
            Pos::Value
        };
        true
    }

    /// Closes the innermost container if the fast path would: above the
    /// floor, the right kind, after a value or in an empty container.
    fn close(&mut self, b: u8) -> bool {
        let kind = if b == b'}' { Kind::Obj } else { Kind::Arr };
        let empty_ok = match kind {
            Kind::Obj => self.pos == Pos::ObjKey,
            Kind::Arr => self.pos == Pos::Value,
        };
        if self.depth() <= self.floor
            || self.stack.last() != Some(&kind)
            || !(self.pos == Pos::AfterValue || empty_ok)
        {
            return false;
        }
        self.stack.pop();
        self.low = self.low.min(self.depth());
        self.pos = Pos::AfterValue;
        true
    }

    /// The held scalar, ending before `out[end]`, is a number or literal
    /// the fast path writes as it is.
    fn scalar_ok(&self, end: usize) -> bool {
        let s = &self.out[end - self.tok..end];
        matches!(s, b"true" | b"false" | b"null") || (number_len(s) == Some(s.len()) && fits_f64(s))
    }

    /// The arguments bytes committed since the last call (the chunk's delta).
    #[inline]
    pub(crate) fn take_delta(&mut self) -> &[u8] {
        let d = &self.out[self.emitted..self.committed];
        self.emitted = self.committed;
        d
    }

    /// Takes the held bytes (after a stop, to be read again by the parser);
    /// give the buffer back with [`Lane::give_held`].
    pub(crate) fn take_held(&mut self) -> Vec<u8> {
        self.split_held();
        std::mem::take(&mut self.held)
    }

    /// Moves the held bytes from the end of `out` to `held`.
    fn split_held(&mut self) {
        if self.out.len() > self.committed {
            self.held.extend_from_slice(&self.out[self.committed..]);
            self.out.truncate(self.committed);
        }
    }

    /// Gives back the buffer of [`Lane::take_held`] (for its capacity).
    pub(crate) fn give_held(&mut self, mut held: Vec<u8>) {
        held.clear();
        self.held = held;
    }

    /// Disarms the lane: `rep` gets the state of the last commit point, and
    /// `out` the arguments buffer. Returns the change in depth since the lane
    /// was armed (for the writer's count). Held bytes stay here (see
    /// [`Lane::take_held`]).
    pub(crate) fn disarm(&mut self, rep: &mut Repairer, out: &mut Vec<u8>) -> isize {
        debug_assert!(self.armed);
        self.armed = false;
        self.split_held();
        let (pos, in_str) = if self.clean() {
            (self.pos, self.unit == Unit::Str)
        } else {
            (self.cpos, self.cin_str)
        };
        rep.stack.truncate(self.low);
        rep.stack.extend(
            self.stack[self.low - self.base..]
                .iter()
                .map(|&kind| Frame {
                    kind,
                    tuple: false,
                    phantoms: 0,
                }),
        );
        rep.pos = pos;
        rep.lex = if in_str {
            Lex::Str(StrLex::plain())
        } else {
            Lex::None
        };
        rep.offset = self.at0 + (self.committed - self.committed0) as u64;
        std::mem::swap(&mut self.out, out);
        self.depth() as isize - self.depth0 as isize
    }
}

/// Appends `bytes` to `out`: a few bytes as one word store, not a call to
/// `memcpy` (most commits on small chunks are a few bytes).
#[inline(always)]
fn append(out: &mut Vec<u8>, bytes: &[u8]) {
    let n = bytes.len();
    if n <= 8 {
        append_word(out, crate::event::word(bytes), n);
    } else {
        out.extend_from_slice(bytes);
    }
}

/// Appends the `n` bytes (at most 8) of the word `w` with one word store.
#[inline(always)]
fn append_word(out: &mut Vec<u8>, w: u64, n: usize) {
    let len = out.len();
    out.extend_from_slice(&w.to_le_bytes());
    out.truncate(len + n);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repairer inside `{"a": ` of `prefix`, then the lane armed there.
    fn armed(prefix: &[u8]) -> (Repairer, Lane, Vec<u8>) {
        let mut rep = Repairer::new();
        let mut out = Vec::new();
        let mut sink = Opaque(Vec::new());
        rep.feed(prefix, &mut sink);
        out.extend_from_slice(&sink.0);
        let mut lane = Lane::default();
        let len = out.len();
        assert!(lane.arm(&mut rep, usize::MAX, &mut out, usize::MAX, 7));
        assert_eq!(lane.out.len(), len);
        (rep, lane, out)
    }

    struct Opaque(Vec<u8>);
    impl super::super::Sink for Opaque {
        fn write(&mut self, b: &[u8]) {
            self.0.extend_from_slice(b);
        }
        fn opaque(&self) -> bool {
            true
        }
        fn opaque_closable(&self) -> usize {
            usize::MAX
        }
    }

    /// The lane reads `body` in `k`-byte chunks after `{"a": [`; then the
    /// repairer reads the rest. The output is what the repairer writes for
    /// the whole input, and the lane held no more than a unit.
    fn same_as_repairer(body: &[u8], k: usize, expect_stop: bool) {
        let prefix = b"{\"a\": [";
        let (mut rep, mut lane, mut out) = armed(prefix);
        let mut stopped = None;
        let mut at = 0;
        for c in body.chunks(k) {
            if let Some(p) = lane.feed(c) {
                stopped = Some(at + p);
                break;
            }
            at += c.len();
        }
        let held = lane.take_held();
        let end = stopped.unwrap_or(body.len());
        lane.disarm(&mut rep, &mut out);
        assert_eq!(rep.offset() as usize, prefix.len() + end - held.len());
        let mut sink = Opaque(out);
        rep.feed(&held, &mut sink);
        rep.feed(&body[end..], &mut sink);
        rep.finish(&mut sink);
        let mut input = prefix.to_vec();
        input.extend_from_slice(body);
        let mut whole = Opaque(Vec::new());
        let mut r = Repairer::new();
        r.feed(&input, &mut whole);
        r.finish(&mut whole);
        let whole = whole.0;
        assert_eq!(
            String::from_utf8_lossy(&sink.0),
            String::from_utf8_lossy(&whole),
            "{} in {k}-byte chunks",
            String::from_utf8_lossy(body)
        );
        assert_eq!(
            stopped.is_some(),
            expect_stop,
            "{}",
            String::from_utf8_lossy(body)
        );
    }

    #[test]
    fn plain_json_is_read_to_the_end_in_any_chunks() {
        let bodies: &[&[u8]] = &[
            br#"{"id": 1, "label": "item 1-1", "ok": true}, {"x": [-1.5e3, null, false, {}], "y": []}"#,
            "{\"k\\\"ey\": \"caf\u{e9} \u{1F600} \\u00e9 \\n\\t\\/\", \"n\": 0}".as_bytes(),
            b"\n  {  \"a\"  :  \"b\"  ,\n \"c\" : [ 1 , 2 ] }",
        ];
        for body in bodies {
            for k in 1..=9 {
                same_as_repairer(body, k, false);
            }
        }
    }

    #[test]
    fn stops_where_the_repairer_must_look() {
        let bodies: &[&[u8]] = &[
            b"1, 2,]",                   // trailing comma
            b"{'a': 1}",                 // single quotes
            b"{\"a\": True}",            // Python literal
            b"\"a\" \"b\"",              // missing comma
            b"1e999, 2",                 // out of range
            b"{\"a\": 1}]}</tool_call>", // the end of the arguments, then markup
            b"\"\\ud83d\\ude00\", 1",    // a surrogate pair
            b"\"tab\there\", 1",         // a control character
            b"\"\xff\", 1",              // invalid UTF-8
            b"0x1F, 2",                  // not a JSON number
            b"{\"a\" 1}",                // missing colon
            b"\"x\": 1",                 // a colon after a value
        ];
        for body in bodies {
            for k in 1..=5 {
                same_as_repairer(body, k, true);
            }
        }
    }

    #[test]
    fn plain_word_is_plain_len_on_short_chunks() {
        // Every byte value at every place of every short length.
        for n in 1..=8 {
            for at in 0..n {
                for b in 0..=255u8 {
                    let mut c = [b'a'; 8];
                    c[at] = b;
                    let c = &c[..n];
                    let w = crate::event::word(c);
                    assert_eq!(plain_word(w, n), plain_len(c) == n, "{c:?}");
                }
            }
        }
    }

    #[test]
    fn short_string_chunks_skip_the_byte_loop() {
        let (mut rep, mut lane, mut out) = armed(b"{\"a\": \"");
        let w = |s: &[u8]| crate::event::word(s);
        assert_eq!(lane.feed_string(b"abcd"), Some(w(b"abcd")));
        assert_eq!(lane.feed_string(b"efgh1234"), Some(w(b"efgh1234")));
        assert!(lane.take_delta().is_empty(), "handed out as words");
        // A closing quote, an escape, non-ASCII, a control character, more
        // than a word: the byte loop's.
        for c in [
            &b"ab\"c"[..],
            b"a\\n",
            "\u{e9}".as_bytes(),
            b"a\tb",
            b"123456789",
        ] {
            assert_eq!(lane.feed_string(c), None, "{c:?}");
        }
        assert_eq!(lane.feed(b"ij"), None);
        // A delta not yet handed out: the chunk would not be all of it.
        assert_eq!(lane.feed_string(b"kl"), None);
        assert_eq!(lane.take_delta(), b"ij");
        assert_eq!(lane.feed(b"\", "), None);
        assert_eq!(lane.take_delta(), b"\"");
        assert_eq!(lane.feed_string(b"mn"), None, "outside a string value");
        lane.take_held();
        lane.disarm(&mut rep, &mut out);
        assert_eq!(out, b"{\"a\": \"abcdefgh1234ij\"");
    }

    #[test]
    fn the_outermost_container_is_never_closed() {
        let (mut rep, mut lane, mut out) = armed(b"{\"a\": ");
        assert_eq!(lane.feed(b"1}"), Some(1));
        assert!(lane.take_held().is_empty());
        assert_eq!(lane.disarm(&mut rep, &mut out), 0);
        assert_eq!(out, b"{\"a\": 1");
    }

    #[test]
    fn a_stash_is_taken_over() {
        let mut rep = Repairer::new();
        let mut sink = Opaque(Vec::new());
        // Cut inside a key: the repairer stashes `, "ke`.
        rep.feed(b"{\"a\": 1, \"ke", &mut sink);
        let mut out = sink.0;
        assert_eq!(out, b"{\"a\": 1");
        let mut lane = Lane::default();
        assert!(lane.arm(&mut rep, usize::MAX, &mut out, usize::MAX, 0));
        assert_eq!(lane.feed(b"y\": 2"), None);
        assert_eq!(lane.take_delta(), b", \"key\": ");
        // The `}` ends the scalar (committed) and would close the outermost
        // object: the lane stops there.
        assert_eq!(lane.feed(b"}"), Some(0));
        assert!(lane.take_held().is_empty());
        lane.disarm(&mut rep, &mut out);
        assert_eq!(out, b"{\"a\": 1, \"key\": 2");
        let mut sink = Opaque(out);
        rep.feed(b"}", &mut sink);
        assert_eq!(sink.0, b"{\"a\": 1, \"key\": 2}");
    }

    #[test]
    fn deep_stacks_are_copied_in_part() {
        // 40 open containers: the lane copies the innermost 32 and closes
        // all but the outermost of those, then hands over.
        let mut prefix = b"{\"a\": ".to_vec();
        prefix.extend(std::iter::repeat_n(b'[', 39));
        let (mut rep, mut lane, mut out) = armed(&prefix);
        assert_eq!(lane.stack.len(), STACK_COPY);
        let mut body = b"1".to_vec();
        body.extend(std::iter::repeat_n(b']', 39));
        body.push(b'}');
        let stop = lane.feed(&body).expect("a stop");
        assert_eq!(stop, 1 + 31);
        assert_eq!(lane.disarm(&mut rep, &mut out), -31);
        assert_eq!(rep.depth(), 9);
        let mut sink = Opaque(out);
        rep.feed(&body[stop..], &mut sink);
        let mut whole = prefix.clone();
        whole.extend_from_slice(&body);
        assert_eq!(sink.0, whole);
    }

    #[test]
    fn limits_stop_the_lane() {
        // Depth.
        let mut rep = Repairer::with_limits(&crate::config::Limits {
            max_depth: 3,
            ..Default::default()
        });
        let mut sink = Opaque(Vec::new());
        rep.feed(b"{\"a\": [", &mut sink);
        let mut out = sink.0;
        let mut lane = Lane::default();
        assert!(lane.arm(&mut rep, usize::MAX, &mut out, usize::MAX, 0));
        assert_eq!(lane.feed(b"[[1]]"), Some(1));
        lane.disarm(&mut rep, &mut out);
        // Output size: a chunk that could pass `out_max` is not read.
        let (mut rep, mut lane, mut out) = armed(b"{\"a\": ");
        lane.disarm(&mut rep, &mut out);
        let max = out.len() + 4;
        assert!(lane.arm(&mut rep, usize::MAX, &mut out, max, 0));
        assert_eq!(lane.feed(b"12"), None);
        assert_eq!(lane.feed(b"345"), Some(0));
    }
}
