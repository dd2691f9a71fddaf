//! Parsing provider payloads: the hot path of every decoder.
//!
//! # Why simd-json's tape
//!
//! Each SSE/NDJSON payload is parsed with [`simd_json::fill_tape_padded`]
//! into a *tape* (a flat `Vec` of nodes) whose buffers (`Buffers`, the tape
//! `Vec`, and the padded scratch copy of the payload) are **reused** from one
//! payload to the next. Once warm, parsing a payload allocates nothing; a
//! `serde_json::Value` allocates a map per object and a `String` per string,
//! and even typed `serde_json` structs allocate their `Vec`s and any escaped
//! string. Objects on the tape are searched linearly, which is the right
//! trade for provider chunks (a dozen keys at most). Strings are unescaped in
//! place, so a string without escapes is a byte-for-byte copy of the input:
//! [`Doc::bytes`] then hands out a zero-copy slice of the original payload
//! instead of allocating. The `payload_parse` group of `benches/codec.rs`
//! measures this choice against `serde_json::Value` and `serde_json` typed
//! structs on the same chunks.

use bytes::Bytes;
use simd_json::prelude::*;
use simd_json::tape::{Tape, Value as TValue};

/// Reusable state for parsing payloads.
pub(crate) struct Payloads {
    scratch: Vec<u8>,
    buffers: simd_json::Buffers,
    tape: Tape<'static>,
}

impl std::fmt::Debug for Payloads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Payloads").finish_non_exhaustive()
    }
}

impl Default for Payloads {
    fn default() -> Self {
        Payloads {
            scratch: Vec::new(),
            buffers: simd_json::Buffers::new(1024),
            tape: Tape(Vec::new()),
        }
    }
}

impl Payloads {
    /// Parses `data` and runs `f` on it; `Err` holds the parser's message.
    ///
    /// A payload that is not valid JSON but that the crate's repairer can
    /// turn into a JSON object (a payload cut short, a missing brace) is
    /// parsed in its repaired form, and `repaired` is set with the original
    /// error so the caller can report it.
    pub(crate) fn parse_lenient<R>(
        &mut self,
        data: &Bytes,
        f: impl FnOnce(&Doc<'_, '_>) -> R,
    ) -> Result<(R, Option<String>), String> {
        let mut f = Some(f);
        let mut first = None;
        let r = self.parse(data, |d| (f.take().expect("called once"))(d));
        match r {
            Ok(v) => return Ok((v, None)),
            Err(e) => first = first.or(Some(e)),
        }
        let err = first.unwrap_or_default();
        let Some(rep) = crate::json::repair(data) else {
            return Err(err);
        };
        if !rep.json.trim_start().starts_with('{') {
            return Err(err);
        }
        let fixed = Bytes::from(rep.json);
        let f = f.take().ok_or_else(|| err.clone())?;
        self.parse(&fixed, f)
            .map(|v| (v, Some(err.clone())))
            .map_err(|_| err)
    }

    /// Parses `data` and runs `f` on it; `Err` holds the parser's message.
    pub(crate) fn parse<R>(
        &mut self,
        data: &Bytes,
        f: impl FnOnce(&Doc<'_, '_>) -> R,
    ) -> Result<R, String> {
        let len = data.len();
        self.scratch.clear();
        self.scratch.extend_from_slice(data);
        self.scratch.resize(len + simd_json::INPUT_PADDING, b' ');
        let base = self.scratch.as_ptr() as usize;
        let mut tape = std::mem::replace(&mut self.tape, Tape(Vec::new())).reset();
        let res = simd_json::fill_tape_padded(&mut self.scratch, len, &mut self.buffers, &mut tape);
        let out = match res {
            Ok(()) => {
                let doc = Doc {
                    root: J(Some(tape.as_value())),
                    orig: data,
                    base,
                };
                Ok(f(&doc))
            }
            Err(e) => Err(e.to_string()),
        };
        self.tape = tape.reset();
        out
    }
}

/// A parsed payload.
pub(crate) struct Doc<'t, 'i> {
    pub root: J<'t, 'i>,
    orig: &'t Bytes,
    base: usize,
}

impl Doc<'_, '_> {
    /// The bytes of a string from this document: a zero-copy slice of the
    /// original payload when the string had no escapes, else a copy.
    pub(crate) fn bytes(&self, s: &str) -> Bytes {
        let p = s.as_ptr() as usize;
        if p >= self.base {
            let off = p - self.base;
            if let Some(orig) = self.orig.get(off..off + s.len()) {
                if orig == s.as_bytes() {
                    return self.orig.slice(off..off + s.len());
                }
            }
        }
        Bytes::copy_from_slice(s.as_bytes())
    }
}

