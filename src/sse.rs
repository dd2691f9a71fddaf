//! Server-sent events framing, following the WHATWG HTML "event stream
//! interpretation" rules exactly.
//!
//! ```text
//! stream        = [ bom ] *event
//! event         = *( comment / field ) end-of-line
//! comment       = colon *any-char end-of-line
//! field         = 1*name-char [ colon [ space ] *any-char ] end-of-line
//! end-of-line   = ( cr lf / cr / lf )
//! ```
//!
//! * A line ends at CRLF, a lone LF or a lone CR; a CR at the end of one read
//!   followed by an LF at the start of the next is **one** line end.
//! * One leading U+FEFF (BOM) is stripped, even when it is split across reads.
//! * A line starting with `:` is a comment. Otherwise the field name is
//!   everything before the first `:` and the value everything after it, minus
//!   **one** leading space; a line without a colon is a field with an empty value.
//! * `data` appends its value to the data buffer (several `data` lines are
//!   joined with `\n`); `event` sets the event type; `id` sets the last event
//!   id (unless the value holds U+0000) and that id persists across events;
//!   `retry` sets the reconnection time when the value is all ASCII digits;
//!   any other field is ignored, and reported as
//!   [`FrameErrorKind::IgnoredLine`] (a line that lost its `data:` prefix
//!   reads as one).
//! * A blank line dispatches the event, unless no `data` line was seen (then
//!   the buffers are just reset).
//! * At end of stream an event without its blank line is discarded, and
//!   reported as [`FrameErrorKind::Unterminated`]. Several real recordings
//!   end right after the last `data` line, so [`SseDecoder::dispatch_at_eof`]
//!   makes the decoder dispatch that last event instead (the provider
//!   decoders turn it on).
//! * Text is UTF-8; invalid sequences are replaced with U+FFFD. A character
//!   split across reads is reassembled first (validation happens per event).
//!
//! The decoder is sans-IO: [`SseDecoder::feed`] / [`SseDecoder::feed_bytes`]
//! take whatever bytes arrived and append the events they complete. Work is
//! linear: every byte is scanned once (with `memchr`), and the data of an
//! event with a single `data` line is a zero-copy slice of the input.
//! With the `tokio` feature the decoder is also a `tokio_util::codec::Decoder`
//! (use it with `FramedRead`; its items are `Result<SseEvent, FrameError>`).

use bytes::{Bytes, BytesMut};

use crate::event::Span;
use crate::frame::{FrameError, FrameErrorKind, FrameLimits};

/// One dispatched server-sent event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event` field, if the event had one (the spec's default type is
    /// `message`; see [`SseEvent::event_type`]). Valid UTF-8.
    pub event: Option<Bytes>,
    /// The data: every `data` line's value joined with `\n`. Valid UTF-8.
    pub data: Bytes,
    /// The last event id in force when the event was dispatched (ids persist
    /// across events). Valid UTF-8.
    pub id: Option<Bytes>,
    /// Where the event's lines are in the stream, from its first line to the
    /// end of the blank line that dispatched it (when that blank line ends
    /// with CRLF, the span stops after the CR, so that spans do not depend on
    /// whether the LF arrived in the same read).
    pub span: Span,
}

impl SseEvent {
    /// The event type: the `event` field, or `"message"` when it was absent or empty.
    pub fn event_type(&self) -> &str {
        match &self.event {
            Some(e) if !e.is_empty() => std::str::from_utf8(e).unwrap_or("message"),
            Some(_) => "message",
            None => "message",
        }
    }

    /// The data as text.
    pub fn data_str(&self) -> &str {
        std::str::from_utf8(&self.data).unwrap_or("")
    }
}

/// The data buffer of the event being assembled.
#[derive(Debug, Default)]
enum Data {
    /// No `data` line yet.
    #[default]
    None,
    /// Exactly one `data` line: its value, usually a slice of the input.
    One(Bytes),
    /// Several lines, joined with `\n`.
    Many(BytesMut),
}

