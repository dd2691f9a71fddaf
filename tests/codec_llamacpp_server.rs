//! Real streams recorded from `python -m llama_cpp.server` (llama-cpp-python
//! 0.3.36, SmolLM2-135M and Gemma-3-270M; `corpus/streams/`, provenance beside
//! each file): decoded whole and in small reads with auto-detection, they give
//! the same calls and text, and the forced tool calls come out right.
//!
//! This server mirrors `tool_calls[0]` into the legacy `function_call` field
//! of every delta; reading both doubled every argument fragment.
//!
//! `/v1/completions` (`"object": "text_completion"`) carries its text in
//! `choices[].text`, which is content like a chat delta's `content`.

use std::path::Path;

use serde_json::json;
use toolstream::provider::{decode_chunks, DecodeOptions};
use toolstream::{Event, FinishReason, Parsed};

fn decode(name: &str, chunk: usize) -> Parsed {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/streams")
        .join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let chunks: Vec<&[u8]> = if chunk == 0 {
        vec![&bytes[..]]
    } else {
        bytes.chunks(chunk).collect()
    };
    let events: Vec<Event> = decode_chunks(chunks, &DecodeOptions::default());
    Parsed::from_events(events)
}

fn same_at_every_read_size(name: &str) -> Parsed {
    let whole = decode(name, 0);
    for n in [1, 7, 64] {
        let p = decode(name, n);
        assert_eq!(p.text, whole.text, "{name}: text differs at {n}-byte reads");
        assert_eq!(
            p.calls, whole.calls,
            "{name}: calls differ at {n}-byte reads"
        );
    }
    whole
}

#[test]
fn forced_tool_call_smollm2() {
    let p = same_at_every_read_size("smollm2-chat-tools-forced.sse");
    assert_eq!(p.calls.len(), 1);
    let c = &p.calls[0];
    assert_eq!(c.name, "get_weather");
    assert_eq!(c.arguments_value().unwrap(), json!({"city": "Paris"}));
    assert!(!c.truncated);
    assert!(
        c.id.starts_with("call__0_get_weather"),
        "the server's id is kept: {}",
        c.id
    );
}

#[test]
fn forced_tool_call_cut_by_max_tokens_is_truncated() {
    // The server reports finish_reason "tool_calls", but max_tokens cut the
    // arguments mid-string: the call must not look clean.
    let p = same_at_every_read_size("gemma3-chat-tools-forced.sse");
    assert_eq!(p.calls.len(), 1);
    let c = &p.calls[0];
    assert_eq!(c.name, "create_event");
    assert!(c.truncated);
    let args = c.arguments_value().unwrap();
    assert_eq!(args["title"], "Dental Services");
}

#[test]
fn plain_chat_streams_are_text() {
    for name in [
        "smollm2-chat-plain.sse",
        "smollm2-chat-tools-auto.sse",
        "gemma3-chat-plain.sse",
        "smollm2-chat-hermes-prompt-truncated.sse",
    ] {
        let p = same_at_every_read_size(name);
        assert!(p.calls.is_empty(), "{name}: no call expected");
        assert!(!p.text.is_empty(), "{name}: text expected");
    }
}

#[test]
fn legacy_completions_stream_is_text() {
    let name = "gemma3-completions-plain.sse";
    let p = same_at_every_read_size(name);
    // The text is every chunk's `choices[0].text`, read here independently.
    let raw = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpus/streams")
            .join(name),
    )
    .unwrap();
    let mut expected = String::new();
    for line in String::from_utf8(raw).unwrap().lines() {
        if let Some(json) = line.strip_prefix("data: {") {
            let v: serde_json::Value = serde_json::from_str(&format!("{{{json}")).unwrap();
            assert_eq!(v["object"], "text_completion");
            expected.push_str(v["choices"][0]["text"].as_str().unwrap());
        }
    }
    assert_eq!(
        expected,
        " the capital of France. It is located in the center of Europe and has a population of 10 million people."
    );
    assert_eq!(p.text, expected);
    assert!(p.calls.is_empty());
    // max_tokens 24 (provenance `request_body`) cut it: finish_reason "length".
    let finishes: Vec<&FinishReason> = p
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Finish { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(finishes, vec![&FinishReason::Length]);
    assert!(!p.events.iter().any(|e| matches!(e, Event::Error { .. })));
    // With content re-parsing on, plain text stays text.
    let bytes = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpus/streams")
            .join(name),
    )
    .unwrap();
    let opts = DecodeOptions::default().with_reparse(toolstream::Config::default());
    for n in [1, 7, 64, bytes.len()] {
        let r = Parsed::from_events(decode_chunks(bytes.chunks(n), &opts));
        assert_eq!(r.text, expected, "re-parsed, {n}-byte reads");
        assert!(r.calls.is_empty());
    }
}
