//! Content re-parsing: in-band calls in text content become calls, merged
//! with native calls without duplicates.

mod codec_support;

use codec_support::*;
use toolstream::provider::{decode, DecodeOptions};
use toolstream::{Config, DiagnosticKind, Event};

/// An OpenAI-compatible stream from `(content, tool_calls JSON)` deltas.
fn openai(deltas: &[(&str, Option<&str>)], finish: &str) -> Vec<u8> {
    let mut s = String::new();
    for (content, tools) in deltas {
        let mut delta = serde_json::json!({});
        if !content.is_empty() {
            delta["content"] = serde_json::json!(content);
        }
        if let Some(t) = tools {
            delta["tool_calls"] = serde_json::from_str(t).unwrap();
        }
        s.push_str(&format!(
            "data: {}\n\n",
            serde_json::json!({"choices": [{"index": 0, "delta": delta}]})
        ));
    }
    s.push_str(&format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"{finish}\"}}]}}\n\ndata: [DONE]\n\n"));
    s.into_bytes()
}

fn opts() -> DecodeOptions {
    DecodeOptions::default().with_reparse(Config::default())
}

/// Decodes at several chunkings, checks contracts and agreement, returns the summary.
fn run(input: &[u8], opts: &DecodeOptions) -> (Summary, Vec<Event>) {
    let whole = decode_chunked(input, input.len(), opts);
    check_contracts(&whole);
    for n in [1, 3, 17] {
        let ev = decode_chunked(input, n, opts);
        check_contracts(&ev);
        assert_eq!(ev, whole, "{n}-byte reads");
    }
    (summarize(&whole), whole)
}

#[test]
fn calls_in_content_become_calls() {
    let input = openai(
        &[
            ("Let me look.\n<tool", None),
            ("_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa", None),
            ("ris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>", None),
        ],
        "stop",
    );
    let (s, _) = run(&input, &opts());
    assert_eq!(s.text, "Let me look.\n\n");
    assert_eq!(s.calls.len(), 2);
    assert_eq!(
        (
            s.calls[0].index,
            s.calls[0].name.as_str(),
            s.calls[0].arguments.as_str()
        ),
        (0, "get_weather", r#"{"city": "Paris"}"#)
    );
    assert_eq!(
        (s.calls[1].index, s.calls[1].name.as_str()),
        (1, "get_time")
    );
    assert_ne!(s.calls[0].id, s.calls[1].id);
    assert_eq!(s.finish, vec!["tool_calls"]);
    // Without re-parsing, it is all text.
    let plain = summarize(&decode(&input, &DecodeOptions::default()));
    assert!(plain.calls.is_empty());
    assert!(plain.text.contains("<tool_call>"));
    assert_eq!(plain.finish, vec!["stop"]);
}

#[test]
fn a_call_reported_natively_and_in_content_is_kept_once() {
    // The server leaked the call text into content and also parsed it.
    let native = r#"[{"index":0,"id":"call_n","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]"#;
    for order in [0, 1] {
        let deltas: Vec<(&str, Option<&str>)> = if order == 0 {
            vec![("<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\"}}</tool_call>", None), ("", Some(native))]
        } else {
            vec![("", Some(native)), ("<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\"}}</tool_call>", None)]
        };
        let (s, events) = run(&openai(&deltas, "tool_calls"), &opts());
        assert_eq!(s.calls.len(), 1, "order {order}: {:?}", s.calls);
        assert_eq!(s.calls[0].index, 0);
        assert!(events.iter().any(|e| matches!(
            e,
            Event::Diagnostic {
                kind: DiagnosticKind::SkippedContent,
                ..
            }
        )));
        if order == 1 {
            // The native call streamed first and is the one kept.
            assert_eq!(s.calls[0].id, "call_n");
        }
    }
}

#[test]
fn different_native_and_content_calls_are_both_kept() {
    let native = r#"[{"index":0,"id":"call_n","type":"function","function":{"name":"get_time","arguments":"{}"}}]"#;
    let (s, _) = run(
        &openai(&[("", Some(native)), ("<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}</tool_call>", None)], "tool_calls"),
        &opts(),
    );
    let names: Vec<(usize, &str)> = s.calls.iter().map(|c| (c.index, c.name.as_str())).collect();
    assert_eq!(names, vec![(0, "get_time"), (1, "get_weather")]);
    assert_eq!(s.calls[0].id, "call_n");
}

#[test]
fn generated_ids_do_not_collide() {
    // A native call without an id gets call_0; so would the content call.
    let native = r#"[{"index":0,"type":"function","function":{"name":"a","arguments":"{}"}}]"#;
    let (s, _) = run(
        &openai(
            &[
                ("", Some(native)),
                (
                    "<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>",
                    None,
                ),
            ],
            "tool_calls",
        ),
        &opts(),
    );
    assert_eq!(s.calls.len(), 2);
    assert_ne!(s.calls[0].id, s.calls[1].id);
}

#[test]
fn ollama_think_leak_with_a_prefill() {
    let dir = captures_dir().expect("captures");
    let bytes =
        std::fs::read(dir.join("ollama_native_parallel_tools_think_leak.rig.ndjson")).unwrap();
    let opts = DecodeOptions::default().with_reparse(Config::default().with_prefill("<think>\n"));
    let (s, _) = run(&bytes, &opts);
    // qwen3 without `think` streams its reasoning as content up to a literal `</think>`.
    assert!(s
        .thinking
        .starts_with("Okay, the user wants me to call both"));
    assert!(!s.thinking.contains("</think>"));
    assert!(!s.text.contains("</think>"));
    assert_eq!(s.calls.len(), 2);
    assert_eq!(s.calls[0].id, "call_REDACTED_1");
    let plain = summarize(&decode(&bytes, &DecodeOptions::default()));
    assert_eq!(
        s.thinking.len() + s.text.len() + "</think>".len(),
        plain.text.len()
    );
}

#[test]
fn anthropic_text_is_reparsed_too() {
    let dir = captures_dir().expect("captures");
    let bytes = std::fs::read(dir.join("anthropic_tool_use.anthropic-sdk-python.sse")).unwrap();
    let plain = summarize(&decode(&bytes, &DecodeOptions::default()));
    let (s, _) = run(&bytes, &opts());
    // No in-band calls there: re-parsing changes nothing.
    assert_eq!(strip_offsets(s), strip_offsets(plain));
}
