//! OpenAI-compatible server deviations that the captures do not cover,
//! written as minimal streams (STREAMS.md §2.5), each decoded at several
//! chunkings; plus interleaved calls through every encoder.

mod codec_support;

use codec_support::*;
use serde_json::{json, Value};
use toolstream::encode::{encode, normalize, EncodeOptions, Target};
use toolstream::provider::{decode, DecodeOptions};
use toolstream::{Event, RepairKind};

fn sse(chunks: &[Value]) -> Vec<u8> {
    let mut s = String::new();
    for c in chunks {
        s.push_str(&format!("data: {c}\n\n"));
    }
    s.push_str("data: [DONE]\n\n");
    s.into_bytes()
}

fn delta(d: Value) -> Value {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": d, "finish_reason": null}]})
}

fn finish(reason: &str) -> Value {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

fn run(input: &[u8]) -> (Summary, Vec<Event>) {
    let opts = DecodeOptions::default();
    let whole = decode(input, &opts);
    check_contracts(&whole);
    for n in [1, 5, 33] {
        assert_eq!(decode_chunked(input, n, &opts), whole, "{n}-byte reads");
    }
    (summarize(&whole), whole)
}

fn calls(s: &Summary) -> Vec<(usize, &str, &str, Value)> {
    s.calls
        .iter()
        .map(|c| {
            (
                c.index,
                c.id.as_str(),
                c.name.as_str(),
                serde_json::from_str(&c.arguments).unwrap(),
            )
        })
        .collect()
}

#[test]
fn old_ollama_sends_every_call_at_index_0_with_new_ids() {
    let input = sse(&[
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "write_file", "arguments": "{\"p\": 1}"}}]}),
        ),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_b", "type": "function", "function": {"name": "write_file", "arguments": "{\"p\": 2}"}}]}),
        ),
        finish("tool_calls"),
    ]);
    let (s, _) = run(&input);
    assert_eq!(
        calls(&s),
        vec![
            (0, "call_a", "write_file", json!({"p": 1})),
            (1, "call_b", "write_file", json!({"p": 2}))
        ]
    );
}

#[test]
fn old_llama_cpp_repeats_the_name_on_every_delta() {
    let input = sse(&[
        delta(
            json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "add_two_numbers", "arguments": "{\"a\": "}}]}),
        ),
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"name": "add_two_numbers", "arguments": "1, \"b\": 2}"}}]}),
        ),
        finish("tool_calls"),
    ]);
    let (s, _) = run(&input);
    assert_eq!(
        calls(&s),
        vec![(0, "c", "add_two_numbers", json!({"a": 1, "b": 2}))]
    );
}

#[test]
fn vllm_name_only_start_and_remaining_arguments_with_finish() {
    let input = sse(&[
        delta(
            json!({"tool_calls": [{"index": 0, "id": "chatcmpl-tool-1", "type": "function", "function": {"name": "f"}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": ""}}]})),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"q\": \"x"}}]})),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "\"}"}}]}, "finish_reason": "stop"}]}),
    ]);
    let (s, events) = run(&input);
    assert_eq!(
        calls(&s),
        vec![(0, "chatcmpl-tool-1", "f", json!({"q": "x"}))]
    );
    // vLLM's historical `stop` after tool calls: what happened was a call.
    assert!(matches!(
        events.last(),
        Some(Event::Finish {
            reason: toolstream::FinishReason::ToolCalls,
            ..
        })
    ));
}

#[test]
fn interleaved_calls_are_keyed_by_index() {
    let input = sse(&[
        delta(
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "get_weather", "arguments": "{\"city\":"}}]}),
        ),
        delta(
            json!({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "get_time", "arguments": "{\"tz\":"}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"Paris\"}"}}]})),
        delta(json!({"content": "while waiting"})),
        delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": "\"JST\"}"}}]})),
        finish("tool_calls"),
    ]);
    let (s, events) = run(&input);
    assert_eq!(
        calls(&s),
        vec![
            (0, "a", "get_weather", json!({"city": "Paris"})),
            (1, "b", "get_time", json!({"tz": "JST"}))
        ]
    );
    // Through every encoder and back: Anthropic's sequential blocks queue
    // the second call until the first ends.
    for t in [Target::OpenAi, Target::Anthropic, Target::Responses] {
        let wire = encode(&events, t, &EncodeOptions::default());
        let back = decode(&wire, &DecodeOptions::default());
        check_contracts(&back);
        let (want, got) = (
            normalize(&events, t, None),
            normalize(&back, t, Some(&events)),
        );
        assert_eq!(want.calls, got.calls, "{t}");
        assert_eq!(want.text, got.text, "{t}");
    }
}

