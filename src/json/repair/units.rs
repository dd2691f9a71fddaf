//! The repairer's unit path: plain JSON read a whole unit per step where
//! the sink needs marks.
//!
//! The fast path ([`super::fast`]) serves sinks that take a container's
//! content in bulk, unmarked. Elsewhere (the envelope of a call: its keys,
//! its name, the opening of its arguments) every [`Mark`] matters, and the
//! slow path reads one token per step: a key is gathered in a buffer, its
//! closing quote held until the colon shows it was one, a string's closing
//! quote held until what follows shows it ended.
//!
//! When a unit is complete in the input and plain (a key with its colon, a
//! string value with the `,` `}` `]` that ends it, an opener, a closer, a
//! comma, blanks), the slow path's steps over it have one outcome: this path
//! takes them in one, making the same writes in the same order, the same
//! marks at the same offsets, no repair, and leaving the same state. Anything
//! else (a repair to make, a bare token, a number) is left to the slow path,
//! from the unit's first byte. A key or string value cut by the end of the
//! input is begun by the slow path, which holds or writes what it read; the
//! next input completes it here when it can ([`Repairer::resume_unit`]). The sink
//! is asked whether to halt after every mark, as the slow path asks after
//! every step (a sink decides on marks: its writes are cut wherever the
//! chunks were cut), and the opaque fast path takes over as soon as the
//! sink becomes opaque.
//!
//! A sink that wants the slow path's own steps (the reference reading in
//! tests) says so with [`Sink::step_by_step`].

use super::fast::{skip_ws, str_body};
use super::{
    closer_of, comma_tail, Esc, Frame, Kind, Lex, Mark, Pos, Quote, Repairer, Sink, Status,
    ValueKind,
};

/// What [`Repairer::units`] did.
pub(super) enum Units {
    /// Read this many bytes (0: the next byte is for another path).
    Read(usize),
    /// Read this many bytes, and the value stopped there.
    Stop(usize, Status),
}

impl Repairer {
    /// True when the unit path may start: a structural position with nothing
    /// held but a comma (and its blanks), or inside a unit the slow path
    /// began (a chunk ended inside it: see [`Repairer::resume_unit`]).
    #[inline]
    pub(super) fn units_ready(&self) -> bool {
        if self.utf8_len != 0 || self.lt_once {
            return false;
        }
        match self.lex {
            Lex::None => matches!(
                self.pos,
                Pos::Value | Pos::ObjKey | Pos::AfterValue | Pos::AfterKey
            ),
            Lex::Str(s) => {
                s.quote == Quote::Double && s.esc == Esc::None && !s.tail && self.inline == 0
            }
            _ => false,
        }
    }

