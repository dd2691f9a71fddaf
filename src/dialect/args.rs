//! Building blocks shared by the dialects whose markup names the tool and
//! whose arguments follow as one value: streaming JSON arguments
//! ([`ArgsJson`]), raw text wrapped as a one-key object ([`RawArgs`]), JSON
//! string escaping with a UTF-8 carry ([`StrEscaper`]), and the small
//! lexical helpers every special-token dialect needs.

use super::Cx;
use crate::config::Limits;
use crate::envelope::ArgsWriter;
use crate::event::{Repair, RepairKind, Span};
use crate::json::{into_string, Lane, Progress, Repairer, Status};
use crate::scan::{match_lit, Match};

/// The arguments of one call, given as a JSON value (normally an object),
/// repaired and normalised to an object as they stream.
pub(crate) struct ArgsJson {
    rep: Repairer,
    w: ArgsWriter,
    began: bool,
    closed: bool,
    truncated: bool,
    start: u64,
}

impl ArgsJson {
    /// `stop_on_lt`: a `<` in structural position stops the repairer so the
    /// dialect can look for its closing token.
    pub(crate) fn new(limits: &Limits, stop_on_lt: bool) -> Self {
        ArgsJson {
            rep: Repairer::with_limits(limits)
                .stop_on_lt(stop_on_lt)
                .one_call(limits.max_repairs),
            w: ArgsWriter::new(limits, true),
            began: false,
            closed: false,
            truncated: false,
            start: 0,
        }
    }

    /// [`ArgsJson::feed`] for a block whose arguments run to their value's
    /// end: None while they need more input; `Some(n)` when the value ended
    /// (or a limit cut it, and it is closed) after `n` bytes of `input`.
    pub(crate) fn feed_value(
        &mut self,
        input: &[u8],
        cx: &mut Cx<'_>,
        local: usize,
    ) -> Option<usize> {
        let p = self.feed(input, cx, local);
        match p.status {
            Status::NeedMore => return None,
            Status::Limit => self.close(cx, local, true),
            _ => {}
        }
        Some(p.consumed)
    }

    /// Feeds input (its first byte is at `cx.base`) and streams the new
    /// argument bytes of call `local`.
    pub(crate) fn feed(&mut self, input: &[u8], cx: &mut Cx<'_>, local: usize) -> Progress {
        if !self.began {
            self.began = true;
            self.rep.set_offset(cx.base);
            self.start = cx.base;
        }
        if self.closed {
            return Progress {
                consumed: 0,
                status: Status::Done,
            };
        }
        let p = self.rep.feed(input, &mut self.w);
        if p.status == Status::Done {
            self.closed = true;
        }
        let span = Span::new(cx.base, cx.abs(p.consumed));
        cx.args(local, self.w.take_delta(), span);
        p
    }

    /// Arms the parser's lane on these arguments (call `index`) when the
    /// writer passes bytes through, everything written so far was handed
    /// out and the repairer is in a plain state (see [`crate::json::Lane`]).
    pub(crate) fn lane_arm(&mut self, lane: &mut Lane, index: usize) -> bool {
        if !self.began || self.closed || !self.w.opaque() {
            return false;
        }
        let closable = self.w.opaque_closable();
        let Some((out, max)) = self.w.lane_buffer() else {
            return false;
        };
        lane.arm(&mut self.rep, closable, out, max, index)
    }

    /// Disarms the lane: the repairer and the writer take back the state of
    /// its last commit point.
    pub(crate) fn lane_disarm(&mut self, lane: &mut Lane) {
        let change = lane.disarm(&mut self.rep, self.w.lane_out());
        self.w.lane_done();
        self.w.write_opaque(&[], change);
    }

    /// True once any input has been fed: from then on every byte goes to
    /// the repairer (which counts offsets from the first one), blanks too.
    pub(crate) fn fed(&self) -> bool {
        self.began
    }

    /// Closes the value early: markup ended it, or (`eof`) the input did.
    pub(crate) fn close(&mut self, cx: &mut Cx<'_>, local: usize, eof: bool) {
        if self.closed {
            return;
        }
        if eof {
            self.truncated = true;
        }
        // A value that never began writes nothing here; `end` supplies `{}`.
        self.rep.finish(&mut self.w);
        self.closed = true;
        let span = Span::new(cx.base, cx.base);
        cx.args(local, self.w.take_delta(), span);
    }

