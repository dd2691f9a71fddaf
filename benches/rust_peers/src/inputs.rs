//! The inputs of the Rust peer comparison and what a correct parse of each
//! gives: the calls (name and arguments as JSON values) and the exact text
//! outside them.

use serde_json::{json, Value};

/// One expected call.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub name: String,
    pub args: Value,
}

/// An input and its expected result.
pub struct Case {
    pub text: String,
    pub calls: Vec<Call>,
    pub prose: String,
    /// A call cut by the end of the stream: its call may be repaired or
    /// dropped, but the text before it must survive.
    pub cut: bool,
}

/// A string argument of `len` bytes with what makes JSON strings costly:
/// quotes, tabs, backslashes, newlines and non-ASCII characters.
pub fn content(len: usize) -> String {
    let line = "He said \"ship it\"\tthen ran C:\\tools\\build.exe — naïve café, 42 ÷ 7 ≈ 6 ✓ {ok} [done]\n";
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

/// Prose without calls, `len` bytes (ASCII; ends with a newline when long enough).
pub fn prose(len: usize) -> String {
    let base = "The quick brown fox jumps over the lazy dog; it was a bright cold day in April, and the clocks were striking thirteen.\n";
    base.chars().cycle().take(len).collect()
}

/// The call object as the Hermes template writes it (`, ` and `: ` separators).
fn call_json(name: &str, args: &Value) -> String {
    format!(
        "{{\"name\": \"{name}\", \"arguments\": {}}}",
        serde_json::to_string(args).expect("json")
    )
}

/// `<tool_call>` + `body` + `</tool_call>`, with the template's newlines or compact.
fn wrap(body: &str, newlines: bool) -> String {
    if newlines {
        format!("<tool_call>\n{body}\n</tool_call>")
    } else {
        format!("<tool_call>{body}</tool_call>")
    }
}

/// One call of `write_file` whose `content` is `len` bytes.
pub fn one_call(len: usize, newlines: bool) -> Case {
    let args = json!({"path": "/tmp/notes.txt", "content": content(len)});
    let lead = "I will write the file now.\n";
    Case {
        text: format!("{lead}{}", wrap(&call_json("write_file", &args), newlines)),
        calls: vec![Call {
            name: "write_file".into(),
            args,
        }],
        prose: lead.into(),
        cut: false,
    }
}

/// `n` small `get_weather` calls, each after ~300 bytes of prose (64 calls: ~22 KB).
pub fn small_calls(n: usize) -> Case {
    let mut text = String::new();
    let mut want = String::new();
    let mut calls = Vec::new();
    for k in 0..n {
        let p = format!("Step {k}: {}", prose(290));
        text.push_str(&p);
        want.push_str(&p);
        let args = json!({"city": format!("Paris {k}"), "unit": "celsius", "days": k % 7});
        text.push_str(&wrap(&call_json("get_weather", &args), true));
        calls.push(Call {
            name: "get_weather".into(),
            args,
        });
    }
    let tail = "Those are all the forecasts.\n";
    text.push_str(tail);
    want.push_str(tail);
    Case {
        text,
        calls,
        prose: want,
        cut: false,
    }
}

/// Prose only.
pub fn prose_only(len: usize) -> Case {
    let p = prose(len);
    Case {
        text: p.clone(),
        calls: vec![],
        prose: p,
        cut: false,
    }
}

fn weather_args() -> Value {
    json!({"city": "Paris", "unit": "celsius", "days": 3})
}

/// A call pretty-printed (a model that writes indented JSON).
pub fn pretty_call() -> Case {
    let args = weather_args();
    let body = serde_json::to_string_pretty(&json!({"name": "get_weather", "arguments": args}))
        .expect("json");
    let lead = "Let me check the weather.\n";
    Case {
        text: format!("{lead}{}", wrap(&body, true)),
        calls: vec![Call {
            name: "get_weather".into(),
            args,
        }],
        prose: lead.into(),
        cut: false,
    }
}

/// `arguments` before `name` (the order the Hermes-2-Pro prompt shows).
pub fn keys_out_of_order() -> Case {
    let args = weather_args();
    let body = format!(
        "{{\"arguments\": {}, \"name\": \"get_weather\"}}",
        serde_json::to_string(&args).expect("json")
    );
    let lead = "Let me check the weather.\n";
    Case {
        text: format!("{lead}{}", wrap(&body, true)),
        calls: vec![Call {
            name: "get_weather".into(),
            args,
        }],
        prose: lead.into(),
        cut: false,
    }
}

/// The stream ends inside a call (`max_tokens` reached).
pub fn cut_at_end() -> Case {
    let lead = "Let me check the weather.\n";
    Case {
        text: format!(
            "{lead}<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Par"
        ),
        calls: vec![Call {
            name: "get_weather".into(),
            args: json!({"city": "Par"}),
        }],
        prose: lead.into(),
        cut: true,
    }
}

/// The OpenAI-format tool list of the synthetic inputs.
pub fn tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "write_file", "parameters": {"type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string"},
                "days": {"type": "integer"}}}}}
    ])
}

/// Splits `text` into pieces of `n` bytes (0: whole), each cut moved back to
/// a character boundary (the peers take `&str`).
pub fn pieces(text: &str, n: usize) -> Vec<&str> {
    if n == 0 {
        return vec![text];
    }
    let mut out = Vec::with_capacity(text.len() / n + 1);
    let mut i = 0;
    while i < text.len() {
        let mut end = (i + n).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        if end == i {
            end = i + n;
            while !text.is_char_boundary(end) {
                end += 1;
            }
        }
        out.push(&text[i..end]);
        i = end;
    }
    out
}
