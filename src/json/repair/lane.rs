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
//! The byte loop is a table: a byte's class ([`CLASS`]) and the lane's state
//! pick the next state and, for the few bytes where something happens (a
//! unit begins or ends, a container opens or closes, a character's last
//! byte), an action ([`TABLE`]). The bytes of a held unit are counted
//! against the token limit from where they sit in the buffer, where the
//! unit ends and where the chunk does.
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
//!
//! The streaming fast path for call values (`dialect::fastcall::Stream`),
//! which reads a well-formed value without the repairer, arms the lane
//! too ([`Lane::arm_stream`]): with the state the repairer would be in
//! after the value's bytes so far (the envelope's object, the arguments'
//! containers, inside a string value or after a value), and it takes the
//! value back where the lane stops ([`Lane::disarm_stream`]).

use super::fast::{content_len, number_len, str_chunk};
use super::{
    comma_tail, fits_f64, plain_word, Esc, Frame, Kind, Lex, Pos, Quote, Repairer, StrLex,
};

/// The lane's states: where it is inside the current unit. A state is a
/// row of [`TABLE`]; [`Lane::feed`] moves between them a byte at a time.
mod st {
    /// In structural position, nothing held (a commit point): where a
    /// value may begin.
    pub(super) const CLEAN_V: u8 = 0;
    /// Where a key (or an object's end) may begin.
    pub(super) const CLEAN_K: u8 = 1;
    /// After a value: where a comma or a closer may come.
    pub(super) const CLEAN_A: u8 = 2;
    /// A comma (and blanks) held until the next element begins.
    pub(super) const COMMA_V: u8 = 3;
    /// A comma (and blanks) held until the next member's key begins.
    pub(super) const COMMA_K: u8 = 4;
    /// Inside a string value's content (a commit point).
    pub(super) const STR: u8 = 5;
    /// After a backslash.
    pub(super) const STR_ESC: u8 = 6;
    /// After `\u` and 0..=3 hex digits: `STR_U0 + digits`.
    pub(super) const STR_U0: u8 = 7;
    /// Inside a UTF-8 character, 1..=3 continuation bytes to come:
    /// `STR_C1 - 1 + to come`.
    pub(super) const STR_C1: u8 = 11;
    /// The string states, for a key: `KEY + (s - STR)` (a key is held
    /// whole, from its opening quote to its colon).
    pub(super) const KEY: u8 = 14;
    /// A string value's closing quote (and blanks) held: it ends the
    /// string if `,` `}` or `]` follows.
    pub(super) const VAL_QUOTE: u8 = 23;
    /// A key's closing quote (and blanks) held until its colon.
    pub(super) const KEY_QUOTE: u8 = 24;
    /// A number or literal held until the byte after it.
    pub(super) const SCALAR: u8 = 25;
    /// A `,` and spaces at the end of a string value's content, held: the
    /// string may have been meant to end before the comma (see
    /// `StrLex::tail`); the lane stops if a quote follows them. Entered
    /// without an action (a comma is common in prose): the commit point
    /// before the comma is found when the lane stops or the chunk ends in
    /// this state ([`super::Lane::comma_hold`]).
    pub(super) const STR_COMMA: u8 = 26;
    /// Number of states.
    pub(super) const N: usize = 27;
    const _: () = assert!(N <= 32);
}

/// Byte classes: the bytes each state tells apart (see [`CLASS`]).
mod cls {
    /// Printable ASCII with no other role here (and DEL).
    pub(super) const OTHER: u8 = 0;
    pub(super) const SPACE: u8 = 1;
    /// `\t` `\n` `\r`: blanks, but control characters in a string.
    pub(super) const TNR: u8 = 2;
    /// The other control characters.
    pub(super) const CTRL: u8 = 3;
    pub(super) const QUOTE: u8 = 4;
    pub(super) const BACKSLASH: u8 = 5;
    pub(super) const COLON: u8 = 6;
    pub(super) const COMMA: u8 = 7;
    pub(super) const LBRACE: u8 = 8;
    pub(super) const LBRACKET: u8 = 9;
    pub(super) const RBRACE: u8 = 10;
    pub(super) const RBRACKET: u8 = 11;
    /// `0`-`9`: begins and continues a scalar; a hex digit.
    pub(super) const DIGIT: u8 = 12;
    /// `-`: begins and continues a scalar.
    pub(super) const MINUS: u8 = 13;
    /// `t`: begins a scalar (`true`); an escape.
    pub(super) const T: u8 = 14;
    /// `f`: begins a scalar (`false`); a hex digit; an escape.
    pub(super) const F: u8 = 15;
    /// `n`: begins a scalar (`null`); an escape.
    pub(super) const N: u8 = 16;
    /// `b`: continues a scalar; a hex digit; an escape.
    pub(super) const B: u8 = 17;
    /// `r`: continues a scalar; an escape.
    pub(super) const R: u8 = 18;
    /// `u`: continues a scalar; begins a `\u` escape.
    pub(super) const U: u8 = 19;
    /// `a` `c` `d` `e` `A`-`F`: continue a scalar; hex digits.
    pub(super) const HEX: u8 = 20;
    /// The other letters: continue a scalar.
    pub(super) const ALPHA: u8 = 21;
    /// `.` `+`: continue a scalar.
    pub(super) const DOT_PLUS: u8 = 22;
    /// `/`: an escape.
    pub(super) const SLASH: u8 = 23;
    /// Leading bytes of 2-, 3- and 4-byte UTF-8 characters.
    pub(super) const LEAD2: u8 = 24;
    pub(super) const LEAD3: u8 = 25;
    pub(super) const LEAD4: u8 = 26;
    /// `0x80`-`0xBF`.
    pub(super) const CONT: u8 = 27;
    /// Bytes that are never UTF-8: `0xC0` `0xC1` `0xF5`-`0xFF`.
    pub(super) const BAD: u8 = 28;
    /// Number of classes.
    pub(super) const N_CLASSES: usize = 29;
    const _: () = assert!(N_CLASSES <= 32);
}

