//! What the two framing layers ([`crate::sse`] and [`crate::ndjson`]) share:
//! their size limits and their error type.

use std::fmt;

use crate::event::Span;

/// Size limits of the framing layer.
///
/// # Security
///
/// A framing decoder has to buffer a frame (an SSE event, an NDJSON line)
/// until its end arrives. A peer that never sends the end (or sends a
/// gigabyte without a newline) would make that buffer grow without bound, so
/// every frame is capped. A frame that grows past the cap is **discarded up
/// to its end** (the next blank line for SSE, the next newline for NDJSON),
/// one [`FrameError`] of kind [`FrameErrorKind::TooLarge`] is reported, and
/// decoding resumes with the next frame. Memory held by a decoder is
/// therefore bounded by the cap plus one read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameLimits {
    /// Maximum size of one SSE event (all its lines, line ends included) or
    /// one NDJSON line, in bytes. Default 16 MiB: large enough for the
    /// biggest real provider frames (a Responses `response.completed` echoing
    /// long instructions and every output item, an Anthropic web-search
    /// result block), small enough to bound memory.
    pub max_frame_bytes: usize,
}

impl Default for FrameLimits {
    fn default() -> Self {
        FrameLimits {
            max_frame_bytes: 16 << 20,
        }
    }
}

/// What went wrong with a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameErrorKind {
    /// The frame exceeded [`FrameLimits::max_frame_bytes`] and was discarded.
    TooLarge {
        /// The limit in force.
        limit: usize,
    },
    /// The stream ended inside an SSE event (no blank line after it); per the
    /// WHATWG rules the event was discarded. For a binary eventstream: the
    /// stream ended inside a message.
    Unterminated,
    /// A binary eventstream message failed its checksum or structure checks.
    /// Its length field cannot be trusted, so decoding stops there.
    Corrupt,
    /// An SSE line the event-stream rules ignore: a field name that is none
    /// of `data`, `event`, `id`, `retry` (a line that lost its `data:`
    /// prefix reads as one). The line is skipped, as the rules say, and
    /// reported, since the frame it belonged to may be lost.
    IgnoredLine,
}

/// A frame that could not be delivered. Framing errors never stop a decoder:
/// they are reported in place of the frame and decoding goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameError {
    /// What happened.
    pub kind: FrameErrorKind,
    /// The bytes concerned: for `TooLarge`, from the frame's start to one
    /// byte past the limit (the rest of the frame is skipped silently); for
    /// `Unterminated`, the discarded partial event.
    pub span: Span,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            FrameErrorKind::TooLarge { limit } => write!(
                f,
                "frame at {} exceeds the {limit}-byte limit (max_frame_bytes); discarded",
                self.span
            ),
            FrameErrorKind::Unterminated => {
                write!(
                    f,
                    "stream ended inside an event at {}; event discarded",
                    self.span
                )
            }
            FrameErrorKind::IgnoredLine => {
                write!(
                    f,
                    "line at {} has no field the SSE rules know (a lost `data:` prefix?); skipped",
                    self.span
                )
            }
            FrameErrorKind::Corrupt => {
                write!(
                    f,
                    "corrupt eventstream message at {}; the rest of the stream is skipped",
                    self.span
                )
            }
        }
    }
}

impl std::error::Error for FrameError {}
