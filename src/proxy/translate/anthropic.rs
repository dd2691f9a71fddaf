//! Anthropic Messages in → Chat Completions upstream.
//!
//! | Messages | Chat Completions |
//! |---|---|
//! | `system` (string or text blocks), `role: "system"` entries in `messages` | `system` messages |
//! | user `text` / `image` blocks | user content parts (`image` as a data: or https: `image_url`) |
//! | user `tool_result` (string or block list, `is_error`) | a `tool` message before the user's other content (`is_error` prefixes `Error: `; images follow as a user message) |
//! | assistant `text`, `thinking`, `tool_use` | assistant `content`, `reasoning_content`, `tool_calls` |
//! | `tools` (custom tools) | function tools; server tools (`web_search_…`, `bash_…`, …) dropped with a log line |
//! | `tool_choice` auto / any / tool / none, `disable_parallel_tool_use` | `auto` / `required` / the function / `none`, `parallel_tool_calls: false` |
//! | `stop_sequences`, `max_tokens`, `temperature`, `top_p`, `top_k` | `stop`, `max_tokens`, … |
//!
//! `thinking`, `metadata`, `context_management`, `output_config`,
//! `cache_control` and other fields a local server has no use for are
//! ignored. A content block the upstream cannot take (a PDF `document`,
//! …) is a 400.

use serde_json::{json, Map, Value};

use super::{
    bad, copy_sampling, drop_tool, finish_request, function_tool, named_choice, open_request,
    text_of, ToolTable, TranslateOptions, UpstreamRequest,
};
use crate::proxy::error::ProxyError;

/// The prefix of Claude Code's per-request attribution line.
pub(crate) const ATTRIBUTION: &str = "x-anthropic-billing-header:";

/// Translates an Anthropic Messages request.
///
/// ```
/// use serde_json::json;
/// use toolstream::proxy::translate::{from_messages, TranslateOptions};
/// let r = from_messages(json!({"model": "claude", "max_tokens": 64, "system": "Be brief.",
///     "messages": [{"role": "user", "content": "hi"}]}), &TranslateOptions::default()).unwrap();
/// assert_eq!(r.body["messages"][0], json!({"role": "system", "content": "Be brief."}));
/// assert_eq!(r.body["max_tokens"], json!(64));
/// ```
pub fn from_messages(body: Value, opts: &TranslateOptions) -> Result<UpstreamRequest, ProxyError> {
    let (req, stream, client_model) = open_request(body)?;
    let mut tools = ToolTable::default();
    let max = opts.max_tool_name;
    let mut out = Map::new();
    let mut tool_list = Vec::new();
    for t in super::tool_list(&req)? {
        let ty = t.get("type").and_then(Value::as_str).unwrap_or("custom");
        let name = t.get("name").and_then(Value::as_str);
        if ty != "custom" || t.get("input_schema").is_none() {
            drop_tool(&mut tools, name, ty, "a server tool");
            continue;
        }
        let Some(name) = name else {
            return Err(bad("a tool needs a `name`"));
        };
        let schema = t.get("input_schema").cloned();
        tool_list.push(function_tool(
            &mut tools,
            name,
            schema,
            t.get("description"),
            max,
        ));
    }

    let mut messages = Vec::new();
    if let Some(sys) = req.get("system") {
        let text = system_text(sys, opts.strip_attribution)
            .ok_or_else(|| bad("`system` must be a string or a list of text blocks"))?;
        if !text.is_empty() {
            messages.push(json!({"role": "system", "content": text}));
        }
    }
    let Some(Value::Array(msgs)) = req.get("messages") else {
        return Err(bad("`messages` must be an array"));
    };
    for m in msgs {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let content = m.get("content").unwrap_or(&Value::Null);
        match role {
            "system" => {
                let text = system_text(content, opts.strip_attribution)
                    .ok_or_else(|| bad("a system message must be text"))?;
                if !text.is_empty() {
                    messages.push(json!({"role": "system", "content": text}));
                }
            }
            "user" => user(content, &mut messages)?,
            "assistant" => assistant(content, &mut tools, max, &mut messages)?,
            other => return Err(bad(format!("unknown message role `{other}`"))),
        }
    }
    if let Some(v) = req.get("max_tokens") {
        out.insert("max_tokens".into(), v.clone());
    }
    if let Some(v) = req.get("stop_sequences") {
        if v.as_array().is_some_and(|a| !a.is_empty()) {
            out.insert("stop".into(), v.clone());
        }
    }
    copy_sampling(&req, &mut out);
    if !tool_list.is_empty() {
        out.insert("tools".into(), Value::Array(tool_list));
        if let Some(tc) = req.get("tool_choice") {
            let ty = tc.get("type").and_then(Value::as_str).unwrap_or("auto");
            let choice = match ty {
                "auto" => json!("auto"),
                "any" => json!("required"),
                "none" => json!("none"),
                "tool" => {
                    let n = tc
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or_else(|| bad("`tool_choice` of type tool needs a `name`"))?;
                    named_choice(&mut tools, n, max)
                }
                other => return Err(bad(format!("unknown tool_choice type `{other}`"))),
            };
            out.insert("tool_choice".into(), choice);
            if tc.get("disable_parallel_tool_use").and_then(Value::as_bool) == Some(true) {
                out.insert("parallel_tool_calls".into(), Value::Bool(false));
            }
        }
    }
    Ok(finish_request(out, messages, stream, client_model, tools))
}

