//! Plain XML emulation inside `<tool_call>`.

use crate::common::check_all;
use crate::util::{args, auto, kinds, weather_tools};
use serde_json::json;
use toolstream::{Config, Dialect, RepairKind};

const CATALOGUE: &str = "<tool_call><name>get_weather</name><arguments><city>Paris</city><days>3</days></arguments></tool_call>";

#[test]
fn catalogue_example() {
    for cfg in [
        auto(),
        Config::default().with_dialects(vec![Dialect::XmlEmulation]),
        weather_tools(),
    ] {
        let p = check_all(CATALOGUE.as_bytes(), &cfg);
        assert_eq!(p.calls.len(), 1);
        assert_eq!(p.calls[0].name, "get_weather");
        assert_eq!(p.calls[0].arguments, r#"{"city": "Paris", "days": 3}"#);
        assert!(p.calls[0].repairs.is_empty());
        assert!(!p.calls[0].truncated);
    }
}

#[test]
fn indented_and_wrapper_variants() {
    let p = check_all(
        b"I'll check.\n<tool_call>\n  <name>get_weather</name>\n  <parameters>\n    <city>\n      New York\n    </city>\n  </parameters>\n</tool_call>\nDone.",
        &auto(),
    );
    assert_eq!(args(&p, 0), json!({"city": "New York"}));
    assert_eq!(p.text, "I'll check.\n\nDone.");
    // No wrapper around the parameters; a self-closing empty one.
    let p = check_all(b"<tool_call><name>f</name><a>1</a></tool_call>", &auto());
    assert_eq!(args(&p, 0), json!({"a": 1}));
    let p = check_all(
        b"<tool_call><name>get_time</name><arguments/></tool_call>",
        &auto(),
    );
    assert_eq!(p.calls[0].arguments, "{}");
    // JSON arguments.
    let p = check_all(
        b"<tool_call><name>f</name><arguments>{\"a\": [1, 2]}</arguments></tool_call>",
        &auto(),
    );
    assert_eq!(args(&p, 0), json!({"a": [1, 2]}));
}

#[test]
fn nested_markup_is_content_without_schema() {
    let p = check_all(b"<tool_call><name>f</name><arguments><html><b>bold</b> text</html></arguments></tool_call>", &auto());
    assert_eq!(args(&p, 0), json!({"html": "<b>bold</b> text"}));
}

#[test]
fn schema_infers_missing_closing_tags() {
    let p = check_all(
        b"<tool_call><name>get_weather</name><arguments><city>Paris<days>3</days></arguments></tool_call>",
        &weather_tools(),
    );
    assert_eq!(args(&p, 0), json!({"city": "Paris", "days": 3}));
    assert!(kinds(&p, 0).contains(&RepairKind::MissingCloseTag));
}

#[test]
fn truncated_variants() {
    let p = check_all(
        b"<tool_call><name>get_weather</name><arguments><city>Par",
        &auto(),
    );
    assert!(p.calls[0].truncated);
    assert_eq!(args(&p, 0), json!({"city": "Par"}));
    for k in 0..CATALOGUE.len() {
        check_all(&CATALOGUE.as_bytes()[..k], &auto());
    }
}

#[test]
fn name_outside_a_wrapper_is_text() {
    for input in [
        &b"<html><body><name>Alice</name><arguments>x</arguments></body></html>"[..],
        b"Her <name>Bob</name> tag.",
    ] {
        let p = check_all(input, &auto());
        assert!(p.calls.is_empty());
        assert_eq!(p.text.as_bytes(), input);
    }
}

#[test]
fn parallel_calls() {
    let input = b"<tool_call><name>a</name><arguments><x>1</x></arguments></tool_call>\n<tool_call><name>b</name><arguments><y>two</y></arguments></tool_call>";
    let p = check_all(input, &auto());
    assert_eq!(p.calls.len(), 2);
    assert_eq!(args(&p, 0), json!({"x": 1}));
    assert_eq!(p.calls[1].name, "b");
    assert_eq!(args(&p, 1), json!({"y": "two"}));
    assert_eq!(p.text, "\n");
}

#[test]
fn literal_closing_tag_in_a_value() {
    let p = check_all(
        b"<tool_call><name>f</name><arguments><code>if a </code> b</code></arguments></tool_call>",
        &auto(),
    );
    assert_eq!(args(&p, 0), json!({"code": "if a </code> b"}));
}
