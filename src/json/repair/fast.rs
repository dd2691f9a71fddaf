//! The repairer's fast path: runs of valid JSON inside a container whose
//! content the sink takes in bulk ([`Sink::opaque`]).
//!
//! The slow path looks at one token per step and holds back whatever is
//! ambiguous (a closing quote, a comma, a key, a bare token). The fast path
//! scans ahead instead: it reads *units* — blanks, an opener, a closer, a
//! member (`, "key" :`), a scalar value and the delimiter after it, a string
//! value and what follows its closing quote — and commits a unit only when
//! it is complete, is plain valid JSON that the slow path would copy through
//! unchanged (no repair), and ends in a state the slow path could be in
//! there. The committed bytes are then exactly the output the slow path would
//! write for them, and they are a slice of the input, written in one call.
//!
//! Four repairs have one outcome only, whatever follows, and small models
//! make them all the time: a single-quoted string of plain ASCII whose
//! closing quote is followed by `,` `}` `]` (a value) or `:` (a key), a
//! Python literal (`True` `False` `None`) followed by `,` `}` `]` or a blank,
//! an identifier key followed by its colon, and a comma before a closer. The
//! scanning loop stops on these units as on any other repair; they are then
//! rewritten out of the loop ([`Repairer::rewrite`],
//! [`Repairer::trailing_comma`]), so valid JSON pays nothing for them: the
//! input before the unit is written as it is, then the JSON the slow path
//! would write for it (`"…"`, `true`, `"key":`, nothing for the comma), with
//! the same repair at the same offset. A rewritten unit is committed at
//! once, so there is still nothing to undo.
//!
//! On anything else (a repair to make, a `<`, a unit longer than the limits
//! allow) the fast path stops at its last commit point and the slow path
//! takes the next byte; the fast path resumes when the slow path is back in
//! a plain state. So the output, the repairs and the state after each byte
//! do not depend on which path read it, and chunk invariance carries over.
//!
//! When the end of a chunk cuts a unit that may still turn out plain (a key,
//! a number or literal, a comma and blanks, a string's closing quote and
//! blanks, an escape or character cut in two: a [`Cut`]), the repairer keeps
//! the unit's bytes, at most `STASH_MAX` of them, and the fast path reads
//! them again with the start of the next chunk; the slow path would only
//! have held them. Small chunks (a token or two each, as model servers send
//! them) so stay on the fast path, and no byte is read more than
//! `STASH_MAX / chunk size` times.
//!
//! An opaque run may also close containers that were open when it began, as
//! many as the sink allows ([`Sink::opaque_closable`]: all but the ones whose
//! end it must see).
//!
//! Commit points: after an opener, after a member's `:`, after a value (a
//! closer, a scalar, or a string once the `,` `}` `]` after it is seen), after
//! blanks that no comma is holding, and inside a string value after any
//! complete character or escape. The stack only changes at commit points, so
//! stopping never has anything to undo.

use super::{
    comma_tail, single_quoted_len, Esc, Frame, Kind, Lex, Pos, Quote, Repairer, Sink, StrLex,
};
use crate::event::RepairKind;

/// A lookup table that is true for exactly the bytes in `bytes` (built at
/// compile time).
const fn byte_set(bytes: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut k = 0;
    while k < bytes.len() {
        t[bytes[k] as usize] = true;
        k += 1;
    }
    t
}

/// The bytes [`Repairer::fast`] reads in a structural position.
static STRUCTURAL: [bool; 256] = byte_set(b" \t\n\r\"',{[}]-0123456789tfnTFN");

/// The bytes after which a literal is complete (see [`scalar`]).
static ENDS_LITERAL: [bool; 256] = byte_set(b",}] \t\n\r");

impl Repairer {
    /// True when the fast path may start in the current state: inside a
    /// container, in a plain structural position, inside a double-quoted
    /// string value with nothing pending, or holding a unit the slow path
    /// began that the fast path can complete (see [`Repairer::resume`]).
    ///
    /// Resuming is only tried at the start of a chunk (`resume`): a unit the
    /// slow path took over within a chunk stays with it, so no byte is
    /// scanned again and again.
    #[inline]
    pub(super) fn fast_ready(&self, resume: bool) -> bool {
        if self.stack.is_empty() || self.lt_once || self.utf8_len != 0 {
            return false;
        }
        match self.lex {
            Lex::None => match self.pos {
                Pos::Value | Pos::ObjKey | Pos::AfterValue => true,
                Pos::AfterKey => resume,
                Pos::Done => false,
            },
            Lex::Str(s) => {
                s.quote == Quote::Double
                    && s.esc == Esc::None
                    && !s.tail
                    && self.inline == 0
                    && (resume || !(s.key || s.quote_pending))
            }
            Lex::Bare(t) => resume && !t.key && !t.streaming && !t.ws_pending,
            _ => false,
        }
    }

    /// False when the fast path would stop at once on `b`, the next byte:
    /// in a structural position (nothing held) it reads only blanks, quotes,
    /// a comma, brackets, numbers, literals and (at a key's place) a bare
    /// key. Saves its set-up before each of the slow path's other repairs.
    #[inline]
    pub(super) fn fast_may_read(&self, b: u8) -> bool {
        !(matches!(self.lex, Lex::None) && self.pos != Pos::AfterKey)
            || STRUCTURAL[b as usize]
            || (self.pos == Pos::ObjKey && (b.is_ascii_alphabetic() || b == b'_'))
    }

    /// Completes a unit the slow path began (a chunk ended inside it) when
    /// the input finishes it as plain valid JSON: a key (in its string,
    /// after its quote, or before its colon), the blanks after a string
    /// value's closing quote, a number or literal. Writes what the slow path
    /// held and returns the input bytes that complete the unit (they are
    /// written by the caller); None leaves everything to the slow path.
    #[inline(never)]
    fn resume<S: Sink + ?Sized>(&mut self, input: &[u8], sink: &mut S) -> Option<usize> {
        let n = input.len();
        let max_token = self.max_token;
        // The input blanks then `want` at the end of the unit.
        let ws_then = |from: usize, want: &[u8]| {
            let j = skip_ws(input, from);
            (j < n && want.contains(&input[j])).then_some(j)
        };
        match self.lex {
            Lex::None if self.pos == Pos::AfterKey => {
                // `"key"` (and blanks) held: blanks, then the colon.
                let j = ws_then(0, b":")?;
                if self.key.len() + j > max_token {
                    return None;
                }
                self.flush_comma(sink);
                sink.write(&self.key);
                self.key.clear();
                self.key_len = 0;
                self.pos = Pos::Value;
                Some(j + 1)
            }
            Lex::Str(s) if s.key => {
                if self.key_truncated {
                    return None;
                }
                let close = if s.quote_pending {
                    0
                } else {
                    let k = str_body(input, 0);
                    if k == n || input[k] != b'"' {
                        return None;
                    }
                    k + 1
                };
                let j = ws_then(close, b":")?;
                // The key, its quote, the blanks: within the token limit.
                if self.key.len() + self.quote_ws.len() + j + 1 > max_token {
                    return None;
                }
                self.flush_comma(sink);
                sink.write(&self.key);
                if s.quote_pending {
                    sink.write(b"\"");
                    sink.write(&self.quote_ws);
                    self.quote_ws.clear();
                }
                self.key.clear();
                self.key_len = 0;
                self.lex = Lex::None;
                self.pos = Pos::Value;
                Some(j + 1)
            }
            Lex::Str(s) if s.quote_pending => {
                // A string value's closing quote: it ends if `,` `}` `]` follows.
                let j = ws_then(0, b",}]")?;
                sink.write(b"\"");
                sink.write(&self.quote_ws);
                self.quote_ws.clear();
                self.lex = Lex::None;
                self.pos = Pos::AfterValue;
                Some(j)
            }
            Lex::Bare(_) => {
                // A number or literal: complete at a byte that ends it.
                if !self.tok_ws.is_empty() {
                    return None;
                }
                let j = input.iter().position(|&c| {
                    matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                })?;
                let held = self.tok.len();
                if held + j > max_token {
                    return None;
                }
                self.tok.extend_from_slice(&input[..j]);
                let ok = matches!(&self.tok[..], b"true" | b"false" | b"null")
                    || (number_len(&self.tok) == Some(self.tok.len())
                        && super::fits_f64(&self.tok));
                self.tok.truncate(held);
                if !ok {
                    return None;
                }
                self.flush_comma(sink);
                sink.write(&self.tok);
                self.tok.clear();
                self.lex = Lex::None;
                self.pos = Pos::AfterValue;
                Some(j)
            }
            _ => Some(0),
        }
    }