    /// Ends call `local` at `end`; `extra` repairs (markup) are added.
    pub(crate) fn end(&mut self, cx: &mut Cx<'_>, local: usize, end: u64, mut extra: Vec<Repair>) {
        self.close(cx, local, false);
        let at = if self.began { self.start } else { end };
        if !self.w.started() {
            self.w.set_whole(b"{}");
            extra.push(Repair {
                kind: RepairKind::MissingArguments,
                offset: at,
            });
        } else {
            self.w.finish_open();
        }
        let span = Span::new(end, end);
        cx.args(local, self.w.take_delta(), span);
        let (final_json, tail) = self.w.take_final();
        if !tail.is_empty() {
            cx.args(local, &tail, span);
        }
        let mut repairs = self.rep.take_repairs();
        repairs.extend(self.w.repairs.drain(..).map(|r| Repair {
            kind: r.kind,
            offset: if r.offset == 0 { at } else { r.offset },
        }));
        repairs.extend(extra);
        repairs.sort_by_key(|r| r.offset);
        let truncated = self.truncated || self.w.limited;
        cx.end(local, end, final_json, repairs, truncated);
    }
}

/// Arguments given as raw text (code for a code-interpreter tool, a shell
/// command where JSON was expected), written as `{"<key>": "<text>"}`.
pub(crate) struct RawArgs {
    esc: StrEscaper,
    out: Vec<u8>,
    emitted: usize,
    /// Trailing whitespace held back (it is dropped at the end).
    ws: Vec<u8>,
    started: bool,
    max: usize,
    limited: bool,
    repairs: Vec<Repair>,
    truncated: bool,
}

impl RawArgs {
    pub(crate) fn new(key: &str, limits: &Limits) -> Self {
        let mut out = Vec::with_capacity(key.len() + 8);
        out.extend_from_slice(b"{\"");
        StrEscaper::default().push(key.as_bytes(), &mut out);
        out.extend_from_slice(b"\": \"");
        RawArgs {
            esc: StrEscaper::default(),
            out,
            emitted: 0,
            ws: Vec::new(),
            started: false,
            max: limits.max_args_bytes,
            limited: false,
            repairs: Vec::new(),
            truncated: false,
        }
    }

    /// Appends raw text; leading blanks are dropped, trailing ones held.
    pub(crate) fn push(&mut self, bytes: &[u8], at: u64) {
        let mut i = 0;
        while i < bytes.len() {
            let ws_end = bytes[i..]
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .map_or(bytes.len(), |p| i + p);
            if ws_end > i {
                if self.started {
                    self.ws.extend_from_slice(&bytes[i..ws_end]);
                }
                i = ws_end;
                continue;
            }
            let run_end = bytes[i..]
                .iter()
                .position(u8::is_ascii_whitespace)
                .map_or(bytes.len(), |p| i + p);
            self.started = true;
            let ws = std::mem::take(&mut self.ws);
            let ws_at = (at + i as u64).saturating_sub(ws.len() as u64);
            self.put(&ws, ws_at);
            self.put(&bytes[i..run_end], at + i as u64);
            i = run_end;
        }
    }

    /// `at` is the absolute offset of `bytes[0]`. The output stops before
    /// the first character whose escaped form would take it past the
    /// limit: the cut depends on the text, not on how it was fed.
    fn put(&mut self, bytes: &[u8], at: u64) {
        if self.limited || bytes.is_empty() {
            return;
        }
        // A byte's escaped form takes at most 6 bytes (`\u0000`; a held
        // byte and the one after it at most 3 + 6).
        let worst = 6 * (bytes.len() + self.esc.held()) + 3;
        if self.out.len() + worst <= self.max {
            let bad = self.esc.push(bytes, &mut self.out);
            self.note_invalid(bad, at);
            return;
        }
        for (i, &b) in bytes.iter().enumerate() {
            let (len, held) = (self.out.len(), self.esc.held());
            let bad = self.esc.push(&[b], &mut self.out);
            let b_at = at + i as u64;
            if self.out.len() > self.max {
                self.out.truncate(len);
                self.esc = StrEscaper::default();
                self.limited = true;
                self.repairs.push(Repair {
                    kind: RepairKind::LimitExceeded,
                    offset: b_at - held as u64,
                });
                return;
            }
            self.note_invalid(bad, b_at);
        }
    }

