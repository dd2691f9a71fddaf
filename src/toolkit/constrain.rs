//! Output constraints for emulated tool calls: from the offered tools, a
//! llama.cpp GBNF grammar and a JSON Schema that admit exactly the calls
//! the emulation prompt asks for (issue #49, "constrained emulation").
//!
//! | `tool_choice` | what the constraint admits |
//! |---|---|
//! | `required` | one call of an offered tool with schema-valid arguments (the `parallel` format: one or more) |
//! | a named tool | one call of that tool |
//! | `auto` | a call, or text that does not start like one (a union; [`Constraint::lazy_triggers`] for servers with lazy grammars) |
//! | `none` | nothing: no constraint is made |
//!
//! The call's shape is the prompt's own ([`crate::toolkit::prompt::render_call`]):
//! `{"tool": "NAME", "arguments": {…}}` (fenced for `json`/`parallel`,
//! bare for `compact`), or the `xml` format's `<tool_call>` block. Keys are
//! written in the schema's order with the prompt's spacing (`": "`, `", "`),
//! so what the grammar admits is what the example shows and what the
//! parser reads ([`EmulationFormat::dialect`]).
//!
//! What a grammar cannot say (`pattern`, `format`, numeric bounds, length
//! bounds, `$ref`, `not`, …) is left out of it and listed in
//! [`Constraint::unexpressed`]; the normalizer checks those after the call.
//!
//! Where the request goes: llama.cpp (`llama-server` and
//! `python -m llama_cpp.server`) take the GBNF text as the request's
//! `grammar` field; `llama-server` also takes `json_schema`, and
//! llama-cpp-python `response_format: {"type": "json_object", "schema": …}`;
//! vLLM takes `guided_grammar` / `guided_json`; Ollama takes `format` (a
//! JSON Schema). See [`Constraint::apply`].
//!
//! ```
//! use serde_json::json;
//! use toolstream::toolkit::constrain::{constrain, ConstrainOptions};
//! use toolstream::toolkit::{adapt::ToolChoice, EmulationFormat, Tool};
//! let tools = vec![Tool::new("Bash", "Run a command.", json!({
//!     "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}))];
//! let c = constrain(&tools, &ConstrainOptions::new(EmulationFormat::Compact, ToolChoice::Required)).unwrap();
//! assert!(c.gbnf.starts_with("root ::= call"));
//! assert!(c.gbnf.contains(r#""{\"tool\": \"Bash\", \"arguments\": ""#));
//! ```

use std::collections::BTreeSet;
use std::fmt::{self, Write as _};

use serde_json::{json, Map, Value};

use super::adapt::ToolChoice;
use super::registry::EmulationFormat;
use super::Tool;

/// How to build a constraint.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstrainOptions {
    /// The call format the prompt asks for.
    pub format: EmulationFormat,
    /// What the caller asked of tool use.
    pub tool_choice: ToolChoice,
    /// Admit optional parameters (off: a call has exactly the required
    /// ones, which keeps the smallest models from inventing optional
    /// values; default on).
    pub optional: bool,
    /// Longest string value in characters, where the schema gives no
    /// `maxLength` (`None`: unbounded). Bounds a small model that never
    /// closes a string.
    pub max_string: Option<usize>,
    /// Deepest schema nesting turned into rules; deeper values are any
    /// JSON value (default 8).
    pub max_depth: usize,
    /// Copy constraint: when not empty, a string value (no `const`/`enum`)
    /// is one of these texts — spans of the user's request
    /// ([`request_spans`]) — instead of any string, so the model can only
    /// copy the user's own values (the smallest models otherwise write the
    /// example's values or invent them: `2024-10-31` for "2025-10-31").
    /// Spans longer than a string's `maxLength` (or [`Self::max_string`])
    /// are left out for it; a string none fits stays free. A path or URL
    /// parameter (its name ends in `path`, `url` or `file`) takes only the
    /// spans that look like one ([`path_like`]), when there are any. Not
    /// used by the `xml` format (its values are free text).
    pub spans: Vec<String>,
}

impl ConstrainOptions {
    /// The defaults for a format and `tool_choice`.
    pub fn new(format: EmulationFormat, tool_choice: ToolChoice) -> ConstrainOptions {
        ConstrainOptions {
            format,
            tool_choice,
            optional: true,
            max_string: None,
            max_depth: 8,
            spans: Vec::new(),
        }
    }
}

/// A schema feature the grammar does not enforce (the normalizer does).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unexpressed {
    /// The tool.
    pub tool: String,
    /// JSON Pointer of the schema node inside the tool's parameters.
    pub path: String,
    /// The keyword left out.
    pub keyword: String,
}

