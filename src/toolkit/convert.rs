//! Tool lists between provider formats: OpenAI chat, OpenAI Responses,
//! Anthropic, Gemini `functionDeclarations`, Ollama and MCP.
//!
//! [`read_tools`] accepts any of them (a list, `{"tools": [...]}`, Gemini's
//! `[{"functionDeclarations": [...]}]`) into [`Tool`]s; [`write_tools`]
//! writes them in a target format and reports, per tool and field, what the
//! target cannot say ([`Loss`]). A conversion with an empty loss list is
//! lossless: reading the output back gives the same tools.
//!
//! ```
//! use toolstream::toolkit::convert::{read_tools, write_tools, ToolFormat};
//! let anthropic = serde_json::json!([{
//!     "name": "get_weather",
//!     "description": "Current weather for a city.",
//!     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
//! }]);
//! let tools = read_tools(&anthropic).unwrap();
//! let (openai, losses) = write_tools(&tools, ToolFormat::OpenAi);
//! assert!(losses.is_empty());
//! assert_eq!(openai[0]["function"]["name"], "get_weather");
//! assert_eq!(read_tools(&openai).unwrap(), tools);
//! ```

use std::fmt;

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::adapt;

/// One tool, independent of any provider's format.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Tool {
    /// The name.
    pub name: String,
    /// The description, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of the arguments (an object schema).
    pub parameters: Value,
    /// OpenAI's `strict` flag, where given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// MCP's display `title`, where given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// MCP annotations (`readOnlyHint`, `destructiveHint`, …), where given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Fields of the source no other format has (`cache_control`,
    /// `outputSchema`, …), kept so a conversion back keeps them.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

impl Tool {
    /// A tool with a name, a description and a parameter schema.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Tool {
        Tool {
            name: name.into(),
            description: Some(description.into()),
            parameters,
            ..Tool::default()
        }
    }

    /// The description, or `""`.
    pub fn description(&self) -> &str {
        self.description.as_deref().unwrap_or("")
    }

    /// The schema's `properties` (empty when there are none).
    pub fn properties(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.parameters
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
    }

    /// Whether `param` is listed in the schema's `required`.
    pub fn is_required(&self, param: &str) -> bool {
        self.parameters
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|x| x.as_str() == Some(param)))
    }

    /// The tool as the parser's [`ToolSpec`](crate::ToolSpec).
    pub fn spec(&self) -> crate::ToolSpec {
        crate::ToolSpec {
            name: self.name.clone(),
            parameters: Some(self.parameters.clone()),
        }
    }
}

/// One tool call found in a conversation message ([`message_calls`]).
#[derive(Clone, Debug, PartialEq)]
pub struct MessageCall<'a> {
    /// The call's id (`id`, Anthropic `id`, Responses `call_id`).
    pub id: Option<&'a str>,
    /// The tool's name (empty when the message names none).
    pub name: &'a str,
    /// The arguments: parsed when they are a JSON string, the string
    /// itself when it is not JSON, `null` when absent.
    pub arguments: Value,
}

/// The tool calls a message makes, in any of the shapes clients send: an
/// OpenAI Chat assistant message's `tool_calls`, Anthropic `tool_use`
/// content blocks, a Responses `function_call` item. The one walk over a
/// message's calls that the proxy's emulation transcript, loop detection
/// and tool search share.
///
/// ```
/// use serde_json::json;
/// use toolstream::toolkit::convert::message_calls;
/// let m = json!({"role": "assistant", "tool_calls": [
///     {"id": "c1", "function": {"name": "Bash", "arguments": "{\"command\": \"ls\"}"}}]});
/// let calls = message_calls(&m);
/// assert_eq!((calls[0].id, calls[0].name), (Some("c1"), "Bash"));
/// assert_eq!(calls[0].arguments, json!({"command": "ls"}));
/// ```
pub fn message_calls(m: &Value) -> Vec<MessageCall<'_>> {
    fn parsed(a: Option<&Value>) -> Value {
        match a {
            Some(Value::String(s)) => {
                serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
            }
            Some(other) => other.clone(),
            None => Value::Null,
        }
    }
    let mut out = Vec::new();
    for c in m
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.push(MessageCall {
            id: c.get("id").and_then(Value::as_str),
            name: c
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or(""),
            arguments: parsed(c.pointer("/function/arguments")),
        });
    }
    for b in m
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
    {
        out.push(MessageCall {
            id: b.get("id").and_then(Value::as_str),
            name: b.get("name").and_then(Value::as_str).unwrap_or(""),
            arguments: b.get("input").cloned().unwrap_or(Value::Null),
        });
    }
    if m.get("type").and_then(Value::as_str) == Some("function_call") {
        out.push(MessageCall {
            id: m.get("call_id").and_then(Value::as_str),
            name: m.get("name").and_then(Value::as_str).unwrap_or(""),
            arguments: parsed(m.get("arguments")),
        });
    }
    out
}

