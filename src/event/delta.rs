//! [`Delta`]: the bytes a [`crate::Event::ToolArgs`], [`crate::Event::Text`]
//! or [`crate::Event::Thinking`] carries.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

use bytes::Bytes;

/// Longest fragment a [`Delta`] holds inline: as many bytes as fit beside a
/// length byte in the space of a [`Bytes`], so a `Delta` is no larger.
const INLINE: usize = 23;

/// A fragment of the stream: the bytes of an
/// [`Event::ToolArgs`](crate::Event::ToolArgs) (a piece of a call's
/// arguments JSON), an [`Event::Text`](crate::Event::Text) or an
/// [`Event::Thinking`](crate::Event::Thinking).
///
/// A model server streams a token or two per chunk, and each chunk makes
/// one fragment of a few bytes. A `Delta` holds a fragment of up to 23
/// bytes inline — no allocation, no reference count to update when it is
/// made, cloned or dropped — and a longer one as a [`Bytes`] (a slice of a
/// shared buffer, or of the input). Either way it dereferences to `[u8]`,
/// and converts to [`Bytes`] when one is needed.
///
/// ```
/// use bytes::Bytes;
/// use toolstream::{Config, Event, Parser};
///
/// let mut parser = Parser::new(Config::default());
/// let mut events = Vec::new();
/// let mut args = Vec::new();
/// for chunk in ["<tool_call>{\"name\": \"f\", \"argu", "ments\": {\"x\"", ": 1}}</tool_call>"] {
///     parser.feed(chunk.as_bytes(), &mut events);
/// }
/// parser.finish(&mut events);
/// for event in events {
///     if let Event::ToolArgs { delta, .. } = event {
///         args.extend_from_slice(&delta); // a `Delta` is a `[u8]`
///         let _owned: Bytes = delta.into(); // … or a `Bytes`
///     }
/// }
/// assert_eq!(args, br#"{"x": 1}"#);
/// ```
#[derive(Clone)]
pub struct Delta(Repr);

#[derive(Clone)]
enum Repr {
    /// The bytes, then zeros, then (in the last byte) the length.
    Inline([u8; INLINE + 1]),
    Shared(Bytes),
}

const _: () = assert!(std::mem::size_of::<Delta>() == std::mem::size_of::<Bytes>());

impl Delta {
    /// The empty fragment.
    pub const fn new() -> Delta {
        Delta(Repr::Inline([0; INLINE + 1]))
    }

    /// A copy of `bytes`: inline when short, else in a `Bytes` of its own.
    #[inline]
    pub fn copy_from_slice(bytes: &[u8]) -> Delta {
        Delta::inline(bytes).unwrap_or_else(|| Delta(Repr::Shared(Bytes::copy_from_slice(bytes))))
    }

    /// A copy of `bytes` in a [`Bytes`] of its own (whatever their length),
    /// built in line: the allocation and the copy are calls, but the
    /// handle's words come back in registers, so an event holding it is
    /// written straight into its place. Built by [`Bytes::copy_from_slice`]
    /// (out of line), the handle was written to the stack and read back
    /// as wider loads at once, which stalls on store forwarding: a megabyte
    /// of prose in 64-byte chunks, `perf`, half of [`crate::Parser`]'s own
    /// time at that one load.
    #[inline(always)]
    pub(crate) fn copied(bytes: &[u8]) -> Delta {
        Delta(Repr::Shared(Bytes::from(Box::<[u8]>::from(bytes))))
    }

    /// `bytes` held inline, when they fit.
    ///
    /// The bytes are gathered into three words in registers and stored a
    /// word at a time: a copy of a few bytes to the stack, read back as the
    /// words the event is moved in, would stall on store forwarding (which
    /// cost more than the rest of the event, measured on 4-byte chunks).
    #[inline(always)]
    pub(crate) fn inline(bytes: &[u8]) -> Option<Delta> {
        let n = bytes.len();
        if n > INLINE {
            return None;
        }
        let (w0, w1, w2) = match n {
            0..=8 => (word(bytes), 0, 0),
            9..=16 => (word(&bytes[..8]), word(&bytes[8..]), 0),
            _ => (word(&bytes[..8]), word(&bytes[8..16]), word(&bytes[16..])),
        };
        Some(Delta::from_words(w0, w1, w2, n))
    }

