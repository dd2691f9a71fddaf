//! Validating fast paths for a well-formed call object (#48): read whole
//! ([`scan`]) or as it streams in ([`Stream`]).
//!
//! Inside call markup (Hermes' `<tool_call>`), most values are exactly
//! `{"name": "…", "arguments": {…}}`: strict JSON, nothing to repair. When
//! such a value arrives whole in one feed (a non-streaming reply, a log
//! replay, a large socket read), [`scan`] validates it strictly and the
//! reader ([`super::json::JsonCalls`]) emits its events directly, without
//! the repairer and the call router. Anything [`scan`] is not sure of — a
//! value cut by the end of the feed, another key, a key order or envelope
//! it does not know, an escape it would have to think about, a limit it
//! might reach — makes it answer `None`, and the value goes the usual way
//! from its first byte: the hand-over point is always the value's start, so
//! the events cannot depend on it. What the scan accepts, the repairer
//! passes through unchanged (`tests/fast_calls.rs` checks both ways give
//! the same events at every split).
//!
//! A value longer than the repairer's pieces (`json::PIECE`) is read in
//! pieces there, with a `ToolArgs` delta after each: the arguments written
//! up to the piece's end, less what the repairer holds there. The scan
//! takes such a value only when every piece ends inside a string value of
//! the arguments, where what is held is known — a cut escape or character,
//! and a `,` and spaces ending the content ([`crate::json::comma_tail`]),
//! stashed together when at most [`crate::json::STASH_MAX`] bytes — and
//! says where each delta ends ([`Found::cuts`]). Work stays linear: the
//! scan reads each byte once, and a value it refuses is read once more by
//! the repairer, from its start (the fast path is tried once a value).

use crate::config::Limits;
use crate::json::{escape_len, LaneAt, SHORT_ESCAPE};

/// A well-formed call object at the start of the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    /// The tool name's bytes (between its quotes): printable ASCII.
    pub name: (usize, usize),
    /// The arguments object's bytes, as written.
    pub args: (usize, usize),
    /// Just past the envelope's closing brace.
    pub end: usize,
    /// A value longer than one of the repairer's pieces: for each piece but
    /// the last, where the arguments the repairer has written at the
    /// piece's end stop (an index into the input). Empty otherwise.
    pub cuts: Vec<usize>,
}

/// Longest value the fast path reads when the feed may stop inside it
/// (the parser gave the block less than all its data), so that a long
/// value cut by the feed costs a short scan only.
const MAX_VALUE: usize = 16 << 10;
/// Deepest nesting inside the arguments the fast path follows.
const MAX_NEST: usize = 32;
/// Levels inside the arguments the fast paths follow: the envelope and
/// the arguments object are two, and one more is kept short of the limit.
#[inline]
fn args_depth(limits: &Limits) -> usize {
    limits.max_depth.saturating_sub(2).min(MAX_NEST)
}
/// Longest name the fast path takes.
const MAX_NAME: usize = 64;

/// The scan's state: the input, the limits' bounds on what the repairer
/// holds, and the next piece end to account for.
struct Scan<'a> {
    s: &'a [u8],
    /// Longest key (with its quotes) or run of blanks taken: well inside
    /// `max_token_bytes`, which bounds what the repairer holds of them.
    max_held: usize,
    /// The repairer's token bound (as it sets it).
    max_token: usize,
    /// The next end of a repairer's piece not yet accounted for.
    next_cut: usize,
    cuts: Vec<usize>,
}

/// Past the blanks at `s[i..]`.
#[inline]
fn blanks(s: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = s.get(i) {
        i += 1;
    }
    i
}

impl Scan<'_> {
    /// Past the blanks at `i`, unless there are more than the repairer
    /// would hold.
    #[inline]
    fn blanks(&self, i: usize) -> Option<usize> {
        let j = blanks(self.s, i);
        (j - i <= self.max_held).then_some(j)
    }

    /// A string value of the arguments whose opening quote is at `i`: the
    /// index past its closing quote, each piece end inside its content
    /// accounted for (one in any other place refuses the value).
    #[inline]
    fn value_string(&mut self, i: usize) -> Option<usize> {
        if self.next_cut >= self.s.len() {
            return string(self.s, i);
        }
        self.long_string(i)
    }

    /// [`Scan::value_string`] when a piece may end inside it: its content
    /// read up to each piece end, then on.
    #[cold]
    #[inline(never)]
    fn long_string(&mut self, i: usize) -> Option<usize> {
        let s = self.s;
        let from = i + 1;
        if self.next_cut <= from {
            return None;
        }
        let mut pos = from;
        let stop = loop {
            let b = self.next_cut;
            if b >= s.len() {
                break content_end(s, pos);
            }
            let e = content_end(&s[..b], pos);
            // Stopped short of the piece end: the string's end (or what
            // makes it no string), unless an escape the end cuts.
            if e < b && !(s[e] == b'\\' && escape_len(&s[e..]).is_some()) {
                break e;
            }
            self.piece_end(from, e, b)?;
            pos = e;
        };
        (s.get(stop) == Some(&b'"')).then_some(stop + 1)
    }

    /// The piece that ends at `b`, inside the content that starts at
    /// `from`, whose whole escapes end at `k` (the start of one `b` cuts,
    /// or `b`): where the repairer's output stops there. It reads the
    /// content from `from` or the piece's start, whichever is later, up to
    /// `b`, and writes all of it but a cut escape or character and a `,`
    /// and spaces that end it (held as a possible end of the string), those
    /// stashed for the next piece when at most `STASH_MAX` bytes.
    fn piece_end(&mut self, from: usize, mut k: usize, b: usize) -> Option<()> {
        let s = self.s;
        if k == b {
            // A character `b` cuts: its lead byte is among the three
            // before `b` (UTF-8 resynchronises; checked with the arguments).
            let mut j = b;
            while j > from && j + 3 > b && s[j - 1] & 0xC0 == 0x80 {
                j -= 1;
            }
            if j > from && s[j - 1] >= 0xC0 {
                let len = match s[j - 1] {
                    0xC0..=0xDF => 2,
                    0xE0..=0xEF => 3,
                    _ => 4,
                };
                if j - 1 + len > b {
                    k = j - 1;
                }
            }
        }
        let run = from.max(b - crate::json::PIECE);
        let tail = crate::json::comma_tail(&s[run..k], self.max_token);
        let at = k - tail;
        if b - at > crate::json::STASH_MAX {
            return None;
        }
        self.cuts.push(at);
        self.next_cut = b + crate::json::PIECE;
        Some(())
    }
}

