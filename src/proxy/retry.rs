//! Validation retries: what a reply is checked for, and how the upstream
//! is asked again with feedback.
//!
//! A reply is retried (at most [`Retries::validation`] times) when, after
//! the normalizer's repairs,
//! * a call is still invalid for its tool (the normalizer's feedback
//!   message: one bullet per problem, with the fix to make);
//! * `tool_choice` asked for a call (`required` / `any`, or a named tool)
//!   and the reply made none, or called another tool;
//! * a call repeats what the conversation already did (loop stop, the
//!   toolkit's detector).
//!
//! The retry request is the original upstream request plus every turn
//! asked again so far: the assistant's text and calls, then one answer per
//! call (the feedback for a rejected call; [`ACCEPTED`] for a valid one,
//! which the client has already received — see the session's gate) and,
//! when a required call is missing, a user message saying which call is
//! required. How those turns are written depends on how the upstream was
//! asked for tools, so it is a [`RetryBuilder`]: [`native_retry_request`]
//! writes OpenAI `tool_calls` and `tool` messages (native mode); a mode
//! that renders calls as text (emulation) plugs in its own builder.
//!
//! [`Retries::validation`]: super::Retries::validation

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::translate::ToolTable;

/// The answer given, in a retry request, for a valid call of the reply
/// asked again: it was passed on to be run (calls stream to the client as
/// soon as they validate), so the model must not send it again.
pub const ACCEPTED: &str = "Accepted: this call was passed on and will be run; its result comes with the next turn. Do not send it again; send only the corrected calls.";

/// What the request's `tool_choice` demands.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Choice {
    /// Any number of calls, or none.
    #[default]
    Auto,
    /// No call (`none`).
    None,
    /// At least one call (`required`, Anthropic `any`).
    Required,
    /// A call of this tool (its client name).
    Named(String),
}

impl Choice {
    /// The choice of an upstream (Chat Completions) request body; a named
    /// tool is given by its client name.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolstream::proxy::retry::Choice;
    /// use toolstream::proxy::translate::ToolTable;
    /// let t = ToolTable::default();
    /// let body = json!({"tool_choice": {"type": "function", "function": {"name": "ls"}}});
    /// assert_eq!(Choice::of(body.as_object().unwrap(), &t), Choice::Named("ls".into()));
    /// assert_eq!(Choice::of(json!({"tool_choice": "required"}).as_object().unwrap(), &t), Choice::Required);
    /// ```
    pub fn of(body: &Map<String, Value>, tools: &ToolTable) -> Choice {
        match body.get("tool_choice") {
            Some(Value::String(s)) => match s.as_str() {
                "none" => Choice::None,
                "required" | "any" => Choice::Required,
                _ => Choice::Auto,
            },
            Some(v @ Value::Object(_)) => {
                let name = v
                    .pointer("/function/name")
                    .or_else(|| v.get("name"))
                    .and_then(Value::as_str);
                match name {
                    Some(n) => Choice::Named(tools.client_name(n).to_string()),
                    None => Choice::Auto,
                }
            }
            _ => Choice::Auto,
        }
    }

    /// The feedback for a reply whose calls (their client names) do not
    /// satisfy the choice; `None` when they do.
    pub fn unmet(&self, called: &[&str]) -> Option<String> {
        match self {
            Choice::Required if called.is_empty() => Some(
                "You must call one of the tools now: answer with a tool call, not with text."
                    .to_string(),
            ),
            Choice::Named(n) if !called.contains(&n.as_str()) => Some(format!(
                "You must call the tool `{n}` now: answer with a call of `{n}` and nothing else."
            )),
            _ => None,
        }
    }
}

/// One call of a failed reply, as the upstream made it (after repair).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptCall {
    /// The call id.
    pub id: String,
    /// The tool name as the upstream knows it (shortened names stay short).
    pub name: String,
    /// The arguments (a JSON text).
    pub arguments: String,
    /// Why the call is rejected (the model's feedback); `None` for a valid
    /// call, which was sent to the client.
    pub feedback: Option<String>,
}

/// A reply that is asked again: what the model said, and what was wrong.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attempt {
    /// The reply's text.
    pub text: String,
    /// Its calls, in order.
    pub calls: Vec<AttemptCall>,
    /// Feedback about the reply as a whole (a required call is missing).
    pub note: Option<String>,
}

/// Builds the retry request from the original upstream request body and
/// the attempts asked again so far, oldest first (see the module docs).
/// The result is sent as is (streaming on, as the original).
pub type RetryBuilder =
    Arc<dyn Fn(&Map<String, Value>, &[Attempt]) -> Map<String, Value> + Send + Sync>;

/// The native-mode [`RetryBuilder`]: [`native_retry_request`] for each
/// attempt in turn.
pub fn native() -> RetryBuilder {
    Arc::new(fold_attempts)
}

