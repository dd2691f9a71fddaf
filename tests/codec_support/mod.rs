//! Helpers shared by the `codec_*` integration tests.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::Value;
use toolstream::provider::{decode_chunks, DecodeOptions};
use toolstream::{Event, FinishReason, ToolCall};

/// The lookup of `../shared/` (skipped with a message when absent).
#[path = "../common/shared.rs"]
pub(crate) mod shared;

/// The shared captures directory (`$TOOLSTREAM_CAPTURES`, else
/// `../shared/captures`); `None` (the test reports a skip) when absent.
pub(crate) fn captures_dir() -> Option<PathBuf> {
    shared::path_or_env("TOOLSTREAM_CAPTURES", "captures", "INDEX.json")
}

/// One capture's bytes; `None` (the test reports a skip) when the captures
/// are absent.
pub(crate) fn capture_bytes(name: &str) -> Option<Vec<u8>> {
    let p = captures_dir()?.join(name);
    Some(std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

/// Every capture with an `expected_summary`: (file name, bytes, provenance);
/// `None` (the test reports a skip) when the captures are absent.
pub(crate) fn captures() -> Option<Vec<(String, Vec<u8>, Value)>> {
    let dir = captures_dir()?;
    let mut out = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    for n in names {
        if !n.ends_with(".provenance.json") {
            continue;
        }
        let prov: Value = serde_json::from_slice(&std::fs::read(dir.join(&n)).unwrap()).unwrap();
        if prov.get("expected_summary").is_none() {
            continue;
        }
        let file = prov["file"].as_str().unwrap().to_string();
        let bytes = std::fs::read(dir.join(&file)).unwrap();
        out.push((file, bytes, prov));
    }
    Some(out)
}

/// Decodes `input` split at the given offsets.
pub(crate) fn decode_split(input: &[u8], splits: &[usize], opts: &DecodeOptions) -> Vec<Event> {
    let mut chunks = Vec::new();
    let mut last = 0;
    for &s in splits {
        let s = s.min(input.len());
        if s > last {
            chunks.push(&input[last..s]);
            last = s;
        }
    }
    chunks.push(&input[last..]);
    decode_chunks(chunks, opts)
}

/// Decodes `input` in `n`-byte reads.
pub(crate) fn decode_chunked(input: &[u8], n: usize, opts: &DecodeOptions) -> Vec<Event> {
    decode_chunks(input.chunks(n.max(1)), opts)
}

/// The stable name of a finish reason.
pub(crate) fn reason_name(r: &FinishReason) -> String {
    match r {
        FinishReason::Stop => "stop".into(),
        FinishReason::ToolCalls => "tool_calls".into(),
        FinishReason::Length => "length".into(),
        FinishReason::ContentFilter => "content_filter".into(),
        FinishReason::Error => "error".into(),
        FinishReason::Other(s) => s.clone(),
        _ => format!("{r:?}"),
    }
}

/// Asserts the decoder contracts: call events in order, deltas add up to the
/// arguments, arguments are JSON objects, indexes count 0, 1, 2… as calls
/// start, every call ends, and the stream ends with a `Finish`.
pub(crate) fn check_contracts(events: &[Event]) {
    let mut open: HashMap<usize, Vec<u8>> = HashMap::new();
    let mut next = 0usize;
    let mut ended = 0usize;
    for e in events {
        match e {
            Event::ToolStart { index, .. } => {
                assert_eq!(*index, next, "call indexes must count up as calls start");
                next += 1;
                assert!(open.insert(*index, Vec::new()).is_none());
            }
            Event::ToolArgs { index, delta, .. } => {
                open.get_mut(index)
                    .expect("ToolArgs outside its call")
                    .extend_from_slice(delta);
            }
            Event::ToolEnd { call, .. } => {
                let buf = open.remove(&call.index).expect("ToolEnd without ToolStart");
                assert_eq!(
                    String::from_utf8_lossy(&buf),
                    call.arguments,
                    "deltas must add up to the arguments"
                );
                let v: Value = serde_json::from_str(&call.arguments)
                    .unwrap_or_else(|e| panic!("arguments not JSON ({e}): {}", call.arguments));
                assert!(v.is_object(), "arguments not an object: {}", call.arguments);
                ended += 1;
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "calls left open: {:?}", open.keys());
    assert_eq!(ended, next);
    // Every stream reports how it ended. A frame that arrives (corrupted)
    // after the provider's terminal event is reported as an error after it.
    let last_finish = events
        .iter()
        .rposition(|e| matches!(e, Event::Finish { .. }));
    let Some(last_finish) = last_finish else {
        panic!("the stream must report a Finish: {:?}", events.last());
    };
    assert!(
        events[last_finish + 1..]
            .iter()
            .all(|e| matches!(e, Event::Error { .. } | Event::Diagnostic { .. })),
        "only errors and diagnostics may follow the last Finish: {:?}",
        &events[last_finish + 1..]
    );
}

/// What a stream amounts to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Summary {
    pub(crate) text: String,
    pub(crate) thinking: String,
    pub(crate) calls: Vec<ToolCall>,
    pub(crate) finish: Vec<String>,
    pub(crate) errors: Vec<String>,
}

pub(crate) fn summarize(events: &[Event]) -> Summary {
    let mut text = Vec::new();
    let mut thinking = Vec::new();
    let mut calls = Vec::new();
    let mut finish = Vec::new();
    let mut errors = Vec::new();
    for e in events {
        match e {
            Event::Text { text: t, .. } => text.extend_from_slice(t),
            Event::Thinking { text: t, .. } => thinking.extend_from_slice(t),
            Event::ToolEnd { call, .. } => calls.push((**call).clone()),
            Event::Finish { reason, .. } => finish.push(reason_name(reason)),
            Event::Error { kind, message, .. } => errors.push(format!("{kind:?}: {message}")),
            _ => {}
        }
    }
    Summary {
        text: String::from_utf8(text).expect("text is UTF-8"),
        thinking: String::from_utf8(thinking).expect("thinking is UTF-8"),
        calls,
        finish,
        errors,
    }
}

/// The summary with repair offsets zeroed (they are byte offsets in the input).
pub(crate) fn strip_offsets(mut s: Summary) -> Summary {
    for c in &mut s.calls {
        for r in &mut c.repairs {
            r.offset = 0;
        }
    }
    s
}