/// What a byte does besides moving to the next state: [`TABLE`]'s entries
/// are `action << 8 | next state`, and an entry below 256 is a byte that is
/// only read (held, or plain content).
mod act {
    /// Not the lane's: stop before the byte.
    pub(super) const STOP: u8 = 1;
    /// `{` / `[` at a value's place.
    pub(super) const OPEN_OBJ: u8 = 2;
    pub(super) const OPEN_ARR: u8 = 3;
    /// `}` / `]` where the fast path would close the container.
    pub(super) const CLOSE_OBJ: u8 = 4;
    pub(super) const CLOSE_ARR: u8 = 5;
    /// A string value's opening quote, in structural position.
    pub(super) const ENTER_STR: u8 = 6;
    /// A number or literal begins (held from here).
    pub(super) const SCALAR: u8 = 7;
    /// A key's opening quote (held from here).
    pub(super) const KEY: u8 = 8;
    /// A comma after a value (held from here).
    pub(super) const COMMA: u8 = 9;
    /// After a held comma: a string value, a container, a scalar, a key.
    pub(super) const COMMA_STR: u8 = 10;
    pub(super) const COMMA_OBJ: u8 = 11;
    pub(super) const COMMA_ARR: u8 = 12;
    pub(super) const COMMA_SCALAR: u8 = 13;
    pub(super) const COMMA_KEY: u8 = 14;
    /// A string value's closing quote (held from here).
    pub(super) const STR_QUOTE: u8 = 15;
    /// A backslash or a UTF-8 leading byte in a string value (held).
    pub(super) const STR_CHAR: u8 = 16;
    /// The last byte of an escape, a `\u` escape, a UTF-8 character in a
    /// string value: committed through it.
    pub(super) const STR_END: u8 = 17;
    pub(super) const STR_END_HEX: u8 = 18;
    pub(super) const STR_END_UTF8: u8 = 19;
    /// A backslash or a UTF-8 leading byte in a key.
    pub(super) const KEY_CHAR: u8 = 20;
    /// The last byte of a `\u` escape or a UTF-8 character in a key.
    pub(super) const KEY_END_HEX: u8 = 21;
    pub(super) const KEY_END_UTF8: u8 = 22;
    /// A key's closing quote.
    pub(super) const KEY_QUOTE: u8 = 23;
    /// The byte after a string value's held closing quote (`,` `}` `]`:
    /// committed up to it, and read again in [`super::st::CLEAN_A`]).
    pub(super) const VAL_QUOTE_END: u8 = 24;
    /// A key's colon.
    pub(super) const COLON: u8 = 25;
    /// The byte after a held scalar (read again in [`super::st::CLEAN_A`]).
    pub(super) const SCALAR_END: u8 = 26;
}

/// The class of every byte.
static CLASS: [u8; 256] = classes();

const fn classes() -> [u8; 256] {
    let mut t = [cls::OTHER; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = match c {
            b' ' => cls::SPACE,
            b'\t' | b'\n' | b'\r' => cls::TNR,
            0..=0x1F => cls::CTRL,
            b'"' => cls::QUOTE,
            b'\\' => cls::BACKSLASH,
            b':' => cls::COLON,
            b',' => cls::COMMA,
            b'{' => cls::LBRACE,
            b'[' => cls::LBRACKET,
            b'}' => cls::RBRACE,
            b']' => cls::RBRACKET,
            b'0'..=b'9' => cls::DIGIT,
            b'-' => cls::MINUS,
            b't' => cls::T,
            b'f' => cls::F,
            b'n' => cls::N,
            b'b' => cls::B,
            b'r' => cls::R,
            b'u' => cls::U,
            b'a' | b'c' | b'd' | b'e' | b'A'..=b'F' => cls::HEX,
            b'g'..=b'z' | b'G'..=b'Z' => cls::ALPHA,
            b'.' | b'+' => cls::DOT_PLUS,
            b'/' => cls::SLASH,
            0xC2..=0xDF => cls::LEAD2,
            0xE0..=0xEF => cls::LEAD3,
            0xF0..=0xF4 => cls::LEAD4,
            0x80..=0xBF => cls::CONT,
            0xC0 | 0xC1 | 0xF5..=0xFF => cls::BAD,
            _ => cls::OTHER,
        };
        b += 1;
    }
    t
}

/// The lane's transitions: `TABLE[state][class]` (see [`act`]), in rows of
/// 32 so that no index needs a bounds check.
static TABLE: [[u16; 32]; 32] = transitions();