/// A constraint for one request.
#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    /// llama.cpp GBNF; the start rule is `root`.
    pub gbnf: String,
    /// A JSON Schema of one call (`{"tool": …, "arguments": …}`), for
    /// servers that take schemas rather than grammars. `None` for the `xml`
    /// format and for `auto` (a schema cannot admit free text).
    pub json_schema: Option<Value>,
    /// Where a lazy grammar starts (`auto` only): the call's opening text.
    /// With `grammar_lazy` (llama-server), [`Constraint::call_gbnf`] applies
    /// from the first trigger on and the text before it is free.
    pub lazy_triggers: Vec<String>,
    /// The grammar of the call alone (without `auto`'s text branch).
    pub call_gbnf: String,
    /// Schema features left to the normalizer.
    pub unexpressed: Vec<Unexpressed>,
}

/// Which upstream server a constraint is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Server {
    /// llama.cpp's C++ `llama-server` (`grammar`, `json_schema`,
    /// `grammar_lazy` with `grammar_triggers`).
    LlamaServer,
    /// llama-cpp-python's `python -m llama_cpp.server` (`grammar`).
    LlamaCppPython,
    /// vLLM (`guided_grammar`, `guided_json`).
    Vllm,
    /// Ollama's OpenAI endpoint (`format`: a JSON Schema).
    Ollama,
}

impl Server {
    /// A short name.
    pub const fn name(self) -> &'static str {
        match self {
            Server::LlamaServer => "llama-server",
            Server::LlamaCppPython => "llama_cpp.server",
            Server::Vllm => "vllm",
            Server::Ollama => "ollama",
        }
    }
}

impl Constraint {
    /// Writes the constraint into a Chat Completions request body for
    /// `server`; returns false when that server cannot take this
    /// constraint (Ollama and `auto`, Ollama and `xml`).
    pub fn apply(&self, server: Server, body: &mut Map<String, Value>) -> bool {
        match server {
            Server::LlamaServer => {
                if self.lazy_triggers.is_empty() {
                    body.insert("grammar".into(), Value::String(self.gbnf.clone()));
                } else {
                    body.insert("grammar".into(), Value::String(self.call_gbnf.clone()));
                    body.insert("grammar_lazy".into(), Value::Bool(true));
                    let triggers: Vec<Value> = self
                        .lazy_triggers
                        .iter()
                        .map(|t| json!({"type": "word", "value": t}))
                        .collect();
                    body.insert("grammar_triggers".into(), Value::Array(triggers));
                }
                true
            }
            Server::LlamaCppPython => {
                body.insert("grammar".into(), Value::String(self.gbnf.clone()));
                true
            }
            Server::Vllm => {
                body.insert("guided_grammar".into(), Value::String(self.gbnf.clone()));
                true
            }
            Server::Ollama => match &self.json_schema {
                Some(s) => {
                    body.insert("format".into(), s.clone());
                    true
                }
                None => false,
            },
        }
    }
}

/// Why no constraint could be made.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConstrainError {
    /// `tool_choice` is `none`: nothing to constrain.
    NoToolUse,
    /// No tool was offered.
    NoTools,
    /// `tool_choice` names a tool that was not offered.
    UnknownTool(String),
}

impl fmt::Display for ConstrainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConstrainError::NoToolUse => f.write_str("tool_choice is none: no call to constrain"),
            ConstrainError::NoTools => f.write_str("no tools offered"),
            ConstrainError::UnknownTool(n) => {
                write!(f, "tool_choice names `{n}`, which is not offered")
            }
        }
    }
}

impl std::error::Error for ConstrainError {}

