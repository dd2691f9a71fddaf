//! The `toolstream parse` and `toolstream repair` command-line contract
//! (README, "CLI"): the NDJSON event lines and their spans, `--output
//! calls`, chunked feeding, the tool list, exit codes.
#![cfg(feature = "cli")]

#[path = "common/cli.rs"]
mod cli;

use serde_json::{json, Value};

/// Runs the binary with `args` and `stdin`; returns (exit code, stdout, stderr).
fn run(args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    let r = cli::run(args, stdin);
    (r.code, r.stdout, r.stderr)
}

fn lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn span(e: &Value) -> (u64, u64) {
    (
        e["span"][0].as_u64().expect("span start"),
        e["span"][1].as_u64().expect("span end"),
    )
}

/// The event lines keep the library's contracts: text, thinking, tool_end
/// and markup spans tile the input, text is the input's bytes, a call's
/// deltas add up to its arguments.
fn check_events(input: &[u8], ev: &[Value]) {
    let mut at = 0;
    for e in ev {
        match e["type"].as_str().expect("a type") {
            "text" | "thinking" | "tool_end" | "markup" => {
                let (s, t) = span(e);
                assert_eq!(s, at, "tiling gap or overlap at {e}");
                if e["type"] == "text" {
                    assert_eq!(
                        e["text"].as_str().expect("text").as_bytes(),
                        &input[s as usize..t as usize]
                    );
                }
                at = t;
            }
            "tool_start" | "tool_args" | "diagnostic" => {}
            other => panic!("unexpected event type {other}: {e}"),
        }
    }
    assert_eq!(at, input.len() as u64, "the spans do not reach the end");
    for end in ev.iter().filter(|e| e["type"] == "tool_end") {
        let deltas: String = ev
            .iter()
            .filter(|e| e["type"] == "tool_args" && e["index"] == end["index"])
            .map(|e| e["delta"].as_str().expect("delta"))
            .collect();
        let v: Value = serde_json::from_str(&deltas).expect("deltas are JSON");
        assert_eq!(v, end["arguments"]);
    }
}

const HERMES: &str = "<think>Need the weather.</think>Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": 'Tokyo',}}\n</tool_call>";

#[test]
fn events_lines_keep_the_contracts_at_any_chunk_size() {
    let input = HERMES.as_bytes();
    let (code, out, err) = run(&["parse"], input);
    assert_eq!(code, 0, "{err}");
    let whole = lines(&out);
    check_events(input, &whole);
    let types: Vec<&str> = whole.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"thinking"));
    assert!(types.contains(&"tool_start") && types.contains(&"tool_end"));
    let end = whole.iter().find(|e| e["type"] == "tool_end").unwrap();
    assert_eq!(end["name"], "get_weather");
    assert_eq!(end["arguments"], json!({"city": "Tokyo"}));
    assert_eq!(end["truncated"], false);
    let kinds: Vec<&str> = end["repairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["single_quotes", "trailing_comma"]);
    for n in ["1", "3", "64"] {
        let (code, out, _) = run(&["parse", "--chunk-size", n], input);
        assert_eq!(code, 0);
        let ev = lines(&out);
        check_events(input, &ev);
        let ends: Vec<&Value> = ev.iter().filter(|e| e["type"] == "tool_end").collect();
        assert_eq!(ends, vec![end], "--chunk-size {n}");
    }
}

#[test]
fn markup_is_a_line_of_its_own() {
    // Llama 3's end-of-turn token frames text: a markup event, not text.
    let input = b"Hello there.<|eot_id|>";
    let (code, out, _) = run(&["parse"], input);
    assert_eq!(code, 0);
    let ev = lines(&out);
    check_events(input, &ev);
    assert_eq!(
        ev.last().unwrap(),
        &json!({"type": "markup", "span": [12, 22]})
    );
    // The input ends inside the markup that would start the next call of a
    // container: it is reported as markup, with a diagnostic, not dropped.
    let input = b"<tools><name>a</name><args/><name>get_w";
    let (_, out, _) = run(&["parse"], input);
    let ev = lines(&out);
    check_events(input, &ev);
    assert_eq!(ev.last().unwrap()["type"], "markup");
}

