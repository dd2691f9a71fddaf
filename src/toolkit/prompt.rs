//! Emulation prompts: the tool list and calling instructions for models
//! without native tool calling (RFC-136 §4, seed 003 approach 2).
//!
//! Four formats ([`EmulationFormat`]): `json` (one fenced JSON call),
//! `compact` (one line per tool, for small contexts and small models),
//! `parallel` (several fenced JSON calls per reply) and `xml`
//! (`<tool_call><name>…</name><arguments>…</arguments></tool_call>`), each
//! in a variant per [`SizeClass`]; 003's guidance block (exact names, all
//! required parameters, correct types, an example); `tool_choice`
//! instructions; and the transcript of earlier calls and results.
//!
//! Two fixes over the seeds. **No placeholders**: the example is a call of
//! an offered tool with plausible values ([`example_call`]) — never
//! `tool_name`/`arg1`/`value1`, which the smallest models copy verbatim.
//! **What the prompt tells the model to write, the parser parses**: every
//! example is written by [`render_call`], and the tests parse it back with
//! [`EmulationFormat::dialect`].
//!
//! ```
//! use serde_json::json;
//! use toolstream::toolkit::prompt::{render, PromptOptions};
//! use toolstream::toolkit::{EmulationFormat, SizeClass, Tool};
//! let tools = vec![Tool::new("get_weather", "Current weather for a city.",
//!     json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}))];
//! let p = render(&tools, &PromptOptions::new(EmulationFormat::Json, SizeClass::Medium));
//! assert!(p.contains(r#"{"tool": "get_weather", "arguments": {"city": "Paris"}}"#));
//! assert!(!p.contains("tool_name") && !p.contains("arg1"));
//! ```

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::adapt::{ToolChoice, ToolResult};
use super::registry::{EmulationFormat, ModelInfo, SizeClass};
use super::simplify::shorten;
use super::Tool;

/// How to render a prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptOptions {
    /// The call format.
    pub format: EmulationFormat,
    /// The size class the wording is for.
    pub size: SizeClass,
    /// What the caller asked of tool use.
    pub tool_choice: ToolChoice,
    /// Include 003's guidance block (default: on for small and medium).
    pub guidance: bool,
    /// Include the example call (default: on).
    pub example: bool,
    /// Longest tool description in the list, in characters (default: 80
    /// small, 200 medium, 1,000 large).
    pub max_description: usize,
    /// Longest parameter description, in characters (default: 60 small,
    /// 100 medium, 300 large).
    pub max_param_description: usize,
}

impl PromptOptions {
    /// The defaults for a format and size class.
    pub fn new(format: EmulationFormat, size: SizeClass) -> PromptOptions {
        let (d, p) = match size {
            SizeClass::Small => (80, 60),
            SizeClass::Medium => (200, 100),
            SizeClass::Large => (1000, 300),
        };
        PromptOptions {
            format,
            size,
            tool_choice: ToolChoice::Auto,
            guidance: size != SizeClass::Large,
            example: true,
            max_description: d,
            max_param_description: p,
        }
    }

    /// The defaults for a model: its emulation format and size class.
    pub fn for_model(m: &ModelInfo) -> PromptOptions {
        PromptOptions::new(m.emulation, m.size_class)
    }

    /// With a `tool_choice`.
    pub fn with_tool_choice(mut self, c: ToolChoice) -> PromptOptions {
        self.tool_choice = c;
        self
    }
}