    /// Records the replaced invalid UTF-8 of a push at `at`.
    fn note_invalid(&mut self, bad: Vec<isize>, at: u64) {
        for rel in bad {
            self.repairs.push(Repair {
                kind: RepairKind::InvalidUtf8,
                offset: at.saturating_add_signed(rel as i64),
            });
        }
    }

    /// Records a repair at `offset`.
    pub(crate) fn note(&mut self, kind: RepairKind, offset: u64) {
        self.repairs.push(Repair { kind, offset });
    }

    /// The input ended inside the text.
    pub(crate) fn set_truncated(&mut self) {
        self.truncated = true;
    }

    /// Streams what is new.
    pub(crate) fn flush(&mut self, cx: &mut Cx<'_>, local: usize, span: Span) {
        let from = std::mem::replace(&mut self.emitted, self.out.len());
        cx.args(local, &self.out[from..], span);
    }

    /// Ends the call.
    pub(crate) fn end(&mut self, cx: &mut Cx<'_>, local: usize, end: u64, extra: Vec<Repair>) {
        if self.esc.finish(&mut self.out) {
            self.repairs.push(Repair {
                kind: RepairKind::InvalidUtf8,
                offset: end,
            });
        }
        self.out.extend_from_slice(b"\"}");
        self.flush(cx, local, Span::new(end, end));
        let mut repairs = std::mem::take(&mut self.repairs);
        repairs.extend(extra);
        repairs.sort_by_key(|r| r.offset);
        let args = into_string(std::mem::take(&mut self.out));
        cx.end(local, end, args, repairs, self.truncated || self.limited);
    }
}

/// Writes raw bytes as JSON string content, keeping an incomplete UTF-8
/// sequence for the next call so that output never splits a character.
#[derive(Default, Debug, Clone)]
pub(crate) struct StrEscaper {
    carry: Vec<u8>,
}

impl StrEscaper {
    /// Escapes `bytes` into `out`. Returns where invalid UTF-8 was replaced
    /// with U+FFFD, relative to `bytes[0]` (negative: in bytes held from the
    /// previous call).
    pub(crate) fn push(&mut self, bytes: &[u8], out: &mut Vec<u8>) -> Vec<isize> {
        if self.carry.is_empty() {
            return self.push_valid(bytes, 0, out);
        }
        let mut buf = std::mem::take(&mut self.carry);
        let held = buf.len() as isize;
        buf.extend_from_slice(bytes);
        self.push_valid(&buf, -held, out)
    }

    fn push_valid(&mut self, mut bytes: &[u8], mut rel: isize, out: &mut Vec<u8>) -> Vec<isize> {
        let mut bad = Vec::new();
        loop {
            // The content of every string argument passes here: long runs
            // through simdutf8's `compat` validator (std's errors, SIMD
            // speed), short ones through std's (less set-up).
            let checked = check_utf8(bytes);
            match checked {
                Ok(()) => {
                    escape_content(bytes, out, true);
                    return bad;
                }
                Err((good, error_len)) => {
                    // The prefix is valid UTF-8.
                    escape_content(&bytes[..good], out, true);
                    match error_len {
                        None => {
                            self.carry.extend_from_slice(&bytes[good..]);
                            return bad;
                        }
                        Some(n) => {
                            out.extend_from_slice("\u{FFFD}".as_bytes());
                            bad.push(rel + good as isize);
                            bytes = &bytes[good + n..];
                            rel += (good + n) as isize;
                        }
                    }
                }
            }
        }
    }

    /// Bytes of an incomplete character held from the last push.
    pub(crate) fn held(&self) -> usize {
        self.carry.len()
    }

    /// Flushes an incomplete sequence left at the end; true when one was replaced.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) -> bool {
        if self.carry.is_empty() {
            return false;
        }
        self.carry.clear();
        out.extend_from_slice("\u{FFFD}".as_bytes());
        true
    }
}

