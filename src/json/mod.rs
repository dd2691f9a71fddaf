//! JSON repair: the incremental transcoder ([`Repairer`]) and one-shot helpers.
//!
//! The policies (decided, and documented in the README):
//!
//! * valid JSON is never changed, not even `\f` or `\b` escapes;
//! * an invalid escape keeps its backslash (`"C:\d"` → `"C:\\d"`);
//! * a missing value is `null`, never `""`;
//! * a key cut off at the end is dropped, a value cut off after its colon is
//!   `null`, a cut-off string is closed, a cut-off number or literal is
//!   completed or trimmed to its longest valid prefix;
//! * leading zeros keep the digits as a string (`007` → `"007"`);
//! * an unescaped `"` inside a string is content unless what follows it can
//!   only continue the structure (`,` `}` `]` `:` or the end);
//! * emitted bytes are never retracted.

mod complete;
mod document;
mod repair;

pub(crate) use complete::completion;

pub use document::{DocumentEnd, DocumentRepairer, LimitHit};
pub use repair::{Mark, Progress, Repairer, Sink, Status, ValueKind};

pub(crate) use repair::{Lane, LaneAt, STASH_MAX};

/// Most bytes a reader hands its repairer at once when it must do per-feed
/// bookkeeping within a long feed (see [`in_pieces`]).
pub(crate) const PIECE: usize = 64 << 10;

/// Feeds `input` to `feed` in pieces of at most [`PIECE`] bytes, stopping at
/// the first piece that does not end with [`Status::NeedMore`]: a reader's
/// per-feed bookkeeping (bounding an open call's repairs) then also runs
/// within one long feed. `feed` gets each piece and its start in `input`.
pub(crate) fn in_pieces(input: &[u8], mut feed: impl FnMut(&[u8], usize) -> Progress) -> Progress {
    let mut i = 0;
    loop {
        let end = (i + PIECE).min(input.len());
        let p = feed(&input[i..end], i);
        i += p.consumed;
        if p.status != Status::NeedMore || i >= input.len() {
            return Progress {
                consumed: i,
                status: p.status,
            };
        }
    }
}

#[allow(unused_imports)]
pub(crate) use repair::{
    block_flags, comma_tail, control_escape, ends_in_blank_line, escape_len, fits_f64,
    holds_blank_line, incomplete_utf8_tail, is_json_number, reuse, run_len, run_len_except,
    str_body, str_tail_cut, utf8_len, SHORT_ESCAPE,
};

use crate::error::NoJson;
use crate::event::Repair;

/// The result of repairing one JSON value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repaired {
    /// The repaired JSON text: always valid JSON.
    pub json: String,
    /// The repairs made.
    pub repairs: Vec<Repair>,
    /// True when the input ended before the value was complete.
    pub truncated: bool,
}

/// Repairs one JSON value at the start of `input` (leading whitespace allowed).
///
/// Returns `None` when the input holds no value at all.
///
/// ```
/// let r = toolstream::json::repair(br#"{"city": 'Paris', "days": 3,"#).unwrap();
/// assert_eq!(r.json, r#"{"city": "Paris", "days": 3}"#);
/// assert!(r.truncated);
/// ```
pub fn repair(input: &[u8]) -> Option<Repaired> {
    let mut r = Repairer::new().document(true);
    let mut out = Vec::with_capacity(input.len() + 8);
    let p = r.feed(input, &mut out);
    let truncated = match p.status {
        Status::Done => false,
        _ => r.finish(&mut out),
    };
    if !r.has_begun() {
        return None;
    }
    Some(Repaired {
        json: into_string(out),
        repairs: r.take_repairs(),
        truncated,
    })
}

