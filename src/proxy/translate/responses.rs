//! OpenAI Responses in → Chat Completions upstream.
//!
//! | Responses | Chat Completions |
//! |---|---|
//! | `instructions`; `system` / `developer` message items (Codex sends its prompt as `developer`) | `system` messages |
//! | `message` items (`input_text`, `output_text`, `input_image`) | user / assistant messages |
//! | `function_call`, `custom_tool_call` items | assistant `tool_calls` (a custom call's input as `{"input": …}`) |
//! | `function_call_output`, `custom_tool_call_output` | `tool` messages |
//! | `function` tools | function tools |
//! | `custom` (freeform) tools | a function with one string parameter `input` (its grammar in the description); answered as `custom_tool_call` |
//! | hosted tools (`web_search`, `tool_search`, `file_search`, `local_shell`, …) and `namespace` tools | dropped, with a log line |
//! | `tool_choice`, `max_output_tokens`, `parallel_tool_calls`, `temperature`, `top_p` | the same in Chat Completions terms |
//!
//! `reasoning` items, `reasoning`, `include`, `store`, `prompt_cache_key`,
//! `text` and other fields a local server has no use for are ignored. The
//! proxy keeps no state: `previous_response_id` is a 400.

use serde_json::{json, Map, Value};

use super::{
    bad, copy_sampling, custom_as_function, drop_tool, finish_request, function_tool, named_choice,
    open_request, text_of, ToolTable, TranslateOptions, UpstreamRequest,
};
use crate::proxy::error::ProxyError;

