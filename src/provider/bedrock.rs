//! AWS Bedrock `ConverseStream`: the binary `application/vnd.amazon.eventstream`
//! framing ([`EventStreamDecoder`]) and the Converse event decoder.
//!
//! Supported: ConverseStream events (`messageStart`, `contentBlockStart`
//! with `toolUse`, `contentBlockDelta` with `text` / `toolUse.input` /
//! `reasoningContent`, `contentBlockStop`, `messageStop`, `metadata`) and
//! exception messages, from the binary eventstream (CRCs checked) or as JSON
//! payloads one per line (`{"contentBlockDelta": {…}}`, or
//! `{"event": …, "message_type": …, "payload": {…}}`). Not supported:
//! `InvokeModelWithResponseStream` (Anthropic events base64-wrapped in
//! `chunk.bytes`) and event signing.

use std::collections::HashMap;

use bytes::{Buf, Bytes, BytesMut};

use super::json::{Doc, Payloads, J};
use super::{Base, Decode, Frame};
use crate::config::Config;
use crate::event::{Event, FinishReason, OpaqueKind, Span};
use crate::frame::{FrameError, FrameErrorKind, FrameLimits};

/// One eventstream message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The `:event-type` header.
    pub event_type: Option<String>,
    /// The `:message-type` header (`event`, `exception`, `error`).
    pub message_type: Option<String>,
    /// The `:exception-type` header (or `:error-code`).
    pub exception_type: Option<String>,
    /// The payload.
    pub payload: Bytes,
    /// Where the message is in the stream.
    pub span: Span,
}

const fn crc_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static CRC: [u32; 256] = crc_table();

/// CRC-32 (IEEE), as eventstream uses it.
pub(crate) fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c = CRC[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
    }
    !c
}

/// The incremental AWS eventstream decoder (sans-IO).
///
/// A message is `total length (u32 BE) | headers length (u32 BE) | prelude
/// CRC | headers | payload | message CRC`. Messages larger than
/// [`FrameLimits::max_frame_bytes`] are skipped with a
/// [`FrameErrorKind::TooLarge`] error; a message that fails a CRC or
/// structure check is reported as [`FrameErrorKind::Corrupt`] and the rest
/// of the stream is ignored (lengths cannot be trusted after that).
#[derive(Debug)]
pub struct EventStreamDecoder {
    limits: FrameLimits,
    buf: BytesMut,
    /// Absolute offset of `buf[0]`.
    start: u64,
    /// Bytes of an oversized message still to skip.
    skip: usize,
    dead: bool,
}

impl Default for EventStreamDecoder {
    fn default() -> Self {
        EventStreamDecoder::new()
    }
}

impl EventStreamDecoder {
    /// A decoder with the default limits.
    pub fn new() -> Self {
        EventStreamDecoder::with_limits(FrameLimits::default())
    }

    /// A decoder with the given limits.
    pub fn with_limits(limits: FrameLimits) -> Self {
        EventStreamDecoder {
            limits,
            buf: BytesMut::new(),
            start: 0,
            skip: 0,
            dead: false,
        }
    }

