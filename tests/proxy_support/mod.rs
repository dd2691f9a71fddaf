//! A scripted upstream for the proxy tests: a small axum server on loopback
//! that answers `POST /v1/chat/completions` by replaying recorded real
//! streams at token pace, or by failing in a chosen way.
//!
//! The scenario is named in the request's last user message as
//! `scenario:<name>`:
//!
//! | name | reply |
//! |---|---|
//! | `stream:<file>` | `corpus/streams/<file>` (llama-cpp-python recordings), event by event |
//! | `capture:<file>` | `../shared/captures/<file>` (recorded provider streams), event by event |
//! | `real:<id>` | a `corpus/real/*.jsonl` record's streamed chunks (real model output), framed as chat chunks the way llama-cpp-python frames them |
//! | `echo:<n>` | `real:smollm2-hermes-weather-000`'s chunks with `reply <n>: ` before them (the concurrency test) |
//! | `status:<code>` | that status with an OpenAI error body |
//! | `slow-headers` | headers after 3 s |
//! | `cut:<scenario>` | the first half of the scenario's events, then the connection is reset |
//! | `stall:<scenario>` | the first half, then nothing (the proxy's idle timeout) |
//! | `hold` | one text chunk, then one more every 50 ms until the client goes away (cancellation test) |
//! | `seq:<id>:<a>+<b>+…` | the n-th request naming `<id>` gets the n-th **scripted** reply (test fixtures, not model output; the last repeats): `nocity` (a `get_weather` call missing `city`), `paris` (`get_weather` for Paris), `messy` (`Get_Weather` with `{"City": "Paris", "unit": "Celsius"}`), `forecast` (`get_forecast` with `days` as a string), `first` (the request's first tool, as the upstream sees its name, with `{"city": "Paris"}`), `london` (`get_weather` for London), `text` / `after` (two pieces of text); parts joined by `.` make one reply of several calls and texts (`paris.nocity.after`); a `!u` suffix adds a usage chunk (11 prompt, 7 completion tokens) |
//! | `agent` | for agent clients (Claude Code, Codex): after a tool result, or without a shell tool, `stream:smollm2-chat-plain.sse`; else a **scripted** (not model-written) native call of the client's `apply_patch` (freeform) or shell tool that writes `toolstream-agent-ok` to `marker.txt` |
#![allow(dead_code)]

#[path = "../common/sdk_venv.rs"]
mod sdk_venv;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use futures_util::StreamExt;
use serde_json::{json, Value};

/// What the scripted upstream saw.
#[derive(Default)]
pub(crate) struct Seen {
    /// Every request body.
    pub(crate) requests: Mutex<Vec<Value>>,
    /// Reply streams dropped before their end (the client went away).
    pub(crate) cancelled: AtomicUsize,
    /// Requests per `seq:` id.
    seq: Mutex<std::collections::HashMap<String, usize>>,
}

pub(crate) struct Upstream {
    pub(crate) addr: SocketAddr,
    pub(crate) seen: Arc<Seen>,
}

impl Upstream {
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn captures_dir() -> Option<PathBuf> {
    let p = match std::env::var_os("TOOLSTREAM_CAPTURES") {
        Some(p) => PathBuf::from(p),
        None => root().join("../shared/captures"),
    };
    p.join("INDEX.json").exists().then_some(p)
}

/// SSE events of a recorded file, each with its trailing blank line.
fn sse_events(bytes: &[u8]) -> Vec<Bytes> {
    let text = String::from_utf8_lossy(bytes).replace("\r\n", "\n");
    text.split_inclusive("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| Bytes::from(e.to_string()))
        .collect()
}

/// A corpus/real record by id.
pub(crate) fn real_record(id: &str) -> Value {
    for f in [
        "corpus/real/smollm2-135m.jsonl",
        "corpus/real/gemma3-270m.jsonl",
    ] {
        let text = std::fs::read_to_string(root().join(f)).unwrap();
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }
    panic!("no corpus/real record {id}");
}

/// A real record's chunks as llama-cpp-python frames a chat stream.
fn real_events(id: &str, prefix: &str) -> Vec<Bytes> {
    let r = real_record(id);
    let model = r["model"].as_str().unwrap();
    let chunk = |delta: Value, finish: Value| {
        Bytes::from(format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-scripted", "model": model, "created": 1, "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
        ))
    };
    let mut out = vec![chunk(json!({"role": "assistant"}), Value::Null)];
    if !prefix.is_empty() {
        out.push(chunk(json!({"content": prefix}), Value::Null));
    }
    for c in r["chunks"].as_array().unwrap() {
        out.push(chunk(json!({"content": c}), Value::Null));
    }
    out.push(chunk(json!({}), r["finish_reason"].clone()));
    out.push(Bytes::from_static(b"data: [DONE]\n\n"));
    out
}

fn events_for(scenario: &str) -> Option<Vec<Bytes>> {
    if let Some(f) = scenario.strip_prefix("stream:") {
        return Some(sse_events(
            &std::fs::read(root().join("corpus/streams").join(f)).ok()?,
        ));
    }
    if let Some(f) = scenario.strip_prefix("capture:") {
        return Some(sse_events(&std::fs::read(captures_dir()?.join(f)).ok()?));
    }
    if let Some(id) = scenario.strip_prefix("real:") {
        return Some(real_events(id, ""));
    }
    if let Some(n) = scenario.strip_prefix("echo:") {
        return Some(real_events(
            "smollm2-hermes-weather-000",
            &format!("reply {n}: "),
        ));
    }
    None
}

/// The scenario named in a chat request.
pub(crate) fn scenario_of(body: &Value) -> String {
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    for m in msgs.iter().rev() {
        let text = match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if let Some(i) = text.find("scenario:") {
            let rest = &text[i + "scenario:".len()..];
            let end = rest
                .find(|c: char| c.is_whitespace() || c == '"' || c == '\\')
                .unwrap_or(rest.len());
            return rest[..end].to_string();
        }
    }
    String::new()
}

struct Guard {
    seen: Arc<Seen>,
    done: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if !self.done {
            self.seen.cancelled.fetch_add(1, Ordering::SeqCst);
        }
    }
}