/// The parser's [`Tools`](crate::Tools) for a list of tools (for
/// [`crate::Config::with_tools`]).
pub fn parser_tools(tools: &[Tool]) -> crate::Tools {
    crate::Tools::new(tools.iter().map(Tool::spec).collect())
}

/// A provider's tool-list format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ToolFormat {
    /// OpenAI Chat Completions: `{"type":"function","function":{…}}`.
    OpenAi,
    /// OpenAI Responses: `{"type":"function","name",…}`.
    Responses,
    /// Anthropic Messages: `{"name","description","input_schema"}`.
    Anthropic,
    /// Gemini: `[{"functionDeclarations":[…]}]` with OpenAPI-subset schemas.
    Gemini,
    /// Ollama `/api/chat` (OpenAI's shape without `strict`).
    Ollama,
    /// MCP `tools/list`: `{"name","title","description","inputSchema","annotations"}`.
    Mcp,
}

impl ToolFormat {
    /// All formats.
    pub const ALL: [ToolFormat; 6] = [
        ToolFormat::OpenAi,
        ToolFormat::Responses,
        ToolFormat::Anthropic,
        ToolFormat::Gemini,
        ToolFormat::Ollama,
        ToolFormat::Mcp,
    ];

    /// `openai`, `responses`, `anthropic`, `gemini`, `ollama`, `mcp`.
    pub const fn name(self) -> &'static str {
        match self {
            ToolFormat::OpenAi => "openai",
            ToolFormat::Responses => "responses",
            ToolFormat::Anthropic => "anthropic",
            ToolFormat::Gemini => "gemini",
            ToolFormat::Ollama => "ollama",
            ToolFormat::Mcp => "mcp",
        }
    }

    /// Reads a format name.
    pub fn from_name(s: &str) -> Option<ToolFormat> {
        ToolFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s.trim()))
    }
}

impl fmt::Display for ToolFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a conversion could not carry over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Loss {
    /// The tool.
    pub tool: String,
    /// The field (`annotations`, `strict`, `parameters.properties.when.format`, …).
    pub field: String,
    /// Why it was dropped or changed.
    pub reason: String,
}

/// A tool list could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConvertError {
    /// The value is not a list of tools (or an object holding one).
    NotAList,
    /// Tool `index` has no string `name`.
    NoName {
        /// Its position in the list.
        index: usize,
    },
    /// A tool's schema is not an object.
    BadSchema {
        /// The tool.
        tool: String,
        /// The field holding the schema.
        field: &'static str,
    },
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConvertError::NotAList => f.write_str(
                "expected a list of tools, {\"tools\": [...]} or Gemini's functionDeclarations",
            ),
            ConvertError::NoName { index } => write!(f, "tool {index} has no `name`"),
            ConvertError::BadSchema { tool, field } => {
                write!(f, "tool `{tool}`: `{field}` is not a JSON Schema object")
            }
        }
    }
}

impl std::error::Error for ConvertError {}

/// Reads a tool list in any supported format.
pub fn read_tools(value: &Value) -> Result<Vec<Tool>, ConvertError> {
    let items: Vec<&Value> = match value {
        Value::Array(a) => a.iter().collect(),
        Value::Object(o) if o.get("tools").is_some_and(Value::is_array) => {
            return read_tools(&o["tools"])
        }
        Value::Object(o) if o.contains_key("functionDeclarations") => vec![value],
        Value::Object(o) if o.contains_key("name") || o.contains_key("function") => vec![value],
        _ => return Err(ConvertError::NotAList),
    };
    let mut out = Vec::new();
    for item in items {
        // Gemini: a tool object holding declarations.
        if let Some(decls) = item.get("functionDeclarations").and_then(Value::as_array) {
            for d in decls {
                let mut t = read_one(d, out.len())?;
                if d.get("parameters").is_some() {
                    t.parameters = adapt::from_gemini_schema(&t.parameters);
                }
                out.push(t);
            }
            continue;
        }
        out.push(read_one(item, out.len())?);
    }
    Ok(out)
}