/// A system prompt as text; Claude Code's attribution line removed when asked.
fn system_text(v: &Value, strip: bool) -> Option<String> {
    let parts: Vec<String> = match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match b {
                Value::String(s) => Some(s.clone()),
                _ => b.get("text").and_then(Value::as_str).map(str::to_string),
            })
            .collect::<Option<_>>()?,
        Value::Null => Vec::new(),
        _ => return None,
    };
    let mut out = String::new();
    for p in parts {
        let p = if strip { strip_attribution(&p) } else { &p };
        if p.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(p);
    }
    Some(out)
}

/// `text` without a leading attribution line (`x-anthropic-billing-header: …`).
pub(crate) fn strip_attribution(text: &str) -> &str {
    let t = text.trim_start();
    if !t.starts_with(ATTRIBUTION) {
        return text;
    }
    match t.find('\n') {
        Some(i) => t[i + 1..].trim_start_matches('\n'),
        None => "",
    }
}

fn image_part(b: &Value) -> Result<Value, ProxyError> {
    let src = b
        .get("source")
        .ok_or_else(|| bad("an image block needs a `source`"))?;
    let url = match src.get("type").and_then(Value::as_str) {
        Some("base64") => {
            let mt = src
                .get("media_type")
                .and_then(Value::as_str)
                .unwrap_or("image/png");
            let data = src.get("data").and_then(Value::as_str).unwrap_or("");
            format!("data:{mt};base64,{data}")
        }
        Some("url") => src
            .get("url")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        other => {
            return Err(bad(format!(
                "image source type {other:?} is not supported by this proxy"
            )))
        }
    };
    Ok(json!({"type": "image_url", "image_url": {"url": url}}))
}

fn user(content: &Value, messages: &mut Vec<Value>) -> Result<(), ProxyError> {
    let blocks = match content {
        Value::String(s) => {
            messages.push(json!({"role": "user", "content": s}));
            return Ok(());
        }
        Value::Array(b) => b,
        _ => {
            return Err(bad(
                "message `content` must be a string or a list of blocks",
            ))
        }
    };
    let mut parts = Vec::new();
    let mut after = Vec::new();
    for b in blocks {
        match b.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" => parts.push(json!({"type": "text", "text": b.get("text").and_then(Value::as_str).unwrap_or("")})),
            "image" => parts.push(image_part(b)?),
            "document" => {
                let src = b.get("source");
                match src.and_then(|s| s.get("type")).and_then(Value::as_str) {
                    Some("text") => parts.push(json!({"type": "text", "text": src.and_then(|s| s.get("data")).and_then(Value::as_str).unwrap_or("")})),
                    _ => return Err(bad("`document` blocks other than plain text are not supported by this proxy")),
                }
            }
            "tool_result" => {
                let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                let c = b.get("content").unwrap_or(&Value::Null);
                let mut text = String::new();
                match c {
                    Value::Array(items) => {
                        for it in items {
                            match it.get("type").and_then(Value::as_str) {
                                Some("image") => after.push(image_part(it)?),
                                _ => {
                                    if let Some(t) = it.get("text").and_then(Value::as_str) {
                                        if !text.is_empty() {
                                            text.push('\n');
                                        }
                                        text.push_str(t);
                                    }
                                }
                            }
                        }
                    }
                    other => text = text_of(other).unwrap_or_default(),
                }
                if b.get("is_error").and_then(Value::as_bool) == Some(true) {
                    text = format!("Error: {text}");
                }
                messages.push(json!({"role": "tool", "tool_call_id": id, "content": text}));
            }
            "thinking" | "redacted_thinking" => {}
            other => {
                tracing::debug!(block = other, "ignoring a user content block");
            }
        }
    }
    parts.append(&mut after);
    if !parts.is_empty() {
        let content = if parts.iter().all(|p| p["type"] == "text") {
            Value::String(
                parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        } else {
            Value::Array(parts)
        };
        messages.push(json!({"role": "user", "content": content}));
    }
    Ok(())
}