    /// Feeds the next read.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Result<Message, FrameError>>) {
        self.feed_bytes(Bytes::copy_from_slice(chunk), out);
    }

    /// Feeds the next read (the buffer is copied only while a message is incomplete).
    pub fn feed_bytes(&mut self, chunk: Bytes, out: &mut Vec<Result<Message, FrameError>>) {
        if self.dead {
            self.start += chunk.len() as u64;
            return;
        }
        let mut chunk = chunk;
        if self.skip > 0 {
            let n = self.skip.min(chunk.len());
            self.skip -= n;
            self.start += n as u64;
            chunk.advance(n);
        }
        self.buf.extend_from_slice(&chunk);
        loop {
            if self.buf.len() < 12 {
                return;
            }
            let total =
                u32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
            let headers_len =
                u32::from_be_bytes([self.buf[4], self.buf[5], self.buf[6], self.buf[7]]) as usize;
            let prelude_crc =
                u32::from_be_bytes([self.buf[8], self.buf[9], self.buf[10], self.buf[11]]);
            if crc32(&self.buf[..8]) != prelude_crc || total < 16 || headers_len + 16 > total {
                self.corrupt(12, out);
                return;
            }
            if total > self.limits.max_frame_bytes {
                out.push(Err(FrameError {
                    kind: FrameErrorKind::TooLarge {
                        limit: self.limits.max_frame_bytes,
                    },
                    span: Span::new(self.start, self.start + total as u64),
                }));
                let n = total.min(self.buf.len());
                self.buf.advance(n);
                self.start += n as u64;
                self.skip = total - n;
                if self.skip > 0 {
                    return;
                }
                continue;
            }
            if self.buf.len() < total {
                return;
            }
            let msg = self.buf.split_to(total).freeze();
            let span = Span::new(self.start, self.start + total as u64);
            self.start += total as u64;
            let crc = u32::from_be_bytes([
                msg[total - 4],
                msg[total - 3],
                msg[total - 2],
                msg[total - 1],
            ]);
            if crc32(&msg[..total - 4]) != crc {
                self.dead = true;
                out.push(Err(FrameError {
                    kind: FrameErrorKind::Corrupt,
                    span,
                }));
                return;
            }
            match parse_message(&msg, headers_len, span) {
                Some(m) => out.push(Ok(m)),
                None => {
                    self.dead = true;
                    out.push(Err(FrameError {
                        kind: FrameErrorKind::Corrupt,
                        span,
                    }));
                    return;
                }
            }
        }
    }

    /// The `len` bytes at the start of the buffer are corrupt.
    fn corrupt(&mut self, len: usize, out: &mut Vec<Result<Message, FrameError>>) {
        self.dead = true;
        let end = self.start + len as u64;
        out.push(Err(FrameError {
            kind: FrameErrorKind::Corrupt,
            span: Span::new(self.start, end),
        }));
        self.buf.clear();
    }

    /// Ends the stream: a partial message is reported as
    /// [`FrameErrorKind::Unterminated`]. The decoder is reset.
    pub fn finish(&mut self, out: &mut Vec<Result<Message, FrameError>>) {
        if !self.buf.is_empty() && !self.dead {
            out.push(Err(FrameError {
                kind: FrameErrorKind::Unterminated,
                span: Span::new(self.start, self.start + self.buf.len() as u64),
            }));
        }
        *self = EventStreamDecoder::with_limits(self.limits.clone());
    }
}

fn parse_message(msg: &Bytes, headers_len: usize, span: Span) -> Option<Message> {
    let headers = msg.get(12..12 + headers_len)?;
    let mut m = Message {
        event_type: None,
        message_type: None,
        exception_type: None,
        payload: msg.slice(12 + headers_len..msg.len() - 4),
        span,
    };
    let mut i = 0;
    while i < headers.len() {
        let name_len = *headers.get(i)? as usize;
        let name = std::str::from_utf8(headers.get(i + 1..i + 1 + name_len)?).ok()?;
        i += 1 + name_len;
        let ty = *headers.get(i)?;
        i += 1;
        let value_len = match ty {
            0 | 1 => 0,
            2 => 1,
            3 => 2,
            4 => 4,
            5 | 8 => 8,
            9 => 16,
            6 | 7 => {
                let l = u16::from_be_bytes([*headers.get(i)?, *headers.get(i + 1)?]) as usize;
                i += 2;
                l
            }
            _ => return None,
        };
        let value = headers.get(i..i + value_len)?;
        i += value_len;
        if ty == 7 {
            let v = String::from_utf8_lossy(value).into_owned();
            match name {
                ":event-type" => m.event_type = Some(v),
                ":message-type" => m.message_type = Some(v),
                ":exception-type" | ":error-code" => m.exception_type = Some(v),
                _ => {}
            }
        }
    }
    Some(m)
}

/// The Converse event decoder.
pub(crate) struct BedrockDecoder {
    base: Base,
    by_block: HashMap<u64, usize>,
    stopped: bool,
}