/// Renders the system-prompt section that offers `tools`.
pub fn render(tools: &[Tool], opts: &PromptOptions) -> String {
    let mut out = String::new();
    let f = opts.format;
    let small = opts.size == SizeClass::Small;
    // 1. How to call.
    match f {
        EmulationFormat::Json => out.push_str(
            "You can call tools. To call a tool, reply with only a JSON block like the example below, and no other text.\n",
        ),
        EmulationFormat::Compact => {
            out.push_str("Tools. To call one, reply with only a JSON object like the example.\n")
        }
        EmulationFormat::Parallel => out.push_str(
            "You can call tools, several in one reply. Write one JSON block per call, like the example below.\n",
        ),
        EmulationFormat::Xml => out.push_str(
            "You can call tools. To call a tool, reply with only a <tool_call> block like the example below, and no other text.\n",
        ),
    }
    // 2. The tools.
    out.push('\n');
    if f == EmulationFormat::Compact {
        for t in tools {
            out.push_str(&compact_line(t, opts));
            out.push('\n');
        }
    } else {
        out.push_str("Available tools:\n");
        for t in tools {
            full_entry(&mut out, t, opts);
        }
    }
    // 3. The example.
    let calls = if opts.example && opts.tool_choice != ToolChoice::None {
        example_calls(tools, &opts.tool_choice, f)
    } else {
        Vec::new()
    };
    if !calls.is_empty() {
        out.push('\n');
        out.push_str(if calls.len() > 1 {
            "Example of two calls:\n"
        } else {
            "Example call:\n"
        });
        out.push_str(&render_calls(f, &calls));
        out.push('\n');
    }
    // 4. Guidance (seed 003).
    if opts.guidance && !tools.is_empty() && opts.tool_choice != ToolChoice::None {
        out.push('\n');
        if small {
            out.push_str("Rules: use the exact tool name; give every required parameter; use the right types.\n");
        } else {
            out.push_str("When calling a tool:\n");
            out.push_str("1. Use the EXACT tool name from the list.\n");
            out.push_str("2. Provide ALL required parameters.\n");
            out.push_str("3. Use correct types (string, number, boolean, array, object).\n");
            out.push_str("4. Optional parameters can be omitted; do not add parameters that are not listed.\n");
            out.push_str(
                "5. After the call, wait for the result; it comes back in the next message.\n",
            );
        }
    }
    // 5. tool_choice.
    out.push('\n');
    out.push_str(&choice_instruction(&opts.tool_choice));
    out.push('\n');
    out
}

/// The instruction for a `tool_choice`.
pub fn choice_instruction(c: &ToolChoice) -> String {
    match c {
        ToolChoice::Auto => "Call a tool only when it helps; otherwise answer normally.".into(),
        ToolChoice::None => "Do not call any tool now; answer in plain text.".into(),
        ToolChoice::Required => "You must call at least one tool in this reply.".into(),
        ToolChoice::Tool(n) => format!("You must call the tool {n} in this reply."),
    }
}

fn type_of(p: &Value) -> String {
    match p.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join("|"),
        _ if p.get("enum").is_some() => "string".into(),
        _ if p.get("properties").is_some() => "object".into(),
        _ => "any".into(),
    }
}

fn compact_line(t: &Tool, opts: &PromptOptions) -> String {
    let params: Vec<String> = t
        .properties()
        .map(|(n, p)| {
            let opt = if t.is_required(n) { "" } else { "?" };
            let en = p
                .get("enum")
                .and_then(Value::as_array)
                .map(|e| {
                    format!(
                        " ({})",
                        e.iter().map(scalar_text).collect::<Vec<_>>().join("|")
                    )
                })
                .unwrap_or_default();
            format!("{n}{opt}: {}{en}", type_of(p))
        })
        .collect();
    let d = shorten(t.description(), opts.max_description);
    if d.is_empty() {
        format!("- {}({})", t.name, params.join(", "))
    } else {
        format!("- {}({}): {d}", t.name, params.join(", "))
    }
}

