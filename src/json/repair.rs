//! The incremental repairing JSON transcoder.
//!
//! [`Repairer`] consumes arbitrary chunks of almost-JSON and writes valid,
//! append-only JSON text to a [`Sink`], together with structural [`Mark`]s
//! (value begins and ends, object keys) so that a consumer can route parts of
//! the document without parsing the output again.
//!
//! # Guarantees
//!
//! * **Append-only.** Bytes written are never retracted. Only the few bytes
//!   whose meaning depends on what follows are held back: a closing quote
//!   (content or end of string?), a comma (trailing or not?; inside a
//!   string value, with its blanks: was the string's closing quote left
//!   out before it?), an object key
//!   (kept or dropped if the input ends inside it?), a bare token (number,
//!   literal or unquoted string?), a partial escape or UTF-8 sequence.
//! * **Valid JSON passes through unchanged**, byte for byte, with no repair.
//! * **Chunk invariance.** The output and the repairs depend only on the bytes,
//!   never on where the chunks were split.
//! * **Linear.** Every input byte is looked at a bounded number of times (a
//!   unit cut by a chunk's end is read again with the next chunk, at most
//!   32 bytes of it); string content is copied in runs.
//! * After [`Repairer::finish`], the output is one complete JSON value.
//!
//! # State
//!
//! The repairer is a pushdown automaton: a stack of open containers, a
//! structural position ([`Pos`]) and, when inside a token, a lexer state
//! ([`Lex`]). The positions move like this:
//!
//! | position     | on value start | on `,`           | on `:`       | on closer      |
//! |--------------|----------------|------------------|--------------|----------------|
//! | `Value`      | lex the value  | missing value    | skipped      | close          |
//! | `ObjKey`     | lex a key      | extra comma      | skipped      | close          |
//! | `AfterKey`   | insert `:`     | `null` + comma   | commit key   | `null` + close |
//! | `AfterValue` | insert `,`     | hold the comma   | skipped      | close          |

use crate::config::Limits;
use crate::event::{Repair, RepairKind};

mod fast;
mod lane;
mod units;

/// The string scan, for the call fast path (`dialect::fastcall`).
pub(crate) use fast::{block_flags, escape_len, str_body, str_tail_cut, SHORT_ESCAPE};
pub(crate) use lane::{Lane, LaneAt};

use units::Units;

/// The kind of a JSON value, as announced by [`Mark::Begin`] and [`Mark::End`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// `{ … }`
    Object,
    /// `[ … ]`
    Array,
    /// `"…"`
    String,
    /// A number.
    Number,
    /// `true`, `false` or `null`.
    Literal,
}

/// Structural information written to a [`Sink`] between output bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark<'a> {
    /// A value begins; its first output byte follows.
    Begin(ValueKind),
    /// The most recently begun open value has ended; its last byte was written.
    End(ValueKind),
    /// An object member begins: its key, a complete JSON string, is written next.
    Key(&'a [u8]),
}

/// Receives the repaired JSON text and its structure.
pub trait Sink {
    /// Appends output bytes. String output is never split inside an escape
    /// sequence or a UTF-8 character.
    fn write(&mut self, bytes: &[u8]);
    /// Reports structure; `offset` is the absolute input offset of the byte
    /// being read when the mark was made. The default ignores it.
    fn mark(&mut self, _mark: Mark<'_>, _offset: u64) {}
    /// The input ended inside a string value: [`Repairer::finish`] closes it
    /// next (an `unclosed_string` repair), so the value reported as ending
    /// there is only the start of what was written. Not said for a string
    /// whose closing quote was read. The default ignores it.
    fn string_cut(&mut self) {}
    /// Asked after every step: true makes [`Repairer::feed`] return
    /// [`Status::Halted`] right after the byte that made the sink decide.
    /// A sink decides on marks only: its answer does not change with the
    /// writes between them (the repairer may group those as it likes).
    fn halted(&self) -> bool {
        false
    }
    /// True when the sink needs no marks for what is inside the innermost
    /// open container (until that container closes): the repairer may then
    /// write runs of such content with [`Sink::write_opaque`], unmarked.
    /// Asked when the repairer is in a plain state; the default is false.
    fn opaque(&self) -> bool {
        false
    }
    /// While [`Sink::opaque`]: how many of the open containers around the
    /// innermost one need no marks either, so that an opaque run may close
    /// that many containers besides. The default is 0: a run never closes
    /// the container that was innermost when it began.
    fn opaque_closable(&self) -> usize {
        0
    }
    /// Output bytes written while [`Sink::opaque`]: valid JSON text inside the
    /// innermost open container, whose marks are not reported. The run
    /// changes the number of open containers by `depth_change` (it closes at
    /// most [`Sink::opaque_closable`] more than it opens).
    fn write_opaque(&mut self, bytes: &[u8], depth_change: isize) {
        let _ = depth_change;
        self.write(bytes);
    }
    /// While [`Sink::opaque`]: [`Sink::write_opaque`] of `run`, then a
    /// [`Sink::write`] of each non-empty part of `parts` (a unit the repairer
    /// rewrote, and the input before it), in one call. The default makes
    /// exactly those calls; a sink may take them at once.
    fn write_opaque_parts(&mut self, run: &[u8], depth_change: isize, parts: &[&[u8]]) {
        self.write_opaque(run, depth_change);
        for part in parts {
            if !part.is_empty() {
                self.write(part);
            }
        }
    }
    /// True when the repairer must read one token per step, as its slow
    /// path does, instead of a whole plain unit (a key and its colon, a
    /// string value, a bracket) at once. Both readings make the same writes,
    /// marks and repairs and stop at the same byte; only the grouping of the
    /// steps differs (a sink is asked [`Sink::halted`] after each). The
    /// default is false; tests of the unit reading say true for the
    /// reference.
    fn step_by_step(&self) -> bool {
        false
    }
    /// The last byte written, where the sink keeps the value as written
    /// (the repairer asks for the byte before a quote inside a string, to
    /// tell an object literal written in it, `"use {"k": 1}"`). The
    /// default: not known.
    fn last_byte(&self) -> Option<u8> {
        None
    }

    /// True when what was written since the last token ends in blanks that
    /// hold a blank line (two line breaks): asked only where prose may end
    /// a value (a repairer told to stop on prose), at a byte that needs a repair
    /// anyway. The default: not known.
    fn blank_line_tail(&self) -> bool {
        false
    }
}

/// Length of the `,` and spaces that end `content` (string content), when
/// they are at most `max` bytes: where a string value may have been meant
/// to end ([`StrLex::tail`]). 0 when there is no such tail.
#[inline]
pub(crate) fn comma_tail(content: &[u8], max: usize) -> usize {
    // Most content ends in neither (asked once per chunk and string run).
    if !matches!(content.last(), Some(b',' | b' ')) {
        return 0;
    }
    let spaces = content.iter().rev().take_while(|&&c| c == b' ').count();
    match content.len().checked_sub(spaces + 1) {
        Some(k) if content[k] == b',' && spaces < max => spaces + 1,
        _ => 0,
    }
}

/// True when `ws` (blanks) holds a blank line: two line breaks.
pub(crate) fn holds_blank_line(ws: &[u8]) -> bool {
    memchr::memchr_iter(b'\n', ws).nth(1).is_some()
}

/// The trailing blanks of `out`, when they hold a blank line.
pub(crate) fn ends_in_blank_line(out: &[u8]) -> bool {
    let blanks = out.iter().rev().take_while(|&&c| is_ws(c)).count();
    holds_blank_line(&out[out.len() - blanks..])
}

impl Sink for Vec<u8> {
    fn write(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
    fn last_byte(&self) -> Option<u8> {
        self.last().copied()
    }
    fn blank_line_tail(&self) -> bool {
        ends_in_blank_line(self)
    }
    fn opaque(&self) -> bool {
        true
    }
    fn opaque_closable(&self) -> usize {
        usize::MAX
    }
}

/// What [`Repairer::feed`] stopped on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// All input was consumed; the value is not complete yet.
    NeedMore,
    /// The top-level value is complete; bytes after `consumed` are not part of it.
    Done,
    /// A `<` was found where JSON syntax was expected and stop-on-`<` is set
    /// (the caller decides whether it is a closing tag), or, when the
    /// caller asked for it, a backtick or a line break in a string of a
    /// fenced value (a closing fence?) or prose after a blank line. The
    /// byte was not consumed.
    Stop,
    /// A limit was reached at `consumed`; call [`Repairer::finish`] to close the value.
    Limit,
    /// The sink asked to stop ([`Sink::halted`]); `consumed` is where it decided.
    Halted,
}

/// The result of one [`Repairer::feed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// How many input bytes belong to the value (all of them unless the status says otherwise).
    pub consumed: usize,
    /// Why feeding stopped.
    pub status: Status,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Obj,
    Arr,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    kind: Kind,
    /// Opened with `(`: written as an array.
    tuple: bool,
    /// Stray openers seen in key position whose closers are to be dropped.
    phantoms: u32,
}