/// Finds and repairs the JSON in a piece of text: a value possibly inside prose
/// or a code fence, possibly truncated or malformed. Several top-level values
/// are returned as a JSON array. `chunk` > 0 feeds the repairer in pieces of
/// that size (the result is the same; this exercises the streaming path).
/// Under the default [`crate::Limits`]: a limit reached (JSON nested deeper
/// than `max_depth`) cuts the document there, with a
/// [`crate::RepairKind::LimitExceeded`] repair and `truncated` set; see
/// [`DocumentRepairer`] for other limits, for input that streams in, and to
/// learn which limit cut.
///
/// ```
/// let r = toolstream::json::repair_document(b"Sure!\n```json\n{'a': 1,}\n```\nDone.", 0).unwrap();
/// assert_eq!(r.json, r#"{"a": 1}"#);
/// ```
pub fn repair_document(input: &[u8], chunk: usize) -> Result<Repaired, NoJson> {
    let mut doc = DocumentRepairer::new(&crate::Limits::default());
    let mut out = Vec::new();
    let step = if chunk == 0 {
        input.len().max(1)
    } else {
        chunk
    };
    for piece in input.chunks(step) {
        doc.feed(piece, &mut out);
    }
    let end = doc.finish(&mut out)?;
    Ok(Repaired {
        json: into_string(out),
        repairs: end.repairs,
        truncated: end.truncated,
    })
}

/// At a raw line break (`at[0]`) inside a fenced value: whether a closing
/// fence follows — up to three blanks, three backticks, then a blank, a
/// line break or the end of the input (a line that opens a fence,
/// ```` ```python ````, is content). `Full(n)`: the fence ends `n` bytes
/// into `at`. Decided at a fixed byte: the one after the backticks.
pub(crate) fn closing_fence(at: &[u8]) -> crate::scan::Match {
    let indent = at
        .iter()
        .skip(1)
        .take(4)
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    if indent > 3 {
        return crate::scan::Match::No;
    }
    let ticks = 1 + indent;
    match crate::scan::match_lit(b"```", &at[ticks.min(at.len())..]) {
        crate::scan::Match::Full(n) => match at.get(ticks + n) {
            None => crate::scan::Match::Partial,
            Some(b' ' | b'\t' | b'\r' | b'\n') => crate::scan::Match::Full(ticks + n),
            Some(_) => crate::scan::Match::No,
        },
        crate::scan::Match::Partial => crate::scan::Match::Partial,
        crate::scan::Match::No if ticks >= at.len() => crate::scan::Match::Partial,
        crate::scan::Match::No => crate::scan::Match::No,
    }
}

/// Below this length [`into_string`] always lets std check the bytes in place.
const CHECK_IN_PLACE: usize = 256;

/// Above this length [`into_string`] always lets std check the bytes in
/// place: below glibc's threshold for mapping an allocation on its own
/// (128 KB), a copy reuses memory the process already has.
const COPY_MAX: usize = 64 << 10;

/// Output of the repairer is valid UTF-8 by construction; this makes it a
/// `String`.
///
/// std's check (the only safe way to a `String` without a copy) reads
/// ASCII a word at a time but goes a byte at a time from each non-ASCII
/// character on: some 5 instructions a byte on text with a few accented
/// letters a line, a quarter of all the work of parsing a long call fed
/// whole (callgrind). So long output that is not all ASCII is checked with
/// `simdutf8` and copied instead (the copy costs a fraction of the check).
/// Which of the two is decided from a sample ([`looks_non_ascii`]): reading
/// all of a long ASCII text once more to find out cost half as much as
/// std's check itself.
///
/// Only up to [`COPY_MAX`] bytes: a longer copy is a fresh allocation the
/// allocator maps from the system and gives back (glibc, mimalloc), so each
/// call pays a page fault per 4 KB of it, more than std's check costs
/// (1 MB arguments with accented text fed whole: 276 more page faults per
/// call, and 3-4 times the wall-clock time in the criterion matrix).
pub(crate) fn into_string(bytes: Vec<u8>) -> String {
    if (CHECK_IN_PLACE..=COPY_MAX).contains(&bytes.len()) && looks_non_ascii(&bytes) {
        if let Ok(s) = simdutf8::basic::from_utf8(&bytes) {
            return s.to_owned();
        }
    }
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// Some of `bytes` (at least [`CHECK_IN_PLACE`] long) is not ASCII, from
/// 16 windows of 16 bytes spread over it. Only which check [`into_string`]
/// uses depends on it: text with non-ASCII here and there is caught, and a
/// rare character the sample misses costs std's check little.
fn looks_non_ascii(bytes: &[u8]) -> bool {
    const WINDOWS: usize = 16;
    const WIDTH: usize = 16;
    const _: () = assert!(CHECK_IN_PLACE >= WINDOWS * WIDTH);
    let step = bytes.len() / WINDOWS;
    (0..WINDOWS).any(|k| !bytes[k * step..k * step + WIDTH].is_ascii())
}

#[cfg(test)]
mod tests;
