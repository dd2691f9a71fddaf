//! Append-only completion of a JSON prefix.
//!
//! When a size limit cuts a call's arguments, the bytes before the cut may
//! already have been handed out as deltas, so the final arguments must
//! extend them: the repairer's own end-of-input policies (drop a cut key or a
//! trailing comma, trim a cut number) would retract bytes. [`completion`]
//! instead appends the least that makes the prefix valid.

/// What the scanner is inside of at the end of the prefix.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    /// A value is due: after `:`, after `,` in an array, at the start.
    Value,
    /// Just after `[`: a value or `]`.
    ArrayStart,
    /// Just after `{`: a key or `}`.
    ObjectStart,
    /// After `,` in an object: a key is due.
    Key,
    /// After a key's closing quote: `:` is due.
    AfterKey,
    /// After a complete value.
    AfterValue,
    /// Inside a string (`key`: an object key).
    Str { key: bool },
    /// Inside a number whose last byte is `last`.
    Number { last: u8 },
    /// Inside `true`, `false` or `null`, with `n` bytes of it read.
    Literal { word: &'static [u8], n: usize },
}

/// The bytes that complete `prefix`, a prefix of valid JSON text cut
/// anywhere, into valid JSON by appending only: a cut string is closed (a
/// cut escape finished first, a high surrogate given its low half), a cut
/// key gets `: null`, a due value is `null` (a due key `"": null`), a cut
/// number or literal is finished, and open containers are closed. Bytes out
/// of place (the prefix was not JSON) are skipped.
pub(crate) fn completion(prefix: &[u8]) -> Vec<u8> {
    let mut stack: Vec<u8> = Vec::new();
    let mut state = State::Value;
    // Inside a string: the escape in progress (`\`, then `u` and up to four
    // hex digits), and whether the last escape was a high surrogate (its low
    // half comes next).
    let mut esc: Vec<u8> = Vec::new();
    let mut high = false;
    for &b in prefix {
        state = match state {
            State::Str { key } => {
                if !esc.is_empty() {
                    esc.push(b);
                    if (esc.len() == 2 && b != b'u') || esc.len() == 6 {
                        high = is_high(&esc);
                        esc.clear();
                    }
                    state
                } else if b == b'\\' {
                    esc.push(b);
                    state
                } else {
                    high = false;
                    match (b, key) {
                        (b'"', true) => State::AfterKey,
                        (b'"', false) => State::AfterValue,
                        _ => state,
                    }
                }
            }
            State::Number { .. }
                if b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-') =>
            {
                State::Number { last: b }
            }
            State::Literal { word, n } if n < word.len() && word[n] == b => {
                if n + 1 == word.len() {
                    State::AfterValue
                } else {
                    State::Literal { word, n: n + 1 }
                }
            }
            // The byte that ends a number or literal is read after it.
            State::Number { .. } | State::Literal { .. } => {
                structural(b, State::AfterValue, &mut stack)
            }
            _ => structural(b, state, &mut stack),
        };
    }
    let mut out = Vec::new();
    match state {
        State::Str { key } => {
            if !esc.is_empty() {
                finish_escape(&esc, high, &mut out);
                let mut whole = esc.clone();
                whole.extend_from_slice(&out);
                if is_high(&whole) {
                    out.extend_from_slice(b"\\udc00");
                }
            } else if high {
                out.extend_from_slice(b"\\udc00");
            }
            out.push(b'"');
            if key {
                out.extend_from_slice(b": null");
            }
        }
        State::Number { last } if !last.is_ascii_digit() => out.push(b'0'),
        State::Literal { word, n } => out.extend_from_slice(&word[n..]),
        State::Value => out.extend_from_slice(b"null"),
        State::Key => out.extend_from_slice(b"\"\": null"),
        State::AfterKey => out.extend_from_slice(b": null"),
        State::ArrayStart | State::ObjectStart | State::AfterValue | State::Number { .. } => {}
    }
    for &open in stack.iter().rev() {
        out.push(if open == b'{' { b'}' } else { b']' });
    }
    out
}

/// The state after byte `b` read in `state`, outside strings, numbers and
/// literals.
fn structural(b: u8, state: State, stack: &mut Vec<u8>) -> State {
    let value_due = matches!(state, State::Value | State::ArrayStart);
    match b {
        b'{' if value_due => {
            stack.push(b'{');
            State::ObjectStart
        }
        b'[' if value_due => {
            stack.push(b'[');
            State::ArrayStart
        }
        b'}' if matches!(state, State::ObjectStart | State::AfterValue)
            && stack.last() == Some(&b'{') =>
        {
            stack.pop();
            State::AfterValue
        }
        b']' if matches!(state, State::ArrayStart | State::AfterValue)
            && stack.last() == Some(&b'[') =>
        {
            stack.pop();
            State::AfterValue
        }
        b',' if state == State::AfterValue => match stack.last() {
            Some(b'{') => State::Key,
            Some(_) => State::Value,
            None => state,
        },
        b':' if state == State::AfterKey => State::Value,
        b'"' if matches!(state, State::ObjectStart | State::Key) => State::Str { key: true },
        b'"' if value_due => State::Str { key: false },
        b'-' | b'0'..=b'9' if value_due => State::Number { last: b },
        b't' if value_due => State::Literal {
            word: b"true",
            n: 1,
        },
        b'f' if value_due => State::Literal {
            word: b"false",
            n: 1,
        },
        b'n' if value_due => State::Literal {
            word: b"null",
            n: 1,
        },
        // Blanks, and bytes out of place.
        _ => state,
    }
}