    /// Reads and writes a run of plain valid JSON from the start of `input`
    /// (see the module docs). Returns the bytes consumed (0 when the next byte
    /// is for the slow path) and whether the rest of `input` is a [`Cut`]
    /// unit. Call only when [`Repairer::fast_ready`] and the sink is
    /// [`Sink::opaque`].
    #[inline(always)]
    pub(super) fn fast<S: Sink + ?Sized>(&mut self, input: &[u8], sink: &mut S) -> (usize, Cut) {
        let held_unit = match self.lex {
            Lex::None => self.pos == Pos::AfterKey,
            Lex::Str(s) => s.key || s.quote_pending,
            _ => true,
        };
        let resumed = if held_unit {
            match self.resume(input, sink) {
                Some(n) => n,
                None => return (0, Cut::No),
            }
        } else {
            0
        };
        let n = input.len();
        // Containers open at the start may close here as far as the sink
        // allows, never the outermost one (its end ends the value).
        let start_depth = self.stack.len();
        // (Asked of the sink at the first closer of one: most runs have none.)
        let mut floor = None;
        let max_token = self.max_token;
        let held_comma = self.comma.is_some();
        let mut pos = self.pos;
        let mut in_str = matches!(self.lex, Lex::Str(_));
        // An uncommitted comma precedes `i` (held by the slow path, or read here).
        let mut comma = held_comma;
        // Blanks a comma may still hold (the slow path keeps at most `max_token`).
        let mut comma_room = max_token.saturating_sub(self.comma_ws.len());
        let mut i = resumed;
        // The last commit point and the state there.
        let mut commit = resumed;
        let mut c_pos = pos;
        let mut c_in_str = in_str;
        // Why the scan stopped, when the end of the input cut a unit.
        let mut cut = Cut::No;
        // Units the slow path rewrites one way only are rewritten out of the
        // loop ([`Repairer::rewrite`]); what of the input is written so far.
        let mut w = Written {
            upto: 0,
            depth: start_depth,
            comma_due: held_comma,
        };
        // Where the comma read here is (MAX: the comma, if any, is the one
        // the slow path held).
        let mut comma_at = usize::MAX;
        macro_rules! commit {
            ($at:expr) => {{
                commit = $at;
                c_pos = pos;
                c_in_str = in_str;
            }};
        }
        // Why the inner loop stopped: a unit to rewrite, or anything else.
        let mut stop = Stop::Other;
        'run: loop {
            loop {
                if in_str {
                    let k = str_body(input, i);
                    if k < n && input[k] == b'"' {
                        // A closing quote ends the string when `,` `}` or `]`
                        // follows it.
                        let j = skip_ws(input, k + 1);
                        if j < n && matches!(input[j], b',' | b'}' | b']') {
                            in_str = false;
                            pos = Pos::AfterValue;
                            i = j;
                            commit!(j);
                            continue;
                        }
                    }
                    // The string goes on past what is read here. A `,` and
                    // blanks ending the content are the slow path's to hold
                    // (see `StrLex::tail`): asked only here, not of every
                    // string that ends at its quote.
                    let tail = comma_tail(&input[i..k], max_token);
                    commit!(k - tail);
                    if k == n {
                        if tail > 0 {
                            cut = Cut::Str;
                        }
                        break;
                    }
                    if input[k] != b'"' {
                        // Cut off inside an escape or a character, or something
                        // the slow path repairs.
                        if str_tail_cut(&input[k..]) {
                            cut = Cut::Str;
                        }
                        break;
                    }
                    // A quote that is not followed by a delimiter (or the
                    // input ends after it and its blanks).
                    if skip_ws(input, k + 1) == n {
                        cut = Cut::Str;
                    }
                    break;
                }
                let Some(&b) = input.get(i) else {
                    // Only a comma (and blanks) is read without a commit.
                    if commit < n {
                        cut = Cut::Other;
                    }
                    break;
                };
                match b {
                    b' ' | b'\t' | b'\n' | b'\r' => {
                        let j = skip_ws(input, i);
                        if comma {
                            // Held with the comma until the next member or element.
                            if j - i > comma_room {
                                break;
                            }
                            i = j;
                        } else {
                            i = j;
                            commit!(j);
                        }
                    }
                    b'"' => match pos {
                        Pos::Value => {
                            // The opening quote flushes the comma; the content follows.
                            in_str = true;
                            comma = false;
                            i += 1;
                        }
                        Pos::ObjKey => {
                            // A member: `"key"`, blanks, `:`.
                            let k = str_body(input, i + 1);
                            if k == n || input[k] != b'"' {
                                if k == n || str_tail_cut(&input[k..]) {
                                    cut = Cut::Str;
                                }
                                break;
                            }
                            let j = skip_ws(input, k + 1);
                            if j == n {
                                cut = Cut::Other;
                                break;
                            }
                            if input[j] != b':' || j - i > max_token {
                                break;
                            }
                            pos = Pos::Value;
                            comma = false;
                            i = j + 1;
                            commit!(i);
                        }
                        _ => break,
                    },
                    b',' => {
                        if pos != Pos::AfterValue {
                            break;
                        }
                        pos = match self.stack.last().map(|f| f.kind) {
                            Some(Kind::Obj) => Pos::ObjKey,
                            _ => Pos::Value,
                        };
                        comma = true;
                        comma_at = i;
                        comma_room = max_token;
                        i += 1;
                    }
                    b'{' | b'[' => {
                        if pos != Pos::Value || self.stack.len() >= self.max_depth {
                            break;
                        }
                        let kind = if b == b'{' { Kind::Obj } else { Kind::Arr };
                        self.stack.push(Frame {
                            kind,
                            tuple: false,
                            phantoms: 0,
                        });
                        pos = if kind == Kind::Obj {
                            Pos::ObjKey
                        } else {
                            Pos::Value
                        };
                        comma = false;
                        i += 1;
                        commit!(i);
                    }
                    b'}' | b']' => {
                        // Containers the sink wants the end of are closed by the
                        // slow path (it marks them).
                        let floor = *floor.get_or_insert_with(|| {
                            start_depth.saturating_sub(sink.opaque_closable()).max(1)
                        });
                        if comma {
                            // A comma read here before the closer (not one the
                            // slow path held) is a trailing one: dropped below.
                            stop = Stop::Trailing(floor);
                            break;
                        }
                        if self.stack.len() <= floor {
                            break;
                        }
                        let Some(top) = self.stack.last() else { break };
                        let kind = if b == b'}' { Kind::Obj } else { Kind::Arr };
                        let empty_ok = match kind {
                            Kind::Obj => pos == Pos::ObjKey,
                            Kind::Arr => pos == Pos::Value,
                        };
                        if top.kind != kind
                            || top.tuple
                            || top.phantoms > 0
                            || !(pos == Pos::AfterValue || empty_ok)
                        {
                            break;
                        }
                        self.stack.pop();
                        pos = Pos::AfterValue;
                        i += 1;
                        commit!(i);
                    }
                    b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                        if pos != Pos::Value {
                            // A bare key (`name:`)?
                            stop = Stop::Rewrite;
                            break;
                        }
                        let Some(j) = scalar(input, i, max_token) else {
                            if scalar_prefix(&input[i..]) {
                                cut = Cut::Other;
                            }
                            break;
                        };
                        pos = Pos::AfterValue;
                        comma = false;
                        i = j;
                        commit!(j);
                    }
                    _ => {
                        // `'text'`, `True`, `key:`: rewritten below.
                        stop = Stop::Rewrite;
                        break;
                    }
                }
            }
            // A unit the slow path rewrites one way only stopped the run: it is
            // rewritten out of the loop, which then goes on after it.
            match std::mem::replace(&mut stop, Stop::Other) {
                Stop::Other => break 'run,
                Stop::Rewrite => {
                    match self.rewrite(input, i, pos, (&mut floor, start_depth), sink, &mut w) {
                        Some((j, p)) => (i, pos) = (j, p),
                        None => break 'run,
                    }
                }
                Stop::Trailing(floor) => {
                    if comma_at == usize::MAX
                        || !self.trailing_comma(input, i, comma_at, pos, floor, sink, &mut w)
                    {
                        break 'run;
                    }
                    i += 1;
                    pos = Pos::AfterValue;
                }
            }
            comma = false;
            commit!(i);
        }
        if commit == 0 {
            return (0, cut);
        }
        if commit > w.upto {
            let change = self.stack.len() as isize - w.depth as isize;
            self.flush_run(sink, &input[w.upto..commit], change, &mut w.comma_due);
        }
        self.pos = c_pos;
        self.lex = if c_in_str {
            Lex::Str(StrLex::plain())
        } else {
            Lex::None
        };
        (commit, cut)
    }
}