const fn transitions() -> [[u16; 32]; 32] {
    const fn go(action: u8, next: u8) -> u16 {
        (action as u16) << 8 | next as u16
    }
    const STOP: u16 = (act::STOP as u16) << 8;
    let mut t = [[STOP; 32]; 32];
    // Scalar starts and scalar bytes, escapes, hex digits.
    const STARTS: [u8; 5] = [cls::DIGIT, cls::MINUS, cls::T, cls::F, cls::N];
    const SCALAR_BYTES: [u8; 11] = [
        cls::DIGIT,
        cls::MINUS,
        cls::T,
        cls::F,
        cls::N,
        cls::B,
        cls::R,
        cls::U,
        cls::HEX,
        cls::ALPHA,
        cls::DOT_PLUS,
    ];
    const ESCAPES: [u8; 8] = [
        cls::QUOTE,
        cls::BACKSLASH,
        cls::SLASH,
        cls::B,
        cls::F,
        cls::N,
        cls::R,
        cls::T,
    ];
    const HEXES: [u8; 4] = [cls::DIGIT, cls::F, cls::B, cls::HEX];
    const BLANKS: [u8; 2] = [cls::SPACE, cls::TNR];
    // A string's sub-states, as offsets from `STR` (or `KEY`).
    const ESC: u8 = st::STR_ESC - st::STR;
    const U0: u8 = st::STR_U0 - st::STR;
    const C1: u8 = st::STR_C1 - st::STR;
    const _: () =
        assert!(st::KEY == st::STR_C1 + 3 && st::VAL_QUOTE == st::KEY + st::KEY - st::STR);

    // Blanks are read in structural position, and held after a comma or a
    // closing quote.
    let holding = [
        st::CLEAN_V,
        st::CLEAN_K,
        st::CLEAN_A,
        st::COMMA_V,
        st::COMMA_K,
        st::VAL_QUOTE,
        st::KEY_QUOTE,
    ];
    let mut k = 0;
    while k < holding.len() {
        let s = holding[k];
        t[s as usize][cls::SPACE as usize] = s as u16;
        t[s as usize][cls::TNR as usize] = s as u16;
        k += 1;
    }
    let mut k = 0;
    while k < STARTS.len() {
        let c = STARTS[k] as usize;
        t[st::CLEAN_V as usize][c] = go(act::SCALAR, st::SCALAR);
        t[st::COMMA_V as usize][c] = go(act::COMMA_SCALAR, st::SCALAR);
        k += 1;
    }
    // Structural position.
    let v = st::CLEAN_V as usize;
    t[v][cls::QUOTE as usize] = go(act::ENTER_STR, st::STR);
    t[v][cls::LBRACE as usize] = go(act::OPEN_OBJ, st::CLEAN_K);
    t[v][cls::LBRACKET as usize] = go(act::OPEN_ARR, st::CLEAN_V);
    t[v][cls::RBRACE as usize] = go(act::CLOSE_OBJ, st::CLEAN_A);
    t[v][cls::RBRACKET as usize] = go(act::CLOSE_ARR, st::CLEAN_A);
    let kk = st::CLEAN_K as usize;
    t[kk][cls::QUOTE as usize] = go(act::KEY, st::KEY);
    t[kk][cls::RBRACE as usize] = go(act::CLOSE_OBJ, st::CLEAN_A);
    t[kk][cls::RBRACKET as usize] = go(act::CLOSE_ARR, st::CLEAN_A);
    let a = st::CLEAN_A as usize;
    t[a][cls::COMMA as usize] = go(act::COMMA, st::COMMA_V);
    t[a][cls::RBRACE as usize] = go(act::CLOSE_OBJ, st::CLEAN_A);
    t[a][cls::RBRACKET as usize] = go(act::CLOSE_ARR, st::CLEAN_A);
    // After a comma.
    let cv = st::COMMA_V as usize;
    t[cv][cls::QUOTE as usize] = go(act::COMMA_STR, st::STR);
    t[cv][cls::LBRACE as usize] = go(act::COMMA_OBJ, st::CLEAN_K);
    t[cv][cls::LBRACKET as usize] = go(act::COMMA_ARR, st::CLEAN_V);
    t[st::COMMA_K as usize][cls::QUOTE as usize] = go(act::COMMA_KEY, st::KEY);
    // Strings: values and keys alike, but for what a character's end does.
    let mut key = 0;
    while key < 2 {
        let o = if key == 0 { st::STR } else { st::KEY };
        let s = o as usize;
        let mut c = 0;
        while c < cls::N_CLASSES {
            // Printable ASCII but `"` and `\` is plain content.
            let plain = c as u8 == cls::OTHER
                || c as u8 == cls::SPACE
                || (c as u8 >= cls::COLON && c as u8 <= cls::SLASH);
            if plain {
                t[s][c] = o as u16;
            }
            c += 1;
        }
        // A key's escapes and characters end without a commit (0: none).
        let (ch, end, end_hex, end_utf8) = if key == 0 {
            (
                act::STR_CHAR,
                act::STR_END,
                act::STR_END_HEX,
                act::STR_END_UTF8,
            )
        } else {
            (act::KEY_CHAR, 0, act::KEY_END_HEX, act::KEY_END_UTF8)
        };
        t[s][cls::QUOTE as usize] = if key == 0 {
            go(act::STR_QUOTE, st::VAL_QUOTE)
        } else {
            go(act::KEY_QUOTE, st::KEY_QUOTE)
        };
        t[s][cls::BACKSLASH as usize] = go(ch, o + ESC);
        t[s][cls::LEAD2 as usize] = go(ch, o + C1);
        t[s][cls::LEAD3 as usize] = go(ch, o + C1 + 1);
        t[s][cls::LEAD4 as usize] = go(ch, o + C1 + 2);
        let mut e = 0;
        while e < ESCAPES.len() {
            t[s + ESC as usize][ESCAPES[e] as usize] = go(end, o);
            e += 1;
        }
        t[s + ESC as usize][cls::U as usize] = (o + U0) as u16;
        let mut d = 0;
        while d < 4 {
            let mut h = 0;
            while h < HEXES.len() {
                t[s + U0 as usize + d][HEXES[h] as usize] = if d == 3 {
                    go(end_hex, o)
                } else {
                    (o + U0 + 1) as u16 + d as u16
                };
                h += 1;
            }
            d += 1;
        }
        let c1 = s + C1 as usize;
        t[c1][cls::CONT as usize] = go(end_utf8, o);
        t[c1 + 1][cls::CONT as usize] = (o + C1) as u16;
        t[c1 + 2][cls::CONT as usize] = (o + C1 + 1) as u16;
        key += 1;
    }
    // A `,` in a string value's content is held with the spaces after it:
    // plain content after them makes them content, a `,` is held anew,
    // anything else (a quote above all) is the repairer's.
    let sv = st::STR as usize;
    let scm = st::STR_COMMA as usize;
    t[sv][cls::COMMA as usize] = st::STR_COMMA as u16;
    let mut c = 0;
    while c < cls::N_CLASSES {
        if t[sv][c] == st::STR as u16 {
            t[scm][c] = st::STR as u16;
        }
        c += 1;
    }
    t[scm][cls::SPACE as usize] = st::STR_COMMA as u16;
    t[scm][cls::COMMA as usize] = st::STR_COMMA as u16;
    // After a closing quote.
    let vq = st::VAL_QUOTE as usize;
    t[vq][cls::COMMA as usize] = go(act::VAL_QUOTE_END, st::CLEAN_A);
    t[vq][cls::RBRACE as usize] = go(act::VAL_QUOTE_END, st::CLEAN_A);
    t[vq][cls::RBRACKET as usize] = go(act::VAL_QUOTE_END, st::CLEAN_A);
    t[st::KEY_QUOTE as usize][cls::COLON as usize] = go(act::COLON, st::CLEAN_V);
    // Scalars.
    let sc = st::SCALAR as usize;
    let mut k = 0;
    while k < SCALAR_BYTES.len() {
        t[sc][SCALAR_BYTES[k] as usize] = st::SCALAR as u16;
        k += 1;
    }
    let ends = [cls::COMMA, cls::RBRACE, cls::RBRACKET, BLANKS[0], BLANKS[1]];
    let mut k = 0;
    while k < ends.len() {
        t[sc][ends[k] as usize] = go(act::SCALAR_END, st::CLEAN_A);
        k += 1;
    }
    t
}