/// The original body with every attempt appended ([`native_retry_request`]
/// in turn).
pub fn fold_attempts(body: &Map<String, Value>, attempts: &[Attempt]) -> Map<String, Value> {
    let mut out = body.clone();
    for a in attempts {
        out = native_retry_request(&out, a);
    }
    out
}

/// The native-mode retry request: the original messages, then the failed
/// turn as an assistant message with `tool_calls`, one `tool` message per
/// call (its feedback, or [`ACCEPTED`]), and a user message with the note.
///
/// ```
/// use serde_json::json;
/// use toolstream::proxy::retry::{native_retry_request, Attempt, AttemptCall};
/// let body = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
/// let a = Attempt {
///     text: String::new(),
///     calls: vec![AttemptCall { id: "c1".into(), name: "ls".into(), arguments: "{}".into(),
///                               feedback: Some("add `path`".into()) }],
///     note: None,
/// };
/// let r = native_retry_request(body.as_object().unwrap(), &a);
/// let m = r["messages"].as_array().unwrap();
/// assert_eq!(m[1]["tool_calls"][0]["function"]["name"], "ls");
/// assert_eq!(m[2], json!({"role": "tool", "tool_call_id": "c1", "content": "add `path`"}));
/// ```
pub fn native_retry_request(body: &Map<String, Value>, attempt: &Attempt) -> Map<String, Value> {
    let mut out = body.clone();
    let mut add = Vec::new();
    if !attempt.calls.is_empty() || !attempt.text.is_empty() {
        let mut m = json!({"role": "assistant", "content": if attempt.text.is_empty() { Value::Null } else { Value::String(attempt.text.clone()) }});
        if !attempt.calls.is_empty() {
            m["tool_calls"] = attempt
                .calls
                .iter()
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                .collect();
        }
        add.push(m);
    }
    for c in &attempt.calls {
        add.push(crate::normalize::feedback::openai_tool_message(
            &c.id,
            c.feedback.as_deref().unwrap_or(ACCEPTED),
        ));
    }
    if let Some(n) = &attempt.note {
        add.push(json!({"role": "user", "content": n}));
    }
    match out.get_mut("messages") {
        Some(Value::Array(m)) => m.extend(add),
        _ => {
            out.insert("messages".into(), Value::Array(add));
        }
    }
    out
}

/// The text block that stands for a call not sent to the client (still
/// invalid once retries were spent, or stopped as a loop).
pub(crate) fn withheld_note(name: &str, arguments: &str, why: &str) -> String {
    format!(
        "\n[toolstream] The model's call to `{name}` was not sent: {why}\nArguments: {arguments}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_and_unmet() {
        let t = ToolTable::default();
        let o = |v: Value| Choice::of(v.as_object().unwrap(), &t);
        assert_eq!(o(json!({})), Choice::Auto);
        assert_eq!(o(json!({"tool_choice": "none"})), Choice::None);
        assert_eq!(
            o(json!({"tool_choice": {"type": "function", "name": "x"}})),
            Choice::Named("x".into())
        );
        assert!(Choice::Required.unmet(&[]).is_some());
        assert!(Choice::Required.unmet(&["a"]).is_none());
        assert!(Choice::Named("a".into())
            .unmet(&["b"])
            .unwrap()
            .contains("`a`"));
        assert!(Choice::Named("a".into()).unmet(&["b", "a"]).is_none());
        assert!(Choice::Auto.unmet(&[]).is_none());
    }

    #[test]
    fn retry_request_for_a_missing_call() {
        let body =
            json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
        let a = Attempt {
            text: "Hello!".into(),
            calls: vec![],
            note: Choice::Required.unmet(&[]),
        };
        let r = native_retry_request(body.as_object().unwrap(), &a);
        let m = r["messages"].as_array().unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m[1], json!({"role": "assistant", "content": "Hello!"}));
        assert_eq!(m[2]["role"], "user");
        assert_eq!(r["stream"], true);
    }

    #[test]
    fn valid_calls_of_a_rejected_reply_are_marked_accepted() {
        let body = json!({"messages": []});
        let a = Attempt {
            text: String::new(),
            calls: vec![
                AttemptCall {
                    id: "a".into(),
                    name: "x".into(),
                    arguments: "{}".into(),
                    feedback: None,
                },
                AttemptCall {
                    id: "b".into(),
                    name: "y".into(),
                    arguments: "{}".into(),
                    feedback: Some("bad".into()),
                },
            ],
            note: None,
        };
        let r = native_retry_request(body.as_object().unwrap(), &a);
        let m = r["messages"].as_array().unwrap();
        assert_eq!(m[0]["content"], Value::Null);
        assert_eq!(m[1]["content"], ACCEPTED);
        assert_eq!(m[2]["content"], "bad");
    }
}
