//! Every recorded provider stream in `../shared/captures` decodes to its
//! expected calls, text, thinking and finish reasons; decoding obeys the
//! event contracts and is chunk-invariant (spans included) on every capture.
//!
//! Expectations come from each capture's `expected_summary`, corrected where
//! the reference accumulator was wrong by `tests/data/captures_expected.json`
//! (one entry per capture, each with a one-line reason).

mod codec_support;

use codec_support::*;
use serde_json::Value;
use toolstream::provider::{DecodeOptions, StreamDecoder};
use toolstream::Event;

fn overrides() -> Value {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/captures_expected.json"
    );
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// Maps an expected_summary finish string to toolstream's reason name.
fn norm_finish(raw: &str) -> &'static str {
    match raw {
        "tool_calls" | "tool_use" | "TOOL_CALL" => "tool_calls",
        "stop" | "end_turn" | "STOP" | "COMPLETE" | "response.completed" => "stop",
        "length" | "max_tokens" | "MAX_TOKENS" => "length",
        "refusal" | "content_filter" => "content_filter",
        "ERROR" | "response.failed" => "error",
        other => panic!("unmapped finish reason {other}"),
    }
}

/// Providers whose text arguments must come through byte for byte.
fn text_args(api: &str) -> bool {
    !(api.contains("gemini") || api.contains("/api/chat"))
}

fn check_one(file: &str, bytes: &[u8], prov: &Value, over: Option<&Value>) -> Result<(), String> {
    let exp = &prov["expected_summary"];
    let api = prov["api"].as_str().unwrap_or_default();
    let events = decode_chunked(bytes, 1 << 20, &DecodeOptions::default());
    check_contracts(&events);
    let got = summarize(&events);
    let pick = |k: &str| over.and_then(|o| o.get(k)).unwrap_or(&exp[k]);
    let mut errs = Vec::new();

    // Calls.
    let want_calls = pick("tool_calls").as_array().unwrap();
    if want_calls.len() != got.calls.len() {
        errs.push(format!(
            "{} calls, want {}",
            got.calls.len(),
            want_calls.len()
        ));
    }
    for (i, (w, g)) in want_calls.iter().zip(&got.calls).enumerate() {
        if let Some(id) = w["id"].as_str() {
            if g.id != id {
                errs.push(format!("call {i}: id {:?}, want {id:?}", g.id));
            }
        } else {
            errs.push(format!(
                "call {i}: expected id is null but toolstream always has one ({:?})",
                g.id
            ));
        }
        if g.name != w["name"].as_str().unwrap() {
            errs.push(format!("call {i}: name {:?}, want {}", g.name, w["name"]));
        }
        let gv: Value = serde_json::from_str(&g.arguments).unwrap();
        if let Some(v) = w.get("args_value") {
            if &gv != v {
                errs.push(format!("call {i}: args {gv}, want {v}"));
            }
        } else {
            let text = w["args"].as_str().unwrap();
            let valid = w
                .get("args_valid_json")
                .and_then(Value::as_bool)
                .unwrap_or(true);
            if !valid {
                errs.push(format!(
                    "call {i}: expected args are invalid JSON; needs a corrected expectation"
                ));
            }
            let wv: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            if gv != wv {
                errs.push(format!("call {i}: args {}, want {text}", g.arguments));
            } else if (text_args(api) || over.is_some()) && g.arguments != text {
                errs.push(format!(
                    "call {i}: args text {:?} differs from the wire text {text:?}",
                    g.arguments
                ));
            }
        }
        let want_trunc = w.get("truncated").and_then(Value::as_bool).unwrap_or(false);
        if g.truncated != want_trunc {
            errs.push(format!(
                "call {i}: truncated {}, want {want_trunc}",
                g.truncated
            ));
        }
        let reps: Vec<&str> = g.repairs.iter().map(|r| r.kind.as_str()).collect();
        let want_reps: Vec<&str> = w
            .get("repairs")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|r| r.as_str().unwrap()).collect())
            .unwrap_or_default();
        if reps != want_reps {
            errs.push(format!("call {i}: repairs {reps:?}, want {want_reps:?}"));
        }
    }

    // Text and thinking.
    let text_chars = pick("text_chars").as_u64().unwrap() as usize;
    if got.text.chars().count() != text_chars {
        errs.push(format!(
            "text {} chars, want {text_chars}: {:?}",
            got.text.chars().count(),
            got.text
        ));
    }
    let head = pick("text_head").as_str().unwrap();
    if !got.text.starts_with(head) {
        errs.push(format!(
            "text starts {:?}, want {head:?}",
            got.text.chars().take(60).collect::<String>()
        ));
    }
    let thinking_chars = pick("thinking_chars").as_u64().unwrap() as usize;
    if got.thinking.chars().count() != thinking_chars {
        errs.push(format!(
            "thinking {} chars, want {thinking_chars}",
            got.thinking.chars().count()
        ));
    }

    // Finish reasons.
    let want_finish: Vec<String> = match over.and_then(|o| o.get("finish")) {
        Some(f) => f
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect(),
        None => {
            let mut v: Vec<String> = Vec::new();
            for raw in exp["finish"].as_array().unwrap() {
                let mut n = norm_finish(raw.as_str().unwrap()).to_string();
                // Stop after calls is ToolCalls, except for Anthropic, whose
                // protocol has its own tool_use reason.
                if n == "stop" && !got.calls.is_empty() && api != "messages" {
                    n = "tool_calls".into();
                }
                if v.last() != Some(&n) {
                    v.push(n);
                }
            }
            v
        }
    };
    if got.finish != want_finish {
        errs.push(format!("finish {:?}, want {want_finish:?}", got.finish));
    }

    // Errors.
    let want_errors: Vec<&str> = over
        .and_then(|o| o.get("errors"))
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|s| s.as_str().unwrap()).collect())
        .unwrap_or_default();
    if got.errors.len() != want_errors.len()
        || got
            .errors
            .iter()
            .zip(&want_errors)
            .any(|(g, w)| !g.contains(w))
    {
        errs.push(format!("errors {:?}, want {want_errors:?}", got.errors));
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(format!("{file}:\n    {}", errs.join("\n    ")))
    }
}