    /// The `n` bytes (at most 8) of the word `w` ([`word`]'s form:
    /// little-endian, zeros past `n`), held inline.
    #[inline(always)]
    pub(crate) fn from_word(w: u64, n: usize) -> Delta {
        debug_assert!(n <= 8 && (n == 8 || w >> (8 * n) == 0));
        Delta::from_words(w, 0, 0, n)
    }

    #[inline(always)]
    fn from_words(w0: u64, w1: u64, w2: u64, n: usize) -> Delta {
        let mut buf = [0; INLINE + 1];
        buf[..8].copy_from_slice(&w0.to_le_bytes());
        buf[8..16].copy_from_slice(&w1.to_le_bytes());
        buf[16..].copy_from_slice(&(w2 | (n as u64) << 56).to_le_bytes());
        Delta(Repr::Inline(buf))
    }

    /// The fragment's bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline(buf) => &buf[..buf[INLINE] as usize],
            Repr::Shared(b) => b,
        }
    }
}

/// The bytes of `b` (at most 8) as a little-endian word, read with at most
/// three loads whatever the length (overlapping reads agree where they overlap).
#[inline(always)]
pub(crate) fn word(b: &[u8]) -> u64 {
    #[inline(always)]
    fn u32_at(b: &[u8], i: usize) -> u64 {
        u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]) as u64
    }
    let n = b.len();
    match n {
        0 => 0,
        1..=3 => {
            b[0] as u64 | (b[n / 2] as u64) << (8 * (n / 2)) | (b[n - 1] as u64) << (8 * (n - 1))
        }
        4..=7 => u32_at(b, 0) | u32_at(b, n - 4) << (8 * (n - 4)),
        _ => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
    }
}

impl Default for Delta {
    fn default() -> Delta {
        Delta::new()
    }
}

impl Deref for Delta {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<[u8]> for Delta {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl Borrow<[u8]> for Delta {
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// Keeps a shared `Bytes` as it is (no copy), however short.
impl From<Bytes> for Delta {
    fn from(bytes: Bytes) -> Delta {
        Delta(Repr::Shared(bytes))
    }
}

/// A shared `Delta` as it is; an inline one copied into a `Bytes`.
impl From<Delta> for Bytes {
    fn from(delta: Delta) -> Bytes {
        match delta.0 {
            Repr::Inline(buf) => Bytes::copy_from_slice(&buf[..buf[INLINE] as usize]),
            Repr::Shared(b) => b,
        }
    }
}

impl From<&[u8]> for Delta {
    fn from(bytes: &[u8]) -> Delta {
        Delta::copy_from_slice(bytes)
    }
}

impl From<&str> for Delta {
    fn from(s: &str) -> Delta {
        Delta::copy_from_slice(s.as_bytes())
    }
}

impl PartialEq for Delta {
    fn eq(&self, other: &Delta) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Delta {}

impl PartialEq<[u8]> for Delta {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_bytes() == other
    }
}

impl PartialEq<&[u8]> for Delta {
    fn eq(&self, other: &&[u8]) -> bool {
        self.as_bytes() == *other
    }
}

impl<const N: usize> PartialEq<[u8; N]> for Delta {
    fn eq(&self, other: &[u8; N]) -> bool {
        self.as_bytes() == other
    }
}

impl<const N: usize> PartialEq<&[u8; N]> for Delta {
    fn eq(&self, other: &&[u8; N]) -> bool {
        self.as_bytes() == *other
    }
}

impl PartialEq<str> for Delta {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for Delta {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Bytes> for Delta {
    fn eq(&self, other: &Bytes) -> bool {
        self.as_bytes() == other
    }
}

impl Hash for Delta {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state)
    }
}

/// As [`Bytes`] shows itself: `b"…"`, printable ASCII as it is, `\n` `\r`
/// `\t` `\0` `\\` `\"` escaped, any other byte as `\xNN`.
impl fmt::Debug for Delta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("b\"")?;
        for &b in self.as_bytes() {
            match b {
                b'\n' => f.write_str("\\n")?,
                b'\r' => f.write_str("\\r")?,
                b'\t' => f.write_str("\\t")?,
                b'\0' => f.write_str("\\0")?,
                b'\\' | b'"' => write!(f, "\\{}", b as char)?,
                0x20..=0x7e => write!(f, "{}", b as char)?,
                _ => write!(f, "\\x{b:02x}")?,
            }
        }
        f.write_str("\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_fragments_are_inline_and_long_ones_shared() {
        for len in 0..=INLINE {
            let bytes: Vec<u8> = (0..len as u8).collect();
            let d = Delta::copy_from_slice(&bytes);
            assert!(matches!(d.0, Repr::Inline { .. }), "{len}");
            assert_eq!(&d[..], &bytes[..]);
            assert_eq!(Bytes::from(d.clone()), bytes);
            assert_eq!(d.clone(), d);
        }
        let long = vec![b'x'; INLINE + 1];
        let d = Delta::copy_from_slice(&long);
        assert!(matches!(d.0, Repr::Shared(_)));
        assert_eq!(d, &long[..]);
        // A `Bytes` is kept as it is, however short, and given back as it was.
        let b = Bytes::from_static(b"{\"a\"");
        let d = Delta::from(b.clone());
        assert!(matches!(d.0, Repr::Shared(_)));
        assert_eq!(Bytes::from(d).as_ptr(), b.as_ptr());
        assert!(Delta::new().is_empty());
        assert_eq!(Delta::default(), Delta::from(""));
    }