/// Reads a string whose opening quote is at `i`; returns the index past
/// its closing quote. Its content has no raw control byte and only valid
/// escapes (a high surrogate with its low half); its UTF-8 is checked
/// with the whole arguments' ([`scan`]'s caller).
#[inline]
fn string(s: &[u8], i: usize) -> Option<usize> {
    debug_assert_eq!(s.get(i), Some(&b'"'));
    // Keys and short values are mostly printable ASCII up to the quote:
    // read a byte at a time, with none of the long scan's set-up.
    let mut e = i + 1;
    while let Some(&b) = s.get(e) {
        if !PLAIN[b as usize] {
            break;
        }
        e += 1;
    }
    if s.get(e) != Some(&b'"') {
        e = content_end(s, e);
    }
    (s.get(e) == Some(&b'"')).then_some(e + 1)
}

/// The first byte from `i` on that string content cannot hold as it is:
/// a quote, a control byte, a backslash that begins no valid escape (or
/// the end). Non-ASCII is content here (checked once, with the arguments).
#[inline(never)]
fn content_end(s: &[u8], mut i: usize) -> usize {
    let n = s.len();
    'blocks: while let Some(block) = s.get(i..i + 64).and_then(|b| <&[u8; 64]>::try_from(b).ok()) {
        let (mut flags, _) = crate::json::block_flags::<false>(block);
        while flags != 0 {
            let j = flags.trailing_zeros() as usize & 63;
            if block[j] != b'\\' {
                return i + j;
            }
            // Mostly a two-byte escape: its second byte says so.
            let e = match block.get(j + 1) {
                Some(&e) => e,
                None => s.get(i + 64).copied().unwrap_or(0),
            };
            let l = if SHORT_ESCAPE[e as usize] {
                2
            } else {
                match escape_len(&s[i + j..]) {
                    Some(l) => l,
                    None => return i + j,
                }
            };
            if j + l >= 64 {
                i += j + l;
                continue 'blocks;
            }
            flags &= u64::MAX << (j + l);
        }
        i += 64;
    }
    while i < n {
        match s[i] {
            b'"' | 0..=0x1F => return i,
            b'\\' => match escape_len(&s[i..]) {
                Some(l) => i += l,
                None => return i,
            },
            _ => i += 1,
        }
    }
    n
}

/// Printable ASCII but `"` and `\\`: string content that needs no look.
const PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0x20;
    while b < 0x7F {
        t[b] = b != b'"' as usize && b != b'\\' as usize;
        b += 1;
    }
    t
};

/// Reads a number starting at `i` (strict JSON, short); the index past it.
#[inline]
fn number(s: &[u8], start: usize, max: usize) -> Option<usize> {
    let mut i = start;
    if s.get(i) == Some(&b'-') {
        i += 1;
    }
    let digits = |s: &[u8], mut i: usize| {
        let from = i;
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > from).then_some(i)
    };
    match s.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = digits(s, i)?,
        _ => return None,
    }
    if s.get(i) == Some(&b'.') {
        i = digits(s, i + 1)?;
    }
    if let Some(b'e' | b'E') = s.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = s.get(i) {
            i += 1;
        }
        let e = i;
        i = digits(s, i)?;
        if i - e > 2 {
            return None;
        }
    }
    // A number must end where a value ends (the caller checks what follows).
    (i - start <= max.min(15)).then_some(i)
}

/// Reads the arguments object whose `{` is at `i`; the index past its `}`.
fn args_object(sc: &mut Scan<'_>, start: usize, limits: &Limits) -> Option<usize> {
    let s = sc.s;
    let max_token = limits.max_token_bytes;
    // Levels inside the arguments: the envelope and the arguments object
    // are two, and one more is kept short of the limit.
    let max_depth = args_depth(limits);
    if max_depth == 0 {
        return None;
    }
    // One bit a level: set for an object, clear for an array.
    let mut stack: u64 = 1;
    let mut depth = 1usize;
    let mut i = sc.blanks(start + 1)?;
    // The arguments' first key: a wrapper name makes them double-wrapped
    // (the writer unwraps them); no key, an empty object.
    if *s.get(i)? == b'"' {
        let k = string(s, i)?;
        let key = &s[i + 1..k - 1];
        if key.contains(&b'\\') || matches!(key, b"arguments" | b"parameters" | b"args" | b"input")
        {
            return None;
        }
    }
    // Expecting: a key or `}` (object start), a value, or `,`/end.
    let mut want = Want::KeyOrEnd;
    loop {
        let b = *s.get(i)?;
        match want {
            Want::KeyOrEnd | Want::Key => match b {
                b'"' => {
                    let k = string(s, i)?;
                    if k - i > max_token || k - i > sc.max_held {
                        return None;
                    }
                    i = sc.blanks(k)?;
                    if *s.get(i)? != b':' {
                        return None;
                    }
                    i = sc.blanks(i + 1)?;
                    want = Want::Value;
                    continue;
                }
                b'}' if want == Want::KeyOrEnd => {}
                _ => return None,
            },
            Want::ValueOrEnd | Want::Value => match b {
                b'{' | b'[' => {
                    if depth >= max_depth {
                        return None;
                    }
                    stack = (stack << 1) | u64::from(b == b'{');
                    depth += 1;
                    i = sc.blanks(i + 1)?;
                    want = if b == b'{' {
                        Want::KeyOrEnd
                    } else {
                        Want::ValueOrEnd
                    };
                    continue;
                }
                b'"' => {
                    let k = sc.value_string(i)?;
                    i = sc.blanks(k)?;
                    want = Want::Next;
                    continue;
                }
                b'-' | b'0'..=b'9' => {
                    i = sc.blanks(number(s, i, max_token)?)?;
                    want = Want::Next;
                    continue;
                }
                b't' | b'f' | b'n' => {
                    let lit: &[u8] = match b {
                        b't' => b"true",
                        b'f' => b"false",
                        _ => b"null",
                    };
                    if s.get(i..i + lit.len())? != lit {
                        return None;
                    }
                    i = sc.blanks(i + lit.len())?;
                    want = Want::Next;
                    continue;
                }
                b']' if want == Want::ValueOrEnd => {}
                _ => return None,
            },
            Want::Next => match b {
                b',' => {
                    i = sc.blanks(i + 1)?;
                    want = if stack & 1 == 1 {
                        Want::Key
                    } else {
                        Want::Value
                    };
                    continue;
                }
                b'}' | b']' => {}
                _ => return None,
            },
        }
        // A closing bracket: it must close the innermost container.
        if (b == b'}') != (stack & 1 == 1) {
            return None;
        }
        stack >>= 1;
        depth -= 1;
        if depth == 0 {
            return Some(i + 1);
        }
        i = sc.blanks(i + 1)?;
        want = Want::Next;
    }
}

