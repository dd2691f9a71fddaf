//! Reading a tool list in any of the shapes clients send: OpenAI Chat
//! `tools`, OpenAI Responses function tools, Anthropic `tools`
//! (`input_schema`), Gemini `functionDeclarations`, an MCP `tools/list`
//! result (`inputSchema`), or bare `{name, parameters}` — a list, a single
//! tool, or a request body holding `tools`.

use std::fmt;

use serde_json::Value;

use crate::{ToolSpec, Tools};

/// The shape a tool list was recognised as (that of its first tool).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolsShape {
    /// `{"type": "function", "function": {"name", "parameters"}}`.
    OpenAiChat,
    /// `{"type": "function", "name", "parameters"}`.
    OpenAiResponses,
    /// `{"name", "input_schema"}`.
    Anthropic,
    /// `{"functionDeclarations": [{"name", "parameters"}]}`.
    Gemini,
    /// `{"name", "inputSchema"}`, from an MCP `tools/list` result.
    Mcp,
    /// `{"name", "parameters"}`.
    Bare,
}

impl ToolsShape {
    /// A short name for messages.
    pub const fn as_str(self) -> &'static str {
        match self {
            ToolsShape::OpenAiChat => "openai-chat",
            ToolsShape::OpenAiResponses => "openai-responses",
            ToolsShape::Anthropic => "anthropic",
            ToolsShape::Gemini => "gemini",
            ToolsShape::Mcp => "mcp",
            ToolsShape::Bare => "bare",
        }
    }
}

/// The shapes a tools file may have, for error messages.
const EXPECTED: &str = "a list of OpenAI chat tools {\"type\": \"function\", \"function\": {\"name\", \"parameters\"}}, \
OpenAI Responses tools {\"type\": \"function\", \"name\", \"parameters\"}, Anthropic tools {\"name\", \"input_schema\"}, \
Gemini {\"functionDeclarations\": [{\"name\", \"parameters\"}]}, an MCP tools/list result {\"tools\": [{\"name\", \"inputSchema\"}]}, \
or bare {\"name\", \"parameters\"} (a single tool, or a request body holding \"tools\", also works)";

/// A tools file that could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolsFileError {
    /// Not JSON.
    Json(serde_json::Error),
    /// JSON, but not a tool list: `at` says where (`tools[2]`).
    Shape {
        /// Where in the document.
        at: String,
        /// What was wrong there.
        problem: String,
    },
}

impl fmt::Display for ToolsFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolsFileError::Json(e) => write!(f, "tools file is not valid JSON: {e}"),
            ToolsFileError::Shape { at, problem } => {
                write!(f, "tools file: {at}: {problem}; expected {EXPECTED}")
            }
        }
    }
}

impl std::error::Error for ToolsFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ToolsFileError::Json(e) => Some(e),
            ToolsFileError::Shape { .. } => None,
        }
    }
}

fn shape_err(at: impl Into<String>, problem: impl Into<String>) -> ToolsFileError {
    ToolsFileError::Shape {
        at: at.into(),
        problem: problem.into(),
    }
}

/// Reads a tool list in any supported shape.
///
/// ```
/// use toolstream::normalize::{read_tools, ToolsShape};
/// let (tools, shape) = read_tools(r#"{"jsonrpc": "2.0", "id": 1, "result": {"tools": [
///     {"name": "read_file", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}]}}"#).unwrap();
/// assert_eq!(shape, ToolsShape::Mcp);
/// assert_eq!(tools.specs()[0].name, "read_file");
/// let err = read_tools(r#"[{"description": "no name"}]"#).unwrap_err();
/// assert!(err.to_string().contains("input_schema"));
/// ```
pub fn read_tools(text: &str) -> Result<(Tools, ToolsShape), ToolsFileError> {
    let v: Value = serde_json::from_str(text).map_err(ToolsFileError::Json)?;
    read_tools_value(&v)
}

