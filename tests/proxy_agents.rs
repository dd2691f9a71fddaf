//! Real agent clients against the proxy, headless, in front of the scripted
//! upstream (`agent` scenario: a scripted native call of the client's shell
//! tool, then a recorded real text reply once the tool has run):
//!
//! * Claude Code (`npm install @anthropic-ai/claude-code`): `claude -p …
//!   --output-format stream-json` must receive the `tool_use`, run it (the
//!   marker file appears) and send the `tool_result` back.
//! * Codex CLI (`npm install @openai/codex`): `codex exec` with a custom
//!   Responses provider pointing at the proxy, likewise.
//!
//! What each client sent is recorded by a small forwarding server between
//! client and proxy and written to `target/agents/recorded/`.
//!
//! The clients are installed with npm into `target/agents`; without npm (or
//! the registry) the tests are skipped with a message (a failure under CI).

mod proxy_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use proxy_support::*;
use serde_json::{json, Value};

fn agents_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join("agents")
}

/// The client's binary, installed with npm into `target/agents` if needed.
fn agent_bin(bin: &str, package: &str) -> Option<PathBuf> {
    let dir = agents_dir();
    let path = dir.join("node_modules/.bin").join(bin);
    if path.exists() {
        return Some(path);
    }
    std::fs::create_dir_all(&dir).unwrap();
    let ok = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--silent", package])
        .current_dir(&dir)
        .status()
        .map(|s| s.success());
    if ok.ok() == Some(true) && path.exists() {
        return Some(path);
    }
    let msg = format!("`npm install {package}` failed (no npm or no access to the registry)");
    if std::env::var_os("CI").is_some() {
        panic!("{msg} (required under CI)");
    }
    eprintln!("SKIPPED: {msg}");
    None
}

/// A forwarding server that records every request (method, path, headers
/// without credentials, body) before passing it to the proxy.
#[derive(Clone)]
struct Recorder {
    target: String,
    log: Arc<Mutex<Vec<Value>>>,
    client: reqwest::Client,
}

async fn forward(State(r): State<Recorder>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, 64 << 20).await.unwrap();
    let headers: serde_json::Map<String, Value> = parts
        .headers
        .iter()
        .filter(|(k, _)| !["authorization", "x-api-key"].contains(&k.as_str()))
        .map(|(k, v)| (k.to_string(), json!(v.to_str().unwrap_or(""))))
        .collect();
    let body_json: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    r.log.lock().unwrap().push(json!({
        "method": parts.method.as_str(), "path": parts.uri.to_string(), "headers": headers, "body": body_json,
    }));
    let url = format!("{}{}", r.target, parts.uri);
    let mut up = r.client.request(parts.method.clone(), url).body(bytes);
    for (k, v) in parts.headers.iter() {
        if k != "host" && k != "content-length" {
            up = up.header(k, v);
        }
    }
    let res = up.send().await.unwrap();
    let mut b = Response::builder().status(res.status());
    for (k, v) in res.headers() {
        if k != "content-length" && k != "transfer-encoding" {
            b = b.header(k, v);
        }
    }
    let stream = res.bytes_stream();
    b.body(Body::from_stream(stream)).unwrap()
}

async fn start_recorder(target: &str) -> (String, Arc<Mutex<Vec<Value>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let app = axum::Router::new().fallback(forward).with_state(Recorder {
        target: target.to_string(),
        log: log.clone(),
        client: reqwest::Client::new(),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), log)
}