/// Builds the constraint for `tools` under `opts`.
pub fn constrain(tools: &[Tool], opts: &ConstrainOptions) -> Result<Constraint, ConstrainError> {
    let chosen: Vec<&Tool> = match &opts.tool_choice {
        ToolChoice::None => return Err(ConstrainError::NoToolUse),
        ToolChoice::Tool(n) => vec![tools
            .iter()
            .find(|t| &t.name == n)
            .ok_or_else(|| ConstrainError::UnknownTool(n.clone()))?],
        _ => tools.iter().collect(),
    };
    if chosen.is_empty() {
        return Err(ConstrainError::NoTools);
    }
    let mut g = Gbnf::new(opts);
    let mut alts = Vec::new();
    for (i, t) in chosen.iter().enumerate() {
        g.tool = t.name.clone();
        let rule = format!("call{i}");
        let body = g.tool_call(t, &rule);
        g.rules.push((rule.clone(), body));
        alts.push(rule);
    }
    let call = alts.join(" | ");
    let fmt = opts.format;
    let one = match fmt {
        EmulationFormat::Json | EmulationFormat::Parallel => {
            "\"```json\\n\" call \"\\n```\"".to_string()
        }
        EmulationFormat::Compact | EmulationFormat::Xml => "call".to_string(),
    };
    let calls =
        if fmt == EmulationFormat::Parallel && !matches!(opts.tool_choice, ToolChoice::Tool(_)) {
            format!("{one} (\"\\n\" {one})*")
        } else {
            one
        };
    let mut rules_text = String::new();
    let _ = writeln!(rules_text, "call ::= {call}");
    for (n, b) in &g.rules {
        let _ = writeln!(rules_text, "{n} ::= {b}");
    }
    for (n, b) in g.used_primitives() {
        let _ = writeln!(rules_text, "{n} ::= {b}");
    }
    let call_gbnf = format!("root ::= {calls}\n{rules_text}");
    let (gbnf, lazy_triggers) = if opts.tool_choice == ToolChoice::Auto {
        let opener = match fmt {
            EmulationFormat::Json | EmulationFormat::Parallel => "```json",
            EmulationFormat::Compact => "{\"tool\"",
            EmulationFormat::Xml => "<tool_call>",
        };
        (
            format!("root ::= {calls} | text\ntext ::= [^{{`<\\x00] [^\\x00]*\n{rules_text}"),
            vec![opener.to_string()],
        )
    } else {
        (call_gbnf.clone(), Vec::new())
    };
    let json_schema = if fmt == EmulationFormat::Xml || opts.tool_choice == ToolChoice::Auto {
        None
    } else {
        let one: Vec<Value> = chosen
            .iter()
            .map(|t| {
                json!({"type": "object", "properties": {
                    "tool": {"const": t.name},
                    "arguments": t.parameters,
                }, "required": ["tool", "arguments"], "additionalProperties": false})
            })
            .collect();
        Some(if one.len() == 1 {
            one.into_iter().next().unwrap_or_default()
        } else {
            json!({"anyOf": one})
        })
    };
    Ok(Constraint {
        gbnf,
        json_schema,
        lazy_triggers,
        call_gbnf,
        unexpressed: g.unexpressed.into_iter().collect(),
    })
}

/// A grammar that admits exactly one of `names` (the first step of
/// two-step decoding: pick the tool from a short list, then fill in its
/// arguments under its schema alone).
///
/// ```
/// use toolstream::toolkit::constrain::name_grammar;
/// let g = name_grammar(&["Read", "Bash"]);
/// assert_eq!(g, "root ::= \"Read\" | \"Bash\"\n");
/// ```
pub fn name_grammar<S: AsRef<str>>(names: &[S]) -> String {
    let alts: Vec<String> = names.iter().map(|n| literal(n.as_ref())).collect();
    format!("root ::= {}\n", alts.join(" | "))
}

/// Characters trimmed from the start of a span (opening quotes, brackets).
const SPAN_TRIM_START: &[char] = &[
    '\'', '"', '`', '(', '[', '{', '<', '\u{2018}', '\u{201C}', '\u{AB}',
];
/// Characters trimmed from the end of a span (sentence punctuation, closing
/// quotes; not closing brackets: `print(1)` keeps its `)`).
const SPAN_TRIM_END: &[char] = &[
    '\'', '"', '`', '.', ',', ';', ':', '!', '?', '\u{2019}', '\u{201D}', '\u{BB}',
];

/// The texts a copy constraint ([`ConstrainOptions::spans`]) admits for a
/// request's text: every run of 1 to `max_words` consecutive words
/// (split at white space, joined by one space), with opening quotes and
/// brackets trimmed from its start and sentence punctuation and closing
/// quotes from its end; empty and repeated spans left out, at most
/// `max_spans`, shorter runs first (every single word before any pair).
/// Only the first `max_words * max_spans` words are read.
///
/// ```
/// use toolstream::toolkit::constrain::request_spans;
/// let s = request_spans("Write 'hello world' to hello.txt.", 2, 100);
/// assert!(s.contains(&"hello world".to_string()));
/// assert!(s.contains(&"hello.txt".to_string()));
/// assert!(!s.iter().any(|x| x.ends_with('.') || x.starts_with('\'')));
/// ```
pub fn request_spans(text: &str, max_words: usize, max_spans: usize) -> Vec<String> {
    let words: Vec<&str> = text
        .split_whitespace()
        .take(max_words.saturating_mul(max_spans))
        .collect();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for len in 1..=max_words.min(words.len()) {
        for w in words.windows(len) {
            if out.len() >= max_spans {
                return out;
            }
            let joined = w.join(" ");
            let t = joined
                .trim_start_matches(SPAN_TRIM_START)
                .trim_end_matches(SPAN_TRIM_END);
            if !t.is_empty() && seen.insert(t.to_string()) {
                out.push(t.to_string());
            }
        }
    }
    out
}