/// Like [`read_tools`], from a parsed document.
pub fn read_tools_value(v: &Value) -> Result<(Tools, ToolsShape), ToolsFileError> {
    let mut doc = v;
    let mut at = String::new();
    if let Some(r) = doc.get("result").filter(|_| doc.get("jsonrpc").is_some()) {
        doc = r;
        at.push_str("result.");
    }
    let items: Vec<&Value> = match doc {
        Value::Array(a) => a.iter().collect(),
        Value::Object(o) => match o.get("tools") {
            Some(Value::Array(a)) => {
                at.push_str("tools");
                a.iter().collect()
            }
            Some(_) => return Err(shape_err(format!("{at}tools"), "is not a list")),
            None => vec![doc],
        },
        _ => return Err(shape_err("top level", "is neither a list nor an object")),
    };
    let mut specs = Vec::new();
    let mut first: Option<ToolsShape> = None;
    for (i, item) in items.iter().enumerate() {
        let here = format!("{at}[{i}]");
        let Value::Object(o) = item else {
            return Err(shape_err(here, "is not an object"));
        };
        let decls = o
            .get("functionDeclarations")
            .or_else(|| o.get("function_declarations"));
        if let Some(decls) = decls {
            let Value::Array(decls) = decls else {
                return Err(shape_err(here, "functionDeclarations is not a list"));
            };
            first.get_or_insert(ToolsShape::Gemini);
            for (j, d) in decls.iter().enumerate() {
                let name = d.get("name").and_then(Value::as_str).ok_or_else(|| {
                    shape_err(format!("{here}.functionDeclarations[{j}]"), "has no name")
                })?;
                let parameters = d
                    .get("parametersJsonSchema")
                    .or_else(|| d.get("parameters"))
                    .cloned();
                specs.push(ToolSpec {
                    name: name.into(),
                    parameters,
                });
            }
            continue;
        }
        let (shape, body) = match o.get("function") {
            Some(f @ Value::Object(_)) => (ToolsShape::OpenAiChat, f),
            _ if o.contains_key("input_schema") => (ToolsShape::Anthropic, *item),
            _ if o.contains_key("inputSchema") => (ToolsShape::Mcp, *item),
            _ if o.get("type").and_then(Value::as_str) == Some("function") => {
                (ToolsShape::OpenAiResponses, *item)
            }
            _ => (ToolsShape::Bare, *item),
        };
        let Some(name) = body.get("name").and_then(Value::as_str) else {
            return Err(shape_err(here, "has no \"name\""));
        };
        let parameters = [
            "parameters",
            "input_schema",
            "inputSchema",
            "parametersJsonSchema",
        ]
        .iter()
        .find_map(|k| body.get(*k))
        .cloned();
        first.get_or_insert(shape);
        specs.push(ToolSpec {
            name: name.into(),
            parameters,
        });
    }
    if specs.is_empty() {
        return Err(shape_err(
            if at.is_empty() {
                "top level".into()
            } else {
                at
            },
            "holds no tool",
        ));
    }
    Ok((Tools::new(specs), first.unwrap_or(ToolsShape::Bare)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_is_recognised() {
        let cases = [
            (
                r#"[{"type":"function","function":{"name":"a","parameters":{"type":"object"}}}]"#,
                ToolsShape::OpenAiChat,
            ),
            (
                r#"{"model":"m","tools":[{"type":"function","function":{"name":"a","parameters":{}}}]}"#,
                ToolsShape::OpenAiChat,
            ),
            (
                r#"[{"type":"function","name":"a","parameters":{"type":"object"}}]"#,
                ToolsShape::OpenAiResponses,
            ),
            (
                r#"[{"name":"a","description":"d","input_schema":{"type":"object"}}]"#,
                ToolsShape::Anthropic,
            ),
            (
                r#"[{"functionDeclarations":[{"name":"a","parameters":{"type":"OBJECT"}}]}]"#,
                ToolsShape::Gemini,
            ),
            (
                r#"{"tools":[{"function_declarations":[{"name":"a"}]}]}"#,
                ToolsShape::Gemini,
            ),
            (
                r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}"#,
                ToolsShape::Mcp,
            ),
            (
                r#"[{"name":"a","parameters":{"type":"object"}}]"#,
                ToolsShape::Bare,
            ),
            (
                r#"{"name":"a","parameters":{"type":"object"}}"#,
                ToolsShape::Bare,
            ),
        ];
        for (text, shape) in cases {
            let (tools, got) = read_tools(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(got, shape, "{text}");
            assert_eq!(tools.specs()[0].name, "a");
        }
    }

    #[test]
    fn errors_name_the_place_and_the_shapes() {
        for (text, place) in [
            ("[1]", "[0]"),
            (r#"{"tools": 3}"#, "tools"),
            (
                r#"[{"description": "x", "parameters": {}, "extra": 1}]"#,
                "[0]",
            ),
            ("[]", "top level"),
            ("7", "top level"),
        ] {
            let e = read_tools(text).unwrap_err().to_string();
            assert!(
                e.contains(place) && e.contains("functionDeclarations"),
                "{text}: {e}"
            );
        }
        assert!(matches!(read_tools("{"), Err(ToolsFileError::Json(_))));
    }
}