fn fresh_dir(name: &str) -> PathBuf {
    let d = agents_dir().join(format!("work-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn save(name: &str, log: &[Value]) -> PathBuf {
    let dir = agents_dir().join("recorded");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.json"));
    std::fs::write(&p, serde_json::to_vec_pretty(log).unwrap()).unwrap();
    p
}

async fn run(mut cmd: Command) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        let child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let id = child.id();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            if rx.recv_timeout(Duration::from_secs(180)).is_err() {
                // Still running after 3 minutes: end it (by its own pid).
                let _ = Command::new("kill").arg(id.to_string()).status();
            }
        });
        let out = child.wait_with_output().unwrap();
        let _ = tx.send(());
        out
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_receives_and_runs_a_tool_call() {
    let Some(claude) = agent_bin("claude", "@anthropic-ai/claude-code") else {
        return;
    };
    let up = start_upstream(Duration::from_millis(1)).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    let (front, log) = start_recorder(&proxy).await;
    let work = fresh_dir("claude");
    let home = work.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cmd = Command::new(claude);
    cmd.current_dir(&work)
        .env("HOME", &home)
        .env("ANTHROPIC_BASE_URL", &front)
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .args([
            "-p",
            "Write the marker file. scenario:agent",
            "--output-format",
            "stream-json",
            "--verbose",
            "--allowedTools",
            "Bash",
        ]);
    let out = run(cmd).await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let log = log.lock().unwrap().clone();
    let saved = save("claude-code", &log);
    let lines: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let tool_use = lines.iter().any(|l| {
        l["type"] == "assistant"
            && l["message"]["content"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|b| b["type"] == "tool_use" && b["name"] == "Bash")
            })
    });
    assert!(
        tool_use,
        "no tool_use in Claude Code's output (requests in {}):\nstdout: {stdout}\nstderr: {}",
        saved.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let marker = std::fs::read_to_string(work.join("marker.txt")).unwrap_or_default();
    assert_eq!(
        marker.trim(),
        "toolstream-agent-ok",
        "the Bash call did not run:\n{stdout}"
    );
    // The tool result went back through the proxy to the upstream.
    let seen = up.seen.requests.lock().unwrap().clone();
    assert!(
        seen.iter()
            .any(|b| b["messages"].as_array().is_some_and(|m| m
                .iter()
                .any(|m| m["role"] == "tool" && m["tool_call_id"] == "call_scripted_1"))),
        "no tool result reached the upstream"
    );
    // What Claude Code sends, as the issue describes it: `HEAD /`, then
    // `/v1/messages?beta=true` with its attribution line first in the system
    // prompt, which the upstream must not see.
    assert!(log
        .iter()
        .any(|r| r["method"] == "HEAD" && r["path"] == "/"));
    let first = log
        .iter()
        .find(|r| {
            r["path"]
                .as_str()
                .unwrap()
                .starts_with("/v1/messages?beta=true")
        })
        .expect("no /v1/messages?beta=true request");
    assert!(first["body"]["system"][0]["text"]
        .as_str()
        .is_some_and(|t| t.starts_with("x-anthropic-billing-header:")));
    let system: String = seen[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .map(|m| m["content"].as_str().unwrap_or(""))
        .collect();
    assert!(!system.is_empty() && !system.contains("x-anthropic-billing-header"));
    let _ = std::fs::remove_dir_all(&work);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_receives_and_runs_a_tool_call() {
    let Some(codex) = agent_bin("codex", "@openai/codex") else {
        return;
    };
    let up = start_upstream(Duration::from_millis(1)).await;
    let proxy = start_proxy(&up.url(), |_| {}).await;
    let (front, log) = start_recorder(&proxy).await;
    let work = fresh_dir("codex");
    let codex_home = work.join("codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"local\"\nmodel_provider = \"toolstream\"\n\n[model_providers.toolstream]\nname = \"toolstream\"\nbase_url = \"{front}/v1\"\nwire_api = \"responses\"\nenv_key = \"TOOLSTREAM_TEST_KEY\"\n"
        ),
    )
    .unwrap();
    let mut cmd = Command::new(codex);
    cmd.current_dir(&work)
        .env("CODEX_HOME", &codex_home)
        .env("HOME", &work)
        .env("TOOLSTREAM_TEST_KEY", "dummy")
        .args([
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--json",
            "Write the marker file. scenario:agent",
        ]);
    let out = run(cmd).await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let log = log.lock().unwrap().clone();
    let saved = save("codex", &log);
    let marker = std::fs::read_to_string(work.join("marker.txt")).unwrap_or_default();
    assert_eq!(
        marker.trim(),
        "toolstream-agent-ok",
        "Codex did not run the call (requests in {}):\nstdout: {stdout}\nstderr: {}",
        saved.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        log.iter()
            .all(|r| r["method"] != "POST"
                || r["path"].as_str().unwrap().starts_with("/v1/responses"))
    );
    let seen = up.seen.requests.lock().unwrap().clone();
    // Hosted and namespace tools are dropped; developer items are system messages.
    let offered = log[0]["body"]["tools"].as_array().unwrap().len();
    let sent: Vec<&str> = seen[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        sent.len() < offered && sent.contains(&"exec_command"),
        "{sent:?}"
    );
    assert_eq!(seen[0]["messages"][0]["role"], "system");
    assert!(
        seen.iter()
            .any(|b| b["messages"].as_array().is_some_and(|m| m
                .iter()
                .any(|m| m["role"] == "tool" && m["tool_call_id"] == "call_scripted_1"))),
        "no tool result reached the upstream"
    );
    let _ = std::fs::remove_dir_all(&work);
}
