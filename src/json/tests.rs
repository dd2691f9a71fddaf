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
        let mut r = Repairer::new();
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
    let mut r = Repairer::new();
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
fn numbers() {
    assert_eq!(fixed(r#"{"a": .5}"#), r#"{"a": 0.5}"#);
    assert_eq!(fixed(r#"{"a": 1.}"#), r#"{"a": 1.0}"#);
    assert_eq!(fixed(r#"{"a": +1}"#), r#"{"a": 1}"#);
    assert_eq!(fixed(r#"{"a": 007}"#), r#"{"a": "007"}"#);
    assert_eq!(fixed(r#"{"a": 0x1F}"#), r#"{"a": "0x1F"}"#);
    assert_eq!(fixed("[1, 2, ...]"), "[1, 2 ]");
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
    assert_eq!(t(r#"{"a": 1, "b"#), r#"{"a": 1}"#);
    assert_eq!(t(r#"{"a": 1, "b""#), r#"{"a": 1}"#);
    assert_eq!(t(r#"{"a": 1, "b":"#), r#"{"a": 1, "b":null}"#);
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
