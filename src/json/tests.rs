//! Unit tests of the repairer: one per repair category, truncation policies,
//! and every split point of each case.

use super::*;
use crate::event::RepairKind as K;

/// Repairs `input` whole, then fed one byte at a time and at every split
/// point, checks all agree, and returns the whole-input result.
fn check(input: &str) -> Repaired {
    let whole = repair(input.as_bytes()).expect("a value");
    // The output must be valid JSON.
    let v: Result<serde_json::Value, _> = serde_json::from_str(&whole.json);
    assert!(v.is_ok(), "invalid output {:?} for {:?}", whole.json, input);
    let bytes = input.as_bytes();
    for split in 1..bytes.len() {
        let mut r = Repairer::new().document(true);
        let mut out = Vec::new();
        let mut consumed = 0;
        let p = r.feed(&bytes[..split], &mut out);
        consumed += p.consumed;
        if p.status == Status::NeedMore {
            let p = r.feed(&bytes[split..], &mut out);
            consumed += p.consumed;
        }
        let _ = consumed;
        r.finish(&mut out);
        assert_eq!(
            String::from_utf8_lossy(&out),
            whole.json,
            "split at {split} of {input:?}"
        );
        assert_eq!(
            r.repairs(),
            &whole.repairs[..],
            "repairs, split at {split} of {input:?}"
        );
    }
    let mut r = Repairer::new().document(true);
    let mut out = Vec::new();
    for b in bytes {
        if r.feed(std::slice::from_ref(b), &mut out).status != Status::NeedMore {
            break;
        }
    }
    r.finish(&mut out);
    assert_eq!(
        String::from_utf8_lossy(&out),
        whole.json,
        "1-byte chunks of {input:?}"
    );
    whole
}

fn fixed(input: &str) -> String {
    check(input).json
}

fn kinds(input: &str) -> Vec<K> {
    check(input).repairs.iter().map(|r| r.kind).collect()
}

#[test]
fn valid_json_is_unchanged() {
    for doc in [
        r#"{"a": [1, {"b": null, "c": "x\"y"}], "d": -1.5e3}"#,
        r#"{"p": "C:\\Users\\bob", "m": "$\\frac{1}{2}$ \b \f"}"#,
        "{\n  \"a\" : 1 ,\n  \"b\" :\t[ ]\n}",
        r#"{"e": "\ud83d\ude00 é ü 日本", "z": 0, "f": 1E+2, "g": -0.0}"#,
        r#"[true, false, null, "", {}, []]"#,
        r#"{"s": "it's \/ fine"}"#,
    ] {
        let r = check(doc);
        assert_eq!(r.json, doc);
        assert!(r.repairs.is_empty(), "{doc}: {:?}", r.repairs);
        assert!(!r.truncated);
    }
}