/// A span that looks like a path or URL: one word holding a `/` or a `.`
/// that is not its last character (`notes.txt`, `/etc/hosts`,
/// `https://example.com`).
///
/// ```
/// use toolstream::toolkit::constrain::path_like;
/// assert!(path_like("app.js") && path_like("/etc/hosts"));
/// assert!(!path_like("buy milk") && !path_like("done") && !path_like("etc."));
/// ```
pub fn path_like(s: &str) -> bool {
    !s.contains(char::is_whitespace) && (s.contains('/') || s.trim_end_matches('.').contains('.'))
}

/// A parameter that names a file or a URL (by its name).
fn path_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.ends_with("path") || n.ends_with("url") || n.ends_with("file")
}

/// GBNF string literal for `s` (quoted, with `"`, `\` and control
/// characters escaped).
fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON value's text, as a GBNF literal.
fn json_literal(v: &Value) -> String {
    literal(&v.to_string())
}

const PRIMITIVES: &[(&str, &str)] = &[
    ("ws", "[ \\t\\n]{0,8}"),
    ("char", "[^\"\\\\\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])"),
    ("string", "\"\\\"\" char* \"\\\"\""),
    ("integer", "\"-\"? ([0-9] | [1-9] [0-9]{1,15})"),
    ("number", "integer (\".\" [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?"),
    ("boolean", "\"true\" | \"false\""),
    ("null", "\"null\""),
    ("value", "object | array | string | number | boolean | null"),
    ("object", "\"{\" ws (string \":\" ws value (\",\" ws string \":\" ws value)*)? ws \"}\""),
    ("array", "\"[\" ws (value (\",\" ws value)*)? ws \"]\""),
    ("xmltext", "[^<\\x00]*"),
];

/// Which primitives depend on which (to emit only what is used).
fn primitive_deps(name: &str) -> &'static [&'static str] {
    match name {
        "string" => &["char"],
        "number" => &["integer"],
        "value" => &["object", "array", "string", "number", "boolean", "null"],
        "object" => &["ws", "string", "value"],
        "array" => &["ws", "value"],
        _ => &[],
    }
}

const UNEXPRESSED_KEYWORDS: &[&str] = &[
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "not",
    "if",
    "dependentRequired",
    "patternProperties",
    "propertyNames",
    "contains",
    "$ref",
    "allOf",
];

/// An object schema's properties, in order.
type Props<'v> = Vec<(&'v String, &'v Value)>;

struct Gbnf<'o> {
    opts: &'o ConstrainOptions,
    tool: String,
    rules: Vec<(String, String)>,
    used: BTreeSet<&'static str>,
    unexpressed: BTreeSet<Unexpressed>,
}

impl<'o> Gbnf<'o> {
    fn new(opts: &'o ConstrainOptions) -> Gbnf<'o> {
        Gbnf {
            opts,
            tool: String::new(),
            rules: Vec::new(),
            used: BTreeSet::new(),
            unexpressed: BTreeSet::new(),
        }
    }

    fn use_prim(&mut self, name: &'static str) -> String {
        self.used.insert(name);
        name.to_string()
    }

    fn used_primitives(&self) -> Vec<(&'static str, &'static str)> {
        let mut all: BTreeSet<&'static str> = BTreeSet::new();
        let mut stack: Vec<&'static str> = self.used.iter().copied().collect();
        while let Some(n) = stack.pop() {
            if all.insert(n) {
                stack.extend(primitive_deps(n));
            }
        }
        PRIMITIVES
            .iter()
            .filter(|(n, _)| all.contains(n))
            .copied()
            .collect()
    }

    fn note(&mut self, path: &str, keyword: &str) {
        self.unexpressed.insert(Unexpressed {
            tool: self.tool.clone(),
            path: path.to_string(),
            keyword: keyword.to_string(),
        });
    }

    fn tool_call(&mut self, t: &Tool, rule: &str) -> String {
        let args = self.schema(&t.parameters, &format!("{rule}-args"), "", 0, true);
        match self.opts.format {
            EmulationFormat::Xml => {
                let mut s = format!(
                    "\"<tool_call>\\n<name>\" {} \"</name>\\n<arguments>\\n\"",
                    literal_inner(&xml_escape(&t.name))
                );
                s.push(' ');
                s.push_str(&self.xml_args(&t.parameters, &format!("{rule}-x")));
                s.push_str(" \"</arguments>\\n</tool_call>\"");
                s
            }
            _ => format!(
                "{} {args} \"}}\"",
                literal(&format!(
                    "{{\"tool\": {}, \"arguments\": ",
                    Value::String(t.name.clone())
                ))
            ),
        }
    }

    /// XML arguments: one `<k>text</k>` line per (required, then optional)
    /// parameter, values as text.
    fn xml_args(&mut self, schema: &Value, rule: &str) -> String {
        let (req, opt) = self.split_props(schema);
        let text = self.use_prim("xmltext");
        let mut parts = Vec::new();
        for (k, _) in &req {
            parts.push(format!(
                "\"<{k}>\" {text} \"</{k}>\\n\"",
                k = escape_inner(k)
            ));
        }
        if self.opts.optional {
            for (k, _) in &opt {
                parts.push(format!(
                    "(\"<{k}>\" {text} \"</{k}>\\n\")?",
                    k = escape_inner(k)
                ));
            }
        }
        if parts.is_empty() {
            return "\"\"".into();
        }
        let body = parts.join(" ");
        self.rules.push((rule.to_string(), body));
        rule.to_string()
    }

    fn split_props<'v>(&self, schema: &'v Value) -> (Props<'v>, Props<'v>) {
        super::convert::split_required(schema)
    }