const KNOWN: &[&str] = &[
    "type",
    "function",
    "name",
    "description",
    "parameters",
    "input_schema",
    "inputSchema",
    "parametersJsonSchema",
    "strict",
    "title",
    "annotations",
];

fn read_one(item: &Value, index: usize) -> Result<Tool, ConvertError> {
    let outer = item.as_object().ok_or(ConvertError::NoName { index })?;
    let obj = match outer.get("function") {
        Some(Value::Object(f)) => f,
        _ => outer,
    };
    let name = obj
        .get("name")
        .and_then(Value::as_str)
        .ok_or(ConvertError::NoName { index })?
        .to_owned();
    let (field, schema) = [
        "parameters",
        "input_schema",
        "inputSchema",
        "parametersJsonSchema",
    ]
    .iter()
    .find_map(|f| obj.get(*f).map(|s| (*f, s)))
    .unwrap_or(("parameters", &Value::Null));
    let parameters = match schema {
        Value::Null => json!({"type": "object", "properties": {}}),
        Value::Object(_) => schema.clone(),
        _ => return Err(ConvertError::BadSchema { tool: name, field }),
    };
    let mut extra = Map::new();
    for (k, v) in outer.iter().chain(
        if std::ptr::eq(obj, outer) {
            None
        } else {
            Some(obj)
        }
        .into_iter()
        .flatten(),
    ) {
        if !KNOWN.contains(&k.as_str()) {
            extra.insert(k.clone(), v.clone());
        }
    }
    Ok(Tool {
        name,
        description: obj
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned),
        parameters,
        strict: obj.get("strict").and_then(Value::as_bool),
        title: obj.get("title").and_then(Value::as_str).map(str::to_owned),
        annotations: obj.get("annotations").cloned(),
        extra,
    })
}

/// Writes tools in `format`, with what could not be carried over.
pub fn write_tools(tools: &[Tool], format: ToolFormat) -> (Value, Vec<Loss>) {
    let mut losses = Vec::new();
    let mut loss = |t: &Tool, field: &str, reason: &str| {
        losses.push(Loss {
            tool: t.name.clone(),
            field: field.to_owned(),
            reason: reason.to_owned(),
        })
    };
    let mut list = Vec::with_capacity(tools.len());
    let mut decls = Vec::new();
    for t in tools {
        let keeps_strict = matches!(format, ToolFormat::OpenAi | ToolFormat::Responses);
        let keeps_mcp = format == ToolFormat::Mcp;
        if t.strict.is_some() && !keeps_strict {
            loss(t, "strict", "the target has no strict flag");
        }
        if !keeps_mcp {
            if t.annotations.is_some() {
                loss(t, "annotations", "only MCP carries tool annotations");
            }
            if t.title.is_some() {
                loss(t, "title", "only MCP carries a display title");
            }
        }
        let extra_ok = |k: &str| match format {
            ToolFormat::Anthropic => matches!(k, "cache_control"),
            ToolFormat::Mcp => matches!(k, "outputSchema" | "_meta" | "icons"),
            _ => false,
        };
        for k in t.extra.keys() {
            if !extra_ok(k) {
                loss(t, k, "the target format has no such field");
            }
        }
        let mut o = Map::new();
        let put_desc = |o: &mut Map<String, Value>| {
            if let Some(d) = &t.description {
                o.insert("description".into(), Value::String(d.clone()));
            }
        };
        let put_extra = |o: &mut Map<String, Value>| {
            for (k, v) in &t.extra {
                if extra_ok(k) {
                    o.insert(k.clone(), v.clone());
                }
            }
        };
        match format {
            ToolFormat::OpenAi | ToolFormat::Ollama => {
                let mut f = Map::new();
                f.insert("name".into(), Value::String(t.name.clone()));
                put_desc(&mut f);
                f.insert("parameters".into(), t.parameters.clone());
                if format == ToolFormat::OpenAi {
                    if let Some(s) = t.strict {
                        f.insert("strict".into(), Value::Bool(s));
                    }
                }
                o.insert("type".into(), "function".into());
                o.insert("function".into(), Value::Object(f));
            }
            ToolFormat::Responses => {
                o.insert("type".into(), "function".into());
                o.insert("name".into(), Value::String(t.name.clone()));
                put_desc(&mut o);
                o.insert("parameters".into(), t.parameters.clone());
                if let Some(s) = t.strict {
                    o.insert("strict".into(), Value::Bool(s));
                }
            }
            ToolFormat::Anthropic => {
                o.insert("name".into(), Value::String(t.name.clone()));
                put_desc(&mut o);
                o.insert("input_schema".into(), t.parameters.clone());
                put_extra(&mut o);
            }
            ToolFormat::Mcp => {
                o.insert("name".into(), Value::String(t.name.clone()));
                if let Some(title) = &t.title {
                    o.insert("title".into(), Value::String(title.clone()));
                }
                put_desc(&mut o);
                o.insert("inputSchema".into(), t.parameters.clone());
                if let Some(a) = &t.annotations {
                    o.insert("annotations".into(), a.clone());
                }
                put_extra(&mut o);
            }
            ToolFormat::Gemini => {
                o.insert("name".into(), Value::String(t.name.clone()));
                put_desc(&mut o);
                let a = adapt::Provider::Gemini.adapt_schema(&t.parameters);
                for l in a.losses {
                    loss(t, &format!("parameters{}", l.path), &l.reason);
                }
                o.insert("parameters".into(), a.schema);
                decls.push(Value::Object(o));
                continue;
            }
        }
        list.push(Value::Object(o));
    }
    if format == ToolFormat::Gemini {
        return (json!([{ "functionDeclarations": decls }]), losses);
    }
    (Value::Array(list), losses)
}