/// `s` starts with a well-formed `{"name": "…", "arguments": {…}}` (either
/// key order; blanks between tokens), all of it in `s`: where its parts are.
/// `None` when it does not, or when the scan is unsure of anything (see the
/// module's documentation). `whole`: `s` is all the data the parser has
/// (the feed does not stop inside a longer value); else the value must
/// be short ([`MAX_VALUE`]). The arguments' UTF-8 is left to the caller,
/// which checks it once as it makes them text.
pub(crate) fn scan(s: &[u8], limits: &Limits, whole: bool) -> Option<Found> {
    if s.first() != Some(&b'{') {
        return None;
    }
    // A value shorter than every size limit reaches none of them: no
    // token, held run or arguments can be cut by one. A longer one (read
    // whole) is bounded token by token: a key or run of blanks a quarter
    // of the token limit at most (the repairer holds them within it, with
    // a comma or quote), numbers of 15 bytes; its arguments shorter than
    // theirs, and all of it within what the parser holds undecided.
    let short = limits
        .max_held_bytes
        .min(limits.max_token_bytes)
        .min(limits.max_args_bytes.saturating_sub(1));
    // (Token limits below 16 bytes, where the repairer keeps its own
    // floor of 16, keep the short rule.)
    let cap = if whole && limits.max_token_bytes >= 16 {
        limits
            .max_held_bytes
            .min(limits.max_args_bytes.saturating_sub(1))
    } else {
        short.min(MAX_VALUE)
    };
    let s = &s[..s.len().min(cap)];
    let mut sc = Scan {
        s,
        max_held: if s.len() <= short {
            usize::MAX
        } else {
            limits.max_token_bytes / 4
        },
        max_token: limits.max_token_bytes.max(16),
        next_cut: crate::json::PIECE,
        cuts: Vec::new(),
    };
    let mut name = None;
    let mut args = None;
    let mut i = sc.blanks(1)?;
    loop {
        if *s.get(i)? != b'"' {
            return None;
        }
        let k = string(s, i)?;
        let key = &s[i + 1..k - 1];
        i = sc.blanks(k)?;
        if *s.get(i)? != b':' {
            return None;
        }
        i = sc.blanks(i + 1)?;
        match key {
            b"name" if name.is_none() => {
                if *s.get(i)? != b'"' {
                    return None;
                }
                let from = i + 1;
                let mut j = from;
                while let Some(&c) = s.get(j) {
                    if c == b'"' {
                        break;
                    }
                    if !(0x21..=0x7E).contains(&c) || c == b'\\' {
                        return None;
                    }
                    j += 1;
                }
                let len = j - from;
                if s.get(j)? != &b'"' || len == 0 || len > MAX_NAME.min(limits.max_token_bytes) {
                    return None;
                }
                name = Some((from, j));
                i = sc.blanks(j + 1)?;
            }
            b"arguments" if args.is_none() => {
                if *s.get(i)? != b'{' {
                    return None;
                }
                let end = args_object(&mut sc, i, limits)?;
                if end - i > limits.max_args_bytes {
                    return None;
                }
                args = Some((i, end));
                i = sc.blanks(end)?;
            }
            _ => return None,
        }
        match *s.get(i)? {
            b',' if args.is_none() || name.is_none() => i = sc.blanks(i + 1)?,
            b'}' => break,
            _ => return None,
        }
    }
    let (name, args) = (name?, args?);
    // Every piece end before the value's end is accounted for; a long
    // value's call starts once its name is read (arguments before it are
    // held, not handed out piece by piece).
    if sc.next_cut <= i || (!sc.cuts.is_empty() && args.0 < name.0) {
        return None;
    }
    Some(Found {
        name,
        args,
        end: i + 1,
        cuts: sc.cuts,
    })
}

/// Where a streamed value's scan is ([`Stream`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    /// Blanks, then `"name"`.
    NameKey,
    /// Blanks, then the `:` after a key (`then`: what follows it).
    Colon(Then),
    /// Blanks, then the name's string.
    Name,
    /// Blanks, then the `,` after the name.
    Comma,
    /// Blanks, then `"arguments"`.
    ArgsKey,
    /// Blanks, then the arguments' `{`.
    ArgsOpen,
    /// Inside the arguments, expecting what [`Want`] says.
    Args(Want),
    /// Inside a string of the arguments (a key when `key`), at `i`.
    Str { key: bool },
    /// Inside a number or literal that starts at `tok`.
    Scalar,
    /// Blanks, then the envelope's closing `}`.
    Close,
}

/// What follows a key's `:` ([`At::Colon`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Then {
    Name,
    ArgsOpen,
    Value,
}

/// Inside the arguments: what comes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    /// After `{`: a key or `}`.
    KeyOrEnd,
    /// After `[`: a value or `]`.
    ValueOrEnd,
    /// After `,` in an object.
    Key,
    /// After `:` or `,` in an array.
    Value,
    /// After a value.
    Next,
}

/// What a streamed scan found in the bytes it was given ([`Stream::advance`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Well-formed so far: more bytes are needed.
    More,
    /// The value is complete and well-formed; it ends at this index of
    /// [`Stream::buf`].
    Done(usize),
    /// Not a value the scan accepts (or one that may reach a limit): the
    /// value goes to the repairer, replayed from its first byte.
    Refuse,
}