impl BedrockDecoder {
    pub(crate) fn new(cfg: &Config) -> Self {
        let mut base = Base::new(cfg, "`messageStop`");
        base.calls.empty_ok = true;
        BedrockDecoder {
            base,
            by_block: HashMap::new(),
            stopped: false,
        }
    }

    fn event(&mut self, d: &Doc<'_, '_>, ty: &str, p: J<'_, '_>, span: Span, out: &mut Vec<Event>) {
        match ty {
            "messageStart" => {
                self.base.active = true;
                self.stopped = false;
                self.by_block.clear();
            }
            "contentBlockStart" => {
                self.base.active = true;
                let tu = p.get("start").get("toolUse");
                if tu.is_object() {
                    let ci = self.base.calls.begin(
                        tu.get("toolUseId").nonempty(),
                        tu.get("name").nonempty(),
                        span,
                        out,
                    );
                    if let Some(b) = p.get("contentBlockIndex").u64() {
                        self.by_block.insert(b, ci);
                    }
                }
            }
            "contentBlockDelta" => {
                self.base.active = true;
                let delta = p.get("delta");
                if let Some(t) = delta.get("text").str() {
                    self.base.text(d, t, span, out);
                }
                let rc = delta.get("reasoningContent");
                if let Some(t) = rc.get("text").str() {
                    self.base.thinking(d, t, span, out);
                }
                if let Some(s) = rc.get("signature").nonempty() {
                    out.push(Event::Opaque {
                        kind: OpaqueKind::ThinkingSignature,
                        index: None,
                        data: s.to_owned(),
                        span,
                    });
                }
                if let Some(s) = rc.get("redactedContent").nonempty() {
                    out.push(Event::Opaque {
                        kind: OpaqueKind::RedactedThinking,
                        index: None,
                        data: s.to_owned(),
                        span,
                    });
                }
                if let Some(input) = delta.get("toolUse").get("input").str() {
                    match p
                        .get("contentBlockIndex")
                        .u64()
                        .and_then(|b| self.by_block.get(&b))
                    {
                        Some(&ci) => self.base.calls.args(ci, input.as_bytes(), span, out),
                        None => self.base.unknown(
                            "tool input for a block that was not started; skipped",
                            span,
                            out,
                        ),
                    }
                }
            }
            "contentBlockStop" => {
                self.base.active = true;
                if let Some(ci) = p
                    .get("contentBlockIndex")
                    .u64()
                    .and_then(|b| self.by_block.remove(&b))
                {
                    self.base.calls.end(ci, false, span, out);
                }
            }
            "messageStop" => {
                self.base.active = true;
                let reason = match p.get("stopReason").str().unwrap_or("end_turn") {
                    "end_turn" | "stop_sequence" => FinishReason::Stop,
                    "tool_use" => FinishReason::ToolCalls,
                    "max_tokens" => FinishReason::Length,
                    "guardrail_intervened" | "content_filtered" => FinishReason::ContentFilter,
                    other => FinishReason::Other(other.to_owned()),
                };
                let cut = reason == FinishReason::Length;
                self.base.calls.end_all(cut, span, out);
                self.base.reason = Some(reason);
                self.base.eof_ok = true;
                self.stopped = true;
            }
            "metadata" => {
                let u = p.get("usage");
                self.base.set_usage(
                    u.get("inputTokens").u64(),
                    u.get("outputTokens").u64(),
                    None,
                );
                if self.stopped {
                    self.stopped = false;
                    self.base.finish_response(span, out);
                }
            }
            "exception" => {
                let kind = p.get("__exception").str().unwrap_or("exception");
                let msg = p.get("message").str().unwrap_or_default();
                let inner: Option<String> = serde_json::from_str::<serde_json::Value>(msg)
                    .ok()
                    .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(str::to_owned));
                let message = format!("{kind}: {}", inner.as_deref().unwrap_or(msg));
                self.base.provider_error(message, span, out);
            }
            other if other.ends_with("Exception") => {
                let msg = p.get("message").str().unwrap_or("exception");
                self.base
                    .provider_error(format!("{other}: {msg}"), span, out);
            }
            other => self.base.unknown(
                format!("event `{other}` is not represented; skipped"),
                span,
                out,
            ),
        }
    }
}

