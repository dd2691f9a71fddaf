//! The proxy against a scripted upstream that replays recorded real
//! streams at token pace (see `proxy_support`): each endpoint streaming and
//! not, calls from native `tool_calls` and from content, and every fault.
//! Loopback only.

mod proxy_support;

use std::time::Duration;

use proxy_support::*;
use serde_json::{json, Value};
use toolstream::{ErrorKind, Event};

const PACE: Duration = Duration::from_millis(1);

fn chat_req(scenario: &str, stream: bool) -> Value {
    json!({"model": "gpt-4o", "stream": stream, "tools": weather_tools_openai(),
           "messages": [{"role": "user", "content": format!("What's the weather in Paris? scenario:{scenario}")}]})
}

fn messages_req(scenario: &str, stream: bool) -> Value {
    json!({"model": "claude-sonnet-4-5", "max_tokens": 256, "stream": stream, "tools": weather_tools_anthropic(),
           "messages": [{"role": "user", "content": [{"type": "text", "text": format!("weather? scenario:{scenario}")}]}]})
}

fn responses_req(scenario: &str, stream: bool) -> Value {
    json!({"model": "gpt-5-codex", "stream": stream, "store": false,
           "tools": weather_tools_openai().as_array().unwrap().iter().map(|t| json!({"type": "function", "name": t["function"]["name"], "parameters": t["function"]["parameters"]})).collect::<Vec<_>>(),
           "input": [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]},
                     {"type": "message", "role": "user", "content": [{"type": "input_text", "text": format!("weather? scenario:{scenario}")}]}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_stream_takes_calls_from_content() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    // SmolLM2 wrote its call as Hermes text; llama-cpp-python left it in `content`.
    let (status, headers, body) = post(
        &format!("{proxy}/v1/chat/completions"),
        &chat_req("real:smollm2-hermes-weather-001", true),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers["content-type"], "text/event-stream");
    assert!(headers.contains_key("x-request-id"));
    let ev = decode(&body);
    let c = calls(&ev);
    assert_eq!(c.len(), 1, "{body}");
    assert_eq!(c[0].name, "get_weather");
    assert_eq!(c[0].arguments_value().unwrap(), json!({"city": "Paris"}));
    assert!(!text(&ev).contains("<tool_call>"));
    assert!(body.contains("\"finish_reason\":\"tool_calls\""));
    assert!(body.ends_with("data: [DONE]\n\n"));
    // The upstream got the tools, streaming on, and the model it serves.
    let seen = up.seen.requests.lock().unwrap()[0].clone();
    assert_eq!(seen["stream"], true);
    assert_eq!(seen["model"], "SmolLM2-135M-Instruct");
    assert_eq!(seen["tools"][0]["function"]["name"], "get_weather");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_native_calls_streaming_and_not() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    let url = format!("{proxy}/v1/messages?beta=true");
    let (status, _, body) = post(
        &url,
        &messages_req("stream:smollm2-chat-tools-forced.sse", true),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.starts_with("event: message_start"));
    assert!(body.contains("\"type\":\"input_json_delta\""));
    assert!(body.contains("\"stop_reason\":\"tool_use\""));
    let ev = decode(&body);
    let streamed = calls(&ev);
    assert_eq!(streamed.len(), 1);
    assert_eq!(streamed[0].name, "get_weather");
    assert!(!streamed[0].truncated);

    let (status, _, body) = post(
        &url,
        &messages_req("stream:smollm2-chat-tools-forced.sse", false),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["type"], "message");
    assert_eq!(v["model"], "claude-sonnet-4-5");
    assert_eq!(v["stop_reason"], "tool_use");
    let tu = v["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_use")
        .unwrap();
    assert_eq!(tu["name"], "get_weather");
    assert_eq!(tu["input"], streamed[0].arguments_value().unwrap());
    // The recording has no usage chunk: estimated, in the right shape.
    assert!(v["usage"]["input_tokens"].as_u64().unwrap() > 0);
    assert!(v["usage"]["output_tokens"].as_u64().unwrap() > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_two_calls_streaming_and_not() {
    let Some(_) = captures_dir() else {
        eprintln!("SKIPPED: ../shared/captures is missing");
        return;
    };
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    let url = format!("{proxy}/v1/responses");
    // The tools the capture was recorded with.
    let req = |stream: bool| {
        let mut r = responses_req("capture:llamacpp_two_tools.rig.sse", stream);
        r["tools"] =
            json!(["lookup_harbor_label", "lookup_orchard_label"].map(|n| json!(
            {"type": "function", "name": n, "parameters": {"type": "object", "properties": {}}}
        )));
        r
    };
    let (status, _, body) = post(&url, &req(true)).await;
    assert_eq!(status, 200, "{body}");
    let ev = decode(&body);
    let c = calls(&ev);
    assert_eq!(
        c.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["lookup_harbor_label", "lookup_orchard_label"]
    );
    assert!(body.contains("event: response.completed"));
    let seen = up.seen.requests.lock().unwrap()[0].clone();
    assert_eq!(
        seen["messages"][0],
        json!({"role": "system", "content": "Be brief."})
    );

    let (status, _, body) = post(&url, &req(false)).await;
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["object"], "response");
    assert_eq!(v["status"], "completed");
    let fc: Vec<&Value> = v["output"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["type"] == "function_call")
        .collect();
    assert_eq!(fc.len(), 2);
    assert_eq!(fc[0]["call_id"], c[0].id.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_tool_names_are_shortened_and_mapped_back() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    let long = format!(
        "mcp__weather_service_with_a_long_server_name__{}",
        "get_weather_now".repeat(2)
    );
    assert!(long.len() > 64);
    let mut req = chat_req("seq:long:first", false);
    req["tools"][0]["function"]["name"] = json!(long);
    let (status, _, body) = post(&format!("{proxy}/v1/chat/completions"), &req).await;
    assert_eq!(status, 200, "{body}");
    let seen = up.seen.requests.lock().unwrap()[0].clone();
    let sent = seen["tools"][0]["function"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(sent.len(), 64);
    // The upstream called the short name; the client gets its own name,
    // and the normalizer checked the call against that tool.
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        v["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        long.as_str(),
        "{body}"
    );
    assert_eq!(up.seen.requests.lock().unwrap().len(), 1);
    // A recorded call of a tool that is not offered (`get_weather`: the
    // offered one is now the long name) is not passed on as if it were.
    let mut req = chat_req("stream:smollm2-chat-tools-forced.sse", false);
    req["tools"][0]["function"]["name"] = json!(long);
    let (_, _, body) = post(&format!("{proxy}/v1/chat/completions"), &req).await;
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(v["choices"][0]["message"]["tool_calls"].is_null(), "{body}");
    let t = v["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(t.contains("call to `get_weather` was not sent"), "{t}");
    assert!(t.contains("unknown tool"), "{t}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn side_endpoints() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |c| {
        c.models
            .insert("claude-sonnet-4-5".into(), "SmolLM2-135M-Instruct".into());
    })
    .await;
    let client = reqwest::Client::new();
    let r = client.head(format!("{proxy}/")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = client
        .get(format!("{proxy}/v1/models"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<&str> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["claude-sonnet-4-5", "SmolLM2-135M-Instruct"]);
    let v: Value = client
        .get(format!("{proxy}/health"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["status"], "ok");
    assert_eq!(v["mode"], "native");
    let (status, _, body) = post(
        &format!("{proxy}/v1/messages/count_tokens"),
        &json!({"model": "claude", "messages": [{"role": "user", "content": "x".repeat(400)}]}),
    )
    .await;
    assert_eq!(status, 200);
    let n = serde_json::from_str::<Value>(&body).unwrap()["input_tokens"]
        .as_u64()
        .unwrap();
    assert!((100..140).contains(&n), "{n}");
    post(
        &format!("{proxy}/v1/chat/completions"),
        &chat_req("real:smollm2-hermes-weather-001", false),
    )
    .await;
    let m = client
        .get(format!("{proxy}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        m.contains("toolstream_requests_total{api=\"chat\"} 1"),
        "{m}"
    );
    assert!(m.contains("toolstream_tool_calls_total 1"), "{m}");
    let r = client
        .get(format!("{proxy}/v2/nothing"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}

// ---------------------------------------------------------------- faults

fn err_type(api: &str, body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("not JSON: {body}"));
    match api {
        "messages" => {
            assert_eq!(v["type"], "error", "{body}");
            v["error"]["type"].as_str().unwrap().to_string()
        }
        _ => v["error"]["type"].as_str().unwrap().to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_faults_in_the_clients_format() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |c| {
        c.limits.first_byte_timeout_secs = 1;
        c.retries.upstream = 0;
    })
    .await;
    // A port nobody listens on.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let dead_proxy = start_proxy(&format!("http://{dead}"), |c| c.retries.upstream = 0).await;
    for (api, path) in [
        ("chat", "/v1/chat/completions"),
        ("messages", "/v1/messages"),
        ("responses", "/v1/responses"),
    ] {
        let req = |s: &str| match api {
            "chat" => chat_req(s, true),
            "messages" => messages_req(s, true),
            _ => responses_req(s, true),
        };
        let (st, _, body) = post(
            &format!("{dead_proxy}{path}"),
            &req("real:smollm2-hermes-weather-001"),
        )
        .await;
        assert_eq!(st, 502, "{api} unreachable: {body}");
        assert!(body.contains("upstream unreachable"), "{body}");
        let (st, _, body) = post(&format!("{proxy}{path}"), &req("status:500")).await;
        assert_eq!(st, 502, "{api} 500: {body}");
        assert!(body.contains("scripted 500"));
        let (st, _, body) = post(&format!("{proxy}{path}"), &req("status:404")).await;
        assert_eq!(st, 404, "{api} 404: {body}");
        if api == "messages" {
            assert_eq!(err_type(api, &body), "not_found_error");
        } else {
            assert_eq!(err_type(api, &body), "invalid_request_error");
        }
        let (st, _, body) = post(&format!("{proxy}{path}"), &req("slow-headers")).await;
        assert_eq!(st, 504, "{api} slow: {body}");
        assert!(body.contains("upstream timed out"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_and_stalled_streams_end_with_an_error_after_what_was_sent() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |c| c.limits.idle_timeout_secs = 1).await;
    for (fault, cause) in [("cut", "read failed"), ("stall", "no data for 1 s")] {
        // Anthropic: text and the open call, then an `error` event, no message_stop.
        let scenario = format!("{fault}:stream:smollm2-chat-tools-forced.sse");
        let (st, _, body) = post(
            &format!("{proxy}/v1/messages"),
            &messages_req(&scenario, true),
        )
        .await;
        assert_eq!(st, 200);
        assert!(body.contains("\"type\":\"tool_use\""), "{body}");
        assert!(body.contains("event: error"), "{body}");
        assert!(body.contains(cause), "{body}");
        assert!(!body.contains("message_stop"));
        let ev = decode(&body);
        assert!(calls(&ev).iter().all(|c| c.truncated), "{ev:?}");
        assert!(ev.iter().any(|e| matches!(
            e,
            Event::Error {
                kind: ErrorKind::Provider,
                ..
            }
        )));
        // OpenAI: an error chunk after the deltas, no [DONE].
        let (_, _, body) = post(
            &format!("{proxy}/v1/chat/completions"),
            &chat_req(&scenario, true),
        )
        .await;
        assert!(body.contains("\"tool_calls\""));
        assert!(body.contains("{\"error\":"), "{body}");
        assert!(!body.contains("data: [DONE]"));
        // Responses: error then response.failed.
        let (_, _, body) = post(
            &format!("{proxy}/v1/responses"),
            &responses_req(&scenario, true),
        )
        .await;
        assert!(body.contains("event: response.failed"), "{body}");
        // Not streaming: 502 in the client's format.
        let (st, _, body) = post(
            &format!("{proxy}/v1/messages"),
            &messages_req(&scenario, false),
        )
        .await;
        assert_eq!(st, 502, "{body}");
        assert_eq!(err_type("messages", &body), "api_error");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_the_proxy_refuses() {
    let up = start_upstream(PACE).await;
    std::env::set_var("TS_TEST_INBOUND_KEY", "s3cret-key");
    let proxy = start_proxy(&up.url(), |c| {
        c.limits.max_body_bytes = 4096;
        c.api_key_env = Some("TS_TEST_INBOUND_KEY".into());
    })
    .await;
    let client = reqwest::Client::new();
    let url = format!("{proxy}/v1/messages");
    let req = messages_req("real:smollm2-hermes-weather-001", false);
    // No key, wrong key, right key (both header styles).
    let r = client.post(&url).json(&req).send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(
        err_type("messages", &r.text().await.unwrap()),
        "authentication_error"
    );
    let r = client
        .post(&url)
        .header("x-api-key", "s3cret-kez")
        .json(&req)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = client
        .post(&url)
        .header("x-api-key", "s3cret-key")
        .json(&req)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = client
        .post(format!("{proxy}/v1/chat/completions"))
        .bearer_auth("s3cret-key")
        .json(&chat_req("real:smollm2-hermes-weather-001", false))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // Too large: 413.
    let mut big = req.clone();
    big["messages"][0]["content"][0]["text"] = json!("x".repeat(10_000));
    let r = client
        .post(&url)
        .header("x-api-key", "s3cret-key")
        .json(&big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    // Not JSON, and an unsupported block: 400 in the client's format.
    let r = client
        .post(&url)
        .header("x-api-key", "s3cret-key")
        .body("{oops")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(
        err_type("messages", &r.text().await.unwrap()),
        "invalid_request_error"
    );
    let mut doc = req.clone();
    doc["messages"][0]["content"] = json!([{"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"}}]);
    let r = client
        .post(&url)
        .header("x-api-key", "s3cret-key")
        .json(&doc)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    // Unknown fields are ignored.
    let mut extra = req.clone();
    extra["context_management"] = json!({"edits": [{"type": "clear_thinking_20251015"}]});
    extra["output_config"] = json!({"effort": "high"});
    extra["some_future_field"] = json!(1);
    let r = client
        .post(&url)
        .header("x-api-key", "s3cret-key")
        .json(&extra)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_limit_answers_429_with_retry_after() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |c| {
        c.limits.max_concurrent = 1;
        c.limits.retry_after_secs = 2;
    })
    .await;
    let client = reqwest::Client::new();
    // One stream holds the only slot until it is dropped.
    let held = client
        .post(format!("{proxy}/v1/chat/completions"))
        .json(&chat_req("hold", true))
        .send()
        .await
        .unwrap();
    assert_eq!(held.status(), 200);
    let (st, headers, body) = post(
        &format!("{proxy}/v1/messages"),
        &messages_req("real:smollm2-hermes-weather-001", false),
    )
    .await;
    assert_eq!(st, 429, "{body}");
    assert_eq!(headers["retry-after"], "2");
    assert_eq!(err_type("messages", &body), "rate_limit_error");
    drop(held);
    // The slot comes back once the held stream is gone.
    let mut ok = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let (st, _, _) = post(
            &format!("{proxy}/v1/chat/completions"),
            &chat_req("real:smollm2-hermes-weather-001", false),
        )
        .await;
        if st == 200 {
            ok = true;
            break;
        }
    }
    assert!(ok, "the slot was not released");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_disconnect_cancels_the_upstream_request() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    let r = reqwest::Client::new()
        .post(format!("{proxy}/v1/messages"))
        .json(&messages_req("hold", true))
        .send()
        .await
        .unwrap();
    let mut s = r.bytes_stream();
    use futures_util::StreamExt;
    let first = s.next().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("message_start"));
    drop(s);
    for _ in 0..100 {
        if up.seen.cancelled.load(std::sync::atomic::Ordering::SeqCst) == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the upstream stream was not cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_streams_each_get_their_own_bytes() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    let expected = real_record("smollm2-hermes-weather-000")["text"]
        .as_str()
        .unwrap()
        .to_string();
    let client = reqwest::Client::new();
    let mut tasks = Vec::new();
    for n in 0..200 {
        let client = client.clone();
        let url = if n % 2 == 0 {
            format!("{proxy}/v1/chat/completions")
        } else {
            format!("{proxy}/v1/messages")
        };
        tasks.push(tokio::spawn(async move {
            let body = json!({"model": "m", "max_tokens": 300, "stream": true,
                              "messages": [{"role": "user", "content": format!("scenario:echo:{n}")}]});
            let r = client.post(url).json(&body).send().await.unwrap();
            assert_eq!(r.status(), 200);
            (n, read_stream(r).await)
        }));
    }
    for t in tasks {
        let (n, body) = t.await.unwrap();
        let ev = decode(&body);
        assert_eq!(text(&ev), format!("reply {n}: {expected}"), "stream {n}");
        assert!(calls(&ev).is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_open_streams_finish() {
    let up = start_upstream(Duration::from_millis(5)).await;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let (proxy, handle) =
        start_proxy_with_shutdown(&up.url(), |c| c.limits.shutdown_grace_secs = 10, async {
            let _ = rx.await;
        })
        .await;
    let r = reqwest::Client::new()
        .post(format!("{proxy}/v1/chat/completions"))
        .json(&chat_req("real:smollm2-hermes-weather-001", true))
        .send()
        .await
        .unwrap();
    tx.send(()).unwrap();
    let body = read_stream(r).await;
    assert!(body.ends_with("data: [DONE]\n\n"), "{body}");
    assert_eq!(calls(&decode(&body)).len(), 1);
    tokio::time::timeout(Duration::from_secs(5), handle)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(reqwest::Client::new()
        .get(format!("{proxy}/health"))
        .send()
        .await
        .is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_freeform_tool_answered_as_custom_tool_call() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    let url = format!("{proxy}/v1/responses");
    let patch = "*** Begin Patch\n*** Add File: marker.txt\n+toolstream-agent-ok\n*** End Patch\n";
    let req = |stream: bool| {
        json!({"model": "gpt-5-codex", "stream": stream, "store": false,
               "tools": [{"type": "custom", "name": "apply_patch", "description": "Edit files.",
                          "format": {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch hunk+ end_patch"}},
                         {"type": "web_search"}],
               "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "scenario:agent"}]}]})
    };
    let (st, _, body) = post(&url, &req(true)).await;
    assert_eq!(st, 200, "{body}");
    assert!(
        body.contains("event: response.custom_tool_call_input.done"),
        "{body}"
    );
    let done: Vec<Value> = body
        .split("\n\n")
        .filter(|e| e.starts_with("event: response.output_item.done"))
        .map(|e| serde_json::from_str(e.split_once("data: ").unwrap().1).unwrap())
        .collect();
    assert_eq!(done.len(), 1);
    let item = &done[0]["item"];
    assert_eq!(item["type"], "custom_tool_call");
    assert_eq!(item["name"], "apply_patch");
    assert_eq!(item["input"], patch);
    // Offered upstream as a function with one string parameter; web_search dropped.
    let seen = up.seen.requests.lock().unwrap()[0].clone();
    assert_eq!(seen["tools"].as_array().unwrap().len(), 1);
    assert_eq!(
        seen["tools"][0]["function"]["parameters"]["required"],
        json!(["input"])
    );

    let (st, _, body) = post(&url, &req(false)).await;
    assert_eq!(st, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["output"][0]["type"], "custom_tool_call");
    assert_eq!(v["output"][0]["input"], patch);

    // The follow-up carries the call and its output back.
    let follow = json!({"model": "gpt-5-codex", "stream": false,
        "tools": [{"type": "custom", "name": "apply_patch", "description": "Edit files."}],
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "scenario:agent"}]},
                  {"type": "custom_tool_call", "call_id": item["call_id"], "name": "apply_patch", "input": patch},
                  {"type": "custom_tool_call_output", "call_id": item["call_id"], "output": "Success. Updated: A marker.txt"}]});
    let (st, _, body) = post(&url, &follow).await;
    assert_eq!(st, 200, "{body}");
    let seen = up.seen.requests.lock().unwrap().last().unwrap().clone();
    let m = seen["messages"].as_array().unwrap();
    assert_eq!(
        m[1]["tool_calls"][0]["function"]["arguments"],
        json!({"input": patch}).to_string()
    );
    assert_eq!(m[2]["role"], "tool");
    assert_eq!(m[2]["content"], "Success. Updated: A marker.txt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_longer_than_the_context_window_are_refused() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |c| c.context_tokens = Some(400)).await;
    let (st, _, body) = post(
        &format!("{proxy}/v1/messages"),
        &messages_req("real:smollm2-hermes-weather-001", false),
    )
    .await;
    assert_eq!(st, 200, "{body}");
    let mut long = messages_req("real:smollm2-hermes-weather-001", false);
    long["messages"][0]["content"][0]["text"] = json!(format!(
        "{} scenario:real:smollm2-hermes-weather-001",
        "word ".repeat(400)
    ));
    let (st, _, body) = post(&format!("{proxy}/v1/messages"), &long).await;
    assert_eq!(st, 400, "{body}");
    assert_eq!(err_type("messages", &body), "invalid_request_error");
    assert!(body.contains("context window of 400 tokens"), "{body}");
    assert_eq!(
        up.seen.requests.lock().unwrap().len(),
        1,
        "the long request must not reach the upstream"
    );
}

// ------------------------------------------- normalizer, retries, loops, usage

fn seq_chat(seq: &str, stream: bool) -> Value {
    chat_req(&format!("seq:{seq}"), stream)
}

fn seq_messages(seq: &str, stream: bool) -> Value {
    messages_req(&format!("seq:{seq}"), stream)
}

/// The `arguments` deltas of each call in an OpenAI stream, concatenated.
fn chat_arg_deltas(body: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in body.lines() {
        let Some(d) = line.strip_prefix("data: ") else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(d) else {
            continue;
        };
        for c in v["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let i = c["index"].as_u64().unwrap() as usize;
            if out.len() <= i {
                out.resize(i + 1, String::new());
            }
            out[i].push_str(c["function"]["arguments"].as_str().unwrap_or(""));
        }
    }
    out
}

/// The `input_json_delta`s of an Anthropic stream, concatenated per block.
fn messages_arg_deltas(body: &str) -> Vec<String> {
    let mut out: Vec<(u64, String)> = Vec::new();
    for line in body.lines() {
        let Some(d) = line.strip_prefix("data: ") else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(d) else {
            continue;
        };
        if v["type"] == "content_block_start" && v["content_block"]["type"] == "tool_use" {
            out.push((v["index"].as_u64().unwrap(), String::new()));
        }
        if v["delta"]["type"] == "input_json_delta" {
            let i = v["index"].as_u64().unwrap();
            let slot = out.iter_mut().find(|(j, _)| *j == i).unwrap();
            slot.1
                .push_str(v["delta"]["partial_json"].as_str().unwrap());
        }
    }
    out.into_iter().map(|(_, s)| s).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn normalizer_repairs_calls_and_their_deltas_add_up() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    let want = json!({"city": "Paris", "unit": "celsius"});
    // Chat, streaming: name and parameter repaired, the enum value coerced;
    // the deltas the client gets add up to the repaired arguments.
    let (st, _, body) = post(
        &format!("{proxy}/v1/chat/completions"),
        &seq_chat("n1:messy", true),
    )
    .await;
    assert_eq!(st, 200, "{body}");
    let c = calls(&decode(&body));
    assert_eq!(c.len(), 1, "{body}");
    assert_eq!(c[0].name, "get_weather");
    assert_eq!(c[0].arguments_value().unwrap(), want);
    let deltas = chat_arg_deltas(&body);
    assert_eq!(deltas.len(), 1);
    assert_eq!(serde_json::from_str::<Value>(&deltas[0]).unwrap(), want);
    assert!(
        !body.contains("Get_Weather") && !body.contains("City"),
        "{body}"
    );
    // Anthropic, streaming: the same through input_json_delta.
    let (_, _, body) = post(
        &format!("{proxy}/v1/messages"),
        &seq_messages("n2:messy", true),
    )
    .await;
    let deltas = messages_arg_deltas(&body);
    assert_eq!(deltas.len(), 1, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&deltas[0]).unwrap(), want);
    assert!(body.contains("\"name\":\"get_weather\""));
    // Not streaming; and a string coerced to the declared integer.
    let (_, _, body) = post(
        &format!("{proxy}/v1/messages"),
        &seq_messages("n3:forecast", false),
    )
    .await;
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["content"][0]["name"], "get_forecast");
    assert_eq!(
        v["content"][0]["input"],
        json!({"city": "Paris", "days": 3})
    );
    // A valid repair needs no retry.
    assert_eq!(up.seen.requests.lock().unwrap().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_call_is_asked_again_with_the_normalizers_feedback() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    // Streaming Anthropic: the first reply's call lacks `city`; the client
    // sees only the second reply's call.
    let (st, _, body) = post(
        &format!("{proxy}/v1/messages"),
        &seq_messages("r1:nocity+paris", true),
    )
    .await;
    assert_eq!(st, 200, "{body}");
    let c = calls(&decode(&body));
    assert_eq!(c.len(), 1, "{body}");
    assert_eq!(c[0].arguments_value().unwrap(), json!({"city": "Paris"}));
    assert_eq!(body.matches("\"type\":\"tool_use\"").count(), 1);
    assert!(body.contains("\"stop_reason\":\"tool_use\""));
    assert!(
        !body.contains("celsius"),
        "the rejected call leaked: {body}"
    );
    // The retry carried the failed call and the feedback as its tool result.
    let reqs = up.seen.requests.lock().unwrap().clone();
    assert_eq!(reqs.len(), 2);
    let m = reqs[1]["messages"].as_array().unwrap();
    let n = m.len();
    assert_eq!(m[n - 2]["role"], "assistant");
    assert_eq!(m[n - 2]["tool_calls"][0]["function"]["name"], "get_weather");
    assert_eq!(m[n - 1]["role"], "tool");
    assert_eq!(m[n - 1]["tool_call_id"], "call_nocity");
    let fb = m[n - 1]["content"].as_str().unwrap();
    assert!(
        fb.starts_with(toolstream::normalize::feedback::HEADER),
        "{fb}"
    );
    assert!(fb.contains("missing required parameter `city`"), "{fb}");
    assert_eq!(reqs[1]["stream"], true);
    // Not streaming, Chat Completions: the same.
    let (st, headers, body) = post(
        &format!("{proxy}/v1/chat/completions"),
        &seq_chat("r2:nocity+paris", false),
    )
    .await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(headers["x-toolstream-attempts"], "2");
    let v: Value = serde_json::from_str(&body).unwrap();
    let tc = &v["choices"][0]["message"]["tool_calls"];
    assert_eq!(tc.as_array().unwrap().len(), 1);
    assert_eq!(tc[0]["function"]["arguments"], "{\"city\":\"Paris\"}");
    let m = reqwest::get(format!("{proxy}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(m.contains("toolstream_validation_retries_total 2"), "{m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_still_invalid_after_the_retries_is_never_sent_silently() {
    let up = start_upstream(PACE).await;
    // Default: a text block naming the call and its problems, no call.
    let proxy = start_proxy(&up.url(), |_| {}).await;
    let (_, _, body) = post(
        &format!("{proxy}/v1/messages"),
        &seq_messages("i1:nocity", true),
    )
    .await;
    let ev = decode(&body);
    assert!(calls(&ev).is_empty(), "{body}");
    let t = text(&ev);
    assert!(t.contains("call to `get_weather` was not sent"), "{t}");
    assert!(t.contains("missing required parameter `city`"), "{t}");
    assert!(t.contains("after 2 attempt(s)"), "{t}");
    assert!(body.contains("\"stop_reason\":\"end_turn\""), "{body}");
    assert_eq!(up.seen.requests.lock().unwrap().len(), 2);
    // No retries, error policy: an error after what was sent; 502 when not streaming.
    let proxy = start_proxy(&up.url(), |c| {
        c.retries.validation = 0;
        c.retries.on_invalid = toolstream::proxy::OnInvalid::Error;
    })
    .await;
    let (_, _, body) = post(
        &format!("{proxy}/v1/chat/completions"),
        &seq_chat("i2:nocity", true),
    )
    .await;
    assert!(body.contains("{\"error\":"), "{body}");
    assert!(!body.contains("\"tool_calls\""), "{body}");
    let (st, _, body) = post(
        &format!("{proxy}/v1/messages"),
        &seq_messages("i3:nocity", false),
    )
    .await;
    assert_eq!(st, 502, "{body}");
    assert!(body.contains("still invalid"), "{body}");
    assert_eq!(up.seen.requests.lock().unwrap().len(), 4);
    // Forward: the call goes out as repaired, with a note after it.
    let proxy = start_proxy(&up.url(), |c| {
        c.retries.validation = 0;
        c.retries.on_invalid = toolstream::proxy::OnInvalid::Forward;
    })
    .await;
    let (_, _, body) = post(
        &format!("{proxy}/v1/messages"),
        &seq_messages("i4:nocity", false),
    )
    .await;
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["content"][0]["type"], "tool_use");
    assert!(v["content"][1]["text"]
        .as_str()
        .unwrap()
        .contains("missing required parameter `city`"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_choice_required_and_named_are_enforced() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    // Anthropic `any`: the first reply is text only; the retry makes the call.
    let mut req = seq_messages("c1:text+paris", true);
    req["tool_choice"] = json!({"type": "any"});
    let (_, _, body) = post(&format!("{proxy}/v1/messages"), &req).await;
    let ev = decode(&body);
    assert_eq!(calls(&ev).len(), 1, "{body}");
    // The first reply's text was already streamed; the retry's text is not repeated.
    assert_eq!(text(&ev), "I think it is sunny.");
    let reqs = up.seen.requests.lock().unwrap().clone();
    let last = reqs[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    assert!(last["content"].as_str().unwrap().contains("You must call"));
    // Named: a call of another tool is asked again.
    let mut req = seq_chat("c2:paris+forecast", false);
    req["tool_choice"] = json!({"type": "function", "function": {"name": "get_forecast"}});
    let (_, _, body) = post(&format!("{proxy}/v1/chat/completions"), &req).await;
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        v["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "get_forecast",
        "{body}"
    );
    let reqs = up.seen.requests.lock().unwrap().clone();
    let m = reqs[3]["messages"].as_array().unwrap();
    assert!(m.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .contains("`get_forecast`"));
    // `auto` with a text reply: no retry.
    let (_, _, _) = post(
        &format!("{proxy}/v1/chat/completions"),
        &seq_chat("c3:text+paris", false),
    )
    .await;
    assert_eq!(up.seen.requests.lock().unwrap().len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_call_is_stopped_with_the_loop_message() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    let call = |i: usize| {
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{i}"), "type": "function",
               "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]})
    };
    let result = |i: usize| json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": "18 C, sunny"});
    let mut req = seq_chat("l1:paris", true);
    let mut msgs = req["messages"].as_array().unwrap().clone();
    for i in 0..3 {
        msgs.push(call(i));
        msgs.push(result(i));
    }
    req["messages"] = Value::Array(msgs.clone());
    // The model asks a fourth time, and again when told: stopped.
    let (_, _, body) = post(&format!("{proxy}/v1/chat/completions"), &req).await;
    let ev = decode(&body);
    assert!(calls(&ev).is_empty(), "{body}");
    let t = text(&ev);
    assert!(
        t.contains("You have called get_weather with the same arguments 4 times"),
        "{t}"
    );
    let reqs = up.seen.requests.lock().unwrap().clone();
    assert_eq!(reqs.len(), 2);
    let fb = reqs[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(fb["role"], "tool");
    assert!(fb["content"]
        .as_str()
        .unwrap()
        .contains("Do not call it again"));
    // Told once, it answers with another call: that one goes through.
    let mut req = seq_chat("l2:paris+forecast", false);
    req["messages"] = Value::Array(
        std::iter::once(req["messages"][0].clone())
            .chain(msgs[1..].iter().cloned())
            .collect(),
    );
    let (_, _, body) = post(&format!("{proxy}/v1/chat/completions"), &req).await;
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        v["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "get_forecast",
        "{body}"
    );
    // Two earlier calls are not a loop yet; loop stop can be turned off.
    let proxy = start_proxy(&up.url(), |c| c.loops.stop = false).await;
    let mut req = seq_chat("l3:paris", false);
    req["messages"] = Value::Array(msgs);
    let (_, _, body) = post(&format!("{proxy}/v1/chat/completions"), &req).await;
    assert!(body.contains("\"tool_calls\""), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_is_reported_summed_or_estimated() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    // The recording has no usage: estimated, and said so.
    let (_, headers, body) = post(
        &format!("{proxy}/v1/messages"),
        &messages_req("real:smollm2-hermes-weather-001", false),
    )
    .await;
    assert_eq!(headers["x-toolstream-usage"], "estimated");
    let v: Value = serde_json::from_str(&body).unwrap();
    let i = v["usage"]["input_tokens"].as_u64().unwrap();
    let o = v["usage"]["output_tokens"].as_u64().unwrap();
    assert!((60..400).contains(&i), "{i}");
    assert!((5..200).contains(&o), "{o}");
    // Streaming Anthropic: in message_delta; Chat: in the usage chunk.
    let (_, _, body) = post(
        &format!("{proxy}/v1/messages"),
        &messages_req("real:smollm2-hermes-weather-001", true),
    )
    .await;
    assert!(body.contains(&format!("\"output_tokens\":{o}")), "{body}");
    assert!(body.contains(&format!("\"input_tokens\":{i}")), "{body}");
    // Reported by the upstream: passed on; summed over a retry.
    let (_, headers, body) = post(
        &format!("{proxy}/v1/chat/completions"),
        &seq_chat("u1:paris!u", false),
    )
    .await;
    assert!(!headers.contains_key("x-toolstream-usage"));
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        v["usage"],
        json!({"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18})
    );
    let (_, _, body) = post(
        &format!("{proxy}/v1/responses"),
        &responses_req("seq:u2:nocity!u+paris!u", true),
    )
    .await;
    let done = body
        .split("\n\n")
        .find(|e| e.starts_with("event: response.completed"))
        .unwrap_or_else(|| panic!("{body}"));
    let v: Value = serde_json::from_str(done.split_once("data: ").unwrap().1).unwrap();
    assert_eq!(v["response"]["usage"]["input_tokens"], 22);
    assert_eq!(v["response"]["usage"]["output_tokens"], 14);
}

/// The order of text and calls in a decoded client reply: `T` for a run of
/// text, `name:city` for a call, placed where it starts (a Chat stream
/// shows where a call starts, not where it ends).
fn sequence(events: &[Event]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut at: Vec<(usize, usize)> = Vec::new();
    for e in events {
        match e {
            Event::Text { text, .. }
                if !text.is_empty() && out.last().map(String::as_str) != Some("T") =>
            {
                out.push("T".into());
            }
            Event::ToolStart { index, name, .. } => {
                at.push((*index, out.len()));
                out.push(name.to_string());
            }
            Event::ToolEnd { call, .. } => {
                let a: Value = serde_json::from_str(&call.arguments).unwrap();
                let city = a["city"].as_str().unwrap_or("?");
                if let Some(&(_, p)) = at.iter().find(|(i, _)| *i == call.index) {
                    out[p] = format!("{}:{city}", call.name);
                }
            }
            _ => {}
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_retry_left_valid_calls_stream_at_once_and_a_retry_only_adds() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    // First reply: text, a valid call (Paris), an invalid one (no city),
    // more text. The retry's reply repeats Paris (dropped: already sent)
    // and adds London. The client sees the first reply as it streamed —
    // the valid call before the text after it, the invalid call never —
    // then London, numbered after Paris.
    let script = "text.paris.nocity.after+paris.london";
    let want = ["T", "get_weather:Paris", "T", "get_weather:London"];
    for (n, api) in ["chat", "messages", "responses"].iter().enumerate() {
        for stream in [true, false] {
            let id = format!("s{n}{stream}");
            let scenario = format!("seq:{id}:{script}");
            let (path, req) = match *api {
                "chat" => ("chat/completions", chat_req(&scenario, stream)),
                "messages" => ("messages", messages_req(&scenario, stream)),
                _ => ("responses", responses_req(&scenario, stream)),
            };
            let (st, headers, body) = post(&format!("{proxy}/v1/{path}"), &req).await;
            assert_eq!(st, 200, "{api} {stream}: {body}");
            assert!(
                !body.contains("celsius"),
                "the rejected call leaked: {body}"
            );
            if stream {
                let ev = decode(&body);
                assert_eq!(sequence(&ev), want, "{api}: {ev:?}");
                let t = text(&ev);
                assert_eq!(t, "I think it is sunny. Then I will compare them.", "{api}");
                let c = calls(&ev);
                assert_ne!(c[0].id, c[1].id);
                match *api {
                    "chat" => {
                        assert_eq!(
                            body.matches("\"tool_calls\":[{\"index\":0,\"id\"").count(),
                            1,
                            "{body}"
                        );
                        assert_eq!(
                            body.matches("\"tool_calls\":[{\"index\":1,\"id\"").count(),
                            1,
                            "{body}"
                        );
                        assert!(body.contains("\"finish_reason\":\"tool_calls\""), "{body}");
                        assert_eq!(body.matches("[DONE]").count(), 1);
                    }
                    "messages" => {
                        assert_eq!(body.matches("event: message_start").count(), 1);
                        assert_eq!(body.matches("event: message_stop").count(), 1);
                        assert!(body.contains("\"stop_reason\":\"tool_use\""), "{body}");
                    }
                    _ => {
                        assert_eq!(body.matches("event: response.created").count(), 1);
                        assert_eq!(body.matches("event: response.completed").count(), 1);
                    }
                }
            } else {
                assert_eq!(headers["x-toolstream-attempts"], "2");
                let v: Value = serde_json::from_str(&body).unwrap();
                let names: Vec<Value> = match *api {
                    "chat" => {
                        let m = &v["choices"][0]["message"];
                        assert_eq!(
                            m["content"],
                            "I think it is sunny. Then I will compare them."
                        );
                        m["tool_calls"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|c| {
                                serde_json::from_str::<Value>(
                                    c["function"]["arguments"].as_str().unwrap(),
                                )
                                .unwrap()["city"]
                                    .clone()
                            })
                            .collect()
                    }
                    "messages" => {
                        let kinds: Vec<&str> = v["content"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|b| b["type"].as_str().unwrap())
                            .collect();
                        assert_eq!(kinds, ["text", "tool_use", "text", "tool_use"], "{body}");
                        v["content"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .filter(|b| b["type"] == "tool_use")
                            .map(|b| b["input"]["city"].clone())
                            .collect()
                    }
                    _ => {
                        let kinds: Vec<&str> = v["output"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|b| b["type"].as_str().unwrap())
                            .collect();
                        assert_eq!(
                            kinds.iter().filter(|k| **k == "function_call").count(),
                            2,
                            "{body}"
                        );
                        v["output"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .filter(|b| b["type"] == "function_call")
                            .map(|b| {
                                serde_json::from_str::<Value>(b["arguments"].as_str().unwrap())
                                    .unwrap()["city"]
                                    .clone()
                            })
                            .collect()
                    }
                };
                assert_eq!(names, [json!("Paris"), json!("London")], "{api}: {body}");
            }
        }
    }
    // The retry request: the whole first reply, Paris answered as accepted
    // (the client runs it), the invalid call with its feedback.
    let reqs = up.seen.requests.lock().unwrap().clone();
    assert_eq!(reqs.len(), 12);
    let m = reqs[1]["messages"].as_array().unwrap();
    let n = m.len();
    assert_eq!(m[n - 3]["role"], "assistant");
    assert_eq!(
        m[n - 3]["content"],
        "I think it is sunny. Then I will compare them."
    );
    assert_eq!(m[n - 3]["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(m[n - 2]["tool_call_id"], "call_paris");
    assert_eq!(m[n - 2]["content"], toolstream::proxy::retry::ACCEPTED);
    assert_eq!(m[n - 1]["tool_call_id"], "call_nocity");
    assert!(m[n - 1]["content"]
        .as_str()
        .unwrap()
        .contains("missing required parameter `city`"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_call_the_retry_never_replaces_is_still_reported() {
    let up = start_upstream(PACE).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    // The retry answers with text only: its text is sent (it is the
    // reply's only new content) and the rejected call is reported as a
    // call still invalid (the default `on_invalid = text`).
    for (n, api) in ["chat", "messages", "responses"].iter().enumerate() {
        let scenario = format!("seq:q{n}:paris.nocity+text");
        let (path, req) = match *api {
            "chat" => ("chat/completions", chat_req(&scenario, true)),
            "messages" => ("messages", messages_req(&scenario, true)),
            _ => ("responses", responses_req(&scenario, true)),
        };
        let (_, _, body) = post(&format!("{proxy}/v1/{path}"), &req).await;
        let ev = decode(&body);
        assert_eq!(sequence(&ev), ["get_weather:Paris", "T"], "{api}: {ev:?}");
        let t = text(&ev);
        assert!(t.starts_with("I think it is sunny."), "{t}");
        assert!(t.contains("call to `get_weather` was not sent"), "{t}");
        assert!(t.contains("missing required parameter `city`"), "{t}");
    }
}

/// A request in `api`'s format whose conversation carries a long earlier
/// tool result (`lines` lines) and whose last user turn names `scenario`.
fn long_history_req(api: &str, scenario: &str, lines: usize, stream: bool) -> Value {
    let result: String = (0..lines)
        .map(|i| format!("{i:05} Paris weather log: 18 C, sunny, wind 3 m/s\n"))
        .collect();
    let ask = format!("And tomorrow? scenario:{scenario}");
    match api {
        "chat" => {
            let mut r = chat_req(scenario, stream);
            r["messages"] = json!([
                {"role": "user", "content": "What's the weather in Paris?"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c0", "type": "function",
                    "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
                {"role": "tool", "tool_call_id": "c0", "content": result},
                {"role": "user", "content": ask},
            ]);
            r
        }
        "messages" => {
            let mut r = messages_req(scenario, stream);
            r["messages"] = json!([
                {"role": "user", "content": "What's the weather in Paris?"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "c0", "name": "get_weather", "input": {"city": "Paris"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c0", "content": result},
                                              {"type": "text", "text": ask}]},
            ]);
            r
        }
        _ => {
            let mut r = responses_req(scenario, stream);
            r["input"] = json!([
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What's the weather in Paris?"}]},
                {"type": "function_call", "call_id": "c0", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"},
                {"type": "function_call_output", "call_id": "c0", "output": result},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ask}]},
            ]);
            r
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_long_requests_are_shrunk_to_fit_at_every_api() {
    let up = start_upstream(PACE).await;
    let window = 3000;
    let proxy = start_proxy(&up.url(), |c| c.context_tokens = Some(window)).await;
    let mut n = 0;
    for api in ["chat", "messages", "responses"] {
        for stream in [false, true] {
            let path = match api {
                "chat" => "chat/completions",
                "messages" => "messages",
                _ => "responses",
            };
            // ~ 12 000 tokens of an earlier tool result: cut to fit, head and
            // tail kept, the reply served, the header saying what was done.
            let req = long_history_req(api, "real:smollm2-hermes-weather-001", 1000, stream);
            let (st, headers, body) = post(&format!("{proxy}/v1/{path}"), &req).await;
            assert_eq!(st, 200, "{api} {stream}: {body}");
            let h = headers["x-toolstream-context"].to_str().unwrap();
            assert!(h.starts_with("shrunk; tokens="), "{h}");
            assert!(h.contains("contents_cut=1"), "{h}");
            n += 1;
            let seen = up.seen.requests.lock().unwrap()[n - 1].clone();
            let need =
                toolstream::proxy::session::estimate_request_tokens(seen.as_object().unwrap());
            assert!(need <= window, "{api}: {need} tokens sent");
            let msgs = seen["messages"].to_string();
            assert!(msgs.contains("00000 Paris weather log"), "head kept");
            assert!(msgs.contains("00999 Paris weather log"), "tail kept");
            assert!(msgs.contains("lines cut"), "marker");
            assert!(
                msgs.contains("And tomorrow?"),
                "the last user turn is intact"
            );
            assert_eq!(
                seen["tools"].as_array().map(Vec::len),
                Some(2),
                "small tools kept"
            );
        }
        // The last user turn alone over the window: nothing to shrink, a 400
        // in the client's format; the upstream never sees it.
        let mut req = long_history_req(api, "real:smollm2-hermes-weather-001", 10, false);
        let huge = format!(
            "{} scenario:real:smollm2-hermes-weather-001",
            "word ".repeat(4000)
        );
        match api {
            "chat" => req["messages"][3]["content"] = json!(huge),
            "messages" => req["messages"][2]["content"][1]["text"] = json!(huge),
            _ => req["input"][3]["content"][0]["text"] = json!(huge),
        }
        let path = match api {
            "chat" => "chat/completions",
            "messages" => "messages",
            _ => "responses",
        };
        let (st, _, body) = post(&format!("{proxy}/v1/{path}"), &req).await;
        assert_eq!(st, 400, "{body}");
        assert_eq!(err_type(api, &body), "invalid_request_error", "{body}");
        assert!(body.contains("context window of 3000 tokens"), "{body}");
        assert_eq!(up.seen.requests.lock().unwrap().len(), n);
    }
    let m = reqwest::get(format!("{proxy}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(m.contains("toolstream_requests_shrunk_total 6"), "{m}");
    // Shrinking off: the long request is refused instead.
    let proxy = start_proxy(&up.url(), |c| {
        c.context_tokens = Some(window);
        c.shrink.enabled = false;
    })
    .await;
    let req = long_history_req("chat", "real:smollm2-hermes-weather-001", 1000, false);
    let (st, _, body) = post(&format!("{proxy}/v1/chat/completions"), &req).await;
    assert_eq!(st, 400, "{body}");
    assert!(body.contains("shrinking is off"), "{body}");
}
