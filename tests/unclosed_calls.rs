//! A call the model left unclosed must not swallow what comes after it
//! (issue #45): a closing code fence ends whatever JSON it fences (closed,
//! with a `missing_closer` repair; an unclosed string ends at the fence),
//! and after a bare call left open, prose after a blank line (a letter where
//! the JSON could only go on with a comma, a closer, or a key after a
//! comma) ends the call there, the prose being text. The same holds for the
//! JSON-in-text dialects (Mistral, Llama's `<|python_tag|>`, pythonic) and
//! for `json::repair_document` (the CLI's `repair`), which must not invent a
//! key such as `"```"` from the fence.
//!
//! Every case is checked whole, at 1, 2, 3, 7 and 64-byte chunks and cut in
//! two at every byte, against every contract (`common::check_all`,
//! `common::check_contracts`).

mod common;

use common::{check_all, check_contracts, run_split, summary};
use serde_json::{json, Value};
use toolstream::json::repair_document;
use toolstream::{Config, RepairKind};

/// One expected call: name, arguments, and repairs it must list.
struct Want {
    name: &'static str,
    args: Value,
    repairs: &'static [RepairKind],
}

/// Parses `input` at every chunking and every two-piece split, checks the
/// contracts and that all agree, then checks the calls and the text.
fn case(input: &str, calls: &[Want], text: &str) {
    let cfg = Config::default();
    let bytes = input.as_bytes();
    let parsed = check_all(bytes, &cfg);
    let whole = summary(&run_split(bytes, &[], &cfg));
    for k in 0..=bytes.len() {
        let ev = run_split(bytes, &[k], &cfg);
        check_contracts(bytes, &ev);
        assert_eq!(summary(&ev), whole, "split at {k} differs for {input:?}");
    }
    assert_eq!(
        parsed.calls.len(),
        calls.len(),
        "{input:?}: {:?}",
        parsed.calls
    );
    for (got, want) in parsed.calls.iter().zip(calls) {
        assert_eq!(got.name, want.name, "{input:?}");
        let args: Value = serde_json::from_str(&got.arguments).expect("arguments are JSON");
        assert_eq!(args, want.args, "{input:?}");
        assert!(!got.truncated, "{input:?}: not cut off, closed: {got:?}");
        let kinds = common::kinds(got);
        for k in want.repairs {
            assert!(kinds.contains(k), "{input:?}: {k:?} missing from {kinds:?}");
        }
    }
    assert_eq!(String::from_utf8_lossy(&whole.0), text, "{input:?}");
}

#[test]
fn a_closing_fence_ends_the_json_it_fences() {
    case(
        "I'll check.\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}\n```\nDone.",
        &[Want {
            name: "get_weather",
            args: json!({"city": "Paris"}),
            repairs: &[RepairKind::MissingCloser],
        }],
        "I'll check.\n\nDone.",
    );
    // The fence right after the value, on its line.
    case(
        "```json\n{\"name\":\"f\",\"arguments\":{\"a\":1}```\nDone.",
        &[Want {
            name: "f",
            args: json!({"a": 1}),
            repairs: &[RepairKind::MissingCloser],
        }],
        "\nDone.",
    );
    // Two braces missing, an array of calls left open.
    case(
        "```json\n[{\"name\":\"f\",\"arguments\":{\"a\":[1,2\n```\nThat is all.",
        &[Want {
            name: "f",
            args: json!({"a": [1, 2]}),
            repairs: &[RepairKind::MissingCloser],
        }],
        "\nThat is all.",
    );
}

#[test]
fn an_unclosed_string_ends_at_the_closing_fence() {
    case(
        "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par\n```\nDone.",
        &[Want {
            name: "get_weather",
            args: json!({"city": "Par"}),
            repairs: &[RepairKind::UnclosedString, RepairKind::MissingCloser],
        }],
        "\nDone.",
    );
    // Indented up to three blanks, as Markdown allows.
    case(
        "```json\n{\"name\": \"f\", \"arguments\": {\"q\": \"x\n   ```\nDone.",
        &[Want {
            name: "f",
            args: json!({"q": "x"}),
            repairs: &[RepairKind::UnclosedString],
        }],
        "\nDone.",
    );
}

