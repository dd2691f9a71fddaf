//! A validating fast path for a well-formed call object read whole (#48).
//!
//! Inside call markup (Hermes' `<tool_call>`), most values are exactly
//! `{"name": "…", "arguments": {…}}`: strict JSON, nothing to repair. When
//! such a value arrives whole in one feed (a non-streaming reply, a log
//! replay, a large socket read), [`scan`] validates it strictly and the
//! reader ([`super::json::JsonCalls`]) emits its events directly, without
//! the repairer and the call router. Anything [`scan`] is not sure of — a
//! value cut by the end of the feed, another key, a key order or envelope
//! it does not know, an escape it would have to think about, a limit it
//! might reach — makes it answer `None`, and the value goes the usual way
//! from its first byte: the hand-over point is always the value's start, so
//! the events cannot depend on it. What the scan accepts, the repairer
//! passes through unchanged (`tests/fast_calls.rs` checks both ways give
//! the same events at every split).
//!
//! A value longer than the repairer's pieces (`json::PIECE`) is read in
//! pieces there, with a `ToolArgs` delta after each: the arguments written
//! up to the piece's end, less what the repairer holds there. The scan
//! takes such a value only when every piece ends inside a string value of
//! the arguments, where what is held is known — a cut escape or character,
//! and a `,` and spaces ending the content ([`crate::json::comma_tail`]),
//! stashed together when at most [`crate::json::STASH_MAX`] bytes — and
//! says where each delta ends ([`Found::cuts`]). Work stays linear: the
//! scan reads each byte once, and a value it refuses is read once more by
//! the repairer, from its start (the fast path is tried once a value).

use crate::config::Limits;

/// A well-formed call object at the start of the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    /// The tool name's bytes (between its quotes): printable ASCII.
    pub name: (usize, usize),
    /// The arguments object's bytes, as written.
    pub args: (usize, usize),
    /// Just past the envelope's closing brace.
    pub end: usize,
    /// A value longer than one of the repairer's pieces: for each piece but
    /// the last, where the arguments the repairer has written at the
    /// piece's end stop (an index into the input). Empty otherwise.
    pub cuts: Vec<usize>,
}

/// Longest value the fast path reads when the feed may stop inside it
/// (the parser gave the block less than all its data), so that a long
/// value cut by the feed costs a short scan only.
const MAX_VALUE: usize = 16 << 10;
/// Deepest nesting inside the arguments the fast path follows.
const MAX_NEST: usize = 32;
/// Longest name the fast path takes.
const MAX_NAME: usize = 64;

/// The scan's state: the input, the limits' bounds on what the repairer
/// holds, and the next piece end to account for.
struct Scan<'a> {
    s: &'a [u8],
    /// Longest key (with its quotes) or run of blanks taken: well inside
    /// `max_token_bytes`, which bounds what the repairer holds of them.
    max_held: usize,
    /// The repairer's token bound (as it sets it).
    max_token: usize,
    /// The next end of a repairer's piece not yet accounted for.
    next_cut: usize,
    cuts: Vec<usize>,
}