/// An object schema's `properties`, split into the required ones and the
/// others, each in the schema's order (empty when there are none).
pub(crate) fn split_required(schema: &Value) -> SplitProps<'_> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .partition(|(n, _)| required.contains(&n.as_str()))
}

/// Required and optional properties of a schema, as [`split_required`]
/// gives them.
pub(crate) type SplitProps<'v> = (Vec<(&'v String, &'v Value)>, Vec<(&'v String, &'v Value)>);

#[cfg(test)]
mod tests {
    use super::*;

    fn weather() -> Tool {
        Tool::new(
            "get_weather",
            "Current weather for a city.",
            json!({"type": "object", "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["c", "f"]}
            }, "required": ["city"]}),
        )
    }

    #[test]
    fn every_format_round_trips_a_plain_tool() {
        let tools = vec![weather()];
        for f in ToolFormat::ALL {
            let (v, losses) = write_tools(&tools, f);
            assert!(losses.is_empty(), "{f}: {losses:?}");
            let back = read_tools(&v).unwrap();
            assert_eq!(back, tools, "{f}: {v}");
        }
    }

    #[test]
    fn mcp_annotations_survive_mcp_and_are_reported_elsewhere() {
        let mcp = json!({"tools": [{
            "name": "read_file", "title": "Read file", "description": "Read a file.",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
            "annotations": {"readOnlyHint": true}
        }]});
        let tools = read_tools(&mcp).unwrap();
        assert_eq!(tools[0].annotations, Some(json!({"readOnlyHint": true})));
        let (v, losses) = write_tools(&tools, ToolFormat::Mcp);
        assert!(losses.is_empty());
        assert_eq!(v[0]["annotations"]["readOnlyHint"], true);
        let (_, losses) = write_tools(&tools, ToolFormat::Anthropic);
        let fields: Vec<&str> = losses.iter().map(|l| l.field.as_str()).collect();
        assert_eq!(fields, ["annotations", "title"]);
    }

    #[test]
    fn gemini_reports_what_its_subset_cannot_say() {
        let t = Tool::new(
            "f",
            "d",
            json!({"type": "object", "additionalProperties": false,
                   "properties": {"n": {"type": ["integer", "null"]}}}),
        );
        let (v, losses) = write_tools(&[t], ToolFormat::Gemini);
        let p = &v[0]["functionDeclarations"][0]["parameters"];
        assert_eq!(
            p["properties"]["n"],
            json!({"type": "INTEGER", "nullable": true})
        );
        assert!(losses
            .iter()
            .any(|l| l.field == "parameters.additionalProperties"));
    }

    #[test]
    fn errors_name_the_tool() {
        assert_eq!(
            read_tools(&json!([{"description": "x"}])),
            Err(ConvertError::NoName { index: 0 })
        );
        assert_eq!(
            read_tools(&json!([{"name": "f", "parameters": 3}])),
            Err(ConvertError::BadSchema {
                tool: "f".into(),
                field: "parameters"
            })
        );
        assert_eq!(read_tools(&json!(3)), Err(ConvertError::NotAList));
    }
}
