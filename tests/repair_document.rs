//! `toolstream::json::DocumentRepairer` (behind `toolstream repair`):
//! valid JSON comes out unchanged, a limit never silently rewrites the
//! document, memory stays bounded by the limits however many repairs the
//! input needs, and the output does not depend on chunking.

use std::alloc::System;

use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use toolstream::json::{repair_document, DocumentRepairer, LimitHit};
use toolstream::{LimitKind, Limits, RepairKind};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Runs the repairer over `input` in `chunk`-byte pieces.
fn run(
    input: &[u8],
    chunk: usize,
    limits: &Limits,
) -> (Vec<u8>, Option<toolstream::json::DocumentEnd>) {
    let mut doc = DocumentRepairer::new(limits);
    let mut out = Vec::new();
    for piece in input.chunks(chunk.max(1)) {
        doc.feed(piece, &mut out);
    }
    let end = doc.finish(&mut out).ok();
    (out, end)
}

fn nested(depth: usize) -> Vec<u8> {
    let mut v = vec![b'['; depth];
    v.extend(std::iter::repeat_n(b']', depth));
    v
}

/// `[` × 101: deeper than the default `max_depth`. It was rewritten into
/// `[[…]],[]]` (the scan went on inside the cut value) and reported as
/// clean; now the document is cut at the limit, said so, and nothing after
/// the cut is read as more values.
#[test]
fn a_document_past_max_depth_is_cut_and_said_so() {
    let input = nested(101);
    for chunk in [1, 3, 64, input.len()] {
        let (out, end) = run(&input, chunk, &Limits::default());
        let end = end.expect("a value");
        assert_eq!(out, nested(100), "chunk {chunk}");
        assert_eq!(
            end.limit,
            Some(LimitHit {
                limit: LimitKind::MaxDepth,
                offset: 100
            })
        );
        assert!(end.truncated);
        assert_eq!(end.values, 1);
        assert!(end
            .repairs
            .iter()
            .any(|r| r.kind == RepairKind::LimitExceeded));
    }
    let r = repair_document(&input, 0).expect("a value");
    assert!(r.truncated);
    assert!(r
        .repairs
        .iter()
        .any(|r| r.kind == RepairKind::LimitExceeded));
    assert_eq!(r.json.as_bytes(), nested(100));
}