impl Scan<'_> {
    #[inline]
    fn blanks(&self, mut i: usize) -> Option<usize> {
        let from = i;
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(i) {
            i += 1;
        }
        (i - from <= self.max_held).then_some(i)
    }

    /// A string value of the arguments whose opening quote is at `i`: the
    /// index past its closing quote, each piece end inside its content
    /// accounted for (one in any other place refuses the value).
    #[inline]
    fn value_string(&mut self, i: usize) -> Option<usize> {
        if self.next_cut >= self.s.len() {
            return string(self.s, i);
        }
        self.long_string(i)
    }

    /// [`Scan::value_string`] when a piece may end inside it: its content
    /// read up to each piece end, then on.
    #[cold]
    #[inline(never)]
    fn long_string(&mut self, i: usize) -> Option<usize> {
        let s = self.s;
        let from = i + 1;
        if self.next_cut <= from {
            return None;
        }
        let mut pos = from;
        let stop = loop {
            let b = self.next_cut;
            if b >= s.len() {
                break content_end(s, pos);
            }
            let e = content_end(&s[..b], pos);
            // Stopped short of the piece end: the string's end (or what
            // makes it no string), unless an escape the end cuts.
            if e < b && !(s[e] == b'\\' && escape_len(&s[e..]).is_some()) {
                break e;
            }
            self.piece_end(from, e, b)?;
            pos = e;
        };
        (s.get(stop) == Some(&b'"')).then_some(stop + 1)
    }

    /// The piece that ends at `b`, inside the content that starts at
    /// `from`, whose whole escapes end at `k` (the start of one `b` cuts,
    /// or `b`): where the repairer's output stops there. It reads the
    /// content from `from` or the piece's start, whichever is later, up to
    /// `b`, and writes all of it but a cut escape or character and a `,`
    /// and spaces that end it (held as a possible end of the string), those
    /// stashed for the next piece when at most `STASH_MAX` bytes.
    fn piece_end(&mut self, from: usize, mut k: usize, b: usize) -> Option<()> {
        let s = self.s;
        if k == b {
            // A character `b` cuts: its lead byte is among the three
            // before `b` (UTF-8 resynchronises; checked with the arguments).
            let mut j = b;
            while j > from && j + 3 > b && s[j - 1] & 0xC0 == 0x80 {
                j -= 1;
            }
            if j > from && s[j - 1] >= 0xC0 {
                let len = match s[j - 1] {
                    0xC0..=0xDF => 2,
                    0xE0..=0xEF => 3,
                    _ => 4,
                };
                if j - 1 + len > b {
                    k = j - 1;
                }
            }
        }
        let run = from.max(b - crate::json::PIECE);
        let tail = crate::json::comma_tail(&s[run..k], self.max_token);
        let at = k - tail;
        if b - at > crate::json::STASH_MAX {
            return None;
        }
        self.cuts.push(at);
        self.next_cut = b + crate::json::PIECE;
        Some(())
    }
}

/// Reads a string whose opening quote is at `i`; returns the index past
/// its closing quote. Its content has no raw control byte and only valid
/// escapes (a high surrogate with its low half); its UTF-8 is checked
/// with the whole arguments' ([`scan`]'s caller).
#[inline]
fn string(s: &[u8], i: usize) -> Option<usize> {
    debug_assert_eq!(s.get(i), Some(&b'"'));
    // Keys and short values are mostly printable ASCII up to the quote:
    // read a byte at a time, with none of the long scan's set-up.
    let mut e = i + 1;
    while let Some(&b) = s.get(e) {
        if !PLAIN[b as usize] {
            break;
        }
        e += 1;
    }
    if s.get(e) != Some(&b'"') {
        e = content_end(s, e);
    }
    (s.get(e) == Some(&b'"')).then_some(e + 1)
}

/// The first byte from `i` on that string content cannot hold as it is:
/// a quote, a control byte, a backslash that begins no valid escape (or
/// the end). Non-ASCII is content here (checked once, with the arguments).
#[inline(never)]
fn content_end(s: &[u8], mut i: usize) -> usize {
    let n = s.len();
    'blocks: while let Some(block) = s.get(i..i + 64).and_then(|b| <&[u8; 64]>::try_from(b).ok()) {
        let (mut flags, _) = crate::json::block_flags::<false>(block);
        while flags != 0 {
            let j = flags.trailing_zeros() as usize & 63;
            if block[j] != b'\\' {
                return i + j;
            }
            // Mostly a two-byte escape: its second byte says so.
            let e = match block.get(j + 1) {
                Some(&e) => e,
                None => s.get(i + 64).copied().unwrap_or(0),
            };
            let l = if SHORT_ESCAPE[e as usize] {
                2
            } else {
                match escape_len(&s[i + j..]) {
                    Some(l) => l,
                    None => return i + j,
                }
            };
            if j + l >= 64 {
                i += j + l;
                continue 'blocks;
            }
            flags &= u64::MAX << (j + l);
        }
        i += 64;
    }
    while i < n {
        match s[i] {
            b'"' | 0..=0x1F => return i,
            b'\\' => match escape_len(&s[i..]) {
                Some(l) => i += l,
                None => return i,
            },
            _ => i += 1,
        }
    }
    n
}

