//! The inputs of the throughput matrix (`benches/matrix.rs`), shared with
//! `benches/profile.rs`, which parses one cell of it under callgrind
//! (`profile matrix:DIALECT CHUNK REPS BYTES`).

use bytes::Bytes;
use toolstream::{Config, Event, Parser};

/// Argument sizes: (label, bytes of the `content` string).
pub(crate) const ARG_SIZES: &[(&str, usize)] =
    &[("100B", 100), ("10KB", 10 << 10), ("1MB", 1 << 20)];

/// A realistic string value of exactly `len` bytes (char-boundary safe).
fn content(len: usize) -> String {
    let line = "Line of a file: the \"quick\" brown fox {jumps} over [the] lazy dog — naïve café, 42 ÷ 7.\n";
    let mut s = String::with_capacity(len + line.len());
    while s.len() < len {
        s.push_str(line);
    }
    let mut cut = len;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    s
}

fn json_args(value: &str) -> String {
    serde_json::json!({"path": "/tmp/notes.txt", "content": value, "n": 3}).to_string()
}

fn py_str(value: &str) -> String {
    let mut out = String::from("'");
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// (dialect label, input) for one argument size.
pub(crate) fn inputs(len: usize) -> Vec<(&'static str, Bytes)> {
    let value = content(len);
    let args = json_args(&value);
    let call = format!("{{\"name\": \"write_file\", \"arguments\": {args}}}");
    let lead = "Sure, I will save the notes now.\n";
    let xml_value = value.replace('<', "(");
    let list = [
        ("hermes", format!("{lead}<tool_call>\n{call}\n</tool_call>")),
        ("json_fence", format!("{lead}```json\n{call}\n```\n")),
        ("json_bare", format!("{lead}{call}\n")),
        (
            "llama3",
            format!("<|python_tag|>{{\"name\": \"write_file\", \"parameters\": {args}}}<|eom_id|>"),
        ),
        ("mistral", format!("[TOOL_CALLS]write_file[ARGS]{args}")),
        (
            "deepseek_v31",
            format!("{lead}<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>write_file<｜tool▁sep｜>{args}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
        ),
        (
            "kimi_k2",
            format!("{lead}<|tool_calls_section_begin|><|tool_call_begin|>functions.write_file:0<|tool_call_argument_begin|>{args}<|tool_call_end|><|tool_calls_section_end|>"),
        ),
        (
            "harmony",
            format!("<|channel|>analysis<|message|>{lead}<|end|><|start|>assistant<|channel|>commentary to=functions.write_file <|constrain|>json<|message|>{args}<|call|>"),
        ),
        (
            "qwen3_coder",
            format!("{lead}<tool_call>\n<function=write_file>\n<parameter=path>\n/tmp/notes.txt\n</parameter>\n<parameter=content>\n{xml_value}\n</parameter>\n<parameter=n>\n3\n</parameter>\n</function>\n</tool_call>"),
        ),
        (
            "gemma4",
            format!("<|tool_call>call:write_file{{path:<|\"|>/tmp/notes.txt<|\"|>,content:<|\"|>{value}<|\"|>,n:3}}<tool_call|>"),
        ),
        (
            "pythonic",
            format!("{lead}[write_file(path='/tmp/notes.txt', content={}, n=3)]", py_str(&value)),
        ),
    ];
    list.into_iter()
        .map(|(d, s)| (d, Bytes::from(s.into_bytes())))
        .collect()
}

/// One parse as the matrix times it: a new parser in auto mode, `input` fed
/// as `Bytes` slices of `chunk` bytes (0: whole), `finish`; returns the
/// argument bytes of the one call, checked (`write_file`, exactly one).
pub(crate) fn run(input: &Bytes, chunk: usize, events: &mut Vec<Event>) -> usize {
    let mut p = Parser::new(Config::default());
    events.clear();
    if chunk == 0 {
        p.feed_bytes(input.clone(), events);
    } else {
        let mut i = 0;
        while i < input.len() {
            let end = (i + chunk).min(input.len());
            p.feed_bytes(input.slice(i..end), events);
            i = end;
        }
    }
    p.finish(events);
    let mut got = 0;
    let mut calls = 0;
    for e in events.iter() {
        if let Event::ToolEnd { call, .. } = e {
            assert_eq!(call.name, "write_file");
            got += call.arguments.len();
            calls += 1;
        }
    }
    assert_eq!(calls, 1, "one call");
    got
}