/// A commit point of the lane inside a call's arguments (see
/// [`Lane::arm_stream`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LaneAt {
    /// Inside a string value's content.
    Str,
    /// After an object's `{`: a key or its end.
    Key,
    /// After a key's `:` or an array's `[`: a value (or the array's end).
    Value,
    /// After a value: a comma or a closer.
    After,
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
    /// The state as read (ahead of the commit point while a unit is held).
    state: u8,
    /// The state at the last commit point, while a unit is held.
    cstate: u8,
    /// The repairer's position inside the string value being read.
    str_pos: Pos,
    /// Where in `out` the held unit's counted bytes begin: the blanks after
    /// a comma or a closing quote, a scalar's first byte.
    ustart: usize,
    /// Where in `out` the held key begins (its opening quote).
    kstart: usize,
    /// Where in `out` the escape or UTF-8 character being read begins.
    chstart: usize,
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
    /// The last chunk that began inside a string value was its content to
    /// the end (but for a character or an escape the end cut): a long
    /// string, whose next chunk is likely all content too. Which of two
    /// reads that agree goes first depends on it (see [`Lane::feed`]).
    runs_on: bool,
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
            state: st::CLEAN_V,
            cstate: st::CLEAN_V,
            str_pos: Pos::Value,
            ustart: 0,
            kstart: 0,
            chstart: 0,
            out: Vec::new(),
            committed: 0,
            emitted: 0,
            out_max: 0,
            held: Vec::new(),
            at0: 0,
            committed0: 0,
            index: 0,
            runs_on: false,
            at_end: false,
        }
    }
}