/// Structural position (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pos {
    Value,
    ObjKey,
    AfterKey,
    AfterValue,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Quote {
    Double,
    Single,
    /// `“…”`: closed by `”` (or `“`).
    SmartDouble,
    /// `‘…’`: closed by `’`.
    SmartSingle,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Esc {
    None,
    /// After a backslash.
    Backslash,
    /// Inside `\uXXXX`; the escape bytes so far are in `esc_buf`.
    Unicode,
    /// After a high surrogate escape, waiting for `\uXXXX` of the low half.
    LowSurrogate,
}

#[derive(Clone, Copy, Debug)]
struct StrLex {
    quote: Quote,
    key: bool,
    esc: Esc,
    /// A closing quote was seen; `ws` holds the whitespace after it.
    quote_pending: bool,
    /// A line break is among the held whitespace.
    newline: bool,
    /// A `,` and the blanks after it, at the end of a string value's
    /// content, are held in `str_tail`: if a quote follows them and then
    /// neither a delimiter nor a next value, the string should have ended
    /// before the comma (`{"a": "x, "b": 1}`, see [`Repairer::split_at_tail`]).
    tail: bool,
}

impl StrLex {
    /// Plain content of a double-quoted string value: the state the fast
    /// path leaves inside one.
    fn plain() -> Self {
        StrLex {
            quote: Quote::Double,
            key: false,
            esc: Esc::None,
            quote_pending: false,
            newline: false,
            tail: false,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct BareLex {
    key: bool,
    /// The token was judged to be an unquoted string and is being written as it arrives.
    streaming: bool,
    /// Whitespace after the token is held in `ws`.
    ws_pending: bool,
    /// Every byte of the held token is a number byte (kept as it grows, so
    /// that a long token is not read again with each new byte).
    numeric: bool,
}

#[derive(Clone, Copy, Debug)]
enum Lex {
    None,
    Str(StrLex),
    Bare(BareLex),
    /// Saw `/`: a comment, or the start of a bare token.
    Slash,
    LineComment,
    BlockComment {
        star: bool,
    },
    /// A multi-byte character in structural position, collected in `utf8`.
    Utf8,
}

/// A literal as a model writes it, its JSON, and the repair the rewrite records.
type Literal = (&'static [u8], &'static [u8], Option<RepairKind>);

const LITERALS: &[Literal] = &[
    (b"true", b"true", None),
    (b"false", b"false", None),
    (b"null", b"null", None),
    (b"True", b"true", Some(RepairKind::PythonLiteral)),
    (b"False", b"false", Some(RepairKind::PythonLiteral)),
    (b"None", b"null", Some(RepairKind::PythonLiteral)),
    (b"TRUE", b"true", Some(RepairKind::NonJsonLiteral)),
    (b"FALSE", b"false", Some(RepairKind::NonJsonLiteral)),
    (b"NULL", b"null", Some(RepairKind::NonJsonLiteral)),
    (b"Null", b"null", Some(RepairKind::NonJsonLiteral)),
    (b"undefined", b"null", Some(RepairKind::NonJsonLiteral)),
    (b"NaN", b"null", Some(RepairKind::NonFiniteNumber)),
    (b"Infinity", b"null", Some(RepairKind::NonFiniteNumber)),
    (b"-Infinity", b"null", Some(RepairKind::NonFiniteNumber)),
    (b"+Infinity", b"null", Some(RepairKind::NonFiniteNumber)),
];

/// A byte a bare token may hold and still be read as a number.
#[inline]
fn number_byte(b: u8) -> bool {
    matches!(b, b'0'..=b'9' | b'+' | b'-' | b'.' | b'e' | b'E')
}

/// Longest literal in [`LITERALS`].
const MAX_LITERAL: usize = 9;

/// The [`LITERALS`] that `tok` is a prefix of (all of them for an empty
/// `tok`). Most bare tokens are unquoted words: a first-byte test rules
/// out the entries they cannot start, without a comparison.
fn literals_from(tok: &[u8]) -> impl Iterator<Item = &'static Literal> + '_ {
    LITERALS.iter().filter(move |(l, _, _)| match tok.first() {
        None => true,
        Some(&b) => l[0] == b && l.starts_with(tok),
    })
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `\u00XX`: the JSON escape of the byte `c` by its code.
#[inline(always)]
pub(crate) const fn unicode_escape(c: u8) -> [u8; 6] {
    [
        b'\\',
        b'u',
        b'0',
        b'0',
        HEX[(c >> 4) as usize],
        HEX[(c & 15) as usize],
    ]
}

/// Writes the JSON escape of a control character (or DEL) with `write`:
/// its short form where JSON has one (`\n`, `\r`, `\t`, `\b`, `\f`), else
/// [`unicode_escape`]. The one table of these escapes, for the repairer and
/// the dialects' escape loop.
#[inline(always)]
pub(crate) fn control_escape(c: u8, write: impl FnOnce(&[u8])) {
    match c {
        b'\n' => write(b"\\n"),
        b'\r' => write(b"\\r"),
        b'\t' => write(b"\\t"),
        0x08 => write(b"\\b"),
        0x0C => write(b"\\f"),
        _ => write(&unicode_escape(c)),
    }
}

/// Bytes a JSON string may hold unescaped and that need no UTF-8 check.
const fn plain_table() -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0x20;
    while i < 0x80 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = false;
    t[b'\\' as usize] = false;
    t
}
static PLAIN: [bool; 256] = plain_table();

/// Length of the run of [`PLAIN`] bytes at the start of `s` (see [`run_len`]).
#[inline]
pub(super) fn plain_len(s: &[u8]) -> usize {
    run_len::<false, true>(s, &PLAIN)
}

/// Length of the run at the start of `s` of the bytes that `kept` marks,
/// read eight bytes at a time. `kept` must leave out exactly the bytes below
/// 0x20, `"`, `\`, DEL when `DEL` and every byte from 0x80 when `HIGH`: a
/// word is all kept unless the SWAR tests for those (no false negatives)
/// trip, and a word that trips them is settled byte by byte with `kept`.
/// JSON string content with nothing to escape (`DEL` and `HIGH` as the
/// caller needs) is such a run.
#[inline(always)]
pub(crate) fn run_len<const DEL: bool, const HIGH: bool>(s: &[u8], kept: &[bool; 256]) -> usize {
    let mut i = 0;
    for w in s.chunks_exact(8) {
        let Ok(w) = <[u8; 8]>::try_from(w) else { break };
        if swar_hits::<DEL, HIGH>(u64::from_le_bytes(w)) != 0 {
            if let Some(k) = w.iter().position(|&c| !kept[c as usize]) {
                return i + k;
            }
        }
        i += 8;
    }
    i + s[i..]
        .iter()
        .position(|&c| !kept[c as usize])
        .unwrap_or(s.len() - i)
}

/// [`PLAIN`] less `'`.
static PLAIN_NO_SQUOTE: [bool; 256] = {
    let mut t = plain_table();
    t[b'\'' as usize] = false;
    t
};

/// Length of the run of [`PLAIN`] bytes other than `'` at the start of `s`:
/// the content of a single-quoted string that is written as it is between
/// double quotes. One pass (see [`run_len_except`]) instead of a search for
/// the quote and a second pass over what precedes it.
#[inline]
pub(super) fn single_quoted_len(s: &[u8]) -> usize {
    run_len_except::<false, true>(s, &PLAIN_NO_SQUOTE, b"'")
}

/// [`run_len`] for a `kept` table that leaves out the bytes of `extra`
/// besides those [`run_len`] requires (and keeps every other byte it may
/// keep): each byte of `extra` gets a SWAR test of its own, so a word is
/// settled byte by byte only when one of the tests trips.
#[inline(always)]
pub(crate) fn run_len_except<const DEL: bool, const HIGH: bool>(
    s: &[u8],
    kept: &[bool; 256],
    extra: &[u8],
) -> usize {
    let mut i = 0;
    for w in s.chunks_exact(8) {
        let Ok(w) = <[u8; 8]>::try_from(w) else { break };
        let x = u64::from_le_bytes(w);
        let mut hits = swar_hits::<DEL, HIGH>(x);
        for &e in extra {
            let y = x ^ (ONES * u64::from(e));
            hits |= y.wrapping_sub(ONES) & !y & TOP;
        }
        if hits != 0 {
            if let Some(k) = w.iter().position(|&c| !kept[c as usize]) {
                return i + k;
            }
        }
        i += 8;
    }
    i + s[i..]
        .iter()
        .position(|&c| !kept[c as usize])
        .unwrap_or(s.len() - i)
}

const ONES: u64 = 0x0101_0101_0101_0101;
const TOP: u64 = 0x8080_8080_8080_8080;

/// The SWAR tests of [`run_len`] on the word `x`: zero when none of its
/// bytes is below 0x20, `"`, `\`, DEL (when `DEL`) or from 0x80 (when
/// `HIGH`); otherwise the top bit of (at least) the first such byte is set.
#[inline(always)]
pub(super) fn swar_hits<const DEL: bool, const HIGH: bool>(x: u64) -> u64 {
    let zero_byte = |y: u64| y.wrapping_sub(ONES) & !y;
    let mut hits = x.wrapping_sub(ONES * 0x20) & !x
        | zero_byte(x ^ (ONES * u64::from(b'"')))
        | zero_byte(x ^ (ONES * u64::from(b'\\')));
    if DEL {
        hits |= zero_byte(x ^ (ONES * 0x7F));
    }
    if HIGH {
        hits |= x;
    }
    hits & TOP
}

/// The `n` bytes (1 to 8) of the word `w` ([`crate::event::word`]'s form)
/// are all [`PLAIN`]: string content copied as it is. Exact: the bytes past
/// `n` are taken as spaces, and a word with no SWAR hit has no byte outside
/// [`PLAIN`].
#[inline(always)]
pub(super) fn plain_word(w: u64, n: usize) -> bool {
    debug_assert!((1..=8).contains(&n));
    let pad = (ONES * 0x20).checked_shl(8 * n as u32).unwrap_or(0);
    swar_hits::<false, true>(w | pad) == 0
}

#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The depth of an object literal inside a string (`Repairer::inline`)
/// after the content `run`: braces counted until the literal closes (0),
/// after which braces are plain content again.
fn inline_depth(mut depth: u8, run: &[u8]) -> u8 {
    for &c in run {
        match c {
            b'{' => depth = depth.saturating_add(1),
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
    }
    depth
}

/// Length of a UTF-8 sequence from its lead byte (0 for a byte that cannot lead one).
#[inline]
pub(crate) fn utf8_len(b: u8) -> usize {
    match b {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 0,
    }
}

/// Non-JSON whitespace characters that are dropped in structural positions.
fn is_exotic_ws(c: &[u8]) -> bool {
    matches!(
        c,
        [0xEF, 0xBB, 0xBF]
            | [0xC2, 0xA0]
            | [0xE2, 0x80, 0x80..=0x8B]
            | [0xE2, 0x80, 0xA8 | 0xA9 | 0xAF]
            | [0xE2, 0x81, 0x9F]
            | [0xE3, 0x80, 0x80]
    )
}

/// The incremental repairing JSON transcoder. See the [module docs](crate::json).
///
/// ```
/// use toolstream::json::{Repairer, Status};
/// let mut r = Repairer::new();
/// let mut out = Vec::new();
/// // Python literals, single quotes, trailing commas, split anywhere:
/// r.feed(b"{'ok': Tr", &mut out);
/// let p = r.feed(b"ue, 'n': [1, 2,],}", &mut out);
/// assert_eq!(p.status, Status::Done);
/// assert_eq!(out, br#"{"ok": true, "n": [1, 2]}"#);
/// // Two single-quoted keys, one Python literal, two trailing commas.
/// assert_eq!(r.repairs().len(), 5);
/// ```
#[derive(Clone, Debug)]
pub struct Repairer {
    stack: Vec<Frame>,
    pos: Pos,
    lex: Lex,
    /// The pending key: its complete JSON string and the whitespace after it.
    key: Vec<u8>,
    /// Length of the JSON string part of `key` (the rest is whitespace).
    key_len: usize,
    key_truncated: bool,
    /// Inside an object literal written in a string value without escaping
    /// its quotes (`"use {"k": "v"} here"`): the depth of its braces, 0
    /// outside one. Its quotes are content whatever follows them. Opened
    /// by a `{` right before a quote that was content (valid JSON never
    /// opens one); the string's end closes it. Only the slow path reads
    /// such a string.
    inline: u8,
    /// A held bare token (raw bytes).
    tok: Vec<u8>,
    tok_start: u64,
    /// Whitespace held after a pending comma.
    comma_ws: Vec<u8>,
    /// Whitespace held after a pending closing quote.
    quote_ws: Vec<u8>,
    /// The `,` and blanks held at the end of a string value's content
    /// ([`StrLex::tail`]), and the comma's offset.
    str_tail: Vec<u8>,
    tail_at: u64,
    /// Whitespace held after (or inside) a bare token.
    tok_ws: Vec<u8>,
    /// A pending comma: the offset where it was seen (or inserted).
    comma: Option<u64>,
    /// Escape bytes held inside a string (`\uD83D\uDE0` at most).
    esc_buf: Vec<u8>,
    /// A partial UTF-8 character (inside a string or in structural position).
    utf8: [u8; 4],
    utf8_len: u8,
    utf8_need: u8,
    /// Offset of the first byte of the partial character.
    utf8_at: u64,
    /// Offset of the pending key's first byte.
    key_start: u64,
    /// Absolute offset of the next input byte.
    offset: u64,
    repairs: Vec<Repair>,
    /// Once `repairs` is more than twice this long, only its lowest this
    /// many are kept (see [`Repairer::one_call`]).
    keep_repairs: usize,
    max_depth: usize,
    max_token: usize,
    stop_on_lt: bool,
    /// Repairs a document, not a call's arguments ([`Repairer::document`]).
    document: bool,
    /// A backtick in structural position, and a raw line break inside a
    /// string, stop the repairer: the value is fenced, and the caller looks
    /// for the closing fence ([`Repairer::set_stop_on_fence`]).
    stop_on_fence: bool,
    /// Prose after a blank line stops the repairer where it cannot continue
    /// the value ([`Repairer::set_stop_on_prose`]).
    stop_on_prose: bool,
    /// The byte the repairer last stopped on (a `<`, a backtick, a line
    /// break in a string) is read as JSON this once.
    lt_once: bool,
    limited: bool,
    /// Where `max_token_bytes` first cut a token (a key cut, a number
    /// written as a string), if it did.
    token_cut: Option<u64>,
    begun: bool,
    /// The input's last bytes, when they are the start of a unit the fast
    /// path can complete (a chunk ended inside it; see [`fast::Cut`]): read
    /// again with the next chunk, not handed to the slow path. They count as
    /// consumed (`offset` is past them).
    stash: Vec<u8>,
    /// The stashed unit is a string (for [`Repairer::in_string`]).
    stash_str: bool,
    /// The stash and the next chunk's first bytes, joined (kept for its capacity).
    joined: Vec<u8>,
}

/// Largest buffer (in bytes) a reader passes on to the next one
/// ([`Repairer::reuse_buffers`]).
pub(crate) const REUSE_MAX: usize = 4 << 10;

/// Puts `old`'s buffer, emptied, in `slot` (which must be empty), unless it
/// is larger than [`REUSE_MAX`] bytes.
pub(crate) fn reuse<T>(slot: &mut Vec<T>, mut old: Vec<T>) {
    debug_assert!(slot.is_empty());
    if old.capacity() * std::mem::size_of::<T>() <= REUSE_MAX && old.capacity() > slot.capacity() {
        old.clear();
        *slot = old;
    }
}

/// Most bytes [`Repairer::stash`] holds: a longer unit goes to the slow
/// path, so that no byte is read more than `STASH_MAX / chunk` times.
pub(crate) const STASH_MAX: usize = 32;

/// How far a run of non-ASCII string content is looked at in one step: a
/// run cut by an invalid byte is read again after it, so the look ahead must
/// be bounded for the work to stay linear.
const UTF8_WINDOW: usize = 64;

/// The run of non-ASCII bytes at the start of `s`, at most [`UTF8_WINDOW`]
/// of them: its end, and the UTF-8 error in it if any (an error without a
/// length at the window's end is a character the window cut, read whole
/// next time).
pub(super) fn non_ascii_run(s: &[u8]) -> (usize, Option<std::str::Utf8Error>) {
    let lim = s.len().min(UTF8_WINDOW);
    let end = s[..lim].iter().position(|&c| c < 0x80).unwrap_or(lim);
    (end, std::str::from_utf8(&s[..end]).err())
}

/// How many bytes of the next chunk are joined to the stash. Read the stash
/// again with at most this many bytes.
const STASH_JOIN: usize = 64;

impl Default for Repairer {
    fn default() -> Self {
        Self::new()
    }
}

impl Repairer {
    /// A repairer with the default [`Limits`].
    pub fn new() -> Self {
        Self::with_limits(&Limits::default())
    }

    /// A repairer bounded by `limits` (`max_depth` and `max_token_bytes` apply).
    pub fn with_limits(limits: &Limits) -> Self {
        Repairer {
            stack: Vec::new(),
            pos: Pos::Value,
            lex: Lex::None,
            key: Vec::new(),
            key_len: 0,
            key_truncated: false,
            inline: 0,
            tok: Vec::new(),
            tok_start: 0,
            comma_ws: Vec::new(),
            quote_ws: Vec::new(),
            str_tail: Vec::new(),
            tail_at: 0,
            tok_ws: Vec::new(),
            comma: None,
            esc_buf: Vec::new(),
            utf8: [0; 4],
            utf8_len: 0,
            utf8_need: 0,
            utf8_at: 0,
            key_start: 0,
            offset: 0,
            repairs: Vec::new(),
            keep_repairs: usize::MAX,
            max_depth: limits.max_depth.max(1),
            max_token: limits.max_token_bytes.max(16),
            stop_on_lt: false,
            document: false,
            stop_on_fence: false,
            stop_on_prose: false,
            lt_once: false,
            limited: false,
            token_cut: None,
            begun: false,
            stash: Vec::new(),
            stash_str: false,
            joined: Vec::new(),
        }
    }

    /// Takes over the buffers of `old` (emptied), so that a repairer made
    /// for the next value of a stream allocates nothing its predecessor
    /// already had; nothing else of `old` is kept. A buffer that grew past
    /// [`REUSE_MAX`] bytes is dropped instead, so a long value does not
    /// pin its size.
    pub(crate) fn reuse_buffers(&mut self, old: Repairer) {
        reuse(&mut self.stack, old.stack);
        reuse(&mut self.key, old.key);
        reuse(&mut self.tok, old.tok);
        reuse(&mut self.comma_ws, old.comma_ws);
        reuse(&mut self.quote_ws, old.quote_ws);
        reuse(&mut self.str_tail, old.str_tail);
        reuse(&mut self.tok_ws, old.tok_ws);
        reuse(&mut self.esc_buf, old.esc_buf);
        reuse(&mut self.repairs, old.repairs);
        reuse(&mut self.stash, old.stash);
        reuse(&mut self.joined, old.joined);
    }

    /// Every repair of this repairer goes, with its offset, to one call,
    /// whose list keeps only its `max_repairs` lowest and marks the next
    /// ([`Limits::max_repairs`]): the repairer then keeps only about twice
    /// that many, so that its memory stays bounded however many it makes.
    pub(crate) fn one_call(mut self, max_repairs: usize) -> Self {
        self.keep_repairs = max_repairs.saturating_add(1);
        self
    }

    /// Where [`Limits::max_token_bytes`] first cut a token of the value
    /// (a key shortened, a number written as a string), if it did.
    pub(crate) fn token_cut(&self) -> Option<u64> {
        self.token_cut
    }

    /// Takes the repairs made since the last call, keeping the list's buffer.
    pub(crate) fn drain_repairs(&mut self) -> std::vec::Drain<'_, Repair> {
        self.repairs.drain(..)
    }

    /// Makes a `<` in structural position stop the repairer ([`Status::Stop`])
    /// instead of being read as JSON, so that a dialect can look for its
    /// closing tag. Inside strings `<` is always content.
    pub fn stop_on_lt(mut self, yes: bool) -> Self {
        self.stop_on_lt = yes;
        self
    }

    /// Repairs a whole document ([`crate::json::repair`],
    /// [`crate::json::repair_document`]), not a call's arguments. Two
    /// repairs differ, where jsonrepair's result is the document's and the
    /// arguments keep a signal for the call reader:
    ///
    /// * a key with no value at the end of the input is kept with `null`
    ///   and a `missing_value` repair (`{"a": 1, "b"` and `{"a": 1, "b` →
    ///   `{"a": 1, "b": null}`); in arguments cut by the end of a stream it
    ///   is dropped (they are what the model finished writing, and a cut
    ///   tool schema stays recognisable);
    /// * an ellipsis that is an object's first member (`{...}`) is dropped;
    ///   in arguments it stays the key `"..."`, which makes the object a
    ///   format example's placeholder and so no call. An ellipsis after
    ///   other members or items is dropped in both.
    pub fn document(mut self, yes: bool) -> Self {
        self.document = yes;
        self
    }

    /// Makes the repairer stop ([`Status::Stop`], the byte not consumed) at
    /// a backtick in structural position and at a raw line break inside a
    /// string, so that a caller reading a fenced value can end it at the
    /// closing fence (which JSON never continues into). A stop the caller
    /// finds is no fence is read on with [`Repairer::accept_stop`].
    pub(crate) fn set_stop_on_fence(&mut self, yes: bool) {
        self.stop_on_fence = yes;
    }

    /// Makes the repairer stop ([`Status::Stop`], the byte not consumed) at
    /// a letter that follows a blank line where the value expects a comma,
    /// a closer or (after a comma) a key or element: prose that cannot
    /// continue the value, written after a call the model left unclosed.
    /// The caller ends the value there ([`Repairer::finish`]).
    pub(crate) fn set_stop_on_prose(&mut self, yes: bool) {
        self.stop_on_prose = yes;
    }

    /// After a [`Status::Stop`] at a backtick or line break that the caller
    /// found is no closing fence: that byte is read as JSON.
    pub(crate) fn accept_stop(&mut self) {
        self.lt_once = true;
    }

    /// After a [`Status::Stop`] on a `<` that the caller found is not its
    /// closing tag: read that `<` as the start of a bare token (a placeholder
    /// such as `<usageRequest>`) instead of stopping again.
    pub fn accept_lt(&mut self) {
        self.lt_once = true;
    }

    /// Sets the absolute offset of the next input byte (used in repair offsets).
    pub fn set_offset(&mut self, offset: u64) {
        self.offset = offset;
    }

    /// Absolute offset of the next input byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The repairs made so far.
    pub fn repairs(&self) -> &[Repair] {
        &self.repairs
    }

    /// Of the repairs from index `from` on, keeps the `keep` lowest (by
    /// offset, then kind), sorted, once there are more than twice as many:
    /// a caller that will only ever list the lowest `keep` of them (see
    /// [`Limits::max_repairs`]) bounds the memory they take. Which repairs
    /// stay depends on the list's contents, not on when this is called.
    pub(crate) fn bound_repairs(&mut self, from: usize, keep: usize) {
        Repair::bound_from(&mut self.repairs, from, keep);
    }

    /// Takes the repairs made so far.
    pub fn take_repairs(&mut self) -> Vec<Repair> {
        std::mem::take(&mut self.repairs)
    }

    /// True once the top-level value is complete.
    pub fn is_done(&self) -> bool {
        self.pos == Pos::Done
    }

    /// True once any byte of the top-level value has been seen.
    pub fn has_begun(&self) -> bool {
        self.begun
    }

    /// Current nesting depth (0 outside any container).
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    /// True while inside a string or key (where `<` is content).
    pub fn in_string(&self) -> bool {
        matches!(self.lex, Lex::Str(_)) || (!self.stash.is_empty() && self.stash_str)
    }

    #[inline]
    fn repair(&mut self, kind: RepairKind, offset: u64) {
        self.repairs.push(Repair { kind, offset });
        if self.repairs.len() / 2 > self.keep_repairs {
            self.bound_repairs(0, self.keep_repairs);
        }
    }

    /// Feeds the next chunk, writing repaired output to `sink`.
    ///
    /// Returns how many bytes were consumed: all of them, unless the value
    /// completed ([`Status::Done`]), a `<` stopped it ([`Status::Stop`]) or a
    /// limit was reached ([`Status::Limit`]).
    pub fn feed<S: Sink + ?Sized>(&mut self, input: &[u8], sink: &mut S) -> Progress {
        if self.limited {
            return Progress {
                consumed: 0,
                status: Status::Limit,
            };
        }
        if self.pos == Pos::Done {
            return Progress {
                consumed: 0,
                status: Status::Done,
            };
        }
        if self.stash.is_empty() {
            if self.in_plain_content() && sink.opaque() {
                // The steady state of a long string argument: a chunk of
                // plain content, read as the fast path would read it
                // (without its set-up).
                let k = fast::str_body(input, 0);
                if k == input.len() && comma_tail(input, self.max_token) == 0 {
                    sink.write_opaque(input, 0);
                    self.offset += k as u64;
                    self.lex = Lex::Str(StrLex::plain());
                    return Progress {
                        consumed: k,
                        status: Status::NeedMore,
                    };
                }
            }
            return self.run(input, sink, true);
        }
        self.feed_stashed(input, sink)
    }

    /// Inside a double-quoted string value, nothing held: where the fast
    /// path reads content.
    #[inline]
    fn in_plain_content(&self) -> bool {
        matches!(self.lex, Lex::Str(_)) && self.fast_ready(false)
    }

    /// [`Repairer::feed`] when the last chunk ended inside a unit: reads it
    /// again with the start of this chunk, then the rest of this chunk.
    #[inline(never)]
    fn feed_stashed<S: Sink + ?Sized>(&mut self, input: &[u8], sink: &mut S) -> Progress {
        let held = self.stash.len();
        let join = input.len().min(STASH_JOIN);
        let mut joined = std::mem::take(&mut self.joined);
        joined.clear();
        joined.extend_from_slice(&self.stash);
        joined.extend_from_slice(&input[..join]);
        self.stash.clear();
        self.offset -= held as u64;
        let p = self.run(&joined, sink, join == input.len());
        self.joined = joined;
        // A stashed unit holds no closer, opener or `<`: reading it cannot
        // end the value, stop or halt, so the stash itself is always consumed.
        debug_assert!(p.consumed >= held);
        let p = Progress {
            consumed: p.consumed.saturating_sub(held),
            status: p.status,
        };
        if p.status != Status::NeedMore || join == input.len() {
            return p;
        }
        let q = self.run(&input[join..], sink, true);
        Progress {
            consumed: join + q.consumed,
            status: q.status,
        }
    }

    /// [`Repairer::feed`] without the stash from the last chunk. With
    /// `may_stash`, a unit cut by the end of `input` is stashed.
    fn run<S: Sink + ?Sized>(&mut self, input: &[u8], sink: &mut S, may_stash: bool) -> Progress {
        let mut i = 0;
        while i < input.len() {
            if self.fast_ready(i == 0) && sink.opaque() && self.fast_may_read(input[i]) {
                let (n, cut) = self.fast(&input[i..], sink);
                i += n;
                self.offset += n as u64;
                let tail = input.len() - i;
                if may_stash && cut != fast::Cut::No && tail <= STASH_MAX {
                    self.stash.extend_from_slice(&input[i..]);
                    self.stash_str = cut == fast::Cut::Str;
                    self.offset += tail as u64;
                    return Progress {
                        consumed: input.len(),
                        status: Status::NeedMore,
                    };
                }
                if n > 0 {
                    continue;
                }
            }
            if self.units_ready() && !sink.step_by_step() {
                match self.units(&input[i..], sink) {
                    Units::Read(0) => {}
                    Units::Read(n) => {
                        i += n;
                        continue;
                    }
                    Units::Stop(n, status) => {
                        return Progress {
                            consumed: i + n,
                            status,
                        }
                    }
                }
            }
            let step = match self.lex {
                Lex::Str(s) => self.lex_string(s, &input[i..], sink),
                Lex::Bare(b) => self.lex_bare(b, &input[i..], sink),
                _ => self.structural(&input[i..], sink),
            };
            match step {
                Step::Consumed(n) => {
                    i += n;
                    self.offset += n as u64;
                }
                Step::Halt(n, status) => {
                    i += n;
                    self.offset += n as u64;
                    return Progress {
                        consumed: i,
                        status,
                    };
                }
            }
            if sink.halted() {
                return Progress {
                    consumed: i,
                    status: Status::Halted,
                };
            }
            if self.pos == Pos::Done && matches!(self.lex, Lex::None) {
                return Progress {
                    consumed: i,
                    status: Status::Done,
                };
            }
        }
        Progress {
            consumed: i,
            status: Status::NeedMore,
        }
    }

    /// Ends the input: closes whatever is open so the output is one complete value.
    ///
    /// Returns true when anything had to be completed (the value was truncated).
    /// If no value had begun, nothing is written.
    pub fn finish<S: Sink + ?Sized>(&mut self, sink: &mut S) -> bool {
        if !self.stash.is_empty() {
            // The slow path reads the cut unit, as if the stash had not been.
            let stash = std::mem::take(&mut self.stash);
            self.offset -= stash.len() as u64;
            self.run(&stash, sink, false);
        }
        if self.pos == Pos::Done && matches!(self.lex, Lex::None) {
            return false;
        }
        let at = self.offset;
        let mut truncated = self.limited;
        match self.lex {
            Lex::Str(s) => {
                if !s.key && !s.quote_pending {
                    sink.string_cut();
                }
                truncated |= self.finish_string(s, sink);
            }
            Lex::Bare(b) => {
                self.end_bare(b, sink, true);
                truncated = true;
            }
            Lex::Utf8 => {
                self.utf8_len = 0;
                self.lex = Lex::None;
                self.repair(RepairKind::InvalidUtf8, at);
                truncated = true;
            }
            Lex::Slash => {
                // A lone `/` at the end: a cut-off comment or word; nothing to keep.
                self.lex = Lex::None;
                truncated = true;
            }
            Lex::LineComment | Lex::BlockComment { .. } => {
                self.lex = Lex::None;
            }
            Lex::None => {}
        }
        if !self.begun {
            return false;
        }
        if self.pos == Pos::Done {
            return truncated;
        }
        match self.pos {
            Pos::AfterKey if !self.document || self.key_truncated || self.key.is_empty() => {
                self.key.clear();
                self.key_len = 0;
                self.repair(RepairKind::DroppedKey, at);
            }
            Pos::AfterKey => {
                // `{"a": 1, "b"` — a key with no value at the end: kept,
                // with `null` (as jsonrepair does).
                self.write_key(sink, at);
                self.repair(RepairKind::MissingValue, at);
                self.scalar(sink, ValueKind::Literal, b"null");
            }
            Pos::Value
                if self.stack.last().map(|f| f.kind) == Some(Kind::Obj) && self.comma.is_none() =>
            {
                // `{"a":` — a value cut off after its colon.
                self.repair(RepairKind::MissingValue, at);
                self.scalar(sink, ValueKind::Literal, b"null");
            }
            _ => {}
        }
        if self.comma.take().is_some() {
            self.repair(RepairKind::TrailingComma, at);
            self.comma_ws.clear();
        }
        if !self.comma_ws.is_empty() {
            sink.write(&self.comma_ws);
            self.comma_ws.clear();
        }
        if !self.stack.is_empty() {
            self.repair(RepairKind::MissingCloser, at);
            while let Some(f) = self.stack.pop() {
                let (b, k) = closer_of(f.kind);
                sink.write(b);
                sink.mark(Mark::End(k), self.offset);
            }
        }
        self.pos = Pos::Done;
        true
    }

    // ----- structural positions -------------------------------------------------

    fn structural<S: Sink + ?Sized>(&mut self, input: &[u8], sink: &mut S) -> Step {
        let b = input[0];
        match self.lex {
            Lex::LineComment => {
                return match memchr::memchr2(b'\n', b'\r', input) {
                    Some(n) => {
                        self.lex = Lex::None;
                        Step::Consumed(n)
                    }
                    None => Step::Consumed(input.len()),
                };
            }
            Lex::BlockComment { star } => {
                if star && b == b'/' {
                    self.lex = Lex::None;
                    return Step::Consumed(1);
                }
                return match memchr::memchr(b'*', &input[usize::from(b == b'*')..]) {
                    _ if b == b'*' => {
                        self.lex = Lex::BlockComment { star: true };
                        Step::Consumed(1)
                    }
                    Some(n) => {
                        self.lex = Lex::BlockComment { star: false };
                        Step::Consumed(n)
                    }
                    None => {
                        self.lex = Lex::BlockComment { star: false };
                        Step::Consumed(input.len())
                    }
                };
            }
            Lex::Slash => {
                self.lex = Lex::None;
                match b {
                    b'/' => {
                        self.repair(RepairKind::Comment, self.offset - 1);
                        self.lex = Lex::LineComment;
                        return Step::Consumed(1);
                    }
                    b'*' => {
                        self.repair(RepairKind::Comment, self.offset - 1);
                        self.lex = Lex::BlockComment { star: false };
                        return Step::Consumed(1);
                    }
                    _ => {
                        // `/` started a bare token (a path, a regex): treat it as one.
                        return match self.begin_bare(b"/", self.offset - 1, sink) {
                            Some(step) => step,
                            None => Step::Consumed(0),
                        };
                    }
                }
            }
            Lex::Utf8 => return self.structural_utf8(input, sink),
            _ => {}
        }
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => {
                let n = input.iter().position(|&c| !is_ws(c)).unwrap_or(input.len());
                self.whitespace(&input[..n], sink);
                Step::Consumed(n)
            }
            b'{' | b'[' | b'(' => self.open(b, sink),
            b'}' | b']' | b')' => self.close(b, sink),
            b'"' => self.begin_string(Quote::Double, self.offset, sink),
            b'\'' => self.begin_string(Quote::Single, self.offset, sink),
            b',' => self.comma(sink),
            b':' | b'=' => self.colon(b, sink),
            b'/' => {
                self.lex = Lex::Slash;
                Step::Consumed(1)
            }
            b'#' => {
                self.repair(RepairKind::Comment, self.offset);
                self.lex = Lex::LineComment;
                Step::Consumed(1)
            }
            b'<' if self.stop_on_lt && !self.lt_once => Step::Halt(0, Status::Stop),
            b'`' if self.stop_on_fence && !self.lt_once => Step::Halt(0, Status::Stop),
            b'<' => match self.begin_bare(&[], self.offset, sink) {
                Some(step) => step,
                None => Step::Consumed(0),
            },
            0x80..=0xFF => {
                let need = utf8_len(b);
                if need == 0 {
                    self.repair(RepairKind::InvalidUtf8, self.offset);
                    return Step::Consumed(1);
                }
                self.utf8_len = 0;
                self.utf8_need = need as u8;
                self.utf8_at = self.offset;
                self.lex = Lex::Utf8;
                self.structural_utf8(input, sink)
            }
            0x00..=0x1F | 0x7F | b';' => {
                self.repair(RepairKind::TrailingGarbage, self.offset);
                Step::Consumed(1)
            }
            b'A'..=b'Z' | b'a'..=b'z'
                if self.stop_on_prose && !self.lt_once && self.prose_ends_value(sink) =>
            {
                Step::Halt(0, Status::Stop)
            }
            _ => match self.begin_bare(&[], self.offset, sink) {
                Some(step) => step,
                None => Step::Consumed(0),
            },
        }
    }

    fn structural_utf8<S: Sink + ?Sized>(&mut self, input: &[u8], sink: &mut S) -> Step {
        let mut n = 0;
        while (self.utf8_len < self.utf8_need) && n < input.len() {
            let c = input[n];
            if self.utf8_len > 0 && (c & 0xC0) != 0x80 {
                // Not a continuation byte: the sequence is invalid; skip what we had.
                self.repair(RepairKind::InvalidUtf8, self.utf8_at);
                self.utf8_len = 0;
                self.lex = Lex::None;
                return Step::Consumed(n);
            }
            self.utf8[self.utf8_len as usize] = c;
            self.utf8_len += 1;
            n += 1;
        }
        if self.utf8_len < self.utf8_need {
            return Step::Consumed(n);
        }
        let len = self.utf8_len as usize;
        let ch = self.utf8;
        let start = self.offset + n as u64 - len as u64;
        self.utf8_len = 0;
        self.lex = Lex::None;
        if std::str::from_utf8(&ch[..len]).is_err() {
            self.repair(RepairKind::InvalidUtf8, start);
            return Step::Consumed(n);
        }
        let c = &ch[..len];
        if is_exotic_ws(c) {
            self.repair(RepairKind::NonJsonWhitespace, start);
            return Step::Consumed(n);
        }
        let quote = match c {
            [0xE2, 0x80, 0x9C | 0x9D] => Some(Quote::SmartDouble),
            [0xE2, 0x80, 0x98 | 0x99] => Some(Quote::SmartSingle),
            _ => None,
        };
        // Repairs made while starting the token belong to the character's
        // first byte, whichever chunk completed it.
        let step_offset = std::mem::replace(&mut self.offset, start);
        let step = if let Some(q) = quote {
            match self.begin_string(q, start, sink) {
                Step::Consumed(_) => Step::Consumed(n),
                Step::Halt(_, s) => Step::Halt(n, s),
            }
        } else {
            match self.begin_bare(c, start, sink) {
                Some(Step::Halt(_, s)) => Step::Halt(n, s),
                _ => Step::Consumed(n),
            }
        };
        self.offset = step_offset;
        step
    }

    /// A letter here, after a blank line, is prose that cannot continue the
    /// value: inside a container, where a comma or a closer is expected, or
    /// a key or element after a comma (whose blanks the comma holds).
    fn prose_ends_value<S: Sink + ?Sized>(&self, sink: &S) -> bool {
        if self.stack.is_empty() {
            return false;
        }
        match self.pos {
            Pos::AfterValue => sink.blank_line_tail(),
            Pos::ObjKey | Pos::Value if self.comma.is_some() => holds_blank_line(&self.comma_ws),
            _ => false,
        }
    }

    fn whitespace<S: Sink + ?Sized>(&mut self, ws: &[u8], sink: &mut S) {
        if self.pos == Pos::AfterKey {
            // The blanks that fit are kept: a prefix of the run, whatever
            // pieces it came in.
            let room = self.max_token.saturating_sub(self.key.len());
            self.key.extend_from_slice(&ws[..ws.len().min(room)]);
        } else if self.comma.is_some() {
            let room = self.max_token.saturating_sub(self.comma_ws.len());
            self.comma_ws.extend_from_slice(&ws[..ws.len().min(room)]);
        } else if self.begun {
            sink.write(ws);
        }
    }

    fn hold_tok_ws(&mut self, ws: &[u8]) {
        // Whitespace beyond the token limit is dropped: it carries no meaning.
        let room = self.max_token.saturating_sub(self.tok_ws.len());
        self.tok_ws.extend_from_slice(&ws[..ws.len().min(room)]);
    }

    /// Writes a pending comma (and the whitespace after it) before a new member or element.
    fn flush_comma<S: Sink + ?Sized>(&mut self, sink: &mut S) {
        if self.comma.take().is_some() {
            sink.write(b",");
        }
        if !self.comma_ws.is_empty() {
            sink.write(&self.comma_ws);
            self.comma_ws.clear();
        }
    }

    /// Writes the pending key, with `:` (inserted if `colon` is None).
    fn commit_key<S: Sink + ?Sized>(&mut self, sink: &mut S, colon: Option<u8>, at: u64) {
        if colon != Some(b':') {
            self.repair(RepairKind::MissingColon, at);
        }
        self.write_key(sink, self.offset);
    }

    /// Writes the pending key (complete in `key`, blanks after it included)
    /// and its colon, marked at offset `at`; the value comes next.
    fn write_key<S: Sink + ?Sized>(&mut self, sink: &mut S, at: u64) {
        self.flush_comma(sink);
        sink.mark(Mark::Key(&self.key[..self.key_len]), at);
        // The key, its blanks and the colon, in one write.
        self.key.push(b':');
        sink.write(&self.key);
        self.key.clear();
        self.key_len = 0;
        self.pos = Pos::Value;
    }

    /// Prepares for a value in the current position: inserts what is missing
    /// before it. Returns false if a value cannot start here (it is then skipped).
    fn before_value<S: Sink + ?Sized>(&mut self, sink: &mut S, at: u64) -> bool {
        match self.pos {
            Pos::Value => true,
            Pos::AfterKey => {
                self.commit_key(sink, None, at);
                true
            }
            Pos::AfterValue => match self.stack.last().map(|f| f.kind) {
                Some(Kind::Arr) => {
                    self.repair(RepairKind::MissingComma, at);
                    self.comma = Some(at);
                    self.pos = Pos::Value;
                    true
                }
                _ => false,
            },
            Pos::ObjKey | Pos::Done => false,
        }
    }

    /// Moves to key position in an object after a value, inserting a missing comma.
    fn before_key(&mut self, at: u64) -> bool {
        match self.pos {
            Pos::ObjKey => true,
            Pos::AfterValue if self.stack.last().map(|f| f.kind) == Some(Kind::Obj) => {
                self.repair(RepairKind::MissingComma, at);
                self.comma = Some(at);
                self.pos = Pos::ObjKey;
                true
            }
            _ => false,
        }
    }

    fn after_value(&mut self) {
        self.pos = if self.stack.is_empty() {
            Pos::Done
        } else {
            Pos::AfterValue
        };
    }

    fn open<S: Sink + ?Sized>(&mut self, b: u8, sink: &mut S) -> Step {
        if self.pos == Pos::ObjKey
            || (self.pos == Pos::AfterValue && self.stack.last().map(|f| f.kind) == Some(Kind::Obj))
        {
            // `{{"a": 1}}`: an opener where a key belongs.
            self.repair(RepairKind::StrayOpener, self.offset);
            if let Some(f) = self.stack.last_mut() {
                f.phantoms += 1;
            }
            return Step::Consumed(1);
        }
        if self.stack.len() >= self.max_depth {
            self.limited = true;
            self.repair(RepairKind::LimitExceeded, self.offset);
            return Step::Halt(0, Status::Limit);
        }
        if !self.before_value(sink, self.offset) {
            self.repair(RepairKind::TrailingGarbage, self.offset);
            return Step::Consumed(1);
        }
        self.begun = true;
        let (kind, vk, out) = match b {
            b'{' => (Kind::Obj, ValueKind::Object, b"{"),
            _ => (Kind::Arr, ValueKind::Array, b"["),
        };
        if b == b'(' {
            self.repair(RepairKind::SyntaxFix, self.offset);
        }
        self.flush_comma(sink);
        sink.mark(Mark::Begin(vk), self.offset);
        sink.write(out);
        self.stack.push(Frame {
            kind,
            tuple: b == b'(',
            phantoms: 0,
        });
        self.pos = if kind == Kind::Obj {
            Pos::ObjKey
        } else {
            Pos::Value
        };
        Step::Consumed(1)
    }

    fn close<S: Sink + ?Sized>(&mut self, b: u8, sink: &mut S) -> Step {
        let at = self.offset;
        let want = if b == b'}' { Kind::Obj } else { Kind::Arr };
        if let Some(top) = self.stack.last_mut() {
            if top.phantoms > 0 {
                top.phantoms -= 1;
                self.repairs.push(Repair {
                    kind: RepairKind::RedundantCloser,
                    offset: at,
                });
                return Step::Consumed(1);
            }
        }
        let Some(target) = self.stack.iter().rposition(|f| f.kind == want) else {
            self.repair(RepairKind::RedundantCloser, at);
            if self.stack.is_empty() && self.begun {
                self.pos = Pos::Done;
            }
            return Step::Consumed(1);
        };
        if b == b')' && !self.stack[target].tuple || b == b']' && self.stack[target].tuple {
            self.repair(RepairKind::SyntaxFix, at);
        }
        while self.stack.len() > target + 1 {
            self.repair(RepairKind::MismatchedCloser, at);
            self.close_top(sink);
        }
        self.close_top(sink);
        Step::Consumed(1)
    }

    /// Closes the innermost container, completing whatever member is unfinished.
    fn close_top<S: Sink + ?Sized>(&mut self, sink: &mut S) {
        let at = self.offset;
        let Some(frame) = self.stack.last().copied() else {
            return;
        };
        match self.pos {
            Pos::AfterKey => {
                self.repair(RepairKind::MissingValue, at);
                self.commit_key_silent(sink);
                self.scalar(sink, ValueKind::Literal, b"null");
            }
            Pos::Value if frame.kind == Kind::Obj && self.comma.is_none() => {
                self.repair(RepairKind::MissingValue, at);
                self.scalar(sink, ValueKind::Literal, b"null");
            }
            _ => {}
        }
        if self.comma.take().is_some() {
            self.repair(RepairKind::TrailingComma, at);
        }
        if !self.comma_ws.is_empty() {
            sink.write(&self.comma_ws);
            self.comma_ws.clear();
        }
        self.stack.pop();
        let (out, vk) = closer_of(frame.kind);
        sink.write(out);
        sink.mark(Mark::End(vk), self.offset);
        self.after_value();
    }

    /// Commits the pending key with a colon but no repair for it (the caller records one).
    fn commit_key_silent<S: Sink + ?Sized>(&mut self, sink: &mut S) {
        self.write_key(sink, self.offset);
    }

    fn comma<S: Sink + ?Sized>(&mut self, sink: &mut S) -> Step {
        let at = self.offset;
        match self.pos {
            Pos::AfterValue => {
                self.comma = Some(at);
                self.pos = match self.stack.last().map(|f| f.kind) {
                    Some(Kind::Obj) => Pos::ObjKey,
                    _ => Pos::Value,
                };
            }
            Pos::AfterKey => {
                // `{"a", "b": 1}`: a key without a value.
                self.repair(RepairKind::MissingValue, at);
                self.commit_key_silent(sink);
                self.scalar(sink, ValueKind::Literal, b"null");
                self.comma = Some(at);
                self.pos = Pos::ObjKey;
            }
            Pos::Value
                if self.stack.last().map(|f| f.kind) == Some(Kind::Obj) && self.comma.is_none() =>
            {
                // `{"a": , "b": 1}`: a missing value.
                self.repair(RepairKind::MissingValue, at);
                self.scalar(sink, ValueKind::Literal, b"null");
                self.comma = Some(at);
                self.pos = Pos::ObjKey;
            }
            _ => self.repair(RepairKind::ExtraComma, at),
        }
        Step::Consumed(1)
    }

    fn colon<S: Sink + ?Sized>(&mut self, b: u8, sink: &mut S) -> Step {
        if self.pos == Pos::AfterKey {
            if b == b'=' {
                self.repair(RepairKind::SyntaxFix, self.offset);
                self.commit_key_silent(sink);
            } else {
                self.commit_key(sink, Some(b':'), self.offset);
            }
        } else if b == b'=' && matches!(self.pos, Pos::Value | Pos::ObjKey | Pos::AfterValue) {
            // `=` outside a key: part of a bare token.
            return match self.begin_bare(&[], self.offset, sink) {
                Some(step) => step,
                None => Step::Consumed(0),
            };
        } else {
            self.repair(RepairKind::TrailingGarbage, self.offset);
        }
        Step::Consumed(1)
    }

    /// Writes a complete scalar value (with its marks).
    fn scalar<S: Sink + ?Sized>(&mut self, sink: &mut S, kind: ValueKind, text: &[u8]) {
        self.begun = true;
        self.flush_comma(sink);
        sink.mark(Mark::Begin(kind), self.offset);
        sink.write(text);
        sink.mark(Mark::End(kind), self.offset);
        self.after_value();
    }

    // ----- strings ------------------------------------------------------------

    fn begin_string<S: Sink + ?Sized>(&mut self, quote: Quote, at: u64, sink: &mut S) -> Step {
        let key = if self.stack.last().map(|f| f.kind) == Some(Kind::Obj)
            && matches!(self.pos, Pos::ObjKey | Pos::AfterValue)
        {
            if !self.before_key(at) {
                self.repair(RepairKind::TrailingGarbage, at);
                return Step::Consumed(1);
            }
            true
        } else {
            if !self.before_value(sink, at) {
                self.repair(RepairKind::TrailingGarbage, at);
                return Step::Consumed(1);
            }
            false
        };
        match quote {
            Quote::Double => {}
            Quote::Single => self.repair(RepairKind::SingleQuotes, at),
            Quote::SmartDouble | Quote::SmartSingle => self.repair(RepairKind::SmartQuotes, at),
        }
        self.begun = true;
        if key {
            self.key.clear();
            self.key.push(b'"');
            self.key_truncated = false;
            self.key_start = at;
        } else {
            self.flush_comma(sink);
            sink.mark(Mark::Begin(ValueKind::String), self.offset);
            sink.write(b"\"");
        }
        self.lex = Lex::Str(StrLex {
            quote,
            key,
            esc: Esc::None,
            quote_pending: false,
            newline: false,
            tail: false,
        });
        Step::Consumed(1)
    }

    /// Writes string output to the key buffer or the sink.
    #[inline]
    fn out<S: Sink + ?Sized>(&mut self, key: bool, sink: &mut S, bytes: &[u8]) {
        if key {
            if self.key_truncated {
                return;
            }
            let room = self.max_token.saturating_sub(self.key.len());
            if bytes.len() <= room {
                if self.key.capacity() == 0 {
                    // One allocation for the keys of this value (the buffer is reused).
                    self.key.reserve(bytes.len().max(32));
                }
                self.key.extend_from_slice(bytes);
                return;
            }
            // Keep the longest prefix that fits without splitting an escape
            // or a character: the same bytes whatever the chunking.
            let mut k = if bytes[0] == b'\\' { 0 } else { room };
            while k > 0 && k < bytes.len() && bytes[k] & 0xC0 == 0x80 {
                k -= 1;
            }
            self.key.extend_from_slice(&bytes[..k]);
            // Some escapes are written in two parts (a lone surrogate's
            // `\` and then its `\uD83D`): a first half left alone would
            // escape the key's closing quote.
            let backslashes = self.key.iter().rev().take_while(|&&c| c == b'\\').count();
            if backslashes % 2 == 1 {
                self.key.pop();
            }
            self.key_truncated = true;
            self.token_cut.get_or_insert(self.key_start);
            self.repairs.push(Repair {
                kind: RepairKind::LimitExceeded,
                offset: self.key_start,
            });
        } else {
            sink.write(bytes);
        }
    }

    fn lex_string<S: Sink + ?Sized>(&mut self, mut s: StrLex, input: &[u8], sink: &mut S) -> Step {
        if s.quote_pending {
            return self.after_quote(s, input, sink);
        }
        if s.tail {
            return self.string_tail(s, input, sink);
        }
        if self.utf8_len > 0 {
            return self.string_utf8(s, input, sink);
        }
        match s.esc {
            Esc::None => {}
            _ => return self.string_escape(s, input, sink),
        }
        // Fast path: copy a run of plain bytes.
        let b = input[0];
        if PLAIN[b as usize] && !self.is_closer_byte(s.quote, b) {
            // The run ends at the first byte that is not plain (`"` and
            // `\\` among them), or at a single quote's closer: nothing past
            // it is read, so a run cut short is not read again.
            let plain = plain_len(input);
            let plain = match s.quote {
                Quote::Single => memchr::memchr(b'\'', &input[..plain]).unwrap_or(plain),
                _ => plain,
            };
            if self.inline > 0 {
                self.inline = inline_depth(self.inline, &input[..plain]);
            }
            return self.content_run(s, &input[..plain], sink);
        }
        let at = self.offset;
        match b {
            b'\\' => {
                s.esc = Esc::Backslash;
                self.lex = Lex::Str(s);
                Step::Consumed(1)
            }
            b'"' if s.quote == Quote::Double => self.closing_quote(s, sink),
            b'\'' if s.quote == Quote::Single => self.closing_quote(s, sink),
            b'"' => {
                // A double quote inside a single-quoted or smart-quoted string.
                self.out(s.key, sink, b"\\\"");
                Step::Consumed(1)
            }
            b'\n' if self.stop_on_fence && !self.lt_once => Step::Halt(0, Status::Stop),
            0x00..=0x1F => {
                self.lt_once = false;
                self.repair(RepairKind::ControlCharacter, at);
                control_escape(b, |e| self.out(s.key, sink, e));
                Step::Consumed(1)
            }
            0x80..=0xFF => {
                let need = utf8_len(b);
                if need == 0 {
                    self.repair(RepairKind::InvalidUtf8, at);
                    self.out(s.key, sink, "\u{FFFD}".as_bytes());
                    return Step::Consumed(1);
                }
                // Fast path for a run of valid UTF-8 (and ASCII) without
                // specials, within a window: after an invalid byte (taken
                // alone) the next byte looks ahead again, so an unbounded
                // look would read a long run once per invalid byte in it.
                let input = &input[..input.len().min(UTF8_WINDOW)];
                let end = memchr::memchr3(b'"', b'\\', b'\'', input).unwrap_or(input.len());
                let run = &input[..end];
                let stop = run.iter().position(|&c| c < 0x20).unwrap_or(run.len());
                let run = &run[..stop];
                let valid = match std::str::from_utf8(run) {
                    Ok(_) => run.len(),
                    Err(e) => e.valid_up_to(),
                };
                let valid = if matches!(s.quote, Quote::SmartDouble | Quote::SmartSingle) {
                    // Stop before any smart closer inside the run.
                    smart_closer_at(&run[..valid], s.quote).unwrap_or(valid)
                } else {
                    valid
                };
                if valid > 0 {
                    if self.inline > 0 {
                        self.inline = inline_depth(self.inline, &run[..valid]);
                    }
                    return self.content_run(s, &run[..valid], sink);
                }
                self.utf8_len = 0;
                self.utf8_need = need as u8;
                self.utf8_at = at;
                self.string_utf8(s, input, sink)
            }
            _ => {
                // Plain byte that closes a smart string? (never: closers are multi-byte)
                self.out(s.key, sink, &[b]);
                Step::Consumed(1)
            }
        }
    }

    /// Writes `run`, string content read as it is, but for a `,` and
    /// blanks that end it in a string value where one may be held
    /// ([`StrLex::tail`]): those are held.
    #[inline]
    fn content_run<S: Sink + ?Sized>(&mut self, mut s: StrLex, run: &[u8], sink: &mut S) -> Step {
        let t = if self.may_hold_tail(s) {
            comma_tail(run, self.max_token)
        } else {
            0
        };
        let keep = run.len() - t;
        if keep > 0 {
            self.out(s.key, sink, &run[..keep]);
        }
        if t > 0 {
            self.str_tail.clear();
            self.str_tail.extend_from_slice(&run[keep..]);
            self.tail_at = self.offset + keep as u64;
            s.tail = true;
            self.lex = Lex::Str(s);
        }
        Step::Consumed(run.len())
    }

    /// A `,` ending the content of `s` may be held ([`StrLex::tail`]): in
    /// a double-quoted string value inside a container, outside an object
    /// literal written in it.
    #[inline]
    fn may_hold_tail(&self, s: StrLex) -> bool {
        !s.key && s.quote == Quote::Double && self.inline == 0 && !self.stack.is_empty()
    }

    /// Inside a string value after a held `,` and blanks ([`StrLex::tail`]):
    /// more blanks are held (up to `max_token` bytes in all, then all of
    /// them are content), the string's quote is held with them until what
    /// follows it decides ([`Repairer::after_quote`]), anything else makes
    /// them content.
    fn string_tail<S: Sink + ?Sized>(&mut self, mut s: StrLex, input: &[u8], sink: &mut S) -> Step {
        let b = input[0];
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => {
                let fence = self.stop_on_fence && !self.lt_once;
                if b == b'\n' && fence {
                    self.flush_tail(&mut s, sink);
                    return Step::Halt(0, Status::Stop);
                }
                // A line break the caller accepted (`lt_once`) is read once;
                // with a fence, the run ends before the next one.
                let from = usize::from(b == b'\n');
                let n = from
                    + input[from..]
                        .iter()
                        .position(|&c| !is_ws(c) || (c == b'\n' && self.stop_on_fence))
                        .unwrap_or(input.len() - from);
                if self.str_tail.len() + n > self.max_token {
                    self.flush_tail(&mut s, sink);
                    return Step::Consumed(0);
                }
                if input[..n].iter().any(|&c| c < 0x20) {
                    self.lt_once = false;
                }
                self.str_tail.extend_from_slice(&input[..n]);
                Step::Consumed(n)
            }
            b'"' => self.closing_quote(s, sink),
            _ => {
                self.flush_tail(&mut s, sink);
                Step::Consumed(0)
            }
        }
    }

    /// The held `,` and blanks ([`StrLex::tail`]) were content: written as
    /// the string's content (a raw line break or tab escaped, with the
    /// repair it gets anywhere in a string).
    fn flush_tail<S: Sink + ?Sized>(&mut self, s: &mut StrLex, sink: &mut S) {
        if !s.tail {
            return;
        }
        s.tail = false;
        let tail = std::mem::take(&mut self.str_tail);
        let mut from = 0;
        for (k, &c) in tail.iter().enumerate() {
            let esc: &[u8] = match c {
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                _ => continue,
            };
            self.out(false, sink, &tail[from..k]);
            self.repair(RepairKind::ControlCharacter, self.tail_at + k as u64);
            self.out(false, sink, esc);
            from = k + 1;
        }
        if from < tail.len() {
            self.out(false, sink, &tail[from..]);
        }
        self.str_tail = tail;
        self.str_tail.clear();
        self.lex = Lex::Str(*s);
    }

    /// The quote after a held `,` and blanks ([`StrLex::tail`]) is followed
    /// by neither a delimiter nor a next value (`{"a": "x, "b": 1}`): as
    /// jsonrepair reads it, the string was missing its closing quote before
    /// the comma, and the quote opens the next key or element. The string
    /// is closed there (a `missing_quote` repair at the comma), the comma
    /// and its blanks are read as structure, the quote begins a string
    /// whose content starts with the blanks after it; the current byte is
    /// read next, in that string.
    fn split_at_tail<S: Sink + ?Sized>(&mut self, s: StrLex, sink: &mut S) -> Step {
        let at = self.tail_at;
        let now = self.offset;
        let quote_at = now - self.quote_ws.len() as u64 - 1;
        self.repair(RepairKind::MissingQuote, at);
        self.lex = Lex::None;
        self.inline = 0;
        sink.write(b"\"");
        sink.mark(Mark::End(ValueKind::String), at);
        self.after_value();
        let tail = std::mem::take(&mut self.str_tail);
        self.offset = at;
        self.comma(sink);
        self.offset = at + 1;
        self.whitespace(&tail[1..], sink);
        self.str_tail = tail;
        self.str_tail.clear();
        self.offset = quote_at;
        let _ = s;
        let step = self.begin_string(Quote::Double, quote_at, sink);
        self.offset = now;
        if let (Step::Consumed(1), Lex::Str(t)) = (step, self.lex) {
            self.write_quote_ws(t.key, sink);
        }
        self.quote_ws.clear();
        Step::Consumed(0)
    }

    #[inline]
    fn is_closer_byte(&self, q: Quote, b: u8) -> bool {
        matches!((q, b), (Quote::Single, b'\''))
    }

    fn string_utf8<S: Sink + ?Sized>(&mut self, s: StrLex, input: &[u8], sink: &mut S) -> Step {
        let mut n = 0;
        while self.utf8_len < self.utf8_need && n < input.len() {
            let c = input[n];
            if self.utf8_len > 0 && (c & 0xC0) != 0x80 {
                break;
            }
            self.utf8[self.utf8_len as usize] = c;
            self.utf8_len += 1;
            n += 1;
        }
        if self.utf8_len < self.utf8_need && n == input.len() {
            return Step::Consumed(n);
        }
        let len = self.utf8_len as usize;
        let ch = self.utf8;
        self.utf8_len = 0;
        let c = &ch[..len];
        if len < self.utf8_need as usize || std::str::from_utf8(c).is_err() {
            self.repair(RepairKind::InvalidUtf8, self.utf8_at);
            self.out(s.key, sink, "\u{FFFD}".as_bytes());
            // The byte that broke the sequence (if any) is re-read.
            return Step::Consumed(n);
        }
        let closes = match s.quote {
            Quote::SmartDouble => matches!(c, [0xE2, 0x80, 0x9D | 0x9C]),
            Quote::SmartSingle => matches!(c, [0xE2, 0x80, 0x99]),
            _ => false,
        };
        if closes {
            return match self.closing_quote(s, sink) {
                Step::Consumed(_) => Step::Consumed(n),
                Step::Halt(_, st) => Step::Halt(n, st),
            };
        }
        self.out(s.key, sink, c);
        Step::Consumed(n)
    }

    fn closing_quote<S: Sink + ?Sized>(&mut self, mut s: StrLex, sink: &mut S) -> Step {
        if self.stack.is_empty() && !s.key {
            self.flush_tail(&mut s, sink);
            // A top-level string ends at its quote.
            self.end_string(s, sink);
            return Step::Consumed(1);
        }
        s.quote_pending = true;
        s.newline = false;
        self.quote_ws.clear();
        self.lex = Lex::Str(s);
        Step::Consumed(1)
    }

    fn end_string<S: Sink + ?Sized>(&mut self, s: StrLex, sink: &mut S) {
        self.lex = Lex::None;
        self.inline = 0;
        if s.key {
            self.key.push(b'"');
            self.key_len = self.key.len();
            self.pos = Pos::AfterKey;
        } else {
            sink.write(b"\"");
            sink.mark(Mark::End(ValueKind::String), self.offset);
            self.after_value();
        }
    }

    /// After a closing quote: does what follows continue the structure (the
    /// string ended) or not (the quote was content)?
    fn after_quote<S: Sink + ?Sized>(&mut self, mut s: StrLex, input: &[u8], sink: &mut S) -> Step {
        let b = input[0];
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => {
                let n = input.iter().position(|&c| !is_ws(c)).unwrap_or(input.len());
                let ws = &input[..n];
                if ws.iter().any(|&c| c == b'\n' || c == b'\r') {
                    s.newline = true;
                }
                if self.quote_ws.len() + n > self.max_token {
                    // An absurd run of whitespace after a quote: the string
                    // ended. The quote holds the run's first `max_token`
                    // blanks, however the run was split.
                    let fit = self.max_token - self.quote_ws.len();
                    self.quote_ws.extend_from_slice(&ws[..fit]);
                    self.close_pending_quote(s, sink);
                    return Step::Consumed(fit);
                }
                self.quote_ws.extend_from_slice(ws);
                self.lex = Lex::Str(s);
                Step::Consumed(n)
            }
            // A string value is never followed by a colon: the quote is
            // content (`"{"a": 1}"`, `"x, "b": 1"`), as are the quotes of
            // an object literal written in the string.
            b':' if !s.key && self.stack.last().is_some_and(|f| f.kind == Kind::Obj) => {
                self.quote_is_content(s, sink)
            }
            b',' | b'}' | b']' | b':' if self.inline > 0 => self.quote_is_content(s, sink),
            // A comment after the string and a blank (`"x" // note`,
            // `"x" /* … */`, `"x" # note`): the string ended. Without the
            // blank (`"and "/" or"`) the quote is content.
            b'/' | b'#' if self.inline == 0 && !self.quote_ws.is_empty() => {
                self.close_pending_quote(s, sink);
                Step::Consumed(0)
            }
            b',' | b'}' | b']' | b':' | b')' => {
                self.close_pending_quote(s, sink);
                Step::Consumed(0)
            }
            _ if s.key && !self.quote_ws.is_empty() => {
                // A key's quote followed by whitespace ends the key (`{"a" 1}`).
                self.close_pending_quote(s, sink);
                Step::Consumed(0)
            }
            b'"' | b'\'' if s.newline => {
                self.close_pending_quote(s, sink);
                Step::Consumed(0)
            }
            // The next value after the quote (another string or a number,
            // jsonrepair's rule): the string ended there and the comma
            // before that value is missing (`["a" 2]`, `{"a": "b" "c": 1}`).
            b'"' | b'0'..=b'9' if !s.key && self.inline == 0 && s.quote == Quote::Double => {
                self.close_pending_quote(s, sink);
                Step::Consumed(0)
            }
            b'<' if self.stop_on_lt => {
                self.close_pending_quote(s, sink);
                Step::Consumed(0)
            }
            // A closing fence, or prose after a blank line: the string ended.
            b'`' if self.stop_on_fence => {
                self.close_pending_quote(s, sink);
                Step::Consumed(0)
            }
            b'A'..=b'Z' | b'a'..=b'z' if self.stop_on_prose && holds_blank_line(&self.quote_ws) => {
                self.close_pending_quote(s, sink);
                Step::Consumed(0)
            }
            // After a held `,` and blanks: a missing closing quote before
            // the comma (jsonrepair's reading; its delimiters, a quote and
            // a digit end the string at the quote instead).
            _ if s.tail && !matches!(b, b'{' | b'[' | b'(' | b'+' | b'\\' | b'\'' | b'/') => {
                self.split_at_tail(s, sink)
            }
            _ => {
                if !s.key
                    && self.inline == 0
                    && self.quote_ws.is_empty()
                    && sink.last_byte() == Some(b'{')
                {
                    // `{"` inside a string value: an object literal begins.
                    self.inline = 1;
                }
                self.quote_is_content(s, sink)
            }
        }
    }

    /// Writes the blanks held after a pending quote as string content
    /// (line breaks and tabs escaped); they stay held (the caller clears).
    fn write_quote_ws<S: Sink + ?Sized>(&mut self, key: bool, sink: &mut S) {
        let ws = std::mem::take(&mut self.quote_ws);
        for &c in &ws {
            let e: &[u8] = match c {
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                _ => b" ",
            };
            self.out(key, sink, e);
        }
        self.quote_ws = ws;
    }

    /// The pending quote (and the blanks after it) was content.
    fn quote_is_content<S: Sink + ?Sized>(&mut self, mut s: StrLex, sink: &mut S) -> Step {
        self.flush_tail(&mut s, sink);
        self.repair(RepairKind::UnescapedQuote, self.offset);
        let q: &[u8] = match s.quote {
            Quote::Double => b"\\\"",
            Quote::Single => b"'",
            Quote::SmartDouble => "”".as_bytes(),
            Quote::SmartSingle => "’".as_bytes(),
        };
        self.out(s.key, sink, q);
        self.write_quote_ws(s.key, sink);
        self.quote_ws.clear();
        s.quote_pending = false;
        s.newline = false;
        self.lex = Lex::Str(s);
        Step::Consumed(0)
    }

    fn close_pending_quote<S: Sink + ?Sized>(&mut self, mut s: StrLex, sink: &mut S) {
        self.flush_tail(&mut s, sink);
        let ws = std::mem::take(&mut self.quote_ws);
        self.end_string(s, sink);
        if !ws.is_empty() {
            self.whitespace(&ws, sink);
        }
        self.quote_ws = ws;
        self.quote_ws.clear();
    }

    fn string_escape<S: Sink + ?Sized>(
        &mut self,
        mut s: StrLex,
        input: &[u8],
        sink: &mut S,
    ) -> Step {
        let b = input[0];
        let at = self.offset;
        match s.esc {
            Esc::Backslash => {
                s.esc = Esc::None;
                match b {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                        self.lex = Lex::Str(s);
                        self.out(s.key, sink, &[b'\\', b]);
                        Step::Consumed(1)
                    }
                    b'\'' => {
                        self.lex = Lex::Str(s);
                        if s.quote != Quote::Single {
                            self.repair(RepairKind::InvalidEscape, at);
                        }
                        self.out(s.key, sink, b"'");
                        Step::Consumed(1)
                    }
                    b'u' => {
                        s.esc = Esc::Unicode;
                        self.esc_buf.clear();
                        self.esc_buf.extend_from_slice(b"\\u");
                        self.lex = Lex::Str(s);
                        Step::Consumed(1)
                    }
                    _ => {
                        // Invalid escape: keep the backslash, re-read the byte as content.
                        self.repair(RepairKind::InvalidEscape, at - 1);
                        self.lex = Lex::Str(s);
                        self.out(s.key, sink, b"\\\\");
                        Step::Consumed(0)
                    }
                }
            }
            Esc::Unicode | Esc::LowSurrogate => {
                let low = s.esc == Esc::LowSurrogate;
                // esc_buf: `\uXXXX` (+ `\uXXXX` of the low half when `low`).
                let base = if low { 6 } else { 0 };
                let have = self.esc_buf.len() - base;
                let ok = match have {
                    0 => b == b'\\',
                    1 => b == b'u',
                    _ => b.is_ascii_hexdigit(),
                };
                if !ok {
                    return self.break_escape(s, sink);
                }
                self.esc_buf.push(b);
                if self.esc_buf.len() - base < 6 {
                    self.lex = Lex::Str(s);
                    return Step::Consumed(1);
                }
                let unit = hex4(&self.esc_buf[base + 2..base + 6]);
                if low {
                    if (0xDC00..0xE000).contains(&unit) {
                        let buf = std::mem::take(&mut self.esc_buf);
                        self.out(s.key, sink, &buf);
                        self.esc_buf = buf;
                        self.esc_buf.clear();
                        s.esc = Esc::None;
                        self.lex = Lex::Str(s);
                        return Step::Consumed(1);
                    }
                    // A high surrogate followed by another escape that is not a low half.
                    self.repair(RepairKind::LoneSurrogate, at);
                    let mut buf = std::mem::take(&mut self.esc_buf);
                    self.out(s.key, sink, b"\\");
                    self.out(s.key, sink, &buf[..6]);
                    // Re-read the second escape on its own.
                    let second: Vec<u8> = buf.drain(6..).collect();
                    self.esc_buf = buf;
                    self.esc_buf.clear();
                    self.esc_buf.extend_from_slice(&second);
                    s.esc = Esc::Unicode;
                    return self.finish_unicode(s, sink, 1);
                }
                self.finish_unicode(s, sink, 1)
            }
            Esc::None => Step::Consumed(0),
        }
    }

    /// `esc_buf` holds a complete `\uXXXX`: write it or wait for a low surrogate.
    fn finish_unicode<S: Sink + ?Sized>(
        &mut self,
        mut s: StrLex,
        sink: &mut S,
        consumed: usize,
    ) -> Step {
        let unit = hex4(&self.esc_buf[2..6]);
        if (0xD800..0xDC00).contains(&unit) {
            s.esc = Esc::LowSurrogate;
            self.lex = Lex::Str(s);
            return Step::Consumed(consumed);
        }
        if (0xDC00..0xE000).contains(&unit) {
            self.repair(RepairKind::LoneSurrogate, self.offset);
            self.out(s.key, sink, b"\\");
        }
        let buf = std::mem::take(&mut self.esc_buf);
        self.out(s.key, sink, &buf);
        self.esc_buf = buf;
        self.esc_buf.clear();
        s.esc = Esc::None;
        self.lex = Lex::Str(s);
        Step::Consumed(consumed)
    }

    /// An escape sequence broke off: write what was held as literal text (keeping
    /// its backslash) and re-read the current byte.
    fn break_escape<S: Sink + ?Sized>(&mut self, mut s: StrLex, sink: &mut S) -> Step {
        let at = self.offset;
        let buf = std::mem::take(&mut self.esc_buf);
        if s.esc == Esc::LowSurrogate {
            // The high surrogate stands alone.
            self.repair(RepairKind::LoneSurrogate, at);
            self.out(s.key, sink, b"\\");
            self.out(s.key, sink, &buf[..6]);
            let rest = &buf[6..];
            if !rest.is_empty() {
                // `\` or `\u12`: a broken second escape.
                self.repair(RepairKind::InvalidEscape, at);
                self.out(s.key, sink, b"\\");
                self.out(s.key, sink, rest);
            }
        } else {
            self.repair(RepairKind::InvalidEscape, at);
            self.out(s.key, sink, b"\\");
            self.out(s.key, sink, &buf);
        }
        self.esc_buf = buf;
        self.esc_buf.clear();
        s.esc = Esc::None;
        self.lex = Lex::Str(s);
        Step::Consumed(0)
    }

    /// Closes a string at the end of the input. Returns true if it was cut off.
    fn finish_string<S: Sink + ?Sized>(&mut self, mut s: StrLex, sink: &mut S) -> bool {
        let at = self.offset;
        if !s.quote_pending {
            // A `,` and blanks at the end of the input were content.
            self.flush_tail(&mut s, sink);
        }
        if s.quote_pending {
            self.close_pending_quote(s, sink);
            return false;
        }
        if self.utf8_len > 0 {
            self.utf8_len = 0;
            self.repair(RepairKind::TruncatedValue, at);
        }
        match s.esc {
            Esc::None | Esc::Backslash => {}
            Esc::Unicode => {}
            Esc::LowSurrogate => {
                // A high surrogate cut off before its low half: keep it as text.
                self.repair(RepairKind::LoneSurrogate, at);
                let buf = std::mem::take(&mut self.esc_buf);
                self.out(s.key, sink, b"\\");
                self.out(s.key, sink, &buf[..6]);
                self.esc_buf = buf;
            }
        }
        self.esc_buf.clear();
        let plain_key = || {
            !self
                .key
                .get(1..)
                .unwrap_or_default()
                .iter()
                .any(|b| matches!(b, b':' | b',' | b'{' | b'}' | b'[' | b']' | b'"' | b'\\'))
        };
        if s.key
            && (!self.document
                || self.key_truncated
                || s.esc != Esc::None
                || s.quote != Quote::Double
                || !plain_key())
        {
            // A key cut off at the end is dropped (always when the token
            // limit cut it, inside an escape, or when it holds what looks
            // like the structure it swallowed: `{"key:value}`).
            self.lex = Lex::None;
            self.key.clear();
            self.key_len = 0;
            self.repair(RepairKind::DroppedKey, at);
            return true;
        }
        if s.key {
            // A key cut off at the end is closed (`{"a": 1, "b` → `"b"`);
            // its value is then missing (see [`Repairer::finish`]).
            self.repair(RepairKind::UnclosedString, at);
            self.end_string(s, sink);
            return true;
        }
        self.repair(RepairKind::UnclosedString, at);
        self.end_string(s, sink);
        true
    }

    // ----- bare tokens ----------------------------------------------------------

    /// Starts a bare token with `prefix` already read (at `start`). Returns the
    /// step for the current byte, or None if the current byte is to be re-read.
    fn begin_bare<S: Sink + ?Sized>(
        &mut self,
        prefix: &[u8],
        start: u64,
        sink: &mut S,
    ) -> Option<Step> {
        let in_obj = self.stack.last().map(|f| f.kind) == Some(Kind::Obj);
        let key = in_obj && matches!(self.pos, Pos::ObjKey | Pos::AfterValue);
        if key {
            if !self.before_key(start) {
                self.lt_once = false;
                self.repair(RepairKind::TrailingGarbage, start);
                return Some(Step::Consumed(if prefix.is_empty() { 1 } else { 0 }));
            }
        } else if !self.before_value(sink, start) {
            self.lt_once = false;
            self.repair(RepairKind::TrailingGarbage, start);
            return Some(Step::Consumed(if prefix.is_empty() { 1 } else { 0 }));
        }
        self.begun = true;
        self.tok.clear();
        self.tok.extend_from_slice(prefix);
        self.tok_start = start;
        self.key_truncated = false;
        self.tok_ws.clear();
        self.lex = Lex::Bare(BareLex {
            key,
            streaming: false,
            ws_pending: false,
            numeric: prefix.iter().all(|&c| number_byte(c)),
        });
        if prefix.is_empty() {
            None
        } else {
            Some(Step::Consumed(0))
        }
    }

    fn lex_bare<S: Sink + ?Sized>(&mut self, mut t: BareLex, input: &[u8], sink: &mut S) -> Step {
        let b = input[0];
        let delimiter = if t.key {
            matches!(
                b,
                b':' | b'=' | b',' | b'}' | b']' | b'{' | b'[' | b'\n' | b'\r' | b'"'
            )
        } else {
            matches!(b, b',' | b'}' | b']' | b')' | b'\n' | b'\r')
        };
        if b == b'`' && self.stop_on_fence && !self.lt_once {
            // Maybe a closing fence: the caller looks (a backtick always
            // starts a step, so this is asked at the same byte however the
            // input was split), and if not, the token goes on with it.
            return Step::Halt(0, Status::Stop);
        }
        let ends = delimiter || (b == b'<' && self.stop_on_lt && !self.lt_once);
        if ends {
            self.end_bare(t, sink, false);
            return Step::Consumed(0);
        }
        self.lt_once = false;
        if b == b' ' || b == b'\t' {
            let n = input
                .iter()
                .position(|&c| c != b' ' && c != b'\t')
                .unwrap_or(input.len());
            if !t.streaming && !t.key && self.closed_shape() {
                // `1 2`, `true ]`: a number or literal ends at whitespace.
                self.end_bare(t, sink, false);
                return Step::Consumed(0);
            }
            t.ws_pending = true;
            self.hold_tok_ws(&input[..n]);
            self.lex = Lex::Bare(t);
            return Step::Consumed(n);
        }
        if b == b'/' && t.ws_pending {
            // `/` after blanks starts something new (a comment, or a path
            // read as the next token): decided without looking ahead, so the
            // result cannot depend on where the input was split.
            self.end_bare(t, sink, false);
            return Step::Consumed(0);
        }
        if t.ws_pending {
            // Whitespace inside an unquoted string: keep it.
            t.ws_pending = false;
            let ws = std::mem::take(&mut self.tok_ws);
            let streaming = t.streaming;
            self.bare_push(&mut t, &ws, sink);
            self.tok_ws = ws;
            self.tok_ws.clear();
            if t.streaming && !streaming {
                // The blanks made it an unquoted string (`t r`): the switch
                // and its mark end this step, before the byte after the
                // blanks, so a sink that halts on the mark halts at the same
                // byte however the input was split (the run below would end
                // at the chunk's end).
                self.lex = Lex::Bare(t);
                return Step::Consumed(0);
            }
        }
        if !t.streaming && !t.key {
            // Until the token is known to be an unquoted string, take it one
            // byte at a time: the switch (and its mark) then happens at the
            // same byte whatever the chunking. The bytes after it that keep
            // it a number or literal (`True`, `None`, `12`) join this step:
            // taking them changes nothing but the token.
            if matches!(b, b'"' | b'<' | b'/' | b'{' | b'[' | b':' | b'=') || !is_ws(b) {
                self.bare_push(&mut t, &input[..1], sink);
                let mut n = 1;
                if !t.streaming {
                    while n < input.len() && self.keeps_scalar(t.numeric, input[n]) {
                        self.tok.push(input[n]);
                        t.numeric &= number_byte(input[n]);
                        n += 1;
                    }
                }
                self.lex = Lex::Bare(t);
                return Step::Consumed(n);
            }
        }
        // Take a run of token bytes.
        let n = input
            .iter()
            .position(|&c| {
                matches!(
                    c,
                    b',' | b'}'
                        | b']'
                        | b')'
                        | b'\n'
                        | b'\r'
                        | b' '
                        | b'\t'
                        | b':'
                        | b'='
                        | b'"'
                        | b'<'
                        | b'/'
                        | b'{'
                        | b'['
                        | b'`'
                )
            })
            .unwrap_or(input.len())
            .max(1);
        self.bare_push(&mut t, &input[..n], sink);
        self.lex = Lex::Bare(t);
        Step::Consumed(n)
    }

    /// True when the held token (`numeric`: all number bytes) followed by
    /// `c` is still a number or a literal (what [`Repairer::bare_push`]
    /// keeps without writing).
    #[inline]
    fn keeps_scalar(&self, numeric: bool, c: u8) -> bool {
        let tok = &self.tok;
        (number_byte(c) && tok.len() < self.max_token && numeric)
            || (tok.len() < MAX_LITERAL
                && LITERALS.iter().any(|(l, _, _)| {
                    l.get(tok.len()) == Some(&c) && l.iter().zip(tok).all(|(a, b)| a == b)
                }))
    }

    /// Appends raw token bytes, switching to streaming once the token cannot be
    /// a number or a literal.
    fn bare_push<S: Sink + ?Sized>(&mut self, t: &mut BareLex, bytes: &[u8], sink: &mut S) {
        if t.streaming {
            // A UTF-8 character cut by the end of a chunk waits in `tok`.
            let mut joined = std::mem::take(&mut self.tok);
            let bytes = if joined.is_empty() {
                bytes
            } else {
                joined.extend_from_slice(bytes);
                &joined[..]
            };
            let keep = incomplete_utf8_tail(bytes);
            self.write_escaped(&bytes[..bytes.len() - keep], sink);
            let tail = bytes[bytes.len() - keep..].to_vec();
            self.tok = tail;
            return;
        }
        if t.key && self.key_truncated {
            // The rest of a key cut by the token limit is dropped.
            return;
        }
        self.tok.extend_from_slice(bytes);
        t.numeric = t.numeric && bytes.iter().all(|&c| number_byte(c));
        if t.key {
            if self.tok.len() > self.max_token {
                // Cut once, where the first `max_token` bytes end (however
                // they arrived), not inside a character.
                let k = self.max_token;
                self.tok.truncate(k - incomplete_utf8_tail(&self.tok[..k]));
                self.key_truncated = true;
                self.token_cut.get_or_insert(self.tok_start);
                self.repair(RepairKind::LimitExceeded, self.tok_start);
            }
            return;
        }
        let numeric = t.numeric;
        let literal = self.tok.len() <= MAX_LITERAL && literals_from(&self.tok).next().is_some();
        if (numeric && self.tok.len() <= self.max_token) || literal {
            return;
        }
        if numeric {
            self.token_cut.get_or_insert(self.tok_start);
            self.repair(RepairKind::LimitExceeded, self.tok_start);
        }
        // An unquoted string: write it as it arrives.
        self.repair(RepairKind::UnquotedString, self.tok_start);
        t.streaming = true;
        self.flush_comma(sink);
        sink.mark(Mark::Begin(ValueKind::String), self.offset);
        sink.write(b"\"");
        let tok = std::mem::take(&mut self.tok);
        let keep = incomplete_utf8_tail(&tok);
        self.write_escaped(&tok[..tok.len() - keep], sink);
        self.tok = tok[tok.len() - keep..].to_vec();
    }

    /// True when the held token is a complete number or literal (ends at whitespace).
    fn closed_shape(&self) -> bool {
        LITERALS.iter().any(|(l, _, _)| *l == &self.tok[..]) || is_json_number(&self.tok)
    }

    /// Writes raw bytes as JSON string content, escaping and validating UTF-8.
    fn write_escaped<S: Sink + ?Sized>(&mut self, bytes: &[u8], sink: &mut S) {
        let mut rest = bytes;
        while !rest.is_empty() {
            let plain = plain_len(rest);
            if plain > 0 {
                sink.write(&rest[..plain]);
                rest = &rest[plain..];
                continue;
            }
            let c = rest[0];
            match c {
                b'"' => sink.write(b"\\\""),
                b'\\' => sink.write(b"\\\\"),
                0x00..=0x1F => sink.write(&unicode_escape(c)),
                _ => {
                    match non_ascii_run(rest) {
                        (end, None) => {
                            sink.write(&rest[..end]);
                            rest = &rest[end..];
                        }
                        (end, Some(e)) => {
                            let v = e.valid_up_to();
                            sink.write(&rest[..v]);
                            if e.error_len().is_none()
                                && end == UTF8_WINDOW
                                && end < rest.len()
                                && v > 0
                            {
                                // The window cut a character: read it whole next.
                                rest = &rest[v..];
                                continue;
                            }
                            sink.write("\u{FFFD}".as_bytes());
                            self.repairs.push(Repair {
                                kind: RepairKind::InvalidUtf8,
                                offset: self.tok_start,
                            });
                            rest = &rest[v + e.error_len().unwrap_or(end - v).max(1)..];
                        }
                    }
                    continue;
                }
            }
            rest = &rest[1..];
        }
    }

    /// Ends a bare token and writes it as a literal, number or string.
    fn end_bare<S: Sink + ?Sized>(&mut self, t: BareLex, sink: &mut S, eof: bool) {
        self.lex = Lex::None;
        let start = self.tok_start;
        if t.key && is_ellipsis(&self.tok) && (self.document || self.comma.is_some()) {
            // `{"a": 1, ...}`: an ellipsis for omitted members is dropped
            // (with the comma before it, as a trailing one).
            self.repair(RepairKind::Ellipsis, start);
            self.tok.clear();
            self.tok_ws.clear();
            self.pos = Pos::ObjKey;
            return;
        }
        if t.key {
            let tok = std::mem::take(&mut self.tok);
            self.repair(RepairKind::UnquotedKey, start);
            self.key.clear();
            self.key.push(b'"');
            let mut tmp = Vec::with_capacity(tok.len() + 2);
            self.write_escaped(&tok, &mut tmp);
            self.key.extend_from_slice(&tmp);
            self.key.push(b'"');
            self.key_len = self.key.len();
            self.tok = tok;
            self.tok.clear();
            self.tok_ws.clear();
            self.pos = Pos::AfterKey;
            if eof {
                self.key.clear();
                self.key_len = 0;
            }
            return;
        }
        let ws = std::mem::take(&mut self.tok_ws);
        if t.streaming {
            let tail = std::mem::take(&mut self.tok);
            self.write_escaped(&tail, sink);
            sink.write(b"\"");
            sink.mark(Mark::End(ValueKind::String), self.offset);
            self.after_value();
        } else {
            let tok = std::mem::take(&mut self.tok);
            self.bare_value(&tok, sink, eof);
            self.tok = tok;
            self.tok.clear();
        }
        if !ws.is_empty() {
            self.whitespace(&ws, sink);
        }
        self.tok_ws = ws;
        self.tok_ws.clear();
    }

    /// A bare token that stands for no value was dropped: an object's
    /// member gets `null`, a top-level value is `null`, an array loses
    /// the item.
    fn no_value<S: Sink + ?Sized>(&mut self, sink: &mut S, start: u64) {
        if self.stack.last().map(|f| f.kind) == Some(Kind::Obj) && self.comma.is_none() {
            self.repair(RepairKind::MissingValue, start);
            self.scalar(sink, ValueKind::Literal, b"null");
        } else if self.stack.is_empty() {
            self.scalar(sink, ValueKind::Literal, b"null");
        }
    }

    /// Writes a token of number characters (no escaping needed) as a string.
    fn digits_as_string<S: Sink + ?Sized>(&mut self, sink: &mut S, tok: &[u8]) {
        let mut s = Vec::with_capacity(tok.len() + 2);
        s.push(b'"');
        s.extend_from_slice(tok);
        s.push(b'"');
        self.scalar(sink, ValueKind::String, &s);
    }

    fn bare_value<S: Sink + ?Sized>(&mut self, tok: &[u8], sink: &mut S, eof: bool) {
        let start = self.tok_start;
        if is_ellipsis(tok) {
            // `[1, 2, ...]`, `[1, …, 5]`: an ellipsis for omitted items is
            // dropped (as jsonrepair drops `...`).
            self.repair(RepairKind::Ellipsis, start);
            self.no_value(sink, start);
            return;
        }
        if let Some((_, out, repair)) = LITERALS
            .iter()
            .find(|(l, _, _)| l.first() == tok.first() && *l == tok)
        {
            if let Some(k) = repair {
                self.repair(*k, start);
            }
            let kind = ValueKind::Literal;
            self.scalar(sink, kind, out);
            return;
        }
        if is_json_number(tok) {
            self.scalar(sink, ValueKind::Number, tok);
            return;
        }
        if json_number_syntax(tok) {
            // `1e999`: a number no double holds; its text is kept as a string.
            self.repair(RepairKind::NonFiniteNumber, start);
            self.digits_as_string(sink, tok);
            return;
        }
        if eof && (tok.len() > 1 || tok.first().is_some_and(u8::is_ascii_alphabetic)) {
            if let Some((_, out, _)) = literals_from(tok).next() {
                self.repair(RepairKind::TruncatedValue, start);
                self.scalar(sink, ValueKind::Literal, out);
                return;
            }
        }
        if tok
            .iter()
            .all(|c| matches!(c, b'0'..=b'9' | b'+' | b'-' | b'.' | b'e' | b'E'))
        {
            match repair_number(tok, eof) {
                NumberFix::Number(n, kind) => {
                    self.repair(kind, start);
                    self.scalar(sink, ValueKind::Number, &n);
                    return;
                }
                NumberFix::LeadingZeros => {
                    self.repair(RepairKind::LeadingZeros, start);
                    self.digits_as_string(sink, tok);
                    return;
                }
                NumberFix::Nothing => {
                    // `.`, `-`, `+`: no value here (a stray dot or a cut-off sign).
                    self.repair(RepairKind::TrailingGarbage, start);
                    self.no_value(sink, start);
                    return;
                }
                NumberFix::NotANumber => {}
            }
        }
        self.repair(RepairKind::UnquotedString, start);
        let mut s = Vec::with_capacity(tok.len() + 2);
        s.push(b'"');
        self.write_escaped(tok, &mut s);
        s.push(b'"');
        self.scalar(sink, ValueKind::String, &s);
    }
}