    /// Completes the unit the slow path began when a chunk ended inside it
    /// (a key before or after its closing quote, or before its colon; a
    /// string value inside, or after its closing quote), when this input
    /// completes it as plain JSON: the slow path's writes and marks for the
    /// rest of the unit, from what it held. Returns the bytes read (0: none,
    /// the slow path goes on) and whether a mark was made.
    fn resume_unit<S: Sink + ?Sized>(&mut self, input: &[u8], sink: &mut S) -> (usize, bool) {
        let n = input.len();
        let at = |i: usize| self.offset + i as u64;
        match self.lex {
            Lex::None => {
                if self.pos != Pos::AfterKey {
                    return (0, false);
                }
                // `"key"` and its blanks held: blanks, then the colon.
                let j = skip_ws(input, 0);
                if j >= n || input[j] != b':' || self.key.len() + j > self.max_token {
                    return (0, false);
                }
                self.key.extend_from_slice(&input[..j]);
                self.write_key(sink, at(j));
                (j + 1, true)
            }
            Lex::Str(s) if s.key => {
                // The key's content so far is held (with its opening quote).
                let close = if s.quote_pending {
                    0
                } else {
                    if self.key_truncated {
                        return (0, false);
                    }
                    let k = str_body(input, 0);
                    if k >= n || input[k] != b'"' {
                        return (0, false);
                    }
                    k + 1
                };
                let j = skip_ws(input, close);
                let held = self.key.len() + usize::from(s.quote_pending) + self.quote_ws.len();
                if j >= n || input[j] != b':' || held + j > self.max_token {
                    return (0, false);
                }
                if s.quote_pending {
                    self.key.push(b'"');
                    self.key_len = self.key.len();
                    self.key.extend_from_slice(&self.quote_ws);
                    self.quote_ws.clear();
                } else {
                    self.key.extend_from_slice(&input[..close]);
                    self.key_len = self.key.len();
                }
                self.key.extend_from_slice(&input[close..j]);
                self.lex = Lex::None;
                self.write_key(sink, at(j));
                (j + 1, true)
            }
            Lex::Str(s) => {
                // A string value: its content, closing quote and blanks,
                // ended by `,` `}` `]` (not read here).
                if self.stack.is_empty() {
                    return (0, false);
                }
                let close = if s.quote_pending {
                    0
                } else {
                    let k = str_body(input, 0);
                    let closes = k < n && input[k] == b'"' && {
                        let j = skip_ws(input, k + 1);
                        j < n
                            && matches!(input[j], b',' | b'}' | b']')
                            && j - (k + 1) <= self.max_token
                    };
                    if !closes {
                        // Content only (or up to what the slow path must
                        // see: the closing quote too, when it does not end
                        // the string here), written as the slow path writes
                        // it; a `,` and blanks ending the content are the
                        // slow path's to hold (see `StrLex::tail`).
                        let tail = comma_tail(&input[..k], self.max_token);
                        if k > tail {
                            sink.write(&input[..k - tail]);
                        }
                        return (k - tail, false);
                    }
                    if k > 0 {
                        sink.write(&input[..k]);
                    }
                    k + 1
                };
                let j = skip_ws(input, close);
                if j >= n
                    || !matches!(input[j], b',' | b'}' | b']')
                    || self.quote_ws.len() + (j - close) > self.max_token
                {
                    // The closing quote (if read) stays for the slow path.
                    return (close.saturating_sub(1), false);
                }
                sink.write(b"\"");
                sink.mark(Mark::End(ValueKind::String), at(j));
                self.lex = Lex::None;
                self.after_value();
                if !self.quote_ws.is_empty() {
                    sink.write(&self.quote_ws);
                    self.quote_ws.clear();
                }
                if j > close {
                    sink.write(&input[close..j]);
                }
                (j, true)
            }
            _ => (0, false),
        }
    }

