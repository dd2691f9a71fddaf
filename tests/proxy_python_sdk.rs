//! The official `openai` and `anthropic` Python SDKs against the proxy
//! (`tests/python/proxy_sdk.py`), in front of the scripted upstream that
//! replays recorded real streams: Chat Completions, Responses and Messages,
//! streaming and not, tool calls, tool results sent back, `count_tokens`,
//! and errors surfacing as the SDKs' own exception types.
//!
//! The SDKs are installed from PyPI into `target/sdk-venv`; without Python
//! or network access the test is skipped with a message (a failure under CI).

mod proxy_support;

use std::path::Path;
use std::time::Duration;

use proxy_support::*;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_sdks_against_the_proxy() {
    let Some(py) = sdk_python("proxy_python_sdk") else {
        return;
    };
    let up = start_upstream(Duration::from_millis(1)).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/proxy_sdk.py");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(py)
            .arg(script)
            .arg(proxy)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "proxy_sdk.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let paris = json!([["get_weather", {"city": "Paris"}]]);

    // Calls: the in-content Hermes call and the native forced call, each way.
    assert_eq!(r["openai_chat_tools"]["finish"], "tool_calls", "{r:#}");
    assert_eq!(r["openai_chat_tools"]["calls"], paris);
    assert_eq!(r["openai_chat_stream_tools"]["calls"], paris, "{r:#}");
    assert_eq!(r["openai_chat_stream_tools"]["finish"], "tool_calls");
    assert_eq!(r["openai_responses_stream_tools"]["calls"], paris, "{r:#}");
    assert_eq!(r["openai_responses_stream_tools"]["status"], "completed");
    assert_eq!(r["anthropic_tools"]["calls"], paris, "{r:#}");
    assert_eq!(r["anthropic_tools"]["stop"], "tool_use");
    let forced = r["anthropic_stream_tools"]["calls"].clone();
    assert_eq!(forced[0][0], "get_weather", "{r:#}");
    assert_eq!(r["anthropic_stream_tools"]["stop"], "tool_use");
    assert_eq!(r["openai_responses_tools"]["calls"], forced, "{r:#}");

    // Text replies after a tool result, and what the upstream was sent.
    let plain = "text";
    for k in [
        "openai_chat_tool_result_round_trip",
        "openai_responses_tool_output_round_trip",
        "anthropic_tool_result_round_trip",
    ] {
        assert!(
            r[k][plain].as_str().is_some_and(|t| !t.is_empty()),
            "{k}: {:#}",
            r[k]
        );
    }
    assert!(r["openai_chat_stream_text"]["text"].as_str().unwrap().len() > 10);
    assert!(
        r["anthropic_count_tokens"]["input_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
    let seen = up.seen.requests.lock().unwrap().clone();
    let tool_msgs: Vec<&Value> = seen
        .iter()
        .flat_map(|b| b["messages"].as_array().unwrap())
        .filter(|m| m["role"] == "tool")
        .collect();
    assert!(tool_msgs
        .iter()
        .any(|m| m["tool_call_id"] == "toolu_1" && m["content"] == "Error: service down"));
    assert!(tool_msgs.iter().any(|m| m["tool_call_id"] == "call_9"));
    assert!(tool_msgs.iter().any(|m| m["tool_call_id"] == "call_1"));

    // Errors as the SDKs' own exception types.
    let exc = |k: &str| r[k]["exception"].as_str().unwrap_or("none").to_string();
    assert_eq!(exc("openai_error_404"), "NotFoundError", "{r:#}");
    assert_eq!(exc("openai_error_500"), "InternalServerError");
    assert_eq!(exc("anthropic_error_404"), "NotFoundError");
    assert_eq!(exc("anthropic_error_500"), "InternalServerError");
    assert_eq!(exc("anthropic_bad_request"), "BadRequestError");
    let cut = &r["responses_stream_cut"];
    let types: Vec<&str> = cut["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        types.contains(&"response.function_call_arguments.delta"),
        "{cut:#}"
    );
    assert_eq!(
        &types[types.len() - 2..],
        ["error", "response.failed"],
        "{cut:#}"
    );
    assert!(cut["message"]
        .as_str()
        .unwrap()
        .contains("upstream stream cut"));
    for k in ["openai_stream_cut", "anthropic_stream_cut"] {
        assert_ne!(exc(k), "none", "{k}: the SDK should raise, got {:#}", r[k]);
        assert!(
            r[k]["message"]
                .as_str()
                .unwrap()
                .contains("upstream stream cut"),
            "{k}: {:#}",
            r[k]
        );
    }
}
