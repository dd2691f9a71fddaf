//! Chat Completions in → Chat Completions upstream: the request passes
//! through, with tool names shortened where needed and streaming forced on.

use serde_json::{Map, Value};

use super::{bad, set_stream, ToolTable, TranslateOptions, UpstreamRequest};
use crate::proxy::error::ProxyError;

/// Translates a Chat Completions request.
///
/// ```
/// use serde_json::json;
/// use toolstream::proxy::translate::{from_chat, TranslateOptions};
/// let r = from_chat(json!({"model": "m", "messages": [{"role": "user", "content": "hi"}],
///     "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]}),
///     &TranslateOptions::default()).unwrap();
/// assert!(!r.stream);
/// assert_eq!(r.body["stream"], json!(true));
/// assert_eq!(r.tools.specs[0].name, "f");
/// ```
pub fn from_chat(body: Value, opts: &TranslateOptions) -> Result<UpstreamRequest, ProxyError> {
    let (mut body, stream, client_model) = super::open_request(body)?;
    match body.get("messages") {
        Some(Value::Array(_)) => {}
        _ => return Err(bad("`messages` must be an array")),
    }
    let mut tools = ToolTable::default();
    if let Some(list) = body.get_mut("tools") {
        let Value::Array(list) = list else {
            return Err(bad("`tools` must be an array"));
        };
        let mut kept = Vec::with_capacity(list.len());
        for t in list.drain(..) {
            if t.get("type").and_then(Value::as_str).unwrap_or("function") != "function" {
                let ty = t.get("type").and_then(Value::as_str).unwrap_or("?");
                tracing::info!(tool_type = ty, "dropping a non-function tool");
                tools.dropped.push(ty.to_string());
                continue;
            }
            let Some(f) = t.get("function") else {
                return Err(bad("a function tool needs `function`"));
            };
            let Some(name) = f.get("name").and_then(Value::as_str) else {
                return Err(bad("a function tool needs `function.name`"));
            };
            let up = tools.add(name, f.get("parameters").cloned(), opts.max_tool_name);
            let mut t = t.clone();
            t["function"]["name"] = Value::String(up);
            kept.push(t);
        }
        *list = kept;
    }
    if tools.specs.is_empty() {
        body.remove("tools");
        if !matches!(body.get("tool_choice"), Some(Value::String(_)) | None) {
            body.remove("tool_choice");
        }
    }
    // Names in the history and in tool_choice go upstream shortened too.
    let max = opts.max_tool_name;
    if let Some(Value::Array(msgs)) = body.get_mut("messages") {
        for m in msgs {
            if let Some(Value::Array(calls)) = m.get_mut("tool_calls") {
                for c in calls {
                    if let Some(Value::String(n)) = c.pointer_mut("/function/name") {
                        *n = tools.upstream_name(n, max);
                    }
                }
            }
        }
    }
    if let Some(Value::String(n)) = body
        .get_mut("tool_choice")
        .and_then(|v| v.pointer_mut("/function/name"))
    {
        *n = tools.upstream_name(n, max);
    }
    rename_max_tokens(&mut body);
    set_stream(&mut body);
    Ok(UpstreamRequest {
        body,
        stream,
        client_model,
        tools,
    })
}

/// `max_completion_tokens` (the newer name) → `max_tokens`, which every
/// OpenAI-compatible server reads.
fn rename_max_tokens(body: &mut Map<String, Value>) {
    if let Some(v) = body.remove("max_completion_tokens") {
        body.entry("max_tokens").or_insert(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_names_shortened_everywhere() {
        let long = "x".repeat(80);
        let r = from_chat(
            json!({"model": "m", "stream": true, "messages": [
                {"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {"name": long, "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "1", "content": "ok"}],
              "tools": [{"type": "function", "function": {"name": long}}],
              "tool_choice": {"type": "function", "function": {"name": long}},
              "max_completion_tokens": 5}),
            &TranslateOptions::default(),
        )
        .unwrap();
        let short = r.body["tools"][0]["function"]["name"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(short.len(), 64);
        assert_eq!(
            r.body["messages"][0]["tool_calls"][0]["function"]["name"],
            json!(short)
        );
        assert_eq!(r.body["tool_choice"]["function"]["name"], json!(short));
        assert_eq!(r.tools.client_name(&short), long);
        assert_eq!(r.body["max_tokens"], json!(5));
        assert!(r.stream);
    }

    #[test]
    fn bad_shapes_are_400() {
        assert!(from_chat(json!([]), &TranslateOptions::default()).is_err());
        assert!(from_chat(json!({"messages": 3}), &TranslateOptions::default()).is_err());
    }
}