fn full_entry(out: &mut String, t: &Tool, opts: &PromptOptions) {
    let _ = writeln!(out, "### {}", t.name);
    let d = shorten(t.description(), opts.max_description);
    if !d.is_empty() {
        let _ = writeln!(out, "{d}");
    }
    let props: Vec<(&String, &Value)> = t.properties().collect();
    if props.is_empty() {
        out.push_str("No parameters.\n");
        return;
    }
    out.push_str("Parameters:\n");
    for (n, p) in props {
        let req = if t.is_required(n) { ", required" } else { "" };
        let mut line = format!("- {n} ({}{req})", type_of(p));
        let pd = p.get("description").and_then(Value::as_str).unwrap_or("");
        let pd = shorten(pd, opts.max_param_description);
        if !pd.is_empty() {
            let _ = write!(line, ": {pd}");
        }
        if let Some(e) = p.get("enum").and_then(Value::as_array) {
            let sep = if pd.is_empty() {
                ": "
            } else if pd.ends_with('.') {
                " "
            } else {
                ". "
            };
            let _ = write!(
                line,
                "{sep}One of: {}.",
                e.iter().map(scalar_text).collect::<Vec<_>>().join(", ")
            );
        }
        out.push_str(&line);
        out.push('\n');
    }
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The calls the prompt's example shows for `tools` (what [`render`]
/// writes when the example is on): the named `tool_choice` tool, else the
/// first tool with a required parameter (else the first tool), valued by
/// [`example_call`]; for the parallel format a second, different tool.
pub fn example_calls(
    tools: &[Tool],
    c: &ToolChoice,
    format: EmulationFormat,
) -> Vec<(String, Value)> {
    example_tools(tools, c, format == EmulationFormat::Parallel)
        .into_iter()
        .map(|t| (t.name.clone(), example_call(t)))
        .collect()
}

/// RFC-136's (seed 000 §4) standard prompt, placeholders and all: the
/// `{"tool": "tool_name", "arguments": {"arg1": "value1"}}` block, the
/// tools as `### name`, description and `Parameters:` lines (parameter
/// descriptions cut at 60 characters), and its rules. It is #40's naive
/// baseline for the evaluation (`docs/eval.md`), not a prompt to use: the
/// smallest models copy its placeholders. Calls in it parse with the
/// `json` format's dialect.
pub fn render_naive(tools: &[Tool]) -> String {
    let mut out = String::from(
        "You have access to tools. When you need to use a tool, output ONLY a JSON block:\n\n```json\n{\"tool\": \"tool_name\", \"arguments\": {\"arg1\": \"value1\"}}\n```\n\nAvailable tools:\n",
    );
    for t in tools {
        let _ = writeln!(out, "### {}", t.name);
        let _ = writeln!(out, "{}", t.description());
        let props: Vec<(&String, &Value)> = t.properties().collect();
        if !props.is_empty() {
            out.push_str("Parameters:\n");
            for (n, p) in props {
                let req = if t.is_required(n) { " (required)" } else { "" };
                let d: String = p
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .chars()
                    .take(60)
                    .collect();
                let _ = writeln!(out, "  - {n}{req}: {d}");
            }
        }
        out.push('\n');
    }
    out.push_str("RULES:\n1. Output ONLY the JSON block when calling a tool - no other text\n2. For code tasks, use write_file tool - do NOT output code directly\n3. After tool execution, you'll see the result and can continue\n");
    out
}

/// The tools the example calls: the named `tool_choice` tool, else the
/// first tool with a required parameter (else the first tool); for the
/// parallel format a second, different tool when there is one.
fn example_tools<'a>(tools: &'a [Tool], c: &ToolChoice, two: bool) -> Vec<&'a Tool> {
    let first = match c {
        ToolChoice::Tool(n) => tools.iter().find(|t| &t.name == n),
        _ => None,
    }
    .or_else(|| {
        tools
            .iter()
            .find(|t| t.properties().any(|(n, _)| t.is_required(n)))
    })
    .or(tools.first());
    let Some(first) = first else {
        return Vec::new();
    };
    let mut out = vec![first];
    if two {
        if let Some(second) = tools.iter().find(|t| t.name != first.name) {
            out.push(second);
        }
    }
    out
}

/// Plausible arguments for a call of `tool`: its required parameters (or
/// its first one, when none is required), valued from the schema's
/// `examples`, `default` or `enum`, else by the parameter's name and type.
pub fn example_call(tool: &Tool) -> Value {
    object_example(&tool.parameters, 0)
}

fn object_example(s: &Value, depth: usize) -> Value {
    let mut o = Map::new();
    let (mut chosen, optional) = super::convert::split_required(s);
    if chosen.is_empty() {
        // No required property: the schema's first one (all are optional).
        chosen.extend(optional.first());
    }
    for (n, p) in chosen {
        o.insert((*n).clone(), value_example(n, p, depth + 1));
    }
    Value::Object(o)
}