/// How many of the repairer's innermost containers the lane copies when
/// armed (it may close all but the outermost of them).
const STACK_COPY: usize = 32;

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
        let (state, str_pos) = match rep.lex {
            Lex::None => match rep.pos {
                Pos::Value => (st::CLEAN_V, Pos::Value),
                Pos::ObjKey => (st::CLEAN_K, Pos::Value),
                Pos::AfterValue => (st::CLEAN_A, Pos::Value),
                _ => return false,
            },
            Lex::Str(StrLex {
                quote: Quote::Double,
                key: false,
                esc: Esc::None,
                quote_pending: false,
                newline: false,
                tail: false,
            }) => (st::STR, rep.pos),
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
        self.state = state;
        self.str_pos = str_pos;
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

    /// Arms the lane on a value the streaming call path reads
    /// (`dialect::fastcall::Stream`), with no repairer behind it: the
    /// repairer would be, after the same bytes, in the plain state `at`
    /// inside the arguments (`{"name": …, "arguments": {…`), with `objs`'
    /// low `depth` bits the arguments' containers (set: an object; bit 0
    /// the innermost). `out` holds the value's bytes, all handed out, at
    /// absolute offset `out_at`; it may not grow past `out_max`. The lane
    /// never closes the arguments' object (it stops there, at their end),
    /// and opens no container deeper than `max_depth`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn arm_stream(
        &mut self,
        at: LaneAt,
        objs: u64,
        depth: usize,
        out: &mut Vec<u8>,
        out_at: u64,
        out_max: usize,
        limits: (usize, usize),
        index: usize,
    ) {
        debug_assert!(!self.armed && depth >= 1);
        let (max_depth, max_token) = limits;
        self.stack.clear();
        // The envelope's object, then the arguments' containers.
        self.stack.push(Kind::Obj);
        self.stack.extend((0..depth).rev().map(|k| {
            if objs >> k & 1 == 1 {
                Kind::Obj
            } else {
                Kind::Arr
            }
        }));
        let full = depth + 1;
        self.base = 0;
        self.low = full;
        self.depth0 = full;
        self.floor = 2;
        self.max_depth = max_depth.max(full);
        self.max_token = max_token;
        self.state = match at {
            LaneAt::Str => st::STR,
            LaneAt::Key => st::CLEAN_K,
            LaneAt::Value => st::CLEAN_V,
            LaneAt::After => st::CLEAN_A,
        };
        self.str_pos = Pos::Value;
        self.held.clear();
        self.committed = out.len();
        self.emitted = out.len();
        self.committed0 = out.len();
        self.out_max = out_max;
        self.at0 = out_at + out.len() as u64;
        self.index = index;
        std::mem::swap(&mut self.out, out);
        self.armed = true;
    }

    /// Disarms a lane armed by [`Lane::arm_stream`]: `out` gets the value's
    /// bytes back, through the last commit point (all of them handed out);
    /// returns where that point is and the arguments' containers there (as
    /// [`Lane::arm_stream`] takes them). Held bytes stay here (see
    /// [`Lane::take_held`]).
    pub(crate) fn disarm_stream(&mut self, out: &mut Vec<u8>) -> (LaneAt, u64, usize) {
        debug_assert!(self.armed && self.base == 0);
        let at = self.stop_here();
        let at = match at {
            st::STR => LaneAt::Str,
            st::CLEAN_K => LaneAt::Key,
            st::CLEAN_A => LaneAt::After,
            _ => LaneAt::Value,
        };
        let mut objs = 0u64;
        for k in &self.stack[1..] {
            objs = objs << 1 | u64::from(*k == Kind::Obj);
        }
        std::mem::swap(&mut self.out, out);
        (at, objs, self.stack.len() - 1)
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
        if self.state != st::STR || n > 8 || n == 0 || self.emitted != len || len + n > self.out_max
        {
            return None;
        }
        let w = crate::event::word(input);
        // A `,` and spaces that end the chunk are held (see
        // [`st::STR_COMMA`]): such a chunk goes the long way.
        if !plain_word(w, n) || comma_tail(input, usize::MAX) != 0 {
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
    ///
    /// A byte at a time through [`TABLE`]: most bytes only move the state,
    /// the others (where a unit begins or ends, a container, the last byte
    /// of a character) also do what their action says. The limit on a held
    /// unit's length (`max_token`) is checked where the unit ends and at the
    /// end of the chunk, so the lane holds no more than the repairer would;
    /// where inside a held unit it then stops does not change the output,
    /// as the held bytes are read again by the repairer.
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
        let mut s = self.state;
        let mut i = 0;
        if s == st::STR && n > 8 {
            // Inside a string value, nothing held: the common chunk of a
            // long string is all plain content, committed as it is.
            // Its content up to the next quote, control character or
            // backslash that is not a whole valid escape (the repairer's
            // scan: a valid escape passes through there too); a `,` and
            // spaces that end the run are read by the table (they are
            // held), as is what stopped it. A short chunk of a long string
            // is read in one pass ([`content_len`]), which answers the
            // common cases: all of it, or all but a character or an escape
            // cut by its end. In a short string, which ends in the chunk,
            // that pass would be read again by the scan: the scan goes
            // first there.
            let e = match self.runs_on.then(|| short_content(input)).flatten() {
                Some(e) => e,
                None => str_chunk(input, 0),
            };
            self.runs_on = e + 4 > n;
            let t = comma_tail(&input[..e], usize::MAX);
            if e == n && t == 0 {
                self.committed = base + n;
                return None;
            }
            i = e - t;
        } else if s == st::STR_COMMA {
            // A `,` (and spaces) that ended the last chunk is held.
            (s, i) = after_held_comma(input);
        }
        self.feed_table(input, base, s, i)
    }

    /// [`Lane::feed`]'s byte loop, from `input[i]` in state `s` (the chunk
    /// being at `out[base..]`). Out of line, so that the common chunk's
    /// test before it does not change how the loop is compiled.
    #[inline(never)]
    fn feed_table(&mut self, input: &[u8], base: usize, mut s: u8, mut i: usize) -> Option<usize> {
        let n = input.len();
        // The commit point in this chunk, if it moved (every commit in a
        // feed extends the one before).
        let mut upto = None;
        macro_rules! stop {
            () => {{
                self.state = s;
                return self.stop(base, i, upto);
            }};
        }
        // A commit point before `input[i]`, where a held unit begins.
        macro_rules! hold {
            () => {{
                upto = Some(i);
                self.cstate = s;
            }};
        }
        while i < n {
            let t = TABLE[s as usize & 31][CLASS[input[i] as usize] as usize & 31];
            if t < 256 {
                s = t as u8;
                i += 1;
                continue;
            }
            let next = t as u8;
            let at = base + i;
            match (t >> 8) as u8 {
                act::OPEN_OBJ | act::OPEN_ARR => {
                    if !self.open(next == st::CLEAN_K) {
                        stop!();
                    }
                }
                act::CLOSE_OBJ | act::CLOSE_ARR => {
                    if !self.close((t >> 8) as u8 == act::CLOSE_OBJ, s) {
                        stop!();
                    }
                }
                act::ENTER_STR => self.str_pos = Pos::Value,
                act::SCALAR => {
                    hold!();
                    self.ustart = at;
                }
                act::KEY => {
                    hold!();
                    self.kstart = at;
                }
                act::COMMA => {
                    hold!();
                    self.ustart = at + 1;
                    s = self.after_comma();
                    i += 1;
                    continue;
                }
                a @ (act::COMMA_STR
                | act::COMMA_OBJ
                | act::COMMA_ARR
                | act::COMMA_SCALAR
                | act::COMMA_KEY) => {
                    // The blanks after the comma.
                    if at - self.ustart > self.max_token {
                        stop!();
                    }
                    match a {
                        act::COMMA_STR => {
                            // A string value begins: the comma is written with it.
                            self.str_pos = Pos::Value;
                            upto = Some(i + 1);
                        }
                        act::COMMA_SCALAR => self.ustart = at,
                        act::COMMA_KEY => self.kstart = at,
                        _ => {
                            if !self.open(next == st::CLEAN_K) {
                                stop!();
                            }
                            upto = Some(i + 1);
                        }
                    }
                }
                act::STR_QUOTE => {
                    hold!();
                    self.ustart = at + 1;
                }
                act::STR_CHAR => {
                    hold!();
                    self.chstart = at;
                }
                act::KEY_CHAR => self.chstart = at,
                act::STR_END => upto = Some(i + 1),
                a @ (act::STR_END_HEX | act::KEY_END_HEX) => {
                    // Surrogates (paired or not) are the fast path's.
                    if self.surrogate(at) {
                        stop!();
                    }
                    if a == act::STR_END_HEX {
                        upto = Some(i + 1);
                    }
                }
                a @ (act::STR_END_UTF8 | act::KEY_END_UTF8) => {
                    if !utf8_char_ok(&self.out[self.chstart..=at]) {
                        stop!();
                    }
                    if a == act::STR_END_UTF8 {
                        upto = Some(i + 1);
                    }
                }
                act::KEY_QUOTE => {
                    // The key from its opening quote.
                    if at - self.kstart > self.max_token {
                        stop!();
                    }
                    self.ustart = at + 1;
                }
                act::COLON => {
                    if !self.key_fits(at) {
                        stop!();
                    }
                    upto = Some(i + 1);
                }
                act::VAL_QUOTE_END => {
                    // The string ended: the delimiter is read next.
                    if at - self.ustart > self.max_token {
                        stop!();
                    }
                    upto = Some(i);
                    s = next;
                    continue;
                }
                act::SCALAR_END => {
                    if at - self.ustart > self.max_token || !self.scalar_ok(at) {
                        stop!();
                    }
                    upto = Some(i);
                    s = next;
                    continue;
                }
                // `act::STOP`: a repair to make, markup, a control character …
                _ => stop!(),
            }
            s = next;
            i += 1;
            if s == st::STR && n - i > 8 {
                // (A string value that begins here is short as a rule: the
                // scan reads it first; one that goes on after a character
                // or an escape, the one pass.)
                let begins = matches!((t >> 8) as u8, act::ENTER_STR | act::COMMA_STR);
                // Into a string value with much of the chunk left: its plain
                // content up to the next quote, backslash or control
                // character (a SIMD search), its UTF-8 validated at once;
                // a `,` and spaces that end it are read by the table.
                i = skip_plain(input, i, !begins);
            }
        }
        self.state = s;
        if s == st::STR_COMMA {
            self.comma_hold(base, n, &mut upto);
        }
        if self.over_limit() {
            return self.stop(base, n, upto);
        }
        self.commit(base, if clean(s) { Some(n) } else { upto });
        None
    }

    /// In [`st::STR_COMMA`] before `input[i]` (the chunk being at
    /// `out[base..]`): the commit point moves to just before the held `,`
    /// when it is in this chunk (the content before it is committed, the
    /// unit held from it); when only spaces of this chunk are held, the
    /// comma came in an earlier chunk, whose end set the point already.
    /// Out of line: asked only where a chunk ends or the lane stops in
    /// that state.
    #[cold]
    #[inline(never)]
    fn comma_hold(&mut self, base: usize, i: usize, upto: &mut Option<usize>) {
        let input = &self.out[base..base + i];
        let spaces = input.iter().rev().take_while(|&&c| c == b' ').count();
        if let Some(k) = i.checked_sub(spaces + 1) {
            debug_assert_eq!(input[k], b',');
            *upto = Some(k);
            self.cstate = st::STR;
            self.ustart = base + k;
        }
    }

    /// Stops before `input[i]` (the chunk at `out[base..]`; `upto` as in
    /// [`Lane::commit`]): what was read is committed or held, the rest of the
    /// chunk is cut off again. Out of line: a stop ends the lane's run.
    #[cold]
    #[inline(never)]
    fn stop(&mut self, base: usize, i: usize, mut upto: Option<usize>) -> Option<usize> {
        if self.state == st::STR_COMMA {
            self.comma_hold(base, i, &mut upto);
        }
        self.at_end = self.state <= st::CLEAN_A
            && self.depth() <= self.floor
            && matches!(self.out.get(base + i), Some(b'}' | b']'));
        self.commit(base, if clean(self.state) { Some(i) } else { upto });
        self.out.truncate(base + i);
        Some(i)
    }

    /// The current depth.
    #[inline]
    fn depth(&self) -> usize {
        self.base + self.stack.len()
    }

    /// The state after a comma in the innermost container.
    #[inline]
    fn after_comma(&self) -> u8 {
        match self.stack.last() {
            Some(Kind::Obj) => st::COMMA_K,
            _ => st::COMMA_V,
        }
    }

    /// The held unit, read up to `out.len()`, is longer than the repairer
    /// holds one (`max_token`, counted as the repairer counts).
    fn over_limit(&self) -> bool {
        let len = self.out.len();
        match self.state {
            st::COMMA_V | st::COMMA_K | st::VAL_QUOTE | st::SCALAR | st::STR_COMMA => {
                len - self.ustart > self.max_token
            }
            st::KEY_QUOTE => !self.key_fits(len),
            s if (st::KEY..st::VAL_QUOTE).contains(&s) => len - self.kstart > self.max_token,
            _ => false,
        }
    }

    /// The held key, its closing quote and the blanks up to `out[end]`
    /// fit the limit as the repairer counts them: the closing quote is
    /// counted without a check, a blank after it with one.
    #[inline]
    fn key_fits(&self, end: usize) -> bool {
        let blanks = end - self.ustart;
        blanks == 0 || self.ustart - self.kstart + blanks <= self.max_token
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
    fn open(&mut self, obj: bool) -> bool {
        if self.depth() >= self.max_depth {
            return false;
        }
        self.stack.push(if obj { Kind::Obj } else { Kind::Arr });
        true
    }

    /// Closes the innermost container, read in state `s`, if the fast path
    /// would: above the floor, the right kind, after a value or in an empty
    /// container.
    fn close(&mut self, obj: bool, s: u8) -> bool {
        let (kind, empty) = if obj {
            (Kind::Obj, st::CLEAN_K)
        } else {
            (Kind::Arr, st::CLEAN_V)
        };
        if self.depth() <= self.floor
            || self.stack.last() != Some(&kind)
            || !(s == st::CLEAN_A || s == empty)
        {
            return false;
        }
        self.stack.pop();
        self.low = self.low.min(self.depth());
        true
    }

    /// The `\uXXXX` escape whose last digit is `out[last]` is a surrogate.
    fn surrogate(&self, last: usize) -> bool {
        let v = self.out[last - 3..=last]
            .iter()
            .fold(0, |v, &h| v << 4 | (h as char).to_digit(16).unwrap_or(0));
        (0xD800..=0xDFFF).contains(&v)
    }

    /// The held scalar, ending before `out[end]`, is a number or literal
    /// the fast path writes as it is.
    fn scalar_ok(&self, end: usize) -> bool {
        let s = &self.out[self.ustart..end];
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

    /// Marks the lane disarmed, splits off the held bytes and returns the
    /// state at the last commit point (what [`Lane::disarm`] and
    /// [`Lane::disarm_stream`] hand back).
    fn stop_here(&mut self) -> u8 {
        self.armed = false;
        self.split_held();
        if clean(self.state) {
            self.state
        } else {
            self.cstate
        }
    }

    /// Disarms the lane: `rep` gets the state of the last commit point, and
    /// `out` the arguments buffer. Returns the change in depth since the lane
    /// was armed (for the writer's count). Held bytes stay here (see
    /// [`Lane::take_held`]).
    pub(crate) fn disarm(&mut self, rep: &mut Repairer, out: &mut Vec<u8>) -> isize {
        debug_assert!(self.armed);
        let at = self.stop_here();
        let (pos, in_str) = match at {
            st::STR => (self.str_pos, true),
            st::CLEAN_K => (Pos::ObjKey, false),
            st::CLEAN_A => (Pos::AfterValue, false),
            _ => (Pos::Value, false),
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

/// Reads `input` from [`st::STR_COMMA`] while the state stays there or
/// moves without an action (more spaces and commas are held, plain content
/// makes them content); back in a string value, its plain content is
/// skipped as [`Lane::feed`]'s loop skips it. Returns the state and where
/// the loop goes on. Out of line: few chunks begin after a held comma.
#[cold]
#[inline(never)]
fn after_held_comma(input: &[u8]) -> (u8, usize) {
    let mut s = st::STR_COMMA;
    let mut i = 0;
    while i < input.len() && s == st::STR_COMMA {
        let t = TABLE[s as usize & 31][CLASS[input[i] as usize] as usize & 31];
        if t >= 256 {
            break;
        }
        s = t as u8;
        i += 1;
    }
    if s == st::STR && input.len() - i > 8 {
        i = skip_plain(input, i, true);
    }
    (s, i)
}

/// Where the table goes on inside a string value from `input[i]`: past its
/// plain content and valid escapes ([`str_chunk`], the repairer's scan; in
/// a `long` string first the one pass of [`content_len`]) but for a `,` and
/// spaces that end it (the table holds them). Out of line: the byte loop
/// stays small.
#[inline(never)]
fn skip_plain(input: &[u8], i: usize, long: bool) -> usize {
    let e = match long.then(|| short_content(&input[i..])).flatten() {
        Some(e) => i + e,
        None => str_chunk(input, i),
    };
    e - comma_tail(&input[i..e], usize::MAX)
}

/// The longest run [`short_content`] reads (longer ones go straight to
/// the SIMD search).
const SHORT_RUN_MAX: usize = 64;

/// [`content_len`] of `input` if it is at most [`SHORT_RUN_MAX`] bytes:
/// one pass with none of the scan's set-up.
#[inline(always)]
fn short_content(input: &[u8]) -> Option<usize> {
    if input.len() <= SHORT_RUN_MAX {
        content_len(input)
    } else {
        None
    }
}

/// The character `c` is valid UTF-8, given that the table read it as a
/// leading byte ([`cls::LEAD2`] to [`cls::LEAD4`]) and as many continuation
/// bytes as it calls for: then only an overlong form, a surrogate or a
/// code point past U+10FFFF is left to rule out, and each shows in the
/// first two bytes. (std's check of so short a slice costs about 200
/// instructions, and a line of text has a few such characters.)
#[inline]
fn utf8_char_ok(c: &[u8]) -> bool {
    let ok = match c {
        [0xE0, b, ..] => *b >= 0xA0,
        [0xED, b, ..] => *b < 0xA0,
        [0xF0, b, ..] => *b >= 0x90,
        [0xF4, b, ..] => *b < 0x90,
        _ => true,
    };
    debug_assert_eq!(ok, std::str::from_utf8(c).is_ok(), "{c:x?}");
    ok
}

/// A commit point: nothing held.
#[inline]
fn clean(s: u8) -> bool {
    s <= st::CLEAN_A || s == st::STR
}

/// Appends `bytes` to `out`: up to 16 bytes as one or two word stores, not
/// a call to `memcpy` (most chunks streamed are that short).
#[inline(always)]
fn append(out: &mut Vec<u8>, bytes: &[u8]) {
    let n = bytes.len();
    if n <= 8 {
        append_word(out, crate::event::word(bytes), n);
    } else if let (Some(head), Some(tail)) = (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        if let Some(last) = n.checked_sub(8).filter(|&k| k <= 8) {
            // The first and the last 8 bytes, overlapping in the middle,
            // stored as 16 (the bytes past `n` cut off again).
            let len = out.len();
            let mut pair = [0u8; 16];
            pair[..8].copy_from_slice(head);
            pair[last..last + 8].copy_from_slice(tail);
            out.extend_from_slice(&pair);
            out.truncate(len + n);
            return;
        }
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
    use super::super::plain_len;
    use super::*;

    /// Every character the table takes whole (a leading byte, then as many
    /// continuation bytes as it calls for) is judged as std judges it.
    #[test]
    fn utf8_char_ok_is_std_on_every_character_the_table_reads() {
        let cont = 0x80..=0xBFu8;
        for lead in 0xC2..=0xF4u8 {
            let more = match CLASS[lead as usize] {
                cls::LEAD2 => 1,
                cls::LEAD3 => 2,
                _ => 3,
            };
            for b in cont.clone() {
                for c in cont.clone() {
                    for d in cont.clone() {
                        let ch = &[lead, b, c, d][..=more];
                        assert_eq!(utf8_char_ok(ch), std::str::from_utf8(ch).is_ok(), "{ch:x?}");
                        if more < 3 {
                            break;
                        }
                    }
                    if more < 2 {
                        break;
                    }
                }
            }
        }
    }

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

    /// The lane reads `body` (after `prefix`) in `k`-byte chunks with a
    /// repairer bounded by `limits`, then hands over: the output is the
    /// repairer's for the whole input, and the lane never holds more than
    /// the limit allows (a comma and its blanks, then a key, each within
    /// it) and the chunk that passed it.
    fn same_as_bounded_repairer(
        limits: &crate::config::Limits,
        prefix: &[u8],
        body: &[u8],
        k: usize,
    ) {
        let mut rep = Repairer::with_limits(limits);
        let mut sink = Opaque(Vec::new());
        rep.feed(prefix, &mut sink);
        let mut out = sink.0;
        let mut lane = Lane::default();
        assert!(lane.arm(&mut rep, usize::MAX, &mut out, usize::MAX, 0));
        let mut end = body.len();
        let mut at = 0;
        for c in body.chunks(k) {
            let stop = lane.feed(c);
            assert!(
                lane.out.len() - lane.committed <= 2 * lane.max_token + 4 + k,
                "held {} bytes",
                lane.out.len() - lane.committed
            );
            if let Some(p) = stop {
                end = at + p;
                break;
            }
            at += c.len();
        }
        let held = lane.take_held();
        lane.disarm(&mut rep, &mut out);
        let mut sink = Opaque(out);
        rep.feed(&held, &mut sink);
        rep.feed(&body[end..], &mut sink);
        rep.finish(&mut sink);
        let mut whole = Opaque(Vec::new());
        let mut r = Repairer::with_limits(limits);
        r.feed(prefix, &mut whole);
        r.feed(body, &mut whole);
        r.finish(&mut whole);
        assert_eq!(
            String::from_utf8_lossy(&sink.0),
            String::from_utf8_lossy(&whole.0),
            "{} in {k}-byte chunks",
            String::from_utf8_lossy(body)
        );
    }

    #[test]
    fn held_units_are_bounded_as_the_repairer_bounds_them() {
        // The smallest token limit (16): keys, key quotes with blanks,
        // scalars, and blanks after a comma or a closing quote, each just
        // under, at and just over it, in every chunking up to 9 bytes.
        let limits = crate::config::Limits {
            max_token_bytes: 16,
            ..Default::default()
        };
        let mut cases: Vec<(&[u8], Vec<u8>)> = Vec::new();
        for len in 12..=19 {
            let word = "k".repeat(len);
            let blanks = " ".repeat(len);
            let digits = "7".repeat(len);
            let obj: &[u8] = b"{\"a\": {";
            let arr: &[u8] = b"{\"a\": [";
            cases.push((obj, format!("\"{word}\": 1, \"b\": 2}}").into_bytes()));
            cases.push((
                obj,
                format!("\"{}\"{blanks}: 1}}", &word[..len.min(14)]).into_bytes(),
            ));
            cases.push((obj, format!("\"k\"{blanks}: 1}}").into_bytes()));
            cases.push((obj, format!("\"b\": 1,{blanks}\"c\": 2}}").into_bytes()));
            cases.push((
                obj,
                format!("\"b\": \"x\"{blanks}, \"c\": 2}}").into_bytes(),
            ));
            cases.push((arr, format!("{digits}, 1]").into_bytes()));
            cases.push((
                arr,
                format!("1,{blanks}2,{blanks}\"s\",{blanks}[]]").into_bytes(),
            ));
            cases.push((
                obj,
                format!("\"\\u00e9{}\": 1}}", &word[..len - 6]).into_bytes(),
            ));
            cases.push((
                obj,
                format!("\"\u{e9}\u{1F600}{}\": 1}}", &word[..len - 6]).into_bytes(),
            ));
        }
        for (prefix, body) in &cases {
            for k in 1..=9 {
                same_as_bounded_repairer(&limits, prefix, body, k);
            }
        }
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