/// BOM detection at stream start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bom {
    /// This many bytes of `EF BB BF` have been seen and held.
    Start(u8),
    /// Decided.
    Done,
}

const BOM: &[u8; 3] = b"\xEF\xBB\xBF";

/// The incremental SSE decoder (sans-IO). See the [module docs](self) for the
/// rules it implements.
///
/// ```
/// use toolstream::sse::SseDecoder;
///
/// let mut dec = SseDecoder::new();
/// let mut out = Vec::new();
/// dec.feed(b"event: ping\r", &mut out);
/// dec.feed(b"\ndata: {\"a\":", &mut out);
/// dec.feed(b"1}\n\n: keep-alive\n\ndata: [DONE]\n\n", &mut out);
/// dec.finish(&mut out);
/// let events: Vec<_> = out.into_iter().map(Result::unwrap).collect();
/// assert_eq!(events.len(), 2);
/// assert_eq!(events[0].event_type(), "ping");
/// assert_eq!(events[0].data_str(), "{\"a\":1}");
/// assert_eq!(events[1].data_str(), "[DONE]");
/// ```
#[derive(Debug)]
pub struct SseDecoder {
    limits: FrameLimits,
    eof_dispatch: bool,
    /// Absolute offset of the next byte fed.
    pos: u64,
    bom: Bom,
    /// The previous read ended with CR: an LF starting the next one belongs to it.
    pending_cr: bool,
    /// A partial line carried to the next read.
    carry: BytesMut,
    /// Absolute offset where the carried line began.
    carry_start: u64,
    /// Start of the event being assembled (its first line).
    frame_start: Option<u64>,
    /// Bytes of the event so far, line ends included.
    frame_bytes: usize,
    /// Skipping an oversized event up to its blank line.
    discarding: bool,
    /// While discarding: the current (dropped) line has content.
    discard_line_nonempty: bool,
    data: Data,
    event: Option<Bytes>,
    last_id: Option<Bytes>,
    retry: Option<u64>,
    /// Items decoded but not yet returned by the `tokio` codec.
    queue: Vec<Result<SseEvent, FrameError>>,
    queue_pos: usize,
    /// The codec has seen end of stream.
    eof_done: bool,
}

impl Default for SseDecoder {
    fn default() -> Self {
        SseDecoder::new()
    }
}

impl SseDecoder {
    /// A decoder with the default [`FrameLimits`], spec EOF behaviour.
    pub fn new() -> Self {
        SseDecoder::with_limits(FrameLimits::default())
    }

    /// A decoder with the given limits.
    pub fn with_limits(limits: FrameLimits) -> Self {
        SseDecoder {
            limits,
            eof_dispatch: false,
            pos: 0,
            bom: Bom::Start(0),
            pending_cr: false,
            carry: BytesMut::new(),
            carry_start: 0,
            frame_start: None,
            frame_bytes: 0,
            discarding: false,
            discard_line_nonempty: false,
            data: Data::None,
            event: None,
            last_id: None,
            retry: None,
            queue: Vec::new(),
            queue_pos: 0,
            eof_done: false,
        }
    }

    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    fn pop(&mut self) -> Option<Result<SseEvent, FrameError>> {
        let item = self.queue.get_mut(self.queue_pos)?;
        let item = std::mem::replace(
            item,
            Err(FrameError {
                kind: FrameErrorKind::Unterminated,
                span: Span::default(),
            }),
        );
        self.queue_pos += 1;
        Some(item)
    }

    /// When `yes`, [`SseDecoder::finish`] treats the end of the stream as the
    /// end of the last line and of the last event, and dispatches it, instead
    /// of discarding it as the spec says. Default `false`.
    pub fn dispatch_at_eof(mut self, yes: bool) -> Self {
        self.eof_dispatch = yes;
        self
    }

    /// The limits in force.
    pub fn limits(&self) -> &FrameLimits {
        &self.limits
    }

