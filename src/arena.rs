//! The buffer that `ToolArgs` deltas are cut from.
//!
//! A delta owns its bytes, which the dialects write. A short one (a token or
//! two: what a chunk of a streamed call makes) is held inline in its
//! [`Delta`], with no allocation and no reference count. A longer one is
//! copied into one shared buffer and split off (a reference count, not an
//! allocation). Once the consumer has dropped the earlier events, the
//! buffer's space is reclaimed, so a call streamed to a consumer that drops
//! its events does not allocate per delta (`tests/parser_alloc.rs`).
//!
//! (Measured on Hermes calls in 4-byte chunks, `benches/parse.rs`: the two
//! atomic reference-count updates of a shared cut cost more than all the
//! parsing of the chunk; inline, the event costs a copy of 32 bytes.)
//!
//! (The text of a borrowed chunk is copied into a `Bytes` of its own
//! instead: measured on 4-byte chunks, with glibc's allocator and with
//! mimalloc, a small allocation and its free cost less time than the two
//! atomic reference-count updates of a shared cut.)

use bytes::BytesMut;

use crate::event::{Delta, Event, Span};

/// Bytes the buffer grows by when it is full.
const BLOCK: usize = 8 << 10;

/// Bytes of the buffer's first block. A short reply (a call of a few
/// hundred bytes fed whole: one delta) needs no more, and a block this
/// size comes from the allocator's per-thread cache, where an 8 KB one
/// went through its main heap on every parse, and back on every drop
/// (callgrind, the 100 B matrix cells fed whole: a quarter of the parse
/// was `malloc` and `free`).
const FIRST_BLOCK: usize = 1 << 10;

/// A shared buffer for event payloads (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Arena {
    buf: BytesMut,
    /// A block was taken ([`FIRST_BLOCK`] for the first, then [`BLOCK`]).
    started: bool,
}

impl Arena {
    /// A copy of `bytes`, owned by the event it is for.
    #[inline(always)]
    pub(crate) fn copy(&mut self, bytes: &[u8]) -> Delta {
        Delta::inline(bytes).unwrap_or_else(|| self.cut(bytes))
    }

    /// Appends the `ToolArgs` event of call `index` whose delta is a copy of
    /// `bytes`.
    ///
    /// The common case (a short delta, room in `out`) writes the event in
    /// place, its delta's words straight from registers: the same code
    /// built as a value and then moved reads those words back (as wider
    /// loads) right after storing them, which stalls on store forwarding
    /// (measured on Hermes calls in 4-byte chunks: 13 % of the time).
    #[inline(always)]
    pub(crate) fn push_args(
        &mut self,
        out: &mut Vec<Event>,
        index: usize,
        bytes: &[u8],
        span: Span,
    ) {
        if out.len() == out.capacity() {
            out.reserve(1);
        }
        // `out.len() < out.capacity()` holds here; saying so lets the
        // compiler drop `push`'s own growth path, which would need the event
        // as a value first.
        match Delta::inline(bytes) {
            Some(delta) if out.len() < out.capacity() => {
                out.push(Event::ToolArgs { index, delta, span })
            }
            _ => out.push(Event::ToolArgs {
                index,
                delta: self.copy(bytes),
                span,
            }),
        }
    }

    /// [`Arena::push_args`] for a delta of `n` bytes (at most 8) given as
    /// the word `w` (see [`Delta::from_word`]): no buffer is needed.
    #[inline(always)]
    pub(crate) fn push_word(
        &mut self,
        out: &mut Vec<Event>,
        index: usize,
        w: u64,
        n: usize,
        span: Span,
    ) {
        if out.len() == out.capacity() {
            out.reserve(1);
        }
        // As in `push_args`: the guard drops `push`'s growth path.
        if out.len() < out.capacity() {
            let delta = Delta::from_word(w, n);
            out.push(Event::ToolArgs { index, delta, span })
        } else {
            self.push_args(out, index, &w.to_le_bytes()[..n], span)
        }
    }

    /// A copy of `bytes` cut from the shared buffer.
    #[inline(never)]
    fn cut(&mut self, bytes: &[u8]) -> Delta {
        if self.buf.capacity() - self.buf.len() < bytes.len() {
            let block = if self.started { BLOCK } else { FIRST_BLOCK };
            self.started = true;
            self.buf.reserve(bytes.len().max(block));
        }
        self.buf.extend_from_slice(bytes);
        self.buf.split().freeze().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_independent_and_space_is_reused() {
        let mut a = Arena::default();
        let x = a.copy(b"hello");
        assert_eq!(a.buf.capacity(), 0, "a short copy is held inline");
        let long = [b'w'; 40];
        let y = a.copy(&long);
        assert_eq!((&x[..], &y[..]), (&b"hello"[..], &long[..]));
        assert!(
            a.buf.capacity() >= FIRST_BLOCK - long.len(),
            "a long one is cut"
        );
        // The first block is small; the next ones are full blocks.
        let fill = vec![3u8; FIRST_BLOCK];
        assert_eq!(a.copy(&fill), &fill[..]);
        assert!(a.buf.capacity() >= BLOCK - FIRST_BLOCK);
        let big = vec![7u8; 3 * BLOCK];
        assert_eq!(a.copy(&big), &big[..]);
        assert!(a.copy(b"").is_empty());
        drop((x, y));
        // Many copies, each dropped before the next: one block serves.
        for i in 0..10_000u32 {
            let bytes = [i.to_le_bytes(); 10].concat();
            let b = a.copy(&bytes);
            assert_eq!(&b[..], &bytes[..]);
        }
        assert!(a.buf.capacity() <= 4 * BLOCK);
    }
}