enum Step {
    Consumed(usize),
    Halt(usize, Status),
}

fn closer_of(kind: Kind) -> (&'static [u8], ValueKind) {
    match kind {
        Kind::Obj => (b"}", ValueKind::Object),
        Kind::Arr => (b"]", ValueKind::Array),
    }
}

fn hex4(h: &[u8]) -> u32 {
    h.iter().fold(0u32, |acc, &c| {
        acc * 16
            + match c {
                b'0'..=b'9' => u32::from(c - b'0'),
                b'a'..=b'f' => u32::from(c - b'a' + 10),
                _ => u32::from(c - b'A' + 10),
            }
    })
}

/// Position of the first smart closer of `q` in a valid UTF-8 run.
fn smart_closer_at(run: &[u8], q: Quote) -> Option<usize> {
    let mut from = 0;
    while let Some(p) = memchr::memchr(0xE2, &run[from..]) {
        let i = from + p;
        if let [0x80, c, ..] = run[i + 1..] {
            let hit = match q {
                Quote::SmartDouble => c == 0x9D || c == 0x9C,
                _ => c == 0x99,
            };
            if hit {
                return Some(i);
            }
        }
        from = i + 1;
    }
    None
}

/// Length of an incomplete UTF-8 sequence at the end of `b` (0 when it ends
/// on a character boundary or with bytes that can never be completed).
pub(crate) fn incomplete_utf8_tail(b: &[u8]) -> usize {
    for back in 1..=b.len().min(3) {
        let c = b[b.len() - back];
        if c & 0xC0 == 0x80 {
            continue;
        }
        let need = utf8_len(c);
        return if back < need { back } else { 0 };
    }
    0
}