#[test]
fn calls_output_chunks_file_and_tools() {
    let dir = std::env::temp_dir().join(format!("toolstream-cli-parse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let chunks = dir.join("chunks.json");
    std::fs::write(
        &chunks,
        serde_json::to_vec(&json!(["[get_weather(", "\"Par", "is\")]"])).unwrap(),
    )
    .unwrap();
    let tools = dir.join("tools.json");
    std::fs::write(
        &tools,
        r#"[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]"#,
    )
    .unwrap();
    let chunks_arg = chunks.to_str().unwrap();
    let tools_arg = tools.to_str().unwrap();
    // Standard input is ignored with --chunks; the tool list names the
    // positional argument.
    let (code, out, err) = run(
        &[
            "parse", "--chunks", chunks_arg, "--tools", tools_arg, "--output", "calls",
        ],
        b"ignored",
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["text"], "");
    assert_eq!(v["thinking"], "");
    assert_eq!(v["calls"][0]["name"], "get_weather");
    assert_eq!(v["calls"][0]["arguments"], json!({"city": "Paris"}));
    assert_eq!(v["calls"][0]["id"], "call_0");
    // Without the tools, a positional-only call in text is not evidence
    // enough (`[see(this)]` is prose): it stays text.
    let (_, out, _) = run(&["parse", "--chunks", chunks_arg, "--output", "calls"], b"");
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["calls"], json!([]));
    assert_eq!(v["text"], "[get_weather(\"Paris\")]");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn exit_codes() {
    // Any input parses (bad bytes included).
    let (code, _, _) = run(&["parse"], b"\xff\xfe{\"name\": ");
    assert_eq!(code, 0);
    // Usage and I/O errors: exit 2 with a message.
    let (code, _, err) = run(&["parse", "--output", "xml"], b"");
    assert_eq!(code, 2);
    assert!(!err.is_empty());
    let (code, _, err) = run(&["parse", "/nonexistent/toolstream-input"], b"");
    assert_eq!(code, 2);
    assert!(err.contains("nonexistent"), "{err}");
    let (code, out, _) = run(&["--version"], b"");
    assert_eq!(code, 0);
    assert!(String::from_utf8_lossy(&out).starts_with("toolstream "));
}

#[test]
fn repair_prints_the_repaired_json() {
    let (code, out, _) = run(
        &["repair", "--chunk-size", "2"],
        b"Here you go: ```json\n{'a': True, \"b\": [1, 2,],",
    );
    assert_eq!(code, 0);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v, json!({"a": true, "b": [1, 2]}));
    // Several top-level values print as an array.
    let (_, out, _) = run(&["repair"], b"{\"a\": 1} then {\"b\": 2}");
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v, json!([{"a": 1}, {"b": 2}]));
    // No JSON: exit 1 with a message.
    let (code, out, err) = run(&["repair"], b"just prose");
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(!err.is_empty());
}

/// The limit flags reach the parser: `--max-repairs 2` lists two repairs and
/// the marker for the rest, `--max-args-bytes 8` cuts the call.
#[test]
fn limit_flags() {
    let input = br#"<tool_call>{"name": "f", "arguments": {"a": "xxxxxxxxxx",,,,,}}</tool_call>"#;
    let (code, out, _) = run(
        &["parse", "--output", "calls", "--max-repairs", "2", "-"],
        input,
    );
    assert_eq!(code, 0);
    let v: Value = serde_json::from_slice(&out).unwrap();
    let kinds: Vec<&str> = v["calls"][0]["repairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["extra_comma", "extra_comma", "repairs_omitted"]);
    assert_eq!(
        v["calls"][0]["arguments"],
        serde_json::json!({"a": "xxxxxxxxxx"})
    );
    let (_, out, _) = run(
        &["parse", "--output", "calls", "--max-args-bytes", "8", "-"],
        input,
    );
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["calls"][0]["truncated"], true);
    assert_eq!(v["calls"][0]["arguments"], serde_json::json!({"a": "x"}));
}

/// `arguments` in the output is the parser's arguments text, not a
/// round trip through floats: a 23-digit id, `1.50` and `-1e3` are
/// written as the model wrote them (a `Value` would print
/// `1.2345678901234568e+22`, `1.5`, `-1000.0`); blanks between tokens are
/// dropped, those inside strings kept, and every event stays one line.
#[test]
fn arguments_are_written_as_they_are() {
    let input = b"<tool_call>{\"name\": \"f\", \"arguments\": {\"id\": 12345678901234567890123,\n  \"x\": 1.50, \"t\": -1e3,\n  \"s\": \"a  b\\\"\\n c\\\\\"}}</tool_call>";
    let want = r#"{"id":12345678901234567890123,"x":1.50,"t":-1e3,"s":"a  b\"\n c\\"}"#;
    for args in [&["parse"][..], &["parse", "--chunk-size", "3"]] {
        let (code, out, _) = run(args, input);
        assert_eq!(code, 0);
        let text = String::from_utf8(out.clone()).unwrap();
        let end = text
            .lines()
            .find(|l| l.contains("\"tool_end\""))
            .expect("a tool_end line");
        assert!(end.contains(&format!("\"arguments\":{want}")), "{end}");
        check_events(input, &lines(&out));
    }
    let (_, out, _) = run(&["parse", "--output", "calls"], input);
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains(&format!("\"arguments\":{want}")), "{text}");
}