fn sse(events: Vec<Bytes>, pace: Duration, seen: Arc<Seen>, end: End) -> Response {
    let guard = Guard { seen, done: false };
    let n = events.len();
    let s = futures_util::stream::unfold(
        (events.into_iter().enumerate(), guard),
        move |(mut it, mut guard)| async move {
            match it.next() {
                Some((i, e)) => {
                    if !pace.is_zero() {
                        tokio::time::sleep(pace).await;
                    }
                    if i + 1 == n && end == End::Done {
                        guard.done = true;
                    }
                    Some((Ok::<_, std::io::Error>(e), (it, guard)))
                }
                None => match end {
                    End::Done => None,
                    End::Reset => {
                        guard.done = true;
                        Some((
                            Err(std::io::Error::new(
                                std::io::ErrorKind::ConnectionReset,
                                "scripted cut",
                            )),
                            (it, guard),
                        ))
                    }
                    End::Stall => {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        None
                    }
                    End::Forever => {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        Some((Ok(Bytes::from_static(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\".\"}}]}\n\n")), (it, guard)))
                    }
                },
            }
        },
    );
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(s))
        .unwrap()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Done,
    Reset,
    Stall,
    Forever,
}

#[derive(Clone)]
struct St {
    seen: Arc<Seen>,
    pace: Duration,
}

async fn chat(State(st): State<St>, Json(body): Json<Value>) -> Response {
    st.seen.requests.lock().unwrap().push(body.clone());
    let scenario = scenario_of(&body);
    let seen = st.seen.clone();
    if let Some(code) = scenario.strip_prefix("status:") {
        let code: u16 = code.parse().unwrap();
        return (
            StatusCode::from_u16(code).unwrap(),
            Json(json!({"error": {"message": format!("scripted {code}"), "type": "scripted", "code": code}})),
        )
            .into_response();
    }
    if scenario == "slow-headers" {
        tokio::time::sleep(Duration::from_secs(3)).await;
        return sse(
            events_for("real:smollm2-hermes-weather-001").unwrap(),
            st.pace,
            seen,
            End::Done,
        );
    }
    if scenario == "hold" {
        let first = vec![Bytes::from_static(
            b"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"wait\"}}]}\n\n",
        )];
        return sse(first, st.pace, seen, End::Forever);
    }
    if scenario == "agent" {
        return sse(agent_reply(&body), st.pace, seen, End::Done);
    }
    if let Some(rest) = scenario.strip_prefix("seq:") {
        let (id, items) = rest.split_once(':').expect("seq:<id>:<items>");
        let n = {
            let mut m = st.seen.seq.lock().unwrap();
            let c = m.entry(id.to_string()).or_insert(0);
            *c += 1;
            *c - 1
        };
        let items: Vec<&str> = items.split('+').collect();
        let item = items[n.min(items.len() - 1)];
        let first = body["tools"][0]["function"]["name"].as_str().unwrap_or("");
        return sse(scripted_reply(item, first), st.pace, seen, End::Done);
    }
    for (prefix, end) in [("cut:", End::Reset), ("stall:", End::Stall)] {
        if let Some(inner) = scenario.strip_prefix(prefix) {
            let mut ev = events_for(inner).expect("scenario");
            ev.truncate(ev.len() / 2);
            return sse(ev, st.pace, seen, end);
        }
    }
    match events_for(&scenario) {
        Some(ev) => sse(ev, st.pace, seen, End::Done),
        None => (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": {"message": format!("unknown scenario {scenario:?}")}})),
        )
            .into_response(),
    }
}

