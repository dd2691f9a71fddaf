//! `toolstream decode`: output formats, chunking, stdin, re-encoding,
//! content re-parsing and errors, checked against the library.
#![cfg(feature = "cli")]

mod codec_support;

use std::io::Write;
use std::process::{Command, Stdio};

use codec_support::*;
use serde_json::Value;
use toolstream::provider::{decode, DecodeOptions};
use toolstream::Event;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_toolstream"))
}

fn run(args: &[&str], stdin: Option<&[u8]>) -> (i32, Vec<u8>, String) {
    let mut cmd = bin();
    cmd.arg("decode")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(data) = stdin {
        input.write_all(data).unwrap();
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn capture(name: &str) -> Option<(std::path::PathBuf, Vec<u8>)> {
    let p = captures_dir()?.join(name);
    let bytes = std::fs::read(&p).unwrap();
    Some((p, bytes))
}

fn lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8(out.to_vec())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

#[test]
fn events_output_matches_the_library() {
    let Some((path, bytes)) = capture("openai_chat_gpt4o_parallel_tools.openai-python.sse") else {
        return;
    };
    let (code, out, err) = run(&[path.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    let got = lines(&out);
    let events = decode(&bytes, &DecodeOptions::default());
    assert_eq!(got.len(), events.len());
    for (g, e) in got.iter().zip(&events) {
        let span = e.span();
        match e {
            Event::ToolStart {
                index, id, name, ..
            } => {
                assert_eq!(g["type"], "tool_start");
                assert_eq!(g["index"], *index);
                assert_eq!(g["id"], id.as_str());
                assert_eq!(g["name"], name.as_str());
            }
            Event::ToolArgs { delta, .. } => {
                assert_eq!(g["type"], "tool_args");
                assert_eq!(g["delta"], String::from_utf8_lossy(delta).as_ref());
            }
            Event::ToolEnd { call, .. } => {
                assert_eq!(g["type"], "tool_end");
                assert_eq!(
                    g["arguments"],
                    serde_json::from_str::<Value>(&call.arguments).unwrap()
                );
                assert_eq!(g["truncated"], false);
                assert_eq!(g["repairs"], Value::Array(vec![]));
            }
            Event::Finish { .. } => {
                assert_eq!(g["type"], "finish");
                assert_eq!(g["reason"], "tool_calls");
                assert_eq!(g["usage"]["input_tokens"], 149);
            }
            other => panic!("unexpected {other:?}"),
        }
        if g["type"] != "error" {
            assert_eq!(g["span"], serde_json::json!([span.start, span.end]));
        }
    }
}

#[test]
fn chunk_size_and_stdin_do_not_change_the_output() {
    let Some((path, bytes)) = capture("gemini_tool_stream_crlf.rust-genai.sse") else {
        return;
    };
    let (_, whole, _) = run(&[path.to_str().unwrap()], None);
    for n in ["1", "2", "7", "100"] {
        let (code, out, err) = run(&["--chunk-size", n, path.to_str().unwrap()], None);
        assert_eq!(code, 0, "{err}");
        assert_eq!(out, whole, "chunk size {n}");
    }
    let (code, out, _) = run(&["-"], Some(&bytes));
    assert_eq!(code, 0);
    assert_eq!(out, whole);
    let (_, out, _) = run(&[], Some(&bytes));
    assert_eq!(out, whole);
}

#[test]
fn calls_output() {
    let Some((path, _)) = capture("anthropic_thinking_text_tool.rig.sse") else {
        return;
    };
    let (code, out, err) = run(&["--output", "calls", path.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        v["text"],
        "Sure! Let me check the current weather in Tokyo right away!"
    );
    assert_eq!(v["thinking"].as_str().unwrap().chars().count(), 116);
    assert_eq!(v["calls"].as_array().unwrap().len(), 1);
    assert_eq!(v["calls"][0]["name"], "get_weather");
    assert_eq!(v["calls"][0]["id"], "toolu_REDACTED_1");
    assert_eq!(v["calls"][0]["index"], 0);
    assert_eq!(
        v["calls"][0]["arguments"],
        serde_json::json!({"city": "Tokyo, Japan"})
    );
    assert_eq!(v["calls"][0]["truncated"], false);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["text", "thinking", "calls"]);
}

#[test]
fn legacy_completions_recording() {
    // A real llama.cpp-server `/v1/completions` stream (corpus/streams/).
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/streams/gemma3-completions-plain.sse");
    let path = path.to_str().unwrap();
    let expected =
        " the capital of France. It is located in the center of Europe and has a population of 10 million people.";
    let (code, whole, err) = run(&["--output", "calls", path], None);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_slice(&whole).unwrap();
    assert_eq!(v["text"], expected);
    assert!(v["calls"].as_array().unwrap().is_empty());
    for n in ["1", "7", "64"] {
        let (code, out, err) = run(&["--output", "calls", "--chunk-size", n, path], None);
        assert_eq!(code, 0, "{err}");
        assert_eq!(out, whole, "chunk size {n}");
    }
    let (code, out, err) = run(&["--reparse-content", path], None);
    assert_eq!(code, 0, "{err}");
    let evs = lines(&out);
    let text: String = evs
        .iter()
        .filter(|e| e["type"] == "text")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, expected);
    let last = evs.last().unwrap();
    assert_eq!(last["type"], "finish");
    assert_eq!(last["reason"], "length");
}

#[test]
fn re_encoding_outputs_decode_back_to_the_same_calls() {
    let Some((path, bytes)) =
        capture("openai_responses_reasoning_summary_multi_turn_tools.vercel.jsonl")
    else {
        return;
    };
    let want = summarize(&decode(&bytes, &DecodeOptions::default()));
    for target in ["openai", "anthropic", "responses"] {
        let (code, out, err) = run(
            &["--output", target, "--model", "m-1", path.to_str().unwrap()],
            None,
        );
        assert_eq!(code, 0, "{err}");
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.contains("\"m-1\""), "{target}: model not written");
        let got = summarize(&decode(&out, &DecodeOptions::default()));
        assert_eq!(
            strip_offsets(got.clone()).calls,
            strip_offsets(want.clone()).calls,
            "{target}"
        );
        assert_eq!(got.text, want.text, "{target}");
        assert_eq!(got.thinking, want.thinking, "{target}");
    }
}

#[test]
fn from_is_honoured_and_reparse_content_finds_in_band_calls() {
    let chunks = [
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Sure.\n<tool_"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
    ];
    let sse: String = chunks
        .iter()
        .map(|c| format!("data: {c}\n\n"))
        .collect::<String>()
        + "data: [DONE]\n\n";
    let (code, out, _) = run(
        &["--from", "openai", "--output", "calls"],
        Some(sse.as_bytes()),
    );
    assert_eq!(code, 0);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert!(v["calls"].as_array().unwrap().is_empty());
    assert!(v["text"].as_str().unwrap().contains("<tool_call>"));
    let (code, out, _) = run(
        &[
            "--from",
            "openai",
            "--reparse-content",
            "--model",
            "Qwen/Qwen3-8B",
            "--output",
            "calls",
        ],
        Some(sse.as_bytes()),
    );
    assert_eq!(code, 0);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["text"], "Sure.\n");
    assert_eq!(v["calls"][0]["name"], "get_weather");
    assert_eq!(
        v["calls"][0]["arguments"],
        serde_json::json!({"city": "Oslo"})
    );
    // The finish event says what happened: a call was made.
    let (_, out, _) = run(&["--reparse-content"], Some(sse.as_bytes()));
    let evs = lines(&out);
    assert!(evs.iter().any(|e| e["type"] == "tool_end"));
    assert_eq!(evs.last().unwrap()["type"], "finish");
    // Decoding the same bytes as another provider finds nothing it understands.
    let (_, out, _) = run(&["--from", "anthropic"], Some(sse.as_bytes()));
    assert!(lines(&out).iter().any(|e| e["type"] == "diagnostic"));
}

#[test]
fn bad_arguments_and_missing_files() {
    let (code, _, err) = run(&["--from", "nope"], Some(b""));
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = run(&["--chunk-size", "0"], Some(b""));
    assert_eq!(code, 2, "{err}");
    // An input that cannot be read: exit 2, as in every subcommand.
    let (code, _, err) = run(&["/nonexistent/stream.sse"], None);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/stream.sse"), "{err}");
}

#[test]
fn errors_and_truncation_are_printed() {
    let (code, out, _) = run(&[], Some(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\": 1\"}}]}}]}\n\n"));
    assert_eq!(code, 0);
    let evs = lines(&out);
    let end = evs.iter().find(|e| e["type"] == "tool_end").unwrap();
    assert_eq!(end["truncated"], true);
    assert_eq!(end["arguments"], serde_json::json!({"a": 1}));
    let err = evs.iter().find(|e| e["type"] == "error").unwrap();
    assert_eq!(err["kind"], "truncated");
    assert_eq!(
        err.as_object().unwrap().len(),
        3,
        "error objects are {{type, kind, message}}"
    );
    assert_eq!(evs.last().unwrap()["reason"], "error");
}
