//! `toolstream normalize`, `parse --normalize` and `decode --normalize`,
//! run as a user runs them.

use std::path::PathBuf;

#[path = "common/cli.rs"]
mod cli;

use cli::run;
use serde_json::Value;

fn lines(out: &cli::Run) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("NDJSON line"))
        .collect()
}

fn claude_code() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/tools/claude_code.json")
        .display()
        .to_string()
}

fn write_tmp(name: &str, text: &str) -> String {
    let p = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn normalize_prints_one_line_per_call_and_exits_zero_on_invalid_calls() {
    let input = br#"{"name": "read", "arguments": {"filePath": "/etc/hosts", "limit": "20"}}
{"name": "Edit", "arguments": "{\"file_path\": \"/a\"}"}

{"name": "delete_everything", "input": {}}
"#;
    let out = run(&["normalize", "--tools", &claude_code()], input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let l = lines(&out);
    assert_eq!(l.len(), 3);
    assert_eq!(l[0]["ok"], true);
    assert_eq!(l[0]["call"]["name"], "Read");
    assert_eq!(
        l[0]["call"]["arguments"],
        serde_json::json!({"file_path": "/etc/hosts", "limit": 20})
    );
    assert_eq!(l[0]["repairs"].as_array().unwrap().len(), 3);
    assert!(l[0].get("feedback").is_none());
    assert_eq!(l[1]["ok"], false);
    assert_eq!(l[1]["errors"][0]["kind"], "missing_required");
    assert!(l[1]["feedback"]
        .as_str()
        .unwrap()
        .starts_with("Tool call validation failed."));
    assert_eq!(l[2]["errors"][0]["kind"], "unknown_tool");
}

#[test]
fn normalize_reports_a_bad_line_by_number_and_goes_on() {
    let input = b"{\"name\": \"Bash\", \"arguments\": {\"command\": \"ls\"}}\nnot json\n{\"name\": \"Bash\", \"arguments\": \"ls\"}\n";
    let out = run(&["normalize", "--tools", &claude_code(), "-"], input);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("line 2"));
    let l = lines(&out);
    assert_eq!(l.len(), 3);
    assert_eq!(l[1]["line"], 2);
    assert_eq!(l[2]["ok"], true, "{}", l[2]);
    assert_eq!(l[2]["repairs"][0]["kind"], "bare_value");
}

#[test]
fn a_bad_tools_file_names_the_shapes_it_expected() {
    let tools = write_tmp(
        "not_tools.json",
        r#"{"tools": [{"description": "no name"}]}"#,
    );
    let out = run(&["normalize", "--tools", &tools], b"");
    assert_eq!(out.code, 2);
    let err = &out.stderr;
    assert!(
        err.contains("tools[0]")
            && err.contains("input_schema")
            && err.contains("functionDeclarations"),
        "{err}"
    );
}

#[test]
fn every_tools_file_shape_is_read() {
    let schema =
        r#"{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}"#;
    for (name, text) in [
        (
            "openai.json",
            format!(
                r#"[{{"type": "function", "function": {{"name": "get_weather", "parameters": {schema}}}}}]"#
            ),
        ),
        (
            "responses.json",
            format!(r#"[{{"type": "function", "name": "get_weather", "parameters": {schema}}}]"#),
        ),
        (
            "anthropic.json",
            format!(
                r#"{{"model": "m", "tools": [{{"name": "get_weather", "input_schema": {schema}}}]}}"#
            ),
        ),
        (
            "gemini.json",
            format!(
                r#"{{"tools": [{{"functionDeclarations": [{{"name": "get_weather", "parameters": {schema}}}]}}]}}"#
            ),
        ),
        (
            "mcp.json",
            format!(
                r#"{{"jsonrpc": "2.0", "id": 1, "result": {{"tools": [{{"name": "get_weather", "inputSchema": {schema}}}]}}}}"#
            ),
        ),
        (
            "bare.json",
            format!(r#"{{"name": "get_weather", "parameters": {schema}}}"#),
        ),
    ] {
        let tools = write_tmp(name, &text);
        let out = run(
            &["normalize", "--tools", &tools],
            br#"{"name": "get-weather", "arguments": {"City": "Oslo"}}"#,
        );
        assert_eq!(out.code, 0, "{name}");
        let l = lines(&out);
        assert_eq!(l[0]["ok"], true, "{name}: {}", l[0]);
        assert_eq!(l[0]["call"]["arguments"]["city"], "Oslo", "{name}");
    }
}

#[test]
fn parse_normalize_streams_fixed_calls_with_their_reports() {
    let input = br#"Sure. <tool_call>{"name": "read", "arguments": {"filePath": "/x", "limit": "5"}}</tool_call>"#;
    for chunk in ["1", "7", "4096"] {
        let out = run(
            &[
                "parse",
                "--tools",
                &claude_code(),
                "--normalize",
                "--chunk-size",
                chunk,
            ],
            input,
        );
        assert_eq!(out.code, 0);
        let l = lines(&out);
        let args: String = l
            .iter()
            .filter(|e| e["type"] == "tool_args")
            .map(|e| e["delta"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(args, r#"{"file_path": "/x", "limit": 5}"#, "chunk {chunk}");
        let start = l.iter().find(|e| e["type"] == "tool_start").unwrap();
        assert_eq!(start["name"], "Read");
        let report = l.iter().find(|e| e["type"] == "normalized").unwrap();
        assert_eq!(report["ok"], true);
        assert_eq!(report["repairs"].as_array().unwrap().len(), 3);
    }
    let out = run(
        &[
            "parse",
            "--tools",
            &claude_code(),
            "--normalize",
            "--output",
            "calls",
        ],
        input,
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["calls"][0]["name"], "Read");
    assert_eq!(doc["normalized"][0]["ok"], true);
    assert_eq!(doc["normalized"][0]["index"], 0);
    // --normalize needs --tools.
    assert_ne!(run(&["parse", "--normalize"], input).code, 0);
}

#[test]
fn decode_normalize_rewrites_a_recorded_provider_stream() {
    let capture = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/captures/anthropic_parallel_tool_use.rig.sse");
    if !capture.is_file() {
        eprintln!("SKIPPED: ../shared/captures is not present");
        return;
    }
    let tools = write_tmp(
        "labels.json",
        r#"[{"name": "LookupHarborLabel", "input_schema": {"type": "object", "properties": {}}},
            {"name": "lookupOrchardLabel", "input_schema": {"type": "object", "properties": {}, "required": ["x"]}}]"#,
    );
    let capture = capture.display().to_string();
    let out = run(
        &[
            "decode",
            "--normalize",
            "--tools",
            &tools,
            "--output",
            "calls",
            &capture,
        ],
        b"",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let calls = doc["calls"].as_array().unwrap();
    assert_eq!(calls[0]["name"], "LookupHarborLabel");
    assert_eq!(doc["normalized"][0]["repairs"][0]["kind"], "name_case");
    assert_eq!(calls[1]["name"], "lookupOrchardLabel");
    assert_eq!(
        doc["normalized"][1]["errors"][0]["kind"],
        "missing_required"
    );
    // Re-encoded for another provider, the call carries the resolved name.
    let out = run(
        &[
            "decode",
            "--normalize",
            "--tools",
            &tools,
            "--output",
            "openai",
            &capture,
        ],
        b"",
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("LookupHarborLabel"));
}