    /// The reconnection time set by the last valid `retry` field, in milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// The last event id buffer.
    pub fn last_event_id(&self) -> Option<&[u8]> {
        self.last_id.as_deref()
    }

    /// Number of bytes fed so far.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Feeds the next read (copied once), appending the events it completes.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Result<SseEvent, FrameError>>) {
        if chunk.is_empty() {
            return;
        }
        self.feed_bytes(Bytes::copy_from_slice(chunk), out);
    }

    /// Feeds the next read without copying it: the data of single-line events
    /// that lie inside `chunk` are slices of it.
    pub fn feed_bytes(&mut self, chunk: Bytes, out: &mut Vec<Result<SseEvent, FrameError>>) {
        if chunk.is_empty() {
            return;
        }
        let chunk = match self.bom {
            Bom::Done => chunk,
            Bom::Start(seen) => {
                // Compare the held prefix plus this chunk with the BOM.
                let seen = seen as usize;
                let mut k = 0;
                while seen + k < 3 && k < chunk.len() && chunk[k] == BOM[seen + k] {
                    k += 1;
                }
                if seen + k == 3 {
                    // A whole BOM: skip it (it belongs to no event).
                    self.bom = Bom::Done;
                    self.pos += k as u64;
                    chunk.slice(k..)
                } else if k == chunk.len() {
                    // Still a BOM prefix: hold it.
                    self.bom = Bom::Start((seen + k) as u8);
                    self.pos += k as u64;
                    return;
                } else {
                    // Not a BOM: the held bytes are ordinary input.
                    self.bom = Bom::Done;
                    if seen == 0 {
                        chunk
                    } else {
                        self.pos -= seen as u64;
                        let mut b = BytesMut::with_capacity(seen + chunk.len());
                        b.extend_from_slice(&BOM[..seen]);
                        b.extend_from_slice(&chunk);
                        b.freeze()
                    }
                }
            }
        };
        self.process(chunk, out);
    }

    fn process(&mut self, data: Bytes, out: &mut Vec<Result<SseEvent, FrameError>>) {
        let base = self.pos;
        let mut i = 0;
        if self.pending_cr {
            self.pending_cr = false;
            if data.first() == Some(&b'\n') {
                i = 1;
            }
        }
        while i < data.len() {
            match memchr::memchr2(b'\r', b'\n', &data[i..]) {
                None => {
                    self.partial(&data, i, base, out);
                    break;
                }
                Some(k) => {
                    let eol = i + k;
                    let mut next = eol + 1;
                    if data[eol] == b'\r' {
                        if next < data.len() {
                            if data[next] == b'\n' {
                                next += 1;
                            }
                        } else {
                            self.pending_cr = true;
                        }
                    }
                    self.line(&data, i, eol, base, out);
                    i = next;
                }
            }
        }
        self.pos = base + data.len() as u64;
    }

    /// Bytes `data[from..]` start a line that continues in the next read.
    fn partial(
        &mut self,
        data: &Bytes,
        from: usize,
        base: u64,
        out: &mut Vec<Result<SseEvent, FrameError>>,
    ) {
        let n = data.len() - from;
        if self.discarding {
            self.discard_line_nonempty |= n > 0;
            return;
        }
        if self.carry.is_empty() {
            self.carry_start = base + from as u64;
            if self.frame_start.is_none() {
                self.frame_start = Some(self.carry_start);
            }
        }
        if self.frame_bytes + self.carry.len() + n > self.limits.max_frame_bytes {
            let start = self.frame_start.unwrap_or(self.carry_start);
            self.start_discard(start, base + data.len() as u64, out);
            self.discard_line_nonempty = true;
            return;
        }
        self.carry.extend_from_slice(&data[from..]);
    }

    /// The event starting at `start` is over the limit: report it (the span
    /// ends one byte past the limit, wherever the reads were split) and skip
    /// to its blank line.
    fn start_discard(&mut self, start: u64, _at: u64, out: &mut Vec<Result<SseEvent, FrameError>>) {
        let limit = self.limits.max_frame_bytes;
        out.push(Err(FrameError {
            kind: FrameErrorKind::TooLarge { limit },
            span: Span::new(start, start + limit as u64 + 1),
        }));
        self.discarding = true;
        self.discard_line_nonempty = false;
        self.carry.clear();
        self.data = Data::None;
        self.event = None;
        self.frame_start = None;
        self.frame_bytes = 0;
    }

    /// A complete line: `data[from..eol]` (after any carried bytes), its line
    /// end at `eol`.
    fn line(
        &mut self,
        data: &Bytes,
        from: usize,
        eol: usize,
        base: u64,
        out: &mut Vec<Result<SseEvent, FrameError>>,
    ) {
        // Spans end after the first byte of the line end: the LF of a CRLF
        // may arrive in the next read, and spans must not depend on that.
        let end = base + eol as u64 + 1;
        if self.discarding {
            let empty = !self.discard_line_nonempty && from == eol;
            self.discard_line_nonempty = false;
            if empty {
                self.discarding = false;
            }
            return;
        }
        let start = if self.carry.is_empty() {
            base + from as u64
        } else {
            self.carry_start
        };
        let line: Bytes = if self.carry.is_empty() {
            data.slice(from..eol)
        } else {
            self.carry.extend_from_slice(&data[from..eol]);
            self.carry.split().freeze()
        };
        if line.is_empty() {
            self.dispatch(end, out);
            return;
        }
        if self.frame_start.is_none() {
            self.frame_start = Some(start);
        }
        self.frame_bytes += line.len() + 1;
        if self.frame_bytes > self.limits.max_frame_bytes {
            let fs = self.frame_start.unwrap_or(start);
            self.start_discard(fs, end, out);
            return;
        }
        if !self.field(line) {
            out.push(Err(FrameError {
                kind: FrameErrorKind::IgnoredLine,
                span: Span::new(start, end),
            }));
        }
    }

    /// Takes one field line; false when the rules ignore it (an unknown
    /// field name).
    fn field(&mut self, line: Bytes) -> bool {
        if line[0] == b':' {
            return true; // comment
        }
        let (name, value) = match memchr::memchr(b':', &line) {
            Some(c) => {
                let v = if line.get(c + 1) == Some(&b' ') {
                    c + 2
                } else {
                    c + 1
                };
                (line.slice(..c), line.slice(v..))
            }
            None => (line.clone(), Bytes::new()),
        };
        match &name[..] {
            b"data" => {
                self.data = match std::mem::take(&mut self.data) {
                    Data::None => Data::One(value),
                    Data::One(first) => {
                        let mut m = BytesMut::with_capacity(first.len() + 1 + value.len());
                        m.extend_from_slice(&first);
                        m.extend_from_slice(b"\n");
                        m.extend_from_slice(&value);
                        Data::Many(m)
                    }
                    Data::Many(mut m) => {
                        m.extend_from_slice(b"\n");
                        m.extend_from_slice(&value);
                        Data::Many(m)
                    }
                };
            }
            b"event" => self.event = Some(value),
            b"id" if memchr::memchr(0, &value).is_none() => {
                self.last_id = if value.is_empty() { None } else { Some(value) };
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry = Some(value.iter().fold(0u64, |acc, d| {
                    acc.saturating_mul(10).saturating_add(u64::from(d - b'0'))
                }));
            }
            b"id" | b"retry" => {}
            _ => return false,
        }
        true
    }

    fn dispatch(&mut self, end: u64, out: &mut Vec<Result<SseEvent, FrameError>>) {
        let start = self.frame_start.take().unwrap_or(end);
        self.frame_bytes = 0;
        let data = match std::mem::take(&mut self.data) {
            Data::None => {
                self.event = None;
                return;
            }
            Data::One(b) => b,
            Data::Many(m) => m.freeze(),
        };
        out.push(Ok(SseEvent {
            event: self.event.take().map(utf8),
            data: utf8(data),
            id: self.last_id.clone().map(utf8),
            span: Span::new(start, end),
        }));
    }

    /// Ends the stream. An event without its blank line is discarded and
    /// reported as [`FrameErrorKind::Unterminated`], or dispatched when
    /// [`SseDecoder::dispatch_at_eof`] is on. The decoder is then reset for a
    /// new stream (limits and options are kept).
    pub fn finish(&mut self, out: &mut Vec<Result<SseEvent, FrameError>>) {
        let end = self.pos;
        if self.bom != Bom::Done {
            if let Bom::Start(seen) = self.bom {
                if seen > 0 {
                    // A stream that is only a BOM prefix: those bytes are a partial line.
                    self.pos -= u64::from(seen);
                    self.bom = Bom::Done;
                    self.process(Bytes::copy_from_slice(&BOM[..seen as usize]), out);
                }
            }
        }
        if !self.discarding {
            let pending = !self.carry.is_empty()
                || !matches!(self.data, Data::None)
                || self.frame_start.is_some();
            if pending {
                if self.eof_dispatch {
                    if !self.carry.is_empty() {
                        let line = self.carry.split().freeze();
                        self.frame_bytes += line.len();
                        if self.frame_bytes <= self.limits.max_frame_bytes {
                            self.field(line);
                        }
                    }
                    self.dispatch(end, out);
                } else {
                    let start = self.frame_start.unwrap_or(self.carry_start);
                    out.push(Err(FrameError {
                        kind: FrameErrorKind::Unterminated,
                        span: Span::new(start, end),
                    }));
                }
            }
        }
        let limits = self.limits.clone();
        let eof = self.eof_dispatch;
        let queue = std::mem::take(&mut self.queue);
        let (queue_pos, eof_done) = (self.queue_pos, self.eof_done);
        *self = SseDecoder::with_limits(limits).dispatch_at_eof(eof);
        self.queue = queue;
        self.queue_pos = queue_pos;
        self.eof_done = eof_done;
    }
}