/// True if `s` is a number in JSON's grammar.
pub(crate) fn is_json_number(s: &[u8]) -> bool {
    json_number_syntax(s) && fits_f64(s)
}

/// `s` is a JSON number by the grammar (whatever its magnitude).
fn json_number_syntax(s: &[u8]) -> bool {
    let mut i = 0;
    if s.first() == Some(&b'-') {
        i += 1;
    }
    match s.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while s.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        _ => return false,
    }
    if s.get(i) == Some(&b'.') {
        i += 1;
        if !s.get(i).is_some_and(u8::is_ascii_digit) {
            return false;
        }
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !s.get(i).is_some_and(u8::is_ascii_digit) {
            return false;
        }
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    i == s.len()
}

/// A JSON number serde_json accepts: its value is a finite double (`1e999`
/// and 400-digit integers overflow and are rejected as "number out of
/// range"). Short plain numbers are accepted without parsing.
pub(crate) fn fits_f64(s: &[u8]) -> bool {
    if s.len() <= 300 && !s.iter().any(|b| matches!(b, b'e' | b'E')) {
        return true;
    }
    std::str::from_utf8(s)
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .is_some_and(f64::is_finite)
}

enum NumberFix {
    Number(Vec<u8>, RepairKind),
    LeadingZeros,
    Nothing,
    NotANumber,
}