/// Bytes JSON string content holds as they are: all but the control
/// characters, `"`, `\\` and DEL (written `\u007f`).
const fn verbatim_table() -> [bool; 256] {
    let mut t = [true; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = false;
        i += 1;
    }
    t[b'"' as usize] = false;
    t[b'\\' as usize] = false;
    t[0x7F] = false;
    t
}
static VERBATIM: [bool; 256] = verbatim_table();

/// [`VERBATIM`] less the bytes from 0x80: ASCII that JSON string content
/// holds as it is (no UTF-8 check needed either).
pub(crate) const fn ascii_verbatim_table() -> [bool; 256] {
    let mut t = verbatim_table();
    let mut i = 0x80;
    while i < 0x100 {
        t[i] = false;
        i += 1;
    }
    t
}
static ASCII_VERBATIM: [bool; 256] = ascii_verbatim_table();

/// `s` is ASCII that JSON string content holds as it is: the escaped form
/// of such content is the content itself (the common chunk of a streamed
/// string argument).
#[inline]
pub(crate) fn is_ascii_verbatim(s: &[u8]) -> bool {
    crate::json::run_len::<true, true>(s, &ASCII_VERBATIM) == s.len()
}

/// Length of the run at the start of `s` (valid UTF-8) that JSON string
/// content holds as it is.
#[inline]
fn unescaped_len(s: &[u8]) -> usize {
    crate::json::run_len::<true, false>(s, &VERBATIM)
}

/// Checks that `bytes` is UTF-8; the error is std's `valid_up_to` and
/// `error_len`. Long runs go through simdutf8's `compat` validator (std's
/// errors at SIMD speed: the content of every transcoded string argument
/// passes here), short ones through std's (less set-up).
pub(crate) fn check_utf8(bytes: &[u8]) -> Result<(), (usize, Option<usize>)> {
    if bytes.len() < 64 {
        std::str::from_utf8(bytes)
            .map(drop)
            .map_err(|e| (e.valid_up_to(), e.error_len()))
    } else {
        simdutf8::compat::from_utf8(bytes)
            .map(drop)
            .map_err(|e| (e.valid_up_to(), e.error_len()))
    }
}

/// Appends `s` as JSON string content.
pub(crate) fn escape_str(s: &str, out: &mut Vec<u8>) {
    escape_content(s.as_bytes(), out, true);
}

/// Appends `b` (valid UTF-8) as JSON string content; `del`: DEL is written
/// `\u007f` (else as it is).
pub(crate) fn escape_content(b: &[u8], out: &mut Vec<u8>, del: bool) {
    // Room for long content at once (its escapes may grow it once more):
    // not a growth per run between escapes. (A short piece, as a streamed
    // chunk gives, grows the buffer once at most anyway.)
    if b.len() > 32 {
        out.reserve(b.len());
    }
    escape_into(b, &mut BytesOut { out, src: b }, del, (0, 0));
}

/// Appends `s` as JSON string content to text, `del` as in
/// [`escape_content`]: the same bytes, with no UTF-8 check of its own
/// (the runs are slices of `s`, cut at ASCII bytes).
pub(crate) fn escape_content_text(s: &str, out: &mut String, del: bool) {
    if s.len() > 32 {
        out.reserve(s.len());
        if s.len() >= LONG_ESCAPE {
            return escape_long(s.as_bytes(), &mut TextOut { out, src: s }, del);
        }
    }
    escape_into(s.as_bytes(), &mut TextOut { out, src: s }, del, (0, 0));
}

/// Where [`escape_into`] writes: runs of its source as they are, and
/// escapes.
trait EscapeOut {
    /// `src[from..to]`, cut at ASCII bytes (or the ends).
    fn run(&mut self, from: usize, to: usize);
    /// An escape sequence (ASCII bytes).
    fn escape(&mut self, e: &[u8]);
}

/// [`EscapeOut`] to a byte buffer.
struct BytesOut<'a> {
    out: &'a mut Vec<u8>,
    src: &'a [u8],
}

impl EscapeOut for BytesOut<'_> {
    #[inline]
    fn run(&mut self, from: usize, to: usize) {
        self.out.extend_from_slice(&self.src[from..to]);
    }
    #[inline]
    fn escape(&mut self, e: &[u8]) {
        self.out.extend_from_slice(e);
    }
}