fn assistant(
    content: &Value,
    tools: &mut ToolTable,
    max: usize,
    messages: &mut Vec<Value>,
) -> Result<(), ProxyError> {
    let blocks = match content {
        Value::String(s) => {
            messages.push(json!({"role": "assistant", "content": s}));
            return Ok(());
        }
        Value::Array(b) => b,
        _ => {
            return Err(bad(
                "message `content` must be a string or a list of blocks",
            ))
        }
    };
    let mut text = String::new();
    let mut thinking = String::new();
    let mut calls = Vec::new();
    for b in blocks {
        match b.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" => text.push_str(b.get("text").and_then(Value::as_str).unwrap_or("")),
            "thinking" => {
                thinking.push_str(b.get("thinking").and_then(Value::as_str).unwrap_or(""))
            }
            "tool_use" => {
                let name = b.get("name").and_then(Value::as_str).unwrap_or("");
                let args = b.get("input").cloned().unwrap_or_else(|| json!({}));
                calls.push(json!({
                    "id": b.get("id").and_then(Value::as_str).unwrap_or(""),
                    "type": "function",
                    "function": {"name": tools.upstream_name(name, max), "arguments": args.to_string()},
                }));
            }
            other => tracing::debug!(block = other, "ignoring an assistant content block"),
        }
    }
    let mut m = json!({"role": "assistant", "content": if text.is_empty() && !calls.is_empty() { Value::Null } else { Value::String(text) }});
    if !thinking.is_empty() {
        m["reasoning_content"] = Value::String(thinking);
    }
    if !calls.is_empty() {
        m["tool_calls"] = Value::Array(calls);
    }
    messages.push(m);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_shapes() {
        let req = json!({
            "model": "claude-sonnet-4-5", "max_tokens": 1000, "stream": true,
            "system": [{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.0.1; cc_entrypoint=cli;"},
                       {"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}],
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "context_management": {"edits": []},
            "tools": [{"name": "Bash", "description": "run", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}},
                      {"type": "web_search_20250305", "name": "web_search"}],
            "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
            "stop_sequences": ["\n\nHuman:"],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "list files"}]},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm", "signature": "s"},
                    {"type": "text", "text": "Running."},
                    {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true, "content": [{"type": "text", "text": "denied"}], "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": "try again"}]},
                {"role": "system", "content": "reminder"},
            ],
        });
        let r = from_messages(req, &TranslateOptions::default()).unwrap();
        let m = &r.body["messages"];
        assert_eq!(
            m[0],
            json!({"role": "system", "content": "You are Claude Code."})
        );
        assert_eq!(m[1], json!({"role": "user", "content": "list files"}));
        assert_eq!(
            m[2]["tool_calls"][0]["function"],
            json!({"name": "Bash", "arguments": "{\"command\":\"ls\"}"})
        );
        assert_eq!(m[2]["reasoning_content"], "hmm");
        assert_eq!(
            m[3],
            json!({"role": "tool", "tool_call_id": "toolu_1", "content": "Error: denied"})
        );
        assert_eq!(m[4], json!({"role": "user", "content": "try again"}));
        assert_eq!(m[5], json!({"role": "system", "content": "reminder"}));
        assert_eq!(r.body["tool_choice"], "required");
        assert_eq!(r.body["parallel_tool_calls"], false);
        assert_eq!(r.body["stop"], json!(["\n\nHuman:"]));
        assert_eq!(r.body["tools"].as_array().unwrap().len(), 1);
        assert_eq!(r.tools.dropped, vec!["web_search".to_string()]);
        assert!(r.stream);
    }

    #[test]
    fn attribution_kept_when_asked() {
        let req = json!({"model": "c", "max_tokens": 5, "system": "x-anthropic-billing-header: a;\nRest",
                         "messages": [{"role": "user", "content": "hi"}]});
        let o = TranslateOptions {
            strip_attribution: false,
            ..Default::default()
        };
        let r = from_messages(req.clone(), &o).unwrap();
        assert!(r.body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("x-anthropic"));
        let r = from_messages(req, &TranslateOptions::default()).unwrap();
        assert_eq!(r.body["messages"][0]["content"], "Rest");
    }

    #[test]
    fn images_and_errors() {
        let req = json!({"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAA"}},
            {"type": "text", "text": "what is it"}]}]});
        let r = from_messages(req, &TranslateOptions::default()).unwrap();
        assert_eq!(
            r.body["messages"][0]["content"][0]["image_url"]["url"],
            "data:image/png;base64,AAA"
        );
        let bad = json!({"model": "c", "messages": [{"role": "user", "content": [{"type": "document", "source": {"type": "base64", "data": "x"}}]}]});
        assert!(matches!(
            from_messages(bad, &TranslateOptions::default()),
            Err(ProxyError::BadRequest(_))
        ));
        assert!(from_messages(
            json!({"model": "c", "messages": [{"role": "robot", "content": "x"}]}),
            &TranslateOptions::default()
        )
        .is_err());
    }
}