/// `repair` never hands back another document as if it were the input:
/// JSON deeper than `--max-depth` exits 1 and says which limit cut it
/// (it printed `[[…]],[]]` and exited 0); within the limits valid JSON
/// comes out byte for byte; the limit options reach `repair`.
#[test]
fn repair_says_when_a_limit_cuts_the_document() {
    let deep = format!("{}{}", "[".repeat(101), "]".repeat(101));
    let (code, out, err) = run(&["repair"], deep.as_bytes());
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("max_depth (100)") && err.contains("--max-depth"),
        "{err}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out).trim_end(),
        format!("{}{}", "[".repeat(100), "]".repeat(100))
    );
    let (code, out, err) = run(&["repair", "--max-depth", "200"], deep.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert_eq!(String::from_utf8_lossy(&out).trim_end(), deep);
    let (code, _, err) = run(
        &["repair", "--max-args-bytes", "8"],
        br#"{"a": "0123456789"}"#,
    );
    assert_eq!(code, 1);
    assert!(err.contains("max_args_bytes"), "{err}");
    let (code, _, err) = run(
        &["repair", "--max-input-bytes", "4"],
        br#"{"a": "0123456789"}"#,
    );
    assert_eq!(code, 1);
    assert!(err.contains("max_input_bytes"), "{err}");
}

/// `--help` shows every limit with its default.
#[test]
fn help_shows_the_limits_and_their_defaults() {
    for cmd in ["parse", "repair", "decode"] {
        let (code, out, _) = run(&[cmd, "--help"], b"");
        assert_eq!(code, 0);
        let help = String::from_utf8_lossy(&out);
        for (flag, default) in [
            ("--max-depth", "[default: 100]"),
            ("--max-args-bytes", "[default: 16MiB]"),
            ("--max-held-bytes", "[default: 1MiB]"),
            ("--max-token-bytes", "[default: 64KiB]"),
            ("--max-tag-bytes", "[default: 1KiB]"),
            ("--max-repairs", "[default: 10000]"),
            ("--max-input-bytes", "[default: none]"),
        ] {
            let at = help
                .find(&format!("{flag} <"))
                .unwrap_or_else(|| panic!("{cmd}: no {flag} in {help}"));
            let rest = &help[at..];
            let line = &rest[..rest[1..].find("\n      -").map_or(rest.len(), |e| e + 1)];
            assert!(line.contains(default), "{cmd} {flag}: {line}");
        }
    }
}

/// Starts `toolstream ARGS` and writes `first` to its standard input,
/// which stays open; returns what it printed within ten seconds, then ends
/// it. A tool that reads all its input before writing prints nothing here.
fn printed_before_eof(args: &[&str], first: &[u8], until: &str) -> String {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    use std::sync::mpsc;
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolstream"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the toolstream binary runs");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(first).expect("write");
    stdin.flush().expect("flush");
    let mut stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains(until) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(bytes) => seen.extend(bytes),
            Err(_) => break,
        }
    }
    drop(stdin);
    child.kill().ok();
    child.wait().ok();
    String::from_utf8_lossy(&seen).into_owned()
}

/// `tail -f log | toolstream parse` shows a call as soon as it is complete:
/// standard input is read as it arrives and every read's events are
/// written and flushed (it read all of its input before printing anything).
/// The same for `decode` and for `repair`'s values.
#[test]
fn output_follows_the_input_as_it_arrives() {
    let out = printed_before_eof(
        &["parse"],
        b"Hi <tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>\n",
        "tool_end",
    );
    assert!(out.contains("\"tool_end\""), "{out:?}");
    let out = printed_before_eof(
        &["parse", "--chunk-size", "1"],
        b"Hi <tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>\n",
        "tool_end",
    );
    assert!(out.contains("\"tool_end\""), "{out:?}");
    let out = printed_before_eof(
        &["decode"],
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"}}]}\n\n",
        "Hello",
    );
    assert!(out.contains("Hello"), "{out:?}");
    let out = printed_before_eof(&["repair"], b"{\"a\": 1} and {'b': 2,} and ", "\"b\"");
    assert!(out.starts_with(r#"[{"a": 1},{"b": 2}"#), "{out:?}");
}