fn chunk(delta: Value, finish: Value) -> Bytes {
    Bytes::from(format!(
        "data: {}\n\n",
        json!({"id": "chatcmpl-scripted", "model": "scripted", "created": 1, "object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
    ))
}

/// A `seq:` item: a scripted reply in llama.cpp's chunk framing (a test
/// fixture, not model output). An item is one or more parts joined by
/// `.` (`paris.nocity.after`), each a call or a piece of text, in order.
fn scripted_reply(item: &str, first_tool: &str) -> Vec<Bytes> {
    let (item, usage) = match item.strip_suffix("!u") {
        Some(i) => (i, true),
        None => (item, false),
    };
    let mut out = vec![chunk(json!({"role": "assistant"}), Value::Null)];
    let mut index = 0;
    for part in item.split('.') {
        let call = match part {
            "nocity" => Some(("get_weather", json!({"unit": "celsius"}).to_string())),
            "paris" => Some(("get_weather", json!({"city": "Paris"}).to_string())),
            "london" => Some(("get_weather", json!({"city": "London"}).to_string())),
            "messy" => Some((
                "Get_Weather",
                r#"{"City": "Paris", "unit": "Celsius"}"#.to_string(),
            )),
            "forecast" => Some((
                "get_forecast",
                r#"{"city": "Paris", "days": "3"}"#.to_string(),
            )),
            "first" => Some((first_tool, json!({"city": "Paris"}).to_string())),
            "text" | "after" => None,
            other => panic!("unknown seq item {other}"),
        };
        match call {
            Some((name, args)) => {
                out.push(chunk(
                    json!({"tool_calls": [{"index": index, "id": format!("call_{part}"), "type": "function", "function": {"name": name, "arguments": ""}}]}),
                    Value::Null,
                ));
                let cut: Vec<usize> = (0..=3).map(|i| i * args.len() / 3).collect();
                for w in cut.windows(2) {
                    out.push(chunk(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": &args[w[0]..w[1]]}}]}),
                        Value::Null,
                    ));
                }
                index += 1;
            }
            None => {
                let words: &[&str] = if part == "text" {
                    &["I think ", "it is sunny."]
                } else {
                    &[" Then I will ", "compare them."]
                };
                for t in words {
                    out.push(chunk(json!({"content": t}), Value::Null));
                }
            }
        }
    }
    let finish = if index > 0 { "tool_calls" } else { "stop" };
    out.push(chunk(json!({}), json!(finish)));
    if usage {
        out.push(Bytes::from(format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
                   "choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})
        )));
    }
    out.push(Bytes::from_static(b"data: [DONE]\n\n"));
    out
}

/// The `agent` scenario: a scripted call of the client's shell tool (a
/// test fixture in llama.cpp's chunk framing, not model output), or the
/// recorded plain reply once the tool has run.
fn agent_reply(body: &Value) -> Vec<Bytes> {
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    let after_tool = msgs.last().is_some_and(|m| m["role"] == "tool");
    let tools: Vec<String> = body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let cmd = "echo toolstream-agent-ok > marker.txt";
    let patch = "*** Begin Patch\n*** Add File: marker.txt\n+toolstream-agent-ok\n*** End Patch\n";
    let call = if after_tool {
        None
    } else if tools.iter().any(|t| t == "apply_patch") {
        // Codex's freeform tool, offered as a function with one string parameter.
        Some(("apply_patch", json!({"input": patch})))
    } else if tools.iter().any(|t| t == "Bash") {
        Some((
            "Bash",
            json!({"command": cmd, "description": "Write the marker file"}),
        ))
    } else if tools.iter().any(|t| t == "shell") {
        Some(("shell", json!({"command": ["bash", "-lc", cmd]})))
    } else if tools.iter().any(|t| t == "shell_command") {
        Some(("shell_command", json!({"command": cmd})))
    } else if tools.iter().any(|t| t == "exec_command") {
        Some(("exec_command", json!({"cmd": cmd})))
    } else {
        None
    };
    let Some((name, args)) = call else {
        return events_for("stream:smollm2-chat-plain.sse").unwrap();
    };
    let chunk = |delta: Value, finish: Value| {
        Bytes::from(format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-scripted", "model": "scripted", "created": 1, "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
        ))
    };
    let args = args.to_string();
    let (a, b) = args.split_at(args.len() / 2);
    vec![
        chunk(json!({"role": "assistant"}), Value::Null),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_scripted_1", "type": "function", "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": a}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": b}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
        Bytes::from_static(b"data: [DONE]\n\n"),
    ]
}