/// Why a fast run's loop stopped.
#[derive(Clone, Copy)]
enum Stop {
    /// At a byte for the slow path, or at the end.
    Other,
    /// At a unit [`Repairer::rewrite`] may rewrite.
    Rewrite,
    /// At a closer after a comma ([`Repairer::trailing_comma`]), with the
    /// run's closer floor.
    Trailing(usize),
}

/// What of its input a fast run has written (see [`Repairer::rewrite`]).
struct Written {
    /// The input before this is written.
    upto: usize,
    /// The depth at `upto`.
    depth: usize,
    /// The comma the slow path held is still to be written.
    comma_due: bool,
}

impl Repairer {
    /// Rewrites the unit at `i` if the slow path would rewrite it one way
    /// only: a single-quoted string of plain ASCII followed by `,` `}` `]`
    /// (a value) or `:` (a key), `True`/`False`/`None` followed by a byte
    /// that ends a literal, an identifier key followed by its colon. Writes
    /// the input before it as it is, then the unit's JSON, records the
    /// slow path's repair; returns where the unit ends and the position
    /// after it. Out of line: valid JSON never comes here.
    #[inline(never)]
    fn rewrite<S: Sink + ?Sized>(
        &mut self,
        input: &[u8],
        i: usize,
        pos: Pos,
        floor: (&mut Option<usize>, usize),
        sink: &mut S,
        w: &mut Written,
    ) -> Option<(usize, Pos)> {
        let max_token = self.max_token;
        // The sink's closable depth is for the depth at the run's start:
        // asked before anything is written.
        let (floor_slot, start_depth) = floor;
        floor_slot.get_or_insert_with(|| start_depth.saturating_sub(sink.opaque_closable()).max(1));
        // The repair, the JSON for the unit, where the unit's bytes end (the
        // input after that is written as it is, with the next run), where
        // the run goes on, and the position there.
        let (kind, json, unit_end, end, next): (RepairKind, [&[u8]; 3], usize, usize, Pos) =
            match (input[i], pos) {
                (b'\'', Pos::Value | Pos::ObjKey) => {
                    let key = pos == Pos::ObjKey;
                    let (close, end) = single_quoted(input, i, key, max_token)?;
                    // The blanks (and a key's colon) after the quote are
                    // written as they are.
                    let next = if key { Pos::Value } else { Pos::AfterValue };
                    let json = [&b"\""[..], &input[i + 1..close], b"\""];
                    (RepairKind::SingleQuotes, json, close + 1, end, next)
                }
                (b'T' | b'F' | b'N', Pos::Value) => {
                    let (len, json): (usize, &[u8]) = match &input[i..] {
                        [b'T', b'r', b'u', b'e', c, ..] if ENDS_LITERAL[*c as usize] => {
                            (4, b"true")
                        }
                        [b'F', b'a', b'l', b's', b'e', c, ..] if ENDS_LITERAL[*c as usize] => {
                            (5, b"false")
                        }
                        [b'N', b'o', b'n', b'e', c, ..] if ENDS_LITERAL[*c as usize] => {
                            (4, b"null")
                        }
                        _ => return None,
                    };
                    let end = i + len;
                    (
                        RepairKind::PythonLiteral,
                        [json, b"", b""],
                        end,
                        end,
                        Pos::AfterValue,
                    )
                }
                (c, Pos::ObjKey) if c.is_ascii_alphabetic() || c == b'_' => {
                    let len = input[i..]
                        .iter()
                        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                        .unwrap_or(input.len() - i);
                    if input.get(i + len) != Some(&b':') || len + 3 > max_token {
                        return None;
                    }
                    let end = i + len + 1;
                    let json = [&b"\""[..], &input[i..i + len], b"\":"];
                    (RepairKind::UnquotedKey, json, end, end, Pos::Value)
                }
                _ => return None,
            };
        // The input before the unit, then the unit's JSON: one call.
        let depth = self.stack.len();
        let change = depth as isize - w.depth as isize;
        self.flush_comma_due(sink, &mut w.comma_due);
        sink.write_opaque_parts(&input[w.upto..i], change, &json);
        w.depth = depth;
        self.repair(kind, self.offset + i as u64);
        w.upto = unit_end;
        Some((end, next))
    }