/// Length of the valid escape at the start of `s` (which starts with `\`),
/// or None if it is invalid or cut off. A high surrogate counts only with
/// its low half (as the repairer's scan takes escapes).
#[inline]
fn escape_len(s: &[u8]) -> Option<usize> {
    match *s.get(1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(2),
        b'u' => match hex4(s.get(2..6)?)? {
            0xD800..=0xDBFF => {
                if s.get(6..8)? != b"\\u" {
                    return None;
                }
                let low = hex4(s.get(8..12)?)?;
                (0xDC00..=0xDFFF).contains(&low).then_some(12)
            }
            0xDC00..=0xDFFF => None,
            _ => Some(6),
        },
        _ => None,
    }
}

fn hex4(h: &[u8]) -> Option<u32> {
    h.iter().try_fold(0u32, |acc, &c| {
        let d = (c as char).to_digit(16)?;
        Some(acc << 4 | d)
    })
}

/// The bytes after a backslash that make a two-byte escape.
const SHORT_ESCAPE: [bool; 256] = {
    let mut t = [false; 256];
    let set = b"\"\\/bfnrt";
    let mut k = 0;
    while k < set.len() {
        t[set[k] as usize] = true;
        k += 1;
    }
    t
};

/// Printable ASCII but `"` and `\\`: string content that needs no look.
const PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0x20;
    while b < 0x7F {
        t[b] = b != b'"' as usize && b != b'\\' as usize;
        b += 1;
    }
    t
};

/// Reads a number starting at `i` (strict JSON, short); the index past it.
#[inline]
fn number(s: &[u8], start: usize, max: usize) -> Option<usize> {
    let mut i = start;
    if s.get(i) == Some(&b'-') {
        i += 1;
    }
    let digits = |s: &[u8], mut i: usize| {
        let from = i;
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > from).then_some(i)
    };
    match s.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = digits(s, i)?,
        _ => return None,
    }
    if s.get(i) == Some(&b'.') {
        i = digits(s, i + 1)?;
    }
    if let Some(b'e' | b'E') = s.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = s.get(i) {
            i += 1;
        }
        let e = i;
        i = digits(s, i)?;
        if i - e > 2 {
            return None;
        }
    }
    // A number must end where a value ends (the caller checks what follows).
    (i - start <= max.min(15)).then_some(i)
}