fn value_example(name: &str, p: &Value, depth: usize) -> Value {
    if let Some(e) = p
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return e.clone();
    }
    if let Some(d) = p.get("default") {
        if !d.is_null() {
            return d.clone();
        }
    }
    if let Some(e) = p
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return e.clone();
    }
    if let Some(c) = p.get("const") {
        return c.clone();
    }
    let n = name.to_ascii_lowercase();
    let ty = type_of(p);
    let ty = ty.split('|').next().unwrap_or("string");
    match ty {
        "integer" => Value::from(match () {
            _ if n.contains("timeout") => 30_000,
            _ if n.contains("port") => 8080,
            _ if n.contains("year") => 2024,
            _ if n.contains("offset") || n.contains("start") => 0,
            _ if n.contains("line") => 1,
            _ => 10,
        }),
        "number" => Value::from(if n.contains("lat") {
            48.85
        } else if n.contains("lon") || n.contains("lng") {
            2.35
        } else if n.contains("temp") {
            0.7
        } else {
            1.5
        }),
        "boolean" => Value::Bool(!n.starts_with("dangerously")),
        "array" if depth < 4 => {
            let item = p.get("items").cloned().unwrap_or(Value::Null);
            let singular = n.trim_end_matches('s');
            Value::Array(vec![value_example(singular, &item, depth + 1)])
        }
        "object" if depth < 4 => object_example(p, depth),
        _ => Value::String(string_example(&n)),
    }
}

fn string_example(n: &str) -> String {
    let pick = |keys: &[&str]| keys.iter().any(|k| n.contains(k));
    let s = if pick(&["command", "cmd", "shell"]) {
        "ls -la"
    } else if pick(&["url", "uri", "link", "endpoint"]) {
        "https://example.com/docs"
    } else if pick(&["dir", "folder", "cwd"]) {
        "/home/user/project/src"
    } else if pick(&["path", "file"]) {
        "/home/user/project/README.md"
    } else if pick(&["pattern", "regex", "glob"]) {
        "*.rs"
    } else if n == "q" || pick(&["query", "search", "keyword"]) {
        "rust async tutorial"
    } else if pick(&["city", "location", "place", "town"]) {
        "Paris"
    } else if pick(&["country"]) {
        "France"
    } else if pick(&["email"]) {
        "ada@example.com"
    } else if pick(&["date", "day"]) {
        "2024-05-01"
    } else if pick(&["time"]) {
        "14:30"
    } else if pick(&["lang"]) {
        "en"
    } else if pick(&["old_string", "old", "find"]) {
        "let x = 1;"
    } else if pick(&["new_string", "replace", "new"]) {
        "let x = 2;"
    } else if pick(&["content", "text", "body", "message", "prompt"]) {
        "Hello from the example."
    } else if pick(&["description", "summary", "reason"]) {
        "List the files in the project"
    } else if pick(&["title", "subject"]) {
        "Weekly report"
    } else if pick(&["name", "user"]) {
        "Ada"
    } else if pick(&["id", "key"]) {
        "42"
    } else if pick(&["unit"]) {
        "celsius"
    } else if pick(&["code", "script", "expression"]) {
        "print(2 + 2)"
    } else {
        "example"
    };
    s.to_owned()
}

/// What a model writes to call `name` with `args` in `format` (the same
/// text the prompt's example shows).
pub fn render_call(format: EmulationFormat, name: &str, args: &Value) -> String {
    render_calls(format, &[(name.to_owned(), args.clone())])
}

/// What a model writes for several calls (one per block).
pub fn render_calls(format: EmulationFormat, calls: &[(String, Value)]) -> String {
    let mut out = String::new();
    for (i, (name, args)) in calls.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match format {
            EmulationFormat::Compact => {
                out.push_str(&json_call(name, args));
            }
            EmulationFormat::Json | EmulationFormat::Parallel => {
                out.push_str("```json\n");
                out.push_str(&json_call(name, args));
                out.push_str("\n```");
            }
            EmulationFormat::Xml => {
                out.push_str("<tool_call>\n<name>");
                out.push_str(&xml_escape(name));
                out.push_str("</name>\n<arguments>\n");
                if let Value::Object(o) = args {
                    for (k, v) in o {
                        let text = match v {
                            Value::String(s) => xml_escape(s),
                            other => xml_escape(&other.to_string()),
                        };
                        let _ = writeln!(out, "<{k}>{text}</{k}>");
                    }
                }
                out.push_str("</arguments>\n</tool_call>");
            }
        }
    }
    out
}