#[test]
fn what_is_no_closing_fence_stays_json() {
    // A raw line break in a string: content (escaped), not the fence.
    case(
        "```json\n{\"name\":\"f\",\"arguments\":{\"a\":\"line1\nline2\"}}\n```",
        &[Want {
            name: "f",
            args: json!({"a": "line1\nline2"}),
            repairs: &[RepairKind::ControlCharacter],
        }],
        "",
    );
    // A line that opens a fence (an info string follows) is content.
    case(
        "```json\n{\"name\":\"w\",\"arguments\":{\"c\":\"x\n```python\ny\"}}\n```",
        &[Want {
            name: "w",
            args: json!({"c": "x\n```python\ny"}),
            repairs: &[],
        }],
        "",
    );
    // Backticks inside a string, and a single one where a value belongs.
    case(
        "```json\n{\"name\":\"f\",\"arguments\":{\"s\":\"use ```code```\",\"a\":`x`}}\n```",
        &[Want {
            name: "f",
            args: json!({"s": "use ```code```", "a": "`x`"}),
            repairs: &[],
        }],
        "",
    );
    // A closed call in a fence: unchanged, no repair.
    case(
        "```json\n{\"name\":\"f\",\"arguments\":{\"a\":1}}\n```\nDone.",
        &[Want {
            name: "f",
            args: json!({"a": 1}),
            repairs: &[],
        }],
        "\nDone.",
    );
}

#[test]
fn prose_after_a_blank_line_ends_a_bare_call() {
    for input in [
        "{\"name\":\"f\",\"arguments\":{\"a\":1}\n\nLet me know.",
        "{\"name\":\"f\",\"arguments\":{\"a\":1\n\nLet me know.",
        "{\"name\":\"f\",\"arguments\":{\"a\":1},\n\nLet me know.",
        "{\"name\":\"f\",\"arguments\":{\"a\":1}\r\n  \r\nLet me know.",
    ] {
        case(
            input,
            &[Want {
                name: "f",
                args: json!({"a": 1}),
                repairs: &[RepairKind::MissingCloser],
            }],
            "Let me know.",
        );
    }
    case(
        "Calling it.\n{\"name\":\"f\",\"arguments\":{\"a\":\"x\"\n\nThanks!",
        &[Want {
            name: "f",
            args: json!({"a": "x"}),
            repairs: &[RepairKind::MissingCloser],
        }],
        "Calling it.\nThanks!",
    );
    // A closed call then prose: unchanged.
    case(
        "{\"name\":\"f\",\"arguments\":{\"a\":1}}\n\nLet me know.",
        &[Want {
            name: "f",
            args: json!({"a": 1}),
            repairs: &[],
        }],
        "\n\nLet me know.",
    );
    // A blank line inside a call, before a key or value that continues it.
    case(
        "{\"name\":\"f\",\n\n\"arguments\":{\"a\":\n\ntrue}}",
        &[Want {
            name: "f",
            args: json!({"a": true}),
            repairs: &[],
        }],
        "",
    );
}

#[test]
fn json_in_text_dialects_end_at_a_blank_line_or_a_fence() {
    let f = || Want {
        name: "f",
        args: json!({"a": 1}),
        repairs: &[],
    };
    case(
        "[TOOL_CALLS][{\"name\":\"f\",\"arguments\":{\"a\":1}\n\nLet me know.",
        &[f()],
        "Let me know.",
    );
    case(
        "<|python_tag|>{\"name\":\"f\",\"parameters\":{\"a\":1}\n\nLet me know.",
        &[f()],
        "Let me know.",
    );
    case("[f(a=1)\n\nLet me know.", &[f()], "Let me know.");
    case("```tool_code\n[f(a=1)\n```\nDone.", &[f()], "\nDone.");
    case("```python\nf(a=1\n```\nDone.", &[f()], "\nDone.");
    case(
        "```json\n{\"name\":\"f\",\"parameters\":{\"a\":1}\n```\nDone.",
        &[f()],
        "\nDone.",
    );
}

#[test]
fn repair_invents_no_key_from_what_follows() {
    let cases = [
        (
            "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}\n```\nDone.",
            json!({"name": "get_weather", "arguments": {"city": "Paris"}}),
        ),
        (
            "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par\n```\nDone.",
            json!({"name": "get_weather", "arguments": {"city": "Par"}}),
        ),
        (
            "{\"name\":\"f\",\"arguments\":{\"a\":1}\n\nLet me know.",
            json!({"name": "f", "arguments": {"a": 1}}),
        ),
        // Outside a fence, a fence in a string is content.
        ("{\"a\": \"x\n```\ny\"}", json!({"a": "x\n```\ny"})),
    ];
    for (input, want) in cases {
        for chunk in [0, 1, 2, 3, 7] {
            let r = repair_document(input.as_bytes(), chunk).expect("a JSON value");
            let got: Value = serde_json::from_str(&r.json).expect("repaired JSON");
            assert_eq!(got, want, "{input:?} in {chunk}-byte chunks");
            assert!(!r.truncated, "{input:?}: closed, not cut off");
        }
    }
}
