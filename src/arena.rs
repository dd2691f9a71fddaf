//! The buffer that `ToolArgs` deltas are cut from.
//!
//! A delta owns its bytes (`bytes::Bytes`), which the dialects write: they
//! are copied into one shared buffer, from which each delta is split off (a
//! reference count, not an allocation). Once the consumer has dropped the
//! earlier events, the buffer's space is reclaimed, so a call streamed in
//! small chunks to a consumer that drops its events does not allocate per
//! delta (`tests/parser_alloc.rs`).
//!
//! (The text of a borrowed chunk is copied into a `Bytes` of its own
//! instead: measured on 4-byte chunks, with glibc's allocator and with
//! mimalloc, a small allocation and its free cost less time than the two
//! atomic reference-count updates of a shared cut.)

use bytes::{Bytes, BytesMut};

/// Bytes the buffer grows by when it is full.
const BLOCK: usize = 8 << 10;

/// A shared buffer for event payloads (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Arena {
    buf: BytesMut,
}

impl Arena {
    /// A copy of `bytes`, owned by the event it is for.
    #[inline]
    pub(crate) fn copy(&mut self, bytes: &[u8]) -> Bytes {
        if self.buf.capacity() - self.buf.len() < bytes.len() {
            self.buf.reserve(bytes.len().max(BLOCK));
        }
        self.buf.extend_from_slice(bytes);
        self.buf.split().freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_independent_and_space_is_reused() {
        let mut a = Arena::default();
        let x = a.copy(b"hello");
        let y = a.copy(b" world");
        assert_eq!((&x[..], &y[..]), (&b"hello"[..], &b" world"[..]));
        let big = vec![7u8; 3 * BLOCK];
        assert_eq!(a.copy(&big), big);
        assert!(a.copy(b"").is_empty());
        drop((x, y));
        // Many small copies, each dropped before the next: one block serves.
        for i in 0..10_000u32 {
            let b = a.copy(&i.to_le_bytes());
            assert_eq!(&b[..], &i.to_le_bytes());
        }
        assert!(a.buf.capacity() <= 4 * BLOCK);
    }
}