#[test]
fn every_capture_decodes_to_its_expected_summary() {
    let over = overrides();
    let Some(caps) = captures() else {
        return;
    };
    assert!(
        caps.len() >= 70,
        "expected the 73 captures (minus the decoded Bedrock copy), found {}",
        caps.len()
    );
    let mut failures = Vec::new();
    for (file, bytes, prov) in &caps {
        if let Err(e) = check_one(file, bytes, prov, over.get(file.as_str())) {
            failures.push(e);
        }
    }
    for k in over.as_object().unwrap().keys() {
        if k != "_about" {
            assert!(
                caps.iter().any(|(f, _, _)| f == k),
                "override for an unknown capture {k}"
            );
            assert!(
                over[k]["reason"].as_str().is_some_and(|r| !r.is_empty()),
                "override {k} has no reason"
            );
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} captures differ:\n{}",
        failures.len(),
        caps.len(),
        failures.join("\n")
    );
}

#[test]
fn provider_detection_on_captures() {
    let Some(caps) = captures() else {
        return;
    };
    for (file, bytes, prov) in caps {
        let api = prov["api"].as_str().unwrap();
        let provider = prov["provider"].as_str().unwrap();
        let want = if api.contains("chat.completions") {
            "openai"
        } else if api.starts_with("responses") {
            "responses"
        } else if api == "messages" {
            "anthropic"
        } else if api.contains("/api/chat") {
            "ollama"
        } else if api.contains("gemini") {
            "gemini"
        } else if api.contains("v2/chat") {
            "cohere"
        } else if api.contains("ConverseStream") {
            "bedrock"
        } else {
            panic!("{file}: unknown api {api} ({provider})")
        };
        let mut d = StreamDecoder::new(DecodeOptions::default());
        let mut out = Vec::new();
        d.feed(&bytes, &mut out);
        assert_eq!(d.provider().map(|p| p.name()), Some(want), "{file}");
    }
}

#[test]
fn captures_are_chunk_invariant() {
    let opts = DecodeOptions::default();
    let Some(caps) = captures() else {
        return;
    };
    for (file, bytes, _) in caps {
        let whole = decode_chunked(&bytes, bytes.len(), &opts);
        for n in [1, 2, 3, 7, 61, 1024] {
            let got = decode_chunked(&bytes, n, &opts);
            assert_eq!(got, whole, "{file}: {n}-byte reads differ");
        }
        // Split between every CR and LF.
        let cr_splits: Vec<usize> = bytes
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w == b"\r\n")
            .map(|(i, _)| i + 1)
            .collect();
        if !cr_splits.is_empty() {
            assert_eq!(
                decode_split(&bytes, &cr_splits, &opts),
                whole,
                "{file}: CR|LF splits differ"
            );
        }
    }
}

