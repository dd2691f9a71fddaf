//! Request translation: what a client sent (Chat Completions, Anthropic
//! Messages, Responses) → one OpenAI Chat Completions request for the
//! upstream; and the finished reply → the client's non-streaming JSON.
//!
//! Every translator returns an [`UpstreamRequest`]: the upstream body
//! (always `stream: true`, so that one decoding path serves streaming and
//! non-streaming clients alike) and the [`ToolTable`] of the tools the
//! client offered, which maps shortened names back and tells the Responses
//! encoder which tools are freeform (`custom`).

mod anthropic;
mod chat;
pub mod reply;
mod responses;

use std::collections::{HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::error::ProxyError;
use crate::config::ToolSpec;

pub use anthropic::from_messages;
pub use chat::from_chat;
pub use responses::from_responses;

/// How a request is translated (from the proxy's configuration).
#[derive(Clone, Debug)]
pub struct TranslateOptions {
    /// Longest tool name passed upstream.
    pub max_tool_name: usize,
    /// Drop Claude Code's attribution line from the system prompt.
    pub strip_attribution: bool,
}

impl Default for TranslateOptions {
    fn default() -> Self {
        TranslateOptions {
            max_tool_name: 64,
            strip_attribution: true,
        }
    }
}

/// The tools a client offered, with the names the upstream sees.
#[derive(Clone, Debug, Default)]
pub struct ToolTable {
    /// The tools under their client names.
    pub specs: Vec<ToolSpec>,
    /// Upstream (shortened) name → client name, for the names that differ.
    back: HashMap<String, String>,
    /// Client name → upstream name, for the names that differ.
    forth: HashMap<String, String>,
    /// Client names of freeform (`custom`) tools: offered as a function with
    /// one string parameter `input`, answered as `custom_tool_call`.
    pub custom: HashSet<String>,
    /// Tools the client offered that the upstream cannot run (hosted or
    /// server tools), dropped from the request.
    pub dropped: Vec<String>,
}

impl ToolTable {
    /// Registers a tool under its client name; returns the upstream name.
    fn add(&mut self, name: &str, parameters: Option<Value>, max: usize) -> String {
        let up = self.upstream_name(name, max);
        self.specs.push(ToolSpec {
            name: name.to_string(),
            parameters,
        });
        up
    }

    /// The name the upstream sees for `name` (shortened when too long).
    pub fn upstream_name(&mut self, name: &str, max: usize) -> String {
        if let Some(s) = self.forth.get(name) {
            return s.clone();
        }
        let s = shorten(name, max);
        if s != name {
            self.back.insert(s.clone(), name.to_string());
            self.forth.insert(name.to_string(), s.clone());
        }
        s
    }

    /// The client's name for a name the upstream used.
    pub fn client_name<'a>(&'a self, upstream: &'a str) -> &'a str {
        self.back.get(upstream).map_or(upstream, String::as_str)
    }

    /// The name the upstream knows a client's tool by (itself unless shortened).
    pub fn upstream_name_of<'a>(&'a self, client: &'a str) -> &'a str {
        self.forth.get(client).map_or(client, String::as_str)
    }

    /// The tool specs under the names the upstream sees (for the parser).
    pub fn upstream_specs(&self) -> Vec<ToolSpec> {
        self.specs
            .iter()
            .map(|s| ToolSpec {
                name: self.forth.get(&s.name).unwrap_or(&s.name).clone(),
                parameters: s.parameters.clone(),
            })
            .collect()
    }

    /// True when any tool's name was shortened.
    pub fn renamed(&self) -> bool {
        !self.back.is_empty()
    }
}

/// A request ready for the upstream.
#[derive(Clone, Debug)]
pub struct UpstreamRequest {
    /// The Chat Completions body (`model` is set by the server).
    pub body: Map<String, Value>,
    /// The client asked for a stream.
    pub stream: bool,
    /// The model the client named.
    pub client_model: String,
    /// The tools offered.
    pub tools: ToolTable,
}

/// `name`, or a shortened form of it: a prefix and 8 hex digits of a hash
/// of the whole name, so that the same name always gives the same short
/// name (no state: any instance maps it back).
///
/// ```
/// use toolstream::proxy::translate::shorten;
/// assert_eq!(shorten("read_file", 64), "read_file");
/// let long = "mcp__a_very_long_server_name__with_an_even_longer_tool_name_that_goes_on";
/// let s = shorten(long, 64);
/// assert_eq!(s.len(), 64);
/// assert_eq!(s, shorten(long, 64));
/// ```
pub fn shorten(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_string();
    }
    // FNV-1a, 32 bits: stable across builds and platforms.
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    let keep = max.saturating_sub(9);
    let mut end = keep.min(name.len());
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}_{h:08x}", &name[..end])
}

