//! Newline-delimited JSON framing (`application/x-ndjson`, JSON Lines).
//!
//! * A line ends at LF; a CR before the LF is dropped (CRLF files work).
//! * Lines holding only whitespace are skipped.
//! * A last line without a newline is still a line at end of stream (most
//!   NDJSON writers end that way).
//! * A line longer than [`FrameLimits::max_frame_bytes`] is discarded up to its
//!   newline and reported once as [`FrameErrorKind::TooLarge`].
//!
//! The decoder does not parse JSON: it delivers each line's bytes (a
//! zero-copy slice of the input when the line lies inside one read).
//! With the `tokio` feature it is also a `tokio_util::codec::Decoder`.

use bytes::{Bytes, BytesMut};

use crate::event::Span;
use crate::frame::{FrameError, FrameErrorKind, FrameLimits};

/// One line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NdjsonLine {
    /// The line without its line end.
    pub data: Bytes,
    /// Where it is in the stream, line end included.
    pub span: Span,
}

/// The incremental NDJSON line decoder (sans-IO).
///
/// ```
/// use toolstream::ndjson::NdjsonDecoder;
/// let mut dec = NdjsonDecoder::new();
/// let mut out = Vec::new();
/// dec.feed(b"{\"a\":1}\r\n\n{\"b\"", &mut out);
/// dec.feed(b":2}", &mut out);
/// dec.finish(&mut out);
/// let lines: Vec<_> = out.into_iter().map(|l| l.unwrap().data).collect();
/// assert_eq!(lines, [&b"{\"a\":1}"[..], &b"{\"b\":2}"[..]]);
/// ```
#[derive(Debug)]
pub struct NdjsonDecoder {
    limits: FrameLimits,
    pos: u64,
    carry: BytesMut,
    carry_start: u64,
    discarding: bool,
    queue: Vec<Result<NdjsonLine, FrameError>>,
    queue_pos: usize,
    eof_done: bool,
}

impl Default for NdjsonDecoder {
    fn default() -> Self {
        NdjsonDecoder::new()
    }
}

impl NdjsonDecoder {
    /// A decoder with the default [`FrameLimits`].
    pub fn new() -> Self {
        NdjsonDecoder::with_limits(FrameLimits::default())
    }

    /// A decoder with the given limits.
    pub fn with_limits(limits: FrameLimits) -> Self {
        NdjsonDecoder {
            limits,
            pos: 0,
            carry: BytesMut::new(),
            carry_start: 0,
            discarding: false,
            queue: Vec::new(),
            queue_pos: 0,
            eof_done: false,
        }
    }

    /// Number of bytes fed so far.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Feeds the next read (copied once), appending the lines it completes.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Result<NdjsonLine, FrameError>>) {
        if !chunk.is_empty() {
            self.feed_bytes(Bytes::copy_from_slice(chunk), out);
        }
    }

    /// Feeds the next read without copying it.
    pub fn feed_bytes(&mut self, data: Bytes, out: &mut Vec<Result<NdjsonLine, FrameError>>) {
        let base = self.pos;
        let mut i = 0;
        while i < data.len() {
            match memchr::memchr(b'\n', &data[i..]) {
                None => {
                    let n = data.len() - i;
                    if !self.discarding {
                        if self.carry.is_empty() {
                            self.carry_start = base + i as u64;
                        }
                        if self.carry.len() + n > self.limits.max_frame_bytes {
                            self.too_large(base + data.len() as u64, out);
                        } else {
                            self.carry.extend_from_slice(&data[i..]);
                        }
                    }
                    break;
                }
                Some(k) => {
                    let eol = i + k;
                    let end = base + eol as u64 + 1;
                    if self.discarding {
                        self.discarding = false;
                    } else if self.carry.is_empty() {
                        if eol - i > self.limits.max_frame_bytes {
                            self.carry_start = base + i as u64;
                            self.too_large(end, out);
                            self.discarding = false;
                        } else {
                            emit(data.slice(i..eol), base + i as u64, end, out);
                        }
                    } else if self.carry.len() + (eol - i) > self.limits.max_frame_bytes {
                        self.too_large(end, out);
                        self.discarding = false;
                    } else {
                        self.carry.extend_from_slice(&data[i..eol]);
                        let line = self.carry.split().freeze();
                        emit(line, self.carry_start, end, out);
                    }
                    i = eol + 1;
                }
            }
        }
        self.pos = base + data.len() as u64;
    }

    /// The line at `carry_start` is over the limit. The error's span ends at
    /// the first byte over the limit, wherever the reads were split.
    fn too_large(&mut self, _at: u64, out: &mut Vec<Result<NdjsonLine, FrameError>>) {
        let limit = self.limits.max_frame_bytes;
        out.push(Err(FrameError {
            kind: FrameErrorKind::TooLarge { limit },
            span: Span::new(self.carry_start, self.carry_start + limit as u64 + 1),
        }));
        self.carry.clear();
        self.discarding = true;
    }

    /// Ends the stream: a last line without a newline is delivered. The
    /// decoder is then reset for a new stream.
    pub fn finish(&mut self, out: &mut Vec<Result<NdjsonLine, FrameError>>) {
        if !self.discarding && !self.carry.is_empty() {
            let line = self.carry.split().freeze();
            emit(line, self.carry_start, self.pos, out);
        }
        let limits = self.limits.clone();
        let queue = std::mem::take(&mut self.queue);
        let (queue_pos, eof_done) = (self.queue_pos, self.eof_done);
        *self = NdjsonDecoder::with_limits(limits);
        self.queue = queue;
        self.queue_pos = queue_pos;
        self.eof_done = eof_done;
    }

    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    fn pop(&mut self) -> Option<Result<NdjsonLine, FrameError>> {
        let slot = self.queue.get_mut(self.queue_pos)?;
        let item = std::mem::replace(
            slot,
            Err(FrameError {
                kind: FrameErrorKind::Unterminated,
                span: Span::default(),
            }),
        );
        self.queue_pos += 1;
        Some(item)
    }
}