/// Reads the arguments object whose `{` is at `i`; the index past its `}`.
fn args_object(sc: &mut Scan<'_>, start: usize, limits: &Limits) -> Option<usize> {
    let s = sc.s;
    let max_token = limits.max_token_bytes;
    // Levels inside the arguments: the envelope and the arguments object
    // are two, and one more is kept short of the limit.
    let max_depth = limits.max_depth.saturating_sub(2).min(MAX_NEST);
    if max_depth == 0 {
        return None;
    }
    // One bit a level: set for an object, clear for an array.
    let mut stack: u64 = 1;
    let mut depth = 1usize;
    let mut i = sc.blanks(start + 1)?;
    // The arguments' first key: a wrapper name makes them double-wrapped
    // (the writer unwraps them); no key, an empty object.
    if *s.get(i)? == b'"' {
        let k = string(s, i)?;
        let key = &s[i + 1..k - 1];
        if key.contains(&b'\\') || matches!(key, b"arguments" | b"parameters" | b"args" | b"input")
        {
            return None;
        }
    }
    // Expecting: a key or `}` (object start), a value, or `,`/end.
    #[derive(PartialEq)]
    enum Want {
        /// After `{`: a key or `}`.
        KeyOrEnd,
        /// After `[`: a value or `]`.
        ValueOrEnd,
        /// After `,` in an object.
        Key,
        /// After `:` or `,` in an array.
        Value,
        /// After a value.
        Next,
    }
    let mut want = Want::KeyOrEnd;
    loop {
        let b = *s.get(i)?;
        match want {
            Want::KeyOrEnd | Want::Key => match b {
                b'"' => {
                    let k = string(s, i)?;
                    if k - i > max_token || k - i > sc.max_held {
                        return None;
                    }
                    i = sc.blanks(k)?;
                    if *s.get(i)? != b':' {
                        return None;
                    }
                    i = sc.blanks(i + 1)?;
                    want = Want::Value;
                    continue;
                }
                b'}' if want == Want::KeyOrEnd => {}
                _ => return None,
            },
            Want::ValueOrEnd | Want::Value => match b {
                b'{' | b'[' => {
                    if depth >= max_depth {
                        return None;
                    }
                    stack = (stack << 1) | u64::from(b == b'{');
                    depth += 1;
                    i = sc.blanks(i + 1)?;
                    want = if b == b'{' {
                        Want::KeyOrEnd
                    } else {
                        Want::ValueOrEnd
                    };
                    continue;
                }
                b'"' => {
                    let k = sc.value_string(i)?;
                    i = sc.blanks(k)?;
                    want = Want::Next;
                    continue;
                }
                b'-' | b'0'..=b'9' => {
                    i = sc.blanks(number(s, i, max_token)?)?;
                    want = Want::Next;
                    continue;
                }
                b't' | b'f' | b'n' => {
                    let lit: &[u8] = match b {
                        b't' => b"true",
                        b'f' => b"false",
                        _ => b"null",
                    };
                    if s.get(i..i + lit.len())? != lit {
                        return None;
                    }
                    i = sc.blanks(i + lit.len())?;
                    want = Want::Next;
                    continue;
                }
                b']' if want == Want::ValueOrEnd => {}
                _ => return None,
            },
            Want::Next => match b {
                b',' => {
                    i = sc.blanks(i + 1)?;
                    want = if stack & 1 == 1 {
                        Want::Key
                    } else {
                        Want::Value
                    };
                    continue;
                }
                b'}' | b']' => {}
                _ => return None,
            },
        }
        // A closing bracket: it must close the innermost container.
        if (b == b'}') != (stack & 1 == 1) {
            return None;
        }
        stack >>= 1;
        depth -= 1;
        if depth == 0 {
            return Some(i + 1);
        }
        i = sc.blanks(i + 1)?;
        want = Want::Next;
    }
}

