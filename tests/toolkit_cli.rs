//! `toolstream tools …`, `toolstream prompt` and `toolstream models show`:
//! JSON on standard output, losses and errors on standard error, exit codes.
#![cfg(feature = "cli")]

use std::process::Command;

use serde_json::Value;

const TOOLS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/corpus/toolkit/tools/basic.json"
);

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolstream"))
        .args(args)
        .output()
        .expect("the toolstream binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(args: &[&str]) -> Value {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
}

#[test]
fn models_show() {
    let v = json(&["models", "show", "qwen3-coder-30b"]);
    assert_eq!(v["family"], "qwen-coder");
    assert_eq!(v["dialects"][0], "qwen3_coder");
    assert!(v["matched"].as_array().is_some_and(|m| !m.is_empty()));
}

#[test]
fn convert_to_every_format_and_back() {
    for f in [
        "openai",
        "responses",
        "anthropic",
        "gemini",
        "ollama",
        "mcp",
    ] {
        let v = json(&["tools", "convert", "--to", f, TOOLS]);
        let text = v.to_string();
        assert!(text.contains("get_weather"), "{f}");
    }
    let (code, _, err) = run(&["tools", "convert", "--to", "nope", TOOLS]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown format `nope`"));
}

#[test]
fn adapt_strict_and_simplify() {
    let v = json(&["tools", "adapt", "--for", "openai-strict", TOOLS]);
    assert_eq!(v[0]["function"]["strict"], true);
    assert_eq!(
        v[0]["function"]["parameters"]["additionalProperties"],
        false
    );
    let v = json(&["tools", "simplify", "--profile", "gpt-oss-20b", TOOLS]);
    assert_eq!(
        v[0]["function"]["parameters"]["required"],
        serde_json::json!(["command"])
    );
    assert_eq!(
        v[0]["function"]["parameters"]["properties"]
            .as_object()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn audit_and_search() {
    let v = json(&["tools", "audit", "--model", "gemma3:270m", TOOLS]);
    assert_eq!(v["tools"].as_array().unwrap().len(), 4);
    let v = json(&[
        "tools",
        "search",
        "--query",
        "weather in Paris",
        "--top",
        "1",
        TOOLS,
    ]);
    assert_eq!(v["kept"], serde_json::json!(["get_weather"]));
}

#[test]
fn prompt_renders_and_names_bad_input() {
    let (code, out, err) = run(&[
        "prompt", "--tools", TOOLS, "--format", "xml", "--size", "small",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("<tool_call>\n<name>Bash</name>"));
    let (code, _, err) = run(&["prompt", "--tools", TOOLS, "--tool-choice", "Nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("`Nope`"), "{err}");
}
