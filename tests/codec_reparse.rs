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
    let Some(dir) = captures_dir() else {
        return;
    };
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
    // The line breaks after `</think>` are markup, not text (#42 §4).
    let breaks = plain.text.split_once("</think>").map_or(0, |(_, r)| {
        r.len() - r.trim_start_matches(['\n', '\r']).len()
    });
    assert_eq!(
        s.thinking.len() + s.text.len() + "</think>".len() + breaks,
        plain.text.len()
    );
}

#[test]
fn anthropic_text_is_reparsed_too() {
    let Some(dir) = captures_dir() else {
        return;
    };
    let bytes = std::fs::read(dir.join("anthropic_tool_use.anthropic-sdk-python.sse")).unwrap();
    let plain = summarize(&decode(&bytes, &DecodeOptions::default()));
    let (s, _) = run(&bytes, &opts());
    // No in-band calls there: re-parsing changes nothing.
    assert_eq!(strip_offsets(s), strip_offsets(plain));
}

/// Native pieces (`tool_calls` JSON) of the calls `a {"x": 1}` and `b {"y": 2}`.
const NATIVE: [&[&str]; 2] = [
    &[
        r#"[{"index":0,"id":"call_a","type":"function","function":{"name":"a","arguments":""}}]"#,
        r#"[{"index":0,"function":{"arguments":"{\"x\": "}}]"#,
        r#"[{"index":0,"function":{"arguments":"1}"}}]"#,
    ],
    &[
        r#"[{"index":1,"id":"call_b","type":"function","function":{"name":"b","arguments":"{\"y\""}}]"#,
        r#"[{"index":1,"function":{"arguments":": 2}"}}]"#,
    ],
];
/// The same calls written in the content.
const CONTENT: [&[&str]; 2] = [
    &[
        "<tool_call>{\"name\": \"a\", ",
        "\"arguments\": {\"x\":1}}",
        "</tool_call>",
    ],
    &[
        "<tool_call>{\"name\": \"b\", \"arguments\": ",
        "{\"y\":2}}</tool_call>",
    ],
];

/// One interleaving of the native and content pieces, driven by `choices`:
/// natives interleaved or not, content order, and per delta whether it
/// carries a native piece, a content piece, or both at once.
fn interleaving(choices: &[u8]) -> Vec<u8> {
    let mut it = choices.iter().copied().cycle();
    let mut pick = move |n: u8| it.next().unwrap_or(0) % n;
    let mut nat: Vec<&str> = Vec::new();
    let (mut i, mut j) = (0, 0);
    let interleave = pick(2) == 0;
    while i < NATIVE[0].len() || j < NATIVE[1].len() {
        let a = if i >= NATIVE[0].len() {
            false
        } else if !interleave || i == 0 || j >= NATIVE[1].len() {
            true
        } else {
            pick(2) == 0
        };
        if a {
            nat.push(NATIVE[0][i]);
            i += 1;
        } else {
            nat.push(NATIVE[1][j]);
            j += 1;
        }
    }
    let con: Vec<&str> = if pick(2) == 0 {
        CONTENT[0].iter().chain(CONTENT[1]).copied().collect()
    } else {
        CONTENT[1].iter().chain(CONTENT[0]).copied().collect()
    };
    let mut deltas: Vec<(&str, Option<&str>)> = Vec::new();
    let (mut p, mut q) = (0, 0);
    while p < nat.len() || q < con.len() {
        match pick(3) {
            2 if p < nat.len() && q < con.len() => {
                deltas.push((con[q], Some(nat[p])));
                p += 1;
                q += 1;
            }
            0 if p < nat.len() => {
                deltas.push(("", Some(nat[p])));
                p += 1;
            }
            _ if q < con.len() => {
                deltas.push((con[q], None));
                q += 1;
            }
            _ => {
                deltas.push(("", Some(nat[p])));
                p += 1;
            }
        }
    }
    openai(&deltas, "tool_calls")
}

#[test]
fn interleaved_native_and_content_copies_are_kept_once() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut native_kept = 0;
    for _ in 0..300 {
        let choices: Vec<u8> = (0..32)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (seed >> 33) as u8
            })
            .collect();
        let input = interleaving(&choices);
        let (s, events) = run(&input, &opts());
        for n in [7, 64] {
            assert_eq!(decode_chunked(&input, n, &opts()), events, "{n}-byte reads");
        }
        let names: Vec<&str> = s.calls.iter().map(|c| c.name.as_str()).collect();
        assert!(
            names == ["a", "b"] || names == ["b", "a"],
            "{names:?} in {}",
            String::from_utf8_lossy(&input)
        );
        let skipped = events
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    Event::Diagnostic {
                        kind: DiagnosticKind::SkippedContent,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(skipped, 2);
        assert_eq!(s.finish, vec!["tool_calls"]);
        native_kept += s
            .calls
            .iter()
            .filter(|c| c.id == "call_a" || c.id == "call_b")
            .count();
    }
    // Some interleavings put a native copy first (or in one delta with the
    // content copy); the server's id is then the one kept.
    assert!(native_kept > 0);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

    /// Any interleaving, split at any points, keeps each call once.
    #[test]
    fn interleaved_copies_at_any_split(
        choices in proptest::collection::vec(proptest::prelude::any::<u8>(), 32),
        cuts in proptest::collection::vec(0usize..2000, 0..40),
    ) {
        let input = interleaving(&choices);
        let mut cuts = cuts;
        cuts.sort_unstable();
        let whole = decode_chunked(&input, input.len(), &opts());
        let split = decode_split(&input, &cuts, &opts());
        check_contracts(&split);
        proptest::prop_assert_eq!(&split, &whole);
        let mut names: Vec<String> = summarize(&split).calls.into_iter().map(|c| c.name.to_string()).collect();
        names.sort();
        proptest::prop_assert_eq!(names, vec!["a".to_string(), "b".to_string()]);
    }
}

#[test]
fn a_call_in_content_and_tool_calls_of_one_delta_keeps_the_native_copy() {
    // llama.cpp-style leak: the same delta carries the markup and the parsed call.
    let native = r#"[{"index":0,"id":"call_srv","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]"#;
    let content =
        "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\"}}</tool_call>";
    let input = openai(
        &[("Checking.", None), (content, Some(native))],
        "tool_calls",
    );
    let (s, events) = run(&input, &opts());
    for n in [7, 64] {
        assert_eq!(decode_chunked(&input, n, &opts()), events, "{n}-byte reads");
    }
    assert_eq!(s.calls.len(), 1, "{:?}", s.calls);
    assert_eq!(s.calls[0].id, "call_srv");
    assert_eq!(s.calls[0].index, 0);
    assert_eq!(s.calls[0].arguments, r#"{"city": "Paris"}"#);
    assert_eq!(s.text, "Checking.");
    // The content copy is reported at the frame that carried it.
    let delta_frame = events
        .iter()
        .find_map(|e| match e {
            Event::ToolStart { span, .. } => Some(*span),
            _ => None,
        })
        .unwrap();
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Diagnostic { kind: DiagnosticKind::SkippedContent, span, .. } if *span == delta_frame
    )));
}