/// The streaming fast path (#48): a value inside call markup that arrives
/// in pieces, scanned as it comes while it stays exactly
/// `{"name": "…", "arguments": {…}}` (name first; blanks between tokens).
///
/// Its bytes are kept ([`Stream::buf`]) so that the value can be handed
/// over to the repairer at any byte it does not accept, replayed from the
/// value's first byte. The arguments' bytes are safe to hand out up to
/// [`Stream::safe`]: through a string value's opening quote (and what
/// precedes it), a string's whole characters and escapes, a number or
/// literal once it ended (and is one [`scan`] accepts), a closing bracket.
/// Never a key before its value began, a comma before what follows it,
/// blanks before the next token, a cut escape or character: what is safe
/// is what the repairer writes, unchanged, by then and whatever follows.
/// Each byte is looked at a bounded number of times (the resumed token's
/// bytes: a name, a key's literal, a number or literal), and a string's
/// body is read by the repairer's own scan ([`crate::json::str_body`]).
///
/// Inside the arguments, once the call has started and everything read is
/// handed out (in a string value's content, or after a value), the
/// parser's lane may take the chunks over ([`crate::json::Lane::arm_stream`],
/// armed by [`Stream::armable`]'s rule): its per-chunk cost is far below
/// the stream's, which goes through the parser's layers each chunk. The
/// lane reads exactly what the repairer would commit unchanged, appending
/// to this buffer; where it stops (the arguments' end, as a rule, or
/// anything it does not take) it gives the value back ([`Stream::resume`])
/// and the stream reads on from its last commit point. Before the lane is
/// first armed the arguments are moved to the front of the buffer
/// ([`Stream::detach_head`]), so that long ones become the call's
/// arguments without a copy.
#[derive(Debug)]
pub(crate) struct Stream {
    /// A value is being read.
    pub active: bool,
    /// Absolute offset of the value's `{`.
    pub start: u64,
    /// The value's bytes so far (from its arguments' `{` once
    /// [`Stream::shift`] is not 0).
    pub buf: Vec<u8>,
    /// Next byte to read.
    i: usize,
    /// Start of the token being read (a name, a key, a number).
    tok: usize,
    at: At,
    /// One bit a level: set for an object, clear for an array.
    stack: u64,
    depth: usize,
    /// The arguments' first key is being read (a wrapper name refuses).
    first_key: bool,
    /// The name's bytes, once complete.
    pub name: Option<(usize, usize)>,
    /// The call's block-local number, once started.
    pub local: Option<usize>,
    /// Where the arguments start (their `{`), once begun.
    pub args: usize,
    /// Arguments' bytes before this index may be handed out.
    pub safe: usize,
    /// Arguments' bytes before this index were handed out.
    pub emitted: usize,
    /// Just past the arguments' `}`.
    pub args_end: usize,
    /// Where the bytes the stream reads itself begin: 0, or where the
    /// parser's lane last gave the value back ([`Stream::resume`]). The
    /// size cap of [`Stream::advance`] counts from here.
    own: usize,
    /// The lane read part of the arguments ([`Stream::resume`]).
    laned: bool,
    /// The value's bytes before its arguments, once the arguments were
    /// moved to the front of [`Stream::buf`] ([`Stream::detach_head`]).
    pub head: Vec<u8>,
    /// How many bytes [`Stream::detach_head`] moved off the front of
    /// [`Stream::buf`] (0: none): the indexes into it are after them.
    pub shift: usize,
    /// Where the string value being read began (after its quote).
    str_at: usize,
    /// The name's bytes, read (complete at the comma after it).
    name_at: (usize, usize),
    /// The length of the value's last feed.
    pub last_feed: usize,
    /// The arguments' size limit (`max_args_bytes`).
    pub max_args: usize,
    /// [`Stream::lane_limits`].
    pub lane_limits: (usize, usize),
}

impl Default for Stream {
    fn default() -> Self {
        Stream {
            active: false,
            start: 0,
            buf: Vec::new(),
            i: 0,
            tok: 0,
            at: At::NameKey,
            stack: 0,
            depth: 0,
            first_key: false,
            name: None,
            local: None,
            args: 0,
            safe: 0,
            emitted: 0,
            args_end: 0,
            own: 0,
            laned: false,
            head: Vec::new(),
            shift: 0,
            str_at: 0,
            name_at: (0, 0),
            last_feed: 0,
            max_args: 0,
            lane_limits: (0, 0),
        }
    }
}

/// Chunks up to this long are read by the parser's lane once it can be
/// armed ([`Stream::armable`]) ...
const LANE_CHUNK: usize = 8;
/// ... longer ones once a string value is this long.
const LANE_STRING: usize = 16;

/// Complete arguments at least this long are taken with the buffer that
/// holds them ([`Stream::take_args`]), not copied.
const TAKE_ARGS_MIN: usize = 1 << 10;

/// The longest value the streaming path reads before handing it over (its
/// bytes are kept, and replayed at a hand-over).
const MAX_STREAM: usize = 4 << 10;

impl Stream {
    /// Starts a value at absolute offset `start` (its `{` is the first
    /// byte the next [`Stream::advance`] is given).
    pub(crate) fn begin(&mut self, start: u64, limits: &Limits) {
        let buf = std::mem::take(&mut self.buf);
        let mut head = std::mem::take(&mut self.head);
        head.clear();
        if head.capacity() > 2 * MAX_STREAM {
            head = Vec::new();
        }
        *self = Stream {
            active: true,
            start,
            buf,
            head,
            i: 1,
            max_args: limits.max_args_bytes,
            lane_limits: Stream::lane_limits(limits),
            ..Stream::default()
        };
        self.buf.clear();
        if self.buf.capacity() > 2 * MAX_STREAM {
            self.buf = Vec::new();
        }
    }

    /// The length [`Stream::buf`] may reach before the value is handed
    /// over ([`Stream::advance`] refuses there).
    #[inline]
    fn cap(&self, limits: &Limits) -> usize {
        // As [`scan`]: a value shorter than every size limit reaches none.
        let cap = MAX_STREAM
            .min(limits.max_held_bytes)
            .min(limits.max_token_bytes)
            .min(limits.max_args_bytes.saturating_sub(1));
        // Bytes the lane read are not counted: it stops where the
        // repairer would reach a limit; the arguments' size still is.
        let cap = self.own.saturating_add(cap);
        if self.laned {
            cap.min(
                self.args
                    .saturating_add(limits.max_args_bytes.saturating_sub(1)),
            )
        } else {
            cap
        }
    }

    /// How many more bytes [`Stream::buf`] takes: those the scan may still
    /// read (a feed's bytes past them are the repairer's, which a refusal
    /// hands the value to; they are not copied here, so the buffer stays
    /// within the limits whatever the feed's length).
    #[inline]
    pub(crate) fn room(&self, limits: &Limits) -> usize {
        self.cap(limits).saturating_sub(self.buf.len())
    }

    /// Reads what was appended to [`Stream::buf`].
    pub(crate) fn advance(&mut self, limits: &Limits) -> Step {
        if self.buf.first() != Some(&b'{') {
            return Step::Refuse;
        }
        let cap = self.cap(limits);
        let n = self.buf.len().min(cap);
        let step = self.run(n, limits);
        if step == Step::More && self.buf.len() >= cap {
            return Step::Refuse;
        }
        step
    }

