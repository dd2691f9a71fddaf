//! The CLI behaves the same way in every subcommand: one message prefix
//! (`toolstream <command>:`) and one exit-code scheme, input that is no
//! provider stream or does not match `--from` said so, help that lists
//! what options take, warnings for fallbacks, `-q` / `-v`.
#![cfg(feature = "cli")]

#[path = "common/cli.rs"]
mod cli;

use serde_json::Value;

fn run(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let r = cli::run(args, stdin);
    (r.code, r.stdout_text(), r.stderr)
}

fn stream(name: &str) -> String {
    format!("{}/corpus/streams/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn one_prefix_and_one_exit_code_scheme() {
    for cmd in ["parse", "repair", "decode"] {
        let (code, _, err) = run(&[cmd, "/nonexistent/input"], b"");
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(
            err.starts_with(&format!("toolstream {cmd}: ")),
            "{cmd}: {err}"
        );
        let (code, _, _) = run(&[cmd, "--max-depth", "lots"], b"");
        assert_eq!(code, 2, "{cmd}");
    }
    let (code, _, err) = run(&["repair"], b"no json");
    assert_eq!(code, 1);
    assert!(err.starts_with("toolstream repair: "), "{err}");
}

/// Input that is neither SSE nor NDJSON says so (it said "stream ended
/// before any event") and exits 1; a `--from` the input does not match
/// names what it looks like.
#[test]
fn decode_says_what_the_input_is() {
    let (code, _, err) = run(&["decode"], b"Hello, I am a model output.\n");
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("neither SSE") && err.contains("toolstream parse"),
        "{err}"
    );
    let path = stream("smollm2-chat-tools-forced.sse");
    let (code, _, err) = run(&["decode", "--from", "anthropic", &path], b"");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("looks like openai"), "{err}");
    let (code, _, err) = run(&["decode", "--from", "openai", &path], b"");
    assert_eq!(code, 0, "{err}");
}

/// Re-encoding keeps the model the stream names (it wrote `toolstream`).
#[test]
fn re_encoding_keeps_the_source_model() {
    let path = stream("smollm2-chat-tools-forced.sse");
    for target in ["openai", "anthropic", "responses"] {
        let (code, out, err) = run(&["decode", "--output", target, &path], b"");
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("SmolLM2-135M-Instruct"), "{target}: {out}");
        let (_, out, _) = run(
            &["decode", "--output", target, "--model", "mine", &path],
            b"",
        );
        assert!(
            out.contains("\"mine\"") && !out.contains("SmolLM2"),
            "{target}"
        );
    }
}

#[test]
fn help_lists_dialects_and_hides_the_harness() {
    let (_, out, _) = run(&["parse", "--help"], b"");
    for name in ["hermes", "qwen3_coder", "pythonic", "harmony"] {
        assert!(out.contains(name), "{name} not in parse --help");
    }
    let (_, out, _) = run(&["--help"], b"");
    assert!(!out.contains("harness"), "{out}");
    assert!(out.contains("Exit codes"), "{out}");
    // Hidden, not gone: the benchmark protocol still runs.
    let (code, _, _) = run(&["harness", "--help"], b"");
    assert_eq!(code, 0);
}

/// An unknown `--model` warns once that it fell back to auto-detection;
/// `-q` silences it.
#[test]
fn unknown_models_warn_once() {
    let input = br#"<tool_call>{"name": "f", "arguments": {}}</tool_call>"#;
    let (code, out, err) = run(
        &[
            "parse",
            "--model",
            "acme/unheard-of-7b",
            "--output",
            "calls",
        ],
        input,
    );
    assert_eq!(code, 0);
    assert_eq!(err.matches("warning").count(), 1, "{err}");
    assert!(err.contains("auto-detection"), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["calls"][0]["name"], "f");
    let (_, _, err) = run(&["-q", "parse", "--model", "acme/unheard-of-7b"], input);
    assert!(err.is_empty(), "{err}");
    let (_, _, err) = run(&["parse", "--model", "Qwen/Qwen3-8B"], input);
    assert!(err.is_empty(), "{err}");
}

/// `--tools` that is not a list of tools names the shape expected.
#[test]
fn tools_of_the_wrong_shape_name_the_expected_one() {
    let dir = std::env::temp_dir().join(format!("toolstream-cli-tools-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, bad) in [
        r#"{"get_weather": {"city": "string"}}"#,
        r#"[{"parameters": {}}]"#,
        "42",
        "[1, 2",
    ]
    .iter()
    .enumerate()
    {
        let p = dir.join(format!("tools{i}.json"));
        std::fs::write(&p, bad).unwrap();
        let (code, _, err) = run(&["parse", "--tools", p.to_str().unwrap()], b"x");
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(
            err.contains("expected a JSON list of tools"),
            "{bad}: {err}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Text that is not UTF-8 is printed with U+FFFD and reported.
#[test]
fn invalid_utf8_in_text_is_a_diagnostic() {
    let (code, out, _) = run(&["parse"], b"caf\xe9 au lait");
    assert_eq!(code, 0);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let d = lines
        .iter()
        .find(|e| e["type"] == "diagnostic" && e["kind"] == "invalid_utf8")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(d["message"].as_str().unwrap().contains("byte 3"), "{d}");
}

/// `-v` prints diagnostics and repaired calls on standard error.
#[test]
fn verbose_prints_diagnostics() {
    let input = br#"<tool_call>{"name": "f", "arguments": {"a": 1,,}}</tool_call>"#;
    let (_, _, err) = run(&["-v", "parse"], input);
    assert!(err.contains("repairs extra_comma"), "{err}");
    let (_, _, err) = run(&["parse"], input);
    assert!(err.is_empty(), "{err}");
    let (_, _, err) = run(&["parse", "-v", "--max-held-bytes", "0"], b"{");
    assert!(err.contains("limit_exceeded"), "{err}");
}
