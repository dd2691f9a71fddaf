//! One XML parameter value on its way into the arguments JSON.
//!
//! Content bytes go through three stages, each holding back only what it
//! must:
//!
//! 1. **References** (only with [`crate::Config::decode_entities`]): a
//!    partial `&…;` at the end of a chunk is held until it can be decoded.
//! 2. **Whitespace** ([`Ws`]): the dialect's rule. Qwen3-Coder and Seed-OSS
//!    drop exactly one leading and one trailing newline (`\n` or `\r\n`), so
//!    a trailing newline is held until something follows it; MiniMax and the
//!    XML emulations trim all surrounding whitespace, so a trailing blank run
//!    is held; GLM, DSML and Step-3 keep the value exactly.
//! 3. **Typing** ([`Ty`]): a value that is a string is streamed as soon as it
//!    arrives, JSON-escaped (a UTF-8 character split by a chunk is completed
//!    first). A value that may still become a number, literal, object or array
//!    cannot be written as a string before that is known, so it is held:
//!
//!    * schema `string` (or DSML `string="true"`): streamed from the first byte;
//!    * schema `object` / `array` (or DSML `string="false"`): a value starting
//!      with `{` or `[` is streamed through the JSON [`Repairer`] (its repairs
//!      are kept); anything else is read as untyped;
//!    * schema `integer` / `number` / `boolean` / `null`: held (at most
//!      [`SCALAR_HOLD`] bytes, then it is a string) and coerced at the end:
//!      `20` → `20`, `"20"` or `20.0` → `20` for integers, `True` → `true`;
//!      a value that cannot be coerced keeps its natural reading (below);
//!    * no schema: a value whose first non-blank byte can start a JSON number,
//!      literal, object or array is held while a strict JSON check (the
//!      repairer, which must make no repair) accepts it; the first byte that
//!      shows it is not strict JSON turns it into a string, streamed from then
//!      on. At the end, a value that is entirely strict JSON is that value,
//!      anything else (including `"quoted"` text) a string. A value still valid
//!      after `max_token_bytes` is committed to JSON and streamed.
//!
//! Coercions that change what the model wrote (`"20"` → `20`, `True` →
//! `true`, `20.0` → `20`) are recorded as [`RepairKind::TypeCoercion`];
//! reading `20` as a number is not a repair.

use crate::config::Limits;
use crate::dialect::args::{check_utf8, escape_content};
use crate::event::{Repair, RepairKind};
use crate::json::{is_json_number, Repairer, Status};

/// Longest value held for a scalar schema type before it is taken as a string.
pub(crate) const SCALAR_HOLD: usize = 64;

/// A dialect's whitespace rule for values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ws {
    /// The value is exactly what is between the tags.
    Exact,
    /// One leading and one trailing newline are dropped (Qwen3-Coder, Seed-OSS).
    OneNewline,
    /// Leading and trailing whitespace is dropped (MiniMax, XML emulations).
    Trim,
}

/// The type a value should get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    /// A string, streamed as it arrives.
    Str,
    /// JSON text expected (`object`, `array`, DSML `string="false"`).
    Json,
    /// Schema `integer`.
    Integer,
    /// Schema `number`.
    Number,
    /// Schema `boolean`.
    Boolean,
    /// Schema `null`.
    Null,
    /// No schema.
    Auto,
}