    /// The rule text for a value under `schema` (a rule name or an inline
    /// expression); `rule` is the name to give a new rule.
    fn schema(
        &mut self,
        schema: &Value,
        rule: &str,
        path: &str,
        depth: usize,
        top: bool,
    ) -> String {
        let Some(o) = schema.as_object() else {
            // `true` / missing: any value.
            return self.use_prim("value");
        };
        for k in UNEXPRESSED_KEYWORDS {
            if o.contains_key(*k) {
                self.note(path, k);
            }
        }
        if depth > self.opts.max_depth {
            self.note(path, "depth");
            return self.use_prim("value");
        }
        if let Some(c) = o.get("const") {
            return json_literal(c);
        }
        if let Some(Value::Array(e)) = o.get("enum") {
            if e.is_empty() {
                return self.use_prim("value");
            }
            let alts: Vec<String> = e.iter().map(json_literal).collect();
            return format!("({})", alts.join(" | "));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(alts)) = o.get(key) {
                if key == "oneOf" {
                    self.note(path, "oneOf (exclusive)");
                }
                let mut out = Vec::new();
                for (i, a) in alts.iter().enumerate() {
                    let r = format!("{rule}-{i}");
                    out.push(self.schema(a, &r, &format!("{path}/{key}/{i}"), depth + 1, false));
                }
                if out.is_empty() {
                    return self.use_prim("value");
                }
                return format!("({})", out.join(" | "));
            }
        }
        let types: Vec<&str> = match o.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ if o.contains_key("properties") || top => vec!["object"],
            _ if o.contains_key("items") => vec!["array"],
            _ => Vec::new(),
        };
        if types.is_empty() {
            return self.use_prim("value");
        }
        let mut alts = Vec::new();
        for t in &types {
            let x = match *t {
                "string" => self.string(o, path),
                "integer" => self.use_prim("integer"),
                "number" => self.use_prim("number"),
                "boolean" => self.use_prim("boolean"),
                "null" => self.use_prim("null"),
                "array" => self.array(o, rule, path, depth),
                "object" => self.object(o, rule, path, depth),
                _ => self.use_prim("value"),
            };
            alts.push(x);
        }
        if alts.len() == 1 {
            alts.pop().unwrap_or_default()
        } else {
            format!("({})", alts.join(" | "))
        }
    }

    fn string(&mut self, o: &Map<String, Value>, path: &str) -> String {
        let max = o
            .get("maxLength")
            .and_then(Value::as_u64)
            .map(|m| m as usize)
            .or(self.opts.max_string);
        let key = path.rsplit_once("/properties/").map_or("", |(_, k)| k);
        let rule = if path_param(key) {
            self.span_rule(max, true)
                .or_else(|| self.span_rule(max, false))
        } else {
            self.span_rule(max, false)
        };
        if let Some(rule) = rule {
            return rule;
        }
        match max {
            None => self.use_prim("string"),
            Some(m) => {
                self.use_prim("char");
                format!("\"\\\"\" char{{0,{m}}} \"\\\"\"")
            }
        }
    }

    /// The rule admitting the copy constraint's spans of at most `max`
    /// characters (one rule per bound; `paths`: the path-like ones only),
    /// or `None` when there are none.
    fn span_rule(&mut self, max: Option<usize>, paths: bool) -> Option<String> {
        let max = max.unwrap_or(usize::MAX);
        let base = if paths { "pathspan" } else { "span" };
        let name = if max == usize::MAX {
            base.to_string()
        } else {
            format!("{base}{max}")
        };
        if self.rules.iter().any(|(n, _)| *n == name) {
            return Some(name);
        }
        let alts: Vec<String> = self
            .opts
            .spans
            .iter()
            .filter(|s| s.chars().count() <= max && (!paths || path_like(s)))
            .map(|s| literal(&Value::String(s.clone()).to_string()))
            .collect();
        if alts.is_empty() {
            return None;
        }
        self.rules.push((name.clone(), alts.join(" | ")));
        Some(name)
    }

    fn array(&mut self, o: &Map<String, Value>, rule: &str, path: &str, depth: usize) -> String {
        let item = match o.get("items") {
            Some(s) => self.schema(
                s,
                &format!("{rule}-item"),
                &format!("{path}/items"),
                depth + 1,
                false,
            ),
            None => self.use_prim("value"),
        };
        let body = format!("\"[\" ({item} (\", \" {item})*)? \"]\"");
        self.rules.push((rule.to_string(), body));
        rule.to_string()
    }

    fn object(&mut self, o: &Map<String, Value>, rule: &str, path: &str, depth: usize) -> String {
        let schema = Value::Object(o.clone());
        let (req, opt) = self.split_props(&schema);
        if req.is_empty() && opt.is_empty() {
            // No properties: any object (or `{}` when closed).
            if o.get("additionalProperties") == Some(&Value::Bool(false)) {
                return "\"{}\"".into();
            }
            return self.use_prim("object");
        }
        let kv = |g: &mut Self, i: usize, k: &String, v: &Value| -> String {
            let r = format!("{rule}-{i}{}", rule_name(k));
            let val = g.schema(v, &r, &format!("{path}/properties/{k}"), depth + 1, false);
            format!(
                "{} {val}",
                literal(&format!("{}: ", Value::String(k.clone())))
            )
        };
        let req_parts: Vec<String> = req
            .iter()
            .enumerate()
            .map(|(i, (k, v))| kv(self, i, k, v))
            .collect();
        let opt_parts: Vec<String> = if self.opts.optional {
            opt.iter()
                .enumerate()
                .map(|(i, (k, v))| kv(self, req.len() + i, k, v))
                .collect()
        } else {
            Vec::new()
        };
        let mut body = String::from("\"{\" ");
        if !req_parts.is_empty() {
            body.push_str(&req_parts.join(" \", \" "));
            for p in &opt_parts {
                let _ = write!(body, " (\", \" {p})?");
            }
        } else if !opt_parts.is_empty() {
            // All optional: any subset in order, comma-separated.
            let n = opt_parts.len();
            let tail_names: Vec<String> = (0..n).map(|i| format!("{rule}-opt{i}")).collect();
            for i in 0..n {
                // optI ::= partI (", " partJ)? ... as a chain: partI tail(I+1)
                let tail = if i + 1 < n {
                    format!(" (\", \" {})?", tail_names[i + 1])
                } else {
                    String::new()
                };
                let alt = if i + 1 < n {
                    format!(" | {}", tail_names[i + 1])
                } else {
                    String::new()
                };
                self.rules.push((
                    tail_names[i].clone(),
                    format!("{}{tail}{alt}", opt_parts[i]),
                ));
            }
            let _ = write!(body, "{}?", tail_names[0]);
        }
        body.push_str(" \"}\"");
        self.rules.push((rule.to_string(), body));
        rule.to_string()
    }
}