/// [`EscapeOut`] to text.
struct TextOut<'a> {
    out: &'a mut String,
    src: &'a str,
}

impl EscapeOut for TextOut<'_> {
    #[inline]
    fn run(&mut self, from: usize, to: usize) {
        // Cut at ASCII bytes or the ends: always character boundaries,
        // never an empty string in its place.
        self.out
            .push_str(self.src.get(from..to).unwrap_or_default());
    }
    #[inline]
    fn escape(&mut self, e: &[u8]) {
        // ASCII: each byte is its own character.
        self.out.extend(e.iter().map(|&c| char::from(c)));
    }
}

/// [`escape_content`]'s loop, for any [`EscapeOut`], from `b[i..]` with
/// the run to write starting at `start` (`(start, i)`).
#[inline(always)]
fn escape_into(b: &[u8], out: &mut impl EscapeOut, del: bool, (mut start, mut i): (usize, usize)) {
    loop {
        i += unescaped_len(&b[i..]);
        let Some(&c) = b.get(i) else { break };
        if c == 0x7F && !del {
            i += 1;
            continue;
        }
        out.run(start, i);
        escape_byte(c, out);
        i += 1;
        start = i;
    }
    out.run(start, b.len());
}

/// Content at least this long goes through [`escape_long`].
const LONG_ESCAPE: usize = 128;

/// [`escape_into`] for long content: its whole 64-byte blocks first, every
/// byte to escape in a block flagged at once (SIMD), so a run between two
/// escapes costs no search of its own; the rest by the byte loop. Out of
/// line: the short content of a streamed chunk keeps its loop as it was.
#[inline(never)]
fn escape_long(b: &[u8], out: &mut impl EscapeOut, del: bool) {
    let at = if del {
        escape_blocks::<true>(b, out)
    } else {
        escape_blocks::<false>(b, out)
    };
    escape_into(b, out, del, at);
}

/// [`escape_into`] over the whole 64-byte blocks of `b`: writes up to the
/// last escape in them and returns where the run after it starts and where
/// the byte loop goes on (the first byte past the blocks). `DEL`: 0x7F is
/// escaped too.
#[inline(always)]
fn escape_blocks<const DEL: bool>(b: &[u8], out: &mut impl EscapeOut) -> (usize, usize) {
    let mut start = 0;
    let mut i = 0;
    while let Some(block) = b.get(i..i + 64).and_then(|w| <&[u8; 64]>::try_from(w).ok()) {
        let (mut flags, _) = crate::json::block_flags::<DEL>(block);
        while flags != 0 {
            let j = flags.trailing_zeros() as usize & 63;
            out.run(start, i + j);
            escape_byte(block[j], out);
            start = i + j + 1;
            flags &= flags - 1;
        }
        i += 64;
    }
    (start, i)
}

/// Writes the JSON escape of `c` (`"`, `\\`, a control character or DEL).
#[inline(always)]
fn escape_byte(c: u8, out: &mut impl EscapeOut) {
    match c {
        b'"' => out.escape(b"\\\""),
        b'\\' => out.escape(b"\\\\"),
        _ => crate::json::control_escape(c, |e| out.escape(e)),
    }
}

/// A JSON string literal (quotes included) holding `s`.
pub(crate) fn json_string(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 2);
    out.push(b'"');
    escape_str(s, &mut out);
    out.push(b'"');
    out
}

/// True for the bytes of a tool name: ASCII letters, digits, `_`, `-`, `.`
/// and any non-ASCII byte.
#[inline]
pub(crate) fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.' || b >= 0x80
}

/// Matches any of `lits` at the start of `at`: the first full match, else
/// partial if any could still match.
pub(crate) fn match_any(lits: &[&[u8]], at: &[u8]) -> (Match, usize) {
    let mut partial = false;
    for (k, l) in lits.iter().enumerate() {
        match match_lit(l, at) {
            Match::Full(n) => return (Match::Full(n), k),
            Match::Partial => partial = true,
            Match::No => {}
        }
    }
    (if partial { Match::Partial } else { Match::No }, 0)
}