fn json_call(name: &str, args: &Value) -> String {
    // `{"tool": …, "arguments": …}` with spaces after `:` and `,` (easier
    // for small models to copy than serde's compact form).
    format!(
        "{{\"tool\": {}, \"arguments\": {}}}",
        Value::String(name.to_owned()),
        spaced(args)
    )
}

fn spaced(v: &Value) -> String {
    match v {
        Value::Object(o) => {
            let parts: Vec<String> = o
                .iter()
                .map(|(k, x)| format!("{}: {}", Value::String(k.clone()), spaced(x)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(spaced).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One earlier turn of a conversation with prompted tools.
#[derive(Clone, Debug, PartialEq)]
pub enum Turn {
    /// The user's message.
    User(String),
    /// The assistant's text and the calls it made.
    Assistant {
        /// Text before the calls.
        text: String,
        /// The calls, as `(name, arguments)`.
        calls: Vec<(String, Value)>,
    },
    /// A tool's result.
    Result(ToolResult),
}

/// Renders earlier turns as `(role, content)` pairs for a chat template
/// without tool roles: the assistant's calls in the prompt's own format,
/// results as user messages (consecutive results joined in one).
pub fn render_transcript(format: EmulationFormat, turns: &[Turn]) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for t in turns {
        match t {
            Turn::User(s) => out.push(("user", s.clone())),
            Turn::Assistant { text, calls } => {
                let mut s = text.trim_end().to_owned();
                if !calls.is_empty() {
                    if !s.is_empty() {
                        s.push('\n');
                    }
                    s.push_str(&render_calls(format, calls));
                }
                out.push(("assistant", s));
            }
            Turn::Result(r) => {
                let text = r.to_text();
                match out.last_mut() {
                    Some(("user", prev)) if prev.starts_with("[Tool ") => {
                        prev.push_str("\n\n");
                        prev.push_str(&text);
                    }
                    _ => out.push(("user", text)),
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolkit::adapt::ResultContent;
    use serde_json::json;

    fn tools() -> Vec<Tool> {
        vec![
            Tool::new(
                "Bash",
                "Run a shell command.",
                json!({"type": "object", "properties": {
                    "command": {"type": "string"}, "timeout": {"type": "integer"}
                }, "required": ["command"]}),
            ),
            Tool::new(
                "Read",
                "Read a file.",
                json!({"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}),
            ),
        ]
    }

    #[test]
    fn example_uses_an_offered_tool_and_plausible_values() {
        assert_eq!(example_call(&tools()[0]), json!({"command": "ls -la"}));
        assert_eq!(
            example_call(&tools()[1]),
            json!({"file_path": "/home/user/project/README.md"})
        );
        let p = render(
            &tools(),
            &PromptOptions::new(EmulationFormat::Json, SizeClass::Small)
                .with_tool_choice(ToolChoice::Tool("Read".into())),
        );
        assert!(p.contains(
            r#"{"tool": "Read", "arguments": {"file_path": "/home/user/project/README.md"}}"#
        ));
        assert!(p.ends_with("You must call the tool Read in this reply.\n"));
    }

    #[test]
    fn none_has_no_example() {
        let p = render(
            &tools(),
            &PromptOptions::new(EmulationFormat::Xml, SizeClass::Medium)
                .with_tool_choice(ToolChoice::None),
        );
        assert!(!p.contains("<tool_call>\n<name>"));
        assert!(p.contains("Do not call any tool"));
    }

    #[test]
    fn transcript_joins_results() {
        let r = |id: &str| {
            Turn::Result(ToolResult {
                call_id: id.into(),
                name: "Read".into(),
                content: ResultContent::Text("ok".into()),
                is_error: false,
            })
        };
        let t = render_transcript(
            EmulationFormat::Xml,
            &[
                Turn::User("read both".into()),
                Turn::Assistant {
                    text: "Reading.".into(),
                    calls: vec![("Read".into(), json!({"file_path": "a"}))],
                },
                r("c1"),
                r("c2"),
            ],
        );
        assert_eq!(t.len(), 3);
        assert!(t[1].1.starts_with("Reading.\n<tool_call>"));
        assert_eq!(t[2].1.matches("[Tool result").count(), 2);
    }
}