async fn models() -> Json<Value> {
    Json(json!({"object": "list", "data": [{"id": "SmolLM2-135M-Instruct", "object": "model"}]}))
}

/// Starts the scripted upstream; `pace` is the delay before each event.
pub(crate) async fn start_upstream(pace: Duration) -> Upstream {
    let seen = Arc::new(Seen::default());
    let app = Router::new()
        .route("/v1/chat/completions", axum::routing::post(chat))
        .route("/v1/models", get(models))
        .with_state(St {
            seen: seen.clone(),
            pace,
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    Upstream { addr, seen }
}

/// Starts a proxy in front of `upstream` with `tweak` applied to the
/// default configuration; returns its base URL.
pub(crate) async fn start_proxy(
    upstream: &str,
    tweak: impl FnOnce(&mut toolstream::proxy::ProxyConfig),
) -> String {
    let (url, _) = start_proxy_with_shutdown(upstream, tweak, std::future::pending()).await;
    url
}

pub(crate) async fn start_proxy_with_shutdown(
    upstream: &str,
    tweak: impl FnOnce(&mut toolstream::proxy::ProxyConfig),
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> (String, tokio::task::JoinHandle<std::io::Result<()>>) {
    // The scripted upstream replays recorded native-mode replies (native
    // `tool_calls` and in-content calls of a model that was sent the
    // tools), and lists SmolLM2 as its model, which `auto` would emulate:
    // these tests pin native mode; emulation has its own tests.
    let mut cfg = toolstream::proxy::ProxyConfig {
        upstream: upstream.to_string(),
        mode: toolstream::proxy::Mode::Native,
        ..Default::default()
    };
    tweak(&mut cfg);
    let proxy = toolstream::proxy::Proxy::start(cfg).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let h = tokio::spawn(proxy.serve(listener, shutdown));
    (format!("http://{addr}"), h)
}

/// Posts JSON; returns status, headers and the whole body.
pub(crate) async fn post(url: &str, body: &Value) -> (u16, reqwest::header::HeaderMap, String) {
    let r = reqwest::Client::new()
        .post(url)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    (status, headers, r.text().await.unwrap())
}

/// Decodes a stream the proxy wrote, with toolstream's own decoder.
pub(crate) fn decode(bytes: &str) -> Vec<toolstream::Event> {
    toolstream::provider::decode(
        bytes.as_bytes(),
        &toolstream::provider::DecodeOptions::default(),
    )
}

pub(crate) fn calls(events: &[toolstream::Event]) -> Vec<toolstream::ToolCall> {
    events
        .iter()
        .filter_map(|e| match e {
            toolstream::Event::ToolEnd { call, .. } => Some((**call).clone()),
            _ => None,
        })
        .collect()
}

pub(crate) fn text(events: &[toolstream::Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            toolstream::Event::Text { text, .. } => {
                Some(String::from_utf8_lossy(text).into_owned())
            }
            _ => None,
        })
        .collect()
}

/// The weather tools the corpus records were prompted with.
pub(crate) fn weather_tools_openai() -> Value {
    json!([
        {"type": "function", "function": {"name": "get_weather", "description": "Get the current weather for a city.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}},
        {"type": "function", "function": {"name": "get_forecast", "description": "Get the forecast.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city", "days"]}}}
    ])
}

pub(crate) fn weather_tools_anthropic() -> Value {
    Value::Array(
        weather_tools_openai()
            .as_array()
            .unwrap()
            .iter()
            .map(|t| json!({"name": t["function"]["name"], "description": t["function"]["description"], "input_schema": t["function"]["parameters"]}))
            .collect(),
    )
}

/// Reads a stream until it ends, chunk by chunk.
pub(crate) async fn read_stream(r: reqwest::Response) -> String {
    let mut s = r.bytes_stream();
    let mut out = Vec::new();
    while let Some(Ok(c)) = s.next().await {
        out.extend_from_slice(&c);
    }
    String::from_utf8(out).unwrap()
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

/// A venv under `target/` with the official `openai` and `anthropic` SDKs
/// (the same one `tests/codec_python_sdk.rs` builds), or `None` with a
/// message when Python or PyPI cannot be had (a failure under CI).
pub(crate) fn sdk_python(test: &str) -> Option<PathBuf> {
    let skip = |msg: &str| -> Option<PathBuf> {
        if std::env::var_os("CI").is_some() {
            panic!("{msg} (required under CI)");
        }
        eprintln!("SKIPPED {test}: {msg}");
        None
    };
    sdk_venv::sdk_python(&target_dir()).map_or_else(|msg| skip(&msg), Some)
}