/// Translates a Responses request.
///
/// ```
/// use serde_json::json;
/// use toolstream::proxy::translate::{from_responses, TranslateOptions};
/// let r = from_responses(json!({"model": "gpt-5-codex", "instructions": "Be terse.",
///     "input": [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sandbox: none"}]},
///               {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
///     "tools": [{"type": "custom", "name": "apply_patch", "description": "patch files"},
///               {"type": "web_search"}]}), &TranslateOptions::default()).unwrap();
/// assert_eq!(r.body["messages"][1], json!({"role": "system", "content": "sandbox: none"}));
/// assert!(r.tools.custom.contains("apply_patch"));
/// assert_eq!(r.body["tools"][0]["function"]["parameters"]["required"], json!(["input"]));
/// ```
pub fn from_responses(body: Value, opts: &TranslateOptions) -> Result<UpstreamRequest, ProxyError> {
    let (req, stream, client_model) = open_request(body)?;
    if req
        .get("previous_response_id")
        .is_some_and(|v| !v.is_null())
    {
        return Err(bad(
            "`previous_response_id` is not supported: the proxy keeps no state; send the whole input",
        ));
    }
    let max = opts.max_tool_name;
    let mut tools = ToolTable::default();
    let mut tool_list = Vec::new();
    for t in super::tool_list(&req)? {
        let ty = t.get("type").and_then(Value::as_str).unwrap_or("");
        let name = t.get("name").and_then(Value::as_str);
        match (ty, name) {
            ("function", Some(name)) => {
                let params = t.get("parameters").cloned();
                tool_list.push(function_tool(
                    &mut tools,
                    name,
                    params,
                    t.get("description"),
                    max,
                ));
            }
            ("custom", Some(name)) => {
                let params = json!({"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]});
                let up = tools.add(name, Some(params), max);
                tools.custom.insert(name.to_string());
                let desc = t.get("description").and_then(Value::as_str).unwrap_or("");
                tool_list.push(custom_as_function(&up, desc, t.get("format")));
            }
            _ => drop_tool(&mut tools, name, ty, "a hosted or namespace tool"),
        }
    }

    let mut messages = Vec::new();
    if let Some(i) = req.get("instructions").and_then(Value::as_str) {
        if !i.is_empty() {
            messages.push(json!({"role": "system", "content": i}));
        }
    }
    match req.get("input") {
        Some(Value::String(s)) => messages.push(json!({"role": "user", "content": s})),
        Some(Value::Array(items)) => {
            for it in items {
                item(it, &mut tools, max, &mut messages)?;
            }
        }
        None | Some(Value::Null) => {}
        Some(_) => return Err(bad("`input` must be a string or a list of items")),
    }

    let mut out = Map::new();
    if let Some(v) = req.get("max_output_tokens") {
        if !v.is_null() {
            out.insert("max_tokens".into(), v.clone());
        }
    }
    copy_sampling(&req, &mut out);
    if !tool_list.is_empty() {
        out.insert("tools".into(), Value::Array(tool_list));
        if let Some(tc) = req.get("tool_choice") {
            let choice = match tc {
                Value::String(s) if ["auto", "required", "none"].contains(&s.as_str()) => {
                    tc.clone()
                }
                Value::Object(o) => match o.get("name").and_then(Value::as_str) {
                    Some(n) => named_choice(&mut tools, n, max),
                    None => json!("auto"),
                },
                _ => json!("auto"),
            };
            out.insert("tool_choice".into(), choice);
        }
        if let Some(p) = req.get("parallel_tool_calls").and_then(Value::as_bool) {
            out.insert("parallel_tool_calls".into(), Value::Bool(p));
        }
    }
    Ok(finish_request(out, messages, stream, client_model, tools))
}

fn content_parts(c: &Value) -> Result<Value, ProxyError> {
    match c {
        Value::String(s) => Ok(Value::String(s.clone())),
        Value::Array(parts) => {
            let mut out = Vec::new();
            let mut all_text = true;
            for p in parts {
                match p.get("type").and_then(Value::as_str).unwrap_or("") {
                    "input_text" | "output_text" | "text" | "summary_text" => out.push(
                        json!({"type": "text", "text": p.get("text").and_then(Value::as_str).unwrap_or("")}),
                    ),
                    "input_image" => {
                        all_text = false;
                        let url = p
                            .get("image_url")
                            .and_then(Value::as_str)
                            .ok_or_else(|| bad("`input_image` needs an `image_url` (file ids are not supported)"))?;
                        out.push(json!({"type": "image_url", "image_url": {"url": url}}));
                    }
                    "refusal" => out.push(
                        json!({"type": "text", "text": p.get("refusal").and_then(Value::as_str).unwrap_or("")}),
                    ),
                    other => {
                        return Err(bad(format!(
                            "content part `{other}` is not supported by this proxy"
                        )))
                    }
                }
            }
            if all_text {
                Ok(Value::String(
                    out.iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                ))
            } else {
                Ok(Value::Array(out))
            }
        }
        _ => Err(bad("message `content` must be a string or a list of parts")),
    }
}

/// Appends a tool call to the last assistant message, or starts one.
fn push_call(messages: &mut Vec<Value>, call: Value) {
    if let Some(last) = messages.last_mut() {
        if last["role"] == "assistant" {
            match last.get_mut("tool_calls") {
                Some(Value::Array(calls)) => calls.push(call),
                _ => {
                    last["tool_calls"] = json!([call]);
                }
            }
            return;
        }
    }
    messages.push(json!({"role": "assistant", "content": null, "tool_calls": [call]}));
}

fn item(
    it: &Value,
    tools: &mut ToolTable,
    max: usize,
    messages: &mut Vec<Value>,
) -> Result<(), ProxyError> {
    let ty = it
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or(if it.get("role").is_some() {
            "message"
        } else {
            ""
        });
    match ty {
        "message" => {
            let role = match it.get("role").and_then(Value::as_str).unwrap_or("user") {
                "developer" | "system" => "system",
                "assistant" => "assistant",
                "user" => "user",
                other => return Err(bad(format!("unknown message role `{other}`"))),
            };
            let content = content_parts(it.get("content").unwrap_or(&Value::Null))?;
            messages.push(json!({"role": role, "content": content}));
        }
        "function_call" => {
            let name = it.get("name").and_then(Value::as_str).unwrap_or("");
            let args = match it.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => "{}".into(),
            };
            push_call(
                messages,
                json!({"id": it.get("call_id").and_then(Value::as_str).unwrap_or(""), "type": "function",
                       "function": {"name": tools.upstream_name(name, max), "arguments": args}}),
            );
        }
        "custom_tool_call" => {
            let name = it.get("name").and_then(Value::as_str).unwrap_or("");
            let input = it.get("input").and_then(Value::as_str).unwrap_or("");
            push_call(
                messages,
                json!({"id": it.get("call_id").and_then(Value::as_str).unwrap_or(""), "type": "function",
                       "function": {"name": tools.upstream_name(name, max), "arguments": json!({"input": input}).to_string()}}),
            );
        }
        "function_call_output" | "custom_tool_call_output" => {
            let out = it.get("output").unwrap_or(&Value::Null);
            let text = text_of(out).unwrap_or_else(|| out.to_string());
            messages.push(json!({"role": "tool", "tool_call_id": it.get("call_id").and_then(Value::as_str).unwrap_or(""), "content": text}));
        }
        "reasoning" => {}
        other => tracing::info!(
            item = other,
            "ignoring an input item the upstream cannot use"
        ),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_round_trip_items() {
        let req = json!({
            "model": "gpt-5-codex", "stream": true, "store": false, "include": ["reasoning.encrypted_content"],
            "reasoning": {"effort": "medium"}, "prompt_cache_key": "k", "parallel_tool_calls": false,
            "instructions": "You are Codex.",
            "tools": [
                {"type": "function", "name": "shell", "parameters": {"type": "object", "properties": {"command": {"type": "array"}}}},
                {"type": "custom", "name": "apply_patch", "description": "Patch.", "format": {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch"}},
                {"type": "web_search"},
                {"type": "namespace", "name": "mcp", "tools": []},
            ],
            "input": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
                {"type": "reasoning", "summary": [], "encrypted_content": "x"},
                {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{\"command\":[\"ls\"]}"},
                {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": "*** Begin Patch"},
                {"type": "function_call_output", "call_id": "c1", "output": "a.txt"},
                {"type": "custom_tool_call_output", "call_id": "c2", "output": "Done"},
            ],
        });
        let r = from_responses(req, &TranslateOptions::default()).unwrap();
        let m = r.body["messages"].as_array().unwrap();
        assert_eq!(m[0]["content"], "You are Codex.");
        assert_eq!(m[1], json!({"role": "user", "content": "fix it"}));
        let calls = m[2]["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(
            calls[1]["function"]["arguments"],
            "{\"input\":\"*** Begin Patch\"}"
        );
        assert_eq!(
            m[3],
            json!({"role": "tool", "tool_call_id": "c1", "content": "a.txt"})
        );
        assert_eq!(m[4]["tool_call_id"], "c2");
        assert_eq!(r.body["tools"].as_array().unwrap().len(), 2);
        assert!(
            r.body["tools"][1]["function"]["parameters"]["properties"]["input"]["description"]
                .as_str()
                .unwrap()
                .contains("start: begin_patch")
        );
        assert_eq!(
            r.tools.dropped,
            vec!["web_search".to_string(), "mcp".to_string()]
        );
        assert_eq!(r.body["parallel_tool_calls"], false);
    }

    #[test]
    fn stateful_requests_rejected() {
        let e = from_responses(
            json!({"model": "m", "input": "x", "previous_response_id": "resp_1"}),
            &TranslateOptions::default(),
        );
        assert!(matches!(e, Err(ProxyError::BadRequest(_))));
    }
}