const EVENT_KEYS: &[&str] = &[
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
];

impl Decode for BedrockDecoder {
    fn base(&mut self) -> &mut Base {
        &mut self.base
    }

    fn frame(&mut self, f: &Frame<'_>, p: &mut Payloads, out: &mut Vec<Event>) {
        if f.data.trim_ascii().is_empty() {
            return;
        }
        let mark = out.len();
        let res = p.parse_lenient(f.data, |d| {
            let r = d.root;
            if let Some(ev) = f.event {
                self.event(d, ev, r, f.span, out);
            } else if let (Some(ev), true) = (r.get("event").str(), r.get("payload").is_object()) {
                // `{"event", "message_type", "payload"}` lines.
                if r.get("message_type").str() == Some("exception") {
                    let msg = r.get("payload").get("message").str().unwrap_or("exception");
                    self.base
                        .provider_error(format!("{ev}: {msg}"), f.span, out);
                } else {
                    self.event(d, ev, r.get("payload"), f.span, out);
                }
            } else if let Some(k) = EVENT_KEYS.iter().find(|k| r.get(k).is_object()) {
                self.event(d, k, r.get(k), f.span, out);
            } else if let Some((k, v)) = r.members().find(|(k, _)| k.ends_with("Exception")) {
                self.event(d, k, v, f.span, out);
            } else {
                self.base.unknown(
                    "payload is not a ConverseStream event; skipped",
                    f.span,
                    out,
                );
            }
        });
        self.base.parsed(res.map(|r| r.1), f.span, mark, out);
    }

    fn finish(&mut self, end: u64, out: &mut Vec<Event>) {
        self.base.eof(end, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_known_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    fn message(event: &str, payload: &[u8]) -> Vec<u8> {
        let mut headers = Vec::new();
        for (k, v) in [(":event-type", event), (":message-type", "event")] {
            headers.push(k.len() as u8);
            headers.extend_from_slice(k.as_bytes());
            headers.push(7);
            headers.extend_from_slice(&(v.len() as u16).to_be_bytes());
            headers.extend_from_slice(v.as_bytes());
        }
        let total = 12 + headers.len() + payload.len() + 4;
        let mut m = Vec::new();
        m.extend_from_slice(&(total as u32).to_be_bytes());
        m.extend_from_slice(&(headers.len() as u32).to_be_bytes());
        let c = crc32(&m);
        m.extend_from_slice(&c.to_be_bytes());
        m.extend_from_slice(&headers);
        m.extend_from_slice(payload);
        let c = crc32(&m);
        m.extend_from_slice(&c.to_be_bytes());
        m
    }

    #[test]
    fn decodes_messages_at_any_split() {
        let mut input = message("messageStart", br#"{"role":"assistant"}"#);
        input.extend(message(
            "contentBlockDelta",
            br#"{"contentBlockIndex":0,"delta":{"text":"hi"}}"#,
        ));
        for n in 1..input.len() {
            let mut d = EventStreamDecoder::new();
            let mut out = Vec::new();
            for c in input.chunks(n) {
                d.feed(c, &mut out);
            }
            d.finish(&mut out);
            assert_eq!(out.len(), 2, "{n}");
            let m = out[1].as_ref().unwrap();
            assert_eq!(m.event_type.as_deref(), Some("contentBlockDelta"));
            assert_eq!(
                &m.payload[..],
                br#"{"contentBlockIndex":0,"delta":{"text":"hi"}}"#
            );
        }
        let mut bad = input.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let mut d = EventStreamDecoder::new();
        let mut out = Vec::new();
        d.feed(&bad, &mut out);
        assert!(matches!(
            out[1],
            Err(FrameError {
                kind: FrameErrorKind::Corrupt,
                ..
            })
        ));
    }
}