/// An ellipsis written for omitted items or members: `...` (two dots or
/// more) or `…`.
fn is_ellipsis(tok: &[u8]) -> bool {
    tok == "\u{2026}".as_bytes() || (tok.len() >= 2 && tok.iter().all(|&c| c == b'.'))
}

/// Repairs a token made of number characters that is not a JSON number.
fn repair_number(tok: &[u8], eof: bool) -> NumberFix {
    let (neg, body) = match tok.first() {
        Some(b'-') => (true, &tok[1..]),
        Some(b'+') => (false, &tok[1..]),
        _ => (false, tok),
    };
    if !body.iter().any(u8::is_ascii_digit) {
        return if body.iter().all(|&c| c == b'.') || body.is_empty() {
            NumberFix::Nothing
        } else {
            NumberFix::NotANumber
        };
    }
    // Split mantissa / exponent.
    let epos = body.iter().position(|&c| c == b'e' || c == b'E');
    let (mant, exp) = match epos {
        Some(p) => (&body[..p], Some(&body[p + 1..])),
        None => (body, None),
    };
    let dot = mant.iter().position(|&c| c == b'.');
    let (int, frac) = match dot {
        Some(p) => (&mant[..p], Some(&mant[p + 1..])),
        None => (mant, None),
    };
    if !int.iter().all(u8::is_ascii_digit)
        || frac.is_some_and(|f| !f.iter().all(u8::is_ascii_digit))
    {
        return NumberFix::NotANumber;
    }
    if int.len() > 1 && int[0] == b'0' {
        return NumberFix::LeadingZeros;
    }
    let exp_ok = match exp {
        None => None,
        Some(e) => {
            let digits = e
                .strip_prefix(b"+")
                .or_else(|| e.strip_prefix(b"-"))
                .unwrap_or(e);
            if digits.is_empty() {
                Some(false)
            } else if digits.iter().all(u8::is_ascii_digit) {
                Some(true)
            } else {
                return NumberFix::NotANumber;
            }
        }
    };
    let mut out = Vec::with_capacity(tok.len() + 2);
    if neg {
        out.push(b'-');
    }
    if int.is_empty() {
        out.push(b'0');
    } else {
        out.extend_from_slice(int);
    }
    if let Some(f) = frac {
        if !f.is_empty() {
            out.push(b'.');
            out.extend_from_slice(f);
        } else if !eof && exp.is_none() {
            // `1.` mid-stream: a float was meant.
            out.extend_from_slice(b".0");
        }
    }
    if exp_ok == Some(true) {
        out.push(b'e');
        out.extend_from_slice(exp.unwrap_or_default());
    }
    let kind = if eof && (exp_ok == Some(false) || frac.is_some_and(<[u8]>::is_empty)) {
        RepairKind::TruncatedValue
    } else {
        RepairKind::NumberFormat
    };
    if is_json_number(&out) {
        NumberFix::Number(out, kind)
    } else {
        NumberFix::NotANumber
    }
}