/// Valid JSON within the limits passes through byte for byte: deep (with
/// the depth raised), with every kind of value, several values.
#[test]
fn valid_json_within_the_limits_is_unchanged() {
    let deep = Limits {
        max_depth: 1000,
        ..Limits::default()
    };
    let input = nested(900);
    for chunk in [1, 7, input.len()] {
        let (out, end) = run(&input, chunk, &deep);
        assert_eq!(out, input);
        let end = end.unwrap();
        assert!(end.repairs.is_empty() && end.limit.is_none() && !end.truncated);
    }
    let doc = br#"{"a": [1, -2.5e+3, true, false, null, "x\"\u00e9\ud83d\ude00"], "b": {"c": {}}, "d": []}"#;
    for chunk in [1, 2, 5, doc.len()] {
        let (out, end) = run(doc, chunk, &Limits::default());
        assert_eq!(out, doc);
        assert!(end.unwrap().repairs.is_empty());
    }
    for scalar in [&b"42"[..], b"\"x\"", b"true", b"  null \n", b"None"] {
        let (out, end) = run(scalar, 1, &Limits::default());
        assert!(!out.is_empty(), "{:?}", String::from_utf8_lossy(scalar));
        assert_eq!(end.unwrap().values, 1);
    }
    let (out, end) = run(b"true story: {\"a\": 1}", 1, &Limits::default());
    assert_eq!(out, br#"{"a": 1}"#);
    assert_eq!(end.unwrap().values, 1);
}

/// `max_args_bytes` bounds one value's output: a longer one is closed at
/// the cut (valid JSON), the limit reported with where the value began.
#[test]
fn a_value_past_max_args_bytes_is_closed_at_the_cut() {
    let limits = Limits {
        max_args_bytes: 20,
        ..Limits::default()
    };
    let input = br#"Here: {"city": "Paris, the city of light", "days": 3}"#;
    let (whole, end) = run(input, input.len(), &limits);
    let end = end.unwrap();
    assert_eq!(
        end.limit,
        Some(LimitHit {
            limit: LimitKind::MaxArgsBytes,
            offset: 6
        })
    );
    let v: serde_json::Value = serde_json::from_slice(&whole).expect("valid JSON");
    assert!(v["city"].as_str().unwrap().starts_with("Par"));
    for chunk in [1, 2, 3, 9] {
        assert_eq!(run(input, chunk, &limits).0, whole, "chunk {chunk}");
    }
    // A token past `max_token_bytes` is reported too.
    let long_key = format!("{{\"{}\": 1}}", "k".repeat(100));
    let (_, end) = run(
        long_key.as_bytes(),
        5,
        &Limits {
            max_token_bytes: 16,
            ..Limits::default()
        },
    );
    assert_eq!(
        end.unwrap().limit.map(|h| h.limit),
        Some(LimitKind::MaxTokenBytes)
    );
}

/// 4 MB of stray commas: a repair per byte, four million of them. The list
/// is cut at `max_repairs` (then `repairs_omitted`), and the memory held
/// while feeding stays bounded — it grew with the repairs (30 MB of commas
/// took 1.1 GB in `toolstream repair`).
#[test]
fn repairs_take_bounded_memory() {
    let mut input = b"{\"a\": 1".to_vec();
    input.extend(std::iter::repeat_n(b',', 4 << 20));
    input.extend_from_slice(b"}");
    let limits = Limits {
        max_repairs: 100,
        ..Limits::default()
    };
    let mut doc = DocumentRepairer::new(&limits);
    let mut out = Vec::new();
    let region = Region::new(GLOBAL);
    for piece in input.chunks(64 << 10) {
        doc.feed(piece, &mut out);
    }
    let stats = region.change();
    // (`stats_alloc` counts a reallocation's growth in `bytes_allocated`.)
    let live = stats.bytes_allocated as i64 - stats.bytes_deallocated as i64;
    assert!(
        live < 1 << 20,
        "{live} bytes held after 4 MB of commas: {stats:?}"
    );
    let end = doc.finish(&mut out).unwrap();
    assert_eq!(out, br#"{"a": 1}"#);
    assert_eq!(end.repairs.len(), 101);
    assert_eq!(end.repairs[100].kind, RepairKind::RepairsOmitted);
    // The same cut list whole.
    let (out2, end2) = run(&input, input.len(), &limits);
    assert_eq!(out2, out);
    assert_eq!(end2.unwrap().repairs, end.repairs);
}

/// Every limit at 0, 1 and `usize::MAX`: no panic, output valid JSON (or
/// nothing), the same for every chunking.
#[test]
fn any_limit_value_is_safe() {
    let inputs: [&[u8]; 4] = [
        br#"Sure: ```json {"a": [1, {"b": 'x'}], "c": tru"#,
        b"[[[[1, 2], [3]], 4], 5] and {\"k\": \"v\"}",
        b"\"just a string",
        b"-12.5e",
    ];
    for v in [0usize, 1, 2, usize::MAX] {
        let limits = Limits {
            max_depth: v,
            max_args_bytes: v,
            max_token_bytes: v,
            max_repairs: v,
            ..Limits::default()
        };
        for input in inputs {
            let (whole, _) = run(input, input.len(), &limits);
            if !whole.is_empty() {
                serde_json::from_slice::<serde_json::Value>(&whole).unwrap_or_else(|e| {
                    panic!("{e}: {:?} at {v}", String::from_utf8_lossy(&whole))
                });
            }
            for chunk in [1, 3] {
                assert_eq!(run(input, chunk, &limits).0, whole);
            }
        }
    }
}

/// Feeds `input` in two pieces cut at `cut`.
fn run_split(input: &[u8], cut: usize) -> (Vec<u8>, Option<toolstream::json::DocumentEnd>) {
    let mut doc = DocumentRepairer::new(&Limits::default());
    let mut out = Vec::new();
    doc.feed(&input[..cut], &mut out);
    doc.feed(&input[cut..], &mut out);
    let end = doc.finish(&mut out).ok();
    (out, end)
}

/// A value the text left unclosed ends at the closing fence of its code
/// block or at prose after a blank line (closed, not cut off, no key made
/// of what follows), and a line that only looks like a fence stays JSON —
/// decided the same way at every split, also inside the few bytes after a
/// line break that tell a closing fence from content.
#[test]
fn a_fence_or_prose_ends_an_unclosed_value_at_any_split() {
    use serde_json::{json, Value};
    let cases: Vec<(&str, Value, bool)> = vec![
        (
            "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}\n```\nDone.",
            json!({"name": "get_weather", "arguments": {"city": "Paris"}}),
            false,
        ),
        (
            "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par\n```\nDone.",
            json!({"name": "get_weather", "arguments": {"city": "Par"}}),
            false,
        ),
        (
            "{\"name\":\"f\",\"arguments\":{\"a\":1}\n\nLet me know.",
            json!({"name": "f", "arguments": {"a": 1}}),
            false,
        ),
        // Outside a fence, a fence in a string is content.
        ("{\"a\": \"x\n```\ny\"}", json!({"a": "x\n```\ny"}), false),
        // Inside one, lines that are no closing fence stay in the string:
        // four blanks, two backticks, a fence that opens a block.
        (
            "```\n{\"a\": \"x\n    ```\n``y\n```python\nz\"}\n```",
            json!({"a": "x\n    ```\n``y\n```python\nz"}),
            false,
        ),
        // A backtick that starts no fence is a bare token's.
        (
            "```json\n{\"a\": `b`}\n```",
            json!({"a": "`b`"}),
            false,
        ),
        // Fences counted across values: the second value is fenced, the
        // third (after an even number of fences) is not; four backticks
        // count as one.
        (
            "````json\n{\"a\": 1}\n```\nthen ```json\n{\"b\": \"2\n  ```\nafter {\"c\": \"3\n```\n4\"}",
            json!([{"a": 1}, {"b": "2"}, {"c": "3\n```\n4"}]),
            false,
        ),
        // A closing fence cut short by the end of the input is one.
        ("```json\n{\"a\": \"x\n``", json!({"a": "x"}), false),
        ("```json\n{\"a\": 1\n ``", json!({"a": 1}), false),
        // Cut off with no fence or prose after it: truncated.
        ("```json\n{\"a\": [1, 2", json!({"a": [1, 2]}), true),
    ];
    for (input, want, truncated) in cases {
        let bytes = input.as_bytes();
        let (whole, end) = run(bytes, bytes.len(), &Limits::default());
        let end = end.expect("a JSON value");
        let got: Value = serde_json::from_slice(&whole).expect("repaired JSON");
        assert_eq!(got, want, "{input:?}");
        assert_eq!(end.truncated, truncated, "{input:?}");
        assert!(end.limit.is_none(), "{input:?}");
        let r = repair_document(bytes, 0).expect("a JSON value");
        assert_eq!(r.json.as_bytes(), whole, "{input:?}");
        for chunk in 1..=9 {
            let (out, e) = run(bytes, chunk, &Limits::default());
            assert_eq!(out, whole, "{input:?} in {chunk}-byte chunks");
            assert_eq!(e.as_ref(), Some(&end), "{input:?} in {chunk}-byte chunks");
        }
        for cut in 0..=bytes.len() {
            let (out, e) = run_split(bytes, cut);
            assert_eq!(out, whole, "{input:?} cut at {cut}");
            assert_eq!(e.as_ref(), Some(&end), "{input:?} cut at {cut}");
        }
    }
}
