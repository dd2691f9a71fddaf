//! `toolstream harness`: the peer-harness JSON format used by
//! `benches/peers/compare.py` (one input from standard input, and `--serve`).

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

fn run(args: &[&str], stdin: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolstream"))
        .arg("harness")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run toolstream");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success());
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

const CALL: &str = "Sure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {'city': 'Paris',}}\n</tool_call>";

#[test]
fn harness_prints_the_peer_format_with_timings() {
    let v: Value =
        serde_json::from_str(&run(&["--chunk", "4", "--repeat", "3"], CALL)).expect("JSON");
    assert_eq!(v["mode"], "stream(chunk=4)");
    assert_eq!(v["ok"], true);
    assert_eq!(v["n_chunks"], CALL.len().div_ceil(4));
    assert_eq!(v["result"]["content"], "Sure.\n");
    let calls = v["result"]["tool_calls"].as_array().expect("calls");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["name"], "get_weather");
    assert_eq!(calls[0]["arguments"], serde_json::json!({"city": "Paris"}));
    assert_eq!(v["timing_ms"]["runs"], 3);
    assert!(v["timing_ms"]["parse_median"].as_f64().expect("median") >= 0.0);
}

#[test]
fn harness_serve_answers_one_line_per_request() {
    let req1 = serde_json::json!({"input": CALL, "chunk": 0, "repeat": 2}).to_string();
    let req2 = serde_json::json!({"input": "[f(a=1)]", "dialect": "pythonic",
        "tools": [{"name": "f", "parameters": {"type": "dict", "properties": {"a": {"type": "integer"}}}}]})
    .to_string();
    let out = run(&["--serve"], &format!("{req1}\n{req2}\n"));
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["mode"], "whole");
    assert_eq!(lines[0]["timing_ms"]["runs"], 2);
    assert_eq!(lines[1]["result"]["tool_calls"][0]["name"], "f");
    assert_eq!(
        lines[1]["result"]["tool_calls"][0]["arguments"],
        serde_json::json!({"a": 1})
    );
}
