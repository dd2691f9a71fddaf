//! The official clients accept the encoders' output: the `openai` and
//! `anthropic` Python SDKs (installed from PyPI into a venv under
//! `target/`) consume our OpenAI, Responses and Anthropic streams through a
//! loopback HTTP server with their own streaming helpers
//! (`tests/python/sdk_check.py`), and what they accumulate must equal what
//! toolstream decoded from the original capture.
//!
//! Without Python or network access the test is skipped with a message,
//! except under CI (`CI` set), where it must run.

mod codec_support;
#[path = "common/sdk_venv.rs"]
mod sdk_venv;

use std::path::{Path, PathBuf};
use std::process::Command;

use codec_support::*;
use serde_json::{json, Value};
use toolstream::encode::{encode, EncodeOptions, Target};
use toolstream::provider::{decode, DecodeOptions};
use toolstream::{ErrorKind, Event, FinishReason};

const SCENARIOS: &[&str] = &[
    "openai_chat_gpt4o_parallel_tools.openai-python.sse",
    "mistral_parallel_tools.rig.sse",
    "deepseek_reasoner_tool.vercel.jsonl",
    "anthropic_thinking_text_tool.rig.sse",
    "anthropic_tool_use_truncated_max_tokens.anthropic-sdk-python.sse",
    "anthropic_redacted_thinking.rig.sse",
    "gemini_tool_stream_crlf.rust-genai.sse",
    "vertex_gemini_partial_args_nested.vercel.jsonl",
    "openai_responses_reasoning_tools.rust-genai.sse",
    "lmstudio_responses_done_only_args.vercel.jsonl",
    "ollama_native_same_tool_4x.rig.ndjson",
    "cohere_v2_tool_plan_two_tools.vercel.jsonl",
    "bedrock_converse_two_tools.rig.eventstream",
    "openai_responses_error_failed.vercel.jsonl",
];

fn skip_or_fail(msg: &str) -> Option<PathBuf> {
    if std::env::var_os("CI").is_some() {
        panic!("{msg} (required under CI)");
    }
    eprintln!("SKIPPED codec_python_sdk: {msg}");
    None
}

/// The venv's python with `openai` and `anthropic` installed, creating it if needed.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

fn python() -> Option<PathBuf> {
    sdk_venv::sdk_python(&target_dir()).map_or_else(|msg| skip_or_fail(&msg), Some)
}

fn target_name(t: Target) -> &'static str {
    t.name()
}

#[test]
fn official_clients_accept_our_streams() {
    let Some(dir) = captures_dir() else {
        return;
    };
    let Some(py) = python() else { return };
    let work = target_dir().join("sdk-check");
    std::fs::create_dir_all(&work).unwrap();
    let mut manifest = Vec::new();
    let mut expected = Vec::new();
    for name in SCENARIOS {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let events = decode(&bytes, &DecodeOptions::default());
        for t in [Target::OpenAi, Target::Responses, Target::Anthropic] {
            let wire = encode(&events, t, &EncodeOptions::default());
            let file = work.join(format!("{name}.{}.sse", target_name(t)));
            std::fs::write(&file, &wire).unwrap();
            manifest.push(json!({"name": name, "target": target_name(t), "file": file}));
            expected.push((name.to_string(), t, events.clone()));
        }
    }
    let manifest_path = work.join("manifest.json");
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/sdk_check.py");
    let out = Command::new(&py)
        .arg(&script)
        .arg(&manifest_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "sdk_check.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(results.len(), expected.len());

    let mut failures = Vec::new();
    for (r, (name, t, events)) in results.iter().zip(&expected) {
        let want = summarize(events);
        let mut errs = Vec::new();
        let failed = events.iter().any(|e| {
            matches!(
                e,
                Event::Error {
                    kind: ErrorKind::Provider | ErrorKind::Truncated,
                    ..
                }
            )
        });
        if failed {
            let msg = events
                .iter()
                .find_map(|e| match e {
                    Event::Error { message, .. } => Some(message.clone()),
                    _ => None,
                })
                .unwrap();
            match r.get("error").and_then(Value::as_str) {
                Some(e) if e.contains(&msg) => {}
                other => errs.push(format!(
                    "the client should raise the provider error {msg:?}, got {other:?}"
                )),
            }
        } else {
            if let Some(e) = r.get("error") {
                failures.push(format!("{name} via {t}: the client raised {e}"));
                continue;
            }
            if r["text"] != want.text.as_str() {
                errs.push(format!("text {:?}, want {:?}", r["text"], want.text));
            }
            if r["thinking"] != want.thinking.as_str() {
                errs.push(format!(
                    "thinking {:?}, want {:?}",
                    r["thinking"], want.thinking
                ));
            }
            let calls: Vec<Value> = want
                .calls
                .iter()
                .map(|c| json!({"id": c.id, "name": c.name, "arguments": serde_json::from_str::<Value>(&c.arguments).unwrap()}))
                .collect();
            if r["tool_calls"] != Value::Array(calls.clone()) {
                errs.push(format!(
                    "tool calls {}, want {}",
                    r["tool_calls"],
                    Value::Array(calls)
                ));
            }
            let (reason, usage) = events
                .iter()
                .rev()
                .find_map(|e| match e {
                    Event::Finish { reason, usage, .. } => Some((reason.clone(), usage.clone())),
                    _ => None,
                })
                .unwrap();
            let length = reason == FinishReason::Length || want.calls.iter().any(|c| c.truncated);
            let tools = !want.calls.is_empty();
            let finish = match (t, length, tools) {
                (Target::OpenAi, true, _) => "length",
                (Target::OpenAi, false, true) => "tool_calls",
                (Target::OpenAi, false, false) => "stop",
                (Target::Anthropic, true, _) => "max_tokens",
                (Target::Anthropic, false, true) => "tool_use",
                (Target::Anthropic, false, false) => "end_turn",
                (_, true, _) => "incomplete",
                (_, false, _) => "completed",
            };
            if r["finish"] != finish {
                errs.push(format!("finish {}, want {finish}", r["finish"]));
            }
            if let Some(u) = usage {
                if r["usage"]["input"] != json!(u.input_tokens.unwrap_or(0))
                    || r["usage"]["output"] != json!(u.output_tokens.unwrap_or(0))
                {
                    errs.push(format!("usage {}, want {u:?}", r["usage"]));
                }
            }
            if *t == Target::Anthropic {
                let sigs: Vec<String> = events
                    .iter()
                    .filter_map(|e| match e {
                        Event::Opaque {
                            kind: toolstream::OpaqueKind::ThinkingSignature,
                            data,
                            ..
                        } => Some(data.clone()),
                        _ => None,
                    })
                    .collect();
                if r["signatures"] != json!(sigs) {
                    errs.push(format!("signatures {}, want {sigs:?}", r["signatures"]));
                }
            }
        }
        if !errs.is_empty() {
            failures.push(format!("{name} via {t}:\n    {}", errs.join("\n    ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} client checks failed:\n{}",
        failures.len(),
        results.len(),
        failures.join("\n")
    );
}