/// A possibly missing JSON value: lookups chain through missing values.
#[derive(Clone, Copy)]
pub(crate) struct J<'t, 'i>(pub Option<TValue<'t, 'i>>);

impl<'t, 'i> J<'t, 'i> {
    /// The member `k` of an object.
    #[inline]
    pub(crate) fn get(self, k: &str) -> J<'t, 'i> {
        J(self.0.and_then(|v| v.get(k)))
    }

    /// Several members of an object in one pass over its keys (a `get` per
    /// key would scan the object once per key): `out[i]` is the member named
    /// `keys[i]`, missing if absent.
    #[inline]
    pub(crate) fn pick<const N: usize>(self, keys: [&str; N]) -> [J<'t, 'i>; N] {
        let mut out = [J(None); N];
        let Some(o) = self.0.and_then(|v| v.as_object()) else {
            return out;
        };
        for (k, v) in o.iter() {
            if let Some(i) = keys.iter().position(|key| *key == k) {
                if out[i].0.is_none() {
                    out[i] = J(Some(v));
                }
            }
        }
        out
    }

    /// The string, if this is one.
    #[inline]
    pub(crate) fn str(self) -> Option<&'i str> {
        self.0.and_then(|v| v.into_string())
    }

    /// The string, if this is a non-empty one.
    #[inline]
    pub(crate) fn nonempty(self) -> Option<&'i str> {
        self.str().filter(|s| !s.is_empty())
    }

    pub(crate) fn u64(self) -> Option<u64> {
        let v = self.0?;
        v.as_u64().or_else(|| {
            v.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| f as u64)
        })
    }

    pub(crate) fn bool(self) -> Option<bool> {
        self.0.and_then(|v| v.as_bool())
    }

    /// Present and not `null`.
    pub(crate) fn exists(self) -> bool {
        self.0.is_some_and(|v| v.as_null().is_none())
    }

    pub(crate) fn is_object(self) -> bool {
        self.0.is_some_and(|v| v.is_object())
    }

    pub(crate) fn is_array(self) -> bool {
        self.0.is_some_and(|v| v.is_array())
    }

    /// The elements, if this is an array.
    pub(crate) fn items(self) -> impl Iterator<Item = J<'t, 'i>> {
        self.0
            .and_then(|v| v.as_array())
            .into_iter()
            .flat_map(|a| a.iter())
            .map(|v| J(Some(v)))
    }

    /// The members, if this is an object.
    pub(crate) fn members(self) -> impl Iterator<Item = (&'i str, J<'t, 'i>)> {
        self.0
            .and_then(|v| v.as_object())
            .into_iter()
            .flat_map(|o| o.iter())
            .map(|(k, v)| (k, J(Some(v))))
    }

    /// The number of elements or members (0 for scalars and missing values).
    pub(crate) fn len(self) -> usize {
        match self.0 {
            Some(v) => v
                .as_array()
                .map(|a| a.len())
                .or_else(|| v.as_object().map(|o| o.len()))
                .unwrap_or(0),
            None => 0,
        }
    }

    /// Compact JSON text of the value (`null` when missing).
    pub(crate) fn encode(self) -> String {
        match self.0 {
            Some(v) => v.encode(),
            None => "null".to_string(),
        }
    }

    /// True for a number.
    pub(crate) fn is_number(self) -> bool {
        self.0.is_some_and(|v| v.is_number())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_reuse_and_zero_copy() {
        let mut p = Payloads::default();
        let data = Bytes::from_static(
            br#"{"a":{"b":"plain","c":"esc\"aped","n":3,"f":1.5,"t":true,"z":null},"l":[1,"x"]}"#,
        );
        for _ in 0..3 {
            p.parse(&data, |d| {
                let a = d.root.get("a");
                let plain = d.bytes(a.get("b").str().unwrap());
                assert_eq!(&plain[..], b"plain");
                assert!(
                    std::ptr::eq(plain.as_ptr(), data[11..].as_ptr()),
                    "a string without escapes is a slice of the payload"
                );
                let esc = d.bytes(a.get("c").str().unwrap());
                assert_eq!(&esc[..], b"esc\"aped");
                assert_eq!(a.get("n").u64(), Some(3));
                assert_eq!(a.get("f").u64(), None);
                assert_eq!(a.get("t").bool(), Some(true));
                assert!(!a.get("z").exists());
                assert!(!a.get("missing").get("deeper").exists());
                assert_eq!(d.root.get("l").items().count(), 2);
                assert_eq!(a.members().count(), 6);
                assert_eq!(d.root.get("l").encode(), r#"[1,"x"]"#);
            })
            .unwrap();
        }
        assert!(p.parse(&Bytes::from_static(b"{\"a\":"), |_| ()).is_err());
    }
}