    /// `, }` read by a fast run (the comma at `comma_at`, the closer at
    /// `i`): if the run may close the container, drops the comma as the
    /// slow path does (the blanks around it kept, the repair at the
    /// closer) and closes it. Out of line: valid JSON never comes here.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn trailing_comma<S: Sink + ?Sized>(
        &mut self,
        input: &[u8],
        i: usize,
        comma_at: usize,
        pos: Pos,
        floor: usize,
        sink: &mut S,
        w: &mut Written,
    ) -> bool {
        let Some(top) = self.stack.last() else {
            return false;
        };
        let kind = if input[i] == b'}' {
            Kind::Obj
        } else {
            Kind::Arr
        };
        // After the comma: a key's place in an object, a value's in an array.
        let after_comma = match kind {
            Kind::Obj => Pos::ObjKey,
            Kind::Arr => Pos::Value,
        };
        if self.stack.len() <= floor
            || top.kind != kind
            || top.tuple
            || top.phantoms > 0
            || pos != after_comma
        {
            return false;
        }
        self.flush_to(input, comma_at, sink, w);
        self.repair(RepairKind::TrailingComma, self.offset + i as u64);
        w.upto = comma_at + 1;
        self.stack.pop();
        true
    }

    /// Writes the input from `w.upto` to `to` as it is (see [`Written`]).
    fn flush_to<S: Sink + ?Sized>(
        &mut self,
        input: &[u8],
        to: usize,
        sink: &mut S,
        w: &mut Written,
    ) {
        let depth = self.stack.len();
        let change = depth as isize - w.depth as isize;
        self.flush_run(sink, &input[w.upto..to], change, &mut w.comma_due);
        w.depth = depth;
    }

    /// Writes a run of input as it is, `depth_change` the containers it
    /// opens less those it closes; first the comma the slow path held
    /// (`comma_due`), as the first committed unit is the one after it.
    fn flush_run<S: Sink + ?Sized>(
        &mut self,
        sink: &mut S,
        run: &[u8],
        depth_change: isize,
        comma_due: &mut bool,
    ) {
        self.flush_comma_due(sink, comma_due);
        sink.write_opaque(run, depth_change);
    }

    /// Writes the comma the slow path held, when it is still due (the
    /// first committed unit is the one after it).
    fn flush_comma_due<S: Sink + ?Sized>(&mut self, sink: &mut S, comma_due: &mut bool) {
        if std::mem::take(comma_due) {
            self.comma = None;
            sink.write(b",");
            if !self.comma_ws.is_empty() {
                sink.write(&self.comma_ws);
                self.comma_ws.clear();
            }
        }
    }
}

/// What stopped [`Repairer::fast`] short of the end of its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cut {
    /// A byte for the slow path, or nothing (all of the input was read).
    No,
    /// The end of the input, inside a unit that the input's next bytes may
    /// complete as plain JSON: the rest of the input is that unit's start
    /// (the slow path would only hold it). The unit is a string (a key, or
    /// a value's cut escape, character or closing quote and blanks)…
    Str,
    /// … or not (a comma and blanks, a number or literal, a key's closing
    /// quote and blanks before its colon).
    Other,
}

/// True when `t` (the rest of the input, at a byte [`str_body`] stopped on
/// inside a string) is the start of an escape or of a UTF-8 character that
/// the input's end cut off.
pub(crate) fn str_tail_cut(t: &[u8]) -> bool {
    let hex = |s: &[u8]| s.iter().all(u8::is_ascii_hexdigit);
    match t {
        [b'\\'] | [b'\\', b'u'] => true,
        [b'\\', b'u', h @ ..] if h.len() < 4 => hex(h),
        // A high surrogate waits for its low half.
        [b'\\', b'u', rest @ ..] if t.len() < 12 => {
            let Some(unit) = rest.get(..4).and_then(hex4) else {
                return false;
            };
            let low = &rest[4..];
            (0xD800..=0xDBFF).contains(&unit)
                && match low {
                    [] | [b'\\'] | [b'\\', b'u'] => true,
                    [b'\\', b'u', h @ ..] => hex(h),
                    _ => false,
                }
        }
        [c, ..] if *c >= 0x80 => matches!(
            std::str::from_utf8(t),
            Err(e) if e.valid_up_to() == 0 && e.error_len().is_none()
        ),
        _ => false,
    }
}

/// True when `t` (the rest of the input) is the start of a JSON number or
/// of `true`, `false` or `null`, cut by the input's end.
fn scalar_prefix(t: &[u8]) -> bool {
    if [&b"true"[..], b"false", b"null"]
        .iter()
        .any(|l| l.starts_with(t))
    {
        return true;
    }
    // `-`? (`0` | [1-9][0-9]*) (`.` [0-9]+)? ([eE] [+-]? [0-9]+)?, any prefix.
    let mut i = usize::from(t.first() == Some(&b'-'));
    let digits = |mut i: usize| {
        while t.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    match t.get(i) {
        None => return true,
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i + 1),
        Some(_) => return false,
    }
    if t.get(i) == Some(&b'.') {
        i = digits(i + 1);
    }
    if matches!(t.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(t.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i);
    }
    i == t.len()
}