fn emit(mut line: Bytes, start: u64, end: u64, out: &mut Vec<Result<NdjsonLine, FrameError>>) {
    if line.last() == Some(&b'\r') {
        line.truncate(line.len() - 1);
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    out.push(Ok(NdjsonLine {
        data: line,
        span: Span::new(start, end),
    }));
}

#[cfg(feature = "tokio")]
impl tokio_util::codec::Decoder for NdjsonDecoder {
    /// One line, or a [`FrameError`] for an oversized one (an item, so that
    /// the stream goes on).
    type Item = Result<NdjsonLine, FrameError>;
    type Error = std::io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        if self.queue_pos == self.queue.len() && !src.is_empty() {
            let mut q = std::mem::take(&mut self.queue);
            q.clear();
            self.queue_pos = 0;
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

    fn run(input: &[u8], n: usize, limits: FrameLimits) -> Vec<Result<NdjsonLine, FrameError>> {
        let mut d = NdjsonDecoder::with_limits(limits);
        let mut out = Vec::new();
        for c in input.chunks(n.max(1)) {
            d.feed(c, &mut out);
        }
        d.finish(&mut out);
        out
    }

    #[test]
    fn every_chunking_agrees() {
        let input = b"{\"a\":1}\n\r\n  \n{\"b\":\"x\"}\r\n{\"c\":3}";
        let whole = run(input, input.len(), FrameLimits::default());
        assert_eq!(whole.len(), 3);
        let spans: Vec<Span> = whole.iter().map(|l| l.as_ref().unwrap().span).collect();
        assert_eq!(
            spans,
            vec![Span::new(0, 8), Span::new(13, 24), Span::new(24, 31)]
        );
        assert_eq!(&whole[1].as_ref().unwrap().data[..], b"{\"b\":\"x\"}");
        for n in 1..input.len() {
            assert_eq!(run(input, n, FrameLimits::default()), whole, "chunk {n}");
        }
    }

    #[test]
    fn oversized_line_skipped() {
        let input = format!("{}\n{{\"ok\":1}}\n", "x".repeat(50));
        for n in [1, 7, 100] {
            let out = run(
                input.as_bytes(),
                n,
                FrameLimits {
                    max_frame_bytes: 20,
                },
            );
            assert!(
                matches!(
                    out[0],
                    Err(FrameError {
                        kind: FrameErrorKind::TooLarge { limit: 20 },
                        ..
                    })
                ),
                "{n}"
            );
            assert_eq!(&out[1].as_ref().unwrap().data[..], b"{\"ok\":1}", "{n}");
            assert_eq!(out.len(), 2);
        }
    }
}