/// The function tool the upstream sees for a freeform tool.
pub(crate) fn custom_as_function(name: &str, description: &str, format: Option<&Value>) -> Value {
    let mut desc = String::from("The whole input, as free text");
    if let Some(f) = format {
        if f.get("type").and_then(Value::as_str) == Some("grammar") {
            let syntax = f.get("syntax").and_then(Value::as_str).unwrap_or("lark");
            if let Some(def) = f.get("definition").and_then(Value::as_str) {
                desc.push_str(&format!(", following this {syntax} grammar:\n{def}"));
            }
        }
    }
    json!({
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {"input": {"type": "string", "description": desc}},
                "required": ["input"],
            },
        },
    })
}

/// Flattens a text-or-parts content value into text (for tool results
/// and system prompts); `None` when a part is not text.
pub(crate) fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => Some(String::new()),
        Value::Array(parts) => {
            let mut out = String::new();
            for p in parts {
                let t = match p {
                    Value::String(s) => s.as_str(),
                    Value::Object(o) => o.get("text").and_then(Value::as_str)?,
                    _ => return None,
                };
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(t);
            }
            Some(out)
        }
        _ => None,
    }
}

/// The parts every client request starts with: the body as an object, the
/// client's `stream` flag and its model name.
pub(crate) fn open_request(body: Value) -> Result<(Map<String, Value>, bool, String), ProxyError> {
    let Value::Object(req) = body else {
        return Err(bad("the request body must be a JSON object"));
    };
    let stream = req.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let client_model = req
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    Ok((req, stream, client_model))
}

/// The client's `tools` list, or an empty one; a 400 when it is not a list.
pub(crate) fn tool_list(req: &Map<String, Value>) -> Result<&[Value], ProxyError> {
    match req.get("tools") {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(ts)) => Ok(ts),
        Some(_) => Err(bad("`tools` must be an array")),
    }
}

/// Registers a client's function tool and returns its upstream (Chat
/// Completions) definition under the upstream name; `parameters` default
/// to an object schema.
pub(crate) fn function_tool(
    tools: &mut ToolTable,
    name: &str,
    parameters: Option<Value>,
    description: Option<&Value>,
    max: usize,
) -> Value {
    let up = tools.add(name, parameters.clone(), max);
    let mut f = json!({"name": up, "parameters": parameters.unwrap_or_else(|| json!({"type": "object", "properties": {}}))});
    if let Some(d) = description {
        f["description"] = d.clone();
    }
    json!({"type": "function", "function": f})
}

/// A tool the upstream cannot run, dropped with a log line.
pub(crate) fn drop_tool(tools: &mut ToolTable, name: Option<&str>, ty: &str, why: &str) {
    let what = name.unwrap_or(ty).to_string();
    tracing::info!(tool = %what, tool_type = ty, "dropping {why} the upstream cannot run");
    tools.dropped.push(what);
}

/// The upstream `tool_choice` naming one tool (its upstream name).
pub(crate) fn named_choice(tools: &mut ToolTable, name: &str, max: usize) -> Value {
    json!({"type": "function", "function": {"name": tools.upstream_name(name, max)}})
}

/// Ends a translation: messages in, streaming on.
pub(crate) fn finish_request(
    mut body: Map<String, Value>,
    messages: Vec<Value>,
    stream: bool,
    client_model: String,
    tools: ToolTable,
) -> UpstreamRequest {
    body.insert("messages".into(), Value::Array(messages));
    set_stream(&mut body);
    UpstreamRequest {
        body,
        stream,
        client_model,
        tools,
    }
}

/// A 400 for a field of the wrong shape.
pub(crate) fn bad(msg: impl Into<String>) -> ProxyError {
    ProxyError::BadRequest(msg.into())
}

/// Copies the sampling fields both APIs share.
pub(crate) fn copy_sampling(from: &Map<String, Value>, to: &mut Map<String, Value>) {
    for k in [
        "temperature",
        "top_p",
        "top_k",
        "seed",
        "presence_penalty",
        "frequency_penalty",
    ] {
        if let Some(v) = from.get(k) {
            if !v.is_null() {
                to.insert(k.into(), v.clone());
            }
        }
    }
}

/// Sets the streaming fields of the upstream body.
pub(crate) fn set_stream(body: &mut Map<String, Value>) {
    body.insert("stream".into(), Value::Bool(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
}
