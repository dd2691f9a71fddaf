//! GLM-4.5 / 4.6 / 4.7 / 5.

use crate::common::check_all;
use crate::util::{args, auto, kinds, weather_tools};
use serde_json::json;
use toolstream::{Config, Dialect, RepairKind};

const GLM45: &str =
    "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>";
const GLM47: &str =
    "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>";

#[test]
fn catalogue_examples() {
    for input in [GLM45, GLM47] {
        for cfg in [
            auto(),
            Config::default().with_dialects(vec![Dialect::Glm]),
            weather_tools(),
        ] {
            let p = check_all(input.as_bytes(), &cfg);
            assert_eq!(p.calls.len(), 1, "{input:?}");
            assert_eq!(p.calls[0].name, "get_weather");
            assert_eq!(p.calls[0].arguments, r#"{"city": "Beijing"}"#);
            assert!(p.calls[0].repairs.is_empty());
            assert!(!p.calls[0].truncated);
        }
    }
}

#[test]
fn zero_arg_call() {
    let p = check_all(b"<tool_call>get_time</tool_call>", &auto());
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.calls[0].name, "get_time");
    assert_eq!(p.calls[0].arguments, "{}");
}

#[test]
fn typed_and_untyped_values() {
    let p = check_all(
        b"<tool_call>calculate\n<arg_key>x</arg_key>\n<arg_value>2.75</arg_value>\n<arg_key>y</arg_key>\n<arg_value>42</arg_value>\n<arg_key>enabled</arg_key>\n<arg_value>true</arg_value>\n<arg_key>items</arg_key>\n<arg_value>[\"a\", \"b\", \"c\"]</arg_value>\n</tool_call>",
        &auto(),
    );
    assert_eq!(
        args(&p, 0),
        json!({"x": 2.75, "y": 42, "enabled": true, "items": ["a", "b", "c"]})
    );
    let p = check_all(
        b"<tool_call>get_weather<arg_key>city</arg_key><arg_value>42</arg_value><arg_key>days</arg_key><arg_value>\"3\"</arg_value></tool_call>",
        &weather_tools(),
    );
    assert_eq!(args(&p, 0), json!({"city": "42", "days": 3}));
    assert_eq!(kinds(&p, 0), vec![RepairKind::TypeCoercion]);
}

#[test]
fn values_keep_their_whitespace_and_markup() {
    let p = check_all(
        "<tool_call>test-function\n<arg_key>multiline</arg_key>\n<arg_value>line1\n\tindented line2\nline3</arg_value>\n<arg_key>message</arg_key>\n<arg_value>a < b and c > d; <>&<>&</arg_value>\n<arg_key>城市</arg_key>\n<arg_value>北京 🌟</arg_value>\n</tool_call>".as_bytes(),
        &auto(),
    );
    assert_eq!(
        args(&p, 0),
        json!({"multiline": "line1\n\tindented line2\nline3", "message": "a < b and c > d; <>&<>&", "城市": "北京 🌟"})
    );
}

#[test]
fn parallel_calls_and_reasoning() {
    let p = check_all(
        b"plan</think><tool_call>first<arg_key>a</arg_key><arg_value>1</arg_value></tool_call><tool_call>second<arg_key>b</arg_key><arg_value>2</arg_value></tool_call>",
        &auto().with_prefill("<think>"),
    );
    assert_eq!(p.thinking, "plan");
    assert_eq!(p.calls.len(), 2);
    assert_eq!(args(&p, 0), json!({"a": 1}));
    assert_eq!(p.calls[1].name, "second");
    assert_eq!(args(&p, 1), json!({"b": 2}));
}

#[test]
fn name_followed_by_a_space() {
    // GLM-4.5-Air through some servers (ikawrakow/ik_llama.cpp discussion #753).
    let p = check_all(
        b"Let me look: <tool_call>ls <arg_key>dirPath</arg_key> <arg_value>backend</arg_value> </tool_call>",
        &auto(),
    );
    assert_eq!(p.calls[0].name, "ls");
    assert_eq!(args(&p, 0), json!({"dirPath": "backend"}));
    assert_eq!(p.text, "Let me look: ");
}