    /// Where the parser's lane may read on from
    /// ([`crate::json::Lane::arm_stream`]): the call started, every byte
    /// read and handed out, inside a string value's content or after a
    /// value in the arguments. With the call's local number and the
    /// arguments' containers (as [`Stream::resume`] takes them).
    #[inline]
    pub(crate) fn armable(&self) -> Option<(LaneAt, usize)> {
        let local = self.local?;
        let len = self.buf.len();
        if self.i != len || self.safe != len || self.emitted != len || self.depth == 0 {
            return None;
        }
        // The lane pays where chunks are short (the stream's cost is per
        // chunk, the lane's mostly per byte) and inside a long string; a
        // short value streamed in longer chunks is read faster without it
        // (arming and disarming it cost more than the chunks it takes).
        let short = self.last_feed <= LANE_CHUNK;
        match self.at {
            At::Str { key: false } if short || len - self.str_at >= LANE_STRING => {
                Some((LaneAt::Str, local))
            }
            At::Args(Want::Next) if short => Some((LaneAt::After, local)),
            _ => None,
        }
    }

    /// Moves the bytes before the arguments off the front of
    /// [`Stream::buf`] into [`Stream::head`] (once a value; before the
    /// lane is armed): the arguments then start at `buf[0]`, so that a
    /// long value's arguments become the call's without a copy
    /// ([`Stream::take_args`]). The name stays where it was, in `head`.
    pub(crate) fn detach_head(&mut self) {
        let k = self.args;
        if self.shift != 0 || k == 0 || self.local.is_none() {
            return;
        }
        debug_assert!(self.i >= k && self.safe >= k && self.emitted >= k && self.own <= k);
        // The arguments go to the other buffer (the head's, free), the
        // head stays where it is: the buffer that may grow long is the one
        // allocated last (so that it can grow in place, as the repairer's
        // arguments buffer, allocated when they begin, does).
        let mut args = std::mem::take(&mut self.head);
        args.clear();
        args.reserve((self.buf.len() - k).max(crate::envelope::ARGS_FIRST_CAPACITY));
        args.extend_from_slice(&self.buf[k..]);
        self.buf.truncate(k);
        self.head = std::mem::replace(&mut self.buf, args);
        self.shift = k;
        self.i -= k;
        self.tok = self.tok.saturating_sub(k);
        self.str_at = self.str_at.saturating_sub(k);
        self.safe -= k;
        self.emitted -= k;
        self.own = 0;
        self.args = 0;
    }

    /// The call's name (once complete).
    pub(crate) fn name_bytes(&self) -> Option<&[u8]> {
        let (a, b) = self.name?;
        Some(if self.shift == 0 {
            &self.buf[a..b]
        } else {
            &self.head[a..b]
        })
    }