#[test]
fn trailing_and_extra_commas() {
    assert_eq!(fixed(r#"{"a": 1,}"#), r#"{"a": 1}"#);
    assert_eq!(fixed("[1, 2,]"), "[1, 2]");
    assert_eq!(fixed("[,1,,2]"), "[1,2]");
    assert_eq!(kinds("[1, 2,]"), vec![K::TrailingComma]);
}

#[test]
fn quotes() {
    assert_eq!(fixed(r#"{'a': 'say "hi"'}"#), r#"{"a": "say \"hi\""}"#);
    assert_eq!(fixed("{“a”: “b”}"), r#"{"a": "b"}"#);
    assert_eq!(fixed("{‘a’: ‘b’}"), r#"{"a": "b"}"#);
    assert_eq!(
        fixed(r#"{"a": "“quoted” inside"}"#),
        r#"{"a": "“quoted” inside"}"#
    );
    assert_eq!(fixed(r#"{'it': 'it's'}"#), r#"{"it": "it's"}"#);
}

#[test]
fn unquoted_keys_and_values() {
    assert_eq!(fixed("{a: 1, b_c: 2}"), r#"{"a": 1, "b_c": 2}"#);
    assert_eq!(fixed(r#"{"a": hello world}"#), r#"{"a": "hello world"}"#);
    assert_eq!(
        fixed(r#"{"u": https://x.io/a?b=1}"#),
        r#"{"u": "https://x.io/a?b=1"}"#
    );
    assert_eq!(fixed(r#"{"d": 2024-01-05}"#), r#"{"d": "2024-01-05"}"#);
}

#[test]
fn literals() {
    assert_eq!(
        fixed(r#"{"a": True, "b": False, "c": None}"#),
        r#"{"a": true, "b": false, "c": null}"#
    );
    assert_eq!(
        fixed(r#"{"a": TRUE, "b": undefined}"#),
        r#"{"a": true, "b": null}"#
    );
    assert_eq!(
        fixed(r#"{"a": NaN, "b": -Infinity}"#),
        r#"{"a": null, "b": null}"#
    );
}

#[test]
fn comments() {
    assert_eq!(fixed("{\"a\": 1 // c\n}"), "{\"a\": 1 \n}");
    assert_eq!(fixed(r#"{/* c */"a": 1}"#), r#"{"a": 1}"#);
    assert_eq!(fixed("{\"a\": 1 # c\n}"), "{\"a\": 1 \n}");
    // After a string's closing quote and a blank (the quote was read as
    // content, and the comment and the rest with it).
    assert_eq!(fixed("{\"a\": \"x\" // c\n}"), "{\"a\": \"x\" \n}");
    assert_eq!(
        fixed(r#"{"a": "x" /* c */, "b": "y" # d"#),
        r#"{"a": "x" , "b": "y" }"#
    );
    // Without the blank, the quote is content.
    assert_eq!(fixed(r#"{"a": "and "/" or"}"#), r#"{"a": "and \"/\" or"}"#);
}

#[test]
fn missing_commas_and_colons() {
    assert_eq!(fixed(r#"{"a": 1 "b": 2}"#), r#"{"a": 1 ,"b": 2}"#);
    assert_eq!(fixed("[1 2 3]"), "[1 ,2 ,3]");
    assert_eq!(
        fixed("{\"a\": \"x\"\n\"b\": 2}"),
        "{\"a\": \"x\"\n,\"b\": 2}"
    );
    assert_eq!(fixed(r#"{"a" 1}"#), r#"{"a" :1}"#);
}

#[test]
fn strings() {
    assert_eq!(fixed("{\"a\": \"x\ny\"}"), r#"{"a": "x\ny"}"#);
    assert_eq!(
        fixed(r#"{"a": "say "hi" now"}"#),
        r#"{"a": "say \"hi\" now"}"#
    );
    assert_eq!(fixed(r#"{"p": "C:\d"}"#), r#"{"p": "C:\\d"}"#);
    assert_eq!(fixed(r#"{"p": "\ud83d x"}"#), r#"{"p": "\\ud83d x"}"#);
    assert_eq!(fixed(r#"{"p": "\u12G"}"#), r#"{"p": "\\u12G"}"#);
    assert_eq!(kinds(r#"{"p": "C:\d"}"#), vec![K::InvalidEscape]);
}

#[test]
fn object_literals_written_in_strings() {
    // JSON written into a string value without escaping its quotes (a
    // `write_file` of a JSON file, a command that echoes JSON): the
    // literal's quotes are content, whatever follows them.
    assert_eq!(
        fixed(r#"{"path": "a.json", "content": "{"name": "x", "v": [1, 2]}"}"#),
        r#"{"path": "a.json", "content": "{\"name\": \"x\", \"v\": [1, 2]}"}"#
    );
    assert_eq!(
        fixed(r#"{"msg": "use {"k": "v"} here", "x": 2}"#),
        r#"{"msg": "use {\"k\": \"v\"} here", "x": 2}"#
    );
    assert_eq!(
        fixed(r#"{"c": "{"a": {"b": 1}}", "d": 1}"#),
        r#"{"c": "{\"a\": {\"b\": 1}}", "d": 1}"#
    );
    // A closing quote left out before the next key (`, "kind":`) closes
    // the string before the comma, as jsonrepair does (#42 §5).
    assert_eq!(
        fixed(r#"{"town": "Lyon, "kind": "city"}"#),
        r#"{"town": "Lyon", "kind": "city"}"#
    );
    assert_eq!(
        kinds(r#"{"town": "Lyon, "kind": "city"}"#),
        vec![K::MissingQuote]
    );
    // Without the comma, a string value is never followed by a colon:
    // such a quote is content.
    assert_eq!(
        fixed(r#"{"town": "Lyon "kind": "city"}"#),
        r#"{"town": "Lyon \"kind\": \"city"}"#
    );
    assert_eq!(
        kinds(r#"{"content": "{"a": 1}"}"#),
        vec![K::UnescapedQuote, K::UnescapedQuote]
    );
    // Valid JSON with braces and quotes at a string's edges is unchanged.
    for v in [
        r#"{"a": "{", "b": 1}"#,
        r#"{"a": "x {", "b": "}"}"#,
        r#"{"a": "{}", "b": {"c": "{"}}"#,
        r#"["{", ":", "}"]"#,
    ] {
        assert_eq!(fixed(v), v);
    }
    // Also in a string inside an array.
    assert_eq!(
        fixed(r#"["use {"k": "v"} here", 2]"#),
        r#"["use {\"k\": \"v\"} here", 2]"#
    );
    // In an array a colon after a string still ends it (`["k": "v"]`).
    assert_eq!(fixed(r#"["k": "v"]"#), r#"["k" ,"v"]"#);
}

#[test]
fn numbers() {
    assert_eq!(fixed(r#"{"a": .5}"#), r#"{"a": 0.5}"#);
    assert_eq!(fixed(r#"{"a": 1.}"#), r#"{"a": 1.0}"#);
    assert_eq!(fixed(r#"{"a": +1}"#), r#"{"a": 1}"#);
    assert_eq!(fixed(r#"{"a": 007}"#), r#"{"a": "007"}"#);
    assert_eq!(fixed(r#"{"a": 0x1F}"#), r#"{"a": "0x1F"}"#);
    assert_eq!(fixed("[1, 2, ...]"), "[1, 2 ]");
}

#[test]
fn numbers_no_double_holds_become_strings() {
    // Grammatical JSON that serde_json rejects ("number out of range").
    assert_eq!(
        fixed(r#"{"a": 1e999, "b": 2}"#),
        r#"{"a": "1e999", "b": 2}"#
    );
    assert_eq!(kinds(r#"{"a": 1e999}"#), vec![K::NonFiniteNumber]);
    let big = format!("[{}.5e400]", "9".repeat(80));
    assert_eq!(fixed(&big), format!("[\"{}.5e400\"]", "9".repeat(80)));
    // Large but finite, and underflow to zero, stay numbers.
    assert_eq!(fixed("[1.5e300, 1e-999]"), "[1.5e300, 1e-999]");
    assert_eq!(
        fixed(&format!("[{}]", "9".repeat(300))),
        format!("[{}]", "9".repeat(300))
    );
}

#[test]
fn structure() {
    assert_eq!(fixed(r#"{"a": {"b": 1}"#), r#"{"a": {"b": 1}}"#);
    assert_eq!(fixed(r#"{"a": [1, 2}"#), r#"{"a": [1, 2]}"#);
    assert_eq!(fixed(r#"{{"a": 1}}"#), r#"{"a": 1}"#);
    assert_eq!(fixed(r#"{"a", "b": 1}"#), r#"{"a":null, "b": 1}"#);
    assert_eq!(fixed(r#"{"a": , "b": 1}"#), r#"{"a": null, "b": 1}"#);
    assert_eq!(fixed(r#"{"a": (1, 2)}"#), r#"{"a": [1, 2]}"#);
}

#[test]
fn truncation_policies() {
    let t = |s: &str| {
        let r = check(s);
        assert!(r.truncated, "{s} should be truncated");
        r.json
    };
    assert_eq!(t(r#"{"a": "hel"#), r#"{"a": "hel"}"#);
    assert_eq!(t(r#"{"a":"#), r#"{"a":null}"#);
    // A document keeps a key with no value (with null); a call's
    // arguments drop it (see `Repairer::document`).
    assert_eq!(t(r#"{"a": 1, "b"#), r#"{"a": 1, "b":null}"#);
    assert_eq!(t(r#"{"a": 1, "b""#), r#"{"a": 1, "b":null}"#);
    assert_eq!(t(r#"{"a": 1, "b":"#), r#"{"a": 1, "b":null}"#);
    // A bare word cut at the end is no key: nothing to keep (found by the
    // property test: `{*` once gave `{:null}`).
    assert_eq!(t("{*"), "{}");
    for cut in [r#"{"a": 1, "b"#, r#"{"a": 1, "b""#] {
        let mut r = Repairer::new();
        let mut out = Vec::new();
        r.feed(cut.as_bytes(), &mut out);
        r.finish(&mut out);
        assert_eq!(String::from_utf8_lossy(&out), r#"{"a": 1}"#, "{cut}");
        assert!(r.repairs().iter().any(|x| x.kind == K::DroppedKey));
    }
    assert_eq!(t("[1, 2,"), "[1, 2]");
    assert_eq!(t(r#"{"a": tr"#), r#"{"a": true}"#);
    assert_eq!(t("[n"), "[null]");
    assert_eq!(t("[1."), "[1]");
    assert_eq!(t("[1e"), "[1]");
    assert_eq!(t("[-"), "[]");
    assert_eq!(t(r#"{"a": "ab\"#), r#"{"a": "ab"}"#);
    assert_eq!(t(r#"{"a": "ab\u00"#), r#"{"a": "ab"}"#);
    assert_eq!(
        t("{\"code\": \"def f():\n    return"),
        r#"{"code": "def f():\n    return"}"#
    );
    assert_eq!(t("{\"a\": \"\u{e9}"), "{\"a\": \"\u{e9}\"}");
    assert_eq!(t(r#"{"a": "x", "#), r#"{"a": "x"}"#);
}

#[test]
fn split_inside_utf8_and_escapes() {
    check("{\"a\": \"日本語 \\u00e9 \\ud83d\\ude00 “x”\"}");
    check("{“key”: “vâlue”}");
    check("\u{feff}{\"a\":\u{a0}1}");
}

#[test]
fn stop_on_lt() {
    let mut r = Repairer::new().stop_on_lt(true);
    let mut out = Vec::new();
    let p = r.feed(br#"{"a": "x</y>", "b": 1</tool_call>"#, &mut out);
    assert_eq!(p.status, Status::Stop);
    r.finish(&mut out);
    assert_eq!(out, br#"{"a": "x</y>", "b": 1}"#);
}

#[test]
fn depth_limit() {
    let limits = crate::Limits {
        max_depth: 3,
        ..Default::default()
    };
    let mut r = Repairer::with_limits(&limits);
    let mut out = Vec::new();
    let p = r.feed(b"[[[[[1]]]]]", &mut out);
    assert_eq!(p.status, Status::Limit);
    assert!(r.finish(&mut out));
    assert_eq!(out, b"[[[]]]");
}

#[test]
fn documents() {
    assert_eq!(
        repair_document(b"Here: {\"a\": 1}", 0).unwrap().json,
        r#"{"a": 1}"#
    );
    assert_eq!(
        repair_document(b"{\"a\": 1}\n{\"b\": 2}\n", 3)
            .unwrap()
            .json,
        r#"[{"a": 1},{"b": 2}]"#
    );
    assert_eq!(repair_document(b"no json here", 0), Err(NoJson));
    assert_eq!(repair_document(b"42", 0).unwrap().json, "42");
}

#[test]
fn multibyte_characters_split_across_chunks() {
    // Inside an unquoted string, and starting one in structural position:
    // the repairs and output do not depend on where the chunks split.
    for input in ["[{\"a\": 1}<x>é]", "[{\"a\": 1}é]", "{\"a\": 日本}"] {
        let input = input.as_bytes();
        let whole = crate::json::repair(input).unwrap();
        for k in 1..input.len() {
            let mut r = Repairer::new();
            let mut out = Vec::new();
            r.feed(&input[..k], &mut out);
            r.feed(&input[k..], &mut out);
            r.finish(&mut out);
            assert_eq!(String::from_utf8(out).unwrap(), whole.json, "split at {k}");
            assert_eq!(r.take_repairs(), whole.repairs, "split at {k}");
        }
        assert!(!whole.repairs.iter().any(|r| r.kind == K::InvalidUtf8));
    }
}

// ----- the fast path (runs of valid JSON) against the slow path ---------------

/// A sink that never takes bulk runs and wants one token per step: the
/// repairer reads every byte on its slow path.
#[derive(Default)]
struct Slow {
    out: Vec<u8>,
}

impl Sink for Slow {
    fn write(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
    }
    fn last_byte(&self) -> Option<u8> {
        self.out.last().copied()
    }
    fn step_by_step(&self) -> bool {
        true
    }
}

/// Feeds `input` cut at `cuts` to a repairer writing to `sink`; returns the
/// (consumed, status) of every feed and the repairs.
fn feed_cuts<S: Sink>(
    input: &[u8],
    cuts: &[usize],
    stop_on_lt: bool,
    sink: &mut S,
) -> (Vec<(usize, Status)>, Vec<crate::event::Repair>, bool) {
    let mut r = Repairer::new().stop_on_lt(stop_on_lt);
    let mut steps = Vec::new();
    let mut last = 0;
    for &c in cuts.iter().chain(std::iter::once(&input.len())) {
        let c = c.min(input.len());
        if c <= last {
            continue;
        }
        let p = r.feed(&input[last..c], sink);
        steps.push((p.consumed, p.status));
        last = c;
        if p.status != Status::NeedMore {
            break;
        }
    }
    let truncated = r.finish(sink);
    (steps, r.take_repairs(), truncated)
}

/// The fast path (taken with a `Vec<u8>` sink) gives the same output,
/// repairs and progress as the slow path, for these cuts.
fn same_as_slow(input: &[u8], cuts: &[usize]) {
    for stop_on_lt in [false, true] {
        let mut fast = Vec::new();
        let f = feed_cuts(input, cuts, stop_on_lt, &mut fast);
        let mut slow = Slow::default();
        let s = feed_cuts(input, cuts, stop_on_lt, &mut slow);
        assert_eq!(
            String::from_utf8_lossy(&fast),
            String::from_utf8_lossy(&slow.out),
            "output of {:?} cut at {cuts:?}",
            String::from_utf8_lossy(input)
        );
        assert_eq!(
            f,
            s,
            "progress/repairs of {:?} cut at {cuts:?}",
            String::from_utf8_lossy(input)
        );
    }
}

/// [`same_as_slow`] whole, at every split point, every pair of split points
/// (short inputs) and in 1-byte chunks.
fn same_as_slow_everywhere(input: &[u8]) {
    same_as_slow(input, &[]);
    for a in 1..input.len() {
        same_as_slow(input, &[a]);
        if input.len() <= 40 {
            for b in a + 1..input.len() {
                same_as_slow(input, &[a, b]);
            }
        }
    }
    let ones: Vec<usize> = (1..input.len()).collect();
    same_as_slow(input, &ones);
}

#[test]
fn fast_path_valid_runs_are_copied_whole() {
    // A valid document comes out byte for byte, whatever the chunks.
    let doc = r#"{"items": [{"id": 0, "label": "item 0-0", "ok": true}, {"id": -1.5e3, "label": "x\"y\\z\u00e9\ud83d\ude00", "ok": false, "n": null}], "note": "batch", "e": {}, "a": [], "u": "日本 😀"}"#;
    assert_eq!(fixed(doc), doc);
    same_as_slow_everywhere(doc.as_bytes());
    let pretty = "{\n  \"a\" : [ 1 ,\n 2 ]\t,\r\n  \"b\" :{ } }";
    assert_eq!(fixed(pretty), pretty);
    same_as_slow_everywhere(pretty.as_bytes());
}

/// Counts how output reaches the sink: bulk runs vs slow-path writes.
#[derive(Default)]
struct Runs {
    out: Vec<u8>,
    runs: usize,
    writes: usize,
}

impl Sink for Runs {
    fn write(&mut self, bytes: &[u8]) {
        self.writes += 1;
        self.out.extend_from_slice(bytes);
    }
    fn last_byte(&self) -> Option<u8> {
        self.out.last().copied()
    }
    fn opaque(&self) -> bool {
        true
    }
    fn write_opaque(&mut self, bytes: &[u8], _depth_change: isize) {
        self.runs += 1;
        self.out.extend_from_slice(bytes);
    }
}

#[test]
fn fast_path_takes_literals_and_numbers() {
    // Everything inside the outer object is one bulk run: `true`, `false`
    // and `null` before a closer included (they once fell to the slow path
    // because a literal was checked like a number with an exponent).
    let doc = r#"{"k": [{"a": true}, {"b": false}, {"c": null}, {"d": -1.5e3}, 7]}"#;
    let mut sink = Runs::default();
    let mut r = Repairer::new();
    let p = r.feed(doc.as_bytes(), &mut sink);
    assert_eq!(p.status, Status::Done);
    assert_eq!(sink.out, doc.as_bytes());
    assert_eq!(sink.runs, 1, "one bulk run for the object's content");
    assert_eq!(sink.writes, 2, "only the outer braces on the slow path");
}

#[test]
fn fast_path_boundaries() {
    // Chunks ending inside a string, an escape, a \u escape, a surrogate
    // pair, a number, a literal, a UTF-8 character, after a comma, after a
    // key, after a closing quote: every split of each.
    for doc in [
        r#"{"k": ["abcdef", "gh"]}"#,
        r#"{"k": ["a\"b\\c\/d\ne"]}"#,
        r#"{"k": ["\u00e9\u20AC", 1]}"#,
        r#"{"k": ["\ud83d\ude00x"]}"#,
        r#"{"k": [123456, -0.25e-7, 0]}"#,
        r#"{"k": [true, false, null]}"#,
        "{\"k\": [\"é日😀\", \"\u{2028}\"]}",
        "{\"k\": [1 , 2\n,3\t]}",
        "{\"k\": {\"a\" :1, \"b\"\n:\"x\" , \"c\": [ ] }}",
    ] {
        same_as_slow_everywhere(doc.as_bytes());
        assert_eq!(fixed(doc), doc);
    }
}

#[test]
fn fast_path_then_repair_mid_run() {
    // Valid runs broken by something to repair: the fast path stops before
    // it, the slow path repairs, the fast path resumes.
    for doc in [
        r#"{"k": ["ab\dc", "x"]}"#,                // invalid escape
        r#"{"k": ["a\u12", "x"]}"#,                // cut-off \u escape
        r#"{"k": ["\ud83dx", 1]}"#,                // lone high surrogate
        r#"{"k": ["\ude00", 1]}"#,                 // lone low surrogate
        "{\"k\": [\"a\u{1}b\nc\", 1]}",            // control characters
        r#"{"k": ["say "hi" now", 1]}"#,           // unescaped quotes
        r#"{"k": [1, 2,], "j": {"a": 1,}}"#,       // trailing commas
        r#"{"k": [1 2], "j": {"a": 1 "b": 2}}"#,   // missing commas
        r#"{"k": [01, 1., .5, -, +1, 1e, 0x1F]}"#, // bad numbers
        r#"{"k": [True, None, nul, truex, NaN]}"#, // literals
        r#"{"k": [abc def, 'single', “smart”]}"#,  // unquoted, other quotes
        r#"{"k": {a: 1, "b" 2, "c":: 3, "d": }}"#, // keys and colons
        r#"{"k": [1, /* c */ 2, // d
3, # e
4]}"#,
        r#"{"k": [{"a": 1]], "x": (1, 2)}"#, // mismatched closers, tuples
        r#"{"k": {{"a": 1}}, "z": [1]]}"#,   // stray opener, redundant closer
        r#"{"k": [1, <x>, "<y>"], "m": 2 <z>}"#, // `<` in and out of strings
        "{\"k\": [\"a\"\n\"b\", \"c\"   \n  ]}", // quote after a line break
        r#"{"k": "ab"#,                      // cut off
        r#"{"k": [1, {"a": "b", "c"#,
        "{\"k\": [\"\u{a0}x\", \u{a0}1, \u{feff}2]}", // exotic blanks
    ] {
        same_as_slow_everywhere(doc.as_bytes());
        let r = check(doc);
        assert!(!r.repairs.is_empty(), "{doc}");
    }
    // Invalid UTF-8 inside a string: a stray continuation byte, a cut-off
    // sequence before ASCII, an overlong form.
    for doc in [
        &b"{\"k\": [\"a\xffb\", 1]}"[..],
        b"{\"k\": [\"a\xe6\x97x\", 1]}",
        b"{\"k\": [\"\xc0\xafz\", \"\xe6\x97\xa5\"]}",
    ] {
        same_as_slow_everywhere(doc);
        assert!(!repair(doc).unwrap().repairs.is_empty());
    }
}

#[test]
fn fast_path_limits() {
    // Keys, blanks and numbers longer than the token limit, and depth limits,
    // are left to the slow path.
    let limits = crate::Limits {
        max_token_bytes: 16,
        max_depth: 4,
        ..crate::Limits::default()
    };
    for doc in [
        r#"{"k": {"a_very_long_key_name": 1, "b": 2}}"#.to_string(),
        format!("{{\"k\": [1,{}2, 3]}}", " ".repeat(40)),
        r#"{"k": [123456789012345678901234567890, 1]}"#.to_string(),
        r#"{"k": [[[[[[1]]]]], 2]}"#.to_string(),
        format!("{{\"k\": {{\"a\"{}: 1}}}}", " ".repeat(20)),
    ] {
        let input = doc.as_bytes();
        for split in 0..input.len() {
            let cuts = [split];
            let run = |fast: bool| {
                let mut r = Repairer::with_limits(&limits);
                let mut v = Vec::new();
                let mut s = Slow::default();
                let mut st = Vec::new();
                for part in [&input[..split], &input[split..]] {
                    let p = if fast {
                        r.feed(part, &mut v)
                    } else {
                        r.feed(part, &mut s)
                    };
                    st.push(p);
                    if p.status != Status::NeedMore {
                        break;
                    }
                }
                if fast {
                    r.finish(&mut v);
                } else {
                    r.finish(&mut s);
                    v = s.out;
                }
                (v, st, r.take_repairs())
            };
            let (a, b) = (run(true), run(false));
            assert_eq!(
                a,
                b,
                "{doc} cut at {cuts:?}\n{}\n{}",
                String::from_utf8_lossy(&a.0),
                String::from_utf8_lossy(&b.0)
            );
        }
    }
}

mod fast_props {
    use super::*;
    use proptest::prelude::*;

    /// Pieces of JSON, valid and not, that make the paths meet.
    fn piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "{", "}", "[", "]", ",", ":", " ", "\n", "\"", "\"k\": ", "\"abc\"", "\\", "\\u",
            "\\ud83d", "\\ude00", "\\n", "00e9", "12", "-3.5e2", "0", ".", "e", "true", "nul", "l",
            "None", "'", "x", "é", "\u{e2}", "日", "<", "<x>", "/", "*", "#", "\u{1}", "(", ")",
            "=", "“", "\u{a0}", "\t",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn fast_path_matches_slow_path(
            head in prop::sample::select(vec!["{\"a\": [", "[", "{\"k\": {", "{\"s\": \""]),
            pieces in prop::collection::vec(piece(), 0..40),
            cuts in prop::collection::vec(0usize..200, 0..6),
        ) {
            let mut input = head.as_bytes().to_vec();
            for p in pieces {
                input.extend_from_slice(p.as_bytes());
            }
            let mut cuts = cuts;
            cuts.sort_unstable();
            same_as_slow(&input, &cuts);
            units_same_as_slow(&input, &cuts);
        }

        #[test]
        fn fast_path_matches_slow_path_on_mutated_json(
            doc in prop::sample::select(vec![
                r#"{"items": [{"id": 0, "label": "item 0-0", "ok": true}, {"id": 1, "label": "é\"\\", "ok": null}], "note": "batch"}"#,
                "{\n  \"a\": [1, 2.5, -3e4],\n  \"b\": {\"c\": \"\\u00e9\\ud83d\\ude00\"}\n}",
            ]),
            edits in prop::collection::vec((0usize..200, piece(), any::<bool>()), 0..4),
            cuts in prop::collection::vec(0usize..200, 0..6),
        ) {
            let mut input = doc.as_bytes().to_vec();
            for (at, p, delete) in edits {
                let at = at.min(input.len());
                if delete && at < input.len() {
                    input.remove(at);
                } else {
                    input.splice(at..at, p.bytes());
                }
            }
            let mut cuts = cuts;
            cuts.sort_unstable();
            same_as_slow(&input, &cuts);
            units_same_as_slow(&input, &cuts);
        }
    }
}

// ----- the unit path (whole plain units, with marks) against the slow path ---

/// What a sink that needs marks sees: writes (joined between marks, since
/// where they are cut depends on the chunks) and marks with their offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    Write(Vec<u8>),
    Mark(String, u64),
}

/// A sink that needs marks, like the call router: the unit path reads for
/// it unless `step`. It halts once it has seen `halt_at` marks, and is
/// opaque (as the router is inside arguments) at depth `opaque_at` and
/// deeper, closing all but one container in bulk.
#[derive(Clone, Default)]
struct Marked {
    seen: Vec<Seen>,
    step: bool,
    halt_at: Option<usize>,
    opaque_at: Option<usize>,
    marks: usize,
    depth: usize,
}

impl Sink for Marked {
    fn write(&mut self, bytes: &[u8]) {
        match self.seen.last_mut() {
            Some(Seen::Write(w)) => w.extend_from_slice(bytes),
            _ => self.seen.push(Seen::Write(bytes.to_vec())),
        }
    }
    fn mark(&mut self, mark: crate::json::Mark<'_>, offset: u64) {
        use crate::json::{Mark, ValueKind};
        match mark {
            Mark::Begin(ValueKind::Object | ValueKind::Array) => self.depth += 1,
            Mark::End(ValueKind::Object | ValueKind::Array) => self.depth -= 1,
            _ => {}
        }
        self.marks += 1;
        let text = match mark {
            Mark::Key(k) => format!("key {}", String::from_utf8_lossy(k)),
            m => format!("{m:?}"),
        };
        self.seen.push(Seen::Mark(text, offset));
    }
    fn halted(&self) -> bool {
        self.halt_at.is_some_and(|h| self.marks >= h)
    }
    fn opaque(&self) -> bool {
        self.opaque_at.is_some_and(|d| self.depth >= d)
    }
    fn opaque_closable(&self) -> usize {
        self.opaque_at.map_or(0, |d| self.depth.saturating_sub(d))
    }
    fn write_opaque(&mut self, bytes: &[u8], depth_change: isize) {
        self.depth = self.depth.saturating_add_signed(depth_change);
        self.write(bytes);
    }
    fn step_by_step(&self) -> bool {
        self.step
    }
}

/// The unit path and the slow path make the same writes, marks (at the same
/// offsets), repairs and progress for `input` cut at `cuts`, with the sink
/// halting after every possible number of marks, opaque or not.
fn units_same_as_slow(input: &[u8], cuts: &[usize]) {
    let total = {
        let mut m = Marked {
            step: true,
            ..Marked::default()
        };
        feed_cuts(input, cuts, false, &mut m);
        m.marks
    };
    let halts = std::iter::once(None).chain((1..=total.min(12)).map(Some));
    for halt_at in halts {
        for opaque_at in [None, Some(2)] {
            for stop_on_lt in [false, true] {
                let run = |step: bool| {
                    let mut m = Marked {
                        step,
                        halt_at,
                        opaque_at,
                        ..Marked::default()
                    };
                    let r = feed_cuts(input, cuts, stop_on_lt, &mut m);
                    (m.seen, r)
                };
                let (units, slow) = (run(false), run(true));
                assert_eq!(
                    units,
                    slow,
                    "{:?} cut at {cuts:?}, halt at {halt_at:?}, opaque at {opaque_at:?}",
                    String::from_utf8_lossy(input)
                );
            }
        }
    }
}

fn units_same_as_slow_everywhere(input: &[u8]) {
    units_same_as_slow(input, &[]);
    for a in 1..input.len() {
        units_same_as_slow(input, &[a]);
    }
    let ones: Vec<usize> = (1..input.len()).collect();
    units_same_as_slow(input, &ones);
}

#[test]
fn unit_path_reads_envelopes_like_the_slow_path() {
    for doc in [
        r#"{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}"#,
        "[{\"name\": \"a\", \"arguments\": {}} ,\n {\"name\" : \"b\",\"arguments\":[ ]}]",
        r#"{"type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}"#,
        r#"{"k": "é \"q\" \u00e9 \ud83d\ude00", "e": {}, "a": [[], {}], "s": ["x", "y" ]}"#,
        // Repairs between plain units, which the slow path makes.
        r#"{"a": 'b', "c": "d",}"#,
        r#"{"a" "b", "c": "d" "e": ["f",,"g"]}"#,
        r#"{"a": "b"} {"c": 1}"#,
        "{\"a\": \"b\" \n \"c\": \"d\"}",
        "{\"a\": tru, \"b\": None, \"c\": [1, 2,]}",
        r#"{"a": {"b": "c"}}}"#,
        r#"{"a": ["b"}"#,
        "  \"top\"  ",
        "[\"a\", {\"b\": \"c\"}]",
        "{\"a\" :\t\"x\"\r\n,\n\"b\"\n:\n\"y\"\n}",
        r#"{"<x>": "<y>", "z": <w>}"#,
        "{\"a\": \"b\\x\", \"c\\q\": \"d\", \"e\": \"\u{1}\"}",
    ] {
        units_same_as_slow_everywhere(doc.as_bytes());
    }
}

#[test]
fn unit_path_respects_token_limits() {
    // Keys, their blanks and the blanks held with a comma are bounded by
    // `max_token_bytes` on the slow path: near the bound the unit path
    // leaves them to it.
    for limit in [16usize, 17, 18, 20] {
        let limits = crate::config::Limits {
            max_token_bytes: limit,
            ..crate::config::Limits::default()
        };
        for doc in [
            "{\"abcdefghijklm\": \"v\", \"k\":  \"w\"}",
            "{\"abcdefghijk\"     : \"v\"}",
            "{\"a\": \"v\",                    \"b\": 1}",
            "[\"abcdefghijklmnopqrstuvwxyz\"                   , \"b\"]",
        ] {
            for cut in 0..=doc.len() {
                let run = |step: bool| {
                    let mut m = Marked {
                        step,
                        ..Marked::default()
                    };
                    let mut r = Repairer::with_limits(&limits);
                    let mut steps = Vec::new();
                    for piece in [&doc.as_bytes()[..cut], &doc.as_bytes()[cut..]] {
                        if !piece.is_empty() {
                            let p = r.feed(piece, &mut m);
                            steps.push((p.consumed, p.status));
                        }
                    }
                    r.finish(&mut m);
                    (m.seen, steps, r.take_repairs())
                };
                assert_eq!(run(false), run(true), "{doc:?} cut at {cut}, limit {limit}");
            }
        }
    }
}

#[test]
fn fast_path_resumes_units_cut_by_chunks() {
    // A chunk ending inside a key, after a key's quote, before its colon,
    // inside a number or literal, after a string value's closing quote (with
    // blanks): the next chunk's fast path completes the unit the slow path
    // began, with the slow path's output and repairs, at every split.
    for doc in [
        "{\"k\": {\"label\"  :  \"item\"  ,  \"n\": -12.5e3 , \"t\": true, \"f\": false}}",
        "{\"k\": [{\"a\\\"b\\u00e9\": null}, 123, \"x\"\n, 0]}",
        "{\"k\": {\"a\": 1, \"b\" 2, \"c\": tru, \"d\": 12x, \"e\": \"q\" \"r\"}}",
        "{\"k\": {\"a\": True, \"b\": 1.}, \"x\": [\"s\"  <y>]}",
    ] {
        same_as_slow_everywhere(doc.as_bytes());
    }
    // Many small chunks of a large valid document: unchanged.
    let items: Vec<String> = (0..200)
        .map(|k| format!("{{\"id\": {k}, \"label\": \"item {k}\", \"ok\": true, \"x\": -{k}.5}}"))
        .collect();
    let doc = format!("{{\"items\": [{}], \"note\": \"batch\"}}", items.join(", "));
    for chunk in [1, 3, 4, 7] {
        let mut r = Repairer::new();
        let mut out = Vec::new();
        for c in doc.as_bytes().chunks(chunk) {
            r.feed(c, &mut out);
        }
        r.finish(&mut out);
        assert_eq!(String::from_utf8(out).unwrap(), doc);
        assert!(r.repairs().is_empty());
    }
}

#[test]
fn plain_len_matches_the_table() {
    use super::repair::plain_len;
    // Every byte value at every position of a 0..=24-byte run of plain bytes.
    for len in 0..=24 {
        for at in 0..len {
            for b in 0..=255u8 {
                let mut s = vec![b'a'; len];
                s[at] = b;
                let want = s
                    .iter()
                    .position(|&c| !(0x20..0x80).contains(&c) || c == b'"' || c == b'\\')
                    .unwrap_or(len);
                assert_eq!(plain_len(&s), want, "byte {b:#04x} at {at} of {len}");
            }
        }
        assert_eq!(plain_len(&vec![b'~'; len]), len);
    }
}

#[test]
fn single_quoted_len_stops_at_the_first_quote_or_special_byte() {
    use super::repair::single_quoted_len;
    let special = |c: u8| !(0x20..0x80).contains(&c) || matches!(c, b'"' | b'\\' | b'\'');
    // Every byte value at every position of a 0..=24-byte run, with and
    // without a closing quote after it (the first stop wins).
    for len in 0..=24 {
        for at in 0..len {
            for b in 0..=255u8 {
                let mut s = vec![b'a'; len];
                s[at] = b;
                let want = s.iter().position(|&c| special(c)).unwrap_or(len);
                assert_eq!(
                    single_quoted_len(&s),
                    want,
                    "byte {b:#04x} at {at} of {len}"
                );
                s.push(b'\'');
                assert_eq!(
                    single_quoted_len(&s),
                    want,
                    "byte {b:#04x} at {at} of {len}, quoted"
                );
            }
        }
        assert_eq!(single_quoted_len(&vec![b'~'; len]), len);
    }
}

#[test]
fn run_len_except_matches_its_table() {
    use super::repair::run_len_except;
    // A table that leaves out what `run_len::<true, true>` requires and `(`
    // `)` `'` besides; every byte value at every position of 0..=24 bytes.
    let mut kept = [false; 256];
    for c in 0x20..0x7Fu8 {
        kept[c as usize] = !matches!(c, b'"' | b'\\' | b'(' | b')' | b'\'');
    }
    for len in 0..=24 {
        for at in 0..len {
            for b in 0..=255u8 {
                let mut s = vec![b'a'; len];
                s[at] = b;
                let want = s.iter().position(|&c| !kept[c as usize]).unwrap_or(len);
                let got = run_len_except::<true, true>(&s, &kept, b"()'");
                assert_eq!(got, want, "byte {b:#04x} at {at} of {len}");
            }
        }
    }
}

#[test]
fn token_limits_are_chunk_invariant() {
    // Runs of blanks longer than the token limit after a key's or a value's
    // closing quote: what is kept of them must not depend on the split
    // (whole input dropped a key's 20 blanks, a split after the first one
    // kept it), on the slow path and on the fast one.
    let limits = crate::Limits {
        max_token_bytes: 16,
        max_depth: 4,
        ..crate::Limits::default()
    };
    let blanks = " ".repeat(20);
    for doc in [
        format!("{{\"k\": {{\"a\"{blanks}: 1}}}}"),
        format!("{{\"k\": [\"a\"{blanks}, 1]}}"),
        format!("{{\"k\": \"a\"{blanks}}}"),
        format!("{{\"k\": [1,{blanks}2]}}"),
        format!("{{\"k\": {{\"a_very_long_key_name\" {blanks}: 1}}}}"),
    ] {
        let input = doc.as_bytes();
        let run = |cuts: &[usize], fast: bool| {
            let mut r = Repairer::with_limits(&limits);
            let mut v = Vec::new();
            let mut s = Slow::default();
            let mut last = 0;
            for &c in cuts.iter().chain([input.len()].iter()) {
                if fast {
                    r.feed(&input[last..c], &mut v);
                } else {
                    r.feed(&input[last..c], &mut s);
                }
                last = c;
            }
            if fast {
                r.finish(&mut v);
            } else {
                r.finish(&mut s);
                v = s.out;
            }
            (String::from_utf8(v).unwrap(), r.take_repairs())
        };
        let whole = run(&[], false);
        let bytes: Vec<usize> = (1..input.len()).collect();
        for fast in [false, true] {
            assert_eq!(run(&bytes, fast), whole, "{doc} byte by byte, fast {fast}");
            for split in 1..input.len() {
                assert_eq!(
                    run(&[split], fast),
                    whole,
                    "{doc} cut at {split}, fast {fast}"
                );
            }
        }
    }
}

#[test]
fn bare_tokens_read_several_bytes_per_step() {
    // The bytes that keep a bare token a number or literal are read in one
    // step; the byte that makes it an unquoted string switches it, at the
    // same place whatever the split (`check` feeds every split and 1-byte
    // chunks). Tokens that start like literals, end like them, or turn
    // into strings after a few bytes:
    assert_eq!(
        fixed(r#"{"a": Truex, "b": Nonesuch, "c": nullx}"#),
        r#"{"a": "Truex", "b": "Nonesuch", "c": "nullx"}"#
    );
    assert_eq!(
        fixed(r#"{"a": [True, False, None, NaN, -Infinity, +1, 1e5, 12.5.6, 1x2, undefinedx]}"#),
        r#"{"a": [true, false, null, null, null, 1, 1e5, "12.5.6", "1x2", "undefinedx"]}"#
    );
    assert_eq!(
        kinds("{'a': 'x', b: None,}"),
        [
            K::SingleQuotes,
            K::SingleQuotes,
            K::UnquotedKey,
            K::PythonLiteral,
            K::TrailingComma
        ]
    );
    // Cut off inside a literal: completed.
    assert_eq!(fixed(r#"{"a": nul"#), r#"{"a": null}"#);
    assert_eq!(fixed(r#"{"a": -Infin"#), r#"{"a": null}"#);
    // The fast path is not set up before a byte it cannot read (a single
    // quote, a bare word, a Python literal): output, repairs and progress
    // are the slow path's at every cut.
    same_as_slow_everywhere(b"{\"a\": 'x', b: True, \"c\": [None, 'y',], \"d\": 1}");
}

#[test]
fn fast_path_rewrites_single_quotes_python_literals_and_bare_keys() {
    // The fast path rewrites the units the slow path would rewrite in one
    // way only; output, repairs and progress stay the slow path's at every
    // cut (and in pairs of cuts for the short ones).
    for doc in [
        &b"{'a': 'x', 'b': True, 'c': [None, False, 'y'], d: 1}"[..],
        b"{'id': 0, label: 'item 0', 'ok': True, 'note': None,}",
        b"{\"a\": 1, label: 2, _x1: 'z' , 'k'  : 'v'  }",
        b"[{'a': 'it''s'}, {'b': 'say \"hi\"'}, {'c': 'back\\\\slash'}]",
        b"{'a': 'caf\xc3\xa9', 'b': 'tab\tin'}",
        b"{'a': True , 'b': Truex, 'c': None]",
        b"{label : 1, other= 2, 'k' 'v', x: 'y' z}",
        b"{'a': 'x'\n, 'b': 'y'\n}",
        b"{\"a\": [1, 'x' ,True,None,'y'], \"b\": {c: {d: 'e'}}}",
        b"{\"a\": [1, 2 , ], \"b\": {\"c\": 1,}, \"d\": [[1,],],}",
        b"[1,\n  ]",
        b"{\"a\": [True , False\n, None\t], \"b\": True x, \"c\": None\r\n}",
    ] {
        same_as_slow_everywhere(doc);
    }
    // The rewritten JSON, and the repairs at the units' first bytes.
    let r = check("{'a': 'x', b: True}");
    assert_eq!(r.json, r#"{"a": "x", "b": true}"#);
    assert_eq!(
        r.repairs
            .iter()
            .map(|r| (r.kind, r.offset))
            .collect::<Vec<_>>(),
        [
            (K::SingleQuotes, 1),
            (K::SingleQuotes, 6),
            (K::UnquotedKey, 11),
            (K::PythonLiteral, 14)
        ]
    );
}

#[test]
fn fast_path_rewrites_respect_token_limits() {
    // Keys and the blanks after a closing quote longer than the token
    // limit: the slow path truncates or closes them; the fast path leaves
    // them to it.
    let limits = crate::Limits {
        max_token_bytes: 8,
        ..crate::Limits::default()
    };
    let blanks = " ".repeat(12);
    for doc in [
        "{'a_long_key': 1}".to_string(),
        "{a_long_key: 1}".to_string(),
        "{abcde: 1, 'abcd': 2}".to_string(),
        format!("{{'a': 'x'{blanks}, 'b'{blanks}: 1}}"),
        format!("{{\"a\": [1,{blanks}], \"b\": [2, {blanks}3,]}}"),
    ] {
        let input = doc.as_bytes();
        let run = |cuts: &[usize], fast: bool| {
            let mut r = Repairer::with_limits(&limits);
            let mut v = Vec::new();
            let mut s = Slow::default();
            let mut last = 0;
            for &c in cuts.iter().chain([input.len()].iter()) {
                if fast {
                    r.feed(&input[last..c], &mut v);
                } else {
                    r.feed(&input[last..c], &mut s);
                }
                last = c;
            }
            if fast {
                r.finish(&mut v);
            } else {
                r.finish(&mut s);
                v = s.out;
            }
            (String::from_utf8(v).unwrap(), r.take_repairs())
        };
        let slow = run(&[], false);
        assert_eq!(run(&[], true), slow, "{doc} whole");
        for split in 1..input.len() {
            assert_eq!(run(&[split], true), slow, "{doc} cut at {split}");
        }
    }
}

#[test]
fn key_truncation_keeps_escapes_and_characters_whole() {
    // A key longer than the token limit keeps its longest prefix that ends
    // neither inside an escape (a lone surrogate is written as `\` and then
    // `\uD83D`: its first half alone escaped the closing quote) nor inside a
    // character (a bare key's bytes are cut before they are escaped).
    let limits = crate::Limits {
        max_token_bytes: 16,
        ..crate::Limits::default()
    };
    let cases: [(&[u8], &str); 3] = [
        (
            b"{\"input\"```\\ud83d\"say \"hi\" now\"",
            r#"{"input\"```" :"now\""}"#,
        ),
        (
            "{a\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}: 1}".as_bytes(),
            "{\"a\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\": 1}",
        ),
        (
            "{'a\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}': 1}".as_bytes(),
            "{\"a\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\": 1}",
        ),
    ];
    for (doc, want) in cases {
        for cut in 0..=doc.len() {
            for slow in [false, true] {
                let mut r = Repairer::with_limits(&limits);
                let mut v = Vec::new();
                let mut s = Slow::default();
                for part in [&doc[..cut], &doc[cut..]] {
                    if slow {
                        r.feed(part, &mut s);
                    } else {
                        r.feed(part, &mut v);
                    }
                }
                if slow {
                    r.finish(&mut s);
                    v = s.out;
                } else {
                    r.finish(&mut v);
                }
                let out = String::from_utf8(v).expect("UTF-8 output");
                assert_eq!(out, want, "cut at {cut}, slow path: {slow}");
                serde_json::from_str::<serde_json::Value>(&out).expect("valid JSON");
                let repairs = r.take_repairs();
                assert!(
                    repairs
                        .iter()
                        .any(|r| r.kind == crate::RepairKind::LimitExceeded)
                        && !repairs
                            .iter()
                            .any(|r| r.kind == crate::RepairKind::InvalidUtf8),
                    "{repairs:?}"
                );
            }
        }
    }
}

#[test]
fn into_string_is_the_same_text_whichever_check_it_picks() {
    let ascii = "plain words, a line\n".repeat(40);
    let dense = "naïve café ≈ ✓ ".repeat(40);
    // One character the sample may miss, in a long ASCII text.
    let mut sparse = "x".repeat(1000);
    sparse.insert(501, 'é');
    for s in [&ascii, &dense, &sparse, &"é".to_string()] {
        assert_eq!(super::into_string(s.as_bytes().to_vec()), *s);
    }
    assert!(!super::looks_non_ascii(ascii.as_bytes()));
    assert!(super::looks_non_ascii(dense.as_bytes()));
    // Invalid bytes (never from the repairer) are replaced, not lost.
    let mut bad = ascii.clone().into_bytes();
    bad[300] = 0xFF;
    let s = super::into_string(bad);
    assert_eq!(s.len(), ascii.len() + 2);
    assert!(s.contains('\u{FFFD}'));
}