/// `s` starts with a well-formed `{"name": "…", "arguments": {…}}` (either
/// key order; blanks between tokens), all of it in `s`: where its parts are.
/// `None` when it does not, or when the scan is unsure of anything (see the
/// module's documentation). `whole`: `s` is all the data the parser has
/// (the feed does not stop inside a longer value); else the value must
/// be short ([`MAX_VALUE`]). The arguments' UTF-8 is left to the caller,
/// which checks it once as it makes them text.
pub(crate) fn scan(s: &[u8], limits: &Limits, whole: bool) -> Option<Found> {
    if s.first() != Some(&b'{') {
        return None;
    }
    // A value shorter than every size limit reaches none of them: no
    // token, held run or arguments can be cut by one. A longer one (read
    // whole) is bounded token by token: a key or run of blanks a quarter
    // of the token limit at most (the repairer holds them within it, with
    // a comma or quote), numbers of 15 bytes; its arguments shorter than
    // theirs, and all of it within what the parser holds undecided.
    let short = limits
        .max_held_bytes
        .min(limits.max_token_bytes)
        .min(limits.max_args_bytes.saturating_sub(1));
    // (Token limits below 16 bytes, where the repairer keeps its own
    // floor of 16, keep the short rule.)
    let cap = if whole && limits.max_token_bytes >= 16 {
        limits
            .max_held_bytes
            .min(limits.max_args_bytes.saturating_sub(1))
    } else {
        short.min(MAX_VALUE)
    };
    let s = &s[..s.len().min(cap)];
    let mut sc = Scan {
        s,
        max_held: if s.len() <= short {
            usize::MAX
        } else {
            limits.max_token_bytes / 4
        },
        max_token: limits.max_token_bytes.max(16),
        next_cut: crate::json::PIECE,
        cuts: Vec::new(),
    };
    let mut name = None;
    let mut args = None;
    let mut i = sc.blanks(1)?;
    loop {
        if *s.get(i)? != b'"' {
            return None;
        }
        let k = string(s, i)?;
        let key = &s[i + 1..k - 1];
        i = sc.blanks(k)?;
        if *s.get(i)? != b':' {
            return None;
        }
        i = sc.blanks(i + 1)?;
        match key {
            b"name" if name.is_none() => {
                if *s.get(i)? != b'"' {
                    return None;
                }
                let from = i + 1;
                let mut j = from;
                while let Some(&c) = s.get(j) {
                    if c == b'"' {
                        break;
                    }
                    if !(0x21..=0x7E).contains(&c) || c == b'\\' {
                        return None;
                    }
                    j += 1;
                }
                let len = j - from;
                if s.get(j)? != &b'"' || len == 0 || len > MAX_NAME.min(limits.max_token_bytes) {
                    return None;
                }
                name = Some((from, j));
                i = sc.blanks(j + 1)?;
            }
            b"arguments" if args.is_none() => {
                if *s.get(i)? != b'{' {
                    return None;
                }
                let end = args_object(&mut sc, i, limits)?;
                if end - i > limits.max_args_bytes {
                    return None;
                }
                args = Some((i, end));
                i = sc.blanks(end)?;
            }
            _ => return None,
        }
        match *s.get(i)? {
            b',' if args.is_none() || name.is_none() => i = sc.blanks(i + 1)?,
            b'}' => break,
            _ => return None,
        }
    }
    let (name, args) = (name?, args?);
    // Every piece end before the value's end is accounted for; a long
    // value's call starts once its name is read (arguments before it are
    // held, not handed out piece by piece).
    if sc.next_cut <= i || (!sc.cuts.is_empty() && args.0 < name.0) {
        return None;
    }
    Some(Found {
        name,
        args,
        end: i + 1,
        cuts: sc.cuts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The events of `input` cut at `splits`, `repairer_only` as given.
    fn events(input: &str, splits: &[usize], repairer_only: bool) -> Vec<String> {
        let cfg = crate::Config::default().with_repairer_only(repairer_only);
        let mut p = crate::Parser::new(cfg);
        let mut evs = Vec::new();
        let mut at = 0;
        for &cut in splits.iter().chain(std::iter::once(&input.len())) {
            p.feed(&input.as_bytes()[at..cut], &mut evs);
            at = cut;
        }
        p.finish(&mut evs);
        evs.iter().map(|e| format!("{e:?}")).collect()
    }

    #[test]
    fn the_fast_path_is_taken_and_agrees() {
        use crate::dialect::fast_calls_taken;
        let input = "Step 1: prose.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris 0\", \"unit\": \"celsius\", \"days\": [1, 2.5e3, true, null, {\"q\": \"\\u00e9\\n\"}]}}\n</tool_call>then\n<tool_call>\n{\"arguments\": {}, \"name\": \"f\"}\n</tool_call>\nBoth forecasts are in; the rest of this reply is prose.";
        let before = fast_calls_taken();
        let fast = events(input, &[], false);
        assert_eq!(
            fast_calls_taken() - before,
            2,
            "both calls read by the fast path"
        );
        let slow = events(input, &[], true);
        assert_eq!(
            fast_calls_taken() - before,
            2,
            "none with Config::repairer_only"
        );
        assert_eq!(fast, slow);
        // Streamed in small chunks no value arrives whole: the usual way.
        let splits: Vec<usize> = (1..input.len() / 16).map(|k| k * 16).collect();
        let before = fast_calls_taken();
        let _ = events(input, &splits, false);
        assert_eq!(fast_calls_taken(), before);
    }

    #[test]
    fn takes_long_values_in_pieces() {
        use crate::dialect::fast_calls_taken;
        let piece = crate::json::PIECE;
        // The first piece ends inside an escape, the second after `, `.
        let head = r#"{"name": "f", "arguments": {"content": ""#;
        let mut v = head.to_string();
        v.push_str(&"a".repeat(piece - 2 - v.len()));
        v.push_str("\\u00e9");
        v.push_str(&"b".repeat(2 * piece - 2 - v.len()));
        v.push_str(", c\"}}");
        let f = ok(&v).expect("a long value");
        assert_eq!(f.cuts, vec![piece - 2, 2 * piece - 2]);
        assert_eq!(f.end, v.len());
        let input = format!("<tool_call>\n{v}\n</tool_call>");
        let before = fast_calls_taken();
        let fast = events(&input, &[], false);
        assert_eq!(fast_calls_taken() - before, 1, "read by the fast path");
        assert_eq!(fast, events(&input, &[], true));
        // Cut by the feed (more data follows it): long values are not read.
        assert!(scan(v.as_bytes(), &Limits::default(), false).is_none());
        // A piece end between members, not in a string: refused.
        let mut w = head.to_string();
        w.push_str(&"a".repeat(piece - 3 - w.len()));
        w.push_str("\", \"b\": \"");
        w.push_str(&"c".repeat(1000));
        w.push_str("\"}}");
        assert_eq!(ok(&w), None);
    }

    fn ok(s: &str) -> Option<Found> {
        scan(s.as_bytes(), &Limits::default(), true)
    }

    #[test]
    fn finds_a_well_formed_call() {
        let s = r#"{"name": "get_weather", "arguments": {"city": "Paris", "n": [1, -2.5e3, true, null, {}]}}tail"#;
        let f = ok(s).expect("well formed");
        assert_eq!(&s[f.name.0..f.name.1], "get_weather");
        assert_eq!(
            &s[f.args.0..f.args.1],
            r#"{"city": "Paris", "n": [1, -2.5e3, true, null, {}]}"#
        );
        assert_eq!(&s[f.end..], "tail");
        let s = "{\n  \"arguments\": {},\n  \"name\": \"f\"\n}";
        let f = ok(s).expect("either key order");
        assert_eq!((&s[f.name.0..f.name.1], f.end), ("f", s.len()));
    }

    #[test]
    fn refuses_what_it_is_unsure_of() {
        for s in [
            r#"{"name": "f", "arguments": {"a": 1}"#,         // cut
            r#"{"name": "f", "arguments": {"a": 1},}"#,       // trailing comma
            r#"{"name": "f", "arguments": {"a": 01}}"#,       // bad number
            r#"{"name": "f", "arguments": {"a": "\x"}}"#,     // bad escape
            r#"{"name": "f", "arguments": {"a": "\ud83d"}}"#, // lone surrogate
            r#"{"name": "f", "arguments": {"arguments": {}}}"#,
            r#"{"name": "f", "arguments": "{}"}"#,
            r#"{"name": "f", "id": "1", "arguments": {}}"#,
            r#"{"name": "f f", "arguments": {}}"#,
            r#"{"name": "", "arguments": {}}"#,
            r#"{"name": "f"}"#,
            r#"{"name": "f", "arguments": {"a": [1}]}}"#,
            r#"{"name": "f", "arguments": {"a": tru}}"#,
            r#"{"name": "f", "arguments": {'a': 1}}"#,
            "{\"name\": \"f\", \"arguments\": {\"a\": \"\u{1}\"}}",
        ] {
            assert_eq!(ok(s), None, "{s}");
        }
        // UTF-8 is the caller's to check, once, over the arguments.
        let s = b"{\"name\": \"f\", \"arguments\": {\"a\": \"\xff\"}}";
        let f = scan(s, &Limits::default(), true).expect("no UTF-8 check here");
        assert!(std::str::from_utf8(&s[f.args.0..f.args.1]).is_err());
    }
}