    /// The value's bytes so far, from its first (a copy once the head was
    /// detached: for a hand-over, once a value).
    pub(crate) fn value(&self) -> std::borrow::Cow<'_, [u8]> {
        if self.shift == 0 {
            std::borrow::Cow::Borrowed(&self.buf)
        } else {
            std::borrow::Cow::Owned([&self.head[..], &self.buf[..]].concat())
        }
    }

    /// The complete arguments' bytes, for the call's end: the buffer itself
    /// when they are long and at its front (no copy), else a copy.
    pub(crate) fn take_args(&mut self) -> Vec<u8> {
        if self.args == 0 && self.args_end >= TAKE_ARGS_MIN {
            let mut v = std::mem::take(&mut self.buf);
            v.truncate(self.args_end);
            v
        } else {
            self.buf[self.args..self.args_end].to_vec()
        }
    }

    /// The arguments' containers, for [`crate::json::Lane::arm_stream`].
    pub(crate) fn containers(&self) -> (u64, usize) {
        (self.stack, self.depth)
    }

    /// The lane's limits on a value this stream reads (for
    /// [`crate::json::Lane::arm_stream`]): the depth it may open no
    /// container past (that of the envelope and the arguments, as the
    /// scan's), and the repairer's limit on a held token.
    pub(crate) fn lane_limits(limits: &Limits) -> (usize, usize) {
        (args_depth(limits) + 1, limits.max_token_bytes.max(16))
    }

    /// The lane gave the value back ([`crate::json::Lane::disarm_stream`]):
    /// [`Stream::buf`] holds the value through the lane's last commit
    /// point, all of it handed out; the scan goes on from there, at `at`
    /// with the arguments' containers `objs` (bit 0 the innermost, set
    /// for an object) `depth` deep.
    pub(crate) fn resume(&mut self, at: LaneAt, objs: u64, depth: usize) {
        let len = self.buf.len();
        self.i = len;
        self.safe = len;
        self.emitted = len;
        self.own = len;
        self.laned = true;
        self.first_key = false;
        self.stack = objs;
        self.depth = depth;
        let obj = objs & 1 == 1;
        self.at = match at {
            LaneAt::Str => At::Str { key: false },
            LaneAt::Key => At::Args(Want::KeyOrEnd),
            LaneAt::Value if obj => At::Args(Want::Value),
            LaneAt::Value => At::Args(Want::ValueOrEnd),
            LaneAt::After => At::Args(Want::Next),
        };
    }

    /// Where the handed-out part of a string value's content read up to
    /// `s[e]` ends: all of it but a `,` and spaces that end it, which the
    /// repairer holds (`StrLex::tail`, the lane's `STR_COMMA`): it may
    /// still read the comma as the string's end (`{"a": "x, "b": 1}`, a
    /// repair), and handed out they would not be in its arguments then.
    /// (The run of `,` and spaces stops at the string's opening quote, so
    /// an earlier `str_at`, as after the lane read on, changes nothing.)
    #[inline]
    fn str_safe(&self, s: &[u8], e: usize, limits: &Limits) -> usize {
        let t = crate::json::comma_tail(&s[self.str_at.min(e)..e], limits.max_token_bytes);
        debug_assert!(e - t >= self.safe.min(e), "a held comma was handed out");
        e - t
    }

    fn run(&mut self, n: usize, limits: &Limits) -> Step {
        let s = &self.buf[..n];
        let mut i = self.i;
        // Blanks, then the literal `lit`: `Some(true)` read, `Some(false)`
        // cut by the end, `None` something else.
        let lit = |i: usize, lit: &[u8]| -> Option<bool> {
            let t = &s[i..];
            if t.len() < lit.len() {
                lit.starts_with(t).then_some(false)
            } else {
                t.starts_with(lit).then_some(true)
            }
        };
        let step = loop {
            if self.at != At::Scalar && !matches!(self.at, At::Str { .. }) && self.at != At::Name {
                i = blanks(s, i);
            }
            let Some(&b) = s.get(i) else {
                break Step::More;
            };
            match self.at {
                At::NameKey | At::ArgsKey => {
                    let (l, then): (&[u8], _) = if self.at == At::NameKey {
                        (b"\"name\"", Then::Name)
                    } else {
                        (b"\"arguments\"", Then::ArgsOpen)
                    };
                    match lit(i, l) {
                        Some(true) => {
                            i += l.len();
                            self.at = At::Colon(then);
                        }
                        Some(false) => break Step::More,
                        None => break Step::Refuse,
                    }
                }
                At::Colon(then) => {
                    if b != b':' {
                        break Step::Refuse;
                    }
                    i += 1;
                    self.at = match then {
                        Then::Name => At::Name,
                        Then::ArgsOpen => At::ArgsOpen,
                        Then::Value => At::Args(Want::Value),
                    };
                }
                At::Name => {
                    i = blanks(s, i);
                    let Some(&b) = s.get(i) else {
                        break Step::More;
                    };
                    if b != b'"' {
                        break Step::Refuse;
                    }
                    let from = i + 1;
                    let max = MAX_NAME.min(limits.max_token_bytes);
                    let mut j = from;
                    while let Some(&c) = s.get(j) {
                        if c == b'"' || !(0x21..=0x7E).contains(&c) || c == b'\\' {
                            break;
                        }
                        j += 1;
                    }
                    if j - from > max {
                        break Step::Refuse;
                    }
                    match s.get(j) {
                        None => break Step::More,
                        Some(b'"') if j > from => {}
                        Some(_) => break Step::Refuse,
                    }
                    // Complete once a `,` follows: followed by anything
                    // else its closing quote was a quote inside it, which
                    // the repairer reads on past.
                    self.name_at = (from, j);
                    i = j + 1;
                    self.at = At::Comma;
                }
                At::Comma => {
                    if b != b',' {
                        break Step::Refuse;
                    }
                    self.name = Some(self.name_at);
                    i += 1;
                    self.at = At::ArgsKey;
                }
                At::ArgsOpen => {
                    let max_depth = args_depth(limits);
                    if b != b'{' || max_depth == 0 {
                        break Step::Refuse;
                    }
                    self.args = i;
                    self.safe = i;
                    self.emitted = i;
                    self.stack = 1;
                    self.depth = 1;
                    self.first_key = true;
                    i += 1;
                    self.at = At::Args(Want::KeyOrEnd);
                }
                At::Args(want) => {
                    let close = match want {
                        Want::KeyOrEnd | Want::Key => match b {
                            b'"' => {
                                self.tok = i;
                                i += 1;
                                self.at = At::Str { key: true };
                                continue;
                            }
                            b'}' if want == Want::KeyOrEnd => true,
                            _ => break Step::Refuse,
                        },
                        Want::ValueOrEnd | Want::Value => match b {
                            b'{' | b'[' => {
                                let max_depth = args_depth(limits);
                                if self.depth >= max_depth {
                                    break Step::Refuse;
                                }
                                self.stack = (self.stack << 1) | u64::from(b == b'{');
                                self.depth += 1;
                                i += 1;
                                self.at = At::Args(if b == b'{' {
                                    Want::KeyOrEnd
                                } else {
                                    Want::ValueOrEnd
                                });
                                continue;
                            }
                            b'"' => {
                                i += 1;
                                self.safe = i;
                                self.str_at = i;
                                self.at = At::Str { key: false };
                                continue;
                            }
                            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                                self.tok = i;
                                self.at = At::Scalar;
                                continue;
                            }
                            b']' if want == Want::ValueOrEnd => true,
                            _ => break Step::Refuse,
                        },
                        Want::Next => match b {
                            b',' => {
                                // What precedes the comma is safe (a string
                                // value's closing quote, blanks), the comma
                                // is not yet.
                                self.safe = i;
                                i += 1;
                                self.at = At::Args(if self.stack & 1 == 1 {
                                    Want::Key
                                } else {
                                    Want::Value
                                });
                                continue;
                            }
                            b'}' | b']' => true,
                            _ => break Step::Refuse,
                        },
                    };
                    debug_assert!(close);
                    if (b == b'}') != (self.stack & 1 == 1) {
                        break Step::Refuse;
                    }
                    self.stack >>= 1;
                    self.depth -= 1;
                    i += 1;
                    self.safe = i;
                    if self.depth == 0 {
                        self.args_end = i;
                        self.at = At::Close;
                    } else {
                        self.at = At::Args(Want::Next);
                    }
                }
                At::Str { key } => {
                    let e = crate::json::str_body(s, i);
                    match s.get(e) {
                        None => {
                            i = e;
                            if !key {
                                self.safe = self.str_safe(s, e, limits);
                            }
                            break Step::More;
                        }
                        Some(b'"') => {
                            i = e + 1;
                            if key {
                                let k = &s[self.tok + 1..e];
                                if i - self.tok > limits.max_token_bytes
                                    || self.first_key
                                        && (k.contains(&b'\\')
                                            || matches!(
                                                k,
                                                b"arguments" | b"parameters" | b"args" | b"input"
                                            ))
                                {
                                    break Step::Refuse;
                                }
                                self.first_key = false;
                                self.at = At::Colon(Then::Value);
                            } else {
                                // The closing quote is safe once a `,` or a
                                // closer follows it: followed by anything
                                // else it was a quote inside the string
                                // (`"{"name": …`), which the repairer
                                // escapes (as its lane holds the quote).
                                self.safe = self.str_safe(s, e, limits);
                                self.at = At::Args(Want::Next);
                            }
                        }
                        Some(_) => {
                            if !crate::json::str_tail_cut(&s[e..]) {
                                break Step::Refuse;
                            }
                            i = e;
                            if !key {
                                self.safe = self.str_safe(s, e, limits);
                            }
                            break Step::More;
                        }
                    }
                }
                At::Scalar => {
                    let from = self.tok;
                    let mut j = from;
                    while s.get(j).is_some_and(|c| {
                        c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.')
                    }) {
                        j += 1;
                    }
                    if j == s.len() {
                        if j - from > 16 {
                            break Step::Refuse;
                        }
                        break Step::More;
                    }
                    // Ended by what ends it for the repairer's lane (a
                    // blank, a `,` or a closer); anything else may make
                    // the repairer read it otherwise.
                    if !matches!(s[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break Step::Refuse;
                    }
                    let t = &s[from..j];
                    let ok = match t[0] {
                        b't' => t == b"true",
                        b'f' => t == b"false",
                        b'n' => t == b"null",
                        _ => number(&s[..j], from, limits.max_token_bytes) == Some(j),
                    };
                    if !ok {
                        break Step::Refuse;
                    }
                    i = j;
                    self.safe = j;
                    self.at = At::Args(Want::Next);
                }
                At::Close => {
                    if b != b'}' {
                        break Step::Refuse;
                    }
                    break Step::Done(i + 1);
                }
            }
        };
        self.i = i;
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The events of `input` cut at `splits`, `repairer_only` as given.
    fn events(input: &str, splits: &[usize], repairer_only: bool) -> Vec<String> {
        let cfg = crate::Config::default().with_repairer_only(repairer_only);
        let mut p = crate::Parser::new(cfg);
        let mut evs = Vec::new();
        let mut at = 0;
        for &cut in splits.iter().chain(std::iter::once(&input.len())) {
            p.feed(&input.as_bytes()[at..cut], &mut evs);
            at = cut;
        }
        p.finish(&mut evs);
        evs.iter().map(|e| format!("{e:?}")).collect()
    }

    #[test]
    fn the_fast_path_is_taken_and_agrees() {
        use crate::dialect::fast_calls_taken;
        let input = "Step 1: prose.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris 0\", \"unit\": \"celsius\", \"days\": [1, 2.5e3, true, null, {\"q\": \"\\u00e9\\n\"}]}}\n</tool_call>then\n<tool_call>\n{\"arguments\": {}, \"name\": \"f\"}\n</tool_call>\nBoth forecasts are in; the rest of this reply is prose.";
        let before = fast_calls_taken();
        let fast = events(input, &[], false);
        assert_eq!(
            fast_calls_taken() - before,
            2,
            "both calls read by the fast path"
        );
        let slow = events(input, &[], true);
        assert_eq!(
            fast_calls_taken() - before,
            2,
            "none with Config::repairer_only"
        );
        assert_eq!(fast, slow);
        // Streamed in small chunks no value arrives whole: the streaming
        // path reads the first (its deltas are cut elsewhere, the calls
        // agree); the second, its arguments first, is handed over.
        for n in [1, 3, 16, 64] {
            let splits: Vec<usize> = (1..input.len().div_ceil(n)).map(|k| k * n).collect();
            let before = fast_calls_taken();
            let fast = events(input, &splits, false);
            assert_eq!(fast_calls_taken() - before, 1, "{n}-byte chunks");
            let slow = events(input, &splits, true);
            assert_eq!(fast_calls_taken() - before, 1);
            let ends = |evs: &[String]| -> Vec<String> {
                evs.iter()
                    .filter(|e| e.starts_with("ToolEnd") || e.starts_with("Text"))
                    .cloned()
                    .collect()
            };
            assert_eq!(ends(&fast), ends(&slow), "{n}-byte chunks");
        }
    }

    /// Feeds `input` to a [`Stream`] in `n`-byte pieces: its last step.
    fn stream(input: &str, n: usize) -> Step {
        let mut st = Stream::default();
        st.begin(0, &Limits::default());
        let mut step = Step::More;
        for piece in input.as_bytes().chunks(n) {
            st.buf.extend_from_slice(piece);
            step = st.advance(&Limits::default());
            if step != Step::More {
                break;
            }
        }
        step
    }

    #[test]
    fn the_stream_reads_what_scan_reads() {
        let s = r#"{"name": "get_weather", "arguments": {"city": "Paris \u00e9 \ud83d\ude00 é", "n": [1, -2.5e3, true, null, {}]}}"#;
        for n in 1..=s.len() {
            assert_eq!(stream(s, n), Step::Done(s.len()), "{n}");
        }
        for s in [
            r#"{"name": "f", "arguments": {"a": 1},}"#,
            r#"{"name": "f", "arguments": {"a": 01}}"#,
            r#"{"name": "f", "arguments": {"a": "\x"}}"#,
            r#"{"name": "f", "arguments": {"a": "\ud83d"}}"#,
            r#"{"name": "f", "arguments": {"arguments": {}}}"#,
            r#"{"name": "f", "arguments": "{}"}"#,
            r#"{"name": "f", "id": "1", "arguments": {}}"#,
            r#"{"arguments": {}, "name": "f"}"#,
            r#"{"name": "f f", "arguments": {}}"#,
            r#"{"name": "", "arguments": {}}"#,
            r#"{"name": "f", "arguments": {"a": [1}]}}"#,
            r#"{"name": "f", "arguments": {"a": tru}}"#,
            r#"{"name": "f", "arguments": {'a': 1}}"#,
            "{\"name\": \"f\", \"arguments\": {\"a\": \"\u{1}\"}}",
        ] {
            for n in [1, 2, 5, 64] {
                assert_eq!(stream(s, n), Step::Refuse, "{s} in {n}-byte pieces");
            }
        }
        // A string value's closing quote is not safe before what follows
        // it shows it closes the string (a quote inside the string, not
        // escaped, is the repairer's to escape).
        let mut st = Stream::default();
        st.begin(0, &Limits::default());
        st.buf
            .extend_from_slice(br#"{"name": "f", "arguments": {"a": "{""#);
        assert_eq!(st.advance(&Limits::default()), Step::More);
        assert_eq!(&st.buf[st.args..st.safe], br#"{"a": "{"#);
        st.buf.extend_from_slice(b"name");
        assert_eq!(st.advance(&Limits::default()), Step::Refuse);
        // Nor a name before the comma after it.
        let mut st = Stream::default();
        st.begin(0, &Limits::default());
        st.buf.extend_from_slice(br#"{"name": "f""#);
        assert_eq!(st.advance(&Limits::default()), Step::More);
        assert_eq!(st.name, None);
        assert_eq!(
            stream(r#"{"name": "f"g", "arguments": {}}"#, 1),
            Step::Refuse
        );
        // Nor a number before the byte after it ends it.
        assert_eq!(
            stream(r#"{"name": "f", "arguments": {"a": 1"}}"#, 1),
            Step::Refuse
        );
        // Cut: more is needed, and the safe point is never past a key, a
        // comma, a number or blanks.
        let mut st = Stream::default();
        st.begin(0, &Limits::default());
        st.buf
            .extend_from_slice(br#"{"name": "f", "arguments": {"a": "xy", "b": 12"#);
        assert_eq!(st.advance(&Limits::default()), Step::More);
        assert_eq!(&st.buf[st.args..st.safe], br#"{"a": "xy""#);
        st.buf.extend_from_slice(br#" , "c": "\u00"#);
        assert_eq!(st.advance(&Limits::default()), Step::More);
        assert_eq!(
            &st.buf[st.args..st.safe],
            br#"{"a": "xy", "b": 12 , "c": ""#
        );
    }

    /// A `,` and spaces that end what was read of a string value are held,
    /// as the repairer holds them (`StrLex::tail`, the lane's `STR_COMMA`):
    /// it may yet read the comma as the string's end. Handed out, the
    /// deltas did not add up where it did (`{"a": "x, "b": 1}`).
    #[test]
    fn a_comma_ending_a_string_value_is_held() {
        let lim = Limits::default();
        let mut st = Stream::default();
        st.begin(0, &lim);
        st.buf
            .extend_from_slice(br#"{"name": "f", "arguments": {"a": "x, y,"#);
        assert_eq!(st.advance(&lim), Step::More);
        assert_eq!(&st.buf[st.args..st.safe], br#"{"a": "x, y"#);
        st.buf.extend_from_slice(b"  ");
        assert_eq!(st.advance(&lim), Step::More);
        assert_eq!(&st.buf[st.args..st.safe], br#"{"a": "x, y"#);
        // Content after them: they were content.
        st.buf.extend_from_slice(b"z");
        assert_eq!(st.advance(&lim), Step::More);
        assert_eq!(&st.buf[st.args..st.safe], br#"{"a": "x, y,  z"#);
        // Held at a closing quote too, until its delimiter comes ...
        st.buf.extend_from_slice(br#", ""#);
        assert_eq!(st.advance(&lim), Step::More);
        assert_eq!(&st.buf[st.args..st.safe], br#"{"a": "x, y,  z"#);
        // ... which decides (here: the string ends at the quote).
        st.buf.extend_from_slice(b"}");
        assert_eq!(st.advance(&lim), Step::More);
        assert_eq!(&st.buf[st.args..st.safe], br#"{"a": "x, y,  z, "}"#);
        // The repairer's reading of a quote after them: the string ended
        // before the comma; refused, nothing of it handed out.
        let mut st = Stream::default();
        st.begin(0, &lim);
        st.buf
            .extend_from_slice(br#"{"name": "f", "arguments": {"a": "x, "b": 1}}"#);
        assert_eq!(st.advance(&lim), Step::Refuse);
        assert_eq!(&st.buf[st.args..st.safe], br#"{"a": "x"#);
    }

    /// The stream's buffer takes no more of a feed than its scan may read
    /// ([`Stream::room`]): a long feed's rest is the repairer's.
    #[test]
    fn the_stream_takes_no_more_than_it_may_read() {
        for lim in [
            Limits::default(),
            Limits {
                max_token_bytes: 64,
                ..Limits::default()
            },
        ] {
            let mut st = Stream::default();
            st.begin(0, &lim);
            st.buf
                .extend_from_slice(br#"{"name": "f", "arguments": {"a": 1"#);
            assert_eq!(st.advance(&lim), Step::More);
            let room = st.room(&lim);
            assert!(st.buf.len() + room <= MAX_STREAM.min(lim.max_token_bytes));
            st.buf.extend(std::iter::repeat_n(b' ', room));
            assert_eq!(st.advance(&lim), Step::Refuse);
            assert_eq!(st.room(&lim), 0);
        }
    }

    #[test]
    fn takes_long_values_in_pieces() {
        use crate::dialect::fast_calls_taken;
        let piece = crate::json::PIECE;
        // The first piece ends inside an escape, the second after `, `.
        let head = r#"{"name": "f", "arguments": {"content": ""#;
        let mut v = head.to_string();
        v.push_str(&"a".repeat(piece - 2 - v.len()));
        v.push_str("\\u00e9");
        v.push_str(&"b".repeat(2 * piece - 2 - v.len()));
        v.push_str(", c\"}}");
        let f = ok(&v).expect("a long value");
        assert_eq!(f.cuts, vec![piece - 2, 2 * piece - 2]);
        assert_eq!(f.end, v.len());
        let input = format!("<tool_call>\n{v}\n</tool_call>");
        let before = fast_calls_taken();
        let fast = events(&input, &[], false);
        assert_eq!(fast_calls_taken() - before, 1, "read by the fast path");
        assert_eq!(fast, events(&input, &[], true));
        // Cut by the feed (more data follows it): long values are not read.
        assert!(scan(v.as_bytes(), &Limits::default(), false).is_none());
        // A piece end between members, not in a string: refused.
        let mut w = head.to_string();
        w.push_str(&"a".repeat(piece - 3 - w.len()));
        w.push_str("\", \"b\": \"");
        w.push_str(&"c".repeat(1000));
        w.push_str("\"}}");
        assert_eq!(ok(&w), None);
    }

    fn ok(s: &str) -> Option<Found> {
        scan(s.as_bytes(), &Limits::default(), true)
    }

    #[test]
    fn finds_a_well_formed_call() {
        let s = r#"{"name": "get_weather", "arguments": {"city": "Paris", "n": [1, -2.5e3, true, null, {}]}}tail"#;
        let f = ok(s).expect("well formed");
        assert_eq!(&s[f.name.0..f.name.1], "get_weather");
        assert_eq!(
            &s[f.args.0..f.args.1],
            r#"{"city": "Paris", "n": [1, -2.5e3, true, null, {}]}"#
        );
        assert_eq!(&s[f.end..], "tail");
        let s = "{\n  \"arguments\": {},\n  \"name\": \"f\"\n}";
        let f = ok(s).expect("either key order");
        assert_eq!((&s[f.name.0..f.name.1], f.end), ("f", s.len()));
    }

    #[test]
    fn refuses_what_it_is_unsure_of() {
        for s in [
            r#"{"name": "f", "arguments": {"a": 1}"#,         // cut
            r#"{"name": "f", "arguments": {"a": 1},}"#,       // trailing comma
            r#"{"name": "f", "arguments": {"a": 01}}"#,       // bad number
            r#"{"name": "f", "arguments": {"a": "\x"}}"#,     // bad escape
            r#"{"name": "f", "arguments": {"a": "\ud83d"}}"#, // lone surrogate
            r#"{"name": "f", "arguments": {"arguments": {}}}"#,
            r#"{"name": "f", "arguments": "{}"}"#,
            r#"{"name": "f", "id": "1", "arguments": {}}"#,
            r#"{"name": "f f", "arguments": {}}"#,
            r#"{"name": "", "arguments": {}}"#,
            r#"{"name": "f"}"#,
            r#"{"name": "f", "arguments": {"a": [1}]}}"#,
            r#"{"name": "f", "arguments": {"a": tru}}"#,
            r#"{"name": "f", "arguments": {'a': 1}}"#,
            "{\"name\": \"f\", \"arguments\": {\"a\": \"\u{1}\"}}",
        ] {
            assert_eq!(ok(s), None, "{s}");
        }
        // UTF-8 is the caller's to check, once, over the arguments.
        let s = b"{\"name\": \"f\", \"arguments\": {\"a\": \"\xff\"}}";
        let f = scan(s, &Limits::default(), true).expect("no UTF-8 check here");
        assert!(std::str::from_utf8(&s[f.args.0..f.args.1]).is_err());
    }
}