/// Finds the first occurrence of any of `lits` in `hay` starting at a `<`,
/// `[` or other first byte: returns `(position, literal index, full)`; a
/// partial match at the end of `hay` is returned with `full == false`.
pub(crate) fn find_any(lits: &[&[u8]], hay: &[u8]) -> Option<(usize, usize, bool)> {
    let mut firsts: Vec<u8> = lits.iter().filter_map(|l| l.first().copied()).collect();
    firsts.sort_unstable();
    firsts.dedup();
    let mut from = 0;
    while from < hay.len() {
        let p = match firsts.len() {
            1 => memchr::memchr(firsts[0], &hay[from..]),
            2 => memchr::memchr2(firsts[0], firsts[1], &hay[from..]),
            3 => memchr::memchr3(firsts[0], firsts[1], firsts[2], &hay[from..]),
            _ => hay[from..].iter().position(|b| firsts.contains(b)),
        }? + from;
        match match_any(lits, &hay[p..]) {
            (Match::Full(_), k) => return Some((p, k, true)),
            (Match::Partial, k) => return Some((p, k, false)),
            (Match::No, _) => from = p + 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Escaped content reads back as the string, holds no raw control
        /// character or DEL, and is what a plain byte loop writes — short
        /// content and long (past the 64-byte blocks of `escape_blocks`),
        /// to bytes and to text.
        #[test]
        fn escape_str_round_trips(s in "(\\PC|[\\x00-\\x1f\\x7f\"\\\\]){0,40}|(\\PC{0,24}[\\x00-\\x1f\\x7f\"\\\\]?){0,30}") {
            let mut out = Vec::new();
            escape_str(&s, &mut out);
            let text = String::from_utf8(out.clone()).unwrap();
            let back: String = serde_json::from_str(&format!("\"{text}\"")).unwrap();
            proptest::prop_assert_eq!(&back, &s);
            proptest::prop_assert!(!out.iter().any(|&c| c < 0x20 || c == 0x7F));
            let byte_loop = |del: bool| {
                let mut want = Vec::new();
                for c in s.bytes() {
                    match c {
                        b'"' => want.extend_from_slice(b"\\\""),
                        b'\\' => want.extend_from_slice(b"\\\\"),
                        b'\n' => want.extend_from_slice(b"\\n"),
                        b'\r' => want.extend_from_slice(b"\\r"),
                        b'\t' => want.extend_from_slice(b"\\t"),
                        0x08 => want.extend_from_slice(b"\\b"),
                        0x0C => want.extend_from_slice(b"\\f"),
                        0x7F if !del => want.push(c),
                        0..=0x1F | 0x7F => want.extend_from_slice(format!("\\u{c:04x}").as_bytes()),
                        c => want.push(c),
                    }
                }
                want
            };
            proptest::prop_assert_eq!(out, byte_loop(true));
            // Without `del`, DEL stays as it is.
            let mut raw_del = Vec::new();
            escape_content(s.as_bytes(), &mut raw_del, false);
            proptest::prop_assert_eq!(&raw_del, &byte_loop(false));
            for del in [true, false] {
                let mut text = String::new();
                escape_content_text(&s, &mut text, del);
                proptest::prop_assert_eq!(text.as_bytes(), &byte_loop(del)[..]);
            }
        }
    }

    #[test]
    fn escaper_carries_utf8() {
        let mut e = StrEscaper::default();
        let mut out = Vec::new();
        let s = "é\"\n✓".as_bytes();
        for b in s {
            assert!(e.push(&[*b], &mut out).is_empty());
        }
        assert!(!e.finish(&mut out));
        assert_eq!(String::from_utf8(out).unwrap(), "é\\\"\\n✓");
        let mut out = Vec::new();
        assert_eq!(e.push(b"a\xffb", &mut out), vec![1]);
        assert_eq!(String::from_utf8(out).unwrap(), "a\u{FFFD}b");
    }

    #[test]
    fn find_any_partial() {
        let lits: &[&[u8]] = &[b"<|end|>", b"<|call|>"];
        assert_eq!(find_any(lits, b"ab<|call|>x"), Some((2, 1, true)));
        assert_eq!(
            find_any(lits, b"ab<|ca").map(|(p, _, f)| (p, f)),
            Some((2, false))
        );
        assert_eq!(find_any(lits, b"a<b<|x"), None);
    }
}