/// End of the JSON blanks at `i`.
#[inline]
pub(super) fn skip_ws(input: &[u8], mut i: usize) -> usize {
    while i < input.len() && matches!(input[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// End of the plain string content at `i`: the index of the closing quote,
/// of the end, or of the first byte the slow path must see (a control
/// character, an escape that is invalid or cut off, UTF-8 that is invalid or
/// cut off). Valid escapes are plain content.
#[inline]
pub(crate) fn str_body(input: &[u8], i: usize) -> usize {
    str_scan::<true>(input, i)
}

/// [`str_body`] for the lane, on the chunks of a streamed string value: a
/// valid escape is content there as well (the lane's byte table sees only
/// what the repairer would look at), with no short-string head (a chunk
/// continues a long string).
#[inline]
pub(super) fn str_chunk(input: &[u8], i: usize) -> usize {
    str_scan::<false>(input, i)
}

/// [`str_body`] and [`str_chunk`] (`HEAD`: a short string's first 32
/// bytes read first, as below).
///
/// One pass a word (8 bytes) at a time: a SWAR test flags the first `"`,
/// `\\` or control character of the word, and a valid escape there is
/// stepped over in place ([`SHORT_ESCAPE`]: no call, no second search), so
/// the cost of an escape is a few instructions whatever the spacing of the
/// escapes (text with a quote, a tab or a line break every dozen bytes is
/// the common case of a long string argument, and a search that starts
/// afresh at every escape spends most of its time starting).
///
/// The words' top bits are gathered on the way: where all of them are
/// clear the run is ASCII and needs no UTF-8 check; otherwise it is
/// validated once (`simdutf8`, SIMD) when the scan stops, or on the way at
/// a checkpoint. The checkpoints keep the work linear: the scan runs ahead
/// of its last validated byte by no more than it has already read (at
/// least 64 bytes), so invalid UTF-8 that returns the scan early (the slow
/// path then repairs one character and the fast path comes back) was not
/// reached by reading the rest of the string first. The search itself
/// reads at most a word past the byte it stops on — a 64-byte block far
/// from the checkpoint in a long input ([`long_run`]).
#[inline(always)]
fn str_scan<const HEAD: bool>(input: &[u8], mut i: usize) -> usize {
    let n = input.len();
    let start = i;
    // Most strings (keys, short values) are a few bytes of plain ASCII up
    // to their closing quote: read as before, a word at a time, with no
    // set-up for the search and the validation below.
    if HEAD {
        let head = i + super::plain_len(&input[i..n.min(i + 32)]);
        match input.get(head) {
            None => return head,
            Some(&c) if head < start + 32 && (c == b'"' || c < 0x20) => return head,
            _ => i = head,
        }
    }
    // `input[start..valid_to]` is valid UTF-8 and ends at a character
    // boundary; `high` has a top bit set if a byte read since may be
    // non-ASCII (a superset: whole words are gathered).
    let mut valid_to = i;
    let mut high = 0u64;
    let mut check_at = i.saturating_add(64);
    let long = n - i >= LONG;
    let stop = loop {
        if i >= check_at {
            match validate(input, valid_to, i, high) {
                Ok(v) => {
                    valid_to = v;
                    // A character cut by the checkpoint is read again.
                    high = if v < i { TOP } else { 0 };
                }
                Err(bad) => return bad,
            }
            check_at = i.saturating_add((i - start).max(64));
        }
        // Far from the checkpoint in a long input: 64 bytes at a time,
        // with SIMD. (Chunks of a streamed string are shorter: they stay
        // on the word loop, with no set-up for the blocks.)
        if long && check_at.min(n).saturating_sub(i) >= 64 {
            match long_run(input, i, check_at.min(n), &mut high) {
                Long::Next(next) => {
                    i = next;
                    continue;
                }
                Long::Stop(k) => break k,
            }
        }
        let word = input
            .get(i..i + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok());
        let k = if let Some(w) = word {
            let x = u64::from_le_bytes(w);
            high |= x;
            // The lowest flagged byte is a match (a SWAR test's borrow only
            // flags bytes above a true match).
            let hits = super::swar_hits::<false, false>(x);
            if hits == 0 {
                i += 8;
                continue;
            }
            i + (hits.trailing_zeros() / 8) as usize
        } else if let Some(x) = last_word(input, i) {
            // The last 1 to 7 bytes, as the word that ends the input
            // shifted down to them: the zeros shifted in are flagged (as
            // control bytes) above every byte of the input, so a flag below
            // them is a match.
            high |= x;
            let j = (super::swar_hits::<false, false>(x).trailing_zeros() / 8) as usize;
            if i + j >= n {
                break n;
            }
            i + j
        } else {
            // The last few bytes of a short input, one at a time.
            match input[i..]
                .iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
            {
                Some(j) => {
                    high |= tail_high(&input[i..i + j]);
                    i + j
                }
                None => {
                    high |= tail_high(&input[i..]);
                    break n;
                }
            }
        };
        if input[k] != b'\\' {
            break k;
        }
        match input.get(k + 1).and_then(|&e| step_escape(input, k, e)) {
            Some(next) => i = next,
            None => break k,
        }
    };
    match validate(input, valid_to, stop, high) {
        Ok(v) => v,
        Err(bad) => bad,
    }
}

/// `input[i..]` (1 to 7 bytes, the end of an input of at least 8) in the
/// low bytes of a word, zeros above: the input's last word shifted down.
#[inline(always)]
fn last_word(input: &[u8], i: usize) -> Option<u64> {
    let n = input.len();
    let left = n.checked_sub(i).filter(|l| (1..8).contains(l))?;
    let w = input.get(n.checked_sub(8)?..)?;
    let w = u64::from_le_bytes(<[u8; 8]>::try_from(w).ok()?);
    Some(w >> (8 * (8 - left)))
}

/// Past the escape that begins at `input[k]` (a `\\` followed by `e`):
/// where the string's content goes on, or None when the escape is not
/// valid or the input cuts it. A two-byte escape is told by a table
/// lookup; only `\\u` reads on ([`escape_len`]).
#[inline(always)]
fn step_escape(input: &[u8], k: usize, e: u8) -> Option<usize> {
    if SHORT_ESCAPE[e as usize] {
        Some(k + 2)
    } else {
        escape_len(input.get(k..)?).map(|l| k + l)
    }
}

/// Where [`long_run`] left the scan.
enum Long {
    /// Go on at this index (nothing to stop at before it).
    Next(usize),
    /// Stop here: a `"`, a control character, a backslash that does not
    /// begin a valid escape.
    Stop(usize),
}

/// Shortest input (from where the word loop begins) that [`str_scan`]
/// reads in 64-byte blocks.
const LONG: usize = 128;

/// [`str_scan`]'s steps over the 64-byte blocks of `input[i..end]` that it
/// can read whole: each block's `"`, `\\` and control bytes flagged at once
/// ([`block_flags`]), its valid escapes stepped over by the flags, with
/// no search started afresh after each. `high` gathers the blocks' top
/// bits, as the word loop does.
#[inline(never)]
fn long_run(input: &[u8], mut i: usize, end: usize, high: &mut u64) -> Long {
    while let Some(block) = input
        .get(i..i + 64)
        .filter(|_| i + 64 <= end)
        .and_then(|b| <&[u8; 64]>::try_from(b).ok())
    {
        let (mut flags, top) = block_flags::<false>(block);
        *high |= u64::from(top) << 7;
        let mut next_block = i + 64;
        while flags != 0 {
            // (`j` < 64: the block's own bytes, with no bounds checks.)
            let j = flags.trailing_zeros() as usize & 63;
            if block[j] != b'\\' {
                return Long::Stop(i + j);
            }
            let e = if j < 63 {
                block[j + 1]
            } else {
                match input.get(i + 64) {
                    Some(&e) => e,
                    None => return Long::Stop(i + j),
                }
            };
            // (`step_escape`, written out: called here, it cost this loop
            // +2.9 % of a 10 KB call's instructions fed whole, +6.3 % at
            // 100 KB.)
            let skip = if SHORT_ESCAPE[e as usize] {
                j + 2
            } else {
                match escape_len(&input[i + j..]) {
                    Some(l) => j + l,
                    None => return Long::Stop(i + j),
                }
            };
            if skip >= 64 {
                // The escape runs into the next block.
                next_block = i + skip;
                break;
            }
            flags &= u64::MAX << skip;
        }
        i = next_block;
    }
    Long::Next(i)
}

/// The bytes of a 64-byte block that JSON string content cannot hold as
/// they are — `"`, `\\`, control characters (below 0x20) and, with `DEL`,
/// 0x7F — one bit a byte (bit `j` for byte `j`); and whether any byte of
/// it is not ASCII. Four 16-byte compares and move masks (`wide`: SSE2 on
/// x86-64, NEON or plain arrays elsewhere; no `unsafe` here).
#[inline(always)]
pub(crate) fn block_flags<const DEL: bool>(block: &[u8; 64]) -> (u64, bool) {
    use wide::u8x16;
    let quote = u8x16::splat(b'"');
    let backslash = u8x16::splat(b'\\');
    let control = u8x16::splat(0x1F);
    let del = u8x16::splat(0x7F);
    let mut flags = 0u64;
    let mut any = u8x16::splat(0);
    for (k, part) in block.chunks_exact(16).enumerate() {
        let Ok(part) = <[u8; 16]>::try_from(part) else {
            continue;
        };
        let v = u8x16::new(part);
        any |= v;
        let mut hit = v.cmp_eq(quote) | v.cmp_eq(backslash) | v.min(control).cmp_eq(v);
        if DEL {
            hit |= v.cmp_eq(del);
        }
        flags |= u64::from(hit.move_mask() as u16) << (16 * k);
    }
    (flags, any.move_mask() != 0)
}

/// The top bits of the bytes of `t` (fewer than 8), as [`str_scan`]
/// gathers them from whole words.
#[inline(always)]
fn tail_high(t: &[u8]) -> u64 {
    u64::from(t.iter().fold(0, |acc, &c| acc | c))
}

const TOP: u64 = 0x8080_8080_8080_8080;

/// Checks `input[from..to]` (string content with no `"`, `\\` or control
/// character but in valid escapes) as UTF-8, unless `high` says it is all
/// ASCII. `Ok(v)`: valid up to `v`, which is `to` or the first byte of a
/// character that `to` cuts; `Err(at)`: the first byte of the first invalid
/// character is at `at`.
#[inline(always)]
fn validate(input: &[u8], from: usize, to: usize, high: u64) -> Result<usize, usize> {
    if high & TOP == 0 || from >= to {
        return Ok(to.max(from));
    }
    check_utf8(&input[from..to])
        .map(|v| from + v)
        .map_err(|v| from + v)
}

/// Checks `run` as UTF-8. `Ok(v)`: valid up to `v`, which is the end or
/// the first byte of a character that the end cuts; `Err(at)`: the first
/// invalid character begins at `at` (std's `valid_up_to` and `error_len`).
///
/// Long runs go to `simdutf8` (SIMD); a run shorter than its blocks
/// (64 bytes), which it would hand to std's check, is read here a
/// character at a time ([`short_utf8`]): std's check costs some 200
/// instructions a call before its first byte, and a chunk streamed in
/// 64 bytes is cut into such runs by every escape.
#[inline(never)]
pub(super) fn check_utf8(run: &[u8]) -> Result<usize, usize> {
    if run.len() < 64 {
        return short_utf8(run);
    }
    // Valid runs are the rule: the faster check first, the one that
    // says where a run goes wrong only when it does.
    if simdutf8::basic::from_utf8(run).is_ok() {
        return Ok(run.len());
    }
    match simdutf8::compat::from_utf8(run) {
        Ok(_) => Ok(run.len()),
        Err(e) if e.error_len().is_none() => Ok(e.valid_up_to()),
        Err(e) => Err(e.valid_up_to()),
    }
}

/// [`check_utf8`] of a short run, a word at a time: an ASCII word between
/// characters is skipped, any other word goes through [`UTF8_DFA`] (two or
/// three instructions a byte, no branch on the byte). A character cut by the
/// run's end leaves the automaton waiting for more: the run is valid up to
/// that character's first byte. Only an invalid run is read again, a
/// character at a time, to say where it goes wrong.
fn short_utf8(run: &[u8]) -> Result<usize, usize> {
    let n = run.len();
    let mut i = 0;
    let mut s = utf8::ACCEPT;
    while let Some(w) = run.get(i..i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
        // An ASCII word between characters leaves the state as it is.
        if u64::from_le_bytes(w) & TOP != 0 || s & 63 != utf8::ACCEPT {
            for c in w {
                s = UTF8_DFA[c as usize] >> (s & 63);
            }
        }
        i += 8;
    }
    for &c in &run[i..] {
        s = UTF8_DFA[c as usize] >> (s & 63);
    }
    match s & 63 {
        utf8::ACCEPT => Ok(n),
        utf8::ERROR => Err(utf8_error(run)),
        // Cut inside its last character, whose first byte is among the
        // last three (the bytes after it continue it).
        _ => Ok(run.iter().rposition(|&c| c & 0xC0 != 0x80).unwrap_or(0)),
    }
}

/// The states of [`UTF8_DFA`]: each is the offset of its 6-bit field in a
/// table word, which holds the state after the byte in that state.
mod utf8 {
    /// Between characters.
    pub(super) const ACCEPT: u64 = 0;
    /// Invalid (absorbing).
    pub(super) const ERROR: u64 = 6;
    /// One continuation byte to come.
    pub(super) const C1: u64 = 12;
    /// Two to come.
    pub(super) const C2: u64 = 18;
    /// Three to come.
    pub(super) const C3: u64 = 24;
    /// After `E0`: `A0..=BF` (no overlong form), then one.
    pub(super) const E0: u64 = 30;
    /// After `ED`: `80..=9F` (no surrogate), then one.
    pub(super) const ED: u64 = 36;
    /// After `F0`: `90..=BF` (no overlong form), then two.
    pub(super) const F0: u64 = 42;
    /// After `F4`: `80..=8F` (nothing past U+10FFFF), then two.
    pub(super) const F4: u64 = 48;
    /// After a `\\` ([`super::STR_DFA`] only): an escape's letter next.
    pub(super) const ESC: u64 = 54;
}

/// UTF-8 as a shift automaton: in state `s`, byte `c` leads to
/// `UTF8_DFA[c] >> s & 63` ([`utf8`] lists the states). The table is
/// std's rules (RFC 3629's well-formed sequences), byte by byte.
static UTF8_DFA: [u64; 256] = shift_dfa(false);

/// [`UTF8_DFA`] for the content of a JSON string: a `"` or a control
/// character is [`utf8::ERROR`] too, and a `\\` leads to [`utf8::ESC`],
/// where one of the two-byte escapes' letters leads back (`\\u` is
/// [`utf8::ERROR`]: its four digits are left to the slower scans).
static STR_DFA: [u64; 256] = shift_dfa(true);

/// The table of [`UTF8_DFA`] (`json` false) or [`STR_DFA`] (true).
const fn shift_dfa(json: bool) -> [u64; 256] {
    use utf8::*;
    let mut t = [0u64; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        let first = match b {
            b'"' | 0x00..=0x1F if json => ERROR,
            b'\\' if json => ESC,
            0x00..=0x7F => ACCEPT,
            0xC2..=0xDF => C1,
            0xE0 => E0,
            0xED => ED,
            0xE1..=0xEF => C2,
            0xF0 => F0,
            0xF4 => F4,
            0xF1..=0xF3 => C3,
            _ => ERROR,
        };
        let escaped = match b {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' if json => ACCEPT,
            _ => ERROR,
        };
        t[c] = first << ACCEPT
            | ERROR << ERROR
            | within(b, 0x80, 0xBF, ACCEPT) << C1
            | within(b, 0x80, 0xBF, C1) << C2
            | within(b, 0x80, 0xBF, C2) << C3
            | within(b, 0xA0, 0xBF, C1) << E0
            | within(b, 0x80, 0x9F, C1) << ED
            | within(b, 0x90, 0xBF, C2) << F0
            | within(b, 0x80, 0x8F, C2) << F4
            | escaped << ESC;
        c += 1;
    }
    t
}

/// How much of `input` [`str_chunk`] would read as string content, found
/// in one pass a word at a time: plain ASCII words (a SWAR test) are
/// skipped between characters, the others go through [`STR_DFA`].
/// `Some(n)`: all of it (no `"` or control character, two-byte escapes
/// only, valid and complete UTF-8). `Some(k)`: all but its last character
/// or escape, which the end cuts and which begins at `k`. None: something
/// else stops it (or a `\\u` escape, left to the scan): ask the scan.
#[inline(always)]
pub(super) fn content_len(input: &[u8]) -> Option<usize> {
    let mut s = utf8::ACCEPT;
    let mut i = 0;
    while let Some(w) = input
        .get(i..i + 8)
        .and_then(|w| <[u8; 8]>::try_from(w).ok())
    {
        let x = u64::from_le_bytes(w);
        if x & TOP != 0 || s & 63 != utf8::ACCEPT || super::swar_hits::<false, false>(x) != 0 {
            for c in w {
                s = STR_DFA[c as usize] >> (s & 63);
            }
        }
        i += 8;
    }
    for &c in &input[i.min(input.len())..] {
        s = STR_DFA[c as usize] >> (s & 63);
    }
    match s & 63 {
        utf8::ACCEPT => Some(input.len()),
        utf8::ERROR => None,
        // Waiting for a continuation byte or an escape's letter: the unit
        // began at the last byte that is not a continuation byte (a lead
        // byte or the backslash), among the last four.
        _ => input.iter().rposition(|&c| c & 0xC0 != 0x80),
    }
}

/// `then` if `lo <= b <= hi`, else [`utf8::ERROR`] (for [`UTF8_DFA`]).
const fn within(b: u8, lo: u8, hi: u8, then: u64) -> u64 {
    if b >= lo && b <= hi {
        then
    } else {
        utf8::ERROR
    }
}

/// Where the first invalid character of `run` begins, the run being known
/// to be invalid: a character at a time.
#[cold]
#[inline(never)]
fn utf8_error(run: &[u8]) -> usize {
    let n = run.len();
    let mut i = 0;
    while i < n {
        let c = run[i];
        if c < 0x80 {
            i += 1;
            continue;
        }
        // The length, and the range of the second byte (which rules out
        // overlong forms, surrogates and code points past U+10FFFF).
        let (len, lo, hi) = match c {
            0xC2..=0xDF => (2, 0x80, 0xBF),
            0xE0 => (3, 0xA0, 0xBF),
            0xED => (3, 0x80, 0x9F),
            0xE1..=0xEF => (3, 0x80, 0xBF),
            0xF0 => (4, 0x90, 0xBF),
            0xF1..=0xF3 => (4, 0x80, 0xBF),
            0xF4 => (4, 0x80, 0x8F),
            _ => return i,
        };
        for k in 1..len {
            let Some(&b) = run.get(i + k) else {
                // Cut by the end of the run after a valid start.
                return i;
            };
            let (l, h) = if k == 1 { (lo, hi) } else { (0x80, 0xBF) };
            if !(l..=h).contains(&b) {
                return i;
            }
        }
        i += len;
    }
    n
}

/// The bytes after a backslash that make a two-byte escape.
pub(crate) static SHORT_ESCAPE: [bool; 256] = byte_set(b"\"\\/bfnrt");

/// Length of the valid escape at the start of `s` (which starts with `\`),
/// or None if it is invalid or cut off. A high surrogate counts only with
/// its low half.
pub(crate) fn escape_len(s: &[u8]) -> Option<usize> {
    match *s.get(1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(2),
        b'u' => {
            let unit = hex4(s.get(2..6)?)?;
            match unit {
                0xD800..=0xDBFF => {
                    if s.get(6..8)? != b"\\u" {
                        return None;
                    }
                    let low = hex4(s.get(8..12)?)?;
                    (0xDC00..=0xDFFF).contains(&low).then_some(12)
                }
                0xDC00..=0xDFFF => None,
                _ => Some(6),
            }
        }
        _ => None,
    }
}

fn hex4(h: &[u8]) -> Option<u32> {
    h.iter().try_fold(0u32, |acc, &c| {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        Some(acc * 16 + u32::from(d))
    })
}

/// End of the number or literal at `i`, if it is valid JSON, at most
/// `max_token` bytes long, and followed by a byte that ends a bare token
/// (`,` `}` `]` or a blank) in the slow path.
fn scalar(input: &[u8], i: usize, max_token: usize) -> Option<usize> {
    let rest = &input[i..];
    let len = match rest[0] {
        b't' if rest.starts_with(b"true") => 4,
        b'f' if rest.starts_with(b"false") => 5,
        b'n' if rest.starts_with(b"null") => 4,
        b't' | b'f' | b'n' => return None,
        _ => {
            let len = number_len(rest)?;
            // A number no double holds (`1e999`) is the slow path's to repair.
            if !super::fits_f64(&rest[..len]) {
                return None;
            }
            len
        }
    };
    if len > max_token {
        return None;
    }
    match rest.get(len)? {
        b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' => Some(i + len),
        _ => None,
    }
}

/// End of the single-quoted string at `i` when the slow path would read it
/// as one string of plain content and end it at its closing quote: plain
/// ASCII content without `'` `"` `\`, then the quote, blanks and `,` `}` `]`
/// (a value; the returned end is at that byte) or `:` (a key, at most
/// `max_token` bytes with its blanks; the end is after the colon).
fn single_quoted(input: &[u8], i: usize, key: bool, max_token: usize) -> Option<(usize, usize)> {
    // Up to the first byte that is not plain content: a miss leaves these
    // bytes to the slow path, which reads them once more (never more than twice).
    let close = i + 1 + single_quoted_len(&input[i + 1..]);
    if input.get(close) != Some(&b'\'') {
        return None;
    }
    let j = skip_ws(input, close + 1);
    match (key, input.get(j)?) {
        (false, b',' | b'}' | b']') if j - close <= max_token => Some((close, j)),
        (true, b':') if j + 1 - i <= max_token => Some((close, j + 1)),
        _ => None,
    }
}

/// Length of the JSON number at the start of `s` (None if there is none).
pub(super) fn number_len(s: &[u8]) -> Option<usize> {
    let digits = |mut i: usize| {
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let mut i = usize::from(s.first() == Some(&b'-'));
    match s.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = digits(i + 1),
        _ => return None,
    }
    if s.get(i) == Some(&b'.') {
        let j = digits(i + 1);
        if j == i + 1 {
            return None;
        }
        i = j;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let j = digits(i);
        if j == i {
            return None;
        }
        i = j;
    }
    Some(i)
}

#[cfg(test)]
mod tests {
    use super::{escape_len, str_body, str_chunk};
    use proptest::prelude::*;

    /// The scan a character at a time: what [`str_body`] and [`str_chunk`]
    /// must return.
    fn naive(input: &[u8], mut i: usize) -> usize {
        loop {
            let Some(&c) = input.get(i) else { return i };
            match c {
                b'"' | 0..=0x1F => return i,
                b'\\' => match escape_len(&input[i..]) {
                    Some(l) => i += l,
                    None => return i,
                },
                0x80..=0xFF => {
                    let len = match c {
                        0xC0..=0xDF => 2,
                        0xE0..=0xEF => 3,
                        0xF0..=0xF7 => 4,
                        _ => return i,
                    };
                    match input.get(i..i + len).map(std::str::from_utf8) {
                        Some(Ok(_)) => i += len,
                        _ => return i,
                    }
                }
                _ => i += 1,
            }
        }
    }

    /// Deterministic inputs: runs of plain ASCII and non-ASCII text of many
    /// lengths (past the 32-byte word loop and the 64-byte windows), with
    /// escapes, quotes, control characters, invalid and cut-off UTF-8.
    #[test]
    fn scans_agree_with_a_scan_a_character_at_a_time() {
        let pieces: [&[u8]; 12] = [
            b"plain ascii text ",
            "naïve café ÷ ≈ ✓ 😀 ".as_bytes(),
            b"\\\"",
            b"\\n",
            b"\\u00e9",
            b"\\ud83d\\ude00",
            b"\\x",
            b"\t",
            b"\"",
            b"\xff",
            b"\xe2\x82",
            b"\\ud83d",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..3000 {
            let mut input = Vec::new();
            let parts = (next() % 40) as usize;
            for _ in 0..parts {
                let r = next();
                // Mostly text, sometimes long runs of it.
                let p = if r % 3 == 0 {
                    pieces[(r >> 8) as usize % 12]
                } else {
                    pieces[(r >> 8) as usize % 2]
                };
                let reps = if r % 17 == 0 {
                    1 + (r >> 20) as usize % 40
                } else {
                    1
                };
                for _ in 0..reps {
                    input.extend_from_slice(p);
                }
            }
            // Cut anywhere, also inside a character or an escape.
            let cut = if input.is_empty() {
                0
            } else {
                (next() as usize) % (input.len() + 1)
            };
            let input = &input[..cut];
            for start in [0, cut / 3, cut / 2].into_iter().filter(|&s| s <= cut) {
                assert_eq!(
                    str_body(input, start),
                    naive(input, start),
                    "str_body {:?} from {start}",
                    String::from_utf8_lossy(input)
                );
                assert_eq!(
                    str_chunk(input, start),
                    naive(input, start),
                    "str_chunk {:?} from {start}",
                    String::from_utf8_lossy(input)
                );
            }
        }
    }

    /// A piece of string content: what the word loop steps over (plain
    /// ASCII and non-ASCII text of any length, valid escapes), and what
    /// stops it (quotes, control characters, invalid or cut escapes and
    /// surrogates, invalid or cut UTF-8), and any byte at all.
    fn piece() -> impl Strategy<Value = Vec<u8>> {
        let fixed: Vec<&'static [u8]> = vec![
            b"\\\"",
            b"\\\\",
            b"\\/",
            b"\\b",
            b"\\f",
            b"\\n",
            b"\\r",
            b"\\t",
            b"\\u00e9",
            b"\\u00E9",
            b"\\ud83d\\ude00",
            b"\\ud83d",
            b"\\ud83dx",
            b"\\ud83d\\u0041",
            b"\\udc00",
            b"\\u12",
            b"\\u12g4",
            b"\\x",
            b"\\",
            b"\"",
            b"\t",
            b"\n",
            b"\x00",
            b"\x1f",
            b"\x7f",
            "é".as_bytes(),
            "≈".as_bytes(),
            "😀".as_bytes(),
            b"\xff",
            b"\xc0\x80",
            b"\xe2\x82",
            b"\xed\xa0\x80",
            b"\xf4\x90\x80\x80",
            b"\x80",
        ];
        prop_oneof![
            4 => "[ -!#-\\[\\]-~]{1,40}".prop_map(String::into_bytes),
            2 => "[a-zé≈✓😀 ]{1,20}".prop_map(String::into_bytes),
            3 => prop::sample::select(fixed).prop_map(<[u8]>::to_vec),
            1 => prop::collection::vec(any::<u8>(), 1..4),
        ]
    }

    /// std's verdict as [`check_utf8`] gives it.
    fn std_utf8(run: &[u8]) -> Result<usize, usize> {
        match std::str::from_utf8(run) {
            Ok(_) => Ok(run.len()),
            Err(e) if e.error_len().is_none() => Ok(e.valid_up_to()),
            Err(e) => Err(e.valid_up_to()),
        }
    }

    /// What [`super::content_len`] says of a whole run, a byte at a time: string
    /// content with two-byte escapes only, valid and complete UTF-8.
    fn content_ref(s: &[u8]) -> bool {
        let mut i = 0;
        while let Some(&c) = s.get(i) {
            match c {
                b'\\' => match s.get(i + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                    _ => return false,
                },
                b'"' | 0..=0x1F => return false,
                _ => i += 1,
            }
        }
        std::str::from_utf8(s).is_ok()
    }

    /// Every sequence of up to three bytes, alone and (a sample) after
    /// ASCII of every length up to a word and a half: the automaton for
    /// string content agrees with the walk a byte at a time.
    #[test]
    fn content_len_on_every_short_sequence() {
        let pad = b"abcdefghijkl";
        for x in 0..=0xFF_FFFFu32 {
            let b = x.to_le_bytes();
            for len in 1..=3 {
                let seq = &b[..len];
                assert_eq!(
                    super::content_len(seq) == Some(seq.len()),
                    content_ref(seq),
                    "{seq:x?}"
                );
            }
            if x % 61 == 0 {
                for p in 0..=pad.len() {
                    let run = [&pad[..p], &b[..3]].concat();
                    assert_eq!(
                        super::content_len(&run) == Some(run.len()),
                        content_ref(&run),
                        "{run:x?}"
                    );
                }
            }
        }
    }

    /// Every sequence of up to three bytes, and each after ASCII of every
    /// length up to a word and a half (the word skip): the character check
    /// agrees with std's.
    #[test]
    fn short_utf8_is_std_on_every_short_sequence() {
        let pad = b"abcdefghijkl";
        for x in 0..=0xFF_FFFFu32 {
            let b = x.to_le_bytes();
            for len in 1..=3 {
                let seq = &b[..len];
                assert_eq!(super::short_utf8(seq), std_utf8(seq), "{seq:x?}");
            }
            if x % 61 == 0 {
                for p in 0..=pad.len() {
                    let run = [&pad[..p], &b[..3]].concat();
                    assert_eq!(super::short_utf8(&run), std_utf8(&run), "{run:x?}");
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

        /// Content of every kind (escapes valid and not, quotes, control
        /// and non-ASCII characters) cut at every point: the automaton
        /// agrees with the walk a byte at a time.
        #[test]
        fn content_len_is_the_walk_and_the_scan(parts in prop::collection::vec(piece(), 0..24)) {
            let run = parts.concat();
            for cut in 0..=run.len() {
                let s = &run[..cut];
                let len = super::content_len(s);
                prop_assert_eq!(len == Some(s.len()), content_ref(s));
                // Where it answers, it is the scan's answer.
                if let Some(k) = len {
                    prop_assert_eq!(k, str_chunk(s, 0));
                    prop_assert_eq!(k, naive(s, 0));
                }
            }
        }

        /// Runs of any bytes and of text with non-ASCII characters, long
        /// and short: the check agrees with std's.
        #[test]
        fn check_utf8_is_std(parts in prop::collection::vec(piece(), 0..40)) {
            let run = parts.concat();
            for cut in 0..=run.len() {
                prop_assert_eq!(super::check_utf8(&run[..cut]), std_utf8(&run[..cut]));
            }
        }

        /// Both scans return what the scan a character at a time returns,
        /// from any start and with the input cut at any point (a chunk's
        /// end may fall inside a word, an escape or a character).
        #[test]
        fn scans_agree_at_every_cut(parts in prop::collection::vec(piece(), 0..24)) {
            let input = parts.concat();
            for cut in 0..=input.len() {
                let s = &input[..cut];
                for start in [0, 1, 7, cut / 3, cut / 2, cut.saturating_sub(9)] {
                    if start > cut {
                        continue;
                    }
                    prop_assert_eq!(str_body(s, start), naive(s, start));
                    prop_assert_eq!(str_chunk(s, start), naive(s, start));
                }
            }
        }

        /// Long runs (past the head, the checkpoints and their doubling):
        /// a text repeated, with one piece put in at a random place.
        #[test]
        fn long_runs_agree(
            unit in prop::collection::vec(piece(), 1..6),
            reps in 1usize..200,
            odd in piece(),
            at in any::<prop::sample::Index>(),
        ) {
            let mut input = unit.concat().repeat(reps);
            let k = at.index(input.len() + 1);
            input.splice(k..k, odd);
            for start in [0, 3, input.len() / 2] {
                if start > input.len() {
                    continue;
                }
                prop_assert_eq!(str_body(&input, start), naive(&input, start));
                prop_assert_eq!(str_chunk(&input, start), naive(&input, start));
            }
        }
    }
}