#[test]
fn truncated_variants() {
    let p = check_all(b"<tool_call>write\n<arg_key>path</arg_key>\n<arg_value>out.txt</arg_value>\n<arg_key>content</arg_key>\n<arg_value>partial", &auto());
    assert!(p.calls[0].truncated);
    assert_eq!(
        args(&p, 0),
        json!({"path": "out.txt", "content": "partial"})
    );
    let p = check_all(
        b"<tool_call>shell\n<arg_key>command</arg_key>\n<arg_value>echo unsafe</arg_value>",
        &auto(),
    );
    assert!(
        p.calls[0].truncated,
        "a call without </tool_call> at the end is incomplete"
    );
    assert_eq!(args(&p, 0), json!({"command": "echo unsafe"}));
    let p = check_all(b"<tool_call>write\n<arg_key>path</arg_key>", &auto());
    assert!(p.calls[0].truncated);
    assert_eq!(args(&p, 0), json!({"path": null}));
    let p = check_all(b"<tool_call>write\n<arg_key>pa", &auto());
    assert_eq!(p.calls[0].arguments, "{}");
    assert!(kinds(&p, 0).contains(&RepairKind::DroppedKey));
    // Name only, with the GLM-4.5 newline: a truncated call.
    let p = check_all(b"<tool_call>get_weather\n", &auto());
    assert_eq!(p.calls.len(), 1);
    assert!(p.calls[0].truncated);
    for k in 0..GLM45.len() {
        check_all(&GLM45.as_bytes()[..k], &auto());
    }
}

#[test]
fn delimiters_inside_values() {
    // A literal `</arg_value>` not followed by `<arg_key>` / `</tool_call>` is content.
    let p = check_all(
        b"<tool_call>write<arg_key>content</arg_key><arg_value>x</arg_value> y</arg_value></tool_call>",
        &auto(),
    );
    assert_eq!(args(&p, 0), json!({"content": "x</arg_value> y"}));
    // A missing `</arg_value>` is inferred at the next `<arg_key>`.
    let p = check_all(
        b"<tool_call>f<arg_key>a</arg_key><arg_value>1<arg_key>b</arg_key><arg_value>2</arg_value></tool_call>",
        &auto(),
    );
    assert_eq!(args(&p, 0), json!({"a": 1, "b": 2}));
    assert!(kinds(&p, 0).contains(&RepairKind::MissingCloseTag));
    // A missing `</arg_value>` before `</tool_call>` at the end: one repair.
    let p = check_all(
        b"<tool_call>f<arg_key>a</arg_key><arg_value>1</tool_call>",
        &auto(),
    );
    assert_eq!(args(&p, 0), json!({"a": 1}));
    assert!(!p.calls[0].truncated);
    assert_eq!(kinds(&p, 0), [RepairKind::MissingCloseTag]);
    // Keys may hold markup-like text.
    let p = check_all(
        b"<tool_call>f\n<arg_key>param<1></arg_key>\n<arg_value>v</arg_value>\n</tool_call>",
        &auto(),
    );
    assert_eq!(args(&p, 0), json!({"param<1>": "v"}));
}

#[test]
fn malformed_key_value_order() {
    let p = check_all(
        b"<tool_call>\nfunction_name\n<arg_key>key1</arg_key>\n<arg_key>key2</arg_key>\n<arg_value>val2</arg_value>\n</tool_call>",
        &auto(),
    );
    assert_eq!(args(&p, 0), json!({"key1": null, "key2": "val2"}));
    assert!(kinds(&p, 0).contains(&RepairKind::MissingValue));
}

#[test]
fn prose_after_the_tag_is_text() {
    for input in [
        &b"Use the <tool_call> tag to call tools."[..],
        b"<tool_call>hello world</tool_call>",
        b"<tool_call>x(1)</tool_call>",
    ] {
        let p = check_all(input, &auto());
        assert!(p.calls.is_empty(), "{:?}", String::from_utf8_lossy(input));
        assert_eq!(p.text.as_bytes(), input);
    }
}

#[test]
fn json_body_after_the_name() {
    let p = check_all(
        b"<tool_call>get_weather\n{\"city\": \"Paris\"}\n</tool_call>",
        &auto(),
    );
    assert_eq!(p.calls[0].name, "get_weather");
    assert_eq!(args(&p, 0), json!({"city": "Paris"}));
}