    #[test]
    fn a_copied_fragment_owns_a_copy_whatever_its_length() {
        // `Delta::copied` (the text of a borrowed chunk, built in line) is
        // what `copy_from_slice` gives for a long fragment: the same bytes,
        // in a buffer of their own, which outlives the input and gives its
        // bytes back whole as a `Bytes` and a `Vec`.
        for len in [0usize, 1, INLINE, INLINE + 1, 64, 4096] {
            let mut input: Vec<u8> = (0..len).map(|k| (k % 251) as u8).collect();
            let d = Delta::copied(&input);
            assert!(matches!(d.0, Repr::Shared(_)), "{len}");
            assert_eq!(d, Delta::copy_from_slice(&input), "{len}");
            assert!(len == 0 || d.as_ptr() != input.as_ptr());
            let want = input.clone();
            input.iter_mut().for_each(|b| *b = !*b);
            drop(input);
            assert_eq!(&d[..], &want[..], "{len}");
            assert_eq!(Bytes::from(d.clone()), want);
            assert_eq!(Vec::from(Bytes::from(d)), want);
        }
    }

    #[test]
    fn equality_hash_and_debug_go_by_the_bytes() {
        use std::collections::hash_map::DefaultHasher;
        let hash = |d: &Delta| {
            let mut h = DefaultHasher::new();
            d.hash(&mut h);
            h.finish()
        };
        let inline = Delta::from("ab\n\"");
        let shared = Delta::from(Bytes::from_static(b"ab\n\""));
        assert_eq!(inline, shared);
        assert_eq!(hash(&inline), hash(&shared));
        assert_eq!(inline, "ab\n\"");
        assert_eq!(inline, b"ab\n\"");
        assert_ne!(inline, Delta::from("ab"));
        assert_eq!(
            format!("{inline:?}"),
            format!("{:?}", Bytes::from_static(b"ab\n\""))
        );
        assert_eq!(format!("{:?}", Delta::from("\u{e9}")), "b\"\\xc3\\xa9\"");
        // Every byte, inline and shared, shown as `Bytes` shows it.
        for b in 0..=255u8 {
            let bytes = Bytes::from(vec![b'a', b, b'\'']);
            let want = format!("{bytes:?}");
            assert_eq!(format!("{:?}", Delta::copy_from_slice(&bytes)), want, "{b}");
            assert_eq!(format!("{:?}", Delta::from(bytes)), want, "{b}");
        }
    }
}
