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

use crate::config::Limits;

/// A well-formed call object at the start of the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    /// The tool name's bytes (between its quotes): printable ASCII.
    pub name: (usize, usize),
    /// The arguments object's bytes, as written.
    pub args: (usize, usize),
    /// Just past the envelope's closing brace.
    pub end: usize,
}

/// Longest value the fast path reads (well below the repairer's pieces,
/// `json::PIECE`, so that a value it accepts is one piece there too).
const MAX_VALUE: usize = 16 << 10;
/// Deepest nesting inside the arguments the fast path follows.
const MAX_NEST: usize = 32;
/// Longest name the fast path takes.
const MAX_NAME: usize = 64;

#[inline]
fn blanks(s: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = s.get(i) {
        i += 1;
    }
    i
}

/// Reads a string whose opening quote is at `i`; returns the index past
/// its closing quote. Its content is what the repairer's own scan passes
/// through unchanged ([`crate::json::str_body`]: no raw control byte,
/// valid escapes, whole valid UTF-8); anything else: `None`.
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
        e = crate::json::str_body(s, i + 1);
    }
    (s.get(e) == Some(&b'"')).then_some(e + 1)
}

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
fn args_object(s: &[u8], start: usize, limits: &Limits) -> Option<usize> {
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
    let mut i = blanks(s, start + 1);
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
                    if k - i > max_token {
                        return None;
                    }
                    i = blanks(s, k);
                    if *s.get(i)? != b':' {
                        return None;
                    }
                    i = blanks(s, i + 1);
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
                    i = blanks(s, i + 1);
                    want = if b == b'{' {
                        Want::KeyOrEnd
                    } else {
                        Want::ValueOrEnd
                    };
                    continue;
                }
                b'"' => {
                    i = blanks(s, string(s, i)?);
                    want = Want::Next;
                    continue;
                }
                b'-' | b'0'..=b'9' => {
                    i = blanks(s, number(s, i, max_token)?);
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
                    i = blanks(s, i + lit.len());
                    want = Want::Next;
                    continue;
                }
                b']' if want == Want::ValueOrEnd => {}
                _ => return None,
            },
            Want::Next => match b {
                b',' => {
                    i = blanks(s, i + 1);
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
        i = blanks(s, i + 1);
        want = Want::Next;
    }
}

/// `s` starts with a well-formed `{"name": "…", "arguments": {…}}` (either
/// key order; blanks between tokens), all of it in `s`: where its parts are.
/// `None` when it does not, or when the scan is unsure of anything (see the
/// module's documentation).
pub(crate) fn scan(s: &[u8], limits: &Limits) -> Option<Found> {
    if s.first() != Some(&b'{') {
        return None;
    }
    // A value shorter than every size limit reaches none of them: no
    // token, held run or arguments can be cut by one.
    let cap = MAX_VALUE
        .min(limits.max_held_bytes)
        .min(limits.max_token_bytes)
        .min(limits.max_args_bytes.saturating_sub(1));
    let s = &s[..s.len().min(cap)];
    let mut name = None;
    let mut args = None;
    let mut i = blanks(s, 1);
    loop {
        if *s.get(i)? != b'"' {
            return None;
        }
        let k = string(s, i)?;
        let key = &s[i + 1..k - 1];
        i = blanks(s, k);
        if *s.get(i)? != b':' {
            return None;
        }
        i = blanks(s, i + 1);
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
                i = blanks(s, j + 1);
            }
            b"arguments" if args.is_none() => {
                if *s.get(i)? != b'{' {
                    return None;
                }
                let end = args_object(s, i, limits)?;
                if end - i > limits.max_args_bytes {
                    return None;
                }
                args = Some((i, end));
                i = blanks(s, end);
            }
            _ => return None,
        }
        match *s.get(i)? {
            b',' if args.is_none() || name.is_none() => i = blanks(s, i + 1),
            b'}' => break,
            _ => return None,
        }
    }
    // (Every string's UTF-8 was checked by its scan; the rest is ASCII.)
    Some(Found {
        name: name?,
        args: args?,
        end: i + 1,
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

    fn ok(s: &str) -> Option<Found> {
        scan(s.as_bytes(), &Limits::default())
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
        assert_eq!(
            scan(
                b"{\"name\": \"f\", \"arguments\": {\"a\": \"\xff\"}}",
                &Limits::default()
            ),
            None
        );
    }
}
