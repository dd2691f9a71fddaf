//! Bad input: malformed payloads, unknown event types, truncated streams,
//! oversized frames and garbage. Never a panic or a hang; errors are events;
//! open calls are closed and flagged at end of stream.

mod codec_support;

use codec_support::*;
use toolstream::frame::FrameLimits;
use toolstream::provider::{decode, decode_chunks, DecodeOptions, Provider};
use toolstream::{DiagnosticKind, ErrorKind, Event, FinishReason};

fn errors(events: &[Event]) -> Vec<(ErrorKind, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Error { kind, message, .. } => Some((*kind, message.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn malformed_payloads_are_errors_and_decoding_goes_on() {
    let input = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: not json at all\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"c\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let events = decode(input, &DecodeOptions::default());
    check_contracts(&events);
    let errs = errors(&events);
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(errs.iter().all(|(k, _)| *k == ErrorKind::Malformed));
    assert!(errs[0].1.contains("skipped"));
    // The cut-short payload is repaired and its text kept.
    assert!(errs[1].1.contains("decoded after repair"));
    let s = summarize(&events);
    assert_eq!(s.text, "abc");
    assert_eq!(s.finish, vec!["stop"]);
}

#[test]
fn unknown_event_types_are_diagnostics() {
    let input = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\nevent: brand_new\ndata: {\"type\":\"brand_new\",\"x\":1}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"hologram\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"hologram_delta\"}}\n\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let events = decode(input, &DecodeOptions::default());
    check_contracts(&events);
    let diags = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::Diagnostic {
                    kind: DiagnosticKind::UnknownEvent,
                    ..
                }
            )
        })
        .count();
    assert_eq!(diags, 3);
    assert!(errors(&events).is_empty());
    assert!(matches!(
        events.last(),
        Some(Event::Finish {
            reason: FinishReason::Stop,
            ..
        })
    ));
}

#[test]
fn provider_errors_fail_the_response() {
    let cases: [(&[u8], Provider); 4] = [
        (b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", Provider::Anthropic),
        (b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"t\",\"function\":{\"name\":\"f\",\"arguments\":\"{\"}}]}}]}\n\ndata: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n", Provider::OpenAi),
        (b"{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"done\":false}\n{\"error\":\"model crashed\"}\n", Provider::Ollama),
        (b"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]}}]}\r\n\r\ndata: {\"error\":{\"code\":500,\"message\":\"internal\",\"status\":\"INTERNAL\"}}\r\n\r\n", Provider::Gemini),
    ];
    for (input, p) in cases {
        let events = decode(input, &DecodeOptions::default());
        check_contracts(&events);
        let errs = errors(&events);
        assert_eq!(errs.len(), 1, "{p}: {errs:?}");
        assert_eq!(errs[0].0, ErrorKind::Provider, "{p}");
        assert!(
            matches!(
                events.last(),
                Some(Event::Finish {
                    reason: FinishReason::Error,
                    ..
                })
            ),
            "{p}"
        );
        for e in &events {
            if let Event::ToolEnd { call, .. } = e {
                assert!(call.truncated, "{p}: a call cut by an error is truncated");
            }
        }
        // Given explicitly, the provider decodes the same.
        assert_eq!(
            decode(input, &DecodeOptions::default().with_provider(p)),
            events,
            "{p}"
        );
    }
}

#[test]
fn truncated_captures_close_and_flag_open_calls() {
    let opts = DecodeOptions::default();
    let Some(caps) = captures() else {
        return;
    };
    for (file, bytes, prov) in caps {
        let openai_like = prov["api"]
            .as_str()
            .unwrap_or_default()
            .contains("chat.completions");
        let step = (bytes.len() / 40).max(1);
        let mut cuts: Vec<usize> = (1..bytes.len()).step_by(step).collect();
        // Right after each SSE event / NDJSON line too.
        cuts.extend(
            bytes
                .windows(2)
                .enumerate()
                .filter(|(_, w)| w == b"\n\n" || w == b"}\n")
                .map(|(i, _)| i + 2)
                .take(60),
        );
        for cut in cuts {
            let part = &bytes[..cut.min(bytes.len())];
            let events = decode_chunks(part.chunks(97), &opts);
            check_contracts(&events);
            let truncated_error = errors(&events)
                .iter()
                .any(|(k, _)| *k == ErrorKind::Truncated);
            for e in &events {
                if let Event::ToolEnd { call, span } = e {
                    if span.start == part.len() as u64 && !openai_like {
                        assert!(
                            call.truncated,
                            "{file} cut at {cut}: call {} closed at EOF must be truncated",
                            call.index
                        );
                        assert!(
                            truncated_error,
                            "{file} cut at {cut}: EOF closed a call without a Truncated error"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn oversized_frames_are_limit_errors() {
    let big = "x".repeat(5000);
    let input = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{big}\"}}}}]}}\n\ndata: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"ok\"}},\"finish_reason\":\"stop\"}}]}}\n\ndata: [DONE]\n\n"
    );
    let opts = DecodeOptions {
        frame_limits: FrameLimits {
            max_frame_bytes: 1024,
        },
        ..DecodeOptions::default()
    };
    for n in [1, 100, 100_000] {
        let events = decode_chunked(input.as_bytes(), n, &opts);
        check_contracts(&events);
        let errs = errors(&events);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].0, ErrorKind::Limit);
        assert_eq!(summarize(&events).text, "ok");
    }
    let nd = format!("{{\"message\":{{\"content\":\"{big}\"}},\"done\":false}}\n{{\"message\":{{\"content\":\"ok\"}},\"done\":true}}\n");
    let events = decode(nd.as_bytes(), &opts.clone().with_provider(Provider::Ollama));
    assert_eq!(errors(&events)[0].0, ErrorKind::Limit);
    assert_eq!(summarize(&events).text, "ok");
}

#[test]
fn argument_limits_cut_the_call() {
    let mut cfg = toolstream::Config::default();
    cfg.limits.max_args_bytes = 64;
    let long = "y".repeat(500);
    let input = format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":\"c\",\"function\":{{\"name\":\"f\",\"arguments\":\"{{\\\"a\\\": \\\"{long}\\\"}}\"}}}}]}},\"finish_reason\":\"tool_calls\"}}]}}\n\ndata: [DONE]\n\n");
    let events = decode(
        input.as_bytes(),
        &DecodeOptions {
            config: cfg,
            ..DecodeOptions::default()
        },
    );
    check_contracts(&events);
    let s = summarize(&events);
    assert!(s.calls[0].truncated);
    assert!(s.calls[0].arguments.len() < 100);
    assert!(s.calls[0]
        .repairs
        .iter()
        .any(|r| r.kind == toolstream::RepairKind::LimitExceeded));
}

#[test]
fn empty_and_garbage_streams() {
    let events = decode(b"", &DecodeOptions::default());
    assert_eq!(
        errors(&events),
        vec![(
            ErrorKind::Truncated,
            "stream ended before any event".to_string()
        )]
    );
    assert!(matches!(
        events.last(),
        Some(Event::Finish {
            reason: FinishReason::Error,
            ..
        })
    ));
    for input in [
        &b"\x00\x01\x02\x03garbage"[..],
        b"\xff\xfe\xfd",
        b"hello world\n\n",
        b"{{{{{{",
        b"[1,2,3]\n",
        b"data: [DONE]",
    ] {
        let events = decode(input, &DecodeOptions::default());
        check_contracts(&events);
        for p in Provider::ALL {
            check_contracts(&decode(input, &DecodeOptions::default().with_provider(*p)));
        }
    }
}

#[test]
fn a_stream_cut_inside_an_event_is_truncated() {
    // Anthropic stream cut in the middle of a tool call's arguments.
    let input = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\": [1, 2\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_bl";
    let events = decode(input, &DecodeOptions::default());
    check_contracts(&events);
    let s = summarize(&events);
    assert_eq!(s.calls[0].arguments, r#"{"a": [1, 2]}"#);
    assert!(s.calls[0].truncated);
    assert!(errors(&events)
        .iter()
        .any(|(k, _)| *k == ErrorKind::Truncated));
}

#[test]
fn a_missing_block_stop_is_a_truncation_only_at_max_tokens() {
    let stream = |reason: &str| {
        format!(
            "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{}}}}\n\n\
             event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{{}}}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{{\\\"a\\\": 1}}\"}}}}\n\n\
             event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"{reason}\"}}}}\n\n\
             event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
        )
    };
    for (reason, truncated) in [("tool_use", false), ("max_tokens", true)] {
        let events = decode(stream(reason).as_bytes(), &DecodeOptions::default());
        check_contracts(&events);
        let s = summarize(&events);
        assert_eq!(s.calls[0].arguments, r#"{"a": 1}"#);
        assert_eq!(s.calls[0].truncated, truncated, "{reason}");
        assert!(errors(&events).is_empty());
    }
}

/// An integer beyond 64 bits is valid JSON: a payload holding one (in a
/// Gemini or Ollama argument object) is decoded, not skipped as malformed
/// with its call lost. The integer comes back as the nearest double, as
/// those servers' own JSON decoders give it (Go's float64, protobuf's
/// double); in OpenAI-style string arguments it is kept as written.
#[test]
fn integers_beyond_64_bits_keep_the_call() {
    let gemini = b"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":{\"id\":12345678901234567890123,\"n\":18446744073709551615}}}]},\"finishReason\":\"STOP\"}]}\n\n";
    let ollama = b"{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":{\"id\":12345678901234567890123,\"n\":18446744073709551615}}}]},\"done\":false}\n{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\"}\n";
    for (input, provider) in [
        (&gemini[..], Provider::Gemini),
        (&ollama[..], Provider::Ollama),
    ] {
        let events = decode(input, &DecodeOptions::default().with_provider(provider));
        check_contracts(&events);
        let s = summarize(&events);
        assert!(s.errors.is_empty(), "{provider:?}: {:?}", s.errors);
        assert_eq!(s.calls.len(), 1, "{provider:?}");
        let args: serde_json::Value = serde_json::from_str(&s.calls[0].arguments).unwrap();
        assert_eq!(args["id"].as_f64(), Some(1.2345678901234568e22));
        assert_eq!(args["n"].as_u64(), Some(u64::MAX));
    }
    let openai = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"id\\\": 12345678901234567890123}\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    let s = summarize(&decode(openai, &DecodeOptions::default()));
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    assert_eq!(s.calls[0].arguments, "{\"id\": 12345678901234567890123}");
}