    /// Reads whole plain units from the start of `input` (see the module
    /// docs), as long as there are some and the sink is not opaque. Keeps
    /// `offset` up to date.
    pub(super) fn units<S: Sink + ?Sized>(&mut self, input: &[u8], sink: &mut S) -> Units {
        let base = self.offset;
        let n = input.len();
        let at = |i: usize| base + i as u64;
        // After a unit that made a mark: halt if the sink says so (`$end`
        // bytes read), end at the value's end, hand over when the sink
        // became opaque.
        macro_rules! after_mark {
            ($end:expr) => {{
                let end = $end;
                if sink.halted() {
                    self.offset = at(end);
                    return Units::Stop(end, Status::Halted);
                }
                if self.pos == Pos::Done && matches!(self.lex, Lex::None) {
                    self.offset = at(end);
                    return Units::Stop(end, Status::Done);
                }
                if sink.opaque() {
                    self.offset = at(end);
                    return Units::Read(end);
                }
            }};
        }
        let (mut i, marked) = self.resume_unit(input, sink);
        if marked {
            after_mark!(i);
        }
        if !matches!(self.lex, Lex::None) || self.pos == Pos::AfterKey {
            self.offset = at(i);
            return Units::Read(i);
        }
        while i < n {
            match input[i] {
                b' ' | b'\t' | b'\n' | b'\r' => {
                    let j = skip_ws(input, i);
                    let ws = &input[i..j];
                    if self.comma.is_some() {
                        // Held with the comma (the slow path keeps at most
                        // `max_token` of them: a longer run is its to cut).
                        if self.comma_ws.len() + ws.len() > self.max_token {
                            break;
                        }
                        self.comma_ws.extend_from_slice(ws);
                    } else if self.begun {
                        sink.write(ws);
                    }
                    i = j;
                }
                b',' => {
                    if self.pos != Pos::AfterValue {
                        break;
                    }
                    self.comma = Some(at(i));
                    self.pos = match self.stack.last().map(|f| f.kind) {
                        Some(Kind::Obj) => Pos::ObjKey,
                        _ => Pos::Value,
                    };
                    i += 1;
                }
                b @ (b'{' | b'[') => {
                    if self.pos != Pos::Value || self.stack.len() >= self.max_depth {
                        break;
                    }
                    let (kind, vk, out): (Kind, ValueKind, &[u8]) = if b == b'{' {
                        (Kind::Obj, ValueKind::Object, b"{")
                    } else {
                        (Kind::Arr, ValueKind::Array, b"[")
                    };
                    self.begun = true;
                    self.flush_comma(sink);
                    sink.mark(Mark::Begin(vk), at(i));
                    sink.write(out);
                    self.stack.push(Frame {
                        kind,
                        tuple: false,
                        phantoms: 0,
                    });
                    self.pos = if kind == Kind::Obj {
                        Pos::ObjKey
                    } else {
                        Pos::Value
                    };
                    i += 1;
                    after_mark!(i);
                }
                b @ (b'}' | b']') => {
                    let kind = if b == b'}' { Kind::Obj } else { Kind::Arr };
                    let Some(top) = self.stack.last() else { break };
                    // An empty container, or after a value; nothing held.
                    let empty = match kind {
                        Kind::Obj => self.pos == Pos::ObjKey,
                        Kind::Arr => self.pos == Pos::Value,
                    };
                    if top.kind != kind
                        || top.tuple
                        || top.phantoms > 0
                        || self.comma.is_some()
                        || !self.comma_ws.is_empty()
                        || !(self.pos == Pos::AfterValue || empty)
                    {
                        break;
                    }
                    self.stack.pop();
                    let (out, vk) = closer_of(kind);
                    sink.write(out);
                    sink.mark(Mark::End(vk), at(i));
                    self.after_value();
                    i += 1;
                    after_mark!(i);
                }
                b'"' if self.pos == Pos::ObjKey => {
                    // A member: `"key"`, blanks, `:`. The key and its blanks
                    // fit the key buffer (`max_token`), as the slow path
                    // holds them.
                    let k = str_body(input, i + 1);
                    if k >= n || input[k] != b'"' {
                        break;
                    }
                    let j = skip_ws(input, k + 1);
                    if j >= n || input[j] != b':' || j - i > self.max_token {
                        break;
                    }
                    self.begun = true;
                    self.flush_comma(sink);
                    sink.mark(Mark::Key(&input[i..=k]), at(j));
                    // The key, its blanks and the colon (`input[j]`), in
                    // one write.
                    sink.write(&input[i..=j]);
                    self.pos = Pos::Value;
                    i = j + 1;
                    after_mark!(i);
                }
                b'"' if self.pos == Pos::Value && !self.stack.is_empty() => {
                    // A string value and the blanks after it, ended by the
                    // `,` `}` `]` that follows (read by the next unit).
                    let k = str_body(input, i + 1);
                    if k >= n || input[k] != b'"' {
                        break;
                    }
                    let j = skip_ws(input, k + 1);
                    if j >= n || !matches!(input[j], b',' | b'}' | b']') || j - k > self.max_token {
                        break;
                    }
                    self.begun = true;
                    self.flush_comma(sink);
                    sink.mark(Mark::Begin(ValueKind::String), at(i));
                    // (A sink halts on marks, not on writes: asked here,
                    // it answers as it would after the opening quote.)
                    if sink.halted() {
                        // The slow path stops right after the opening quote,
                        // inside the string.
                        sink.write(b"\"");
                        self.lex = Lex::Str(super::StrLex::plain());
                        self.offset = at(i + 1);
                        return Units::Stop(i + 1, Status::Halted);
                    }
                    // The string, quotes included, in one write.
                    sink.write(&input[i..=k]);
                    sink.mark(Mark::End(ValueKind::String), at(j));
                    self.after_value();
                    if j > k + 1 {
                        sink.write(&input[k + 1..j]);
                    }
                    i = j;
                    after_mark!(i);
                }
                _ => break,
            }
        }
        self.offset = at(i);
        Units::Read(i)
    }
}