/// Replaces invalid UTF-8 with U+FFFD (copies only when it has to).
fn utf8(b: Bytes) -> Bytes {
    if std::str::from_utf8(&b).is_ok() {
        b
    } else {
        Bytes::from(String::from_utf8_lossy(&b).into_owned())
    }
}

#[cfg(feature = "tokio")]
impl tokio_util::codec::Decoder for SseDecoder {
    /// One event, or a [`FrameError`] (an oversized or, at end of stream,
    /// unterminated event). Frame errors are items rather than errors so that
    /// the stream goes on after them; the codec's own error is only I/O.
    type Item = Result<SseEvent, FrameError>;
    type Error = std::io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        if self.queue_pos == self.queue.len() && !src.is_empty() {
            self.queue.clear();
            self.queue_pos = 0;
            let mut q = std::mem::take(&mut self.queue);
            self.feed_bytes(src.split().freeze(), &mut q);
            self.queue = q;
        }
        Ok(self.pop())
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        if let Some(item) = self.decode(src)? {
            return Ok(Some(item));
        }
        if !self.eof_done {
            self.eof_done = true;
            let mut q = std::mem::take(&mut self.queue);
            q.clear();
            self.queue_pos = 0;
            self.finish(&mut q);
            self.queue = q;
            self.eof_done = true;
        }
        Ok(self.pop())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&[u8]], eof: bool) -> Vec<Result<SseEvent, FrameError>> {
        let mut d = SseDecoder::new().dispatch_at_eof(eof);
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, &mut out);
        }
        d.finish(&mut out);
        out
    }

    fn simple(r: &[Result<SseEvent, FrameError>]) -> Vec<(String, String, Option<String>)> {
        r.iter()
            .filter_map(|e| e.as_ref().ok())
            .map(|e| {
                (
                    e.event_type().to_string(),
                    e.data_str().to_string(),
                    e.id.as_ref()
                        .map(|b| String::from_utf8_lossy(b).into_owned()),
                )
            })
            .collect()
    }

    const SPEC: &[u8] = b"\xEF\xBB\xBF: comment; BOM above is stripped\r\nevent: message_start\rdata: {\"a\":\ndata:1}\n\nid: 7\nretry: 3000\ndata\n\ndata: incomplete-at-eof";

    #[test]
    fn spec_example_every_split() {
        let want = vec![
            ("message_start".to_string(), "{\"a\":\n1}".to_string(), None),
            ("message".to_string(), String::new(), Some("7".to_string())),
        ];
        let whole = run(&[SPEC], false);
        assert_eq!(simple(&whole), want);
        assert!(matches!(
            whole.last(),
            Some(Err(FrameError {
                kind: FrameErrorKind::Unterminated,
                ..
            }))
        ));
        for a in 0..=SPEC.len() {
            for b in a..=SPEC.len() {
                let got = run(&[&SPEC[..a], &SPEC[a..b], &SPEC[b..]], false);
                assert_eq!(got, whole, "split at {a},{b}");
            }
        }
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.feed(SPEC, &mut out);
        assert_eq!(d.retry(), Some(3000));
        assert_eq!(d.last_event_id(), Some(&b"7"[..]));
    }

    #[test]
    fn spans_cover_event_lines() {
        let input = b": hi\n\nevent: a\ndata: x\n\ndata: y\r\n\r\n";
        let out = run(&[input], false);
        let spans: Vec<Span> = out.iter().map(|e| e.as_ref().unwrap().span).collect();
        assert_eq!(spans, vec![Span::new(6, 24), Span::new(24, 34)]);
        assert_eq!(&input[6..24], b"event: a\ndata: x\n\n");
    }

    #[test]
    fn line_ends_are_equivalent() {
        let lf = b"event: e\ndata: a\ndata: b\n\ndata: c\n\n".to_vec();
        let cr: Vec<u8> = lf
            .iter()
            .map(|&c| if c == b'\n' { b'\r' } else { c })
            .collect();
        let crlf: Vec<u8> = lf
            .iter()
            .flat_map(|&c| {
                if c == b'\n' {
                    vec![b'\r', b'\n']
                } else {
                    vec![c]
                }
            })
            .collect();
        let want = simple(&run(&[&lf], false));
        assert_eq!(want.len(), 2);
        assert_eq!(want[0].1, "a\nb");
        for input in [&cr, &crlf] {
            for n in 1..input.len() {
                let chunks: Vec<&[u8]> = input.chunks(n).collect();
                assert_eq!(simple(&run(&chunks, false)), want, "chunk {n}");
            }
        }
    }

    #[test]
    fn split_crlf_is_one_line_end() {
        // `data: a\r` | `\n\r\n`: the LF completes the CR, then CRLF is the blank line.
        let out = run(&[b"data: a\r", b"\n\r\n"], false);
        assert_eq!(simple(&out), vec![("message".into(), "a".into(), None)]);
        // A lone CR then a CR: a blank line.
        let out = run(&[b"data: a\r", b"\rdata: b\r\r"], false);
        assert_eq!(simple(&out).len(), 2);
    }

    #[test]
    fn field_parsing() {
        let out = run(
            &[b"data:x\n\ndata:  y\n\ndata\n\nevent\ndata: z\n\nfoo: bar\n\n"],
            false,
        );
        let s = simple(&out);
        assert_eq!(s[0].1, "x");
        assert_eq!(s[1].1, " y");
        assert_eq!(s[2].1, "");
        assert_eq!(s[3].0, "message"); // empty event type
        assert_eq!(s[3].1, "z");
        assert_eq!(s.len(), 4); // `foo` only: no data, not dispatched
    }

    #[test]
    fn no_data_no_dispatch_and_id_rules() {
        let out = run(
            &[b"event: ping\n\nid: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: x\0y\ndata: d\n\n"],
            false,
        );
        let s = simple(&out);
        assert_eq!(s.len(), 4);
        assert_eq!(s[0], ("message".into(), "a".into(), Some("1".into())));
        assert_eq!(s[1].2.as_deref(), Some("1"));
        assert_eq!(s[2].2, None);
        assert_eq!(s[3].2, None); // NUL: ignored
    }

    #[test]
    fn retry_only_digits() {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.feed(b"retry: 12a\n\nretry: 50\n\nretry:\n\n", &mut out);
        assert_eq!(d.retry(), Some(50));
    }

    #[test]
    fn bom_only_once_and_split() {
        let out = run(&[b"\xEF", b"\xBB", b"\xBFdata: a\n\n"], false);
        assert_eq!(simple(&out)[0].1, "a");
        let out = run(&[b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n"], false);
        // A second BOM is part of the first line's field name: not `data`.
        assert!(simple(&out).is_empty());
        // A partial BOM that is not one is kept as input.
        let out = run(&[b"\xEF", b"data: a\n\n"], false);
        assert!(simple(&out).is_empty());
    }

    #[test]
    fn invalid_utf8_replaced_and_split_char_kept() {
        let out = run(&[b"data: caf\xC3", b"\xA9 \xFF\n\n"], false);
        assert_eq!(simple(&out)[0].1, "caf\u{e9} \u{FFFD}");
    }

    #[test]
    fn eof_rules() {
        let out = run(&[b"data: a\n\ndata: b\n"], false);
        assert_eq!(simple(&out).len(), 1);
        assert!(
            matches!(out[1], Err(FrameError { kind: FrameErrorKind::Unterminated, span }) if span == Span::new(9, 17))
        );
        let out = run(&[b"data: a\n\ndata: b"], true);
        assert_eq!(simple(&out).len(), 2);
        assert_eq!(out[1].as_ref().unwrap().span, Span::new(9, 16));
        // Nothing pending: nothing reported.
        assert_eq!(run(&[b"data: a\n\n"], false).len(), 1);
    }

    #[test]
    fn oversized_event_is_discarded_and_decoding_resumes() {
        let limits = FrameLimits {
            max_frame_bytes: 32,
        };
        let big = format!("data: {}\n\ndata: ok\n\n", "x".repeat(100));
        for n in [1, 5, 1000] {
            let mut d = SseDecoder::with_limits(limits.clone());
            let mut out = Vec::new();
            for c in big.as_bytes().chunks(n) {
                d.feed(c, &mut out);
            }
            d.finish(&mut out);
            assert!(
                matches!(
                    out[0],
                    Err(FrameError {
                        kind: FrameErrorKind::TooLarge { limit: 32 },
                        ..
                    })
                ),
                "{n}"
            );
            assert_eq!(
                simple(&out),
                vec![("message".into(), "ok".into(), None)],
                "{n}"
            );
            assert_eq!(out.len(), 2);
        }
        // Many small lines add up too.
        let many = format!("{}\ndata: ok\n\n", "data: abcdefgh\n".repeat(10));
        let out = run(&[many.as_bytes()], false);
        assert!(out.iter().any(|e| e.is_ok()));
        let mut d = SseDecoder::with_limits(limits);
        let mut out = Vec::new();
        d.feed(many.as_bytes(), &mut out);
        assert!(matches!(
            out[0],
            Err(FrameError {
                kind: FrameErrorKind::TooLarge { .. },
                ..
            })
        ));
        assert_eq!(simple(&out), vec![("message".into(), "ok".into(), None)]);
    }

    #[test]
    fn single_line_data_is_zero_copy() {
        let input = Bytes::from_static(b"data: hello\n\n");
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.feed_bytes(input.clone(), &mut out);
        let ev = out.pop().unwrap().unwrap();
        assert_eq!(ev.data.as_ptr(), input[6..].as_ptr());
    }
}