/// A rule-name-safe form of a property name (GBNF names: `[a-zA-Z0-9-]`).
fn rule_name(k: &str) -> String {
    k.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn escape_inner(s: &str) -> String {
    let l = literal(s);
    l[1..l.len() - 1].to_string()
}

fn literal_inner(s: &str) -> String {
    literal(s)
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<Tool> {
        vec![
            Tool::new(
                "Bash",
                "Run a shell command.",
                json!({"type": "object", "properties": {
                    "command": {"type": "string", "pattern": "^.+$"},
                    "timeout": {"type": "integer", "maximum": 600000}
                }, "required": ["command"]}),
            ),
            Tool::new(
                "get_weather",
                "Weather for a city.",
                json!({"type": "object", "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                    "days": {"type": ["integer", "null"]},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "opts": {"type": "object", "properties": {"a b": {"type": "boolean"}}}
                }}),
            ),
        ]
    }

    fn rules(g: &str) -> Vec<(&str, &str)> {
        g.lines()
            .filter(|l| !l.is_empty())
            .map(|l| l.split_once(" ::= ").expect("every line is a rule"))
            .collect()
    }

    /// Every rule referenced is defined once; names are GBNF names.
    fn well_formed(g: &str) {
        let rs = rules(g);
        let names: Vec<&str> = rs.iter().map(|(n, _)| *n).collect();
        let mut uniq = names.clone();
        uniq.sort_unstable();
        uniq.dedup();
        assert_eq!(uniq.len(), names.len(), "duplicate rule in\n{g}");
        for n in &names {
            assert!(
                n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
                "{n}"
            );
        }
        for (_, body) in &rs {
            // Strip literals and character classes, then every word is a rule.
            let mut s = String::new();
            let mut chars = body.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '"' => {
                        while let Some(d) = chars.next() {
                            if d == '\\' {
                                chars.next();
                            } else if d == '"' {
                                break;
                            }
                        }
                        s.push(' ');
                    }
                    '[' => {
                        while let Some(d) = chars.next() {
                            if d == '\\' {
                                chars.next();
                            } else if d == ']' {
                                break;
                            }
                        }
                        s.push(' ');
                    }
                    '{' => {
                        for d in chars.by_ref() {
                            if d == '}' {
                                break;
                            }
                        }
                    }
                    c => s.push(c),
                }
            }
            for w in s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
                if !w.is_empty() {
                    assert!(names.contains(&w), "undefined rule `{w}` in\n{g}");
                }
            }
        }
    }

    #[test]
    fn required_call_grammar_is_closed_and_complete() {
        for f in EmulationFormat::ALL {
            for choice in [
                ToolChoice::Required,
                ToolChoice::Auto,
                ToolChoice::Tool("get_weather".into()),
            ] {
                let c = constrain(&tools(), &ConstrainOptions::new(f, choice.clone())).unwrap();
                well_formed(&c.gbnf);
                well_formed(&c.call_gbnf);
                assert_eq!(c.lazy_triggers.is_empty(), choice != ToolChoice::Auto);
                assert_eq!(
                    c.json_schema.is_some(),
                    f != EmulationFormat::Xml && choice != ToolChoice::Auto
                );
                let named = matches!(choice, ToolChoice::Tool(_));
                assert_eq!(c.gbnf.contains("Bash"), !named, "{f} {choice:?}");
            }
        }
    }

    #[test]
    fn shapes_follow_the_prompt() {
        let c = constrain(
            &tools(),
            &ConstrainOptions::new(EmulationFormat::Json, ToolChoice::Required),
        )
        .unwrap();
        assert!(
            c.gbnf
                .starts_with("root ::= \"```json\\n\" call \"\\n```\"\n"),
            "{}",
            c.gbnf
        );
        assert!(c
            .gbnf
            .contains(r#""{\"tool\": \"get_weather\", \"arguments\": ""#));
        // Required first, optional after with the prompt's spacing.
        assert!(
            c.gbnf.contains(
                r#"call0-args ::= "{" "\"command\": " string (", " "\"timeout\": " integer)? "}""#
            ),
            "{}",
            c.gbnf
        );
        // All-optional object: a chain of optional parts.
        assert!(
            c.gbnf
                .contains("call1-args ::= \"{\" call1-args-opt0? \"}\""),
            "{}",
            c.gbnf
        );
        assert!(c.gbnf.contains(r#"("\"celsius\"" | "\"fahrenheit\"")"#));
        assert!(c.gbnf.contains("(integer | null)"));
        let p = constrain(
            &tools(),
            &ConstrainOptions::new(EmulationFormat::Parallel, ToolChoice::Required),
        )
        .unwrap();
        assert!(p.gbnf.starts_with(
            "root ::= \"```json\\n\" call \"\\n```\" (\"\\n\" \"```json\\n\" call \"\\n```\")*"
        ));
        let x = constrain(
            &tools(),
            &ConstrainOptions::new(EmulationFormat::Xml, ToolChoice::Tool("Bash".into())),
        )
        .unwrap();
        assert!(
            x.gbnf.contains(r#""<command>" xmltext "</command>\n""#),
            "{}",
            x.gbnf
        );
        let a = constrain(
            &tools(),
            &ConstrainOptions::new(EmulationFormat::Compact, ToolChoice::Auto),
        )
        .unwrap();
        assert!(a.gbnf.starts_with("root ::= call | text\n"));
        assert_eq!(a.lazy_triggers, vec!["{\"tool\"".to_string()]);
    }

    #[test]
    fn no_optional_and_bounded_strings() {
        let mut o = ConstrainOptions::new(EmulationFormat::Compact, ToolChoice::Required);
        o.optional = false;
        o.max_string = Some(120);
        let c = constrain(&tools(), &o).unwrap();
        assert!(!c.gbnf.contains("timeout"));
        assert!(c.gbnf.contains("char{0,120}"));
        well_formed(&c.gbnf);
    }

    #[test]
    fn copy_constraint_admits_only_the_requests_spans() {
        let mut o = ConstrainOptions::new(EmulationFormat::Compact, ToolChoice::Required);
        o.optional = false;
        o.max_string = Some(12);
        o.spans = request_spans("Show the calendar for 2025-08-08, \"please\".", 3, 100);
        assert!(o.spans.contains(&"2025-08-08".to_string()));
        assert!(o.spans.contains(&"please".to_string()));
        assert!(o.spans.contains(&"for 2025-08-08".to_string()));
        let c = constrain(&tools(), &o).unwrap();
        well_formed(&c.gbnf);
        // Strings are spans (of at most 12 characters here); enums stay.
        assert!(c.gbnf.contains(r#""\"2025-08-08\"""#), "{}", c.gbnf);
        assert!(!c.gbnf.contains("for 2025-08-08"), "{}", c.gbnf);
        assert!(!c.gbnf.contains("char{0,12}"), "{}", c.gbnf);
        // A quote inside a span is escaped twice: JSON, then GBNF.
        let mut q = o.clone();
        q.spans = vec!["say \"hi\"".into()];
        q.max_string = None;
        let c = constrain(&tools(), &q).unwrap();
        assert!(
            c.gbnf.contains(r#"span ::= "\"say \\\"hi\\\"\"""#),
            "{}",
            c.gbnf
        );
        // A path parameter takes the path-like spans only.
        let files = vec![Tool::new(
            "Write",
            "",
            json!({"type": "object", "properties": {"file_path": {"type": "string"},
                "content": {"type": "string"}}, "required": ["file_path", "content"]}),
        )];
        let mut w = ConstrainOptions::new(EmulationFormat::Compact, ToolChoice::Required);
        w.spans = request_spans("Create a file todo.md containing 'buy milk'.", 3, 100);
        let c = constrain(&files, &w).unwrap();
        well_formed(&c.gbnf);
        assert!(
            c.gbnf
                .contains(r#""\"file_path\": " pathspan ", " "\"content\": " span"#),
            "{}",
            c.gbnf
        );
        assert!(
            c.gbnf.contains(r#"pathspan ::= "\"todo.md\"""#),
            "{}",
            c.gbnf
        );
        // No span fits: the string stays free.
        q.max_string = Some(3);
        let c = constrain(&tools(), &q).unwrap();
        assert!(c.gbnf.contains("char{0,3}"), "{}", c.gbnf);
    }

    #[test]
    fn spans_are_bounded() {
        let text = "a b c d e f g h i j";
        assert_eq!(request_spans(text, 3, 1000).len(), 10 + 9 + 8);
        assert_eq!(request_spans(text, 3, 5).len(), 5);
        assert!(request_spans(text, 0, 5).is_empty());
        assert_eq!(request_spans(text, usize::MAX, usize::MAX).len(), 55);
        assert!(request_spans("'' . ,", 2, 10).iter().all(|x| !x.is_empty()));
    }

    #[test]
    fn unexpressed_features_are_listed() {
        let c = constrain(
            &tools(),
            &ConstrainOptions::new(EmulationFormat::Compact, ToolChoice::Required),
        )
        .unwrap();
        let kws: Vec<(&str, &str, &str)> = c
            .unexpressed
            .iter()
            .map(|u| (u.tool.as_str(), u.path.as_str(), u.keyword.as_str()))
            .collect();
        assert_eq!(
            kws,
            vec![
                ("Bash", "/properties/command", "pattern"),
                ("Bash", "/properties/timeout", "maximum"),
            ]
        );
    }

    #[test]
    fn errors() {
        let o = ConstrainOptions::new(EmulationFormat::Json, ToolChoice::None);
        assert_eq!(constrain(&tools(), &o), Err(ConstrainError::NoToolUse));
        let o = ConstrainOptions::new(EmulationFormat::Json, ToolChoice::Required);
        assert_eq!(constrain(&[], &o), Err(ConstrainError::NoTools));
        let o = ConstrainOptions::new(EmulationFormat::Json, ToolChoice::Tool("Nope".into()));
        assert_eq!(
            constrain(&tools(), &o),
            Err(ConstrainError::UnknownTool("Nope".into()))
        );
    }

    #[test]
    fn apply_per_server() {
        let c = constrain(
            &tools(),
            &ConstrainOptions::new(EmulationFormat::Compact, ToolChoice::Auto),
        )
        .unwrap();
        let mut b = Map::new();
        assert!(c.apply(Server::LlamaServer, &mut b));
        assert_eq!(b["grammar_lazy"], true);
        assert_eq!(b["grammar"], c.call_gbnf.as_str());
        let mut b = Map::new();
        assert!(c.apply(Server::LlamaCppPython, &mut b));
        assert_eq!(b["grammar"], c.gbnf.as_str());
        assert!(!c.apply(Server::Ollama, &mut Map::new()));
        let r = constrain(
            &tools(),
            &ConstrainOptions::new(EmulationFormat::Compact, ToolChoice::Required),
        )
        .unwrap();
        let mut b = Map::new();
        assert!(r.apply(Server::Ollama, &mut b));
        assert_eq!(
            b["format"]["anyOf"][0]["properties"]["tool"]["const"],
            "Bash"
        );
    }
}
