//! A frame lost inside a streamed call is never hidden: an SSE line the
//! framing ignores (a `data:` prefix lost in transit) is a `lost_frame`
//! diagnostic, and every call open at that moment carries a `lost_frame`
//! repair, whether or not the remaining fragments happen to join into JSON;
//! a frame over the size limit inside a call is tied to that call the same
//! way. The same for any chunking.

mod common;

use common::fuzz_checks::{check_call_deltas, decode_split};
use serde_json::json;
use toolstream::frame::FrameLimits;
use toolstream::provider::DecodeOptions;
use toolstream::{DiagnosticKind, ErrorKind, Event, Parsed, RepairKind};

fn chunk(delta: serde_json::Value, finish: Option<&str>) -> String {
    let v = json!({"id": "c1", "object": "chat.completion.chunk", "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {v}\n\n")
}

fn args(frag: &str) -> serde_json::Value {
    json!({"tool_calls": [{"index": 0, "function": {"arguments": frag}}]})
}

/// An OpenAI stream of one call whose arguments come in `frags`; the
/// fragment at `lost` loses its `data: ` prefix.
fn stream(frags: &[&str], lost: usize) -> Vec<u8> {
    let mut s = chunk(
        json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_a", "type": "function",
            "function": {"name": "get_weather", "arguments": ""}}]}),
        None,
    );
    for (i, f) in frags.iter().enumerate() {
        let c = chunk(args(f), None);
        s.push_str(if i == lost { &c["data: ".len()..] } else { &c });
    }
    s.push_str(&chunk(json!({}), Some("tool_calls")));
    s.push_str("data: [DONE]\n\n");
    s.into_bytes()
}

/// Decodes whole, byte by byte and in 7-byte reads; all agree; returns the
/// whole run's events.
fn decode_all(input: &[u8], opts: &DecodeOptions) -> Vec<Event> {
    let whole = decode_split(input, &[], opts);
    check_call_deltas(&whole);
    let want = Parsed::from_events(whole.clone());
    for n in [1, 7] {
        let cuts: Vec<usize> = (1..)
            .map(|k| k * n)
            .take_while(|&s| s < input.len())
            .collect();
        let split = decode_split(input, &cuts, opts);
        check_call_deltas(&split);
        let got = Parsed::from_events(split);
        assert_eq!(
            (got.text, got.calls),
            (want.text.clone(), want.calls.clone()),
            "{n}-byte reads"
        );
    }
    whole
}

fn lost_diagnostics(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::Diagnostic {
                    kind: DiagnosticKind::LostFrame,
                    ..
                }
            )
        })
        .count()
}

/// The fragments left join into valid JSON (`, "days": 3` was lost): the
/// call is still flagged. Before, it came out clean.
#[test]
fn a_lost_fragment_that_leaves_valid_json_is_flagged() {
    let input = stream(&["{\"city\": \"Tokyo\"", ", \"days\": 3", "}"], 1);
    let events = decode_all(&input, &DecodeOptions::default());
    assert_eq!(lost_diagnostics(&events), 1);
    let calls = Parsed::from_events(events).calls;
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].arguments, r#"{"city": "Tokyo"}"#);
    assert!(
        calls[0]
            .repairs
            .iter()
            .any(|r| r.kind == RepairKind::LostFrame),
        "{:?}",
        calls[0]
    );
}

/// The fragments left do not join (`{"city": ` was lost): rebuilt as
/// `{"value": "Tokyo"}` with the repairs that say so, never clean.
#[test]
fn fragments_that_do_not_join_carry_repairs() {
    let input = stream(&["{\"city\": ", "\"Tokyo\"", "}"], 0);
    let events = decode_all(&input, &DecodeOptions::default());
    assert_eq!(lost_diagnostics(&events), 1);
    let c = &Parsed::from_events(events).calls[0];
    let kinds: Vec<RepairKind> = c.repairs.iter().map(|r| r.kind).collect();
    assert!(kinds.contains(&RepairKind::LostFrame), "{c:?}");
    assert!(kinds.contains(&RepairKind::NonObjectArguments), "{c:?}");
}

/// A frame over `max_frame_bytes` inside a call: an error event, and the
/// call it was in carries the repair.
#[test]
fn an_over_limit_frame_inside_a_call_is_tied_to_it() {
    let long = format!("\"{}\"", "x".repeat(400));
    let input = stream(&["{\"city\": ", &long, ", \"days\": 3}"], usize::MAX);
    let opts = DecodeOptions {
        frame_limits: FrameLimits {
            max_frame_bytes: 300,
        },
        ..DecodeOptions::default()
    };
    let events = decode_all(&input, &opts);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Error {
            kind: ErrorKind::Limit,
            ..
        }
    )));
    let c = &Parsed::from_events(events).calls[0];
    assert!(
        c.repairs.iter().any(|r| r.kind == RepairKind::LostFrame),
        "{c:?}"
    );
}

/// A clean stream has neither; a line the framing ignores outside any
/// call is a diagnostic and touches no call.
#[test]
fn clean_streams_and_lines_outside_calls() {
    let input = stream(&["{\"city\": ", "\"Tokyo\"}"], usize::MAX);
    let events = decode_all(&input, &DecodeOptions::default());
    assert_eq!(lost_diagnostics(&events), 0);
    assert!(Parsed::from_events(events).calls[0].repairs.is_empty());
    let mut input = b"retry: 10\nfoo: bar\n\n".to_vec();
    input.extend(stream(&["{}"], usize::MAX));
    let events = decode_all(&input, &DecodeOptions::default());
    assert_eq!(lost_diagnostics(&events), 1);
    assert!(Parsed::from_events(events).calls[0].repairs.is_empty());
}

/// `--reparse-content`: the repairs of a call found in the content are in
/// stream positions, like its spans — at the start of the frame whose
/// content held the repaired byte (they were offsets in the content text).
#[test]
fn reparsed_content_repairs_are_stream_positions() {
    let pieces = [
        "Sure. <tool_call>{\"name\": \"f\", ",
        "\"arguments\": {'a': 1,}}",
        "</tool_call>",
    ];
    let mut input = String::new();
    let mut starts = Vec::new();
    for p in pieces {
        starts.push(input.len() as u64);
        input.push_str(&chunk(json!({"content": p}), None));
    }
    input.push_str(&chunk(json!({}), Some("stop")));
    input.push_str("data: [DONE]\n\n");
    let opts = DecodeOptions::default().with_reparse(toolstream::Config::default());
    let events = decode_all(input.as_bytes(), &opts);
    let calls = Parsed::from_events(events).calls;
    assert_eq!(calls.len(), 1);
    let c = &calls[0];
    assert!(!c.repairs.is_empty(), "{c:?}");
    for r in &c.repairs {
        assert_eq!(
            r.offset, starts[1],
            "{r:?} not at the second frame ({starts:?})"
        );
    }
}