#[test]
fn captures_decode_the_same_with_any_line_ending() {
    let opts = DecodeOptions::default();
    let Some(caps) = captures() else {
        return;
    };
    for (file, bytes, _) in caps {
        if !matches!(
            bytes.iter().find(|b| !b.is_ascii_whitespace()),
            Some(b'd' | b'e' | b':')
        ) {
            continue; // not SSE
        }
        let lf: Vec<u8> = String::from_utf8(bytes.clone())
            .unwrap()
            .replace("\r\n", "\n")
            .into_bytes();
        // Repair offsets are byte offsets: they move with the line ends.
        let norm = strip_offsets;
        let want = norm(summarize(&decode_chunked(&lf, 4096, &opts)));
        let crlf = String::from_utf8(lf.clone())
            .unwrap()
            .replace('\n', "\r\n")
            .into_bytes();
        let cr = String::from_utf8(lf.clone())
            .unwrap()
            .replace('\n', "\r")
            .into_bytes();
        for (name, input) in [("CRLF", crlf), ("CR", cr)] {
            for n in [1, 5, 4096] {
                let got = norm(summarize(&decode_chunked(&input, n, &opts)));
                assert_eq!(got, want, "{file}: {name} line endings, {n}-byte reads");
            }
        }
    }
}

#[test]
fn reconstructed_sse_matches_the_payload_lines() {
    let Some(dir) = captures_dir() else {
        return;
    };
    let opts = DecodeOptions::default();
    let mut n = 0;
    for e in std::fs::read_dir(dir.join("reframed")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let Some(stem) = name.strip_suffix(".RECONSTRUCTED.sse") else {
            continue;
        };
        let jsonl = std::fs::read(dir.join(format!("{stem}.jsonl"))).unwrap();
        let sse = std::fs::read(&p).unwrap();
        let a = decode_chunked(&jsonl, 4096, &opts);
        let b = decode_chunked(&sse, 4096, &opts);
        check_contracts(&b);
        let (sa, sb) = (strip_offsets(summarize(&a)), strip_offsets(summarize(&b)));
        assert_eq!(
            (&sa.calls, &sa.text, &sa.thinking, &sa.finish),
            (&sb.calls, &sb.text, &sb.thinking, &sb.finish),
            "{name}"
        );
        n += 1;
    }
    assert!(n >= 20, "found {n} reconstructed streams");
}

#[test]
fn opaque_state_is_kept() {
    let Some(dir) = captures_dir() else {
        return;
    };
    let opaque = |file: &str| -> Vec<(toolstream::OpaqueKind, Option<usize>)> {
        let bytes = std::fs::read(dir.join(file)).unwrap();
        decode_chunked(&bytes, 4096, &DecodeOptions::default())
            .into_iter()
            .filter_map(|e| match e {
                Event::Opaque { kind, index, .. } => Some((kind, index)),
                _ => None,
            })
            .collect()
    };
    use toolstream::OpaqueKind::*;
    assert_eq!(
        opaque("gemini3_tool_thought_signature.vercel.jsonl"),
        vec![(ThoughtSignature, Some(0))]
    );
    assert_eq!(
        opaque("gemini_tool_stream_crlf.rust-genai.sse"),
        vec![(ThoughtSignature, Some(0))]
    );
    assert_eq!(
        opaque("anthropic_thinking_signature.vercel.jsonl"),
        vec![(ThinkingSignature, None)]
    );
    assert_eq!(
        opaque("anthropic_redacted_thinking.rig.sse")[0],
        (RedactedThinking, None)
    );
    assert!(
        opaque("openai_responses_reasoning_summary_multi_turn_tools.vercel.jsonl")
            .contains(&(EncryptedReasoning, None))
    );
}

#[test]
fn bedrock_decoded_copy_matches_the_binary_eventstream() {
    let Some(dir) = captures_dir() else {
        return;
    };
    let bin = std::fs::read(dir.join("bedrock_converse_two_tools.rig.eventstream")).unwrap();
    let jsonl = std::fs::read(dir.join("bedrock_converse_two_tools.rig.decoded.jsonl")).unwrap();
    let opts = DecodeOptions::default();
    let (a, b) = (
        decode_chunked(&bin, 4096, &opts),
        decode_chunked(&jsonl, 4096, &opts),
    );
    check_contracts(&b);
    let (sa, sb) = (strip_offsets(summarize(&a)), strip_offsets(summarize(&b)));
    assert_eq!(sa, sb);
    assert_eq!(sa.calls.len(), 2);
}