impl Ty {
    /// The type a JSON-schema type name asks for.
    pub(crate) fn from_schema(t: Option<&str>) -> Ty {
        match t {
            Some("string") => Ty::Str,
            Some("integer") => Ty::Integer,
            Some("number") => Ty::Number,
            Some("boolean") => Ty::Boolean,
            Some("null") => Ty::Null,
            Some("object" | "array") => Ty::Json,
            _ => Ty::Auto,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// No content byte decided the mode yet (leading blanks are in `held`).
    Start,
    /// Writing a JSON string; the opening quote is written.
    Str,
    /// Holding the raw content (`held`) until the type is known.
    Hold,
    /// Streaming through the repairer into the output.
    Json,
}

/// One value being converted.
#[derive(Debug)]
pub(crate) struct Value {
    ty: Ty,
    ws: Ws,
    decode: bool,
    /// A partial reference (`&am`) held by stage 1, and where it began.
    ent: Vec<u8>,
    ent_at: u64,
    /// Stage 2: the leading rule has been applied.
    lead_done: bool,
    /// Stage 2 (`OneNewline`): the value began with `\r`; a `\n` may follow.
    lead_cr: bool,
    /// Stage 2: held trailing bytes, and where they began.
    tail: Vec<u8>,
    tail_at: u64,
    mode: Mode,
    held: Vec<u8>,
    rep: Option<Box<Repairer>>,
    /// The validator's output while holding.
    scratch: Vec<u8>,
    /// The validator finished a complete value; only blanks may follow.
    rep_done: bool,
    /// The repairer stopped inside the value (a limit): it reads nothing
    /// more, so its offset, where its closing repairs are recorded, stays
    /// where it stopped however the rest arrives.
    rep_stopped: bool,
    /// A partial UTF-8 character waiting for its continuation bytes.
    utf8: Vec<u8>,
    /// The input offset of `utf8[0]`.
    utf8_at: u64,
    /// The input offset just past the held bytes (`held`), as far as it is
    /// known (reference decoding changes lengths).
    held_end: u64,
    hold_max: usize,
    limits: Limits,
    /// Absolute offset of the value's first content byte: where repairs
    /// about the value as a whole are recorded.
    start_at: Option<u64>,
    /// A trailing-garbage repair was recorded.
    garbage_noted: bool,
    /// Repairs made in this value.
    pub(crate) repairs: Vec<Repair>,
}

impl Value {
    /// The value may be any text: a string, or untyped (no schema). Only
    /// such a value can hold a literal tag of the dialect as content.
    pub(crate) fn may_be_text(&self) -> bool {
        matches!(self.ty, Ty::Str | Ty::Auto)
    }

    pub(crate) fn new(ty: Ty, ws: Ws, decode: bool, limits: &Limits) -> Value {
        Value {
            ty,
            ws,
            decode,
            ent: Vec::new(),
            ent_at: 0,
            lead_done: false,
            lead_cr: false,
            tail: Vec::new(),
            tail_at: 0,
            mode: Mode::Start,
            held: Vec::new(),
            rep: None,
            scratch: Vec::new(),
            rep_done: false,
            rep_stopped: false,
            utf8: Vec::new(),
            utf8_at: 0,
            held_end: 0,
            hold_max: limits.max_token_bytes.max(16),
            limits: limits.clone(),
            start_at: None,
            garbage_noted: false,
            repairs: Vec::new(),
        }
    }

    /// Writes what the value's type lets be written before any content
    /// (the opening quote of a string).
    pub(crate) fn begin(&mut self, out: &mut impl ValueOut) {
        if self.ty == Ty::Str {
            out.bytes().push(b'"');
            self.mode = Mode::Str;
        }
    }

    /// Content bytes from the input, starting at absolute offset `at`.
    pub(crate) fn push(&mut self, bytes: &[u8], at: u64, out: &mut impl ValueOut) {
        if bytes.is_empty() {
            return;
        }
        self.start_at.get_or_insert(at);
        if !self.decode {
            self.stage2(bytes, at, out);
            return;
        }
        let mut b = bytes;
        let mut at = at;
        if !self.ent.is_empty() {
            let old = self.ent.len();
            let take = b.len().min(12usize.saturating_sub(old));
            let mut buf = std::mem::take(&mut self.ent);
            buf.extend_from_slice(&b[..take]);
            match crate::xml::decode_entity(&buf) {
                Ok((c, n)) => {
                    self.decoded(c, self.ent_at, out);
                    let used = n.saturating_sub(old).min(b.len());
                    b = &b[used..];
                    at += used as u64;
                }
                Err(true) if take == b.len() => {
                    self.ent = buf;
                    return;
                }
                Err(_) => {
                    // Not a reference: the held bytes are text.
                    self.stage2(&buf[..old], self.ent_at, out);
                }
            }
        }
        let mut i = 0;
        while i < b.len() {
            let here = at + i as u64;
            match memchr::memchr(b'&', &b[i..]) {
                None => {
                    self.stage2(&b[i..], here, out);
                    return;
                }
                Some(p) => {
                    self.stage2(&b[i..i + p], here, out);
                    i += p;
                    let amp = at + i as u64;
                    match crate::xml::decode_entity(&b[i..]) {
                        Ok((c, n)) => {
                            self.decoded(c, amp, out);
                            i += n;
                        }
                        Err(true) => {
                            self.ent.extend_from_slice(&b[i..]);
                            self.ent_at = amp;
                            return;
                        }
                        Err(false) => {
                            self.stage2(b"&", amp, out);
                            i += 1;
                        }
                    }
                }
            }
        }
    }

    fn decoded(&mut self, c: char, at: u64, out: &mut impl ValueOut) {
        self.repairs.push(Repair {
            kind: RepairKind::EntityDecoded,
            offset: at,
        });
        let mut buf = [0u8; 4];
        self.stage2(c.encode_utf8(&mut buf).as_bytes(), at, out);
    }

    /// Writes `bytes` — content without `<` or `&` — as [`Value::push`]
    /// would, when that is only to escape them into the string being
    /// streamed: the value is a string with nothing held (no reference, no
    /// trailing newline or blanks, no partial character), `bytes` is
    /// complete UTF-8 and does not end in what the whitespace rule holds.
    /// False, and nothing done, otherwise: [`Value::push`]'s business.
    pub(crate) fn push_plain(&mut self, bytes: &[u8], at: u64, out: &mut impl ValueOut) -> bool {
        let Some(&last) = bytes.last() else {
            return false;
        };
        let held_last = match self.ws {
            Ws::Exact => false,
            Ws::OneNewline => matches!(last, b'\n' | b'\r'),
            Ws::Trim => last.is_ascii_whitespace(),
        };
        if self.mode != Mode::Str
            || !self.lead_done
            || held_last
            || !self.ent.is_empty()
            || !self.tail.is_empty()
            || !self.utf8.is_empty()
            || check_utf8(bytes).is_err()
        {
            return false;
        }
        self.start_at.get_or_insert(at);
        out.escape_valid(bytes);
        true
    }

    /// Content that is never reference-decoded (CDATA).
    pub(crate) fn push_literal(&mut self, bytes: &[u8], at: u64, out: &mut impl ValueOut) {
        if bytes.is_empty() {
            return;
        }
        self.start_at.get_or_insert(at);
        if !self.ent.is_empty() {
            let held = std::mem::take(&mut self.ent);
            self.stage2(&held, self.ent_at, out);
        }
        self.stage2(bytes, at, out);
    }

    /// Records a repair about the value as a whole (or at `at` if it has no content yet).
    pub(crate) fn note(&mut self, kind: RepairKind, at: u64) {
        let offset = self.start_at.unwrap_or(at);
        self.repairs.push(Repair { kind, offset });
    }

    /// Stage 2: the whitespace rule. `at` is the offset of `bytes[0]`.
    fn stage2(&mut self, bytes: &[u8], at: u64, out: &mut impl ValueOut) {
        let mut b = bytes;
        let mut at = at;
        if b.is_empty() {
            return;
        }
        if !self.lead_done {
            let before = b.len();
            match self.ws {
                Ws::Exact => self.lead_done = true,
                Ws::OneNewline => {
                    if self.lead_cr {
                        self.lead_cr = false;
                        self.lead_done = true;
                        if b[0] == b'\n' {
                            b = &b[1..];
                        }
                    } else if b[0] == b'\n' {
                        b = &b[1..];
                        self.lead_done = true;
                    } else if b[0] == b'\r' {
                        if b.len() == 1 {
                            self.lead_cr = true;
                            return;
                        }
                        b = &b[1..];
                        if b[0] == b'\n' {
                            b = &b[1..];
                        }
                        self.lead_done = true;
                    } else {
                        self.lead_done = true;
                    }
                }
                Ws::Trim => {
                    let k = b
                        .iter()
                        .position(|c| !c.is_ascii_whitespace())
                        .unwrap_or(b.len());
                    b = &b[k..];
                    if b.is_empty() {
                        return;
                    }
                    self.lead_done = true;
                }
            }
            at += (before - b.len()) as u64;
            if b.is_empty() {
                return;
            }
        }
        match self.ws {
            Ws::Exact => self.stage3(b, at, out),
            Ws::OneNewline => {
                if !self.tail.is_empty() {
                    if self.tail == b"\r" && b == b"\n" {
                        self.tail.push(b'\n');
                        return;
                    }
                    // Not the last newline after all.
                    let t = std::mem::take(&mut self.tail);
                    self.stage3(&t, self.tail_at, out);
                }
                let keep = if b.ends_with(b"\r\n") {
                    2
                } else if b.ends_with(b"\n") || b.ends_with(b"\r") {
                    1
                } else {
                    0
                };
                let (body, tail) = b.split_at(b.len() - keep);
                self.stage3(body, at, out);
                self.tail.extend_from_slice(tail);
                self.tail_at = at + body.len() as u64;
            }
            Ws::Trim => {
                let k = b
                    .iter()
                    .rposition(|c| !c.is_ascii_whitespace())
                    .map_or(0, |p| p + 1);
                if k == 0 {
                    if self.tail.is_empty() {
                        self.tail_at = at;
                    }
                    self.tail.extend_from_slice(b);
                    return;
                }
                if !self.tail.is_empty() {
                    let t = std::mem::take(&mut self.tail);
                    self.stage3(&t, self.tail_at, out);
                }
                self.stage3(&b[..k], at, out);
                self.tail.extend_from_slice(&b[k..]);
                self.tail_at = at + k as u64;
            }
        }
    }

    /// Stage 3: typing. `at` is the offset of `bytes[0]`.
    fn stage3(&mut self, bytes: &[u8], at: u64, out: &mut impl ValueOut) {
        let mut b = bytes;
        let mut at = at;
        while !b.is_empty() {
            match self.mode {
                Mode::Start => {
                    let k = b
                        .iter()
                        .position(|c| !c.is_ascii_whitespace())
                        .unwrap_or(b.len());
                    self.held.extend_from_slice(&b[..k]);
                    b = &b[k..];
                    at += k as u64;
                    self.held_end = at;
                    let Some(&first) = b.first() else {
                        return;
                    };
                    let json_start =
                        matches!(first, b'-' | b'0'..=b'9' | b't' | b'f' | b'n' | b'{' | b'[');
                    match self.ty {
                        Ty::Str => self.become_str(out),
                        Ty::Json if first == b'{' || first == b'[' => {
                            self.rep = Some(Box::new(
                                Repairer::with_limits(&self.limits)
                                    .one_call(self.limits.max_repairs),
                            ));
                            self.held.clear();
                            self.mode = Mode::Json;
                        }
                        Ty::Integer | Ty::Number | Ty::Boolean | Ty::Null => self.mode = Mode::Hold,
                        Ty::Json | Ty::Auto if json_start => {
                            self.rep = Some(Box::new(
                                Repairer::with_limits(&self.limits)
                                    .one_call(self.limits.max_repairs),
                            ));
                            self.mode = Mode::Hold;
                        }
                        _ => self.become_str(out),
                    }
                }
                Mode::Str => {
                    self.escape(b, at, out);
                    return;
                }
                Mode::Json => {
                    self.json(b, at, out);
                    return;
                }
                Mode::Hold => {
                    let Some(rep) = self.rep.as_mut() else {
                        // A scalar type: hold up to SCALAR_HOLD bytes.
                        let room = SCALAR_HOLD.saturating_sub(self.held.len());
                        let k = room.min(b.len());
                        self.held.extend_from_slice(&b[..k]);
                        b = &b[k..];
                        at += k as u64;
                        self.held_end = at;
                        if !b.is_empty() {
                            self.become_str(out);
                        }
                        continue;
                    };
                    let room = self.hold_max.saturating_sub(self.held.len());
                    let k = room.min(b.len());
                    let part = &b[..k];
                    self.held.extend_from_slice(part);
                    let mut invalid = false;
                    if self.rep_done {
                        invalid = part.iter().any(|c| !c.is_ascii_whitespace());
                    } else {
                        rep.set_offset(at);
                        let p = rep.feed(part, &mut self.scratch);
                        match p.status {
                            Status::NeedMore => {}
                            Status::Done => {
                                self.rep_done = true;
                                invalid =
                                    part[p.consumed..].iter().any(|c| !c.is_ascii_whitespace());
                            }
                            Status::Stop | Status::Halted | Status::Limit => invalid = true,
                        }
                        invalid |= !rep.repairs().is_empty();
                    }
                    b = &b[k..];
                    at += k as u64;
                    self.held_end = at;
                    if invalid {
                        self.rep = None;
                        self.scratch.clear();
                        self.become_str(out);
                    } else if !b.is_empty() {
                        // Held as much as allowed and still valid: it is JSON.
                        out.bytes().extend_from_slice(&self.scratch);
                        self.scratch.clear();
                        self.held.clear();
                        self.mode = Mode::Json;
                    }
                }
            }
        }
    }

    /// Switches to a string: writes the quote and the held content.
    fn become_str(&mut self, out: &mut impl ValueOut) {
        out.bytes().push(b'"');
        self.mode = Mode::Str;
        let held = std::mem::take(&mut self.held);
        let at = self.held_end.saturating_sub(held.len() as u64);
        self.escape(&held, at, out);
    }

    fn json(&mut self, b: &[u8], at: u64, out: &mut impl ValueOut) {
        let Some(rep) = self.rep.as_mut() else { return };
        let rest = if rep.is_done() {
            0
        } else if self.rep_stopped {
            return;
        } else {
            rep.set_offset(at);
            let p = rep.feed(b, out.bytes());
            match p.status {
                Status::Done => p.consumed,
                Status::NeedMore => return,
                Status::Stop | Status::Halted | Status::Limit => {
                    self.rep_stopped = true;
                    return;
                }
            }
        };
        if let Some(g) = b[rest..].iter().position(|c| !c.is_ascii_whitespace()) {
            if !self.garbage_noted {
                self.garbage_noted = true;
                self.repairs.push(Repair {
                    kind: RepairKind::TrailingGarbage,
                    offset: at + (rest + g) as u64,
                });
            }
        }
    }

    /// Writes string content, JSON-escaped, never splitting a UTF-8
    /// character; `at` is the input offset of `bytes[0]`. Each sequence that
    /// is not UTF-8 is written as U+FFFD with an `invalid_utf8` repair at
    /// its own offset.
    fn escape(&mut self, bytes: &[u8], at: u64, out: &mut impl ValueOut) {
        let joined;
        let mut at = at;
        let mut s: &[u8] = if self.utf8.is_empty() {
            bytes
        } else {
            at = self.utf8_at;
            let mut j = std::mem::take(&mut self.utf8);
            j.extend_from_slice(bytes);
            joined = j;
            &joined
        };
        loop {
            match check_utf8(s) {
                Ok(()) => {
                    out.escape_valid(s);
                    return;
                }
                Err((good, error_len)) => {
                    out.escape_valid(&s[..good]);
                    match error_len {
                        None => {
                            self.utf8_at = at + good as u64;
                            self.utf8.extend_from_slice(&s[good..]);
                            return;
                        }
                        Some(n) => {
                            out.bytes().extend_from_slice("\u{FFFD}".as_bytes());
                            self.repairs.push(Repair {
                                kind: RepairKind::InvalidUtf8,
                                offset: at + good as u64,
                            });
                            s = &s[good + n..];
                            at += (good + n) as u64;
                        }
                    }
                }
            }
        }
    }

    /// The value ended. `out` receives what completes it.
    pub(crate) fn finish(&mut self, out: &mut impl ValueOut) {
        if !self.ent.is_empty() {
            let held = std::mem::take(&mut self.ent);
            self.stage2(&held, self.ent_at, out);
        }
        // Stage 2: the held trailing newline or blanks are dropped.
        self.tail.clear();
        match self.mode {
            Mode::Start => {
                self.become_str(out);
                self.close_str(out);
            }
            Mode::Str => self.close_str(out),
            Mode::Json => {
                if let Some(mut rep) = self.rep.take() {
                    rep.finish(out.bytes());
                    self.repairs.extend(rep.take_repairs());
                }
            }
            Mode::Hold => match self.rep.take() {
                Some(mut rep) => {
                    rep.finish(&mut self.scratch);
                    if rep.repairs().is_empty() && rep.has_begun() {
                        out.bytes().extend_from_slice(&self.scratch);
                    } else {
                        self.become_str(out);
                        self.close_str(out);
                    }
                }
                None => match coerce(self.ty, &self.held) {
                    Some((json, coerced)) => {
                        if coerced {
                            self.note(RepairKind::TypeCoercion, 0);
                        }
                        out.bytes().extend_from_slice(&json);
                    }
                    None => {
                        self.become_str(out);
                        self.close_str(out);
                    }
                },
            },
        }
    }

    fn close_str(&mut self, out: &mut impl ValueOut) {
        if !self.utf8.is_empty() {
            self.utf8.clear();
            out.bytes().extend_from_slice("\u{FFFD}".as_bytes());
            self.repairs.push(Repair {
                kind: RepairKind::InvalidUtf8,
                offset: self.utf8_at,
            });
        }
        out.bytes().push(b'"');
    }
}

/// Where a value is written: the call's arguments, or any byte buffer.
pub(crate) trait ValueOut {
    /// The bytes written last, to append to.
    fn bytes(&mut self) -> &mut Vec<u8>;

    /// Appends `b` (valid UTF-8) as JSON string content.
    #[inline]
    fn escape_valid(&mut self, b: &[u8]) {
        escape_bytes(b, self.bytes());
    }
}

impl ValueOut for Vec<u8> {
    #[inline]
    fn bytes(&mut self) -> &mut Vec<u8> {
        self
    }
}

/// Escapes string content (valid UTF-8) for a JSON string.
pub(crate) fn escape_bytes(s: &[u8], out: &mut Vec<u8>) {
    escape_content(s, out, false);
}

/// Escapes a whole string (a name or key) into a JSON string literal.
pub(crate) fn json_string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    escape_bytes(s.as_bytes(), out);
    out.push(b'"');
}

fn unquote(t: &[u8]) -> Option<&[u8]> {
    if t.len() >= 2 && (t[0] == b'"' || t[0] == b'\'') && t[t.len() - 1] == t[0] {
        Some(&t[1..t.len() - 1])
    } else {
        None
    }
}

fn is_null_word(t: &[u8]) -> bool {
    matches!(t, b"null" | b"None" | b"NULL" | b"Null" | b"nil")
}

/// Reads `t` as a number the way a schema asking for one would: `+5`,
/// `.5`, `5.`, `"5"`. Returns the JSON text, or `None`.
fn number_text(t: &[u8], integer: bool) -> Option<Vec<u8>> {
    let t = unquote(t).unwrap_or(t).trim_ascii();
    let s = std::str::from_utf8(t).ok()?;
    if s.is_empty()
        || !s
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
    {
        return None;
    }
    let v: f64 = s.parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    if v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15 {
        return Some(format!("{}", v as i64).into_bytes());
    }
    if integer {
        return None;
    }
    Some(format!("{v}").into_bytes())
}

/// Coerces the held text of a scalar-typed value. Returns the JSON and
/// whether that changed what the model wrote; `None` keeps it a string.
fn coerce(ty: Ty, raw: &[u8]) -> Option<(Vec<u8>, bool)> {
    let t = raw.trim_ascii();
    if t.is_empty() {
        return None;
    }
    let natural = || -> Option<(Vec<u8>, bool)> {
        if is_json_number(t) || matches!(t, b"true" | b"false" | b"null") {
            Some((t.to_vec(), false))
        } else {
            None
        }
    };
    if is_null_word(t) {
        return Some((b"null".to_vec(), t != b"null"));
    }
    match ty {
        Ty::Integer => {
            if is_json_number(t) && t.iter().all(|b| b.is_ascii_digit() || *b == b'-') {
                return Some((t.to_vec(), false));
            }
            match number_text(t, true) {
                Some(n) => Some((n, true)),
                None => natural(),
            }
        }
        Ty::Number => {
            if is_json_number(t) {
                return Some((t.to_vec(), false));
            }
            match number_text(t, false) {
                Some(n) => Some((n, true)),
                None => natural(),
            }
        }
        Ty::Boolean => {
            if t == b"true" || t == b"false" {
                return Some((t.to_vec(), false));
            }
            let inner = unquote(t).unwrap_or(t).trim_ascii();
            if inner.eq_ignore_ascii_case(b"true") {
                Some((b"true".to_vec(), true))
            } else if inner.eq_ignore_ascii_case(b"false") {
                Some((b"false".to_vec(), true))
            } else {
                natural()
            }
        }
        _ => natural(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ty: Ty, ws: Ws, decode: bool, pieces: &[&[u8]]) -> (String, Vec<RepairKind>) {
        let mut v = Value::new(ty, ws, decode, &Limits::default());
        let mut out = Vec::new();
        v.begin(&mut out);
        // Each piece at its absolute offset, as the reader passes them.
        let mut at = 0;
        for p in pieces {
            v.push(p, at, &mut out);
            at += p.len() as u64;
        }
        v.finish(&mut out);
        (
            String::from_utf8(out).unwrap(),
            v.repairs.iter().map(|r| r.kind).collect(),
        )
    }

    fn all_splits(ty: Ty, ws: Ws, decode: bool, s: &[u8]) -> (String, Vec<RepairKind>) {
        let whole = run(ty, ws, decode, &[s]);
        for k in 0..=s.len() {
            let (a, b) = s.split_at(k);
            assert_eq!(
                run(ty, ws, decode, &[a, b]),
                whole,
                "split at {k} of {:?}",
                String::from_utf8_lossy(s)
            );
        }
        let bytes: Vec<&[u8]> = s.chunks(1).collect();
        assert_eq!(run(ty, ws, decode, &bytes), whole);
        whole
    }

    #[test]
    fn whitespace_rules() {
        assert_eq!(
            all_splits(Ty::Str, Ws::OneNewline, false, b"\nHangzhou\n").0,
            r#""Hangzhou""#
        );
        assert_eq!(
            all_splits(Ty::Str, Ws::OneNewline, false, b"\r\n\nx\n\n").0,
            r#""\nx\n""#
        );
        assert_eq!(
            all_splits(Ty::Str, Ws::OneNewline, false, b"\r\nx\r\n").0,
            r#""x""#
        );
        assert_eq!(
            all_splits(Ty::Str, Ws::Trim, false, b"  a b \n ").0,
            r#""a b""#
        );
        assert_eq!(
            all_splits(Ty::Str, Ws::Exact, false, b" a\n").0,
            r#"" a\n""#
        );
        assert_eq!(
            all_splits(Ty::Auto, Ws::OneNewline, false, b"\n\n").0,
            r#""""#
        );
    }

    #[test]
    fn untyped_values() {
        assert_eq!(all_splits(Ty::Auto, Ws::OneNewline, false, b"\n3\n").0, "3");
        assert_eq!(
            all_splits(Ty::Auto, Ws::Exact, false, b"[1, \"a\", true]").0,
            r#"[1, "a", true]"#
        );
        assert_eq!(
            all_splits(Ty::Auto, Ws::Exact, false, b"-2.5e3").0,
            "-2.5e3"
        );
        assert_eq!(
            all_splits(Ty::Auto, Ws::Exact, false, b"3 apples").0,
            r#""3 apples""#
        );
        assert_eq!(all_splits(Ty::Auto, Ws::Exact, false, b"007").0, r#""007""#);
        assert_eq!(
            all_splits(Ty::Auto, Ws::Exact, false, b"{a,b}").0,
            r#""{a,b}""#
        );
        assert_eq!(
            all_splits(Ty::Auto, Ws::Exact, false, b"\"quoted\"").0,
            r#""\"quoted\"""#
        );
        assert_eq!(all_splits(Ty::Auto, Ws::Exact, false, b"tru").0, r#""tru""#);
        assert_eq!(
            all_splits(Ty::Auto, Ws::Exact, false, b"{\"a\": 1").0,
            r#""{\"a\": 1""#
        );
        assert_eq!(all_splits(Ty::Auto, Ws::Exact, false, b"null").0, "null");
        assert_eq!(
            all_splits(Ty::Auto, Ws::Exact, false, "日本".as_bytes()).0,
            "\"日本\""
        );
    }

    #[test]
    fn schema_typed_values() {
        assert_eq!(
            all_splits(Ty::Str, Ws::Exact, false, b"20"),
            ("\"20\"".into(), vec![])
        );
        assert_eq!(
            all_splits(Ty::Integer, Ws::Exact, false, b"20"),
            ("20".into(), vec![])
        );
        assert_eq!(
            all_splits(Ty::Integer, Ws::Exact, false, b"\"20\""),
            ("20".into(), vec![RepairKind::TypeCoercion])
        );
        assert_eq!(all_splits(Ty::Integer, Ws::Exact, false, b"20.0").0, "20");
        assert_eq!(all_splits(Ty::Integer, Ws::Exact, false, b"2.5").0, "2.5");
        assert_eq!(
            all_splits(Ty::Integer, Ws::Exact, false, b"twenty").0,
            "\"twenty\""
        );
        assert_eq!(all_splits(Ty::Number, Ws::Exact, false, b".5").0, "0.5");
        assert_eq!(
            all_splits(Ty::Boolean, Ws::Exact, false, b"True"),
            ("true".into(), vec![RepairKind::TypeCoercion])
        );
        assert_eq!(all_splits(Ty::Boolean, Ws::Exact, false, b"None").0, "null");
        assert_eq!(
            all_splits(Ty::Json, Ws::Exact, false, b"['a', 'b']").0,
            r#"["a", "b"]"#
        );
        assert_eq!(
            all_splits(Ty::Json, Ws::Exact, false, b"{\"k\": [1, 2]}").0,
            r#"{"k": [1, 2]}"#
        );
        assert_eq!(
            all_splits(Ty::Json, Ws::Exact, false, b"Error: none").0,
            r#""Error: none""#
        );
        let long = vec![b'7'; 100];
        assert_eq!(
            all_splits(Ty::Integer, Ws::Exact, false, &long).0,
            format!("\"{}\"", "7".repeat(100))
        );
    }

    #[test]
    fn escaping_and_utf8() {
        assert_eq!(
            all_splits(Ty::Str, Ws::Exact, false, "a\"b\\c\td\u{1}é😀".as_bytes()).0,
            "\"a\\\"b\\\\c\\td\\u0001é😀\""
        );
        let (s, r) = all_splits(Ty::Str, Ws::Exact, false, b"a\xffb");
        assert_eq!(s, "\"a\u{FFFD}b\"");
        assert_eq!(r, vec![RepairKind::InvalidUtf8]);
    }

    #[test]
    fn entities() {
        assert_eq!(
            all_splits(Ty::Str, Ws::Exact, false, b"&lt;b&gt;").0,
            r#""&lt;b&gt;""#
        );
        let (s, r) = all_splits(Ty::Str, Ws::Exact, true, b"&lt;b&gt; &amp; &#x41;&nbsp;&");
        assert_eq!(s, r#""<b> & A&nbsp;&""#);
        assert_eq!(r.len(), 4);
        assert_eq!(all_splits(Ty::Auto, Ws::Exact, true, b"&#49;&#50;").0, "12");
    }

    #[test]
    fn long_untyped_json_is_committed() {
        let limits = Limits {
            max_token_bytes: 16,
            ..Limits::default()
        };
        let s = br#"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10"#;
        let mut v = Value::new(Ty::Auto, Ws::Exact, false, &limits);
        let mut out = Vec::new();
        for (k, c) in s.chunks(3).enumerate() {
            v.push(c, 3 * k as u64, &mut out);
        }
        assert!(out.starts_with(b"[1, 2, 3"), "streamed once committed");
        v.finish(&mut out);
        assert_eq!(out, br#"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"#);
        assert!(v
            .repairs
            .iter()
            .any(|r| r.kind == RepairKind::MissingCloser));
    }
}