/// Appends what completes the escape `esc` (`\`, or `\u` and fewer than
/// four hex digits). After a high surrogate (`high`) it completes a low half
/// (`\udc00`); otherwise `\` becomes `\\` and missing hex digits are `0`.
fn finish_escape(esc: &[u8], high: bool, out: &mut Vec<u8>) {
    const LOW: &[u8] = b"\\udc00";
    if high {
        // A valid prefix holds a low half here: `\u`, `\ud`, `\udc`…
        let have = esc.len();
        out.extend_from_slice(&LOW[have..]);
        return;
    }
    if esc.len() == 1 {
        out.push(b'\\');
        return;
    }
    out.extend(std::iter::repeat_n(b'0', 6 - esc.len()));
}

/// True for a complete `\uXXXX` escape of a high surrogate (D800–DBFF).
fn is_high(esc: &[u8]) -> bool {
    esc.len() == 6
        && esc[1] == b'u'
        && std::str::from_utf8(&esc[2..6])
            .ok()
            .and_then(|h| u16::from_str_radix(h, 16).ok())
            .is_some_and(|u| (0xD800..0xDC00).contains(&u))
}

#[cfg(test)]
mod tests {
    use super::completion;

    /// Every prefix of `doc` (valid JSON), completed, parses and extends it.
    fn every_prefix(doc: &str) {
        let bytes = doc.as_bytes();
        for cut in 1..=bytes.len() {
            if !doc.is_char_boundary(cut) {
                continue;
            }
            let prefix = &bytes[..cut];
            let mut whole = prefix.to_vec();
            whole.extend_from_slice(&completion(prefix));
            let text = String::from_utf8(whole).expect("UTF-8");
            if let Err(e) = serde_json::from_str::<serde_json::Value>(&text) {
                panic!("{doc:?} cut at {cut}: {text:?} is not JSON ({e})");
            }
        }
        assert!(completion(bytes).is_empty(), "{doc:?} is complete");
    }

    #[test]
    fn every_prefix_of_valid_json_is_completed_by_appending() {
        for doc in [
            r#"{"a": 1, "bb": [true, false, null, -1.5e+3, 0], "c": {"d": "x\"y\\z\n", "e": {}}, "f": []}"#,
            r#"{"s": "\u00e9\ud83d\ude00 é日本", "n": -0.25E-2, "k": "\/"}"#,
            r#"{"nested": [[[{"a": [1, 2, {"b": "c"}]}]]], "t": true}"#,
            r#"[1, "two", {"3": [4]}, null]"#,
            r#"{ "spaced" : [ 1 , 2 ] , "x" : { } }"#,
            r#""just a string \ud83d\ude00""#,
            "12345.678e9",
        ] {
            every_prefix(doc);
        }
    }

    /// JSON text with every kind of token, escape and blank placement.
    fn json_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let part = prop::sample::select(vec![
            "a",
            "é日",
            "😀",
            "\\\"",
            "\\\\",
            "\\n\\/",
            "\\u00e9",
            "\\uD83D\\uDE00",
        ]);
        let string =
            prop::collection::vec(part, 0..4).prop_map(|parts| format!("\"{}\"", parts.concat()));
        let scalar = prop::sample::select(vec!["true", "false", "null", "-0.5e+3", "120", "1E-7"]);
        let leaf = prop_oneof![string.clone(), scalar.prop_map(str::to_owned)];
        let ws = prop_oneof![Just(""), Just(" "), Just("\n  ")];
        leaf.prop_recursive(4, 32, 4, move |inner| {
            let ws = ws.clone();
            prop_oneof![
                (prop::collection::vec(inner.clone(), 0..4), ws.clone())
                    .prop_map(|(v, w)| format!("[{w}{}{w}]", v.join(&format!("{w},{w}")))),
                (prop::collection::vec((string.clone(), inner), 0..4), ws).prop_map(|(kv, w)| {
                    let members: Vec<String> = kv
                        .into_iter()
                        .map(|(k, v)| format!("{k}{w}:{w}{v}"))
                        .collect();
                    format!("{{{w}{}{w}}}", members.join(&format!(",{w}")))
                }),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn every_prefix_of_generated_json_is_completed(doc in json_text()) {
            every_prefix(&doc);
        }

        #[test]
        fn any_bytes_complete_without_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
            let _ = completion(&bytes);
        }
    }

    #[test]
    fn completions_are_minimal_and_named() {
        let cases: [(&str, &str); 12] = [
            (r#"{"id": "007", "o"#, r#"": null}"#),
            (r#"{"id": "007", "#, r#""": null}"#),
            (r#"{"a": 1.5e"#, "0}"),
            (r#"{"a": tr"#, "ue}"),
            (r#"{"a": [1, "#, "null]}"),
            (r#"{"a": "x\"#, r#"\"}"#),
            (r#"{"a": "\u00"#, r#"00"}"#),
            (r#"{"a": "\ud83d"#, r#"\udc00"}"#),
            (r#"{"a": "\ud83d\u"#, r#"dc00"}"#),
            (r#"{"a": "\ud8"#, r#"00\udc00"}"#),
            (r#"{"a""#, ": null}"),
            (r#"{"a": {"b": []"#, "}}"),
        ];
        for (prefix, want) in cases {
            assert_eq!(
                String::from_utf8(completion(prefix.as_bytes())).unwrap(),
                want,
                "{prefix}"
            );
        }
    }
}