#[test]
fn arguments_as_an_object_and_missing_arguments() {
    let input = sse(&[
        delta(
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": {"x": [1, 2]}}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "g"}}]})),
        finish("tool_calls"),
    ]);
    let (s, _) = run(&input);
    assert_eq!(
        calls(&s),
        vec![
            (0, "a", "f", json!({"x": [1, 2]})),
            (1, "b", "g", json!({}))
        ]
    );
    assert_eq!(
        s.calls[1]
            .repairs
            .iter()
            .map(|r| r.kind)
            .collect::<Vec<_>>(),
        vec![RepairKind::MissingArguments]
    );
}

#[test]
fn malformed_arguments_are_repaired_and_listed() {
    let input = sse(&[
        delta(json!({"content": "Checking."})),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{'city': 'Paris',}"}}]}),
        ),
        finish("tool_calls"),
    ]);
    let (s, events) = run(&input);
    assert_eq!(s.calls[0].arguments, r#"{"city": "Paris"}"#);
    let kinds: Vec<RepairKind> = s.calls[0].repairs.iter().map(|r| r.kind).collect();
    assert!(
        kinds.contains(&RepairKind::SingleQuotes) && kinds.contains(&RepairKind::TrailingComma),
        "{kinds:?}"
    );
    // Repair offsets point at the frame that carried the fragment.
    let frame = events.iter().find_map(|e| match e {
        Event::ToolStart { span, .. } => Some(span.start),
        _ => None,
    });
    assert!(frame.is_some_and(|f| f > 0));
    assert!(s.calls[0].repairs.iter().all(|r| Some(r.offset) == frame));
}

#[test]
fn only_choice_zero_and_gemini_compat_signatures() {
    let input = sse(&[
        json!({"choices": [{"index": 1, "delta": {"content": "other"}}, {"index": 0, "delta": {"content": "mine"}}]}),
        delta(
            json!({"tool_calls": [{"id": "g1", "function": {"name": "f", "arguments": "{}"}, "extra_content": {"google": {"thought_signature": "sig"}}}]}),
        ),
        finish("stop"),
    ]);
    let (s, events) = run(&input);
    assert_eq!(s.text, "mine");
    assert!(events.iter().any(|e| matches!(e, Event::Diagnostic { .. })));
    assert!(events.iter().any(|e| matches!(e, Event::Opaque { kind: toolstream::OpaqueKind::ThoughtSignature, index: Some(0), data, .. } if data == "sig")));
}

/// A call whose name never comes — only `null` or `""`, like the `name:
/// null` entry that repeated another call's arguments in sglang#23071 — is no
/// call (USER-ISSUES 2.9): a `dropped_call` diagnostic carries its id and
/// arguments, and the calls around it keep consecutive indexes.
#[test]
fn a_call_without_a_name_is_no_call() {
    let input = sse(&[
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}),
        ),
        delta(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": null, "arguments": "{\"city\": "}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": "\"Paris\"}"}}]})),
        delta(
            json!({"tool_calls": [{"index": 2, "id": "call_c", "type": "function", "function": {"name": "", "arguments": "{}"}}]}),
        ),
        delta(
            json!({"tool_calls": [{"index": 3, "id": "call_d", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]}),
        ),
        finish("tool_calls"),
    ]);
    let (s, events) = run(&input);
    assert_eq!(
        calls(&s),
        vec![
            (0, "call_a", "get_weather", json!({"city": "Paris"})),
            (1, "call_d", "get_time", json!({})),
        ]
    );
    let dropped: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Diagnostic {
                kind: toolstream::DiagnosticKind::DroppedCall,
                message,
                ..
            } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(dropped.len(), 2, "{dropped:?}");
    assert!(dropped[0].contains("call_b") && dropped[0].contains(r#"{"city": "Paris"}"#));
    assert!(dropped[1].contains("call_c"));
    // No event of the dropped calls but the diagnostics.
    assert!(!events.iter().any(|e| matches!(
        e,
        Event::ToolStart { name, .. } if name.is_empty()
    )));
}
